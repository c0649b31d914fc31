/* model.h: everything the viewer knows and computes, without SDL or OpenGL.
 *
 * DESIGN: the model holds the job description, a bounded cache of merged windows (as the
 * collector encodes them: Mpiwatch__Window, unpacked with protobuf-c's default allocator and
 * owned by the model), the view state (visible time range, follow/paused, selected range,
 * highlighted function and rank, density representation, transfer function, o_min) and the
 * layout of the screen in pixels. From these it computes what the views draw: the stacked
 * columns of the timeline, the density and color buffers of the call view, axis ticks with
 * units, the legend, and the answers of picking. The views (view_*.c) only turn those results
 * into GL calls, so the same numbers are unit-tested here (tests/viewer/test_model.c) and
 * written next to snapshots for the snapshot tests.
 *
 * Time: the viewer's time axis is in seconds since the start of the job's first window
 * (mw_model_origin_ns()), on the global clock of the windows (window k covers
 * [k * window_ns, (k + 1) * window_ns)).
 *
 * Memory: windows are kept up to a byte budget; the ones farthest from what is on screen are
 * evicted first. What is not cached is asked for through mw_model_wanted(), which the data
 * source (source.c) fetches from the collector's history endpoint or the recording and hands
 * back with mw_model_add_window(). Nothing grows with the length of the run.
 */
#ifndef MW_VIEWER_MODEL_H
#define MW_VIEWER_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "mw_proto.h"

#define MW_PALETTE 10 /* functions with their own color; the rest are grey */
#define MW_LEGEND_MAX (MW_PALETTE + 1)

typedef struct {
    float r, g, b;
} mw_rgb_t;

typedef struct {
    int x, y, w, h; /* pixels, origin top left, y down */
} mw_rect_t;

/* The call view's representations (paper, section 2.2). */
typedef enum {
    MW_REPR_START, /* points at (start time, duration) */
    MW_REPR_END,   /* points at (end time, duration) */
    MW_REPR_LINES, /* a horizontal line from start to end at the height of the duration */
    MW_REPR_ARCS,  /* an arc from start to end whose apex is at the height of the duration */
    MW_REPR_COUNT
} mw_repr_t;

typedef enum { MW_TRANSFER_LINEAR, MW_TRANSFER_LOG } mw_transfer_t;

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

/* One legend entry: a palette slot. Slot MW_PALETTE is "other" (grey). */
typedef struct {
    unsigned fn; /* function id; 0 for "other" */
    mw_rgb_t color;
    double share; /* of all MPI time seen so far, 0..1 */
} mw_legend_entry_t;

/* An axis tick. */
typedef struct {
    double value; /* seconds on a time axis, ns on a duration axis */
    int px;       /* position along the axis, in pixels of the screen */
    char label[24];
} mw_tick_t;

/* What a click found. */
typedef enum { MW_PICK_NONE, MW_PICK_CALL, MW_PICK_CELL, MW_PICK_LEGEND } mw_pick_kind_t;

typedef struct {
    mw_pick_kind_t kind;
    unsigned fn;
    /* MW_PICK_CALL: one recorded long call */
    uint32_t rank;
    int32_t peer;      /* -1 none */
    uint64_t start_ns; /* global */
    uint64_t duration_ns;
    uint64_t bytes;
    char host[64]; /* from the job description; "" unknown */
    /* MW_PICK_CELL: a density cell (calls binned by sub-slot and log2 duration) */
    uint64_t cell_t0_ns, cell_t1_ns; /* global time span of the sub-slot */
    uint64_t cell_d0_ns, cell_d1_ns; /* duration span of the bin */
    uint64_t cell_count;
} mw_pick_t;

/* Calls of one rank, fetched on demand for highlighting (from its raw samples): its recorded
 * long calls (count 1, exact) and its density cells (count calls binned by sub-slot and log2
 * bin: start_ns is the start of the sub-slot, duration_ns the bin's lower bound, end 1 when
 * the cell counts calls by their end). */
typedef struct {
    unsigned fn;
    uint64_t start_ns, duration_ns, bytes;
    uint64_t count;
    int32_t peer;
    int end;
    int exact; /* 1: a recorded long call */
} mw_rank_call_t;

typedef struct mw_model mw_model_t;

/* ---- the store ---------------------------------------------------------------------------- */

