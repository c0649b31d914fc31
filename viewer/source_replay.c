/* source_replay.c: the replay source: a recording (--replay FILE.mpiw [--speed X]).
 *
 * DESIGN: the recording's reader stands in for the history endpoint, and nothing in a poll
 * blocks for long. At open the job descriptions before the first window (the job as it started)
 * and after the last one (how it ended) are read, with the span. Windows are fetched by index
 * through the recording's index (find, seek, read one frame), never by reading the samples
 * between them; with a speed the next window is read ahead and given to the model when the
 * wall clock reaches its recorded close time divided by the speed. A rank request reads the
 * recorded envelopes forward from the first sample of its first window, with a second reader
 * so that window fetches do not lose its place. A third reader walks the whole file once for
 * its time steps and job events (rule firings and steering messages happen between windows,
 * anywhere in the run). All replay work of one poll stops after SOURCE_BUDGET_NS and resumes at
 * the next.
 */
#include "source_internal.h"
#include "mw_wire.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SOURCE_BUDGET_NS 20000000ull /* replay work per poll */
#define SOURCE_PROBE_MAX 100000u     /* window indices probed for a rank request's start */
#define SOURCE_RANK_ARENA (4u * MW_MAX_MESSAGE_BYTES) /* as the collector decodes envelopes */

/* ---- replay ------------------------------------------------------------------------------- */

/* Copies a message of the reader (valid until its next read) as a standalone one, unpacked
 * with the default allocator as the model wants it: encoded again and unpacked. */
static Mpiwatch__Window *source_copy_window(mw_source_t *s, const Mpiwatch__Window *w)
{
    size_t n = mpiwatch__window__get_packed_size(w);
    if (n > s->rp.pack_cap) {
        uint8_t *p = realloc(s->rp.pack, n);
        if (!p)
            return NULL;
        s->rp.pack = p;
        s->rp.pack_cap = n;
    }
    mpiwatch__window__pack(w, s->rp.pack);
    return mpiwatch__window__unpack(NULL, n, s->rp.pack);
}

static int source_keep_job(const Mpiwatch__JobInfo *job, uint8_t **out, size_t *len)
{
    size_t n = mpiwatch__job_info__get_packed_size(job);
    uint8_t *p = malloc(n ? n : 1);
    if (!p)
        return -1;
    mpiwatch__job_info__pack(job, p);
    free(*out);
    *out = p;
    *len = n;
    return 0;
}

/* Reads window k. Returns 1 with a copy in *out (and the monotonic time it closed), 0 when the
 * recording has no window k, -1 on an error (logged). */
static int source_read_window(mw_source_t *s, uint64_t k, Mpiwatch__Window **out, uint64_t *mono_ns)
{
    uint64_t off;
    char err[256];
    int rc = mw_rec_reader_find_window(s->rp.rd, k, &off, NULL);
    if (rc <= 0)
        return rc;
    const Mpiwatch__Record *rec;
    if (mw_rec_reader_seek(s->rp.rd, off) < 0 ||
        mw_rec_reader_next(s->rp.rd, &rec, NULL, err, sizeof err) != 1 ||
        rec->body_case != MPIWATCH__RECORD__BODY_WINDOW || !rec->window ||
        rec->window->index != k) {
        mw__source_log("%s: cannot read window %" PRIu64, s->st.what, k);
        return -1;
    }
    /* The tiers of the windows read (status bar): merged windows as recorded ("windows"),
     * lean copies where the full window was dropped with the samples ("coarse": no per-rank
     * content; docs/recording.md "Tiers"), or both. */
    if (mw_rec_reader_last_lean(s->rp.rd))
        s->rp.read_lean++;
    else
        s->rp.read_full++;
    snprintf(s->st.tier, sizeof s->st.tier, "%s",
             !s->rp.read_lean  ? "windows"
             : s->rp.read_full ? "windows+coarse"
                               : "coarse");
    /* The traces' records are in the frames that brought them (docs/recording.md "Traces");
     * one that is not there leaves its rank not exact (the job is not checked here: the
     * source keeps it encoded; rank, window and the trace's fields are). */
    int bad = mw_rec_reader_resolve_window(s->rp.rd, rec->window, NULL);
    if (bad != 0) {
        s->st.errors++;
        mw__source_log("%s: window %" PRIu64 ": %d traces not found in the recording", s->st.what,
                       k, bad);
    }
    *out = source_copy_window(s, rec->window);
    if (!*out) {
        mw__source_log("out of memory reading window %" PRIu64, k);
        return -1;
    }
    if (s->fnmap.to_local) /* the job's function ids, this viewer's (a copy: owns its fields) */
        mw_fnmap_window(&s->fnmap, *out, NULL);
    if (mono_ns)
        *mono_ns = rec->mono_ns;
    return 1;
}

