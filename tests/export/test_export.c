/* test_export.c: the conversions of mpiwatch-export on synthetic windows with known values.
 *
 * window_json.c (the view: checks, fractions, the JSON object) through its header; the CSV
 * rows, the Chrome trace writer and the command line of tools/export.c by including the file
 * itself (without its main), so that its static functions are tested as they are, without a
 * header that would exist only for the tests. The layout the ParaView files use (the viewer's,
 * viewer/topo_layout.c) through its header, as the export sees it; the VTK files themselves are
 * checked by vtk.sh, and against the layout by tests/viewer/vtk_same.sh.
 */
#define MW_EXPORT_NO_MAIN
#include "export.c"
#include "topo_layout.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <unistd.h>

/* ---- a synthetic window ------------------------------------------------------------------- */

/* Window 1000 of 100 ms, 4 sub-slots, 3 ranks reporting and 1 missing:
 *   MPI_Allreduce: 30 calls, 6 ms, bytes 240, inside 3 ranks x 25 ms in sub-slot 0 (1.0) and
 *                  1 rank x 12.5 ms in sub-slot 1 (1/6);
 *   MPI_Send: 2^60 + 1 calls (an integer a double cannot hold), no occupancy;
 *   MPI_Recv: no stats, 25 ms inside in sub-slot 3 (a call still running: 1/3);
 * plus entries that must be skipped (left out and counted, the window kept: the window policy
 * of mw_window_json.h): fn 0, an id beyond the table, a sub-slot beyond the window. */
#define SYN_INDEX 1000u
#define SYN_WINDOW_NS 100000000u
#define SYN_SLOT_NS 25000000u
#define BIG_COUNT ((1ull << 60) + 1)

typedef struct {
    Mpiwatch__Window w;
    Mpiwatch__FunctionStat fs[4];
    Mpiwatch__FunctionStat *fs_ptr[4];
    uint32_t hist[3];
    uint32_t occ_fn[6];
    uint32_t occ_sub[6];
    uint64_t occ_ns[7]; /* one spare: test_window_policy makes the array one too long */
    uint32_t p_src[2], p_dst[2];
    uint64_t p_msg[2], p_bytes[2];
    Mpiwatch__Call call[4];
    Mpiwatch__Call *call_ptr[4];
    uint32_t d_fn[2], d_bin[2], d_end[2];
    int32_t d_sub[2];
    uint64_t d_count[2];
} syn_t;

static unsigned ID_ALLREDUCE, ID_SEND, ID_RECV;

static void syn_calls(syn_t *s, uint64_t base)
{
    /* Rank 1: two calls that overlap (the second goes to lane 1) and one after them. Rank 2:
     * one call. Given longest first, as the collector orders them. */
    const struct {
        uint32_t rank;
        unsigned fn;
        uint64_t start, dur;
        int32_t peer;
    } c[4] = {
        {1, ID_ALLREDUCE, base + 1000, 50000, -1},
        {1, ID_SEND, base + 20000, 40000, 2},
        {2, ID_RECV, base + 5000, 30000, 1},
        {1, ID_ALLREDUCE, base + 60000, 10000, -1},
    };
    for (int i = 0; i < 4; i++) {
        mpiwatch__call__init(&s->call[i]);
        s->call[i].rank = c[i].rank;
        s->call[i].fn = c[i].fn;
        s->call[i].start_ns = c[i].start;
        s->call[i].duration_ns = c[i].dur;
        s->call[i].bytes = 8u * (unsigned)i;
        s->call[i].peer = c[i].peer;
        s->call_ptr[i] = &s->call[i];
    }
    s->w.n_longest = 4;
    s->w.longest = s->call_ptr;
}

static void syn_init(syn_t *s, uint64_t index, uint32_t missing)
{
    memset(s, 0, sizeof *s);
    ID_ALLREDUCE = mw_fn_id("MPI_Allreduce");
    ID_SEND = mw_fn_id("MPI_Send");
    ID_RECV = mw_fn_id("MPI_Recv");
    Mpiwatch__Window *w = &s->w;
    mpiwatch__window__init(w);
    w->index = index;
    w->window_ns = SYN_WINDOW_NS;
    w->subslots = 4;
    w->duration_bins = 40;
    w->ranks_reporting = 3;
    w->ranks_missing = missing;
    w->mpi_time_ns = 6000000;
    w->occ_total_ns = 3 * SYN_SLOT_NS + SYN_SLOT_NS / 2 + SYN_SLOT_NS;
    w->closed_real_ns = 42;

    for (int i = 0; i < 4; i++) {
        mpiwatch__function_stat__init(&s->fs[i]);
        s->fs_ptr[i] = &s->fs[i];
    }
    s->fs[0].fn = ID_ALLREDUCE;
    s->fs[0].count = 30;
    s->fs[0].total_ns = 6000000;
    s->fs[0].min_ns = 100;
    s->fs[0].max_ns = 900000;
    s->fs[0].bytes = 240;
    s->fs[0].hist_first = 7;
    s->fs[0].n_hist = 3;
    s->fs[0].hist = s->hist;
    s->hist[0] = 10, s->hist[1] = 0, s->hist[2] = 20;
    s->fs[1].fn = ID_SEND;
    s->fs[1].count = BIG_COUNT;
    s->fs[1].total_ns = 5;
    s->fs[1].min_ns = 1;
    s->fs[1].max_ns = 2;
    s->fs[1].bytes = 7;
    s->fs[2].fn = 0;            /* skipped: id 0 */
    s->fs[3].fn = ID_ALLREDUCE; /* skipped: a function twice */
    w->n_functions = 4;
    w->functions = s->fs_ptr;

    const uint32_t ofn[6] = {ID_ALLREDUCE, ID_ALLREDUCE, ID_RECV, 0, MW_FN_COUNT + 7, ID_RECV};
    const uint32_t osub[6] = {0, 1, 3, 0, 0, 4};
    const uint64_t ons[7] = {3ull * SYN_SLOT_NS, SYN_SLOT_NS / 2, SYN_SLOT_NS, 1, 1, 1, 99};
    memcpy(s->occ_fn, ofn, sizeof ofn);
    memcpy(s->occ_sub, osub, sizeof osub);
    memcpy(s->occ_ns, ons, sizeof ons);
    w->n_occ_fn = 6, w->occ_fn = s->occ_fn;
    w->n_occ_sub = 6, w->occ_sub = s->occ_sub;
    w->n_occ_ns = 6, w->occ_ns = s->occ_ns;

    s->p_src[0] = 0, s->p_dst[0] = 1, s->p_msg[0] = 5, s->p_bytes[0] = 500;
    s->p_src[1] = 2, s->p_dst[1] = 0, s->p_msg[1] = 1, s->p_bytes[1] = 8;
    w->n_pair_src = w->n_pair_dst = w->n_pair_messages = w->n_pair_bytes = 2;
    w->pair_src = s->p_src, w->pair_dst = s->p_dst;
    w->pair_messages = s->p_msg, w->pair_bytes = s->p_bytes;

    s->d_fn[0] = ID_ALLREDUCE, s->d_sub[0] = -1, s->d_bin[0] = 12, s->d_end[0] = 0;
    s->d_count[0] = 4;
    s->d_fn[1] = 0, s->d_sub[1] = 0, s->d_bin[1] = 1, s->d_end[1] = 1, s->d_count[1] = 1;
    w->n_density_fn = w->n_density_sub = w->n_density_bin = w->n_density_end = w->n_density_count =
        2;
    w->density_fn = s->d_fn, w->density_sub = s->d_sub, w->density_bin = s->d_bin;
    w->density_end = s->d_end, w->density_count = s->d_count;

    syn_calls(s, index * SYN_WINDOW_NS);
}

