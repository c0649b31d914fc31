/* mw-trace-sink: a stand-in collector for the shim's trace tests (tests/shim/trace.sh).
 *
 * mw-trace-sink DATA STEER JOB NP SCRIPT OUT binds a PULL socket on DATA (the ranks'
 * MPIWATCH_COLLECTOR) and an XPUB socket on STEER (their MPIWATCH_STEER), decodes every
 * envelope with protobuf-c and every trace with mw_trace_decode(), and writes one JSON line
 * per sample or reach-back trace to OUT:
 *   {"type":"sample","rank":R,"window":W,"counts":{"MPI_X":N,...} (timed functions only),
 *    "capture":C (Sample.capture present: its first window, else -1),
 *    "trace":{"state":S,"reason":Y,"left_out":L,"count":N,"flags":F,"capture":I,
 *             "threads":T,"calls":{"MPI_X":N,...},"open":O,"p2p":[[kind,comm,peer,tag,seq,
 *             flags],...]} or null, "comms":["ID",...] (Sample.comms, hex)}
 *   {"type":"trace","rank":R,"window":W,"trace":{...as above}}
 *   {"type":"steer","window":W,"key":K,"value":V}   (what the script sent, at window W)
 *   {"type":"bye","rank":R}
 * It stops when NP byes arrived, or after 120 s. SCRIPT has one action per line (tabs
 * between fields), played in order as rank 0's samples arrive; W is the newest window of
 * rank 0's samples so far, B the first one after the subscriptions arrived:
 *   subs N           wait until N subscriptions to "steer" arrived (at most 60 s)
 *   at D KEY VALUE   once W >= B + D, send the Steer KEY=VALUE; in VALUE "{+N}" / "{-N}"
 *                    become W + N / W - N
 *   touch D PATH     once W >= B + D, create the file PATH (tells the job to stop)
 * A trace that does not decode is an error line {"type":"error",...} and makes the exit
 * status 1.
 */
#include <protobuf-c/protobuf-c.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "mw_proto.h"
#include "mw_trace.h"

static FILE *out;
static int failed;

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void trace_json(const Mpiwatch__Trace *t, uint32_t rank)
{
    fprintf(out,
            "{\"state\":%u,\"reason\":%u,\"left_out\":%llu,\"count\":%u,\"flags\":%u,"
            "\"capture\":%llu,\"threads\":%u,\"window\":%llu",
            t->state, t->reason, (unsigned long long)t->left_out, t->count, t->flags,
            (unsigned long long)t->capture, t->threads, (unsigned long long)t->window);
    mw_trace_rec_t *r = NULL;
    size_t n = 0;
    const char *why = NULL;
    if (t->count && mw_trace_decode(t->records.data, t->records.len, t->encoding, t->raw_bytes,
                                    t->count, &r, &n, &why) != 0) {
        fprintf(out, ",\"error\":\"%s\"}", why ? why : "?");
        fprintf(stderr, "mw-trace-sink: rank %u window %llu: trace does not decode: %s\n", rank,
                (unsigned long long)t->window, why ? why : "?");
        failed = 1;
        return;
    }
    uint64_t calls[MW_FN_COUNT] = {0};
    unsigned open = 0;
    for (size_t i = 0; i < n; i++) {
        if (r[i].flags & MW_TF_OPEN)
            open++;
        if (mw_trace_is_call(&r[i]) && r[i].fn < MW_FN_COUNT)
            calls[r[i].fn]++;
    }
    fprintf(out, ",\"open\":%u,\"calls\":{", open);
    const char *sep = "";
    for (unsigned f = 1; f < MW_FN_COUNT; f++)
        if (calls[f]) {
            fprintf(out, "%s\"%s\":%llu", sep, mw_fn_name(f), (unsigned long long)calls[f]);
            sep = ",";
        }
    fprintf(out, "},\"p2p\":[");
    sep = "";
    for (size_t i = 0; i < n; i++) {
        if (!mw_trace_is_send(&r[i]) && !mw_trace_is_recv(&r[i]) && r[i].kind != MW_TK_IRECV)
            continue;
        fprintf(out, "%s[%u,\"%llx\",%d,%d,%llu,%u]", sep, r[i].kind, (unsigned long long)r[i].comm,
                r[i].peer, r[i].tag, (unsigned long long)r[i].seq, r[i].flags);
        sep = ",";
    }
    fprintf(out, "]}");
    free(r);
}

