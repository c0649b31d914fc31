/* test_logical.c: logical steps, lateness and differential lateness (proto/mw_logical.c,
 * docs/logical.md), on hand-made traces whose answers are worked out in the comments.
 *
 * A small builder writes each rank's records the way the shim does (end order, channel
 * indices, completions after their Waitall) with absolute times; push_range() hands the
 * records that end in [t0, t1) to the stream as one window. Patterns: a ring where one rank
 * sleeps before its send, a periodic 1-D stencil with one slow rank in one iteration (pushed
 * window by window), a binary gather/scatter tree with the leap merge on and off, collectives
 * mixed with point-to-point (blocking and non-blocking), receives from MPI_ANY_SOURCE, an
 * exchange that forms a cycle, the same records as one window and as several, the caps that
 * force finalization, and garbage.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mw_logical.h"
#include "mw_proto.h"
#include "mw_trace.h"

#define NR 16
#define MAXREC 512
#define W MW_COMM_ID_WORLD

typedef struct {
    mw_trace_rec_t r[NR][MAXREC];
    size_t n[NR];
    uint64_t sseq[NR][NR][4], rseq[NR][NR][4], cseq[NR][4];
} bld_t;

static bld_t *bld_new(void)
{
    bld_t *b = calloc(1, sizeof *b);
    assert_non_null(b);
    return b;
}

static mw_trace_rec_t *add(bld_t *b, int rank, uint8_t kind, uint16_t fn, int64_t t, uint64_t dur)
{
    assert_true(b->n[rank] < MAXREC);
    mw_trace_rec_t *r = &b->r[rank][b->n[rank]++];
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->fn = fn;
    r->start_ns = t;
    r->dur_ns = dur;
    r->peer = -1;
    return r;
}

static void b_send(bld_t *b, int rank, int64_t t, uint64_t dur, int dst, int tag)
{
    mw_trace_rec_t *r = add(b, rank, MW_TK_SEND, MW_ID_Send, t, dur);
    r->comm = W;
    r->peer = dst;
    r->tag = tag;
    r->seq = b->sseq[rank][dst][tag]++;
}

static void b_isend(bld_t *b, int rank, int64_t t, uint64_t dur, int dst, int tag, uint32_t req)
{
    mw_trace_rec_t *r = add(b, rank, MW_TK_ISEND, MW_ID_Isend, t, dur);
    r->comm = W;
    r->peer = dst;
    r->tag = tag;
    r->req = req;
    r->seq = b->sseq[rank][dst][tag]++;
}

static void b_recv(bld_t *b, int rank, int64_t t, uint64_t dur, int src, int tag)
{
    mw_trace_rec_t *r = add(b, rank, MW_TK_RECV, MW_ID_Recv, t, dur);
    r->comm = W;
    r->peer = src;
    r->tag = tag;
    r->seq = b->rseq[src][rank][tag]++;
}

static void b_irecv(bld_t *b, int rank, int64_t t, int src, int tag, uint32_t req)
{
    mw_trace_rec_t *r = add(b, rank, MW_TK_IRECV, MW_ID_Irecv, t, 50);
    r->comm = W;
    r->peer = src;
    r->tag = tag;
    r->req = req;
}

static void b_waitall(bld_t *b, int rank, int64_t t, uint64_t dur)
{
    add(b, rank, MW_TK_CALL, MW_ID_Waitall, t, dur);
}

/* A receive's completion at t (the Waitall's end). */
static void b_recv_done(bld_t *b, int rank, int64_t t, int src, int tag, uint32_t req)
{
    mw_trace_rec_t *r = add(b, rank, MW_TK_RECV_DONE, MW_ID_Waitall, t, 0);
    r->comm = W;
    r->peer = src;
    r->tag = tag;
    r->req = req;
    r->seq = b->rseq[src][rank][tag]++;
}

static void b_send_done(bld_t *b, int rank, int64_t t, int dst, int tag, uint32_t req)
{
    mw_trace_rec_t *r = add(b, rank, MW_TK_SEND_DONE, MW_ID_Waitall, t, 0);
    r->comm = W;
    r->peer = dst;
    r->tag = tag;
    r->req = req;
}

static void b_coll(bld_t *b, int rank, int64_t t, uint64_t dur, uint16_t fn, int comm)
{
    mw_trace_rec_t *r = add(b, rank, MW_TK_COLL, fn, t, dur);
    r->comm = W + 10 * (uint64_t)comm;
    r->seq = b->cseq[rank][comm]++;
}

static void b_icoll(bld_t *b, int rank, int64_t t, uint64_t dur, uint16_t fn, int comm,
                    uint32_t req)
{
    mw_trace_rec_t *r = add(b, rank, MW_TK_ICOLL, fn, t, dur);
    r->comm = W + 10 * (uint64_t)comm;
    r->seq = b->cseq[rank][comm]++;
    r->req = req;
}

static void b_coll_done(bld_t *b, int rank, int64_t t, uint32_t req)
{
    add(b, rank, MW_TK_CALL, MW_ID_Wait, t - 10, 10);
    mw_trace_rec_t *r = add(b, rank, MW_TK_COLL_DONE, MW_ID_Wait, t, 0);
    r->req = req;
}

/* ---- what a stream gave, accumulated -------------------------------------------------------- */

/* The noise floor of the streams under test: 1 ns (none) unless a test says otherwise, so that
 * the hand-made traces' lateness of a few ns shows in the classes. */
static int64_t floor_ns = 1;

typedef struct {
    mw_logical_event_t *ev;
    size_t n;
    mw_logical_partition_t *part;
    size_t np;
    mw_logical_summary_t *win;
    size_t nw;
    mw_logical_summary_t *steps;
    size_t ns;
} acc_t;

static void acc_add(acc_t *a, const mw_logical_batch_t *b)
{
    /* batch invariants */
    size_t sum = 0;
    for (size_t i = 0; i < b->npartitions; i++) {
        assert_int_equal(b->partitions[i].event_first, b->nevents ? b->events[sum].id : 0);
        sum += b->partitions[i].nevents;
    }
    assert_int_equal(sum, b->nevents);
    for (size_t i = 0; i < b->nevents; i++) {
        const mw_logical_event_t *e = &b->events[i];
        assert_true(e->lateness_ns >= 0);
        assert_true(e->diff_ns >= 0);
        assert_true(e->diff_ns <= e->lateness_ns);
        assert_true(e->comp_before_ns >= 0);
        assert_true(e->cls < MW_LATE_COUNT);
        assert_true((e->lateness_ns < floor_ns) == (e->cls == MW_LATE_NONE));
        assert_true((e->diff_ns >= floor_ns && e->lateness_ns >= floor_ns) ==
                    (e->cls == MW_LATE_COMPUTE || e->cls == MW_LATE_CALL));
        if (i)
            assert_int_equal(e->id, b->events[i - 1].id + 1);
    }
    a->ev = realloc(a->ev, (a->n + b->nevents + 1) * sizeof *a->ev);
    if (b->nevents)
        memcpy(a->ev + a->n, b->events, b->nevents * sizeof *a->ev);
    a->n += b->nevents;
    a->part = realloc(a->part, (a->np + b->npartitions + 1) * sizeof *a->part);
    if (b->npartitions)
        memcpy(a->part + a->np, b->partitions, b->npartitions * sizeof *a->part);
    a->np += b->npartitions;
    a->win = realloc(a->win, (a->nw + b->nwindows + 1) * sizeof *a->win);
    if (b->nwindows)
        memcpy(a->win + a->nw, b->windows, b->nwindows * sizeof *a->win);
    a->nw += b->nwindows;
    a->steps = realloc(a->steps, (a->ns + b->nsteps + 1) * sizeof *a->steps);
    if (b->nsteps)
        memcpy(a->steps + a->ns, b->steps, b->nsteps * sizeof *a->steps);
    a->ns += b->nsteps;
}

static void acc_free(acc_t *a)
{
    free(a->ev);
    free(a->part);
    free(a->win);
    free(a->steps);
    memset(a, 0, sizeof *a);
}

/* Pushes the records of ranks 0..nranks-1 that end in [t0, t1) as window `w` (starting at t0). */
static void push_range(mw_logical_stream_t *s, const bld_t *b, int nranks, uint64_t w, int64_t t0,
                       int64_t t1, acc_t *a)
{
    static mw_trace_rec_t buf[NR][MAXREC];
    mw_logical_rank_t rk[NR];
    for (int r = 0; r < nranks; r++) {
        size_t k = 0;
        for (size_t i = 0; i < b->n[r]; i++) {
            const mw_trace_rec_t *x = &b->r[r][i];
            int64_t end = x->start_ns + (int64_t)x->dur_ns;
            if (end < t0 || end >= t1)
                continue;
            buf[r][k] = *x;
            buf[r][k].start_ns -= t0;
            k++;
        }
        rk[r].rank = (uint32_t)r;
        rk[r].recs = buf[r];
        rk[r].n = k;
    }
    mw_logical_batch_t out;
    assert_int_equal(mw_logical_stream_push(s, w, t0, rk, (size_t)nranks, &out), 0);
    acc_add(a, &out);
    mw_logical_batch_free(&out);
}

static void gap(mw_logical_stream_t *s, acc_t *a)
{
    mw_logical_batch_t out;
    assert_int_equal(mw_logical_stream_gap(s, &out), 0);
    acc_add(a, &out);
    mw_logical_batch_free(&out);
}

