/* mw-rec-plant: an attacker of the recording's index search, for tests/record/planted.sh.
 *
 *   mw-rec-plant ENDPOINT N
 *
 * Connects a PUSH socket to a collector's ingest ENDPOINT and sends N frames of
 * MW_MAX_MESSAGE_BYTES, each full of forged index frame headers: the tag "MWIX", a length of
 * 1 MiB and a CRC, every 12 bytes (about 700,000 per frame). The collector rejects them (they
 * are not envelopes) and records them verbatim, as it records every received frame; a reader
 * that verified each forged header would spend a CRC over 1 MiB on each. Exit status 0 once
 * every frame has been handed to the socket and the socket has drained (linger), 1 on an
 * error.
 *
 * DESIGN: plain libzmq; the bytes are built with the recording's own frame header function so
 * that the forged headers look exactly like a real index frame's first 12 bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zmq.h>

#include "mw_recording.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: mw-rec-plant ENDPOINT N\n");
        return 2;
    }
    long n = strtol(argv[2], NULL, 10);
    size_t len = MW_MAX_MESSAGE_BYTES;
    unsigned char *p = malloc(len);
    if (!p || n < 1)
        return 1;
    for (size_t i = 0; i + MW_REC_FRAME_HEADER_BYTES <= len; i += MW_REC_FRAME_HEADER_BYTES)
        mw_rec_put_frame_header(p + i, MW_REC_TAG_INDEX, 1u << 20, 0x12345678u);
    void *ctx = zmq_ctx_new();
    void *s = ctx ? zmq_socket(ctx, ZMQ_PUSH) : NULL;
    int linger = 20000;
    if (!s || zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
        zmq_connect(s, argv[1]) != 0) {
        fprintf(stderr, "mw-rec-plant: %s\n", zmq_strerror(zmq_errno()));
        return 1;
    }
    for (long i = 0; i < n; i++)
        if (zmq_send(s, p, len, 0) < 0) {
            fprintf(stderr, "mw-rec-plant: zmq_send: %s\n", zmq_strerror(zmq_errno()));
            return 1;
        }
    zmq_close(s);
    zmq_ctx_term(ctx);
    free(p);
    return 0;
}
