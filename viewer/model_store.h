/* model_store.h: the viewer's window store: the job description, the cache of merged windows
 * and its paging, the window grid, time steps, function colors and the highlighted rank's calls.
 * No SDL, no GL.
 *
 * DESIGN: the store holds the job description and a bounded cache of merged windows (as the
 * collector encodes them: Mpiwatch__Window, unpacked with protobuf-c's default allocator and
 * owned by the store). Windows are kept up to a byte budget; the ones farthest from what is on
 * screen (mw_model_need) are evicted first. What is not cached is asked for through
 * mw_model_wanted(), which the data source (source.h) fetches from the collector's history
 * endpoint or the recording and hands back with mw_model_add_window(). Nothing grows with the
 * length of the run.
 *
 * Time and the grid: the viewer's time axis is in seconds since the start of the job's first
 * window (mw_model_origin_ns()), on the global clock of the windows. The grid is segmented
 * (docs/steering.md, mpiwatch.window): it starts with the job's window length, and a job whose
 * window length was changed by steering gets later segments from JobInfo.grid or from windows
 * that carry their own start; mw_model_window_start/len/at answer in it, never
 * k * window_ns.
 */
#ifndef MW_VIEWER_MODEL_STORE_H
#define MW_VIEWER_MODEL_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "mw_proto.h"

#define MW_PALETTE 10 /* functions with their own color; the rest are grey */
#define MW_LEGEND_MAX (MW_PALETTE + 1)

typedef struct {
    float r, g, b;
} mw_rgb_t;

/* One legend entry: a palette slot. Slot MW_PALETTE is "other" (grey). */
typedef struct {
    unsigned fn; /* function id; 0 for "other" */
    mw_rgb_t color;
    double share; /* of all MPI time seen so far, 0..1 */
} mw_legend_entry_t;

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

/* The window grid as the model knows it (the job's, and windows carrying their own start):
 * window k's global start and length, and the window holding global time g. */
uint64_t mw_model_window_start(const mw_model_t *m, uint64_t k);
uint64_t mw_model_window_len(const mw_model_t *m, uint64_t k);
uint64_t mw_model_window_at(const mw_model_t *m, uint64_t g);
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
    uint64_t refused;         /* windows refused whole by the window policy (mw_window_check) */
} mw_model_stats_t;
void mw_model_stats(const mw_model_t *m, mw_model_stats_t *out);

/* The legend: the MW_PALETTE functions with the most MPI time get distinct colors (a slot
 * keeps its function once given, so colors do not change while watching), the rest share
 * grey. Returns the entries, most time first, "other" last. */
int mw_model_legend(const mw_model_t *m, mw_legend_entry_t *out, int max);
/* The color of function fn (grey when it has no slot). */
mw_rgb_t mw_model_color(const mw_model_t *m, unsigned fn);
/* The palette slot of fn, or MW_PALETTE for grey. */
int mw_model_slot(const mw_model_t *m, unsigned fn);

/* The calls of the highlighted rank (the model copies them). */
void mw_model_set_rank_calls(mw_model_t *m, uint32_t rank, const mw_rank_call_t *calls, size_t n);
const mw_rank_call_t *mw_model_rank_calls(const mw_model_t *m, uint32_t *rank, size_t *n);
/* Appends the calls of one rank's sample (an Envelope with a Sample, as the history endpoint
 * or the recording gives it) to out[*n..max); returns the number added. A density cell's
 * calls get the shortest duration of their bin in the job's layout (duration_bins, mw_bins.h). */
size_t mw_rank_calls_from_sample(const Mpiwatch__Envelope *env, uint64_t window_ns,
                                 uint32_t subslots, uint32_t duration_bins, mw_rank_call_t *out,
                                 size_t *n, size_t max);

#endif
