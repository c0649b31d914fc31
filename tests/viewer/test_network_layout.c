/* test_network_layout.c: the topology layout with a network (viewer/topo_layout.c with
 * proto/mw_network.h) and NUMA nodes as a hardware level, on job descriptions built here.
 *
 * Eight nodes n0..n7 of one rank each (n7 with two) under s1 (n0-n3) and s2 (n4-n6), n7 not in
 * the file, both under top: the groups (node -> switch), the unknown switch, the switches'
 * parents, levels and heights (upper switches higher, all above the nodes), the gaps (nodes of
 * one group closer than nodes of two groups, the node gap option), the links' classes and their
 * counts (a ring of known pairs), the bundles' classes, and that a layout without a network is
 * the one it was (no switches, every link between nodes intra-switch). NUMA: a node whose
 * package holds a NUMA node (type 5) that holds the L3: the NUMA box sits one level above the
 * package and under the L3, the rank on its PU at the level below the top.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mw_network.h"
#include "topo_layout.h"
#include "topo_lines.h"

#define NODES 8
#define RANKS 9

typedef struct {
    Mpiwatch__JobInfo job;
    Mpiwatch__NodeTopology nt[NODES], *ntp[NODES];
    Mpiwatch__RankInfo ri[RANKS], *rip[RANKS];
    char names[NODES][8];
} njob_t;

/* Nodes without hardware (planes with their ranks on a grid); rank r on node min(r, 7). */
static void njob_make(njob_t *t)
{
    memset(t, 0, sizeof *t);
    mpiwatch__job_info__init(&t->job);
    t->job.size = RANKS;
    for (int k = 0; k < NODES; k++) {
        snprintf(t->names[k], sizeof t->names[k], "n%d", k);
        mpiwatch__node_topology__init(&t->nt[k]);
        t->nt[k].node = t->names[k];
        t->ntp[k] = &t->nt[k];
    }
    t->job.nodes = t->ntp;
    t->job.n_nodes = NODES;
    for (int r = 0; r < RANKS; r++) {
        mpiwatch__rank_info__init(&t->ri[r]);
        t->ri[r].rank = (uint32_t)r;
        t->ri[r].node = (uint32_t)(r < NODES ? r : NODES - 1);
        t->ri[r].pu = -1;
        t->ri[r].core = -1;
        t->rip[r] = &t->ri[r];
    }
    t->job.ranks = t->rip;
    t->job.n_ranks = RANKS;
}

static const char *NET = "SwitchName=s1 Nodes=n[0-3]\n"
                         "SwitchName=s2 Nodes=n[4-6]\n"
                         "SwitchName=top Switches=s1,s2\n";

static int sw_named(const mw_topo_layout_t *L, const char *name)
{
    for (size_t i = 0; i < L->n_switches; i++)
        if (!strcmp(L->switches[i].name, name))
            return (int)i;
    return -1;
}

/* The gap between two node planes' rectangles (0 when they touch or overlap). */
static float plane_gap(const mw_topo_layout_t *L, size_t a, size_t b)
{
    const mw_topo_node_t *p = &L->nodes[a], *q = &L->nodes[b];
    float dx =
        q->lo[0] - p->hi[0] > p->lo[0] - q->hi[0] ? q->lo[0] - p->hi[0] : p->lo[0] - q->hi[0];
    float dz =
        q->lo[2] - p->hi[2] > p->lo[2] - q->hi[2] ? q->lo[2] - p->hi[2] : p->lo[2] - q->hi[2];
    float d = dx > dz ? dx : dz;
    return d > 0 ? d : 0;
}

