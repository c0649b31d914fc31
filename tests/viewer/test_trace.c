/* test_trace.c: unit tests of the viewer's traced windows (viewer/model_trace.c,
 * model_ranks.c, and the traced paths of model_density.c and model_pick.c).
 *
 * DESIGN: windows are built here as a collector merges them (summary cells counting every
 * rank's calls, each rank's records encoded with mw_trace_encode), packed and unpacked so that
 * the model owns heap messages as behind the data source. The grid is 100 ms windows of 10
 * sub-slots with 40 log2 duration bins; the time axis starts at the first window added.
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

#include "trace_windows.h"

/* The known window: every rank calls MPI_Wait (100 us) every 10 ms; rank 2 an MPI_Barrier of 30
 * ms from 50 ms, rank 1 an MPI_Allreduce of 5 ms from 20 ms, rank 0 sends to rank 3 (1 ms from
 * 10 ms, tag 7) which receives it (8 ms from 5 ms). */
static void known(win_t *w, uint64_t index, uint32_t ranks)
{
    memset(w, 0, sizeof *w);
    w->index = index;
    w->ranks = ranks;
    for (uint32_t r = 0; r < ranks; r++) {
        w->exact[r] = 1;
        for (int i = 0; i < 10; i++)
            add(w, r, MW_ID_Wait, MW_TK_CALL, i * 10000000ll + 2000000 + r * 100000, 100000, -1, 0,
                0);
    }
    add(w, 2, MW_ID_Barrier, MW_TK_COLL, 50000000, 30000000, -1, 0, 0);
    add(w, 1, MW_ID_Allreduce, MW_TK_COLL, 20000000, 5000000, -1, 0, 0);
    add(w, 0, MW_ID_Send, MW_TK_SEND, 10000000, 1000000, 3, 7, 0);
    add(w, 3, MW_ID_Recv, MW_TK_RECV, 5000000, 8000000, 0, 7, 0);
}

static double dsum(const float *D, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += D[i];
    return s;
}

/* A traced window's calls land at their exact pixels, each counted once (its summary cells are
 * not drawn), on the log and on the linear axis. */
static void test_exact_pixels(void **state)
{
    (void)state;
    mw_model_t *m = model(4);
    static win_t w;
    known(&w, K0, 4);
    assert_int_equal(mw_model_add_window(m, build(&w)), 0);
    assert_int_equal(mw_trace_cover(m, K0), MW_COVER_EXACT);
    mw_view_t v;
    mw_view_init(&v);
    v.repr = MW_REPR_START;
    const int W = 1000, H = 400;
    float *D = calloc((size_t)W * H, sizeof *D), *C = calloc((size_t)W * H * 3, sizeof *C);
    assert_true(D && C);
    double d0, d1;
    mw_density_range(m, 0.0, 0.1, &d0, &d1);
    for (int lin = 0; lin < 2; lin++) {
        v.dur_linear = lin;
        mw_density_bin(m, &v, 0.0, 0.1, d0, d1, W, H, D, C);
        assert_true(fabs(dsum(D, (size_t)W * H) - (double)w.n) < 1e-3); /* each call once */
        /* The Allreduce: x from its start, y from its duration. */
        int x = (int)floor(20e6 / 100e6 * W);
        int y = lin ? (int)floor(5e6 / d1 * H)
                    : (int)floor((log2(5e6) - log2(d0)) * H / (log2(d1) - log2(d0)));
        size_t i = (size_t)y * W + x;
        assert_true(D[i] >= 1.0f);
        mw_rgb_t c = mw_model_color(m, MW_ID_Allreduce);
        assert_true(fabsf(C[3 * i] - c.r) < 1e-4f && fabsf(C[3 * i + 2] - c.b) < 1e-4f);
        /* Nothing one pixel off in time where no call is. */
        assert_true(D[(size_t)y * W + x + 5] == 0.0f);
    }
    /* END: the Barrier at its end (80 ms). */
    v.dur_linear = 0;
    v.repr = MW_REPR_END;
    mw_density_bin(m, &v, 0.0, 0.1, d0, d1, W, H, D, C);
    int x = (int)floor(80e6 / 100e6 * W);
    int y = (int)floor((log2(30e6) - log2(d0)) * H / (log2(d1) - log2(d0)));
    assert_true(D[(size_t)y * W + x] >= 1.0f);
    free(D);
    free(C);
    mw_model_free(m);
}

