/* views.h: the drawing functions of the viewer's screen regions.
 *
 * DESIGN: each view draws one region of the model's layout from the model's answers, into the
 * app's shape batch and text, and flushes them when what it draws next must be on top. Views
 * keep no state besides their GL objects and caches (in mw_app_t); everything they show is
 * computed by model.c, so what a test reads in the snapshot's --meta is what was drawn.
 */
#ifndef MW_VIEWER_VIEWS_H
#define MW_VIEWER_VIEWS_H

#include "app.h"

/* Theme. */
#define MW_COLOR_BG 0x15171c
#define MW_COLOR_PLOT 0x1b1e25
#define MW_COLOR_PANEL 0x1d2028
#define MW_COLOR_AXIS 0x8a909a
#define MW_COLOR_GRID 0x2a2e37
#define MW_COLOR_TEXT 0xd8dce3
#define MW_COLOR_DIM 0x8a909a
#define MW_COLOR_ACCENT 0x6cb6ff
#define MW_COLOR_LIVE 0x5fd37a
#define MW_COLOR_PAUSED 0xe3b341
/* Job event markers: hues the function palette does not use, so a marker is never read as a
 * layer of the stack. */
#define MW_COLOR_RULE 0xff3df2  /* a rule fired (magenta) */
#define MW_COLOR_STEER 0x2fe6ff /* a steering message (cyan) */
#define MW_COLOR_ERROR 0xff6b6b
/* A steering message's line is dashed: MW_STEER_DASH_ON pixels drawn of every MW_STEER_DASH,
 * from the plot's top. */
#define MW_STEER_DASH_ON 6
#define MW_STEER_DASH 10

/* Line widths and sizes scale with the high-DPI factor. */
static inline float mw__px(const mw_app_t *app, float px)
{
    return px * (app->layout.scale > 0 ? app->layout.scale : 1.0f);
}

/* Small text for tick labels and corner notes. */
static inline int mw__font_small(const mw_app_t *app)
{
    int px = app->layout.font_px * 85 / 100;
    return px < 8 ? 8 : px;
}

/* view_timeline.c */
int mw__timeline_init(mw_app_t *app);
void mw__timeline_free(mw_app_t *app);
void mw__timeline_draw(mw_app_t *app);
/* The time axis under plot r for [t0, t1] seconds: tick marks and their labels. */
void mw__time_axis(mw_app_t *app, const mw_rect_t *r, double t0, double t1);
/* Fills app->tl for the current view and layout (also used by --meta). */
int mw__timeline_columns(mw_app_t *app);

/* view_density.c */
int mw__density_init(mw_app_t *app);
void mw__density_free(mw_app_t *app);
void mw__density_draw(mw_app_t *app);
/* Re-bins when the view, the data or the size changed (force: always). */
int mw__density_update(mw_app_t *app, int force);
/* The screen position of a call as the current representation draws it (its anchor point). */
void mw__density_call_xy(const mw_app_t *app, uint64_t start_ns, uint64_t duration_ns, float *x,
                         float *y);

/* view_topology.c: the 3D topology view (the view state and GL objects are app->tp). */
int mw__topo_init(mw_app_t *app);
void mw__topo_free(mw_app_t *app);
/* Lays out the job, finds what is shown and merges its pairs, when their inputs changed. */
int mw__topo_update(mw_app_t *app);
void mw__topo_draw(mw_app_t *app);
/* The pairs of the window or step shown (empty when it is not loaded). */
mw_pairs_t mw__topo_pairs(mw_app_t *app);
/* One window or step back (delta < 0) or forward; stops following. */
void mw__topo_step(mw_app_t *app, int delta);
/* Playing: moves on when it is time; 1 when it moved. */
int mw__topo_play(mw_app_t *app, uint64_t now_ns);
/* 1 when lines are drawn as node bundles now (the 'b' setting, or auto by zoom). */
int mw__topo_bundled(const mw_app_t *app);
/* A click at pixel (x, y) of the 3D view. */
mw_topo_pick_t mw__topo_pick(mw_app_t *app, int x, int y);

/* view_matrix.c: the communication matrix. */
int mw__matrix_init(mw_app_t *app);
void mw__matrix_free(mw_app_t *app);
int mw__matrix_update(mw_app_t *app);
void mw__matrix_draw(mw_app_t *app);
mw_scale_t mw__matrix_scale(const mw_app_t *app);
/* The (sender, receiver) bins under pixel (x, y); 0 outside the plot. */
int mw__matrix_cell_at(const mw_app_t *app, int x, int y, int *src_bin, int *dst_bin);
void mw__matrix_pick(mw_app_t *app, int x, int y);

/* view_events.c: job events on the plots (markers), the events list, the steering prompt. */
typedef struct {
    const mw_event_t *e;
    float x;        /* pixel column of the marker's line */
    unsigned color; /* MW_COLOR_RULE or MW_COLOR_STEER */
} mw_event_marker_t;
/* The markers of the rule firings and steering messages in [t0, t1] across r, oldest first. */
int mw__event_markers(const mw_app_t *app, const mw_rect_t *r, double t0, double t1,
                      mw_event_marker_t *out, int max);
/* Draws them over plot r: full lines, heads and labels (timeline), or faint lines and heads
 * (the call view). */
void mw__event_markers_draw(mw_app_t *app, const mw_rect_t *r, double t0, double t1, int full);
/* The lines of the events list, newest first: a steering message that was a rule's action is
 * on the rule's line. Returns the count; kinds[i] is the event kind of line i. */
int mw__event_lines(const mw_app_t *app, char (*lines)[320], int *kinds, int max);
void mw__events_panel_draw(mw_app_t *app);
/* The steering prompt over the status bar. */
void mw__prompt_draw(mw_app_t *app);

/* panels.c: title, legend, details, status bar, help overlay. */
void mw__panels_draw(mw_app_t *app);
void mw__help_draw(mw_app_t *app);
/* Names shown in the UI. */
const char *mw__repr_name(mw_repr_t r);
const char *mw__transfer_name(mw_transfer_t t);
/* "1.50 MiB" style. */
void mw__format_bytes(uint64_t bytes, char *buf, size_t len);

#endif
