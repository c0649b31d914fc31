/* test_topo.c: unit tests of the topology and matrix model (viewer/topo.h and its modules:
 * layout, lines, colours, curves, camera, picking, matrix) and of the model's
 * time-step store, on job descriptions and pairs built here with known content.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model.h"
#include "topo.h"

/* ---- job descriptions --------------------------------------------------------------------- */

typedef struct {
    Mpiwatch__JobInfo job;
    Mpiwatch__NodeTopology nt[8], *ntp[8];
    Mpiwatch__TopoObject obj[8][64], *objp[8][64];
    Mpiwatch__RankInfo ri[256], *rip[256];
    uint32_t pus[256];
    char *hosts[8];
} tjob_t;

/* K nodes of P packages x C cores x U PUs (one L3 per package); rank r on node r / rpn, local
 * rank l bound to PU pu_of(l). With hardware 0, JobInfo.nodes stays empty. */
static void tjob_make(tjob_t *t, uint32_t K, uint32_t rpn, uint32_t P, uint32_t C, uint32_t U,
                      int hardware, const uint32_t *pu_of)
{
    static char names[8][16];
    memset(t, 0, sizeof *t);
    mpiwatch__job_info__init(&t->job);
    t->job.job = "t";
    t->job.size = K * rpn;
    for (uint32_t k = 0; k < K; k++) {
        snprintf(names[k], sizeof names[k], "n%u", k);
        t->hosts[k] = names[k];
        mpiwatch__node_topology__init(&t->nt[k]);
        t->nt[k].node = names[k];
        size_t n = 0;
        uint32_t pu = 0, core = 0;
        for (uint32_t p = 0; p < P; p++) {
            size_t pi = n;
            mpiwatch__topo_object__init(&t->obj[k][n]);
            t->obj[k][n].type = 1;
            t->obj[k][n].parent = -1;
            t->obj[k][n++].logical = p;
            size_t li = n;
            mpiwatch__topo_object__init(&t->obj[k][n]);
            t->obj[k][n].type = 2;
            t->obj[k][n].parent = (int32_t)pi;
            t->obj[k][n++].logical = p;
            for (uint32_t c = 0; c < C; c++) {
                size_t ci = n;
                mpiwatch__topo_object__init(&t->obj[k][n]);
                t->obj[k][n].type = 3;
                t->obj[k][n].parent = (int32_t)li;
                t->obj[k][n++].logical = core++;
                for (uint32_t u = 0; u < U; u++) {
                    mpiwatch__topo_object__init(&t->obj[k][n]);
                    t->obj[k][n].type = 4;
                    t->obj[k][n].parent = (int32_t)ci;
                    t->obj[k][n].logical = pu;
                    t->obj[k][n++].os_index = pu++;
                }
            }
        }
        for (size_t i = 0; i < n; i++)
            t->objp[k][i] = &t->obj[k][i];
        t->nt[k].objects = t->objp[k];
        t->nt[k].n_objects = n;
        t->ntp[k] = &t->nt[k];
    }
    t->job.hosts = t->hosts;
    t->job.n_hosts = K;
    if (hardware) {
        t->job.nodes = t->ntp;
        t->job.n_nodes = K;
    }
    for (uint32_t r = 0; r < K * rpn; r++) {
        mpiwatch__rank_info__init(&t->ri[r]);
        t->ri[r].rank = r;
        t->ri[r].node = t->ri[r].host = r / rpn;
        t->pus[r] = pu_of[r % rpn];
        t->ri[r].pu = (int32_t)t->pus[r];
        t->ri[r].core = (int32_t)(t->pus[r] / U);
        t->ri[r].pus = &t->pus[r];
        t->ri[r].n_pus = 1;
        t->rip[r] = &t->ri[r];
    }
    t->job.ranks = t->rip;
    t->job.n_ranks = K * rpn;
}

static int inside(const float lo[3], const float hi[3], const float p[3])
{
    return p[0] >= lo[0] - 1e-4f && p[0] <= hi[0] + 1e-4f && p[2] >= lo[2] - 1e-4f &&
           p[2] <= hi[2] + 1e-4f;
}

/* ---- layout ------------------------------------------------------------------------------- */