/* Reads the job descriptions and the last event: those before the first window (the job as
 * it started) and after the last window (as it ended). Returns 0, or -1 with a message. */
static int source_scan_jobs(mw_source_t *s, char *err, size_t errlen)
{
    const Mpiwatch__Record *rec;
    int rc;
    while ((rc = mw_rec_reader_next(s->rp.rd, &rec, NULL, err, errlen)) == 1) {
        if (rec->body_case == MPIWATCH__RECORD__BODY_WINDOW)
            break;
        if (rec->body_case == MPIWATCH__RECORD__BODY_JOB && rec->job &&
            source_keep_job(rec->job, &s->rp.job_start, &s->rp.job_start_len) < 0)
            goto oom;
        if (rec->body_case == MPIWATCH__RECORD__BODY_EVENT && rec->event)
            mw__source_set_event(s, rec->event->kind, rec->event->detail);
    }
    if (rc < 0)
        return -1;
    uint64_t off;
    if (s->rp.have_span && mw_rec_reader_find_window(s->rp.rd, s->rp.last_w, &off, NULL) == 1) {
        if (mw_rec_reader_seek(s->rp.rd, off) < 0) {
            snprintf(err, errlen, "cannot seek in the recording");
            return -1;
        }
        while ((rc = mw_rec_reader_next(s->rp.rd, &rec, NULL, err, errlen)) == 1) {
            if (rec->body_case == MPIWATCH__RECORD__BODY_JOB && rec->job &&
                source_keep_job(rec->job, &s->rp.job_final, &s->rp.job_final_len) < 0)
                goto oom;
            if (rec->body_case == MPIWATCH__RECORD__BODY_EVENT && rec->event)
                mw__source_set_event(s, rec->event->kind, rec->event->detail);
        }
        if (rc < 0)
            return -1;
    }
    if (!s->rp.job_start && !s->rp.job_final) {
        snprintf(err, errlen, "the recording holds no job description");
        return -1;
    }
    if (!s->rp.job_final) {
        if (!(s->rp.job_final = malloc(s->rp.job_start_len ? s->rp.job_start_len : 1)))
            goto oom;
        memcpy(s->rp.job_final, s->rp.job_start, s->rp.job_start_len);
        s->rp.job_final_len = s->rp.job_start_len;
    } else if (!s->rp.job_start) {
        if (!(s->rp.job_start = malloc(s->rp.job_final_len ? s->rp.job_final_len : 1)))
            goto oom;
        memcpy(s->rp.job_start, s->rp.job_final, s->rp.job_final_len);
        s->rp.job_start_len = s->rp.job_final_len;
    }
    return 0;
oom:
    snprintf(err, errlen, "out of memory");
    return -1;
}

/* Gives the model one of the kept job descriptions. */
static void source_replay_job(mw_source_t *s, mw_model_t *m, int final)
{
    Mpiwatch__JobInfo *job =
        mpiwatch__job_info__unpack(NULL, final ? s->rp.job_final_len : s->rp.job_start_len,
                                   final ? s->rp.job_final : s->rp.job_start);
    if (!job) {
        mw__source_log("%s: the job description does not decode", s->st.what);
        return;
    }
    mw__source_set_job(s, m, job);
}

/* Playing: gives the model the windows whose recorded close time has come. Returns the windows
 * added. */