/* A job of 3 ranks on hosts "a,b" (rank 0) and "c" (ranks 1, 2), listed out of order. */
typedef struct {
    Mpiwatch__JobInfo job;
    Mpiwatch__RankInfo ri[3];
    Mpiwatch__RankInfo *ri_ptr[3];
    char *hosts[3];
} syn_job_t;

static void syn_job(syn_job_t *j, int sorted)
{
    memset(j, 0, sizeof *j);
    mpiwatch__job_info__init(&j->job);
    j->job.job = "job \"one\"";
    j->job.size = 3;
    j->hosts[0] = "a,b";
    j->hosts[1] = "c";
    j->hosts[2] = ""; /* the collector's name for an unknown host */
    j->job.n_hosts = 3;
    j->job.hosts = j->hosts;
    const uint32_t order[3] = {2, 0, 1};
    for (uint32_t i = 0; i < 3; i++) {
        uint32_t r = sorted ? i : order[i];
        mpiwatch__rank_info__init(&j->ri[i]);
        j->ri[i].rank = r;
        j->ri[i].host = r == 0 ? 0 : 1;
        j->ri_ptr[i] = &j->ri[i];
    }
    j->job.n_ranks = 3;
    j->job.ranks = j->ri_ptr;
}

/* ---- helpers ------------------------------------------------------------------------------ */

typedef struct {
    char *text;
    size_t len;
    FILE *f;
} mem_t;

static void mem_open(mem_t *m)
{
    m->text = NULL;
    m->len = 0;
    m->f = open_memstream(&m->text, &m->len);
    assert_non_null(m->f);
}

static void mem_close(mem_t *m)
{
    assert_int_equal(fclose(m->f), 0);
}

static const cJSON *get(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        fail_msg("missing key '%s'", key);
    return v;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = get(o, key);
    if (!cJSON_IsNumber(v))
        fail_msg("'%s' is not a number", key);
    return v->valuedouble;
}

static int near(double a, double b)
{
    return a - b < 1e-6 && b - a < 1e-6;
}

/* ---- the view ----------------------------------------------------------------------------- */

static void test_view_fractions_and_checks(void **state)
{
    (void)state;
    syn_t s;
    syn_init(&s, SYN_INDEX, 1);
    mw_window_view_t *v = mw_window_view_new();
    assert_non_null(v);
    mw_window_view_set(v, &s.w);

    assert_int_equal(v->start_ns, (uint64_t)SYN_INDEX * SYN_WINDOW_NS);
    assert_int_equal(v->slot_ns, SYN_SLOT_NS);
    assert_int_equal(v->ranks, 3);
    /* Three functions, ascending ids; MPI_Recv has occupancy only. */
    assert_int_equal(v->n_fn, 3);
    unsigned want[3] = {ID_ALLREDUCE, ID_SEND, ID_RECV};
    for (int i = 0; i < 2; i++)
        for (int k = i + 1; k < 3; k++)
            if (want[k] < want[i]) {
                unsigned x = want[i];
                want[i] = want[k];
                want[k] = x;
            }
    for (int i = 0; i < 3; i++)
        assert_int_equal(v->fn[i], want[i]);
    assert_ptr_equal(v->stat[ID_ALLREDUCE], &s.fs[0]);
    assert_null(v->stat[ID_RECV]);

    assert_true(near(mw_window_view_inside(v, ID_ALLREDUCE, 0), 1.0));
    assert_true(near(mw_window_view_inside(v, ID_ALLREDUCE, 1), 1.0 / 6));
    assert_true(near(mw_window_view_inside(v, ID_ALLREDUCE, 2), 0));
    assert_true(near(mw_window_view_inside(v, ID_RECV, 3), 1.0 / 3));
    assert_true(near(mw_window_view_inside(v, ID_RECV, 4), 0)); /* no such sub-slot */
    assert_true(near(mw_window_view_fn_fraction(v, ID_ALLREDUCE), 3.5 / 12));
    assert_true(near(mw_window_view_fn_fraction(v, ID_SEND), 0));
    /* Skipped: fn 0 and a duplicate (functions), fn 0, an id beyond the table and sub-slot 4
     * (occupancy). */
    assert_int_equal(v->skipped, 5);

    /* Reusing the view for another window forgets the first one entirely. */
    syn_t s2;
    syn_init(&s2, SYN_INDEX + 1, 0);
    s2.w.n_functions = 0;
    s2.w.n_occ_fn = s2.w.n_occ_sub = s2.w.n_occ_ns = 1;
    s2.occ_fn[0] = ID_SEND;
    mw_window_view_set(v, &s2.w);
    assert_int_equal(v->n_fn, 1);
    assert_int_equal(v->fn[0], ID_SEND);
    assert_null(v->stat[ID_ALLREDUCE]);
    assert_true(near(mw_window_view_inside(v, ID_ALLREDUCE, 0), 0));
    assert_true(near(mw_window_view_inside(v, ID_SEND, 0), 1.0));
    assert_int_equal(v->skipped, 0);

    /* An empty job divides nothing by zero. */
    s2.w.ranks_reporting = 0;
    assert_int_equal(mw_window_view_set(v, &s2.w), 0);
    assert_int_equal(v->n_fn, 1);
    assert_true(near(mw_window_view_fn_fraction(v, ID_SEND), 0));
    assert_true(near(mw_window_view_inside(v, ID_SEND, 0), 0));
    /* Unusable sub-slots: the window is refused whole (test_window_policy), the view empty. */
    s2.w.subslots = MW_MAX_SUBSLOTS + 1;
    assert_int_equal(mw_window_view_set(v, &s2.w), -1);
    assert_null(v->w);
    assert_int_equal(v->n_fn, 0);
    assert_true(near(mw_window_view_fn_fraction(v, ID_SEND), 0));
    mw_window_view_free(v);
}

/* The one window policy (mw_window_json.h), which the viewer applies too (mw_window_check in
 * viewer/model_store.c): a window whose structure is broken is refused whole with a reason,
 * and nothing of it is shown; a window whose structure is sound keeps its good entries and
 * counts the ones it cannot place. */