/* The j-th event of `rank` (in the rank's order). */
static const mw_logical_event_t *ev(const acc_t *a, uint32_t rank, int j)
{
    for (size_t i = 0; i < a->n; i++)
        if (a->ev[i].rank == rank && j-- == 0) {
            /* events of a rank come in id order, which is the rank's order */
            return &a->ev[i];
        }
    fail_msg("no event %d on rank %u", j, rank);
    return NULL;
}

static int count_rank(const acc_t *a, uint32_t rank)
{
    int n = 0;
    for (size_t i = 0; i < a->n; i++)
        n += a->ev[i].rank == rank;
    return n;
}

static const mw_logical_event_t *by_id(const acc_t *a, int64_t id)
{
    for (size_t i = 0; i < a->n; i++)
        if ((int64_t)a->ev[i].id == id)
            return &a->ev[i];
    return NULL;
}

/* The rank order of every rank's events is its order in a: checks the links and steps. */
static void check_order(const acc_t *a)
{
    for (size_t i = 0; i < a->n; i++) {
        const mw_logical_event_t *e = &a->ev[i];
        if (e->rank_prev >= 0) {
            const mw_logical_event_t *p = by_id(a, e->rank_prev);
            assert_non_null(p);
            assert_int_equal(p->rank, e->rank);
            assert_true(p->step < e->step);
        }
        if (e->msg_peer >= 0) {
            const mw_logical_event_t *m = by_id(a, e->msg_peer);
            assert_non_null(m);
            assert_int_equal(m->msg_peer, (int64_t)e->id);
            assert_int_equal(m->partition, e->partition);
            if (e->kind == MW_LE_RECV)
                assert_true(m->step < e->step);
        }
    }
}

static mw_logical_stream_t *stream(uint32_t flags)
{
    mw_logical_opts_t o;
    memset(&o, 0, sizeof o);
    o.flags = flags;
    o.noise_floor_ns = floor_ns;
    mw_logical_stream_t *s = mw_logical_stream_new(&o);
    assert_non_null(s);
    return s;
}

/* ---- a ring where rank 1 sleeps before its send ----------------------------------------- */

/* Four ranks; each sends to its right neighbour (blocking, 100 ns) then receives from its left
 * one (a receive ends 100 ns after both it began and the message was sent). Rank 1 computes
 * 5000 ns longer before its send.
 *   rank 0: send 1000-1100, recv 1100-1200 (from 3: sent by 1100)
 *   rank 1: send 6000-6100, recv 6100-6200 (from 0)
 *   rank 2: send 1000-1100, recv 1100-6200 (from 1: sent at 6100)
 *   rank 3: send 1000-1100, recv 1100-1200
 * The four messages form a cycle of partitions (each rank's send precedes its receive): one
 * partition, sends at step 0, receives at step 1.
 * Step 0: earliest end 1100: rank 1 is 5000 late; it inherits nothing (its first event), so
 * differential 5000, and it began 5000 after the others: class compute.
 * Step 1: earliest end 1200: rank 1 5000 (inherited from its own send: rank, differential 0),
 * rank 2 5000 (inherited from rank 1's send: message, differential 0). */
static void build_ring(bld_t *b)
{
    for (int r = 0; r < 4; r++) {
        int64_t t = r == 1 ? 6000 : 1000;
        b_send(b, r, t, 100, (r + 1) % 4, 0);
        int64_t end = r == 1 ? 6200 : r == 2 ? 6200 : 1200;
        b_recv(b, r, t + 100, (uint64_t)(end - t - 100), (r + 3) % 4, 0);
    }
}

static void test_ring_delay(void **state)
{
    (void)state;
    bld_t *b = bld_new();
    build_ring(b);
    mw_logical_stream_t *s = stream(MW_LOGICAL_LEAP);
    acc_t a = {0};
    push_range(s, b, 4, 0, 0, 100000, &a);
    /* the newest window is never final on its own */
    assert_int_equal(a.n, 0);
    gap(s, &a);
    assert_int_equal(a.n, 8);
    assert_int_equal(a.np, 1);
    check_order(&a);
    for (uint32_t r = 0; r < 4; r++) {
        const mw_logical_event_t *snd = ev(&a, r, 0), *rcv = ev(&a, r, 1);
        assert_int_equal(snd->kind, MW_LE_SEND);
        assert_int_equal(snd->step, 0);
        assert_int_equal(rcv->kind, MW_LE_RECV);
        assert_int_equal(rcv->step, 1);
        assert_int_equal(rcv->rank_prev, (int64_t)snd->id);
        assert_int_equal(by_id(&a, rcv->msg_peer)->rank, (r + 3) % 4);
    }
    const int64_t late[4][2] = {{0, 0}, {5000, 5000}, {0, 5000}, {0, 0}};
    const int64_t diff[4][2] = {{0, 0}, {5000, 0}, {0, 0}, {0, 0}};
    const uint8_t cls[4][2] = {{MW_LATE_NONE, MW_LATE_NONE},
                               {MW_LATE_COMPUTE, MW_LATE_RANK},
                               {MW_LATE_NONE, MW_LATE_MESSAGE},
                               {MW_LATE_NONE, MW_LATE_NONE}};
    for (uint32_t r = 0; r < 4; r++)
        for (int j = 0; j < 2; j++) {
            assert_int_equal(ev(&a, r, j)->lateness_ns, late[r][j]);
            assert_int_equal(ev(&a, r, j)->diff_ns, diff[r][j]);
            assert_int_equal(ev(&a, r, j)->cls, cls[r][j]);
        }
    /* comp_before: rank 1's receive starts where its send ended */
    assert_int_equal(ev(&a, 1, 1)->comp_before_ns, 0);
    /* one window summary: the largest lateness and differential lateness are rank 1's at step
     * 0 (first in step order), time lost 5000 (rank 1) + 5000 (rank 2's receive) */
    assert_int_equal(a.nw, 1);
    assert_int_equal(a.win[0].key, 0);
    assert_int_equal(a.win[0].events, 8);
    assert_int_equal(a.win[0].lateness_max_ns, 5000);
    assert_int_equal(a.win[0].lateness_rank, 1);
    assert_int_equal(a.win[0].lateness_step, 0);
    assert_int_equal(a.win[0].diff_max_ns, 5000);
    assert_int_equal(a.win[0].diff_rank, 1);
    assert_int_equal(a.win[0].diff_fn, MW_ID_Send);
    assert_int_equal(a.win[0].lost_ns, 10000);
    assert_int_equal(a.ns, 2);
    assert_int_equal(a.steps[1].key, 1);
    assert_int_equal(a.steps[1].events, 4);
    assert_int_equal(a.steps[1].diff_max_ns, 0);
    mw_logical_stats_t st;
    mw_logical_stream_stats(s, &st);
    assert_int_equal(st.events, 8);
    assert_int_equal(st.merged_cycles, 3);
    assert_int_equal(st.unmatched, 0);
    assert_int_equal(st.pending_events, 0);
    assert_int_equal(st.pending_windows, 0);
    acc_free(&a);
    mw_logical_stream_free(s);
    free(b);
}

/* ---- a periodic 1-D stencil with one slow rank ------------------------------------------ */

/* Four ranks on a ring, three iterations k at T = 10000 k, each in its own window. Per
 * iteration every rank posts two receives, sends left (Isend T+0..100, tag 0) and right
 * (T+100..200, tag 1), waits for all from T+200: the Waitall ends 100 ns after its last
 * message was sent, at T+300 at the earliest; its completions: from the left (tag 1), then
 * from the right (tag 0). Rank 2 computes 5000 ns longer before iteration 1.
 * Steps of iteration k: send left 4k, send right 4k+1, receive from the left 4k+2 (after the
 * left neighbour's send right at 4k+1), receive from the right 4k+3.
 * Iteration 1 (times from T): rank 2 sends at 5000-5100 and 5100-5200 and its Waitall ends at
 * 5300; rank 1 waits for rank 2's send left (5100) until 5200, rank 3 for rank 2's send right
 * (5200) until 5300, rank 0 is on time (300).
 *   step 4: rank 2 5000 late, differential 5000, compute (began 5000 late);
 *   step 5: rank 2 5000, rank;
 *   step 6: earliest end 300: rank 1 4900 (its Waitall also waited for rank 2's message,
 *           lateness 5000: message, differential 0), rank 2 5000 (rank), rank 3 5000 (its
 *           message from rank 2 was 5000 late: message);
 *   step 7: rank 1 4900 (message: 5000 > its previous 4900), rank 2 5000 (rank), rank 3 5000
 *           (rank: its previous and the message were both 5000).
 * Iteration 2 is on time everywhere: nothing is late any more. */
static void build_stencil(bld_t *b, int iters, int slow_rank, int slow_iter, int64_t delay)
{
    for (int k = 0; k < iters; k++) {
        int64_t T = 10000 * (int64_t)k;
        int64_t post[4];
        for (int r = 0; r < 4; r++)
            post[r] = T + (k == slow_iter && r == slow_rank ? delay : 0);
        for (int r = 0; r < 4; r++) {
            int left = (r + 3) % 4, right = (r + 1) % 4;
            int64_t p = post[r];
            /* the messages it waits for: left's send right ends at post[left]+200, right's
             * send left at post[right]+100 */
            int64_t wend = p + 300;
            if (post[left] + 300 > wend)
                wend = post[left] + 300;
            if (post[right] + 200 > wend)
                wend = post[right] + 200;
            b_irecv(b, r, p - 100, left, 1, 1);
            b_irecv(b, r, p - 50, right, 0, 2);
            b_isend(b, r, p, 100, left, 0, 3);
            b_isend(b, r, p + 100, 100, right, 1, 4);
            b_waitall(b, r, p + 200, (uint64_t)(wend - p - 200));
            b_recv_done(b, r, wend, left, 1, 1);
            b_recv_done(b, r, wend, right, 0, 2);
            b_send_done(b, r, wend, left, 0, 3);
            b_send_done(b, r, wend, right, 1, 4);
        }
    }
}

