/* test_dormant.c: a rank's dormant totals taken by the collector (collector/dormant.c) under
 * attack: totals that drop a function and bring it back later (counted twice before), sums
 * that wrap around 2^64. Each must be refused and counted (bad),
 * leaving the job's dormant figures as they were.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "dormant.h"

static Mpiwatch__Dormant dormant(uint32_t *fn, uint64_t *calls, uint64_t *bytes, size_t n)
{
    Mpiwatch__Dormant d = MPIWATCH__DORMANT__INIT;
    d.n_fn = d.n_calls = d.n_bytes = n;
    d.fn = fn;
    d.calls = calls;
    d.bytes = bytes;
    return d;
}

static mw_dormant_tally_t tally(const struct mw_dormant *j)
{
    mw_dormant_tally_t t;
    mw__dormant_tally(j, &t);
    return t;
}

/* {A: 100} then {B: 100} then {A: 100}: A's calls may not leave and come back counted again. */
static void test_dropped_function(void **state)
{
    (void)state;
    struct mw_dormant *j = NULL;
    uint32_t a[1] = {1}, b[1] = {2};
    uint64_t c[1] = {100}, z[1] = {0};
    Mpiwatch__Dormant d = dormant(a, c, z, 1);
    mw__dormant_take(&j, 2, 0, &d);
    assert_int_equal(tally(j).calls, 100);
    d = dormant(b, c, z, 1);
    mw__dormant_take(&j, 2, 0, &d); /* A is gone: refused */
    d = dormant(a, c, z, 1);
    mw__dormant_take(&j, 2, 0, &d);
    assert_int_equal(tally(j).calls, 100);
    assert_int_equal(tally(j).bad, 1);
    mw__dormant_free(&j);
}

/* Two functions whose calls sum past 2^64, and a second rank pushing the job's sum past it. */
static void test_wrapping_sums(void **state)
{
    (void)state;
    struct mw_dormant *j = NULL;
    uint32_t fn[2] = {1, 2};
    uint64_t big[2] = {UINT64_MAX - 5, 10}, z[2] = {0, 0};
    Mpiwatch__Dormant d = dormant(fn, big, z, 2);
    mw__dormant_take(&j, 2, 0, &d);
    assert_int_equal(tally(j).calls, 0);
    assert_int_equal(tally(j).bad, 1);
    uint64_t one[1] = {UINT64_MAX - 5}, two[1] = {10};
    d = dormant(fn, one, z, 1);
    mw__dormant_take(&j, 2, 0, &d);
    assert_int_equal(tally(j).calls, UINT64_MAX - 5);
    d = dormant(fn, two, z, 1);
    mw__dormant_take(&j, 2, 1, &d); /* the job's sum would wrap */
    assert_int_equal(tally(j).calls, UINT64_MAX - 5);
    assert_int_equal(tally(j).bad, 2);
    mw__dormant_free(&j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dropped_function),
        cmocka_unit_test(test_wrapping_sums),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
