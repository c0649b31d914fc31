/* record.c: the hot path. One call of mw__record() per timed MPI call.
 *
 * DESIGN: a call belongs to the window in which it ends. The calling thread finds that
 * window's slot in its own ring (ring index = window mod MW_RING) and updates it: exact
 * per-function totals, the peer table for sends, the K longest calls, and, for the first
 * `rows` distinct functions of the window, a log2 duration histogram, time inside the function
 * per sub-slot (occupancy, split across sub-slots and across windows that are still open),
 * and call density by start and by end. A call that ends in a window the sender has already
 * collected goes into the next open window and is counted as late, so counts stay exact.
 * Nothing here locks, allocates, logs or enters the kernel; the `busy` counter brackets the
 * writes for the sender (see shim.h). The window grid (its segments, changed by
 * mpiwatch.window, grid.c) is looked up only on the slow paths, where the window of a time or
 * the bounds of a window are computed; the common path only compares with the thread's cached
 * window bounds.
 */
#include "shim.h"

#include <string.h>
#include <sys/mman.h>

mw_global_t mw__g;
mw_trace_global_t mw__trace;
__thread mw_thread_t *mw__tls __attribute__((tls_model("initial-exec")));
static __thread int tls_refused __attribute__((tls_model("initial-exec")));

static size_t round64(size_t n)
{
    return (n + 63u) & ~(size_t)63u;
}

/* Computes the memory layout from the configuration and maps the thread arena. Pages are
 * touched only by threads that record, so an unused thread block costs no memory. */
int mw__alloc(void)
{
    const mw_config_t *c = &mw__g.cfg;
    size_t sub = c->subslots;
    mw__g.row_same = 8 + sub * sizeof(uint64_t);
    mw__g.row_end_x = mw__g.row_same + sub * MW_NBINS * sizeof(uint32_t);
    mw__g.row_start_x = mw__g.row_end_x + sub * MW_NBINS * sizeof(uint32_t);
    mw__g.row_bytes = round64(mw__g.row_start_x + 2 * sub * MW_NBINS * sizeof(uint32_t));
    mw__g.slot_longest = round64(sizeof(mw_slot_t));
    mw__g.slot_peers = mw__g.slot_longest + round64(c->longest * sizeof(mw_call_t));
    mw__g.slot_rows = mw__g.slot_peers + round64(c->peers * sizeof(mw_peer_t));
    size_t marks = round64(mw__g.slot_rows + c->rows * mw__g.row_bytes);
    size_t regions = round64(marks + mw__steps_layout(marks));
    size_t sites = round64(regions + mw__regions_layout(regions));
    mw__g.slot_bytes = round64(sites + mw__sites_layout(sites));
    mw__g.thread_bytes = round64(sizeof(mw_thread_t)) + MW_RING * mw__g.slot_bytes;
    size_t total = mw__g.thread_bytes * c->max_threads;
    void *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED)
        return -1;
    mw__g.arena = p;
    if (mw__trace.on && mw__trace_alloc(c->max_threads) != 0)
        mw__trace.on = 0; /* the summaries go on without the trace */
    return 0;
}

/* The trace rings (trace.h), one per possible thread, mapped once like the thread arena and
 * touched only by threads that record: a thread costs the pages its records have reached. */
int mw__trace_alloc(unsigned max_threads)
{
    mw__trace.ring_bytes =
        round64(sizeof(mw_tring_t) + (size_t)mw__trace.ring_size * sizeof(mw_trec_t)) +
        round64(mw__tstate_bytes());
    size_t total = mw__trace.ring_bytes * max_threads;
    void *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED) {
        mw__log("cannot map %u trace rings of %zu bytes; tracing is off", max_threads,
                mw__trace.ring_bytes);
        return -1;
    }
    mw__trace.rings = p;
    mw__trace.nrings = max_threads;
    unsigned bits = 0;
    while ((1u << bits) < max_threads)
        bits++;
    mw__trace.req_shift = 32u - bits; /* thread index in the high bits of a request number */
    return 0;
}

void mw__unrecorded_add(unsigned fn)
{
    if (fn == 0 || fn >= MW_FN_COUNT)
        return;
    atomic_fetch_add_explicit(&mw__g.unrecorded[fn], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&mw__g.unrecorded_total, 1, memory_order_release);
}

