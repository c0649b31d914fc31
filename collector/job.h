/* job.h: the job (job.c): per-rank state, lifecycle, the exact cumulative
 * totals and the job-wide caps (docs/collector.md "Caps"). */
#ifndef MW_COLLECTOR_JOB_H
#define MW_COLLECTOR_JOB_H

#include <stdint.h>
#include "mw_grid.h"
#include "index.h"
#include "merge.h"
#include "mw_limits.h"
#include "mw_proto.h"
#include "regions.h"

/* What an accepted hello claimed beyond a job-wide cap (proto/mw_limits.h) and the collector
 * did not keep: the rank is in the job, without that part. */
#define MW_CAP_REASONS(X)                                                                          \
    X(PUS, "pus")           /* a PU list over MW_JOB_MAX_PUS: the rank keeps none */               \
    X(OBJECTS, "objects")   /* a node's hardware over MW_JOB_MAX_TOPO_OBJECTS: none kept */        \
    X(NAMES, "names")       /* a host or node name over MW_JOB_MAX_NAMES or _NAME_BYTES */         \
    X(JOB_INFO, "job_info") /* a rank that would take the job description over                     \
                               MW_JOB_MAX_INFO_BYTES: left out of it (still in the totals) */

typedef enum {
#define MW_X(id, name) MW_CAP_##id,
    MW_CAP_REASONS(MW_X)
#undef MW_X
        MW_CAP_COUNT
} mw_cap_reason_t;

const char *mw__cap_reason_name(mw_cap_reason_t reason);

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
    uint64_t bytes;              /* merged, as calls and mpi_time_ns are */
    uint32_t rank_fn_first;      /* position + 1 of its block of entries in job.rank_fn (0: none) */
    uint32_t pairs_first;        /* ... in job.pairs */
    uint32_t rank_fn_n, pairs_n; /* entries in those blocks (job.c) */
    /* Placement (docs/topology.md): node index into job.nodes, L3 and NUMA logical indices
     * (-1 unknown), and its PUs at job.pus[pus_first, pus_first + pus_n). */
    uint32_t node;
    int32_t l3, numa;
    uint8_t bound;
    uint8_t in_info;  /* its RankInfo is in the job description (job.c, MW_CAP_JOB_INFO) */
    uint8_t fn_table; /* its function table (ingest.c): index + 1 in the tables seen, 0 none */
    uint32_t pus_first, pus_n;
    /* Tracing (trace_check.c): windows it was exact in, the calls those traced, and the
     * communicator definitions it sent (capped per job: MW_TRACE_MAX_COMMS_RANK). */
    uint64_t traced_windows, traced_calls;
    uint32_t comms;
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
    mw_grid_t grid;     /* the window grid: window_ns, then mpiwatch.window changes (mw_grid.h) */
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

    mw_fn_total_t fn[MW_FN_SPACE];
    mw__index_t rank_fn; /* list of mw_rank_fn_t, keys (rank << 32 | fn), see job.c */
    mw__index_t pairs;   /* list of mw_pair_sum_t, keys (src << 32 | dst) */
    mw__index_t rank_fn_late, pairs_late; /* key -> position, for entries outside rank blocks */
    uint64_t overflow;                    /* per-rank function or pair totals that did not fit */
    uint64_t fn_unknown; /* entries left out: their function has no id here (extras full) */
    int fn_table_warned; /* a hello's function table was refused (logged once per job) */
    /* Loss accounting over the ranks that send running totals: the sum of their latest totals
     * (at_ranks) and of what was merged from them (merged); missed = at_ranks - merged. */
    mw_tally_t at_ranks, merged;
    /* Dormant mode (dormant.c): the ranks' dormant totals and spans; NULL until one reports. */
    struct mw_dormant *dormant;
    /* Aggregators (aggstate.c): their latest AggState and what was merged from each; NULL
     * until one reports (or, in an aggregator, until it sent a partial). */
    struct mw_aggs *aggs;

    uint64_t samples;
    uint64_t late;
    uint64_t windows; /* merged windows closed */
    uint64_t partial_windows;
    int64_t min_window, max_window; /* -1 before the first sample */
    uint64_t max_clock_error_ns;

    /* Code regions and call sites: the job-wide tables, each rank's ids, the job totals. */
    mw__rs_t rs;
    uint64_t rs_published_gen; /* rs.gen when the job description was last sent */
    uint64_t rs_published_window, rs_published_bytes; /* job.windows and info_bytes then */

    uint64_t started_ns;       /* collector monotonic time of the first hello */
    uint64_t last_activity_ns; /* ... of the last accepted message */
    uint64_t ended_ns;
} mw_job_t;

