/* test_grid.c: the window grid's arithmetic (proto/mw_grid.c), shared by the shim, the
 * collector and the viewer.
 *
 * The lookups on segments: index <-> time on both sides of every MS@K boundary, the first
 * segment for what comes before it, an empty grid, the segment limit and the refusals of
 * mw_grid_push. Then mw_grid_plan, which decides at a rank whether "MS@K" may change the grid
 * (K and MS come from the network), at the edges: K at INT64_MAX and UINT64_MAX, lengths whose
 * products overflow, segments and clocks near 2^64, the 60 s lead bound exactly, and the
 * attack of issue 12: a K whose start, K x length, wraps around 2^64 to a time a few seconds
 * ahead. The collector's own use of the grid (the choice of K, its checks of a request) is
 * tested in tests/collector/test_grid.c, the shim's in tests/shim/test_grid.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "grid_wrap.h"
#include "mw_grid.h"

#define W (100 * MS) /* the job's first window length */

static mw_grid_seg_t grid1[MW_GRID_MAX_SEGMENTS] = {{.first = 0, .start_ns = 0, .window_ns = W}};

/* A grid of three segments: 100 ms windows, 200 ms from window 50 (5 s), 20 ms from window 60
 * (7 s). */
static void three_segments(mw_grid_t *g)
{
    char err[128];
    mw_grid_init(g, W);
    assert_int_equal(mw_grid_append(g, 50, 200, err, sizeof err), 0);
    assert_int_equal(mw_grid_append(g, 60, 20, err, sizeof err), 0);
}

static void test_one_segment(void **state)
{
    (void)state;
    mw_grid_t g;
    mw_grid_init(&g, W);
    assert_int_equal(g.n, 1);
    for (uint64_t k = 0; k < 1000; k += 37) {
        assert_int_equal(mw_grid_start(&g, k), k * W);
        assert_int_equal(mw_grid_len(&g, k), W);
        assert_int_equal(mw_grid_index(&g, k * W), k);
        assert_int_equal(mw_grid_index(&g, k * W + W - 1), k);
    }
    /* Present-day global times (epoch ns) and large indices: plain k * W. */
    uint64_t t = 1790000000000000000ull;
    assert_int_equal(mw_grid_index(&g, t), t / W);
    assert_int_equal(mw_grid_start(&g, t / W), t / W * W);
    assert_int_equal(mw_grid_span(&g, 10, 20), 10 * W);
    assert_int_equal(mw_grid_span(&g, 20, 10), 0);
    assert_int_equal(mw_grid_span(&g, 20, 20), 0);
}

static void test_boundaries(void **state)
{
    (void)state;
    mw_grid_t g;
    three_segments(&g);
    assert_int_equal(g.n, 3);
    /* The segments start where the grid before them put their first window. */
    assert_int_equal(g.seg[1].start_ns, 50 * W);
    assert_int_equal(g.seg[2].start_ns, 50 * W + 10 * 200 * MS);
    /* Each side of each boundary, by index and by time. */
    assert_int_equal(mw_grid_find(g.seg, g.n, 49), 0);
    assert_int_equal(mw_grid_find(g.seg, g.n, 50), 1);
    assert_int_equal(mw_grid_find(g.seg, g.n, 59), 1);
    assert_int_equal(mw_grid_find(g.seg, g.n, 60), 2);
    assert_int_equal(mw_grid_find(g.seg, g.n, UINT64_MAX), 2);
    assert_int_equal(mw_grid_find_time(g.seg, g.n, 5000 * MS - 1), 0);
    assert_int_equal(mw_grid_find_time(g.seg, g.n, 5000 * MS), 1);
    assert_int_equal(mw_grid_find_time(g.seg, g.n, 7000 * MS - 1), 1);
    assert_int_equal(mw_grid_find_time(g.seg, g.n, 7000 * MS), 2);
    assert_int_equal(mw_grid_start(&g, 49), 4900 * MS);
    assert_int_equal(mw_grid_len(&g, 49), W);
    assert_int_equal(mw_grid_start(&g, 50), 5000 * MS);
    assert_int_equal(mw_grid_len(&g, 50), 200 * MS);
    assert_int_equal(mw_grid_start(&g, 59), 6800 * MS);
    assert_int_equal(mw_grid_start(&g, 60), 7000 * MS);
    assert_int_equal(mw_grid_len(&g, 60), 20 * MS);
    assert_int_equal(mw_grid_index(&g, 5000 * MS - 1), 49);
    assert_int_equal(mw_grid_index(&g, 5000 * MS), 50);
    assert_int_equal(mw_grid_index(&g, 7000 * MS - 1), 59);
    assert_int_equal(mw_grid_index(&g, 7000 * MS), 60);
    /* Contiguous windows, each found again from its first and its last nanosecond. */
    for (uint64_t k = 0; k < 100; k++) {
        uint64_t s = mw_grid_start(&g, k), e = s + mw_grid_len(&g, k);
        assert_int_equal(mw_grid_start(&g, k + 1), e);
        assert_int_equal(mw_grid_index(&g, s), k);
        assert_int_equal(mw_grid_index(&g, e - 1), k);
        assert_int_equal(mw_grid_seg(&g, k), &g.seg[mw_grid_find(g.seg, g.n, k)]);
    }
    assert_int_equal(mw_grid_span(&g, 49, 61), W + 10 * 200 * MS + 20 * MS);
}

