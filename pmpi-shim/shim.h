/* shim.h: internal interface of libmpiwatch (the preloaded PMPI library).
 *
 * DESIGN: every wrapper calls mw__self() to get the calling thread's state (NULL means "do not
 * record": the library is inert, the call is nested inside another MPI call, or the thread has
 * no state), takes two timestamps around PMPI_X and calls mw__record() once. Everything a
 * thread records goes into its own ring of per-window slots, indexed by window number, so the
 * hot path takes no lock, allocates nothing and makes no system call. The sender thread
 * collects window k from every thread's ring once k is over: it publishes k as closed,
 * issues one membarrier() so that every thread either sees the new value or has its "busy"
 * mark visible, waits for busy threads to finish their record, and then owns the slot. All memory
 * is allocated once at MPI_Init from sizes in the configuration.
 */
#ifndef MW_SHIM_H
#define MW_SHIM_H

#include <mpi.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "mw_bins.h"
#include "mw_grid.h"
#include "mw_limits.h"
#include "mw_proto.h"
#include "trace.h"

/* Symbols the application must see (MPI_*, mpi_*_, mw_*); everything else is hidden, so
 * calls inside the library are direct calls, not PLT calls. */
#define MW_EXPORT __attribute__((visibility("default")))

/* Quarter-octave duration bins (proto/mw_bins.h): bin 159 holds everything >= 1.75 x 2^39 ns
 * (~16 min). */
#define MW_NBINS MW_BINS_QUARTER
#define MW_RING 4u /* windows a thread may run ahead of the sender before it drops */

/* Settings, read once from MPIWATCH_* variables (config.c). */
typedef struct {
    int disable;
    char collector[256];
    unsigned window_ms;
    unsigned subslots;
    unsigned longest;     /* K longest calls kept per window */
    unsigned max_threads; /* threads that can record; more are counted as dropped */
    unsigned rows;        /* distinct timed functions per window and thread with histograms */
    unsigned peers;       /* distinct destination ranks per window and thread */
    unsigned sndhwm;
    unsigned linger_ms; /* bounded wait for the last samples at MPI_Finalize */
    unsigned sync_rounds;
    int timer; /* 0 auto, 1 tsc, 2 clock_gettime */
    int verbose;
    /* Time steps (docs/steps.md): MPIWATCH_STEP=fn:N (step_fn, step_every) or =auto. */
    unsigned step_fn, step_every;
    int step_auto;
    unsigned step_marks;  /* MPIWATCH_STEP_MARKS: marks one thread keeps per window */
    char steer[256];      /* MPIWATCH_STEER: the collector's steering endpoint ("": none) */
    unsigned nodes;       /* MPIWATCH_NODES: emulated nodes (0: the real ones), docs/topology.md */
    unsigned capture_max; /* MPIWATCH_CAPTURE_MAX: traced calls per window and thread */
    /* Flight recorder (docs/trace.md): windows kept, their bytes at most, the first plan. */
    unsigned trace_history, trace_history_mb; /* MPIWATCH_TRACE_HISTORY, _HISTORY_MB */
    char trace_plan[64];                      /* MPIWATCH_TRACE_PLAN ("": all) */
    /* Code regions (docs/regions.md): open regions per thread, region entries per window and
     * thread (MPIWATCH_REGION_DEPTH, MPIWATCH_REGION_ENTRIES). */
    unsigned region_depth, region_entries;
    /* Call sites (docs/callsites.md): MPIWATCH_CALLSITES, MPIWATCH_CALLSITES_MAX (entries per
     * window and thread, a power of two). */
    int callsites;
    unsigned callsites_max;
    /* Dormant mode (dormant.c): MPIWATCH_MODE=dormant, MPIWATCH_DORMANT_AFTER (0: never). */
    int start_dormant;
    uint64_t dormant_after_ns;
} mw_config_t;

/* Fallback (docs/shim.md "Fallback to the root"): where the sender goes when the collector
 * link has been down for after_ns (MPIWATCH_COLLECTOR_FALLBACK, MPIWATCH_STEER_FALLBACK,
 * MPIWATCH_FALLBACK_AFTER; "": no fallback). Read with the settings (config.c), used by the
 * sender thread only; kept out of mw_config_t so that mw__g's fields, which the inlined
 * wrappers read, keep their offsets. */
typedef struct {
    char collector[256];
    char steer[256];
    uint64_t after_ns;
} mw_fallback_t;
extern mw_fallback_t mw__fallback;

typedef struct {
    uint64_t count, total_ns;
    uint64_t min_inv; /* ~minimum duration: 0 when unset, and one compare updates it */
    uint64_t max_ns, bytes;
} mw_fnstat_t;

/* Adds x's totals to y (an empty x changes nothing). */
static inline void mw__fnstat_add(mw_fnstat_t *y, const mw_fnstat_t *x)
{
    if (!x->count)
        return;
    if (x->min_inv > y->min_inv)
        y->min_inv = x->min_inv;
    if (x->max_ns > y->max_ns)
        y->max_ns = x->max_ns;
    y->count += x->count;
    y->total_ns += x->total_ns;
    y->bytes += x->bytes;
}

static inline uint64_t mw__fn_min(const mw_fnstat_t *f)
{
    return f->min_inv ? ~f->min_inv : 0; /* counted-only functions have no durations */
}

/* A peer entry's key: the sending function and the destination's world rank + 1 (0: empty).
 * World ranks are < MW_MAX_RANKS (2^20), below the 2^21 - 1 the key has room for. */
#define MW_PEER_RANK_BITS 21u
#define MW_PEER_KEY(fn, rank)                                                                      \
    ((int32_t)((uint32_t)(fn) << MW_PEER_RANK_BITS | ((uint32_t)(rank) + 1u)))
