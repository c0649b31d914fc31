/* test_capture.c: the shim's side of a capture (pmpi-shim/capture.c), driven directly.
 *
 * The timer is in clock_gettime mode with a zero offset, as in tests/shim/test_record.c, so
 * ticks are global ns and calls can be placed in exact windows. A request is taken as the
 * sender thread would take it, the window it chose is read back from the range word, and
 * calls are recorded in and around the captured windows: exactly the captured windows get a
 * trace, with every timed call (counted-only functions never), the right relative times,
 * bytes and peers; a full buffer drops and counts; bad, late and overlapping requests change
 * nothing. It also prints what a recorded call costs with and without a capture (figures
 * only, not checked: docs/steering.md quotes them).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shim.h"

#define W 1000000ull /* 1 ms windows */
#define CAP_MAX 4096u
static acc_t acc;

static int setup(void **state)
{
    (void)state;
    memset(&mw__g, 0, sizeof mw__g);
    mw__config_read(&mw__g.cfg);
    mw__g.cfg.subslots = 10;
    mw__g.cfg.longest = 4;
    mw__g.cfg.max_threads = 4;
    mw__g.cfg.capture_max = CAP_MAX;
    mw__g.size = 8;
    mw__timer_init(2);
    mw__g.offset_ns = 0;
    mw__g.need_fence = 1;
    assert_int_equal(mw__alloc(), 0);
    assert_int_equal(mw__acc_init(&acc), 0);
    mw__grid_init(W, 10);
    mw__set_state(1, 0);
    return 0;
}

static mw_thread_t *self(void)
{
    mw_thread_t *t = mw__self(0);
    assert_non_null(t);
    return t;
}

static int64_t now_window(void)
{
    return (int64_t)(mw__global_ns(mw__now()) / W);
}

static void range(int64_t *lo, uint64_t *n)
{
    uint64_t r = atomic_load(&mw__capture_range);
    *lo = (int64_t)(r >> MW_CAPTURE_N_BITS);
    *n = r & ((1u << MW_CAPTURE_N_BITS) - 1);
}

/* Window w: 5 MPI_Allreduce, 2 MPI_Send of 16 bytes to rank 3, 3 MPI_Comm_rank (counted). */
static void record_window(mw_thread_t *t, int64_t w)
{
    uint64_t base = (uint64_t)w * W;
    for (unsigned i = 0; i < 5; i++)
        mw__record(t, MW_ID_Allreduce, base + 1000 * i + 10, base + 1000 * i + 510, 4, -1);
    for (unsigned i = 0; i < 2; i++) {
        mw__record(t, MW_ID_Send, base + 9000 + 100 * i, base + 9050 + 100 * i, 16, 3);
        mw__count(t, MW_ID_Comm_rank);
    }
    mw__count(t, MW_ID_Comm_rank);
}

/* Collects window w and checks its trace: none, or the calls of record_window(). */
static void collect_check(int64_t w, int captured, uint32_t calls)
{
    mw__collect(&acc, w);
    mw_capture_view_t v;
    mw__capture_view(w, &v);
    if (v.captured != captured)
        fail_msg("window %lld: captured %d, expected %d", (long long)w, v.captured, captured);
    if (captured) {
        assert_int_equal(v.n, calls);
        assert_int_equal(v.dropped, 0);
        unsigned ar = 0, send = 0;
        for (uint32_t i = 0; i < v.n; i++) {
            assert_true(v.start[i] >= 0 && v.start[i] + (int64_t)v.dur[i] <= (int64_t)W);
            if (v.fn[i] == MW_ID_Allreduce) {
                assert_int_equal(v.start[i], 1000 * ar + 10);
                assert_int_equal(v.dur[i], 500);
                assert_int_equal(v.bytes[i], 4);
                assert_int_equal(v.peer[i], -1);
                ar++;
            } else {
                assert_int_equal(v.fn[i], MW_ID_Send);
                assert_int_equal(v.start[i], 9000 + 100 * send);
                assert_int_equal(v.dur[i], 50);
                assert_int_equal(v.bytes[i], 16);
                assert_int_equal(v.peer[i], 3);
                send++;
            }
        }
        if (calls)
            assert_true(ar == 5 && send == 2);
        /* The sample's counts agree: 7 timed calls traced, Comm_rank counted only. */
        assert_int_equal(acc.fn[MW_ID_Allreduce].count, calls ? 5 : 0);
        assert_int_equal(acc.fn[MW_ID_Comm_rank].count, calls ? 3 : 0);
    }
    mw__capture_clear(w);
    mw__acc_clear(&acc);
}

static void test_bad_requests(void **state)
{
    (void)state;
    // clang-format off
    static const char *const bad[] = {
        "", "0", "1001", "x", "3@", "@3", "3@x", "3@5 ", " 3", "-1", "+2", "3@-1",
        "2@9999999999999999", "1234567890123456",
    };
    // clang-format on
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (mw__capture_request(bad[i]) != -1)
            fail_msg("'%s' accepted", bad[i]);
        assert_int_equal(atomic_load(&mw__capture_range), 0);
    }
    /* A K more than MW_CAPTURE_MAX_WINDOWS windows ahead, and one all in the past. */
    char v[64];
    snprintf(v, sizeof v, "2@%lld", (long long)(now_window() + MW_CAPTURE_MAX_WINDOWS + 10));
    assert_int_equal(mw__capture_request(v), -1);
    snprintf(v, sizeof v, "2@%lld", (long long)(now_window() - 5));
    assert_int_equal(mw__capture_request(v), -1);
    assert_int_equal(atomic_load(&mw__capture_range), 0);
}

