/* partial.h: an aggregator's merged windows on the wire (Partial, AggState) and their merge
 * into the parent's windows (partial.c; docs/aggregator.md).
 *
 * An aggregator is a collector run with --upstream: it merges its ranks' samples as any
 * collector does, and each window it closes goes upstream as one Partial (the merged window of
 * the ranks listed, plus the state that makes merging partials exact); its accounting (what its
 * ranks made, what it sent, what it refused) goes up as AggState. The parent merges a partial
 * into its own open window as if the listed ranks' samples had arrived, so the root's windows,
 * summary, report and recording are those of one collector taking every rank.
 */
#ifndef MW_COLLECTOR_PARTIAL_H
#define MW_COLLECTOR_PARTIAL_H

#include <stddef.h>
#include <stdint.h>

#include "collector.h"
#include "window_pb.h"

#define MW_MAX_AGGREGATORS 4096u /* aggregators one parent takes in a job */

/* Aggregator side: encodes closed window w of the aggregator's merge as an Envelope (job,
 * rank = agg_id, seq, body partial) into e->out, with the steps the aggregator closed since
 * its previous partial. Returns its length, or 0 when out of memory. */
size_t mw__partial_envelope_pack(mw_collector_t *c, mw_pb_encoder_t *e, const mw_window_t *w,
                                 uint32_t agg_id, uint64_t seq);
/* Aggregator side: its AggState as an Envelope (body agg) into e->out. Returns its length,
 * or 0. */
size_t mw__aggstate_envelope_pack(mw_collector_t *c, mw_pb_encoder_t *e, uint32_t agg_id,
                                  uint64_t seq, int final);

/* Parent side (ingest.c): checks and applies an Envelope whose body is a Partial or an
 * AggState. Everything is checked before anything changes (ingest.c's rule). */
mw_reject_t mw__partial_ingest(mw_collector_t *c, const Mpiwatch__Envelope *env,
                               const mw_clock_t *now);
mw_reject_t mw__aggstate_ingest(mw_collector_t *c, const Mpiwatch__Envelope *env,
                                const mw_clock_t *now);

/* Whether this collector is an aggregator (--upstream given). */
int mw__partial_aggregating(const mw_collector_t *c);
/* Aggregator side (steps.c): a step its ranks all ended closed; it goes up with the next
 * partial (Partial.steps). */
void mw__partial_step_closed(mw_collector_t *c, const Mpiwatch__Step *st);
/* Aggregator side (ingest.c): a sample of `rank` for window `window` carried dormant totals;
 * they go up with that window's partial (Partial.dormant). */
void mw__partial_dormant(mw_collector_t *c, uint32_t rank, uint64_t window,
                         const Mpiwatch__Dormant *d);
/* Frees the collector's partial state (c->partial). */
void mw__partial_free(mw_collector_t *c);

#endif
