/* test_trace_send.c: the sender thread's side of tracing (pmpi-shim/trace_send.c), driven
 * directly without MPI.
 *
 * As in tests/capture/test_capture.c the timer is clock_gettime with a zero offset, so ticks
 * are global ns and records can be put in exact windows (1 ms long, 20 s in the past, so that
 * a call in progress, whose start the sender reads back against the real clock, is in the
 * past as it would be). Calls are counted with mw__record() and their records appended as
 * the wrappers write them, completions to the ring alone (they are not calls), then the
 * window is collected and its trace read back from the sample's Trace and decoded:
 *   - channel indices: sends numbered per (communicator, destination, tag) across windows;
 *     receives numbered in MPI's matching order, not completion order: an earlier-posted
 *     MPI_ANY_SOURCE / MPI_ANY_TAG receive that is still open holds back the index of a
 *     later one that could have been its message, a receive still held back when its window
 *     is sent is numbered from the next window's completions already in the ring when they
 *     settle it, else travels without an index but its number is still used, a completion of an
 *     unknown request spoils its channel, PROC_NULL and cancelled completions take none;
 *   - a window's calls equal its sample's timed calls (EXACT), completions and open calls
 *     not counted; a call in progress is an open record; two threads' records in time order;
 *   - plans: the four forms and the values refused; a window outside the plan is summary
 *     only, reason budget, with its calls counted as left out;
 *   - a capture reaching back returns the flight recorder's windows, older ones counted;
 *   - a full ring makes the window that lost records summary only (ring full), not the one
 *     before it, and every later window says that channel indices are unreliable.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shim.h"

#define W 1000000ull /* 1 ms windows */
#define ANY MW_TRACE_ANY
static acc_t acc;
static int64_t win; /* the next window to fill */

static int setup(void **state)
{
    (void)state;
    setenv("MPIWATCH_TRACE_RING", "1024", 1);
    setenv("MPIWATCH_TRACE_HISTORY", "8", 1);
    memset(&mw__g, 0, sizeof mw__g);
    mw__config_read(&mw__g.cfg);
    mw__g.cfg.subslots = 10;
    mw__g.cfg.max_threads = 4;
    mw__g.size = 8;
    mw__timer_init(2);
    mw__g.offset_ns = 0;
    mw__g.need_fence = 1;
    assert_int_equal(mw__trace.on, 1);
    assert_int_equal(mw__alloc(), 0);
    assert_int_equal(mw__acc_init(&acc), 0);
    mw__grid_init(W, 10);
    mw__set_state(1, 0);
    assert_int_equal(mw__trace_send_init(), 0);
    assert_int_equal(mw__trace_enabled(), 1);
    win = (int64_t)(mw__global_ns(mw__now()) / W) - 20000;
    atomic_store(&mw__g.closed_upto, win - 1);
    return 0;
}

static mw_thread_t *self(void)
{
    mw_thread_t *t = mw__self(0);
    assert_non_null(t);
    return t;
}

/* A call of window `win` at offset `at` us, 1 us long: counted in the summary as a wrapper
 * would (the ring detached, so that mw__record appends nothing), then its trace record as
 * the wrappers write it. */
static void call(unsigned fn, unsigned kind, int32_t peer, int32_t tag, uint32_t req,
                 unsigned flags, unsigned at)
{
    uint64_t t0 = (uint64_t)win * W + at * 1000ull;
    mw_thread_t *t = self();
    struct mw_tring *ring = t->tring;
    t->tring = NULL;
    mw__record(t, fn, t0, t0 + 1000, 8, peer >= 0 ? peer : -1);
    t->tring = ring;
    mw_trec_t x = {.t0 = t0,
                   .t1 = t0 + 1000,
                   .bytes = 8,
                   .peer = peer,
                   .tag = tag,
                   .req = req,
                   .fn = (uint16_t)fn,
                   .kind = (uint8_t)kind,
                   .flags = (uint8_t)flags};
    mw__trace_put(ring, &x);
}

