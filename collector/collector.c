/* collector.c: the collector's state and its event handlers, without any socket.
 *
 * DESIGN: the socket loop (server.c) only receives frames, reads the clocks and sleeps in
 * zmq_poll; everything that happens is one of three calls here: a frame arrived
 * (mw_collector_frame), time passed (mw_collector_tick), or the run is over
 * (mw_collector_finish). Time is always passed in, which is what makes the whole collector,
 * job end and deadlines included, testable with crafted messages and a fake clock.
 *
 * A job ends when every rank of its size has said bye, or when no accepted message has
 * arrived for --silence-timeout-ms (the ranks that did not say bye are then declared dead).
 * At the end every window still open is closed in order, the report and the JSON files are
 * written, and with --exit-after-job the loop is asked to stop. Without it the job's state
 * stays (for the live view) until a hello starts the next job.
 */
#include "collector.h"
#include "record_file.h"
#include "history.h"
#include "summary.h"
#include "report.h"
#include "publish.h"
#include "rules.h"
#include "steps.h"
#include "upstream.h"
#include "aggstate.h"
#include "partial.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

const char *mw__reject_name(mw_reject_t reason)
{
    static const char *const names[MW_REJECT_COUNT] = {"accepted",
#define MW_X(id, name) name,
                                                       MW_REJECT_REASONS(MW_X)
#undef MW_X
    };
    return (unsigned)reason < MW_REJECT_COUNT ? names[reason] : "?";
}

static int job_open(const mw_collector_t *c)
{
    return c->job.active && c->job.ended == MW_END_NONE;
}

/* Every rank said bye and, in a job with aggregators (aggstate.c), each one's final AggState
 * arrived, or MW_AGG_FINAL_GRACE_NS passed since the job's last activity: the outputs then have
 * the aggregators' final accounting (docs/collector.md, "Accounting through aggregators"). */
static int job_complete(const mw_collector_t *c, uint64_t now_ns)
{
    return c->job.byes == c->job.size &&
           (mw__aggs_final(&c->job) || now_ns - c->job.last_activity_ns >= MW_AGG_FINAL_GRACE_NS);
}

/* The job description's bytes that one closed window pays for when it is sent again because
 * of new regions or call sites: after a description of B bytes the next one waits for
 * B / JOBINFO_RESEND_BYTES_PER_WINDOW windows (a small one goes out with the next window, one
 * at the MW_JOB_MAX_INFO_BYTES cap once per 48), so that a rank reaching one new call site per
 * window cannot make every output take the whole description per window. A window naming an id
 * the description does not hold yet shows it by number until then; the job's end sends the
 * last description in any case. */
#define JOBINFO_RESEND_BYTES_PER_WINDOW (1u << 20)

static int jobinfo_resend_due(const mw_collector_t *c)
{
    if (c->job.rs.gen == c->job.rs_published_gen)
        return 0;
    uint64_t since = c->job.windows - c->job.rs_published_window;
    return since >= c->job.rs_published_bytes / JOBINFO_RESEND_BYTES_PER_WINDOW;
}

/* Every closed window of the merge goes down the publish path (publish.c). */
static void collector_on_window(const mw_window_t *w, void *user)
{
    mw_collector_t *c = user;
    /* New regions or call sites since the job description was sent: send it first, so that a
     * reader knows the window's ids (once per window at most, only when something new came,
     * paced by its size). */
    if (jobinfo_resend_due(c))
        mw__publish_job(c);
    mw__publish_window(user, w);
    if (c->upstream)
        mw__upstream_window(c, w); /* an aggregator: the window's partial goes up */
}

uint64_t mw__collector_mono_ns(mw_collector_t *c)
{
    if (!c->clock)
        return c->now.mono_ns;
    mw_clock_t now;
    c->clock(&now);
    return now.mono_ns;
}

