/* test_model.c: unit tests of the viewer's model (viewer/model_*.c, through model.h).
 *
 * DESIGN: every test builds protobuf messages in memory (a Window with known occupancy,
 * density cells and long calls; a JobInfo with hosts; an Envelope with a Sample), packs and
 * unpacks them so that the model owns heap messages exactly as it does behind the data source,
 * and checks the numbers the views draw: stacked tops, gaps, ticks, transfer, density buffers,
 * colors, picking, paging and eviction. The grid is 100 ms windows of 10 sub-slots (10 ms) with
 * 40 log2 duration bins.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "mw_bins.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"

#define WNS 100000000ull /* window: 100 ms */
#define SUBS 10u
#define SSNS (WNS / SUBS)
#define BINS 40u

/* ---- message builders --------------------------------------------------------------------- */

typedef struct {
    Mpiwatch__Window w;
    uint32_t *occ_fn, *occ_sub;
    uint64_t *occ_ns;
    size_t nocc, capocc;
    uint32_t *dfn, *dbin, *dend;
    int32_t *dsub;
    uint64_t *dcount;
    size_t nd, capd;
    Mpiwatch__FunctionStat fs[32];
    Mpiwatch__FunctionStat *fsp[32];
    Mpiwatch__Call calls[32];
    Mpiwatch__Call *callp[32];
} wb_t;

static void wb_init(wb_t *b, uint64_t index, uint32_t ranks, size_t capocc, size_t capd)
{
    memset(b, 0, sizeof *b);
    Mpiwatch__Window init = MPIWATCH__WINDOW__INIT;
    b->w = init;
    b->w.index = index;
    b->w.window_ns = WNS;
    b->w.subslots = SUBS;
    b->w.duration_bins = BINS;
    b->w.ranks_reporting = ranks;
    b->capocc = capocc ? capocc : 1;
    b->capd = capd ? capd : 1;
    b->occ_fn = calloc(b->capocc, sizeof(uint32_t));
    b->occ_sub = calloc(b->capocc, sizeof(uint32_t));
    b->occ_ns = calloc(b->capocc, sizeof(uint64_t));
    b->dfn = calloc(b->capd, sizeof(uint32_t));
    b->dbin = calloc(b->capd, sizeof(uint32_t));
    b->dend = calloc(b->capd, sizeof(uint32_t));
    b->dsub = calloc(b->capd, sizeof(int32_t));
    b->dcount = calloc(b->capd, sizeof(uint64_t));
    assert_non_null(b->occ_fn && b->occ_sub && b->occ_ns && b->dfn && b->dbin && b->dend &&
                    b->dsub && b->dcount);
}

static void wb_occ(wb_t *b, unsigned fn, unsigned sub, uint64_t ns)
{
    assert_true(b->nocc < b->capocc);
    b->occ_fn[b->nocc] = fn;
    b->occ_sub[b->nocc] = sub;
    b->occ_ns[b->nocc] = ns;
    b->nocc++;
}

static void wb_cell(wb_t *b, unsigned fn, int sub, unsigned bin, unsigned end, uint64_t count)
{
    assert_true(b->nd < b->capd);
    b->dfn[b->nd] = fn;
    b->dsub[b->nd] = sub;
    b->dbin[b->nd] = bin;
    b->dend[b->nd] = end;
    b->dcount[b->nd] = count;
    b->nd++;
}

static void wb_fn(wb_t *b, unsigned fn, uint64_t total_ns)
{
    size_t i = b->w.n_functions++;
    assert_true(i < 32);
    Mpiwatch__FunctionStat init = MPIWATCH__FUNCTION_STAT__INIT;
    b->fs[i] = init;
    b->fs[i].fn = fn;
    b->fs[i].count = 1;
    b->fs[i].total_ns = total_ns;
    b->fsp[i] = &b->fs[i];
}

static void wb_call(wb_t *b, uint32_t rank, unsigned fn, uint64_t start, uint64_t dur,
                    uint64_t bytes, int32_t peer)
{
    size_t i = b->w.n_longest++;
    assert_true(i < 32);
    Mpiwatch__Call init = MPIWATCH__CALL__INIT;
    b->calls[i] = init;
    b->calls[i].rank = rank;
    b->calls[i].fn = fn;
    b->calls[i].start_ns = start;
    b->calls[i].duration_ns = dur;
    b->calls[i].bytes = bytes;
    b->calls[i].peer = peer;
    b->callp[i] = &b->calls[i];
}

/* Packs the window, frees the builder and returns the unpacked (heap) window. */
static Mpiwatch__Window *wb_done(wb_t *b)
{
    Mpiwatch__Window *w = &b->w;
    w->n_occ_fn = w->n_occ_sub = w->n_occ_ns = b->nocc;
    w->occ_fn = b->occ_fn;
    w->occ_sub = b->occ_sub;
    w->occ_ns = b->occ_ns;
    w->n_density_fn = w->n_density_sub = w->n_density_bin = w->n_density_end = w->n_density_count =
        b->nd;
    w->density_fn = b->dfn;
    w->density_sub = b->dsub;
    w->density_bin = b->dbin;
    w->density_end = b->dend;
    w->density_count = b->dcount;
    w->functions = b->fsp;
    w->longest = b->callp;
    size_t len = mpiwatch__window__get_packed_size(w);
    uint8_t *buf = malloc(len ? len : 1);
    assert_non_null(buf);
    mpiwatch__window__pack(w, buf);
    Mpiwatch__Window *out = mpiwatch__window__unpack(NULL, len, buf);
    assert_non_null(out);
    free(buf);
    free(b->occ_fn);
    free(b->occ_sub);
    free(b->occ_ns);
    free(b->dfn);
    free(b->dbin);
    free(b->dend);
    free(b->dsub);
    free(b->dcount);
    return out;
}

/* A window with no data but ranks reporting (for paging and eviction tests). */
static Mpiwatch__Window *plain_window(uint64_t index)
{
    wb_t b;
    wb_init(&b, index, 4, 1, 1);
    return wb_done(&b);
}

/* A job of `size` ranks on two hosts (rank r on host r / 2). */
static Mpiwatch__JobInfo *make_job(const char *name, uint32_t size, uint64_t window_ns)
{
    Mpiwatch__JobInfo j = MPIWATCH__JOB_INFO__INIT;
    char *hosts[2] = {"node01", "node02"};
    Mpiwatch__RankInfo ri[8], *rip[8];
    j.job = (char *)name;
    j.program = "app";
    j.size = size;
    j.window_ns = window_ns;
    j.subslots = SUBS;
    j.duration_bins = BINS;
    j.n_hosts = 2;
    j.hosts = hosts;
    for (uint32_t r = 0; r < size && r < 8; r++) {
        Mpiwatch__RankInfo init = MPIWATCH__RANK_INFO__INIT;
        ri[r] = init;
        ri[r].rank = r;
        ri[r].host = r / 2;
        rip[r] = &ri[r];
    }
    j.n_ranks = size < 8 ? size : 8;
    j.ranks = rip;
    size_t len = mpiwatch__job_info__get_packed_size(&j);
    uint8_t *buf = malloc(len);
    assert_non_null(buf);
    mpiwatch__job_info__pack(&j, buf);
    Mpiwatch__JobInfo *out = mpiwatch__job_info__unpack(NULL, len, buf);
    free(buf);
    assert_non_null(out);
    return out;
}

#define FCOL(out, c, k) ((out)[(size_t)(c) * (MW_PALETTE + 2) + (k)])

/* ---- the timeline ------------------------------------------------------------------------- */

/* A window whose length changed mid-run (mpiwatch.window): 200 ms windows from K on, each with
 * its own start, fraction `frac` of 1 rank in function 1 in every sub-slot. */
static Mpiwatch__Window *long_window(uint64_t k, uint64_t K, double frac)
{
    wb_t b;
    wb_init(&b, k, 1, 64, 1);
    b.w.window_ns = 2 * WNS;
    b.w.start_ns = K * WNS + (k - K) * 2 * WNS;
    for (unsigned s = 0; s < SUBS; s++)
        wb_occ(&b, 1, s, (uint64_t)(2 * SSNS * frac));
    wb_fn(&b, 1, 1);
    return wb_done(&b);
}

/* The timeline of a run whose window length changed from 100 ms to 200 ms at window 4: the
 * windows are kept and drawn at their true times (window 4 starts at 0.4 s, window 5 at
 * 0.6 s, both 0.2 s wide), with no gap at the change. */
