/* test_regions.c: unit tests of viewer/model_regions.c: the timeline's region shares per window
 * and column (clamped, with the note's count), the region legend, per-rank region time, the
 * per-function link filter, a function's call sites and its spread across ranks.
 *
 * DESIGN: windows are built in memory with known region, site, per-rank and per-function pair
 * entries (as the collector fills them, proto/mpiwatch.proto), packed and unpacked so that the
 * model owns heap messages as it does behind the data source; every expected number is written
 * here from the values put in, never read back from the code under test. 4 ranks, 100 ms windows.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "matrix.h"
#include "model.h"

#define WNS 100000000ull
#define R 4u
#define RT ((double)R * (double)WNS) /* rank-time of a window */

#define FCOL(out, c, k) ((out)[(size_t)(c) * (MW_PALETTE + 2) + (k)])

typedef struct {
    Mpiwatch__Window w;
    Mpiwatch__RegionStat rs[8], *rsp[8];
    Mpiwatch__SiteStat ss[8], *ssp[8];
    Mpiwatch__FunctionStat fs[4], *fsp[4];
    uint32_t rr_rank[16], rr_region[16];
    uint64_t rr_count[16], rr_incl[16], rr_excl[16], rr_mpi[16];
    uint32_t fp_src[16], fp_dst[16], fp_fn[16];
    uint64_t fp_msg[16], fp_bytes[16];
} wb_t;

static void wb_init(wb_t *b, uint64_t index)
{
    memset(b, 0, sizeof *b);
    Mpiwatch__Window init = MPIWATCH__WINDOW__INIT;
    b->w = init;
    b->w.index = index;
    b->w.window_ns = WNS;
    b->w.subslots = 10;
    b->w.duration_bins = 40;
    b->w.ranks_reporting = R;
    b->w.regions = b->rsp;
    b->w.sites = b->ssp;
    b->w.functions = b->fsp;
    b->w.rr_rank = b->rr_rank;
    b->w.rr_region = b->rr_region;
    b->w.rr_count = b->rr_count;
    b->w.rr_incl_ns = b->rr_incl;
    b->w.rr_excl_ns = b->rr_excl;
    b->w.rr_mpi_ns = b->rr_mpi;
    b->w.fpair_src = b->fp_src;
    b->w.fpair_dst = b->fp_dst;
    b->w.fpair_fn = b->fp_fn;
    b->w.fpair_messages = b->fp_msg;
    b->w.fpair_bytes = b->fp_bytes;
}

/* Region `id` with exclusive time `share` of the window's rank-time. */
static void wb_region(wb_t *b, uint32_t id, double share, uint64_t count)
{
    size_t i = b->w.n_regions++;
    mpiwatch__region_stat__init(&b->rs[i]);
    b->rs[i].region = id;
    b->rs[i].excl_ns = (uint64_t)(share * RT + 0.5);
    b->rs[i].incl_ns = b->rs[i].excl_ns * 2;
    b->rs[i].count = count;
    b->rs[i].ranks = R;
    b->rsp[i] = &b->rs[i];
}

static void wb_rr(wb_t *b, uint32_t rank, uint32_t region, uint64_t incl, uint64_t excl)
{
    size_t i = b->w.n_rr_rank;
    b->rr_rank[i] = rank;
    b->rr_region[i] = region;
    b->rr_count[i] = 1;
    b->rr_incl[i] = incl;
    b->rr_excl[i] = excl;
    b->rr_mpi[i] = 0;
    b->w.n_rr_rank = b->w.n_rr_region = b->w.n_rr_count = b->w.n_rr_incl_ns = b->w.n_rr_excl_ns =
        b->w.n_rr_mpi_ns = i + 1;
}

static void wb_fpair(wb_t *b, uint32_t src, uint32_t dst, unsigned fn, uint64_t msg, uint64_t by)
{
    size_t i = b->w.n_fpair_src;
    b->fp_src[i] = src;
    b->fp_dst[i] = dst;
    b->fp_fn[i] = fn;
    b->fp_msg[i] = msg;
    b->fp_bytes[i] = by;
    b->w.n_fpair_src = b->w.n_fpair_dst = b->w.n_fpair_fn = b->w.n_fpair_messages =
        b->w.n_fpair_bytes = i + 1;
}

