/* failopen_app.c: a small, deterministic MPI program for the fail-open tests.
 *
 * usage: failopen_app [EXIT_CODE [ITERATIONS [SLEEP_US]]]   (defaults 3, 250, 10000)
 *
 * Every iteration makes a dozen or so MPI calls of different kinds (collectives, a ring of
 * nonblocking sends, probes, local queries) and then sleeps, so a default run lasts about
 * 2.5 s and spans many of the library's windows. Only rank 0 prints, and only values that
 * depend on the iteration and the number of ranks, so two runs print byte-identical stdout
 * whether or not mpiwatch is preloaded. When FAILOPEN_MARK names a file, rank 0 creates it
 * half way through: the tests use it to act on the collector while the job is running. The
 * When FAILOPEN_TIMING is set, every rank writes how long its MPI_Finalize took (ms) to the
 * file FAILOPEN_TIMING.RANK, which lets a test bound the library's wait at the end. The
 * program exits with EXIT_CODE after MPI_Finalize on rank 0 and with 0 on the other ranks:
 * mpirun ends the job at the first non-zero exit, so a non-zero status on every rank would
 * race with rank 0's last line.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

int main(int argc, char **argv)
{
    int code = argc > 1 ? atoi(argv[1]) : 3;
    int iters = argc > 2 ? atoi(argv[2]) : 250;
    int sleep_us = argc > 3 ? atoi(argv[3]) : 10000;
    const char *mark = getenv("FAILOPEN_MARK");
    const char *timing = getenv("FAILOPEN_TIMING");

    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
        printf("failopen_app: %d ranks, %d iterations\n", size, iters);
        fflush(stdout);
    }
    unsigned long checksum = 0;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int i = 0; i < iters; i++) {
        long mine = (long)rank * 1000 + i, sum = 0, out = mine, in = -1;
        MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        MPI_Request req[2];
        MPI_Irecv(&in, 1, MPI_LONG, left, i, MPI_COMM_WORLD, &req[0]);
        MPI_Isend(&out, 1, MPI_LONG, right, i, MPI_COMM_WORLD, &req[1]);
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        int root_value = rank == 0 ? i * 7 : -1;
        MPI_Bcast(&root_value, 1, MPI_INT, 0, MPI_COMM_WORLD);
        int flag, r;
        for (int k = 0; k < 8; k++) {
            MPI_Iprobe(MPI_ANY_SOURCE, 99999, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            MPI_Comm_rank(MPI_COMM_WORLD, &r);
        }
        long ring_max = 0;
        MPI_Reduce(&in, &ring_max, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        checksum = checksum * 31u + (unsigned long)sum + (unsigned long)root_value;
        if (rank == 0) {
            checksum += (unsigned long)ring_max;
            if (i % 25 == 0)
                printf("iteration %d: sum %ld, ring max %ld, bcast %d\n", i, sum, ring_max,
                       root_value);
            if (mark && i == iters / 2) {
                int fd = open(mark, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                if (fd >= 0)
                    close(fd);
            }
        }
        if (sleep_us > 0)
            usleep((useconds_t)sleep_us);
    }
    if (rank == 0) {
        printf("checksum %lx\n", checksum);
        fflush(stdout);
    }
    double t0 = now_ms();
    MPI_Finalize();
    double finalize_ms = now_ms() - t0;
    if (timing) {
        char path[4096];
        snprintf(path, sizeof path, "%s.%d", timing, rank);
        FILE *f = fopen(path, "w");
        if (f) {
            fprintf(f, "%.1f\n", finalize_ms);
            fclose(f);
        }
    }
    if (rank != 0)
        return 0;
    printf("finalized, exiting with status %d\n", code);
    return code;
}
