/* mw_trace.c: the wire encoding of per-call trace records (mw_trace.h, docs/trace.md "Wire
 * format"): a block of columns, optionally compressed with zstd as a whole.
 *
 * DESIGN: a record is predicted from the records before it in the block, and only what the
 * prediction misses is written. Three things make a realistic trace cost about 5 bytes per
 * call before zstd (bench/trace-codec.c):
 *   - an op dictionary: each distinct (kind, flags, function, thread, communicator) of the
 *     block is one entry, written once with the fields its records carry (a field that is at
 *     its default in every record of the entry, such as the duration of a completion or the
 *     tag of a collective, is never written); a record starts with one varint, its entry's
 *     index (most frequent first) and three bits: how its start relates to the end of the
 *     previous record (equal, later by d, earlier by d) and whether all its message fields
 *     equal their predictions (a "hit": nothing else is written for them; otherwise a mask
 *     of the fields that miss, and only their differences);
 *   - predictions that follow MPI's structure: a request number is the previous post's + 1,
 *     a completion's is the previous completion's + 1; a completion takes peer, tag, bytes and
 *     index from its post in the block (found by request number), except MPI_ANY_SOURCE and
 *     MPI_ANY_TAG; a post's peer is the one that followed the previous peer last time (a
 *     stencil's neighbours in their order), its tag the last one used with that peer; bytes and
 * channel index come from the last message on the same (direction, communicator, peer, tag), the
 * index + 1; a collective's instance is the communicator's previous one + 1;
 *   - communicator ids (64-bit hashes) only in a dictionary, 8 bytes once per block.
 * A field that misses is written as the zigzag varint of its difference to the prediction
 * (modulo its width, so every value round-trips, INT64_MIN starts and UINT64_MAX bytes too).
 *
 * The block: format byte (1), varint count, varint ncomm and ncomm 64-bit little-endian ids
 * (index 0 is "no communicator"), varint nops and per op: kind | flags << 4, fn, thread,
 * communicator index, field mask; then the byte lengths of the 9 columns (op words, start,
 * duration, miss masks, request, peer, tag, bytes, index) and the columns. docs/trace.md has the
 * figures.
 *
 * Decoding trusts nothing: every count is checked against `count` and the caps before
 * anything is allocated, a zstd frame must declare exactly `raw_bytes` (at most what `count`
 * records can take) and decompress into a buffer of that size, varints must be minimal and
 * fit their field, every index must be in range, every column must be consumed exactly. The
 * predictions' hash tables are seeded at random per process, so crafted records cannot make
 * their probes long; their results never depend on the seed.
 */
#include "mw_trace.h"
#include "mw_fn_def.h"
#include "mw_limits.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <zstd.h>

/* Function ids: the rows of the table + 1 (mw_proto.h's MW_FN_COUNT, without protobuf-c), and
 * the extras beyond them (mw_proto.h's MW_FN_SPACE): a job's ids, which records carry once the
 * collector has translated them (docs/function-table.md), are below FN_SPACE. */
enum {
#define MW_FN(name, ...) FN_ROW_##name, /* any number of columns */
#include MW_FN_TABLE_DEF
#undef MW_FN
    FN_ROWS
};
#define FN_SPACE (FN_ROWS + 1u + MW_FN_EXTRA)

#define FORMAT 1u
#define NCOLS 9
enum { C_OP, C_START, C_DUR, C_MISS, C_REQ, C_PEER, C_TAG, C_BYTES, C_SEQ };
/* Field mask of an op entry: which fields its records carry (else the default). */
enum { M_DUR = 1, M_REQ = 2, M_PEER = 4, M_TAG = 8, M_BYTES = 16, M_SEQ = 32, M_ALL = 63 };
#define M_MSG (M_REQ | M_PEER | M_TAG | M_BYTES | M_SEQ)
/* Op word: index << 3 | hit << 2 | start code. */
enum { S_SAME = 0, S_LATER = 1, S_EARLIER = 2 };
#define OP_HIT 4u
/* The most bytes one record and its dictionary share can take in a block (what a
 * reader accepts as raw_bytes for a count): op word 4, start 10, duration 10, miss mask 1,
 * request 5, peer 5, tag 5, bytes 10, index 10; an op entry 2 + 3 + 5 + 3 + 1; a communicator
 * 8. */
#define REC_BOUND 96u
#define HDR_BOUND 64u

static uint64_t raw_bound(uint32_t count)
{
    return HDR_BOUND + (uint64_t)REC_BOUND * count;
}

/* ---- zstd contexts ---------------------------------------------------------------------------
 * One compression and one decompression context per thread, made on first use and freed when
 * the thread ends (a pthread key's destructor): a context costs more to make than a small
 * window to code. */

static pthread_key_t zkey;
static pthread_once_t zkey_once = PTHREAD_ONCE_INIT;
static int zkey_ok;

typedef struct {
    ZSTD_CCtx *c;
    ZSTD_DCtx *d;
} zctx_t;

static void zctx_free(void *p)
{
    zctx_t *z = p;
    ZSTD_freeCCtx(z->c);
    ZSTD_freeDCtx(z->d);
    free(z);
}

static void zkey_init(void)
{
    zkey_ok = pthread_key_create(&zkey, zctx_free) == 0;
}

