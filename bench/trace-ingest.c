/* mw-bench-trace-ingest: what a traced call costs the collector's ingest, on one core (prints
 * figures; docs/trace.md "The job's budget (collector)" derives the default budget from them).
 *
 *   build/bench/mw-bench-trace-ingest [RANKS [CALLS [WINDOWS [REPS]]]]  (default 64 2000 20 5)
 *
 * RANKS ranks (a periodic px x py x pz grid) each send one sample per 100 ms window holding
 * CALLS calls of the tests' 3-D stencil trace (tests/proto/trace_gen.h: Irecv x 6, Isend x 6,
 * Waitall with its 12 completions, Allreduce), encoded as the shim encodes it (zstd level 1 from
 * 50 records). Every sample is built twice, with its exact trace and without one (the same
 * summary), and both sets go through the collector's whole path in process (mw_collector_frame:
 * decoding, every check, the trace's one decode and record checks, the merge, the window's copy
 * of the records, closing and encoding the windows), alternating which goes first. The cost of
 * a traced call is (traced - untraced) CPU time / traced calls; bytes per call are the trace's
 * bytes over its calls. The recording holds a traced call once (the sample's frame as received;
 * the merged window names that frame, docs/recording.md), so its bytes per traced call are those.
 *
 * DESIGN: CPU time of the thread (CLOCK_THREAD_CPUTIME_ID), so that other work on a shared
 * machine does not count; medians of REPS repetitions, each with a fresh collector. Not a
 * test: it prints.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector.h"
#include "mw_trace.h"
#include "testmsg.h"
#include "trace_gen.h"

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct {
    uint8_t *buf;
    size_t len;
} frame_t;

/* One pass: a fresh collector, every rank's hello, then the frames window by window. Returns
 * the CPU seconds of the frames, or a negative value when one was not accepted as expected. */
static double run(frame_t *frames, uint32_t ranks, uint32_t windows, uint64_t w0,
                  const mw_clock_t *start, uint64_t *exact)
{
    mw_collector_options_t opt;
    mw_collector_options_defaults(&opt);
    opt.quiet = 1;
    mw_collector_t *c = malloc(sizeof *c);
    if (!c || mw_collector_init(c, &opt) < 0)
        return -1;
    c->report_out = NULL;
    mw_clock_t now = *start;
    tm_msg_t *m = malloc(sizeof *m);
    for (uint32_t r = 0; r < ranks; r++) {
        tm_hello(m, "bench", r, ranks, now.real_ns);
        uint8_t *buf;
        size_t n = tm_pack(m, &buf);
        mw_collector_frame(c, buf, n, 1, &now);
        free(buf);
    }
    free(m);
    double t = cpu_s();
    int bad = 0;
    for (uint32_t k = 0; k < windows; k++) {
        now.real_ns = (w0 + k + 1) * TM_WINDOW_NS + 1000;
        now.mono_ns += TM_WINDOW_NS;
        for (uint32_t r = 0; r < ranks; r++) {
            const frame_t *f = &frames[(size_t)k * ranks + r];
            bad |= mw_collector_frame(c, f->buf, f->len, 1, &now) != MW_ACCEPTED;
        }
    }
    t = cpu_s() - t;
    *exact = c->tstats.exact;
    uint64_t refused = 0;
    for (int i = 0; i < MW_TREFUSE_COUNT; i++) {
        refused += c->tstats.refused[i];
        if (c->tstats.refused[i])
            fprintf(stderr, "refused: %s %llu\n", mw__trace_refuse_name((mw_trace_refuse_t)i),
                    (unsigned long long)c->tstats.refused[i]);
    }
    mw_collector_free(c);
    free(c);
    return bad || refused ? -1 : t;
}

