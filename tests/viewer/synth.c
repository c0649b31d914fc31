/* synth.c: writes the synthetic recordings of synth.h through the collector core.
 *
 * DESIGN: the collector (mw_collector_core) runs without sockets, exactly as its unit tests
 * drive it: mw_collector_frame() with packed envelopes and a clock chosen here, a recording
 * opened on it (mw__record_open), so every frame, tick, window, job and event is written by
 * the collector's own code. The clock starts at a fixed real time (November 2023, a multiple
 * of the window length) so that window indices and times are the same on every run; the
 * monotonic clock starts where the machine's is, since the recording's first frame takes it.
 * Every rank sends its sample of window k 2 ms after the window's end; all ranks report, so
 * each window closes complete as its last sample arrives. A sample is assembled in a builder that
 * sums the calls it is given into function totals, log2 histograms, density cells (by the sub-slot
 * in which the call ends) and occupancy, the way the preloaded library summarizes calls; a long
 * call is also kept as a recorded call, and its occupancy is spread over every sub-slot (of
 * every window) it covers, where its rank does nothing else.
 */
#include "synth.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector.h"
#include "record_file.h"
#include "testmsg.h"

/* The system clocks now, for the recording's first frame as the collector stamps it. */
static const mw_clock_t *fx_wall_clock(void)
{
    static mw_clock_t now;
    mw__clock_now(&now);
    return &now;
}

#define SY_REAL0 1700000000000000000ull /* a multiple of every window length used */
#define SY_SEND_DELAY_NS 2000000ull     /* a sample leaves 2 ms after its window's end */
#define SY_FNS 8                        /* functions in one sample */
#define SY_SUBS MW_MAX_SUBSLOTS
#define SY_BINS MW_MAX_DURATION_BINS
#define SY_ENTRIES (SY_FNS * SY_SUBS * 2)

/* One sample being assembled. */
typedef struct {
    uint32_t subslots;
    unsigned fn[SY_FNS];
    unsigned n_fn;
    uint64_t count[SY_FNS], total[SY_FNS], min[SY_FNS], max[SY_FNS], bytes[SY_FNS];
    uint64_t hist[SY_FNS][SY_BINS];
    uint64_t occ[SY_FNS][SY_SUBS];
    uint64_t dens[SY_FNS][SY_SUBS][SY_BINS];  /* by the sub-slot of the end */
    uint64_t start[SY_FNS][SY_SUBS][SY_BINS]; /* by the sub-slot of the start, this window */
    struct {
        unsigned fn;
        int32_t sub;
        uint32_t bin;
    } early[SY_MAX_LONG]; /* starts in an earlier window (long calls): one call each */
    unsigned n_early;
    Mpiwatch__Call calls[SY_MAX_LONG];
    unsigned n_calls;
} sy_builder_t;

static uint32_t sy_bin(uint64_t ns)
{
    uint32_t b = 0;
    while (ns > 1) {
        ns >>= 1;
        b++;
    }
    return b;
}

static unsigned sy_slot(sy_builder_t *b, unsigned fn)
{
    for (unsigned i = 0; i < b->n_fn; i++)
        if (b->fn[i] == fn)
            return i;
    if (b->n_fn == SY_FNS)
        abort(); /* a pattern with too many functions: a bug of this file */
    b->fn[b->n_fn] = fn;
    return b->n_fn++;
}

/* `count` calls of `dur_ns` ending in sub-slot `sub` and starting in sub-slot `start_sub`
 * (negative: that many sub-slots before this window, as the library counts it, at most one
 * window back). */
static void sy_calls(sy_builder_t *b, unsigned fn, uint64_t count, uint64_t dur_ns, uint32_t sub,
                     int32_t start_sub, uint64_t bytes)
{
    if (!count)
        return;
    unsigned i = sy_slot(b, fn);
    if (!b->count[i] || dur_ns < b->min[i])
        b->min[i] = dur_ns;
    if (dur_ns > b->max[i])
        b->max[i] = dur_ns;
    b->count[i] += count;
    b->total[i] += count * dur_ns;
    b->bytes[i] += bytes * count;
    b->hist[i][sy_bin(dur_ns)] += count;
    b->dens[i][sub][sy_bin(dur_ns)] += count;
    if (start_sub >= 0) {
        b->start[i][start_sub][sy_bin(dur_ns)] += count;
    } else {
        if (b->n_early == SY_MAX_LONG || count != 1)
            abort(); /* only long calls start in an earlier window */
        b->early[b->n_early].fn = fn;
        b->early[b->n_early].sub = start_sub;
        b->early[b->n_early++].bin = sy_bin(dur_ns);
    }
}

