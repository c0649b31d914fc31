/* sender.c: the one thread per rank that owns the ZeroMQ socket.
 *
 * DESIGN: the thread sleeps until window k is over (plus a small grace, so calls that ended
 * in k have been recorded), collects k from every recording thread into one per-rank
 * accumulator (window.c), encodes it with protobuf-c into a
 * buffer allocated at start, and sends it with ZMQ_DONTWAIT on a PUSH socket with a small
 * high-water mark and ZMQ_IMMEDIATE: when the collector is absent, slow or gone the send fails
 * at once, the sample is dropped and counted, and the count travels in the next sample that
 * gets through. A sample is sent every window, empty or not, so the collector can tell a quiet
 * rank from a dead one. The hello is re-sent whenever the socket (re)connects, so a collector
 * started late or restarted still learns who this rank is. All signals are blocked in this
 * thread (and so in ZeroMQ's I/O thread, created from it): the application's signals keep
 * going to the application's threads. With MPIWATCH_STEER the thread also owns a SUB socket
 * (steer.c), waits on it with zmq_poll instead of sleeping, and drains it on every wake-up.
 * A captured window's sample also carries its per-call trace (capture.c, Sample.capture).
 * With tracing on, each window's records are drained from the threads' rings into the flight
 * recorder as it is collected, and the sample carries them when the job's plan wants them
 * (trace_send.c, Sample.trace); windows a capture reaches back to go as Envelope.trace.
 *
 * Every sample also carries the rank's running totals since MPI_Init (per function ever
 * called: calls, ns, bytes; and the samples produced), and so does the bye. They are summed
 * here, once per window from the accumulator that is being encoded, never in the wrappers, so
 * the hot path is unchanged and the totals equal the sum of every sample produced, sent or
 * dropped. A collector that missed samples (it restarted, started late, or the queue was full)
 * reports the difference as missed (docs/collector.md, "Loss accounting").
 *
 * With MPIWATCH_COLLECTOR_FALLBACK (docs/shim.md, "Fallback to the root") the thread also
 * watches how long its link has been down (the monitor said disconnected or retrying, and not
 * connected since; a link never up counts from the start): after MPIWATCH_FALLBACK_AFTER
 * seconds it closes the PUSH socket (what ZeroMQ had already taken for the dead peer is lost,
 * and shows up as missed through the running totals), opens one to the fallback, and moves
 * steering to MPIWATCH_STEER_FALLBACK; its own backlog, never handed to ZeroMQ, goes to the
 * fallback after the hello. It happens once, on this thread, never on the application's.
 */
#include "mw_zmq_monitor.h"
#include "shim.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#define MW_BACKLOG 64
#define STEER_WAIT_NS                                                                              \
    20000000ull /* with steering, MPI_Finalize waits at most this for the thread */
#define MW_BACKLOG_BYTES (4u << 20)
/* Windows the sender may emit in one catch-up (after a starved stretch, or at MPI_Finalize):
 * the present is normally at most a window or two ahead of it, and nothing it receives can
 * make it encode more than this at once (docs/shim.md, "Window length"). */
#define MW_CATCHUP_MAX 1000
/* Windows left out by catch_up(): counted as dropped samples (samples_dropped_total) and as
 * samples produced (samples_total, Bye.windows_sent), so the collector knows it missed them. */
static uint64_t catchup_skipped;
enum { LINK_CONNECTING, LINK_UP, LINK_DOWN };

/* Preallocated protobuf-c message storage. */
typedef struct {
    Mpiwatch__FunctionStat fs[MW_FN_COUNT];
    uint32_t hist[MW_FN_COUNT][MW_NBINS];
    Mpiwatch__FunctionStat *fsp[MW_FN_COUNT];
    uint32_t *occ_fn, *occ_sub;
    uint64_t *occ_ns;
    size_t occ_cap;
    uint32_t *d_fn, *d_bin, *d_end;
    int32_t *d_sub;
    uint64_t *d_count;
    size_t d_cap;
    Mpiwatch__Call *calls;
    Mpiwatch__Call **callp;
    uint8_t *buf;
    size_t buf_cap;
} enc_t;

