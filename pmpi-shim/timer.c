/* timer.c: the hot path's clock.
 *
 * DESIGN: rdtsc costs a few ns and clock_gettime about twenty here, and a wrapper takes two
 * timestamps, so the TSC is used when the CPU says it is invariant (CPUID 0x80000007 EDX bit
 * 8) and a calibration against CLOCK_MONOTONIC agrees with itself; otherwise ticks are
 * CLOCK_MONOTONIC nanoseconds. Ticks become nanoseconds with one 64x64->128 multiply by a
 * 32.32 fixed-point factor measured at init.
 */
#include "shim.h"

#include <cpuid.h>
#include <time.h>

uint64_t mw__monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int tsc_invariant(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return 0;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d >> 8) & 1u;
}

/* Measures ticks per ns over `ms` milliseconds; returns the 32.32 ns-per-tick factor. */
static uint64_t tsc_measure(unsigned ms, uint64_t *ticks0, uint64_t *ns0)
{
    uint64_t n0 = mw__monotonic_ns(), t0 = __builtin_ia32_rdtsc();
    uint64_t n1, t1;
    do {
        n1 = mw__monotonic_ns();
        t1 = __builtin_ia32_rdtsc();
    } while (n1 - n0 < (uint64_t)ms * 1000000ull);
    if (ticks0) {
        *ticks0 = t0;
        *ns0 = n0;
    }
    if (t1 <= t0)
        return 0;
    return (uint64_t)(((unsigned __int128)(n1 - n0) << 32) / (t1 - t0));
}

int mw__timer_init(int want)
{
    mw__g.use_tsc = 0;
    mw__g.mult = 1ull << 32;
    mw__g.base_ticks = 0;
    mw__g.base_ns = 0;
    if (want == 2 || (want == 0 && !tsc_invariant()))
        return 0;
    /* Two short calibrations must agree to 0.1%; a TSC that drifts against the monotonic
     * clock (some virtual machines) is not worth its speed. */
    uint64_t m1 = tsc_measure(5, NULL, NULL);
    uint64_t t0, n0;
    uint64_t m2 = tsc_measure(20, &t0, &n0);
    if (m1 == 0 || m2 == 0)
        return 0;
    uint64_t diff = m1 > m2 ? m1 - m2 : m2 - m1;
    if (diff * 1000 > m2) {
        mw__log("TSC calibration unstable (%llu vs %llu); using clock_gettime",
                (unsigned long long)m1, (unsigned long long)m2);
        return 0;
    }
    mw__g.mult = m2;
    mw__g.base_ticks = t0;
    mw__g.base_ns = n0;
    mw__g.use_tsc = 1;
    return 0;
}

uint64_t mw__ns_to_ticks(uint64_t ns)
{
    return (uint64_t)(((unsigned __int128)ns << 32) / mw__g.mult);
}

uint64_t mw__global_to_ticks(uint64_t global_ns)
{
    int64_t local = (int64_t)global_ns - mw__g.offset_ns;
    int64_t rel = local - (int64_t)mw__g.base_ns;
    if (rel >= 0)
        return mw__g.base_ticks + mw__ns_to_ticks((uint64_t)rel);
    return mw__g.base_ticks - mw__ns_to_ticks((uint64_t)-rel);
}
