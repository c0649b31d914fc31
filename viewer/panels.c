/* panels.c: the text regions around the plots: title, legend, details, status bar, help.
 *
 * DESIGN: these are read, not looked at, so they are plain rows of text in the layout's
 * rectangles. The legend's rows are exactly where mw_pick() looks for them (a heading row, then
 * entry i at legend.y + (i + 1) * legend_row_h), so a click lands on the entry it is drawn on. The
 * help overlay lists every key and mouse action from one table, the same actions app.c binds.
 * The events list and the steering prompt are drawn by view_events.c; a steering result of the
 * last few seconds takes the status bar's counters' place.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "views.h"

const char *mw__repr_name(mw_repr_t r)
{
    switch (r) {
    case MW_REPR_START:
        return "points by start";
    case MW_REPR_END:
        return "points by end";
    case MW_REPR_LINES:
        return "lines";
    case MW_REPR_ARCS:
        return "arcs";
    default:
        return "?";
    }
}

const char *mw__transfer_name(mw_transfer_t t)
{
    return t == MW_TRANSFER_LINEAR ? "linear" : "log";
}

void mw__format_bytes(uint64_t bytes, char *buf, size_t len)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%" PRIu64 " B", bytes);
    else
        snprintf(buf, len, "%.*f %s", v < 10 ? 2 : v < 100 ? 1 : 0, v, units[u]);
}

static void draw_title(const mw_view_ctx_t *vc, const mw_panels_state_t *ps)
{
    const mw_rect_t *r = &vc->layout->title;
    if (r->w <= 0 || r->h <= 0)
        return;
    mw_text_t *t = vc->text;
    int f = vc->layout->font_px, fs = mw__font_small(vc->layout);
    float pad = mw__px(vc->layout, 8);
    float y = (float)r->y + ((float)r->h - (float)mw__text_line_height(t, f)) / 2;
    const Mpiwatch__JobInfo *job = mw_model_job(vc->model);
    const mw_source_status_t *st = &ps->src;
    const char *state = st->live ? (st->ended ? "live · job ended" : "live")
                                 : (st->playing ? "replay · playing" : "replay");
    char right[96];
    snprintf(right, sizeof right, "%s  ·  ? for help", state);
    float right_w = mw__text_width(t, fs, right);
    float ys = (float)r->y + ((float)r->h - (float)mw__text_line_height(t, fs)) / 2;
    float x = (float)r->x + pad;
    x += mw__text_draw(t, f, x, y, MW_ALIGN_LEFT, mw__hex(MW_COLOR_ACCENT, 1), "mpiwatch");
    x += mw__px(vc->layout, 10);
    /* The job line gives way to the right-hand note, and is cut when even that is not
     * enough. */
    float room = (float)(r->x + r->w) - pad - right_w - mw__px(vc->layout, 16) - x;
    int show_right = room > (float)r->w * 0.3f;
    if (!show_right)
        room = (float)(r->x + r->w) - pad - x;
    char buf[512], fit[512];
    if (job) {
        char win[96];
        mw_format_duration((double)job->window_ns, win, sizeof win);
        /* A job whose window length changed (mpiwatch.window): every length in order. */
        for (size_t i = 1; i < job->n_grid && job->grid[i]; i++) {
            char more[32];
            size_t at = strlen(win);
            mw_format_duration((double)job->grid[i]->window_ns, more, sizeof more);
            if (at + strlen(more) + 8 >= sizeof win)
                break;
            snprintf(win + at, sizeof win - at, " → %s", more);
        }
        /* The collector keeps "" as host 0 for ranks whose host is not known yet. */
        size_t hosts = 0;
        for (size_t i = 0; i < job->n_hosts; i++)
            hosts += job->hosts[i] && job->hosts[i][0];
        snprintf(buf, sizeof buf, "%s  —  %s, %u ranks on %zu host%s, windows of %s",
                 job->job && job->job[0] ? job->job : "job",
                 job->program && job->program[0] ? job->program : "?", job->size, hosts,
                 hosts == 1 ? "" : "s", win);
    } else {
        snprintf(buf, sizeof buf, "waiting for the job description…");
    }
    mw__text_fit(t, f, buf, room, fit, sizeof fit);
    mw__text_draw(t, f, x, y, MW_ALIGN_LEFT, mw__hex(MW_COLOR_TEXT, 1), fit);
    if (show_right)
        mw__text_draw(t, fs, (float)(r->x + r->w) - pad, ys, MW_ALIGN_RIGHT,
                      mw__hex(MW_COLOR_DIM, 1), right);
}

