/* model_layout.h: the screen's regions in pixels and the axes' scales (ticks, pixel <-> time
 * and duration, duration labels). Pure arithmetic: no model, no SDL, no GL.
 */
#ifndef MW_VIEWER_MODEL_LAYOUT_H
#define MW_VIEWER_MODEL_LAYOUT_H

#include <stddef.h>

typedef struct {
    int x, y, w, h; /* pixels, origin top left, y down */
} mw_rect_t;

/* The screen's regions, computed by mw_layout() from the window size. */
typedef struct {
    int width, height;  /* drawable pixels */
    float scale;        /* high-DPI factor: font sizes and margins are multiplied by it */
    mw_rect_t title;    /* job line at the top */
    mw_rect_t timeline; /* the stacked plot (without its axes) */
    mw_rect_t density;  /* the call view's plot (without its axes) */
    mw_rect_t legend;   /* function legend, right of the plots */
    mw_rect_t details;  /* picked call details, under the legend */
    mw_rect_t events;   /* the latest job events, under the details (h 0: no room) */
    mw_rect_t status;   /* status bar at the bottom */
    int show_timeline, show_density;
    int legend_rows; /* entries drawn, one row each, of legend_row_h pixels */
    int legend_row_h;
    int font_px; /* text height in pixels */
} mw_layout_t;

/* An axis tick. */
typedef struct {
    double value; /* seconds on a time axis, ns on a duration axis */
    int px;       /* position along the axis, in pixels of the screen */
    char label[24];
} mw_tick_t;

void mw_layout(mw_layout_t *l, int width, int height, float scale, int show_timeline,
               int show_density, int legend_rows);

/* Time axis: ticks for [t0, t1] seconds across `r` (x), labelled in s, ms or µs as fits. */
int mw_time_ticks(double t0, double t1, const mw_rect_t *r, mw_tick_t *out, int max);
/* Duration axis (log, ns): ticks for [d0, d1] across `r` (y, up), labelled "1 µs", "10 ms"... */
int mw_duration_ticks(double d0_ns, double d1_ns, const mw_rect_t *r, mw_tick_t *out, int max);
/* The linear duration axis [0, d1] (the call view's 'l'): ticks and pixel of a duration. */
int mw_duration_ticks_linear(double d1_ns, const mw_rect_t *r, mw_tick_t *out, int max);
double mw_y_of_duration_linear(const mw_rect_t *r, double d1_ns, double d_ns);
/* Pixel <-> value on those axes. */
double mw_x_of_time(const mw_rect_t *r, double t0, double t1, double t);
double mw_time_of_x(const mw_rect_t *r, double t0, double t1, double x);
double mw_y_of_duration(const mw_rect_t *r, double d0_ns, double d1_ns, double d_ns);
double mw_duration_of_y(const mw_rect_t *r, double d0_ns, double d1_ns, double y);
/* "12.5 ms" style, 3 significant digits. */
void mw_format_duration(double ns, char *buf, size_t len);

#endif
