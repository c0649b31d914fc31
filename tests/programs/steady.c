/* steady: a known, steady stream of MPI calls for tests/integration/steer_rule.sh.
 *
 * steady DIR: every rank calls MPI_Allreduce (one int: rank 0's "stop" flag) about every 2 ms
 * until rank 0 sees the file DIR/stop, then rank 0 prints "steady: R ranks, N iterations".
 * Every window of 50 ms therefore holds tens of calls from every rank, unless recording is
 * paused (mpiwatch.pause), which the test checks window by window. It writes DIR/ready once
 * every rank is initialised.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: steady DIR\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char stop_path[512], ready_path[512];
    snprintf(stop_path, sizeof stop_path, "%s/stop", argv[1]);
    snprintf(ready_path, sizeof ready_path, "%s/ready", argv[1]);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        FILE *f = fopen(ready_path, "w");
        if (f)
            fclose(f);
    }
    const struct timespec nap = {0, 2000000};
    long n = 0;
    for (int stop = 0; !stop && n < 60000; n++) { /* at most about two minutes */
        nanosleep(&nap, NULL);
        int mine = rank == 0 && access(stop_path, F_OK) == 0;
        MPI_Allreduce(&mine, &stop, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    }
    if (rank == 0)
        printf("steady: %d ranks, %ld iterations\n", size, n);
    MPI_Finalize();
    return 0;
}