/* A completion at the end of the completing call at `at` (not a call: ring only). */
static void done(unsigned fn, unsigned kind, int32_t src, int32_t tag, uint32_t req, unsigned flags,
                 unsigned at)
{
    uint64_t t = (uint64_t)win * W + at * 1000ull + 1000;
    mw_trec_t x = {.t0 = t,
                   .t1 = t,
                   .bytes = 8,
                   .peer = src,
                   .tag = tag,
                   .req = req,
                   .fn = (uint16_t)fn,
                   .kind = (uint8_t)kind,
                   .flags = (uint8_t)flags};
    mw__trace_put(self()->tring, &x);
}

/* Collects the window; returns its sample's Trace and decoded records (free them). */
static Mpiwatch__Trace collect(mw_trace_rec_t **recs, size_t *n)
{
    mw__collect(&acc, win);
    uint64_t timed = 0;
    for (unsigned f = 1; f < MW_FN_COUNT; f++)
        if (mw_fn_timed(f))
            timed += acc.fn[f].count;
    mw__trace_collect(win, timed);
    Mpiwatch__Trace tr;
    assert_int_equal(mw__trace_sample(win, timed, &tr), 1);
    assert_int_equal(tr.window, (uint64_t)win);
    *recs = NULL;
    *n = 0;
    if (tr.count) {
        const char *why = NULL;
        if (mw_trace_decode(tr.records.data, tr.records.len, tr.encoding, tr.raw_bytes, tr.count,
                            recs, n, &why) != 0)
            fail_msg("window %lld does not decode: %s", (long long)win, why);
    }
    if (tr.state == MW_TRACE_EXACT) {
        uint64_t calls = 0;
        for (size_t i = 0; i < *n; i++)
            calls += (uint64_t)mw_trace_is_call(&(*recs)[i]);
        assert_int_equal(calls, timed);
    } else {
        assert_int_equal(tr.left_out, timed);
    }
    mw__acc_clear(&acc);
    win++;
    return tr;
}

/* The record of kind `kind` with request `req` (or, req 0, the i-th of that kind). */
static const mw_trace_rec_t *find(const mw_trace_rec_t *r, size_t n, unsigned kind, uint32_t req,
                                  unsigned i)
{
    for (size_t j = 0; j < n; j++)
        if (r[j].kind == kind && (req ? r[j].req == req : i-- == 0))
            return &r[j];
    fail_msg("no record of kind %u req %u", kind, req);
    return NULL;
}

static void seq_is(const mw_trace_rec_t *r, uint64_t seq)
{
    if (r->flags & MW_TF_NOSEQ)
        fail_msg("kind %u req %u peer %d tag %d: no index, expected %llu", r->kind, r->req, r->peer,
                 r->tag, (unsigned long long)seq);
    if (r->seq != seq)
        fail_msg("kind %u req %u peer %d tag %d: index %llu, expected %llu", r->kind, r->req,
                 r->peer, r->tag, (unsigned long long)r->seq, (unsigned long long)seq);
}

