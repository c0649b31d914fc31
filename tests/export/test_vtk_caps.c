/* test_vtk_caps.c: the layout the VTK export writes (viewer/topo_layout.c, mw_topo_layout)
 * against crafted hardware.
 *
 * A node whose hardware is a chain of 65,536 objects (each inside the previous one), as a
 * crafted hello once made a collector keep and a job description carry, under 2,000 ranks on
 * its PU: the viewer refuses such a description (mw_topo_job_check), the export lays out what
 * the file holds, so the layout must place it without recursion and count the ranks of every
 * box in one sweep (walking up the chain from each rank would be 131 million steps). A node of
 * more than MW_MAX_TOPO_OBJECTS objects is not believed (drawn as a grid, counted in
 * big_nodes). A chain exactly MW_MAX_TOPO_DEPTH deep passes the check and is laid out with
 * exact rank counts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mw_limits.h"
#include "topo_layout.h"

#define RANKS 2000u

typedef struct {
    Mpiwatch__JobInfo job;
    Mpiwatch__NodeTopology nt, *ntp;
    Mpiwatch__TopoObject *obj, **objp;
    Mpiwatch__RankInfo ri[RANKS], *rip[RANKS];
    char *hosts[1];
    uint32_t pu7;
} chain_t;

/* RANKS ranks on one node of n objects: a chain of cores ending in PU 7 (chain), or n PUs. */
static chain_t *chain_new(size_t n, int chain)
{
    chain_t *c = calloc(1, sizeof *c);
    assert_non_null(c);
    mpiwatch__job_info__init(&c->job);
    c->job.size = RANKS;
    c->pu7 = 7;
    c->hosts[0] = "h0";
    c->job.n_hosts = 1;
    c->job.hosts = c->hosts;
    mpiwatch__node_topology__init(&c->nt);
    c->nt.node = "h0";
    c->obj = calloc(n, sizeof *c->obj);
    c->objp = calloc(n, sizeof *c->objp);
    assert_true(c->obj && c->objp);
    for (size_t i = 0; i < n; i++) {
        mpiwatch__topo_object__init(&c->obj[i]);
        c->obj[i].type = !chain || i + 1 == n ? 4 : 3;
        c->obj[i].parent = chain ? (int32_t)i - 1 : -1;
        c->obj[i].logical = (uint32_t)i;
        c->obj[i].os_index = chain && i + 1 == n ? 7 : (uint32_t)i + 8;
        c->objp[i] = &c->obj[i];
    }
    c->nt.n_objects = n;
    c->nt.objects = c->objp;
    c->ntp = &c->nt;
    c->job.n_nodes = 1;
    c->job.nodes = &c->ntp;
    for (uint32_t r = 0; r < RANKS; r++) {
        mpiwatch__rank_info__init(&c->ri[r]);
        c->ri[r].rank = r;
        c->ri[r].pu = 7;
        c->ri[r].core = c->ri[r].package = -1;
        c->ri[r].n_pus = 1; /* bound to PU 7 alone */
        c->ri[r].pus = &c->pu7;
        c->rip[r] = &c->ri[r];
    }
    c->job.n_ranks = RANKS;
    c->job.ranks = c->rip;
    return c;
}

static void chain_free(chain_t *c)
{
    free(c->obj);
    free(c->objp);
    free(c);
}

/* Every box of a chain encloses the PU, so every box counts every rank; the PU is the last box
 * and every rank sits on it. */
static void check_chain(const mw_topo_layout_t *L, size_t n)
{
    assert_int_equal(L->n_nodes, 1);
    assert_int_equal(L->n_boxes, 1 + n);
    assert_int_equal(L->loose, 0);
    for (size_t i = 0; i < L->n_boxes; i++)
        assert_int_equal(L->boxes[i].ranks, RANKS);
    const mw_topo_box_t *pu = &L->boxes[n];
    assert_int_equal(pu->type, MW_TOPO_PU);
    assert_int_equal(pu->os_index, 7);
    for (uint32_t r = 0; r < RANKS; r++) {
        assert_true(L->ranks[r].pos[0] >= pu->lo[0] && L->ranks[r].pos[0] <= pu->hi[0]);
        assert_true(L->ranks[r].pos[2] >= pu->lo[2] && L->ranks[r].pos[2] <= pu->hi[2]);
        assert_true(L->ranks[r].pos[1] >= pu->hi[1] - 1e-3f);
    }
}

static void test_too_deep(void **state)
{
    (void)state;
    char why[256];
    chain_t *c = chain_new(MW_MAX_TOPO_OBJECTS, 1);
    mw_topo_layout_t L;
    assert_int_equal(mw_topo_job_check(&c->job, why, sizeof why), -1);
    assert_int_equal(mw_topo_layout(&L, &c->job), 0);
    check_chain(&L, MW_MAX_TOPO_OBJECTS);
    assert_int_equal(L.big_nodes, 0);
    mw_topo_layout_free(&L);
    chain_free(c);

    c = chain_new(MW_MAX_TOPO_OBJECTS + 1, 0); /* flat, but too many objects */
    assert_int_equal(mw_topo_layout(&L, &c->job), 0);
    assert_int_equal(L.big_nodes, 1);
    assert_int_equal(L.n_boxes, 1); /* the plane, no hardware */
    assert_int_equal(L.boxes[0].ranks, RANKS);
    assert_true(L.fallback);
    mw_topo_layout_free(&L);
    chain_free(c);
}

static void test_deepest_allowed(void **state)
{
    (void)state;
    char why[256];
    chain_t *c = chain_new(MW_MAX_TOPO_DEPTH, 1);
    mw_topo_layout_t L;
    assert_int_equal(mw_topo_job_check(&c->job, why, sizeof why), 0);
    assert_int_equal(mw_topo_layout(&L, &c->job), 0);
    check_chain(&L, MW_MAX_TOPO_DEPTH);
    /* The PU is in every rank's binding (RankInfo.pus), the cores in none. */
    assert_int_equal(L.boxes[MW_MAX_TOPO_DEPTH].bound, RANKS);
    assert_int_equal(L.boxes[1].bound, 0);
    mw_topo_layout_free(&L);
    chain_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_too_deep),
        cmocka_unit_test(test_deepest_allowed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
