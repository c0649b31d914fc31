/* trace_calls.c: the hand-written wrappers of tracing: receives that need a status, the
 * completions of requests, persistent starts and matched probes (docs/trace.md "Records and
 * communicators").
 *
 * DESIGN: each recording thread owns, after its trace ring (trace.h), a block with its request
 * map and its scratch arrays, so that tracing a call allocates nothing and takes no lock.
 *
 * - A receive's actual source, tag and size are in its status. When the application passes
 *   MPI_STATUS_IGNORE (or MPI_STATUSES_IGNORE for up to MW_TSCRATCH requests) the wrapper
 *   passes its own status instead and reads it after the call; a status the application passed
 *   is only read, so it sees exactly what MPI wrote.
 * - The request map (open addressing on the request handle, linear probing with backward-shift
 *   deletion, MW_TREQ_SLOTS entries, never allocated on the hot path) keeps, for every request a
 *   traced post returned, its request number, communicator, peer and tag as posted, bytes and
 *   kind. A completing call copies the handles it was given (MPI overwrites completed ones with
 *   MPI_REQUEST_NULL), and after the call appends one *_DONE record per completed request,
 *   after its own record, inside the same recording. A full map counts the post, whose
 *   completion is then not traced. Persistent requests stay in the map from their init to
 *   MPI_Request_free; every MPI_Start gives them a new request number.
 * - A request a completing call ended without a completion record (failed, or its handle set
 *   to MPI_REQUEST_NULL after an error) leaves the map at once (entry_drop, counted): MPI hands
 *   its handle out again.
 * - Requests are per thread: a request completed by another thread than the one that posted it
 *   is not found there (counted), and its post stays without completion: the thread's next
 *   post on that handle replaces the entry (mw__req_post), unless both are sends.
 *
 * With MPIWATCH_TRACE=off (the thread has no ring) every wrapper here takes exactly the path
 * the generated wrappers take (wrappers.c), after one test of the ring pointer.
 */
#include "shim.h"

#include <limits.h>
#include <string.h>

#define MW_TREQ_SLOTS 4096u /* requests in flight per thread (a power of two) */
#define MW_TREQ_FILL 3072u  /* at most this many used: the map stays short to probe */
#define MW_TSCRATCH 256u    /* requests of one array call handled exactly */
#define MW_TMSG 16u         /* matched probes whose message is still to be received */

typedef struct {
    uint64_t key; /* the request handle's bits; 0 empty */
    uint64_t bytes;
    uint32_t req, comm;
    int32_t peer, tag; /* as posted (a collective: root, instance) */
    uint8_t kind;      /* MW_TK_ISEND, MW_TK_IRECV, MW_TK_ICOLL */
    uint8_t persist;   /* persistent: kept until MPI_Request_free */
    uint8_t active;    /* posted and not yet completed */
    uint8_t pad;
    uint32_t mark; /* the large array call that saw it last (mark_array) */
    uint64_t seq;  /* posts of the thread before it: the oldest of equal handles goes first */
    uint32_t idx;  /* its index in that call's array */
} treq_t;

typedef struct {
    uint64_t key;
    uint32_t comm;
    int32_t peer, tag;
} tmsg_t;

/* A request mark_array marked: its index in the call's array, and its entry's handle and post
 * number, which find the entry again wherever deletions have moved it in the map. */
typedef struct {
    uint32_t mark, idx;
    uint64_t key, seq;
} tmarked_t;

typedef struct {
    uint64_t posts, full, unknown, untraced_status, freed_active, cancels, shared, stale;
    uint64_t dropped; /* requests MPI ended without a completion record here */
    uint32_t used, marks;
    unsigned msg_next;
    tmsg_t msg[MW_TMSG];
    MPI_Status st[MW_TSCRATCH];
    uint64_t rq[MW_TSCRATCH];
    mw_trec_t more[MW_TSCRATCH + 1];
    treq_t map[MW_TREQ_SLOTS];
    tmarked_t marked[MW_TREQ_SLOTS]; /* by index (idx_slot); touched by large array calls only */
} tstate_t;

size_t mw__tstate_bytes(void)
{
    return sizeof(tstate_t);
}

static inline tstate_t *ts_of(struct mw_tring *r)
{
    return (tstate_t *)r->tstate;
}

/* A request handle as a map key; MPI_REQUEST_NULL is 0 (no request). */
static inline uint64_t key_of(MPI_Request q)
{
    uint64_t k = 0;
    if (q == MPI_REQUEST_NULL)
        return 0;
    memcpy(&k, &q, sizeof q < sizeof k ? sizeof q : sizeof k);
    return k;
}

static inline uint64_t msg_key(MPI_Message m)
{
    uint64_t k = 0;
    memcpy(&k, &m, sizeof m < sizeof k ? sizeof m : sizeof k);
    return k;
}

static inline uint32_t slot_of(uint64_t key)
{
    return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 52) & (MW_TREQ_SLOTS - 1);
}

/* The oldest entry with this handle. Several posts can return the same handle while all are
 * outstanding: Open MPI returns one static, already completed request for every small send
 * that went out at once. Completions then take them in posting order. */
static treq_t *req_find(tstate_t *ts, uint64_t key)
{
    uint32_t h = slot_of(key);
    treq_t *best = NULL;
    for (unsigned i = 0; i < MW_TREQ_SLOTS; i++, h = (h + 1) & (MW_TREQ_SLOTS - 1)) {
        treq_t *e = &ts->map[h];
        if (!e->key)
            break;
        if (e->key == key && (!best || e->seq < best->seq))
            best = e;
    }
    return best;
}

/* Backward-shift deletion: later entries of the probe run move up, so no tombstones. */
static void req_del(tstate_t *ts, treq_t *e)
{
    uint32_t i = (uint32_t)(e - ts->map);
    for (;;) {
        ts->map[i].key = 0;
        uint32_t j = i;
        for (;;) {
            j = (j + 1) & (MW_TREQ_SLOTS - 1);
            if (!ts->map[j].key) {
                ts->used--;
                return;
            }
            uint32_t k = slot_of(ts->map[j].key);
            /* j's entry may fill hole i unless its home k lies cyclically in (i, j] */
            if ((i <= j) ? (i < k && k <= j) : (i < k || k <= j))
                continue;
            ts->map[i] = ts->map[j];
            i = j;
            break;
        }
    }
}

static inline uint32_t next_req(struct mw_tring *r)
{
    uint32_t sh = mw__trace.req_shift, mask = sh >= 32 ? UINT32_MAX : (1u << sh) - 1;
    uint32_t low = ++r->req_seq & mask;
    if (__builtin_expect(low == 0, 0))
        low = ++r->req_seq & mask; /* 0 is "no request" */
    return (sh >= 32 ? 0 : r->tidx << sh) | low;
}

