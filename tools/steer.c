/* steer.c: mpiwatch-steer, sends one steering request to a collector's --control endpoint.
 *
 * DESIGN: a REQ socket, one SteerRequest, one SteerReply awaited for at most --timeout-ms.
 * The key, value and ranks are checked here first (the same rules as the collector's, which
 * checks again), so a typo gets a clear message without a collector. Exit status: 0 when
 * the collector published the message, 1 when it refused it (its reason on stderr), 2 for a
 * usage error or a request refused before sending, 3 when no reply came.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "mw_proto.h"

#define MAX_RANKS 4096u

static void usage(FILE *out)
{
    fprintf(out, "Usage: mpiwatch-steer [--ranks LIST] [--timeout-ms N] ENDPOINT KEY=VALUE\n"
                 "Send KEY=VALUE to the ranks of the job behind the collector's --control\n"
                 "ENDPOINT. LIST: ranks and ranges, e.g. 0-3,7 (default: all ranks).\n"
                 "KEY: 1..64 of A-Z a-z 0-9 . _ -; VALUE: at most 1024 bytes of text.\n");
}

static int parse_ranks(const char *s, uint32_t *out, size_t *n)
{
    *n = 0;
    while (*s) {
        char *end;
        errno = 0;
        unsigned long a = strtoul(s, &end, 10), b = a;
        if (end == s || errno || a > UINT32_MAX)
            return -1;
        s = end;
        if (*s == '-') {
            b = strtoul(s + 1, &end, 10);
            if (end == s + 1 || errno || b > UINT32_MAX || b < a)
                return -1;
            s = end;
        }
        for (unsigned long r = a; r <= b; r++) {
            if (*n >= MAX_RANKS)
                return -1;
            out[(*n)++] = (uint32_t)r;
        }
        if (*s == ',')
            s++;
        else if (*s)
            return -1;
    }
    return *n ? 0 : -1;
}

static const char *check_key(const char *k)
{
    size_t n = strlen(k);
    if (n == 0 || n > 64)
        return "the key must have 1 to 64 characters";
    for (size_t i = 0; i < n; i++) {
        char c = k[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return "the key may only contain A-Z a-z 0-9 . _ -";
    }
    return NULL;
}

int main(int argc, char **argv)
{
    static uint32_t ranks[MAX_RANKS];
    size_t n_ranks = 0;
    long timeout_ms = 5000;
    const char *pos[2];
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--ranks") == 0 && i + 1 < argc) {
            if (parse_ranks(argv[++i], ranks, &n_ranks) < 0) {
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
    const char *eq = strchr(pos[1], '=');
    if (!eq) {
        fprintf(stderr, "mpiwatch-steer: expected KEY=VALUE, got '%s'\n", pos[1]);
        return 2;
    }
    char key[80];
    size_t kl = (size_t)(eq - pos[1]);
    if (kl >= sizeof key) {
        fprintf(stderr, "mpiwatch-steer: bad key: the key must have 1 to 64 characters\n");
        return 2;
    }
    memcpy(key, pos[1], kl);
    key[kl] = 0;
    const char *why = check_key(key);
    if (why) {
        fprintf(stderr, "mpiwatch-steer: bad key '%s': %s\n", key, why);
        return 2;
    }
    if (strlen(eq + 1) > 1024) {
        fprintf(stderr, "mpiwatch-steer: the value is longer than 1024 bytes\n");
        return 2;
    }

    Mpiwatch__SteerRequest rq = MPIWATCH__STEER_REQUEST__INIT;
    rq.key = key;
    rq.value = (char *)(eq + 1);
    rq.ranks = ranks;
    rq.n_ranks = n_ranks;
    size_t len = mpiwatch__steer_request__get_packed_size(&rq);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf)
        return 3;
    mpiwatch__steer_request__pack(&rq, buf);

    int rc = 3;
    void *ctx = zmq_ctx_new();
    void *sock = ctx ? zmq_socket(ctx, ZMQ_REQ) : NULL;
    int zero = 0;
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
    zmq_pollitem_t item = {.socket = sock, .events = ZMQ_POLLIN};
    if (zmq_poll(&item, 1, timeout_ms) <= 0) {
        fprintf(stderr, "mpiwatch-steer: no reply from %s within %ld ms\n", pos[0], timeout_ms);
        goto out;
    }
    uint8_t reply[2048];
    int n = zmq_recv(sock, reply, sizeof reply, 0);
    Mpiwatch__SteerReply *r = n > 0 && (size_t)n <= sizeof reply
                                  ? mpiwatch__steer_reply__unpack(NULL, (size_t)n, reply)
                              : n == 0 ? mpiwatch__steer_reply__unpack(NULL, 0, reply)
                                       : NULL;
    if (!r) {
        fprintf(stderr, "mpiwatch-steer: bad reply from %s\n", pos[0]);
        goto out;
    }
    if (r->ok) {
        printf("sent %s (seq %llu)\n", pos[1], (unsigned long long)r->seq);
        rc = 0;
    } else {
        fprintf(stderr, "mpiwatch-steer: rejected: %s\n", r->error ? r->error : "");
        rc = 1;
    }
    mpiwatch__steer_reply__free_unpacked(r, NULL);
out:
    if (sock)
        zmq_close(sock);
    if (ctx)
        zmq_ctx_term(ctx);
    free(buf);
    return rc;
}
