/* capture.c: a detailed per-call trace of chosen windows (mpiwatch.capture, docs/steering.md).
 *
 * DESIGN: the steering key mpiwatch.capture=N (the N whole windows after the request arrives)
 * or =N@K (global windows K..K+N-1) is applied on the sender thread. The first accepted
 * request maps the trace buffers, MW_RING per thread of MPIWATCH_CAPTURE_MAX calls each (one
 * per slot of the thread's ring, address space only until a capture writes it), and the
 * sample's arrays; then the request becomes one word, mw__capture_range = first << 16 | n,
 * stored with release order. Recording threads read that word only on rare paths: when they
 * enter a new window (mw__window_locate) and on mw__record_slow. A thread that enters a
 * captured window keeps no cached slot, so every call of that window takes the slow path,
 * which records it as usual and appends it to the trace of the slot it went to (capture_add).
 * With no capture the wrappers run exactly the code they ran before: the "no cached slot" test
 * already existed.
 *
 * Whole windows: the sender only ever captures windows that start at least CAPTURE_GUARD_NS
 * after it published the range (it reads the clock again after a full fence and moves the
 * first window on when it was too slow), so no thread can have entered a captured window
 * before the range was visible. A window is captured or not by the sender's own range, which
 * is what marks its sample; the slots' traces are taken into the sample of the window they
 * are collected with, and any timed call counted in that sample but missing from its trace
 * (buffer full, or a call that went into a slot before the range was visible, which the
 * guard makes impossible in practice) is counted in Capture.dropped, so that for every
 * sample: timed calls counted = calls traced + dropped.
 *
 * With tracing on (docs/trace.md, "Flight recorder, plans and captures") a request also
 * reaches back: its windows that the flight recorder still holds are sent as Envelope.trace
 * messages, and every later one is traced with its sample (trace_send.c), besides the
 * Sample.capture of the whole windows ahead described here, which is unchanged.
 *
 * One capture at a time: a request that arrives before the sender has collected the last
 * window of the one in force is refused (counted as busy). Nothing here allocates, locks or
 * enters the kernel on a recording thread.
 */
#include "shim.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* A captured window starts at least this long after the range is visible to every thread. */
#define CAPTURE_GUARD_NS 50000ull

_Atomic uint64_t mw__capture_range;

static struct {
    mw_call_t *buf; /* [max_threads][MW_RING][capture_max], mapped at the first request */
    /* The request in force (sender thread only): windows [lo, hi) are captured. */
    int64_t lo, hi;
    uint64_t first;
    uint32_t windows, skipped;
    /* The sample being gathered: its window and its calls as the wire's parallel arrays. */
    int64_t k;
    uint32_t *fn;
    int64_t *start;
    uint64_t *dur, *bytes;
    int32_t *peer;
    uint32_t n;
    uint64_t dropped;
    /* Counters, printed at finalize with MPIWATCH_VERBOSE. */
    uint64_t requests, accepted, bad, busy, late, nomem, windows_sent;
} C = {.k = -1};

/* The trace buffer of thread t's slot s. */
static mw_call_t *slot_trace(mw_thread_t *t, mw_slot_t *s)
{
    size_t ti = (size_t)((unsigned char *)t - mw__g.arena) / mw__g.thread_bytes;
    size_t si = (size_t)((unsigned char *)s - (unsigned char *)mw__slot(t, 0)) / mw__g.slot_bytes;
    return C.buf + (ti * MW_RING + si) * mw__g.cfg.capture_max;
}

void mw__capture_add(mw_thread_t *t, mw_slot_t *s, unsigned fn, uint64_t t0, uint64_t d,
                     uint64_t bytes, int peer)
{
    /* C.buf was written before the range that made the caller come here (release/acquire). */
    if (!C.buf || s->ntrace >= mw__g.cfg.capture_max) {
        s->trace_lost++;
        return;
    }
    slot_trace(t, s)[s->ntrace++] = (mw_call_t){
        .fn = fn, .peer = peer, .start_ns = mw__global_ns(t0), .duration_ns = d, .bytes = bytes};
}

/* Maps the buffers once. Returns 0, or -1 (the request is refused). */
static int capture_alloc(void)
{
    if (C.buf)
        return 0;
    size_t n = MW_CAPTURE_MAX_CALLS;
    C.fn = malloc(n * sizeof *C.fn);
    C.start = malloc(n * sizeof *C.start);
    C.dur = malloc(n * sizeof *C.dur);
    C.bytes = malloc(n * sizeof *C.bytes);
    C.peer = malloc(n * sizeof *C.peer);
    size_t total =
        (size_t)mw__g.cfg.max_threads * MW_RING * mw__g.cfg.capture_max * sizeof(mw_call_t);
    void *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED || !C.fn || !C.start || !C.dur || !C.bytes || !C.peer) {
        if (p != MAP_FAILED)
            munmap(p, total);
        free(C.fn), free(C.start), free(C.dur), free(C.bytes), free(C.peer);
        C.fn = NULL, C.start = NULL, C.dur = C.bytes = NULL, C.peer = NULL;
        return -1;
    }
    C.buf = p;
    return 0;
}

/* A decimal number of at most 15 digits without sign or blanks. Returns 0, or -1. */
static void publish(void)
{
    uint64_t word = C.lo < C.hi ? (uint64_t)C.lo << MW_CAPTURE_N_BITS | (uint64_t)(C.hi - C.lo) : 0;
    atomic_store_explicit(&mw__capture_range, word, memory_order_release);
}