static void test_changed_grid(void **state)
{
    (void)state;
    mw_model_t *m = mw_model_new(0);
    const uint64_t K = 4;
    for (uint64_t k = 0; k < K; k++) {
        wb_t b;
        wb_init(&b, k, 1, 64, 1);
        for (unsigned s = 0; s < SUBS; s++)
            wb_occ(&b, 1, s, SSNS / 4); /* 0.25 */
        wb_fn(&b, 1, 1);
        assert_int_equal(mw_model_add_window(m, wb_done(&b)), 0);
    }
    assert_int_equal(mw_model_add_window(m, long_window(K, K, 0.5)), 0);
    assert_int_equal(mw_model_add_window(m, long_window(K + 1, K, 0.75)), 0);
    assert_int_equal(mw_model_window_start(m, K), K * WNS);
    assert_int_equal(mw_model_window_start(m, K + 1), (K + 2) * WNS);
    assert_int_equal(mw_model_window_start(m, K + 2), (K + 4) * WNS);
    assert_int_equal(mw_model_window_len(m, K - 1), WNS);
    assert_int_equal(mw_model_window_len(m, K + 1), 2 * WNS);
    assert_int_equal(mw_model_window_at(m, (K + 3) * WNS), K + 1);
    assert_int_equal(mw_model_window_at(m, K * WNS - 1), K - 1);

    /* 10 columns of 0.1 s over 0..1 s: 4 of 0.25, 2 of 0.5, 2 of 0.75, then nothing. */
    float out[10 * (MW_PALETTE + 2)];
    assert_int_equal(mw_timeline_columns(m, 0.0, 1.0, 10, out), 8);
    const float want[10] = {0.25f, 0.25f, 0.25f, 0.25f, 0.5f, 0.5f, 0.75f, 0.75f, 0, 0};
    for (int c = 0; c < 10; c++) {
        assert_float_equal(FCOL(out, c, 0), want[c], 1e-5);
        assert_float_equal(FCOL(out, c, MW_PALETTE + 1), c < 8 ? 1.0f : 0.0f, 0);
    }
    /* A window on the old grid after the change does not fit and is refused. */
    assert_int_equal(mw_model_add_window(m, plain_window(K + 2)), -1);

    /* The job's grid from its description: the same places, before any window arrived. */
    mw_model_t *j = mw_model_new(0);
    Mpiwatch__JobInfo *job = make_job("grid", 1, WNS);
    Mpiwatch__GridSegment g0 = MPIWATCH__GRID_SEGMENT__INIT, g1 = MPIWATCH__GRID_SEGMENT__INIT;
    Mpiwatch__GridSegment *gp[2] = {&g0, &g1};
    g0.window_ns = WNS;
    g1.first = K;
    g1.start_ns = K * WNS;
    g1.window_ns = 2 * WNS;
    job->n_grid = 2;
    job->grid = gp;
    mw_model_set_job(j, job);
    assert_int_equal(mw_model_window_start(j, K + 1), (K + 2) * WNS);
    assert_int_equal(mw_model_add_window(j, long_window(K + 1, K, 0.5)), 0);
    job->n_grid = 0; /* the segments are on this stack: the model copied them */
    job->grid = NULL;
    mw_model_free(j);
    mw_model_free(m);
}

/* Two functions inside 25% and 50% of 4 ranks in every sub-slot stack to 0.25 and 0.75; the
 * function with more time has slot 0. */
static void test_stacking(void **state)
{
    (void)state;
    mw_model_t *m = mw_model_new(0);
    wb_t b;
    wb_init(&b, 0, 4, 64, 1);
    for (unsigned s = 0; s < SUBS; s++) {
        wb_occ(&b, 1, s, SSNS * 4 / 4); /* 25% of 4 ranks */
        wb_occ(&b, 2, s, SSNS * 4 / 2); /* 50% */
    }
    wb_fn(&b, 1, 900); /* fn 1 has more MPI time: slot 0 */
    wb_fn(&b, 2, 100);
    assert_int_equal(mw_model_add_window(m, wb_done(&b)), 0);
    assert_int_equal(mw_model_slot(m, 1), 0);
    assert_int_equal(mw_model_slot(m, 2), 1);

    float out[10 * (MW_PALETTE + 2)];
    assert_int_equal(mw_timeline_columns(m, 0.0, 0.1, 10, out), 10);
    for (int c = 0; c < 10; c++) {
        assert_float_equal(FCOL(out, c, 0), 0.25f, 1e-5);
        assert_float_equal(FCOL(out, c, 1), 0.75f, 1e-5);
        for (int k = 2; k <= MW_PALETTE; k++)
            assert_float_equal(FCOL(out, c, k), 0.75f, 1e-5);
        assert_float_equal(FCOL(out, c, MW_PALETTE + 1), 1.0f, 0);
    }

    /* Fractions use each window's ranks_reporting, and the stacked total is clamped to 1. */
    wb_init(&b, 1, 2, 64, 1);
    for (unsigned s = 0; s < SUBS; s++) {
        wb_occ(&b, 1, s, SSNS * 2 * 8 / 10); /* 80% of 2 ranks */
        wb_occ(&b, 2, s, SSNS * 2 / 2);      /* 50% */
    }
    assert_int_equal(mw_model_add_window(m, wb_done(&b)), 0);
    assert_int_equal(mw_timeline_columns(m, 0.1, 0.2, 10, out), 10);
    assert_float_equal(FCOL(out, 3, 0), 0.8f, 1e-5);
    assert_float_equal(FCOL(out, 3, 1), 1.0f, 1e-6);
    assert_float_equal(FCOL(out, 3, MW_PALETTE), 1.0f, 1e-6);

    /* A function without a slot stacks in the grey layer. */
    assert_int_equal(mw_model_slot(m, 77), MW_PALETTE);
    mw_model_free(m);
}

/* Columns wider than a sub-slot average the sub-slots they cover (weighted by overlap); a
 * column narrower than a sub-slot takes its value. */
static void test_columns_average(void **state)
{
    (void)state;
    mw_model_t *m = mw_model_new(0);
    wb_t b;
    wb_init(&b, 0, 1, 64, 1);
    for (unsigned s = 0; s < SUBS; s++)
        wb_occ(&b, 1, s, SSNS * s / 10); /* sub-slot s: s / 10 */
    wb_fn(&b, 1, 1);
    assert_int_equal(mw_model_add_window(m, wb_done(&b)), 0);

    float out[40 * (MW_PALETTE + 2)];
    assert_int_equal(mw_timeline_columns(m, 0.0, 0.1, 5, out), 5);
    for (int c = 0; c < 5; c++)
        assert_float_equal(FCOL(out, c, 0), (4 * c + 1) / 20.0f, 1e-5);

    assert_int_equal(mw_timeline_columns(m, 0.0, 0.1, 4, out), 4);
    /* Column 0 covers 2.5 sub-slots: (0 * 1 + 0.1 * 1 + 0.2 * 0.5) / 2.5. */
    assert_float_equal(FCOL(out, 0, 0), 0.08f, 1e-5);

    assert_int_equal(mw_timeline_columns(m, 0.0, 0.1, 40, out), 40);
    for (int c = 0; c < 40; c++)
        assert_float_equal(FCOL(out, c, 0), (c / 4) / 10.0f, 1e-5);

    /* Several windows per column: the whole-window average. */
    assert_int_equal(mw_timeline_columns(m, 0.0, 0.4, 1, out), 1);
    assert_float_equal(FCOL(out, 0, 0), 0.45f, 1e-5);
    mw_model_free(m);
}

/* Columns over windows that are not cached are gaps. */
static void test_gaps(void **state)
{
    (void)state;
    mw_model_t *m = mw_model_new(0);
    for (uint64_t k = 0; k <= 2; k += 2) {
        wb_t b;
        wb_init(&b, k, 1, 64, 1);
        for (unsigned s = 0; s < SUBS; s++)
            wb_occ(&b, 1, s, SSNS / 2);
        wb_fn(&b, 1, 1);
        assert_int_equal(mw_model_add_window(m, wb_done(&b)), 0);
    }
    float out[6 * (MW_PALETTE + 2)];
    assert_int_equal(mw_timeline_columns(m, 0.0, 0.3, 6, out), 4);
    const float flags[6] = {1, 1, 0, 0, 1, 1};
    for (int c = 0; c < 6; c++) {
        assert_float_equal(FCOL(out, c, MW_PALETTE + 1), flags[c], 0);
        assert_float_equal(FCOL(out, c, 0), flags[c] * 0.5f, 1e-5);
    }
    /* Before the first window and after the last: gaps too. */
    assert_int_equal(mw_timeline_columns(m, -1.0, -0.5, 6, out), 0);
    assert_int_equal(mw_timeline_columns(m, 5.0, 6.0, 6, out), 0);
    mw_model_free(m);
}

/* ---- scales ------------------------------------------------------------------------------- */

static int has_label(const mw_tick_t *t, int n, const char *label)
{
    for (int i = 0; i < n; i++)
        if (strcmp(t[i].label, label) == 0)
            return 1;
    return 0;
}

