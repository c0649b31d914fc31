/* view_timeline.c: the rolling timeline, a stacked area graph of what the ranks are doing.
 *
 * DESIGN: the model gives, per pixel column of the plot, the cumulative tops of the layers
 * (one per palette slot, then grey) as fractions of the ranks (mw_timeline_columns); each
 * column becomes a vertical run of quads, so the graph is exact to the pixel at any zoom and
 * costs one buffer upload per frame (W columns x 11 layers x 2 triangles). The empty space
 * above the stack is the fraction of ranks computing, the job's efficiency: it is labelled in
 * place and its mean over the visible range is printed in the corner. Columns whose windows
 * are not cached (still being fetched, or evicted) are drawn as a hatched gap rather than as
 * zero, which would read as "perfect efficiency". The selected range (what the call view
 * shows) is a translucent box with its edges; the default range (the last tenth of the view)
 * is shown the same way, fainter, so it is always clear what the call view covers. Rule
 * firings and steering messages are marked on top (view_events.c).
 *
 * Region mode ('r', --timeline regions; docs/viewer.md "Code regions"): the same columns from
 * mw_region_columns (model_regions.h), one layer per code region: its exclusive time in the
 * windows under the column over their rank-time. Regions count in the window where they end, so
 * a column can sum above 1: it is clamped, and a note says how many columns were.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views.h"

#define LAYERS (MW_PALETTE + 1)
#define STRIDE (MW_PALETTE + 2)

int mw__timeline_init(mw_timeline_gl_t *tl)
{
    memset(tl, 0, sizeof *tl);
    tl->mean_efficiency = -1;
    return 0;
}

void mw__timeline_free(mw_timeline_gl_t *tl)
{
    free(tl->cols);
    memset(tl, 0, sizeof *tl);
}

/* Fills tl's columns for the current view and layout (they stay for --meta). */
static int timeline_columns(const mw_view_ctx_t *vc, mw_timeline_gl_t *tl)
{
    int n = vc->layout->timeline.w;
    tl->ncols = 0;
    tl->mean_efficiency = -1;
    if (n <= 0)
        return 0;
    if (n > tl->ncols_cap) {
        float *c = realloc(tl->cols, (size_t)n * STRIDE * sizeof(float));
        if (!c) {
            fprintf(stderr, "mpiwatch-viewer: out of memory for the timeline\n");
            return -1;
        }
        tl->cols = c;
        tl->ncols_cap = n;
    }
    memset(tl->cols, 0, (size_t)n * STRIDE * sizeof(float));
    tl->regions = vc->rg && vc->rg->timeline;
    tl->clamped = 0;
    int with_data =
        tl->regions
            ? mw_region_columns(vc->model, vc->view->t0, vc->view->t1, n, tl->cols, &tl->clamped)
            : mw_timeline_columns(vc->model, vc->view->t0, vc->view->t1, n, tl->cols);
    tl->ncols = n;
    if (with_data > 0) {
        double sum = 0;
        int k = 0;
        for (int i = 0; i < n; i++) {
            const float *c = tl->cols + (size_t)i * STRIDE;
            if (c[MW_PALETTE + 1] > 0.5f) {
                float top = c[MW_PALETTE];
                sum += 1.0 - (top > 1 ? 1 : top < 0 ? 0 : top);
                k++;
            }
        }
        if (k)
            tl->mean_efficiency = sum / k;
    }
    return 0;
}

