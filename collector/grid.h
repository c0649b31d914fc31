/* grid.h: the job's window grid (grid.c, docs/collector.md "The window grid"). */
#ifndef MW_GRID_H
#define MW_GRID_H

#include <stddef.h>
#include <stdint.h>

#define MW_GRID_MAX_SEGMENTS 16u     /* segments of one job (the first one included) */
#define MW_GRID_MIN_MS 10u           /* allowed window lengths, ms ... */
#define MW_GRID_MAX_MS 60000u
#define MW_GRID_FACTOR 8u            /* ... and within 1/8..8 of the job's first length */
#define MW_GRID_LEAD_NS 1000000000ull /* a change starts at least this long after the present */

/* From window `first` on (up to the next segment's first), window k covers
 * [start_ns + (k - first) * window_ns, ... + window_ns) of global time. */
typedef struct {
    uint64_t first, start_ns, window_ns;
} mw_grid_seg_t;

typedef struct {
    uint32_t n;
    mw_grid_seg_t seg[MW_GRID_MAX_SEGMENTS];
} mw_grid_t;

/* One segment {0, 0, window_ns}: window k = [k * window_ns, (k + 1) * window_ns). */
void mw_grid_init(mw_grid_t *g, uint64_t window_ns);
const mw_grid_seg_t *mw_grid_seg(const mw_grid_t *g, uint64_t k);
uint64_t mw_grid_start(const mw_grid_t *g, uint64_t k);
uint64_t mw_grid_len(const mw_grid_t *g, uint64_t k);
/* The window that holds global time t. */
uint64_t mw_grid_index(const mw_grid_t *g, uint64_t t);
/* Global ns from the start of window a to the start of window b (a <= b). */
uint64_t mw_grid_span(const mw_grid_t *g, uint64_t a, uint64_t b);

/* Checks a new length (in ms; the job's first length, the segment count, the bounds above,
 * `min_ns` for what the collector's merge ring can hold) without changing anything.
 * Returns 0, or -1 with a reason. */
int mw_grid_check(const mw_grid_t *g, uint64_t ms, uint64_t min_ns, char *err, size_t errlen);
/* The window a change requested now starts at: the first one that starts at least
 * MW_GRID_LEAD_NS after both `now_ns` and the end of window `newest` (the newest known),
 * and after the last segment's first window. */
uint64_t mw_grid_pick(const mw_grid_t *g, uint64_t now_ns, int64_t newest);
/* Appends the segment {k, start of k, ms}: k must be after the last segment's first window.
 * Returns 0, or -1 with a reason (nothing changed). */
int mw_grid_append(mw_grid_t *g, uint64_t k, uint64_t ms, char *err, size_t errlen);
/* A strict window length in ms: 1..9 decimal digits, nothing else. Returns 0, or -1. */
int mw_grid_parse_ms(const char *s, uint64_t *ms);

#endif
