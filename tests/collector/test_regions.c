/* test_regions.c: code regions, call sites, per-rank detail, per-function pairs and the spread
 * across ranks, from crafted samples of several ranks through mw_collector_frame() (decoding,
 * checks, job tables, merge) to the encoded Window and JobInfo, decoded again by protobuf-c.
 *
 * Every expected figure is computed here from the values the samples carry, so a merge that
 * loses, doubles or misattributes an entry fails.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <math.h>

#include "fixture.h"
#include "regions.h"
#include "window_pb.h"

/* The last closed window, encoded and decoded again (what every consumer reads). */
static Mpiwatch__Window *last_pw;
static unsigned n_windows;
static mw_pb_encoder_t enc;

static void on_window(const mw_window_t *w, void *user)
{
    (void)user;
    size_t len = mw__window_pack(&enc, w, FX_REAL_NS);
    assert_true(len > 0);
    if (last_pw)
        mpiwatch__window__free_unpacked(last_pw, NULL);
    last_pw = mpiwatch__window__unpack(NULL, len, enc.out);
    assert_non_null(last_pw);
    n_windows++;
}

static fx_t *setup(const char *rank_detail)
{
    fx_t *f = fx_new();
    if (rank_detail)
        f->opt.rank_detail = strdup(rank_detail);
    f->c->on_window = on_window;
    f->c->on_window_user = f;
    n_windows = 0;
    return f;
}

static void teardown(fx_t *f)
{
    if (last_pw)
        mpiwatch__window__free_unpacked(last_pw, NULL);
    last_pw = NULL;
    mw__pb_encoder_free(&enc);
    fx_free(f);
}

static Mpiwatch__JobInfo *job_info(fx_t *f)
{
    mw_pb_encoder_t e = {0};
    size_t len = mw__jobinfo_pack(&e, &f->c->job, mw_fn_table_hash());
    assert_true(len > 0);
    Mpiwatch__JobInfo *ji = mpiwatch__job_info__unpack(NULL, len, e.out);
    mw__pb_encoder_free(&e);
    assert_non_null(ji);
    return ji;
}

#define NR 3
static const char *const MODULE = "/opt/app/bin/solver";

/* Rank r's figures: regions "solve" and "io" (rank 2 numbers them the other way round), two
 * call sites of MPI_Allreduce and one of MPI_Send, peers by function. */
static uint64_t alr_ns(uint32_t r)
{
    return (uint64_t[]){100, 200, 600}[r];
}

static void rank_sample(tm_msg_t *m, uint32_t r, uint64_t w, int defs)
{
    tm_sample(m, "regions", r, w, FX_REAL_NS);
    uint32_t solve = r == 2 ? 2 : 1, io = r == 2 ? 1 : 2;
    if (defs) {
        tm_add_region_def(m, solve, "solve", 1);
        tm_add_region_def(m, io, "io", 2);
        tm_add_site_def(m, 1, MODULE, 0x1000, "main", "/src/solver.c", 42);
        tm_add_site_def(m, 2, MODULE, 0x2000, "exchange", "/src/halo.c", 7);
    }
    tm_add_fn(m, fx_fn(0), 2 + r, alr_ns(r), 10, 90 + r, 0);
    if (r == 0)
        tm_add_fn(m, fx_fn(1), 3, 300, 50, 150, 3000);
    /* Regions: count r+1, incl 1000(r+1), excl 400(r+1), mpi 100(r+1); io only on ranks 0, 1. */
    uint64_t k = r + 1;
    if (r == 2) { /* only "solve", its own id 2: the job's id 1 */
        tm_add_region(m, solve, k, 1000 * k, 400 * k, 100 * k);
    } else {
        tm_add_region(m, solve, k, 1000 * k, 400 * k, 100 * k);
        tm_add_region(m, io, 5, 50 * k, 50 * k, 7);
    }
    /* Sites: site 1 / Allreduce on every rank, site 2 / Allreduce and site 1 / Send on rank 0. */
    tm_add_site(m, 1, fx_fn(0), 2 + r, alr_ns(r) - (r == 0 ? 40 : 0), 0, 90 + r);
    if (r == 0) {
        tm_add_site(m, 2, fx_fn(0), 0, 40, 0, 40);
        tm_add_site(m, 1, fx_fn(1), 3, 300, 3000, 150);
    }
    /* Peers: rank 0 sends to 1 with MPI_Send and MPI_Isend; rank 1 to 2 without peer_fn. */
    if (r == 0) {
        tm_add_peer_fn(m, 1, fx_fn(1), 2, 2000);
        tm_add_peer_fn(m, 1, fx_fn(6), 1, 1000);
    } else if (r == 1) {
        tm_add_peer(m, 2, 4, 400);
    }
}