/* This thread's contexts, or NULL (no memory: the caller makes a context of its own). */
static zctx_t *zctx_get(void)
{
    pthread_once(&zkey_once, zkey_init);
    if (!zkey_ok)
        return NULL;
    zctx_t *z = pthread_getspecific(zkey);
    if (!z) {
        z = calloc(1, sizeof *z);
        if (!z)
            return NULL;
        if (pthread_setspecific(zkey, z) != 0) {
            free(z);
            return NULL;
        }
    }
    return z;
}

static size_t z_compress(void *dst, size_t cap, const void *src, size_t len, int level)
{
    zctx_t *z = zctx_get();
    if (z && !z->c)
        z->c = ZSTD_createCCtx();
    if (!z || !z->c)
        return ZSTD_compress(dst, cap, src, len, level);
    return ZSTD_compressCCtx(z->c, dst, cap, src, len, level);
}

static size_t z_decompress(void *dst, size_t cap, const void *src, size_t len)
{
    zctx_t *z = zctx_get();
    if (z && !z->d)
        z->d = ZSTD_createDCtx();
    if (!z || !z->d)
        return ZSTD_decompress(dst, cap, src, len);
    return ZSTD_decompressDCtx(z->d, dst, cap, src, len);
}

/* ---- small helpers ------------------------------------------------------------------------ */

static inline uint64_t zz64(uint64_t d)
{
    return (d << 1) ^ (uint64_t) - (int64_t)(d >> 63);
}
static inline uint64_t unzz64(uint64_t v)
{
    return (v >> 1) ^ (uint64_t) - (int64_t)(v & 1);
}
static inline uint32_t zz32(uint32_t d)
{
    return (d << 1) ^ (uint32_t) - (int32_t)(d >> 31);
}
static inline uint32_t unzz32(uint32_t v)
{
    return (v >> 1) ^ (uint32_t) - (int32_t)(v & 1);
}

static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

typedef struct {
    const uint8_t *p, *end;
} rd_t;

/* Reads a minimal varint of at most 64 bits: 0, or -1 (truncated, overlong, not minimal). */
static int get_varint_slow(rd_t *r, uint64_t *v)
{
    uint64_t x = 0;
    const uint8_t *p = r->p;
    for (unsigned i = 0; i < 10; i++) {
        if (p == r->end)
            return -1;
        uint8_t b = *p++;
        if (i == 9 && b > 1)
            return -1; /* more than 64 bits */
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            if (b == 0 && i > 0)
                return -1; /* not minimal */
            r->p = p;
            *v = x;
            return 0;
        }
    }
    return -1;
}

static inline __attribute__((always_inline)) int get_varint(rd_t *r, uint64_t *v)
{
    if (__builtin_expect(r->p < r->end && *r->p < 0x80, 1)) {
        *v = *r->p++;
        return 0;
    }
    return get_varint_slow(r, v);
}

/* v > max, without -Wtype-limits for max == UINT64_MAX */
static inline int over(uint64_t v, uint64_t max)
{
    return v > max;
}

/* ---- hash tables of the predictions ---------------------------------------------------------
 * Open addressing, linear probing, at most half full (sized from the records that may insert).
 * The seed only places entries; lookups compare whole keys, so results never depend on it. */

static _Atomic uint64_t hash_seed;

static uint64_t seed_get(void)
{
    uint64_t s = atomic_load_explicit(&hash_seed, memory_order_relaxed);
    if (__builtin_expect(s != 0, 1))
        return s;
    if (getrandom(&s, sizeof s, GRND_NONBLOCK) != (ssize_t)sizeof s) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        s = (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uintptr_t)&ts;
    }
    s |= 1;
    atomic_store_explicit(&hash_seed, s, memory_order_relaxed);
    return s;
}

static inline uint64_t mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    k ^= k >> 33;
    return k;
}

typedef struct {
    uint32_t req, idx; /* req 0: empty */
} req_ent_t;
typedef struct {
    uint64_t key; /* (op + 1) << 32 | peer; 0: empty */
    int32_t next, tag;
} np_ent_t;
typedef struct {
    uint64_t k1, k2; /* k1: 1 << 63 | comm << 2 | dir (0: empty); k2: peer << 32 | tag */
    uint64_t seq, bytes;
} ch_ent_t;

static size_t pow2_for(size_t n)
{
    size_t c = 16;
    while (c < 2 * n)
        c <<= 1;
    return c;
}

/* An op dictionary entry with its prediction state. */
typedef struct {
    uint8_t kind, flags, mask;
    uint16_t fn;
    uint32_t thread, comm; /* comm: dictionary index */
    uint32_t count;        /* encoder: records */
    int32_t last_peer, last_tag;
    uint64_t last_bytes, last_seq;
    np_ent_t *last_np;
} trace_op_t;

typedef struct {
    uint64_t seed;
    req_ent_t *req;
    size_t req_mask;
    np_ent_t *np;
    size_t np_mask;
    ch_ent_t *ch;
    size_t ch_mask;
    uint64_t *coll_seq; /* per communicator index */
    uint32_t last_post_req, last_done_req;
    uint64_t prev_end;
    void *mem;
} trace_model_t;