static void fn_counts(const Mpiwatch__Sample *s)
{
    fprintf(out, "{");
    const char *sep = "";
    for (size_t i = 0; i < s->n_functions; i++) {
        const Mpiwatch__FunctionStat *f = s->functions[i];
        if (!mw_fn_timed(f->fn) || !mw_fn_name(f->fn))
            continue;
        fprintf(out, "%s\"%s\":%llu", sep, mw_fn_name(f->fn), (unsigned long long)f->count);
        sep = ",";
    }
    fprintf(out, "}");
}

/* The script: actions played in order. */
typedef struct {
    char what[8];
    long d;
    char key[80], value[200];
} action_t;

static void *pub;
static const char *job;

static int send_steer(const char *key, const char *value)
{
    Mpiwatch__Steer m = MPIWATCH__STEER__INIT;
    static uint64_t seq;
    m.seq = ++seq;
    m.job = (char *)job;
    m.key = (char *)key;
    m.value = (char *)value;
    uint8_t buf[1024];
    size_t len = mpiwatch__steer__get_packed_size(&m);
    if (len > sizeof buf)
        return -1;
    mpiwatch__steer__pack(&m, buf);
    if (zmq_send(pub, "steer", 5, ZMQ_SNDMORE) != 5 || zmq_send(pub, buf, len, 0) != (int)len)
        return -1;
    return 0;
}

/* VALUE with {+N} / {-N} replaced by w + N / w - N. */
static void expand(const char *in, long long w, char *o, size_t cap)
{
    size_t k = 0;
    while (*in && k + 24 < cap) {
        if (in[0] == '{' && (in[1] == '+' || in[1] == '-')) {
            char *end;
            long long d = strtoll(in + 1, &end, 10);
            if (*end == '}') {
                k += (size_t)snprintf(o + k, cap - k, "%lld", w + d);
                in = end + 1;
                continue;
            }
        }
        o[k++] = *in++;
    }
    o[k] = 0;
}

