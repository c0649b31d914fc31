/*
 * regions: an MPI program with known code regions and known sends, for tests/shim/regions.sh
 * (docs/regions.md). Built twice: `regions` marks its regions with mw_region_begin/end
 * (through MW_REGION_BEGIN/END, so it also runs without the library), `regions_instr` is the
 * same source built with -finstrument-functions and -DMW_INSTR, and gets the same regions
 * from MPIWATCH_REGIONS=region_*,thread_?,deep_region,paused_* without a call. argv[1] is N.
 *
 * Per rank (any number of ranks >= 2), on the thread that called MPI_Init:
 *   N x region_a { spin 2 ms; region_b { spin 1 ms; MPI_Barrier }; spin 1 ms }
 *     (the only MPI_Barrier calls of the program: all their time is region_b's MPI time)
 *   deep_region nested 10 deep (run with MPIWATCH_REGION_DEPTH=8: 8 instances, 2 dropped)
 *   one mw_region_end("no_such_region") with no region open (1 dropped)
 *   to rank (r+1)%size, 8 MPI_INT each: 3 x MPI_Send, 2 x MPI_Isend, 1 x MPI_Ssend, and one
 *   persistent send (MPI_Send_init) started 4 x (MPI_Start + MPI_Wait); from (r-1)%size the
 *   matching receives (5 x MPI_Recv, 5 x MPI_Irecv)
 *   MPI_Pcontrol(0), 5 x paused_inner, then paused_open, which calls MPI_Pcontrol(1) inside:
 *   none of these instances is reported (paused at their begin), none is dropped
 * and on a second thread, started after MPI_Init with MPI_THREAD_FUNNELED (it calls no MPI),
 * while the first one runs its loop:
 *   2N x thread_t { spin 0.5 ms; thread_u { spin 0.2 ms } }
 * Prints "regions: rank R loop_ns X" (the wall time of the N region_a instances, taken
 * around the loop) and "regions: R ranks, done".
 */
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mpiwatch.h"

#ifdef MW_INSTR
#define RB(name)
#define RE(name)
#else
#define RB(name) MW_REGION_BEGIN(name)
#define RE(name) MW_REGION_END(name)
#endif

#define NOINLINE __attribute__((noinline, noipa))

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void spin(uint64_t ns)
{
    uint64_t end = now_ns() + ns;
    while (now_ns() < end)
        ;
}

NOINLINE void region_b(void);
NOINLINE void region_a(void);
NOINLINE void deep_region(int n);
NOINLINE void thread_u(void);
NOINLINE void paused_inner(void);
NOINLINE void paused_open(void);
NOINLINE void thread_t(void);

NOINLINE void region_b(void)
{
    RB("region_b");
    spin(1000000);
    MPI_Barrier(MPI_COMM_WORLD);
    RE("region_b");
}

NOINLINE void region_a(void)
{
    RB("region_a");
    spin(2000000);
    region_b();
    spin(1000000);
    RE("region_a");
}

NOINLINE void deep_region(int n)
{
    RB("deep_region");
    spin(100000);
    if (n > 1)
        deep_region(n - 1);
    RE("deep_region");
}

NOINLINE void thread_u(void)
{
    RB("thread_u");
    spin(200000);
    RE("thread_u");
}

NOINLINE void thread_t(void)
{
    RB("thread_t");
    spin(500000);
    thread_u();
    RE("thread_t");
}

/* Called while recording is paused: never reported. */
NOINLINE void paused_inner(void)
{
    RB("paused_inner");
    spin(100000);
    RE("paused_inner");
}

/* Begins while paused, resumes recording, ends: not reported either (docs/regions.md). */
NOINLINE void paused_open(void)
{
    RB("paused_open");
    MPI_Pcontrol(1);
    spin(100000);
    RE("paused_open");
}

static int n_iter;

static void *second(void *arg)
{
    (void)arg;
    for (int i = 0; i < 2 * n_iter; i++)
        thread_t();
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    n_iter = argc > 1 ? atoi(argv[1]) : 20;
    if (n_iter < 1 || size < 2) {
        fprintf(stderr, "regions: needs N >= 1 and 2 ranks or more\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    pthread_t th;
    if (pthread_create(&th, NULL, second, NULL) != 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    uint64_t t0 = now_ns();
    for (int i = 0; i < n_iter; i++)
        region_a();
    uint64_t loop = now_ns() - t0;
    pthread_join(th, NULL);
    deep_region(10);
    MW_REGION_END("no_such_region");

    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    int out[10][8], in[8];
    for (int k = 0; k < 10; k++)
        for (int j = 0; j < 8; j++)
            out[k][j] = rank * 1000 + k * 10 + j;
    MPI_Request req[2], preq;
    for (int k = 0; k < 3; k++)
        MPI_Send(out[k], 8, MPI_INT, right, k, MPI_COMM_WORLD);
    for (int k = 0; k < 2; k++)
        MPI_Isend(out[3 + k], 8, MPI_INT, right, 3 + k, MPI_COMM_WORLD, &req[k]);
    for (int k = 0; k < 5; k++) {
        MPI_Recv(in, 8, MPI_INT, left, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (in[7] != left * 1000 + k * 10 + 7)
            MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    /* Ssend after the receives above, so that ring neighbours cannot deadlock: Irecv first. */
    MPI_Request rreq;
    MPI_Irecv(in, 8, MPI_INT, left, 5, MPI_COMM_WORLD, &rreq);
    MPI_Ssend(out[5], 8, MPI_INT, right, 5, MPI_COMM_WORLD);
    MPI_Wait(&rreq, MPI_STATUS_IGNORE);
    MPI_Send_init(out[6], 8, MPI_INT, right, 6, MPI_COMM_WORLD, &preq);
    for (int k = 0; k < 4; k++) {
        MPI_Irecv(in, 8, MPI_INT, left, 6, MPI_COMM_WORLD, &rreq);
        MPI_Start(&preq);
        MPI_Wait(&preq, MPI_STATUS_IGNORE);
        MPI_Wait(&rreq, MPI_STATUS_IGNORE);
        if (in[7] != left * 1000 + 67)
            MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Request_free(&preq);
    MPI_Pcontrol(0);
    for (int k = 0; k < 5; k++)
        paused_inner();
    paused_open(); /* resumes recording */
    printf("regions: rank %d loop_ns %llu\n", rank, (unsigned long long)loop);
    fflush(stdout);
    int one = 1, all = 0;
    MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("regions: %d ranks, done\n", all);
    MPI_Finalize();
    return 0;
}
