/* mw_grid.c: the window grid's arithmetic (mw_grid.h, docs/steering.md "Window length").
 *
 * DESIGN: a job starts with one window length (Hello.window_ns) and window k covers
 * [k * W, (k + 1) * W) of global time. mpiwatch.window=MS@K changes the length for the whole
 * job from a window K on; the grid then becomes a short list of segments {K, T, L}, T being
 * the start of K on the grid before, so window indices stay contiguous and so does the time
 * they cover. Every place that maps an index to a time or back, in the shim, the collector
 * and the viewer, goes through these functions; a job that never changes its length has the
 * one segment {0, 0, W} and the arithmetic k * W. Lookups scan from the newest segment (at
 * most MW_GRID_MAX_SEGMENTS): the present is in the last one.
 *
 * Trust: K and MS arrive from the network. The plain lookups wrap modulo 2^64 like the
 * unsigned arithmetic they replace; mw_grid_plan, which decides at a rank whether a request
 * may change its grid, checks every product and sum (issue 12: a K whose start wrapped around
 * 2^64 to a time a few seconds ahead was accepted) and bounds how far ahead K may start.
 */
#include "mw_grid.h"

#include <stdio.h>

int mw_grid_seg_start_checked(const mw_grid_seg_t *s, uint64_t k, uint64_t *out)
{
    uint64_t off, start;
    if (k < s->first || __builtin_mul_overflow(k - s->first, s->window_ns, &off) ||
        __builtin_add_overflow(s->start_ns, off, &start))
        return -1;
    *out = start;
    return 0;
}

unsigned mw_grid_find(const mw_grid_seg_t *seg, unsigned n, uint64_t k)
{
    unsigned i = n ? n - 1 : 0;
    while (i > 0 && seg[i].first > k)
        i--;
    return i;
}

unsigned mw_grid_find_time(const mw_grid_seg_t *seg, unsigned n, uint64_t t)
{
    unsigned i = n ? n - 1 : 0;
    while (i > 0 && seg[i].start_ns > t)
        i--;
    return i;
}

int mw_grid_len_ok(uint64_t first_ns, uint64_t ms)
{
    /* No product can wrap: ms <= MW_GRID_MAX_MS is checked first, and first_ns x 8 would
     * need a first length past 2^61 ns (73 years); the shim takes at most 60 s
     * (MPIWATCH_WINDOW_MS), the collector at most 60 s from a hello. */
    if (ms < MW_GRID_MIN_MS || ms > MW_GRID_MAX_MS)
        return 0;
    uint64_t len = ms * 1000000ull;
    return !(len * MW_GRID_FACTOR < first_ns || len > first_ns * MW_GRID_FACTOR);
}

int mw_grid_plan(const mw_grid_seg_t *seg, unsigned n, uint64_t first_ns, uint64_t now, uint64_t ms,
                 uint64_t k, uint64_t *start)
{
    if (n == 0 || first_ns == 0)
        return MW_GRID_BAD;
    const mw_grid_seg_t *last = &seg[n - 1];
    if (!mw_grid_len_ok(first_ns, ms))
        return MW_GRID_BAD;
    /* K: an index after the last change (an int64 like every window index of the shim). */
    if (k > (uint64_t)INT64_MAX || k <= last->first)
        return MW_GRID_BAD;
    if (n >= MW_GRID_MAX_SEGMENTS)
        return MW_GRID_FULL;
    /* Where K starts on the grid in force: no wrap, and not beyond the lead bound (which also
     * keeps every later window index and start far from the 64-bit limits). */
    uint64_t s, lead_end;
    if (mw_grid_seg_start_checked(last, k, &s) < 0)
        return MW_GRID_FAR;
    if (__builtin_add_overflow(now, MW_GRID_MAX_LEAD_NS, &lead_end))
        lead_end = UINT64_MAX;
    if (s > lead_end)
        return MW_GRID_FAR;
    if (now > UINT64_MAX - MW_GRID_GUARD_NS || s < now + MW_GRID_GUARD_NS)
        return MW_GRID_LATE;
    *start = s;
    return MW_GRID_OK;
}

void mw_grid_init(mw_grid_t *g, uint64_t window_ns)
{
    g->n = 1;
    g->seg[0] = (mw_grid_seg_t){0, 0, window_ns};
}

const mw_grid_seg_t *mw_grid_seg(const mw_grid_t *g, uint64_t k)
{
    return &g->seg[mw_grid_find(g->seg, g->n, k)];
}

