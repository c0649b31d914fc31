/* mw-gapjob: a small job with known gaps, sent to a running collector, so that a recording is
 * sure to hold partial windows.
 *
 *   mw-gapjob ENDPOINT
 *
 * Four ranks of job "gapjob" say hello, then send one sample per 100 ms window for 16 windows,
 * paced by the real clock (each window's samples right after it ended); rank 3 is silent for
 * windows 3 to 12 (counted from the first), 1 s. Then every rank says bye. A collector run with
 * --lateness-ms 200 closes a window 200 ms after its first sample, with rank 3 missing while
 * rank 3 has not reported a later window (collector/merge.c): windows 3 to 7 are partial with
 * at least 400 ms to spare on a slow machine, windows 8 to 12 may be (rank 3's window 13
 * arrives 200 to 600 ms after their deadlines, or after the collector closed them late), and
 * no other window is. Prints, as JSON, the grid indices of every window sent, the windows sure
 * to be partial and those that may be.
 * DESIGN: envelopes come from tests/collector/testmsg.c, like mw-badinput's; the pacing waits
 * for each window's end so that every sample's time stamp is sane and no window closes early.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "testmsg.h"

#define JOB "gapjob"
#define RANKS 4u
#define WINDOWS 16u
#define GAP_FIRST 3u /* rank 3 is silent for windows GAP_FIRST..GAP_LAST */
#define GAP_LAST 12u
#define SURE_LAST 7u /* the last window of the gap sure to close before rank 3 is back */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int skipped(uint32_t rank, uint64_t k)
{
    return rank == RANKS - 1 && k >= GAP_FIRST && k <= GAP_LAST;
}

static void send_msg(void *s, const tm_msg_t *m)
{
    uint8_t *buf;
    size_t n = tm_pack(m, &buf);
    if (zmq_send(s, buf, n, 0) < 0) {
        fprintf(stderr, "mw-gapjob: zmq_send: %s\n", zmq_strerror(zmq_errno()));
        exit(1);
    }
    free(buf);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: mw-gapjob ENDPOINT\n");
        return 2;
    }
    void *ctx = zmq_ctx_new();
    void *s = ctx ? zmq_socket(ctx, ZMQ_PUSH) : NULL;
    int linger = 5000;
    if (!s || zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
        zmq_connect(s, argv[1]) != 0) {
        fprintf(stderr, "mw-gapjob: %s: %s\n", argv[1], zmq_strerror(zmq_errno()));
        return 1;
    }
    static tm_msg_t m;
    for (uint32_t r = 0; r < RANKS; r++) {
        tm_hello(&m, JOB, r, RANKS, now_ns());
        send_msg(s, &m);
    }
    uint64_t first = tm_window_of(now_ns()) + 1;
    for (uint64_t k = 0; k < WINDOWS; k++) {
        uint64_t end = (first + k + 1) * TM_WINDOW_NS;
        for (uint64_t t = now_ns(); t < end; t = now_ns()) {
            struct timespec d = {0, (long)(end - t)};
            nanosleep(&d, NULL);
        }
        for (uint32_t r = 0; r < RANKS; r++) {
            if (skipped(r, k))
                continue;
            tm_sample(&m, JOB, r, first + k, now_ns());
            tm_add_fn(&m, mw_fn_id("MPI_Allreduce"), 5, 5000, 500, 1500, 400);
            tm_add_occ(&m, mw_fn_id("MPI_Allreduce"), 1, 5000);
            tm_add_call(&m, mw_fn_id("MPI_Allreduce"), now_ns() - 20000000, 1500, 80, -1);
            send_msg(s, &m);
        }
    }
    for (uint32_t r = 0; r < RANKS; r++) {
        tm_bye(&m, JOB, r);
        m.bye.windows_sent = WINDOWS - (r == RANKS - 1 ? GAP_LAST - GAP_FIRST + 1 : 0);
        send_msg(s, &m);
    }
    zmq_close(s);
    zmq_ctx_term(ctx);
    printf("{\"job\": \"%s\", \"ranks\": %u, \"windows\": [", JOB, RANKS);
    for (uint64_t k = 0; k < WINDOWS; k++)
        printf("%s%llu", k ? ", " : "", (unsigned long long)(first + k));
    printf("], \"partial_sure\": [");
    for (uint64_t k = GAP_FIRST; k <= SURE_LAST; k++)
        printf("%s%llu", k > GAP_FIRST ? ", " : "", (unsigned long long)(first + k));
    printf("], \"partial_maybe\": [");
    for (uint64_t k = SURE_LAST + 1; k <= GAP_LAST; k++)
        printf("%s%llu", k > SURE_LAST + 1 ? ", " : "", (unsigned long long)(first + k));
    printf("]}\n");
    return 0;
}