static void test_stencil_slow(void **state)
{
    (void)state;
    bld_t *b = bld_new();
    build_stencil(b, 3, 2, 1, 5000);
    mw_logical_stream_t *s = stream(MW_LOGICAL_LEAP);
    acc_t a = {0};
    push_range(s, b, 4, 0, -1000, 9000, &a);
    assert_int_equal(a.n, 0);
    assert_int_equal(a.nw, 0);
    push_range(s, b, 4, 1, 9000, 19000, &a);
    /* window 0 is final once window 1 came: all its messages matched */
    assert_int_equal(a.n, 16);
    assert_int_equal(a.nw, 1);
    assert_int_equal(a.win[0].key, 0);
    assert_int_equal(a.win[0].lateness_max_ns, 0);
    push_range(s, b, 4, 2, 19000, 29000, &a);
    assert_int_equal(a.n, 32);
    gap(s, &a);
    assert_int_equal(a.n, 48);
    assert_int_equal(a.nw, 3);
    check_order(&a);
    for (uint32_t r = 0; r < 4; r++) {
        assert_int_equal(count_rank(&a, r), 12);
        for (int j = 0; j < 12; j++)
            assert_int_equal(ev(&a, r, j)->step, (uint64_t)j);
        /* the previous event crosses batches */
        assert_int_equal(ev(&a, r, 4)->rank_prev, (int64_t)ev(&a, r, 3)->id);
    }
    const int64_t late[4][4] = {
        {0, 0, 0, 0}, {0, 0, 4900, 4900}, {5000, 5000, 5000, 5000}, {0, 0, 5000, 5000}};
    const uint8_t cls[4][4] = {
        {MW_LATE_NONE, MW_LATE_NONE, MW_LATE_NONE, MW_LATE_NONE},
        {MW_LATE_NONE, MW_LATE_NONE, MW_LATE_MESSAGE, MW_LATE_MESSAGE},
        {MW_LATE_COMPUTE, MW_LATE_RANK, MW_LATE_RANK, MW_LATE_RANK},
        {MW_LATE_NONE, MW_LATE_NONE, MW_LATE_MESSAGE, MW_LATE_RANK},
    };
    for (uint32_t r = 0; r < 4; r++)
        for (int j = 0; j < 12; j++) {
            const mw_logical_event_t *e = ev(&a, r, j);
            int64_t want = j >= 4 && j < 8 ? late[r][j - 4] : 0;
            assert_int_equal(e->lateness_ns, want);
            assert_int_equal(e->cls, j >= 4 && j < 8 ? cls[r][j - 4] : MW_LATE_NONE);
            /* the only differential lateness: rank 2's first event of iteration 1 */
            assert_int_equal(e->diff_ns, r == 2 && j == 4 ? 5000 : 0);
            assert_int_equal(e->window, (uint64_t)(j / 4));
        }
    /* a receive's event begins with its Waitall; computation between iterations */
    assert_int_equal(ev(&a, 0, 2)->start_ns, 200);
    assert_int_equal(ev(&a, 0, 4)->comp_before_ns, 10000 - 300);
    assert_int_equal(ev(&a, 2, 4)->comp_before_ns, 15000 - 300);
    assert_int_equal(a.win[1].diff_max_ns, 5000);
    assert_int_equal(a.win[1].diff_rank, 2);
    assert_int_equal(a.win[1].diff_step, 4);
    assert_int_equal(a.win[1].diff_fn, MW_ID_Isend);
    assert_int_equal(a.win[1].lateness_max_ns, 5000);
    assert_int_equal(a.win[2].lateness_max_ns, 0);
    acc_free(&a);
    mw_logical_stream_free(s);
    free(b);
}

/* ---- a binary gather/scatter tree ----------------------------------------------------------- */

/* Seven ranks: 0 the root, 1 and 2 its children, 3 4 under 1, 5 6 under 2. Gather: leaves send
 * to their parent, a parent receives from its first then its second child and sends to the
 * root, the root receives from 1 then 2. Scatter the other way. Every call 100 ns, a receive
 * ends 100 ns after its message left; level by level. */
static void build_tree(bld_t *b)
{
    const int kid[3][2] = {{1, 2}, {3, 4}, {5, 6}};
    for (int l = 3; l <= 6; l++)
        b_send(b, l, 0, 100, (l - 1) / 2, 0);
    for (int p = 1; p <= 2; p++) {
        b_recv(b, p, 0, 200, kid[p][0], 0);
        b_recv(b, p, 200, 100, kid[p][1], 0);
        b_send(b, p, 300, 100, 0, 0);
    }
    b_recv(b, 0, 0, 500, 1, 0);
    b_recv(b, 0, 500, 100, 2, 0);
    b_send(b, 0, 600, 100, 1, 0);
    b_send(b, 0, 700, 100, 2, 0);
    for (int p = 1; p <= 2; p++) {
        b_recv(b, p, 400, 400 + 100 * p, 0, 0);
        b_send(b, p, 800 + 100 * p, 100, kid[p][0], 0);
        b_send(b, p, 900 + 100 * p, 100, kid[p][1], 0);
    }
    for (int l = 3; l <= 6; l++) {
        int p = (l - 1) / 2, second = (l % 2) == 0;
        b_recv(b, l, 100, 900 + 100 * (uint64_t)p + 100 * (uint64_t)second, p, 0);
    }
}

/* With the leap merge (docs/logical.md has this example): the first layer {3->1, 5->2} misses
 * ranks 0, 4, 6 and absorbs 4->1, 6->2, 1->0 in that order (then every rank is in); the next
 * layer {2->0} absorbs the whole scatter. Steps, gather partition: leaves send at 0; rank 1
 * receives at 1, 2, sends at 3; rank 2 receives at 1, 2; the root receives from 1 at 4.
 * Scatter partition (offset 4, from the root's step 4 and its receive at local step 1): rank 2
 * sends to the root at 4, the root receives at 5, sends at 6, 7; rank 1 receives at 7, sends at
 * 8, 9; rank 2 receives at 8, sends at 9, 10; leaves receive at 9, 10, 10, 11. */
static void test_tree_leap(void **state)
{
    (void)state;
    bld_t *b = bld_new();
    build_tree(b);
    mw_logical_stream_t *s = stream(MW_LOGICAL_LEAP);
    acc_t a = {0};
    push_range(s, b, 7, 0, 0, 100000, &a);
    gap(s, &a);
    check_order(&a);
    assert_int_equal(a.n, 24);
    assert_int_equal(a.np, 2);
    const uint64_t want[7][6] = {
        {4, 5, 6, 7}, {1, 2, 3, 7, 8, 9}, {1, 2, 4, 8, 9, 10}, {0, 9}, {0, 10}, {0, 10}, {0, 11},
    };
    const int nev[7] = {4, 6, 6, 2, 2, 2, 2};
    for (uint32_t r = 0; r < 7; r++) {
        assert_int_equal(count_rank(&a, r), nev[r]);
        for (int j = 0; j < nev[r]; j++)
            assert_int_equal(ev(&a, r, j)->step, want[r][j]);
    }
    assert_int_equal(a.part[0].ranks, 7);
    assert_int_equal(a.part[0].nevents, 10);
    assert_int_equal(a.part[0].step_first, 0);
    assert_int_equal(a.part[0].step_last, 4);
    assert_int_equal(a.part[1].ranks, 7);
    mw_logical_stats_t st;
    mw_logical_stream_stats(s, &st);
    assert_int_equal(st.merged_leap, 4 + 6);
    assert_int_equal(st.merged_cycles, 0);
    acc_free(&a);
    mw_logical_stream_free(s);
    free(b);
}

/* Without it every message is its own partition (the tree has no cycle), each placed after
 * what precedes it on its ranks: a leaf's send waits for nothing, but its partition's receive
 * must follow the parent's previous step. Checked: 12 partitions; the first leaves' sends at 0;
 * each message one step; the steps still increase along each rank and message. */
static void test_tree_no_leap(void **state)
{
    (void)state;
    bld_t *b = bld_new();
    build_tree(b);
    mw_logical_stream_t *s = stream(0);
    acc_t a = {0};
    push_range(s, b, 7, 0, 0, 100000, &a);
    gap(s, &a);
    check_order(&a);
    assert_int_equal(a.n, 24);
    assert_int_equal(a.np, 12);
    for (size_t i = 0; i < a.np; i++) {
        assert_int_equal(a.part[i].nevents, 2);
        assert_int_equal(a.part[i].step_last, a.part[i].step_first + 1);
    }
    assert_int_equal(ev(&a, 3, 0)->step, 0);
    assert_int_equal(ev(&a, 5, 0)->step, 0);
    /* rank 1: receives at 1 (from 3), 2 (from 4, whose send is put at 1), sends at 3 */
    assert_int_equal(ev(&a, 1, 0)->step, 1);
    assert_int_equal(ev(&a, 4, 0)->step, 1);
    assert_int_equal(ev(&a, 1, 1)->step, 2);
    assert_int_equal(ev(&a, 1, 2)->step, 3);
    assert_int_equal(ev(&a, 0, 0)->step, 4);
    mw_logical_stats_t st;
    mw_logical_stream_stats(s, &st);
    assert_int_equal(st.merged_leap, 0);
    acc_free(&a);
    mw_logical_stream_free(s);
    free(b);
}

