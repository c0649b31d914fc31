/* test_caps.c: the collector against hellos that claim too much (docs/collector.md, "Caps").
 *
 * Each case performs the attack with crafted hellos through mw_collector_frame() (so decoding
 * is exercised too) and checks the safe outcome: a node's hardware deeper than
 * MW_MAX_TOPO_DEPTH (a chain of 65,536 objects, which crashed the viewer) is refused as
 * topo_depth and starts no job; one hello claiming 2^20 ranks leaves the collector's memory
 * bounded (VmRSS before and after); PU lists, hardware objects and names over their job-wide
 * caps are not kept and are counted by reason, in the stats JSON too, while every rank stays in
 * the job; and the encoded job description never exceeds MW_JOB_MAX_INFO_BYTES however many
 * ranks say hello.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "fixture.h"
#include "record_file.h"
#include "summary.h"

#define JOB "job-caps"

/* Resident memory of this process in KiB, from /proc/self/status. */
static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    assert_non_null(f);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kib = atol(line + 6);
    fclose(f);
    assert_true(kib > 0);
    return kib;
}

/* A node's hardware of n objects: a chain (each object inside the previous one, cores down to
 * one PU) or a flat list of n PUs. */
typedef struct {
    Mpiwatch__NodeTopology t;
    Mpiwatch__TopoObject *o;
    Mpiwatch__TopoObject **p;
} hw_t;

static void hw_make(hw_t *h, const char *node, size_t n, int chain)
{
    mpiwatch__node_topology__init(&h->t);
    h->o = calloc(n, sizeof *h->o);
    h->p = calloc(n, sizeof *h->p);
    assert_true(h->o && h->p);
    for (size_t i = 0; i < n; i++) {
        mpiwatch__topo_object__init(&h->o[i]);
        h->o[i].type = chain ? (i + 1 == n ? 4 : 3) : 4;
        h->o[i].parent = chain ? (int32_t)i - 1 : -1;
        h->o[i].logical = (uint32_t)i;
        h->o[i].os_index = (uint32_t)i;
        h->p[i] = &h->o[i];
    }
    h->t.node = (char *)node;
    h->t.n_objects = n;
    h->t.objects = h->p;
}

static void hw_free(hw_t *h)
{
    free(h->o);
    free(h->p);
}

static uint64_t stats_capped(const mw_collector_t *c, const char *reason)
{
    char *text = mw__stats_json(c);
    assert_non_null(text);
    cJSON *root = cJSON_Parse(text);
    free(text);
    assert_non_null(root);
    const cJSON *cap = cJSON_GetObjectItemCaseSensitive(root, "capped");
    const cJSON *n = cap ? cJSON_GetObjectItemCaseSensitive(cap, reason) : NULL;
    uint64_t v = cJSON_IsNumber(n) ? (uint64_t)n->valuedouble : UINT64_MAX;
    cJSON_Delete(root);
    return v;
}

/* The 65,536-deep chain is refused as topo_depth and starts no job; a tree exactly
 * MW_MAX_TOPO_DEPTH deep is accepted. */
static void test_deep_chain(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    tm_msg_t m;
    hw_t h;
    hw_make(&h, "node0", MW_MAX_TOPO_OBJECTS, 1);
    tm_hello(&m, JOB, 0, 2, f->now.real_ns);
    m.hello.node = "node0";
    m.hello.topology = &h.t;
    assert_string_equal(mw__reject_name(fx_feed(f, &m)), "topo_depth");
    assert_int_equal(f->c->stats.rejected[MW_REJECT_TOPO_DEPTH], 1);
    assert_false(f->c->job.active);
    hw_free(&h);

    /* One level over the cap, then exactly at it. */
    hw_make(&h, "node0", MW_MAX_TOPO_DEPTH + 1, 1);
    m.hello.topology = &h.t;
    assert_string_equal(mw__reject_name(fx_feed(f, &m)), "topo_depth");
    assert_int_equal(f->c->stats.rejected[MW_REJECT_TOPO_DEPTH], 2);
    h.t.n_objects = MW_MAX_TOPO_DEPTH;
    h.o[MW_MAX_TOPO_DEPTH - 1].type = 4;
    assert_string_equal(mw__reject_name(fx_feed(f, &m)), "accepted");
    assert_int_equal(f->c->job.node_hw[0].n_objects, MW_MAX_TOPO_DEPTH);
    hw_free(&h);
    fx_free(f);
}

/* One small hello claiming 2^20 ranks: the job starts with that size, but memory grows with
 * the ranks that connect, not with the claim (it took 9 to 316 MB). */