/* The unsigned arithmetic wraps modulo 2^64: the shim's negative indices (window -1 before
 * the first one) give the bits signed arithmetic would, on the first segment. */
static void test_wraps_like_signed(void **state)
{
    (void)state;
    mw_grid_t g;
    three_segments(&g);
    const mw_grid_seg_t *s0 = &g.seg[0];
    assert_int_equal((int64_t)mw_grid_seg_start(s0, (uint64_t)-1), -(int64_t)W);
    assert_int_equal((int64_t)mw_grid_seg_start(s0, (uint64_t)-7), -7 * (int64_t)W);
    /* A time before a later segment's start, looked up on that segment, wraps as well: the
     * lookups never do that themselves (they pick the segment that holds the time). */
    assert_int_equal(mw_grid_seg_start(&g.seg[2], 59), 6980 * MS);
    /* A segment of length 0 (a grid never set up) maps every time to window 0. */
    const mw_grid_seg_t zero = {0, 0, 0};
    assert_int_equal(mw_grid_seg_index(&zero, 12345), 0);
}

static void test_empty_grid(void **state)
{
    (void)state;
    /* n == 0 (zeroed, before any job): everything maps to the zeroed seg[0]. */
    mw_grid_t g;
    memset(&g, 0, sizeof g);
    assert_int_equal(mw_grid_find(g.seg, 0, 42), 0);
    assert_int_equal(mw_grid_find_time(g.seg, 0, 42), 0);
    assert_int_equal(mw_grid_start(&g, 42), 0);
    assert_int_equal(mw_grid_len(&g, 42), 0);
    assert_int_equal(mw_grid_index(&g, 42 * W), 0);
    char err[128];
    assert_int_equal(mw_grid_append(&g, 5, 100, err, sizeof err), -1);
    /* mw_grid_push makes seg[0] of an empty grid, at any window (a viewer that saw a window
     * carrying its own start before the job's description). */
    assert_int_equal(mw_grid_push(&g, 1000, 1000 * W + 7, W), 0);
    assert_int_equal(g.n, 1);
    assert_int_equal(mw_grid_start(&g, 1000), 1000 * W + 7);
    assert_int_equal(mw_grid_start(&g, 1002), 1002 * W + 7);
    assert_int_equal(mw_grid_index(&g, 1002 * W + 7), 1002);
}

static void test_push_and_limits(void **state)
{
    (void)state;
    mw_grid_t g;
    char err[128];
    mw_grid_init(&g, W);
    /* A segment from the wire, not contiguous with the grid before it: taken as it is. */
    assert_int_equal(mw_grid_push(&g, 10, 1234 * MS, 50 * MS), 0);
    assert_int_equal(mw_grid_start(&g, 10), 1234 * MS);
    assert_int_equal(mw_grid_start(&g, 12), 1334 * MS);
    assert_int_equal(mw_grid_start(&g, 9), 900 * MS);
    /* First windows must increase: nothing changes otherwise. */
    assert_int_equal(mw_grid_push(&g, 10, 0, W), -1);
    assert_int_equal(mw_grid_push(&g, 3, 0, W), -1);
    assert_int_equal(mw_grid_append(&g, 10, 200, err, sizeof err), -1);
    assert_non_null(strstr(err, "not after the last change"));
    assert_int_equal(g.n, 2);
    /* Up to MW_GRID_MAX_SEGMENTS segments, then every append is refused. */
    for (uint64_t i = 2; i < MW_GRID_MAX_SEGMENTS; i++)
        assert_int_equal(i % 2 ? mw_grid_push(&g, 10 * i, 1000 * MS * i, W)
                               : mw_grid_append(&g, 10 * i, 100, err, sizeof err),
                         0);
    assert_int_equal(g.n, MW_GRID_MAX_SEGMENTS);
    mw_grid_t before = g;
    assert_int_equal(mw_grid_push(&g, 100000, 0, W), -1);
    assert_int_equal(mw_grid_append(&g, 100000, 100, err, sizeof err), -1);
    assert_int_equal(mw_grid_check(&g, 200, 0, err, sizeof err), -1);
    assert_memory_equal(&g, &before, sizeof g);
    /* mw_grid_append bounds the length it is given (0, past the maximum). */
    mw_grid_init(&g, W);
    assert_int_equal(mw_grid_append(&g, 5, 0, err, sizeof err), -1);
    assert_int_equal(mw_grid_append(&g, 5, MW_GRID_MAX_MS + 1, err, sizeof err), -1);
    assert_int_equal(g.n, 1);
}

