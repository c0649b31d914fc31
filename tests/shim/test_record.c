/* test_record.c: the recorder's accounting, window by window.
 *
 * The timer is put in clock_gettime mode with a zero offset, so ticks, local ns and global
 * ns are the same numbers and the tests can place calls at exact times. The multi-threaded
 * test uses the real clock and a real collecting thread to check the hand-over protocol:
 * every call is counted exactly once, whatever window edge it lands on.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

#define W 1000000ull /* 1 ms windows */
static acc_t acc;

static void setup_recorder(unsigned window_ns, unsigned subslots)
{
    static int mapped;
    if (!mapped) {
        memset(&mw__g, 0, sizeof mw__g);
        mw__config_read(&mw__g.cfg);
        mw__g.cfg.subslots = subslots;
        mw__g.cfg.longest = 4;
        mw__g.cfg.max_threads = 8;
        mw__g.size = 8;
        mw__timer_init(2);
        mw__g.offset_ns = 0;
        mw__g.need_fence = 1;
        assert_int_equal(mw__alloc(), 0);
        assert_int_equal(mw__acc_init(&acc), 0);
        mapped = 1;
    }
    mw__grid_init(window_ns, subslots);
    mw__set_state(1, 0);
    mw__acc_clear(&acc);
}

static mw_thread_t *self(void)
{
    mw_thread_t *t = mw__self(0);
    assert_non_null(t);
    return t;
}

/* Collects every window up to and including k. */
static void collect_to(int64_t from, int64_t k)
{
    for (int64_t w = from; w <= k; w++)
        mw__collect(&acc, w);
}

static uint64_t occ_of(unsigned fn, unsigned sub)
{
    unsigned char *row = mw__acc_row(&acc, fn);
    assert_non_null(row);
    return mw__row_occ(row)[sub];
}

static void test_exact_totals(void **state)
{
    (void)state;
    setup_recorder(W, 10);
    int64_t w = 1000;
    atomic_store(&mw__g.closed_upto, w - 1);
    mw_thread_t *t = self();
    uint64_t base = (uint64_t)w * W, total = 0;
    for (uint64_t d = 1; d <= 1000; d++) {
        mw__record(t, MW_ID_Allreduce, base + 100, base + 100 + d, 8, -1);
        total += d;
    }
    mw__collect(&acc, w);
    mw_fnstat_t *f = &acc.fn[MW_ID_Allreduce];
    assert_int_equal(f->count, 1000);
    assert_int_equal(f->total_ns, total);
    assert_int_equal(mw__fn_min(f), 1);
    assert_int_equal(f->max_ns, 1000);
    assert_int_equal(f->bytes, 8000);
    uint32_t h[MW_NBINS];
    mw__row_hist(mw__acc_row(&acc, MW_ID_Allreduce), h);
    uint64_t sum = 0;
    for (unsigned b = 0; b < MW_NBINS; b++)
        sum += h[b];
    assert_int_equal(sum, 1000);
    /* quarter octaves (proto/mw_bins.h): below 4 ns exact, then 4 bins per factor 2 */
    assert_int_equal(h[0], 1); /* d = 1 */
    assert_int_equal(h[1], 0);
    assert_int_equal(h[4], 1);    /* d = 2 */
    assert_int_equal(h[6], 1);    /* d = 3 */
    assert_int_equal(h[8], 1);    /* d = 4 */
    assert_int_equal(h[11], 1);   /* d = 7 */
    assert_int_equal(h[36], 128); /* 512..639 */
    assert_int_equal(h[37], 128); /* 640..767 */
    assert_int_equal(h[38], 128); /* 768..895 */
    assert_int_equal(h[39], 105); /* 896..1000 */
    assert_int_equal(acc.late, 0);
    assert_int_equal(acc.dropped, 0);
}

