/* test_vtk_caps.c: the VTK export's layout (tools/vtk_layout.c) against crafted hardware.
 *
 * A node whose hardware is a chain of 65,536 objects (each inside the previous one), as a
 * crafted hello once made a collector keep and a job description carry: the layout must not
 * believe it (the node is drawn as a plane with its ranks on a grid, counted in bad_nodes),
 * nor a node of more than MW_MAX_TOPO_OBJECTS objects. A chain exactly MW_MAX_TOPO_DEPTH deep
 * is laid out, and every box counts the ranks in it or inside it (summed in one sweep, no
 * longer by walking up the chain from each rank: 2,000 ranks on a deep PU).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mw_limits.h"
#include "vtk_layout.h"

#define RANKS 2000u

typedef struct {
    Mpiwatch__JobInfo job;
    Mpiwatch__NodeTopology nt, *ntp;
    Mpiwatch__TopoObject *obj, **objp;
    Mpiwatch__RankInfo ri[RANKS], *rip[RANKS];
    char *hosts[1];
} chain_t;

/* RANKS ranks on one node of n objects: a chain of cores ending in PU 7 (chain), or n PUs. */
static chain_t *chain_new(size_t n, int chain)
{
    chain_t *c = calloc(1, sizeof *c);
    assert_non_null(c);
    mpiwatch__job_info__init(&c->job);
    c->job.size = RANKS;
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

static void test_too_deep(void **state)
{
    (void)state;
    chain_t *c = chain_new(MW_MAX_TOPO_OBJECTS, 1);
    mw_vtk_layout_t l;
    assert_int_equal(mw_vtk_layout_build(&l, &c->job), 0);
    assert_int_equal(l.bad_nodes, 1);
    assert_int_equal(l.hw_nodes, 0);
    assert_int_equal(l.n_boxes, 1); /* the plane, no hardware */
    assert_int_equal(l.boxes[0].ranks, RANKS);
    mw_vtk_layout_free(&l);
    chain_free(c);

    c = chain_new(MW_MAX_TOPO_DEPTH + 1, 1);
    assert_int_equal(mw_vtk_layout_build(&l, &c->job), 0);
    assert_int_equal(l.bad_nodes, 1);
    mw_vtk_layout_free(&l);
    chain_free(c);

    c = chain_new(MW_MAX_TOPO_OBJECTS + 1, 0); /* flat, but too many objects */
    assert_int_equal(mw_vtk_layout_build(&l, &c->job), 0);
    assert_int_equal(l.bad_nodes, 1);
    mw_vtk_layout_free(&l);
    chain_free(c);
}

static void test_deepest_allowed(void **state)
{
    (void)state;
    chain_t *c = chain_new(MW_MAX_TOPO_DEPTH, 1);
    mw_vtk_layout_t l;
    assert_int_equal(mw_vtk_layout_build(&l, &c->job), 0);
    assert_int_equal(l.bad_nodes, 0);
    assert_int_equal(l.hw_nodes, 1);
    assert_int_equal(l.n_boxes, 1 + MW_MAX_TOPO_DEPTH);
    assert_int_equal(l.loose, 0);
    /* Every object encloses the PU, so every box counts every rank; the PU is the last. */
    for (size_t i = 0; i < l.n_boxes; i++)
        assert_int_equal(l.boxes[i].ranks, RANKS);
    assert_int_equal(l.boxes[MW_MAX_TOPO_DEPTH].kind, MW_VTK_PU);
    for (uint32_t r = 0; r < RANKS; r++) {
        const mw_vtk_box_t *pu = &l.boxes[MW_MAX_TOPO_DEPTH];
        assert_true(l.rank[r].x >= pu->x0 && l.rank[r].x <= pu->x1);
        assert_true(l.rank[r].y >= pu->y0 && l.rank[r].y <= pu->y1);
    }
    mw_vtk_layout_free(&l);
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
