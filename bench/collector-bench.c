/* mw-collector-bench: how fast the collector ingests samples on one core (prints figures).
 *
 *   build/bench/mw-collector-bench [RANKS [WINDOWS [FUNCTIONS [REPS]]]]   (default 16384 10 20 5)
 *
 * The target is 16,384 ranks x 10 windows/s x 20 functions = 3.3 M function summaries/s.
 * Two figures per decoder: decode alone (every rank's sample decoded in turn into one arena),
 * and the collector's whole path per message (decode into the collector's arena, every check,
 * the window merge, the exact job totals: mw__ingest), one sample per rank per window, windows
 * closing as the last rank reports. Both decoders run in the same process on the same buffers:
 * protobuf-c alone (what the collector did before proto/mw_decode.c; MPIWATCH_DECODER=
 * protobuf-c selects it in the collector) and the hand-written decoder with its fallback. Two
 * sample shapes: "heavy" (the shape of this benchmark's original figure: 20 functions with a
 * 6-bin histogram, 6 peers, 32 occupancy entries, 32 density cells, 32 long calls) and
 * "loadgen" (the shape of mpiwatch-loadgen's samples: 40 occupancy entries, 36 density cells,
 * 4 long calls) and "lg-quart" (the shape mpiwatch-loadgen sends since durations have
 * quarter-octave bins: each of the 3 busiest functions has about 22 non-empty bins whose calls end
 * in two sub-slots and start in two others, 264 density cells; 40 occupancy entries, 4 long calls;
 * about 2.3 KB with 4 functions, like the loadgen's). Values are random, of every magnitude,
 * and differ from rank to rank, as in
 * real samples; the original figure used the same values everywhere, which let the CPU
 * predict every branch of a decoder.
 *
 * DESIGN: time is the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), not the wall clock, so that
 * other processes on a shared machine do not count; wall time is printed beside it. The whole
 * path is the steady state (windows after the first); the first window, where every rank's
 * totals are created, is printed on its own ("1st window", us per sample). Each figure
 * is the median of REPS repetitions, the two decoders alternating which goes first, each
 * repetition with a fresh collector and job. Not a test: it prints.
 *
 * MW_BENCH_TOTALS=1 gives every sample the running totals a current library sends (docs/
 * collector.md, "Loss accounting"): one entry per function of the sample, the totals of a rank
 * whose every window is the same (window k's are k + 1 times the sample's), re-stamped after
 * decoding like the window index. Comparing a run with and without it gives the cost of the
 * totals on the collector's whole path.
 *
 * MW_BENCH_SHAPE=NAME runs only that shape (heavy, loadgen, lg-quart).
 *
 * MW_BENCH_SHUFFLE=1 makes every rank's hello name a table of this build's functions in reverse
 * order (docs/function-table.md): the collector then translates every id of every sample (and
 * sorts the running totals again), which is the cost of ranks of another MPI's table.
 *
 * MW_BENCH_REGIONS=N (at most 32) gives every sample N code-region entries, N call-site entries
 * and its peer entries with their sending function (docs/regions.md, docs/callsites.md; each
 * rank defines its regions and sites once, in an untimed sample before the timed windows), and
 * compares the collector's per-rank detail (Window.rf_*, rr_*) on and off instead of the two
 * decoders: both rows use mw_decode, the first with --rank-detail on, the second off.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector.h"
#include "testmsg.h"

static double clock_s(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct {
    double cpu, wall;
} span_t;

static span_t span_start(void)
{
    return (span_t){clock_s(CLOCK_THREAD_CPUTIME_ID), clock_s(CLOCK_MONOTONIC)};
}

static span_t span_end(span_t s)
{
    return (span_t){clock_s(CLOCK_THREAD_CPUTIME_ID) - s.cpu, clock_s(CLOCK_MONOTONIC) - s.wall};
}

enum { SHAPE_HEAVY, SHAPE_LOADGEN, SHAPE_QUARTER, SHAPES };
static const char *const shape_name[SHAPES] = {"heavy", "loadgen", "lg-quart"};
#define QUARTER_CELLS 264u /* density cells of the lg-quart shape */

static uint64_t rng_state;

/* Uniform in [0, n): the values of a sample differ from rank to rank and in magnitude, as in
 * real samples (identical values would let the CPU predict every branch of a decoder). */
