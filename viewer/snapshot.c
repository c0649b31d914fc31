/* snapshot.c: headless snapshots (PNG + JSON meta) and the frame-rate benchmark.
 *
 * DESIGN: a snapshot must show settled data, not whatever arrived first, so loading polls the
 * source until the job is known, the model has an extent, no request is outstanding and
 * mw_model_wanted() finds nothing missing for the view; between polls it waits on the source
 * (mw_source_wait) rather than spinning, and gives up after SNAPSHOT_TIMEOUT_S. Checking
 * mw_model_wanted() marks the range it returns as asked for, so the range is handed straight
 * back with mw_model_answered() for the source to fetch. --pick then acts as a click would,
 * waiting for the picked rank's calls so the PNG shows them highlighted. The PNG is the
 * offscreen framebuffer read back (rows flipped: GL's origin is the bottom left); --meta writes
 * the layout and the model's numbers behind what was drawn, for tests to compare with pixels.
 * --steer requests are sent once the job is known, their replies and then (live) their steer
 * events on the feed are waited for, so that the PNG and the meta show them.
 */
#include "snapshot.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stb_image_write.h>

#include "mw_file.h"
#include "mw_json.h"
#include "views.h"

#define SNAPSHOT_TIMEOUT_S 20
#define SNAPSHOT_WAIT_MS 20
#define SNAPSHOT_SPAN_S 30.0 /* --at shows the 30 s before it */
#define SNAPSHOT_EVENTS_S 5  /* a recording's job events are waited for this long at most */

/* Until when a snapshot waits for the recording's job events (read by one pass over the whole
 * file, which a very long recording may not finish in time: its snapshot then lacks the
 * events the pass had not reached, rather than failing). 0: not set yet. */
static uint64_t events_deadline;

/* stb's output callback: the encoded bytes go to the temporary file's stream (a short write
 * shows in ferror, which mw_afile_commit checks). */
static void png_to_stream(void *context, void *data, int size)
{
    if (size > 0)
        fwrite(data, 1, (size_t)size, context);
}

int mw__write_png(const char *path, int w, int h)
{
    unsigned char *px = malloc((size_t)w * (size_t)h * 4);
    if (!px) {
        fprintf(stderr, "mpiwatch-viewer: out of memory for a %dx%d image\n", w, h);
        return -1;
    }
    if (mw__gl_read_rgba(w, h, px) < 0) {
        free(px);
        return -1;
    }
    /* Opaque image: drop alpha (RGB PNGs are smaller and every viewer shows them alike). */
    for (size_t i = 0, n = (size_t)w * (size_t)h; i < n; i++) {
        px[i * 3 + 0] = px[i * 4 + 0];
        px[i * 3 + 1] = px[i * 4 + 1];
        px[i * 3 + 2] = px[i * 4 + 2];
    }
    /* Encoded into a file of mw_file.h, so that a snapshot replaces PATH (a symbolic link
     * included) only when it is complete. */
    char err[512];
    mw_afile_t *af = mw_afile_open(path, err, sizeof err);
    int ok = af && stbi_write_png_to_func(png_to_stream, mw_afile_stream(af), w, h, 3, px, w * 3);
    free(px);
    if (af && !ok) {
        snprintf(err, sizeof err, "cannot write %s: the PNG encoder failed", path);
        mw_afile_abort(af);
    } else if (ok && mw_afile_commit(af, err, sizeof err) != 0) {
        ok = 0;
    }
    if (!ok) {
        fprintf(stderr, "mpiwatch-viewer: %s\n", err);
        return -1;
    }
    return 0;
}

/* The view the snapshot options ask for, once the job and its extent are known. */
static void snapshot_view(mw_app_t *app)
{
    const mw_viewer_options_t *o = &app->opt;
    uint64_t oldest = 0, newest = 0;
    if (!mw_model_job(app->model) || mw_model_extent(app->model, &oldest, &newest) != 0)
        return;
    if (o->at_given) {
        app->view.follow = 0;
        app->view.t1 = o->at;
        app->view.t0 = o->at - SNAPSHOT_SPAN_S > 0 ? o->at - SNAPSHOT_SPAN_S : 0;
        if (!(app->view.t1 > app->view.t0))
            app->view.t1 = app->view.t0 + 1e-3;
    } else if (o->replay) {
        mw__app_whole_run(app);
    }
    if (o->range_given) {
        app->view.sel0 = o->range0;
        app->view.sel1 = o->range1;
    }
}

/* Tells the model what the (possibly just changed) view needs. */
static void snapshot_need(mw_app_t *app)
{
    mw__app_layout(app);
    if (mw__app_topo(app)) {
        mw_view_ctx_t vc;
        mw__app_view_ctx(app, &vc);
        mw__topo_update(&vc, &app->tp);
    }
    mw__app_need(app);
}

/* 1 when everything the view needs is in the model. */
static int snapshot_ready(mw_app_t *app)
{
    uint64_t oldest = 0, newest = 0, first = 0, last = 0;
    if (!mw_model_job(app->model) || mw_model_extent(app->model, &oldest, &newest) != 0)
        return 0;
    if (mw_model_busy(app->model))
        return 0;
    if (mw_model_wanted(app->model, &first, &last, UINT64_MAX)) {
        /* Not ours to ask: hand it back so the source's next poll requests it. */
        mw_model_answered(app->model, first, last);
        return 0;
    }
    {
        /* Time steps and job events are read from the recording on their own: wait for all of
         * them (steps in the step views; events, drawn in the others, for a while). */
        mw_source_status_t st;
        mw_source_status(app->src, &st);
        if (!events_deadline)
            events_deadline = mw__now_ns() + SNAPSHOT_EVENTS_S * 1000000000ull;
        if (st.steps_pending &&
            ((mw__app_topo(app) && app->tp.step_mode) || mw__now_ns() < events_deadline))
            return 0;
    }
    return !mw_source_rank_busy(app->src);
}

/* Polls until the view's data are loaded; -1 after printing why not. */
static int snapshot_load(mw_app_t *app)
{
    uint64_t deadline = mw__now_ns() + SNAPSHOT_TIMEOUT_S * 1000000000ull;
    for (;;) {
        snapshot_view(app);
        snapshot_need(app);
        if (mw__app_update(app, mw__now_ns()) < 0)
            return -1;
        /* mw__app_update() let the view follow; the options win over that. */
        snapshot_view(app);
        snapshot_need(app);
        if (snapshot_ready(app))
            return 0;
        if (mw__now_ns() > deadline) {
            mw_source_status_t st;
            mw_source_status(app->src, &st);
            fprintf(stderr,
                    "mpiwatch-viewer: gave up after %d s: %s (%s; %" PRIu64 " windows, %" PRIu64
                    " requests, %" PRIu64 " replies, %" PRIu64 " errors)\n",
                    SNAPSHOT_TIMEOUT_S,
                    !mw_model_job(app->model) ? "no job description arrived"
                                              : "the data of the view did not all arrive",
                    st.what, st.feed_windows, st.requests, st.replies, st.errors);
            return -1;
        }
        mw_source_wait(app->src, SNAPSHOT_WAIT_MS);
    }
}

/* ---- JSON --------------------------------------------------------------------------------- */

/* Integers beyond 2^53 would lose digits as JSON doubles: mw_json_add_u64 (proto/mw_json.h)
 * writes them as raw numbers. */

static const char *pick_kind_name(mw_pick_kind_t k)
{
    switch (k) {
    case MW_PICK_CALL:
        return "call";
    case MW_PICK_CELL:
        return "cell";
    case MW_PICK_LEGEND:
        return "legend";
    case MW_PICK_RANK:
        return "rank";
    case MW_PICK_TERRAIN:
        return "terrain";
    default:
        return "none";
    }
}

