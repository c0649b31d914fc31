/* auth.c: who may talk to the collector's sockets (docs/security.md).
 *
 * DESIGN: the policy is decided at start, before anything is bound (mw__auth_check, from
 * mw_collector_options_check): an endpoint reachable only from this host (ipc:// with a path,
 * inproc://, tcp:// on a loopback address, or on localhost when every address it resolves to is
 * loopback) needs nothing; an abstract ipc://@name is not local (it has no file, so no
 * permission guards it: any local user can connect); any other one needs CURVE (--curve-secret with
 * --curve-clients) or the explicit --allow-insecure. With CURVE, every socket the collector binds
 * (ingest, live feed, history, steering, control) is a CURVE server with the collector's secret
 * key, and a ZAP handler decides which clients get in: a REP socket bound on inproc://zeromq.zap.01
 * in the collector's own ZeroMQ context (libzmq sends every handshake of that context's sockets
 * there), polled in the collector's one zmq_poll loop like every other socket, so there is no
 * thread. It accepts a CURVE client only when its public key is in the authorized list (a sorted
 * array, binary search) and answers anything else, and any request that is not well formed, with
 * 400. Each socket gets a ZAP domain of its own ("mpiwatch.N"), which tells the handler which
 * socket a request is for, so a refusal is logged with the socket's name, endpoint and peer
 * address.
 *
 * Peers that fail before ZAP (no CURVE at all, a wrong server key, garbage) are seen through
 * zmq_socket_monitor on each served socket: ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL (by protocol
 * error code) and _NO_DETAIL. _AUTH is not watched: it is the echo of a ZAP refusal, which the
 * handler has counted already, so each refused connection is counted once. Refusals are
 * counted by reason in c->stats.auth_refused (the stats JSON, the live view's "rejected") and
 * logged at most once a second per socket and reason, with the number not logged in between
 * (a client without CURVE reconnects every 100 ms, and would otherwise fill the log).
 *
 * Failing closed: the handler is bound before the first CURVE socket and closed after the last
 * one, and every CURVE socket also sets ZMQ_ZAP_ENFORCE_DOMAIN where libzmq has it, because a
 * CURVE server without a ZAP handler would otherwise admit any client with any key.
 */
#include "collector.h"
#include "auth.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "mw_keyfile.h"
#include "mw_zmq_monitor.h"

#ifndef ZMQ_ZAP_ENFORCE_DOMAIN
#define ZMQ_ZAP_ENFORCE_DOMAIN 93 /* a draft option in libzmq 4.3's header; set where it works */
#endif

#define AUTH_ZAP_ENDPOINT "inproc://zeromq.zap.01"
#define AUTH_MAX_SOCKETS 8 /* ingest, live feed, history, steering, control */
#define AUTH_BATCH 256     /* ZAP requests and monitor events handled per wake-up */
#define AUTH_MAX_FRAMES 8  /* a ZAP request for CURVE has 7 frames */
#define AUTH_MAX_CLIENTS (1u << 20)
#define AUTH_LOG_EVERY_NS 1000000000ull

typedef struct {
    char what[48];
    char eps[256]; /* its endpoints, for messages */
    void *monitor; /* PAIR connected to the socket's monitor */
    uint64_t last_log_ns[MW_AUTH_COUNT], unlogged[MW_AUTH_COUNT]; /* rate limit */
} auth_socket_t;

struct mw_auth {
    void *ctx;
    void *zap;
    mw_keypair_t keys;
    uint8_t (*clients)[MW_CURVE_KEY_BYTES]; /* sorted */
    size_t n_clients, cap_clients;
    auth_socket_t sock[AUTH_MAX_SOCKETS];
    int n_sock;
    auth_socket_t unknown; /* refusals that name no socket (a malformed ZAP request) */
};

/* The collector binds its sockets in one context; this is the handler that serves it. */
static mw_auth_t *auth_active;

static const char *const auth_reason_names[] = {
#define MW_X(id, name) name,
    MW_AUTH_REASONS(MW_X)
#undef MW_X
};

const char *mw__auth_reason_name(mw_auth_reason_t reason)
{
    return (unsigned)reason < MW_AUTH_COUNT ? auth_reason_names[reason] : "?";
}

