/* trace_budget.c: the job's tracing budget, and the plans that spend it (docs/trace.md, "The
 * job's budget (collector)").
 *
 * DESIGN: the budget is the job's, not a rank's: R traced calls per second for the whole job
 * (--trace-budget, default MW_TRACE_BUDGET_DEFAULT). The collector knows exactly what the job
 * does from the closed windows' summaries (timed calls per window, all ranks), so it plans from
 * them: when the job's rate c fits (c <= R) every window is traced (`all`); otherwise every rank
 * traces the same B consecutive windows every P windows (`every:P:B@K`), with
 * P = ceil(B * c / R), so that the traced share B / P is at most R / c and, inside a burst,
 * every message and every collective has both ends traced (rotating subsets of ranks would
 * almost never trace both ends of a message, nor a whole collective).
 *
 * A plan is one steering message for all ranks (mpiwatch.trace, no rank list) and a job event
 * "trace_plan", so that the recording says which plan was in force; the coverage itself is in
 * every merged window (Window.traces, traced_ranks, trace_left_out), taken from what arrived,
 * so a replay shows the same coverage. The rate is smoothed (EWMA over windows; a rise counts at
 * once, a fall as the average follows it) and a new plan goes out only when the plan in force
 * spends more than MW_TRACE_OVER x R at it, or (tracing a share of the windows) less than
 * R / MW_TRACE_UNDER, never every window: a plan that changed
 * every window would restart its bursts every time. Overspending is the sharper bound: a job
 * that speeds up must not go on sending 2 R for long. Without a steering endpoint there is no plan
 * (logged once): the ranks follow their own default. The ranks start with `all`, which is taken
 * as the plan in force: a job within its budget never gets a plan (nor a steering message it did
 * not ask for).
 *
 * A burst of a large job is too much to take at once (16,384 ranks: 33 M calls, 115 MB in one
 * window), so above MW_TRACE_DEFER_OVER x R the plan defers it (`every:P:B@K/G`): the ranks still
 * trace the burst together but send it from their flight recorder in G groups of ranks, one
 * group per window after the burst (mw__tplan_defer); traces arriving after their sample are
 * taken at most at MW_TRACE_LATE_MARGIN x the budget's pace per window (mw__tbudget_late_take).
 */
#include "trace_budget.h"

#include "collector.h"
#include "publish.h"
#include "steer.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EWMA_NEW 0.3 /* weight of the newest window in the smoothed rate */

void mw__tplan_compute(double calls_per_s, double rate, uint32_t burst, mw_tplan_t *out)
{
    memset(out, 0, sizeof *out);
    if (!(rate > 0)) {
        out->kind = MW_TPLAN_OFF;
        return;
    }
    if (!(calls_per_s > rate)) {
        out->kind = MW_TPLAN_ALL;
        out->share = 1.0;
        return;
    }
    if (burst == 0)
        burst = 1;
    double p = ceil((double)burst * calls_per_s / rate);
    if (p > MW_TRACE_PLAN_MAX_PERIOD)
        p = MW_TRACE_PLAN_MAX_PERIOD;
    if (p <= burst) /* rounding: c just above R */
        p = burst + 1;
    out->kind = MW_TPLAN_EVERY;
    out->period = (uint32_t)p;
    out->burst = burst;
    out->share = (double)burst / p;
}

void mw__tplan_defer(mw_tplan_t *p, double calls_per_s, double rate, uint32_t ranks,
                     double window_s)
{
    p->groups = 0;
    if (p->kind != MW_TPLAN_EVERY || !(rate > 0) || !ranks || !(window_s > 0) ||
        !(calls_per_s > rate * MW_TRACE_DEFER_OVER))
        return;
    double g = ceil((double)p->burst * calls_per_s / rate);
    if (g > p->period)
        g = p->period; /* never into the next burst's sending */
    if (g > MW_TRACE_HISTORY_MAX - p->burst)
        g = MW_TRACE_HISTORY_MAX - p->burst;
    /* The flight recorder holds B + G windows of one rank. */
    double per_window = calls_per_s / ranks * window_s * MW_TRACE_DEFER_BYTES_PER_CALL;
    if (per_window > 0) {
        double fit = floor((double)MW_TRACE_DEFER_RANK_BYTES / per_window) - p->burst;
        if (g > fit)
            g = fit;
    }
    if (g > ranks)
        g = ranks; /* a group without ranks sends nothing */
    if (g >= 2)
        p->groups = (uint32_t)g;
}

