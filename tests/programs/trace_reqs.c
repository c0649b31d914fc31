/* trace_reqs.c: requests whose completions the per-call trace must credit to the right post
 * (docs/trace.md "Records and communicators"; tests/integration/trace_reqs.sh checks the
 * records). At least 2 ranks; MPI_ERRORS_RETURN on MPI_COMM_WORLD.
 *
 * Ranks 0 and 1 (rank 1 sends, rank 0 receives):
 * - tag 7: a receive whose MPI_Wait fails with MPI_ERR_TRUNCATE, then receives tags 10..12
 *   (Irecv/Wait) that get the freed handle again;
 * - tag 8: a truncated receive beside a good one (tag 13) completed by MPI_Waitany, then
 *   tag 14 (Irecv/Wait);
 * - tag 15: a truncated receive completed by MPI_Test, then tag 16 (Irecv/Wait);
 * - tag 20 (with MPI_THREAD_MULTIPLE only): a receive posted on the main thread and waited for
 *   on another thread, then tags 21..23 (Irecv/Wait) on the main thread.
 * Posts with tags 7, 8, 15 and 20 must have no completion record, every other post exactly one.
 * Every rank: BIG_CALLS rounds of 2 * BIG_N requests to itself (receives tags 1000.., then
 * sends), completed by one Waitall/Testall (Issend, Isend, Issend with the application's
 * statuses, Issend by a Testall loop) or by loops of Waitany (Issend), Waitsome (Isend, the
 * application's statuses), Testany (Isend) and Testsome (Issend, MPI_STATUSES_IGNORE).
 * The application checks every return code and buffer it sees; its last line is
 * "trace_reqs: N ranks, ok". */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define BIG_N 200
#define BIG_CALLS 8

static int failures;

static void expect(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "trace_reqs: %s\n", what);
        failures++;
    }
}

static int err_class(int rc)
{
    int c = MPI_SUCCESS;
    MPI_Error_class(rc, &c);
    return c;
}

/* Rank 0: Irecv of 4 ints with `tag` from rank 1, completed by MPI_Wait; n ints expected. */
static void recv_wait(int tag, int n)
{
    int buf[4] = {0};
    MPI_Request q;
    MPI_Status st;
    expect(MPI_Irecv(buf, 4, MPI_INT, 1, tag, MPI_COMM_WORLD, &q) == MPI_SUCCESS, "Irecv");
    expect(MPI_Wait(&q, &st) == MPI_SUCCESS, "Wait after a failed completion");
    int c = -1;
    MPI_Get_count(&st, MPI_INT, &c);
    expect(c == n && st.MPI_TAG == tag && buf[0] == tag, "a receive's status or data");
}

static void send_n(int tag, int n)
{
    int buf[4] = {tag, tag, tag, tag};
    MPI_Send(buf, n, MPI_INT, 0, tag, MPI_COMM_WORLD);
}

static MPI_Request xq;
static int xrc;

static void *waiter(void *p)
{
    (void)p;
    xrc = MPI_Wait(&xq, MPI_STATUS_IGNORE);
    return NULL;
}

static void pair_part(int me, int threads)
{
    if (me == 1) {
        send_n(7, 4);
        for (int i = 0; i < 3; i++)
            send_n(10 + i, 1 + i);
        send_n(8, 4);
        send_n(13, 2);
        send_n(14, 3);
        send_n(15, 4);
        send_n(16, 1);
        if (threads)
            for (int i = 0; i < 4; i++)
                send_n(20 + i, 1 + i);
        return;
    }
    int small[1], b[4];
    MPI_Request q, qs[2];
    /* A failed MPI_Wait, then the freed handle again. */
    MPI_Irecv(small, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &q);
    expect(err_class(MPI_Wait(&q, MPI_STATUS_IGNORE)) == MPI_ERR_TRUNCATE, "Wait: truncation");
    for (int i = 0; i < 3; i++)
        recv_wait(10 + i, 1 + i);
    /* A failed request in MPI_Waitany (Open MPI 4.1's MPI_Waitall hangs on a truncated
     * receive). */
    MPI_Irecv(small, 1, MPI_INT, 1, 8, MPI_COMM_WORLD, &qs[0]);
    MPI_Irecv(b, 4, MPI_INT, 1, 13, MPI_COMM_WORLD, &qs[1]);
    int trunc = 0, good = 0;
    for (int k = 0; k < 2; k++) {
        int idx = -1, rc = MPI_Waitany(2, qs, &idx, MPI_STATUS_IGNORE);
        trunc += idx == 0 && err_class(rc) == MPI_ERR_TRUNCATE;
        good += idx == 1 && rc == MPI_SUCCESS;
    }
    expect(trunc == 1 && good == 1 && b[0] == 13, "Waitany: truncation, then the good one");
    recv_wait(14, 3);
    /* A failed MPI_Test. */
    MPI_Irecv(small, 1, MPI_INT, 1, 15, MPI_COMM_WORLD, &q);
    int flag = 0, rc = MPI_SUCCESS;
    while (!flag && rc == MPI_SUCCESS)
        rc = MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
    expect(err_class(rc) == MPI_ERR_TRUNCATE, "Test: truncation");
    recv_wait(16, 1);
    /* A request completed on another thread. */
    if (threads) {
        int xb[4] = {0};
        MPI_Irecv(xb, 4, MPI_INT, 1, 20, MPI_COMM_WORLD, &xq);
        pthread_t t;
        expect(pthread_create(&t, NULL, waiter, NULL) == 0, "pthread_create");
        pthread_join(t, NULL);
        expect(xrc == MPI_SUCCESS && xb[0] == 20, "the other thread's Wait");
        for (int i = 1; i < 4; i++)
            recv_wait(20 + i, 1 + i);
    }
}

