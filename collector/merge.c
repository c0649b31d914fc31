/* merge.c: the ring of open windows and the merge of rank samples into them.
 *
 * DESIGN: open windows live in a power-of-two ring indexed by window number, so finding the
 * window of a sample is one mask. Everything a window holds is preallocated or kept across
 * reuse (dense per-function arrays, an occupancy matrix, a fixed-size heap of long calls, a
 * hash index of density cells and a list of pairs, which keep their capacity), so merging
 * costs O(1) per function summary, per peer, per occupancy or density entry, and allocates
 * nothing once the tables are warm. Pairs need no hash (see window_add_pairs).
 *
 * Deciding when a window is complete without scanning ranks: every expected rank (no bye, not
 * declared dead) is counted either in `behind` (its last window is before `head`, the oldest
 * open window) or in `at[slot]` (its last window is that open window). A rank's windows only
 * increase (duplicates are rejected before they get here), so a rank that reports window j has
 * nothing more to say about any window <= j. Hence `head` can close as soon as `behind` is
 * zero, and closing it moves the ranks counted at it into `behind`: all O(1) per event. The
 * ranks still behind when a window closes (at its deadline) are its missing ranks.
 *
 * Deadlines are the arrival time of a window's first sample plus the lateness allowance, in
 * the collector's monotonic clock, so a rank with a skewed clock cannot close windows early
 * and a window nobody reports never needs a timer. Windows close in index order: a window
 * whose deadline passed closes every older one first. A sample too far ahead for the ring
 * closes (evicts) the oldest windows to make room, which bounds memory whatever ranks send.
 *
 * Waiting for aggregators: a parent's window gets the ranks behind an aggregator all at once,
 * in that aggregator's partial, which comes when the aggregator closed its own window, itself
 * up to its lateness late and later still when it is loaded. So a window past its deadline
 * stays open while an aggregator owes it: one that sent partials in the job (a rank's `via`
 * names the last aggregator that listed it, and the aggregator counts its listed ranks still
 * expected), still has such ranks, was heard from (a partial or an AggState) within agg_silent_ns,
 * and whose newest partial is for an older window. Aggregators close windows in order, so "owes
 * window k" is "its newest window < k": the minimum of that over the live aggregators decides for
 * every window at once, O(aggregators) per tick. The wait is bounded by time (agg_wait_ns past the
 * deadline; the ring is sized for it) and by room (a waiting window leaves MW_MERGE_HOLD_SLACK
 * slots free, so newer windows never evict it): a dead aggregator holds the parent's windows by at
 * most that, and none at all once it has been silent for agg_silent_ns (the wait plus the period of
 * AggStates, which a live aggregator sends even when it has no window to send). Everything is a
 * function of the arrival times and the tick times, so a replay closes the same windows.
 *
 * Each window also notes the arrival of its last sample, from which the collector measures how
 * long closing took (the close latency histograms of merge.h and the stats JSON).
 */
#include "merge.h"
#include "mw_limits.h"
#include "mw_trace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Bucket of a duration: exact below 16 ns, then the top bit and the next three bits. */
static unsigned latency_bucket(uint64_t ns)
{
    if (ns < 16)
        return (unsigned)ns;
    unsigned e = 63u - (unsigned)__builtin_clzll(ns); /* >= 4 */
    return 16u + (e - 4u) * 8u + ((unsigned)(ns >> (e - 3u)) & 7u);
}

/* The largest duration that falls in bucket b. */
static uint64_t latency_bucket_top(unsigned b)
{
    if (b < 16)
        return b;
    unsigned e = (b - 16u) / 8u + 4u, sub = (b - 16u) % 8u;
    uint64_t step = 1ull << (e - 3u);
    return ((8u + sub) * step - 1u) + step; /* in this order: no overflow in the top bucket */
}

void mw__latency_add(mw_latency_t *h, uint64_t ns)
{
    h->bucket[latency_bucket(ns)]++;
    h->count++;
    if (ns > h->max_ns)
        h->max_ns = ns;
}

uint64_t mw__latency_quantile(const mw_latency_t *h, double q)
{
    if (h->count == 0)
        return 0;
    double want = q * (double)h->count;
    uint64_t rank = want < 1 ? 1 : (uint64_t)want;
    if ((double)rank < want)
        rank++; /* ceil: the smallest value with at least q of the values at or below it */
    if (rank > h->count)
        rank = h->count;
    uint64_t seen = 0;
    for (unsigned b = 0; b < MW_LATENCY_BUCKETS; b++) {
        seen += h->bucket[b];
        if (seen >= rank) {
            uint64_t top = latency_bucket_top(b);
            return top < h->max_ns ? top : h->max_ns;
        }
    }
    return h->max_ns;
}

/* One aggregator a parent merges partials from (see the DESIGN note above). */
struct mw_merge_agg {
    int64_t last;      /* newest window of its partials */
    uint64_t heard_ns; /* arrival of its newest partial */
    uint32_t ranks;    /* expected ranks whose via is this aggregator */
    uint32_t said;     /* its ranks still running, as its latest AggState says */
    int known;         /* it sent a partial or an AggState in the job (listed in agg_ids) */
    int partials;      /* it sent a partial: `ranks` is known here */
    int final;         /* its final AggState came: nothing more to wait for */
};

static uint32_t merge_ring_size(uint64_t window_ns, uint64_t lateness_ns)
{
    /* Every window within the allowance and the wait for aggregators (as long again), + slack. */
    uint64_t want = 2 * lateness_ns / window_ns + 8;
    uint32_t cap = MW_MERGE_RING_MIN;
    while (cap < want && cap < MW_MERGE_RING_MAX)
        cap <<= 1;
    return cap;
}

static int window_alloc(mw_window_t *w, uint32_t subslots, uint32_t size)
{
    memset(w, 0, sizeof *w);
    if (size <= MW_MERGE_RANK_PM_MAX) {
        w->rank_pm = malloc((size_t)(size ? size : 1) * sizeof *w->rank_pm);
        if (!w->rank_pm)
            return -1;
        w->n_rank_pm = size;
        for (uint32_t r = 0; r < size; r++)
            w->rank_pm[r] = MW_RANK_PM_NONE;
    }
    w->fn = calloc(MW_FN_SPACE, sizeof *w->fn);
    w->fn_used = calloc(MW_FN_SPACE, sizeof *w->fn_used);
    w->fn_mark = calloc(MW_FN_SPACE, 1);
    w->occ_ns = calloc((size_t)MW_FN_SPACE * subslots, sizeof *w->occ_ns);
    w->longest = calloc(MW_MERGE_LONGEST, sizeof *w->longest);
    if (!w->fn || !w->fn_used || !w->fn_mark || !w->occ_ns || !w->longest)
        return -1;
    if (mw__index_init(&w->density, sizeof(mw_density_cell_t), 256, MW_MERGE_MAX_DENSITY) < 0)
        return -1;
    if (mw__index_init_list(&w->pairs, sizeof(mw_pair_sum_t), 64, MW_MERGE_MAX_PAIRS) < 0)
        return -1;
    if (mw__index_init(&w->trace_slot, sizeof(uint32_t), 16, MW_MAX_RANKS) < 0)
        return -1;
    if (mw__index_init(&w->regions, sizeof(mw_region_sum_t), 16, MW_JOB_MAX_REGIONS) < 0 ||
        mw__index_init(&w->sites, sizeof(mw_site_sum_t), 16, MW_JOB_MAX_SITES * 4u) < 0 ||
        mw__index_init_list(&w->fpairs, sizeof(mw_fpair_sum_t), 64, MW_WINDOW_MAX_FPAIRS) < 0)
        return -1;
    return 0;
}

static void window_release(mw_window_t *w)
{
    free(w->fn);
    free(w->fn_used);
    free(w->fn_mark);
    free(w->occ_ns);
    free(w->longest);
    free(w->rank_pm);
    free(w->traces);
    free(w->tbytes);
    free(w->comms);
    mw__index_free(&w->density);
    mw__index_free(&w->pairs);
    mw__index_free(&w->trace_slot);
    mw__index_free(&w->regions);
    mw__index_free(&w->sites);
    mw__index_free(&w->fpairs);
    free(w->rf);
    free(w->rr);
    free(w->blocks);
    free(w->rep);
    memset(w, 0, sizeof *w);
}

