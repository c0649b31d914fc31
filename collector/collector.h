/* collector.h: the collector core's public interface, and the state its modules share.
 *
 * The collector is split so that everything except the socket loop is plain logic on decoded
 * messages with the time passed in, testable without ZeroMQ. Each module has its header:
 *   options.h     options.c: the option table, its command-line parser and the INI file
 *   log.h         log.c: levels and the sink of the log
 *   clock.h       clock.c: the two clocks of an event, read only by the loops (main.c,
 *                 server.c, replay.c) and passed in
 *   ingest.h      ingest.c: decode, validate (reject by reason) and apply one message
 *   job.h         job.c: per-rank state, lifecycle and the exact cumulative totals
 *   merge.h       merge.c: the window ring (the window grid is proto/mw_grid.h)
 *   steps.h       steps.c: per-step assembly
 *   publish.h     publish.c: the one path from the core to every output
 *   window_pb.h   window_pb.c: closed windows, steps and the job description in wire form
 *   summary.h     summary.c: the summary and stats JSON files
 *   report.h      report.c: the end-of-run text report
 *   live.h        live.c: the live terminal view
 *   record_file.h record_file.c: the recording writer (the reader is proto/mw_recording.h)
 *   feed.h        feed.c: --publish, the PUB socket of merged windows
 *   history.h     history.c: --history, the ROUTER socket answering HistoryRequests
 *   zsock.h       zsock.c: socket helpers of the servers
 *   steer.h       steer.c: --steer and --control
 *   upstream.h    upstream.c: --upstream, the aggregator's parent and the steering relay
 *   rules.h       rules.c: --rules, thresholds and actions
 *   trace_check.h trace_check.c: the ranks' per-call traces checked before a window keeps them
 *   trace_budget.h trace_budget.c: the job's tracing budget and its plans (mpiwatch.trace)
 *   lateness.h    lateness.c: logical steps and lateness of the traces, on a worker thread
 *   auth.h        auth.c: which endpoints are local, CURVE, the ZAP handler, refusals
 *   signals.h     signals.c: SIGINT/SIGTERM/SIGHUP for the loops (executable only)
 *   server.h      server.c: the zmq_poll loop (executable only)
 *   replay.h      replay.c: --replay (executable only)
 *   metrics.h     metrics.c: the Prometheus endpoint (executable only)
 * collector.c ties them together: the frame, tick and finish entry points, timers, job end.
 *
 * Public API (mw_ prefix, used outside collector/: the exporter, the tests): the
 * mw_collector_* entry points, mw_collector_options_* (options.h), mw_summary_json and
 * mw_job_host. Everything else shared between the collector's files is mw__.
 */
#ifndef MW_COLLECTOR_H
#define MW_COLLECTOR_H

#include <stdint.h>
#include <stdio.h>

#include "auth.h"
#include "clock.h"
#include "index.h"
#include "ingest.h"
#include "job.h"
#include "lateness.h"
#include "live.h"
#include "log.h"
#include "merge.h"
#include "mw_proto.h"
#include "options.h"
#include "trace_budget.h"
#include "trace_check.h"
#include "window_pb.h"

typedef struct {
    uint64_t accepted;
    uint64_t rejected[MW_REJECT_COUNT];
    uint64_t late;
    uint64_t windows;
    uint64_t partial_windows;
    uint64_t jobs;
    uint64_t auth_refused[MW_AUTH_COUNT]; /* connections refused with CURVE on, by reason */
    uint64_t capped[MW_CAP_COUNT];        /* parts of hellos over a job-wide cap, all jobs */
    uint64_t rs_refused[MW_RS_COUNT];     /* region / call-site parts left out (regions.h) */
    mw_latency_t close_latency; /* window end on the global grid -> close (collector real time) */
    mw_latency_t close_wait;    /* last sample merged into the window -> close (monotonic) */
} mw_stats_t;

