/* mw_zmq_monitor.c: socket monitor events read without blocking (mw_zmq_monitor.h).
 *
 * DESIGN: a monitor event is two frames; both are always consumed, so that the next read starts
 * at an event's first frame. A first frame shorter than 6 bytes (which libzmq never sends)
 * reads as event 0, value 0: the caller ignores it instead of reading past the frame.
 */
#include "mw_zmq_monitor.h"

#include <stdio.h>
#include <string.h>
#include <zmq.h>

void *mw_curve_monitor_open(void *ctx, void *sock, char *err, size_t errlen)
{
    char ep[64];
    snprintf(ep, sizeof ep, "inproc://mpiwatch-client-monitor-%p", sock);
    void *m = NULL;
    int zero = 0;
    if (zmq_socket_monitor(sock, ep,
                           ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                               ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) != 0 ||
        !(m = zmq_socket(ctx, ZMQ_PAIR)) ||
        zmq_setsockopt(m, ZMQ_LINGER, &zero, sizeof zero) != 0 || zmq_connect(m, ep) != 0) {
        snprintf(err, errlen, "cannot watch the connection: %s", zmq_strerror(zmq_errno()));
        if (m)
            zmq_close(m);
        return NULL;
    }
    return m;
}

int mw_zmq_monitor_event(void *monitor, uint16_t *event, uint32_t *value)
{
    zmq_msg_t m;
    *event = 0;
    *value = 0;
    zmq_msg_init(&m);
    if (zmq_msg_recv(&m, monitor, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&m);
        return 0;
    }
    if (zmq_msg_size(&m) >= 6) {
        memcpy(event, zmq_msg_data(&m), 2);
        memcpy(value, (const char *)zmq_msg_data(&m) + 2, 4);
    }
    int more = zmq_msg_more(&m);
    zmq_msg_close(&m);
    while (more) { /* the endpoint frame: the socket's own address, not the peer's */
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, monitor, 0) < 0) {
            zmq_msg_close(&m);
            break;
        }
        more = zmq_msg_more(&m);
        zmq_msg_close(&m);
    }
    return 1;
}

int mw_curve_monitor_refused(void *monitor, char *err, size_t errlen)
{
    uint16_t event;
    uint32_t value;
    if (!mw_zmq_monitor_event(monitor, &event, &value))
        return 0;
    if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
        snprintf(err, errlen,
                 "the server refused this client's key (ZAP status %u: not "
                 "authorized; docs/security.md)",
                 value);
    else if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL &&
             value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH)
        snprintf(err, errlen,
                 "security mismatch: one side uses CURVE and the other does not "
                 "(MPIWATCH_CURVE_SERVER, MPIWATCH_CURVE_KEY; docs/security.md)");
    else if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL)
        snprintf(err, errlen, "handshake failed (ZMTP protocol error 0x%x)", value);
    else if (event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)
        snprintf(err, errlen, "handshake failed (%s)", zmq_strerror((int)value));
    else
        return 0;
    return 1;
}