/* The color of each layer, and which layer is highlighted (-1 none). */
static int layer_colors(const mw_view_ctx_t *vc, mw_rgba_t *out)
{
    if (vc->rg && vc->rg->timeline) {
        /* Region k + 1 in slot k (model_regions.h), grey for the rest. */
        for (int k = 0; k < LAYERS; k++) {
            mw_rgb_t c = mw_region_color(k < MW_PALETTE ? (uint32_t)k + 1 : 0);
            out[k] = mw__rgba(c.r, c.g, c.b, 1);
        }
        int hl = vc->rg->highlight ? mw_region_layer(vc->rg->highlight) : -1;
        mw_rgba_t bg = mw__hex(MW_COLOR_PLOT, 1);
        for (int k = 0; hl >= 0 && k < LAYERS; k++) {
            if (k == hl)
                continue;
            out[k].r = bg.r + (out[k].r - bg.r) * 0.25f;
            out[k].g = bg.g + (out[k].g - bg.g) * 0.25f;
            out[k].b = bg.b + (out[k].b - bg.b) * 0.25f;
        }
        return hl;
    }
    mw_legend_entry_t leg[MW_LEGEND_MAX];
    int n = mw_model_legend(vc->model, leg, MW_LEGEND_MAX);
    for (int k = 0; k < LAYERS; k++)
        out[k] = mw__hex(0x6e737d, 1);
    for (int i = 0; i < n; i++) {
        int slot = leg[i].fn ? mw_model_slot(vc->model, leg[i].fn) : MW_PALETTE;
        if (slot >= 0 && slot < LAYERS)
            out[slot] = mw__rgba(leg[i].color.r, leg[i].color.g, leg[i].color.b, 1);
    }
    int hl = -1;
    if (vc->view->highlight_fn) {
        hl = mw_model_slot(vc->model, vc->view->highlight_fn);
        mw_rgba_t bg = mw__hex(MW_COLOR_PLOT, 1);
        for (int k = 0; k < LAYERS; k++) {
            if (k == hl)
                continue;
            /* Dimmed toward the background: still readable as context. */
            out[k].r = bg.r + (out[k].r - bg.r) * 0.25f;
            out[k].g = bg.g + (out[k].g - bg.g) * 0.25f;
            out[k].b = bg.b + (out[k].b - bg.b) * 0.25f;
        }
    }
    return hl;
}

/* Diagonal hatching of a gap [x0, x1) over the plot's height: 45-degree segments clipped to
 * the gap analytically, so no scissor (and no extra flush) is needed. */
static void hatch(const mw_view_ctx_t *vc, const mw_rect_t *r, float x0, float x1)
{
    mw_batch_t *b = vc->batch;
    mw__batch_rect(b, x0, (float)r->y, x1 - x0, (float)r->h, mw__hex(0x22252d, 1));
    float step = mw__px(vc->layout, 9), lw = mw__px(vc->layout, 1);
    float top = (float)r->y, h = (float)r->h, bottom = top + h;
    mw_rgba_t c = mw__hex(0x363b45, 1);
    /* The segment starting at (c0, bottom) rises to the right: x = c0 + s, y = bottom - s. */
    float first = floorf((x0 - h) / step) * step;
    for (float c0 = first; c0 < x1; c0 += step) {
        float s0 = x0 - c0 > 0 ? x0 - c0 : 0;
        float s1 = x1 - c0 < h ? x1 - c0 : h;
        if (s1 <= s0)
            continue;
        mw__batch_line(b, c0 + s0, bottom - s0, c0 + s1, bottom - s1, lw, c);
    }
    /* Say what the hatching means where there is room for it. */
    int fs = mw__font_small(vc->layout);
    const char *msg = mw_model_busy(vc->model) ? "loading…" : "not loaded";
    float tw = mw__text_width(vc->text, fs, msg), pad = mw__px(vc->layout, 4);
    if (x1 - x0 > tw + 6 * pad) {
        float lh = (float)mw__text_line_height(vc->text, fs);
        float cx = (x0 + x1) / 2, cy = top + h / 2 - lh / 2;
        mw__batch_rect(b, cx - tw / 2 - pad, cy, tw + 2 * pad, lh, mw__hex(MW_COLOR_BG, 0.9f));
        mw__text_draw(vc->text, fs, cx, cy, MW_ALIGN_CENTER, mw__hex(MW_COLOR_DIM, 1), msg);
    }
}

/* Where the empty space above the stack is tallest over a stretch `need` pixels wide: that
 * is where the word "efficiency" fits best. Returns the column, or -1. */
static int efficiency_spot(const mw_timeline_gl_t *tl, int need, float *empty_frac)
{
    int best = -1;
    float best_empty = 0;
    if (need < 1 || need > tl->ncols)
        return -1;
    int stride = need / 4 > 1 ? need / 4 : 1;
    for (int x = 0; x + need <= tl->ncols; x += stride) {
        float minimum = 1;
        for (int i = x; i < x + need; i++) {
            const float *c = tl->cols + (size_t)i * STRIDE;
            float e = c[MW_PALETTE + 1] > 0.5f ? 1 - c[MW_PALETTE] : 0;
            if (e < minimum)
                minimum = e;
        }
        if (minimum > best_empty) {
            best_empty = minimum;
            best = x;
        }
    }
    *empty_frac = best_empty;
    return best;
}

