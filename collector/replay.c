/* replay.c: --replay FILE.mpiw, a recording fed back through the collector as if its ranks
 * were live.
 *
 * DESIGN: the recording holds every frame the live collector received, with the clocks of its
 * batch, and the timer events that changed something (record_file.c). Replay hands exactly
 * those to the collector (mw_collector_apply_record) with the recorded clocks, so the
 * collector makes the same decisions at the same recorded times: the same windows close with
 * the same content, the job ends the same way, and the summary is byte for byte the live
 * one. The recorded outputs (windows, job, events) are not applied, the collector derives
 * them again and its hooks publish them on the feed; each regenerated window is compared with
 * the recorded one (as encoded bytes), which checks that determinism on every replay. The
 * settings that decide when windows close (lateness, silence timeout) are taken from the
 * recording's first frame, not from the command line.
 *
 * Pacing: with --speed X the record recorded at monotonic time m is applied at wall time
 * start + (m - m_from) / X, waiting in one zmq_poll on the feed's history socket, the
 * signal pipe and (through its timeout) the Prometheus endpoint's next publication; there is
 * no sleep. With --speed 0 nothing waits, and the sockets and signals are looked at every
 * REPLAY_LOOK_EVERY records. Records before --from are applied at full speed with the feed
 * detached (nothing published); at --from it is attached, the current job description is
 * published, and pacing starts. At --to, at the end of the file, at a signal or when
 * --exit-after-job ends the run, the run is finished with the last applied clock exactly like
 * a live collector stopping there, unless the recording already ended it (the finish of a
 * signal, or a job that ended and wrote its outputs).
 *
 * Tiers (docs/recording.md "Tiers"): a recording whose writer dropped old samples holds them
 * from window A (raw_from) on, and only the merged windows before. Replay then says so, and
 * regenerates from A: before the first sample of a window >= A it applies only what is not a
 * sample (hellos, byes, window length changes) and no timer event (which would see ranks
 * silent for the whole dropped span and end the job); samples of windows before A that were
 * kept around a pin are not applied either, so the windows from A on are derived from the
 * same samples as live and compared with the recorded ones as usual. Windows before A are
 * left out of the comparison (counted); readers of the file (viewer, export, history) read
 * them from the recording.
 */
#include "collector.h"
#include "mw_fnmap.h"
#include "replay.h"
#include "feed.h"
#include "history.h"
#include "publish.h"
#include "signals.h"
#include "metrics.h"
#include "rules.h"
#include "mw_progress.h"
#include "mw_recording.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define REPLAY_LOOK_EVERY 1024u  /* records between looks at the sockets when nothing waits */
#define REPLAY_CHECK_SLOTS 1024u /* windows waiting for their counterpart in the comparison */

/* A window reduced to what the comparison needs: its index, its encoding's length and CRC. */
typedef struct {
    uint64_t index;
    uint64_t len;
    uint32_t crc;
} replay_sig_t;

typedef struct {
    replay_sig_t sig[REPLAY_CHECK_SLOTS];
    unsigned head, n;
} replay_fifo_t;

typedef struct {
    mw_collector_t *c;
    mw_collector_options_t opt; /* the command line's options with the recorded settings */
    mw_feed_t *feed;
    mw_history_t *history;
    mw_metrics_t *metrics;
    int sig_fd;            /* SIGINT/SIGTERM arrive here (signals.c) */
    int publishing;        /* the feed is attached (from --from on) */
    uint64_t pace_mono_ns; /* recorded time that corresponds to pace_wall_ns */
    uint64_t pace_wall_ns;

    mw_window_fn next_on_window; /* the consumer that was there before replay */
    void *next_user;
    mw_pb_encoder_t enc; /* regenerated windows, encoded for the comparison */
    unsigned char *buf;  /* recorded windows, encoded again */
    size_t cap;
    replay_fifo_t regen, recorded;
    uint64_t compared, differ, first_differ;

    uint64_t windows, hidden; /* windows closed after / before --from */
    uint64_t first_window, last_window;
    int tiered;           /* samples were dropped: raw from raw_from on */
    uint64_t raw_from;    /* the first window with its samples (tiered) */
    int raw_started;      /* a sample of a window >= raw_from was applied */
    uint64_t merged_only; /* recorded windows before raw_from: not regenerated */
    uint64_t merged_lean; /* ... of which lean copies (the coarse tier) */
    uint64_t skipped;     /* records not applied because of the tiers */
} replay_t;

/* The pace's clock: this loop is an outer loop, it reads the clock (clock.c). */
static uint64_t replay_wall_ns(void)
{
    mw_clock_t now;
    mw__clock_now(&now);
    return now.mono_ns;
}

