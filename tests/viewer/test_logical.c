/* test_logical.c: unit tests of the logical view's model (viewer/model_logical.c): the range
 * analysed into steps and lateness, its picture (cells in their colour of the scale, the marker
 * of the largest differential lateness, messages, aggregated rows and columns), picking and the
 * selection, the cache, and ranges without traces.
 *
 * DESIGN: windows are built as a collector merges them, with the helpers test_trace.c uses
 * too (trace_windows.h: summary cells counting every rank's calls, each rank's records encoded
 * with mw_trace_encode, packed and unpacked). The pattern is a ring: in each of 4 iterations every
 * rank sends to its right neighbour and receives from its left one; one rank starts its send of
 * one iteration DELAY late, so the answer is known without the library: the largest
 * differential lateness is that send's, and lateness appears downstream.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "model_internal.h"

#define TW_MAX_CALLS (MAXR * 8)
#include "trace_windows.h"

#define ITERS 4
#define DELAY 5000000ll /* 5 ms */

/* The ring in window K0: iteration i at i * 20 ms; rank r sends (10 us) at 1 ms, rank `slow`
 * at 1 ms + DELAY in iteration `slow_it`; it receives (posted at 0.5 ms) until 20 us after its
 * left neighbour's send started. Tags are the iteration: one message per channel (seq 0). */
static void ring(win_t *w, uint32_t ranks, uint32_t slow, int slow_it)
{
    memset(w, 0, sizeof *w);
    w->index = K0;
    w->ranks = ranks;
    for (uint32_t r = 0; r < ranks; r++)
        w->exact[r] = 1;
    for (int it = 0; it < ITERS; it++) {
        int64_t base = it * 20000000ll;
        for (uint32_t r = 0; r < ranks; r++) {
            uint32_t left = (r + ranks - 1) % ranks, right = (r + 1) % ranks;
            int64_t s = base + 1000000 + (r == slow && it == slow_it ? DELAY : 0);
            int64_t ls = base + 1000000 + (left == slow && it == slow_it ? DELAY : 0);
            add(w, r, MW_ID_Send, MW_TK_SEND, s, 10000, (int32_t)right, it, 0);
            int64_t rs = s + 20000, re = ls + 20000 > rs + 10000 ? ls + 20000 : rs + 10000;
            add(w, r, MW_ID_Recv, MW_TK_RECV, rs, (uint64_t)(re - rs), (int32_t)left, it, 0);
        }
    }
}

static float *A, *C;
static mw_lview_msg_t msgs[4096];
static mw_lview_coll_t colls[64];

static void bin(const mw_lview_t *lv, mw_lview_metric_t mt, int w, int h, int64_t sel_rank,
                uint64_t s0, uint64_t s1, mw_lview_pic_t *pic, int want)
{
    free(A);
    free(C);
    A = calloc((size_t)w * h, sizeof *A);
    C = calloc((size_t)w * h * 3, sizeof *C);
    assert_non_null(A);
    assert_non_null(C);
    assert_int_equal(mw_lview_bin(lv, mt, w, h, A, C, msgs, 4096, colls, 64, sel_rank, s0, s1, pic),
                     want);
}

/* The colour at plot pixel (x, y) (y from the top). */
static void at(const mw_lview_pic_t *pic, int x, int y, float *a, mw_rgb_t *c)
{
    size_t i = (size_t)(pic->h - 1 - y) * pic->w + x;
    *a = A[i];
    c->r = C[3 * i];
    c->g = C[3 * i + 1];
    c->b = C[3 * i + 2];
}

static int same(mw_rgb_t a, mw_rgb_t b)
{
    return fabsf(a.r - b.r) < 1e-4f && fabsf(a.g - b.g) < 1e-4f && fabsf(a.b - b.b) < 1e-4f;
}

/* 4 ranks, rank 2 late in iteration 1: the marker is rank 2's send, in rank 2's rows, in the
 * top colour of the differential scale; lateness shows downstream (rank 3); every matched
 * message is a line; a second update of the same range does not analyse again. */
