/* test_topo_caps.c: the viewer against job descriptions that claim too much (viewer/topo_layout.c).
 *
 * The attack: a collector (or a crafted feed or recording) hands the viewer a node whose
 * hardware is a chain of 65,536 objects, each inside the previous one; the recursive placement
 * of old crashed at depth ~58,000 (stack overflow) after quadratic work. Here the layout itself
 * must place that chain without recursion and in linear time (no crash, every object a box at
 * its level, the rank on top of the last one), and the check the data source runs first
 * (mw_topo_job_check) must refuse it, and refuse every other claim over the caps of
 * proto/mw_limits.h (job size, ranks, PUs, names and their bytes, objects, strings), while a
 * tree exactly MW_MAX_TOPO_DEPTH deep passes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <cmocka.h>

#include "mw_limits.h"
#include "topo.h"

typedef struct {
    Mpiwatch__JobInfo job;
    Mpiwatch__NodeTopology nt, *ntp;
    Mpiwatch__TopoObject *obj, **objp;
    Mpiwatch__RankInfo ri[2], *rip[2];
    char *hosts[1];
} deep_t;

/* A 2-rank job on one node whose hardware is a chain of n objects (cores, the last a PU with
 * OS index 7), both ranks on that PU. */
static void deep_make(deep_t *d, size_t n)
{
    memset(d, 0, sizeof *d);
    mpiwatch__job_info__init(&d->job);
    d->job.job = "deep";
    d->job.size = 2;
    d->hosts[0] = "h0";
    d->job.n_hosts = 1;
    d->job.hosts = d->hosts;
    mpiwatch__node_topology__init(&d->nt);
    d->nt.node = "h0";
    d->obj = calloc(n, sizeof *d->obj);
    d->objp = calloc(n, sizeof *d->objp);
    assert_true(d->obj && d->objp);
    for (size_t i = 0; i < n; i++) {
        mpiwatch__topo_object__init(&d->obj[i]);
        d->obj[i].type = i + 1 == n ? MW_TOPO_PU : MW_TOPO_CORE;
        d->obj[i].parent = (int32_t)i - 1;
        d->obj[i].logical = (uint32_t)i;
        d->obj[i].os_index = i + 1 == n ? 7 : (uint32_t)i;
        d->objp[i] = &d->obj[i];
    }
    d->nt.n_objects = n;
    d->nt.objects = d->objp;
    d->ntp = &d->nt;
    d->job.n_nodes = 1;
    d->job.nodes = &d->ntp;
    for (uint32_t r = 0; r < 2; r++) {
        mpiwatch__rank_info__init(&d->ri[r]);
        d->ri[r].rank = r;
        d->ri[r].pu = 7;
        d->ri[r].core = -1;
        d->rip[r] = &d->ri[r];
    }
    d->job.n_ranks = 2;
    d->job.ranks = d->rip;
}

static void deep_free(deep_t *d)
{
    free(d->obj);
    free(d->objp);
}

static int check(const Mpiwatch__JobInfo *job, char *why)
{
    return mw_topo_job_check(job, why, 160);
}

/* The 65,536-deep chain: laid out without a crash, and refused by the check. */
static void test_deep_chain(void **state)
{
    (void)state;
    deep_t d;
    char why[160];
    const size_t n = MW_MAX_TOPO_OBJECTS;
    deep_make(&d, n);

    mw_topo_layout_t L;
    assert_int_equal(mw_topo_layout(&L, &d.job), 0);
    assert_int_equal(L.n_nodes, 1);
    assert_int_equal(L.n_boxes, 1 + n); /* the plane, then every object of the chain */
    assert_int_equal(L.boxes_of_type[MW_TOPO_CORE], n - 1);
    assert_int_equal(L.boxes_of_type[MW_TOPO_PU], 1);
    /* Each level nests in the one before it, one level higher. */
    for (size_t i = 2; i <= n; i++) {
        const mw_topo_box_t *b = &L.boxes[i], *p = &L.boxes[i - 1];
        assert_true(b->lo[0] >= p->lo[0] && b->hi[0] <= p->hi[0]);
        assert_true(b->lo[1] > p->lo[1]);
    }
    /* Both ranks stand on the PU, the second on the first; the scene is as tall. */
    const mw_topo_box_t *pu = &L.boxes[n];
    assert_true(L.ranks[0].pos[1] >= pu->hi[1] - 1e-3f);
    assert_true(L.ranks[1].pos[1] > L.ranks[0].pos[1]);
    assert_true(L.hi[1] >= pu->hi[1]);
    mw_topo_layout_free(&L);

    assert_int_equal(check(&d.job, why), -1);
    assert_non_null(strstr(why, "deeper than"));
    deep_free(&d);

    /* Exactly MW_MAX_TOPO_DEPTH levels pass the check and lay out. */
    deep_make(&d, MW_MAX_TOPO_DEPTH);
    assert_int_equal(check(&d.job, why), 0);
    assert_int_equal(mw_topo_layout(&L, &d.job), 0);
    assert_int_equal(L.n_boxes, 1 + MW_MAX_TOPO_DEPTH);
    mw_topo_layout_free(&L);
    deep_free(&d);
    deep_make(&d, MW_MAX_TOPO_DEPTH + 1);
    assert_int_equal(check(&d.job, why), -1);
    deep_free(&d);
}

