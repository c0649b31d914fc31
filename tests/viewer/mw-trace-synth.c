/* mw-trace-synth: writes a recording of traced windows with exactly known calls, for the
 * viewer's trace tests (docs/trace.md, "Viewing traced windows").
 *
 *   mw-trace-synth [--ranks N] FILE.mpiw
 *
 * DESIGN: the windows are crafted here as a collector merges them (summary: function figures,
 * occupancy, density cells by start and by end, per-rank MPI share; traces: each rank's records
 * encoded with mw_trace_encode) and written with the collector's own recording writer, so the
 * file is read by the viewer's replay source like any recording. 4 ranks, 100 ms windows, 10
 * sub-slots (--ranks N for more ranks). Windows 0 and 4 are summaries only (the ranks left
 * them out); 1, 2 and 5 are traced on every rank, 3 on the even ranks only (partly exact);
 * window 5 is the newest and holds a call still in progress (MW_TF_OPEN). Rank 0's trace of
 * window 4 comes after the window, as a recorded reach-back trace (an Envelope with a Trace),
 * which makes window 4 partly exact in replay.
 * Every rank calls MPI_Wait (100 us) every 10 ms; window 2 also holds the known calls printed on
 * stdout as JSON (function, rank, global start and duration, peer, tag, bytes): an MPI_Barrier
 * of 30 ms on rank 2, an MPI_Allreduce of 5 ms on rank 1, and one message, rank 0's MPI_Send
 * (1 ms, tag 7, 4096 bytes) received by rank 3's MPI_Recv (8 ms); the open call is an
 * MPI_Bcast of rank 1 starting 40 ms into window 5.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "mw_proto.h"
#include "mw_trace.h"
#include "options.h"
#include "record_file.h"

#define RMAX 65536
#define NW 6
#define WNS 100000000ull
#define SUBS 10u
#define BINS 40u
#define ORIGIN 1700000000000000000ull
#define MAXREC 64

static uint32_t R = 4; /* --ranks */

typedef struct {
    mw_trace_rec_t (*rec)[MAXREC]; /* [R] */
    size_t *n;
} wtrace_t;

static unsigned bin_of(uint64_t ns)
{
    unsigned b = ns ? 63u - (unsigned)__builtin_clzll(ns) : 0u;
    return b < BINS ? b : BINS - 1;
}

static void add(wtrace_t *t, uint32_t rank, unsigned fn, uint8_t kind, int64_t start, uint64_t dur,
                int32_t peer, int32_t tag, uint64_t bytes, uint64_t seq, uint8_t flags)
{
    mw_trace_rec_t *r = &t->rec[rank][t->n[rank]++];
    memset(r, 0, sizeof *r);
    r->start_ns = start;
    r->dur_ns = dur;
    r->fn = (uint16_t)fn;
    r->kind = kind;
    r->peer = peer;
    r->tag = tag;
    r->bytes = bytes;
    r->seq = seq;
    r->flags = flags;
    r->comm = kind == MW_TK_CALL ? 0 : MW_COMM_ID_WORLD;
}

/* The window's records, in end order per rank (as the shim writes them). */
static int end_cmp(const void *pa, const void *pb)
{
    const mw_trace_rec_t *a = pa, *b = pb;
    int64_t ea = a->start_ns + (int64_t)a->dur_ns, eb = b->start_ns + (int64_t)b->dur_ns;
    return ea < eb ? -1 : ea > eb;
}

static void build(uint64_t k, wtrace_t *t)
{
    memset(t->n, 0, R * sizeof *t->n);
    for (uint32_t r = 0; r < R; r++)
        for (int i = 0; i < 10; i++)
            add(t, r, MW_ID_Wait, MW_TK_CALL, i * 10000000ll + 2000000 + (r % 64) * 100000, 100000,
                -1, 0, 0, 0, 0);
    if (k == 2) {
        add(t, 2, MW_ID_Barrier, MW_TK_COLL, 50000000, 30000000, -1, 0, 0, 0, 0);
        add(t, 1, MW_ID_Allreduce, MW_TK_COLL, 20000000, 5000000, -1, 0, 8, 0, 0);
        add(t, 0, MW_ID_Send, MW_TK_SEND, 10000000, 1000000, 3, 7, 4096, 0, 0);
        add(t, 3, MW_ID_Recv, MW_TK_RECV, 5000000, 8000000, 0, 7, 4096, 0, 0);
    }
    if (k == 5)
        add(t, 1, MW_ID_Bcast, MW_TK_COLL, 40000000, 60000000, 0, 0, 64, 0, MW_TF_OPEN);
    for (uint32_t r = 0; r < R; r++)
        qsort(t->rec[r], t->n[r], sizeof t->rec[r][0], end_cmp);
}