int mw_collector_init(mw_collector_t *c, const mw_collector_options_t *opt)
{
    memset(c, 0, sizeof *c);
    c->opt = opt;
    /* protobuf-c's unpacked structs take a few times the wire size (pointers per repeated
     * message, 8-byte slots for varints): a cap of 4x keeps any frame under the limit
     * decodable, and a frame that needs more is reported as undecodable. */
    if (mw_arena_init(&c->arena, 4 * (size_t)MW_MAX_MESSAGE_BYTES) < 0) {
        MW_LOG(MW_LOG_ERROR, "cannot allocate the %u MiB decoding arena",
               4 * MW_MAX_MESSAGE_BYTES >> 20);
        return -1;
    }
    mw__live_init(&c->live, stderr, !opt->quiet);
    c->report_out = stderr;
    return 0;
}

void mw_collector_free(mw_collector_t *c)
{
    if (c->merge_ready)
        mw__merge_free(&c->merge);
    mw__steps_free(c);
    mw__partial_free(c);
    mw__rules_free(c->rules);
    mw__job_free(&c->job);
    mw_arena_free(&c->arena);
    mw__pb_encoder_free(&c->enc);
    memset(c, 0, sizeof *c);
}

int mw__collector_job_begin(mw_collector_t *c, const Mpiwatch__Envelope *env, uint64_t now_ns)
{
    const Mpiwatch__Hello *h = env->hello;
    if (c->merge_ready) {
        mw__merge_free(&c->merge);
        c->merge_ready = 0;
    }
    MW_TRY(mw__job_begin(&c->job, env, now_ns));
    if (mw__merge_init(&c->merge, h->size, h->window_ns, h->subslots, h->duration_bins,
                       c->opt->lateness_ms * MW_NS_PER_MS, collector_on_window, c) < 0) {
        MW_LOG(MW_LOG_ERROR, "cannot allocate the windows of a %u-rank job", h->size);
        mw__job_free(&c->job);
        return -1;
    }
    c->merge.grid = &c->job.grid;
    c->merge.no_rank_detail = !mw_collector_options_rank_detail(c->opt);
    c->merge_ready = 1;
    /* Without memory for steps the job still runs, without them. */
    if (mw__steps_begin(c, h->size, h->window_ns, c->opt->lateness_ms * MW_NS_PER_MS) < 0)
        MW_LOG(MW_LOG_WARN, "job '%s': no memory for per-step totals", c->job.job);
    c->outputs_written = 0;
    c->stats.jobs++;
    uint64_t batches = c->ltotals.batches;
    memset(&c->ltotals, 0, sizeof c->ltotals);
    c->ltotals.batches = batches;
    mw__lateness_job(c->lateness, c->job.job);
    mw__tbudget_init(&c->tbudget, (double)c->opt->trace_budget, MW_TRACE_BURST_DEFAULT);
    memset(c->live.recent_ns, 0, sizeof c->live.recent_ns);
    c->live.have_window = 0;
    MW_LOG(MW_LOG_INFO, "job '%s' started: %u ranks, %.3g ms windows, program '%s'", c->job.job,
           h->size, (double)h->window_ns / 1e6, c->job.program);
    char detail[160];
    snprintf(detail, sizeof detail, "%u ranks, %.3g ms windows, program %.100s", h->size,
             (double)h->window_ns / 1e6, c->job.program);
    mw__publish_event(c, "job_start", detail);
    return 0;
}

/* The job's windows are closed: the lateness analysis finalizes what it holds, and its last
 * batches are published before the job's end (and its report). The only place the loop waits
 * for the worker, once per job: windows queued longer than --lateness-budget-ms are skipped,
 * so the backlog takes about that long at most; one second more for the last analysis (5 s in
 * all without a budget). */
static void collector_lateness_end(mw_collector_t *c)
{
    if (!c->lateness)
        return;
    mw__lateness_job_end(c->lateness);
    uint64_t ms = (c->opt->lateness_budget_ms ? c->opt->lateness_budget_ms : 4000) + 1000;
    mw__lateness_flush(c, ms);
}

