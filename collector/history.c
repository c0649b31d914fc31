/* history.c: the history endpoint (--history, a ROUTER socket answering HistoryRequests).
 *
 * DESIGN: the socket lives on the collector's one loop and never blocks it. The endpoint keeps
 * two rings of copies, both bounded whatever the run length: the
 * last --history-windows encoded windows (and at most HISTORY_WINDOW_BYTES of them), and
 * --history-mb MiB of recent raw samples (the envelopes as received) indexed by (rank,
 * window), evicted oldest first. The windows are few and each is its own allocation, so the
 * ring holds exactly as many as asked. The samples arrive at ingest rate and share one
 * buffer: a new one goes back to the start of the buffer as soon as the oldest ones have left
 * room there, and the buffer grows only while it is less than twice what is kept, so its
 * touched part follows the bytes kept, not the run length. Windows, the job description and
 * job events reach it on the publish path (publish.c); samples as they are accepted.
 *
 * Requests (HistoryRequest) come from REQ clients (identity, empty delimiter, body) or DEALER
 * clients (identity, body) and are answered with the same envelope and a HistoryReply that is
 * assembled directly in wire form: the kept windows and samples are already encoded, and a
 * repeated message field is just its bytes behind a tag and a length, so nothing is decoded
 * or encoded again. Windows and samples older than the rings are read from the recording (the
 * one being written, after a flush, or the one being replayed) through one reader kept open;
 * without a recording the reply says that they are no longer in memory. Every request is
 * validated (frame count, size, decoding, what it asks); a bad one is counted by reason and
 * answered with an error when it has a usable envelope, dropped otherwise. Serving a request
 * is bounded by the reply cap (HISTORY_REPLY_MAX) and by how much of the recording one request
 * may read (HISTORY_SCAN_MAX), since it runs on the ingest thread; and in time: reading the
 * recording for one request stops after HISTORY_REQUEST_NS with `truncated` set (the client asks
 * for the rest, as after a reply that hit the size cap), and one wake-up takes no further
 * request once HISTORY_WAKEUP_NS have been spent: the rest wait in libzmq's queue for the next
 * turn of the loop, after ingest, authentication, steering and signals have had theirs.
 */
#include "collector.h"
#include "history.h"
#include "mw_wire.h"
#include "record_file.h"
#include "zsock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mw_recording.h"

#define HISTORY_ROUTER_SNDHWM 16            /* replies queued per history client */
#define HISTORY_ROUTER_RCVHWM 1000          /* requests queued before libzmq stops reading */
#define HISTORY_REQUEST_MAX (64u << 10)     /* a HistoryRequest is a few bytes: cap at 64 KiB */
#define HISTORY_ROUTER_MAXMSG (1 << 20)     /* frames beyond this drop the connection in libzmq */
#define HISTORY_REPLY_MAX (64u << 20)       /* a reply stops here with `truncated` set */
#define HISTORY_WINDOW_BYTES (256ull << 20) /* encoded windows kept, besides --history-windows */
#define HISTORY_SAMPLE_ENTRY_BYTES 128u     /* one sample entry per this much of --history-mb */
#define HISTORY_SCAN_MAX (256ull << 20)     /* recording bytes one rank request may read */
#define HISTORY_REQUEST_NS (50 * MW_NS_PER_MS) /* work on one request before its reply is cut */
#define HISTORY_WAKEUP_NS (20 * MW_NS_PER_MS)  /* requests are taken while less has been spent */
#define HISTORY_MAX_WINDOWS 100000u            /* windows one reply may probe in the recording */
#define HISTORY_BATCH 16                       /* requests answered per wakeup */
#define HISTORY_LATENESS_KEEP 4096u            /* lateness batches kept (docs/lateness.md) */
#define HISTORY_LATENESS_BYTES (64ull << 20)   /* ... and at most this many bytes of them */

/* Why a request was not answered normally. */
#define HISTORY_BAD_REASONS(X)                                                                     \
    X(FRAMES, "frames")                                                                            \
    X(TOO_LARGE, "too_large")                                                                      \
    X(DECODE, "decode")                                                                            \
    X(EMPTY, "empty")

enum {
#define HISTORY_X(id, name) HISTORY_BAD_##id,
    HISTORY_BAD_REASONS(HISTORY_X)
#undef HISTORY_X
        HISTORY_BAD_COUNT
};

static const char *const history_bad_names[HISTORY_BAD_COUNT] = {
#define HISTORY_X(id, name) name,
    HISTORY_BAD_REASONS(HISTORY_X)
#undef HISTORY_X
};

/* ---- the rings ---------------------------------------------------------------------------- */

typedef struct {
    uint64_t key;  /* window index */
    uint32_t rank; /* samples: the sender's world rank */
    uint32_t len;
    union {
        uint64_t off; /* in the ring's data buffer */
        uint8_t *p;   /* an item of its own (ring.separate) */
    } at;
} history_entry_t;

/* Items kept oldest first, at most max_e of them and max_size bytes. Samples (many, small, at
 * ingest rate) share one data buffer; windows (a few per second, up to MBs, and a count the
 * user asked for) are separate allocations, so that none is dropped for a lack of contiguous
 * room. */
typedef struct {
    history_entry_t *e; /* circular: entry i (0 = oldest) is e[(first + i) % cap_e] */
    uint64_t first, n, cap_e, max_e;
    int separate;            /* each item is its own allocation; no data buffer */
    uint8_t *data;           /* the shared buffer (not separate) */
    uint64_t size, max_size; /* bytes allocated for it, and the most that may be */
    uint64_t bytes;          /* bytes of the items kept */
    int evicted;             /* an item has left the ring (evicted_key is valid) */
    uint64_t evicted_key;    /* largest key of an item that left the ring */
    int pushed;              /* an item has entered the ring (min_key is valid) */
    uint64_t min_key;        /* smallest key of an item that entered it */
    uint64_t too_large;      /* items larger than the whole ring, not kept */
} history_ring_t;

