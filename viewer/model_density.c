/* model_density.c: the call view's binning into density and color buffers, its duration
 * axis and the transfer functions. No SDL, no GL (see model_density.h).
 *
 * DESIGN: the call view is binned on the CPU in two passes so that the cost grows with the
 * number of density cells, not with the calls they count: points (START/END) first go into a
 * grid of (log2 bin, pixel column), spread over the columns their sub-slot covers, and each
 * bin's row is then spread over the pixel rows its duration span covers; lines go into per-bin
 * difference arrays (a cell is two additions whatever its length); arcs of one bin all have
 * the same shape, so they are gathered by start column and one walked polyline is stamped at
 * each (arcs wider than two plots, and long calls, are walked one by one). Recorded long calls
 * are drawn exactly and removed from the counts of their density cells so that they are not
 * counted twice.
 */
#include "model_internal.h"
#include "mw_bins.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIM 0.125f         /* weight in C of what is not highlighted */
#define SCATTER_FILL 0.5   /* a cell with fewer calls than this share of its pixels: points */
#define SCATTER_MAX 65536u /* ... and never more points than this per cell */
#define SEED_MUL 0x9e3779b97f4a7c15ull
#define SEED_STEP 0xd1b54a32d192ed03ull

/* ---- the call-density view ---------------------------------------------------------------- */

void mw_density_range(const mw_model_t *m, double t0, double t1, double *d0_ns, double *d1_ns)
{
    int lo = -1, hi = -1;
    if (m->grid_set && m->origin_set && t1 > t0) {
        size_t p0, p1;
        mw__window_range(m, mw__index_of_time(m, t0), mw__index_of_time(m, t1), &p0, &p1);
        for (size_t p = p0; p < p1; p++) {
            const Mpiwatch__Window *w = m->ent[p].w;
            for (size_t i = 0; i < w->n_density_fn; i++) {
                int b = (int)w->density_bin[i];
                if (w->density_count[i] == 0 || b >= (int)m->bins)
                    continue;
                if (lo < 0 || b < lo)
                    lo = b;
                if (b > hi)
                    hi = b;
            }
            for (size_t i = 0; i < w->n_longest; i++) {
                if (!w->longest[i]->duration_ns)
                    continue;
                int b = (int)mw_bin_uncapped(w->longest[i]->duration_ns, m->bins);
                if (lo < 0 || b < lo)
                    lo = b;
                if (b > hi)
                    hi = b;
            }
        }
    }
    /* Calls still in progress (drawn open-ended by the view) keep growing: room for them. */
    mw_trace_open_t open[64];
    size_t no = mw_trace_open_calls(m, open, 64);
    for (size_t i = 0; i < no; i++) {
        int b = (int)mw_bin_uncapped(open[i].grown_ns, m->bins);
        if (open[i].grown_ns && (lo < 0 || b > hi))
            hi = b;
        if (open[i].grown_ns && lo < 0)
            lo = b;
    }
    double d0 = 1e3, d1 = 1e9;
    if (lo >= 0) {
        /* Half a bin of room above the longest calls and below the shortest, so that the
         * markers of the extreme calls are not cut by the plot's edges. */
        d0 = exp2(mw_bin_log2_lo((unsigned)lo, m->bins) - 0.5);
        d1 = exp2(mw_bin_log2_lo((unsigned)hi + 1, m->bins) + 0.5);
    }
    /* At least two decades, so that a lone bin does not fill the plot. */
    if (d1 / d0 < 100.0) {
        double g = sqrt(d0 * d1);
        d0 = g / 10.0;
        d1 = g * 10.0;
        if (d0 < 1.0) {
            d1 /= d0;
            d0 = 1.0;
        }
    }
    *d0_ns = d0;
    *d1_ns = d1;
}

void mw__frame_init(mw__frame_t *f, const mw_model_t *m, double t0, double t1, double d0, double d1,
                    int w, int h, float *D, float *C, int lin)
{
    f->lin = lin != 0;
    f->d1 = d1;
    f->w = w;
    f->h = h;
    f->t0ns = t0 * MW__NS_PER_S;
    f->xs = w / ((t1 - t0) * MW__NS_PER_S);
    f->l2d0 = log2(d0);
    f->ys = h / (log2(d1) - f->l2d0);
    f->origin_ns = mw_model_origin_ns(m);
    f->D = D;
    f->C = C;
}

