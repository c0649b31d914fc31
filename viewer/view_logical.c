/* view_logical.c: the logical view (--view logical): the per-rank timeline of the call view's
 * range above, the same windows' events by logical step below (x = step, y = rank), coloured
 * by lateness or differential lateness ('d'), with message lines, collective instances, the
 * computation between events, and the event with the largest differential lateness marked.
 *
 * DESIGN: the model analyses and bins (model_logical.h); this file uploads the picture as two
 * float textures drawn through the call view's shader (opacity exactly the model's, as the
 * per-rank timeline does), draws the lines, frames, axes and the header with the colour scale
 * on top. The two plots are linked through the view state: a click on an event picks its call
 * (app.c), which the per-rank timeline frames, and a call picked in the per-rank timeline
 * selects the event of that call here. Nothing overlaps: the header has its own lines between
 * the two plots (mw_lview_split), and labels that would collide are skipped.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views.h"

#define LV_MSGS_MAX 20000  /* message lines drawn; the rest are counted */
#define LV_COLLS_MAX 20000 /* collective lines drawn */
#define LV_COLOR_MSG 0xf2f2f2
#define LV_COLOR_COLL 0xb48cff /* violet: not on the lateness scale */
#define LV_COLOR_MARK 0xffffff
#define LV_COLOR_SEL 0xffd84a /* the picked rank and call, as in the per-rank timeline */

int mw__logical_init(mw_logical_gl_t *lg)
{
    memset(lg, 0, sizeof *lg);
    lg->lv = mw_lview_new();
    if (!lg->lv)
        return -1;
    lg->pic.mark = lg->pic.sel = -1;
    return mw__density_init(&lg->g) < 0 || mw__density_init(&lg->g2) < 0 ? -1 : 0;
}

void mw__logical_free(mw_logical_gl_t *lg)
{
    mw__density_free(&lg->g);
    mw__density_free(&lg->g2);
    mw_lview_free(lg->lv);
    free(lg->msgs);
    free(lg->colls);
    memset(lg, 0, sizeof *lg);
}

/* The picked call of the view state, for the selection: rank and global span. */
static void picked(const mw_view_ctx_t *vc, int64_t *rank, uint64_t *s0, uint64_t *s1)
{
    const mw_pick_t *p = vc->pick;
    *rank = -1;
    *s0 = *s1 = 0;
    if (p->kind == MW_PICK_CALL && p->traced) {
        *rank = p->rank;
        *s0 = p->start_ns;
        *s1 = p->start_ns + p->duration_ns;
    }
}

/* The global ns of the range [f0, f1] (seconds on the model's axis). */
static void range_ns(const mw_model_t *m, double f0, double f1, uint64_t *g0, uint64_t *g1)
{
    uint64_t o = mw_model_origin_ns(m);
    *g0 = o + (uint64_t)(f0 > 0 ? f0 * 1e9 : 0);
    *g1 = o + (uint64_t)(f1 > 0 ? f1 * 1e9 : 0);
}

/* The strip (lateness over time per rank) in the upper plot, binned when its inputs changed. */
static void strip_update(const mw_view_ctx_t *vc, mw_logical_gl_t *lg, double f0, double f1)
{
    const mw_rect_t *r = &lg->ranks_r;
    uint64_t analyses = mw_lview_info(lg->lv)->analyses;
    if (r->w <= 0 || r->h <= 0 ||
        (lg->skey.valid && lg->skey.f0 == f0 && lg->skey.f1 == f1 && lg->skey.w == r->w &&
         lg->skey.h == r->h && lg->skey.metric == (int)lg->metric && lg->skey.analyses == analyses))
        return;
    if (mw__density_room(&lg->g2, r->w, r->h) < 0)
        return;
    uint64_t g0, g1;
    range_ns(vc->model, f0, f1, &g0, &g1);
    int rc = mw_lview_strip(lg->lv, lg->metric, lg->pic.scale_max_ns, g0, g1, r->w, r->h, lg->g2.D,
                            lg->g2.C);
    lg->g2.dmax = rc == 0 ? 1.0f : 0.0f;
    if (mw__density_upload(&lg->g2, r->w, r->h, "logical view upload") < 0)
        return;
    lg->skey.f0 = f0;
    lg->skey.f1 = f1;
    lg->skey.w = r->w;
    lg->skey.h = r->h;
    lg->skey.metric = (int)lg->metric;
    lg->skey.analyses = analyses;
    lg->skey.valid = 1;
}