/* The legend of code regions (the timeline in region mode): rows where mw_region_legend_pick()
 * looks for them, the highlighted region framed. */
static void draw_region_legend(const mw_view_ctx_t *vc)
{
    const mw_layout_t *l = vc->layout;
    const mw_rect_t *r = &l->legend;
    mw_text_t *t = vc->text;
    int f = l->font_px, fs = mw__font_small(l);
    float pad = mw__px(l, 6);
    mw_region_entry_t e[MW_LEGEND_MAX];
    int n = mw_region_legend(vc->model, vc->view->t0, vc->view->t1, e,
                             l->legend_rows < MW_LEGEND_MAX ? l->legend_rows : MW_LEGEND_MAX);
    int rh = l->legend_row_h > 0 ? l->legend_row_h : mw__text_line_height(t, f);
    float hy = (float)r->y + ((float)rh - (float)mw__text_line_height(t, fs)) / 2;
    mw__text_draw(t, fs, (float)r->x + pad, hy, MW_ALIGN_LEFT, mw__hex(MW_COLOR_DIM, 1),
                  "code region (r)");
    mw__text_draw(t, fs, (float)(r->x + r->w) - pad, hy, MW_ALIGN_RIGHT, mw__hex(MW_COLOR_DIM, 1),
                  "% excl. time");
    if (n <= 0) {
        mw__text_draw(t, fs, (float)r->x + pad, (float)(r->y + rh) + pad, MW_ALIGN_LEFT,
                      mw__hex(MW_COLOR_DIM, 1), "no regions in view");
        return;
    }
    int lh = mw__text_line_height(t, f);
    uint32_t hl = vc->rg ? vc->rg->highlight : 0;
    for (int i = 0; i < n; i++) {
        float y = (float)(r->y + (i + 1) * rh);
        if (y + (float)rh > (float)(r->y + r->h) + 0.5f)
            break;
        int dimmed = hl && e[i].id != hl;
        if (hl && e[i].id == hl) {
            mw__batch_rect(vc->batch, (float)r->x, y, (float)r->w, (float)rh,
                           mw__rgba(1, 1, 1, 0.08f));
            mw__batch_frame(vc->batch, (float)r->x, y, (float)r->w, (float)rh, mw__px(l, 1.5f),
                            mw__rgba(1, 1, 1, 0.85f));
        }
        float sw = (float)rh * 0.55f;
        mw__batch_rect(vc->batch, (float)r->x + pad, y + ((float)rh - sw) / 2, sw, sw,
                       mw__rgba(e[i].color.r, e[i].color.g, e[i].color.b, dimmed ? 0.35f : 1));
        char name[96], fit[96], share[16];
        mw_region_name(vc->model, e[i].id, name, sizeof name);
        snprintf(share, sizeof share, "%.1f%%", e[i].share * 100.0);
        float share_w = mw__text_width(t, f, share), name_x = (float)r->x + pad * 2 + sw;
        mw__text_fit(t, f, name, (float)(r->x + r->w) - 2 * pad - share_w - name_x, fit,
                     sizeof fit);
        mw_rgba_t tc = dimmed ? mw__hex(MW_COLOR_DIM, 1) : mw__hex(MW_COLOR_TEXT, 1);
        float ty = y + ((float)rh - (float)lh) / 2;
        mw__text_draw(t, f, name_x, ty, MW_ALIGN_LEFT, tc, fit);
        mw__text_draw(t, f, (float)(r->x + r->w) - pad, ty, MW_ALIGN_RIGHT, tc, share);
    }
}