#define MW_PEER_KEY_RANK(key) ((int32_t)((uint32_t)(key) & ((1u << MW_PEER_RANK_BITS) - 1u)) - 1)
#define MW_PEER_KEY_FN(key) ((uint32_t)(key) >> MW_PEER_RANK_BITS)
_Static_assert(MW_MAX_RANKS < (1u << MW_PEER_RANK_BITS) - 1u, "world ranks fit the peer key");
_Static_assert(MW_FN_COUNT <= (1u << (31u - MW_PEER_RANK_BITS)), "function ids fit the peer key");

typedef struct {
    int32_t key; /* MW_PEER_KEY(sending function, world rank), 0 empty */
    uint32_t messages;
    uint64_t bytes;
} mw_peer_t;

typedef struct {
    uint32_t fn;
    int32_t peer;
    uint64_t start_ns; /* global time */
    uint64_t duration_ns;
    uint64_t bytes;
} mw_call_t;

_Static_assert(sizeof(mw_fnstat_t) == 40, "fnstat is a fixed-size record");
_Static_assert(sizeof(mw_peer_t) == 16, "peer is a fixed-size record");
_Static_assert(sizeof(mw_call_t) == 32, "call is a fixed-size record");

/* One thread's data for one window. The per-function totals are dense by function id and
 * always exact; histograms, occupancy and density live in "rows" handed out to the first
 * `rows` distinct timed functions of the window (row_of[fn] = row index + 1). */
typedef struct {
    _Atomic uint64_t tag; /* window index + 1; 0 when the slot is free */
    uint64_t dropped;     /* entries not recorded in full (rows or peers full) */
    uint64_t late;        /* calls that ended in an already collected window */
    uint32_t nrows;
    uint32_t nlong;
    uint32_t long_min_i; /* index of the shortest kept call once nlong == K */
    uint32_t npeers;
    uint32_t nmarks, mark_fn_used, mark_peer_used; /* step marks in this slot (steps.c) */
    uint32_t ntrace, trace_lost; /* capture: calls traced into its buffer / not (full) */
    uint64_t long_min;           /* its duration; 0 until K calls are kept */
    uint8_t row_of[MW_FN_COUNT];
    mw_fnstat_t fn[MW_FN_COUNT] __attribute__((aligned(64)));
    /* followed by: K mw_call_t, cfg.peers mw_peer_t (open addressing, rank + 1 as key),
     * cfg.rows rows of mw__g.row_bytes, then the step marks (mw__steps.slot_*). All-zero
     * memory is an empty slot. */
} mw_slot_t;

/* The in-progress marker packs the start's low 54 bits with the function id in one store; the
 * reader restores the high bits from its own clock (a call would have to last 2^54 ticks,
 * months, to be misplaced). */
#define MW_INFLIGHT_FN_BITS 10u
_Static_assert(MW_FN_COUNT < (1u << MW_INFLIGHT_FN_BITS), "function ids fit the marker");

static inline uint64_t mw__inflight_start(uint64_t marker, uint64_t now)
{
    const uint64_t low_bits = 64u - MW_INFLIGHT_FN_BITS, mask = (1ull << low_bits) - 1;
    uint64_t t0 = (now & ~mask) | (marker >> MW_INFLIGHT_FN_BITS);
    return t0 > now ? t0 - (1ull << low_bits) : t0;
}

/* A thread's dormant calls and bytes of one function (dormant.c). */
typedef struct {
    _Atomic uint64_t calls, bytes;
} mw_dcount_t;

/* Per-thread state; lives in one block allocated at init. */
typedef struct {
    /* One word the sender reads: 0 idle; MW_INFLIGHT_BUSY while the owner writes a slot; in
     * a timed call, its start ticks << 10 | fn; MW_INFLIGHT_NESTED in an untimed wrapper. */
    _Atomic uint64_t inflight;
    int64_t cw;                /* cached window index of the last record */
    uint64_t cw_start, cw_end; /* its bounds, in ticks */
    mw_slot_t *cslot;          /* its slot, claimed; NULL when it could not be */
    uint64_t sub_lo, sub_hi;   /* cached sub-slot of the last record, in ticks */
    unsigned sub_i;
    const struct mw_seg *cseg; /* the grid segment of window cw (its sub-slot length) */
    struct mw_tring *tring;    /* its trace ring (trace.h); NULL when not tracing */
    uint64_t mpi_ns;           /* ns of its recorded timed calls so far (regions.c) */
    uint64_t ra;               /* return address of its current MPI call (callsites.c) */
    uint32_t site_off;         /* offset of the call-site table in a slot; 0: call sites off */
    uint32_t site_mask;        /* its entries - 1 */
    /* Dormant mode (dormant.c): its calls and bytes per function while dormant, cumulative,
     * written by the thread only (relaxed loads and stores, no read-modify-write), read by
     * the sender. Last, so that the fields above keep their offsets and cache lines. */
    mw_dcount_t dorm[MW_FN_COUNT];
    /* followed by MW_RING slots of mw__g.slot_bytes each */
} mw_thread_t;

/* The sub-slots of one segment of the window grid (record.c, docs/shim.md "Window length"):
 * mw__g.grid[i] (proto/mw_grid.h) says which global time the windows of segment i cover,
 * mw__g.seg[i] how they split into sub-slots in ticks. Both are immutable once published: the
 * sender thread fills grid[n] and seg[n] and then stores nseg = n + 1 with release; readers
 * load nseg with acquire, only on slow paths. */