/* Variants 4..7: the 2 * BIG_N requests of rq completed by a loop of Waitany, Waitsome,
 * Testany or Testsome; st[i] gets request i's status (4, 5). */
static int big_some(int variant, MPI_Request *rq, MPI_Status *st)
{
    static int idx[2 * BIG_N];
    static MPI_Status sst[2 * BIG_N];
    int left = 2 * BIG_N, rc = MPI_SUCCESS;
    while (left > 0 && rc == MPI_SUCCESS) {
        int i = MPI_UNDEFINED, n = 0, flag = 0;
        MPI_Status one;
        switch (variant) {
        case 4:
            rc = MPI_Waitany(2 * BIG_N, rq, &i, &one);
            if (rc == MPI_SUCCESS && i != MPI_UNDEFINED)
                st[i] = one, n = 1;
            break;
        case 5:
            rc = MPI_Waitsome(2 * BIG_N, rq, &n, idx, sst);
            for (int k = 0; rc == MPI_SUCCESS && k < n; k++)
                st[idx[k]] = sst[k];
            break;
        case 6:
            rc = MPI_Testany(2 * BIG_N, rq, &i, &flag, MPI_STATUS_IGNORE);
            n = flag && i != MPI_UNDEFINED;
            break;
        default:
            rc = MPI_Testsome(2 * BIG_N, rq, &n, idx, MPI_STATUSES_IGNORE);
            break;
        }
        /* No active request left while some are still counted: a wrong index or count. */
        int none = n == MPI_UNDEFINED || ((variant == 4 || flag) && i == MPI_UNDEFINED);
        expect(!none, "big Waitany/-some: no request left");
        if (none)
            break;
        left -= n;
    }
    return rc;
}

/* One call on 2 * BIG_N requests to this rank itself (more than the shim's 256 exact ones). */
static void big_call(int me, int variant)
{
    static int sb[BIG_N], rb[BIG_N];
    static MPI_Request rq[2 * BIG_N];
    static MPI_Status st[2 * BIG_N];
    for (int i = 0; i < BIG_N; i++) {
        sb[i] = i + variant * BIG_N;
        rb[i] = -1;
        MPI_Irecv(&rb[i], 1, MPI_INT, me, 1000 + i, MPI_COMM_WORLD, &rq[i]);
    }
    for (int i = 0; i < BIG_N; i++) {
        if (variant == 1 || variant == 5 || variant == 6)
            MPI_Isend(&sb[i], 1, MPI_INT, me, 1000 + i, MPI_COMM_WORLD, &rq[BIG_N + i]);
        else
            MPI_Issend(&sb[i], 1, MPI_INT, me, 1000 + i, MPI_COMM_WORLD, &rq[BIG_N + i]);
    }
    int rc;
    if (variant == 3) {
        int flag = 0;
        do
            rc = MPI_Testall(2 * BIG_N, rq, &flag, MPI_STATUSES_IGNORE);
        while (rc == MPI_SUCCESS && !flag);
    } else if (variant >= 4) {
        rc = big_some(variant, rq, st);
    } else {
        rc = MPI_Waitall(2 * BIG_N, rq, variant == 2 ? st : MPI_STATUSES_IGNORE);
    }
    expect(rc == MPI_SUCCESS, "big Waitall/Testall/-any/-some");
    for (int i = 0; i < BIG_N; i++) {
        expect(rb[i] == i + variant * BIG_N, "big call: data");
        if (variant == 2 || variant == 4 || variant == 5)
            expect(st[i].MPI_TAG == 1000 + i && st[i].MPI_SOURCE == me, "big call: status");
    }
    for (int i = 0; i < 2 * BIG_N; i++)
        expect(rq[i] == MPI_REQUEST_NULL, "big call: a request left");
}

int main(int argc, char **argv)
{
    int prov = MPI_THREAD_SINGLE, me, np;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &prov);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np < 2) {
        fprintf(stderr, "trace_reqs: needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int threads = 0, mine = prov >= MPI_THREAD_MULTIPLE;
    MPI_Allreduce(&mine, &threads, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (me < 2)
        pair_part(me, threads);
    for (int v = 0; v < BIG_CALLS; v++)
        big_call(me, v);
    int bad = 0;
    MPI_Allreduce(&failures, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0) {
        printf("trace_reqs: threads %s\n", threads ? "multiple" : "not provided");
        if (!bad)
            printf("trace_reqs: %d ranks, ok\n", np);
        fflush(stdout);
    }
    MPI_Finalize();
    return bad ? 1 : 0;
}