uint64_t mw_grid_start(const mw_grid_t *g, uint64_t k)
{
    return mw_grid_seg_start(mw_grid_seg(g, k), k);
}

uint64_t mw_grid_len(const mw_grid_t *g, uint64_t k)
{
    return mw_grid_seg(g, k)->window_ns;
}

uint64_t mw_grid_index(const mw_grid_t *g, uint64_t t)
{
    return mw_grid_seg_index(&g->seg[mw_grid_find_time(g->seg, g->n, t)], t);
}

uint64_t mw_grid_span(const mw_grid_t *g, uint64_t a, uint64_t b)
{
    return b > a ? mw_grid_start(g, b) - mw_grid_start(g, a) : 0;
}

int mw_grid_check(const mw_grid_t *g, uint64_t ms, uint64_t min_ns, char *err, size_t errlen)
{
    uint64_t first = g->seg[0].window_ns, len = ms * 1000000ull;
    if (ms < MW_GRID_MIN_MS || ms > MW_GRID_MAX_MS) {
        snprintf(err, errlen, "window length must be %u..%u ms", MW_GRID_MIN_MS, MW_GRID_MAX_MS);
        return -1;
    }
    if (!mw_grid_len_ok(first, ms)) {
        snprintf(err, errlen, "window length must be within 1/%u..%u of the job's first (%llu ms)",
                 MW_GRID_FACTOR, MW_GRID_FACTOR, (unsigned long long)(first / 1000000ull));
        return -1;
    }
    if (len < min_ns) {
        snprintf(err, errlen,
                 "window length below %llu ms: the collector's window ring was sized "
                 "at job start for its lateness allowance",
                 (unsigned long long)((min_ns + 999999) / 1000000));
        return -1;
    }
    if (g->n >= MW_GRID_MAX_SEGMENTS) {
        snprintf(err, errlen, "the window length already changed %u times",
                 MW_GRID_MAX_SEGMENTS - 1);
        return -1;
    }
    if (len == g->seg[g->n - 1].window_ns) {
        snprintf(err, errlen, "the window length is already %llu ms", (unsigned long long)ms);
        return -1;
    }
    return 0;
}

uint64_t mw_grid_pick(const mw_grid_t *g, uint64_t now_ns, int64_t newest)
{
    uint64_t base = now_ns;
    if (newest >= 0) {
        uint64_t end = mw_grid_start(g, (uint64_t)newest + 1);
        if (end > base)
            base = end;
    }
    uint64_t k = mw_grid_index(g, base + MW_GRID_LEAD_NS);
    if (mw_grid_start(g, k) < base + MW_GRID_LEAD_NS)
        k++;
    if (k <= g->seg[g->n - 1].first)
        k = g->seg[g->n - 1].first + 1;
    return k;
}

int mw_grid_append(mw_grid_t *g, uint64_t k, uint64_t ms, char *err, size_t errlen)
{
    if (g->n >= MW_GRID_MAX_SEGMENTS || g->n == 0) {
        snprintf(err, errlen, "no room for another grid segment");
        return -1;
    }
    if (k <= g->seg[g->n - 1].first) {
        snprintf(err, errlen, "window %llu is not after the last change (window %llu)",
                 (unsigned long long)k, (unsigned long long)g->seg[g->n - 1].first);
        return -1;
    }
    if (ms == 0 || ms > MW_GRID_MAX_MS) {
        snprintf(err, errlen, "window length %llu ms out of bounds", (unsigned long long)ms);
        return -1;
    }
    g->seg[g->n] = (mw_grid_seg_t){k, mw_grid_start(g, k), ms * 1000000ull};
    g->n++;
    return 0;
}

int mw_grid_push(mw_grid_t *g, uint64_t first, uint64_t start_ns, uint64_t window_ns)
{
    if (g->n >= MW_GRID_MAX_SEGMENTS || (g->n > 0 && first <= g->seg[g->n - 1].first))
        return -1;
    g->seg[g->n++] = (mw_grid_seg_t){first, start_ns, window_ns};
    return 0;
}

int mw_grid_parse_ms(const char *s, uint64_t *ms)
{
    uint64_t v = 0;
    size_t n = 0;
    if (!s)
        return -1;
    for (; s[n] >= '0' && s[n] <= '9'; n++) {
        if (n >= 9)
            return -1;
        v = v * 10 + (uint64_t)(s[n] - '0');
    }
    if (n == 0 || s[n] != '\0')
        return -1;
    *ms = v;
    return 0;
}
