/* merge.h: merged windows, the collector's unit of output, and the ring that builds them.
 *
 * A rank sends one Sample per window of the global grid (window k covers global time
 * [k * window_ns, (k + 1) * window_ns), or its place on the job's grid after an
 * mpiwatch.window change: proto/mw_grid.h; each window carries its own start and length).
 * The merge adds every accepted sample into the open window of the same index and closes
 * windows strictly in index order, each exactly once, when every expected rank has reported it or
 * when its lateness deadline has passed. A closed window is handed to a callback as an
 * `mw_window_t`; that struct is what later outputs (the PUB socket for viewers, the recording file,
 * exports, rules) consume, so it is described here in full. It is only valid during the callback.
 */
#ifndef MW_COLLECTOR_MERGE_H
#define MW_COLLECTOR_MERGE_H

#include <stdint.h>

#include "mw_grid.h"
#include "index.h"
#include "mw_proto.h"
#include "regions.h"

#define MW_MERGE_LONGEST 32u            /* longest calls kept per merged window */
#define MW_MERGE_RANK_PM_MAX 131072u    /* jobs up to this size get per-rank MPI shares */
#define MW_RANK_PM_NONE 65535u          /* the rank's sample is not in the window */
#define MW_MERGE_RING_MIN 16u           /* open windows kept at least ... */
#define MW_MERGE_RING_MAX 256u          /* ... and at most (power of two) */
#define MW_MERGE_MAX_DENSITY (1u << 20) /* density cells per window */
#define MW_MERGE_MAX_PAIRS (1u << 22)   /* communicating pairs per window */
#define MW_MERGE_MAX_AGGS 4096u         /* aggregator ids a merge waits for (partial.h) */
#define MW_MERGE_HOLD_SLACK 8u          /* ring slots a window waiting for an aggregator leaves */
#define MW_MERGE_AGG_BEAT_NS 1000000000ull /* an aggregator's AggState period (upstream.c) */

/* Totals of one function: calls, time, extremes, bytes. min/max are meaningful only when
 * count > 0. */
typedef struct {
    uint64_t count;
    uint64_t total_ns;
    uint64_t min_ns;
    uint64_t max_ns;
    uint64_t bytes;
} mw_fn_stats_t;

/* Adds one rank's figures for one window to a total (a window's sum or the job's totals).
 * Inline: it runs twice per function summary. */
static inline void mw__fn_stats_add(mw_fn_stats_t *t, const Mpiwatch__FunctionStat *f)
{
    if (f->count) {
        if (t->count == 0 || f->min_ns < t->min_ns)
            t->min_ns = f->min_ns;
        if (f->max_ns > t->max_ns)
            t->max_ns = f->max_ns;
    }
    t->count += f->count;
    t->total_ns += f->total_ns;
    t->bytes += f->bytes;
}

/* An unsigned 128-bit integer (a GCC and Clang extension): sums of squared nanoseconds. */
__extension__ typedef unsigned __int128 mw_u128_t;

/* One function summed over the ranks that reported a window. */
typedef struct {
    mw_fn_stats_t s;
    uint64_t hist[MW_MAX_DURATION_BINS]; /* hist[b]: calls in duration bin b (mw_bins.h) */
    /* The spread across ranks of each rank's total_ns (FunctionStat.rank_sd_ns), from exact
     * integer moments over the ranks that reported the function: their number, the sum of
     * their total_ns and the sum of its squares (both saturating). Sums of integers do not
     * depend on the order or grouping in which ranks are added, so a window merged from
     * partials (partial.c) has the same spread, to the bit, as one merged from samples; the
     * reporting ranks without the function join as zeros at close (merge.c). */
    uint32_t ranks;
    uint64_t sum_ns;
    mw_u128_t sq;
    double sd_ns;         /* set at close */
    uint32_t rank_max;    /* the rank with the largest total_ns (the lowest of equals) ... */
    uint64_t rank_max_ns; /* ... and that total */
} mw_fn_sum_t;

