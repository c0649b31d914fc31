/* test_partial.c: the partial window of the aggregator tree is exact (collector/partial.c,
 * docs/partial.md).
 *
 * The same samples (several functions, histograms, occupancy, density, pairs and per-function
 * pairs, the longest calls with ties, regions, call sites, step marks, an exact and a
 * summary-only trace, a communicator definition, losses) go (a) to one collector and (b) split
 * by rank over three aggregator collectors, whose Partial envelopes (and AggStates) go to a
 * root collector through mw_collector_frame. Every closed window of the root, encoded with
 * mw__window_pack, must equal the single collector's byte for byte, and so must every closed
 * step. The single collector's windows are first checked to use every field of Window (so that
 * a field the partial path forgot could not pass unnoticed). Samples arrive in rank order and
 * partials in aggregator order (A holds the lowest ranks): the order of the lists that keep
 * arrival order (functions first seen, density cells, pairs, communicators) is then the same
 * on both paths (docs/partial.md "Order").
 *
 * Then one test per refusal: each crafted partial is refused with its reason counted and the
 * root left exactly as it was.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <cmocka.h>

#include "dormant.h"
#include "fixture.h"
#include "mw_trace.h"
#include "partial.h"
#include "pbequal.h"
#include "steps.h"

#define JOB "partial-job"
#define N 6    /* ranks */
#define NW 4   /* windows */
#define NAGG 3 /* aggregators, N / NAGG ranks each */

typedef struct {
    uint8_t *b;
    size_t n;
} blob_t;

/* A collector with what it closed: windows (mw__window_pack) or, for an aggregator, partial
 * envelopes (mw__partial_envelope_pack). */
typedef struct {
    fx_t *f;
    mw_pb_encoder_t enc;
    blob_t out[32];
    unsigned n_out;
    int agg;
    uint32_t id;
    uint64_t seq;
} node_t;

static void keep(node_t *n, const uint8_t *b, size_t len)
{
    assert_true(len > 0);
    assert_true(n->n_out < 32);
    n->out[n->n_out].b = malloc(len);
    memcpy(n->out[n->n_out].b, b, len);
    n->out[n->n_out++].n = len;
}

static void node_on_window(const mw_window_t *w, void *user)
{
    node_t *n = user;
    size_t len = n->agg ? mw__partial_envelope_pack(n->f->c, &n->enc, w, n->id, n->seq++)
                        : mw__window_pack(&n->enc, w, 0);
    keep(n, n->enc.out, len);
}

static int detail_off; /* --rank-detail off on every collector of the next tree */

static void node_init(node_t *n, int agg, uint32_t id)
{
    memset(n, 0, sizeof *n);
    n->f = fx_new();
    if (detail_off)
        n->f->opt.rank_detail = strdup("off");
    n->agg = agg;
    n->id = id;
    if (agg)
        n->f->opt.upstream = strdup("tcp://127.0.0.1:1"); /* aggregator mode, no socket here */
    n->f->c->report_out = NULL;
    n->f->c->on_window = node_on_window;
    n->f->c->on_window_user = n;
}

static void node_free(node_t *n)
{
    for (unsigned i = 0; i < n->n_out; i++)
        free(n->out[i].b);
    mw__pb_encoder_free(&n->enc);
    fx_free(n->f);
}

static mw_reject_t feed_blob(fx_t *f, const uint8_t *b, size_t len)
{
    return mw_collector_frame(f->c, b, len, 1, &f->now);
}

/* ---- the samples ---------------------------------------------------------------------------- */

typedef struct {
    Mpiwatch__StepMark mark;
    Mpiwatch__StepMark *markp[1];
    Mpiwatch__FunctionStat fs;
    Mpiwatch__FunctionStat *fsp[1];
    Mpiwatch__Trace trace;
    Mpiwatch__CommDef comm;
    Mpiwatch__CommDef *commp[1];
    uint8_t *records;
    Mpiwatch__Dormant dormant;
    uint32_t d_fn[1];
    uint64_t d_calls[1], d_bytes[1];
} extra_t;

/* The trace of rank 1 in window 0: its 11 MPI_Allreduce calls, as its sample says. */
static void exact_trace(extra_t *x, uint64_t w, unsigned calls)
{
    mw_trace_rec_t r[32];
    for (unsigned i = 0; i < calls; i++)
        r[i] = (mw_trace_rec_t){.start_ns = 1000 * i,
                                .dur_ns = 300,
                                .comm = MW_COMM_ID_WORLD,
                                .seq = i,
                                .bytes = 8,
                                .peer = -1,
                                .fn = (uint16_t)fx_fn(0),
                                .kind = MW_TK_COLL};
    size_t len;
    uint32_t enc;
    uint64_t raw;
    assert_int_equal(mw_trace_encode(r, calls, 0, 0, &x->records, &len, &enc, &raw), 0);
    mpiwatch__trace__init(&x->trace);
    x->trace.window = w;
    x->trace.state = MW_TRACE_EXACT;
    x->trace.count = calls;
    x->trace.encoding = enc;
    x->trace.raw_bytes = raw;
    x->trace.records.data = x->records;
    x->trace.records.len = len;
    x->trace.threads = 1;
}

