/* server.c: the collector's one zmq_poll loop.
 *
 * DESIGN: a single thread waits in zmq_poll on the ingest PULL socket and the read end of a
 * self-pipe, with the timeout set to the next timer the collector asks for (window deadline,
 * silence timeout, live view refresh); there is no sleep anywhere. Each wakeup drains the
 * socket with ZMQ_DONTWAIT in a bounded batch (so timers are never starved by a flood), reading
 * the clocks every SERVER_CLOCK_EVERY messages (so arrival times, hence close latencies, stay
 * accurate at full load). Signal handlers (signals.c) only write the signal number into a
 * pipe; the loop reads it and finishes cleanly (windows closed, report and files written, exit 0).
 * With --metrics-port, each wakeup also hands the collector to mw__metrics_update(), which
 * publishes a snapshot for the HTTP thread (metrics.c) and may shorten the poll timeout.
 * With --publish or --history, the feed's sockets (feed.c) share the loop's context; the
 * history socket is polled beside the ingest socket and every wakeup lets the feed answer
 * pending requests (a bounded batch, after the ingest batch) and republish the job
 * description when it is due, for which the timeout is at most FEED_WAKE_MS while a job is
 * known.
 * With --steer or --control, the steering sockets (steer.c) share the loop the same way: the
 * control ROUTER is polled and its requests are answered at the top of each iteration.
 *
 * ZMQ_MAXMSGSIZE makes libzmq drop an oversized frame (and the connection that sent it)
 * before it is ever buffered; the collector's own size check is the second line of defence.
 * Without CURVE, ZMQ_ZAP_DOMAIN is set although no ZAP handler exists (so ZMTP/3 peers with
 * the NULL mechanism are admitted exactly as before) because it makes libzmq refuse
 * unversioned ZMTP/1.0 peers: without it, any bytes sent to the TCP port (a port scanner, an
 * HTTP request) are parsed as ZMTP/1.0 frames and arrive here as messages.
 * Every socket logs the endpoint it really bound (ZMQ_LAST_ENDPOINT, zsock.c); with
 * --endpoints-file they are written to a file once all are bound, the metrics server started
 * too: the file's appearance says the collector is ready.
 * With --curve-secret (auth.c) the ZAP handler is bound in the loop's context before any other
 * socket, every socket is a CURVE server, and the handler and the sockets' monitors are polled
 * here beside the rest; they are closed after every other socket.
 * With --upstream (an aggregator, upstream.c), the relay's SUB and, while messages wait for
 * the parent, the PUSH (POLLOUT) are polled too, and each wakeup relays steering, hands over
 * what waits and sends the periodic AggState.
 */
#include "collector.h"
#include "server.h"
#include "feed.h"
#include "history.h"
#include "steer.h"
#include "signals.h"
#include "metrics.h"
#include "rules.h"
#include "lateness.h"
#include "zsock.h"
#include "registry.h"
#include "upstream.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#define SERVER_BATCH 4096      /* messages per wakeup before timers run again */
#define SERVER_CLOCK_EVERY 256 /* messages between readings of the clocks within a batch */
#define SERVER_RCVHWM 100000   /* queued messages: ~10 windows of a 10k-rank job */
#define FEED_WAKE_MS 1000      /* the feed republishes the job description about this often */
#define SERVER_AUTH_ITEMS 8    /* the ZAP handler and one monitor per served socket */

static int server_setopt(void *sock, int opt, const void *val, size_t len, const char *name)
{
    if (zmq_setsockopt(sock, opt, val, len) != 0) {
        MW_LOG(MW_LOG_ERROR, "zmq_setsockopt(%s): %s", name, zmq_strerror(zmq_errno()));
        return -1;
    }
    return 0;
}

