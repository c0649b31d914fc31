/* test_trace.c: per-call traces through the collector's core (docs/trace.md, "The job's budget
 * (collector)"): crafted samples with traces, valid and broken in one way each, and traces sent
 * after their sample (Envelope.trace). Each test checks the closed window (which ranks are
 * exact, their records as sent, what was left out), the counters by reason, and that the
 * summary part of every sample was merged whatever happened to its trace.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fixture.h"
#include "mw_trace.h"
#include "window_pb.h"

#define JOB "trace-job"

/* What the tests look at in a closed window, beyond fixture.h's copy. */
typedef struct {
    uint64_t index;
    uint32_t reporting, n_traces, traced_ranks, n_comms;
    uint64_t left_out, traced_calls, sends; /* sends: MPI_Send calls in the summary */
    mw_rank_trace_t traces[8];
    uint8_t bytes[8][4096];
    mw_comm_def_t comms[8];
    Mpiwatch__Window *pb; /* the window in wire form, decoded back */
} tw_t;

static tw_t closed[16];
static unsigned n_closed;
static mw_pb_encoder_t enc;

static void on_window(const mw_window_t *w, void *user)
{
    (void)user;
    if (n_closed == 16)
        return;
    tw_t *o = &closed[n_closed++];
    memset(o, 0, sizeof *o);
    o->index = w->index;
    o->reporting = w->ranks_reporting;
    o->n_traces = w->n_traces;
    o->traced_ranks = w->traced_ranks;
    o->left_out = w->trace_left_out;
    o->traced_calls = w->traced_calls;
    o->n_comms = w->n_comms;
    o->sends = w->fn[fx_fn(1)].s.count;
    for (uint32_t i = 0; i < w->n_traces && i < 8; i++) {
        o->traces[i] = w->traces[i];
        assert_true(w->traces[i].len <= sizeof o->bytes[i]);
        if (w->traces[i].len) /* an empty trace has no bytes (tbytes may be NULL) */
            memcpy(o->bytes[i], w->tbytes + w->traces[i].off, w->traces[i].len);
    }
    for (uint32_t i = 0; i < w->n_comms && i < 8; i++)
        o->comms[i] = w->comms[i];
    size_t len = mw__window_pack(&enc, w, 0);
    assert_true(len > 0);
    o->pb = mpiwatch__window__unpack(NULL, len, enc.out);
    assert_non_null(o->pb);
}

static fx_t *start(uint32_t size)
{
    fx_t *f = fx_new();
    f->c->on_window = on_window;
    for (unsigned i = 0; i < n_closed; i++)
        mpiwatch__window__free_unpacked(closed[i].pb, NULL);
    n_closed = 0;
    fx_hellos(f, JOB, size);
    return f;
}

static void stop(fx_t *f)
{
    for (unsigned i = 0; i < n_closed; i++)
        mpiwatch__window__free_unpacked(closed[i].pb, NULL);
    n_closed = 0;
    fx_free(f);
}

/* Records of `sends` MPI_Send calls to rank `peer` and one MPI_Allreduce, as a rank's wrappers
 * would have them, encoded by the one codec (proto/mw_trace.h). */
typedef struct {
    uint8_t *data;
    size_t len;
    uint32_t encoding, count;
    uint64_t raw;
} recs_t;

static recs_t make_records(unsigned sends, int32_t peer)
{
    mw_trace_rec_t r[64];
    unsigned n = 0;
    for (unsigned i = 0; i < sends; i++)
        r[n++] = (mw_trace_rec_t){.start_ns = 1000 * i,
                                  .dur_ns = 300,
                                  .comm = MW_COMM_ID_WORLD,
                                  .seq = i,
                                  .bytes = 64,
                                  .peer = peer,
                                  .tag = 7,
                                  .fn = (uint16_t)fx_fn(1),
                                  .kind = MW_TK_SEND};
    /* A receive from MPI_PROC_NULL completed in an MPI_Wait: the status's MPI_ANY_TAG (-1) as it
     * came, no peer; not a call. */
    r[n++] = (mw_trace_rec_t){.start_ns = 40000,
                              .req = 9,
                              .peer = -1,
                              .tag = -1,
                              .fn = (uint16_t)fx_fn(5),
                              .kind = MW_TK_RECV_DONE,
                              .flags = MW_TF_PROC_NULL};
    r[n++] = (mw_trace_rec_t){.start_ns = 50000,
                              .dur_ns = 2000,
                              .comm = MW_COMM_ID_WORLD,
                              .seq = 0,
                              .bytes = 8,
                              .peer = -1,
                              .fn = (uint16_t)fx_fn(0),
                              .kind = MW_TK_COLL};
    recs_t out = {0};
    assert_int_equal(mw_trace_encode(r, n, 0, 0, &out.data, &out.len, &out.encoding, &out.raw), 0);
    out.count = n;
    return out;
}

