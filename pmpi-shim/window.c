/* window.c: collecting one window from every recording thread.
 *
 * DESIGN: the sender owns window k once it has published k as closed and every thread is
 * either outside mw__record() or has seen the new value: one membarrier() makes that true
 * without a fence on the hot path (see shim.h). It then merges each thread's slot for k (and
 * any slot left from an earlier window) into a per-rank accumulator, resets the slot for
 * reuse, and adds the part of window k spent inside calls that have not ended yet, so that
 * the timeline shows a long MPI_Recv while it is still waiting.
 */
#include "shim.h"

#include <linux/membarrier.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

uint32_t mw__row_end(unsigned char *row, unsigned sub, unsigned bin)
{
    return mw__row_same(row)[sub * MW_NBINS + bin] + mw__row_end_x(row)[sub * MW_NBINS + bin];
}

uint32_t mw__row_start(unsigned char *row, unsigned idx, unsigned bin)
{
    unsigned n = mw__g.cfg.subslots;
    uint32_t same = idx >= n ? mw__row_same(row)[(idx - n) * MW_NBINS + bin] : 0;
    return same + mw__row_start_x(row)[idx * MW_NBINS + bin];
}

void mw__row_hist(unsigned char *row, uint32_t hist[MW_NBINS])
{
    for (unsigned b = 0; b < MW_NBINS; b++)
        hist[b] = 0;
    for (unsigned sub = 0; sub < mw__g.cfg.subslots; sub++)
        for (unsigned b = 0; b < MW_NBINS; b++)
            hist[b] += mw__row_end(row, sub, b);
}

int mw__acc_init(acc_t *a)
{
    const mw_config_t *c = &mw__g.cfg;
    size_t size = (size_t)mw__g.size;
    memset(a, 0, sizeof *a);
    a->rows_cap = c->rows * 4u < MW_FN_COUNT ? c->rows * 4u : MW_FN_COUNT;
    a->rows = calloc(a->rows_cap, mw__g.row_bytes);
    a->longest = calloc(c->longest, sizeof *a->longest);
    /* (rank, function) entries: what the threads' peer tables can hold together, at most 32
     * sending functions per rank of the job and MW_WINDOW_MAX_RANK_ENTRIES. */
    size_t cap = (size_t)c->max_threads * c->peers;
    if (cap > size * 32u)
        cap = size * 32u;
    if (cap > MW_WINDOW_MAX_RANK_ENTRIES)
        cap = MW_WINDOW_MAX_RANK_ENTRIES;
    size_t cells = 2;
    while (cells < 2 * cap)
        cells <<= 1;
    a->peer_cap = (unsigned)cap;
    a->peer_tmask = (uint32_t)(cells - 1);
    a->peer_tab = calloc(cells, sizeof(uint32_t));
    a->peer_key = calloc(cap, sizeof(int32_t));
    a->peer_messages = calloc(cap, sizeof(uint64_t));
    a->peer_bytes = calloc(cap, sizeof(uint64_t));
    a->peer_list = calloc(cap, sizeof(uint32_t));
    a->peer_fn = calloc(cap, sizeof(uint32_t));
    if (!a->rows || !a->longest || !a->peer_messages || !a->peer_bytes || !a->peer_list ||
        !a->peer_fn || !a->peer_key || !a->peer_tab)
        return -1;
    return mw__acc_marks_init(&a->marks);
}

unsigned char *mw__acc_row(acc_t *a, unsigned fn)
{
    unsigned r = a->row_of[fn];
    if (r)
        return a->rows + (size_t)(r - 1) * mw__g.row_bytes;
    if (a->nrows >= a->rows_cap)
        return NULL;
    r = a->nrows++;
    a->row_of[fn] = (uint16_t)(r + 1);
    unsigned char *row = a->rows + (size_t)r * mw__g.row_bytes;
    *(uint32_t *)row = fn;
    return row;
}