static struct {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int stop;
    int started;
    mw_hello_info_t info;
    void *ctx, *push, *monitor;
    int hello_pending;
    int link;               /* LINK_*: what the socket monitor last said */
    unsigned monitors;      /* monitor endpoints made (names them uniquely) */
    uint64_t down_since_ns; /* monotonic time the link was last seen not up; 0: it is up */
    int on_fallback;        /* 1 switched to the fallback, -1 the fallback was refused */
    uint64_t retry_ns;      /* wait between send retries while something is pending */
    /* Messages that could not be sent yet, oldest first: sent before anything newer once the
     * collector takes them, dropped oldest-first (and counted) beyond MW_BACKLOG entries or
     * MW_BACKLOG_BYTES. */
    zmq_msg_t backlog[MW_BACKLOG];
    /* per entry: a sample or bye (a drop is a dropped sample) or a reach-back trace, and the
     * first communicator definition it carries (-1 none: sent again when it is dropped) */
    uint8_t bl_trace[MW_BACKLOG];
    int64_t bl_comm[MW_BACKLOG];
    /* the same for the region definitions (regions.c): the message being sent, then per entry */
    int64_t region_from;
    int64_t bl_region[MW_BACKLOG];
    /* the same for the call-site definitions (callsites.c) */
    int64_t site_from;
    int64_t bl_site[MW_BACKLOG];
    uint64_t traces_dropped; /* reach-back traces that could not be sent */
    unsigned bl_head, bl_count;
    size_t bl_bytes;
    uint64_t seq;
    uint64_t samples_dropped_total, records_dropped_total, calls_total, windows_sent;
    /* Running totals by function id, and the ids ever called in increasing order: the
     * parallel packed arrays of Sample.total_* and Bye.total_* (only functions ever called). */
    uint64_t tot_calls[MW_FN_COUNT], tot_ns[MW_FN_COUNT], tot_bytes[MW_FN_COUNT];
    uint32_t tot_fn[MW_FN_COUNT];
    uint64_t tot_w_calls[MW_FN_COUNT], tot_w_ns[MW_FN_COUNT], tot_w_bytes[MW_FN_COUNT];
    unsigned tot_n;
    int tot_new; /* a function was called for the first time: rebuild the id list */
    uint64_t unrec_seen[MW_FN_COUNT], unrec_seen_total; /* mw__g.unrecorded already added */
    int64_t next;                                       /* next window to collect */
    acc_t acc;
    enc_t enc;
} S = {.lock = PTHREAD_MUTEX_INITIALIZER, .region_from = -1, .site_from = -1};

static int alloc_buffers(void)
{
    const mw_config_t *c = &mw__g.cfg;
    acc_t *a = &S.acc;
    enc_t *e = &S.enc;
    if (mw__acc_init(a) != 0)
        return -1;
    e->occ_cap = (size_t)a->rows_cap * c->subslots;
    e->occ_fn = calloc(e->occ_cap, sizeof(uint32_t));
    e->occ_sub = calloc(e->occ_cap, sizeof(uint32_t));
    e->occ_ns = calloc(e->occ_cap, sizeof(uint64_t));
    e->d_cap = (size_t)a->rows_cap * 3u * c->subslots * MW_NBINS;
    e->d_fn = calloc(e->d_cap, sizeof(uint32_t));
    e->d_bin = calloc(e->d_cap, sizeof(uint32_t));
    e->d_end = calloc(e->d_cap, sizeof(uint32_t));
    e->d_sub = calloc(e->d_cap, sizeof(int32_t));
    e->d_count = calloc(e->d_cap, sizeof(uint64_t));
    e->calls = calloc(c->longest, sizeof *e->calls);
    e->callp = calloc(c->longest, sizeof *e->callp);
    e->buf_cap = MW_MAX_MESSAGE_BYTES;
    e->buf = malloc(e->buf_cap);
    if (!e->occ_fn || !e->occ_sub || !e->occ_ns || !e->d_fn || !e->d_bin || !e->d_end ||
        !e->d_sub || !e->d_count || !e->calls || !e->callp || !e->buf)
        return -1;
    return 0;
}

/* Fills in the envelope and encodes it into the send buffer; returns its length, 0 if it
 * does not fit. */
static size_t encode(Mpiwatch__Envelope *env)
{
    env->version = MW_PROTO_VERSION;
    env->job = S.info.job.job;
    env->rank = (uint32_t)mw__g.rank;
    env->seq = S.seq++;
    size_t len = mpiwatch__envelope__get_packed_size(env);
    if (len > S.enc.buf_cap)
        return 0;
    return mpiwatch__envelope__pack(env, S.enc.buf);
}

/* A message that will not be sent: a dropped sample (or bye), or a dropped reach-back trace;
 * the communicator definitions it carried go again with the next sample. */
static void dropped(int trace, int64_t comm_from, int64_t region_from, int64_t site_from)
{
    mw__regions_defs_lost(region_from);
    mw__sites_defs_lost(site_from);
    if (trace)
        S.traces_dropped++;
    else
        S.samples_dropped_total++;
    if (comm_from >= 0)
        mw__trace_comms_lost((unsigned)comm_from);
}

static void backlog_drop_oldest(void)
{
    zmq_msg_t *m = &S.backlog[S.bl_head];
    S.bl_bytes -= zmq_msg_size(m);
    zmq_msg_close(m);
    dropped(S.bl_trace[S.bl_head], S.bl_comm[S.bl_head], S.bl_region[S.bl_head],
            S.bl_site[S.bl_head]);
    S.bl_head = (S.bl_head + 1) % MW_BACKLOG;
    S.bl_count--;
}

static void backlog_push(const void *data, size_t len, int trace, int64_t comm_from)
{
    if (len > MW_BACKLOG_BYTES) {
        dropped(trace, comm_from, S.region_from, S.site_from);
        return;
    }
    while (S.bl_count == MW_BACKLOG || S.bl_bytes + len > MW_BACKLOG_BYTES)
        backlog_drop_oldest();
    unsigned at = (S.bl_head + S.bl_count) % MW_BACKLOG;
    zmq_msg_t *m = &S.backlog[at];
    if (zmq_msg_init_size(m, len) != 0) {
        dropped(trace, comm_from, S.region_from, S.site_from);
        return;
    }
    memcpy(zmq_msg_data(m), data, len);
    S.bl_trace[at] = (uint8_t)trace;
    S.bl_comm[at] = comm_from;
    S.bl_region[at] = S.region_from;
    S.bl_site[at] = S.site_from;
    S.bl_count++;
    S.bl_bytes += len;
}

