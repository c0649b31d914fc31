/* overhead.c: what mpiwatch costs an MPI program, measured from inside one run.
 *
 * DESIGN: the program is an ordinary MPI program that knows nothing about mpiwatch; the
 * driver (run-overhead.sh) runs it alternately without and with libmpiwatch.so preloaded and
 * compares the figures. It measures four things, in this order:
 *   - the cost of one MPI_Iprobe with nothing pending (the cheapest call that still goes
 *     through the library's whole timed path), best of several repetitions, on every rank at
 *     once; also one MPI_Comm_rank (a counted, untimed query) for reference;
 *   - the half round-trip time of a 0-byte ping-pong between ranks 0 and 1, median over
 *     repetitions;
 *   - the latency of an 8-byte MPI_Allreduce on all ranks, median over repetitions of the
 *     slowest rank's mean;
 *   - the resident set size (VmRSS) right after MPI_Init, after a warm-up phase long enough
 *     for every window slot of the library to have been used and samples to have been sent,
 *     and at the end: the growth after warm-up must be zero (memory is allocated once).
 * Time is read with clock_gettime(CLOCK_MONOTONIC) directly, never through MPI_Wtime, so the
 * measurement does not depend on what a tool does with MPI_Wtime.
 * Results go to stdout on rank 0 as "result NAME VALUE" lines for the driver, after a
 * human-readable header; nothing here is a pass/fail check.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    long iprobe_calls; /* calls per Iprobe repetition */
    int iprobe_reps;
    long pingpong_iters; /* round trips per repetition */
    int pingpong_reps;
    long allreduce_iters;
    int allreduce_reps;
    double warmup_s;
    int do_iprobe, do_pingpong, do_allreduce;
    int do_selfmsg, do_isendrecv; /* the tracing comparison (run-overhead.sh) */
} opts_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* VmRSS of this process in kB, or -1. */
static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long kb = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0) {
            kb = strtol(line + 6, NULL, 10);
            break;
        }
    fclose(f);
    return kb;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double minimum(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        if (v[i] < m)
            m = v[i];
    return m;
}

/* ns per MPI_Iprobe with nothing pending; every rank measures its own loop. */
static double iprobe_once(long calls)
{
    int flag;
    MPI_Status st;
    double t0 = now_s();
    for (long i = 0; i < calls; i++)
        MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag, &st);
    return (now_s() - t0) * 1e9 / (double)calls;
}

/* ns per MPI_Test of MPI_REQUEST_NULL: a timed wrapper around an MPI call that does almost
 * nothing, so that the library's own cost per timed call shows (bench/run-dormant.sh). */
static double test_null_once(long calls)
{
    int flag;
    double t0 = now_s();
    for (long i = 0; i < calls; i++) {
        MPI_Request rq = MPI_REQUEST_NULL;
        MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
    }
    return (now_s() - t0) * 1e9 / (double)calls;
}

static double comm_rank_once(long calls)
{
    int r;
    double t0 = now_s();
    for (long i = 0; i < calls; i++)
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return (now_s() - t0) * 1e9 / (double)calls;
}

