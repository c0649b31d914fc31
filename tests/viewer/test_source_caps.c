/* test_source_caps.c: the viewer's live source refuses a job description over the caps.
 *
 * The attack: a feed (a crafted or compromised collector, or a publisher on the feed endpoint)
 * publishes a job description whose node hardware is a chain of 65,536 objects, which once
 * reached every viewer and crashed its layout. A real PUB socket of this test publishes it to
 * mw_source_connect() on a private ipc:// endpoint, repeatedly (a subscriber joins late), and
 * the source must count an error and leave the model without that job; a valid description
 * published after it is then taken, so the refusal is of that description, not of the feed.
 * Waits are bounded polls (20 s), never fixed sleeps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <zmq.h>

#include "model.h"
#include "mw_limits.h"
#include "source.h"

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Publishes a Feed carrying a 1-rank job on one node whose hardware is a chain of n objects. */
static void publish_job(void *pub, size_t n)
{
    Mpiwatch__TopoObject *o = calloc(n, sizeof *o), **op = calloc(n, sizeof *op);
    assert_true(o && op);
    for (size_t i = 0; i < n; i++) {
        mpiwatch__topo_object__init(&o[i]);
        o[i].type = i + 1 == n ? 4 : 3;
        o[i].parent = (int32_t)i - 1;
        o[i].logical = o[i].os_index = (uint32_t)i;
        op[i] = &o[i];
    }
    Mpiwatch__NodeTopology nt = MPIWATCH__NODE_TOPOLOGY__INIT, *ntp = &nt;
    nt.node = "h0";
    nt.n_objects = n;
    nt.objects = op;
    char *hosts[] = {"h0"};
    Mpiwatch__JobInfo job = MPIWATCH__JOB_INFO__INIT;
    job.job = n > MW_MAX_TOPO_DEPTH ? "deep" : "fine";
    job.size = 1;
    job.window_ns = 100000000;
    job.subslots = 16;
    job.duration_bins = 32;
    job.state = "running";
    job.n_hosts = 1;
    job.hosts = hosts;
    job.n_nodes = 1;
    job.nodes = &ntp;
    Mpiwatch__Feed f = MPIWATCH__FEED__INIT;
    f.body_case = MPIWATCH__FEED__BODY_JOB;
    f.job = &job;
    size_t len = mpiwatch__feed__get_packed_size(&f);
    uint8_t *buf = malloc(len);
    assert_non_null(buf);
    mpiwatch__feed__pack(&f, buf);
    assert_int_equal(zmq_send(pub, "job", 3, ZMQ_SNDMORE), 3);
    assert_int_equal(zmq_send(pub, buf, len, 0), (int)len);
    free(buf);
    free(o);
    free(op);
}

static void test_deep_job_refused(void **state)
{
    (void)state;
    char dir[] = "/tmp/mw-source-caps-XXXXXX", ep[128], err[256];
    assert_non_null(mkdtemp(dir));
    snprintf(ep, sizeof ep, "ipc://%s/feed", dir);
    void *ctx = zmq_ctx_new();
    void *pub = zmq_socket(ctx, ZMQ_PUB);
    assert_non_null(pub);
    assert_int_equal(zmq_bind(pub, ep), 0);
    mw_source_t *s = mw_source_connect(ep, NULL, err, sizeof err);
    assert_non_null(s);
    mw_model_t *m = mw_model_new(64u << 20);
    assert_non_null(m);

    /* The deep chain until the source has seen (and refused) it. */
    mw_source_status_t st;
    uint64_t deadline = now_ns() + 20000000000ull;
    do {
        publish_job(pub, MW_MAX_TOPO_OBJECTS);
        for (int i = 0; i < 10; i++) {
            mw_source_poll(s, m, now_ns());
            usleep(10000);
        }
        mw_source_status(s, &st);
    } while (st.errors == 0 && now_ns() < deadline);
    assert_true(st.errors >= 1);
    assert_null(mw_model_job(m));
    assert_false(st.connected);

    /* A description within the caps is taken. */
    deadline = now_ns() + 20000000000ull;
    do {
        publish_job(pub, 4);
        for (int i = 0; i < 10; i++) {
            mw_source_poll(s, m, now_ns());
            usleep(10000);
        }
    } while (!mw_model_job(m) && now_ns() < deadline);
    assert_non_null(mw_model_job(m));
    assert_string_equal(mw_model_job(m)->job, "fine");

    mw_model_free(m);
    mw_source_free(s);
    zmq_close(pub);
    zmq_ctx_term(ctx);
    char path[160];
    snprintf(path, sizeof path, "%s/feed", dir);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deep_job_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