/* Each other claim over a cap is refused, with a reason. */
static void test_caps(void **state)
{
    (void)state;
    deep_t d;
    char why[160];
    deep_make(&d, 4);
    assert_int_equal(check(&d.job, why), 0);

    d.job.size = MW_MAX_RANKS + 1; /* the job size */
    assert_int_equal(check(&d.job, why), -1);
    d.job.size = 1; /* more rank entries than ranks */
    assert_int_equal(check(&d.job, why), -1);
    d.job.size = 2;
    d.ri[1].rank = 2; /* a rank outside the job */
    assert_int_equal(check(&d.job, why), -1);
    d.ri[1].rank = 1;

    static uint32_t pus[MW_MAX_PUS + 1];
    d.ri[0].n_pus = MW_MAX_PUS + 1; /* one rank's PUs */
    d.ri[0].pus = pus;
    assert_int_equal(check(&d.job, why), -1);
    d.ri[0].n_pus = 0;

    char *name = malloc(MW_MAX_STRING + 2);
    assert_non_null(name);
    memset(name, 'x', MW_MAX_STRING + 1);
    name[MW_MAX_STRING + 1] = '\0';
    d.hosts[0] = name; /* a host name over MW_MAX_STRING */
    assert_int_equal(check(&d.job, why), -1);
    d.hosts[0] = "h0";
    d.nt.node = name; /* a node name */
    assert_int_equal(check(&d.job, why), -1);
    d.nt.node = "h0";
    d.job.program = name; /* a job string */
    assert_int_equal(check(&d.job, why), -1);
    d.job.program = NULL;
    free(name);

    d.job.n_hosts = MW_JOB_MAX_NAMES; /* names (the count alone is refused before reading) */
    assert_int_equal(check(&d.job, why), -1);
    d.job.n_hosts = 1;

    d.nt.n_objects = MW_MAX_TOPO_OBJECTS + 1; /* one node's objects */
    assert_int_equal(check(&d.job, why), -1);
    d.nt.n_objects = 4;

    /* Objects in all: enough nodes of MW_MAX_TOPO_OBJECTS flat PUs to go one node over. */
    const size_t k = MW_JOB_MAX_TOPO_OBJECTS / MW_MAX_TOPO_OBJECTS + 1;
    Mpiwatch__TopoObject pu, **flat = calloc(MW_MAX_TOPO_OBJECTS, sizeof *flat);
    Mpiwatch__NodeTopology *nodes = calloc(k, sizeof *nodes), **np = calloc(k, sizeof *np);
    assert_true(flat && nodes && np);
    mpiwatch__topo_object__init(&pu);
    pu.type = MW_TOPO_PU;
    pu.parent = -1;
    for (size_t i = 0; i < MW_MAX_TOPO_OBJECTS; i++)
        flat[i] = &pu;
    for (size_t g = 0; g < k; g++) {
        mpiwatch__node_topology__init(&nodes[g]);
        nodes[g].n_objects = MW_MAX_TOPO_OBJECTS;
        nodes[g].objects = flat;
        np[g] = &nodes[g];
    }
    d.job.nodes = np;
    d.job.n_nodes = k - 1;
    assert_int_equal(check(&d.job, why), 0);
    d.job.n_nodes = k;
    assert_int_equal(check(&d.job, why), -1);
    assert_non_null(strstr(why, "hardware objects"));
    free(flat);
    free(nodes);
    free(np);
    deep_free(&d);
}

/* The largest resident set so far, in KiB. */
static long max_rss_kib(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : 0;
}

/* fuzz_feed's findings (tests/fuzz/crashes/feed/job-size-*): a job description of a few bytes
 * claiming 10^8 or 4*10^9 ranks, none of them listed. The check refuses it, and the layout,
 * whoever calls it, refuses it before allocating anything: the old layout used ~2.4 GB for
 * 10^8 ranks and asked for one 32 GB calloc for 4*10^9. The resident set may not grow by more
 * than 64 MiB (the 2^20-rank job at the cap, laid out last, needs about 36 MiB). */
static void test_claimed_size(void **state)
{
    (void)state;
    static const uint32_t sizes[] = {100000000u, 4000000000u, MW_MAX_RANKS + 1};
    char why[160];
    long rss0 = max_rss_kib();
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        Mpiwatch__JobInfo job;
        mpiwatch__job_info__init(&job);
        job.job = "big";
        job.size = sizes[i];
        assert_int_equal(check(&job, why), -1);
        assert_non_null(strstr(why, "at most"));
        mw_topo_layout_t L;
        assert_int_equal(mw_topo_layout(&L, &job), -2);
        assert_null(L.ranks);
        assert_int_equal(L.n_ranks, 0);
        mw_topo_layout_free(&L);
    }
    /* At the cap: accepted, laid out (every rank on the "unplaced" plane), bounded. */
    Mpiwatch__JobInfo job;
    mpiwatch__job_info__init(&job);
    job.size = MW_MAX_RANKS;
    assert_int_equal(check(&job, why), 0);
    mw_topo_layout_t L;
    assert_int_equal(mw_topo_layout(&L, &job), 0);
    assert_int_equal(L.n_ranks, MW_MAX_RANKS);
    assert_int_equal(L.n_nodes, 1);
    mw_topo_layout_free(&L);
    long grown = max_rss_kib() - rss0;
    fprintf(stderr, "resident set grew by %ld KiB\n", grown);
    assert_true(grown < 64 * 1024);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deep_chain),
        cmocka_unit_test(test_caps),
        cmocka_unit_test(test_claimed_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