static void test_scales_and_ticks(void **state)
{
    (void)state;
    mw_rect_t r = {100, 50, 1000, 400};
    /* Round trips. */
    for (double t = -3.0; t <= 7.0; t += 0.37) {
        double x = mw_x_of_time(&r, -3.0, 7.0, t);
        assert_float_equal(mw_time_of_x(&r, -3.0, 7.0, x), t, 1e-9);
    }
    assert_float_equal(mw_x_of_time(&r, 0, 10, 5), 600.0, 1e-9);
    for (double d = 1e3; d <= 1e9; d *= 3.7) {
        double y = mw_y_of_duration(&r, 1e3, 1e9, d);
        assert_float_equal(mw_duration_of_y(&r, 1e3, 1e9, y) / d, 1.0, 1e-9);
    }
    assert_float_equal(mw_y_of_duration(&r, 1e3, 1e9, 1e3), 450.0, 1e-9); /* bottom */
    assert_float_equal(mw_y_of_duration(&r, 1e3, 1e9, 1e9), 50.0, 1e-9);  /* top */
    assert_float_equal(mw_y_of_duration(&r, 1e3, 1e9, 1e6), 250.0, 1e-9);

    mw_tick_t t[64];
    int n = mw_time_ticks(0.0, 10.0, &r, t, 64);
    assert_int_equal(n, 6);
    for (int i = 0; i < n; i++) {
        assert_float_equal(t[i].value, 2.0 * i, 1e-12);
        assert_int_equal(t[i].px, 100 + 200 * i);
    }
    assert_string_equal(t[0].label, "0 s");
    assert_string_equal(t[1].label, "2 s");
    n = mw_time_ticks(0.0, 0.01, &r, t, 64);
    assert_true(has_label(t, n, "2 ms"));
    n = mw_time_ticks(0.0, 1e-5, &r, t, 64);
    assert_true(has_label(t, n, "2 \xc2\xb5s"));
    n = mw_time_ticks(0.0, 0.0009, &r, t, 64); /* 100 µs steps */
    assert_true(has_label(t, n, "0.3 ms"));
    n = mw_time_ticks(0.0, 0.00009, &r, t, 64); /* 10 µs steps */
    assert_true(has_label(t, n, "30 \xc2\xb5s"));
    n = mw_time_ticks(0.0, 4.5, &r, t, 64); /* 0.5 s steps */
    assert_true(has_label(t, n, "1.5 s"));
    n = mw_time_ticks(0.0, 0.009, &r, t, 64); /* 1 ms steps */
    assert_true(has_label(t, n, "3 ms"));
    n = mw_time_ticks(0.0, 0.0045, &r, t, 64); /* 0.5 ms steps */
    assert_true(has_label(t, n, "1.5 ms"));
    /* Late in a long run, fine steps are labelled in seconds. */
    n = mw_time_ticks(5000.0, 5000.0009, &r, t, 64);
    assert_true(n >= 2);
    assert_true(has_label(t, n, "5000.0002 s"));
    /* Positions of ticks match the scale. */
    for (int i = 0; i < n; i++)
        assert_int_equal(t[i].px, (int)lround(mw_x_of_time(&r, 5000.0, 5000.0009, t[i].value)));

    n = mw_duration_ticks(1e3, 1e9, &r, t, 64);
    assert_int_equal(n, 7);
    const char *want[7] = {"1 \xc2\xb5s", "10 \xc2\xb5s", "100 \xc2\xb5s", "1 ms", "10 ms",
                           "100 ms",      "1 s"};
    for (int i = 0; i < 7; i++) {
        assert_string_equal(t[i].label, want[i]);
        assert_int_equal(t[i].px, (int)lround(mw_y_of_duration(&r, 1e3, 1e9, t[i].value)));
    }
    assert_int_equal(t[0].px, 450);
    assert_int_equal(t[6].px, 50);
    n = mw_duration_ticks(1e3, 6e4, &r, t, 64); /* under two decades: 1-2-5 */
    assert_true(has_label(t, n, "2 \xc2\xb5s"));
    assert_true(has_label(t, n, "50 \xc2\xb5s"));
    assert_false(has_label(t, n, "100 \xc2\xb5s"));
    n = mw_duration_ticks(100, 1e6, &r, t, 64);
    assert_string_equal(t[0].label, "100 ns");
    n = mw_duration_ticks(1e8, 1e11, &r, t, 64);
    assert_true(has_label(t, n, "1 s"));
    assert_true(has_label(t, n, "100 s"));

    char buf[32];
    mw_format_duration(12.5e6, buf, sizeof buf);
    assert_string_equal(buf, "12.5 ms");
    mw_format_duration(1234, buf, sizeof buf);
    assert_string_equal(buf, "1.23 \xc2\xb5s");
    mw_format_duration(999.7, buf, sizeof buf);
    assert_string_equal(buf, "1.00 \xc2\xb5s");
    mw_format_duration(2e9, buf, sizeof buf);
    assert_string_equal(buf, "2.00 s");
    mw_format_duration(5, buf, sizeof buf);
    assert_string_equal(buf, "5.00 ns");
    mw_format_duration(456789, buf, sizeof buf);
    assert_string_equal(buf, "457 \xc2\xb5s");
    mw_format_duration(0, buf, sizeof buf);
    assert_string_equal(buf, "0 ns");
}

/* ---- transfer functions ------------------------------------------------------------------- */

static void test_transfer(void **state)
{
    (void)state;
    const float o = 0.15f;
    for (int t = MW_TRANSFER_LINEAR; t <= MW_TRANSFER_LOG; t++) {
        assert_float_equal(mw_transfer(t, 0.0f, 100.0f, o), 0.0f, 0);
        assert_float_equal(mw_transfer(t, 5.0f, 0.0f, o), 0.0f, 0);
        assert_float_equal(mw_transfer(t, 1e-6f, 1e6f, o), o, 1e-4);
        assert_float_equal(mw_transfer(t, 1e6f, 1e6f, o), 1.0f, 1e-6);
        assert_float_equal(mw_transfer(t, 2e6f, 1e6f, o), 1.0f, 1e-6);
        float prev = 0;
        for (float d = 0.01f; d <= 1e6f; d *= 1.7f) {
            float v = mw_transfer(t, d, 1e6f, o);
            assert_true(v >= o && v <= 1.0f);
            assert_true(v >= prev);
            prev = v;
        }
    }
    /* The log map lifts what the linear one leaves at o_min. */
    assert_true(mw_transfer(MW_TRANSFER_LOG, 1000.0f, 1e6f, o) >
                mw_transfer(MW_TRANSFER_LINEAR, 1000.0f, 1e6f, o) + 0.3f);
    assert_float_equal(mw_transfer(MW_TRANSFER_LINEAR, 500.0f, 1000.0f, 0.0f), 0.5f, 1e-6);
}

/* ---- density ------------------------------------------------------------------------------ */

static double sum(const float *a, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += a[i];
    return s;
}

/* One isolated long call next to a cluster of 1e9 calls: it is at its exact pixel with D = 1
 * (not counted twice), and visible with at least o_min although Dmax is 1e6. */
static void test_density_outlier(void **state)
{
    (void)state;
    mw_model_t *m = mw_model_new(0);
    mw_model_set_job(m, make_job("j", 4, WNS));
    mw_model_set_extent(m, 0, 0);
    const uint64_t start = 40000000, dur = (uint64_t)1 << 25; /* ends at 73.55 ms */
    wb_t b;
    wb_init(&b, 0, 4, 1, 8);
    wb_cell(&b, 1, 3, 10, 1, 1000000000ull); /* cluster: sub-slot 3, bin 10 */
    wb_cell(&b, 1, 3, 10, 0, 1000000000ull);
    wb_cell(&b, 2, 7, 25, 1, 1); /* the long call's own cells */
    wb_cell(&b, 2, 4, 25, 0, 1);
    wb_call(&b, 2, 2, start, dur, 4096, 1);
    wb_fn(&b, 1, 1000);
    wb_fn(&b, 2, 10);
    assert_int_equal(mw_model_add_window(m, wb_done(&b)), 0);

    double d0, d1;
    mw_density_range(m, 0.0, 0.1, &d0, &d1);
    /* Bins 10 to 25 with half a bin of room on each side. */
    assert_float_equal(d0, 1024.0 * M_SQRT1_2, 1e-6);
    assert_float_equal(d1, 67108864.0 * M_SQRT2, 1e-3);
    d0 = 1024.0;
    d1 = 67108864.0;

    /* 1000 x 160: one sub-slot is 100 columns, one log2 bin 10 rows. */
    enum { W = 1000, H = 160 };
    float *D = malloc(sizeof(float) * W * H), *C = malloc(sizeof(float) * W * H * 3);
    mw_view_t v;
    mw_view_init(&v);
    v.repr = MW_REPR_END;
    float dmax = mw_density_bin(m, &v, 0.0, 0.1, d0, d1, W, H, D, C);
    assert_float_equal(dmax, 1e6f, 1.0f);
    int x = (int)((start + dur) * 1e-5), y = 150;
    assert_int_equal(x, 735);
    size_t i = (size_t)y * W + x;
    /* A recorded call is a 2 x 2 dot of density 1. */
    assert_float_equal(D[i], 1.0f, 1e-6);
    assert_float_equal(D[i + 1] + D[i + W] + D[i + W + 1], 3.0f, 1e-6);
    assert_float_equal(sum(D, (size_t)W * H), 1e9 + 4, 1e9 * 1e-5);
    float op = mw_transfer(MW_TRANSFER_LOG, D[i], dmax, v.o_min);
    assert_true(op >= v.o_min);
    assert_true(mw_transfer(MW_TRANSFER_LINEAR, D[i], dmax, v.o_min) >= v.o_min);
    mw_rgb_t c2 = mw_model_color(m, 2);
    assert_float_equal(C[3 * i], c2.r, 1e-5);
    assert_float_equal(C[3 * i + 1], c2.g, 1e-5);
    assert_float_equal(C[3 * i + 2], c2.b, 1e-5);
    /* Nothing else around it. */
    assert_float_equal(D[i - 1] + D[i - W] + D[i + 2] + D[i + 2 * W], 0.0f, 0);
    /* The cluster: sub-slot 3 (columns 300..399), bin 10 (rows 0..9), 1e9 / 1000 per pixel. */
    assert_float_equal(D[5 * W + 350], 1e6f, 1.0f);
    assert_float_equal(D[5 * W + 299] + D[5 * W + 400] + D[10 * W + 350], 0.0f, 0);

    /* START: the long call is at its start, the cluster's start cells are counted. */
    v.repr = MW_REPR_START;
    mw_density_bin(m, &v, 0.0, 0.1, d0, d1, W, H, D, C);
    assert_float_equal(D[(size_t)y * W + 400], 1.0f, 1e-6);
    assert_float_equal(sum(D, (size_t)W * H), 1e9 + 4, 1e9 * 1e-5);

    /* Highlighting function 1: the long call of function 2 is dimmed to 1/8 in C. */
    v.repr = MW_REPR_END;
    v.highlight_fn = 1;
    mw_density_bin(m, &v, 0.0, 0.1, d0, d1, W, H, D, C);
    assert_float_equal(C[3 * i], c2.r / 8, 1e-5);
    mw_rgb_t c1 = mw_model_color(m, 1);
    assert_float_equal(C[3 * (5 * W + 350)], c1.r, 1e-5);
    /* Highlighting a rank dims the cells and the other ranks' calls, not its own. */
    v.highlight_fn = 0;
    v.highlight_rank = 2;
    mw_density_bin(m, &v, 0.0, 0.1, d0, d1, W, H, D, C);
    assert_float_equal(C[3 * i], c2.r, 1e-5);
    assert_float_equal(C[3 * (5 * W + 350)], c1.r / 8, 1e-5);
    free(D);
    free(C);
    mw_model_free(m);
}