/* A sample of `rank` for window w with `sends` MPI_Send and one MPI_Allreduce in its summary,
 * and a trace `t` (NULL: none). */
static void sample(tm_msg_t *m, fx_t *f, uint32_t rank, uint64_t w, unsigned sends,
                   Mpiwatch__Trace *t)
{
    tm_sample(m, JOB, rank, w, f->now.real_ns);
    if (sends)
        tm_add_fn(m, fx_fn(1), sends, 300 * sends, 300, 300, 64 * sends);
    tm_add_fn(m, fx_fn(0), 1, 2000, 2000, 2000, 8);
    m->sample.trace = t;
}

static void exact_trace(Mpiwatch__Trace *t, uint64_t w, const recs_t *r)
{
    mpiwatch__trace__init(t);
    t->window = w;
    t->state = MW_TRACE_EXACT;
    t->count = r->count;
    t->encoding = r->encoding;
    t->raw_bytes = r->raw;
    t->records.data = r->data;
    t->records.len = r->len;
    t->threads = 1;
}

/* One rank exact, one summary only by the budget: the window keeps both entries in rank order,
 * the exact one's records byte for byte, and counts the other's calls as left out. */
static void test_valid(void **state)
{
    (void)state;
    fx_t *f = start(3);
    recs_t r0 = make_records(3, 1);
    Mpiwatch__Trace t0, t1;
    exact_trace(&t0, FX_W0, &r0);
    mpiwatch__trace__init(&t1);
    t1.window = FX_W0;
    t1.state = MW_TRACE_SUMMARY_ONLY;
    t1.reason = MW_TRACE_WHY_BUDGET;
    t1.left_out = 6;
    tm_msg_t m;
    sample(&m, f, 1, FX_W0, 5, &t1); /* arrives first: the window sorts by rank */
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    sample(&m, f, 0, FX_W0, 3, &t0);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    sample(&m, f, 2, FX_W0, 2, NULL); /* a rank that does not trace */
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    assert_int_equal(n_closed, 1);
    const tw_t *w = &closed[0];
    assert_int_equal(w->reporting, 3);
    assert_int_equal(w->sends, 10);
    assert_int_equal(w->n_traces, 2);
    assert_int_equal(w->traced_ranks, 1);
    assert_int_equal(w->traced_calls, 4);
    assert_int_equal(w->left_out, 6); /* rank 1: 5 sends + 1 allreduce */
    assert_int_equal(w->traces[0].rank, 0);
    assert_int_equal(w->traces[0].state, MW_TRACE_EXACT);
    assert_int_equal(w->traces[0].count, 5); /* 4 calls and a completion */
    assert_int_equal(w->traces[0].len, r0.len);
    assert_memory_equal(w->bytes[0], r0.data, r0.len);
    assert_int_equal(w->traces[1].rank, 1);
    assert_int_equal(w->traces[1].state, MW_TRACE_SUMMARY_ONLY);
    assert_int_equal(w->traces[1].reason, MW_TRACE_WHY_BUDGET);
    assert_int_equal(w->traces[1].len, 0);
    /* The wire form: the same entries, the records untouched, and they decode. */
    const Mpiwatch__Window *pw = w->pb;
    assert_int_equal(pw->n_traces, 2);
    assert_int_equal(pw->traced_ranks, 1);
    assert_int_equal(pw->trace_left_out, 6);
    assert_int_equal(pw->traces[0]->rank, 0);
    assert_int_equal(pw->traces[0]->trace->records.len, r0.len);
    assert_memory_equal(pw->traces[0]->trace->records.data, r0.data, r0.len);
    mw_trace_rec_t *dec = NULL;
    size_t n = 0;
    const char *why = NULL;
    assert_int_equal(
        mw_trace_decode(pw->traces[0]->trace->records.data, pw->traces[0]->trace->records.len,
                        pw->traces[0]->trace->encoding, pw->traces[0]->trace->raw_bytes,
                        pw->traces[0]->trace->count, &dec, &n, &why),
        0);
    assert_int_equal(n, 5);
    assert_int_equal(dec[2].peer, 1);
    assert_int_equal(dec[3].tag, -1);
    free(dec);
    assert_int_equal(pw->traces[1]->trace->state, MW_TRACE_SUMMARY_ONLY);
    /* Counters. */
    const mw_trace_stats_t *st = &f->c->tstats;
    assert_int_equal(st->traces, 2);
    assert_int_equal(st->exact, 1);
    assert_int_equal(st->summary_only, 1);
    assert_int_equal(st->traced_calls, 4);
    assert_int_equal(st->left_out, 6);
    assert_int_equal(f->c->job.ranks[0].traced_windows, 1);
    assert_int_equal(f->c->job.ranks[1].traced_windows, 0);
    for (int i = 0; i < MW_TREFUSE_COUNT; i++)
        assert_int_equal(st->refused[i], 0);
    free(r0.data);
    stop(f);
}

