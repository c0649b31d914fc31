/* test_lateness.c: the collector's online lateness analysis (collector/lateness.c) with crafted
 * windows: the worker finds the rank a delay starts on, survives undecodable and oversized
 * traces (counted), accounts for every window when its queue overflows, and gaps untraced
 * windows. The collector has no outputs here; its totals (c->ltotals) are what the report and
 * /metrics show, fed by the batches the loop drains. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "collector.h"
#include "lateness.h"
#include "mw_trace.h"

#define T_RANKS 4u
#define T_WINDOW_NS 100000000ull
#define T_W0 1000u

typedef struct {
    mw_collector_options_t opt;
    mw_collector_t c;
} lt_t;

static lt_t *lt_new(uint64_t budget_ms)
{
    lt_t *t = calloc(1, sizeof *t);
    assert_non_null(t);
    mw_collector_options_defaults(&t->opt);
    t->opt.quiet = 1;
    assert_int_equal(mw_collector_init(&t->c, &t->opt), 0);
    t->c.report_out = NULL;
    t->c.lateness = mw__lateness_open(budget_ms, 1);
    assert_non_null(t->c.lateness);
    mw__lateness_job(t->c.lateness, "t");
    return t;
}

static void lt_free(lt_t *t)
{
    mw__lateness_close(t->c.lateness);
    t->c.lateness = NULL;
    mw_collector_free(&t->c);
    mw_collector_options_free(&t->opt);
    free(t);
}

/* Ends the job and waits for the worker's last batch. */
static void lt_end(lt_t *t)
{
    mw__lateness_job_end(t->c.lateness);
    mw__lateness_flush(&t->c, 30000);
}

/* A window under construction: traces appended as encoded bytes. */
typedef struct {
    mw_window_t w;
    mw_rank_trace_t tr[16];
    uint8_t *bytes;
    size_t len;
} win_t;

static void win_init(win_t *x, uint64_t index)
{
    memset(x, 0, sizeof *x);
    x->w.index = index;
    x->w.start_ns = index * T_WINDOW_NS;
    x->w.window_ns = T_WINDOW_NS;
    x->w.traces = x->tr;
}

/* Appends a rank's trace: `data` as its records, with the fields it claims. */
static void win_add_raw(win_t *x, uint32_t rank, const void *data, size_t len, uint32_t count,
                        uint32_t encoding, uint64_t raw_bytes)
{
    x->bytes = realloc(x->bytes, x->len + len + 1);
    assert_non_null(x->bytes);
    memcpy(x->bytes + x->len, data, len);
    mw_rank_trace_t *t = &x->tr[x->w.n_traces++];
    memset(t, 0, sizeof *t);
    t->rank = rank;
    t->state = MW_TRACE_EXACT;
    t->count = count;
    t->encoding = encoding;
    t->raw_bytes = raw_bytes;
    t->off = x->len;
    t->len = len;
    t->window = x->w.index;
    x->len += len;
    x->w.tbytes = x->bytes;
    x->w.ranks_reporting = x->w.n_traces;
}

static void win_add(win_t *x, uint32_t rank, const mw_trace_rec_t *recs, size_t n)
{
    uint8_t *data = NULL;
    size_t len = 0;
    uint32_t enc = 0;
    uint64_t raw = 0;
    assert_int_equal(mw_trace_encode(recs, n, 1, 50, &data, &len, &enc, &raw), 0);
    win_add_raw(x, rank, data, len, (uint32_t)n, enc, raw);
    free(data);
}

/* Queues the window as the loop would at monotonic time now - age_ns. */
static void win_push_aged(lt_t *t, win_t *x, uint64_t age_ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    mw__lateness_window(t->c.lateness, &x->w, now - age_ns);
    free(x->bytes);
    x->bytes = NULL;
}

static void win_push(lt_t *t, win_t *x)
{
    win_push_aged(t, x, 0);
}

/* A ring in window `k`: `iters` iterations 10 ms apart, rank r sends to r + 1 and receives
 * from r - 1 (blocking, the receive ends 1 us after its message was sent); rank `late` (or
 * none: T_RANKS) sends `delay_ns` late in iteration 0. */
