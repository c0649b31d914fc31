/* app.h: the viewer application: options, its one state struct, and its life cycle.
 *
 * DESIGN: sokol-style. main.c parses the command line into mw_viewer_options_t and then drives
 * mw__app_init / mw__app_event / mw__app_frame / mw__app_cleanup (interactive) or hands the app to
 * snapshot.c (headless PNG, benchmarks). The app owns the model (model.h) and the data source
 * (source.h); each frame it polls the source without blocking, updates the view state, tells
 * the model what is on screen, and draws the model's answers through the views (views.h).
 * Everything that is drawn goes through the same render function into whatever framebuffer is
 * bound, so a window, an offscreen snapshot and a benchmark frame are identical.
 */
#ifndef MW_VIEWER_APP_H
#define MW_VIEWER_APP_H

#include <SDL2/SDL.h>
#include <stdint.h>

#include "control.h"
#include "gl_util.h"
#include "model.h"
#include "source.h"
#include "text.h"
#include "topo.h"

#ifndef MW_VERSION
#define MW_VERSION "unknown"
#endif

/* Which plots are shown (the 'v' key cycles through them). */
typedef enum {
    MW_SHOW_ALL,
    MW_SHOW_TIMELINE,
    MW_SHOW_DENSITY,
    MW_SHOW_TOPOLOGY, /* the 3D topology view (view_topology.c) */
    MW_SHOW_MATRIX,   /* the communication matrix (view_matrix.c) */
    MW_SHOW_RANKS,    /* the timeline over the per-rank timeline (view_ranks.c) */
    MW_SHOW_LOGICAL,  /* the per-rank timeline over the logical steps (view_logical.c) */
    MW_SHOW_TERRAIN   /* the timeline over the ranks x functions terrain (view_terrain.c) */
} mw_show_t;

typedef struct {
    const char *connect, *history, *replay;
    double speed;
    mw_show_t show;
    int width, height; /* --size; 0: the default */
    int size_given;
    size_t cache_mb;
    mw_repr_t repr;
    mw_transfer_t transfer;
    float o_min;
    int repr_given, transfer_given, omin_given; /* else the model's defaults */
    int dur_linear;                             /* --duration-axis linear */
    size_t trace_records; /* --trace-records: decoded records kept (0: the default) */
    int lateness_diff;    /* --lateness diff: the logical view starts on differential lateness */
    int lateness_strip;   /* --lateness ...,strip: its upper plot shows lateness over time */
    int no_leap;          /* --no-leap: the logical view without the leap merge */
    const char *terrain;  /* --terrain WHAT[,METRIC][,heatmap][,log] (model_terrain.h) */
    unsigned highlight_fn;
    const char *snapshot, *meta;
    double at;
    int at_given;
    double range0, range1;
    int range_given;
    int pick_x, pick_y, pick_given;
    long bench_frames;
    /* Topology and matrix. */
    float cam_yaw, cam_pitch, cam_distance; /* --camera; distance 0: fit the scene */
    int camera_given;
    float cam_zoom;    /* --zoom: the fitted distance divided by this */
    uint64_t window_n; /* --window N: the run's N-th window (0 the first) */
    int window_given;
    uint64_t step_n; /* --step N: time step number N */
    int step_given;
    mw_topo_color_t color;
    int bundles; /* -1 auto (default), 0 individual lines, 1 node bundles */
    int periodic;
    int labels;          /* 0: no rank labels */
    const char *network; /* --network FILE: switches and their nodes (mw_network.h) */
    float node_gap;      /* --node-gap: between node planes (<= 0: the default) */
    /* --timeline regions, --rank-color, --link-fn (model_regions.h). */
    mw_regions_view_t regions;
    /* Steering (control.h): the collector's --control endpoint (else $MPIWATCH_CONTROL), and
     * the --steer KEY=VALUE[:RANKS] requests sent, in order, once the job is known. */
    const char *control;
#define MW_STEER_OPTS_MAX 8
    const char *steer[MW_STEER_OPTS_MAX];
    int n_steer;
} mw_viewer_options_t;

/* The call view's GL state and its cache of the last binning (view_density.c). */
typedef struct {
    GLuint prog, tex_d, tex_c;
    GLint u_proj, u_d, u_c, u_mode, u_omin, u_dmax, u_bg;
    mw_vbuf_t quad;
    int tex_w, tex_h;
    float *D, *C;
    size_t cap; /* pixels D and C can hold */
    /* What the textures show: re-bin only when one of these changes. */
    struct {
        double f0, f1, d0, d1;
        int w, h;
        int repr;
        unsigned hfn;
        int64_t hrank;
        uint64_t data_gen;
        int lin;
        int valid;
    } key;
    int lin; /* the duration axis of the last frame is linear */
    float dmax;
    double d0, d1; /* the duration axis of the last frame, ns */
    double calls;  /* sum of D: the calls drawn */
    unsigned long rebins;
} mw_density_gl_t;

/* The per-rank timeline's state (view_ranks.c): its textures and program (a mw_density_gl_t
 * whose D is the opacity), the messages of the last binning and what it found. */
typedef struct {
    mw_density_gl_t g;
    mw_ranks_msg_t *msgs;
    size_t msgs_cap;
    mw_ranks_info_t info;
    struct {
        double f0, f1;
        int w, h;
        uint64_t data_gen;
        int valid;
    } key;
} mw_ranks_gl_t;

/* The timeline's per-frame column buffer (view_timeline.c). */
typedef struct {
    float *cols;
    int ncols_cap;
    int ncols;
    double mean_efficiency; /* over columns with data, -1 when none */
    int regions, clamped;   /* code regions shown; columns whose regions summed above 1 */
} mw_timeline_gl_t;

