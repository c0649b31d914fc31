/* feed.c: mpiwatch-feed, a small client of a collector's live feed and history endpoint.
 *
 *   mpiwatch-feed --subscribe EP [--topic T]... [--count N] [--until-job-end]
 *   mpiwatch-feed --history EP (--last N | --range A:B | --rank R --range A:B | --job |
 *                               --lateness N)
 *
 * It prints JSON lines on stdout: with --subscribe one line per message received (topic and
 * content), with --history one line holding the reply. It is what the tests use to look at
 * the feed, and a readable example of the protocol (docs/feed.md).
 *
 * DESIGN: one socket, blocking receives with a timeout (a client, unlike the collector, may
 * wait). Every message is decoded and checked before it is printed; one that does not decode
 * is printed as an error line and counted, and the client goes on. Windows are printed as the
 * exporter prints them (proto/mw_window_json.h checks every field and adds the fractions); jobs,
 * events and samples compactly here. Integers are printed exactly (uint64 as digits, never
 * through a double). --pb-hex adds the bytes of every window and sample as they travelled
 * (found in the message's wire form, not encoded again), so that a test can compare what two
 * paths delivered byte for byte.
 * The history request goes through a REQ socket (identity and empty delimiter are added by
 * libzmq) or, with --dealer, a DEALER socket (the body alone), the two client kinds the
 * endpoint accepts.
 * With CURVE (--curve-server and --curve-key, or MPIWATCH_CURVE_SERVER and MPIWATCH_CURVE_KEY;
 * docs/security.md) the socket is a CURVE client; the keys are read once, before connecting.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zmq.h>

#include "mw_fnmap_msg.h"
#include "mw_keyfile.h"
#include "mw_proto.h"
#include "mw_version.h"
#include "mw_recording.h"
#include "mw_window_json.h"
#include "mw_wire.h"

#define FEED_MAX_TOPICS 8
#define FEED_MAX_REPLY (256 << 20) /* the collector caps replies at 64 MiB */
#define FEED_IDLE_SLICE_MS 100     /* --subscribe --timeout-ms is counted in these */

/* A lateness batch as JSON (below, beside the history reply it also appears in). */
static void json_lateness(FILE *out, const Mpiwatch__Lateness *l);

typedef struct {
    const char *subscribe, *history;
    const char *topics[FEED_MAX_TOPICS];
    int n_topics;
    uint64_t count; /* 0: no limit */
    int until_job_end;
    int dealer;
    int pb_hex;
    long timeout_ms; /* -1: wait forever */
    int have_last, have_range, have_rank, job, have_lateness;
    uint64_t lateness; /* --lateness N: the last N lateness batches */
    uint64_t last, first_w, last_w, id;
    uint32_t rank;
    const char *curve_server, *curve_key; /* NULL: the MPIWATCH_CURVE_* variables */
} feed_opts_t;

/* The CURVE keys (mw_keyfile.h) when in use, loaded in main(). */
static mw_curve_client_t feed_curve;
static int feed_curve_on;

/* ---- JSON output -------------------------------------------------------------------------- */

static void json_str(FILE *o, const char *s)
{
    fputc('"', o);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(o, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(o, "\\u%04x", *p);
        else
            fputc(*p, o);
    }
    fputc('"', o);
}

static void json_hex(FILE *o, const uint8_t *p, size_t len)
{
    fputc('"', o);
    for (size_t i = 0; i < len; i++)
        fprintf(o, "%02x", p[i]);
    fputc('"', o);
}

/* {"MPI_Allreduce": {"count": n, "time_ns": n, "bytes": n}, ...} */
static void json_functions(FILE *o, Mpiwatch__FunctionStat *const *fn, size_t n)
{
    fputs("{", o);
    for (size_t i = 0; i < n; i++) {
        const char *name = mw_fn_name(fn[i]->fn);
        char unknown[32];
        if (!name) {
            snprintf(unknown, sizeof unknown, "fn%u", fn[i]->fn);
            name = unknown;
        }
        fprintf(o, "%s", i ? ", " : "");
        json_str(o, name);
        fprintf(o, ": {\"count\": %" PRIu64 ", \"time_ns\": %" PRIu64 ", \"bytes\": %" PRIu64 "}",
                fn[i]->count, fn[i]->total_ns, fn[i]->bytes);
    }
    fputs("}", o);
}

/* Where a subscriber's window is in its job: "window" and "t_s" (mw_window_json_add_place),
 * counted from the first window of the job this subscriber received. */
typedef struct {
    int set;
    uint64_t window, t_ns;
} mw_feed_place_t;

/* A window as proto/mw_window_json.h shows it (the exporter's keys), plus its place when
 * `place` is given and "pb": its bytes. A window the window policy refuses is {"index": K,
 * "error": "refused: WHY"}. */