static void test_window_policy(void **state)
{
    (void)state;
    mw_window_view_t *v = mw_window_view_new();
    assert_non_null(v);

    /* Sound structure, bad entries (fn 0, an id beyond the table, sub-slot 4, a function
     * twice): kept, 5 + 1 (density fn 0) entries counted, the good ones all there. */
    syn_t s;
    syn_init(&s, SYN_INDEX, 0);
    assert_null(mw_window_check(&s.w));
    assert_int_equal(mw_window_view_set(v, &s.w), 0);
    assert_int_equal(v->n_fn, 3);
    assert_int_equal(v->skipped, 5);
    cJSON *j = mw_window_json(&s.w, NULL);
    char *text = j ? cJSON_PrintUnformatted(j) : NULL;
    cJSON_Delete(j);
    assert_non_null(text);
    cJSON *o = cJSON_Parse(text); /* raw numbers read back as numbers */
    cJSON_free(text);
    assert_non_null(o);
    assert_int_equal(num(o, "skipped"), 6);
    assert_int_equal(cJSON_GetArraySize(get(o, "pairs")), 2);
    cJSON_Delete(o);

    /* Broken structure: each defect alone refuses the whole window. */
    enum {
        OCC_LONG,
        DENSITY_SHORT,
        PAIRS_SHORT,
        NO_DATA,
        NULL_FN,
        NULL_CALL,
        WINDOW_NS,
        SUBSLOTS0,
        SUBSLOTS_BIG,
        BINS0,
        BINS_BIG,
        N_DEFECTS
    };
    for (int d = 0; d < N_DEFECTS; d++) {
        syn_init(&s, SYN_INDEX, 0);
        assert_int_equal(mw_window_view_set(v, &s.w), 0); /* a window in the view before */
        switch (d) {
        case OCC_LONG:
            s.w.n_occ_ns = 7;
            break; /* the prefix would pair entries by guess */
        case DENSITY_SHORT:
            s.w.n_density_count = 1;
            break;
        case PAIRS_SHORT:
            s.w.n_pair_bytes = 1;
            break;
        case NO_DATA:
            s.w.occ_sub = NULL;
            break; /* a length without its array */
        case NULL_FN:
            s.fs_ptr[1] = NULL;
            break;
        case NULL_CALL:
            s.call_ptr[0] = NULL;
            break;
        case WINDOW_NS:
            s.w.window_ns = 0;
            break;
        case SUBSLOTS0:
            s.w.subslots = 0;
            break;
        case SUBSLOTS_BIG:
            s.w.subslots = MW_MAX_SUBSLOTS + 1;
            break;
        case BINS0:
            s.w.duration_bins = 0;
            break;
        case BINS_BIG:
            s.w.duration_bins = MW_MAX_DURATION_BINS + 1;
            break;
        }
        const char *why = mw_window_check(&s.w);
        assert_non_null(why);
        assert_true(strlen(why) > 0);
        assert_int_equal(mw_window_view_set(v, &s.w), -1);
        assert_null(v->w); /* nothing of the previous window or of this one is left */
        assert_int_equal(v->n_fn, 0);
        assert_null(mw_window_view_json(v, NULL));
        assert_null(mw_window_json(&s.w, NULL));
    }
    mw_window_view_free(v);
}

static void test_jobinfo_host(void **state)
{
    (void)state;
    for (int sorted = 0; sorted < 2; sorted++) {
        syn_job_t j;
        syn_job(&j, sorted);
        assert_string_equal(mw_jobinfo_host(&j.job, 0), "a,b");
        assert_string_equal(mw_jobinfo_host(&j.job, 2), "c");
        assert_null(mw_jobinfo_host(&j.job, 3));
        j.ri[0].host = 9; /* beyond the host list */
        assert_null(mw_jobinfo_host(&j.job, j.ri[0].rank));
        j.ri[0].host = 2; /* unknown */
        assert_null(mw_jobinfo_host(&j.job, j.ri[0].rank));
    }
    assert_null(mw_jobinfo_host(NULL, 0));
}

static void test_window_json(void **state)
{
    (void)state;
    syn_t s;
    syn_init(&s, SYN_INDEX, 1);
    syn_job_t j;
    syn_job(&j, 1);
    cJSON *o = mw_window_json(&s.w, &j.job);
    assert_non_null(o);
    char *text = cJSON_PrintUnformatted(o);
    assert_non_null(text);
    /* Exact integers: 2^60 + 1 survives, which a double would not. */
    assert_non_null(strstr(text, "\"count\":1152921504606846977"));
    cJSON_Delete(o);
    o = cJSON_Parse(text); /* what a reader of the line sees */
    assert_non_null(o);
    cJSON_free(text);

    assert_int_equal(num(o, "index"), SYN_INDEX);
    assert_true(num(o, "start_ns") == (double)SYN_INDEX * SYN_WINDOW_NS);
    assert_int_equal(num(o, "ranks_reporting"), 3);
    assert_int_equal(num(o, "ranks_missing"), 1);
    assert_true(cJSON_IsTrue(get(o, "partial")));
    assert_true(near(num(o, "mpi_fraction"), 0.02));
    assert_string_equal(get(o, "job")->valuestring, "job \"one\"");
    assert_int_equal(num(o, "skipped"), 5 + 1 /* density fn 0 */);

    const cJSON *fns = get(o, "functions");
    assert_int_equal(cJSON_GetArraySize(fns), 3);
    const cJSON *ar = get(fns, "MPI_Allreduce");
    assert_int_equal(num(ar, "count"), 30);
    assert_int_equal(num(ar, "time_ns"), 6000000);
    assert_int_equal(num(ar, "min_ns"), 100);
    assert_int_equal(num(ar, "max_ns"), 900000);
    assert_int_equal(num(ar, "bytes"), 240);
    assert_int_equal(num(ar, "hist_first"), 7);
    assert_int_equal(cJSON_GetArraySize(get(ar, "hist")), 3);
    assert_int_equal(cJSON_GetArrayItem(get(ar, "hist"), 2)->valueint, 20);
    assert_true(near(num(ar, "fraction"), 3.5 / 12));
    const cJSON *inside = get(ar, "inside");
    assert_int_equal(cJSON_GetArraySize(inside), 4);
    assert_true(near(cJSON_GetArrayItem(inside, 0)->valuedouble, 1.0));
    assert_true(near(cJSON_GetArrayItem(inside, 1)->valuedouble, 1.0 / 6));
    const cJSON *recv = get(fns, "MPI_Recv");
    assert_int_equal(num(recv, "count"), 0);
    assert_true(near(cJSON_GetArrayItem(get(recv, "inside"), 3)->valuedouble, 1.0 / 3));

    const cJSON *pairs = get(o, "pairs");
    assert_int_equal(cJSON_GetArraySize(pairs), 2);
    assert_int_equal(num(cJSON_GetArrayItem(pairs, 0), "bytes"), 500);
    const cJSON *longest = get(o, "longest");
    assert_int_equal(cJSON_GetArraySize(longest), 4);
    const cJSON *c0 = cJSON_GetArrayItem(longest, 0);
    assert_string_equal(get(c0, "fn")->valuestring, "MPI_Allreduce");
    assert_string_equal(get(c0, "host")->valuestring, "c");
    assert_int_equal(num(c0, "peer"), -1);
    assert_int_equal(num(c0, "duration_ns"), 50000);
    const cJSON *density = get(o, "density");
    assert_int_equal(cJSON_GetArraySize(density), 1);
    assert_int_equal(num(cJSON_GetArrayItem(density, 0), "sub"), -1);
    cJSON_Delete(o);

    /* Without a job: no job name, no hosts. */
    o = mw_window_json(&s.w, NULL);
    assert_non_null(o);
    assert_null(cJSON_GetObjectItem(o, "job"));
    assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(get(o, "longest"), 0), "host"));
    cJSON_Delete(o);
}

/* ---- CSV ---------------------------------------------------------------------------------- */