static int model_init(trace_model_t *m, size_t nreq, size_t nnp, size_t nch, size_t ncomm)
{
    size_t rc = pow2_for(nreq), nc = pow2_for(nnp), cc = pow2_for(nch);
    size_t bytes = rc * sizeof(req_ent_t) + nc * sizeof(np_ent_t) + cc * sizeof(ch_ent_t) +
                   (ncomm + 1) * sizeof(uint64_t);
    unsigned char *mem = calloc(1, bytes);
    if (!mem)
        return -1;
    m->seed = seed_get();
    m->mem = mem;
    m->ch = (ch_ent_t *)mem;
    m->ch_mask = cc - 1;
    mem += cc * sizeof(ch_ent_t);
    m->np = (np_ent_t *)mem;
    m->np_mask = nc - 1;
    mem += nc * sizeof(np_ent_t);
    m->coll_seq = (uint64_t *)mem;
    mem += (ncomm + 1) * sizeof(uint64_t);
    m->req = (req_ent_t *)mem;
    m->req_mask = rc - 1;
    for (size_t i = 0; i <= ncomm; i++)
        m->coll_seq[i] = UINT64_MAX; /* the first instance is predicted 0 */
    m->last_post_req = 0;
    m->last_done_req = 0;
    m->prev_end = 0;
    return 0;
}

static inline uint32_t req_find(const trace_model_t *m, uint32_t req, int *found)
{
    size_t i = mix(req ^ m->seed) & m->req_mask;
    for (;;) {
        const req_ent_t *e = &m->req[i];
        if (e->req == req) {
            *found = 1;
            return e->idx;
        }
        if (e->req == 0) {
            *found = 0;
            return 0;
        }
        i = (i + 1) & m->req_mask;
    }
}

static inline void req_put(trace_model_t *m, uint32_t req, uint32_t idx)
{
    size_t i = mix(req ^ m->seed) & m->req_mask;
    while (m->req[i].req != 0 && m->req[i].req != req)
        i = (i + 1) & m->req_mask;
    m->req[i].req = req;
    m->req[i].idx = idx;
}

static inline np_ent_t *np_get(trace_model_t *m, uint32_t op, int32_t peer, int32_t last_tag)
{
    uint64_t key = (uint64_t)(op + 1) << 32 | (uint32_t)peer;
    size_t i = mix(key ^ m->seed) & m->np_mask;
    for (;;) {
        np_ent_t *e = &m->np[i];
        if (e->key == key)
            return e;
        if (e->key == 0) {
            e->key = key;
            e->next = peer;
            e->tag = last_tag;
            return e;
        }
        i = (i + 1) & m->np_mask;
    }
}

static inline ch_ent_t *ch_get(trace_model_t *m, unsigned dir, uint32_t comm, int32_t peer,
                               int32_t tag, uint64_t last_bytes)
{
    uint64_t k1 = 1ull << 63 | (uint64_t)comm << 2 | dir;
    uint64_t k2 = (uint64_t)(uint32_t)peer << 32 | (uint32_t)tag;
    size_t i = mix(k1 ^ mix(k2 ^ m->seed)) & m->ch_mask;
    for (;;) {
        ch_ent_t *e = &m->ch[i];
        if (e->k1 == k1 && e->k2 == k2)
            return e;
        if (e->k1 == 0) {
            e->k1 = k1;
            e->k2 = k2;
            e->seq = UINT64_MAX;
            e->bytes = last_bytes;
            return e;
        }
        i = (i + 1) & m->ch_mask;
    }
}

/* Which tables a kind uses. */
static inline int is_done(unsigned k)
{
    return k == MW_TK_SEND_DONE || k == MW_TK_RECV_DONE || k == MW_TK_COLL_DONE;
}
static inline int is_post(unsigned k)
{
    return k == MW_TK_ISEND || k == MW_TK_IRECV || k == MW_TK_ICOLL;
}
static inline int is_p2p(unsigned k)
{
    return k >= MW_TK_SEND && k <= MW_TK_RECV_DONE;
}
/* Channel direction of a point-to-point kind (posts of receives apart: their peer and tag may
 * be MW_TRACE_ANY and their index is not a message's). */
static inline unsigned chan_dir(unsigned k)
{
    switch (k) {
    case MW_TK_SEND:
    case MW_TK_ISEND:
        return 0;
    case MW_TK_RECV:
    case MW_TK_RECV_DONE:
        return 1;
    case MW_TK_IRECV:
        return 2;
    default:
        return 3;
    }
}

/* Table sizes for a block: records that may insert into each table. */
typedef struct {
    size_t req, np, ch;
} trace_sizes_t;

static inline void sizes_add(trace_sizes_t *s, const trace_op_t *o)
{
    if (is_post(o->kind) && (o->mask & M_REQ))
        s->req++;
    if (o->mask & M_PEER)
        s->np++;
    if (is_p2p(o->kind))
        s->ch++;
}

/* ---- one record, both ways --------------------------------------------------------------------
 * The same code predicts in the encoder and the decoder (enc is a constant in each caller), so
 * the two cannot disagree. In the decoder, `w` is the record's op word and the fields come from
 * the columns; in the encoder the record is given and the op word and deltas are produced. */