#include "view_logical.h" /* mw_logical_gl_t: the logical view's state */
#include "view_terrain.h" /* mw_terrain_gl_t: the terrain view's state */
#include "view_topo.h"    /* mw_topo_gl_t: the topology and matrix views' state */

typedef enum { MW_DRAG_NONE, MW_DRAG_SELECT, MW_DRAG_PAN, MW_DRAG_ORBIT } mw_drag_t;

typedef struct mw_app {
    mw_viewer_options_t opt;
    SDL_Window *win;
    SDL_GLContext ctx;
    int headless; /* rendering into `fbo`, no window shown */
    mw_fbo_t fbo;
    int fb_w, fb_h; /* the target's pixels */
    float scale;    /* drawable pixels per window coordinate */

    mw_model_t *model;
    mw_source_t *src;
    mw_view_t view;
    mw_layout_t layout;
    mw_show_t show;
    mw_regions_view_t rg; /* code regions, per-function links (model_regions.h) */

    mw_batch_t batch;
    mw_text_t *text;
    mw_timeline_gl_t tl;
    mw_density_gl_t dn;
    mw_ranks_gl_t rk;
    mw_logical_gl_t lg;
    mw_topo_gl_t tp;
    mw_terrain_gl_t te;

    mw_pick_t pick;        /* the last click's answer; kind NONE: nothing picked */
    uint64_t data_gen;     /* bumped whenever the model's data changes */
    uint64_t model_gen;    /* mw_model_generation() the view was set up for */
    int initial_view_done; /* replay without speed: the whole run was put on screen */
    int dirty;             /* something changed since the last drawn frame */
    int quit;
    int save_request; /* 's': write the next drawn frame to a PNG */

    mw_drag_t drag;
    int drag_x0, drag_y0, drag_last_x, drag_last_y;
    int drag_moved;

    /* Steering: the client (NULL: steering is off), the one-line prompt (':'), and the
     * results of the --steer requests. */
    mw_control_t *ctl;
    int prompt_open;
#define MW_PROMPT_MAX 1400
    char prompt[MW_PROMPT_MAX]; /* what is typed: KEY=VALUE [RANKS] */
    size_t prompt_cur;          /* the cursor, a byte offset */
    int steer_next;             /* the next --steer to send */
    uint64_t steer_id;          /* request id of the --steer in flight, 0 none */
    mw_control_result_t steer_res[MW_STEER_OPTS_MAX];
    int steer_done, steer_failed;
    uint64_t steer_events0;   /* steer events in the model when the first --steer was sent */
    mw_control_result_t note; /* the last steering result (or "steering is off") shown */
    int note_shown;           /* it was on screen in the last frame */

    /* Frame rate over the last second of drawn frames. */
    double fps;
    uint64_t fps_t0_ns;
    unsigned fps_frames;
    uint64_t frames_drawn;
} mw_app_t;

/* Sets the defaults of every option. */
void mw__viewer_options_defaults(mw_viewer_options_t *o);

/* Opens the window (or, headless, a hidden window and an offscreen target of the --size),
 * the GL context, the text, the views, the model and the source. -1 after printing why. */
int mw__app_init(mw_app_t *app, const mw_viewer_options_t *opt, int headless);
void mw__app_event(mw_app_t *app, const SDL_Event *ev);
/* One frame: poll the source, update the view, draw when something changed (or `force`).
 * Returns 1 when a frame was drawn, 0 when nothing needed drawing, -1 on a fatal error. */
int mw__app_frame(mw_app_t *app, int force);
void mw__app_cleanup(mw_app_t *app);
/* Interactive main loop: events, frames, idle waits; returns the exit status. */
int mw__app_run(mw_app_t *app);

/* Pieces snapshot.c reuses. */
uint64_t mw__now_ns(void);
/* Polls the source and updates the view and what the model needs; -1 on a fatal error. */
int mw__app_update(mw_app_t *app, uint64_t now_ns);
/* Recomputes the layout for the current target size and legend. */
void mw__app_layout(mw_app_t *app);
/* Draws everything into the bound framebuffer. */
void mw__app_render(mw_app_t *app);
/* Acts as a left click at pixel (x, y) of the call view or legend (picking); returns the pick. */
mw_pick_t mw__app_pick(mw_app_t *app, int x, int y);
/* Sets the view for a replay without a speed: the whole run, paused. */
int mw__app_whole_run(mw_app_t *app);
/* Tells the model which windows the screen needs (the timeline's and the call view's ranges,
 * and in the topology and matrix views the window shown). */
void mw__app_need(mw_app_t *app);
/* Steering: sends what the --steer options still have to send, takes replies; 1 when something
 * changed on screen. */
int mw__app_steer(mw_app_t *app, uint64_t now_ns);
/* The result line to show at the bottom (a reply of the last few seconds, or a request waiting),
 * or NULL; *state is its mw_control_state_t. */
const char *mw__app_steer_note(const mw_app_t *app, uint64_t now_ns, int *state);
/* Opens the steering prompt (prefilled with the ranks selected in the views) and types `text`
 * at its start, as ':' and the keys would (snapshots use it to draw the prompt). */
void mw__app_prompt(mw_app_t *app, const char *text);
/* 1 in the topology and matrix views. */
static inline int mw__app_topo(const mw_app_t *app)
{
    return app->show == MW_SHOW_TOPOLOGY || app->show == MW_SHOW_MATRIX;
}

#endif
