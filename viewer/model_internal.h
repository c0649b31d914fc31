/* model_internal.h: what the model's modules (model_*.c) share and nothing else includes:
 * the model's one state struct, the interval sets of the store, the window-index arithmetic
 * the timeline, the call view and picking all use, and the call view's frame (where a call
 * lands on the density buffers, which picking must match exactly).
 */
#ifndef MW_VIEWER_MODEL_INTERNAL_H
#define MW_VIEWER_MODEL_INTERNAL_H

#include <math.h>

#include "model.h"
#include "mw_grid.h"

#define MW__NS_PER_S 1e9
/* How far past the range calls that start in it are looked for, in windows. */
#define MW__MAX_EXTRA_WINDOWS 2048
#define MW__ARC_SEGMENTS 16
/* The timeline's layers and the call view's colors: the palette slots and grey. */
#define MW__LAYERS (MW_PALETTE + 1)

/* Interval sets of window indexes (model_store.c). */
typedef struct {
    uint64_t a, b; /* inclusive */
} mw__span_t;

typedef struct {
    mw__span_t *v;
    size_t n, cap;
} mw__spanset_t;

/* The decoded traces (model_trace.c). */
typedef struct mw__traces mw__traces_t;
mw__traces_t *mw__traces_new(void);
void mw__traces_clear(mw__traces_t *t);
void mw__traces_free(mw__traces_t *t);

/* ---- the model ---------------------------------------------------------------------------- */

typedef struct {
    uint64_t index;
    Mpiwatch__Window *w;
    size_t bytes;
} mw__entry_t;

/* Buffers of mw_density_bin(), kept between frames; reached through a pointer so that a const
 * model can still use them. */
typedef struct {
    float *grid; /* [bins][w][4]: weight, r, g, b of points, before the rows are spread */
    size_t grid_cap;
    double *line; /* [bins][w + 1][4]: difference arrays of lines */
    size_t line_cap;
    float *arc; /* [bins][3w + 2][4]: arcs by start column (from -2w - 2), to be stamped */
    size_t arc_cap;
    int *stamp; /* the pixels of one bin's arc */
    size_t stamp_cap;
} mw__scratch_t;

struct mw_model {
    size_t budget;
    Mpiwatch__JobInfo *job;
    uint64_t generation;

    int grid_set;
    uint64_t window_ns; /* the job's first window length */
    uint32_t subslots, bins;
    /* The window grid (docs/steering.md, mpiwatch.window; proto/mw_grid.h): seg[0] =
     * {0, 0, window_ns}, later segments from JobInfo.grid or from windows that carry their own
     * start; n == 0 before the first grid. */
    mw_grid_t grid;

    int origin_set, origin_from_extent;
    uint64_t origin_index;

    int extent_set;
    uint64_t ext_old, ext_new;

    mw__entry_t *ent; /* sorted by index */
    size_t n, cap;
    size_t bytes;
    uint64_t bytes_added, windows_added; /* for the average size of a window */

    int need_set;
    double need_t0, need_t1, need_f0, need_f1;

    mw__spanset_t asked; /* ranges handed out by mw_model_wanted and not answered */
    mw__spanset_t seen;  /* windows counted in the totals and the stats */

    uint64_t total_ns[MW_FN_SPACE];
    unsigned char slot_of[MW_FN_SPACE]; /* palette slot, MW_PALETTE: none */
    unsigned slot_fn[MW_PALETTE];       /* function of each slot, 0: free */
    int slots_free;

    mw_model_stats_t st;
    int have_newest;

    uint32_t rc_rank;
    mw_rank_call_t *rc;
    size_t rc_n;

    mw__scratch_t *scratch;
    mw__traces_t *tr; /* decoded traces: changed by const lookups, like the scratch */

    Mpiwatch__Step **steps; /* sorted by step number */
    size_t n_steps, cap_steps, step_bytes;

    mw_event_t *ev; /* ring of MW_EVENTS_MAX: ev_n kept, the oldest at ev_head */
    size_t ev_head, ev_n;
    uint64_t ev_seq;
    mw_event_counts_t evc;
};

static inline int mw__imax(int a, int b)
{
    return a > b ? a : b;
}

static inline int mw__imin(int a, int b)
{
    return a < b ? a : b;
}

/* The timeline layer (palette slot, MW_PALETTE: grey) of function fn. */
static inline int mw__layer_of(const mw_model_t *m, unsigned fn)
{
    return fn < MW_FN_SPACE ? m->slot_of[fn] : MW_PALETTE;
}

/* model_store.c */
/* The color of layer l (a palette slot, or grey). */
mw_rgb_t mw__layer_color(int l);
/* Window index of time `rel` (ns from the origin) or t (seconds), which may be before window
 * 0. */
int64_t mw__index_of_rel(const mw_model_t *m, double rel);
int64_t mw__index_of_time(const mw_model_t *m, double t);
/* The shortest window length of the grid. */
uint64_t mw__shortest_len(const mw_model_t *m);
/* Start of window k (absolute index) in ns from the origin. */
double mw__rel_start(const mw_model_t *m, int64_t k);
/* The newest window known, from the extent or the windows seen; -1 when none. */
int mw__newest_index(const mw_model_t *m, uint64_t *newest);
/* The range of cached windows [*p0, *p1) whose index is in [a, b]. */
void mw__window_range(const mw_model_t *m, int64_t a, int64_t b, size_t *p0, size_t *p1);

/* model_density.c: the frame of one mw_density_bin(), also used by picking. */
typedef struct {
    int w, h;
    double t0ns; /* left edge, ns since the origin */
    double xs;   /* pixels per ns */
    double l2d0; /* log2 of the bottom duration */
    double ys;   /* rows per log2 unit */
    uint64_t origin_ns;
    float *D, *C; /* sums of weight and of weighted color until normalized */
    int lin;      /* linear duration axis: y = d / d1 * h (0 at the bottom) */
    double d1;    /* the top duration */
} mw__frame_t;

static inline double mw__frame_x(const mw__frame_t *f, uint64_t global_ns)
{
    return ((double)(int64_t)(global_ns - f->origin_ns) - f->t0ns) * f->xs;
}

static inline double mw__frame_y(const mw__frame_t *f, double d_ns)
{
    if (f->lin)
        return d_ns / f->d1 * f->h;
    return (log2(d_ns) - f->l2d0) * f->ys;
}

/* The row of duration 2^l2 (bin edges and middles). */
static inline double mw__frame_yl(const mw__frame_t *f, double l2)
{
    if (f->lin)
        return exp2(l2) / f->d1 * f->h;
    return (l2 - f->l2d0) * f->ys;
}

/* lin: the linear duration axis (mw_view_t.dur_linear). */
void mw__frame_init(mw__frame_t *f, const mw_model_t *m, double t0, double t1, double d0, double d1,
                    int w, int h, float *D, float *C, int lin);
/* The arc's polyline: MW__ARC_SEGMENTS + 1 points of a half ellipse from (xa, 0) to (xb, 0)
 * with its apex at height ya. */
void mw__arc_points(double xa, double xb, double ya, double px[], double py[]);

#endif