typedef struct {
    rd_t col[NCOLS];
} cols_rd_t;
typedef struct {
    uint8_t *col[NCOLS];
} cols_wr_t;

#define FAIL(msg)                                                                                  \
    do {                                                                                           \
        *why = (msg);                                                                              \
        return -1;                                                                                 \
    } while (0)

static inline __attribute__((always_inline)) int
rec_code(trace_model_t *m, trace_op_t *ops, uint32_t opi, uint32_t w, mw_trace_rec_t *recs,
         size_t i, cols_rd_t *rd, cols_wr_t *wr, const int enc, const char **why)
{
    trace_op_t *o = &ops[opi];
    mw_trace_rec_t *r = &recs[i];
    const unsigned kind = o->kind, mask = o->mask;
    uint64_t v;

    /* start, against the end of the previous record (modulo 2^64) */
    uint64_t start;
    unsigned scode = 0;
    if (enc) {
        uint64_t d = (uint64_t)r->start_ns - m->prev_end;
        if (d == 0) {
            scode = S_SAME;
        } else if (d <= (uint64_t)INT64_MAX) {
            scode = S_LATER;
            wr->col[C_START] = put_varint(wr->col[C_START], d);
        } else {
            scode = S_EARLIER;
            wr->col[C_START] = put_varint(wr->col[C_START], -d);
        }
        start = (uint64_t)r->start_ns;
    } else {
        scode = w & 3u;
        start = m->prev_end;
        if (scode != S_SAME) {
            if (get_varint(&rd->col[C_START], &v))
                FAIL("start column truncated or bad varint");
            if (scode == S_LATER) {
                if (v == 0 || v > (uint64_t)INT64_MAX)
                    FAIL("start delta out of range");
                start += v;
            } else {
                if (v == 0 || v > (uint64_t)INT64_MAX + 1)
                    FAIL("start delta out of range");
                start -= v;
            }
        }
        r->start_ns = (int64_t)start;
    }

    uint64_t dur = 0;
    if (mask & M_DUR) {
        if (enc) {
            dur = r->dur_ns;
            wr->col[C_DUR] = put_varint(wr->col[C_DUR], dur);
        } else {
            if (get_varint(&rd->col[C_DUR], &dur))
                FAIL("duration column truncated or bad varint");
        }
    }
    if (!enc)
        r->dur_ns = dur;
    m->prev_end = start + dur;

    if (!(mask & M_MSG)) {
        if (!enc) {
            r->req = 0;
            r->peer = -1;
            r->tag = 0;
            r->bytes = 0;
            r->seq = 0;
        }
    } else {
        /* the fields that miss their prediction: a mask in the miss column when the op word
         * says "not a hit" (never empty, only fields the op carries) */
        unsigned miss = 0;
        if (!enc && !(w & OP_HIT)) {
            if (get_varint(&rd->col[C_MISS], &v))
                FAIL("miss column truncated or bad varint");
            if (v == 0 || (v & ~(uint64_t)(mask & M_MSG)))
                FAIL("bad miss mask");
            miss = (unsigned)v;
        }
        uint32_t dreq = 0, dpeer = 0, dtag = 0;
        uint64_t dbytes = 0, dseq = 0;

/* One field: predicted `pred`, actual into `out` (enc: from `src`, noting the delta). */
#define FIELD(MBIT, COL, T, ZZ, UNZZ, MAXV, pred, src, dvar, out, dflt, name)                      \
    do {                                                                                           \
        if (mask & (MBIT)) {                                                                       \
            T p_ = (T)(pred);                                                                      \
            if (enc) {                                                                             \
                (out) = (src);                                                                     \
                dvar = ZZ((T)((T)(out)-p_));                                                       \
                miss |= dvar != 0 ? (MBIT) : 0u;                                                   \
            } else if (!(miss & (MBIT))) {                                                         \
                (out) = p_;                                                                        \
            } else {                                                                               \
                if (get_varint(&rd->col[COL], &v))                                                 \
                    FAIL(name " column truncated or bad varint");                                  \
                if (over(v, MAXV))                                                                 \
                    FAIL(name " delta out of range");                                              \
                (out) = (T)(p_ + UNZZ((T)v));                                                      \
            }                                                                                      \
        } else {                                                                                   \
            (out) = (dflt);                                                                        \
        }                                                                                          \
    } while (0)

        const int done = is_done(kind);
        uint32_t req;
        FIELD(M_REQ, C_REQ, uint32_t, zz32, unzz32, UINT32_MAX,
              done ? m->last_done_req + 1 : m->last_post_req + 1, r->req, dreq, req, 0u, "request");
        if (mask & M_REQ) {
            if (done)
                m->last_done_req = req;
            else
                m->last_post_req = req;
        }
        /* a completion's post, if it is in the block */
        const mw_trace_rec_t *post = NULL;
        if (done && req != 0) {
            int found;
            uint32_t pi = req_find(m, req, &found);
            if (found)
                post = &recs[pi];
        }

        int32_t peer;
        np_ent_t *ne = NULL;
        {
            /* a completion: its post's peer, unless that was MPI_ANY_SOURCE; else the peer
             * that followed the op's previous peer last time */
            int32_t pp = post && post->peer != MW_TRACE_ANY ? post->peer
                         : o->last_np                       ? o->last_np->next
                                                            : o->last_peer;
            FIELD(M_PEER, C_PEER, uint32_t, zz32, unzz32, UINT32_MAX, (uint32_t)pp,
                  (uint32_t)r->peer, dpeer, peer, -1, "peer");
        }
        if ((mask & M_PEER) && (!post || post->peer == MW_TRACE_ANY || post->tag == MW_TRACE_ANY))
            ne = np_get(m, opi, peer, o->last_tag);

        int32_t tag;
        {
            int32_t pt = post && post->tag != MW_TRACE_ANY ? post->tag : ne ? ne->tag : o->last_tag;
            FIELD(M_TAG, C_TAG, uint32_t, zz32, unzz32, UINT32_MAX, (uint32_t)pt, (uint32_t)r->tag,
                  dtag, tag, 0, "tag");
        }

        uint64_t pbytes, pseq;
        ch_ent_t *ce = NULL;
        if (post && (kind == MW_TK_SEND_DONE || kind == MW_TK_COLL_DONE)) {
            pbytes = post->bytes;
            pseq = post->seq;
        } else if (is_p2p(kind)) {
            ce = ch_get(m, chan_dir(kind), o->comm, peer, tag, o->last_bytes);
            pbytes = ce->bytes;
            pseq = ce->seq + 1;
        } else if (kind == MW_TK_COLL || kind == MW_TK_ICOLL) {
            pbytes = o->last_bytes;
            pseq = m->coll_seq[o->comm] + 1;
        } else if (kind == MW_TK_COLL_DONE) {
            pbytes = o->last_bytes;
            pseq = m->coll_seq[o->comm];
        } else {
            pbytes = o->last_bytes;
            pseq = o->last_seq;
        }
        uint64_t bytes, seq;
        FIELD(M_BYTES, C_BYTES, uint64_t, zz64, unzz64, UINT64_MAX, pbytes, r->bytes, dbytes, bytes,
              0, "bytes");
        FIELD(M_SEQ, C_SEQ, uint64_t, zz64, unzz64, UINT64_MAX, pseq, r->seq, dseq, seq, 0,
              "index");
#undef FIELD

        if (enc) {
            if (miss) {
                wr->col[C_MISS] = put_varint(wr->col[C_MISS], miss);
                if (miss & M_REQ)
                    wr->col[C_REQ] = put_varint(wr->col[C_REQ], dreq);
                if (miss & M_PEER)
                    wr->col[C_PEER] = put_varint(wr->col[C_PEER], dpeer);
                if (miss & M_TAG)
                    wr->col[C_TAG] = put_varint(wr->col[C_TAG], dtag);
                if (miss & M_BYTES)
                    wr->col[C_BYTES] = put_varint(wr->col[C_BYTES], dbytes);
                if (miss & M_SEQ)
                    wr->col[C_SEQ] = put_varint(wr->col[C_SEQ], dseq);
            }
            scode |= miss ? 0u : OP_HIT;
        } else {
            r->req = req;
            r->peer = peer;
            r->tag = tag;
            r->bytes = bytes;
            r->seq = seq;
        }

        /* state */
        if (ne) {
            if (o->last_np)
                o->last_np->next = peer;
            ne->tag = tag;
            o->last_np = ne;
        }
        if (ce) {
            ce->bytes = bytes;
            ce->seq = seq;
        }
        if ((kind == MW_TK_COLL || kind == MW_TK_ICOLL) && (mask & M_SEQ))
            m->coll_seq[o->comm] = seq;
        if (is_post(kind) && req != 0)
            req_put(m, req, (uint32_t)i);
        o->last_peer = peer;
        o->last_tag = tag;
        o->last_bytes = bytes;
        o->last_seq = seq;
    }

    if (enc) {
        wr->col[C_OP] = put_varint(wr->col[C_OP], (uint64_t)opi << 3 | scode);
    } else {
        r->kind = o->kind;
        r->flags = o->flags;
        r->fn = o->fn;
        r->thread = o->thread;
    }
    return 0;
}

