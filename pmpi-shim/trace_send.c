/* trace_send.c: the sender thread's side of per-call tracing (docs/trace.md, "Flight recorder,
 * plans and captures").
 *
 * DESIGN: after mw__collect() has taken window k from every thread's slots, the sender thread
 * drains every thread's record ring (trace.h) of the records whose end lies in a window <= k:
 * they are exactly the calls the sample of k counts (a call belongs to the window holding its
 * end; a late call, recorded after its window was collected, is in the ring after that window
 * was drained and is taken with the next one, which also counts it). It reads only below
 * `head` (acquire), and publishes `tail` (release) once the records are copied out. The records
 * are converted to mw_trace_rec_t (global ns relative to window k's start, job-wide
 * communicator ids), put in time order over the threads, given their channel indices (below),
 * checked against the sample (the number of calls must equal the window's timed calls, or the
 * window is sent as its summary only), encoded (proto/mw_trace.h, zstd from ~50 records) and
 * kept in the flight recorder: the encoded windows of the last MPIWATCH_TRACE_HISTORY windows,
 * at most MPIWATCH_TRACE_HISTORY_MB in all. Calls still running when the window is collected
 * (the thread's in-progress marker) get an MW_TF_OPEN record, so that a viewer can draw them
 * growing.
 *
 * Channel indices (docs/trace-plan.md section 4, algorithm S): every record of the rank, traced
 * or not, in posting order. A send takes the next index of its channel (communicator,
 * destination, tag). A receive takes the index of the message it got on (communicator, actual
 * source, actual tag), in MPI's matching order: among the receives that got a message of one
 * channel, posting order is channel order. So a completed receive is numbered only once no
 * receive posted before it is still open with a pattern (source, tag, MPI_ANY_*) that could
 * take a message of its channel. The open and not yet numbered receives wait in `pend`, in
 * posting order, and are numbered at the end of each window. A receive still waiting then is
 * numbered from the completions the rings already hold of the next window when they settle
 * it, else it travels without an index (MW_TF_NOSEQ, counted): never a wrong one. The
 * maps and the list are capped; over a cap a record gets MW_TF_NOSEQ (counted). Records lost to
 * a full ring, calls made while recording was paused or by threads beyond
 * MPIWATCH_MAX_THREADS make every later index doubtful: Trace.flags MW_TRACE_SEQ_UNRELIABLE
 * from then on.
 *
 * Which windows travel with their samples is the job's plan (mpiwatch.trace, set by the
 * collector; MPIWATCH_TRACE_PLAN at start): all, off, K+B, every:P:B@K. A capture
 * (mpiwatch.capture=N@K, capture.c) adds its windows: those still in the flight recorder are
 * sent at once as Envelope.trace messages, the later ones with their samples. Everything here
 * runs on the sender thread; nothing touches an application thread but the ring's `tail`.
 */
#include "shim.h"
#include "trace.h"

#include <stdlib.h>
#include <string.h>

#define CHAN_MAX (1u << 16)  /* slots of a channel map at most (half of them usable) */
#define CHAN_FIRST 256u      /* slots of a channel map at first */
#define PEND_MAX 4096u       /* receives waiting for their index at most */
#define COMMS_PER_SAMPLE 256 /* communicator definitions one sample carries at most */
#define REACH_MAX 8u         /* reach-back requests waiting to be sent */
#define HIST_MAX 1024u       /* flight-recorder windows at most (MPIWATCH_TRACE_HISTORY's cap) */
#define PEEK_MAX 4096u       /* completions of the next window looked at, at most */
#define PEEK_HELD 256u       /* held-back receives a window tries to number by looking ahead */

enum { PLAN_ALL, PLAN_OFF, PLAN_RANGE, PLAN_EVERY };

/* One channel: the next index and the thread that posted on it last. */
typedef struct {
    uint64_t comm, next;
    int32_t peer, tag;
    uint32_t thread;
    uint16_t used;
    uint16_t bad; /* an untracked receive may have taken a message of it: no indices */
} chan_t;
_Static_assert(sizeof(chan_t) == 32, "a channel is 32 bytes");

typedef struct {
    chan_t *t;
    uint32_t cap, n;
} chanmap_t;

enum { PEND_OPEN, PEND_DONE };

/* A posted receive waiting for its index, in posting order. */
typedef struct {
    uint64_t comm;
    int32_t src, tag;   /* the pattern as posted (MW_TRACE_ANY for MPI_ANY_*) */
    int32_t asrc, atag; /* what it got, once done */
    uint32_t req;
    uint32_t state;
    int64_t win;  /* the window holding the record that gets the index */
    uint32_t rec; /* that record's position in the window's array */
    uint32_t pad;
} pend_t;

/* One window of the flight recorder. */
typedef struct {
    int64_t win; /* -1: empty */
    uint64_t wstart, left_out, raw_bytes;
    uint32_t state, reason, count, encoding, threads, flags;
    uint8_t *data;
    size_t len;
} hist_t;

typedef struct {
    int mode;
    uint64_t k, b, p;
    uint64_t g; /* PLAN_EVERY: 0, or the burst is sent later in g groups of ranks (/G) */
} plan_t;

/* A completion of a receive already in a ring, of a window not drained yet. */
typedef struct {
    uint32_t req;
    int32_t src, tag;
    int32_t msg; /* 0: no message (cancelled, MPI_PROC_NULL) */
} peek_t;

