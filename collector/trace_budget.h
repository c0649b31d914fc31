/* trace_budget.h: the job's tracing budget and the plans that spend it (trace_budget.c;
 * docs/trace.md "The job's budget (collector)"). */
#ifndef MW_COLLECTOR_TRACE_BUDGET_H
#define MW_COLLECTOR_TRACE_BUDGET_H

#include <stddef.h>
#include <stdint.h>

#include "merge.h"

/* The default budget R, in traced calls per second for the whole job (docs/trace.md, "The job's
 * budget", measured with bench/trace-ingest.c): a traced call costs the collector's ingest
 * 59-87 ns (11-17 M/s on one core) and the recording 5.5-9 B (frame and window) on a regular
 * stencil, about 20 B on an irregular one, so 24 MB/s of recording hold 1.2-4.3 M/s; 2 M/s
 * takes at most a fifth of a core. */
#define MW_TRACE_BUDGET_DEFAULT 2000000u
#define MW_TRACE_BURST_DEFAULT 3u /* B: consecutive windows of one burst */
#define MW_TRACE_OVER 1.25        /* re-plan when the plan in force spends more than this x R ... */
#define MW_TRACE_UNDER 2.0        /* ... or, tracing a share of the windows, less than R / this */
/* Closed windows before the first plan can be sent (the ranks trace every window until one
 * comes: `all`, the plan the planner starts from). */
#define MW_TRACE_PLAN_MIN_WINDOWS 3u
#define MW_TRACE_PLAN_LEAD_NS 200000000   /* a plan starts this long after it is sent */
#define MW_TRACE_PLAN_MAX_PERIOD 1000000u /* P never above this (a share of one in a million) */
/* Deferred bursts (`every:P:B@K/G`, docs/trace.md "The job's budget"): when a burst window of
 * the whole job (c calls/s for one window) is more than MW_TRACE_DEFER_OVER times the budget's
 * share of a window (R), the ranks still trace the burst together but send it later, in G groups
 * of ranks (rank mod G), one group per window after the burst, so that B x c / G calls arrive
 * per window: G = ceil(B x c / R) (= P: a burst is spread over the time to the next one),
 * bounded by the ranks' flight recorder (B + G windows of at most MW_TRACE_DEFER_RANK_BYTES at
 * MW_TRACE_DEFER_BYTES_PER_CALL, and at most MW_TRACE_HISTORY_MAX windows). */
#define MW_TRACE_DEFER_OVER 2.0
#define MW_TRACE_HISTORY_MAX 1024u            /* the shim's MPIWATCH_TRACE_HISTORY maximum */
#define MW_TRACE_DEFER_RANK_BYTES (16u << 20) /* MPIWATCH_TRACE_HISTORY_MB's default */
#define MW_TRACE_DEFER_BYTES_PER_CALL 10.6    /* the codec's worst measured (Wire format) */
#define MW_TRACE_BYTES_PER_CALL 3.5           /* the codec's stencil figure (Wire format) */
/* The collector takes traces sent after their sample (deferred bursts, reach-back captures) at
 * most MW_TRACE_LATE_MARGIN x R x window calls per window of arrival (x MW_TRACE_LATE_RECS_PER_CALL
 * records: a nonblocking call is a post and a completion), never less than
 * MW_TRACE_LATE_MIN_RECORDS records, and at most MW_TRACE_WINDOW_MAX_BYTES bytes; the rest is
 * refused (late_cap). */
#define MW_TRACE_LATE_MARGIN 2.0
#define MW_TRACE_LATE_RECS_PER_CALL 2.0
#define MW_TRACE_LATE_MIN_RECORDS 65536u

typedef enum { MW_TPLAN_NONE = 0, MW_TPLAN_ALL, MW_TPLAN_OFF, MW_TPLAN_EVERY } mw_tplan_kind_t;

/* One plan, as the steering value says it: `all`, `off` or `every:P:B@K` (windows w >= K with
 * (w - K) mod P < B are traced by every rank). */
typedef struct {
    mw_tplan_kind_t kind;
    uint32_t period, burst; /* P, B (MW_TPLAN_EVERY) */
    uint64_t first;         /* K (MW_TPLAN_EVERY) */
    uint32_t groups;        /* G: deferred in G groups of ranks (every:P:B@K/G); 0: with samples */
    double share;           /* B / P: the share of windows traced (1 for all, 0 for off) */
} mw_tplan_t;