/* A region summed over the ranks of a window (RegionStat), by job-wide id. */
typedef struct {
    uint32_t region, ranks;
    uint64_t count, incl_ns, excl_ns, mpi_ns;
} mw_region_sum_t;

/* A (call site, function) summed over the ranks of a window (SiteStat). */
typedef struct {
    uint32_t site, fn, ranks, top_rank;
    uint64_t count, ns, bytes, max_ns, top_rank_ns;
} mw_site_sum_t;

/* One rank's figures of one function (Window.rf_*) or region (Window.rr_*). */
typedef struct {
    uint32_t rank, fn;
    uint64_t count, ns, bytes;
} mw_rank_fn_entry_t;

typedef struct {
    uint32_t rank, region;
    uint64_t count, incl_ns, excl_ns, mpi_ns;
} mw_rank_region_entry_t;

/* Where one rank's entries are in rf / rr (one block per reporting rank, sorted at close). */
typedef struct {
    uint32_t rank;
    uint32_t rf_off, rf_n, rr_off, rr_n;
} mw_rank_block_t;

/* Point-to-point traffic from src to dst by one sending function (Window.fpair_*). */
typedef struct {
    uint32_t src, dst, fn;
    uint64_t messages, bytes;
} mw_fpair_sum_t;

/* Point-to-point traffic from world rank src to world rank dst. */
typedef struct {
    uint32_t src;
    uint32_t dst;
    uint64_t messages;
    uint64_t bytes;
} mw_pair_sum_t;

/* Adds messages and bytes from src to dst to a pair entry (fresh when `created`). */
static inline void mw__pair_add(mw_pair_sum_t *p, int created, uint32_t src, uint32_t dst,
                                uint64_t messages, uint64_t bytes)
{
    if (created) {
        p->src = src;
        p->dst = dst;
    }
    p->messages += messages;
    p->bytes += bytes;
}

/* Calls of function fn whose start (end = 0) or end (end = 1) fell in sub-slot `sub` of the
 * window (negative: a start in an earlier window) with log2 duration bin `bin`. */
typedef struct {
    uint32_t fn;
    int32_t sub;
    uint32_t bin;
    uint32_t end;
    uint64_t count;
} mw_density_cell_t;

/* A rank merged into a window and its occupancy share of it in thousandths. */
typedef struct {
    uint32_t rank, pm;
} mw_rank_share_t;

/* One explicitly recorded long call. */
typedef struct {
    uint32_t rank;
    uint32_t fn;
    int32_t peer;      /* world rank, -1 none */
    uint64_t start_ns; /* global time */
    uint64_t duration_ns;
    uint64_t bytes;
} mw_merge_call_t;

/* Per-call traces (docs/trace.md): caps on what one window and the open windows together keep
 * of the ranks' encoded records (the window is recorded as one Record, at most 64 MiB). */
#define MW_TRACE_WINDOW_MAX_BYTES (32u << 20) /* records of one window, all ranks */
#define MW_TRACE_OPEN_MAX_BYTES (128u << 20)  /* records of every open window together */
#define MW_TRACE_WINDOW_MAX_COMMS 65536u      /* communicator definitions of one window */
#define MW_TRACE_LEFT_OUT_MAX (1ull << 40)    /* calls a late summary-only trace may claim */

/* One rank's trace of one window as the window keeps it: the Trace fields as they arrived
 * (state and reason as the collector kept them: a refused or demoted trace is summary only,
 * reason MW_TRACE_WHY_REFUSED) and its records, untouched, at tbytes[off, off + len). */
typedef struct {
    uint32_t rank, state, reason, count, encoding, threads, flags;
    uint32_t seq; /* arrival order in the window: of two entries of one rank the exact one, else
                     the later one, is kept (a reach-back trace after the sample's) */
    uint64_t window, left_out, raw_bytes, window_start_ns, capture;
    uint64_t calls; /* timed calls it traced (the collector's count) */
    uint64_t off, len;
    uint64_t frame_off; /* recording offset of the frame that brought the records, 0 none */
} mw_rank_trace_t;

