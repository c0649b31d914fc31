/* model_timeline.c: the stacked timeline's columns: for each pixel column, the fraction of
 * ranks inside each function, averaged over the sub-slots the column covers. No SDL, no GL
 * (see model_timeline.h).
 */
#include "model_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the timeline ------------------------------------------------------------------------- */

int mw_timeline_columns(const mw_model_t *m, double t0, double t1, int ncols, float *out)
{
    const int stride = MW_PALETTE + 2;
    if (ncols <= 0)
        return 0;
    memset(out, 0, (size_t)ncols * stride * sizeof *out);
    if (!m->grid_set || !m->origin_set || !(t1 > t0) || m->n == 0)
        return 0;
    const uint32_t S = m->subslots;
    const double base = t0 * MW__NS_PER_S, colw = (t1 - t0) * MW__NS_PER_S / ncols;
    /* Fractions per sub-slot and layer of the window `cur`, computed once for the columns that
     * cut it. */
    double frac[MW_MAX_SUBSLOTS][MW__LAYERS];
    int64_t cur = INT64_MIN;
    int with_data = 0;
    size_t pos = 0; /* cursor in the sorted windows: columns only move forward */
    for (int c = 0; c < ncols; c++) {
        double a = base + c * colw, b = a + colw;
        double acc[MW__LAYERS] = {0}, covered = 0;
        /* k: absolute window index; the windows' own starts and lengths (the grid can
         * change mid-run). */
        int64_t k = mw__index_of_rel(m, a);
        int64_t klast = mw__index_of_rel(m, b);
        if (mw__rel_start(m, klast) >= b)
            klast--;
        while (k <= klast) {
            int64_t abs = k;
            if (abs < 0) {
                k = 0;
                continue;
            }
            while (pos > 0 && m->ent[pos - 1].index >= (uint64_t)abs)
                pos--;
            while (pos < m->n && m->ent[pos].index < (uint64_t)abs)
                pos++;
            if (pos == m->n)
                break;
            if (m->ent[pos].index != (uint64_t)abs) {
                /* Jump over the gap to the next cached window. */
                k = (int64_t)m->ent[pos].index;
                continue;
            }
            const Mpiwatch__Window *w = m->ent[pos].w;
            const double W = (double)w->window_ns, ss = W / S;
            double ws = mw__rel_start(m, k), we = ws + W;
            double oa = fmax(a, ws), ob = fmin(b, we);
            double rr = w->ranks_reporting;
            if (ob > oa && oa <= ws && ob >= we) {
                /* The whole window is in the column: its sub-slots need not be told apart. */
                for (size_t i = 0; rr > 0 && i < w->n_occ_fn; i++)
                    if (w->occ_sub[i] < S)
                        acc[mw__layer_of(m, w->occ_fn[i])] += (double)w->occ_ns[i] / rr;
                covered += W;
            } else if (ob > oa) {
                if (cur != abs) {
                    cur = abs;
                    memset(frac, 0, sizeof frac);
                    for (size_t i = 0; rr > 0 && i < w->n_occ_fn; i++)
                        if (w->occ_sub[i] < S)
                            frac[w->occ_sub[i]][mw__layer_of(m, w->occ_fn[i])] +=
                                (double)w->occ_ns[i] / (ss * rr);
                }
                int s0 = (int)floor((oa - ws) / ss), s1 = (int)ceil((ob - ws) / ss) - 1;
                s0 = mw__imax(s0, 0);
                s1 = mw__imin(s1, (int)S - 1);
                for (int s = s0; s <= s1; s++) {
                    double ov = fmin(ob, ws + (s + 1) * ss) - fmax(oa, ws + s * ss);
                    if (ov <= 0)
                        continue;
                    for (int l = 0; l < MW__LAYERS; l++)
                        acc[l] += frac[s][l] * ov;
                    covered += ov;
                }
            }
            k++;
        }
        if (covered > 0) {
            float *o = &out[(size_t)c * stride];
            double cum = 0;
            for (int l = 0; l < MW__LAYERS; l++) {
                cum += acc[l] / covered;
                o[l] = (float)(cum < 1.0 ? cum : 1.0);
            }
            o[MW_PALETTE + 1] = 1.0f;
            with_data++;
        }
    }
    return with_data;
}