static void json_window(FILE *o, const Mpiwatch__Window *w, const Mpiwatch__JobInfo *job,
                        const uint8_t *pb, size_t len, int with_pb, const mw_feed_place_t *place)
{
    const char *why = mw_window_check(w);
    if (why) {
        fprintf(o, "{\"index\": %" PRIu64 ", \"error\": \"refused: %s\"}", w ? w->index : 0, why);
        return;
    }
    cJSON *j = mw_window_json(w, job);
    if (j && place && place->set && mw_window_json_add_place(j, place->window, place->t_ns) < 0) {
        cJSON_Delete(j);
        j = NULL;
    }
    char *hex = NULL;
    if (j && with_pb && (hex = malloc(2 * len + 1))) {
        for (size_t i = 0; i < len; i++)
            snprintf(hex + 2 * i, 3, "%02x", pb[i]);
        hex[2 * len] = 0;
        if (!cJSON_AddStringToObject(j, "pb", hex)) {
            cJSON_Delete(j);
            j = NULL;
        }
    }
    char *text = j ? cJSON_PrintUnformatted(j) : NULL;
    if (!text) {
        fprintf(stderr, "mpiwatch-feed: out of memory\n");
        exit(1);
    }
    fputs(text, o);
    cJSON_free(text);
    cJSON_Delete(j);
    free(hex);
}

/* The job's placement (docs/topology.md): "nodes", each with its hardware as
 * [type, parent, logical, os_index] rows, and "placement", one entry per rank. */
static void json_job_topology(FILE *o, const Mpiwatch__JobInfo *j)
{
    fputs(", \"nodes\": [", o);
    for (size_t i = 0; i < j->n_nodes; i++) {
        const Mpiwatch__NodeTopology *n = j->nodes[i];
        fputs(i ? ", {\"name\": " : "{\"name\": ", o);
        json_str(o, n->node);
        fputs(", \"objects\": [", o);
        for (size_t k = 0; k < n->n_objects; k++) {
            const Mpiwatch__TopoObject *t = n->objects[k];
            fprintf(o, "%s[%u, %d, %u, %u]", k ? ", " : "", t->type, t->parent, t->logical,
                    t->os_index);
        }
        fputs("]}", o);
    }
    fputs("], \"placement\": [", o);
    for (size_t i = 0; i < j->n_ranks; i++) {
        const Mpiwatch__RankInfo *r = j->ranks[i];
        fprintf(o,
                "%s{\"rank\": %u, \"host\": %u, \"node\": %u, \"pu\": %d, \"core\": %d, "
                "\"l3\": %d, \"package\": %d, \"numa\": %d, \"bound\": %s, \"pus\": [",
                i ? ", " : "", r->rank, r->host, r->node, r->pu, r->core, r->l3, r->package,
                r->numa, r->bound ? "true" : "false");
        for (size_t k = 0; k < r->n_pus; k++)
            fprintf(o, "%s%u", k ? ", " : "", r->pus[k]);
        fputs("]}", o);
    }
    fputs("]", o);
}

static void json_job(FILE *o, const Mpiwatch__JobInfo *j)
{
    fputs("{\"job\": ", o);
    json_str(o, j->job);
    fputs(", \"program\": ", o);
    json_str(o, j->program);
    fputs(", \"mpi_library\": ", o);
    json_str(o, j->mpi_library);
    fprintf(o,
            ", \"size\": %u, \"window_ns\": %" PRIu64 ", \"subslots\": %u, "
            "\"duration_bins\": %u, \"function_count\": %u, \"function_table_hash\": %" PRIu64
            ", \"ranks\": %zu, \"state\": ",
            j->size, j->window_ns, j->subslots, j->duration_bins, j->function_count,
            j->function_table_hash, j->n_ranks);
    json_str(o, j->state);
    if (j->n_grid) { /* the window length changed (mpiwatch.window, docs/feed.md) */
        fputs(", \"grid\": [", o);
        for (size_t i = 0; i < j->n_grid; i++)
            fprintf(o,
                    "%s{\"first\": %" PRIu64 ", \"start_ns\": %" PRIu64 ", \"window_ns\": %" PRIu64
                    "}",
                    i ? ", " : "", j->grid[i]->first, j->grid[i]->start_ns, j->grid[i]->window_ns);
        fputc(']', o);
    }
    fputs(", \"hosts\": [", o);
    for (size_t i = 0; i < j->n_hosts; i++) {
        fputs(i ? ", " : "", o);
        json_str(o, j->hosts[i]);
    }
    fputs("]", o);
    json_job_topology(o, j);
    fputs("}", o);
}

static void json_event(FILE *o, const Mpiwatch__JobEvent *e)
{
    fputs("{\"kind\": ", o);
    json_str(o, e->kind);
    fputs(", \"job\": ", o);
    json_str(o, e->job);
    fputs(", \"detail\": ", o);
    json_str(o, e->detail);
    fprintf(o, ", \"real_ns\": %" PRIu64 "}", e->real_ns);
}

/* A rank's sample as the collector received it. */
static void json_sample(FILE *o, const Mpiwatch__Envelope *env, const uint8_t *pb, size_t len,
                        int with_pb)
{
    fprintf(o, "{\"rank\": %u, \"seq\": %" PRIu64 ", \"job\": ", env->rank, env->seq);
    json_str(o, env->job);
    if (env->body_case == MPIWATCH__ENVELOPE__BODY_SAMPLE && env->sample) {
        const Mpiwatch__Sample *s = env->sample;
        fprintf(o, ", \"window\": %" PRIu64 ", \"peers\": %zu, \"functions\": ", s->window,
                s->n_peer_rank);
        json_functions(o, s->functions, s->n_functions);
    } else {
        fputs(", \"error\": \"not a sample\"", o);
    }
    if (with_pb) {
        fputs(", \"pb\": ", o);
        json_hex(o, pb, len);
    }
    fputs("}", o);
}