static void test_layout_used_resources_nested(void **state)
{
    (void)state;
    /* 2 nodes, 2 packages x 2 cores x 2 PUs; 3 ranks per node on PUs 0, 2 and 1: cores 0 and 1
     * of package 0 only, core 0 with two PUs. */
    static tjob_t t;
    const uint32_t pu_of[3] = {0, 2, 1};
    tjob_make(&t, 2, 3, 2, 2, 2, 1, pu_of);
    mw_topo_layout_t L;
    assert_int_equal(mw_topo_layout(&L, &t.job), 0);
    assert_int_equal(L.n_nodes, 2);
    assert_int_equal(L.fallback, 0);
    assert_int_equal(L.boxes_of_type[MW_TOPO_NODE], 2);
    assert_int_equal(L.boxes_of_type[MW_TOPO_PACKAGE], 2); /* package 1 is not used */
    assert_int_equal(L.boxes_of_type[MW_TOPO_L3], 2);
    assert_int_equal(L.boxes_of_type[MW_TOPO_CORE], 4);
    assert_int_equal(L.boxes_of_type[MW_TOPO_PU], 6);
    assert_int_equal(L.n_boxes, 2 + 2 + 2 + 4 + 6);
    /* Every box lies on its node's plane, one level above a box of the type before it that
     * contains it. */
    for (size_t i = L.n_nodes; i < L.n_boxes; i++) {
        const mw_topo_box_t *b = &L.boxes[i];
        const mw_topo_node_t *n = &L.nodes[b->node];
        assert_true(inside(n->lo, n->hi, b->lo) && inside(n->lo, n->hi, b->hi));
        if (b->type == MW_TOPO_PACKAGE) {
            assert_true(b->lo[1] == MW_TOPO_PLANE_Y);
            continue;
        }
        int found = 0;
        for (size_t j = L.n_nodes; j < L.n_boxes; j++) {
            const mw_topo_box_t *p = &L.boxes[j];
            if (p->node == b->node && p->type + 1 == b->type && inside(p->lo, p->hi, b->lo) &&
                inside(p->lo, p->hi, b->hi) && p->hi[1] == b->lo[1])
                found = 1;
        }
        assert_true(found);
    }
    /* Each rank on top of its own PU box, on its node. */
    for (uint32_t r = 0; r < 6; r++) {
        assert_int_equal(L.ranks[r].node, (int32_t)(r / 3));
        int on = 0;
        for (size_t j = 0; j < L.n_boxes; j++) {
            const mw_topo_box_t *p = &L.boxes[j];
            if (p->type == MW_TOPO_PU && p->node == r / 3 && inside(p->lo, p->hi, L.ranks[r].pos) &&
                p->hi[1] == L.ranks[r].pos[1] && p->logical == t.pus[r])
                on++;
        }
        assert_int_equal(on, 1);
    }
    /* Node planes do not overlap, in node order along the first row. */
    assert_true(L.nodes[0].hi[0] < L.nodes[1].lo[0] || L.nodes[0].hi[2] < L.nodes[1].lo[2]);
    mw_topo_layout_free(&L);
}

static void test_layout_fallback_by_host(void **state)
{
    (void)state;
    static tjob_t t;
    const uint32_t pu_of[4] = {0, 1, 2, 3};
    tjob_make(&t, 3, 4, 1, 2, 2, 0, pu_of);
    mw_topo_layout_t L;
    assert_int_equal(mw_topo_layout(&L, &t.job), 0);
    assert_int_equal(L.n_nodes, 3);
    assert_int_equal(L.fallback, 1);
    assert_int_equal(L.n_boxes, 3); /* planes only */
    assert_string_equal(L.nodes[2].name, "n2");
    for (uint32_t a = 0; a < 12; a++) {
        assert_int_equal(L.ranks[a].node, (int32_t)(a / 4));
        assert_true(inside(L.nodes[a / 4].lo, L.nodes[a / 4].hi, L.ranks[a].pos));
        for (uint32_t b = 0; b < a; b++)
            assert_false(L.ranks[a].pos[0] == L.ranks[b].pos[0] &&
                         L.ranks[a].pos[2] == L.ranks[b].pos[2]);
    }
    mw_topo_layout_free(&L);
    /* No job, an empty job: no nodes, no crash. */
    assert_int_equal(mw_topo_layout(&L, NULL), 0);
    assert_int_equal(L.n_nodes, 0);
    Mpiwatch__JobInfo empty = MPIWATCH__JOB_INFO__INIT;
    empty.size = 5; /* ranks that never said hello: one "unplaced" plane */
    assert_int_equal(mw_topo_layout(&L, &empty), 0);
    assert_int_equal(L.n_nodes, 1);
    assert_int_equal(L.nodes[0].ranks, 5);
    mw_topo_layout_free(&L);
}