static void test_regions_exact(void **state)
{
    (void)state;
    fx_t *f = setup(NULL);
    fx_hellos(f, "regions", NR);
    tm_msg_t m;
    for (uint32_t r = 0; r < NR; r++) {
        rank_sample(&m, r, FX_W0, 1);
        assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    }
    assert_int_equal(n_windows, 1); /* every rank reported: closed */
    Mpiwatch__Window *w = last_pw;

    /* Regions by job id: "solve" 1, "io" 2 (rank 0 named them first). */
    assert_int_equal(w->n_regions, 2);
    const Mpiwatch__RegionStat *solve = w->regions[0], *io = w->regions[1];
    assert_int_equal(solve->region, 1);
    assert_int_equal(io->region, 2);
    assert_int_equal(solve->count, 1 + 2 + 3);
    assert_int_equal(solve->incl_ns, 1000 * 6);
    assert_int_equal(solve->excl_ns, 400 * 6);
    assert_int_equal(solve->mpi_ns, 100 * 6);
    assert_int_equal(solve->ranks, 3);
    assert_int_equal(io->count, 10);
    assert_int_equal(io->incl_ns, 50 * 3);
    assert_int_equal(io->mpi_ns, 14);
    assert_int_equal(io->ranks, 2);

    /* Per rank and region: rank-major, region ids increasing, and the sums above exactly. */
    assert_int_equal(w->n_rr_rank, 5);
    uint64_t sum_incl[3] = {0};
    for (size_t i = 0; i < w->n_rr_rank; i++) {
        if (i) {
            assert_true(
                w->rr_rank[i - 1] < w->rr_rank[i] ||
                (w->rr_rank[i - 1] == w->rr_rank[i] && w->rr_region[i - 1] < w->rr_region[i]));
        }
        sum_incl[w->rr_region[i]] += w->rr_incl_ns[i];
    }
    assert_int_equal(sum_incl[1], solve->incl_ns);
    assert_int_equal(sum_incl[2], io->incl_ns);
    assert_int_equal(w->rr_rank[4], 2);
    assert_int_equal(w->rr_region[4], 1);
    assert_int_equal(w->rr_count[4], 3);

    /* Per rank and function: only non-zero entries, rank-major. */
    assert_int_equal(w->n_rf_rank, 4);
    assert_int_equal(w->rf_rank[0], 0);
    assert_int_equal(w->rf_rank[3], 2);
    assert_int_equal(w->rf_ns[3], alr_ns(2));
    assert_int_equal(w->rank_detail_left_out, 0);

    /* Sites: (1, Allreduce) over three ranks, its top rank 2; (1, Send); (2, Allreduce). */
    assert_int_equal(w->n_sites, 3);
    const Mpiwatch__SiteStat *s0 = NULL, *s1 = NULL, *s2 = NULL;
    for (size_t i = 0; i < w->n_sites; i++) {
        const Mpiwatch__SiteStat *s = w->sites[i];
        if (s->site == 1 && s->fn == fx_fn(0))
            s0 = s;
        else if (s->site == 1 && s->fn == fx_fn(1))
            s1 = s;
        else if (s->site == 2)
            s2 = s;
    }
    assert_non_null(s0);
    assert_non_null(s1);
    assert_non_null(s2);
    assert_int_equal(s0->count, 2 + 3 + 4);
    assert_int_equal(s0->ns, 60 + 200 + 600);
    assert_int_equal(s0->ranks, 3);
    assert_int_equal(s0->top_rank, 2);
    assert_int_equal(s0->top_rank_ns, 600);
    assert_int_equal(s0->max_ns, 92);
    assert_int_equal(s1->bytes, 3000);
    assert_int_equal(s2->ns, 40);
    /* The site times add up to the function's time: nothing lost or counted twice. */
    assert_int_equal(s0->ns + s2->ns, alr_ns(0) + alr_ns(1) + alr_ns(2));

    /* Spread of each rank's time in the function, zeros for reporting ranks without it. */
    const Mpiwatch__FunctionStat *alr = NULL, *snd = NULL;
    for (size_t i = 0; i < w->n_functions; i++) {
        if (w->functions[i]->fn == fx_fn(0))
            alr = w->functions[i];
        if (w->functions[i]->fn == fx_fn(1))
            snd = w->functions[i];
    }
    assert_non_null(alr);
    assert_non_null(snd);
    double mean = (100 + 200 + 600) / 3.0;
    double var =
        ((100 - mean) * (100 - mean) + (200 - mean) * (200 - mean) + (600 - mean) * (600 - mean)) /
        3.0;
    assert_true(fabs(alr->rank_sd_ns - sqrt(var)) < 1e-9);
    assert_int_equal(alr->rank_max, 2);
    assert_int_equal(alr->rank_max_ns, 600);
    assert_true(fabs(snd->rank_sd_ns - sqrt((200.0 * 200 + 100 * 100 + 100 * 100) / 3)) < 1e-9);
    assert_int_equal(snd->rank_max, 0);

    /* Pairs: pair_* sums every function; fpair_* only samples with peer_fn. */
    assert_int_equal(w->n_pair_src, 2);
    assert_int_equal(w->pair_messages[0] + w->pair_messages[1], 3 + 4);
    assert_int_equal(w->n_fpair_src, 2);
    uint64_t fb = 0;
    for (size_t i = 0; i < w->n_fpair_src; i++) {
        assert_int_equal(w->fpair_src[i], 0);
        assert_int_equal(w->fpair_dst[i], 1);
        fb += w->fpair_bytes[i];
        if (w->fpair_fn[i] == fx_fn(1))
            assert_int_equal(w->fpair_messages[i], 2);
        else
            assert_int_equal(w->fpair_fn[i], fx_fn(6));
    }
    assert_int_equal(fb, 3000);

    /* The job description: the tables with the first rank's definitions, sent again. */
    assert_int_equal(f->c->job.rs_published_gen, f->c->job.rs.gen);
    Mpiwatch__JobInfo *ji = job_info(f);
    assert_int_equal(ji->n_regions, 2);
    assert_string_equal(ji->regions[0]->name, "solve");
    assert_int_equal(ji->regions[1]->source, 2);
    assert_int_equal(ji->n_sites, 2);
    assert_int_equal(ji->sites[1]->id, 2);
    assert_int_equal(ji->sites[1]->line, 7);
    assert_string_equal(ji->sites[1]->file, "/src/halo.c");
    assert_int_equal(ji->sites[0]->first_rank, 0);
    mpiwatch__job_info__free_unpacked(ji, NULL);

    /* A second window without definitions: same ids, and no new job description needed. */
    uint64_t gen = f->c->job.rs.gen;
    for (uint32_t r = 0; r < NR; r++) {
        rank_sample(&m, r, FX_W0 + 1, 0);
        assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    }
    assert_int_equal(n_windows, 2);
    assert_int_equal(f->c->job.rs.gen, gen);
    assert_int_equal(last_pw->n_regions, 2);
    assert_int_equal(last_pw->regions[0]->incl_ns, 6000);
    /* Job totals: two windows. */
    assert_int_equal(f->c->job.rs.regions[0].incl_ns, 12000);
    for (int r = 0; r < MW_RS_COUNT; r++)
        assert_int_equal(f->c->job.rs.refused[r], 0);
    teardown(f);
}

