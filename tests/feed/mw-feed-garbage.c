/* mw-feed-garbage.c: bad requests thrown at a collector's history endpoint (tests/feed).
 *
 *   mw-feed-garbage ENDPOINT
 *
 * Through a DEALER socket it sends, in order: bodies that are not a HistoryRequest (varints
 * that never end, a field longer than the message), an empty body (a request for nothing), a
 * body over the endpoint's 64 KiB request limit, messages with the wrong frames (REQ-like
 * with a non-empty delimiter, five frames), then one valid request for the job. Each of the
 * bad requests with a usable envelope must be answered with an error and no content; those
 * with the wrong frames are dropped; the valid request must still be answered. A second
 * DEALER sends a 2 MiB frame, past the size at which libzmq drops the connection, and after
 * it a third one must still be answered. It prints what it received as JSON:
 *   {"error_replies": n, "content_replies": n, "job_answered": 0|1, "after_huge": 0|1,
 *    "expected": {"decode": 2, "empty": 1, "too_large": 1, "frames": 2}}
 * and exits 0 when every reply was what it should be, 1 otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zmq.h>

#include "mw_proto.h"

static void *dealer(void *ctx, const char *ep)
{
    void *s = zmq_socket(ctx, ZMQ_DEALER);
    int linger = 0, timeout = 10000;
    if (!s || zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
        zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeout, sizeof timeout) != 0 || zmq_connect(s, ep) != 0) {
        fprintf(stderr, "mw-feed-garbage: socket: %s\n", zmq_strerror(zmq_errno()));
        exit(1);
    }
    return s;
}

static void send_parts(void *s, const void *const *parts, const size_t *lens, int n)
{
    for (int i = 0; i < n; i++)
        if (zmq_send(s, parts[i], lens[i], i + 1 < n ? ZMQ_SNDMORE : 0) < 0) {
            fprintf(stderr, "mw-feed-garbage: send: %s\n", zmq_strerror(zmq_errno()));
            exit(1);
        }
}

/* Receives one reply; returns it decoded, or NULL on the timeout (exits on anything else). */
static Mpiwatch__HistoryReply *recv_reply(void *s)
{
    zmq_msg_t m;
    zmq_msg_init(&m);
    if (zmq_msg_recv(&m, s, 0) < 0) {
        zmq_msg_close(&m);
        return NULL;
    }
    if (zmq_msg_more(&m)) {
        fprintf(stderr, "mw-feed-garbage: a reply of several frames to a DEALER\n");
        exit(1);
    }
    Mpiwatch__HistoryReply *r =
        mpiwatch__history_reply__unpack(NULL, zmq_msg_size(&m), zmq_msg_data(&m));
    zmq_msg_close(&m);
    if (!r) {
        fprintf(stderr, "mw-feed-garbage: a reply that does not decode\n");
        exit(1);
    }
    return r;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: mw-feed-garbage ENDPOINT\n");
        return 2;
    }
    void *ctx = zmq_ctx_new();
    void *s = dealer(ctx, argv[1]);
    int ok = 1;

    static const unsigned char endless[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                            0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    static const unsigned char short_field[] = {0x1a, 0x10, 'a', 'b', 'c'};
    size_t big_len = 200u << 10;
    unsigned char *big = malloc(big_len);
    if (!big)
        return 1;
    memset(big, 0x08, big_len); /* field 1 varints: decodable, but far too large */

    /* With an answer: two undecodable bodies, an empty one, an oversized one. */
    const void *one[1];
    size_t one_len[1];
    one[0] = endless, one_len[0] = sizeof endless;
    send_parts(s, one, one_len, 1);
    one[0] = short_field, one_len[0] = sizeof short_field;
    send_parts(s, one, one_len, 1);
    one[0] = "", one_len[0] = 0;
    send_parts(s, one, one_len, 1);
    one[0] = big, one_len[0] = big_len;
    send_parts(s, one, one_len, 1);
    /* Without one: wrong frames. */
    const void *three[3] = {"x", "", "y"};
    size_t three_len[3] = {1, 0, 1};
    send_parts(s, three, three_len, 2); /* [id] "x" "" : a non-empty delimiter */
    const void *five[4] = {"a", "b", "c", "d"};
    size_t five_len[4] = {1, 1, 1, 1};
    send_parts(s, five, five_len, 4);
    /* And a valid request for the job. */
    Mpiwatch__HistoryRequest q = MPIWATCH__HISTORY_REQUEST__INIT;
    q.id = 77;
    q.what_case = MPIWATCH__HISTORY_REQUEST__WHAT_JOB;
    q.job = 1;
    unsigned char req[64];
    size_t req_len = mpiwatch__history_request__pack(&q, req);
    one[0] = req, one_len[0] = req_len;
    send_parts(s, one, one_len, 1);

    int errors = 0, content = 0, job = 0;
    for (int i = 0; i < 5; i++) {
        Mpiwatch__HistoryReply *r = recv_reply(s);
        if (!r) {
            fprintf(stderr, "mw-feed-garbage: reply %d did not come\n", i + 1);
            ok = 0;
            break;
        }
        int has_error = r->error && r->error[0];
        int has_content = r->job || r->n_windows || r->n_samples;
        errors += has_error;
        content += has_content;
        if (r->id == 77 && r->job && !has_error)
            job = 1;
        if (has_error == has_content) {
            fprintf(stderr, "mw-feed-garbage: reply %d: error '%s' with %s content\n", i + 1,
                    r->error, has_content ? "some" : "no");
            ok = 0;
        }
        mpiwatch__history_reply__free_unpacked(r, NULL);
    }
    ok = ok && errors == 4 && content == 1 && job;

    /* A frame libzmq refuses to take in: the connection goes, the endpoint stays. */
    void *huge_s = dealer(ctx, argv[1]);
    size_t huge_len = 2u << 20;
    unsigned char *huge = calloc(1, huge_len);
    if (!huge)
        return 1;
    one[0] = huge, one_len[0] = huge_len;
    send_parts(huge_s, one, one_len, 1);
    void *after = dealer(ctx, argv[1]);
    one[0] = req, one_len[0] = req_len;
    send_parts(after, one, one_len, 1);
    Mpiwatch__HistoryReply *r = recv_reply(after);
    int after_huge = r && r->job && r->id == 77;
    if (r)
        mpiwatch__history_reply__free_unpacked(r, NULL);
    ok = ok && after_huge;

    printf("{\"error_replies\": %d, \"content_replies\": %d, \"job_answered\": %d, "
           "\"after_huge\": %d, \"expected\": {\"decode\": 2, \"empty\": 1, \"too_large\": 1, "
           "\"frames\": 2}}\n",
           errors, content, job, after_huge);
    zmq_close(s);
    zmq_close(huge_s);
    zmq_close(after);
    zmq_ctx_term(ctx);
    free(big);
    free(huge);
    return ok ? 0 : 1;
}
