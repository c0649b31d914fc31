/* view_ranks.c: the per-rank timeline: one row per rank over the call view's time range,
 * calls as coloured spans, matched messages as lines from the send to the end of the receive.
 *
 * DESIGN: the model computes the picture (mw_ranks_bin: opacity and colour per pixel, rows
 * aggregated when there are more ranks than pixels, and the messages in plot pixels); this file
 * uploads it as two float textures drawn through the call view's shader with a linear transfer
 * of o_min 0 and Dmax 1, so the opacity is exactly the model's, then draws the messages, the
 * picked rank's frame, the summary marks and the axes. It re-bins only when the range, the size
 * or the data changed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views.h"

#define RANKS_MSGS_MAX 20000 /* message lines drawn; the rest are counted */
#define MW_COLOR_MSG 0xf2f2f2

int mw__ranks_init(mw_ranks_gl_t *rk)
{
    memset(rk, 0, sizeof *rk);
    return mw__density_init(&rk->g);
}

void mw__ranks_free(mw_ranks_gl_t *rk)
{
    mw__density_free(&rk->g);
    free(rk->msgs);
    memset(rk, 0, sizeof *rk);
}

static int ranks_update(const mw_view_ctx_t *vc, mw_ranks_gl_t *rk, double f0, double f1)
{
    const mw_rect_t *r = &vc->layout->density;
    mw_density_gl_t *d = &rk->g;
    if (rk->key.valid && rk->key.f0 == f0 && rk->key.f1 == f1 && rk->key.w == r->w &&
        rk->key.h == r->h && rk->key.data_gen == vc->data_gen)
        return 0;
    if (mw__density_room(d, r->w, r->h) < 0)
        return -1;
    if (!rk->msgs) {
        rk->msgs = calloc(RANKS_MSGS_MAX, sizeof *rk->msgs);
        if (!rk->msgs)
            return -1;
        rk->msgs_cap = RANKS_MSGS_MAX;
    }
    int rc = mw_ranks_bin(vc->model, vc->view, f0, f1, r->w, r->h, d->D, d->C, rk->msgs,
                          rk->msgs_cap, &rk->info);
    d->dmax = rc == 0 ? 1.0f : 0.0f;
    if (mw__density_upload(d, r->w, r->h, "rank timeline upload") < 0)
        return -1;
    rk->key.f0 = f0;
    rk->key.f1 = f1;
    rk->key.w = r->w;
    rk->key.h = r->h;
    rk->key.data_gen = vc->data_gen;
    rk->key.valid = 1;
    return 0;
}

/* Rank labels on the left: a few ranks, top to bottom. */
static void rank_axis(const mw_view_ctx_t *vc, const mw_rect_t *r, uint32_t ranks)
{
    mw_text_t *t = vc->text;
    int fs = mw__font_small(vc->layout);
    int lh = mw__text_line_height(t, fs);
    mw_rgba_t label = mw__hex(MW_COLOR_DIM, 1), axis = mw__hex(MW_COLOR_AXIS, 1);
    float lw = mw__px(vc->layout, 1), tick = mw__px(vc->layout, 4);
    mw__text_draw(t, fs, mw__px(vc->layout, 6), (float)r->y, MW_ALIGN_LEFT, label, "rank ↓");
    if (!ranks)
        return;
    int want = r->h / (2 * lh) > 1 ? r->h / (2 * lh) : 1;
    uint32_t step = ranks / (uint32_t)want + 1;
    for (uint32_t k = 0; k < ranks; k += step) {
        double y0, y1;
        mw_ranks_rows(ranks, r->h, k, &y0, &y1);
        float y = (float)(r->y + (y0 + y1) / 2);
        if (y - (float)lh / 2 < (float)(r->y + lh))
            continue;
        char buf[16];
        snprintf(buf, sizeof buf, "%u", (unsigned)k);
        mw__batch_rect(vc->batch, (float)r->x - lw - tick, y - lw / 2, tick, lw, axis);
        mw__text_draw(t, fs, (float)r->x - lw - tick - mw__px(vc->layout, 3), y - (float)lh / 2,
                      MW_ALIGN_RIGHT, label, buf);
    }
}