static void test_csv_rows(void **state)
{
    (void)state;
    syn_t s;
    syn_init(&s, SYN_INDEX, 1);
    mw_window_view_t *v = mw_window_view_new();
    mw_window_view_set(v, &s.w);
    mem_t m;
    mem_open(&m);
    csv_header(m.f, 0);
    mw_export_place_t place = {998, 99800000000ull}; /* the job began 998 windows earlier */
    csv_window_rows(m.f, v, &place);
    mem_close(&m);
    /* Ascending ids: MPI_Allreduce < MPI_Recv < MPI_Send in the table. */
    char want[1024];
    const char *rows[3];
    char ar[256], send[256], recv[256];
    snprintf(ar, sizeof ar,
             "998,99.800000000,1000,100.000000000,MPI_Allreduce,30,6000000,100,900000,240,%.6g,3,1",
             3.5 / 12);
    snprintf(send, sizeof send, "998,99.800000000,1000,100.000000000,MPI_Send,%llu,5,1,2,7,0,3,1",
             BIG_COUNT);
    snprintf(recv, sizeof recv, "998,99.800000000,1000,100.000000000,MPI_Recv,0,0,,,0,%.6g,3,1",
             1.0 / 12);
    for (uint32_t i = 0; i < 3; i++)
        rows[i] = v->fn[i] == ID_ALLREDUCE ? ar : v->fn[i] == ID_SEND ? send : recv;
    snprintf(want, sizeof want,
             "window,t_s,grid_index,start_s,function,calls,time_ns,min_ns,max_ns,bytes,"
             "fraction_inside,"
             "ranks_reporting,ranks_missing\n%s\n%s\n%s\n",
             rows[0], rows[1], rows[2]);
    assert_string_equal(m.text, want);
    free(m.text);

    /* A rank's sample: the fraction is the rank's own time inside. */
    Mpiwatch__Sample smp = MPIWATCH__SAMPLE__INIT;
    smp.window = 7;
    smp.n_functions = 1;
    smp.functions = s.fs_ptr;
    uint32_t ofn[1] = {ID_ALLREDUCE}, osub[1] = {2};
    uint64_t ons[1] = {SYN_SLOT_NS};
    smp.n_occ_fn = smp.n_occ_sub = smp.n_occ_ns = 1;
    smp.occ_fn = ofn, smp.occ_sub = osub, smp.occ_ns = ons;
    mw_window_view_set_sample(v, &smp, SYN_WINDOW_NS, 4);
    mem_open(&m);
    csv_header(m.f, 1);
    mw_export_place_t first = {0, 0};
    csv_rank_rows(m.f, v, 5, "node \"x\",1", &first);
    mem_close(&m);
    assert_string_equal(m.text, "window,t_s,grid_index,start_s,rank,host,function,calls,time_ns,"
                                "min_ns,max_ns,bytes,fraction_inside\n"
                                "0,0.000000000,7,0.700000000,5,\"node \"\"x\"\",1\",MPI_Allreduce,"
                                "30,6000000,100,900000,240,0.25\n");
    free(m.text);
    mw_window_view_free(v);
}

static void test_text_helpers(void **state)
{
    (void)state;
    mem_t m;
    mem_open(&m);
    put_us(m.f, 1234567, 1000);
    fputc(' ', m.f);
    put_us(m.f, 1000, 1234567);
    fputc(' ', m.f);
    put_seconds(m.f, 5000000001ull);
    fputc(' ', m.f);
    json_string(m.f, "a\"b\\c\n\x01\xc3\xa9\xc3");
    fputc(' ', m.f);
    csv_field(m.f, "plain");
    fputc(' ', m.f);
    csv_field(m.f, "li\nne");
    fputc(' ', m.f);
    csv_field(m.f, "\xff\"x\"");
    mem_close(&m);
    /* Valid UTF-8 (\xc3\xa9) passes, a lone byte becomes U+FFFD. */
    assert_string_equal(m.text, "1233.567 -1233.567 5.000000001 \"a\\\"b\\\\c\\u000a\\u0001"
                                "\xc3\xa9\\ufffd\" plain \"li\nne\" \"\xef\xbf\xbd\"\"x\"\"\"");
    free(m.text);
}

static void test_utf8(void **state)
{
    (void)state;
    assert_int_equal(mw_utf8_seq("a"), 1);
    assert_int_equal(mw_utf8_seq(""), 0);
    assert_int_equal(mw_utf8_seq("\xc3\xa9"), 2);
    assert_int_equal(mw_utf8_seq("\xe2\x82\xac"), 3);
    assert_int_equal(mw_utf8_seq("\xf0\x9f\x98\x80"), 4);
    assert_int_equal(mw_utf8_seq("\xc0\xaf"), 0);         /* overlong */
    assert_int_equal(mw_utf8_seq("\xe0\x80\xaf"), 0);     /* overlong */
    assert_int_equal(mw_utf8_seq("\xed\xa0\x80"), 0);     /* surrogate */
    assert_int_equal(mw_utf8_seq("\xf4\x90\x80\x80"), 0); /* beyond U+10FFFF */
    assert_int_equal(mw_utf8_seq("\xe2\x82"), 0);         /* cut short */
    assert_int_equal(mw_utf8_seq("\x80"), 0);
    char *c = mw_utf8_clean("n\xffo\xc3\xa9\xe2");
    assert_string_equal(c, "n\xef\xbf\xbdo\xc3\xa9\xef\xbf\xbd");
    free(c);

    /* A host name that is not UTF-8 comes out of the JSON line as valid UTF-8. */
    syn_t s;
    syn_init(&s, SYN_INDEX, 0);
    syn_job_t j;
    syn_job(&j, 1);
    j.hosts[1] = "c\xff";
    cJSON *o = mw_window_json(&s.w, &j.job);
    assert_non_null(o);
    assert_string_equal(get(cJSON_GetArrayItem(get(o, "longest"), 0), "host")->valuestring,
                        "c\xef\xbf\xbd");
    cJSON_Delete(o);
}

/* ---- Chrome trace ------------------------------------------------------------------------- */

/* Events of the parsed trace with the given phase (and name, when not NULL). */
static int count_events(const cJSON *events, const char *ph, const char *name)
{
    int n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, events)
    {
        if (strcmp(get(e, "ph")->valuestring, ph) == 0 &&
            (!name || strcmp(get(e, "name")->valuestring, name) == 0))
            n++;
    }
    return n;
}

/* The value of function fn's counter at ts (µs from the origin), or -1 when none is written. */
static double counter_at(const cJSON *events, unsigned fn, double ts)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, events)
    {
        if (strcmp(get(e, "ph")->valuestring, "C") == 0 &&
            strcmp(get(e, "name")->valuestring, mw_fn_name(fn)) == 0 && near(num(e, "ts"), ts))
            return num(get(e, "args"), "fraction");
    }
    return -1;
}

