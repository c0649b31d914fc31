/* test_aggwait.c: a parent waits for its aggregators' partials (collector/merge.c, "Waiting for
 * aggregators"; docs/aggregator.md "When a parent closes a window").
 *
 * Two aggregator collectors (A: ranks 0-1, B: ranks 2-3) merge real samples into partial
 * envelopes; a root collector gets them through mw_collector_frame at chosen arrival times, in
 * a loop that plays the collector's outer loop: it sleeps for mw_collector_timeout_ms (so the
 * root's next deadline is exercised too), ticks, and feeds each partial at its time. The root
 * keeps its default 1 s lateness; A's partial of window k arrives at k x 100 ms, B's LAG ms
 * later. The tests check each root window's ranks and when it closed (fake clock):
 *
 * - B 1.5 s behind (more than the root's lateness): every window closes with the 4 ranks, as
 *   soon as B's partial is in (with the wait removed, the same run closes them without B: the
 *   test of the feature's absence is in the first assertion);
 * - B dies after window 10: no window waits past twice the lateness, the windows after it
 *   close at their lateness deadline, the closes without B are counted, nothing is evicted;
 * - both in step: every window closes the moment the second partial arrives (no added
 *   latency); both closes counted as complete, none as having waited.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "fixture.h"
#include "partial.h"
#include "steps.h"

#define JOB "aggwait-job"
#define N 4   /* ranks */
#define NW 40 /* windows */
#define MS MW_NS_PER_MS

typedef struct {
    uint8_t *b;
    size_t n;
} blob_t;

typedef struct {
    fx_t *f;
    mw_pb_encoder_t enc;
    blob_t out[NW];
    unsigned n_out;
    uint32_t id;
    uint64_t seq;
} agg_t;

/* What the root closed: index, ranks, and the root's monotonic time of the close. */
typedef struct {
    uint64_t index;
    uint32_t reporting, missing;
    uint64_t at_ns;
} closed_t;

typedef struct {
    fx_t *f;
    closed_t closed[NW];
    unsigned n_closed;
} root_t;

static void agg_on_window(const mw_window_t *w, void *user)
{
    agg_t *a = user;
    size_t len = mw__partial_envelope_pack(a->f->c, &a->enc, w, a->id, a->seq++);
    assert_true(len > 0);
    assert_true(a->n_out < NW);
    a->out[a->n_out].b = malloc(len);
    memcpy(a->out[a->n_out].b, a->enc.out, len);
    a->out[a->n_out++].n = len;
}

static void root_on_window(const mw_window_t *w, void *user)
{
    root_t *r = user;
    assert_true(r->n_closed < NW);
    r->closed[r->n_closed++] =
        (closed_t){w->index - FX_W0, w->ranks_reporting, w->ranks_missing, r->f->now.mono_ns};
}

/* Aggregator `id` of ranks 2id, 2id+1: every partial of windows 0..NW-1 in a->out. */
static void agg_build(agg_t *a, uint32_t id)
{
    memset(a, 0, sizeof *a);
    a->f = fx_new();
    a->id = id;
    a->f->opt.upstream = strdup("tcp://127.0.0.1:1"); /* aggregator mode, no socket here */
    a->f->c->report_out = NULL;
    a->f->c->on_window = agg_on_window;
    a->f->c->on_window_user = a;
    tm_msg_t m;
    for (uint32_t r = 2 * id; r < 2 * id + 2; r++) {
        tm_hello(&m, JOB, r, N, a->f->now.real_ns);
        assert_int_equal(fx_feed(a->f, &m), MW_ACCEPTED);
    }
    for (uint32_t r = 0; r < N; r++) /* it waits for its own ranks (upstream.c's business) */
        if (r / 2 != id) {
            mw__merge_leave(&a->f->c->merge, r);
            mw__steps_leave(a->f->c, r);
        }
    for (uint32_t k = 0; k < NW; k++) {
        for (uint32_t r = 2 * id; r < 2 * id + 2; r++) {
            tm_sample(&m, JOB, r, FX_W0 + k, a->f->now.real_ns);
            tm_add_fn(&m, fx_fn(0), 10 + r, 1000 * (r + 1), 50, 400, 8);
            assert_int_equal(fx_feed(a->f, &m), MW_ACCEPTED);
        }
        a->f->now.real_ns += TM_WINDOW_NS;
        a->f->now.mono_ns += TM_WINDOW_NS;
    }
    assert_int_equal(a->n_out, NW); /* each closed by its ranks' samples */
}

