/* test_regions_caps.c: the viewer's region legend and a function's call sites stay linear in the
 * entries of the visible windows, whatever the windows carry.
 *
 * The attack (or merely a large job): windows naming as many distinct regions (4,096, the job's
 * cap) or call sites (65,536) as the collector may send. The legend and the details panel are
 * recomputed every frame; they once looked each entry up by a linear search among the ids
 * already seen, so one window of 65,536 sites cost two billion comparisons per frame and the
 * viewer froze. The sums are checked (every id once, known totals) and each call must take far
 * less than a frame's budget multiplied by a safety margin for sanitizers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"
#include "mw_limits.h"

#define WNS 100000000ull
#define MAX_SECONDS 0.5 /* per call: the quadratic search took several seconds */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static Mpiwatch__JobInfo *make_job(void)
{
    Mpiwatch__JobInfo j = MPIWATCH__JOB_INFO__INIT;
    j.job = "caps";
    j.program = "app";
    j.size = 4;
    j.window_ns = WNS;
    j.subslots = 10;
    j.duration_bins = 40;
    size_t len = mpiwatch__job_info__get_packed_size(&j);
    uint8_t *buf = malloc(len ? len : 1);
    assert_non_null(buf);
    mpiwatch__job_info__pack(&j, buf);
    Mpiwatch__JobInfo *out = mpiwatch__job_info__unpack(NULL, len, buf);
    free(buf);
    assert_non_null(out);
    return out;
}

/* Window `index` with regions 1..n_regions (excl = id ns) and sites 1..n_sites of Allreduce
 * (ns = id), the ids in descending order so that no lucky order hides a search. */
static Mpiwatch__Window *make_window(uint64_t index, uint32_t n_regions, uint32_t n_sites)
{
    Mpiwatch__Window w = MPIWATCH__WINDOW__INIT;
    w.index = index;
    w.window_ns = WNS;
    w.subslots = 10;
    w.duration_bins = 40;
    w.ranks_reporting = 4;
    Mpiwatch__RegionStat *rs = calloc(n_regions ? n_regions : 1, sizeof *rs);
    Mpiwatch__RegionStat **rsp = calloc(n_regions ? n_regions : 1, sizeof *rsp);
    Mpiwatch__SiteStat *ss = calloc(n_sites ? n_sites : 1, sizeof *ss);
    Mpiwatch__SiteStat **ssp = calloc(n_sites ? n_sites : 1, sizeof *ssp);
    assert_true(rs && rsp && ss && ssp);
    for (uint32_t i = 0; i < n_regions; i++) {
        mpiwatch__region_stat__init(&rs[i]);
        rs[i].region = n_regions - i;
        rs[i].excl_ns = rs[i].region;
        rs[i].incl_ns = rs[i].region;
        rs[i].count = 1;
        rsp[i] = &rs[i];
    }
    for (uint32_t i = 0; i < n_sites; i++) {
        mpiwatch__site_stat__init(&ss[i]);
        ss[i].site = n_sites - i;
        ss[i].fn = MW_ID_Allreduce;
        ss[i].count = 1;
        ss[i].ns = ss[i].site;
        ssp[i] = &ss[i];
    }
    w.n_regions = n_regions;
    w.regions = rsp;
    w.n_sites = n_sites;
    w.sites = ssp;
    size_t len = mpiwatch__window__get_packed_size(&w);
    uint8_t *buf = malloc(len);
    assert_non_null(buf);
    mpiwatch__window__pack(&w, buf);
    Mpiwatch__Window *out = mpiwatch__window__unpack(NULL, len, buf);
    assert_non_null(out);
    free(buf);
    free(rs);
    free(rsp);
    free(ss);
    free(ssp);
    return out;
}

static void test_sites_linear(void **state)
{
    (void)state;
    mw_model_t *m = mw_model_new(0);
    mw_model_set_job(m, make_job());
    mw_model_set_extent(m, 0, 1);
    assert_int_equal(mw_model_add_window(m, make_window(0, 0, MW_JOB_MAX_SITES)), 0);
    assert_int_equal(mw_model_add_window(m, make_window(1, 0, MW_JOB_MAX_SITES)), 0);
    mw_site_row_t rows[8];
    uint64_t fn_ns = 0;
    int all = 0;
    double t = now_s();
    int n = mw_fn_sites(m, 0.0, 0.2, MW_ID_Allreduce, rows, 8, &fn_ns, &all);
    t = now_s() - t;
    assert_int_equal(n, 8);
    assert_int_equal(all, MW_JOB_MAX_SITES);
    /* Most time first: site 65536 twice (one per window). */
    assert_int_equal(rows[0].site, MW_JOB_MAX_SITES);
    assert_int_equal(rows[0].ns, 2ull * MW_JOB_MAX_SITES);
    assert_int_equal(rows[0].count, 2);
    assert_int_equal(rows[7].site, MW_JOB_MAX_SITES - 7);
    print_message("mw_fn_sites over 2 x %u sites: %.3f s\n", MW_JOB_MAX_SITES, t);
    assert_true(t < MAX_SECONDS);
    mw_model_free(m);
}

static void test_legend_linear(void **state)
{
    (void)state;
    enum { WINDOWS = 100 };
    mw_model_t *m = mw_model_new(0);
    mw_model_set_job(m, make_job());
    mw_model_set_extent(m, 0, WINDOWS - 1);
    for (uint64_t k = 0; k < WINDOWS; k++)
        assert_int_equal(mw_model_add_window(m, make_window(k, MW_JOB_MAX_REGIONS, 0)), 0);
    mw_region_entry_t e[4];
    double t = now_s();
    int n = mw_region_legend(m, 0.0, WINDOWS * 0.1, e, 4);
    t = now_s() - t;
    assert_int_equal(n, 4);
    assert_int_equal(e[0].id, MW_JOB_MAX_REGIONS);
    assert_int_equal(e[0].excl_ns, (uint64_t)WINDOWS * MW_JOB_MAX_REGIONS);
    assert_int_equal(e[1].id, MW_JOB_MAX_REGIONS - 1);
    assert_int_equal(e[2].id, MW_JOB_MAX_REGIONS - 2);
    /* The last entry: every other region (ids 1..4093) summed. */
    uint64_t rest = (uint64_t)(MW_JOB_MAX_REGIONS - 3) * (MW_JOB_MAX_REGIONS - 2) / 2;
    assert_int_equal(e[3].excl_ns, WINDOWS * rest);
    print_message("mw_region_legend over %d x %u regions: %.3f s\n", WINDOWS, MW_JOB_MAX_REGIONS,
                  t);
    assert_true(t < MAX_SECONDS);
    mw_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sites_linear),
        cmocka_unit_test(test_legend_linear),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