static struct {
    int ready;
    unsigned nhist;
    size_t hist_cap_bytes, hist_bytes, hist_peak;
    hist_t *hist; /* [nhist], window w at w % nhist */
    /* the window being built */
    mw_trace_rec_t *recs;
    uint32_t *order;
    mw_trace_rec_t *tmp; /* the sort's copy, only with several threads */
    size_t tmp_cap;
    size_t cap, n, max_n;
    uint64_t *lost_seen;           /* per thread: ring->lost already accounted */
    uint8_t *loss_next;            /* per thread: the next window lost records */
    uint64_t *peek_from, *peek_to; /* per thread: the ring's records of later windows */
    unsigned peek_threads;
    peek_t *peek;
    unsigned npeek;
    int64_t last; /* last window drained (-1 before the first) */
    int unreliable;
    uint64_t seen_dropped; /* mw__g.threads_dropped + calls_dropped at the last look */
    chanmap_t sends, recvs;
    pend_t *pend;
    unsigned npend, pend_cap;
    int recv_broken; /* the list overflowed: receive indices are off for good */
    plan_t plan;
    /* a capture's windows still ahead: traced with their samples */
    int64_t cap_lo, cap_hi;
    uint64_t cap_id;
    /* reach-back requests: windows [lo, hi) of the flight recorder, request id (a deferred
     * burst: id 0, deferred 1) */
    struct {
        int64_t lo, hi;
        uint64_t id;
        int deferred;
    } reach[REACH_MAX];
    unsigned nreach;
    /* communicator definitions: entries below comm_sent went out with a sample */
    unsigned comm_sent;
    Mpiwatch__CommDef cdef[COMMS_PER_SAMPLE];
    Mpiwatch__CommDef *cdefp[COMMS_PER_SAMPLE];
    /* counters (MPIWATCH_VERBOSE at finalize, docs/trace.md) */
    uint64_t windows, exact, ring_full, mismatch, too_big, nomem, records, open_calls;
    uint64_t seq_deferred, seq_ahead, seq_capped, seq_unknown_req, seq_bad_chan;
    uint64_t plan_requests, plan_bad, plan_off;
    uint64_t reach_windows, reach_missing, reach_busy, traces_sent;
    uint64_t defer_windows, defer_sent, defer_lost, hist_short;
} X = {.last = -1, .cap_lo = 0, .cap_hi = 0};

/* ---- plans --------------------------------------------------------------------------------- */

/* Parses a plan: "all", "off", "K+B" or "every:P:B@K". Returns 0, or -1 (nothing changed). */
static int plan_parse(const char *v, plan_t *out)
{
    plan_t p = {0};
    uint64_t a, b, c;
    const char *s = v;
    if (strcmp(v, "all") == 0) {
        p.mode = PLAN_ALL;
    } else if (strcmp(v, "off") == 0) {
        p.mode = PLAN_OFF;
    } else if (strncmp(v, "every:", 6) == 0) {
        s = v + 6;
        if (mw__steer_number(&s, &a) < 0 || *s++ != ':' || mw__steer_number(&s, &b) < 0 ||
            *s++ != '@' || mw__steer_number(&s, &c) < 0)
            return -1;
        if (a < 1 || b < 1 || b > a)
            return -1; /* a period of at least one window holding 1..P traced windows */
        uint64_t g = 0;
        if (*s == '/' && (s++, mw__steer_number(&s, &g) < 0 || g < 1 || g > a))
            return -1; /* 1..P groups: a burst's sending never reaches the next burst's */
        if (*s)
            return -1;
        p = (plan_t){.mode = PLAN_EVERY, .p = a, .b = b, .k = c, .g = g};
    } else {
        if (mw__steer_number(&s, &a) < 0 || *s++ != '+' || mw__steer_number(&s, &b) < 0 || *s)
            return -1;
        if (b < 1)
            return -1;
        p = (plan_t){.mode = PLAN_RANGE, .k = a, .b = b};
    }
    /* mw__steer_number reads at most 15 digits: K + B and the comparisons below cannot
     * overflow. */
    *out = p;
    return 0;
}

static int plan_has(const plan_t *p, int64_t w)
{
    if (w < 0)
        return 0;
    uint64_t k = (uint64_t)w;
    switch (p->mode) {
    case PLAN_ALL:
        return 1;
    case PLAN_RANGE:
        return k >= p->k && k - p->k < p->b;
    case PLAN_EVERY:
        return k >= p->k && (k - p->k) % p->p < p->b;
    default:
        return 0;
    }
}

/* ---- deferred bursts (every:P:B@K/G) ------------------------------------------------------- */

/* This rank's group: it sends a burst [s, s + B) after collecting window s + B + group. */
static uint64_t defer_group(const plan_t *p)
{
    return p->g ? (uint64_t)(mw__g.rank < 0 ? 0 : mw__g.rank) % p->g : 0;
}

/* Whether window w is traced but its records go later (a burst of a deferring plan). */
static int window_deferred(int64_t w)
{
    return X.plan.mode == PLAN_EVERY && X.plan.g && plan_has(&X.plan, w);
}

static void reach_push(int64_t lo, int64_t hi, uint64_t id, int deferred)
{
    if (lo >= hi)
        return;
    if (X.nreach == REACH_MAX) {
        if (deferred)
            X.defer_lost += (uint64_t)(hi - lo);
        else
            X.reach_busy++;
        return;
    }
    X.reach[X.nreach].lo = lo;
    X.reach[X.nreach].hi = hi;
    X.reach[X.nreach].id = id;
    X.reach[X.nreach].deferred = deferred;
    X.nreach++;
}

/* After window x was collected: the burst this rank's group sends now, if any. */
static void defer_due(int64_t x)
{
    const plan_t *p = &X.plan;
    if (p->mode != PLAN_EVERY || !p->g || x < 0)
        return;
    uint64_t lag = p->b + defer_group(p);
    if ((uint64_t)x < p->k + lag)
        return;
    uint64_t s = (uint64_t)x - lag; /* the burst's first window, if one starts there */
    if ((s - p->k) % p->p == 0)
        reach_push((int64_t)s, (int64_t)(s + p->b), 0, 1);
}

/* Queues every burst window collected under the plan in force and not sent yet (a new plan, or
 * the finalize): they go at once, whatever the group. */