static void draw_columns(const mw_view_ctx_t *vc, const mw_timeline_gl_t *tl, const mw_rect_t *r)
{
    mw_batch_t *b = vc->batch;
    mw_rgba_t color[LAYERS];
    layer_colors(vc, color);
    float y_bottom = (float)(r->y + r->h), h = (float)r->h;
    /* Only a gap inside the run is missing data; before its first window or after its newest
     * there is nothing to show, and the plot stays empty there. */
    double run0 = 0, run1 = -1;
    const Mpiwatch__JobInfo *job = mw_model_job(vc->model);
    uint64_t oldest = 0, newest = 0;
    if (job && job->window_ns && mw_model_extent(vc->model, &oldest, &newest) == 0) {
        run0 = mw_model_seconds(vc->model, mw_model_window_start(vc->model, oldest));
        run1 = mw_model_seconds(vc->model, mw_model_window_start(vc->model, newest + 1));
    }
    const mw_view_t *v = vc->view;
    double dt = tl->ncols > 0 ? (v->t1 - v->t0) / tl->ncols : 0;
    int gap_start = -1;
    for (int i = 0; i <= tl->ncols; i++) {
        const float *c = i < tl->ncols ? tl->cols + (size_t)i * STRIDE : NULL;
        int has = c && c[MW_PALETTE + 1] > 0.5f;
        double tc = v->t0 + (i + 0.5) * dt;
        int in_run = tc >= run0 && tc <= run1;
        if (c && !has && in_run) {
            if (gap_start < 0)
                gap_start = i;
            continue;
        }
        if (gap_start >= 0) {
            hatch(vc, r, (float)(r->x + gap_start), (float)(r->x + i));
            gap_start = -1;
        }
        if (!c)
            break;
        if (!has)
            continue;
        float x = (float)(r->x + i), prev = 0;
        for (int k = 0; k < LAYERS; k++) {
            float top = c[k];
            if (top > 1)
                top = 1;
            if (top > prev + 1e-5f) {
                float ya = y_bottom - top * h, yb = y_bottom - prev * h;
                mw__batch_rect(b, x, ya, 1.0f, yb - ya, color[k]);
                prev = top;
            }
        }
    }
}

static void draw_selection(const mw_view_ctx_t *vc, const mw_rect_t *r)
{
    const mw_view_t *v = vc->view;
    double f0 = 0, f1 = 0;
    mw_view_focus(v, &f0, &f1);
    int selected = v->sel1 > v->sel0;
    double x0 = mw_x_of_time(r, v->t0, v->t1, f0), x1 = mw_x_of_time(r, v->t0, v->t1, f1);
    if (x1 < r->x || x0 > r->x + r->w)
        return;
    if (x0 < r->x)
        x0 = r->x;
    if (x1 > r->x + r->w)
        x1 = r->x + r->w;
    if (x1 - x0 < 1)
        x1 = x0 + 1;
    float lw = mw__px(vc->layout, selected ? 1.5f : 1.0f);
    mw_rgba_t fill = mw__rgba(1, 1, 1, selected ? 0.13f : 0.06f);
    mw_rgba_t edge = mw__rgba(1, 1, 1, selected ? 0.85f : 0.4f);
    mw__batch_rect(vc->batch, (float)x0, (float)r->y, (float)(x1 - x0), (float)r->h, fill);
    mw__batch_rect(vc->batch, (float)x0, (float)r->y, lw, (float)r->h, edge);
    mw__batch_rect(vc->batch, (float)x1 - lw, (float)r->y, lw, (float)r->h, edge);
    /* Small handles on top make the box's edges easy to see over a busy stack. */
    float hw = mw__px(vc->layout, 5);
    mw__batch_rect(vc->batch, (float)x0, (float)r->y, hw, mw__px(vc->layout, 3), edge);
    mw__batch_rect(vc->batch, (float)x1 - hw, (float)r->y, hw, mw__px(vc->layout, 3), edge);
}