/* START and END spread every count of the cells inside the plot: the total is conserved. A
 * start cell with a negative sub-slot is drawn in the earlier window. */
static void test_density_conservation(void **state)
{
    (void)state;
    mw_model_t *m = mw_model_new(0);
    uint64_t total_end = 0, total_start = 0;
    for (uint64_t k = 0; k < 2; k++) {
        wb_t b;
        wb_init(&b, k, 4, 1, 64);
        for (unsigned s = 0; s < SUBS; s++) {
            wb_cell(&b, 1 + s % 3, (int)s, 12 + s, 1, 10 + s);
            total_end += 10 + s;
            wb_cell(&b, 1 + s % 3, (int)s - 3, 12 + s, 0, 7 + s);
            total_start += 7 + s;
        }
        wb_fn(&b, 1, 10);
        assert_int_equal(mw_model_add_window(m, wb_done(&b)), 0);
    }
    /* The negative start sub-slots of window 0 are before the plot: leave them out. */
    total_start -= 7 + 8 + 9;
    enum { W = 333, H = 97 };
    float *D = malloc(sizeof(float) * W * H), *C = malloc(sizeof(float) * W * H * 3);
    double d0 = 2048, d1 = (double)(1ull << 23);
    mw_view_t v;
    mw_view_init(&v);
    v.repr = MW_REPR_END;
    mw_density_bin(m, &v, 0.0, 0.2, d0, d1, W, H, D, C);
    assert_float_equal(sum(D, (size_t)W * H), (double)total_end, total_end * 1e-5);
    /* C is the average color where D > 0. */
    for (size_t i = 0; i < (size_t)W * H; i++)
        if (D[i] > 0)
            assert_true(C[3 * i] > 0 && C[3 * i] <= 1.0001f);
    v.repr = MW_REPR_START;
    mw_density_bin(m, &v, 0.0, 0.2, d0, d1, W, H, D, C);
    assert_float_equal(sum(D, (size_t)W * H), (double)total_start, total_start * 1e-5);

    /* Window 1's start cell at sub-slot -3 is in window 0's sub-slot 7: x from 70 to 80 ms. */
    mw_model_t *m2 = mw_model_new(0);
    wb_t b;
    wb_init(&b, 0, 1, 1, 1);
    assert_int_equal(mw_model_add_window(m2, wb_done(&b)), 0);
    wb_init(&b, 1, 1, 1, 4);
    wb_cell(&b, 1, -3, 20, 0, 5);
    assert_int_equal(mw_model_add_window(m2, wb_done(&b)), 0);
    enum { W2 = 200, H2 = 20 };
    float D2[W2 * H2], C2[W2 * H2 * 3];
    mw_density_bin(m2, &v, 0.0, 0.2, 1 << 18, 1 << 22, W2, H2, D2, C2); /* bin 20: rows 10-14 */
    /* Five calls in a cell of 10 x 5 pixels are five points of density 1 inside it. */
    double inside = 0;
    for (int r = 10; r < 15; r++)
        for (int c = 70; c < 80; c++) {
            inside += D2[r * W2 + c];
            assert_true(D2[r * W2 + c] == 0.0f || D2[r * W2 + c] >= 1.0f);
        }
    assert_float_equal(inside, 5.0, 1e-4);
    assert_float_equal(sum(D2, W2 * H2), 5.0, 1e-4);
    mw_model_free(m2);
    free(D);
    free(C);
    mw_model_free(m);
}

/* LINES: a cell is a horizontal line at its bin's geometric mean ending mid sub-slot; ARCS:
 * an arc from the bottom to that height. */
static void test_density_lines_arcs(void **state)
{
    (void)state;
    mw_model_t *m = mw_model_new(0);
    wb_t b;
    wb_init(&b, 0, 1, 1, 4);
    wb_cell(&b, 1, 8, 24, 1, 3); /* ends mid sub-slot 8 (85 ms), lasts ~23.7 ms */
    assert_int_equal(mw_model_add_window(m, wb_done(&b)), 0);
    enum { W = 1000, H = 100 };
    float *D = malloc(sizeof(float) * W * H), *C = malloc(sizeof(float) * W * H * 3);
    mw_view_t v;
    mw_view_init(&v);
    v.repr = MW_REPR_LINES;
    /* d range 2^20 .. 2^30: 10 rows per bin, bin 24's geometric mean at row 45. */
    mw_density_bin(m, &v, 0.0, 0.1, 1 << 20, 1 << 30, W, H, D, C);
    double d = ldexp(sqrt(2.0), 24) * 1e-5; /* columns */
    int xa = (int)floor(850 - d), xe = 850;
    assert_float_equal(D[45 * W + xe], 3.0f, 0);
    assert_float_equal(D[45 * W + xa], 3.0f, 0);
    assert_float_equal(D[45 * W + (xa + xe) / 2], 3.0f, 0);
    assert_float_equal(D[45 * W + xa - 1] + D[45 * W + xe + 1], 0.0f, 0);
    assert_float_equal(sum(D, (size_t)W * H), 3.0 * (xe - xa + 1), 1e-3);

    v.repr = MW_REPR_ARCS;
    mw_density_bin(m, &v, 0.0, 0.1, 1 << 20, 1 << 30, W, H, D, C);
    assert_true(D[0 * W + xa] > 0 || D[0 * W + xa + 1] > 0); /* foot at the start */
    assert_true(D[0 * W + xe] > 0 || D[0 * W + xe - 1] > 0); /* foot at the end */
    assert_true(D[45 * W + (xa + xe) / 2] > 0);              /* apex */
    assert_float_equal(D[60 * W + (xa + xe) / 2], 0.0f, 0);  /* nothing above it */
    assert_float_equal(D[20 * W + (xa + xe) / 2], 0.0f, 0);  /* hollow */
    free(D);
    free(C);
    mw_model_free(m);
}

/* 1 million calls (100 windows of 5,000 end cells and 5,000 start cells counting 2 calls
 * each), binned at 1280 x 400. */
static void test_density_speed(void **state)
{
    (void)state;
    mw_model_t *m = mw_model_new(0);
    srand(7);
    for (uint64_t k = 0; k < 100; k++) {
        wb_t b;
        wb_init(&b, k, 64, 1, 10000);
        for (int i = 0; i < 5000; i++) {
            unsigned fn = 1 + (unsigned)(rand() % 20), sub = (unsigned)(rand() % SUBS);
            unsigned bin = 10 + (unsigned)(rand() % 20);
            wb_cell(&b, fn, (int)sub, bin, 1, 2);
            wb_cell(&b, fn, (int)sub - (rand() % 3), bin, 0, 2);
        }
        for (int i = 0; i < 32; i++)
            wb_call(&b, (uint32_t)i, 1, k * WNS + (uint64_t)i * 1000000, 1u << 28, 0, -1);
        wb_fn(&b, 1 + (unsigned)k % 20, 1000);
        assert_int_equal(mw_model_add_window(m, wb_done(&b)), 0);
    }
    enum { W = 1280, H = 400 };
    float *D = malloc(sizeof(float) * W * H), *C = malloc(sizeof(float) * W * H * 3);
    mw_view_t v;
    mw_view_init(&v);
    double d0, d1;
    mw_density_range(m, 0.0, 10.0, &d0, &d1);
    for (int r = MW_REPR_START; r <= MW_REPR_ARCS; r++) {
        v.repr = (mw_repr_t)r;
        /* The best of five passes: other jobs on a loaded 2-core machine slow some passes by
         * whole time slices, but rarely all five, while a lost optimization slows every one. */
        double ms = 1e30;
        float dmax = 0;
        for (int pass = 0; pass < 5; pass++) {
            struct timespec a, z;
            clock_gettime(CLOCK_MONOTONIC, &a);
            float d = mw_density_bin(m, &v, 0.0, 10.0, d0, d1, W, H, D, C);
            clock_gettime(CLOCK_MONOTONIC, &z);
            double t = (z.tv_sec - a.tv_sec) * 1e3 + (z.tv_nsec - a.tv_nsec) / 1e6;
            assert_true(pass == 0 || d == dmax); /* the same picture every time */
            dmax = d;
            ms = t < ms ? t : ms;
        }
        printf("density_bin repr %d: 1e6 calls at %dx%d in %.1f ms, best of 5 (Dmax %.0f)\n", r, W,
               H, ms, dmax);
        assert_true(dmax > 0);
        /* A bound ten times the goal (30 ms) catches a lost optimization without failing on
         * a busy shared machine; MW_SKIP_TIMING=1 skips it (valgrind, sanitizers). */
        if (!getenv("MW_SKIP_TIMING") && r != MW_REPR_ARCS) /* arcs: least scalable */
            assert_true(ms < 300.0);
    }
    free(D);
    free(C);
    mw_model_free(m);
}

/* ---- colors and legend -------------------------------------------------------------------- */