static void test_capture_next_windows(void **state)
{
    (void)state;
    int64_t cur = now_window();
    atomic_store(&mw__g.closed_upto, cur);
    assert_int_equal(mw__capture_request("3"), 0);
    int64_t lo;
    uint64_t n;
    range(&lo, &n);
    assert_int_equal(n, 3);
    assert_true(lo == cur + 1 || lo == cur + 2); /* +2: the request came within the guard */
    /* A second request while this one is pending: refused, the range stays. */
    assert_int_equal(mw__capture_request("5"), -1);
    uint64_t word = atomic_load(&mw__capture_range);
    mw_thread_t *t = self();
    for (int64_t w = cur + 1; w <= lo + 4; w++) {
        record_window(t, w);
        /* The hot path's cached slot is empty exactly in captured windows. */
        assert_int_equal(t->cslot == NULL, w >= lo && w < lo + 3);
        collect_check(w, w >= lo && w < lo + 3, 7);
    }
    assert_int_equal(atomic_load(&mw__capture_range), word);
    /* Every window collected: a new request, N@K, is taken. An empty captured window is
     * captured all the same. */
    char v[64];
    int64_t k = lo + 10;
    snprintf(v, sizeof v, "2@%lld", (long long)k);
    assert_int_equal(mw__capture_request(v), 0);
    range(&lo, &n);
    assert_int_equal(lo, k);
    assert_int_equal(n, 2);
    for (int64_t w = k - 1; w <= k + 2; w++) {
        if (w != k)
            record_window(t, w);
        collect_check(w, w == k || w == k + 1, w == k ? 0 : 7);
    }
    mw_capture_view_t cv;
    mw__capture_view(k, &cv);
    assert_int_equal(cv.first, k);
    assert_int_equal(cv.windows, 2);
    assert_int_equal(cv.skipped, 0);
}

static void test_full_buffer_and_late_start(void **state)
{
    (void)state;
    /* 2@K with K already begun: only the windows still ahead, and it says so. */
    int64_t cur = now_window();
    atomic_store(&mw__g.closed_upto, cur + 20);
    char v[64];
    snprintf(v, sizeof v, "4@%lld", (long long)(cur - 1));
    assert_int_equal(mw__capture_request(v), 0);
    int64_t lo;
    uint64_t n;
    range(&lo, &n);
    assert_true(lo == cur + 1 || lo == cur + 2);
    assert_int_equal(lo + (int64_t)n, cur + 3);
    mw_capture_view_t cv;
    mw__capture_view(lo, &cv);
    assert_int_equal(cv.first, cur - 1);
    assert_int_equal(cv.skipped, lo - (cur - 1));
    /* Its windows are "collected" already (closed_upto is beyond): take a new one whose
     * first window gets more calls than the buffer holds. */
    int64_t k = cur + 30;
    atomic_store(&mw__g.closed_upto, k - 1);
    snprintf(v, sizeof v, "1@%lld", (long long)k);
    assert_int_equal(mw__capture_request(v), 0);
    mw_thread_t *t = self();
    uint64_t base = (uint64_t)k * W;
    for (unsigned i = 0; i < CAP_MAX + 10; i++)
        mw__record(t, MW_ID_Barrier, base + 100 * i, base + 100 * i + 50, 0, -1);
    mw__collect(&acc, k);
    mw__capture_view(k, &cv);
    assert_int_equal(cv.n, CAP_MAX);
    assert_int_equal(cv.dropped, 10);
    assert_int_equal(acc.fn[MW_ID_Barrier].count, CAP_MAX + 10);
    mw__capture_clear(k);
    mw__acc_clear(&acc);
}

static double ns_per_call(mw_thread_t *t, int64_t w, unsigned calls)
{
    struct timespec a, b;
    uint64_t base = (uint64_t)w * W;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (unsigned i = 0; i < calls; i++)
        mw__record(t, MW_ID_Iprobe, base + 200 * i, base + 200 * i + 60, 0, -1);
    clock_gettime(CLOCK_MONOTONIC, &b);
    return ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / calls;
}

/* Figures only: mw__record() in a window that is not captured, and in one that is (the call
 * is recorded, then appended to the trace). */
static void test_cost(void **state)
{
    (void)state;
    int64_t cur = now_window(), k = cur + 40;
    atomic_store(&mw__g.closed_upto, k - 2);
    char v[64];
    snprintf(v, sizeof v, "%u@%lld", 20, (long long)k);
    assert_int_equal(mw__capture_request(v), 0);
    mw_thread_t *t = self();
    double plain = 1e9, traced = 1e9;
    for (int64_t w = k - 1; w < k + 20; w++) {
        double x = ns_per_call(t, w, CAP_MAX);
        if (w < k)
            plain = x;
        else if (x < traced)
            traced = x;
        mw__collect(&acc, w);
        mw_capture_view_t cv;
        mw__capture_view(w, &cv);
        assert_int_equal(cv.n, w < k ? 0 : CAP_MAX);
        mw__capture_clear(w);
        mw__acc_clear(&acc);
    }
    /* Not captured: the best of 20 more windows (each window's first call locates it). */
    for (int64_t w = k + 20; w < k + 40; w++) {
        double x = ns_per_call(t, w, CAP_MAX);
        if (x < plain)
            plain = x;
        mw__collect(&acc, w);
        mw__acc_clear(&acc);
    }
    printf("mw__record: %.1f ns per call, %.1f ns in a captured window (+%.1f)\n", plain, traced,
           traced - plain);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_requests),
        cmocka_unit_test(test_capture_next_windows),
        cmocka_unit_test(test_full_buffer_and_late_start),
        cmocka_unit_test(test_cost),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
