/* capture_job: a steady MPI job for the capture tests (tests/capture, docs/steering.md).
 *
 * capture_job DIR SECONDS: writes DIR/ready once every rank is initialised, then repeats
 * every 2 ms, until DIR/stop exists (rank 0 looks, and a broadcast tells the others) or
 * SECONDS have passed: a ring exchange (MPI_Isend to the next rank, MPI_Recv from the
 * previous one, MPI_Wait), an MPI_Allreduce of one int, an MPI_Comm_rank (a local query, only
 * counted by mpiwatch) and the MPI_Bcast of the stop flag. So every window has calls of five
 * timed functions with bytes and peers, and one counted function. Rank 0 prints
 * "capture_job: N ranks, I iterations, done".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: capture_job DIR SECONDS\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char ready[512], stop[512];
    snprintf(ready, sizeof ready, "%s/ready", argv[1]);
    snprintf(stop, sizeof stop, "%s/stop", argv[1]);
    double limit = atof(argv[2]), t0 = now_s();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        FILE *f = fopen(ready, "w");
        if (f)
            fclose(f);
    }
    const struct timespec nap = {0, 2000000};
    long iters = 0;
    int done = 0, out[4] = {0}, in[4] = {0};
    while (!done) {
        MPI_Request req;
        out[0] = (int)iters;
        MPI_Isend(out, 4, MPI_INT, (rank + 1) % size, 7, MPI_COMM_WORLD, &req);
        MPI_Recv(in, 4, MPI_INT, (rank + size - 1) % size, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        int one = 1, sum = 0, me;
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
        if (sum != size || me != rank || in[0] != (int)iters) {
            fprintf(stderr, "capture_job: rank %d: wrong data at iteration %ld\n", rank, iters);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (rank == 0)
            done = access(stop, F_OK) == 0 || now_s() - t0 > limit;
        MPI_Bcast(&done, 1, MPI_INT, 0, MPI_COMM_WORLD);
        iters++;
        nanosleep(&nap, NULL);
    }
    if (rank == 0)
        printf("capture_job: %d ranks, %ld iterations, done\n", size, iters);
    MPI_Finalize();
    return 0;
}