/* The encoded bytes of the next occurrence, from position *i, of the length-delimited field
 * `field` of a message, as they travelled (not encoded again after decoding); *i moves past
 * it. Returns 0, or -1 when there is none. */
static int wire_next(const uint8_t *p, size_t len, uint32_t field, size_t *i, const uint8_t **out,
                     size_t *out_len)
{
    while (*i < len) {
        uint64_t tag, v;
        if (mw_wire_get_varint(p, len, i, &tag) < 0)
            return -1;
        switch (tag & 7) {
        case MW_WIRE_VARINT:
            if (mw_wire_get_varint(p, len, i, &v) < 0)
                return -1;
            break;
        case MW_WIRE_I64:
            *i += 8;
            break;
        case MW_WIRE_I32:
            *i += 4;
            break;
        case MW_WIRE_LEN:
            if (mw_wire_get_varint(p, len, i, &v) < 0 || v > len - *i)
                return -1;
            *i += v;
            if (tag >> 3 == field) {
                *out = p + *i - v;
                *out_len = v;
                return 0;
            }
            break;
        default:
            return -1;
        }
    }
    return -1;
}

/* ---- sockets ------------------------------------------------------------------------------ */

static int feed_setopt(void *s, int opt, const void *v, size_t len, const char *name)
{
    if (zmq_setsockopt(s, opt, v, len) != 0) {
        fprintf(stderr, "mpiwatch-feed: zmq_setsockopt(%s): %s\n", name, zmq_strerror(zmq_errno()));
        return -1;
    }
    return 0;
}

/* Makes s a CURVE client when keys were given (before zmq_connect). */
static int feed_curve_apply(void *s)
{
    char err[300];
    if (feed_curve_on && mw_curve_client_apply(s, &feed_curve, err, sizeof err) != 0) {
        fprintf(stderr, "mpiwatch-feed: %s\n", err);
        return -1;
    }
    return 0;
}

/* Receives one frame into msg (initialised here). Returns its size, -2 on the timeout, -1 on
 * an error (reported). */
static int feed_recv(void *s, zmq_msg_t *msg, const char *what)
{
    if (zmq_msg_init(msg) != 0) {
        fprintf(stderr, "mpiwatch-feed: zmq_msg_init: %s\n", zmq_strerror(zmq_errno()));
        return -1;
    }
    if (zmq_msg_recv(msg, s, 0) < 0) {
        int err = zmq_errno();
        zmq_msg_close(msg);
        if (err == EAGAIN)
            return -2;
        fprintf(stderr, "mpiwatch-feed: receiving %s: %s\n", what, zmq_strerror(err));
        return -1;
    }
    return (int)(zmq_msg_size(msg) > INT32_MAX ? INT32_MAX : zmq_msg_size(msg));
}

/* ---- --subscribe -------------------------------------------------------------------------- */