/* Rank r's sample of window k (k = 0..NW-1 after FX_W0). */
static void build_sample(tm_msg_t *m, extra_t *x, uint32_t r, uint32_t k, uint64_t now)
{
    memset(x, 0, sizeof *x);
    uint64_t w = FX_W0 + k;
    tm_sample(m, JOB, r, w, now);
    uint64_t n0 = 10 + r + k;
    Mpiwatch__FunctionStat *f =
        tm_add_fn(m, fx_fn(0), n0, 1000 * (r + 1) + 7 * k, 50 + r, 400 + r, 80);
    f->hist_first = 5;
    f->n_hist = 2;
    m->hist[0][0] = 3;
    m->hist[0][1] = (uint32_t)n0 - 3;
    if (r % 2 == 0) /* MPI_Send on even ranks only: its spread counts the others as zeros */
        tm_add_fn(m, fx_fn(1), r + 1, 100 * (r + 1) + k, 100, 100 + r, 1024 * (r + 1));
    if (r == 5) /* a function with time and no completed call */
        tm_add_fn(m, fx_fn(3), 0, 0, 0, 0, 0);
    tm_add_peer_fn(m, (r + 1) % N, fx_fn(1), 1 + r, 1024);
    if (r % 2 == 0)
        tm_add_peer_fn(m, (r + 2) % N, fx_fn(6), 2, 64 * (k + 1));
    tm_add_occ(m, fx_fn(0), 2, 1000 + r);
    tm_add_occ(m, fx_fn(0), 3 + k % 2, 20000 * (r + 1));
    if (r == 4) /* occupancy only: a call still running */
        tm_add_occ(m, fx_fn(4), 5, 500);
    tm_add_density(m, fx_fn(0), 2, 9, 1, 4); /* the same cell on every rank */
    tm_add_density(m, fx_fn(0), -(int32_t)r, 5, 0, 1);
    /* Longest calls with ties of duration across ranks (kept by rank, then start). */
    tm_add_call(m, fx_fn(0), now - 5000 - r, 3000 + 100 * (r % 3), 0, -1);
    tm_add_call(m, fx_fn(1), now - 9000, 3000, 64, (int32_t)((r + 1) % N));
    m->sample.records_dropped = r;
    m->sample.calls_late = 1 + (r == 3);
    m->sample.samples_dropped_total = k / 2;
    m->sample.regions_dropped = r % 2;
    m->sample.sites_dropped = r == 4;
    /* Regions (ids are the rank's own) and call sites. */
    if (k == 0) {
        tm_add_region_def(m, 1, r < 3 ? "solve" : "io", 1);
        tm_add_region_def(m, 2, "setup", 1);
        tm_add_site_def(m, 1, "/bin/app", 0x100 + 0x10 * (r % 2), r % 2 ? "f" : "g", "a.c",
                        10 + r % 2);
        tm_add_site_def(m, 2, "/lib/libx.so", 0x40, "", "", 0); /* not resolved yet ... */
    } else if (k == 2 && r == 5) {
        tm_add_site_def(m, 2, "/lib/libx.so", 0x40, "x_send", "x.c", 7); /* ... now it is */
    }
    tm_add_region(m, 1, 2, 5000 + r, 3000, 1000 + r);
    if (r % 3 == 0)
        tm_add_region(m, 2, 1, 800, 800, 100);
    tm_add_site(m, 1, fx_fn(0), n0, 1000 * (r + 1) + 7 * k, 80, 400 + r);
    if (r % 2)
        tm_add_site(m, 2, fx_fn(1), 1, 50 + r, 8, 50 + r);
    /* Steps: step k ends in window k on every rank (3 of fx_fn(0)'s calls, 1 message to the
     * next rank). */
    mpiwatch__step_mark__init(&x->mark);
    x->mark.step = k;
    x->mark.end_ns = w * TM_WINDOW_NS + 1000 * (r + 1);
    x->mark.source = 1;
    mpiwatch__function_stat__init(&x->fs);
    x->fs.fn = fx_fn(0);
    x->fs.count = 3;
    x->fs.total_ns = 300 + r;
    x->fs.min_ns = 100;
    x->fs.max_ns = 100 + r;
    x->fs.bytes = 30;
    x->fsp[0] = &x->fs;
    x->mark.n_functions = 1;
    x->mark.functions = x->fsp;
    x->markp[0] = &x->mark;
    m->sample.n_steps = 1;
    m->sample.steps = x->markp;
    /* A trace: rank 1 exact in window 0, rank 4 summary only in window 1. */
    if (r == 1 && k == 0) {
        exact_trace(x, w, (unsigned)n0);
        m->sample.trace = &x->trace;
    } else if (r == 4 && k == 1) {
        mpiwatch__trace__init(&x->trace);
        x->trace.window = w;
        x->trace.state = MW_TRACE_SUMMARY_ONLY;
        x->trace.reason = MW_TRACE_WHY_BUDGET;
        x->trace.left_out = n0 + 1;
        m->sample.trace = &x->trace;
    }
    /* Ranks 3 and 4 were dormant for a while: their cumulative dormant calls. */
    if (r == 3 || r == 4) {
        Mpiwatch__Dormant d = MPIWATCH__DORMANT__INIT;
        x->dormant = d;
        x->d_fn[0] = fx_fn(1);
        x->d_calls[0] = 100 * (k + 1) + r;
        x->d_bytes[0] = 1000 * (k + 1);
        x->dormant.n_fn = x->dormant.n_calls = x->dormant.n_bytes = 1;
        x->dormant.fn = x->d_fn;
        x->dormant.calls = x->d_calls;
        x->dormant.bytes = x->d_bytes;
        m->sample.dormant = &x->dormant;
    }
    /* A communicator created on rank 2 in window 0. */
    if (r == 2 && k == 0) {
        mpiwatch__comm_def__init(&x->comm);
        x->comm.id = 5;
        x->comm.parent = MW_COMM_ID_WORLD;
        x->comm.size = 3;
        x->comm.rank = 1;
        x->commp[0] = &x->comm;
        m->sample.n_comms = 1;
        m->sample.comms = x->commp;
    }
}

