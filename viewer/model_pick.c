/* model_pick.c: picking: what a click finds in the legend or the call view, measured on the
 * same frame the call view is binned on (model_density.c), so that what is under the pointer is
 * what was drawn there. No SDL, no GL (see model_pick.h).
 */
#include "model_internal.h"
#include "mw_bins.h"
#include "model_trace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- picking ------------------------------------------------------------------------------ */

/* Distance from (px, py) to the segment (ax, ay)-(bx, by). */
static double seg_dist(double px, double py, double ax, double ay, double bx, double by)
{
    double dx = bx - ax, dy = by - ay, l2 = dx * dx + dy * dy;
    double u = l2 > 0 ? ((px - ax) * dx + (py - ay) * dy) / l2 : 0;
    u = u < 0 ? 0 : u > 1 ? 1 : u;
    double ex = ax + u * dx - px, ey = ay + u * dy - py;
    return sqrt(ex * ex + ey * ey);
}

/* Distance in pixels from the pixel (cx, cy) (plot coordinates, row 0 at the bottom) to a call
 * drawn from xa to xe at height y with the representation. */
static double call_dist(mw_repr_t repr, double xa, double xe, double y, int cx, int cy)
{
    double px = cx + 0.5, py = cy + 0.5;
    switch (repr) {
    case MW_REPR_START:
    case MW_REPR_END: {
        double x = repr == MW_REPR_START ? xa : xe;
        double dx = floor(x) - cx, dy = floor(y) - cy;
        return sqrt(dx * dx + dy * dy);
    }
    case MW_REPR_LINES: {
        double x0 = floor(xa), x1 = floor(xe);
        double dx = cx < x0 ? x0 - cx : cx > x1 ? cx - x1 : 0, dy = floor(y) - cy;
        return sqrt(dx * dx + dy * dy);
    }
    default: {
        double ax[MW__ARC_SEGMENTS + 1], ay[MW__ARC_SEGMENTS + 1], best = INFINITY;
        mw__arc_points(xa, xe, y, ax, ay);
        for (int s = 0; s < MW__ARC_SEGMENTS; s++)
            best = fmin(best, seg_dist(px, py, ax[s], ay[s], ax[s + 1], ay[s + 1]));
        return best;
    }
    }
}

static void host_of(const mw_model_t *m, uint32_t rank, char *buf, size_t len)
{
    buf[0] = '\0';
    const Mpiwatch__JobInfo *j = m->job;
    if (!j)
        return;
    for (size_t i = 0; i < j->n_ranks; i++) {
        const Mpiwatch__RankInfo *r = j->ranks[i];
        if (r && r->rank == rank) {
            if (r->host < j->n_hosts && j->hosts[r->host])
                snprintf(buf, len, "%s", j->hosts[r->host]);
            return;
        }
    }
}

/* The nearest recorded call to a click so far (mw_pick). */
typedef struct {
    const mw__frame_t *f;
    mw_repr_t repr;
    double cx, cy, radius;
    double best;     /* its distance in pixels */
    uint64_t best_d; /* its duration */
    mw_pick_t *pk;
} pick_ctx_t;

/* Takes a call as the pick when it is within the radius and nearer than the one so far (the
 * longer one wins a tie: it is drawn last). */
static void pick_call(pick_ctx_t *pc, unsigned fn, uint32_t rank, int32_t peer, uint64_t start_ns,
                      uint64_t duration_ns, uint64_t bytes)
{
    if (!duration_ns)
        return;
    const mw__frame_t *f = pc->f;
    double yy = mw__frame_y(f, (double)duration_ns);
    double xa = mw__frame_x(f, start_ns), xe = xa + (double)duration_ns * f->xs;
    double dd = call_dist(pc->repr, xa, xe, yy, pc->cx, pc->cy);
    if (dd > pc->radius || dd > pc->best || (dd == pc->best && duration_ns <= pc->best_d))
        return;
    pc->best = dd;
    pc->best_d = duration_ns;
    pc->pk->kind = MW_PICK_CALL;
    pc->pk->fn = fn;
    pc->pk->rank = rank;
    pc->pk->peer = peer;
    pc->pk->start_ns = start_ns;
    pc->pk->duration_ns = duration_ns;
    pc->pk->bytes = bytes;
    pc->pk->traced = 0;
    pc->pk->tag = 0;
    pc->pk->comm = 0;
    pc->pk->tkind = 0;
}

/* A traced call (its record) as a candidate. */
static void pick_rec(pick_ctx_t *pc, const mw_trace_rank_t *e, const mw_trace_rec_t *r)
{
    double before = pc->best;
    uint64_t before_d = pc->best_d;
    pick_call(pc, r->fn, e->rank, r->peer, mw_trace_rec_start(e, r), r->dur_ns ? r->dur_ns : 1,
              r->bytes);
    if (pc->best == before && pc->best_d == before_d)
        return;
    pc->pk->duration_ns = r->dur_ns;
    pc->pk->traced = 1;
    pc->pk->tag = r->tag;
    pc->pk->comm = r->comm;
    pc->pk->tkind = r->kind;
}