/* --rank-detail off: no rf_/rr_ entries, every one counted, the sums unchanged. */
static void test_rank_detail_off(void **state)
{
    (void)state;
    fx_t *f = setup("off");
    fx_hellos(f, "regions", NR);
    tm_msg_t m;
    for (uint32_t r = 0; r < NR; r++) {
        rank_sample(&m, r, FX_W0, 1);
        assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    }
    assert_int_equal(n_windows, 1);
    assert_int_equal(last_pw->n_rf_rank, 0);
    assert_int_equal(last_pw->n_rr_rank, 0);
    assert_int_equal(last_pw->rank_detail_left_out, 4 + 5);
    assert_int_equal(last_pw->regions[0]->incl_ns, 6000);
    teardown(f);
}

/* What a rank may not claim: left out and counted by reason, the sample still merged. */
static void test_regions_refused(void **state)
{
    (void)state;
    fx_t *f = setup(NULL);
    fx_hellos(f, "regions", 2);
    static char long_name[MW_REGION_NAME_MAX + 2];
    memset(long_name, 'x', sizeof long_name - 1);
    static char long_file[MW_SITE_STRING_MAX + 2];
    memset(long_file, 'f', sizeof long_file - 1);
    tm_msg_t m;
    tm_sample(&m, "regions", 0, FX_W0, FX_REAL_NS);
    tm_add_fn(&m, fx_fn(0), 1, 10, 10, 10, 0);
    tm_add_region_def(&m, 1, "ok", 1);
    tm_add_region_def(&m, 0, "zero", 1);                      /* def_id */
    tm_add_region_def(&m, MW_RANK_MAX_REGIONS + 1, "big", 1); /* def_id */
    tm_add_region_def(&m, 2, long_name, 1);                   /* def_text */
    tm_add_region_def(&m, 3, "", 1);                          /* def_text */
    tm_add_region_def(&m, 4, "bad\x01", 1);                   /* def_text */
    tm_add_region_def(&m, 1, "other", 1);                     /* def_changed */
    tm_add_site_def(&m, 1, MODULE, 0x10, "f", "a.c", 1);
    tm_add_site_def(&m, 2, MODULE, 0x20, "g", long_file, 2); /* def_text */
    tm_add_region(&m, 1, 1, 10, 10, 0);
    tm_add_region(&m, 1, 1, 10, 10, 0);        /* duplicate */
    tm_add_region(&m, 2, 1, 10, 10, 0);        /* undefined (refused def) */
    tm_add_region(&m, 9, 1, 10, 10, 0);        /* undefined */
    tm_add_region(&m, 0, 1, 10, 10, 0);        /* undefined */
    tm_add_region(&m, 1u << 31, 1, 10, 10, 0); /* undefined */
    tm_add_site(&m, 1, fx_fn(0), 1, 10, 0, 10);
    tm_add_site(&m, 1, MW_FN_COUNT, 1, 10, 0, 10);                /* fn_range */
    tm_add_site(&m, 1, 0, 1, 10, 0, 10);                          /* fn_range */
    tm_add_site(&m, 2, fx_fn(0), 1, 10, 0, 10);                   /* undefined */
    tm_add_site(&m, 1, fx_fn(0), 1, 10, 0, 10);                   /* duplicate */
    tm_add_site(&m, 1, fx_fn(1), MW_RS_VALUE_MAX + 1, 10, 0, 10); /* value */
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    const uint64_t *ref = f->c->job.rs.refused;
    assert_int_equal(ref[MW_RS_DEF_ID], 2);
    assert_int_equal(ref[MW_RS_DEF_TEXT], 4);
    assert_int_equal(ref[MW_RS_DEF_CHANGED], 1);
    assert_int_equal(ref[MW_RS_DUPLICATE], 2);
    assert_int_equal(ref[MW_RS_UNDEFINED], 5);
    assert_int_equal(ref[MW_RS_FN_RANGE], 2);
    assert_int_equal(ref[MW_RS_VALUE], 1);
    assert_int_equal(f->c->stats.rs_refused[MW_RS_UNDEFINED], 5);
    assert_int_equal(f->c->job.rs.n_regions, 1);
    assert_int_equal(f->c->job.rs.n_sites, 1);

    /* Parallel arrays of different lengths reject the sample (bad_field), as for every array;
     * so does a peer_fn array that does not match the peers. */
    tm_sample(&m, "regions", 1, FX_W0, FX_REAL_NS);
    tm_add_region(&m, 1, 1, 1, 1, 1);
    m.sample.n_region_mpi_ns = 0;
    assert_int_equal(fx_feed(f, &m), MW_REJECT_BAD_FIELD);
    tm_sample(&m, "regions", 1, FX_W0, FX_REAL_NS);
    tm_add_peer_fn(&m, 0, fx_fn(1), 1, 1);
    tm_add_peer(&m, 0, 1, 1);
    assert_int_equal(fx_feed(f, &m), MW_REJECT_BAD_FIELD);
    tm_sample(&m, "regions", 1, FX_W0, FX_REAL_NS);
    tm_add_peer_fn(&m, 0, MW_FN_COUNT, 1, 1);
    assert_int_equal(fx_feed(f, &m), MW_REJECT_BAD_FIELD);

    /* The window holds exactly the valid entries. */
    tm_sample(&m, "regions", 1, FX_W0, FX_REAL_NS);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    assert_int_equal(n_windows, 1);
    assert_int_equal(last_pw->n_regions, 1);
    assert_int_equal(last_pw->regions[0]->incl_ns, 10);
    assert_int_equal(last_pw->n_sites, 1);
    assert_int_equal(last_pw->sites[0]->ns, 10);
    teardown(f);
}