static void feed_sample(fx_t *f, uint32_t r, uint32_t k)
{
    tm_msg_t m;
    extra_t x;
    build_sample(&m, &x, r, k, f->now.real_ns);
    mw_reject_t rc = fx_feed(f, &m);
    if (rc != MW_ACCEPTED)
        print_error("rank %u window %u: %s\n", r, k, mw__reject_name(rc));
    assert_int_equal(rc, MW_ACCEPTED);
    free(x.records);
}

/* ---- the two paths -------------------------------------------------------------------------- */

typedef struct {
    node_t single, root, agg[NAGG];
} tree_t;

static void feed_agg_state(tree_t *t, uint32_t a)
{
    node_t *g = &t->agg[a];
    size_t len = mw__aggstate_envelope_pack(g->f->c, &g->enc, g->id, g->seq++, 0);
    assert_true(len > 0);
    assert_int_equal(feed_blob(t->root.f, g->enc.out, len), MW_ACCEPTED);
}

/* Builds both paths up to (not including) the partials, which stay in t->agg[a].out. */
static void tree_build(tree_t *t)
{
    node_init(&t->single, 0, 0);
    node_init(&t->root, 0, 0);
    fx_hellos(t->single.f, JOB, N);
    fx_hellos(t->root.f, JOB, N); /* forwarded by the aggregators */
    for (uint32_t a = 0; a < NAGG; a++) {
        node_t *g = &t->agg[a];
        node_init(g, 1, a);
        for (uint32_t r = a * (N / NAGG); r < (a + 1) * (N / NAGG); r++) {
            tm_msg_t m;
            tm_hello(&m, JOB, r, N, g->f->now.real_ns);
            assert_int_equal(fx_feed(g->f, &m), MW_ACCEPTED);
        }
        /* An aggregator waits for its own ranks only (upstream.c's business; done by hand). */
        for (uint32_t r = 0; r < N; r++)
            if (r / (N / NAGG) != a) {
                mw__merge_leave(&g->f->c->merge, r);
                mw__steps_leave(g->f->c, r);
            }
    }
    for (uint32_t a = 0; a < NAGG; a++)
        feed_agg_state(t, a);
    for (uint32_t k = 0; k < NW; k++)
        for (uint32_t r = 0; r < N; r++) {
            feed_sample(t->single.f, r, k);
            feed_sample(t->agg[r / (N / NAGG)].f, r, k);
        }
}

static void tree_free(tree_t *t)
{
    node_free(&t->single);
    node_free(&t->root);
    for (uint32_t a = 0; a < NAGG; a++)
        node_free(&t->agg[a]);
}

/* Feeds every partial to the root, window by window, aggregators in order. */
static void tree_feed_partials(tree_t *t)
{
    for (unsigned i = 0; i < t->agg[0].n_out; i++)
        for (uint32_t a = 0; a < NAGG; a++) {
            assert_true(i < t->agg[a].n_out);
            mw_reject_t r = feed_blob(t->root.f, t->agg[a].out[i].b, t->agg[a].out[i].n);
            if (r != MW_ACCEPTED)
                print_error("partial %u of aggregator %u: %s\n", i, a, mw__reject_name(r));
            assert_int_equal(r, MW_ACCEPTED);
        }
}

/* Whether field `fd` of message m has a value other than its default. */
static int field_set(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *fd)
{
    const char *base = (const char *)m;
    if (fd->label == PROTOBUF_C_LABEL_REPEATED)
        return *(const size_t *)(base + fd->quantifier_offset) > 0;
    switch (fd->type) {
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
        return *(const uint32_t *)(base + fd->offset) != 0;
    case PROTOBUF_C_TYPE_UINT64:
        return *(const uint64_t *)(base + fd->offset) != 0;
    case PROTOBUF_C_TYPE_DOUBLE:
        return *(const double *)(base + fd->offset) != 0;
    default:
        return 1;
    }
}

/* Every field of Window that a merge fills is set in some window of `n`, and every field of
 * FunctionStat a merged window carries: a field forgotten by the partial path would then show
 * in the comparison. */