static void plot(const mw__frame_t *f, int x, int y, float wgt, const float cw[3])
{
    if (x < 0 || y < 0 || x >= f->w || y >= f->h)
        return;
    size_t i = (size_t)y * f->w + x;
    f->D[i] += wgt;
    f->C[3 * i] += cw[0] * wgt;
    f->C[3 * i + 1] += cw[1] * wgt;
    f->C[3 * i + 2] += cw[2] * wgt;
}

/* A recorded call drawn as a point: 2 x 2 pixels (one pixel is lost on a large screen), each
 * of density 1, so that it counts like any other call in Dmax and the transfer function. */
static void plot_dot(const mw__frame_t *f, int x, int y, const float cw[3])
{
    int x1 = x + 1 < f->w ? x + 1 : x - 1, y1 = y + 1 < f->h ? y + 1 : y - 1;
    plot(f, x, y, 1.0f, cw);
    plot(f, x1, y, 1.0f, cw);
    plot(f, x, y1, 1.0f, cw);
    plot(f, x1, y1, 1.0f, cw);
}

/* splitmix64's finalizer: a well-mixed 64-bit hash of a counter. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The arc's polyline: MW__ARC_SEGMENTS + 1 points of a half ellipse from (xa, 0) to (xb, 0) with
 * its apex at height ya. */
void mw__arc_points(double xa, double xb, double ya, double px[], double py[])
{
    double cx = (xa + xb) / 2, rx = (xb - xa) / 2;
    for (int i = 0; i <= MW__ARC_SEGMENTS; i++) {
        double th = M_PI * (1.0 - (double)i / MW__ARC_SEGMENTS);
        px[i] = cx + rx * cos(th);
        py[i] = ya * sin(th);
    }
}

typedef void (*pixel_fn)(void *ctx, int x, int y);

/* Walks the pixels an arc touches, each once along its path, in columns [0, xhi) (so that a
 * long arc costs its visible part only); rows are the visitor's to clip. */
static void arc_walk(double xa, double xb, double ya, int xhi, pixel_fn visit, void *ctx)
{
    if (xb < 0 || xa >= xhi || ya < 0)
        return;
    if (xb - xa < 1.0) {
        /* Narrower than a pixel: a vertical stroke, each pixel once. */
        int x = (int)floor(xa), top = (int)floor(ya);
        for (int y = 0; y <= top; y++)
            visit(ctx, x, y);
        return;
    }
    double px[MW__ARC_SEGMENTS + 1], py[MW__ARC_SEGMENTS + 1];
    mw__arc_points(xa, xb, ya, px, py);
    int lastx = INT32_MIN, lasty = INT32_MIN;
    for (int s = 0; s < MW__ARC_SEGMENTS; s++) {
        double x0 = px[s], y0 = py[s], x1 = px[s + 1], y1 = py[s + 1];
        if ((x0 < 0 && x1 < 0) || (x0 >= xhi && x1 >= xhi)) {
            lastx = lasty = INT32_MIN;
            continue;
        }
        double u0 = 0, u1 = 1, dx = x1 - x0;
        if (dx != 0) {
            double ua = (0 - x0) / dx, ub = (xhi - x0) / dx;
            if (ua > ub) {
                double t = ua;
                ua = ub;
                ub = t;
            }
            u0 = ua > u0 ? ua : u0;
            u1 = ub < u1 ? ub : u1;
        }
        double ax = x0 + u0 * dx, ay = y0 + u0 * (y1 - y0);
        double bx = x0 + u1 * dx, by = y0 + u1 * (y1 - y0);
        int steps = (int)ceil(fmax(fabs(bx - ax), fabs(by - ay))) + 1;
        for (int i = 0; i <= steps; i++) {
            double u = (double)i / steps;
            int x = (int)floor(ax + u * (bx - ax)), y = (int)floor(ay + u * (by - ay));
            if ((x == lastx && y == lasty) || x < 0 || x >= xhi)
                continue;
            lastx = x;
            lasty = y;
            visit(ctx, x, y);
        }
    }
}

typedef struct {
    const mw__frame_t *f;
    float wgt;
    const float *cw;
} plot_ctx_t;

static void plot_visit(void *ctx, int x, int y)
{
    plot_ctx_t *p = ctx;
    plot(p->f, x, y, p->wgt, p->cw);
}