int main(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: mw-trace-sink DATA STEER JOB NP SCRIPT OUT\n");
        return 2;
    }
    job = argv[3];
    unsigned np = (unsigned)atoi(argv[4]);
    FILE *sf = fopen(argv[5], "r");
    out = fopen(argv[6], "w");
    if (!sf || !out) {
        fprintf(stderr, "mw-trace-sink: cannot open %s or %s\n", argv[5], argv[6]);
        return 2;
    }
    action_t act[64];
    unsigned nact = 0, next = 0;
    char line[512];
    while (fgets(line, sizeof line, sf) && nact < 64) {
        line[strcspn(line, "\n")] = 0;
        char *f[4] = {0};
        int nf = 0;
        for (char *p = line; p && nf < 4;) {
            f[nf++] = p;
            p = strchr(p, '\t');
            if (p)
                *p++ = 0;
        }
        if (!f[0][0] || f[0][0] == '#')
            continue;
        action_t *a = &act[nact++];
        memset(a, 0, sizeof *a);
        snprintf(a->what, sizeof a->what, "%s", f[0]);
        a->d = nf > 1 ? atol(f[1]) : 0;
        if (nf > 2)
            snprintf(a->key, sizeof a->key, "%s", f[2]);
        if (nf > 3)
            snprintf(a->value, sizeof a->value, "%s", f[3]);
    }
    fclose(sf);
    void *ctx = zmq_ctx_new();
    void *pull = zmq_socket(ctx, ZMQ_PULL);
    pub = zmq_socket(ctx, ZMQ_XPUB);
    int one = 1, zero = 0, hwm = 100000;
    zmq_setsockopt(pub, ZMQ_XPUB_VERBOSE, &one, sizeof one);
    zmq_setsockopt(pub, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt(pull, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt(pull, ZMQ_RCVHWM, &hwm, sizeof hwm);
    if (zmq_bind(pull, argv[1]) != 0 || zmq_bind(pub, argv[2]) != 0) {
        fprintf(stderr, "mw-trace-sink: bind: %s\n", zmq_strerror(zmq_errno()));
        return 2;
    }
    unsigned byes = 0, subs = 0;
    long long w0 = -1, base = -1;
    uint64_t t_end = mono_ms() + 120000, subs_end = 0;
    zmq_msg_t msg;
    while (byes < np && mono_ms() < t_end) {
        zmq_pollitem_t it[2] = {{.socket = pull, .events = ZMQ_POLLIN},
                                {.socket = pub, .events = ZMQ_POLLIN}};
        if (zmq_poll(it, 2, 100) < 0)
            break;
        if (it[1].revents & ZMQ_POLLIN) {
            char b[64];
            int len = zmq_recv(pub, b, sizeof b, 0);
            if (len >= 6 && b[0] == 1 && memcmp(b + 1, "steer", 5) == 0)
                subs++;
        }
        /* Subscriptions, then the actions that are due. */
        while (next < nact) {
            action_t *a = &act[next];
            if (strcmp(a->what, "subs") == 0) {
                if (!subs_end)
                    subs_end = mono_ms() + 60000;
                if (subs < (unsigned)a->d) {
                    if (mono_ms() > subs_end) {
                        fprintf(stderr, "mw-trace-sink: %u of %ld subscriptions\n", subs, a->d);
                        failed = 1;
                        next = nact;
                    }
                    break;
                }
                base = -1; /* counted from the next sample of rank 0 */
                next++;
                continue;
            }
            if (base < 0 || w0 < base + a->d)
                break;
            if (strcmp(a->what, "at") == 0) {
                char v[256];
                expand(a->value, w0, v, sizeof v);
                if (send_steer(a->key, v) != 0)
                    failed = 1;
                fprintf(out,
                        "{\"type\":\"steer\",\"window\":%lld,\"key\":\"%s\",\"value\":\"%s\"}\n",
                        w0, a->key, v);
            } else if (strcmp(a->what, "touch") == 0) {
                FILE *t = fopen(a->key, "w");
                if (t)
                    fclose(t);
            }
            next++;
        }
        if (!(it[0].revents & ZMQ_POLLIN))
            continue;
        zmq_msg_init(&msg);
        while (zmq_msg_recv(&msg, pull, ZMQ_DONTWAIT) >= 0) {
            Mpiwatch__Envelope *e =
                mpiwatch__envelope__unpack(NULL, zmq_msg_size(&msg), zmq_msg_data(&msg));
            if (!e) {
                fprintf(out, "{\"type\":\"error\",\"what\":\"envelope\"}\n");
                failed = 1;
                continue;
            }
            if (e->body_case == MPIWATCH__ENVELOPE__BODY_SAMPLE) {
                const Mpiwatch__Sample *s = e->sample;
                if (e->rank == 0 && (long long)s->window > w0) {
                    w0 = (long long)s->window;
                    if (base < 0)
                        base = w0;
                }
                fprintf(out,
                        "{\"type\":\"sample\",\"rank\":%u,\"window\":%llu,\"counts\":", e->rank,
                        (unsigned long long)s->window);
                fn_counts(s);
                fprintf(out, ",\"capture\":%lld,\"comms\":[",
                        s->capture ? (long long)s->capture->first : -1LL);
                for (size_t i = 0; i < s->n_comms; i++)
                    fprintf(out, "%s\"%llx\"", i ? "," : "", (unsigned long long)s->comms[i]->id);
                fprintf(out, "],\"trace\":");
                if (s->trace)
                    trace_json(s->trace, e->rank);
                else
                    fprintf(out, "null");
                fprintf(out, "}\n");
            } else if (e->body_case == MPIWATCH__ENVELOPE__BODY_TRACE) {
                fprintf(out, "{\"type\":\"trace\",\"rank\":%u,\"window\":%llu,\"trace\":", e->rank,
                        (unsigned long long)e->trace->window);
                trace_json(e->trace, e->rank);
                fprintf(out, "}\n");
            } else if (e->body_case == MPIWATCH__ENVELOPE__BODY_BYE) {
                fprintf(out, "{\"type\":\"bye\",\"rank\":%u}\n", e->rank);
                byes++;
            }
            mpiwatch__envelope__free_unpacked(e, NULL);
        }
        zmq_msg_close(&msg);
        fflush(out);
    }
    if (byes < np) {
        fprintf(stderr, "mw-trace-sink: %u of %u byes within the time\n", byes, np);
        failed = 1;
    }
    if (next < nact) {
        fprintf(stderr, "mw-trace-sink: the script stopped at action %u of %u\n", next, nact);
        failed = 1;
    }
    fclose(out);
    zmq_close(pull);
    zmq_close(pub);
    zmq_ctx_term(ctx);
    return failed;
}
