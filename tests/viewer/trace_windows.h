/* trace_windows.h: traced windows built as a collector merges them, for the viewer's unit
 * tests (test_trace.c, test_logical.c): summary cells counting every rank's calls, each rank's
 * records encoded with mw_trace_encode, packed and unpacked so that the model owns heap
 * messages as behind the data source. The grid is 100 ms windows of 10 sub-slots with 40 log2
 * duration bins; the time axis starts at the first window added (K0).
 *
 * Included by one test file each, after cmocka and model_internal.h, with TW_MAX_CALLS (calls
 * one window holds) defined or left at its default.
 */
#ifndef MW_TEST_TRACE_WINDOWS_H
#define MW_TEST_TRACE_WINDOWS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "model_internal.h"

#define WNS 100000000ull
#define SUBS 10u
#define BINS 40u
#define K0 100u /* the first window: the time axis' 0 */
#define MAXR 2048
#define MAXC 16
#ifndef TW_MAX_CALLS
#define TW_MAX_CALLS (MAXR * 2)
#endif

typedef struct {
    uint32_t rank;
    unsigned fn;
    uint8_t kind, flags;
    int64_t start;
    uint64_t dur;
    int32_t peer, tag;
    uint64_t seq;
} call_t;

/* A window: calls of every rank; ranks with exact[r] travel as records, the others as
 * summary only. All calls are counted in the summary's cells. */
typedef struct {
    uint64_t index;
    uint32_t ranks;
    call_t c[TW_MAX_CALLS];
    size_t n;
    uint8_t exact[MAXR];
    int no_traces; /* a window of a rank that does not trace */
} win_t;

static void add(win_t *w, uint32_t rank, unsigned fn, uint8_t kind, int64_t start, uint64_t dur,
                int32_t peer, int32_t tag, uint8_t flags)
{
    assert_true(w->n < TW_MAX_CALLS);
    call_t *c = &w->c[w->n++];
    memset(c, 0, sizeof *c);
    c->rank = rank;
    c->fn = fn;
    c->kind = kind;
    c->start = start;
    c->dur = dur;
    c->peer = peer;
    c->tag = tag;
    c->flags = flags;
}

static unsigned bin_of(uint64_t ns)
{
    unsigned b = ns ? 63u - (unsigned)__builtin_clzll(ns) : 0u;
    return b < BINS ? b : BINS - 1;
}

static Mpiwatch__RankTrace *rank_trace(const win_t *w, uint32_t r, int exact)
{
    Mpiwatch__RankTrace *rt = calloc(1, sizeof *rt);
    Mpiwatch__Trace *t = calloc(1, sizeof *t);
    assert_non_null(rt);
    assert_non_null(t);
    mpiwatch__rank_trace__init(rt);
    mpiwatch__trace__init(t);
    rt->rank = r;
    rt->trace = t;
    t->window = w->index;
    t->window_start_ns = w->index * WNS;
    if (!exact) {
        t->state = MW_TRACE_SUMMARY_ONLY;
        t->reason = MW_TRACE_WHY_BUDGET;
        return rt;
    }
    mw_trace_rec_t recs[MAXC];
    size_t n = 0;
    for (size_t i = 0; i < w->n; i++) {
        const call_t *c = &w->c[i];
        if (c->rank != r)
            continue;
        assert_true(n < MAXC);
        mw_trace_rec_t *x = &recs[n++];
        memset(x, 0, sizeof *x);
        x->start_ns = c->start;
        x->dur_ns = c->dur;
        x->fn = (uint16_t)c->fn;
        x->kind = c->kind;
        x->flags = c->flags;
        x->peer = c->peer;
        x->tag = c->tag;
        x->seq = c->seq;
        x->comm = c->kind == MW_TK_CALL ? 0 : MW_COMM_ID_WORLD;
    }
    t->state = MW_TRACE_EXACT;
    t->count = (uint32_t)n;
    size_t len = 0;
    assert_int_equal(mw_trace_encode(recs, n, 0, 0, &t->records.data, &t->records.len, &t->encoding,
                                     &t->raw_bytes),
                     0);
    (void)len;
    return rt;
}

static void free_rank_trace(Mpiwatch__RankTrace *rt)
{
    free(rt->trace->records.data);
    free(rt->trace);
    free(rt);
}