static void wb_site(wb_t *b, uint32_t site, unsigned fn, uint64_t count, uint64_t ns,
                    uint32_t top_rank, uint64_t top_ns)
{
    size_t i = b->w.n_sites++;
    mpiwatch__site_stat__init(&b->ss[i]);
    b->ss[i].site = site;
    b->ss[i].fn = fn;
    b->ss[i].count = count;
    b->ss[i].ns = ns;
    b->ss[i].bytes = count * 8;
    b->ss[i].max_ns = ns / (count ? count : 1);
    b->ss[i].ranks = R;
    b->ss[i].top_rank = top_rank;
    b->ss[i].top_rank_ns = top_ns;
    b->ssp[i] = &b->ss[i];
}

static void wb_fn(wb_t *b, unsigned fn, uint64_t total, double sd, uint32_t max_rank,
                  uint64_t max_ns)
{
    size_t i = b->w.n_functions++;
    mpiwatch__function_stat__init(&b->fs[i]);
    b->fs[i].fn = fn;
    b->fs[i].count = 1;
    b->fs[i].total_ns = total;
    b->fs[i].rank_sd_ns = sd;
    b->fs[i].rank_max = max_rank;
    b->fs[i].rank_max_ns = max_ns;
    b->fsp[i] = &b->fs[i];
}

static Mpiwatch__Window *wb_done(wb_t *b)
{
    size_t len = mpiwatch__window__get_packed_size(&b->w);
    uint8_t *buf = malloc(len ? len : 1);
    assert_non_null(buf);
    mpiwatch__window__pack(&b->w, buf);
    Mpiwatch__Window *out = mpiwatch__window__unpack(NULL, len, buf);
    free(buf);
    assert_non_null(out);
    return out;
}

/* A job of R ranks naming 12 regions ("r1".."r12") and three call sites. */
static Mpiwatch__JobInfo *make_job(void)
{
    Mpiwatch__JobInfo j = MPIWATCH__JOB_INFO__INIT;
    j.job = "regions";
    j.program = "app";
    j.size = R;
    j.window_ns = WNS;
    j.subslots = 10;
    j.duration_bins = 40;
    Mpiwatch__Region rg[12], *rgp[12];
    char names[12][8];
    for (int i = 0; i < 12; i++) {
        mpiwatch__region__init(&rg[i]);
        rg[i].id = (uint32_t)i + 1;
        snprintf(names[i], sizeof names[i], "r%d", i + 1);
        rg[i].name = names[i];
        rg[i].source = 1;
        rgp[i] = &rg[i];
    }
    j.n_regions = 12;
    j.regions = rgp;
    Mpiwatch__CallSite cs[3], *csp[3];
    static const char *fns[3] = {"solve", "exchange", "main"};
    for (int i = 0; i < 3; i++) {
        mpiwatch__call_site__init(&cs[i]);
        cs[i].id = (uint32_t)i + 1;
        cs[i].module = "/bin/app";
        cs[i].offset = 0x1000u + (unsigned)i;
        cs[i].function = (char *)fns[i];
        cs[i].file = "app.c";
        cs[i].line = 10u * ((unsigned)i + 1);
        csp[i] = &cs[i];
    }
    j.n_sites = 3;
    j.sites = csp;
    size_t len = mpiwatch__job_info__get_packed_size(&j);
    uint8_t *buf = malloc(len);
    assert_non_null(buf);
    mpiwatch__job_info__pack(&j, buf);
    Mpiwatch__JobInfo *out = mpiwatch__job_info__unpack(NULL, len, buf);
    free(buf);
    assert_non_null(out);
    return out;
}

/* Windows 0..2: w0 r1 30%, r2 20%; w1 r1 10%, r2 50%, r12 (grey) 10%; w2 r1 120% (instances
 * that began earlier ended here: clamped). */
static mw_model_t *three_windows(void)
{
    mw_model_t *m = mw_model_new(0);
    mw_model_set_job(m, make_job());
    mw_model_set_extent(m, 0, 2);
    wb_t b;
    wb_init(&b, 0);
    wb_region(&b, 1, 0.30, 4);
    wb_region(&b, 2, 0.20, 8);
    assert_int_equal(mw_model_add_window(m, wb_done(&b)), 0);
    wb_init(&b, 1);
    wb_region(&b, 1, 0.10, 4);
    wb_region(&b, 2, 0.50, 8);
    wb_region(&b, 12, 0.10, 1);
    assert_int_equal(mw_model_add_window(m, wb_done(&b)), 0);
    wb_init(&b, 2);
    wb_region(&b, 1, 1.20, 4);
    assert_int_equal(mw_model_add_window(m, wb_done(&b)), 0);
    return m;
}