static void draw_legend(const mw_view_ctx_t *vc)
{
    const mw_layout_t *l = vc->layout;
    const mw_rect_t *r = &l->legend;
    if (r->w <= 0 || r->h <= 0)
        return;
    if (vc->rg && vc->rg->timeline) {
        draw_region_legend(vc);
        return;
    }
    mw_batch_t *b = vc->batch;
    mw_text_t *t = vc->text;
    int f = l->font_px, fs = mw__font_small(vc->layout);
    float pad = mw__px(vc->layout, 6);
    mw_legend_entry_t leg[MW_LEGEND_MAX];
    int n = mw_model_legend(vc->model, leg, MW_LEGEND_MAX);
    if (n > l->legend_rows)
        n = l->legend_rows;
    int rh = l->legend_row_h > 0 ? l->legend_row_h : mw__text_line_height(t, f);
    /* Row 0 is the heading (mw_pick() counts entries from row 1). */
    float hy = (float)r->y + ((float)rh - (float)mw__text_line_height(t, fs)) / 2;
    const char *h_left = "MPI function", *h_right = "share of MPI time";
    if (mw__text_width(t, fs, h_left) + mw__text_width(t, fs, h_right) + 4 * pad > (float)r->w)
        h_right = "% MPI time";
    mw__text_draw(t, fs, (float)r->x + pad, hy, MW_ALIGN_LEFT, mw__hex(MW_COLOR_DIM, 1), h_left);
    mw__text_draw(t, fs, (float)(r->x + r->w) - pad, hy, MW_ALIGN_RIGHT, mw__hex(MW_COLOR_DIM, 1),
                  h_right);
    if (n <= 0) {
        mw__text_draw(t, fs, (float)r->x + pad, (float)(r->y + rh) + pad, MW_ALIGN_LEFT,
                      mw__hex(MW_COLOR_DIM, 1), "no calls yet");
        return;
    }
    int lh = mw__text_line_height(t, f);
    for (int i = 0; i < n; i++) {
        float y = (float)(r->y + (i + 1) * rh);
        if (y + (float)rh > (float)(r->y + r->h) + 0.5f)
            break;
        int highlighted = vc->view->highlight_fn && leg[i].fn == vc->view->highlight_fn;
        int dimmed = vc->view->highlight_fn && !highlighted;
        if (highlighted) {
            mw__batch_rect(b, (float)r->x, y, (float)r->w, (float)rh, mw__rgba(1, 1, 1, 0.08f));
            mw__batch_frame(b, (float)r->x, y, (float)r->w, (float)rh, mw__px(vc->layout, 1.5f),
                            mw__rgba(1, 1, 1, 0.85f));
        }
        float sw = (float)rh * 0.55f;
        float sy = y + ((float)rh - sw) / 2;
        mw_rgba_t c = mw__rgba(leg[i].color.r, leg[i].color.g, leg[i].color.b, dimmed ? 0.35f : 1);
        mw__batch_rect(b, (float)r->x + pad, sy, sw, sw, c);
        const char *name = leg[i].fn ? mw_fn_name(leg[i].fn) : "other";
        if (!name)
            name = "?";
        float ty = y + ((float)rh - (float)lh) / 2;
        mw_rgba_t tc = dimmed ? mw__hex(MW_COLOR_DIM, 1) : mw__hex(MW_COLOR_TEXT, 1);
        char share[16];
        snprintf(share, sizeof share, "%.1f%%", leg[i].share * 100.0);
        float share_w = mw__text_width(t, f, share);
        float name_x = (float)r->x + pad * 2 + sw;
        float name_room = (float)(r->x + r->w) - pad - share_w - pad - name_x;
        /* A name too long for the row loses its "MPI_" prefix, then its tail. */
        char shown[96];
        snprintf(shown, sizeof shown, "%s", name);
        if (mw__text_width(t, f, shown) > name_room && !strncmp(shown, "MPI_", 4))
            memmove(shown, shown + 4, strlen(shown + 4) + 1);
        size_t len = strlen(shown);
        while (len > 1 && mw__text_width(t, f, shown) > name_room) {
            shown[--len] = 0;
            if (len > 1)
                snprintf(shown + len - 1, sizeof shown - (len - 1), "…");
        }
        mw__text_draw(t, f, name_x, ty, MW_ALIGN_LEFT, tc, shown);
        mw__text_draw(t, f, (float)(r->x + r->w) - pad, ty, MW_ALIGN_RIGHT, tc, share);
    }
}