static void agg_free(agg_t *a)
{
    for (unsigned i = 0; i < a->n_out; i++)
        free(a->out[i].b);
    mw__pb_encoder_free(&a->enc);
    fx_free(a->f);
}

/* Moves the root's clocks to mono time t (never back). */
static void root_at(root_t *r, uint64_t t)
{
    if (t > r->f->now.mono_ns) {
        r->f->now.real_ns += t - r->f->now.mono_ns;
        r->f->now.mono_ns = t;
    }
}

/* Feeds an AggState of aggregator a to the root (what a live aggregator sends every second). */
static void feed_state(root_t *root, agg_t *a)
{
    size_t len = mw__aggstate_envelope_pack(a->f->c, &a->enc, a->id, a->seq++, 0);
    assert_int_equal(mw_collector_frame(root->f->c, a->enc.out, len, 1, &root->f->now),
                     MW_ACCEPTED);
}

/* Runs the root: A's partial of window k at start + k x 100 ms, B's `lag_ms` later; B sends
 * windows < b_windows only. Both send an AggState every second (B until its last partial).
 * Plays the outer loop until every window has closed or 10 s after the last arrival. Returns
 * when B was last heard. */
static uint64_t run(root_t *root, agg_t agg[2], uint64_t lag_ms, uint32_t b_windows)
{
    memset(root, 0, sizeof *root);
    root->f = fx_new();
    root->f->c->report_out = NULL;
    root->f->c->on_window = root_on_window;
    root->f->c->on_window_user = root;
    fx_hellos(root->f, JOB, N); /* forwarded by the aggregators */
    for (int a = 0; a < 2; a++)
        feed_state(root, &agg[a]);
    uint64_t start = root->f->now.mono_ns, b_heard = start;
    /* The arrivals in time order: A's then B's, merged. */
    struct {
        uint64_t t;
        int a;
        uint32_t k;
    } ev[2 * NW + 64];
    unsigned n = 0, ia = 0, ib = 0;
    while (ia < NW || ib < b_windows) {
        uint64_t ta = start + ia * TM_WINDOW_NS, tb = start + ib * TM_WINDOW_NS + lag_ms * MS;
        if (ia < NW && (ib >= b_windows || ta <= tb))
            ev[n++] = (typeof(ev[0])){ta, 0, ia++};
        else
            ev[n++] = (typeof(ev[0])){tb, 1, ib++};
    }
    /* AggStates (k = UINT32_MAX) at every second, inserted in time order. */
    uint64_t b_end = b_windows ? ev[0].t : start; /* B's last partial */
    for (unsigned j = 0; j < n; j++)
        if (ev[j].a == 1)
            b_end = ev[j].t;
    for (uint64_t s = 1; s <= 10; s++)
        for (int a = 0; a < 2; a++) {
            uint64_t t = start + s * 1000 * MS;
            if (a == 1 && t > b_end)
                continue;
            unsigned j = n;
            while (j > 0 && ev[j - 1].t > t) {
                ev[j] = ev[j - 1];
                j--;
            }
            ev[j] = (typeof(ev[0])){t, a, UINT32_MAX};
            n++;
        }
    uint64_t end = ev[n - 1].t + 10000 * MS;
    unsigned i = 0;
    while (root->n_closed < NW && root->f->now.mono_ns < end) {
        long ms = mw_collector_timeout_ms(root->f->c, &root->f->now);
        uint64_t wake = ms < 0 ? UINT64_MAX : root->f->now.mono_ns + (uint64_t)ms * MS;
        if (i < n && ev[i].t <= wake) {
            root_at(root, ev[i].t);
            if (ev[i].a == 1)
                b_heard = ev[i].t;
            if (ev[i].k == UINT32_MAX) {
                feed_state(root, &agg[ev[i].a]);
            } else {
                const blob_t *b = &agg[ev[i].a].out[ev[i].k];
                assert_int_equal(mw_collector_frame(root->f->c, b->b, b->n, 1, &root->f->now),
                                 MW_ACCEPTED);
            }
            i++;
        } else {
            assert_true(wake != UINT64_MAX); /* something is open: a deadline must exist */
            root_at(root, wake);
            mw_collector_tick(root->f->c, &root->f->now);
        }
    }
    return b_heard;
}

static void setup_aggs(agg_t agg[2])
{
    agg_build(&agg[0], 0);
    agg_build(&agg[1], 1);
}

