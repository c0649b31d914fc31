/* ingest.h: decode, validate (reject by reason) and apply one message
 * (ingest.c; docs/collector.md). */
#ifndef MW_COLLECTOR_INGEST_H
#define MW_COLLECTOR_INGEST_H

#include "clock.h"
#include "mw_proto.h"

#define MW_REJECT_REASONS(X)                                                                       \
    X(MULTIPART, "multipart")                                                                      \
    X(TOO_LARGE, "too_large")                                                                      \
    X(DECODE, "decode")                                                                            \
    X(VERSION, "version")                                                                          \
    X(NO_BODY, "no_body")                                                                          \
    X(JOB_MISMATCH, "job_mismatch")                                                                \
    X(TABLE_MISMATCH, "table_mismatch")                                                            \
    X(RANK_RANGE, "rank_range")                                                                    \
    X(NO_HELLO, "no_hello")                                                                        \
    X(DUPLICATE, "duplicate")                                                                      \
    X(TIMESTAMP, "timestamp")                                                                      \
    X(BAD_FIELD, "bad_field")                                                                      \
    X(DUPLICATE_HELLO, "duplicate_hello")                                                          \
    X(CAPTURE_FIELD, "capture_field")                                                              \
    X(CAPTURE_TIME, "capture_time")                                                                \
    X(GRID_MISMATCH, "grid_mismatch")                                                              \
    X(TOPO_DEPTH, "topo_depth") /* a node's hardware deeper than MW_MAX_TOPO_DEPTH */              \
    X(TOTALS, "totals")                                                                            \
    X(AHEAD, "ahead") /* a sample's window starts over MW_SAMPLE_MAX_LEAD_NS after now */          \
    X(TRACE, "trace") /* an Envelope.trace refused (counted by reason in the trace counters) */    \
    X(CONNECTION, "connection") /* a Partial or AggState from another connection than the one of   \
                                   its aggregator's first AggState (aggstate.c) */

typedef enum {
    MW_ACCEPTED = 0,
#define MW_X(id, name) MW_REJECT_##id,
    MW_REJECT_REASONS(MW_X)
#undef MW_X
        MW_REJECT_COUNT
} mw_reject_t;

/* "decode", ... for a reason; "accepted" for MW_ACCEPTED. */
const char *mw__reject_name(mw_reject_t reason);

struct mw_collector;

/* Validates and applies a decoded envelope (ingest.c). */
mw_reject_t mw__ingest(struct mw_collector *c, const Mpiwatch__Envelope *env,
                       const mw_clock_t *now);
/* Whether the function ids of rank's messages are translated (its table is not this build's,
 * docs/function-table.md): an envelope mw__ingest accepted from it then differs from the frame
 * it came in, and whoever keeps the frame for readers keeps the envelope encoded again. */
int mw__ingest_translated(const struct mw_collector *c, uint32_t rank);

#endif