static int feed_subscribe(void *ctx, const feed_opts_t *o)
{
    void *s = zmq_socket(ctx, ZMQ_SUB);
    if (!s) {
        fprintf(stderr, "mpiwatch-feed: zmq_socket: %s\n", zmq_strerror(zmq_errno()));
        return 1;
    }
    /* The idle timeout is counted in slices: a receive whose slice ran out while the process
     * was stopped (SIGSTOP) returns at once on resumption, before libzmq's I/O thread has
     * read what arrived meanwhile; the slices after it see those messages. */
    int rc = 1, linger = 0, timeout = o->timeout_ms < 0 ? -1 : FEED_IDLE_SLICE_MS;
    long idle_ms = 0;
    int64_t maxmsg = FEED_MAX_REPLY;
    Mpiwatch__Feed *job_msg = NULL; /* the last job description, kept to name hosts */
    const Mpiwatch__JobInfo *job = NULL;
    if (feed_setopt(s, ZMQ_LINGER, &linger, sizeof linger, "ZMQ_LINGER") < 0 ||
        feed_setopt(s, ZMQ_RCVTIMEO, &timeout, sizeof timeout, "ZMQ_RCVTIMEO") < 0 ||
        feed_setopt(s, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg, "ZMQ_MAXMSGSIZE") < 0)
        goto out;
    for (int i = 0; i < (o->n_topics ? o->n_topics : 1); i++) {
        const char *t = o->n_topics ? o->topics[i] : "";
        if (feed_setopt(s, ZMQ_SUBSCRIBE, t, strlen(t), "ZMQ_SUBSCRIBE") < 0)
            goto out;
    }
    if (feed_curve_apply(s) < 0)
        goto out;
    if (zmq_connect(s, o->subscribe) != 0) {
        fprintf(stderr, "mpiwatch-feed: cannot connect to %s: %s\n", o->subscribe,
                zmq_strerror(zmq_errno()));
        goto out;
    }
    uint64_t got = 0, bad = 0, windows = 0, gaps = 0, prev_window = 0;
    uint64_t origin_index = 0, origin_ns = 0; /* the job's first window received */
    int have_origin = 0;
    for (;;) {
        zmq_msg_t topic, body;
        int n = feed_recv(s, &topic, "a topic");
        if (n == -2) {
            idle_ms += FEED_IDLE_SLICE_MS;
            if (idle_ms < o->timeout_ms)
                continue;
            /* Idle: the end of a session when something was received, a failure otherwise. */
            fprintf(stderr, "mpiwatch-feed: nothing received for %ld ms\n", o->timeout_ms);
            break;
        }
        idle_ms = 0;
        if (n < 0)
            goto out;
        if (!zmq_msg_more(&topic)) {
            /* Not the feed's two frames: report it and go on. */
            bad++;
            printf("{\"error\": \"a message of one frame\"}\n");
            zmq_msg_close(&topic);
            continue;
        }
        n = feed_recv(s, &body, "a feed message");
        if (n < 0) {
            zmq_msg_close(&topic);
            goto out;
        }
        char name[16] = "";
        size_t tl = zmq_msg_size(&topic) < sizeof name - 1 ? zmq_msg_size(&topic) : sizeof name - 1;
        memcpy(name, zmq_msg_data(&topic), tl);
        /* Drain the frames of a longer message, which the feed never sends. */
        int extra = 0;
        while (zmq_msg_more(&body)) {
            zmq_msg_close(&body);
            if (feed_recv(s, &body, "a feed message") < 0) {
                zmq_msg_close(&topic);
                goto out;
            }
            extra = 1;
        }
        Mpiwatch__Feed *m =
            extra ? NULL : mpiwatch__feed__unpack(NULL, zmq_msg_size(&body), zmq_msg_data(&body));
        /* The job's function ids -> this build's (docs/function-table.md; --pb-hex keeps the
         * bytes as they travelled). */
        static mw_fnmap_t fnmap;
        if (m && m->body_case == MPIWATCH__FEED__BODY_JOB && m->job) {
            char why[256];
            mw_fnmap_free(&fnmap);
            if (mw_fnmap_job(&fnmap, m->job, why, sizeof why) < 0)
                fprintf(stderr, "mpiwatch-feed: %s; function ids taken as this build's\n", why);
        } else if (m && fnmap.to_local && m->body_case == MPIWATCH__FEED__BODY_WINDOW &&
                   m->window) {
            mw_fnmap_window(&fnmap, m->window, NULL);
        } else if (m && fnmap.to_local && m->body_case == MPIWATCH__FEED__BODY_LATENESS &&
                   m->lateness) {
            mw_fnmap_lateness(&fnmap, m->lateness);
        }
        printf("{\"topic\": ");
        json_str(stdout, name);
        int job_end = 0;
        if (!m) {
            bad++;
            printf(", \"error\": \"undecodable\"}\n");
        } else if (m->body_case == MPIWATCH__FEED__BODY_WINDOW && m->window) {
            /* The window's own bytes: the Feed's field 2 as it travelled. */
            const uint8_t *pb = NULL;
            size_t pb_len = 0, at = 0;
            if (wire_next(zmq_msg_data(&body), zmq_msg_size(&body), 2, &at, &pb, &pb_len) < 0)
                pb_len = 0;
            if (windows && m->window->index != prev_window + 1)
                gaps++;
            prev_window = m->window->index;
            windows++;
            const Mpiwatch__Window *w = m->window;
            uint64_t start = w->start_ns ? w->start_ns : w->index * w->window_ns;
            if (!have_origin || w->index < origin_index) {
                origin_index = w->index;
                origin_ns = start;
                have_origin = 1;
            }
            mw_feed_place_t place = {1, w->index - origin_index,
                                     start >= origin_ns ? start - origin_ns : 0};
            printf(", \"window\": ");
            json_window(stdout, w, job, pb, pb_len, o->pb_hex, &place);
            printf("}\n");
        } else if (m->body_case == MPIWATCH__FEED__BODY_JOB && m->job) {
            printf(", \"job\": ");
            json_job(stdout, m->job);
            printf("}\n");
            /* Another job: its windows are numbered from its own first one. */
            if (job && strcmp(job->job ? job->job : "", m->job->job ? m->job->job : "") != 0)
                have_origin = 0;
            if (job_msg)
                mpiwatch__feed__free_unpacked(job_msg, NULL);
            job_msg = m;
            job = m->job;
            m = NULL;
        } else if (m->body_case == MPIWATCH__FEED__BODY_EVENT && m->event) {
            printf(", \"event\": ");
            json_event(stdout, m->event);
            printf("}\n");
            job_end = m->event->kind && strcmp(m->event->kind, "job_end") == 0;
        } else if (m->body_case == MPIWATCH__FEED__BODY_LATENESS && m->lateness) {
            printf(", \"lateness\": ");
            json_lateness(stdout, m->lateness);
            printf("}\n");
        } else if (m->body_case == MPIWATCH__FEED__BODY_TRACE && m->trace && m->trace->trace) {
            /* A reach-back trace of a closed window: what it is, not its records (mpiwatch
             * export --format trace decodes them from the recording). */
            const Mpiwatch__Trace *tr = m->trace->trace;
            printf(", \"trace\": {\"rank\": %u, \"window\": %llu, \"state\": %u, "
                   "\"records\": %u, \"left_out\": %llu, \"capture\": %llu}}\n",
                   m->trace->rank, (unsigned long long)tr->window, tr->state, tr->count,
                   (unsigned long long)tr->left_out, (unsigned long long)tr->capture);
        } else {
            bad++;
            printf(", \"error\": \"empty feed message\"}\n");
        }
        fflush(stdout);
        if (m)
            mpiwatch__feed__free_unpacked(m, NULL);
        zmq_msg_close(&topic);
        zmq_msg_close(&body);
        got++;
        if ((o->count && got >= o->count) || (o->until_job_end && job_end))
            break;
    }
    fprintf(stderr,
            "mpiwatch-feed: %" PRIu64 " messages, %" PRIu64 " windows, %" PRIu64
            " gaps in window indices, %" PRIu64 " undecodable\n",
            got, windows, gaps, bad);
    rc = got ? 0 : 1;
out:
    if (job_msg)
        mpiwatch__feed__free_unpacked(job_msg, NULL);
    if (zmq_close(s) != 0)
        fprintf(stderr, "mpiwatch-feed: zmq_close: %s\n", zmq_strerror(zmq_errno()));
    return rc;
}