mw_pick_t mw_pick(const mw_model_t *m, const mw_view_t *v, const mw_layout_t *l, int x, int y,
                  int radius)
{
    mw_pick_t pk;
    memset(&pk, 0, sizeof pk);
    pk.kind = MW_PICK_NONE;
    pk.peer = -1;

    const mw_rect_t *lg = &l->legend;
    if (x >= lg->x && x < lg->x + lg->w && y >= lg->y && y < lg->y + lg->h && l->legend_row_h > 0) {
        int row = (y - lg->y) / l->legend_row_h - 1; /* the first row is the heading */
        mw_legend_entry_t e[MW_LEGEND_MAX];
        int n =
            mw_model_legend(m, e, l->legend_rows < MW_LEGEND_MAX ? l->legend_rows : MW_LEGEND_MAX);
        if (row >= 0 && row < n) {
            pk.kind = MW_PICK_LEGEND;
            pk.fn = e[row].fn;
        }
        return pk;
    }

    const mw_rect_t *r = &l->density;
    if (!l->show_density || x < r->x || x >= r->x + r->w || y < r->y || y >= r->y + r->h ||
        !m->grid_set || !m->origin_set)
        return pk;
    double f0, f1, d0, d1;
    mw_view_focus(v, &f0, &f1);
    if (!(f1 > f0))
        return pk;
    mw_density_range(m, f0, f1, &d0, &d1);
    mw__frame_t f;
    mw__frame_init(&f, m, f0, f1, d0, d1, r->w, r->h, NULL, NULL, v->dur_linear);
    const mw_repr_t repr = v->repr < MW_REPR_COUNT ? v->repr : MW_REPR_END;
    int cx = x - r->x, cy = r->y + r->h - 1 - y;
    const double W = (double)mw__shortest_len(m);
    const unsigned S = m->subslots;
    int64_t k0 = mw__index_of_time(m, f0), k1 = mw__index_of_time(m, f1);
    if (repr != MW_REPR_END)
        k1 += (int64_t)fmin(ceil(d1 / W) + 1, MW__MAX_EXTRA_WINDOWS);
    size_t p0, p1;
    mw__window_range(m, k0, k1, &p0, &p1);

    /* The nearest recorded long call (the highlighted rank's exact calls count too); the
     * longer one wins a tie, it is the one drawn last in the eye. */
    pick_ctx_t pc = {&f, repr, cx, cy, radius, INFINITY, 0, &pk};
    for (size_t p = p0; p < p1; p++) {
        const Mpiwatch__Window *win = m->ent[p].w;
        const mw_trace_window_t *tw = mw_trace_window(m, win->index);
        if (tw && (tw->over_cap || tw->exact == 0))
            tw = NULL;
        for (uint32_t i = 0; tw && i < tw->n_ranks; i++) {
            const mw_trace_rank_t *e = &tw->ranks[i];
            for (size_t j = 0; e->exact && j < e->n; j++)
                if (mw_trace_is_call(&e->recs[j]))
                    pick_rec(&pc, e, &e->recs[j]);
        }
        for (size_t i = 0; i < win->n_longest; i++) {
            const Mpiwatch__Call *c = win->longest[i];
            int exact = 0;
            for (uint32_t j = 0; tw && j < tw->n_ranks; j++)
                exact |= tw->ranks[j].rank == c->rank && tw->ranks[j].exact;
            if (!exact)
                pick_call(&pc, c->fn, c->rank, c->peer, c->start_ns, c->duration_ns, c->bytes);
        }
    }
    for (size_t i = 0; i < m->rc_n; i++) {
        const mw_rank_call_t *c = &m->rc[i];
        if (c->exact)
            pick_call(&pc, c->fn, m->rc_rank, c->peer, c->start_ns, c->duration_ns, c->bytes);
    }
    if (pk.kind == MW_PICK_CALL) {
        host_of(m, pk.rank, pk.host, sizeof pk.host);
        return pk;
    }

    /* Else the densest cell drawn through this pixel. */
    const unsigned want_end = repr == MW_REPR_START ? 0 : 1;
    uint64_t best_count = 0;
    for (size_t p = p0; p < p1; p++) {
        const Mpiwatch__Window *win = m->ent[p].w;
        if (mw_trace_cover(m, win->index) == MW_COVER_EXACT)
            continue; /* its summary is not drawn */
        const double wsr = mw__rel_start(m, (int64_t)win->index) - f.t0ns;
        const double ss = (double)win->window_ns / S;
        for (size_t i = 0; i < win->n_density_fn; i++) {
            unsigned b = win->density_bin[i];
            uint64_t cnt = win->density_count[i];
            if (win->density_end[i] != want_end || b >= m->bins || cnt <= best_count)
                continue;
            int sub = win->density_sub[i];
            int hit;
            if (repr == MW_REPR_START || repr == MW_REPR_END) {
                double xa = (wsr + sub * ss) * f.xs, xb = xa + ss * f.xs;
                double ya = mw__frame_yl(&f, mw_bin_log2_lo(b, m->bins)),
                       yb = mw__frame_yl(&f, mw_bin_log2_lo(b + 1, m->bins));
                hit = xb > cx && xa < cx + 1 && yb > cy && ya < cy + 1;
            } else {
                double d = mw_bin_mid_ns(b, m->bins),
                       ym = mw__frame_yl(&f, mw_bin_log2_mid(b, m->bins));
                double xe = (wsr + (sub + 0.5) * ss) * f.xs, xa = xe - d * f.xs;
                if (repr == MW_REPR_LINES)
                    hit = (int)floor(ym) == cy && cx >= floor(xa) && cx <= floor(xe);
                else
                    hit = call_dist(repr, xa, xe, ym, cx, cy) <= 1.0;
            }
            if (!hit)
                continue;
            best_count = cnt;
            uint64_t sub0 = mw_model_window_start(m, win->index) +
                            (uint64_t)(int64_t)floor(sub * (double)win->window_ns / m->subslots);
            pk.kind = MW_PICK_CELL;
            pk.fn = win->density_fn[i];
            pk.cell_t0_ns = sub0;
            pk.cell_t1_ns = sub0 + (uint64_t)(win->window_ns / m->subslots);
            pk.cell_d0_ns = mw_bin_min_ns(b, m->bins);
            pk.cell_d1_ns = mw_bin_min_ns(b + 1, m->bins);
            pk.cell_count = cnt;
        }
    }
    return pk;
}