/* Adds `wgt` to each pixel an arc touches. */
static void draw_arc(const mw__frame_t *f, double xa, double xb, double ya, float wgt,
                     const float cw[3])
{
    plot_ctx_t p = {f, wgt, cw};
    arc_walk(xa, xb, ya, f->w, plot_visit, &p);
}

/* The pixels of one arc as (x, y) offsets: every arc of a log2 bin has the same shape, so it is
 * walked once and stamped at each start column. */
typedef struct {
    int *xy;
    size_t n, cap;
    int h;
} stamp_t;

static void stamp_visit(void *ctx, int x, int y)
{
    stamp_t *s = ctx;
    if (y < 0 || y >= s->h || s->n >= s->cap)
        return;
    s->xy[2 * s->n] = x;
    s->xy[2 * s->n + 1] = y;
    s->n++;
}

/* Grows the scratch array whose pointer is at `pp` to at least n elements of `elem` bytes
 * (kept between calls, so that binning allocates nothing in the steady state). The pointer
 * is moved with memcpy so that one function serves arrays of every type. */
static int scratch_reserve(void *pp, size_t *cap, size_t elem, size_t n)
{
    if (n <= *cap)
        return 0;
    void *p;
    memcpy(&p, pp, sizeof p);
    void *q = realloc(p, n * elem);
    if (!q)
        return -1;
    memcpy(pp, &q, sizeof q);
    *cap = n;
    return 0;
}

/* Long calls already counted in a window's density cells, keyed by the cell they fall in. */
#define LC_SLOTS 128
typedef struct {
    uint64_t key[LC_SLOTS];
    uint32_t left[LC_SLOTS];
    uint64_t bins[MW_MAX_DURATION_BINS / 64 + 1]; /* bit b: a long call of bin b; other cells
                                                    skip the lookup */
} lc_table_t;

static uint64_t cell_key(unsigned fn, int sub, unsigned bin, unsigned end)
{
    return ((uint64_t)fn << 28 | (uint64_t)(bin & 0xff) << 20 | (uint64_t)(end & 1) << 19 |
            (uint64_t)((uint32_t)(sub + 65536) & 0x7ffff)) +
           1;
}

static uint32_t lc_hash(uint64_t key)
{
    return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 57) & (LC_SLOTS - 1);
}

static void lc_add(lc_table_t *t, uint64_t key)
{
    for (uint32_t h = lc_hash(key);; h = (h + 1) & (LC_SLOTS - 1)) {
        if (t->key[h] == key || t->key[h] == 0) {
            t->key[h] = key;
            t->left[h]++;
            return;
        }
    }
}

/* Takes what is left to remove from the cell `key` (the long calls counted in it). */
static uint64_t lc_take(lc_table_t *t, uint64_t key, uint64_t count)
{
    for (uint32_t h = lc_hash(key); t->key[h]; h = (h + 1) & (LC_SLOTS - 1)) {
        if (t->key[h] == key) {
            uint64_t n = t->left[h] < count ? t->left[h] : count;
            t->left[h] -= (uint32_t)n;
            return n;
        }
    }
    return 0;
}

/* The cells of window w in which its recorded long calls were counted, as the library counts
 * them (pmpi-shim/record.c): by end in the sub-slot of the end; by start in the sub-slot of
 * the start, or whole sub-slots back (at most one window) for a start in an earlier window. */
static void lc_build(lc_table_t *t, const Mpiwatch__Window *w)
{
    memset(t, 0, sizeof *t);
    uint64_t W = w->window_ns, S = w->subslots, ss = W / S ? W / S : 1;
    uint64_t wstart = w->start_ns ? w->start_ns : w->index * W;
    size_t n = w->n_longest < LC_SLOTS / 2 ? w->n_longest : LC_SLOTS / 2;
    for (size_t i = 0; i < n; i++) {
        const Mpiwatch__Call *c = w->longest[i];
        unsigned bin = mw_bin_of(c->duration_ns, w->duration_bins);
        if (bin < MW_MAX_DURATION_BINS)
            t->bins[bin >> 6] |= 1ull << (bin & 63);
        uint64_t end = c->start_ns + c->duration_ns;
        uint64_t se = end > wstart ? (end - wstart) / ss : 0;
        if (se >= S)
            se = S - 1;
        lc_add(t, cell_key(c->fn, (int)se, bin, 1));
        int sub;
        if (c->start_ns >= wstart) {
            uint64_t s = (c->start_ns - wstart) / ss;
            sub = (int)(s < S ? s : S - 1);
        } else {
            uint64_t back = (wstart - c->start_ns + ss - 1) / ss;
            sub = -(int)(back < S ? back : S);
        }
        lc_add(t, cell_key(c->fn, sub, bin, 0));
    }
}

