/* mw-zmq-client: one connection attempt to a collector socket, to test its security
 * (tests/security, docs/security.md).
 *
 *   mw-zmq-client ENDPOINT dealer|sub|push [SERVER.pub CLIENT.key]
 *
 * Connects a socket of that type with the NULL mechanism, or as a CURVE client with the two
 * key files, with reconnection off (ZMQ_RECONNECT_IVL -1), so that the collector sees exactly
 * one handshake. A DEALER then sends one frame ("hello", not a valid request) and a PUSH one
 * frame (not a valid envelope). A socket monitor tells how the handshake ended. Prints
 * "accepted" (exit 0) when the handshake succeeded, "refused: EVENT" (exit 1) when it failed,
 * "no handshake" (exit 2) when nothing happened within 3 s; exit 3 on a setup error.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <zmq.h>

#include "mw_keyfile.h"

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 5) {
        fprintf(stderr, "usage: mw-zmq-client ENDPOINT dealer|sub|push [SERVER.pub CLIENT.key]\n");
        return 3;
    }
    int type = strcmp(argv[2], "dealer") == 0 ? ZMQ_DEALER
               : strcmp(argv[2], "sub") == 0  ? ZMQ_SUB
               : strcmp(argv[2], "push") == 0 ? ZMQ_PUSH
                                              : -1;
    if (type < 0) {
        fprintf(stderr, "mw-zmq-client: unknown socket type %s\n", argv[2]);
        return 3;
    }
    char err[600];
    mw_curve_client_t keys;
    void *ctx = zmq_ctx_new();
    void *s = ctx ? zmq_socket(ctx, type) : NULL;
    int zero = 0, off = -1;
    if (!s || zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero) != 0 ||
        zmq_setsockopt(s, ZMQ_RECONNECT_IVL, &off, sizeof off) != 0 ||
        (type == ZMQ_SUB && zmq_setsockopt(s, ZMQ_SUBSCRIBE, "", 0) != 0)) {
        fprintf(stderr, "mw-zmq-client: %s\n", zmq_strerror(zmq_errno()));
        return 3;
    }
    if (argc == 5 && (mw_curve_client_load(argv[3], argv[4], &keys, err, sizeof err) != 1 ||
                      mw_curve_client_apply(s, &keys, err, sizeof err) != 0)) {
        fprintf(stderr, "mw-zmq-client: %s\n", err);
        return 3;
    }
    if (zmq_socket_monitor(s, "inproc://mon",
                           ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                               ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                               ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) != 0) {
        fprintf(stderr, "mw-zmq-client: zmq_socket_monitor: %s\n", zmq_strerror(zmq_errno()));
        return 3;
    }
    void *mon = zmq_socket(ctx, ZMQ_PAIR);
    if (!mon || zmq_connect(mon, "inproc://mon") != 0 || zmq_connect(s, argv[1]) != 0) {
        fprintf(stderr, "mw-zmq-client: connect: %s\n", zmq_strerror(zmq_errno()));
        return 3;
    }
    if (type != ZMQ_SUB)
        zmq_send(s, "hello", 5, ZMQ_DONTWAIT); /* queued until (unless) the handshake is done */
    zmq_pollitem_t item = {.socket = mon, .events = ZMQ_POLLIN};
    int rc = 2;
    if (zmq_poll(&item, 1, 3000) == 1) {
        uint8_t ev[6] = {0};
        char addr[256];
        zmq_recv(mon, ev, sizeof ev, 0);
        zmq_recv(mon, addr, sizeof addr, 0);
        uint16_t event;
        uint32_t value;
        memcpy(&event, ev, 2);
        memcpy(&value, ev + 2, 4);
        if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
            printf("accepted\n");
            rc = 0;
        } else {
            printf("refused: event 0x%x value 0x%x\n", event, value);
            rc = 1;
        }
    } else {
        printf("no handshake\n");
    }
    zmq_socket_monitor(s, NULL, 0);
    zmq_close(mon);
    zmq_close(s);
    zmq_ctx_term(ctx);
    return rc;
}