/* ---- encoder ------------------------------------------------------------------------------- */

/* A dictionary of the encoder (communicators, ops): open addressing from a small table that
 * doubles when half full, since a block usually holds a handful of entries whatever its size. */
typedef struct {
    uint64_t k1, k2; /* k1 == 0: empty (every key's k1 is non-zero) */
    uint32_t val;
} dict_ent_t;
typedef struct {
    dict_ent_t *t;
    size_t cap, used;
    uint64_t seed;
} dict_t;

static int dict_init(dict_t *d, uint64_t seed)
{
    d->cap = 64;
    d->used = 0;
    d->seed = seed;
    d->t = calloc(d->cap, sizeof *d->t);
    return d->t ? 0 : -1;
}

static inline size_t dict_slot(const dict_t *d, uint64_t k1, uint64_t k2)
{
    return mix(k1 ^ mix(k2 ^ d->seed)) & (d->cap - 1);
}

/* Finds key (k1 != 0, k2) or adds it with value `next` (*added). -1: no memory. */
static int dict_get(dict_t *d, uint64_t k1, uint64_t k2, uint32_t next, uint32_t *val, int *added)
{
    size_t i = dict_slot(d, k1, k2);
    for (;; i = (i + 1) & (d->cap - 1)) {
        dict_ent_t *e = &d->t[i];
        if (e->k1 == k1 && e->k2 == k2) {
            *added = 0;
            *val = e->val;
            return 0;
        }
        if (e->k1 == 0)
            break;
    }
    if (2 * (d->used + 1) > d->cap) {
        size_t ncap = 2 * d->cap;
        dict_ent_t *nt = calloc(ncap, sizeof *nt);
        if (!nt)
            return -1;
        dict_ent_t *old = d->t;
        size_t ocap = d->cap;
        d->t = nt;
        d->cap = ncap;
        for (size_t k = 0; k < ocap; k++)
            if (old[k].k1) {
                size_t j = dict_slot(d, old[k].k1, old[k].k2);
                while (nt[j].k1)
                    j = (j + 1) & (ncap - 1);
                nt[j] = old[k];
            }
        free(old);
        i = dict_slot(d, k1, k2);
        while (d->t[i].k1)
            i = (i + 1) & (d->cap - 1);
    }
    d->t[i] = (dict_ent_t){.k1 = k1, .k2 = k2, .val = next};
    d->used++;
    *added = 1;
    *val = next;
    return 0;
}

