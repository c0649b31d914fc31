/* topo_color.c: colour modes, scales and ramps (topo_color.h); the ranks' time in a code region
 * and the per-function links' title for the topology (model_regions.h). */
#include "topo_color.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_regions.h"

static const char *const color_names[MW_TOPO_COLOR_COUNT] = {"messages", "bytes", "src", "dst"};

const char *mw_topo_color_name(mw_topo_color_t c)
{
    return (unsigned)c < MW_TOPO_COLOR_COUNT ? color_names[c] : "?";
}

int mw_topo_color_of(const char *name)
{
    for (int i = 0; i < MW_TOPO_COLOR_COUNT; i++)
        if (!strcmp(name, color_names[i]))
            return i;
    return -1;
}

float mw_scale_t01(const mw_scale_t *s, double v)
{
    double t;
    if (s->log && !s->ranks) {
        if (!(v > 0) || !(s->min > 0))
            return 0;
        t = s->max > s->min ? log(v / s->min) / log(s->max / s->min) : 1;
    } else {
        t = s->max > s->min ? (v - s->min) / (s->max - s->min) : 1;
    }
    return t < 0 ? 0 : t > 1 ? 1 : (float)t;
}

mw_rgb_t mw_ramp(float t)
{
    /* Blue (little) through cyan, green and yellow to red (most): readable on the dark
     * background at both ends. */
    static const float stop[5][3] = {{0.25f, 0.40f, 0.95f},
                                     {0.10f, 0.75f, 0.90f},
                                     {0.35f, 0.85f, 0.35f},
                                     {0.98f, 0.85f, 0.20f},
                                     {0.95f, 0.25f, 0.20f}};
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    float x = t * 4;
    int i = (int)x;
    if (i > 3)
        i = 3;
    float f = x - (float)i;
    mw_rgb_t c = {stop[i][0] + (stop[i + 1][0] - stop[i][0]) * f,
                  stop[i][1] + (stop[i + 1][1] - stop[i][1]) * f,
                  stop[i][2] + (stop[i + 1][2] - stop[i][2]) * f};
    return c;
}

mw_rgb_t mw_hue_ramp(float t)
{
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    float h = t * 5.0f; /* red through magenta, not back to red */
    int i = (int)h;
    float f = h - (float)i, v = 1.0f, s = 0.75f;
    float p = v * (1 - s), q = v * (1 - s * f), u = v * (1 - s * (1 - f));
    mw_rgb_t c;
    switch (i) {
    case 0:
        c = (mw_rgb_t){v, u, p};
        break;
    case 1:
        c = (mw_rgb_t){q, v, p};
        break;
    case 2:
        c = (mw_rgb_t){p, v, u};
        break;
    case 3:
        c = (mw_rgb_t){p, q, v};
        break;
    default:
        c = (mw_rgb_t){u, p, v};
        break;
    }
    return c;
}

mw_rgb_t mw_scale_color(const mw_scale_t *s, double v)
{
    float t = mw_scale_t01(s, v);
    return s->ranks ? mw_hue_ramp(t) : mw_ramp(t);
}

double mw_topo_line_value(const mw_topo_lines_t *t, int bundled, size_t i, mw_topo_color_t c)
{
    if (bundled) {
        const mw_topo_bundle_t *b = &t->bundles[i];
        switch (c) {
        case MW_TOPO_COLOR_MESSAGES:
            return (double)b->messages;
        case MW_TOPO_COLOR_BYTES:
            return (double)b->bytes;
        case MW_TOPO_COLOR_SRC:
            return b->a;
        default:
            return b->b;
        }
    }
    const mw_topo_line_t *l = &t->lines[i];
    switch (c) {
    case MW_TOPO_COLOR_MESSAGES:
        return (double)l->messages;
    case MW_TOPO_COLOR_BYTES:
        return (double)l->bytes;
    case MW_TOPO_COLOR_SRC:
        return l->src;
    default:
        return l->dst;
    }
}

mw_scale_t mw_topo_line_scale(const mw_topo_lines_t *t, int bundled, mw_topo_color_t c, int log)
{
    mw_scale_t s = {0, 0, log, 0};
    size_t n = bundled ? t->n_bundles : t->n_lines;
    if (c == MW_TOPO_COLOR_SRC || c == MW_TOPO_COLOR_DST) {
        /* Rank (bundles: node) numbers: the whole range, so a color means the same rank in
         * every window. */
        s.ranks = 1;
        s.log = 0;
        s.min = 0;
        if (bundled) {
            uint32_t mx = 0;
            for (size_t i = 0; i < n; i++) {
                uint32_t v = c == MW_TOPO_COLOR_SRC ? t->bundles[i].a : t->bundles[i].b;
                mx = v > mx ? v : mx;
            }
            s.max = mx;
        } else {
            s.max = t->n_ranks ? t->n_ranks - 1 : 0;
        }
        return s;
    }
    int any = 0;
    for (size_t i = 0; i < n; i++) {
        double v = mw_topo_line_value(t, bundled, i, c);
        if (log && !(v > 0))
            continue;
        if (!any || v < s.min)
            s.min = v;
        if (!any || v > s.max)
            s.max = v;
        any = 1;
    }
    return s;
}

mw_scale_t mw_topo_rank_scale(const mw_topo_lines_t *t)
{
    mw_scale_t s = {0, 0, 1, 0};
    int any = 0;
    for (uint32_t r = 0; r < t->n_ranks; r++) {
        double v = (double)t->rank_bytes[r];
        if (!(v > 0))
            continue;
        if (!any || v < s.min)
            s.min = v;
        if (!any || v > s.max)
            s.max = v;
        any = 1;
    }
    return s;
}

/* ---- code regions and per-function links (model_regions.h) -------------------------------- */

int mw_topo_region_ranks(mw_topo_regions_t *x, const Mpiwatch__Window *w, uint32_t n_ranks)
{
    x->with = 0;
    x->n_ranks = 0;
    x->scale = (mw_scale_t){0, 0, 0, 0};
    if (n_ranks > x->rank_cap) {
        double *v = realloc(x->rank_ns, (size_t)n_ranks * sizeof *v);
        if (!v)
            return -1;
        x->rank_ns = v;
        x->rank_cap = n_ranks;
    }
    x->region = x->set.rank_region ? x->set.rank_region : mw_region_top(w);
    x->n_ranks = n_ranks;
    x->with = mw_region_rank_values(w, x->region, x->set.ranks == MW_RANKS_REGION_INCL, x->rank_ns,
                                    n_ranks);
    for (uint32_t r = 0; r < n_ranks; r++)
        if (x->rank_ns[r] > x->scale.max)
            x->scale.max = x->rank_ns[r];
    return 0;
}

void mw_topo_regions_free(mw_topo_regions_t *x)
{
    mw_fpairs_free(&x->fp);
    free(x->rank_ns);
    x->rank_ns = NULL;
    x->rank_cap = x->n_ranks = 0;
}

void mw_topo_link_title(unsigned fn, const char *what, char *buf, size_t len)
{
    const char *name = fn ? mw_fn_name(fn) : NULL;
    if (fn)
        snprintf(buf, len, "links: %s %s", name ? name : "?", what);
    else
        snprintf(buf, len, "links: %s", what);
}