/* Accumulators of the window's summary. */
typedef struct {
    uint64_t count[MW_FN_COUNT], total[MW_FN_COUNT];
    uint64_t occ[MW_FN_COUNT][SUBS];
    uint64_t dens[2][MW_FN_COUNT][SUBS][BINS];
    uint64_t *rank_ns; /* [R] */
} summ_t;

static void summarize(const wtrace_t *t, summ_t *s)
{
    uint64_t *rn = s->rank_ns;
    memset(s, 0, sizeof *s);
    memset(rn, 0, R * sizeof *rn);
    s->rank_ns = rn;
    const uint64_t ss = WNS / SUBS;
    for (uint32_t r = 0; r < R; r++) {
        for (size_t i = 0; i < t->n[r]; i++) {
            const mw_trace_rec_t *c = &t->rec[r][i];
            if (!mw_trace_is_call(c))
                continue;
            uint64_t st = (uint64_t)c->start_ns, en = st + c->dur_ns;
            s->count[c->fn]++;
            s->total[c->fn] += c->dur_ns;
            s->rank_ns[r] += c->dur_ns;
            unsigned b = bin_of(c->dur_ns);
            s->dens[0][c->fn][st / ss][b]++;
            s->dens[1][c->fn][(en / ss) < SUBS ? en / ss : SUBS - 1][b]++;
            for (unsigned u = 0; u < SUBS; u++) {
                uint64_t a = u * ss, z = a + ss;
                uint64_t lo = st > a ? st : a, hi = en < z ? en : z;
                if (hi > lo)
                    s->occ[c->fn][u] += hi - lo;
            }
        }
    }
}