/* ---- lines -------------------------------------------------------------------------------- */

static void test_lines_equal_pairs(void **state)
{
    (void)state;
    static tjob_t t;
    const uint32_t pu_of[8] = {0, 2, 4, 6, 1, 3, 5, 7};
    tjob_make(&t, 4, 8, 2, 2, 2, 1, pu_of);
    mw_topo_layout_t L;
    assert_int_equal(mw_topo_layout(&L, &t.job), 0);
    /* 400 random pairs over 32 ranks, with duplicates, two naming ranks outside the job. */
    enum { N = 402 };
    static uint32_t src[N], dst[N];
    static uint64_t msg[N], byt[N];
    static uint64_t want_m[32][32], want_b[32][32];
    memset(want_m, 0, sizeof want_m);
    memset(want_b, 0, sizeof want_b);
    srand(7);
    uint64_t tm = 0, tb = 0;
    for (int i = 0; i < 400; i++) {
        src[i] = (uint32_t)rand() % 32;
        dst[i] = (uint32_t)rand() % 32;
        msg[i] = 1 + (uint64_t)(rand() % 9);
        byt[i] = msg[i] * 100 + (uint64_t)i;
        want_m[src[i]][dst[i]] += msg[i];
        want_b[src[i]][dst[i]] += byt[i];
        tm += msg[i];
        tb += byt[i];
    }
    src[400] = 32, dst[400] = 0, msg[400] = 5, byt[400] = 5;
    src[401] = 0, dst[401] = 99, msg[401] = 5, byt[401] = 5;
    mw_pairs_t p = {src, dst, msg, byt, N};
    mw_topo_lines_t T;
    memset(&T, 0, sizeof T);
    assert_int_equal(mw_topo_lines(&T, &L, p), 0);
    assert_int_equal(T.dropped, 2);
    size_t distinct = 0;
    for (int a = 0; a < 32; a++)
        for (int b = 0; b < 32; b++)
            distinct += want_m[a][b] > 0;
    assert_int_equal(T.n_lines, distinct);
    assert_int_equal(T.intra + T.inter, T.n_lines);
    uint64_t sm = 0, sb = 0;
    size_t intra = 0;
    for (size_t i = 0; i < T.n_lines; i++) {
        const mw_topo_line_t *l = &T.lines[i];
        assert_int_equal(l->messages, want_m[l->src][l->dst]);
        assert_int_equal(l->bytes, want_b[l->src][l->dst]);
        want_m[l->src][l->dst] = 0; /* each pair once */
        assert_int_equal(l->inter, l->src / 8 != l->dst / 8);
        assert_int_equal(l->periodic,
                         2 * (l->src > l->dst ? l->src - l->dst : l->dst - l->src) > 32);
        intra += !l->inter;
        sm += l->messages;
        sb += l->bytes;
    }
    assert_int_equal(T.intra, intra);
    assert_int_equal(sm, tm);
    assert_int_equal(sb, tb);
    assert_int_equal(T.messages, tm);
    assert_int_equal(T.bytes, tb);
    /* Bundles: sums of the lines of each node pair, exactly. */
    uint64_t bm = 0, bb = 0;
    uint32_t pairs = 0;
    for (size_t i = 0; i < T.n_bundles; i++) {
        const mw_topo_bundle_t *b = &T.bundles[i];
        uint64_t m = 0, y = 0;
        uint32_t c = 0;
        for (size_t j = 0; j < T.n_lines; j++)
            if (T.lines[j].src / 8 == b->a && T.lines[j].dst / 8 == b->b) {
                m += T.lines[j].messages;
                y += T.lines[j].bytes;
                c++;
            }
        assert_int_equal(b->messages, m);
        assert_int_equal(b->bytes, y);
        assert_int_equal(b->pairs, c);
        bm += b->messages;
        bb += b->bytes;
        pairs += b->pairs;
        if (i)
            assert_true(T.bundles[i - 1].a < b->a ||
                        (T.bundles[i - 1].a == b->a && T.bundles[i - 1].b < b->b));
    }
    assert_int_equal(bm, tm);
    assert_int_equal(bb, tb);
    assert_int_equal(pairs, T.n_lines);
    assert_int_equal(T.bundles_intra + T.bundles_inter, T.n_bundles);
    /* The rank metric: bytes sent. */
    uint64_t sent0 = 0;
    for (int i = 0; i < 400; i++)
        if (src[i] == 0)
            sent0 += byt[i];
    assert_int_equal(T.rank_bytes[0], sent0);
    mw_topo_lines_free(&T);
    mw_topo_layout_free(&L);
}