/* A function id of the collector's table as a JSON string ("unknown" out of range). */
static void json_fn(FILE *out, uint32_t fn)
{
    const char *name = fn < MW_FN_SPACE ? mw_fn_name(fn) : NULL;
    json_str(out, name ? name : "unknown");
}

static void json_lateness_summary(FILE *out, const Mpiwatch__LatenessSummary *s, int window)
{
    fprintf(out,
            "{\"%s\": %" PRIu64 ", \"events\": %" PRIu64 ", \"lateness_max_ns\": %" PRId64
            ", \"lateness_rank\": %" PRIu32 ", \"lateness_fn\": ",
            window ? "window" : "step", s->key, s->events, s->lateness_max_ns, s->lateness_rank);
    json_fn(out, s->lateness_fn);
    fprintf(out, ", \"diff_max_ns\": %" PRId64 ", \"diff_rank\": %" PRIu32 ", \"diff_fn\": ",
            s->diff_max_ns, s->diff_rank);
    json_fn(out, s->diff_fn);
    fprintf(out, ", \"lost_ns\": %" PRId64, s->lost_ns);
    if (window)
        fprintf(out,
                ", \"lateness_step\": %" PRIu64 ", \"diff_step\": %" PRIu64
                ", \"traced_ranks\": %" PRIu32 ", \"window_ns\": %" PRIu64
                ", \"partitions\": %" PRIu32 ", \"lateness_share\": ",
                s->lateness_step, s->diff_step, s->traced_ranks, s->window_ns, s->partitions);
    if (window && isfinite(s->lateness_share)) /* a peer's NaN / inf is not JSON: null */
        fprintf(out, "%.9g", s->lateness_share);
    else if (window)
        fputs("null", out);
    fputc('}', out);
}

/* A lateness batch (docs/lateness.md): its summaries and the analysis' counters. */
static void json_lateness(FILE *out, const Mpiwatch__Lateness *l)
{
    fprintf(out, "{\"job\": ");
    json_str(out, l->job);
    fprintf(out,
            ", \"window\": %" PRIu64 ", \"gap\": %s, \"extract_ns\": %" PRIu64
            ", \"windows_analysed\": %" PRIu64 ", \"windows_skipped\": %" PRIu64
            ", \"windows_untraced\": %" PRIu64 ", \"gaps\": %" PRIu64 ", \"events\": %" PRIu64
            ", \"partitions\": %" PRIu64 ", \"forced\": %" PRIu64 ", \"unmatched\": %" PRIu64
            ", \"pending_events\": %" PRIu64 ", \"pending_windows\": %" PRIu64
            ", \"bad_traces\": %" PRIu64 ", \"queued\": %" PRIu64 ", \"extract_ns_max\": %" PRIu64
            ", \"windows\": [",
            l->window, l->gap ? "true" : "false", l->extract_ns, l->windows_analysed,
            l->windows_skipped, l->windows_untraced, l->gaps, l->events, l->partitions, l->forced,
            l->unmatched, l->pending_events, l->pending_windows, l->bad_traces, l->queued,
            l->extract_ns_max);
    for (size_t i = 0; i < l->n_windows; i++) {
        fputs(i ? ", " : "", out);
        json_lateness_summary(out, l->windows[i], 1);
    }
    fputs("], \"steps\": [", out);
    for (size_t i = 0; i < l->n_steps; i++) {
        fputs(i ? ", " : "", out);
        json_lateness_summary(out, l->steps[i], 0);
    }
    fputs("]}", out);
}

/* ---- --history ---------------------------------------------------------------------------- */

/* Prints a reply: one JSON line. With --pb-hex each window and sample carries the bytes it
 * had in the reply. Returns 0 when the reply has no error. */