static void test_len_ok(void **state)
{
    (void)state;
    assert_true(mw_grid_len_ok(W, 100));
    assert_true(mw_grid_len_ok(W, 800)); /* 8 x */
    assert_false(mw_grid_len_ok(W, 801));
    assert_true(mw_grid_len_ok(W, 13)); /* >= 1/8 */
    assert_false(mw_grid_len_ok(W, 12));
    assert_false(mw_grid_len_ok(5 * MS, 9)); /* below MW_GRID_MIN_MS */
    assert_true(mw_grid_len_ok(5 * MS, 10));
    assert_true(mw_grid_len_ok(30000 * MS, 60000));
    assert_false(mw_grid_len_ok(30000 * MS, 60001)); /* above MW_GRID_MAX_MS */
    assert_false(mw_grid_len_ok(W, 0));
    assert_false(mw_grid_len_ok(W, UINT64_MAX)); /* no product wraps into range */
    assert_false(mw_grid_len_ok(W, UINT64_MAX / MS + 1));
}

static void test_plain_change(void **state)
{
    (void)state;
    uint64_t now = 1000 * W + 3 * MS, start = 0;
    /* K = 1011: 1.1 s ahead, as the collector picks it. */
    assert_int_equal(mw_grid_plan(grid1, 1, W, now, 200, 1011, &start), MW_GRID_OK);
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
    assert_int_equal(mw_grid_plan(grid1, 1, W, now, 100, k, &start), MW_GRID_FAR);
    /* K places the change on the grid in force (100 ms windows), whatever the new length. */
    k = wrapping_k(W, now + 2500 * MS);
    assert_int_equal(mw_grid_plan(grid1, 1, W, now, 200, k, &start), MW_GRID_FAR);
}

static void test_k_at_64_bit_limits(void **state)
{
    (void)state;
    uint64_t now = 1000 * W, start = 0;
    assert_int_equal(mw_grid_plan(grid1, 1, W, now, 100, (uint64_t)INT64_MAX, &start), MW_GRID_FAR);
    assert_int_equal(mw_grid_plan(grid1, 1, W, now, 100, (uint64_t)INT64_MAX + 1, &start),
                     MW_GRID_BAD);
    assert_int_equal(mw_grid_plan(grid1, 1, W, now, 100, UINT64_MAX, &start), MW_GRID_BAD);
    /* K at or before the last change (window 0 here). */
    assert_int_equal(mw_grid_plan(grid1, 1, W, now, 100, 0, &start), MW_GRID_BAD);
    /* K x len exactly 2^64 (K = 2^56 x 2^8 / len is not an integer for 100 ms; take the
     * smallest K that overflows). */
    uint64_t k = UINT64_MAX / W + 1;
    assert_int_equal(mw_grid_plan(grid1, 1, W, now, 100, k, &start), MW_GRID_FAR);
    assert_int_equal(mw_grid_seg_start_checked(&grid1[0], k, &start), -1);
    assert_int_equal(mw_grid_seg_start_checked(&grid1[0], k - 1, &start), 0);
    assert_int_equal(start, (k - 1) * W);
    /* A window before its segment's first. */
    const mw_grid_seg_t later = {.first = 5, .start_ns = 5 * W, .window_ns = W};
    assert_int_equal(mw_grid_seg_start_checked(&later, 4, &start), -1);
    assert_int_equal(mw_grid_seg_start_checked(&later, 0, &start), -1);
    assert_int_equal(mw_grid_seg_start_checked(&later, 5, &start), 0);
    assert_int_equal(start, 5 * W);
}

