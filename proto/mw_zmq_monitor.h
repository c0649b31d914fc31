/* mw_zmq_monitor.h: reading ZeroMQ socket monitor events (zmq_socket_monitor), for every
 * program that watches its connections: the shim's sender and steering sockets, the
 * collector's authentication counters, and the clients that report a refused CURVE handshake
 * (mpiwatch-steer).
 *
 * A monitor is a PAIR socket that receives two frames per event: 6 bytes (the event number and
 * its value) and the endpoint. Nothing here blocks, prints or exits: the shim links it too.
 */
#ifndef MW_ZMQ_MONITOR_H
#define MW_ZMQ_MONITOR_H

#include <stddef.h>
#include <stdint.h>

/* Reads one event (its number and value) from a zmq_socket_monitor PAIR socket without
 * blocking, both frames. Returns 1 when one was read, 0 when none was waiting. */
int mw_zmq_monitor_event(void *monitor, uint16_t *event, uint32_t *value);

/* Watches a client socket's handshakes (before zmq_connect): a PAIR socket in `ctx` that
 * receives its handshake failures. Returns the PAIR socket to poll, or NULL with err. */
void *mw_curve_monitor_open(void *ctx, void *sock, char *err, size_t errlen);
/* Reads one event from that monitor without blocking. Returns 1 when it tells that the server
 * refused the handshake (why in err: not authorized, no CURVE on one side), 0 otherwise. */
int mw_curve_monitor_refused(void *monitor, char *err, size_t errlen);

#endif