static cJSON *json_pick(const mw_app_t *app, const mw_pick_t *p)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    const char *fn = p->fn ? mw_fn_name(p->fn) : NULL;
    cJSON_AddStringToObject(o, "kind", pick_kind_name(p->kind));
    if (fn)
        cJSON_AddStringToObject(o, "fn", fn);
    else
        cJSON_AddNullToObject(o, "fn");
    cJSON_AddNumberToObject(o, "rank", p->rank);
    cJSON_AddStringToObject(o, "host", p->host);
    (void)mw_json_add_u64(o, "start_ns", p->start_ns);
    cJSON_AddNumberToObject(
        o, "start_s", p->kind == MW_PICK_CALL ? mw_model_seconds(app->model, p->start_ns) : 0);
    (void)mw_json_add_u64(o, "duration_ns", p->duration_ns);
    (void)mw_json_add_u64(o, "bytes", p->bytes);
    cJSON_AddNumberToObject(o, "peer", p->peer);
    cJSON_AddBoolToObject(o, "traced", p->traced);
    if (p->traced) {
        cJSON_AddNumberToObject(o, "tag", p->tag);
        (void)mw_json_add_u64(o, "comm", p->comm);
    }
    if (p->kind == MW_PICK_TERRAIN) { /* a cell of the terrain */
        cJSON_AddStringToObject(o, p->terrain_regions ? "region" : "function", p->col_name);
        cJSON_AddNumberToObject(o, "value", p->value);
        cJSON_AddNumberToObject(o, "rank_first", p->rank_first);
        cJSON_AddNumberToObject(o, "rank_last", p->rank_last);
    }
    if (p->logical) { /* an event of the logical view */
        (void)mw_json_add_u64(o, "step", p->step);
        cJSON_AddNumberToObject(o, "lateness_ns", (double)p->lateness_ns);
        cJSON_AddNumberToObject(o, "diff_ns", (double)p->diff_ns);
        cJSON_AddStringToObject(o, "class", mw_logical_class_name(p->lclass));
    }
    (void)mw_json_add_u64(o, "cell_t0_ns", p->cell_t0_ns);
    (void)mw_json_add_u64(o, "cell_t1_ns", p->cell_t1_ns);
    (void)mw_json_add_u64(o, "cell_d0_ns", p->cell_d0_ns);
    (void)mw_json_add_u64(o, "cell_d1_ns", p->cell_d1_ns);
    (void)mw_json_add_u64(o, "cell_count", p->cell_count);
    return o;
}

static cJSON *json_rect(const mw_rect_t *r);

/* The logical view as drawn: the analysis, the picture's scale and aggregation, the marker and
 * the selection (pixel centres on the PNG), the first events with their cells' centres. */
static void json_logical(cJSON *tr, const mw_app_t *app)
{
    const mw_logical_gl_t *lg = &app->lg;
    const mw_lview_info_t *in = mw_lview_info(lg->lv);
    const mw_lview_pic_t *pic = &lg->pic;
    cJSON *o = cJSON_AddObjectToObject(tr, "logical_view");
    if (!o)
        return;
    cJSON_AddStringToObject(o, "metric", lg->metric == MW_LVIEW_DIFF ? "diff" : "lateness");
    cJSON_AddItemToObject(o, "plot", json_rect(&lg->plot_r));
    cJSON_AddItemToObject(o, "ranks_plot", json_rect(&lg->ranks_r));
    cJSON_AddBoolToObject(o, "strip", lg->strip); /* the upper plot: lateness over time */
    (void)mw_json_add_u64(o, "window_first", in->k0);
    (void)mw_json_add_u64(o, "window_last", in->k1);
    (void)mw_json_add_u64(o, "traced_windows", in->traced_windows);
    (void)mw_json_add_u64(o, "events", in->events);
    (void)mw_json_add_u64(o, "dropped", in->dropped);
    (void)mw_json_add_u64(o, "steps", in->steps);
    cJSON_AddNumberToObject(o, "ranks", in->ranks);
    cJSON_AddNumberToObject(o, "lateness_max_ns", (double)in->lateness_max_ns);
    cJSON_AddNumberToObject(o, "diff_max_ns", (double)in->diff_max_ns);
    cJSON_AddNumberToObject(o, "scale_max_ns", (double)pic->scale_max_ns);
    cJSON_AddNumberToObject(o, "steps_per_col", pic->steps_per_col);
    cJSON_AddNumberToObject(o, "ranks_per_row", pic->ranks_per_row);
    cJSON_AddNumberToObject(o, "cell_w", pic->cell_w);
    (void)mw_json_add_u64(o, "messages", pic->msgs);
    (void)mw_json_add_u64(o, "messages_drawn", pic->msgs_out);
    (void)mw_json_add_u64(o, "collectives", pic->colls);
    (void)mw_json_add_u64(o, "partitions", in->st.partitions);
    (void)mw_json_add_u64(o, "unmatched", in->st.unmatched);
    (void)mw_json_add_u64(o, "analyses", in->analyses);
    cJSON_AddBoolToObject(o, "failed", in->failed);
    size_t ne = 0;
    const mw_logical_event_t *ev = mw_lview_events(lg->lv, &ne);
    const int64_t at[2] = {pic->mark, pic->sel};
    const float box[2][4] = {{pic->mark_x0, pic->mark_y0, pic->mark_x1, pic->mark_y1},
                             {pic->sel_x0, pic->sel_y0, pic->sel_x1, pic->sel_y1}};
    for (int k = 0; k < 2; k++) {
        if (at[k] < 0 || (size_t)at[k] >= ne)
            continue;
        const mw_logical_event_t *e = &ev[at[k]];
        cJSON *m = cJSON_AddObjectToObject(o, k ? "selected" : "marker");
        if (!m)
            continue;
        cJSON_AddNumberToObject(m, "rank", e->rank);
        (void)mw_json_add_u64(m, "step", e->step);
        cJSON_AddNumberToObject(m, "lateness_ns", (double)e->lateness_ns);
        cJSON_AddNumberToObject(m, "diff_ns", (double)e->diff_ns);
        cJSON_AddStringToObject(m, "fn", mw_fn_name(e->fn) ? mw_fn_name(e->fn) : "?");
        cJSON_AddStringToObject(m, "class", mw_logical_class_name(e->cls));
        cJSON_AddNumberToObject(m, "x", lg->plot_r.x + (box[k][0] + box[k][2]) / 2);
        cJSON_AddNumberToObject(m, "y", lg->plot_r.y + (box[k][1] + box[k][3]) / 2);
    }
    cJSON *ls = cJSON_AddArrayToObject(o, "lines"); /* message lines as drawn */
    for (size_t i = 0; ls && i < pic->msgs_out && i < 256; i++) {
        const mw_lview_msg_t *mm = &lg->msgs[i];
        cJSON *mj = cJSON_CreateObject();
        if (!mj)
            break;
        cJSON_AddNumberToObject(mj, "x0", lg->plot_r.x + mm->x0);
        cJSON_AddNumberToObject(mj, "y0", lg->plot_r.y + mm->y0);
        cJSON_AddNumberToObject(mj, "x1", lg->plot_r.x + mm->x1);
        cJSON_AddNumberToObject(mj, "y1", lg->plot_r.y + mm->y1);
        cJSON_AddItemToArray(ls, mj);
    }
    cJSON *arr = cJSON_AddArrayToObject(o, "cells");
    for (size_t i = 0; arr && i < ne && i < 2000; i++) {
        const mw_logical_event_t *e = &ev[i];
        float x0, y0, x1, y1;
        mw_lview_cell(pic, e->step, e->rank, &x0, &y0, &x1, &y1);
        cJSON *c = cJSON_CreateObject();
        if (!c)
            break;
        cJSON_AddNumberToObject(c, "rank", e->rank);
        (void)mw_json_add_u64(c, "step", e->step);
        cJSON_AddNumberToObject(c, "kind", e->kind);
        cJSON_AddNumberToObject(c, "lateness_ns", (double)e->lateness_ns);
        cJSON_AddNumberToObject(c, "diff_ns", (double)e->diff_ns);
        cJSON_AddNumberToObject(c, "x", lg->plot_r.x + (x0 + x1) / 2);
        cJSON_AddNumberToObject(c, "y", lg->plot_r.y + (y0 + y1) / 2);
        cJSON_AddItemToArray(arr, c);
    }
}