/* ---- collectives with point-to-point -------------------------------------------------------- */

/* Three ranks: an Allreduce (rank 2 enters 1000 late, everyone leaves at 1100), rank 0 sends to
 * 1, 1 sends to 2, a Barrier, then an Iallreduce posted together whose completions come at
 * 3000 (ranks 0, 2) and 3700 (rank 1, which waited later).
 * Steps: Allreduce 0 (one node: all members one step); messages: rank 0's send 1, rank 1's
 * receive 2, its send 3, rank 2's receive 4; Barrier 5; Iallreduce 6.
 * Lateness: the Allreduce and the Barrier end together (0); the Iallreduce ends with its
 * completion: rank 1 700 late, differential 700, and it began on time: class call. */
static void test_collectives_mixed(void **state)
{
    (void)state;
    bld_t *b = bld_new();
    for (int r = 0; r < 3; r++)
        b_coll(b, r, r == 2 ? 1000 : 0, r == 2 ? 100 : 1100, MW_ID_Allreduce, 0);
    b_send(b, 0, 1200, 100, 1, 0);
    b_recv(b, 1, 1200, 200, 0, 0);
    b_send(b, 1, 1400, 100, 2, 0);
    b_recv(b, 2, 1200, 400, 1, 0);
    for (int r = 0; r < 3; r++)
        b_coll(b, r, 1700, 300, MW_ID_Barrier, 0);
    for (int r = 0; r < 3; r++) {
        b_icoll(b, r, 2100, 100, MW_ID_Iallreduce, 0, 7);
        b_coll_done(b, r, r == 1 ? 3700 : 3000, 7);
    }
    mw_logical_stream_t *s = stream(MW_LOGICAL_LEAP);
    acc_t a = {0};
    push_range(s, b, 3, 0, 0, 100000, &a);
    gap(s, &a);
    check_order(&a);
    assert_int_equal(a.n, 13);
    const uint64_t want[3][5] = {{0, 1, 5, 6}, {0, 2, 3, 5, 6}, {0, 4, 5, 6}};
    const int nev[3] = {4, 5, 4};
    for (uint32_t r = 0; r < 3; r++) {
        assert_int_equal(count_rank(&a, r), nev[r]);
        for (int j = 0; j < nev[r]; j++) {
            const mw_logical_event_t *e = ev(&a, r, j);
            assert_int_equal(e->step, want[r][j]);
            if (j == nev[r] - 1) {
                assert_int_equal(e->kind, MW_LE_COLL);
                assert_int_equal(e->end_ns, r == 1 ? 3700 : 3000);
                assert_int_equal(e->lateness_ns, r == 1 ? 700 : 0);
                assert_int_equal(e->diff_ns, r == 1 ? 700 : 0);
                assert_int_equal(e->cls, r == 1 ? MW_LATE_CALL : MW_LATE_NONE);
            } else {
                assert_int_equal(e->lateness_ns, 0);
            }
        }
    }
    /* the Allreduce's members: one partition, one step */
    assert_int_equal(ev(&a, 0, 0)->partition, ev(&a, 2, 0)->partition);
    assert_int_equal(ev(&a, 2, 0)->comp_before_ns, 0);
    mw_logical_stats_t st;
    mw_logical_stream_stats(s, &st);
    assert_int_equal(st.unmatched, 0);
    acc_free(&a);
    mw_logical_stream_free(s);
    free(b);
}

/* A Bcast whose root and rank 2 leave in window 0 while rank 1 is still in it at the end of
 * windows 0 and 1 (open records) and leaves in window 2: the instance is held until rank 1's
 * member comes, then one partition and one step for all three. */
static void test_collective_open(void **state)
{
    (void)state;
    bld_t *b = bld_new();
    b_coll(b, 0, 8000, 1000, MW_ID_Bcast, 0);
    b_coll(b, 2, 8000, 1100, MW_ID_Bcast, 0);
    mw_trace_rec_t *o = add(b, 1, MW_TK_CALL, MW_ID_Bcast, 9500, 499);
    o->flags = MW_TF_OPEN;
    o = add(b, 1, MW_TK_CALL, MW_ID_Bcast, 9500, 10499);
    o->flags = MW_TF_OPEN;
    b_coll(b, 1, 9500, 15500, MW_ID_Bcast, 0);
    mw_logical_stream_t *s = stream(MW_LOGICAL_LEAP);
    acc_t a = {0};
    push_range(s, b, 3, 0, 0, 10000, &a);
    push_range(s, b, 3, 1, 10000, 20000, &a);
    assert_int_equal(a.n, 0); /* held: rank 1 is still in a collective */
    push_range(s, b, 3, 2, 20000, 30000, &a);
    gap(s, &a);
    assert_int_equal(a.n, 3);
    assert_int_equal(a.np, 1);
    assert_int_equal(a.part[0].forced, 0);
    for (uint32_t r = 0; r < 3; r++)
        assert_int_equal(ev(&a, r, 0)->step, 0);
    assert_int_equal(ev(&a, 1, 0)->lateness_ns, 25000 - 9000);
    assert_int_equal(ev(&a, 1, 0)->window, 2);
    acc_free(&a);
    mw_logical_stream_free(s);
    free(b);
}

/* A non-blocking collective posted at the end of window 0 on ranks 0 and 1 and in window 1 on
 * rank 2; rank 0's completion comes at the start of window 1, before a send. After window 1
 * (where rank 2's member makes the instance wait a window), rank 0's part of window 1 must keep
 * that completion although its first pending event (the send) comes after it: at window 2 the
 * instance is final, not held until the end and forced, and rank 0's member ends at 10500. */
static void test_icoll_done_kept(void **state)
{
    (void)state;
    bld_t *b = bld_new();
    b_icoll(b, 0, 9000, 100, MW_ID_Ibarrier, 0, 1);
    b_icoll(b, 1, 9000, 100, MW_ID_Ibarrier, 0, 1);
    b_coll_done(b, 0, 10500, 1);
    b_send(b, 0, 11000, 100, 1, 0);
    b_coll_done(b, 1, 10600, 1);
    b_recv(b, 1, 11000, 200, 0, 0);
    b_icoll(b, 2, 15000, 100, MW_ID_Ibarrier, 0, 1);
    b_coll_done(b, 2, 15200, 1);
    mw_logical_stream_t *s = stream(MW_LOGICAL_LEAP);
    acc_t a = {0};
    for (uint64_t k = 0; k < 3; k++)
        push_range(s, b, 3, k, 10000 * (int64_t)k, 10000 * (int64_t)k + 10000, &a);
    assert_int_equal(a.n, 5); /* final without the gap */
    gap(s, &a);
    assert_int_equal(a.n, 5);
    for (size_t i = 0; i < a.np; i++)
        assert_int_equal(a.part[i].forced, 0);
    assert_int_equal(ev(&a, 0, 0)->kind, MW_LE_COLL);
    assert_int_equal(ev(&a, 0, 0)->end_ns, 10500);
    assert_int_equal(ev(&a, 2, 0)->end_ns, 15200);
    mw_logical_stats_t st;
    mw_logical_stream_stats(s, &st);
    assert_int_equal(st.forced, 0);
    acc_free(&a);
    mw_logical_stream_free(s);
    free(b);
}

/* ---- receives from MPI_ANY_SOURCE ----------------------------------------------------------- */

/* Ranks 2, 3, 1 send to rank 0 at 0, 1000, 2000 (rank 1 is the slowest); rank 0 posts three
 * receives from MPI_ANY_SOURCE and completes them one at a time in arrival order, i.e. from
 * 2, 3, 1. Steps: sends 0; the receives 1, 2, 3 in completion order. */
static void test_wildcard(void **state)
{
    (void)state;
    bld_t *b = bld_new();
    const int order[3] = {2, 3, 1};
    for (int i = 0; i < 3; i++)
        b_send(b, order[i], 1000 * i, 100, 0, 0);
    for (uint32_t i = 0; i < 3; i++)
        b_irecv(b, 0, 10 * (int64_t)i, MW_TRACE_ANY, MW_TRACE_ANY, i + 1);
    for (int i = 0; i < 3; i++) {
        b_waitall(b, 0, 1000 * i + 50, 100);
        b_recv_done(b, 0, 1000 * i + 150, order[i], 0, (uint32_t)i + 1);
    }
    mw_logical_stream_t *s = stream(MW_LOGICAL_LEAP);
    acc_t a = {0};
    push_range(s, b, 4, 0, 0, 100000, &a);
    gap(s, &a);
    check_order(&a);
    assert_int_equal(a.n, 6);
    for (int i = 0; i < 3; i++) {
        const mw_logical_event_t *e = ev(&a, 0, i);
        assert_int_equal(e->kind, MW_LE_RECV);
        assert_int_equal(e->step, (uint64_t)i + 1);
        assert_int_equal(e->peer, order[i]);
        assert_int_equal(by_id(&a, e->msg_peer)->rank, order[i]);
        assert_int_equal(e->start_ns, 1000 * i + 50);
    }
    for (uint32_t r = 1; r < 4; r++)
        assert_int_equal(ev(&a, r, 0)->step, 0);
    /* step 0: the sends end at 100, 1100, 2100: rank 3 1000 late and rank 1 2000, both
     * originating there (compute) */
    assert_int_equal(ev(&a, 3, 0)->diff_ns, 1000);
    assert_int_equal(ev(&a, 1, 0)->diff_ns, 2000);
    assert_int_equal(ev(&a, 1, 0)->cls, MW_LATE_COMPUTE);
    acc_free(&a);
    mw_logical_stream_free(s);
    free(b);
}

