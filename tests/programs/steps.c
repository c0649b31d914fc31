/*
 * steps: MPI programs with known time steps, for the per-step tests (tests/integration/
 * steps.sh, docs/steps.md). argv[1] picks how steps are marked, argv[2] is the step count N.
 *
 *   api    step s (0..N-1): s+1 x MPI_Allreduce of 1 MPI_INT, 2 x MPI_Isend of s+1 MPI_INT to
 *          (rank+1)%size, 2 x MPI_Recv from (rank-1+size)%size, 1 x MPI_Waitall, then
 *          mw_step(s) (through MW_STEP, so the program also runs without the library)
 *   every  for MPIWATCH_STEP=MPI_Allreduce:3: step s: MPI_Allreduce, the same sends, receives
 *          and Waitall, then 2 x MPI_Allreduce; no mw_step()
 *   auto   for MPIWATCH_STEP=auto: N iterations of MPI_Allreduce, 2 x MPI_Isend of 4 MPI_INT,
 *          2 x MPI_Recv, MPI_Waitall, MPI_Bcast of 1 MPI_INT; no mw_step()
 * Steps sleep a little (a few ms, varying) so that some windows hold several steps and some
 * steps span several windows. Before the loop only MPI_Init, MPI_Comm_rank and MPI_Comm_size
 * are called; after it MPI_Barrier and MPI_Finalize.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpiwatch.h"

static void nap(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

static void exchange(int count, int right, int left, int s)
{
    int out[2][64], in[64];
    MPI_Request req[2];
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < count; i++)
            out[k][i] = s * 100 + k + i;
        MPI_Isend(out[k], count, MPI_INT, right, k, MPI_COMM_WORLD, &req[k]);
    }
    for (int k = 0; k < 2; k++) {
        MPI_Recv(in, count, MPI_INT, left, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (in[count - 1] != s * 100 + k + count - 1) {
            fprintf(stderr, "steps: bad data in step %d\n", s);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
}

static void allreduce(int rank)
{
    int in = rank, out = 0;
    MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "api";
    int n = argc > 2 ? atoi(argv[2]) : 10;
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    if (n < 1 || n > 100000 ||
        (strcmp(mode, "api") && strcmp(mode, "every") && strcmp(mode, "auto"))) {
        fprintf(stderr, "usage: steps api|every|auto N\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int s = 0; s < n; s++) {
        if (strcmp(mode, "api") == 0) {
            for (int k = 0; k <= s; k++)
                allreduce(rank);
            exchange(s % 64 + 1, right, left, s);
            nap((s % 5) * 3000);
            MW_STEP(s);
        } else if (strcmp(mode, "every") == 0) {
            allreduce(rank);
            exchange(s % 64 + 1, right, left, s);
            nap((s % 5) * 3000);
            allreduce(rank);
            allreduce(rank);
        } else {
            allreduce(rank);
            exchange(4, right, left, s);
            int v = s;
            MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
            nap(300);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("steps: %d ranks, %s, N=%d, ok\n", size, mode, n);
    MPI_Finalize();
    return 0;
}