static uint64_t rnd(uint64_t n)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (z ^ (z >> 31)) % n;
}

static int bench_totals;
static int bench_shuffle;      /* MW_BENCH_SHUFFLE */
static unsigned bench_regions; /* MW_BENCH_REGIONS */
static const char *const region_names[TM_MAX] = {
    "solve", "assemble", "precond", "halo", "io",  "reduce", "setup", "step", "r8",  "r9",  "r10",
    "r11",   "r12",      "r13",     "r14",  "r15", "r16",    "r17",   "r18",  "r19", "r20", "r21",
    "r22",   "r23",      "r24",     "r25",  "r26", "r27",    "r28",   "r29",  "r30", "r31"};
static const char *const site_fns[TM_MAX] = {
    "s0",  "s1",  "s2",  "s3",  "s4",  "s5",  "s6",  "s7",  "s8",  "s9",  "s10",
    "s11", "s12", "s13", "s14", "s15", "s16", "s17", "s18", "s19", "s20", "s21",
    "s22", "s23", "s24", "s25", "s26", "s27", "s28", "s29", "s30", "s31"};

/* A rank's definitions of its regions and sites (sent once, untimed). */
static void build_defs(tm_msg_t *m, uint32_t rank, uint64_t window, uint64_t now)
{
    tm_sample(m, "bench", rank, window, now);
    for (unsigned i = 0; i < bench_regions; i++) {
        tm_add_region_def(m, i + 1, region_names[i], 1);
        tm_add_site_def(m, i + 1, "/bench/app", 0x1000 + 16 * i, site_fns[i], "bench.c", 10 + i);
    }
}

static void build_sample(tm_msg_t *m, int shape, uint32_t rank, uint32_t size, uint64_t window,
                         uint64_t now, const unsigned *fns, unsigned nfn)
{
    tm_sample(m, "bench", rank, window, now);
    for (unsigned i = 0; i < nfn && i < TM_MAX; i++) {
        uint64_t count = 1 + rnd(5000), each = 1ull << (6 + rnd(14));
        Mpiwatch__FunctionStat *f = tm_add_fn(m, fns[i], count, count * each + rnd(each), each / 2,
                                              each * 2 + rnd(each), count * rnd(65536));
        f->hist_first = 5 + (uint32_t)rnd(8);
        f->n_hist = 6;
        for (unsigned b = 0; b < 6; b++)
            f->hist[b] = (uint32_t)rnd(300);
    }
    /* The running totals, in increasing function id (those of window 0: the sample's own). */
    for (uint32_t last = 0; bench_totals;) {
        const Mpiwatch__FunctionStat *next = NULL;
        for (size_t i = 0; i < m->sample.n_functions; i++)
            if (m->fs[i].fn > last && (!next || m->fs[i].fn < next->fn))
                next = &m->fs[i];
        if (!next)
            break;
        tm_add_total(m, next->fn, next->count, next->total_ns, next->bytes);
        last = next->fn;
    }
    m->sample.samples_total = bench_totals ? 1 : 0;
    for (unsigned p = 0; p < 6 && p < TM_MAX; p++) {
        uint64_t msgs = 1 + rnd(500);
        if (bench_regions)
            tm_add_peer_fn(m, (rank + p + 1) % size, fns[p % 2], msgs, msgs * (1 + rnd(65536)));
        else
            tm_add_peer(m, (rank + p + 1) % size, msgs, msgs * (1 + rnd(65536)));
    }
    for (unsigned i = 0; i < bench_regions; i++) {
        uint64_t incl = 1 + rnd(50000000), excl = incl / 2, mpi = excl / 3;
        tm_add_region(m, i + 1, 1 + rnd(10), incl, excl, mpi);
        tm_add_site(m, i + 1, fns[i % nfn], 1 + rnd(1000), 1 + rnd(10000000), rnd(1 << 20),
                    1 + rnd(100000));
    }
    /* The loadgen shape's occupancy and density have more entries than tm_msg_t holds: they
     * are set by pack_sample(). */
    for (unsigned i = 0; shape == SHAPE_HEAVY && i < TM_MAX; i++) {
        tm_add_occ(m, fns[i % nfn], i % TM_SUBSLOTS, 1 + rnd(5000000));
        tm_add_density(m, fns[i % 3], (int32_t)rnd(TM_SUBSLOTS), 5 + (uint32_t)rnd(20), 1,
                       1 + rnd(300));
    }
    for (unsigned i = 0; i < (shape == SHAPE_HEAVY ? TM_MAX : 4u); i++)
        tm_add_call(m, fns[i % nfn], now - rnd(100000000), 1000 + rnd(10000000), rnd(1 << 20),
                    (int32_t)rnd(size));
}