/* ---- the comparison of regenerated and recorded windows ------------------------------------ */

/* Adds a window seen on one side (`mine`); pairs it with the oldest unmatched one of the other
 * side (windows close in the same order on both), or keeps it until that one comes. */
static void replay_match(replay_t *rp, replay_fifo_t *mine, replay_fifo_t *other,
                         const replay_sig_t *s)
{
    if (other->n) {
        const replay_sig_t *o = &other->sig[other->head];
        rp->compared++;
        if (o->index != s->index || o->len != s->len || o->crc != s->crc) {
            if (rp->differ++ == 0)
                rp->first_differ = s->index;
        }
        other->head = (other->head + 1) % REPLAY_CHECK_SLOTS;
        other->n--;
        return;
    }
    if (mine->n == REPLAY_CHECK_SLOTS)
        return; /* far out of step: left out of the comparison rather than kept without bound */
    mine->sig[(mine->head + mine->n) % REPLAY_CHECK_SLOTS] = *s;
    mine->n++;
}

static void replay_on_window(const mw_window_t *w, void *user)
{
    replay_t *rp = user;
    /* The same encoding, from the same clock, as the live collector's hook used. */
    size_t len = mw__window_pack(&rp->enc, w, rp->c->now.real_ns);
    if (len) {
        replay_sig_t s = {w->index, len, mw_rec_crc(0, rp->enc.out, len)};
        replay_match(rp, &rp->regen, &rp->recorded, &s);
    }
    if (rp->publishing) {
        if (rp->windows++ == 0)
            rp->first_window = w->index;
        rp->last_window = w->index;
    } else {
        rp->hidden++;
    }
    if (rp->next_on_window)
        rp->next_on_window(w, rp->next_user);
}

static void replay_recorded_window(replay_t *rp, mw_rec_reader_t *rd, Mpiwatch__Window *w)
{
    if (rp->tiered && w->index < rp->raw_from) {
        rp->merged_only++; /* its samples were dropped: it is not derived again */
        rp->merged_lean += mw_rec_reader_last_lean(rd) != 0;
        return;
    }
    /* The recording keeps each trace's records once, in the frame that brought them: put
     * them back, so that the window compared is the one the live collector published. A
     * trace that does not resolve leaves the rank not exact, and the window then differs. */
    const char *job = rp->c->job.job[0] ? rp->c->job.job : NULL;
    uint64_t before = mw_rec_reader_trace_failures(rd);
    char wl[96];
    if (mw_rec_reader_resolve_window(rd, w, job) != 0 && before == 0)
        MW_LOG(MW_LOG_WARN,
               "replay: window %s: a trace's records are not where the recording says "
               "(the first; the rank is shown as not exact, the end counts them all)",
               mw__job_windows_label(&rp->c->job, w->index, w->index, wl, sizeof wl));
    size_t len = protobuf_c_message_get_packed_size(&w->base);
    if (len + 1 > rp->cap) {
        unsigned char *p = realloc(rp->buf, len + 1);
        if (!p)
            return; /* out of memory: this window is left out of the comparison */
        rp->buf = p;
        rp->cap = len + 1;
    }
    /* protobuf-c packs a decoded message back to the bytes it was decoded from when they came
     * from protobuf-c, which the recorded windows did (window_pb.c). */
    len = protobuf_c_message_pack(&w->base, rp->buf);
    replay_sig_t s = {w->index, len, mw_rec_crc(0, rp->buf, len)};
    replay_match(rp, &rp->recorded, &rp->regen, &s);
}

/* ---- settings, feed, pacing ---------------------------------------------------------------- */

/* Takes the recorded settings that decide when windows close and when a job is silent. */
static void replay_settings(replay_t *rp, const Mpiwatch__RecordStart *st)
{
    static const char *const names[2] = {"lateness-ms", "silence-timeout-ms"};
    uint64_t values[2] = {st->lateness_ms, st->silence_timeout_ms};
    for (int i = 0; i < 2; i++) {
        char v[32], err[160];
        snprintf(v, sizeof v, "%llu", (unsigned long long)values[i]);
        if (mw_collector_options_set(&rp->opt, names[i], v, err, sizeof err) < 0)
            MW_LOG(MW_LOG_WARN,
                   "replay: the recorded %s is not valid (%s); the command "
                   "line's is used",
                   names[i], err);
    }
    /* The recorded hellos say which table each rank used (by name, or by the hash of this
     * build's or the legacy table: docs/function-table.md); only hellos without names of a
     * third table are refused, and counted as table_mismatch. */
    if (st->function_table_hash != mw_fn_table_hash() &&
        st->function_table_hash != mw_fn_legacy_hash())
        MW_LOG(MW_LOG_INFO,
               "replay: recorded by a collector with another MPI function table "
               "(hash %016llx, here %016llx): functions are matched by name",
               (unsigned long long)st->function_table_hash, (unsigned long long)mw_fn_table_hash());
    MW_LOG(MW_LOG_INFO,
           "replaying %s (recorded by mpiwatch-collector %s): lateness %llu ms, "
           "silence timeout %llu ms",
           rp->opt.replay, st->collector_version ? st->collector_version : "?",
           (unsigned long long)rp->opt.lateness_ms, (unsigned long long)rp->opt.silence_timeout_ms);
}