static void test_region_shares(void **state)
{
    (void)state;
    mw_model_t *m = three_windows();
    float out[3 * (MW_PALETTE + 2)];
    int clamped = -1;
    /* One column per window. */
    assert_int_equal(mw_region_columns(m, 0.0, 0.3, 3, out, &clamped), 3);
    assert_int_equal(clamped, 1);
    assert_float_equal(FCOL(out, 0, 0), 0.30f, 1e-6);
    assert_float_equal(FCOL(out, 0, 1), 0.50f, 1e-6);
    for (int k = 2; k <= MW_PALETTE; k++)
        assert_float_equal(FCOL(out, 0, k), 0.50f, 1e-6);
    assert_float_equal(FCOL(out, 1, 0), 0.10f, 1e-6);
    assert_float_equal(FCOL(out, 1, 1), 0.60f, 1e-6);
    assert_float_equal(FCOL(out, 1, MW_PALETTE - 1), 0.60f, 1e-6);
    assert_float_equal(FCOL(out, 1, MW_PALETTE), 0.70f, 1e-6); /* r12: grey */
    assert_float_equal(FCOL(out, 2, 0), 1.0f, 0);              /* 1.2 clamped */
    assert_float_equal(FCOL(out, 2, MW_PALETTE), 1.0f, 0);
    for (int c = 0; c < 3; c++)
        assert_float_equal(FCOL(out, c, MW_PALETTE + 1), 1.0f, 0);

    /* A column over the second half of w0 and the first half of w1: the mean, weighted. */
    float one[MW_PALETTE + 2];
    assert_int_equal(mw_region_columns(m, 0.05, 0.15, 1, one, &clamped), 1);
    assert_int_equal(clamped, 0);
    assert_float_equal(one[0], 0.20f, 1e-6);
    assert_float_equal(one[1], 0.55f, 1e-6);
    assert_float_equal(one[MW_PALETTE], 0.60f, 1e-6);

    /* Past the data: no column. */
    assert_int_equal(mw_region_columns(m, 0.3, 0.5, 2, out, NULL), 0);
    assert_float_equal(FCOL(out, 0, MW_PALETTE + 1), 0.0f, 0);

    /* One window's shares directly. */
    double sh[MW_PALETTE + 1];
    const Mpiwatch__Window *w1 = mw_model_window(m, 1);
    assert_non_null(w1);
    assert_float_equal(mw_region_window_shares(w1, sh), 0.70, 1e-9);
    assert_float_equal(sh[0], 0.10, 1e-9);
    assert_float_equal(sh[1], 0.50, 1e-9);
    assert_float_equal(sh[MW_PALETTE], 0.10, 1e-9);
    mw_model_free(m);
}

static void test_region_legend(void **state)
{
    (void)state;
    mw_model_t *m = three_windows();
    mw_region_entry_t e[MW_LEGEND_MAX];
    /* w0 and w1: r2 0.7, r1 0.4, r12 0.1 of a window's rank-time each. */
    int n = mw_region_legend(m, 0.0, 0.2, e, MW_LEGEND_MAX);
    assert_int_equal(n, 3);
    assert_int_equal(e[0].id, 2);
    assert_int_equal(e[1].id, 1);
    assert_int_equal(e[2].id, 12);
    assert_float_equal(e[0].share, 0.7 / 1.2, 1e-9);
    assert_float_equal(e[1].share, 0.4 / 1.2, 1e-9);
    assert_float_equal(e[2].share, 0.1 / 1.2, 1e-9);
    assert_int_equal(e[0].count, 16);
    mw_rgb_t c1 = mw_region_color(1), grey = mw_region_color(12);
    assert_true(e[1].color.r == c1.r && e[1].color.g == c1.g && e[1].color.b == c1.b);
    assert_true(e[2].color.r == grey.r && e[2].color.g == grey.g);
    assert_int_equal(mw_region_layer(1), 0);
    assert_int_equal(mw_region_layer(MW_PALETTE), MW_PALETTE - 1);
    assert_int_equal(mw_region_layer(MW_PALETTE + 1), MW_PALETTE);
    /* Two rows: the first region, then the rest summed. */
    n = mw_region_legend(m, 0.0, 0.2, e, 2);
    assert_int_equal(n, 2);
    assert_int_equal(e[0].id, 2);
    assert_int_equal(e[1].id, 0);
    assert_float_equal(e[1].share, 0.5 / 1.2, 1e-9);
    char buf[32];
    assert_string_equal(mw_region_name(m, 12, buf, sizeof buf), "r12");
    assert_string_equal(mw_region_name(m, 13, buf, sizeof buf), "region 13");
    assert_int_equal(mw_region_next(m, 0), 1);
    assert_int_equal(mw_region_next(m, 12), 1);
    assert_int_equal(mw_region_top(mw_model_window(m, 1)), 2);
    mw_model_free(m);
}

