/* model_regions.c: code regions in the timeline and the topology, per-function links, a
 * function's call sites and spread across ranks (model_regions.h). No SDL, no GL.
 *
 * Every reader of a window's parallel arrays takes the shortest of them: a window that passed
 * the window policy has them equal, but nothing here may read past one whatever arrives.
 */
#include "model_internal.h"
#include "mw_limits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t min2(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* ---- regions ------------------------------------------------------------------------------ */

const char *mw_region_name(const mw_model_t *m, uint32_t id, char *buf, size_t len)
{
    const Mpiwatch__JobInfo *job = m ? m->job : NULL;
    if (job && id >= 1 && id <= job->n_regions && job->regions[id - 1] &&
        job->regions[id - 1]->name && job->regions[id - 1]->name[0])
        snprintf(buf, len, "%s", job->regions[id - 1]->name);
    else if (id == 0)
        snprintf(buf, len, "other regions");
    else
        snprintf(buf, len, "region %u", id);
    return buf;
}

int mw_region_layer(uint32_t id)
{
    return id >= 1 && id <= MW_PALETTE ? (int)id - 1 : MW_PALETTE;
}

mw_rgb_t mw_region_color(uint32_t id)
{
    return mw__layer_color(mw_region_layer(id));
}

double mw_region_window_shares(const Mpiwatch__Window *w, double *out)
{
    for (int l = 0; l <= MW_PALETTE; l++)
        out[l] = 0;
    if (!w || !w->ranks_reporting || !w->window_ns)
        return 0;
    double denom = (double)w->ranks_reporting * (double)w->window_ns, total = 0;
    for (size_t i = 0; i < w->n_regions; i++) {
        const Mpiwatch__RegionStat *r = w->regions[i];
        if (!r)
            continue;
        double s = (double)r->excl_ns / denom;
        out[mw_region_layer(r->region)] += s;
        total += s;
    }
    return total;
}

int mw_region_columns(const mw_model_t *m, double t0, double t1, int ncols, float *out,
                      int *clamped)
{
    const int stride = MW_PALETTE + 2;
    if (clamped)
        *clamped = 0;
    if (ncols <= 0)
        return 0;
    memset(out, 0, (size_t)ncols * stride * sizeof *out);
    if (!m->grid_set || !m->origin_set || !(t1 > t0) || m->n == 0)
        return 0;
    const double base = t0 * MW__NS_PER_S, colw = (t1 - t0) * MW__NS_PER_S / ncols;
    int with_data = 0;
    for (int c = 0; c < ncols; c++) {
        double a = base + c * colw, b = a + colw;
        int64_t ka = mw__index_of_rel(m, a), kb = mw__index_of_rel(m, b);
        size_t p0 = 0, p1 = 0;
        mw__window_range(m, ka, kb, &p0, &p1);
        double acc[MW_PALETTE + 1] = {0}, covered = 0;
        for (size_t p = p0; p < p1; p++) {
            const Mpiwatch__Window *w = m->ent[p].w;
            double ws = mw__rel_start(m, (int64_t)m->ent[p].index), we = ws + (double)w->window_ns;
            double ov = fmin(b, we) - fmax(a, ws);
            if (!(ov > 0))
                continue;
            double sh[MW_PALETTE + 1];
            mw_region_window_shares(w, sh);
            for (int l = 0; l <= MW_PALETTE; l++)
                acc[l] += sh[l] * ov;
            covered += ov;
        }
        if (!(covered > 0))
            continue;
        float *o = &out[(size_t)c * stride];
        double cum = 0;
        for (int l = 0; l <= MW_PALETTE; l++) {
            cum += acc[l] / covered;
            o[l] = (float)(cum < 1.0 ? cum : 1.0);
        }
        if (cum > 1.0 + 1e-9 && clamped)
            (*clamped)++;
        o[MW_PALETTE + 1] = 1.0f;
        with_data++;
    }
    return with_data;
}

/* The cached windows overlapping [t0, t1] seconds: [*p0, *p1) of m->ent. */
static void range_windows(const mw_model_t *m, double t0, double t1, size_t *p0, size_t *p1)
{
    *p0 = *p1 = 0;
    if (!m->grid_set || !m->origin_set || !(t1 > t0) || m->n == 0)
        return;
    int64_t ka = mw__index_of_time(m, t0), kb = mw__index_of_time(m, t1);
    if (kb > ka && mw__rel_start(m, kb) >= t1 * MW__NS_PER_S)
        kb--;
    mw__window_range(m, ka, kb, p0, p1);
}

