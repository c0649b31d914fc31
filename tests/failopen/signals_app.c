/* signals_app.c: prints which signals have a handler, for the fail-open signals test.
 *
 * The library lives inside someone else's program: it must not install, change or remove a
 * signal handler, nor change the signal mask of the application's threads (its own threads
 * block everything). This program prints, after MPI_Init (once the library's sender thread
 * and ZeroMQ's threads have had time to start and connect) and again after MPI_Finalize, the
 * disposition of every signal 1..64 that is not the default (H: a handler, I: ignored) and
 * the signals blocked in the main thread. The test compares the output of runs with and
 * without the library. Every rank checks that it sees what rank 0 sees.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAXSIG 64

/* Fills text with "handled: ... blocked: ..."; returns a hash of it. */
static unsigned long describe(char *text, size_t cap)
{
    size_t n = 0;
    n += (size_t)snprintf(text + n, cap - n, "handled:");
    for (int s = 1; s <= MAXSIG && n < cap; s++) {
        struct sigaction sa;
        if (sigaction(s, NULL, &sa) != 0)
            continue; /* glibc reserves 32 and 33 */
        /* With SA_SIGINFO the union holds a three-argument handler, never SIG_DFL/SIG_IGN. */
        int info = (sa.sa_flags & SA_SIGINFO) != 0;
        if (!info && sa.sa_handler == SIG_DFL)
            continue;
        n += (size_t)snprintf(text + n, cap - n, " %d%s", s,
                              !info && sa.sa_handler == SIG_IGN ? "I" : "H");
    }
    sigset_t mask;
    pthread_sigmask(SIG_SETMASK, NULL, &mask);
    n += (size_t)snprintf(text + n, cap - n, "; blocked:");
    for (int s = 1; s <= MAXSIG && n < cap; s++)
        if (sigismember(&mask, s) == 1)
            n += (size_t)snprintf(text + n, cap - n, " %d", s);
    unsigned long h = 5381;
    for (const char *p = text; *p; p++)
        h = h * 33u + (unsigned char)*p;
    return h;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 0; i < 10; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        usleep(30000);
    }
    char text[1024];
    unsigned long h = describe(text, sizeof text), lo, hi;
    MPI_Allreduce(&h, &lo, 1, MPI_UNSIGNED_LONG, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&h, &hi, 1, MPI_UNSIGNED_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("after MPI_Init: %s\n", text);
        printf("all %d ranks agree: %s\n", size, lo == hi ? "yes" : "no");
        fflush(stdout);
    }
    MPI_Finalize();
    describe(text, sizeof text);
    if (rank == 0)
        printf("after MPI_Finalize: %s\n", text);
    return 0;
}
