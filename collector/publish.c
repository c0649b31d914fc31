/* publish.c: the one path from the collector's core to its outputs.
 *
 * DESIGN: a closed window, a closed step, the job description and a job event are each
 * described as an mw__pub_t and walk the same table of outputs, in the table's order. Wire
 * forms are encoded once, here, when an output that is on takes bytes, and every output gets
 * the same bytes. The order is part of the recording's format in practice: an output that
 * acts (the rules, whose actions log events that are recorded and published) must come where
 * it always came, or the frames of a recording would change order. So:
 *   - windows: counters, live view, recording, feed, history, consumer hook, then the rules
 *     (they read the window and never change it or the job; docs/steering.md);
 *   - steps: the rules first (they read the step before anything else is done with it), then
 *     the recording, the feed and the steps kept for the summary JSON;
 *   - job descriptions: recording, feed, history;
 *   - events: live view, recording, feed, history (a job's start empties its rings);
 *   - traces of closed windows (RankTrace): the feed only (the recording has their frames);
 *   - lateness batches (lateness.c, after their windows): the counters, the recording, the
 *     feed, the history, then the rules (like windows: a rule's event follows the batch);
 *   - windows, last of all: the trace budget (trace_budget.c), which may send a plan (a
 *     steering message and a "trace_plan" event) after the window's other outputs.
 * The rules appear twice in the table for that reason: once before the recording (steps), once
 * at the end (windows).
 *
 * The Prometheus page (metrics.c, in the executable) is not an entry: it serves a snapshot
 * of the counters that the "stats" entry keeps, taken by the socket loop after each wakeup.
 */
#include "publish.h"

#include "collector.h"
#include "feed.h"
#include "history.h"
#include "lateness.h"
#include "live.h"
#include "record_file.h"
#include "rules.h"
#include "steps.h"
#include "trace_budget.h"
#include "window_pb.h"

/* ---- the outputs ------------------------------------------------------------------------- */

/* Every closed window is counted first: the live view, the summary, the report and the
 * Prometheus page read these counters. */
static void stats_window(mw_collector_t *c, const mw__pub_t *m)
{
    const mw_window_t *w = m->window;
    c->job.windows++;
    c->stats.windows++;
    /* Close latency (docs/collector.md, Performance), with the clock of the event that closed
     * it; a window that ends in the collector's future (rank clocks ahead) counts as 0. */
    uint64_t end_ns = w->start_ns + w->window_ns;
    mw__latency_add(&c->stats.close_latency, c->now.real_ns > end_ns ? c->now.real_ns - end_ns : 0);
    mw__latency_add(&c->stats.close_wait,
                    c->now.mono_ns > w->last_arrival_ns ? c->now.mono_ns - w->last_arrival_ns : 0);
    if (w->ranks_missing) {
        c->job.partial_windows++;
        c->stats.partial_windows++;
    }
}

static void stats_lateness(mw_collector_t *c, const mw__pub_t *m)
{
    mw__lateness_account(&c->ltotals, m->lateness);
}

static void live_window(mw_collector_t *c, const mw__pub_t *m)
{
    mw__live_window(&c->live, m->window);
}

static void live_event(mw_collector_t *c, const mw__pub_t *m)
{
    mw__live_event(&c->live, m->event_kind, m->event_detail);
}

static void rules_window(mw_collector_t *c, const mw__pub_t *m)
{
    mw__rules_window(c->rules, c, m->window);
}

static void rules_step(mw_collector_t *c, const mw__pub_t *m)
{
    mw__rules_step(c->rules, c, m->step);
}

static void rules_lateness(mw_collector_t *c, const mw__pub_t *m)
{
    mw__rules_lateness(c->rules, c, m->lateness);
}

static void record_lateness(mw_collector_t *c, const mw__pub_t *m)
{
    if (c->record && m->len)
        mw__record_lateness(c->record, &c->now, m->pb, m->len);
}

static void feed_lateness(mw_collector_t *c, const mw__pub_t *m)
{
    if (c->feed && m->len)
        mw__feed_lateness(c->feed, m->pb, m->len);
}

static void history_lateness(mw_collector_t *c, const mw__pub_t *m)
{
    if (c->history && m->len)
        mw__history_lateness(c->history, m->pb, m->len);
}

static void record_window(mw_collector_t *c, const mw__pub_t *m)
{
    if (c->record && m->len)
        mw__record_merged(c->record, &c->now, m->window, m->pb, m->len);
}