/* Packs the sample; the loadgen shape gets its occupancy and density arrays here. */
static size_t pack_sample(tm_msg_t *m, int shape, uint8_t **out)
{
    static uint32_t occ_fn[64], occ_sub[64], d_fn[QUARTER_CELLS], d_bin[QUARTER_CELLS],
        d_end[QUARTER_CELLS];
    static uint64_t occ_ns[64], d_count[QUARTER_CELLS];
    static int32_t d_sub[QUARTER_CELLS];
    Mpiwatch__Sample *s = &m->sample;
    if (shape == SHAPE_LOADGEN || shape == SHAPE_QUARTER) {
        for (unsigned i = 0; i < 40; i++) {
            occ_fn[i] = m->fs[i % 4].fn;
            occ_sub[i] = i % 10;
            occ_ns[i] = 1 + rnd(5000000);
        }
        size_t nd = shape == SHAPE_QUARTER ? QUARTER_CELLS : 36;
        for (unsigned i = 0; i < nd; i++) {
            if (shape == SHAPE_QUARTER) { /* per function, bin, part: the end cell, the start */
                unsigned per_fn = QUARTER_CELLS / 3, j = i % per_fn;
                d_fn[i] = m->fs[i / per_fn].fn;
                d_bin[i] = 2 * (uint32_t)(i / per_fn) + j / 4; /* under TM_BINS */
                d_end[i] = j % 2;
                d_sub[i] = (int32_t)rnd(10) - (d_end[i] ? 0 : (int32_t)rnd(4));
                d_count[i] = 1 + rnd(300);
                continue;
            }
            d_fn[i] = m->fs[i % 3].fn;
            d_sub[i] = (int32_t)rnd(10);
            d_bin[i] = 5 + (uint32_t)rnd(20);
            d_end[i] = 1;
            d_count[i] = 1 + rnd(300);
        }
        s->n_occ_fn = s->n_occ_sub = s->n_occ_ns = 40;
        s->occ_fn = occ_fn;
        s->occ_sub = occ_sub;
        s->occ_ns = occ_ns;
        s->n_density_fn = s->n_density_sub = s->n_density_bin = s->n_density_end =
            s->n_density_count = nd;
        s->density_fn = d_fn;
        s->density_sub = d_sub;
        s->density_bin = d_bin;
        s->density_end = d_end;
        s->density_count = d_count;
    }
    return tm_pack(m, out);
}

typedef Mpiwatch__Envelope *(*decode_fn)(mw_arena_t *, const void *, size_t);

