/* topo_curves.c: lines and bundles as drawn curves (topo_curves.h). */
#include "topo_curves.h"

#include <math.h>
#include <string.h>

/* Distance from p along the horizontal direction (dx, dz) to where it leaves the box. */
static float exit_distance(const mw_topo_layout_t *L, const float p[3], float dx, float dz)
{
    float best = 1e30f;
    if (dx > 1e-6f)
        best = fminf(best, (L->hi[0] - p[0]) / dx);
    if (dx < -1e-6f)
        best = fminf(best, (L->lo[0] - p[0]) / dx);
    if (dz > 1e-6f)
        best = fminf(best, (L->hi[2] - p[2]) / dz);
    if (dz < -1e-6f)
        best = fminf(best, (L->lo[2] - p[2]) / dz);
    return best < 0 ? 0 : best > 1e29f ? 0 : best;
}

static void node_centre(const mw_topo_layout_t *L, uint32_t g, float out[3])
{
    const mw_topo_node_t *n = &L->nodes[g];
    out[0] = (n->lo[0] + n->hi[0]) / 2;
    out[1] = L->hi[1] + 0.4f;
    out[2] = (n->lo[2] + n->hi[2]) / 2;
}

int mw_topo_curves(const mw_topo_layout_t *L, const mw_topo_lines_t *t, int bundled, size_t i,
                   int periodic, mw_rgb_t color, mw_topo_curve_t out[2])
{
    mw_topo_curve_t c;
    memset(&c, 0, sizeof c);
    c.rgb[0] = color.r;
    c.rgb[1] = color.g;
    c.rgb[2] = color.b;
    c.t0 = 0;
    c.t1 = 1;
    int wrap = 0;
    if (bundled) {
        const mw_topo_bundle_t *b = &t->bundles[i];
        if (b->a >= L->n_nodes || b->b >= L->n_nodes)
            return 0;
        node_centre(L, b->a, c.p0);
        node_centre(L, b->b, c.p1);
        c.p1[1] += MW_TOPO_MARKER_H;
        c.inter = b->a != b->b ? (float)b->cls : 0;
        if (b->a == b->b) {
            /* A node's own traffic: a loop over the node, in the direction of its row. */
            c.p0[0] -= L->cell_w * 0.25f;
            c.p1[0] += L->cell_w * 0.25f;
        }
        wrap = periodic && b->periodic;
    } else {
        const mw_topo_line_t *l = &t->lines[i];
        memcpy(c.p0, L->ranks[l->src].pos, sizeof c.p0);
        memcpy(c.p1, L->ranks[l->dst].pos, sizeof c.p1);
        c.p1[1] += MW_TOPO_MARKER_H;
        c.inter = l->inter ? (float)l->cls : 0;
        wrap = periodic && l->periodic;
    }
    float dx = c.p1[0] - c.p0[0], dz = c.p1[2] - c.p0[2];
    float dist = sqrtf(dx * dx + dz * dz);
    if (c.inter) {
        /* Between switches: higher, over the switches' boxes. */
        c.height = 0.22f * dist + 2.5f + (c.inter > 1.5f ? 3.0f : 0);
        c.side = 0.06f * dist;
    } else {
        c.height = 0.3f * dist + 0.6f;
        c.side = 0.12f * dist + (dist < 1e-3f ? 0.4f : 0);
    }
    if (!wrap || dist < 1e-3f) {
        out[0] = c;
        return 1;
    }
    /* Periodic: two stubs leaving the scene, away from the partner, each half of the line. */
    float ux = dx / dist, uz = dz / dist;
    mw_topo_curve_t a = c, b = c;
    float la = exit_distance(L, c.p0, -ux, -uz) + 2.0f;
    a.p1[0] = c.p0[0] - ux * la;
    a.p1[1] = c.p0[1] + 1.0f;
    a.p1[2] = c.p0[2] - uz * la;
    a.height = 0.15f * la + 0.5f;
    a.side = 0;
    a.t0 = 0;
    a.t1 = 0.5f;
    float lb = exit_distance(L, c.p1, ux, uz) + 2.0f;
    b.p0[0] = c.p1[0] + ux * lb;
    b.p0[1] = c.p1[1] + 1.0f;
    b.p0[2] = c.p1[2] + uz * lb;
    b.height = 0.15f * lb + 0.5f;
    b.side = 0;
    b.t0 = 0.5f;
    b.t1 = 1;
    out[0] = a;
    out[1] = b;
    return 2;
}

void mw_topo_curve_point(const mw_topo_curve_t *c, float s, float out[3])
{
    float dx = c->p1[0] - c->p0[0], dz = c->p1[2] - c->p0[2];
    float len = sqrtf(dx * dx + dz * dz);
    float rx = 1, rz = 0;
    if (len > 1e-6f) {
        rx = -dz / len;
        rz = dx / len;
    }
    float bump = 4 * s * (1 - s);
    out[0] = c->p0[0] + dx * s + rx * c->side * bump;
    out[1] = c->p0[1] + (c->p1[1] - c->p0[1]) * s + c->height * bump;
    out[2] = c->p0[2] + dz * s + rz * c->side * bump;
}