static void collector_end_job(mw_collector_t *c, mw_end_t why, uint64_t now_ns)
{
    /* Close the windows before declaring ranks dead, so that the windows they did not
     * report count them as missing. */
    mw__merge_close_all(&c->merge);
    uint32_t dead = why == MW_END_SILENCE ? mw__job_declare_dead(&c->job) : 0;
    mw__steps_end(c); /* the steps still open close with the ranks they have */
    collector_lateness_end(c);
    if (c->upstream)
        mw__upstream_job_end(c); /* after its last partials: the final AggState, the byes left */
    c->job.ended = why;
    c->job.ended_ns = now_ns;
    char detail[160];
    if (dead) {
        MW_LOG(MW_LOG_WARN, "job '%s': %u rank(s) silent for %llu ms, declared dead", c->job.job,
               dead, (unsigned long long)c->opt->silence_timeout_ms);
        snprintf(detail, sizeof detail, "%u rank(s) silent for %llu ms", dead,
                 (unsigned long long)c->opt->silence_timeout_ms);
        mw__publish_event(c, "rank_dead", detail);
    }
    snprintf(detail, sizeof detail, "%s: %llu windows, %llu partial", mw__end_name(why),
             (unsigned long long)c->job.windows, (unsigned long long)c->job.partial_windows);
    mw__publish_event(c, "job_end", detail);
    mw__publish_job(c);
    MW_LOG(MW_LOG_INFO, "job '%s' ended (%s): %llu windows, %llu partial", c->job.job,
           mw__end_name(why), (unsigned long long)c->job.windows,
           (unsigned long long)c->job.partial_windows);
    mw_collector_write_outputs(c, 1);
    c->outputs_written = 1;
    if (c->opt->exit_after_job)
        c->exit_requested = 1;
}

mw_reject_t mw_collector_frame(mw_collector_t *c, const void *data, size_t len, int parts,
                               const mw_clock_t *now)
{
    mw_reject_t r;
    const Mpiwatch__Envelope *env = NULL;
    c->now = *now;
    if (c->record)
        mw__record_frame(c->record, now, data, len, parts);
    c->merge.frame_off = mw__record_last_frame(c->record); /* where its traces are recorded */
    if (parts > 1) {
        r = MW_REJECT_MULTIPART;
    } else if (len > MW_MAX_MESSAGE_BYTES) {
        r = MW_REJECT_TOO_LARGE;
    } else {
        env = mw_envelope_decode(&c->arena, data, len);
        r = env ? mw__ingest(c, env, now) : MW_REJECT_DECODE;
    }
    if (r == MW_ACCEPTED) {
        c->stats.accepted++;
        if (c->history && env->body_case == MPIWATCH__ENVELOPE__BODY_SAMPLE) {
            /* A rank of another function table: the sample as translated (the job's ids). */
            static uint8_t *again;
            static size_t again_cap;
            size_t n =
                mw__ingest_translated(c, env->rank) ? mpiwatch__envelope__get_packed_size(env) : 0;
            if (n && n > again_cap) {
                uint8_t *p = realloc(again, n);
                if (p) {
                    again = p;
                    again_cap = n;
                }
            }
            if (n && n <= again_cap)
                mw__history_sample(c->history, env->rank, env->sample->window, again,
                                   mpiwatch__envelope__pack(env, again));
            else
                mw__history_sample(c->history, env->rank, env->sample->window, data, len);
        }
        if (c->upstream && (env->body_case == MPIWATCH__ENVELOPE__BODY_HELLO ||
                            env->body_case == MPIWATCH__ENVELOPE__BODY_BYE))
            mw__upstream_frame(c, env, data, len); /* an aggregator forwards them */
        if (env->body_case == MPIWATCH__ENVELOPE__BODY_HELLO &&
            (c->job.hellos == 1 || c->job.hellos == c->job.size) &&
            c->job.hellos != c->job_published_hellos)
            mw__publish_job(c);
    } else {
        c->stats.rejected[r]++;
        if (env)
            MW_LOG(MW_LOG_DEBUG, "rejected a %zu-byte %s from rank %u: %s", len,
                   env->body_case == MPIWATCH__ENVELOPE__BODY_HELLO    ? "hello"
                   : env->body_case == MPIWATCH__ENVELOPE__BODY_SAMPLE ? "sample"
                   : env->body_case == MPIWATCH__ENVELOPE__BODY_BYE    ? "bye"
                   : env->body_case == MPIWATCH__ENVELOPE__BODY_TRACE  ? "trace"
                                                                       : "envelope",
                   env->rank, mw__reject_name(r));
        else
            MW_LOG(MW_LOG_DEBUG, "rejected a %zu-byte message: %s", len, mw__reject_name(r));
    }
    if (job_open(c) && (job_complete(c, now->mono_ns) || mw__upstream_job_done(c, now->mono_ns)))
        collector_end_job(c, MW_END_COMPLETE, now->mono_ns);
    return r;
}