/* Sends what the backlog holds, oldest first, until the socket would block. */
static void backlog_flush(void)
{
    while (S.bl_count && S.push) {
        zmq_msg_t *m = &S.backlog[S.bl_head];
        size_t len = zmq_msg_size(m);
        if (zmq_msg_send(m, S.push, ZMQ_DONTWAIT) < 0)
            return;
        zmq_msg_close(m);
        S.bl_bytes -= len;
        S.bl_head = (S.bl_head + 1) % MW_BACKLOG;
        S.bl_count--;
    }
}

/* Sends a sample, bye or trace now if nothing is waiting before it, otherwise queues it.
 * comm_from: the first communicator definition the message carries, -1 none. */
static void send_or_queue(Mpiwatch__Envelope *env, int trace, int64_t comm_from)
{
    size_t len = encode(env);
    if (len == 0) {
        dropped(trace, comm_from, S.region_from, S.site_from);
        return;
    }
    if (!S.hello_pending && S.bl_count == 0 && S.push &&
        zmq_send(S.push, S.enc.buf, len, ZMQ_DONTWAIT) >= 0)
        return;
    backlog_push(S.enc.buf, len, trace, comm_from);
}

/* Sends the flight-recorder windows a capture reached back to (trace_send.c). */
static void send_reach_back(void)
{
    Mpiwatch__Trace tr;
    while (mw__trace_reach_next(&tr)) {
        Mpiwatch__Envelope env = MPIWATCH__ENVELOPE__INIT;
        env.body_case = MPIWATCH__ENVELOPE__BODY_TRACE;
        env.trace = &tr;
        send_or_queue(&env, 1, -1);
    }
}

static void send_hello(void)
{
    static mw_place_t place;
    static int placed;
    if (!placed) {
        mw__topology_place(&place, S.info.pu);
        placed = 1;
    }
    Mpiwatch__Hello h = MPIWATCH__HELLO__INIT;
    h.size = (uint32_t)mw__g.size;
    h.host = place.host;
    h.pid = (uint32_t)getpid();
    h.binding = place.binding;
    h.cpuset = place.cpuset;
    h.pu = place.pu;
    h.core = place.core;
    h.package = place.package;
    h.node = place.node;
    h.l3 = place.l3;
    h.numa = place.numa;
    h.bound = place.bound;
    h.n_pus = place.npus;
    h.pus = place.pus;
    h.topology = place.topology; /* NULL except on the rank that reports the node */
    h.mpi_library = S.info.mpi_library;
    h.clock_offset_ns = mw__g.offset_ns;
    h.clock_error_ns = mw__g.clock_error_ns;
    h.window_ns = mw__g.window_ns;
    h.subslots = mw__g.cfg.subslots;
    h.duration_bins = MW_NBINS;
    /* The table by name (docs/function-table.md): the collector maps our ids to its own. */
    mw_hello_set_table(&h);
    h.timer = mw__g.use_tsc ? "tsc" : "clock_gettime";
    h.start_ns = mw__global_ns(mw__now());
    h.program = S.info.program;
    h.thread_level = S.info.thread_level;
    Mpiwatch__Envelope env = MPIWATCH__ENVELOPE__INIT;
    env.body_case = MPIWATCH__ENVELOPE__BODY_HELLO;
    env.hello = &h;
    size_t len = encode(&env);
    if (len && S.push && zmq_send(S.push, S.enc.buf, len, ZMQ_DONTWAIT) >= 0)
        S.hello_pending = 0;
}

/* Storage of the sample's step marks (docs/steps.md), allocated at the first mark. */
static struct {
    Mpiwatch__StepMark mark[MW_STEP_MAX_MARKS];
    Mpiwatch__StepMark *markp[MW_STEP_MAX_MARKS];
    Mpiwatch__FunctionStat *fs;
    Mpiwatch__FunctionStat **fsp;
} SE;

/* Points the sample at the window's step marks: each one's totals of the marking thread in
 * this window up to the mark (no histograms: the collector only takes differences). */