/* One "label  value" line of the details box; returns the next line's y. */
static float detail_line(const mw_view_ctx_t *vc, const mw_rect_t *r, float y, const char *label,
                         const char *value)
{
    mw_text_t *t = vc->text;
    int fs = mw__font_small(vc->layout);
    float pad = mw__px(vc->layout, 8);
    float col = (float)r->x + pad + mw__text_width(t, fs, "duration ") + mw__px(vc->layout, 6);
    int lh = mw__text_line_height(t, fs);
    if (y + (float)lh > (float)(r->y + r->h))
        return y;
    mw__text_draw(t, fs, (float)r->x + pad, y, MW_ALIGN_LEFT, mw__hex(MW_COLOR_DIM, 1), label);
    mw__text_draw(t, fs, col, y, MW_ALIGN_LEFT, mw__hex(MW_COLOR_TEXT, 1), value);
    return y + (float)lh + mw__px(vc->layout, 1);
}

/* A function's call sites over the visible range, most time first, and its spread across
 * ranks (model_regions.h), under what the details show of it; returns the next line's y. */
static float fn_sites_and_spread(const mw_view_ctx_t *vc, const mw_rect_t *r, float y, unsigned fn)
{
    mw_text_t *t = vc->text;
    int fs = mw__font_small(vc->layout), lh = mw__text_line_height(t, fs);
    float pad = mw__px(vc->layout, 8), room = (float)r->w - 2 * pad;
    char a[160], b[64], fit[200];
    mw_fn_spread_t sp;
    if (mw_fn_spread(vc->model, vc->view->t0, vc->view->t1, fn, &sp) > 0) {
        mw_format_duration(sp.sd_ns, a, sizeof a);
        mw_format_duration((double)sp.max_ns, b, sizeof b);
        char ab[300];
        snprintf(ab, sizeof ab, "sd %s · max rank %u %s", a, sp.max_rank, b);
        y = detail_line(vc, r, y, "ranks", ab);
    }
    mw_site_row_t rows[8];
    uint64_t fn_ns = 0;
    int all = 0;
    int n = mw_fn_sites(vc->model, vc->view->t0, vc->view->t1, fn, rows, 8, &fn_ns, &all);
    if (n <= 0)
        return y;
    if (y + (float)lh <= (float)(r->y + r->h)) {
        snprintf(a, sizeof a, "call sites (%d), by time:", all);
        mw__text_draw(t, fs, (float)r->x + pad, y, MW_ALIGN_LEFT, mw__hex(MW_COLOR_DIM, 1), a);
        y += (float)lh;
    }
    for (int i = 0; i < n && y + (float)lh <= (float)(r->y + r->h); i++) {
        const char *slash = strrchr(rows[i].file, '/');
        const char *file = slash ? slash + 1 : rows[i].file;
        mw_format_duration((double)rows[i].ns, b, sizeof b);
        snprintf(a, sizeof a, "%.0f%% %s %s:%u %s ×%llu r%u", rows[i].share * 100.0, b,
                 file[0] ? file : "?", rows[i].line, rows[i].function[0] ? rows[i].function : "?",
                 (unsigned long long)rows[i].count, rows[i].top_rank);
        mw__text_fit(t, fs, a, room, fit, sizeof fit);
        mw__text_draw(t, fs, (float)r->x + pad, y, MW_ALIGN_LEFT, mw__hex(MW_COLOR_TEXT, 1), fit);
        y += (float)lh;
    }
    return y;
}