static void sy_occ(sy_builder_t *b, unsigned fn, uint32_t sub, uint64_t ns)
{
    b->occ[sy_slot(b, fn)][sub] += ns;
}

/* Packs the sample of `rank` for window `index` as an envelope. Returns its size. */
static size_t sy_pack(const sy_builder_t *b, const char *job, uint32_t rank, uint64_t seq,
                      uint64_t index, uint64_t sent_ns, uint8_t **out)
{
    static Mpiwatch__FunctionStat fs[SY_FNS];
    static Mpiwatch__FunctionStat *fsp[SY_FNS];
    static uint32_t hist[SY_FNS][SY_BINS];
    static uint32_t occ_fn[SY_ENTRIES], occ_sub[SY_ENTRIES];
    static uint64_t occ_ns[SY_ENTRIES];
    static uint32_t d_fn[SY_ENTRIES * 4], d_bin[SY_ENTRIES * 4], d_end[SY_ENTRIES * 4];
    static int32_t d_sub[SY_ENTRIES * 4];
    static uint64_t d_count[SY_ENTRIES * 4];
    static Mpiwatch__Call calls[SY_MAX_LONG];
    static Mpiwatch__Call *callp[SY_MAX_LONG];
    Mpiwatch__Envelope env = MPIWATCH__ENVELOPE__INIT;
    Mpiwatch__Sample s = MPIWATCH__SAMPLE__INIT;
    env.version = MW_PROTO_VERSION;
    env.job = (char *)job;
    env.rank = rank;
    env.seq = seq;
    env.body_case = MPIWATCH__ENVELOPE__BODY_SAMPLE;
    env.sample = &s;
    s.window = index;
    s.sent_ns = sent_ns;
    size_t no = 0, nd = 0;
    for (unsigned i = 0; i < b->n_fn; i++) {
        Mpiwatch__FunctionStat *f = &fs[i];
        mpiwatch__function_stat__init(f);
        f->fn = b->fn[i];
        f->count = b->count[i];
        f->total_ns = b->total[i];
        f->min_ns = b->count[i] ? b->min[i] : 0;
        f->max_ns = b->max[i];
        f->bytes = b->bytes[i];
        if (b->count[i]) {
            uint32_t lo = sy_bin(f->min_ns), hi = sy_bin(f->max_ns);
            f->hist_first = lo;
            f->n_hist = hi - lo + 1;
            f->hist = hist[i];
            for (uint32_t k = lo; k <= hi; k++)
                hist[i][k - lo] = (uint32_t)b->hist[i][k];
        }
        fsp[i] = f;
        for (uint32_t sub = 0; sub < b->subslots; sub++) {
            if (b->occ[i][sub]) {
                occ_fn[no] = b->fn[i];
                occ_sub[no] = sub;
                occ_ns[no++] = b->occ[i][sub];
            }
            for (uint32_t bin = 0; bin < SY_BINS; bin++) {
                for (uint32_t end = 0; end < 2; end++) {
                    uint64_t n = end ? b->dens[i][sub][bin] : b->start[i][sub][bin];
                    if (!n)
                        continue;
                    if (nd == sizeof d_fn / sizeof d_fn[0])
                        abort();
                    d_fn[nd] = b->fn[i];
                    d_sub[nd] = (int32_t)sub;
                    d_bin[nd] = bin;
                    d_end[nd] = end;
                    d_count[nd++] = n;
                }
            }
        }
    }
    for (unsigned i = 0; i < b->n_early; i++) {
        d_fn[nd] = b->early[i].fn;
        d_sub[nd] = b->early[i].sub;
        d_bin[nd] = b->early[i].bin;
        d_end[nd] = 0;
        d_count[nd++] = 1;
    }
    s.n_functions = b->n_fn;
    s.functions = fsp;
    s.n_occ_fn = s.n_occ_sub = s.n_occ_ns = no;
    s.occ_fn = occ_fn;
    s.occ_sub = occ_sub;
    s.occ_ns = occ_ns;
    s.n_density_fn = s.n_density_sub = s.n_density_bin = s.n_density_end = s.n_density_count = nd;
    s.density_fn = d_fn;
    s.density_sub = d_sub;
    s.density_bin = d_bin;
    s.density_end = d_end;
    s.density_count = d_count;
    for (unsigned i = 0; i < b->n_calls; i++) {
        calls[i] = b->calls[i];
        callp[i] = &calls[i];
    }
    s.n_longest = b->n_calls;
    s.longest = callp;
    size_t n = mpiwatch__envelope__get_packed_size(&env);
    *out = malloc(n ? n : 1);
    if (!*out)
        abort();
    return mpiwatch__envelope__pack(&env, *out);
}