static void assert_every_field_used(const node_t *n)
{
    const ProtobufCMessageDescriptor *d = &mpiwatch__window__descriptor;
    static const char *const unused[] = {
        "ranks_missing", /* every rank reports */
        "closed_real_ns",
        "start_ns", /* set by the caller, on the first grid */
        "trace_deferred",
        "overflow", /* a full density or pair table: not reachable with a few ranks */
        "rank_detail_left_out" /* the detail off: test_tree_detail_off */};
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *fd = &d->fields[i];
        int skip = 0;
        for (size_t u = 0; u < sizeof unused / sizeof unused[0]; u++)
            skip |= strcmp(fd->name, unused[u]) == 0;
        if (skip)
            continue;
        int set = 0;
        for (unsigned k = 0; k < n->n_out && !set; k++) {
            Mpiwatch__Window *w = mpiwatch__window__unpack(NULL, n->out[k].n, n->out[k].b);
            assert_non_null(w);
            set = field_set(&w->base, fd);
            mpiwatch__window__free_unpacked(w, NULL);
        }
        if (!set)
            print_error("Window.%s is never set by the test's samples\n", fd->name);
        assert_true(set);
    }
    static const char *const fs_used[] = {"fn",         "count",    "total_ns",   "min_ns",
                                          "max_ns",     "bytes",    "hist_first", "hist",
                                          "rank_sd_ns", "rank_max", "rank_max_ns"};
    Mpiwatch__Window *w = mpiwatch__window__unpack(NULL, n->out[0].n, n->out[0].b);
    for (size_t u = 0; u < sizeof fs_used / sizeof fs_used[0]; u++) {
        const ProtobufCFieldDescriptor *fd = protobuf_c_message_descriptor_get_field_by_name(
            &mpiwatch__function_stat__descriptor, fs_used[u]);
        int set = 0;
        for (size_t i = 0; i < w->n_functions && !set; i++)
            set = field_set(&w->functions[i]->base, fd);
        assert_true(set);
    }
    mpiwatch__window__free_unpacked(w, NULL);
}

static void assert_same_windows(const node_t *a, const node_t *b)
{
    assert_int_equal(a->n_out, b->n_out);
    for (unsigned i = 0; i < a->n_out; i++) {
        if (a->out[i].n == b->out[i].n && memcmp(a->out[i].b, b->out[i].b, a->out[i].n) == 0)
            continue;
        Mpiwatch__Window *x = mpiwatch__window__unpack(NULL, a->out[i].n, a->out[i].b);
        Mpiwatch__Window *y = mpiwatch__window__unpack(NULL, b->out[i].n, b->out[i].b);
        const char *diff = x && y ? pb_diff(&x->base, &y->base) : "does not decode";
        print_error("window %u differs: %s\n", i, diff ? diff : "(encoding only)");
        fail();
    }
}

static void assert_same_steps(const mw_collector_t *a, const mw_collector_t *b)
{
    assert_int_equal(mw__steps_closed(a), NW);
    assert_int_equal(mw__steps_closed(a), mw__steps_closed(b));
    for (size_t i = 0; i < mw__steps_closed(a); i++) {
        const uint8_t *x, *y;
        size_t nx = mw__steps_kept(a, i, &x), ny = mw__steps_kept(b, i, &y);
        if (nx == ny && memcmp(x, y, nx) == 0)
            continue;
        Mpiwatch__Step *p = mpiwatch__step__unpack(NULL, nx, x);
        Mpiwatch__Step *q = mpiwatch__step__unpack(NULL, ny, y);
        const char *diff = p && q ? pb_diff(&p->base, &q->base) : "does not decode";
        print_error("step %zu differs: %s\n", i, diff ? diff : "(encoding only)");
        fail();
    }
}

static int cmp_pair_sum(const void *a, const void *b)
{
    const mw_pair_sum_t *x = a, *y = b;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    return x->dst < y->dst ? -1 : x->dst > y->dst;
}

/* The job's pair totals, summed per (src, dst) and sorted, are the same. */
static void assert_same_pairs(const mw_job_t *a, const mw_job_t *b)
{
    mw_pair_sum_t *p[2] = {calloc(a->pairs.n + 1, sizeof(mw_pair_sum_t)),
                           calloc(b->pairs.n + 1, sizeof(mw_pair_sum_t))};
    uint32_t n[2] = {a->pairs.n, b->pairs.n};
    const mw_job_t *j[2] = {a, b};
    for (int k = 0; k < 2; k++) {
        for (uint32_t i = 0; i < n[k]; i++)
            p[k][i] = *MW__INDEX_AT(&j[k]->pairs, const mw_pair_sum_t, i);
        qsort(p[k], n[k], sizeof *p[k], cmp_pair_sum);
    }
    assert_true(n[0] > 0);
    assert_int_equal(n[0], n[1]);
    assert_memory_equal(p[0], p[1], n[0] * sizeof *p[0]);
    free(p[0]);
    free(p[1]);
}

/* One collector vs three aggregators and a root: the same windows, byte for byte, and the
 * same steps. */
