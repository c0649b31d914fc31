/* callsites.c: a known pattern of MPI calls from known source lines, for the call-site tests
 * (tests/shim/callsites.sh, docs/callsites.md). Built with -g.
 *
 * callsites N: every rank calls MPI_Allreduce N times from the line marked SITE_A (in
 * reduce_a) and 2N times from the line marked SITE_B (in reduce_b); ranks 0 and 1 then
 * exchange N messages: rank 0 sends from the line marked SITE_SEND (in exchange), rank 1
 * receives from SITE_RECV. The checker finds the lines by these markers, never by number.
 * Each function is noinline so that the enclosing function of each site is known.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static void reduce_a(int n)
{
    for (int i = 0; i < n; i++) {
        int x = i, y = 0;
        MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* SITE_A */
    }
}

__attribute__((noinline)) static void reduce_b(int n)
{
    for (int i = 0; i < n; i++) {
        double x = i, y = 0;
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD); /* SITE_B */
    }
}

__attribute__((noinline)) static void exchange(int rank, int n)
{
    int buf[4] = {0};
    for (int i = 0; i < n; i++) {
        if (rank == 0)
            MPI_Send(buf, 4, MPI_INT, 1, 7, MPI_COMM_WORLD); /* SITE_SEND */
        else if (rank == 1)
            MPI_Recv(buf, 4, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* SITE_RECV */
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 10, rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    reduce_a(n);
    reduce_b(2 * n);
    exchange(rank, n);
    MPI_Finalize();
    if (rank == 0)
        printf("callsites: %d ranks, N=%d, done\n", size, n);
    return 0;
}