static void test_channel_indices(void **state)
{
    (void)state;
    mw_trace_rec_t *r;
    size_t n;
    /* Window 1: sends on two channels; receives whose completions come out of order. */
    call(MW_ID_Isend, MW_TK_ISEND, 3, 7, 1, 0, 10);
    call(MW_ID_Isend, MW_TK_ISEND, 3, 7, 2, 0, 20);
    call(MW_ID_Send, MW_TK_SEND, 3, 8, 0, 0, 30);
    call(MW_ID_Send, MW_TK_SEND, 3, 7, 0, 0, 40);
    call(MW_ID_Send, MW_TK_SEND, -1, 7, 0, MW_TF_PROC_NULL, 45);
    /* r10 (ANY source, tag 5) is posted before r11 (source 2, tag 5); r11 completes first
     * with a message from 2, r10 later with one from 1: each is index 0 of its channel. */
    call(MW_ID_Irecv, MW_TK_IRECV, ANY, 5, 10, 0, 50);
    call(MW_ID_Irecv, MW_TK_IRECV, 2, 5, 11, 0, 60);
    /* r12 (ANY, ANY) then r13 (2, 6); r13 completes first, then r12 also from (2, 6): r12
     * was posted first, so it got the first message of the channel. */
    call(MW_ID_Irecv, MW_TK_IRECV, ANY, ANY, 12, 0, 70);
    call(MW_ID_Irecv, MW_TK_IRECV, 2, 6, 13, 0, 80);
    call(MW_ID_Wait, MW_TK_CALL, -1, 0, 0, 0, 90);
    done(MW_ID_Wait, MW_TK_RECV_DONE, 2, 5, 11, 0, 90);
    call(MW_ID_Wait, MW_TK_CALL, -1, 0, 0, 0, 100);
    done(MW_ID_Wait, MW_TK_RECV_DONE, 2, 6, 13, 0, 100);
    call(MW_ID_Waitall, MW_TK_CALL, -1, 0, 0, 0, 110);
    done(MW_ID_Waitall, MW_TK_RECV_DONE, 1, 5, 10, 0, 110);
    done(MW_ID_Waitall, MW_TK_RECV_DONE, 2, 6, 12, 0, 110);
    done(MW_ID_Waitall, MW_TK_SEND_DONE, 3, 7, 1, 0, 110);
    done(MW_ID_Waitall, MW_TK_SEND_DONE, 3, 7, 2, 0, 110);
    /* A blocking receive on a channel no open receive could take: numbered at once. */
    call(MW_ID_Recv, MW_TK_RECV, 4, 1, 0, 0, 120);
    /* A cancelled receive and one from MPI_PROC_NULL take no index. */
    call(MW_ID_Irecv, MW_TK_IRECV, 4, 1, 14, 0, 130);
    call(MW_ID_Wait, MW_TK_CALL, -1, 0, 0, 0, 140);
    done(MW_ID_Wait, MW_TK_RECV_DONE, -1, 0, 14, MW_TF_CANCELLED, 140);
    call(MW_ID_Recv, MW_TK_RECV, -1, 0, 0, MW_TF_PROC_NULL, 150);
    call(MW_ID_Recv, MW_TK_RECV, 4, 1, 0, 0, 160);
    /* r20 (ANY, 9) stays open over the window's end: the blocking receive from (4, 9) after
     * it cannot be numbered before the window is sent. */
    call(MW_ID_Irecv, MW_TK_IRECV, ANY, 9, 20, 0, 170);
    call(MW_ID_Recv, MW_TK_RECV, 4, 9, 0, 0, 180);
    Mpiwatch__Trace tr = collect(&r, &n);
    assert_int_equal(tr.state, MW_TRACE_EXACT);
    assert_int_equal(tr.flags, 0);
    seq_is(find(r, n, MW_TK_ISEND, 1, 0), 0);
    seq_is(find(r, n, MW_TK_ISEND, 2, 0), 1);
    seq_is(find(r, n, MW_TK_SEND, 0, 0), 0); /* (3, 8) */
    seq_is(find(r, n, MW_TK_SEND, 0, 1), 2); /* (3, 7) after the two Isends */
    assert_true(find(r, n, MW_TK_SEND, 0, 2)->flags & MW_TF_PROC_NULL);
    seq_is(find(r, n, MW_TK_RECV_DONE, 11, 0), 0);
    seq_is(find(r, n, MW_TK_RECV_DONE, 10, 0), 0);
    seq_is(find(r, n, MW_TK_RECV_DONE, 12, 0), 0);
    seq_is(find(r, n, MW_TK_RECV_DONE, 13, 0), 1);
    seq_is(find(r, n, MW_TK_RECV, 0, 0), 0);
    seq_is(find(r, n, MW_TK_RECV, 0, 2), 1); /* the cancelled one took nothing */
    assert_true(find(r, n, MW_TK_RECV, 0, 1)->flags & MW_TF_PROC_NULL);
    const mw_trace_rec_t *held = find(r, n, MW_TK_RECV, 0, 3);
    assert_int_equal(held->peer, 4);
    assert_true(held->flags & MW_TF_NOSEQ); /* held back by r20 at the window's end */
    free(r);

    /* Window 2: r20 gets (4, 9): index 0, so the held-back receive had 1, and the next one
     * from (4, 9) is 2. A completion of a request never posted spoils its channel. */
    call(MW_ID_Wait, MW_TK_CALL, -1, 0, 0, 0, 10);
    done(MW_ID_Wait, MW_TK_RECV_DONE, 4, 9, 20, 0, 10);
    call(MW_ID_Recv, MW_TK_RECV, 4, 9, 0, 0, 20);
    call(MW_ID_Isend, MW_TK_ISEND, 3, 7, 3, 0, 30);
    call(MW_ID_Wait, MW_TK_CALL, -1, 0, 0, 0, 40);
    done(MW_ID_Wait, MW_TK_RECV_DONE, 5, 2, 99, 0, 40);
    call(MW_ID_Recv, MW_TK_RECV, 5, 2, 0, 0, 50);
    call(MW_ID_Recv, MW_TK_RECV, 5, 3, 0, 0, 60);
    tr = collect(&r, &n);
    assert_int_equal(tr.state, MW_TRACE_EXACT);
    seq_is(find(r, n, MW_TK_RECV_DONE, 20, 0), 0);
    seq_is(find(r, n, MW_TK_RECV, 0, 0), 2);
    seq_is(find(r, n, MW_TK_ISEND, 3, 0), 3); /* the channel goes on across windows */
    assert_true(find(r, n, MW_TK_RECV_DONE, 99, 0)->flags & MW_TF_NOSEQ);
    assert_true(find(r, n, MW_TK_RECV, 0, 1)->flags & MW_TF_NOSEQ); /* (5, 2) spoiled */
    seq_is(find(r, n, MW_TK_RECV, 0, 2), 0);                        /* (5, 3) is fine */
    free(r);
}