typedef struct {
    uint32_t id;
    uint64_t excl, incl, count;
} region_sum_t;

/* The row of `key` in a growing array of rows `arr` (row[key] = its index + 1, 0 none): sets *j
 * to an existing row's index, or to a new zeroed row's, whose key field the caller fills, and
 * returns the array (moved when it grew); *j = -1 when it cannot grow (arr unchanged). */
static void *row_of(void *arr, size_t *n, size_t *cap, size_t elem, uint32_t *row, uint32_t key,
                    long *j)
{
    if (row[key]) {
        *j = (long)row[key] - 1;
        return arr;
    }
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        void *g = realloc(arr, nc * elem);
        if (!g) {
            *j = -1;
            return arr;
        }
        arr = g;
        *cap = nc;
    }
    memset((char *)arr + *n * elem, 0, elem);
    row[key] = (uint32_t)++ * n;
    *j = (long)*n - 1;
    return arr;
}

static int region_sum_cmp(const void *pa, const void *pb)
{
    const region_sum_t *a = pa, *b = pb;
    if (a->excl != b->excl)
        return a->excl > b->excl ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

int mw_region_legend(const mw_model_t *m, double t0, double t1, mw_region_entry_t *out, int max)
{
    if (max <= 0)
        return 0;
    size_t p0, p1;
    range_windows(m, t0, t1, &p0, &p1);
    size_t cap = 0, n = 0;
    region_sum_t *s = NULL;
    uint64_t all = 0;
    /* Each id's row + 1 (ids are capped): one look-up per entry, never a search, as the legend
     * is computed every frame over every visible window. */
    uint32_t *row = calloc(MW_JOB_MAX_REGIONS + 1, sizeof *row);
    if (!row)
        return 0;
    for (size_t p = p0; p < p1; p++) {
        const Mpiwatch__Window *w = m->ent[p].w;
        for (size_t i = 0; i < w->n_regions; i++) {
            const Mpiwatch__RegionStat *r = w->regions[i];
            if (!r || !r->region || r->region > MW_JOB_MAX_REGIONS)
                continue;
            long j;
            s = row_of(s, &n, &cap, sizeof *s, row, r->region, &j);
            if (j < 0)
                break;
            s[j].id = r->region;
            s[j].excl += r->excl_ns;
            s[j].incl += r->incl_ns;
            s[j].count += r->count;
            all += r->excl_ns;
        }
    }
    free(row);
    if (n)
        qsort(s, n, sizeof *s, region_sum_cmp);
    int k = 0;
    for (size_t j = 0; j < n; j++) {
        if (k < max - 1 || (k == max - 1 && j == n - 1)) {
            mw_region_entry_t *e = &out[k++];
            e->id = s[j].id;
            e->color = mw_region_color(s[j].id);
            e->excl_ns = s[j].excl;
            e->incl_ns = s[j].incl;
            e->count = s[j].count;
            e->share = all ? (double)s[j].excl / (double)all : 0;
        } else {
            if (k == max - 1) {
                memset(&out[k], 0, sizeof out[k]);
                out[k].color = mw__layer_color(MW_PALETTE);
                k++;
            }
            mw_region_entry_t *e = &out[max - 1];
            e->excl_ns += s[j].excl;
            e->incl_ns += s[j].incl;
            e->count += s[j].count;
            e->share = all ? (double)e->excl_ns / (double)all : 0;
        }
    }
    free(s);
    return k;
}

uint32_t mw_region_top(const Mpiwatch__Window *w)
{
    uint32_t best = 0;
    uint64_t best_ns = 0;
    for (size_t i = 0; w && i < w->n_regions; i++) {
        const Mpiwatch__RegionStat *r = w->regions[i];
        if (r && r->region &&
            (r->excl_ns > best_ns || (r->excl_ns == best_ns && best && r->region < best))) {
            best = r->region;
            best_ns = r->excl_ns;
        }
    }
    return best;
}

uint32_t mw_region_next(const mw_model_t *m, uint32_t cur)
{
    const Mpiwatch__JobInfo *job = m ? m->job : NULL;
    size_t n = job ? job->n_regions : 0;
    if (!n)
        return 0;
    return cur >= n ? 1 : cur + 1;
}

uint32_t mw_region_rank_values(const Mpiwatch__Window *w, uint32_t region, int incl, double *out,
                               uint32_t n_ranks)
{
    for (uint32_t r = 0; r < n_ranks; r++)
        out[r] = 0;
    if (!w || !region)
        return 0;
    size_t n = min2(w->n_rr_rank, w->n_rr_region);
    n = min2(n, incl ? w->n_rr_incl_ns : w->n_rr_excl_ns);
    const uint64_t *v = incl ? w->rr_incl_ns : w->rr_excl_ns;
    uint32_t with = 0;
    for (size_t i = 0; i < n; i++) {
        if (w->rr_region[i] != region || w->rr_rank[i] >= n_ranks)
            continue;
        if (out[w->rr_rank[i]] == 0)
            with++;
        out[w->rr_rank[i]] += (double)v[i];
    }
    return with;
}

/* ---- per-function links ------------------------------------------------------------------- */

/* The number of entries of w's per-function pairs (the shortest of the five arrays). */
static size_t fpair_n(const Mpiwatch__Window *w)
{
    if (!w)
        return 0;
    size_t n = min2(w->n_fpair_src, w->n_fpair_dst);
    n = min2(n, w->n_fpair_fn);
    return min2(n, min2(w->n_fpair_messages, w->n_fpair_bytes));
}

int mw_fpair_fns(const Mpiwatch__Window *w, unsigned *out, int max)
{
    int k = 0;
    size_t n = fpair_n(w);
    for (size_t i = 0; i < n; i++) {
        unsigned fn = w->fpair_fn[i];
        int j = 0;
        while (j < k && out[j] < fn)
            j++;
        if (j < k && out[j] == fn)
            continue;
        if (k == max) {
            if (j == k)
                continue;
            k--; /* full: the largest goes, the order is kept */
        }
        memmove(&out[j + 1], &out[j], (size_t)(k - j) * sizeof *out);
        out[j] = fn;
        k++;
    }
    return k;
}

unsigned mw_fpair_next_fn(const Mpiwatch__Window *w, unsigned cur)
{
    unsigned fns[64];
    int n = mw_fpair_fns(w, fns, 64);
    for (int i = 0; i < n; i++)
        if (fns[i] > cur)
            return fns[i];
    return 0;
}

int mw_fpairs_of_window(mw_fpairs_t *fp, const Mpiwatch__Window *w, unsigned fn, mw_pairs_t *out)
{
    memset(out, 0, sizeof *out);
    fp->n = 0;
    size_t n = fpair_n(w), k = 0;
    for (size_t i = 0; i < n; i++)
        k += w->fpair_fn[i] == fn;
    if (k > fp->cap) {
        uint32_t *s = realloc(fp->src, k * sizeof *s);
        if (s)
            fp->src = s;
        uint32_t *d = realloc(fp->dst, k * sizeof *d);
        if (d)
            fp->dst = d;
        uint64_t *mm = realloc(fp->messages, k * sizeof *mm);
        if (mm)
            fp->messages = mm;
        uint64_t *b = realloc(fp->bytes, k * sizeof *b);
        if (b)
            fp->bytes = b;
        if (!s || !d || !mm || !b)
            return -1;
        fp->cap = k;
    }
    for (size_t i = 0; i < n; i++) {
        if (w->fpair_fn[i] != fn)
            continue;
        fp->src[fp->n] = w->fpair_src[i];
        fp->dst[fp->n] = w->fpair_dst[i];
        fp->messages[fp->n] = w->fpair_messages[i];
        fp->bytes[fp->n] = w->fpair_bytes[i];
        fp->n++;
    }
    out->src = fp->src;
    out->dst = fp->dst;
    out->messages = fp->messages;
    out->bytes = fp->bytes;
    out->n = fp->n;
    return 0;
}

void mw_fpairs_free(mw_fpairs_t *fp)
{
    free(fp->src);
    free(fp->dst);
    free(fp->messages);
    free(fp->bytes);
    memset(fp, 0, sizeof *fp);
}

/* ---- a function's call sites and spread --------------------------------------------------- */

static int site_row_cmp(const void *pa, const void *pb)
{
    const mw_site_row_t *a = pa, *b = pb;
    if (a->ns != b->ns)
        return a->ns > b->ns ? -1 : 1;
    return a->site < b->site ? -1 : a->site > b->site;
}

int mw_fn_sites(const mw_model_t *m, double t0, double t1, unsigned fn, mw_site_row_t *out, int max,
                uint64_t *fn_ns, int *n_sites)
{
    size_t p0, p1;
    range_windows(m, t0, t1, &p0, &p1);
    uint64_t total = 0;
    size_t n = 0, cap = 0;
    mw_site_row_t *s = NULL;
    uint32_t *row = calloc(MW_JOB_MAX_SITES + 1, sizeof *row); /* as in mw_region_legend */
    if (!row) {
        if (fn_ns)
            *fn_ns = 0;
        if (n_sites)
            *n_sites = 0;
        return 0;
    }
    for (size_t p = p0; p < p1; p++) {
        const Mpiwatch__Window *w = m->ent[p].w;
        for (size_t i = 0; i < w->n_functions; i++)
            if (w->functions[i] && w->functions[i]->fn == fn)
                total += w->functions[i]->total_ns;
        for (size_t i = 0; i < w->n_sites; i++) {
            const Mpiwatch__SiteStat *st = w->sites[i];
            if (!st || st->fn != fn || !st->site || st->site > MW_JOB_MAX_SITES)
                continue;
            long j;
            s = row_of(s, &n, &cap, sizeof *s, row, st->site, &j);
            if (j < 0)
                break;
            s[j].site = st->site;
            s[j].count += st->count;
            s[j].ns += st->ns;
            s[j].bytes += st->bytes;
            if (st->max_ns > s[j].max_ns)
                s[j].max_ns = st->max_ns;
            if (st->top_rank_ns > s[j].top_rank_ns ||
                (st->top_rank_ns == s[j].top_rank_ns && st->top_rank < s[j].top_rank)) {
                s[j].top_rank = st->top_rank;
                s[j].top_rank_ns = st->top_rank_ns;
            }
        }
    }
    free(row);
    if (n)
        qsort(s, n, sizeof *s, site_row_cmp);
    const Mpiwatch__JobInfo *job = m->job;
    int k = 0;
    for (size_t j = 0; j < n && k < max; j++) {
        mw_site_row_t *r = &out[k++];
        *r = s[j];
        r->function = r->file = r->module = "";
        r->line = 0;
        if (job && r->site <= job->n_sites && job->sites[r->site - 1]) {
            const Mpiwatch__CallSite *cs = job->sites[r->site - 1];
            r->function = cs->function ? cs->function : "";
            r->file = cs->file ? cs->file : "";
            r->module = cs->module ? cs->module : "";
            r->line = cs->line;
        }
        r->share = total ? (double)r->ns / (double)total : 0;
    }
    free(s);
    if (fn_ns)
        *fn_ns = total;
    if (n_sites)
        *n_sites = (int)n;
    return k;
}

int mw_fn_spread(const mw_model_t *m, double t0, double t1, unsigned fn, mw_fn_spread_t *out)
{
    memset(out, 0, sizeof *out);
    size_t p0, p1;
    range_windows(m, t0, t1, &p0, &p1);
    double sd = 0, mean = 0;
    for (size_t p = p0; p < p1; p++) {
        const Mpiwatch__Window *w = m->ent[p].w;
        for (size_t i = 0; i < w->n_functions; i++) {
            const Mpiwatch__FunctionStat *f = w->functions[i];
            if (!f || f->fn != fn)
                continue;
            out->windows++;
            sd += f->rank_sd_ns;
            if (w->ranks_reporting)
                mean += (double)f->total_ns / w->ranks_reporting;
            if (out->windows == 1 || f->rank_max_ns > out->max_ns) {
                out->max_ns = f->rank_max_ns;
                out->max_rank = f->rank_max;
                out->max_window = m->ent[p].index;
            }
            break;
        }
    }
    if (out->windows) {
        out->sd_ns = sd / out->windows;
        out->mean_ns = mean / out->windows;
    }
    return out->windows;
}

uint32_t mw_region_legend_pick(const mw_model_t *m, const mw_view_t *v, const mw_layout_t *l, int x,
                               int y)
{
    const mw_rect_t *lg = &l->legend;
    if (x < lg->x || x >= lg->x + lg->w || y < lg->y || y >= lg->y + lg->h || l->legend_row_h <= 0)
        return 0;
    int row = (y - lg->y) / l->legend_row_h - 1; /* the first row is the heading */
    mw_region_entry_t e[MW_LEGEND_MAX];
    int n = mw_region_legend(m, v->t0, v->t1, e,
                             l->legend_rows < MW_LEGEND_MAX ? l->legend_rows : MW_LEGEND_MAX);
    return row >= 0 && row < n ? e[row].id : 0;
}