static void defer_flush(void)
{
    const plan_t *p = &X.plan;
    if (p->mode != PLAN_EVERY || !p->g || X.last < 0 || (uint64_t)X.last < p->k)
        return;
    uint64_t last = (uint64_t)X.last, lag = p->b + defer_group(p);
    uint64_t s = p->k + (last - p->k) / p->p * p->p; /* the latest burst begun */
    /* Bursts still waiting: their sending window s + lag is after the last collected (G <= P:
     * at most two). */
    for (int i = 0; i < 2 && s + lag > last; i++) {
        uint64_t hi = s + p->b < last + 1 ? s + p->b : last + 1;
        reach_push((int64_t)s, (int64_t)hi, 0, 1);
        if (s < p->k + p->p)
            break;
        s -= p->p;
    }
}

void mw__trace_flush_deferred(void)
{
    if (X.ready)
        defer_flush();
}

/* Makes the flight recorder hold at least n windows (at most HIST_MAX): a deferring plan needs
 * B + G. The windows kept move to their new slots; the byte cap stays what it is. */
static void hist_grow(uint64_t n)
{
    if (n > HIST_MAX) {
        X.hist_short++; /* the windows beyond are counted as lost when due */
        n = HIST_MAX;
    }
    if (n <= X.nhist)
        return;
    hist_t *h = calloc(n, sizeof *h);
    if (!h) {
        X.nomem++;
        return;
    }
    for (uint64_t i = 0; i < n; i++)
        h[i].win = -1;
    for (unsigned i = 0; i < X.nhist; i++)
        if (X.hist[i].win >= 0)
            h[(uint64_t)X.hist[i].win % n] = X.hist[i];
    free(X.hist);
    X.hist = h;
    X.nhist = (unsigned)n;
}

int mw__trace_plan_request(const char *value)
{
    X.plan_requests++;
    plan_t p;
    if (!mw__trace.on || plan_parse(value, &p) != 0) {
        if (!mw__trace.on)
            X.plan_off++;
        else
            X.plan_bad++;
        return -1;
    }
    if (X.ready)
        defer_flush(); /* the old plan's bursts not sent yet go now */
    X.plan = p;
    if (p.mode == PLAN_EVERY && p.g && X.ready)
        hist_grow(p.b + p.g);
    mw__log("trace plan %s", value);
    return 0;
}

/* Whether window w travels with its sample, and the capture it belongs to (0 none). */
static int window_wanted(int64_t w, uint64_t *capture)
{
    *capture = 0;
    if (w >= X.cap_lo && w < X.cap_hi) {
        *capture = X.cap_id;
        return 1;
    }
    return plan_has(&X.plan, w) && !window_deferred(w);
}

/* ---- channel maps -------------------------------------------------------------------------- */

static uint32_t chan_hash(uint64_t comm, int32_t peer, int32_t tag)
{
    uint64_t h = comm * 0x9E3779B97F4A7C15ull ^ ((uint64_t)(uint32_t)peer << 32 | (uint32_t)tag);
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    return (uint32_t)h;
}

static chan_t *chan_slot(chan_t *t, uint32_t cap, uint64_t comm, int32_t peer, int32_t tag)
{
    uint32_t m = cap - 1, i = chan_hash(comm, peer, tag) & m;
    while (t[i].used && !(t[i].comm == comm && t[i].peer == peer && t[i].tag == tag))
        i = (i + 1) & m;
    return &t[i];
}

/* The channel, created when new; NULL when the map is full (or no memory). */
static chan_t *chan_get(chanmap_t *m, uint64_t comm, int32_t peer, int32_t tag)
{
    if (m->t) {
        chan_t *c = chan_slot(m->t, m->cap, comm, peer, tag);
        if (c->used)
            return c;
    }
    if ((m->n + 1) * 2 > m->cap) {
        uint32_t ncap = m->cap ? m->cap * 2 : CHAN_FIRST;
        if (ncap > CHAN_MAX)
            return NULL;
        chan_t *nt = calloc(ncap, sizeof *nt);
        if (!nt)
            return NULL;
        for (uint32_t i = 0; i < m->cap; i++)
            if (m->t[i].used)
                *chan_slot(nt, ncap, m->t[i].comm, m->t[i].peer, m->t[i].tag) = m->t[i];
        free(m->t);
        m->t = nt;
        m->cap = ncap;
    }
    chan_t *c = chan_slot(m->t, m->cap, comm, peer, tag);
    *c = (chan_t){.comm = comm, .peer = peer, .tag = tag, .used = 1};
    m->n++;
    return c;
}

/* ---- channel indices ----------------------------------------------------------------------- */

static void seq_none(mw_trace_rec_t *r, uint64_t *counter)
{
    r->flags |= MW_TF_NOSEQ;
    (*counter)++;
}

static void index_send(mw_trace_rec_t *r)
{
    if (r->flags & (MW_TF_PROC_NULL | MW_TF_NOSEQ) || r->peer < 0)
        return;
    chan_t *c = chan_get(&X.sends, r->comm, r->peer, r->tag);
    if (!c) {
        seq_none(r, &X.seq_capped);
        return;
    }
    if (c->next && c->thread != r->thread)
        r->flags |= MW_TF_UNORDERED; /* posts from two threads: MPI gives them no order */
    c->thread = r->thread;
    r->seq = c->next++;
}

static int pend_push(const pend_t *p)
{
    if (X.npend == X.pend_cap) {
        unsigned ncap = X.pend_cap ? X.pend_cap * 2 : 64;
        if (ncap > PEND_MAX)
            return -1;
        pend_t *np = realloc(X.pend, ncap * sizeof *np);
        if (!np)
            return -1;
        X.pend = np;
        X.pend_cap = ncap;
    }
    X.pend[X.npend++] = *p;
    return 0;
}

