/* test_terrain.c: the terrain's model (viewer/model_terrain.c) on windows with known per-rank
 * values (terrain_values.h): the sums over a range of windows, the columns and "other", every
 * metric of functions and regions, the aggregation of 16,384 ranks into rows (each row's
 * maximum and its rank, exact), the largest cells, the 3D and 2D picking, the cache, and
 * windows whose arrays do not match. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model.h"
#include "model_internal.h"
#include "terrain_values.h"

#define WNS 100000000ull
#define SUBS 10u
#define BINS 40u
#define K0 100u

static Mpiwatch__JobInfo *job(uint32_t size)
{
    Mpiwatch__JobInfo j = MPIWATCH__JOB_INFO__INIT;
    Mpiwatch__Region rg[TV_REGIONS], *rgp[TV_REGIONS];
    for (unsigned g = 0; g < TV_REGIONS; g++) {
        mpiwatch__region__init(&rg[g]);
        rg[g].id = g + 1;
        rg[g].name = (char *)tv_region_names[g];
        rg[g].source = 1;
        rgp[g] = &rg[g];
    }
    j.job = "terrain";
    j.size = size;
    j.window_ns = WNS;
    j.subslots = SUBS;
    j.duration_bins = BINS;
    j.n_regions = TV_REGIONS;
    j.regions = rgp;
    size_t len = mpiwatch__job_info__get_packed_size(&j);
    uint8_t *buf = malloc(len);
    assert_non_null(buf);
    mpiwatch__job_info__pack(&j, buf);
    Mpiwatch__JobInfo *out = mpiwatch__job_info__unpack(NULL, len, buf);
    free(buf);
    assert_non_null(out);
    return out;
}

/* A model of `ranks` ranks holding windows 0 .. nw - 1 of `nfn` functions. */
static mw_model_t *model(uint32_t ranks, unsigned nfn, unsigned nw)
{
    mw_model_t *m = mw_model_new(1u << 30);
    assert_non_null(m);
    mw_model_set_job(m, job(ranks));
    for (unsigned k = 0; k < nw; k++) {
        uint8_t *buf = NULL;
        size_t len = 0;
        assert_int_equal(tv_pack_window(ranks, nfn, k, K0 + k, WNS, SUBS, BINS, &buf, &len), 0);
        Mpiwatch__Window *w = mpiwatch__window__unpack(NULL, len, buf);
        free(buf);
        assert_non_null(w);
        assert_int_equal(mw_model_add_window(m, w), 0);
    }
    mw_model_set_extent(m, K0, K0 + nw - 1);
    return m;
}

/* Seconds of the range [window a, window b] (both inclusive). */
static double ts(unsigned k)
{
    return (double)k * (double)WNS / 1e9;
}

/* The expected per-rank value of function j or region g summed over windows [a, b]. */
static double expect(uint32_t R, mw_terrain_what_t what, mw_terrain_metric_t m, uint32_t r,
                     unsigned id, unsigned a, unsigned b)
{
    double s = 0;
    for (unsigned k = a; k <= b; k++) {
        if (what == MW_TERRAIN_FUNCTIONS) {
            unsigned j = (unsigned)tv_fn_index(id);
            s += (double)(m == MW_TERRAIN_COUNT   ? tv_count(R, r, j)
                          : m == MW_TERRAIN_BYTES ? tv_bytes(R, r, j)
                                                  : tv_ns(R, r, j, k));
        } else {
            s += (double)(m == MW_TERRAIN_COUNT  ? id
                          : m == MW_TERRAIN_INCL ? tv_incl(R, r, id, k)
                          : m == MW_TERRAIN_MPI  ? tv_excl(R, r, id, k) / 2
                                                 : tv_excl(R, r, id, k));
        }
    }
    return s;
}

/* Every cell, the column order (by total, "other" last), the totals and the top cells equal
 * what the known values give. */
