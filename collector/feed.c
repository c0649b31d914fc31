/* feed.c: the live feed (--publish, a PUB socket of merged windows, steps, the job
 * description and job events).
 *
 * DESIGN: the socket lives on the collector's one loop and never blocks it. The PUB socket
 * sends every closed window, the job description and job events as two frames (topic, Feed)
 * with ZMQ_DONTWAIT; libzmq queues at most FEED_PUB_HWM messages per subscriber and drops the
 * rest for that subscriber alone, so a slow or stopped viewer loses windows (it sees a gap in
 * their indices) instead of slowing ingest or growing the collector. The job description is
 * sent again every second so that a subscriber that joins late learns the job. At exit the
 * PUB socket lingers for at most FEED_PUB_LINGER_MS, so that subscribers get the job's end.
 * What it sends reaches it on the publish path (publish.c); the history endpoint, which keeps
 * windows and samples for requests, is history.c.
 */
#include "collector.h"
#include "feed.h"
#include "mw_wire.h"
#include "zsock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Messages queued per subscriber before libzmq drops for it: 25 s of 100 ms windows, and more
 * than the merge can close at once (MW_MERGE_RING_MAX), so that a healthy subscriber loses
 * nothing in the burst at a job's end. It bounds what a stopped subscriber costs: at most this
 * many windows (about 120 KB each for 2048 ranks). */
#define FEED_PUB_HWM 256
#define FEED_PUB_MAXMSG (64 << 10)    /* a subscription frame is a topic: a few bytes */
#define FEED_PUB_LINGER_MS 500        /* at exit, unsent messages wait at most this long */
#define FEED_JOB_EVERY_NS MW_NS_PER_S /* the job description is republished this often */

struct mw_feed {
    mw_clock_fn clock; /* the outer loop's clock (mw__feed_open) */
    void *pub;

    uint8_t *job; /* the last JobInfo, encoded */
    size_t job_len;
    uint64_t job_sent_ns; /* monotonic time it was last published */

    struct {
        uint64_t windows, jobs, events, traces; /* published */
        uint64_t dropped;                       /* sends refused with EAGAIN (never retried) */
        uint64_t send_errors;                   /* other send failures */
    } st;
    int send_error_logged;
};

/* The clock the outer loop handed over (mw__feed_open): the job description's repeat is
 * measured in real time; without a clock (tests) it stands still. */
static uint64_t feed_mono_ns(const mw_feed_t *f)
{
    if (!f->clock)
        return 0;
    mw_clock_t now;
    f->clock(&now);
    return now.mono_ns;
}

/* The PUB socket lingers a moment at exit so that subscribers get the job's last windows and
 * its end (--exit-after-job closes right after them); a stopped subscriber delays the exit by
 * that much at most. */
mw_feed_t *mw__feed_open(void *zmq_ctx, const mw_collector_options_t *opt, mw_clock_fn clock)
{
    static const mw_serve_opts_t pub = {FEED_PUB_LINGER_MS, FEED_PUB_HWM, 0, FEED_PUB_MAXMSG};
    mw_feed_t *f = calloc(1, sizeof *f);
    if (!f) {
        MW_LOG(MW_LOG_ERROR, "cannot start the feed: out of memory");
        return NULL;
    }
    f->clock = clock;
    if (!(f->pub = mw__zmq_serve_socket(zmq_ctx, ZMQ_PUB, opt->publish, "live feed", &pub))) {
        mw__feed_close(f);
        return NULL;
    }
    return f;
}

void mw__feed_close(mw_feed_t *f)
{
    if (!f)
        return;
    if (f->pub) {
        MW_LOG(MW_LOG_INFO,
               "feed: published %llu windows, %llu job descriptions, %llu events, %llu traces, "
               "%llu dropped, %llu send errors",
               (unsigned long long)f->st.windows, (unsigned long long)f->st.jobs,
               (unsigned long long)f->st.events, (unsigned long long)f->st.traces,
               (unsigned long long)f->st.dropped, (unsigned long long)f->st.send_errors);
        if (zmq_close(f->pub) != 0)
            MW_LOG(MW_LOG_ERROR, "zmq_close: %s", zmq_strerror(zmq_errno()));
    }
    free(f->job);
    free(f);
}

/* ---- publishing --------------------------------------------------------------------------- */

