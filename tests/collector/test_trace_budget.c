/* test_trace_budget.c: the job's tracing budget (collector/trace_budget.c, docs/trace.md "The
 * job's budget (collector)"): the policy's figures at 4 and 16,384 ranks (printed: the docs
 * quote them), the plan strings both ways (mpiwatch.trace, agreed with the shim), the
 * hysteresis of re-planning, the window rate it plans from, and the rules' capture ranges.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "fixture.h"
#include "rules.h"
#include "trace_budget.h"

/* The two jobs of docs/trace-plan.md §5, against the default budget: figures printed. */
static void test_policy_figures(void **state)
{
    (void)state;
    const double R = MW_TRACE_BUDGET_DEFAULT, window_s = 0.1;
    static const struct {
        uint32_t ranks;
        double per_rank; /* timed calls per second of one rank */
    } jobs[] = {{4, 100000}, {16384, 20000}};
    for (size_t i = 0; i < 2; i++) {
        double c = jobs[i].ranks * jobs[i].per_rank;
        mw_tplan_t p;
        mw__tplan_compute(c, R, MW_TRACE_BURST_DEFAULT, &p);
        char value[64];
        assert_true(mw__tplan_format(&p, value, sizeof value) > 0);
        double calls_per_window = c * window_s;
        double traced = c * p.share;
        printf("%u ranks x %.0f calls/s = %.4g calls/s (%.4g per %.0f ms window); budget %.4g "
               "calls/s: plan %s, share %.4g (%.3g%%), traced %.4g calls/s",
               jobs[i].ranks, jobs[i].per_rank, c, calls_per_window, window_s * 1e3, R, value,
               p.share, p.share * 100, traced);
        if (p.kind == MW_TPLAN_EVERY)
            printf(", a burst of %u windows (%.3g s) every %u windows (%.3g s); %.4g calls per "
                   "burst window, %.4g MB at 3.5 B per call",
                   p.burst, p.burst * window_s, p.period, p.period * window_s, calls_per_window,
                   calls_per_window * 3.5 / 1e6);
        printf("\n");
        assert_true(traced <= R * 1.000001);
        if (jobs[i].ranks == 4) {
            assert_int_equal(p.kind, MW_TPLAN_ALL);
            assert_string_equal(value, "all");
        } else {
            /* 327.68 M calls/s against 2 M: P = ceil(3 x 163.84) = 492 (trace-plan.md §5). */
            assert_int_equal(p.kind, MW_TPLAN_EVERY);
            assert_int_equal(p.period, 492);
            assert_int_equal(p.burst, 3);
            assert_string_equal(value, "every:492:3@0");
            assert_true(traced > R * 0.99); /* and spends nearly all of it */
        }
    }
    /* Edges: exactly at the budget, just above it, no budget, far above (P capped). */
    mw_tplan_t p;
    mw__tplan_compute(R, R, 3, &p);
    assert_int_equal(p.kind, MW_TPLAN_ALL);
    mw__tplan_compute(R * 1.0001, R, 3, &p);
    assert_int_equal(p.kind, MW_TPLAN_EVERY);
    assert_int_equal(p.period, 4);
    mw__tplan_compute(1e6, 0, 3, &p);
    assert_int_equal(p.kind, MW_TPLAN_OFF);
    mw__tplan_compute(1e30, 1, 3, &p);
    assert_int_equal(p.period, MW_TRACE_PLAN_MAX_PERIOD);
}

/* Deferred bursts: the same two jobs, and a forced small budget for 4 ranks, with the plan the
 * collector sends (G), what arrives per window, and the flight recorder a rank needs (printed:
 * the docs quote them). */