static void test_palette_and_legend(void **state)
{
    (void)state;
    mw_model_t *m = mw_model_new(0);
    wb_t b;
    wb_init(&b, 0, 1, 1, 1);
    wb_fn(&b, 1, 100);
    wb_fn(&b, 2, 50);
    assert_int_equal(mw_model_add_window(m, wb_done(&b)), 0);
    assert_int_equal(mw_model_slot(m, 1), 0);
    assert_int_equal(mw_model_slot(m, 2), 1);
    mw_rgb_t c1 = mw_model_color(m, 1), c2 = mw_model_color(m, 2);

    /* fn 2 becomes the biggest: it keeps its color, the legend puts it first. */
    wb_init(&b, 1, 1, 1, 1);
    wb_fn(&b, 2, 1000);
    assert_int_equal(mw_model_add_window(m, wb_done(&b)), 0);
    assert_int_equal(mw_model_slot(m, 1), 0);
    assert_int_equal(mw_model_slot(m, 2), 1);
    mw_legend_entry_t e[MW_LEGEND_MAX];
    int n = mw_model_legend(m, e, MW_LEGEND_MAX);
    assert_int_equal(n, 2);
    assert_int_equal(e[0].fn, 2);
    assert_int_equal(e[1].fn, 1);
    assert_float_equal(e[0].share, 1050.0 / 1150.0, 1e-9);
    assert_float_equal(e[0].color.r, c2.r, 0);
    assert_float_equal(e[1].color.g, c1.g, 0);
    assert_false(c1.r == c2.r && c1.g == c2.g && c1.b == c2.b);

    /* Fill every slot; later functions are grey and listed as "other", last. */
    wb_init(&b, 2, 1, 1, 1);
    for (unsigned fn = 3; fn <= 12; fn++)
        wb_fn(&b, fn, 10 * fn);
    assert_int_equal(mw_model_add_window(m, wb_done(&b)), 0);
    for (unsigned fn = 5; fn <= 12; fn++)
        assert_true(mw_model_slot(m, fn) < MW_PALETTE);
    /* The 8 free slots went to the newcomers with the most time, 12 first. */
    assert_int_equal(mw_model_slot(m, 12), 2);
    assert_int_equal(mw_model_slot(m, 3), MW_PALETTE);
    assert_int_equal(mw_model_slot(m, 4), MW_PALETTE);
    mw_rgb_t g = mw_model_color(m, 3);
    assert_float_equal(g.r, 0.6f, 0);
    assert_float_equal(g.g, 0.6f, 0);
    assert_float_equal(g.b, 0.6f, 0);
    n = mw_model_legend(m, e, MW_LEGEND_MAX);
    assert_int_equal(n, MW_LEGEND_MAX);
    assert_int_equal(e[n - 1].fn, 0);
    assert_float_equal(e[n - 1].share, 70.0 / (1150.0 + 750.0), 1e-9);
    double s = 0;
    for (int i = 0; i < n; i++) {
        s += e[i].share;
        if (i > 0 && i < n - 1)
            assert_true(e[i].share <= e[i - 1].share);
    }
    assert_float_equal(s, 1.0, 1e-9);
    assert_int_equal(mw_model_legend(m, e, 3), 3);
    mw_model_free(m);
}

/* ---- picking ------------------------------------------------------------------------------ */

static void test_pick(void **state)
{
    (void)state;
    mw_model_t *m = mw_model_new(0);
    mw_model_set_job(m, make_job("pick", 4, WNS));
    const uint64_t start = 40000000, dur = (uint64_t)1 << 25;
    wb_t b;
    wb_init(&b, 0, 4, 1, 8);
    wb_cell(&b, 1, 3, 10, 1, 500);
    wb_cell(&b, 3, 3, 10, 1, 20);
    wb_cell(&b, 2, 7, 25, 1, 1);
    wb_call(&b, 3, 2, start, dur, 4096, 1);
    wb_fn(&b, 1, 1000);
    wb_fn(&b, 2, 10);
    assert_int_equal(mw_model_add_window(m, wb_done(&b)), 0);

    mw_layout_t l;
    mw_layout(&l, 1280, 800, 1.0f, 1, 1, 3);
    mw_view_t v;
    mw_view_init(&v);
    v.follow = 0;
    v.t0 = 0;
    v.t1 = 0.1;
    v.sel0 = 0.0;
    v.sel1 = 0.1;
    double d0, d1;
    mw_density_range(m, 0.0, 0.1, &d0, &d1);
    const mw_rect_t *r = &l.density;
    int x = (int)floor(mw_x_of_time(r, 0.0, 0.1, (start + dur) * 1e-9));
    int y = (int)floor(mw_y_of_duration(r, d0, d1, (double)dur));
    mw_pick_t p = mw_pick(m, &v, &l, x + 2, y - 1, 4);
    assert_int_equal(p.kind, MW_PICK_CALL);
    assert_int_equal(p.rank, 3);
    assert_int_equal(p.fn, 2);
    assert_int_equal(p.start_ns, start);
    assert_int_equal(p.duration_ns, dur);
    assert_int_equal(p.bytes, 4096);
    assert_int_equal(p.peer, 1);
    assert_string_equal(p.host, "node02");
    /* Out of the radius: the cell under the pixel (the long call's own, by its end), and
     * nothing in empty space. */
    p = mw_pick(m, &v, &l, x + 30, y, 4);
    assert_int_equal(p.kind, MW_PICK_CELL);
    assert_int_equal(p.fn, 2);
    assert_int_equal(p.cell_count, 1);
    assert_int_equal(p.cell_t0_ns, 70000000);
    p = mw_pick(m, &v, &l, (int)mw_x_of_time(r, 0.0, 0.1, 0.055), y, 4);
    assert_int_equal(p.kind, MW_PICK_NONE);

    /* The densest cell under a pixel of sub-slot 3, bin 10. */
    int cx = (int)mw_x_of_time(r, 0.0, 0.1, 0.035);
    int cy = (int)mw_y_of_duration(r, d0, d1, 1500.0);
    p = mw_pick(m, &v, &l, cx, cy, 4);
    assert_int_equal(p.kind, MW_PICK_CELL);
    assert_int_equal(p.fn, 1);
    assert_int_equal(p.cell_count, 500);
    assert_int_equal(p.cell_t0_ns, 30000000);
    assert_int_equal(p.cell_t1_ns, 40000000);
    assert_int_equal(p.cell_d0_ns, 1024);
    assert_int_equal(p.cell_d1_ns, 2048);

    /* LINES: the call is picked along its line. */
    v.repr = MW_REPR_LINES;
    int xm = (int)mw_x_of_time(r, 0.0, 0.1, (start + dur / 2) * 1e-9);
    p = mw_pick(m, &v, &l, xm, y, 3);
    assert_int_equal(p.kind, MW_PICK_CALL);
    assert_int_equal(p.rank, 3);

    /* The legend: the heading row is nothing, the rows are the entries in order. */
    p = mw_pick(m, &v, &l, l.legend.x + 5, l.legend.y + 2, 4);
    assert_int_equal(p.kind, MW_PICK_NONE);
    p = mw_pick(m, &v, &l, l.legend.x + 5, l.legend.y + l.legend_row_h + 2, 4);
    assert_int_equal(p.kind, MW_PICK_LEGEND);
    assert_int_equal(p.fn, 1);
    p = mw_pick(m, &v, &l, l.legend.x + 5, l.legend.y + 2 * l.legend_row_h + 2, 4);
    assert_int_equal(p.kind, MW_PICK_LEGEND);
    assert_int_equal(p.fn, 2);
    p = mw_pick(m, &v, &l, l.legend.x + 5, l.legend.y + 3 * l.legend_row_h + 2, 4);
    assert_int_equal(p.kind, MW_PICK_NONE);
    mw_model_free(m);
}

/* ---- paging, eviction, job ---------------------------------------------------------------- */

static void test_paging(void **state)
{
    (void)state;
    mw_model_t *m = mw_model_new(0);
    mw_model_set_job(m, make_job("page", 4, WNS));
    uint64_t a, z;
    assert_int_equal(mw_model_wanted(m, &a, &z, 16), 0); /* no extent, no need */
    mw_model_set_extent(m, 100, 199);
    assert_int_equal(mw_model_origin_ns(m), 100 * WNS);
    mw_model_need(m, 0.0, 5.0, 4.5, 5.0); /* windows 100..149, call view 145..149 */
    assert_int_equal(mw_model_busy(m), 0);
    assert_int_equal(mw_model_wanted(m, &a, &z, 16), 1);
    assert_int_equal(a, 145);
    assert_int_equal(z, 149);
    assert_int_equal(mw_model_busy(m), 1);
    uint64_t expect[3][2] = {{100, 115}, {116, 131}, {132, 144}};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(mw_model_wanted(m, &a, &z, 16), 1);
        assert_int_equal(a, expect[i][0]);
        assert_int_equal(z, expect[i][1]);
    }
    assert_int_equal(mw_model_wanted(m, &a, &z, 16), 0); /* all asked, none answered */

    /* Answered without the windows: asked again. Answered with them: not. */
    mw_model_answered(m, 145, 149);
    assert_int_equal(mw_model_wanted(m, &a, &z, 16), 1);
    assert_int_equal(a, 145);
    assert_int_equal(z, 149);
    for (uint64_t k = 100; k <= 115; k++)
        assert_int_equal(mw_model_add_window(m, plain_window(k)), 0);
    mw_model_answered(m, 100, 115);
    assert_int_equal(mw_model_wanted(m, &a, &z, 16), 0);
    mw_model_answered(m, 116, 131);
    mw_model_answered(m, 132, 144);
    mw_model_answered(m, 145, 149);
    assert_int_equal(mw_model_busy(m), 0);
    /* A cached window in the middle splits what is missing. */
    assert_int_equal(mw_model_add_window(m, plain_window(147)), 0);
    assert_int_equal(mw_model_wanted(m, &a, &z, 16), 1);
    assert_int_equal(a, 145);
    assert_int_equal(z, 146);
    assert_int_equal(mw_model_wanted(m, &a, &z, 16), 1);
    assert_int_equal(a, 148);
    assert_int_equal(z, 149);

    /* Never outside the extent. */
    mw_model_need(m, -50.0, 50.0, -50.0, 50.0);
    int asked = 0;
    while (mw_model_wanted(m, &a, &z, 1000) == 1) {
        assert_true(a >= 100 && z <= 199 && a <= z);
        assert_true(z - a + 1 <= 1000);
        asked++;
    }
    assert_true(asked >= 2);
    mw_model_free(m);
}