/* A model with a window cache of at most cache_bytes (0: the default, 256 MiB). */
mw_model_t *mw_model_new(size_t cache_bytes);
void mw_model_free(mw_model_t *m);

/* Sets the job description (takes ownership; the previous one is freed). A different job
 * name clears the cache and the view. */
void mw_model_set_job(mw_model_t *m, Mpiwatch__JobInfo *job);
const Mpiwatch__JobInfo *mw_model_job(const mw_model_t *m);
/* Incremented each time a different job clears the model (its windows, extent, totals, colors
 * and rank calls): the app resets its mw_view_t when it changes. */
uint64_t mw_model_generation(const mw_model_t *m);

/* Adds a window (takes ownership; a window already cached is replaced). Windows whose grid
 * (window_ns, subslots, duration_bins) differs from the job's are refused (freed, -1). */
int mw_model_add_window(mw_model_t *m, Mpiwatch__Window *w);
/* The windows the source can serve: oldest and newest index (newest grows in live mode). */
void mw_model_set_extent(mw_model_t *m, uint64_t oldest, uint64_t newest);
int mw_model_extent(const mw_model_t *m, uint64_t *oldest, uint64_t *newest);
/* A cached window, or NULL. */
const Mpiwatch__Window *mw_model_window(const mw_model_t *m, uint64_t index);
/* What the screen needs now: the visible timeline range [t0, t1] and the call view's range
 * [f0, f1] (seconds). Windows of these ranges are evicted last. */
void mw_model_need(mw_model_t *m, double t0, double t1, double f0, double f1);
/* The first range of needed windows (within the extent) that is neither cached nor already
 * asked for; marks it as asked for. Returns 1 with [*first, *last] (at most max_windows
 * long), 0 when nothing is missing. */
int mw_model_wanted(mw_model_t *m, uint64_t *first, uint64_t *last, uint64_t max_windows);
/* A range asked for was answered (or failed): what is still missing of it may be asked for
 * again. */
void mw_model_answered(mw_model_t *m, uint64_t first, uint64_t last);
/* 1 while a range asked for has not been answered. */
int mw_model_busy(const mw_model_t *m);
size_t mw_model_cached_bytes(const mw_model_t *m);
size_t mw_model_cached_windows(const mw_model_t *m);

/* Time steps (Step messages of the feed and of recordings), kept in order of their number.
 * At most MW_STEPS_MAX steps and MW_STEPS_BYTES of pair data are kept; the lowest numbers go
 * first. mw_model_add_step takes ownership (a step already kept is replaced) and returns 0, or
 * -1 when it was refused (freed). A different job clears them with the windows. */
#define MW_STEPS_MAX 4096
#define MW_STEPS_BYTES (64u << 20)
int mw_model_add_step(mw_model_t *m, Mpiwatch__Step *s);
size_t mw_model_step_count(const mw_model_t *m);
/* The i-th kept step, lowest number first; NULL past the end. */
const Mpiwatch__Step *mw_model_step_at(const mw_model_t *m, size_t i);
/* The position of step number `step`, or -1. */
long mw_model_step_find(const mw_model_t *m, uint64_t step);

/* ---- job events --------------------------------------------------------------------------- */

/* The job's events (JobEvent of the feed and of recordings): rule firings, steering messages,
 * the ends of rule programs, job start and end... The model keeps the last MW_EVENTS_MAX in
 * arrival order with counts of all; a different job clears them. Each is parsed once when it
 * arrives: a rule firing's detail "rule=NAME metric=M scope=S value=V window=K rank=R node=N"
 * gives its rule, value, rank and window; a steering message's detail is "key=value [ranks
 * ...]". Details come from the network: they are cut to MW_EVENT_DETAIL - 1 bytes, and a field
 * that is missing or not a number is simply not known. */
#define MW_EVENTS_MAX 256
#define MW_EVENT_DETAIL 256
#define MW_EVENT_NAME 48

typedef enum {
    MW_EVENT_OTHER,
    MW_EVENT_RULE,        /* "rule": a rule fired */
    MW_EVENT_STEER,       /* "steer": a steering message was published */
    MW_EVENT_ACTION_EXIT, /* "action_exit": a rule's program ended */
    MW_EVENT_KINDS
} mw_event_kind_t;