static void test_periodic_stubs(void **state)
{
    (void)state;
    static tjob_t t;
    const uint32_t pu_of[8] = {0, 2, 4, 6, 1, 3, 5, 7};
    tjob_make(&t, 4, 8, 2, 2, 2, 1, pu_of);
    mw_topo_layout_t L;
    assert_int_equal(mw_topo_layout(&L, &t.job), 0);
    uint32_t src[2] = {0, 0}, dst[2] = {1, 31};
    uint64_t m[2] = {1, 2}, b[2] = {10, 20};
    mw_pairs_t p = {src, dst, m, b, 2};
    mw_topo_lines_t T;
    memset(&T, 0, sizeof T);
    assert_int_equal(mw_topo_lines(&T, &L, p), 0);
    assert_int_equal(T.periodic, 1);
    mw_rgb_t c = {1, 0, 0};
    mw_topo_curve_t cv[2];
    /* (0, 1): one arc from rank 0's base to the top of rank 1's marker. */
    assert_int_equal(mw_topo_curves(&L, &T, 0, 0, 1, c, cv), 1);
    float q[3];
    mw_topo_curve_point(&cv[0], 0, q);
    assert_true(q[0] == L.ranks[0].pos[0] && q[1] == L.ranks[0].pos[1]);
    mw_topo_curve_point(&cv[0], 1, q);
    assert_true(q[1] == L.ranks[1].pos[1] + MW_TOPO_MARKER_H);
    assert_int_equal(cv[0].inter > 0.5f, 0);
    /* (0, 31) wraps around: without the option one arc across the scene, with it two stubs, one
     * leaving rank 0 and one arriving at rank 31, both ending outside the scene. */
    assert_int_equal(mw_topo_curves(&L, &T, 0, 1, 0, c, cv), 1);
    assert_int_equal(mw_topo_curves(&L, &T, 0, 1, 1, c, cv), 2);
    assert_true(cv[0].inter > 0.5f);
    mw_topo_curve_point(&cv[0], 0, q);
    assert_true(q[0] == L.ranks[0].pos[0] && q[2] == L.ranks[0].pos[2]);
    mw_topo_curve_point(&cv[0], 1, q);
    assert_false(inside(L.lo, L.hi, q));
    mw_topo_curve_point(&cv[1], 1, q);
    assert_true(q[0] == L.ranks[31].pos[0] && q[2] == L.ranks[31].pos[2]);
    mw_topo_curve_point(&cv[1], 0, q);
    assert_false(inside(L.lo, L.hi, q));
    assert_true(cv[0].t1 == 0.5f && cv[1].t0 == 0.5f);
    /* Bundles: node 0 -> node 3 of 4 is further than half the nodes. */
    assert_int_equal(T.n_bundles, 2);
    assert_int_equal(T.bundles[1].periodic, 1);
    assert_int_equal(mw_topo_curves(&L, &T, 1, 1, 1, c, cv), 2);
    mw_topo_lines_free(&T);
    mw_topo_layout_free(&L);
}