static void test_claimed_size(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    tm_msg_t m;
    tm_hello(&m, JOB, 0, MW_MAX_RANKS, f->now.real_ns);
    uint8_t *buf;
    size_t len = tm_pack(&m, &buf);
    assert_true(len < 200);

    /* The job's own state first (job.c): the per-rank array is not touched at job start. */
    mw_job_t job;
    memset(&job, 0, sizeof job);
    long before = rss_kib();
    assert_int_equal(mw__job_begin(&job, &m.env, FX_MONO_NS), 0);
    long job_kib = rss_kib() - before;
    mw__job_free(&job);
    print_message("job state of a %u-rank claim: %ld KiB resident\n", MW_MAX_RANKS, job_kib);
    assert_true(job_kib < 16 * 1024);

    /* The whole collector (job, windows, steps): 15 MiB when measured, nearly all of it the
     * merge's per-rank window marks (8 bytes a rank, written at job start: merge.c); the
     * steps write their per-rank records lazily (548 KiB here). 32 MiB leaves room for the
     * allocator and fails if any per-rank array of 16 bytes or more is written at job start
     * again (the unfixed job state took 150 MiB, the unfixed steps 139 MiB). */
    before = rss_kib();
    assert_string_equal(mw__reject_name(mw_collector_frame(f->c, buf, len, 1, &f->now)),
                        "accepted");
    free(buf);
    long all_kib = rss_kib() - before;
    print_message("collector after a %zu-byte hello claiming %u ranks: +%ld KiB resident\n", len,
                  MW_MAX_RANKS, all_kib);
    assert_int_equal(f->c->job.size, MW_MAX_RANKS);
    assert_true(all_kib < 32 * 1024);

    /* Ranks that connect are in the job as usual; ranks that never did are counted dead at
     * the end without being written to. */
    tm_hello(&m, JOB, MW_MAX_RANKS - 1, MW_MAX_RANKS, f->now.real_ns);
    assert_string_equal(mw__reject_name(fx_feed(f, &m)), "accepted");
    assert_int_equal(f->c->job.hellos, 2);
    assert_int_equal(mw__job_declare_dead(&f->c->job), MW_MAX_RANKS);
    assert_int_equal(f->c->job.ranks[MW_MAX_RANKS - 1].state, MW_RANK_DEAD);
    assert_int_equal(f->c->job.ranks[1].state, MW_RANK_PENDING);
    fx_free(f);
}

/* PU lists over MW_JOB_MAX_PUS: the ranks are in the job, without their PU lists, counted. */
static void test_job_pus(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    tm_msg_t m;
    static uint32_t pus[MW_MAX_PUS];
    for (uint32_t i = 0; i < MW_MAX_PUS; i++)
        pus[i] = i;
    const uint32_t fit = MW_JOB_MAX_PUS / MW_MAX_PUS, extra = 3;
    for (uint32_t r = 0; r < fit + extra; r++) {
        tm_hello(&m, JOB, r, 64, f->now.real_ns);
        m.hello.n_pus = MW_MAX_PUS;
        m.hello.pus = pus;
        assert_string_equal(mw__reject_name(fx_feed(f, &m)), "accepted");
    }
    const mw_job_t *job = &f->c->job;
    assert_int_equal(job->hellos, fit + extra);
    assert_int_equal(job->n_pus, MW_JOB_MAX_PUS);
    assert_int_equal(job->ranks[fit - 1].pus_n, MW_MAX_PUS);
    assert_int_equal(job->ranks[fit].pus_n, 0);
    assert_int_equal(job->capped[MW_CAP_PUS], extra);
    assert_int_equal(stats_capped(f->c, "pus"), extra);
    assert_int_equal(stats_capped(f->c, "objects"), 0);
    fx_free(f);
}

/* Hardware over MW_JOB_MAX_TOPO_OBJECTS: the nodes are in the job without it, counted. */
static void test_job_objects(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    tm_msg_t m;
    hw_t h;
    hw_make(&h, NULL, MW_MAX_TOPO_OBJECTS, 0);
    const uint32_t fit = MW_JOB_MAX_TOPO_OBJECTS / MW_MAX_TOPO_OBJECTS, extra = 2;
    for (uint32_t r = 0; r < fit + extra; r++) {
        char node[32];
        snprintf(node, sizeof node, "n%u", r);
        tm_hello(&m, JOB, r, 64, f->now.real_ns);
        m.hello.node = node;
        h.t.node = node;
        m.hello.topology = &h.t;
        assert_string_equal(mw__reject_name(fx_feed(f, &m)), "accepted");
    }
    const mw_job_t *job = &f->c->job;
    assert_int_equal(job->n_nodes, fit + extra);
    assert_int_equal(job->n_objects, MW_JOB_MAX_TOPO_OBJECTS);
    assert_int_equal(job->node_hw[fit - 1].n_objects, MW_MAX_TOPO_OBJECTS);
    assert_int_equal(job->node_hw[fit].n_objects, 0);
    assert_int_equal(stats_capped(f->c, "objects"), extra);
    hw_free(&h);
    fx_free(f);
}

/* Names over MW_JOB_MAX_NAME_BYTES: the rank goes to the unknown host and node, counted; and
 * the job description stays within MW_JOB_MAX_INFO_BYTES with every cap reached, ranks over
 * its budget left out of it (counted) but still in the job. */
