/*
 * threads: two application threads calling MPI concurrently under MPI_THREAD_MULTIPLE.
 * Each thread makes M calls of MPI_Iprobe on MPI_COMM_WORLD with nothing pending (cheap, no
 * matching state changes), so a correct, thread-safe recorder reports exactly 2*M Iprobe
 * calls per rank; lost or double-counted updates from a racy accumulator show up as a
 * different number. M comes from argv[1] (default 100000).
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long g_calls;

static void *prober(void *arg)
{
    long *probes_found = arg;
    for (long i = 0; i < g_calls; i++) {
        int flag = 0;
        MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        *probes_found += flag;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = 0, rank = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (provided < MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "threads: MPI_THREAD_MULTIPLE not provided (got %d)\n", provided);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    g_calls = argc > 1 ? atol(argv[1]) : 100000;

    pthread_t t[2];
    long found[2] = {0, 0};
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, prober, &found[i]) != 0) {
            fprintf(stderr, "threads: pthread_create failed\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    if (found[0] + found[1] != 0) {
        fprintf(stderr, "threads: rank %d: Iprobe found a message nobody sent\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("threads: 2 threads x %ld MPI_Iprobe per rank, ok\n", g_calls);
    MPI_Finalize();
    return 0;
}