static void sample_steps(Mpiwatch__Sample *smp, const mw_acc_marks_t *m)
{
    if (!m->n)
        return;
    if (!SE.fs) {
        SE.fs = calloc(m->fn_cap, sizeof *SE.fs);
        SE.fsp = calloc(m->fn_cap, sizeof *SE.fsp);
        if (!SE.fs || !SE.fsp) {
            free(SE.fs);
            free(SE.fsp);
            SE.fs = NULL;
            SE.fsp = NULL;
            atomic_fetch_add(&mw__steps.lost, m->n);
            return;
        }
    }
    for (unsigned i = 0; i < m->n; i++) {
        const mw_mark_t *x = &m->mark[i];
        Mpiwatch__StepMark *sm = &SE.mark[i];
        mpiwatch__step_mark__init(sm);
        sm->step = x->step;
        sm->end_ns = x->end_ns;
        sm->source = x->source;
        sm->folded = x->folded;
        for (unsigned j = x->fn_first; j < x->fn_first + x->fn_n; j++) {
            const mw_markfn_t *e = &m->fn[j];
            Mpiwatch__FunctionStat *fs = &SE.fs[j];
            mpiwatch__function_stat__init(fs);
            fs->fn = e->fn;
            fs->count = e->s.count;
            fs->total_ns = e->s.total_ns;
            fs->min_ns = mw__fn_min(&e->s);
            fs->max_ns = e->s.max_ns;
            fs->bytes = e->s.bytes;
            SE.fsp[j] = fs;
        }
        sm->n_functions = x->fn_n;
        sm->functions = SE.fsp + x->fn_first;
        sm->n_peer_rank = sm->n_peer_messages = sm->n_peer_bytes = sm->n_peer_fn = x->peer_n;
        sm->peer_rank = m->peer_rank + x->peer_first;
        sm->peer_fn = m->peer_fn + x->peer_first;
        sm->peer_messages = m->peer_messages + x->peer_first;
        sm->peer_bytes = m->peer_bytes + x->peer_first;
        SE.markp[i] = sm;
    }
    smp->n_steps = m->n;
    smp->steps = SE.markp;
}

/* Points the sample at window k's trace when k is captured (capture.c), even without calls.
 * A trace too large for one message keeps its first part and counts the rest as dropped,
 * rather than losing the window (MW_CAPTURE_MAX_CALLS keeps this from happening with the
 * default settings: see docs/steering.md). */
static void sample_capture(Mpiwatch__Sample *smp, Mpiwatch__Capture *cap, int64_t k)
{
    mw_capture_view_t v;
    mw__capture_view(k, &v);
    if (!v.captured)
        return;
    cap->first = v.first;
    cap->windows = v.windows;
    cap->skipped = v.skipped;
    cap->dropped = v.dropped;
    cap->n_fn = cap->n_start = cap->n_duration_ns = cap->n_bytes = cap->n_peer = v.n;
    cap->fn = v.fn;
    cap->start = v.start;
    cap->duration_ns = v.dur;
    cap->bytes = v.bytes;
    cap->peer = v.peer;
    smp->capture = cap;
    /* Room for the envelope around the sample: the job name and a few varints. */
    while (cap->n_fn && mpiwatch__sample__get_packed_size(smp) + 256 > S.enc.buf_cap) {
        size_t keep = cap->n_fn / 2;
        cap->dropped += cap->n_fn - keep;
        cap->n_fn = cap->n_start = cap->n_duration_ns = cap->n_bytes = cap->n_peer = keep;
    }
}

/* Adds one window's totals of function f to the running totals. */
static void totals_add(unsigned f, const mw_fnstat_t *x)
{
    if (!S.tot_calls[f])
        S.tot_new = 1;
    S.tot_calls[f] += x->count;
    S.tot_ns[f] += x->total_ns;
    S.tot_bytes[f] += x->bytes;
}

/* Adds the calls the threads made but could not record (shim.h, mw__g.unrecorded) to the
 * running totals, as calls without time or bytes (neither was measured), so that a collector
 * reports them as missed. The array is scanned only when its total moved. */
static void totals_unrecorded(void)
{
    uint64_t all = atomic_load_explicit(&mw__g.unrecorded_total, memory_order_acquire);
    if (all == S.unrec_seen_total)
        return;
    S.unrec_seen_total = all;
    for (unsigned f = 1; f < MW_FN_COUNT; f++) {
        uint64_t n = atomic_load_explicit(&mw__g.unrecorded[f], memory_order_relaxed);
        if (n == S.unrec_seen[f])
            continue;
        if (!S.tot_calls[f])
            S.tot_new = 1;
        S.tot_calls[f] += n - S.unrec_seen[f];
        S.unrec_seen[f] = n;
    }
}

/* The running totals as the wire's parallel arrays (ids increasing); returns how many. The
 * id list is rebuilt only when a function was called for the first time. */
static unsigned totals_wire(void)
{
    totals_unrecorded();
    if (S.tot_new) {
        S.tot_n = 0;
        for (unsigned f = 1; f < MW_FN_COUNT; f++)
            if (S.tot_calls[f])
                S.tot_fn[S.tot_n++] = f;
        S.tot_new = 0;
    }
    for (unsigned i = 0; i < S.tot_n; i++) {
        unsigned f = S.tot_fn[i];
        S.tot_w_calls[i] = S.tot_calls[f];
        S.tot_w_ns[i] = S.tot_ns[f];
        S.tot_w_bytes[i] = S.tot_bytes[f];
    }
    return S.tot_n;
}