/* A receive the list cannot hold: the order of every later receive is unknown. */
static void recv_overflow(mw_trace_rec_t *r)
{
    X.recv_broken = 1;
    seq_none(r, &X.seq_capped);
}

/* Posting of a non-blocking receive (its pattern) or a blocking one (done at once). */
static void index_recv_post(mw_trace_rec_t *r, uint32_t pos, int64_t w)
{
    if (r->flags & (MW_TF_PROC_NULL | MW_TF_NOSEQ))
        return;
    if (X.recv_broken) {
        if (r->kind == MW_TK_RECV)
            seq_none(r, &X.seq_capped);
        return;
    }
    pend_t p = {.comm = r->comm,
                .src = r->peer,
                .tag = r->tag,
                .req = r->req,
                .win = w,
                .rec = pos,
                .state = PEND_OPEN};
    if (r->kind == MW_TK_RECV) {
        if (r->peer < 0) { /* no actual source: nothing to number, nothing it could block */
            seq_none(r, &X.seq_capped);
            return;
        }
        p.state = PEND_DONE;
        p.asrc = r->peer;
        p.atag = r->tag;
    }
    if (pend_push(&p) != 0)
        recv_overflow(r);
}

/* Completion of a non-blocking receive: its record gets the index once it is known. */
static void index_recv_done(mw_trace_rec_t *r, uint32_t pos, int64_t w)
{
    if (X.recv_broken) {
        if (!(r->flags & (MW_TF_PROC_NULL | MW_TF_CANCELLED)))
            seq_none(r, &X.seq_capped);
        return;
    }
    unsigned i = 0;
    while (i < X.npend && !(X.pend[i].state == PEND_OPEN && X.pend[i].req == r->req))
        i++;
    if (i == X.npend) {
        /* A post never seen (before tracing began, lost, or made while paused): it may
         * have taken any message of its channel, whose indices cannot be trusted any more. */
        if (r->flags & (MW_TF_PROC_NULL | MW_TF_CANCELLED))
            return;
        seq_none(r, &X.seq_unknown_req);
        if (r->peer >= 0) {
            chan_t *c = chan_get(&X.recvs, r->comm, r->peer, r->tag);
            if (c)
                c->bad = 1;
        }
        return;
    }
    pend_t *p = &X.pend[i];
    if (r->flags & (MW_TF_PROC_NULL | MW_TF_CANCELLED) || r->peer < 0) {
        /* No message: it blocks nobody any more. */
        memmove(p, p + 1, (X.npend - i - 1) * sizeof *p);
        X.npend--;
        if (!(r->flags & (MW_TF_PROC_NULL | MW_TF_CANCELLED)))
            seq_none(r, &X.seq_capped);
        return;
    }
    p->state = PEND_DONE;
    p->asrc = r->peer;
    p->atag = r->tag;
    p->win = w;
    p->rec = pos;
}

static int could_take(const pend_t *o, const pend_t *e)
{
    return o->comm == e->comm && (o->src == MW_TRACE_ANY || o->src == e->asrc) &&
           (o->tag == MW_TRACE_ANY || o->tag == e->atag);
}

/* The completions of receives in the rings' records of later windows (read, not taken: the
 * producer does not write over records the sender has not consumed). */
static void peek_load(void)
{
    X.npeek = 0;
    const uint32_t mask = mw__trace.ring_size - 1;
    for (unsigned i = 0; i < X.peek_threads; i++) {
        const mw_tring_t *r = mw__tring(i);
        for (uint64_t q = X.peek_from[i]; q < X.peek_to[i] && X.npeek < PEEK_MAX; q++) {
            const mw_trec_t *x = &r->rec[q & mask];
            if (x->kind != MW_TK_RECV_DONE)
                continue;
            X.peek[X.npeek++] =
                (peek_t){.req = x->req,
                         .src = x->peer,
                         .tag = x->tag,
                         .msg = !(x->flags & (MW_TF_PROC_NULL | MW_TF_CANCELLED)) && x->peer >= 0};
        }
    }
}

/* 1 with the message's channel when request req completes among them, 0 when not seen. */
static int peek_find(uint32_t req, int32_t *src, int32_t *tag, int *msg)
{
    for (unsigned i = 0; i < X.npeek; i++)
        if (X.peek[i].req == req) {
            *src = X.peek[i].src;
            *tag = X.peek[i].tag;
            *msg = X.peek[i].msg;
            return 1;
        }
    return 0;
}

/* The index of held-back receive pend[i] (record r) when every earlier receive that could
 * take a message of its channel is settled: done, or completed among the looked-ahead
 * records. Its index is then the channel's next plus the earlier ones that got a message of
 * it. Returns 1 when r got its index. */
static int peek_index(unsigned i, mw_trace_rec_t *r)
{
    const pend_t *e = &X.pend[i];
    chan_t *c = chan_get(&X.recvs, e->comm, e->asrc, e->atag);
    if (!c || c->bad)
        return 0;
    uint64_t before = 0;
    for (unsigned j = 0; j < i; j++) {
        const pend_t *p = &X.pend[j];
        int32_t src = p->asrc, tag = p->atag;
        if (p->state == PEND_OPEN) {
            int msg;
            if (!could_take(p, e))
                continue;
            if (!peek_find(p->req, &src, &tag, &msg))
                return 0; /* still open as far as anyone knows */
            if (!msg)
                continue;
        }
        before += p->comm == e->comm && src == e->asrc && tag == e->atag;
    }
    r->seq = c->next + before;
    return 1;
}

/* Numbers every done receive that no earlier open receive could still take a message from,
 * in posting order; the records of window w get their index. */
