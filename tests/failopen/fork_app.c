/* fork_app.c: an MPI program that forks, for the fail-open fork test.
 *
 * After MPI_Init (and with the library's sender thread running) rank 0 runs a shell through
 * system(), forks and execs /bin/echo, and forks twice more: one child makes a few MPI query
 * calls and leaves with _exit(), the other makes the same calls and leaves with exit(), which
 * runs atexit handlers and library destructors in the child. Then every rank forks a batch of
 * short-lived children while the sender thread is busy, and keeps making MPI calls, so the
 * parent's monitoring can be checked afterwards. The other ranks do the same forks silently.
 * stdout (rank 0 only) is deterministic: a child that is not inert (prints, hangs, crashes or
 * disturbs the job) changes it or the exit status.
 *
 * usage: fork_app [ITERATIONS]   (default 100; each iteration makes one MPI_Allreduce)
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* The MPI calls a forked child makes: local queries only, as real programs do. */
static void child_queries(int loud, const char *how)
{
    int init = 0, fin = 0, rank = -1, size = -1;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    (void)MPI_Wtime();
    if (loud) {
        printf("fork child (%s): initialized %d, finalized %d, rank %d of %d\n", how, init, fin,
               rank, size);
        fflush(stdout);
    }
}

/* Waits for a child; returns its exit status, or -1 when it did not exit normally. */
static int reap(pid_t pid)
{
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 100;
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int loud = rank == 0;
    if (loud)
        printf("fork_app: %d ranks\n", size);
    /* Let the library's sender thread start and send a window or two before forking. */
    for (int i = 0; i < 5; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        usleep(20000);
    }
    fflush(NULL);

    int rc = system(loud ? "echo child-output" : "true");
    if (loud)
        printf("system() returned %d\n", WIFEXITED(rc) ? WEXITSTATUS(rc) : -1);
    fflush(NULL);

    pid_t pid = fork();
    if (pid == 0) {
        if (loud)
            execl("/bin/echo", "echo", "exec-child", (char *)NULL);
        else
            execl("/bin/true", "true", (char *)NULL);
        _exit(127);
    }
    rc = reap(pid);
    if (loud)
        printf("exec child exited with %d\n", rc);
    fflush(NULL);

    pid = fork();
    if (pid == 0) {
        child_queries(loud, "_exit");
        _exit(5);
    }
    rc = reap(pid);
    if (loud)
        printf("query child (_exit) exited with %d\n", rc);
    fflush(NULL);

    pid = fork();
    if (pid == 0) {
        child_queries(loud, "exit");
        exit(6);
    }
    rc = reap(pid);
    if (loud)
        printf("query child (exit) exited with %d\n", rc);
    fflush(NULL);

    /* Forks while the job (and the sender thread) keep running. */
    int bad = 0;
    for (int i = 0; i < iters; i++) {
        long one = 1, n = 0;
        MPI_Allreduce(&one, &n, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (n != size)
            bad++;
        if (i % 10 == 0) {
            fflush(NULL);
            pid = fork();
            if (pid == 0) {
                child_queries(0, "batch");
                _exit(i % 2 ? 0 : 7);
            }
            if (reap(pid) != (i % 2 ? 0 : 7))
                bad++;
        }
        usleep(2000);
    }
    int all_bad = 0;
    MPI_Reduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (loud)
        printf("batch of forks: %d iterations, %d problems\n", iters, all_bad);
    fflush(NULL);
    MPI_Finalize();
    if (loud)
        printf("fork_app: done\n");
    return 0;
}
