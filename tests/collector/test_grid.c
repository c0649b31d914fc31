/* test_grid.c: the job's window grid (collector/grid.c) and what the collector does with it:
 * index <-> time across segments, the bounds and refusals of a change, the choice of the
 * switch window, and, through the collector, samples checked against the grid (grid_mismatch)
 * and merged windows that carry their own start and length.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fixture.h"
#include "steer.h"

#include <zmq.h>

#define JOB "grid-job"
#define MS 1000000ull

static void test_one_segment(void **state)
{
    (void)state;
    mw_grid_t g;
    mw_grid_init(&g, 100 * MS);
    assert_int_equal(g.n, 1);
    assert_int_equal(mw_grid_start(&g, 0), 0);
    assert_int_equal(mw_grid_start(&g, 17), 1700 * MS);
    assert_int_equal(mw_grid_len(&g, 17), 100 * MS);
    assert_int_equal(mw_grid_index(&g, 1700 * MS), 17);
    assert_int_equal(mw_grid_index(&g, 1800 * MS - 1), 17);
    assert_int_equal(mw_grid_index(&g, FX_REAL_NS), FX_REAL_NS / (100 * MS));
    assert_int_equal(mw_grid_span(&g, 10, 20), 1000 * MS);
    assert_int_equal(mw_grid_span(&g, 20, 10), 0);
}

static void test_segments(void **state)
{
    (void)state;
    char err[200];
    mw_grid_t g;
    mw_grid_init(&g, 100 * MS);
    assert_int_equal(mw_grid_append(&g, 50, 200, err, sizeof err), 0); /* 5 s on: 200 ms */
    assert_int_equal(mw_grid_append(&g, 60, 20, err, sizeof err), 0);  /* 7 s on: 20 ms */
    assert_int_equal(g.n, 3);
    assert_int_equal(g.seg[1].start_ns, 5000 * MS);
    assert_int_equal(g.seg[2].start_ns, 7000 * MS);
    /* index -> time, and back, on both sides of every boundary */
    assert_int_equal(mw_grid_start(&g, 49), 4900 * MS);
    assert_int_equal(mw_grid_len(&g, 49), 100 * MS);
    assert_int_equal(mw_grid_start(&g, 50), 5000 * MS);
    assert_int_equal(mw_grid_len(&g, 50), 200 * MS);
    assert_int_equal(mw_grid_start(&g, 59), 6800 * MS);
    assert_int_equal(mw_grid_start(&g, 60), 7000 * MS);
    assert_int_equal(mw_grid_len(&g, 60), 20 * MS);
    assert_int_equal(mw_grid_start(&g, 65), 7100 * MS);
    for (uint64_t k = 40; k < 80; k++) {
        uint64_t s = mw_grid_start(&g, k), e = s + mw_grid_len(&g, k);
        assert_int_equal(mw_grid_start(&g, k + 1), e); /* contiguous */
        assert_int_equal(mw_grid_index(&g, s), k);
        assert_int_equal(mw_grid_index(&g, e - 1), k);
    }
    assert_int_equal(mw_grid_span(&g, 49, 61), 100 * MS + 10 * 200 * MS + 20 * MS);
    /* a change must come after the last one */
    assert_int_equal(mw_grid_append(&g, 60, 50, err, sizeof err), -1);
    assert_int_equal(mw_grid_append(&g, 55, 50, err, sizeof err), -1);
    assert_int_equal(g.n, 3);
}

static void test_check_bounds(void **state)
{
    (void)state;
    char err[200];
    mw_grid_t g;
    mw_grid_init(&g, 100 * MS);
    assert_int_equal(mw_grid_check(&g, 200, 0, err, sizeof err), 0);
    assert_int_equal(mw_grid_check(&g, 800, 0, err, sizeof err), 0); /* 8 x */
    assert_int_equal(mw_grid_check(&g, 801, 0, err, sizeof err), -1);
    assert_int_equal(mw_grid_check(&g, 13, 0, err, sizeof err), 0); /* >= 1/8 */
    assert_int_equal(mw_grid_check(&g, 12, 0, err, sizeof err), -1);
    assert_int_equal(mw_grid_check(&g, 0, 0, err, sizeof err), -1);
    assert_int_equal(mw_grid_check(&g, 100, 0, err, sizeof err), -1);      /* already 100 ms */
    assert_int_equal(mw_grid_check(&g, 50, 60 * MS, err, sizeof err), -1); /* the ring */
    assert_non_null(strstr(err, "ring"));
    mw_grid_t h;
    mw_grid_init(&h, 5 * MS);
    assert_int_equal(mw_grid_check(&h, 9, 0, err, sizeof err), -1); /* below 10 ms */
    mw_grid_init(&h, 30000 * MS);
    assert_int_equal(mw_grid_check(&h, 60001, 0, err, sizeof err), -1); /* above 60 s */
    assert_int_equal(mw_grid_check(&h, 60000, 0, err, sizeof err), 0);
    /* at most MW_GRID_MAX_SEGMENTS segments */
    for (uint64_t i = 1; i < MW_GRID_MAX_SEGMENTS; i++)
        assert_int_equal(mw_grid_append(&g, 100 * i, i % 2 ? 200 : 100, err, sizeof err), 0);
    assert_int_equal(mw_grid_check(&g, 300, 0, err, sizeof err), -1);
    assert_int_equal(mw_grid_append(&g, 10000, 300, err, sizeof err), -1);
}