static int op_by_count(const void *a, const void *b)
{
    const trace_op_t *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return x->last_peer < y->last_peer ? -1 : x->last_peer > y->last_peer; /* first use */
}

/* Most bytes a column takes per record (REC_BOUND). */
static const unsigned col_max[NCOLS] = {4, 10, 10, 1, 5, 5, 5, 10, 10};

int mw_trace_encode(const mw_trace_rec_t *recs, size_t n, int zstd_level, size_t zstd_min,
                    uint8_t **out, size_t *out_len, uint32_t *encoding, uint64_t *raw_bytes)
{
    *out = NULL;
    *out_len = 0;
    if (n > MW_TRACE_MAX_RECORDS || (n && !recs))
        return -1;
    for (size_t i = 0; i < n; i++)
        if (recs[i].kind >= MW_TK_COUNT || recs[i].fn == 0 || recs[i].fn >= FN_SPACE)
            return -1;

    int rc = -1;
    uint64_t seed = seed_get();
    dict_t cd = {0}, od = {0};
    uint64_t *comms = malloc((n + 1) * sizeof *comms);
    trace_op_t *ops = malloc((n + 1) * sizeof *ops);
    uint32_t *opi = malloc((n + 1) * sizeof *opi);
    uint8_t *colbuf = malloc(n * 60 + 64), *hdr = NULL, *raw = NULL;
    uint32_t *remap = NULL;
    trace_model_t m = {0};
    if (dict_init(&cd, seed) || dict_init(&od, seed) || !comms || !ops || !opi || !colbuf)
        goto done;

    /* dictionaries: communicators, then ops with their field masks */
    size_t ncomm = 0, nops = 0;
    uint32_t last_comm_idx = 0;
    uint64_t last_comm = 0;
    for (size_t i = 0; i < n; i++) {
        const mw_trace_rec_t *r = &recs[i];
        int added;
        uint32_t ci = 0, oi;
        if (r->comm != 0) {
            if (r->comm == last_comm && last_comm_idx) {
                ci = last_comm_idx;
            } else {
                if (dict_get(&cd, r->comm, 0, (uint32_t)ncomm + 1, &ci, &added))
                    goto done;
                if (added)
                    comms[ncomm++] = r->comm;
                last_comm = r->comm;
                last_comm_idx = ci;
            }
        }
        uint64_t k1 = 1ull << 63 | (uint64_t)r->kind | (uint64_t)r->flags << 8 |
                      (uint64_t)r->fn << 16 | (uint64_t)ci << 32;
        if (dict_get(&od, k1, r->thread, (uint32_t)nops, &oi, &added))
            goto done;
        trace_op_t *o = &ops[oi];
        if (added) {
            nops++;
            *o = (trace_op_t){.kind = r->kind,
                              .flags = r->flags,
                              .fn = r->fn,
                              .thread = r->thread,
                              .comm = ci,
                              .last_peer = (int32_t)oi}; /* first use: the order of ties */
        }
        o->count++;
        o->mask |= (r->dur_ns ? M_DUR : 0) | (r->req ? M_REQ : 0) | (r->peer != -1 ? M_PEER : 0) |
                   (r->tag ? M_TAG : 0) | (r->bytes ? M_BYTES : 0) | (r->seq ? M_SEQ : 0);
        opi[i] = oi;
    }
    /* most frequent ops get the smallest indices (one-byte op words up to 16) */
    qsort(ops, nops, sizeof *ops, op_by_count);
    remap = malloc((nops + 1) * sizeof *remap);
    if (!remap)
        goto done;
    for (size_t k = 0; k < nops; k++) {
        remap[ops[k].last_peer] = (uint32_t)k;
        ops[k].last_peer = -1;
    }
    trace_sizes_t sz = {0};
    for (size_t i = 0; i < n; i++) {
        opi[i] = remap[opi[i]];
        sizes_add(&sz, &ops[opi[i]]);
    }
    if (model_init(&m, sz.req, sz.np, sz.ch, ncomm))
        goto done;

    /* the columns, each in its own part of colbuf */
    cols_wr_t wr;
    uint8_t *col0[NCOLS];
    {
        uint8_t *p = colbuf;
        for (int c = 0; c < NCOLS; c++) {
            col0[c] = wr.col[c] = p;
            p += (size_t)col_max[c] * n;
        }
    }
    /* the encoder never writes a record: rec_code only reads recs when enc is 1 */
    mw_trace_rec_t *rw = (mw_trace_rec_t *)(uintptr_t)recs;
    for (size_t i = 0; i < n; i++) {
        const char *why = NULL;
        (void)rec_code(&m, ops, opi[i], 0, rw, i, NULL, &wr, 1, &why);
    }

    /* the header: at most 1 + 3 + 3 + 3 + 9 x 5 bytes, 8 per communicator, 14 per op */
    hdr = malloc(64 + 8 * ncomm + 14 * nops);
    if (!hdr)
        goto done;
    uint8_t *p = hdr;
    *p++ = FORMAT;
    p = put_varint(p, n);
    p = put_varint(p, ncomm);
    for (size_t k = 0; k < ncomm; k++)
        for (int b = 0; b < 8; b++)
            *p++ = (uint8_t)(comms[k] >> (8 * b));
    p = put_varint(p, nops);
    for (size_t k = 0; k < nops; k++) {
        p = put_varint(p, (uint64_t)ops[k].kind | (uint64_t)ops[k].flags << 4);
        p = put_varint(p, ops[k].fn);
        p = put_varint(p, ops[k].thread);
        p = put_varint(p, ops[k].comm);
        p = put_varint(p, ops[k].mask);
    }
    size_t total = 0;
    for (int c = 0; c < NCOLS; c++) {
        size_t len = (size_t)(wr.col[c] - col0[c]);
        p = put_varint(p, len);
        total += len;
    }
    size_t hlen = (size_t)(p - hdr);
    total += hlen;
    raw = malloc(total ? total : 1);
    if (!raw)
        goto done;
    memcpy(raw, hdr, hlen);
    p = raw + hlen;
    for (int c = 0; c < NCOLS; c++) {
        size_t len = (size_t)(wr.col[c] - col0[c]);
        memcpy(p, col0[c], len);
        p += len;
    }

    if (zstd_level > 0 && n >= zstd_min && n > 0) {
        size_t cap = ZSTD_compressBound(total);
        uint8_t *z = malloc(cap);
        if (!z)
            goto done;
        size_t zn = z_compress(z, cap, raw, total, zstd_level);
        if (ZSTD_isError(zn)) {
            free(z);
            goto done;
        }
        *out = z;
        *out_len = zn;
        *encoding = MW_TRACE_ENC_ZSTD;
    } else {
        *out = raw;
        raw = NULL;
        *out_len = total;
        *encoding = MW_TRACE_ENC_COLUMNS;
    }
    *raw_bytes = total;
    rc = 0;
done:
    free(m.mem);
    free(cd.t);
    free(od.t);
    free(comms);
    free(ops);
    free(opi);
    free(colbuf);
    free(remap);
    free(hdr);
    free(raw);
    return rc;
}

