/* test_control.c: the steering request code shared by mpiwatch-steer and the viewer
 * (proto/mw_steer_request.c) and the viewer's steering client (viewer/control.c).
 *
 * DESIGN: the parsing tests state what a typed line means (key, value, ranks) for the prompt's
 * and --steer's separators, and what is refused with which words. The client is driven
 * against a ROUTER socket of the test's own on an ipc endpoint in a private directory, which
 * plays the collector: it checks what arrives and answers ok, refused, or not at all, and then
 * answers the request that was given up late, which the client must not take for the answer
 * to the next one.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <zmq.h>

#include "control.h"
#include "mw_proto.h"
#include "mw_steer_request.h"

static mw_steer_request_t rq;

static int parse(const char *line, char sep, char *err)
{
    return mw_steer_request_parse_line(&rq, line, sep, err, 300);
}

static void test_parse_line(void **state)
{
    (void)state;
    char err[300];
    assert_int_equal(parse("  rebalance=1 0-3,7  ", ' ', err), 0);
    assert_string_equal(rq.key, "rebalance");
    assert_string_equal(rq.value, "1");
    assert_int_equal(rq.n_ranks, 5);
    assert_int_equal(rq.ranks[3], 3);
    assert_int_equal(rq.ranks[4], 7);
    char text[200];
    mw_steer_request_text(&rq, text, sizeof text);
    assert_string_equal(text, "rebalance=1 ranks 0-3,7");
    /* A value with blanks; a last word that is not a rank list is part of it. */
    assert_int_equal(parse("app.msg=a b", ' ', err), 0);
    assert_string_equal(rq.value, "a b");
    assert_int_equal(rq.n_ranks, 0);
    assert_int_equal(parse("app.msg=count 3 all", ' ', err), 0);
    assert_string_equal(rq.value, "count 3");
    assert_int_equal(rq.n_ranks, 0);
    assert_int_equal(parse("app.msg=x 5-3", ' ', err), 0); /* not a range */
    assert_string_equal(rq.value, "x 5-3");
    assert_int_equal(parse("app.msg= 2", ' ', err), 0); /* an empty value for rank 2 */
    assert_string_equal(rq.value, "");
    assert_int_equal(rq.n_ranks, 1);
    /* --steer's form. */
    assert_int_equal(parse("app.msg=x:1", ':', err), 0);
    assert_string_equal(rq.value, "x");
    assert_int_equal(rq.n_ranks, 1);
    assert_int_equal(rq.ranks[0], 1);
    assert_int_equal(parse("url=http://h:80:all", ':', err), 0);
    assert_string_equal(rq.value, "http://h:80");
    assert_int_equal(rq.n_ranks, 0);
    assert_int_equal(parse("k=a:b", ':', err), 0);
    assert_string_equal(rq.value, "a:b");
    /* Refused, with mpiwatch-steer's words. */
    assert_int_equal(parse("bad key=1", ':', err), -1);
    assert_string_equal(err, "bad key 'bad key': the key may only contain A-Z a-z 0-9 . _ -");
    assert_int_equal(parse("novalue", ' ', err), -1);
    assert_string_equal(err, "expected KEY=VALUE, got 'novalue'");
    assert_int_equal(parse("=1", ' ', err), -1);
    assert_string_equal(err, "bad key: the key must have 1 to 64 characters");
    char big[1200];
    memset(big, 'v', sizeof big - 1);
    big[sizeof big - 1] = 0;
    memcpy(big, "k=", 2);
    assert_int_equal(parse(big, ' ', err), -1);
    assert_string_equal(err, "the value is longer than 1024 bytes");
    /* Rank lists. */
    uint32_t r[8];
    size_t n = 0;
    assert_int_equal(mw_steer_parse_ranks("2,0-1", r, &n, 8), 0);
    assert_int_equal(n, 3);
    assert_int_equal(mw_steer_parse_ranks("0-8", r, &n, 8), -1); /* 9 > max */
    assert_int_equal(mw_steer_parse_ranks("0-7", r, &n, 8), 0);
    static const char *const bad[] = {"", "1,", ",1", "a", "-1", "1--2", "1 2", " 1", "4294967296"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(mw_steer_parse_ranks(bad[i], r, &n, 8), -1);
}

/* The one rank-list parser (the collector's rules call it with blanks allowed) and the one key
 * check (the collector and the ranks call it too: where the refused byte is). */
typedef struct {
    uint32_t lo[8], hi[8];
    size_t n;
} ranges_t;

