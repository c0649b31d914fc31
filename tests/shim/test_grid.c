/* test_grid.c: the shim's window grid (grid.c, record.c): "MS@K" requests as the sender thread
 * takes them, and the lock-free published grid read through proto/mw_grid.c.
 *
 * mw__grid_request() drives mw_grid_plan() (tested at the 64-bit limits in
 * tests/proto/test_grid.c) with the library's own clock; K and MS come from the network. The
 * requests include values that are not numbers and the attack of issue 12, a K whose start,
 * K x length, wraps around 2^64 to a time a few seconds ahead. The lookups of the published
 * grid must agree with mw_grid on both sides of a change, and keep negative window indices
 * (closed_upto before the first window) on the first segment.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "grid_wrap.h"
#include "shim.h"

#define W (100 * MS) /* the job's first window length */

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

/* The published grid after a change, read by the recorder's lookups. */
static void test_published_lookups(void **state)
{
    (void)state;
    setup_library();
    int64_t now_w = mw__grid_index(mw__fenced_now());
    char v[96];
    snprintf(v, sizeof v, "50@%lld", (long long)(now_w + 30));
    assert_int_equal(mw__grid_request(v), 0);
    unsigned n = atomic_load(&mw__g.nseg);
    assert_int_equal(n, 2);
    mw_grid_t g = {.n = n};
    memcpy(g.seg, mw__g.grid, sizeof g.seg);
    int64_t k = now_w + 30;
    for (int64_t w = k - 3; w <= k + 3; w++) {
        assert_int_equal(mw__grid_start(w), mw_grid_start(&g, (uint64_t)w));
        assert_int_equal(mw__grid_len(w), w < k ? W : 50 * MS);
        assert_int_equal(mw__grid_index(mw__grid_start(w)), w);
        assert_int_equal(mw__grid_index(mw__grid_start(w) + mw__grid_len(w) - 1), w);
        assert_int_equal(mw__grid_first_from(mw__grid_start(w) + 1), w + 1);
    }
    /* Each segment's sub-slots follow its own length. */
    assert_true(mw__g.seg[1].sub_ticks < mw__g.seg[0].sub_ticks);
    /* Negative indices are on the first segment (k x W, as signed arithmetic gives). */
    assert_int_equal(mw__seg_of_index(-1), 0);
    assert_int_equal(mw__seg_of_index(INT64_MIN), 0);
    assert_int_equal((int64_t)mw__grid_start(-1), -(int64_t)W);
    assert_int_equal(mw__grid_len(-1), W);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_values),
        cmocka_unit_test(test_published_lookups),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