/* Attaches the feed (from --from on) and starts pacing at recorded time mono_ns. */
static void replay_publish_from(replay_t *rp, uint64_t mono_ns)
{
    mw_collector_t *c = rp->c;
    rp->publishing = 1;
    rp->pace_mono_ns = mono_ns;
    rp->pace_wall_ns = replay_wall_ns();
    c->feed = rp->feed;
    c->history = rp->history;
    if ((c->feed || c->history) && c->job.active) {
        /* Subscribers that join at --from learn the job as they would at its start (nothing
         * else takes a job description during a replay: it does not record). */
        mw__publish_job(c);
    }
}

/* Waits until wall time `until` (0: only looks), serving history requests and the metrics
 * endpoint meanwhile. Returns 0, or -1 when zmq_poll fails. */
static int replay_wait(replay_t *rp, uint64_t until)
{
    for (;;) {
        zmq_pollitem_t items[2] = {{.socket = NULL, .fd = rp->sig_fd, .events = ZMQ_POLLIN}};
        int n = 1;
        if (rp->history) {
            mw__history_pollitem(rp->history, &items[1]);
            if (items[1].socket || items[1].fd >= 0)
                n = 2;
        }
        uint64_t now = replay_wall_ns();
        long timeout = until > now ? (long)((until - now + MW_NS_PER_MS - 1) / MW_NS_PER_MS) : 0;
        if (rp->metrics) {
            long m = mw__metrics_update(rp->metrics, rp->c, now);
            if (m >= 0 && m < timeout)
                timeout = m;
        }
        if (zmq_poll(items, n, timeout) < 0) {
            if (zmq_errno() == EINTR)
                continue; /* a signal: the stop flag is set, the pipe holds its byte */
            MW_LOG(MW_LOG_ERROR, "zmq_poll: %s", zmq_strerror(zmq_errno()));
            return -1;
        }
        if (items[0].revents & ZMQ_POLLIN)
            mw__signals_read();
        if (mw__signals_reload())
            mw__rules_reload(rp->c); /* SIGHUP: as in a live run */
        if (n == 2 && (items[1].revents & ZMQ_POLLIN)) {
            mw__feed_serve(rp->feed);
            mw__history_serve(rp->history, rp->c);
        }
        if (mw__signals_stopped() || replay_wall_ns() >= until)
            return 0;
    }
}

static int job_open(const mw_collector_t *c)
{
    return c->job.active && c->job.ended == MW_END_NONE;
}

/* ---- the run ------------------------------------------------------------------------------- */

/* Whether a record of a tiered recording is left out: samples of windows before raw_from, and
 * timer events before the first sample from raw_from on. */
static int replay_tier_skip(replay_t *rp, const Mpiwatch__Record *rec)
{
    uint64_t w;
    switch (rec->body_case) {
    case MPIWATCH__RECORD__BODY_MESSAGE:
        if (!mw_rec_sample_window(rec->message.data, rec->message.len, &w))
            return 0;
        if (w < rp->raw_from)
            return 1;
        rp->raw_started = 1;
        return 0;
    case MPIWATCH__RECORD__BODY_TICK:
        return !rp->raw_started;
    default:
        return 0;
    }
}

