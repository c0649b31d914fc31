/*
 * known_c: a fixed pattern of MPI calls whose counts, bytes and peers the integration tests
 * know exactly (tests/integration/check_summary.py computes the expectation from N and the
 * world size). The same pattern exists in C++, Fortran (mpif.h, use mpi, use mpi_f08) and
 * Python; keep them in step with each other and with the checker.
 *
 * Per rank, with N from argv[1] (default 10):
 *   N     x MPI_Allreduce of 8 MPI_INT (sum)
 *   N     x MPI_Send of 256 MPI_DOUBLE to (rank+1)%size and MPI_Recv from (rank-1+size)%size;
 *           even ranks send first and odd ranks receive first, so the ring cannot deadlock
 *           even without eager buffering (for an even world size)
 *   N     x MPI_Irecv of 10 MPI_INT from (rank+1)%size, MPI_Isend of 10 MPI_INT to
 *           (rank+size-1)%size, MPI_Waitall of both
 *   N/2   x MPI_Bcast of 1000 MPI_BYTE from rank 0
 *   5     x MPI_Barrier
 * The results are checked, so a wrapper that corrupted arguments would make the program fail.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(int rank, const char *what, long got, long want)
{
    fprintf(stderr, "known_c: rank %d: %s: got %ld, want %ld\n", rank, what, got, want);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int n = argc > 1 ? atoi(argv[1]) : 10;
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;

    for (int i = 0; i < n; i++) {
        int in[8], out[8];
        for (int k = 0; k < 8; k++)
            in[k] = rank + k + i;
        MPI_Allreduce(in, out, 8, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        long want = (long)size * (size - 1) / 2 + (long)size * (3 + i);
        if (out[3] != want)
            return fail(rank, "allreduce", out[3], want);
    }

    double sbuf[256], rbuf[256];
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 256; k++)
            sbuf[k] = rank * 1000.0 + k + i;
        if (rank % 2 == 0) {
            MPI_Send(sbuf, 256, MPI_DOUBLE, right, 1, MPI_COMM_WORLD);
            MPI_Recv(rbuf, 256, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rbuf, 256, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, 256, MPI_DOUBLE, right, 1, MPI_COMM_WORLD);
        }
        if (rbuf[7] != left * 1000.0 + 7 + i)
            return fail(rank, "ring recv", (long)rbuf[7], (long)(left * 1000.0 + 7 + i));
    }

    for (int i = 0; i < n; i++) {
        int s[10], r[10];
        MPI_Request req[2];
        for (int k = 0; k < 10; k++)
            s[k] = rank * 100 + k + i;
        MPI_Irecv(r, 10, MPI_INT, right, 2, MPI_COMM_WORLD, &req[0]);
        MPI_Isend(s, 10, MPI_INT, left, 2, MPI_COMM_WORLD, &req[1]);
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        if (r[9] != right * 100 + 9 + i)
            return fail(rank, "isend/irecv", r[9], right * 100 + 9 + i);
    }

    unsigned char bytes[1000];
    for (int i = 0; i < n / 2; i++) {
        memset(bytes, rank == 0 ? (unsigned char)(i + 1) : 0, sizeof bytes);
        MPI_Bcast(bytes, 1000, MPI_BYTE, 0, MPI_COMM_WORLD);
        if (bytes[999] != (unsigned char)(i + 1))
            return fail(rank, "bcast", bytes[999], i + 1);
    }

    for (int i = 0; i < 5; i++)
        MPI_Barrier(MPI_COMM_WORLD);

    if (rank == 0)
        printf("known_c: %d ranks, N=%d, pattern ok\n", size, n);
    MPI_Finalize();
    return 0;
}
