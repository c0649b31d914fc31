/*
 * mpiwatch-rebalance: an iterative MPI application that adapts when told, run by
 * `mpiwatch demo --steer` (docs/steering.md, "Demo").
 *
 * A 1-D reaction-diffusion model on CELLS cells in a row, split into contiguous blocks, one
 * per rank. Every iteration each rank
 *   - exchanges its edge cells with its neighbours (MPI_Irecv / MPI_Isend / MPI_Waitall),
 *   - updates its cells: one explicit diffusion step, then SUBSTEPS steps of a local logistic
 *     reaction (real arithmetic; the cost of a rank is proportional to its cells),
 *   - joins one MPI_Allreduce (MPI_MAX) of the residual, the largest change of any cell.
 * From iteration SLOW_FROM on, some ranks are slow (`--slow-ranks 2 --slow-factor 6` by
 * default): each of their cells costs F times as much, as when another program starts to
 * share their cores. They update their block F times (the extra passes give the same
 * numbers). The other ranks then wait for the slow one in MPI, which mpiwatch sees as load
 * imbalance: the metric `load_imbalance` is max / mean of the ranks' time outside MPI (their
 * computation), so the slow rank stands out. See docs/steering.md, "Demo", for the figures.
 *
 * Steering: the program registers a callback with MW_ON_STEER (pmpi-shim/mpiwatch.h). On the
 * key `rebalance` (any value but "0") the rank notes a request. The request travels in the
 * same MPI_Allreduce as the residual (a second element, MPI_MAX), so a message that reached
 * any one rank makes every rank rebalance after the same iteration. Rebalancing: the ranks
 * share (MPI_Allgather) the compute time per cell each measured over its last iterations, all
 * compute the same new partition, cells in proportion to each rank's speed, and move the
 * cells with one MPI_Alltoallv. Each rank prints one line saying what it did.
 *
 * DESIGN: stdout is the same with and without mpiwatch, apart from the rebalance lines (which
 * only steering causes): no timings are printed, and every printed number is independent of
 * the partition. The residual is a maximum, the checksum an integer sum (mod 2^64) of a hash
 * of every cell's bits and global index, both exact in any order; a cell's new value depends
 * only on its own and its neighbours' old values. So a rebalanced run prints the same
 * residuals and checksum as one that never rebalanced, which is how the tests know that the
 * cells moved correctly. Timings go to stderr with --verbose.
 *
 * Slowness is real work (busy compute, no sleep): on an oversubscribed machine a sleeping
 * rank would hand its core to the others and hide the imbalance. A rank's speed is measured
 * with the thread's CPU time (CLOCK_THREAD_CPUTIME_ID) spent updating cells, not wall time:
 * with more ranks than cores, a rank's wall time depends on which other ranks shared its core
 * meanwhile, its CPU time only on its work. It is a moving average over the last iterations
 * (weight 1/8 for the newest), so that a rank that became slow recently is judged by its
 * present speed.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpiwatch.h"

#define DEFAULT_SLOW_RANKS "2"
enum {
    DEFAULT_CELLS = 1500000,
    DEFAULT_ITERATIONS = 450,
    DEFAULT_SLOW_FROM = 80,
    DEFAULT_SLOW_FACTOR = 6,
    DEFAULT_PRINT_EVERY = 50,
    SUBSTEPS = 24,  /* reaction steps per cell and iteration: the cost of a cell */
    MIN_CELLS = 64, /* no rank is left with fewer cells than this */
};

typedef struct {
    long cells;
    long iterations;
    const char *slow_ranks;
    long slow_factor;
    long slow_from;
    long print_every;
    int verbose;
} options_t;

/* Set by the steering callback, which runs on the application's own thread between its MPI
 * calls (docs/steering.md): read and cleared by the same thread, so no atomics are needed. */
static int rebalance_requested;

static void on_steer(const char *key, const char *value, void *ctx)
{
    (void)ctx;
    if (strcmp(key, "rebalance") == 0 && strcmp(value, "0") != 0)
        rebalance_requested = 1;
}

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Updates cells 1..n of u (u[0] and u[n+1] are the halos) into v; returns the largest change.
 * noinline: a slow rank calls it several times on the same data, and those calls must not be
 * merged into one. */