static void test_occupancy_split(void **state)
{
    (void)state;
    setup_recorder(W, 10);
    int64_t w = 1500;
    atomic_store(&mw__g.closed_upto, w - 1);
    mw_thread_t *t0 = self();
    uint64_t b0 = (uint64_t)w * W;
    /* One call inside sub-slot 3: density by start and by end both in sub-slot 3. */
    mw__record(t0, MW_ID_Bcast, b0 + 3 * W / 10 + 5, b0 + 3 * W / 10 + 500, 0, -1);
    mw__collect(&acc, w);
    unsigned char *r0 = mw__acc_row(&acc, MW_ID_Bcast);
    assert_int_equal(mw__row_end(r0, 3, mw__bin(495)), 1);
    assert_int_equal(mw__row_start(r0, 10 + 3, mw__bin(495)), 1);
    assert_int_equal(mw__row_start(r0, 3, mw__bin(495)), 0);
    assert_int_equal(occ_of(MW_ID_Bcast, 3), 495);
    mw__acc_clear(&acc);
    w = 2000;
    atomic_store(&mw__g.closed_upto, w - 1);
    mw_thread_t *t = self();
    uint64_t base = (uint64_t)w * W, sub = W / 10;
    /* From the middle of sub-slot 2 to the middle of sub-slot 4. */
    mw__record(t, MW_ID_Barrier, base + 2 * sub + sub / 2, base + 4 * sub + sub / 2, 0, -1);
    mw__collect(&acc, w);
    assert_int_equal(occ_of(MW_ID_Barrier, 2), sub / 2);
    assert_int_equal(occ_of(MW_ID_Barrier, 3), sub);
    assert_int_equal(occ_of(MW_ID_Barrier, 4), sub / 2);
    assert_int_equal(occ_of(MW_ID_Barrier, 5), 0);
}

static void test_call_spanning_windows(void **state)
{
    (void)state;
    setup_recorder(W, 10);
    int64_t w = 3000;
    atomic_store(&mw__g.closed_upto, w - 1);
    mw_thread_t *t = self();
    uint64_t base = (uint64_t)w * W, sub = W / 10;
    /* Starts in sub-slot 9 of window w, ends in sub-slot 1 of window w + 1. */
    mw__record(t, MW_ID_Recv, base + 9 * sub, base + W + sub + sub / 2, 0, -1);
    mw__collect(&acc, w);
    assert_int_equal(acc.fn[MW_ID_Recv].count, 0); /* belongs to the window it ends in */
    assert_int_equal(occ_of(MW_ID_Recv, 9), sub);
    mw__acc_clear(&acc);
    mw__collect(&acc, w + 1);
    assert_int_equal(acc.fn[MW_ID_Recv].count, 1);
    assert_int_equal(occ_of(MW_ID_Recv, 0), sub);
    assert_int_equal(occ_of(MW_ID_Recv, 1), sub / 2);
    /* density by start: one sub-slot before the window */
    unsigned char *row = mw__acc_row(&acc, MW_ID_Recv);
    unsigned bin = mw__bin(W / 10 + W / 10 + W / 20);
    assert_int_equal(mw__row_start(row, 10 - 1, bin), 1);
    assert_int_equal(mw__row_end(row, 1, bin), 1);
}

static void test_late_call_counted_next_window(void **state)
{
    (void)state;
    setup_recorder(W, 10);
    int64_t w = 4000;
    atomic_store(&mw__g.closed_upto, w); /* the sender already took window w */
    mw_thread_t *t = self();
    uint64_t base = (uint64_t)w * W;
    mw__record(t, MW_ID_Send, base + 10, base + 20, 80, 3);
    mw__collect(&acc, w + 1);
    assert_int_equal(acc.fn[MW_ID_Send].count, 1);
    assert_int_equal(acc.fn[MW_ID_Send].bytes, 80);
    assert_int_equal(acc.late, 1);
    assert_int_equal(acc.npeers, 1);
    assert_int_equal(acc.peer_list[0], 3);
    assert_int_equal(acc.peer_fn[0], MW_ID_Send);
    assert_int_equal(acc.peer_messages[0], 1);
    assert_int_equal(acc.peer_bytes[0], 80);
}

/* The accumulator's entry of (rank, fn), -1 when there is none. */
static int acc_peer_at(uint32_t rank, uint32_t fn)
{
    int at = -1;
    for (unsigned i = 0; i < acc.npeers; i++)
        if (acc.peer_list[i] == rank && acc.peer_fn[i] == fn) {
            assert_int_equal(at, -1); /* one entry per (rank, function) */
            at = (int)i;
        }
    return at;
}