uint32_t mw__req_post(struct mw_tring *r, MPI_Request req, unsigned kind, uint32_t comm,
                      int32_t peer, int32_t tag, uint64_t bytes, int persist)
{
    tstate_t *ts = ts_of(r);
    uint64_t key = key_of(req);
    if (!key)
        return 0;
    uint64_t seq = ++ts->posts;
    /* One pass over the probe run: the oldest entry with this handle, and the free slot. */
    uint32_t h = slot_of(key);
    treq_t *same = NULL, *e;
    for (;; h = (h + 1) & (MW_TREQ_SLOTS - 1)) {
        e = &ts->map[h];
        if (!e->key)
            break;
        if (e->key == key && (!same || e->seq < same->seq))
            same = e;
    }
    /* The same handle still in the map: a shared static request (see req_find) when both
     * posts are sends (Open MPI's one pre-completed request for sends that went out at once)
     * and the old one is active and recent, else a handle MPI reused after a completion this
     * thread did not see (another thread's, or a persistent request's), which is replaced. */
    if (same && (persist || same->persist || !same->active || seq - same->seq > MW_TREQ_FILL ||
                 kind != MW_TK_ISEND || same->kind != MW_TK_ISEND)) {
        ts->stale += same->active && !same->persist;
        e = same;
    } else {
        ts->shared += same != NULL;
        if (ts->used >= MW_TREQ_FILL) {
            ts->full++;
            return 0;
        }
        ts->used++;
    }
    e->key = key;
    e->seq = seq;
    e->bytes = bytes;
    e->comm = comm;
    e->peer = peer;
    e->tag = tag;
    e->kind = (uint8_t)kind;
    e->persist = (uint8_t)persist;
    e->active = (uint8_t)!persist;
    e->mark = 0;
    e->req = persist ? 0 : next_req(r);
    return e->req;
}

/* A persistent request is started: its post record (kind, pattern, a new request number). */
static int req_start(struct mw_tring *r, uint64_t key, mw_trec_t *x)
{
    tstate_t *ts = ts_of(r);
    treq_t *e = key ? req_find(ts, key) : NULL;
    if (!e || !e->persist)
        return 0;
    e->req = next_req(r);
    e->active = 1;
    x->kind = e->kind;
    x->comm = e->comm;
    x->peer = e->peer;
    x->tag = e->tag;
    x->bytes = e->kind == MW_TK_IRECV ? 0 : e->bytes;
    x->req = e->req;
    x->flags = e->peer == -1 && e->kind != MW_TK_ICOLL ? MW_TF_PROC_NULL : 0;
    return 1;
}

/* Bytes received and the cancelled flag of a status. Open MPI's status holds the byte count
 * in a field of its public struct: read directly, it saves MPI_Get_count's checks on every
 * receive. Other MPIs: MPI_Get_count(MPI_BYTE), MPI_Test_cancelled. */
static inline uint64_t status_bytes(const MPI_Status *st)
{
#if defined(OPEN_MPI) && OPEN_MPI
    return (uint64_t)st->_ucount;
#else
    int n = 0;
    return PMPI_Get_count(st, MPI_BYTE, &n) == MPI_SUCCESS && n > 0 ? (uint64_t)n : 0;
#endif
}

static inline int status_cancelled(const MPI_Status *st)
{
#if defined(OPEN_MPI) && OPEN_MPI
    return st->_cancelled != 0;
#else
    int c = 0;
    return PMPI_Test_cancelled(st, &c) == MPI_SUCCESS && c;
#endif
}

static void status_fill(mw_trec_t *o, uint32_t comm, const MPI_Status *st, int cancels)
{
    if (st->MPI_SOURCE == MPI_PROC_NULL) {
        o->peer = -1;
        o->flags |= MW_TF_PROC_NULL;
    } else {
        o->peer = mw__comm_peer(comm, st->MPI_SOURCE);
    }
    o->tag = st->MPI_TAG;
    o->bytes = status_bytes(st);
    if (cancels && status_cancelled(st))
        o->flags |= MW_TF_CANCELLED;
}

/* The completion record of the request whose handle was `key` (st NULL: no status), into
 * *o; 0 when there is none to write (not traced here, or an inactive persistent request). */
static unsigned entry_done(tstate_t *ts, treq_t *e, const MPI_Status *st, mw_trec_t *o);

static unsigned req_done(tstate_t *ts, uint64_t key, const MPI_Status *st, mw_trec_t *o)
{
    treq_t *e = key ? req_find(ts, key) : NULL;
    if (!e) {
        if (key)
            ts->unknown++;
        return 0;
    }
    return entry_done(ts, e, st, o);
}

/* The completion record of entry e (found before the call: nothing else changes the thread's
 * map meanwhile, a call nested in MPI is not recorded). */
static unsigned entry_done(tstate_t *ts, treq_t *e, const MPI_Status *st, mw_trec_t *o)
{
    if (!e->active)
        return 0;
    *o = (mw_trec_t){.bytes = e->bytes,
                     .peer = e->peer,
                     .tag = e->tag,
                     .req = e->req,
                     .comm = e->comm,
                     .kind = e->kind == MW_TK_ISEND   ? MW_TK_SEND_DONE
                             : e->kind == MW_TK_IRECV ? MW_TK_RECV_DONE
                                                      : MW_TK_COLL_DONE};
    if (e->kind == MW_TK_IRECV) {
        o->bytes = 0;
        if (st) {
            status_fill(o, e->comm, st, ts->cancels != 0);
        } else {
            o->flags |= MW_TF_NOSEQ;
            ts->untraced_status++;
        }
    } else if (e->kind == MW_TK_ISEND) {
        if (e->peer == -1)
            o->flags |= MW_TF_PROC_NULL;
        if (st && ts->cancels && status_cancelled(st))
            o->flags |= MW_TF_CANCELLED;
    }
    if (e->persist)
        e->active = 0;
    else
        req_del(ts, e);
    return 1;
}

/* A request MPI ended (completed in error, or freed) without a completion record here: it
 * leaves the map (a persistent one becomes inactive), counted, so that a later post that gets
 * the same handle is not taken for it. */
static void entry_drop(tstate_t *ts, treq_t *e)
{
    if (!e || !e->active)
        return;
    ts->dropped++;
    if (e->persist)
        e->active = 0;
    else
        req_del(ts, e);
}

static inline uint32_t idx_slot(uint32_t i)
{
    return (uint32_t)((i * 0x9e3779b97f4a7c15ull) >> 52) & (MW_TREQ_SLOTS - 1);
}