static int add_range(void *user, uint32_t lo, uint32_t hi)
{
    ranges_t *r = user;
    if (r->n == 8)
        return -1;
    r->lo[r->n] = lo;
    r->hi[r->n++] = hi;
    return 0;
}

static void test_rank_list_and_key(void **state)
{
    (void)state;
    ranges_t r = {0};
    assert_int_equal(mw_rank_list_parse(" 0 - 3 ,\t7 ", MW_RANKS_BLANKS, 16, add_range, &r), 0);
    assert_int_equal(r.n, 2);
    assert_int_equal(r.lo[0], 0);
    assert_int_equal(r.hi[0], 3);
    assert_int_equal(r.lo[1], 7);
    assert_int_equal(r.hi[1], 7);
    r.n = 0;
    assert_int_equal(mw_rank_list_parse("0 - 3", 0, 16, add_range, &r), -1); /* no blanks */
    r.n = 0;
    assert_int_equal(mw_rank_list_parse("15", MW_RANKS_BLANKS, 16, add_range, &r), 0);
    r.n = 0;
    assert_int_equal(mw_rank_list_parse("16", MW_RANKS_BLANKS, 16, add_range, &r), -1); /* limit */
    r.n = 0;
    assert_int_equal(mw_rank_list_parse("3-1", MW_RANKS_BLANKS, 16, add_range, &r), -1);
    r.n = 0;
    assert_int_equal(mw_rank_list_parse("1,2,3,4,5,6,7,8,9", 0, 16, add_range, &r), -1); /* add */
    static const char *const bad[] = {"", " ", "1,", ",1", "1 2", "+1", "1-", "1,,2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r.n = 0;
        assert_int_equal(mw_rank_list_parse(bad[i], MW_RANKS_BLANKS, 16, add_range, &r), -1);
    }

    size_t at = 99;
    assert_null(mw_steer_key_error("app.rebalance-1_x", &at));
    assert_non_null(mw_steer_key_error("ab/c", &at));
    assert_int_equal(at, 2);
    assert_non_null(mw_steer_key_error("", &at));
    assert_int_equal(at, 0);
    char long_key[66];
    memset(long_key, 'k', 65);
    long_key[65] = 0;
    assert_string_equal(mw_steer_key_error(long_key, &at), "the key must have 1 to 64 characters");
    assert_int_equal(at, 65);
    long_key[64] = 0;
    assert_null(mw_steer_key_error(long_key, NULL));
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The fake collector: receives one request (identity, body) within 2 s. */
static Mpiwatch__SteerRequest *router_recv(void *router, zmq_msg_t *id)
{
    zmq_pollitem_t it = {router, 0, ZMQ_POLLIN, 0};
    assert_true(zmq_poll(&it, 1, 2000) == 1);
    assert_int_equal(zmq_msg_init(id), 0);
    assert_true(zmq_msg_recv(id, router, 0) >= 0);
    assert_true(zmq_msg_more(id));
    zmq_msg_t body;
    assert_int_equal(zmq_msg_init(&body), 0);
    assert_true(zmq_msg_recv(&body, router, 0) >= 0);
    assert_false(zmq_msg_more(&body)); /* a DEALER: no delimiter frame */
    Mpiwatch__SteerRequest *r =
        mpiwatch__steer_request__unpack(NULL, zmq_msg_size(&body), zmq_msg_data(&body));
    zmq_msg_close(&body);
    assert_non_null(r);
    return r;
}

static void router_reply(void *router, zmq_msg_t *id, int ok, const char *error, uint64_t seq)
{
    Mpiwatch__SteerReply rep = MPIWATCH__STEER_REPLY__INIT;
    rep.ok = ok;
    rep.error = (char *)error;
    rep.seq = seq;
    uint8_t buf[256];
    size_t len = mpiwatch__steer_reply__pack(&rep, buf);
    assert_int_equal(zmq_msg_send(id, router, ZMQ_SNDMORE), (int)zmq_msg_size(id));
    assert_int_equal(zmq_send(router, buf, len, 0), (int)len);
}

/* Polls the client until its result is no longer "waiting" (at most 3 s). */
static const mw_control_result_t *settle(mw_control_t *c)
{
    uint64_t end = now_ns() + 3000000000ull;
    while (mw_control_busy(c) && now_ns() < end) {
        mw_control_wait(c, 20);
        mw_control_poll(c, now_ns());
    }
    return mw_control_result(c);
}

static void test_client(void **state)
{
    (void)state;
    char dir[] = "/tmp/mw-test-control-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char ep[128];
    snprintf(ep, sizeof ep, "ipc://%s/control", dir);
    void *ctx = zmq_ctx_new();
    void *router = zmq_socket(ctx, ZMQ_ROUTER);
    int zero = 0;
    assert_int_equal(zmq_setsockopt(router, ZMQ_LINGER, &zero, sizeof zero), 0);
    assert_int_equal(zmq_bind(router, ep), 0);

    char err[300];
    mw_control_t *c = mw_control_open(ep, 300, err, sizeof err);
    assert_non_null(c);
    assert_int_equal(mw_control_result(c)->state, MW_CONTROL_IDLE);

    /* Published. */
    assert_int_equal(mw_control_send(c, "rebalance=1 0-3", ' ', now_ns()), 0);
    assert_int_equal(mw_control_result(c)->state, MW_CONTROL_WAITING);
    /* One at a time: a second line waits for the first's answer. */
    assert_int_equal(mw_control_send(c, "other=2", ' ', now_ns()), -1);
    assert_int_equal(mw_control_result(c)->state, MW_CONTROL_WAITING);
    assert_non_null(strstr(mw_control_result(c)->text, "has no answer yet"));
    zmq_msg_t id;
    Mpiwatch__SteerRequest *r = router_recv(router, &id);
    assert_string_equal(r->key, "rebalance");
    assert_string_equal(r->value, "1");
    assert_int_equal(r->n_ranks, 4);
    mpiwatch__steer_request__free_unpacked(r, NULL);
    router_reply(router, &id, 1, "", 4);
    zmq_msg_close(&id);
    const mw_control_result_t *res = settle(c);
    assert_int_equal(res->state, MW_CONTROL_SENT);
    assert_int_equal(res->seq, 4);
    assert_string_equal(res->text, "sent rebalance=1 ranks 0-3 (seq 4)");

    /* Refused by the collector. */
    assert_int_equal(mw_control_send(c, "app.msg=x:9", ':', now_ns()), 0);
    r = router_recv(router, &id);
    assert_int_equal(r->n_ranks, 1);
    assert_int_equal(r->ranks[0], 9);
    mpiwatch__steer_request__free_unpacked(r, NULL);
    router_reply(router, &id, 0, "rank 9 is not below the job size 4", 0);
    zmq_msg_close(&id);
    res = settle(c);
    assert_int_equal(res->state, MW_CONTROL_REJECTED);
    assert_string_equal(res->text, "rejected: rank 9 is not below the job size 4");

    /* Refused before sending: nothing reaches the collector. */
    assert_int_equal(mw_control_send(c, "bad key=1", ' ', now_ns()), -1);
    assert_int_equal(mw_control_result(c)->state, MW_CONTROL_INVALID);
    assert_string_equal(mw_control_result(c)->text,
                        "not sent: bad key 'bad key': the key may only contain A-Z a-z 0-9 . _ -");

    /* No answer within the timeout (300 ms); the late answer is not taken for the next. */
    assert_int_equal(mw_control_send(c, "slow=1", ' ', now_ns()), 0);
    zmq_msg_t old;
    r = router_recv(router, &old);
    mpiwatch__steer_request__free_unpacked(r, NULL);
    res = settle(c);
    assert_int_equal(res->state, MW_CONTROL_NO_REPLY);
    assert_non_null(strstr(res->text, "no reply from ipc://"));
    assert_non_null(strstr(res->text, "within 0.3 s"));
    assert_int_equal(mw_control_send(c, "next=1", ' ', now_ns()), 0);
    router_reply(router, &old, 1, "", 7); /* to the socket given up: dropped */
    zmq_msg_close(&old);
    r = router_recv(router, &id);
    assert_string_equal(r->key, "next");
    mpiwatch__steer_request__free_unpacked(r, NULL);
    router_reply(router, &id, 1, "", 8);
    zmq_msg_close(&id);
    res = settle(c);
    assert_int_equal(res->state, MW_CONTROL_SENT);
    assert_int_equal(res->seq, 8);
    assert_int_equal(res->id, 4); /* requests sent: 4 */

    mw_control_free(c);
    zmq_close(router);
    zmq_ctx_term(ctx);
    char path[160];
    snprintf(path, sizeof path, "%s/control", dir);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_line),
        cmocka_unit_test(test_rank_list_and_key),
        cmocka_unit_test(test_client),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
