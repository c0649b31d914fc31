/* sample_sink.h: the loop of the shim tests' stand-in collectors (mw-region-sink, mw-site-sink):
 * bind a PULL socket, decode every envelope with protobuf-c, hand each sample to the test's
 * printer, count byes.
 *
 * mw_sink_main(argc, argv, NAME, PRINT) implements `NAME DATA NP OUT`: binds DATA (the ranks'
 * MPIWATCH_COLLECTOR), writes PRINT's line for every sample and {"type":"bye","rank":R} for
 * every bye to OUT, an error line {"type":"error",...} for an envelope that does not decode or a
 * sample PRINT refuses (exit status 1 then), and stops when NP byes arrived or after 120 s
 * (exit status 1).
 */
#ifndef MW_TEST_SAMPLE_SINK_H
#define MW_TEST_SAMPLE_SINK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <zmq.h>

#include "mw_proto.h"

typedef int (*mw_sink_print_fn)(FILE *out, uint32_t rank, const Mpiwatch__Sample *s);

static inline uint64_t mw_sink_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* s as a JSON string (quotes and control characters escaped). */
static inline void mw_sink_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

static inline int mw_sink_main(int argc, char **argv, const char *name, mw_sink_print_fn print)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s DATA NP OUT\n", name);
        return 2;
    }
    unsigned np = (unsigned)strtoul(argv[2], NULL, 10);
    FILE *out = fopen(argv[3], "w");
    if (!out) {
        perror(argv[3]);
        return 2;
    }
    void *ctx = zmq_ctx_new();
    void *pull = zmq_socket(ctx, ZMQ_PULL);
    int zero = 0, hwm = 100000;
    zmq_setsockopt(pull, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt(pull, ZMQ_RCVHWM, &hwm, sizeof hwm);
    if (zmq_bind(pull, argv[1]) != 0) {
        fprintf(stderr, "%s: cannot bind %s: %s\n", name, argv[1], zmq_strerror(zmq_errno()));
        return 2;
    }
    int failed = 0;
    unsigned byes = 0;
    uint64_t deadline = mw_sink_mono_ms() + 120000u;
    while (byes < np && mw_sink_mono_ms() < deadline) {
        zmq_pollitem_t it = {.socket = pull, .events = ZMQ_POLLIN};
        if (zmq_poll(&it, 1, 200) <= 0)
            continue;
        zmq_msg_t m;
        zmq_msg_init(&m);
        int len = zmq_msg_recv(&m, pull, ZMQ_DONTWAIT);
        if (len < 0) {
            zmq_msg_close(&m);
            continue;
        }
        Mpiwatch__Envelope *env =
            mpiwatch__envelope__unpack(NULL, (size_t)len, (const uint8_t *)zmq_msg_data(&m));
        zmq_msg_close(&m);
        if (!env) {
            fprintf(out, "{\"type\":\"error\",\"why\":\"envelope does not decode\"}\n");
            failed = 1;
            continue;
        }
        if (env->body_case == MPIWATCH__ENVELOPE__BODY_SAMPLE && env->sample) {
            if (print(out, env->rank, env->sample) != 0)
                failed = 1;
        } else if (env->body_case == MPIWATCH__ENVELOPE__BODY_BYE) {
            fprintf(out, "{\"type\":\"bye\",\"rank\":%u}\n", env->rank);
            byes++;
        }
        mpiwatch__envelope__free_unpacked(env, NULL);
    }
    if (byes < np) {
        fprintf(stderr, "%s: %u of %u byes after 120 s\n", name, byes, np);
        failed = 1;
    }
    fclose(out);
    zmq_close(pull);
    zmq_ctx_term(ctx);
    return failed;
}

#endif