static void test_ring(void **state)
{
    (void)state;
    mw_model_t *m = model(4);
    static win_t w;
    ring(&w, 4, 2, 1);
    assert_int_equal(mw_model_add_window(m, build(&w)), 0);
    mw_lview_t *lv = mw_lview_new();
    assert_non_null(lv);
    assert_int_equal(mw_lview_update(lv, m, 0.0, 0.099), 1);
    assert_int_equal(mw_lview_update(lv, m, 0.0, 0.099), 0); /* cached */
    const mw_lview_info_t *in = mw_lview_info(lv);
    assert_int_equal(in->analyses, 1);
    assert_int_equal(in->traced_windows, 1);
    assert_int_equal(in->events, 4 * ITERS * 2);
    assert_int_equal(in->ranks, 4);
    assert_true(in->steps >= 2 * ITERS);
    assert_true(in->diff_event >= 0);
    size_t n = 0;
    const mw_logical_event_t *ev = mw_lview_events(lv, &n);
    assert_int_equal(n, in->events);
    const mw_logical_event_t *mk = &ev[in->diff_event];
    assert_int_equal(mk->rank, 2);
    assert_int_equal(mk->kind, MW_LE_SEND);
    assert_true(mk->diff_ns >= DELAY * 9 / 10 && mk->diff_ns <= DELAY * 11 / 10);
    assert_true(mk->diff_ns == in->diff_max_ns);
    /* Events in step order, ids found. */
    for (size_t i = 1; i < n; i++)
        assert_true(ev[i - 1].step <= ev[i].step);
    for (size_t i = 0; i < n; i++)
        assert_ptr_equal(mw_lview_event(lv, ev[i].id), &ev[i]);
    /* Rank 3 received the late message: late by about the delay. */
    int64_t late3 = 0;
    for (size_t i = 0; i < n; i++)
        if (ev[i].rank == 3 && ev[i].kind == MW_LE_RECV && ev[i].lateness_ns > late3)
            late3 = ev[i].lateness_ns;
    assert_true(late3 >= DELAY * 9 / 10);

    mw_lview_pic_t pic;
    const int W = 400, H = 200;
    bin(lv, MW_LVIEW_DIFF, W, H, -1, 0, 0, &pic, 0);
    assert_int_equal(pic.mark, in->diff_event);
    assert_int_equal(pic.scale_max_ns, mk->diff_ns);
    assert_true(pic.steps_per_col == 1 && pic.ranks_per_row == 1);
    float cx = (pic.mark_x0 + pic.mark_x1) / 2, cy = (pic.mark_y0 + pic.mark_y1) / 2;
    assert_true(cy >= 100 && cy < 150); /* rank 2: rows 100 .. 149 */
    float a;
    mw_rgb_t c;
    at(&pic, (int)cx, (int)cy, &a, &c);
    assert_true(a == 1.0f);
    assert_true(same(c, mw_lview_color(1.0f)));
    /* Every other event's cell: its own colour on the scale. */
    for (size_t i = 0; i < n; i++) {
        float x0, y0, x1, y1;
        mw_lview_cell(&pic, ev[i].step, ev[i].rank, &x0, &y0, &x1, &y1);
        assert_true(y0 >= ev[i].rank * 50.0f && y1 <= (ev[i].rank + 1) * 50.0f);
        at(&pic, (int)((x0 + x1) / 2), (int)((y0 + y1) / 2), &a, &c);
        float t = (float)(ev[i].diff_ns > 0 ? ev[i].diff_ns : 0) / (float)pic.scale_max_ns;
        assert_true(a == 1.0f);
        assert_true(same(c, mw_lview_color(t)));
    }
    /* Messages: each send with its receive. */
    assert_int_equal(pic.msgs, 4 * ITERS);
    assert_int_equal(pic.msgs_out, 4 * ITERS);
    for (size_t i = 0; i < pic.msgs_out; i++)
        assert_true(msgs[i].x1 > msgs[i].x0); /* a receive is at a later step than its send */
    /* By lateness: the scale's top is the largest lateness. */
    bin(lv, MW_LVIEW_LATENESS, W, H, -1, 0, 0, &pic, 0);
    assert_int_equal(pic.scale_max_ns, in->lateness_max_ns);

    /* A click on the marker picks its event; a click between rows on an empty step finds the
     * rank only. */
    mw_pick_t p = mw_lview_pick(lv, m, &pic, (int)cx, (int)cy);
    assert_int_equal(p.kind, MW_PICK_CALL);
    assert_true(p.logical && p.traced);
    assert_int_equal(p.rank, 2);
    assert_int_equal(p.step, mk->step);
    assert_int_equal(p.fn, MW_ID_Send);
    assert_int_equal(p.peer, 3);
    assert_int_equal(p.tag, 1); /* from the record */
    assert_int_equal(p.comm, MW_COMM_ID_WORLD);
    assert_int_equal(p.start_ns, (uint64_t)mk->start_ns);
    p = mw_lview_pick(lv, m, &pic, -1, 10);
    assert_int_equal(p.kind, MW_PICK_NONE);

    /* The call picked elsewhere (rank 2's send, by its global span) is selected here. */
    bin(lv, MW_LVIEW_DIFF, W, H, 2, (uint64_t)mk->start_ns, (uint64_t)mk->start_ns + 10000, &pic,
        0);
    assert_int_equal(pic.sel, in->diff_event);
    bin(lv, MW_LVIEW_DIFF, W, H, 1, (uint64_t)mk->start_ns, (uint64_t)mk->start_ns + 10000, &pic,
        0);
    assert_true(pic.sel != in->diff_event);

    /* Another range of the same window: the same analysis; one more window (not held): again. */
    assert_int_equal(mw_lview_update(lv, m, 0.0, 0.05), 0);
    assert_int_equal(mw_lview_update(lv, m, 0.0, 0.15), 1);
    assert_int_equal(mw_lview_info(lv)->analyses, 2);
    assert_int_equal(mw_lview_info(lv)->events, 4 * ITERS * 2);
    mw_lview_free(lv);
    mw_model_free(m);
}