/* Starts a job from its first hello (allocates per-rank state). Returns 0, or -1. */
int mw__job_begin(mw_job_t *job, const Mpiwatch__Envelope *env, uint64_t now_ns);
void mw__job_free(mw_job_t *job);
/* Charges `bytes` to the job description's budget (MW_JOB_MAX_INFO_BYTES): 1 when they fit
 * (charged), 0 otherwise; `job` is a mw_job_t (an mw_rs_charge_fn, regions.c). */
int mw__job_info_charge(void *job, uint64_t bytes);
/* 1 when the rank said hello for the first time in the job, 0 when it said it again (a
 * reconnection: only the node's hardware may be new). */
int mw__job_hello(mw_job_t *job, const Mpiwatch__Envelope *env, uint64_t now_ns);
/* One rank's figures of a window merged from an aggregator's partial (partial.c): its
 * functions (job ids) and the peers it sent to, added to its per-rank tables and totals as
 * mw__job_sample adds a sample's. */
typedef struct {
    const uint32_t *fn;
    const uint64_t *count, *ns, *bytes;
    size_t n_fn;
    const uint32_t *peer;
    const uint64_t *messages, *peer_bytes;
    size_t n_peer;
} mw_job_entries_t;
void mw__job_rank_entries(mw_job_t *job, uint32_t rank, const mw_job_entries_t *e);
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
 * without totals count as merged with nothing missed). `per_fn` (MW_FN_SPACE entries, or NULL)
 * gets the missed part per function. */
typedef struct {
    mw_tally_t at_ranks, merged, missed;
    uint32_t ranks_missing;   /* ranks with something missed */
    uint32_t ranks_not_final; /* ranks with totals but no bye: totals as of their last sample */
    uint32_t ranks_no_totals; /* ranks that said hello but sent no totals */
    /* Through aggregators (aggstate.h): their ranks' totals are in at_ranks, what was merged
     * from their partials in merged; their part of missed by hop. */
    uint32_t aggregators;
    mw_tally_t missed_to_aggs;   /* between their ranks and them (their totals - their sent) */
    mw_tally_t missed_from_aggs; /* between them and this collector (their sent - merged) */
} mw_loss_t;
void mw__job_loss(const mw_job_t *job, mw_loss_t *out, mw_tally_t *per_fn);
/* The summary's "dropped": rank-side dropped samples plus dropped records, all ranks. */
uint64_t mw__job_dropped(const mw_job_t *job);
const char *mw_job_host(const mw_job_t *job, uint32_t rank);
/* The name of a rank's node ("" when unknown). */
const char *mw__job_node(const mw_job_t *job, uint32_t rank);
/* The node name a hello places its rank on: `node`, or the host for older senders. */
const char *mw__hello_node(const Mpiwatch__Hello *h);
/* A rank's time in MPI over the span of the windows it reported, 0..1 (-1 when none). */
double mw__job_rank_fraction(const mw_job_t *job, uint32_t rank);
/* Windows first..last (first == last: one) as the collector's log lines name them: numbered
 * from the job's first window (job.min_window), with the time of first's start after that
 * window's start and the grid indices for debugging, "3..5 (t+0.300 s; grid K..K+2)"; the grid
 * indices alone before the job has a first window. Returns buf. */
const char *mw__job_windows_label(const mw_job_t *job, uint64_t first, uint64_t last, char *buf,
                                  size_t len);
const char *mw__end_name(mw_end_t end);

/* "running", or how the job ended. */
const char *mw__job_state_name(const mw_job_t *job);

#endif