static void test_defer_figures(void **state)
{
    (void)state;
    static const struct {
        uint32_t ranks;
        double per_rank, rate;
    } jobs[] = {{4, 100000, MW_TRACE_BUDGET_DEFAULT},
                {16384, 20000, MW_TRACE_BUDGET_DEFAULT},
                {4, 2000, 200}};
    const double window_s = 0.1;
    for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++) {
        double c = jobs[i].ranks * jobs[i].per_rank, R = jobs[i].rate;
        mw_tplan_t p;
        mw__tplan_compute(c, R, MW_TRACE_BURST_DEFAULT, &p);
        mw__tplan_defer(&p, c, R, jobs[i].ranks, window_s);
        mw_tplan_cost_t k;
        mw__tplan_cost(&p, c, jobs[i].ranks, window_s, &k);
        char value[64];
        assert_true(mw__tplan_format(&p, value, sizeof value) > 0);
        printf("%u ranks x %.0f calls/s, budget %.4g calls/s (%.4g per window): plan %s, G = %u; "
               "traced calls arriving per window %.4g (%.3g MB at %.1f B/call, undeferred %.4g); "
               "flight recorder per rank %u windows, %.3g MB (%.3g MB at %.1f B/call)\n",
               jobs[i].ranks, jobs[i].per_rank, R, R * window_s, value, p.groups, k.arrive_calls,
               k.arrive_bytes / 1e6, MW_TRACE_BYTES_PER_CALL, c * window_s, k.history,
               k.rank_bytes / 1e6, k.rank_bytes_hi / 1e6, MW_TRACE_DEFER_BYTES_PER_CALL);
        if (i == 0) {
            assert_int_equal(p.kind, MW_TPLAN_ALL);
            assert_int_equal(p.groups, 0);
            assert_int_equal(k.history, 1);
            continue;
        }
        assert_int_equal(p.kind, MW_TPLAN_EVERY);
        assert_true(p.groups >= 2 && p.groups <= p.period);
        /* Within the budget's share of a window with the margin the collector takes (a job with
         * fewer ranks than G would need: one rank's burst a window, which the collector's floor
         * takes), and the history within the rank's default cap. */
        if (i == 1)
            assert_true(k.arrive_calls <= R * window_s * MW_TRACE_LATE_MARGIN);
        else
            assert_true(k.arrive_calls == 3 * jobs[i].per_rank * window_s &&
                        k.arrive_calls * MW_TRACE_LATE_RECS_PER_CALL <= MW_TRACE_LATE_MIN_RECORDS);
        assert_true(k.rank_bytes_hi <= MW_TRACE_DEFER_RANK_BYTES);
        assert_int_equal(k.history, p.burst + p.groups);
        if (i == 1) {
            assert_string_equal(value, "every:492:3@0/492");
            /* 33 M calls of a burst window, 115 MB, arrive as 3 x 34 ranks x 2,000 calls. */
            assert_true(k.arrive_calls < 0.25e6 && c * window_s > 30e6);
        } else {
            assert_int_equal(p.groups, 4); /* P = 30 but only 4 ranks: one group per rank */
        }
        mw_tplan_t back;
        assert_int_equal(mw__tplan_parse(value, &back), 0);
        assert_int_equal(back.groups, p.groups);
    }
    /* Within twice the budget, bursts go with their samples; no budget, no groups; G never
     * above what a rank's flight recorder holds. */
    mw_tplan_t p;
    mw__tplan_compute(3e6, 2e6, 3, &p);
    mw__tplan_defer(&p, 3e6, 2e6, 1024, 0.1);
    assert_int_equal(p.kind, MW_TPLAN_EVERY);
    assert_int_equal(p.groups, 0);
    mw__tplan_compute(1e30, 1, 3, &p);
    mw__tplan_defer(&p, 1e30, 1, 1u << 20, 0.1);
    assert_true(p.groups == 0 || p.groups <= MW_TRACE_HISTORY_MAX - 3);
    mw__tplan_compute(1e9, 1e6, 3, &p); /* P = 3000 */
    mw__tplan_defer(&p, 1e9, 1e6, 1u << 20, 0.1);
    assert_int_equal(p.groups, MW_TRACE_HISTORY_MAX - 3);
    mw__tplan_compute(1e9, 1e6, 3, &p); /* 10,000 calls per rank-window: 16 MiB hold 158 */
    mw__tplan_defer(&p, 1e9, 1e6, 10000, 0.1);
    assert_int_equal(p.groups,
                     (uint32_t)((16u << 20) / (10000 * MW_TRACE_DEFER_BYTES_PER_CALL)) - 3);
}