static cJSON *json_rect(const mw_rect_t *r)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddNumberToObject(o, "x", r->x);
    cJSON_AddNumberToObject(o, "y", r->y);
    cJSON_AddNumberToObject(o, "w", r->w);
    cJSON_AddNumberToObject(o, "h", r->h);
    return o;
}

/* Rounds a fraction for the file: 1e-6 is far below a pixel at any plot height. */
static double frac(float v)
{
    return (double)(long)((double)v * 1e6 + (v < 0 ? -0.5 : 0.5)) / 1e6;
}

static cJSON *json_meta(mw_app_t *app)
{
    const mw_layout_t *l = &app->layout;
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    cJSON_AddNumberToObject(root, "width", l->width);
    cJSON_AddNumberToObject(root, "height", l->height);
    cJSON_AddNumberToObject(root, "scale", l->scale);

    cJSON *lay = cJSON_AddObjectToObject(root, "layout");
    cJSON_AddItemToObject(lay, "title", json_rect(&l->title));
    cJSON_AddItemToObject(lay, "timeline", json_rect(&l->timeline));
    cJSON_AddItemToObject(lay, "density", json_rect(&l->density));
    cJSON_AddItemToObject(lay, "legend", json_rect(&l->legend));
    cJSON_AddItemToObject(lay, "details", json_rect(&l->details));
    cJSON_AddItemToObject(lay, "status", json_rect(&l->status));
    cJSON_AddNumberToObject(lay, "font_px", l->font_px);
    cJSON_AddNumberToObject(lay, "legend_row_h", l->legend_row_h);
    cJSON_AddNumberToObject(lay, "legend_rows", l->legend_rows);
    /* Row 0 of the legend is its heading; the entries start one row below (mw_pick). */
    cJSON_AddNumberToObject(lay, "legend_first_row_y", l->legend.y + l->legend_row_h);
    cJSON_AddBoolToObject(lay, "show_timeline", l->show_timeline);
    cJSON_AddBoolToObject(lay, "show_density", l->show_density);

    const Mpiwatch__JobInfo *job = mw_model_job(app->model);
    if (job) {
        cJSON *j = cJSON_AddObjectToObject(root, "job");
        cJSON_AddStringToObject(j, "job", job->job ? job->job : "");
        cJSON_AddStringToObject(j, "program", job->program ? job->program : "");
        cJSON_AddNumberToObject(j, "size", job->size);
        (void)mw_json_add_u64(j, "window_ns", job->window_ns);
        (void)mw_json_add_u64(j, "origin_ns", mw_model_origin_ns(app->model));
    }

    const mw_view_t *v = &app->view;
    double f0 = 0, f1 = 0;
    mw_view_focus(v, &f0, &f1);
    cJSON *tl = cJSON_AddObjectToObject(root, "timeline");
    cJSON_AddNumberToObject(tl, "t0", v->t0);
    cJSON_AddNumberToObject(tl, "t1", v->t1);
    cJSON_AddBoolToObject(tl, "follow", v->follow);
    cJSON_AddNumberToObject(tl, "mean_efficiency", app->tl.mean_efficiency);
    if (l->show_timeline && app->tl.ncols > 0) {
        /* Every column: x pixel, whether it has data, and the 11 cumulative tops (palette
         * slots, then grey) as fractions of the ranks; the pixel top of layer k is
         * timeline.y + timeline.h * (1 - tops[k]). */
        cJSON *cols = cJSON_AddArrayToObject(tl, "columns");
        for (int i = 0; i < app->tl.ncols; i++) {
            const float *c = app->tl.cols + (size_t)i * (MW_PALETTE + 2);
            cJSON *col = cJSON_CreateObject();
            cJSON_AddNumberToObject(col, "x", l->timeline.x + i);
            cJSON_AddBoolToObject(col, "data", c[MW_PALETTE + 1] > 0.5f);
            cJSON *tops = cJSON_AddArrayToObject(col, "tops");
            for (int k = 0; k <= MW_PALETTE; k++)
                cJSON_AddItemToArray(tops, cJSON_CreateNumber(frac(c[k])));
            cJSON_AddItemToArray(cols, col);
        }
    }

    cJSON *dn = cJSON_AddObjectToObject(root, "density");
    cJSON_AddNumberToObject(dn, "t0", f0);
    cJSON_AddNumberToObject(dn, "t1", f1);
    cJSON_AddNumberToObject(dn, "d0_ns", app->dn.d0);
    cJSON_AddNumberToObject(dn, "d1_ns", app->dn.d1);
    cJSON_AddNumberToObject(dn, "dmax", app->dn.dmax);
    cJSON_AddNumberToObject(dn, "calls_drawn", app->dn.calls);
    cJSON_AddStringToObject(dn, "repr",
                            v->repr == MW_REPR_START   ? "start"
                            : v->repr == MW_REPR_END   ? "end"
                            : v->repr == MW_REPR_LINES ? "lines"
                                                       : "arcs");
    cJSON_AddStringToObject(dn, "transfer", mw__transfer_name(v->transfer));
    cJSON_AddNumberToObject(dn, "o_min", frac(v->o_min));
    cJSON_AddBoolToObject(dn, "selected", v->sel1 > v->sel0);
    cJSON_AddStringToObject(dn, "duration_axis", app->dn.lin ? "linear" : "log");

    /* Traced windows (docs/trace.md, "Viewing traced windows"): how each window of the range
     * is drawn, the decoded-trace cache, and the per-rank timeline's messages. */
    cJSON *tr = cJSON_AddObjectToObject(root, "trace");
    mw_trace_stats_t ts;
    mw_trace_stats(app->model, &ts);
    cJSON_AddNumberToObject(tr, "records_kept", (double)ts.records_kept);
    cJSON_AddNumberToObject(tr, "records_cap", (double)ts.records_cap);
    cJSON_AddNumberToObject(tr, "windows_evicted", (double)ts.windows_evicted);
    cJSON_AddNumberToObject(tr, "over_cap", (double)ts.over_cap);
    cJSON_AddNumberToObject(tr, "decode_errors", (double)ts.decode_errors);
    cJSON_AddNumberToObject(tr, "records_refused", (double)ts.records_refused);
    cJSON_AddNumberToObject(tr, "late_kept", (double)ts.late_kept);
    cJSON *cov = cJSON_AddArrayToObject(tr, "windows");
    {
        uint64_t o = mw_model_origin_ns(app->model);
        double g0 = (double)o + f0 * 1e9, g1 = (double)o + f1 * 1e9;
        uint64_t k0 = g0 > 0 ? mw_model_window_at(app->model, (uint64_t)g0) : 0;
        uint64_t k1 = g1 > 0 ? mw_model_window_at(app->model, (uint64_t)g1) : 0;
        static const char *const cn[] = {"none", "summary", "partial", "exact"};
        for (uint64_t k = k1 - k0 > 4096 ? k1 - 4096 : k0; k <= k1; k++) {
            cJSON *wj = cJSON_CreateObject();
            cJSON_AddNumberToObject(wj, "index", (double)k);
            cJSON_AddStringToObject(wj, "drawn", cn[mw_trace_cover(app->model, k)]);
            cJSON_AddItemToArray(cov, wj);
        }
    }
    if (app->show == MW_SHOW_RANKS) {
        cJSON *rj = cJSON_AddObjectToObject(tr, "ranks_view");
        cJSON_AddNumberToObject(rj, "ranks", app->rk.info.ranks);
        cJSON_AddNumberToObject(rj, "groups", app->rk.info.groups);
        cJSON_AddNumberToObject(rj, "messages", (double)app->rk.info.msgs);
        cJSON_AddNumberToObject(rj, "alpha_min", app->rk.info.alpha_min);
        cJSON *ms = cJSON_AddArrayToObject(rj, "lines");
        for (size_t i = 0; i < app->rk.info.msgs_out && i < 256; i++) {
            const mw_ranks_msg_t *mm = &app->rk.msgs[i];
            cJSON *mj = cJSON_CreateObject();
            cJSON_AddNumberToObject(mj, "src", mm->src);
            cJSON_AddNumberToObject(mj, "dst", mm->dst);
            cJSON_AddNumberToObject(mj, "x0", mm->x0);
            cJSON_AddNumberToObject(mj, "y0", mm->y0);
            cJSON_AddNumberToObject(mj, "x1", mm->x1);
            cJSON_AddNumberToObject(mj, "y1", mm->y1);
            cJSON_AddItemToArray(ms, mj);
        }
    }
    if (app->show == MW_SHOW_LOGICAL)
        json_logical(tr, app);

    cJSON *leg = cJSON_AddArrayToObject(root, "legend");
    mw_legend_entry_t e[MW_LEGEND_MAX];
    int n = mw_model_legend(app->model, e, MW_LEGEND_MAX);
    for (int i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "fn",
                                e[i].fn && mw_fn_name(e[i].fn) ? mw_fn_name(e[i].fn) : "other");
        cJSON_AddNumberToObject(o, "slot",
                                e[i].fn ? mw_model_slot(app->model, e[i].fn) : MW_PALETTE);
        cJSON_AddNumberToObject(o, "share", e[i].share);
        cJSON_AddNumberToObject(o, "row", i);
        int rgb[3] = {(int)(e[i].color.r * 255.0f + 0.5f), (int)(e[i].color.g * 255.0f + 0.5f),
                      (int)(e[i].color.b * 255.0f + 0.5f)};
        cJSON_AddItemToObject(o, "color", cJSON_CreateIntArray(rgb, 3));
        cJSON_AddItemToArray(leg, o);
    }

    const char *hfn = v->highlight_fn ? mw_fn_name(v->highlight_fn) : NULL;
    if (hfn)
        cJSON_AddStringToObject(root, "highlight_fn", hfn);
    else
        cJSON_AddNullToObject(root, "highlight_fn");
    cJSON_AddNumberToObject(root, "highlight_rank", (double)v->highlight_rank);
    if (app->pick.kind != MW_PICK_NONE)
        cJSON_AddItemToObject(root, "pick", json_pick(app, &app->pick));

    mw_model_stats_t s;
    mw_model_stats(app->model, &s);
    cJSON *st = cJSON_AddObjectToObject(root, "stats");
    (void)mw_json_add_u64(st, "windows", s.windows);
    (void)mw_json_add_u64(st, "partial", s.partial);
    (void)mw_json_add_u64(st, "samples_dropped", s.samples_dropped);
    (void)mw_json_add_u64(st, "windows_refused", s.refused);
    cJSON_AddNumberToObject(st, "ranks_reporting", s.ranks_reporting);
    cJSON_AddNumberToObject(st, "ranks", s.ranks);
    (void)mw_json_add_u64(st, "cached_windows", mw_model_cached_windows(app->model));
    (void)mw_json_add_u64(st, "cached_bytes", mw_model_cached_bytes(app->model));
    return root;
}