static int plot_update(const mw_view_ctx_t *vc, mw_logical_gl_t *lg);

int mw__logical_update(const mw_view_ctx_t *vc, mw_logical_gl_t *lg)
{
    int rc = plot_update(vc, lg);
    if (lg->strip) {
        double f0 = 0, f1 = 0;
        mw_view_focus(vc->view, &f0, &f1);
        strip_update(vc, lg, f0, f1);
    }
    return rc;
}

/* The analysis of the range and the step plot's picture. */
static int plot_update(const mw_view_ctx_t *vc, mw_logical_gl_t *lg)
{
    mw_lview_split(vc->layout, &lg->ranks_r, &lg->plot_r, &lg->head_y);
    const mw_rect_t *r = &lg->plot_r;
    double f0 = 0, f1 = 0;
    mw_view_focus(vc->view, &f0, &f1);
    /* A new analysis waits until three times its last cost has passed (interactive only):
     * dragging the range over a large job keeps the frames coming, and the view catches up
     * with the range it settles on (app.c draws again while one is pending). */
    uint64_t now = mw__now_ns();
    if (lg->throttle && lg->key.valid && now < lg->next_ns) {
        lg->pending = 1;
    } else {
        lg->pending = 0;
        if (mw_lview_update(lg->lv, vc->model, f0, f1)) {
            uint64_t done = mw__now_ns();
            lg->next_ns = done + 3 * (done - now);
        }
    }
    if (r->w <= 0 || r->h <= 0)
        return 0;
    int64_t sr;
    uint64_t s0, s1;
    picked(vc, &sr, &s0, &s1);
    uint64_t analyses = mw_lview_info(lg->lv)->analyses;
    if (lg->key.valid && lg->key.w == r->w && lg->key.h == r->h &&
        lg->key.metric == (int)lg->metric && lg->key.sel_rank == sr && lg->key.sel0 == s0 &&
        lg->key.sel1 == s1 && lg->key.analyses == analyses)
        return 0;
    mw_density_gl_t *d = &lg->g;
    if (mw__density_room(d, r->w, r->h) < 0)
        return -1;
    if (!lg->msgs) {
        lg->msgs = calloc(LV_MSGS_MAX, sizeof *lg->msgs);
        lg->colls = calloc(LV_COLLS_MAX, sizeof *lg->colls);
        if (!lg->msgs || !lg->colls)
            return -1;
        lg->msgs_cap = LV_MSGS_MAX;
        lg->colls_cap = LV_COLLS_MAX;
    }
    int rc = mw_lview_bin(lg->lv, lg->metric, r->w, r->h, d->D, d->C, lg->msgs, lg->msgs_cap,
                          lg->colls, lg->colls_cap, sr, s0, s1, &lg->pic);
    d->dmax = rc == 0 ? 1.0f : 0.0f;
    if (mw__density_upload(d, r->w, r->h, "logical view upload") < 0)
        return -1;
    lg->key.w = r->w;
    lg->key.h = r->h;
    lg->key.metric = (int)lg->metric;
    lg->key.sel_rank = sr;
    lg->key.sel0 = s0;
    lg->key.sel1 = s1;
    lg->key.analyses = analyses;
    lg->key.valid = 1;
    return 0;
}