/* Differential lateness over time per rank: the late send's span (from the end of its rank's
 * previous event to its own end) in the top colour in rank 2's rows, no other row hot; a click
 * there picks the send. */
static void test_strip(void **state)
{
    (void)state;
    mw_model_t *m = model(4);
    static win_t w;
    ring(&w, 4, 2, 1);
    assert_int_equal(mw_model_add_window(m, build(&w)), 0);
    mw_lview_t *lv = mw_lview_new();
    assert_int_equal(mw_lview_update(lv, m, 0.0, 0.099), 1);
    const mw_lview_info_t *in = mw_lview_info(lv);
    size_t n = 0;
    const mw_logical_event_t *ev = mw_lview_events(lv, &n);
    const mw_logical_event_t *mk = &ev[in->diff_event];
    const mw_logical_event_t *pv = mw_lview_event(lv, (uint64_t)mk->rank_prev);
    assert_non_null(pv);
    uint64_t g0 = mw_model_window_start(m, K0), g1 = g0 + WNS;
    const int W = 1000, H = 40; /* 100 ns per column, 10 rows per rank */
    free(A);
    free(C);
    A = calloc((size_t)W * H, sizeof *A);
    C = calloc((size_t)W * H * 3, sizeof *C);
    assert_int_equal(mw_lview_strip(lv, MW_LVIEW_DIFF, in->diff_max_ns, g0, g1, W, H, A, C), 0);
    mw_lview_pic_t pic = {.w = W, .h = H};
    int xa = (int)((double)((uint64_t)pv->end_ns - g0) * W / WNS) + 1;
    int xb = (int)((double)((uint64_t)mk->end_ns - g0) * W / WNS) - 1;
    assert_true(xb - xa > 30); /* 5 ms of 100 */
    float a;
    mw_rgb_t c;
    for (int x = xa; x <= xb; x++) {
        at(&pic, x, 25, &a, &c);
        assert_true(a > 0 && same(c, mw_lview_color(1.0f)));
    }
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            at(&pic, x, y, &a, &c);
            if (y / 10 != 2)
                assert_false(a > 0 && same(c, mw_lview_color(1.0f)));
        }
    mw_pick_t p = mw_lview_strip_pick(lv, m, MW_LVIEW_DIFF, g0, g1, W, H, (xa + xb) / 2, 25);
    assert_int_equal(p.kind, MW_PICK_CALL);
    assert_int_equal(p.rank, 2);
    assert_int_equal(p.step, mk->step);
    assert_int_equal(mw_lview_strip_pick(lv, m, MW_LVIEW_DIFF, g0, g1, W, H, W, 0).kind,
                     MW_PICK_NONE);
    mw_lview_free(lv);
    mw_model_free(m);
}

/* 1000 ranks on 50 rows (20 per row) and more steps than columns: a row and a column show the
 * largest value of their events (the late rank's row is the top colour at the marker's step
 * although its other 19 ranks are on time). */