/* A communicator definition that arrived with a sample (CommDef), and its sender. */
typedef struct {
    uint64_t id, parent, created_ns;
    uint32_t fn, rank, size, flags, remote_size;
    uint32_t world_rank;
} mw_comm_def_t;

/* A checked trace on its way into a window (ingest.c, trace_check.c). */
typedef struct {
    const Mpiwatch__Trace *t;        /* as received; NULL: the sample had none */
    uint32_t state, reason;          /* as kept */
    int keep_records;                /* the records go into the window */
    uint64_t calls;                  /* timed calls traced */
    uint64_t left_out;               /* timed calls of the window not traced */
    Mpiwatch__CommDef *const *comms; /* accepted definitions (sample path) */
    size_t n_comms;
} mw_trace_in_t;

/* A merged window. Fractions are left to the reader because they need the divisor that fits
 * the question asked:
 *   fraction of ranks inside fn during sub-slot s = occ_ns[fn * subslots + s]
 *                                                 / (window_ns / subslots * ranks_reporting)
 *   MPI time fraction = mpi_time_ns / (window_ns * ranks_reporting)   (also in mpi_fraction)
 *                     or, by occupancy, occ_total_ns / (window_ns * ranks_reporting) */
typedef struct {
    uint64_t index;     /* k: the window covers [start_ns, start_ns + window_ns) global ns */
    uint64_t window_ns; /* its own length: the grid can change mid-job (mw_grid.h) */
    uint64_t start_ns;
    uint32_t subslots;
    uint32_t duration_bins;
    uint32_t ranks_reporting; /* ranks whose sample for this window was merged */
    uint32_t ranks_missing;   /* expected ranks that had not reported it when it closed */
    uint64_t mpi_time_ns;     /* sum of total_ns over functions and ranks */
    double mpi_fraction;      /* mpi_time_ns / (window_ns * ranks_reporting); 0 if none */
    /* mpi_time_ns counts a call in the window where it ends, so a long call can push
     * mpi_fraction above 1; occupancy splits calls across windows, which keeps this one a
     * true share of the window (per thread): sum of occ_ns / (window_ns * ranks_reporting). */
    uint64_t occ_total_ns;
    double occ_fraction;
    /* Losses reported by the ranks in this window's samples. */
    uint64_t records_dropped; /* entries of the window a rank could not record in full */
    uint64_t samples_dropped; /* increase of the ranks' dropped-sample counters */
    uint64_t calls_late;      /* calls that ended in an earlier, already sent window */
    uint64_t overflow;        /* density cells or pairs lost because a table was full */

    mw_fn_sum_t *fn;   /* [MW_FN_SPACE], dense by function id; zero where unused */
    uint32_t *fn_used; /* ids that have data (stats or occupancy), in first-seen order */
    uint32_t n_fn_used;
    uint64_t *occ_ns; /* [MW_FN_SPACE * subslots]: ns inside fn during each sub-slot, all ranks */
    mw_merge_call_t *longest; /* the longest calls across ranks, longest first */
    uint32_t n_longest;
    mw__index_t density; /* values: mw_density_cell_t, see MW__INDEX_AT */
    mw__index_t pairs;   /* values: mw_pair_sum_t, one per (src, dst); a list (index.h): read
                            it in order, it cannot be looked up by key */
    uint32_t *rank_pm;   /* [n_rank_pm]: each rank's occupancy share of the window in thousandths,
                            MW_RANK_PM_NONE without its sample; NULL for jobs above
                            MW_MERGE_RANK_PM_MAX ranks */
    uint32_t n_rank_pm;

    /* Per-call traces (docs/trace.md): one entry per rank whose sample (or a later reach-back
     * trace) carried a Trace, in rank order once closed; their records in tbytes. */
    mw_rank_trace_t *traces;
    uint32_t n_traces, cap_traces;
    mw__index_t trace_slot; /* open window: rank -> its entry in traces (one per rank) */
    uint8_t *tbytes;
    size_t tbytes_len, tbytes_cap;
    mw_comm_def_t *comms; /* in arrival order */
    uint32_t n_comms, cap_comms;
    uint32_t traced_ranks;   /* entries with state exact (set at close) */
    uint64_t trace_left_out; /* timed calls of the entries not traced (set at close) */
    uint32_t trace_deferred; /* entries deferred (traced, records to come; set at close) */
    uint64_t traced_calls;   /* timed calls of the exact entries (set at close) */
    uint64_t comms_dropped;  /* definitions over MW_TRACE_WINDOW_MAX_COMMS */

    /* Code regions and call sites (docs/regions.md, docs/callsites.md), by job-wide id. */
    mw__index_t regions;                     /* values mw_region_sum_t, key region id */
    mw__index_t sites;                       /* values mw_site_sum_t, key site << 32 | fn */
    uint64_t regions_dropped, sites_dropped; /* the ranks' own counts */
    /* Per rank detail (the terrain): one block per reporting rank, in rank order once closed;
     * entries over MW_WINDOW_MAX_RANK_ENTRIES (each of rf, rr) or with the detail off are
     * counted in rank_detail_left_out. */
    mw_rank_fn_entry_t *rf;
    uint32_t n_rf, cap_rf;
    mw_rank_region_entry_t *rr;
    uint32_t n_rr, cap_rr;
    mw_rank_block_t *blocks;
    uint32_t n_blocks, cap_blocks;
    uint64_t rank_detail_left_out;
    mw__index_t fpairs; /* list of mw_fpair_sum_t (samples with peer_fn), at most
                           MW_WINDOW_MAX_FPAIRS; more count in overflow */

    /* The ranks merged into it (a sample's rank, or each rank a partial listed) with their MPI
     * share (as rank_pm, kept whatever the job's size), in arrival order: what an aggregator's
     * partial lists (partial.c sorts a copy). */
    mw_rank_share_t *rep;
    uint32_t n_rep, cap_rep;

    /* Merge bookkeeping. */
    uint64_t first_arrival_ns; /* collector monotonic time of the first sample */
    uint64_t last_arrival_ns;  /* ... and of the last one merged */
    unsigned char *fn_mark;    /* [MW_FN_SPACE]: 1 when listed in fn_used */
    int open;
} mw_window_t;