/* Encodes the accumulator as window k's sample and sends it. */
static void send_sample(int64_t k)
{
    acc_t *a = &S.acc;
    enc_t *e = &S.enc;
    Mpiwatch__Sample smp = MPIWATCH__SAMPLE__INIT;
    smp.window = (uint64_t)k;
    smp.window_ns = mw__grid_len(k);
    smp.window_start_ns = mw__grid_start(k);
    size_t nf = 0;
    uint64_t timed = 0; /* the calls a traced window must hold (counted-only ones never are) */
    for (unsigned f = 1; f < MW_FN_COUNT; f++) {
        const mw_fnstat_t *x = &a->fn[f];
        if (!x->count)
            continue;
        if (mw_fn_timed(f))
            timed += x->count;
        Mpiwatch__FunctionStat *fs = &e->fs[nf];
        mpiwatch__function_stat__init(fs);
        fs->fn = f;
        fs->count = x->count;
        fs->total_ns = x->total_ns;
        fs->min_ns = mw__fn_min(x);
        fs->max_ns = x->max_ns;
        fs->bytes = x->bytes;
        S.calls_total += x->count;
        totals_add(f, x);
        if (a->row_of[f]) {
            uint32_t *h = e->hist[f];
            mw__row_hist(a->rows + (size_t)(a->row_of[f] - 1) * mw__g.row_bytes, h);
            unsigned lo = 0, hi = MW_NBINS;
            while (lo < hi && h[lo] == 0)
                lo++;
            while (hi > lo && h[hi - 1] == 0)
                hi--;
            fs->hist_first = lo;
            fs->n_hist = hi - lo;
            fs->hist = h + lo;
        }
        e->fsp[nf++] = fs;
    }
    smp.n_functions = nf;
    smp.functions = e->fsp;
    mw__trace_collect(k, timed);
    /* One entry per (peer, sending function) (docs/shim.md). */
    smp.n_peer_rank = smp.n_peer_messages = smp.n_peer_bytes = smp.n_peer_fn = a->npeers;
    smp.peer_rank = a->peer_list;
    smp.peer_fn = a->peer_fn;
    smp.peer_messages = a->peer_messages;
    smp.peer_bytes = a->peer_bytes;
    size_t no = 0, nd = 0;
    unsigned ns = mw__g.cfg.subslots;
    for (unsigned r = 0; r < a->nrows; r++) {
        unsigned char *row = a->rows + (size_t)r * mw__g.row_bytes;
        uint32_t fn = *(uint32_t *)row;
        uint64_t *occ = mw__row_occ(row);
        for (unsigned sub = 0; sub < ns; sub++) {
            if (!occ[sub] || no >= e->occ_cap)
                continue;
            e->occ_fn[no] = fn;
            e->occ_sub[no] = sub;
            e->occ_ns[no++] = mw__ticks_to_ns(occ[sub]);
        }
        for (unsigned idx = 0; idx < 3 * ns; idx++) {
            /* idx < ns: by end, sub-slot idx; then by start, sub-slots -ns .. ns-1 */
            int end = idx < ns;
            int32_t sub = end ? (int32_t)idx : (int32_t)(idx - ns) - (int32_t)ns;
            for (unsigned b = 0; b < MW_NBINS; b++) {
                uint32_t c = end ? mw__row_end(row, idx, b) : mw__row_start(row, idx - ns, b);
                if (!c || nd >= e->d_cap)
                    continue;
                e->d_fn[nd] = fn;
                e->d_sub[nd] = sub;
                e->d_bin[nd] = b;
                e->d_end[nd] = (uint32_t)end;
                e->d_count[nd++] = c;
            }
        }
    }
    smp.n_occ_fn = smp.n_occ_sub = smp.n_occ_ns = no;
    smp.occ_fn = e->occ_fn;
    smp.occ_sub = e->occ_sub;
    smp.occ_ns = e->occ_ns;
    smp.n_density_fn = smp.n_density_sub = smp.n_density_bin = smp.n_density_end =
        smp.n_density_count = nd;
    smp.density_fn = e->d_fn;
    smp.density_sub = e->d_sub;
    smp.density_bin = e->d_bin;
    smp.density_end = e->d_end;
    smp.density_count = e->d_count;
    for (unsigned i = 0; i < a->nlong; i++) {
        Mpiwatch__Call *c = &e->calls[i];
        mpiwatch__call__init(c);
        c->fn = a->longest[i].fn;
        c->start_ns = a->longest[i].start_ns;
        c->duration_ns = a->longest[i].duration_ns;
        c->bytes = a->longest[i].bytes;
        c->peer = a->longest[i].peer;
        e->callp[i] = c;
    }
    smp.n_longest = a->nlong;
    smp.longest = e->callp;
    smp.records_dropped = a->dropped;
    smp.calls_late = a->late;
    smp.samples_dropped_total = S.samples_dropped_total;
    smp.n_total_fn = smp.n_total_calls = smp.n_total_ns = smp.n_total_bytes = totals_wire();
    smp.total_fn = S.tot_fn;
    smp.total_calls = S.tot_w_calls;
    smp.total_ns = S.tot_w_ns;
    smp.total_bytes = S.tot_w_bytes;
    /* Produced = sent or queued or dropped (windows_sent) plus the windows catch_up() skipped,
     * which are dropped samples too: missed.samples must count them (docs/collector.md). */
    smp.samples_total = S.windows_sent + catchup_skipped + 1; /* this one included */
    smp.sent_ns = mw__global_ns(mw__now());
    S.records_dropped_total += a->dropped;
    sample_steps(&smp, &a->marks);
    Mpiwatch__Dormant dm = MPIWATCH__DORMANT__INIT;
    if (mw__dormant_wire(&dm)) /* once the rank has been dormant (dormant.c) */
        smp.dormant = &dm;
    S.region_from = mw__regions_sample(&smp); /* code regions (regions.c) */
    S.site_from = mw__sites_sample(&smp);     /* call sites (callsites.c) */
    Mpiwatch__Capture cap = MPIWATCH__CAPTURE__INIT;
    sample_capture(&smp, &cap, k);
    /* Tracing (trace_send.c): the window's records or its summary-only mark, and the
     * communicators created since the last sample that got out. */
    Mpiwatch__Trace tr;
    int64_t comm_from = -1;
    if (mw__trace_sample(k, timed, &tr)) {
        smp.trace = &tr;
        unsigned from, upto;
        smp.n_comms = mw__trace_comms(&smp.comms, &from, &upto);
        if (smp.n_comms) {
            comm_from = from;
            mw__trace_comms_sent(upto);
        }
        if (tr.records.len && mpiwatch__sample__get_packed_size(&smp) + 256 > S.enc.buf_cap)
            mw__trace_unsent(&tr, timed);
    }

    Mpiwatch__Envelope env = MPIWATCH__ENVELOPE__INIT;
    env.body_case = MPIWATCH__ENVELOPE__BODY_SAMPLE;
    env.sample = &smp;
    send_or_queue(&env, 0, comm_from);
    S.region_from = -1;
    S.site_from = -1;
    S.windows_sent++;
    mw__capture_clear(k);
    mw__acc_clear(a);
    mw__step_detect_tick();
}