static void draw_details(const mw_view_ctx_t *vc)
{
    const mw_rect_t *r = &vc->layout->details;
    if (r->w <= 0 || r->h <= 0)
        return;
    mw_text_t *t = vc->text;
    const mw_pick_t *p = vc->pick;
    int f = vc->layout->font_px, fs = mw__font_small(vc->layout);
    float pad = mw__px(vc->layout, 8);
    mw__batch_rect(vc->batch, (float)r->x, (float)r->y, (float)r->w, (float)r->h,
                   mw__hex(MW_COLOR_PANEL, 1));
    float y = (float)r->y + pad / 2;
    char a[96], b[96];
    if (p->kind == MW_PICK_TERRAIN) {
        mw__terrain_details(vc, r);
        return;
    }
    if (p->kind == MW_PICK_RANK) {
        snprintf(a, sizeof a, "rank %" PRIu32, p->rank);
        mw__text_draw(t, f, (float)r->x + pad, y, MW_ALIGN_LEFT, mw__hex(MW_COLOR_TEXT, 1), a);
        y += (float)mw__text_line_height(t, f) + mw__px(vc->layout, 2);
        mw__text_draw(t, fs, (float)r->x + pad, y, MW_ALIGN_LEFT, mw__hex(MW_COLOR_DIM, 1),
                      "highlighted in every view");
        return;
    }
    if (p->kind != MW_PICK_CALL && p->kind != MW_PICK_CELL && vc->view->highlight_fn) {
        /* A legend entry: the function's call sites and spread. */
        unsigned hf = vc->view->highlight_fn;
        mw_rgb_t hc = mw_model_color(vc->model, hf);
        float sw = (float)mw__text_line_height(t, f) * 0.55f;
        float lh = (float)mw__text_line_height(t, f);
        mw__batch_rect(vc->batch, (float)r->x + pad, y + (lh - sw) / 2, sw, sw,
                       mw__rgba(hc.r, hc.g, hc.b, 1));
        const char *hn = mw_fn_name(hf);
        mw__text_draw(t, f, (float)r->x + pad + sw + mw__px(vc->layout, 6), y, MW_ALIGN_LEFT,
                      mw__hex(MW_COLOR_TEXT, 1), hn ? hn : "?");
        y += lh + mw__px(vc->layout, 2);
        fn_sites_and_spread(vc, r, y, hf);
        return;
    }
    if (p->kind != MW_PICK_CALL && p->kind != MW_PICK_CELL) {
        mw__text_draw(t, f, (float)r->x + pad, y, MW_ALIGN_LEFT, mw__hex(MW_COLOR_TEXT, 1),
                      "details");
        y += (float)mw__text_line_height(t, f) + mw__px(vc->layout, 2);
        mw__text_draw(t, fs, (float)r->x + pad, y, MW_ALIGN_LEFT, mw__hex(MW_COLOR_DIM, 1),
                      "click a call in the call view");
        y += (float)mw__text_line_height(t, fs);
        mw__text_draw(t, fs, (float)r->x + pad, y, MW_ALIGN_LEFT, mw__hex(MW_COLOR_DIM, 1),
                      "or a function in the legend");
        return;
    }
    const char *fn = mw_fn_name(p->fn);
    mw_rgb_t c = mw_model_color(vc->model, p->fn);
    float sw = (float)mw__text_line_height(t, f) * 0.55f;
    float lh = (float)mw__text_line_height(t, f);
    mw__batch_rect(vc->batch, (float)r->x + pad, y + (lh - sw) / 2, sw, sw,
                   mw__rgba(c.r, c.g, c.b, 1));
    mw__text_draw(t, f, (float)r->x + pad + sw + mw__px(vc->layout, 6), y, MW_ALIGN_LEFT,
                  mw__hex(MW_COLOR_TEXT, 1), fn ? fn : "?");
    y += lh + mw__px(vc->layout, 2);
    if (p->kind == MW_PICK_CALL) {
        snprintf(a, sizeof a, "%" PRIu32, p->rank);
        y = detail_line(vc, r, y, "rank", a);
        if (p->logical) { /* a logical view's event: its step and lateness before the rest */
            snprintf(a, sizeof a, "%" PRIu64 " (%s)", p->step, mw_logical_class_name(p->lclass));
            y = detail_line(vc, r, y, "step", a);
            mw_format_duration((double)(p->lateness_ns > 0 ? p->lateness_ns : 0), a, sizeof a);
            mw_format_duration((double)(p->diff_ns > 0 ? p->diff_ns : 0), b, sizeof b);
            char ab[224];
            snprintf(ab, sizeof ab, "%s, diff. %s", a, b);
            y = detail_line(vc, r, y, "lateness", ab);
        } else {
            y = detail_line(vc, r, y, "host", p->host[0] ? p->host : "unknown");
        }
        snprintf(a, sizeof a, "%.6f s", mw_model_seconds(vc->model, p->start_ns));
        y = detail_line(vc, r, y, "start", a);
        mw_format_duration((double)p->duration_ns, a, sizeof a);
        y = detail_line(vc, r, y, "duration", a);
        if (p->bytes) {
            mw__format_bytes(p->bytes, a, sizeof a);
            y = detail_line(vc, r, y, "bytes", a);
        }
        if (p->peer >= 0) {
            snprintf(a, sizeof a, "rank %" PRId32, p->peer);
            y = detail_line(vc, r, y, "peer", a);
        }
        if (p->traced) { /* a call of a traced window: everything its record holds */
            if (p->tkind != MW_TK_CALL && p->tkind != MW_TK_COLL && p->tkind != MW_TK_ICOLL) {
                snprintf(a, sizeof a, "%" PRId32, p->tag);
                y = detail_line(vc, r, y, "tag", a);
            }
            if (p->comm) {
                snprintf(a, sizeof a, "%#" PRIx64, p->comm);
                y = detail_line(vc, r, y, "comm", a);
            }
            if (!p->logical)
                y = detail_line(vc, r, y, "source", "traced (exact)");
        }
    } else {
        snprintf(a, sizeof a, "%" PRIu64 " call%s (binned)", p->cell_count,
                 p->cell_count == 1 ? "" : "s");
        y = detail_line(vc, r, y, "calls", a);
        snprintf(a, sizeof a, "%.4f – %.4f s", mw_model_seconds(vc->model, p->cell_t0_ns),
                 mw_model_seconds(vc->model, p->cell_t1_ns));
        y = detail_line(vc, r, y, "time", a);
        mw_format_duration((double)p->cell_d0_ns, a, sizeof a);
        mw_format_duration((double)p->cell_d1_ns, b, sizeof b);
        char ab[200];
        snprintf(ab, sizeof ab, "%s – %s", a, b);
        y = detail_line(vc, r, y, "duration", ab);
    }
    y = fn_sites_and_spread(vc, r, y, p->fn);
    (void)y;
}