void sy_defaults(sy_options_t *o)
{
    memset(o, 0, sizeof *o);
    o->pattern = SY_STACK;
    o->ranks = 16;
    o->windows = 20;
    o->hosts = 4;
    o->subslots = 16;
    o->window_ns = 100000000ull;
    o->cluster_calls = 1000000ull;
    o->functions = 24;
}

static const char *const sy_names[] = {"stack", "outlier", "picking", "terrain"};

int sy_pattern_of(const char *name)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(name, sy_names[i]) == 0)
            return i;
    return -1;
}

/* The outlier pattern's cluster: windows [first, first + windows) of the run. */
#define SY_CLUSTER_NS 1500u
static uint32_t sy_cluster_first(const sy_options_t *o)
{
    return o->windows / 4;
}

static uint32_t sy_cluster_windows(const sy_options_t *o)
{
    return o->windows / 10 ? o->windows / 10 : 1;
}

/* The picking pattern's background: two MPI_Allreduce calls of this length per rank and
 * sub-slot (mw-synth prints it, so that the snapshot tests can place the duration axis). */
#define SY_PICK_BG_NS 40000u

/* The known long calls of a pattern. Returns how many, or -1 when the run is too small. */
static int sy_long_calls(const sy_options_t *o, uint64_t origin, sy_call_t *out)
{
    uint64_t total = o->windows * o->window_ns, sub_ns = o->window_ns / o->subslots;
    if (o->pattern == SY_OUTLIER) {
        if (o->windows < 6 || o->ranks < 1)
            return -1;
        out[0] = (sy_call_t){.fn = mw_fn_id("MPI_Barrier"),
                             .rank = 3 % o->ranks,
                             .peer = -1,
                             .start_ns = origin + o->windows / 2 * o->window_ns + 7 * sub_ns / 2,
                             .duration_ns = 200000000ull};
        return out[0].start_ns + out[0].duration_ns < origin + total ? 1 : -1;
    }
    if (o->pattern != SY_PICKING)
        return 0;
    if (o->ranks < 15 || o->windows < 10)
        return -1;
    static const struct {
        const char *fn;
        uint32_t rank;
        int32_t peer;
        double at; /* fraction of the run */
        uint64_t dur, bytes;
    } k[4] = {
        {"MPI_Recv", 5, 4, 0.155, 50000000ull, 4096},
        {"MPI_Bcast", 9, -1, 0.41, 120000000ull, 1048576},
        {"MPI_Wait", 14, -1, 0.715, 20000000ull, 0},
        {"MPI_Barrier", 2, -1, 0.525, 300000000ull, 0},
    };
    for (int i = 0; i < 4; i++) {
        out[i] = (sy_call_t){.fn = mw_fn_id(k[i].fn),
                             .rank = k[i].rank,
                             .peer = k[i].peer,
                             .start_ns = origin + (uint64_t)(k[i].at * (double)total) + 370000,
                             .duration_ns = k[i].dur,
                             .bytes = k[i].bytes};
        if (out[i].start_ns + out[i].duration_ns >= origin + total)
            return -1;
    }
    return 4;
}