void mw__time_axis(const mw_view_ctx_t *vc, const mw_rect_t *r, double t0, double t1)
{
    mw_batch_t *b = vc->batch;
    mw_text_t *t = vc->text;
    int fs = mw__font_small(vc->layout);
    mw_rgba_t axis = mw__hex(MW_COLOR_AXIS, 1), label = mw__hex(MW_COLOR_DIM, 1);
    float lw = mw__px(vc->layout, 1), tick = mw__px(vc->layout, 4);
    float bottom = (float)(r->y + r->h);
    mw_tick_t ticks[48];
    int n = mw_time_ticks(t0, t1, r, ticks, 48);
    float last_right = -1e9f;
    for (int i = 0; i < n; i++) {
        float x = (float)ticks[i].px;
        if (x < r->x - 0.5f || x > r->x + r->w + 0.5f)
            continue;
        mw__batch_rect(b, x - lw / 2, bottom + lw, lw, tick, axis);
        float w = mw__text_width(t, fs, ticks[i].label);
        /* The last label may not reach into the legend column; labels that would overlap
         * their left neighbour are skipped. */
        float cx = x + w / 2 > (float)(r->x + r->w) + mw__px(vc->layout, 3)
                       ? (float)(r->x + r->w) + mw__px(vc->layout, 3) - w / 2
                       : x;
        if (cx - w / 2 < last_right + mw__px(vc->layout, 6))
            continue;
        mw__text_draw(t, fs, cx, bottom + lw + tick + mw__px(vc->layout, 1), MW_ALIGN_CENTER, label,
                      ticks[i].label);
        last_right = cx + w / 2;
    }
}

static void draw_axes(const mw_view_ctx_t *vc, const mw_rect_t *r)
{
    mw_batch_t *b = vc->batch;
    mw_text_t *t = vc->text;
    int fs = mw__font_small(vc->layout);
    int lh = mw__text_line_height(t, fs);
    mw_rgba_t axis = mw__hex(MW_COLOR_AXIS, 1), label = mw__hex(MW_COLOR_DIM, 1);
    float lw = mw__px(vc->layout, 1), tick = mw__px(vc->layout, 4);
    float bottom = (float)(r->y + r->h);

    /* y: 0..100% of the ranks. */
    mw__batch_rect(b, (float)r->x - lw, (float)r->y, lw, (float)r->h + lw, axis);
    for (int p = 0; p <= 100; p += 25) {
        float y = bottom - (float)r->h * (float)p / 100.0f;
        mw__batch_rect(b, (float)r->x - lw - tick, y - lw / 2, tick, lw, axis);
        mw__text_drawf(t, fs, (float)r->x - lw - tick - mw__px(vc->layout, 3), y - (float)lh / 2,
                       MW_ALIGN_RIGHT, label, "%d%%", p);
    }
    /* x: time. */
    mw__batch_rect(b, (float)r->x - lw, bottom, (float)r->w + lw, lw, axis);
    mw__time_axis(vc, r, vc->view->t0, vc->view->t1);
}

static void draw_grid(const mw_view_ctx_t *vc, const mw_rect_t *r)
{
    mw_rgba_t grid = mw__hex(MW_COLOR_GRID, 1);
    float lw = mw__px(vc->layout, 1);
    for (int p = 25; p < 100; p += 25) {
        float y = (float)(r->y + r->h) - (float)r->h * (float)p / 100.0f;
        mw__batch_rect(vc->batch, (float)r->x, y - lw / 2, (float)r->w, lw, grid);
    }
    mw_tick_t ticks[32];
    int n = mw_time_ticks(vc->view->t0, vc->view->t1, r, ticks, 32);
    for (int i = 0; i < n; i++)
        if (ticks[i].px >= r->x && ticks[i].px <= r->x + r->w)
            mw__batch_rect(vc->batch, (float)ticks[i].px - lw / 2, (float)r->y, lw, (float)r->h,
                           grid);
}

/* A small filled tag with text, e.g. LIVE; returns its width. */
static float tag(const mw_view_ctx_t *vc, float x, float y, int fs, mw_rgba_t bg, mw_rgba_t fg,
                 const char *s)
{
    float pad = mw__px(vc->layout, 5);
    float w = mw__text_width(vc->text, fs, s) + 2 * pad;
    float h = (float)mw__text_line_height(vc->text, fs);
    mw__batch_rect(vc->batch, x, y, w, h, bg);
    mw__text_draw(vc->text, fs, x + pad, y, MW_ALIGN_LEFT, fg, s);
    return w;
}