/* A broken trace of rank 0, alone in a 1-rank job: its reason is counted, the rank is summary
 * only (refused) in the window, and the summary part of the sample is merged in full. */
static void expect_refused(fx_t *f, mw_trace_refuse_t why, unsigned sends)
{
    assert_int_equal(n_closed, 1);
    const tw_t *w = &closed[0];
    assert_int_equal(w->reporting, 1);
    assert_int_equal(w->sends, sends); /* the summary survived */
    assert_int_equal(w->n_traces, 1);
    assert_int_equal(w->traced_ranks, 0);
    assert_int_equal(w->traces[0].state, MW_TRACE_SUMMARY_ONLY);
    assert_int_equal(w->traces[0].reason, MW_TRACE_WHY_REFUSED);
    assert_int_equal(w->traces[0].len, 0);
    assert_int_equal(w->left_out, sends + 1);
    assert_int_equal(w->pb->traces[0]->trace->records.len, 0);
    for (int i = 0; i < MW_TREFUSE_COUNT; i++)
        if (f->c->tstats.refused[i] != (i == (int)why))
            fail_msg("reason %s counted %llu times", mw__trace_refuse_name((mw_trace_refuse_t)i),
                     (unsigned long long)f->c->tstats.refused[i]);
    assert_int_equal(f->c->tstats.exact, 0);
    assert_int_equal(f->c->stats.accepted, 2); /* hello and sample */
}

enum {
    BREAK_ENCODING,
    BREAK_BYTES,
    BREAK_COUNT,
    BREAK_CAP,
    BREAK_STATE,
    BREAK_REASON,
    BREAK_WINDOW,
    BREAK_SUMMARY_WITH_RECORDS,
    BREAK_PEER,
    BREAK_EXACT_EMPTY,
    BREAK_N
};