static void send_bye(void)
{
    Mpiwatch__Bye b = MPIWATCH__BYE__INIT;
    b.windows_sent = S.windows_sent + catchup_skipped; /* the samples produced, as above */
    b.samples_dropped_total = S.samples_dropped_total;
    b.records_dropped_total = S.records_dropped_total;
    b.calls_total = S.calls_total;
    b.n_total_fn = b.n_total_calls = b.n_total_ns = b.n_total_bytes = totals_wire();
    b.total_fn = S.tot_fn;
    b.total_calls = S.tot_w_calls;
    b.total_ns = S.tot_w_ns;
    b.total_bytes = S.tot_w_bytes;
    Mpiwatch__Dormant dm = MPIWATCH__DORMANT__INIT;
    if (mw__dormant_wire(&dm)) /* the final dormant totals (dormant.c) */
        b.dormant = &dm;
    Mpiwatch__Envelope env = MPIWATCH__ENVELOPE__INIT;
    env.body_case = MPIWATCH__ENVELOPE__BODY_BYE;
    env.bye = &b;
    send_or_queue(&env, 0, -1);
}

/* Reads socket events without waiting: every (re)connection gets a fresh hello. */
static void poll_monitor(void)
{
    if (!S.monitor)
        return;
    uint16_t event;
    uint32_t value;
    while (mw_zmq_monitor_event(S.monitor, &event, &value)) {
        if (event == ZMQ_EVENT_CONNECTED) {
            S.hello_pending = 1; /* maybe a new collector: it must hear who we are first */
            S.link = LINK_UP;
            S.retry_ns = 0;
            S.down_since_ns = 0;
            mw__dormant_link(1, mw__global_ns(mw__now())); /* a dormant rank wakes up */
        } else if (event == ZMQ_EVENT_DISCONNECTED || event == ZMQ_EVENT_CONNECT_RETRIED) {
            S.link = LINK_DOWN;
            if (!S.down_since_ns)
                S.down_since_ns = mw__monotonic_ns();
            mw__dormant_link(0, mw__global_ns(mw__now()));
        } else if (event == ZMQ_EVENT_CONNECT_DELAYED && S.link != LINK_UP) {
            S.link = LINK_CONNECTING;
        }
    }
}

/* Makes the PUSH socket and its monitor and connects it to `endpoint` (S.push NULL when that
 * fails, logged: then every sample is dropped and counted, as with an absent collector). */
static void push_open(const char *endpoint)
{
    S.push = zmq_socket(S.ctx, ZMQ_PUSH);
    if (!S.push)
        return;
    S.link = LINK_CONNECTING;
    S.down_since_ns = mw__monotonic_ns(); /* not up until the monitor says connected */
    int hwm = (int)mw__g.cfg.sndhwm, one = 1, zero = 0;
    zmq_setsockopt(S.push, ZMQ_SNDHWM, &hwm, sizeof hwm);
    zmq_setsockopt(S.push, ZMQ_IMMEDIATE, &one, sizeof one);
    zmq_setsockopt(S.push, ZMQ_LINGER, &zero, sizeof zero);
    char ep[80];
    snprintf(ep, sizeof ep, "inproc://mpiwatch-monitor-%ld-%u", (long)getpid(), S.monitors++);
    if (zmq_socket_monitor(S.push, ep,
                           ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED |
                               ZMQ_EVENT_CONNECT_RETRIED | ZMQ_EVENT_CONNECT_DELAYED) == 0) {
        S.monitor = zmq_socket(S.ctx, ZMQ_PAIR);
        if (S.monitor) {
            zmq_setsockopt(S.monitor, ZMQ_LINGER, &zero, sizeof zero);
            if (zmq_connect(S.monitor, ep) != 0) {
                zmq_close(S.monitor);
                S.monitor = NULL;
            }
        }
    }
    if (mw__curve_client(S.push) != 0 || zmq_connect(S.push, endpoint) != 0) {
        mw__log("cannot connect to %s: %s", endpoint, zmq_strerror(zmq_errno()));
        zmq_close(S.push);
        S.push = NULL;
    }
}