/* "12.3 ms" */
static void fmt_ns(int64_t ns, char *buf, size_t len)
{
    mw_format_duration((double)(ns > 0 ? ns : 0), buf, len);
}

/* Rank labels on the left, as the per-rank timeline's. */
static void rank_axis(const mw_view_ctx_t *vc, const mw_rect_t *r, uint32_t ranks)
{
    mw_text_t *t = vc->text;
    int fs = mw__font_small(vc->layout);
    int lh = mw__text_line_height(t, fs);
    mw_rgba_t label = mw__hex(MW_COLOR_DIM, 1), axis = mw__hex(MW_COLOR_AXIS, 1);
    float lw = mw__px(vc->layout, 1), tick = mw__px(vc->layout, 4);
    if (!ranks)
        return;
    int want = r->h / (2 * lh) > 1 ? r->h / (2 * lh) : 1;
    uint32_t step = ranks / (uint32_t)want + 1;
    for (uint32_t k = 0; k < ranks; k += step) {
        double y0, y1;
        mw_ranks_rows(ranks, r->h, k, &y0, &y1);
        float y = (float)(r->y + (y0 + y1) / 2);
        char buf[16];
        snprintf(buf, sizeof buf, "%u", (unsigned)k);
        mw__batch_rect(vc->batch, (float)r->x - lw - tick, y - lw / 2, tick, lw, axis);
        mw__text_draw(t, fs, (float)r->x - lw - tick - mw__px(vc->layout, 3), y - (float)lh / 2,
                      MW_ALIGN_RIGHT, label, buf);
    }
}

/* Step numbers under the plot: a tick every 1, 2 or 5 x 10^k steps, labels that fit. */
static void step_axis(const mw_view_ctx_t *vc, const mw_rect_t *r, const mw_lview_pic_t *pic)
{
    mw_text_t *t = vc->text;
    int fs = mw__font_small(vc->layout);
    mw_rgba_t label = mw__hex(MW_COLOR_DIM, 1), axis = mw__hex(MW_COLOR_AXIS, 1);
    float lw = mw__px(vc->layout, 1), tick = mw__px(vc->layout, 4);
    float bottom = (float)(r->y + r->h);
    if (!pic->steps)
        return;
    char wide[32];
    snprintf(wide, sizeof wide, "%" PRIu64, pic->steps);
    double room = mw__text_width(t, fs, wide) + mw__px(vc->layout, 24);
    double want = (double)pic->steps * room / (r->w > 0 ? r->w : 1);
    uint64_t every = 1;
    for (uint64_t mag = 1; every < want; mag *= 10) {
        if ((double)mag >= want) {
            every = mag;
            break;
        }
        if ((double)(2 * mag) >= want) {
            every = 2 * mag;
            break;
        }
        if ((double)(5 * mag) >= want) {
            every = 5 * mag;
            break;
        }
        every = 10 * mag;
    }
    for (uint64_t s = 0; s < pic->steps; s += every) {
        float x0, y0, x1, y1;
        mw_lview_cell(pic, s, 0, &x0, &y0, &x1, &y1);
        float x = (float)r->x + (x0 + x1) / 2;
        mw__batch_rect(vc->batch, x - lw / 2, bottom + lw, lw, tick, axis);
        char buf[32];
        snprintf(buf, sizeof buf, "%" PRIu64, s);
        mw__text_draw(t, fs, x, bottom + lw + tick + mw__px(vc->layout, 1), MW_ALIGN_CENTER, label,
                      buf);
    }
}

