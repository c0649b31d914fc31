/* mw-site-cost: what the call-site accounting adds to one timed call (docs/callsites.md
 * "Cost"), measured in one process so that a loaded machine hits both sides alike: a wrapper's
 * body (mw__begin, a call to an empty non-inlined function standing for PMPI_X, mw__end, with
 * the TSC when the machine has a usable one) runs in blocks of CALLS calls with the thread's
 * call-site table on and off (t->site_off, the one field the record tests), alternating
 * (ABBA) BLOCKS times. Prints per mode the fastest and the median block in ns per call, and
 * the differences. mw__begin stores the return address in both modes, as the wrappers do
 * whatever the setting; with SITES > 1 the calls rotate over that many return addresses.
 *
 * usage: [MPIWATCH_TIMER=clock] mw-site-cost [CALLS [BLOCKS [SITES]]]  (20000, 400, 1)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shim.h"

#define W 1000000000000ull /* 1000 s windows: every call lands in one window */

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* PMPI_X's stand-in. */
__attribute__((noinline)) static int pmpi_stand_in(void)
{
    __asm__ volatile("" ::: "memory");
    return 0;
}

__attribute__((noinline)) static double block(mw_thread_t *t, unsigned calls, unsigned sites)
{
    double t0 = now_ns();
    for (unsigned i = 0; i < calls; i++) {
        uint64_t c0 = mw__begin(t, MW_ID_Iprobe);
        if (sites > 1)
            t->ra += 16u * (i & (sites - 1));
        pmpi_stand_in();
        mw__end(t, MW_ID_Iprobe, c0, 0, -1);
    }
    return (now_ns() - t0) / calls;
}

int main(int argc, char **argv)
{
    unsigned calls = argc > 1 ? (unsigned)atoi(argv[1]) : 20000;
    unsigned blocks = argc > 2 ? (unsigned)atoi(argv[2]) : 400;
    unsigned sites = argc > 3 ? (unsigned)atoi(argv[3]) : 1;
    if (!calls || !blocks || !sites || (sites & (sites - 1)))
        return 2; /* SITES: a power of two */
    setenv("MPIWATCH_CALLSITES", "on", 1);
    setenv("MPIWATCH_TRACE", "off", 1);
    memset(&mw__g, 0, sizeof mw__g);
    mw__config_read(&mw__g.cfg);
    mw__g.cfg.max_threads = 2;
    mw__g.size = 2;
    mw__timer_init(mw__g.cfg.timer); /* MPIWATCH_TIMER=clock: clock_gettime */
    mw__g.offset_ns = 0;
    if (mw__alloc() != 0)
        return 1;
    mw__grid_init(W, 10);
    mw__set_state(1, 0);
    atomic_store(&mw__g.closed_upto, mw__grid_index(mw__global_ns(mw__now())) - 1);
    mw_thread_t *t = mw__self(0);
    if (!t || !t->site_off)
        return 1;
    uint32_t on_off = t->site_off;
    double *v[2] = {calloc(blocks, sizeof(double)), calloc(blocks, sizeof(double))};
    for (unsigned b = 0; b < blocks; b++)
        for (unsigned k = 0; k < 2; k++) {
            unsigned mode = (b & 1) ? 1 - k : k; /* ABBA */
            t->site_off = mode ? on_off : 0;
            v[mode][b] = block(t, calls, sites);
        }
    qsort(v[0], blocks, sizeof(double), cmp);
    qsort(v[1], blocks, sizeof(double), cmp);
    printf("calls per block %u, blocks %u per mode, sites %u, timer %s\n", calls, blocks, sites,
           mw__g.use_tsc ? "tsc" : "clock_gettime");
    printf("off: fastest %.2f ns, median %.2f ns per call\n", v[0][0], v[0][blocks / 2]);
    printf("on:  fastest %.2f ns, median %.2f ns per call\n", v[1][0], v[1][blocks / 2]);
    printf("on - off: fastest %+.2f ns, median %+.2f ns per call\n", v[1][0] - v[0][0],
           v[1][blocks / 2] - v[0][blocks / 2]);
    return 0;
}