static int server_socket(void *ctx, void *sock, const mw_collector_options_t *o)
{
    int64_t maxmsg = MW_MAX_MESSAGE_BYTES;
    int hwm = SERVER_RCVHWM, linger = 0;
    MW_TRY(server_setopt(sock, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg, "ZMQ_MAXMSGSIZE"));
    MW_TRY(server_setopt(sock, ZMQ_RCVHWM, &hwm, sizeof hwm, "ZMQ_RCVHWM"));
    MW_TRY(server_setopt(sock, ZMQ_LINGER, &linger, sizeof linger, "ZMQ_LINGER"));
    MW_TRY(
        mw__auth_socket(ctx, sock, "ingest socket", (const char *const *)o->listen, o->n_listen));
    for (unsigned i = 0; i < o->n_listen; i++) {
        if (zmq_bind(sock, o->listen[i]) != 0) {
            MW_LOG(MW_LOG_ERROR, "cannot listen on %s: %s", o->listen[i],
                   zmq_strerror(zmq_errno()));
            return -1;
        }
        /* The endpoint really bound: a wildcard port becomes the one the system chose. */
        MW_TRY(mw__zsock_bound(sock, "ingest socket", o->listen[i]));
    }
    return 0;
}

static int server_msg_close(zmq_msg_t *msg)
{
    if (zmq_msg_close(msg) != 0) {
        MW_LOG(MW_LOG_ERROR, "zmq_msg_close: %s", zmq_strerror(zmq_errno()));
        return -1;
    }
    return 0;
}

/* The connection a message came in on (collector.h frame_peer): the ZAP User-Id that
 * authenticated it (CURVE: the client's public key), else the peer's IP address, else NULL
 * (ipc, or metadata ZeroMQ does not have). */
static const char *server_peer(void *frame_msg, char *buf, size_t cap)
{
    zmq_msg_t *m = frame_msg;
    const char *v = zmq_msg_gets(m, "User-Id");
    const char *kind = "key:";
    if (!v || !v[0]) {
        v = zmq_msg_gets(m, "Peer-Address");
        kind = "addr:";
    }
    if (!v || !v[0])
        return NULL;
    snprintf(buf, cap, "%s%s", kind, v);
    return buf;
}

/* Receives up to SERVER_BATCH messages without blocking. Returns 0, or -1 on a socket error. */
static int server_drain(mw_collector_t *c, void *sock)
{
    mw_clock_t now;
    mw__clock_now(&now);
    for (int i = 0; i < SERVER_BATCH && !c->exit_requested; i++) {
        if (i && i % SERVER_CLOCK_EVERY == 0)
            mw__clock_now(&now);
        zmq_msg_t msg;
        if (zmq_msg_init(&msg) != 0) {
            MW_LOG(MW_LOG_ERROR, "zmq_msg_init: %s", zmq_strerror(zmq_errno()));
            return -1;
        }
        if (zmq_msg_recv(&msg, sock, ZMQ_DONTWAIT) < 0) {
            int err = zmq_errno();
            MW_TRY(server_msg_close(&msg));
            if (err == EAGAIN || err == EINTR)
                return 0;
            MW_LOG(MW_LOG_ERROR, "zmq_msg_recv: %s", zmq_strerror(err));
            return -1;
        }
        /* A multipart message arrives whole; skip to its last frame and reject it once. */
        int parts = 1;
        while (zmq_msg_more(&msg)) {
            MW_TRY(server_msg_close(&msg));
            if (zmq_msg_init(&msg) != 0) {
                MW_LOG(MW_LOG_ERROR, "zmq_msg_init: %s", zmq_strerror(zmq_errno()));
                return -1;
            }
            if (zmq_msg_recv(&msg, sock, ZMQ_DONTWAIT) < 0) {
                MW_LOG(MW_LOG_ERROR, "zmq_msg_recv (part %d): %s", parts + 1,
                       zmq_strerror(zmq_errno()));
                server_msg_close(&msg);
                return -1;
            }
            parts++;
        }
        c->frame_peer = server_peer;
        c->frame_msg = &msg;
        mw_collector_frame(c, zmq_msg_data(&msg), zmq_msg_size(&msg), parts, &now);
        c->frame_msg = NULL;
        MW_TRY(server_msg_close(&msg));
    }
    return 0;
}