/* Reads and applies the recording. Returns 0, or -1 with a logged message. */
static int replay_loop(replay_t *rp, mw_rec_reader_t *rd)
{
    mw_collector_t *c = rp->c;
    const mw_collector_options_t *o = &rp->opt;
    uint64_t from_ns = (uint64_t)(o->from_s * 1e9);
    uint64_t to_ns = o->to_s < 0 ? UINT64_MAX : (uint64_t)(o->to_s * 1e9);
    uint64_t origin = 0, records = 0;
    mw_clock_t last = {0, 0};
    int finished = 0, cut = 0, rc = 0;
    char err[256];
    /* The progress line (mw_progress.h): by default on a terminal only with --quiet, since the
     * live view draws there otherwise and shows the windows going by. */
    struct stat st;
    mw_progress_t progress;
    int mode = o->quiet ? -1 : 0;
    if (o->progress || o->no_progress)
        mode = o->progress && !o->no_progress;
    mw_progress_init(&progress, "replay", mode,
                     stat(o->replay, &st) == 0 ? (uint64_t)st.st_size : 0);
    if (mw_rec_reader_tier(rd, 0, UINT64_MAX, &rp->raw_from) == 1) {
        rp->tiered = 1;
        MW_LOG(MW_LOG_INFO,
               "replay %s: raw samples from window %llu, merged windows before (the recording "
               "dropped older samples: --record-full-span); windows from %llu on are derived "
               "again, earlier ones are read from the file by the viewer, export and history",
               o->replay, (unsigned long long)rp->raw_from, (unsigned long long)rp->raw_from);
    }

    while (!mw__signals_stopped() && !c->exit_requested) {
        const Mpiwatch__Record *rec;
        uint64_t at = 0;
        int k = mw_rec_reader_next(rd, &rec, &at, err, sizeof err);
        if (k < 0) {
            MW_LOG(MW_LOG_ERROR, "replay %s: %s", o->replay, err);
            rc = -1;
            break;
        }
        if (k == 0)
            break;
        mw_progress_update(&progress, at, rp->windows + rp->hidden);
        if (records++ == 0) {
            origin = rec->mono_ns;
            if (rec->body_case != MPIWATCH__RECORD__BODY_START)
                MW_LOG(MW_LOG_WARN,
                       "replay %s: no start frame; the command line's settings are used",
                       o->replay);
        }
        uint64_t rel = rec->mono_ns > origin ? rec->mono_ns - origin : 0;
        if (rel > to_ns) {
            cut = 1;
            break;
        }
        if (!rp->publishing && rel >= from_ns)
            replay_publish_from(rp, origin + from_ns);
        if (rp->publishing && o->speed > 0) {
            uint64_t ahead = rec->mono_ns > rp->pace_mono_ns ? rec->mono_ns - rp->pace_mono_ns : 0;
            double wait_ns = (double)ahead / o->speed; /* a tiny --speed: at most ~30 years */
            uint64_t until =
                rp->pace_wall_ns + (wait_ns < 1e18 ? (uint64_t)wait_ns : 1000000000000000000ull);
            if (until > replay_wall_ns() && replay_wait(rp, until) < 0) {
                rc = -1;
                break;
            }
        } else if (records % REPLAY_LOOK_EVERY == 0 && replay_wait(rp, 0) < 0) {
            rc = -1;
            break;
        }
        if (mw__signals_stopped())
            break; /* stopped while waiting for this record: it is not applied */
        if (rp->tiered && replay_tier_skip(rp, rec)) {
            rp->skipped++;
            continue;
        }

        switch (rec->body_case) {
        case MPIWATCH__RECORD__BODY_START:
            if (rec->start)
                replay_settings(rp, rec->start);
            break;
        case MPIWATCH__RECORD__BODY_WINDOW:
            if (rec->window)
                replay_recorded_window(rp, rd, rec->window);
            break;
        case MPIWATCH__RECORD__BODY_FINISH:
            finished = 1;
            break;
        case MPIWATCH__RECORD__BODY_LATENESS:
            /* Not derived again (its content depends on when the live worker ran): the
             * recorded batch is published as it was, after its window, so that the feed, the
             * history, the lateness rules and the report of a replay see what the live run saw
             * (docs/lateness.md). */
            if (rec->lateness && mw_collector_options_lateness(o) && c->job.active &&
                rec->lateness->job && strcmp(rec->lateness->job, c->job.job) == 0) {
                c->now = (mw_clock_t){rec->mono_ns, rec->real_ns};
                mw__pub_t m = {.kind = MW_PUB_LATENESS, .lateness = rec->lateness};
                mw__publish(c, &m);
            }
            break;
        default:
            break;
        }
        if (mw_collector_apply_record(c, rec)) {
            last.mono_ns = rec->mono_ns;
            last.real_ns = rec->real_ns;
        }
    }

    mw_progress_end(&progress, rp->windows + rp->hidden);
    if (rc == 0 && mw_rec_reader_truncated(rd))
        MW_LOG(MW_LOG_WARN,
               "replay %s: the file ends with an incomplete or damaged frame (its "
               "collector was killed?); replayed up to the last complete frame",
               o->replay);
    if (mw__signals_stopped())
        MW_LOG(MW_LOG_INFO, "replay stopped on signal");
    /* Stop where the replay stopped, as a live collector stopping there would, unless the
     * recording already ended the run (a signal's finish, or a job that ended). */
    if (!finished && (job_open(c) || !c->outputs_written))
        mw_collector_finish(c, &last);
    MW_LOG(MW_LOG_INFO,
           "replay %s: %llu records, %llu windows in range (first %llu, last %llu), %llu before "
           "--from (not published)%s; %llu windows compared with the recording, %llu differ",
           o->replay, (unsigned long long)records, (unsigned long long)rp->windows,
           (unsigned long long)rp->first_window, (unsigned long long)rp->last_window,
           (unsigned long long)rp->hidden, cut ? ", stopped at --to" : "",
           (unsigned long long)rp->compared, (unsigned long long)rp->differ);
    if (rp->tiered)
        MW_LOG(MW_LOG_INFO,
               "replay %s: tiers: raw samples from window %llu; %llu recorded windows before it "
               "(merged tier; %llu of them lean copies, the coarse tier) not derived again, %llu "
               "records of the dropped span not applied",
               o->replay, (unsigned long long)rp->raw_from, (unsigned long long)rp->merged_only,
               (unsigned long long)rp->merged_lean, (unsigned long long)rp->skipped);
    if (rp->differ)
        MW_LOG(MW_LOG_WARN,
               "replay %s: %llu regenerated windows differ from the recorded ones "
               "(first: window %llu): this collector does not merge as the recording's did",
               o->replay, (unsigned long long)rp->differ, (unsigned long long)rp->first_differ);
    if (mw_rec_reader_trace_failures(rd))
        MW_LOG(MW_LOG_WARN,
               "replay %s: %llu traces of recorded windows are not where the recording says "
               "(a damaged file?): those ranks are not exact there",
               o->replay, (unsigned long long)mw_rec_reader_trace_failures(rd));
    return rc;
}

