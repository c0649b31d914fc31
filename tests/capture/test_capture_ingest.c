/* test_capture_ingest.c: the collector's checks of a captured window's trace
 * (collector/ingest.c check_capture, docs/steering.md).
 *
 * Crafted samples with a Capture go through a collector without sockets (tests/collector's
 * fixture, so they are packed and decoded like real frames): a well-formed trace is accepted
 * and leaves the merged window exactly as the same sample without it; each broken field is
 * rejected with its reason, capture_field or capture_time, counted once and never fatal.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fixture.h"

#define JOB "capture-job"
#define NCALLS 3

typedef struct {
    Mpiwatch__Capture cap;
    uint32_t fn[NCALLS];
    int64_t start[NCALLS];
    uint64_t dur[NCALLS], bytes[NCALLS];
    int32_t peer[NCALLS];
} cap_t;

/* Rank r's sample for window w: 3 calls of MPI_Send to rank 1, traced, in window w of a
 * 2@(w - 1) capture. */
static void captured_sample(tm_msg_t *m, cap_t *c, uint32_t r, uint64_t w, uint64_t now)
{
    tm_sample(m, JOB, r, w, now);
    tm_add_fn(m, fx_fn(1), NCALLS, 3000, 1000, 1000, 3 * 64);
    tm_add_peer(m, 1, NCALLS, 3 * 64);
    mpiwatch__capture__init(&c->cap);
    c->cap.first = w - 1;
    c->cap.windows = 2;
    for (unsigned i = 0; i < NCALLS; i++) {
        c->fn[i] = fx_fn(1);
        c->start[i] = 1000000 * (int64_t)i;
        c->dur[i] = 1000;
        c->bytes[i] = 64;
        c->peer[i] = 1;
    }
    c->cap.n_fn = c->cap.n_start = c->cap.n_duration_ns = c->cap.n_bytes = c->cap.n_peer = NCALLS;
    c->cap.fn = c->fn;
    c->cap.start = c->start;
    c->cap.duration_ns = c->dur;
    c->cap.bytes = c->bytes;
    c->cap.peer = c->peer;
    m->sample.capture = &c->cap;
}

static void expect(fx_t *f, const tm_msg_t *m, mw_reject_t want)
{
    uint64_t before = want ? f->c->stats.rejected[want] : f->c->stats.accepted;
    assert_string_equal(mw__reject_name(fx_feed(f, m)), mw__reject_name(want));
    assert_int_equal(want ? f->c->stats.rejected[want] : f->c->stats.accepted, before + 1);
}

static void test_capture_checks(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    fx_hellos(f, JOB, 2);
    const uint64_t W = TM_WINDOW_NS, day = MW_TIMESTAMP_TOLERANCE_NS;
    uint64_t w = FX_W0 + 1;
    tm_msg_t m;
    cap_t c;
    /* The breakages, one at a time, all on rank 0's window w (a rejected sample leaves no
     * trace, so the same window can be tried again). */
    static const struct {
        const char *what;
        int field; /* which change */
        int64_t v;
        mw_reject_t want;
    } cases[] = {
        {"fn 0", 0, 0, MW_REJECT_CAPTURE_FIELD},
        {"fn beyond the table", 0, MW_FN_COUNT, MW_REJECT_CAPTURE_FIELD},
        {"counted-only fn", 0, -1, MW_REJECT_CAPTURE_FIELD},
        {"peer = size", 1, 2, MW_REJECT_CAPTURE_FIELD},
        {"peer -2", 1, -2, MW_REJECT_CAPTURE_FIELD},
        {"arrays of different lengths", 2, 0, MW_REJECT_CAPTURE_FIELD},
        {"windows 0", 3, 0, MW_REJECT_CAPTURE_FIELD},
        {"windows beyond the max", 3, MW_CAPTURE_MAX_WINDOWS + 1, MW_REJECT_CAPTURE_FIELD},
        {"first after the window", 4, 1, MW_REJECT_CAPTURE_FIELD},
        {"window past the request", 4, -2, MW_REJECT_CAPTURE_FIELD},
        {"window among the skipped", 5, 2, MW_REJECT_CAPTURE_FIELD},
        {"ends after the window", 6, (int64_t)W + 1, MW_REJECT_CAPTURE_TIME},
        {"ends before the window, not late", 6, -2000 - 2000000, MW_REJECT_CAPTURE_TIME},
        {"starts more than a day before", 6, -(int64_t)day - 1, MW_REJECT_CAPTURE_TIME},
        {"lasts more than a day", 7, (int64_t)day + 1, MW_REJECT_CAPTURE_TIME},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        captured_sample(&m, &c, 0, w, f->now.real_ns);
        switch (cases[i].field) {
        case 0:
            c.fn[1] = cases[i].v >= 0 ? (uint32_t)cases[i].v : mw_fn_id("MPI_Comm_rank");
            break;
        case 1:
            c.peer[2] = (int32_t)cases[i].v;
            break;
        case 2:
            c.cap.n_peer = NCALLS - 1;
            break;
        case 3:
            c.cap.windows = (uint32_t)cases[i].v;
            break;
        case 4:
            c.cap.first = (uint64_t)((int64_t)w + cases[i].v);
            break;
        case 5:
            c.cap.skipped = (uint32_t)cases[i].v;
            break;
        case 6:
            c.start[2] = cases[i].v;
            break;
        default:
            c.dur[0] = (uint64_t)cases[i].v;
        }
        if (fx_feed(f, &m) != cases[i].want)
            fail_msg("%s: not rejected as %s", cases[i].what, mw__reject_name(cases[i].want));
    }
    assert_int_equal(f->c->stats.rejected[MW_REJECT_CAPTURE_FIELD], 11);
    assert_int_equal(f->c->stats.rejected[MW_REJECT_CAPTURE_TIME], 4);
    assert_int_equal(f->c->stats.accepted, 2);

    /* Well-formed: accepted. A call that ended before the window is one of its late calls;
     * the tolerance lets a call end 1 us past the window's end (clock rounding). */
    captured_sample(&m, &c, 0, w, f->now.real_ns);
    c.start[0] = -5000000;
    c.start[2] = (int64_t)W - 1000 + (int64_t)MW_CAPTURE_TOLERANCE_NS;
    m.sample.calls_late = 1;
    expect(f, &m, MW_ACCEPTED);
    /* Rank 1 sends the same window without a capture: the merge sees the same totals. */
    tm_sample(&m, JOB, 1, w, f->now.real_ns);
    tm_add_fn(&m, fx_fn(1), NCALLS, 3000, 1000, 1000, 3 * 64);
    tm_add_peer(&m, 1, NCALLS, 3 * 64);
    expect(f, &m, MW_ACCEPTED);
    fx_advance(f, 60000);
    int found = 0;
    for (unsigned i = 0; i < f->n_closed; i++) {
        if (f->closed[i].index != w)
            continue;
        found = 1;
        assert_int_equal(f->closed[i].reporting, 2);
        assert_int_equal(f->closed[i].fn[1].s.count, 2 * NCALLS);
        assert_int_equal(f->closed[i].fn[1].s.bytes, 2 * 3 * 64);
        assert_int_equal(f->closed[i].calls_late, 1);
    }
    assert_true(found);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capture_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