static void test_trace(void **state)
{
    (void)state;
    syn_t s1, s2, s4;
    syn_job_t j;
    syn_job(&j, 0);
    syn_init(&s1, SYN_INDEX, 1);
    syn_init(&s2, SYN_INDEX + 1, 0);
    syn_init(&s4, SYN_INDEX + 3, 0);                    /* after a gap of one window */
    s2.w.n_occ_fn = s2.w.n_occ_sub = s2.w.n_occ_ns = 1; /* MPI_Recv no longer inside ... */
    s2.occ_sub[0] = 3;                                  /* ... and MPI_Allreduce only at the end */
    s2.w.n_longest = 1;
    s2.call[0].start_ns = (SYN_INDEX + 1ull) * SYN_WINDOW_NS - 10000; /* overlaps nothing */
    s4.w.n_longest = 0;
    mw_window_view_t *v = mw_window_view_new();
    mem_t m;
    mem_open(&m);
    mw_trace_t t;
    trace_begin(&t, m.f);
    trace_set_origin(&t, (uint64_t)SYN_INDEX * SYN_WINDOW_NS + 123); /* the recording's start */
    assert_int_equal(trace_job(&t, &j.job), 0);
    Mpiwatch__JobEvent ev = MPIWATCH__JOB_EVENT__INIT;
    ev.kind = "job_start";
    ev.job = "j";
    ev.detail = "3 ranks";
    ev.real_ns = (uint64_t)SYN_INDEX * SYN_WINDOW_NS + 2000;
    trace_job_event(&t, &ev, 0);
    mw_window_view_set(v, &s1.w);
    assert_int_equal(trace_window(&t, v), 0);
    mw_window_view_set(v, &s2.w);
    assert_int_equal(trace_window(&t, v), 0);
    mw_window_view_set(v, &s4.w);
    assert_int_equal(trace_window(&t, v), 0);
    trace_end(&t);
    mem_close(&m);

    cJSON *root = cJSON_Parse(m.text);
    if (!root)
        fail_msg("the trace is not JSON:\n%s", m.text);
    /* No displayTimeUnit: older Perfetto versions read it as the unit of the timestamps. */
    assert_null(cJSON_GetObjectItem(root, "displayTimeUnit"));
    assert_string_equal(get(get(root, "otherData"), "origin_ns")->valuestring, "100000000000");
    const cJSON *events = get(root, "traceEvents");

    /* Counters: the origin is the whole second before the recording's start, window 1000
     * starts at 100 s, so sub-slot k of window 1000 + n is at (n * 100 + k * 25) ms. Only
     * changes are written (-1: nothing at that time). */
    assert_true(near(counter_at(events, ID_ALLREDUCE, 0), 1.0));
    assert_true(near(counter_at(events, ID_ALLREDUCE, 25000), 1.0 / 6));
    assert_true(near(counter_at(events, ID_ALLREDUCE, 50000), 0));
    assert_true(near(counter_at(events, ID_ALLREDUCE, 75000), -1));
    assert_true(near(counter_at(events, ID_RECV, 75000), 1.0 / 3));
    /* Window 1001: MPI_Recv has no data (back to 0 at its start), MPI_Allreduce is inside in
     * the last sub-slot. */
    assert_true(near(counter_at(events, ID_RECV, 100000), 0));
    assert_true(near(counter_at(events, ID_ALLREDUCE, 100000), -1));
    assert_true(near(counter_at(events, ID_ALLREDUCE, 175000), 1.0));
    /* No window 1002: back to 0 where 1001 ended. */
    assert_true(near(counter_at(events, ID_ALLREDUCE, 200000), 0));
    assert_true(near(counter_at(events, ID_ALLREDUCE, 300000), 1.0));
    assert_true(near(counter_at(events, ID_RECV, 375000), 1.0 / 3));
    /* The end: every counter back to 0 where the last window ends. */
    assert_true(near(counter_at(events, ID_RECV, 400000), 0));
    assert_int_equal(count_events(events, "C", mw_fn_name(ID_SEND)), 0); /* no occupancy */

    /* One marker for the partial window, one for the job event. */
    assert_int_equal(count_events(events, "i", "partial window 1000"), 1);
    assert_int_equal(count_events(events, "i", "job_start"), 1);
    assert_int_equal(count_events(events, "i", NULL), 2);

    /* Calls: 4 in window 1000 and 1 in 1001. Rank 1's second call overlaps its first and goes
     * to lane 1 (tid 1 + 2^20); hosts are processes: "a,b" is pid 3, "c" pid 4. */
    assert_int_equal(count_events(events, "X", NULL), 5);
    int lane0 = 0, lane1 = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, events)
    {
        if (strcmp(get(e, "ph")->valuestring, "X") != 0)
            continue;
        int tid = (int)num(e, "tid");
        assert_int_equal(num(e, "pid"), 4);
        if (tid == 1 || tid == 2)
            lane0++;
        else if (tid == 1 + (int)MW_MAX_RANKS)
            lane1++;
        else
            fail_msg("unexpected tid %d", tid);
        if (tid == 1 + (int)MW_MAX_RANKS) {
            assert_string_equal(get(e, "name")->valuestring, "MPI_Send");
            assert_true(near(num(e, "ts"), 20.0));
            assert_true(near(num(e, "dur"), 40.0));
            assert_int_equal(num(get(e, "args"), "peer"), 2);
            assert_int_equal(num(get(e, "args"), "bytes"), 8);
        }
    }
    assert_int_equal(lane0, 4);
    assert_int_equal(lane1, 1);

    /* Names: the hosts' processes and the ranks' threads. */
    int names = 0;
    cJSON_ArrayForEach(e, events)
    {
        if (strcmp(get(e, "ph")->valuestring, "M") != 0)
            continue;
        const char *what = get(e, "name")->valuestring;
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(get(e, "args"), "name"));
        if (!strcmp(what, "process_name") && num(e, "pid") == 3 && !strcmp(name, "a,b"))
            names |= 1;
        if (!strcmp(what, "process_name") && num(e, "pid") == 4 && !strcmp(name, "c"))
            names |= 2;
        if (!strcmp(what, "thread_name") && num(e, "tid") == 2 && !strcmp(name, "rank 2"))
            names |= 4;
    }
    assert_int_equal(names, 7);

    /* Every event has a tid, and no tid is used in two processes (importers tie a thread to
     * one process); no process is named after the collector's "" host. */
    int64_t tid_pid[64][2];
    int n_tids = 0;
    cJSON_ArrayForEach(e, events)
    {
        int64_t tid = (int64_t)num(e, "tid"), pid = (int64_t)num(e, "pid");
        int k = 0;
        while (k < n_tids && tid_pid[k][0] != tid)
            k++;
        if (k == n_tids) {
            assert_true(n_tids < 64);
            tid_pid[n_tids][0] = tid;
            tid_pid[n_tids++][1] = pid;
        } else if (tid_pid[k][1] != pid) {
            fail_msg("tid %lld in pids %lld and %lld", (long long)tid, (long long)tid_pid[k][1],
                     (long long)pid);
        }
        const cJSON *args = cJSON_GetObjectItem(e, "args");
        if (!strcmp(get(e, "name")->valuestring, "process_name"))
            assert_string_not_equal(get(args, "name")->valuestring, "");
    }
    assert_int_equal(t.calls_no_lane, 0);
    cJSON_Delete(root);
    free(m.text);
    trace_free(&t);
    mw_window_view_free(v);
}

/* More overlapping calls of one rank than there are lanes: counted, not written, and the
 * trace stays valid. */
static void test_trace_lanes_full(void **state)
{
    (void)state;
    syn_t s;
    syn_init(&s, SYN_INDEX, 0);
    for (int i = 0; i < 4; i++) {
        s.call[i].rank = 0;
        s.call[i].start_ns = (uint64_t)SYN_INDEX * SYN_WINDOW_NS + (uint64_t)i;
        s.call[i].duration_ns = 1000;
    }
    syn_t s2 = s; /* the same calls again in the next window: all four lanes are busy */
    s2.w.index = SYN_INDEX + 1;
    for (int i = 0; i < 4; i++)
        s2.call_ptr[i] = &s2.call[i];
    s2.w.longest = s2.call_ptr;
    s2.w.functions = s2.fs_ptr;
    for (int i = 0; i < 4; i++)
        s2.fs_ptr[i] = &s2.fs[i];
    mw_window_view_t *v = mw_window_view_new();
    mem_t m;
    mem_open(&m);
    mw_trace_t t;
    trace_begin(&t, m.f);
    mw_window_view_set(v, &s.w);
    trace_window(&t, v);
    mw_window_view_set(v, &s2.w);
    trace_window(&t, v);
    trace_end(&t);
    mem_close(&m);
    assert_int_equal(t.n_calls, 4);
    assert_int_equal(t.calls_no_lane, 4);
    cJSON *root = cJSON_Parse(m.text);
    assert_non_null(root);
    assert_int_equal(count_events(get(root, "traceEvents"), "X", NULL), 4);
    /* Without a job description the ranks are in the "host unknown" process. */
    const cJSON *e;
    cJSON_ArrayForEach(e, get(root, "traceEvents"))
    {
        if (!strcmp(get(e, "ph")->valuestring, "X"))
            assert_int_equal(num(e, "pid"), MW_EXPORT_PID_NO_HOST);
    }
    cJSON_Delete(root);
    free(m.text);
    trace_free(&t);
    mw_window_view_free(v);
}