static void record_step(mw_collector_t *c, const mw__pub_t *m)
{
    if (c->record && m->len)
        mw__record_step(c->record, &c->now, m->pb, m->len);
}

static void record_job(mw_collector_t *c, const mw__pub_t *m)
{
    if (c->record && m->len)
        mw__record_job(c->record, &c->now, m->pb, m->len);
}

static void record_event(mw_collector_t *c, const mw__pub_t *m)
{
    if (c->record)
        mw__record_event(c->record, &c->now, m->event_kind, c->job.job, m->event_detail);
}

static void feed_window(mw_collector_t *c, const mw__pub_t *m)
{
    if (c->feed && m->len)
        mw__feed_window(c->feed, m->pb, m->len);
}

static void feed_step(mw_collector_t *c, const mw__pub_t *m)
{
    if (c->feed && m->len)
        mw__feed_step(c->feed, m->pb, m->len);
}

static void feed_job(mw_collector_t *c, const mw__pub_t *m)
{
    if (c->feed && m->len)
        mw__feed_job(c->feed, m->pb, m->len);
}

static void feed_event(mw_collector_t *c, const mw__pub_t *m)
{
    if (c->feed)
        mw__feed_event(c->feed, m->event_kind, c->job.job, m->event_detail, c->now.real_ns);
}

static void history_window(mw_collector_t *c, const mw__pub_t *m)
{
    if (c->history && m->len)
        mw__history_window(c->history, m->window->index, m->pb, m->len);
}

static void history_job(mw_collector_t *c, const mw__pub_t *m)
{
    if (c->history && m->len)
        mw__history_job(c->history, m->pb, m->len);
}

static void history_event(mw_collector_t *c, const mw__pub_t *m)
{
    mw__history_event(c->history, m->event_kind);
}

/* The consumer a test or the replay's comparison sets (c->on_window). */
static void hook_window(mw_collector_t *c, const mw__pub_t *m)
{
    if (c->on_window)
        c->on_window(m->window, c->on_window_user);
}

static void feed_trace(mw_collector_t *c, const mw__pub_t *m)
{
    if (c->feed && m->len)
        mw__feed_trace(c->feed, m->pb, m->len);
}

static void budget_window(mw_collector_t *c, const mw__pub_t *m)
{
    mw__tbudget_window(c, m->window);
}

/* The lateness analysis takes the window's exact traces (queued for its worker). */
static void lateness_window(mw_collector_t *c, const mw__pub_t *m)
{
    if (c->lateness)
        mw__lateness_window(c->lateness, m->window, mw__collector_mono_ns(c));
}

static void steps_keep(mw_collector_t *c, const mw__pub_t *m)
{
    if (m->len)
        mw__steps_keep(c, m->pb, m->len);
}

/* The list of outputs, in the order every message visits them (see DESIGN above). */
static const mw__output_t outputs[] = {
    {.name = "stats", .on_window = stats_window, .on_lateness = stats_lateness},
    {.name = "live", .on_window = live_window, .on_event = live_event},
    {.name = "rules (steps)", .on_step = rules_step},
    {.name = "record",
     .takes_pb = 1,
     .on_window = record_window,
     .on_step = record_step,
     .on_job = record_job,
     .on_event = record_event,
     .on_lateness = record_lateness},
    {.name = "feed",
     .takes_pb = 1,
     .on_window = feed_window,
     .on_step = feed_step,
     .on_job = feed_job,
     .on_event = feed_event,
     .on_trace = feed_trace,
     .on_lateness = feed_lateness},
    {.name = "history",
     .takes_pb = 1,
     .on_window = history_window,
     .on_job = history_job,
     .on_event = history_event,
     .on_lateness = history_lateness},
    {.name = "hook", .on_window = hook_window},
    {.name = "summary steps", .takes_pb = 1, .on_step = steps_keep},
    {.name = "rules (windows)", .on_window = rules_window},
    {.name = "trace budget", .on_window = budget_window},
    {.name = "rules (lateness)", .on_lateness = rules_lateness},
    {.name = "lateness", .on_window = lateness_window},
};

/* Whether an output that is on takes the wire form of a `kind` message: the recording, the
 * feed and the history when they are on, and the steps the summary keeps. */