/* Ranks 1 and 3 summary only: their calls come from the cells, which leave out the exact
 * ranks' calls, so every call is counted exactly once. */
static void test_partial(void **state)
{
    (void)state;
    mw_model_t *m = model(4);
    static win_t w;
    known(&w, K0, 4);
    w.exact[1] = w.exact[3] = 0;
    assert_int_equal(mw_model_add_window(m, build(&w)), 0);
    assert_int_equal(mw_trace_cover(m, K0), MW_COVER_PARTIAL);
    const mw_trace_window_t *tw = mw_trace_window(m, K0);
    assert_non_null(tw);
    assert_int_equal(tw->exact, 2);
    assert_int_equal(tw->n_ranks, 4);
    mw_view_t v;
    mw_view_init(&v);
    const int W = 800, H = 300;
    float *D = calloc((size_t)W * H, sizeof *D), *C = calloc((size_t)W * H * 3, sizeof *C);
    double d0, d1;
    mw_density_range(m, 0.0, 0.1, &d0, &d1);
    for (int r = MW_REPR_START; r <= MW_REPR_END; r++) {
        v.repr = (mw_repr_t)r;
        mw_density_bin(m, &v, 0.0, 0.1, d0, d1, W, H, D, C);
        assert_true(fabs(dsum(D, (size_t)W * H) - (double)w.n) < 1e-3);
    }
    free(D);
    free(C);
    mw_model_free(m);
}

/* Decoded records are bounded: windows outside the call view's range go first (counted); a
 * window that does not fit is drawn from its summary (counted). */
static void test_cap(void **state)
{
    (void)state;
    mw_model_t *m = model(4);
    mw_model_set_trace_cap(m, 100); /* a known window holds 44 records */
    static win_t w;
    for (uint64_t k = K0; k < K0 + 4; k++) {
        known(&w, k, 4);
        assert_int_equal(mw_model_add_window(m, build(&w)), 0);
    }
    mw_model_need(m, 0.0, 0.4, 0.25, 0.35); /* focus: windows K0+2 .. K0+3 */
    assert_int_equal(mw_trace_cover(m, K0), MW_COVER_EXACT);
    assert_int_equal(mw_trace_cover(m, K0 + 1), MW_COVER_EXACT);
    assert_int_equal(mw_trace_cover(m, K0 + 2), MW_COVER_EXACT); /* K0 went for it */
    mw_trace_stats_t st;
    mw_trace_stats(m, &st);
    assert_int_equal(st.windows_evicted, 1);
    assert_true(st.records_kept <= 100);
    assert_int_equal(mw_trace_cover(m, K0 + 3), MW_COVER_EXACT); /* K0 + 1 goes */
    mw_model_set_trace_cap(m, 50);
    /* Nothing outside the focus left to evict: K0 + 1 does not fit, summary, counted. */
    mw_model_need(m, 0.0, 0.4, 0.1, 0.35);
    assert_int_equal(mw_trace_cover(m, K0 + 1), MW_COVER_SUMMARY);
    mw_trace_stats(m, &st);
    assert_true(st.over_cap >= 1);
    mw_model_free(m);
}