static void acc_longest(acc_t *a, const mw_call_t *c)
{
    unsigned k = mw__g.cfg.longest;
    if (a->nlong < k) {
        a->longest[a->nlong++] = *c;
        return;
    }
    unsigned m = 0;
    for (unsigned j = 1; j < k; j++)
        if (a->longest[j].duration_ns < a->longest[m].duration_ns)
            m = j;
    if (c->duration_ns > a->longest[m].duration_ns)
        a->longest[m] = *c;
}

/* The accumulator's cell of a peer key: its entry index + 1, or 0 at an empty cell. */
static uint32_t *acc_peer_cell(acc_t *a, int32_t key)
{
    uint32_t h = ((uint32_t)key * 2654435761u) & a->peer_tmask;
    while (a->peer_tab[h] && a->peer_key[a->peer_tab[h] - 1] != key)
        h = (h + 1) & a->peer_tmask;
    return &a->peer_tab[h];
}

static void acc_peer(acc_t *a, int32_t key, uint64_t messages, uint64_t bytes)
{
    int32_t rank = MW_PEER_KEY_RANK(key);
    if (rank < 0 || rank >= mw__g.size)
        return;
    uint32_t *cell = acc_peer_cell(a, key);
    if (!*cell) {
        if (a->npeers >= a->peer_cap) {
            a->dropped++;
            return;
        }
        unsigned i = a->npeers++;
        a->peer_key[i] = key;
        a->peer_list[i] = (uint32_t)rank;
        a->peer_fn[i] = MW_PEER_KEY_FN(key);
        a->peer_messages[i] = a->peer_bytes[i] = 0;
        *cell = i + 1;
    }
    a->peer_messages[*cell - 1] += messages;
    a->peer_bytes[*cell - 1] += bytes;
}

/* Adds one thread's slot to the rank's accumulator. */
static void acc_merge(acc_t *a, mw_slot_t *s)
{
    for (unsigned f = 1; f < MW_FN_COUNT; f++)
        mw__fnstat_add(&a->fn[f], &s->fn[f]);
    size_t n32 = 4u * mw__g.cfg.subslots * MW_NBINS, nocc = mw__g.cfg.subslots;
    for (uint32_t r = 0; r < s->nrows; r++) {
        unsigned char *src = mw__slot_row(s, r);
        unsigned char *dst = mw__acc_row(a, *(uint32_t *)src);
        if (!dst) {
            a->dropped++;
            continue;
        }
        uint64_t *o0 = mw__row_occ(src), *o1 = mw__row_occ(dst);
        for (size_t i = 0; i < nocc; i++)
            o1[i] += o0[i];
        uint32_t *d0 = mw__row_same(src), *d1 = mw__row_same(dst);
        for (size_t i = 0; i < n32; i++) /* same, end_x and start_x are contiguous */
            d1[i] += d0[i];
    }
    mw_peer_t *p = mw__slot_peers(s);
    if (s->npeers)
        for (unsigned i = 0; i < mw__g.cfg.peers; i++)
            if (p[i].key)
                acc_peer(a, p[i].key, p[i].messages, p[i].bytes);
    mw_call_t *l = mw__slot_longest(s);
    for (unsigned i = 0; i < s->nlong; i++)
        acc_longest(a, &l[i]);
    a->dropped += s->dropped;
    a->late += s->late;
    mw__regions_merge(s);
    mw__sites_merge(s);
}

void mw__acc_clear(acc_t *a)
{
    for (unsigned r = 0; r < a->nrows; r++) {
        unsigned char *row = a->rows + (size_t)r * mw__g.row_bytes;
        a->row_of[*(uint32_t *)row] = 0;
        memset(row, 0, mw__g.row_bytes);
    }
    /* The cells are found before any is emptied: an emptied cell would cut a later key's probe
     * sequence. peer_list (the ranks, sent by now) holds their positions meanwhile. */
    for (unsigned i = 0; i < a->npeers; i++)
        a->peer_list[i] = (uint32_t)(acc_peer_cell(a, a->peer_key[i]) - a->peer_tab);
    for (unsigned i = 0; i < a->npeers; i++)
        a->peer_tab[a->peer_list[i]] = 0;
    memset(a->fn, 0, sizeof a->fn);
    a->nrows = a->nlong = a->npeers = 0;
    a->dropped = a->late = 0;
    mw__acc_marks_clear(&a->marks);
}