/* ---- policy ------------------------------------------------------------------------------- */

/* 1 when `sa` is a loopback address: 127.0.0.0/8, ::1, or ::ffff:127.x.x.x. */
static int addr_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr) >> 24) ==
               127;
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a6 = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
        return IN6_IS_ADDR_LOOPBACK(a6) || (IN6_IS_ADDR_V4MAPPED(a6) && a6->s6_addr[12] == 127);
    }
    return 0;
}

/* "localhost" is a name, not an address: libzmq resolves it with getaddrinfo when it binds, and
 * /etc/hosts or a resolver can map it anywhere. It is local only when it resolves, and every
 * address it resolves to is loopback, so whichever one libzmq takes is. */
static int localhost_loopback(const char *host)
{
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, NULL, &hints, &res) != 0 || !res)
        return 0;
    int all = 1;
    for (const struct addrinfo *ai = res; ai; ai = ai->ai_next)
        all &= ai->ai_addr && addr_loopback(ai->ai_addr);
    freeaddrinfo(res);
    return all;
}

int mw__endpoint_local(const char *ep)
{
    /* An abstract socket (ipc://@name) has no file and so no permissions: any local user can
     * connect to it. Only a path-named one is guarded by its directory's and file's modes. */
    if (strncmp(ep, "ipc://@", 7) == 0)
        return 0;
    if (strncmp(ep, "ipc://", 6) == 0 || strncmp(ep, "inproc://", 9) == 0)
        return 1;
    if (strncmp(ep, "tcp://", 6) != 0)
        return 0;
    const char *h = ep + 6, *colon = strrchr(h, ':');
    /* "src;dst" only makes sense for connect; "host:port" has at least one colon. */
    if (!colon || strchr(h, ';'))
        return 0;
    char host[64];
    size_t n = (size_t)(colon - h);
    if (n == 0 || n >= sizeof host)
        return 0;
    memcpy(host, h, n);
    host[n] = '\0';
    if (host[0] == '[') {
        if (n < 3 || host[n - 1] != ']')
            return 0;
        memmove(host, host + 1, n - 2);
        host[n - 2] = '\0';
    }
    if (strcasecmp(host, "localhost") == 0)
        return localhost_loopback(host);
    struct in_addr a4;
    if (inet_pton(AF_INET, host, &a4) == 1)
        return (ntohl(a4.s_addr) >> 24) == 127;
    struct in6_addr a6;
    if (inet_pton(AF_INET6, host, &a6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&a6) || (IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127);
    return 0; /* a wildcard, an interface name, a host name, another address */
}

/* Calls fn(user, option, endpoint) for every endpoint the options make the collector bind. */
static int auth_each_endpoint(const mw_collector_options_t *o,
                              int (*fn)(void *, const char *, const char *), void *user)
{
    if (!o->replay)
        for (unsigned i = 0; i < o->n_listen; i++)
            MW_TRY(fn(user, "--listen", o->listen[i]));
    const struct {
        const char *name, *ep;
    } more[] = {{"--publish", o->publish},
                {"--history", o->history},
                {"--steer", o->steer},
                {"--control", o->control}};
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
        if (more[i].ep)
            MW_TRY(fn(user, more[i].name, more[i].ep));
    return 0;
}

typedef struct {
    char *err;
    size_t errlen;
} check_ctx_t;

int mw__endpoint_check(const char *ep, char *err, size_t errlen)
{
    const char *sep = strstr(ep, "://");
    if (!sep || sep == ep) {
        snprintf(err, errlen,
                 "%.60s is not an endpoint: TRANSPORT://ADDRESS, e.g. tcp://HOST:PORT or "
                 "ipc://PATH",
                 ep);
        return -1;
    }
    size_t tlen = (size_t)(sep - ep);
    if (!((tlen == 3 && strncmp(ep, "tcp", 3) == 0) || (tlen == 3 && strncmp(ep, "ipc", 3) == 0) ||
          (tlen == 6 && strncmp(ep, "inproc", 6) == 0))) {
        snprintf(err, errlen,
                 "%.60s: unknown transport '%.*s://': the collector binds tcp://HOST:PORT, "
                 "ipc://PATH or inproc://NAME",
                 ep, (int)(tlen > 16 ? 16 : tlen), ep);
        return -1;
    }
    if (strncmp(ep, "tcp://", 6) != 0)
        return 0;
    /* libzmq reads the port with strtoul and keeps 16 bits of it: port 99999 would bind port
     * 34463 while every message names 99999. Refused here with the range. */
    const char *colon = strrchr(ep + 6, ':');
    if (!colon || colon == ep + 6 || strchr(ep + 6, ';')) {
        snprintf(err, errlen, "%.60s: a tcp endpoint is tcp://HOST:PORT (HOST may be *)", ep);
        return -1;
    }
    const char *port = colon + 1;
    if (strcmp(port, "*") == 0)
        return 0;
    unsigned long v = 0;
    size_t n = 0;
    for (; port[n] >= '0' && port[n] <= '9' && n < 6; n++)
        v = v * 10 + (unsigned long)(port[n] - '0');
    if (n == 0 || port[n] != '\0' || v > 65535) {
        snprintf(err, errlen,
                 "%.60s: the port must be a number from 1 to 65535, or * (or 0) for any free "
                 "port",
                 ep);
        return -1;
    }
    return 0;
}

static int check_syntax(void *user, const char *opt, const char *ep)
{
    check_ctx_t *x = user;
    char why[200];
    if (mw__endpoint_check(ep, why, sizeof why) == 0)
        return 0;
    snprintf(x->err, x->errlen, "%s %s", opt, why);
    return -1;
}

static int check_local(void *user, const char *opt, const char *ep)
{
    check_ctx_t *x = user;
    if (mw__endpoint_local(ep))
        return 0;
    /* main() has 256 bytes for this, " (try --help)" included. */
    snprintf(x->err, x->errlen,
             "%s %.60s is not local (ipc://PATH or loopback): use CURVE (--curve-secret FILE "
             "--curve-clients FILE_OR_DIR, docs/security.md) or --allow-insecure",
             opt, ep);
    return -1;
}

static int count_client(void *user, const uint8_t *key, const char *source, char *err,
                        size_t errlen)
{
    (void)key, (void)source, (void)err, (void)errlen;
    (*(size_t *)user)++;
    return 0;
}

int mw__auth_check(const mw_collector_options_t *o, char *err, size_t errlen)
{
    /* First what is not an endpoint at all, so that its message says so rather than "not
     * local". */
    check_ctx_t syn = {err, errlen};
    MW_TRY(auth_each_endpoint(o, check_syntax, &syn));
    if (o->curve_clients && !o->curve_secret) {
        snprintf(err, errlen,
                 "--curve-clients needs --curve-secret FILE (the collector's key "
                 "pair, made by mpiwatch keygen)");
        return -1;
    }
    if (o->curve_secret && !o->curve_clients) {
        snprintf(err, errlen,
                 "--curve-secret needs --curve-clients FILE_OR_DIR: the public keys of the ranks "
                 "and tools allowed to connect (without it any key would do)");
        return -1;
    }
    if (o->curve_secret && o->replay) {
        snprintf(err, errlen,
                 "--replay does not serve CURVE: bind --publish and --history to "
                 "local endpoints instead of giving --curve-secret");
        return -1;
    }
    if (o->curve_secret) {
        /* Loaded here only to refuse a bad file before anything starts (exit status 2); the
         * server loads them again when it binds. */
        mw_keypair_t kp;
        size_t n = 0;
        if (mw_keyfile_read_pair(o->curve_secret, &kp, err, errlen) != 0)
            return -1;
        mw_keyfile_wipe(&kp, sizeof kp);
        return mw_keyfile_read_clients(o->curve_clients, count_client, &n, err, errlen);
    }
    if (o->allow_insecure)
        return 0;
    check_ctx_t x = {err, errlen};
    return auth_each_endpoint(o, check_local, &x);
}

/* ---- the handler -------------------------------------------------------------------------- */

static int key_cmp(const void *a, const void *b)
{
    return memcmp(a, b, MW_CURVE_KEY_BYTES);
}

static int add_client(void *user, const uint8_t *key, const char *source, char *err, size_t errlen)
{
    mw_auth_t *a = user;
    if (a->n_clients == a->cap_clients) {
        size_t cap = a->cap_clients ? 2 * a->cap_clients : 64;
        void *p = cap <= AUTH_MAX_CLIENTS ? realloc(a->clients, cap * MW_CURVE_KEY_BYTES) : NULL;
        if (!p) {
            snprintf(err, errlen, "%s: too many client keys (at most %u)", source,
                     AUTH_MAX_CLIENTS);
            return -1;
        }
        a->clients = p;
        a->cap_clients = cap;
    }
    memcpy(a->clients[a->n_clients++], key, MW_CURVE_KEY_BYTES);
    return 0;
}

static int auth_setopt(void *sock, int opt, const void *val, size_t len, const char *name)
{
    if (zmq_setsockopt(sock, opt, val, len) != 0) {
        MW_LOG(MW_LOG_ERROR, "zmq_setsockopt(%s): %s", name, zmq_strerror(zmq_errno()));
        return -1;
    }
    return 0;
}

mw_auth_t *mw__auth_open(void *zmq_ctx, const mw_collector_options_t *opt)
{
    if (!opt->curve_secret)
        return NULL;
    mw_auth_t *a = calloc(1, sizeof *a);
    char err[512];
    if (!a) {
        MW_LOG(MW_LOG_ERROR, "CURVE: out of memory");
        return NULL;
    }
    a->ctx = zmq_ctx;
    if (mw_keyfile_read_pair(opt->curve_secret, &a->keys, err, sizeof err) != 0 ||
        mw_keyfile_read_clients(opt->curve_clients, add_client, a, err, sizeof err) != 0) {
        MW_LOG(MW_LOG_ERROR, "CURVE: %s", err);
        goto fail;
    }
    qsort(a->clients, a->n_clients, MW_CURVE_KEY_BYTES, key_cmp);
    int zero = 0;
    if (!(a->zap = zmq_socket(zmq_ctx, ZMQ_REP))) {
        MW_LOG(MW_LOG_ERROR, "zmq_socket(ZAP handler): %s", zmq_strerror(zmq_errno()));
        goto fail;
    }
    if (auth_setopt(a->zap, ZMQ_LINGER, &zero, sizeof zero, "ZMQ_LINGER") < 0)
        goto fail;
    if (zmq_bind(a->zap, AUTH_ZAP_ENDPOINT) != 0) {
        MW_LOG(MW_LOG_ERROR, "cannot bind the ZAP handler on %s: %s", AUTH_ZAP_ENDPOINT,
               zmq_strerror(zmq_errno()));
        goto fail;
    }
    char z85[MW_CURVE_Z85_CHARS + 1];
    zmq_z85_encode(z85, a->keys.public_key, MW_CURVE_KEY_BYTES);
    MW_LOG(MW_LOG_INFO, "CURVE on: server key %s, %zu authorized client key%s", z85, a->n_clients,
           a->n_clients == 1 ? "" : "s");
    auth_active = a;
    return a;
fail:
    mw__auth_close(a);
    return NULL;
}

void mw__auth_close(mw_auth_t *a)
{
    if (!a)
        return;
    if (auth_active == a)
        auth_active = NULL;
    for (int i = 0; i < a->n_sock; i++)
        if (a->sock[i].monitor && zmq_close(a->sock[i].monitor) != 0)
            MW_LOG(MW_LOG_ERROR, "zmq_close: %s", zmq_strerror(zmq_errno()));
    if (a->zap && zmq_close(a->zap) != 0)
        MW_LOG(MW_LOG_ERROR, "zmq_close: %s", zmq_strerror(zmq_errno()));
    mw_keyfile_wipe(&a->keys, sizeof a->keys);
    free(a->clients);
    free(a);
}

/* Watches a CURVE server's failed handshakes through a PAIR socket of our own. */
static void *auth_monitor(void *ctx, void *sock, int index)
{
    char ep[64];
    snprintf(ep, sizeof ep, "inproc://mpiwatch-auth-monitor-%d", index);
    if (zmq_socket_monitor(sock, ep,
                           ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                               ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) != 0) {
        MW_LOG(MW_LOG_ERROR, "zmq_socket_monitor: %s", zmq_strerror(zmq_errno()));
        return NULL;
    }
    void *m = zmq_socket(ctx, ZMQ_PAIR);
    int zero = 0;
    if (!m) {
        MW_LOG(MW_LOG_ERROR, "zmq_socket(monitor): %s", zmq_strerror(zmq_errno()));
        return NULL;
    }
    if (auth_setopt(m, ZMQ_LINGER, &zero, sizeof zero, "ZMQ_LINGER") < 0) {
        zmq_close(m);
        return NULL;
    }
    if (zmq_connect(m, ep) != 0) {
        MW_LOG(MW_LOG_ERROR, "cannot connect the monitor %s: %s", ep, zmq_strerror(zmq_errno()));
        zmq_close(m);
        return NULL;
    }
    return m;
}

int mw__auth_socket(void *zmq_ctx, void *sock, const char *what, const char *const *eps,
                    unsigned n_eps)
{
    mw_auth_t *a = auth_active && auth_active->ctx == zmq_ctx ? auth_active : NULL;
    if (!a) {
        /* As before CURVE: the domain alone makes libzmq refuse unversioned ZMTP/1.0 peers, so
         * stray bytes on a TCP port are not parsed as messages (no handler: NULL peers pass). */
        MW_TRY(auth_setopt(sock, ZMQ_ZAP_DOMAIN, "mpiwatch", 8, "ZMQ_ZAP_DOMAIN"));
        for (unsigned i = 0; i < n_eps; i++)
            if (!mw__endpoint_local(eps[i]))
                MW_LOG(MW_LOG_WARN,
                       "the %s on %s is not local and has no authentication (--allow-insecure): "
                       "anyone who reaches it can connect",
                       what, eps[i]);
        return 0;
    }
    if (a->n_sock == AUTH_MAX_SOCKETS) {
        MW_LOG(MW_LOG_ERROR, "CURVE: more than %d sockets", AUTH_MAX_SOCKETS);
        return -1;
    }
    int index = a->n_sock, one = 1;
    auth_socket_t *s = &a->sock[index];
    snprintf(s->what, sizeof s->what, "%s", what);
    size_t pos = 0;
    for (unsigned i = 0; i < n_eps && pos < sizeof s->eps; i++)
        pos += (size_t)snprintf(s->eps + pos, sizeof s->eps - pos, "%s%s", i ? "," : "", eps[i]);
    char domain[32];
    int dlen = snprintf(domain, sizeof domain, "mpiwatch.%d", index);
    MW_TRY(auth_setopt(sock, ZMQ_CURVE_SERVER, &one, sizeof one, "ZMQ_CURVE_SERVER"));
    MW_TRY(auth_setopt(sock, ZMQ_CURVE_SECRETKEY, a->keys.secret_key, MW_CURVE_KEY_BYTES,
                       "ZMQ_CURVE_SECRETKEY"));
    MW_TRY(auth_setopt(sock, ZMQ_ZAP_DOMAIN, domain, (size_t)dlen, "ZMQ_ZAP_DOMAIN"));
    if (zmq_setsockopt(sock, ZMQ_ZAP_ENFORCE_DOMAIN, &one, sizeof one) != 0)
        MW_LOG(MW_LOG_DEBUG, "ZMQ_ZAP_ENFORCE_DOMAIN: %s (the handler is bound first anyway)",
               zmq_strerror(zmq_errno()));
    if (!(s->monitor = auth_monitor(a->ctx, sock, index)))
        return -1;
    a->n_sock++;
    return 0;
}

int mw__auth_pollitems(mw_auth_t *a, zmq_pollitem_t *items, int max)
{
    int n = 0;
    if (!a)
        return 0;
    if (n < max)
        items[n++] = (zmq_pollitem_t){.socket = a->zap, .events = ZMQ_POLLIN};
    for (int i = 0; i < a->n_sock && n < max; i++)
        items[n++] = (zmq_pollitem_t){.socket = a->sock[i].monitor, .events = ZMQ_POLLIN};
    return n;
}

/* ---- counting and logging ----------------------------------------------------------------- */

static void auth_refuse(mw_collector_t *c, mw_auth_reason_t reason, auth_socket_t *s,
                        const char *peer, const char *detail)
{
    mw_auth_t *a = c->auth;
    c->stats.auth_refused[reason]++;
    uint64_t now = mw__collector_mono_ns(c);
    auth_socket_t *r = s ? s : &a->unknown;
    if (r->last_log_ns[reason] && now - r->last_log_ns[reason] < AUTH_LOG_EVERY_NS) {
        r->unlogged[reason]++;
        return;
    }
    char more[64] = "";
    if (r->unlogged[reason])
        snprintf(more, sizeof more, " (%llu more like it since the last line)",
                 (unsigned long long)r->unlogged[reason]);
    MW_LOG(MW_LOG_WARN, "refused a peer of the %s (%s)%s%s: %s: %s%s", s ? s->what : "?",
           s ? s->eps : "?", peer && peer[0] ? " from " : "", peer ? peer : "",
           mw__auth_reason_name(reason), detail, more);
    r->last_log_ns[reason] = now;
    r->unlogged[reason] = 0;
}

/* ---- ZAP (RFC 27) ------------------------------------------------------------------------- */

/* Copies frame i into buf as a string (truncated, NUL-terminated). */
static const char *frame_str(zmq_msg_t *f, char *buf, size_t len)
{
    size_t n = zmq_msg_size(f);
    if (n >= len)
        n = len - 1;
    memcpy(buf, zmq_msg_data(f), n);
    buf[n] = '\0';
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)buf[i] < 0x20 || (unsigned char)buf[i] > 0x7e)
            buf[i] = '?'; /* it goes into a log line */
    return buf;
}