static void draw_labels(const mw_view_ctx_t *vc, const mw_timeline_gl_t *tl, const mw_rect_t *r)
{
    mw_text_t *t = vc->text;
    int fs = mw__font_small(vc->layout), f = vc->layout->font_px;
    float pad = mw__px(vc->layout, 6);
    int lh = mw__text_line_height(t, fs);

    /* LIVE / PAUSED. */
    int follow = vc->view->follow;
    mw_rgba_t tag_bg = follow ? mw__hex(MW_COLOR_LIVE, 0.9f) : mw__hex(MW_COLOR_PAUSED, 0.9f);
    float tw = tag(vc, (float)r->x + pad, (float)r->y + pad, fs, tag_bg, mw__hex(0x101215, 1),
                   follow ? "LIVE" : "PAUSED");
    /* What the plot is, next to the tag: the layout leaves no margin above the plot. */
    tag(vc, (float)r->x + 2 * pad + tw, (float)r->y + pad, fs, mw__hex(MW_COLOR_BG, 0.8f),
        mw__hex(MW_COLOR_DIM, 1),
        tl->regions ? "share of rank-time in each code region (exclusive, r: MPI functions)"
                    : "fraction of ranks inside each MPI function");
    if (tl->regions && tl->clamped) {
        /* Instances are accounted in the window where they end (docs/regions.md): a row of its
         * own under the tags. */
        char note[160];
        snprintf(note, sizeof note,
                 "%d column%s clamped at 100%%: a region counts in the window where it ends",
                 tl->clamped, tl->clamped == 1 ? "" : "s");
        tag(vc, (float)r->x + 2 * pad + tw, (float)r->y + 1.5f * pad + (float)lh, fs,
            mw__hex(MW_COLOR_BG, 0.8f), mw__hex(MW_COLOR_PAUSED, 1), note);
    }

    /* The mean efficiency of what is on screen, in the corner, on a backing so the stack
     * underneath cannot hide it. */
    if (tl->mean_efficiency >= 0) {
        char buf[64];
        if (tl->regions)
            snprintf(buf, sizeof buf, "mean outside regions %.1f%%", tl->mean_efficiency * 100.0);
        else
            snprintf(buf, sizeof buf, "mean efficiency %.1f%%", tl->mean_efficiency * 100.0);
        float w = mw__text_width(t, fs, buf) + 2 * mw__px(vc->layout, 5);
        tag(vc, (float)(r->x + r->w) - pad - w, (float)r->y + pad, fs, mw__hex(MW_COLOR_BG, 0.8f),
            mw__hex(MW_COLOR_TEXT, 1), buf);
    }

    /* "efficiency" written in the empty space where it is tallest, below the corner tags. */
    const char *word = tl->regions ? "outside code regions" : "efficiency (ranks computing)";
    float ww = mw__text_width(t, f, word);
    if (ww + 2 * pad > (float)r->w * 0.5f) {
        word = "efficiency";
        ww = mw__text_width(t, f, word);
    }
    float empty = 0;
    int need = (int)(ww + 2 * pad);
    int x = efficiency_spot(tl, need, &empty);
    float room = empty * (float)r->h - (float)lh - 2 * pad; /* below the tags row */
    int flh = mw__text_line_height(t, f);
    if (x >= 0 && room > (float)flh * 1.2f) {
        float y = (float)r->y + (float)lh + 2 * pad + (room - (float)flh) / 2;
        mw__text_draw(t, f, (float)(r->x + x + need / 2), y, MW_ALIGN_CENTER,
                      mw__hex(0x9aa3b0, 0.75f), word);
    }
    if (tl->mean_efficiency < 0) {
        const char *msg =
            mw_model_job(vc->model) ? "no data in this range (yet)" : "waiting for the job…";
        mw__text_draw(t, f, (float)r->x + (float)r->w / 2, (float)r->y + (float)r->h / 2 - flh,
                      MW_ALIGN_CENTER, mw__hex(MW_COLOR_DIM, 1), msg);
    }
}

void mw__timeline_draw(const mw_view_ctx_t *vc, mw_timeline_gl_t *tl)
{
    const mw_rect_t *r = &vc->layout->timeline;
    if (r->w <= 0 || r->h <= 0)
        return;
    timeline_columns(vc, tl);
    mw__batch_rect(vc->batch, (float)r->x, (float)r->y, (float)r->w, (float)r->h,
                   mw__hex(MW_COLOR_PLOT, 1));
    draw_grid(vc, r);
    draw_columns(vc, tl, r);
    draw_selection(vc, r);
    draw_axes(vc, r);
    mw__batch_flush(vc->batch);
    draw_labels(vc, tl, r);
    /* Rule firings and steering messages over everything: they explain what follows. */
    mw__event_markers_draw(vc, r, vc->view->t0, vc->view->t1, 1);
    mw__batch_flush(vc->batch);
    mw__text_flush(vc->text);
}
