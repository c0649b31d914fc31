/* model_ranks.c: the per-rank timeline's rows, spans and messages (see model_ranks.h). No SDL,
 * no GL.
 *
 * DESIGN: one pass over the windows of the range: a traced rank's calls add their time to the
 * pixel columns they cover, per palette layer, in the rank's row group; a rank drawn from its
 * window's summary adds its share in MPI times the overlap to a separate sum. Then each pixel
 * becomes the dominant layer's colour (exact time) or the summary grey, at an opacity that
 * grows with the share of the pixel's rank-time spent in MPI. Messages come from the matcher
 * (mw_trace_links) over the same windows.
 */
#include "model_internal.h"
#include "model_ranks.h"
#include "model_trace.h"

#include <stdlib.h>
#include <string.h>

void mw_ranks_rows(uint32_t ranks, int h, uint32_t r, double *y0, double *y1)
{
    if (ranks == 0 || h <= 0) {
        *y0 = *y1 = 0;
        return;
    }
    if (ranks <= (uint32_t)h) {
        *y0 = floor((double)r * h / ranks);
        *y1 = floor((double)(r + 1) * h / ranks);
    } else {
        *y0 = floor((double)r * h / ranks);
        *y1 = *y0 + 1;
    }
}

uint32_t mw_ranks_at(uint32_t ranks, int h, int y, uint32_t *last)
{
    if (ranks == 0 || h <= 0 || y < 0 || y >= h) {
        if (last)
            *last = 0;
        return 0;
    }
    if (ranks <= (uint32_t)h) {
        uint32_t r = (uint32_t)((uint64_t)y * ranks / (uint64_t)h);
        while (r + 1 < ranks && floor((double)(r + 1) * h / ranks) <= y)
            r++;
        while (r > 0 && floor((double)r * h / ranks) > y)
            r--;
        if (last)
            *last = r;
        return r;
    }
    /* More ranks than rows: row y holds the ranks with floor(r h / R) == y. */
    uint64_t a = ((uint64_t)y * ranks + (uint64_t)h - 1) / (uint64_t)h;
    uint64_t b = ((uint64_t)(y + 1) * ranks + (uint64_t)h - 1) / (uint64_t)h;
    if (last)
        *last = (uint32_t)(b > a ? b - 1 : a);
    return (uint32_t)a;
}

/* Row group of rank r and the ranks in each group. */
static int group_of(uint32_t ranks, int h, uint32_t r)
{
    if (ranks <= (uint32_t)h)
        return (int)r;
    return (int)((uint64_t)r * (uint64_t)h / ranks);
}

typedef struct {
    int w, groups;
    double t0ns, xs; /* left edge (ns since the origin), pixels per ns */
    uint64_t origin;
    float *acc; /* [groups][w][MW__LAYERS] exact ns */
    float *sum; /* [groups][w] summary ns (share x overlap) */
} racc_t;

/* Adds the span [s, e) (global ns) to a group's columns: per layer, or to the summary. */
static void add_span(racc_t *a, int g, int layer, uint64_t s, uint64_t e, float share)
{
    if (e <= s)
        return;
    double xa = ((double)(int64_t)(s - a->origin) - a->t0ns) * a->xs;
    double xb = ((double)(int64_t)(e - a->origin) - a->t0ns) * a->xs;
    if (xb <= 0 || xa >= a->w)
        return;
    int c0 = xa < 0 ? 0 : (int)xa, c1 = xb >= a->w ? a->w - 1 : (int)xb;
    for (int c = c0; c <= c1; c++) {
        double lo = c > xa ? c : xa, hi = c + 1 < xb ? c + 1 : xb;
        if (hi <= lo)
            continue;
        float ns = (float)((hi - lo) / a->xs);
        if (layer >= 0)
            a->acc[((size_t)g * a->w + c) * MW__LAYERS + layer] += ns;
        else
            a->sum[(size_t)g * a->w + c] += ns * share;
    }
}

static const mw_trace_rank_t *rank_entry(const mw_trace_window_t *tw, uint32_t r)
{
    size_t lo = 0, hi = tw->n_ranks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (tw->ranks[mid].rank < r)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < tw->n_ranks && tw->ranks[lo].rank == r ? &tw->ranks[lo] : NULL;
}

