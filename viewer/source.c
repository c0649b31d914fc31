/* source.c: the viewer's data source, a live collector (feed + history) or a recording.
 *
 * DESIGN: everything happens in mw_source_poll(), called once per frame, and nothing in it
 * blocks. Live: the SUB socket is drained with ZMQ_DONTWAIT up to SOURCE_DRAIN_CAP messages per
 * poll (job descriptions, windows, events); windows and events go into the model, gaps in
 * their indices are counted. The DEALER socket on the history endpoint carries at most one
 * window request (first the last SOURCE_LAST_N windows, then what mw_model_wanted() says is
 * missing) and one rank request at a time, each with its own id: a reply whose id matches
 * neither (the answer to a request given up after SOURCE_TIMEOUT_NS) is dropped. A truncated
 * reply is followed by a request for the rest; a range that failed or brought nothing is not
 * asked for again before SOURCE_BACKOFF_NS, so that a hole in the run does not cost a request
 * per frame. Messages are unpacked with protobuf-c's default allocator, so every sub-message is
 * its own allocation: a window or job is detached from its Feed or HistoryReply and handed to the
 * model, which owns it from then on.
 * Replay: the recording's reader stands in for the history endpoint. At open the job
 * descriptions before the first window (the job as it started) and after the last one (how it
 * ended) are read, with the span. Windows are fetched by index through the recording's index
 * (find, seek, read one frame), never by reading the samples between them; with a speed the
 * next window is read ahead and given to the model when the wall clock reaches its recorded
 * close time divided by the speed. A rank request reads the recorded envelopes forward from the
 * first sample of its first window, with a second reader so that window fetches do not lose
 * its place. A third reader walks the whole file once for its time steps and job events
 * (rule firings and steering messages happen between windows, anywhere in the run). All
 * replay work of one poll stops after SOURCE_BUDGET_NS and resumes at the next.
 */
#include "source.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zmq.h>

#include "keyfile.h"
#include "mw_recording.h"
#include "topo.h"

#define SOURCE_DRAIN_CAP 256            /* feed messages taken per poll */
#define SOURCE_SUB_RCVHWM 1000          /* feed messages libzmq queues for us */
#define SOURCE_MAXMSG (256ll << 20)     /* the collector caps replies at 64 MiB */
#define SOURCE_LAST_N 600u              /* windows asked for on connect (1 min of 100 ms) */
#define SOURCE_MAX_REQUEST 256u         /* windows per range request */
#define SOURCE_TIMEOUT_NS 5000000000ull /* a request unanswered this long is given up */
#define SOURCE_BACKOFF_NS 1000000000ull /* after a range that failed or brought nothing */
#define SOURCE_BUDGET_NS 20000000ull    /* replay work per poll */
#define SOURCE_PENDING_MAX 256u         /* feed windows kept until the job is known */
#define SOURCE_PROBE_MAX 100000u        /* window indices probed for a rank request's start */
#define SOURCE_RANK_ARENA (4u * MW_MAX_MESSAGE_BYTES) /* as the collector decodes envelopes */
#define SOURCE_RANK_CALLS_MAX (1u << 24)              /* calls one rank request may collect */

/* A request on the history socket. */
typedef struct {
    int active;
    uint64_t id;
    uint64_t sent_ns;
    uint64_t first, last;   /* what is asked now (a continuation after a truncated reply) */
    uint64_t mfirst, mlast; /* the range mw_model_wanted() gave, answered at the end */
    int from_model;         /* mfirst..mlast must be reported with mw_model_answered() */
    int last_n;             /* the initial "last N" request */
} source_req_t;

/* A rank request: wanted (to send or scan), then being answered. */
typedef struct {
    int wanted;  /* mw_source_want_rank() set it, not started yet */
    int running; /* sent (live) or being scanned (replay) */
    uint32_t rank;
    uint64_t first, last;
    uint64_t id, sent_ns;
    mw_rank_call_t *calls;
    size_t n, cap;
    /* replay: the scan */
    int taken;
    uint64_t taken_last;
} source_rank_t;

struct mw_source {
    mw_source_status_t st;
    char event[256]; /* the last event, "kind: detail" */

    /* live */
    void *ctx, *sub, *dealer;
    uint64_t next_id;
    source_req_t req;
    uint64_t backoff_until; /* no new range request before this time (failures, holes) */
    int job_req_sent;
    uint64_t job_req_id, job_req_ns;
    int asked_last; /* the initial last-N request has been sent */
    int hold_ext;   /* live with history: no extent for the model before its first answer */
    int have_prev;
    uint64_t prev_index;
    char job_name[256]; /* of the job in the model: a new one resets the feed's bookkeeping */
    Mpiwatch__Window *pending[SOURCE_PENDING_MAX]; /* windows that came before the job */
    unsigned n_pending;

    /* both */
    int have_ext;
    uint64_t ext_oldest, ext_newest;
    source_rank_t rk;

    /* replay */
    mw_rec_reader_t *rd, *rd_rank;
    double speed;
    int have_span;
    uint64_t first_w, last_w, first_mono, last_mono;
    uint8_t *job_start, *job_final; /* packed JobInfo of the start and of the end */
    size_t job_start_len, job_final_len;
    int started;             /* the first poll has set the job */
    uint64_t t0_ns;          /* wall clock (CLOCK_MONOTONIC) of the first poll */
    uint64_t play_next;      /* next window index to read ahead */
    Mpiwatch__Window *ahead; /* read ahead, not due yet */
    uint64_t ahead_mono;
    int have_due;
    uint64_t due_newest; /* the newest window given while playing */
    int serving;         /* a wanted range is being read */
    uint64_t serve_next, serve_first, serve_last;
    uint8_t *pack; /* scratch: a record's window encoded again to be unpacked alone */
    size_t pack_cap;
    int more;         /* the last poll left work, or did some: do not sleep */
    /* Time steps: a reader of their own walks the whole file once, a budget per poll. */
    mw_rec_reader_t *rd_step;
    int steps_done;
    Mpiwatch__Step *step_ahead; /* playing: read, not due yet */
    uint64_t step_ahead_mono;
    /* Job events are read by the same walk; playing, one waits here until it is due. */
    int ev_ahead;
    char ev_kind[32], ev_detail[MW_EVENT_DETAIL];
    uint64_t ev_real_ns, ev_mono;
    mw_arena_t arena; /* decodes recorded envelopes for rank requests */
    int arena_ready;
};

