/* lateness.h: the online lateness analysis (lateness.c; docs/lateness.md).
 *
 * Closed windows' exact traces are handed to a worker thread that runs the logical-structure
 * stream of proto/mw_logical.h beside the window pipeline; what it finalizes comes back
 * through a queue and a wake-up descriptor that the collector's loop polls, and is published
 * as Mpiwatch__Lateness batches (feed topic "lateness", the recording, the history, the rules,
 * the report and /metrics). The loop never waits for the worker: a window that finds the queue
 * full, or that waited longer than the budget, is skipped (a gap in the stream), counted and
 * published.
 */
#ifndef MW_COLLECTOR_LATENESS_H
#define MW_COLLECTOR_LATENESS_H

#include <stddef.h>
#include <stdint.h>

#include "merge.h"
#include "mw_proto.h"

#define MW_LATENESS_QUEUE 64u                  /* windows waiting for the worker, at most */
#define MW_LATENESS_QUEUE_BYTES (256ull << 20) /* ... and their encoded records together */
#define MW_LATENESS_RESULTS 256u               /* batches waiting for the loop, at most */
#define MW_LATENESS_MAX_SUMMARIES (1u << 16)   /* step summaries one batch carries */

struct mw_collector;
typedef struct mw_lateness mw_lateness_t;

/* The job's analysis so far, as the last batch published it (the report, /metrics, the
 * summary). All zero before the first batch. */
typedef struct {
    uint64_t batches;          /* batches published, all jobs */
    uint64_t windows_analysed; /* current job */
    uint64_t windows_skipped;  /* current job: behind (queue full, over the budget) */
    uint64_t windows_untraced; /* current job */
    uint64_t gaps, events, partitions, forced, unmatched, bad_traces;
    uint64_t extract_ns_total, extract_ns_max, extract_ns_last;
    int64_t lateness_max_ns; /* largest over the job's window summaries */
    int64_t diff_max_ns;
    uint32_t lateness_rank, diff_rank;
    uint16_t lateness_fn, diff_fn;
    uint64_t lateness_window, diff_window, diff_step;
    int64_t lost_ns;                        /* summed over the job's windows */
    double share_last;                      /* lateness_share of the newest window summary */
    double share_max;                       /* largest lateness_share of a window */
    int64_t last_lateness_ns, last_diff_ns; /* the newest window summary's maxima */
    uint64_t last_window;                   /* its index (valid when windows_summarised) */
    uint64_t windows_summarised;
    mw_latency_t extract; /* worker time per analysed window (stats JSON quantiles) */
} mw_lateness_totals_t;

/* Events the collector's stream holds at most (mw_logical_opts_t.max_pending_events): a few
 * hundred bytes each while a window is analysed, so about 300 MB at the cap, whatever a rank's
 * well-compressed trace expands to; 5 windows of the default tracing budget at 10 windows/s. */
#define MW_LATENESS_MAX_PENDING_EVENTS (1u << 20)

/* Starts the worker (budget_ms: the longest a closed window may wait for it; leap: the leap
 * merge, MW_LOGICAL_LEAP, on unless --lateness no-leap). Returns NULL with a logged message
 * when the thread or the descriptor cannot be made. */
mw_lateness_t *mw__lateness_open(uint64_t budget_ms, int leap);
/* Longest the collector's exit waits for the worker to finish the analysis it is in. */
#define MW_LATENESS_CLOSE_MS 1000u

/* Stops the worker (what it holds is dropped) and frees everything; NULL is ignored. A worker
 * still inside an analysis after MW_LATENESS_CLOSE_MS is left running, with its memory, until
 * the process exits (the collector is exiting). */
void mw__lateness_close(mw_lateness_t *l);
/* The descriptor that becomes readable when batches are waiting (for zmq_poll). */
int mw__lateness_fd(const mw_lateness_t *l);

/* A job starts (its windows follow): the worker starts a fresh stream. */
void mw__lateness_job(mw_lateness_t *l, const char *job);
/* A window closed (the publish path): its exact traces are copied and queued, or the window
 * is skipped. `mono_ns` is the loop's monotonic time. Never waits for the worker. */
void mw__lateness_window(mw_lateness_t *l, const mw_window_t *w, uint64_t mono_ns);
/* The job ended: what the stream holds is finalized (a gap). */
void mw__lateness_job_end(mw_lateness_t *l);

/* Publishes every batch the worker has finished (the loop, when the descriptor is readable or
 * at any time): mw__publish with MW_PUB_LATENESS, after updating c's totals. */
void mw__lateness_drain(struct mw_collector *c);
/* Waits up to `timeout_ms` for the worker to finish what is queued, then drains: used at the
 * end of a run so that the last batches reach the report and the recording. */
void mw__lateness_flush(struct mw_collector *c, uint64_t timeout_ms);

/* Updates the totals from a batch (lateness.c; the publish path's "stats" entry). */
void mw__lateness_account(mw_lateness_totals_t *t, const Mpiwatch__Lateness *b);

#endif
