/* model_layout.c: the screen's regions from the window size and the axes' scales: pixel <->
 * time (linear) and duration (log), "nice" ticks and their labels. No SDL, no GL (see
 * model_layout.h).
 */
#include "model_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- layout ------------------------------------------------------------------------------- */

void mw_layout(mw_layout_t *l, int width, int height, float scale, int show_timeline,
               int show_density, int legend_rows)
{
    memset(l, 0, sizeof *l);
    float s = scale > 0 ? scale : 1.0f;
    width = mw__imax(width, 0);
    height = mw__imax(height, 0);
    l->width = width;
    l->height = height;
    l->scale = s;
    l->show_timeline = show_timeline != 0;
    l->show_density = show_density != 0;
    l->font_px = mw__imax(8, (int)lroundf(14.0f * s));
    int pad = mw__imax(2, (int)lroundf(6.0f * s));
    int bar = l->font_px + 2 * pad;

    l->title = (mw_rect_t){0, 0, width, mw__imin(bar, height)};
    l->status = (mw_rect_t){0, mw__imax(height - bar, 0), width, mw__imin(bar, height)};
    int top = l->title.h + pad;
    int bottom = mw__imax(l->status.y - pad, top);

    /* The legend column: wide enough for "MPI_Allreduce  42.0%" at any size. */
    int lw = mw__imax((int)lroundf(0.22f * (float)width), (int)lroundf(180.0f * s));
    lw = mw__imin(lw, width / 2);
    l->legend_row_h = mw__imax(1, (int)lroundf(1.5f * (float)l->font_px));
    int fit = mw__imax(0, (bottom - top) * 3 / 5 / l->legend_row_h - 1);
    l->legend_rows = mw__imax(0, mw__imin(legend_rows, fit));
    int lx = width - lw;
    l->legend = (mw_rect_t){lx, top, mw__imax(lw - pad, 0), (l->legend_rows + 1) * l->legend_row_h};
    int dy = l->legend.y + l->legend.h + pad;
    l->details = (mw_rect_t){lx, dy, l->legend.w, mw__imax(bottom - dy, 0)};
    /* The events list takes what the details (a heading and six lines) leave, when that is
     * at least a heading and three lines. */
    int details_h = (int)lroundf(9.0f * (float)l->font_px);
    int events_y = dy + details_h + pad;
    if (bottom - events_y >= 5 * l->font_px) {
        l->details.h = details_h;
        l->events = (mw_rect_t){lx, events_y, l->legend.w, bottom - events_y};
    } else {
        l->events = (mw_rect_t){lx, bottom, l->legend.w, 0};
    }

    /* The plots: a left margin for the y labels, a strip under each for the x labels. */
    int left = mw__imin((int)lroundf(7.0f * (float)l->font_px), lx / 2);
    int pw = mw__imax(lx - pad - left, 0);
    int xlab = (int)lroundf(1.8f * (float)l->font_px);
    int avail = bottom - top;
    mw_rect_t none = {left, top, 0, 0};
    l->timeline = none;
    l->density = none;
    if (l->show_timeline && l->show_density) {
        int block = (int)lroundf(0.4f * (float)avail);
        l->timeline = (mw_rect_t){left, top, pw, mw__imax(block - xlab, 0)};
        int y = top + block + pad;
        l->density = (mw_rect_t){left, y, pw, mw__imax(bottom - y - xlab, 0)};
    } else if (l->show_timeline) {
        l->timeline = (mw_rect_t){left, top, pw, mw__imax(avail - xlab, 0)};
    } else if (l->show_density) {
        l->density = (mw_rect_t){left, top, pw, mw__imax(avail - xlab, 0)};
    }
}

/* ---- scales ------------------------------------------------------------------------------- */

double mw_x_of_time(const mw_rect_t *r, double t0, double t1, double t)
{
    if (!(t1 > t0))
        return r->x;
    return r->x + (t - t0) / (t1 - t0) * r->w;
}

double mw_time_of_x(const mw_rect_t *r, double t0, double t1, double x)
{
    if (r->w <= 0)
        return t0;
    return t0 + (x - r->x) / r->w * (t1 - t0);
}

double mw_y_of_duration(const mw_rect_t *r, double d0_ns, double d1_ns, double d_ns)
{
    if (!(d0_ns > 0) || !(d1_ns > d0_ns) || !(d_ns > 0))
        return r->y + r->h;
    return r->y + r->h - log(d_ns / d0_ns) / log(d1_ns / d0_ns) * r->h;
}

double mw_duration_of_y(const mw_rect_t *r, double d0_ns, double d1_ns, double y)
{
    if (!(d0_ns > 0) || !(d1_ns > d0_ns) || r->h <= 0)
        return d0_ns;
    return d0_ns * exp((r->y + r->h - y) / r->h * log(d1_ns / d0_ns));
}

static double nice_step(double raw)
{
    double e = pow(10.0, floor(log10(raw)));
    double f = raw / e;
    return (f <= 1.0 ? 1.0 : f <= 2.0 ? 2.0 : f <= 5.0 ? 5.0 : 10.0) * e;
}

