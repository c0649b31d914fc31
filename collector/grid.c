/* grid.c: the job's window grid: which global time window k covers.
 *
 * DESIGN: a job starts with one window length (Hello.window_ns) and window k covers
 * [k * W, (k + 1) * W) of global time. The built-in steering key mpiwatch.window changes the
 * length for the whole job from a window K on (steer.c); the grid then becomes a short list
 * of segments {K, T, L}, T being the start of K on the grid before, so window indices stay
 * contiguous and so does the time they cover: window k, in the last segment whose first
 * window is <= k, covers [T + (k - K) L, T + (k - K + 1) L). Every place of the collector that
 * maps an index to a time or back goes through these functions; a job that never changes its
 * length has the one segment {0, 0, W} and the same arithmetic as before. Lookups scan the
 * segments from the newest (at most MW_GRID_MAX_SEGMENTS).
 */
#include "grid.h"

#include <stdio.h>

void mw_grid_init(mw_grid_t *g, uint64_t window_ns)
{
    g->n = 1;
    g->seg[0] = (mw_grid_seg_t){0, 0, window_ns};
}

const mw_grid_seg_t *mw_grid_seg(const mw_grid_t *g, uint64_t k)
{
    uint32_t i = g->n ? g->n - 1 : 0;
    while (i > 0 && g->seg[i].first > k)
        i--;
    return &g->seg[i];
}

uint64_t mw_grid_start(const mw_grid_t *g, uint64_t k)
{
    const mw_grid_seg_t *s = mw_grid_seg(g, k);
    return s->start_ns + (k - s->first) * s->window_ns;
}

uint64_t mw_grid_len(const mw_grid_t *g, uint64_t k)
{
    return mw_grid_seg(g, k)->window_ns;
}

uint64_t mw_grid_index(const mw_grid_t *g, uint64_t t)
{
    uint32_t i = g->n ? g->n - 1 : 0;
    while (i > 0 && g->seg[i].start_ns > t)
        i--;
    const mw_grid_seg_t *s = &g->seg[i];
    return s->window_ns ? s->first + (t - s->start_ns) / s->window_ns : 0;
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
    if (len * MW_GRID_FACTOR < first || len > first * MW_GRID_FACTOR) {
        snprintf(err, errlen, "window length must be within 1/%u..%u of the job's first (%llu ms)",
                 MW_GRID_FACTOR, MW_GRID_FACTOR, (unsigned long long)(first / 1000000ull));
        return -1;
    }
    if (len < min_ns) {
        snprintf(err, errlen, "window length below %llu ms: the collector's window ring was sized "
                 "at job start for its lateness allowance", (unsigned long long)((min_ns + 999999) / 1000000));
        return -1;
    }
    if (g->n >= MW_GRID_MAX_SEGMENTS) {
        snprintf(err, errlen, "the window length already changed %u times", MW_GRID_MAX_SEGMENTS - 1);
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