static void test_color_scale(void **state)
{
    (void)state;
    static tjob_t t;
    const uint32_t pu_of[2] = {0, 1};
    tjob_make(&t, 2, 2, 1, 2, 1, 1, pu_of);
    mw_topo_layout_t L;
    assert_int_equal(mw_topo_layout(&L, &t.job), 0);
    uint32_t src[3] = {0, 1, 2}, dst[3] = {1, 2, 3};
    uint64_t m[3] = {4, 40, 400}, b[3] = {0, 7, 9};
    mw_pairs_t p = {src, dst, m, b, 3};
    mw_topo_lines_t T;
    memset(&T, 0, sizeof T);
    assert_int_equal(mw_topo_lines(&T, &L, p), 0);
    mw_scale_t s = mw_topo_line_scale(&T, 0, MW_TOPO_COLOR_MESSAGES, 1);
    assert_true(s.min == 4 && s.max == 400 && s.log);
    assert_true(mw_scale_t01(&s, 4) == 0.0f && mw_scale_t01(&s, 400) == 1.0f);
    assert_true(mw_scale_t01(&s, 40) > 0.49f && mw_scale_t01(&s, 40) < 0.51f);
    s = mw_topo_line_scale(&T, 0, MW_TOPO_COLOR_MESSAGES, 0);
    assert_true(mw_scale_t01(&s, 202) == 0.5f);
    /* Log: zero bytes are below the scale, the minimum is the smallest positive value. */
    s = mw_topo_line_scale(&T, 0, MW_TOPO_COLOR_BYTES, 1);
    assert_true(s.min == 7 && s.max == 9);
    s = mw_topo_line_scale(&T, 0, MW_TOPO_COLOR_SRC, 1);
    assert_true(s.ranks && s.min == 0 && s.max == 3);
    s = mw_topo_line_scale(&T, 1, MW_TOPO_COLOR_MESSAGES, 0);
    assert_true(s.min == 4 && s.max == 400); /* bundles: 0->0 (4), 0->1 (40), 1->1 (400) */
    mw_rgb_t lo = mw_ramp(0), hi = mw_ramp(1);
    assert_true(lo.b > lo.r && hi.r > hi.b);
    mw_scale_t rs = mw_topo_rank_scale(&T);
    assert_true(rs.min == 7 && rs.max == 9);
    assert_int_equal(mw_topo_color_of("dst"), MW_TOPO_COLOR_DST);
    assert_int_equal(mw_topo_color_of("nope"), -1);
    mw_topo_lines_free(&T);
    mw_topo_layout_free(&L);
}

/* ---- matrix ------------------------------------------------------------------------------- */

static void test_matrix_binning(void **state)
{
    (void)state;
    enum { R = 1000, P = 3000 };
    static uint32_t src[P], dst[P];
    static uint64_t m[P], b[P];
    uint64_t tm = 0, tb = 0;
    for (int i = 0; i < P; i++) {
        src[i] = (uint32_t)(i * 7) % R;
        dst[i] = (uint32_t)(i * 13 + 5) % R;
        m[i] = 1 + (uint64_t)i % 4;
        b[i] = 1000 + (uint64_t)i;
        tm += m[i];
        tb += b[i];
    }
    mw_pairs_t p = {src, dst, m, b, P};
    mw_matrix_t mx;
    memset(&mx, 0, sizeof mx);
    assert_int_equal(mw_matrix_bin(&mx, p, R, 128, NULL), 0);
    assert_int_equal(mx.bins, 128);
    uint64_t sm = 0, sb = 0;
    for (int i = 0; i < 128 * 128; i++) {
        sm += mx.messages[i];
        sb += mx.bytes[i];
    }
    assert_int_equal(sm, tm);
    assert_int_equal(sb, tb);
    /* The bins partition the ranks and agree with mw_matrix_bin_of. */
    uint32_t next = 0;
    for (int k = 0; k < mx.bins; k++) {
        uint32_t r0, r1;
        mw_matrix_bin_ranks(&mx, k, &r0, &r1);
        assert_int_equal(r0, next);
        assert_true(r1 >= r0);
        assert_int_equal(mw_matrix_bin_of(&mx, r0), k);
        assert_int_equal(mw_matrix_bin_of(&mx, r1), k);
        next = r1 + 1;
    }
    assert_int_equal(next, R);
    /* One cell checked by hand: what falls in it is the sum of its pairs. */
    int cs = mw_matrix_bin_of(&mx, src[10]), cd = mw_matrix_bin_of(&mx, dst[10]);
    uint64_t want = 0;
    for (int i = 0; i < P; i++)
        if (mw_matrix_bin_of(&mx, src[i]) == cs && mw_matrix_bin_of(&mx, dst[i]) == cd)
            want += m[i];
    assert_int_equal(mx.messages[cs * 128 + cd], want);
    /* Fewer ranks than pixels: one rank per bin, exact pairs; node boundaries from a layout. */
    static tjob_t t;
    const uint32_t pu_of[4] = {0, 1, 2, 3};
    tjob_make(&t, 3, 4, 1, 2, 2, 1, pu_of);
    mw_topo_layout_t L;
    assert_int_equal(mw_topo_layout(&L, &t.job), 0);
    uint32_t s2[2] = {3, 3}, d2[2] = {9, 9};
    uint64_t m2[2] = {5, 6}, b2[2] = {50, 60};
    mw_pairs_t p2 = {s2, d2, m2, b2, 2};
    assert_int_equal(mw_matrix_bin(&mx, p2, 12, 500, &L), 0);
    assert_int_equal(mx.bins, 12);
    assert_int_equal(mx.messages[3 * 12 + 9], 11);
    assert_int_equal(mx.bytes[3 * 12 + 9], 110);
    assert_int_equal(mx.cells_used, 1);
    assert_int_equal(mx.max_messages, 11);
    assert_int_equal(mx.n_edges, 2);
    assert_int_equal(mx.node_edges[0], 4);
    assert_int_equal(mx.node_edges[1], 8);
    mw_matrix_free(&mx);
    mw_topo_layout_free(&L);
}