int mw_ranks_bin(const mw_model_t *m, const mw_view_t *v, double t0, double t1, int w, int h,
                 float *A, float *C, mw_ranks_msg_t *msgs, size_t max_msgs, mw_ranks_info_t *info)
{
    (void)v;
    memset(info, 0, sizeof *info);
    info->alpha_min = MW_RANKS_ALPHA_MIN;
    if (w <= 0 || h <= 0)
        return -1;
    size_t npx = (size_t)w * h;
    memset(A, 0, npx * sizeof *A);
    memset(C, 0, 3 * npx * sizeof *C);
    const Mpiwatch__JobInfo *job = m->job;
    if (!job || job->size == 0 || !m->grid_set || !m->origin_set || !(t1 > t0))
        return -1;
    const uint32_t R = job->size;
    const int G = R <= (uint32_t)h ? (int)R : h;
    info->ranks = R;
    info->groups = G;
    racc_t a = {w,    G,   t0 * MW__NS_PER_S, w / ((t1 - t0) * MW__NS_PER_S), mw_model_origin_ns(m),
                NULL, NULL};
    a.acc = calloc((size_t)G * w * MW__LAYERS, sizeof *a.acc);
    a.sum = calloc((size_t)G * w, sizeof *a.sum);
    uint32_t *gn = calloc((size_t)G, sizeof *gn); /* ranks per group */
    if (!a.acc || !a.sum || !gn) {
        free(a.acc);
        free(a.sum);
        free(gn);
        return -1;
    }
    for (uint32_t r = 0; r < R; r++)
        gn[group_of(R, h, r)]++;

    /* Calls that end after t0 may start before it: one window of margin for the records
     * (a call's record comes with the window it ends in), none needed before. */
    int64_t k0 = mw__index_of_time(m, t0), k1 = mw__index_of_time(m, t1) + 1;
    size_t p0, p1;
    mw__window_range(m, k0, k1, &p0, &p1);
    for (size_t p = p0; p < p1; p++) {
        const Mpiwatch__Window *win = m->ent[p].w;
        uint64_t ws = mw_model_window_start(m, win->index), we = ws + win->window_ns;
        const mw_trace_window_t *tw = mw_trace_window(m, win->index);
        if (tw && (tw->over_cap || tw->exact == 0))
            tw = NULL;
        if ((int64_t)win->index <= mw__index_of_time(m, t1)) {
            if (!tw)
                info->summary_windows++;
            else if (tw->all_exact)
                info->exact_windows++;
            else
                info->partial_windows++;
        }
        for (uint32_t r = 0; r < R; r++) {
            int g = group_of(R, h, r);
            const mw_trace_rank_t *e = tw ? rank_entry(tw, r) : NULL;
            if (e && e->exact) {
                for (size_t j = 0; j < e->n; j++) {
                    const mw_trace_rec_t *rec = &e->recs[j];
                    if (!mw_trace_is_call(rec) || !rec->dur_ns)
                        continue;
                    uint64_t s = mw_trace_rec_start(e, rec);
                    add_span(&a, g, mw__layer_of(m, rec->fn), s, s + rec->dur_ns, 1.0f);
                }
                continue;
            }
            if (r >= win->n_rank_mpi_permille || win->rank_mpi_permille[r] > 1000 * 64)
                continue; /* not in the window (65535), or no per-rank figures */
            float share = (float)win->rank_mpi_permille[r] / 1000.0f;
            if (share > 1.0f)
                share = 1.0f; /* several threads: a rank row shows at most all of its time */
            if (share > 0)
                add_span(&a, g, -1, ws, we, share);
        }
    }
    /* Calls still in progress at the newest window, growing to its end. */
    mw_trace_open_t open[256];
    size_t no = mw_trace_open_calls(m, open, 256);
    for (size_t i = 0; i < no; i++)
        if (open[i].rank < R)
            add_span(&a, group_of(R, h, open[i].rank), mw__layer_of(m, open[i].fn),
                     open[i].start_ns, open[i].start_ns + open[i].grown_ns, 1.0f);

    /* Pixels. */
    float col[MW__LAYERS][3];
    for (int l = 0; l < MW__LAYERS; l++) {
        mw_rgb_t c = mw__layer_color(l);
        col[l][0] = c.r;
        col[l][1] = c.g;
        col[l][2] = c.b;
    }
    const double colns = 1.0 / a.xs;
    for (int g = 0; g < G; g++) {
        double gy0, gy1;
        if (R <= (uint32_t)h) {
            mw_ranks_rows(R, h, (uint32_t)g, &gy0, &gy1);
        } else {
            gy0 = g;
            gy1 = g + 1;
        }
        double cap = colns * (gn[g] ? gn[g] : 1);
        for (int x = 0; x < w; x++) {
            const float *ac = &a.acc[((size_t)g * w + x) * MW__LAYERS];
            float tot = 0, best = 0;
            int bl = -1;
            for (int l = 0; l < MW__LAYERS; l++) {
                tot += ac[l];
                if (ac[l] > best) {
                    best = ac[l];
                    bl = l;
                }
            }
            float sm = a.sum[(size_t)g * w + x];
            if (tot <= 0 && sm <= 0)
                continue;
            double share = (tot + sm) / cap;
            share = share > 1 ? 1 : share;
            /* An exact call is never fainter than MW_RANKS_ALPHA_MIN (one short call in a
             * pixel must show); a summary's shade follows its share, so that 1 % in MPI stays
             * faint. */
            float amin = tot > 0 ? MW_RANKS_ALPHA_MIN : MW_RANKS_SUMMARY_ALPHA_MIN;
            float alpha = amin + (1.0f - amin) * (float)share;
            const float summ[3] = {MW_RANKS_SUMMARY_R, MW_RANKS_SUMMARY_G, MW_RANKS_SUMMARY_B};
            const float *cw = bl >= 0 ? col[bl] : summ;
            for (int y = (int)gy0; y < (int)gy1 && y < h; y++) {
                float al = alpha;
                /* Summary time is hatched: diagonal stripes of half the opacity. */
                if (bl < 0 && ((x + y) / 3) % 2 == 0)
                    al *= 0.5f;
                size_t i = (size_t)(h - 1 - y) * w + x;
                A[i] = al;
                C[3 * i] = cw[0];
                C[3 * i + 1] = cw[1];
                C[3 * i + 2] = cw[2];
            }
        }
    }
    free(a.acc);
    free(a.sum);
    free(gn);

    /* Messages: matched over the windows of the range (and one after, for receives that end
     * there). */
    if (k0 < 0)
        k0 = 0;
    const mw_trace_links_t *lk = k1 >= k0 ? mw_trace_links(m, (uint64_t)k0, (uint64_t)k1) : NULL;
    if (lk && lk->ok) {
        double g0 = (double)a.origin + a.t0ns, g1 = (double)a.origin + t1 * MW__NS_PER_S;
        for (size_t i = 0; i < lk->m.nmsgs; i++) {
            const mw_trace_match_t *mt = &lk->m.msgs[i];
            if (mt->send_part >= lk->n_parts || mt->recv_part >= lk->n_parts)
                continue;
            const mw_trace_part_t *sp = &lk->parts[mt->send_part], *rp = &lk->parts[mt->recv_part];
            if (mt->send_rec >= sp->n || mt->recv_rec >= rp->n || sp->rank >= R || rp->rank >= R)
                continue;
            const mw_trace_rec_t *sr = &sp->recs[mt->send_rec], *rr = &rp->recs[mt->recv_rec];
            uint64_t s = (uint64_t)sp->base_ns + (uint64_t)sr->start_ns;
            uint64_t e = (uint64_t)rp->base_ns + (uint64_t)rr->start_ns + rr->dur_ns;
            double lo = (double)(s < e ? s : e), hi = (double)(s < e ? e : s);
            if (hi < g0 || lo > g1)
                continue;
            info->msgs++;
            if (info->msgs_out >= max_msgs)
                continue;
            mw_ranks_msg_t *o = &msgs[info->msgs_out++];
            double y0a, y0b, y1a, y1b;
            mw_ranks_rows(R, h, sp->rank, &y0a, &y0b);
            mw_ranks_rows(R, h, rp->rank, &y1a, &y1b);
            o->x0 = ((double)(int64_t)(s - a.origin) - a.t0ns) * a.xs;
            o->x1 = ((double)(int64_t)(e - a.origin) - a.t0ns) * a.xs;
            o->y0 = (y0a + y0b) / 2;
            o->y1 = (y1a + y1b) / 2;
            o->src = sp->rank;
            o->dst = rp->rank;
            o->send_ns = s;
            o->recv_end_ns = e;
        }
    }
    return 0;
}