static void index_resolve(int64_t w)
{
    unsigned out = 0, nopen = 0;
    for (unsigned i = 0; i < X.npend; i++) {
        pend_t e = X.pend[i];
        if (e.state == PEND_OPEN) {
            X.pend[out++] = e;
            nopen++;
            continue;
        }
        int blocked = 0;
        if (nopen)
            for (unsigned j = 0; j < out && !blocked; j++)
                blocked = X.pend[j].state == PEND_OPEN && could_take(&X.pend[j], &e);
        if (blocked) {
            X.pend[out++] = e;
            continue;
        }
        chan_t *c = chan_get(&X.recvs, e.comm, e.asrc, e.atag);
        mw_trace_rec_t *r = e.win == w && e.rec < X.n ? &X.recs[e.rec] : NULL;
        if (!c || c->bad) {
            if (r)
                seq_none(r, c ? &X.seq_bad_chan : &X.seq_capped);
            continue;
        }
        uint64_t idx = c->next++;
        if (r) {
            if (c->next > 1 && c->thread != r->thread)
                r->flags |= MW_TF_UNORDERED;
            c->thread = r->thread;
            r->seq = idx;
        }
    }
    X.npend = out;
    /* Receives of this window still held back: numbered from the completions the rings
     * already hold of the next window when those settle them, else sent without an index. */
    unsigned held = 0;
    for (unsigned i = 0; i < X.npend; i++)
        held += X.pend[i].state == PEND_DONE && X.pend[i].win == w && X.pend[i].rec < X.n;
    if (held && held <= PEEK_HELD)
        peek_load();
    for (unsigned i = 0; i < X.npend; i++) {
        if (X.pend[i].state != PEND_DONE || X.pend[i].win != w || X.pend[i].rec >= X.n)
            continue;
        if (held <= PEEK_HELD && peek_index(i, &X.recs[X.pend[i].rec]))
            X.seq_ahead++;
        else
            seq_none(&X.recs[X.pend[i].rec], &X.seq_deferred);
    }
}

/* Gives every record of the window (time order, no open calls) its channel index. */
static void index_window(int64_t w, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        mw_trace_rec_t *r = &X.recs[i];
        switch (r->kind) {
        case MW_TK_SEND:
        case MW_TK_ISEND:
            index_send(r);
            break;
        case MW_TK_RECV:
        case MW_TK_IRECV:
            index_recv_post(r, (uint32_t)i, w);
            break;
        case MW_TK_RECV_DONE:
            index_recv_done(r, (uint32_t)i, w);
            break;
        default:
            break;
        }
    }
    index_resolve(w);
}

/* ---- draining ------------------------------------------------------------------------------ */

static int grow(size_t need)
{
    if (need <= X.cap)
        return 0;
    if (need > MW_TRACE_MAX_RECORDS)
        return -1;
    /* Half again, in steps of 1024 records: the arrays follow the largest window. */
    size_t nc = X.cap + X.cap / 2 > need ? X.cap + X.cap / 2 : need;
    nc = (nc + 1023) & ~(size_t)1023;
    if (nc > MW_TRACE_MAX_RECORDS)
        nc = MW_TRACE_MAX_RECORDS;
    mw_trace_rec_t *r = realloc(X.recs, nc * sizeof *r);
    if (r)
        X.recs = r;
    uint32_t *o = realloc(X.order, nc * sizeof *o);
    if (o)
        X.order = o;
    if (!r || !o)
        return -1;
    X.cap = nc;
    return 0;
}

/* The collective instance (64 bits) from its low 32 bits and the communicator's counter. */
static uint64_t instance_of(const mw_comm_t *e, int32_t low)
{
    uint64_t now = e ? atomic_load_explicit(&e->instance, memory_order_relaxed) : 0;
    uint64_t v = (now & ~0xffffffffull) | (uint32_t)low;
    if (v > now && v >= (1ull << 32))
        v -= 1ull << 32;
    return v;
}

static void convert(mw_trace_rec_t *o, const mw_trec_t *x, uint32_t thread, uint64_t wstart)
{
    const mw_comm_t *e = x->comm ? mw__comm_entry(x->comm) : NULL;
    memset(o, 0, sizeof *o);
    o->start_ns = (int64_t)(mw__global_ns(x->t0) - wstart);
    o->dur_ns = x->t1 > x->t0 ? mw__ticks_to_ns(x->t1 - x->t0) : 0;
    o->comm = e ? e->id : 0;
    o->bytes = x->bytes;
    o->req = x->req;
    o->thread = thread;
    o->peer = x->peer;
    o->tag = x->tag;
    o->fn = x->fn;
    o->kind = x->kind < MW_TK_COUNT ? x->kind : MW_TK_CALL;
    o->flags = x->flags & (uint8_t)~MW_TF_OPEN;
    if (o->kind == MW_TK_COLL || o->kind == MW_TK_ICOLL || o->kind == MW_TK_COLL_DONE) {
        o->seq = instance_of(e, x->tag);
        o->tag = 0;
    }
    if (x->comm && !e)
        o->flags |= MW_TF_NOSEQ; /* a communicator the table does not know */
}

static int cmp_order(const void *a, const void *b)
{
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    if (X.recs[i].start_ns != X.recs[j].start_ns)
        return X.recs[i].start_ns < X.recs[j].start_ns ? -1 : 1;
    return i < j ? -1 : i > j;
}

/* Takes from thread i's ring the records ending before `hi` (ticks). Returns 1 when records
 * of this window may have been lost, and sets *lost_any when the ring lost any since the last
 * look.
 *
 * Which window lost records: a full ring stays full until the sender drains it, so the
 * records lost between two drains are all newer than every record in the ring. When the
 * ring still holds a record of a later window, every loss is of a later window, and it can
 * only be the next one (the losses happened before this drain); otherwise they may be this
 * window's. */
