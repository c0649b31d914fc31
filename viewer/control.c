/* control.c: the viewer's steering client (control.h).
 *
 * DESIGN: see control.h. The DEALER sends the SteerRequest alone (no delimiter frame: the
 * collector answers a DEALER with the body alone too). The socket keeps libzmq's default of
 * queueing while it connects, so a request typed before the collector is up waits for it, and
 * a collector that never answers ends as "no reply" after the timeout; LINGER 0 so that
 * closing never waits. Everything libzmq reports is checked and turned into the result's text.
 */
#include "control.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zmq.h>

#include "mw_keyfile.h"
#include "mw_steer_request.h"

#define CONTROL_MAXMSG 4096 /* a SteerReply is a flag, a short reason and a number */

struct mw_control {
    void *ctx, *sock;
    char endpoint[256];
    int timeout_ms;
    uint64_t sent_ns;
    mw_control_result_t res;
    mw_steer_request_t rq; /* 16 KiB of ranks: not on the stack */
};

/* A DEALER connected to the endpoint, or NULL with a message. */
static void *control_socket(mw_control_t *c, char *err, size_t len)
{
    void *s = zmq_socket(c->ctx, ZMQ_DEALER);
    if (!s) {
        snprintf(err, len, "zmq_socket(DEALER): %s", zmq_strerror(zmq_errno()));
        return NULL;
    }
    int linger = 0, hwm = 4;
    int64_t maxmsg = CONTROL_MAXMSG;
    if (zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
        zmq_setsockopt(s, ZMQ_SNDHWM, &hwm, sizeof hwm) != 0 ||
        zmq_setsockopt(s, ZMQ_RCVHWM, &hwm, sizeof hwm) != 0 ||
        zmq_setsockopt(s, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg) != 0) {
        snprintf(err, len, "zmq_setsockopt: %s", zmq_strerror(zmq_errno()));
        zmq_close(s);
        return NULL;
    }
    /* CURVE (docs/security.md): MPIWATCH_CURVE_SERVER and MPIWATCH_CURVE_KEY, as the feed's. */
    mw_curve_client_t curve;
    int use_curve = mw_curve_client_load(NULL, NULL, &curve, err, len);
    if (use_curve > 0 && mw_curve_client_apply(s, &curve, err, len) < 0)
        use_curve = -1;
    mw_keyfile_wipe(&curve, sizeof curve);
    if (use_curve < 0) {
        zmq_close(s);
        return NULL;
    }
    if (zmq_connect(s, c->endpoint) != 0) {
        snprintf(err, len, "cannot connect to the control endpoint %s: %s", c->endpoint,
                 zmq_strerror(zmq_errno()));
        zmq_close(s);
        return NULL;
    }
    return s;
}

mw_control_t *mw_control_open(const char *endpoint, int timeout_ms, char *err, size_t len)
{
    if (!endpoint || !*endpoint) {
        snprintf(err, len, "no control endpoint");
        return NULL;
    }
    mw_control_t *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, len, "out of memory");
        return NULL;
    }
    snprintf(c->endpoint, sizeof c->endpoint, "%s", endpoint);
    c->timeout_ms = timeout_ms > 0 ? timeout_ms : MW_CONTROL_TIMEOUT_MS;
    if (!(c->ctx = zmq_ctx_new())) {
        snprintf(err, len, "zmq_ctx_new: %s", zmq_strerror(zmq_errno()));
        free(c);
        return NULL;
    }
    if (!(c->sock = control_socket(c, err, len))) {
        mw_control_free(c);
        return NULL;
    }
    return c;
}

void mw_control_free(mw_control_t *c)
{
    if (!c)
        return;
    if (c->sock && zmq_close(c->sock) != 0)
        fprintf(stderr, "mpiwatch-viewer: zmq_close: %s\n", zmq_strerror(zmq_errno()));
    if (c->ctx && zmq_ctx_term(c->ctx) != 0)
        fprintf(stderr, "mpiwatch-viewer: zmq_ctx_term: %s\n", zmq_strerror(zmq_errno()));
    free(c);
}

static void control_done(mw_control_t *c, mw_control_state_t st, uint64_t now_ns)
{
    c->res.state = st;
    c->res.at_ns = now_ns;
}