static history_entry_t *ring_at(const history_ring_t *r, uint64_t i)
{
    return &r->e[(r->first + i) % r->cap_e];
}

static const uint8_t *ring_item(const history_ring_t *r, const history_entry_t *e)
{
    return r->separate ? e->at.p : r->data + e->at.off;
}

static void ring_init(history_ring_t *r, uint64_t max_entries, uint64_t max_bytes, int separate)
{
    memset(r, 0, sizeof *r);
    r->max_e = max_entries ? max_entries : 1;
    r->max_size = max_bytes;
    r->separate = separate;
}

static void ring_evict(history_ring_t *r)
{
    history_entry_t *old = ring_at(r, 0);
    if (!r->evicted || old->key > r->evicted_key)
        r->evicted_key = old->key;
    r->evicted = 1;
    r->bytes -= old->len;
    if (r->separate)
        free(old->at.p);
    r->first = (r->first + 1) % r->cap_e;
    r->n--;
}

/* Forgets every item (a new job), remembering that they existed. */
static void ring_clear(history_ring_t *r)
{
    while (r->n)
        ring_evict(r);
}

static void ring_free(history_ring_t *r)
{
    ring_clear(r);
    free(r->e);
    free(r->data);
    memset(r, 0, sizeof *r);
}

/* Where an item of `len` bytes fits in the shared buffer without evicting anything; 0 when it
 * does not. Free space is after the newest item and, until the buffer wraps, before the
 * oldest; the start is preferred so that the buffer is reused before it is extended. */
static int ring_fit(const history_ring_t *r, uint64_t len, uint64_t *pos)
{
    if (r->n == 0) {
        *pos = 0;
        return r->size >= len;
    }
    const history_entry_t *old = ring_at(r, 0), *new = ring_at(r, r->n - 1);
    uint64_t head = old->at.off, tail = new->at.off + new->len;
    if (new->at.off >= old->at.off) { /* not wrapped: [tail, size) and [0, head) are free */
        *pos = head >= len ? 0 : tail;
        return head >= len || r->size - tail >= len;
    }
    *pos = tail; /* wrapped: [tail, head) is free */
    return head - tail >= len;
}

/* Makes room for one more entry. Returns 0, or -1 when out of memory (then an old entry is
 * evicted instead). */
static int ring_grow_entries(history_ring_t *r)
{
    uint64_t cap = r->cap_e ? r->cap_e * 2 : 64;
    if (cap > r->max_e)
        cap = r->max_e;
    history_entry_t *e = malloc(cap * sizeof *e);
    if (!e)
        return -1;
    for (uint64_t i = 0; i < r->n; i++)
        e[i] = *ring_at(r, i);
    free(r->e);
    r->e = e;
    r->first = 0;
    r->cap_e = cap;
    return 0;
}

/* Enlarges the shared buffer so that an item of `len` bytes fits after the newest one,
 * undoing a wrap by moving the items at the start of the buffer behind the others (their
 * order is kept). Returns 0, or -1 when the buffer may not or cannot grow that much. */
static int ring_grow(history_ring_t *r, uint64_t len)
{
    uint64_t used = 0, front = 0, j = r->n;
    if (r->n) {
        const history_entry_t *old = ring_at(r, 0), *new = ring_at(r, r->n - 1);
        used = new->at.off + new->len;
        if (new->at.off < old->at.off) { /* wrapped: entries j.. are at the start */
            for (j = 1; ring_at(r, j)->at.off >= old->at.off; j++)
                ;
            const history_entry_t *last_upper = ring_at(r, j - 1);
            front = used;
            used = last_upper->at.off + last_upper->len;
        }
    }
    uint64_t need = used + front + len;
    if (need > r->max_size)
        return -1;
    uint64_t size = r->size ? r->size * 2 : (1u << 20);
    if (size < need)
        size = need;
    if (size > r->max_size)
        size = r->max_size;
    uint8_t *d = realloc(r->data, size);
    if (!d) {
        r->max_size = r->size; /* no more memory: live with what there is */
        return -1;
    }
    r->data = d;
    r->size = size;
    if (front) {
        memcpy(r->data + used, r->data, front); /* [0, front) and [used, ...) are apart */
        for (uint64_t i = j; i < r->n; i++)
            ring_at(r, i)->at.off += used;
    }
    return 0;
}

/* Finds room for an item in the shared buffer, evicting the oldest items as needed. The
 * buffer grows (up to max_size) only while it is less than twice the bytes kept: beyond
 * that, an item that does not fit where the oldest left room makes more of them leave, so
 * that the touched part of the buffer follows what is kept rather than the run length. */
static int ring_place(history_ring_t *r, uint64_t len, uint64_t *pos)
{
    while (!ring_fit(r, len, pos)) {
        if (r->size < r->max_size && r->size < 2 * (r->bytes + len) && ring_grow(r, len) == 0)
            continue;
        if (r->n == 0)
            return -1;
        ring_evict(r);
    }
    return 0;
}

/* Copies an item into the ring, evicting the oldest ones as needed. Returns 0, or -1 when the
 * item cannot be kept (larger than the ring, or no memory at all). */
static int ring_push(history_ring_t *r, uint64_t key, uint32_t rank, const void *data, size_t len)
{
    if (len > r->max_size || len > UINT32_MAX) {
        r->too_large++;
        return -1;
    }
    while (r->n >= r->max_e || (r->separate && r->n && r->bytes + len > r->max_size))
        ring_evict(r);
    if (r->n == r->cap_e && ring_grow_entries(r) < 0) {
        if (r->n == 0)
            return -1;
        ring_evict(r);
    }
    history_entry_t e = {.key = key, .rank = rank, .len = (uint32_t)len};
    if (r->separate) {
        while (!(e.at.p = malloc(len ? len : 1))) {
            if (r->n == 0)
                return -1;
            ring_evict(r);
        }
        memcpy(e.at.p, data, len);
    } else {
        if (ring_place(r, len, &e.at.off) < 0) {
            r->too_large++;
            return -1;
        }
        memcpy(r->data + e.at.off, data, len);
    }
    *ring_at(r, r->n++) = e;
    r->bytes += len;
    if (!r->pushed || key < r->min_key)
        r->min_key = key;
    r->pushed = 1;
    return 0;
}

