/* mw-steps-bench: what step marks cost the collector per window, by job size (prints figures).
 *
 *   mw-steps-bench [RANKS... ]          (default 4096 16384 32768)
 *
 * Every rank sends one sample per window carrying one StepMark (the rank ended step k in
 * window k), the shape of a job that calls mw_step() once per window. The same samples are
 * then sent again without their mark. The figure is the collector's CPU time per window on
 * the whole ingest path (decode, checks, merge, steps), with and without marks, and their
 * difference per rank: a per-sample cost that does not depend on the job's size shows as a
 * flat "steps us/rank" column, a scan of every rank per sample as a column that grows with
 * RANKS. docs/steps.md has the figures before and after the fix of issue 12 (defect 5).
 *
 * DESIGN: like mw-collector-bench, it drives the socket-free core (mw__ingest) with decoded
 * envelopes whose window and step are re-stamped in place, and times with the thread's CPU
 * clock so that other processes on a shared machine do not count. The first two windows
 * (where every rank's state is created) are left out. Not a test: it prints.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector.h"
#include "steps.h"
#include "testmsg.h"

#define WARM 2     /* windows left out of the figure */
#define WINDOWS 10 /* windows timed */

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One run: `ranks` ranks, WARM + WINDOWS windows, with or without a mark per sample. Returns
 * the CPU seconds per timed window, or a negative value on an error. */
static double run(uint32_t ranks, int marks)
{
    mw_collector_options_t opt;
    mw_collector_options_defaults(&opt);
    opt.quiet = 1;
    mw_collector_t *c = malloc(sizeof *c);
    tm_msg_t *m = malloc(sizeof *m);
    uint8_t **bufs = calloc(ranks, sizeof *bufs);
    size_t *lens = calloc(ranks, sizeof *lens);
    if (!c || !m || !bufs || !lens || mw_collector_init(c, &opt) < 0)
        return -1;
    mw_clock_t now;
    mw__clock_now(&now);
    uint64_t w0 = tm_window_of(now.real_ns) + 1;
    unsigned fn_a = mw_fn_id("MPI_Allreduce"), fn_b = mw_fn_id("MPI_Send");
    for (uint32_t r = 0; r < ranks; r++) {
        tm_hello(m, "bench", r, ranks, now.real_ns);
        uint8_t *buf;
        size_t n = tm_pack(m, &buf);
        if (mw_collector_frame(c, buf, n, 1, &now) != MW_ACCEPTED)
            return -1;
        free(buf);
        /* A window of 20 Allreduce, 10 Send and 10 messages to the next rank; the mark
         * halfway through it has half of each. */
        tm_sample(m, "bench", r, w0, now.real_ns);
        tm_add_fn(m, fn_a, 20, 20000, 1000, 1000, 160);
        tm_add_fn(m, fn_b, 10, 10000, 1000, 1000, 80);
        tm_add_peer(m, (r + 1) % ranks, 10, 80);
        Mpiwatch__FunctionStat fs[2], *fsp[2] = {&fs[0], &fs[1]};
        fs[0] = (Mpiwatch__FunctionStat)MPIWATCH__FUNCTION_STAT__INIT;
        fs[0].fn = fn_a, fs[0].count = 10, fs[0].total_ns = 10000, fs[0].bytes = 80;
        fs[0].min_ns = fs[0].max_ns = 1000;
        fs[1] = (Mpiwatch__FunctionStat)MPIWATCH__FUNCTION_STAT__INIT;
        fs[1].fn = fn_b, fs[1].count = 5, fs[1].total_ns = 5000, fs[1].bytes = 40;
        fs[1].min_ns = fs[1].max_ns = 1000;
        uint32_t peer = (r + 1) % ranks;
        uint64_t msgs = 5, bytes = 40;
        Mpiwatch__StepMark mk = MPIWATCH__STEP_MARK__INIT, *mkp = &mk;
        mk.step = 0;
        mk.end_ns = w0 * TM_WINDOW_NS + TM_WINDOW_NS / 2;
        mk.source = 1;
        mk.n_functions = 2;
        mk.functions = fsp;
        mk.n_peer_rank = mk.n_peer_messages = mk.n_peer_bytes = 1;
        mk.peer_rank = &peer;
        mk.peer_messages = &msgs;
        mk.peer_bytes = &bytes;
        if (marks) {
            m->sample.n_steps = 1;
            m->sample.steps = &mkp;
        }
        lens[r] = tm_pack(m, &bufs[r]);
        m->sample.n_steps = 0;
        m->sample.steps = NULL;
        if (!lens[r])
            return -1;
    }
    double t = 0;
    for (uint32_t k = 0; k < WARM + WINDOWS; k++) {
        if (k == WARM)
            t = cpu_s();
        for (uint32_t r = 0; r < ranks; r++) {
            Mpiwatch__Envelope *env = mw_envelope_decode(&c->arena, bufs[r], lens[r]);
            if (!env)
                return -1;
            env->sample->window = w0 + k;
            if (marks) {
                env->sample->steps[0]->step = k;
                env->sample->steps[0]->end_ns = (w0 + k) * TM_WINDOW_NS + TM_WINDOW_NS / 2;
            }
            if (mw__ingest(c, env, &now) != MW_ACCEPTED) {
                fprintf(stderr, "mw-steps-bench: sample of rank %u refused\n", r);
                return -1;
            }
        }
        now.mono_ns += TM_WINDOW_NS;
        now.real_ns += TM_WINDOW_NS;
        mw_collector_tick(c, &now);
    }
    t = (cpu_s() - t) / WINDOWS;
    uint64_t closed = mw__steps_closed(c);
    if (marks && closed + 1 < WARM + WINDOWS) {
        fprintf(stderr, "mw-steps-bench: only %llu steps closed\n", (unsigned long long)closed);
        return -1;
    }
    mw_collector_free(c);
    free(c);
    free(m);
    for (uint32_t r = 0; r < ranks; r++)
        free(bufs[r]);
    free(bufs);
    free(lens);
    return t;
}

int main(int argc, char **argv)
{
    static const uint32_t def[] = {4096, 16384, 32768};
    uint32_t sizes[16];
    int n = 0;
    for (int i = 1; i < argc && n < 16; i++)
        sizes[n++] = (uint32_t)strtoul(argv[i], NULL, 10);
    for (int i = 0; n == 0 && i < 3; i++)
        sizes[i] = def[i];
    if (n == 0)
        n = 3;
    mw__log_level = MW_LOG_ERROR;
    printf("mw-steps-bench: one step mark per rank per window, %d windows timed; CPU time of "
           "the collector's ingest per 100 ms window\n",
           WINDOWS);
    printf("%8s %14s %14s %12s %14s %10s\n", "ranks", "marks ms/win", "none ms/win", "ratio",
           "steps us/rank", "x 4096");
    double base = 0;
    for (int i = 0; i < n; i++) {
        if (sizes[i] < 2 || sizes[i] > (1u << 20)) {
            fprintf(stderr, "mw-steps-bench: RANKS in [2, 1048576]\n");
            return 2;
        }
        double with = run(sizes[i], 1), without = run(sizes[i], 0);
        if (with < 0 || without < 0)
            return 1;
        double per_rank = (with - without) / sizes[i] * 1e6;
        if (i == 0)
            base = per_rank;
        printf("%8u %14.2f %14.2f %12.2f %14.3f %10.2f\n", sizes[i], with * 1e3, without * 1e3,
               with / without, per_rank, base > 0 ? per_rank / base : 0);
    }
    return 0;
}