/* An array call of more than MW_TSCRATCH requests: its traced requests get a mark and their
 * index, found again after the call by one pass over the map (every marked request: Waitall,
 * Testall) or by index in ts->marked (the ones MPI names: Waitany, Waitsome, ...). Equal
 * handles (a shared static request) mark distinct entries, oldest first. At most MW_TREQ_FILL
 * entries are marked, so ts->marked never fills. */
static uint32_t mark_array(tstate_t *ts, int n, const MPI_Request *rq)
{
    uint32_t m = ++ts->marks ? ts->marks : ++ts->marks;
    for (int i = 0; i < n; i++) {
        uint64_t key = key_of(rq[i]);
        if (!key)
            continue;
        uint32_t h = slot_of(key);
        treq_t *best = NULL;
        for (unsigned k = 0; k < MW_TREQ_SLOTS; k++, h = (h + 1) & (MW_TREQ_SLOTS - 1)) {
            treq_t *e = &ts->map[h];
            if (!e->key)
                break;
            if (e->key == key && e->active && e->mark != m && (!best || e->seq < best->seq))
                best = e;
        }
        if (best) {
            best->mark = m;
            best->idx = (uint32_t)i;
            uint32_t x = idx_slot((uint32_t)i);
            while (ts->marked[x].mark == m)
                x = (x + 1) & (MW_TREQ_SLOTS - 1);
            ts->marked[x] =
                (tmarked_t){.mark = m, .idx = (uint32_t)i, .key = key, .seq = best->seq};
        }
    }
    return m;
}

/* The entry mark_array marked at index i of the call's array and not yet handled since, or
 * NULL (that request was not traced on this thread). The entry loses its mark. */
static treq_t *marked_take(tstate_t *ts, uint32_t m, int i)
{
    uint32_t x = idx_slot((uint32_t)i);
    for (unsigned k = 0; k < MW_TREQ_SLOTS; k++, x = (x + 1) & (MW_TREQ_SLOTS - 1)) {
        const tmarked_t *d = &ts->marked[x];
        if (d->mark != m)
            return NULL;
        if (d->idx != (uint32_t)i)
            continue;
        uint32_t h = slot_of(d->key);
        for (unsigned j = 0; j < MW_TREQ_SLOTS; j++, h = (h + 1) & (MW_TREQ_SLOTS - 1)) {
            treq_t *e = &ts->map[h];
            if (!e->key)
                return NULL;
            if (e->key == d->key && e->seq == d->seq) {
                if (e->mark != m)
                    return NULL;
                e->mark = 0;
                return e;
            }
        }
        return NULL;
    }
    return NULL;
}

/* The completion record of the request at index i of a large array call (st NULL: no status),
 * into *o; 0 when there is none (not traced on this thread: counted). */
static unsigned marked_done(tstate_t *ts, uint32_t m, int i, const MPI_Status *st, mw_trec_t *o)
{
    treq_t *e = m ? marked_take(ts, m, i) : NULL;
    if (!e) {
        ts->unknown++;
        return 0;
    }
    return entry_done(ts, e, st, o);
}

/* ---- the wrappers -------------------------------------------------------------------------- */