/* The status bar's text as last drawn, and where its tier was drawn (snapshot meta). */
static struct {
    char text[512];
    float tier_x0, tier_x1;
} status_drawn;

void mw__panels_status_drawn(const char **text, float *tier_x0, float *tier_x1)
{
    *text = status_drawn.text;
    *tier_x0 = status_drawn.tier_x0;
    *tier_x1 = status_drawn.tier_x1;
}

static void draw_status(const mw_view_ctx_t *vc, const mw_panels_state_t *ps)
{
    const mw_rect_t *r = &vc->layout->status;
    if (r->w <= 0 || r->h <= 0)
        return;
    mw_text_t *t = vc->text;
    int fs = mw__font_small(vc->layout);
    float pad = mw__px(vc->layout, 8);
    mw__batch_rect(vc->batch, (float)r->x, (float)r->y, (float)r->w, (float)r->h,
                   mw__hex(MW_COLOR_PANEL, 1));
    mw_model_stats_t s;
    mw_model_stats(vc->model, &s);
    const mw_source_status_t *st = &ps->src;
    const char *mode0 = st->live ? (vc->view->follow ? "live" : "live, paused")
                                 : (vc->view->follow ? "replay, following" : "replay, paused");
    /* The tier of what is shown from the history or the recording (docs/recording.md
     * "Tiers"), right after the mode: the counters that follow may be cut, it is not. */
    char mode[96], tier[32] = "";
    if (st->tier[0])
        snprintf(tier, sizeof tier, "tier: %s", st->tier);
    snprintf(mode, sizeof mode, "%s%s%s", mode0, tier[0] ? "  ·  " : "", tier);
    char buf[512], right[300], fit[512];
    snprintf(buf, sizeof buf,
             "%s  ·  %" PRIu64 " windows  ·  %" PRIu32 "/%" PRIu32 " ranks reporting  ·  %" PRIu64
             " samples dropped  ·  %" PRIu64 " partial windows  ·  cache %.1f MB",
             mode, s.windows, s.ranks_reporting, s.ranks, s.samples_dropped, s.partial,
             (double)mw_model_cached_bytes(vc->model) / 1e6);
    if (ps->headless)
        snprintf(right, sizeof right, "%s", st->what);
    else
        snprintf(right, sizeof right, "%.0f fps", ps->fps);
    float room = (float)r->w - 2 * pad;
    if (mw__text_width(t, fs, buf) > room * 0.75f) {
        /* Narrow windows: the same numbers with fewer words. */
        snprintf(buf, sizeof buf,
                 "%s · %" PRIu64 " win · %" PRIu32 "/%" PRIu32 " ranks · %" PRIu64
                 " dropped · %" PRIu64 " partial · %.1f MB",
                 mode, s.windows, s.ranks_reporting, s.ranks, s.samples_dropped, s.partial,
                 (double)mw_model_cached_bytes(vc->model) / 1e6);
    }
    if (s.refused) {
        /* Windows the window policy refused whole (docs/export.md, Malformed windows). */
        size_t n = strlen(buf);
        snprintf(buf + n, sizeof buf - n, "  ·  %" PRIu64 " refused", s.refused);
    }
    float y = (float)r->y + ((float)r->h - (float)mw__text_line_height(t, fs)) / 2;
    mw_rgba_t warn = mw__hex(MW_COLOR_PAUSED, 1);
    mw_rgba_t left_c =
        s.samples_dropped || s.partial || s.refused ? warn : mw__hex(MW_COLOR_DIM, 1);
    /* A steering result of the last few seconds takes the counters' place. */
    int nst = ps->steer_state;
    const char *note = ps->steer_note;
    if (note) {
        snprintf(buf, sizeof buf, "steering: %s", note);
        left_c = mw__hex(nst == MW_CONTROL_SENT      ? MW_COLOR_LIVE
                         : nst == MW_CONTROL_WAITING ? MW_COLOR_PAUSED
                                                     : MW_COLOR_ERROR,
                         1);
    }
    float left_w = mw__text_fit(t, fs, buf, room, fit, sizeof fit);
    mw__text_draw(t, fs, (float)r->x + pad, y, MW_ALIGN_LEFT, left_c, fit);
    snprintf(status_drawn.text, sizeof status_drawn.text, "%s", fit);
    status_drawn.tier_x0 = status_drawn.tier_x1 = 0;
    if (tier[0] && !note) {
        char head[128];
        snprintf(head, sizeof head, "%s  ·  ", mode0);
        status_drawn.tier_x0 = (float)r->x + pad + mw__text_width(t, fs, head);
        status_drawn.tier_x1 = status_drawn.tier_x0 + mw__text_width(t, fs, tier);
    }
    /* The right-hand note only where it does not touch the counters. */
    float right_room = room - left_w - mw__px(vc->layout, 16);
    if (right_room > mw__px(vc->layout, 40)) {
        char rfit[300];
        mw__text_fit(t, fs, right, right_room, rfit, sizeof rfit);
        mw__text_draw(t, fs, (float)(r->x + r->w) - pad, y, MW_ALIGN_RIGHT,
                      mw__hex(MW_COLOR_DIM, 1), rfit);
    }
}