/* Position of the first entry whose key is >= key (the window ring is sorted by key). */
static uint64_t ring_lower_bound(const history_ring_t *r, uint64_t key)
{
    uint64_t lo = 0, hi = r->n;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (ring_at(r, mid)->key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* ---- the endpoint ------------------------------------------------------------------------- */

struct mw_history {
    mw_clock_fn clock; /* the outer loop's clock (mw__history_open) */
    void *router;

    uint8_t *job; /* the last JobInfo, encoded */
    size_t job_len;

    history_ring_t windows;  /* key: window index; in index order */
    history_ring_t samples;  /* key: window index, rank: sender */
    history_ring_t lateness; /* key: batch number of the job; the current job's batches */
    uint64_t lateness_seq;

    mw_rec_reader_t *reader; /* the recording, opened on the first request that needs it */
    char *reader_path;
    mw_arena_t arena; /* decodes envelopes read from the recording */
    int arena_ready;
    uint8_t *one; /* a RecordRanks cut down to one rank, encoded (mw_rec_ranks_one) */
    size_t one_cap;

    struct {
        uint64_t requests, answered; /* requests with a usable envelope, replies sent */
        uint64_t errors;             /* replies that carry an error */
        uint64_t truncated;
        uint64_t bad[HISTORY_BAD_COUNT];
        uint64_t from_recording;   /* windows and samples read from the recording */
        uint64_t reply_failed;     /* replies that could not be sent */
        uint64_t trace_unresolved; /* recorded traces not where the recording says */
        uint64_t sums_refused;     /* recorded RecordRanks with inconsistent arrays */
    } st;
};

/* The clock the outer loop handed over (mw__history_open): budgets of work are measured in
 * real time; without a clock (tests) it stands still. */
static uint64_t history_mono_ns(const mw_history_t *f)
{
    if (!f->clock)
        return 0;
    mw_clock_t now;
    f->clock(&now);
    return now.mono_ns;
}

/* Replies to requests are not worth waiting for at exit. */
static const mw_serve_opts_t router_opts = {0, HISTORY_ROUTER_SNDHWM, HISTORY_ROUTER_RCVHWM,
                                            HISTORY_ROUTER_MAXMSG};

mw_history_t *mw__history_open(void *zmq_ctx, const mw_collector_options_t *opt, mw_clock_fn clock)
{
    mw_history_t *f = calloc(1, sizeof *f);
    if (!f) {
        MW_LOG(MW_LOG_ERROR, "cannot start the history endpoint: out of memory");
        return NULL;
    }
    f->clock = clock;
    uint64_t sample_bytes = opt->history_mb << 20;
    ring_init(&f->windows, opt->history_windows, HISTORY_WINDOW_BYTES, 1);
    ring_init(&f->samples, sample_bytes / HISTORY_SAMPLE_ENTRY_BYTES, sample_bytes, 0);
    ring_init(&f->lateness, HISTORY_LATENESS_KEEP, HISTORY_LATENESS_BYTES, 1);
    if (!(f->router = mw__zmq_serve_socket(zmq_ctx, ZMQ_ROUTER, opt->history, "history endpoint",
                                           &router_opts))) {
        mw__history_close(f);
        return NULL;
    }
    return f;
}

void mw__history_close(mw_history_t *f)
{
    if (!f)
        return;
    if (f->router) {
        char bad[160];
        size_t n = 0;
        for (int i = 0; i < HISTORY_BAD_COUNT && n < sizeof bad; i++)
            n += (size_t)snprintf(bad + n, sizeof bad - n, "%s%s %llu", i ? ", " : "",
                                  history_bad_names[i], (unsigned long long)f->st.bad[i]);
        MW_LOG(MW_LOG_INFO,
               "history: %llu requests, %llu answered, %llu errors, "
               "%llu truncated, %llu from the recording (%llu traces not found there, %llu "
               "per-rank sums refused), %llu unsent, %llu too large to keep; bad requests: %s",
               (unsigned long long)f->st.requests, (unsigned long long)f->st.answered,
               (unsigned long long)f->st.errors, (unsigned long long)f->st.truncated,
               (unsigned long long)f->st.from_recording, (unsigned long long)f->st.trace_unresolved,
               (unsigned long long)f->st.sums_refused, (unsigned long long)f->st.reply_failed,
               (unsigned long long)(f->windows.too_large + f->samples.too_large), bad);
        if (zmq_close(f->router) != 0)
            MW_LOG(MW_LOG_ERROR, "zmq_close: %s", zmq_strerror(zmq_errno()));
    }
    mw_rec_reader_close(f->reader);
    free(f->reader_path);
    if (f->arena_ready)
        mw_arena_free(&f->arena);
    free(f->one);
    ring_free(&f->windows);
    ring_free(&f->samples);
    ring_free(&f->lateness);
    free(f->job);
    free(f);
}

/* ---- what it keeps -------------------------------------------------------------------------- */

void mw__history_window(mw_history_t *f, uint64_t index, const void *pb, size_t len)
{
    if (!f)
        return;
    /* A window older than the newest kept one would break the ring's order; the merge closes
     * windows in index order, so this only guards against a misuse. */
    if (f->windows.n && index <= ring_at(&f->windows, f->windows.n - 1)->key)
        return;
    ring_push(&f->windows, index, 0, pb, len);
}

void mw__history_job(mw_history_t *f, const void *pb, size_t len)
{
    if (!f)
        return;
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy) {
        MW_LOG(MW_LOG_ERROR, "history: cannot keep the job description: out of memory");
        return;
    }
    memcpy(copy, pb, len);
    free(f->job);
    f->job = copy;
    f->job_len = len;
}

void mw__history_event(mw_history_t *f, const char *kind)
{
    if (f && strcmp(kind, "job_start") == 0) {
        /* A new job: what the rings hold belongs to the previous one. Its windows stay
         * reachable through the recording. */
        ring_clear(&f->windows);
        ring_clear(&f->samples);
        ring_clear(&f->lateness);
    }
}

void mw__history_lateness(mw_history_t *f, const void *pb, size_t len)
{
    if (f)
        ring_push(&f->lateness, f->lateness_seq++, 0, pb, len);
}

void mw__history_sample(mw_history_t *f, uint32_t rank, uint64_t window, const void *data,
                        size_t len)
{
    if (f)
        ring_push(&f->samples, window, rank, data, len);
}

void mw__history_pollitem(mw_history_t *f, zmq_pollitem_t *item)
{
    memset(item, 0, sizeof *item);
    item->fd = -1;
    if (f) {
        item->socket = f->router;
        item->events = ZMQ_POLLIN;
    }
}

/* ---- replies in wire form ----------------------------------------------------------------- */

/* A HistoryReply being assembled. Fields may come in any order on the wire; the fixed ones
 * are written last, once the content is known. */
typedef struct {
    uint8_t *buf;
    size_t len, cap;
    int oom;       /* an allocation failed: the reply becomes an error */
    int truncated; /* an item did not fit under HISTORY_REPLY_MAX */
    uint64_t items;
    const char *tier; /* HistoryReply.tier: where the content came from (NULL: nothing) */
    int lean;         /* a window came from the recording's coarse tier (its lean copy) */
} history_reply_t;

static int reply_reserve(history_reply_t *b, size_t more)
{
    if (b->len + more <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more)
        cap *= 2;
    uint8_t *p = realloc(b->buf, cap);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->buf = p;
    b->cap = cap;
    return 0;
}

static void reply_varint(history_reply_t *b, uint32_t field, uint64_t v)
{
    if (reply_reserve(b, 20) == 0) {
        b->len += mw_wire_put_tag(b->buf + b->len, field, MW_WIRE_VARINT);
        b->len += mw_wire_put_varint(b->buf + b->len, v);
    }
}

/* Reserves room for a length-delimited field of `len` bytes and writes its tag and length.
 * Returns where the bytes go, or NULL when the reply would pass its cap (truncated) or memory
 * ran out. */
static uint8_t *reply_field(history_reply_t *b, uint32_t field, size_t len)
{
    if (b->len + len + 16 > HISTORY_REPLY_MAX) {
        b->truncated = 1;
        return NULL;
    }
    if (reply_reserve(b, len + 16) < 0)
        return NULL;
    b->len += mw_wire_put_tag(b->buf + b->len, field, MW_WIRE_LEN);
    b->len += mw_wire_put_varint(b->buf + b->len, len);
    uint8_t *p = b->buf + b->len;
    b->len += len;
    return p;
}

static int reply_bytes(history_reply_t *b, uint32_t field, const void *data, size_t len)
{
    uint8_t *p = reply_field(b, field, len);
    if (!p)
        return -1;
    memcpy(p, data, len);
    b->items++;
    return 0;
}

static int reply_message(history_reply_t *b, uint32_t field, const ProtobufCMessage *m)
{
    uint8_t *p = reply_field(b, field, protobuf_c_message_get_packed_size(m));
    if (!p)
        return -1;
    protobuf_c_message_pack(m, p);
    b->items++;
    return 0;
}

enum {
    REPLY_ID = 1,
    REPLY_ERROR = 2,
    REPLY_JOB = 3,
    REPLY_WINDOWS = 4,
    REPLY_SAMPLES = 5,
    REPLY_TRUNCATED = 6,
    REPLY_OLDEST = 7,
    REPLY_NEWEST = 8,
    REPLY_LATENESS = 9,
    REPLY_TIER = 10,
    REPLY_RANK_SUMS = 11
};

/* ---- the recording ------------------------------------------------------------------------ */

/* The reader of the recording that holds older windows (the one being written, flushed first,
 * or the one being replayed); NULL with a message in err when there is none. */
static mw_rec_reader_t *history_reader(mw_history_t *f, mw_collector_t *c, char *err, size_t errlen)
{
    const char *path = c->record ? mw__record_path(c->record) : c->opt->replay;
    if (!path) {
        snprintf(err, errlen, "there is no recording");
        return NULL;
    }
    if (c->record)
        mw__record_flush(c->record);
    if (f->reader && strcmp(f->reader_path, path) == 0)
        return f->reader;
    mw_rec_reader_close(f->reader);
    free(f->reader_path);
    f->reader = NULL;
    f->reader_path = strdup(path);
    char why[200] = "out of memory";
    if (f->reader_path && (f->reader = mw_rec_reader_open(path, why, sizeof why)))
        return f->reader;
    snprintf(err, errlen, "cannot read the recording %.200s: %s", path, why);
    MW_LOG(MW_LOG_DEBUG, "history: %s", err);
    return NULL;
}

/* Forgets the reader after an error, so that the next request opens the file again. */
static void history_reader_reset(mw_history_t *f)
{
    mw_rec_reader_close(f->reader);
    f->reader = NULL;
}

/* The first and last window of the recording; 0 when it has none (or cannot be read). */
static int history_rec_span(mw_rec_reader_t *rd, uint64_t *first, uint64_t *last)
{
    return mw_rec_reader_span(rd, first, last, NULL, NULL) == 1;
}

/* Appends the recorded windows first..last (those that exist) to the reply. Returns 0, or -1
 * with a message in err on a read error. */
static int history_rec_windows(mw_history_t *f, mw_rec_reader_t *rd, const char *job,
                               uint64_t first, uint64_t last, history_reply_t *b, char *err,
                               size_t errlen)
{
    uint64_t span_first, span_last;
    if (!history_rec_span(rd, &span_first, &span_last))
        return 0;
    if (first < span_first)
        first = span_first;
    if (last > span_last)
        last = span_last;
    uint64_t probes = 0, t0 = history_mono_ns(f);
    for (uint64_t k = first; k <= last && !b->truncated; k++) {
        if (++probes > HISTORY_MAX_WINDOWS ||
            (probes % 16 == 0 && history_mono_ns(f) - t0 > HISTORY_REQUEST_NS)) {
            b->truncated = 1;
            break;
        }
        uint64_t off;
        int rc = mw_rec_reader_find_window(rd, k, &off, NULL);
        if (rc == 0)
            continue; /* no window with data there */
        const Mpiwatch__Record *rec;
        if (rc < 0 || mw_rec_reader_seek(rd, off) < 0 ||
            mw_rec_reader_next(rd, &rec, NULL, err, errlen) != 1) {
            if (rc < 0 || !err[0])
                snprintf(err, errlen, "cannot read window %llu from the recording",
                         (unsigned long long)k);
            return -1;
        }
        if (rec->body_case != MPIWATCH__RECORD__BODY_WINDOW || !rec->window ||
            rec->window->index != k) {
            snprintf(err, errlen, "the recording's index for window %llu is wrong",
                     (unsigned long long)k);
            return -1;
        }
        /* Served as the feed published it: the traces' records, which the recording keeps
         * in the frames that brought them, put back; one not found there is sent as not
         * exact and counted (docs/recording.md "Traces"). */
        int bad = mw_rec_reader_resolve_window(rd, rec->window, job);
        if (bad < 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        f->st.trace_unresolved += (uint64_t)bad;
        b->lean |= mw_rec_reader_last_lean(rd);
        if (reply_message(b, REPLY_WINDOWS, &rec->window->base) == 0)
            f->st.from_recording++;
        if (k == UINT64_MAX)
            break;
    }
    return 0;
}

/* The first window of first..last that the recording has (at most HISTORY_MAX_WINDOWS probed,
 * none past its last window): 1 with the offsets of its Window frame and of the first sample
 * frame for it (0 when unknown), 0 when there is none, -1 with a message in err. */
static int history_rec_first_window(mw_rec_reader_t *rd, uint64_t first, uint64_t last,
                                    uint64_t span_last, uint64_t *woff, uint64_t *soff, char *err,
                                    size_t errlen)
{
    uint64_t probes = 0;
    for (uint64_t k = first; k <= last && k <= span_last && probes < HISTORY_MAX_WINDOWS;
         k++, probes++) {
        int rc = mw_rec_reader_find_window(rd, k, woff, soff);
        if (rc < 0) {
            snprintf(err, errlen, "cannot read the recording's index");
            return -1;
        }
        if (rc == 1)
            return 1;
    }
    return 0;
}

/* Appends the recorded samples of `rank` for windows first..last to the reply: the frames
 * the collector received, read forward from the first frame with a sample for the first
 * window until the Window frame of the last one. A frame is taken when it decodes, carries
 * this job's version and name, and its window follows the last one taken (the order the
 * collector itself accepts a rank's samples in). Returns 0, or -1 with a message in err. */
static int history_rec_samples(mw_history_t *f, mw_collector_t *c, mw_rec_reader_t *rd,
                               uint32_t rank, uint64_t first, uint64_t last, history_reply_t *b,
                               char *err, size_t errlen)
{
    uint64_t span_first, span_last;
    if (!history_rec_span(rd, &span_first, &span_last))
        return 0;
    if (first < span_first)
        first = span_first;
    if (first > last)
        return 0;
    /* Where to start: the first sample of the first window that exists in the range. */
    uint64_t woff, soff;
    int found = history_rec_first_window(rd, first, last, span_last, &woff, &soff, err, errlen);
    if (found <= 0)
        return found;
    uint64_t start = soff ? soff : mw_rec_reader_start(rd); /* unknown: from the beginning */
    if (!f->arena_ready) {
        if (mw_arena_init(&f->arena, 4 * (size_t)MW_MAX_MESSAGE_BYTES) < 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        f->arena_ready = 1;
    }
    if (mw_rec_reader_seek(rd, start) < 0) {
        snprintf(err, errlen, "cannot seek in the recording");
        return -1;
    }
    uint64_t scanned = 0, taken_last = 0, frames = 0, t0 = history_mono_ns(f);
    int taken = 0;
    for (;;) {
        if (++frames % 64 == 0 && history_mono_ns(f) - t0 > HISTORY_REQUEST_NS) {
            b->truncated = 1;
            break;
        }
        const Mpiwatch__Record *rec;
        uint64_t off;
        int rc = mw_rec_reader_next(rd, &rec, &off, err, errlen);
        if (rc < 0)
            return -1;
        if (rc == 0)
            break;
        if (rec->body_case == MPIWATCH__RECORD__BODY_WINDOW && rec->window &&
            rec->window->index >= last)
            break;
        if (rec->body_case != MPIWATCH__RECORD__BODY_MESSAGE || rec->parts > 1)
            continue;
        scanned += rec->message.len;
        if (scanned > HISTORY_SCAN_MAX) {
            b->truncated = 1;
            break;
        }
        uint32_t r;
        if (!mw_rec_envelope_rank(rec->message.data, rec->message.len, &r) || r != rank)
            continue;
        const Mpiwatch__Envelope *env =
            mw_envelope_decode(&f->arena, rec->message.data, rec->message.len);
        if (!env || env->version != MW_PROTO_VERSION || env->rank != rank ||
            env->body_case != MPIWATCH__ENVELOPE__BODY_SAMPLE || !env->sample || !env->job ||
            strcmp(env->job, c->job.job) != 0)
            continue;
        uint64_t w = env->sample->window;
        if (w < first || w > last || (taken && w <= taken_last))
            continue;
        if (reply_bytes(b, REPLY_SAMPLES, rec->message.data, rec->message.len) < 0)
            break;
        taken = 1;
        taken_last = w;
        f->st.from_recording++;
    }
    return 0;
}

/* Appends rank `rank`'s share of every RecordRanks that overlaps windows first..last (the
 * coarse tier, where the samples were dropped: docs/recording.md "Tiers"), read forward from
 * the first window of the range the recording has. The frame that sums a window is written
 * after it, before the next frame's first window: reading stops at the first frame that reaches
 * `last` or starts after it. Within the budgets of a request (HISTORY_REQUEST_NS, the reply's
 * size: `truncated`; the client asks again after the last frame's last_window). Returns 0, or
 * -1 with a message in err. */
static int history_rec_rank_sums(mw_history_t *f, mw_rec_reader_t *rd, uint32_t rank,
                                 uint64_t first, uint64_t last, history_reply_t *b, char *err,
                                 size_t errlen)
{
    uint64_t span_first, span_last, start;
    if (!history_rec_span(rd, &span_first, &span_last))
        return 0;
    if (first < span_first)
        first = span_first;
    int found = history_rec_first_window(rd, first, last, span_last, &start, NULL, err, errlen);
    if (found <= 0)
        return found;
    if (mw_rec_reader_seek(rd, start) < 0) {
        snprintf(err, errlen, "cannot seek in the recording");
        return -1;
    }
    uint64_t frames = 0, t0 = history_mono_ns(f);
    while (!b->truncated) {
        if (++frames % 16 == 0 && history_mono_ns(f) - t0 > HISTORY_REQUEST_NS) {
            b->truncated = 1;
            break;
        }
        const Mpiwatch__Record *rec;
        int rc = mw_rec_reader_next(rd, &rec, NULL, err, errlen);
        if (rc < 0)
            return -1;
        if (rc == 0)
            break;
        if (rec->body_case != MPIWATCH__RECORD__BODY_RANKS || !rec->ranks)
            continue;
        const Mpiwatch__RecordRanks *rk = rec->ranks;
        if (rk->first_window > last)
            break;
        if (rk->last_window < first)
            continue;
        if (mw_rec_ranks_check(rk)) {
            f->st.sums_refused++;
        } else {
            size_t n = mw_rec_ranks_one(rk, rank, &f->one, &f->one_cap);
            if (!n) {
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            if (reply_bytes(b, REPLY_RANK_SUMS, f->one, n) < 0)
                break;
            f->st.from_recording++;
        }
        if (rk->last_window >= last)
            break;
    }
    return 0;
}

/* ---- answering ---------------------------------------------------------------------------- */

/* 1 when the collector has a recording to read older windows from. */
static int history_has_recording(const mw_collector_t *c)
{
    return c->record || c->opt->replay;
}

/* Oldest and newest windows that can be asked for: the newest closed one kept, the oldest
 * in the recording or else in memory. */
static void history_bounds(mw_history_t *f, mw_collector_t *c, uint64_t *oldest, uint64_t *newest)
{
    const history_ring_t *w = &f->windows;
    *oldest = w->n ? ring_at(w, 0)->key : 0;
    *newest = w->n ? ring_at(w, w->n - 1)->key : 0;
    if (!w->n && w->evicted)
        *newest = w->evicted_key;
    char err[64];
    uint64_t first, last;
    mw_rec_reader_t *rd = history_has_recording(c) ? history_reader(f, c, err, sizeof err) : NULL;
    if (rd && history_rec_span(rd, &first, &last)) {
        if (!w->n || first < *oldest)
            *oldest = first;
        if (!w->n && !w->evicted)
            *newest = last;
    }
}

/* Windows first..last: the part older than the ring from the recording, the rest from
 * memory. Returns 0, or -1 with a message in err. */
static int history_answer_windows(mw_history_t *f, mw_collector_t *c, uint64_t first, uint64_t last,
                                  history_reply_t *b, char *err, size_t errlen)
{
    history_ring_t *w = &f->windows;
    if (first > last) {
        snprintf(err, errlen, "empty range %llu..%llu", (unsigned long long)first,
                 (unsigned long long)last);
        return -1;
    }
    uint64_t mem_oldest = w->n ? ring_at(w, 0)->key : 0;
    if (!w->n || first < mem_oldest) {
        uint64_t old_last = w->n && last >= mem_oldest ? mem_oldest - 1 : last;
        if (history_has_recording(c)) {
            mw_rec_reader_t *rd = history_reader(f, c, err, errlen);
            if (!rd)
                return -1;
            if (history_rec_windows(f, rd, c->job.job[0] ? c->job.job : NULL, first, old_last, b,
                                    err, errlen) < 0) {
                history_reader_reset(f);
                return -1;
            }
            /* The recording's merged windows (docs/recording.md, Tiers): "coarse" when one of
             * them is a lean copy, its per-rank content dropped with the samples. */
            b->tier = b->lean ? "coarse" : "windows";
        } else if (w->evicted && first <= w->evicted_key) {
            /* Windows that were kept once and are gone (evicted, or of an earlier job). */
            snprintf(err, errlen,
                     "windows %llu..%llu are no longer in memory (the oldest kept is %llu) and "
                     "there is no recording to read them from",
                     (unsigned long long)first,
                     (unsigned long long)(old_last < w->evicted_key ? old_last : w->evicted_key),
                     (unsigned long long)mem_oldest);
            return -1;
        }
    }
    for (uint64_t i = ring_lower_bound(w, first); i < w->n && !b->truncated; i++) {
        const history_entry_t *e = ring_at(w, i);
        if (e->key > last)
            break;
        reply_bytes(b, REPLY_WINDOWS, ring_item(w, e), e->len);
        if (!b->tier)
            b->tier = "memory";
    }
    return 0;
}

/* The last n closed windows: from memory, and when n is larger the ones just before it from
 * the recording, counted by index (a job's windows follow each other on the grid). */
static int history_answer_last(mw_history_t *f, mw_collector_t *c, uint64_t n, history_reply_t *b,
                               char *err, size_t errlen)
{
    history_ring_t *w = &f->windows;
    if (n == 0)
        return 0;
    if (w->n >= n)
        return history_answer_windows(f, c, ring_at(w, w->n - n)->key, ring_at(w, w->n - 1)->key, b,
                                      err, errlen);
    uint64_t newest, first;
    if (w->n) {
        newest = ring_at(w, w->n - 1)->key;
        uint64_t oldest = ring_at(w, 0)->key, more = n - w->n;
        first = more > oldest ? 0 : oldest - more;
    } else {
        uint64_t span_first;
        mw_rec_reader_t *rd;
        if (w->evicted)
            newest = w->evicted_key;
        else if (!history_has_recording(c))
            return 0; /* nothing has closed yet */
        else if (!(rd = history_reader(f, c, err, errlen)))
            return -1;
        else if (!history_rec_span(rd, &span_first, &newest))
            return 0;
        first = n - 1 > newest ? 0 : newest - (n - 1);
    }
    return history_answer_windows(f, c, first, newest, b, err, errlen);
}

/* Samples of `rank` for windows first..last, in window order. */
static int history_answer_rank(mw_history_t *f, mw_collector_t *c, const Mpiwatch__RankRange *q,
                               history_reply_t *b, char *err, size_t errlen)
{
    history_ring_t *s = &f->samples;
    if (q->first > q->last) {
        snprintf(err, errlen, "empty range %llu..%llu", (unsigned long long)q->first,
                 (unsigned long long)q->last);
        return -1;
    }
    if (c->job.active && q->rank >= c->job.size) {
        snprintf(err, errlen, "rank %u is not in the job (%u ranks)", q->rank, c->job.size);
        return -1;
    }
    /* Every sample of a window from mem_from on is in memory: those after the newest that
     * left, or all since the ring began (which is later than the job's start when a replay
     * attaches the feed at --from). Earlier windows come from the recording. */
    uint64_t mem_from = s->evicted ? s->evicted_key + 1 : s->pushed ? s->min_key : UINT64_MAX;
    if (s->evicted && s->evicted_key == UINT64_MAX)
        mem_from = UINT64_MAX;
    uint64_t mem_first = q->first;
    if (q->first < mem_from) {
        uint64_t old_last = q->last < mem_from - 1 ? q->last : mem_from - 1;
        if (history_has_recording(c)) {
            mw_rec_reader_t *rd = history_reader(f, c, err, errlen);
            if (!rd)
                return -1;
            if (history_rec_samples(f, c, rd, q->rank, q->first, old_last, b, err, errlen) < 0) {
                history_reader_reset(f);
                return -1;
            }
            /* Samples dropped from the recording (its tiers): the rank's content there is in
             * the coarse tier's per-rank sums, and the reply says so. */
            int dropped = mw_rec_reader_tier(rd, q->first, old_last, NULL) == 1;
            if (dropped &&
                history_rec_rank_sums(f, rd, q->rank, q->first, old_last, b, err, errlen) < 0) {
                history_reader_reset(f);
                return -1;
            }
            b->tier = dropped ? "coarse" : "raw";
            if (old_last == UINT64_MAX)
                return 0;
            mem_first = old_last + 1;
        } else if (s->evicted) {
            snprintf(err, errlen,
                     "samples of windows up to %llu are no longer in memory and there is no "
                     "recording to read them from",
                     (unsigned long long)s->evicted_key);
            return -1;
        }
    }
    if (!b->tier && q->last >= mem_first)
        b->tier = "memory";
    for (uint64_t i = 0; i < s->n && !b->truncated; i++) {
        const history_entry_t *e = ring_at(s, i);
        if (e->rank == q->rank && e->key >= mem_first && e->key <= q->last)
            reply_bytes(b, REPLY_SAMPLES, ring_item(s, e), e->len);
    }
    return 0;
}

/* Builds the reply to a decoded request into b. Returns 0, or -1 with the error in err. */
static int history_answer(mw_history_t *f, mw_collector_t *c, const Mpiwatch__HistoryRequest *q,
                          history_reply_t *b, char *err, size_t errlen)
{
    switch (q->what_case) {
    case MPIWATCH__HISTORY_REQUEST__WHAT_LAST:
        return history_answer_last(f, c, q->last, b, err, errlen);
    case MPIWATCH__HISTORY_REQUEST__WHAT_RANGE:
        if (!q->range) {
            snprintf(err, errlen, "a range request without a range");
            return -1;
        }
        return history_answer_windows(f, c, q->range->first, q->range->last, b, err, errlen);
    case MPIWATCH__HISTORY_REQUEST__WHAT_RANK_SAMPLES:
        if (!q->rank_samples) {
            snprintf(err, errlen, "a rank request without a range");
            return -1;
        }
        return history_answer_rank(f, c, q->rank_samples, b, err, errlen);
    case MPIWATCH__HISTORY_REQUEST__WHAT_LATENESS: {
        /* The last N lateness batches of the job, from memory only (older ones are in the
         * recording: mpiwatch-export --format lateness). */
        history_ring_t *l = &f->lateness;
        uint64_t n = q->lateness < l->n ? q->lateness : l->n;
        for (uint64_t i = l->n - n; i < l->n && !b->truncated; i++) {
            const history_entry_t *e = ring_at(l, i);
            reply_bytes(b, REPLY_LATENESS, ring_item(l, e), e->len);
        }
        return 0;
    }
    case MPIWATCH__HISTORY_REQUEST__WHAT_JOB:
        if (!f->job) {
            snprintf(err, errlen, "no job has started yet");
            return -1;
        }
        reply_bytes(b, REPLY_JOB, f->job, f->job_len);
        return 0;
    default:
        snprintf(err, errlen, "the request asks for nothing");
        return -1;
    }
}

static void history_free(void *data, void *hint)
{
    (void)hint;
    free(data);
}

/* Sends [identity, (empty,) reply]. The reply's buffer is handed to libzmq, which frees it
 * once sent (a reply may be tens of MiB: it is not copied). */
static void history_reply_send(mw_history_t *f, const zmq_msg_t *id, int delimiter,
                               history_reply_t *b)
{
    zmq_msg_t body;
    if (zmq_msg_init_data(&body, b->buf, b->len, history_free, NULL) != 0) {
        MW_LOG(MW_LOG_DEBUG, "history: zmq_msg_init_data: %s", zmq_strerror(zmq_errno()));
        free(b->buf);
        f->st.reply_failed++;
        return;
    }
    /* ROUTER never blocks and, without ZMQ_ROUTER_MANDATORY, drops a reply to a client that
     * has gone or stopped reading; these calls fail only on a real error. */
    if (zmq_send(f->router, zmq_msg_data((zmq_msg_t *)id), zmq_msg_size(id),
                 ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
        (delimiter && zmq_send(f->router, "", 0, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) ||
        zmq_msg_send(&body, f->router, ZMQ_DONTWAIT) < 0) {
        MW_LOG(MW_LOG_DEBUG, "history: cannot send a reply: %s", zmq_strerror(zmq_errno()));
        zmq_msg_close(&body);
        f->st.reply_failed++;
        return;
    }
    f->st.answered++;
}

/* Answers one request whose envelope is usable (identity, optional empty delimiter). Requests
 * that cannot be decoded or ask for nothing are counted by reason; a well-formed request that
 * cannot be answered (a window no longer kept, an empty range) only gets its error. Both are
 * answered with an error message and no content. */
static void history_request(mw_history_t *f, mw_collector_t *c, const zmq_msg_t *id, int delimiter,
                            const zmq_msg_t *body)
{
    char err[512] = "";
    int bad = -1;
    Mpiwatch__HistoryRequest *q = NULL;
    size_t len = zmq_msg_size(body);
    f->st.requests++;
    if (len > HISTORY_REQUEST_MAX) {
        bad = HISTORY_BAD_TOO_LARGE;
        snprintf(err, sizeof err, "a request of %zu bytes is larger than the limit of %u bytes",
                 len, HISTORY_REQUEST_MAX);
    } else if (!(q = mpiwatch__history_request__unpack(NULL, len,
                                                       zmq_msg_data((zmq_msg_t *)body)))) {
        bad = HISTORY_BAD_DECODE;
        snprintf(err, sizeof err, "the request is not a HistoryRequest");
    } else if (q->what_case == MPIWATCH__HISTORY_REQUEST__WHAT__NOT_SET) {
        bad = HISTORY_BAD_EMPTY;
        snprintf(err, sizeof err, "the request asks for nothing");
    }

    history_reply_t b = {0};
    if (bad < 0 && history_answer(f, c, q, &b, err, sizeof err) < 0 && !err[0])
        snprintf(err, sizeof err, "cannot answer the request");
    if (b.oom && !err[0])
        snprintf(err, sizeof err, "out of memory");
    if (err[0]) {
        b.len = 0; /* an error reply carries no content */
        b.truncated = 0;
        b.oom = 0;
        f->st.errors++;
        if (bad >= 0)
            f->st.bad[bad]++;
        MW_LOG(MW_LOG_DEBUG, "history: request answered with an error: %s", err);
    }
    uint64_t oldest, newest;
    history_bounds(f, c, &oldest, &newest);
    if (q && q->id)
        reply_varint(&b, REPLY_ID, q->id);
    if (err[0]) {
        size_t el = strlen(err);
        uint8_t *p = reply_field(&b, REPLY_ERROR, el);
        if (p)
            memcpy(p, err, el);
    }
    if (b.truncated) {
        reply_varint(&b, REPLY_TRUNCATED, 1);
        f->st.truncated++;
    }
    if (oldest)
        reply_varint(&b, REPLY_OLDEST, oldest);
    if (newest)
        reply_varint(&b, REPLY_NEWEST, newest);
    if (!err[0] && b.tier) {
        size_t tl = strlen(b.tier);
        uint8_t *p = reply_field(&b, REPLY_TIER, tl);
        if (p)
            memcpy(p, b.tier, tl);
    }
    if (q)
        mpiwatch__history_request__free_unpacked(q, NULL);
    if (!b.oom && !b.buf)
        reply_reserve(&b, 1); /* an empty reply still needs a buffer to hand over */
    if (b.oom) {
        free(b.buf);
        f->st.reply_failed++;
        return;
    }
    history_reply_send(f, id, delimiter, &b);
}

void mw__history_serve(mw_history_t *f, mw_collector_t *c)
{
    if (!f)
        return;
    uint64_t t0 = history_mono_ns(f);
    for (int i = 0; i < HISTORY_BATCH && history_mono_ns(f) - t0 < HISTORY_WAKEUP_NS; i++) {
        zmq_msg_t msgs[3];
        int kept;
        int parts = mw__zsock_recv(f->router, msgs, &kept, "history");
        if (parts <= 0) {
            mw__zsock_close(msgs, kept);
            return;
        }
        int delimiter = parts == 3;
        if (!mw__zsock_envelope_ok(msgs, parts)) {
            f->st.bad[HISTORY_BAD_FRAMES]++;
            MW_LOG(MW_LOG_DEBUG, "history: dropped a request of %d frames", parts);
        } else {
            history_request(f, c, &msgs[0], delimiter, &msgs[parts - 1]);
        }
        mw__zsock_close(msgs, kept);
    }
}
