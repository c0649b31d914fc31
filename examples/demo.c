/*
 * mpiwatch-demo: a small MPI program with a pattern worth watching, run by `mpiwatch demo`.
 *
 * A Jacobi relaxation of the 2-D Laplace equation on a GLOBAL_NX x GLOBAL_NY grid, split into
 * horizontal strips, one per rank. Each iteration every rank
 *   - exchanges its first and last row with its neighbours (MPI_Irecv / MPI_Isend /
 *     MPI_Waitall; the strips at the edges talk to MPI_PROC_NULL),
 *   - relaxes its strip,
 *   - and joins a global MPI_Allreduce of the residual.
 * Rank 2 is a deliberate straggler: it relaxes its strip three times as often (the extra
 * sweeps go to a scratch array, so the numbers do not change), so the other ranks wait for
 * it in MPI_Waitall and MPI_Allreduce. Every BCAST_EVERY iterations rank 0 broadcasts a
 * 32 MB block (think: new boundary data or a checkpoint), a phase of long MPI_Bcast calls.
 *
 * The iteration count comes from argv[1], else MPIWATCH_DEMO_ITERATIONS, else the default,
 * which runs for about 7 s on 4 ranks sharing 2 cores. Rank 0 prints a few progress lines on
 * stdout; that output is the application's own and must pass through mpiwatch unchanged.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    GLOBAL_NX = 2048, /* columns, including the two fixed boundary columns */
    GLOBAL_NY = 2048, /* rows of the interior, split across the ranks */
    DEFAULT_ITERATIONS = 750,
    SLOW_RANK = 2,
    SLOW_FACTOR = 3,
    BCAST_EVERY = 20,
    PRINT_EVERY = 100,
};
#define BCAST_BYTES (32u << 20)

/* One sweep: dst = average of the four neighbours of src over the interior of the strip.
 * Returns the sum of squared changes. Row 0 and row ny+1 are halos. */
static double sweep(const double *src, double *dst, int ny, int nx)
{
    double change = 0.0;
    for (int j = 1; j <= ny; j++) {
        const double *up = src + (size_t)(j - 1) * nx, *mid = src + (size_t)j * nx,
                     *down = src + (size_t)(j + 1) * nx;
        double *out = dst + (size_t)j * nx;
        for (int i = 1; i < nx - 1; i++) {
            double v = 0.25 * (up[i] + down[i] + mid[i - 1] + mid[i + 1]);
            double d = v - mid[i];
            change += d * d;
            out[i] = v;
        }
    }
    return change;
}

static int iterations_from(int argc, char **argv)
{
    const char *s = argc > 1 ? argv[1] : getenv("MPIWATCH_DEMO_ITERATIONS");
    int n = s ? atoi(s) : DEFAULT_ITERATIONS;
    return n > 0 ? n : DEFAULT_ITERATIONS;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int iterations = iterations_from(argc, argv);

    /* Rows per rank; the first GLOBAL_NY % size ranks take one more. */
    const int ny = GLOBAL_NY / size + (rank < GLOBAL_NY % size);
    const int nx = GLOBAL_NX;
    const int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    const int down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    const size_t cells = (size_t)(ny + 2) * nx;
    double *a = calloc(cells, sizeof *a), *b = calloc(cells, sizeof *b);
    double *scratch = calloc(cells, sizeof *scratch);
    unsigned char *block = malloc(BCAST_BYTES);
    if (!a || !b || !scratch || !block) {
        fprintf(stderr, "mpiwatch-demo: rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* Hot left wall, cold elsewhere: heat diffuses in from the left. */
    for (size_t j = 0; j < (size_t)ny + 2; j++)
        a[j * nx] = b[j * nx] = 100.0;

    if (rank == 0)
        printf("mpiwatch-demo: %d ranks, %dx%d grid, %d iterations; rank %d is %dx slower; "
               "a 32 MB broadcast every %d iterations\n",
               size, GLOBAL_NX, GLOBAL_NY, iterations, SLOW_RANK, SLOW_FACTOR, BCAST_EVERY);
    fflush(stdout);

    const double t0 = MPI_Wtime();
    double residual = 0.0;
    for (int it = 1; it <= iterations; it++) {
        /* Halo exchange: my first interior row goes up, my last goes down. */
        MPI_Request req[4];
        MPI_Irecv(a, nx, MPI_DOUBLE, up, 1, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(a + (size_t)(ny + 1) * nx, nx, MPI_DOUBLE, down, 0, MPI_COMM_WORLD, &req[1]);
        MPI_Isend(a + (size_t)nx, nx, MPI_DOUBLE, up, 0, MPI_COMM_WORLD, &req[2]);
        MPI_Isend(a + (size_t)ny * nx, nx, MPI_DOUBLE, down, 1, MPI_COMM_WORLD, &req[3]);
        MPI_Waitall(4, req, MPI_STATUSES_IGNORE);

        double local = sweep(a, b, ny, nx);
        if (rank == SLOW_RANK)
            for (int k = 1; k < SLOW_FACTOR; k++)
                sweep(a, scratch, ny, nx);
        double *t = a;
        a = b;
        b = t;

        double global = 0.0;
        MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        residual = sqrt(global);

        if (it % BCAST_EVERY == 0) {
            if (rank == 0)
                memset(block, it & 0xff, BCAST_BYTES);
            MPI_Bcast(block, (int)BCAST_BYTES, MPI_BYTE, 0, MPI_COMM_WORLD);
            if (block[BCAST_BYTES - 1] != (unsigned char)(it & 0xff)) {
                fprintf(stderr, "mpiwatch-demo: rank %d: broadcast corrupted\n", rank);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        if (rank == 0 && (it % PRINT_EVERY == 0 || it == iterations)) {
            printf("iteration %4d  residual %.6e  (%.1f s)\n", it, residual, MPI_Wtime() - t0);
            fflush(stdout);
        }
    }

    if (rank == 0)
        printf("mpiwatch-demo: done, %d iterations in %.2f s\n", iterations, MPI_Wtime() - t0);
    free(a);
    free(b);
    free(scratch);
    free(block);
    MPI_Finalize();
    return 0;
}