static void test_tree_equals_single(void **state)
{
    (void)state;
    tree_t t;
    tree_build(&t);
    /* Every window closed everywhere as soon as every expected rank reported it. */
    assert_int_equal(t.single.n_out, NW);
    for (uint32_t a = 0; a < NAGG; a++)
        assert_int_equal(t.agg[a].n_out, NW);
    tree_feed_partials(&t);
    assert_int_equal(t.root.n_out, NW);
    mw_collector_finish(t.single.f->c, &t.single.f->now);
    mw_collector_finish(t.root.f->c, &t.root.f->now);

    assert_every_field_used(&t.single);
    assert_same_windows(&t.single, &t.root);
    assert_same_steps(t.single.f->c, t.root.f->c);
    /* The job's per-function totals and samples, as one collector counted them. */
    for (int i = 0; i < 8; i++) {
        const mw_fn_stats_t *x = &t.single.f->c->job.fn[fx_fn(i)],
                            *y = &t.root.f->c->job.fn[fx_fn(i)];
        assert_memory_equal(x, y, sizeof *x);
    }
    assert_int_equal(t.single.f->c->job.samples, t.root.f->c->job.samples);
    /* The job's region and call-site tables: the same entries under the same ids. */
    const mw__rs_t *rx = &t.single.f->c->job.rs, *ry = &t.root.f->c->job.rs;
    assert_int_equal(rx->n_regions, 3);
    assert_int_equal(rx->n_regions, ry->n_regions);
    for (uint32_t i = 0; i < rx->n_regions; i++) {
        assert_string_equal(rx->regions[i].name, ry->regions[i].name);
        assert_int_equal(rx->regions[i].count, ry->regions[i].count);
        assert_int_equal(rx->regions[i].incl_ns, ry->regions[i].incl_ns);
    }
    assert_int_equal(rx->n_sites, 3);
    assert_int_equal(rx->n_sites, ry->n_sites);
    for (uint32_t i = 0; i < rx->n_sites; i++) {
        assert_string_equal(rx->sites[i].module, ry->sites[i].module);
        assert_string_equal(rx->sites[i].function, ry->sites[i].function);
        assert_string_equal(rx->sites[i].file, ry->sites[i].file);
        assert_int_equal(rx->sites[i].line, ry->sites[i].line);
        assert_int_equal(rx->sites[i].offset, ry->sites[i].offset);
        assert_int_equal(rx->sites[i].first_rank, ry->sites[i].first_rank);
    }
    assert_string_equal(rx->sites[1].module, "/lib/libx.so");
    assert_string_equal(rx->sites[1].function, "x_send"); /* completed by rank 5 */
    /* Each rank's merged calls, time and bytes, and the job's pairs (the report's). */
    for (uint32_t r = 0; r < N; r++) {
        const mw_rank_t *x = &t.single.f->c->job.ranks[r], *y = &t.root.f->c->job.ranks[r];
        assert_int_equal(x->calls, y->calls);
        assert_int_equal(x->mpi_time_ns, y->mpi_time_ns);
        assert_int_equal(x->bytes, y->bytes);
        assert_int_equal(x->samples, y->samples);
        assert_int_equal(x->last_window, y->last_window);
    }
    assert_same_pairs(&t.single.f->c->job, &t.root.f->c->job);
    /* The ranks' dormant totals, as the single collector took them from the samples. */
    mw_dormant_tally_t ds, dr;
    mw__dormant_tally(t.single.f->c->job.dormant, &ds);
    mw__dormant_tally(t.root.f->c->job.dormant, &dr);
    assert_int_equal(ds.ranks, 2);
    assert_int_equal(ds.calls, 100 * NW + 3 + 100 * NW + 4);
    assert_memory_equal(&ds, &dr, sizeof ds);
    tree_free(&t);
}

/* The same with the per-rank detail off everywhere: what is left out is counted, and the
 * counts add up through the tree. */
static void test_tree_detail_off(void **state)
{
    (void)state;
    tree_t t;
    detail_off = 1;
    tree_build(&t);
    detail_off = 0;
    tree_feed_partials(&t);
    assert_int_equal(t.root.n_out, NW);
    assert_same_windows(&t.single, &t.root);
    Mpiwatch__Window *w = mpiwatch__window__unpack(NULL, t.root.out[0].n, t.root.out[0].b);
    assert_non_null(w);
    assert_int_equal(w->n_rf_rank, 0);
    assert_true(w->rank_detail_left_out >= N); /* every rank had functions */
    mpiwatch__window__free_unpacked(w, NULL);
    tree_free(&t);
}

/* Three levels: aggregators A and B (ranks 0..3) feed an aggregator M, whose partials go to
 * the root with C's (ranks 4, 5). A partial merged into an aggregator's window comes out of it
 * exact too: the root still equals one collector, byte for byte. */
static void test_three_levels(void **state)
{
    (void)state;
    tree_t t;
    tree_build(&t);
    node_t mid;
    node_init(&mid, 1, 7);
    for (uint32_t r = 0; r < 2 * (N / NAGG); r++) {
        tm_msg_t m;
        tm_hello(&m, JOB, r, N, mid.f->now.real_ns);
        assert_int_equal(fx_feed(mid.f, &m), MW_ACCEPTED);
    }
    for (uint32_t r = 2 * (N / NAGG); r < N; r++) {
        mw__merge_leave(&mid.f->c->merge, r);
        mw__steps_leave(mid.f->c, r);
    }
    for (uint32_t a = 0; a < 2; a++) {
        node_t *g = &t.agg[a];
        size_t len = mw__aggstate_envelope_pack(g->f->c, &g->enc, g->id, g->seq++, 0);
        assert_int_equal(feed_blob(mid.f, g->enc.out, len), MW_ACCEPTED);
    }
    size_t len = mw__aggstate_envelope_pack(mid.f->c, &mid.enc, mid.id, mid.seq++, 0);
    assert_int_equal(feed_blob(t.root.f, mid.enc.out, len), MW_ACCEPTED);
    for (unsigned i = 0; i < NW; i++) {
        for (uint32_t a = 0; a < 2; a++)
            assert_int_equal(feed_blob(mid.f, t.agg[a].out[i].b, t.agg[a].out[i].n), MW_ACCEPTED);
        assert_int_equal(mid.n_out, i + 1); /* closed: both its aggregators' ranks are in */
        assert_int_equal(feed_blob(t.root.f, mid.out[i].b, mid.out[i].n), MW_ACCEPTED);
        assert_int_equal(feed_blob(t.root.f, t.agg[2].out[i].b, t.agg[2].out[i].n), MW_ACCEPTED);
    }
    assert_int_equal(t.root.n_out, NW);
    mw_collector_finish(t.single.f->c, &t.single.f->now);
    mw_collector_finish(t.root.f->c, &t.root.f->now);
    assert_same_windows(&t.single, &t.root);
    assert_same_steps(t.single.f->c, t.root.f->c);
    node_free(&mid);
    tree_free(&t);
}

