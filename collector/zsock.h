/* zsock.h: socket helpers shared by the collector's servers (zsock.c): the
 * live feed, the history server and the steering sockets. */
#ifndef MW_COLLECTOR_ZSOCK_H
#define MW_COLLECTOR_ZSOCK_H

#include <stdint.h>
#include <zmq.h>

/* The options of a socket the collector serves clients on (feed.c, history.c, steer.c). */
typedef struct {
    int linger_ms;
    int sndhwm;
    int rcvhwm; /* ROUTER only */
    int64_t maxmsg;
} mw_serve_opts_t;
/* A PUB or ROUTER socket with those options, refusing unversioned ZMTP peers, bound to `ep`
 * (`what` names it in messages). Returns NULL with a logged message. */
void *mw__zmq_serve_socket(void *ctx, int type, const char *ep, const char *what,
                           const mw_serve_opts_t *o);

/* After zmq_bind of `asked`: reads ZMQ_LAST_ENDPOINT (the port the system chose for a
 * wildcard one), logs it with `what` and notes it for mw__zsock_write_bound. Returns 0/-1
 * (logged). */
int mw__zsock_bound(void *sock, const char *what, const char *asked);
/* Writes every endpoint noted so far to `path` ("NAME ENDPOINT" lines, NAME being `what` with
 * '-' for blanks: ingest-socket, live-feed, ...), through a temporary file renamed into place.
 * Returns 0, or -1 logged. */
int mw__zsock_write_bound(const char *path);
/* The endpoint the socket named `what` last bound ("ingest socket", "live feed", "history
 * endpoint", "steering", "steering control"), or NULL: the job registry's entry (registry.c). */
const char *mw__zsock_bound_endpoint(const char *what);

/* Takes one request from a ROUTER socket without waiting: its first three frames into `msgs`
 * (how many in *kept: the caller closes them), any further frame closed. Returns the number
 * of frames, 0 when no request is waiting, -1 on an error (logged, `what` names the socket;
 * the frames kept so far are in msgs). History and steering requests (history.c, steer.c). */
int mw__zsock_recv(void *router, zmq_msg_t msgs[3], int *kept, const char *what);
/* Whether a request of `parts` frames has the envelope of a REQ (identity, empty delimiter,
 * body: 3 frames) or a DEALER client (identity, body: 2 frames); its body is the last frame. */
int mw__zsock_envelope_ok(zmq_msg_t msgs[3], int parts);
/* Closes the `kept` frames of a request (a failure is logged). */
void mw__zsock_close(zmq_msg_t msgs[3], int kept);

#endif