static void check_all(mw_terrain_t *t, uint32_t R, unsigned nids, mw_terrain_what_t what,
                      mw_terrain_metric_t metric, unsigned a, unsigned b)
{
    const mw_terrain_info_t *in = mw_terrain_info(t);
    assert_int_equal(in->ranks, R);
    assert_int_equal(in->k0, K0 + a);
    assert_int_equal(in->k1, K0 + b);
    assert_int_equal(in->windows, b - a + 1);
    assert_int_equal(in->bad, 0);
    /* Expected totals per id, and the order. */
    double tot[MW_FN_COUNT + 1] = {0};
    unsigned order[64], n = 0;
    for (unsigned i = 0; i < nids; i++) {
        unsigned id = what == MW_TERRAIN_FUNCTIONS ? tv_fn(i) : i + 1;
        assert_true(id > 0);
        for (uint32_t r = 0; r < R; r++)
            tot[id] += expect(R, what, metric, r, id, a, b);
        if (tot[id] > 0)
            order[n++] = id;
    }
    for (unsigned i = 0; i < n; i++) /* by total, ties by id */
        for (unsigned j = i + 1; j < n; j++)
            if (tot[order[j]] > tot[order[i]] ||
                (tot[order[j]] == tot[order[i]] && order[j] < order[i])) {
                unsigned x = order[i];
                order[i] = order[j];
                order[j] = x;
            }
    unsigned named = n > MW_TERRAIN_COLS ? MW_TERRAIN_COLS : n;
    assert_int_equal(in->ncols, named + (n > named));
    assert_int_equal(in->other, n > named);
    int col_of[MW_FN_COUNT + 1];
    for (unsigned i = 0; i <= MW_FN_COUNT; i++)
        col_of[i] = -1;
    for (unsigned c = 0; c < n; c++)
        col_of[order[c]] = c < named ? (int)c : (int)named;
    for (unsigned c = 0; c < named; c++) {
        assert_int_equal(in->cols[c].id, order[c]);
        assert_true(in->cols[c].total == tot[order[c]]);
        if (what == MW_TERRAIN_FUNCTIONS)
            assert_string_equal(in->cols[c].name, mw_fn_name(order[c]));
        else
            assert_string_equal(in->cols[c].name, tv_region_names[order[c] - 1]);
    }
    double vmax = 0;
    mw_terrain_top_t top[MW_TERRAIN_TOP];
    int ntop = 0;
    for (uint32_t r = 0; r < R; r++) {
        double row[MW_TERRAIN_COLS + 1] = {0};
        for (unsigned i = 0; i < nids; i++) {
            unsigned id = what == MW_TERRAIN_FUNCTIONS ? tv_fn(i) : i + 1;
            if (col_of[id] >= 0)
                row[col_of[id]] += expect(R, what, metric, r, id, a, b);
        }
        for (int c = 0; c < in->ncols; c++) {
            assert_true(mw_terrain_value(t, r, c) == row[c]);
            vmax = row[c] > vmax ? row[c] : vmax;
        }
        for (unsigned c = 0; c < named; c++) { /* the top cells, by brute force */
            int k = ntop;
            if (ntop < MW_TERRAIN_TOP)
                ntop++;
            else if (!(row[c] > top[MW_TERRAIN_TOP - 1].value))
                continue;
            else
                k = MW_TERRAIN_TOP - 1;
            while (k > 0 && top[k - 1].value < row[c]) {
                top[k] = top[k - 1];
                k--;
            }
            top[k] = (mw_terrain_top_t){r, (int)c, row[c]};
        }
    }
    assert_true(in->vmax == vmax);
    assert_int_equal(in->ntop, ntop);
    for (int i = 0; i < ntop; i++) {
        assert_int_equal(in->top[i].rank, top[i].rank);
        assert_int_equal(in->top[i].col, top[i].col);
        assert_true(in->top[i].value == top[i].value);
    }
}