static int frame_is(zmq_msg_t *f, const char *s)
{
    size_t n = strlen(s);
    return zmq_msg_size(f) == n && memcmp(zmq_msg_data(f), s, n) == 0;
}

static int zap_send(void *zap, const void *data, size_t len, int more)
{
    if (zmq_send(zap, data, len, more ? ZMQ_SNDMORE : 0) < 0) {
        MW_LOG(MW_LOG_ERROR, "ZAP reply: %s", zmq_strerror(zmq_errno()));
        return -1;
    }
    return 0;
}

/* Reads one request (all its frames) and answers it. Returns 1 when one was handled, 0 when
 * none was waiting, -1 on a socket error. */
static int zap_one(mw_collector_t *c)
{
    mw_auth_t *a = c->auth;
    zmq_msg_t f[AUTH_MAX_FRAMES];
    int n = 0, more = 1, extra = 0;
    while (more) {
        zmq_msg_t scratch, *m = n < AUTH_MAX_FRAMES ? &f[n] : &scratch;
        zmq_msg_init(m);
        if (zmq_msg_recv(m, a->zap, n == 0 && !extra ? ZMQ_DONTWAIT : 0) < 0) {
            int e = zmq_errno();
            zmq_msg_close(m);
            for (int i = 0; i < n; i++)
                zmq_msg_close(&f[i]);
            if (n == 0 && (e == EAGAIN || e == EINTR))
                return 0;
            MW_LOG(MW_LOG_ERROR, "ZAP request: %s", zmq_strerror(e));
            return -1;
        }
        more = zmq_msg_more(m);
        if (m == &scratch) { /* frames beyond a valid request's are only drained */
            zmq_msg_close(m);
            extra = 1;
        } else {
            n++;
        }
    }
    /* Frames: version, request id, domain, address, routing id, mechanism, credentials. */
    char domain[32], address[64], mech[16], z85[MW_CURVE_Z85_CHARS + 1] = "";
    auth_socket_t *s = NULL;
    int ok = 0, well_formed = !extra && n >= 6 && frame_is(&f[0], "1.0");
    mw_auth_reason_t reason = MW_AUTH_HANDSHAKE;
    const char *why = "malformed ZAP request";
    if (well_formed) {
        frame_str(&f[2], domain, sizeof domain);
        frame_str(&f[3], address, sizeof address);
        frame_str(&f[5], mech, sizeof mech);
        int idx = -1;
        if (strncmp(domain, "mpiwatch.", 9) == 0 && domain[9] >= '0' && domain[9] <= '9' &&
            domain[10] == '\0')
            idx = domain[9] - '0';
        s = idx >= 0 && idx < a->n_sock ? &a->sock[idx] : NULL;
        if (!s) {
            why = "ZAP request for an unknown domain";
        } else if (!frame_is(&f[5], "CURVE")) {
            reason = MW_AUTH_MECHANISM;
            why = "not the CURVE mechanism";
        } else if (n != 7 || zmq_msg_size(&f[6]) != MW_CURVE_KEY_BYTES) {
            why = "CURVE credentials of the wrong size";
        } else {
            const void *key = zmq_msg_data(&f[6]);
            zmq_z85_encode(z85, key, MW_CURVE_KEY_BYTES);
            ok = a->n_clients &&
                 bsearch(key, a->clients, a->n_clients, MW_CURVE_KEY_BYTES, key_cmp) != NULL;
            reason = MW_AUTH_UNAUTHORIZED;
            why = "client key not authorized";
        }
    }
    /* The reply echoes the request id (an empty one when the request had none). */
    int rc = zap_send(a->zap, "1.0", 3, 1);
    if (rc == 0)
        rc = n >= 2 ? zap_send(a->zap, zmq_msg_data(&f[1]), zmq_msg_size(&f[1]), 1)
                    : zap_send(a->zap, "", 0, 1);
    if (rc == 0)
        rc = zap_send(a->zap, ok ? "200" : "400", 3, 1);
    if (rc == 0)
        rc = zap_send(a->zap, ok ? "OK" : why, strlen(ok ? "OK" : why), 1);
    if (rc == 0)
        rc = zap_send(a->zap, z85, ok ? strlen(z85) : 0, 1); /* user id: the client's key */
    if (rc == 0)
        rc = zap_send(a->zap, "", 0, 0);
    for (int i = 0; i < n; i++)
        zmq_msg_close(&f[i]);
    if (!ok) {
        char detail[128];
        snprintf(detail, sizeof detail, "%s%s%s", why, z85[0] ? " " : "", z85);
        auth_refuse(c, reason, s, well_formed ? address : NULL, detail);
    }
    return rc < 0 ? -1 : 1;
}