__attribute__((noinline)) static double update(const double *u, double *v, long n)
{
    const double diffusion = 0.2, rate = 0.05, dt = 1.0 / SUBSTEPS;
    double change = 0.0;
    for (long i = 1; i <= n; i++) {
        double x = u[i] + diffusion * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
        for (int s = 0; s < SUBSTEPS; s++)
            x += dt * rate * x * (1.0 - x);
        double d = x > u[i] ? x - u[i] : u[i] - x;
        if (d > change)
            change = d;
        v[i] = x;
    }
    return change;
}

/* First global cell of every rank for a partition of `cells` in proportion to `weight`;
 * first[size] = cells. The same inputs give the same partition on every rank. */
static void partition(long cells, int size, const double *weight, long *first)
{
    double total = 0.0;
    for (int r = 0; r < size; r++)
        total += weight[r];
    double acc = 0.0;
    first[0] = 0;
    for (int r = 1; r < size; r++) {
        acc += weight[r - 1];
        long f = (long)((double)cells * acc / total + 0.5);
        /* Leave every rank, before and after, at least MIN_CELLS. */
        if (f < first[r - 1] + MIN_CELLS)
            f = first[r - 1] + MIN_CELLS;
        if (f > cells - (long)(size - r) * MIN_CELLS)
            f = cells - (long)(size - r) * MIN_CELLS;
        first[r] = f;
    }
    first[size] = cells;
}

static uint64_t cell_hash(double v, long global)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    uint64_t h = bits ^ ((uint64_t)global * 0x9e3779b97f4a7c15u);
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9u;
    return h ^ (h >> 32);
}

/* A number >= 0 from all of s, or -1. */
static long number(const char *s)
{
    if (!s || *s < '0' || *s > '9')
        return -1;
    char *end;
    long v = strtol(s, &end, 10);
    return *end || v > 1000000000 ? -1 : v;
}

/* 1 if `rank` is in the list "a,b-c,...", 0 if not, -1 if the list is malformed. */
static int in_list(const char *list, int rank)
{
    int found = 0;
    const char *p = list;
    while (*p) {
        char *end;
        if (*p < '0' || *p > '9')
            return -1;
        long lo = strtol(p, &end, 10), hi = lo;
        if (*end == '-') {
            if (end[1] < '0' || end[1] > '9')
                return -1;
            hi = strtol(end + 1, &end, 10);
        }
        if (hi < lo || (*end && *end != ','))
            return -1;
        found |= rank >= lo && rank <= hi;
        p = *end ? end + 1 : end;
        if (*end == ',' && !*p)
            return -1;
    }
    return found;
}

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: mpiwatch-rebalance [--cells N] [--iterations N] [--slow-ranks LIST]\n"
            "         [--slow-factor F] [--slow-from ITERATION] [--print-every N] [--verbose]\n"
            "A 1-D reaction-diffusion model in which some ranks become slow; it rebalances its\n"
            "cells on the steering message rebalance=1 (mpiwatch steer, or a collector rule).\n"
            "Defaults: %d cells, %d iterations, rank(s) %s %dx slower from iteration %d\n"
            "(--slow-rank R: one rank). MPIWATCH_DEMO_CELLS and MPIWATCH_DEMO_ITERATIONS set\n"
            "the first two as well.\n",
            DEFAULT_CELLS, DEFAULT_ITERATIONS, DEFAULT_SLOW_RANKS, DEFAULT_SLOW_FACTOR,
            DEFAULT_SLOW_FROM);
}

