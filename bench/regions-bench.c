/* mw-bench-regions: what code regions cost a call (docs/regions.md). Not a test.
 *
 * Built with -finstrument-functions. Run it under mpirun with the library preloaded and
 * MPIWATCH_REGIONS=f_selected (bench/run-regions.sh does): it times N calls of empty functions,
 * side by side,
 *   plain       not instrumented (no_instrument_function)
 *   unselected  instrumented, not in MPIWATCH_REGIONS: the hooks' hash probe misses
 *   selected    instrumented and selected: a region begin and end per call
 *   api         mw_region_begin("api") + mw_region_end("api") around an empty call
 * and prints ns per call for each, the best of 5 rounds.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mpiwatch.h"

#define NOI __attribute__((no_instrument_function))

NOI static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

NOI __attribute__((noinline, noipa)) void f_plain(void);
__attribute__((noinline, noipa)) void f_unselected(void);
__attribute__((noinline, noipa)) void f_selected(void);

NOI __attribute__((noinline, noipa)) void f_plain(void)
{
    __asm__ volatile("");
}

__attribute__((noinline, noipa)) void f_unselected(void)
{
    __asm__ volatile("");
}

__attribute__((noinline, noipa)) void f_selected(void)
{
    __asm__ volatile("");
}

NOI static double per_call(void (*f)(void), long n, int api)
{
    double best = 1e30;
    for (int round = 0; round < 5; round++) {
        uint64_t t0 = now_ns();
        for (long i = 0; i < n; i++) {
            if (api)
                MW_REGION_BEGIN("api");
            f();
            if (api)
                MW_REGION_END("api");
        }
        double ns = (double)(now_ns() - t0) / (double)n;
        if (ns < best)
            best = ns;
    }
    return best;
}

NOI int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long n = argc > 1 ? atol(argv[1]) : 2000000;
    double plain = per_call(f_plain, n, 0);
    double unsel = per_call(f_unselected, n, 0);
    double sel = per_call(f_selected, n, 0);
    double api = per_call(f_plain, n, 1);
    printf("regions-bench: %ld calls, best of 5, ns per call (library %s)\n", n,
           mw_active && mw_active() ? "active" : "absent or inactive");
    printf("  not instrumented              %6.1f\n", plain);
    printf("  instrumented, not selected    %6.1f\n", unsel);
    printf("  instrumented, selected        %6.1f\n", sel);
    printf("  mw_region_begin/end (C API)   %6.1f\n", api);
    MPI_Finalize();
    return 0;
}
