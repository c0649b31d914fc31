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

typedef struct mw_steps mw_steps_t;

/* Prepares the assembly of a job of `size` ranks (after the job and merge began). Returns 0,
 * or -1 when out of memory (the job then has no steps). */
int mw__steps_begin(mw_collector_t *c, uint32_t size, uint64_t window_ns, uint64_t lateness_ns);
void mw__steps_free(mw_collector_t *c);
/* Validates the step marks of a sample whose other fields passed (ingest.c). */
mw_reject_t mw__steps_check(mw_collector_t *c, const Mpiwatch__Sample *s);
/* Applies an accepted sample of `rank` (in the rank's window order). */
void mw__steps_sample(mw_collector_t *c, uint32_t rank, const Mpiwatch__Sample *s);
/* The rank will send nothing more: steps stop waiting for it. */
void mw__steps_leave(mw_collector_t *c, uint32_t rank);
/* The job ended: every open step closes with the ranks it has. */
void mw__steps_end(mw_collector_t *c);
/* Closed steps kept for the summary, in closing order (packed Mpiwatch__Step), and how many
 * closed in all. */
size_t mw__steps_kept(const mw_collector_t *c, size_t i, const uint8_t **pb);
uint64_t mw__steps_closed(const mw_collector_t *c);
/* For tests: rank records and open-step entries visited so far (the bookkeeping's work). */
uint64_t mw__steps_work(const mw_collector_t *c);
/* Marks of steps already closed (late), marks below every open step when MW_STEPS_MAX_OPEN
 * were open (refused), both folded into the rank's next step, and steps closed by that cap
 * before every rank ended them (forced). */
void mw__steps_counts(const mw_collector_t *c, uint64_t *late, uint64_t *refused,
                      uint64_t *forced);
/* Encodes a closed step (window_pb.c). Returns its length in e->out, or 0. */
size_t mw__step_pack(mw_pb_encoder_t *e, const Mpiwatch__Step *step);

#endif