#define TRACE_KEEP_BYTES (1u << 20) /* trace buffer capacity a window slot keeps across reuse */

/* Empties a closed window for reuse, touching only what was used. */
static void window_clear(mw_window_t *w)
{
    for (uint32_t i = 0; i < w->n_fn_used; i++) {
        uint32_t fn = w->fn_used[i];
        memset(&w->fn[fn], 0, sizeof w->fn[fn]);
        memset(&w->occ_ns[(size_t)fn * w->subslots], 0, w->subslots * sizeof *w->occ_ns);
        w->fn_mark[fn] = 0;
    }
    w->n_fn_used = 0;
    w->n_longest = 0;
    for (uint32_t r = 0; r < w->n_rank_pm; r++)
        w->rank_pm[r] = MW_RANK_PM_NONE;
    mw__index_clear(&w->density);
    mw__index_clear(&w->pairs);
    mw__index_clear(&w->trace_slot);
    mw__index_clear(&w->regions);
    mw__index_clear(&w->sites);
    mw__index_clear(&w->fpairs);
    w->n_rf = w->n_rr = w->n_blocks = w->n_rep = 0;
    w->rank_detail_left_out = w->regions_dropped = w->sites_dropped = 0;
    w->n_traces = w->n_comms = w->traced_ranks = w->trace_deferred = 0;
    w->tbytes_len = 0;
    w->trace_left_out = w->traced_calls = w->comms_dropped = 0;
    if (w->tbytes_cap > TRACE_KEEP_BYTES) { /* a burst's buffer is not kept by every slot */
        free(w->tbytes);
        w->tbytes = NULL;
        w->tbytes_cap = 0;
    }
    w->ranks_reporting = w->ranks_missing = 0;
    w->mpi_time_ns = w->occ_total_ns = 0;
    w->mpi_fraction = w->occ_fraction = 0;
    w->records_dropped = w->samples_dropped = w->calls_late = w->overflow = 0;
    w->open = 0;
}

int mw__merge_init(mw_merge_t *m, uint32_t size, uint64_t window_ns, uint32_t subslots,
                   uint32_t duration_bins, uint64_t lateness_ns, mw_window_fn on_close, void *user)
{
    memset(m, 0, sizeof *m);
    m->size = size;
    m->window_ns = window_ns;
    m->subslots = subslots;
    m->duration_bins = duration_bins;
    m->lateness_ns = lateness_ns;
    m->agg_wait_ns = lateness_ns;
    m->agg_silent_ns = lateness_ns + MW_MERGE_AGG_BEAT_NS;
    m->on_close = on_close;
    m->user = user;
    m->cap = merge_ring_size(window_ns, lateness_ns);
    m->mask = m->cap - 1;
    m->ring = calloc(m->cap, sizeof *m->ring);
    m->at = calloc(m->cap, sizeof *m->at);
    m->last = malloc((size_t)size * sizeof *m->last);
    m->expected = malloc(size);
    m->peer_gen = calloc(size, sizeof *m->peer_gen);
    m->peer_pos = malloc((size_t)size * sizeof *m->peer_pos);
    if (!m->ring || !m->at || !m->last || !m->expected || !m->peer_gen || !m->peer_pos ||
        mw__index_init(&m->fpair_seen, sizeof(uint32_t), 64, MW_WINDOW_MAX_FPAIRS) < 0) {
        mw__merge_free(m);
        return -1;
    }
    for (uint32_t i = 0; i < m->cap; i++) {
        if (window_alloc(&m->ring[i], subslots, size) < 0) {
            mw__merge_free(m);
            return -1;
        }
        m->ring[i].window_ns = window_ns;
        m->ring[i].subslots = subslots;
        m->ring[i].duration_bins = duration_bins;
    }
    for (uint32_t r = 0; r < size; r++)
        m->last[r] = -1;
    memset(m->expected, 1, size);
    m->behind = size;
    return 0;
}

uint64_t mw__merge_min_window_ns(const mw_merge_t *m)
{
    /* The ring holds cap windows: lateness / L + 8 of them must fit, as at init. */
    if (m->cap <= 8 || m->lateness_ns / m->window_ns + 8 > m->cap)
        return m->window_ns;
    return (m->lateness_ns + (m->cap - 8) - 1) / (m->cap - 8);
}

void mw__merge_free(mw_merge_t *m)
{
    if (m->ring)
        for (uint32_t i = 0; i < m->cap; i++)
            window_release(&m->ring[i]);
    free(m->ring);
    free(m->at);
    free(m->last);
    free(m->expected);
    free(m->peer_gen);
    free(m->peer_pos);
    free(m->aggs);
    free(m->via);
    free(m->agg_ids);
    mw__index_free(&m->fpair_seen);
    memset(m, 0, sizeof *m);
}

int64_t mw__merge_last_window(const mw_merge_t *m, uint32_t rank)
{
    return rank < m->size ? m->last[rank] : -1;
}

/* Swaps a[i] and a[j]. */
static void swap64(int64_t *a, size_t i, size_t j)
{
    int64_t t = a[i];
    a[i] = a[j];
    a[j] = t;
}

/* The k-th smallest of a[0..n-1] (k < n), reordering a: quickselect with a median-of-three
 * pivot and a three-way partition, so runs of equal windows (the usual case: every rank at
 * the same window) take one pass. */
static int64_t select_kth(int64_t *a, size_t n, size_t k)
{
    size_t lo = 0, hi = n; /* the answer is in a[lo..hi) */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] < a[lo])
            swap64(a, mid, lo);
        if (a[hi - 1] < a[lo])
            swap64(a, hi - 1, lo);
        if (a[hi - 1] < a[mid])
            swap64(a, hi - 1, mid);
        int64_t pivot = a[mid];
        size_t lt = lo, i = lo, gt = hi; /* [lo,lt) < pivot, [lt,i) == pivot, [gt,hi) > pivot */
        while (i < gt) {
            if (a[i] < pivot)
                swap64(a, lt++, i++);
            else if (a[i] > pivot)
                swap64(a, i, --gt);
            else
                i++;
        }
        if (k < lt)
            hi = lt;
        else if (k >= gt)
            lo = gt;
        else
            return pivot;
    }
    return a[lo];
}

int64_t mw__merge_median_last(const mw_merge_t *m)
{
    if (!m->started || !m->last)
        return -1;
    int64_t *v = malloc((size_t)m->size * sizeof *v);
    if (!v)
        return m->head - 1; /* no memory: the windows closed so far, never ahead of the job */
    size_t n = 0;
    for (uint32_t r = 0; r < m->size; r++)
        if (m->last[r] >= 0)
            v[n++] = m->last[r];
    int64_t med = n ? select_kth(v, n, (n - 1) / 2) : -1;
    free(v);
    return med;
}

/* Moves an expected rank out of the count for its last window `last` ... */
static void merge_uncount(mw_merge_t *m, int64_t last)
{
    if (last < 0 || !m->started || last < m->head)
        m->behind--;
    else
        m->at[last & m->mask]--;
}

/* ... and into the count for window `w`. */
static void merge_count(mw_merge_t *m, int64_t w)
{
    if (w < m->head)
        m->behind++;
    else
        m->at[w & m->mask]++;
}

/* The order of the longest calls: longest first, then lowest rank, earliest start, and the
 * remaining fields, so that it is total: which calls a window keeps then depends only on the
 * calls, not on the order in which samples or partials arrived (partial.c). */
static int cmp_call_desc(const void *pa, const void *pb)
{
    const mw_merge_call_t *a = pa, *b = pb;
    if (a->duration_ns != b->duration_ns)
        return a->duration_ns > b->duration_ns ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->start_ns != b->start_ns)
        return a->start_ns < b->start_ns ? -1 : 1;
    if (a->fn != b->fn)
        return a->fn < b->fn ? -1 : 1;
    if (a->peer != b->peer)
        return a->peer < b->peer ? -1 : 1;
    return a->bytes < b->bytes ? -1 : a->bytes > b->bytes;
}