static void test_region_ranks(void **state)
{
    (void)state;
    wb_t b;
    wb_init(&b, 0);
    wb_rr(&b, 0, 1, 50, 10);
    wb_rr(&b, 0, 2, 70, 70);
    wb_rr(&b, 2, 1, 900, 300);
    wb_rr(&b, 9, 1, 5, 5); /* outside the job: left out */
    Mpiwatch__Window *w = wb_done(&b);
    double v[R];
    assert_int_equal(mw_region_rank_values(w, 1, 0, v, R), 2);
    assert_float_equal(v[0], 10, 0);
    assert_float_equal(v[1], 0, 0);
    assert_float_equal(v[2], 300, 0);
    assert_float_equal(v[3], 0, 0);
    assert_int_equal(mw_region_rank_values(w, 1, 1, v, R), 2);
    assert_float_equal(v[2], 900, 0);
    assert_int_equal(mw_region_rank_values(w, 3, 1, v, R), 0);
    /* A window whose arrays disagree in length is read to the shortest. */
    w->n_rr_excl_ns = 1;
    assert_int_equal(mw_region_rank_values(w, 1, 0, v, R), 1);
    assert_float_equal(v[2], 0, 0);
    mpiwatch__window__free_unpacked(w, NULL);
}

static void test_fpairs(void **state)
{
    (void)state;
    wb_t b;
    wb_init(&b, 0);
    wb_fpair(&b, 0, 1, MW_ID_Isend, 10, 1000);
    wb_fpair(&b, 0, 1, MW_ID_Send, 3, 30);
    wb_fpair(&b, 1, 2, MW_ID_Isend, 7, 700);
    wb_fpair(&b, 2, 3, MW_ID_Send, 1, 5);
    wb_fpair(&b, 3, 0, MW_ID_Isend, 2, 64);
    Mpiwatch__Window *w = wb_done(&b);
    unsigned fns[4];
    int n = mw_fpair_fns(w, fns, 4);
    assert_int_equal(n, 2);
    unsigned lo = MW_ID_Send < MW_ID_Isend ? MW_ID_Send : MW_ID_Isend;
    unsigned hi = MW_ID_Send < MW_ID_Isend ? MW_ID_Isend : MW_ID_Send;
    assert_int_equal(fns[0], lo);
    assert_int_equal(fns[1], hi);
    assert_int_equal(mw_fpair_next_fn(w, 0), lo);
    assert_int_equal(mw_fpair_next_fn(w, lo), hi);
    assert_int_equal(mw_fpair_next_fn(w, hi), 0);

    mw_fpairs_t fp;
    memset(&fp, 0, sizeof fp);
    mw_pairs_t p;
    assert_int_equal(mw_fpairs_of_window(&fp, w, MW_ID_Isend, &p), 0);
    assert_int_equal(p.n, 3);
    uint64_t msg = 0, by = 0;
    for (size_t i = 0; i < p.n; i++) {
        msg += p.messages[i];
        by += p.bytes[i];
    }
    assert_int_equal(msg, 19);
    assert_int_equal(by, 1764);
    assert_int_equal(p.src[1], 1);
    assert_int_equal(p.dst[1], 2);
    assert_int_equal(mw_fpairs_of_window(&fp, w, MW_ID_Send, &p), 0);
    assert_int_equal(p.n, 2);
    assert_int_equal(p.messages[0] + p.messages[1], 4);
    assert_int_equal(p.bytes[0] + p.bytes[1], 35);
    assert_int_equal(mw_fpairs_of_window(&fp, w, MW_ID_Bcast, &p), 0);
    assert_int_equal(p.n, 0);
    assert_int_equal(mw_fpairs_of_window(&fp, NULL, MW_ID_Send, &p), 0);
    assert_int_equal(p.n, 0);
    /* The filter feeds the matrix as it does the lines: exact sums per cell. */
    mw_matrix_t mx;
    memset(&mx, 0, sizeof mx);
    assert_int_equal(mw_fpairs_of_window(&fp, w, MW_ID_Isend, &p), 0);
    assert_int_equal(mw_matrix_bin(&mx, p, R, 64, NULL), 0);
    assert_int_equal(mx.messages[0 * R + 1], 10);
    assert_int_equal(mx.messages[1 * R + 2], 7);
    assert_int_equal(mx.messages[3 * R + 0], 2);
    assert_int_equal(mx.messages[2 * R + 3], 0);
    assert_int_equal(mx.cells_used, 3);
    mw_matrix_free(&mx);
    /* Arrays of unequal length: read to the shortest. */
    w->n_fpair_fn = 2;
    assert_int_equal(mw_fpairs_of_window(&fp, w, MW_ID_Isend, &p), 0);
    assert_int_equal(p.n, 1);
    mw_fpairs_free(&fp);
    mpiwatch__window__free_unpacked(w, NULL);
}