/* ---- decoder ------------------------------------------------------------------------------- */

static int decode_columns(const uint8_t *blk, size_t len, uint32_t count, mw_trace_rec_t **out,
                          size_t *nout, const char **why)
{
    rd_t h = {blk, blk + len};
    uint64_t v, n, ncomm, nops;
    if (len < 1 || *h.p++ != FORMAT)
        FAIL("unknown trace block format");
    if (get_varint(&h, &n))
        FAIL("bad record count");
    if (n != count)
        FAIL("record count differs from the message's count");
    if (get_varint(&h, &ncomm) || ncomm > n || ncomm > (uint64_t)(h.end - h.p) / 8)
        FAIL("bad communicator dictionary size");
    const uint8_t *comm_ids = h.p;
    h.p += ncomm * 8;
    if (get_varint(&h, &nops) || nops > n || nops > (uint64_t)(h.end - h.p) / 5 ||
        (n > 0 && nops == 0))
        FAIL("bad op dictionary size");

    int rc = -1;
    trace_op_t *ops = calloc(nops + 1, sizeof *ops);
    uint64_t *comms = malloc((ncomm + 1) * sizeof *comms);
    mw_trace_rec_t *recs = malloc((n ? n : 1) * sizeof *recs);
    trace_model_t m = {0};
    if (!ops || !comms || !recs) {
        *why = "out of memory";
        goto done;
    }
    comms[0] = 0;
    for (size_t k = 0; k < ncomm; k++) {
        uint64_t id = 0;
        for (int b = 0; b < 8; b++)
            id |= (uint64_t)comm_ids[8 * k + b] << (8 * b);
        comms[k + 1] = id;
    }
    for (size_t k = 0; k < nops; k++) {
        uint64_t kf, fn, th, ci, mask;
        if (get_varint(&h, &kf) || get_varint(&h, &fn) || get_varint(&h, &th) ||
            get_varint(&h, &ci) || get_varint(&h, &mask)) {
            *why = "op dictionary truncated or bad varint";
            goto done;
        }
        if ((kf & 15) >= MW_TK_COUNT || kf >> 4 > 255) {
            *why = "bad record kind or flags";
            goto done;
        }
        if (fn == 0 || fn >= FN_SPACE) {
            *why = "bad function id";
            goto done;
        }
        if (th > UINT32_MAX || ci > ncomm || mask > M_ALL) {
            *why = "bad op dictionary entry";
            goto done;
        }
        ops[k] = (trace_op_t){.kind = (uint8_t)(kf & 15),
                              .flags = (uint8_t)(kf >> 4),
                              .fn = (uint16_t)fn,
                              .thread = (uint32_t)th,
                              .comm = (uint32_t)ci,
                              .mask = (uint8_t)mask,
                              .last_peer = -1};
    }
    cols_rd_t rd;
    uint64_t clen[NCOLS];
    for (int c = 0; c < NCOLS; c++)
        if (get_varint(&h, &clen[c])) {
            *why = "column lengths truncated or bad varint";
            goto done;
        }
    {
        uint64_t left = (uint64_t)(h.end - h.p);
        for (int c = 0; c < NCOLS; c++) {
            if (clen[c] > left) {
                *why = "column longer than the block";
                goto done;
            }
            rd.col[c] = (rd_t){h.p, h.p + clen[c]};
            h.p += clen[c];
            left -= clen[c];
        }
        if (left) {
            *why = "trailing bytes after the columns";
            goto done;
        }
    }

    /* op words first: checked, kept in recs[i].req until the record is decoded, and counted
     * for the tables' sizes */
    trace_sizes_t sz = {0};
    for (size_t i = 0; i < n; i++) {
        if (get_varint(&rd.col[C_OP], &v)) {
            *why = "op column truncated or bad varint";
            goto done;
        }
        uint64_t oi = v >> 3;
        if (oi >= nops) {
            *why = "op index out of range";
            goto done;
        }
        if ((v & 3) == 3 || ((v & OP_HIT) && !(ops[oi].mask & M_MSG))) {
            *why = "bad op word";
            goto done;
        }
        recs[i].req = (uint32_t)v;
        sizes_add(&sz, &ops[oi]);
    }
    if (rd.col[C_OP].p != rd.col[C_OP].end) {
        *why = "trailing bytes in the op column";
        goto done;
    }
    if (model_init(&m, sz.req, sz.np, sz.ch, ncomm)) {
        *why = "out of memory";
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t w = recs[i].req;
        if (rec_code(&m, ops, w >> 3, w, recs, i, &rd, NULL, 0, why))
            goto done;
        recs[i].comm = comms[ops[w >> 3].comm];
    }
    for (int c = 0; c < NCOLS; c++)
        if (rd.col[c].p != rd.col[c].end) {
            *why = "trailing bytes in a column";
            goto done;
        }
    *out = recs;
    *nout = n;
    recs = NULL;
    rc = 0;
done:
    free(m.mem);
    free(ops);
    free(comms);
    free(recs);
    return rc;
}