mw_thread_t *mw__thread_attach(unsigned fn)
{
    if (tls_refused) {
        if (fn) /* a call, as docs/shim.md says: every call of a refused thread is dropped */
            atomic_fetch_add_explicit(&mw__g.threads_dropped, 1, memory_order_relaxed);
        mw__unrecorded_add(fn);
        return NULL;
    }
    unsigned i = atomic_fetch_add(&mw__g.nthreads, 1);
    if (i >= mw__g.cfg.max_threads) {
        atomic_fetch_sub(&mw__g.nthreads, 1);
        atomic_fetch_add(&mw__g.threads_dropped, 1);
        tls_refused = 1;
        mw__unrecorded_add(fn);
        return NULL;
    }
    /* The block is zero (fresh mapping): every slot is free, and the cached window is empty
     * (cw_start == cw_end), so the first record locates its window. */
    mw_thread_t *t = mw__thread(i);
    if (mw__trace.on && mw__trace.rings) {
        mw_tring_t *r = mw__tring(i);
        r->tidx = i;
        r->tstate = (unsigned char *)r + mw__trace.ring_bytes - round64(mw__tstate_bytes());
        t->tring = r;
    }
    mw__sites_thread(t);
    mw__tls = t;
    return t;
}

/* Zeroes what a collected slot used, leaving untouched pages untouched. */
void mw__slot_reset(mw_slot_t *s)
{
    for (uint32_t r = 0; r < s->nrows; r++) {
        unsigned char *row = mw__slot_row(s, r);
        uint32_t fn = *(uint32_t *)row;
        s->row_of[fn] = 0;
        memset(row, 0, mw__g.row_bytes);
    }
    if (s->npeers)
        memset(mw__slot_peers(s), 0, mw__g.cfg.peers * sizeof(mw_peer_t));
    memset(mw__slot_longest(s), 0, s->nlong * sizeof(mw_call_t));
    for (unsigned f = 1; f < MW_FN_COUNT; f++)
        if (s->fn[f].count)
            memset(&s->fn[f], 0, sizeof s->fn[f]);
    s->dropped = s->late = 0;
    s->nrows = s->nlong = s->long_min_i = s->npeers = 0;
    s->nmarks = s->mark_fn_used = s->mark_peer_used = 0; /* the pools are overwritten */
    s->long_min = 0;
    s->ntrace = s->trace_lost = 0; /* the trace itself is overwritten (capture.c) */
    mw__regions_slot_reset(s);
    mw__sites_slot_reset(s);
    atomic_store_explicit(&s->tag, 0, memory_order_release);
}

/* A segment's sub-slot length and multiplier, from its window length. */
void mw__seg_ticks(unsigned i)
{
    mw_seg_t *sg = &mw__g.seg[i];
    unsigned n = mw__g.cfg.subslots;
    uint64_t ticks = mw__ns_to_ticks(mw__g.grid[i].window_ns);
    if (ticks < n)
        ticks = n;
    sg->sub_ticks = ticks / n;
    sg->sub_mult = (uint64_t)(((unsigned __int128)1 << 32) / sg->sub_ticks);
}

void mw__grid_init(uint64_t window_ns, unsigned subslots)
{
    mw__g.window_ns = window_ns;
    mw__g.cfg.subslots = subslots;
    mw__g.grid[0] = (mw_grid_seg_t){.first = 0, .start_ns = 0, .window_ns = window_ns};
    mw__seg_ticks(0);
    atomic_store_explicit(&mw__g.nseg, 1, memory_order_release);
}

/* The published segments, searched from the newest (proto/mw_grid.c): a job has at most
 * MW_GRID_MAX_SEGMENTS and the present is in the last one. Negative indices (closed_upto
 * before the first window) belong to the first segment. The unsigned arithmetic of mw_grid.h
 * gives the same bits as signed arithmetic would for them. */
unsigned mw__seg_of_index(int64_t k)
{
    unsigned n = atomic_load_explicit(&mw__g.nseg, memory_order_acquire);
    return k < 0 ? 0 : mw_grid_find(mw__g.grid, n, (uint64_t)k);
}

unsigned mw__seg_of_time(uint64_t g)
{
    unsigned n = atomic_load_explicit(&mw__g.nseg, memory_order_acquire);
    return mw_grid_find_time(mw__g.grid, n, g);
}