/* a comes after b in that order (the heap's "smaller"). */
static int call_shorter(const mw_merge_call_t *a, const mw_merge_call_t *b)
{
    if (a->duration_ns != b->duration_ns)
        return a->duration_ns < b->duration_ns;
    return cmp_call_desc(a, b) > 0;
}

/* Keeps the MW_MERGE_LONGEST longest calls in a min-heap: O(log K) per call. */
static void longest_push(mw_window_t *w, const mw_merge_call_t *c)
{
    mw_merge_call_t *h = w->longest;
    uint32_t i;
    if (w->n_longest < MW_MERGE_LONGEST) {
        i = w->n_longest++;
        while (i > 0 && call_shorter(c, &h[(i - 1) / 2])) {
            h[i] = h[(i - 1) / 2];
            i = (i - 1) / 2;
        }
        h[i] = *c;
        return;
    }
    if (!call_shorter(&h[0], c))
        return;
    i = 0;
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, s = i;
        const mw_merge_call_t *smallest = c;
        if (l < w->n_longest && call_shorter(&h[l], smallest)) {
            s = l;
            smallest = &h[l];
        }
        if (r < w->n_longest && call_shorter(&h[r], smallest))
            s = r;
        if (s == i)
            break;
        h[i] = h[s];
        i = s;
    }
    h[i] = *c;
}

static void window_mark(mw_window_t *w, uint32_t fn)
{
    if (!w->fn_mark[fn]) {
        w->fn_mark[fn] = 1;
        w->fn_used[w->n_fn_used++] = fn;
    }
}

/* Adds n density cells (a sample's or a partial's: function, sub-slot, bin, start or end, calls)
 * to the window's; a cell that does not fit the table counts as overflow. */
static void window_add_density(mw_window_t *w, size_t n, const uint32_t *fn, const int32_t *sub,
                               const uint32_t *bin, const uint32_t *end, const uint64_t *count)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t key = (uint64_t)(uint32_t)sub[i] << 32 | (uint64_t)fn[i] << 9 |
                       (uint64_t)bin[i] << 1 | end[i];
        int created;
        mw_density_cell_t *cell = mw__index_get(&w->density, key, &created);
        if (!cell) {
            w->overflow++;
            continue;
        }
        if (created) {
            cell->fn = fn[i];
            cell->sub = sub[i];
            cell->bin = bin[i];
            cell->end = end[i];
        }
        cell->count += count[i];
    }
}

/* Adds the sample's point-to-point traffic to the window's pairs. A rank's sample for a window
 * is merged once at most (ingest rejects a window at or before the rank's last), so its pairs
 * (rank, peer) are new to the window, except for a peer listed twice in this very sample: that
 * is caught by marking each peer with this sample's generation (O(1) per peer, in an array of
 * `size` entries that stays in cache) instead of hashing every pair into a table of
 * ranks x peers entries, which cost a cache miss per pair at 16k ranks. */
static void window_add_pairs(mw_merge_t *m, mw_window_t *w, uint32_t rank,
                             const Mpiwatch__Sample *s)
{
    if (++m->pair_gen == 0) { /* wrapped: forget every old mark */
        memset(m->peer_gen, 0, (size_t)m->size * sizeof *m->peer_gen);
        m->pair_gen = 1;
    }
    for (size_t i = 0; i < s->n_peer_rank; i++) {
        uint32_t peer = s->peer_rank[i];
        mw_pair_sum_t *p;
        if (m->peer_gen[peer] == m->pair_gen) {
            p = MW__INDEX_AT(&w->pairs, mw_pair_sum_t, m->peer_pos[peer]);
            mw__pair_add(p, 0, rank, peer, s->peer_messages[i], s->peer_bytes[i]);
            continue;
        }
        if (!(p = mw__index_append(&w->pairs, (uint64_t)rank << 32 | peer))) {
            w->overflow++;
            continue;
        }
        m->peer_gen[peer] = m->pair_gen;
        m->peer_pos[peer] = w->pairs.n - 1;
        mw__pair_add(p, 1, rank, peer, s->peer_messages[i], s->peer_bytes[i]);
    }
}

/* Grows an array of n elements of `size` bytes to hold one more (capacity *cap). */
static int grow(void **arr, uint32_t *cap, uint32_t n, size_t size)
{
    if (n < *cap)
        return 0;
    uint32_t c = *cap ? *cap * 2 : 16;
    void *p = realloc(*arr, (size_t)c * size);
    if (!p)
        return -1;
    *arr = p;
    *cap = c;
    return 0;
}

int mw__merge_trace_room(const mw_merge_t *m, uint64_t window, size_t len)
{
    if (len > MW_TRACE_WINDOW_MAX_BYTES || len > MW_TRACE_OPEN_MAX_BYTES - m->trace_open_bytes)
        return 0;
    const mw_window_t *w = &m->ring[window & m->mask];
    size_t used = w->open && w->index == window ? w->tbytes_len : 0;
    return len <= MW_TRACE_WINDOW_MAX_BYTES - used;
}

int mw__merge_trace_exact(const mw_merge_t *m, uint64_t window, uint32_t rank)
{
    const mw_window_t *w = &m->ring[window & m->mask];
    if (!w->open || w->index != window)
        return 0;
    const uint32_t *slot = mw__index_find(&w->trace_slot, rank);
    return slot && w->traces[*slot].state == MW_TRACE_EXACT;
}

/* Keeps one rank's trace (and the sample's communicator definitions) in window w. The records
 * are copied as they arrived: the window owns them, the decoded message does not outlive its
 * frame. Returns 0, or -1 when memory or a cap refused the records (the entry is then kept as
 * summary only, so the window still says the rank is not exact). */
static int window_add_trace(mw_merge_t *m, mw_window_t *w, uint32_t rank, const mw_trace_in_t *in)
{
    int rc = 0;
    for (size_t i = 0; i < in->n_comms; i++) {
        if (w->n_comms >= MW_TRACE_WINDOW_MAX_COMMS ||
            grow((void **)&w->comms, &w->cap_comms, w->n_comms, sizeof *w->comms) < 0) {
            w->comms_dropped += in->n_comms - i;
            break;
        }
        const Mpiwatch__CommDef *d = in->comms[i];
        w->comms[w->n_comms++] = (mw_comm_def_t){.id = d->id,
                                                 .parent = d->parent,
                                                 .created_ns = d->created_ns,
                                                 .fn = d->fn,
                                                 .rank = d->rank,
                                                 .size = d->size,
                                                 .flags = d->flags,
                                                 .remote_size = d->remote_size,
                                                 .world_rank = rank};
    }
    const Mpiwatch__Trace *t = in->t;
    if (!t)
        return 0;
    if (grow((void **)&w->traces, &w->cap_traces, w->n_traces, sizeof *w->traces) < 0)
        return -1;
    /* One entry per rank and window, so a window holds at most the job's size of them: a later
     * trace replaces the rank's entry unless that one is exact, and a second exact one is
     * refused (trace_check.c refuses it first, counted, before it is decoded). */
    int created = 0;
    uint32_t *slot = mw__index_get(&w->trace_slot, rank, &created);
    if (!slot)
        return -1;
    if (created)
        *slot = w->n_traces;
    else if (w->traces[*slot].state == MW_TRACE_EXACT)
        return in->state == MW_TRACE_EXACT ? -1 : 0;
    mw_rank_trace_t *e = &w->traces[*slot];
    *e = (mw_rank_trace_t){.rank = rank,
                           .state = in->state,
                           .reason = in->reason,
                           .count = t->count,
                           .encoding = t->encoding,
                           .threads = t->threads,
                           .flags = t->flags,
                           .seq = w->n_traces,
                           .window = t->window,
                           .left_out = in->left_out,
                           .raw_bytes = t->raw_bytes,
                           .window_start_ns = t->window_start_ns,
                           .capture = t->capture,
                           .calls = in->calls,
                           .frame_off = m->frame_off};
    size_t len = in->keep_records ? t->records.len : 0;
    if (len && !mw__merge_trace_room(m, w->index, len))
        len = 0, rc = -1;
    if (len && w->tbytes_len + len > w->tbytes_cap) {
        size_t cap = w->tbytes_cap ? w->tbytes_cap : 65536;
        while (cap < w->tbytes_len + len)
            cap *= 2;
        uint8_t *p = realloc(w->tbytes, cap);
        if (!p)
            len = 0, rc = -1;
        else
            w->tbytes = p, w->tbytes_cap = cap;
    }
    if (len) {
        memcpy(w->tbytes + w->tbytes_len, t->records.data, len);
        e->off = w->tbytes_len;
        e->len = len;
        w->tbytes_len += len;
        m->trace_open_bytes += len;
    } else if (in->keep_records && t->records.len) {
        /* Refused here (cap, memory): the rank is not exact in this window. */
        e->state = MW_TRACE_SUMMARY_ONLY;
        e->reason = MW_TRACE_WHY_REFUSED;
        e->left_out = in->left_out + in->calls;
        e->calls = 0;
    }
    if (e->state != MW_TRACE_EXACT) { /* no records: nothing to describe */
        e->count = e->encoding = 0;
        e->raw_bytes = 0;
    }
    if (created)
        w->n_traces++;
    return rc;
}