/* ---- vtk layout --------------------------------------------------------------------------- */

/* Without nodes: one plane per host of the job's list, in order (the collector's "" host and a
 * host without ranks included, as the viewer draws them), ranks on a grid inside their plane,
 * and the ranks the job does not place on one more plane. */
static void test_vtk_layout_hosts(void **state)
{
    (void)state;
    mw_topo_layout_t l;
    assert_int_equal(mw_topo_layout(&l, NULL), 0);
    assert_int_equal(l.n_nodes, 0);
    assert_int_equal(l.n_ranks, 0);
    mw_topo_layout_free(&l);

    Mpiwatch__JobInfo job = MPIWATCH__JOB_INFO__INIT;
    char *hosts[3] = {"", "a", "b"};
    Mpiwatch__RankInfo ri[4], *rip[4];
    for (uint32_t r = 0; r < 4; r++) {
        mpiwatch__rank_info__init(&ri[r]);
        ri[r].rank = r;
        ri[r].host = r < 3 ? 1 : 7; /* rank 3: a host index out of range */
        rip[r] = &ri[r];
    }
    job.size = 5; /* rank 4 never said hello */
    job.hosts = hosts;
    job.n_hosts = 3;
    job.ranks = rip;
    job.n_ranks = 4;
    assert_int_equal(mw_topo_layout(&l, &job), 0);
    assert_int_equal(l.n_ranks, 5);
    assert_true(l.by_host && l.fallback);
    assert_int_equal(l.n_nodes, 4); /* "", "a", "b" and the unplaced ranks */
    for (int g = 0; g < 4; g++)
        assert_int_equal(l.nodes[g].source, g < 3 ? g : -1);
    assert_string_equal(l.nodes[1].name, "a");
    assert_int_equal(l.n_boxes, 4);
    assert_int_equal(l.boxes[1].ranks, 3);
    assert_int_equal(l.boxes[3].ranks, 2);
    assert_int_equal(l.boxes[0].ranks + l.boxes[2].ranks, 0);
    for (uint32_t r = 0; r < 5; r++) {
        const mw_topo_rank_t *p = &l.ranks[r];
        const mw_topo_box_t *b = &l.boxes[p->node];
        assert_int_equal(p->node, r < 3 ? 1 : 3);
        assert_true(p->pos[0] > b->lo[0] && p->pos[0] < b->hi[0]);
        assert_true(p->pos[2] > b->lo[2] && p->pos[2] < b->hi[2]);
        assert_true(p->pos[1] >= b->hi[1]);
    }
    assert_true(l.ranks[0].pos[0] != l.ranks[1].pos[0] || l.ranks[0].pos[2] != l.ranks[1].pos[2]);
    assert_true(l.boxes[3].lo[0] >= l.boxes[1].hi[0] || l.boxes[3].lo[2] >= l.boxes[1].hi[2]);
    mw_topo_layout_free(&l);
}

/* With hardware: nested boxes, each inside its parent and higher, ranks on their PUs, rank and
 * binding counts per box; an object whose parent index does not precede it is a root. */
static void test_vtk_layout_hardware(void **state)
{
    (void)state;
    /* package 0 > core 0 > PUs 0 and 1; package 0 > core 1 > PUs 2 and 3 */
    const struct {
        uint32_t type;
        int32_t parent;
        uint32_t index;
    } def[7] = {{1, -1, 0}, {3, 0, 0}, {4, 1, 0}, {4, 1, 1}, {3, 0, 1}, {4, 4, 2}, {4, 4, 3}};
    Mpiwatch__TopoObject obj[7], *objp[7];
    for (int i = 0; i < 7; i++) {
        mpiwatch__topo_object__init(&obj[i]);
        obj[i].type = def[i].type;
        obj[i].parent = def[i].parent;
        obj[i].logical = obj[i].os_index = def[i].index;
        objp[i] = &obj[i];
    }
    Mpiwatch__NodeTopology topo = MPIWATCH__NODE_TOPOLOGY__INIT, *topop = &topo;
    topo.node = "n0";
    topo.objects = objp;
    topo.n_objects = 7;
    Mpiwatch__RankInfo ri[4], *rip[4];
    uint32_t bind0[2] = {2, 3};
    for (uint32_t r = 0; r < 4; r++) {
        mpiwatch__rank_info__init(&ri[r]);
        ri[r].rank = r;
        ri[r].pu = (int32_t)(3 - r); /* rank r on PU 3 - r */
        rip[r] = &ri[r];
    }
    ri[0].pus = bind0; /* rank 0 bound to PUs 2 and 3 */
    ri[0].n_pus = 2;
    Mpiwatch__JobInfo job = MPIWATCH__JOB_INFO__INIT;
    job.size = 4;
    job.ranks = rip;
    job.n_ranks = 4;
    job.nodes = &topop;
    job.n_nodes = 1;
    mw_topo_layout_t l;
    assert_int_equal(mw_topo_layout(&l, &job), 0);
    assert_false(l.fallback);
    assert_int_equal(l.n_boxes, 8); /* the node and its 7 objects, every one used */
    for (int i = 0; i < 7; i++) {
        const mw_topo_box_t *b = &l.boxes[1 + i];
        const mw_topo_box_t *up = &l.boxes[def[i].parent < 0 ? 0 : 1 + def[i].parent];
        assert_int_equal(b->type, def[i].type);
        assert_int_equal(b->os_index, (int32_t)def[i].index);
        assert_true(b->lo[0] >= up->lo[0] && b->hi[0] <= up->hi[0]);
        assert_true(b->lo[2] >= up->lo[2] && b->hi[2] <= up->hi[2]);
        assert_true(b->lo[1] > up->lo[1]);
    }
    static const int pu_box[4] = {7, 6, 4, 3}; /* the box of PU 3 - r */
    for (uint32_t r = 0; r < 4; r++) {
        const mw_topo_box_t *pu = &l.boxes[pu_box[r]];
        assert_int_equal(pu->os_index, 3 - (int)r);
        assert_int_equal(pu->ranks, 1);
        assert_int_equal(pu->bound, r < 2 ? 1 : 0);
        assert_true(l.ranks[r].pos[0] > pu->lo[0] && l.ranks[r].pos[0] < pu->hi[0]);
        assert_true(l.ranks[r].pos[2] > pu->lo[2] && l.ranks[r].pos[2] < pu->hi[2]);
    }
    assert_int_equal(l.boxes[2].ranks, 2); /* core 0 */
    assert_int_equal(l.boxes[5].ranks, 2); /* core 1 */
    assert_int_equal(l.boxes[1].ranks, 4); /* the package */
    assert_int_equal(l.boxes[0].ranks, 4);
    mw_topo_layout_free(&l);

    obj[3].parent = 5; /* after itself: PU 1 becomes a root beside the package */
    assert_int_equal(mw_topo_layout(&l, &job), 0);
    assert_int_equal(l.n_boxes, 8);
    assert_true(l.boxes[4].lo[1] == l.boxes[1].lo[1]);
    assert_int_equal(l.boxes[1].ranks, 3);
    mw_topo_layout_free(&l);
}