/* Per-rank caps: a rank defining more regions than MW_RANK_MAX_REGIONS, a sample with more
 * entries than MW_SAMPLE_MAX_REGION_ENTRIES; the job's cap on distinct names. */
static void test_regions_caps(void **state)
{
    (void)state;
    fx_t *f = setup(NULL);
    uint32_t ranks = MW_JOB_MAX_REGIONS / MW_RANK_MAX_REGIONS + 2;
    fx_hellos(f, "regions", ranks);
    size_t n = MW_RANK_MAX_REGIONS + 10, ne = MW_SAMPLE_MAX_REGION_ENTRIES + 7;
    Mpiwatch__RegionDef *defs = calloc(n, sizeof *defs), **dp = calloc(n, sizeof *dp);
    char(*names)[16] = calloc(n, sizeof *names);
    uint32_t *ids = calloc(ne, sizeof *ids);
    uint64_t *vals = calloc(ne, sizeof *vals);
    assert_true(defs && dp && names && ids && vals);
    tm_msg_t m;
    for (uint32_t r = 0; r < ranks; r++) {
        tm_sample(&m, "regions", r, FX_W0, FX_REAL_NS);
        for (size_t i = 0; i < n; i++) {
            mpiwatch__region_def__init(&defs[i]);
            defs[i].id = (uint32_t)i + 1;
            snprintf(names[i], sizeof names[i], "r%u.%zu", r, i); /* distinct on every rank */
            defs[i].name = names[i];
            dp[i] = &defs[i];
        }
        m.sample.n_region_defs = n;
        m.sample.region_defs = dp;
        for (size_t i = 0; i < ne; i++) {
            ids[i] = (uint32_t)(i % MW_RANK_MAX_REGIONS) + 1;
            vals[i] = 1;
        }
        Mpiwatch__Sample *s = &m.sample;
        s->n_region_id = s->n_region_count = s->n_region_incl_ns = s->n_region_excl_ns =
            s->n_region_mpi_ns = ne;
        s->region_id = ids;
        s->region_count = s->region_incl_ns = s->region_excl_ns = s->region_mpi_ns = vals;
        assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    }
    const mw__rs_t *rs = &f->c->job.rs;
    assert_int_equal(rs->n_regions, MW_JOB_MAX_REGIONS);
    assert_int_equal(rs->refused[MW_RS_DEF_ID], (uint64_t)ranks * 10); /* ids over the cap */
    /* The ranks past the job's cap: their names refused, their entries undefined. */
    uint64_t over = (uint64_t)ranks * MW_RANK_MAX_REGIONS - MW_JOB_MAX_REGIONS;
    assert_int_equal(rs->refused[MW_RS_JOB_CAP], over);
    assert_int_equal(rs->refused[MW_RS_ENTRIES_CAP], (uint64_t)ranks * 7);
    /* Of each sample's first MW_SAMPLE_MAX_REGION_ENTRIES entries, 4 cycles of the ids: the
     * repeats are duplicates. */
    uint64_t per = MW_SAMPLE_MAX_REGION_ENTRIES;
    uint64_t dup = per - MW_RANK_MAX_REGIONS;
    assert_int_equal(rs->refused[MW_RS_DUPLICATE] + rs->refused[MW_RS_UNDEFINED],
                     (uint64_t)ranks * dup + over);
    assert_int_equal(n_windows, 1);
    assert_int_equal(last_pw->n_regions, MW_JOB_MAX_REGIONS);
    uint64_t total = 0;
    for (size_t i = 0; i < last_pw->n_regions; i++)
        total += last_pw->regions[i]->count;
    assert_int_equal(total, MW_JOB_MAX_REGIONS);
    assert_int_equal(last_pw->n_rr_rank, MW_JOB_MAX_REGIONS);
    free(defs);
    free(dp);
    free(names);
    free(ids);
    free(vals);
    teardown(f);
}

