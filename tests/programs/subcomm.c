/* subcomm: point-to-point sends on communicators other than MPI_COMM_WORLD, whose ranks the
 * library must translate to world ranks for its pairs. World ranks are split into evens and
 * odds, reversed (key = -rank), so a sub-communicator rank is never the world rank; each rank
 * sends N messages of 16 doubles to its successor in its half (sub rank + 1, wrapping), and N
 * messages of 4 ints to world rank 0 through a duplicate of MPI_COMM_WORLD that is then freed
 * and replaced (the library must forget the freed communicator). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, n = argc > 1 ? atoi(argv[1]) : 10;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    int hr, hs;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_size(half, &hs);
    double d[16] = {0};
    for (int i = 0; i < n; i++) {
        MPI_Request rq[2];
        MPI_Irecv(d, 16, MPI_DOUBLE, (hr + hs - 1) % hs, 1, half, &rq[0]);
        double s[16] = {0};
        MPI_Isend(s, 16, MPI_DOUBLE, (hr + 1) % hs, 1, half, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    }
    for (int round = 0; round < 2; round++) {
        MPI_Comm dup;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        int v[4] = {rank, rank, rank, rank}, in[4];
        for (int i = 0; i < n / 2; i++) {
            if (rank == 0) {
                for (int r = 1; r < size; r++)
                    MPI_Recv(in, 4, MPI_INT, r, 2, dup, MPI_STATUS_IGNORE);
            } else {
                MPI_Send(v, 4, MPI_INT, 0, 2, dup);
            }
        }
        MPI_Comm_free(&dup);
    }
    MPI_Comm_free(&half);
    if (rank == 0)
        printf("subcomm: %d ranks, N=%d, ok\n", size, n);
    MPI_Finalize();
    return 0;
}