/* Closes the PUSH socket and its monitor, letting ZeroMQ deliver what it already took for at
 * most linger_ms. */
static void push_close(uint64_t linger_ms)
{
    if (S.push) {
        int linger = (int)linger_ms;
        zmq_setsockopt(S.push, ZMQ_LINGER, &linger, sizeof linger);
        zmq_socket_monitor(S.push, NULL, 0);
        zmq_close(S.push);
    }
    if (S.monitor)
        zmq_close(S.monitor);
    S.push = S.monitor = NULL;
}

static void socket_open(void)
{
    S.ctx = zmq_ctx_new();
    if (!S.ctx)
        return;
    zmq_ctx_set(S.ctx, ZMQ_IO_THREADS, 1);
    push_open(mw__g.cfg.collector);
    mw__steer_open(S.ctx, S.info.job.job, mw__g.cfg.steer); /* MPIWATCH_STEER only */
}

/* Moves both sockets to the fallback (MPIWATCH_COLLECTOR_FALLBACK, MPIWATCH_STEER_FALLBACK),
 * once. The backlog stays: it was never handed to ZeroMQ, so the fallback gets it after the
 * hello; what the dead peer's pipe held is lost and counted by the running totals. */
static void fallback(const char *why)
{
    if (S.on_fallback || !S.ctx || !mw__fallback.collector[0])
        return;
    if (mw__curve_use_fallback() != 0) {
        S.on_fallback = -1; /* its key file was refused (logged when loaded) */
        return;
    }
    S.on_fallback = 1;
    mw__log("the collector %s %s: falling back to %s", mw__g.cfg.collector, why,
            mw__fallback.collector);
    push_close(0);
    push_open(mw__fallback.collector);
    S.hello_pending = 1; /* before anything else, as on every new connection */
    if (mw__fallback.steer[0]) {
        mw__steer_close();
        mw__steer_open(S.ctx, S.info.job.job, mw__fallback.steer);
    }
}

/* The link has been down for MPIWATCH_FALLBACK_AFTER: fall back (once per wake-up). */
static void fallback_check(void)
{
    if (!S.on_fallback && S.link != LINK_UP && S.down_since_ns && mw__fallback.collector[0] &&
        mw__monotonic_ns() - S.down_since_ns >= mw__fallback.after_ns)
        fallback("has been unreachable for MPIWATCH_FALLBACK_AFTER");
}

/* Closes the socket, letting ZeroMQ deliver what it already took for at most linger_ms. */
static void socket_close(uint64_t linger_ms)
{
    while (S.bl_count)
        backlog_drop_oldest();
    push_close(linger_ms);
    mw__steer_close();
    if (S.ctx)
        zmq_ctx_term(S.ctx);
    S.ctx = NULL;
}

/* Moves the next window to collect to at most MW_CATCHUP_MAX windows before `present`. The
 * windows jumped over are counted as dropped samples; what threads recorded in them is still
 * in their ring slots and goes into the first window collected (mw__collect takes older slots
 * too), so no call is lost from the totals. */
static void catch_up(int64_t present)
{
    if (present - S.next < MW_CATCHUP_MAX)
        return;
    int64_t to = present - MW_CATCHUP_MAX + 1;
    catchup_skipped += (uint64_t)(to - S.next);
    S.samples_dropped_total += (uint64_t)(to - S.next);
    S.next = to;
}

/* Global ns now, on the same clock the recording threads use. */
static uint64_t global_now(void)
{
    return mw__global_ns(mw__now());
}

/* Socket chores of every wake-up: link events, the hello, the backlog. */
static void tick_io(void)
{
    poll_monitor();
    fallback_check(); /* MPIWATCH_COLLECTOR_FALLBACK only */
    mw__steer_drain();
    mw__dormant_tick(mw__global_ns(mw__now())); /* MPIWATCH_DORMANT_AFTER (dormant.c) */
    send_reach_back(); /* a capture may have reached back into the flight recorder */
    if (S.hello_pending)
        send_hello();
    if (!S.hello_pending)
        backlog_flush();
}

/* Whether something waits to be sent; retries back off from 2 ms to one window. */
static int pending(void)
{
    return S.hello_pending || S.bl_count > 0;
}