int mw_trace_decode(const uint8_t *data, size_t len, uint32_t encoding, uint64_t raw_bytes,
                    uint32_t count, mw_trace_rec_t **out, size_t *n, const char **why)
{
    const char *dummy;
    if (!why)
        why = &dummy;
    *out = NULL;
    *n = 0;
    *why = NULL;
    if (count > MW_TRACE_MAX_RECORDS)
        FAIL("more records than MW_TRACE_MAX_RECORDS");
    if (raw_bytes > MW_TRACE_MAX_RAW_BYTES)
        FAIL("raw size over MW_TRACE_MAX_RAW_BYTES");
    if (raw_bytes > raw_bound(count))
        FAIL("raw size too large for the record count");
    if (!data && len)
        FAIL("no data");
    if (encoding == MW_TRACE_ENC_COLUMNS) {
        if (raw_bytes != len)
            FAIL("raw size differs from the block's size");
        return decode_columns(data, len, count, out, n, why);
    }
    if (encoding != MW_TRACE_ENC_ZSTD)
        FAIL("unknown trace encoding");
    if (len == 0)
        FAIL("empty zstd frame");
    unsigned long long fcs = ZSTD_getFrameContentSize(data, len);
    if (fcs == ZSTD_CONTENTSIZE_UNKNOWN || fcs == ZSTD_CONTENTSIZE_ERROR)
        FAIL("zstd frame without a content size");
    if (fcs != raw_bytes)
        FAIL("zstd content size differs from raw size");
    size_t fl = ZSTD_findFrameCompressedSize(data, len);
    if (ZSTD_isError(fl) || fl != len)
        FAIL("zstd frame truncated or followed by bytes");
    uint8_t *raw = malloc(raw_bytes ? (size_t)raw_bytes : 1);
    if (!raw)
        FAIL("out of memory");
    size_t got = z_decompress(raw, (size_t)raw_bytes, data, len);
    if (ZSTD_isError(got) || got != raw_bytes) {
        free(raw);
        FAIL("zstd frame does not decompress to its size");
    }
    int rc = decode_columns(raw, (size_t)raw_bytes, count, out, n, why);
    free(raw);
    return rc;
}