typedef struct mw_collector {
    const mw_collector_options_t *opt;
    mw_arena_t arena;
    mw_job_t job;
    mw_merge_t merge;
    int merge_ready;
    int hello_again; /* the hello being ingested was a rank's repeat (a reconnection) */
    uint64_t replay_window_refused; /* recorded window changes replay refused (record_file.c) */
    mw_stats_t stats;
    mw_live_t live;
    FILE *report_out;              /* where the end-of-run report is printed: stderr, set by
                                      mw_collector_init; NULL prints it nowhere (the exporter) */
    int outputs_written;           /* the current job's report and summary have been written */
    int exit_requested;            /* --exit-after-job and the job has ended */
    uint32_t fn_seen[MW_FN_SPACE]; /* validation scratch: fn_seen[fn] == gen, seen in sample */
    uint32_t fn_seen_gen;
    mw_window_fn on_window; /* extra consumer of closed windows (tests, later outputs) */
    void *on_window_user;
    mw_clock_t now; /* the clock of the event being handled (frame, tick, finish) */
    /* The outer loop's clock, for what needs the time when it acts rather than the event's
     * (a steering message's lead, the rules' grace before a kill, a rate limit): set by the
     * executable (mw__clock_now); NULL in tests and the exporter, where c->now stands in. */
    mw_clock_fn clock;
    mw_pb_encoder_t enc;            /* encodes each closed window once for the consumers below */
    struct mw_record *record;       /* --record: the recording being written, or NULL */
    struct mw_feed *feed;           /* --publish, or NULL (feed.c) */
    struct mw_history *history;     /* --history, or NULL (history.c) */
    uint32_t job_published_hellos;  /* job.hellos when the job description was last sent */
    struct mw_step_assembly *steps; /* per-step assembly of the current job (steps.c) */
    struct mw_steer *steer;         /* --steer / --control sockets, or NULL (steer.c) */
    struct mw_upstream *upstream;   /* --upstream: the aggregator's parent (upstream.c), or NULL */
    struct mw_partial *partial;     /* partial windows, both sides of a hop (partial.c), or NULL */
    struct mw_rules *rules;         /* --rules: the rule set (rules.c), or NULL */
    struct mw_auth *auth;           /* --curve-secret: the ZAP handler and monitors, or NULL */
    mw_trace_stats_t tstats;        /* traces, all jobs (trace_check.c) */
    mw__tbudget_t tbudget;          /* the current job's trace budget and plan (trace_budget.c) */
    struct mw_lateness *lateness;   /* --lateness on: the analysis' worker (lateness.c), or NULL */
    mw_lateness_totals_t ltotals;   /* what its batches said so far (report, /metrics) */

    /* The connection the frame being handled came in on, asked only when needed (aggstate.c):
     * frame_peer(frame_msg, buf, cap) gives "key:Z85" (CURVE's User-Id) or "addr:IP" (ZeroMQ's
     * Peer-Address), or NULL. Set by server.c around each frame; NULL in replay and tests. */
    const char *(*frame_peer)(void *frame_msg, char *buf, size_t cap);
    void *frame_msg;
} mw_collector_t;

/* Prepares a collector (allocates the decoding arena). Returns 0, or -1 with a message. */
int mw_collector_init(mw_collector_t *c, const mw_collector_options_t *opt);
void mw_collector_free(mw_collector_t *c);

/* Takes one received message: `parts` is the number of frames it had. Returns MW_ACCEPTED or
 * the reason it was rejected (already counted). Handles a job that ends with this message. */
mw_reject_t mw_collector_frame(mw_collector_t *c, const void *data, size_t len, int parts,
                               const mw_clock_t *now);
/* Runs the timers due at `now`: window deadlines, the silence timeout, the live view. */
void mw_collector_tick(mw_collector_t *c, const mw_clock_t *now);
/* Milliseconds until the next timer (for zmq_poll), -1 when none. */
long mw_collector_timeout_ms(const mw_collector_t *c, const mw_clock_t *now);
/* Ends the run (SIGINT / SIGTERM): closes open windows and writes whatever is not written. */
void mw_collector_finish(mw_collector_t *c, const mw_clock_t *now);
/* Writes the summary, stats and report. Returns 0, or -1 when a file could not be written. */
int mw_collector_write_outputs(mw_collector_t *c, int with_report);
/* For a program that embeds the core (the export): the log's lines go to `sink` (NULL:
 * stderr) and only those at `level` or more severe are written (log.c). */
void mw_collector_set_log(FILE *sink, mw_log_level_t level);

/* Monotonic time now: c->clock's reading, or c->now.mono_ns without a clock. */
uint64_t mw__collector_mono_ns(mw_collector_t *c);
/* Starts a job for `env`'s hello, resetting the previous one (collector.c). Returns 0, or -1. */
int mw__collector_job_begin(mw_collector_t *c, const Mpiwatch__Envelope *env, uint64_t now_ns);

/* The summary JSON as a string (caller frees), or NULL (summary.c). */
char *mw_summary_json(const mw_collector_t *c);
/* Applies one record of a recording to the collector as the live collector applied it: a
 * received frame with its recorded clock, a tick, the finish on a signal; windows, jobs,
 * events and index frames are outputs and are skipped (the collector derives them again).
 * Returns 1 when the record was applied, 0 when skipped (record_file.c, in the core library,
 * so that replay and the exporters share it). */
int mw_collector_apply_record(mw_collector_t *c, const Mpiwatch__Record *rec);

#endif