/* ---- a rank late by more than a window, while the others wait inside a call --------------- */

/* Ranks 1 and 3 send to rank 0 at 1000 (100 ns); rank 2 sleeps and sends at 35000. Rank 0
 * receives from 1 (1000-1200), from 3 (1200-1300), then waits inside its third receive until
 * 35200 (from 2); windows of 10000 ns, so at the end of windows 0, 1 and 2 its receive is open.
 * Without the open call, the partition of ranks 0, 1 and 3 (the leap merge glues the two
 * messages: every rank with held events is in) would be final at window 1 and rank 2's send
 * alone at its step, on time. With it, rank 0's last event (its receive from 3) waits: the three
 * messages form one partition (sends 0, receives 1, 2, 3), and rank 2's send is 34000 late at
 * step 0, where the delay starts (compute: it began 34000 after the others). The same when
 * window 2 brings no record of rank 0 (the shim collected it after the call ended: no open
 * record; the last window with records of the rank says it is inside). With a window cap of 2
 * the wait ends at the cap (forced) and the late send is alone again: the lag is bounded. */
static void build_late_open(bld_t *b, int nopen)
{
    b_send(b, 1, 1000, 100, 0, 0);
    b_send(b, 3, 1000, 100, 0, 0);
    b_recv(b, 0, 1000, 200, 1, 0);
    b_recv(b, 0, 1200, 100, 3, 0);
    for (int k = 0; k < nopen; k++) {
        mw_trace_rec_t *o = add(b, 0, MW_TK_CALL, MW_ID_Recv, 1300, (uint64_t)(10000 * k + 8699));
        o->flags = MW_TF_OPEN | MW_TF_NOSEQ;
    }
    b_send(b, 2, 35000, 100, 0, 0);
    b_recv(b, 0, 1300, 33900, 2, 0);
}

static void test_late_open(void **state)
{
    (void)state;
    for (int v = 0; v < 3; v++) {
        int cap = v == 2;
        bld_t *b = bld_new();
        build_late_open(b, v == 1 ? 2 : 3);
        mw_logical_opts_t o;
        memset(&o, 0, sizeof o);
        o.flags = MW_LOGICAL_LEAP;
        o.noise_floor_ns = floor_ns;
        o.max_pending_windows = cap ? 2 : 0;
        mw_logical_stream_t *s = mw_logical_stream_new(&o);
        assert_non_null(s);
        acc_t a = {0};
        for (uint64_t k = 0; k < 4; k++) {
            push_range(s, b, 4, k, 10000 * (int64_t)k, 10000 * (int64_t)k + 10000, &a);
            if (!cap && k < 3)
                assert_int_equal(a.n, 0); /* held while rank 0 waits inside its receive */
        }
        gap(s, &a);
        check_order(&a);
        assert_int_equal(a.n, 6);
        const mw_logical_event_t *late = ev(&a, 2, 0);
        if (!cap) {
            assert_int_equal(a.np, 1);
            assert_int_equal(a.part[0].forced, 0);
            assert_int_equal(late->step, 0);
            assert_int_equal(late->lateness_ns, 34000);
            assert_int_equal(late->diff_ns, 34000);
            assert_int_equal(late->cls, MW_LATE_COMPUTE);
            assert_int_equal(ev(&a, 0, 2)->step, 3);
            assert_int_equal(ev(&a, 0, 2)->lateness_ns, 0); /* alone at step 3 */
            for (uint32_t r = 1; r < 4; r += 2)
                assert_int_equal(ev(&a, r, 0)->lateness_ns, 0);
        } else {
            assert_int_equal(a.np, 2);
            assert_int_equal(a.part[0].forced, 1);
            assert_int_equal(late->lateness_ns, 0);
        }
        acc_free(&a);
        mw_logical_stream_free(s);
        free(b);
    }
}

/* ---- the noise floor ------------------------------------------------------------------------- */

/* The ring of build_ring, where rank 3's send also takes 300 ns longer (1000-1400) and its
 * receive follows it (1400-1500). Step 0: rank 3 300 late, differential 300 (it began in time:
 * call); step 1: rank 3 300 late, inherited from its send (rank). With a floor of 4000 ns the
 * 300 ns are noise: diff_ns still 300, but rank 3's events are on time (none); rank 1's delay
 * of 5000 is still an origin (compute). With the default floor (1 ms, opts 0) it is noise too. */
static void test_noise_floor(void **state)
{
    (void)state;
    const int64_t floors[3] = {1, 4000, 0};
    for (int f = 0; f < 3; f++) {
        bld_t *b = bld_new();
        build_ring(b);
        b->r[3][0].dur_ns = 400;
        b->r[3][1].start_ns = 1400;
        b->r[3][1].dur_ns = 100;
        floor_ns = floors[f] ? floors[f] : MW_LOGICAL_NOISE_FLOOR_NS;
        mw_logical_opts_t o;
        memset(&o, 0, sizeof o);
        o.flags = MW_LOGICAL_LEAP;
        o.noise_floor_ns = floors[f];
        mw_logical_stream_t *s = mw_logical_stream_new(&o);
        assert_non_null(s);
        acc_t a = {0};
        push_range(s, b, 4, 0, 0, 100000, &a);
        gap(s, &a);
        const mw_logical_event_t *s3 = ev(&a, 3, 0), *r3 = ev(&a, 3, 1), *s1 = ev(&a, 1, 0);
        assert_int_equal(s3->diff_ns, 300);
        assert_int_equal(s3->lateness_ns, 300);
        assert_int_equal(r3->lateness_ns, 300);
        assert_int_equal(s1->diff_ns, 5000);
        assert_int_equal(s3->cls, f == 0 ? MW_LATE_CALL : MW_LATE_NONE);
        assert_int_equal(r3->cls, f == 0 ? MW_LATE_RANK : MW_LATE_NONE);
        assert_int_equal(s1->cls, f == 2 ? MW_LATE_NONE : MW_LATE_COMPUTE);
        floor_ns = 1;
        acc_free(&a);
        mw_logical_stream_free(s);
        free(b);
    }
}

/* ---- an exchange that must merge ------------------------------------------------------------ */

/* Rank 0 sends to 1 then receives from 1; rank 1 the same: the two messages' partitions
 * precede each other (one on each rank), a cycle merged into one; sends 0, receives 1. */
static void test_cycle(void **state)
{
    (void)state;
    bld_t *b = bld_new();
    for (int r = 0; r < 2; r++) {
        b_send(b, r, 0, 100, 1 - r, 0);
        b_recv(b, r, 100, 100, 1 - r, 0);
    }
    mw_logical_stream_t *s = stream(0);
    acc_t a = {0};
    push_range(s, b, 2, 0, 0, 100000, &a);
    gap(s, &a);
    check_order(&a);
    assert_int_equal(a.np, 1);
    assert_int_equal(a.part[0].ranks, 2);
    assert_int_equal(a.part[0].forced, 0);
    for (uint32_t r = 0; r < 2; r++) {
        assert_int_equal(ev(&a, r, 0)->step, 0);
        assert_int_equal(ev(&a, r, 1)->step, 1);
    }
    mw_logical_stats_t st;
    mw_logical_stream_stats(s, &st);
    assert_int_equal(st.merged_cycles, 1);
    acc_free(&a);
    mw_logical_stream_free(s);
    free(b);
}

/* ---- one window or several ------------------------------------------------------------------ */

/* Without the leap merge, where a window ends changes nothing as long as no partition had to be
 * forced (every partner arrived within MW_LOGICAL_MAX_PENDING_WINDOWS windows; docs/logical.md
 * "One window or several"): steps, lateness, differential lateness, class and computation
 * before are the same. Windows cut through iterations here (messages cross window edges); with
 * 777 ns windows the 7000 ns delay would span more than 8 windows and force partitions. */
static const mw_logical_event_t *find_same(const acc_t *a, const mw_logical_event_t *e)
{
    for (size_t i = 0; i < a->n; i++)
        if (a->ev[i].rank == e->rank && a->ev[i].start_ns == e->start_ns &&
            a->ev[i].end_ns == e->end_ns && a->ev[i].kind == e->kind && a->ev[i].peer == e->peer)
            return &a->ev[i];
    return NULL;
}

