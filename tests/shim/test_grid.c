/* test_grid.c: the window grid's arithmetic on what a steering message claims (grid.c).
 *
 * mw__grid_plan() decides whether "MS@K" may change the grid; K and MS come from the network.
 * These tests put it at the edges: K at INT64_MAX and UINT64_MAX, lengths whose products
 * overflow, segments and clocks near 2^64, the 60 s lead bound exactly, and above all the
 * attack of issue 12: a K whose start, K x length, wraps around 2^64 to a time a few seconds
 * ahead (the old check accepted it, and MPI_Finalize then had ~10^14 windows to send). The
 * last tests drive mw__grid_request() itself with the library's clock, as the sender thread
 * does, including values that are not numbers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "shim.h"

#define MS 1000000ull
#define W (100 * MS) /* the job's first window length */

static mw_seg_t grid1[MW_GRID_MAX_SEGMENTS] = {{.first = 0, .start_ns = 0, .len_ns = W}};

/* A K below 10^15 (what a steering value can hold) whose start on grid1 with windows of `len`
 * wraps around 2^64 to somewhere in [lo, lo + 3 s): K x len = T (mod 2^64). With len = 2^s x
 * odd, K = (T / 2^s) x odd^-1 (mod 2^(64-s)) for T a multiple of 2^s; about one such K in 70
 * fits 15 digits. */
static uint64_t wrapping_k(uint64_t len, uint64_t lo)
{
    unsigned sh = (unsigned)__builtin_ctzll(len);
    uint64_t odd = len >> sh, inv = odd; /* Newton's iteration for the inverse mod 2^64 */
    for (int i = 0; i < 6; i++)
        inv *= 2 - odd * inv;
    const uint64_t step = 1ull << sh, mask = UINT64_MAX >> sh;
    for (uint64_t t = (lo + step - 1) & ~(step - 1); t < lo + 3000 * MS; t += step) {
        uint64_t k = ((t >> sh) * inv) & mask;
        if (k < 1000000000000000ull && k > UINT64_MAX / len) { /* a real wrap */
            assert_int_equal(k * len, t);                      /* the old, unchecked product */
            return k;
        }
    }
    fail_msg("no wrapping K found");
    return 0;
}

static void test_plain_change(void **state)
{
    (void)state;
    uint64_t now = 1000 * W + 3 * MS, start = 0;
    /* K = 1011: 1.1 s ahead, as the collector picks it. */
    assert_int_equal(mw__grid_plan(grid1, 1, W, now, 200, 1011, &start), MW_GRID_OK);
    assert_int_equal(start, 1011 * W);
}

static void test_wrapping_k_is_refused(void **state)
{
    (void)state;
    uint64_t now = 1790000000000000000ull; /* epoch ns in 2026, as the job's global time */
    uint64_t k = wrapping_k(W, now + 2000 * MS), start = 0;
    /* The unchecked start lands 2..5 s ahead, inside every old bound... */
    uint64_t wrapped = k * W;
    assert_true(wrapped >= now + 2000 * MS && wrapped < now + 5000 * MS);
    /* ...and K itself is ~10^14 windows away: refused. */
    assert_int_equal(mw__grid_plan(grid1, 1, W, now, 100, k, &start), MW_GRID_FAR);
    /* K places the change on the grid in force (100 ms windows), whatever the new length. */
    k = wrapping_k(W, now + 2500 * MS);
    assert_int_equal(mw__grid_plan(grid1, 1, W, now, 200, k, &start), MW_GRID_FAR);
}

static void test_k_at_64_bit_limits(void **state)
{
    (void)state;
    uint64_t now = 1000 * W, start = 0;
    assert_int_equal(mw__grid_plan(grid1, 1, W, now, 100, (uint64_t)INT64_MAX, &start),
                     MW_GRID_FAR);
    assert_int_equal(mw__grid_plan(grid1, 1, W, now, 100, (uint64_t)INT64_MAX + 1, &start),
                     MW_GRID_BAD);
    assert_int_equal(mw__grid_plan(grid1, 1, W, now, 100, UINT64_MAX, &start), MW_GRID_BAD);
    /* K at or before the last change (window 0 here). */
    assert_int_equal(mw__grid_plan(grid1, 1, W, now, 100, 0, &start), MW_GRID_BAD);
    /* K x len exactly 2^64 (K = 2^56 x 2^8 / len is not an integer for 100 ms; take the
     * smallest K that overflows). */
    uint64_t k = UINT64_MAX / W + 1;
    assert_int_equal(mw__grid_plan(grid1, 1, W, now, 100, k, &start), MW_GRID_FAR);
    assert_int_equal(mw__grid_start_checked(&grid1[0], (int64_t)k, &start), -1);
    assert_int_equal(mw__grid_start_checked(&grid1[0], (int64_t)(k - 1), &start), 0);
    assert_int_equal(start, (k - 1) * W);
    assert_int_equal(mw__grid_start_checked(&grid1[0], -1, &start), -1);
    assert_int_equal(mw__grid_start_checked(&grid1[0], INT64_MIN, &start), -1);
}