/* ---- command line ------------------------------------------------------------------------- */

static int parse(mw_export_opts_t *o, const char *line)
{
    char buf[256], *argv[16];
    int argc = 0;
    char err[128];
    snprintf(buf, sizeof buf, "%s", line);
    for (char *tok = strtok(buf, " "); tok && argc < 15; tok = strtok(NULL, " "))
        argv[argc++] = tok;
    argv[argc] = NULL;
    return parse_args(o, argc, argv, err, sizeof err);
}

static void test_args(void **state)
{
    (void)state;
    mw_export_opts_t o;
    assert_int_equal(parse(&o, "x --format csv run.mpiw -o out.csv --per-rank"), 0);
    assert_int_equal(o.format, FMT_CSV);
    assert_int_equal(o.per_rank, 1);
    assert_string_equal(o.input, "run.mpiw");
    assert_string_equal(o.output, "out.csv");
    assert_int_equal(parse(&o, "x run.mpiw --format=perfetto"), 0);
    assert_int_equal(o.format, FMT_PERFETTO);
    assert_string_equal(o.output, "-");
    assert_int_equal(parse(&o, "x --format summary run.mpiw -o -"), 0);
    assert_int_equal(o.format, FMT_SUMMARY);
    assert_int_equal(parse(&o, "x --help"), 1);
    assert_int_equal(parse(&o, "x --format vtk run.mpiw -o d --by step --from 2 --to 5 --every 3"),
                     0);
    assert_int_equal(o.format, FMT_VTK);
    assert_string_equal(o.output, "d");
    assert_true(o.vtk.by_step && o.vtk.have_from && o.vtk.have_to);
    assert_true(o.vtk.from == 2 && o.vtk.to == 5 && o.vtk.every == 3);
    assert_int_equal(parse(&o, "x --format vtk run.mpiw"), -1); /* a directory is required */
    assert_int_equal(parse(&o, "x --format vtk run.mpiw -o -"), -1);
    assert_int_equal(parse(&o, "x --format vtk run.mpiw -o d --by steps"), -1);
    assert_int_equal(parse(&o, "x --format vtk run.mpiw -o d --every 0"), -1);
    assert_int_equal(parse(&o, "x --format vtk run.mpiw -o d --from -1"), -1);
    assert_int_equal(parse(&o, "x --format csv run.mpiw --by step"), -1);
    assert_int_equal(parse(&o, "x --format bogus run.mpiw"), -1);
    assert_int_equal(parse(&o, "x run.mpiw"), -1);
    assert_int_equal(parse(&o, "x --format csv"), -1);
    assert_int_equal(parse(&o, "x --format csv a.mpiw b.mpiw"), -1);
    assert_int_equal(parse(&o, "x --format jsonl --per-rank a.mpiw"), -1);
    assert_int_equal(parse(&o, "x --format csv a.mpiw -o"), -1);
    assert_int_equal(parse(&o, "x --format csv a.mpiw --bogus"), -1);

    mem_t m;
    mem_open(&m);
    usage(m.f);
    mem_close(&m);
    assert_non_null(strstr(m.text, "perfetto"));
    assert_non_null(strstr(m.text, "--per-rank"));
    free(m.text);

    /* A file that does not exist: exit status 2, and no output file left behind. */
    assert_int_equal(parse(&o, "x --format jsonl /nonexistent/run.mpiw -o /tmp/mw-export-none"), 0);
    assert_int_equal(export_run(&o), 2);
    assert_int_equal(access("/tmp/mw-export-none", F_OK), -1);
    assert_int_equal(access("/tmp/mw-export-none.tmp", F_OK), -1);
}

/* The record walk and index the per-call formats share (export_trace.c): two ranks, windows 10,
 * 11 and 13 (12 is a hole), a message per window from rank 0 to rank 1, a second thread on rank
 * 1, and records that are no events (a call, an open record). */
static void test_xt_walk(void **state)
{
    (void)state;
    static mw_trace_rec_t r0[3][2], r1[3][3];
    static mw__xt_part_t parts[6];
    static mw__xt_window_t wins[3];
    const uint64_t widx[3] = {10, 11, 13};
    mw__xt_t x;
    memset(&x, 0, sizeof x);
    for (int w = 0; w < 3; w++) {
        int64_t base = (int64_t)widx[w] * 1000000;
        wins[w] = (mw__xt_window_t){
            .index = widx[w], .start_ns = (uint64_t)base, .ranks_reporting = 2, .exact = 2};
        /* rank 0: a call, then the send */
        r0[w][0] = (mw_trace_rec_t){.start_ns = 100, .dur_ns = 50, .fn = 1, .kind = MW_TK_CALL};
        r0[w][1] = (mw_trace_rec_t){.start_ns = 200,
                                    .dur_ns = 10,
                                    .comm = MW_COMM_ID_WORLD,
                                    .seq = (uint64_t)w,
                                    .bytes = 4,
                                    .peer = 1,
                                    .tag = w,
                                    .fn = 1,
                                    .kind = MW_TK_SEND};
        /* rank 1: a call on thread 1 that began first, the receive, an open call */
        r1[w][0] = (mw_trace_rec_t){
            .start_ns = 50, .dur_ns = 500, .thread = 1, .fn = 1, .kind = MW_TK_CALL};
        r1[w][1] = (mw_trace_rec_t){.start_ns = 150,
                                    .dur_ns = 100,
                                    .comm = MW_COMM_ID_WORLD,
                                    .seq = (uint64_t)w,
                                    .bytes = 4,
                                    .peer = 0,
                                    .tag = w,
                                    .fn = 1,
                                    .kind = MW_TK_RECV};
        r1[w][2] = (mw_trace_rec_t){
            .start_ns = 900, .dur_ns = 5, .fn = 1, .kind = MW_TK_CALL, .flags = MW_TF_OPEN};
        parts[w] =
            (mw__xt_part_t){.rank = 0, .window = widx[w], .base_ns = base, .recs = r0[w], .n = 2};
        parts[3 + w] =
            (mw__xt_part_t){.rank = 1, .window = widx[w], .base_ns = base, .recs = r1[w], .n = 3};
    }
    x.parts = parts;
    x.nparts = 6;
    x.windows = wins;
    x.nwindows = 3;
    x.size = 2;

    mw__xt_ref_t *v = NULL;
    size_t n = 0;
    uint64_t open = 0;
    /* by start: rank, then global start; the open record kept */
    assert_int_equal(mw__xt_refs(&x, 0, x.nparts, MW__XT_BY_START, 0, &v, &n, &open), 0);
    assert_int_equal(n, 15);
    assert_int_equal(open, 0);
    for (size_t i = 1; i < n; i++)
        assert_true(v[i - 1].rank < v[i].rank ||
                    (v[i - 1].rank == v[i].rank && v[i - 1].t0 <= v[i].t0));
    assert_int_equal(v[6].rank, 1);
    assert_int_equal(v[6].thread, 1); /* rank 1's first record: the thread 1 call at 50 */
    assert_int_equal(v[6].t1 - v[6].t0, 500);
    free(v);
    /* by thread, open records left out and counted */
    assert_int_equal(mw__xt_refs(&x, 3, 6, MW__XT_BY_THREAD, 1, &v, &n, &open), 0);
    assert_int_equal(n, 6);
    assert_int_equal(open, 3);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(v[i].thread, 0); /* thread 0 first, then thread 1 */
    for (size_t i = 3; i < 6; i++)
        assert_int_equal(v[i].thread, 1);
    free(v);

    mw__xt_index_t ix;
    assert_int_equal(mw__xt_index(&x, MW__XT_MATCH | MW__XT_LOGICAL, &ix), 0);
    assert_int_equal(ix.total, 15);
    assert_int_equal(ix.m.nmsgs, 3);
    assert_int_equal(ix.nevents, 6); /* a send and a receive per window */
    assert_int_equal(ix.lost_events, 0);
    /* windows pushed as ranges: the hole at 12 splits them (and is a gap) */
    assert_int_equal(ix.npushed, 2);
    assert_true(ix.pushed[0] == 10 && ix.pushed[1] == 11 && ix.pushed[2] == 13 &&
                ix.pushed[3] == 13);
    assert_int_equal(ix.lstats.gaps, 2); /* the hole and the end */
    for (size_t p = 0; p < x.nparts; p++)
        for (size_t j = 0; j < x.parts[p].n; j++) {
            int64_t e = ix.event[ix.off[p] + j];
            int is_ev =
                x.parts[p].recs[j].kind == MW_TK_SEND || x.parts[p].recs[j].kind == MW_TK_RECV;
            assert_int_equal(e >= 0, is_ev);
            if (e < 0)
                continue;
            const mw_logical_event_t *ev = &ix.events[e];
            assert_int_equal(ev->rank, x.parts[p].rank);
            assert_int_equal(ev->window, x.parts[p].window);
            assert_int_equal(ev->rec, j);
            /* the receive one step after its send, both in one partition */
            int64_t other = ix.match[ix.off[p] + j];
            assert_true(other >= 0);
            if (ev->kind == MW_LE_RECV) {
                const mw_logical_event_t *snd = &ix.events[ix.event[ix.off[p - 3] + 1]];
                assert_int_equal(ev->step, snd->step + 1);
                assert_int_equal(ev->partition, snd->partition);
                assert_int_equal(ev->msg_peer, (int64_t)snd->id);
            }
        }
    mw__xt_index_free(&ix);

    mw_export_opts_t o;
    assert_int_equal(parse(&o, "x --format logical run.mpiw -o out.csv"), 0);
    assert_int_equal(o.format, FMT_LOGICAL);
}