static void test_refused(void **state)
{
    (void)state;
    static const struct {
        int what;
        mw_trace_refuse_t why;
    } cases[] = {
        {BREAK_ENCODING, MW_TREFUSE_FIELD}, {BREAK_BYTES, MW_TREFUSE_DECODE},
        {BREAK_COUNT, MW_TREFUSE_COUNTS},   {BREAK_CAP, MW_TREFUSE_CAPS},
        {BREAK_STATE, MW_TREFUSE_FIELD},    {BREAK_REASON, MW_TREFUSE_FIELD},
        {BREAK_WINDOW, MW_TREFUSE_WINDOW},  {BREAK_SUMMARY_WITH_RECORDS, MW_TREFUSE_FIELD},
        {BREAK_PEER, MW_TREFUSE_RECORD},    {BREAK_EXACT_EMPTY, MW_TREFUSE_COUNTS},
    };
    _Static_assert(sizeof cases / sizeof cases[0] == BREAK_N, "every case");
    for (size_t i = 0; i < BREAK_N; i++) {
        fx_t *f = start(1);
        unsigned sends = 3;
        /* BREAK_COUNT: records of 2 sends, a summary of 3. BREAK_PEER: a send to rank 5 of 1. */
        recs_t r =
            make_records(cases[i].what == BREAK_COUNT ? 2 : 3, cases[i].what == BREAK_PEER ? 5 : 0);
        uint8_t garbage[64];
        Mpiwatch__Trace t;
        exact_trace(&t, FX_W0, &r);
        switch (cases[i].what) {
        case BREAK_ENCODING:
            t.encoding = 9;
            break;
        case BREAK_BYTES:
            memset(garbage, 0xff, sizeof garbage);
            t.records.data = garbage;
            t.records.len = sizeof garbage;
            break;
        case BREAK_CAP:
            t.count = MW_TRACE_MAX_RECORDS + 1;
            break;
        case BREAK_STATE:
            t.state = 3;
            break;
        case BREAK_REASON:
            t.reason = 7;
            break;
        case BREAK_WINDOW:
            t.window = FX_W0 - 1;
            break;
        case BREAK_SUMMARY_WITH_RECORDS:
            t.state = MW_TRACE_SUMMARY_ONLY;
            break;
        case BREAK_EXACT_EMPTY:
            t.count = 0;
            t.records.len = 0;
            break;
        default:
            break;
        }
        tm_msg_t m;
        sample(&m, f, 0, FX_W0, sends, &t);
        assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
        expect_refused(f, cases[i].why, sends);
        free(r.data);
        stop(f);
    }
}

/* Communicator definitions: kept with their sender's world rank; one out of range drops the
 * sample's list (counted), never the sample. */
static void test_comms(void **state)
{
    (void)state;
    fx_t *f = start(2);
    Mpiwatch__CommDef d[3], *dp[3];
    for (int i = 0; i < 3; i++) {
        mpiwatch__comm_def__init(&d[i]);
        d[i].id = 100 + (uint64_t)i;
        d[i].parent = MW_COMM_ID_WORLD;
        d[i].fn = mw_fn_id("MPI_Comm_split");
        d[i].rank = 0;
        d[i].size = 2;
        dp[i] = &d[i];
    }
    tm_msg_t m;
    sample(&m, f, 1, FX_W0, 1, NULL);
    m.sample.comms = dp;
    m.sample.n_comms = 2;
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    d[2].rank = 2; /* not below its size */
    sample(&m, f, 0, FX_W0, 1, NULL);
    m.sample.comms = dp;
    m.sample.n_comms = 3;
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    assert_int_equal(n_closed, 1);
    const tw_t *w = &closed[0];
    assert_int_equal(w->reporting, 2);
    assert_int_equal(w->sends, 2);
    assert_int_equal(w->n_comms, 2);
    assert_int_equal(w->comms[0].id, 100);
    assert_int_equal(w->comms[1].id, 101);
    assert_int_equal(w->comms[0].world_rank, 1);
    assert_int_equal(w->pb->n_comms, 2);
    assert_int_equal(w->pb->n_comm_world_rank, 2);
    assert_int_equal(w->pb->comm_world_rank[1], 1);
    assert_int_equal(w->pb->comms[1]->size, 2);
    assert_int_equal(f->c->tstats.refused[MW_TREFUSE_COMM], 1);
    assert_int_equal(f->c->tstats.comms, 2);
    stop(f);
}

