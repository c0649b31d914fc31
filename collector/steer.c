/* steer.c: steering messages from the collector to the ranks (--steer, --control).
 *
 * DESIGN: two sockets on the collector's one loop, both optional. --steer binds a PUB socket
 * that every rank's sender thread connects a SUB socket to (MPIWATCH_STEER); each Steer is
 * sent as two frames, the topic "steer" and the message, with ZMQ_DONTWAIT, so a slow rank
 * loses messages (libzmq drops at its high-water mark) instead of stalling ingest. --control
 * binds a ROUTER that answers SteerRequests from `mpiwatch-steer` (REQ: identity, empty
 * delimiter, body; DEALER: identity, body) with one SteerReply each. Every request is
 * validated before anything is published: the key (1..64 of [A-Za-z0-9._-]), the value (at
 * most 1024 bytes of valid UTF-8 without control characters) and the ranks (each below the
 * job size; no job yet means the list cannot be checked and is refused). Rejects are counted
 * and reported in the reply. The rules engine (rules.c) publishes through mw__steer_send(),
 * the same path. Every published Steer is also a "steer" job event, so it appears in the
 * recording and on the live feed. Serving is bounded per wakeup (STEER_BATCH).
 *
 * Size: a rank's SUB socket refuses frames over MW_STEER_RANK_MAX_MESSAGE, and libzmq then
 * drops the whole connection, so one oversized Steer would cut a rank off from steering. The
 * collector therefore never publishes a Steer over MW_STEER_MAX_MESSAGE (proto/mw_proto.h,
 * 8 KiB, a quarter of the ranks' limit): the rank list is sorted, duplicates are removed, and
 * when key, value, job and ranks do not fit one message the ranks are split over as many
 * Steers as needed (each lists a disjoint part, all carry the same seq, so every listed rank
 * gets the request exactly once). 4096 ranks and a 1024-byte value make two or three Steers.
 * A request that could not fit even with one rank per message (it cannot happen within the
 * key, value and job-name caps) is refused with an error and counted in `rejected`.
 *
 * One built-in key is decided here rather than passed through: mpiwatch.window=MS changes the
 * window length of the whole job (proto/mw_grid.c). The collector checks it, picks the window K it
 * starts at (about a second ahead of its clock and of the window most ranks have reached, never
 * of what one rank claims: steer_pick_k), publishes MS@K to every rank,
 * appends the segment to the job's grid and records a "window" job event, which replay
 * applies again so that it merges the same windows.
 */
#include "collector.h"
#include "steer.h"
#include "zsock.h"
#include "publish.h"
#include "mw_steer_request.h"
#include "mw_wire.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEER_PUB_HWM 1000            /* Steer messages queued per rank before libzmq drops */
#define STEER_REQUEST_MAX (16u << 10) /* a SteerRequest is at most ~1.1 KiB plus ranks */
#define STEER_BATCH 16                /* requests answered per wakeup */

struct mw_steer {
    void *pub, *router;
    uint64_t seq;             /* last published sequence number */
    uint64_t published;       /* Steer messages sent */
    uint64_t rejected;        /* requests (or mw__steer_send calls) refused */
    uint64_t window_rejected; /* ... of which mpiwatch.window requests */
    uint64_t send_errors;
    uint64_t split; /* requests published as more than one Steer (rank lists split by size) */
    uint64_t parts; /* Steer messages those were split into */
};

/* Checks a key (1..64 of [A-Za-z0-9._-]), a value (at most 1024 bytes of UTF-8 without
 * control characters) and a rank list (each < job size when the job size is known). Returns 0,
 * or -1 with a message in err. */