static int source_play(mw_source_t *s, mw_model_t *m, uint64_t now_ns, uint64_t deadline)
{
    int added = 0;
    double elapsed = (double)(now_ns - s->rp.t0_ns) * s->rp.speed; /* recorded ns reached */
    while (mw__source_clock_ns() < deadline) {
        if (!s->rp.ahead) {
            if (s->rp.play_next > s->rp.last_w)
                break;
            int rc = source_read_window(s, s->rp.play_next, &s->rp.ahead, &s->rp.ahead_mono);
            if (rc < 0) {
                s->st.errors++;
                s->rp.play_next = s->rp.last_w + 1; /* the rest cannot be trusted */
                break;
            }
            s->rp.play_next++;
            if (rc == 0)
                continue; /* no such window: a gap in the run */
        }
        if ((double)(s->rp.ahead_mono - s->rp.first_mono) > elapsed)
            break;
        uint64_t k = s->rp.ahead->index;
        added += mw_model_add_window(m, s->rp.ahead) == 0;
        s->rp.ahead = NULL;
        s->rp.have_due = 1;
        s->rp.due_newest = k;
        mw__source_extent(s, m, s->rp.first_w, k);
    }
    if (!s->rp.ahead && s->rp.play_next > s->rp.last_w &&
        elapsed >= (double)(s->rp.last_mono - s->rp.first_mono)) {
        s->st.playing = 0;
        source_replay_job(s, m, 1);
        mw__source_extent(s, m, s->rp.first_w, s->rp.last_w);
    }
    return added;
}

/* Reads what the model wants, range after range, until the budget is spent. Returns the
 * windows added. */
static int source_serve(mw_source_t *s, mw_model_t *m, uint64_t deadline, int *more)
{
    int added = 0;
    while (mw__source_clock_ns() < deadline) {
        if (!s->rp.serving) {
            uint64_t first, last;
            if (!s->have_ext || !mw_model_wanted(m, &first, &last, MW__SOURCE_MAX_REQUEST))
                return added;
            s->rp.serving = 1;
            s->rp.serve_first = s->rp.serve_next = first;
            s->rp.serve_last = last;
            s->st.requests++;
        }
        while (s->rp.serve_next <= s->rp.serve_last && mw__source_clock_ns() < deadline) {
            Mpiwatch__Window *w;
            int rc = source_read_window(s, s->rp.serve_next, &w, NULL);
            if (rc < 0) {
                s->st.errors++;
                s->rp.serve_next = s->rp.serve_last + 1;
                break;
            }
            s->rp.serve_next++;
            if (rc == 1)
                added += mw_model_add_window(m, w) == 0;
        }
        if (s->rp.serve_next > s->rp.serve_last) {
            mw_model_answered(m, s->rp.serve_first, s->rp.serve_last);
            s->rp.serving = 0;
            s->st.replies++;
        }
    }
    *more = 1;
    return added;
}

/* The rank request is answered: its calls go to the model. */
static void source_rank_done(mw_source_t *s, mw_model_t *m)
{
    s->rk.running = 0;
    s->st.replies++;
    mw_model_set_rank_calls(m, s->rk.rank, s->rk.calls, s->rk.n);
}

/* Starts a rank request: from the first recorded sample of the first window of its range. */
static void source_rank_start(mw_source_t *s, mw_model_t *m)
{
    mw__source_rank_t *rk = &s->rk;
    rk->wanted = 0;
    rk->n = 0;
    rk->taken = 0;
    rk->taken_last = 0;
    s->st.requests++;
    if (!s->rp.have_span || rk->last < s->rp.first_w || rk->first > s->rp.last_w) {
        source_rank_done(s, m);
        return;
    }
    if (rk->first < s->rp.first_w)
        rk->first = s->rp.first_w;
    uint64_t start = 0, probes = 0;
    for (uint64_t k = rk->first; k <= rk->last && k <= s->rp.last_w && probes < SOURCE_PROBE_MAX;
         k++, probes++) {
        uint64_t woff, soff;
        int rc = mw_rec_reader_find_window(s->rp.rd, k, &woff, &soff);
        if (rc < 0)
            break;
        if (rc == 1) {
            start = soff ? soff : mw_rec_reader_start(s->rp.rd); /* unknown: from the beginning */
            break;
        }
    }
    if (!s->rp.arena_ready) {
        if (mw_arena_init(&s->rp.arena, SOURCE_RANK_ARENA) < 0) {
            mw__source_log("out of memory for a rank request");
            start = 0;
        } else {
            s->rp.arena_ready = 1;
        }
    }
    if (!start || mw_rec_reader_seek(s->rp.rd_rank, start) < 0) {
        if (start)
            s->st.errors++;
        source_rank_done(s, m);
        return;
    }
    rk->running = 1;
}

