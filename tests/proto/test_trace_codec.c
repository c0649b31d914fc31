/* test_trace_codec.c: the trace block codec (proto/mw_trace.c).
 *
 * Round trips, exact in every field, of random records drawn from the extremes (INT64_MIN and
 * INT64_MAX starts, so start deltas that wrap, UINT64_MAX bytes, durations and indices,
 * negative peers and tags, MW_TRACE_ANY, UINT32_MAX requests and threads, communicator ids of
 * every size) and of the realistic stencil of trace_gen.h, with and without zstd, at sizes from
 * 0 to 20,000 records; the stencil must cost at most 12 bytes per call without zstd (the
 * issue's goal) even when irregular (trace_gen.h), at most 8 when regular. Then every refusal of
 * the decoder, on blocks built by hand: the caps, sizes that disagree, every truncation, trailing
 * bytes, bad and non-minimal varints, dictionary indices out of range, kinds and function ids out
 * of range, start deltas past int64, values past their field, bad zstd frames; and mutated blocks,
 * which must be refused or decode to exactly `count` records, never crash (the fuzz target goes
 * further).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "mw_proto.h"
#include "mw_trace.h"
#include "trace_gen.h"

static void assert_recs_equal(const mw_trace_rec_t *a, const mw_trace_rec_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const mw_trace_rec_t *x = &a[i], *y = &b[i];
        if (x->start_ns != y->start_ns || x->dur_ns != y->dur_ns || x->comm != y->comm ||
            x->seq != y->seq || x->bytes != y->bytes || x->req != y->req ||
            x->thread != y->thread || x->peer != y->peer || x->tag != y->tag || x->fn != y->fn ||
            x->kind != y->kind || x->flags != y->flags) {
            print_error("record %zu differs: start %lld/%lld dur %llu/%llu comm %llx/%llx seq "
                        "%llu/%llu bytes %llu/%llu req %u/%u thread %u/%u peer %d/%d tag %d/%d "
                        "fn %u/%u kind %u/%u flags %u/%u\n",
                        i, (long long)x->start_ns, (long long)y->start_ns,
                        (unsigned long long)x->dur_ns, (unsigned long long)y->dur_ns,
                        (unsigned long long)x->comm, (unsigned long long)y->comm,
                        (unsigned long long)x->seq, (unsigned long long)y->seq,
                        (unsigned long long)x->bytes, (unsigned long long)y->bytes, x->req, y->req,
                        x->thread, y->thread, x->peer, y->peer, x->tag, y->tag, x->fn, y->fn,
                        x->kind, y->kind, x->flags, y->flags);
            fail();
        }
    }
}

/* Encodes, decodes, compares; returns the encoded size. */
static size_t round_trip(const mw_trace_rec_t *recs, size_t n, int level, size_t zmin)
{
    uint8_t *blk;
    size_t len;
    uint32_t enc = 0;
    uint64_t raw = 0;
    assert_int_equal(mw_trace_encode(recs, n, level, zmin, &blk, &len, &enc, &raw), 0);
    if (level > 0 && n >= zmin && n > 0) {
        assert_int_equal(enc, MW_TRACE_ENC_ZSTD);
    } else {
        assert_int_equal(enc, MW_TRACE_ENC_COLUMNS);
        assert_int_equal(raw, len);
    }
    mw_trace_rec_t *out;
    size_t nout;
    const char *why = NULL;
    int rc = mw_trace_decode(blk, len, enc, raw, (uint32_t)n, &out, &nout, &why);
    if (rc != 0)
        print_error("decode refused: %s\n", why);
    assert_int_equal(rc, 0);
    assert_int_equal(nout, n);
    assert_recs_equal(recs, out, n);
    free(out);
    free(blk);
    return len;
}