static void test_eviction(void **state)
{
    (void)state;
    const size_t budget = 1 << 20;
    mw_model_t *m = mw_model_new(budget);
    mw_model_set_job(m, make_job("evict", 4, WNS));
    mw_model_set_extent(m, 0, 9999);
    mw_model_need(m, 500.0, 510.0, 509.0, 510.0); /* windows 5000..5099 */
    for (uint64_t k = 0; k < 10000; k++) {
        wb_t b;
        wb_init(&b, k, 4, 64, 128);
        for (unsigned i = 0; i < 50; i++)
            wb_occ(&b, 1 + i % 5, i % SUBS, 1000);
        for (unsigned i = 0; i < 100; i++)
            wb_cell(&b, 1 + i % 5, (int)(i % SUBS), 10 + i % 20, i & 1, 3);
        wb_fn(&b, 1, 5);
        assert_int_equal(mw_model_add_window(m, wb_done(&b)), 0);
        assert_true(mw_model_cached_bytes(m) <= budget);
    }
    for (uint64_t k = 5000; k < 5100; k++)
        assert_non_null(mw_model_window(m, k));
    assert_null(mw_model_window(m, 0));
    assert_null(mw_model_window(m, 4000));
    assert_non_null(mw_model_window(m, 9999)); /* the newest, just added */
    assert_true(mw_model_cached_windows(m) > 100);
    mw_model_stats_t st;
    mw_model_stats(m, &st);
    assert_int_equal(st.windows, 10000);
    assert_int_equal(st.newest, 9999);
    assert_int_equal(st.ranks, 4);
    /* Nothing of the needed range is missing. */
    uint64_t a, z;
    mw_model_need(m, 500.0, 510.0, 509.0, 510.0);
    assert_int_equal(mw_model_wanted(m, &a, &z, 64), 0);
    mw_model_free(m);
}

/* The cache counts every field of a window: at 100,000 ranks the per-rank detail (Window.rf_*:
 * 2 million entries, 64 MB) is most of a window, and a cache that counted only the arrays it
 * listed by hand held five times its budget. */
static void test_cache_counts_rank_detail(void **state)
{
    (void)state;
    const size_t n = 200000;
    mw_model_t *m = mw_model_new(0);
    mw_model_set_job(m, make_job("detail", 4, WNS));
    Mpiwatch__Window *w = plain_window(7);
    size_t base = mw_model_cached_bytes(m);
    Mpiwatch__Window *bare = plain_window(8);
    assert_int_equal(mw_model_add_window(m, bare), 0);
    size_t bare_bytes = mw_model_cached_bytes(m) - base;
    w->rf_rank = calloc(n, sizeof *w->rf_rank);
    w->rf_fn = calloc(n, sizeof *w->rf_fn);
    w->rf_count = calloc(n, sizeof *w->rf_count);
    w->rf_ns = calloc(n, sizeof *w->rf_ns);
    w->rf_bytes = calloc(n, sizeof *w->rf_bytes);
    assert_true(w->rf_rank && w->rf_fn && w->rf_count && w->rf_ns && w->rf_bytes);
    for (size_t i = 0; i < n; i++) {
        w->rf_rank[i] = (uint32_t)(i % 4);
        w->rf_fn[i] = 1;
    }
    w->n_rf_rank = w->n_rf_fn = w->n_rf_count = w->n_rf_ns = w->n_rf_bytes = n;
    size_t before = mw_model_cached_bytes(m);
    assert_int_equal(mw_model_add_window(m, w), 0);
    assert_non_null(mw_model_window(m, 7));
    size_t added = mw_model_cached_bytes(m) - before;
    assert_true(added >= bare_bytes + n * (4 + 4 + 8 + 8 + 8));
    assert_true(added < bare_bytes + n * (4 + 4 + 8 + 8 + 8) + 4096);
    mw_model_free(m);
}

static void test_job_change_and_grid(void **state)
{
    (void)state;
    mw_model_t *m = mw_model_new(0);
    /* Windows before any job: accepted, the grid and the origin come from the first. */
    assert_int_equal(mw_model_add_window(m, plain_window(42)), 0);
    assert_int_equal(mw_model_origin_ns(m), 42 * WNS);
    assert_float_equal(mw_model_seconds(m, 43 * WNS), 0.1, 1e-12);
    wb_t b;
    wb_init(&b, 43, 4, 1, 1);
    b.w.subslots = 20; /* another grid */
    assert_int_equal(mw_model_add_window(m, wb_done(&b)), -1);
    assert_null(mw_model_window(m, 43));

    uint64_t gen = mw_model_generation(m);
    mw_model_set_job(m, make_job("a", 4, WNS));
    assert_non_null(mw_model_window(m, 42)); /* the first job keeps them */
    assert_int_equal(mw_model_generation(m), gen);
    assert_string_equal(mw_model_job(m)->job, "a");
    wb_init(&b, 44, 4, 1, 1);
    wb_fn(&b, 5, 100);
    b.w.ranks_missing = 1;
    b.w.samples_dropped = 3;
    assert_int_equal(mw_model_add_window(m, wb_done(&b)), 0);
    wb_init(&b, 45, 4, 1, 1);
    b.w.window_ns = WNS / 2;
    assert_int_equal(mw_model_add_window(m, wb_done(&b)), -1);
    mw_model_stats_t st;
    mw_model_stats(m, &st);
    assert_int_equal(st.windows, 2);
    assert_int_equal(st.partial, 1);
    assert_int_equal(st.samples_dropped, 3);
    assert_int_equal(st.refused, 0); /* another grid is not a malformed window */
    /* A window the window policy refuses whole (no subslots: a grid no collector writes) is
     * counted, and nothing of it is kept. */
    wb_init(&b, 46, 4, 1, 1);
    b.w.subslots = 0;
    assert_int_equal(mw_model_add_window(m, wb_done(&b)), -1);
    assert_null(mw_model_window(m, 46));
    mw_model_stats(m, &st);
    assert_int_equal(st.windows, 2);
    assert_int_equal(st.refused, 1);
    /* The same job again (a new description) keeps everything. */
    mw_model_set_job(m, make_job("a", 4, WNS));
    assert_int_equal(mw_model_cached_windows(m), 2);

    /* Another job clears the cache, the extent, the colors and the counters. */
    mw_model_set_extent(m, 40, 50);
    mw_model_set_job(m, make_job("b", 8, 2 * WNS));
    assert_int_equal(mw_model_cached_windows(m), 0);
    assert_int_equal(mw_model_cached_bytes(m), 0);
    assert_true(mw_model_generation(m) != gen);
    assert_int_equal(mw_model_extent(m, NULL, NULL), -1);
    assert_int_equal(mw_model_slot(m, 5), MW_PALETTE);
    mw_legend_entry_t e[MW_LEGEND_MAX];
    assert_int_equal(mw_model_legend(m, e, MW_LEGEND_MAX), 0);
    mw_model_stats(m, &st);
    assert_int_equal(st.windows, 0);
    assert_int_equal(st.ranks, 8);
    /* The new job's grid rules. */
    assert_int_equal(mw_model_add_window(m, plain_window(1)), -1);
    mw_model_free(m);
}

/* ---- the view ----------------------------------------------------------------------------- */