/* Reads the recorded envelopes of a rank request until the budget is spent. */
static void source_rank_scan(mw_source_t *s, mw_model_t *m, uint64_t deadline, int *more)
{
    mw__source_rank_t *rk = &s->rk;
    const Mpiwatch__JobInfo *job = mw_model_job(m);
    char err[256];
    for (unsigned n = 0; rk->running; n++) {
        if ((n & 63) == 0 && mw__source_clock_ns() >= deadline) {
            *more = 1;
            return;
        }
        const Mpiwatch__Record *rec;
        int rc = mw_rec_reader_next(s->rp.rd_rank, &rec, NULL, err, sizeof err);
        if (rc < 0) {
            mw__source_log("%s: %s", s->st.what, err);
            s->st.errors++;
        }
        if (rc <= 0 || (rec->body_case == MPIWATCH__RECORD__BODY_WINDOW && rec->window &&
                        rec->window->index >= rk->last)) {
            source_rank_done(s, m);
            return;
        }
        uint32_t r;
        if (rec->body_case != MPIWATCH__RECORD__BODY_MESSAGE || rec->parts > 1 ||
            !mw_rec_envelope_rank(rec->message.data, rec->message.len, &r) || r != rk->rank)
            continue;
        /* Only what the collector accepted counts: this job, a sample, in window order. */
        const Mpiwatch__Envelope *env =
            mw_envelope_decode(&s->rp.arena, rec->message.data, rec->message.len);
        if (!env || env->version != MW_PROTO_VERSION || env->rank != rk->rank ||
            env->body_case != MPIWATCH__ENVELOPE__BODY_SAMPLE || !env->sample || !env->job ||
            strcmp(env->job, s->job_name) != 0)
            continue;
        uint64_t w = env->sample->window;
        if (w < rk->first || w > rk->last || (rk->taken && w <= rk->taken_last))
            continue;
        rk->taken = 1;
        rk->taken_last = w;
        mw__source_rank_sample(rk, job, env);
    }
}

/* 1 when a recorded frame is an Envelope whose body is a Trace (field 13: a reach-back trace
 * the collector received after its window closed, recorded as it came): found by walking the
 * top-level fields, so that the samples, the bulk of a recording, are never unpacked here. */
static int envelope_is_trace(const uint8_t *p, size_t len)
{
    size_t pos = 0;
    while (pos < len) {
        uint64_t key, v;
        if (mw_wire_get_varint(p, len, &pos, &key) < 0)
            return 0;
        unsigned type = (unsigned)(key & 7);
        if ((key >> 3) == 13 && type == 2)
            return 1;
        if (type == 0) {
            if (mw_wire_get_varint(p, len, &pos, &v) < 0)
                return 0;
        } else if (type == 2) {
            if (mw_wire_get_varint(p, len, &pos, &v) < 0 || v > len - pos)
                return 0;
            pos += (size_t)v;
        } else if (type == 1 || type == 5) {
            size_t n = type == 1 ? 8 : 4;
            if (n > len - pos)
                return 0;
            pos += n;
        } else {
            return 0;
        }
    }
    return 0;
}

/* A recorded reach-back trace goes to the model, which folds it into its window. */
static void source_replay_trace(mw_source_t *s, mw_model_t *m, const Mpiwatch__Record *rec)
{
    if (rec->parts > 1 || !envelope_is_trace(rec->message.data, rec->message.len))
        return;
    Mpiwatch__Envelope *env = mpiwatch__envelope__unpack(NULL, rec->message.len, rec->message.data);
    if (!env)
        return;
    if (env->body_case == MPIWATCH__ENVELOPE__BODY_TRACE && env->trace && mw_model_job(m)) {
        Mpiwatch__RankTrace *rt = malloc(sizeof *rt);
        if (rt) {
            mpiwatch__rank_trace__init(rt);
            rt->rank = env->rank;
            rt->trace = env->trace; /* moved: freed with rt */
            env->trace = NULL;
            env->body_case = MPIWATCH__ENVELOPE__BODY__NOT_SET;
            if (mw_model_add_trace(m, rt) == 0)
                s->st.traces++;
        }
    }
    mpiwatch__envelope__free_unpacked(env, NULL);
}