/* ---- traced windows ----------------------------------------------------------------------- */

/* The density cells a window's exact calls were counted in, sorted, so that the summary drawn
 * for the ranks that are not exact leaves them out (a cell counts all ranks). */
typedef struct {
    uint64_t *key;
    size_t n, cap;
} exact_keys_t;

static int u64_cmp(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return a < b ? -1 : a > b;
}

/* The cell of a call as the library counts it (pmpi-shim/record.c, as lc_build): by end in the
 * sub-slot of the end; by start in the sub-slot of the start, or whole sub-slots back for a
 * start in an earlier window. */
static uint64_t trace_cell(const mw_trace_window_t *tw, const mw_trace_rank_t *e,
                           const mw_trace_rec_t *r, unsigned nb, unsigned S, unsigned want_end)
{
    int64_t ss = (int64_t)(tw->len_ns / S ? tw->len_ns / S : 1);
    int64_t rel = (int64_t)(mw_trace_rec_start(e, r) - tw->start_ns);
    unsigned bin = mw_bin_of(r->dur_ns, nb);
    int sub;
    if (want_end) {
        int64_t se = rel + (int64_t)r->dur_ns;
        se = se > 0 ? se / ss : 0;
        sub = (int)(se < (int64_t)S ? se : (int64_t)S - 1);
    } else if (rel >= 0) {
        int64_t s0 = rel / ss;
        sub = (int)(s0 < (int64_t)S ? s0 : (int64_t)S - 1);
    } else {
        int64_t back = (-rel + ss - 1) / ss;
        sub = -(int)(back < (int64_t)S ? back : (int64_t)S);
    }
    return cell_key(r->fn, sub, bin, want_end);
}

static void exact_keys_build(exact_keys_t *k, const mw_model_t *m, const mw_trace_window_t *tw,
                             unsigned nb, unsigned S, unsigned want_end)
{
    (void)m;
    k->n = 0;
    if (tw->records > k->cap) {
        uint64_t *v = realloc(k->key, tw->records * sizeof *v);
        if (!v)
            return; /* the summary is drawn whole: calls counted twice, never lost */
        k->key = v;
        k->cap = tw->records;
    }
    for (uint32_t i = 0; i < tw->n_ranks; i++) {
        const mw_trace_rank_t *e = &tw->ranks[i];
        if (!e->exact)
            continue;
        for (size_t j = 0; j < e->n && k->n < k->cap; j++)
            if (mw_trace_is_call(&e->recs[j]))
                k->key[k->n++] = trace_cell(tw, e, &e->recs[j], nb, S, want_end);
    }
    qsort(k->key, k->n, sizeof *k->key, u64_cmp);
}