static void test_look_ahead(void **state)
{
    (void)state;
    mw_trace_rec_t *r;
    size_t n;
    /* r30 (ANY, 11) and r31 (ANY, 12) are open at the window's end, each holding back a
     * blocking receive from 4 posted after it. Their completions are already in the ring (the
     * next window's first calls) when the window is drained: r30 got a message from (4, 11),
     * so the held-back receive on (4, 11) is the channel's second; r31 got one from (5, 12),
     * so the one on (4, 12) is its channel's first. */
    call(MW_ID_Irecv, MW_TK_IRECV, ANY, 11, 30, 0, 10);
    call(MW_ID_Recv, MW_TK_RECV, 4, 11, 0, 0, 20);
    call(MW_ID_Irecv, MW_TK_IRECV, ANY, 12, 31, 0, 30);
    call(MW_ID_Recv, MW_TK_RECV, 4, 12, 0, 0, 40);
    win++;
    call(MW_ID_Waitall, MW_TK_CALL, -1, 0, 0, 0, 10);
    done(MW_ID_Waitall, MW_TK_RECV_DONE, 4, 11, 30, 0, 10);
    done(MW_ID_Waitall, MW_TK_RECV_DONE, 5, 12, 31, 0, 10);
    call(MW_ID_Recv, MW_TK_RECV, 4, 11, 0, 0, 20);
    call(MW_ID_Recv, MW_TK_RECV, 4, 12, 0, 0, 30);
    win--;
    Mpiwatch__Trace tr = collect(&r, &n);
    assert_int_equal(tr.state, MW_TRACE_EXACT);
    seq_is(find(r, n, MW_TK_RECV, 0, 0), 1); /* (4, 11) */
    seq_is(find(r, n, MW_TK_RECV, 0, 1), 0); /* (4, 12) */
    free(r);
    /* The next window: the same indices from its own records, and no index used twice. */
    tr = collect(&r, &n);
    assert_int_equal(tr.state, MW_TRACE_EXACT);
    seq_is(find(r, n, MW_TK_RECV_DONE, 30, 0), 0);
    seq_is(find(r, n, MW_TK_RECV_DONE, 31, 0), 0);
    seq_is(find(r, n, MW_TK_RECV, 0, 0), 2); /* (4, 11) */
    seq_is(find(r, n, MW_TK_RECV, 0, 1), 1); /* (4, 12) */
    free(r);
}

static void *second_thread(void *arg)
{
    (void)arg;
    call(MW_ID_Isend, MW_TK_ISEND, 3, 70, 50, 0, 20);
    return NULL;
}

