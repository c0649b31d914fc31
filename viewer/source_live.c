/* source_live.c: the live source: a collector's feed and its history endpoint.
 *
 * DESIGN: everything happens in the poll, called once per frame, and nothing in it blocks. The
 * SUB socket is drained with ZMQ_DONTWAIT up to SOURCE_DRAIN_CAP messages per poll (job
 * descriptions, windows, events); windows and events go into the model, gaps in their indices
 * are counted. The DEALER socket on the history endpoint carries at most one window request
 * (first the last SOURCE_LAST_N windows, then what mw_model_wanted() says is missing) and one
 * rank request at a time, each with its own id: a reply whose id matches neither (the answer to
 * a request given up after SOURCE_TIMEOUT_NS) is dropped. A truncated reply is followed by a
 * request for the rest; a range that failed or brought nothing is not asked for again before
 * SOURCE_BACKOFF_NS, so that a hole in the run does not cost a request per frame. Messages are
 * unpacked with protobuf-c's default allocator, so every sub-message is its own allocation: a
 * window or job is detached from its Feed or HistoryReply and handed to the model, which owns
 * it from then on.
 */
#include "source_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zmq.h>

#include "mw_keyfile.h"

#define SOURCE_DRAIN_CAP 256            /* feed messages taken per poll */
#define SOURCE_SUB_RCVHWM 1000          /* feed messages libzmq queues for us */
#define SOURCE_MAXMSG (256ll << 20)     /* the collector caps replies at 64 MiB */
#define SOURCE_LAST_N 600u              /* windows asked for on connect (1 min of 100 ms) */
#define SOURCE_TIMEOUT_NS 5000000000ull /* a request unanswered this long is given up */
#define SOURCE_BACKOFF_NS 1000000000ull /* after a range that failed or brought nothing */

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
        added += mw__source_set_job(s, m, job);
    } else if (f->body_case == MPIWATCH__FEED__BODY_WINDOW && f->window) {
        Mpiwatch__Window *w = f->window;
        f->window = NULL;
        f->body_case = MPIWATCH__FEED__BODY__NOT_SET;
        uint64_t k = w->index;
        s->st.feed_windows++;
        if (s->live.have_prev && k > s->live.prev_index + 1)
            s->st.feed_gaps += k - s->live.prev_index - 1;
        s->live.have_prev = 1;
        s->live.prev_index = k;
        added += mw__source_add_window(s, m, w);
        mw__source_extent(s, m, s->have_ext ? s->ext_oldest : k, k);
    } else if (f->body_case == MPIWATCH__FEED__BODY_STEP && f->step) {
        Mpiwatch__Step *st = f->step;
        f->step = NULL;
        f->body_case = MPIWATCH__FEED__BODY__NOT_SET;
        mw__source_fn_step(s, st);
        if (mw_model_job(m) && mw_model_add_step(m, st) == 0)
            s->st.steps++;
        else if (!mw_model_job(m))
            mpiwatch__step__free_unpacked(st, NULL);
    } else if (f->body_case == MPIWATCH__FEED__BODY_TRACE && f->trace) {
        /* A reach-back trace of a window that closed before it came: folded into its window
         * by the model (model_trace.h). Counted as data so that the views draw again. */
        Mpiwatch__RankTrace *rt = f->trace;
        f->trace = NULL;
        f->body_case = MPIWATCH__FEED__BODY__NOT_SET;
        if (mw_model_job(m)) {
            mw__source_fn_trace(s, rt);
            int ok = mw_model_add_trace(m, rt) == 0;
            added += ok;
            s->st.traces += (uint64_t)ok;
        } else
            mpiwatch__rank_trace__free_unpacked(rt, NULL);
    } else if (f->body_case == MPIWATCH__FEED__BODY_EVENT && f->event) {
        mw__source_set_event(s, f->event->kind, f->event->detail);
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
            mw__source_log("zmq_msg_init: %s", zmq_strerror(zmq_errno()));
            return -1;
        }
        if (zmq_msg_recv(&topic, s->live.sub, ZMQ_DONTWAIT) < 0) {
            int e = zmq_errno();
            zmq_msg_close(&topic);
            if (e == EAGAIN || e == EINTR)
                break;
            mw__source_log("receiving from the feed: %s", zmq_strerror(e));
            return -1;
        }
        int more = zmq_msg_more(&topic);
        zmq_msg_close(&topic);
        if (!more)
            continue; /* not the feed's two frames */
        if (zmq_msg_init(&body) != 0) {
            mw__source_log("zmq_msg_init: %s", zmq_strerror(zmq_errno()));
            return -1;
        }
        /* The frames of one message arrive together: the body is there. */
        if (zmq_msg_recv(&body, s->live.sub, ZMQ_DONTWAIT) < 0) {
            mw__source_log("receiving a feed message: %s", zmq_strerror(zmq_errno()));
            zmq_msg_close(&body);
            return -1;
        }
        int extra = zmq_msg_more(&body);
        if (!extra)
            added += mw__source_feed_message(s, m, zmq_msg_data(&body), zmq_msg_size(&body));
        zmq_msg_close(&body);
        while (extra) { /* a longer message, which the feed never sends: skip its frames */
            zmq_msg_t x;
            if (zmq_msg_init(&x) != 0 || zmq_msg_recv(&x, s->live.sub, ZMQ_DONTWAIT) < 0) {
                mw__source_log("receiving a feed message: %s", zmq_strerror(zmq_errno()));
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
    r->id = ++s->live.next_id;
    size_t n = mpiwatch__history_request__get_packed_size(r);
    uint8_t buf[256];
    if (n > sizeof buf)
        return 0;
    mpiwatch__history_request__pack(r, buf);
    if (zmq_send(s->live.dealer, buf, n, ZMQ_DONTWAIT) < 0) {
        int e = zmq_errno();
        if (e != EAGAIN)
            mw__source_log("sending a history request: %s", zmq_strerror(e));
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
    s->live.req.active = 1;
    s->live.req.id = id;
    s->live.req.sent_ns = now_ns;
    s->live.req.first = first;
    s->live.req.last = last;
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
    if (s->live.req.from_model)
        mw_model_answered(m, s->live.req.mfirst, s->live.req.mlast);
    memset(&s->live.req, 0, sizeof s->live.req);
}

/* Keeps the tier a history answer named, for the status bar: a short lowercase word, else
 * "other" (never trust what a peer sends into the text drawn). */
static void source_set_tier(mw_source_t *s, const char *tier)
{
    size_t n = strlen(tier);
    int ok = n > 0 && n < sizeof s->st.tier;
    for (size_t i = 0; ok && i < n; i++)
        ok = tier[i] >= 'a' && tier[i] <= 'z';
    snprintf(s->st.tier, sizeof s->st.tier, "%s", ok ? tier : "other");
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
        s->live.backoff_until = now_ns + SOURCE_BACKOFF_NS;
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
        added += mw__source_add_window(s, m, w);
    }
    r->n_windows = 0; /* taken: only the array is freed with the reply */
    if (have_last && r->tier && *r->tier)
        source_set_tier(s, r->tier);
    if (r->newest || r->oldest)
        mw__source_extent(s, m, r->oldest, r->newest);
    uint64_t until = s->live.req.last_n ? r->newest : s->live.req.last;
    if (r->truncated && have_last && last < until) {
        /* The reply stopped at its size limit: ask for the rest, same model range. */
        mw__source_req_t keep = s->live.req;
        if (source_send_range(s, last + 1, until, now_ns) == 0) {
            s->live.req.mfirst = keep.mfirst;
            s->live.req.mlast = keep.mlast;
            s->live.req.from_model = keep.from_model;
            return added;
        }
        s->live.req = keep;
    }
    if (!have_last) /* nothing of the range exists (a hole in the run): do not insist */
        s->live.backoff_until = now_ns + SOURCE_BACKOFF_NS;
    source_req_done(s, m);
    return added;
}

/* A reply to the rank request. */
static void source_rank_reply(mw_source_t *s, mw_model_t *m, const Mpiwatch__HistoryReply *r,
                              uint64_t now_ns)
{
    mw__source_rank_t *rk = &s->rk;
    if (r->error && *r->error) {
        s->st.errors++;
        rk->running = 0;
        return;
    }
    uint64_t last = 0;
    int have_last = 0;
    for (size_t i = 0; i < r->n_samples; i++) {
        Mpiwatch__Envelope *env = r->samples[i];
        if (!env || env->body_case != MPIWATCH__ENVELOPE__BODY_SAMPLE || !env->sample)
            continue;
        mw__source_fn_sample(s, env); /* the collector sends them in the job's ids */
        mw__source_rank_sample(rk, mw_model_job(m), env);
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
        mw__source_extent(s, m, r->oldest, r->newest);
    else if (s->have_ext)
        mw__source_extent(s, m, s->ext_oldest, s->ext_newest);
}

/* Takes the replies that arrived. Returns the windows added, or -1. */
static int source_drain_history(mw_source_t *s, mw_model_t *m, uint64_t now_ns)
{
    int added = 0;
    for (int i = 0; i < SOURCE_DRAIN_CAP; i++) {
        zmq_msg_t msg;
        if (zmq_msg_init(&msg) != 0) {
            mw__source_log("zmq_msg_init: %s", zmq_strerror(zmq_errno()));
            return -1;
        }
        if (zmq_msg_recv(&msg, s->live.dealer, ZMQ_DONTWAIT) < 0) {
            int e = zmq_errno();
            zmq_msg_close(&msg);
            if (e == EAGAIN || e == EINTR)
                break;
            mw__source_log("receiving from the history endpoint: %s", zmq_strerror(e));
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
        if (s->live.job_req_sent && r->id == s->live.job_req_id) {
            s->st.replies++;
            source_release_ext(s, m, r);
            s->live.job_req_sent = 0;
            if (r->error && *r->error) {
                s->st.errors++;
            } else if (r->job) {
                Mpiwatch__JobInfo *job = r->job;
                r->job = NULL;
                added += mw__source_set_job(s, m, job);
                if (r->newest || r->oldest)
                    mw__source_extent(s, m, r->oldest, r->newest);
            }
        } else if (s->live.req.active && r->id == s->live.req.id) {
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
    if (!s->live.dealer)
        return;
    if (s->live.req.active && now_ns - s->live.req.sent_ns > SOURCE_TIMEOUT_NS) {
        s->st.errors++;
        s->live.backoff_until = now_ns + SOURCE_BACKOFF_NS;
        source_req_done(s, m);
        source_release_ext(s, m, NULL);
    }
    if (s->live.job_req_sent && now_ns - s->live.job_req_ns > SOURCE_TIMEOUT_NS) {
        s->st.errors++; /* the feed repeats the job every second: no need to ask again */
        s->live.job_req_sent = 0;
    }
    if (s->rk.running && now_ns - s->rk.sent_ns > SOURCE_TIMEOUT_NS) {
        s->st.errors++;
        s->rk.running = 0;
    }
    if (!s->live.asked_last) {
        Mpiwatch__HistoryRequest r = MPIWATCH__HISTORY_REQUEST__INIT;
        r.what_case = MPIWATCH__HISTORY_REQUEST__WHAT_JOB;
        r.job = 1;
        uint64_t jid = source_send(s, &r);
        if (!jid)
            return;
        s->live.job_req_sent = 1;
        s->live.job_req_id = jid;
        s->live.job_req_ns = now_ns;
        Mpiwatch__HistoryRequest l = MPIWATCH__HISTORY_REQUEST__INIT;
        l.what_case = MPIWATCH__HISTORY_REQUEST__WHAT_LAST;
        l.last = SOURCE_LAST_N;
        uint64_t id = source_send(s, &l);
        s->live.asked_last = 1;
        if (id) {
            memset(&s->live.req, 0, sizeof s->live.req);
            s->live.req.active = 1;
            s->live.req.id = id;
            s->live.req.sent_ns = now_ns;
            s->live.req.last_n = 1;
        }
    }
    if (!s->live.req.active && mw_model_job(m) && s->have_ext && now_ns >= s->live.backoff_until) {
        uint64_t first, last;
        if (mw_model_wanted(m, &first, &last, MW__SOURCE_MAX_REQUEST)) {
            if (source_send_range(s, first, last, now_ns) == 0) {
                s->live.req.mfirst = first;
                s->live.req.mlast = last;
                s->live.req.from_model = 1;
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

/* ---- the interface ------------------------------------------------------------------------ */

static int live_poll(mw_source_t *s, mw_model_t *m, uint64_t now_ns)
{
    int added = source_drain_feed(s, m);
    if (added < 0)
        return -1;
    if (s->live.dealer) {
        int h = source_drain_history(s, m, now_ns);
        if (h < 0)
            return -1;
        added += h;
        source_ask(s, m, now_ns);
    }
    return added;
}

static void live_wait(mw_source_t *s, int timeout_ms)
{
    zmq_pollitem_t items[2] = {{s->live.sub, 0, ZMQ_POLLIN, 0}, {s->live.dealer, 0, ZMQ_POLLIN, 0}};
    if (zmq_poll(items, s->live.dealer ? 2 : 1, timeout_ms) < 0 && zmq_errno() != EINTR)
        mw__source_log("zmq_poll: %s", zmq_strerror(zmq_errno()));
}

/* Nothing to ask without a history endpoint: the feed carries merged windows only. */
static int live_can_rank(const mw_source_t *s)
{
    return s->live.dealer != NULL;
}

static void live_release(mw_source_t *s)
{
    if (s->live.sub && zmq_close(s->live.sub) != 0)
        mw__source_log("zmq_close: %s", zmq_strerror(zmq_errno()));
    if (s->live.dealer && zmq_close(s->live.dealer) != 0)
        mw__source_log("zmq_close: %s", zmq_strerror(zmq_errno()));
    if (s->live.ctx && zmq_ctx_term(s->live.ctx) != 0)
        mw__source_log("zmq_ctx_term: %s", zmq_strerror(zmq_errno()));
}

static const mw__source_ops_t live_ops = {live_poll, live_wait, live_can_rank, live_release};

mw_source_t *mw__source_detached(void)
{
    mw_source_t *s = mw__source_new("(detached)", &live_ops);
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
    mw_source_t *s = mw__source_new(feed, &live_ops);
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
    if (!(s->live.ctx = zmq_ctx_new())) {
        snprintf(err, len, "zmq_ctx_new: %s", zmq_strerror(zmq_errno()));
        goto fail;
    }
    if (!(s->live.sub = zmq_socket(s->live.ctx, ZMQ_SUB))) {
        snprintf(err, len, "zmq_socket(SUB): %s", zmq_strerror(zmq_errno()));
        goto fail;
    }
    if (source_setopt(s->live.sub, ZMQ_LINGER, &linger, sizeof linger, "ZMQ_LINGER", err, len) <
            0 ||
        source_setopt(s->live.sub, ZMQ_RCVHWM, &sub_hwm, sizeof sub_hwm, "ZMQ_RCVHWM", err, len) <
            0 ||
        source_setopt(s->live.sub, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg, "ZMQ_MAXMSGSIZE", err,
                      len) < 0 ||
        source_setopt(s->live.sub, ZMQ_SUBSCRIBE, "", 0, "ZMQ_SUBSCRIBE", err, len) < 0 ||
        (use_curve > 0 && mw_curve_client_apply(s->live.sub, &curve, err, len) < 0))
        goto fail;
    if (zmq_connect(s->live.sub, feed) != 0) {
        snprintf(err, len, "cannot connect to the feed %s: %s", feed, zmq_strerror(zmq_errno()));
        goto fail;
    }
    if (history && *history) {
        if (!(s->live.dealer = zmq_socket(s->live.ctx, ZMQ_DEALER))) {
            snprintf(err, len, "zmq_socket(DEALER): %s", zmq_strerror(zmq_errno()));
            goto fail;
        }
        if (source_setopt(s->live.dealer, ZMQ_LINGER, &linger, sizeof linger, "ZMQ_LINGER", err,
                          len) < 0 ||
            source_setopt(s->live.dealer, ZMQ_RCVHWM, &hwm, sizeof hwm, "ZMQ_RCVHWM", err, len) <
                0 ||
            source_setopt(s->live.dealer, ZMQ_SNDHWM, &hwm, sizeof hwm, "ZMQ_SNDHWM", err, len) <
                0 ||
            source_setopt(s->live.dealer, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg, "ZMQ_MAXMSGSIZE",
                          err, len) < 0 ||
            (use_curve > 0 && mw_curve_client_apply(s->live.dealer, &curve, err, len) < 0))
            goto fail;
        if (zmq_connect(s->live.dealer, history) != 0) {
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
