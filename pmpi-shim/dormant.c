/* dormant.c: dormant mode, the library's cheapest state that still counts (docs/shim.md,
 * "Dormant mode").
 *
 * DESIGN: sites preload a monitoring library into every job, and most jobs have nobody
 * watching. While dormant, the wrappers keep only each call's exact count and bytes, per
 * thread and function (shim.h, MW_UNRECORDED): no clock read, no window slot, no histogram,
 * no call site, region, trace or peer. The rank becomes dormant at MPI_Init with
 * MPIWATCH_MODE=dormant, automatically once no collector has been reachable for
 * MPIWATCH_DORMANT_AFTER (the sender's socket monitor says whether the connection is up), or
 * by steering (mpiwatch.mode=dormant); it records in full again as soon as the connection
 * comes up (a collector appeared) or on mpiwatch.mode=full. A dormancy asked by steering ends
 * only by steering: a user who asked for it meant it.
 *
 * Everything here but mw__dormant_set runs on the sender thread (or at MPI_Init, before it
 * starts). Switching is two stores (mw__set_state): the new state's flag is set before the old
 * one is cleared, so that a call always finds one of them and is counted once, dormant or in
 * full. The counts are cumulative since MPI_Init and never reset; the sender sums the threads'
 * counts once per window while the rank is or was dormant and sends them, with the dormant
 * spans (start, end, their calls and bytes), in every sample and in the bye (proto Dormant).
 * A collector keeps the newest, so dormant calls are reported as dormant, never as missed,
 * and a collector that appears late still learns all of them.
 */
#include "shim.h"

#include <string.h>

enum { BY_NONE, BY_RULE, BY_STEER }; /* why the rank is dormant */

static struct {
    int by;      /* BY_*: BY_NONE when recording in full */
    int link_up; /* the sender's socket is connected (a collector is reachable) */
    uint64_t down_since;
    int ever;             /* the rank has been dormant: its samples carry the totals */
    uint64_t span_calls0; /* the dormant calls and bytes at the open span's start */
    uint64_t span_bytes0;
    unsigned nspans;
    uint64_t folded;
    uint64_t start[MW_DORMANT_SPANS], end[MW_DORMANT_SPANS];
    uint64_t calls[MW_DORMANT_SPANS], bytes[MW_DORMANT_SPANS];
    uint64_t switches;
    mw_dsum_t sum;
    /* the wire's parallel arrays */
    uint32_t w_fn[MW_FN_COUNT];
    uint64_t w_calls[MW_FN_COUNT], w_bytes[MW_FN_COUNT];
} D;

void mw__dormant_sum(mw_dsum_t *out)
{
    memset(out, 0, sizeof *out);
    unsigned n = atomic_load(&mw__g.nthreads);
    if (n > mw__g.cfg.max_threads)
        n = mw__g.cfg.max_threads;
    for (unsigned i = 0; i < n; i++) {
        const mw_thread_t *t = mw__thread(i);
        for (unsigned f = 1; f < MW_FN_COUNT; f++) {
            out->calls[f] += atomic_load_explicit(&t->dorm[f].calls, memory_order_relaxed);
            out->bytes[f] += atomic_load_explicit(&t->dorm[f].bytes, memory_order_relaxed);
        }
    }
}

static void sum_totals(uint64_t *calls, uint64_t *bytes)
{
    mw__dormant_sum(&D.sum);
    *calls = *bytes = 0;
    for (unsigned f = 1; f < MW_FN_COUNT; f++) {
        *calls += D.sum.calls[f];
        *bytes += D.sum.bytes[f];
    }
}

void mw__dormant_set(int on)
{
    atomic_store(&mw__g.dormant_req, on);
    mw__set_state(-1, -1);
}