static void test_two_threads(void **state)
{
    (void)state;
    mw_trace_rec_t *r;
    size_t n;
    /* This thread posts at 10 and 30 us, another at 20 us, on one channel: the records come
     * in time order, numbered in it, and flagged as posts MPI does not order. */
    call(MW_ID_Isend, MW_TK_ISEND, 3, 70, 40, 0, 10);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, second_thread, NULL), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    call(MW_ID_Isend, MW_TK_ISEND, 3, 70, 41, 0, 30);
    Mpiwatch__Trace tr = collect(&r, &n);
    assert_int_equal(tr.state, MW_TRACE_EXACT);
    assert_int_equal(tr.threads, 2);
    assert_int_equal(n, 3);
    assert_int_equal(r[0].req, 40);
    assert_int_equal(r[1].req, 50);
    assert_int_equal(r[2].req, 41);
    assert_int_equal(r[0].thread, r[2].thread);
    assert_int_not_equal(r[0].thread, r[1].thread);
    for (unsigned i = 0; i < 3; i++)
        seq_is(&r[i], i);
    assert_false(r[0].flags & MW_TF_UNORDERED);
    assert_true(r[1].flags & MW_TF_UNORDERED);
    assert_true(r[2].flags & MW_TF_UNORDERED);
    free(r);
}

static void test_open_call_and_empty_window(void **state)
{
    (void)state;
    mw_trace_rec_t *r;
    size_t n;
    /* A window without calls is exact and empty. */
    Mpiwatch__Trace tr = collect(&r, &n);
    assert_int_equal(tr.state, MW_TRACE_EXACT);
    assert_int_equal(n, 0);
    /* A call begun at 600 us and still running at the window's end: an open record. */
    call(MW_ID_Barrier, MW_TK_COLL, -1, 0, 0, 0, 100);
    mw_thread_t *t = self();
    uint64_t t0 = (uint64_t)win * W + 600000;
    atomic_store(&t->inflight, t0 << MW_INFLIGHT_FN_BITS | MW_ID_Bcast);
    tr = collect(&r, &n);
    atomic_store(&t->inflight, 0);
    assert_int_equal(tr.state, MW_TRACE_EXACT);
    assert_int_equal(n, 2);
    const mw_trace_rec_t *o = &r[1];
    assert_true(o->flags & MW_TF_OPEN);
    assert_int_equal(o->fn, MW_ID_Bcast);
    assert_int_equal(o->start_ns, 600000);
    assert_int_equal(o->dur_ns, W - 600000);
    assert_false(mw_trace_is_call(o));
    free(r);
}

static void test_plans(void **state)
{
    (void)state;
    // clang-format off
    static const char *const bad[] = {
        "", "al", "all ", "none", "5+0", "5+", "+5", "5-3", "x+1", "every", "every:4:2",
        "every:4:2@", "every:0:0@1", "every:2:3@1", "every:4:0@1", "every:4:2@x", "every:4:2@1x",
        "every:-1:1@1", "every:4:2@1234567890123456", "1234567890123456+1",
        "every:4:2@1/", "every:4:2@1/0", "every:4:2@1/5", "every:4:2@1/2x", "every:4:2@1/-2",
        "every:4:2@1/2/2",
    };
    // clang-format on
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (mw__trace_plan_request(bad[i]) != -1)
            fail_msg("plan '%s' accepted", bad[i]);
    mw_trace_rec_t *r;
    size_t n;
    char v[80];
    /* every:3:1@K: K, K + 3, ... traced; the others summary only, reason budget. */
    int64_t k = win + 1;
    snprintf(v, sizeof v, "every:3:1@%lld", (long long)k);
    assert_int_equal(mw__trace_plan_request(v), 0);
    for (int i = 0; i < 7; i++) {
        int64_t w = win;
        call(MW_ID_Allreduce, MW_TK_COLL, -1, 0, 0, 0, 10);
        call(MW_ID_Allreduce, MW_TK_COLL, -1, 0, 0, 0, 20);
        Mpiwatch__Trace tr = collect(&r, &n);
        int want = w >= k && (w - k) % 3 == 0;
        assert_int_equal(tr.state, want ? MW_TRACE_EXACT : MW_TRACE_SUMMARY_ONLY);
        if (!want) {
            assert_int_equal(tr.reason, MW_TRACE_WHY_BUDGET);
            assert_int_equal(tr.left_out, 2);
            assert_int_equal(tr.count, 0);
        }
        free(r);
    }
    /* K+B, off, all. */
    snprintf(v, sizeof v, "%lld+2", (long long)(win + 1));
    assert_int_equal(mw__trace_plan_request(v), 0);
    for (int i = 0; i < 4; i++) {
        call(MW_ID_Allreduce, MW_TK_COLL, -1, 0, 0, 0, 10);
        Mpiwatch__Trace tr = collect(&r, &n);
        assert_int_equal(tr.state, i == 1 || i == 2 ? MW_TRACE_EXACT : MW_TRACE_SUMMARY_ONLY);
        free(r);
    }
    assert_int_equal(mw__trace_plan_request("off"), 0);
    Mpiwatch__Trace tr = collect(&r, &n);
    assert_int_equal(tr.state, MW_TRACE_SUMMARY_ONLY);
    free(r);
    assert_int_equal(mw__trace_plan_request("all"), 0);
    tr = collect(&r, &n);
    assert_int_equal(tr.state, MW_TRACE_EXACT);
    free(r);
}