int mw__capture_request(const char *value)
{
    C.requests++;
    uint64_t n, k = 0;
    const char *p = value;
    int at = 0;
    if (mw__steer_number(&p, &n) < 0 || n < 1 || n > MW_CAPTURE_MAX_WINDOWS) {
        C.bad++;
        return -1;
    }
    if (*p == '@') {
        p++;
        at = 1;
        if (mw__steer_number(&p, &k) < 0) {
            C.bad++;
            return -1;
        }
    }
    if (*p) {
        C.bad++;
        return -1;
    }
    int64_t now_w = mw__grid_index(mw__global_ns(mw__now()));
    /* A K far beyond the present would hold the capture slot for nothing. */
    if (at && (int64_t)k > now_w + (int64_t)MW_CAPTURE_MAX_WINDOWS) {
        C.bad++;
        return -1;
    }
    if (C.hi > 0 && atomic_load(&mw__g.closed_upto) < C.hi - 1) {
        C.busy++;
        return -1;
    }
    if (capture_alloc() < 0) {
        C.nomem++;
        return -1;
    }
    /* The first window that starts at least the guard after now. */
    uint64_t now = mw__fenced_now();
    int64_t safe = mw__grid_first_from(now + CAPTURE_GUARD_NS);
    C.first = at ? k : (uint64_t)safe;
    C.windows = (uint32_t)n;
    C.hi = (int64_t)(C.first + n);
    C.lo = (int64_t)C.first > safe ? (int64_t)C.first : safe;
    /* With tracing on (trace_send.c) the request also reaches back: its windows still in the
     * flight recorder are sent at once, the later ones traced with their samples. Its id is
     * the range word, the same on every rank for N@K. */
    int traced =
        mw__trace_enabled() && mw__trace_capture(C.first, n, C.first << MW_CAPTURE_N_BITS | n) > 0;
    if (C.lo >= C.hi || (uint64_t)C.hi >= 1ull << (64 - MW_CAPTURE_N_BITS)) {
        C.late++;
        mw__log("capture %s: every window had begun when it arrived; %s", value,
                traced ? "sent from the flight recorder" : "nothing captured");
        C.lo = C.hi = 0;
        return traced ? 0 : -1;
    }
    publish();
    /* Had this thread been descheduled between reading the clock and the store, a thread
     * could have entered the first window without seeing the range: move on past it. */
    for (now = mw__fenced_now(); C.lo < C.hi && mw__grid_start(C.lo) < now + CAPTURE_GUARD_NS;
         now = mw__fenced_now()) {
        C.lo++;
        publish();
    }
    C.skipped = (uint32_t)(C.lo - (int64_t)C.first);
    if (C.lo >= C.hi) {
        C.late++;
        C.lo = C.hi = 0;
        publish();
        return traced ? 0 : -1;
    }
    C.accepted++;
    mw__log("capture %s: windows %lld..%lld%s", value, (long long)C.lo, (long long)C.hi - 1,
            C.skipped ? " (the first ones had begun)" : "");
    return 0;
}

void mw__capture_take(mw_thread_t *t, mw_slot_t *s, int64_t k)
{
    uint32_t kept = s->ntrace, lost = s->trace_lost;
    s->ntrace = s->trace_lost = 0;
    if (k < C.lo || k >= C.hi)
        return; /* not a captured window: a trace written into it is not wanted */
    if (C.k != k) {
        C.k = k;
        C.n = 0;
        C.dropped = 0;
    }
    uint64_t timed = 0;
    for (unsigned f = 1; f < MW_FN_COUNT; f++)
        if (s->fn[f].count && mw_fn_timed(f))
            timed += s->fn[f].count;
    uint64_t traced = (uint64_t)kept + lost;
    C.dropped += lost + (timed > traced ? timed - traced : 0);
    const mw_call_t *c = kept ? slot_trace(t, s) : NULL;
    const uint64_t wstart = mw__grid_start(k);
    for (uint32_t i = 0; i < kept; i++) {
        if (C.n >= MW_CAPTURE_MAX_CALLS) {
            C.dropped += kept - i;
            break;
        }
        C.fn[C.n] = c[i].fn;
        C.start[C.n] = (int64_t)(c[i].start_ns - wstart);
        C.dur[C.n] = c[i].duration_ns;
        C.bytes[C.n] = c[i].bytes;
        C.peer[C.n] = c[i].peer;
        C.n++;
    }
}

void mw__capture_view(int64_t k, mw_capture_view_t *v)
{
    memset(v, 0, sizeof *v);
    if (k < C.lo || k >= C.hi)
        return;
    v->captured = 1;
    v->first = C.first;
    v->windows = C.windows;
    v->skipped = C.skipped;
    if (C.k == k) {
        v->n = C.n;
        v->dropped = C.dropped;
    }
    v->fn = C.fn;
    v->start = C.start;
    v->dur = C.dur;
    v->bytes = C.bytes;
    v->peer = C.peer;
}

void mw__capture_clear(int64_t k)
{
    if (k >= C.lo && k < C.hi)
        C.windows_sent++;
    C.n = 0;
    C.dropped = 0;
    C.k = -1;
}

void mw__capture_log(void)
{
    if (C.requests)
        mw__log("capture: %llu requests, %llu accepted, %llu bad, %llu busy, %llu too late, "
                "%llu without memory; %llu windows captured",
                (unsigned long long)C.requests, (unsigned long long)C.accepted,
                (unsigned long long)C.bad, (unsigned long long)C.busy, (unsigned long long)C.late,
                (unsigned long long)C.nomem, (unsigned long long)C.windows_sent);
}