static void test_functions_every_metric(void **state)
{
    (void)state;
    const uint32_t R = 64;
    const unsigned NF = 24, NW = 6;
    mw_model_t *m = model(R, NF, NW);
    mw_terrain_t *t = mw_terrain_new();
    assert_non_null(t);
    /* Windows 1..3 (the range ends inside window 3). */
    const mw_terrain_metric_t ms[3] = {MW_TERRAIN_TIME, MW_TERRAIN_COUNT, MW_TERRAIN_BYTES};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(mw_terrain_update(t, m, ts(1), ts(3) + 0.05, MW_TERRAIN_FUNCTIONS, ms[i]),
                         1);
        check_all(t, R, NF, MW_TERRAIN_FUNCTIONS, ms[i], 1, 3);
    }
    const mw_terrain_info_t *in = mw_terrain_info(t);
    /* Bytes: a third of the functions send none, so the columns are 16 named, no "other". */
    assert_int_equal(in->ncols, 16);
    /* Time: 24 functions, 20 named and "other (4)"; the hot cell is the largest. */
    mw_terrain_update(t, m, ts(1), ts(3) + 0.05, MW_TERRAIN_FUNCTIONS, MW_TERRAIN_TIME);
    assert_int_equal(in->ncols, 21);
    assert_int_equal(in->other, 1);
    assert_string_equal(in->cols[20].name, "other (4)");
    assert_int_equal(in->top[0].rank, tv_hot(R));
    assert_int_equal(in->cols[in->top[0].col].id, tv_fn(2));
    assert_int_equal(in->top[1].rank, R / 4);
    assert_int_equal(in->cols[in->top[1].col].id, tv_fn(0));
    /* The same range again: nothing recomputed. */
    uint64_t gen = in->gen;
    assert_int_equal(
        mw_terrain_update(t, m, ts(1), ts(3) + 0.05, MW_TERRAIN_FUNCTIONS, MW_TERRAIN_TIME), 0);
    assert_int_equal(in->gen, gen);
    /* A window replaced (as a live source may): summed again. */
    uint8_t *buf = NULL;
    size_t len = 0;
    assert_int_equal(tv_pack_window(R, NF, 2, K0 + 2, WNS, SUBS, BINS, &buf, &len), 0);
    Mpiwatch__Window *w = mpiwatch__window__unpack(NULL, len, buf);
    free(buf);
    assert_int_equal(mw_model_add_window(m, w), 0);
    assert_int_equal(
        mw_terrain_update(t, m, ts(1), ts(3) + 0.05, MW_TERRAIN_FUNCTIONS, MW_TERRAIN_TIME), 1);
    assert_true(in->gen != gen);
    check_all(t, R, NF, MW_TERRAIN_FUNCTIONS, MW_TERRAIN_TIME, 1, 3);
    /* One window. */
    mw_terrain_update(t, m, ts(5), ts(5) + 0.1, MW_TERRAIN_FUNCTIONS, MW_TERRAIN_TIME);
    check_all(t, R, NF, MW_TERRAIN_FUNCTIONS, MW_TERRAIN_TIME, 5, 5);
    mw_terrain_free(t);
    mw_model_free(m);
}

static void test_regions_every_metric(void **state)
{
    (void)state;
    const uint32_t R = 48;
    mw_model_t *m = model(R, 4, 4);
    mw_terrain_t *t = mw_terrain_new();
    const mw_terrain_metric_t ms[4] = {MW_TERRAIN_TIME, MW_TERRAIN_INCL, MW_TERRAIN_COUNT,
                                       MW_TERRAIN_MPI};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(mw_terrain_update(t, m, ts(0), ts(4), MW_TERRAIN_REGIONS, ms[i]), 1);
        check_all(t, R, TV_REGIONS, MW_TERRAIN_REGIONS, ms[i], 0, 3);
    }
    mw_terrain_update(t, m, ts(0), ts(4), MW_TERRAIN_REGIONS, MW_TERRAIN_TIME);
    const mw_terrain_info_t *in = mw_terrain_info(t);
    assert_string_equal(in->cols[0].name, "halo");
    assert_int_equal(in->top[0].rank, R / 3);
    assert_true(in->top[0].value == expect(R, MW_TERRAIN_REGIONS, MW_TERRAIN_TIME, R / 3, 2, 0, 3));
    /* A metric regions do not have falls back to exclusive time. */
    mw_terrain_update(t, m, ts(0), ts(4), MW_TERRAIN_REGIONS, MW_TERRAIN_BYTES);
    assert_int_equal(in->metric, MW_TERRAIN_TIME);
    mw_terrain_free(t);
    mw_model_free(m);
}

/* 16,384 ranks into 600 rows: 28 ranks per row, each row's cell the largest of its ranks and
 * that rank, compared with a brute force over the known values. */
