/* collector.h: the mpiwatch collector's internal interface.
 *
 * The collector is split so that everything except the socket loop is plain logic on decoded
 * messages with the time passed in, testable without ZeroMQ:
 *   options.c    the option table, its command-line parser and the INI file (--config)
 *   ingest.c     decode, validate (reject by reason) and apply one message
 *   job.c        the job: per-rank state, lifecycle and the exact cumulative totals
 *   merge.c      the window ring (merge.h)
 *   collector.c  ties them together: window callbacks, timers, job end, outputs
 *   summary.c    the summary and stats JSON files
 *   report.c     the end-of-run text report
 *   live.c       the live terminal view
 *   server.c     the zmq_poll loop (only in the executable)
 *   metrics.c    the Prometheus endpoint, served by libmicrohttpd (only in the executable)
 *   window_pb.c  closed windows and the job description in wire form, encoded once
 *   record_file.c the recording file: writer, reader, index (record_file.h)
 *   replay.c     --replay: a recording fed back through the collector as if live
 *   feed.c       --publish (PUB of merged windows) and --history (ROUTER answering requests)
 *   auth.c       which endpoints are local, CURVE on the sockets, the ZAP handler, refusals
 */
#ifndef MW_COLLECTOR_H
#define MW_COLLECTOR_H

#include <stdint.h>
#include <stdio.h>
#include <zmq.h>

#include "index.h"
#include "merge.h"
#include "mw_proto.h"

/* ---- logging ------------------------------------------------------------------------------ */

typedef enum { MW_LOG_ERROR, MW_LOG_WARN, MW_LOG_INFO, MW_LOG_DEBUG } mw_log_level_t;

extern int mw__log_level;
extern unsigned long mw__log_lines; /* lines logged so far: the live view redraws below them */