int mw_time_ticks(double t0, double t1, const mw_rect_t *r, mw_tick_t *out, int max)
{
    if (!(t1 > t0) || r->w <= 0 || max <= 0)
        return 0;
    int target = mw__imax(2, r->w / 110);
    double step = nice_step((t1 - t0) / target);
    /* The unit comes from the step: the largest in which the step needs at most one decimal
     * ("1.5 ms", not "1500 µs"); labels that would get too long in it (late in a long run) are
     * given in seconds. */
    double unit = step >= 0.1 ? 1.0 : step >= 1e-4 ? 1e-3 : 1e-6;
    double big = fmax(fabs(t0), fabs(t1)) / unit;
    if (big >= 1e5)
        unit = 1.0;
    const char *uname = unit == 1.0 ? "s" : unit == 1e-3 ? "ms" : "\xc2\xb5s";
    int dec = (int)ceil(-log10(step / unit) - 1e-9);
    if (dec < 0)
        dec = 0;
    int n = 0;
    double first = ceil(t0 / step - 1e-9);
    for (double i = first; n < max; i++) {
        double v = i * step;
        if (v > t1 + step * 1e-9)
            break;
        if (fabs(v) < step * 1e-6)
            v = 0.0;
        out[n].value = v;
        out[n].px = (int)lround(mw_x_of_time(r, t0, t1, v));
        snprintf(out[n].label, sizeof out[n].label, "%.*f %s", dec, v / unit, uname);
        n++;
    }
    return n;
}

/* A tick label of a duration axis: "1 µs", "20 ms", "500 ns", "2 s". */
static void duration_label(double ns, char *buf, size_t len)
{
    static const struct {
        double unit;
        const char *name;
    } units[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "\xc2\xb5s"}, {1.0, "ns"}};
    int u = 3;
    for (int i = 0; i < 3; i++) {
        if (ns >= units[i].unit * 0.9999) {
            u = i;
            break;
        }
    }
    double v = round(ns / units[u].unit * 1000.0) / 1000.0;
    snprintf(buf, len, "%g %s", v, units[u].name);
}

int mw_duration_ticks(double d0_ns, double d1_ns, const mw_rect_t *r, mw_tick_t *out, int max)
{
    if (!(d0_ns > 0) || !(d1_ns > d0_ns) || r->h <= 0 || max <= 0)
        return 0;
    double decades = log10(d1_ns / d0_ns);
    static const double fine[] = {1.0, 2.0, 5.0};
    int nmult = decades < 2.0 ? 3 : 1;
    /* Labels need about 18 pixels: with many decades in a short axis, every k-th one. */
    double px_per_decade = r->h / decades;
    int stride = px_per_decade >= 18.0 ? 1 : (int)ceil(18.0 / px_per_decade);
    int e0 = (int)floor(log10(d0_ns)), e1 = (int)ceil(log10(d1_ns));
    int n = 0;
    for (int e = e0; e <= e1 && n < max; e++) {
        if (((e % stride) + stride) % stride != 0)
            continue;
        for (int k = 0; k < nmult && n < max; k++) {
            double v = fine[k] * pow(10.0, e);
            if (v < d0_ns * (1 - 1e-9) || v > d1_ns * (1 + 1e-9))
                continue;
            out[n].value = v;
            out[n].px = (int)lround(mw_y_of_duration(r, d0_ns, d1_ns, v));
            duration_label(v, out[n].label, sizeof out[n].label);
            n++;
        }
    }
    return n;
}

int mw_duration_ticks_linear(double d1_ns, const mw_rect_t *r, mw_tick_t *out, int max)
{
    if (!(d1_ns > 0) || r->h <= 0 || max <= 0)
        return 0;
    /* A 1-2-5 step giving ticks at least 30 pixels apart. */
    double want = d1_ns * 30.0 / r->h, step = pow(10.0, floor(log10(want)));
    step = want <= step       ? step
           : want <= 2 * step ? 2 * step
           : want <= 5 * step ? 5 * step
                              : 10 * step;
    int n = 0;
    for (double v = 0; v <= d1_ns * (1 + 1e-9) && n < max; v += step) {
        out[n].value = v;
        out[n].px = (int)lround(mw_y_of_duration_linear(r, d1_ns, v));
        if (v > 0)
            mw_format_duration(v, out[n].label, sizeof out[n].label);
        else
            snprintf(out[n].label, sizeof out[n].label, "0");
        n++;
    }
    return n;
}

double mw_y_of_duration_linear(const mw_rect_t *r, double d1_ns, double d_ns)
{
    return r->y + r->h - d_ns / d1_ns * r->h;
}

void mw_format_duration(double ns, char *buf, size_t len)
{
    static const struct {
        double unit;
        const char *name;
    } units[] = {{1.0, "ns"}, {1e3, "\xc2\xb5s"}, {1e6, "ms"}, {1e9, "s"}};
    if (!len)
        return;
    const char *sign = ns < 0 ? "-" : "";
    ns = fabs(ns);
    if (!(ns > 0) || !isfinite(ns)) {
        snprintf(buf, len, "%s", isfinite(ns) ? "0 ns" : "?");
        return;
    }
    int u = 0;
    while (u < 3 && ns >= units[u + 1].unit)
        u++;
    for (;;) {
        double v = ns / units[u].unit;
        int dec = v >= 100.0 ? 0 : v >= 10.0 ? 1 : 2;
        double p = pow(10.0, dec);
        double rv = round(v * p) / p;
        /* 999.7 ns rounds to 1000: that is "1.00 µs". */
        if (rv >= 1000.0 && u < 3) {
            u++;
            continue;
        }
        if (rv >= 100.0)
            dec = 0;
        else if (rv >= 10.0 && dec > 1)
            dec = 1;
        snprintf(buf, len, "%s%.*f %s", sign, dec, rv, units[u].name);
        return;
    }
}