/* A histogram of durations (window close latency) from which quantiles are read: 16 exact
 * buckets for 0..15 ns, then 8 per octave, so a quantile is known within 1/8 of its value
 * whatever its scale, in fixed memory and O(1) per value. */
#define MW_LATENCY_BUCKETS 496u
typedef struct {
    uint64_t count;
    uint64_t max_ns;
    uint64_t bucket[MW_LATENCY_BUCKETS];
} mw_latency_t;

void mw__latency_add(mw_latency_t *h, uint64_t ns);
/* The q-quantile (0 < q <= 1) in ns, rounded up to the top of its bucket (never above the
 * largest value added): "at most this". 0 when the histogram is empty. */
uint64_t mw__latency_quantile(const mw_latency_t *h, double q);

/* Called once per closed window, in index order. */
typedef void (*mw_window_fn)(const mw_window_t *w, void *user);

typedef struct {
    uint32_t size;         /* ranks of the job */
    uint64_t window_ns;    /* the first length; the ring was sized for it */
    const mw_grid_t *grid; /* the job's grid (NULL: one segment of window_ns) */
    uint64_t lateness_ns;
    uint32_t subslots;
    uint32_t duration_bins;

    mw_window_t *ring; /* [cap], window k lives in ring[k & mask] */
    uint32_t *at;      /* [cap]: expected ranks whose last window is that slot's window */
    uint32_t cap;
    uint32_t mask;

    int64_t *last;           /* [size]: last window index each rank sent, -1 none */
    uint32_t *peer_gen;      /* [size]: pair_gen when the peer was last seen in a sample ... */
    uint32_t *peer_pos;      /* ... and the position of (rank, peer) in the window's pairs */
    uint32_t pair_gen;       /* one per merged sample */
    unsigned char *expected; /* [size]: 1 until the rank says bye or is declared dead */
    uint64_t behind;         /* expected ranks whose last window is before head */

    int started;      /* a sample has been merged; head and max_seen are valid */
    int frozen;       /* head may no longer move back (a window closed or a sample was late) */
    int64_t head;     /* oldest window not yet closed */
    int64_t max_seen; /* newest window that received data */

    uint64_t closed;           /* windows closed with data */
    uint64_t partial;          /* ... of which with ranks missing */
    uint64_t late;             /* samples for windows already closed */
    uint64_t evicted;          /* windows closed early to make room in the ring */
    uint64_t trace_open_bytes; /* tbytes_len of the open windows (MW_TRACE_OPEN_MAX_BYTES) */
    uint64_t frame_off;        /* recording offset of the frame being ingested, 0 none */
    /* The region and call-site entries of the sample being added, in job ids (regions.c):
     * set by ingest around mw__merge_add(), NULL when it has none (a direct call in a test). */
    const mw_rs_in_t *rs_in;
    int no_rank_detail;     /* --rank-detail off: rf_* / rr_* left out (counted) */
    mw__index_t fpair_seen; /* scratch of one sample: peer << 32 | fn -> position in fpairs */

    /* Waiting for aggregators (docs/aggregator.md "When a parent closes a window"): each
     * aggregator that sent a partial in the job, by id, with the newest window it sent, when,
     * and how many expected ranks it listed last; allocated at the first partial. */
    struct mw_merge_agg *aggs; /* [MW_MERGE_MAX_AGGS] */
    uint16_t *via;             /* [size]: 1 + id of the aggregator that listed the rank, 0 */
    uint16_t *agg_ids;         /* [MW_MERGE_MAX_AGGS]: the ids seen, in order ... */
    uint32_t n_aggs;           /* ... and their number */
    uint64_t agg_wait_ns;      /* how long past its deadline a window waits for them */
    uint64_t agg_silent_ns;    /* one silent this long is not waited for (gone) */
    uint64_t now_ns;           /* time of the latest add or tick */
    uint64_t agg_waited;       /* windows closed complete after their lateness deadline */
    uint64_t agg_given_up;     /* windows closed while an aggregator still owed its partial */
    uint64_t agg_owed;         /* ... one per such aggregator and window */

    mw_window_fn on_close;
    void *user;
} mw_merge_t;