/* ---- camera and picking ------------------------------------------------------------------- */

static void test_camera_and_pick(void **state)
{
    (void)state;
    static tjob_t t;
    const uint32_t pu_of[4] = {0, 2, 4, 6};
    tjob_make(&t, 2, 4, 2, 2, 2, 1, pu_of);
    mw_topo_layout_t L;
    assert_int_equal(mw_topo_layout(&L, &t.job), 0);
    mw_camera_t c;
    mw_camera_fit(&c, &L);
    float mvp[16], x, y;
    mw_camera_matrix(&c, 1280.0f / 800.0f, mvp);
    assert_int_equal(mw_camera_project(mvp, c.target, 1280, 800, &x, &y), 1);
    assert_true(x > 639 && x < 641 && y > 399 && y < 401);
    /* The whole scene is on screen. */
    float corner[3] = {L.lo[0], 0, L.hi[2]};
    assert_int_equal(mw_camera_project(mvp, corner, 1280, 800, &x, &y), 1);
    assert_true(x >= 0 && x < 1280 && y >= 0 && y < 800);
    /* Zooming in doubles the pixels per unit; orbiting keeps the pitch in range. */
    float ppu = mw_camera_px_per_unit(&c, 800);
    mw_camera_zoom(&c, 2);
    assert_true(mw_camera_px_per_unit(&c, 800) > 1.99f * ppu);
    mw_camera_orbit(&c, 0, 10000);
    assert_true(c.pitch <= 89);
    mw_camera_fit(&c, &L);
    mw_camera_matrix(&c, 1280.0f / 800.0f, mvp);
    /* Clicking a rank's marker picks that rank. */
    float p[3] = {L.ranks[5].pos[0], L.ranks[5].pos[1] + MW_TOPO_MARKER_H / 2, L.ranks[5].pos[2]};
    assert_int_equal(mw_camera_project(mvp, p, 1280, 800, &x, &y), 1);
    mw_topo_pick_t pk = mw_topo_pick(&L, NULL, 0, 0, mvp, 1280, 800, x, y, 6);
    assert_int_equal(pk.kind, MW_TOPO_PICK_RANK);
    assert_int_equal(pk.rank, 5);
    /* Clicking the apex of a line picks that line. */
    uint32_t src[1] = {0}, dst[1] = {6};
    uint64_t m[1] = {3}, b[1] = {30};
    mw_pairs_t pp = {src, dst, m, b, 1};
    mw_topo_lines_t T;
    memset(&T, 0, sizeof T);
    assert_int_equal(mw_topo_lines(&T, &L, pp), 0);
    mw_topo_curve_t cv[2];
    mw_rgb_t col = {1, 1, 1};
    assert_int_equal(mw_topo_curves(&L, &T, 0, 0, 0, col, cv), 1);
    mw_topo_curve_point(&cv[0], 0.5f, p);
    assert_int_equal(mw_camera_project(mvp, p, 1280, 800, &x, &y), 1);
    pk = mw_topo_pick(&L, &T, 0, 0, mvp, 1280, 800, x, y, 6);
    assert_int_equal(pk.kind, MW_TOPO_PICK_LINE);
    assert_int_equal(pk.index, 0);
    /* Zoomed out far enough, lines become bundles. */
    assert_int_equal(mw_topo_auto_bundles(&c, &L, 800, 1e6f), 1);
    assert_int_equal(mw_topo_auto_bundles(&c, &L, 800, 1.0f), 0);
    mw_topo_lines_free(&T);
    mw_topo_layout_free(&L);
}