static void test_aggregation_16384(void **state)
{
    (void)state;
    const uint32_t R = 16384;
    const unsigned NF = 20;
    mw_model_t *m = model(R, NF, 2);
    mw_terrain_t *t = mw_terrain_new();
    assert_int_equal(mw_terrain_update(t, m, ts(0), ts(2), MW_TERRAIN_FUNCTIONS, MW_TERRAIN_TIME),
                     1);
    const mw_terrain_info_t *in = mw_terrain_info(t);
    assert_int_equal(in->ncols, 20);
    assert_int_equal(in->other, 0);
    mw_terrain_grid_t g;
    assert_int_equal(mw_terrain_rows(t, 600, &g), 0);
    assert_int_equal(g.per_row, 28);
    assert_int_equal(g.rows, (R + 27) / 28);
    assert_int_equal(g.ncols, 20);
    double vmax = 0;
    for (uint32_t y = 0; y < g.rows; y++) {
        uint32_t a, b;
        mw_terrain_row_ranks(&g, R, y, &a, &b);
        assert_int_equal(a, y * 28);
        assert_int_equal(b, y + 1 == g.rows ? R - 1 : y * 28 + 27);
        for (int c = 0; c < g.ncols; c++) {
            unsigned id = in->cols[c].id;
            double best = -1;
            uint32_t at = 0;
            for (uint32_t r = a; r <= b; r++) {
                double v = expect(R, MW_TERRAIN_FUNCTIONS, MW_TERRAIN_TIME, r, id, 0, 1);
                if (v > best) {
                    best = v;
                    at = r;
                }
            }
            assert_true(g.v[(size_t)y * 20 + (size_t)c] == best);
            assert_int_equal(g.at[(size_t)y * 20 + (size_t)c], at);
            vmax = best > vmax ? best : vmax;
        }
    }
    assert_true(g.vmax == vmax);
    /* The hot cell's row holds it. */
    uint32_t hy = mw_terrain_row_of(&g, tv_hot(R));
    int hc = in->top[0].col;
    assert_int_equal(g.at[(size_t)hy * 20 + (size_t)hc], tv_hot(R));
    assert_true(g.v[(size_t)hy * 20 + (size_t)hc] == in->top[0].value);
    /* Cached: the same rows give the same generation; other rows another. */
    uint64_t gen = g.gen;
    mw_terrain_grid_t g2;
    assert_int_equal(mw_terrain_rows(t, 600, &g2), 0);
    assert_int_equal(g2.gen, gen);
    assert_int_equal(mw_terrain_rows(t, 20000, &g2), 0);
    assert_int_equal(g2.per_row, 1);
    assert_int_equal(g2.rows, R);
    assert_true(g2.gen != gen);
    assert_int_equal(mw_terrain_rows(t, 600, &g), 0); /* g2 replaced what g pointed to */

    /* Picking: the hot cell's top, projected by the camera, is picked in 3D; the heat map's
     * cell rectangle's middle picks it in 2D. */
    mw_camera_t cam;
    const int W = 1000, H = 600;
    mw_terrain_camera(&cam, g.ncols, (float)W / H);
    float mvp[16], lo[3], hi[3], x, y;
    mw_camera_matrix(&cam, (float)W / H, mvp);
    mw_terrain_cell_box(&g, 0, hy, hc, lo, hi);
    assert_true(hi[1] == MW_TERRAIN_HEIGHT); /* the largest value: full height */
    float top[3] = {(lo[0] + hi[0]) / 2, hi[1], (lo[2] + hi[2]) / 2};
    assert_true(mw_camera_project(mvp, top, W, H, &x, &y));
    uint32_t pr = 0;
    int pc = -1;
    assert_true(mw_terrain_pick_3d(&g, 0, &cam, W, H, x, y, &pr, &pc));
    assert_int_equal(pr, hy);
    assert_int_equal(pc, hc);
    mw_rect_t plot = {50, 40, 840, 586};
    float x0, y0, x1, y1;
    mw_terrain_cell_rect(&g, &plot, hy, hc, &x0, &y0, &x1, &y1);
    assert_true(
        mw_terrain_pick_2d(&g, &plot, (int)((x0 + x1) / 2), (int)((y0 + y1) / 2), &pr, &pc));
    assert_int_equal(pr, hy);
    assert_int_equal(pc, hc);
    assert_false(mw_terrain_pick_2d(&g, &plot, 10, 10, &pr, &pc));
    mw_terrain_free(t);
    mw_model_free(m);
}

/* A window whose arrays differ in length is left out and its entries counted; a rank outside
 * the job and an unknown id are counted and the rest summed; no job, no range: empty. */