/* Packs an Envelope.trace of `rank`. */
static mw_reject_t feed_late(fx_t *f, uint32_t rank, Mpiwatch__Trace *t)
{
    Mpiwatch__Envelope env = MPIWATCH__ENVELOPE__INIT;
    env.version = MW_PROTO_VERSION;
    env.job = (char *)JOB;
    env.rank = rank;
    env.seq = 99;
    env.body_case = MPIWATCH__ENVELOPE__BODY_TRACE;
    env.trace = t;
    size_t len = mpiwatch__envelope__get_packed_size(&env);
    uint8_t *buf = malloc(len);
    assert_non_null(buf);
    mpiwatch__envelope__pack(&env, buf);
    mw_reject_t r = mw_collector_frame(f->c, buf, len, 1, &f->now);
    free(buf);
    return r;
}

/* Traces sent after their sample (a reach-back capture): into the window while it is open
 * (replacing the rank's summary-only entry), on the feed once it has closed, refused for a
 * window the rank never sent. */
static void test_late_trace(void **state)
{
    (void)state;
    fx_t *f = start(2);
    recs_t r = make_records(2, 1);
    Mpiwatch__Trace so, late;
    mpiwatch__trace__init(&so);
    so.window = FX_W0;
    so.state = MW_TRACE_SUMMARY_ONLY;
    so.reason = MW_TRACE_WHY_NOT_ASKED;
    tm_msg_t m;
    sample(&m, f, 0, FX_W0, 2, &so);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    /* Broken records in a late trace: refused (before the valid one below:
     * a rank's second exact trace of a window would be refused as a duplicate first). */
    uint8_t garbage[16];
    memset(garbage, 0x80, sizeof garbage);
    exact_trace(&late, FX_W0, &r);
    late.records.data = garbage;
    late.records.len = sizeof garbage;
    assert_int_equal(feed_late(f, 0, &late), MW_REJECT_TRACE);
    assert_int_equal(f->c->tstats.refused[MW_TREFUSE_DECODE], 1);
    /* Window FX_W0 is open (rank 1 has not sent it): the late trace joins it. */
    exact_trace(&late, FX_W0, &r);
    late.capture = 42;
    assert_int_equal(feed_late(f, 0, &late), MW_ACCEPTED);
    /* A window rank 0 has not sent yet: refused. */
    exact_trace(&late, FX_W0 + 1, &r);
    assert_int_equal(feed_late(f, 0, &late), MW_REJECT_TRACE);
    assert_int_equal(f->c->tstats.refused[MW_TREFUSE_LATE], 1);
    sample(&m, f, 1, FX_W0, 2, NULL);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    assert_int_equal(n_closed, 1);
    const tw_t *w = &closed[0];
    assert_int_equal(w->sends, 4);
    assert_int_equal(w->n_traces, 1); /* one entry per rank: the exact one won */
    assert_int_equal(w->traced_ranks, 1);
    assert_int_equal(w->traces[0].state, MW_TRACE_EXACT);
    assert_int_equal(w->traces[0].capture, 42);
    assert_memory_equal(w->bytes[0], r.data, r.len);
    assert_int_equal(w->left_out, 0);
    /* Now closed: a late trace of it is accepted and published (feed only). */
    exact_trace(&late, FX_W0, &r);
    assert_int_equal(feed_late(f, 1, &late), MW_ACCEPTED);
    assert_int_equal(f->c->tstats.published, 1);
    assert_int_equal(f->c->tstats.reach_back, 2);
    assert_int_equal(n_closed, 1);
    /* Another job's rank, and a trace without body fields: the usual envelope checks. */
    assert_int_equal(feed_late(f, 7, &late), MW_REJECT_RANK_RANGE);
    free(r.data);
    stop(f);
}

/* A window's traced bytes are capped: a trace that would pass MW_TRACE_WINDOW_MAX_BYTES is
 * refused before it is decoded, and the sample is merged. */