/* Prepares a merge for `size` ranks on the given grid. Every rank starts expected: a window
 * waits for ranks whose hello has not arrived yet (until its deadline), so the first window
 * does not close as soon as the first rank reports it. Returns 0, or -1 when out of memory. */
int mw__merge_init(mw_merge_t *m, uint32_t size, uint64_t window_ns, uint32_t subslots,
                   uint32_t duration_bins, uint64_t lateness_ns, mw_window_fn on_close, void *user);
void mw__merge_free(mw_merge_t *m);
/* The shortest window length the ring sized at init still holds (lateness / L + 8 windows). */
uint64_t mw__merge_min_window_ns(const mw_merge_t *m);

/* Last window index `rank` sent, or -1. */
int64_t mw__merge_last_window(const mw_merge_t *m, uint32_t rank);
/* The (lower) median over the ranks that sent a sample of the last window each sent, or -1:
 * the job's progress as most ranks see it, which one rank or a few forged samples cannot move
 * (steer.c places the K of mpiwatch.window from it). O(size) time and a temporary array. */
int64_t mw__merge_median_last(const mw_merge_t *m);

/* Merges a validated sample of `rank` (its window must be after the rank's last one).
 * `samples_dropped` is the increase of the rank's dropped-sample counter it reports. Returns 0
 * when merged, 1 when the window had already closed (the sample is late: it is not merged into
 * any window, but the rank's progress is recorded). */