/* The window as the model gets it (heap, unpacked). */
static Mpiwatch__Window *build(const win_t *w)
{
    Mpiwatch__Window m = MPIWATCH__WINDOW__INIT;
    m.index = w->index;
    m.window_ns = WNS;
    m.subslots = SUBS;
    m.duration_bins = BINS;
    m.ranks_reporting = w->ranks;
    size_t cap = 2 * w->n + 1;
    uint32_t *dfn = calloc(cap, 4), *dbin = calloc(cap, 4), *dend = calloc(cap, 4);
    int32_t *dsub = calloc(cap, 4);
    uint64_t *dcnt = calloc(cap, 8);
    uint32_t *perm = calloc(w->ranks, 4);
    assert_true(dfn && dbin && dend && dsub && dcnt && perm);
    size_t nd = 0;
    Mpiwatch__FunctionStat fs[8], *fsp[8];
    size_t nf = 0;
    for (size_t i = 0; i < w->n; i++) {
        const call_t *c = &w->c[i];
        if (c->flags & MW_TF_OPEN)
            continue; /* open calls are not counted as calls */
        unsigned b = bin_of(c->dur);
        uint64_t ss = WNS / SUBS, st = (uint64_t)c->start, en = st + c->dur;
        for (unsigned e = 0; e < 2; e++) {
            uint64_t at = e ? en : st;
            int sub = (int)(at / ss < SUBS ? at / ss : SUBS - 1);
            size_t j = 0;
            while (j < nd && !(dfn[j] == c->fn && dsub[j] == sub && dbin[j] == b && dend[j] == e))
                j++;
            if (j == nd) {
                dfn[nd] = c->fn;
                dsub[nd] = sub;
                dbin[nd] = b;
                dend[nd] = e;
                nd++;
            }
            dcnt[j]++;
        }
        size_t k = 0;
        while (k < nf && fs[k].fn != c->fn)
            k++;
        if (k == nf) {
            assert_true(nf < 8);
            mpiwatch__function_stat__init(&fs[nf]);
            fs[nf].fn = c->fn;
            fsp[nf] = &fs[nf];
            nf++;
        }
        fs[k].count++;
        fs[k].total_ns += c->dur;
        perm[c->rank] += (uint32_t)(c->dur * 1000 / WNS);
    }
    m.n_density_fn = m.n_density_sub = m.n_density_bin = m.n_density_end = m.n_density_count = nd;
    m.density_fn = dfn;
    m.density_sub = dsub;
    m.density_bin = dbin;
    m.density_end = dend;
    m.density_count = dcnt;
    m.n_functions = nf;
    m.functions = fsp;
    m.n_rank_mpi_permille = w->ranks;
    m.rank_mpi_permille = perm;
    Mpiwatch__RankTrace **rts = calloc(w->ranks, sizeof *rts);
    assert_non_null(rts);
    if (!w->no_traces) {
        for (uint32_t r = 0; r < w->ranks; r++)
            rts[r] = rank_trace(w, r, w->exact[r]);
        m.n_traces = w->ranks;
        m.traces = rts;
    }
    size_t len = mpiwatch__window__get_packed_size(&m);
    uint8_t *buf = malloc(len ? len : 1);
    assert_non_null(buf);
    mpiwatch__window__pack(&m, buf);
    Mpiwatch__Window *out = mpiwatch__window__unpack(NULL, len, buf);
    assert_non_null(out);
    free(buf);
    for (size_t r = 0; r < m.n_traces; r++)
        free_rank_trace(rts[r]);
    free(rts);
    free(dfn);
    free(dbin);
    free(dend);
    free(dsub);
    free(dcnt);
    free(perm);
    return out;
}

static Mpiwatch__JobInfo *job(uint32_t size)
{
    Mpiwatch__JobInfo j = MPIWATCH__JOB_INFO__INIT;
    j.job = "trace";
    j.size = size;
    j.window_ns = WNS;
    j.subslots = SUBS;
    j.duration_bins = BINS;
    size_t len = mpiwatch__job_info__get_packed_size(&j);
    uint8_t *buf = malloc(len);
    assert_non_null(buf);
    mpiwatch__job_info__pack(&j, buf);
    Mpiwatch__JobInfo *out = mpiwatch__job_info__unpack(NULL, len, buf);
    free(buf);
    return out;
}

static mw_model_t *model(uint32_t ranks)
{
    mw_model_t *m = mw_model_new(0);
    assert_non_null(m);
    mw_model_set_job(m, job(ranks));
    return m;
}

#endif
