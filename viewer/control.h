/* control.h: the viewer's steering client, on the collector's --control endpoint.
 *
 * DESIGN: one DEALER socket and at most one request outstanding, so that a reply needs no id:
 * the collector's ROUTER answers a DEALER's requests in order. Sending and receiving never
 * wait (ZMQ_DONTWAIT); mw_control_poll(), called once per frame, takes the reply or, after the
 * timeout, gives up. A socket whose request was given up is closed and a new one connected, so
 * a late reply can never be taken for the answer to the next request. The request is parsed
 * and checked by the code mpiwatch-steer uses (proto/mw_steer_request.c), so a line the viewer
 * accepts is one the command line accepts, and refused with the same words. No SDL, no GL:
 * the unit tests drive it against a ROUTER of their own.
 */
#ifndef MW_VIEWER_CONTROL_H
#define MW_VIEWER_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#define MW_CONTROL_TIMEOUT_MS 5000 /* a request unanswered this long is given up */

typedef enum {
    MW_CONTROL_IDLE,     /* nothing sent yet */
    MW_CONTROL_WAITING,  /* sent, no reply yet */
    MW_CONTROL_SENT,     /* the collector published it (seq) */
    MW_CONTROL_REJECTED, /* the collector refused it (text: its reason) */
    MW_CONTROL_INVALID,  /* refused before sending: a bad line, or still waiting */
    MW_CONTROL_NO_REPLY  /* no reply within the timeout, or a socket error */
} mw_control_state_t;

typedef struct {
    mw_control_state_t state;
    uint64_t id;       /* requests sent so far, this one included */
    uint64_t seq;      /* MW_CONTROL_SENT: the Steer's sequence number */
    uint64_t at_ns;    /* when the state was reached (the caller's clock) */
    char request[200]; /* "rebalance=1 ranks 0-3" */
    char text[400];    /* "sent rebalance=1 ranks 0-3 (seq 4)", "rejected: ...", "no reply ..." */
} mw_control_result_t;

typedef struct mw_control mw_control_t;

/* Connects to the collector's --control endpoint (nothing is sent yet). timeout_ms 0: the
 * default. NULL with a message in err. */
mw_control_t *mw_control_open(const char *endpoint, int timeout_ms, char *err, size_t len);
void mw_control_free(mw_control_t *c);
/* Parses a line (mw_steer_request_parse_line with `sep`: ' ' for the prompt, ':' for
 * --steer) and sends it. Returns 0 when sent (the result is then MW_CONTROL_WAITING), -1 when
 * refused before sending (the result says why). now_ns: CLOCK_MONOTONIC. */
int mw_control_send(mw_control_t *c, const char *line, char sep, uint64_t now_ns);
/* One frame's work: takes a reply, or gives up after the timeout. Returns 1 when the result
 * changed, 0 when not, never blocks. */
int mw_control_poll(mw_control_t *c, uint64_t now_ns);
/* Waits at most timeout_ms for a reply to arrive (headless use only). */
void mw_control_wait(mw_control_t *c, int timeout_ms);
int mw_control_busy(const mw_control_t *c);
const mw_control_result_t *mw_control_result(const mw_control_t *c);
const char *mw_control_endpoint(const mw_control_t *c);

#endif