static void test_peers_and_longest(void **state)
{
    (void)state;
    setup_recorder(W, 10);
    int64_t w = 5000;
    atomic_store(&mw__g.closed_upto, w - 1);
    mw_thread_t *t = self();
    uint64_t base = (uint64_t)w * W;
    for (int i = 0; i < 30; i++)
        mw__record(t, MW_ID_Isend, base + 1000, base + 1000 + 10 + (uint64_t)i, 100, 1 + i % 3);
    /* The same peers through another send function: entries of their own. */
    for (int i = 0; i < 4; i++)
        mw__record(t, MW_ID_Send, base + 1000, base + 1001, 7, 1 + i % 2);
    mw__collect(&acc, w);
    assert_int_equal(acc.npeers, 5);
    for (int p = 1; p <= 3; p++) {
        int at = acc_peer_at((uint32_t)p, MW_ID_Isend);
        assert_true(at >= 0);
        assert_int_equal(acc.peer_messages[at], 10);
        assert_int_equal(acc.peer_bytes[at], 1000);
    }
    for (int p = 1; p <= 2; p++) {
        int at = acc_peer_at((uint32_t)p, MW_ID_Send);
        assert_true(at >= 0);
        assert_int_equal(acc.peer_messages[at], 2);
        assert_int_equal(acc.peer_bytes[at], 14);
    }
    assert_int_equal(acc_peer_at(3, MW_ID_Send), -1);
    /* K = 4 longest: durations 39, 38, 37, 36 */
    assert_int_equal(acc.nlong, 4);
    uint64_t sum = 0;
    for (unsigned i = 0; i < acc.nlong; i++)
        sum += acc.longest[i].duration_ns;
    assert_int_equal(sum, 39 + 38 + 37 + 36);
}

static void test_inflight_occupancy(void **state)
{
    (void)state;
    setup_recorder(W, 10);
    int64_t w = 6000;
    atomic_store(&mw__g.closed_upto, w - 1);
    mw_thread_t *t = self();
    uint64_t base = (uint64_t)w * W, sub = W / 10;
    /* A call that began in sub-slot 5 and has not ended when window w is collected. */
    atomic_store(&t->inflight, (base + 5 * sub) << MW_INFLIGHT_FN_BITS | MW_ID_Wait);
    mw__collect(&acc, w);
    assert_int_equal(occ_of(MW_ID_Wait, 4), 0);
    for (unsigned s = 5; s < 10; s++)
        assert_int_equal(occ_of(MW_ID_Wait, s), sub);
    /* When it ends in window w + 1, only the part after w's end is added there. */
    mw__acc_clear(&acc);
    mw__record(t, MW_ID_Wait, base + 5 * sub, base + W + sub, 0, -1);
    mw__collect(&acc, w + 1);
    assert_int_equal(occ_of(MW_ID_Wait, 0), sub);
    assert_int_equal(occ_of(MW_ID_Wait, 1), 0);
    assert_int_equal(acc.fn[MW_ID_Wait].total_ns, 6 * sub);
}

static void test_inflight_marker_restores_start(void **state)
{
    (void)state;
    const uint64_t span = 1ull << (64 - MW_INFLIGHT_FN_BITS);
    uint64_t now = 5 * span + 100, t0s[] = {5 * span + 10, 5 * span - 50, 3 * span + 7};
    for (unsigned i = 0; i < 3; i++) {
        uint64_t m = t0s[i] << MW_INFLIGHT_FN_BITS | MW_ID_Wait;
        assert_int_equal(m & ((1u << MW_INFLIGHT_FN_BITS) - 1), MW_ID_Wait);
        /* exact within one span of the reader's clock; older starts alias, by design */
        assert_int_equal(mw__inflight_start(m, now), i < 2 ? t0s[i] : 5 * span + 7);
    }
}

static void test_sender_behind_counts_in_older_slot(void **state)
{
    (void)state;
    setup_recorder(W, 10);
    int64_t w = 7000;
    atomic_store(&mw__g.closed_upto, w - 1);
    mw_thread_t *t = self();
    uint64_t base = (uint64_t)w * W;
    mw__record(t, MW_ID_Barrier, base + 1, base + 2, 0, -1);
    /* MW_RING windows later the same slot still holds window w (the sender is behind): the
     * call is counted there, as late, not lost. */
    uint64_t before = atomic_load(&mw__g.calls_dropped);
    mw__record(t, MW_ID_Barrier, base + MW_RING * W + 1, base + MW_RING * W + 2, 0, -1);
    assert_int_equal(atomic_load(&mw__g.calls_dropped), before);
    mw__collect(&acc, w);
    assert_int_equal(acc.fn[MW_ID_Barrier].count, 2);
    assert_int_equal(acc.late, 1);
    /* Once window w is collected and the ring has moved on, an old slot is never written. */
    mw__acc_clear(&acc);
    atomic_store(&mw__g.closed_upto, w + MW_RING);
    mw__record(t, MW_ID_Barrier, base + MW_RING * W + 3, base + MW_RING * W + 4, 0, -1);
    collect_to(w + MW_RING + 1, w + MW_RING + 1);
    assert_int_equal(acc.fn[MW_ID_Barrier].count, 1);
    assert_int_equal(acc.late, 1);
}

