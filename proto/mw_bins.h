/* mw_bins.h: the duration bins of the histograms and of the call density, the one place where a
 * bin index and a duration are converted (shim, collector, viewer, exports, load generator).
 *
 * DESIGN: a job states its layout by its number of bins (Hello.duration_bins, JobInfo and
 * Window.duration_bins), so that recordings made before the finer bins replay as they were:
 *   1 .. MW_BINS_OCTAVE_MAX (48): factor 2 ("octave" bins, the format up to recording format 2
 *       and the library's layout before quarter octaves): bin b holds [2^b, 2^(b+1)) ns, bin 0
 *       also 0 ns; the library sent 40 (MW_BINS_OCTAVE).
 *   MW_BINS_OCTAVE_MAX + 1 .. MW_MAX_DURATION_BINS (192): quarter octaves: bin 4L + q holds
 *       [2^L (1 + q/4), 2^L (1 + (q+1)/4)) ns, L = floor(log2 d); that is 4 floor(log2 d) plus
 *       the two bits after the leading one. Below 4 ns every duration has its own bin (0 and 1:
 *       bin 0, 2: bin 4, 3: bin 6; bins 1..3, 5 and 7 stay empty). The library sends 160
 *       (MW_BINS_QUARTER): 40 octaves as before.
 * In both layouts the last bin of a job also holds every longer duration. Libc only; inline so
 * that the library's hot path (mw_bin_quarter: a count of leading zeros, two shifts, an add)
 * pays no call. */
#ifndef MW_BINS_H
#define MW_BINS_H

#include <math.h>
#include <stdint.h>

#define MW_BINS_OCTAVE 40u     /* the factor-2 layout the library sent before quarter octaves */
#define MW_BINS_OCTAVE_MAX 48u /* more bins than this: quarter octaves */
#define MW_BINS_QUARTER 160u   /* the library's layout: 40 octaves of 4 bins */
#define MW_BINS_MAX_INDEX 255u /* the largest uncapped index (quarter bin of 2^64 - 1 ns) */

/* A layout some collector may send: 1 .. MW_MAX_DURATION_BINS (mw_proto.h; 192). */
static inline int mw_bins_valid(uint32_t nbins)
{
    return nbins >= 1 && nbins <= 4u * MW_BINS_OCTAVE_MAX;
}

/* Bins per factor 2 of a layout: 1 or 4. */
static inline unsigned mw_bins_per_octave(uint32_t nbins)
{
    return nbins > MW_BINS_OCTAVE_MAX ? 4u : 1u;
}

/* The quarter-octave bin of ns, not capped (0 .. 255). */
static inline unsigned mw_bin_quarter(uint64_t ns)
{
    unsigned z = (unsigned)__builtin_clzll(ns | 1u); /* 63 - floor(log2 ns) */
    /* the two bits after the leading one, found with the leading one moved to bit 63 */
    return 4u * (63u - z) + (unsigned)(((ns << z) >> 61) & 3u);
}

/* The bin of ns in a layout of nbins bins, not capped at the last bin (0 .. 255). */
static inline unsigned mw_bin_uncapped(uint64_t ns, uint32_t nbins)
{
    if (nbins > MW_BINS_OCTAVE_MAX)
        return mw_bin_quarter(ns);
    return 63u - (unsigned)__builtin_clzll(ns | 1u);
}

/* The bin of ns in a layout of nbins (>= 1) bins: the last one holds every longer duration. */
static inline unsigned mw_bin_of(uint64_t ns, uint32_t nbins)
{
    unsigned b = mw_bin_uncapped(ns, nbins);
    return b < nbins ? b : nbins - 1u;
}

/* log2 of the lower edge of bin b (any b, also past the last bin): the duration axis of the
 * call view is log2, so bins are drawn from these. */
static inline double mw_bin_log2_lo(unsigned b, uint32_t nbins)
{
    if (nbins > MW_BINS_OCTAVE_MAX)
        return (double)(b >> 2) + log2(1.0 + (double)(b & 3u) / 4.0);
    return (double)b;
}

/* The lower edge of bin b in ns (2^b, or 2^L (1 + q/4)); the upper edge is that of b + 1. */
static inline double mw_bin_lo_ns(unsigned b, uint32_t nbins)
{
    if (nbins > MW_BINS_OCTAVE_MAX)
        return ldexp(1.0 + (double)(b & 3u) / 4.0, (int)(b >> 2));
    return ldexp(1.0, (int)b);
}

static inline double mw_bin_hi_ns(unsigned b, uint32_t nbins)
{
    return mw_bin_lo_ns(b + 1u, nbins);
}

/* log2 of the bin's geometric middle: where its calls are drawn, what a cell's duration is. */
static inline double mw_bin_log2_mid(unsigned b, uint32_t nbins)
{
    return (mw_bin_log2_lo(b, nbins) + mw_bin_log2_lo(b + 1u, nbins)) / 2.0;
}

static inline double mw_bin_mid_ns(unsigned b, uint32_t nbins)
{
    return exp2(mw_bin_log2_mid(b, nbins));
}

/* The smallest integer duration in bin b (lo rounded up; for an empty small bin, that of the
 * next one), for writers that need a duration inside a bin (load generator, tests). */
static inline uint64_t mw_bin_min_ns(unsigned b, uint32_t nbins)
{
    double lo = mw_bin_lo_ns(b, nbins);
    return lo >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)ceil(lo);
}

#endif