/* The sample of `rank` for window `index` (starting at ws). Returns the calls it holds. */
static uint64_t sy_build(const sy_options_t *o, sy_builder_t *b, uint32_t rank, uint64_t ws,
                         const sy_call_t *lc, int n_lc, uint64_t per_cell)
{
    uint64_t sub_ns = o->window_ns / o->subslots, calls = 0;
    int busy[SY_SUBS] = {0};
    memset(b, 0, sizeof *b);
    b->subslots = o->subslots;
    for (int i = 0; i < n_lc; i++) {
        const sy_call_t *c = &lc[i];
        if (c->rank != rank)
            continue;
        uint64_t cs = c->start_ns, ce = c->start_ns + c->duration_ns;
        for (uint32_t s = 0; s < o->subslots; s++) {
            uint64_t ss = ws + s * sub_ns, se = ss + sub_ns;
            uint64_t lo = cs > ss ? cs : ss, hi = ce < se ? ce : se;
            if (hi > lo) {
                sy_occ(b, c->fn, s, hi - lo);
                busy[s] = 1;
            }
        }
        if (ce >= ws && ce < ws + o->window_ns) {
            int32_t start_sub;
            if (cs >= ws) {
                start_sub = (int32_t)((cs - ws) / sub_ns);
            } else { /* sub-slots back, rounded up, at most one window (the library's way) */
                uint64_t back = (ws - cs + sub_ns - 1) / sub_ns;
                start_sub = -(int32_t)(back < o->subslots ? back : o->subslots);
            }
            sy_calls(b, c->fn, 1, c->duration_ns, (uint32_t)((ce - ws) / sub_ns), start_sub,
                     c->bytes);
            Mpiwatch__Call *k = &b->calls[b->n_calls++];
            mpiwatch__call__init(k);
            k->fn = c->fn;
            k->start_ns = c->start_ns;
            k->duration_ns = c->duration_ns;
            k->bytes = c->bytes;
            k->peer = c->peer;
            calls++;
        }
    }
    for (uint32_t s = 0; s < o->subslots; s++) {
        if (busy[s])
            continue;
        switch (o->pattern) {
        case SY_STACK: {
            static const struct {
                const char *fn;
                unsigned pct;
                uint64_t bytes;
            } st[3] = {{"MPI_Waitall", 40, 0}, {"MPI_Allreduce", 25, 8}, {"MPI_Send", 10, 1024}};
            for (int i = 0; i < 3; i++) {
                unsigned fn = mw_fn_id(st[i].fn);
                uint64_t d = sub_ns * st[i].pct / 100;
                sy_calls(b, fn, 1, d, s, (int32_t)s, st[i].bytes);
                sy_occ(b, fn, s, d);
                calls++;
            }
            break;
        }
        case SY_OUTLIER: {
            /* The cluster: a few windows early in the run, every call 1.5 us (one bin). */
            uint64_t k = ws / o->window_ns - SY_REAL0 / o->window_ns;
            if (k < sy_cluster_first(o) || k >= sy_cluster_first(o) + sy_cluster_windows(o))
                break;
            unsigned fn = mw_fn_id("MPI_Test");
            sy_calls(b, fn, per_cell, SY_CLUSTER_NS, s, (int32_t)s, 0);
            sy_occ(b, fn, s, per_cell * SY_CLUSTER_NS);
            calls += per_cell;
            break;
        }
        case SY_PICKING: {
            unsigned fn = mw_fn_id("MPI_Allreduce");
            sy_calls(b, fn, 2, SY_PICK_BG_NS, s, (int32_t)s, 8);
            sy_occ(b, fn, s, 80000);
            calls += 2;
            break;
        }
        case SY_TERRAIN: /* written by synth_terrain.c, never built here */
            break;
        }
    }
    return calls;
}

static mw_reject_t sy_feed(mw_collector_t *c, const uint8_t *buf, size_t n, const mw_clock_t *now)
{
    return mw_collector_frame(c, buf, n, 1, now);
}

static void sy_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void sy_host(const sy_options_t *o, uint32_t rank, char *buf, size_t len)
{
    uint32_t per = (o->ranks + o->hosts - 1) / o->hosts;
    snprintf(buf, len, "synth-host%02u", rank / per);
}

