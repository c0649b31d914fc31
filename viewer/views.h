/* views.h: the drawing functions of the viewer's screen regions.
 *
 * DESIGN: each view draws one region of the model's layout from the model's answers, into the
 * shape batch and text it is given, and flushes them when what it draws next must be on top.
 * A view receives what it draws, never the whole application: an mw_view_ctx_t (the model,
 * the view state, the layout, the batch, the text; app.c fills it with mw__app_view_ctx) and
 * its own state (its GL objects and caches, which live in mw_app_t). Everything a view shows is
 * computed by the model (model.h), so what a test reads in the snapshot's --meta is what was
 * drawn.
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
/* Windows drawn from summaries where others are traced (docs/trace.md). */
#define MW_COLOR_SUMMARY 0xb8bfcc
/* A steering message's line is dashed: MW_STEER_DASH_ON pixels drawn of every MW_STEER_DASH,
 * from the plot's top. */
#define MW_STEER_DASH_ON 6
#define MW_STEER_DASH 10

/* What every view draws with. */
typedef struct {
    const mw_model_t *model;
    const mw_view_t *view;     /* time ranges, selection, highlights, representation */
    const mw_layout_t *layout; /* the screen's regions */
    const mw_pick_t *pick;     /* the last click's answer; kind NONE: nothing picked */
    uint64_t data_gen;         /* bumped whenever the model's data changes (caches key on it) */
    /* How code regions and per-function links are shown (model_regions.h). */
    const mw_regions_view_t *rg;
    mw_batch_t *batch;
    mw_text_t *text;
    int fb_w, fb_h; /* the target's pixels */
} mw_view_ctx_t;

/* The steering prompt and the last steering result, as app.c holds them. */
typedef struct {
    int steering;                    /* a steering client exists (--control) */
    int open;                        /* the prompt is open (':') */
    const char *line;                /* what is typed, shorter than MW_PROMPT_MAX */
    size_t cur;                      /* the cursor, a byte offset */
    const mw_control_result_t *note; /* the last steering result */
} mw_prompt_state_t;

/* What the panels show besides the model (app.c fills it each frame). */
typedef struct {
    mw_source_status_t src; /* the data source */
    int topo;     /* the topology or matrix view is shown: they draw their own legend, details */
    int headless; /* offscreen: the status bar names the source instead of the frame rate */
    double fps;
    const char *steer_note; /* a steering result of the last seconds for the status bar, or NULL */
    int steer_state;        /* its mw_control_state_t */
    mw_prompt_state_t prompt;
} mw_panels_state_t;

/* app.c: the context of this frame, and what the panels show. */
void mw__app_view_ctx(const mw_app_t *app, mw_view_ctx_t *vc);
void mw__app_panels_state(const mw_app_t *app, mw_panels_state_t *ps);

/* Line widths and sizes scale with the high-DPI factor. */
static inline float mw__px(const mw_layout_t *l, float px)
{
    return px * (l->scale > 0 ? l->scale : 1.0f);
}

/* Small text for tick labels and corner notes. */
static inline int mw__font_small(const mw_layout_t *l)
{
    int px = l->font_px * 85 / 100;
    return px < 8 ? 8 : px;
}

/* view_timeline.c: the stacked timeline; its columns stay in tl (--meta reads them). */
int mw__timeline_init(mw_timeline_gl_t *tl);
void mw__timeline_free(mw_timeline_gl_t *tl);
void mw__timeline_draw(const mw_view_ctx_t *vc, mw_timeline_gl_t *tl);
/* The time axis under plot r for [t0, t1] seconds: tick marks and their labels. */
void mw__time_axis(const mw_view_ctx_t *vc, const mw_rect_t *r, double t0, double t1);

/* view_density.c: the call view. It re-bins when the view, the data or the size changed, or
 * always with force_rebin (benchmarks); rank_busy: the highlighted rank's calls are still being
 * fetched. */