/* The collector's intake of traces sent after their sample, per window of arrival. */
static void test_late_intake(void **state)
{
    (void)state;
    mw__tbudget_t b;
    mw__tbudget_init(&b, 2e6, 3);
    /* 2 M/s x 0.1 s x margin 2 x 2 records per call = 800,000 records a window. */
    uint64_t taken = 0;
    int refused = 0;
    for (int i = 0; i < 100; i++) {
        if (mw__tbudget_late_take(&b, 7, 0.1, 10000, 1000) == 0)
            taken += 10000;
        else
            refused++;
    }
    assert_int_equal(taken, 800000);
    assert_int_equal(refused, 20);
    /* The next window takes again; bytes are capped too. */
    assert_int_equal(mw__tbudget_late_take(&b, 8, 0.1, 10000, 1000), 0);
    assert_int_equal(mw__tbudget_late_take(&b, 8, 0.1, 1, 32u << 20), -1);
    /* A tiny budget still takes MW_TRACE_LATE_MIN_RECORDS (a reach-back capture of a small
     * job); no budget: bytes only. */
    mw__tbudget_init(&b, 200, 3);
    assert_int_equal(mw__tbudget_late_take(&b, 1, 0.1, MW_TRACE_LATE_MIN_RECORDS, 10), 0);
    assert_int_equal(mw__tbudget_late_take(&b, 1, 0.1, 1, 10), -1);
    mw__tbudget_init(&b, 0, 3);
    assert_int_equal(mw__tbudget_late_take(&b, 1, 0.1, 1u << 30, 10), 0);
}