void mw_collector_tick(mw_collector_t *c, const mw_clock_t *now)
{
    c->now = *now;
    if (job_open(c)) {
        /* Only a tick that changed something is recorded: replay calls the timers at exactly
         * those times, which is all it needs to close the same windows. */
        uint64_t closed = c->merge.closed;
        mw__merge_tick(&c->merge, now->mono_ns);
        int ended = 0;
        if (now->mono_ns - c->job.last_activity_ns >= c->opt->silence_timeout_ms * MW_NS_PER_MS)
            ended = 1;
        else if (job_complete(c, now->mono_ns)) /* an aggregator's final AggState is late */
            ended = 2;
        else if (mw__upstream_job_done(c, now->mono_ns)) /* an aggregator's ranks are done */
            ended = 2;
        if (c->record && (ended || c->merge.closed != closed))
            mw__record_tick(c->record, now);
        if (ended)
            collector_end_job(c, ended == 2 ? MW_END_COMPLETE : MW_END_SILENCE, now->mono_ns);
    }
    mw__rules_tick(c->rules, c, now->mono_ns);
    mw__live_tick(&c->live, c, now->mono_ns);
}

long mw_collector_timeout_ms(const mw_collector_t *c, const mw_clock_t *now)
{
    uint64_t next = UINT64_MAX;
    if (job_open(c)) {
        next = mw__merge_next_deadline(&c->merge);
        uint64_t silent = c->job.last_activity_ns + c->opt->silence_timeout_ms * MW_NS_PER_MS;
        if (silent < next)
            next = silent;
        uint64_t grace = c->job.last_activity_ns + MW_AGG_FINAL_GRACE_NS;
        if (c->job.byes == c->job.size && !mw__aggs_final(&c->job) && grace < next)
            next = grace;
    }
    if (c->live.enabled && c->live.next_ns < next)
        next = c->live.next_ns;
    uint64_t rules_ns = mw__rules_next_ns(c->rules, now->mono_ns); /* programs to reap */
    if (rules_ns < next)
        next = rules_ns;
    if (next == UINT64_MAX)
        return -1;
    if (next <= now->mono_ns)
        return 0;
    uint64_t ms = (next - now->mono_ns + MW_NS_PER_MS - 1) / MW_NS_PER_MS; /* never wake early */
    return ms > INT_MAX ? INT_MAX : (long)ms;
}

void mw_collector_finish(mw_collector_t *c, const mw_clock_t *now)
{
    c->now = *now;
    if (c->record)
        mw__record_finish(c->record, now);
    if (job_open(c)) {
        mw__merge_close_all(&c->merge);
        mw__steps_end(c);
        collector_lateness_end(c);
        if (c->upstream)
            mw__upstream_job_end(c);
        c->job.ended = MW_END_SIGNAL;
        c->job.ended_ns = now->mono_ns;
        mw__publish_event(c, "job_end", "signal");
        mw__publish_job(c);
    }
    /* A job that ended already has its report on screen: only refresh the files. */
    mw_collector_write_outputs(c, !c->outputs_written);
    c->outputs_written = 1;
}

int mw_collector_write_outputs(mw_collector_t *c, int with_report)
{
    int rc = 0;
    mw__live_release(&c->live);
    if (with_report) {
        char *text = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&text, &len);
        if (mem) {
            mw__report_write(c, mem);
            if (fclose(mem) == 0 && text) {
                if (c->report_out) {
                    fputs(text, c->report_out);
                    fflush(c->report_out);
                }
                if (c->opt->report && mw__write_file(c->opt->report, text) < 0)
                    rc = -1;
            }
            free(text);
        } else {
            MW_LOG(MW_LOG_ERROR, "cannot build the report: out of memory");
            rc = -1;
        }
    }
    if (c->opt->summary_json && mw__summary_write(c, c->opt->summary_json) < 0)
        rc = -1;
    if (c->opt->stats_json && mw__stats_write(c, c->opt->stats_json) < 0)
        rc = -1;
    return rc;
}