/* ---- refusals ------------------------------------------------------------------------------- */

/* The figures a refused partial must leave as they were. */
typedef struct {
    uint64_t samples, accepted, late, closed;
    int64_t head, last[N];
    int started;
    unsigned n_out;
} snap_t;

static void snap(const node_t *n, snap_t *s)
{
    const mw_collector_t *c = n->f->c;
    memset(s, 0, sizeof *s);
    s->samples = c->job.samples;
    s->accepted = c->stats.accepted;
    s->late = c->stats.late;
    s->closed = c->merge.closed;
    s->started = c->merge.started;
    s->head = c->merge.started ? c->merge.head : -1;
    for (uint32_t r = 0; r < N; r++)
        s->last[r] = mw__merge_last_window(&c->merge, r);
    s->n_out = n->n_out;
}

typedef void (*mutate_fn)(Mpiwatch__Envelope *env);

/* Feeds partial 0 of aggregator 1 (ranks 2, 3) mutated by `mutate`: refused for `want`,
 * counted, nothing else changed. */
static void refused_case(tree_t *t, mutate_fn mutate, mw_reject_t want)
{
    const blob_t *b = &t->agg[1].out[0];
    Mpiwatch__Envelope *env = mpiwatch__envelope__unpack(NULL, b->n, b->b);
    assert_non_null(env);
    /* The mutations point some arrays at static storage: restored before the free. */
    Mpiwatch__Partial pcopy = *env->partial;
    Mpiwatch__Window wcopy = *env->partial->window;
    mutate(env);
    size_t len = mpiwatch__envelope__get_packed_size(env);
    uint8_t *buf = malloc(len);
    mpiwatch__envelope__pack(env, buf);
    *env->partial->window = wcopy;
    *env->partial = pcopy;
    snap_t before, after;
    snap(&t->root, &before);
    uint64_t count = t->root.f->c->stats.rejected[want];
    mw_reject_t r = feed_blob(t->root.f, buf, len);
    if (r != want)
        print_error("expected %s, got %s\n", mw__reject_name(want), mw__reject_name(r));
    assert_int_equal(r, want);
    assert_int_equal(t->root.f->c->stats.rejected[want], count + 1);
    snap(&t->root, &after);
    assert_memory_equal(&before, &after, sizeof before);
    free(buf);
    mpiwatch__envelope__free_unpacked(env, NULL);
}

static uint32_t two_ranges_first[2], two_ranges_count[2];

static void overlapping(Mpiwatch__Envelope *env)
{
    two_ranges_first[0] = 2, two_ranges_count[0] = 1;
    two_ranges_first[1] = 2, two_ranges_count[1] = 1;
    env->partial->n_rank_first = env->partial->n_rank_count = 2;
    env->partial->rank_first = two_ranges_first;
    env->partial->rank_count = two_ranges_count;
}

static void unsorted(Mpiwatch__Envelope *env)
{
    two_ranges_first[0] = 3, two_ranges_count[0] = 1;
    two_ranges_first[1] = 2, two_ranges_count[1] = 1;
    env->partial->n_rank_first = env->partial->n_rank_count = 2;
    env->partial->rank_first = two_ranges_first;
    env->partial->rank_count = two_ranges_count;
}

static void beyond_size(Mpiwatch__Envelope *env)
{
    env->partial->rank_first[0] = N - 1; /* [5, 7) */
}

static void unknown_fn(Mpiwatch__Envelope *env)
{
    env->partial->window->functions[0]->fn = 60000; /* beyond the aggregator's table */
}

static void unknown_fn_order(Mpiwatch__Envelope *env)
{
    env->partial->fn_order[0] = 60000;
}

static void oversize_occ(Mpiwatch__Envelope *env)
{
    env->partial->window->n_occ_sub--; /* arrays of different lengths */
}

static Mpiwatch__Call *many_calls[MW_MERGE_LONGEST + 1];

static void oversize_longest(Mpiwatch__Envelope *env)
{
    Mpiwatch__Window *w = env->partial->window;
    for (size_t i = 0; i <= MW_MERGE_LONGEST; i++)
        many_calls[i] = w->longest[0];
    w->n_longest = MW_MERGE_LONGEST + 1;
    w->longest = many_calls;
}

static void bad_bin(Mpiwatch__Envelope *env)
{
    env->partial->window->functions[0]->hist_first = TM_BINS;
}

static void bad_sub(Mpiwatch__Envelope *env)
{
    env->partial->window->occ_sub[0] = TM_SUBSLOTS;
}

static void bad_peer(Mpiwatch__Envelope *env)
{
    env->partial->window->pair_dst[0] = N;
}

static void pair_of_unlisted(Mpiwatch__Envelope *env)
{
    env->partial->window->pair_src[0] = 0; /* rank 0 is not aggregator 1's */
}

static void pm_count(Mpiwatch__Envelope *env)
{
    env->partial->n_rank_pm--;
}

static void unknown_aggregator(Mpiwatch__Envelope *env)
{
    env->rank = 7; /* no AggState of it */
}

