/* snapshot_regions.c: the "regions" object of a snapshot's --meta: what the views drew of code
 * regions, call sites, per-function links and the spread across ranks (model_regions.h), so
 * that tests/viewer/snapshot_regions.sh compares the PNG with the known values.
 *
 * It holds the timeline's mode and clamped columns, the region legend as drawn (rows, colours,
 * shares), every cached window of the visible range with its share per region, the picked
 * function's call sites and spread, and in the topology and matrix views the ranks' region
 * times with the colour each rank's marker was given and where its top lands on the screen, and
 * the sending function of the links.
 */
#include <cjson/cJSON.h>
#include <stdio.h>

#include "mw_json.h"
#include "snapshot.h"
#include "views.h"

static cJSON *rgb_json(mw_rgb_t c)
{
    int rgb[3] = {(int)(c.r * 255.0f + 0.5f), (int)(c.g * 255.0f + 0.5f),
                  (int)(c.b * 255.0f + 0.5f)};
    return cJSON_CreateIntArray(rgb, 3);
}

static void json_sites(mw_app_t *app, cJSON *o, unsigned fn)
{
    const char *name = mw_fn_name(fn);
    cJSON_AddStringToObject(o, "fn", name ? name : "?");
    mw_site_row_t rows[16];
    uint64_t fn_ns = 0;
    int all = 0;
    int n = mw_fn_sites(app->model, app->view.t0, app->view.t1, fn, rows, 16, &fn_ns, &all);
    (void)mw_json_add_u64(o, "fn_ns", fn_ns);
    cJSON_AddNumberToObject(o, "n_sites", all);
    cJSON *a = cJSON_AddArrayToObject(o, "sites");
    for (int i = 0; i < n; i++) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddNumberToObject(j, "site", rows[i].site);
        cJSON_AddStringToObject(j, "function", rows[i].function);
        cJSON_AddStringToObject(j, "file", rows[i].file);
        cJSON_AddNumberToObject(j, "line", rows[i].line);
        (void)mw_json_add_u64(j, "count", rows[i].count);
        (void)mw_json_add_u64(j, "ns", rows[i].ns);
        cJSON_AddNumberToObject(j, "share", rows[i].share);
        cJSON_AddNumberToObject(j, "top_rank", rows[i].top_rank);
        (void)mw_json_add_u64(j, "top_rank_ns", rows[i].top_rank_ns);
        cJSON_AddItemToArray(a, j);
    }
    mw_fn_spread_t sp;
    if (mw_fn_spread(app->model, app->view.t0, app->view.t1, fn, &sp) > 0) {
        cJSON *s = cJSON_AddObjectToObject(o, "spread");
        cJSON_AddNumberToObject(s, "windows", sp.windows);
        cJSON_AddNumberToObject(s, "sd_ns", sp.sd_ns);
        cJSON_AddNumberToObject(s, "max_rank", sp.max_rank);
        (void)mw_json_add_u64(s, "max_ns", sp.max_ns);
        (void)mw_json_add_u64(s, "max_window", sp.max_window);
    }
}

static void json_topo(mw_app_t *app, cJSON *o)
{
    const mw_topo_gl_t *t = &app->tp;
    const mw_topo_regions_t *x = t->rx;
    if (!x)
        return;
    static const char *const modes[MW_RANKS_MODES] = {"mpi", "excl", "incl"};
    cJSON *j = cJSON_AddObjectToObject(o, "topology");
    const char *lf = x->set.link_fn ? mw_fn_name(x->set.link_fn) : NULL;
    if (lf)
        cJSON_AddStringToObject(j, "link_fn", lf);
    else
        cJSON_AddNullToObject(j, "link_fn");
    cJSON_AddNumberToObject(j, "lines", (double)t->lines.n_lines);
    (void)mw_json_add_u64(j, "messages", t->lines.messages);
    (void)mw_json_add_u64(j, "bytes", t->lines.bytes);
    cJSON_AddStringToObject(j, "ranks", modes[x->set.ranks % MW_RANKS_MODES]);
    if (x->set.ranks == MW_RANKS_DEFAULT)
        return;
    char name[96];
    cJSON_AddNumberToObject(j, "region", x->region);
    cJSON_AddStringToObject(j, "region_name",
                            mw_region_name(app->model, x->region, name, sizeof name));
    cJSON_AddNumberToObject(j, "scale_max", x->scale.max);
    cJSON_AddNumberToObject(j, "ranks_with_time", x->with);
    /* Each rank: its time, the colour its marker got, and where its top's centre is drawn. */
    cJSON *a = cJSON_AddArrayToObject(j, "rank_values");
    for (uint32_t r = 0; r < x->n_ranks && r < t->layout.n_ranks && r < 4096; r++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "rank", r);
        cJSON_AddNumberToObject(e, "ns", x->rank_ns[r]);
        if (x->rank_ns[r] > 0)
            cJSON_AddItemToObject(e, "rgb",
                                  rgb_json(mw_ramp(mw_scale_t01(&x->scale, x->rank_ns[r]))));
        const float *pos = t->layout.ranks[r].pos;
        float p[3] = {pos[0], pos[1] + MW_TOPO_MARKER_H, pos[2]}, px, py;
        if (app->show == MW_SHOW_TOPOLOGY &&
            mw_camera_project(t->mvp, p, t->region.w, t->region.h, &px, &py)) {
            cJSON_AddNumberToObject(e, "x", (double)(t->region.x + px));
            cJSON_AddNumberToObject(e, "y", (double)(t->region.y + py));
        }
        cJSON_AddItemToArray(a, e);
    }
}