static void test_window_cap(void **state)
{
    (void)state;
    fx_t *f = start(1);
    size_t big = MW_TRACE_WINDOW_MAX_BYTES + 1;
    uint8_t *junk = calloc(1, big);
    assert_non_null(junk);
    Mpiwatch__Trace t;
    recs_t r = make_records(3, 0);
    exact_trace(&t, FX_W0, &r);
    t.records.data = junk;
    t.records.len = big;
    tm_msg_t m;
    sample(&m, f, 0, FX_W0, 3, &t);
    /* Over the frame limit when packed: apply it below the framing, as ingest would. */
    mw_trace_in_t in;
    mw__trace_check_sample(f->c, 0, &m.sample, &in);
    assert_int_equal(in.state, MW_TRACE_SUMMARY_ONLY);
    assert_int_equal(in.reason, MW_TRACE_WHY_REFUSED);
    assert_int_equal(in.keep_records, 0);
    assert_int_equal(in.left_out, 4);
    assert_int_equal(f->c->tstats.refused[MW_TREFUSE_WINDOW_BYTES], 1);
    free(junk);
    free(r.data);
    stop(f);
}

/* An "exact" trace with records but count 0 is refused before anything is kept (field), on both
 * paths: an EXACT trace decodes to exactly its count, so a rank cannot fill a window's byte cap
 * with bytes nobody decodes and shut the other ranks' traces out. */
static void test_count0_records(void **state)
{
    (void)state;
    fx_t *f = start(2);
    size_t big = 4u << 20;
    uint8_t *junk = malloc(big);
    assert_non_null(junk);
    memset(junk, 0xAB, big);
    /* In a sample without timed calls (an exact trace of 0 records would be right there). */
    Mpiwatch__Trace t;
    mpiwatch__trace__init(&t);
    t.window = FX_W0;
    t.state = MW_TRACE_EXACT;
    t.encoding = MW_TRACE_ENC_COLUMNS;
    t.records.data = junk;
    t.records.len = 64;
    tm_msg_t m;
    tm_sample(&m, JOB, 0, FX_W0, f->now.real_ns);
    m.sample.trace = &t;
    mw_trace_in_t in;
    mw__trace_check_sample(f->c, 0, &m.sample, &in);
    assert_int_equal(in.state, MW_TRACE_SUMMARY_ONLY);
    assert_int_equal(in.reason, MW_TRACE_WHY_REFUSED);
    assert_int_equal(in.keep_records, 0);
    assert_int_equal(f->c->tstats.refused[MW_TREFUSE_FIELD], 1);
    /* After the sample (Envelope.trace): each one refused, nothing kept. */
    Mpiwatch__Trace so;
    mpiwatch__trace__init(&so);
    so.window = FX_W0;
    so.state = MW_TRACE_SUMMARY_ONLY;
    so.reason = MW_TRACE_WHY_NOT_ASKED;
    sample(&m, f, 0, FX_W0, 2, &so);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    for (int i = 0; i < 8; i++) {
        Mpiwatch__Trace late;
        mpiwatch__trace__init(&late);
        late.window = FX_W0;
        late.state = MW_TRACE_EXACT;
        late.encoding = MW_TRACE_ENC_COLUMNS;
        late.records.data = junk;
        late.records.len = big;
        assert_int_equal(feed_late(f, 0, &late), MW_REJECT_TRACE);
    }
    assert_int_equal(f->c->tstats.refused[MW_TREFUSE_FIELD], 9);
    assert_int_equal(f->c->merge.trace_open_bytes, 0);
    /* Rank 1's valid exact trace is kept. */
    recs_t r = make_records(2, 0);
    Mpiwatch__Trace t1;
    exact_trace(&t1, FX_W0, &r);
    sample(&m, f, 1, FX_W0, 2, &t1);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    assert_int_equal(n_closed, 1);
    assert_int_equal(closed[0].traced_ranks, 1);
    assert_int_equal(closed[0].n_traces, 2);
    assert_int_equal(closed[0].traces[1].rank, 1);
    assert_int_equal(closed[0].traces[1].state, MW_TRACE_EXACT);
    assert_int_equal(f->c->tstats.refused[MW_TREFUSE_WINDOW_BYTES], 0);
    free(junk);
    free(r.data);
    stop(f);
}

/* One entry per rank and window: a second exact trace of a rank's window is refused (duplicate)
 * before it is decoded or charged to the window's byte cap, and later summary-only traces
 * replace the rank's summary-only entry (never the exact one) instead of adding entries, so a
 * window never holds more entries than the job has ranks. */