/* ---- the step store ----------------------------------------------------------------------- */

static Mpiwatch__Step *new_step(uint64_t n, uint32_t pairs)
{
    Mpiwatch__Step *s = calloc(1, sizeof *s);
    mpiwatch__step__init(s);
    s->step = n;
    s->n_pair_src = s->n_pair_dst = s->n_pair_messages = s->n_pair_bytes = pairs;
    s->pair_src = calloc(pairs ? pairs : 1, sizeof *s->pair_src);
    s->pair_dst = calloc(pairs ? pairs : 1, sizeof *s->pair_dst);
    s->pair_messages = calloc(pairs ? pairs : 1, sizeof *s->pair_messages);
    s->pair_bytes = calloc(pairs ? pairs : 1, sizeof *s->pair_bytes);
    return s;
}

static void test_step_store(void **state)
{
    (void)state;
    mw_model_t *m = mw_model_new(0);
    Mpiwatch__JobInfo *job = calloc(1, sizeof *job);
    mpiwatch__job_info__init(job);
    job->job = strdup("a");
    job->size = 4;
    mw_model_set_job(m, job);
    assert_int_equal(mw_model_add_step(m, new_step(5, 1)), 0);
    assert_int_equal(mw_model_add_step(m, new_step(2, 1)), 0);
    assert_int_equal(mw_model_add_step(m, new_step(9, 1)), 0);
    assert_int_equal(mw_model_add_step(m, new_step(5, 3)), 0); /* replaces */
    assert_int_equal(mw_model_step_count(m), 3);
    assert_int_equal(mw_model_step_at(m, 0)->step, 2);
    assert_int_equal(mw_model_step_at(m, 2)->step, 9);
    assert_int_equal(mw_model_step_find(m, 5), 1);
    assert_int_equal(mw_model_step_at(m, 1)->n_pair_src, 3);
    assert_int_equal(mw_model_step_find(m, 6), -1);
    assert_null(mw_model_step_at(m, 3));
    mw_pairs_t p = mw_pairs_of_step(mw_model_step_at(m, 1));
    assert_int_equal(p.n, 3);
    /* Bounded: the lowest numbers go first. */
    for (uint64_t i = 100; i < 100 + MW_STEPS_MAX; i++)
        mw_model_add_step(m, new_step(i, 0));
    assert_int_equal(mw_model_step_count(m), MW_STEPS_MAX);
    assert_int_equal(mw_model_step_at(m, 0)->step, 100);
    /* Another job clears them. */
    Mpiwatch__JobInfo *job2 = calloc(1, sizeof *job2);
    mpiwatch__job_info__init(job2);
    job2->job = strdup("b");
    job2->size = 4;
    mw_model_set_job(m, job2);
    assert_int_equal(mw_model_step_count(m), 0);
    mw_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_used_resources_nested),
        cmocka_unit_test(test_layout_fallback_by_host),
        cmocka_unit_test(test_lines_equal_pairs),
        cmocka_unit_test(test_periodic_stubs),
        cmocka_unit_test(test_color_scale),
        cmocka_unit_test(test_matrix_binning),
        cmocka_unit_test(test_camera_and_pick),
        cmocka_unit_test(test_step_store),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
