/* model_view.h: the view state: the visible time range (following or paused), the selected
 * range, the highlighted function and rank, and how the call view draws (representation,
 * transfer function, o_min). No SDL, no GL.
 */
#ifndef MW_VIEWER_MODEL_VIEW_H
#define MW_VIEWER_MODEL_VIEW_H

#include "model_layout.h"
#include "model_store.h"

/* The call view's representations (paper, section 2.2). */
typedef enum {
    MW_REPR_START, /* points at (start time, duration) */
    MW_REPR_END,   /* points at (end time, duration) */
    MW_REPR_LINES, /* a horizontal line from start to end at the height of the duration */
    MW_REPR_ARCS,  /* an arc from start to end whose apex is at the height of the duration */
    MW_REPR_COUNT
} mw_repr_t;

typedef enum { MW_TRANSFER_LINEAR, MW_TRANSFER_LOG } mw_transfer_t;

typedef struct {
    double t0, t1;          /* visible timeline range, seconds */
    double span;            /* its length when following (default 30 s) */
    int follow;             /* live: the range ends at the newest window */
    double sel0, sel1;      /* selected range for the call view; sel1 <= sel0: none (the visible
                               range's last 10% is used then) */
    unsigned highlight_fn;  /* 0: none */
    int64_t highlight_rank; /* -1: none */
    mw_repr_t repr;
    mw_transfer_t transfer;
    float o_min;    /* 0..1, default 0.3 */
    int dur_linear; /* the call view's duration axis: 0 log (default), 1 linear */
    int show_help;
} mw_view_t;

void mw_view_init(mw_view_t *v);
/* Moves a following view to the newest window; keeps a paused one where it is. */
void mw_view_update(mw_view_t *v, const mw_model_t *m);
/* The range the call view shows: the selection, or the default. */
void mw_view_focus(const mw_view_t *v, double *t0, double *t1);
/* Scrolls by `dx` pixels of the timeline plot (pauses following); dx > 0 moves the view to
 * later times (a drag to the right is scroll(-dx)). Zooms around pixel x (pauses following):
 * factor > 1 zooms in (the range becomes 1/factor as long), factor < 1 zooms out; the span is
 * kept within [1 us, 1e7 s]. mw_view_update() then keeps a paused view over the data. */
void mw_view_scroll(mw_view_t *v, const mw_layout_t *l, double dx_px);
void mw_view_zoom(mw_view_t *v, const mw_layout_t *l, int x_px, double factor);

#endif
