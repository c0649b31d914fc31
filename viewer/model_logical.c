/* model_logical.c: the logical view's analysis, picture and picking (see model_logical.h). No
 * SDL, no GL.
 *
 * DESIGN: mw_lview_update walks the windows of the range once to compute a signature (window
 * index, decoded window, its source Window, late traces folded in, records, exact ranks); only
 * when the signature or the range changed does it run a fresh stream over them. Each rank's
 * records are put on the window's time axis first (a rank counts its records from the window
 * start it saw, which may differ from the grid's by its clock offset), so the stream gets one
 * start per window as its interface asks. Everything the picture needs is computed from the kept
 * events: cells, computation bands, messages, collective lines, the marker of the largest
 * differential lateness, so that --meta can say exactly what was drawn.
 */
#include "model_internal.h"
#include "model_logical.h"
#include "model_ranks.h"
#include "model_trace.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t id;
    size_t at;
} idmap_t;

struct mw_lview {
    mw_logical_event_t *ev;
    size_t n, cap;
    idmap_t *ids; /* sorted by id */
    mw_lview_info_t info;
    uint64_t sig;
    int valid;
    int no_leap; /* mw_lview_set_leap(lv, 0) */
    /* Scratch of the pushes: records shifted onto the window's axis, and the rank list. */
    mw_trace_rec_t *rec;
    size_t rec_cap;
    mw_logical_rank_t *rk;
    size_t rk_cap;
};

mw_lview_t *mw_lview_new(void)
{
    mw_lview_t *lv = calloc(1, sizeof *lv);
    if (lv)
        lv->info.diff_event = -1;
    return lv;
}

void mw_lview_set_leap(mw_lview_t *lv, int on)
{
    if (lv->no_leap != !on)
        lv->valid = 0;
    lv->no_leap = !on;
}

void mw_lview_free(mw_lview_t *lv)
{
    if (!lv)
        return;
    free(lv->ev);
    free(lv->ids);
    free(lv->rec);
    free(lv->rk);
    free(lv);
}

const mw_lview_info_t *mw_lview_info(const mw_lview_t *lv)
{
    return &lv->info;
}

const mw_logical_event_t *mw_lview_events(const mw_lview_t *lv, size_t *n)
{
    *n = lv->n;
    return lv->ev;
}

static int id_cmp(const void *pa, const void *pb)
{
    const idmap_t *a = pa, *b = pb;
    return a->id < b->id ? -1 : a->id > b->id;
}

