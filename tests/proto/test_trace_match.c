/* test_trace_match.c: the matcher of sends and receives and the grouping of collective
 * instances (proto/mw_trace_match.c).
 *
 * A hand-made exchange of 3 ranks on two communicators: receives from MPI_ANY_SOURCE already
 * resolved by the shim (RECV_DONE with the actual source and tag), blocking and non-blocking
 * sends, a Sendrecv (its receive half flagged PART), posts of receives (never matched), a send
 * to MPI_PROC_NULL, a record still open: every message matched to the right record and nothing
 * else. Then duplicates (a channel index twice on one side), unmatched sends and receives,
 * collectives consistent and not (another function, another root, a rank twice), completions
 * of non-blocking collectives left out of the groups, and a large adversarial input (every
 * record on one key) that must stay fast.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mw_proto.h"
#include "mw_trace.h"

#define COMM_A 0x1111222233334444ull

static mw_trace_rec_t rec(uint8_t kind, uint16_t fn, uint64_t comm, int32_t peer, int32_t tag,
                          uint64_t seq)
{
    mw_trace_rec_t r;
    memset(&r, 0, sizeof r);
    r.kind = kind;
    r.fn = fn;
    r.comm = comm;
    r.peer = peer;
    r.tag = tag;
    r.seq = seq;
    return r;
}

/* Whether m holds the message (send part/rec, recv part/rec). */
static int has_msg(const mw_trace_matches_t *m, uint32_t sp, uint32_t sr, uint32_t rp, uint32_t rr)
{
    for (size_t i = 0; i < m->nmsgs; i++)
        if (m->msgs[i].send_part == sp && m->msgs[i].send_rec == sr && m->msgs[i].recv_part == rp &&
            m->msgs[i].recv_rec == rr)
            return 1;
    return 0;
}

static void test_three_ranks(void **state)
{
    (void)state;
    const uint64_t W = MW_COMM_ID_WORLD;
    /* rank 0: sends 2 messages to rank 1 (tag 5, indices 0 and 1), receives one from rank 2
     * with an Irecv from MPI_ANY_SOURCE (post, then completion with the actual source), and
     * sends to MPI_PROC_NULL. */
    mw_trace_rec_t r0[] = {
        rec(MW_TK_SEND, MW_ID_Send, W, 1, 5, 0),                         /* 0 -> r1[1] */
        rec(MW_TK_ISEND, MW_ID_Isend, W, 1, 5, 1),                       /* 1 -> r1[2] */
        rec(MW_TK_IRECV, MW_ID_Irecv, W, MW_TRACE_ANY, MW_TRACE_ANY, 0), /* 2: a post */
        rec(MW_TK_RECV_DONE, MW_ID_Waitany, W, 2, 9, 0),                 /* 3 <- r2[0] */
        rec(MW_TK_SEND, MW_ID_Send, W, -1, 5, 0),                        /* 4: PROC_NULL */
        rec(MW_TK_SEND_DONE, MW_ID_Wait, W, 1, 5, 1),                    /* 5: not a send */
        rec(MW_TK_SEND, MW_ID_Send, COMM_A, 2, 5, 0),                    /* 6 -> r2[2] (comm A) */
    };
    r0[4].flags = MW_TF_PROC_NULL;
    /* rank 1: receives both from rank 0 (the second through MPI_ANY_SOURCE, resolved), and does
     * a Sendrecv with rank 2: send to 2 (tag 3), receive from 2 (tag 4). */
    mw_trace_rec_t r1[] = {
        rec(MW_TK_IRECV, MW_ID_Irecv, W, MW_TRACE_ANY, 5, 0), /* 0: a post */
        rec(MW_TK_RECV, MW_ID_Recv, W, 0, 5, 0),              /* 1 <- r0[0] */
        rec(MW_TK_RECV_DONE, MW_ID_Wait, W, 0, 5, 1),         /* 2 <- r0[1] */
        rec(MW_TK_SEND, MW_ID_Sendrecv, W, 2, 3, 0),          /* 3 -> r2[1] */
        rec(MW_TK_RECV, MW_ID_Sendrecv, W, 2, 4, 0),          /* 4 <- r2[3] */
        rec(MW_TK_RECV, MW_ID_Recv, W, 2, 5, 0),              /* 5: no such send: unmatched */
    };
    r1[4].flags = MW_TF_PART;
    /* rank 2: sends to rank 0 (tag 9), receives rank 1's Sendrecv message, receives on comm A
     * from rank 0, sends to rank 1 (tag 4), and has an open receive. */
    mw_trace_rec_t r2[] = {
        rec(MW_TK_SEND, MW_ID_Send, W, 0, 9, 0),      /* 0 -> r0[3] */
        rec(MW_TK_RECV, MW_ID_Recv, W, 1, 3, 0),      /* 1 <- r1[3] */
        rec(MW_TK_RECV, MW_ID_Recv, COMM_A, 0, 5, 0), /* 2 <- r0[6] */
        rec(MW_TK_SEND, MW_ID_Send, W, 1, 4, 0),      /* 3 -> r1[4] */
        rec(MW_TK_RECV, MW_ID_Recv, W, 1, 3, 1),      /* 4: open, left out */
        rec(MW_TK_SEND, MW_ID_Send, W, 1, 3, 7),      /* 5: rank 1 never got it: unmatched */
    };
    r2[4].flags = MW_TF_OPEN;
    /* parts in another order than their ranks, to show ranks come from the parts */
    mw_trace_part_t parts[] = {{.rank = 2, .recs = r2, .n = 6},
                               {.rank = 0, .recs = r0, .n = 7},
                               {.rank = 1, .recs = r1, .n = 6}};
    mw_trace_matches_t m;
    assert_int_equal(mw_trace_match(parts, 3, &m), 0);
    assert_int_equal(m.nmsgs, 6);
    assert_true(has_msg(&m, 1, 0, 2, 1));
    assert_true(has_msg(&m, 1, 1, 2, 2));
    assert_true(has_msg(&m, 0, 0, 1, 3));
    assert_true(has_msg(&m, 1, 6, 0, 2));
    assert_true(has_msg(&m, 2, 3, 0, 1));
    assert_true(has_msg(&m, 0, 3, 2, 4));
    assert_true(has_msg(&m, 2, 0, 0, 2) == 0); /* sanity of has_msg */
    assert_int_equal(m.sends_unmatched, 1);
    assert_int_equal(m.recvs_unmatched, 1);
    assert_int_equal(m.duplicates, 0);
    assert_int_equal(m.ncolls, 0);
    mw_trace_matches_free(&m);
    assert_null(m.msgs);

    /* the same with the ranks of two parts swapped: nothing matches where it did */
    parts[0].rank = 0;
    parts[1].rank = 2;
    assert_int_equal(mw_trace_match(parts, 3, &m), 0);
    assert_false(has_msg(&m, 1, 0, 2, 1));
    assert_true(m.nmsgs < 6);
    mw_trace_matches_free(&m);
}

