/* grid.c: changing the window length of a running job (mpiwatch.window=MS@K).
 *
 * DESIGN: the window grid is a short list of segments (shim.h, mw_seg_t): from window K on,
 * windows are L ns long, starting at T, the start of window K on the grid before the change,
 * so window indices stay contiguous and the time they cover too. The collector decides the
 * change for the whole job (collector/steer.c chooses K about a second ahead) and publishes
 * "MS@K"; the sender thread of every rank appends the same segment here. The recorders look
 * the grid up only on their slow paths (a call that ends outside the thread's cached window,
 * record.c), so the common path is unchanged. A segment is written once, then published by a
 * release store of the segment count; it only changes the bounds of windows >= K, and K
 * starts later than GRID_GUARD_NS from now, so no thread has cached a window at or after K
 * when it appears (the sender's membarrier at each window hand-over orders it for every
 * thread long before then). A rank that gets the message when K is (almost) under way cannot
 * switch consistently: it keeps its grid, counts and logs it; its samples from K on then no
 * longer match the collector's grid and are rejected there (grid_mismatch), never merged on
 * the wrong windows.
 */
#include "shim.h"

#include <string.h>

#define GRID_GUARD_NS 5000000ull /* K must start at least this long after the request is taken */
#define GRID_MIN_MS 10ull
#define GRID_MAX_MS 60000ull
#define GRID_FACTOR 8ull /* a length within 1/8..8 of the job's first one */

static struct {
    uint64_t requests, applied, bad, late, full, raced;
} G;

/* A number (mw__steer_number) ending at `end` (a char). */
static int parse_num(const char **s, char end, uint64_t *out)
{
    const char *p = *s;
    if (mw__steer_number(&p, out) < 0 || *p != end)
        return -1;
    *s = p;
    return 0;
}

int mw__grid_request(const char *value)
{
    G.requests++;
    const char *p = value;
    uint64_t ms, k;
    if (parse_num(&p, '@', &ms) < 0 || (p++, parse_num(&p, '\0', &k)) < 0) {
        G.bad++;
        mw__log("window %s: not MS@K; ignored", value);
        return -1;
    }
    uint64_t len = ms * 1000000ull, first = mw__g.window_ns;
    unsigned n = atomic_load_explicit(&mw__g.nseg, memory_order_acquire);
    if (ms < GRID_MIN_MS || ms > GRID_MAX_MS || len * GRID_FACTOR < first ||
        len > first * GRID_FACTOR || (int64_t)k <= mw__g.seg[n - 1].first) {
        G.bad++;
        mw__log("window %s: length or window out of bounds; ignored", value);
        return -1;
    }
    if (n >= MW_GRID_MAX_SEGMENTS) {
        G.full++;
        mw__log("window %s: %u segments already; ignored", value, n);
        return -1;
    }
    uint64_t start = mw__grid_start((int64_t)k);
    if (start < mw__fenced_now() + GRID_GUARD_NS) {
        G.late++;
        mw__log("window %s: window %llu has begun; this rank keeps its grid and the "
                "collector will reject its samples from there on",
                value, (unsigned long long)k);
        return -1;
    }
    mw_seg_t *sg = &mw__g.seg[n];
    *sg = (mw_seg_t){.first = (int64_t)k, .start_ns = start, .len_ns = len};
    mw__seg_ticks(sg);
    atomic_store_explicit(&mw__g.nseg, n + 1, memory_order_release);
    G.applied++;
    /* Descheduled for the whole guard between the check and the store: a thread may have
     * cached window K with its old bounds. Not undone (that would race too); counted. */
    if (mw__fenced_now() >= start)
        G.raced++;
    mw__log("window: %llu ms from window %llu", (unsigned long long)ms, (unsigned long long)k);
    return 0;
}

void mw__grid_log(void)
{
    if (G.requests)
        mw__log("window: %llu requests, %llu applied, %llu bad, %llu too late, %llu refused "
                "(segments full), %llu raced",
                (unsigned long long)G.requests, (unsigned long long)G.applied,
                (unsigned long long)G.bad, (unsigned long long)G.late, (unsigned long long)G.full,
                (unsigned long long)G.raced);
}