int main(int argc, char **argv)
{
    uint32_t ranks = argc > 1 ? (uint32_t)atoi(argv[1]) : 64;
    size_t calls = argc > 2 ? (size_t)atoi(argv[2]) : 2000;
    uint32_t windows = argc > 3 ? (uint32_t)atoi(argv[3]) : 20;
    unsigned reps = argc > 4 ? (unsigned)atoi(argv[4]) : 5;
    if (ranks < 8 || calls < 14 || windows < 2 || reps < 1 || calls > 200000) {
        fprintf(stderr, "usage: %s [RANKS>=8 [CALLS [WINDOWS [REPS]]]]\n", argv[0]);
        return 2;
    }
    mw_collector_set_log(NULL, MW_LOG_ERROR);
    /* The grid: px x py x pz = ranks, as cubic as the factors allow. */
    int px = 1, py = 1, pz = 1;
    for (uint32_t n = ranks, f = 2; n > 1;) {
        if (n % f) {
            f++;
            continue;
        }
        n /= f;
        if (px <= py && px <= pz)
            px *= (int)f;
        else if (py <= pz)
            py *= (int)f;
        else
            pz *= (int)f;
    }
    mw_clock_t start;
    mw__clock_now(&start);
    uint64_t w0 = tm_window_of(start.real_ns);
    size_t nframes = (size_t)ranks * windows;
    frame_t *traced = calloc(nframes, sizeof *traced), *plain = calloc(nframes, sizeof *plain);
    mw_trace_rec_t *recs =
        malloc((calls / MW_TGEN_CALLS_PER_STEP + 1) * MW_TGEN_RECS_PER_STEP * sizeof *recs);
    mw_tgen_t *gen = calloc(ranks, sizeof *gen);
    tm_msg_t *m = malloc(sizeof *m);
    if (!traced || !plain || !recs || !gen || !m)
        return 1;
    uint64_t total_calls = 0, trace_bytes = 0, frame_plain = 0, frame_traced = 0;
    for (uint32_t r = 0; r < ranks; r++)
        mw_tgen_init(&gen[r], 12345 + r, (int)r, px, py, pz);
    for (uint32_t k = 0; k < windows; k++) {
        for (uint32_t r = 0; r < ranks; r++) {
            size_t ncalls = 0;
            /* 90 % of the window: the generator's last step may overrun its length, and a
             * call always ends inside the window it belongs to (the checks hold it to that). */
            size_t n = mw_tgen_window(&gen[r], recs, calls, TM_WINDOW_NS / 10 * 9, &ncalls);
            /* The summary: the trace's calls per function. */
            static uint64_t per_fn[MW_FN_SPACE];
            memset(per_fn, 0, sizeof per_fn);
            for (size_t i = 0; i < n; i++)
                if (mw_trace_is_call(&recs[i]))
                    per_fn[recs[i].fn]++;
            tm_sample(m, "bench", r, w0 + k, start.real_ns);
            for (unsigned fn = 1; fn < MW_FN_SPACE; fn++)
                if (per_fn[fn])
                    tm_add_fn(m, fn, per_fn[fn], per_fn[fn] * 500, 100, 90000, per_fn[fn] * 64);
            Mpiwatch__Trace t = MPIWATCH__TRACE__INIT;
            uint8_t *data;
            size_t len;
            uint32_t enc;
            uint64_t raw;
            if (mw_trace_encode(recs, n, 1, 50, &data, &len, &enc, &raw) != 0)
                return 1;
            t.window = w0 + k;
            t.state = MW_TRACE_EXACT;
            t.count = (uint32_t)n;
            t.encoding = enc;
            t.raw_bytes = raw;
            t.records.data = data;
            t.records.len = len;
            t.threads = 1;
            frame_t *p = &plain[(size_t)k * ranks + r], *tr = &traced[(size_t)k * ranks + r];
            p->len = tm_pack(m, &p->buf);
            m->sample.trace = &t;
            tr->len = tm_pack(m, &tr->buf);
            free(data);
            total_calls += ncalls;
            trace_bytes += len;
            frame_plain += p->len;
            frame_traced += tr->len;
        }
    }
    double *dt = malloc(reps * sizeof *dt), *dp = malloc(reps * sizeof *dp);
    for (unsigned i = 0; i < reps; i++) {
        uint64_t ex_t = 0, ex_p = 0;
        double a, b;
        if (i & 1) {
            b = run(plain, ranks, windows, w0, &start, &ex_p);
            a = run(traced, ranks, windows, w0, &start, &ex_t);
        } else {
            a = run(traced, ranks, windows, w0, &start, &ex_t);
            b = run(plain, ranks, windows, w0, &start, &ex_p);
        }
        if (a < 0 || b < 0 || ex_t != nframes || ex_p != 0) {
            fprintf(stderr, "a frame was refused (traced %llu exact of %zu)\n",
                    (unsigned long long)ex_t, nframes);
            return 1;
        }
        dt[i] = a;
        dp[i] = b;
    }
    qsort(dt, reps, sizeof *dt, cmp_double);
    qsort(dp, reps, sizeof *dp, cmp_double);
    double t_traced = dt[reps / 2], t_plain = dp[reps / 2];
    double per_call = (t_traced - t_plain) / (double)total_calls;
    double bpc = (double)trace_bytes / (double)total_calls;
    printf("ranks %u (grid %dx%dx%d), %zu calls per rank and window, %u windows, %u reps\n", ranks,
           px, py, pz, calls, windows, reps);
    printf("  samples: %.0f B without trace, %.0f B with it; trace %.2f B per traced call\n",
           (double)frame_plain / nframes, (double)frame_traced / nframes, bpc);
    printf("  ingest CPU: %.1f us per sample without trace, %.1f us with it\n",
           t_plain / nframes * 1e6, t_traced / nframes * 1e6);
    printf("  a traced call costs the collector %.1f ns: %.2f M traced calls/s per core\n",
           per_call * 1e9, 1e-6 / per_call);
    printf("  recording: %.2f B per traced call (the frame and the window): %.2f M calls/s "
           "at 24 MB/s\n",
           2 * bpc, 24e6 / (2 * bpc) / 1e6);
    for (size_t i = 0; i < nframes; i++) {
        free(traced[i].buf);
        free(plain[i].buf);
    }
    free(traced);
    free(plain);
    free(recs);
    free(gen);
    free(m);
    free(dt);
    free(dp);
    return 0;
}