/* A crafted recording's lateness summary with a NaN or infinite lateness_share: each line of
 * --format lateness stays JSON (null), never "nan" or "inf". */
static void test_lateness_share_not_finite(void **state)
{
    (void)state;
    char dir[] = "/tmp/mw-export-late-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char in[256], outp[256];
    snprintf(in, sizeof in, "%s/in.mpiw", dir);
    snprintf(outp, sizeof outp, "%s/out.jsonl", dir);
    FILE *f = fopen(in, "wb");
    assert_non_null(f);
    unsigned char hdr[MW_REC_HEADER_BYTES];
    mw_rec_put_header(hdr);
    assert_int_equal(fwrite(hdr, 1, sizeof hdr, f), sizeof hdr);
    const double shares[3] = {NAN, INFINITY, -INFINITY};
    for (int k = 0; k < 3; k++) {
        Mpiwatch__LatenessSummary s = MPIWATCH__LATENESS_SUMMARY__INIT, *sp = &s;
        s.key = (uint64_t)k;
        s.events = 1;
        s.window_ns = 1000;
        s.lateness_share = shares[k];
        Mpiwatch__Lateness l = MPIWATCH__LATENESS__INIT;
        l.job = (char *)"j";
        l.n_windows = 1;
        l.windows = &sp;
        Mpiwatch__Record rec = MPIWATCH__RECORD__INIT;
        rec.body_case = MPIWATCH__RECORD__BODY_LATENESS;
        rec.lateness = &l;
        uint8_t buf[512];
        size_t n = mpiwatch__record__pack(&rec, buf);
        unsigned char fh[MW_REC_FRAME_HEADER_BYTES];
        mw_rec_put_frame_header(fh, MW_REC_TAG_FRAME, (uint32_t)n, mw_rec_crc(0, buf, n));
        assert_int_equal(fwrite(fh, 1, sizeof fh, f), sizeof fh);
        assert_int_equal(fwrite(buf, 1, n, f), n);
    }
    assert_int_equal(fclose(f), 0);
    assert_int_equal(mw__export_lateness(in, outp), 0);
    f = fopen(outp, "r");
    assert_non_null(f);
    char line[4096];
    int lines = 0;
    while (fgets(line, sizeof line, f)) {
        cJSON *o = cJSON_Parse(line);
        assert_non_null(o);
        assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "lateness_share")));
        cJSON_Delete(o);
        lines++;
    }
    fclose(f);
    assert_int_equal(lines, 3);
    unlink(in);
    unlink(outp);
    rmdir(dir);
}

/* A crafted recording where one rank's trace of a window starts 2^63 ns after the window: its
 * records moved onto the window's axis saturate (far late), they never wrap to the far past
 * (which made the other rank look late by 292 years). */
static void test_xt_logical_shift_saturates(void **state)
{
    (void)state;
    static mw_trace_rec_t r0[1], r1[1];
    static mw__xt_part_t parts[2];
    static mw__xt_window_t win;
    mw__xt_t x;
    memset(&x, 0, sizeof x);
    win = (mw__xt_window_t){.index = 5, .start_ns = 0, .ranks_reporting = 2, .exact = 2};
    r0[0] = (mw_trace_rec_t){.start_ns = 100,
                             .dur_ns = 10,
                             .comm = MW_COMM_ID_WORLD,
                             .peer = -1,
                             .fn = 1,
                             .kind = MW_TK_COLL};
    r1[0] = (mw_trace_rec_t){.start_ns = 100,
                             .dur_ns = 10,
                             .comm = MW_COMM_ID_WORLD,
                             .peer = -1,
                             .fn = 1,
                             .kind = MW_TK_COLL};
    parts[0] = (mw__xt_part_t){.rank = 0, .window = 5, .base_ns = 0, .recs = r0, .n = 1};
    parts[1] = (mw__xt_part_t){.rank = 1, .window = 5, .base_ns = INT64_MAX, .recs = r1, .n = 1};
    x.parts = parts;
    x.nparts = 2;
    x.windows = &win;
    x.nwindows = 1;
    x.size = 2;
    mw__xt_index_t ix;
    assert_int_equal(mw__xt_index(&x, MW__XT_MATCH | MW__XT_LOGICAL, &ix), 0);
    assert_int_equal(ix.nevents, 2); /* one collective: rank 1 entered it far later */
    for (size_t e = 0; e < ix.nevents; e++)
        if (ix.events[e].rank == 0)
            assert_true(ix.events[e].lateness_ns == 0); /* rank 0 is on time */
    mw__xt_index_free(&ix);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_view_fractions_and_checks),
        cmocka_unit_test(test_window_policy),
        cmocka_unit_test(test_jobinfo_host),
        cmocka_unit_test(test_window_json),
        cmocka_unit_test(test_csv_rows),
        cmocka_unit_test(test_text_helpers),
        cmocka_unit_test(test_utf8),
        cmocka_unit_test(test_trace),
        cmocka_unit_test(test_trace_lanes_full),
        cmocka_unit_test(test_vtk_layout_hosts),
        cmocka_unit_test(test_vtk_layout_hardware),
        cmocka_unit_test(test_args),
        cmocka_unit_test(test_xt_walk),
        cmocka_unit_test(test_lateness_share_not_finite),
        cmocka_unit_test(test_xt_logical_shift_saturates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