/* How many of a cell's calls are exact ones (at most `count`). */
static uint64_t exact_keys_take(const exact_keys_t *k, uint64_t key, uint64_t count)
{
    size_t lo = 0, hi = k->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (k->key[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint64_t n = 0;
    while (lo < k->n && k->key[lo] == key && n < count) {
        n++;
        lo++;
    }
    return n;
}

static int trace_rank_exact(const mw_trace_window_t *tw, uint32_t rank)
{
    for (uint32_t i = 0; i < tw->n_ranks; i++)
        if (tw->ranks[i].rank == rank)
            return tw->ranks[i].exact;
    return 0;
}

/* Every call of the window's exact ranks at its exact place: a point of one pixel (density
 * 1: one call), a line, or an arc. Calls still in progress are the view's (open-ended). */
static void draw_traced(const mw__frame_t *f, const mw_model_t *m, const mw_trace_window_t *tw,
                        mw_repr_t repr, unsigned hfn, int64_t hrank, float col[][3],
                        float dimcol[][3])
{
    for (uint32_t i = 0; i < tw->n_ranks; i++) {
        const mw_trace_rank_t *e = &tw->ranks[i];
        if (!e->exact)
            continue;
        int rank_dim = hrank >= 0 && (int64_t)e->rank != hrank;
        for (size_t j = 0; j < e->n; j++) {
            const mw_trace_rec_t *r = &e->recs[j];
            if (!mw_trace_is_call(r))
                continue;
            double d = r->dur_ns ? (double)r->dur_ns : 1.0;
            double y = mw__frame_y(f, d);
            if (!(y >= 0) || y >= f->h)
                continue;
            int l = mw__layer_of(m, r->fn);
            const float *cw = rank_dim || (hfn && r->fn != hfn) ? dimcol[l] : col[l];
            double xa = mw__frame_x(f, mw_trace_rec_start(e, r));
            double xe = xa + (double)r->dur_ns * f->xs;
            switch (repr) {
            case MW_REPR_START:
                if (xa >= 0 && xa < f->w)
                    plot(f, (int)xa, (int)y, 1.0f, cw);
                break;
            case MW_REPR_END:
                if (xe >= 0 && xe < f->w)
                    plot(f, (int)xe, (int)y, 1.0f, cw);
                break;
            case MW_REPR_LINES:
                if (xe >= 0 && xa < f->w)
                    for (int x = xa <= 0 ? 0 : (int)xa, xr = xe >= f->w - 1 ? f->w - 1 : (int)xe;
                         x <= xr; x++)
                        plot(f, x, (int)y, 1.0f, cw);
                break;
            default:
                draw_arc(f, xa, xe, y, 1.0f, cw);
                break;
            }
        }
    }
}

float mw_density_bin(const mw_model_t *m, const mw_view_t *v, double t0, double t1, double d0_ns,
                     double d1_ns, int w, int h, float *D, float *C)
{
    if (w <= 0 || h <= 0)
        return 0.0f;
    size_t npx = (size_t)w * h;
    memset(D, 0, npx * sizeof *D);
    memset(C, 0, 3 * npx * sizeof *C);
    if (!m->grid_set || !m->origin_set || !(t1 > t0) || !(d0_ns > 0) || !(d1_ns > d0_ns))
        return 0.0f;

    mw__frame_t f;
    mw__frame_init(&f, m, t0, t1, d0_ns, d1_ns, w, h, D, C, v->dur_linear);
    const mw_repr_t repr = v->repr < MW_REPR_COUNT ? v->repr : MW_REPR_END;
    const unsigned nb = m->bins, S = m->subslots;
    const unsigned want_end = repr == MW_REPR_START ? 0 : 1;
    const double W = (double)mw__shortest_len(m); /* extra windows for long calls */
    const unsigned hfn = v->highlight_fn;
    const int64_t hrank = v->highlight_rank;
    mw__scratch_t *sc = m->scratch;

    /* Colors per layer, and the dimmed ones. */
    float col[MW__LAYERS][3], dimcol[MW__LAYERS][3];
    for (int l = 0; l < MW__LAYERS; l++) {
        mw_rgb_t c = mw__layer_color(l);
        col[l][0] = c.r;
        col[l][1] = c.g;
        col[l][2] = c.b;
        for (int k = 0; k < 3; k++)
            dimcol[l][k] = col[l][k] * DIM;
    }

    /* Rows each bin covers (points) and the row of its geometric mean (lines, arcs). */
    double yb0[MW_MAX_DURATION_BINS], yb1[MW_MAX_DURATION_BINS];
    int visible[MW_MAX_DURATION_BINS], used[MW_MAX_DURATION_BINS];
    for (unsigned b = 0; b < nb; b++) {
        yb0[b] = mw__frame_yl(&f, mw_bin_log2_lo(b, nb));
        yb1[b] = mw__frame_yl(&f, mw_bin_log2_lo(b + 1, nb));
        double ym = mw__frame_yl(&f, mw_bin_log2_mid(b, nb));
        visible[b] = repr == MW_REPR_START || repr == MW_REPR_END ? yb1[b] > 0 && yb0[b] < h
                                                                  : ym >= 0 && ym < h;
        used[b] = 0;
    }
    float *grid = NULL;
    double *line = NULL;
    if (repr == MW_REPR_START || repr == MW_REPR_END) {
        if (scratch_reserve(&sc->grid, &sc->grid_cap, sizeof *sc->grid, (size_t)nb * w * 4) < 0)
            return 0.0f;
        grid = sc->grid;
        memset(grid, 0, (size_t)nb * w * 4 * sizeof *grid);
    } else if (repr == MW_REPR_LINES) {
        if (scratch_reserve(&sc->line, &sc->line_cap, sizeof *sc->line, (size_t)nb * (w + 1) * 4) <
            0)
            return 0.0f;
        line = sc->line;
        memset(line, 0, (size_t)nb * (w + 1) * 4 * sizeof *line);
    }
    /* Arcs up to two plot widths wide are gathered by start column and stamped; wider ones (few:
     * they need a deep zoom) are drawn one by one. */
    float *arc = NULL;
    const int aoff = 2 * w + 2, aw = w + aoff;
    if (repr == MW_REPR_ARCS) {
        if (scratch_reserve(&sc->arc, &sc->arc_cap, sizeof *sc->arc, (size_t)nb * aw * 4) < 0)
            return 0.0f;
        arc = sc->arc;
        memset(arc, 0, (size_t)nb * aw * 4 * sizeof *arc);
    }

    /* Calls visible in [t0, t1] end at or after t0; with END they end in it, with the others
     * they may end up to the longest duration shown after it. */
    int64_t k0 = mw__index_of_time(m, t0), k1 = mw__index_of_time(m, t1);
    if (repr != MW_REPR_END) {
        double extra = ceil(d1_ns / W) + 1;
        k1 += (int64_t)fmin(extra, MW__MAX_EXTRA_WINDOWS);
    }
    size_t p0, p1;
    mw__window_range(m, k0, k1, &p0, &p1);
    lc_table_t lc;
    exact_keys_t ek = {NULL, 0, 0};

    for (size_t p = p0; p < p1; p++) {
        const Mpiwatch__Window *win = m->ent[p].w;
        const double wsr = mw__rel_start(m, (int64_t)win->index) - f.t0ns;
        const double ss = (double)win->window_ns / S;
        const int have_lc = win->n_longest > 0;
        if (have_lc)
            lc_build(&lc, win);
        /* A traced window: its exact ranks' calls are drawn from their records; the summary
         * is drawn only for the other ranks (all of it when none is exact). */
        const mw_trace_window_t *tw = mw_trace_window(m, win->index);
        if (tw && (tw->over_cap || tw->exact == 0))
            tw = NULL;
        if (tw && !tw->all_exact)
            exact_keys_build(&ek, m, tw, nb, S, want_end);
        if (tw)
            draw_traced(&f, m, tw, repr, hfn, hrank, col, dimcol);
        const size_t ncells = tw && tw->all_exact ? 0 : win->n_density_fn;
        const size_t nlong = tw && tw->all_exact ? 0 : win->n_longest;
        for (size_t i = 0; i < ncells; i++) {
            unsigned b = win->density_bin[i];
            if (win->density_end[i] != want_end || b >= nb || !visible[b])
                continue;
            unsigned fn = win->density_fn[i];
            int sub = win->density_sub[i];
            uint64_t cnt = win->density_count[i];
            if (have_lc && (lc.bins[b >> 6] >> (b & 63) & 1))
                cnt -= lc_take(&lc, cell_key(fn, sub, b, want_end), cnt);
            if (tw)
                cnt -= exact_keys_take(&ek, cell_key(fn, sub, b, want_end), cnt);
            if (cnt == 0)
                continue;
            int l = mw__layer_of(m, fn);
            int dim = (hfn && fn != hfn) || hrank >= 0;
            const float *cw = dim ? dimcol[l] : col[l];
            float c = (float)cnt;
            if (grid) {
                double xa = (wsr + sub * ss) * f.xs, xb = xa + ss * f.xs;
                if (xb <= 0 || xa >= w)
                    continue;
                double area = (xb - xa) * (yb1[b] - yb0[b]);
                if ((double)cnt < area * SCATTER_FILL && cnt <= SCATTER_MAX) {
                    /* Fewer calls than the cell has pixels: each call becomes a point at a
                     * place drawn from a hash of the cell (stable from frame to frame), so a
                     * sparse cell looks like the calls it holds, each at density 1 like an
                     * exact call, rather than a faint block. */
                    uint64_t seed = cell_key(fn, sub, b, want_end) ^ (win->index * SEED_MUL);
                    for (uint64_t k = 0; k < cnt; k++) {
                        uint64_t r = mix64(seed + k * SEED_STEP);
                        double u = (double)(r & 0xffffffffu) * 0x1p-32;
                        double vv = (double)(r >> 32) * 0x1p-32;
                        double x = xa + u * (xb - xa), y = yb0[b] + vv * (yb1[b] - yb0[b]);
                        if (x >= 0 && y >= 0)
                            plot(&f, (int)x, (int)y, 1.0f, cw);
                    }
                    continue;
                }
                /* Clamped before the conversion: deep zooms put far cells beyond int. */
                int i0 = xa < -1.0 ? -1 : (int)floor(xa);
                int i1 = xb > w + 1.0 ? w : (int)ceil(xb) - 1;
                double inv = 1.0 / (xb - xa);
                if (i0 == i1) {
                    float *g = &grid[((size_t)b * w + i0) * 4];
                    g[0] += c;
                    g[1] += c * cw[0];
                    g[2] += c * cw[1];
                    g[3] += c * cw[2];
                } else {
                    /* Partial first and last columns, whole ones between. */
                    int xl = i0 > 0 ? i0 : 0, xr = i1 < w - 1 ? i1 : w - 1;
                    for (int x = xl; x <= xr; x++) {
                        double lo = x == i0 ? xa : x, hi = x == i1 ? xb : x + 1.0;
                        float wx = c * (float)((hi - lo) * inv);
                        float *g = &grid[((size_t)b * w + x) * 4];
                        g[0] += wx;
                        g[1] += wx * cw[0];
                        g[2] += wx * cw[1];
                        g[3] += wx * cw[2];
                    }
                }
                used[b] = 1;
            } else {
                /* A line or arc per cell: its duration is the bin's geometric mean, its end
                 * the middle of the sub-slot. */
                double d = mw_bin_mid_ns(b, nb);
                double xe = (wsr + (sub + 0.5) * ss) * f.xs, xa = xe - d * f.xs;
                if (xe < 0 || xa >= w)
                    continue;
                if (line) {
                    int c0 = xa <= 0 ? 0 : (int)xa, c1 = xe >= w - 1 ? w - 1 : (int)xe;
                    double *L0 = &line[((size_t)b * (w + 1) + c0) * 4];
                    double *L1 = &line[((size_t)b * (w + 1) + c1 + 1) * 4];
                    L0[0] += c;
                    L1[0] -= c;
                    for (int k = 0; k < 3; k++) {
                        L0[k + 1] += (double)c * cw[k];
                        L1[k + 1] -= (double)c * cw[k];
                    }
                    used[b] = 1;
                } else if (d * f.xs <= 2.0 * w) {
                    float *a = &arc[((size_t)b * aw + (int)floor(xa) + aoff) * 4];
                    a[0] += c;
                    a[1] += c * cw[0];
                    a[2] += c * cw[1];
                    a[3] += c * cw[2];
                    used[b] = 1;
                } else {
                    draw_arc(&f, xa, xe, mw__frame_yl(&f, mw_bin_log2_mid(b, nb)), c, cw);
                }
            }
        }
        /* The recorded long calls, each at its exact place. */
        for (size_t i = 0; i < nlong; i++) {
            const Mpiwatch__Call *lcall = win->longest[i];
            if (!lcall->duration_ns || (tw && trace_rank_exact(tw, lcall->rank)))
                continue;
            double y = mw__frame_y(&f, (double)lcall->duration_ns);
            if (y < 0 || y >= h)
                continue;
            int l = mw__layer_of(m, lcall->fn);
            int dim = (hfn && lcall->fn != hfn) || (hrank >= 0 && lcall->rank != hrank);
            const float *cw = dim ? dimcol[l] : col[l];
            double xa = mw__frame_x(&f, lcall->start_ns);
            double xe = xa + (double)lcall->duration_ns * f.xs;
            switch (repr) {
            case MW_REPR_START:
                if (xa >= 0 && xa < w)
                    plot_dot(&f, (int)xa, (int)y, cw);
                break;
            case MW_REPR_END:
                if (xe >= 0 && xe < w)
                    plot_dot(&f, (int)xe, (int)y, cw);
                break;
            case MW_REPR_LINES:
                if (xe >= 0 && xa < w)
                    for (int x = xa <= 0 ? 0 : (int)xa, xr = xe >= w - 1 ? w - 1 : (int)xe; x <= xr;
                         x++)
                        plot(&f, x, (int)y, 1.0f, cw);
                break;
            default:
                draw_arc(&f, xa, xe, y, 1.0f, cw);
                break;
            }
        }
    }

    /* Spread each bin's points over its rows, and run the lines' difference arrays. */
    for (unsigned b = 0; b < nb; b++) {
        if (!used[b])
            continue;
        if (grid) {
            double span = yb1[b] - yb0[b];
            for (int r = mw__imax((int)floor(yb0[b]), 0); r < h && r < yb1[b]; r++) {
                float wy = (float)((fmin(yb1[b], r + 1.0) - fmax(yb0[b], (double)r)) / span);
                if (wy <= 0)
                    continue;
                const float *g = &grid[(size_t)b * w * 4];
                float *Dr = &D[(size_t)r * w], *Cr = &C[(size_t)r * w * 3];
                for (int x = 0; x < w; x++, g += 4) {
                    if (g[0] == 0)
                        continue;
                    Dr[x] += g[0] * wy;
                    Cr[3 * x] += g[1] * wy;
                    Cr[3 * x + 1] += g[2] * wy;
                    Cr[3 * x + 2] += g[3] * wy;
                }
            }
        } else if (arc) {
            /* The bin's arc, walked once from the middle of column 0, stamped at each start. */
            double width = mw_bin_mid_ns(b, nb) * f.xs,
                   ym = mw__frame_yl(&f, mw_bin_log2_mid(b, nb));
            int xhi = (int)ceil(width) + 2;
            stamp_t st = {NULL, 0, (size_t)xhi + 2 * (size_t)h + 4 * MW__ARC_SEGMENTS + 8, h};
            if (scratch_reserve(&sc->stamp, &sc->stamp_cap, sizeof *sc->stamp, 2 * st.cap) < 0)
                continue;
            st.xy = sc->stamp;
            arc_walk(0.5, 0.5 + width, ym, xhi, stamp_visit, &st);
            const float *a = &arc[(size_t)b * aw * 4];
            for (int sx = 0; sx < aw; sx++) {
                const float *g = &a[sx * 4];
                if (g[0] == 0)
                    continue;
                int x0 = sx - aoff;
                for (size_t k = 0; k < st.n; k++) {
                    int x = x0 + st.xy[2 * k];
                    if (x < 0 || x >= w)
                        continue;
                    size_t i = (size_t)st.xy[2 * k + 1] * w + x;
                    D[i] += g[0];
                    C[3 * i] += g[1];
                    C[3 * i + 1] += g[2];
                    C[3 * i + 2] += g[3];
                }
            }
        } else if (line) {
            int r = (int)floor(mw__frame_yl(&f, mw_bin_log2_mid(b, nb)));
            if (r < 0 || r >= h)
                continue;
            double acc[4] = {0, 0, 0, 0};
            const double *L = &line[(size_t)b * (w + 1) * 4];
            for (int x = 0; x < w; x++) {
                for (int k = 0; k < 4; k++)
                    acc[k] += L[x * 4 + k];
                /* Weights are whole counts: anything under a half is rounding residue. */
                if (acc[0] < 0.5)
                    continue;
                size_t i = (size_t)r * w + x;
                D[i] += (float)acc[0];
                C[3 * i] += (float)acc[1];
                C[3 * i + 1] += (float)acc[2];
                C[3 * i + 2] += (float)acc[3];
            }
        }
    }

    free(ek.key);

    /* C becomes the average color (dimmed calls counting 1/8), and Dmax is found. */
    float dmax = 0;
    for (size_t i = 0; i < npx; i++) {
        float d = D[i];
        if (d <= 0) {
            D[i] = 0;
            C[3 * i] = C[3 * i + 1] = C[3 * i + 2] = 0;
            continue;
        }
        float inv = 1.0f / d;
        C[3 * i] *= inv;
        C[3 * i + 1] *= inv;
        C[3 * i + 2] *= inv;
        if (d > dmax)
            dmax = d;
    }
    return dmax;
}

float mw_transfer(mw_transfer_t t, float d, float dmax, float o_min)
{
    if (!(d > 0) || !(dmax > 0))
        return 0.0f;
    float o;
    if (t == MW_TRANSFER_LINEAR)
        o = o_min + (1.0f - o_min) * d / dmax;
    else
        o = o_min + (1.0f - o_min) * (float)(log1p((double)d) / log1p((double)dmax));
    return o < o_min ? o_min : o > 1.0f ? 1.0f : o;
}