static cJSON *json_rgb(mw_rgb_t c)
{
    int rgb[3] = {(int)(c.r * 255.0f + 0.5f), (int)(c.g * 255.0f + 0.5f),
                  (int)(c.b * 255.0f + 0.5f)};
    return cJSON_CreateIntArray(rgb, 3);
}

static void json_scale(cJSON *o, const char *key, const mw_scale_t *s)
{
    cJSON *j = cJSON_AddObjectToObject(o, key);
    cJSON_AddNumberToObject(j, "min", s->min);
    cJSON_AddNumberToObject(j, "max", s->max);
    cJSON_AddBoolToObject(j, "log", s->log && !s->ranks);
    cJSON_AddBoolToObject(j, "ranks", s->ranks);
    cJSON_AddItemToObject(j, "min_rgb", json_rgb(s->ranks ? mw_hue_ramp(0) : mw_ramp(0)));
    cJSON_AddItemToObject(j, "max_rgb", json_rgb(s->ranks ? mw_hue_ramp(1) : mw_ramp(1)));
}

/* Where a test can find the drawn lines: for up to 64 lines (or bundles) spread over the list,
 * the pixel of a point in the middle of a dash, at full brightness, and its color. */
#define SAMPLE_T 0.5214f
static void json_topo_samples(mw_app_t *app, cJSON *o, int bundled)
{
    mw_topo_gl_t *t = &app->tp;
    cJSON *arr = cJSON_AddArrayToObject(o, "samples");
    size_t n = bundled ? t->lines.n_bundles : t->lines.n_lines;
    size_t want = n < 64 ? n : 64;
    for (size_t k = 0; k < want; k++) {
        size_t i = k * n / want;
        mw_rgb_t c = mw_scale_color(&t->scale, mw_topo_line_value(&t->lines, bundled, i, t->color));
        mw_topo_curve_t cv[2];
        if (mw_topo_curves(&t->layout, &t->lines, bundled, i, t->periodic, c, cv) != 1)
            continue;
        float p[3], x, y;
        mw_topo_curve_point(&cv[0], SAMPLE_T, p);
        if (!mw_camera_project(t->mvp, p, t->region.w, t->region.h, &x, &y))
            continue;
        cJSON *e = cJSON_CreateObject();
        if (bundled) {
            cJSON_AddNumberToObject(e, "a", t->lines.bundles[i].a);
            cJSON_AddNumberToObject(e, "b", t->lines.bundles[i].b);
            (void)mw_json_add_u64(e, "messages", t->lines.bundles[i].messages);
            (void)mw_json_add_u64(e, "bytes", t->lines.bundles[i].bytes);
        } else {
            cJSON_AddNumberToObject(e, "src", t->lines.lines[i].src);
            cJSON_AddNumberToObject(e, "dst", t->lines.lines[i].dst);
            (void)mw_json_add_u64(e, "messages", t->lines.lines[i].messages);
            (void)mw_json_add_u64(e, "bytes", t->lines.lines[i].bytes);
        }
        cJSON_AddBoolToObject(e, "inter", cv[0].inter > 0.5f);
        cJSON_AddBoolToObject(e, "drawn", !bundled || !t->bundle_keep || t->bundle_keep[i]);
        cJSON_AddNumberToObject(e, "x", (double)((float)t->region.x + x));
        cJSON_AddNumberToObject(e, "y", (double)((float)t->region.y + y));
        cJSON_AddItemToObject(e, "rgb", json_rgb(c));
        cJSON_AddItemToArray(arr, e);
    }
}

