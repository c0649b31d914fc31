/* model_terrain.c: the terrain's sums, columns, aggregation, geometry and picking
 * (model_terrain.h). */
#include "model_terrain.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "mw_limits.h"

/* Ids a column can have: function ids below MW_FN_SPACE, region ids 1..MW_JOB_MAX_REGIONS. */
#define ID_SPACE (MW_JOB_MAX_REGIONS + 1u > MW_FN_SPACE ? MW_JOB_MAX_REGIONS + 1u : MW_FN_SPACE)

struct mw_terrain {
    mw_terrain_info_t info;
    uint64_t sig;
    int valid;
    double *cell; /* ranks x ncols */
    size_t cell_cap;
    double *id_total; /* [ID_SPACE] */
    int *col_of;      /* [ID_SPACE]: column of an id, -1 none */
    /* The aggregation. */
    double *rv;
    uint32_t *ra;
    size_t r_cap;
    uint32_t r_rows, r_per;
    uint64_t r_gen, r_src_gen;
    uint32_t r_max;
    double r_vmax;
    int r_valid;
};

static const char *const metric_names[2][MW_TERRAIN_METRICS] = {
    {"time", "count", "bytes", NULL, NULL},
    {"exclusive time", "count", NULL, "inclusive time", "MPI time"}};

const char *mw_terrain_metric_name(mw_terrain_what_t what, mw_terrain_metric_t m)
{
    if ((unsigned)m >= MW_TERRAIN_METRICS)
        return "?";
    const char *s = metric_names[what == MW_TERRAIN_REGIONS][m];
    return s ? s : "?";
}

int mw_terrain_metric_valid(mw_terrain_what_t what, mw_terrain_metric_t m)
{
    return (unsigned)m < MW_TERRAIN_METRICS && metric_names[what == MW_TERRAIN_REGIONS][m];
}

mw_terrain_metric_t mw_terrain_metric_next(mw_terrain_what_t what, mw_terrain_metric_t m)
{
    /* Regions cycle exclusive → inclusive → count → MPI time. */
    static const mw_terrain_metric_t fn_order[] = {MW_TERRAIN_TIME, MW_TERRAIN_COUNT,
                                                   MW_TERRAIN_BYTES};
    static const mw_terrain_metric_t rg_order[] = {MW_TERRAIN_TIME, MW_TERRAIN_INCL,
                                                   MW_TERRAIN_COUNT, MW_TERRAIN_MPI};
    const mw_terrain_metric_t *o = what == MW_TERRAIN_REGIONS ? rg_order : fn_order;
    int n = what == MW_TERRAIN_REGIONS ? 4 : 3;
    for (int i = 0; i < n; i++)
        if (o[i] == m)
            return o[(i + 1) % n];
    return MW_TERRAIN_TIME;
}

int mw_terrain_metric_is_time(mw_terrain_metric_t m)
{
    return m == MW_TERRAIN_TIME || m == MW_TERRAIN_INCL || m == MW_TERRAIN_MPI;
}

int mw_terrain_parse(const char *s, mw_terrain_opts_t *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    char buf[128];
    if (!s || strlen(s) >= sizeof buf) {
        snprintf(err, errlen, "too long");
        return -1;
    }
    snprintf(buf, sizeof buf, "%s", s);
    int n = 0, metric_given = 0;
    for (char *save = NULL, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        if (n++ == 0 && (!strcmp(w, "functions") || !strcmp(w, "regions"))) {
            o->what = !strcmp(w, "regions") ? MW_TERRAIN_REGIONS : MW_TERRAIN_FUNCTIONS;
        } else if (!strcmp(w, "heatmap")) {
            o->heatmap = 1;
        } else if (!strcmp(w, "log")) {
            o->log = 1;
        } else if (!strcmp(w, "time") || !strcmp(w, "excl")) {
            o->metric = MW_TERRAIN_TIME;
            metric_given = 1;
        } else if (!strcmp(w, "count")) {
            o->metric = MW_TERRAIN_COUNT;
            metric_given = 1;
        } else if (!strcmp(w, "bytes")) {
            o->metric = MW_TERRAIN_BYTES;
            metric_given = 1;
        } else if (!strcmp(w, "incl")) {
            o->metric = MW_TERRAIN_INCL;
            metric_given = 1;
        } else if (!strcmp(w, "mpi")) {
            o->metric = MW_TERRAIN_MPI;
            metric_given = 1;
        } else {
            snprintf(err, errlen,
                     "'%s': expected functions|regions[,time|excl|incl|count|bytes|mpi]"
                     "[,heatmap][,log]",
                     w);
            return -1;
        }
    }
    if (metric_given && !mw_terrain_metric_valid(o->what, o->metric)) {
        snprintf(err, errlen, "that metric is not one of %s",
                 o->what == MW_TERRAIN_REGIONS ? "regions' (excl, incl, count, mpi)"
                                               : "functions' (time, count, bytes)");
        return -1;
    }
    return 0;
}