static void test_reach_back(void **state)
{
    (void)state;
    mw_trace_rec_t *r;
    size_t n;
    assert_int_equal(mw__trace_plan_request("off"), 0);
    int64_t first = win;
    for (int i = 0; i < 10; i++) {
        for (int j = 0; j <= i; j++)
            call(MW_ID_Allreduce, MW_TK_COLL, -1, 0, 0, 0, 10 + (unsigned)j);
        Mpiwatch__Trace tr = collect(&r, &n);
        assert_int_equal(tr.state, MW_TRACE_SUMMARY_ONLY);
        free(r);
    }
    /* Of 1..11 windows after `first`: window first+1 is older than the 8 kept, first+2 ..
     * first+9 come back from the flight recorder, first+10 and +11 are ahead: traced with
     * their samples. */
    uint64_t id = (uint64_t)(first + 1) << 16 | 11;
    assert_int_equal(mw__trace_capture((uint64_t)first + 1, 11, id), 1);
    Mpiwatch__Trace tr;
    int64_t expect = first + 2;
    while (mw__trace_reach_next(&tr)) {
        assert_int_equal(tr.window, (uint64_t)expect);
        assert_int_equal(tr.capture, id);
        assert_int_equal(tr.state, MW_TRACE_EXACT);
        assert_int_equal(tr.count, expect - first + 1);
        expect++;
    }
    assert_int_equal(expect, first + 10);
    for (int i = 0; i < 3; i++) {
        call(MW_ID_Allreduce, MW_TK_COLL, -1, 0, 0, 0, 10);
        int64_t w = win;
        tr = collect(&r, &n);
        assert_int_equal(tr.state, w < first + 12 ? MW_TRACE_EXACT : MW_TRACE_SUMMARY_ONLY);
        assert_int_equal(tr.capture, w < first + 12 ? id : 0);
        free(r);
    }
    assert_int_equal(mw__trace_plan_request("all"), 0);
}

/* every:P:B@K/G: the burst windows are traced, their samples say deferred (calls left out of
 * the sample), and this rank (rank mod G = g) sends them from the flight recorder after
 * collecting window K + B + g, not before; the flight recorder grows to B + G windows; a new
 * plan sends a waiting burst at once. */