static void test_counted_calls_use_last_window(void **state)
{
    (void)state;
    setup_recorder(W, 10);
    int64_t w = 8000;
    atomic_store(&mw__g.closed_upto, w - 1);
    mw_thread_t *t = self();
    uint64_t base = (uint64_t)w * W;
    mw__record(t, MW_ID_Barrier, base + 1, base + 2, 0, -1);
    for (int i = 0; i < 5; i++)
        mw__count(t, MW_ID_Comm_rank); /* no clock read: the window of the last timed call */
    mw__collect(&acc, w);
    assert_int_equal(acc.fn[MW_ID_Comm_rank].count, 5);
    assert_int_equal(acc.fn[MW_ID_Comm_rank].total_ns, 0);
    assert_int_equal(mw__fn_min(&acc.fn[MW_ID_Comm_rank]), 0); /* min <= max on the wire */
    /* The cached window is now closed: counts go to the first open one. */
    mw__acc_clear(&acc);
    mw__count(t, MW_ID_Comm_rank);
    mw__collect(&acc, w + 1);
    assert_int_equal(acc.fn[MW_ID_Comm_rank].count, 1);
}

/* Threads record with the real clock while the main thread collects windows as they end. */
#define STRESS_THREADS 3
#define STRESS_CALLS 300000
static _Atomic int stress_done;

static void *stress_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < STRESS_CALLS; i++) {
        mw_thread_t *t = mw__self(MW_ID_Iprobe);
        if (!t)
            continue;
        uint64_t t0 = mw__begin(t, MW_ID_Iprobe);
        mw__end(t, MW_ID_Iprobe, t0, 0, -1);
    }
    atomic_fetch_add(&stress_done, 1);
    return NULL;
}

static void test_threads_counted_exactly(void **state)
{
    (void)state;
    setup_recorder(2000000, 10); /* 2 ms windows: many edges during the run */
    int64_t next = (int64_t)(mw__global_ns(mw__now()) / mw__g.window_ns);
    atomic_store(&mw__g.closed_upto, next - 1);
    uint64_t dropped0 = atomic_load(&mw__g.calls_dropped);
    pthread_t th[STRESS_THREADS];
    for (int i = 0; i < STRESS_THREADS; i++)
        pthread_create(&th[i], NULL, stress_thread, NULL);
    uint64_t counted = 0;
    while (atomic_load(&stress_done) < STRESS_THREADS) {
        int64_t now = (int64_t)(mw__global_ns(mw__now()) / mw__g.window_ns);
        while (next < now) {
            mw__collect(&acc, next++);
            counted += acc.fn[MW_ID_Iprobe].count;
            mw__acc_clear(&acc);
        }
    }
    for (int i = 0; i < STRESS_THREADS; i++)
        pthread_join(th[i], NULL);
    int64_t now = (int64_t)(mw__global_ns(mw__now()) / mw__g.window_ns);
    while (next <= now + 1) {
        mw__collect(&acc, next++);
        counted += acc.fn[MW_ID_Iprobe].count;
        mw__acc_clear(&acc);
    }
    uint64_t dropped = atomic_load(&mw__g.calls_dropped) - dropped0;
    print_message("counted %llu, dropped %llu\n", (unsigned long long)counted,
                  (unsigned long long)dropped);
    assert_int_equal(counted + dropped, (uint64_t)STRESS_THREADS * STRESS_CALLS);
    /* A collector that falls behind delays calls into later windows; only when all MW_RING
     * slots are being handed back at once can one be lost, and then it is counted. */
    assert_true(dropped * 1000 < (uint64_t)STRESS_THREADS * STRESS_CALLS);
}