mw_terrain_t *mw_terrain_new(void)
{
    mw_terrain_t *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->id_total = calloc(ID_SPACE, sizeof *t->id_total);
    t->col_of = malloc(ID_SPACE * sizeof *t->col_of);
    if (!t->id_total || !t->col_of) {
        mw_terrain_free(t);
        return NULL;
    }
    return t;
}

void mw_terrain_free(mw_terrain_t *t)
{
    if (!t)
        return;
    free(t->cell);
    free(t->id_total);
    free(t->col_of);
    free(t->rv);
    free(t->ra);
    free(t);
}

const mw_terrain_info_t *mw_terrain_info(const mw_terrain_t *t)
{
    return &t->info;
}

double mw_terrain_value(const mw_terrain_t *t, uint32_t r, int c)
{
    if (!t->cell || r >= t->info.ranks || c < 0 || c >= t->info.ncols)
        return 0;
    return t->cell[(size_t)r * (size_t)t->info.ncols + (size_t)c];
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

/* One window's entries of the chosen kind: n entries, ranks, ids and the metric's values; 0
 * when the window has none, -1 when its arrays do not match (the entries are then counted as
 * bad). */
typedef struct {
    size_t n;
    const uint32_t *rank, *id;
    const uint64_t *val;
} entries_t;

static int window_entries(const Mpiwatch__Window *w, mw_terrain_what_t what,
                          mw_terrain_metric_t metric, entries_t *e)
{
    memset(e, 0, sizeof *e);
    if (what == MW_TERRAIN_FUNCTIONS) {
        size_t n = w->n_rf_rank;
        if (!n)
            return 0;
        const uint64_t *v = metric == MW_TERRAIN_COUNT   ? w->rf_count
                            : metric == MW_TERRAIN_BYTES ? w->rf_bytes
                                                         : w->rf_ns;
        size_t nv = metric == MW_TERRAIN_COUNT   ? w->n_rf_count
                    : metric == MW_TERRAIN_BYTES ? w->n_rf_bytes
                                                 : w->n_rf_ns;
        e->n = n;
        if (w->n_rf_fn != n || nv != n)
            return -1;
        e->rank = w->rf_rank;
        e->id = w->rf_fn;
        e->val = v;
        return 1;
    }
    size_t n = w->n_rr_rank;
    if (!n)
        return 0;
    const uint64_t *v = metric == MW_TERRAIN_COUNT  ? w->rr_count
                        : metric == MW_TERRAIN_INCL ? w->rr_incl_ns
                        : metric == MW_TERRAIN_MPI  ? w->rr_mpi_ns
                                                    : w->rr_excl_ns;
    size_t nv = metric == MW_TERRAIN_COUNT  ? w->n_rr_count
                : metric == MW_TERRAIN_INCL ? w->n_rr_incl_ns
                : metric == MW_TERRAIN_MPI  ? w->n_rr_mpi_ns
                                            : w->n_rr_excl_ns;
    e->n = n;
    if (w->n_rr_region != n || nv != n)
        return -1;
    e->rank = w->rr_rank;
    e->id = w->rr_region;
    e->val = v;
    return 1;
}

static int id_ok(mw_terrain_what_t what, uint32_t id)
{
    return what == MW_TERRAIN_FUNCTIONS ? id > 0 && id < MW_FN_SPACE
                                        : id > 0 && id <= MW_JOB_MAX_REGIONS;
}

/* The name of region `id` in the job's table (entry id - 1 normally; searched otherwise). */
static const char *region_name(const Mpiwatch__JobInfo *job, unsigned id)
{
    if (!job)
        return NULL;
    if (id >= 1 && id <= job->n_regions && job->regions[id - 1] && job->regions[id - 1]->id == id)
        return job->regions[id - 1]->name;
    for (size_t i = 0; i < job->n_regions; i++)
        if (job->regions[i] && job->regions[i]->id == id)
            return job->regions[i]->name;
    return NULL;
}

/* Columns by total, largest first; ties by id. */
static const double *sort_total;
static int by_total(const void *pa, const void *pb)
{
    unsigned a = *(const unsigned *)pa, b = *(const unsigned *)pb;
    if (sort_total[a] != sort_total[b])
        return sort_total[a] > sort_total[b] ? -1 : 1;
    return a < b ? -1 : a > b;
}

static void reset(mw_terrain_t *t)
{
    uint64_t gen = t->info.gen;
    memset(&t->info, 0, sizeof t->info);
    t->info.gen = gen + 1;
}

int mw_terrain_update(mw_terrain_t *t, const mw_model_t *m, double t0, double t1,
                      mw_terrain_what_t what, mw_terrain_metric_t metric)
{
    const Mpiwatch__JobInfo *job = m->job;
    if (!mw_terrain_metric_valid(what, metric))
        metric = MW_TERRAIN_TIME;
    if (!job || !job->size || !m->grid_set || !m->origin_set || !(t1 > t0)) {
        if (t->valid || t->info.ncols || t->sig != 1) {
            reset(t);
            t->info.what = what;
            t->info.metric = metric;
            t->valid = 0;
            t->sig = 1;
            return 1;
        }
        return 0;
    }
    /* The windows that hold [t0, t1): the one holding t1 only when t1 is inside it. */
    int64_t a = mw__index_of_time(m, t0), b = mw__index_of_time(m, t1 - 1e-12);
    if (a < 0)
        a = 0;
    if (b < a)
        b = a;
    if ((uint64_t)(b - a) >= MW_TERRAIN_MAX_WINDOWS)
        a = b - MW_TERRAIN_MAX_WINDOWS + 1; /* the newest of a very long range */
    uint64_t k0 = (uint64_t)a, k1 = (uint64_t)b;
    uint64_t sig = mix(mix(mix(mix(mix(7, k0), k1), job->size), (uint64_t)what), (uint64_t)metric);
    sig = mix(sig, (uint64_t)(uintptr_t)job);
    sig = mix(sig, job->n_regions);
    size_t p0 = 0, p1 = 0;
    mw__window_range(m, (int64_t)k0, (int64_t)k1, &p0, &p1);
    for (size_t i = p0; i < p1; i++) {
        sig = mix(sig, m->ent[i].index);
        sig = mix(sig, (uint64_t)(uintptr_t)m->ent[i].w);
    }
    if (t->valid && t->sig == sig)
        return 0;

    reset(t);
    t->sig = sig;
    t->valid = 1;
    mw_terrain_info_t *in = &t->info;
    in->what = what;
    in->metric = metric;
    in->k0 = k0;
    in->k1 = k1;
    in->ranks = job->size;
    uint32_t R = job->size;

    /* Pass 1: the totals per id choose the columns. */
    memset(t->id_total, 0, ID_SPACE * sizeof *t->id_total);
    for (size_t i = p0; i < p1; i++) {
        const Mpiwatch__Window *w = m->ent[i].w;
        in->windows++;
        in->left_out += w->rank_detail_left_out;
        entries_t e;
        int rc = window_entries(w, what, metric, &e);
        if (rc < 0)
            in->bad += e.n;
        if (rc <= 0)
            continue;
        in->detailed++;
        for (size_t j = 0; j < e.n; j++) {
            if (e.rank[j] >= R || !id_ok(what, e.id[j])) {
                in->bad++;
                continue;
            }
            t->id_total[e.id[j]] += (double)e.val[j];
        }
    }
    unsigned *ids = malloc(ID_SPACE * sizeof *ids);
    if (!ids) {
        t->valid = 0;
        return -1;
    }
    unsigned nid = 0;
    for (unsigned id = 1; id < ID_SPACE; id++)
        if (t->id_total[id] > 0)
            ids[nid++] = id;
    sort_total = t->id_total;
    qsort(ids, nid, sizeof *ids, by_total);
    for (unsigned id = 0; id < ID_SPACE; id++)
        t->col_of[id] = -1;
    int named = nid > MW_TERRAIN_COLS ? MW_TERRAIN_COLS : (int)nid;
    for (int c = 0; c < named; c++) {
        mw_terrain_col_t *col = &in->cols[c];
        col->id = ids[c];
        col->total = t->id_total[ids[c]];
        const char *nm =
            what == MW_TERRAIN_FUNCTIONS ? mw_fn_name(ids[c]) : region_name(job, ids[c]);
        if (nm && nm[0])
            snprintf(col->name, sizeof col->name, "%s", nm);
        else
            snprintf(col->name, sizeof col->name, "%s %u",
                     what == MW_TERRAIN_FUNCTIONS ? "function" : "region", ids[c]);
        t->col_of[ids[c]] = c;
    }
    in->ncols = named;
    if (nid > (unsigned)named) {
        mw_terrain_col_t *col = &in->cols[named];
        col->id = 0;
        for (unsigned i = (unsigned)named; i < nid; i++) {
            col->total += t->id_total[ids[i]];
            t->col_of[ids[i]] = named;
        }
        snprintf(col->name, sizeof col->name, "other (%u)", nid - (unsigned)named);
        in->other = 1;
        in->ncols = named + 1;
    }
    free(ids);
    for (int c = 0; c < in->ncols; c++)
        in->total += in->cols[c].total;
    if (!in->ncols)
        return 1;

    /* Pass 2: the per-rank sums. */
    size_t cells = (size_t)R * (size_t)in->ncols;
    if (cells > t->cell_cap) {
        double *c = realloc(t->cell, cells * sizeof *c);
        if (!c) {
            reset(t);
            t->valid = 0;
            return -1;
        }
        t->cell = c;
        t->cell_cap = cells;
    }
    memset(t->cell, 0, cells * sizeof *t->cell);
    for (size_t i = p0; i < p1; i++) {
        entries_t e;
        if (window_entries(m->ent[i].w, what, metric, &e) <= 0)
            continue;
        for (size_t j = 0; j < e.n; j++)
            if (e.rank[j] < R && id_ok(what, e.id[j]) && t->col_of[e.id[j]] >= 0)
                t->cell[(size_t)e.rank[j] * (size_t)in->ncols + (size_t)t->col_of[e.id[j]]] +=
                    (double)e.val[j];
    }
    /* The largest cells of named columns (ties: the lower rank, then column). */
    int nc = in->ncols, nn = in->other ? nc - 1 : nc;
    for (uint32_t r = 0; r < R; r++) {
        const double *row = t->cell + (size_t)r * (size_t)nc;
        for (int c = 0; c < nc; c++)
            if (row[c] > in->vmax)
                in->vmax = row[c];
        for (int c = 0; c < nn; c++) {
            double v = row[c];
            if (!(v > 0) || (in->ntop == MW_TERRAIN_TOP && v <= in->top[MW_TERRAIN_TOP - 1].value))
                continue;
            int k = in->ntop < MW_TERRAIN_TOP ? in->ntop++ : MW_TERRAIN_TOP - 1;
            while (k > 0 && in->top[k - 1].value < v) {
                in->top[k] = in->top[k - 1];
                k--;
            }
            in->top[k] = (mw_terrain_top_t){r, c, v};
        }
    }
    return 1;
}

/* ---- rows --------------------------------------------------------------------------------- */

int mw_terrain_rows(mw_terrain_t *t, uint32_t max_rows, mw_terrain_grid_t *g)
{
    memset(g, 0, sizeof *g);
    const mw_terrain_info_t *in = &t->info;
    if (!t->valid || !in->ncols || !in->ranks || !max_rows)
        return -1;
    uint32_t R = in->ranks;
    if (!(t->r_valid && t->r_src_gen == in->gen && t->r_max == max_rows)) {
        uint32_t per = (R + max_rows - 1) / max_rows;
        uint32_t rows = (R + per - 1) / per;
        size_t n = (size_t)rows * (size_t)in->ncols;
        if (n > t->r_cap) {
            double *v = realloc(t->rv, n * sizeof *v);
            if (v)
                t->rv = v;
            uint32_t *at = realloc(t->ra, n * sizeof *at);
            if (at)
                t->ra = at;
            if (!v || !at)
                return -1;
            t->r_cap = n;
        }
        int nc = in->ncols;
        double vmax = 0;
        for (uint32_t y = 0; y < rows; y++) {
            uint32_t a = y * per, b = a + per < R ? a + per : R;
            double *ov = t->rv + (size_t)y * (size_t)nc;
            uint32_t *oa = t->ra + (size_t)y * (size_t)nc;
            for (int c = 0; c < nc; c++) {
                ov[c] = -1;
                oa[c] = a;
            }
            for (uint32_t r = a; r < b; r++) {
                const double *row = t->cell + (size_t)r * (size_t)nc;
                for (int c = 0; c < nc; c++)
                    if (row[c] > ov[c]) {
                        ov[c] = row[c];
                        oa[c] = r;
                    }
            }
            for (int c = 0; c < nc; c++)
                if (ov[c] > vmax)
                    vmax = ov[c];
        }
        t->r_rows = rows;
        t->r_per = per;
        t->r_vmax = vmax;
        t->r_src_gen = in->gen;
        t->r_max = max_rows;
        t->r_gen++;
        t->r_valid = 1;
    }
    g->rows = t->r_rows;
    g->ncols = in->ncols;
    g->per_row = t->r_per;
    g->v = t->rv;
    g->at = t->ra;
    g->vmax = t->r_vmax;
    g->gen = t->r_gen * 0x9e3779b97f4a7c15ull + in->gen;
    return 0;
}

void mw_terrain_row_ranks(const mw_terrain_grid_t *g, uint32_t ranks, uint32_t y, uint32_t *first,
                          uint32_t *last)
{
    uint64_t a = (uint64_t)y * g->per_row, b = a + g->per_row;
    if (b > ranks)
        b = ranks;
    *first = (uint32_t)a;
    *last = b > a ? (uint32_t)(b - 1) : (uint32_t)a;
}

uint32_t mw_terrain_row_of(const mw_terrain_grid_t *g, uint32_t r)
{
    return g->per_row ? r / g->per_row : 0;
}

float mw_terrain_t01(double v, double vmax, int log)
{
    if (!(v > 0) || !(vmax > 0))
        return 0;
    double u = log ? log1p(v) / log1p(vmax) : v / vmax;
    return u > 1 ? 1.0f : (float)u;
}

/* ---- geometry and picking ----------------------------------------------------------------- */

float mw_terrain_col_w(int ncols)
{
    return ncols > 0 && ncols < 12 ? 12.0f / (float)ncols : 1.0f;
}

void mw_terrain_cell_box(const mw_terrain_grid_t *g, int log, uint32_t y, int c, float lo[3],
                         float hi[3])
{
    float d = MW_TERRAIN_DEPTH / (float)(g->rows ? g->rows : 1);
    double v = g->v ? g->v[(size_t)y * (size_t)g->ncols + (size_t)c] : 0;
    float cw = mw_terrain_col_w(g->ncols);
    lo[0] = ((float)c + MW_TERRAIN_GAP) * cw;
    hi[0] = ((float)(c + 1) - MW_TERRAIN_GAP) * cw;
    lo[1] = 0;
    hi[1] = MW_TERRAIN_HEIGHT * mw_terrain_t01(v, g->vmax, log);
    lo[2] = (float)y * d;
    hi[2] = (float)(y + 1) * d;
}

void mw_terrain_camera(mw_camera_t *cam, int ncols, float aspect)
{
    memset(cam, 0, sizeof *cam);
    float w = (float)(ncols > 0 ? ncols : 1) * mw_terrain_col_w(ncols);
    cam->fov = 40;
    cam->yaw = -14;
    cam->pitch = 27;
    cam->target[0] = w / 2;
    cam->target[1] = MW_TERRAIN_HEIGHT * 0.25f;
    cam->target[2] = MW_TERRAIN_DEPTH / 2;
    cam->distance = 2 * (w > MW_TERRAIN_DEPTH ? w : MW_TERRAIN_DEPTH);
    /* The scene's corners (with room for the labels around it) should span 88% of the view:
     * the projected extent shrinks about as 1 / distance, so a few corrections converge. */
    for (int it = 0; it < 8; it++) {
        float mvp[16], ext = 0;
        mw_camera_matrix(cam, aspect, mvp);
        for (int k = 0; k < 8; k++) {
            float p[3] = {k & 1 ? w + 1.5f : -1.5f, k & 2 ? MW_TERRAIN_HEIGHT : 0,
                          k & 4 ? MW_TERRAIN_DEPTH + 1.5f : -0.5f};
            float x, y;
            if (!mw_camera_project(mvp, p, 2000, 2000, &x, &y)) {
                ext = 10;
                break;
            }
            float ex = fabsf(x / 1000 - 1), ey = fabsf(y / 1000 - 1);
            ext = ex > ext ? ex : ext;
            ext = ey > ext ? ey : ext;
        }
        if (!(ext > 0))
            break;
        cam->distance *= ext / 0.88f;
    }
}

/* Entry distance of the ray into box [lo, hi], or -1 when it misses. */
static float ray_box(const float o[3], const float d[3], const float lo[3], const float hi[3])
{
    float tmin = 0, tmax = 1e30f;
    for (int i = 0; i < 3; i++) {
        if (fabsf(d[i]) < 1e-12f) {
            if (o[i] < lo[i] || o[i] > hi[i])
                return -1;
            continue;
        }
        float a = (lo[i] - o[i]) / d[i], b = (hi[i] - o[i]) / d[i];
        if (a > b) {
            float x = a;
            a = b;
            b = x;
        }
        tmin = a > tmin ? a : tmin;
        tmax = b < tmax ? b : tmax;
        if (tmin > tmax)
            return -1;
    }
    return tmin;
}

int mw_terrain_pick_3d(const mw_terrain_grid_t *g, int log, const mw_camera_t *cam, int w, int h,
                       float x, float y, uint32_t *row, int *col)
{
    if (!g->rows || !g->ncols)
        return 0;
    float o[3], d[3];
    mw_camera_ray(cam, w, h, x, y, o, d);
    float best = 1e30f;
    int found = 0;
    for (uint32_t r = 0; r < g->rows; r++)
        for (int c = 0; c < g->ncols; c++) {
            float lo[3], hi[3];
            mw_terrain_cell_box(g, log, r, c, lo, hi);
            if (hi[1] < 0.02f)
                hi[1] = 0.02f; /* an empty cell: its floor tile */
            float t = ray_box(o, d, lo, hi);
            if (t >= 0 && t < best) {
                best = t;
                *row = r;
                *col = c;
                found = 1;
            }
        }
    return found;
}

int mw_terrain_pick_2d(const mw_terrain_grid_t *g, const mw_rect_t *p, int x, int y, uint32_t *row,
                       int *col)
{
    if (!g->rows || !g->ncols || x < p->x || y < p->y || x >= p->x + p->w || y >= p->y + p->h)
        return 0;
    int c = (int)((double)(x - p->x) * g->ncols / p->w);
    uint64_t r = (uint64_t)((double)(y - p->y) * g->rows / p->h);
    *col = c < g->ncols ? c : g->ncols - 1;
    *row = r < g->rows ? (uint32_t)r : g->rows - 1;
    return 1;
}

void mw_terrain_cell_rect(const mw_terrain_grid_t *g, const mw_rect_t *p, uint32_t y, int c,
                          float *x0, float *y0, float *x1, float *y1)
{
    double cw = (double)p->w / (g->ncols ? g->ncols : 1),
           rh = (double)p->h / (g->rows ? g->rows : 1);
    *x0 = (float)(p->x + c * cw);
    *x1 = (float)(p->x + (c + 1) * cw);
    *y0 = (float)(p->y + y * rh);
    *y1 = (float)(p->y + (y + 1) * rh);
}
