/* grid.c: changing the window length of a running job (mpiwatch.window=MS@K).
 *
 * DESIGN: the window grid is a short list of segments (proto/mw_grid.h, the arithmetic the
 * collector and the viewer use too): from window K on, windows are L ns long, starting at T,
 * the start of window K on the grid before the change, so window indices stay contiguous and
 * the time they cover too. The collector decides the change for the whole job
 * (collector/steer.c chooses K about a second ahead) and publishes "MS@K"; the sender thread
 * of every rank appends the same segment here (mw__g.grid, with its sub-slots in mw__g.seg). The
 * recorders look the grid up only on their slow paths (a call that ends outside the thread's cached
 * window, record.c), so the common path is unchanged. A segment is written once, then published by
 * a release store of the segment count; it only changes the bounds of windows >= K, and K starts
 * later than MW_GRID_GUARD_NS from now, so no thread has cached a window at or after K when it
 * appears (the sender's membarrier at each window hand-over orders it for every thread long before
 * then). A rank that gets the message when K is (almost) under way cannot switch consistently: it
 * keeps its grid, counts and logs it; its samples from K on then no longer match the collector's
 * grid and are rejected there (grid_mismatch), never merged on the wrong windows.
 *
 * Trust: "MS@K" arrives from the network, and the library trusts nothing it receives. K is a
 * number of up to 15 digits, so K x length can exceed 64 bits: a K chosen to wrap around to a
 * time a few seconds ahead used to be accepted, and the sender then had ~10^14 windows to
 * encode at MPI_Finalize. Every step of the arithmetic is now checked (mw_grid_plan in
 * proto/mw_grid.c, which has no side effect and is unit-tested at the INT64/UINT64 limits),
 * and K is accepted only when its window starts between MW_GRID_GUARD_NS and
 * MW_GRID_MAX_LEAD_NS (60 s) from now; the collector picks K about one second ahead
 * (MW_GRID_LEAD_NS). Independently of this, the sender never emits more than MW_CATCHUP_MAX
 * windows in one catch-up (sender.c), whatever the grid says.
 */
#include "shim.h"

#include <string.h>

static struct {
    uint64_t requests, applied, bad, late, far, full, raced;
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
    uint64_t ms, k, start = 0;
    if (parse_num(&p, '@', &ms) < 0 || (p++, parse_num(&p, '\0', &k)) < 0) {
        G.bad++;
        mw__log("window %.64s: not MS@K; ignored", value);
        return -1;
    }
    unsigned n = atomic_load_explicit(&mw__g.nseg, memory_order_acquire);
    switch (mw_grid_plan(mw__g.grid, n, mw__g.window_ns, mw__fenced_now(), ms, k, &start)) {
    case MW_GRID_OK:
        break;
    case MW_GRID_FULL:
        G.full++;
        mw__log("window %s: %u segments already; ignored", value, n);
        return -1;
    case MW_GRID_FAR:
        G.far++;
        mw__log("window %s: window %llu starts more than %llu s from now (or beyond 64 bits); "
                "ignored",
                value, (unsigned long long)k, MW_GRID_MAX_LEAD_NS / 1000000000ull);
        return -1;
    case MW_GRID_LATE:
        G.late++;
        mw__log("window %s: window %llu has begun; this rank keeps its grid and the "
                "collector will reject its samples from there on",
                value, (unsigned long long)k);
        return -1;
    default:
        G.bad++;
        mw__log("window %s: length or window out of bounds; ignored", value);
        return -1;
    }
    mw__g.grid[n] = (mw_grid_seg_t){.first = k, .start_ns = start, .window_ns = ms * 1000000ull};
    mw__seg_ticks(n);
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
        mw__log("window: %llu requests, %llu applied, %llu bad, %llu too late, %llu too far "
                "ahead, %llu refused (segments full), %llu raced",
                (unsigned long long)G.requests, (unsigned long long)G.applied,
                (unsigned long long)G.bad, (unsigned long long)G.late, (unsigned long long)G.far,
                (unsigned long long)G.full, (unsigned long long)G.raced);
}