static void defer_burst(int64_t p, int64_t b, int64_t g, int rank)
{
    mw_trace_rec_t *r;
    size_t n;
    int old_rank = mw__g.rank;
    mw__g.rank = rank;
    int64_t k = win + 2, due = k + b + rank % g;
    char v[80];
    snprintf(v, sizeof v, "every:%lld:%lld@%lld/%lld", (long long)p, (long long)b, (long long)k,
             (long long)g);
    assert_int_equal(mw__trace_plan_request(v), 0);
    Mpiwatch__Trace tr;
    for (int64_t w = win; w <= due; w = win) {
        call(MW_ID_Allreduce, MW_TK_COLL, -1, 0, 0, 0, 10);
        call(MW_ID_Barrier, MW_TK_COLL, -1, 0, 0, 0, 20);
        tr = collect(&r, &n);
        free(r);
        int in = w >= k && (w - k) % p < b;
        assert_int_equal(tr.state, MW_TRACE_SUMMARY_ONLY);
        assert_int_equal(tr.reason, in ? MW_TRACE_WHY_DEFERRED : MW_TRACE_WHY_BUDGET);
        assert_int_equal(tr.left_out, 2);
        int got = mw__trace_reach_next(&tr);
        if (w < due) {
            assert_int_equal(got, 0);
            continue;
        }
        for (int64_t j = 0; j < b; j++) { /* the burst, in order, exact */
            if (j)
                got = mw__trace_reach_next(&tr);
            assert_int_equal(got, 1);
            assert_int_equal(tr.window, (uint64_t)(k + j));
            assert_int_equal(tr.state, MW_TRACE_EXACT);
            assert_int_equal(tr.count, 2);
            assert_int_equal(tr.capture, 0);
        }
        assert_int_equal(mw__trace_reach_next(&tr), 0);
    }
    /* The next burst starts; a new plan before its group's window sends it at once. */
    while (win < k + p) {
        call(MW_ID_Allreduce, MW_TK_COLL, -1, 0, 0, 0, 10);
        tr = collect(&r, &n);
        free(r);
        assert_int_equal(mw__trace_reach_next(&tr), 0);
    }
    call(MW_ID_Allreduce, MW_TK_COLL, -1, 0, 0, 0, 10);
    tr = collect(&r, &n);
    free(r);
    assert_int_equal(tr.reason, MW_TRACE_WHY_DEFERRED);
    assert_int_equal(mw__trace_plan_request("all"), 0);
    assert_int_equal(mw__trace_reach_next(&tr), 1);
    assert_int_equal(tr.window, (uint64_t)(k + p));
    assert_int_equal(tr.state, MW_TRACE_EXACT);
    assert_int_equal(mw__trace_reach_next(&tr), 0);
    mw__g.rank = old_rank;
}

static void test_deferred(void **state)
{
    (void)state;
    defer_burst(6, 2, 3, 5);    /* group 2: sent after K + 4 */
    defer_burst(4, 3, 4, 0);    /* group 0: right after the burst */
    defer_burst(60, 2, 50, 49); /* B + G = 52 windows: the flight recorder (8) grows */
}

static void test_ring_full(void **state)
{
    (void)state;
    mw_trace_rec_t *r;
    size_t n;
    for (unsigned i = 0; i < 1100; i++)
        call(MW_ID_Allreduce, MW_TK_COLL, -1, 0, 0, 0, i / 2);
    Mpiwatch__Trace tr = collect(&r, &n);
    assert_int_equal(tr.state, MW_TRACE_SUMMARY_ONLY);
    assert_int_equal(tr.reason, MW_TRACE_WHY_RING_FULL);
    assert_int_equal(tr.left_out, 1100);
    assert_true(tr.flags & MW_TRACE_SEQ_UNRELIABLE);
    free(r);
    call(MW_ID_Allreduce, MW_TK_COLL, -1, 0, 0, 0, 10);
    tr = collect(&r, &n);
    assert_int_equal(tr.state, MW_TRACE_EXACT);
    assert_true(tr.flags & MW_TRACE_SEQ_UNRELIABLE); /* from then on */
    free(r);
    /* The ring fills with the next window's records before this one is drained: this one is
     * whole (exact), the next one lost records (ring full), although its calls that did get
     * into the ring would not say so by themselves. */
    for (unsigned i = 0; i < 1000; i++)
        call(MW_ID_Allreduce, MW_TK_COLL, -1, 0, 0, 0, i / 2);
    win++;
    for (unsigned i = 0; i < 100; i++)
        call(MW_ID_Allreduce, MW_TK_COLL, -1, 0, 0, 0, i);
    win--;
    tr = collect(&r, &n);
    assert_int_equal(tr.state, MW_TRACE_EXACT);
    assert_int_equal(n, 1000);
    free(r);
    tr = collect(&r, &n);
    assert_int_equal(tr.state, MW_TRACE_SUMMARY_ONLY);
    assert_int_equal(tr.reason, MW_TRACE_WHY_RING_FULL);
    assert_int_equal(tr.left_out, 100);
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_channel_indices), cmocka_unit_test(test_look_ahead),
        cmocka_unit_test(test_two_threads),     cmocka_unit_test(test_open_call_and_empty_window),
        cmocka_unit_test(test_plans),           cmocka_unit_test(test_reach_back),
        cmocka_unit_test(test_ring_full),       cmocka_unit_test(test_deferred),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
