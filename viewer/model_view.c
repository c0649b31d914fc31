/* model_view.c: the view state: following the newest window or staying where it was paused,
 * the call view's range, scrolling and zooming within limits. No SDL, no GL (see
 * model_view.h).
 */
#include "model_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_SPAN_S 1e-6 /* zoom limits: one microsecond ... */
#define MAX_SPAN_S 1e7  /* ... about four months */

/* ---- the view state ----------------------------------------------------------------------- */

void mw_view_init(mw_view_t *v)
{
    memset(v, 0, sizeof *v);
    v->span = 30.0;
    v->t0 = 0.0;
    v->t1 = v->span;
    v->follow = 1;
    v->highlight_rank = -1;
    v->repr = MW_REPR_END;
    v->transfer = MW_TRANSFER_LOG;
    v->o_min = 0.3f; /* on the dark background, 0.15 leaves a lone call hard to see */
}

void mw_view_update(mw_view_t *v, const mw_model_t *m)
{
    if (!(v->span >= MIN_SPAN_S))
        v->span = v->span > 0 ? MIN_SPAN_S : 30.0;
    if (v->span > MAX_SPAN_S)
        v->span = MAX_SPAN_S;
    uint64_t newest;
    if (!m->grid_set || !m->origin_set || mw__newest_index(m, &newest) < 0)
        return;
    double end = mw_model_seconds(m, mw_model_window_start(m, newest + 1));
    uint64_t oldest = m->extent_set ? m->ext_old : (m->n ? m->ent[0].index : m->origin_index);
    double begin = mw_model_seconds(m, mw_model_window_start(m, oldest));
    if (v->follow) {
        v->t1 = end;
        v->t0 = end - v->span;
        return;
    }
    double len = v->t1 - v->t0;
    if (!(len >= MIN_SPAN_S) || len > MAX_SPAN_S) {
        len = v->span;
        v->t0 = v->t1 - len;
    }
    /* A paused view stays over the data: not past its end, not before its beginning. */
    if (v->t1 > end) {
        v->t0 -= v->t1 - end;
        v->t1 = end;
    }
    if (v->t0 < begin) {
        v->t1 += begin - v->t0;
        v->t0 = begin;
    }
}

void mw_view_focus(const mw_view_t *v, double *t0, double *t1)
{
    if (v->sel1 > v->sel0) {
        *t0 = v->sel0;
        *t1 = v->sel1;
    } else {
        *t1 = v->t1;
        *t0 = v->t1 - 0.1 * (v->t1 - v->t0);
    }
}

void mw_view_scroll(mw_view_t *v, const mw_layout_t *l, double dx_px)
{
    if (l->timeline.w <= 0)
        return;
    double dt = dx_px * (v->t1 - v->t0) / l->timeline.w;
    v->t0 += dt;
    v->t1 += dt;
    v->follow = 0;
}

void mw_view_zoom(mw_view_t *v, const mw_layout_t *l, int x_px, double factor)
{
    if (!(factor > 0) || l->timeline.w <= 0)
        return;
    double old = v->t1 - v->t0;
    if (!(old > 0))
        old = v->span;
    double span = old / factor;
    if (span < MIN_SPAN_S)
        span = MIN_SPAN_S;
    if (span > MAX_SPAN_S)
        span = MAX_SPAN_S;
    int x = x_px < l->timeline.x                   ? l->timeline.x
            : x_px > l->timeline.x + l->timeline.w ? l->timeline.x + l->timeline.w
                                                   : x_px;
    double tx = mw_time_of_x(&l->timeline, v->t0, v->t0 + old, x);
    v->t0 = tx - (tx - v->t0) * (span / old);
    v->t1 = v->t0 + span;
    v->span = span;
    v->follow = 0;
}