/* ---- monitors ----------------------------------------------------------------------------- */

/* Reads one event of socket i's monitor. Returns 1 when one was handled, 0 when none. */
static int monitor_one(mw_collector_t *c, int i)
{
    auth_socket_t *s = &c->auth->sock[i];
    uint16_t event;
    uint32_t value;
    if (!mw_zmq_monitor_event(s->monitor, &event, &value))
        return 0;
    if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) {
        if (value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH)
            auth_refuse(c, MW_AUTH_MECHANISM, s, NULL,
                        "the peer does not use CURVE (NULL or PLAIN mechanism)");
        else if (value == ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC)
            auth_refuse(c, MW_AUTH_CRYPTO, s, NULL,
                        "CURVE handshake does not decrypt (the client has another server key)");
        else {
            char d[64];
            snprintf(d, sizeof d, "handshake failed (ZMTP protocol error 0x%x)", value);
            auth_refuse(c, MW_AUTH_HANDSHAKE, s, NULL, d);
        }
    } else if (event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) {
        /* Typically the peer hung up: a client without CURVE does so when it sees the
         * server's greeting before the server has read its own (then it is not "mechanism"). */
        char d[128];
        snprintf(d, sizeof d, "the peer hung up or failed during the handshake (%s)",
                 zmq_strerror((int)value));
        auth_refuse(c, MW_AUTH_HANDSHAKE, s, NULL, d);
    }
    return 1;
}

void mw__auth_serve(mw_collector_t *c)
{
    mw_auth_t *a = c->auth;
    if (!a)
        return;
    for (int k = 0; k < AUTH_BATCH && zap_one(c) > 0; k++)
        ;
    for (int i = 0; i < a->n_sock; i++)
        for (int k = 0; k < AUTH_BATCH && monitor_one(c, i) > 0; k++)
            ;
}
