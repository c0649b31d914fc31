/* zsock.c: socket helpers shared by the collector's servers (the live feed, the history
 * server, the steering sockets).
 *
 * DESIGN: every socket the collector serves clients on is set up the same way: linger and
 * queue limits, a cap on what a peer may send in, the security of auth.c (CURVE, or the ZAP
 * domain that refuses unversioned peers), then bound; every zmq_* failure is logged with
 * zmq_strerror.
 * What a socket really bound is read back with ZMQ_LAST_ENDPOINT and logged (a wildcard port
 * becomes the port the system chose); the endpoints are also kept in a small table that
 * --endpoints-file writes once every socket is bound, which is how the launcher learns a port
 * it asked the system to choose (port * or 0) and knows that the collector is ready.
 */
#include "zsock.h"

#include "auth.h"
#include "log.h"
#include "mw_file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#define ZSOCK_MAX_BOUND 16 /* listen endpoints, feed, history, steer, control */

/* The collector binds its sockets once, from its one thread, at start-up: a static table. */
static struct {
    char what[32];
    char ep[256];
} zsock_bound[ZSOCK_MAX_BOUND];
static int zsock_n_bound;

int mw__zsock_bound(void *sock, const char *what, const char *asked)
{
    char ep[256];
    size_t len = sizeof ep;
    if (zmq_getsockopt(sock, ZMQ_LAST_ENDPOINT, ep, &len) != 0) {
        MW_LOG(MW_LOG_ERROR, "zmq_getsockopt(ZMQ_LAST_ENDPOINT) of the %s: %s", what,
               zmq_strerror(zmq_errno()));
        return -1;
    }
    ep[sizeof ep - 1] = '\0';
    /* The ingest socket's line keeps its wording of old ("listening on"): scripts look for it. */
    const char *verb = strcmp(what, "ingest socket") == 0 ? "listening" : what;
    if (strcmp(ep, asked) == 0)
        MW_LOG(MW_LOG_INFO, "%s on %s", verb, ep);
    else
        MW_LOG(MW_LOG_INFO, "%s on %s (asked for %s)", verb, ep, asked);
    if (zsock_n_bound < ZSOCK_MAX_BOUND) {
        snprintf(zsock_bound[zsock_n_bound].what, sizeof zsock_bound[0].what, "%s", what);
        snprintf(zsock_bound[zsock_n_bound].ep, sizeof zsock_bound[0].ep, "%s", ep);
        zsock_n_bound++;
    }
    return 0;
}

int mw__zsock_write_bound(const char *path)
{
    /* A fresh temporary file beside it (mw_file: never a planted PATH.tmp or symbolic link),
     * renamed into place: whoever waits for the file reads it whole. */
    char err[4200];
    mw_afile_t *a = mw_afile_open(path, err, sizeof err);
    if (!a) {
        MW_LOG(MW_LOG_ERROR, "--endpoints-file: %s", err);
        return -1;
    }
    FILE *f = mw_afile_stream(a);
    /* One line per endpoint: the socket's name with blanks made '-', then the endpoint. */
    for (int i = 0; i < zsock_n_bound; i++) {
        for (const char *p = zsock_bound[i].what; *p; p++)
            putc(*p == ' ' ? '-' : *p, f);
        fprintf(f, " %s\n", zsock_bound[i].ep);
    }
    if (mw_afile_commit_nosync(a, err, sizeof err) != 0) {
        MW_LOG(MW_LOG_ERROR, "--endpoints-file: %s", err);
        return -1;
    }
    return 0;
}

const char *mw__zsock_bound_endpoint(const char *what)
{
    for (int i = zsock_n_bound - 1; i >= 0; i--)
        if (strcmp(zsock_bound[i].what, what) == 0)
            return zsock_bound[i].ep;
    return NULL;
}

/* zmq_setsockopt of an int option; a failure is logged with the option's name. Returns 0/-1. */
static int setopt_int(void *sock, int opt, int val, const char *name)
{
    if (zmq_setsockopt(sock, opt, &val, sizeof val) != 0) {
        MW_LOG(MW_LOG_ERROR, "zmq_setsockopt(%s): %s", name, zmq_strerror(zmq_errno()));
        return -1;
    }
    return 0;
}