static void test_groups(void **state)
{
    (void)state;
    njob_t t;
    njob_make(&t);
    mw_network_t net;
    char err[200];
    assert_int_equal(mw_network_parse(&net, NET, strlen(NET), err, sizeof err), 0);
    mw_topo_layout_t L;
    mw_topo_layout_opts_t o = {&net, 0};
    assert_int_equal(mw_topo_layout_ex(&L, &t.job, &o), 0);
    assert_true(L.network);
    assert_int_equal(L.n_nodes, NODES);
    assert_int_equal(L.n_switches, 4); /* s1, s2, the unknown switch, top */
    int s1 = sw_named(&L, "s1"), s2 = sw_named(&L, "s2"), top = sw_named(&L, "top"),
        unk = sw_named(&L, "unknown switch");
    assert_true(s1 >= 0 && s2 >= 0 && top >= 0 && unk >= 0);
    for (int k = 0; k < NODES; k++)
        assert_int_equal(L.nodes[k].sw, k < 4 ? s1 : k < 7 ? s2 : unk);
    assert_int_equal(L.switches[s1].parent, top);
    assert_int_equal(L.switches[s2].parent, top);
    assert_int_equal(L.switches[unk].parent, -1);
    assert_int_equal(L.switches[unk].source, -1);
    assert_int_equal(L.switches[s1].nodes, 4);
    assert_int_equal(L.switches[s2].nodes, 3);
    assert_int_equal(L.switches[top].level, 1);
    assert_int_equal(L.switches[s1].level, 0);
    assert_true(L.switches[top].lo[1] > L.switches[s1].hi[1]);
    for (size_t i = 0; i < L.n_switches; i++)
        assert_true(L.switches[i].lo[1] > MW_TOPO_MARKER_H && L.switches[i].hi[1] <= L.hi[1]);
    /* Each group's nodes are closer to one another than to any node of another group. */
    float same = 0, other = 1e30f;
    for (size_t a = 0; a < NODES; a++) {
        float nearest = 1e30f;
        for (size_t b = 0; b < NODES; b++) {
            if (a == b)
                continue;
            float g = plane_gap(&L, a, b);
            if (L.nodes[a].sw == L.nodes[b].sw)
                nearest = g < nearest ? g : nearest;
            else
                other = g < other ? g : other;
        }
        if (nearest < 1e30f && nearest > same)
            same = nearest;
    }
    assert_true(other > same + MW_TOPO_NODE_GAP);
    /* A switch sits over its group: its centre inside the extent of the group's planes. */
    float x0 = 1e30f, x1 = -1e30f, z0 = 1e30f, z1 = -1e30f;
    for (int k = 0; k < 4; k++) {
        x0 = L.nodes[k].lo[0] < x0 ? L.nodes[k].lo[0] : x0;
        x1 = L.nodes[k].hi[0] > x1 ? L.nodes[k].hi[0] : x1;
        z0 = L.nodes[k].lo[2] < z0 ? L.nodes[k].lo[2] : z0;
        z1 = L.nodes[k].hi[2] > z1 ? L.nodes[k].hi[2] : z1;
    }
    float cx = (L.switches[s1].lo[0] + L.switches[s1].hi[0]) / 2,
          cz = (L.switches[s1].lo[2] + L.switches[s1].hi[2]) / 2;
    assert_true(cx > x0 && cx < x1 && cz > z0 && cz < z1);

    /* Links: a ring r -> r + 1 over the 9 ranks and one pair inside n7 (ranks 7 and 8). */
    uint32_t src[RANKS + 1], dst[RANKS + 1];
    uint64_t m[RANKS + 1], b[RANKS + 1];
    for (uint32_t r = 0; r < RANKS; r++) {
        src[r] = r;
        dst[r] = (r + 1) % RANKS;
        m[r] = 1;
        b[r] = 8;
    }
    src[RANKS] = 8;
    dst[RANKS] = 7;
    m[RANKS] = b[RANKS] = 1;
    mw_pairs_t p = {src, dst, m, b, RANKS + 1};
    mw_topo_lines_t ln;
    memset(&ln, 0, sizeof ln);
    assert_int_equal(mw_topo_lines(&ln, &L, p), 0);
    /* 7->8 and 8->7 within n7; 0-1, 1-2, 2-3, 4-5, 5-6 under one switch; 3->4, 6->7 (n7
     * unknown) and 8->0 between switches. */
    assert_int_equal(ln.by_class[MW_LINK_INTRA_NODE], 2);
    assert_int_equal(ln.by_class[MW_LINK_INTRA_SWITCH], 5);
    assert_int_equal(ln.by_class[MW_LINK_INTER_SWITCH], 3);
    for (size_t i = 0; i < ln.n_lines; i++) {
        const mw_topo_line_t *l = &ln.lines[i];
        if (l->src == 3 && l->dst == 4)
            assert_int_equal(l->cls, MW_LINK_INTER_SWITCH);
        if (l->src == 5 && l->dst == 6)
            assert_int_equal(l->cls, MW_LINK_INTRA_SWITCH);
        if (l->src == 7 && l->dst == 8)
            assert_int_equal(l->cls, MW_LINK_INTRA_NODE);
    }
    for (size_t i = 0; i < ln.n_bundles; i++) {
        const mw_topo_bundle_t *bd = &ln.bundles[i];
        uint8_t want = bd->a == bd->b                                        ? MW_LINK_INTRA_NODE
                       : L.nodes[bd->a].sw == L.nodes[bd->b].sw && bd->a < 7 ? MW_LINK_INTRA_SWITCH
                                                                             : MW_LINK_INTER_SWITCH;
        assert_int_equal(bd->cls, want);
    }

    /* A wider node gap spreads a group. */
    mw_topo_layout_t W;
    mw_topo_layout_opts_t o8 = {&net, 8};
    assert_int_equal(mw_topo_layout_ex(&W, &t.job, &o8), 0);
    assert_true(W.node_gap == 8 && W.group_gap > L.group_gap);
    assert_true(plane_gap(&W, 0, 1) > plane_gap(&L, 0, 1) + 3);

    /* Without a network: as before, no switches, links between nodes intra-switch. */
    mw_topo_layout_t P;
    assert_int_equal(mw_topo_layout(&P, &t.job), 0);
    assert_false(P.network);
    assert_int_equal(P.n_switches, 0);
    for (int k = 0; k < NODES; k++)
        assert_int_equal(P.nodes[k].sw, -1);
    assert_int_equal(mw_topo_lines(&ln, &P, p), 0);
    assert_int_equal(ln.by_class[MW_LINK_INTRA_NODE], 2);
    assert_int_equal(ln.by_class[MW_LINK_INTRA_SWITCH], 8);
    assert_int_equal(ln.by_class[MW_LINK_INTER_SWITCH], 0);

    mw_topo_lines_free(&ln);
    mw_topo_layout_free(&L);
    mw_topo_layout_free(&W);
    mw_topo_layout_free(&P);
    mw_network_free(&net);
}