static int drain_thread(unsigned i, uint64_t hi, uint64_t wstart, int *recorded, int *lost_any)
{
    mw_tring_t *r = mw__tring(i);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    const uint32_t mask = mw__trace.ring_size - 1;
    uint64_t j = tail;
    if (head - tail > mw__trace.ring_size)
        head = tail + mw__trace.ring_size; /* cannot happen with a sane producer */
    if (grow(X.n + (size_t)(head - tail) + 1) != 0) {
        X.nomem++;
        head = tail; /* nothing taken: the window is summary only (counts differ) */
    }
    for (; j < head; j++) {
        const mw_trec_t *x = &r->rec[j & mask];
        if (x->t1 >= hi)
            break; /* ends in a later window: taken with it */
        convert(&X.recs[X.n], x, i, wstart);
        X.n++;
        *recorded = 1;
    }
    uint64_t lost = __atomic_load_n(&r->lost, __ATOMIC_RELAXED);
    X.peek_from[i] = j;
    X.peek_to[i] = head;
    atomic_store_explicit(&r->tail, j, memory_order_release);
    int mine = X.loss_next[i];
    X.loss_next[i] = 0;
    if (lost != X.lost_seen[i]) {
        X.lost_seen[i] = lost;
        *lost_any = 1;
        if (j < head)
            X.loss_next[i] = 1; /* a later window's record was written before every loss */
        else
            mine = 1;
    }
    return mine;
}

/* A call still running on thread i at the window's end, as an open record. */
static void open_record(unsigned i, uint64_t hi, uint64_t wstart)
{
    mw_thread_t *t = mw__thread(i);
    uint64_t marker = atomic_load_explicit(&t->inflight, memory_order_acquire);
    unsigned fn = (unsigned)(marker & ((1u << MW_INFLIGHT_FN_BITS) - 1));
    if (!fn || fn >= MW_FN_COUNT)
        return;
    uint64_t t0 = mw__inflight_start(marker, mw__now());
    if (t0 >= hi || grow(X.n + 1) != 0)
        return;
    mw_trace_rec_t *o = &X.recs[X.n++];
    memset(o, 0, sizeof *o);
    o->start_ns = (int64_t)(mw__global_ns(t0) - wstart);
    o->dur_ns = mw__ticks_to_ns(hi - t0);
    o->thread = i;
    o->peer = -1;
    o->fn = (uint16_t)fn;
    o->kind = MW_TK_CALL;
    o->flags = MW_TF_OPEN | MW_TF_NOSEQ;
    X.open_calls++;
}

/* Whether calls went unrecorded since the last look (paused, threads or slots over the
 * limits): their records are missing, and so may be messages in the channel indices. */
static int calls_unrecorded(void)
{
    uint64_t d = atomic_load(&mw__g.threads_dropped) + atomic_load(&mw__g.calls_dropped);
    int changed = d != X.seen_dropped;
    X.seen_dropped = d;
    return changed || atomic_load(&mw__g.paused);
}

/* ---- flight recorder ----------------------------------------------------------------------- */

static hist_t *hist_of(int64_t w)
{
    if (w < 0 || !X.nhist)
        return NULL;
    hist_t *h = &X.hist[(uint64_t)w % X.nhist];
    return h->win == w ? h : NULL;
}

static void hist_drop(hist_t *h)
{
    X.hist_bytes -= h->len;
    free(h->data);
    h->data = NULL;
    h->len = 0;
    h->win = -1;
}

/* Frees the oldest windows until `len` more bytes fit the cap. */
static void hist_make_room(size_t len)
{
    for (int64_t w = X.last - (int64_t)X.nhist + 1; X.hist_bytes + len > X.hist_cap_bytes; w++) {
        if (w >= X.last)
            break;
        hist_t *h = hist_of(w);
        if (h)
            hist_drop(h);
    }
}

/* ---- the sender's entry points -------------------------------------------------------------- */

int mw__trace_send_init(void)
{
    if (!mw__trace.on || !mw__trace.rings || !mw__trace.ring_size)
        return 0;
    const mw_config_t *c = &mw__g.cfg;
    X.nhist = c->trace_history;
    X.hist_cap_bytes = (size_t)c->trace_history_mb << 20;
    X.hist = calloc(X.nhist, sizeof *X.hist);
    X.lost_seen = calloc(c->max_threads, sizeof *X.lost_seen);
    X.loss_next = calloc(c->max_threads, 1);
    X.peek_from = calloc(c->max_threads, sizeof *X.peek_from);
    X.peek_to = calloc(c->max_threads, sizeof *X.peek_to);
    X.peek = calloc(PEEK_MAX, sizeof *X.peek);
    if (!X.hist || !X.lost_seen || !X.loss_next || !X.peek_from || !X.peek_to || !X.peek ||
        grow(1024) != 0)
        return -1;
    for (unsigned i = 0; i < X.nhist; i++)
        X.hist[i].win = -1;
    X.plan.mode = PLAN_ALL;
    if (c->trace_plan[0] && plan_parse(c->trace_plan, &X.plan) != 0) {
        mw__log("MPIWATCH_TRACE_PLAN=%s is not all, off, K+B or every:P:B@K[/G]; using all",
                c->trace_plan);
        X.plan = (plan_t){.mode = PLAN_ALL};
    }
    if (X.plan.mode == PLAN_EVERY && X.plan.g)
        hist_grow(X.plan.b + X.plan.g);
    X.ready = 1;
    return 0;
}

int mw__trace_enabled(void)
{
    return X.ready;
}