typedef struct mw_seg {
    uint64_t sub_ticks; /* sub-slot length in ticks; the last sub-slot takes the rest */
    uint64_t sub_mult;  /* approximate sub-slot of an offset: (off * sub_mult) >> 32 */
} mw_seg_t;

/* Process-wide state (record.c). */
typedef struct {
    mw_config_t cfg;
    _Atomic int active;          /* 1 between a successful init and finalize */
    _Atomic int paused;          /* MPI_Pcontrol(0) */
    _Atomic int recording;       /* active && !paused: the one flag the wrappers read */
    _Atomic int64_t closed_upto; /* last window the sender collected */
    int need_fence;              /* no membarrier: threads pay a full fence instead */
    int rank, size;
    uint64_t window_ns; /* the job's first window length (Hello.window_ns) */
    /* timer: ns = base_ns + ((ticks - base_ticks) * mult) >> 32 */
    int use_tsc;
    uint64_t base_ticks, base_ns, mult;
    /* Where the fixed grid's tick length and sub-slot fields were (now per segment, seg[]):
     * kept so that the fields the inlined common path reads below keep their offsets and
     * cache lines (the wrappers' code is the same, instruction for instruction). */
    uint64_t reserved_[3];
    int64_t offset_ns; /* global = local monotonic ns + offset_ns */
    uint64_t clock_error_ns;
    /* memory layout, fixed at init */
    size_t row_bytes, row_same, row_end_x, row_start_x;
    size_t slot_longest, slot_peers, slot_rows, slot_bytes, thread_bytes;
    unsigned char *arena; /* max_threads thread blocks, mapped at init, touched on use */
    _Atomic unsigned nthreads;
    _Atomic uint64_t threads_dropped; /* calls from threads beyond max_threads */
    _Atomic uint64_t calls_dropped;   /* calls whose window slot was still owned by the sender */
    /* The grid: grid[0] = {0, 0, window_ns}, seg[i] the sub-slots of grid[i]. Last, so that
     * the fields the common path reads keep their offsets and cache lines. */
    mw_grid_seg_t grid[MW_GRID_MAX_SEGMENTS];
    mw_seg_t seg[MW_GRID_MAX_SEGMENTS];
    _Atomic unsigned nseg;
    /* Calls made but never recorded, by function: from threads beyond max_threads and calls
     * whose every slot was owned by the sender. The sender adds them to the running totals
     * (calls only: their time and bytes were never measured), so that a collector reports them
     * as missed and calls at the ranks == calls merged + calls missed stays exact. Written
     * only off the common path; unrecorded_total tells the sender whether to look. */
    _Atomic uint64_t unrecorded[MW_FN_COUNT];
    _Atomic uint64_t unrecorded_total;
    /* Dormant mode (dormant.c, docs/shim.md): dormant_req is what was asked (the sender
     * thread's rules, steering); mw__set_state derives `recording` and `dormant` from it, so
     * that at most one of the two is set while active and not paused: the wrappers read
     * `recording` first and `dormant` only when it is 0. */
    _Atomic int dormant_req;
    _Atomic int dormant;
} mw_global_t;

extern mw_global_t mw__g;
extern __thread mw_thread_t *mw__tls __attribute__((tls_model("initial-exec")));

/* config.c */
void mw__config_read(mw_config_t *cfg);