static int feed_print_reply(const uint8_t *data, size_t len, int with_pb)
{
    Mpiwatch__HistoryReply *r = mpiwatch__history_reply__unpack(NULL, len, data);
    if (!r) {
        printf("{\"error\": \"the reply does not decode as a HistoryReply\"}\n");
        return 1;
    }
    mw_fnmap_t fnmap = {0}; /* the job's function ids -> this build's: windows, rank sums */
    if (r->job && mw_fnmap_job(&fnmap, r->job, NULL, 0) == 0) {
        for (size_t i = 0; i < r->n_windows; i++)
            if (r->windows[i])
                mw_fnmap_window(&fnmap, r->windows[i], NULL);
        for (size_t i = 0; i < r->n_rank_sums; i++)
            if (r->rank_sums[i] && r->rank_sums[i]->sums && !mw_rec_ranks_check(r->rank_sums[i]))
                mw_fnmap_window(&fnmap, r->rank_sums[i]->sums, NULL);
    }
    mw_fnmap_free(&fnmap);
    printf("{\"id\": %" PRIu64 ", \"error\": ", r->id);
    json_str(stdout, r->error);
    printf(", \"oldest\": %" PRIu64 ", \"newest\": %" PRIu64 ", \"truncated\": %s, \"tier\": ",
           r->oldest, r->newest, r->truncated ? "true" : "false");
    json_str(stdout, r->tier); /* where the answer came from (docs/recording.md, Tiers) */
    printf(", \"job\": ");
    if (r->job)
        json_job(stdout, r->job);
    else
        printf("null");
    printf(", \"windows\": [");
    const uint8_t *pb = NULL;
    size_t pb_len = 0, at = 0;
    /* The n-th window of the reply is the n-th field 4, the n-th sample the n-th field 5. */
    for (size_t i = 0; i < r->n_windows; i++) {
        if (with_pb && wire_next(data, len, 4, &at, &pb, &pb_len) < 0)
            pb_len = 0;
        printf("%s", i ? ", " : "");
        json_window(stdout, r->windows[i], r->job, pb, pb_len, with_pb, NULL);
    }
    printf("], \"samples\": [");
    at = 0;
    for (size_t i = 0; i < r->n_samples; i++) {
        if (with_pb && wire_next(data, len, 5, &at, &pb, &pb_len) < 0)
            pb_len = 0;
        printf("%s", i ? ", " : "");
        json_sample(stdout, r->samples[i], pb, pb_len, with_pb);
    }
    printf("], \"lateness\": [");
    for (size_t i = 0; i < r->n_lateness; i++) {
        printf("%s", i ? ", " : "");
        json_lateness(stdout, r->lateness[i]);
    }
    /* A rank's coarse sums (where its samples were dropped); a frame with inconsistent arrays
     * is left out. */
    printf("], \"rank_sums\": [");
    size_t shown = 0;
    for (size_t i = 0; i < r->n_rank_sums; i++) {
        const Mpiwatch__RecordRanks *rk = r->rank_sums[i];
        const char *why = rk ? mw_rec_ranks_check(rk) : "empty";
        if (why) {
            fprintf(stderr, "mpiwatch-feed: per-rank sums %zu of the reply left out: %s\n", i, why);
            continue;
        }
        printf("%s", shown++ ? ", " : "");
        mw_rank_sums_json(stdout, rk);
    }
    printf("]}\n");
    int rc = r->error && r->error[0] ? 1 : 0;
    if (rc)
        fprintf(stderr, "mpiwatch-feed: the collector says: %s\n", r->error);
    mpiwatch__history_reply__free_unpacked(r, NULL);
    return rc;
}

static int feed_history(void *ctx, const feed_opts_t *o)
{
    Mpiwatch__HistoryRequest q = MPIWATCH__HISTORY_REQUEST__INIT;
    Mpiwatch__WindowRange range = MPIWATCH__WINDOW_RANGE__INIT;
    Mpiwatch__RankRange rank = MPIWATCH__RANK_RANGE__INIT;
    q.id = o->id;
    if (o->job) {
        q.what_case = MPIWATCH__HISTORY_REQUEST__WHAT_JOB;
        q.job = 1;
    } else if (o->have_lateness) {
        q.what_case = MPIWATCH__HISTORY_REQUEST__WHAT_LATENESS;
        q.lateness = (uint32_t)o->lateness;
    } else if (o->have_last) {
        q.what_case = MPIWATCH__HISTORY_REQUEST__WHAT_LAST;
        q.last = (uint32_t)o->last;
    } else if (o->have_rank) {
        q.what_case = MPIWATCH__HISTORY_REQUEST__WHAT_RANK_SAMPLES;
        rank.rank = o->rank;
        rank.first = o->first_w;
        rank.last = o->last_w;
        q.rank_samples = &rank;
    } else {
        q.what_case = MPIWATCH__HISTORY_REQUEST__WHAT_RANGE;
        range.first = o->first_w;
        range.last = o->last_w;
        q.range = &range;
    }
    size_t len = mpiwatch__history_request__get_packed_size(&q);
    uint8_t req[256];
    mpiwatch__history_request__pack(&q, req);

    void *s = zmq_socket(ctx, o->dealer ? ZMQ_DEALER : ZMQ_REQ);
    if (!s) {
        fprintf(stderr, "mpiwatch-feed: zmq_socket: %s\n", zmq_strerror(zmq_errno()));
        return 1;
    }
    int rc = 1, linger = 0, timeout = o->timeout_ms < 0 ? -1 : (int)o->timeout_ms;
    int64_t maxmsg = FEED_MAX_REPLY;
    zmq_msg_t msg;
    if (feed_setopt(s, ZMQ_LINGER, &linger, sizeof linger, "ZMQ_LINGER") < 0 ||
        feed_setopt(s, ZMQ_RCVTIMEO, &timeout, sizeof timeout, "ZMQ_RCVTIMEO") < 0 ||
        feed_setopt(s, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg, "ZMQ_MAXMSGSIZE") < 0)
        goto out;
    if (feed_curve_apply(s) < 0)
        goto out;
    if (zmq_connect(s, o->history) != 0) {
        fprintf(stderr, "mpiwatch-feed: cannot connect to %s: %s\n", o->history,
                zmq_strerror(zmq_errno()));
        goto out;
    }
    if (zmq_send(s, req, len, 0) < 0) {
        fprintf(stderr, "mpiwatch-feed: cannot send the request: %s\n", zmq_strerror(zmq_errno()));
        goto out;
    }
    int n = feed_recv(s, &msg, "the reply");
    /* A DEALER sees whatever envelope the server used: skip an empty delimiter. */
    while (n == 0 && zmq_msg_more(&msg)) {
        zmq_msg_close(&msg);
        n = feed_recv(s, &msg, "the reply");
    }
    if (n == -2) {
        fprintf(stderr, "mpiwatch-feed: no reply from %s within %ld ms\n", o->history,
                o->timeout_ms);
        goto out;
    }
    if (n < 0)
        goto out;
    if (zmq_msg_more(&msg)) {
        fprintf(stderr, "mpiwatch-feed: the reply has more than one frame\n");
        zmq_msg_close(&msg);
        goto out;
    }
    rc = feed_print_reply(zmq_msg_data(&msg), zmq_msg_size(&msg), o->pb_hex);
    fflush(stdout);
    zmq_msg_close(&msg);
out:
    if (zmq_close(s) != 0)
        fprintf(stderr, "mpiwatch-feed: zmq_close: %s\n", zmq_strerror(zmq_errno()));
    return rc;
}