/* Hands the model the recording's time steps and job events: reads on from where the last poll
 * stopped until the deadline; playing at a speed, a step or event waits until the recorded
 * time of its frame. */
static void source_scan_steps(mw_source_t *s, mw_model_t *m, uint64_t now_ns, uint64_t deadline,
                              int *more)
{
    double elapsed = (double)(now_ns - s->rp.t0_ns) * s->rp.speed;
    while (!s->rp.steps_done && mw__source_clock_ns() < deadline) {
        if (s->rp.ev_ahead) {
            if (s->st.playing && (double)(int64_t)(s->rp.ev_mono - s->rp.first_mono) > elapsed)
                return; /* not due yet */
            mw_model_add_event(m, s->rp.ev_kind, s->rp.ev_detail, s->rp.ev_real_ns);
            s->st.events++;
            s->rp.ev_ahead = 0;
            continue;
        }
        if (!s->rp.step_ahead) {
            const Mpiwatch__Record *rec;
            char err[256];
            int rc = mw_rec_reader_next(s->rp.rd_step, &rec, NULL, err, sizeof err);
            if (rc <= 0) {
                if (rc < 0)
                    mw__source_log("%s: reading steps: %s", s->st.what, err);
                s->rp.steps_done = 1;
                s->st.steps_pending = 0;
                break;
            }
            if (rec->body_case == MPIWATCH__RECORD__BODY_EVENT && rec->event) {
                const Mpiwatch__JobEvent *ev = rec->event;
                snprintf(s->rp.ev_kind, sizeof s->rp.ev_kind, "%s", ev->kind ? ev->kind : "");
                snprintf(s->rp.ev_detail, sizeof s->rp.ev_detail, "%s",
                         ev->detail ? ev->detail : "");
                s->rp.ev_real_ns = ev->real_ns ? ev->real_ns : rec->real_ns;
                s->rp.ev_mono = rec->mono_ns;
                s->rp.ev_ahead = 1;
                continue;
            }
            if (rec->body_case == MPIWATCH__RECORD__BODY_MESSAGE) {
                source_replay_trace(s, m, rec);
                continue;
            }
            if (rec->body_case != MPIWATCH__RECORD__BODY_STEP || !rec->step)
                continue;
            size_t n = mpiwatch__step__get_packed_size(rec->step);
            if (n > s->rp.pack_cap) {
                uint8_t *p = realloc(s->rp.pack, n);
                if (!p) {
                    mw__source_log("out of memory reading a step");
                    s->rp.steps_done = 1;
                    s->st.steps_pending = 0;
                    break;
                }
                s->rp.pack = p;
                s->rp.pack_cap = n;
            }
            mpiwatch__step__pack(rec->step, s->rp.pack);
            s->rp.step_ahead = mpiwatch__step__unpack(NULL, n, s->rp.pack);
            s->rp.step_ahead_mono = rec->mono_ns;
            if (!s->rp.step_ahead)
                continue;
        }
        if (s->st.playing && (double)(s->rp.step_ahead_mono - s->rp.first_mono) > elapsed)
            return; /* not due yet: nothing to do before then */
        mw__source_fn_step(s, s->rp.step_ahead);
        if (mw_model_add_step(m, s->rp.step_ahead) == 0)
            s->st.steps++;
        s->rp.step_ahead = NULL;
    }
    if (!s->rp.steps_done)
        *more = 1;
}

static int source_poll_replay(mw_source_t *s, mw_model_t *m, uint64_t now_ns)
{
    int added = 0, more = 0;
    if (!s->rp.started) {
        s->rp.started = 1;
        s->rp.t0_ns = now_ns;
        snprintf(s->st.tier, sizeof s->st.tier, "windows"); /* the recorded merged windows */
        s->st.playing = s->rp.speed > 0 && s->rp.have_span;
        source_replay_job(s, m, !s->st.playing);
        if (!s->st.playing && s->rp.have_span)
            mw__source_extent(s, m, s->rp.first_w, s->rp.last_w);
        s->rp.play_next = s->rp.first_w;
    }
    uint64_t deadline = mw__source_clock_ns() + SOURCE_BUDGET_NS;
    if (s->st.playing)
        added += source_play(s, m, now_ns, deadline);
    added += source_serve(s, m, deadline, &more);
    if (s->rk.wanted)
        source_rank_start(s, m);
    if (s->rk.running)
        source_rank_scan(s, m, deadline, &more);
    source_scan_steps(s, m, now_ns, deadline, &more);
    s->rp.more = more || added > 0 || s->rp.serving || s->rk.running;
    return added;
}