static void split_compare(const bld_t *b, int nranks, uint32_t flags, int64_t t_end, int64_t len,
                          int expect_equal_partitions)
{
    mw_logical_stream_t *s1 = stream(flags), *s2 = stream(flags);
    acc_t a1 = {0}, a2 = {0};
    push_range(s1, b, nranks, 0, -1000, t_end, &a1);
    gap(s1, &a1);
    uint64_t w = 0;
    for (int64_t t = -1000; t < t_end; t += len)
        push_range(s2, b, nranks, w++, t, t + len < t_end ? t + len : t_end, &a2);
    gap(s2, &a2);
    check_order(&a2);
    assert_int_equal(a1.n, a2.n);
    for (size_t i = 0; i < a1.n; i++) {
        const mw_logical_event_t *x = &a1.ev[i], *y = find_same(&a2, x);
        assert_non_null(y);
        assert_int_equal(x->step, y->step);
        assert_int_equal(x->lateness_ns, y->lateness_ns);
        assert_int_equal(x->diff_ns, y->diff_ns);
        assert_int_equal(x->cls, y->cls);
        assert_int_equal(x->comp_before_ns, y->comp_before_ns);
    }
    if (expect_equal_partitions)
        assert_int_equal(a1.np, a2.np);
    /* the precondition: no partner came later than the window cap allows */
    mw_logical_stats_t st;
    mw_logical_stream_stats(s2, &st);
    assert_int_equal(st.unmatched, 0);
    assert_int_equal(st.forced, 0);
    acc_free(&a1);
    acc_free(&a2);
    mw_logical_stream_free(s1);
    mw_logical_stream_free(s2);
}

static void test_split_windows(void **state)
{
    (void)state;
    bld_t *b = bld_new();
    build_stencil(b, 6, 1, 2, 7000);
    split_compare(b, 4, 0, 60000, 2500, 1); /* windows cut iterations */
    split_compare(b, 4, 0, 60000, 1300, 1); /* the late messages cross 6 windows */
    /* with the leap merge the stencil's iterations already hold every rank: same result */
    split_compare(b, 4, MW_LOGICAL_LEAP, 60000, 10000, 1);
    free(b);
    b = bld_new();
    build_tree(b);
    split_compare(b, 7, 0, 100000, 250, 1);
    free(b);
}

/* ---- caps ---------------------------------------------------------------------------------- */

/* A send to a rank that is never traced keeps its partition (and what follows on its rank)
 * pending until the stream holds more windows than its cap: then the oldest window is
 * finalized, forced, and counted. */
static void test_window_cap(void **state)
{
    (void)state;
    mw_logical_opts_t o;
    memset(&o, 0, sizeof o);
    o.max_pending_windows = 3;
    o.noise_floor_ns = floor_ns;
    mw_logical_stream_t *s = mw_logical_stream_new(&o);
    assert_non_null(s);
    bld_t *b = bld_new();
    for (int k = 0; k < 6; k++) {
        int64_t T = 10000 * (int64_t)k;
        b_send(b, 0, T, 100, 1, 0);
        b_recv(b, 1, T, 200, 0, 0);
        if (k == 0)
            b_send(b, 1, T + 300, 100, 9, 0); /* rank 9 is not traced */
    }
    acc_t a = {0};
    push_range(s, b, 2, 0, 0, 10000, &a);
    push_range(s, b, 2, 1, 10000, 20000, &a);
    push_range(s, b, 2, 2, 20000, 30000, &a);
    /* rank 1's events after the unmatched send wait behind it; rank 0's first send is in the
     * partition with rank 1's first receive, which is final */
    assert_int_equal(a.nw, 0);
    mw_logical_stats_t st;
    mw_logical_stream_stats(s, &st);
    assert_int_equal(st.pending_windows, 3);
    push_range(s, b, 2, 3, 30000, 40000, &a); /* 4 held > 3: window 0 is forced */
    mw_logical_stream_stats(s, &st);
    assert_true(st.pending_windows <= 3);
    assert_true(st.forced >= 1);
    assert_int_equal(st.unmatched, 1);
    assert_true(a.nw >= 1);
    assert_int_equal(a.win[0].key, 0);
    int forced = 0;
    for (size_t i = 0; i < a.np; i++)
        forced += a.part[i].forced;
    assert_true(forced >= 1);
    push_range(s, b, 2, 4, 40000, 50000, &a);
    push_range(s, b, 2, 5, 50000, 60000, &a);
    gap(s, &a);
    check_order(&a);
    assert_int_equal(a.n, 13);
    assert_int_equal(a.nw, 6);
    for (size_t i = 0; i < a.nw; i++)
        assert_int_equal(a.win[i].key, i);
    acc_free(&a);
    mw_logical_stream_free(s);
    free(b);
}

/* A receive whose send was not traced waits one window more than the rule's minimum (a
 * blocking send may return after its receive, in the next window), then it is final without
 * being forced; a send without its receive waits until the cap. */
static void test_unmatched_wait(void **state)
{
    (void)state;
    bld_t *b = bld_new();
    b_recv(b, 0, 100, 100, 5, 0); /* rank 5 is not traced */
    b_send(b, 1, 100, 100, 6, 0); /* nor rank 6 */
    for (int k = 0; k < 5; k++) {
        b_send(b, 0, 10000 * k + 1000, 100, 2, 0);
        b_recv(b, 2, 10000 * k + 1000, 200, 0, 0);
    }
    mw_logical_stream_t *s = stream(0);
    acc_t a = {0};
    push_range(s, b, 3, 0, 0, 10000, &a);
    push_range(s, b, 3, 1, 10000, 20000, &a);
    assert_int_equal(a.n, 0); /* window 0 is one of the two newest */
    push_range(s, b, 3, 2, 20000, 30000, &a);
    /* the receive of window 0 and what follows it on rank 0 up to window 1 (with rank 2's
     * receives), but not rank 1's send */
    assert_int_equal(a.n, 1 + 2 + 2);
    assert_int_equal(ev(&a, 0, 0)->kind, MW_LE_RECV);
    assert_int_equal(ev(&a, 0, 0)->msg_peer, -1);
    assert_int_equal(count_rank(&a, 1), 0);
    for (size_t i = 0; i < a.np; i++)
        assert_int_equal(a.part[i].forced, 0);
    assert_int_equal(a.nw, 0); /* window 0 still has rank 1's send */
    mw_logical_stats_t st;
    mw_logical_stream_stats(s, &st);
    assert_int_equal(st.unmatched, 1);
    gap(s, &a);
    mw_logical_stream_stats(s, &st);
    assert_int_equal(st.unmatched, 2);
    assert_int_equal(st.forced, 1);
    assert_int_equal(a.nw, 3);
    acc_free(&a);
    mw_logical_stream_free(s);
    free(b);
}

/* A window over the event cap: the cap forces what is held first; ranks that alone would
 * exceed it are left out and counted. */
static void test_event_cap(void **state)
{
    (void)state;
    mw_logical_opts_t o;
    memset(&o, 0, sizeof o);
    o.max_pending_events = 10;
    o.noise_floor_ns = floor_ns;
    mw_logical_stream_t *s = mw_logical_stream_new(&o);
    bld_t *b = bld_new();
    for (int k = 0; k < 4; k++) {
        b_send(b, 0, 1000 * k, 100, 1, 0);
        b_recv(b, 1, 1000 * k, 200, 0, 0);
    }
    for (int k = 0; k < 12; k++)
        b_send(b, 2, 10000 + 100 * k, 10, 3, 0);
    acc_t a = {0};
    push_range(s, b, 2, 0, 0, 10000, &a); /* 8 events held */
    mw_logical_stats_t st;
    mw_logical_stream_stats(s, &st);
    assert_int_equal(st.pending_events, 8);
    /* nothing of ranks 0, 1 there, 12 events of rank 2: 8 + 12 > 10 forces the 8 held, and
     * rank 2 alone is over the cap */
    push_range(s, b, 3, 1, 10000, 20000, &a);
    mw_logical_stream_stats(s, &st);
    assert_int_equal(a.n, 8);
    assert_int_equal(st.dropped_ranks, 1);
    assert_int_equal(st.pending_events, 0);
    b->n[2] = 0;
    for (int k = 0; k < 4; k++)
        b_send(b, 2, 20000 + 100 * k, 10, 3, 0);
    push_range(s, b, 3, 2, 20000, 30000, &a);
    mw_logical_stream_stats(s, &st);
    assert_int_equal(st.dropped_ranks, 1);
    assert_int_equal(st.pending_events, 4);
    gap(s, &a);
    assert_int_equal(a.n, 8 + 4);
    acc_free(&a);
    mw_logical_stream_free(s);
    free(b);
}

/* ---- refusals and garbage ------------------------------------------------------------------- */

static void test_refusals(void **state)
{
    (void)state;
    mw_logical_stream_t *s = stream(MW_LOGICAL_LEAP);
    mw_trace_rec_t r;
    memset(&r, 0, sizeof r);
    r.kind = MW_TK_SEND;
    r.fn = MW_ID_Send;
    mw_logical_rank_t rk[2] = {{3, &r, 1}, {3, &r, 1}};
    mw_logical_batch_t out;
    assert_int_equal(mw_logical_stream_push(s, 5, 0, rk, 2, &out), -1); /* a rank twice */
    assert_int_equal(out.nevents, 0);
    assert_int_equal(mw_logical_stream_push(s, 5, 0, rk, 1, &out), 0);
    mw_logical_batch_free(&out);
    assert_int_equal(mw_logical_stream_push(s, 5, 0, rk, 1, &out), -1); /* same window */
    assert_int_equal(mw_logical_stream_push(s, 4, 0, rk, 1, &out), -1); /* older */
    rk[0].recs = NULL;
    assert_int_equal(mw_logical_stream_push(s, 6, 0, rk, 1, &out), -1); /* n without records */
    rk[0].n = 0;
    assert_int_equal(mw_logical_stream_push(s, 6, 0, rk, 1, &out), 0); /* an empty rank */
    mw_logical_batch_free(&out);
    assert_int_equal(mw_logical_stream_push(s, 9, 0, NULL, 0, &out), 0); /* after a hole */
    mw_logical_batch_free(&out);
    mw_logical_stats_t st;
    mw_logical_stream_stats(s, &st);
    assert_int_equal(st.gaps, 1);
    assert_int_equal(st.windows, 3);
    assert_int_equal(st.pending_windows, 0);
    assert_int_equal(st.unmatched, 1); /* the send of window 5 */
    assert_string_equal(mw_logical_class_name(MW_LATE_MESSAGE), "message");
    assert_string_equal(mw_logical_class_name(MW_LATE_COUNT), "?");
    mw_logical_stream_free(s);
    mw_logical_stream_free(NULL);
}