static void test_job_names_and_info(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    tm_msg_t m;
    hw_t h;
    static uint32_t pus[MW_MAX_PUS];
    hw_make(&h, NULL, MW_MAX_TOPO_OBJECTS, 0);
    char *name = malloc(MW_MAX_STRING + 1);
    assert_non_null(name);
    const uint32_t size = 1u << 17;
    uint32_t r = 0;
    /* Hardware and PU lists up to their caps. */
    for (; r < MW_JOB_MAX_TOPO_OBJECTS / MW_MAX_TOPO_OBJECTS; r++) {
        snprintf(name, 32, "hw%u", r);
        tm_hello(&m, JOB, r, size, f->now.real_ns);
        m.hello.node = name;
        h.t.node = name;
        m.hello.topology = &h.t;
        m.hello.n_pus = MW_MAX_PUS;
        m.hello.pus = pus;
        assert_string_equal(mw__reject_name(fx_feed(f, &m)), "accepted");
    }
    /* Longest names until their bytes are over the cap: host and node are both charged. */
    uint32_t names_at = 0;
    for (uint32_t k = 0; f->c->job.capped[MW_CAP_NAMES] == 0; k++, r++) {
        memset(name, 'a' + (int)(k % 26), MW_MAX_STRING);
        snprintf(name, 16, "%08u", k);
        name[8] = 'x';
        name[MW_MAX_STRING] = '\0';
        tm_hello(&m, JOB, r, size, f->now.real_ns);
        m.hello.host = name;
        assert_string_equal(mw__reject_name(fx_feed(f, &m)), "accepted");
        names_at = r;
        assert_true(k < MW_JOB_MAX_NAME_BYTES / MW_MAX_STRING);
    }
    const mw_job_t *job = &f->c->job;
    assert_true(job->name_bytes <= MW_JOB_MAX_NAME_BYTES);
    /* Its host was charged first: the name over the cap is the host's, or the node's. */
    assert_true(mw_job_host(job, names_at)[0] == '\0' || mw__job_node(job, names_at)[0] == '\0');
    assert_int_equal(job->ranks[names_at].state, MW_RANK_LIVE);
    assert_true(stats_capped(f->c, "names") >= 1);
    /* Plain ranks until the description's budget refuses some. */
    for (; r < size && job->capped[MW_CAP_JOB_INFO] < 10; r++) {
        tm_hello(&m, JOB, r, size, f->now.real_ns);
        m.hello.pu = m.hello.core = m.hello.package = -1; /* the longest encoding */
        assert_string_equal(mw__reject_name(fx_feed(f, &m)), "accepted");
    }
    assert_int_equal(job->capped[MW_CAP_JOB_INFO], 10);
    assert_int_equal(job->hellos, r);
    assert_true(job->info_bytes <= MW_JOB_MAX_INFO_BYTES);
    size_t len = mw__jobinfo_pack(&f->c->enc, job, mw_fn_table_hash());
    print_message("job description with every cap reached: %zu bytes (bound %llu, cap %u)\n", len,
                  (unsigned long long)job->info_bytes, MW_JOB_MAX_INFO_BYTES);
    assert_true(len > 0 && len <= job->info_bytes);
    Mpiwatch__JobInfo *ji = mpiwatch__job_info__unpack(NULL, len, f->c->enc.out);
    assert_non_null(ji);
    assert_int_equal(ji->n_ranks, r - 10);
    mpiwatch__job_info__free_unpacked(ji, NULL);
    assert_int_equal(stats_capped(f->c, "job_info"), 10);
    free(name);
    hw_free(&h);
    fx_free(f);
}

/* A record over the recording's 64 MiB limit (a derived output, here a job description handed
 * to the writer directly) is left out, and counted: record_too_large in the stats JSON, which
 * is what the Prometheus page's mpiwatch_recording_too_large_total shows too. */
static void test_record_too_large(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    char dir[] = "/tmp/mw-test-caps-XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/rec.mpiw", dir);
    f->c->record = mw__record_open(path, &f->opt, fx_wall_clock());
    assert_non_null(f->c->record);
    fx_hellos(f, JOB, 1);
    size_t big = (64u << 20) + 4096;
    void *pb = calloc(1, big);
    assert_non_null(pb);
    mw__record_job(f->c->record, &f->now, pb, big);
    free(pb);
    char *text = mw__stats_json(f->c);
    assert_non_null(text);
    cJSON *root = cJSON_Parse(text);
    free(text);
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(root, "record_too_large");
    assert_true(cJSON_IsNumber(n));
    assert_int_equal((uint64_t)n->valuedouble, 1);
    cJSON_Delete(root);
    mw__record_close(f->c->record);
    f->c->record = NULL;
    unlink(path);
    rmdir(dir);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deep_chain),
        cmocka_unit_test(test_claimed_size),
        cmocka_unit_test(test_job_pus),
        cmocka_unit_test(test_job_objects),
        cmocka_unit_test(test_job_names_and_info),
        cmocka_unit_test(test_record_too_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
