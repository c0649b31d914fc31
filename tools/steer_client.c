/* steer_client.c: mpiwatch-steer, sends one steering request to a collector's --control endpoint.
 *
 * DESIGN: a REQ socket, one SteerRequest, one SteerReply awaited for at most --timeout-ms.
 * The key, value and ranks are checked here first (proto/mw_steer_request.c, shared with the
 * viewer and the collector, which checks again), so a typo gets a clear message without a
 * collector. With CURVE keys (--curve-server/--curve-key or MPIWATCH_CURVE_SERVER/
 * MPIWATCH_CURVE_KEY, docs/security.md) the socket is a CURVE client, and a monitor ends the
 * wait as soon as the collector refuses the handshake. Exit status: 0 when
 * the collector published the message, 1 when it refused it or the connection (the reason on
 * stderr), 2 for a usage error (an unusable key file included) or a request refused before
 * sending, 3 when no reply came.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "mw_keyfile.h"
#include "mw_zmq_monitor.h"
#include "mw_steer_request.h"
#include "mw_version.h"

static void usage(FILE *out)
{
    fprintf(out, "Usage: mpiwatch-steer [--ranks LIST] [--timeout-ms N] [--curve-server FILE\n"
                 "                      --curve-key FILE] ENDPOINT KEY=VALUE\n"
                 "Send KEY=VALUE to the ranks of the job behind the collector's --control\n"
                 "ENDPOINT. LIST: ranks and ranges, e.g. 0-3,7 (default: all ranks).\n"
                 "KEY: 1..64 of A-Z a-z 0-9 . _ -; VALUE: at most 1024 bytes of text.\n"
                 "With CURVE (docs/security.md): the collector's .pub file and this client's\n"
                 ".key file (default: $MPIWATCH_CURVE_SERVER and $MPIWATCH_CURVE_KEY).\n");
    fputs("\n  -h, --help         print this help and exit\n"
          "      --version      print the version and exit\n",
          out);
}

int main(int argc, char **argv)
{
    static mw_steer_request_t rq;
    long timeout_ms = 5000;
    const char *pos[2];
    const char *curve_server = NULL, *curve_key = NULL;
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--version") == 0) {
            printf("mpiwatch-steer %s\n", MW_VERSION_FULL);
            return 0;
        } else if (strcmp(argv[i], "--ranks") == 0 && i + 1 < argc) {
            if (mw_steer_parse_ranks(argv[++i], rq.ranks, &rq.n_ranks, MW_STEER_REQ_RANKS_MAX) <
                0) {
                fprintf(stderr, "mpiwatch-steer: bad --ranks '%s' (e.g. 0-3,7)\n", argv[i]);
                return 2;
            }
        } else if (strcmp(argv[i], "--timeout-ms") == 0 && i + 1 < argc) {
            char *end;
            timeout_ms = strtol(argv[++i], &end, 10);
            if (*end || timeout_ms <= 0) {
                fprintf(stderr, "mpiwatch-steer: bad --timeout-ms '%s'\n", argv[i]);
                return 2;
            }
        } else if (strcmp(argv[i], "--curve-server") == 0 && i + 1 < argc) {
            curve_server = argv[++i];
        } else if (strcmp(argv[i], "--curve-key") == 0 && i + 1 < argc) {
            curve_key = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1] == '-') {
            fprintf(stderr, "mpiwatch-steer: unknown option %s\n", argv[i]);
            usage(stderr);
            return 2;
        } else if (npos < 2) {
            pos[npos++] = argv[i];
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (npos != 2) {
        usage(stderr);
        return 2;
    }
    char err[600];
    if (mw_steer_request_set(&rq, pos[1], err, sizeof err) < 0) {
        fprintf(stderr, "mpiwatch-steer: %s\n", err);
        return 2;
    }
    static mw_curve_client_t curve;
    int use_curve = mw_curve_client_load(curve_server, curve_key, &curve, err, sizeof err);
    if (use_curve < 0) {
        fprintf(stderr, "mpiwatch-steer: %s\n", err);
        return 2;
    }
    uint8_t *buf = NULL;
    size_t len = mw_steer_request_pack(&rq, &buf);
    if (!buf)
        return 3;

    int rc = 3;
    void *mon = NULL;
    void *ctx = zmq_ctx_new();
    void *sock = ctx ? zmq_socket(ctx, ZMQ_REQ) : NULL;
    int zero = 0;
    if (sock && use_curve > 0 && mw_curve_client_apply(sock, &curve, err, sizeof err) != 0) {
        fprintf(stderr, "mpiwatch-steer: %s\n", err);
        goto out;
    }
    mw_keyfile_wipe(&curve, sizeof curve);
    /* A refused handshake ends the wait at once, with the reason (a client without CURVE
     * would otherwise be refused again every 100 ms until the timeout). */
    mon = sock ? mw_curve_monitor_open(ctx, sock, err, sizeof err) : NULL;
    if (sock && !mon) {
        fprintf(stderr, "mpiwatch-steer: %s\n", err);
        goto out;
    }
    if (!sock || zmq_setsockopt(sock, ZMQ_LINGER, &zero, sizeof zero) != 0 ||
        zmq_connect(sock, pos[0]) != 0) {
        fprintf(stderr, "mpiwatch-steer: cannot connect to %s: %s\n", pos[0],
                zmq_strerror(zmq_errno()));
        goto out;
    }
    if (zmq_send(sock, buf, len, 0) < 0) {
        fprintf(stderr, "mpiwatch-steer: send: %s\n", zmq_strerror(zmq_errno()));
        goto out;
    }
    zmq_pollitem_t item[2] = {{.socket = sock, .events = ZMQ_POLLIN},
                              {.socket = mon, .events = ZMQ_POLLIN}};
    for (;;) {
        if (zmq_poll(item, 2, timeout_ms) <= 0) {
            fprintf(stderr, "mpiwatch-steer: no reply from %s within %ld ms\n", pos[0], timeout_ms);
            goto out;
        }
        if (item[0].revents & ZMQ_POLLIN)
            break;
        if (mw_curve_monitor_refused(mon, err, sizeof err)) {
            fprintf(stderr, "mpiwatch-steer: rejected: %s refused the connection: %s\n", pos[0],
                    err);
            rc = 1;
            goto out;
        }
    }
    uint8_t reply[2048];
    int n = zmq_recv(sock, reply, sizeof reply, 0);
    int ok = 0;
    uint64_t seq = 0;
    if (n < 0 || (size_t)n > sizeof reply ||
        mw_steer_reply_parse(reply, (size_t)n, &ok, &seq, err, sizeof err) < 0) {
        fprintf(stderr, "mpiwatch-steer: bad reply from %s\n", pos[0]);
        goto out;
    }
    if (ok) {
        printf("sent %s (seq %llu)\n", pos[1], (unsigned long long)seq);
        rc = 0;
    } else {
        fprintf(stderr, "mpiwatch-steer: rejected: %s\n", err);
        rc = 1;
    }
out:
    if (mon)
        zmq_close(mon);
    if (sock)
        zmq_close(sock);
    if (ctx)
        zmq_ctx_term(ctx);
    free(buf);
    return rc;
}