uint64_t mw__grid_start(int64_t k)
{
    return mw_grid_seg_start(&mw__g.grid[mw__seg_of_index(k)], (uint64_t)k);
}

uint64_t mw__grid_len(int64_t k)
{
    return mw__g.grid[mw__seg_of_index(k)].window_ns;
}

int64_t mw__grid_index(uint64_t g)
{
    return (int64_t)mw_grid_seg_index(&mw__g.grid[mw__seg_of_time(g)], g);
}

int64_t mw__grid_first_from(uint64_t g)
{
    int64_t k = mw__grid_index(g);
    return mw__grid_start(k) < g ? k + 1 : k;
}

unsigned mw__sub_of(const mw_seg_t *sg, uint64_t off)
{
    uint64_t i = (uint64_t)(((unsigned __int128)off * sg->sub_mult) >> 32);
    uint64_t n = mw__g.cfg.subslots;
    if (i >= n)
        return (unsigned)n - 1;
    if (off >= (i + 1) * sg->sub_ticks && i + 1 < n)
        i++;
    else if (off < i * sg->sub_ticks)
        i--;
    return (unsigned)i;
}

/* Start of sub-slot i of the window of segment sg that starts at wstart; sub-slot n is the
 * window's end. */
static inline uint64_t sub_start(const mw_seg_t *sg, uint64_t wstart, uint64_t wend, unsigned i)
{
    return i >= mw__g.cfg.subslots ? wend : wstart + i * sg->sub_ticks;
}

/* The slot of window w, claimed for this thread, or NULL when the sender still owns it. */
static mw_slot_t *slot_get(mw_thread_t *t, int64_t w)
{
    mw_slot_t *s = mw__slot(t, (uint64_t)w);
    uint64_t tag = atomic_load_explicit(&s->tag, memory_order_acquire);
    if (tag == (uint64_t)w + 1)
        return s;
    if (tag != 0)
        return NULL;
    atomic_store_explicit(&s->tag, (uint64_t)w + 1, memory_order_relaxed);
    return s;
}

/* Slow path: the call ended outside the cached window; find its window and bounds. */
void mw__window_locate(mw_thread_t *t, uint64_t t1)
{
    uint64_t g = mw__global_ns(t1);
    unsigned i = mw__seg_of_time(g);
    const mw_grid_seg_t *gs = &mw__g.grid[i];
    int64_t w = (int64_t)mw_grid_seg_index(gs, g);
    uint64_t ws = mw_grid_seg_start(gs, (uint64_t)w);
    t->cw = w;
    t->cseg = &mw__g.seg[i];
    t->cw_start = mw__global_to_ticks(ws);
    t->cw_end = mw__global_to_ticks(ws + gs->window_ns);
    if (t->cw_end <= t->cw_start)
        t->cw_end = t->cw_start + 1;
    t->sub_lo = t->sub_hi = 0;
    /* Claim the slot now, so the common path needs no tag check; a window the sender has
     * already collected is recorded as late by the slow path instead. */
    int64_t closed = atomic_load_explicit(&mw__g.closed_upto, memory_order_relaxed);
    /* A captured window keeps no cached slot: all its calls take mw__record_slow(), which
     * traces them (capture.c). That is how a capture costs the common path nothing. */
    t->cslot = w > closed && !mw__capture_has(w) ? slot_get(t, w) : NULL;
}

unsigned char *mw__row_get(mw_slot_t *s, unsigned fn)
{
    unsigned r = s->row_of[fn];
    if (__builtin_expect(r != 0, 1))
        return mw__slot_row(s, r - 1);
    if (s->nrows >= mw__g.cfg.rows)
        return NULL;
    r = s->nrows++;
    s->row_of[fn] = (uint8_t)(r + 1);
    unsigned char *row = mw__slot_row(s, r);
    *(uint32_t *)row = fn;
    return row;
}

/* Adds the time [a, b) (ticks, inside the window [wstart, wend)) to a row's occupancy,
 * split at sub-slot boundaries. */