const mw_logical_event_t *mw_lview_event(const mw_lview_t *lv, uint64_t id)
{
    size_t lo = 0, hi = lv->ids ? lv->n : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (lv->ids[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < lv->n && lv->ids && lv->ids[lo].id == id ? &lv->ev[lv->ids[lo].at] : NULL;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

/* Keeps a batch's events (up to the cap; the rest counted) and frees the batch. */
static void keep_batch(mw_lview_t *lv, mw_logical_batch_t *b)
{
    size_t room = lv->n < MW_LVIEW_MAX_EVENTS ? MW_LVIEW_MAX_EVENTS - lv->n : 0;
    size_t take = b->nevents < room ? b->nevents : room;
    lv->info.dropped += b->nevents - take;
    if (take && lv->n + take > lv->cap) {
        size_t cap = lv->cap ? lv->cap : 4096;
        while (cap < lv->n + take)
            cap *= 2;
        if (cap > MW_LVIEW_MAX_EVENTS)
            cap = MW_LVIEW_MAX_EVENTS;
        mw_logical_event_t *v = realloc(lv->ev, cap * sizeof *v);
        if (!v) {
            lv->info.dropped += take;
            take = 0;
        } else {
            lv->ev = v;
            lv->cap = cap;
        }
    }
    if (take)
        memcpy(&lv->ev[lv->n], b->events, take * sizeof *b->events);
    lv->n += take;
    mw_logical_batch_free(b);
}

static int ev_step_cmp(const void *pa, const void *pb)
{
    const mw_logical_event_t *a = pa, *b = pb;
    if (a->step != b->step)
        return a->step < b->step ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* One window's exact ranks pushed, their records moved onto the window's axis. */
static int push_window(mw_lview_t *lv, mw_logical_stream_t *s, const mw_trace_window_t *tw)
{
    if (tw->n_ranks > lv->rk_cap) {
        mw_logical_rank_t *v = realloc(lv->rk, tw->n_ranks * sizeof *v);
        if (!v)
            return -1;
        lv->rk = v;
        lv->rk_cap = tw->n_ranks;
    }
    size_t total = 0;
    for (uint32_t i = 0; i < tw->n_ranks; i++)
        if (tw->ranks[i].exact && tw->ranks[i].base_ns != tw->start_ns)
            total += tw->ranks[i].n;
    if (total > lv->rec_cap) {
        mw_trace_rec_t *v = realloc(lv->rec, total * sizeof *v);
        if (!v)
            return -1;
        lv->rec = v;
        lv->rec_cap = total;
    }
    size_t nr = 0, used = 0;
    for (uint32_t i = 0; i < tw->n_ranks; i++) {
        const mw_trace_rank_t *e = &tw->ranks[i];
        if (!e->exact)
            continue;
        mw_logical_rank_t *o = &lv->rk[nr++];
        o->rank = e->rank;
        o->n = e->n;
        o->recs = e->recs;
        if (e->base_ns != tw->start_ns && e->n) {
            /* Both within MW_TRACE_TIME_MAX of each other (model_trace.c): no overflow. */
            int64_t d = (int64_t)(e->base_ns - tw->start_ns);
            mw_trace_rec_t *c = &lv->rec[used];
            memcpy(c, e->recs, e->n * sizeof *c);
            for (size_t j = 0; j < e->n; j++)
                c[j].start_ns += d;
            o->recs = c;
            used += e->n;
        }
    }
    mw_logical_batch_t b;
    memset(&b, 0, sizeof b);
    if (mw_logical_stream_push(s, tw->index, (int64_t)tw->start_ns, lv->rk, nr, &b) < 0)
        return -1;
    keep_batch(lv, &b);
    return 0;
}

int mw_lview_update(mw_lview_t *lv, const mw_model_t *m, double t0, double t1)
{
    const Mpiwatch__JobInfo *job = m->job;
    if (!job || !m->grid_set || !m->origin_set || !(t1 > t0)) {
        if (lv->valid || lv->n) {
            lv->n = 0;
            lv->valid = 0;
            free(lv->ids);
            lv->ids = NULL;
            memset(&lv->info, 0, sizeof lv->info);
            lv->info.diff_event = -1;
            return 1;
        }
        return 0;
    }
    int64_t a = mw__index_of_time(m, t0), b = mw__index_of_time(m, t1);
    if (a < 0)
        a = 0;
    if (b < a)
        b = a;
    if ((uint64_t)(b - a) >= MW_LVIEW_MAX_WINDOWS)
        b = a + MW_LVIEW_MAX_WINDOWS - 1;
    uint64_t k0 = (uint64_t)a, k1 = (uint64_t)b;
    /* The signature of what would be analysed. */
    uint64_t sig = mix(mix(mix(0, k0), k1), job->size), traced = 0;
    for (uint64_t k = k0; k <= k1; k++) {
        const mw_trace_window_t *tw = mw_trace_window(m, k);
        if (!tw || tw->over_cap || tw->exact == 0)
            continue;
        traced++;
        sig = mix(sig, k);
        sig = mix(sig, (uint64_t)(uintptr_t)tw->src);
        sig = mix(sig, tw->late_gen);
        sig = mix(sig, tw->records);
        sig = mix(sig, tw->exact);
    }
    if (lv->valid && lv->sig == sig)
        return 0;

    uint64_t analyses = lv->info.analyses;
    memset(&lv->info, 0, sizeof lv->info);
    lv->info.analyses = analyses + 1;
    lv->info.diff_event = -1;
    lv->info.k0 = k0;
    lv->info.k1 = k1;
    lv->info.traced_windows = traced;
    lv->info.ranks = job->size;
    lv->n = 0;
    free(lv->ids);
    lv->ids = NULL;
    lv->sig = sig;
    lv->valid = 1;
    if (traced == 0)
        return 1;

    mw_logical_opts_t o;
    memset(&o, 0, sizeof o); /* defaults for what this file does not set */
    o.flags = lv->no_leap ? 0 : MW_LOGICAL_LEAP;
    mw_logical_stream_t *s = mw_logical_stream_new(&o);
    if (!s) {
        lv->info.failed = 1;
        return 1;
    }
    for (uint64_t k = k0; k <= k1; k++) {
        const mw_trace_window_t *tw = mw_trace_window(m, k);
        if (!tw || tw->over_cap || tw->exact == 0)
            continue; /* a hole: the stream puts a gap before the next window */
        if (lv->n >= MW_LVIEW_MAX_EVENTS) {
            lv->info.windows_skipped++; /* nothing more would be kept: not analysed */
            continue;
        }
        if (push_window(lv, s, tw) < 0) {
            lv->info.failed = 1;
            break;
        }
    }
    mw_logical_batch_t bt;
    memset(&bt, 0, sizeof bt);
    if (mw_logical_stream_gap(s, &bt) == 0)
        keep_batch(lv, &bt);
    else
        lv->info.failed = 1;
    mw_logical_stream_stats(s, &lv->info.st);
    mw_logical_stream_free(s);

    /* Ranks beyond the job's size (never from a checked trace) are not drawn. */
    size_t o2 = 0;
    for (size_t i = 0; i < lv->n; i++)
        if (lv->ev[i].rank < job->size)
            lv->ev[o2++] = lv->ev[i];
    lv->info.dropped += lv->n - o2;
    lv->n = o2;
    if (lv->n)
        qsort(lv->ev, lv->n, sizeof *lv->ev, ev_step_cmp);
    lv->ids = lv->n ? malloc(lv->n * sizeof *lv->ids) : NULL;
    if (lv->ids) {
        for (size_t i = 0; i < lv->n; i++) {
            lv->ids[i].id = lv->ev[i].id;
            lv->ids[i].at = i;
        }
        qsort(lv->ids, lv->n, sizeof *lv->ids, id_cmp);
    }
    lv->info.events = lv->n;
    for (size_t i = 0; i < lv->n; i++) {
        const mw_logical_event_t *e = &lv->ev[i];
        if (e->step + 1 > lv->info.steps)
            lv->info.steps = e->step + 1;
        if (e->lateness_ns > lv->info.lateness_max_ns)
            lv->info.lateness_max_ns = e->lateness_ns;
        if (e->diff_ns > lv->info.diff_max_ns) {
            lv->info.diff_max_ns = e->diff_ns;
            lv->info.diff_event = (int64_t)i;
        }
    }
    return 1;
}

/* ---- the picture -------------------------------------------------------------------------- */

mw_rgb_t mw_lview_color(float t)
{
    /* On time: slate; then yellow, orange, red as lateness grows (a sequential scale, as
     * Ravel's, that reads against the plot's dark background). */
    static const float k[4][3] = {
        {0.30f, 0.36f, 0.46f}, {0.98f, 0.84f, 0.30f}, {0.98f, 0.52f, 0.16f}, {0.90f, 0.13f, 0.16f}};
    if (!(t > 0))
        t = 0;
    if (t > 1)
        t = 1;
    float x = t * 3;
    int i = x >= 3 ? 2 : (int)x;
    float f = x - (float)i;
    mw_rgb_t c = {k[i][0] + (k[i + 1][0] - k[i][0]) * f, k[i][1] + (k[i + 1][1] - k[i][1]) * f,
                  k[i][2] + (k[i + 1][2] - k[i][2]) * f};
    return c;
}

static int64_t metric_of(const mw_logical_event_t *e, mw_lview_metric_t mt)
{
    int64_t v = mt == MW_LVIEW_DIFF ? e->diff_ns : e->lateness_ns;
    return v > 0 ? v : 0;
}

/* Pixel columns [x0, x1) of step s's cell and of its whole column. */
static void step_cols(const mw_lview_pic_t *p, uint64_t s, double *c0, double *c1, double *x0,
                      double *x1)
{
    if (p->steps <= (uint64_t)p->w) {
        *c0 = floor((double)s * p->w / (double)p->steps);
        *c1 = floor((double)(s + 1) * p->w / (double)p->steps);
        *x0 = *c0;
        *x1 = *c0 + p->cell_w;
        if (*x1 > *c1)
            *x1 = *c1;
        if (*x1 <= *x0)
            *x1 = *x0 + 1;
    } else {
        *c0 = floor((double)s * p->w / (double)p->steps);
        *c1 = *c0 + 1;
        *x0 = *c0;
        *x1 = *c1;
    }
}

void mw_lview_cell(const mw_lview_pic_t *pic, uint64_t step, uint32_t rank, float *x0, float *y0,
                   float *x1, float *y1)
{
    double c0, c1, a, b, ya, yb;
    step_cols(pic, step, &c0, &c1, &a, &b);
    mw_ranks_rows(pic->ranks, pic->h, rank, &ya, &yb);
    *x0 = (float)a;
    *x1 = (float)b;
    *y0 = (float)ya;
    *y1 = (float)yb;
}

typedef struct {
    uint64_t step, part;
    uint32_t rank;
} collkey_t;

static int coll_cmp(const void *pa, const void *pb)
{
    const collkey_t *a = pa, *b = pb;
    if (a->step != b->step)
        return a->step < b->step ? -1 : 1;
    if (a->part != b->part)
        return a->part < b->part ? -1 : 1;
    return a->rank < b->rank ? -1 : a->rank > b->rank;
}

int mw_lview_bin(const mw_lview_t *lv, mw_lview_metric_t metric, int w, int h, float *A, float *C,
                 mw_lview_msg_t *msgs, size_t max_msgs, mw_lview_coll_t *colls, size_t max_colls,
                 int64_t sel_rank, uint64_t sel_start_ns, uint64_t sel_end_ns, mw_lview_pic_t *pic)
{
    memset(pic, 0, sizeof *pic);
    pic->mark = pic->sel = -1;
    pic->w = w;
    pic->h = h;
    pic->metric = metric;
    if (w <= 0 || h <= 0)
        return -1;
    size_t npx = (size_t)w * h;
    memset(A, 0, npx * sizeof *A);
    memset(C, 0, 3 * npx * sizeof *C);
    const mw_lview_info_t *in = &lv->info;
    pic->ranks = in->ranks;
    pic->steps = in->steps;
    if (!lv->n || !in->steps || !in->ranks)
        return -1;
    const uint64_t S = in->steps;
    const uint32_t R = in->ranks;
    pic->col_w = (double)w / (double)S;
    pic->steps_per_col = S > (uint64_t)w ? (double)S / w : 1;
    pic->ranks_per_row = R > (uint32_t)h ? (double)R / h : 1;
    /* A step's cell leaves room for the computation band when columns are wide enough. */
    pic->cell_w = pic->col_w >= 4 ? floor(pic->col_w * 0.62) : pic->col_w;
    if (pic->cell_w < 1)
        pic->cell_w = 1;
    int64_t vmax = 1, cmax = 1;
    for (size_t i = 0; i < lv->n; i++) {
        int64_t v = metric_of(&lv->ev[i], metric);
        if (v > vmax)
            vmax = v;
        if (lv->ev[i].comp_before_ns > cmax)
            cmax = lv->ev[i].comp_before_ns;
    }
    pic->scale_max_ns = vmax;

    float *val = malloc(npx * sizeof *val), *cmp = calloc(npx, sizeof *cmp);
    collkey_t *ck = NULL;
    if (!val || !cmp) {
        free(val);
        free(cmp);
        return -1;
    }
    for (size_t i = 0; i < npx; i++)
        val[i] = -1;
    size_t nck = 0;
    for (size_t i = 0; i < lv->n; i++)
        nck += lv->ev[i].kind == MW_LE_COLL;
    if (nck)
        ck = malloc(nck * sizeof *ck);
    nck = 0;
    const int band = pic->col_w >= 4; /* computation drawn between cells */
    for (size_t i = 0; i < lv->n; i++) {
        const mw_logical_event_t *e = &lv->ev[i];
        double c0, c1, x0, x1, y0, y1;
        step_cols(pic, e->step, &c0, &c1, &x0, &x1);
        mw_ranks_rows(R, h, e->rank, &y0, &y1);
        if (y1 - y0 >= 6) /* rows apart: neighbours' cells at one step stay two cells */
            y0 += 1, y1 -= 1;
        float v = (float)metric_of(e, metric);
        for (int y = (int)y0; y < (int)y1 && y < h; y++)
            for (int x = (int)x0; x < (int)x1 && x < w; x++) {
                size_t p = (size_t)y * w + x;
                if (v > val[p])
                    val[p] = v;
            }
        if (ck && e->kind == MW_LE_COLL)
            ck[nck++] = (collkey_t){e->step, e->partition, e->rank};
        /* The computation before it, from the end of its rank's previous cell. */
        if (band && e->comp_before_ns > 0 && e->rank_prev >= 0) {
            const mw_logical_event_t *pv = mw_lview_event(lv, (uint64_t)e->rank_prev);
            double pc0, pc1, px0, px1;
            if (pv && pv->step < e->step) {
                step_cols(pic, pv->step, &pc0, &pc1, &px0, &px1);
                double rh = y1 - y0;
                int by0 = (int)(rh >= 3 ? y0 + floor(rh / 3) : y0);
                int by1 = (int)(rh >= 3 ? y1 - floor(rh / 3) : y1);
                float cv = (float)e->comp_before_ns;
                for (int y = by0; y < by1 && y < h; y++)
                    for (int x = (int)px1; x < (int)x0 && x < w; x++) {
                        size_t p = (size_t)y * w + x;
                        if (cv > cmp[p])
                            cmp[p] = cv;
                    }
            }
        }
    }
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            size_t p = (size_t)y * w + x, o = (size_t)(h - 1 - y) * w + x;
            if (val[p] >= 0) {
                mw_rgb_t c = mw_lview_color(val[p] / (float)vmax);
                A[o] = 1.0f;
                C[3 * o] = c.r;
                C[3 * o + 1] = c.g;
                C[3 * o + 2] = c.b;
            } else if (cmp[p] > 0) {
                A[o] = 0.18f + 0.5f * cmp[p] / (float)cmax;
                C[3 * o] = 0.72f;
                C[3 * o + 1] = 0.76f;
                C[3 * o + 2] = 0.84f;
            }
        }
    free(val);
    free(cmp);

    /* Messages: send cell centre to receive cell centre. */
    for (size_t i = 0; i < lv->n; i++) {
        const mw_logical_event_t *e = &lv->ev[i];
        if (e->kind != MW_LE_SEND || e->msg_peer < 0)
            continue;
        const mw_logical_event_t *rv = mw_lview_event(lv, (uint64_t)e->msg_peer);
        if (!rv)
            continue;
        pic->msgs++;
        if (pic->msgs_out >= max_msgs)
            continue;
        float ax0, ay0, ax1, ay1, bx0, by0, bx1, by1;
        mw_lview_cell(pic, e->step, e->rank, &ax0, &ay0, &ax1, &ay1);
        mw_lview_cell(pic, rv->step, rv->rank, &bx0, &by0, &bx1, &by1);
        mw_lview_msg_t *mo = &msgs[pic->msgs_out++];
        mo->x0 = (ax0 + ax1) / 2;
        mo->y0 = (ay0 + ay1) / 2;
        mo->x1 = (bx0 + bx1) / 2;
        mo->y1 = (by0 + by1) / 2;
        mo->late = (float)metric_of(rv, metric) / (float)vmax;
    }
    /* Collective instances: one line per (step, partition) across its ranks. */
    if (ck && nck) {
        qsort(ck, nck, sizeof *ck, coll_cmp);
        for (size_t i = 0; i < nck;) {
            size_t j = i;
            while (j + 1 < nck && ck[j + 1].step == ck[i].step && ck[j + 1].part == ck[i].part)
                j++;
            pic->colls++;
            if (j > i && pic->colls_out < max_colls) {
                float x0, y0, x1, y1, u0, v0, u1, v1;
                mw_lview_cell(pic, ck[i].step, ck[i].rank, &x0, &y0, &x1, &y1);
                mw_lview_cell(pic, ck[j].step, ck[j].rank, &u0, &v0, &u1, &v1);
                mw_lview_coll_t *co = &colls[pic->colls_out++];
                co->x = (x0 + x1) / 2;
                co->y0 = (y0 + y1) / 2;
                co->y1 = (v0 + v1) / 2;
            }
            i = j + 1;
        }
    }
    free(ck);

    if (in->diff_event >= 0 && (size_t)in->diff_event < lv->n) {
        const mw_logical_event_t *e = &lv->ev[in->diff_event];
        pic->mark = in->diff_event;
        mw_lview_cell(pic, e->step, e->rank, &pic->mark_x0, &pic->mark_y0, &pic->mark_x1,
                      &pic->mark_y1);
    }
    if (sel_rank >= 0) {
        for (size_t i = 0; i < lv->n; i++) {
            const mw_logical_event_t *e = &lv->ev[i];
            if ((int64_t)e->rank != sel_rank || (uint64_t)e->end_ns < sel_start_ns ||
                (uint64_t)e->start_ns > sel_end_ns)
                continue;
            pic->sel = (int64_t)i;
            mw_lview_cell(pic, e->step, e->rank, &pic->sel_x0, &pic->sel_y0, &pic->sel_x1,
                          &pic->sel_y1);
            break;
        }
    }
    return 0;
}

/* The events of steps [s0, s1] and ranks [r0, r1]: the one with the largest value, or -1. */
static int64_t best_in(const mw_lview_t *lv, mw_lview_metric_t mt, uint64_t s0, uint64_t s1,
                       uint32_t r0, uint32_t r1)
{
    size_t lo = 0, hi = lv->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (lv->ev[mid].step < s0)
            lo = mid + 1;
        else
            hi = mid;
    }
    int64_t best = -1, bv = -1;
    for (size_t i = lo; i < lv->n && lv->ev[i].step <= s1; i++) {
        const mw_logical_event_t *e = &lv->ev[i];
        if (e->rank < r0 || e->rank > r1)
            continue;
        int64_t v = metric_of(e, mt);
        if (v > bv) {
            bv = v;
            best = (int64_t)i;
        }
    }
    return best;
}

static void event_pick(const mw_model_t *m, const mw_logical_event_t *e, mw_pick_t *out);

mw_pick_t mw_lview_pick(const mw_lview_t *lv, const mw_model_t *m, const mw_lview_pic_t *pic, int x,
                        int y)
{
    mw_pick_t pk;
    memset(&pk, 0, sizeof pk);
    pk.kind = MW_PICK_NONE;
    pk.peer = -1;
    if (!pic->steps || !pic->ranks || x < 0 || y < 0 || x >= pic->w || y >= pic->h)
        return pk;
    uint32_t last = 0, r0 = mw_ranks_at(pic->ranks, pic->h, y, &last);
    pk.kind = MW_PICK_RANK;
    pk.rank = r0;
    uint64_t s0, s1;
    if (pic->steps <= (uint64_t)pic->w) {
        s0 = (uint64_t)((double)x * (double)pic->steps / pic->w);
        while (s0 + 1 < pic->steps && floor((double)(s0 + 1) * pic->w / (double)pic->steps) <= x)
            s0++;
        while (s0 > 0 && floor((double)s0 * pic->w / (double)pic->steps) > x)
            s0--;
        s1 = s0;
    } else {
        s0 = (uint64_t)ceil((double)x * (double)pic->steps / pic->w);
        s1 = (uint64_t)ceil((double)(x + 1) * (double)pic->steps / pic->w);
        s1 = s1 > s0 ? s1 - 1 : s0;
    }
    int64_t i = best_in(lv, pic->metric, s0, s1, r0, last);
    if (i < 0)
        return pk;
    event_pick(m, &lv->ev[i], &pk);
    return pk;
}

/* The pick of event e: its call, step and lateness; communicator, tag and bytes from its record
 * when its window is still held. */
static void event_pick(const mw_model_t *m, const mw_logical_event_t *e, mw_pick_t *out)
{
    mw_pick_t pk = *out;
    pk.kind = MW_PICK_CALL;
    pk.rank = e->rank;
    pk.fn = e->fn;
    pk.peer = e->peer;
    pk.start_ns = (uint64_t)e->start_ns;
    pk.duration_ns = e->end_ns > e->start_ns ? (uint64_t)(e->end_ns - e->start_ns) : 0;
    pk.traced = 1;
    pk.tkind = e->kind == MW_LE_SEND ? MW_TK_SEND : e->kind == MW_LE_RECV ? MW_TK_RECV : MW_TK_COLL;
    pk.logical = 1;
    pk.step = e->step;
    pk.lateness_ns = e->lateness_ns;
    pk.diff_ns = e->diff_ns;
    pk.lclass = e->cls;
    /* Communicator, tag and bytes from the event's record, when its window is still held. */
    const mw_trace_window_t *tw = mw_trace_window(m, e->window);
    for (uint32_t j = 0; tw && !tw->over_cap && j < tw->n_ranks; j++) {
        const mw_trace_rank_t *t = &tw->ranks[j];
        if (t->rank != e->rank || !t->exact || e->rec >= t->n)
            continue;
        const mw_trace_rec_t *r = &t->recs[e->rec];
        pk.tag = r->tag;
        pk.comm = r->comm;
        pk.bytes = r->bytes;
        pk.tkind = r->kind;
    }
    *out = pk;
}

/* The strip span of event e: from its rank's previous event's end (else its own start). */
static void strip_span(const mw_lview_t *lv, const mw_logical_event_t *e, int64_t *a, int64_t *b)
{
    const mw_logical_event_t *pv =
        e->rank_prev >= 0 ? mw_lview_event(lv, (uint64_t)e->rank_prev) : NULL;
    *a = pv && pv->end_ns <= e->end_ns ? pv->end_ns : e->start_ns;
    *b = e->end_ns > *a ? e->end_ns : *a;
}

int mw_lview_strip(const mw_lview_t *lv, mw_lview_metric_t metric, int64_t scale_max_ns,
                   uint64_t g0, uint64_t g1, int w, int h, float *A, float *C)
{
    if (w <= 0 || h <= 0)
        return -1;
    size_t npx = (size_t)w * h;
    memset(A, 0, npx * sizeof *A);
    memset(C, 0, 3 * npx * sizeof *C);
    if (!lv->n || !lv->info.ranks || g1 <= g0)
        return -1;
    const uint32_t R = lv->info.ranks;
    float *val = malloc(npx * sizeof *val);
    if (!val)
        return -1;
    for (size_t i = 0; i < npx; i++)
        val[i] = -1;
    const double xs = (double)w / (double)(g1 - g0);
    for (size_t i = 0; i < lv->n; i++) {
        const mw_logical_event_t *e = &lv->ev[i];
        int64_t a, b;
        strip_span(lv, e, &a, &b);
        double xa = ((double)a - (double)g0) * xs, xb = ((double)b - (double)g0) * xs;
        if (xb < 0 || xa >= w)
            continue;
        int c0 = xa < 0 ? 0 : (int)xa, c1 = xb >= w ? w - 1 : (int)xb;
        double y0, y1;
        mw_ranks_rows(R, h, e->rank, &y0, &y1);
        float v = (float)metric_of(e, metric);
        for (int y = (int)y0; y < (int)y1 && y < h; y++)
            for (int x = c0; x <= c1; x++) {
                size_t p = (size_t)y * w + x;
                if (v > val[p])
                    val[p] = v;
            }
    }
    float top = (float)(scale_max_ns > 0 ? scale_max_ns : 1);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            size_t p = (size_t)y * w + x, o = (size_t)(h - 1 - y) * w + x;
            if (val[p] < 0)
                continue;
            mw_rgb_t c = mw_lview_color(val[p] / top);
            A[o] = 1.0f;
            C[3 * o] = c.r;
            C[3 * o + 1] = c.g;
            C[3 * o + 2] = c.b;
        }
    free(val);
    return 0;
}

mw_pick_t mw_lview_strip_pick(const mw_lview_t *lv, const mw_model_t *m, mw_lview_metric_t metric,
                              uint64_t g0, uint64_t g1, int w, int h, int x, int y)
{
    mw_pick_t pk;
    memset(&pk, 0, sizeof pk);
    pk.kind = MW_PICK_NONE;
    pk.peer = -1;
    if (!lv->n || !lv->info.ranks || g1 <= g0 || x < 0 || y < 0 || x >= w || y >= h)
        return pk;
    uint32_t last = 0, r0 = mw_ranks_at(lv->info.ranks, h, y, &last);
    pk.kind = MW_PICK_RANK;
    pk.rank = r0;
    double ns = (double)(g1 - g0) / w;
    double ta = (double)g0 + x * ns, tb = ta + ns;
    int64_t best = -1, bv = -1;
    for (size_t i = 0; i < lv->n; i++) {
        const mw_logical_event_t *e = &lv->ev[i];
        if (e->rank < r0 || e->rank > last)
            continue;
        int64_t a, b;
        strip_span(lv, e, &a, &b);
        if ((double)b < ta || (double)a > tb)
            continue;
        int64_t v = metric_of(e, metric);
        if (v > bv) {
            bv = v;
            best = (int64_t)i;
        }
    }
    if (best >= 0)
        event_pick(m, &lv->ev[best], &pk);
    return pk;
}

void mw_lview_split(const mw_layout_t *l, mw_rect_t *ranks, mw_rect_t *plot, int *head_y)
{
    const mw_rect_t *d = &l->density;
    float sc = l->scale > 0 ? l->scale : 1.0f;
    int fs = l->font_px * 85 / 100 < 8 ? 8 : l->font_px * 85 / 100;
    int lh = (int)(fs * 1.35f + 0.5f);
    int axis = lh + (int)(8 * sc);      /* the per-rank timeline's time labels */
    int head = 2 * lh + (int)(10 * sc); /* the logical view's title and its marker line */
    int avail = d->h - axis - head;
    if (avail < 2) {
        *ranks = (mw_rect_t){d->x, d->y, d->w, 0};
        *plot = *d;
        *head_y = d->y;
        return;
    }
    int hr = avail * 38 / 100;
    *ranks = (mw_rect_t){d->x, d->y, d->w, hr};
    *head_y = d->y + hr + axis;
    *plot = (mw_rect_t){d->x, *head_y + head, d->w, d->y + d->h - (*head_y + head)};
}