static uint64_t rng_state = 42;
static uint64_t rnd(void)
{
    uint64_t x = rng_state += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static uint64_t pick64(const uint64_t *v, size_t nv)
{
    return rnd() % 3 ? v[rnd() % nv] : rnd();
}

/* Random records: every field from a list of extremes or at random. */
static void random_recs(mw_trace_rec_t *r, size_t n)
{
    static const uint64_t u64[] = {0,
                                   1,
                                   2,
                                   127,
                                   128,
                                   16383,
                                   16384,
                                   UINT32_MAX,
                                   INT64_MAX,
                                   (uint64_t)INT64_MAX + 1,
                                   UINT64_MAX - 1,
                                   UINT64_MAX};
    static const uint64_t comms[] = {0, MW_COMM_ID_WORLD, MW_COMM_ID_SELF, 0x8c3f2a71d09e55b1ull,
                                     UINT64_MAX};
    static const int32_t i32[] = {-1, MW_TRACE_ANY, 0, 1, 5, INT32_MIN, INT32_MAX, -7, 1000};
    static const uint32_t u32[] = {0, 1, 2, 3, UINT32_MAX, UINT32_MAX - 1};
    int64_t t = 0;
    for (size_t i = 0; i < n; i++) {
        mw_trace_rec_t *x = &r[i];
        memset(x, 0, sizeof *x);
        switch (rnd() % 6) {
        case 0:
            x->start_ns = INT64_MIN + (int64_t)(rnd() % 3);
            break;
        case 1:
            x->start_ns = INT64_MAX - (int64_t)(rnd() % 3);
            break;
        case 2:
            x->start_ns = (int64_t)rnd();
            break;
        default:
            t += (int64_t)(rnd() % 1000) - 100;
            x->start_ns = t;
        }
        x->dur_ns = pick64(u64, sizeof u64 / sizeof *u64);
        x->comm = comms[rnd() % 5];
        x->seq = pick64(u64, sizeof u64 / sizeof *u64);
        x->bytes = pick64(u64, sizeof u64 / sizeof *u64);
        x->req = rnd() % 2 ? (uint32_t)i : u32[rnd() % 6];
        x->thread = rnd() % 4 ? (uint32_t)(rnd() % 3) : u32[rnd() % 6];
        x->peer = rnd() % 3 ? i32[rnd() % 9] : (int32_t)rnd();
        x->tag = rnd() % 3 ? i32[rnd() % 9] : (int32_t)rnd();
        x->fn = (uint16_t)(1 + rnd() % (MW_FN_COUNT - 1));
        x->kind = (uint8_t)(rnd() % MW_TK_COUNT);
        x->flags = rnd() % 2 ? 0 : (uint8_t)rnd();
    }
}

static void test_random_round_trip(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 2, 3, 17, 100, 1000, 20000};
    mw_trace_rec_t *r = malloc(20000 * sizeof *r);
    assert_non_null(r);
    for (int rep = 0; rep < 4; rep++)
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
            random_recs(r, sizes[s]);
            round_trip(r, sizes[s], 0, 0);
            round_trip(r, sizes[s], 1, 1);
            round_trip(r, sizes[s], 3, 50); /* zstd only from 50 records on */
        }
    /* the extremes one after the other: deltas of start that wrap both ways */
    static const int64_t starts[] = {INT64_MIN, INT64_MAX, INT64_MIN,     0,
                                     INT64_MAX, -1,        INT64_MIN + 1, INT64_MAX - 1};
    for (size_t i = 0; i < 8; i++) {
        memset(&r[i], 0, sizeof r[i]);
        r[i].start_ns = starts[i];
        r[i].dur_ns = i % 2 ? UINT64_MAX : 0;
        r[i].bytes = UINT64_MAX;
        r[i].seq = UINT64_MAX - i;
        r[i].peer = i % 2 ? INT32_MIN : MW_TRACE_ANY;
        r[i].tag = i % 2 ? INT32_MAX : INT32_MIN;
        r[i].req = UINT32_MAX - (uint32_t)i;
        r[i].thread = UINT32_MAX;
        r[i].fn = MW_FN_COUNT - 1;
        r[i].kind = (uint8_t)(MW_TK_COUNT - 1 - i);
        r[i].flags = 0xff;
    }
    round_trip(r, 8, 0, 0);
    round_trip(r, 8, 1, 1);
    free(r);
}