static void test_view(void **state)
{
    (void)state;
    mw_view_t v;
    mw_view_init(&v);
    assert_float_equal(v.span, 30.0, 0);
    assert_int_equal(v.follow, 1);
    assert_float_equal(v.o_min, 0.3f, 0);
    assert_int_equal(v.repr, MW_REPR_END);
    assert_int_equal(v.transfer, MW_TRANSFER_LOG);
    assert_int_equal(v.highlight_rank, -1);
    assert_int_equal(v.highlight_fn, 0);

    mw_model_t *m = mw_model_new(0);
    mw_model_set_extent(m, 0, 0);
    for (uint64_t k = 0; k < 100; k++)
        assert_int_equal(mw_model_add_window(m, plain_window(k)), 0);
    mw_view_update(&v, m);
    assert_float_equal(v.t1, 10.0, 1e-9);
    assert_float_equal(v.t0, -20.0, 1e-9);
    double f0, f1;
    mw_view_focus(&v, &f0, &f1);
    assert_float_equal(f0, 7.0, 1e-9);
    assert_float_equal(f1, 10.0, 1e-9);
    v.sel0 = 2.0;
    v.sel1 = 3.0;
    mw_view_focus(&v, &f0, &f1);
    assert_float_equal(f0, 2.0, 0);
    assert_float_equal(f1, 3.0, 0);

    mw_layout_t l;
    mw_layout(&l, 1280, 800, 1.0f, 1, 1, 5);
    v.t0 = 0;
    v.t1 = 5;
    v.follow = 0;
    mw_view_scroll(&v, &l, -l.timeline.w / 5.0); /* a fifth of the range earlier */
    assert_float_equal(v.t0, -1.0, 1e-9);
    assert_float_equal(v.t1, 4.0, 1e-9);
    mw_view_update(&v, m); /* kept over the data */
    assert_float_equal(v.t0, 0.0, 1e-9);
    assert_float_equal(v.t1, 5.0, 1e-9);
    v.follow = 1;
    mw_view_scroll(&v, &l, 10);
    assert_int_equal(v.follow, 0);
    v.t0 = 2;
    v.t1 = 6;
    int xc = l.timeline.x + l.timeline.w / 2;
    mw_view_zoom(&v, &l, xc, 2.0);
    assert_float_equal(v.t1 - v.t0, 2.0, 1e-9);
    assert_float_equal((v.t0 + v.t1) / 2, 4.0, 1e-9);
    mw_view_zoom(&v, &l, l.timeline.x, 0.5); /* out, around the left edge */
    assert_float_equal(v.t0, 3.0, 1e-9);
    assert_float_equal(v.t1, 7.0, 1e-9);
    /* Past the end: pulled back. */
    v.t0 = 20;
    v.t1 = 24;
    mw_view_update(&v, m);
    assert_float_equal(v.t1, 10.0, 1e-9);
    assert_float_equal(v.t0, 6.0, 1e-9);
    mw_model_free(m);
}

static int inside(const mw_rect_t *a, int w, int h)
{
    return a->x >= 0 && a->y >= 0 && a->w >= 0 && a->h >= 0 && a->x + a->w <= w && a->y + a->h <= h;
}

static int overlap(const mw_rect_t *a, const mw_rect_t *b)
{
    return a->x < b->x + b->w && b->x < a->x + a->w && a->y < b->y + b->h && b->y < a->y + a->h;
}

static void test_layout(void **state)
{
    (void)state;
    mw_layout_t l;
    mw_layout(&l, 1280, 800, 1.0f, 1, 1, 11);
    assert_int_equal(l.font_px, 14);
    const mw_rect_t *all[] = {&l.title, &l.timeline, &l.density, &l.legend, &l.details, &l.status};
    for (int i = 0; i < 6; i++) {
        assert_true(inside(all[i], 1280, 800));
        for (int j = i + 1; j < 6; j++)
            assert_false(overlap(all[i], all[j]));
    }
    assert_int_equal(l.title.y, 0);
    assert_int_equal(l.status.y + l.status.h, 800);
    assert_true(l.legend.w >= 180 - 10 && l.legend.x >= (int)(1280 * 0.75));
    assert_true(l.timeline.x >= 7 * 14 - 1);
    assert_true(l.timeline.y + l.timeline.h < l.density.y);
    /* Room for the x labels under each plot. */
    assert_true(l.density.y - (l.timeline.y + l.timeline.h) >= l.font_px);
    assert_true(l.status.y - (l.density.y + l.density.h) >= l.font_px);
    double share = (double)l.timeline.h / (l.timeline.h + l.density.h);
    assert_true(share > 0.3 && share < 0.5);
    assert_int_equal(l.legend_rows, 11);
    assert_int_equal(l.legend.h, 12 * l.legend_row_h);
    assert_true(l.details.y > l.legend.y + l.legend.h - 1 && l.details.h > 0);

    /* One plot alone fills the plot area. */
    mw_layout_t d;
    mw_layout(&d, 1280, 800, 1.0f, 0, 1, 11);
    assert_int_equal(d.density.y, l.timeline.y);
    assert_int_equal(d.density.y + d.density.h, l.density.y + l.density.h);
    assert_int_equal(d.timeline.w * d.timeline.h, 0);

    /* High DPI doubles fonts and margins; a narrow window keeps its legend readable. */
    mw_layout(&d, 2560, 1600, 2.0f, 1, 1, 11);
    assert_int_equal(d.font_px, 28);
    assert_true(d.timeline.x >= 7 * 28 - 1);
    mw_layout(&d, 640, 400, 1.0f, 1, 1, 11);
    assert_true(d.legend.w >= 170);
    assert_true(d.legend_rows < 11);
    const mw_rect_t *small[] = {&d.title,  &d.timeline, &d.density,
                                &d.legend, &d.details,  &d.status};
    for (int i = 0; i < 6; i++) {
        assert_true(inside(small[i], 640, 400));
        for (int j = i + 1; j < 6; j++)
            assert_false(overlap(small[i], small[j]));
    }
    mw_layout(&d, 10, 10, 1.0f, 1, 1, 11); /* degenerate: nothing negative */
    assert_true(d.timeline.w >= 0 && d.timeline.h >= 0 && d.density.h >= 0 && d.details.h >= 0);
}

/* ---- rank calls --------------------------------------------------------------------------- */

static void test_rank_calls(void **state)
{
    (void)state;
    Mpiwatch__Sample s = MPIWATCH__SAMPLE__INIT;
    s.window = 5;
    uint32_t fn[2] = {7, 8}, bin[2] = {12, 20}, end[2] = {1, 0};
    int32_t sub[2] = {3, -2};
    uint64_t count[2] = {7, 1};
    s.n_density_fn = s.n_density_sub = s.n_density_bin = s.n_density_end = s.n_density_count = 2;
    s.density_fn = fn;
    s.density_sub = sub;
    s.density_bin = bin;
    s.density_end = end;
    s.density_count = count;
    Mpiwatch__Call c = MPIWATCH__CALL__INIT, *cp = &c;
    c.fn = 9;
    c.start_ns = 512345678;
    c.duration_ns = 3000000;
    c.bytes = 64;
    c.peer = 2;
    s.n_longest = 1;
    s.longest = &cp;
    Mpiwatch__Envelope env = MPIWATCH__ENVELOPE__INIT;
    env.rank = 3;
    env.body_case = MPIWATCH__ENVELOPE__BODY_SAMPLE;
    env.sample = &s;

    mw_rank_call_t out[8];
    size_t n = 0;
    assert_int_equal(mw_rank_calls_from_sample(&env, WNS, SUBS, MW_BINS_OCTAVE, out, &n, 8), 3);
    assert_int_equal(n, 3);
    assert_int_equal(out[0].exact, 1);
    assert_int_equal(out[0].count, 1);
    assert_int_equal(out[0].fn, 9);
    assert_int_equal(out[0].start_ns, 512345678);
    assert_int_equal(out[0].duration_ns, 3000000);
    assert_int_equal(out[0].peer, 2);
    assert_int_equal(out[1].exact, 0);
    assert_int_equal(out[1].fn, 7);
    assert_int_equal(out[1].start_ns, 5 * WNS + 3 * SSNS);
    assert_int_equal(out[1].duration_ns, 4096);
    assert_int_equal(out[1].end, 1);
    assert_int_equal(out[1].count, 7);
    assert_int_equal(out[2].start_ns, 5 * WNS - 2 * SSNS);
    assert_int_equal(out[2].duration_ns, 1 << 20);
    assert_int_equal(out[2].end, 0);
    /* Appends, and stops at max. */
    assert_int_equal(mw_rank_calls_from_sample(&env, WNS, SUBS, MW_BINS_OCTAVE, out, &n, 4), 1);
    assert_int_equal(n, 4);
    assert_int_equal(out[3].exact, 1);
    /* The same cells in quarter octaves: bin 12 starts at 2^3 ns, bin 20 at 2^5 ns. */
    size_t nq = 0;
    mw_rank_call_t outq[8];
    assert_int_equal(mw_rank_calls_from_sample(&env, WNS, SUBS, MW_BINS_QUARTER, outq, &nq, 8), 3);
    assert_int_equal(outq[1].duration_ns, 1u << (12 / 4));
    assert_int_equal(outq[2].duration_ns, 1u << (20 / 4));
    env.body_case = MPIWATCH__ENVELOPE__BODY_HELLO;
    assert_int_equal(mw_rank_calls_from_sample(&env, WNS, SUBS, MW_BINS_OCTAVE, out, &n, 8), 0);

    /* The model keeps a copy; the copy's exact calls can be picked. */
    mw_model_t *m = mw_model_new(0);
    mw_model_set_job(m, make_job("rc", 4, WNS));
    mw_model_set_rank_calls(m, 3, out, 3);
    out[0].fn = 99;
    uint32_t rank;
    size_t rn;
    const mw_rank_call_t *rc = mw_model_rank_calls(m, &rank, &rn);
    assert_int_equal(rank, 3);
    assert_int_equal(rn, 3);
    assert_int_equal(rc[0].fn, 9);
    wb_t b;
    wb_init(&b, 5, 4, 1, 2);
    wb_cell(&b, 9, 1, 21, 1, 1);
    assert_int_equal(mw_model_add_window(m, wb_done(&b)), 0);
    mw_layout_t l;
    mw_layout(&l, 1000, 700, 1.0f, 0, 1, 3);
    mw_view_t v;
    mw_view_init(&v);
    v.follow = 0;
    v.sel0 = 0.0;
    v.sel1 = 0.1;
    double d0, d1;
    mw_density_range(m, 0.0, 0.1, &d0, &d1);
    const mw_rect_t *r = &l.density;
    int x = (int)floor(mw_x_of_time(r, 0.0, 0.1, (512345678 + 3000000 - 5 * WNS) * 1e-9));
    int y = (int)floor(mw_y_of_duration(r, d0, d1, 3e6));
    mw_pick_t p = mw_pick(m, &v, &l, x, y, 3);
    assert_int_equal(p.kind, MW_PICK_CALL);
    assert_int_equal(p.rank, 3);
    assert_int_equal(p.fn, 9);
    assert_string_equal(p.host, "node02");
    mw_model_set_rank_calls(m, 0, NULL, 0);
    assert_null(mw_model_rank_calls(m, NULL, &rn));
    assert_int_equal(rn, 0);
    mw_model_free(m);
}