static int cmp_trace(const void *pa, const void *pb)
{
    const mw_rank_trace_t *a = pa, *b = pb;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* At close: the entries in rank order, one per rank (its exact entry if it has one, else its
 * latest), and the window's trace figures. */
static void window_close_traces(mw_window_t *w)
{
    if (w->n_traces > 1)
        qsort(w->traces, w->n_traces, sizeof *w->traces, cmp_trace);
    uint32_t out = 0;
    for (uint32_t i = 0; i < w->n_traces; i++) {
        const mw_rank_trace_t *e = &w->traces[i];
        if (out && w->traces[out - 1].rank == e->rank) {
            mw_rank_trace_t *prev = &w->traces[out - 1];
            if (prev->state == MW_TRACE_EXACT && e->state != MW_TRACE_EXACT)
                continue;
            *prev = *e;
            continue;
        }
        w->traces[out++] = *e;
    }
    w->n_traces = out;
    w->traced_ranks = w->trace_deferred = 0;
    w->trace_left_out = w->traced_calls = 0;
    for (uint32_t i = 0; i < out; i++) {
        if (w->traces[i].state == MW_TRACE_EXACT) {
            w->traced_ranks++;
            w->traced_calls += w->traces[i].calls;
        } else if (w->traces[i].reason == MW_TRACE_WHY_DEFERRED) {
            w->trace_deferred++; /* traced: its records come later (Envelope.trace) */
            continue;
        }
        w->trace_left_out += w->traces[i].left_out;
    }
}

int mw__merge_trace_add(mw_merge_t *m, uint32_t rank, uint64_t window, const mw_trace_in_t *in)
{
    if (!m->started || (int64_t)window < m->head || (int64_t)window > m->max_seen)
        return 1;
    mw_window_t *w = &m->ring[window & m->mask];
    if (!w->open || w->index != window)
        return 1;
    return window_add_trace(m, w, rank, in) < 0 ? -1 : 0;
}

/* Point-to-point pairs per sending function, from a sample whose peer entries carry their
 * function (peer_fn): a rank's entries are new to the window (one sample per rank), except a
 * (peer, function) listed twice in the sample, found with a scratch index cleared per sample. */
static void window_add_fpairs(mw_merge_t *m, mw_window_t *w, uint32_t rank,
                              const Mpiwatch__Sample *s)
{
    mw__index_clear(&m->fpair_seen);
    for (size_t i = 0; i < s->n_peer_rank; i++) {
        uint32_t peer = s->peer_rank[i], fn = s->peer_fn[i];
        int created;
        uint32_t *pos = mw__index_get(&m->fpair_seen, (uint64_t)peer << 32 | fn, &created);
        mw_fpair_sum_t *p;
        if (pos && !created) {
            p = MW__INDEX_AT(&w->fpairs, mw_fpair_sum_t, *pos);
        } else if (!pos || !(p = mw__index_append(&w->fpairs, (uint64_t)rank << 32 | peer))) {
            w->overflow++;
            continue;
        } else {
            *pos = w->fpairs.n - 1;
            p->src = rank;
            p->dst = peer;
            p->fn = fn;
        }
        p->messages = mw__rs_sat_add(p->messages, s->peer_messages[i]);
        p->bytes = mw__rs_sat_add(p->bytes, s->peer_bytes[i]);
    }
}

/* Adds ranks' moments (their number, sum of total_ns, sum of squares) to a function's. */
static void spread_add(mw_fn_sum_t *sum, uint32_t ranks, uint64_t s1, mw_u128_t sq)
{
    sum->ranks += ranks;
    sum->sum_ns = s1 > UINT64_MAX - sum->sum_ns ? UINT64_MAX : sum->sum_ns + s1;
    sum->sq = sq > ~(mw_u128_t)0 - sum->sq ? ~(mw_u128_t)0 : sum->sq + sq;
}

/* The rank with the largest total (the lowest of equals) among a function's ranks. */
static void spread_max(mw_fn_sum_t *sum, int first, uint32_t rank, uint64_t ns)
{
    if (first || ns > sum->rank_max_ns || (ns == sum->rank_max_ns && rank < sum->rank_max)) {
        sum->rank_max = rank;
        sum->rank_max_ns = ns;
    }
}

/* Each function's spread across ranks: this rank's total_ns added to the moments, O(1) per
 * function summary (ingest rejects a function given twice in one sample). */
static void window_add_spread(mw_window_t *w, uint32_t rank, const Mpiwatch__Sample *s)
{
    for (size_t i = 0; i < s->n_functions; i++) {
        const Mpiwatch__FunctionStat *f = s->functions[i];
        mw_fn_sum_t *sum = &w->fn[f->fn];
        spread_max(sum, sum->ranks == 0, rank, f->total_ns);
        spread_add(sum, 1, f->total_ns, (mw_u128_t)f->total_ns * f->total_ns);
    }
}

/* Adds `ranks` ranks' figures of one region (job id) to the window's (saturating). */
static void window_add_region(mw_window_t *w, uint32_t region, uint32_t ranks, uint64_t count,
                              uint64_t incl_ns, uint64_t excl_ns, uint64_t mpi_ns)
{
    int created;
    mw_region_sum_t *r = mw__index_get(&w->regions, region, &created);
    if (!r) {
        w->overflow++;
        return;
    }
    r->region = region;
    r->ranks += ranks;
    r->count = mw__rs_sat_add(r->count, count);
    r->incl_ns = mw__rs_sat_add(r->incl_ns, incl_ns);
    r->excl_ns = mw__rs_sat_add(r->excl_ns, excl_ns);
    r->mpi_ns = mw__rs_sat_add(r->mpi_ns, mpi_ns);
}

/* The sample's region and call-site entries (already in job ids and checked: regions.c). */
static void window_add_rs(mw_window_t *w, uint32_t rank, const mw_rs_in_t *in)
{
    for (uint32_t i = 0; i < in->n_regions; i++) {
        const mw_region_in_t *e = &in->regions[i];
        window_add_region(w, e->region, 1, e->count, e->incl_ns, e->excl_ns, e->mpi_ns);
    }
    for (uint32_t i = 0; i < in->n_sites; i++) {
        const mw_site_in_t *e = &in->sites[i];
        int created;
        mw_site_sum_t *t = mw__index_get(&w->sites, (uint64_t)e->site << 32 | e->fn, &created);
        if (!t) {
            w->overflow++;
            continue;
        }
        if (created || e->ns > t->top_rank_ns || (e->ns == t->top_rank_ns && rank < t->top_rank)) {
            t->top_rank = rank;
            t->top_rank_ns = e->ns;
        }
        t->site = e->site;
        t->fn = e->fn;
        t->ranks++;
        t->count = mw__rs_sat_add(t->count, e->count);
        t->ns = mw__rs_sat_add(t->ns, e->ns);
        t->bytes = mw__rs_sat_add(t->bytes, e->bytes);
        if (e->max_ns > t->max_ns)
            t->max_ns = e->max_ns;
    }
}

static int cmp_rf(const void *pa, const void *pb)
{
    const mw_rank_fn_entry_t *a = pa, *b = pb;
    return a->fn < b->fn ? -1 : a->fn > b->fn;
}

static int cmp_rr(const void *pa, const void *pb)
{
    const mw_rank_region_entry_t *a = pa, *b = pb;
    return a->region < b->region ? -1 : a->region > b->region;
}

/* Grows an array of n elements of `size` bytes to hold `more` more (capacity *cap). */
static int grow_by(void **arr, uint32_t *cap, uint32_t n, uint32_t more, size_t size)
{
    if (more <= *cap - n)
        return 0;
    uint32_t c = *cap ? *cap : 64;
    while (c - n < more)
        c *= 2;
    void *p = realloc(*arr, (size_t)c * size);
    if (!p)
        return -1;
    *arr = p;
    *cap = c;
    return 0;
}

/* The rank's block of per-rank detail (Window.rf_*, rr_*): its non-zero functions and its
 * regions, each sorted by id (a sample usually lists them in order: checked, sorted if not),
 * within the window's cap; what does not fit, or everything with the detail off, is counted. */
static void window_add_detail(mw_merge_t *m, mw_window_t *w, uint32_t rank,
                              const Mpiwatch__Sample *s)
{
    const mw_rs_in_t *in = m->rs_in;
    uint32_t nr = in ? in->n_regions : 0, nf = 0;
    for (size_t i = 0; i < s->n_functions; i++) {
        const Mpiwatch__FunctionStat *f = s->functions[i];
        nf += f->count || f->total_ns || f->bytes;
    }
    if (nf + nr == 0)
        return;
    uint32_t room_f = MW_WINDOW_MAX_RANK_ENTRIES - w->n_rf;
    uint32_t room_r = MW_WINDOW_MAX_RANK_ENTRIES - w->n_rr;
    uint32_t kf = m->no_rank_detail ? 0 : nf < room_f ? nf : room_f;
    uint32_t kr = m->no_rank_detail ? 0 : nr < room_r ? nr : room_r;
    if ((kf || kr) &&
        (grow_by((void **)&w->blocks, &w->cap_blocks, w->n_blocks, 1, sizeof *w->blocks) < 0 ||
         grow_by((void **)&w->rf, &w->cap_rf, w->n_rf, kf, sizeof *w->rf) < 0 ||
         grow_by((void **)&w->rr, &w->cap_rr, w->n_rr, kr, sizeof *w->rr) < 0))
        kf = kr = 0;
    w->rank_detail_left_out += (nf - kf) + (nr - kr);
    if (!kf && !kr)
        return;
    mw_rank_block_t *b = &w->blocks[w->n_blocks++];
    *b = (mw_rank_block_t){
        .rank = rank, .rf_off = w->n_rf, .rf_n = kf, .rr_off = w->n_rr, .rr_n = kr};
    int sorted = 1;
    for (size_t i = 0; i < s->n_functions && w->n_rf < b->rf_off + kf; i++) {
        const Mpiwatch__FunctionStat *f = s->functions[i];
        if (!(f->count || f->total_ns || f->bytes))
            continue;
        if (w->n_rf > b->rf_off && w->rf[w->n_rf - 1].fn > f->fn)
            sorted = 0;
        w->rf[w->n_rf++] = (mw_rank_fn_entry_t){rank, f->fn, f->count, f->total_ns, f->bytes};
    }
    if (!sorted)
        qsort(&w->rf[b->rf_off], kf, sizeof *w->rf, cmp_rf);
    sorted = 1;
    for (uint32_t i = 0; i < kr; i++) {
        const mw_region_in_t *e = &in->regions[i];
        if (i && w->rr[w->n_rr - 1].region > e->region)
            sorted = 0;
        w->rr[w->n_rr++] =
            (mw_rank_region_entry_t){rank, e->region, e->count, e->incl_ns, e->excl_ns, e->mpi_ns};
    }
    if (!sorted)
        qsort(&w->rr[b->rr_off], kr, sizeof *w->rr, cmp_rr);
}

static int cmp_block(const void *pa, const void *pb)
{
    const mw_rank_block_t *a = pa, *b = pb;
    return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/* At close: the blocks in rank order, and each function's spread with the reporting ranks
 * that did not call it as zeros: the population deviation over the N reporting ranks,
 * sd = sqrt(N * S2 - S1^2) / N from the exact sums S1 of total_ns and S2 of its squares (the
 * reporting ranks without the function add nothing to either). The numerator is computed
 * exactly in 128 bits when it fits, which it does for any real window (S2 < 2^128 / N); else
 * (a sum saturated) in long double. Either way sd is a function of (N, S1, S2) alone. */
static void window_close_detail(mw_window_t *w)
{
    int sorted = 1;
    for (uint32_t i = 1; i < w->n_blocks && sorted; i++)
        sorted = w->blocks[i - 1].rank < w->blocks[i].rank;
    if (!sorted)
        qsort(w->blocks, w->n_blocks, sizeof *w->blocks, cmp_block);
    long double n_all = w->ranks_reporting;
    for (uint32_t i = 0; i < w->n_fn_used; i++) {
        mw_fn_sum_t *f = &w->fn[w->fn_used[i]];
        if (!f->ranks || n_all <= 0) {
            f->sd_ns = 0;
            continue;
        }
        mw_u128_t n = w->ranks_reporting, s1 = f->sum_ns, sq = f->sq, max = ~(mw_u128_t)0;
        if (f->sum_ns != UINT64_MAX && sq != max && sq <= max / n && n * sq >= s1 * s1) {
            mw_u128_t num = n * sq - s1 * s1;
            f->sd_ns = num ? (double)(sqrtl((long double)num) / n_all) : 0.0;
        } else {
            long double mean = (long double)f->sum_ns / n_all;
            long double var = (long double)f->sq / n_all - mean * mean;
            f->sd_ns = var > 0 ? (double)sqrtl(var) : 0.0;
        }
    }
}

static void window_add(mw_merge_t *m, mw_window_t *w, uint32_t rank, const Mpiwatch__Sample *s,
                       uint64_t samples_dropped, const mw_trace_in_t *trace)
{
    if (trace)
        window_add_trace(m, w, rank, trace);
    w->ranks_reporting++;
    w->records_dropped += s->records_dropped;
    w->calls_late += s->calls_late;
    w->samples_dropped += samples_dropped;

    for (size_t i = 0; i < s->n_functions; i++) {
        const Mpiwatch__FunctionStat *f = s->functions[i];
        mw_fn_sum_t *sum = &w->fn[f->fn];
        window_mark(w, f->fn);
        mw__fn_stats_add(&sum->s, f);
        w->mpi_time_ns += f->total_ns;
        for (size_t b = 0; b < f->n_hist; b++)
            sum->hist[f->hist_first + b] += f->hist[b];
    }

    uint64_t rank_occ = 0;
    for (size_t i = 0; i < s->n_occ_fn; i++) {
        window_mark(w, s->occ_fn[i]);
        w->occ_ns[(size_t)s->occ_fn[i] * w->subslots + s->occ_sub[i]] += s->occ_ns[i];
        w->occ_total_ns += s->occ_ns[i];
        rank_occ += s->occ_ns[i];
    }
    uint64_t pm64 = w->window_ns ? rank_occ * 1000 / w->window_ns : 0;
    uint32_t pm = pm64 < MW_RANK_PM_NONE ? (uint32_t)pm64 : MW_RANK_PM_NONE - 1;
    if (rank < w->n_rank_pm)
        w->rank_pm[rank] = pm;
    if (w->n_rep < w->cap_rep || grow((void **)&w->rep, &w->cap_rep, w->n_rep, sizeof *w->rep) == 0)
        w->rep[w->n_rep++] = (mw_rank_share_t){rank, pm};

    window_add_density(w, s->n_density_fn, s->density_fn, s->density_sub, s->density_bin,
                       s->density_end, s->density_count);

    window_add_pairs(m, w, rank, s);
    if (s->n_peer_fn == s->n_peer_rank && s->n_peer_fn)
        window_add_fpairs(m, w, rank, s);
    window_add_spread(w, rank, s);
    w->regions_dropped = mw__rs_sat_add(w->regions_dropped, s->regions_dropped);
    w->sites_dropped = mw__rs_sat_add(w->sites_dropped, s->sites_dropped);
    if (m->rs_in)
        window_add_rs(w, rank, m->rs_in);
    window_add_detail(m, w, rank, s);

    for (size_t i = 0; i < s->n_longest; i++) {
        const Mpiwatch__Call *c = s->longest[i];
        mw_merge_call_t call = {.rank = rank,
                                .fn = c->fn,
                                .peer = c->peer,
                                .start_ns = c->start_ns,
                                .duration_ns = c->duration_ns,
                                .bytes = c->bytes};
        longest_push(w, &call);
    }
}

/* Closes the window at head (reporting it if it has data) and moves head forward. */
static void merge_advance(mw_merge_t *m, int evicting)
{
    uint32_t slot = (uint32_t)(m->head & m->mask);
    mw_window_t *w = &m->ring[slot];
    if (w->open) {
        w->ranks_missing = m->behind > UINT32_MAX ? UINT32_MAX : (uint32_t)m->behind;
        double capacity = (double)w->window_ns * (double)w->ranks_reporting;
        w->mpi_fraction = capacity > 0 ? (double)w->mpi_time_ns / capacity : 0.0;
        w->occ_fraction = capacity > 0 ? (double)w->occ_total_ns / capacity : 0.0;
        qsort(w->longest, w->n_longest, sizeof *w->longest, cmp_call_desc);
        window_close_traces(w);
        window_close_detail(w);
        m->trace_open_bytes -= w->tbytes_len;
        m->closed++;
        if (w->ranks_missing)
            m->partial++;
        if (evicting)
            m->evicted++;
        if (m->on_close)
            m->on_close(w, m->user);
        window_clear(w);
    }
    m->behind += m->at[slot];
    m->at[slot] = 0;
    m->head++;
    m->frozen = 1;
}

/* Closes head windows for as long as no expected rank is still behind. */
static void merge_close_ready(mw_merge_t *m)
{
    while (m->started && m->head <= m->max_seen && m->behind == 0) {
        const mw_window_t *w = &m->ring[m->head & m->mask];
        if (m->n_aggs && w->open && m->now_ns > w->first_arrival_ns + m->lateness_ns)
            m->agg_waited++; /* complete only because it waited for an aggregator */
        merge_advance(m, 0);
    }
}

/* The rank is now listed by aggregator `from` (1 + id; 0: it sends its samples here). */
static void merge_via(mw_merge_t *m, uint32_t rank, uint32_t from)
{
    uint32_t old = m->via[rank];
    if (old == from)
        return;
    if (m->expected[rank]) {
        if (old)
            m->aggs[old - 1].ranks--;
        if (from)
            m->aggs[from - 1].ranks++;
    }
    m->via[rank] = (uint16_t)from;
}

/* Aggregator `id`, listed in agg_ids (its table allocated at the first one), or NULL when out
 * of memory (the merge then does not wait for it). */
static struct mw_merge_agg *merge_agg(mw_merge_t *m, uint32_t id)
{
    if (!m->aggs) {
        m->aggs = calloc(MW_MERGE_MAX_AGGS, sizeof *m->aggs);
        m->agg_ids = malloc(MW_MERGE_MAX_AGGS * sizeof *m->agg_ids);
        m->via = calloc(m->size ? m->size : 1, sizeof *m->via);
        if (!m->aggs || !m->agg_ids || !m->via) {
            free(m->aggs);
            free(m->agg_ids);
            free(m->via);
            m->aggs = NULL, m->agg_ids = NULL, m->via = NULL;
            return NULL;
        }
    }
    struct mw_merge_agg *a = &m->aggs[id];
    if (!a->known) {
        a->known = 1;
        a->last = INT64_MIN; /* owes every window until its first partial */
        m->agg_ids[m->n_aggs++] = (uint16_t)id;
    }
    return a;
}

void mw__merge_agg_state(mw_merge_t *m, uint32_t id, uint32_t running, int final, uint64_t now_ns)
{
    struct mw_merge_agg *a = id < MW_MERGE_MAX_AGGS ? merge_agg(m, id) : NULL;
    if (!a)
        return;
    a->said = running;
    a->final |= final;
    if (now_ns > a->heard_ns)
        a->heard_ns = now_ns;
}

/* Notes partial `in` of aggregator in->from for window w. */
static void merge_agg_partial(mw_merge_t *m, const mw_partial_in_t *in, int64_t w, uint64_t now_ns)
{
    struct mw_merge_agg *a =
        in->from && in->from <= MW_MERGE_MAX_AGGS ? merge_agg(m, in->from - 1) : NULL;
    if (!a)
        return;
    a->partials = 1;
    if (w > a->last)
        a->last = w;
    if (now_ns > a->heard_ns)
        a->heard_ns = now_ns;
    for (size_t r = 0; r < in->n_ranges; r++)
        for (uint32_t k = 0; k < in->rank_count[r]; k++)
            merge_via(m, in->rank_first[r] + k, in->from);
}

/* The newest window of the aggregator that is furthest behind among those a window waits for
 * at now_ns (INT64_MAX: none), and in *gone_ns (may be NULL) the earliest time one of them
 * will be declared gone. */
static int64_t merge_owing(const mw_merge_t *m, uint64_t now_ns, uint64_t *gone_ns)
{
    int64_t min = INT64_MAX;
    uint64_t gone = UINT64_MAX;
    for (uint32_t i = 0; i < m->n_aggs; i++) {
        const struct mw_merge_agg *a = &m->aggs[m->agg_ids[i]];
        if (a->final || !(a->partials ? a->ranks : a->said) ||
            a->heard_ns + m->agg_silent_ns <= now_ns)
            continue;
        if (a->last < min)
            min = a->last;
        if (a->heard_ns + m->agg_silent_ns < gone)
            gone = a->heard_ns + m->agg_silent_ns;
    }
    if (gone_ns)
        *gone_ns = gone;
    return min;
}

/* Whether window k (open, past its lateness deadline `base`) still waits at now_ns, given
 * merge_owing's `owe`. */
static int merge_waits(const mw_merge_t *m, int64_t k, uint64_t base, int64_t owe, uint64_t now_ns)
{
    return k > owe && now_ns < base + m->agg_wait_ns &&
           m->max_seen - k < (int64_t)(m->cap - MW_MERGE_HOLD_SLACK);
}

/* Counts window k, closed by its deadline, if an aggregator with ranks still owed it. */
static void merge_count_given_up(mw_merge_t *m, int64_t k)
{
    uint64_t owed = 0;
    for (uint32_t i = 0; i < m->n_aggs; i++) {
        const struct mw_merge_agg *a = &m->aggs[m->agg_ids[i]];
        if (!a->final && (a->partials ? a->ranks : a->said) && a->last < k)
            owed++;
    }
    if (owed) {
        m->agg_given_up++;
        m->agg_owed += owed;
    }
}

/* Where window w goes: starts the merge, moves head back before anything closed, or evicts
 * the oldest windows to make room in the ring (mw__merge_add and mw__merge_add_partial). */
static inline void merge_place(mw_merge_t *m, int64_t w)
{
    if (!m->started) {
        m->started = 1;
        m->head = m->max_seen = w;
    } else if (w < m->head && !m->frozen && m->max_seen - w < (int64_t)m->cap) {
        /* Nothing has closed yet: a rank that started one window earlier than the first
         * sample seen moves the start back instead of being late. No rank can be counted in
         * [w, head) since no sample for those windows arrived. */
        m->head = w;
    }
    if (w >= m->head && w - m->head >= (int64_t)m->cap) {
        int64_t target = w - (int64_t)m->cap + 1;
        while (m->head < target) {
            if (m->head > m->max_seen) {
                /* Nothing open and no rank counted in the ring: jump, however far. */
                m->head = target;
                m->frozen = 1;
                break;
            }
            merge_advance(m, 1);
        }
    }
}

/* The open window w (opened now if it was not). */
static inline mw_window_t *merge_open(mw_merge_t *m, int64_t w, uint64_t now_ns)
{
    mw_window_t *win = &m->ring[w & m->mask];
    if (!win->open) {
        win->open = 1;
        win->index = (uint64_t)w;
        win->window_ns = m->grid ? mw_grid_len(m->grid, (uint64_t)w) : m->window_ns;
        win->start_ns = m->grid ? mw_grid_start(m->grid, (uint64_t)w) : (uint64_t)w * m->window_ns;
        win->first_arrival_ns = now_ns;
    }
    win->last_arrival_ns = now_ns;
    return win;
}

/* The rank's last window is now w: it moves from one completeness counter to the other. */
static inline void merge_progress(mw_merge_t *m, uint32_t rank, int64_t w)
{
    if (m->expected[rank]) {
        merge_uncount(m, m->last[rank]);
        merge_count(m, w);
    }
    m->last[rank] = w;
}

int mw__merge_add(mw_merge_t *m, uint32_t rank, const Mpiwatch__Sample *s, uint64_t samples_dropped,
                  uint64_t now_ns, const mw_trace_in_t *trace)
{
    int64_t w = (int64_t)s->window;
    m->now_ns = now_ns;
    if (m->via && m->via[rank]) /* a rank of an aggregator now sends here (its fallback) */
        merge_via(m, rank, 0);
    merge_place(m, w);
    merge_progress(m, rank, w);

    if (w < m->head) {
        m->late++;
        m->frozen = 1;
        merge_close_ready(m);
        return 1;
    }

    mw_window_t *win = merge_open(m, w, now_ns);
    window_add(m, win, rank, s, samples_dropped, trace);
    if (w > m->max_seen)
        m->max_seen = w;
    merge_close_ready(m);
    return 0;
}

/* ---- partial windows (partial.c, docs/partial.md) -------------------------------------------
 *
 * A partial is the merged window of an aggregator's ranks; adding it must leave the window as
 * the same ranks' samples would have. Sums (counts, times, bytes, histograms, occupancy,
 * density, pairs, losses, region and site figures) add; extremes take the extreme; the spread
 * adds its exact moments; a "top rank" keeps the larger value and the lower rank of equals;
 * the longest calls go through the same heap with its total order; per-rank entries (detail
 * blocks, MPI shares, traces) are each rank's own and are copied. What depends on arrival
 * order (the first-seen order of functions, density cells, pairs, per-function pairs,
 * communicators) follows the partial's order, which is its ranks' arrival order at the
 * aggregator: the same as one collector's when the ranks arrive in the same order. */

/* The partial's per-rank detail (Window.rf_*, rr_*, each in rank order): one block per rank,
 * within the window's caps as window_add_detail. */
static void window_add_partial_detail(mw_merge_t *m, mw_window_t *w, const Mpiwatch__Window *pw)
{
    size_t nf = pw->n_rf_rank, nr = pw->n_rr_rank, i = 0, j = 0;
    w->rank_detail_left_out = mw__rs_sat_add(w->rank_detail_left_out, pw->rank_detail_left_out);
    if (m->no_rank_detail) {
        w->rank_detail_left_out = mw__rs_sat_add(w->rank_detail_left_out, nf + nr);
        return;
    }
    while (i < nf || j < nr) {
        uint32_t rank = i < nf && (j >= nr || pw->rf_rank[i] <= pw->rr_rank[j]) ? pw->rf_rank[i]
                                                                                : pw->rr_rank[j];
        uint32_t kf = 0, kr = 0;
        while (i + kf < nf && pw->rf_rank[i + kf] == rank)
            kf++;
        while (j + kr < nr && pw->rr_rank[j + kr] == rank)
            kr++;
        uint32_t room_f = MW_WINDOW_MAX_RANK_ENTRIES - w->n_rf;
        uint32_t room_r = MW_WINDOW_MAX_RANK_ENTRIES - w->n_rr;
        uint32_t tf = kf < room_f ? kf : room_f, tr = kr < room_r ? kr : room_r;
        if ((tf || tr) &&
            (grow_by((void **)&w->blocks, &w->cap_blocks, w->n_blocks, 1, sizeof *w->blocks) < 0 ||
             grow_by((void **)&w->rf, &w->cap_rf, w->n_rf, tf, sizeof *w->rf) < 0 ||
             grow_by((void **)&w->rr, &w->cap_rr, w->n_rr, tr, sizeof *w->rr) < 0))
            tf = tr = 0;
        w->rank_detail_left_out += (kf - tf) + (kr - tr);
        if (tf || tr) {
            w->blocks[w->n_blocks++] = (mw_rank_block_t){
                .rank = rank, .rf_off = w->n_rf, .rf_n = tf, .rr_off = w->n_rr, .rr_n = tr};
            for (uint32_t k = 0; k < tf; k++)
                w->rf[w->n_rf++] = (mw_rank_fn_entry_t){rank, pw->rf_fn[i + k], pw->rf_count[i + k],
                                                        pw->rf_ns[i + k], pw->rf_bytes[i + k]};
            for (uint32_t k = 0; k < tr; k++)
                w->rr[w->n_rr++] = (mw_rank_region_entry_t){rank,
                                                            pw->rr_region[j + k],
                                                            pw->rr_count[j + k],
                                                            pw->rr_incl_ns[j + k],
                                                            pw->rr_excl_ns[j + k],
                                                            pw->rr_mpi_ns[j + k]};
        }
        i += kf;
        j += kr;
    }
}

/* Regions and call sites of a partial (job ids already the parent's). */
static void window_add_partial_rs(mw_window_t *w, const Mpiwatch__Window *pw)
{
    w->regions_dropped = mw__rs_sat_add(w->regions_dropped, pw->regions_dropped);
    w->sites_dropped = mw__rs_sat_add(w->sites_dropped, pw->sites_dropped);
    for (size_t i = 0; i < pw->n_regions; i++) {
        const Mpiwatch__RegionStat *e = pw->regions[i];
        window_add_region(w, e->region, e->ranks, e->count, e->incl_ns, e->excl_ns, e->mpi_ns);
    }
    for (size_t i = 0; i < pw->n_sites; i++) {
        const Mpiwatch__SiteStat *e = pw->sites[i];
        int created;
        mw_site_sum_t *t = mw__index_get(&w->sites, (uint64_t)e->site << 32 | e->fn, &created);
        if (!t) {
            w->overflow++;
            continue;
        }
        if (created || e->top_rank_ns > t->top_rank_ns ||
            (e->top_rank_ns == t->top_rank_ns && e->top_rank < t->top_rank)) {
            t->top_rank = e->top_rank;
            t->top_rank_ns = e->top_rank_ns;
        }
        t->site = e->site;
        t->fn = e->fn;
        t->ranks += e->ranks;
        t->count = mw__rs_sat_add(t->count, e->count);
        t->ns = mw__rs_sat_add(t->ns, e->ns);
        t->bytes = mw__rs_sat_add(t->bytes, e->bytes);
        if (e->max_ns > t->max_ns)
            t->max_ns = e->max_ns;
    }
}

static int window_add_partial(mw_merge_t *m, mw_window_t *w, const mw_partial_in_t *in)
{
    const Mpiwatch__Window *pw = in->pw;
    /* The only allocation that can fail before anything is added: the ranks' list. */
    if (grow_by((void **)&w->rep, &w->cap_rep, w->n_rep, in->n_ranks, sizeof *w->rep) < 0)
        return -1;
    for (size_t i = 0; i < pw->n_traces; i++)
        window_add_trace(m, w, pw->traces[i]->rank, &in->traces[i]);
    if (pw->n_comms) {
        mw_trace_in_t cin = {.comms = (Mpiwatch__CommDef *const *)pw->comms};
        for (size_t i = 0; i < pw->n_comms; i++) {
            cin.n_comms = 1;
            cin.comms = (Mpiwatch__CommDef *const *)&pw->comms[i];
            window_add_trace(m, w, pw->comm_world_rank[i], &cin);
        }
    }
    w->ranks_reporting += in->n_ranks;
    w->records_dropped += pw->records_dropped;
    w->calls_late += pw->calls_late;
    w->samples_dropped += pw->samples_dropped;
    w->overflow += pw->overflow;
    w->mpi_time_ns += pw->mpi_time_ns;
    w->occ_total_ns += pw->occ_total_ns;

    for (size_t i = 0; i < in->n_fn_order; i++)
        window_mark(w, in->fn_order[i]);
    for (size_t i = 0; i < pw->n_functions; i++) {
        const Mpiwatch__FunctionStat *f = pw->functions[i];
        mw_fn_sum_t *sum = &w->fn[f->fn];
        window_mark(w, f->fn);
        mw__fn_stats_add(&sum->s, f);
        for (size_t b = 0; b < f->n_hist; b++)
            sum->hist[f->hist_first + b] += f->hist[b];
        if (f->spread_ranks) {
            spread_max(sum, sum->ranks == 0, f->rank_max, f->rank_max_ns);
            spread_add(sum, f->spread_ranks, f->spread_sum_ns,
                       (mw_u128_t)f->spread_sq_hi << 64 | f->spread_sq_lo);
        }
    }
    for (size_t i = 0; i < pw->n_occ_fn; i++) {
        window_mark(w, pw->occ_fn[i]);
        w->occ_ns[(size_t)pw->occ_fn[i] * w->subslots + pw->occ_sub[i]] += pw->occ_ns[i];
    }
    /* MPI shares: the partial's, rank by rank in list order (as each sample set its own). */
    size_t k = 0;
    for (size_t r = 0; r < in->n_ranges; r++)
        for (uint32_t j = 0; j < in->rank_count[r]; j++, k++) {
            uint32_t rank = in->rank_first[r] + j;
            uint32_t pm = k < in->n_rank_pm ? in->rank_pm[k] : MW_RANK_PM_NONE - 1;
            if (rank < w->n_rank_pm)
                w->rank_pm[rank] = pm;
            w->rep[w->n_rep++] = (mw_rank_share_t){rank, pm};
        }

    window_add_density(w, pw->n_density_fn, pw->density_fn, pw->density_sub, pw->density_bin,
                       pw->density_end, pw->density_count);
    /* Pairs: each source is a listed rank, whose pairs are new to the window (one sample, or
     * one partial, per rank and window), and the partial lists each (src, dst) once. */
    for (size_t i = 0; i < pw->n_pair_src; i++) {
        mw_pair_sum_t *p =
            mw__index_append(&w->pairs, (uint64_t)pw->pair_src[i] << 32 | pw->pair_dst[i]);
        if (!p) {
            w->overflow++;
            continue;
        }
        mw__pair_add(p, 1, pw->pair_src[i], pw->pair_dst[i], pw->pair_messages[i],
                     pw->pair_bytes[i]);
    }
    for (size_t i = 0; i < pw->n_fpair_src; i++) {
        mw_fpair_sum_t *p =
            mw__index_append(&w->fpairs, (uint64_t)pw->fpair_src[i] << 32 | pw->fpair_dst[i]);
        if (!p) {
            w->overflow++;
            continue;
        }
        *p = (mw_fpair_sum_t){pw->fpair_src[i], pw->fpair_dst[i], pw->fpair_fn[i],
                              pw->fpair_messages[i], pw->fpair_bytes[i]};
    }
    window_add_partial_rs(w, pw);
    window_add_partial_detail(m, w, pw);
    for (size_t i = 0; i < pw->n_longest; i++) {
        const Mpiwatch__Call *c = pw->longest[i];
        mw_merge_call_t call = {.rank = c->rank,
                                .fn = c->fn,
                                .peer = c->peer,
                                .start_ns = c->start_ns,
                                .duration_ns = c->duration_ns,
                                .bytes = c->bytes};
        longest_push(w, &call);
    }
    return 0;
}

int mw__merge_add_partial(mw_merge_t *m, const mw_partial_in_t *in, uint64_t now_ns)
{
    int64_t w = (int64_t)in->pw->index;
    m->now_ns = now_ns;
    merge_agg_partial(m, in, w, now_ns);
    merge_place(m, w);
    for (size_t r = 0; r < in->n_ranges; r++)
        for (uint32_t k = 0; k < in->rank_count[r]; k++)
            merge_progress(m, in->rank_first[r] + k, w);
    if (w < m->head) {
        m->late += in->n_ranks;
        m->frozen = 1;
        merge_close_ready(m);
        return 1;
    }
    mw_window_t *win = merge_open(m, w, now_ns);
    int rc = window_add_partial(m, win, in);
    if (w > m->max_seen)
        m->max_seen = w;
    merge_close_ready(m);
    return rc;
}

void mw__merge_leave(mw_merge_t *m, uint32_t rank)
{
    if (rank >= m->size || !m->expected[rank])
        return;
    merge_uncount(m, m->last[rank]);
    if (m->via && m->via[rank])
        m->aggs[m->via[rank] - 1].ranks--;
    m->expected[rank] = 0;
    merge_close_ready(m);
}

void mw__merge_tick(mw_merge_t *m, uint64_t now_ns)
{
    if (!m->started)
        return;
    m->now_ns = now_ns;
    /* The aggregators are looked at only once a window is past its deadline (the server's loop
     * ticks on every wake-up: with every partial in time, that costs nothing per aggregator). */
    int64_t owe = INT64_MAX;
    int owe_known = m->n_aggs == 0;
    int64_t due = -1;
    for (int64_t k = m->head; k <= m->max_seen; k++) {
        const mw_window_t *w = &m->ring[k & m->mask];
        uint64_t base = w->first_arrival_ns + m->lateness_ns;
        if (!w->open || base > now_ns)
            continue;
        if (!owe_known) {
            owe = merge_owing(m, now_ns, NULL);
            owe_known = 1;
        }
        if (!merge_waits(m, k, base, owe, now_ns))
            due = k;
    }
    while (m->head <= due) {
        if (m->n_aggs && m->ring[m->head & m->mask].open)
            merge_count_given_up(m, m->head);
        merge_advance(m, 0);
    }
    merge_close_ready(m);
}

void mw__merge_close_all(mw_merge_t *m)
{
    while (m->started && m->head <= m->max_seen)
        merge_advance(m, 0);
}

uint64_t mw__merge_next_deadline(const mw_merge_t *m)
{
    uint64_t next = UINT64_MAX;
    if (!m->started)
        return next;
    uint64_t gone = UINT64_MAX;
    int64_t owe = INT64_MAX;
    int owe_known = m->n_aggs == 0; /* looked at once a window is past its deadline (tick) */
    for (int64_t k = m->head; k <= m->max_seen; k++) {
        const mw_window_t *w = &m->ring[k & m->mask];
        if (!w->open)
            continue;
        uint64_t d = w->first_arrival_ns + m->lateness_ns;
        if (d <= m->now_ns && !owe_known) {
            owe = merge_owing(m, m->now_ns, &gone);
            owe_known = 1;
        }
        if (d <= m->now_ns && merge_waits(m, k, d, owe, m->now_ns)) {
            /* Waiting: until its wait ends or an aggregator it may wait for is gone. */
            uint64_t end = d + m->agg_wait_ns;
            d = gone < end ? gone : end;
        }
        if (d < next)
            next = d;
    }
    return next;
}