/* First arrival of window k at the root (A's partial). */
static uint64_t first_of(const root_t *r, uint64_t start, uint64_t k)
{
    (void)r;
    return start + k * TM_WINDOW_NS;
}

static void test_lagging_aggregator(void **state)
{
    (void)state;
    agg_t agg[2];
    setup_aggs(agg);
    root_t root;
    run(&root, agg, 1500, NW);
    assert_int_equal(root.n_closed, NW);
    uint64_t start = FX_MONO_NS;
    for (unsigned k = 0; k < NW; k++) {
        const closed_t *c = &root.closed[k];
        assert_int_equal(c->index, k);
        if (c->missing != 0 || c->reporting != N)
            print_error("window %u closed with %u ranks, %u missing\n", k, c->reporting,
                        c->missing);
        assert_int_equal(c->missing, 0);
        assert_int_equal(c->reporting, N);
        /* At B's partial exactly: the close is driven by the arrival, not by a timer. */
        assert_int_equal(c->at_ns, first_of(&root, start, k) + 1500 * MS);
    }
    const mw_merge_t *m = &root.f->c->merge;
    assert_int_equal(m->agg_waited, NW); /* each past its 1 s lateness */
    assert_int_equal(m->agg_given_up, 0);
    assert_int_equal(m->evicted, 0);
    fx_free(root.f);
    agg_free(&agg[0]);
    agg_free(&agg[1]);
}

static void test_dead_aggregator(void **state)
{
    (void)state;
    agg_t agg[2];
    setup_aggs(agg);
    root_t root;
    const uint32_t dies = 10;                     /* B's last partial is of window dies - 1 */
    uint64_t b_last = run(&root, agg, 500, dies); /* B last heard */
    assert_int_equal(root.n_closed, NW);
    uint64_t start = FX_MONO_NS, lateness = root.f->opt.lateness_ms * MS;
    uint64_t silent = lateness + MW_MERGE_AGG_BEAT_NS; /* then B is gone */
    unsigned without_b = 0;
    for (unsigned k = 0; k < NW; k++) {
        const closed_t *c = &root.closed[k];
        uint64_t first = first_of(&root, start, k), delay = c->at_ns - first;
        assert_int_equal(c->index, k);
        /* Never held past twice the lateness (the wait's bound), whatever B does. */
        assert_true(delay <= 2 * lateness);
        if (k < dies) {
            assert_int_equal(c->missing, 0);
            continue;
        }
        assert_int_equal(c->missing, 2);
        without_b++;
        /* Waited for B until it was declared gone (silent that long), or its own bound ... */
        uint64_t until =
            b_last + silent < first + 2 * lateness ? b_last + silent : first + 2 * lateness;
        if (until < first + lateness)
            until = first + lateness; /* ... and never less than its lateness */
        if (c->at_ns != until)
            print_error("window %u closed %.3f s after its first partial, expected %.3f\n", k,
                        (double)delay / 1e9, (double)(until - first) / 1e9);
        assert_int_equal(c->at_ns, until);
    }
    const mw_merge_t *m = &root.f->c->merge;
    assert_int_equal(without_b, NW - dies);
    assert_true(m->agg_given_up >= 1); /* at least the first window after B died waited */
    assert_true(m->agg_given_up <= NW - dies);
    assert_int_equal(m->agg_owed, m->agg_given_up); /* one aggregator owed each */
    assert_int_equal(m->evicted, 0);
    fx_free(root.f);
    agg_free(&agg[0]);
    agg_free(&agg[1]);
}

static void test_in_step(void **state)
{
    (void)state;
    agg_t agg[2];
    setup_aggs(agg);
    root_t root;
    run(&root, agg, 20, NW);
    assert_int_equal(root.n_closed, NW);
    uint64_t start = FX_MONO_NS;
    for (unsigned k = 0; k < NW; k++) {
        assert_int_equal(root.closed[k].missing, 0);
        assert_int_equal(root.closed[k].at_ns, first_of(&root, start, k) + 20 * MS);
    }
    const mw_merge_t *m = &root.f->c->merge;
    assert_int_equal(m->agg_waited, 0);
    assert_int_equal(m->agg_given_up, 0);
    fx_free(root.f);
    agg_free(&agg[0]);
    agg_free(&agg[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lagging_aggregator),
        cmocka_unit_test(test_dead_aggregator),
        cmocka_unit_test(test_in_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