static void ring_window_aged(lt_t *t, uint64_t k, unsigned iters, uint32_t late, int64_t delay_ns,
                             uint64_t age_ns)
{
    win_t x;
    win_init(&x, k);
    unsigned fsend = mw_fn_id("MPI_Send"), frecv = mw_fn_id("MPI_Recv");
    for (uint32_t r = 0; r < T_RANKS; r++) {
        mw_trace_rec_t recs[64];
        size_t n = 0;
        uint32_t left = (r + T_RANKS - 1) % T_RANKS;
        for (unsigned i = 0; i < iters; i++) {
            int64_t t0 = (int64_t)i * 10000000;
            int64_t mine = t0 + (r == late && i == 0 ? delay_ns : 0);
            int64_t theirs = t0 + (left == late && i == 0 ? delay_ns : 0);
            mw_trace_rec_t *s = &recs[n++];
            memset(s, 0, sizeof *s);
            s->start_ns = mine;
            s->dur_ns = 1000;
            s->comm = MW_COMM_ID_WORLD;
            s->seq = k * 1000 + i;
            s->bytes = 8;
            s->peer = (int32_t)((r + 1) % T_RANKS);
            s->fn = (uint16_t)fsend;
            s->kind = MW_TK_SEND;
            mw_trace_rec_t *v = &recs[n++];
            *v = *s;
            v->start_ns = mine + 1000;
            int64_t end = theirs + 2000 > mine + 2000 ? theirs + 2000 : mine + 2000;
            v->dur_ns = (uint64_t)(end - v->start_ns);
            v->peer = (int32_t)left;
            v->fn = (uint16_t)frecv;
            v->kind = MW_TK_RECV;
        }
        win_add(&x, r, recs, n);
    }
    win_push_aged(t, &x, age_ns);
}

static void ring_window(lt_t *t, uint64_t k, unsigned iters, uint32_t late, int64_t delay_ns)
{
    ring_window_aged(t, k, iters, late, delay_ns, 0);
}

/* Rank 2 sends 5 ms late in window T_W0 + 1: the largest differential lateness is there, on
 * rank 2's MPI_Send, and every window analysed is summarised. */
static void test_ring_delay(void **state)
{
    (void)state;
    lt_t *t = lt_new(0);
    for (uint64_t k = 0; k < 4; k++)
        ring_window(t, T_W0 + k, 4, k == 1 ? 2 : T_RANKS, 5000000);
    lt_end(t);
    const mw_lateness_totals_t *s = &t->c.ltotals;
    assert_int_equal(s->windows_analysed, 4);
    assert_int_equal(s->windows_skipped, 0);
    assert_int_equal(s->bad_traces, 0);
    assert_int_equal(s->windows_summarised, 4);
    assert_int_equal(s->diff_rank, 2);
    assert_int_equal(s->diff_window, T_W0 + 1);
    assert_int_equal(s->diff_fn, mw_fn_id("MPI_Send"));
    assert_true(s->diff_max_ns >= 4000000 && s->diff_max_ns <= 6000000);
    assert_true(s->lateness_max_ns >= s->diff_max_ns);
    assert_true(s->events > 0);
    lt_free(t);
}

/* Bytes that are not a trace, and a trace that claims more than the caps: each rank is left
 * out and counted, the window's other ranks are analysed, nothing crashes. */
static void test_bad_traces(void **state)
{
    (void)state;
    lt_t *t = lt_new(0);
    win_t x;
    win_init(&x, T_W0);
    uint8_t junk[256];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (uint8_t)(i * 131 + 7);
    win_add_raw(&x, 0, junk, sizeof junk, 10, MW_TRACE_ENC_COLUMNS, sizeof junk);
    win_add_raw(&x, 1, junk, sizeof junk, UINT32_MAX, MW_TRACE_ENC_ZSTD, UINT64_MAX);
    win_add_raw(&x, 2, junk, 16, MW_TRACE_MAX_RECORDS, MW_TRACE_ENC_ZSTD,
                (uint64_t)MW_TRACE_MAX_RAW_BYTES);
    win_add_raw(&x, 3, junk, 1, 1, 99, 1); /* an unknown encoding */
    mw_trace_rec_t ok = {.start_ns = 10,
                         .dur_ns = 5,
                         .fn = (uint16_t)mw_fn_id("MPI_Barrier"),
                         .comm = MW_COMM_ID_WORLD,
                         .peer = -1,
                         .kind = MW_TK_COLL};
    win_add(&x, 4, &ok, 1);
    win_push(t, &x);
    lt_end(t);
    const mw_lateness_totals_t *s = &t->c.ltotals;
    assert_int_equal(s->bad_traces, 4);
    assert_int_equal(s->windows_analysed, 1);
    assert_int_equal(s->events, 1);
    lt_free(t);
}

/* Windows pushed far faster than the worker analyses them: the queue overflows, every window
 * is either analysed or skipped (counted), and the loop never waited. */