void mw__tplan_cost(const mw_tplan_t *p, double calls_per_s, uint32_t ranks, double window_s,
                    mw_tplan_cost_t *out)
{
    memset(out, 0, sizeof *out);
    double win_calls = calls_per_s * window_s; /* the whole job's calls of one window */
    double per_rank = ranks ? win_calls / ranks : 0;
    out->history = 1;
    if (p->kind == MW_TPLAN_OFF) {
        win_calls = 0;
    } else if (p->kind == MW_TPLAN_EVERY && p->groups) {
        /* One group per window after the burst: its ranks' B windows (groups differ by one rank
         * at most). */
        double group = ranks ? ceil((double)ranks / p->groups) : 0;
        win_calls = group * per_rank * p->burst;
        out->history = p->burst + p->groups;
    }
    out->arrive_calls = win_calls;
    out->arrive_bytes = win_calls * MW_TRACE_BYTES_PER_CALL;
    out->rank_bytes = out->history * per_rank * MW_TRACE_BYTES_PER_CALL;
    out->rank_bytes_hi = out->history * per_rank * MW_TRACE_DEFER_BYTES_PER_CALL;
}

int mw__tbudget_late_take(mw__tbudget_t *b, uint64_t now_w, double window_s, uint64_t records,
                          uint64_t bytes)
{
    if (now_w != b->late_window) {
        b->late_window = now_w;
        b->late_records = b->late_bytes = 0;
    }
    double cap = b->rate * window_s * MW_TRACE_LATE_MARGIN * MW_TRACE_LATE_RECS_PER_CALL;
    if (cap < MW_TRACE_LATE_MIN_RECORDS)
        cap = MW_TRACE_LATE_MIN_RECORDS;
    if (!(b->rate > 0))
        cap = (double)UINT64_MAX; /* no budget: the bytes only */
    if ((double)(b->late_records + records) > cap ||
        b->late_bytes + bytes > MW_TRACE_WINDOW_MAX_BYTES)
        return -1;
    b->late_records += records;
    b->late_bytes += bytes;
    return 0;
}

int mw__tplan_format(const mw_tplan_t *p, char *buf, size_t len)
{
    int n;
    switch (p->kind) {
    case MW_TPLAN_ALL:
        n = snprintf(buf, len, "all");
        break;
    case MW_TPLAN_OFF:
        n = snprintf(buf, len, "off");
        break;
    case MW_TPLAN_EVERY:
        n = p->groups ? snprintf(buf, len, "every:%" PRIu32 ":%" PRIu32 "@%" PRIu64 "/%" PRIu32,
                                 p->period, p->burst, p->first, p->groups)
                      : snprintf(buf, len, "every:%" PRIu32 ":%" PRIu32 "@%" PRIu64, p->period,
                                 p->burst, p->first);
        break;
    default:
        return -1;
    }
    return n < 0 || (size_t)n >= len ? -1 : n;
}