/* The earlier of two poll timeouts in ms, where -1 means none. */
static long server_earlier(long a, long b)
{
    if (a < 0)
        return b;
    if (b < 0)
        return a;
    return a < b ? a : b;
}

static int server_loop(mw_collector_t *c, void *sock, int sig_fd, mw_metrics_t *metrics,
                       mw_registry_t *registry)
{
    for (;;) {
        mw_clock_t now;
        mw__clock_now(&now);
        mw_collector_tick(c, &now);
        long metrics_ms = metrics ? mw__metrics_update(metrics, c, now.mono_ns) : -1;
        mw__registry_update(registry, c, now.mono_ns);
        mw__feed_serve(c->feed);
        mw__history_serve(c->history, c);
        if (c->exit_requested)
            return 0;

        mw__steer_serve(c);
        if (c->exit_requested)
            return 0;
        mw__upstream_serve(c, now.mono_ns);

        zmq_pollitem_t items[7 + SERVER_AUTH_ITEMS] = {
            {.socket = sock, .events = ZMQ_POLLIN},
            {.socket = NULL, .fd = sig_fd, .events = ZMQ_POLLIN},
        };
        int n_items = 2;
        mw__history_pollitem(c->history, &items[n_items]);
        if (items[n_items].socket)
            n_items++;
        mw__steer_pollitem(c->steer, &items[n_items]);
        if (items[n_items].socket)
            n_items++;
        int late_item = -1; /* the lateness worker's wake-up descriptor (lateness.c) */
        if (c->lateness) {
            late_item = n_items;
            items[n_items++] =
                (zmq_pollitem_t){.fd = mw__lateness_fd(c->lateness), .events = ZMQ_POLLIN};
        }
        n_items += mw__upstream_pollitems(c->upstream, &items[n_items], 2);
        n_items += mw__auth_pollitems(c->auth, &items[n_items], SERVER_AUTH_ITEMS);
        long timeout = server_earlier(mw_collector_timeout_ms(c, &now), metrics_ms);
        timeout = server_earlier(timeout, mw__registry_timeout_ms(registry, now.mono_ns));
        timeout = server_earlier(timeout, mw__upstream_timeout_ms(c, now.mono_ns));
        if (c->opt->publish && c->job.active)
            timeout = server_earlier(timeout, FEED_WAKE_MS);
        if (zmq_poll(items, n_items, timeout) < 0) {
            if (zmq_errno() == EINTR)
                continue; /* the signal's byte is in the pipe */
            MW_LOG(MW_LOG_ERROR, "zmq_poll: %s", zmq_strerror(zmq_errno()));
            return -1;
        }
        mw__auth_serve(c); /* handshakes wait for the ZAP handler: answer it first */
        int stop = (items[1].revents & ZMQ_POLLIN) && mw__signals_read();
        if (mw__signals_reload())
            mw__rules_reload(c); /* SIGHUP: a bad file keeps the old rules (logged) */
        if (stop) {
            MW_LOG(MW_LOG_INFO, "stopping on signal");
            mw__clock_now(&now);
            mw_collector_finish(c, &now);
            return 0;
        }
        if ((items[0].revents & ZMQ_POLLIN) && server_drain(c, sock) < 0)
            return -1;
        if (late_item >= 0 && (items[late_item].revents & ZMQ_POLLIN)) {
            mw__clock_now(&c->now); /* the batches are published with the clock of now */
            mw__lateness_drain(c);
        }
        /* History requests are answered at the top of the next iteration, after the timers. */
    }
}

/* What the socket `what` really bound (a port the system chose), for the job registry; the
 * option's value when it is not known, NULL when the socket is off. */
static const char *server_bound(const char *what, const char *asked)
{
    const char *ep = asked ? mw__zsock_bound_endpoint(what) : NULL;
    return ep ? ep : asked;
}

