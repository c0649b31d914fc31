/* fault_app.c: the application of the fault suite, a job whose every MPI call is known.
 *
 * usage: fault_app [ITERATIONS [SLEEP_US [EXIT_CODE]]]   (defaults 600, 5000, 0)
 *
 * Each iteration makes the same calls on every rank: MPI_Allreduce of 4 ints, an even/odd
 * MPI_Send/MPI_Recv of 64 doubles to the right neighbour, MPI_Irecv + MPI_Isend of 16 ints from
 * the left one completed by MPI_Waitall, and every tenth iteration an MPI_Bcast of 100 bytes and
 * an MPI_Barrier; then it sleeps SLEEP_US. So a default run lasts about three seconds and spans
 * many windows. Rank 0 prints a start line, a line every 100 iterations and a checksum, which
 * depend only on the iteration and the number of ranks: a run with the library preloaded must
 * print byte for byte what a run without it prints.
 *
 * The program counts its own MPI calls and bytes (MPI_Init, MPI_Comm_rank, MPI_Comm_size and
 * MPI_Finalize included), independently of mpiwatch, which is what the fault suite compares
 * the collector's accounting with: calls made == calls in the summary + calls reported missing.
 * The environment steers the faults:
 *   FAULT_COUNTS=DIR   every rank writes DIR/counts.RANK ("NAME COUNT BYTES" lines) just before
 *                      MPI_Finalize (MPI_Finalize itself is listed, it is the last call).
 *   FAULT_MARK=PATH    rank 0 creates PATH half way through (after the collectives of the
 *                      middle iteration), where the test harms the collector.
 *   FAULT_MARK2=PATH   the same at three quarters (a test that needs a second moment).
 *   FAULT_DIE_RANK=R   rank R kills itself with SIGKILL half way through (the job aborts),
 *                      having written its counts so far to DIR/counts.R.dying.
 *   FAULT_STEER=DIR    the program registers a steering callback (mpiwatch.h, weak: nothing
 *                      without the library) and every rank writes DIR/steer.RANK at the end:
 *                      "messages N", then the key of every message whose key starts with
 *                      "last", one per line (the flood test's markers).
 * Bytes follow mpiwatch's rule (docs/shim.md): the bytes a call sends, count x type size;
 * receives and completions count none.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpiwatch.h"

enum {
    F_INIT,
    F_RANK,
    F_SIZE,
    F_ALLREDUCE,
    F_SEND,
    F_RECV,
    F_IRECV,
    F_ISEND,
    F_WAITALL,
    F_BCAST,
    F_BARRIER,
    F_REDUCE,
    F_FINALIZE,
    F_N
};
static const char *const names[F_N] = {
    "MPI_Init",    "MPI_Comm_rank", "MPI_Comm_size", "MPI_Allreduce", "MPI_Send",
    "MPI_Recv",    "MPI_Irecv",     "MPI_Isend",     "MPI_Waitall",   "MPI_Bcast",
    "MPI_Barrier", "MPI_Reduce",    "MPI_Finalize"};
static unsigned long calls[F_N], bytes[F_N];

static void count(int f, unsigned long nbytes)
{
    calls[f]++;
    bytes[f] += nbytes;
}

static unsigned long steer_messages;
static char steer_marks[8][80];
static int n_marks;

/* Runs on the application's thread at its next MPI call: it only notes what arrived. */
static void on_steer(const char *key, const char *value, void *ctx)
{
    (void)value;
    (void)ctx;
    steer_messages++;
    if (strncmp(key, "last", 4) == 0 && n_marks < 8)
        snprintf(steer_marks[n_marks++], sizeof steer_marks[0], "%s", key);
}

static void write_steer(const char *dir, int rank)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/steer.%d", dir, rank);
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    fprintf(f, "messages %lu\n", steer_messages);
    for (int i = 0; i < n_marks; i++)
        fprintf(f, "%s\n", steer_marks[i]);
    fclose(f);
}

static void touch(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0)
        close(fd);
}

/* DIR/counts.RANK[SUFFIX]; with finalize, MPI_Finalize is counted first (it is called right
 * after this). */