/* Counts a failed send: EAGAIN is a dropped message, anything else is logged once. */
static void feed_send_failed(mw_feed_t *f, const char *what)
{
    int err = zmq_errno();
    if (err == EAGAIN) {
        f->st.dropped++;
        return;
    }
    f->st.send_errors++;
    if (!f->send_error_logged)
        MW_LOG(MW_LOG_WARN, "live feed: cannot send a %s: %s (counted, not logged again)", what,
               zmq_strerror(err));
    f->send_error_logged = 1;
}

/* Sends (topic, Feed) where the Feed is the message `body` in field `field`. Returns 0 when
 * libzmq took it. */
static int feed_publish(mw_feed_t *f, const char *topic, uint32_t field, const void *body,
                        size_t len)
{
    uint8_t head[11];
    size_t hl = mw_wire_put_tag(head, field, MW_WIRE_LEN);
    hl += mw_wire_put_varint(head + hl, len);
    zmq_msg_t msg;
    if (zmq_msg_init_size(&msg, hl + len) != 0) {
        feed_send_failed(f, topic);
        return -1;
    }
    memcpy(zmq_msg_data(&msg), head, hl);
    memcpy((uint8_t *)zmq_msg_data(&msg) + hl, body, len);
    if (zmq_send(f->pub, topic, strlen(topic), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
        feed_send_failed(f, topic);
        zmq_msg_close(&msg);
        return -1;
    }
    /* Once the first frame is queued libzmq takes the rest of the message. */
    if (zmq_msg_send(&msg, f->pub, ZMQ_DONTWAIT) < 0) {
        feed_send_failed(f, topic);
        zmq_msg_close(&msg);
        return -1;
    }
    return 0;
}

static void feed_publish_job(mw_feed_t *f, uint64_t now_ns)
{
    f->job_sent_ns = now_ns;
    if (f->job && feed_publish(f, "job", 1, f->job, f->job_len) == 0)
        f->st.jobs++;
}

void mw__feed_window(mw_feed_t *f, const void *pb, size_t len)
{
    if (!f)
        return;
    uint64_t now = feed_mono_ns(f);
    if (f->job && now - f->job_sent_ns >= FEED_JOB_EVERY_NS)
        feed_publish_job(f, now);
    if (feed_publish(f, "window", 2, pb, len) == 0)
        f->st.windows++;
}

/* A closed time step (docs/steps.md), topic "step". Not kept for history requests: a client
 * that needs old steps reads the recording. */
void mw__feed_step(mw_feed_t *f, const void *pb, size_t len)
{
    if (f)
        feed_publish(f, "step", 4, pb, len); /* failures are counted by feed_publish */
}

/* A rank's trace of a closed window (a RankTrace), topic "trace" (docs/feed.md). */
void mw__feed_trace(mw_feed_t *f, const void *pb, size_t len)
{
    if (f && feed_publish(f, "trace", 5, pb, len) == 0)
        f->st.traces++;
}

/* A batch of the lateness analysis (a Lateness), topic "lateness" (docs/lateness.md). */
void mw__feed_lateness(mw_feed_t *f, const void *pb, size_t len)
{
    if (f)
        feed_publish(f, "lateness", 6, pb, len); /* failures are counted by feed_publish */
}

void mw__feed_job(mw_feed_t *f, const void *pb, size_t len)
{
    if (!f)
        return;
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy) {
        MW_LOG(MW_LOG_ERROR, "live feed: cannot keep the job description: out of memory");
        return;
    }
    memcpy(copy, pb, len);
    free(f->job);
    f->job = copy;
    f->job_len = len;
    feed_publish_job(f, feed_mono_ns(f));
}

void mw__feed_event(mw_feed_t *f, const char *kind, const char *job, const char *detail,
                    uint64_t real_ns)
{
    if (!f)
        return;
    Mpiwatch__JobEvent ev = MPIWATCH__JOB_EVENT__INIT;
    ev.kind = (char *)kind;
    ev.job = (char *)(job ? job : "");
    ev.detail = (char *)(detail ? detail : "");
    ev.real_ns = real_ns;
    size_t len = mpiwatch__job_event__get_packed_size(&ev);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf) {
        f->st.send_errors++;
        return;
    }
    mpiwatch__job_event__pack(&ev, buf);
    if (feed_publish(f, "event", 3, buf, len) == 0)
        f->st.events++;
    free(buf);
}

/* Republishes the job description when a second has passed without it (called by the loop
 * after each wakeup). */
void mw__feed_serve(mw_feed_t *f)
{
    if (f && f->job) {
        uint64_t now = feed_mono_ns(f);
        if (now - f->job_sent_ns >= FEED_JOB_EVERY_NS)
            feed_publish_job(f, now);
    }
}