int mw__density_init(mw_density_gl_t *d);
void mw__density_free(mw_density_gl_t *d);
void mw__density_draw(const mw_view_ctx_t *vc, mw_density_gl_t *d, int force_rebin, int rank_busy);
/* d's buffers into its textures (`what` names the caller in a GL error) / its textures over r
 * through the call view's shader (mode 0 linear, 1 log; opacity floor; normalisation). */
int mw__density_room(mw_density_gl_t *d, int w, int h);
int mw__density_upload(mw_density_gl_t *d, int w, int h, const char *what);
void mw__density_draw_tex(const mw_view_ctx_t *vc, mw_density_gl_t *d, const mw_rect_t *r, int mode,
                          float omin, float dmax);

/* The marks of the windows drawn from summaries over plot r when [f0, f1] holds traced ones
 * (view_density.c; the rank timeline uses them too). */
void mw__trace_marks_draw(const mw_view_ctx_t *vc, const mw_rect_t *r, double f0, double f1);

/* view_ranks.c: the per-rank timeline in the call view's region (state: rk, whose textures
 * hold the opacity and the colour, drawn through the call view's shader). */
int mw__ranks_init(mw_ranks_gl_t *rk);
void mw__ranks_free(mw_ranks_gl_t *rk);
void mw__ranks_draw(const mw_view_ctx_t *vc, mw_ranks_gl_t *rk);

/* view_logical.c: the logical view (state: lg, view_logical.h) with the per-rank timeline rk of
 * the same range above it. Update analyses and bins when their inputs changed; pick answers a
 * click at pixel (x, y) of the logical plot (an event's call, or a rank). */
int mw__logical_init(mw_logical_gl_t *lg);
void mw__logical_free(mw_logical_gl_t *lg);
int mw__logical_update(const mw_view_ctx_t *vc, mw_logical_gl_t *lg);
void mw__logical_draw(const mw_view_ctx_t *vc, mw_logical_gl_t *lg, mw_ranks_gl_t *rk);
mw_pick_t mw__logical_pick(const mw_view_ctx_t *vc, mw_logical_gl_t *lg, int x, int y);
/* A click at pixel (x, y) of the upper plot when it shows lateness over time ('o'). */
mw_pick_t mw__logical_strip_pick(const mw_view_ctx_t *vc, mw_logical_gl_t *lg, int x, int y);

/* view_topology.c: the 3D topology view; its state and GL objects are t (app->tp, view_topo.h),
 * set up with the command line's window, step and camera. */
int mw__topo_init(mw_topo_gl_t *t, const mw_viewer_options_t *opt);
void mw__topo_free(mw_topo_gl_t *t);
/* Lays out the job, finds what is shown and merges its pairs, when their inputs changed. */
int mw__topo_update(const mw_view_ctx_t *vc, mw_topo_gl_t *t);
void mw__topo_draw(const mw_view_ctx_t *vc, mw_topo_gl_t *t);
/* The pairs of the window or step shown (empty when it is not loaded). */
mw_pairs_t mw__topo_pairs(const mw_model_t *m, const mw_topo_gl_t *t);
/* One window or step back (delta < 0) or forward; stops following. 1 when the view must be
 * drawn again. */
int mw__topo_step(const mw_model_t *m, mw_topo_gl_t *t, int delta);
/* Playing: moves on when it is time (at the newest, a live source is followed, a replay
 * stops); 1 when it moved. */
int mw__topo_play(const mw_model_t *m, mw_topo_gl_t *t, mw_source_t *src, uint64_t now_ns);
/* 1 when lines are drawn as node bundles now (the 'b' setting, or auto by zoom). */
int mw__topo_bundled(mw_topo_gl_t *t, const mw_layout_t *l);
/* Switch i's colour in the topology view (its box's top face). */
void mw__topo_switch_rgb(const mw_topo_gl_t *t, size_t i, float rgb[3]);
/* A click at pixel (x, y) of the 3D view (the caller draws again). */
mw_topo_pick_t mw__topo_pick(const mw_view_ctx_t *vc, mw_topo_gl_t *t, int x, int y);