static void occupy(const mw_seg_t *sg, unsigned char *row, uint64_t wstart, uint64_t wend,
                   uint64_t a, uint64_t b)
{
    uint64_t *occ = mw__row_occ(row);
    unsigned sa = mw__sub_of(sg, a - wstart), sb = mw__sub_of(sg, b - wstart);
    for (unsigned s = sa; s <= sb; s++) {
        uint64_t lo = sub_start(sg, wstart, wend, s), hi = sub_start(sg, wstart, wend, s + 1);
        uint64_t x = a > lo ? a : lo, y = b < hi ? b : hi;
        if (y > x)
            occ[s] += y - x;
    }
}

/* Occupancy of the part of a call that lies in earlier windows that are still open. */
static void occupy_earlier(mw_thread_t *t, unsigned fn, uint64_t t0, int64_t w, int64_t closed)
{
    int64_t first = mw__grid_index(mw__global_ns(t0));
    if (first <= closed)
        first = closed + 1;
    if (first < w - (int64_t)MW_RING + 1)
        first = w - (int64_t)MW_RING + 1;
    for (int64_t v = first; v < w; v++) {
        mw_slot_t *s = slot_get(t, v);
        unsigned char *row = s ? mw__row_get(s, fn) : NULL;
        if (!row) {
            if (s)
                s->dropped++;
            continue;
        }
        unsigned si = mw__seg_of_index(v);
        const mw_grid_seg_t *gs = &mw__g.grid[si];
        uint64_t vs = mw_grid_seg_start(gs, (uint64_t)v);
        uint64_t lo = mw__global_to_ticks(vs);
        uint64_t hi = mw__global_to_ticks(vs + gs->window_ns);
        uint64_t a = t0 > lo ? t0 : lo;
        if (hi > a)
            occupy(&mw__g.seg[si], row, lo, hi, a, hi);
    }
}

void mw__longest_add(mw_slot_t *s, unsigned fn, uint64_t t0, uint64_t d, uint64_t bytes, int peer)
{
    mw_call_t *l = mw__slot_longest(s);
    unsigned k = mw__g.cfg.longest, i;
    if (s->nlong < k) {
        i = s->nlong++;
    } else {
        if (d <= s->long_min)
            return;
        i = s->long_min_i;
    }
    l[i] = (mw_call_t){
        .fn = fn, .peer = peer, .start_ns = mw__global_ns(t0), .duration_ns = d, .bytes = bytes};
    if (s->nlong == k) {
        unsigned m = 0;
        for (unsigned j = 1; j < k; j++)
            if (l[j].duration_ns < l[m].duration_ns)
                m = j;
        s->long_min_i = m;
        s->long_min = l[m].duration_ns;
    }
}

/* One entry per (sending function, destination), key MW_PEER_KEY (shim.h). */
void mw__peer_add(mw_slot_t *s, unsigned fn, int peer, uint64_t bytes)
{
    mw_peer_t *p = mw__slot_peers(s);
    uint32_t mask = mw__g.cfg.peers - 1, key = (uint32_t)MW_PEER_KEY(fn, peer);
    uint32_t h = (key * 2654435761u) & mask;
    for (unsigned probe = 0; probe < 16; probe++, h = (h + 1) & mask) {
        if (p[h].key == (int32_t)key) {
            p[h].messages++;
            p[h].bytes += bytes;
            return;
        }
        if (p[h].key == 0) {
            p[h].key = (int32_t)key;
            p[h].messages = 1;
            p[h].bytes = bytes;
            s->npeers++;
            return;
        }
    }
    s->dropped++;
}

void mw__sub_locate(mw_thread_t *t, uint64_t t1)
{
    t->sub_i = mw__sub_of(t->cseg, t1 - t->cw_start);
    t->sub_lo = sub_start(t->cseg, t->cw_start, t->cw_end, t->sub_i);
    t->sub_hi = sub_start(t->cseg, t->cw_start, t->cw_end, t->sub_i + 1);
}