/* The stencil: exact, and within the 12 bytes per call before zstd. */
static void test_stencil_size(void **state)
{
    (void)state;
    static const size_t calls[] = {100, 1000, 10000};
    mw_trace_rec_t *r = malloc((10000 / 14 + 2) * MW_TGEN_RECS_PER_STEP * sizeof *r);
    assert_non_null(r);
    for (size_t c = 0; c < 6; c++) {
        mw_tgen_t g;
        mw_tgen_init(&g, 7 + c, 21, 8, 8, 8);
        g.irregular = c >= 3;
        for (int w = 0; w < 3; w++) {
            size_t ncalls;
            size_t n = mw_tgen_window(&g, r, calls[c % 3], 100000000, &ncalls);
            size_t plain = round_trip(r, n, 0, 0);
            size_t z = round_trip(r, n, 1, 1);
            double per = (double)plain / (double)ncalls;
            print_message("stencil%s %zu calls (%zu records): %.2f B/call, zstd-1 %.2f\n",
                          g.irregular ? " (irregular)" : "", ncalls, n, per,
                          (double)z / (double)ncalls);
            /* the goal; the regular stencil does far better, the irregular one (random
             * completion order, MPI_ANY_SOURCE, sizes that vary) costs about 10 B */
            assert_true(per <= (g.irregular ? 12.0 : 8.0));
        }
    }
    free(r);
}

/* Records of several threads and communicators interleaved, completions out of order, posts
 * whose completions are in another window: still exact. */
static void test_mixed_round_trip(void **state)
{
    (void)state;
    enum { N = 6000 };
    mw_trace_rec_t *r = malloc(N * sizeof *r);
    assert_non_null(r);
    mw_tgen_t g[3];
    size_t n = 0;
    for (int k = 0; k < 3; k++)
        mw_tgen_init(&g[k], 100 + (unsigned)k, 5 + k, 4, 4, 4);
    while (n + 3 * MW_TGEN_RECS_PER_STEP < N) {
        for (int k = 0; k < 3; k++) {
            size_t calls;
            size_t m = mw_tgen_window(&g[k], r + n, 14, 1000000, &calls);
            for (size_t i = n; i < n + m; i++) {
                r[i].thread = (uint32_t)k;
                if (k == 2)
                    r[i].comm ^= 0x5555;
            }
            /* completions in a random order */
            for (size_t i = n + 13; i < n + 24; i++) {
                size_t j = i + rnd() % (n + 25 - i);
                mw_trace_rec_t x = r[i];
                r[i] = r[j];
                r[j] = x;
            }
            n += m;
        }
    }
    round_trip(r + 13, n - 13, 0, 0); /* the first posts cut off: completions unlinked */
    round_trip(r, n, 1, 1);
    free(r);
}

/* ---- refusals ------------------------------------------------------------------------------ */

static int decode(const uint8_t *b, size_t len, uint32_t enc, uint64_t raw, uint32_t count,
                  const char **why)
{
    mw_trace_rec_t *out = (mw_trace_rec_t *)1;
    size_t n = 99;
    int rc = mw_trace_decode(b, len, enc, raw, count, &out, &n, why);
    if (rc != 0) {
        assert_null(out);
        assert_int_equal(n, 0);
        assert_non_null(*why);
    } else {
        assert_int_equal(n, count);
        free(out);
    }
    return rc;
}

/* A block built by hand. */
typedef struct {
    uint8_t b[4096];
    size_t n;
} blk_t;

