/* test_crafted.c: hostile input, built byte by byte, is rejected and counted by reason.
 *
 * The kinds of crafted protobuf the issue lists: truncated varints, wrong wire types, huge
 * repeated counts, NaN, ranks out of range, duplicate rank ids, timestamps a year off; plus
 * random frames. Each case checks the exact reason of every rejection through the per-reason
 * counters, that a rejected frame changed nothing (no sample merged, no totals), and that the
 * collector then still accepts a valid message. Frames are made with testmsg.h's encoder (or
 * by cutting and patching packed messages), so each defect is exactly the one named.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fixture.h"
#include "mw_wire.h"

#define JOB "crafted"
#define YEAR_NS (365ull * 86400ull * MW_NS_PER_S)

static uint64_t lcg_next(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s;
}

static mw_reject_t feed_raw(fx_t *f, const void *data, size_t len)
{
    return mw_collector_frame(f->c, data, len, 1, &f->now);
}

/* Counters of every reason, to check that a case moved exactly the ones it should. */
typedef struct {
    uint64_t accepted;
    uint64_t rejected[MW_REJECT_COUNT];
} counts_t;

static counts_t counts(const fx_t *f)
{
    counts_t c;
    c.accepted = f->c->stats.accepted;
    memcpy(c.rejected, f->c->stats.rejected, sizeof c.rejected);
    return c;
}

/* Since `before`: `n` more of reason `want` (MW_ACCEPTED: accepted), nothing else. */
static void expect_counts(const fx_t *f, const counts_t *before, mw_reject_t want, uint64_t n)
{
    counts_t now = counts(f);
    assert_int_equal(now.accepted - before->accepted, want == MW_ACCEPTED ? n : 0);
    for (int r = 1; r < MW_REJECT_COUNT; r++) {
        if (now.rejected[r] - before->rejected[r] != (r == (int)want ? n : 0))
            print_error("reason %s: %llu more, expected %llu\n", mw__reject_name((mw_reject_t)r),
                        (unsigned long long)(now.rejected[r] - before->rejected[r]),
                        (unsigned long long)(r == (int)want ? n : 0));
        assert_int_equal(now.rejected[r] - before->rejected[r], r == (int)want ? n : 0);
    }
}

/* A valid sample of rank `rank` for window w, with a bit of everything. */
static void good_sample(tm_msg_t *m, uint32_t rank, uint64_t w, uint64_t now)
{
    tm_sample(m, JOB, rank, w, now);
    tm_add_fn(m, fx_fn(0), 10, 10000, 500, 2000, 800);
    tm_add_fn(m, fx_fn(1), 2, 300, 100, 200, 64);
    tm_add_peer(m, 1 - rank, 2, 64);
    tm_add_occ(m, fx_fn(0), 3, 10000);
    tm_add_density(m, fx_fn(0), 3, 10, 1, 10);
    tm_add_call(m, fx_fn(0), now - 1000, 2000, 8, -1);
    m->env.seq = 3;
}

/* Nothing of any sample reached the job or the windows. */
static void assert_untouched(const fx_t *f)
{
    assert_int_equal(f->c->job.samples, 0);
    assert_int_equal(f->c->job.rank_fn.n, 0);
    assert_false(f->c->merge.started);
}

/* The top-level members of an envelope end at these offsets (a cut there leaves a valid,
 * shorter envelope). Returns how many. */
static size_t member_ends(const uint8_t *b, size_t n, size_t *ends)
{
    size_t k = 0, p = 0;
    while (p < n) {
        unsigned wire = b[p++] & 7; /* one-byte keys only in these frames */
        uint64_t v = 0;
        if (mw_wire_get_varint(b, n, &p, &v) < 0)
            p = n; /* a value cut by the end of the frame */
        if (wire == MW_WIRE_LEN)
            p += v;
        ends[k++] = p;
    }
    return k;
}

/* Every proper prefix of a valid sample frame: the cuts inside a member (a varint or a
 * length-delimited body cut short) are undecodable, the cuts between members leave an envelope
 * without body or (the empty frame) without version. Then varints that never end. */