static void json_topology(mw_app_t *app, cJSON *root)
{
    mw_topo_gl_t *t = &app->tp;
    cJSON *o = cJSON_AddObjectToObject(root, "topology");
    cJSON_AddStringToObject(o, "view", app->show == MW_SHOW_MATRIX ? "matrix" : "topology");
    cJSON_AddStringToObject(o, "what", t->what);
    cJSON_AddBoolToObject(o, "step_mode", t->step_mode);
    cJSON_AddBoolToObject(o, "have_data", t->have_data);
    uint64_t oldest = 0, newest = 0;
    if (!t->step_mode && mw_model_extent(app->model, &oldest, &newest) == 0) {
        (void)mw_json_add_u64(o, "window_index", t->window);
        (void)mw_json_add_u64(o, "window", t->window - oldest);
    }
    const Mpiwatch__Step *st = t->step_mode ? mw_model_step_at(app->model, t->step_idx) : NULL;
    if (st)
        (void)mw_json_add_u64(o, "step", st->step);
    cJSON_AddNumberToObject(o, "steps_kept", (double)mw_model_step_count(app->model));
    cJSON *lay = cJSON_AddObjectToObject(o, "layout");
    cJSON_AddNumberToObject(lay, "nodes", (double)t->layout.n_nodes);
    cJSON_AddNumberToObject(lay, "ranks", t->layout.n_ranks);
    cJSON_AddBoolToObject(lay, "fallback", t->layout.fallback);
    static const char *const tn[MW_TOPO_TYPES] = {"planes", "packages", "l3",
                                                  "cores",  "pus",      "numa"};
    for (int i = 0; i < MW_TOPO_TYPES; i++)
        cJSON_AddNumberToObject(lay, tn[i], (double)t->layout.boxes_of_type[i]);
    const mw_topo_lines_t *L = &t->lines;
    cJSON *ln = cJSON_AddObjectToObject(o, "lines");
    cJSON_AddNumberToObject(ln, "pairs", (double)L->n_lines);
    cJSON_AddNumberToObject(ln, "intra", (double)L->intra);
    cJSON_AddNumberToObject(ln, "inter", (double)L->inter);
    cJSON_AddNumberToObject(ln, "periodic", (double)L->periodic);
    cJSON_AddNumberToObject(ln, "dropped", (double)L->dropped);
    cJSON_AddNumberToObject(ln, "intra_node", (double)L->by_class[MW_LINK_INTRA_NODE]);
    cJSON_AddNumberToObject(ln, "intra_switch", (double)L->by_class[MW_LINK_INTRA_SWITCH]);
    cJSON_AddNumberToObject(ln, "inter_switch", (double)L->by_class[MW_LINK_INTER_SWITCH]);
    if (t->layout.network) {
        /* The network: the switches drawn and each node's switch (docs/topology.md). */
        cJSON *nw = cJSON_AddObjectToObject(o, "network");
        cJSON_AddNumberToObject(nw, "node_gap", t->layout.node_gap);
        cJSON_AddNumberToObject(nw, "group_gap", t->layout.group_gap);
        cJSON_AddStringToObject(nw, "planes",
                                t->plane_color == MW_PLANES_BY_SWITCH ? "switch"
                                : t->plane_color == MW_PLANES_BY_NODE ? "node"
                                                                      : "plain");
        cJSON *sws = cJSON_AddArrayToObject(nw, "switches");
        for (size_t i = 0; i < t->layout.n_switches; i++) {
            const mw_topo_switch_t *s = &t->layout.switches[i];
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "name", s->name);
            cJSON_AddNumberToObject(e, "level", s->level);
            cJSON_AddStringToObject(e, "parent",
                                    s->parent >= 0 ? t->layout.switches[s->parent].name : "");
            cJSON_AddNumberToObject(e, "nodes", s->nodes);
            cJSON_AddBoolToObject(e, "unknown", s->source < 0);
            /* Where the middle of its top face is drawn, and in which colour (0-255). */
            float rgb[3], top[3] = {(s->lo[0] + s->hi[0]) / 2, s->hi[1], (s->lo[2] + s->hi[2]) / 2},
                          sx, sy;
            mw__topo_switch_rgb(t, i, rgb);
            cJSON *col = cJSON_AddArrayToObject(e, "color");
            for (int c = 0; c < 3; c++)
                cJSON_AddItemToArray(col, cJSON_CreateNumber((int)(rgb[c] * 255.0f + 0.5f)));
            if (mw_camera_project(t->mvp, top, t->region.w, t->region.h, &sx, &sy)) {
                cJSON *sc = cJSON_AddArrayToObject(e, "screen");
                cJSON_AddItemToArray(sc, cJSON_CreateNumber(sx + (float)t->region.x));
                cJSON_AddItemToArray(sc, cJSON_CreateNumber(sy + (float)t->region.y));
            }
            cJSON *b = cJSON_AddArrayToObject(e, "box");
            for (int c = 0; c < 3; c++)
                cJSON_AddItemToArray(b, cJSON_CreateNumber(s->lo[c]));
            for (int c = 0; c < 3; c++)
                cJSON_AddItemToArray(b, cJSON_CreateNumber(s->hi[c]));
            cJSON_AddItemToArray(sws, e);
        }
        cJSON *nsw = cJSON_AddObjectToObject(nw, "node_switch");
        for (size_t g = 0; g < t->layout.n_nodes; g++) {
            int32_t s = t->layout.nodes[g].sw;
            cJSON_AddStringToObject(nsw, t->layout.nodes[g].name,
                                    s >= 0 ? t->layout.switches[s].name : "");
        }
        cJSON *planes = cJSON_AddArrayToObject(nw, "planes_x");
        for (size_t g = 0; g < t->layout.n_nodes; g++) {
            cJSON *p = cJSON_CreateArray();
            cJSON_AddItemToArray(p, cJSON_CreateNumber(t->layout.nodes[g].lo[0]));
            cJSON_AddItemToArray(p, cJSON_CreateNumber(t->layout.nodes[g].hi[0]));
            cJSON_AddItemToArray(p, cJSON_CreateNumber(t->layout.nodes[g].lo[2]));
            cJSON_AddItemToArray(p, cJSON_CreateNumber(t->layout.nodes[g].hi[2]));
            cJSON_AddItemToArray(planes, p);
        }
    }
    (void)mw_json_add_u64(ln, "messages", L->messages);
    (void)mw_json_add_u64(ln, "bytes", L->bytes);
    cJSON *bd = cJSON_AddObjectToObject(o, "bundles");
    cJSON_AddNumberToObject(bd, "count", (double)L->n_bundles);
    cJSON_AddNumberToObject(bd, "intra", (double)L->bundles_intra);
    cJSON_AddNumberToObject(bd, "inter", (double)L->bundles_inter);
    uint64_t bm = 0, bb = 0;
    for (size_t i = 0; i < L->n_bundles; i++) {
        bm += L->bundles[i].messages;
        bb += L->bundles[i].bytes;
    }
    (void)mw_json_add_u64(bd, "messages", bm);
    (void)mw_json_add_u64(bd, "bytes", bb);
    cJSON_AddStringToObject(o, "color", mw_topo_color_name(t->color));
    cJSON_AddStringToObject(o, "bundles_mode", t->bundles < 0 ? "auto" : t->bundles ? "on" : "off");
    cJSON_AddBoolToObject(o, "periodic", t->periodic);
    cJSON_AddItemToObject(o, "region", json_rect(&t->region));
    cJSON_AddItemToObject(o, "legend_bar", json_rect(&t->legend_bar));
    if (app->show == MW_SHOW_TOPOLOGY) {
        cJSON_AddBoolToObject(o, "bundled", t->bundled);
        cJSON_AddNumberToObject(o, "curves", (double)t->curves);
        cJSON_AddNumberToObject(o, "labels", t->labels_drawn);
        json_scale(o, "scale", &t->scale);
        json_scale(o, "rank_scale", &t->rank_scale);
        cJSON_AddItemToObject(o, "rank_bar", json_rect(&t->rank_bar));
        cJSON *cam = cJSON_AddObjectToObject(o, "camera");
        cJSON_AddNumberToObject(cam, "yaw", t->cam.yaw);
        cJSON_AddNumberToObject(cam, "pitch", t->cam.pitch);
        cJSON_AddNumberToObject(cam, "distance", t->cam.distance);
        cJSON_AddNumberToObject(cam, "px_per_unit", mw_camera_px_per_unit(&t->cam, t->region.h));
        json_topo_samples(app, o, t->bundled);
        /* Level of detail (large jobs): the bundles drawn of all, the lightest drawn and the
         * heaviest left out (by messages, or bytes when coloured by bytes), and the rank
         * markers aggregated per cell of a node. */
        cJSON *lod = cJSON_AddObjectToObject(o, "lod");
        uint64_t min_drawn = UINT64_MAX, max_out = 0;
        for (size_t i = 0; t->bundled && t->bundle_keep && i < t->lines.n_bundles; i++) {
            const mw_topo_bundle_t *b = &t->lines.bundles[i];
            uint64_t wt = t->color == MW_TOPO_COLOR_BYTES ? b->bytes : b->messages;
            if (t->bundle_keep[i])
                min_drawn = wt < min_drawn ? wt : min_drawn;
            else
                max_out = wt > max_out ? wt : max_out;
        }
        cJSON_AddNumberToObject(lod, "bundles_drawn", (double)(t->bundled ? t->bundles_drawn : 0));
        cJSON_AddNumberToObject(lod, "bundles_left_out", (double)t->bundles_over);
        (void)mw_json_add_u64(lod, "lightest_drawn", min_drawn == UINT64_MAX ? 0 : min_drawn);
        (void)mw_json_add_u64(lod, "heaviest_left_out", max_out);
        cJSON_AddNumberToObject(lod, "rank_markers_aggregated", (double)t->n_agg);
        cJSON_AddBoolToObject(lod, "aggregated_drawn", t->agg_drawn);
    } else {
        cJSON *m = cJSON_AddObjectToObject(root, "matrix");
        mw_scale_t sc = mw__matrix_scale(&app->tp);
        cJSON_AddNumberToObject(m, "bins", t->mx.bins);
        cJSON_AddNumberToObject(m, "ranks", t->mx.n_ranks);
        cJSON_AddStringToObject(m, "quantity", t->mx_bytes ? "bytes" : "messages");
        cJSON_AddItemToObject(m, "plot", json_rect(&t->mx_plot));
        json_scale(m, "scale", &sc);
        cJSON_AddNumberToObject(m, "cells_used", (double)t->mx.cells_used);
        cJSON_AddItemToObject(m, "node_edges",
                              cJSON_CreateIntArray(t->mx.node_edges, t->mx.n_edges));
        cJSON_AddNumberToObject(m, "node_edges_every", t->mx_edge_every);
        uint64_t tm = 0, tb = 0;
        for (size_t i = 0; i < (size_t)t->mx.bins * (size_t)t->mx.bins; i++) {
            tm += t->mx.messages[i];
            tb += t->mx.bytes[i];
        }
        (void)mw_json_add_u64(m, "messages", tm);
        (void)mw_json_add_u64(m, "bytes", tb);
    }
}

