/* record_fast.h: the common path of recording one call, inlined into every wrapper.
 *
 * DESIGN: the common case (the call ends in the thread's cached window, whose slot it owns,
 * the function already has a row, and the call lies in one sub-slot) is a few dozen
 * instructions with no call: inlining it saves the call and the register spills of a
 * function that also holds the rare paths. Everything rare is out of line in record.c.
 */
#ifndef MW_RECORD_FAST_H
#define MW_RECORD_FAST_H

/* record.c: the rare paths */
void mw__window_locate(mw_thread_t *t, uint64_t t1);
void mw__record_slow(mw_thread_t *t, unsigned fn, uint64_t t0, uint64_t t1, uint64_t d,
                     uint64_t bytes, int peer, int64_t closed);
unsigned char *mw__row_get(mw_slot_t *s, unsigned fn);
void mw__peer_add(mw_slot_t *s, unsigned fn, int peer, uint64_t bytes);
void mw__longest_add(mw_slot_t *s, unsigned fn, uint64_t t0, uint64_t d, uint64_t bytes, int peer);
void mw__sub_locate(mw_thread_t *t, uint64_t t1);
void mw__count_slow(mw_thread_t *t, unsigned fn, int64_t closed);
void mw__detail_spanning(mw_thread_t *t, unsigned char *row, unsigned fn, uint64_t t0, uint64_t t1,
                         unsigned bin, int64_t closed);

/* A call-site entry of a slot's table (callsites.c): open addressing on (return address, fn),
 * the hash's cell first; ra 0 is an empty cell. */
typedef struct {
    uint64_t ra;
    uint32_t fn, pad;
    uint64_t count, ns, bytes, max_ns;
    uint64_t pad2[2]; /* one cache line per entry */
} mw_site_t;
_Static_assert(sizeof(mw_site_t) == 64, "site is a fixed-size record");
void mw__site_slow(mw_thread_t *t, mw_slot_t *s, unsigned fn, uint64_t d, uint64_t bytes);
static inline uint32_t mw__site_hash(uint64_t ra, unsigned fn)
{
    return (uint32_t)(ra ^ (ra >> 11)) + fn;
}

/* Accounts the call to its site (t->ra): the common case, the site's cell already holds it,
 * is two compares and four updates; the rest is out of line (callsites.c). */
static inline __attribute__((always_inline)) void
mw__site_add(mw_thread_t *t, mw_slot_t *s, unsigned fn, uint64_t d, uint64_t bytes)
{
    mw_site_t *e =
        (mw_site_t *)((unsigned char *)s + t->site_off) + (mw__site_hash(t->ra, fn) & t->site_mask);
    if (__builtin_expect(e->ra == t->ra && e->fn == fn, 1)) {
        e->count++;
        e->ns += d;
        e->bytes += bytes;
        if (d > e->max_ns)
            e->max_ns = d;
    } else {
        mw__site_slow(t, s, fn, d, bytes);
    }
}

static inline __attribute__((always_inline)) void mw__busy_enter(mw_thread_t *t)
{
    /* Replaces the in-call marker too: the call is over. */
    atomic_store_explicit(&t->inflight, MW_INFLIGHT_BUSY, memory_order_relaxed);
    if (__builtin_expect(mw__g.need_fence, 0))
        atomic_thread_fence(memory_order_seq_cst);
    else
        atomic_signal_fence(memory_order_seq_cst); /* membarrier() orders it for the sender */
}

static inline __attribute__((always_inline)) void mw__busy_leave(mw_thread_t *t)
{
    atomic_store_explicit(&t->inflight, 0, memory_order_release);
}

static inline __attribute__((always_inline)) void mw__totals_add(mw_slot_t *s, unsigned fn,
                                                                 uint64_t d, uint64_t bytes)
{
    mw_fnstat_t *f = &s->fn[fn];
    if (~d > f->min_inv)
        f->min_inv = ~d;
    if (d > f->max_ns)
        f->max_ns = d;
    f->count++;
    f->total_ns += d;
    f->bytes += bytes;
}

/* Density and occupancy of a call that ends in the thread's current window; the histogram is
 * the density by end summed over sub-slots, so it costs nothing here. */