static void wait_until(uint64_t due_global, uint64_t now_global)
{
    uint64_t delay = due_global - now_global;
    if (pending()) {
        S.retry_ns = S.retry_ns ? S.retry_ns * 2 : 2000000;
        if (S.retry_ns > mw__g.window_ns)
            S.retry_ns = mw__g.window_ns;
        if (S.retry_ns < delay)
            delay = S.retry_ns;
    }
    void *sub = mw__steer_socket();
    if (sub) {
        /* Steering: wait on the SUB socket so that a message is taken as it arrives. The stop
         * request comes through the condition variable, so the wait is capped. */
        if (delay > STEER_WAIT_NS)
            delay = STEER_WAIT_NS;
        zmq_pollitem_t item = {.socket = sub, .events = ZMQ_POLLIN};
        pthread_mutex_unlock(&S.lock);
        zmq_poll(&item, 1, (long)((delay + 999999) / 1000000));
        pthread_mutex_lock(&S.lock);
        return;
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t wake = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + delay;
    ts.tv_sec = (time_t)(wake / 1000000000ull);
    ts.tv_nsec = (long)(wake % 1000000000ull);
    pthread_cond_timedwait(&S.cond, &S.lock, &ts);
}

static void *sender_main(void *arg)
{
    (void)arg;
    socket_open();
    S.hello_pending = 1;
    pthread_mutex_lock(&S.lock);
    while (!S.stop) {
        /* The grid may change between two turns (mpiwatch.window): look it up every time. */
        const mw_grid_seg_t *sg = &mw__g.grid[mw__seg_of_index(S.next)];
        uint64_t grace = sg->window_ns / 10;
        if (grace < 1000000)
            grace = 1000000;
        uint64_t due = mw_grid_seg_start(sg, (uint64_t)S.next + 1) + grace;
        uint64_t now = global_now();
        if (now < due) {
            wait_until(due, now);
            pthread_mutex_unlock(&S.lock);
            tick_io();
            pthread_mutex_lock(&S.lock);
            continue;
        }
        /* Window S.next is over. When this thread was starved it catches up one window per
         * turn, without sleeping, so nothing is skipped. */
        pthread_mutex_unlock(&S.lock);
        tick_io();
        catch_up(mw__grid_index(now));
        mw__collect(&S.acc, S.next);
        send_sample(S.next);
        S.next++;
        pthread_mutex_lock(&S.lock);
    }
    pthread_mutex_unlock(&S.lock);
    /* Finalize: the application thread is in MPI_Finalize, recording is off. Flush every
     * window up to the current one and say bye; if the collector is there (or still being
     * connected to) give it up to MPIWATCH_LINGER_MS to take what is queued. A collector that
     * is absent or gone costs nothing here. */
    tick_io();
    mw__sites_finish(); /* the last samples resolve the call sites left (callsites.c) */
    int64_t last = mw__grid_index(global_now());
    catch_up(last);
    for (; S.next <= last; S.next++) {
        mw__collect(&S.acc, S.next);
        send_sample(S.next);
    }
    mw__trace_flush_deferred(); /* a deferred burst still waiting for its group's window */
    send_reach_back();
    send_bye();
    mw__capture_log();
    mw__dormant_log();
    mw__trace_log();
    if (S.traces_dropped)
        mw__log("sender: %llu reach-back traces dropped", (unsigned long long)S.traces_dropped);
    mw__grid_log();
    if (catchup_skipped)
        mw__log("sender: %llu windows skipped to catch up (counted as dropped samples)",
                (unsigned long long)catchup_skipped);
    uint64_t deadline = mw__monotonic_ns() + (uint64_t)mw__g.cfg.linger_ms * 1000000ull;
    for (;;) {
        tick_io();
        /* A collector that is down now will not take the last samples and the bye: the
         * fallback, when there is one, gets them without waiting MPIWATCH_FALLBACK_AFTER. */
        if (pending() && S.link == LINK_DOWN && !S.on_fallback && mw__fallback.collector[0])
            fallback("is down at MPI_Finalize");
        if (!pending() || S.link == LINK_DOWN || mw__monotonic_ns() >= deadline)
            break;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    uint64_t now = mw__monotonic_ns();
    socket_close(S.link == LINK_DOWN || now >= deadline ? 0 : (deadline - now) / 1000000ull);
    return NULL;
}

int mw__sender_start(const mw_hello_info_t *info)
{
    if (mw__curve_load() != 0)
        return -1; /* keys set but unusable (logged): no data leaves this rank */
    S.info = *info;
    if (alloc_buffers() != 0)
        return -1;
    if (mw__trace_send_init() != 0)
        mw__log("no memory for the flight recorder; tracing is off");
    S.next = atomic_load(&mw__g.closed_upto) + 1;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&S.cond, &ca);
    pthread_condattr_destroy(&ca);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&S.thread, NULL, sender_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0)
        return -1;
    S.started = 1;
    return 0;
}

void mw__sender_stop(void)
{
    if (!S.started)
        return;
    pthread_mutex_lock(&S.lock);
    S.stop = 1;
    pthread_cond_signal(&S.cond);
    pthread_mutex_unlock(&S.lock);
    pthread_join(S.thread, NULL);
    S.started = 0;
}