/* ---- the interface ------------------------------------------------------------------------ */

static void replay_wait(mw_source_t *s, int timeout_ms)
{
    /* Work left from the last poll, or a rank request, is done at once. */
    if (!s->rp.started || s->rp.more || s->rk.wanted)
        return;
    uint64_t wait_ns = (uint64_t)timeout_ms * 1000000ull;
    if (s->st.playing && s->rp.ahead) {
        uint64_t due =
            s->rp.t0_ns + (uint64_t)((double)(s->rp.ahead_mono - s->rp.first_mono) / s->rp.speed);
        uint64_t now = mw__source_clock_ns();
        uint64_t left = due > now ? due - now : 0;
        if (left < wait_ns)
            wait_ns = left;
    }
    struct timespec ts = {(time_t)(wait_ns / 1000000000ull), (long)(wait_ns % 1000000000ull)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static int replay_can_rank(const mw_source_t *s)
{
    return s->rp.rd_rank != NULL;
}

static void replay_release(mw_source_t *s)
{
    if (s->rp.ahead)
        mpiwatch__window__free_unpacked(s->rp.ahead, NULL);
    mw_rec_reader_close(s->rp.rd);
    mw_rec_reader_close(s->rp.rd_rank);
    mw_rec_reader_close(s->rp.rd_step);
    if (s->rp.step_ahead)
        mpiwatch__step__free_unpacked(s->rp.step_ahead, NULL);
    if (s->rp.arena_ready)
        mw_arena_free(&s->rp.arena);
    free(s->rp.job_start);
    free(s->rp.job_final);
    free(s->rp.pack);
}

static const mw__source_ops_t replay_ops = {source_poll_replay, replay_wait, replay_can_rank,
                                            replay_release};

mw_source_t *mw_source_replay(const char *path, double speed, char *err, size_t len)
{
    if (!(speed >= 0)) {
        snprintf(err, len, "the speed must be 0 or more");
        return NULL;
    }
    mw_source_t *s = mw__source_new(path, &replay_ops);
    if (!s) {
        snprintf(err, len, "out of memory");
        return NULL;
    }
    s->rp.speed = speed;
    char why[256];
    if (!(s->rp.rd = mw_rec_reader_open(path, why, sizeof why)) ||
        !(s->rp.rd_rank = mw_rec_reader_open(path, why, sizeof why)) ||
        !(s->rp.rd_step = mw_rec_reader_open(path, why, sizeof why))) {
        snprintf(err, len, "%s", why);
        goto fail;
    }
    int rc = mw_rec_reader_span(s->rp.rd, &s->rp.first_w, &s->rp.last_w, &s->rp.first_mono,
                                &s->rp.last_mono);
    if (rc < 0) {
        snprintf(err, len, "%s: cannot read the recording's index", path);
        goto fail;
    }
    s->rp.have_span = rc == 1;
    if (mw_rec_reader_seek(s->rp.rd, mw_rec_reader_start(s->rp.rd)) < 0) {
        snprintf(err, len, "%s: cannot seek", path);
        goto fail;
    }
    if (mw_rec_reader_seek(s->rp.rd_step, mw_rec_reader_start(s->rp.rd_step)) < 0) {
        snprintf(err, len, "%s: cannot seek", path);
        goto fail;
    }
    s->st.steps_pending = 1;
    if (source_scan_jobs(s, why, sizeof why) < 0) {
        snprintf(err, len, "%s: %s", path, why);
        goto fail;
    }
    Mpiwatch__JobInfo *job = mpiwatch__job_info__unpack(NULL, s->rp.job_final_len, s->rp.job_final);
    if (!job) {
        snprintf(err, len, "%s: the job description does not decode", path);
        goto fail;
    }
    snprintf(s->job_name, sizeof s->job_name, "%s", job->job ? job->job : "");
    mpiwatch__job_info__free_unpacked(job, NULL);
    return s;
fail:
    mw_source_free(s);
    return NULL;
}