int mw__merge_add(mw_merge_t *m, uint32_t rank, const Mpiwatch__Sample *s, uint64_t samples_dropped,
                  uint64_t now_ns, const mw_trace_in_t *trace);

/* Whether `len` more bytes of trace records fit window `window` (open or about to be) and the
 * open windows' cap. */
int mw__merge_trace_room(const mw_merge_t *m, uint64_t window, size_t len);
/* 1 when `rank` already has an exact trace in window `window` (open): a window keeps one entry
 * per rank, so a second exact trace is refused (trace_check.c). */
int mw__merge_trace_exact(const mw_merge_t *m, uint64_t window, uint32_t rank);
/* Adds a trace that came after its sample (Envelope.trace) to window `window` if it is open.
 * Returns 0 when added, 1 when the window is not open (closed, or never had data), -1 when
 * out of memory or over a cap. */
int mw__merge_trace_add(mw_merge_t *m, uint32_t rank, uint64_t window, const mw_trace_in_t *in);

/* A checked partial window (partial.c) in the parent's ids: window `pw` (its functions,
 * occupancy, density, pairs, per-function pairs, longest calls, per-rank detail, regions,
 * sites, traces and communicators already translated and bounded), the ranks it merged as
 * sorted, disjoint ranges that are all after each rank's last window, their MPI shares in
 * list order, and the aggregator's first-seen function order. */
typedef struct {
    const Mpiwatch__Window *pw;
    const uint32_t *rank_first, *rank_count;
    size_t n_ranges;
    uint32_t n_ranks; /* sum of rank_count */
    const uint32_t *rank_pm;
    size_t n_rank_pm;
    const uint32_t *fn_order;
    size_t n_fn_order;
    const mw_trace_in_t *traces; /* [pw->n_traces]: each checked (trace_check.c) */
    uint32_t from; /* 1 + the sending aggregator's id (Envelope.rank); 0: not waited for */
} mw_partial_in_t;

/* Merges a checked partial window into window pw->index as if each listed rank's sample had
 * arrived now (the ranks' progress, the window's completeness and every figure exactly as
 * mw__merge_add would have left them). Returns 0 when merged, 1 when the window had already
 * closed (late: nothing merged, the ranks' progress recorded), -1 when out of memory (nothing
 * merged, progress recorded). */
int mw__merge_add_partial(mw_merge_t *m, const mw_partial_in_t *in, uint64_t now_ns);

/* Aggregator `id` sent an AggState saying `running` of its ranks still run (ranks - ranks_done)
 * and whether it is its final one: windows wait for its partials (mw__merge_tick) from now on,
 * until it is final. */
void mw__merge_agg_state(mw_merge_t *m, uint32_t id, uint32_t running, int final, uint64_t now_ns);

/* The rank will send nothing more (bye, or declared dead): windows stop waiting for it. */
void mw__merge_leave(mw_merge_t *m, uint32_t rank);

/* Closes the windows whose deadline has passed at `now_ns`, and every window before them.
 * A window past its lateness deadline still waits while an aggregator owes its partial for it:
 * one that sent an AggState or a partial in the job, is not final, still has ranks running,
 * was heard from less than agg_silent_ns ago (else it is gone until it sends again) and sent
 * no partial for this window yet.
 * The wait ends agg_wait_ns after the lateness deadline, or earlier when the window would
 * leave fewer than MW_MERGE_HOLD_SLACK free slots in the ring; such a close counts in
 * agg_given_up (and each aggregator still owing in agg_owed). */
void mw__merge_tick(mw_merge_t *m, uint64_t now_ns);

/* Closes every window that has data (job end). */
void mw__merge_close_all(mw_merge_t *m);

/* Collector monotonic time of the next deadline, or UINT64_MAX when no window is open. */
uint64_t mw__merge_next_deadline(const mw_merge_t *m);

#endif