/* The policy: a job doing `calls_per_s` timed calls per second against a budget of `rate`
 * traced calls per second, with bursts of `burst` windows. calls_per_s <= rate: all; else
 * every:P:B with P = ceil(burst * calls_per_s / rate), so that the traced share B / P is at most
 * rate / calls_per_s. rate 0 means no budget: off. K is left 0. */
void mw__tplan_compute(double calls_per_s, double rate, uint32_t burst, mw_tplan_t *out);
/* Defers a burst plan's sending when a burst window is too large to arrive at once (see
 * MW_TRACE_DEFER_OVER): sets p->groups (0: not deferred) for a job of `ranks` ranks and windows
 * of `window_s` seconds. */
void mw__tplan_defer(mw_tplan_t *p, double calls_per_s, double rate, uint32_t ranks,
                     double window_s);
/* What a plan costs (printed by tests/collector/test_trace_budget.c, quoted by the docs). */
typedef struct {
    double arrive_calls;  /* traced calls arriving at the collector per window, at most */
    double arrive_bytes;  /* ... at MW_TRACE_BYTES_PER_CALL */
    uint32_t history;     /* windows a rank's flight recorder must hold (B + G; 1 undeferred) */
    double rank_bytes;    /* ... their bytes per rank at MW_TRACE_BYTES_PER_CALL */
    double rank_bytes_hi; /* ... at MW_TRACE_DEFER_BYTES_PER_CALL */
} mw_tplan_cost_t;
void mw__tplan_cost(const mw_tplan_t *p, double calls_per_s, uint32_t ranks, double window_s,
                    mw_tplan_cost_t *out);
/* The steering value of a plan (mpiwatch.trace=VALUE): "all", "off", "every:P:B@K[/G]". Returns
 * the length, or -1 when it does not fit. */
int mw__tplan_format(const mw_tplan_t *p, char *buf, size_t len);
/* Reads a steering value back, strictly (also "K+B", a one-time burst of B windows from K,
 * which the planner never sends: the rules and the user may). "every:P:B@K" takes 1 <= B <= P
 * as the shim does (B = P: every window from K on). Returns 0, or -1. */
int mw__tplan_parse(const char *value, mw_tplan_t *out);

/* The planner's state for one job. */
typedef struct {
    double rate;      /* R (0: no plans) */
    uint32_t burst;   /* B */
    double c_rate;    /* the job's timed calls per second, smoothed over closed windows */
    uint32_t windows; /* closed windows with data seen */
    double planned;   /* c_rate when the plan in force was made, 0 before the first */
    mw_tplan_t plan;  /* the plan in force */
    uint64_t plans;   /* plans sent */
    int told_no_steer;
    uint32_t ranks; /* the job's size, and its window length, for deferring (0: never) */
    double window_s;
    /* traces taken after their sample in the current window of arrival (late intake cap) */
    uint64_t late_window, late_records, late_bytes;
} mw__tbudget_t;

/* Takes a trace sent after its sample (`records`, `bytes`) arriving in window `now_w` of
 * `window_s` seconds into the late intake of the window: 0, or -1 when over the cap
 * (MW_TRACE_LATE_MARGIN) and refused. */
int mw__tbudget_late_take(mw__tbudget_t *b, uint64_t now_w, double window_s, uint64_t records,
                          uint64_t bytes);

void mw__tbudget_init(mw__tbudget_t *b, double rate, uint32_t burst);
/* Takes one closed window's job-wide timed calls per second (scaled to the whole job); returns
 * 1 when a new plan is due (written to *plan, K still 0), 0 otherwise. Hysteresis: the plan in
 * force stays while what it traces at the smoothed rate (rate x share) is within
 * [R / MW_TRACE_UNDER, R x MW_TRACE_OVER] (an `all` plan has no lower bound), and a plan equal
 * to the one in force is not sent again. */
int mw__tbudget_observe(mw__tbudget_t *b, double calls_per_s, mw_tplan_t *plan);
/* The job's timed calls per second in a closed window, scaled to `size` ranks. */
double mw__tbudget_window_rate(const mw_window_t *w, uint32_t size);

struct mw_collector;
/* A closed window (publish.c): observes it and, when a plan is due, sends it on the steering
 * PUB as mpiwatch.trace and publishes a "trace_plan" job event. */
void mw__tbudget_window(struct mw_collector *c, const mw_window_t *w);

#endif