/* traced: 0 none, 1 every rank, 2 the even ranks only (a partly exact window). */
static int write_window(mw_record_t *rec, const mw_clock_t *now, uint64_t k, int traced,
                        const wtrace_t *tp, summ_t *s)
{
    wtrace_t t = *tp;
    build(k, &t);
    summarize(&t, s);
    Mpiwatch__Window w = MPIWATCH__WINDOW__INIT;
    w.index = ORIGIN / WNS + k; /* window k of the run: the global grid's index */
    w.window_ns = WNS;
    w.subslots = SUBS;
    w.duration_bins = BINS;
    w.ranks_reporting = R;
    w.start_ns = ORIGIN + k * WNS;
    w.closed_real_ns = w.start_ns + WNS + 2000000;
    Mpiwatch__FunctionStat fs[MW_FN_COUNT], *fsp[MW_FN_COUNT];
    uint32_t occ_fn[MW_FN_COUNT * SUBS], occ_sub[MW_FN_COUNT * SUBS];
    uint64_t occ_ns[MW_FN_COUNT * SUBS];
    static uint32_t d_fn[2 * 8 * SUBS * BINS], d_bin[2 * 8 * SUBS * BINS],
        d_end[2 * 8 * SUBS * BINS];
    static int32_t d_sub[2 * 8 * SUBS * BINS];
    static uint64_t d_cnt[2 * 8 * SUBS * BINS];
    size_t nf = 0, no = 0, nd = 0;
    for (unsigned fn = 1; fn < MW_FN_COUNT; fn++) {
        if (!s->count[fn])
            continue;
        mpiwatch__function_stat__init(&fs[nf]);
        fs[nf].fn = fn;
        fs[nf].count = s->count[fn];
        fs[nf].total_ns = s->total[fn];
        fsp[nf] = &fs[nf];
        nf++;
        w.mpi_time_ns += s->total[fn];
        for (unsigned u = 0; u < SUBS; u++) {
            if (s->occ[fn][u]) {
                occ_fn[no] = fn;
                occ_sub[no] = u;
                occ_ns[no] = s->occ[fn][u];
                w.occ_total_ns += s->occ[fn][u];
                no++;
            }
            for (unsigned e = 0; e < 2; e++)
                for (unsigned b = 0; b < BINS; b++)
                    if (s->dens[e][fn][u][b] && nd < 2 * 8 * SUBS * BINS) {
                        d_fn[nd] = fn;
                        d_sub[nd] = (int32_t)u;
                        d_bin[nd] = b;
                        d_end[nd] = e;
                        d_cnt[nd] = s->dens[e][fn][u][b];
                        nd++;
                    }
        }
    }
    w.n_functions = nf;
    w.functions = fsp;
    w.n_occ_fn = w.n_occ_sub = w.n_occ_ns = no;
    w.occ_fn = occ_fn;
    w.occ_sub = occ_sub;
    w.occ_ns = occ_ns;
    w.n_density_fn = w.n_density_sub = w.n_density_bin = w.n_density_end = w.n_density_count = nd;
    w.density_fn = d_fn;
    w.density_sub = d_sub;
    w.density_bin = d_bin;
    w.density_end = d_end;
    w.density_count = d_cnt;
    uint32_t *permille = calloc(R, sizeof *permille);
    Mpiwatch__RankTrace *rts = calloc(R, sizeof *rts), **rtp = calloc(R, sizeof *rtp);
    Mpiwatch__Trace *trs = calloc(R, sizeof *trs);
    uint8_t **blocks = calloc(R, sizeof *blocks);
    if (!permille || !rts || !rtp || !trs || !blocks)
        return -1;
    for (uint32_t r = 0; r < R; r++)
        permille[r] = (uint32_t)(s->rank_ns[r] * 1000 / WNS);
    w.n_rank_mpi_permille = R;
    w.rank_mpi_permille = permille;

    for (uint32_t r = 0; r < R; r++) {
        mpiwatch__rank_trace__init(&rts[r]);
        mpiwatch__trace__init(&trs[r]);
        rts[r].rank = r;
        rts[r].trace = &trs[r];
        rtp[r] = &rts[r];
        trs[r].window = w.index;
        trs[r].window_start_ns = w.start_ns;
        trs[r].threads = 1;
        if (!traced || (traced == 2 && r % 2 == 1)) {
            trs[r].state = MW_TRACE_SUMMARY_ONLY;
            trs[r].reason = MW_TRACE_WHY_BUDGET;
            trs[r].left_out = t.n[r];
            w.trace_left_out += t.n[r];
            continue;
        }
        size_t len = 0;
        uint32_t enc = 0;
        uint64_t raw = 0;
        if (mw_trace_encode(t.rec[r], t.n[r], 1, 8, &blocks[r], &len, &enc, &raw) < 0) {
            fprintf(stderr, "mw-trace-synth: mw_trace_encode failed\n");
            return -1;
        }
        trs[r].state = MW_TRACE_EXACT;
        trs[r].count = (uint32_t)t.n[r];
        trs[r].encoding = enc;
        trs[r].raw_bytes = raw;
        trs[r].records.data = blocks[r];
        trs[r].records.len = len;
        w.traced_ranks++;
    }
    w.n_traces = R;
    w.traces = rtp;
    size_t n = mpiwatch__window__get_packed_size(&w);
    uint8_t *buf = malloc(n);
    if (!buf)
        return -1;
    mpiwatch__window__pack(&w, buf);
    mw__record_window(rec, now, w.index, buf, n);
    free(buf);
    for (uint32_t r = 0; r < R; r++)
        free(blocks[r]);
    free(blocks);
    free(trs);
    free(rtp);
    free(rts);
    free(permille);
    return 0;
}