/* A node with a NUMA level: package > NUMA > L3 > core > PU. */
static void test_numa_level(void **state)
{
    (void)state;
    Mpiwatch__TopoObject o[5], *op[5];
    static const uint32_t type[5] = {1, 5, 2, 3, 4};
    for (int i = 0; i < 5; i++) {
        mpiwatch__topo_object__init(&o[i]);
        o[i].type = type[i];
        o[i].parent = i - 1;
        o[i].os_index = 0;
        op[i] = &o[i];
    }
    Mpiwatch__NodeTopology nt, *ntp = &nt;
    mpiwatch__node_topology__init(&nt);
    nt.node = "numa";
    nt.objects = op;
    nt.n_objects = 5;
    Mpiwatch__RankInfo ri, *rip = &ri;
    mpiwatch__rank_info__init(&ri);
    ri.pu = 0;
    ri.core = 0;
    Mpiwatch__JobInfo job;
    mpiwatch__job_info__init(&job);
    job.size = 1;
    job.nodes = &ntp;
    job.n_nodes = 1;
    job.ranks = &rip;
    job.n_ranks = 1;
    char err[200];
    assert_int_equal(mw_topo_job_check(&job, err, sizeof err), 0);
    mw_topo_layout_t L;
    assert_int_equal(mw_topo_layout(&L, &job), 0);
    assert_int_equal(L.boxes_of_type[MW_TOPO_NUMA], 1);
    const mw_topo_box_t *pkg = NULL, *numa = NULL, *l3 = NULL;
    for (size_t i = 0; i < L.n_boxes; i++) {
        if (L.boxes[i].type == MW_TOPO_PACKAGE)
            pkg = &L.boxes[i];
        if (L.boxes[i].type == MW_TOPO_NUMA)
            numa = &L.boxes[i];
        if (L.boxes[i].type == MW_TOPO_L3)
            l3 = &L.boxes[i];
    }
    assert_non_null(pkg);
    assert_non_null(numa);
    assert_non_null(l3);
    assert_true(numa->lo[1] > pkg->lo[1] && l3->lo[1] > numa->lo[1]);
    assert_true(numa->lo[0] >= pkg->lo[0] && numa->hi[0] <= pkg->hi[0]);
    assert_true(l3->lo[0] >= numa->lo[0] && l3->hi[0] <= numa->hi[0]);
    assert_int_equal(numa->ranks, 1);
    /* The rank on top of its PU, five levels up. */
    assert_true(L.ranks[0].pos[1] > 4.5f * MW_TOPO_LEVEL_H);
    mw_topo_layout_free(&L);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_groups),
        cmocka_unit_test(test_numa_level),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