static void test_sites_and_spread(void **state)
{
    (void)state;
    mw_model_t *m = mw_model_new(0);
    mw_model_set_job(m, make_job());
    mw_model_set_extent(m, 0, 1);
    wb_t b;
    wb_init(&b, 0);
    wb_fn(&b, MW_ID_Allreduce, 1000, 40.0, 2, 400);
    wb_site(&b, 1, MW_ID_Allreduce, 10, 600, 2, 300);
    wb_site(&b, 2, MW_ID_Allreduce, 5, 400, 1, 200);
    wb_site(&b, 3, MW_ID_Bcast, 1, 9999, 0, 9999); /* another function */
    assert_int_equal(mw_model_add_window(m, wb_done(&b)), 0);
    wb_init(&b, 1);
    wb_fn(&b, MW_ID_Allreduce, 1000, 60.0, 3, 700);
    wb_site(&b, 2, MW_ID_Allreduce, 20, 900, 3, 700);
    wb_site(&b, 3, MW_ID_Allreduce, 1, 100, 0, 100);
    assert_int_equal(mw_model_add_window(m, wb_done(&b)), 0);

    mw_site_row_t rows[8];
    uint64_t fn_ns = 0;
    int all = 0;
    int n = mw_fn_sites(m, 0.0, 0.2, MW_ID_Allreduce, rows, 8, &fn_ns, &all);
    assert_int_equal(n, 3);
    assert_int_equal(all, 3);
    assert_int_equal(fn_ns, 2000);
    /* Site 2: 400 + 900 ns, site 1: 600, site 3: 100; most time first. */
    assert_int_equal(rows[0].site, 2);
    assert_int_equal(rows[0].ns, 1300);
    assert_int_equal(rows[0].count, 25);
    assert_float_equal(rows[0].share, 0.65, 1e-9);
    assert_int_equal(rows[0].top_rank, 3);
    assert_int_equal(rows[0].top_rank_ns, 700);
    assert_string_equal(rows[0].function, "exchange");
    assert_string_equal(rows[0].file, "app.c");
    assert_int_equal(rows[0].line, 20);
    assert_int_equal(rows[1].site, 1);
    assert_int_equal(rows[1].ns, 600);
    assert_float_equal(rows[1].share, 0.30, 1e-9);
    assert_int_equal(rows[2].site, 3);
    assert_int_equal(rows[2].ns, 100);
    assert_string_equal(rows[2].function, "main");
    /* The first window only: site 1 before site 2; the Bcast site is not Allreduce's. */
    n = mw_fn_sites(m, 0.0, 0.1, MW_ID_Allreduce, rows, 8, &fn_ns, &all);
    assert_int_equal(n, 2);
    assert_int_equal(rows[0].site, 1);
    assert_int_equal(rows[1].site, 2);
    assert_int_equal(fn_ns, 1000);
    /* Top 1 of 3. */
    n = mw_fn_sites(m, 0.0, 0.2, MW_ID_Allreduce, rows, 1, NULL, &all);
    assert_int_equal(n, 1);
    assert_int_equal(all, 3);

    mw_fn_spread_t sp;
    assert_int_equal(mw_fn_spread(m, 0.0, 0.2, MW_ID_Allreduce, &sp), 2);
    assert_float_equal(sp.sd_ns, 50.0, 1e-9);
    assert_int_equal(sp.max_rank, 3);
    assert_int_equal(sp.max_ns, 700);
    assert_int_equal(sp.max_window, 1);
    assert_float_equal(sp.mean_ns, 250.0, 1e-9);
    assert_int_equal(mw_fn_spread(m, 0.0, 0.2, MW_ID_Bcast, &sp), 0);
    mw_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_region_shares),    cmocka_unit_test(test_region_legend),
        cmocka_unit_test(test_region_ranks),     cmocka_unit_test(test_fpairs),
        cmocka_unit_test(test_sites_and_spread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