static void write_counts(const char *dir, int rank, const char *suffix, int finalize)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/counts.%d%s", dir, rank, suffix);
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    if (finalize)
        count(F_FINALIZE, 0);
    for (int i = 0; i < F_N; i++)
        fprintf(f, "%s %lu %lu\n", names[i], calls[i], bytes[i]);
    fclose(f);
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 600;
    int sleep_us = argc > 2 ? atoi(argv[2]) : 5000;
    int code = argc > 3 ? atoi(argv[3]) : 0;
    const char *counts = getenv("FAULT_COUNTS");
    const char *mark = getenv("FAULT_MARK");
    const char *mark2 = getenv("FAULT_MARK2");
    const char *die = getenv("FAULT_DIE_RANK");
    const char *steer = getenv("FAULT_STEER");
    int die_rank = die && *die ? atoi(die) : -1;

    MPI_Init(&argc, &argv);
    count(F_INIT, 0);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    count(F_RANK, 0);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    count(F_SIZE, 0);
    if (steer)
        MW_ON_STEER(on_steer, NULL);
    if (rank == 0) {
        printf("fault_app: %d ranks, %d iterations\n", size, iters);
        fflush(stdout);
    }
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    unsigned long checksum = 0;
    double sbuf[64], rbuf[64];
    for (int i = 0; i < iters; i++) {
        int in4[4] = {rank, i, rank * i, 1}, out4[4];
        MPI_Allreduce(in4, out4, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        count(F_ALLREDUCE, sizeof in4);
        for (int k = 0; k < 64; k++)
            sbuf[k] = rank * 1000.0 + k + i;
        if (size > 1) {
            if (rank % 2 == 0) {
                MPI_Send(sbuf, 64, MPI_DOUBLE, right, 1, MPI_COMM_WORLD);
                count(F_SEND, sizeof sbuf);
                MPI_Recv(rbuf, 64, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                count(F_RECV, 0);
            } else {
                MPI_Recv(rbuf, 64, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                count(F_RECV, 0);
                MPI_Send(sbuf, 64, MPI_DOUBLE, right, 1, MPI_COMM_WORLD);
                count(F_SEND, sizeof sbuf);
            }
        } else {
            memcpy(rbuf, sbuf, sizeof rbuf);
        }
        int sv[16], rv[16];
        for (int k = 0; k < 16; k++)
            sv[k] = rank + k * i;
        MPI_Request req[2];
        MPI_Irecv(rv, 16, MPI_INT, left, 2, MPI_COMM_WORLD, &req[0]);
        count(F_IRECV, 0);
        MPI_Isend(sv, 16, MPI_INT, right, 2, MPI_COMM_WORLD, &req[1]);
        count(F_ISEND, sizeof sv);
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        count(F_WAITALL, 0);
        if (i % 10 == 0) {
            char b[100];
            memset(b, rank == 0 ? i % 251 : 0, sizeof b);
            MPI_Bcast(b, (int)sizeof b, MPI_CHAR, 0, MPI_COMM_WORLD);
            count(F_BCAST, sizeof b);
            MPI_Barrier(MPI_COMM_WORLD);
            count(F_BARRIER, 0);
            checksum += (unsigned char)b[7];
        }
        checksum =
            checksum * 31u + (unsigned long)out4[2] + (unsigned long)rbuf[5] + (unsigned long)rv[3];
        if (rank == 0 && i % 100 == 0) {
            printf("iteration %d: sum %d\n", i, out4[2]);
            fflush(stdout);
        }
        if (i == iters / 2) {
            if (rank == 0 && mark)
                touch(mark);
            if (rank == die_rank) {
                if (counts)
                    write_counts(counts, rank, ".dying", 0);
                raise(SIGKILL);
            }
        }
        if (rank == 0 && mark2 && i == iters * 3 / 4)
            touch(mark2);
        if (sleep_us > 0)
            usleep((useconds_t)sleep_us);
    }
    /* Every rank's checksum, so that a wrong message anywhere changes rank 0's line. */
    unsigned long total = 0;
    MPI_Reduce(&checksum, &total, 1, MPI_UNSIGNED_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    count(F_REDUCE, sizeof checksum);
    if (rank == 0) {
        printf("checksum %lx\n", total);
        fflush(stdout);
    }
    if (steer)
        write_steer(steer, rank);
    if (counts)
        write_counts(counts, rank, "", 1);
    MPI_Finalize();
    return rank == 0 ? code : 0;
}