static void test_length_limits(void **state)
{
    (void)state;
    uint64_t now = 1000 * W, start = 0;
    const uint64_t bad[] = {0, 9, 801, 60001, UINT64_MAX / MS + 1, UINT64_MAX, 1ull << 63};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(mw__grid_plan(grid1, 1, W, now, bad[i], 1011, &start), MW_GRID_BAD);
    assert_int_equal(mw__grid_plan(grid1, 1, W, now, 13, 1011, &start), MW_GRID_OK);
    assert_int_equal(mw__grid_plan(grid1, 1, W, now, 800, 1011, &start), MW_GRID_OK);
    /* An empty grid or a zero first length (never set up) refuses everything. */
    assert_int_equal(mw__grid_plan(grid1, 0, W, now, 100, 1011, &start), MW_GRID_BAD);
    assert_int_equal(mw__grid_plan(grid1, 1, 0, now, 100, 1011, &start), MW_GRID_BAD);
}

static void test_lead_and_guard(void **state)
{
    (void)state;
    uint64_t now = 1000 * W, start = 0;
    /* Exactly 60 s ahead is allowed, one window more is not. */
    uint64_t k = 1000 + MW_GRID_MAX_LEAD_NS / W;
    assert_int_equal(mw__grid_plan(grid1, 1, W, now, 100, k, &start), MW_GRID_OK);
    assert_int_equal(start, now + MW_GRID_MAX_LEAD_NS);
    assert_int_equal(mw__grid_plan(grid1, 1, W, now, 100, k + 1, &start), MW_GRID_FAR);
    /* A window that has begun, or starts within the 5 ms guard. */
    assert_int_equal(mw__grid_plan(grid1, 1, W, now, 100, 1000, &start), MW_GRID_LATE);
    assert_int_equal(mw__grid_plan(grid1, 1, W, now + W - MS, 100, 1001, &start), MW_GRID_LATE);
    assert_int_equal(mw__grid_plan(grid1, 1, W, now + W - 6 * MS, 100, 1001, &start), MW_GRID_OK);
}

static void test_clock_and_segments_near_2_64(void **state)
{
    (void)state;
    uint64_t start = 0;
    /* A clock at the very end of 64 bits: the lead's end saturates, and nothing is ahead. */
    assert_int_equal(mw__grid_plan(grid1, 1, W, UINT64_MAX, 100, 1011, &start), MW_GRID_LATE);
    assert_int_equal(mw__grid_plan(grid1, 1, W, UINT64_MAX - 1000, 100, UINT64_MAX / W, &start),
                     MW_GRID_LATE);
    /* A last segment starting near 2^64: the next windows' starts would wrap. */
    mw_seg_t g[MW_GRID_MAX_SEGMENTS] = {{.first = 0, .start_ns = 0, .len_ns = W},
                                        {.first = 5, .start_ns = UINT64_MAX - W / 2, .len_ns = W}};
    assert_int_equal(mw__grid_plan(g, 2, W, UINT64_MAX - W, 100, 6, &start), MW_GRID_FAR);
    assert_int_equal(mw__grid_plan(g, 2, W, UINT64_MAX - W, 100, 5, &start), MW_GRID_BAD);
    /* A full grid. */
    mw_seg_t full[MW_GRID_MAX_SEGMENTS];
    for (unsigned i = 0; i < MW_GRID_MAX_SEGMENTS; i++)
        full[i] = (mw_seg_t){.first = i, .start_ns = i * W, .len_ns = W};
    assert_int_equal(mw__grid_plan(full, MW_GRID_MAX_SEGMENTS, W, 20 * W, 100, 40, &start),
                     MW_GRID_FULL);
}

/* mw__grid_request() as the sender thread calls it, on the library's real clock. */
static void setup_library(void)
{
    static int done;
    if (!done) {
        memset(&mw__g, 0, sizeof mw__g);
        mw__config_read(&mw__g.cfg);
        mw__timer_init(2);
        mw__g.offset_ns = 0;
        done = 1;
    }
    mw__grid_init(W, 10);
}

static void test_request_values(void **state)
{
    (void)state;
    setup_library();
    int64_t now_w = mw__grid_index(mw__fenced_now());
    char v[96];
    const char *bad[] = {"",
                         "100",
                         "100@",
                         "@5",
                         "100@-1",
                         "100@+5",
                         "100@ 5",
                         "100@1000000000000000", /* 16 digits */
                         "100@18446744073709551615",
                         "100@9223372036854775807",
                         "18446744073709551615@5",
                         "100@5x",
                         "0x10@5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(mw__grid_request(bad[i]), -1);
        assert_int_equal(atomic_load(&mw__g.nseg), 1);
    }
    /* The wrapping K on the library's own clock. */
    snprintf(v, sizeof v, "100@%llu",
             (unsigned long long)wrapping_k(W, mw__fenced_now() + 2000 * MS));
    assert_int_equal(mw__grid_request(v), -1);
    /* A window far ahead (but no wrap): refused too. */
    snprintf(v, sizeof v, "100@%lld", (long long)(now_w + 100000));
    assert_int_equal(mw__grid_request(v), -1);
    assert_int_equal(atomic_load(&mw__g.nseg), 1);
    /* A sane request, 2 s ahead, is applied. */
    snprintf(v, sizeof v, "200@%lld", (long long)(now_w + 20));
    assert_int_equal(mw__grid_request(v), 0);
    assert_int_equal(atomic_load(&mw__g.nseg), 2);
    assert_int_equal(mw__grid_start(now_w + 21), (uint64_t)(now_w + 20) * W + 200 * MS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_change),
        cmocka_unit_test(test_wrapping_k_is_refused),
        cmocka_unit_test(test_k_at_64_bit_limits),
        cmocka_unit_test(test_length_limits),
        cmocka_unit_test(test_lead_and_guard),
        cmocka_unit_test(test_clock_and_segments_near_2_64),
        cmocka_unit_test(test_request_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