static void test_queue_full(void **state)
{
    (void)state;
    lt_t *t = lt_new(0);
    const unsigned n = 3 * MW_LATENESS_QUEUE;
    for (unsigned k = 0; k < n; k++)
        ring_window(t, T_W0 + k, 30, T_RANKS, 0);
    lt_end(t);
    const mw_lateness_totals_t *s = &t->c.ltotals;
    assert_int_equal(s->windows_analysed + s->windows_skipped, n);
    assert_true(s->windows_analysed > 0);
    lt_free(t);
}

/* A window that waited longer than the budget (100 ms) is skipped and counted: every other
 * window here is queued as if the loop had closed it 10 s ago. */
static void test_budget(void **state)
{
    (void)state;
    lt_t *t = lt_new(100);
    const unsigned n = 16;
    for (unsigned k = 0; k < n; k++)
        ring_window_aged(t, T_W0 + k, 4, T_RANKS, 0, k % 2 ? 10000000000ull : 0);
    lt_end(t);
    const mw_lateness_totals_t *s = &t->c.ltotals;
    assert_int_equal(s->windows_analysed + s->windows_skipped, n);
    assert_true(s->windows_skipped >= n / 2);
    assert_true(s->windows_analysed > 0);
    lt_free(t);
}

/* Windows without an exact trace are counted and are a gap: the ring's messages on both sides
 * of one are still analysed, the events of the first window are final at the gap. */
static void test_untraced(void **state)
{
    (void)state;
    lt_t *t = lt_new(0);
    ring_window(t, T_W0, 2, T_RANKS, 0);
    for (unsigned k = 1; k <= 3; k++) {
        win_t x;
        win_init(&x, T_W0 + k);
        x.w.ranks_reporting = T_RANKS;
        win_push(t, &x);
    }
    ring_window(t, T_W0 + 4, 2, 1, 3000000);
    lt_end(t);
    const mw_lateness_totals_t *s = &t->c.ltotals;
    assert_int_equal(s->windows_untraced, 3);
    assert_int_equal(s->windows_analysed, 2);
    assert_int_equal(s->windows_summarised, 2);
    assert_true(s->gaps >= 1);
    assert_int_equal(s->diff_rank, 1);
    assert_int_equal(s->diff_window, T_W0 + 4);
    lt_free(t);
}

/* A batch of a job that has ended is not published for the next one. */
static void test_next_job(void **state)
{
    (void)state;
    lt_t *t = lt_new(0);
    for (unsigned k = 0; k < 20; k++)
        ring_window(t, T_W0 + k, 30, T_RANKS, 0);
    mw__lateness_job(t->c.lateness, "u"); /* no flush: the old job's batches are stale */
    memset(&t->c.ltotals, 0, sizeof t->c.ltotals);
    ring_window(t, T_W0 + 100, 2, 3, 2000000);
    lt_end(t);
    const mw_lateness_totals_t *s = &t->c.ltotals;
    assert_int_equal(s->windows_analysed, 1);
    assert_int_equal(s->windows_summarised, 1);
    assert_int_equal(s->diff_rank, 3);
    lt_free(t);
}

/* Batches a crafted recording replays: the job's lost time saturates, it never wraps; a
 * function id out of the table is unknown. */
static void test_account_crafted(void **state)
{
    (void)state;
    mw_lateness_totals_t t;
    memset(&t, 0, sizeof t);
    Mpiwatch__LatenessSummary s = MPIWATCH__LATENESS_SUMMARY__INIT, *sp = &s;
    s.events = 1;
    s.lost_ns = INT64_MAX;
    Mpiwatch__Lateness b = MPIWATCH__LATENESS__INIT;
    b.n_windows = 1;
    b.windows = &sp;
    mw__lateness_account(&t, &b);
    s.key = 1;
    mw__lateness_account(&t, &b);
    assert_true(t.lost_ns == INT64_MAX);
    /* A function id out of the table is unknown (0), not cut to another function's id. */
    memset(&t, 0, sizeof t);
    s.lateness_fn = s.diff_fn = 0x10000u + 1;
    mw__lateness_account(&t, &b);
    assert_int_equal(t.lateness_fn, 0);
    assert_int_equal(t.diff_fn, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_delay),      cmocka_unit_test(test_bad_traces),
        cmocka_unit_test(test_queue_full),      cmocka_unit_test(test_budget),
        cmocka_unit_test(test_untraced),        cmocka_unit_test(test_next_job),
        cmocka_unit_test(test_account_crafted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
