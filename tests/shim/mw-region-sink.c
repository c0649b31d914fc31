/* mw-region-sink: a stand-in collector for the shim's region and per-function peer tests
 * (tests/shim/regions.sh): what the ranks send, decoded, one JSON line per sample.
 *
 * mw-region-sink DATA NP OUT binds a PULL socket on DATA (the ranks' MPIWATCH_COLLECTOR),
 * decodes every envelope with protobuf-c and writes to OUT:
 *   {"type":"sample","rank":R,"window":W,
 *    "defs":[[ID,"NAME",SOURCE],...] (Sample.region_defs),
 *    "regions":[[ID,COUNT,INCL_NS,EXCL_NS,MPI_NS],...], "dropped":D (regions_dropped),
 *    "peers":[[RANK,"MPI_X" or FN,MESSAGES,BYTES],...] (peer_fn empty: FN 0),
 *    "fn":{"MPI_X":[COUNT,TOTAL_NS],...}}
 *   {"type":"bye","rank":R}
 * An envelope that does not decode, or a sample whose parallel arrays differ in length, is
 * an error line {"type":"error",...} and makes the exit status 1. It stops when NP byes
 * arrived, or after 120 s (exit status 1).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "mw_proto.h"

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void json_string(FILE *out, const char *s)
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

static int sample_json(FILE *out, uint32_t rank, const Mpiwatch__Sample *s)
{
    size_t nr = s->n_region_id;
    if (s->n_region_count != nr || s->n_region_incl_ns != nr || s->n_region_excl_ns != nr ||
        s->n_region_mpi_ns != nr || s->n_peer_messages != s->n_peer_rank ||
        s->n_peer_bytes != s->n_peer_rank || (s->n_peer_fn && s->n_peer_fn != s->n_peer_rank)) {
        fprintf(out, "{\"type\":\"error\",\"rank\":%u,\"why\":\"parallel arrays\"}\n", rank);
        return -1;
    }
    fprintf(out, "{\"type\":\"sample\",\"rank\":%u,\"window\":%llu,\"defs\":[", rank,
            (unsigned long long)s->window);
    for (size_t i = 0; i < s->n_region_defs; i++) {
        fprintf(out, "%s[%u,", i ? "," : "", s->region_defs[i]->id);
        json_string(out, s->region_defs[i]->name);
        fprintf(out, ",%u]", s->region_defs[i]->source);
    }
    fprintf(out, "],\"regions\":[");
    for (size_t i = 0; i < nr; i++)
        fprintf(out, "%s[%u,%llu,%llu,%llu,%llu]", i ? "," : "", s->region_id[i],
                (unsigned long long)s->region_count[i], (unsigned long long)s->region_incl_ns[i],
                (unsigned long long)s->region_excl_ns[i], (unsigned long long)s->region_mpi_ns[i]);
    fprintf(out, "],\"dropped\":%llu,\"peers\":[", (unsigned long long)s->regions_dropped);
    for (size_t i = 0; i < s->n_peer_rank; i++) {
        uint32_t fn = s->n_peer_fn ? s->peer_fn[i] : 0;
        fprintf(out, "%s[%u,", i ? "," : "", s->peer_rank[i]);
        if (fn > 0 && fn < MW_FN_COUNT)
            json_string(out, mw_fn_name(fn));
        else
            fprintf(out, "%u", fn);
        fprintf(out, ",%llu,%llu]", (unsigned long long)s->peer_messages[i],
                (unsigned long long)s->peer_bytes[i]);
    }
    fprintf(out, "],\"fn\":{");
    const char *sep = "";
    for (size_t i = 0; i < s->n_functions; i++) {
        const Mpiwatch__FunctionStat *f = s->functions[i];
        if (f->fn == 0 || f->fn >= MW_FN_COUNT)
            continue;
        fprintf(out, "%s\"%s\":[%llu,%llu]", sep, mw_fn_name(f->fn), (unsigned long long)f->count,
                (unsigned long long)f->total_ns);
        sep = ",";
    }
    fprintf(out, "}}\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: mw-region-sink DATA NP OUT\n");
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
        fprintf(stderr, "mw-region-sink: cannot bind %s: %s\n", argv[1], zmq_strerror(zmq_errno()));
        return 2;
    }
    int failed = 0;
    unsigned byes = 0;
    uint64_t deadline = mono_ms() + 120000u;
    while (byes < np && mono_ms() < deadline) {
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
            if (sample_json(out, env->rank, env->sample) != 0)
                failed = 1;
        } else if (env->body_case == MPIWATCH__ENVELOPE__BODY_BYE) {
            fprintf(out, "{\"type\":\"bye\",\"rank\":%u}\n", env->rank);
            byes++;
        }
        mpiwatch__envelope__free_unpacked(env, NULL);
    }
    if (byes < np) {
        fprintf(stderr, "mw-region-sink: %u of %u byes after 120 s\n", byes, np);
        failed = 1;
    }
    fclose(out);
    zmq_close(pull);
    zmq_ctx_term(ctx);
    return failed;
}