int mw__server_run(mw_collector_t *c)
{
    int rc = -1;
    int sig_fd = -1;
    void *sock = NULL;
    mw_metrics_t *metrics = NULL;
    mw_registry_t *registry = NULL;
    void *ctx = zmq_ctx_new();
    if (!ctx) {
        MW_LOG(MW_LOG_ERROR, "zmq_ctx_new: %s", zmq_strerror(zmq_errno()));
        return -1;
    }
    /* Before any socket is bound: a CURVE socket must never exist without its handler. */
    if (c->opt->curve_secret && !(c->auth = mw__auth_open(ctx, c->opt)))
        goto out;
    sock = zmq_socket(ctx, ZMQ_PULL);
    if (!sock) {
        MW_LOG(MW_LOG_ERROR, "zmq_socket: %s", zmq_strerror(zmq_errno()));
        goto out;
    }
    if (server_socket(ctx, sock, c->opt) < 0 || (sig_fd = mw__signals_open()) < 0)
        goto out;
    if (c->opt->publish && !(c->feed = mw__feed_open(ctx, c->opt, mw__clock_now)))
        goto out;
    if (c->opt->history && !(c->history = mw__history_open(ctx, c->opt, mw__clock_now)))
        goto out;
    if ((c->opt->steer || c->opt->control) && !(c->steer = mw__steer_open(ctx, c->opt)))
        goto out;
    /* After --steer: the relay publishes on it. */
    if (c->opt->upstream && !(c->upstream = mw__upstream_open(ctx, c)))
        goto out;
    if (c->opt->metrics_port && !(metrics = mw__metrics_start(c, (unsigned)c->opt->metrics_port)))
        goto out;
    /* Written once everything is bound: the launcher waits for this file (docs/launcher.md). */
    if (c->opt->endpoints_file && mw__zsock_write_bound(c->opt->endpoints_file) != 0)
        goto out;
    /* The lateness analysis is an extra: without its worker the collector runs without it. */
    if (mw_collector_options_lateness(c->opt) &&
        !(c->lateness = mw__lateness_open(c->opt->lateness_budget_ms,
                                          mw_collector_options_lateness(c->opt) == 1)))
        MW_LOG(MW_LOG_WARN, "running without the lateness analysis");
    /* Registered once everything is bound, with the endpoints as bound (docs/attach.md). */
    mw_registry_endpoints_t eps = {server_bound("ingest socket", c->opt->listen[0]),
                                   server_bound("live feed", c->opt->publish),
                                   server_bound("history endpoint", c->opt->history),
                                   server_bound("steering control", c->opt->control),
                                   server_bound("steering", c->opt->steer),
                                   (unsigned)c->opt->metrics_port};
    registry = mw__registry_open(c, &eps);
    rc = server_loop(c, sock, sig_fd, metrics, registry);
out:
    mw__registry_close(registry);    /* the entry goes first: the job is no longer attachable */
    mw__lateness_close(c->lateness); /* what it still holds is dropped (the job ended) */
    c->lateness = NULL;
    mw__metrics_stop(metrics);
    mw__feed_close(c->feed); /* before the context ends: they own sockets of it */
    c->feed = NULL;
    mw__history_close(c->history);
    c->history = NULL;
    mw__upstream_close(c); /* before --steer, which its relay publishes on */
    mw__steer_close(c->steer);
    c->steer = NULL;
    if (sock && zmq_close(sock) != 0)
        MW_LOG(MW_LOG_ERROR, "zmq_close: %s", zmq_strerror(zmq_errno()));
    mw__auth_close(c->auth); /* last: it served the sockets above */
    c->auth = NULL;
    while (zmq_ctx_term(ctx) != 0) {
        if (zmq_errno() != EINTR) {
            MW_LOG(MW_LOG_ERROR, "zmq_ctx_term: %s", zmq_strerror(zmq_errno()));
            break;
        }
    }
    mw__signals_close();
    return rc;
}
