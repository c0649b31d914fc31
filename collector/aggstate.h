/* aggstate.h: aggregators' identity and accounting (AggState) on both sides of a hop, and the
 * job's loss accounting through them (aggstate.c; docs/collector.md "Accounting through
 * aggregators").
 *
 * Aggregator side: the aggregator's AggState (mw__aggstate_envelope_pack, partial.h) says what
 * its ranks made (the sum of each rank's latest running totals, plus what it merged from ranks
 * without totals), what it sent upstream in partials, and what it dropped or refused. The
 * upstream socket (upstream.c) tells it what went out: mw__aggstate_sent() after a partial was
 * handed to ZeroMQ, mw__aggstate_dropped() when it could not be.
 *
 * Parent side: mw__aggstate_ingest (partial.h) checks and keeps each aggregator's latest
 * AggState and the map of its function ids; partial.c asks for that map
 * (mw__aggstate_fnmap) and reports each partial it merged (mw__aggstate_merged). The job's
 * accounting (job.c mw__job_loss) adds, per aggregator, its ranks' totals to what the ranks
 * made and what was merged from its partials to what was merged, and splits the difference by
 * hop: rank -> aggregator (its totals - its sent) and aggregator -> here (its sent - merged).
 */
#ifndef MW_COLLECTOR_AGGSTATE_H
#define MW_COLLECTOR_AGGSTATE_H

#include <stdint.h>
#include <stdio.h>

#include "collector.h"
#include "mw_fnmap.h"

struct cJSON;

/* ---- aggregator side ------------------------------------------------------------------------ */

/* Partial of closed window w was handed to ZeroMQ (sent) or could not be (dropped, counted in
 * AggState.partials_dropped; its calls then show as missed between the ranks and this
 * aggregator). Called by the aggregator's upstream code, once per closed window. */
void mw__aggstate_sent(mw_collector_t *c, const mw_window_t *w);
void mw__aggstate_dropped(mw_collector_t *c, const mw_window_t *w);

/* ---- parent side ---------------------------------------------------------------------------- */

/* The map from aggregator `id`'s function ids to this collector's (built from the names of its
 * latest AggState), or NULL when no AggState of it has been accepted in the current job (a
 * partial is then refused: its ids mean nothing here). */
const mw_fnmap_t *mw__aggstate_fnmap(const mw_collector_t *c, uint32_t id);

/* Partial p of aggregator `id` was merged into the job (window or totals, late or not: whatever
 * partial.c adds to job.fn), its function ids already translated to this collector's (ids
 * outside 1..MW_FN_SPACE-1 are skipped: not merged, so counted as missed). Counts it as merged
 * from that aggregator and marks its listed ranks as served through an aggregator. Rank ranges
 * must have been checked against the job size. */
void mw__aggstate_merged(mw_collector_t *c, uint32_t id, const Mpiwatch__Partial *p);

/* A Partial of aggregator `id` came on the connection that sent its first AggState (the
 * frame's peer, collector.h frame_peer: CURVE key, else IP address): MW_ACCEPTED, or
 * MW_REJECT_CONNECTION (logged). Accepted when either is unknown (no AggState yet: partial.c
 * refuses it as no_hello; no peer identity: replay, ipc without CURVE). */
mw_reject_t mw__aggstate_connection(mw_collector_t *c, uint32_t id);

/* Whether a partial listed `rank` in the current job: its running totals are its aggregator's
 * (a sample it sends here itself after its aggregator died is merged without its totals). */
int mw__aggstate_via(const mw_job_t *job, uint32_t rank);

/* Whether a bye of `rank` is one an aggregator forwarded (the rank is known here only through
 * an aggregator): its totals are already in that aggregator's AggState, so the bye is neither
 * checked against per-rank totals nor added to them (ingest.c, job.c). True when a partial
 * listed the rank, or when the job has an aggregator and nothing was merged here from the rank
 * directly (no sample, no totals). */
int mw__aggstate_forwarded(const mw_job_t *job, uint32_t rank);