/* A trace that comes after its window (a reach-back capture) is folded into it. */
static void test_late(void **state)
{
    (void)state;
    mw_model_t *m = model(4);
    static win_t w;
    known(&w, K0, 4);
    w.exact[3] = 0;
    assert_int_equal(mw_model_add_window(m, build(&w)), 0);
    assert_int_equal(mw_trace_cover(m, K0), MW_COVER_PARTIAL);
    /* Unpacked as from a feed message. */
    Mpiwatch__RankTrace *rt = rank_trace(&w, 3, 1);
    size_t len = mpiwatch__rank_trace__get_packed_size(rt);
    uint8_t *buf = malloc(len);
    mpiwatch__rank_trace__pack(rt, buf);
    free_rank_trace(rt);
    assert_int_equal(mw_model_add_trace(m, mpiwatch__rank_trace__unpack(NULL, len, buf)), 0);
    assert_int_equal(mw_trace_cover(m, K0), MW_COVER_EXACT);
    /* A rank outside the job is refused. */
    rt = mpiwatch__rank_trace__unpack(NULL, len, buf);
    rt->rank = 4;
    assert_int_equal(mw_model_add_trace(m, rt), -1);
    /* The oldest go past MW_TRACE_LATE_MAX. */
    for (unsigned i = 0; i < MW_TRACE_LATE_MAX + 5; i++) {
        rt = mpiwatch__rank_trace__unpack(NULL, len, buf);
        rt->trace->window = K0 + 1000 + i;
        assert_int_equal(mw_model_add_trace(m, rt), 0);
    }
    mw_trace_stats_t st;
    mw_trace_stats(m, &st);
    assert_int_equal(st.late_dropped, 6);
    assert_int_equal(st.late_refused, 1);
    free(buf);
    mw_model_free(m);
}

/* Traces that do not hold are left out and counted, never trusted. */
static void test_hostile(void **state)
{
    (void)state;
    mw_model_t *m = model(4);
    static win_t w;
    known(&w, K0, 4);
    Mpiwatch__Window *win = build(&w);
    win->traces[0]->trace->window = K0 + 1;           /* another window's */
    win->traces[1]->rank = 99;                        /* not a rank of the job */
    win->traces[2]->trace->count += 1;                /* one record more than the block holds */
    uint8_t *d = win->traces[3]->trace->records.data; /* garbage */
    for (size_t i = 0; i < win->traces[3]->trace->records.len; i++)
        d[i] = (uint8_t)(0xff - i);
    assert_int_equal(mw_model_add_window(m, win), 0);
    assert_int_equal(mw_trace_cover(m, K0), MW_COVER_SUMMARY);
    mw_trace_stats_t st;
    mw_trace_stats(m, &st);
    assert_int_equal(st.decode_errors, 4);
    /* Records with times no window holds are left out and counted; a base far from the
     * window's start refuses the trace. */
    static win_t w2;
    known(&w2, K0 + 1, 4);
    add(&w2, 0, MW_ID_Wait, MW_TK_CALL, INT64_MAX - 5, UINT64_MAX / 2, -1, 0, 0);
    add(&w2, 1, MW_ID_Wait, MW_TK_CALL, INT64_MIN + 5, 10, -1, 0, 0);
    Mpiwatch__Window *win2 = build(&w2);
    win2->traces[2]->trace->window_start_ns = UINT64_MAX - 3;
    assert_int_equal(mw_model_add_window(m, win2), 0);
    assert_int_equal(mw_trace_cover(m, K0 + 1), MW_COVER_PARTIAL);
    mw_trace_stats(m, &st);
    assert_int_equal(st.records_refused, 2);
    assert_int_equal(st.decode_errors, 5);
    /* Drawn from the summary all the same. */
    mw_view_t v;
    mw_view_init(&v);
    float *D = calloc(400 * 200, sizeof *D), *C = calloc(400 * 200 * 3, sizeof *C);
    double d0, d1;
    mw_density_range(m, 0.0, 0.1, &d0, &d1);
    v.repr = MW_REPR_END;
    mw_density_bin(m, &v, 0.0, 0.1, d0, d1, 400, 200, D, C);
    assert_true(dsum(D, 400 * 200) > 0);
    free(D);
    free(C);
    mw_model_free(m);
}