void mw__ranks_draw(const mw_view_ctx_t *vc, mw_ranks_gl_t *rk)
{
    const mw_rect_t *r = &vc->layout->density;
    if (r->w <= 0 || r->h <= 0)
        return;
    double f0 = 0, f1 = 0;
    mw_view_focus(vc->view, &f0, &f1);
    ranks_update(vc, rk, f0, f1);
    mw_density_gl_t *d = &rk->g;
    mw_batch_t *b = vc->batch;

    mw__batch_rect(b, (float)r->x, (float)r->y, (float)r->w, (float)r->h,
                   mw__hex(MW_COLOR_PLOT, 1));
    mw__batch_flush(b);
    if (rk->key.valid && d->dmax > 0)
        mw__density_draw_tex(vc, d, r, 0, 0.0f, 1.0f);

    /* Messages: a thin light line from the send's start in the sender's row to the receive's
     * end in the receiver's row, a dot at the receiving end. */
    float lw = mw__px(vc->layout, 1);
    mw_rgba_t mc = mw__hex(MW_COLOR_MSG, 0.85f);
    float left = (float)r->x, right = (float)(r->x + r->w);
    for (size_t i = 0; i < rk->info.msgs_out; i++) {
        const mw_ranks_msg_t *m = &rk->msgs[i];
        float x0 = left + (float)m->x0, y0 = (float)r->y + (float)m->y0;
        float x1 = left + (float)m->x1, y1 = (float)r->y + (float)m->y1;
        /* Clipped to the plot's columns. */
        if (x1 != x0) {
            float ua = (left - x0) / (x1 - x0), ub = (right - x0) / (x1 - x0);
            float u0 = fmaxf(0.0f, fminf(ua, ub)), u1 = fminf(1.0f, fmaxf(ua, ub));
            if (u1 < u0)
                continue;
            float ax = x0 + u0 * (x1 - x0), ay = y0 + u0 * (y1 - y0);
            float bx = x0 + u1 * (x1 - x0), by = y0 + u1 * (y1 - y0);
            x0 = ax, y0 = ay, x1 = bx, y1 = by;
        } else if (x0 < left || x0 > right) {
            continue;
        }
        mw__batch_line(b, x0, y0, x1, y1, lw, mc);
        if (x1 >= left && x1 <= right && m->x1 >= 0 && m->x1 <= r->w)
            mw__batch_disc(b, x1, y1, mw__px(vc->layout, 1.5f), mc);
    }

    /* The picked rank: a frame around its rows; the picked traced call: a frame around it. */
    uint32_t ranks = rk->info.ranks;
    mw_rgba_t yel = mw__hex(0xffd84a, 1);
    if (vc->view->highlight_rank >= 0 && (uint64_t)vc->view->highlight_rank < ranks) {
        double y0, y1;
        mw_ranks_rows(ranks, r->h, (uint32_t)vc->view->highlight_rank, &y0, &y1);
        float fy0 = (float)(r->y + y0) - lw, fy1 = (float)(r->y + y1) + lw;
        mw__batch_frame(b, left - lw, fy0, (float)r->w + 2 * lw, fy1 - fy0, lw, yel);
        const mw_pick_t *p = vc->pick;
        if (p->kind == MW_PICK_CALL && p->traced && (int64_t)p->rank == vc->view->highlight_rank) {
            float xa = (float)mw_x_of_time(r, f0, f1, mw_model_seconds(vc->model, p->start_ns));
            float xb = (float)mw_x_of_time(
                r, f0, f1, mw_model_seconds(vc->model, p->start_ns + p->duration_ns));
            if (xb - xa < 4)
                xa -= 2, xb += 2;
            mw__batch_frame(b, xa, fy0 - 2 * lw, xb - xa, fy1 - fy0 + 4 * lw,
                            mw__px(vc->layout, 1.5f), yel);
        }
    }
    mw__trace_marks_draw(vc, r, f0, f1);
    mw__event_markers_draw(vc, r, f0, f1, 0);
    mw__time_axis(vc, r, f0, f1);
    rank_axis(vc, r, ranks);
    mw_rgba_t axis = mw__hex(MW_COLOR_AXIS, 1);
    mw__batch_rect(b, (float)r->x - lw, (float)r->y, lw, (float)r->h + lw, axis);
    mw__batch_rect(b, (float)r->x - lw, (float)(r->y + r->h), (float)r->w + lw, lw, axis);

    mw_text_t *t = vc->text;
    int fs = mw__font_small(vc->layout);
    float pad = mw__px(vc->layout, 6), lh = (float)mw__text_line_height(t, fs);
    char buf[200];
    if (ranks > (uint32_t)r->h)
        snprintf(buf, sizeof buf, "%u ranks, %.1f per row · %llu messages%s", (unsigned)ranks,
                 (double)ranks / r->h, (unsigned long long)rk->info.msgs,
                 rk->info.msgs > rk->info.msgs_out ? " (not all drawn)" : "");
    else
        snprintf(buf, sizeof buf, "%u ranks · %llu messages%s", (unsigned)ranks,
                 (unsigned long long)rk->info.msgs,
                 rk->info.msgs > rk->info.msgs_out ? " (not all drawn)" : "");
    float w = mw__text_width(t, fs, buf), cy = (float)(r->y + r->h) - lh - pad / 2;
    mw__batch_rect(b, right - w - 2 * pad, cy, w + pad * 1.5f, lh, mw__hex(MW_COLOR_BG, 0.75f));
    mw__text_draw(t, fs, right - pad, cy, MW_ALIGN_RIGHT, mw__hex(MW_COLOR_TEXT, 1), buf);
    if (!(d->dmax > 0))
        mw__text_draw(t, vc->layout->font_px, (float)r->x + (float)r->w / 2,
                      (float)r->y + (float)r->h / 2, MW_ALIGN_CENTER, mw__hex(MW_COLOR_DIM, 1),
                      mw_model_job(vc->model) ? "no ranks in the selected range"
                                              : "waiting for the job…");
    mw__batch_flush(b);
    mw__text_flush(t);
}