static inline __attribute__((always_inline)) void mw__detail_add(mw_thread_t *t, mw_slot_t *s,
                                                                 unsigned fn, uint64_t t0,
                                                                 uint64_t t1, uint64_t d,
                                                                 int64_t closed)
{
    unsigned r = s->row_of[fn];
    unsigned char *row;
    if (__builtin_expect(r != 0, 1)) {
        row = mw__slot_row(s, r - 1);
    } else {
        row = mw__row_get(s, fn);
        if (row == NULL) {
            s->dropped++;
            return;
        }
    }
    unsigned bin = mw__bin(d);
    if (__builtin_expect(t1 - t->sub_lo >= t->sub_hi - t->sub_lo, 0))
        mw__sub_locate(t, t1);
    if (__builtin_expect(t0 >= t->sub_lo, 1)) {
        /* The common case: the whole call lies in one sub-slot. */
        mw__row_same(row)[t->sub_i * MW_NBINS + bin]++;
        mw__row_occ(row)[t->sub_i] += t1 - t0;
        return;
    }
    mw__detail_spanning(t, row, fn, t0, t1, bin, closed);
}

/* Records one call. With tracing on (r, the thread's trace ring, not NULL) it also appends
 * the call's trace record x (trace.h: the wrapper fills kind, peer, tag, communicator,
 * request, bytes and flags; times and function are set here) and then the n records of
 * `more` (completions, second halves: at the call's end, duration 0 unless set), inside the
 * same busy bracket, so the sender sees all of them once it has waited for the thread.
 * mw__record() is a call without message details (MW_TK_CALL). Passing the ring the wrapper
 * already tested lets the compiler fold the two tests into one. */
static inline __attribute__((always_inline)) void
mw__record_tr(mw_thread_t *t, unsigned fn, uint64_t t0, uint64_t t1, uint64_t bytes, int peer,
              struct mw_tring *r, mw_trec_t *x, mw_trec_t *more, unsigned n)
{
    mw__busy_enter(t);
    uint64_t dt = t1 - t0;
    uint64_t d;
    /* Durations under 2^32 ticks (seconds) convert with one 64-bit multiply; a clock that
     * went backwards (t1 < t0, a huge dt) is taken as a zero-length call. */
    if (__builtin_expect(dt < (1ull << 32), 1)) {
        d = (dt * mw__g.mult) >> 32;
    } else if (t1 < t0) {
        t1 = t0;
        dt = d = 0;
    } else {
        d = mw__ticks_to_ns(dt);
    }
    t->mpi_ns += d; /* the MPI time code regions take differences of (regions.c) */
    if (__builtin_expect(t1 - t->cw_start >= t->cw_end - t->cw_start, 0))
        mw__window_locate(t, t1);
    int64_t closed = atomic_load_explicit(&mw__g.closed_upto, memory_order_relaxed);
    /* The cached slot was claimed for window cw, and the sender touches no slot above
     * `closed`: while cw > closed it is ours without looking at its tag. */
    mw_slot_t *s = t->cslot;
    if (__builtin_expect(t->cw <= closed || s == NULL, 0)) {
        mw__record_slow(t, fn, t0, t1, d, bytes, peer, closed);
    } else {
        mw__totals_add(s, fn, d, bytes);
        if (__builtin_expect(t->site_off != 0, 1)) /* call sites (docs/callsites.md) */
            mw__site_add(t, s, fn, d, bytes);
        if (peer >= 0)
            mw__peer_add(s, fn, peer, bytes);
        if (__builtin_expect(d > s->long_min, 0))
            mw__longest_add(s, fn, t0, d, bytes, peer);
        mw__detail_add(t, s, fn, t0, t1, d, closed);
    }
    if (__builtin_expect(r != NULL, 1)) {
        x->t0 = t0;
        x->t1 = t1;
        x->fn = (uint16_t)fn;
        mw__trace_put(r, x);
        for (unsigned i = 0; i < n; i++) {
            if (!more[i].t1)
                more[i].t0 = more[i].t1 = t1;
            more[i].fn = (uint16_t)fn;
            mw__trace_put(r, &more[i]);
        }
    }
    mw__busy_leave(t);
}

static inline __attribute__((always_inline)) void
mw__record(mw_thread_t *t, unsigned fn, uint64_t t0, uint64_t t1, uint64_t bytes, int peer)
{
    mw_trec_t x = {.bytes = bytes, .peer = peer, .kind = MW_TK_CALL};
    mw__record_tr(t, fn, t0, t1, bytes, peer, t->tring, &x, NULL, 0);
}

/* Local queries are counted, not timed, and read no clock: the count goes to the window of
 * the thread's last timed call (or the first open window), which is exact in total and off
 * by at most the time since that call in its placement. */
static inline __attribute__((always_inline)) void mw__count(mw_thread_t *t, unsigned fn)
{
    mw__busy_enter(t);
    int64_t closed = atomic_load_explicit(&mw__g.closed_upto, memory_order_relaxed);
    mw_slot_t *s = t->cslot;
    if (__builtin_expect(t->cw > closed && s != NULL, 1))
        s->fn[fn].count++;
    else
        mw__count_slow(t, fn, closed);
    mw__busy_leave(t);
}

#endif
