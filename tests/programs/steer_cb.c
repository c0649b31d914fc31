/* steer_cb: the steering callback test program (tests/integration/steer.sh).
 *
 * steer_cb MODE DIR: registers a callback with MW_ON_STEER, notes the thread that called
 * MPI_Init, writes DIR/ready once every rank is initialised, and waits for DIR/stop:
 *   poll  without any MPI call, calling MW_POLL() every 5 ms (each rank looks at the file);
 *   mpi   calling MPI_Bcast every 5 ms (rank 0 looks at the file), never mw_poll();
 *   bare  nothing to wait for: the program must run without the library.
 * Then every rank prints one line, in rank order:
 *   "rank R: KEY=VALUE thread=app|other via=poll|mpi" per message received, or "rank R: none".
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mpiwatch.h"

static pthread_t init_thread;
static int in_poll;
static char got[8][1200];
static int n_got;

static void on_steer(const char *key, const char *value, void *ctx)
{
    (void)ctx;
    if (n_got < 8)
        snprintf(got[n_got++], sizeof got[0], "%s=%s thread=%s via=%s", key, value,
                 pthread_equal(pthread_self(), init_thread) ? "app" : "other",
                 in_poll ? "poll" : "mpi");
}

static int exists(const char *dir, const char *name)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: steer_cb poll|mpi|bare DIR\n");
        return 2;
    }
    const char *mode = argv[1], *dir = argv[2];
    MPI_Init(&argc, &argv);
    init_thread = pthread_self();
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MW_ON_STEER(on_steer, NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    if (strcmp(mode, "bare") == 0) {
        int n = MW_POLL();
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            printf("steer_cb: bare, %d ranks, library %s, polled %d, ok\n", size,
                   mw_on_steer ? "present" : "absent", n);
        MPI_Finalize();
        return 0;
    }
    if (rank == 0) {
        char p[512];
        snprintf(p, sizeof p, "%s/ready", dir);
        FILE *f = fopen(p, "w");
        if (f)
            fclose(f);
    }
    const struct timespec nap = {0, 5000000};
    int poll_mode = strcmp(mode, "poll") == 0;
    for (int i = 0; i < 12000; i++) { /* at most a minute */
        nanosleep(&nap, NULL);
        if (poll_mode) {
            in_poll = 1;
            MW_POLL();
            in_poll = 0;
            if (exists(dir, "stop"))
                break;
        } else {
            int stop = rank == 0 && exists(dir, "stop");
            MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
            if (stop)
                break;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < size; r++) {
        if (r == rank) {
            if (!n_got)
                printf("rank %d: none\n", rank);
            for (int k = 0; k < n_got; k++)
                printf("rank %d: %s\n", rank, got[k]);
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank == 0)
        printf("steer_cb: %s, %d ranks, done\n", mode, size);
    MPI_Finalize();
    return 0;
}