void mw__panels_draw(const mw_view_ctx_t *vc, const mw_panels_state_t *ps)
{
    draw_title(vc, ps);
    /* The topology and matrix views draw their own legends and details. */
    if (!ps->topo) {
        draw_legend(vc);
        draw_details(vc);
        mw__events_panel_draw(vc, ps->prompt.steering);
    }
    /* The steering prompt, when open, takes the status bar's place. */
    if (ps->prompt.open)
        mw__prompt_draw(vc, &ps->prompt);
    else
        draw_status(vc, ps);
}

/* Every key and mouse action app.c binds. */
static const char *const help_rows[][2] = {
    {"space", "pause / follow the newest window"},
    {"← / →", "scroll the timeline"},
    {"+ / −, wheel", "zoom (over the call view: its range)"},
    {"Home", "the whole run"},
    {"End", "follow the newest window"},
    {"1 2 3 4", "calls as points by start / by end / lines / arcs"},
    {"t", "transfer function linear ↔ log"},
    {"l", "call durations: log ↔ linear axis"},
    {"[  ]", "o_min − / + 0.05"},
    {"v", "views: all → timeline → call view → ranks → logical → topology → matrix → terrain"},
    {"r", "timeline: MPI functions ↔ code regions (click a region: highlight)"},
    {"d / o", "logical view: lateness ↔ differential / MPI calls ↔ lateness over time"},
    {"Esc", "clear selection, highlights and pick"},
    {"s", "save a snapshot (mpiwatch-TIMESTAMP.png)"},
    {":", "steer: KEY=VALUE [RANKS], Enter sends, Esc cancels"},
    {"q", "quit"},
    {"? or F1", "this help"},
    {"", ""},
    {"drag on timeline", "select the call view's range"},
    {"click on timeline", "move the range there"},
    {"right-drag", "pan (timeline, or the call view's range)"},
    {"click a call", "highlight its rank, show its details"},
    {"click the legend", "highlight that function (again: off)"},
    {"", ""},
    {"topology, matrix:", ""},
    {", / .  ← / →", "previous / next window or step"},
    {"space", "play / pause through windows or steps"},
    {"w", "windows ↔ time steps"},
    {"c", "line colors: messages → bytes → source → destination"},
    {"b", "lines: auto → node bundles → rank lines"},
    {"p", "periodic boundary stubs on / off"},
    {"n / g / G", "node planes: plain → by node → by switch / node gap + / −"},
    {"t / m / l", "log ↔ linear scale / matrix messages ↔ bytes / rank labels"},
    {"f", "links of one send function (MPI_Isend, ...) → all sends"},
    {"e / E", "ranks: MPI share → region excl. → incl. time / next region"},
    {"left-drag, right-drag", "orbit, pan (topology)"},
    {"wheel, + / −, Home", "zoom, reset the camera (topology)"},
    {"click", "pick a rank, a line, a bundle or a matrix cell"},
    {"", ""},
    {"terrain:", ""},
    {"h / m / g / t", "heat map ↔ 3D / metric / functions ↔ regions / log ↔ linear"},
    {"left-drag, wheel", "orbit, zoom (3D)"},
    {"click a cell", "its rank, function and value; the rank highlighted"},
};