/* Returns 0, 1 (--help: done), or -1 (usage printed) when the arguments are wrong. */
static int parse(int argc, char **argv, options_t *o)
{
    o->cells = number(getenv("MPIWATCH_DEMO_CELLS"));
    if (o->cells <= 0)
        o->cells = DEFAULT_CELLS;
    o->iterations = number(getenv("MPIWATCH_DEMO_ITERATIONS"));
    if (o->iterations <= 0)
        o->iterations = DEFAULT_ITERATIONS;
    o->slow_ranks = DEFAULT_SLOW_RANKS;
    o->slow_factor = DEFAULT_SLOW_FACTOR;
    o->slow_from = DEFAULT_SLOW_FROM;
    o->print_every = DEFAULT_PRINT_EVERY;
    o->verbose = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (strcmp(a, "--verbose") == 0) {
            o->verbose = 1;
            continue;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 1;
        }
        long n = number(v);
        long *dst = strcmp(a, "--cells") == 0         ? &o->cells
                    : strcmp(a, "--iterations") == 0  ? &o->iterations
                    : strcmp(a, "--slow-factor") == 0 ? &o->slow_factor
                    : strcmp(a, "--slow-from") == 0   ? &o->slow_from
                    : strcmp(a, "--print-every") == 0 ? &o->print_every
                                                      : NULL;
        int ok;
        if (dst) {
            ok = n > 0 || (n == 0 && dst == &o->slow_from);
            if (ok)
                *dst = n;
        } else if (strcmp(a, "--slow-ranks") == 0 || strcmp(a, "--slow-rank") == 0) {
            ok = *v && in_list(v, 0) >= 0;
            o->slow_ranks = v;
        } else {
            fprintf(stderr, "mpiwatch-rebalance: unknown option '%s'\n", a);
            usage(stderr);
            return -1;
        }
        if (!ok) {
            fprintf(stderr, "mpiwatch-rebalance: bad value '%s' for %s\n", v, a);
            usage(stderr);
            return -1;
        }
        i++;
    }
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    options_t o;
    int parsed = parse(argc, argv, &o);
    if (parsed == 0 && o.cells < (long)size * MIN_CELLS) {
        if (rank == 0)
            fprintf(stderr, "mpiwatch-rebalance: need at least %d cells per rank\n", MIN_CELLS);
        parsed = -1;
    }
    if (parsed != 0) {
        MPI_Finalize();
        return parsed < 0 ? 2 : 0;
    }
    MW_ON_STEER(on_steer, NULL);

    /* Cell arrays big enough for any partition (a rank never holds more than all cells). */
    long *first = malloc((size_t)(size + 1) * sizeof *first);
    long *old = malloc((size_t)(size + 1) * sizeof *old);
    double *weight = malloc((size_t)size * sizeof *weight);
    double *gathered = malloc((size_t)size * sizeof *gathered);
    int *counts = malloc(4 * (size_t)size * sizeof *counts);
    double *u = malloc((size_t)(o.cells + 2) * sizeof *u);
    double *v = malloc((size_t)(o.cells + 2) * sizeof *v);
    if (!first || !old || !weight || !gathered || !counts || !u || !v) {
        fprintf(stderr, "mpiwatch-rebalance: rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int *scount = counts, *sdispl = counts + size, *rcount = counts + 2 * size,
        *rdispl = counts + 3 * size;
    for (int r = 0; r < size; r++)
        weight[r] = 1.0;
    partition(o.cells, size, weight, first);

    /* A low level with a bump in the middle: the reaction pushes every cell towards 1, the
     * diffusion spreads the bump; beyond both ends of the row the value is 0. */
    long lo = first[rank], n = first[rank + 1] - lo;
    for (long i = 0; i < n; i++) {
        double x = (double)(lo + i) / (double)o.cells;
        u[i + 1] = 0.05 + 0.5 * (x > 0.45 && x < 0.55);
    }
    const int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    const int right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    const int slow = in_list(o.slow_ranks, rank) > 0;

    if (rank == 0) {
        printf("mpiwatch-rebalance: %d ranks, %ld cells, %ld iterations; from iteration %ld on, "
               "rank(s) %s run %ldx slower\n",
               size, o.cells, o.iterations, o.slow_from, o.slow_ranks, o.slow_factor);
        fflush(stdout);
    }

    double per_cell = 0.0; /* moving average of the CPU seconds per cell and iteration */
    const double t_start = MPI_Wtime();
    for (long it = 1; it <= o.iterations; it++) {
        /* Halo exchange; the ends of the row see MPI_PROC_NULL and keep their 0 halo. */
        u[0] = u[n + 1] = 0.0;
        MPI_Request req[4];
        MPI_Irecv(&u[0], 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(&u[n + 1], 1, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &req[1]);
        MPI_Isend(&u[1], 1, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &req[2]);
        MPI_Isend(&u[n], 1, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &req[3]);
        MPI_Waitall(4, req, MPI_STATUSES_IGNORE);

        const int passes = slow && it >= o.slow_from ? (int)o.slow_factor : 1;
        double c0 = cpu_seconds(), change = 0.0;
        for (int p = 0; p < passes; p++)
            change = update(u, v, n);
        double x = (cpu_seconds() - c0) / (double)n;
        per_cell = per_cell > 0.0 ? per_cell + (x - per_cell) / 8.0 : x;
        double *t = u;
        u = v;
        v = t;

        /* The residual and the rebalance request, in one reduction. */
        double mine[2] = {change, rebalance_requested ? 1.0 : 0.0}, all[2];
        MPI_Allreduce(mine, all, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (rank == 0 && (it % o.print_every == 0 || it == o.iterations)) {
            printf("iteration %5ld  residual %.9e\n", it, all[0]);
            fflush(stdout);
        }
        if (all[1] == 0.0 || it == o.iterations)
            continue;

        /* Rebalance, after the same iteration on every rank: speed = cells per CPU second. */
        MPI_Allgather(&per_cell, 1, MPI_DOUBLE, gathered, 1, MPI_DOUBLE, MPI_COMM_WORLD);
        for (int r = 0; r < size; r++)
            weight[r] = gathered[r] > 0.0 ? 1.0 / gathered[r] : 1.0;
        memcpy(old, first, (size_t)(size + 1) * sizeof *old);
        partition(o.cells, size, weight, first);
        /* To rank s go my old cells that fall in its new block; from s come its old cells that
         * fall in my new block. Counts and offsets fit an int for cells < 2^31. */
        for (int s = 0; s < size; s++) {
            long a = old[rank] > first[s] ? old[rank] : first[s];
            long b = old[rank + 1] < first[s + 1] ? old[rank + 1] : first[s + 1];
            scount[s] = b > a ? (int)(b - a) : 0;
            sdispl[s] = b > a ? (int)(a - old[rank]) + 1 : 0;
            a = old[s] > first[rank] ? old[s] : first[rank];
            b = old[s + 1] < first[rank + 1] ? old[s + 1] : first[rank + 1];
            rcount[s] = b > a ? (int)(b - a) : 0;
            rdispl[s] = b > a ? (int)(a - first[rank]) + 1 : 0;
        }
        MPI_Alltoallv(u, scount, sdispl, MPI_DOUBLE, v, rcount, rdispl, MPI_DOUBLE, MPI_COMM_WORLD);
        /* Only now: a message for all ranks may reach this one during the rebalance (at one of
         * its MPI calls), and it has been served. */
        rebalance_requested = 0;
        t = u;
        u = v;
        v = t;
        long was = n;
        lo = first[rank];
        n = first[rank + 1] - lo;
        printf("rebalance: rank %d after iteration %ld: %ld -> %ld cells (%.3g us per cell)\n",
               rank, it, was, n, 1e6 * per_cell);
        fflush(stdout);
    }

    /* An exact checksum of the final state, whatever the partition. */
    uint64_t h = 0, total = 0;
    for (long i = 0; i < n; i++)
        h += cell_hash(u[i + 1], lo + i);
    MPI_Reduce(&h, &total, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (o.verbose)
        fprintf(stderr, "mpiwatch-rebalance: rank %d: %ld cells, %.3g us CPU per cell, %.2f s\n",
                rank, n, 1e6 * per_cell, MPI_Wtime() - t_start);
    if (rank == 0)
        printf("mpiwatch-rebalance: done, %ld iterations, checksum %016llx\n", o.iterations,
               (unsigned long long)total);
    free(first);
    free(old);
    free(weight);
    free(gathered);
    free(counts);
    free(u);
    free(v);
    MPI_Finalize();
    return 0;
}