static void bad_trace(Mpiwatch__Envelope *env)
{
    Mpiwatch__Window *w = env->partial->window;
    assert_true(w->n_traces == 0);
    static Mpiwatch__RankTrace rt;
    static Mpiwatch__RankTrace *rtp[1];
    static Mpiwatch__Trace tr;
    static uint8_t junk[16] = {1, 2, 3};
    mpiwatch__rank_trace__init(&rt);
    mpiwatch__trace__init(&tr);
    tr.window = w->index;
    tr.state = MW_TRACE_EXACT;
    tr.count = 3;
    tr.encoding = MW_TRACE_ENC_COLUMNS;
    tr.records.data = junk;
    tr.records.len = sizeof junk;
    rt.rank = 2;
    rt.trace = &tr;
    rtp[0] = &rt;
    w->n_traces = 1;
    w->traces = rtp;
}

static void undefined_region(Mpiwatch__Envelope *env)
{
    env->partial->n_region_defs = 0; /* its entries name ids never defined */
}

static void dormant_unlisted(Mpiwatch__Envelope *env)
{
    assert_true(env->partial->n_dormant > 0);
    env->partial->dormant[0]->rank = 0;
}

static void step_bad_fn(Mpiwatch__Envelope *env)
{
    assert_true(env->partial->n_steps > 0);
    env->partial->steps[0]->functions[0]->fn = 60000;
}

static void pm_value(Mpiwatch__Envelope *env)
{
    env->partial->rank_pm[0] = MW_RANK_PM_NONE;
}

static void other_grid(Mpiwatch__Envelope *env)
{
    env->partial->window->window_ns /= 2;
}

static void reporting_count(Mpiwatch__Envelope *env)
{
    env->partial->window->ranks_reporting++;
}

static void test_refusals(void **state)
{
    (void)state;
    tree_t t;
    tree_build(&t);
    refused_case(&t, overlapping, MW_REJECT_RANK_RANGE);
    refused_case(&t, unsorted, MW_REJECT_RANK_RANGE);
    refused_case(&t, beyond_size, MW_REJECT_RANK_RANGE);
    refused_case(&t, unknown_fn, MW_REJECT_BAD_FIELD);
    refused_case(&t, unknown_fn_order, MW_REJECT_BAD_FIELD);
    refused_case(&t, oversize_occ, MW_REJECT_BAD_FIELD);
    refused_case(&t, oversize_longest, MW_REJECT_BAD_FIELD);
    refused_case(&t, bad_bin, MW_REJECT_BAD_FIELD);
    refused_case(&t, bad_sub, MW_REJECT_BAD_FIELD);
    refused_case(&t, bad_peer, MW_REJECT_BAD_FIELD);
    refused_case(&t, pair_of_unlisted, MW_REJECT_BAD_FIELD);
    refused_case(&t, pm_count, MW_REJECT_BAD_FIELD);
    refused_case(&t, unknown_aggregator, MW_REJECT_NO_HELLO);
    refused_case(&t, bad_trace, MW_REJECT_TRACE);
    refused_case(&t, undefined_region, MW_REJECT_BAD_FIELD);
    refused_case(&t, dormant_unlisted, MW_REJECT_BAD_FIELD);
    refused_case(&t, step_bad_fn, MW_REJECT_BAD_FIELD);
    refused_case(&t, pm_value, MW_REJECT_BAD_FIELD);
    refused_case(&t, other_grid, MW_REJECT_GRID_MISMATCH);
    refused_case(&t, reporting_count, MW_REJECT_BAD_FIELD);
    /* The genuine partial is accepted; the same one again is a rank already reported. */
    const blob_t *b = &t.agg[1].out[0];
    assert_int_equal(feed_blob(t.root.f, b->b, b->n), MW_ACCEPTED);
    assert_int_equal(mw__merge_last_window(&t.root.f->c->merge, 2), (int64_t)FX_W0);
    assert_int_equal(mw__merge_last_window(&t.root.f->c->merge, 0), -1);
    snap_t before, after;
    snap(&t.root, &before);
    assert_int_equal(feed_blob(t.root.f, b->b, b->n), MW_REJECT_DUPLICATE);
    snap(&t.root, &after);
    assert_memory_equal(&before, &after, sizeof before);
    tree_free(&t);
}

/* ---- cost ------------------------------------------------------------------------------------
 *
 * With MW_PARTIAL_BENCH=R (e.g. 12500): one aggregator of R ranks in a job of 8 R ranks merges
 * 64 windows of samples (the last 32 timed) (8 functions with histograms, 4 peers, 4 occupancy
 * cells, 2 density cells, 2 long calls each); each partial is fed to a root that knows the whole
 * job. Prints the partial's size and the CPU time of encoding it (aggregator) and of taking it
 * through mw_collector_frame (the root: decode, checks, merge), per partial and per rank listed.
 * Skipped without the variable: it is a measurement, not a check. */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void bench_sample(tm_msg_t *m, uint32_t r, uint64_t w, uint32_t size, uint64_t now)
{
    tm_sample(m, JOB, r, w, now);
    for (int i = 0; i < 8; i++) {
        Mpiwatch__FunctionStat *f = tm_add_fn(m, fx_fn(i), 5 + i + r % 7, 10000 * (i + 1) + r,
                                              100 + i, 9000 + r % 50, 64 * i);
        f->hist_first = 6;
        f->n_hist = 4;
        for (int b = 0; b < 4; b++)
            m->hist[i][b] = 1 + (uint32_t)b;
    }
    for (uint32_t p = 1; p <= 4; p++)
        tm_add_peer_fn(m, (r + p) % size, fx_fn(1), p, 1024 * p);
    for (uint32_t k = 0; k < 4; k++)
        tm_add_occ(m, fx_fn(k % 2), k * 3, 100000 + r % 1000);
    tm_add_density(m, fx_fn(0), 3, 12, 1, 5);
    tm_add_density(m, fx_fn(1), (int32_t)(r % 16), 10, 0, 2);
    tm_add_call(m, fx_fn(0), now - 50000, 9000 + r % 5000, 8, -1);
    tm_add_call(m, fx_fn(1), now - 40000, 8000 + r % 3000, 64, (int32_t)((r + 1) % size));
}