static int steer_check(const mw_collector_t *c, const char *key, const char *value,
                       const uint32_t *ranks, size_t n_ranks, char *err, size_t errlen)
{
    size_t kl = key ? strlen(key) : 0, at;
    if (mw_steer_key_error(key ? key : "", &at)) { /* the one key check (proto/) */
        if (at >= kl)
            snprintf(err, errlen, "key must have 1 to %u characters", MW_STEER_MAX_KEY);
        else
            snprintf(err, errlen, "key may only contain A-Z a-z 0-9 . _ - (found byte 0x%02x)",
                     (unsigned)(unsigned char)key[at]);
        return -1;
    }
    size_t vl = value ? strlen(value) : 0;
    if (vl > MW_STEER_MAX_VALUE) {
        snprintf(err, errlen, "value longer than %u bytes", MW_STEER_MAX_VALUE);
        return -1;
    }
    if (vl && !mw_wire_text_ok((const unsigned char *)value, vl)) { /* the one text check */
        snprintf(err, errlen, "value is not UTF-8 text without control characters");
        return -1;
    }
    if (n_ranks > MW_STEER_MAX_RANKS) {
        snprintf(err, errlen, "more than %u ranks listed", MW_STEER_MAX_RANKS);
        return -1;
    }
    if (n_ranks && !c->job.active) {
        snprintf(err, errlen, "no job yet: ranks cannot be checked");
        return -1;
    }
    for (size_t i = 0; i < n_ranks; i++)
        if (ranks[i] >= c->job.size) {
            snprintf(err, errlen, "rank %u is not below the job size %u", ranks[i], c->job.size);
            return -1;
        }
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Sends one Steer (two frames). Returns 0, or -1 with zmq_errno() set. */
static int steer_send_one(mw_steer_t *s, const Mpiwatch__Steer *m, uint8_t *buf)
{
    size_t len = mpiwatch__steer__pack(m, buf);
    if (zmq_send(s->pub, "steer", 5, ZMQ_SNDMORE | ZMQ_DONTWAIT) != 5 ||
        zmq_send(s->pub, buf, len, ZMQ_DONTWAIT) != (int)len)
        return -1;
    return 0;
}

/* Publishes one checked Steer, split by ranks into messages of at most MW_STEER_MAX_MESSAGE
 * bytes (see the top of the file); returns its sequence number, or -1. */
static int steer_publish(mw_collector_t *c, const char *key, const char *value,
                         const uint32_t *ranks, size_t n_ranks, char *err, size_t errlen)
{
    mw_steer_t *s = c->steer;
    Mpiwatch__Steer m = MPIWATCH__STEER__INIT;
    m.seq = s->seq + 1;
    m.job = c->job.job;
    m.key = (char *)key;
    m.value = (char *)(value ? value : "");
    /* Sorted and without duplicates: the parts are disjoint, no rank hears a request twice. */
    uint32_t *sorted = malloc((n_ranks ? n_ranks : 1) * sizeof *sorted);
    uint8_t *buf = malloc(MW_STEER_MAX_MESSAGE);
    if (!sorted || !buf) {
        free(sorted);
        free(buf);
        s->send_errors++;
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    size_t nr = 0;
    if (n_ranks) {
        memcpy(sorted, ranks, n_ranks * sizeof *sorted);
        qsort(sorted, n_ranks, sizeof *sorted, cmp_u32);
        for (size_t i = 0; i < n_ranks; i++)
            if (nr == 0 || sorted[i] != sorted[nr - 1])
                sorted[nr++] = sorted[i];
    }
    /* The message without ranks, and the room left for the packed ranks field (its tag, its
     * length varint and the rank varints). */
    size_t base = mpiwatch__steer__get_packed_size(&m);
    size_t room = base + 1 + 2 < MW_STEER_MAX_MESSAGE ? MW_STEER_MAX_MESSAGE - base - 1 - 2 : 0;
    if (nr ? room < 5 : base > MW_STEER_MAX_MESSAGE) { /* not within the caps: never sent */
        free(sorted);
        free(buf);
        s->rejected++;
        snprintf(err, errlen, "the steering message would exceed %u bytes", MW_STEER_MAX_MESSAGE);
        MW_LOG(MW_LOG_WARN, "steer: rejected: %s", err);
        return -1;
    }
    unsigned parts = 0;
    int ok = 1;
    size_t pos = 0;
    do {
        /* As many ranks as fit (room counts a 2-byte length varint: at most 16383 bytes). */
        size_t take = 0, bytes = 0;
        while (pos + take < nr && bytes + mw_wire_varint_len(sorted[pos + take]) <= room) {
            bytes += mw_wire_varint_len(sorted[pos + take]);
            take++;
        }
        m.ranks = nr ? sorted + pos : NULL;
        m.n_ranks = take;
        if (mpiwatch__steer__get_packed_size(&m) > MW_STEER_MAX_MESSAGE ||
            steer_send_one(s, &m, buf) < 0) {
            ok = 0;
            break;
        }
        pos += take;
        parts++;
    } while (pos < nr);
    free(sorted);
    free(buf);
    if (!ok) {
        s->send_errors++;
        snprintf(err, errlen, "cannot publish%s: %s", parts ? " all parts" : "",
                 zmq_strerror(zmq_errno()));
        MW_LOG(MW_LOG_WARN, "steer: %s", err);
        return -1;
    }
    if (parts > 1) {
        s->split++;
        s->parts += parts;
        MW_LOG(MW_LOG_DEBUG, "steer #%llu: %zu ranks in %u messages", (unsigned long long)m.seq, nr,
               parts);
    }
    s->seq = m.seq;
    s->published++;
    /* The event's detail: "key=value" and the ranks, cut to a readable length. */
    char detail[256];
    int n = snprintf(detail, sizeof detail, "%s=%.120s", key, m.value);
    if (n_ranks && n > 0 && (size_t)n < sizeof detail) {
        size_t at = (size_t)n;
        at += (size_t)snprintf(detail + at, sizeof detail - at, " ranks");
        for (size_t i = 0; i < n_ranks && at < sizeof detail - 16; i++)
            at +=
                (size_t)snprintf(detail + at, sizeof detail - at, "%s%u", i ? "," : " ", ranks[i]);
    }
    if (c->clock)
        c->clock(&c->now);
    mw__publish_event(c, "steer", detail); /* recording, feed and live view */
    MW_LOG(MW_LOG_INFO, "steer #%llu: %s", (unsigned long long)m.seq, detail);
    return (int)(m.seq & 0x7fffffff) ? (int)(m.seq & 0x7fffffff) : 1;
}

/* The K of an mpiwatch.window request: the first window about a second (MW_GRID_LEAD_NS) after
 * the job's present. The present is the collector's clock, or the end of the window most ranks
 * have reached when that is later (ranks whose clock runs ahead of the collector's), never the
 * newest window any one rank claims: one rank, or one forged sample, must not be able to push
 * K past the 60 s the ranks accept (they would refuse the change and every later sample would
 * be a grid_mismatch). Ingest already refuses a window starting over MW_SAMPLE_MAX_LEAD_NS
 * ahead (reason ahead); the median is clamped to that lead as well. */
static uint64_t steer_pick_k(mw_collector_t *c)
{
    int64_t newest = mw__merge_median_last(&c->merge);
    uint64_t limit = mw_grid_index(&c->job.grid, c->now.real_ns + MW_SAMPLE_MAX_LEAD_NS);
    if (newest >= 0 && (uint64_t)newest > limit)
        newest = (int64_t)limit;
    return mw_grid_pick(&c->job.grid, c->now.real_ns, newest);
}

/* mpiwatch.window=MS, the one built-in key the collector decides (proto/mw_grid.c): checks it for
 * the whole job and turns it into MS@K, K the window the change starts at. Returns 0, or -1. */
static int steer_window(mw_collector_t *c, const char *value, size_t n_ranks, char *out,
                        size_t outlen, uint64_t *k, uint64_t *ms, char *err, size_t errlen)
{
    if (n_ranks) {
        snprintf(err, errlen, "mpiwatch.window changes the whole job's grid: no rank list");
        return -1;
    }
    if (!c->job.active || c->job.ended != MW_END_NONE || !c->merge_ready) {
        snprintf(err, errlen, "mpiwatch.window: no running job");
        return -1;
    }
    if (mw_grid_parse_ms(value, ms) < 0) {
        snprintf(err, errlen, "mpiwatch.window: the value must be a window length in ms (digits)");
        return -1;
    }
    if (mw_grid_check(&c->job.grid, *ms, mw__merge_min_window_ns(&c->merge), err, errlen) < 0)
        return -1;
    /* Now, not the batch's clock: the lead is counted from when the message leaves (a
     * replay never gets here: it has no steering socket, it applies the recorded event). */
    if (c->clock)
        c->clock(&c->now);
    *k = steer_pick_k(c);
    snprintf(out, outlen, "%" PRIu64 "@%" PRIu64, *ms, *k);
    return 0;
}

/* The grid change of a published mpiwatch.window: the job's grid and the "window" event,
 * which a replay applies again (mw__grid_apply_event). */
static void steer_window_apply(mw_collector_t *c, uint64_t k, uint64_t ms)
{
    char err[160], detail[160];
    if (mw_grid_append(&c->job.grid, k, ms, err, sizeof err) < 0) {
        MW_LOG(MW_LOG_ERROR, "mpiwatch.window: %s", err); /* checked before: not reached */
        return;
    }
    snprintf(detail, sizeof detail, "window=%" PRIu64 "ms from window %" PRIu64 " start %" PRIu64,
             ms, k, mw_grid_start(&c->job.grid, k));
    mw__publish_event(c, "window", detail);
    mw__publish_job(c); /* JobInfo.grid */
    char wl[96];
    MW_LOG(MW_LOG_INFO, "window length %" PRIu64 " ms from window %s", ms,
           mw__job_windows_label(&c->job, k, k, wl, sizeof wl));
}

int mw__grid_apply_event(mw_collector_t *c, const char *detail)
{
    uint64_t ms, k, start;
    char err[160];
    if (!c->job.active ||
        sscanf(detail, "window=%" SCNu64 "ms from window %" SCNu64 " start %" SCNu64, &ms, &k,
               &start) != 3)
        return -1;
    if (mw_grid_append(&c->job.grid, k, ms, err, sizeof err) < 0 ||
        mw_grid_start(&c->job.grid, k) != start) {
        MW_LOG(MW_LOG_WARN, "recorded window change '%s' not applied: %s", detail,
               mw_grid_start(&c->job.grid, k) != start ? "another grid" : err);
        return -1;
    }
    mw__publish_event(c, "window", detail);
    mw__publish_job(c);
    return 0;
}

static int steer_request(mw_collector_t *c, const char *key, const char *value,
                         const uint32_t *ranks, size_t n_ranks, char *err, size_t errlen,
                         uint64_t *seq)
{
    if (!c->steer || !c->steer->pub) {
        snprintf(err, errlen, "steering is off (no --steer)");
        if (c->steer)
            c->steer->rejected++;
        return -1;
    }
    char window_value[48];
    uint64_t k = 0, ms = 0;
    int window = key && strcmp(key, "mpiwatch.window") == 0;
    if (window) {
        if (steer_window(c, value, n_ranks, window_value, sizeof window_value, &k, &ms, err,
                         errlen) < 0) {
            c->steer->rejected++;
            c->steer->window_rejected++;
            MW_LOG(MW_LOG_INFO, "steer: rejected: %s", err);
            return -1;
        }
        value = window_value;
    }
    if (steer_check(c, key, value, ranks, n_ranks, err, errlen) < 0) {
        c->steer->rejected++;
        MW_LOG(MW_LOG_INFO, "steer: rejected: %s", err);
        return -1;
    }
    if (steer_publish(c, key, value, ranks, n_ranks, err, errlen) < 0)
        return -1;
    if (window)
        steer_window_apply(c, k, ms);
    *seq = c->steer->seq;
    return 0;
}

int mw__steer_send(mw_collector_t *c, const char *key, const char *value, const uint32_t *ranks,
                   size_t n_ranks)
{
    char err[160];
    uint64_t seq = 0;
    if (steer_request(c, key, value, ranks, n_ranks, err, sizeof err, &seq) < 0)
        return -1;
    return (int)(seq & 0x7fffffff) ? (int)(seq & 0x7fffffff) : 1;
}

void *mw__steer_pub(const mw_collector_t *c)
{
    return c->steer ? c->steer->pub : NULL;
}

uint64_t mw__steer_rejected(const mw_collector_t *c)
{
    return c->steer ? c->steer->rejected : 0;
}

uint64_t mw__steer_window_rejected(const mw_collector_t *c)
{
    return c->steer ? c->steer->window_rejected : 0;
}

static void *steer_socket(void *ctx, int type, const char *ep, const char *what)
{
    static const mw_serve_opts_t pub = {200, STEER_PUB_HWM, 0, 4096};
    static const mw_serve_opts_t router = {0, 16, 1000, STEER_REQUEST_MAX};
    return mw__zmq_serve_socket(ctx, type, ep, what, type == ZMQ_PUB ? &pub : &router);
}

mw_steer_t *mw__steer_open(void *zmq_ctx, const mw_collector_options_t *opt)
{
    mw_steer_t *s = calloc(1, sizeof *s);
    if (!s) {
        MW_LOG(MW_LOG_ERROR, "cannot start steering: out of memory");
        return NULL;
    }
    if (opt->steer && !(s->pub = steer_socket(zmq_ctx, ZMQ_PUB, opt->steer, "steering")))
        goto fail;
    if (opt->control &&
        !(s->router = steer_socket(zmq_ctx, ZMQ_ROUTER, opt->control, "steering control")))
        goto fail;
    return s;
fail:
    mw__steer_close(s);
    return NULL;
}

void mw__steer_close(mw_steer_t *s)
{
    if (!s)
        return;
    if (s->pub || s->router)
        MW_LOG(MW_LOG_INFO,
               "steer: published %llu, rejected %llu, send errors %llu, split %llu (into %llu "
               "messages)",
               (unsigned long long)s->published, (unsigned long long)s->rejected,
               (unsigned long long)s->send_errors, (unsigned long long)s->split,
               (unsigned long long)s->parts);
    if (s->pub && zmq_close(s->pub) != 0)
        MW_LOG(MW_LOG_ERROR, "zmq_close: %s", zmq_strerror(zmq_errno()));
    if (s->router && zmq_close(s->router) != 0)
        MW_LOG(MW_LOG_ERROR, "zmq_close: %s", zmq_strerror(zmq_errno()));
    free(s);
}

void mw__steer_pollitem(mw_steer_t *s, zmq_pollitem_t *item)
{
    memset(item, 0, sizeof *item);
    item->fd = -1;
    if (s && s->router) {
        item->socket = s->router;
        item->events = ZMQ_POLLIN;
    }
}

/* Sends the reply behind the request's envelope (identity, and the delimiter for REQ). */
static void steer_reply(mw_steer_t *s, zmq_msg_t *id, int delimiter, int ok, const char *error,
                        uint64_t seq)
{
    Mpiwatch__SteerReply r = MPIWATCH__STEER_REPLY__INIT;
    r.ok = ok;
    r.error = (char *)(error ? error : "");
    r.seq = seq;
    uint8_t buf[512];
    size_t len = mpiwatch__steer_reply__get_packed_size(&r);
    if (len > sizeof buf)
        return;
    mpiwatch__steer_reply__pack(&r, buf);
    if (zmq_send(s->router, zmq_msg_data(id), zmq_msg_size(id), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
        (delimiter && zmq_send(s->router, "", 0, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) ||
        zmq_send(s->router, buf, len, ZMQ_DONTWAIT) < 0)
        s->send_errors++;
}

void mw__steer_serve(mw_collector_t *c)
{
    mw_steer_t *s = c->steer;
    if (!s || !s->router)
        return;
    for (int i = 0; i < STEER_BATCH; i++) {
        zmq_msg_t msgs[3];
        int kept;
        int parts = mw__zsock_recv(s->router, msgs, &kept, "steer");
        if (parts <= 0) {
            mw__zsock_close(msgs, kept);
            return;
        }
        int delimiter = parts == 3;
        if (!mw__zsock_envelope_ok(msgs, parts)) {
            s->rejected++; /* no usable envelope to answer */
            MW_LOG(MW_LOG_DEBUG, "steer: dropped a request of %d frames", parts);
        } else {
            zmq_msg_t *body = &msgs[parts - 1];
            char err[160] = "";
            uint64_t seq = 0;
            Mpiwatch__SteerRequest *rq =
                zmq_msg_size(body) > STEER_REQUEST_MAX
                    ? NULL
                    : mpiwatch__steer_request__unpack(NULL, zmq_msg_size(body), zmq_msg_data(body));
            int ok = 0;
            if (!rq) {
                s->rejected++;
                snprintf(err, sizeof err, "not a SteerRequest");
            } else {
                ok = steer_request(c, rq->key, rq->value, rq->ranks, rq->n_ranks, err, sizeof err,
                                   &seq) == 0;
                mpiwatch__steer_request__free_unpacked(rq, NULL);
            }
            steer_reply(s, &msgs[0], delimiter, ok, ok ? "" : err, seq);
        }
        mw__zsock_close(msgs, kept);
    }
}