static void test_duplicates(void **state)
{
    (void)state;
    const uint64_t W = MW_COMM_ID_WORLD;
    mw_trace_rec_t a[] = {
        rec(MW_TK_SEND, MW_ID_Send, W, 1, 0, 4),
        rec(MW_TK_ISEND, MW_ID_Isend, W, 1, 0, 4), /* the same index twice */
        rec(MW_TK_SEND, MW_ID_Send, W, 1, 0, 5),
    };
    mw_trace_rec_t b[] = {
        rec(MW_TK_RECV, MW_ID_Recv, W, 0, 0, 4),
        rec(MW_TK_RECV, MW_ID_Recv, W, 0, 0, 5),
        rec(MW_TK_RECV_DONE, MW_ID_Wait, W, 0, 0, 5), /* twice on the receiving side */
        rec(MW_TK_RECV, MW_ID_Recv, W, 0, 0, 6),
    };
    mw_trace_part_t parts[] = {{.rank = 0, .recs = a, .n = 3}, {.rank = 1, .recs = b, .n = 4}};
    mw_trace_matches_t m;
    assert_int_equal(mw_trace_match(parts, 2, &m), 0);
    assert_int_equal(m.nmsgs, 0);
    assert_int_equal(m.duplicates, 4);
    assert_int_equal(m.sends_unmatched, 1);
    assert_int_equal(m.recvs_unmatched, 2);
    mw_trace_matches_free(&m);

    /* one window given twice: every message is a duplicate, none matched */
    mw_trace_rec_t s[] = {rec(MW_TK_SEND, MW_ID_Send, W, 1, 0, 0)};
    mw_trace_rec_t r[] = {rec(MW_TK_RECV, MW_ID_Recv, W, 0, 0, 0)};
    mw_trace_part_t twice[] = {{.rank = 0, .recs = s, .n = 1},
                               {.rank = 1, .recs = r, .n = 1},
                               {.rank = 0, .recs = s, .n = 1}};
    assert_int_equal(mw_trace_match(twice, 3, &m), 0);
    assert_int_equal(m.nmsgs, 0);
    assert_int_equal(m.duplicates, 2);
    assert_int_equal(m.recvs_unmatched, 1);
    mw_trace_matches_free(&m);
    assert_int_equal(mw_trace_match(twice, 2, &m), 0);
    assert_int_equal(m.nmsgs, 1);
    mw_trace_matches_free(&m);
}