static void test_truncated_varints(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    fx_hellos(f, JOB, 2);
    tm_msg_t m;
    good_sample(&m, 1, FX_W0, f->now.real_ns);
    m.sample.sent_ns = f->now.real_ns; /* a 9-byte varint, the last member of the sample */
    uint8_t *buf;
    size_t n = tm_pack(&m, &buf), ends[16];
    size_t n_ends = member_ends(buf, n, ends);
    assert_int_equal(ends[n_ends - 1], n);

    counts_t before = counts(f);
    uint64_t between = 0;
    for (size_t cut = 1; cut < n; cut++) {
        int at_end = 0;
        for (size_t i = 0; i < n_ends; i++)
            at_end |= ends[i] == cut;
        mw_reject_t r = feed_raw(f, buf, cut);
        assert_int_equal(r, at_end ? MW_REJECT_NO_BODY : MW_REJECT_DECODE);
        between += (uint64_t)at_end;
    }
    assert_int_equal(between, n_ends - 1); /* every member but the body */
    assert_int_equal(feed_raw(f, buf, 0), MW_REJECT_VERSION);
    counts_t now = counts(f);
    assert_int_equal(now.rejected[MW_REJECT_DECODE] - before.rejected[MW_REJECT_DECODE],
                     n - 1 - between);
    assert_int_equal(now.rejected[MW_REJECT_NO_BODY] - before.rejected[MW_REJECT_NO_BODY], between);
    assert_int_equal(now.rejected[MW_REJECT_VERSION] - before.rejected[MW_REJECT_VERSION], 1);
    assert_untouched(f);

    /* Varints that do not end: 11 bytes with the continuation bit (protobuf allows 10), a
     * window of ten 0xff bytes at the end of the sample, a packed array whose last varint has
     * its continuation bit, a tag of 6 bytes. */
    tm_enc_t e, s;
    before = counts(f);
    tm_put_head(&e, JOB, 1);
    tm_put(&e, "\x20\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12);
    assert_int_equal(feed_raw(f, e.b, e.n), MW_REJECT_DECODE);
    s.n = 0;
    tm_put_uint(&s, 18, f->now.real_ns);
    tm_put(&s, "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 11);
    tm_put_head(&e, JOB, 1);
    tm_put_msg(&e, 11, &s);
    assert_int_equal(feed_raw(f, e.b, e.n), MW_REJECT_DECODE);
    s.n = 0;
    tm_put_uint(&s, 1, FX_W0);
    tm_put_ld(&s, 3, "\x01\x80", 2);
    tm_put_head(&e, JOB, 1);
    tm_put_msg(&e, 11, &s);
    assert_int_equal(feed_raw(f, e.b, e.n), MW_REJECT_DECODE);
    tm_put_head(&e, JOB, 1);
    tm_put(&e, "\xfa\xff\xff\xff\xff\x01\x00", 7);
    assert_int_equal(feed_raw(f, e.b, e.n), MW_REJECT_DECODE);
    expect_counts(f, &before, MW_REJECT_DECODE, 4);
    assert_untouched(f);

    assert_int_equal(feed_raw(f, buf, n), MW_ACCEPTED); /* the whole frame is still fine */
    free(buf);
    fx_free(f);
}

/* A member of a known field with a wire type other than its own: the frame is undecodable,
 * at every level of the message. */
static void test_wrong_wire_types(void **state)
{
    (void)state;
    static const uint8_t nan64[8] = {0, 0, 0, 0, 0, 0, 0xf8, 0x7f};
    fx_t *f = fx_new();
    fx_hellos(f, JOB, 2);
    counts_t before = counts(f);
    tm_enc_t e, s, in;
    unsigned cases = 0;

#define FEED_DECODE()                                                                              \
    do {                                                                                           \
        assert_int_equal(feed_raw(f, e.b, e.n), MW_REJECT_DECODE);                                 \
        cases++;                                                                                   \
    } while (0)
    /* Envelope: version as bytes, job as a varint, rank as fixed32, the sample as a varint. */
    e.n = 0;
    tm_put_ld(&e, 1, "\x01", 1);
    FEED_DECODE();
    e.n = 0;
    tm_put_uint(&e, 1, MW_PROTO_VERSION);
    tm_put_uint(&e, 2, 5);
    FEED_DECODE();
    tm_put_head(&e, JOB, 1);
    tm_put_key(&e, 3, 5);
    tm_put(&e, "\x01\x00\x00\x00", 4);
    FEED_DECODE();
    tm_put_head(&e, JOB, 1);
    tm_put_uint(&e, 11, 1);
    FEED_DECODE();
    /* Sample: the window as fixed64, peer_rank as fixed32, a function summary as a varint, a
     * long call as fixed64. */
    static const unsigned field[4] = {1, 3, 2, 14}, wire[4] = {1, 5, 0, 1};
    for (int i = 0; i < 4; i++) {
        s.n = 0;
        tm_put_uint(&s, 18, f->now.real_ns);
        tm_put_key(&s, field[i], wire[i]);
        if (wire[i] == 0)
            tm_put_varint(&s, 1);
        else
            tm_put(&s, nan64, wire[i] == 1 ? 8 : 4);
        tm_put_head(&e, JOB, 1);
        tm_put_msg(&e, 11, &s);
        FEED_DECODE();
    }
    /* FunctionStat: fn as bytes; Call: peer as fixed32. */
    in.n = 0;
    tm_put_ld(&in, 1, "\x05", 1);
    s.n = 0;
    tm_put_msg(&s, 2, &in);
    tm_put_head(&e, JOB, 1);
    tm_put_msg(&e, 11, &s);
    FEED_DECODE();
    in.n = 0;
    tm_put_uint(&in, 1, fx_fn(0));
    tm_put_key(&in, 5, 5);
    tm_put(&in, "\x02\x00\x00\x00", 4);
    s.n = 0;
    tm_put_msg(&s, 14, &in);
    tm_put_head(&e, JOB, 1);
    tm_put_msg(&e, 11, &s);
    FEED_DECODE();
    /* Wire types protobuf-c does not take at all: groups (3, 4), 6 and 7, even for unknown
     * field numbers. */
    for (unsigned w = 3; w <= 7; w++) {
        if (w == 5)
            continue;
        tm_put_head(&e, JOB, 1);
        tm_put_key(&e, 30, w);
        tm_put(&e, "\x00\x00\x00\x00\x00\x00\x00\x00", 8);
        FEED_DECODE();
    }
#undef FEED_DECODE
    expect_counts(f, &before, MW_REJECT_DECODE, cases);
    assert_int_equal(cases, 14);
    assert_untouched(f);
    fx_free(f);
}

/* Lengths and counts far beyond what the frame or the collector can hold. */
static void test_huge_counts(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    fx_hellos(f, JOB, 2);
    tm_enc_t e;
    counts_t before = counts(f);

    /* A body that claims 2 GiB, and one that claims 4 GiB - 1 (a 5-byte length). */
    tm_put_head(&e, JOB, 1);
    tm_put(&e, "\x5a\x80\x80\x80\x80\x08\x08\x01", 8);
    assert_int_equal(feed_raw(f, e.b, e.n), MW_REJECT_DECODE);
    tm_put_head(&e, JOB, 1);
    tm_put(&e, "\x5a\xff\xff\xff\xff\x0f\x08\x01", 8);
    assert_int_equal(feed_raw(f, e.b, e.n), MW_REJECT_DECODE);
    expect_counts(f, &before, MW_REJECT_DECODE, 2);

    /* A frame of the largest size made of 4 million empty function summaries: decoded, they
     * would need far more than the decoding arena, which refuses them (no allocation per
     * message, no unbounded memory). One byte more is too large to be looked at. */
    size_t big = MW_MAX_MESSAGE_BYTES, body = big - 16;
    uint8_t *frame = malloc(big + 1);
    assert_non_null(frame);
    tm_put_head(&e, "j", 1);
    memcpy(frame, e.b, e.n);
    size_t p = e.n;
    frame[p++] = 0x5a;
    size_t sample_len = body - p - 4;
    for (int i = 0; i < 4; i++, sample_len >>= 7)
        frame[p++] = (uint8_t)((sample_len & 0x7f) | (i < 3 ? 0x80 : 0));
    while (p + 2 <= body) {
        frame[p++] = 0x12;
        frame[p++] = 0x00;
    }
    before = counts(f);
    assert_int_equal(feed_raw(f, frame, body), MW_REJECT_DECODE);
    assert_true(f->c->arena.failed > 0); /* refused for its size, not for its encoding */
    memset(frame, 0, big + 1);
    assert_int_equal(feed_raw(f, frame, big + 1), MW_REJECT_TOO_LARGE);
    free(frame);
    assert_int_equal(f->c->stats.rejected[MW_REJECT_DECODE] - before.rejected[MW_REJECT_DECODE], 1);
    assert_int_equal(f->c->stats.rejected[MW_REJECT_TOO_LARGE], 1);
    assert_untouched(f);

    /* 8,000 summaries of one function (listed twice is already wrong), and parallel peer
     * arrays of 20,000 and 1 entries. */
    static tm_enc_t s, in;
    s.n = 0;
    tm_put_uint(&s, 1, FX_W0);
    tm_put_uint(&s, 18, f->now.real_ns);
    in.n = 0;
    tm_put_uint(&in, 1, fx_fn(0));
    tm_put_uint(&in, 2, 1);
    for (int i = 0; i < 8000; i++)
        tm_put_msg(&s, 2, &in);
    tm_put_head(&e, JOB, 1);
    before = counts(f);
    {
        static tm_enc_t env;
        env = e;
        tm_put_msg(&env, 11, &s);
        assert_int_equal(feed_raw(f, env.b, env.n), MW_REJECT_BAD_FIELD);
    }
    s.n = 0;
    tm_put_uint(&s, 1, FX_W0);
    tm_put_uint(&s, 18, f->now.real_ns);
    static uint8_t peers[20000];
    memset(peers, 0, sizeof peers); /* peer 0, 20,000 times */
    tm_put_ld(&s, 3, peers, sizeof peers);
    tm_put_ld(&s, 4, "\x01", 1);
    tm_put_ld(&s, 5, "\x01", 1);
    {
        static tm_enc_t env;
        env = e;
        tm_put_msg(&env, 11, &s);
        assert_int_equal(feed_raw(f, env.b, env.n), MW_REJECT_BAD_FIELD);
    }
    expect_counts(f, &before, MW_REJECT_BAD_FIELD, 2);
    assert_untouched(f);

    /* The same 20,000 peer entries with arrays of equal length are valid: rank 1 sent to rank
     * 0 20,000 times over; the window and the totals hold one pair with all of it. */
    static uint8_t ones[20000];
    memset(ones, 1, sizeof ones);
    s.n = 0;
    tm_put_uint(&s, 1, FX_W0);
    tm_put_uint(&s, 18, f->now.real_ns);
    tm_put_ld(&s, 3, peers, sizeof peers);
    tm_put_ld(&s, 4, ones, sizeof ones);
    tm_put_ld(&s, 5, ones, sizeof ones);
    {
        static tm_enc_t env;
        env = e;
        tm_put_msg(&env, 11, &s);
        assert_int_equal(feed_raw(f, env.b, env.n), MW_ACCEPTED);
    }
    assert_int_equal(f->c->job.pairs.n, 1);
    const mw_pair_sum_t *pair = MW__INDEX_AT(&f->c->job.pairs, const mw_pair_sum_t, 0);
    assert_int_equal(pair->src, 1);
    assert_int_equal(pair->dst, 0);
    assert_int_equal(pair->messages, 20000);
    assert_int_equal(pair->bytes, 20000);
    tm_msg_t m;
    good_sample(&m, 0, FX_W0, f->now.real_ns);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED); /* window FX_W0 closes */
    assert_int_equal(f->n_closed, 1);
    assert_int_equal(f->closed[0].n_pairs, 2);
    for (uint32_t i = 0; i < 2; i++)
        if (f->closed[0].pairs[i].src == 1)
            assert_int_equal(f->closed[0].pairs[i].messages, 20000);
    fx_free(f);
}

/* No field of the wire format is a float, so a NaN can only arrive as the bits of a fixed-width
 * member: in place of an integer field it is the wrong wire type; as an unknown field it is
 * skipped and never read. */
static void test_nan(void **state)
{
    (void)state;
    static const uint8_t nan64[8] = {0, 0, 0, 0, 0, 0, 0xf8, 0x7f};
    static const uint8_t nan32[4] = {0, 0, 0xc0, 0x7f};
    fx_t *f = fx_new();
    fx_hellos(f, JOB, 2);
    tm_msg_t m;
    uint8_t *packed;
    good_sample(&m, 1, FX_W0, f->now.real_ns);
    size_t n = tm_pack(&m, &packed);
    tm_enc_t e, s;
    counts_t before = counts(f);

    /* sent_ns as a NaN double: rejected. */
    s.n = 0;
    tm_put_uint(&s, 1, FX_W0);
    tm_put_key(&s, 18, 1);
    tm_put(&s, nan64, 8);
    tm_put_head(&e, JOB, 1);
    tm_put_msg(&e, 11, &s);
    assert_int_equal(feed_raw(f, e.b, e.n), MW_REJECT_DECODE);
    /* A total as a NaN float: rejected. */
    tm_enc_t in;
    in.n = 0;
    tm_put_uint(&in, 1, fx_fn(0));
    tm_put_key(&in, 3, 5);
    tm_put(&in, nan32, 4);
    s.n = 0;
    tm_put_uint(&s, 1, FX_W0);
    tm_put_uint(&s, 18, f->now.real_ns);
    tm_put_msg(&s, 2, &in);
    tm_put_head(&e, JOB, 1);
    tm_put_msg(&e, 11, &s);
    assert_int_equal(feed_raw(f, e.b, e.n), MW_REJECT_DECODE);
    expect_counts(f, &before, MW_REJECT_DECODE, 2);
    assert_untouched(f);

    /* NaN bits as unknown fields of the envelope (fields 30, 31) after the valid sample: the
     * sample is accepted and its figures are the valid ones. */
    e.n = 0;
    tm_put(&e, packed, n);
    tm_put_key(&e, 30, 1);
    tm_put(&e, nan64, 8);
    tm_put_key(&e, 31, 5);
    tm_put(&e, nan32, 4);
    before = counts(f);
    assert_int_equal(feed_raw(f, e.b, e.n), MW_ACCEPTED);
    expect_counts(f, &before, MW_ACCEPTED, 1);
    assert_int_equal(f->c->job.fn[fx_fn(0)].total_ns, 10000);
    assert_int_equal(f->c->job.ranks[1].mpi_time_ns, 10300);
    free(packed);
    fx_free(f);
}

/* Ranks out of range, a rank beyond 32 bits on the wire, and two senders with one rank id. */
static void test_rank_ids(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    tm_msg_t m;
    counts_t before = counts(f);
    tm_hello(&m, JOB, UINT32_MAX, 2, f->now.real_ns);
    assert_int_equal(fx_feed(f, &m), MW_REJECT_RANK_RANGE);
    tm_hello(&m, JOB, 0, UINT32_MAX, f->now.real_ns);
    assert_int_equal(fx_feed(f, &m), MW_REJECT_RANK_RANGE);
    expect_counts(f, &before, MW_REJECT_RANK_RANGE, 2);

    fx_hellos(f, JOB, 2);
    before = counts(f);
    good_sample(&m, 0, FX_W0, f->now.real_ns);
    m.env.rank = 2;
    assert_int_equal(fx_feed(f, &m), MW_REJECT_RANK_RANGE);
    m.env.rank = UINT32_MAX;
    assert_int_equal(fx_feed(f, &m), MW_REJECT_RANK_RANGE);
    expect_counts(f, &before, MW_REJECT_RANK_RANGE, 2);
    before = counts(f);
    good_sample(&m, 0, FX_W0, f->now.real_ns);
    m.peer_rank[0] = UINT32_MAX;
    assert_int_equal(fx_feed(f, &m), MW_REJECT_BAD_FIELD);
    good_sample(&m, 0, FX_W0, f->now.real_ns);
    m.calls[0].peer = INT32_MAX;
    assert_int_equal(fx_feed(f, &m), MW_REJECT_BAD_FIELD);
    expect_counts(f, &before, MW_REJECT_BAD_FIELD, 2);
    assert_untouched(f);

    /* A rank of 2^32 + 1 on the wire is read as 1: protobuf keeps the low 32 bits of a uint32
     * field, so this is rank 1's sample, within the range. */
    uint8_t *packed;
    good_sample(&m, 1, FX_W0, f->now.real_ns);
    m.env.rank = 0; /* left out by the packer; the rank is appended below */
    size_t n = tm_pack(&m, &packed);
    tm_enc_t e;
    e.n = 0;
    tm_put(&e, packed, n);
    tm_put_uint(&e, 3, (1ull << 32) + 1);
    free(packed);
    assert_int_equal(feed_raw(f, e.b, e.n), MW_ACCEPTED);
    assert_int_equal(f->c->job.ranks[1].samples, 1);
    assert_int_equal(f->c->job.ranks[0].samples, 0);

    /* A second process claiming rank 1: its hello (another pid) and its samples for windows
     * rank 1 already sent are rejected; the totals hold rank 1's first sample only. */
    before = counts(f);
    tm_hello(&m, JOB, 1, 2, f->now.real_ns);
    m.hello.pid = 99999;
    assert_int_equal(fx_feed(f, &m), MW_REJECT_DUPLICATE_HELLO);
    expect_counts(f, &before, MW_REJECT_DUPLICATE_HELLO, 1);
    before = counts(f);
    good_sample(&m, 1, FX_W0, f->now.real_ns);
    assert_int_equal(fx_feed(f, &m), MW_REJECT_DUPLICATE);
    good_sample(&m, 1, FX_W0 - 1, f->now.real_ns);
    assert_int_equal(fx_feed(f, &m), MW_REJECT_DUPLICATE);
    expect_counts(f, &before, MW_REJECT_DUPLICATE, 2);
    assert_int_equal(f->c->job.ranks[1].pid, 1001);
    assert_int_equal(f->c->job.ranks[1].samples, 1);
    assert_int_equal(f->c->job.fn[fx_fn(0)].count, 10);
    fx_free(f);
}

/* Every timestamp of a message a year ahead or behind the collector's clock. */
static void test_timestamps_year_off(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    tm_msg_t m;
    const uint64_t now = f->now.real_ns;
    const int64_t off[2] = {(int64_t)YEAR_NS, -(int64_t)YEAR_NS};
    counts_t before = counts(f);
    for (int i = 0; i < 2; i++) {
        tm_hello(&m, JOB, 0, 2, now + (uint64_t)off[i]);
        assert_int_equal(fx_feed(f, &m), MW_REJECT_TIMESTAMP);
    }
    expect_counts(f, &before, MW_REJECT_TIMESTAMP, 2);
    assert_false(f->c->job.active);

    fx_hellos(f, JOB, 2);
    before = counts(f);
    for (int i = 0; i < 2; i++) {
        good_sample(&m, 0, FX_W0, now);
        m.sample.sent_ns = now + (uint64_t)off[i];
        assert_int_equal(fx_feed(f, &m), MW_REJECT_TIMESTAMP);
        good_sample(&m, 0, FX_W0 + (uint64_t)(off[i] / (int64_t)TM_WINDOW_NS), now);
        assert_int_equal(fx_feed(f, &m), MW_REJECT_TIMESTAMP);
        good_sample(&m, 0, FX_W0, now);
        m.calls[0].start_ns = now + (uint64_t)off[i];
        assert_int_equal(fx_feed(f, &m), MW_REJECT_TIMESTAMP);
    }
    expect_counts(f, &before, MW_REJECT_TIMESTAMP, 6);
    assert_untouched(f);
    good_sample(&m, 0, FX_W0, now);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    fx_free(f);
}

/* Random frames, of random lengths, some starting like an envelope: all rejected, each counted
 * once under some reason, nothing accepted, and the collector is fine afterwards. */
static void test_random_frames(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    fx_hellos(f, JOB, 2);
    counts_t before = counts(f);
    uint64_t seed = 0x5eed;
    static uint8_t buf[4096];
    enum { FRAMES = 20000 };
    for (int i = 0; i < FRAMES; i++) {
        size_t n = (size_t)(lcg_next(&seed) % sizeof buf);
        for (size_t k = 0; k < n; k++)
            buf[k] = (uint8_t)(lcg_next(&seed) >> 33);
        if (i % 2 && n > 2) { /* half of them with a plausible start: version 1 */
            buf[0] = 0x08;
            buf[1] = 0x01;
        }
        assert_int_not_equal(feed_raw(f, buf, n), MW_ACCEPTED);
    }
    counts_t now = counts(f);
    uint64_t total = 0;
    for (int r = 1; r < MW_REJECT_COUNT; r++)
        total += now.rejected[r] - before.rejected[r];
    assert_int_equal(total, FRAMES);
    assert_int_equal(now.accepted, before.accepted);
    assert_untouched(f);
    tm_msg_t m;
    good_sample(&m, 0, FX_W0, f->now.real_ns);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_truncated_varints), cmocka_unit_test(test_wrong_wire_types),
        cmocka_unit_test(test_huge_counts),       cmocka_unit_test(test_nan),
        cmocka_unit_test(test_rank_ids),          cmocka_unit_test(test_timestamps_year_off),
        cmocka_unit_test(test_random_frames),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