void mw__log(mw_log_level_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Costs one comparison when the level is filtered out. */
#define MW_LOG(level, ...)                                                                         \
    do {                                                                                           \
        if ((int)(level) <= mw__log_level)                                                         \
            mw__log((level), __VA_ARGS__);                                                         \
    } while (0)

#define MW_TRY(expr)                                                                               \
    do {                                                                                           \
        if ((expr) < 0)                                                                            \
            return -1;                                                                             \
    } while (0)

/* ---- time --------------------------------------------------------------------------------- */

/* The collector's two clocks, read once per batch of messages: monotonic for every timer
 * (lateness, silence, refresh), real time for checking rank timestamps. */
typedef struct {
    uint64_t mono_ns;
    uint64_t real_ns;
} mw_clock_t;

void mw_clock_now(mw_clock_t *now);

#define MW_NS_PER_MS 1000000ull
#define MW_NS_PER_S 1000000000ull
#define MW_TIMESTAMP_TOLERANCE_NS (86400ull * MW_NS_PER_S) /* timestamps within a day of now */
/* A sample's window may start at most this long after the collector's real-time clock (reason
 * "ahead"): ranks send a window once it has ended, so only a clock skew between the job's global
 * clock and the collector's puts it ahead. A window far in the future would otherwise become
 * the newest the collector knows, from which it places the K of mpiwatch.window and captures,
 * beyond what the ranks accept (docs/collector.md "The window grid"). */
#define MW_SAMPLE_MAX_LEAD_NS (5ull * MW_NS_PER_S)
#define MW_MAX_WINDOW_NS (60ull * MW_NS_PER_S)
/* MW_MAX_RANKS, MW_MAX_STRING, MW_MAX_PUS, MW_MAX_TOPO_OBJECTS, MW_MAX_TOPO_DEPTH and the
 * job-wide caps MW_JOB_MAX_* are in proto/mw_limits.h: the readers of a job description check
 * the same caps (docs/collector.md, "Caps"). */
#include "mw_limits.h"
/* A captured call must end inside its sample's window, give or take this (the ticks to ns
 * rounding of the rank's clock is a few ns), unless it is one of the sample's late calls. */
#define MW_CAPTURE_TOLERANCE_NS 1000ull

/* ---- options ------------------------------------------------------------------------------ */

#define MW_MAX_LISTEN 8

typedef struct {
    char *listen[MW_MAX_LISTEN]; /* endpoints the PULL socket binds */
    unsigned n_listen;
    char *summary_json;
    char *report;
    char *stats_json;
    uint64_t lateness_ms;
    uint64_t silence_timeout_ms;
    uint64_t metrics_port; /* --metrics-port: Prometheus HTTP on 127.0.0.1 (0: off) */
    int exit_after_job;
    int quiet;
    int verbose;
    int help;
    int version;
    char *config;      /* --config FILE: INI file loaded after the command line */
    int print_config;  /* --print-config: print the effective settings as INI and exit */
    char *record;          /* --record FILE.mpiw */
    char *replay;          /* --replay FILE.mpiw: read a recording instead of listening */
    double speed;          /* --speed X: replay pace (1 real time, 0 as fast as possible) */
    double from_s, to_s;   /* --from / --to: replay span in seconds from the recording start
                              (to_s < 0: to the end) */
    char *publish;         /* --publish ENDPOINT: PUB socket of merged windows */
    char *rules;           /* --rules FILE: threshold rules and actions (docs/steering.md) */
    char *history;         /* --history ENDPOINT: ROUTER socket answering HistoryRequest */
    char *steer;           /* --steer ENDPOINT: PUB socket of Steer messages to the ranks */
    char *control;         /* --control ENDPOINT: ROUTER socket taking SteerRequests */
    uint64_t history_windows; /* closed windows the history keeps in memory */
    uint64_t history_mb;      /* memory for recent raw samples (rank queries), MiB */
    char *curve_secret;    /* --curve-secret FILE: the collector's key pair (NAME.key) */
    char *curve_clients;   /* --curve-clients FILE_OR_DIR: the public keys allowed in */
    int allow_insecure;    /* --allow-insecure: bind non-local endpoints without CURVE */
    uint64_t from_cmdline; /* bit i: row i of the option table was given on the command line */
} mw_options_t;

void mw_options_defaults(mw_options_t *o);
void mw_options_free(mw_options_t *o);
/* Sets option `name` (its long name, without dashes) from a string, as a flag, an INI key or
 * an environment variable would. `value` is NULL for a flag given without one. Returns 0, or
 * -1 with a message in err. */
int mw_options_set(mw_options_t *o, const char *name, const char *value, char *err, size_t errlen);
/* Parses argv. Returns 0, or -1 with a message in err. */
int mw_options_parse(mw_options_t *o, int argc, char **argv, char *err, size_t errlen);
/* Loads the [collector] section of an INI file: every key is the long name of an option and
 * goes through mw_options_set(). Options given on the command line (from_cmdline) keep their
 * value; their keys in the file are still checked. Returns 0, or -1 with "FILE:LINE: message"
 * (or "FILE: message" when it cannot be read) in err. */
int mw_options_load(mw_options_t *o, const char *path, char *err, size_t errlen);
/* Prints every setting that the INI file accepts, as a [collector] section that
 * mw_options_load() reads back to the same settings (one line per listen endpoint). Returns 0,
 * or -1 with nothing printed when a value cannot be written so (mw_options_printable). */
int mw_options_print(FILE *out, const mw_options_t *o);
/* 0 when every value can be written as an INI line that inih reads back unchanged; -1 with
 * the reason in err for a value with a line break, a blank at either end, a ';' after a blank
 * or a line longer than inih takes (docs/collector.md, Configuration). */
int mw_options_printable(const mw_options_t *o, char *err, size_t errlen);
/* Checks what the options need together (an endpoint unless --help, --version or
 * --print-config). */
int mw_options_check(const mw_options_t *o, char *err, size_t errlen);
void mw_options_usage(FILE *out, const char *prog);

/* ---- rejection reasons -------------------------------------------------------------------- */

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
    X(AHEAD, "ahead") /* a sample's window starts over MW_SAMPLE_MAX_LEAD_NS after now */

typedef enum {
    MW_ACCEPTED = 0,
#define MW_X(id, name) MW_REJECT_##id,
    MW_REJECT_REASONS(MW_X)
#undef MW_X
        MW_REJECT_COUNT
} mw_reject_t;

/* "decode", ... for a reason; "accepted" for MW_ACCEPTED. */
const char *mw_reject_name(mw_reject_t reason);

/* ---- job-wide caps (job.c, docs/collector.md "Caps") ------------------------------------- */

/* What an accepted hello claimed beyond a job-wide cap (proto/mw_limits.h) and the collector
 * did not keep: the rank is in the job, without that part. */
#define MW_CAP_REASONS(X)                                                                          \
    X(PUS, "pus")           /* a PU list over MW_JOB_MAX_PUS: the rank keeps none */             \
    X(OBJECTS, "objects")   /* a node's hardware over MW_JOB_MAX_TOPO_OBJECTS: none kept */      \
    X(NAMES, "names")       /* a host or node name over MW_JOB_MAX_NAMES or _NAME_BYTES */       \
    X(JOB_INFO, "job_info") /* a rank that would take the job description over
                               MW_JOB_MAX_INFO_BYTES: left out of it (still in the totals) */

typedef enum {
#define MW_X(id, name) MW_CAP_##id,
    MW_CAP_REASONS(MW_X)
#undef MW_X
        MW_CAP_COUNT
} mw_cap_reason_t;

const char *mw_cap_reason_name(mw_cap_reason_t reason);

/* ---- refused connections (auth.c, docs/security.md) -------------------------------------- */

#define MW_AUTH_REASONS(X)                                                                         \
    X(UNAUTHORIZED, "unauthorized") /* CURVE client whose key is not authorized (ZAP) */           \
    X(MECHANISM, "mechanism")       /* a peer without CURVE (NULL or PLAIN) */                     \
    X(CRYPTO, "crypto")             /* CURVE handshake that does not decrypt (wrong server key) */ \
    X(HANDSHAKE, "handshake")       /* any other failed handshake, a peer hanging up in it */

typedef enum {
#define MW_X(id, name) MW_AUTH_##id,
    MW_AUTH_REASONS(MW_X)
#undef MW_X
        MW_AUTH_COUNT
} mw_auth_reason_t;

const char *mw_auth_reason_name(mw_auth_reason_t reason);

/* ---- the job ------------------------------------------------------------------------------ */

typedef enum { MW_RANK_PENDING, MW_RANK_LIVE, MW_RANK_DONE, MW_RANK_DEAD } mw_rank_state_t;

typedef enum { MW_END_NONE, MW_END_COMPLETE, MW_END_SILENCE, MW_END_SIGNAL } mw_end_t;

typedef struct {
    uint8_t state; /* mw_rank_state_t */
    uint8_t said_hello;
    uint32_t pid;
    uint32_t host; /* index into job.hosts */
    int32_t pu, core, package;
    uint64_t clock_error_ns;
    uint64_t last_seen_ns; /* collector monotonic */
    uint64_t samples;
    int64_t first_window, last_window; /* -1 before the first sample */
    uint64_t calls;
    uint64_t mpi_time_ns;
    uint64_t samples_dropped;     /* largest samples_dropped_total reported (sample or bye) */
    uint64_t records_dropped;     /* sum of records_dropped over its samples */
    uint64_t records_dropped_bye; /* records_dropped_total from its bye */
    uint64_t calls_late;
    /* Loss accounting (job.c, docs/collector.md): the rank's running totals since MPI_Init as
     * its latest sample or its bye said (per function in its mw_rank_fn_t entries). */
    uint8_t has_totals;   /* its samples carry totals (0: an older library, or nothing seen) */
    uint8_t totals_final; /* they came from its bye: final, not as of its last sample */
    uint32_t tot_fns;     /* its entries with totals (tot_count > 0) */
    uint64_t tot_samples, tot_calls, tot_time_ns, tot_bytes;
    uint64_t bytes; /* merged, as calls and mpi_time_ns are */
    uint32_t rank_fn_first; /* position + 1 of its block of entries in job.rank_fn (0: none) */
    uint32_t pairs_first;   /* ... in job.pairs */
    uint32_t rank_fn_n, pairs_n; /* entries in those blocks (job.c) */
    /* Placement (docs/topology.md): node index into job.nodes, L3 and NUMA logical indices
     * (-1 unknown), and its PUs at job.pus[pus_first, pus_first + pus_n). */
    uint32_t node;
    int32_t l3, numa;
    uint8_t bound;
    uint8_t in_info; /* its RankInfo is in the job description (job.c, MW_CAP_JOB_INFO) */
    uint32_t pus_first, pus_n;
} mw_rank_t;

/* One object of a node's hardware, as the wire's TopoObject: type 1 package, 2 L3 cache,
 * 3 core, 4 PU; parent the index of the enclosing object in the same list, or -1. */
typedef struct {
    uint32_t type;
    int32_t parent;
    uint32_t logical, os_index;
} mw_topo_obj_t;

/* A node's hardware, from the first rank that described it (empty until one did). */
typedef struct {
    mw_topo_obj_t *objects;
    uint32_t n_objects;
} mw_node_hw_t;

/* Cumulative totals of one function (job-wide). */
typedef mw_fn_stats_t mw_fn_total_t;

/* Cumulative totals of one function on one rank. */
typedef struct {
    uint32_t rank;
    uint32_t fn;
    uint64_t count;
    uint64_t time_ns;
    uint64_t bytes;
    uint64_t tot_count, tot_time_ns, tot_bytes; /* the rank's running totals (loss accounting) */
} mw_rank_fn_t;

/* Calls, ns, bytes and samples: what the ranks did, merged or missed (loss accounting). */
typedef struct {
    uint64_t calls, time_ns, bytes, samples;
} mw_tally_t;

/* Largest running total accepted (calls, ns or bytes of one function on one rank, samples of
 * one rank): 2^54 (208 days of ns), so that sums over a rank's functions cannot wrap. */
#define MW_TOTAL_MAX (1ull << 54)

#define MW_JOB_MAX_RANK_FN (1u << 26)
#define MW_JOB_MAX_PAIRS (1u << 25)

typedef struct {
    int active; /* a hello started it */
    mw_end_t ended;
    char job[MW_MAX_STRING + 1];
    char program[MW_MAX_STRING + 1];
    char mpi_library[MW_MAX_STRING + 1];
    uint32_t size;
    uint64_t window_ns; /* the first window length (Hello.window_ns) */
    mw_grid_t grid;     /* the window grid: window_ns, then mpiwatch.window changes (grid.h) */
    uint32_t subslots;
    uint32_t duration_bins;

    mw_rank_t *ranks; /* [size] */
    uint32_t hellos, byes, dead;

    char **hosts; /* distinct host names, interned */
    uint64_t *host_hash;
    uint32_t n_hosts, cap_hosts;
    mw__index_t host_index; /* host_hash -> position in hosts (uint32_t), see job.c */

    /* Nodes: a host, or an emulated node (MPIWATCH_NODES); interned like the hosts, in order
     * of first hello, with their hardware in node_hw[n_nodes]. */
    char **nodes;
    uint64_t *node_hash;
    uint32_t n_nodes, cap_nodes;
    mw__index_t node_index;
    mw_node_hw_t *node_hw;
    uint32_t cap_node_hw;
    uint32_t *pus; /* every rank's PU list (mw_rank_t.pus_first) */
    uint32_t n_pus, cap_pus;
    /* Job-wide caps (docs/collector.md "Caps"): what all hellos made the job keep, and an
     * upper bound of the encoded job description's size. */
    uint64_t n_objects, name_bytes, info_bytes;
    uint64_t capped[MW_CAP_COUNT];

    mw_fn_total_t fn[MW_FN_COUNT];
    mw__index_t rank_fn; /* list of mw_rank_fn_t, keys (rank << 32 | fn), see job.c */
    mw__index_t pairs;   /* list of mw_pair_sum_t, keys (src << 32 | dst) */
    mw__index_t rank_fn_late, pairs_late; /* key -> position, for entries outside rank blocks */
    uint64_t overflow;   /* per-rank function or pair totals that did not fit */
    /* Loss accounting over the ranks that send running totals: the sum of their latest totals
     * (at_ranks) and of what was merged from them (merged); missed = at_ranks - merged. */
    mw_tally_t at_ranks, merged;

    uint64_t samples;
    uint64_t late;
    uint64_t windows; /* merged windows closed */
    uint64_t partial_windows;
    int64_t min_window, max_window; /* -1 before the first sample */
    uint64_t max_clock_error_ns;

    uint64_t started_ns;       /* collector monotonic time of the first hello */
    uint64_t last_activity_ns; /* ... of the last accepted message */
    uint64_t ended_ns;
} mw_job_t;

/* Starts a job from its first hello (allocates per-rank state). Returns 0, or -1. */
int mw__job_begin(mw_job_t *job, const Mpiwatch__Envelope *env, uint64_t now_ns);
void mw__job_free(mw_job_t *job);
void mw__job_hello(mw_job_t *job, const Mpiwatch__Envelope *env, uint64_t now_ns);
/* Adds a sample to the exact totals; returns the increase of the rank's dropped samples. */
uint64_t mw__job_sample(mw_job_t *job, const Mpiwatch__Envelope *env, uint64_t now_ns);
void mw__job_bye(mw_job_t *job, const Mpiwatch__Envelope *env, uint64_t now_ns);
/* Marks every rank that has neither said bye nor died as dead; returns how many. */
uint32_t mw__job_declare_dead(mw_job_t *job);
/* Loss accounting: checks the running totals of a sample (s) or a bye (b) of `rank` against
 * the totals the rank reported before and what the sample adds (docs/collector.md). Returns
 * MW_ACCEPTED or MW_REJECT_TOTALS. */
mw_reject_t mw__job_totals_check(const mw_job_t *job, uint32_t rank, const Mpiwatch__Sample *s,
                                 const Mpiwatch__Bye *b);
/* What the collector missed of the job: missed = the ranks' totals - merged, exactly (ranks
 * without totals count as merged with nothing missed). `per_fn` (MW_FN_COUNT entries, or NULL)
 * gets the missed part per function. */
typedef struct {
    mw_tally_t at_ranks, merged, missed;
    uint32_t ranks_missing;    /* ranks with something missed */
    uint32_t ranks_not_final;  /* ranks with totals but no bye: totals as of their last sample */
    uint32_t ranks_no_totals;  /* ranks that said hello but sent no totals */
} mw_loss_t;
void mw_job_loss(const mw_job_t *job, mw_loss_t *out, mw_tally_t *per_fn);
/* The summary's "dropped": rank-side dropped samples plus dropped records, all ranks. */
uint64_t mw_job_dropped(const mw_job_t *job);
const char *mw_job_host(const mw_job_t *job, uint32_t rank);
/* The name of a rank's node ("" when unknown). */
const char *mw_job_node(const mw_job_t *job, uint32_t rank);
/* The node name a hello places its rank on: `node`, or the host for older senders. */
const char *mw_hello_node(const Mpiwatch__Hello *h);
/* A rank's time in MPI over the span of the windows it reported, 0..1 (-1 when none). */
double mw_job_rank_fraction(const mw_job_t *job, uint32_t rank);
const char *mw_end_name(mw_end_t end);

/* ---- the collector ------------------------------------------------------------------------ */

typedef struct {
    uint64_t accepted;
    uint64_t rejected[MW_REJECT_COUNT];
    uint64_t late;
    uint64_t windows;
    uint64_t partial_windows;
    uint64_t jobs;
    uint64_t auth_refused[MW_AUTH_COUNT]; /* connections refused with CURVE on, by reason */
    uint64_t capped[MW_CAP_COUNT];        /* parts of hellos over a job-wide cap, all jobs */
    mw_latency_t close_latency; /* window end on the global grid -> close (collector real time) */
    mw_latency_t close_wait;    /* last sample merged into the window -> close (monotonic) */
} mw_stats_t;

/* The live terminal view's state (live.c). */
#define MW_LIVE_EVENTS 4
#define MW_LIVE_EVENT_LEN 160
typedef struct {
    int enabled;
    int tty;
    FILE *out;
    uint64_t next_ns;              /* monotonic time of the next refresh */
    int lines_drawn;               /* lines of the block on screen, for redrawing in place */
    unsigned long log_mark;        /* mw__log_lines when the block was drawn */
    double recent_ns[MW_FN_COUNT]; /* decaying time per function over the last seconds */
    double last_fraction;
    uint32_t last_reporting;
    int have_window;
    /* The last few rule / steer / action_exit events as shown (mw_live_event): a ring of
     * MW_LIVE_EVENTS lines, n_events taken since the job started. Windows are shown counted
     * from the job's first closed window. */
    char events[MW_LIVE_EVENTS][MW_LIVE_EVENT_LEN];
    unsigned n_events;
    int have_first;
    uint64_t first_index, last_index;
} mw_live_t;

/* Scratch of the wire encoders (window_pb.c): grown, never shrunk, reused for every window. */
typedef struct {
    Mpiwatch__FunctionStat *fn;
    Mpiwatch__FunctionStat **fn_ptr;
    uint32_t *hist;
    uint32_t *occ_fn, *occ_sub;
    uint64_t *occ_ns;
    uint32_t *d_fn, *d_bin, *d_end;
    int32_t *d_sub;
    uint64_t *d_count;
    uint32_t *p_src, *p_dst;
    uint64_t *p_msg, *p_bytes;
    Mpiwatch__Call *call;
    Mpiwatch__Call **call_ptr;
    Mpiwatch__RankInfo *rank;
    Mpiwatch__RankInfo **rank_ptr;
    uint8_t *out; /* the last encoding */
    size_t cap_fn, cap_fn_ptr, cap_hist, cap_occ_fn, cap_occ_sub, cap_occ_ns, cap_d_fn,
        cap_d_bin, cap_d_end, cap_d_sub, cap_d_count, cap_p_src, cap_p_dst, cap_p_msg,
        cap_p_bytes, cap_call, cap_call_ptr, cap_rank, cap_rank_ptr, cap_out;
} mw_pb_encoder_t;

/* Encodes a closed window as a Mpiwatch__Window into e->out. Returns its length, or 0 when
 * out of memory. */
size_t mw__window_pack(mw_pb_encoder_t *e, const mw_window_t *w, uint64_t closed_real_ns);
/* Encodes the job as a Mpiwatch__JobInfo into e->out. Returns its length, or 0. */
size_t mw__jobinfo_pack(mw_pb_encoder_t *e, const mw_job_t *job, uint64_t function_table_hash);
void mw__pb_encoder_free(mw_pb_encoder_t *e);
/* "running", or how the job ended. */
const char *mw_job_state_name(const mw_job_t *job);

typedef struct mw_record mw_record_t; /* record_file.c */
typedef struct mw_feed mw_feed_t;     /* feed.c */

typedef struct mw_collector {
    const mw_options_t *opt;
    mw_arena_t arena;
    mw_job_t job;
    mw_merge_t merge;
    int merge_ready;
    uint64_t replay_window_refused; /* recorded window changes replay refused (record_file.c) */
    mw_stats_t stats;
    mw_live_t live;
    int outputs_written;           /* the current job's report and summary have been written */
    int exit_requested;            /* --exit-after-job and the job has ended */
    uint32_t fn_seen[MW_FN_COUNT]; /* validation scratch: fn_seen[fn] == gen, seen in sample */
    uint32_t fn_seen_gen;
    mw_window_fn on_window; /* extra consumer of closed windows (tests, later outputs) */
    void *on_window_user;
    mw_clock_t now;          /* the clock of the event being handled (frame, tick, finish) */
    mw_pb_encoder_t enc;     /* encodes each closed window once for the consumers below */
    mw_record_t *record;     /* --record: the recording being written, or NULL */
    mw_feed_t *feed;         /* --publish / --history, or NULL */
    uint32_t job_published_hellos; /* job.hellos when the job description was last sent */
    struct mw_steps *steps;        /* per-step assembly of the current job (steps.c) */
    struct mw_steer *steer;        /* --steer / --control sockets, or NULL (steer.c) */
    struct mw_rules *rules;        /* --rules: the rule set (rules.c), or NULL */
    struct mw_auth *auth;          /* --curve-secret: the ZAP handler and monitors, or NULL */
} mw_collector_t;

/* Prepares a collector (allocates the decoding arena). Returns 0, or -1 with a message. */
int mw_collector_init(mw_collector_t *c, const mw_options_t *opt);
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

/* Validates and applies a decoded envelope (ingest.c). */
mw_reject_t mw__ingest(mw_collector_t *c, const Mpiwatch__Envelope *env, const mw_clock_t *now);
/* Records and publishes a job event (kind "rule", "action_exit", ...) (collector.c). */
void mw__collector_event(mw_collector_t *c, const char *kind, const char *detail);
/* Starts a job for `env`'s hello, resetting the previous one (collector.c). Returns 0, or -1. */
int mw__collector_job_begin(mw_collector_t *c, const Mpiwatch__Envelope *env, uint64_t now_ns);

/* ---- outputs ------------------------------------------------------------------------------ */

/* Writes the summary JSON (atomically, mw__write_file). Returns 0, or -1 with a log message. */
int mw_summary_write(const mw_collector_t *c, const char *path);
/* The summary as a string (caller frees), or NULL. */
char *mw_summary_json(const mw_collector_t *c);
int mw_stats_write(const mw_collector_t *c, const char *path);
char *mw_stats_json(const mw_collector_t *c);
/* Writes the end-of-run report. */
void mw_report_write(const mw_collector_t *c, FILE *out);
/* Writes `path` atomically and durably (proto/mw_file.h: a fresh temporary file, fsync, rename;
 * a symbolic link at path is replaced, not followed). Returns 0, or -1 logged. */
int mw__write_file(const char *path, const char *text);

void mw_live_init(mw_live_t *live, FILE *out, int enabled);
void mw_live_window(mw_live_t *live, const mw_window_t *w);
/* Takes a job event (mw__collector_event): rule, steer and action_exit events are kept for
 * the block and, when stderr is not a terminal, printed at once on a line of their own. */
void mw_live_event(mw_live_t *live, const char *kind, const char *detail);
/* Redraws when due; returns the monotonic time of the next refresh (UINT64_MAX: never). */
uint64_t mw_live_tick(mw_live_t *live, const mw_collector_t *c, uint64_t now_ns);
/* Forgets the block on screen so that what follows is not overwritten (before the report). */
void mw_live_release(mw_live_t *live);
/* The view's text for the current state; `block` selects the multi-line form. */
size_t mw_live_format(const mw_live_t *live, const mw_collector_t *c, int block, char *buf,
                      size_t len);

/* zmq_setsockopt of an int option; a failure is logged with the option's name. Returns 0/-1. */
int mw__zmq_setopt_int(void *sock, int opt, int val, const char *name);
/* The options of a socket the collector serves clients on (feed.c, steer.c). */
typedef struct {
    int linger_ms;
    int sndhwm;
    int rcvhwm; /* ROUTER only */
    int64_t maxmsg;
} mw_serve_opts_t;
/* A PUB or ROUTER socket with those options, refusing unversioned ZMTP peers, bound to `ep`
 * (`what` names it in messages). Returns NULL with a logged message. */
void *mw__zmq_serve_socket(void *ctx, int type, const char *ep, const char *what,
                           const mw_serve_opts_t *o);

/* ---- security of the sockets (auth.c; docs/security.md) ---------------------------------- */

typedef struct mw_auth mw_auth_t;

/* 1 when a ZeroMQ endpoint is reachable from this host only: ipc://PATH, inproc://, or tcp:// on
 * 127.0.0.0/8, ::1 (also as ::ffff:127.x.x.x), or localhost when it resolves to loopback
 * addresses only. An abstract ipc://@name (no permissions: any local user connects), a
 * wildcard (*, 0.0.0.0, ::), an interface name, any other address or transport is not local
 * (0). */
int mw__endpoint_local(const char *ep);
/* The start-up policy (called by mw_options_check): --curve-secret and --curve-clients go
 * together and their files must load; without them every endpoint the collector binds must
 * be local unless --allow-insecure. Returns 0, or -1 with a message naming the endpoint or
 * file and the fix. */
int mw__auth_check(const mw_options_t *o, char *err, size_t errlen);
/* With --curve-secret: loads the keys and binds the ZAP handler in `zmq_ctx`, before any
 * socket is bound. Returns NULL with a logged message. Without it: returns NULL, no error. */
mw_auth_t *mw__auth_open(void *zmq_ctx, const mw_options_t *opt);
/* Closes the handler and the monitors (after every served socket is closed). */
void mw__auth_close(mw_auth_t *a);
/* Sets up a socket the collector binds, before zmq_bind: with CURVE on in its context a CURVE
 * server whose handshakes go to the ZAP handler and are watched for failures; otherwise the
 * ZAP domain that refuses ZMTP/1.0 peers, and a warning for each endpoint that is not local
 * (--allow-insecure). `what` names the socket in messages. Returns 0, or -1 logged. */
int mw__auth_socket(void *zmq_ctx, void *sock, const char *what, const char *const *eps,
                    unsigned n_eps);
/* Adds the handler's and monitors' sockets to a poll set; returns how many (at most max). */
int mw__auth_pollitems(mw_auth_t *a, zmq_pollitem_t *items, int max);
/* Answers pending ZAP requests and reads the monitors without blocking, counting refusals in
 * c->stats.auth_refused (logged, at most one line a second). */
void mw__auth_serve(mw_collector_t *c);

/* ---- SIGINT/SIGTERM for the zmq_poll loops (signals.c) ------------------------------------ */

/* Installs the handlers; returns the pipe's read end to poll, or -1 logged. */
int mw__signals_open(void);
/* Restores the default handlers and closes the pipe. */
void mw__signals_close(void);
/* Empties the pipe; returns 1 once SIGINT or SIGTERM has arrived. */
int mw__signals_read(void);
/* 1 once SIGINT or SIGTERM has arrived (without touching the pipe). */
int mw__signals_stopped(void);
/* 1 when SIGHUP (reload the rules) arrived since the last call; clears it. */
int mw__signals_reload(void);

/* ---- the recording (record_file.c; the file format is in docs/recording.md) --------------- */

/* Starts a recording into `path` (created or truncated); the first frame describes the
 * collector (`opt` gives the settings replay needs). Returns NULL with a logged message. */
mw_record_t *mw__record_open(const char *path, const mw_options_t *opt);
/* Flushes, writes the last index and closes; NULL is ignored. */
void mw__record_close(mw_record_t *r);
/* Each of these appends one frame. A write error (a full disk) is logged once, counted and
 * stops the recording; ingest goes on. */
void mw__record_frame(mw_record_t *r, const mw_clock_t *now, const void *data, size_t len,
                      int parts);
void mw__record_window(mw_record_t *r, const mw_clock_t *now, uint64_t index, const void *pb,
                       size_t len);
void mw__record_job(mw_record_t *r, const mw_clock_t *now, const void *pb, size_t len);
void mw__record_step(mw_record_t *r, const mw_clock_t *now, const void *pb, size_t len);
void mw__record_event(mw_record_t *r, const mw_clock_t *now, const char *kind, const char *job,
                      const char *detail);
void mw__record_tick(mw_record_t *r, const mw_clock_t *now);
void mw__record_finish(mw_record_t *r, const mw_clock_t *now);
/* Makes everything written so far readable by another reader of the file (history). */
void mw__record_flush(mw_record_t *r);
/* Bytes written so far, and whether the recording stopped on an error. */
uint64_t mw__record_bytes(const mw_record_t *r);
/* Records left out of the recording because they are over MW_REC_MAX_RECORD (64 MiB) or could
 * not be chunked for lack of memory: counted in the stats JSON and on the Prometheus page. */
uint64_t mw__record_too_large(const mw_record_t *r);
int mw__record_failed(const mw_record_t *r);
const char *mw__record_path(const mw_record_t *r);

/* ---- the live feed and history endpoint (feed.c) ------------------------------------------ */

/* Binds --publish and --history on `zmq_ctx` (either may be absent). Returns NULL with a
 * logged message. */
mw_feed_t *mw__feed_open(void *zmq_ctx, const mw_options_t *opt);
void mw__feed_close(mw_feed_t *f);
/* Publishes a closed window (the bytes of a Mpiwatch__Window) and keeps it in the history. */
void mw__feed_window(mw_feed_t *f, uint64_t index, const void *pb, size_t len);
/* Publishes the job description (a Mpiwatch__JobInfo) and an event. */
void mw__feed_job(mw_feed_t *f, const void *pb, size_t len);
/* Publishes a closed time step (the bytes of a Mpiwatch__Step) on topic "step". */
void mw__feed_step(mw_feed_t *f, const void *pb, size_t len);
void mw__feed_event(mw_feed_t *f, const char *kind, const char *job, const char *detail,
                    uint64_t real_ns);
/* Keeps an accepted sample (the envelope as received) for rank queries. */
void mw__feed_sample(mw_feed_t *f, uint32_t rank, uint64_t window, const void *data, size_t len);
/* The history socket for zmq_poll (NULL socket when there is none). */
void mw__feed_pollitem(mw_feed_t *f, zmq_pollitem_t *item);
/* Answers the pending history requests without blocking; `c` gives the recording for windows
 * no longer in memory. */
void mw__feed_serve(mw_feed_t *f, mw_collector_t *c);

/* Applies one record of a recording to the collector as the live collector applied it: a
 * received frame with its recorded clock, a tick, the finish on a signal; windows, jobs,
 * events and index frames are outputs and are skipped (the collector derives them again).
 * Returns 1 when the record was applied, 0 when skipped (record_file.c, in the core library,
 * so that replay and the exporters share it). */
int mw_collector_apply_record(mw_collector_t *c, const Mpiwatch__Record *rec);

/* ---- steering (steer.c; docs/steering.md) ------------------------------------------------ */

/* MW_STEER_MAX_KEY, _VALUE, _RANKS and _MESSAGE: proto/mw_proto.h (both ends agree). */
typedef struct mw_steer mw_steer_t;

/* Checks a key (1..64 of [A-Za-z0-9._-]), a value (at most 1024 bytes of UTF-8 without
 * control characters) and a rank list (each < job size when the job size is known). Returns 0,
 * or -1 with a message in err. */
int mw__steer_check(const mw_collector_t *c, const char *key, const char *value,
                    const uint32_t *ranks, size_t n_ranks, char *err, size_t errlen);
/* Validates and publishes one Steer message to the ranks (all of them when n_ranks is 0) on
 * --steer, and records it as a "steer" job event. Returns the sequence number (> 0), or -1
 * when rejected (counted) or when there is no steer socket. The rules engine calls this. */
int mw__steer_send(mw_collector_t *c, const char *key, const char *value, const uint32_t *ranks,
                   size_t n_ranks);
/* Binds --steer (PUB) and --control (ROUTER) on `zmq_ctx` (either may be absent). Returns
 * NULL with a logged message. */
mw_steer_t *mw__steer_open(void *zmq_ctx, const mw_options_t *opt);
void mw__steer_close(mw_steer_t *s);
/* The control socket for zmq_poll (NULL socket when there is none). */
void mw__steer_pollitem(mw_steer_t *s, zmq_pollitem_t *item);
/* Answers pending SteerRequests on --control without blocking (a bounded batch). */
void mw__steer_serve(mw_collector_t *c);
/* Steer requests rejected so far (bad key, value or ranks; undecodable). */
uint64_t mw__steer_rejected(const mw_collector_t *c);
/* mpiwatch.window requests refused (counted in steer_rejected too). */
uint64_t mw__steer_window_rejected(const mw_collector_t *c);
/* Records and publishes the job description (JobInfo) now. */
void mw__collector_publish_job(mw_collector_t *c);
/* Applies a recorded "window" event's grid change (replay). Returns 0, or -1. */
int mw__grid_apply_event(mw_collector_t *c, const char *detail);

/* ---- replay (replay.c, in the executable only) -------------------------------------------- */

/* Feeds --replay FILE through the collector with the recorded clocks, paced by --speed, and
 * serves the feed while doing so. Returns 0, or -1 with a logged message. */
int mw_replay_run(mw_collector_t *c);

/* ---- the socket loop (server.c, in the executable only) ----------------------------------- */

/* Binds the ingest socket and runs the zmq_poll loop until a signal or, with
 * --exit-after-job, the end of the job. Returns 0, or -1 with a logged message. */
int mw_server_run(mw_collector_t *c);

/* ---- the Prometheus endpoint (metrics.c, in the executable only) -------------------------- */

typedef struct mw_metrics mw_metrics_t;

/* Serves GET /metrics on 127.0.0.1:port from its own thread, starting with a snapshot of `c`.
 * Returns the endpoint, or NULL with a logged message. */
mw_metrics_t *mw_metrics_start(const mw_collector_t *c, unsigned port);
/* Called by the loop after every wakeup: republishes the snapshot when the counters changed
 * (at most every 500 ms, at once when the job has ended). Returns the milliseconds until a
 * pending change may be published (for the poll timeout), -1 when none is pending. */
long mw_metrics_update(mw_metrics_t *m, const mw_collector_t *c, uint64_t now_ns);
/* Stops the HTTP thread and frees everything; NULL is ignored. */
void mw_metrics_stop(mw_metrics_t *m);

#endif