/* Picking a traced call gives all its record says. */
static void test_pick_traced(void **state)
{
    (void)state;
    mw_model_t *m = model(4);
    static win_t w;
    known(&w, K0, 4);
    assert_int_equal(mw_model_add_window(m, build(&w)), 0);
    mw_layout_t l;
    mw_layout(&l, 1280, 800, 1.0f, 0, 1, 5);
    mw_view_t v;
    mw_view_init(&v);
    v.repr = MW_REPR_START;
    v.sel0 = 0.0;
    v.sel1 = 0.1;
    double d0, d1;
    mw_density_range(m, 0.0, 0.1, &d0, &d1);
    const mw_rect_t *r = &l.density;
    int x = r->x + (int)floor(10e6 / 100e6 * r->w);
    int row = (int)floor((log2(1e6) - log2(d0)) * r->h / (log2(d1) - log2(d0)));
    mw_pick_t p = mw_pick(m, &v, &l, x, r->y + r->h - 1 - row, 3);
    assert_int_equal(p.kind, MW_PICK_CALL);
    assert_int_equal(p.fn, MW_ID_Send);
    assert_int_equal(p.rank, 0);
    assert_int_equal(p.peer, 3);
    assert_int_equal(p.tag, 7);
    assert_int_equal(p.traced, 1);
    assert_int_equal(p.comm, MW_COMM_ID_WORLD);
    assert_int_equal(p.duration_ns, 1000000);
    assert_int_equal(p.start_ns, K0 * WNS + 10000000);
    mw_model_free(m);
}

/* A call still in progress at the newest window grows to that window's end. */
static void test_open(void **state)
{
    (void)state;
    mw_model_t *m = model(4);
    static win_t w;
    known(&w, K0, 4);
    assert_int_equal(mw_model_add_window(m, build(&w)), 0);
    known(&w, K0 + 1, 4);
    add(&w, 1, MW_ID_Bcast, MW_TK_COLL, 40000000, 60000000, 0, 0, MW_TF_OPEN);
    assert_int_equal(mw_model_add_window(m, build(&w)), 0);
    known(&w, K0 + 2, 4);
    w.no_traces = 1;
    assert_int_equal(mw_model_add_window(m, build(&w)), 0); /* newest, not traced */
    mw_trace_open_t o[4];
    assert_int_equal(mw_trace_open_calls(m, o, 4), 1);
    assert_int_equal(o[0].rank, 1);
    assert_int_equal(o[0].fn, MW_ID_Bcast);
    assert_int_equal(o[0].start_ns, (K0 + 1) * WNS + 40000000);
    assert_int_equal(o[0].dur_ns, 60000000);
    assert_int_equal(o[0].grown_ns, 160000000); /* to the end of window K0 + 2 */
    mw_model_free(m);
}

/* Rows: every pixel row maps to ranks whose rows hold it, in both regimes. */
static void test_rows(void **state)
{
    (void)state;
    static const uint32_t sizes[] = {1, 4, 7, 300, 301, 1000, 4096, 100000};
    const int h = 300;
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        uint32_t R = sizes[s];
        uint32_t next = 0;
        for (int y = 0; y < h; y++) {
            uint32_t last = 0, first = mw_ranks_at(R, h, y, &last);
            double a, b;
            mw_ranks_rows(R, h, first, &a, &b);
            if (R <= (uint32_t)h && b <= a) /* no row */
                continue;
            assert_true(a <= y && y < b);
            mw_ranks_rows(R, h, last, &a, &b);
            assert_true(a <= y && y < b);
            if (R > (uint32_t)h) { /* rows partition the ranks in order */
                assert_int_equal(first, next);
                next = last + 1;
            }
        }
        if (R > (uint32_t)h)
            assert_int_equal(next, R);
    }
}

/* The rank timeline: spans in their function's colour, the message from the send's start in
 * the sender's row to the receive's end in the receiver's row; aggregated rows show the
 * dominant function at the share's opacity. */