/* The generated wrappers' path (wrappers.c MW_BODY), for a thread without a ring. */
#define MW_OLD(name, call, bytes, peer)                                                            \
    do {                                                                                           \
        uint64_t o_t0 = mw__begin(t, MW_ID_##name);                                                \
        int o_rc = call;                                                                           \
        uint64_t o_t1 = mw__now();                                                                 \
        uint64_t o_b = 0;                                                                          \
        int o_p = -1;                                                                              \
        if (o_rc == MPI_SUCCESS) {                                                                 \
            o_b = (uint64_t)(bytes);                                                               \
            o_p = (peer);                                                                          \
        }                                                                                          \
        mw__record(t, MW_ID_##name, o_t0, o_t1, o_b, o_p);                                         \
        MW_STEP_HOOK(t, MW_ID_##name);                                                             \
        MW_STEER_HOOK(t);                                                                          \
        return o_rc;                                                                               \
    } while (0)

#define MW_HOOKS(name)                                                                             \
    do {                                                                                           \
        MW_STEP_HOOK(t, MW_ID_##name);                                                             \
        MW_STEER_HOOK(t);                                                                          \
    } while (0)

/* The flag argument of MPI_Test* and MPI_Improbe, for the one body of a pair of calls that
 * differ only by it: MW_FLAG_P in the parameters, MW_FLAG_A in the arguments (empty for the
 * other call, MPI_Wait* or MPI_Mprobe), MW_FLAG_SET the call's "done" (1 for the other). */
#define MW_FLAG_P , int *flag
#define MW_FLAG_A , flag
#define MW_FLAG_SET (flag && *flag)

MW_EXPORT int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                       MPI_Comm comm, MPI_Status *status)
{
    mw_thread_t *t = mw__self(MW_ID_Recv);
    if (!t)
        MW_UNRECORDED(MW_ID_Recv, PMPI_Recv(buf, count, datatype, source, tag, comm, status), 0);
    struct mw_tring *r = t->tring;
    if (!r)
        MW_OLD(Recv, PMPI_Recv(buf, count, datatype, source, tag, comm, status), 0, -1);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    uint64_t t0 = mw__begin(t, MW_ID_Recv);
    int rc = PMPI_Recv(buf, count, datatype, source, tag, comm, st);
    uint64_t t1 = mw__now();
    mw_trec_t x = {.peer = -1, .kind = MW_TK_CALL};
    if (rc == MPI_SUCCESS) {
        x.kind = MW_TK_RECV;
        x.comm = mw__comm_index(comm);
        status_fill(&x, x.comm, st, 0);
    }
    mw__record_tr(t, MW_ID_Recv, t0, t1, 0, -1, r, &x, NULL, 0);
    MW_HOOKS(Recv);
    return rc;
}

/* Sendrecv: a SEND record (the call) and a RECV record flagged MW_TF_PART. */
static void sendrecv_records(mw_trec_t *x, mw_trec_t *y, uint64_t b, int p, MPI_Comm comm, int dest,
                             int sendtag, const MPI_Status *st)
{
    uint32_t ci = mw__comm_index(comm);
    x->kind = MW_TK_SEND;
    x->comm = ci;
    x->bytes = b;
    x->peer = dest == MPI_PROC_NULL ? -1 : p;
    x->flags = dest == MPI_PROC_NULL ? MW_TF_PROC_NULL : 0;
    x->tag = sendtag;
    *y = (mw_trec_t){.kind = MW_TK_RECV, .comm = ci, .flags = MW_TF_PART};
    status_fill(y, ci, st, 0);
}

/* MPI_Sendrecv and MPI_Sendrecv_replace: one body. params: the parameters before the status;
 * args: their names; by, pr: the bytes sent and the peer, as the generated wrappers have them. */
#define MW_ARGS(...) __VA_ARGS__
#define MW_WRAP_SENDRECV(name, params, args, by, dest, sendtag, comm)                              \
    MW_EXPORT int MPI_##name(MW_ARGS params, MPI_Status *status)                                   \
    {                                                                                              \
        mw_thread_t *t = mw__self(MW_ID_##name);                                                   \
        if (!t)                                                                                    \
            MW_UNRECORDED(MW_ID_##name, PMPI_##name(MW_ARGS args, status), by);                    \
        struct mw_tring *r = t->tring;                                                             \
        if (!r)                                                                                    \
            MW_OLD(name, PMPI_##name(MW_ARGS args, status), by, mw__peer(dest, comm));             \
        MPI_Status own;                                                                            \
        MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;                              \
        uint64_t t0 = mw__begin(t, MW_ID_##name);                                                  \
        int rc = PMPI_##name(MW_ARGS args, st);                                                    \
        uint64_t t1 = mw__now();                                                                   \
        uint64_t b = 0;                                                                            \
        int p = -1;                                                                                \
        mw_trec_t x = {.peer = -1, .kind = MW_TK_CALL};                                            \
        mw_trec_t *y = ts_of(r)->more;                                                             \
        unsigned n = 0;                                                                            \
        if (rc == MPI_SUCCESS) {                                                                   \
            b = by;                                                                                \
            p = mw__peer(dest, comm);                                                              \
            sendrecv_records(&x, y, b, p, comm, dest, sendtag, st);                                \
            n = 1;                                                                                 \
        }                                                                                          \
        x.bytes = b;                                                                               \
        mw__record_tr(t, MW_ID_##name, t0, t1, b, p, r, &x, y, n);                                 \
        MW_HOOKS(name);                                                                            \
        return rc;                                                                                 \
    }

MW_WRAP_SENDRECV(Sendrecv,
                 (const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm),
                 (sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                  recvtag, comm),
                 mw__bytes(sendcount, sendtype), dest, sendtag, comm)
MW_WRAP_SENDRECV(Sendrecv_replace,
                 (void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
                  int recvtag, MPI_Comm comm),
                 (buf, count, datatype, dest, sendtag, source, recvtag, comm),
                 mw__bytes(count, datatype), dest, sendtag, comm)

/* ---- matched probes: the message's communicator and envelope, for its receive ------------- */

static void msg_keep(tstate_t *ts, MPI_Message m, MPI_Comm comm, const MPI_Status *st)
{
    if (m == MPI_MESSAGE_NULL)
        return;
    uint32_t ci = mw__comm_index(comm);
    tmsg_t *e = &ts->msg[ts->msg_next++ % MW_TMSG];
    *e = (tmsg_t){.key = msg_key(m),
                  .comm = ci,
                  .peer = st->MPI_SOURCE == MPI_PROC_NULL ? -1 : mw__comm_peer(ci, st->MPI_SOURCE),
                  .tag = st->MPI_TAG};
}

static const tmsg_t *msg_take(tstate_t *ts, uint64_t key)
{
    for (unsigned i = 0; i < MW_TMSG; i++)
        if (ts->msg[i].key == key && key) {
            ts->msg[i].key = 0;
            return &ts->msg[i];
        }
    return NULL;
}

/* MPI_Mprobe and MPI_Improbe: one body. done: a message was found (Improbe: *flag). */
#define MW_WRAP_MPROBE(name, flagp, flaga, done)                                                   \
    MW_EXPORT int MPI_##name(int source, int tag, MPI_Comm comm flagp, MPI_Message *message,       \
                             MPI_Status *status)                                                   \
    {                                                                                              \
        mw_thread_t *t = mw__self(MW_ID_##name);                                                   \
        if (!t)                                                                                    \
            MW_UNRECORDED(MW_ID_##name, PMPI_##name(source, tag, comm flaga, message, status), 0); \
        struct mw_tring *r = t->tring;                                                             \
        if (!r)                                                                                    \
            MW_OLD(name, PMPI_##name(source, tag, comm flaga, message, status), 0, -1);            \
        MPI_Status own;                                                                            \
        MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;                              \
        uint64_t t0 = mw__begin(t, MW_ID_##name);                                                  \
        int rc = PMPI_##name(source, tag, comm flaga, message, st);                                \
        uint64_t t1 = mw__now();                                                                   \
        if (rc == MPI_SUCCESS && (done) && message)                                                \
            msg_keep(ts_of(r), *message, comm, st);                                                \
        mw_trec_t x = {.peer = -1, .kind = MW_TK_CALL};                                            \
        mw__record_tr(t, MW_ID_##name, t0, t1, 0, -1, r, &x, NULL, 0);                             \
        MW_HOOKS(name);                                                                            \
        return rc;                                                                                 \
    }

MW_WRAP_MPROBE(Mprobe, , , 1)
MW_WRAP_MPROBE(Improbe, MW_FLAG_P, MW_FLAG_A, MW_FLAG_SET)

MW_EXPORT int MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message,
                        MPI_Status *status)
{
    mw_thread_t *t = mw__self(MW_ID_Mrecv);
    if (!t)
        MW_UNRECORDED(MW_ID_Mrecv, PMPI_Mrecv(buf, count, type, message, status), 0);
    struct mw_tring *r = t->tring;
    if (!r)
        MW_OLD(Mrecv, PMPI_Mrecv(buf, count, type, message, status), 0, -1);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    uint64_t key = message ? msg_key(*message) : 0;
    int noproc = message && *message == MPI_MESSAGE_NO_PROC;
    uint64_t t0 = mw__begin(t, MW_ID_Mrecv);
    int rc = PMPI_Mrecv(buf, count, type, message, st);
    uint64_t t1 = mw__now();
    mw_trec_t x = {.peer = -1, .kind = MW_TK_CALL};
    if (rc == MPI_SUCCESS) {
        const tmsg_t *m = msg_take(ts_of(r), key);
        x.kind = MW_TK_RECV;
        x.comm = m ? m->comm : 0;
        if (!m && !noproc)
            x.flags |= MW_TF_NOSEQ; /* probed on another thread: no communicator */
        status_fill(&x, x.comm, st, 0);
    }
    mw__record_tr(t, MW_ID_Mrecv, t0, t1, 0, -1, r, &x, NULL, 0);
    MW_HOOKS(Mrecv);
    return rc;
}

MW_EXPORT int MPI_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message,
                         MPI_Request *request)
{
    mw_thread_t *t = mw__self(MW_ID_Imrecv);
    if (!t)
        MW_UNRECORDED(MW_ID_Imrecv, PMPI_Imrecv(buf, count, type, message, request), 0);
    struct mw_tring *r = t->tring;
    if (!r)
        MW_OLD(Imrecv, PMPI_Imrecv(buf, count, type, message, request), 0, -1);
    uint64_t key = message ? msg_key(*message) : 0;
    uint64_t t0 = mw__begin(t, MW_ID_Imrecv);
    int rc = PMPI_Imrecv(buf, count, type, message, request);
    uint64_t t1 = mw__now();
    mw_trec_t x = {.peer = -1, .kind = MW_TK_CALL};
    if (rc == MPI_SUCCESS && request) {
        const tmsg_t *m = msg_take(ts_of(r), key);
        x.kind = MW_TK_IRECV;
        x.comm = m ? m->comm : 0;
        x.peer = m ? m->peer : MW_TRACE_ANY;
        x.tag = m ? m->tag : MW_TRACE_ANY;
        if (!m)
            x.flags |= MW_TF_NOSEQ;
        x.req = mw__req_post(r, *request, MW_TK_IRECV, x.comm, x.peer, x.tag, 0, 0);
    }
    mw__record_tr(t, MW_ID_Imrecv, t0, t1, 0, -1, r, &x, NULL, 0);
    MW_HOOKS(Imrecv);
    return rc;
}

/* ---- persistent requests -------------------------------------------------------------------- */

MW_EXPORT int MPI_Start(MPI_Request *request)
{
    mw_thread_t *t = mw__self(MW_ID_Start);
    if (!t)
        MW_UNRECORDED(MW_ID_Start, PMPI_Start(request), 0);
    struct mw_tring *r = t->tring;
    if (!r)
        MW_OLD(Start, PMPI_Start(request), 0, -1);
    uint64_t key = request ? key_of(*request) : 0;
    uint64_t t0 = mw__begin(t, MW_ID_Start);
    int rc = PMPI_Start(request);
    uint64_t t1 = mw__now();
    mw_trec_t x = {.peer = -1, .kind = MW_TK_CALL};
    if (rc == MPI_SUCCESS)
        req_start(r, key, &x);
    mw__record_tr(t, MW_ID_Start, t0, t1, 0, -1, r, &x, NULL, 0);
    MW_HOOKS(Start);
    return rc;
}

/* Startall: its call record, then one post per started request (flagged MW_TF_PART). */
MW_EXPORT int MPI_Startall(int count, MPI_Request array_of_requests[])
{
    mw_thread_t *t = mw__self(MW_ID_Startall);
    if (!t)
        MW_UNRECORDED(MW_ID_Startall, PMPI_Startall(count, array_of_requests), 0);
    struct mw_tring *r = t->tring;
    if (!r)
        MW_OLD(Startall, PMPI_Startall(count, array_of_requests), 0, -1);
    uint64_t t0 = mw__begin(t, MW_ID_Startall);
    int rc = PMPI_Startall(count, array_of_requests);
    uint64_t t1 = mw__now();
    mw_trec_t x = {.peer = -1, .kind = MW_TK_CALL};
    tstate_t *ts = ts_of(r);
    unsigned n = 0;
    if (rc == MPI_SUCCESS && array_of_requests) {
        for (int i = 0; i < count; i++) {
            mw_trec_t *y = &ts->more[n];
            *y = (mw_trec_t){.peer = -1};
            if (n < MW_TSCRATCH && req_start(r, key_of(array_of_requests[i]), y)) {
                y->flags |= MW_TF_PART;
                n++;
            } else if (n >= MW_TSCRATCH) {
                treq_t *e = req_find(ts, key_of(array_of_requests[i]));
                if (e)
                    e->active = 0; /* its post is not traced: neither is its completion */
                ts->full++;
            }
        }
    }
    mw__record_tr(t, MW_ID_Startall, t0, t1, 0, -1, r, &x, ts->more, n);
    MW_HOOKS(Startall);
    return rc;
}

MW_EXPORT int MPI_Request_free(MPI_Request *request)
{
    mw_thread_t *t = mw__self(MW_ID_Request_free);
    if (!t)
        MW_UNRECORDED(MW_ID_Request_free, PMPI_Request_free(request), 0);
    struct mw_tring *r = t->tring;
    if (!r)
        MW_OLD(Request_free, PMPI_Request_free(request), 0, -1);
    uint64_t key = request ? key_of(*request) : 0;
    uint64_t t0 = mw__begin(t, MW_ID_Request_free);
    int rc = PMPI_Request_free(request);
    uint64_t t1 = mw__now();
    if (rc == MPI_SUCCESS && key) {
        tstate_t *ts = ts_of(r);
        treq_t *e = req_find(ts, key);
        if (e) {
            /* An active request completes unseen: its post stays without completion. */
            ts->freed_active += e->active;
            req_del(ts, e);
        }
    }
    mw_trec_t x = {.peer = -1, .kind = MW_TK_CALL};
    mw__record_tr(t, MW_ID_Request_free, t0, t1, 0, -1, r, &x, NULL, 0);
    MW_HOOKS(Request_free);
    return rc;
}

MW_EXPORT int MPI_Cancel(MPI_Request *request)
{
    mw_thread_t *t = mw__self(MW_ID_Cancel);
    if (!t)
        MW_UNRECORDED(MW_ID_Cancel, PMPI_Cancel(request), 0);
    struct mw_tring *r = t->tring;
    if (!r)
        MW_OLD(Cancel, PMPI_Cancel(request), 0, -1);
    ts_of(r)->cancels++; /* from now on completions look for MW_TF_CANCELLED */
    uint64_t t0 = mw__begin(t, MW_ID_Cancel);
    int rc = PMPI_Cancel(request);
    uint64_t t1 = mw__now();
    mw_trec_t x = {.peer = -1, .kind = MW_TK_CALL};
    mw__record_tr(t, MW_ID_Cancel, t0, t1, 0, -1, r, &x, NULL, 0);
    MW_HOOKS(Cancel);
    return rc;
}

/* ---- completions ---------------------------------------------------------------------------- */

/* MPI_Wait and MPI_Test: one body. done: the request completed (Test: *flag). The request's
 * entry is looked up first: only a receive needs a status of its own. */
#define MW_WRAP_ONE(name, flagp, flaga, done)                                                      \
    MW_DORMANT_DEF(name, int, (MPI_Request * request flagp, MPI_Status * status),                  \
                   PMPI_##name(request flaga, status), 0)                                          \
    MW_EXPORT int MPI_##name(MPI_Request *request flagp, MPI_Status *status)                       \
    {                                                                                              \
        mw_thread_t *t = mw__self(MW_ID_##name);                                                   \
        if (!t)                                                                                    \
            MW_DORMANT_CALL(name, (request flaga, status), PMPI_##name(request flaga, status));    \
        struct mw_tring *r = t->tring;                                                             \
        if (!r)                                                                                    \
            MW_OLD(name, PMPI_##name(request flaga, status), 0, -1);                               \
        tstate_t *ts = ts_of(r);                                                                   \
        uint64_t key = request ? key_of(*request) : 0;                                             \
        treq_t *e = key ? req_find(ts, key) : NULL;                                                \
        MPI_Status own;                                                                            \
        MPI_Status *st =                                                                           \
            status == MPI_STATUS_IGNORE && e && e->kind == MW_TK_IRECV ? &own : status;            \
        uint64_t t0 = mw__begin(t, MW_ID_##name);                                                  \
        int rc = PMPI_##name(request flaga, st);                                                   \
        uint64_t t1 = mw__now();                                                                   \
        unsigned n = 0;                                                                            \
        if (rc == MPI_SUCCESS && (done) && e)                                                      \
            n = entry_done(ts, e, st == MPI_STATUS_IGNORE ? NULL : st, ts->more);                  \
        else if (rc != MPI_SUCCESS && e)                                                           \
            entry_drop(ts, e); /* completed in error (and freed by MPI): no message */             \
        else if (rc == MPI_SUCCESS && (done) && key)                                               \
            ts->unknown++; /* a request not posted here (another thread's, or untraced) */         \
        mw_trec_t x = {.peer = -1, .kind = MW_TK_CALL};                                            \
        mw__record_tr(t, MW_ID_##name, t0, t1, 0, -1, r, &x, ts->more, n);                         \
        MW_HOOKS(name);                                                                            \
        return rc;                                                                                 \
    }

MW_WRAP_ONE(Wait, , , 1)
MW_WRAP_ONE(Test, MW_FLAG_P, MW_FLAG_A, MW_FLAG_SET)

/* Handles of an array call, copied before MPI overwrites the completed ones; statuses to
 * pass (the application's, or the scratch when it passed MPI_STATUSES_IGNORE). Returns 0 when
 * the call has more than MW_TSCRATCH requests (then nothing is substituted; Waitall/Testall
 * mark the requests instead, mark_array). */
static int array_prepare(tstate_t *ts, int count, const MPI_Request *rq, MPI_Status *app,
                         MPI_Status **st)
{
    *st = app;
    if (count < 0 || (unsigned)count > MW_TSCRATCH || !rq)
        return 0;
    for (int i = 0; i < count; i++)
        ts->rq[i] = key_of(rq[i]);
    if (app == MPI_STATUSES_IGNORE)
        *st = ts->st;
    return 1;
}

/* Completion i of an array call whose error is `rc` (MPI_ERR_IN_STATUS: per status). A
 * request handled here (recorded, or dropped) has its copied handle cleared for array_sweep. */
static unsigned array_done(tstate_t *ts, int rc, int i, MPI_Status *s, mw_trec_t *o)
{
    uint64_t key = ts->rq[i];
    if (rc == MPI_ERR_IN_STATUS) {
        if (s->MPI_ERROR == MPI_ERR_PENDING)
            return 0; /* not completed: stays in the map */
        if (s->MPI_ERROR != MPI_SUCCESS) {
            ts->rq[i] = 0;
            entry_drop(ts, key ? req_find(ts, key) : NULL); /* completed in error: no message */
            return 0;
        }
    }
    ts->rq[i] = 0;
    return req_done(ts, key, s, o);
}

/* After a failed array call of at most MW_TSCRATCH requests: every request whose handle MPI
 * set to MPI_REQUEST_NULL and that got no completion record here (its error handler freed
 * it) leaves the map. */
static void array_sweep(tstate_t *ts, int count, const MPI_Request *rq)
{
    for (int i = 0; i < count; i++)
        if (ts->rq[i] && rq[i] == MPI_REQUEST_NULL) {
            entry_drop(ts, req_find(ts, ts->rq[i]));
            ts->rq[i] = 0;
        }
}

/* After a Waitall/Testall of more than MW_TSCRATCH requests: the next (at most MW_TSCRATCH)
 * completion records of the marked requests into ts->more, from map slot *pos on. `all`: the
 * call completed every request; else (a failure) the application's statuses tell when it
 * passed them, and otherwise a request whose handle became MPI_REQUEST_NULL is dropped. A
 * receive's record has the application's status, or none (NOSEQ). */
static unsigned big_all_done(tstate_t *ts, uint32_t mark, int rc, int all, const MPI_Request *rq,
                             MPI_Status *app, unsigned *pos)
{
    unsigned n = 0, i = *pos;
    for (; i < MW_TREQ_SLOTS && n < MW_TSCRATCH; i++) {
        treq_t *e = &ts->map[i];
        if (!e->key || e->mark != mark || !e->active)
            continue;
        uint64_t seq = e->seq; /* unique: equal handles have equal keys */
        uint32_t at = e->idx;
        MPI_Status *s = app == MPI_STATUSES_IGNORE ? NULL : &app[at];
        e->mark = 0;
        if (all || (rc == MPI_ERR_IN_STATUS && s && s->MPI_ERROR == MPI_SUCCESS))
            n += entry_done(ts, e, s, &ts->more[n]);
        else if (rc == MPI_ERR_IN_STATUS && s && s->MPI_ERROR == MPI_ERR_PENDING)
            continue; /* not completed: stays in the map */
        else if ((rc == MPI_ERR_IN_STATUS && s) ||
                 (rc != MPI_SUCCESS && rq[at] == MPI_REQUEST_NULL))
            entry_drop(ts, e);
        else
            continue;
        if (ts->map[i].key && ts->map[i].seq != seq)
            i--; /* backward shift moved another entry into slot i (unsigned: 0 - 1 + 1 = 0) */
    }
    *pos = i;
    return n;
}

/* A further batch of n completion records in ts->more, after a large array call's own
 * recording (ending at t1), in a recording of its own. */
static void more_put(mw_thread_t *t, struct mw_tring *r, unsigned fn, uint64_t t1, unsigned n)
{
    tstate_t *ts = ts_of(r);
    if (!n)
        return;
    mw__busy_enter(t);
    for (unsigned i = 0; i < n; i++) {
        ts->more[i].t0 = ts->more[i].t1 = t1;
        ts->more[i].fn = (uint16_t)fn;
        mw__trace_put(r, &ts->more[i]);
    }
    mw__busy_leave(t);
}

/* The completion records beyond the first MW_TSCRATCH of a large Waitall/Testall, after its
 * call record, MW_TSCRATCH at a time (each batch in a recording of its own). */
static void big_all_rest(mw_thread_t *t, struct mw_tring *r, unsigned fn, uint64_t t1,
                         uint32_t mark, int rc, int all, const MPI_Request *rq, MPI_Status *app,
                         unsigned pos)
{
    while (pos < MW_TREQ_SLOTS)
        more_put(t, r, fn, t1, big_all_done(ts_of(r), mark, rc, all, rq, app, &pos));
}

/* After a failed call on more than MW_TSCRATCH requests: every marked request whose handle MPI
 * set to MPI_REQUEST_NULL without a completion record here leaves the map. */
static void big_sweep(tstate_t *ts, uint32_t mark, int rc, const MPI_Request *rq)
{
    unsigned pos = 0;
    big_all_done(ts, mark, rc, 0, rq, MPI_STATUSES_IGNORE, &pos);
}

/* MPI_Waitall and MPI_Testall: one body. done: the call completed (Testall: *flag; it completes
 * all or none, MPI_ERR_IN_STATUS: the statuses tell). */
#define MW_WRAP_ALL(name, flagp, flaga, done)                                                      \
    MW_EXPORT int MPI_##name(int count, MPI_Request array_of_requests[] flagp,                     \
                             MPI_Status array_of_statuses[])                                       \
    {                                                                                              \
        mw_thread_t *t = mw__self(MW_ID_##name);                                                   \
        if (!t)                                                                                    \
            MW_UNRECORDED(MW_ID_##name,                                                            \
                          PMPI_##name(count, array_of_requests flaga, array_of_statuses), 0);      \
        struct mw_tring *r = t->tring;                                                             \
        if (!r)                                                                                    \
            MW_OLD(name, PMPI_##name(count, array_of_requests flaga, array_of_statuses), 0, -1);   \
        tstate_t *ts = ts_of(r);                                                                   \
        MPI_Status *st;                                                                            \
        int small = array_prepare(ts, count, array_of_requests, array_of_statuses, &st);           \
        uint32_t mark =                                                                            \
            small || !array_of_requests ? 0 : mark_array(ts, count, array_of_requests);            \
        uint64_t t0 = mw__begin(t, MW_ID_##name);                                                  \
        int rc = PMPI_##name(count, array_of_requests flaga, st);                                  \
        uint64_t t1 = mw__now();                                                                   \
        unsigned n = 0, pos = 0;                                                                   \
        int all = rc == MPI_SUCCESS && (done);                                                     \
        if (small && (all || rc == MPI_ERR_IN_STATUS)) {                                           \
            for (int i = 0; i < count; i++)                                                        \
                n += array_done(ts, rc, i, &st[i], &ts->more[n]);                                  \
        }                                                                                          \
        if (small && rc != MPI_SUCCESS)                                                            \
            array_sweep(ts, count, array_of_requests);                                             \
        if (mark)                                                                                  \
            n = big_all_done(ts, mark, rc, all, array_of_requests, st, &pos);                      \
        mw_trec_t x = {.peer = -1, .kind = MW_TK_CALL};                                            \
        mw__record_tr(t, MW_ID_##name, t0, t1, 0, -1, r, &x, ts->more, n);                         \
        if (mark)                                                                                  \
            big_all_rest(t, r, MW_ID_##name, t1, mark, rc, all, array_of_requests, st, pos);       \
        MW_HOOKS(name);                                                                            \
        return rc;                                                                                 \
    }

MW_WRAP_ALL(Waitall, , , 1)
MW_WRAP_ALL(Testall, MW_FLAG_P, MW_FLAG_A, MW_FLAG_SET)

/* MPI_Waitany and MPI_Testany: one body. done: a request completed (Testany: *flag). */
#define MW_WRAP_ANY(name, flagp, flaga, done)                                                      \
    MW_EXPORT int MPI_##name(int count, MPI_Request array_of_requests[], int *index flagp,         \
                             MPI_Status *status)                                                   \
    {                                                                                              \
        mw_thread_t *t = mw__self(MW_ID_##name);                                                   \
        if (!t)                                                                                    \
            MW_UNRECORDED(MW_ID_##name,                                                            \
                          PMPI_##name(count, array_of_requests, index flaga, status), 0);          \
        struct mw_tring *r = t->tring;                                                             \
        if (!r)                                                                                    \
            MW_OLD(name, PMPI_##name(count, array_of_requests, index flaga, status), 0, -1);       \
        tstate_t *ts = ts_of(r);                                                                   \
        MPI_Status own;                                                                            \
        MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;                              \
        MPI_Status *unused;                                                                        \
        int small = array_prepare(ts, count, array_of_requests, NULL, &unused);                    \
        uint32_t mark =                                                                            \
            small || !array_of_requests ? 0 : mark_array(ts, count, array_of_requests);            \
        uint64_t t0 = mw__begin(t, MW_ID_##name);                                                  \
        int rc = PMPI_##name(count, array_of_requests, index flaga, st);                           \
        uint64_t t1 = mw__now();                                                                   \
        unsigned n = 0;                                                                            \
        if (rc == MPI_SUCCESS && (done) && index && *index != MPI_UNDEFINED && *index >= 0 &&      \
            *index < count) {                                                                      \
            if (small)                                                                             \
                n = req_done(ts, ts->rq[*index], st, ts->more);                                    \
            else                                                                                   \
                n = marked_done(ts, mark, *index, st, ts->more);                                   \
        } else if (small && rc != MPI_SUCCESS) {                                                   \
            array_sweep(ts, count, array_of_requests);                                             \
        } else if (mark && rc != MPI_SUCCESS) {                                                    \
            big_sweep(ts, mark, rc, array_of_requests);                                            \
        }                                                                                          \
        mw_trec_t x = {.peer = -1, .kind = MW_TK_CALL};                                            \
        mw__record_tr(t, MW_ID_##name, t0, t1, 0, -1, r, &x, ts->more, n);                         \
        MW_HOOKS(name);                                                                            \
        return rc;                                                                                 \
    }

MW_WRAP_ANY(Waitany, , , 1)
MW_WRAP_ANY(Testany, MW_FLAG_P, MW_FLAG_A, MW_FLAG_SET)

/* Completion of the request at index i of a Waitsome/Testsome on more than MW_TSCRATCH
 * requests, with its status s (NULL: the application passed MPI_STATUSES_IGNORE, which is then
 * passed on): as array_done, where a request without status that failed with the call is left
 * to big_sweep. */
static unsigned big_some_done(tstate_t *ts, uint32_t mark, int rc, int i, MPI_Status *s,
                              mw_trec_t *o)
{
    if (rc == MPI_ERR_IN_STATUS && (!s || s->MPI_ERROR == MPI_ERR_PENDING))
        return 0; /* not known to be completed: stays marked (big_sweep) */
    treq_t *e = marked_take(ts, mark, i);
    if (!e) {
        ts->unknown++;
        return 0;
    }
    if (rc == MPI_ERR_IN_STATUS && s->MPI_ERROR != MPI_SUCCESS) {
        entry_drop(ts, e); /* completed in error: no message */
        return 0;
    }
    return entry_done(ts, e, s, o);
}

/* Waitsome / Testsome: the completion records of the completed requests, from the *j-th index
 * on, at most MW_TSCRATCH (a call of more than MW_TSCRATCH requests: see big_some_done); *j is
 * where the next batch starts. Statuses follow the order of the indices. */
static unsigned some_done(tstate_t *ts, int rc, int small, uint32_t mark, int count,
                          const int *outcount, const int *indices, MPI_Status *st, int *j)
{
    unsigned n = 0;
    if (!(rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) || !outcount ||
        *outcount == MPI_UNDEFINED || !indices) {
        *j = INT_MAX;
        return 0;
    }
    for (; *j < *outcount && n < MW_TSCRATCH; ++*j) {
        int i = indices[*j];
        if (i < 0 || i >= count || (!small && !mark))
            ts->unknown++;
        else if (small)
            n += array_done(ts, rc, i, &st[*j], &ts->more[n]);
        else
            n += big_some_done(ts, mark, rc, i, st == MPI_STATUSES_IGNORE ? NULL : &st[*j],
                               &ts->more[n]);
    }
    return n;
}

/* MPI_Waitsome and MPI_Testsome: one body, the same arguments. */
#define MW_WRAP_SOME(name)                                                                         \
    MW_EXPORT int MPI_##name(int incount, MPI_Request array_of_requests[], int *outcount,          \
                             int array_of_indices[], MPI_Status array_of_statuses[])               \
    {                                                                                              \
        mw_thread_t *t = mw__self(MW_ID_##name);                                                   \
        if (!t)                                                                                    \
            MW_UNRECORDED(MW_ID_##name,                                                            \
                          PMPI_##name(incount, array_of_requests, outcount, array_of_indices,      \
                                      array_of_statuses),                                          \
                          0);                                                                      \
        struct mw_tring *r = t->tring;                                                             \
        if (!r)                                                                                    \
            MW_OLD(name,                                                                           \
                   PMPI_##name(incount, array_of_requests, outcount, array_of_indices,             \
                               array_of_statuses),                                                 \
                   0, -1);                                                                         \
        tstate_t *ts = ts_of(r);                                                                   \
        MPI_Status *st;                                                                            \
        int small = array_prepare(ts, incount, array_of_requests, array_of_statuses, &st);         \
        uint32_t mark =                                                                            \
            small || !array_of_requests ? 0 : mark_array(ts, incount, array_of_requests);          \
        uint64_t t0 = mw__begin(t, MW_ID_##name);                                                  \
        int rc = PMPI_##name(incount, array_of_requests, outcount, array_of_indices, st);          \
        uint64_t t1 = mw__now();                                                                   \
        int j = 0;                                                                                 \
        unsigned n = some_done(ts, rc, small, mark, incount, outcount, array_of_indices, st, &j);  \
        if (small && rc != MPI_SUCCESS)                                                            \
            array_sweep(ts, incount, array_of_requests);                                           \
        mw_trec_t x = {.peer = -1, .kind = MW_TK_CALL};                                            \
        mw__record_tr(t, MW_ID_##name, t0, t1, 0, -1, r, &x, ts->more, n);                         \
        if (mark) {                                                                                \
            while (outcount && j < *outcount)                                                      \
                more_put(t, r, MW_ID_##name, t1,                                                   \
                         some_done(ts, rc, 0, mark, incount, outcount, array_of_indices, st, &j)); \
            if (rc != MPI_SUCCESS)                                                                 \
                big_sweep(ts, mark, rc, array_of_requests);                                        \
        }                                                                                          \
        MW_HOOKS(name);                                                                            \
        return rc;                                                                                 \
    }

MW_WRAP_SOME(Waitsome)
MW_WRAP_SOME(Testsome)

/* MPIWATCH_VERBOSE=3: the records still in the ring, one line each (a debugging aid). */
static void dump(unsigned i, mw_tring_t *r)
{
    uint64_t h = atomic_load(&r->head),
             from = h > mw__trace.ring_size ? h - mw__trace.ring_size : 0;
    for (uint64_t k = from; k < h; k++) {
        const mw_trec_t *x = &r->rec[k & (mw__trace.ring_size - 1)];
        const mw_comm_t *e = mw__comm_entry(x->comm);
        mw__log("trec %u %llu %s kind %u comm %llx peer %d tag %d bytes %llu req %u flags %u "
                "dur %llu",
                i, (unsigned long long)k, mw_fn_name(x->fn), x->kind,
                (unsigned long long)(e ? e->id : 0), x->peer, x->tag, (unsigned long long)x->bytes,
                x->req, x->flags, (unsigned long long)(x->t1 - x->t0));
    }
}

void mw__tcalls_log(void)
{
    if (!mw__trace.on || !mw__trace.rings)
        return;
    unsigned n = atomic_load(&mw__g.nthreads);
    for (unsigned i = 0; i < n && i < mw__trace.nrings; i++) {
        mw_tring_t *r = mw__tring(i);
        tstate_t *ts = ts_of(r);
        mw__log("trace thread %u: %llu records written, %llu read, %llu lost; requests: %llu "
                "posted, %llu map full, %llu completions not found, %llu receives without "
                "status, %llu freed while active, %llu on a shared handle, %llu replaced, "
                "%llu ended without completion",
                i, (unsigned long long)atomic_load(&r->head),
                (unsigned long long)atomic_load(&r->tail), (unsigned long long)r->lost,
                (unsigned long long)ts->posts, (unsigned long long)ts->full,
                (unsigned long long)ts->unknown, (unsigned long long)ts->untraced_status,
                (unsigned long long)ts->freed_active, (unsigned long long)ts->shared,
                (unsigned long long)ts->stale, (unsigned long long)ts->dropped);
        if (mw__g.cfg.verbose >= 3)
            dump(i, r);
    }
}