/* ---- command line ------------------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mpiwatch-feed --subscribe ENDPOINT [--topic T]... [--count N] "
            "[--until-job-end]\n"
            "       mpiwatch-feed --history ENDPOINT (--last N | --range A:B | --rank R --range "
            "A:B | --job)\n"
            "                     [--dealer] [--id N]\n"
            "common: [--timeout-ms MS] [--pb-hex] [--curve-server FILE --curve-key FILE]\n"
            "\n"
            "  --subscribe EP     print every message of a collector's --publish feed\n"
            "  --topic T          only topic T (job, window, event, step, trace,\n"
            "                     lateness); repeatable\n"
            "  --count N          exit after N messages\n"
            "  --until-job-end    exit after the job_end event\n"
            "  --history EP       ask a collector's --history endpoint and print the reply\n"
            "  --last N           the last N closed windows\n"
            "  --lateness N       the last N lateness batches (docs/lateness.md)\n"
            "  --range A:B        windows A..B (grid indices), or with --rank the rank's samples\n"
            "  --rank R           raw samples of world rank R (where the recording dropped\n"
            "                     them: the rank's per-rank sums, \"rank_sums\", tier coarse)\n"
            "  --job              the job description\n"
            "  --dealer           ask through a DEALER socket instead of REQ\n"
            "  --id N             request id, echoed in the reply\n"
            "  --timeout-ms MS    subscribe: stop after MS without a message (default: never; "
            "exit 1 if\n"
            "                     nothing came); history: wait at most MS for the reply (10000)\n"
            "  --pb-hex           add the encoded bytes of windows and samples as hex (\"pb\")\n"
            "  --curve-server FILE  the collector's CURVE public key (.pub; default\n"
            "                     $MPIWATCH_CURVE_SERVER), with --curve-key FILE, this client's\n"
            "                     key pair (.key; $MPIWATCH_CURVE_KEY): docs/security.md\n"
            "Output: JSON lines on stdout. Exit status 0, 1 on an error or an error reply, 2 on a "
            "usage error.\n");
    fputs("\n  -h, --help         print this help and exit\n"
          "      --version      print the version and exit\n",
          f);
}

static int parse_u64(const char *s, uint64_t *v)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || end == s || *end || *s == '-')
        return -1;
    *v = x;
    return 0;
}

/* 1 when one of the --topic prefixes lets `topic` through. */
static int feed_topic_has(const feed_opts_t *o, const char *topic)
{
    for (int i = 0; i < o->n_topics; i++)
        if (strncmp(topic, o->topics[i], strlen(o->topics[i])) == 0)
            return 1;
    return 0;
}