/* A rank known through an aggregator (mw__aggstate_via or _forwarded) whose own running totals
 * reached this collector: in a sample it sent here itself (merged: its functions, merged here,
 * NULL for a bye) or in its bye (final). Its totals take the place of its share in the latest
 * AggState of the aggregator whose partial listed it (docs/aggregator.md "Accounting"), so
 * that what it made after that AggState is counted, and nothing twice. _own_check first: the
 * totals' shape (ids of this collector increasing, values capped) and never decreasing. */
mw_reject_t mw__aggstate_own_check(const mw_job_t *job, uint32_t rank, size_t n, const uint32_t *fn,
                                   const uint64_t *calls, const uint64_t *ns, const uint64_t *bytes,
                                   uint64_t samples);
void mw__aggstate_own(mw_job_t *job, uint32_t rank, size_t n, const uint32_t *fn,
                      const uint64_t *calls, const uint64_t *ns, const uint64_t *bytes,
                      uint64_t samples, const Mpiwatch__Sample *merged, int final);

/* ---- accounting (job.c, summary.c, report.c, metrics.c) ------------------------------------- */

/* One aggregator's figures as the parent sees them. The two hops always add up:
 * at_ranks = merged + to_agg + to_parent, exactly (each hop is never negative: a figure that
 * ran ahead of the AggState that covers it, e.g. a partial merged before the AggState that
 * counts it as sent, is counted at the later stage until that AggState arrives). */
typedef struct {
    uint32_t id, pid, ranks, ranks_done;
    const char *host;
    int final;            /* its last AggState said its job ended */
    mw_tally_t at_ranks;  /* what its ranks made (AggState totals) */
    mw_tally_t sent;      /* what it sent upstream (AggState sent_*, samples_merged) */
    mw_tally_t merged;    /* what this collector merged from its partials */
    mw_tally_t to_agg;    /* missed between its ranks and it: at_ranks - sent */
    mw_tally_t to_parent; /* missed between it and this collector: sent - merged */
    uint64_t partials_sent, partials_dropped, partials_merged, rejected, late, states;
} mw_agg_figures_t;

/* 1 when every aggregator of the job (none included) sent its final AggState. A job whose
 * every rank said bye waits for them, at most MW_AGG_FINAL_GRACE_NS after its last activity
 * (collector.c): its outputs then hold the final accounting. */
int mw__aggs_final(const mw_job_t *job);
#define MW_AGG_FINAL_GRACE_NS (2ull * 1000000000ull)

/* Aggregators with an accepted AggState in the job, and the figures of the i-th (in order of
 * first AggState), 0 <= i < count. */
uint32_t mw__aggs_count(const mw_job_t *job);
void mw__aggs_figures(const mw_job_t *job, uint32_t i, mw_agg_figures_t *out);
/* Sums over every aggregator: at_ranks, merged and the two hops (each may be NULL); per_fn
 * (MW_FN_SPACE entries, or NULL) gets each function's missed part (both hops) ADDED. */
void mw__aggs_totals(const mw_job_t *job, mw_tally_t *at_ranks, mw_tally_t *merged,
                     mw_tally_t *to_agg, mw_tally_t *to_parent, mw_tally_t *per_fn);
/* Adds "aggregators": [...] to obj, each aggregator's figures (docs/collector.md, "Accounting
 * through aggregators"); nothing when the job has none. Returns 0, or -1 out of memory. */
int mw__aggs_json(const mw_job_t *job, struct cJSON *obj);
/* Adds the two hops of `loss` to a "missed" object when the job has aggregators:
 * "ranks_to_aggregators" and "aggregators_to_collector". Returns 0, or -1. */
int mw__aggs_missed_json(const mw_loss_t *loss, struct cJSON *missed);
/* The report's lines of the accounting through aggregators (report.c): the identity with its
 * two hops, then the aggregators' own counts, one line each (the first 32). */
void mw__aggs_report(const mw_job_t *job, const mw_loss_t *loss, FILE *out);
/* Frees the job's aggregator table (job.c, mw__job_free). */
void mw__aggs_free(struct mw_aggs *aggs);

#endif