typedef struct {
    mw_event_kind_t kind;
    char kind_name[24];             /* as received, cut */
    char detail[MW_EVENT_DETAIL];   /* as received, cut, control characters replaced by '?' */
    uint64_t real_ns;               /* collector wall clock, 0 unknown */
    uint64_t seq;                   /* arrival order, from 1 */
    int has_window;                 /* window=K was in the detail */
    uint64_t window;
    char rule[MW_EVENT_NAME];       /* rule and action_exit: rule=NAME; "" unknown */
    int has_value;
    double value;                   /* rule: value=V */
    int64_t rank;                   /* rule: rank=R; -1 none or unknown */
    uint64_t steer_after;           /* steer: seq of the rule firing it directly followed, 0 */
} mw_event_t;

/* Counts of the events the model has seen (kept or not). */
typedef struct {
    uint64_t total;
    uint64_t by_kind[MW_EVENT_KINDS];
    uint64_t dropped; /* older events no longer kept */
} mw_event_counts_t;

/* Parses one event into *e (seq 0, steer_after 0). Pure: used by mw_model_add_event. */
void mw_event_parse(mw_event_t *e, const char *kind, const char *detail, uint64_t real_ns);
/* Adds an event (copied). */
void mw_model_add_event(mw_model_t *m, const char *kind, const char *detail, uint64_t real_ns);
size_t mw_model_event_count(const mw_model_t *m);
/* The i-th kept event, oldest first; NULL past the end. */
const mw_event_t *mw_model_event_at(const mw_model_t *m, size_t i);
void mw_model_event_counts(const mw_model_t *m, mw_event_counts_t *out);
/* Where an event goes on the time axis, in seconds: a rule firing at the end of its window
 * (when the window closed and the rule saw it), anything else at its wall-clock time (the
 * windows' global clock is the wall clock of rank 0). Returns 0, or -1 when it cannot be placed
 * (no job grid yet, no window and no time). The window it falls in goes to *window (may be
 * NULL). */
int mw_model_event_time(const mw_model_t *m, const mw_event_t *e, double *t, uint64_t *window);
/* One line for the events list: "w 37  rule imbalance 1.82", "w 38  steer rebalance=1 ranks
 * 1", "w 37  rule imbalance 1.82 → steer rebalance=1" (with_steer: the steering message that
 * followed it, or NULL), "job_end: complete". Windows are counted from the run's first (the
 * time axis' origin); without a model (NULL) or a place, the line has no window. */
void mw_event_text(const mw_model_t *m, const mw_event_t *e, const mw_event_t *with_steer,
                   char *buf, size_t len);

/* Global ns of the start of the job's first window (the time axis' 0). */
uint64_t mw_model_origin_ns(const mw_model_t *m);
double mw_model_seconds(const mw_model_t *m, uint64_t global_ns);

/* Counters for the status bar, over the windows seen. */
typedef struct {
    uint64_t windows;         /* windows received or fetched */
    uint64_t partial;         /* of them with ranks missing */
    uint64_t samples_dropped; /* sums of the windows' drop counters */
    uint64_t records_dropped;
    uint32_t ranks_reporting; /* in the newest window */
    uint32_t ranks;           /* the job's size */
    uint64_t newest;          /* newest window index */
} mw_model_stats_t;
void mw_model_stats(const mw_model_t *m, mw_model_stats_t *out);

/* ---- the view state ----------------------------------------------------------------------- */

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
    float o_min; /* 0..1, default 0.3 */
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

/* ---- layout, scales, colors --------------------------------------------------------------- */

void mw_layout(mw_layout_t *l, int width, int height, float scale, int show_timeline,
               int show_density, int legend_rows);

/* Time axis: ticks for [t0, t1] seconds across `r` (x), labelled in s, ms or µs as fits. */
int mw_time_ticks(double t0, double t1, const mw_rect_t *r, mw_tick_t *out, int max);
/* Duration axis (log, ns): ticks for [d0, d1] across `r` (y, up), labelled "1 µs", "10 ms"... */
int mw_duration_ticks(double d0_ns, double d1_ns, const mw_rect_t *r, mw_tick_t *out, int max);
/* Pixel <-> value on those axes. */
double mw_x_of_time(const mw_rect_t *r, double t0, double t1, double t);
double mw_time_of_x(const mw_rect_t *r, double t0, double t1, double x);
double mw_y_of_duration(const mw_rect_t *r, double d0_ns, double d1_ns, double d_ns);
double mw_duration_of_y(const mw_rect_t *r, double d0_ns, double d1_ns, double y);
/* "12.5 ms" style, 3 significant digits. */
void mw_format_duration(double ns, char *buf, size_t len);