/* Site (module, offset) of the job description, by offset; fails when absent. */
static const Mpiwatch__CallSite *ji_site(const Mpiwatch__JobInfo *ji, uint64_t offset)
{
    for (size_t i = 0; i < ji->n_sites; i++)
        if (ji->sites[i]->offset == offset && strcmp(ji->sites[i]->module, MODULE) == 0)
            return ji->sites[i];
    fail_msg("no site at offset %#llx", (unsigned long long)offset);
    return NULL;
}

/* One window of two ranks, each with the definitions given (NULL: none) and one call from
 * each of its sites; returns the job description's gen before the window closed. */
typedef struct {
    uint32_t id;
    uint64_t offset;
    const char *function, *file;
    uint32_t line;
} site_def_in_t;

static uint64_t sites_window(fx_t *f, uint64_t w, const site_def_in_t *d0, size_t n0,
                             const site_def_in_t *d1, size_t n1)
{
    tm_msg_t m;
    uint64_t gen = 0;
    for (uint32_t r = 0; r < 2; r++) {
        const site_def_in_t *d = r ? d1 : d0;
        size_t n = r ? n1 : n0;
        tm_sample(&m, "regions", r, w, FX_REAL_NS);
        tm_add_fn(&m, fx_fn(0), n, 10 * n, 10, 10, 0);
        for (size_t i = 0; i < n; i++)
            tm_add_site_def(&m, d[i].id, MODULE, d[i].offset, d[i].function, d[i].file, d[i].line);
        for (size_t i = 0; i < n; i++)
            tm_add_site(&m, d[i].id, fx_fn(0), 1, 10, 0, 10);
        if (r == 1)
            gen = f->c->job.rs.gen;
        assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    }
    return gen;
}