void mw__trace_collect(int64_t k, uint64_t timed)
{
    if (!X.ready)
        return;
    uint64_t wstart = mw__grid_start(k);
    uint64_t hi = mw__global_to_ticks(wstart + mw__grid_len(k));
    unsigned nt = atomic_load(&mw__g.nthreads);
    if (nt > mw__g.cfg.max_threads)
        nt = mw__g.cfg.max_threads;
    X.n = 0;
    int lost = 0, lost_any = 0;
    unsigned threads = 0;
    X.peek_threads = nt;
    for (unsigned i = 0; i < nt; i++) {
        int recorded = 0;
        lost |= drain_thread(i, hi, wstart, &recorded, &lost_any);
        threads += (unsigned)recorded;
    }
    /* Time order over the threads (each thread's own order kept): posting order. Without
     * memory for the copy the threads stay one after the other (counted). */
    if (threads > 1 && X.n > 1) {
        if (X.tmp_cap < X.n) {
            mw_trace_rec_t *t = realloc(X.tmp, X.cap * sizeof *t);
            if (t) {
                X.tmp = t;
                X.tmp_cap = X.cap;
            }
        }
        if (X.tmp_cap >= X.n) {
            for (size_t i = 0; i < X.n; i++)
                X.order[i] = (uint32_t)i;
            qsort(X.order, X.n, sizeof *X.order, cmp_order);
            for (size_t i = 0; i < X.n; i++)
                X.tmp[i] = X.recs[X.order[i]];
            memcpy(X.recs, X.tmp, X.n * sizeof *X.recs);
        } else {
            X.nomem++;
        }
    }
    if (lost_any || calls_unrecorded())
        X.unreliable = 1;
    index_window(k, X.n);
    uint64_t calls = 0;
    for (size_t i = 0; i < X.n; i++)
        calls += (uint64_t)mw_trace_is_call(&X.recs[i]);
    for (unsigned i = 0; i < nt; i++)
        open_record(i, hi, wstart);
    X.records += X.n;
    if (X.n > X.max_n)
        X.max_n = X.n;
    X.windows++;
    X.last = k;

    hist_t *h = &X.hist[(uint64_t)k % X.nhist];
    if (h->win >= 0)
        hist_drop(h);
    *h = (hist_t){.win = k,
                  .wstart = wstart,
                  .threads = threads,
                  .flags = X.unreliable ? MW_TRACE_SEQ_UNRELIABLE : 0u};
    if (lost || calls != timed) {
        if (lost)
            X.ring_full++;
        else
            X.mismatch++;
        h->state = MW_TRACE_SUMMARY_ONLY;
        h->reason = MW_TRACE_WHY_RING_FULL;
        h->left_out = timed;
        return;
    }
    uint8_t *data = NULL;
    size_t len = 0;
    uint32_t enc = 0;
    uint64_t raw = 0;
    /* A window larger than the history cap or than one message is sent as its summary. A
     * window without records is exact with none (nothing encoded). */
    if (X.n == 0) {
        h->state = MW_TRACE_EXACT;
        X.exact++;
        return;
    }
    if (mw_trace_encode(X.recs, X.n, 1, 50, &data, &len, &enc, &raw) != 0 ||
        len > X.hist_cap_bytes || len + (64u << 10) > MW_MAX_MESSAGE_BYTES / 2) {
        free(data);
        X.too_big++;
        h->state = MW_TRACE_SUMMARY_ONLY;
        h->reason = MW_TRACE_WHY_RING_FULL;
        h->left_out = timed;
        return;
    }
    hist_make_room(len);
    X.hist_bytes += len;
    if (X.hist_bytes > X.hist_peak)
        X.hist_peak = X.hist_bytes;
    h->state = MW_TRACE_EXACT;
    h->count = (uint32_t)X.n;
    h->encoding = enc;
    h->raw_bytes = raw;
    h->data = data;
    h->len = len;
    X.exact++;
}

/* Points tr at flight-recorder window h (or at what is known of w without it). */
static void trace_from(Mpiwatch__Trace *tr, const hist_t *h)
{
    tr->window = (uint64_t)h->win;
    tr->state = h->state;
    tr->left_out = h->left_out;
    tr->reason = h->reason;
    tr->count = h->count;
    tr->encoding = h->encoding;
    tr->raw_bytes = h->raw_bytes;
    tr->records.data = h->data;
    tr->records.len = h->len;
    tr->window_start_ns = h->wstart;
    tr->threads = h->threads;
    tr->flags = h->flags;
}

int mw__trace_sample(int64_t k, uint64_t timed, Mpiwatch__Trace *tr)
{
    if (!X.ready)
        return 0;
    mpiwatch__trace__init(tr);
    const hist_t *h = hist_of(k);
    uint64_t capture;
    defer_due(k);
    if (h && window_wanted(k, &capture)) {
        trace_from(tr, h);
        tr->capture = capture;
        return 1;
    }
    /* Left out by the plan (or the history lost it), or deferred (its exact records, when it
     * has them, go later: defer_due): the summary, and what it counts. */
    tr->window = (uint64_t)k;
    tr->window_start_ns = mw__grid_start(k);
    tr->state = MW_TRACE_SUMMARY_ONLY;
    tr->reason = MW_TRACE_WHY_BUDGET;
    if (h && window_deferred(k)) {
        if (h->state == MW_TRACE_EXACT && !h->count) { /* nothing to defer: exact, empty */
            trace_from(tr, h);
            return 1;
        }
        if (h->state == MW_TRACE_EXACT) {
            tr->reason = MW_TRACE_WHY_DEFERRED;
            X.defer_windows++;
        } else {
            tr->reason = h->reason; /* not exact here: nothing to send later */
        }
    }
    tr->left_out = timed;
    tr->flags = h ? h->flags : 0;
    tr->threads = h ? h->threads : 0;
    return 1;
}

void mw__trace_unsent(Mpiwatch__Trace *tr, uint64_t timed)
{
    X.too_big++;
    tr->state = MW_TRACE_SUMMARY_ONLY;
    tr->reason = MW_TRACE_WHY_RING_FULL;
    tr->left_out = timed;
    tr->count = 0;
    tr->encoding = 0;
    tr->raw_bytes = 0;
    tr->records.data = NULL;
    tr->records.len = 0;
}

/* ---- captures ------------------------------------------------------------------------------ */