/* Half round-trip in us between ranks 0 and 1; other ranks only wait. */
static double pingpong_once(int rank, long iters)
{
    char dummy = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_s();
    if (rank == 0) {
        for (long i = 0; i < iters; i++) {
            MPI_Send(&dummy, 0, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(&dummy, 0, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else if (rank == 1) {
        for (long i = 0; i < iters; i++) {
            MPI_Recv(&dummy, 0, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&dummy, 0, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
        }
    }
    double us = (now_s() - t0) * 1e6 / (2.0 * (double)iters);
    /* Rank 0's figure is the one reported; share it so every rank has the same. */
    MPI_Bcast(&us, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return us;
}

/* ns per timed call of a message to oneself: MPI_Irecv, MPI_Isend, MPI_Wait, MPI_Wait (four
 * timed calls, two requests through the library's request map when tracing), every rank at
 * once; the MPI work is small and local, so the library's share shows. */
static double selfmsg_once(int rank, long iters)
{
    int in = 0, out = 1;
    MPI_Request rq[2];
    double t0 = now_s();
    for (long i = 0; i < iters; i++) {
        MPI_Irecv(&in, 1, MPI_INT, rank, 7, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(&out, 1, MPI_INT, rank, 7, MPI_COMM_WORLD, &rq[1]);
        MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
        MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    }
    return (now_s() - t0) * 1e9 / (4.0 * (double)iters);
}

/* Half round-trip in us of a 0-byte ping-pong made of MPI_Irecv, MPI_Isend and MPI_Wait. */
static double isendrecv_once(int rank, long iters)
{
    char a = 0, b = 0;
    MPI_Request rs, rr;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_s();
    if (rank == 0) {
        for (long i = 0; i < iters; i++) {
            MPI_Irecv(&b, 0, MPI_CHAR, 1, 2, MPI_COMM_WORLD, &rr);
            MPI_Isend(&a, 0, MPI_CHAR, 1, 2, MPI_COMM_WORLD, &rs);
            MPI_Wait(&rs, MPI_STATUS_IGNORE);
            MPI_Wait(&rr, MPI_STATUS_IGNORE);
        }
    } else if (rank == 1) {
        for (long i = 0; i < iters; i++) {
            MPI_Irecv(&b, 0, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &rr);
            MPI_Wait(&rr, MPI_STATUS_IGNORE);
            MPI_Isend(&a, 0, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &rs);
            MPI_Wait(&rs, MPI_STATUS_IGNORE);
        }
    }
    double us = (now_s() - t0) * 1e6 / (2.0 * (double)iters);
    MPI_Bcast(&us, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return us;
}

/* Mean 8-byte allreduce latency in us of the slowest rank. */
static double allreduce_once(long iters)
{
    double in = 1.0, out = 0.0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_s();
    for (long i = 0; i < iters; i++)
        MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double us = (now_s() - t0) * 1e6 / (double)iters, worst;
    MPI_Allreduce(&us, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

/* Runs small batches of every kernel until rank 0 says warmup_s has passed. */
static void warmup(int rank, int size, double warmup_s)
{
    double t0 = now_s();
    int go = 1;
    while (go) {
        iprobe_once(20000);
        comm_rank_once(20000);
        if (size >= 2)
            pingpong_once(rank, 200);
        allreduce_once(200);
        if (rank == 0)
            go = now_s() - t0 < warmup_s;
        MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
}

static void usage(FILE *f)
{
    fprintf(f, "usage: mw-bench-overhead [--tests iprobe,pingpong,allreduce,selfmsg,isendrecv]\n"
               "         [--iprobe-calls N]\n"
               "         [--iprobe-reps R] [--pingpong-iters N] [--pingpong-reps R]\n"
               "         [--allreduce-iters N] [--allreduce-reps R] [--warmup-s S]\n"
               "Prints 'result NAME VALUE' lines on rank 0. Ping-pong needs 2 ranks or more.\n");
}

static int parse(int argc, char **argv, opts_t *o)
{
    *o = (opts_t){.iprobe_calls = 2000000,
                  .iprobe_reps = 5,
                  .pingpong_iters = 5000,
                  .pingpong_reps = 11,
                  .allreduce_iters = 2000,
                  .allreduce_reps = 11,
                  .warmup_s = 1.0,
                  .do_iprobe = 1,
                  .do_pingpong = 1,
                  .do_allreduce = 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
            return 1;
        if (!v)
            return -1;
        i++;
        if (strcmp(a, "--tests") == 0) {
            o->do_iprobe = strstr(v, "iprobe") != NULL;
            o->do_pingpong = strstr(v, "pingpong") != NULL;
            o->do_allreduce = strstr(v, "allreduce") != NULL;
            o->do_selfmsg = strstr(v, "selfmsg") != NULL;
            o->do_isendrecv = strstr(v, "isendrecv") != NULL;
        } else if (strcmp(a, "--iprobe-calls") == 0) {
            o->iprobe_calls = atol(v);
        } else if (strcmp(a, "--iprobe-reps") == 0) {
            o->iprobe_reps = atoi(v);
        } else if (strcmp(a, "--pingpong-iters") == 0) {
            o->pingpong_iters = atol(v);
        } else if (strcmp(a, "--pingpong-reps") == 0) {
            o->pingpong_reps = atoi(v);
        } else if (strcmp(a, "--allreduce-iters") == 0) {
            o->allreduce_iters = atol(v);
        } else if (strcmp(a, "--allreduce-reps") == 0) {
            o->allreduce_reps = atoi(v);
        } else if (strcmp(a, "--warmup-s") == 0) {
            o->warmup_s = atof(v);
        } else {
            return -1;
        }
    }
    if (o->iprobe_calls < 1 || o->iprobe_reps < 1 || o->pingpong_iters < 1 ||
        o->pingpong_reps < 1 || o->allreduce_iters < 1 || o->allreduce_reps < 1 || o->warmup_s < 0)
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    opts_t o;
    int prc = parse(argc, argv, &o);
    if (prc != 0) {
        usage(prc > 0 ? stdout : stderr);
        return prc > 0 ? 0 : 2;
    }
    MPI_Init(&argc, &argv);
    long rss_init = rss_kb();
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2)
        o.do_pingpong = o.do_isendrecv = 0;

    const char *pre = getenv("LD_PRELOAD");
    if (rank == 0) {
        printf("mw-bench-overhead: %d ranks, LD_PRELOAD=%s\n", size, pre && *pre ? pre : "(none)");
        fflush(stdout);
    }

    warmup(rank, size, o.warmup_s);
    long rss_warm = rss_kb();

    int reps = o.iprobe_reps > o.pingpong_reps ? o.iprobe_reps : o.pingpong_reps;
    if (o.allreduce_reps > reps)
        reps = o.allreduce_reps;
    double *v = malloc((size_t)reps * sizeof *v);
    double *w = malloc((size_t)reps * sizeof *w);
    if (!v || !w)
        MPI_Abort(MPI_COMM_WORLD, 1);

    if (o.do_iprobe) {
        /* Every rank measures at once (as in a real job); rank 0's best is reported. */
        for (int r = 0; r < o.iprobe_reps; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            v[r] = iprobe_once(o.iprobe_calls);
        }
        for (int r = 0; r < o.iprobe_reps; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            w[r] = comm_rank_once(o.iprobe_calls);
        }
        if (rank == 0) {
            printf("result iprobe_ns %.2f\n", minimum(v, o.iprobe_reps));
            printf("result iprobe_ns_median %.2f\n", median(v, o.iprobe_reps));
            printf("result comm_rank_ns %.2f\n", minimum(w, o.iprobe_reps));
        }
        for (int r = 0; r < o.iprobe_reps; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            w[r] = test_null_once(o.iprobe_calls);
        }
        if (rank == 0)
            printf("result test_null_ns %.2f\n", minimum(w, o.iprobe_reps));
    }
    if (o.do_pingpong) {
        for (int r = 0; r < o.pingpong_reps; r++)
            v[r] = pingpong_once(rank, o.pingpong_iters);
        if (rank == 0) {
            printf("result pingpong_us_min %.3f\n", minimum(v, o.pingpong_reps));
            printf("result pingpong_us %.3f\n", median(v, o.pingpong_reps));
        }
    }
    if (o.do_selfmsg) {
        /* as many timed calls per repetition as an Iprobe repetition */
        for (int r = 0; r < o.iprobe_reps; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            v[r] = selfmsg_once(rank, o.iprobe_calls / 4);
        }
        if (rank == 0) {
            printf("result selfmsg_ns %.2f\n", minimum(v, o.iprobe_reps));
            printf("result selfmsg_ns_median %.2f\n", median(v, o.iprobe_reps));
        }
    }
    if (o.do_isendrecv) {
        for (int r = 0; r < o.pingpong_reps; r++)
            v[r] = isendrecv_once(rank, o.pingpong_iters);
        if (rank == 0) {
            printf("result isendrecv_us_min %.3f\n", minimum(v, o.pingpong_reps));
            printf("result isendrecv_us %.3f\n", median(v, o.pingpong_reps));
        }
    }
    if (o.do_allreduce) {
        for (int r = 0; r < o.allreduce_reps; r++)
            v[r] = allreduce_once(o.allreduce_iters);
        if (rank == 0) {
            printf("result allreduce_us_min %.3f\n", minimum(v, o.allreduce_reps));
            printf("result allreduce_us %.3f\n", median(v, o.allreduce_reps));
        }
    }
    free(v);
    free(w);

    /* One more warm-up-sized phase so "end" is measured after the library has gone on
     * recording and sending for a while past the measurements. */
    warmup(rank, size, o.warmup_s / 2);
    long rss_end = rss_kb();
    long mine[3] = {rss_init, rss_warm, rss_end}, growth = rss_end - rss_warm, worst_growth;
    long maxes[3];
    MPI_Reduce(mine, maxes, 3, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&growth, &worst_growth, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("result rss_init_kb %ld\n", maxes[0]);
        printf("result rss_warm_kb %ld\n", maxes[1]);
        printf("result rss_end_kb %ld\n", maxes[2]);
        printf("result rss_growth_kb %ld\n", worst_growth);
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}
