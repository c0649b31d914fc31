/* stpp.c: cost of passing a real MPI_Status instead of MPI_STATUS_IGNORE (what a wrapper
 * substituting its own status would do), 0-byte ping-pong between ranks 0 and 1.
 * Variants interleaved in one run (order alternates per round), median half-RTT:
 *   A  Recv(..., MPI_STATUS_IGNORE)
 *   B  Recv(..., &st) and read st.MPI_SOURCE/MPI_TAG (the substitution)
 *   C  Irecv + Wait(&req, MPI_STATUS_IGNORE)
 *   D  Irecv + Wait(&req, &st), read source/tag
 * build: mpicc -O2 -o stpp stpp.c
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}
static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static volatile long sink;

static double pp(int rank, long iters, int v)
{
    char d = 0;
    MPI_Status st;
    MPI_Request rq;
    long acc = 0;
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int other = size == 1 ? 0 : 1 - rank;
    MPI_Request sr;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_s();
    for (long i = 0; i < iters; i++) {
        if (size == 1)
            MPI_Isend(&d, 0, MPI_CHAR, 0, 1, MPI_COMM_WORLD, &sr);
        else if (rank == 0)
            MPI_Send(&d, 0, MPI_CHAR, other, 1, MPI_COMM_WORLD);
        switch (v) {
        case 0:
            MPI_Recv(&d, 0, MPI_CHAR, other, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            break;
        case 1:
            MPI_Recv(&d, 0, MPI_CHAR, other, 1, MPI_COMM_WORLD, &st);
            acc += st.MPI_SOURCE + st.MPI_TAG;
            break;
        case 2:
            MPI_Irecv(&d, 0, MPI_CHAR, other, 1, MPI_COMM_WORLD, &rq);
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
            break;
        case 3:
            MPI_Irecv(&d, 0, MPI_CHAR, other, 1, MPI_COMM_WORLD, &rq);
            MPI_Wait(&rq, &st);
            acc += st.MPI_SOURCE + st.MPI_TAG;
            break;
        }
        if (size == 1)
            MPI_Wait(&sr, MPI_STATUS_IGNORE);
        else if (rank == 1)
            MPI_Send(&d, 0, MPI_CHAR, other, 1, MPI_COMM_WORLD);
    }
    double us = (now_s() - t0) * 1e6 / ((size == 1 ? 1.0 : 2.0) * iters);
    sink = acc;
    MPI_Bcast(&us, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return us;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long iters = argc > 1 ? atol(argv[1]) : 20000;
    int R = argc > 2 ? atoi(argv[2]) : 21;
    int rank;
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *nm[4] = {"Recv STATUS_IGNORE", "Recv &status (subst.)", "Irecv+Wait STATUS_IGNORE",
                         "Irecv+Wait &status"};
    double r[4][1024];
    for (int v = 0; v < 4; v++)
        pp(rank, iters / 4, v);
    for (int k = 0; k < R; k++)
        for (int j = 0; j < 4; j++) {
            int v = (k & 1) ? 3 - j : j;
            r[v][k] = pp(rank, iters, v);
        }
    if (rank == 0) {
        double pd[2][1024], m[4], q[2][3];
        for (int k = 0; k < R; k++) {
            pd[0][k] = r[1][k] - r[0][k];
            pd[1][k] = r[3][k] - r[2][k];
        }
        for (int j = 0; j < 2; j++) {
            qsort(pd[j], (size_t)R, sizeof(double), cmpd);
            q[j][0] = pd[j][R / 4];
            q[j][1] = pd[j][R / 2];
            q[j][2] = pd[j][3 * R / 4];
        }
        for (int v = 0; v < 4; v++) {
            qsort(r[v], (size_t)R, sizeof(double), cmpd);
            m[v] = r[v][R / 2];
        }
        printf("%s, 0 B, median of %d blocks x %ld (min..max)\n",
               size == 1 ? "self send+recv, per message" : "half RTT", R, iters);
        for (int v = 0; v < 4; v++)
            printf("  %-26s %7.1f ns (%6.1f..%6.1f)  vs IGNORE: %+6.1f ns  %.3fx\n", nm[v],
                   m[v] * 1e3, r[v][0] * 1e3, r[v][R - 1] * 1e3, (m[v] - m[v & 2]) * 1e3,
                   m[v] / m[v & 2]);
        printf("  paired per block, median [quartiles]: Recv %+.1f [%+.1f %+.1f] ns, Irecv+Wait "
               "%+.1f [%+.1f %+.1f] ns\n",
               q[0][1] * 1e3, q[0][0] * 1e3, q[0][2] * 1e3, q[1][1] * 1e3, q[1][0] * 1e3,
               q[1][2] * 1e3);
    }
    MPI_Finalize();
    return 0;
}