static uint64_t job_window_ns(const mw_app_t *app)
{
    const Mpiwatch__JobInfo *job = mw_model_job(app->model);
    return job ? job->window_ns : 0;
}

static const char *event_kind_name(const mw_event_t *e)
{
    return e->kind_name;
}

static const char *control_state_name(mw_control_state_t s)
{
    switch (s) {
    case MW_CONTROL_WAITING:
        return "waiting";
    case MW_CONTROL_SENT:
        return "sent";
    case MW_CONTROL_REJECTED:
        return "rejected";
    case MW_CONTROL_INVALID:
        return "invalid";
    case MW_CONTROL_NO_REPLY:
        return "no_reply";
    default:
        return "idle";
    }
}

/* The events the model keeps, where their markers are drawn, and the events list as shown;
 * the --steer requests and their results. */
static void json_events(mw_app_t *app, cJSON *root)
{
    const mw_layout_t *l = &app->layout;
    cJSON *o = cJSON_AddObjectToObject(root, "events");
    mw_event_counts_t ec;
    mw_model_event_counts(app->model, &ec);
    (void)mw_json_add_u64(o, "total", ec.total);
    (void)mw_json_add_u64(o, "rules", ec.by_kind[MW_EVENT_RULE]);
    (void)mw_json_add_u64(o, "steers", ec.by_kind[MW_EVENT_STEER]);
    (void)mw_json_add_u64(o, "dropped", ec.dropped);
    cJSON_AddNumberToObject(o, "kept", (double)mw_model_event_count(app->model));
    cJSON_AddItemToObject(o, "panel", json_rect(&l->events));
    int dash[2] = {MW_STEER_DASH_ON, MW_STEER_DASH};
    cJSON_AddItemToObject(o, "dash", cJSON_CreateIntArray(dash, 2));
    static mw_event_marker_t tm[MW_EVENTS_MAX], dm[MW_EVENTS_MAX];
    mw_view_ctx_t vc;
    mw__app_view_ctx(app, &vc);
    int ntm =
        l->show_timeline && !mw__app_topo(app)
            ? mw__event_markers(&vc, &l->timeline, app->view.t0, app->view.t1, tm, MW_EVENTS_MAX)
            : 0;
    double f0 = 0, f1 = 0;
    mw_view_focus(&app->view, &f0, &f1);
    int ndm = l->show_density && !mw__app_topo(app)
                  ? mw__event_markers(&vc, &l->density, f0, f1, dm, MW_EVENTS_MAX)
                  : 0;
    cJSON *list = cJSON_AddArrayToObject(o, "list");
    for (size_t i = 0; i < mw_model_event_count(app->model); i++) {
        const mw_event_t *e = mw_model_event_at(app->model, i);
        cJSON *j = cJSON_CreateObject();
        (void)mw_json_add_u64(j, "seq", e->seq);
        cJSON_AddStringToObject(j, "kind", event_kind_name(e));
        cJSON_AddStringToObject(j, "detail", e->detail);
        (void)mw_json_add_u64(j, "real_ns", e->real_ns);
        double t = 0;
        uint64_t w = 0;
        if (mw_model_event_time(app->model, e, &t, &w) == 0) {
            cJSON_AddNumberToObject(j, "t", t);
            (void)mw_json_add_u64(j, "window", w);
            uint64_t origin_w = job_window_ns(app)
                                    ? mw_model_window_at(app->model, mw_model_origin_ns(app->model))
                                    : 0;
            (void)mw_json_add_u64(j, "run_window", w >= origin_w ? w - origin_w : 0);
        } else {
            cJSON_AddNullToObject(j, "t");
            cJSON_AddNullToObject(j, "window");
        }
        if (e->kind == MW_EVENT_RULE || e->kind == MW_EVENT_ACTION_EXIT)
            cJSON_AddStringToObject(j, "rule", e->rule);
        if (e->has_value)
            cJSON_AddNumberToObject(j, "value", e->value);
        if (e->kind == MW_EVENT_RULE)
            cJSON_AddNumberToObject(j, "rank", (double)e->rank);
        if (e->steer_after)
            (void)mw_json_add_u64(j, "steer_after", e->steer_after);
        /* Its markers: the pixel column of the line and the color drawn there. */
        for (int k = 0; k < 2; k++) {
            const mw_event_marker_t *m = k ? dm : tm;
            int n = k ? ndm : ntm;
            for (int q = 0; q < n; q++) {
                if (m[q].e != e)
                    continue;
                cJSON *mk = cJSON_AddObjectToObject(j, k ? "density_marker" : "timeline_marker");
                cJSON_AddNumberToObject(mk, "x", m[q].x);
                cJSON_AddNumberToObject(mk, "px", (double)(int)m[q].x);
                unsigned c = m[q].color;
                int rgb[3] = {(int)(c >> 16) & 255, (int)(c >> 8) & 255, (int)c & 255};
                cJSON_AddItemToObject(mk, "rgb", cJSON_CreateIntArray(rgb, 3));
                cJSON_AddBoolToObject(mk, "dashed", e->kind != MW_EVENT_RULE);
            }
        }
        cJSON_AddItemToArray(list, j);
    }
    static char lines[MW_EVENTS_MAX][320];
    int kinds[MW_EVENTS_MAX];
    int n = mw__event_lines(&vc, lines, kinds, MW_EVENTS_MAX);
    cJSON *shown = cJSON_AddArrayToObject(o, "lines");
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(shown, cJSON_CreateString(lines[i]));

    {
        /* The tier of what is shown and the status bar as drawn (panels.c). */
        mw_source_status_t sst;
        mw_source_status(app->src, &sst);
        const char *text;
        float x0, x1;
        mw__panels_status_drawn(&text, &x0, &x1);
        cJSON *so = cJSON_AddObjectToObject(root, "status");
        cJSON_AddStringToObject(so, "tier", sst.tier);
        cJSON_AddStringToObject(so, "text", text);
        cJSON_AddNumberToObject(so, "tier_x0", (double)x0);
        cJSON_AddNumberToObject(so, "tier_x1", (double)x1);
    }
    if (app->ctl)
        cJSON_AddStringToObject(root, "control", mw_control_endpoint(app->ctl));
    else
        cJSON_AddNullToObject(root, "control");
    cJSON *st = cJSON_AddArrayToObject(root, "steer");
    for (int i = 0; i < app->steer_done && i < MW_STEER_OPTS_MAX; i++) {
        const mw_control_result_t *r = &app->steer_res[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "option", app->opt.steer[i]);
        cJSON_AddStringToObject(j, "request", r->request);
        cJSON_AddStringToObject(j, "state", control_state_name(r->state));
        (void)mw_json_add_u64(j, "seq", r->seq);
        cJSON_AddStringToObject(j, "text", r->text);
        cJSON_AddItemToArray(st, j);
    }
}