/* "A:B" into two integers. */
static int parse_range(const char *s, uint64_t *a, uint64_t *b)
{
    char first[32];
    const char *colon = strchr(s, ':');
    if (!colon || (size_t)(colon - s) >= sizeof first)
        return -1;
    memcpy(first, s, (size_t)(colon - s));
    first[colon - s] = 0;
    return parse_u64(first, a) < 0 || parse_u64(colon + 1, b) < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"subscribe", required_argument, NULL, 's'},
                                             {"history", required_argument, NULL, 'H'},
                                             {"topic", required_argument, NULL, 't'},
                                             {"count", required_argument, NULL, 'n'},
                                             {"until-job-end", no_argument, NULL, 'e'},
                                             {"last", required_argument, NULL, 'l'},
                                             {"range", required_argument, NULL, 'r'},
                                             {"rank", required_argument, NULL, 'R'},
                                             {"job", no_argument, NULL, 'j'},
                                             {"lateness", required_argument, NULL, 'L'},
                                             {"dealer", no_argument, NULL, 'd'},
                                             {"id", required_argument, NULL, 'i'},
                                             {"timeout-ms", required_argument, NULL, 'T'},
                                             {"pb-hex", no_argument, NULL, 'x'},
                                             {"help", no_argument, NULL, 'h'},
                                             {"version", no_argument, NULL, 'V'},
                                             {"curve-server", required_argument, NULL, 'S'},
                                             {"curve-key", required_argument, NULL, 'K'},
                                             {NULL, 0, NULL, 0}};
    feed_opts_t o = {.timeout_ms = -2};
    int c;
    uint64_t v;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 's':
            o.subscribe = optarg;
            break;
        case 'H':
            o.history = optarg;
            break;
        case 't':
            if (o.n_topics == FEED_MAX_TOPICS) {
                fprintf(stderr, "mpiwatch-feed: at most %d --topic\n", FEED_MAX_TOPICS);
                return 2;
            }
            o.topics[o.n_topics++] = optarg;
            break;
        case 'n':
            if (parse_u64(optarg, &o.count) < 0 || o.count == 0) {
                fprintf(stderr, "mpiwatch-feed: --count: a positive integer, not '%s'\n", optarg);
                return 2;
            }
            break;
        case 'e':
            o.until_job_end = 1;
            break;
        case 'L':
            if (parse_u64(optarg, &o.lateness) < 0 || o.lateness > UINT32_MAX) {
                fprintf(stderr, "mpiwatch-feed: --lateness: 0..%u, not '%s'\n", UINT32_MAX, optarg);
                return 2;
            }
            o.have_lateness = 1;
            break;
        case 'l':
            if (parse_u64(optarg, &o.last) < 0 || o.last > UINT32_MAX) {
                fprintf(stderr, "mpiwatch-feed: --last: 0..%u, not '%s'\n", UINT32_MAX, optarg);
                return 2;
            }
            o.have_last = 1;
            break;
        case 'r':
            if (parse_range(optarg, &o.first_w, &o.last_w) < 0) {
                fprintf(stderr, "mpiwatch-feed: --range: A:B (window indices), not '%s'\n", optarg);
                return 2;
            }
            o.have_range = 1;
            break;
        case 'R':
            if (parse_u64(optarg, &v) < 0 || v > UINT32_MAX) {
                fprintf(stderr, "mpiwatch-feed: --rank: a world rank, not '%s'\n", optarg);
                return 2;
            }
            o.rank = (uint32_t)v;
            o.have_rank = 1;
            break;
        case 'j':
            o.job = 1;
            break;
        case 'd':
            o.dealer = 1;
            break;
        case 'i':
            if (parse_u64(optarg, &o.id) < 0) {
                fprintf(stderr, "mpiwatch-feed: --id: an integer, not '%s'\n", optarg);
                return 2;
            }
            break;
        case 'T':
            if (parse_u64(optarg, &v) < 0 || v > 86400000) {
                fprintf(stderr, "mpiwatch-feed: --timeout-ms: 0..86400000, not '%s'\n", optarg);
                return 2;
            }
            o.timeout_ms = (long)v;
            break;
        case 'x':
            o.pb_hex = 1;
            break;
        case 'S':
            o.curve_server = optarg;
            break;
        case 'K':
            o.curve_key = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        case 'V':
            printf("mpiwatch-feed %s\n", MW_VERSION_FULL);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    const char *err = NULL;
    int asks = o.have_last + o.job + (o.have_range && !o.have_rank) + o.have_rank + o.have_lateness;
    if (optind < argc)
        err = "unexpected arguments";
    else if (!o.subscribe == !o.history)
        err = "give exactly one of --subscribe and --history";
    else if (o.history && asks != 1)
        err = "give exactly one of --last, --range, --rank R --range, --job, --lateness";
    else if (o.have_rank && !o.have_range)
        err = "--rank needs --range A:B";
    else if (o.have_range && o.first_w > o.last_w)
        err = "--range A:B needs A <= B";
    else if (o.subscribe && (asks || o.dealer))
        err = "--last, --range, --rank, --job, --lateness and --dealer go with --history";
    else if (o.history && (o.count || o.until_job_end || o.n_topics))
        err = "--topic, --count and --until-job-end go with --subscribe";
    else if (o.until_job_end && o.n_topics && !feed_topic_has(&o, "event"))
        err = "--until-job-end needs the event topic (the job_end event ends it)";
    if (err) {
        fprintf(stderr, "mpiwatch-feed: %s (try --help)\n", err);
        return 2;
    }
    if (o.timeout_ms == -2)
        o.timeout_ms = o.history ? 10000 : -1;
    char kerr[600];
    feed_curve_on =
        mw_curve_client_load(o.curve_server, o.curve_key, &feed_curve, kerr, sizeof kerr);
    if (feed_curve_on < 0) {
        fprintf(stderr, "mpiwatch-feed: %s\n", kerr);
        return 2;
    }

    void *ctx = zmq_ctx_new();
    if (!ctx) {
        fprintf(stderr, "mpiwatch-feed: zmq_ctx_new: %s\n", zmq_strerror(zmq_errno()));
        return 1;
    }
    int rc = o.subscribe ? feed_subscribe(ctx, &o) : feed_history(ctx, &o);
    while (zmq_ctx_term(ctx) != 0 && zmq_errno() == EINTR)
        ;
    return rc;
}