int mw__replay_run(mw_collector_t *c)
{
    char err[256];
    int rc = -1;
    replay_t *rp = calloc(1, sizeof *rp);
    if (!rp) {
        MW_LOG(MW_LOG_ERROR, "replay: out of memory");
        return -1;
    }
    mw_rec_reader_t *rd = mw_rec_reader_open(c->opt->replay, err, sizeof err);
    if (!rd) {
        MW_LOG(MW_LOG_ERROR, "cannot replay %s", err);
        free(rp);
        return -1;
    }
    void *ctx = zmq_ctx_new();
    if (!ctx) {
        MW_LOG(MW_LOG_ERROR, "zmq_ctx_new: %s", zmq_strerror(zmq_errno()));
        mw_rec_reader_close(rd);
        free(rp);
        return -1;
    }

    /* The collector runs with a copy of the options (shallow: the strings stay the caller's)
     * into which the recorded settings go; both are restored when replay returns. */
    const mw_collector_options_t *user_opt = c->opt;
    rp->c = c;
    rp->opt = *user_opt;
    c->opt = &rp->opt;
    rp->next_on_window = c->on_window;
    rp->next_user = c->on_window_user;
    c->on_window = replay_on_window;
    c->on_window_user = rp;

    if ((rp->sig_fd = mw__signals_open()) < 0)
        goto out;
    if (rp->opt.publish && !(rp->feed = mw__feed_open(ctx, &rp->opt, mw__clock_now)))
        goto out;
    if (rp->opt.history && !(rp->history = mw__history_open(ctx, &rp->opt, mw__clock_now)))
        goto out;
    if (rp->opt.metrics_port &&
        !(rp->metrics = mw__metrics_start(c, (unsigned)rp->opt.metrics_port)))
        goto out;
    rc = replay_loop(rp, rd);
out:
    mw__metrics_stop(rp->metrics);
    c->feed = NULL;
    c->history = NULL;
    mw__feed_close(rp->feed);
    mw__history_close(rp->history);
    while (zmq_ctx_term(ctx) != 0) {
        if (zmq_errno() != EINTR) {
            MW_LOG(MW_LOG_ERROR, "zmq_ctx_term: %s", zmq_strerror(zmq_errno()));
            break;
        }
    }
    mw__signals_close();
    c->on_window = rp->next_on_window;
    c->on_window_user = rp->next_user;
    c->opt = user_opt;
    mw__pb_encoder_free(&rp->enc);
    free(rp->buf);
    free(rp);
    mw_rec_reader_close(rd);
    return rc;
}