/* A site defined first without resolution (module and offset only: docs/callsites.md) is
 * completed in the job description by a later definition that knows function, file and line,
 * from the same rank (sent again) or another one (new there); JobInfo is published again; a
 * second, different resolved definition changes nothing. */
static void test_sites_upgrade(void **state)
{
    (void)state;
    fx_t *f = setup(NULL);
    fx_hellos(f, "regions", 2);
    /* Window 0: rank 0 knows A (0x100), B (0x200), C (0x300) unresolved; rank 1 knows B the
     * same way. */
    const site_def_in_t w0r0[] = {
        {1, 0x100, "", "", 0}, {2, 0x200, "", "", 0}, {3, 0x300, "", "", 0}};
    const site_def_in_t w0r1[] = {{7, 0x200, "", "", 0}};
    sites_window(f, FX_W0, w0r0, 3, w0r1, 1);
    assert_int_equal(n_windows, 1);
    const mw__rs_t *rs = &f->c->job.rs;
    assert_int_equal(rs->n_sites, 3);
    assert_int_equal(f->c->job.rs_published_gen, rs->gen);
    uint64_t gen0 = rs->gen;
    Mpiwatch__JobInfo *ji = job_info(f);
    assert_string_equal(ji_site(ji, 0x100)->function, "");
    assert_int_equal(ji_site(ji, 0x100)->line, 0);
    mpiwatch__job_info__free_unpacked(ji, NULL);

    /* Window 1: rank 0 sends A again resolved (same rank) and C with a function only; rank 1
     * sends B resolved, its own id 7 again (another rank than the first). */
    const site_def_in_t w1r0[] = {{1, 0x100, "solve", "/src/a.c", 11}, {3, 0x300, "cheap", "", 0}};
    const site_def_in_t w1r1[] = {{7, 0x200, "halo", "/src/b.c", 22}};
    sites_window(f, FX_W0 + 1, w1r0, 2, w1r1, 1);
    assert_int_equal(n_windows, 2);
    uint64_t gen1 = rs->gen;
    assert_int_equal(gen1, gen0 + 3);                   /* three upgrades */
    assert_int_equal(f->c->job.rs_published_gen, gen1); /* JobInfo published again */
    assert_int_equal(rs->n_sites, 3);
    ji = job_info(f);
    const Mpiwatch__CallSite *a = ji_site(ji, 0x100), *b = ji_site(ji, 0x200),
                             *c = ji_site(ji, 0x300);
    assert_string_equal(a->function, "solve");
    assert_string_equal(a->file, "/src/a.c");
    assert_int_equal(a->line, 11);
    assert_string_equal(b->function, "halo");
    assert_string_equal(b->file, "/src/b.c");
    assert_int_equal(b->line, 22);
    assert_int_equal(b->first_rank, 0);
    assert_string_equal(c->function, "cheap");
    assert_int_equal(c->line, 0);
    mpiwatch__job_info__free_unpacked(ji, NULL);

    /* Window 2: different resolved definitions of A (rank 0 again, rank 1 new) and of B change
     * nothing; C's line arrives (its function stays the one it got first). */
    const site_def_in_t w2r0[] = {{1, 0x100, "other", "/src/x.c", 99},
                                  {3, 0x300, "resolved", "/src/c.c", 33}};
    const site_def_in_t w2r1[] = {{7, 0x200, "", "", 0}, {8, 0x100, "third", "/src/y.c", 5}};
    sites_window(f, FX_W0 + 2, w2r0, 2, w2r1, 2);
    assert_int_equal(n_windows, 3);
    assert_int_equal(rs->gen, gen1 + 1);
    assert_int_equal(f->c->job.rs_published_gen, rs->gen);
    ji = job_info(f);
    a = ji_site(ji, 0x100);
    b = ji_site(ji, 0x200);
    c = ji_site(ji, 0x300);
    assert_string_equal(a->function, "solve");
    assert_string_equal(a->file, "/src/a.c");
    assert_int_equal(a->line, 11);
    assert_string_equal(b->function, "halo");
    assert_int_equal(b->line, 22);
    assert_string_equal(c->function, "cheap");
    assert_string_equal(c->file, "/src/c.c");
    assert_int_equal(c->line, 33);
    mpiwatch__job_info__free_unpacked(ji, NULL);
    /* Window 3: everything sent again as last time: no new job description. */
    sites_window(f, FX_W0 + 3, w2r0, 2, w2r1, 2);
    assert_int_equal(rs->gen, gen1 + 1);
    for (int r = 0; r < MW_RS_COUNT; r++)
        assert_int_equal(rs->refused[r], 0);
    /* Every call counted: 3 + 2 + 2 + 2 calls of rank 0 and 1 + 1 + 2 + 2 of rank 1. */
    uint64_t calls = 0;
    for (uint32_t i = 0; i < rs->site_totals.n; i++)
        calls += MW__RS_SITE_TOTAL(rs, i)->count;
    assert_int_equal(calls, 9 + 6);
    teardown(f);
}