static uint64_t rng_next(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Random records: kinds, flags, peers, tags, indices, requests, times and durations from a
 * small set (so that they collide) and from the extremes. Run twice: never a crash (the
 * sanitized build checks memory), the invariants of acc_add, and the same bytes both times. */
static void garbage_run(uint64_t seed, uint32_t flags, mw_logical_event_t **evs, size_t *n)
{
    mw_logical_stream_t *s = stream(flags);
    acc_t a = {0};
    static mw_trace_rec_t recs[8][400];
    uint64_t x = seed;
    uint64_t w = 0;
    for (int round = 0; round < 40; round++) {
        mw_logical_rank_t rk[8];
        size_t nr = 0;
        for (uint32_t r = 0; r < 8; r++) {
            if (rng_next(&x) % 5 == 0)
                continue;
            size_t nrec = rng_next(&x) % 400;
            for (size_t i = 0; i < nrec; i++) {
                mw_trace_rec_t *q = &recs[r][i];
                uint64_t v = rng_next(&x);
                memset(q, 0, sizeof *q);
                q->kind = (uint8_t)(v % MW_TK_COUNT);
                q->flags = (uint8_t)((v >> 8) % 3 == 0 ? (v >> 16) & 63 : 0);
                q->fn = (uint16_t)(1 + (v >> 24) % 50);
                q->peer = (int32_t)((v >> 32) % 11) - 2;
                q->tag = (int32_t)((v >> 36) % 3);
                q->comm = (v >> 40) % 4;
                q->seq = (v >> 44) % 6;
                q->req = (uint32_t)((v >> 48) % 5);
                q->thread = (uint32_t)((v >> 52) % 2);
                uint64_t t = rng_next(&x);
                q->start_ns = t % 7 == 0   ? INT64_MIN + (int64_t)(t % 100)
                              : t % 7 == 1 ? INT64_MAX - (int64_t)(t % 100)
                                           : (int64_t)(t % 100000) - 50000;
                q->dur_ns = (t >> 8) % 9 == 0 ? UINT64_MAX - (t % 5) : (t >> 12) % 5000;
            }
            rk[nr].rank = r * 3;
            rk[nr].recs = recs[r];
            rk[nr].n = nrec;
            nr++;
        }
        mw_logical_batch_t out;
        w += 1 + (rng_next(&x) % 9 == 0); /* sometimes a hole */
        assert_int_equal(mw_logical_stream_push(s, w, (int64_t)(w * 100000), rk, nr, &out), 0);
        acc_add(&a, &out);
        mw_logical_batch_free(&out);
    }
    gap(s, &a);
    mw_logical_stats_t st;
    mw_logical_stream_stats(s, &st);
    assert_int_equal(st.pending_events, 0);
    assert_int_equal(st.events, a.n);
    /* steps increase along each rank */
    for (size_t i = 0; i < a.n; i++)
        if (a.ev[i].rank_prev >= 0) {
            const mw_logical_event_t *p = by_id(&a, a.ev[i].rank_prev);
            assert_non_null(p);
            assert_int_equal(p->rank, a.ev[i].rank);
        }
    *evs = a.ev;
    *n = a.n;
    a.ev = NULL;
    acc_free(&a);
    mw_logical_stream_free(s);
}

static void test_garbage(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        mw_logical_event_t *e1, *e2;
        size_t n1, n2;
        uint32_t flags = seed % 2 ? MW_LOGICAL_LEAP : 0;
        garbage_run(seed, flags, &e1, &n1);
        garbage_run(seed, flags, &e2, &n2);
        assert_int_equal(n1, n2);
        assert_true(n1 > 0);
        assert_memory_equal(e1, e2, n1 * sizeof *e1);
        free(e1);
        free(e2);
    }
}

/* Many events on one channel, a collective instance with every record, long chains: stays
 * fast (no quadratic path). */
static void test_adversarial(void **state)
{
    (void)state;
    enum { N = 100000 };
    mw_trace_rec_t *r0 = calloc(N, sizeof *r0), *r1 = calloc(N, sizeof *r1);
    assert_non_null(r0);
    assert_non_null(r1);
    for (size_t i = 0; i < N; i++) {
        r0[i].kind = i % 2 ? MW_TK_SEND : MW_TK_COLL;
        r0[i].fn = MW_ID_Send;
        r0[i].comm = 1;
        r0[i].peer = 1;
        r0[i].seq = i % 2 ? i / 2 : 0; /* every collective record the same instance */
        r0[i].start_ns = (int64_t)i;
        r1[i].kind = i % 2 ? MW_TK_RECV : MW_TK_SEND;
        r1[i].fn = MW_ID_Recv;
        r1[i].comm = 1;
        r1[i].peer = 0;
        r1[i].seq = i % 2 ? (N / 2 - 1 - i / 2) : 7; /* matched in reverse: a long cycle */
        r1[i].start_ns = (int64_t)i;
    }
    mw_logical_rank_t rk[2] = {{0, r0, N}, {1, r1, N}};
    clock_t c0 = clock();
    for (uint32_t flags = 0; flags <= MW_LOGICAL_LEAP; flags++) {
        mw_logical_stream_t *s = stream(flags);
        mw_logical_batch_t out;
        assert_int_equal(mw_logical_stream_push(s, 0, 0, rk, 2, &out), 0);
        mw_logical_batch_free(&out);
        assert_int_equal(mw_logical_stream_gap(s, &out), 0);
        assert_int_equal(out.nevents, 2 * N);
        mw_logical_batch_free(&out);
        mw_logical_stream_free(s);
    }
    double secs = (double)(clock() - c0) / CLOCKS_PER_SEC;
    assert_true(secs < 20.0);
    free(r0);
    free(r1);
}

/* ---- an independent brute-force reference ---------------------------------------------- */

/* Random programs of blocking sends, receives, pairwise exchanges and collectives of all ranks,
 * with random computation between the calls, simulated so that every receive ends after its
 * send. The reference applies the definitions of docs/logical.md (without the leap merge) in
 * the plainest way: quadratic matching and partition merging, reachability for the cycles,
 * relaxation to a fixpoint for the steps. Every event must get the same step, lateness,
 * differential lateness, class and computation before. */
#define RF_MAX 400

typedef struct {
    int rank, idx; /* idx: position among the rank's events */
    int kind;      /* MW_LE_* */
    int peer, tag;
    uint64_t seq;
    int64_t start, end;
    int part, node, msg, prev;
    uint64_t local, step;
    int64_t late, slate, diff, comp;
    int cls;
} rf_ev_t;

typedef struct {
    rf_ev_t e[RF_MAX];
    int n;
} rf_t;

static void rf_gen(bld_t *b, int R, uint64_t seed, int rounds)
{
    uint64_t x = seed;
    int64_t clk[NR] = {0};
    for (int k = 0; k < rounds; k++) {
        int type = (int)(rng_next(&x) % 3);
        if (type == 0) { /* a few messages between random ranks */
            int m = 1 + (int)(rng_next(&x) % 4);
            for (int i = 0; i < m; i++) {
                int src = (int)(rng_next(&x) % (uint64_t)R);
                int dst = (int)((src + 1 + (int)(rng_next(&x) % (uint64_t)(R - 1))) % R);
                int64_t s0 = clk[src] + (int64_t)(rng_next(&x) % 500);
                b_send(b, src, s0, 100, dst, 0);
                clk[src] = s0 + 100;
                int64_t r0 = clk[dst] + (int64_t)(rng_next(&x) % 500);
                int64_t r1 = r0 + 50 > s0 + 130 ? r0 + 50 : s0 + 130;
                b_recv(b, dst, r0, (uint64_t)(r1 - r0), src, 0);
                clk[dst] = r1;
            }
        } else if (type == 1) { /* a pairwise exchange: both send, then both receive */
            int a = (int)(rng_next(&x) % (uint64_t)R);
            int c = (int)((a + 1 + (int)(rng_next(&x) % (uint64_t)(R - 1))) % R);
            int64_t sa = clk[a] + (int64_t)(rng_next(&x) % 500);
            int64_t sc = clk[c] + (int64_t)(rng_next(&x) % 500);
            b_send(b, a, sa, 100, c, 1);
            b_send(b, c, sc, 100, a, 1);
            int64_t ea = sa + 150 > sc + 130 ? sa + 150 : sc + 130;
            int64_t ec = sc + 150 > sa + 130 ? sc + 150 : sa + 130;
            b_recv(b, a, sa + 100, (uint64_t)(ea - sa - 100), c, 1);
            b_recv(b, c, sc + 100, (uint64_t)(ec - sc - 100), a, 1);
            clk[a] = ea;
            clk[c] = ec;
        } else { /* a collective of all ranks */
            int64_t st[NR], last = 0;
            for (int r = 0; r < R; r++) {
                st[r] = clk[r] + (int64_t)(rng_next(&x) % 800);
                if (st[r] > last)
                    last = st[r];
            }
            for (int r = 0; r < R; r++) {
                int64_t e = last + 100 + (int64_t)(rng_next(&x) % 40);
                b_coll(b, r, st[r], (uint64_t)(e - st[r]), MW_ID_Allreduce, 0);
                clk[r] = e;
            }
        }
    }
}

