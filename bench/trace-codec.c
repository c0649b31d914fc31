/* trace-codec.c: bytes per traced call and the speed of the trace codec (proto/mw_trace.c),
 * on the realistic per-window trace of tests/proto/trace_gen.h (a 3-D stencil rank: 6 Irecv,
 * 6 Isend, a Waitall with its 12 completions and an Allreduce per step, jittered times).
 *
 * For windows of 100, 1,000 and 10,000 calls it prints, side by side, the bytes per call of the
 * shim's raw records (48 B each, mw_trec_t), of the columns, and of the columns with zstd
 * level 1, then the encode and decode rates in records per second (the medians of ROUNDS
 * rounds, each round coding the same windows over and over for about 0.1 s of this thread's CPU
 * time, so that other work on a shared machine shows less). Figures are
 * measured in one run, side by side, because the machine is shared (STYLE 19).
 *
 *   mw-bench-trace-codec [ROUNDS]        (default 7)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mw_trace.h"
#include "trace_gen.h"

#define RAW_RECORD_BYTES 48.0 /* pmpi-shim/trace.h: mw_trec_t */
#define WINDOWS 8             /* different windows per size, coded in turn */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct {
    mw_trace_rec_t *recs;
    size_t n, calls;
    uint8_t *blk[2]; /* columns, zstd-1 */
    size_t len[2];
    uint32_t enc[2];
    uint64_t raw[2];
} win_t;

static void die(const char *what)
{
    fprintf(stderr, "trace-codec: %s\n", what);
    exit(1);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 7;
    if (rounds < 1 || rounds > 99)
        die("usage: mw-bench-trace-codec [ROUNDS 1..99]");
    static const size_t sizes[] = {100, 1000, 10000};
    printf("trace codec: 3-D stencil rank, windows of 100 ms, %d rounds (medians)\n\n", rounds);
    printf("%-8s %8s | %8s %8s %8s | %10s %10s %10s %10s\n", "calls", "records", "raw 48B",
           "columns", "+zstd-1", "enc cols", "enc zstd", "dec cols", "dec zstd");
    printf("%-8s %8s | %8s %8s %8s | %10s %10s %10s %10s\n", "/window", "/window", "B/call",
           "B/call", "B/call", "Mrec/s", "Mrec/s", "Mrec/s", "Mrec/s");
    for (size_t row = 0; row < 2 * sizeof sizes / sizeof *sizes; row++) {
        size_t s = row % 3;
        int irregular = row >= 3;
        if (row == 3)
            printf("irregular: receives from MPI_ANY_SOURCE, sizes that vary, completions in "
                   "a random order\n");
        win_t w[WINDOWS];
        mw_tgen_t g;
        mw_tgen_init(&g, 1 + s, 21, 8, 8, 8);
        g.irregular = irregular;
        size_t recs = 0, calls = 0, bytes[2] = {0, 0};
        for (int k = 0; k < WINDOWS; k++) {
            w[k].recs = malloc((sizes[s] / MW_TGEN_CALLS_PER_STEP + 2) * MW_TGEN_RECS_PER_STEP *
                               sizeof *w[k].recs);
            if (!w[k].recs)
                die("out of memory");
            w[k].n = mw_tgen_window(&g, w[k].recs, sizes[s], 100000000, &w[k].calls);
            for (int z = 0; z < 2; z++) {
                if (mw_trace_encode(w[k].recs, w[k].n, z, 1, &w[k].blk[z], &w[k].len[z],
                                    &w[k].enc[z], &w[k].raw[z]) != 0)
                    die("encode failed");
                bytes[z] += w[k].len[z];
            }
            recs += w[k].n;
            calls += w[k].calls;
        }
        /* rates: [encode columns, encode zstd, decode columns, decode zstd] */
        double rate[4][99];
        for (int r = 0; r < rounds; r++)
            for (int op = 0; op < 4; op++) {
                int z = op % 2;
                size_t done = 0;
                double t0 = now(), t;
                do {
                    for (int k = 0; k < WINDOWS; k++) {
                        if (op < 2) {
                            uint8_t *b;
                            size_t len;
                            uint32_t enc;
                            uint64_t raw;
                            if (mw_trace_encode(w[k].recs, w[k].n, z, 1, &b, &len, &enc, &raw))
                                die("encode failed");
                            free(b);
                        } else {
                            mw_trace_rec_t *out;
                            size_t n;
                            const char *why;
                            if (mw_trace_decode(w[k].blk[z], w[k].len[z], w[k].enc[z], w[k].raw[z],
                                                (uint32_t)w[k].n, &out, &n, &why))
                                die(why);
                            if (n != w[k].n || out[n - 1].start_ns != w[k].recs[n - 1].start_ns)
                                die("decode differs");
                            free(out);
                        }
                        done += w[k].n;
                    }
                    t = now() - t0;
                } while (t < 0.1);
                rate[op][r] = (double)done / t / 1e6;
            }
        printf("%-8zu %8zu | %8.1f %8.2f %8.2f | %10.1f %10.1f %10.1f %10.1f\n", calls / WINDOWS,
               recs / WINDOWS, RAW_RECORD_BYTES * (double)recs / (double)calls,
               (double)bytes[0] / (double)calls, (double)bytes[1] / (double)calls,
               median(rate[0], rounds), median(rate[1], rounds), median(rate[2], rounds),
               median(rate[3], rounds));
        for (int k = 0; k < WINDOWS; k++) {
            free(w[k].recs);
            free(w[k].blk[0]);
            free(w[k].blk[1]);
        }
    }
    printf("\nB/call: encoded bytes / calls (a call is 1.86 records here: completions and the\n"
           "Waitall are records of their own). Mrec/s: records per second, one core.\n");
    return 0;
}