static void test_one_entry_per_rank(void **state)
{
    (void)state;
    fx_t *f = start(2);
    recs_t r = make_records(2, 1);
    Mpiwatch__Trace t0, late;
    exact_trace(&t0, FX_W0, &r);
    tm_msg_t m;
    sample(&m, f, 0, FX_W0, 2, &t0);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    const mw_window_t *ow = &f->c->merge.ring[FX_W0 & f->c->merge.mask];
    assert_int_equal(ow->n_traces, 1);
    assert_int_equal(f->c->merge.trace_open_bytes, r.len);
    for (int i = 0; i < 3; i++) {
        exact_trace(&late, FX_W0, &r);
        late.capture = 42;
        assert_int_equal(feed_late(f, 0, &late), MW_REJECT_TRACE);
    }
    assert_int_equal(f->c->tstats.refused[MW_TREFUSE_DUPLICATE], 3);
    assert_int_equal(f->c->merge.trace_open_bytes, r.len); /* charged once */
    assert_int_equal(ow->n_traces, 1);
    for (int i = 0; i < 10000; i++) {
        mpiwatch__trace__init(&late);
        late.window = FX_W0;
        late.state = MW_TRACE_SUMMARY_ONLY;
        late.reason = MW_TRACE_WHY_RING_FULL;
        late.left_out = 3;
        (void)feed_late(f, 0, &late);
    }
    assert_true(ow->n_traces <= 2);
    /* Rank 1 sends its summary-only sample: the window closes with one entry per rank, rank 0's
     * exact one as its sample brought it. */
    Mpiwatch__Trace so;
    mpiwatch__trace__init(&so);
    so.window = FX_W0;
    so.state = MW_TRACE_SUMMARY_ONLY;
    so.reason = MW_TRACE_WHY_BUDGET;
    so.left_out = 3;
    sample(&m, f, 1, FX_W0, 2, &so);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    assert_int_equal(n_closed, 1);
    const tw_t *w = &closed[0];
    assert_int_equal(w->n_traces, 2);
    assert_int_equal(w->traced_ranks, 1);
    assert_int_equal(w->traces[0].rank, 0);
    assert_int_equal(w->traces[0].state, MW_TRACE_EXACT);
    assert_int_equal(w->traces[0].capture, 0);
    assert_int_equal(w->traces[0].len, r.len);
    assert_memory_equal(w->bytes[0], r.data, r.len);
    assert_int_equal(w->traces[1].rank, 1);
    assert_int_equal(w->left_out, 3);
    free(r.data);
    stop(f);
}

/* What a late summary-only trace claims it left out is the rank's word: capped, so that the
 * job's sums cannot wrap however many such traces come. */
static void test_left_out_capped(void **state)
{
    (void)state;
    fx_t *f = start(2);
    Mpiwatch__Trace so, late;
    mpiwatch__trace__init(&so);
    so.window = FX_W0;
    so.state = MW_TRACE_SUMMARY_ONLY;
    so.reason = MW_TRACE_WHY_BUDGET;
    so.left_out = 2;
    tm_msg_t m;
    sample(&m, f, 0, FX_W0, 2, &so);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    uint64_t before = f->c->tstats.left_out;
    for (int i = 0; i < 100; i++) {
        mpiwatch__trace__init(&late);
        late.window = FX_W0;
        late.state = MW_TRACE_SUMMARY_ONLY;
        late.reason = MW_TRACE_WHY_RING_FULL;
        late.left_out = UINT64_MAX - (uint64_t)i;
        (void)feed_late(f, 0, &late);
    }
    uint64_t after = f->c->tstats.left_out;
    assert_true(after >= before);
    assert_true(after - before <= 100 * MW_TRACE_LEFT_OUT_MAX);
    stop(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_comms),
        cmocka_unit_test(test_late_trace),
        cmocka_unit_test(test_window_cap),
        cmocka_unit_test(test_count0_records),
        cmocka_unit_test(test_one_entry_per_rank),
        cmocka_unit_test(test_left_out_capped),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    mw__pb_encoder_free(&enc);
    return rc;
}