static void test_length_limits(void **state)
{
    (void)state;
    uint64_t now = 1000 * W, start = 0;
    const uint64_t bad[] = {0, 9, 801, 60001, UINT64_MAX / MS + 1, UINT64_MAX, 1ull << 63};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(mw_grid_plan(grid1, 1, W, now, bad[i], 1011, &start), MW_GRID_BAD);
    assert_int_equal(mw_grid_plan(grid1, 1, W, now, 13, 1011, &start), MW_GRID_OK);
    assert_int_equal(mw_grid_plan(grid1, 1, W, now, 800, 1011, &start), MW_GRID_OK);
    /* An empty grid or a zero first length (never set up) refuses everything. */
    assert_int_equal(mw_grid_plan(grid1, 0, W, now, 100, 1011, &start), MW_GRID_BAD);
    assert_int_equal(mw_grid_plan(grid1, 1, 0, now, 100, 1011, &start), MW_GRID_BAD);
}

static void test_lead_and_guard(void **state)
{
    (void)state;
    uint64_t now = 1000 * W, start = 0;
    /* Exactly 60 s ahead is allowed, one window more is not. */
    uint64_t k = 1000 + MW_GRID_MAX_LEAD_NS / W;
    assert_int_equal(mw_grid_plan(grid1, 1, W, now, 100, k, &start), MW_GRID_OK);
    assert_int_equal(start, now + MW_GRID_MAX_LEAD_NS);
    assert_int_equal(mw_grid_plan(grid1, 1, W, now, 100, k + 1, &start), MW_GRID_FAR);
    /* A window that has begun, or starts within the 5 ms guard. */
    assert_int_equal(mw_grid_plan(grid1, 1, W, now, 100, 1000, &start), MW_GRID_LATE);
    assert_int_equal(mw_grid_plan(grid1, 1, W, now + W - MS, 100, 1001, &start), MW_GRID_LATE);
    assert_int_equal(mw_grid_plan(grid1, 1, W, now + W - 6 * MS, 100, 1001, &start), MW_GRID_OK);
}

static void test_clock_and_segments_near_2_64(void **state)
{
    (void)state;
    uint64_t start = 0;
    /* A clock at the very end of 64 bits: the lead's end saturates, and nothing is ahead. */
    assert_int_equal(mw_grid_plan(grid1, 1, W, UINT64_MAX, 100, 1011, &start), MW_GRID_LATE);
    assert_int_equal(mw_grid_plan(grid1, 1, W, UINT64_MAX - 1000, 100, UINT64_MAX / W, &start),
                     MW_GRID_LATE);
    /* A last segment starting near 2^64: the next windows' starts would wrap. */
    mw_grid_seg_t g[MW_GRID_MAX_SEGMENTS] = {
        {.first = 0, .start_ns = 0, .window_ns = W},
        {.first = 5, .start_ns = UINT64_MAX - W / 2, .window_ns = W}};
    assert_int_equal(mw_grid_plan(g, 2, W, UINT64_MAX - W, 100, 6, &start), MW_GRID_FAR);
    assert_int_equal(mw_grid_plan(g, 2, W, UINT64_MAX - W, 100, 5, &start), MW_GRID_BAD);
    /* A full grid. */
    mw_grid_seg_t full[MW_GRID_MAX_SEGMENTS];
    for (unsigned i = 0; i < MW_GRID_MAX_SEGMENTS; i++)
        full[i] = (mw_grid_seg_t){.first = i, .start_ns = i * W, .window_ns = W};
    assert_int_equal(mw_grid_plan(full, MW_GRID_MAX_SEGMENTS, W, 20 * W, 100, 40, &start),
                     MW_GRID_FULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_segment),
        cmocka_unit_test(test_boundaries),
        cmocka_unit_test(test_wraps_like_signed),
        cmocka_unit_test(test_empty_grid),
        cmocka_unit_test(test_push_and_limits),
        cmocka_unit_test(test_len_ok),
        cmocka_unit_test(test_plain_change),
        cmocka_unit_test(test_wrapping_k_is_refused),
        cmocka_unit_test(test_k_at_64_bit_limits),
        cmocka_unit_test(test_length_limits),
        cmocka_unit_test(test_lead_and_guard),
        cmocka_unit_test(test_clock_and_segments_near_2_64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