/* The header between the plots: what is shown and the colour scale, then the marker's line. */
static void header(const mw_view_ctx_t *vc, mw_logical_gl_t *lg)
{
    mw_text_t *t = vc->text;
    mw_batch_t *b = vc->batch;
    const mw_rect_t *r = &lg->plot_r;
    const mw_lview_info_t *in = mw_lview_info(lg->lv);
    const mw_lview_pic_t *pic = &lg->pic;
    int fs = mw__font_small(vc->layout);
    float lh = (float)mw__text_line_height(t, fs), pad = mw__px(vc->layout, 6);
    float y = (float)lg->head_y + mw__px(vc->layout, 2);
    float left = (float)r->x, right = (float)(r->x + r->w);
    mw_rgba_t txt = mw__hex(MW_COLOR_TEXT, 1), dim = mw__hex(MW_COLOR_DIM, 1);
    const char *what = lg->metric == MW_LVIEW_DIFF ? "differential lateness" : "lateness";

    /* The scale, right-aligned: "0 [ramp] 12.3 ms". */
    char mx[32];
    fmt_ns(pic->scale_max_ns, mx, sizeof mx);
    float bar_w = mw__px(vc->layout, 120), bar_h = lh * 0.6f;
    float mxw = mw__text_width(t, fs, mx);
    float bx1 = right - mxw - pad, bx0 = bx1 - bar_w;
    float zw = mw__text_width(t, fs, "0");
    mw__text_draw(t, fs, right, y, MW_ALIGN_RIGHT, txt, mx);
    for (int i = 0; i < 48; i++) {
        mw_rgb_t c = mw_lview_color((float)i / 47.0f);
        mw__batch_rect(b, bx0 + bar_w * (float)i / 48, y + (lh - bar_h) / 2, bar_w / 48 + 0.5f,
                       bar_h, mw__rgba(c.r, c.g, c.b, 1));
    }
    mw__text_draw(t, fs, bx0 - pad / 2, y, MW_ALIGN_RIGHT, txt, "0");
    float scale_left = bx0 - pad / 2 - zw - pad;

    char buf[256];
    snprintf(buf, sizeof buf, "logical steps · %s (d: %s)", what,
             lg->metric == MW_LVIEW_DIFF ? "lateness" : "differential");
    char fit[256];
    float title_used = mw__text_fit(t, fs, buf, scale_left - left, fit, sizeof fit);
    mw__text_draw(t, fs, left, y, MW_ALIGN_LEFT, txt, fit);
    float y1 = y;

    /* Second line: the marker (left), the aggregation and counts (right). */
    y += lh + mw__px(vc->layout, 2);
    char agg[200];
    int n =
        snprintf(agg, sizeof agg, "%" PRIu64 " steps · %u ranks", pic->steps, (unsigned)pic->ranks);
    if (pic->ranks_per_row > 1 && n > 0 && (size_t)n < sizeof agg)
        n += snprintf(agg + n, sizeof agg - (size_t)n, " · ranks per row: %.0f, max shown",
                      ceil(pic->ranks_per_row));
    if (pic->steps_per_col > 1 && n > 0 && (size_t)n < sizeof agg)
        n += snprintf(agg + n, sizeof agg - (size_t)n, " · steps per column: %.0f, max shown",
                      ceil(pic->steps_per_col));
    if (n > 0 && (size_t)n < sizeof agg)
        snprintf(agg + n, sizeof agg - (size_t)n, " · %" PRIu64 " messages%s", pic->msgs,
                 in->dropped || in->windows_skipped ? " · events over the cap not shown" : "");
    float aw = mw__text_width(t, fs, agg);
    if (pic->mark >= 0) {
        size_t ne = 0;
        const mw_logical_event_t *ev = mw_lview_events(lg->lv, &ne);
        const mw_logical_event_t *e = &ev[pic->mark];
        char d[32];
        fmt_ns(e->diff_ns, d, sizeof d);
        snprintf(buf, sizeof buf,
                 "largest differential lateness %s: rank %u, step %" PRIu64 " (%s, %s)", d,
                 (unsigned)e->rank, e->step, mw_fn_name(e->fn), mw_logical_class_name(e->cls));
    } else {
        snprintf(buf, sizeof buf, "%s", in->events ? "no differential lateness in view" : "");
    }
    /* The marker first (it names where the delay starts), the aggregation in what is left,
     * shortened if need be. */
    float used = mw__text_fit(t, fs, buf, right - left, fit, sizeof fit);
    mw__text_draw(t, fs, left, y, MW_ALIGN_LEFT, pic->mark >= 0 ? mw__hex(LV_COLOR_MARK, 1) : dim,
                  fit);
    /* The aggregation: right of the marker, else right of the title (left of the scale). */
    float rest2 = right - (left + used + 2 * pad);
    float rest1 = scale_left - (left + title_used + 2 * pad);
    int line1 = rest2 < aw && (rest1 >= aw || rest1 > rest2);
    float rest = line1 ? rest1 : rest2;
    if (rest >= aw) {
        mw__text_draw(t, fs, line1 ? scale_left : right, line1 ? y1 : y, MW_ALIGN_RIGHT, dim, agg);
    } else {
        /* No room in the header (small windows): in the plot's corner, on a backing box, as
         * the per-rank timeline says its own. */
        float w = mw__text_fit(t, fs, agg, right - left - 2 * pad, fit, sizeof fit);
        float cy = (float)(r->y + r->h) - lh - pad / 2;
        mw__batch_rect(vc->batch, right - w - 2 * pad, cy, w + pad * 1.5f, lh,
                       mw__hex(MW_COLOR_BG, 0.8f));
        mw__text_draw(t, fs, right - pad, cy, MW_ALIGN_RIGHT, txt, fit);
    }
}