/* The root's closed windows, counted (not encoded: the bench times the collector's work). */
static void count_window(const mw_window_t *w, void *user)
{
    (void)w;
    ((node_t *)user)->n_out++;
}

static void test_ingest_cost(void **state)
{
    (void)state;
    const char *env = getenv("MW_PARTIAL_BENCH");
    if (!env || atoi(env) <= 0)
        skip();
    uint32_t ranks = (uint32_t)atoi(env), size = 8 * ranks;
    node_t root, agg;
    node_init(&root, 0, 0);
    node_init(&agg, 1, 0);
    root.f->c->on_window = count_window;
    fx_hellos(root.f, JOB, size);
    for (uint32_t r = 0; r < ranks; r++) {
        tm_msg_t m;
        tm_hello(&m, JOB, r, size, agg.f->now.real_ns);
        assert_int_equal(fx_feed(agg.f, &m), MW_ACCEPTED);
    }
    /* Both wait for these ranks only, so that every window closes (and is encoded for the
     * outputs) once its partial is in: the root's cost includes the close. */
    for (uint32_t r = ranks; r < size; r++) {
        mw__merge_leave(&agg.f->c->merge, r);
        mw__steps_leave(agg.f->c, r);
        mw__merge_leave(&root.f->c->merge, r);
        mw__steps_leave(root.f->c, r);
    }
    size_t len = mw__aggstate_envelope_pack(agg.f->c, &agg.enc, 0, agg.seq++, 0);
    assert_int_equal(feed_blob(root.f, agg.enc.out, len), MW_ACCEPTED);
    double pack_s = 0, ingest_s = 0, decode_s = 0, pbc_s = 0;
    size_t bytes = 0;
    /* Timed: the second pass over the ring (32 slots by default), whose slots are warm. */
    const int windows = 32, first = (int)root.f->c->merge.cap;
    for (int k = 0; k < first + windows; k++) {
        tm_msg_t m;
        if (k) { /* time goes on: a window ahead by more than MW_SAMPLE_MAX_LEAD_NS is refused */
            for (fx_t *f = agg.f; f; f = f == agg.f ? root.f : NULL) {
                f->now.real_ns += TM_WINDOW_NS;
                f->now.mono_ns += TM_WINDOW_NS;
            }
        }
        for (uint32_t r = 0; r < ranks; r++) {
            bench_sample(&m, r, FX_W0 + (uint64_t)k, size, agg.f->now.real_ns);
            if (r + 1 == ranks) { /* the last sample closes the window: time the encoding */
                uint8_t *buf;
                size_t n = tm_pack(&m, &buf);
                double t0 = cpu_s();
                assert_int_equal(mw_collector_frame(agg.f->c, buf, n, 1, &agg.f->now), MW_ACCEPTED);
                if (k >= first)
                    pack_s += cpu_s() - t0;
                free(buf);
            } else {
                assert_int_equal(fx_feed(agg.f, &m), MW_ACCEPTED);
            }
        }
        assert_int_equal(agg.n_out, 1u);
        const blob_t *b = &agg.out[0];
        /* Both decoders on the same partial (protobuf-c's: what the root did before
         * proto/mw_decode_partial.c), then the root's whole path. */
        double tp = cpu_s();
        assert_non_null(mw__envelope_decode_pbc(&root.f->c->arena, b->b, b->n));
        double t0 = cpu_s();
        mw_arena_reset(&root.f->c->arena);
        assert_non_null(mw_envelope_decode(&root.f->c->arena, b->b, b->n));
        double t1 = cpu_s();
        mw_arena_reset(&root.f->c->arena);
        assert_int_equal(feed_blob(root.f, b->b, b->n), MW_ACCEPTED);
        if (k >= first) {
            bytes += b->n;
            pbc_s += t0 - tp;
            decode_s += t1 - t0;
            ingest_s += cpu_s() - t1;
        }
        assert_int_equal(root.n_out, 1u); /* closed */
        free(agg.out[0].b);
        agg.n_out = root.n_out = 0;
    }
    print_message("partial of %u ranks (job of %u): %.0f KB; aggregator: last sample + close + "
                  "encode %.2f ms; root: decode + checks + merge %.2f ms per partial = %.0f ns "
                  "per rank listed (of which decode %.2f ms); with protobuf-c decoding (%.2f "
                  "ms) it would be %.0f ns per rank listed\n",
                  ranks, size, (double)bytes / windows / 1024, pack_s / windows * 1e3,
                  ingest_s / windows * 1e3, ingest_s / windows / ranks * 1e9,
                  decode_s / windows * 1e3, pbc_s / windows * 1e3,
                  (ingest_s - decode_s + pbc_s) / windows / ranks * 1e9);
    node_free(&root);
    node_free(&agg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_equals_single), cmocka_unit_test(test_tree_detail_off),
        cmocka_unit_test(test_three_levels),       cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_ingest_cost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