static int bytes_wanted(const mw_collector_t *c, mw__pub_kind_t kind)
{
    if (kind == MW_PUB_TRACE)
        return c->feed != NULL;
    if (kind == MW_PUB_LATENESS)
        return c->record || c->feed || c->history;
    return kind == MW_PUB_STEP || c->record || c->feed || c->history;
}

/* ---- the path ------------------------------------------------------------------------------ */

/* Encodes `m` into c->enc once, for the outputs that take bytes. */
static void encode(mw_collector_t *c, mw__pub_t *m)
{
    switch (m->kind) {
    case MW_PUB_WINDOW:
        m->len = mw__window_pack(&c->enc, m->window, c->now.real_ns);
        if (m->len == 0) {
            char wl[96];
            MW_LOG(
                MW_LOG_ERROR, "window %s: out of memory encoding it",
                mw__job_windows_label(&c->job, m->window->index, m->window->index, wl, sizeof wl));
        }
        break;
    case MW_PUB_STEP:
        m->len = mw__step_pack(&c->enc, m->step);
        if (m->len == 0)
            MW_LOG(MW_LOG_ERROR, "step %llu: out of memory encoding it",
                   (unsigned long long)m->step->step);
        break;
    case MW_PUB_JOB:
        m->len = mw__jobinfo_pack(&c->enc, &c->job, mw_fn_table_hash());
        if (m->len == 0)
            MW_LOG(MW_LOG_ERROR, "job '%s': out of memory encoding it", c->job.job);
        break;
    case MW_PUB_TRACE:
        m->len = mw__rank_trace_pack(&c->enc, m->trace_rank, m->trace);
        break;
    case MW_PUB_LATENESS:
        m->len = mw__lateness_pack(&c->enc, m->lateness);
        if (m->len == 0) {
            char wl[96];
            MW_LOG(MW_LOG_ERROR, "lateness of window %s: out of memory encoding it",
                   mw__job_windows_label(&c->job, m->lateness->window, m->lateness->window, wl,
                                         sizeof wl));
        }
        break;
    default:
        break;
    }
    m->pb = c->enc.out;
}

void mw__publish(mw_collector_t *c, mw__pub_t *m)
{
    int encoded = m->kind == MW_PUB_EVENT || !bytes_wanted(c, m->kind);
    for (size_t i = 0; i < sizeof outputs / sizeof outputs[0]; i++) {
        const mw__output_t *o = &outputs[i];
        void (*fn)(mw_collector_t *, const mw__pub_t *) = m->kind == MW_PUB_WINDOW  ? o->on_window
                                                          : m->kind == MW_PUB_STEP  ? o->on_step
                                                          : m->kind == MW_PUB_JOB   ? o->on_job
                                                          : m->kind == MW_PUB_TRACE ? o->on_trace
                                                          : m->kind == MW_PUB_LATENESS
                                                              ? o->on_lateness
                                                              : o->on_event;
        if (!fn)
            continue;
        /* Encoded when the first output that takes bytes is reached, not before: an output
         * ahead of it (the rules on a step) may use the encoder itself (a job description). */
        if (o->takes_pb && !encoded) {
            encode(c, m);
            encoded = 1;
        }
        fn(c, m);
    }
}

void mw__publish_window(mw_collector_t *c, const mw_window_t *w)
{
    mw__pub_t m = {.kind = MW_PUB_WINDOW, .window = w};
    mw__publish(c, &m);
}

void mw__publish_step(mw_collector_t *c, const Mpiwatch__Step *st)
{
    mw__pub_t m = {.kind = MW_PUB_STEP, .step = st};
    mw__publish(c, &m);
}

void mw__publish_job(mw_collector_t *c)
{
    c->job_published_hellos = c->job.hellos;
    c->job.rs_published_gen = c->job.rs.gen;
    c->job.rs_published_window = c->job.windows;
    c->job.rs_published_bytes = c->job.info_bytes;
    mw__pub_t m = {.kind = MW_PUB_JOB};
    mw__publish(c, &m);
}

void mw__publish_event(mw_collector_t *c, const char *kind, const char *detail)
{
    mw__pub_t m = {.kind = MW_PUB_EVENT, .event_kind = kind, .event_detail = detail};
    mw__publish(c, &m);
}

void mw__publish_trace(mw_collector_t *c, uint32_t rank, const Mpiwatch__Trace *t)
{
    c->tstats.published++;
    mw__pub_t m = {.kind = MW_PUB_TRACE, .trace_rank = rank, .trace = t};
    mw__publish(c, &m);
}
