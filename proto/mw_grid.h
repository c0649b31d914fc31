/* mw_grid.h: the window grid, which global time window k covers (mw_grid.c).
 *
 * A job starts with one window length (Hello.window_ns): window k covers [k W, (k + 1) W).
 * The steering key mpiwatch.window=MS@K changes the length for the whole job from window K on,
 * so a job's grid is a short list of segments {first, start_ns, window_ns}: window k, in the
 * last segment whose first window is <= k, covers [start_ns + (k - first) window_ns, ... +
 * window_ns). The shim, the collector and the viewer all map indices to times through this
 * arithmetic, and all of them bound the grid by MW_GRID_MAX_SEGMENTS and the lengths below.
 *
 * Two layers: the lookups on an array of segments and a count (mw_grid_find*, the inline
 * mw_grid_seg_* on one segment), which the shim calls with a count it loaded with acquire
 * (its lock-free publication), and mw_grid_t, a grid with its own count, for everything else.
 * Indices are unsigned 64-bit like Window.index; the arithmetic wraps modulo 2^64, the checked
 * variants (mw_grid_seg_start_checked, mw_grid_plan) refuse what does not fit.
 */
#ifndef MW_GRID_H
#define MW_GRID_H

#include <stddef.h>
#include <stdint.h>

#define MW_GRID_MAX_SEGMENTS 16u /* segments of one job (the first one included) */
#define MW_GRID_MIN_MS 10u       /* allowed window lengths, ms ... */
#define MW_GRID_MAX_MS 60000u
#define MW_GRID_FACTOR 8u                  /* ... and within 1/8..8 of the job's first length */
#define MW_GRID_LEAD_NS 1000000000ull      /* the collector starts a change this long after now */
#define MW_GRID_MAX_LEAD_NS 60000000000ull /* a rank refuses a change starting later than this */
#define MW_GRID_GUARD_NS 5000000ull        /* ... or sooner than this (it may have begun) */

/* From window `first` on (up to the next segment's first), window k covers
 * [start_ns + (k - first) * window_ns, ... + window_ns) of global time. */
typedef struct mw_grid_seg {
    uint64_t first, start_ns, window_ns;
} mw_grid_seg_t;

typedef struct mw_grid {
    uint32_t n;
    mw_grid_seg_t seg[MW_GRID_MAX_SEGMENTS];
} mw_grid_t;

/* ---- one segment -------------------------------------------------------------------------- */

/* Start of window k on segment s (k >= s->first; modulo 2^64 otherwise). */
static inline uint64_t mw_grid_seg_start(const mw_grid_seg_t *s, uint64_t k)
{
    return s->start_ns + (k - s->first) * s->window_ns;
}

/* The window of segment s that holds time t (t >= s->start_ns); 0 on a segment of length 0. */
static inline uint64_t mw_grid_seg_index(const mw_grid_seg_t *s, uint64_t t)
{
    return s->window_ns ? s->first + (t - s->start_ns) / s->window_ns : 0;
}

/* Start of window k on segment s into *out: 0, or -1 when k < s->first or the start does not
 * fit in 64 bits. */
int mw_grid_seg_start_checked(const mw_grid_seg_t *s, uint64_t k, uint64_t *out);

/* ---- segments seg[0..n) (first windows increasing) ---------------------------------------- */

/* The segment of window k: the last one whose first window is <= k, else 0 (also when n is 0;
 * seg[0] must exist). Scans from the newest: the present is in the last segment. */
unsigned mw_grid_find(const mw_grid_seg_t *seg, unsigned n, uint64_t k);
/* The segment that holds time t: the last one that starts at or before t, else 0. */
unsigned mw_grid_find_time(const mw_grid_seg_t *seg, unsigned n, uint64_t t);

/* Whether windows of `ms` milliseconds are allowed on a job whose first length is first_ns:
 * MW_GRID_MIN_MS..MW_GRID_MAX_MS and within MW_GRID_FACTOR of first_ns. 1 or 0. */
int mw_grid_len_ok(uint64_t first_ns, uint64_t ms);

/* The checks of one "MS@K" request at a rank against seg[0..n) (first_ns: the job's first
 * length; now: global ns), with no side effect: MW_GRID_OK with K's start in *start, or why
 * not. Every product and sum is checked; K must come after the last change, within the
 * segment limit, and start between MW_GRID_GUARD_NS and MW_GRID_MAX_LEAD_NS from now. */
enum { MW_GRID_OK, MW_GRID_BAD, MW_GRID_FULL, MW_GRID_FAR, MW_GRID_LATE };
int mw_grid_plan(const mw_grid_seg_t *seg, unsigned n, uint64_t first_ns, uint64_t now, uint64_t ms,
                 uint64_t k, uint64_t *start);

/* ---- a grid ------------------------------------------------------------------------------- */

/* One segment {0, 0, window_ns}: window k = [k * window_ns, (k + 1) * window_ns). */
void mw_grid_init(mw_grid_t *g, uint64_t window_ns);
const mw_grid_seg_t *mw_grid_seg(const mw_grid_t *g, uint64_t k);
uint64_t mw_grid_start(const mw_grid_t *g, uint64_t k);
uint64_t mw_grid_len(const mw_grid_t *g, uint64_t k);
/* The window that holds global time t. */
uint64_t mw_grid_index(const mw_grid_t *g, uint64_t t);
/* Global ns from the start of window a to the start of window b (0 unless a < b). */
uint64_t mw_grid_span(const mw_grid_t *g, uint64_t a, uint64_t b);

/* Checks a new length (in ms; the job's first length, the segment count, the bounds above,
 * `min_ns` for what the caller can hold, a length different from the current one) without
 * changing anything. Returns 0, or -1 with a reason. */
int mw_grid_check(const mw_grid_t *g, uint64_t ms, uint64_t min_ns, char *err, size_t errlen);
/* The window a change requested now starts at: the first one that starts at least
 * MW_GRID_LEAD_NS after both `now_ns` and the end of window `newest` (the newest known, < 0:
 * none), and after the last segment's first window. */
uint64_t mw_grid_pick(const mw_grid_t *g, uint64_t now_ns, int64_t newest);
/* Appends the segment {k, start of k, ms}: k must be after the last segment's first window.
 * Returns 0, or -1 with a reason (nothing changed). */
int mw_grid_append(mw_grid_t *g, uint64_t k, uint64_t ms, char *err, size_t errlen);
/* Appends the segment {first, start_ns, window_ns} as it is (a grid learnt from the wire; the
 * caller checks contiguity if it wants it). Returns 0, or -1 when the grid is full or first
 * is not after the last segment's first window (nothing changed). On an empty grid (n == 0)
 * it becomes seg[0]. */
int mw_grid_push(mw_grid_t *g, uint64_t first, uint64_t start_ns, uint64_t window_ns);
/* A strict window length in ms: 1..9 decimal digits, nothing else. Returns 0, or -1. */
int mw_grid_parse_ms(const char *s, uint64_t *ms);

#endif