typedef struct {
    double decode_cpu, decode_wall, full_cpu, full_wall; /* seconds per sample */
    double first_cpu; /* seconds per sample of the first window (the job's tables fill up) */
    uint64_t windows;
} result_t;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, unsigned n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One repetition with one decoder: decode alone, then the whole path with a fresh collector. */
static int run(decode_fn decode, int detail, uint8_t **bufs, const size_t *lens, uint32_t ranks,
               uint32_t windows, result_t *out)
{
    static mw_arena_t arena;
    if (!arena.base && mw_arena_init(&arena, 4 * (size_t)MW_MAX_MESSAGE_BYTES) < 0)
        return -1;
    double reps = (double)ranks * windows;
    span_t t = span_start();
    for (uint32_t k = 0; k < windows; k++)
        for (uint32_t r = 0; r < ranks; r++)
            if (!decode(&arena, bufs[r], lens[r]))
                return -1;
    t = span_end(t);
    out->decode_cpu = t.cpu / reps;
    out->decode_wall = t.wall / reps;

    mw_collector_options_t opt;
    mw_collector_options_defaults(&opt);
    opt.quiet = 1;
    opt.rank_detail = detail ? NULL : "off"; /* not freed: no mw_collector_options_free here */
    mw_collector_t *c = malloc(sizeof *c);
    if (!c || mw_collector_init(c, &opt) < 0)
        return -1;
    mw_clock_t now;
    mw__clock_now(&now);
    uint64_t w0 = tm_window_of(now.real_ns);
    tm_msg_t *m = malloc(sizeof *m);
    if (!m)
        return -1;
    for (uint32_t r = 0; r < ranks; r++) {
        uint8_t *buf;
        tm_hello(m, "bench", r, ranks, now.real_ns);
        if (bench_shuffle) { /* ranks of another table: this build's names in reverse order */
            static char *rev[MW_FN_COUNT - 1];
            for (unsigned id = 1; id < MW_FN_COUNT; id++)
                rev[MW_FN_COUNT - 1 - id] = (char *)mw_fn_name(id);
            m->hello.n_function_names = MW_FN_COUNT - 1;
            m->hello.function_names = rev;
        }
        size_t n = tm_pack(m, &buf);
        if (mw_collector_frame(c, buf, n, 1, &now) != MW_ACCEPTED)
            return -1;
        free(buf);
    }
    /* The regions' and sites' definitions, untimed, in the window before the timed ones. */
    for (uint32_t r = 0; bench_regions && r < ranks; r++) {
        uint8_t *buf;
        build_defs(m, r, w0 - 1, now.real_ns);
        size_t n = tm_pack(m, &buf);
        if (mw_collector_frame(c, buf, n, 1, &now) != MW_ACCEPTED)
            return -1;
        free(buf);
    }
    free(m);
    /* The decoded window index is re-stamped for each window, which is cheaper than packing
     * ranks x windows distinct buffers. */
    t = span_start();
    double first = 0;
    for (uint32_t k = 0; k < windows; k++) {
        if (k == 1)
            first = clock_s(CLOCK_THREAD_CPUTIME_ID) - t.cpu;
        for (uint32_t r = 0; r < ranks; r++) {
            Mpiwatch__Envelope *env = decode(&c->arena, bufs[r], lens[r]);
            if (!env)
                return -1;
            env->sample->window = w0 + k;
            if (bench_totals) {
                Mpiwatch__Sample *s = env->sample;
                s->samples_total = k + 1;
                for (size_t j = 0; j < s->n_total_fn; j++) {
                    s->total_calls[j] *= k + 1;
                    s->total_ns[j] *= k + 1;
                    s->total_bytes[j] *= k + 1;
                }
            }
            if (mw__ingest(c, env, &now) != MW_ACCEPTED)
                return -1;
            c->stats.accepted++;
        }
        now.mono_ns += TM_WINDOW_NS;
        mw_collector_tick(c, &now);
    }
    t = span_end(t);
    if (windows > 1) { /* the steady state: windows after the first */
        out->first_cpu = first / ranks;
        out->full_cpu = (t.cpu - first) / (reps - ranks);
    } else {
        out->first_cpu = out->full_cpu = t.cpu / reps;
    }
    out->full_wall = t.wall / reps;
    out->windows = c->job.windows;
    mw_collector_free(c);
    free(c);
    return 0;
}