static void test_collectives(void **state)
{
    (void)state;
    const uint64_t W = MW_COMM_ID_WORLD;
    /* instance 0: Allreduce everywhere; 1: Bcast root 2 on ranks 0 and 1, root 1 on rank 2;
     * 2: Barrier on ranks 0 and 1, Reduce on rank 2; 3: Ibcast posted everywhere (its
     * completions are not members); instance 0 of comm A: rank 1 twice. */
    mw_trace_rec_t c[3][6];
    for (int k = 0; k < 3; k++) {
        c[k][0] = rec(MW_TK_COLL, MW_ID_Allreduce, W, -1, 0, 0);
        c[k][1] = rec(MW_TK_COLL, MW_ID_Bcast, W, k == 2 ? 1 : 2, 0, 1);
        c[k][2] = k == 2 ? rec(MW_TK_COLL, MW_ID_Reduce, W, -1, 0, 2)
                         : rec(MW_TK_COLL, MW_ID_Barrier, W, -1, 0, 2);
        c[k][3] = rec(MW_TK_ICOLL, MW_ID_Ibcast, W, 0, 0, 3);
        c[k][4] = rec(MW_TK_COLL_DONE, MW_ID_Wait, W, 0, 0, 3);
        c[k][5] = rec(MW_TK_COLL, MW_ID_Barrier, COMM_A, -1, 0, 0);
    }
    mw_trace_part_t parts[] = {{.rank = 0, .recs = c[0], .n = 6},
                               {.rank = 1, .recs = c[1], .n = 6},
                               {.rank = 2, .recs = c[2], .n = 5},
                               {.rank = 1, .recs = &c[1][5], .n = 1}};
    mw_trace_matches_t m;
    assert_int_equal(mw_trace_match(parts, 4, &m), 0);
    assert_int_equal(m.nmsgs, 0);
    assert_int_equal(m.ncolls, 5);
    assert_int_equal(m.coll_inconsistent, 3);
    int seen = 0;
    for (size_t i = 0; i < m.ncolls; i++) {
        const mw_trace_coll_t *g = &m.colls[i];
        if (g->comm == COMM_A) {
            assert_int_equal(g->n, 3); /* ranks 0, 1 and 1 again */
            assert_false(g->consistent);
            seen |= 16;
            continue;
        }
        assert_int_equal(g->comm, W);
        assert_int_equal(g->n, 3);
        /* every member's record is of this instance, one per part */
        unsigned parts_seen = 0;
        for (uint32_t j = 0; j < g->n; j++) {
            uint32_t p = m.coll_members[2 * ((size_t)g->first + j)];
            uint32_t r = m.coll_members[2 * ((size_t)g->first + j) + 1];
            assert_true(p < 3);
            assert_int_equal(parts[p].recs[r].seq, g->seq);
            assert_int_not_equal(parts[p].recs[r].kind, MW_TK_COLL_DONE);
            parts_seen |= 1u << p;
        }
        assert_int_equal(parts_seen, 7);
        switch (g->seq) {
        case 0:
            assert_true(g->consistent);
            assert_int_equal(g->fn, MW_ID_Allreduce);
            seen |= 1;
            break;
        case 1:
            assert_false(g->consistent); /* another root */
            seen |= 2;
            break;
        case 2:
            assert_false(g->consistent); /* another function */
            seen |= 4;
            break;
        case 3:
            assert_true(g->consistent);
            assert_int_equal(g->fn, MW_ID_Ibcast);
            seen |= 8;
            break;
        default:
            fail();
        }
    }
    assert_int_equal(seen, 31);
    mw_trace_matches_free(&m);
}

/* An attacker's records: all on one channel and index, or all on one collective instance.
 * Sorting keeps it O(n log n): 400,000 records well under the test's time. */
static void test_adversarial(void **state)
{
    (void)state;
    enum { N = 200000 };
    mw_trace_rec_t *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    for (size_t i = 0; i < N; i++) {
        a[i] = rec(MW_TK_SEND, MW_ID_Send, 7, 1, 0, 0);
        b[i] = rec(i % 2 ? MW_TK_RECV : MW_TK_COLL, MW_ID_Recv, 7, 0, 0, 0);
    }
    mw_trace_part_t parts[] = {{.rank = 0, .recs = a, .n = N}, {.rank = 1, .recs = b, .n = N}};
    mw_trace_matches_t m;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(mw_trace_match(parts, 2, &m), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    print_message("400,000 records on one key: %.3f s\n", s);
    assert_true(s < 5.0);
    assert_int_equal(m.nmsgs, 0);
    assert_int_equal(m.duplicates, N + N / 2);
    assert_int_equal(m.ncolls, 1);
    assert_int_equal(m.colls[0].n, N / 2);
    assert_false(m.colls[0].consistent); /* rank 1 many times */
    mw_trace_matches_free(&m);
    free(a);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_three_ranks),
        cmocka_unit_test(test_duplicates),
        cmocka_unit_test(test_collectives),
        cmocka_unit_test(test_adversarial),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