void mw__help_draw(const mw_view_ctx_t *vc)
{
    mw_text_t *t = vc->text;
    int f = vc->layout->font_px;
    int lh = mw__text_line_height(t, f);
    int n = (int)(sizeof help_rows / sizeof help_rows[0]);
    float pad = mw__px(vc->layout, 16);
    float key_w = 0, act_w = 0;
    for (int i = 0; i < n; i++) {
        float kw = mw__text_width(t, f, help_rows[i][0]);
        float aw = mw__text_width(t, f, help_rows[i][1]);
        key_w = kw > key_w ? kw : key_w;
        act_w = aw > act_w ? aw : act_w;
    }
    float w = key_w + act_w + 3 * pad, h = (float)(n + 2) * (float)lh + 2 * pad;
    float x = ((float)vc->fb_w - w) / 2, y = ((float)vc->fb_h - h) / 2;
    if (x < 0)
        x = 0;
    if (y < 0)
        y = 0;
    mw__batch_rect(vc->batch, 0, 0, (float)vc->fb_w, (float)vc->fb_h, mw__rgba(0, 0, 0, 0.45f));
    mw__batch_rect(vc->batch, x, y, w, h, mw__hex(0x20242c, 0.97f));
    mw__batch_frame(vc->batch, x, y, w, h, mw__px(vc->layout, 1), mw__hex(MW_COLOR_AXIS, 1));
    float ty = y + pad;
    mw__text_draw(t, f, x + pad, ty, MW_ALIGN_LEFT, mw__hex(MW_COLOR_ACCENT, 1), "keys and mouse");
    ty += (float)lh * 2;
    for (int i = 0; i < n; i++, ty += (float)lh) {
        mw__text_draw(t, f, x + pad, ty, MW_ALIGN_LEFT, mw__hex(0xffd84a, 1), help_rows[i][0]);
        mw__text_draw(t, f, x + 2 * pad + key_w, ty, MW_ALIGN_LEFT, mw__hex(MW_COLOR_TEXT, 1),
                      help_rows[i][1]);
    }
}
