/* test_bins.c: the duration bins (proto/mw_bins.h), the one conversion between a bin and a
 * duration that the shim, the collector, the viewer, the exports and the load generator share.
 *
 * The quarter-octave bin of every duration below 2^16 and of durations around every power of
 * two up to 2^64 - 1 is checked against its definition (4 floor(log2 d) plus the two bits after
 * the leading one, computed here bit by bit) and against the bin's edges (lo <= d < hi); the
 * factor-2 layout (40 bins, the format of old recordings) against floor(log2 d); the cap at the
 * last bin; edges and middles are increasing and the middle lies between the edges; the first
 * integer of a bin maps back to it; the layout rule (<= 48: factor 2) and the valid counts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>

#include "mw_bins.h"
#include "mw_proto.h"

/* The definition, without the library's shift trick. */
static unsigned ref_quarter(uint64_t d)
{
    if (d < 4)
        return d == 2 ? 4u : d == 3 ? 6u : 0u;
    unsigned l = 0;
    while (l < 63 && (d >> (l + 1)) != 0)
        l++;
    unsigned q = (unsigned)((d >> (l - 1)) & 1u) * 2u + (unsigned)((d >> (l - 2)) & 1u);
    return 4u * l + q;
}

static unsigned ref_octave(uint64_t d)
{
    unsigned l = 0;
    while (l < 63 && (d >> (l + 1)) != 0)
        l++;
    return l;
}

static void check_one(uint64_t d)
{
    unsigned b = mw_bin_quarter(d);
    assert_int_equal(b, ref_quarter(d));
    assert_int_equal(mw_bin_uncapped(d, MW_BINS_QUARTER), b);
    assert_int_equal(mw_bin_of(d, MW_BINS_QUARTER), b < 160 ? b : 159);
    assert_int_equal(mw_bin_of(d, MW_MAX_DURATION_BINS), b < 192 ? b : 191);
    unsigned o = ref_octave(d);
    assert_int_equal(mw_bin_of(d, MW_BINS_OCTAVE), o < 40 ? o : 39);
    assert_int_equal(mw_bin_uncapped(d, MW_BINS_OCTAVE), o);
    /* the edges hold d (doubles are exact at these magnitudes but for the last ulps of 2^64) */
    if (d > 0 && d < (1ull << 53)) {
        assert_true(mw_bin_lo_ns(b, MW_BINS_QUARTER) <= (double)d);
        assert_true((double)d < mw_bin_hi_ns(b, MW_BINS_QUARTER));
        assert_true(mw_bin_lo_ns(o, MW_BINS_OCTAVE) <= (double)d);
        assert_true((double)d < mw_bin_hi_ns(o, MW_BINS_OCTAVE));
    }
}

static void test_quarter_definition(void **state)
{
    (void)state;
    for (uint64_t d = 0; d < 65536; d++)
        check_one(d);
    for (unsigned l = 16; l < 64; l++)
        for (int k = -3; k <= 3; k++)
            for (unsigned q = 0; q < 4; q++) {
                uint64_t edge = (1ull << l) + (uint64_t)q * (1ull << (l - 2));
                check_one(edge + (uint64_t)(int64_t)k);
            }
    check_one(UINT64_MAX);
    assert_int_equal(mw_bin_quarter(UINT64_MAX), 255);
    /* small durations exact; 4 ns starts the regular bins */
    assert_int_equal(mw_bin_quarter(0), 0);
    assert_int_equal(mw_bin_quarter(1), 0);
    assert_int_equal(mw_bin_quarter(2), 4);
    assert_int_equal(mw_bin_quarter(3), 6);
    assert_int_equal(mw_bin_quarter(4), 8);
    assert_int_equal(mw_bin_quarter(5), 9);
    assert_int_equal(mw_bin_quarter(7), 11);
    assert_int_equal(mw_bin_quarter(1000), 4 * 9 + 3); /* 1000 = 1111101000b */
    assert_int_equal(mw_bin_quarter(1u << 20), 80);
}

static void test_edges(void **state)
{
    (void)state;
    uint32_t layouts[2] = {MW_BINS_OCTAVE, MW_BINS_QUARTER};
    for (int k = 0; k < 2; k++) {
        uint32_t nb = layouts[k];
        for (unsigned b = 0; b < nb; b++) {
            double lo = mw_bin_lo_ns(b, nb), hi = mw_bin_hi_ns(b, nb), mid = mw_bin_mid_ns(b, nb);
            assert_true(lo < hi);
            assert_true(lo < mid && mid < hi);
            assert_true(fabs(exp2(mw_bin_log2_lo(b, nb)) - lo) <= 1e-9 * lo);
            assert_true(fabs(mid - sqrt(lo * hi)) <= 1e-9 * mid);
            /* the first integer of a non-empty bin is in it */
            uint64_t m = mw_bin_min_ns(b, nb);
            if ((double)m < hi)
                assert_int_equal(mw_bin_of(m, nb), b);
        }
    }
    assert_true(mw_bin_lo_ns(12, MW_BINS_QUARTER) == 8.0);
    assert_true(mw_bin_lo_ns(13, MW_BINS_QUARTER) == 10.0);
    assert_true(mw_bin_hi_ns(15, MW_BINS_QUARTER) == 16.0);
    assert_true(mw_bin_lo_ns(12, MW_BINS_OCTAVE) == 4096.0);
    assert_true(fabs(mw_bin_mid_ns(12, MW_BINS_OCTAVE) - 4096.0 * M_SQRT2) < 1e-6);
    assert_true(mw_bin_min_ns(255, MW_MAX_DURATION_BINS) > 0);
}

static void test_layouts(void **state)
{
    (void)state;
    assert_false(mw_bins_valid(0));
    assert_true(mw_bins_valid(1));
    assert_true(mw_bins_valid(MW_BINS_OCTAVE));
    assert_true(mw_bins_valid(MW_BINS_QUARTER));
    assert_true(mw_bins_valid(MW_MAX_DURATION_BINS));
    assert_false(mw_bins_valid(MW_MAX_DURATION_BINS + 1));
    assert_int_equal(mw_bins_per_octave(MW_BINS_OCTAVE), 1);
    assert_int_equal(mw_bins_per_octave(MW_BINS_OCTAVE_MAX), 1);
    assert_int_equal(mw_bins_per_octave(MW_BINS_OCTAVE_MAX + 1), 4);
    assert_int_equal(mw_bins_per_octave(MW_BINS_QUARTER), 4);
    /* a one-bin job holds every duration in bin 0 */
    assert_int_equal(mw_bin_of(UINT64_MAX, 1), 0);
    assert_int_equal(mw_bin_of(12345, 1), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quarter_definition),
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_layouts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