static int write_meta(mw_app_t *app, const char *path)
{
    cJSON *root = json_meta(app);
    if (root)
        json_events(app, root);
    if (root && mw__app_topo(app))
        json_topology(app, root);
    if (root)
        mw__regions_meta(app, root);
    if (root && app->show == MW_SHOW_TERRAIN) {
        mw_view_ctx_t vc;
        mw__app_view_ctx(app, &vc);
        mw__terrain_meta(&vc, &app->te, root);
    }
    char *s = root ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (!s) {
        fprintf(stderr, "mpiwatch-viewer: out of memory writing %s\n", path);
        return -1;
    }
    size_t len = strlen(s);
    s[len] = '\n'; /* cJSON_Print's terminator becomes the file's final newline */
    char err[512];
    int rc = mw_file_write_atomic(path, s, len + 1, err, sizeof err);
    free(s);
    if (rc != 0)
        fprintf(stderr, "mpiwatch-viewer: %s\n", err);
    return rc;
}

/* ---- snapshot and benchmark --------------------------------------------------------------- */

/* Acts as a left click at --pick and prints what it found; waits for a picked rank's calls. */
/* --pick in the topology and matrix views: prints what is under the pixel. */
static int snapshot_topo_pick(mw_app_t *app)
{
    mw_topo_gl_t *t = &app->tp;
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return -1;
    mw_view_ctx_t vc;
    mw__app_view_ctx(app, &vc);
    app->dirty = 1;
    if (app->show == MW_SHOW_MATRIX) {
        mw__matrix_pick(&vc, t, app->opt.pick_x, app->opt.pick_y);
        if (t->mx_pick) {
            uint32_t s0, s1, d0, d1;
            mw_matrix_bin_ranks(&t->mx, t->mx_src_bin, &s0, &s1);
            mw_matrix_bin_ranks(&t->mx, t->mx_dst_bin, &d0, &d1);
            size_t c = (size_t)t->mx_src_bin * (size_t)t->mx.bins + (size_t)t->mx_dst_bin;
            cJSON_AddStringToObject(o, "kind", "matrix");
            cJSON_AddNumberToObject(o, "src0", s0);
            cJSON_AddNumberToObject(o, "src1", s1);
            cJSON_AddNumberToObject(o, "dst0", d0);
            cJSON_AddNumberToObject(o, "dst1", d1);
            (void)mw_json_add_u64(o, "messages", t->mx.messages[c]);
            (void)mw_json_add_u64(o, "bytes", t->mx.bytes[c]);
        } else {
            cJSON_AddStringToObject(o, "kind", "none");
        }
    } else {
        mw_topo_pick_t p = mw__topo_pick(&vc, t, app->opt.pick_x, app->opt.pick_y);
        if (p.kind == MW_TOPO_PICK_RANK) {
            cJSON_AddStringToObject(o, "kind", "rank");
            cJSON_AddNumberToObject(o, "rank", p.rank);
            if (t->lines.n_ranks > p.rank) {
                (void)mw_json_add_u64(o, "messages", t->lines.rank_messages[p.rank]);
                (void)mw_json_add_u64(o, "bytes", t->lines.rank_bytes[p.rank]);
            }
        } else if (p.kind == MW_TOPO_PICK_LINE) {
            const mw_topo_line_t *l = &t->lines.lines[p.index];
            cJSON_AddStringToObject(o, "kind", "line");
            cJSON_AddNumberToObject(o, "src", l->src);
            cJSON_AddNumberToObject(o, "dst", l->dst);
            cJSON_AddBoolToObject(o, "inter", l->inter);
            (void)mw_json_add_u64(o, "messages", l->messages);
            (void)mw_json_add_u64(o, "bytes", l->bytes);
        } else if (p.kind == MW_TOPO_PICK_BUNDLE) {
            const mw_topo_bundle_t *b = &t->lines.bundles[p.index];
            cJSON_AddStringToObject(o, "kind", "bundle");
            cJSON_AddNumberToObject(o, "a", b->a);
            cJSON_AddNumberToObject(o, "b", b->b);
            cJSON_AddNumberToObject(o, "pairs", b->pairs);
            (void)mw_json_add_u64(o, "messages", b->messages);
            (void)mw_json_add_u64(o, "bytes", b->bytes);
        } else {
            cJSON_AddStringToObject(o, "kind", "none");
        }
    }
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!s)
        return -1;
    printf("%s\n", s);
    fflush(stdout);
    free(s);
    return 0;
}

static int snapshot_pick(mw_app_t *app)
{
    if (mw__app_topo(app))
        return snapshot_topo_pick(app);
    mw_pick_t p = mw__app_pick(app, app->opt.pick_x, app->opt.pick_y);
    if (p.kind == MW_PICK_CALL) {
        uint64_t deadline = mw__now_ns() + SNAPSHOT_TIMEOUT_S * 1000000000ull;
        for (;;) {
            if (mw__app_update(app, mw__now_ns()) < 0)
                return -1;
            snapshot_view(app);
            snapshot_need(app);
            if (!mw_source_rank_busy(app->src) && snapshot_ready(app))
                break;
            if (mw__now_ns() > deadline) {
                fprintf(stderr,
                        "mpiwatch-viewer: the calls of rank %" PRIu32 " did not arrive in time\n",
                        p.rank);
                return -1;
            }
            mw_source_wait(app->src, SNAPSHOT_WAIT_MS);
        }
    }
    cJSON *o = json_pick(app, &p);
    char *s = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!s) {
        fprintf(stderr, "mpiwatch-viewer: out of memory printing the pick\n");
        return -1;
    }
    printf("%s\n", s);
    fflush(stdout);
    free(s);
    return 0;
}