static void test_parse(void **state)
{
    (void)state;
    uint64_t v = 0;
    assert_int_equal(mw_grid_parse_ms("200", &v), 0);
    assert_int_equal(v, 200);
    assert_int_equal(mw_grid_parse_ms("", &v), -1);
    assert_int_equal(mw_grid_parse_ms("abc", &v), -1);
    assert_int_equal(mw_grid_parse_ms("20ms", &v), -1);
    assert_int_equal(mw_grid_parse_ms("-5", &v), -1);
    assert_int_equal(mw_grid_parse_ms(" 5", &v), -1);
    assert_int_equal(mw_grid_parse_ms("1234567890", &v), -1);
    assert_int_equal(mw_grid_parse_ms(NULL, &v), -1);
}

static void test_pick(void **state)
{
    (void)state;
    mw_grid_t g;
    mw_grid_init(&g, 100 * MS);
    /* the first window starting at least MW_GRID_LEAD_NS after now ... */
    assert_int_equal(mw_grid_pick(&g, 1000 * MS, -1), 20);
    assert_int_equal(mw_grid_pick(&g, 1000 * MS + 1, -1), 21);
    /* ... and after the newest window seen, when that is ahead of now */
    assert_int_equal(mw_grid_pick(&g, 1000 * MS, 14), 25);
    assert_int_equal(mw_grid_pick(&g, 1000 * MS, 5), 20);
}

static void send(fx_t *f, uint32_t rank, uint64_t w, uint64_t len, uint64_t start, mw_reject_t want)
{
    tm_msg_t m;
    tm_sample(&m, JOB, rank, w, f->now.real_ns);
    tm_add_fn(&m, fx_fn(0), 3, 300, 100, 100, 0);
    m.sample.window_ns = len;
    m.sample.window_start_ns = start;
    assert_int_equal(fx_feed(f, &m), want);
}

/* The collector with a changed grid: samples on it are merged into windows that carry their
 * own start and length; samples of the old grid from K on are rejected, before K accepted. */
static void test_collector_grid(void **state)
{
    (void)state;
    char err[200];
    fx_t *f = fx_new();
    fx_hellos(f, JOB, 2);
    mw_grid_t *g = &f->c->job.grid;
    const uint64_t W = TM_WINDOW_NS, K = FX_W0 + 3;
    assert_int_equal(g->n, 1);
    assert_int_equal(mw_grid_append(g, K, 2 * W / MS, err, sizeof err), 0);
    for (uint64_t w = FX_W0; w < K + 3; w++) {
        uint64_t len = w < K ? W : 2 * W;
        uint64_t start = w < K ? w * W : K * W + (w - K) * 2 * W;
        send(f, 0, w, len, start, MW_ACCEPTED);
        if (w >= K) /* rank 1 still on the old grid */
            send(f, 1, w, W, w * W, MW_REJECT_GRID_MISMATCH);
        else if (w == FX_W0)
            send(f, 1, w, 0, 0, MW_ACCEPTED); /* an older library: not checked */
        else
            send(f, 1, w, len, start, MW_ACCEPTED);
    }
    /* a right length at the wrong start is rejected too */
    send(f, 0, K + 3, 2 * W, (K + 3) * W, MW_REJECT_GRID_MISMATCH);
    assert_int_equal(f->c->stats.rejected[MW_REJECT_GRID_MISMATCH], 4);
    fx_advance(f, 60000);
    assert_true(f->n_closed >= 6);
    for (size_t i = 0; i < f->n_closed; i++) {
        const fx_window_t *o = &f->closed[i];
        uint64_t len = o->index < K ? W : 2 * W;
        uint64_t start = o->index < K ? o->index * W : K * W + (o->index - K) * 2 * W;
        assert_int_equal(o->window_ns, len);
        assert_int_equal(o->start_ns, start);
        assert_int_equal(o->reporting, o->index < K ? 2 : 1);
    }
    fx_free(f);
}

/* The K an mpiwatch.window request gets through the collector (steer.c), with a real PUB
 * socket on inproc:// (nobody subscribes) and the collector's real clock, which steer.c reads
 * for the request. Returns K, and the real time just before the request in *now_ns. */