static void put(blk_t *k, uint64_t v)
{
    while (v >= 0x80) {
        k->b[k->n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    k->b[k->n++] = (uint8_t)v;
}

static void put_bytes(blk_t *k, const uint8_t *p, size_t n)
{
    memcpy(k->b + k->n, p, n);
    k->n += n;
}

typedef struct {
    uint64_t kf, fn, thread, comm, mask;
} hop_t;

/* The columns: op words, start, duration, miss masks, request, peer, tag, bytes, index. */
#define NC 9

/* format, count, comms, ops, columns (each given as bytes) */
static void build(blk_t *k, uint64_t count, size_t ncomm, const hop_t *ops, size_t nops,
                  const uint8_t *const cols[NC], const size_t clen[NC])
{
    k->n = 0;
    k->b[k->n++] = 1;
    put(k, count);
    put(k, ncomm);
    for (size_t i = 0; i < ncomm * 8; i++)
        k->b[k->n++] = (uint8_t)(i + 1);
    put(k, nops);
    for (size_t i = 0; i < nops; i++) {
        put(k, ops[i].kf);
        put(k, ops[i].fn);
        put(k, ops[i].thread);
        put(k, ops[i].comm);
        put(k, ops[i].mask);
    }
    for (int c = 0; c < NC; c++)
        put(k, clen[c]);
    for (int c = 0; c < NC; c++)
        put_bytes(k, cols[c], clen[c]);
}

/* One record: a MPI_Send (kind 1) on comm 1 with every message field present (mask 63),
 * start later by 5 (op word 0 << 3 | 1), every message field missing its prediction (miss mask
 * 62), fields given as column bytes. */
static const hop_t op_send = {MW_TK_SEND, MW_ID_Send, 0, 1, 63};
static const uint8_t c_op[] = {1}, c_start[] = {5}, c_dur[] = {7}, c_miss[] = {62}, c_req[] = {2},
                     c_peer[] = {4}, c_tag[] = {6}, c_bytes[] = {8}, c_seq[] = {0};
static const uint8_t *const cols1[NC] = {c_op,   c_start, c_dur,   c_miss, c_req,
                                         c_peer, c_tag,   c_bytes, c_seq};
static const size_t clen1[NC] = {1, 1, 1, 1, 1, 1, 1, 1, 1};

static void expect_refused(const blk_t *k, uint32_t count, const char *what)
{
    const char *why = NULL;
    if (decode(k->b, k->n, MW_TRACE_ENC_COLUMNS, k->n, count, &why) == 0) {
        print_error("accepted: %s\n", what);
        fail();
    }
}

static void test_hand_block(void **state)
{
    (void)state;
    blk_t k;
    build(&k, 1, 1, &op_send, 1, cols1, clen1);
    mw_trace_rec_t *out;
    size_t n;
    const char *why = NULL;
    assert_int_equal(mw_trace_decode(k.b, k.n, MW_TRACE_ENC_COLUMNS, k.n, 1, &out, &n, &why), 0);
    assert_int_equal(n, 1);
    /* start 0 + 5; duration 7; request 0 + 1 + unzz(2) = 2; peer -1 + unzz(4) = 1; tag 0 +
     * unzz(6) = 3; bytes: the channel is new, so the op's last bytes 0 + unzz(8) = 4; index: a
     * new channel predicts 0, + 0 */
    assert_int_equal(out[0].start_ns, 5);
    assert_int_equal(out[0].dur_ns, 7);
    assert_int_equal(out[0].req, 2);
    assert_int_equal(out[0].peer, 1);
    assert_int_equal(out[0].tag, 3);
    assert_int_equal(out[0].bytes, 4);
    assert_int_equal(out[0].seq, 0);
    assert_int_equal(out[0].kind, MW_TK_SEND);
    assert_int_equal(out[0].fn, MW_ID_Send);
    assert_int_equal(out[0].comm, 0x0807060504030201ull);
    free(out);

    /* every strict prefix, and one byte more */
    for (size_t cut = 0; cut < k.n; cut++) {
        blk_t p = k;
        p.n = cut;
        expect_refused(&p, 1, "a truncated block");
    }
    blk_t t = k;
    t.b[t.n++] = 0;
    expect_refused(&t, 1, "a trailing byte");
    expect_refused(&k, 2, "a count the block does not hold");
    expect_refused(&k, 0, "a count the block does not hold");
    assert_int_not_equal(decode(k.b, k.n, MW_TRACE_ENC_COLUMNS, k.n + 1, 1, &why), 0);
    assert_int_not_equal(decode(k.b, k.n, 7, k.n, 1, &why), 0);
    assert_int_not_equal(decode(k.b, k.n, 0, k.n, 1, &why), 0);

    blk_t b = k;
    b.b[0] = 2;
    expect_refused(&b, 1, "an unknown format");

    hop_t o = op_send;
    o.kf = MW_TK_COUNT;
    build(&b, 1, 1, &o, 1, cols1, clen1);
    expect_refused(&b, 1, "kind MW_TK_COUNT");
    o = op_send;
    o.kf = 15;
    build(&b, 1, 1, &o, 1, cols1, clen1);
    expect_refused(&b, 1, "kind 15");
    o = op_send;
    o.kf = MW_TK_SEND | 256u << 4;
    build(&b, 1, 1, &o, 1, cols1, clen1);
    expect_refused(&b, 1, "flags over 255");
    o = op_send;
    o.fn = 0;
    build(&b, 1, 1, &o, 1, cols1, clen1);
    expect_refused(&b, 1, "function 0");
    o.fn = MW_FN_SPACE; /* ids past this build's table are a job's extras (mw_fnmap.h) */
    build(&b, 1, 1, &o, 1, cols1, clen1);
    expect_refused(&b, 1, "function MW_FN_SPACE");
    o.fn = MW_FN_SPACE - 1; /* the last id is fine */
    build(&b, 1, 1, &o, 1, cols1, clen1);
    assert_int_equal(decode(b.b, b.n, MW_TRACE_ENC_COLUMNS, b.n, 1, &why), 0);
    o = op_send;
    o.comm = 2;
    build(&b, 1, 1, &o, 1, cols1, clen1);
    expect_refused(&b, 1, "a communicator index out of range");
    o = op_send;
    o.mask = 64;
    build(&b, 1, 1, &o, 1, cols1, clen1);
    expect_refused(&b, 1, "an unknown field mask");
    o = op_send;
    o.thread = (uint64_t)UINT32_MAX + 1;
    build(&b, 1, 1, &o, 1, cols1, clen1);
    expect_refused(&b, 1, "a thread over 32 bits");

    /* dictionary sizes */
    build(&b, 1, 2, &op_send, 1, cols1, clen1);
    expect_refused(&b, 1, "more communicators than records");
    hop_t two[2] = {op_send, op_send};
    build(&b, 1, 1, two, 2, cols1, clen1);
    expect_refused(&b, 1, "more ops than records");
    build(&b, 1, 1, two, 0, cols1, clen1);
    expect_refused(&b, 1, "no op for a record");

    /* op words */
    const uint8_t *cols[NC];
    size_t clen[NC];
    memcpy(cols, cols1, sizeof cols);
    memcpy(clen, clen1, sizeof clen);
    static const uint8_t op_idx1[] = {1 << 3 | 1}, op_s3[] = {3},
                         op_over[] = {0x81, 0x80, 0x80, 0x80, 0x01};
    cols[0] = op_idx1;
    build(&b, 1, 1, &op_send, 1, cols, clen);
    expect_refused(&b, 1, "an op index out of range");
    cols[0] = op_s3;
    build(&b, 1, 1, &op_send, 1, cols, clen);
    expect_refused(&b, 1, "start code 3");
    cols[0] = op_over;
    clen[0] = 5;
    build(&b, 1, 1, &op_send, 1, cols, clen);
    expect_refused(&b, 1, "a huge op word");
    clen[0] = 1;
    static const uint8_t op_hit[] = {4};
    hop_t plain = {MW_TK_CALL, MW_ID_Barrier, 0, 0, 0};
    static const uint8_t *const cols_plain[NC] = {op_hit, c_start, c_dur,   c_miss, c_req,
                                                  c_peer, c_tag,   c_bytes, c_seq};
    static const size_t clen_none[NC] = {1, 0, 0, 0, 0, 0, 0, 0, 0};
    build(&b, 1, 0, &plain, 1, cols_plain, clen_none);
    expect_refused(&b, 1, "a hit without message fields");

    /* miss masks: empty, or naming a field the op does not carry */
    static const uint8_t miss0[] = {0}, miss_dur[] = {63}, miss_noseq[] = {2};
    hop_t noseq = op_send;
    noseq.mask = 63 & ~32;
    memcpy(cols, cols1, sizeof cols);
    memcpy(clen, clen1, sizeof clen);
    cols[3] = miss0;
    build(&b, 1, 1, &op_send, 1, cols, clen);
    expect_refused(&b, 1, "an empty miss mask");
    cols[3] = miss_dur;
    build(&b, 1, 1, &op_send, 1, cols, clen);
    expect_refused(&b, 1, "a miss mask with the duration bit");
    cols[3] = c_miss;
    build(&b, 1, 1, &noseq, 1, cols, clen);
    expect_refused(&b, 1, "a miss mask naming a field the op does not carry");
    /* only the request misses: the other columns must be empty, the fields predicted */
    static const size_t clen_req[NC] = {1, 1, 1, 1, 1, 0, 0, 0, 0};
    cols[3] = miss_noseq;
    build(&b, 1, 1, &op_send, 1, cols, clen_req);
    mw_trace_rec_t *one;
    assert_int_equal(mw_trace_decode(b.b, b.n, MW_TRACE_ENC_COLUMNS, b.n, 1, &one, &n, &why), 0);
    assert_int_equal(one[0].req, 2);
    assert_int_equal(one[0].peer, -1); /* the op's initial prediction */
    assert_int_equal(one[0].tag, 0);
    assert_int_equal(one[0].bytes, 0);
    free(one);
    build(&b, 1, 1, &op_send, 1, cols, clen);
    expect_refused(&b, 1, "deltas of fields the miss mask does not name");
    cols[3] = c_miss;

    /* varints in the columns: non-minimal, too long, over 64 bits, truncated */
    static const uint8_t nonmin[] = {0x85, 0x00}, eleven[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                                              0xff, 0xff, 0xff, 0xff, 0x01},
                         over64[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02},
                         cut[] = {0x85};
    struct {
        const uint8_t *p;
        size_t n;
    } bad[] = {{nonmin, 2}, {eleven, 11}, {over64, 10}, {cut, 1}};
    for (int c = 1; c < NC; c++)
        for (size_t v = 0; v < 4; v++) {
            memcpy(cols, cols1, sizeof cols);
            memcpy(clen, clen1, sizeof clen);
            cols[c] = bad[v].p;
            clen[c] = bad[v].n;
            build(&b, 1, 1, &op_send, 1, cols, clen);
            expect_refused(&b, 1, "a bad varint in a column");
        }
    /* values past their field: start delta over INT64_MAX (later) and 2^63 (earlier); request,
     * peer and tag deltas over 32 bits */
    static const uint8_t d63[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01},
                         d63p1[] = {0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01},
                         d32[] = {0x80, 0x80, 0x80, 0x80, 0x10}, zero[] = {0};
    memcpy(cols, cols1, sizeof cols);
    memcpy(clen, clen1, sizeof clen);
    cols[1] = d63;
    clen[1] = 10;
    build(&b, 1, 1, &op_send, 1, cols, clen);
    expect_refused(&b, 1, "a later start by 2^63");
    cols[0] = (const uint8_t[]){2}; /* earlier */
    build(&b, 1, 1, &op_send, 1, cols, clen);
    assert_int_equal(decode(b.b, b.n, MW_TRACE_ENC_COLUMNS, b.n, 1, &why), 0); /* INT64_MIN */
    cols[1] = d63p1;
    build(&b, 1, 1, &op_send, 1, cols, clen);
    expect_refused(&b, 1, "an earlier start by 2^63 + 1");
    cols[1] = zero;
    clen[1] = 1;
    build(&b, 1, 1, &op_send, 1, cols, clen);
    expect_refused(&b, 1, "an earlier start by 0");
    memcpy(cols, cols1, sizeof cols);
    memcpy(clen, clen1, sizeof clen);
    for (int c = 4; c <= 6; c++) { /* request, peer, tag */
        memcpy(cols, cols1, sizeof cols);
        cols[c] = d32;
        clen[c] = 5;
        build(&b, 1, 1, &op_send, 1, cols, clen);
        expect_refused(&b, 1, "a 32-bit field's delta over 32 bits");
        clen[c] = 1;
    }
    /* column lengths that do not add up */
    memcpy(cols, cols1, sizeof cols);
    memcpy(clen, clen1, sizeof clen);
    clen[8] = 0;
    build(&b, 1, 1, &op_send, 1, cols, clen);
    b.b[b.n++] = 0;
    expect_refused(&b, 1, "bytes after the last column");
    clen[8] = 1;
    build(&b, 1, 1, &op_send, 1, cols, clen);
    b.n--;
    expect_refused(&b, 1, "a column longer than the block");
    static const uint8_t two_durs[] = {7, 7};
    cols[2] = two_durs;
    clen[2] = 2;
    build(&b, 1, 1, &op_send, 1, cols, clen);
    expect_refused(&b, 1, "a column with a value left over");
}

static void test_caps(void **state)
{
    (void)state;
    const char *why;
    static const uint8_t one = 1;
    assert_int_not_equal(decode(&one, 1, MW_TRACE_ENC_COLUMNS, 1, MW_TRACE_MAX_RECORDS + 1, &why),
                         0);
    assert_int_not_equal(decode(&one, 1, MW_TRACE_ENC_ZSTD, (uint64_t)MW_TRACE_MAX_RAW_BYTES + 1,
                                MW_TRACE_MAX_RECORDS, &why),
                         0);
    /* a raw size no `count` records can take */
    assert_int_not_equal(decode(&one, 1, MW_TRACE_ENC_ZSTD, 1u << 20, 10, &why), 0);
    assert_int_not_equal(decode(NULL, 5, MW_TRACE_ENC_COLUMNS, 5, 1, &why), 0);
    /* the encoder refuses what a decoder would refuse */
    mw_trace_rec_t r = {.fn = MW_ID_Send, .kind = MW_TK_SEND};
    uint8_t *b;
    size_t len;
    uint32_t enc;
    uint64_t raw;
    r.kind = MW_TK_COUNT;
    assert_int_equal(mw_trace_encode(&r, 1, 0, 0, &b, &len, &enc, &raw), -1);
    r.kind = MW_TK_SEND;
    r.fn = 0;
    assert_int_equal(mw_trace_encode(&r, 1, 0, 0, &b, &len, &enc, &raw), -1);
    r.fn = MW_FN_SPACE;
    assert_int_equal(mw_trace_encode(&r, 1, 0, 0, &b, &len, &enc, &raw), -1);
    assert_int_equal(
        mw_trace_encode(&r, (size_t)MW_TRACE_MAX_RECORDS + 1, 0, 0, &b, &len, &enc, &raw), -1);
}

static void test_zstd_refusals(void **state)
{
    (void)state;
    mw_tgen_t g;
    mw_tgen_init(&g, 3, 0, 4, 4, 4);
    mw_trace_rec_t r[300];
    size_t calls;
    size_t n = mw_tgen_window(&g, r, 140, 10000000, &calls);
    uint8_t *z, *c;
    size_t zlen, clen;
    uint32_t enc;
    uint64_t raw, craw;
    const char *why;
    assert_int_equal(mw_trace_encode(r, n, 1, 1, &z, &zlen, &enc, &raw), 0);
    assert_int_equal(enc, MW_TRACE_ENC_ZSTD);
    assert_int_equal(mw_trace_encode(r, n, 0, 1, &c, &clen, &enc, &craw), 0);
    assert_int_equal(raw, craw);
    assert_int_equal(decode(z, zlen, MW_TRACE_ENC_ZSTD, raw, (uint32_t)n, &why), 0);
    /* the raw size must be the frame's */
    assert_int_not_equal(decode(z, zlen, MW_TRACE_ENC_ZSTD, raw - 1, (uint32_t)n, &why), 0);
    assert_int_not_equal(decode(z, zlen, MW_TRACE_ENC_ZSTD, raw + 1, (uint32_t)n, &why), 0);
    /* the columns given as zstd, zstd as columns */
    assert_int_not_equal(decode(c, clen, MW_TRACE_ENC_ZSTD, craw, (uint32_t)n, &why), 0);
    assert_int_not_equal(decode(z, zlen, MW_TRACE_ENC_COLUMNS, zlen, (uint32_t)n, &why), 0);
    /* every truncation, a byte after the frame */
    for (size_t cut = 0; cut < zlen; cut++)
        assert_int_not_equal(decode(z, cut, MW_TRACE_ENC_ZSTD, raw, (uint32_t)n, &why), 0);
    uint8_t *zz = malloc(zlen + 1);
    memcpy(zz, z, zlen);
    zz[zlen] = 0;
    assert_int_not_equal(decode(zz, zlen + 1, MW_TRACE_ENC_ZSTD, raw, (uint32_t)n, &why), 0);
    /* a frame without its content size (streaming) */
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    assert_int_equal(ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, 0)), 0);
    size_t cap = ZSTD_compressBound(clen);
    uint8_t *s = malloc(cap);
    size_t slen = ZSTD_compress2(cc, s, cap, c, clen);
    assert_int_equal(ZSTD_isError(slen), 0);
    assert_int_not_equal(decode(s, slen, MW_TRACE_ENC_ZSTD, raw, (uint32_t)n, &why), 0);
    ZSTD_freeCCtx(cc);
    /* a frame that claims the right size but holds other columns */
    uint8_t *bad = malloc(clen);
    memcpy(bad, c, clen);
    bad[clen - 1] ^= 0x40;
    size_t blen = ZSTD_compress(s, cap, bad, clen, 1);
    assert_int_equal(ZSTD_isError(blen), 0);
    (void)decode(s, blen, MW_TRACE_ENC_ZSTD, raw, (uint32_t)n, &why); /* either way, no crash */
    /* corrupted frames: refused or decoded, never a crash (ASan) */
    for (size_t i = 0; i < zlen; i++) {
        memcpy(zz, z, zlen);
        zz[i] ^= (uint8_t)(1u << (i % 8));
        (void)decode(zz, zlen, MW_TRACE_ENC_ZSTD, raw, (uint32_t)n, &why);
    }
    free(bad);
    free(s);
    free(zz);
    free(z);
    free(c);
}