static void test_bad_windows(void **state)
{
    (void)state;
    const uint32_t R = 8;
    mw_model_t *m = model(R, 3, 2);
    /* Window 2: rank 9 of an 8-rank job, function id 0, and one good entry. */
    Mpiwatch__Window w = MPIWATCH__WINDOW__INIT;
    w.index = K0 + 2;
    w.window_ns = WNS;
    w.subslots = SUBS;
    w.duration_bins = BINS;
    w.ranks_reporting = R;
    uint32_t rk[3] = {9, 1, 2}, fn[3] = {1, 0, 1};
    uint64_t v[3] = {5, 6, 7};
    w.n_rf_rank = w.n_rf_fn = w.n_rf_count = w.n_rf_ns = w.n_rf_bytes = 3;
    w.rf_rank = rk;
    w.rf_fn = fn;
    w.rf_count = w.rf_ns = w.rf_bytes = v;
    size_t len = mpiwatch__window__get_packed_size(&w);
    uint8_t *buf = malloc(len);
    mpiwatch__window__pack(&w, buf);
    Mpiwatch__Window *u = mpiwatch__window__unpack(NULL, len, buf);
    free(buf);
    assert_int_equal(mw_model_add_window(m, u), 0);
    mw_terrain_t *t = mw_terrain_new();
    const mw_terrain_info_t *in = mw_terrain_info(t);
    mw_model_set_extent(m, K0, K0 + 2);
    mw_terrain_update(t, m, ts(2), ts(3), MW_TERRAIN_FUNCTIONS, MW_TERRAIN_TIME);
    assert_int_equal(in->bad, 2);
    assert_int_equal(in->ncols, 1);
    assert_true(mw_terrain_value(t, 2, 0) == 7);
    assert_true(mw_terrain_value(t, 1, 0) == 0);
    /* Arrays of different lengths (crafted after unpacking: the window policy may refuse such
     * a window before the terrain sees it; the terrain must not trust it either). */
    Mpiwatch__Window *w1 = (Mpiwatch__Window *)mw_model_window(m, K0 + 1);
    assert_non_null(w1);
    size_t keep = w1->n_rf_ns;
    w1->n_rf_ns = keep - 1;
    mw_terrain_update(t, m, ts(1), ts(2), MW_TERRAIN_FUNCTIONS, MW_TERRAIN_TIME);
    assert_int_equal(in->windows, 1);
    assert_int_equal(in->detailed, 0);
    assert_int_equal(in->bad, keep);
    assert_int_equal(in->ncols, 0);
    mw_terrain_grid_t g;
    assert_int_equal(mw_terrain_rows(t, 100, &g), -1);
    w1->n_rf_ns = keep;
    /* An empty range. */
    assert_int_equal(mw_terrain_update(t, m, ts(1), ts(1), MW_TERRAIN_FUNCTIONS, MW_TERRAIN_TIME),
                     1);
    assert_int_equal(in->ncols, 0);
    mw_terrain_free(t);
    mw_model_free(m);
}

static void test_options(void **state)
{
    (void)state;
    mw_terrain_opts_t o;
    char err[200];
    assert_int_equal(mw_terrain_parse("regions,incl,heatmap,log", &o, err, sizeof err), 0);
    assert_int_equal(o.what, MW_TERRAIN_REGIONS);
    assert_int_equal(o.metric, MW_TERRAIN_INCL);
    assert_true(o.heatmap && o.log);
    assert_int_equal(mw_terrain_parse("functions", &o, err, sizeof err), 0);
    assert_int_equal(o.what, MW_TERRAIN_FUNCTIONS);
    assert_int_equal(o.metric, MW_TERRAIN_TIME);
    assert_int_equal(mw_terrain_parse("functions,incl", &o, err, sizeof err), -1);
    assert_int_equal(mw_terrain_parse("regions,bytes", &o, err, sizeof err), -1);
    assert_int_equal(mw_terrain_parse("nonsense", &o, err, sizeof err), -1);
    assert_int_equal(mw_terrain_metric_next(MW_TERRAIN_FUNCTIONS, MW_TERRAIN_BYTES),
                     MW_TERRAIN_TIME);
    assert_int_equal(mw_terrain_metric_next(MW_TERRAIN_REGIONS, MW_TERRAIN_TIME), MW_TERRAIN_INCL);
    assert_string_equal(mw_terrain_metric_name(MW_TERRAIN_REGIONS, MW_TERRAIN_TIME),
                        "exclusive time");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_functions_every_metric),
        cmocka_unit_test(test_regions_every_metric),
        cmocka_unit_test(test_aggregation_16384),
        cmocka_unit_test(test_bad_windows),
        cmocka_unit_test(test_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