static void test_ranks_bin(void **state)
{
    (void)state;
    mw_model_t *m = model(4);
    static win_t w;
    known(&w, K0, 4);
    assert_int_equal(mw_model_add_window(m, build(&w)), 0);
    mw_view_t v;
    mw_view_init(&v);
    const int W = 1000, H = 400;
    float *A = calloc((size_t)W * H, sizeof *A), *C = calloc((size_t)W * H * 3, sizeof *C);
    mw_ranks_msg_t msg[8];
    mw_ranks_info_t info;
    assert_int_equal(mw_ranks_bin(m, &v, 0.0, 0.1, W, H, A, C, msg, 8, &info), 0);
    assert_int_equal(info.msgs, 1);
    assert_int_equal(info.msgs_out, 1);
    assert_int_equal(msg[0].src, 0);
    assert_int_equal(msg[0].dst, 3);
    assert_true(fabs(msg[0].x0 - 0.1 * W) < 1e-6);  /* send start: 10 ms */
    assert_true(fabs(msg[0].x1 - 0.13 * W) < 1e-6); /* receive end: 13 ms */
    assert_true(fabs(msg[0].y0 - 50) < 1e-9 && fabs(msg[0].y1 - 350) < 1e-9);
    /* The Barrier: rank 2's row (200 .. 300 from the top), 50 .. 80 ms. */
    size_t i = (size_t)(H - 1 - 250) * W + 650;
    assert_true(fabsf(A[i] - 1.0f) < 1e-5f);
    mw_rgb_t c = mw_model_color(m, MW_ID_Barrier);
    assert_true(fabsf(C[3 * i] - c.r) < 1e-5f && fabsf(C[3 * i + 1] - c.g) < 1e-5f);
    assert_true(A[(size_t)(H - 1 - 50) * W + 650] == 0.0f); /* rank 0 there: nothing */
    free(A);
    free(C);
    mw_model_free(m);

    /* 1000 ranks on 100 rows: row 0 holds ranks 0..9, all in MPI_Barrier the whole window;
     * row 1 ranks 10..19, of which 10..14 in MPI_Allreduce: half the time in MPI. */
    m = model(1000);
    static win_t big;
    memset(&big, 0, sizeof big);
    big.index = K0;
    big.ranks = 1000;
    for (uint32_t r = 0; r < 1000; r++)
        big.exact[r] = 1;
    for (uint32_t r = 0; r < 10; r++)
        add(&big, r, MW_ID_Barrier, MW_TK_COLL, 0, WNS, -1, 0, 0);
    for (uint32_t r = 10; r < 15; r++)
        add(&big, r, MW_ID_Allreduce, MW_TK_COLL, 0, WNS, -1, 0, 0);
    assert_int_equal(mw_model_add_window(m, build(&big)), 0);
    const int h2 = 100, w2 = 50;
    A = calloc((size_t)w2 * h2, sizeof *A);
    C = calloc((size_t)w2 * h2 * 3, sizeof *C);
    assert_int_equal(mw_ranks_bin(m, &v, 0.0, 0.1, w2, h2, A, C, msg, 8, &info), 0);
    assert_int_equal(info.groups, 100);
    size_t r0 = (size_t)(h2 - 1) * w2 + 20, r1 = (size_t)(h2 - 2) * w2 + 20;
    assert_true(fabsf(A[r0] - 1.0f) < 1e-4f);
    assert_true(fabsf(A[r1] - (MW_RANKS_ALPHA_MIN + (1 - MW_RANKS_ALPHA_MIN) * 0.5f)) < 1e-3f);
    c = mw_model_color(m, MW_ID_Allreduce);
    assert_true(fabsf(C[3 * r1] - c.r) < 1e-5f);
    assert_true(A[(size_t)(h2 - 3) * w2 + 20] == 0.0f); /* ranks 20..29: no MPI */
    free(A);
    free(C);
    mw_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_pixels), cmocka_unit_test(test_partial),
        cmocka_unit_test(test_cap),          cmocka_unit_test(test_late),
        cmocka_unit_test(test_hostile),      cmocka_unit_test(test_pick_traced),
        cmocka_unit_test(test_open),         cmocka_unit_test(test_rows),
        cmocka_unit_test(test_ranks_bin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