int mw_control_send(mw_control_t *c, const char *line, char sep, uint64_t now_ns)
{
    char err[300];
    if (c->res.state == MW_CONTROL_WAITING) {
        /* The result of the request still waiting is kept; only the text says why not. */
        snprintf(c->res.text, sizeof c->res.text, "wait: %s has no answer yet", c->res.request);
        return -1;
    }
    c->res.seq = 0;
    snprintf(c->res.request, sizeof c->res.request, "%.150s", line);
    if (mw_steer_request_parse_line(&c->rq, line, sep, err, sizeof err) < 0) {
        snprintf(c->res.text, sizeof c->res.text, "not sent: %s", err);
        control_done(c, MW_CONTROL_INVALID, now_ns);
        return -1;
    }
    mw_steer_request_text(&c->rq, c->res.request, sizeof c->res.request);
    if (!c->sock) {
        snprintf(c->res.text, sizeof c->res.text, "not sent: no connection to %s", c->endpoint);
        control_done(c, MW_CONTROL_NO_REPLY, now_ns);
        return -1;
    }
    uint8_t *buf = NULL;
    size_t n = mw_steer_request_pack(&c->rq, &buf);
    if (!buf) {
        snprintf(c->res.text, sizeof c->res.text, "not sent: out of memory");
        control_done(c, MW_CONTROL_INVALID, now_ns);
        return -1;
    }
    int rc = zmq_send(c->sock, buf, n, ZMQ_DONTWAIT);
    free(buf);
    if (rc < 0) {
        snprintf(c->res.text, sizeof c->res.text, "not sent: %s", zmq_strerror(zmq_errno()));
        control_done(c, MW_CONTROL_NO_REPLY, now_ns);
        return -1;
    }
    c->res.id++;
    c->sent_ns = now_ns;
    snprintf(c->res.text, sizeof c->res.text, "sending %s…", c->res.request);
    control_done(c, MW_CONTROL_WAITING, now_ns);
    return 0;
}

/* Takes one message; 1 with the reply's body in *msg, 0 when none is there, -1 on an error. */
static int control_recv(mw_control_t *c, zmq_msg_t *msg)
{
    for (;;) {
        if (zmq_msg_recv(msg, c->sock, ZMQ_DONTWAIT) < 0) {
            int e = zmq_errno();
            return e == EAGAIN || e == EINTR ? 0 : -1;
        }
        if (!zmq_msg_more(msg))
            return 1;
        /* Not the one frame the collector sends: keep the last. */
    }
}

int mw_control_poll(mw_control_t *c, uint64_t now_ns)
{
    if (c->res.state != MW_CONTROL_WAITING)
        return 0;
    zmq_msg_t msg;
    if (zmq_msg_init(&msg) != 0)
        return 0;
    int rc = c->sock ? control_recv(c, &msg) : -1;
    if (rc == 1) {
        int ok = 0;
        uint64_t seq = 0;
        char why[300];
        if (mw_steer_reply_parse(zmq_msg_data(&msg), zmq_msg_size(&msg), &ok, &seq, why,
                                 sizeof why) < 0) {
            snprintf(c->res.text, sizeof c->res.text, "bad reply from %s", c->endpoint);
            control_done(c, MW_CONTROL_NO_REPLY, now_ns);
        } else if (ok) {
            c->res.seq = seq;
            snprintf(c->res.text, sizeof c->res.text, "sent %s (seq %llu)", c->res.request,
                     (unsigned long long)seq);
            control_done(c, MW_CONTROL_SENT, now_ns);
        } else {
            snprintf(c->res.text, sizeof c->res.text, "rejected: %s", why);
            control_done(c, MW_CONTROL_REJECTED, now_ns);
        }
        zmq_msg_close(&msg);
        return 1;
    }
    zmq_msg_close(&msg);
    if (rc == 0 && now_ns - c->sent_ns < (uint64_t)c->timeout_ms * 1000000ull)
        return 0;
    if (rc < 0)
        snprintf(c->res.text, sizeof c->res.text, "no reply: %s", zmq_strerror(zmq_errno()));
    else
        snprintf(c->res.text, sizeof c->res.text, "no reply from %s within %.1f s", c->endpoint,
                 c->timeout_ms / 1000.0);
    control_done(c, MW_CONTROL_NO_REPLY, now_ns);
    /* A fresh socket: the answer to this request, should it come, must not be read as the
     * answer to the next one. */
    if (c->sock && zmq_close(c->sock) != 0)
        fprintf(stderr, "mpiwatch-viewer: zmq_close: %s\n", zmq_strerror(zmq_errno()));
    char err[300];
    c->sock = control_socket(c, err, sizeof err);
    if (!c->sock)
        fprintf(stderr, "mpiwatch-viewer: steering: %s\n", err);
    return 1;
}

void mw_control_wait(mw_control_t *c, int timeout_ms)
{
    if (!c->sock || c->res.state != MW_CONTROL_WAITING)
        return;
    zmq_pollitem_t it = {c->sock, 0, ZMQ_POLLIN, 0};
    if (zmq_poll(&it, 1, timeout_ms < 0 ? 0 : timeout_ms) < 0 && zmq_errno() != EINTR)
        fprintf(stderr, "mpiwatch-viewer: zmq_poll: %s\n", zmq_strerror(zmq_errno()));
}

int mw_control_busy(const mw_control_t *c)
{
    return c->res.state == MW_CONTROL_WAITING;
}

const mw_control_result_t *mw_control_result(const mw_control_t *c)
{
    return &c->res;
}

const char *mw_control_endpoint(const mw_control_t *c)
{
    return c->endpoint;
}