/* view_matrix.c: the communication matrix of what the topology view shows (state: t). */
int mw__matrix_init(mw_topo_gl_t *t);
void mw__matrix_free(mw_topo_gl_t *t);
int mw__matrix_update(const mw_view_ctx_t *vc, mw_topo_gl_t *t);
void mw__matrix_draw(const mw_view_ctx_t *vc, mw_topo_gl_t *t);
mw_scale_t mw__matrix_scale(const mw_topo_gl_t *t);
/* The (sender, receiver) bins under pixel (x, y); 0 outside the plot. */
int mw__matrix_cell_at(const mw_topo_gl_t *t, int x, int y, int *src_bin, int *dst_bin);
/* A click at pixel (x, y) (the caller draws again). */
void mw__matrix_pick(const mw_view_ctx_t *vc, mw_topo_gl_t *t, int x, int y);

/* view_terrain.c: the terrain (state: te, view_terrain.h) in the call view's region, summing
 * the call view's range. Update sums and aggregates when their inputs changed; pick answers a
 * click at pixel (x, y) (MW_PICK_TERRAIN); details draws a picked cell in the details panel;
 * meta adds the "terrain" object to --meta (a cJSON object). */
int mw__terrain_init(mw_terrain_gl_t *te, const mw_viewer_options_t *opt);
void mw__terrain_free(mw_terrain_gl_t *te);
void mw__terrain_reset(mw_terrain_gl_t *te);
int mw__terrain_update(const mw_view_ctx_t *vc, mw_terrain_gl_t *te);
void mw__terrain_draw(const mw_view_ctx_t *vc, mw_terrain_gl_t *te);
mw_pick_t mw__terrain_pick(const mw_view_ctx_t *vc, mw_terrain_gl_t *te, int x, int y);
void mw__terrain_details(const mw_view_ctx_t *vc, const mw_rect_t *r);
struct cJSON;
void mw__terrain_meta(const mw_view_ctx_t *vc, mw_terrain_gl_t *te, struct cJSON *root);

/* view_events.c: job events on the plots (markers), the events list, the steering prompt. */
typedef struct {
    const mw_event_t *e;
    float x;        /* pixel column of the marker's line */
    unsigned color; /* MW_COLOR_RULE or MW_COLOR_STEER */
} mw_event_marker_t;
/* The markers of the rule firings and steering messages in [t0, t1] across r, oldest first. */
int mw__event_markers(const mw_view_ctx_t *vc, const mw_rect_t *r, double t0, double t1,
                      mw_event_marker_t *out, int max);
/* Draws them over plot r: full lines, heads and labels (timeline), or faint lines and heads
 * (the call view). */
void mw__event_markers_draw(const mw_view_ctx_t *vc, const mw_rect_t *r, double t0, double t1,
                            int full);
/* The lines of the events list, newest first: a steering message that was a rule's action is
 * on the rule's line. Returns the count; kinds[i] is the event kind of line i. */
int mw__event_lines(const mw_view_ctx_t *vc, char (*lines)[320], int *kinds, int max);
/* The events list (steering: the hint mentions ':'). */
void mw__events_panel_draw(const mw_view_ctx_t *vc, int steering);
/* The steering prompt over the status bar. */
void mw__prompt_draw(const mw_view_ctx_t *vc, const mw_prompt_state_t *p);

/* panels.c: title, legend, details, status bar, help overlay. */
void mw__panels_draw(const mw_view_ctx_t *vc, const mw_panels_state_t *ps);
/* The status bar's text as last drawn and the pixel columns of its tier ("tier: NAME";
 * 0, 0 when none was drawn): for the snapshot meta. */
void mw__panels_status_drawn(const char **text, float *tier_x0, float *tier_x1);
void mw__help_draw(const mw_view_ctx_t *vc);
/* Names shown in the UI. */
const char *mw__repr_name(mw_repr_t r);
const char *mw__transfer_name(mw_transfer_t t);
/* "1.50 MiB" style. */
void mw__format_bytes(uint64_t bytes, char *buf, size_t len);

#endif