static void test_plan_strings(void **state)
{
    (void)state;
    /* B = P (every window from K on) is read as the shim reads it (docs/steering.md). */
    static const char *const good[] = {
        "all",           "off",         "every:492:3@17000000123", "every:2:1@0",
        "every:3:3@0",   "every:1:1@5", "every:492:3@17/492",      "every:30:3@9/4",
        "17000000000+3", "0+1"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        mw_tplan_t p;
        if (mw__tplan_parse(good[i], &p) < 0)
            fail_msg("'%s' refused", good[i]);
        char back[64];
        if (p.kind != MW_TPLAN_NONE) { /* K+B: read, never written by the planner */
            assert_true(mw__tplan_format(&p, back, sizeof back) > 0);
            assert_string_equal(back, good[i]);
        }
    }
    mw_tplan_t p;
    assert_int_equal(mw__tplan_parse("every:492:3@17", &p), 0);
    assert_int_equal(p.period, 492);
    assert_int_equal(p.burst, 3);
    assert_int_equal(p.first, 17);
    assert_int_equal(mw__tplan_parse("12+4", &p), 0);
    assert_int_equal(p.first, 12);
    assert_int_equal(p.burst, 4);
    static const char *const bad[] = {"",
                                      "ALL",
                                      "all ",
                                      " off",
                                      "every:3:4@0", /* B must not pass P */
                                      "every:3:0@0",
                                      "every:0:0@0",
                                      "every:5:2",
                                      "every:5:2@",
                                      "every:5:2@-1",
                                      "every:+5:2@1",
                                      "every:1000001:2@1",
                                      "every:5:2@18446744073709551616",
                                      "every:5:2@1x",
                                      "every:5:2@1/",
                                      "every:5:2@1/0",
                                      "every:5:2@1/6", /* G must not pass P */
                                      "every:5:2@1/2x",
                                      "every:5:2@1/+2",
                                      "every:5:2@1/2/2",
                                      "5+0",
                                      "5+1001",
                                      "5+",
                                      "+5",
                                      "5 + 2",
                                      "-1+2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (mw__tplan_parse(bad[i], &p) == 0)
            fail_msg("'%s' accepted", bad[i]);
}

/* Plans only after MW_TRACE_PLAN_MIN_WINDOWS, then only when the smoothed rate moves by more
 * than the hysteresis factor and the plan changes. */
static void test_hysteresis(void **state)
{
    (void)state;
    mw__tbudget_t b;
    mw_tplan_t p;
    mw__tbudget_init(&b, 1e6, 3);
    /* The ranks start with `all`: a job within the budget never gets a plan. */
    assert_int_equal(b.plan.kind, MW_TPLAN_ALL);
    assert_int_equal(mw__tbudget_observe(&b, 1e5, &p), 0);
    assert_int_equal(mw__tbudget_observe(&b, 1.2e6, &p), 0); /* within R x OVER */
    assert_int_equal(mw__tbudget_observe(&b, 1e5, &p), 0);
    /* Noise of +-60 % around the rate: no new plan. */
    for (int i = 0; i < 50; i++)
        assert_int_equal(mw__tbudget_observe(&b, i & 1 ? 1.6e5 : 0.4e5, &p), 0);
    /* The job speeds up 100-fold: a few plans while the smoothed rate climbs (each time the plan
     * in force overspends by a quarter), then quiet once it is there, spending at most R. */
    int plans = 0, late = 0;
    for (int i = 0; i < 100; i++) {
        int due = mw__tbudget_observe(&b, 1e7, &p);
        plans += due;
        late += i >= 50 && due;
    }
    printf("100x faster: %d plans, the last %s\n", plans,
           b.plan.kind == MW_TPLAN_EVERY ? "every" : "other");
    assert_true(plans >= 1 && plans <= 8);
    assert_int_equal(late, 0);
    assert_int_equal(b.plan.kind, MW_TPLAN_EVERY);
    /* Planned on the way up (P <= ceil(3 x 1e7 / 1e6) = 30), spending at most R x OVER. */
    assert_true(b.plan.period <= 30 && 1e7 * 3 / b.plan.period <= 1e6 * MW_TRACE_OVER);
    /* Back to a tenth of the budget: underspending by half brings `all` back, once. */
    plans = 0;
    for (int i = 0; i < 100; i++)
        plans += mw__tbudget_observe(&b, 1e5, &p);
    assert_true(plans >= 1 && plans <= 8);
    assert_int_equal(b.plan.kind, MW_TPLAN_ALL);
    /* No budget: never a plan. */
    mw__tbudget_init(&b, 0, 3);
    for (int i = 0; i < 10; i++)
        assert_int_equal(mw__tbudget_observe(&b, 1e9, &p), 0);
}

/* The rate a window stands for: timed calls only, per second of its own length, scaled to the
 * job's size when ranks are missing. */
static void test_window_rate(void **state)
{
    (void)state;
    static mw_fn_sum_t fns[MW_FN_SPACE];
    uint32_t used[2] = {fx_fn(1), mw_fn_id("MPI_Comm_rank")};
    assert_true(used[1] != 0 && !mw_fn_timed(used[1]));
    mw_window_t w;
    memset(&w, 0, sizeof w);
    w.fn = fns;
    w.fn_used = used;
    w.n_fn_used = 2;
    w.window_ns = 50 * MW_NS_PER_MS;
    w.ranks_reporting = 3;
    fns[used[0]].s.count = 300;
    fns[used[1]].s.count = 1000000; /* counted, not timed: never traced */
    double r = mw__tbudget_window_rate(&w, 4);
    assert_true(r > 7999.99 && r < 8000.01); /* 300 / 0.05 s x 4/3 */
    w.ranks_reporting = 0;
    assert_true(mw__tbudget_window_rate(&w, 4) < 0);
}

/* A rule's capture range (docs/steering.md): strict, around the firing. */
static void test_capture_range(void **state)
{
    (void)state;
    int64_t a, b;
    assert_int_equal(mw__rules_parse_capture("-5..+3", &a, &b), 0);
    assert_int_equal(a, -5);
    assert_int_equal(b, 3);
    assert_int_equal(mw__rules_parse_capture("0..0", &a, &b), 0);
    assert_int_equal(mw__rules_parse_capture("2..4", &a, &b), 0);
    assert_int_equal(a, 2);
    assert_int_equal(mw__rules_parse_capture("-1000..-1", &a, &b), 0);
    assert_int_equal(mw__rules_parse_capture("-500..+499", &a, &b), 0);
    static const char *const bad[] = {
        "-5..",   "..3",    "-5...3",   "-5..+3 ", " -5..+3",    "3..-5", "-5.+3", "-5..++3",
        "--5..3", "-5..3x", "-1001..0", "0..1001", "-500..+500", "5",     "a..b",  ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (mw__rules_parse_capture(bad[i], &a, &b) == 0)
            fail_msg("'%s' accepted", bad[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policy_figures), cmocka_unit_test(test_plan_strings),
        cmocka_unit_test(test_hysteresis),     cmocka_unit_test(test_window_rate),
        cmocka_unit_test(test_capture_range),  cmocka_unit_test(test_defer_figures),
        cmocka_unit_test(test_late_intake),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
