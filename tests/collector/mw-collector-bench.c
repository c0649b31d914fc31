/* mw-collector-bench: how fast the collector ingests samples on one core (prints figures).
 *
 *   mw-collector-bench [RANKS [WINDOWS [FUNCTIONS]]]     (default 16384 10 20)
 *
 * The target is 16,384 ranks x 10 windows/s x 20 functions = 3.3 M function summaries/s.
 * Two figures: protobuf-c decode alone (mw_proto: one sample unpacked again and again), and
 * the collector's whole path per message (decode into the arena, every check, the window
 * merge, the exact job totals), one sample per rank per window. Samples carry, per function, a
 * 6-bin histogram, plus peers, occupancy, density cells and long calls, like the shim sends. Not a
 * test: it prints.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector.h"
#include "testmsg.h"

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void build_sample(tm_msg_t *m, uint32_t rank, uint32_t size, uint64_t window, uint64_t now,
                         const unsigned *fns, unsigned nfn)
{
    tm_sample(m, "bench", rank, window, now);
    for (unsigned i = 0; i < nfn && i < TM_MAX; i++) {
        Mpiwatch__FunctionStat *f =
            tm_add_fn(m, fns[i], 100 + i, 100000 + 1000 * i, 200, 9000, 64 * i);
        f->hist_first = 7;
        f->n_hist = 6;
        for (unsigned b = 0; b < 6; b++)
            f->hist[b] = 10 + b;
    }
    for (unsigned p = 0; p < 6 && p < TM_MAX; p++)
        tm_add_peer(m, (rank + p + 1) % size, 10, 10240);
    for (unsigned i = 0; i < TM_MAX; i++) {
        tm_add_occ(m, fns[i % nfn], i % TM_SUBSLOTS, 5000);
        tm_add_density(m, fns[i % nfn], (int32_t)(i % TM_SUBSLOTS), 10 + i % 8, i & 1, 3);
        tm_add_call(m, fns[i % nfn], now - 100000, 50000 + i, 0, -1);
    }
}

int main(int argc, char **argv)
{
    uint32_t ranks = argc > 1 ? (uint32_t)atoi(argv[1]) : 16384;
    uint32_t windows = argc > 2 ? (uint32_t)atoi(argv[2]) : 10;
    unsigned nfn = argc > 3 ? (unsigned)atoi(argv[3]) : 20;
    if (ranks == 0 || windows == 0 || nfn == 0 || nfn > TM_MAX * 2) {
        fprintf(stderr, "usage: mw-collector-bench [RANKS [WINDOWS [FUNCTIONS<=%d]]]\n",
                TM_MAX * 2);
        return 2;
    }
    if (nfn > TM_MAX)
        nfn = TM_MAX; /* the builder's limit */
    unsigned fns[TM_MAX];
    for (unsigned i = 0, id = 1; i < nfn; i++, id++)
        fns[i] = id; /* any distinct valid ids */

    mw__log_level = MW_LOG_ERROR;
    mw_options_t opt;
    mw_options_defaults(&opt);
    opt.quiet = 1;
    mw_collector_t *c = malloc(sizeof *c);
    if (!c || mw_collector_init(c, &opt) < 0)
        return 1;
    mw_clock_t now;
    mw_clock_now(&now);
    uint64_t w0 = tm_window_of(now.real_ns);

    /* Hellos, then one sample per rank decoded into its own arena slice. */
    tm_msg_t *m = malloc(sizeof *m);
    uint8_t *buf;
    for (uint32_t r = 0; r < ranks; r++) {
        tm_hello(m, "bench", r, ranks, now.real_ns);
        size_t n = tm_pack(m, &buf);
        if (mw_collector_frame(c, buf, n, 1, &now) != MW_ACCEPTED)
            return 1;
        free(buf);
    }
    build_sample(m, 0, ranks, w0, now.real_ns, fns, nfn);
    size_t packed = tm_pack(m, &buf);

    /* decode */
    mw_arena_t arena;
    if (mw_arena_init(&arena, 1 << 20) < 0)
        return 1;
    uint32_t reps = ranks * windows;
    double t0 = seconds();
    for (uint32_t i = 0; i < reps; i++)
        if (!mw_envelope_decode(&arena, buf, packed))
            return 1;
    double t_decode = seconds() - t0;
    free(buf);

    /* The collector's real path per message: decode into the (hot) arena, then validate and
     * merge. Each rank has its own packed sample; the decoded window index is re-stamped for
     * each window, which is cheaper than packing ranks x windows distinct buffers. */
    uint8_t **bufs = malloc(ranks * sizeof *bufs);
    size_t *lens = malloc(ranks * sizeof *lens);
    if (!bufs || !lens)
        return 1;
    for (uint32_t r = 0; r < ranks; r++) {
        build_sample(m, r, ranks, w0, now.real_ns, fns, nfn);
        lens[r] = tm_pack(m, &bufs[r]);
    }
    t0 = seconds();
    for (uint32_t k = 0; k < windows; k++) {
        for (uint32_t r = 0; r < ranks; r++) {
            Mpiwatch__Envelope *env = mw_envelope_decode(&c->arena, bufs[r], lens[r]);
            if (!env)
                return 1;
            env->sample->window = w0 + k;
            if (mw__ingest(c, env, &now) != MW_ACCEPTED)
                return 1;
            c->stats.accepted++;
        }
        now.mono_ns += TM_WINDOW_NS;
        mw_collector_tick(c, &now);
    }
    double t_full = seconds() - t0;

    double summaries = (double)ranks * windows * nfn;
    printf("ranks %u, windows %u, functions/sample %u, sample %zu bytes on the wire\n", ranks,
           windows, nfn, packed);
    printf("decode only        %6.2f us/sample  %6.2f M function summaries/s\n",
           1e6 * t_decode / reps, summaries / t_decode / 1e6);
    printf("decode+validate+merge %6.2f us/sample  %6.2f M function summaries/s  (%llu windows)\n",
           1e6 * t_full / reps, summaries / t_full / 1e6, (unsigned long long)c->job.windows);
    printf("validate+merge     %6.2f us/sample  (the difference)\n",
           1e6 * (t_full - t_decode) / reps);
    printf("target: 16384 ranks x 10 windows/s x 20 functions = 3.3 M function summaries/s\n");
    for (uint32_t r = 0; r < ranks; r++)
        free(bufs[r]);
    free(bufs);
    free(lens);
    mw_arena_free(&arena);
    mw_collector_free(c);
    free(c);
    free(m);
    return 0;
}