int sy_write_result(const sy_options_t *o, const char *path, FILE *json, sy_result_t *res)
{
    if (o->pattern == SY_TERRAIN)
        return sy_write_terrain(o, path, json, res);
    if (o->ranks == 0 || o->windows == 0 || o->hosts == 0 || o->subslots == 0 ||
        o->subslots > SY_SUBS || o->window_ns % o->subslots || SY_REAL0 % o->window_ns) {
        fprintf(stderr, "mw-synth: bad sizes\n");
        return -1;
    }
    char jobname[128];
    snprintf(jobname, sizeof jobname, "%s", o->job ? o->job : "");
    if (!o->job)
        snprintf(jobname, sizeof jobname, "synth-%s", sy_names[o->pattern]);
    uint64_t w0 = SY_REAL0 / o->window_ns, origin = SY_REAL0;
    sy_call_t lc[SY_MAX_LONG];
    int n_lc = sy_long_calls(o, origin, lc);
    if (n_lc < 0) {
        fprintf(stderr, "mw-synth: the pattern needs more ranks or windows\n");
        return -1;
    }
    uint64_t cells = (uint64_t)o->ranks * sy_cluster_windows(o) * o->subslots;
    uint64_t per_cell = o->pattern == SY_OUTLIER ? (o->cluster_calls + cells - 1) / cells : 0;

    mw__log_level = MW_LOG_ERROR;
    mw_collector_options_t opt;
    mw_collector_options_defaults(&opt);
    opt.quiet = 1;
    mw_collector_t *c = malloc(sizeof *c);
    sy_builder_t *b = malloc(sizeof *b);
    uint64_t *seq = calloc(o->ranks, sizeof *seq);
    if (!c || !b || !seq || mw_collector_init(c, &opt) < 0) {
        fprintf(stderr, "mw-synth: out of memory\n");
        free(c);
        free(b);
        free(seq);
        return -1;
    }
    c->record = mw__record_open(path, &opt, fx_wall_clock());
    int rc = -1;
    if (!c->record)
        goto out; /* logged */
    /* The start frame carries the machine's monotonic clock at open: the chosen clock starts
     * just after it, so that the recording's monotonic span is the run's. */
    mw_clock_t machine;
    mw__clock_now(&machine);
    const uint64_t mono0 = machine.mono_ns + 1000000ull;
    mw_clock_t now = {.mono_ns = mono0, .real_ns = SY_REAL0 - 50000000ull};
    tm_msg_t m;
    uint8_t *buf;
    size_t n;
    for (uint32_t r = 0; r < o->ranks; r++) {
        tm_hello(&m, jobname, r, o->ranks, now.real_ns);
        sy_host(o, r, m.host, sizeof m.host);
        m.hello.subslots = o->subslots;
        m.hello.window_ns = o->window_ns;
        m.hello.program = "mw-synth";
        n = tm_pack(&m, &buf);
        mw_reject_t why = sy_feed(c, buf, n, &now);
        free(buf);
        seq[r] = 1;
        if (why != MW_ACCEPTED) {
            fprintf(stderr, "mw-synth: hello of rank %u rejected: %s\n", r, mw__reject_name(why));
            goto out;
        }
    }
    uint64_t total_calls = 0;
    for (uint32_t k = 0; k < o->windows; k++) {
        uint64_t ws = (w0 + k) * o->window_ns;
        uint64_t t = ws + o->window_ns + SY_SEND_DELAY_NS;
        now.mono_ns = mono0 + (t - SY_REAL0) + 50000000ull;
        now.real_ns = t;
        for (uint32_t r = 0; r < o->ranks; r++) {
            total_calls += sy_build(o, b, r, ws, lc, n_lc, per_cell);
            n = sy_pack(b, jobname, r, seq[r]++, w0 + k, now.real_ns, &buf);
            mw_reject_t why = sy_feed(c, buf, n, &now);
            free(buf);
            if (why != MW_ACCEPTED) {
                fprintf(stderr, "mw-synth: sample of rank %u, window %u rejected: %s\n", r, k,
                        mw__reject_name(why));
                goto out;
            }
        }
        mw_collector_tick(c, &now);
    }
    now.mono_ns += 5000000ull;
    now.real_ns += 5000000ull;
    /* The job ends with the last bye, and the collector prints its end-of-run report on
     * stderr then: not wanted from a test tool, whose stderr is for its own errors. */
    fflush(stderr);
    int saved = dup(2), devnull = open("/dev/null", O_WRONLY);
    if (saved >= 0 && devnull >= 0)
        dup2(devnull, 2);
    for (uint32_t r = 0; r < o->ranks; r++) {
        tm_bye(&m, jobname, r);
        m.env.seq = seq[r]++;
        m.bye.windows_sent = o->windows;
        m.bye.calls_total = 0;
        n = tm_pack(&m, &buf);
        sy_feed(c, buf, n, &now);
        free(buf);
    }
    mw_collector_tick(c, &now);
    fflush(stderr);
    if (saved >= 0 && devnull >= 0)
        dup2(saved, 2);
    if (saved >= 0)
        close(saved);
    if (devnull >= 0)
        close(devnull);
    if (c->job.windows != o->windows || c->job.partial_windows || c->job.ended != MW_END_COMPLETE) {
        fprintf(stderr,
                "mw-synth: the collector closed %" PRIu64 " windows (%" PRIu64
                " partial), job %s; expected %u complete\n",
                c->job.windows, c->job.partial_windows, mw__job_state_name(&c->job), o->windows);
        goto out;
    }
    mw__record_close(c->record);
    c->record = NULL;
    if (res) {
        memset(res, 0, sizeof *res);
        res->first_window = w0;
        res->last_window = w0 + o->windows - 1;
        res->window_ns = o->window_ns;
        memcpy(res->calls, lc, (size_t)n_lc * sizeof *lc);
        res->n_calls = (unsigned)n_lc;
        res->total_calls = total_calls;
    }
    if (json) {
        char host[64];
        fprintf(json, "{\"file\": ");
        sy_json_str(json, path);
        fprintf(json, ", \"pattern\": \"%s\", \"job\": ", sy_names[o->pattern]);
        sy_json_str(json, jobname);
        fprintf(json,
                ", \"ranks\": %u, \"windows\": %u, \"window_ns\": %" PRIu64
                ", \"subslots\": %u, \"first_window\": %" PRIu64 ", \"last_window\": %" PRIu64
                ", \"origin_ns\": %" PRIu64 ", \"duration_s\": %.9g, \"total_calls\": %" PRIu64,
                o->ranks, o->windows, o->window_ns, o->subslots, w0, w0 + o->windows - 1, origin,
                (double)(o->windows * o->window_ns) / 1e9, total_calls);
        fprintf(json, ", \"hosts\": [");
        for (uint32_t h = 0; h < o->hosts; h++) {
            snprintf(host, sizeof host, "synth-host%02u", h);
            fprintf(json, "%s\"%s\"", h ? ", " : "", host);
        }
        fprintf(json, "], \"rank_host\": [");
        for (uint32_t r = 0; r < o->ranks; r++) {
            sy_host(o, r, host, sizeof host);
            fprintf(json, "%s\"%s\"", r ? ", " : "", host);
        }
        fprintf(json, "]");
        if (o->pattern == SY_STACK)
            fprintf(json, ", \"functions\": [{\"name\": \"MPI_Waitall\", \"fraction\": 0.40}, "
                          "{\"name\": \"MPI_Allreduce\", \"fraction\": 0.25}, "
                          "{\"name\": \"MPI_Send\", \"fraction\": 0.10}]");
        if (o->pattern == SY_OUTLIER)
            fprintf(json,
                    ", \"cluster\": {\"fn\": \"MPI_Test\", \"calls\": %" PRIu64
                    ", \"duration_ns\": %u, \"start_s\": %.9g, \"end_s\": %.9g}",
                    total_calls - (uint64_t)n_lc, SY_CLUSTER_NS,
                    (double)sy_cluster_first(o) * (double)o->window_ns / 1e9,
                    (double)(sy_cluster_first(o) + sy_cluster_windows(o)) * (double)o->window_ns /
                        1e9);
        if (o->pattern == SY_PICKING)
            fprintf(json, ", \"background\": {\"fn\": \"MPI_Allreduce\", \"duration_ns\": %u}",
                    SY_PICK_BG_NS);
        fprintf(json, ", \"long_calls\": [");
        for (int i = 0; i < n_lc; i++) {
            sy_host(o, lc[i].rank, host, sizeof host);
            fprintf(json,
                    "%s{\"fn\": \"%s\", \"fn_id\": %u, \"rank\": %u, \"host\": \"%s\", "
                    "\"peer\": %d, \"start_ns\": %" PRIu64 ", \"start_s\": %.9f, "
                    "\"duration_ns\": %" PRIu64 ", \"bytes\": %" PRIu64 "}",
                    i ? ", " : "", mw_fn_name(lc[i].fn), lc[i].fn, lc[i].rank, host, lc[i].peer,
                    lc[i].start_ns, (double)(lc[i].start_ns - origin) / 1e9, lc[i].duration_ns,
                    lc[i].bytes);
        }
        fprintf(json, "]");
        if (o->pattern == SY_OUTLIER) {
            sy_host(o, lc[0].rank, host, sizeof host);
            fprintf(json,
                    ", \"outlier\": {\"fn\": \"%s\", \"rank\": %u, \"host\": \"%s\", "
                    "\"start_ns\": %" PRIu64 ", \"start_s\": %.9f, \"duration_ns\": %" PRIu64 "}",
                    mw_fn_name(lc[0].fn), lc[0].rank, host, lc[0].start_ns,
                    (double)(lc[0].start_ns - origin) / 1e9, lc[0].duration_ns);
        }
        fprintf(json, "}\n");
        fflush(json);
    }
    rc = 0;
out:
    if (c->record)
        mw__record_close(c->record);
    c->record = NULL;
    mw_collector_free(c);
    mw_collector_options_free(&opt);
    free(c);
    free(b);
    free(seq);
    return rc;
}

int sy_write(const sy_options_t *o, const char *path, FILE *json)
{
    return sy_write_result(o, path, json, NULL);
}