/* ---- job events --------------------------------------------------------------------------- */

static void test_event_parse(void **state)
{
    (void)state;
    mw_event_t e;
    mw_event_parse(&e, "rule",
                   "rule=imbalance metric=imbalance scope=all value=1.82 window=37 rank=2 "
                   "node=n0",
                   5);
    assert_int_equal(e.kind, MW_EVENT_RULE);
    assert_string_equal(e.rule, "imbalance");
    assert_true(e.has_value);
    assert_float_equal(e.value, 1.82, 1e-12);
    assert_true(e.has_window);
    assert_int_equal(e.window, 37);
    assert_int_equal(e.rank, 2);
    assert_int_equal(e.real_ns, 5);
    /* A job-wide metric: rank -1, no node. */
    mw_event_parse(&e, "rule", "rule=late metric=dropped scope=any value=3 window=0 rank=-1", 0);
    assert_int_equal(e.rank, -1);
    assert_true(e.has_window);
    assert_int_equal(e.window, 0);
    mw_event_parse(&e, "steer", "rebalance=1 ranks 0,1", 0);
    assert_int_equal(e.kind, MW_EVENT_STEER);
    assert_false(e.has_window);
    assert_string_equal(e.detail, "rebalance=1 ranks 0,1");
    mw_event_parse(&e, "action_exit", "rule=x pid=12 status=exit 0", 0);
    assert_int_equal(e.kind, MW_EVENT_ACTION_EXIT);
    assert_string_equal(e.rule, "x");
    assert_false(e.has_window);
    mw_event_parse(&e, "job_end", "complete", 0);
    assert_int_equal(e.kind, MW_EVENT_OTHER);
    assert_string_equal(e.kind_name, "job_end");
}

static void test_event_hostile(void **state)
{
    (void)state;
    mw_event_t e;
    /* Missing fields, NULLs. */
    mw_event_parse(&e, "rule", "", 0);
    assert_false(e.has_window);
    assert_false(e.has_value);
    assert_int_equal(e.rank, -1);
    assert_string_equal(e.rule, "");
    mw_event_parse(&e, NULL, NULL, 0);
    assert_string_equal(e.kind_name, "event");
    assert_string_equal(e.detail, "");
    /* Not numbers, or numbers too large for a window index. */
    static const char *const bad[] = {"rule=a window=3x value=1..2 rank=r",
                                      "rule=a window= value= rank=",
                                      "rule=a window=-4 value=nan rank=99999999999",
                                      "rule=a window=99999999999999999999 value=1e999 rank=1x",
                                      "rule=a xwindow=5 valuex=1 window2=3",
                                      "rule=a window=0x10 value=inf",
                                      "rule=a window=9007199254740992"}; /* 2^53 */
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mw_event_parse(&e, "rule", bad[i], 0);
        assert_false(e.has_window);
        assert_false(e.has_value);
        assert_int_equal(e.rank, -1);
        assert_string_equal(e.rule, "a");
    }
    /* Long: cut, and a field past the cut is not known. */
    char *big = malloc(20000);
    assert_non_null(big);
    memset(big, 'x', 19999);
    big[19999] = 0;
    memcpy(big, "rule=", 5);
    memcpy(big + 19000, " window=12", 10);
    mw_event_parse(&e, "rule", big, 0);
    assert_int_equal(strlen(e.detail), MW_EVENT_DETAIL - 1);
    assert_int_equal(strlen(e.rule), MW_EVENT_NAME - 1);
    assert_false(e.has_window);
    mw_event_parse(&e, big, "x", 0);
    assert_true(strlen(e.kind_name) < sizeof e.kind_name);
    assert_int_equal(e.kind, MW_EVENT_OTHER);
    /* Control characters become '?'; a cut never ends inside a UTF-8 character. */
    mw_event_parse(&e, "steer", "a=\x01\n\x7f\xc3\xa9", 0);
    assert_string_equal(e.detail, "a=???\xc3\xa9");
    memset(big, 'y', 254);
    memcpy(big + 254, "\xc3\xa9zz", 5);
    mw_event_parse(&e, "steer", big, 0);
    assert_int_equal(strlen(e.detail), 254);
    free(big);
    /* The text of an event with nothing known. */
    mw_event_parse(&e, "rule", "garbage", 0);
    char line[320];
    mw_event_text(NULL, &e, NULL, line, sizeof line);
    assert_string_equal(line, "rule ?");
}

static void test_event_store(void **state)
{
    (void)state;
    mw_model_t *m = mw_model_new(0);
    mw_model_set_job(m, make_job("ev", 4, WNS));
    mw_model_set_extent(m, 100, 200); /* the time axis' 0 is window 100 */
    char d[128];
    for (int i = 0; i < 300; i++) {
        snprintf(d, sizeof d, "rule=r%d metric=imbalance scope=any value=%d.5 window=%d rank=1", i,
                 i, 100 + i);
        mw_model_add_event(m, i % 3 == 2 ? "job_end" : "rule", d, 0);
    }
    mw_event_counts_t c;
    mw_model_event_counts(m, &c);
    assert_int_equal(c.total, 300);
    assert_int_equal(c.by_kind[MW_EVENT_RULE], 200);
    assert_int_equal(c.by_kind[MW_EVENT_OTHER], 100);
    assert_int_equal(c.dropped, 300 - MW_EVENTS_MAX);
    assert_int_equal(mw_model_event_count(m), MW_EVENTS_MAX);
    assert_int_equal(mw_model_event_at(m, 0)->seq, 300 - MW_EVENTS_MAX + 1);
    assert_int_equal(mw_model_event_at(m, MW_EVENTS_MAX - 1)->seq, 300);
    assert_null(mw_model_event_at(m, MW_EVENTS_MAX));
    const mw_event_t *last = mw_model_event_at(m, MW_EVENTS_MAX - 2); /* i = 298: a rule */
    assert_string_equal(last->rule, "r298");
    /* A rule at window 398 is drawn at the end of it: (398 + 1 - 100) windows of 0.1 s. */
    double t = 0;
    uint64_t w = 0;
    assert_int_equal(mw_model_event_time(m, last, &t, &w), 0);
    assert_float_equal(t, 29.9, 1e-9);
    assert_int_equal(w, 398);

    /* A rule's steering action follows it within 50 ms; a later message stands alone. */
    uint64_t g = 150 * WNS + WNS / 2;
    mw_model_add_event(m, "rule", "rule=imbalance value=1.82 window=137 rank=1", g);
    mw_model_add_event(m, "steer", "rebalance=1 ranks 1", g + 1000000);
    mw_model_add_event(m, "steer", "app.msg=x", g + 2000000000ull);
    size_t n = mw_model_event_count(m);
    const mw_event_t *rule = mw_model_event_at(m, n - 3), *act = mw_model_event_at(m, n - 2),
                     *man = mw_model_event_at(m, n - 1);
    assert_int_equal(act->steer_after, rule->seq);
    assert_int_equal(man->steer_after, 0);
    /* A steering message is placed at its time, on the windows' clock. */
    assert_int_equal(mw_model_event_time(m, man, &t, &w), 0);
    assert_float_equal(t, 5.05 + 2.0, 1e-6);
    assert_int_equal(w, 170);
    char line[320];
    mw_event_text(m, rule, act, line, sizeof line);
    assert_string_equal(line, "w 37  rule imbalance 1.82 → steer rebalance=1 ranks 1");
    mw_event_text(m, man, NULL, line, sizeof line);
    assert_string_equal(line, "w 70  steer app.msg=x");
    mw_event_t e;
    mw_event_parse(&e, "steer", "a=1", 0); /* no time: it cannot be placed */
    assert_int_equal(mw_model_event_time(m, &e, &t, &w), -1);
    mw_event_text(m, &e, NULL, line, sizeof line);
    assert_string_equal(line, "steer a=1");

    /* Another job: its events only. */
    mw_model_set_job(m, make_job("other", 4, WNS));
    assert_int_equal(mw_model_event_count(m), 0);
    mw_model_event_counts(m, &c);
    assert_int_equal(c.total, 0);
    mw_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stacking),
        cmocka_unit_test(test_columns_average),
        cmocka_unit_test(test_gaps),
        cmocka_unit_test(test_changed_grid),
        cmocka_unit_test(test_scales_and_ticks),
        cmocka_unit_test(test_transfer),
        cmocka_unit_test(test_density_outlier),
        cmocka_unit_test(test_density_conservation),
        cmocka_unit_test(test_density_lines_arcs),
        cmocka_unit_test(test_density_speed),
        cmocka_unit_test(test_palette_and_legend),
        cmocka_unit_test(test_pick),
        cmocka_unit_test(test_paging),
        cmocka_unit_test(test_eviction),
        cmocka_unit_test(test_cache_counts_rank_detail),
        cmocka_unit_test(test_job_change_and_grid),
        cmocka_unit_test(test_view),
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_rank_calls),
        cmocka_unit_test(test_event_parse),
        cmocka_unit_test(test_event_hostile),
        cmocka_unit_test(test_event_store),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