/* A socket of `type` with the options both kinds share, bound to `ep`. Returns NULL, logged. */
void *mw__zmq_serve_socket(void *ctx, int type, const char *ep, const char *what,
                           const mw_serve_opts_t *o)
{
    void *s = zmq_socket(ctx, type);
    if (!s) {
        MW_LOG(MW_LOG_ERROR, "zmq_socket(%s): %s", what, zmq_strerror(zmq_errno()));
        return NULL;
    }
    int ok = setopt_int(s, ZMQ_LINGER, o->linger_ms, "ZMQ_LINGER") == 0 &&
             setopt_int(s, ZMQ_SNDHWM, o->sndhwm, "ZMQ_SNDHWM") == 0;
    if (ok && type == ZMQ_ROUTER)
        ok = setopt_int(s, ZMQ_RCVHWM, o->rcvhwm, "ZMQ_RCVHWM") == 0 &&
             /* Replies to a vanished client are dropped, never an error or a wait. */
             setopt_int(s, ZMQ_ROUTER_MANDATORY, 0, "ZMQ_ROUTER_MANDATORY") == 0;
    /* What peers send in is small (requests, or subscriptions on a PUB socket): a larger
     * frame makes libzmq drop that connection before buffering it. */
    int64_t maxmsg = o->maxmsg;
    if (ok && zmq_setsockopt(s, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg) != 0) {
        MW_LOG(MW_LOG_ERROR, "zmq_setsockopt(ZMQ_MAXMSGSIZE): %s", zmq_strerror(zmq_errno()));
        ok = 0;
    }
    /* As on the ingest socket (server.c): a CURVE server when CURVE is on, otherwise a ZAP
     * domain that refuses unversioned ZMTP/1.0 peers, so that stray bytes on a TCP port are
     * not parsed as messages (auth.c). */
    if (ok && mw__auth_socket(ctx, s, what, &ep, 1) != 0)
        ok = 0;
    if (ok && zmq_bind(s, ep) != 0) {
        MW_LOG(MW_LOG_ERROR, "cannot bind the %s on %s: %s", what, ep, zmq_strerror(zmq_errno()));
        ok = 0;
    }
    if (ok && mw__zsock_bound(s, what, ep) != 0)
        ok = 0;
    if (!ok) {
        if (zmq_close(s) != 0)
            MW_LOG(MW_LOG_ERROR, "zmq_close: %s", zmq_strerror(zmq_errno()));
        return NULL;
    }
    return s;
}

int mw__zsock_recv(void *router, zmq_msg_t msgs[3], int *kept, const char *what)
{
    int parts = 0;
    *kept = 0;
    for (;;) {
        zmq_msg_t m;
        if (zmq_msg_init(&m) != 0) {
            MW_LOG(MW_LOG_ERROR, "zmq_msg_init: %s", zmq_strerror(zmq_errno()));
            return -1;
        }
        /* The frames of one message arrive together: none of them is waited for. */
        if (zmq_msg_recv(&m, router, ZMQ_DONTWAIT) < 0) {
            int err = zmq_errno();
            zmq_msg_close(&m);
            if (parts == 0 && (err == EAGAIN || err == EINTR))
                return 0;
            MW_LOG(MW_LOG_ERROR, "%s: zmq_msg_recv: %s", what, zmq_strerror(err));
            return -1;
        }
        parts++;
        int more = zmq_msg_more(&m);
        if (*kept < 3)
            msgs[(*kept)++] = m;
        else if (zmq_msg_close(&m) != 0)
            MW_LOG(MW_LOG_ERROR, "zmq_msg_close: %s", zmq_strerror(zmq_errno()));
        if (!more)
            return parts;
    }
}

int mw__zsock_envelope_ok(zmq_msg_t msgs[3], int parts)
{
    return parts == 2 || (parts == 3 && zmq_msg_size(&msgs[1]) == 0);
}

void mw__zsock_close(zmq_msg_t msgs[3], int kept)
{
    for (int k = 0; k < kept; k++)
        if (zmq_msg_close(&msgs[k]) != 0)
            MW_LOG(MW_LOG_ERROR, "zmq_msg_close: %s", zmq_strerror(zmq_errno()));
}