/* The legend: the MW_PALETTE functions with the most MPI time get distinct colors (a slot
 * keeps its function once given, so colors do not change while watching), the rest share
 * grey. Returns the entries, most time first, "other" last. */
int mw_model_legend(const mw_model_t *m, mw_legend_entry_t *out, int max);
/* The color of function fn (grey when it has no slot). */
mw_rgb_t mw_model_color(const mw_model_t *m, unsigned fn);
/* The palette slot of fn, or MW_PALETTE for grey. */
int mw_model_slot(const mw_model_t *m, unsigned fn);

/* ---- the timeline ------------------------------------------------------------------------- */

/* Stacked columns for [t0, t1] across `ncols` pixel columns: out[col * (MW_PALETTE + 2) + k]
 * is the top of layer k (fractions of ranks, 0..1, cumulative; layer k = palette slot k, layer
 * MW_PALETTE = grey); out[col * (MW_PALETTE + 2) + MW_PALETTE + 1] is 1 when the column has
 * data and 0 when its windows are not cached (drawn as a gap). A column averages the sub-slots
 * it covers. Returns the number of columns with data. */
int mw_timeline_columns(const mw_model_t *m, double t0, double t1, int ncols, float *out);

/* ---- the call-density view ---------------------------------------------------------------- */

/* Duration range of the call view's y axis for [t0, t1]: from the shortest to the longest bin
 * with calls (at least two decades). */
void mw_density_range(const mw_model_t *m, double t0, double t1, double *d0_ns, double *d1_ns);

/* Bins the calls of [t0, t1] into a w x h float density buffer D (calls per pixel, row 0 at the
 * bottom) and color buffer C (w x h x 3: the color each pixel averages, weighted by calls)
 * for the representation `repr`; each density cell contributes its count spread over its
 * sub-slot and log2 bin as the representation maps them, each recorded long call contributes
 * one call at its exact place. Highlighted function or rank: the others are drawn at 1/8 of
 * their weight in C (dimmed), the highlighted rank's own calls (mw_model_set_rank_calls) are
 * drawn on top by the view. Returns D's maximum (Dmax). */
float mw_density_bin(const mw_model_t *m, const mw_view_t *v, double t0, double t1, double d0_ns,
                     double d1_ns, int w, int h, float *D, float *C);

/* The paper's transfer functions: the opacity of a pixel of density d, d > 0:
 *   linear: o_min + (1 - o_min) * d / dmax
 *   log:    o_min + (1 - o_min) * log(1 + d) / log(1 + dmax)
 * (log(1 + d) rather than the paper's log(d) so that a call spread over several pixels, d < 1,
 * still gets o_min); 0 for d == 0. */
float mw_transfer(mw_transfer_t t, float d, float dmax, float o_min);

/* ---- picking ------------------------------------------------------------------------------ */

/* What is at pixel (x, y): a legend entry, else in the call view the nearest recorded long call
 * within `radius` pixels (as drawn by the current representation), else the densest cell
 * under the pixel. */
mw_pick_t mw_pick(const mw_model_t *m, const mw_view_t *v, const mw_layout_t *l, int x, int y,
                  int radius);

/* The calls of the highlighted rank (the model copies them). */
void mw_model_set_rank_calls(mw_model_t *m, uint32_t rank, const mw_rank_call_t *calls, size_t n);
const mw_rank_call_t *mw_model_rank_calls(const mw_model_t *m, uint32_t *rank, size_t *n);
/* Appends the calls of one rank's sample (an Envelope with a Sample, as the history endpoint
 * or the recording gives it) to out[*n..max); returns the number added. */
/* The window grid as the model knows it (the job's, and windows carrying their own start):
 * window k's global start and length, and the window holding global time g. */
uint64_t mw_model_window_start(const mw_model_t *m, uint64_t k);
uint64_t mw_model_window_len(const mw_model_t *m, uint64_t k);
uint64_t mw_model_window_at(const mw_model_t *m, uint64_t g);
size_t mw_rank_calls_from_sample(const Mpiwatch__Envelope *env, uint64_t window_ns,
                                 uint32_t subslots, mw_rank_call_t *out, size_t *n, size_t max);

#endif