/* --steer: sends the requests (mw__app_steer does, from mw__app_update) and waits for their
 * results; then, live, for their steer events to come back on the feed so that the snapshot
 * shows them. Returns 0 when every request was sent. */
static int snapshot_steer(mw_app_t *app)
{
    int n = app->opt.n_steer;
    if (!n)
        return 0;
    uint64_t deadline = mw__now_ns() + (uint64_t)n * (MW_CONTROL_TIMEOUT_MS + 1000) * 1000000ull;
    while (app->steer_done < n) {
        if (mw__app_update(app, mw__now_ns()) < 0)
            return -1;
        if (app->steer_done >= n)
            break;
        if (mw__now_ns() > deadline) { /* cannot happen: every request times out before */
            fprintf(stderr, "mpiwatch-viewer: the --steer requests did not finish\n");
            return -1;
        }
        if (app->ctl)
            mw_control_wait(app->ctl, SNAPSHOT_WAIT_MS);
    }
    uint64_t sent = (uint64_t)(app->steer_done - app->steer_failed);
    deadline = mw__now_ns() + 3000000000ull;
    for (;;) {
        mw_event_counts_t ec;
        mw_model_event_counts(app->model, &ec);
        if (ec.by_kind[MW_EVENT_STEER] >= app->steer_events0 + sent || mw__now_ns() > deadline)
            break;
        mw_source_wait(app->src, SNAPSHOT_WAIT_MS);
        if (mw__app_update(app, mw__now_ns()) < 0)
            return -1;
    }
    /* Following, the timeline ends at the newest window, which closes a little after the
     * message was published: wait for the windows to reach it, so that its marker is drawn. */
    size_t ne = mw_model_event_count(app->model);
    const mw_event_t *last = ne ? mw_model_event_at(app->model, ne - 1) : NULL;
    double t = 0;
    while (sent && last && app->view.follow &&
           mw_model_event_time(app->model, last, &t, NULL) == 0 && app->view.t1 < t &&
           mw__now_ns() < deadline) {
        mw_source_wait(app->src, SNAPSHOT_WAIT_MS);
        if (mw__app_update(app, mw__now_ns()) < 0)
            return -1;
    }
    return app->steer_failed ? 1 : 0;
}

int mw__snapshot_run(mw_app_t *app)
{
    if (snapshot_load(app) < 0)
        return 1;
    int steer = snapshot_steer(app);
    if (steer < 0)
        return 1;
    /* New events may have moved the view (following): load what it needs now. */
    if (app->opt.n_steer && snapshot_load(app) < 0)
        return 1;
    mw__app_layout(app);
    if (app->opt.pick_given && snapshot_pick(app) < 0)
        return 1;
    /* MPIWATCH_VIEWER_HELP=1 draws the help overlay too, so that it can be looked at and
     * tested like every other part of the screen. */
    const char *help = getenv("MPIWATCH_VIEWER_HELP");
    if (help && !strcmp(help, "1"))
        app->view.show_help = 1;
    /* MPIWATCH_VIEWER_PROMPT=TEXT draws the steering prompt open with TEXT typed, likewise. */
    const char *prompt = getenv("MPIWATCH_VIEWER_PROMPT");
    if (prompt)
        mw__app_prompt(app, prompt);
    mw__app_layout(app);
    mw__app_render(app);
    glFinish();
    if (mw__gl_check("snapshot rendering") < 0)
        return 1;
    if (mw__write_png(app->opt.snapshot, app->fb_w, app->fb_h) < 0)
        return 1;
    if (app->opt.meta && write_meta(app, app->opt.meta) < 0)
        return 1;
    return steer;
}

/* The calls of the call view's range: every call counted once, by the sub-slot it ended in. */
static double bench_calls(mw_app_t *app)
{
    const Mpiwatch__JobInfo *job = mw_model_job(app->model);
    uint64_t oldest = 0, newest = 0;
    if (!job || !job->window_ns || !job->subslots ||
        mw_model_extent(app->model, &oldest, &newest) != 0)
        return 0;
    double f0 = 0, f1 = 0;
    mw_view_focus(&app->view, &f0, &f1);
    uint64_t origin = mw_model_origin_ns(app->model);
    double g0 = (double)origin + (f0 > 0 ? f0 : 0) * 1e9, g1 = (double)origin + f1 * 1e9;
    uint64_t first = mw_model_window_at(app->model, (uint64_t)g0);
    uint64_t last = g1 > 0 ? mw_model_window_at(app->model, (uint64_t)g1) : 0;
    double calls = 0;
    for (uint64_t k = first; k <= last; k++) {
        const Mpiwatch__Window *w = mw_model_window(app->model, k);
        if (!w)
            continue;
        size_t n = w->n_density_count;
        if (w->n_density_end < n || w->n_density_sub < n)
            continue;
        for (size_t i = 0; i < n; i++) {
            if (!w->density_end[i])
                continue;
            uint64_t wns = w->window_ns, sub = wns / job->subslots;
            double t = (double)mw_model_window_start(app->model, k) +
                       (double)w->density_sub[i] * (double)sub;
            if (t >= g0 && t < g1)
                calls += (double)w->density_count[i];
        }
    }
    return calls;
}

int mw__bench_run(mw_app_t *app)
{
    if (snapshot_load(app) < 0)
        return 1;
    long n = app->opt.bench_frames;
    /* MW_BENCH_ORBIT=1: the topology's camera turns by a quarter of a degree every frame, so
     * that every frame draws the scene again (as while the user orbits), rather than copying
     * the last frame's image of an unchanged scene. */
    const char *orbit = getenv("MW_BENCH_ORBIT");
    int turn = orbit && !strcmp(orbit, "1");
    uint64_t t0 = mw__now_ns();
    for (long i = 0; i < n; i++) {
        if (turn)
            app->tp.cam.yaw += 0.25f;
        if (!app->headless) {
            SDL_Event ev;
            while (SDL_PollEvent(&ev))
                if (ev.type == SDL_QUIT)
                    n = i;
        }
        if (!app->headless) {
            int w = app->fb_w, h = app->fb_h;
            SDL_GL_GetDrawableSize(app->win, &w, &h);
            app->fb_w = w;
            app->fb_h = h;
        }
        mw__app_layout(app);
        mw__app_render(app);
        glFinish();
        if (!app->headless)
            SDL_GL_SwapWindow(app->win);
    }
    double s = (double)(mw__now_ns() - t0) * 1e-9;
    if (mw__gl_check("benchmark") < 0)
        return 1;
    if (mw__app_topo(app)) {
        printf("{\"frames\":%ld,\"seconds\":%.6f,\"fps\":%.2f,\"width\":%d,\"height\":%d,"
               "\"view\":\"%s\",\"ranks\":%" PRIu32 ",\"nodes\":%zu,\"boxes\":%zu,"
               "\"pairs\":%zu,\"bundled\":%d,\"curves\":%zu}\n",
               n, s, s > 0 ? (double)n / s : 0.0, app->fb_w, app->fb_h,
               app->show == MW_SHOW_MATRIX ? "matrix" : "topology", app->tp.layout.n_ranks,
               app->tp.layout.n_nodes, app->tp.layout.n_boxes, app->tp.lines.n_lines,
               app->tp.bundled, app->tp.curves);
        fflush(stdout);
        return 0;
    }
    printf("{\"frames\":%ld,\"seconds\":%.6f,\"fps\":%.2f,\"width\":%d,\"height\":%d,"
           "\"calls\":%.0f}\n",
           n, s, s > 0 ? (double)n / s : 0.0, app->fb_w, app->fb_h, bench_calls(app));
    fflush(stdout);
    return 0;
}