int main(int argc, char **argv)
{
    uint32_t ranks = argc > 1 ? (uint32_t)atoi(argv[1]) : 16384;
    uint32_t windows = argc > 2 ? (uint32_t)atoi(argv[2]) : 10;
    unsigned nfn = argc > 3 ? (unsigned)atoi(argv[3]) : 20;
    unsigned reps = argc > 4 ? (unsigned)atoi(argv[4]) : 5;
    bench_totals = getenv("MW_BENCH_TOTALS") && atoi(getenv("MW_BENCH_TOTALS")) > 0;
    bench_shuffle = getenv("MW_BENCH_SHUFFLE") && atoi(getenv("MW_BENCH_SHUFFLE")) > 0;
    bench_regions = getenv("MW_BENCH_REGIONS") ? (unsigned)atoi(getenv("MW_BENCH_REGIONS")) : 0;
    if (bench_regions > TM_MAX)
        bench_regions = TM_MAX;
    if (ranks < 2 || windows == 0 || nfn < 4 || nfn > TM_MAX || reps == 0 || reps > 99) {
        fprintf(stderr,
                "usage: mw-collector-bench [RANKS>=2 [WINDOWS [4<=FUNCTIONS<=%d [REPS]]]]\n",
                TM_MAX);
        return 2;
    }
    unsigned fns[TM_MAX];
    for (unsigned i = 0, id = 1; i < nfn; i++, id++)
        fns[i] = id; /* any distinct valid ids */
    mw__log_level = MW_LOG_ERROR;
    struct {
        const char *name;
        decode_fn fn;
        int detail;
    } dec[2] = {{"protobuf-c", mw__envelope_decode_pbc, 1}, {"mw_decode", mw_envelope_decode, 1}};
    if (bench_regions) { /* the per-rank detail on and off, both with mw_decode */
        dec[0].name = "detail-on";
        dec[0].fn = mw_envelope_decode;
        dec[1].name = "detail-off";
        dec[1].detail = 0;
    }

    printf("mw-collector-bench: %u ranks x %u windows x %u functions, median of %u; times are "
           "CPU time of this thread (wall time in brackets)\n",
           ranks, windows, nfn, reps);
    if (bench_regions)
        printf("with %u regions, %u call sites and peer_fn per sample: rank detail on vs off\n",
               bench_regions, bench_regions);
    printf("%-8s %-11s %14s %20s %14s %12s %12s\n", "shape", "decoder", "decode us/smp",
           "decode+check+merge", "M summaries/s", "check+merge", "1st window");
    uint8_t **bufs = malloc(ranks * sizeof *bufs);
    size_t *lens = malloc(ranks * sizeof *lens);
    tm_msg_t *m = malloc(sizeof *m);
    result_t *res = malloc(2 * reps * sizeof *res);
    if (!bufs || !lens || !m || !res)
        return 1;
    const char *only = getenv("MW_BENCH_SHAPE"); /* one shape by name */
    for (int shape = 0; shape < SHAPES; shape++) {
        if (only && strcmp(only, shape_name[shape]) != 0)
            continue;
        mw_clock_t now;
        mw__clock_now(&now);
        for (uint32_t r = 0; r < ranks; r++) {
            build_sample(m, shape, r, ranks, tm_window_of(now.real_ns), now.real_ns, fns, nfn);
            lens[r] = pack_sample(m, shape, &bufs[r]);
        }
        for (unsigned i = 0; i < reps; i++)
            for (unsigned j = 0; j < 2; j++) {
                unsigned d = (i + j) % 2; /* alternate which decoder goes first */
                if (run(dec[d].fn, dec[d].detail, bufs, lens, ranks, windows, &res[d * reps + i]) <
                    0) {
                    fprintf(stderr, "mw-collector-bench: a run failed\n");
                    return 1;
                }
            }
        double full_cpu[2];
        for (unsigned d = 0; d < 2; d++) {
            double v[5][99];
            for (unsigned i = 0; i < reps; i++) {
                v[0][i] = res[d * reps + i].decode_cpu;
                v[1][i] = res[d * reps + i].decode_wall;
                v[2][i] = res[d * reps + i].full_cpu;
                v[3][i] = res[d * reps + i].full_wall;
                v[4][i] = res[d * reps + i].first_cpu;
            }
            double dc = median(v[0], reps), dw = median(v[1], reps);
            double fc = median(v[2], reps), fw = median(v[3], reps), f1 = median(v[4], reps);
            full_cpu[d] = fc;
            printf("%-8s %-11s %6.2f (%5.2f) %12.2f (%5.2f) %7.2f (%4.2f) %12.2f %12.2f\n",
                   shape_name[shape], dec[d].name, dc * 1e6, dw * 1e6, fc * 1e6, fw * 1e6,
                   nfn / fc / 1e6, nfn / fw / 1e6, (fc - dc) * 1e6, f1 * 1e6);
        }
        printf("%-8s sample %zu bytes on the wire, %llu windows closed per run; whole path %.2fx "
               "faster with %s\n",
               shape_name[shape], lens[0], (unsigned long long)res[0].windows,
               full_cpu[0] / full_cpu[1], dec[1].name);
        for (uint32_t r = 0; r < ranks; r++)
            free(bufs[r]);
    }
    printf("target: 16384 ranks x 10 windows/s x 20 functions = 3.28 M function summaries/s\n");
    free(bufs);
    free(lens);
    free(m);
    free(res);
    return 0;
}