static void rf_build(rf_t *f, const bld_t *b, int R)
{
    f->n = 0;
    for (int r = 0; r < R; r++) {
        int idx = 0;
        for (size_t i = 0; i < b->n[r]; i++) {
            const mw_trace_rec_t *q = &b->r[r][i];
            assert_true(f->n < RF_MAX);
            rf_ev_t *e = &f->e[f->n];
            memset(e, 0, sizeof *e);
            e->rank = r;
            e->idx = idx++;
            e->kind = q->kind == MW_TK_SEND   ? MW_LE_SEND
                      : q->kind == MW_TK_RECV ? MW_LE_RECV
                                              : MW_LE_COLL;
            e->peer = q->peer;
            e->tag = q->tag;
            e->seq = q->seq;
            e->start = q->start_ns;
            e->end = q->start_ns + (int64_t)q->dur_ns;
            e->prev = idx > 1 ? f->n - 1 : -1;
            e->msg = -1;
            e->part = f->n;
            e->node = f->n;
            f->n++;
        }
    }
}

static void rf_relabel(rf_t *f, int from, int to)
{
    for (int i = 0; i < f->n; i++)
        if (f->e[i].part == from)
            f->e[i].part = to;
}

static void rf_solve(rf_t *f)
{
    int n = f->n;
    /* matching and initial partitions */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            rf_ev_t *a = &f->e[i], *c = &f->e[j];
            if (a->kind == MW_LE_SEND && c->kind == MW_LE_RECV && a->peer == c->rank &&
                c->peer == a->rank && a->tag == c->tag && a->seq == c->seq) {
                a->msg = j;
                c->msg = i;
                if (a->part != c->part)
                    rf_relabel(f, c->part, a->part);
            }
            if (i < j && a->kind == MW_LE_COLL && c->kind == MW_LE_COLL && a->seq == c->seq) {
                c->node = a->node < c->node ? a->node : c->node;
                if (a->part != c->part)
                    rf_relabel(f, c->part, a->part);
            }
        }
    /* cycles: partitions that reach each other through ranks' orders become one */
    static uint8_t reach[RF_MAX][RF_MAX];
    for (;;) {
        memset(reach, 0, sizeof reach);
        for (int i = 0; i < n; i++)
            if (f->e[i].prev >= 0 && f->e[f->e[i].prev].part != f->e[i].part)
                reach[f->e[f->e[i].prev].part][f->e[i].part] = 1;
        for (int k = 0; k < n; k++)
            for (int i = 0; i < n; i++)
                if (reach[i][k])
                    for (int j = 0; j < n; j++)
                        if (reach[k][j])
                            reach[i][j] = 1;
        int merged = 0;
        for (int i = 0; i < n && !merged; i++)
            for (int j = 0; j < n && !merged; j++)
                if (i != j && reach[i][j] && reach[j][i]) {
                    rf_relabel(f, j, i);
                    merged = 1;
                }
        if (!merged)
            break;
    }
    /* local steps: relaxation until nothing changes */
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < n; i++) {
            rf_ev_t *e = &f->e[i];
            uint64_t want = f->e[e->node].local;
            if (e->prev >= 0 && f->e[e->prev].part == e->part &&
                f->e[f->e[e->prev].node].local + 1 > want)
                want = f->e[f->e[e->prev].node].local + 1;
            if (e->kind == MW_LE_RECV && e->msg >= 0 && f->e[f->e[e->msg].node].local + 1 > want)
                want = f->e[f->e[e->msg].node].local + 1;
            if (want != f->e[e->node].local) {
                f->e[e->node].local = want;
                changed = 1;
            }
        }
    }
    for (int i = 0; i < n; i++)
        f->e[i].local = f->e[f->e[i].node].local;
    /* partitions in any topological order: one whose events' rank predecessors are all done */
    static uint8_t done[RF_MAX];
    memset(done, 0, sizeof done);
    int64_t laststep[NR];
    int has[NR] = {0};
    for (int left = 1; left;) {
        left = 0;
        int p = -1;
        for (int i = 0; i < n && p < 0; i++) {
            if (done[i])
                continue;
            int q = f->e[i].part, ok = 1;
            for (int j = 0; j < n; j++)
                if (f->e[j].part == q && f->e[j].prev >= 0 && f->e[f->e[j].prev].part != q &&
                    !done[f->e[j].prev])
                    ok = 0;
            if (ok)
                p = q;
        }
        if (p < 0)
            break;
        left = 1;
        uint64_t off = 0;
        for (int j = 0; j < n; j++) {
            rf_ev_t *e = &f->e[j];
            if (e->part != p || (e->prev >= 0 && f->e[e->prev].part == p) || !has[e->rank])
                continue;
            if ((int64_t)laststep[e->rank] + 1 - (int64_t)e->local > (int64_t)off)
                off = (uint64_t)((int64_t)laststep[e->rank] + 1 - (int64_t)e->local);
        }
        for (int j = 0; j < n; j++)
            if (f->e[j].part == p) {
                f->e[j].step = off + f->e[j].local;
                done[j] = 1;
                if (!has[f->e[j].rank] || (int64_t)f->e[j].step > laststep[f->e[j].rank])
                    laststep[f->e[j].rank] = (int64_t)f->e[j].step;
                has[f->e[j].rank] = 1;
            }
        /* lateness at (partition, step) */
        for (int j = 0; j < n; j++) {
            rf_ev_t *e = &f->e[j];
            if (e->part != p)
                continue;
            int64_t me = INT64_MAX, ms = INT64_MAX;
            for (int k = 0; k < n; k++)
                if (f->e[k].part == p && f->e[k].step == e->step) {
                    me = f->e[k].end < me ? f->e[k].end : me;
                    ms = f->e[k].start < ms ? f->e[k].start : ms;
                }
            e->late = e->end - me;
            e->slate = e->start - ms;
        }
    }
    for (int i = 0; i < n; i++)
        assert_true(done[i]);
    for (int i = 0; i < n; i++) {
        rf_ev_t *e = &f->e[i];
        int64_t P = e->prev >= 0 ? f->e[e->prev].late : 0;
        int64_t M = e->kind == MW_LE_RECV && e->msg >= 0 ? f->e[e->msg].late : 0;
        int64_t I = P > M ? P : M;
        e->diff = e->late - I > 0 ? e->late - I : 0;
        e->comp = e->prev >= 0 && e->start > f->e[e->prev].end ? e->start - f->e[e->prev].end : 0;
        e->cls = e->late == 0   ? MW_LATE_NONE
                 : e->diff == 0 ? (M > P ? MW_LATE_MESSAGE : MW_LATE_RANK)
                 : e->slate > I ? MW_LATE_COMPUTE
                                : MW_LATE_CALL;
    }
}

static void test_reference(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        bld_t *b = bld_new();
        int R = 2 + (int)(seed % 5);
        rf_gen(b, R, seed, 8 + (int)(seed % 12));
        static rf_t f;
        rf_build(&f, b, R);
        rf_solve(&f);
        int64_t t_end = 0;
        for (int i = 0; i < f.n; i++)
            t_end = f.e[i].end + 1 > t_end ? f.e[i].end + 1 : t_end;
        for (int split = 0; split < 2; split++) {
            mw_logical_stream_t *s = stream(0);
            acc_t a = {0};
            if (!split) {
                push_range(s, b, R, 0, 0, t_end, &a);
            } else {
                uint64_t w = 0;
                int64_t len = t_end / 6 + 1;
                for (int64_t t = 0; t < t_end; t += len)
                    push_range(s, b, R, w++, t, t + len, &a);
            }
            gap(s, &a);
            check_order(&a);
            mw_logical_stats_t st;
            mw_logical_stream_stats(s, &st);
            assert_int_equal(st.unmatched, 0);
            assert_int_equal(st.forced, 0);
            assert_int_equal((int)a.n, f.n);
            for (int i = 0; i < f.n; i++) {
                const rf_ev_t *e = &f.e[i];
                const mw_logical_event_t *g = ev(&a, (uint32_t)e->rank, e->idx);
                assert_int_equal(g->kind, e->kind);
                assert_int_equal(g->start_ns, e->start);
                assert_int_equal(g->step, e->step);
                assert_int_equal(g->lateness_ns, e->late);
                assert_int_equal(g->diff_ns, e->diff);
                assert_int_equal(g->cls, e->cls);
                assert_int_equal(g->comp_before_ns, e->comp);
            }
            acc_free(&a);
            mw_logical_stream_free(s);
        }
        free(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_delay),
        cmocka_unit_test(test_stencil_slow),
        cmocka_unit_test(test_tree_leap),
        cmocka_unit_test(test_tree_no_leap),
        cmocka_unit_test(test_collectives_mixed),
        cmocka_unit_test(test_collective_open),
        cmocka_unit_test(test_icoll_done_kept),
        cmocka_unit_test(test_wildcard),
        cmocka_unit_test(test_late_open),
        cmocka_unit_test(test_noise_floor),
        cmocka_unit_test(test_cycle),
        cmocka_unit_test(test_split_windows),
        cmocka_unit_test(test_window_cap),
        cmocka_unit_test(test_unmatched_wait),
        cmocka_unit_test(test_event_cap),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_adversarial),
        cmocka_unit_test(test_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