/* mpiwatch.window=MS@K on the rank (grid.c): refused when malformed, out of bounds, not after
 * the last change or too late (window K begun); applied otherwise, after which windows from K
 * on have the new length, start where the one before ends, and calls in them are split into
 * sub-slots of the new length (a call spanning the switch too). */
static void test_grid_switch(void **state)
{
    (void)state;
    const uint64_t W10 = 10000000ull; /* 10 ms windows, 20 ms after the switch */
    setup_recorder((unsigned)W10, 10);
    int64_t now_w = mw__grid_index(mw__global_ns(mw__now()));
    int64_t K = now_w + 50; /* 0.5 s ahead */
    char v[64];
    const char *bad[] = {"", "abc", "20", "20@", "@5", "20@-5", "+20@5", "20@5x", "9@5", "81@5"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(mw__grid_request(bad[i]), -1);
    snprintf(v, sizeof v, "20@%lld", (long long)now_w); /* begun: too late */
    assert_int_equal(mw__grid_request(v), -1);
    assert_int_equal(atomic_load(&mw__g.nseg), 1);
    snprintf(v, sizeof v, "20@%lld", (long long)K);
    assert_int_equal(mw__grid_request(v), 0);
    assert_int_equal(atomic_load(&mw__g.nseg), 2);
    assert_int_equal(mw__grid_request(v), -1); /* not after the last change */
    uint64_t T = (uint64_t)K * W10;
    assert_int_equal(mw__grid_start(K), T);
    assert_int_equal(mw__grid_len(K - 1), W10);
    assert_int_equal(mw__grid_len(K), 2 * W10);
    assert_int_equal(mw__grid_start(K + 3), T + 6 * W10);
    assert_int_equal(mw__grid_index(T - 1), K - 1);
    assert_int_equal(mw__grid_index(T + 2 * W10 - 1), K);
    assert_int_equal(mw__grid_index(T + 2 * W10), K + 1);
    assert_int_equal(mw__grid_first_from(T + 1), K + 1);

    atomic_store(&mw__g.closed_upto, K - 2);
    mw_thread_t *t = self();
    const uint64_t sub0 = W10 / 10, sub1 = 2 * W10 / 10;
    /* From sub-slot 9 of K - 1 (1 ms sub-slots) to the middle of sub-slot 1 of K (2 ms). */
    mw__record(t, MW_ID_Recv, T - sub0, T + sub1 + sub1 / 2, 0, -1);
    /* Inside sub-slot 3 of K, and from the middle of sub-slot 5 to the middle of 7. */
    mw__record(t, MW_ID_Bcast, T + 3 * sub1 + 5, T + 3 * sub1 + 500, 0, -1);
    mw__record(t, MW_ID_Barrier, T + 5 * sub1 + sub1 / 2, T + 7 * sub1 + sub1 / 2, 0, -1);
    mw__collect(&acc, K - 1);
    assert_int_equal(acc.fn[MW_ID_Recv].count, 0);
    assert_int_equal(occ_of(MW_ID_Recv, 9), sub0);
    mw__acc_clear(&acc);
    mw__collect(&acc, K);
    assert_int_equal(acc.fn[MW_ID_Recv].count, 1);
    assert_int_equal(occ_of(MW_ID_Recv, 0), sub1);
    assert_int_equal(occ_of(MW_ID_Recv, 1), sub1 / 2);
    assert_int_equal(occ_of(MW_ID_Bcast, 3), 495);
    assert_int_equal(occ_of(MW_ID_Barrier, 5), sub1 / 2);
    assert_int_equal(occ_of(MW_ID_Barrier, 6), sub1);
    assert_int_equal(occ_of(MW_ID_Barrier, 7), sub1 / 2);
    assert_int_equal(acc.late, 0);
    mw__grid_init((unsigned)W10, 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_totals),
        cmocka_unit_test(test_occupancy_split),
        cmocka_unit_test(test_call_spanning_windows),
        cmocka_unit_test(test_late_call_counted_next_window),
        cmocka_unit_test(test_peers_and_longest),
        cmocka_unit_test(test_inflight_occupancy),
        cmocka_unit_test(test_inflight_marker_restores_start),
        cmocka_unit_test(test_sender_behind_counts_in_older_slot),
        cmocka_unit_test(test_counted_calls_use_last_window),
        cmocka_unit_test(test_threads_counted_exactly),
        cmocka_unit_test(test_grid_switch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
