/* dormant-cost.c: what one call costs in dormant mode, measured inside one process (not a test;
 * the figures of docs/overhead.md "Dormant mode").
 *
 * Jobs that compete for two cores with other work cannot resolve a few ns (bench/run-dormant.sh
 * prints what they can), so here blocks of calls alternate in one process: PMPI_Test called
 * directly (bare: the MPI call without the library), MPI_Test through the library's wrapper
 * while dormant, while inert (neither recording nor dormant: the bare call behind the
 * wrapper's two tests) and while recording in full (trace off and on are a setting of the
 * process: run it twice). PMPI_Test is defined here and does nothing, so the differences are
 * the library's own cost per call. Prints the fastest block and the median of the blocks per
 * mode, in ns per call, and the differences to bare.
 *
 * usage: mw-dormant-cost [BLOCKS [CALLS]]   (400 blocks of 20000 calls)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shim.h"

__attribute__((noinline)) int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    (void)request, (void)status;
    *flag = 1;
    __asm__ volatile("" ::: "memory");
    return MPI_SUCCESS;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

enum { BARE, DORMANT, INERT, FULL, NMODES };
static const char *const names[NMODES] = {"bare PMPI_Test", "dormant", "inert", "full"};

static double block(int mode, long calls)
{
    MPI_Request rq = MPI_REQUEST_NULL;
    int flag;
    if (mode == DORMANT)
        mw__dormant_set(1);
    else if (mode == FULL)
        mw__dormant_set(0);
    else if (mode == INERT)
        mw__set_state(-1, 1); /* paused: neither recording nor dormant */
    double t0 = now_ns();
    if (mode == BARE)
        for (long i = 0; i < calls; i++)
            PMPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
    else
        for (long i = 0; i < calls; i++)
            MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
    double ns = (now_ns() - t0) / (double)calls;
    if (mode == INERT)
        mw__set_state(-1, 0);
    return ns;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int blocks = argc > 1 ? atoi(argv[1]) : 400;
    long calls = argc > 2 ? atol(argv[2]) : 20000;
    if (blocks < 1 || calls < 1)
        return 2;
    memset(&mw__g, 0, sizeof mw__g);
    mw__config_read(&mw__g.cfg);
    mw__g.cfg.max_threads = 2;
    mw__g.size = 2;
    mw__timer_init(mw__g.cfg.timer);
    mw__g.need_fence = 1;
    if (mw__alloc() != 0)
        return 1;
    mw__trace.on = 0;                  /* no trace rings were set up */
    mw__grid_init(60000000000ull, 10); /* one window for the whole run: full mode never drops */
    mw__set_state(1, 0);
    double *v[NMODES];
    for (int m = 0; m < NMODES; m++)
        if (!(v[m] = malloc((size_t)blocks * sizeof(double))))
            return 1;
    for (int b = 0; b < blocks; b++)
        for (int i = 0; i < NMODES; i++) {
            int m = (b + i) % NMODES;
            v[m][b] = block(m, calls);
        }
    printf("mw-dormant-cost: %d blocks of %ld calls per mode, timer %s\n", blocks, calls,
           mw__g.use_tsc ? "tsc" : "clock_gettime");
    printf("%-16s %10s %10s %12s %12s\n", "mode", "fastest", "median", "fastest-bare",
           "median-bare");
    double f0 = 0, m0 = 0;
    for (int m = 0; m < NMODES; m++) {
        qsort(v[m], (size_t)blocks, sizeof(double), cmp);
        double f = v[m][0], med = v[m][blocks / 2];
        if (m == BARE)
            f0 = f, m0 = med;
        printf("%-16s %10.2f %10.2f %+12.2f %+12.2f\n", names[m], f, med, f - f0, med - m0);
    }
    /* The full-mode blocks were never collected: their windows' slots filled and later calls
     * went the slow path counting drops, which is still the cost of a timed call's record. */
    return 0;
}