/* Enters (on) or leaves dormancy at global time now, for reason by. */
static void dormant_switch(int on, int by, uint64_t now)
{
    if (on == (D.by != BY_NONE)) {
        if (on)
            D.by = by;       /* a steered dormancy outranks the rule's */
        mw__dormant_set(on); /* no span starts or ends: the flags as asked, all the same */
        return;
    }
    D.switches++;
    if (on) {
        if (D.nspans == MW_DORMANT_SPANS) {
            /* Full: the two oldest spans become one (its calls include the gap's, none). */
            D.end[0] = D.end[1];
            D.calls[0] += D.calls[1];
            D.bytes[0] += D.bytes[1];
            memmove(&D.start[1], &D.start[2], (MW_DORMANT_SPANS - 2) * sizeof D.start[0]);
            memmove(&D.end[1], &D.end[2], (MW_DORMANT_SPANS - 2) * sizeof D.end[0]);
            memmove(&D.calls[1], &D.calls[2], (MW_DORMANT_SPANS - 2) * sizeof D.calls[0]);
            memmove(&D.bytes[1], &D.bytes[2], (MW_DORMANT_SPANS - 2) * sizeof D.bytes[0]);
            D.nspans--;
            D.folded++;
        }
        sum_totals(&D.span_calls0, &D.span_bytes0);
        D.start[D.nspans] = now;
        D.end[D.nspans] = 0;
        D.calls[D.nspans] = D.bytes[D.nspans] = 0;
        D.nspans++;
        D.ever = 1;
        D.by = by;
        mw__dormant_set(1);
        mw__log("dormant (%s)", by == BY_STEER ? "steered" : "no collector");
    } else {
        mw__dormant_set(0);
        D.by = BY_NONE;
        if (D.nspans) {
            /* Calls still in progress at the switch end later, dormant: they are in the
             * totals, not in the span's figures. */
            uint64_t tc, tb;
            sum_totals(&tc, &tb);
            unsigned last = D.nspans - 1;
            D.end[last] = now ? now : 1;
            D.calls[last] = tc - D.span_calls0;
            D.bytes[last] = tb - D.span_bytes0;
        }
        mw__log("recording in full");
    }
}

void mw__dormant_init(uint64_t now)
{
    D.down_since = now;
    if (mw__g.cfg.start_dormant)
        dormant_switch(1, BY_RULE, now);
}

void mw__dormant_link(int up, uint64_t now)
{
    if (up == D.link_up)
        return;
    D.link_up = up;
    if (!up)
        D.down_since = now;
    else if (D.by == BY_RULE)
        dormant_switch(0, BY_NONE, now); /* a collector appeared */
}

void mw__dormant_tick(uint64_t now)
{
    uint64_t after = mw__g.cfg.dormant_after_ns;
    if (D.by == BY_NONE && after && !D.link_up && now - D.down_since >= after)
        dormant_switch(1, BY_RULE, now);
}

int mw__dormant_steer(const char *value)
{
    uint64_t now = mw__global_ns(mw__now());
    if (strcmp(value, "dormant") == 0) {
        dormant_switch(1, BY_STEER, now);
    } else if (strcmp(value, "full") == 0) {
        dormant_switch(0, BY_NONE, now);
        D.down_since = now; /* the rule waits its full delay again */
    } else {
        return -1;
    }
    return 0;
}

int mw__dormant_now(void)
{
    return D.by != BY_NONE;
}

int mw__dormant_wire(Mpiwatch__Dormant *d)
{
    if (!D.ever)
        return 0;
    uint64_t tc, tb;
    sum_totals(&tc, &tb);
    unsigned n = 0;
    for (unsigned f = 1; f < MW_FN_COUNT; f++) {
        if (!D.sum.calls[f])
            continue;
        D.w_fn[n] = f;
        D.w_calls[n] = D.sum.calls[f];
        D.w_bytes[n++] = D.sum.bytes[f];
    }
    if (D.by != BY_NONE && D.nspans) { /* the open span counts up to now */
        D.calls[D.nspans - 1] = tc - D.span_calls0;
        D.bytes[D.nspans - 1] = tb - D.span_bytes0;
    }
    d->n_fn = d->n_calls = d->n_bytes = n;
    d->fn = D.w_fn;
    d->calls = D.w_calls;
    d->bytes = D.w_bytes;
    d->n_span_start_ns = d->n_span_end_ns = d->n_span_calls = d->n_span_bytes = D.nspans;
    d->span_start_ns = D.start;
    d->span_end_ns = D.end;
    d->span_calls = D.calls;
    d->span_bytes = D.bytes;
    d->spans_folded = D.folded;
    return 1;
}

void mw__dormant_log(void)
{
    if (D.ever)
        mw__log("dormant: %u spans (%llu folded), %llu switches", D.nspans,
                (unsigned long long)D.folded, (unsigned long long)D.switches);
}