mw_pick_t mw_ranks_pick(const mw_model_t *m, const mw_view_t *v, const mw_rect_t *r, int x, int y)
{
    mw_pick_t pk;
    memset(&pk, 0, sizeof pk);
    pk.kind = MW_PICK_NONE;
    pk.peer = -1;
    const Mpiwatch__JobInfo *job = m->job;
    if (!job || !job->size || x < r->x || x >= r->x + r->w || y < r->y || y >= r->y + r->h ||
        !m->grid_set || !m->origin_set)
        return pk;
    double f0, f1;
    mw_view_focus(v, &f0, &f1);
    if (!(f1 > f0))
        return pk;
    uint32_t rank = mw_ranks_at(job->size, r->h, y - r->y, NULL);
    pk.kind = MW_PICK_RANK;
    pk.rank = rank;
    /* The rank's traced call under the pointer (its row is exact there). */
    double t = f0 + (x - r->x + 0.5) * (f1 - f0) / r->w;
    uint64_t g = mw_model_origin_ns(m) + (uint64_t)(t * MW__NS_PER_S);
    double tol = (f1 - f0) / r->w * MW__NS_PER_S; /* one pixel */
    int64_t k = mw__index_of_time(m, t);
    for (int64_t kk = k; kk <= k + 1; kk++) {
        if (kk < 0)
            continue;
        const mw_trace_window_t *tw = mw_trace_window(m, (uint64_t)kk);
        const mw_trace_rank_t *e = tw && !tw->over_cap ? rank_entry(tw, rank) : NULL;
        if (!e || !e->exact)
            continue;
        for (size_t j = 0; j < e->n; j++) {
            const mw_trace_rec_t *rec = &e->recs[j];
            if (!mw_trace_is_call(rec))
                continue;
            uint64_t s = mw_trace_rec_start(e, rec);
            if ((double)g + tol < (double)s || (double)g - tol > (double)(s + rec->dur_ns))
                continue;
            pk.kind = MW_PICK_CALL;
            pk.fn = rec->fn;
            pk.peer = rec->peer;
            pk.start_ns = s;
            pk.duration_ns = rec->dur_ns;
            pk.bytes = rec->bytes;
            pk.traced = 1;
            pk.tag = rec->tag;
            pk.comm = rec->comm;
            pk.tkind = rec->kind;
            return pk;
        }
    }
    return pk;
}