void mw__detail_spanning(mw_thread_t *t, unsigned char *row, unsigned fn, uint64_t t0, uint64_t t1,
                         unsigned bin, int64_t closed)
{
    unsigned se = t->sub_i, n = mw__g.cfg.subslots;
    mw__row_end_x(row)[se * MW_NBINS + bin]++;
    if (t0 >= t->cw_start) {
        unsigned ss = mw__sub_of(t->cseg, t0 - t->cw_start);
        mw__row_start_x(row)[(n + ss) * MW_NBINS + bin]++;
        occupy(t->cseg, row, t->cw_start, t->cw_end, t0, t1);
    } else {
        /* Started in an earlier window: density index counts whole sub-slots back. */
        uint64_t back = t->cw_start - t0;
        uint64_t sub = t->cseg->sub_ticks;
        uint64_t subs = (back + sub - 1) / sub;
        unsigned idx = subs >= n ? 0 : n - (unsigned)subs;
        mw__row_start_x(row)[idx * MW_NBINS + bin]++;
        occupy(t->cseg, row, t->cw_start, t->cw_end, t->cw_start, t1);
        occupy_earlier(t, fn, t0, t->cw, closed);
    }
}

/* Everything but the common case: a late call, the first call of a window, a slot the sender
 * has not given back. Kept out of line so the common path stays short. */
/* Any slot of the ring this thread may still write: one holding a window the sender has not
 * closed, or a free one, claimed for the first window above `closed` that maps to it. A slot
 * whose window is closed but not yet reset belongs to the sender. */
static mw_slot_t *slot_any(mw_thread_t *t, int64_t closed)
{
    for (int64_t v = closed + 1; v < closed + 1 + (int64_t)MW_RING; v++) {
        mw_slot_t *s = mw__slot(t, (uint64_t)v);
        uint64_t tag = atomic_load_explicit(&s->tag, memory_order_acquire);
        if (tag != 0 && (int64_t)(tag - 1) > closed)
            return s;
        if (tag == 0) {
            atomic_store_explicit(&s->tag, (uint64_t)v + 1, memory_order_relaxed);
            return s;
        }
    }
    return NULL;
}

void mw__record_slow(mw_thread_t *t, unsigned fn, uint64_t t0, uint64_t t1, uint64_t d,
                     uint64_t bytes, int peer, int64_t closed)
{
    int late = t->cw <= closed;
    mw_slot_t *s = slot_get(t, late ? closed + 1 : t->cw);
    if (s && !late && !mw__capture_has(t->cw))
        t->cslot = s;
    if (s == NULL) {
        /* The sender is MW_RING windows behind: count the call in another window rather than
         * lose it. */
        s = slot_any(t, closed);
        if (s == NULL) {
            atomic_fetch_add_explicit(&mw__g.calls_dropped, 1, memory_order_relaxed);
            mw__unrecorded_add(fn);
            return;
        }
        late = 1;
    }
    mw__totals_add(s, fn, d, bytes);
    if (t->site_off)
        mw__site_add(t, s, fn, d, bytes);
    if (mw__capture_has((int64_t)atomic_load_explicit(&s->tag, memory_order_relaxed) - 1))
        mw__capture_add(t, s, fn, t0, d, bytes, peer);
    if (peer >= 0)
        mw__peer_add(s, fn, peer, bytes);
    if (d > s->long_min)
        mw__longest_add(s, fn, t0, d, bytes, peer);
    if (late)
        s->late++;
    else
        mw__detail_add(t, s, fn, t0, t1, d, closed);
}

/* The slot a call ending in the cached window would go to, chosen as mw__record() and
 * mw__record_slow() choose it, so that a step mark snapshots exactly the calls before it. */
mw_slot_t *mw__slot_now(mw_thread_t *t, int64_t closed)
{
    if (t->cw > closed && t->cslot)
        return t->cslot;
    int late = t->cw <= closed;
    mw_slot_t *s = slot_get(t, late ? closed + 1 : t->cw);
    if (s && !late && !mw__capture_has(t->cw))
        t->cslot = s;
    return s ? s : slot_any(t, closed);
}

/* A counted call whose thread's cached window is closed or not yet claimed. */
void mw__count_slow(mw_thread_t *t, unsigned fn, int64_t closed)
{
    mw_slot_t *s = slot_get(t, t->cw > closed ? t->cw : closed + 1);
    if (!s)
        s = slot_any(t, closed);
    if (s) {
        s->fn[fn].count++;
    } else {
        atomic_fetch_add_explicit(&mw__g.calls_dropped, 1, memory_order_relaxed);
        mw__unrecorded_add(fn);
    }
    if (s && t->cw > closed &&
        atomic_load_explicit(&s->tag, memory_order_relaxed) == (uint64_t)t->cw + 1 &&
        !mw__capture_has(t->cw))
        t->cslot = s;
}