/* ---- helpers ------------------------------------------------------------------------------ */

static void source_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void source_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("mpiwatch-viewer: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static uint64_t source_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void source_set_event(mw_source_t *s, const char *kind, const char *detail)
{
    snprintf(s->event, sizeof s->event, "%s%s%s", kind ? kind : "event",
             detail && *detail ? ": " : "", detail ? detail : "");
}

/* Notes the job's state for the status: ended when it is no longer "running". */
static void source_job_state(mw_source_t *s, const Mpiwatch__JobInfo *job)
{
    s->st.ended = job->state && *job->state && strcmp(job->state, "running") != 0;
}

static void source_extent(mw_source_t *s, mw_model_t *m, uint64_t oldest, uint64_t newest)
{
    if (!s->have_ext || newest > s->ext_newest)
        s->ext_newest = newest;
    s->ext_oldest = oldest;
    s->have_ext = 1;
    if (s->ext_oldest > s->ext_newest)
        s->ext_oldest = s->ext_newest;
    /* The model takes its time axis' origin from the first extent it is given: with a history
     * endpoint that must be the history's oldest window, not the feed's first window; and it
     * needs the job's grid first. */
    if (!s->hold_ext && mw_model_job(m))
        mw_model_set_extent(m, s->ext_oldest, s->ext_newest);
}

/* Makes room for `more` calls in the rank request's buffer. Returns 0, or -1. */
static int source_rank_reserve(source_rank_t *rk, size_t more)
{
    if (rk->n + more <= rk->cap)
        return 0;
    if (rk->n + more > SOURCE_RANK_CALLS_MAX)
        return -1;
    size_t cap = rk->cap ? rk->cap : 1024;
    while (cap < rk->n + more)
        cap *= 2;
    mw_rank_call_t *c = realloc(rk->calls, cap * sizeof *c);
    if (!c)
        return -1;
    rk->calls = c;
    rk->cap = cap;
    return 0;
}

/* Adds the calls of one of the rank's samples. */
static void source_rank_sample(source_rank_t *rk, const Mpiwatch__JobInfo *job,
                               const Mpiwatch__Envelope *env)
{
    const Mpiwatch__Sample *smp = env->sample;
    if (!job || !smp || env->rank != rk->rank)
        return;
    if (source_rank_reserve(rk, smp->n_density_fn + smp->n_longest + 1) < 0)
        return; /* the request stops growing; what was collected is shown */
    mw_rank_calls_from_sample(env, job->window_ns, job->subslots, rk->calls, &rk->n, rk->cap);
}

/* ---- live: the feed ----------------------------------------------------------------------- */

static int source_setopt(void *sock, int opt, const void *v, size_t len, const char *name,
                         char *err, size_t errlen)
{
    if (zmq_setsockopt(sock, opt, v, len) != 0) {
        snprintf(err, errlen, "zmq_setsockopt(%s): %s", name, zmq_strerror(zmq_errno()));
        return -1;
    }
    return 0;
}

/* Gives a window to the model; before the job is known it waits in s->pending. Returns 1 when
 * the model took it. */
static int source_add_window(mw_source_t *s, mw_model_t *m, Mpiwatch__Window *w)
{
    if (!mw_model_job(m)) {
        if (s->n_pending < SOURCE_PENDING_MAX) {
            s->pending[s->n_pending++] = w;
        } else {
            mpiwatch__window__free_unpacked(w, NULL);
        }
        return 0;
    }
    return mw_model_add_window(m, w) == 0;
}

/* Hands the model a job description (owned from now on). A different job resets what the feed
 * taught us; windows that waited for a job go in now. Returns the windows added. A description
 * over the caps a collector keeps to (mw_topo_job_check: ranks, names, PUs, hardware objects
 * and depth, strings; proto/mw_limits.h) is refused, logged and counted as an error: the
 * model keeps the job it had, so a crafted feed or recording cannot make the views build or
 * walk more than a real collector would send. */
static int source_set_job(mw_source_t *s, mw_model_t *m, Mpiwatch__JobInfo *job)
{
    char why[160];
    if (mw_topo_job_check(job, why, sizeof why) < 0) {
        source_log("%s: job description refused: %s", s->st.what, why);
        s->st.errors++;
        mpiwatch__job_info__free_unpacked(job, NULL);
        return 0;
    }
    const char *name = job->job ? job->job : "";
    if (strcmp(name, s->job_name) != 0) {
        if (*s->job_name) { /* another job: what we knew of the previous one is void */
            s->have_prev = 0;
            s->have_ext = 0;
        }
        snprintf(s->job_name, sizeof s->job_name, "%s", name);
    }
    source_job_state(s, job);
    s->st.connected = 1;
    mw_model_set_job(m, job);
    int added = 0;
    for (unsigned i = 0; i < s->n_pending; i++)
        added += mw_model_add_window(m, s->pending[i]) == 0;
    s->n_pending = 0;
    if (s->have_ext && !s->hold_ext)
        mw_model_set_extent(m, s->ext_oldest, s->ext_newest);
    return added;
}

/* Applies one feed message (its second frame, len bytes) to the model: the one place that
 * decides which body goes to which model call and who owns it (the live drain below, and the
 * fuzz target tests/fuzz/fuzz_feed.c). Returns the windows added. */
int mw__source_feed_message(mw_source_t *s, mw_model_t *m, const void *data, size_t len)
{
    Mpiwatch__Feed *f = mpiwatch__feed__unpack(NULL, len, data);
    if (!f)
        return 0;
    int added = 0;
    if (f->body_case == MPIWATCH__FEED__BODY_JOB && f->job) {
        Mpiwatch__JobInfo *job = f->job;
        f->job = NULL;
        f->body_case = MPIWATCH__FEED__BODY__NOT_SET;
        added += source_set_job(s, m, job);
    } else if (f->body_case == MPIWATCH__FEED__BODY_WINDOW && f->window) {
        Mpiwatch__Window *w = f->window;
        f->window = NULL;
        f->body_case = MPIWATCH__FEED__BODY__NOT_SET;
        uint64_t k = w->index;
        s->st.feed_windows++;
        if (s->have_prev && k > s->prev_index + 1)
            s->st.feed_gaps += k - s->prev_index - 1;
        s->have_prev = 1;
        s->prev_index = k;
        added += source_add_window(s, m, w);
        source_extent(s, m, s->have_ext ? s->ext_oldest : k, k);
    } else if (f->body_case == MPIWATCH__FEED__BODY_STEP && f->step) {
        Mpiwatch__Step *st = f->step;
        f->step = NULL;
        f->body_case = MPIWATCH__FEED__BODY__NOT_SET;
        if (mw_model_job(m) && mw_model_add_step(m, st) == 0)
            s->st.steps++;
        else if (!mw_model_job(m))
            mpiwatch__step__free_unpacked(st, NULL);
    } else if (f->body_case == MPIWATCH__FEED__BODY_EVENT && f->event) {
        source_set_event(s, f->event->kind, f->event->detail);
        mw_model_add_event(m, f->event->kind, f->event->detail, f->event->real_ns);
        s->st.events++;
    }
    mpiwatch__feed__free_unpacked(f, NULL);
    return added;
}

/* Takes what the feed has, up to the cap. Returns the windows added, or -1. */
static int source_drain_feed(mw_source_t *s, mw_model_t *m)
{
    int added = 0;
    for (int i = 0; i < SOURCE_DRAIN_CAP; i++) {
        zmq_msg_t topic, body;
        if (zmq_msg_init(&topic) != 0) {
            source_log("zmq_msg_init: %s", zmq_strerror(zmq_errno()));
            return -1;
        }
        if (zmq_msg_recv(&topic, s->sub, ZMQ_DONTWAIT) < 0) {
            int e = zmq_errno();
            zmq_msg_close(&topic);
            if (e == EAGAIN || e == EINTR)
                break;
            source_log("receiving from the feed: %s", zmq_strerror(e));
            return -1;
        }
        int more = zmq_msg_more(&topic);
        zmq_msg_close(&topic);
        if (!more)
            continue; /* not the feed's two frames */
        if (zmq_msg_init(&body) != 0) {
            source_log("zmq_msg_init: %s", zmq_strerror(zmq_errno()));
            return -1;
        }
        /* The frames of one message arrive together: the body is there. */
        if (zmq_msg_recv(&body, s->sub, ZMQ_DONTWAIT) < 0) {
            source_log("receiving a feed message: %s", zmq_strerror(zmq_errno()));
            zmq_msg_close(&body);
            return -1;
        }
        int extra = zmq_msg_more(&body);
        if (!extra)
            added += mw__source_feed_message(s, m, zmq_msg_data(&body), zmq_msg_size(&body));
        zmq_msg_close(&body);
        while (extra) { /* a longer message, which the feed never sends: skip its frames */
            zmq_msg_t x;
            if (zmq_msg_init(&x) != 0 || zmq_msg_recv(&x, s->sub, ZMQ_DONTWAIT) < 0) {
                source_log("receiving a feed message: %s", zmq_strerror(zmq_errno()));
                zmq_msg_close(&x);
                return -1;
            }
            extra = zmq_msg_more(&x);
            zmq_msg_close(&x);
        }
    }
    return added;
}

/* ---- live: the history endpoint ----------------------------------------------------------- */

/* Sends one request on the DEALER (the body alone). Returns its id, or 0 when it could not be
 * sent (logged). */
static uint64_t source_send(mw_source_t *s, Mpiwatch__HistoryRequest *r)
{
    r->id = ++s->next_id;
    size_t n = mpiwatch__history_request__get_packed_size(r);
    uint8_t buf[256];
    if (n > sizeof buf)
        return 0;
    mpiwatch__history_request__pack(r, buf);
    if (zmq_send(s->dealer, buf, n, ZMQ_DONTWAIT) < 0) {
        int e = zmq_errno();
        if (e != EAGAIN)
            source_log("sending a history request: %s", zmq_strerror(e));
        return 0;
    }
    s->st.requests++;
    return r->id;
}

static int source_send_range(mw_source_t *s, uint64_t first, uint64_t last, uint64_t now_ns)
{
    Mpiwatch__HistoryRequest r = MPIWATCH__HISTORY_REQUEST__INIT;
    Mpiwatch__WindowRange wr = MPIWATCH__WINDOW_RANGE__INIT;
    wr.first = first;
    wr.last = last;
    r.what_case = MPIWATCH__HISTORY_REQUEST__WHAT_RANGE;
    r.range = &wr;
    uint64_t id = source_send(s, &r);
    if (!id)
        return -1;
    s->req.active = 1;
    s->req.id = id;
    s->req.sent_ns = now_ns;
    s->req.first = first;
    s->req.last = last;
    return 0;
}

static int source_send_rank(mw_source_t *s, uint64_t now_ns)
{
    Mpiwatch__HistoryRequest r = MPIWATCH__HISTORY_REQUEST__INIT;
    Mpiwatch__RankRange rr = MPIWATCH__RANK_RANGE__INIT;
    rr.rank = s->rk.rank;
    rr.first = s->rk.first;
    rr.last = s->rk.last;
    r.what_case = MPIWATCH__HISTORY_REQUEST__WHAT_RANK_SAMPLES;
    r.rank_samples = &rr;
    uint64_t id = source_send(s, &r);
    if (!id)
        return -1;
    s->rk.id = id;
    s->rk.sent_ns = now_ns;
    s->rk.running = 1;
    return 0;
}

/* The window request is over (answered, failed or given up). */
static void source_req_done(mw_source_t *s, mw_model_t *m)
{
    if (s->req.from_model)
        mw_model_answered(m, s->req.mfirst, s->req.mlast);
    memset(&s->req, 0, sizeof s->req);
}

/* A reply to the window request. Returns the windows added. */
static int source_window_reply(mw_source_t *s, mw_model_t *m, Mpiwatch__HistoryReply *r,
                               uint64_t now_ns)
{
    int added = 0;
    if (r->error && *r->error) {
        /* Windows the endpoint no longer has, or a bad range: asking again at once, every
         * frame, would only repeat the error. */
        s->st.errors++;
        s->backoff_until = now_ns + SOURCE_BACKOFF_NS;
        source_req_done(s, m);
        return 0;
    }
    int have_last = 0;
    uint64_t last = 0;
    for (size_t i = 0; i < r->n_windows; i++) {
        Mpiwatch__Window *w = r->windows[i];
        r->windows[i] = NULL;
        if (!w)
            continue;
        have_last = 1;
        last = w->index;
        added += source_add_window(s, m, w);
    }
    r->n_windows = 0; /* taken: only the array is freed with the reply */
    if (r->newest || r->oldest)
        source_extent(s, m, r->oldest, r->newest);
    uint64_t until = s->req.last_n ? r->newest : s->req.last;
    if (r->truncated && have_last && last < until) {
        /* The reply stopped at its size limit: ask for the rest, same model range. */
        source_req_t keep = s->req;
        if (source_send_range(s, last + 1, until, now_ns) == 0) {
            s->req.mfirst = keep.mfirst;
            s->req.mlast = keep.mlast;
            s->req.from_model = keep.from_model;
            return added;
        }
        s->req = keep;
    }
    if (!have_last) /* nothing of the range exists (a hole in the run): do not insist */
        s->backoff_until = now_ns + SOURCE_BACKOFF_NS;
    source_req_done(s, m);
    return added;
}

/* A reply to the rank request. */
static void source_rank_reply(mw_source_t *s, mw_model_t *m, const Mpiwatch__HistoryReply *r,
                              uint64_t now_ns)
{
    source_rank_t *rk = &s->rk;
    if (r->error && *r->error) {
        s->st.errors++;
        rk->running = 0;
        return;
    }
    uint64_t last = 0;
    int have_last = 0;
    for (size_t i = 0; i < r->n_samples; i++) {
        const Mpiwatch__Envelope *env = r->samples[i];
        if (!env || env->body_case != MPIWATCH__ENVELOPE__BODY_SAMPLE || !env->sample)
            continue;
        source_rank_sample(rk, mw_model_job(m), env);
        have_last = 1;
        last = env->sample->window;
    }
    if (r->truncated && have_last && last < rk->last) {
        rk->first = last + 1;
        if (source_send_rank(s, now_ns) == 0)
            return;
    }
    rk->running = 0;
    mw_model_set_rank_calls(m, rk->rank, rk->calls, rk->n);
}

/* The first answer of the history endpoint (or none in time): from now on the model gets the
 * extent, whose oldest window is the history's when it said. */
static void source_release_ext(mw_source_t *s, mw_model_t *m, const Mpiwatch__HistoryReply *r)
{
    if (!s->hold_ext)
        return;
    s->hold_ext = 0;
    if (r && !(r->error && *r->error) && (r->oldest || r->newest))
        source_extent(s, m, r->oldest, r->newest);
    else if (s->have_ext)
        source_extent(s, m, s->ext_oldest, s->ext_newest);
}

/* Takes the replies that arrived. Returns the windows added, or -1. */
static int source_drain_history(mw_source_t *s, mw_model_t *m, uint64_t now_ns)
{
    int added = 0;
    for (int i = 0; i < SOURCE_DRAIN_CAP; i++) {
        zmq_msg_t msg;
        if (zmq_msg_init(&msg) != 0) {
            source_log("zmq_msg_init: %s", zmq_strerror(zmq_errno()));
            return -1;
        }
        if (zmq_msg_recv(&msg, s->dealer, ZMQ_DONTWAIT) < 0) {
            int e = zmq_errno();
            zmq_msg_close(&msg);
            if (e == EAGAIN || e == EINTR)
                break;
            source_log("receiving from the history endpoint: %s", zmq_strerror(e));
            return -1;
        }
        if (zmq_msg_size(&msg) == 0 && zmq_msg_more(&msg)) {
            zmq_msg_close(&msg); /* an empty delimiter: the reply follows */
            continue;
        }
        Mpiwatch__HistoryReply *r =
            mpiwatch__history_reply__unpack(NULL, zmq_msg_size(&msg), zmq_msg_data(&msg));
        zmq_msg_close(&msg);
        if (!r) {
            s->st.errors++;
            continue;
        }
        if (s->job_req_sent && r->id == s->job_req_id) {
            s->st.replies++;
            source_release_ext(s, m, r);
            s->job_req_sent = 0;
            if (r->error && *r->error) {
                s->st.errors++;
            } else if (r->job) {
                Mpiwatch__JobInfo *job = r->job;
                r->job = NULL;
                added += source_set_job(s, m, job);
                if (r->newest || r->oldest)
                    source_extent(s, m, r->oldest, r->newest);
            }
        } else if (s->req.active && r->id == s->req.id) {
            s->st.replies++;
            source_release_ext(s, m, r);
            added += source_window_reply(s, m, r, now_ns);
        } else if (s->rk.running && r->id == s->rk.id) {
            s->st.replies++;
            source_rank_reply(s, m, r, now_ns);
        }
        /* Anything else answers a request given up: dropped. */
        mpiwatch__history_reply__free_unpacked(r, NULL);
    }
    return added;
}

/* Sends what is due on the history socket: the job and the last windows on connect, then one
 * wanted range at a time, and the rank request. */
static void source_ask(mw_source_t *s, mw_model_t *m, uint64_t now_ns)
{
    if (!s->dealer)
        return;
    if (s->req.active && now_ns - s->req.sent_ns > SOURCE_TIMEOUT_NS) {
        s->st.errors++;
        s->backoff_until = now_ns + SOURCE_BACKOFF_NS;
        source_req_done(s, m);
        source_release_ext(s, m, NULL);
    }
    if (s->job_req_sent && now_ns - s->job_req_ns > SOURCE_TIMEOUT_NS) {
        s->st.errors++; /* the feed repeats the job every second: no need to ask again */
        s->job_req_sent = 0;
    }
    if (s->rk.running && now_ns - s->rk.sent_ns > SOURCE_TIMEOUT_NS) {
        s->st.errors++;
        s->rk.running = 0;
    }
    if (!s->asked_last) {
        Mpiwatch__HistoryRequest r = MPIWATCH__HISTORY_REQUEST__INIT;
        r.what_case = MPIWATCH__HISTORY_REQUEST__WHAT_JOB;
        r.job = 1;
        uint64_t jid = source_send(s, &r);
        if (!jid)
            return;
        s->job_req_sent = 1;
        s->job_req_id = jid;
        s->job_req_ns = now_ns;
        Mpiwatch__HistoryRequest l = MPIWATCH__HISTORY_REQUEST__INIT;
        l.what_case = MPIWATCH__HISTORY_REQUEST__WHAT_LAST;
        l.last = SOURCE_LAST_N;
        uint64_t id = source_send(s, &l);
        s->asked_last = 1;
        if (id) {
            memset(&s->req, 0, sizeof s->req);
            s->req.active = 1;
            s->req.id = id;
            s->req.sent_ns = now_ns;
            s->req.last_n = 1;
        }
    }
    if (!s->req.active && mw_model_job(m) && s->have_ext && now_ns >= s->backoff_until) {
        uint64_t first, last;
        if (mw_model_wanted(m, &first, &last, SOURCE_MAX_REQUEST)) {
            if (source_send_range(s, first, last, now_ns) == 0) {
                s->req.mfirst = first;
                s->req.mlast = last;
                s->req.from_model = 1;
            } else {
                mw_model_answered(m, first, last);
            }
        }
    }
    if (s->rk.wanted && !s->rk.running) {
        s->rk.wanted = 0;
        s->rk.n = 0;
        if (source_send_rank(s, now_ns) < 0)
            s->st.errors++;
    }
}

/* ---- replay ------------------------------------------------------------------------------- */

/* Copies a message of the reader (valid until its next read) as a standalone one, unpacked
 * with the default allocator as the model wants it: encoded again and unpacked. */
static Mpiwatch__Window *source_copy_window(mw_source_t *s, const Mpiwatch__Window *w)
{
    size_t n = mpiwatch__window__get_packed_size(w);
    if (n > s->pack_cap) {
        uint8_t *p = realloc(s->pack, n);
        if (!p)
            return NULL;
        s->pack = p;
        s->pack_cap = n;
    }
    mpiwatch__window__pack(w, s->pack);
    return mpiwatch__window__unpack(NULL, n, s->pack);
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
    int rc = mw_rec_reader_find_window(s->rd, k, &off, NULL);
    if (rc <= 0)
        return rc;
    const Mpiwatch__Record *rec;
    if (mw_rec_reader_seek(s->rd, off) < 0 ||
        mw_rec_reader_next(s->rd, &rec, NULL, err, sizeof err) != 1 ||
        rec->body_case != MPIWATCH__RECORD__BODY_WINDOW || !rec->window ||
        rec->window->index != k) {
        source_log("%s: cannot read window %" PRIu64, s->st.what, k);
        return -1;
    }
    *out = source_copy_window(s, rec->window);
    if (!*out) {
        source_log("out of memory reading window %" PRIu64, k);
        return -1;
    }
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
    while ((rc = mw_rec_reader_next(s->rd, &rec, NULL, err, errlen)) == 1) {
        if (rec->body_case == MPIWATCH__RECORD__BODY_WINDOW)
            break;
        if (rec->body_case == MPIWATCH__RECORD__BODY_JOB && rec->job &&
            source_keep_job(rec->job, &s->job_start, &s->job_start_len) < 0)
            goto oom;
        if (rec->body_case == MPIWATCH__RECORD__BODY_EVENT && rec->event)
            source_set_event(s, rec->event->kind, rec->event->detail);
    }
    if (rc < 0)
        return -1;
    uint64_t off;
    if (s->have_span && mw_rec_reader_find_window(s->rd, s->last_w, &off, NULL) == 1) {
        if (mw_rec_reader_seek(s->rd, off) < 0) {
            snprintf(err, errlen, "cannot seek in the recording");
            return -1;
        }
        while ((rc = mw_rec_reader_next(s->rd, &rec, NULL, err, errlen)) == 1) {
            if (rec->body_case == MPIWATCH__RECORD__BODY_JOB && rec->job &&
                source_keep_job(rec->job, &s->job_final, &s->job_final_len) < 0)
                goto oom;
            if (rec->body_case == MPIWATCH__RECORD__BODY_EVENT && rec->event)
                source_set_event(s, rec->event->kind, rec->event->detail);
        }
        if (rc < 0)
            return -1;
    }
    if (!s->job_start && !s->job_final) {
        snprintf(err, errlen, "the recording holds no job description");
        return -1;
    }
    if (!s->job_final) {
        if (!(s->job_final = malloc(s->job_start_len ? s->job_start_len : 1)))
            goto oom;
        memcpy(s->job_final, s->job_start, s->job_start_len);
        s->job_final_len = s->job_start_len;
    } else if (!s->job_start) {
        if (!(s->job_start = malloc(s->job_final_len ? s->job_final_len : 1)))
            goto oom;
        memcpy(s->job_start, s->job_final, s->job_final_len);
        s->job_start_len = s->job_final_len;
    }
    return 0;
oom:
    snprintf(err, errlen, "out of memory");
    return -1;
}

/* Gives the model one of the kept job descriptions. */
static void source_replay_job(mw_source_t *s, mw_model_t *m, int final)
{
    Mpiwatch__JobInfo *job = mpiwatch__job_info__unpack(
        NULL, final ? s->job_final_len : s->job_start_len, final ? s->job_final : s->job_start);
    if (!job) {
        source_log("%s: the job description does not decode", s->st.what);
        return;
    }
    source_set_job(s, m, job);
}

/* Playing: gives the model the windows whose recorded close time has come. Returns the windows
 * added. */
static int source_play(mw_source_t *s, mw_model_t *m, uint64_t now_ns, uint64_t deadline)
{
    int added = 0;
    double elapsed = (double)(now_ns - s->t0_ns) * s->speed; /* recorded ns reached */
    while (source_clock_ns() < deadline) {
        if (!s->ahead) {
            if (s->play_next > s->last_w)
                break;
            int rc = source_read_window(s, s->play_next, &s->ahead, &s->ahead_mono);
            if (rc < 0) {
                s->st.errors++;
                s->play_next = s->last_w + 1; /* the rest cannot be trusted */
                break;
            }
            s->play_next++;
            if (rc == 0)
                continue; /* no such window: a gap in the run */
        }
        if ((double)(s->ahead_mono - s->first_mono) > elapsed)
            break;
        uint64_t k = s->ahead->index;
        added += mw_model_add_window(m, s->ahead) == 0;
        s->ahead = NULL;
        s->have_due = 1;
        s->due_newest = k;
        source_extent(s, m, s->first_w, k);
    }
    if (!s->ahead && s->play_next > s->last_w &&
        elapsed >= (double)(s->last_mono - s->first_mono)) {
        s->st.playing = 0;
        source_replay_job(s, m, 1);
        source_extent(s, m, s->first_w, s->last_w);
    }
    return added;
}

/* Reads what the model wants, range after range, until the budget is spent. Returns the
 * windows added. */
static int source_serve(mw_source_t *s, mw_model_t *m, uint64_t deadline, int *more)
{
    int added = 0;
    while (source_clock_ns() < deadline) {
        if (!s->serving) {
            uint64_t first, last;
            if (!s->have_ext || !mw_model_wanted(m, &first, &last, SOURCE_MAX_REQUEST))
                return added;
            s->serving = 1;
            s->serve_first = s->serve_next = first;
            s->serve_last = last;
            s->st.requests++;
        }
        while (s->serve_next <= s->serve_last && source_clock_ns() < deadline) {
            Mpiwatch__Window *w;
            int rc = source_read_window(s, s->serve_next, &w, NULL);
            if (rc < 0) {
                s->st.errors++;
                s->serve_next = s->serve_last + 1;
                break;
            }
            s->serve_next++;
            if (rc == 1)
                added += mw_model_add_window(m, w) == 0;
        }
        if (s->serve_next > s->serve_last) {
            mw_model_answered(m, s->serve_first, s->serve_last);
            s->serving = 0;
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
    source_rank_t *rk = &s->rk;
    rk->wanted = 0;
    rk->n = 0;
    rk->taken = 0;
    rk->taken_last = 0;
    s->st.requests++;
    if (!s->have_span || rk->last < s->first_w || rk->first > s->last_w) {
        source_rank_done(s, m);
        return;
    }
    if (rk->first < s->first_w)
        rk->first = s->first_w;
    uint64_t start = 0, probes = 0;
    for (uint64_t k = rk->first; k <= rk->last && k <= s->last_w && probes < SOURCE_PROBE_MAX;
         k++, probes++) {
        uint64_t woff, soff;
        int rc = mw_rec_reader_find_window(s->rd, k, &woff, &soff);
        if (rc < 0)
            break;
        if (rc == 1) {
            start = soff ? soff : mw_rec_reader_start(s->rd); /* unknown: from the beginning */
            break;
        }
    }
    if (!s->arena_ready) {
        if (mw_arena_init(&s->arena, SOURCE_RANK_ARENA) < 0) {
            source_log("out of memory for a rank request");
            start = 0;
        } else {
            s->arena_ready = 1;
        }
    }
    if (!start || mw_rec_reader_seek(s->rd_rank, start) < 0) {
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
    source_rank_t *rk = &s->rk;
    const Mpiwatch__JobInfo *job = mw_model_job(m);
    char err[256];
    for (unsigned n = 0; rk->running; n++) {
        if ((n & 63) == 0 && source_clock_ns() >= deadline) {
            *more = 1;
            return;
        }
        const Mpiwatch__Record *rec;
        int rc = mw_rec_reader_next(s->rd_rank, &rec, NULL, err, sizeof err);
        if (rc < 0) {
            source_log("%s: %s", s->st.what, err);
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
            mw_envelope_decode(&s->arena, rec->message.data, rec->message.len);
        if (!env || env->version != MW_PROTO_VERSION || env->rank != rk->rank ||
            env->body_case != MPIWATCH__ENVELOPE__BODY_SAMPLE || !env->sample || !env->job ||
            strcmp(env->job, s->job_name) != 0)
            continue;
        uint64_t w = env->sample->window;
        if (w < rk->first || w > rk->last || (rk->taken && w <= rk->taken_last))
            continue;
        rk->taken = 1;
        rk->taken_last = w;
        source_rank_sample(rk, job, env);
    }
}

/* Hands the model the recording's time steps and job events: reads on from where the last poll
 * stopped until the deadline; playing at a speed, a step or event waits until the recorded
 * time of its frame. */
static void source_scan_steps(mw_source_t *s, mw_model_t *m, uint64_t now_ns, uint64_t deadline,
                              int *more)
{
    double elapsed = (double)(now_ns - s->t0_ns) * s->speed;
    while (!s->steps_done && source_clock_ns() < deadline) {
        if (s->ev_ahead) {
            if (s->st.playing && (double)(int64_t)(s->ev_mono - s->first_mono) > elapsed)
                return; /* not due yet */
            mw_model_add_event(m, s->ev_kind, s->ev_detail, s->ev_real_ns);
            s->st.events++;
            s->ev_ahead = 0;
            continue;
        }
        if (!s->step_ahead) {
            const Mpiwatch__Record *rec;
            char err[256];
            int rc = mw_rec_reader_next(s->rd_step, &rec, NULL, err, sizeof err);
            if (rc <= 0) {
                if (rc < 0)
                    source_log("%s: reading steps: %s", s->st.what, err);
                s->steps_done = 1;
                s->st.steps_pending = 0;
                break;
            }
            if (rec->body_case == MPIWATCH__RECORD__BODY_EVENT && rec->event) {
                const Mpiwatch__JobEvent *ev = rec->event;
                snprintf(s->ev_kind, sizeof s->ev_kind, "%s", ev->kind ? ev->kind : "");
                snprintf(s->ev_detail, sizeof s->ev_detail, "%s", ev->detail ? ev->detail : "");
                s->ev_real_ns = ev->real_ns ? ev->real_ns : rec->real_ns;
                s->ev_mono = rec->mono_ns;
                s->ev_ahead = 1;
                continue;
            }
            if (rec->body_case != MPIWATCH__RECORD__BODY_STEP || !rec->step)
                continue;
            size_t n = mpiwatch__step__get_packed_size(rec->step);
            if (n > s->pack_cap) {
                uint8_t *p = realloc(s->pack, n);
                if (!p) {
                    source_log("out of memory reading a step");
                    s->steps_done = 1;
                    s->st.steps_pending = 0;
                    break;
                }
                s->pack = p;
                s->pack_cap = n;
            }
            mpiwatch__step__pack(rec->step, s->pack);
            s->step_ahead = mpiwatch__step__unpack(NULL, n, s->pack);
            s->step_ahead_mono = rec->mono_ns;
            if (!s->step_ahead)
                continue;
        }
        if (s->st.playing && (double)(s->step_ahead_mono - s->first_mono) > elapsed)
            return; /* not due yet: nothing to do before then */
        if (mw_model_add_step(m, s->step_ahead) == 0)
            s->st.steps++;
        s->step_ahead = NULL;
    }
    if (!s->steps_done)
        *more = 1;
}

static int source_poll_replay(mw_source_t *s, mw_model_t *m, uint64_t now_ns)
{
    int added = 0, more = 0;
    if (!s->started) {
        s->started = 1;
        s->t0_ns = now_ns;
        s->st.playing = s->speed > 0 && s->have_span;
        source_replay_job(s, m, !s->st.playing);
        if (!s->st.playing && s->have_span)
            source_extent(s, m, s->first_w, s->last_w);
        s->play_next = s->first_w;
    }
    uint64_t deadline = source_clock_ns() + SOURCE_BUDGET_NS;
    if (s->st.playing)
        added += source_play(s, m, now_ns, deadline);
    added += source_serve(s, m, deadline, &more);
    if (s->rk.wanted)
        source_rank_start(s, m);
    if (s->rk.running)
        source_rank_scan(s, m, deadline, &more);
    source_scan_steps(s, m, now_ns, deadline, &more);
    s->more = more || added > 0 || s->serving || s->rk.running;
    return added;
}

/* ---- the interface ------------------------------------------------------------------------ */

static mw_source_t *source_new(const char *what)
{
    mw_source_t *s = calloc(1, sizeof *s);
    if (s)
        snprintf(s->st.what, sizeof s->st.what, "%s", what);
    return s;
}

mw_source_t *mw__source_detached(void)
{
    mw_source_t *s = source_new("(detached)");
    if (s)
        s->st.live = 1;
    return s;
}

mw_source_t *mw_source_connect(const char *feed, const char *history, char *err, size_t len)
{
    if (!feed || !*feed) {
        snprintf(err, len, "no feed endpoint");
        return NULL;
    }
    mw_source_t *s = source_new(feed);
    if (!s) {
        snprintf(err, len, "out of memory");
        return NULL;
    }
    s->st.live = 1;
    s->hold_ext = history && *history;
    int linger = 0, sub_hwm = SOURCE_SUB_RCVHWM, hwm = 100;
    int64_t maxmsg = SOURCE_MAXMSG;
    /* CURVE (docs/security.md): MPIWATCH_CURVE_SERVER and MPIWATCH_CURVE_KEY, both sockets. */
    mw_curve_client_t curve;
    int use_curve = mw_curve_client_load(NULL, NULL, &curve, err, len);
    if (use_curve < 0)
        goto fail;
    if (!(s->ctx = zmq_ctx_new())) {
        snprintf(err, len, "zmq_ctx_new: %s", zmq_strerror(zmq_errno()));
        goto fail;
    }
    if (!(s->sub = zmq_socket(s->ctx, ZMQ_SUB))) {
        snprintf(err, len, "zmq_socket(SUB): %s", zmq_strerror(zmq_errno()));
        goto fail;
    }
    if (source_setopt(s->sub, ZMQ_LINGER, &linger, sizeof linger, "ZMQ_LINGER", err, len) < 0 ||
        source_setopt(s->sub, ZMQ_RCVHWM, &sub_hwm, sizeof sub_hwm, "ZMQ_RCVHWM", err, len) < 0 ||
        source_setopt(s->sub, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg, "ZMQ_MAXMSGSIZE", err, len) <
            0 ||
        source_setopt(s->sub, ZMQ_SUBSCRIBE, "", 0, "ZMQ_SUBSCRIBE", err, len) < 0 ||
        (use_curve > 0 && mw_curve_client_apply(s->sub, &curve, err, len) < 0))
        goto fail;
    if (zmq_connect(s->sub, feed) != 0) {
        snprintf(err, len, "cannot connect to the feed %s: %s", feed, zmq_strerror(zmq_errno()));
        goto fail;
    }
    if (history && *history) {
        if (!(s->dealer = zmq_socket(s->ctx, ZMQ_DEALER))) {
            snprintf(err, len, "zmq_socket(DEALER): %s", zmq_strerror(zmq_errno()));
            goto fail;
        }
        if (source_setopt(s->dealer, ZMQ_LINGER, &linger, sizeof linger, "ZMQ_LINGER", err, len) <
                0 ||
            source_setopt(s->dealer, ZMQ_RCVHWM, &hwm, sizeof hwm, "ZMQ_RCVHWM", err, len) < 0 ||
            source_setopt(s->dealer, ZMQ_SNDHWM, &hwm, sizeof hwm, "ZMQ_SNDHWM", err, len) < 0 ||
            source_setopt(s->dealer, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg, "ZMQ_MAXMSGSIZE", err,
                          len) < 0 ||
            (use_curve > 0 && mw_curve_client_apply(s->dealer, &curve, err, len) < 0))
            goto fail;
        if (zmq_connect(s->dealer, history) != 0) {
            snprintf(err, len, "cannot connect to the history endpoint %s: %s", history,
                     zmq_strerror(zmq_errno()));
            goto fail;
        }
    }
    if (use_curve > 0)
        mw_keyfile_wipe(&curve, sizeof curve);
    return s;
fail:
    if (use_curve > 0)
        mw_keyfile_wipe(&curve, sizeof curve);
    mw_source_free(s);
    return NULL;
}

mw_source_t *mw_source_replay(const char *path, double speed, char *err, size_t len)
{
    if (!(speed >= 0)) {
        snprintf(err, len, "the speed must be 0 or more");
        return NULL;
    }
    mw_source_t *s = source_new(path);
    if (!s) {
        snprintf(err, len, "out of memory");
        return NULL;
    }
    s->speed = speed;
    char why[256];
    if (!(s->rd = mw_rec_reader_open(path, why, sizeof why)) ||
        !(s->rd_rank = mw_rec_reader_open(path, why, sizeof why)) ||
        !(s->rd_step = mw_rec_reader_open(path, why, sizeof why))) {
        snprintf(err, len, "%s", why);
        goto fail;
    }
    int rc = mw_rec_reader_span(s->rd, &s->first_w, &s->last_w, &s->first_mono, &s->last_mono);
    if (rc < 0) {
        snprintf(err, len, "%s: cannot read the recording's index", path);
        goto fail;
    }
    s->have_span = rc == 1;
    if (mw_rec_reader_seek(s->rd, mw_rec_reader_start(s->rd)) < 0) {
        snprintf(err, len, "%s: cannot seek", path);
        goto fail;
    }
    if (mw_rec_reader_seek(s->rd_step, mw_rec_reader_start(s->rd_step)) < 0) {
        snprintf(err, len, "%s: cannot seek", path);
        goto fail;
    }
    s->st.steps_pending = 1;
    if (source_scan_jobs(s, why, sizeof why) < 0) {
        snprintf(err, len, "%s: %s", path, why);
        goto fail;
    }
    Mpiwatch__JobInfo *job = mpiwatch__job_info__unpack(NULL, s->job_final_len, s->job_final);
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

void mw_source_free(mw_source_t *s)
{
    if (!s)
        return;
    if (s->sub && zmq_close(s->sub) != 0)
        source_log("zmq_close: %s", zmq_strerror(zmq_errno()));
    if (s->dealer && zmq_close(s->dealer) != 0)
        source_log("zmq_close: %s", zmq_strerror(zmq_errno()));
    if (s->ctx && zmq_ctx_term(s->ctx) != 0)
        source_log("zmq_ctx_term: %s", zmq_strerror(zmq_errno()));
    for (unsigned i = 0; i < s->n_pending; i++)
        mpiwatch__window__free_unpacked(s->pending[i], NULL);
    if (s->ahead)
        mpiwatch__window__free_unpacked(s->ahead, NULL);
    mw_rec_reader_close(s->rd);
    mw_rec_reader_close(s->rd_rank);
    mw_rec_reader_close(s->rd_step);
    if (s->step_ahead)
        mpiwatch__step__free_unpacked(s->step_ahead, NULL);
    if (s->arena_ready)
        mw_arena_free(&s->arena);
    free(s->rk.calls);
    free(s->job_start);
    free(s->job_final);
    free(s->pack);
    free(s);
}

int mw_source_poll(mw_source_t *s, mw_model_t *m, uint64_t now_ns)
{
    if (!s->st.live)
        return source_poll_replay(s, m, now_ns);
    int added = source_drain_feed(s, m);
    if (added < 0)
        return -1;
    if (s->dealer) {
        int h = source_drain_history(s, m, now_ns);
        if (h < 0)
            return -1;
        added += h;
        source_ask(s, m, now_ns);
    }
    return added;
}

int mw_source_want_rank(mw_source_t *s, uint32_t rank, uint64_t first, uint64_t last)
{
    if (!s->st.live && !s->rd_rank)
        return -1;
    if (s->st.live && !s->dealer)
        return -1; /* nothing to ask: the feed carries merged windows only */
    if (first > last) {
        uint64_t t = first;
        first = last;
        last = t;
    }
    /* A running request is abandoned: its reply, if any, no longer matches an id. */
    s->rk.running = 0;
    s->rk.wanted = 1;
    s->rk.rank = rank;
    s->rk.first = first;
    s->rk.last = last;
    return 0;
}

int mw_source_rank_busy(const mw_source_t *s)
{
    return s->rk.wanted || s->rk.running;
}

const char *mw_source_event(const mw_source_t *s)
{
    return s->event;
}

void mw_source_wait(mw_source_t *s, int timeout_ms)
{
    if (timeout_ms < 0)
        timeout_ms = 0;
    if (s->st.live) {
        zmq_pollitem_t items[2] = {{s->sub, 0, ZMQ_POLLIN, 0}, {s->dealer, 0, ZMQ_POLLIN, 0}};
        if (zmq_poll(items, s->dealer ? 2 : 1, timeout_ms) < 0 && zmq_errno() != EINTR)
            source_log("zmq_poll: %s", zmq_strerror(zmq_errno()));
        return;
    }
    /* Replay: work left from the last poll, or a rank request, is done at once. */
    if (!s->started || s->more || s->rk.wanted)
        return;
    uint64_t wait_ns = (uint64_t)timeout_ms * 1000000ull;
    if (s->st.playing && s->ahead) {
        uint64_t due = s->t0_ns + (uint64_t)((double)(s->ahead_mono - s->first_mono) / s->speed);
        uint64_t now = source_clock_ns();
        uint64_t left = due > now ? due - now : 0;
        if (left < wait_ns)
            wait_ns = left;
    }
    struct timespec ts = {(time_t)(wait_ns / 1000000000ull), (long)(wait_ns % 1000000000ull)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

void mw_source_status(const mw_source_t *s, mw_source_status_t *out)
{
    *out = s->st;
}