/* A decimal number without sign or blanks, at most max; *s moves past it. */
static int parse_num(const char **s, uint64_t max, uint64_t *out)
{
    const char *p = *s;
    uint64_t v = 0;
    if (*p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (max - (uint64_t)(*p - '0')) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    *s = p;
    *out = v;
    return 0;
}

int mw__tplan_parse(const char *value, mw_tplan_t *out)
{
    memset(out, 0, sizeof *out);
    uint64_t a, b, k;
    const char *s = value;
    if (strcmp(value, "all") == 0) {
        out->kind = MW_TPLAN_ALL;
        out->share = 1.0;
        return 0;
    }
    if (strcmp(value, "off") == 0) {
        out->kind = MW_TPLAN_OFF;
        return 0;
    }
    if (strncmp(s, "every:", 6) == 0) {
        s += 6;
        if (parse_num(&s, MW_TRACE_PLAN_MAX_PERIOD, &a) < 0 || *s++ != ':' ||
            parse_num(&s, MW_TRACE_PLAN_MAX_PERIOD, &b) < 0 || *s++ != '@' ||
            parse_num(&s, UINT64_MAX, &k) < 0 || b == 0 || b > a)
            return -1;
        uint64_t g = 0;
        if (*s == '/' && (s++, parse_num(&s, MW_TRACE_PLAN_MAX_PERIOD, &g) < 0 || g == 0 || g > a))
            return -1;
        if (*s)
            return -1;
        out->groups = (uint32_t)g;
        out->kind = MW_TPLAN_EVERY;
        out->period = (uint32_t)a;
        out->burst = (uint32_t)b;
        out->first = k;
        out->share = (double)b / (double)a;
        return 0;
    }
    /* K+B: one burst (a kind of its own for the reader; the planner never sends it). */
    if (parse_num(&s, UINT64_MAX, &k) < 0 || *s++ != '+' ||
        parse_num(&s, MW_CAPTURE_MAX_WINDOWS, &b) < 0 || *s || b == 0)
        return -1;
    out->kind = MW_TPLAN_NONE;
    out->first = k;
    out->burst = (uint32_t)b;
    return 0;
}

void mw__tbudget_init(mw__tbudget_t *b, double rate, uint32_t burst)
{
    memset(b, 0, sizeof *b);
    b->rate = rate;
    b->burst = burst ? burst : MW_TRACE_BURST_DEFAULT;
    /* The ranks start with `all` (MPIWATCH_TRACE_PLAN's default): that is the plan in force
     * until the collector sends another, so a job within its budget never gets a message. */
    b->plan.kind = MW_TPLAN_ALL;
    b->plan.share = 1.0;
}

static int plan_same(const mw_tplan_t *a, const mw_tplan_t *b)
{
    return a->kind == b->kind && a->period == b->period && a->burst == b->burst &&
           a->groups == b->groups;
}

int mw__tbudget_observe(mw__tbudget_t *b, double calls_per_s, mw_tplan_t *plan)
{
    if (!(calls_per_s >= 0))
        return 0;
    b->c_rate = b->windows ? (1 - EWMA_NEW) * b->c_rate + EWMA_NEW * calls_per_s : calls_per_s;
    b->windows++;
    if (b->windows < MW_TRACE_PLAN_MIN_WINDOWS || !(b->rate > 0))
        return 0;
    /* A rise counts at once (the plan must not overspend while the average catches up, which
     * at a job's start would send a plan every window), a fall only as the average falls. */
    double c = calls_per_s > b->c_rate ? calls_per_s : b->c_rate;
    if (b->plan.kind != MW_TPLAN_NONE) { /* always, since init: kept for clarity */
        double use = c * b->plan.share;  /* traced calls per second under the plan */
        if (use <= b->rate * MW_TRACE_OVER &&
            (b->plan.kind == MW_TPLAN_ALL || use >= b->rate / MW_TRACE_UNDER))
            return 0;
    }
    mw_tplan_t p;
    mw__tplan_compute(c, b->rate, b->burst, &p);
    mw__tplan_defer(&p, c, b->rate, b->ranks, b->window_s);
    if (b->plan.kind != MW_TPLAN_NONE && plan_same(&p, &b->plan))
        return 0;
    b->c_rate = c; /* the average goes on from the rate the plan was made for */
    b->planned = c;
    b->plan = p;
    *plan = p;
    return 1;
}

double mw__tbudget_window_rate(const mw_window_t *w, uint32_t size)
{
    if (!w->ranks_reporting || !w->window_ns)
        return -1;
    uint64_t calls = 0;
    for (uint32_t i = 0; i < w->n_fn_used; i++)
        if (mw_fn_timed(w->fn_used[i]))
            calls += w->fn[w->fn_used[i]].s.count;
    double scale = size > w->ranks_reporting ? (double)size / w->ranks_reporting : 1.0;
    return (double)calls * scale / ((double)w->window_ns / 1e9);
}

void mw__tbudget_window(mw_collector_t *c, const mw_window_t *w)
{
    mw__tbudget_t *b = &c->tbudget;
    mw_tplan_t p;
    b->ranks = c->job.size;
    b->window_s = (double)w->window_ns / 1e9;
    if (!mw__tbudget_observe(b, mw__tbudget_window_rate(w, c->job.size), &p))
        return;
    if (p.kind == MW_TPLAN_EVERY) {
        /* Every rank starts at the same window K, far enough ahead for the message to reach
         * them all (the ranks keep the windows before K in their flight recorder anyway). */
        p.first = mw_grid_index(&c->job.grid, c->now.real_ns + MW_TRACE_PLAN_LEAD_NS) + 1;
        if (p.first <= w->index)
            p.first = w->index + 1;
        b->plan.first = p.first;
    }
    char value[64], detail[200];
    if (mw__tplan_format(&p, value, sizeof value) < 0)
        return;
    if (mw__steer_send(c, "mpiwatch.trace", value, NULL, 0) < 0) {
        if (!b->told_no_steer)
            MW_LOG(MW_LOG_INFO,
                   "trace budget: no trace plan sent (no steering endpoint, --steer): the ranks "
                   "follow their own default (the plan would be %s for %.3g calls/s)",
                   value, b->c_rate);
        b->told_no_steer = 1; /* the plan stays the reference: no retry every window */
        return;
    }
    b->plans++;
    c->tstats.plans++;
    snprintf(detail, sizeof detail, "%s calls_per_s=%.4g budget=%.4g share=%.4g window=%" PRIu64,
             value, b->c_rate, b->rate, p.share, w->index);
    mw__publish_event(c, "trace_plan", detail);
    MW_LOG(MW_LOG_INFO, "trace plan: %s", detail);
}