/* An upgrade over the job description's byte budget is refused (job_info), the entry kept. */
static void test_sites_upgrade_budget(void **state)
{
    (void)state;
    fx_t *f = setup(NULL);
    fx_hellos(f, "regions", 2);
    const site_def_in_t d0[] = {{1, 0x100, "", "", 0}};
    sites_window(f, FX_W0, d0, 1, NULL, 0);
    f->c->job.info_bytes = MW_JOB_MAX_INFO_BYTES - 4; /* room for 4 more bytes */
    const site_def_in_t d1[] = {{1, 0x100, "solve", "/src/a.c", 11}};
    uint64_t gen = f->c->job.rs.gen;
    sites_window(f, FX_W0 + 1, d1, 1, NULL, 0);
    assert_int_equal(f->c->job.rs.gen, gen);
    assert_int_equal(f->c->job.rs.refused[MW_RS_JOB_INFO], 1);
    assert_string_equal(f->c->job.rs.sites[0].function, "");
    assert_int_equal(f->c->job.rs.sites[0].line, 0);
    const site_def_in_t d2[] = {{1, 0x100, "f", "a.c", 11}}; /* 4 bytes: fits */
    sites_window(f, FX_W0 + 2, d2, 1, NULL, 0);
    assert_int_equal(f->c->job.rs.gen, gen + 1);
    assert_string_equal(f->c->job.rs.sites[0].file, "a.c");
    assert_int_equal(f->c->job.info_bytes, MW_JOB_MAX_INFO_BYTES);
    teardown(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sites_upgrade),   cmocka_unit_test(test_sites_upgrade_budget),
        cmocka_unit_test(test_regions_exact),   cmocka_unit_test(test_rank_detail_off),
        cmocka_unit_test(test_regions_refused), cmocka_unit_test(test_regions_caps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