static void test_aggregated(void **state)
{
    (void)state;
    mw_model_t *m = model(1000);
    static win_t w;
    ring(&w, 1000, 613, 2);
    assert_int_equal(mw_model_add_window(m, build(&w)), 0);
    mw_lview_t *lv = mw_lview_new();
    assert_int_equal(mw_lview_update(lv, m, 0.0, 0.099), 1);
    const mw_lview_info_t *in = mw_lview_info(lv);
    assert_int_equal(in->events, 1000 * ITERS * 2);
    size_t n = 0;
    const mw_logical_event_t *ev = mw_lview_events(lv, &n);
    assert_true(in->diff_event >= 0);
    assert_int_equal(ev[in->diff_event].rank, 613);
    mw_lview_pic_t pic;
    const int h = 50;
    int w2 = (int)in->steps / 2; /* two steps or so per column */
    bin(lv, MW_LVIEW_DIFF, w2, h, -1, 0, 0, &pic, 0);
    assert_true(pic.ranks_per_row == 20.0);
    assert_true(pic.steps_per_col > 1);
    int row = 613 * h / 1000; /* 30 */
    float cx = (pic.mark_x0 + pic.mark_x1) / 2, cy = (pic.mark_y0 + pic.mark_y1) / 2;
    assert_int_equal((int)cy, row);
    float a;
    mw_rgb_t c;
    at(&pic, (int)cx, row, &a, &c);
    assert_true(a == 1.0f && same(c, mw_lview_color(1.0f)));
    /* The rows above and below hold on-time ranks only at that column: not the top colour. */
    at(&pic, (int)cx, row - 2, &a, &c);
    assert_false(same(c, mw_lview_color(1.0f)));
    /* A click on that pixel finds the late event among the 20 ranks and the steps there. */
    mw_pick_t p = mw_lview_pick(lv, m, &pic, (int)cx, row);
    assert_int_equal(p.kind, MW_PICK_CALL);
    assert_int_equal(p.rank, 613);
    assert_int_equal(p.step, ev[in->diff_event].step);
    mw_lview_free(lv);
    mw_model_free(m);
}

/* No traces in the range (summary-only windows, or no window): nothing analysed or drawn, no
 * pick, and the same answer again without a new analysis. */
static void test_untraced(void **state)
{
    (void)state;
    mw_model_t *m = model(4);
    static win_t w;
    ring(&w, 4, 2, 1);
    w.no_traces = 1;
    assert_int_equal(mw_model_add_window(m, build(&w)), 0);
    mw_lview_t *lv = mw_lview_new();
    assert_int_equal(mw_lview_update(lv, m, 0.0, 0.099), 1);
    assert_int_equal(mw_lview_update(lv, m, 0.0, 0.099), 0);
    const mw_lview_info_t *in = mw_lview_info(lv);
    assert_int_equal(in->events, 0);
    assert_int_equal(in->traced_windows, 0);
    assert_int_equal(in->diff_event, -1);
    mw_lview_pic_t pic;
    bin(lv, MW_LVIEW_LATENESS, 100, 40, -1, 0, 0, &pic, -1);
    for (size_t i = 0; i < 100 * 40; i++)
        assert_true(A[i] == 0.0f);
    assert_int_equal(pic.mark, -1);
    assert_int_equal(mw_lview_pick(lv, m, &pic, 50, 20).kind, MW_PICK_NONE);
    /* A range past the data, and an empty range. */
    assert_int_equal(mw_lview_update(lv, m, 5.0, 6.0), 1);
    assert_int_equal(mw_lview_info(lv)->events, 0);
    mw_lview_update(lv, m, 1.0, 1.0);
    assert_int_equal(mw_lview_info(lv)->events, 0);
    mw_lview_free(lv);
    mw_model_free(m);
    /* No job at all. */
    m = mw_model_new(0);
    lv = mw_lview_new();
    mw_lview_update(lv, m, 0.0, 1.0);
    assert_int_equal(mw_lview_info(lv)->events, 0);
    mw_lview_free(lv);
    mw_model_free(m);
}

/* The split of the call view's region: the per-rank timeline above, the plot below, inside the
 * region and not overlapping, with room for the header between them. */
static void test_split(void **state)
{
    (void)state;
    static const int sizes[][2] = {{800, 600}, {1280, 800}, {1920, 1080}, {3840, 2160}};
    for (size_t i = 0; i < 4; i++) {
        mw_layout_t l;
        mw_layout(&l, sizes[i][0], sizes[i][1], sizes[i][0] > 2000 ? 2.0f : 1.0f, 1, 1, 8);
        mw_rect_t rr, pr;
        int head;
        mw_lview_split(&l, &rr, &pr, &head);
        assert_true(rr.h > 0 && pr.h > rr.h);
        assert_true(rr.y == l.density.y && pr.y + pr.h == l.density.y + l.density.h);
        assert_true(head > rr.y + rr.h + l.font_px / 2 && pr.y > head + l.font_px);
        assert_true(rr.x == pr.x && rr.w == pr.w && pr.w == l.density.w);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring),       cmocka_unit_test(test_strip),
        cmocka_unit_test(test_aggregated), cmocka_unit_test(test_untraced),
        cmocka_unit_test(test_split),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(A);
    free(C);
    return rc;
}