static uint64_t request_window_k(fx_t *f, uint64_t *now_ns)
{
    assert_true(mw__steer_send(f->c, "mpiwatch.window", "200", NULL, 0) > 0);
    /* The collector's present when it picked K: the clock of its last batch (this fixture
     * has no clock callback), not the machine's clock now, which a loaded machine moves on by
     * more than a window between the fixture's start and this request. */
    *now_ns = f->c->now.real_ns;
    const mw_grid_t *g = &f->c->job.grid;
    assert_int_equal(g->n, 2);
    return g->seg[1].first;
}

/* A collector whose real clock is the machine's (steer.c reads it), with steering on. */
static fx_t *fx_live(void **zctx)
{
    fx_t *f = fx_new();
    mw__clock_now(&f->now);
    *zctx = zmq_ctx_new();
    assert_non_null(*zctx);
    free(f->opt.steer);
    f->opt.steer = strdup("inproc://test-grid-steer");
    f->c->steer = mw__steer_open(*zctx, &f->opt);
    assert_non_null(f->c->steer);
    return f;
}

static void fx_live_free(fx_t *f, void *zctx)
{
    mw__steer_close(f->c->steer);
    f->c->steer = NULL;
    fx_free(f);
    zmq_ctx_term(zctx);
}

/* One rank claiming a far-future window must not place K (issue 12 follow-up): the sample is
 * refused as `ahead` (it used to be accepted anywhere within a day), and a rank a few seconds
 * ahead, within the allowed skew, does not move K either: K comes from the collector's clock
 * and the window most ranks reached. Before this, K followed the newest window any rank sent,
 * so the forged sample put K half a day ahead, where every rank refuses it. */
static void test_pick_forged_ahead(void **state)
{
    (void)state;
    void *zctx;
    fx_t *f = fx_live(&zctx);
    fx_hellos(f, JOB, 3);
    const uint64_t W = TM_WINDOW_NS, w0 = tm_window_of(f->now.real_ns) - 1;
    send(f, 0, w0, W, w0 * W, MW_ACCEPTED);
    send(f, 1, w0, W, w0 * W, MW_ACCEPTED);
    /* rank 2 (or anyone speaking for it) claims a window 12 hours ahead: refused */
    const uint64_t far = w0 + 12ull * 3600 * 10;
    send(f, 2, far, W, far * W, MW_REJECT_AHEAD);
    assert_int_equal(f->c->stats.rejected[MW_REJECT_AHEAD], 1);
    assert_int_equal(mw__merge_last_window(&f->c->merge, 2), -1);
    /* just past the allowed lead: refused; 4 s ahead (a clock skew): accepted */
    const uint64_t lead_w = MW_SAMPLE_MAX_LEAD_NS / W;
    const uint64_t past = tm_window_of(f->now.real_ns + MW_SAMPLE_MAX_LEAD_NS) + 1;
    send(f, 2, past, W, past * W, MW_REJECT_AHEAD);
    assert_int_equal(f->c->stats.rejected[MW_REJECT_AHEAD], 2);
    assert_true(lead_w > 40);
    send(f, 2, w0 + 40, W, (w0 + 40) * W, MW_ACCEPTED);

    uint64_t now;
    uint64_t k = request_window_k(f, &now);
    uint64_t k_start = k * W;
    /* about a second after the collector's clock, whatever rank 2 said */
    assert_true(k_start >= now + MW_GRID_LEAD_NS);
    assert_true(k_start < now + MW_GRID_LEAD_NS + 2 * W + 1000 * MS); /* 1 s of slack */
    fx_live_free(f, zctx);
}

/* Ranks whose clock runs ahead of the collector's (all of them, 3 s, within the allowed
 * skew) still get a K a second ahead of where they are: the median rank places it. */
static void test_pick_ranks_ahead(void **state)
{
    (void)state;
    void *zctx;
    fx_t *f = fx_live(&zctx);
    fx_hellos(f, JOB, 3);
    const uint64_t W = TM_WINDOW_NS, w = tm_window_of(f->now.real_ns) + 30;
    send(f, 0, w, W, w * W, MW_ACCEPTED);
    send(f, 1, w - 1, W, (w - 1) * W, MW_ACCEPTED);
    send(f, 2, w + 1, W, (w + 1) * W, MW_ACCEPTED);
    uint64_t now;
    uint64_t k = request_window_k(f, &now);
    /* the median rank's window is w: K starts a second after its end, not after w + 1's */
    assert_int_equal(k, w + 1 + MW_GRID_LEAD_NS / W);
    (void)now;
    fx_live_free(f, zctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_segment),
        cmocka_unit_test(test_segments),
        cmocka_unit_test(test_check_bounds),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_pick),
        cmocka_unit_test(test_collector_grid),
        cmocka_unit_test(test_pick_forged_ahead),
        cmocka_unit_test(test_pick_ranks_ahead),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