static int write_late(mw_record_t *rec, const mw_clock_t *now, uint64_t k, uint32_t rank,
                      const wtrace_t *tp)
{
    wtrace_t t = *tp;
    build(k, &t);
    Mpiwatch__Trace tr = MPIWATCH__TRACE__INIT;
    tr.window = ORIGIN / WNS + k;
    tr.window_start_ns = ORIGIN + k * WNS;
    tr.state = MW_TRACE_EXACT;
    tr.count = (uint32_t)t.n[rank];
    tr.threads = 1;
    tr.capture = 1;
    size_t len = 0;
    if (mw_trace_encode(t.rec[rank], t.n[rank], 1, 8, &tr.records.data, &len, &tr.encoding,
                        &tr.raw_bytes) < 0)
        return -1;
    tr.records.len = len;
    Mpiwatch__Envelope env = MPIWATCH__ENVELOPE__INIT;
    env.version = MW_PROTO_VERSION;
    env.job = "trace-synth";
    env.rank = rank;
    env.seq = 1000;
    env.body_case = MPIWATCH__ENVELOPE__BODY_TRACE;
    env.trace = &tr;
    size_t n = mpiwatch__envelope__get_packed_size(&env);
    uint8_t *buf = malloc(n);
    if (!buf)
        return -1;
    mpiwatch__envelope__pack(&env, buf);
    mw__record_frame(rec, now, buf, n, 1);
    free(buf);
    free(tr.records.data);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--ranks")) {
        char *end = NULL;
        unsigned long v = strtoul(argv[2], &end, 10);
        if (end == argv[2] || *end || v < 4 || v > RMAX) {
            fprintf(stderr, "mw-trace-synth: --ranks 4..%u\n", RMAX);
            return 2;
        }
        R = (uint32_t)v;
        argv += 2;
        argc -= 2;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: mw-trace-synth [--ranks N] FILE.mpiw\n");
        return 2;
    }
    wtrace_t t = {calloc(R, sizeof *t.rec), calloc(R, sizeof *t.n)};
    summ_t *s = calloc(1, sizeof *s);
    if (!t.rec || !t.n || !s || !(s->rank_ns = calloc(R, sizeof *s->rank_ns)))
        return 1;
    mw__log_level = MW_LOG_ERROR;
    mw_collector_options_t opt;
    mw_collector_options_defaults(&opt);
    mw_clock_t now;
    mw__clock_now(&now);
    mw_record_t *rec = mw__record_open(argv[1], &opt, &now);
    if (!rec)
        return 1;
    Mpiwatch__JobInfo job = MPIWATCH__JOB_INFO__INIT;
    job.job = "trace-synth";
    job.program = "trace-synth";
    job.size = R;
    job.window_ns = WNS;
    job.subslots = SUBS;
    job.duration_bins = BINS;
    job.function_table_hash = mw_fn_table_hash();
    job.function_count = MW_FN_COUNT;
    job.state = "complete";
    size_t n = mpiwatch__job_info__get_packed_size(&job);
    uint8_t *buf = malloc(n);
    if (!buf)
        return 1;
    mpiwatch__job_info__pack(&job, buf);
    mw__record_job(rec, &now, buf, n);
    free(buf);
    int rc = 0;
    for (uint64_t k = 0; k < NW && rc == 0; k++) {
        now.mono_ns += WNS;
        now.real_ns += WNS;
        rc = write_window(rec, &now, k, k == 0 || k == 4 ? 0 : k == 3 ? 2 : 1, &t, s);
    }
    /* A reach-back trace of window 4 by rank 0 (a capture asked for after the window closed),
     * recorded as the collector records what it receives: the Envelope as it came. */
    if (rc == 0)
        rc = write_late(rec, &now, 4, 0, &t);
    mw__record_close(rec);
    /* The known calls, global ns. */
    uint64_t w2 = ORIGIN + 2 * WNS;
    printf("{\"origin_ns\": %llu, \"window_ns\": %llu, \"windows\": %d, \"ranks\": %d,\n"
           " \"calls\": [\n"
           "  {\"fn\": \"MPI_Barrier\", \"rank\": 2, \"start_ns\": %llu, \"dur_ns\": 30000000},\n"
           "  {\"fn\": \"MPI_Allreduce\", \"rank\": 1, \"start_ns\": %llu, \"dur_ns\": 5000000},\n"
           "  {\"fn\": \"MPI_Send\", \"rank\": 0, \"start_ns\": %llu, \"dur_ns\": 1000000, "
           "\"peer\": 3, \"tag\": 7, \"bytes\": 4096},\n"
           "  {\"fn\": \"MPI_Recv\", \"rank\": 3, \"start_ns\": %llu, \"dur_ns\": 8000000, "
           "\"peer\": 0, \"tag\": 7, \"bytes\": 4096}],\n"
           " \"message\": {\"src\": 0, \"dst\": 3, \"send_ns\": %llu, \"recv_end_ns\": %llu},\n"
           " \"open\": {\"fn\": \"MPI_Bcast\", \"rank\": 1, \"start_ns\": %llu, \"dur_ns\": "
           "60000000},\n"
           " \"summary_windows\": [0], \"partial_windows\": [3, 4], \"late\": "
           "{\"window\": 4, \"rank\": 0}}\n",
           (unsigned long long)ORIGIN, (unsigned long long)WNS, NW, (int)R,
           (unsigned long long)(w2 + 50000000), (unsigned long long)(w2 + 20000000),
           (unsigned long long)(w2 + 10000000), (unsigned long long)(w2 + 5000000),
           (unsigned long long)(w2 + 10000000), (unsigned long long)(w2 + 13000000),
           (unsigned long long)(ORIGIN + 5 * WNS + 40000000));
    return rc ? 1 : 0;
}