/* Mutated blocks: refused or exactly `count` records. */
static void test_mutations(void **state)
{
    (void)state;
    mw_tgen_t g;
    mw_tgen_init(&g, 9, 3, 4, 4, 4);
    mw_trace_rec_t r[600];
    size_t calls;
    size_t n = mw_tgen_window(&g, r, 280, 10000000, &calls);
    for (size_t i = 0; i < n; i += 7)
        r[i].thread = (uint32_t)(i % 3);
    uint8_t *c;
    size_t clen;
    uint32_t enc;
    uint64_t raw;
    const char *why;
    assert_int_equal(mw_trace_encode(r, n, 0, 0, &c, &clen, &enc, &raw), 0);
    uint8_t *m = malloc(clen + 8);
    size_t accepted = 0;
    for (int rep = 0; rep < 20000; rep++) {
        memcpy(m, c, clen);
        size_t len = clen;
        int k = 1 + (int)(rnd() % 4);
        for (int j = 0; j < k; j++) {
            size_t at = rnd() % len;
            switch (rnd() % 3) {
            case 0:
                m[at] ^= (uint8_t)(1u << (rnd() % 8));
                break;
            case 1:
                m[at] = (uint8_t)rnd();
                break;
            default:
                len = at + 1;
            }
        }
        accepted += decode(m, len, MW_TRACE_ENC_COLUMNS, len, (uint32_t)n, &why) == 0;
    }
    print_message("mutated blocks accepted: %zu of 20000\n", accepted);
    free(m);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_round_trip),
        cmocka_unit_test(test_stencil_size),
        cmocka_unit_test(test_mixed_round_trip),
        cmocka_unit_test(test_hand_block),
        cmocka_unit_test(test_caps),
        cmocka_unit_test(test_zstd_refusals),
        cmocka_unit_test(test_mutations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
