/* steps.h: per-step assembly in the collector (steps.c; docs/steps.md).
 *
 * Ranks report the steps that ended in a window as StepMarks in that window's sample: each
 * one a snapshot of the marking thread's totals in the window up to the mark. The collector
 * turns them into exact per-step totals by difference, adds the ranks together and closes a
 * step once every rank still expected has passed it (or the job ended).
 */
#ifndef MW_COLLECTOR_STEPS_H
#define MW_COLLECTOR_STEPS_H

#include "collector.h"

#define MW_STEPS_MAX_MARKS 64u   /* step marks accepted in one sample */
#define MW_STEPS_MAX_OPEN 1024u  /* steps waiting for ranks; beyond, the oldest closes */
#define MW_STEPS_KEEP (1u << 16) /* closed steps kept for the summary JSON */
/* Entries the ranks' carries (functions and peers since each rank's last mark) may grow by,
 * job-wide: this many per rank of the job, at most MW_STEPS_MAX_CARRY (docs/steps.md). */
#define MW_STEPS_CARRY_PER_RANK 256u
#define MW_STEPS_MAX_CARRY (1u << 20)
/* Pair entries the open steps may grow by, job-wide (one step may take all of them). */
#define MW_STEPS_MAX_PAIRS (1u << 22)
/* Entries every carry table and open step's pair list starts with (not charged). */
#define MW_STEPS_TABLE_INITIAL 16u

/* What the collector did not keep of the steps as the ranks claimed them, by reason (the
 * stats JSON's "steps_refused", the Prometheus page's mpiwatch_steps_refused_total):
 * - late: marks of a step already closed, folded into the rank's next step;
 * - below_open: marks below every open step while MW_STEPS_MAX_OPEN were open, folded too;
 * - forced: steps closed by MW_STEPS_MAX_OPEN before every expected rank ended them;
 * - pairs: (src, dst) entries left out of an open step by MW_STEPS_MAX_PAIRS;
 * - carry: a rank's function or peer segments left out of its next step by the carry budget.
 */
#define MW_STEPS_REFUSALS(X)                                                                       \
    X(LATE, "late")                                                                                \
    X(BELOW_OPEN, "below_open")                                                                    \
    X(FORCED, "forced")                                                                            \
    X(PAIRS, "pairs")                                                                              \
    X(CARRY, "carry")

typedef enum {
#define MW_X(id, name) MW_STEPS_##id,
    MW_STEPS_REFUSALS(MW_X)
#undef MW_X
        MW_STEPS_REFUSAL_COUNT
} mw_steps_refusal_t;

typedef struct mw_step_assembly mw_step_assembly_t;

/* Prepares the assembly of a job of `size` ranks (after the job and merge began). Returns 0,
 * or -1 when out of memory (the job then has no steps). */
int mw__steps_begin(mw_collector_t *c, uint32_t size, uint64_t window_ns, uint64_t lateness_ns);
void mw__steps_free(mw_collector_t *c);
/* Validates the step marks of a sample whose other fields passed (ingest.c). */
mw_reject_t mw__steps_check(mw_collector_t *c, const Mpiwatch__Sample *s);
/* Applies an accepted sample of `rank` (in the rank's window order). */
void mw__steps_sample(mw_collector_t *c, uint32_t rank, const Mpiwatch__Sample *s);
/* Applies the steps of an accepted partial (partial.c): each ended by every listed rank. */
void mw__steps_partial(mw_collector_t *c, const Mpiwatch__Partial *pa);
/* The rank will send nothing more: steps stop waiting for it. */
void mw__steps_leave(mw_collector_t *c, uint32_t rank);
/* The job ended: every open step closes with the ranks it has. */
void mw__steps_end(mw_collector_t *c);
/* The summary's output (publish.c): keeps a closed step's wire form, up to MW_STEPS_KEEP. */
void mw__steps_keep(mw_collector_t *c, const uint8_t *pb, size_t len);
/* Closed steps kept for the summary, in closing order (packed Mpiwatch__Step), and how many
 * closed in all. */
size_t mw__steps_kept(const mw_collector_t *c, size_t i, const uint8_t **pb);
uint64_t mw__steps_closed(const mw_collector_t *c);
/* For tests: rank records and open-step entries visited so far (the bookkeeping's work). */
uint64_t mw__steps_work(const mw_collector_t *c);
/* How often the current job's steps were refused for `reason` (0 without a job), its name
 * ("late", ...), and whether the job applied any step mark (the stats JSON then lists the
 * refusals, zeros included). */
uint64_t mw__steps_refused(const mw_collector_t *c, mw_steps_refusal_t reason);
const char *mw__steps_refusal_name(mw_steps_refusal_t reason);
int mw__steps_marked(const mw_collector_t *c);
/* For tests: carry and pair entries charged to their budgets now, and the carry budget. */
void mw__steps_held(const mw_collector_t *c, uint64_t *carry, uint64_t *carry_budget,
                    uint64_t *pairs);

#endif