static void rank_axis(const mw_view_ctx_t *vc, const mw_rect_t *r, uint32_t ranks);

/* The strip: lateness (or differential lateness) over time per rank, on the step plot's scale,
 * with the picked rank framed and the time and rank axes. */
static void strip_draw(const mw_view_ctx_t *vc, mw_logical_gl_t *lg)
{
    const mw_rect_t *r = &lg->ranks_r;
    mw_batch_t *b = vc->batch;
    mw_text_t *t = vc->text;
    double f0 = 0, f1 = 0;
    mw_view_focus(vc->view, &f0, &f1);
    mw__batch_rect(b, (float)r->x, (float)r->y, (float)r->w, (float)r->h,
                   mw__hex(MW_COLOR_PLOT, 1));
    mw__batch_flush(b);
    if (lg->skey.valid && lg->g2.dmax > 0)
        mw__density_draw_tex(vc, &lg->g2, r, 0, 0.0f, 1.0f);
    float lw = mw__px(vc->layout, 1);
    uint32_t ranks = mw_lview_info(lg->lv)->ranks;
    if (vc->view->highlight_rank >= 0 && (uint64_t)vc->view->highlight_rank < ranks) {
        double y0, y1;
        mw_ranks_rows(ranks, r->h, (uint32_t)vc->view->highlight_rank, &y0, &y1);
        mw__batch_frame(b, (float)r->x - lw, (float)(r->y + y0) - lw, (float)r->w + 2 * lw,
                        (float)(y1 - y0) + 2 * lw, lw, mw__hex(LV_COLOR_SEL, 1));
    }
    mw__trace_marks_draw(vc, r, f0, f1);
    mw__time_axis(vc, r, f0, f1);
    rank_axis(vc, r, ranks);
    mw_rgba_t axis = mw__hex(MW_COLOR_AXIS, 1);
    mw__batch_rect(b, (float)r->x - lw, (float)r->y, lw, (float)r->h + lw, axis);
    mw__batch_rect(b, (float)r->x - lw, (float)(r->y + r->h), (float)r->w + lw, lw, axis);
    int fs = mw__font_small(vc->layout);
    float pad = mw__px(vc->layout, 6), lh = (float)mw__text_line_height(t, fs);
    const char *what = lg->metric == MW_LVIEW_DIFF ? "differential lateness" : "lateness";
    char buf[128];
    snprintf(buf, sizeof buf, "%s over time per rank (o: MPI calls)", what);
    float w = mw__text_width(t, fs, buf), cy = (float)(r->y + r->h) - lh - pad / 2;
    float right = (float)(r->x + r->w);
    mw__batch_rect(b, right - w - 2 * pad, cy, w + pad * 1.5f, lh, mw__hex(MW_COLOR_BG, 0.75f));
    mw__text_draw(t, fs, right - pad, cy, MW_ALIGN_RIGHT, mw__hex(MW_COLOR_TEXT, 1), buf);
    mw__batch_flush(b);
    mw__text_flush(t);
}