/* Waits until thread t is not inside mw__record(). The wait is the length of one record call
 * unless the thread was descheduled in it; after ~50 ms the slot is left for the next round. */
static int wait_quiet(mw_thread_t *t)
{
    for (int i = 0; i < 5000; i++) {
        if (atomic_load_explicit(&t->inflight, memory_order_acquire) != MW_INFLIGHT_BUSY)
            return 0;
        if (i > 100) {
            struct timespec ts = {0, 10000};
            nanosleep(&ts, NULL);
        }
    }
    return -1;
}

/* Collects window k (and any slot left behind from before it) from every thread. */
void mw__collect(acc_t *acc, int64_t k)
{
    atomic_store(&mw__g.closed_upto, k);
    if (!mw__g.need_fence)
        syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
    unsigned n = atomic_load(&mw__g.nthreads);
    if (n > mw__g.cfg.max_threads)
        n = mw__g.cfg.max_threads;
    unsigned si = mw__seg_of_index(k);
    const mw_seg_t *sg = &mw__g.seg[si];
    uint64_t wstart = mw_grid_seg_start(&mw__g.grid[si], (uint64_t)k);
    uint64_t lo = mw__global_to_ticks(wstart);
    uint64_t hi = mw__global_to_ticks(wstart + mw__g.grid[si].window_ns);
    for (unsigned i = 0; i < n; i++) {
        mw_thread_t *t = mw__thread(i);
        if (wait_quiet(t) != 0)
            continue;
        /* The marking thread's slots go in window order: its step marks are snapshots that
         * must be made cumulative over the slots of this collection (steps.c). */
        int marking = t == mw__steps.thread &&
                      atomic_load_explicit(&mw__steps.mode, memory_order_relaxed) != MW_STEP_NONE;
        mw_slot_t *order[MW_RING];
        uint64_t tags[MW_RING];
        unsigned nslots = 0;
        for (unsigned r = 0; r < MW_RING; r++) {
            mw_slot_t *s = mw__slot(t, r);
            uint64_t tag = atomic_load_explicit(&s->tag, memory_order_acquire);
            if (tag == 0 || (int64_t)(tag - 1) > k)
                continue;
            unsigned at = nslots++;
            for (; at > 0 && tags[at - 1] > tag; at--) {
                order[at] = order[at - 1];
                tags[at] = tags[at - 1];
            }
            order[at] = s;
            tags[at] = tag;
        }
        for (unsigned r = 0; r < nslots; r++) {
            acc_merge(acc, order[r]);
            if (marking)
                mw__acc_marks_merge(&acc->marks, order[r]);
            mw__capture_take(t, order[r], k); /* its trace, when k is captured */
            mw__slot_reset(order[r]);
        }
        /* A call still in progress occupies its function up to the end of this window. */
        uint64_t marker = atomic_load_explicit(&t->inflight, memory_order_acquire);
        unsigned fn = (unsigned)(marker & ((1u << MW_INFLIGHT_FN_BITS) - 1));
        uint64_t t0 = mw__inflight_start(marker, mw__now());
        if (fn && fn < MW_FN_COUNT && t0 < hi) {
            unsigned char *row = mw__acc_row(acc, fn);
            uint64_t a = t0 > lo ? t0 : lo;
            if (row) {
                uint64_t *occ = mw__row_occ(row);
                unsigned ns = mw__g.cfg.subslots;
                for (unsigned sub = 0; sub < ns; sub++) {
                    uint64_t b0 = lo + sub * sg->sub_ticks;
                    uint64_t b1 = sub + 1 < ns ? b0 + sg->sub_ticks : hi;
                    uint64_t x = a > b0 ? a : b0;
                    if (b1 > x)
                        occ[sub] += b1 - x;
                }
            }
        }
    }
    uint64_t cd = atomic_load(&mw__g.calls_dropped), td = atomic_load(&mw__g.threads_dropped);
    acc->dropped += (cd - acc->seen_calls_dropped) + (td - acc->seen_threads_dropped);
    acc->seen_calls_dropped = cd;
    acc->seen_threads_dropped = td;
}