void mw__regions_meta(mw_app_t *app, cJSON *root)
{
    cJSON *o = cJSON_AddObjectToObject(root, "regions");
    if (!o)
        return;
    const mw_layout_t *l = &app->layout;
    cJSON_AddBoolToObject(o, "timeline", app->rg.timeline);
    cJSON_AddNumberToObject(o, "clamped_columns", app->tl.regions ? app->tl.clamped : 0);
    cJSON_AddNumberToObject(o, "highlight", app->rg.highlight);
    /* The legend as panels.c draws it in region mode: row i + 1 of the legend rectangle. */
    mw_region_entry_t e[MW_LEGEND_MAX];
    int n = mw_region_legend(app->model, app->view.t0, app->view.t1, e,
                             l->legend_rows < MW_LEGEND_MAX ? l->legend_rows : MW_LEGEND_MAX);
    cJSON *lg = cJSON_AddArrayToObject(o, "legend");
    char name[96];
    for (int i = 0; i < n; i++) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddNumberToObject(j, "id", e[i].id);
        cJSON_AddStringToObject(j, "name", mw_region_name(app->model, e[i].id, name, sizeof name));
        cJSON_AddNumberToObject(j, "share", e[i].share);
        (void)mw_json_add_u64(j, "excl_ns", e[i].excl_ns);
        (void)mw_json_add_u64(j, "incl_ns", e[i].incl_ns);
        cJSON_AddItemToObject(j, "rgb", rgb_json(e[i].color));
        cJSON_AddNumberToObject(j, "row_y", l->legend.y + (i + 1) * l->legend_row_h);
        cJSON_AddItemToArray(lg, j);
    }
    /* The layers' colours (slot k: region k + 1, then grey). */
    cJSON *lc = cJSON_AddArrayToObject(o, "layer_rgb");
    for (int k = 0; k <= MW_PALETTE; k++)
        cJSON_AddItemToArray(lc, rgb_json(mw_region_color(k < MW_PALETTE ? (uint32_t)k + 1 : 0)));
    /* The cached windows of the visible range and their shares (unclamped). */
    cJSON *ws = cJSON_AddArrayToObject(o, "windows");
    uint64_t oldest = 0, newest = 0;
    if (mw_model_extent(app->model, &oldest, &newest) == 0) {
        for (uint64_t k = oldest; k <= newest && k - oldest < 4096; k++) {
            const Mpiwatch__Window *w = mw_model_window(app->model, k);
            if (!w)
                continue;
            double sh[MW_PALETTE + 1];
            double total = mw_region_window_shares(w, sh);
            cJSON *j = cJSON_CreateObject();
            (void)mw_json_add_u64(j, "run_window", k - oldest);
            cJSON_AddNumberToObject(
                j, "t0", mw_model_seconds(app->model, mw_model_window_start(app->model, k)));
            cJSON_AddNumberToObject(j, "total", total);
            cJSON *s = cJSON_AddArrayToObject(j, "shares");
            for (int q = 0; q <= MW_PALETTE; q++)
                cJSON_AddItemToArray(s, cJSON_CreateNumber(sh[q]));
            cJSON_AddItemToArray(ws, j);
        }
    }
    unsigned fn = app->pick.kind == MW_PICK_CALL || app->pick.kind == MW_PICK_CELL
                      ? app->pick.fn
                      : app->view.highlight_fn;
    if (fn)
        json_sites(app, cJSON_AddObjectToObject(o, "details"), fn);
    if (mw__app_topo(app))
        json_topo(app, o);
}