void mw__logical_draw(const mw_view_ctx_t *vc, mw_logical_gl_t *lg, mw_ranks_gl_t *rk)
{
    mw__logical_update(vc, lg);
    /* The per-rank timeline of the same range above, or lateness over time per rank. */
    if (lg->ranks_r.h > 0 && !lg->strip) {
        mw_layout_t l2 = *vc->layout;
        l2.density = lg->ranks_r;
        mw_view_ctx_t v2 = *vc;
        v2.layout = &l2;
        mw__ranks_draw(&v2, rk);
    } else if (lg->ranks_r.h > 0) {
        strip_draw(vc, lg);
    }
    const mw_rect_t *r = &lg->plot_r;
    if (r->w <= 0 || r->h <= 0)
        return;
    mw_batch_t *b = vc->batch;
    mw_density_gl_t *d = &lg->g;
    const mw_lview_pic_t *pic = &lg->pic;
    mw__batch_rect(b, (float)r->x, (float)r->y, (float)r->w, (float)r->h,
                   mw__hex(MW_COLOR_PLOT, 1));
    mw__batch_flush(b);
    if (lg->key.valid && d->dmax > 0)
        mw__density_draw_tex(vc, d, r, 0, 0.0f, 1.0f);
    float left = (float)r->x, top = (float)r->y, lw = mw__px(vc->layout, 1);
    if (d->dmax > 0) {
        /* Collective instances under the messages: a violet line across their ranks. */
        mw_rgba_t cc = mw__hex(LV_COLOR_COLL, 0.9f);
        for (size_t i = 0; i < pic->colls_out; i++) {
            const mw_lview_coll_t *c = &lg->colls[i];
            mw__batch_line(b, left + c->x, top + c->y0, left + c->x, top + c->y1,
                           mw__px(vc->layout, 2), cc);
        }
        /* Messages: light lines from the send's cell to the receive's, a dot at the end while
         * steps are wide enough to tell the dots apart. More lines than half the plot's
         * columns would hide the cells: they fade with their number. */
        float ma = 0.7f, half = (float)r->w / 2;
        if ((float)pic->msgs_out > half)
            ma = fmaxf(0.12f, 0.7f * half / (float)pic->msgs_out);
        mw_rgba_t mc = mw__hex(LV_COLOR_MSG, ma);
        int dots = pic->col_w >= 6 * (double)mw__px(vc->layout, 1);
        for (size_t i = 0; i < pic->msgs_out; i++) {
            const mw_lview_msg_t *m = &lg->msgs[i];
            mw__batch_line(b, left + m->x0, top + m->y0, left + m->x1, top + m->y1, lw, mc);
            if (dots)
                mw__batch_disc(b, left + m->x1, top + m->y1, mw__px(vc->layout, 1.5f), mc);
        }
    }
    /* The picked rank's rows and the picked event. */
    mw_rgba_t yel = mw__hex(LV_COLOR_SEL, 1);
    if (vc->view->highlight_rank >= 0 && (uint64_t)vc->view->highlight_rank < pic->ranks) {
        double y0, y1;
        mw_ranks_rows(pic->ranks, r->h, (uint32_t)vc->view->highlight_rank, &y0, &y1);
        mw__batch_frame(b, left - lw, top + (float)y0 - lw, (float)r->w + 2 * lw,
                        (float)(y1 - y0) + 2 * lw, lw, yel);
    }
    if (pic->sel >= 0) {
        float cx = (pic->sel_x0 + pic->sel_x1) / 2, cy = (pic->sel_y0 + pic->sel_y1) / 2;
        float hw = fmaxf((pic->sel_x1 - pic->sel_x0) / 2, 4),
              hh = fmaxf((pic->sel_y1 - pic->sel_y0) / 2, 4);
        mw__batch_frame(b, left + cx - hw - 2 * lw, top + cy - hh - 2 * lw, 2 * hw + 4 * lw,
                        2 * hh + 4 * lw, mw__px(vc->layout, 2), yel);
    }
    /* The largest differential lateness: a white frame at least 10 px wide, and a notch on
     * each axis at its rank and step. */
    if (pic->mark >= 0) {
        mw_rgba_t wc = mw__hex(LV_COLOR_MARK, 1);
        float cx = (pic->mark_x0 + pic->mark_x1) / 2, cy = (pic->mark_y0 + pic->mark_y1) / 2;
        float hw = fmaxf((pic->mark_x1 - pic->mark_x0) / 2 + 2 * lw, 5 * lw);
        float hh = fmaxf((pic->mark_y1 - pic->mark_y0) / 2 + 2 * lw, 5 * lw);
        mw__batch_frame(b, left + cx - hw, top + cy - hh, 2 * hw, 2 * hh, mw__px(vc->layout, 2),
                        wc);
        float n = mw__px(vc->layout, 5);
        mw__batch_tri(b, left + cx - n, top - n - lw, left + cx + n, top - n - lw, left + cx,
                      top - lw, wc);
        float rx = (float)(r->x + r->w) + lw;
        mw__batch_tri(b, rx + n, top + cy - n, rx + n, top + cy + n, rx, top + cy, wc);
    }
    mw__batch_rect(b, left - lw, top, lw, (float)r->h + lw, mw__hex(MW_COLOR_AXIS, 1));
    mw__batch_rect(b, left - lw, top + (float)r->h, (float)r->w + lw, lw,
                   mw__hex(MW_COLOR_AXIS, 1));
    rank_axis(vc, r, pic->ranks);
    step_axis(vc, r, pic);
    header(vc, lg);
    if (!(d->dmax > 0)) {
        const mw_lview_info_t *in = mw_lview_info(lg->lv);
        mw__text_draw(vc->text, vc->layout->font_px, left + (float)r->w / 2,
                      top + (float)r->h / 2 - (float)vc->layout->font_px, MW_ALIGN_CENTER,
                      mw__hex(MW_COLOR_DIM, 1),
                      !mw_model_job(vc->model) ? "waiting for the job…"
                      : in->failed             ? "the analysis failed (see the counters)"
                      : in->traced_windows     ? "no communication in the traced windows"
                                               : "no traced windows in the selected range");
    }
    mw__batch_flush(b);
    mw__text_flush(vc->text);
}

mw_pick_t mw__logical_strip_pick(const mw_view_ctx_t *vc, mw_logical_gl_t *lg, int x, int y)
{
    double f0 = 0, f1 = 0;
    uint64_t g0, g1;
    mw_view_focus(vc->view, &f0, &f1);
    range_ns(vc->model, f0, f1, &g0, &g1);
    return mw_lview_strip_pick(lg->lv, vc->model, lg->metric, g0, g1, lg->ranks_r.w, lg->ranks_r.h,
                               x - lg->ranks_r.x, y - lg->ranks_r.y);
}

mw_pick_t mw__logical_pick(const mw_view_ctx_t *vc, mw_logical_gl_t *lg, int x, int y)
{
    return mw_lview_pick(lg->lv, vc->model, &lg->pic, x - lg->plot_r.x, y - lg->plot_r.y);
}
