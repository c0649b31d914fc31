/* auth.h: security of the collector's sockets (auth.c; docs/security.md):
 * which endpoints are local, CURVE on the sockets, the ZAP handler, refusals by reason. */
#ifndef MW_COLLECTOR_AUTH_H
#define MW_COLLECTOR_AUTH_H

#include <stddef.h>
#include <zmq.h>
#include "clock.h"
#include "options.h"

#define MW_AUTH_REASONS(X)                                                                         \
    X(UNAUTHORIZED, "unauthorized") /* CURVE client whose key is not authorized (ZAP) */           \
    X(MECHANISM, "mechanism")       /* a peer without CURVE (NULL or PLAIN) */                     \
    X(CRYPTO, "crypto")             /* CURVE handshake that does not decrypt (wrong server key) */ \
    X(HANDSHAKE, "handshake")       /* any other failed handshake, a peer hanging up in it */

typedef enum {
#define MW_X(id, name) MW_AUTH_##id,
    MW_AUTH_REASONS(MW_X)
#undef MW_X
        MW_AUTH_COUNT
} mw_auth_reason_t;

const char *mw__auth_reason_name(mw_auth_reason_t reason);

struct mw_collector;

typedef struct mw_auth mw_auth_t;

/* 1 when a ZeroMQ endpoint is reachable from this host only: ipc://PATH, inproc://, or tcp:// on
 * 127.0.0.0/8, ::1 (also as ::ffff:127.x.x.x), or localhost when it resolves to loopback
 * addresses only. An abstract ipc://@name (no permissions: any local user connects), a
 * wildcard (*, 0.0.0.0, ::), an interface name, any other address or transport is not local
 * (0). */
int mw__endpoint_local(const char *ep);
/* Whether `ep` is an endpoint the collector can bind: a known transport (tcp, ipc, inproc)
 * and, for tcp, HOST:PORT with a port from 1 to 65535, or * or 0 for any free port. Returns
 * 0, or -1 with the reason in err (the endpoint named, no option). */
int mw__endpoint_check(const char *ep, char *err, size_t errlen);
/* The start-up policy (called by mw_collector_options_check): --curve-secret and --curve-clients go
 * together and their files must load; without them every endpoint the collector binds must
 * be local unless --allow-insecure. Returns 0, or -1 with a message naming the endpoint or
 * file and the fix. */
int mw__auth_check(const mw_collector_options_t *o, char *err, size_t errlen);
/* With --curve-secret: loads the keys and binds the ZAP handler in `zmq_ctx`, before any
 * socket is bound. Returns NULL with a logged message. Without it: returns NULL, no error. */
mw_auth_t *mw__auth_open(void *zmq_ctx, const mw_collector_options_t *opt);
/* Closes the handler and the monitors (after every served socket is closed). */
void mw__auth_close(mw_auth_t *a);
/* Sets up a socket the collector binds, before zmq_bind: with CURVE on in its context a CURVE
 * server whose handshakes go to the ZAP handler and are watched for failures; otherwise the
 * ZAP domain that refuses ZMTP/1.0 peers, and a warning for each endpoint that is not local
 * (--allow-insecure). `what` names the socket in messages. Returns 0, or -1 logged. */
int mw__auth_socket(void *zmq_ctx, void *sock, const char *what, const char *const *eps,
                    unsigned n_eps);
/* Adds the handler's and monitors' sockets to a poll set; returns how many (at most max). */
int mw__auth_pollitems(mw_auth_t *a, zmq_pollitem_t *items, int max);
/* Answers pending ZAP requests and reads the monitors without blocking, counting refusals in
 * c->stats.auth_refused (logged, at most one line a second). */
void mw__auth_serve(struct mw_collector *c);

#endif
