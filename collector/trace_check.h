/* trace_check.h: the checks of the ranks' traces and communicator definitions before they go
 * into a window (trace_check.c; docs/trace.md "The job's budget (collector)"). */
#ifndef MW_COLLECTOR_TRACE_CHECK_H
#define MW_COLLECTOR_TRACE_CHECK_H

#include <stdint.h>

#include "merge.h"
#include "mw_proto.h"

/* Why a trace (or a sample's CommDefs) was not kept as sent. The sample itself is always kept:
 * a refused trace makes the rank summary only in that window (reason MW_TRACE_WHY_REFUSED). */
#define MW_TRACE_REFUSE_REASONS(X)                                                                 \
    X(WINDOW, "window")             /* not the sample's window, or not on the job's grid */        \
    X(FIELD, "field")               /* state, reason, encoding or flags unknown; records in a      \
                                       summary-only trace */                                       \
    X(CAPS, "caps")                 /* count or raw_bytes over MW_TRACE_MAX_* */                   \
    X(DECODE, "decode")             /* mw_trace_decode refused the records */                      \
    X(RECORD, "record")             /* a record out of range (kind, function, peer, times) */      \
    X(COUNTS, "counts")             /* exact, but its calls are not the sample's: demoted */       \
    X(WINDOW_BYTES, "window_bytes") /* over the window's (or the open windows') byte cap */        \
    X(DUPLICATE, "duplicate")       /* a second exact trace of a rank's window: one entry */       \
    X(COMM, "comm")                 /* a CommDef out of range: the sample's are dropped */         \
    X(COMM_CAP, "comm_cap")         /* over the CommDefs a rank may send in a job (or at once) */  \
    X(LATE, "late")                 /* a later trace of a window the rank never sent */            \
    X(LATE_CAP, "late_cap")         /* over the later traces taken in one window (trace_budget.h) */

typedef enum {
#define MW_X(id, name) MW_TREFUSE_##id,
    MW_TRACE_REFUSE_REASONS(MW_X)
#undef MW_X
        MW_TREFUSE_COUNT
} mw_trace_refuse_t;

const char *mw__trace_refuse_name(mw_trace_refuse_t r);

#define MW_TRACE_MAX_COMMS_MSG 4096u   /* CommDefs in one sample */
#define MW_TRACE_MAX_COMMS_RANK 65536u /* CommDefs one rank may send in a job */
#define MW_TRACE_MAX_THREADS 65536u    /* Trace.threads */

/* The collector's counters of traces (stats JSON, Prometheus, report). */
typedef struct {
    uint64_t traces;       /* Trace messages received in accepted messages */
    uint64_t exact;        /* kept exact */
    uint64_t summary_only; /* kept as summary only (the rank's decision or a refusal) */
    uint64_t traced_calls; /* timed calls in exact traces */
    uint64_t left_out;     /* timed calls of traced samples not traced */
    uint64_t deferred;     /* timed calls of samples whose traces come later (reason deferred) */
    uint64_t bytes;        /* record bytes kept */
    uint64_t reach_back;   /* traces sent after their sample (Envelope.trace) accepted */
    uint64_t published;    /* ... of which for a closed window: published on the feed only */
    uint64_t comms;        /* CommDefs kept */
    uint64_t plans;        /* mpiwatch.trace plans sent (trace_budget.c) */
    uint64_t refused[MW_TREFUSE_COUNT];
} mw_trace_stats_t;

struct mw_collector;

/* Checks a sample's Trace and CommDefs (the sample itself already passed every other check) and
 * says in *in what the window keeps: O(records) for an exact trace (decoded once), O(1)
 * otherwise. Counts refusals. */
void mw__trace_check_sample(struct mw_collector *c, uint32_t rank, const Mpiwatch__Sample *s,
                            mw_trace_in_t *in);
/* Checks an Envelope.trace (a trace sent after its sample) of a live rank: the same checks but
 * the call counts (its sample is merged already). Returns 0 when it may be kept (*in set), -1
 * when refused (counted). */
int mw__trace_check_late(struct mw_collector *c, uint32_t rank, const Mpiwatch__Trace *t,
                         mw_trace_in_t *in);
/* Checks a trace of an aggregator's partial window (partial.c) as a sample's trace is checked,
 * its fields and its records (the aggregator compared its calls with the rank's sample): 0
 * when it may be kept (*in set: state, reason and left_out as the aggregator kept them), -1
 * when refused (counted). */
int mw__trace_check_partial(struct mw_collector *c, const Mpiwatch__Trace *t, mw_trace_in_t *in);
/* Whether a communicator definition is in range for the job (as a sample's are checked). */
int mw__trace_check_comm(const struct mw_collector *c, const Mpiwatch__CommDef *d);

#endif