int mw__trace_capture(uint64_t first, uint64_t n, uint64_t id)
{
    if (!X.ready)
        return 0;
    int64_t lo = (int64_t)first, hi = (int64_t)(first + n); /* both < 2^50: no overflow */
    int64_t past_hi = hi < X.last + 1 ? hi : X.last + 1;
    int took = 0;
    if (lo < past_hi) {
        if (X.nreach == REACH_MAX) {
            X.reach_busy++;
        } else {
            reach_push(lo, past_hi, id, 0);
            took = 1;
        }
    }
    int64_t ahead = lo > X.last + 1 ? lo : X.last + 1;
    if (ahead < hi) {
        X.cap_lo = ahead;
        X.cap_hi = hi;
        X.cap_id = id;
        took = 1;
    }
    return took;
}

int mw__trace_reach_next(Mpiwatch__Trace *tr)
{
    while (X.nreach) {
        int64_t w = X.reach[0].lo++;
        uint64_t id = X.reach[0].id;
        int deferred = X.reach[0].deferred;
        if (X.reach[0].lo >= X.reach[0].hi) {
            memmove(&X.reach[0], &X.reach[1], (X.nreach - 1) * sizeof X.reach[0]);
            X.nreach--;
        }
        const hist_t *h = hist_of(w);
        if (deferred && h && (h->state != MW_TRACE_EXACT || !h->count))
            continue; /* its sample said why already, or was exact and empty: nothing deferred */
        if (!h) {
            if (deferred)
                X.defer_lost++; /* freed by the byte cap, or beyond HIST_MAX: left out */
            else
                X.reach_missing++; /* older than the flight recorder reaches */
            continue;
        }
        mpiwatch__trace__init(tr);
        trace_from(tr, h);
        tr->capture = id;
        if (deferred)
            X.defer_sent++;
        else
            X.reach_windows++;
        return 1;
    }
    return 0;
}

/* ---- communicator definitions ------------------------------------------------------------- */

unsigned mw__trace_comms(Mpiwatch__CommDef ***out, unsigned *from, unsigned *upto)
{
    *out = NULL;
    *from = *upto = X.comm_sent;
    if (!X.ready)
        return 0;
    unsigned total = mw__comm_count();
    unsigned n = 0, i = X.comm_sent;
    for (; i < total && n < COMMS_PER_SAMPLE; i++) {
        const mw_comm_t *e = mw__comm_entry(i + 1); /* entries from 1; 0 is "none" */
        if (!e)
            continue;
        Mpiwatch__CommDef *d = &X.cdef[n];
        mpiwatch__comm_def__init(d);
        d->id = e->id;
        d->parent = e->parent;
        d->fn = e->fn;
        d->rank = e->rank;
        d->size = e->size;
        d->flags = e->flags;
        d->created_ns = e->created_ns;
        d->remote_size = e->remote_size;
        X.cdefp[n++] = d;
    }
    *out = X.cdefp;
    *upto = i;
    return n;
}

void mw__trace_comms_sent(unsigned upto)
{
    if (upto > X.comm_sent)
        X.comm_sent = upto;
}

void mw__trace_comms_lost(unsigned from)
{
    if (from < X.comm_sent)
        X.comm_sent = from; /* sent again with the next sample */
}

void mw__trace_log(void)
{
    if (!X.ready)
        return;
    mw__log("trace: %llu windows, %llu exact, %llu ring full, %llu counts differ, %llu too large, "
            "%llu without memory; %llu records, %llu open calls; history peak %zu bytes",
            (unsigned long long)X.windows, (unsigned long long)X.exact,
            (unsigned long long)X.ring_full, (unsigned long long)X.mismatch,
            (unsigned long long)X.too_big, (unsigned long long)X.nomem,
            (unsigned long long)X.records, (unsigned long long)X.open_calls, X.hist_peak);
    mw__log("trace: indices: %llu deferred, %llu from the next window, %llu over a cap, %llu "
            "unknown requests, %llu on "
            "doubtful channels%s; plans: %llu requests, %llu bad, %llu with tracing off; "
            "reach-back: %llu windows sent, %llu no longer kept, %llu refused",
            (unsigned long long)X.seq_deferred, (unsigned long long)X.seq_ahead,
            (unsigned long long)X.seq_capped, (unsigned long long)X.seq_unknown_req,
            (unsigned long long)X.seq_bad_chan, X.unreliable ? ", unreliable" : "",
            (unsigned long long)X.plan_requests, (unsigned long long)X.plan_bad,
            (unsigned long long)X.plan_off, (unsigned long long)X.reach_windows,
            (unsigned long long)X.reach_missing, (unsigned long long)X.reach_busy);
    if (X.defer_windows || X.defer_lost || X.hist_short)
        mw__log("trace: deferred bursts: %llu windows deferred, %llu sent later, %llu left out "
                "(no longer kept or no room to queue)%s; flight recorder %u windows",
                (unsigned long long)X.defer_windows, (unsigned long long)X.defer_sent,
                (unsigned long long)X.defer_lost,
                X.hist_short ? ", a plan asked for more windows than it holds" : "", X.nhist);
    size_t work = X.cap * (sizeof(mw_trace_rec_t) + sizeof(uint32_t)) +
                  X.tmp_cap * sizeof(mw_trace_rec_t) +
                  (size_t)(X.sends.cap + X.recvs.cap) * sizeof(chan_t) +
                  X.pend_cap * sizeof(pend_t) + X.nhist * sizeof(hist_t);
    mw__log("trace: memory: %u rings of %zu bytes, flight recorder at most %zu bytes (peak %zu), "
            "sender buffers %zu bytes (largest window %zu records)",
            atomic_load(&mw__g.nthreads), mw__trace.ring_bytes, X.hist_cap_bytes, X.hist_peak, work,
            X.max_n);
}