/* timer.c */
int mw__timer_init(int want);
static inline __attribute__((always_inline)) uint64_t mw__now(void)
{
    if (__builtin_expect(mw__g.use_tsc, 1))
        return __builtin_ia32_rdtsc();
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
static inline uint64_t mw__ticks_to_ns(uint64_t ticks)
{
    return (uint64_t)(((unsigned __int128)ticks * mw__g.mult) >> 32);
}
uint64_t mw__ns_to_ticks(uint64_t ns);
/* Local monotonic ns of a tick value, and global ns (rank 0's realtime base). */
static inline uint64_t mw__local_ns(uint64_t ticks)
{
    if (ticks >= mw__g.base_ticks)
        return mw__g.base_ns + mw__ticks_to_ns(ticks - mw__g.base_ticks);
    return mw__g.base_ns - mw__ticks_to_ns(mw__g.base_ticks - ticks); /* before calibration */
}
static inline uint64_t mw__global_ns(uint64_t ticks)
{
    return (uint64_t)((int64_t)mw__local_ns(ticks) + mw__g.offset_ns);
}
uint64_t mw__global_to_ticks(uint64_t global_ns);
uint64_t mw__monotonic_ns(void);
/* The global time now, read after everything before it is visible to every thread (a full
 * fence, and with the TSC an lfence, so that the clock is not read early): what the sender
 * thread uses to decide whether a window has started yet (capture.c, grid.c). */
uint64_t mw__fenced_now(void);

/* record.c: hot path */
mw_thread_t *mw__thread_attach(unsigned fn);
void mw__unrecorded_add(unsigned fn);
int mw__alloc(void);
/* Sets the window grid: length in ns and sub-slots per window (after the timer). */
void mw__grid_init(uint64_t window_ns, unsigned subslots);
/* The grid (slow paths only), on the published segments with proto/mw_grid.c's arithmetic:
 * the segment (index into grid[] and seg[]) of window k (k < 0: the first one) / of global
 * time g, window k's start and length, the window holding g, the first window starting at or
 * after g. */
unsigned mw__seg_of_index(int64_t k);
unsigned mw__seg_of_time(uint64_t g);
uint64_t mw__grid_start(int64_t k);
uint64_t mw__grid_len(int64_t k);
int64_t mw__grid_index(uint64_t g);
int64_t mw__grid_first_from(uint64_t g);
/* mpiwatch.window=MS@K (steer.c, on the sender thread): windows from K on are MS long, once
 * mw_grid_plan (proto/mw_grid.h) accepts the request. */
int mw__grid_request(const char *value);
/* Segment i's sub-slot length and multiplier, from grid[i]'s window length. */
void mw__seg_ticks(unsigned i);
void mw__grid_log(void);
/* Sub-slot of an offset (ticks) from the start of a window of segment sg, exact against its
 * sub_ticks boundaries. */
unsigned mw__sub_of(const mw_seg_t *sg, uint64_t off_ticks);
void mw__slot_reset(mw_slot_t *s);
static inline mw_thread_t *mw__thread(unsigned i)
{
    return (mw_thread_t *)(mw__g.arena + (size_t)i * mw__g.thread_bytes);
}
static inline mw_slot_t *mw__slot(mw_thread_t *t, uint64_t window)
{
    return (mw_slot_t *)((unsigned char *)t + ((sizeof(mw_thread_t) + 63u) & ~(size_t)63u) +
                         (size_t)(window & (MW_RING - 1)) * mw__g.slot_bytes);
}
static inline mw_call_t *mw__slot_longest(mw_slot_t *s)
{
    return (mw_call_t *)((unsigned char *)s + mw__g.slot_longest);
}
static inline mw_peer_t *mw__slot_peers(mw_slot_t *s)
{
    return (mw_peer_t *)((unsigned char *)s + mw__g.slot_peers);
}
static inline unsigned char *mw__slot_row(mw_slot_t *s, unsigned r)
{
    return (unsigned char *)s + mw__g.slot_rows + (size_t)r * mw__g.row_bytes;
}
/* A row: u32 fn, u32 pad, then occupancy (ticks per sub-slot, u64), then call density as u32
 * counts [sub-slot][bin]: `same` for calls that start and end in one sub-slot (the common
 * case costs one increment), `end_x` and `start_x` for the others, by end and by start;
 * start_x has 2n sub-slots, n..2n-1 being this window's and 0..n-1 the ones before it. */
static inline uint64_t *mw__row_occ(unsigned char *row)
{
    return (uint64_t *)(row + 8);
}
static inline uint32_t *mw__row_same(unsigned char *row)
{
    return (uint32_t *)(row + mw__g.row_same);
}
static inline uint32_t *mw__row_end_x(unsigned char *row)
{
    return (uint32_t *)(row + mw__g.row_end_x);
}
static inline uint32_t *mw__row_start_x(unsigned char *row)
{
    return (uint32_t *)(row + mw__g.row_start_x);
}
/* Derived views of a row (window.c). */
uint32_t mw__row_end(unsigned char *row, unsigned sub, unsigned bin);
uint32_t mw__row_start(unsigned char *row, unsigned idx, unsigned bin);
void mw__row_hist(unsigned char *row, uint32_t hist[MW_NBINS]);
static inline unsigned mw__bin(uint64_t ns)
{
    unsigned b = mw_bin_quarter(ns);
    return b < MW_NBINS ? b : MW_NBINS - 1;
}

/* The thread state to record a call of fn into, or NULL when this call must not be recorded:
 * the library is not recording, the thread is already inside a recorded call (an MPI
 * implementation or a Fortran binding calling MPI_X itself), which the in-progress marker
 * tells, or the thread is beyond max_threads (the call is then counted as unrecorded; fn 0:
 * not an MPI call, nothing counted). */
static inline __attribute__((always_inline)) mw_thread_t *mw__self_idle(unsigned fn);
static inline __attribute__((always_inline)) mw_thread_t *mw__self(unsigned fn)
{
    if (__builtin_expect(!atomic_load_explicit(&mw__g.recording, memory_order_relaxed), 0))
        return NULL;
    return mw__self_idle(fn);
}

/* The calling thread's block when it is not inside a wrapper already (attached on its first
 * call), else NULL: the part of mw__self() that dormant mode shares. */
static inline __attribute__((always_inline)) mw_thread_t *mw__self_idle(unsigned fn)
{
    mw_thread_t *t = mw__tls;
    if (__builtin_expect(t == NULL, 0))
        t = mw__thread_attach(fn);
    if (__builtin_expect(t == NULL || atomic_load_explicit(&t->inflight, memory_order_relaxed) != 0,
                         0))
        return NULL;
    return t;
}

/* Markers with function id 0, which tells the sender there is no time to account: inside an
 * untimed wrapper (nested calls are not recorded), and inside mw__record (the sender waits). */
#define MW_INFLIGHT_NESTED (1ull << MW_INFLIGHT_FN_BITS)
#define MW_INFLIGHT_BUSY (2ull << MW_INFLIGHT_FN_BITS)

/* Marks the thread as inside fn from t0 (read by the sender for occupancy of long calls). */
static inline __attribute__((always_inline)) uint64_t mw__begin(mw_thread_t *t, unsigned fn)
{
    uint64_t t0 = mw__now();
    atomic_store_explicit(&t->inflight, t0 << MW_INFLIGHT_FN_BITS | fn, memory_order_relaxed);
    /* Inlined into the wrapper, this reads the wrapper's own return address: the instruction
     * after the application's call (docs/callsites.md; tests/shim/callsites.sh checks it). */
    t->ra = (uint64_t)(uintptr_t)__builtin_return_address(0);
    return t0;
}

#include "record_fast.h"

/* ---- dormant mode (dormant.c, docs/shim.md "Dormant mode") ---------------------------------
 * While dormant, `recording` is 0 and a wrapper, after mw__self() said no, tests mw__g.dormant
 * and then keeps only the call's exact count and bytes in its thread's mw_thread_t.dorm: no
 * clock read, no slot, no histogram, site, region, trace or peer. The thread is marked as
 * inside a call (MW_INFLIGHT_NESTED, function 0: nothing for the sender to account) so that
 * MPI calls nested in it are not counted, as in full mode. */
static inline __attribute__((always_inline)) mw_thread_t *mw__dormant_enter(unsigned fn)
{
    mw_thread_t *t = mw__self_idle(fn);
    if (!t)
        return NULL;
    atomic_store_explicit(&t->inflight, MW_INFLIGHT_NESTED, memory_order_relaxed);
    return t;
}

static inline __attribute__((always_inline)) void mw__dormant_add(mw_thread_t *t, unsigned fn,
                                                                  uint64_t bytes)
{
    mw_dcount_t *c = &t->dorm[fn];
    atomic_store_explicit(&c->calls, atomic_load_explicit(&c->calls, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    if (bytes)
        atomic_store_explicit(&c->bytes,
                              atomic_load_explicit(&c->bytes, memory_order_relaxed) + bytes,
                              memory_order_relaxed);
}

static inline __attribute__((always_inline)) void mw__dormant_leave(mw_thread_t *t, unsigned fn,
                                                                    uint64_t bytes)
{
    atomic_store_explicit(&t->inflight, 0, memory_order_relaxed);
    mw__dormant_add(t, fn, bytes);
}

/* A counted query (or a call whose wrapper cannot bracket it) while dormant. */
static inline __attribute__((always_inline)) void mw__dormant_count(unsigned fn)
{
    mw_thread_t *t = mw__tls;
    if (__builtin_expect(t == NULL, 0))
        t = mw__thread_attach(fn);
    if (t && atomic_load_explicit(&t->inflight, memory_order_relaxed) == 0)
        mw__dormant_add(t, fn, 0);
}

/* The `!t` branch of a wrapper (mw__self() said no): while dormant, the call counted with the
 * bytes expression `by` (evaluated after a successful call, as in full mode); otherwise the
 * bare call. Returns from the wrapper. The thread is read again from its TLS word after the
 * call rather than kept: nothing but `by`'s arguments lives across the call, so the compiler
 * can keep the wrapper's register saves off the paths that do not record (shrink-wrapping). */
#define MW_UNRECORDED(fn, call, by)                                                                \
    do {                                                                                           \
        if (__builtin_expect(atomic_load_explicit(&mw__g.dormant, memory_order_relaxed), 0))       \
            MW_UNRECORDED_BODY(fn, call, by);                                                      \
        return call;                                                                               \
    } while (0)

/* The same, out of line: MW_DORMANT_DEF defines, before a wrapper, the function its `!t`
 * branch tail-calls while dormant (MW_DORMANT_CALL), so that the wrapper itself saves no
 * register on the paths that do not record in full (measured: bench/run-dormant.sh). params,
 * args: the wrapper's; call: PMPI_X args; by: the bytes, as above. */
#define MW_DORMANT_DEF(name, ret, params, call, by)                                                \
    static __attribute__((noinline)) ret mw__dormant_##name params                                 \
    {                                                                                              \
        MW_UNRECORDED_BODY(MW_ID_##name, call, by);                                                \
    }
#define MW_UNRECORDED_BODY(fn, call, by)                                                           \
    do {                                                                                           \
        if (mw__dormant_enter(fn)) {                                                               \
            __typeof__(call) mw_drc = call;                                                        \
            mw__dormant_leave(mw__tls, (fn), mw_drc == MPI_SUCCESS ? (uint64_t)(by) : 0);          \
            return mw_drc;                                                                         \
        }                                                                                          \
        return call;                                                                               \
    } while (0)
#define MW_DORMANT_CALL(name, args, call)                                                          \
    do {                                                                                           \
        if (__builtin_expect(atomic_load_explicit(&mw__g.dormant, memory_order_relaxed), 0))       \
            return mw__dormant_##name args;                                                        \
        return call;                                                                               \
    } while (0)

/* dormant.c: the sender thread's side. */
typedef struct {
    uint64_t calls[MW_FN_COUNT], bytes[MW_FN_COUNT];
} mw_dsum_t;
/* Sums every thread's dormant counts into *out (cumulative since MPI_Init). */
void mw__dormant_sum(mw_dsum_t *out);
/* Asks for dormant (1) or full (0) recording: effective at once in the wrappers. */
void mw__dormant_set(int on);
/* mpiwatch.mode=full|dormant (steer.c, on the sender thread): 0, or -1 for a bad value. */
int mw__dormant_steer(const char *value);
/* Spans kept (proto Dormant): more fold the two oldest together. */
#define MW_DORMANT_SPANS 16u
/* At MPI_Init, before the sender starts (global ns now): MPIWATCH_MODE=dormant. */
void mw__dormant_init(uint64_t now);
/* Sender thread: the connection to the collector went up or down; once per wake-up, the
 * automatic rule (MPIWATCH_DORMANT_AFTER); whether the rank is dormant; the totals and spans
 * for a sample or the bye (0: never dormant, nothing to send); the finalize log line. */
void mw__dormant_link(int up, uint64_t now);
void mw__dormant_tick(uint64_t now);
int mw__dormant_now(void);
int mw__dormant_wire(Mpiwatch__Dormant *d);
void mw__dormant_log(void);

static inline __attribute__((always_inline)) void mw__end(mw_thread_t *t, unsigned fn, uint64_t t0,
                                                          uint64_t bytes, int peer)
{
    uint64_t t1 = mw__now();
    mw__record(t, fn, t0, t1, bytes, peer);
}

/* Bytes and peers, evaluated after a successful call (args.c). */
uint64_t mw__bytes(MPI_Aint count, MPI_Datatype type);
uint64_t mw__bytes_ip(const void *sendbuf, int scount, MPI_Datatype stype, int rcount,
                      MPI_Datatype rtype);
uint64_t mw__bytes_v(const int counts[], MPI_Datatype type, MPI_Comm comm);
uint64_t mw__bytes_w(const int counts[], const MPI_Datatype types[], MPI_Comm comm);
uint64_t mw__bytes_n(int count, MPI_Datatype type, MPI_Comm comm);
int mw__peer(int rank, MPI_Comm comm);
uint64_t mw__fbytes(const void *buf, const MPI_Fint *count, const MPI_Fint *type);
int mw__fpeer(const MPI_Fint *rank, const MPI_Fint *comm);
void mw__comm_forget(MPI_Comm comm);

/* ---- time steps (steps.c, docs/steps.md) ---------------------------------------------------
 * A step mark snapshots, on the marking thread, that thread's totals in the slot a call ending
 * now would go to: its functions and peers so far in this window. The slot's owner is its
 * only writer, so the snapshot needs no lock; it costs one pass over the function and peer
 * tables per mark and nothing per call. The collector turns the snapshots into exact per-step
 * totals by difference with the window's totals. Marks are taken on one thread only: the one
 * that called MPI_Init. */
#define MW_STEP_MAX_MARKS 64u     /* marks one sample may carry (the collector's bound too) */
#define MW_STEP_POOL_PER_MARK 32u /* function and peer entries per mark in a slot's pools */
#define MW_DETECT_RING 2048u      /* recent function ids the period detector keeps */

enum { MW_STEP_NONE, MW_STEP_API, MW_STEP_EVERY, MW_STEP_LEARN, MW_STEP_ARMED };

typedef struct {
    uint64_t step;
    uint64_t end_ns; /* global time of the mark */
    uint32_t source; /* 1 mw_step(), 2 MPIWATCH_STEP, 3 detected */
    uint32_t folded; /* earlier marks of the window overwritten by this one (pools full) */
    uint32_t fn_first, fn_n, peer_first, peer_n; /* its entries in the pools */
} mw_mark_t;

typedef struct {
    uint32_t fn, pad;
    mw_fnstat_t s;
} mw_markfn_t;

_Static_assert(sizeof(mw_mark_t) == 40, "mark is a fixed-size record");
_Static_assert(sizeof(mw_markfn_t) == 48, "mark function entry is a fixed-size record");

typedef struct {
    unsigned marks, fn_pool, peer_pool;    /* per slot */
    size_t slot_marks, slot_fn, slot_peer; /* offsets in a slot */
    mw_thread_t *thread;                   /* the marking thread (MPI_Init's) */
    _Atomic int mode;                      /* MW_STEP_* */
    _Atomic unsigned fn, every;            /* the counted function and its N */
    uint64_t count;                        /* its calls so far (marking thread only) */
    int seen_armed;                        /* the marking thread saw MW_STEP_ARMED */
    _Atomic uint64_t lost;                 /* marks that could not be kept */
    _Atomic uint64_t seq_n;                /* detector: ids appended so far */
    _Atomic uint16_t seq[MW_DETECT_RING];
} mw_steps_t;

extern mw_steps_t mw__steps;
/* 1 for the functions whose wrapper calls mw__step_call(): the one of MPIWATCH_STEP=fn:N, or
 * every timed function while the detector learns. One byte load per timed call. */
extern uint8_t mw__step_watch[MW_FN_COUNT];
void mw__step_call(mw_thread_t *t, unsigned fn);
#define MW_STEP_HOOK(t, fn)                                                                        \
    do {                                                                                           \
        if (__builtin_expect(mw__step_watch[(fn)], 0))                                             \
            mw__step_call((t), (fn));                                                              \
    } while (0)
/* Lays out a slot's mark area at `offset`; returns its size (mw__alloc). */
size_t mw__steps_layout(size_t offset);
/* At init, on the MPI_Init thread: the marking thread and the MPIWATCH_STEP mode. */
void mw__steps_init(void);
/* mw_step(): a mark of source 1 on thread t. */
void mw__step_api(mw_thread_t *t, long step);
/* Takes a mark now on thread t (the marking thread). */
void mw__step_mark(mw_thread_t *t, uint64_t step, unsigned source);
/* The slot a call ending in the thread's cached window would be recorded in, claimed; NULL
 * when there is none (record.c). */
mw_slot_t *mw__slot_now(mw_thread_t *t, int64_t closed);
static inline mw_mark_t *mw__slot_marks(mw_slot_t *s)
{
    return (mw_mark_t *)((unsigned char *)s + mw__steps.slot_marks);
}
static inline mw_markfn_t *mw__slot_mark_fn(mw_slot_t *s)
{
    return (mw_markfn_t *)((unsigned char *)s + mw__steps.slot_fn);
}
static inline mw_peer_t *mw__slot_mark_peer(mw_slot_t *s)
{
    return (mw_peer_t *)((unsigned char *)s + mw__steps.slot_peer);
}
/* The marks of one window as the sender gathers them from the slots (window.c). Snapshots of
 * a later slot of the marking thread in the same collection (an earlier one left behind) get
 * the totals of the earlier ones added (`base`), so that every snapshot is cumulative within
 * the sample, which is what the collector's differences need. */
typedef struct {
    unsigned n;
    mw_mark_t mark[MW_STEP_MAX_MARKS];
    mw_markfn_t *fn;
    unsigned fn_n, fn_cap;
    uint32_t *peer_rank, *peer_fn;
    uint64_t *peer_messages, *peer_bytes;
    unsigned peer_n, peer_cap;
    int have_base;
    mw_fnstat_t *base_fn;        /* [MW_FN_COUNT] */
    int32_t *base_key;           /* peer entries (MW_PEER_KEY) of the base, base_np of base_cap */
    uint64_t *base_pm, *base_pb; /* their messages and bytes */
    unsigned base_np, base_cap;
} mw_acc_marks_t;
int mw__acc_marks_init(mw_acc_marks_t *m);
void mw__acc_marks_clear(mw_acc_marks_t *m);
/* Adds slot s of the marking thread: its marks (made cumulative), then its totals to the
 * base. Called before the slot is reset. */
void mw__acc_marks_merge(mw_acc_marks_t *m, mw_slot_t *s);
/* Sender thread, once per window: the period detector (MPIWATCH_STEP=auto). */
void mw__step_detect_tick(void);

/* The per-rank merge of all threads' slots for one window. */
typedef struct {
    mw_fnstat_t fn[MW_FN_COUNT];
    uint16_t row_of[MW_FN_COUNT];
    unsigned nrows, rows_cap;
    unsigned char *rows;
    mw_call_t *longest;
    unsigned nlong;
    /* Peer entries, one per (world rank, sending function), in first-seen order: the wire's
     * parallel arrays; peer_tab (open addressing, peer_tmask + 1 cells) holds index + 1 by
     * key. At most peer_cap entries (the threads' peer tables together); more are dropped. */
    uint64_t *peer_messages, *peer_bytes;
    uint32_t *peer_list, *peer_fn; /* world rank, function */
    int32_t *peer_key;
    uint32_t *peer_tab, peer_tmask;
    unsigned npeers, peer_cap;
    uint64_t dropped, late;
    uint64_t seen_calls_dropped, seen_threads_dropped; /* global counters already reported */
    mw_acc_marks_t marks;                              /* step marks of the window (steps.c) */
} acc_t;

int mw__acc_init(acc_t *a);
unsigned char *mw__acc_row(acc_t *a, unsigned fn);
void mw__acc_clear(acc_t *a);
/* Takes window k (and anything older still in a slot) from every thread into `acc`. */
void mw__collect(acc_t *acc, int64_t k);

/* ---- code regions (regions.c, docs/regions.md) ------------------------------------------- */
/* Lays out a slot's region area at `offset`; returns its size (mw__alloc). */
size_t mw__regions_layout(size_t offset);
/* At MPI_Init, after the arena: the region stacks and the MPIWATCH_REGIONS selection. */
void mw__regions_init(void);
void mw__regions_slot_reset(mw_slot_t *s);
/* Sender thread: adds a slot's regions to the window's (before the slot is reset); then fills
 * the sample's region fields and returns the first RegionDef index it carries (-1: none),
 * which mw__regions_defs_lost() takes back when the sample is dropped. */
void mw__regions_merge(mw_slot_t *s);
int64_t mw__regions_sample(Mpiwatch__Sample *smp);
void mw__regions_defs_lost(int64_t from);

/* ---- call sites (callsites.c, docs/callsites.md) ----------------------------------------- */
/* Lays out a slot's call-site table at `offset`; returns its size (mw__alloc). */
size_t mw__sites_layout(size_t offset);
/* A thread's call-site fields, when it is attached (mw__thread_attach). */
void mw__sites_thread(mw_thread_t *t);
void mw__sites_slot_reset(mw_slot_t *s);
/* Sender thread: adds a slot's table to the window's (before the slot is reset); then fills the
 * sample's site fields, numbering new sites at once and resolving them with libdw a bounded
 * number per sample (mw__sites_resolve_max sites, mw__sites_resolve_ns: tests lower them), and
 * returns a token of the CallSiteDefs it carries (-1: none), which mw__sites_defs_lost() takes
 * back when the sample is dropped. */
extern unsigned mw__sites_resolve_max;
extern uint64_t mw__sites_resolve_ns;
void mw__sites_merge(mw_slot_t *s);
int64_t mw__sites_sample(Mpiwatch__Sample *smp);
void mw__sites_defs_lost(int64_t token);
/* MPI_Finalize, before the last samples: they resolve every site left (within 0.5 s in all), so
 * that a short run's sites are complete too. */
void mw__sites_finish(void);
/* At MPI_Finalize, after the sender thread stopped: the tables and libdw's state. */
void mw__sites_close(void);

/* clocksync.c: collective over a private duplicate of MPI_COMM_WORLD. */
typedef struct {
    char job[64];
    uint64_t window_ns;
    uint32_t subslots;
} mw_jobinfo_t;
int mw__clocksync(MPI_Comm comm, int rounds, mw_jobinfo_t *info);

/* topology.c: placement and the node's hardware (docs/topology.md). */
#define MW_PLACE_MAX_PUS 1024u     /* PUs of a binding listed in the hello; more are cut */
#define MW_TOPO_MAX_OBJECTS 65536u /* a node with more objects reports no topology */
typedef struct {
    char host[256];
    char node[288]; /* the host, or "HOST-nK" for emulated node K (MPIWATCH_NODES) */
    char binding[256];
    char cpuset[128];
    int pu, core, package, l3, numa; /* -1 unknown */
    int bound;                       /* bound to fewer PUs than the node has */
    uint32_t pus[MW_PLACE_MAX_PUS];  /* OS indices: the binding, or the PU at init if unbound */
    unsigned npus;
    /* The node's hardware, ready for the hello; NULL unless this rank reports it. Allocated
     * once by mw__topology_place() and kept for the re-sent hellos. */
    Mpiwatch__NodeTopology *topology;
} mw_place_t;
/* Decides, inside MPI_Init, which node this rank is on and whether it is the rank that
 * reports the node's hardware. Collective over `comm` (a duplicate of MPI_COMM_WORLD) whatever
 * the settings, so that ranks with different environments cannot deadlock. */
void mw__topology_init(MPI_Comm comm, int rank, int size, unsigned emulated_nodes);
/* Fills `place` (hwloc; on the sender thread). Never fails: unknown fields stay -1/empty. */
void mw__topology_place(mw_place_t *place, int pu_at_init);

/* ---- steering (steer.c, docs/steering.md) --------------------------------------------------
 * The sender thread takes Steer messages from its SUB socket into a fixed SPSC ring and raises
 * mw__steer_pending; the MPI_Init thread's next recorded timed call (or mw_poll()) runs the
 * application's callback. One relaxed byte load per timed call while nothing is pending. */
extern _Atomic unsigned char mw__steer_pending;
void mw__steer_dispatch(mw_thread_t *t);
#define MW_STEER_HOOK(t)                                                                           \
    do {                                                                                           \
        if (__builtin_expect(atomic_load_explicit(&mw__steer_pending, memory_order_relaxed), 0))   \
            mw__steer_dispatch(t);                                                                 \
    } while (0)
/* Sender thread: the SUB socket on the sender's context (nothing without MPIWATCH_STEER), the
 * socket for zmq_poll (NULL when none), one non-blocking drain, and the close. */
void mw__steer_open(void *ctx, const char *job, const char *endpoint);
void *mw__steer_socket(void);
void mw__steer_drain(void);
/* One received Steer frame through mw__steer_drain()'s checks, without a socket (fuzz_steer). */
void mw__steer_take(const void *data, size_t len);
/* The values of built-in keys: a decimal number of 1..15 digits, no sign or blank; advances
 * *s past it. Returns 0, or -1 (nothing read). */
int mw__steer_number(const char **s, uint64_t *out);
void mw__steer_close(void);

/* ---- capture (capture.c, docs/steering.md) -------------------------------------------------
 * mpiwatch.capture=N[@K] makes every thread also write each timed call of windows
 * [first, first + n) into a per-thread, per-slot trace buffer. The range is one word, written
 * by the sender thread only. No check on the hot path: when a thread locates a captured
 * window (mw__window_locate, once per window) it leaves its cached slot empty, so the common
 * path's existing "no cached slot" test sends every call of that window to mw__record_slow,
 * which records it as usual and appends it to the trace. */
extern _Atomic uint64_t mw__capture_range; /* first << 16 | n; 0 when none */
#define MW_CAPTURE_N_BITS 16u
_Static_assert(MW_CAPTURE_MAX_WINDOWS < (1u << MW_CAPTURE_N_BITS), "n fits the range word");
static inline int mw__capture_has(int64_t w)
{
    uint64_t r = atomic_load_explicit(&mw__capture_range, memory_order_acquire);
    uint64_t n = r & ((1u << MW_CAPTURE_N_BITS) - 1);
    return (uint64_t)w - (r >> MW_CAPTURE_N_BITS) < n;
}
/* Appends one call to the trace of slot s (the thread's own), or counts it as lost. */
void mw__capture_add(mw_thread_t *t, mw_slot_t *s, unsigned fn, uint64_t t0, uint64_t d,
                     uint64_t bytes, int peer);
/* Sender thread: applies the value of mpiwatch.capture ("N" or "N@K"). Returns 0, or -1 when
 * it is refused (bad value, a capture still running, no memory); counted either way. */
int mw__capture_request(const char *value);
/* Sender thread, collecting window k: takes slot s's trace (thread t) into the sample's
 * trace when k is captured, else discards it; resets the slot's trace counters. */
void mw__capture_take(mw_thread_t *t, mw_slot_t *s, int64_t k);
/* The trace gathered for window k so far: whether k is captured, its request, its calls as
 * the wire's parallel arrays (start relative to the window's start, global ns) and drops. */
typedef struct {
    int captured;
    uint64_t first;
    uint32_t windows, skipped;
    uint64_t dropped;
    uint32_t n;
    uint32_t *fn;
    int64_t *start;
    uint64_t *dur, *bytes;
    int32_t *peer;
} mw_capture_view_t;
void mw__capture_view(int64_t k, mw_capture_view_t *v);
/* Forgets the trace gathered for window k (after its sample is sent). */
void mw__capture_clear(int64_t k);
/* Counters for MPIWATCH_VERBOSE at finalize. */
void mw__capture_log(void);

/* sender.c */
typedef struct {
    mw_jobinfo_t job;
    char mpi_library[256];
    char program[128];
    int thread_level;
    int pu; /* sched_getcpu() on the application thread in MPI_Init */
} mw_hello_info_t;
int mw__sender_start(const mw_hello_info_t *info);
void mw__sender_stop(void);

/* curve.c (docs/security.md): reads MPIWATCH_CURVE_SERVER / MPIWATCH_CURVE_KEY once; -1 (logged)
 * when they are set but unusable. Then makes a socket a CURVE client before zmq_connect: 0, or
 * -1 when CURVE was refused (the socket must not connect). */
int mw__curve_load(void);
int mw__curve_client(void *sock);
/* Sender thread, when it switches to the fallback: from then on mw__curve_client applies the
 * fallback's keys (MPIWATCH_CURVE_SERVER_FALLBACK, else the same). -1 when the fallback's key
 * file was refused (logged at load): the sender then stays where it is. */
int mw__curve_use_fallback(void);

/* special.c */
void mw__set_state(int active, int paused); /* -1 leaves a flag as it is */
int mw__init_common(int thread_level);
void mw__finalize_common(void);

/* Diagnostics: only at init and finalize, only with MPIWATCH_VERBOSE, to stderr. */
void mw__log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
