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
 *
 * Trust: "MS@K" arrives from the network, and the library trusts nothing it receives. K is a
 * number of up to 15 digits, so K x length can exceed 64 bits: a K chosen to wrap around to a
 * time a few seconds ahead used to be accepted, and the sender then had ~10^14 windows to
 * encode at MPI_Finalize. Every step of the arithmetic is now checked (mw__grid_plan, which
 * has no side effect and is unit-tested at the INT64/UINT64 limits), and K is accepted only
 * when its window starts between GRID_GUARD_NS and MW_GRID_MAX_LEAD_NS (60 s) from now; the
 * collector picks K about one second ahead (collector/grid.h, MW_GRID_LEAD_NS). Independently
 * of this, the sender never emits more than MW_CATCHUP_MAX windows in one catch-up
 * (sender.c), whatever the grid says.
 */
#include "shim.h"

#include <string.h>

#define GRID_GUARD_NS 5000000ull /* K must start at least this long after the request is taken */
#define GRID_MIN_MS 10ull
#define GRID_MAX_MS 60000ull
#define GRID_FACTOR 8ull /* a length within 1/8..8 of the job's first one */

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

int mw__grid_start_checked(const mw_seg_t *sg, int64_t k, uint64_t *out)
{
    uint64_t off, start;
    if (k < sg->first ||
        __builtin_mul_overflow((uint64_t)k - (uint64_t)sg->first, sg->len_ns, &off) ||
        __builtin_add_overflow(sg->start_ns, off, &start))
        return -1;
    *out = start;
    return 0;
}

int mw__grid_plan(const mw_seg_t *seg, unsigned nseg, uint64_t first_len, uint64_t now, uint64_t ms,
                  uint64_t k, uint64_t *start)
{
    if (nseg == 0 || first_len == 0)
        return MW_GRID_BAD;
    const mw_seg_t *last = &seg[nseg - 1];
    /* The length: bounded, and within GRID_FACTOR of the first one (no product can wrap:
     * ms <= GRID_MAX_MS and first_len comes from MPIWATCH_WINDOW_MS <= 60 s). */
    if (ms < GRID_MIN_MS || ms > GRID_MAX_MS)
        return MW_GRID_BAD;
    uint64_t len = ms * 1000000ull;
    if (len * GRID_FACTOR < first_len || len > first_len * GRID_FACTOR)
        return MW_GRID_BAD;
    /* K: an index after the last change (an int64 like every window index). */
    if (k > (uint64_t)INT64_MAX || (int64_t)k <= last->first)
        return MW_GRID_BAD;
    if (nseg >= MW_GRID_MAX_SEGMENTS)
        return MW_GRID_FULL;
    /* Where K starts on the grid in force: no wrap, and not beyond the lead bound (which also
     * keeps every later window index and start far from the 64-bit limits). */
    uint64_t s, lead_end;
    if (mw__grid_start_checked(last, (int64_t)k, &s) < 0)
        return MW_GRID_FAR;
    if (__builtin_add_overflow(now, MW_GRID_MAX_LEAD_NS, &lead_end))
        lead_end = UINT64_MAX;
    if (s > lead_end)
        return MW_GRID_FAR;
    if (now > UINT64_MAX - GRID_GUARD_NS || s < now + GRID_GUARD_NS)
        return MW_GRID_LATE;
    *start = s;
    return MW_GRID_OK;
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
    switch (mw__grid_plan(mw__g.seg, n, mw__g.window_ns, mw__fenced_now(), ms, k, &start)) {
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
    mw_seg_t *sg = &mw__g.seg[n];
    *sg = (mw_seg_t){.first = (int64_t)k, .start_ns = start, .len_ns = ms * 1000000ull};
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
        mw__log("window: %llu requests, %llu applied, %llu bad, %llu too late, %llu too far "
                "ahead, %llu refused (segments full), %llu raced",
                (unsigned long long)G.requests, (unsigned long long)G.applied,
                (unsigned long long)G.bad, (unsigned long long)G.late, (unsigned long long)G.far,
                (unsigned long long)G.full, (unsigned long long)G.raced);
}
