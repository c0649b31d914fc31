/* upstream.c: a collector run with --upstream is an aggregator (docs/aggregator.md).
 *
 * DESIGN: the aggregator merges its ranks' samples as any collector does; this file is what it
 * sends up the tree and relays down. One PUSH socket connects to the parent's ingest endpoint
 * (a CURVE client with --upstream-curve-server/--upstream-curve-secret), with a bounded
 * SNDHWM, ZMQ_IMMEDIATE (nothing is queued for a parent that is not connected) and a bounded
 * linger at the end. Up go, in this order of dependence: each rank's hello as it is accepted
 * (re-encoded without its function names when a hello of the same table hash already went up
 * in this job: the parent knows that table), the aggregator's AggState (when the job begins,
 * when its function table grows, before a partial that could name a new id, every second and
 * finally at job end), one Partial per window the aggregator closes, and each rank's bye once
 * the partial holding the rank's last window has gone (a bye is queued until then). The bye
 * that would be the last of the aggregator's ranks waits for the job's end, where it goes
 * after the final AggState: a parent that ends its job on the last bye of the whole job has
 * then every aggregator's final figures. The parent therefore always knows a rank before a
 * partial lists it, an id before a partial uses it, a rank's last window before its bye ends
 * the rank, and an aggregator's final AggState before its last bye.
 *
 * The loop is never blocked: every send is ZMQ_DONTWAIT. A partial that ZeroMQ does not take
 * is dropped and counted (mw__aggstate_dropped: the AggState tells the parent what it
 * missed). Hellos, byes and AggStates are small and needed by the parent to place and account
 * for everything else, so when ZeroMQ does not take one it waits in a bounded FIFO backlog,
 * handed over as soon as the socket is writable (polled with ZMQ_POLLOUT); while anything
 * waits there partials are dropped rather than sent ahead of it (a partial must never overtake
 * the hello of a rank it lists). What overflows the backlog, or is still in it at the end, is
 * counted as dropped by kind. Every count is in the stats JSON ("upstream") and the log.
 *
 * The steering relay: a SUB socket connected to the parent's --steer (--upstream-steer),
 * subscribed to "steer"; each message (the topic frame and the Steer) is republished verbatim
 * on this aggregator's own --steer, so steering and captures reach the ranks through the tree.
 * A message that is not two frames, whose topic is not "steer" or whose body is over
 * MW_STEER_MAX_MESSAGE (the ranks' own limit is four times that, and libzmq cuts off a rank
 * that exceeds it) is dropped and counted. An mpiwatch.window change is also applied to the
 * aggregator's own grid (as steer.c does at the root), so that it keeps merging the ranks'
 * windows after the change.
 */
#include "collector.h"
#include "upstream.h"
#include "partial.h"
#include "aggstate.h"
#include "publish.h"
#include "steer.h"
#include "summary.h"
#include "auth.h"
#include "mw_keyfile.h"
#include "mw_fnmap.h"
#include "mw_grid.h"
#include "mw_json.h"

#include <cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define UPSTREAM_SNDHWM 256                 /* messages ZeroMQ queues for the parent */
#define UPSTREAM_LINGER_MS 2000             /* at close: time left to deliver what is queued */
#define UPSTREAM_BACKLOG_MAX (1u << 18)     /* hellos, byes, AggStates waiting for the socket */
#define UPSTREAM_BACKLOG_BYTES (64u << 20)  /* ... and their bytes */
#define UPSTREAM_AGG_EVERY_NS 1000000000ull /* the periodic AggState */
#define UPSTREAM_RELAY_BATCH 64             /* steering messages relayed per wakeup */
#define UPSTREAM_MAX_HASHES 64 /* table hashes remembered per job (more: names always sent) */
#define UPSTREAM_LOG_EVERY_NS 1000000000ull

/* What goes up, for the counters. */
enum { K_PARTIAL, K_AGG, K_HELLO, K_BYE, K_COUNT };
static const char *const kind_names[K_COUNT] = {"partials", "aggstates", "hellos", "byes"};

typedef struct {
    uint8_t *data;
    size_t len;
    int kind;
} msg_t;

typedef struct {
    uint32_t rank;
    int64_t last; /* the rank's last window when its bye came */
    uint8_t *data;
    size_t len;
} bye_t;

struct mw_upstream {
    void *push, *sub;
    uint32_t id;
    mw_pb_encoder_t enc; /* partials and AggStates (the publish path keeps c->enc) */
    uint64_t seq;        /* this aggregator's messages in the current job */
    uint64_t job_gen;    /* c->stats.jobs of the job the state below is about (0: none) */
    int job_ended;       /* the final AggState went (or was queued) */
    uint64_t hashes[UPSTREAM_MAX_HASHES]; /* table hashes whose names went up in this job */
    unsigned n_hashes;
    uint32_t fn_count_sent; /* function table size in the last AggState */
    int64_t closed;         /* highest window index the aggregator closed in this job */
    uint32_t byes_fwd;      /* byes sent or queued for the socket in this job */
    bye_t *byes;            /* byes waiting for their rank's last partial */
    size_t n_byes, cap_byes;
    msg_t *backlog; /* FIFO ring */
    size_t bl_head, bl_n, bl_cap, bl_bytes;
    uint64_t next_agg_ns;
    /* Counters, all jobs. */
    uint64_t sent[K_COUNT], dropped[K_COUNT], bytes_sent;
    uint64_t hellos_stripped; /* hellos sent without their function names */
    uint64_t hellos_again;    /* repeats of ranks' hellos, not forwarded */
    uint64_t hello_drops0;    /* dropped[K_HELLO] when the job began */
    uint64_t byes_queued;     /* byes that waited for a partial */
    uint64_t too_large;       /* partials over the message limit (dropped) */
    uint64_t agg_last_len;    /* bytes of the latest AggState (with its ranks' shares) */
    uint64_t steer_relayed, steer_dropped;
    uint64_t last_log_ns, logged_drops;
};

static uint64_t drops_total(const mw_upstream_t *u)
{
    uint64_t n = u->steer_dropped;
    for (int k = 0; k < K_COUNT; k++)
        n += u->dropped[k];
    return n;
}

/* At most one line a second about drops, with the number since the last line. */
static void upstream_log_drops(mw_collector_t *c, mw_upstream_t *u)
{
    uint64_t now = mw__collector_mono_ns(c);
    uint64_t total = drops_total(u);
    if (total == u->logged_drops ||
        (u->last_log_ns && now - u->last_log_ns < UPSTREAM_LOG_EVERY_NS))
        return;
    MW_LOG(MW_LOG_WARN,
           "upstream: %" PRIu64 " message(s) dropped so far (partials %" PRIu64 ", hellos %" PRIu64
           ", byes %" PRIu64 ", aggstates %" PRIu64 ", steering %" PRIu64 ")",
           total, u->dropped[K_PARTIAL], u->dropped[K_HELLO], u->dropped[K_BYE], u->dropped[K_AGG],
           u->steer_dropped);
    u->last_log_ns = now;
    u->logged_drops = total;
}

/* ---- options --------------------------------------------------------------------------- */

/* A bindable endpoint (mw__endpoint_check) that can also be connected to: tcp without a
 * wildcard host or port 0. */
static int upstream_connectable(const char *ep)
{
    if (strncmp(ep, "tcp://", 6) != 0)
        return 1;
    const char *host = ep + 6, *colon = strrchr(host, ':');
    if (!colon || strcmp(colon + 1, "0") == 0 || strcmp(colon + 1, "*") == 0)
        return 0;
    return !(colon - host == 1 && host[0] == '*');
}

int mw__upstream_check(const mw_collector_options_t *o, char *err, size_t errlen)
{
    int have_server = o->upstream_curve_server && *o->upstream_curve_server;
    int have_secret = o->upstream_curve_secret && *o->upstream_curve_secret;
    if (!o->upstream) {
        if (o->upstream_steer || have_server || have_secret) {
            snprintf(err, errlen, "--upstream-steer and --upstream-curve-* need --upstream");
            return -1;
        }
        return 0;
    }
    if (o->replay) {
        snprintf(err, errlen,
                 "--upstream and --replay exclude each other (an aggregator takes "
                 "live ranks; replay the root's recording instead)");
        return -1;
    }
    if (o->rules) {
        snprintf(err, errlen,
                 "--rules runs at the root of the tree, not on an aggregator "
                 "(--upstream): give the rules to the root collector");
        return -1;
    }
    if (o->upstream_steer && !o->steer) {
        snprintf(err, errlen,
                 "--upstream-steer relays to the ranks through --steer: add "
                 "--steer ENDPOINT (the ranks' MPIWATCH_STEER)");
        return -1;
    }
    const char *eps[2] = {o->upstream, o->upstream_steer};
    for (int i = 0; i < 2; i++) {
        if (!eps[i])
            continue;
        char why[200] = "";
        if (mw__endpoint_check(eps[i], why, sizeof why) < 0 || !upstream_connectable(eps[i])) {
            snprintf(err, errlen, "--%s %.200s: not an endpoint to connect to: %s",
                     i ? "upstream-steer" : "upstream", eps[i],
                     why[0] ? why : "a host and a port are needed (no * and no port 0)");
            return -1;
        }
    }
    if (have_server != have_secret) {
        snprintf(err, errlen,
                 "--upstream-curve-server and --upstream-curve-secret go together "
                 "(the parent's public key and this aggregator's key pair)");
        return -1;
    }
    if (have_server) {
        mw_curve_client_t keys;
        int rc = mw_curve_client_load(o->upstream_curve_server, o->upstream_curve_secret, &keys,
                                      err, errlen);
        mw_keyfile_wipe(&keys, sizeof keys);
        if (rc < 0)
            return -1;
    } else if (!o->allow_insecure) {
        for (int i = 0; i < 2; i++)
            if (eps[i] && !mw__endpoint_local(eps[i])) {
                snprintf(err, errlen,
                         "--%s %.200s is not local: give the parent's key and this aggregator's "
                         "(--upstream-curve-server FILE.pub --upstream-curve-secret FILE.key), or "
                         "--allow-insecure (docs/aggregator.md)",
                         i ? "upstream-steer" : "upstream", eps[i]);
                return -1;
            }
    }
    return 0;
}

/* ---- sending ----------------------------------------------------------------------------- */

/* Hands one message to ZeroMQ without waiting: 0 sent, -1 not taken (EAGAIN: the parent is
 * not connected or its queue is full; or an error, logged). */
static int upstream_send_now(mw_upstream_t *u, const void *data, size_t len)
{
    if (zmq_send(u->push, data, len, ZMQ_DONTWAIT) == (int)len) {
        u->bytes_sent += len;
        return 0;
    }
    int e = zmq_errno();
    if (e != EAGAIN && e != EINTR)
        MW_LOG(MW_LOG_ERROR, "upstream: zmq_send: %s", zmq_strerror(e));
    return -1;
}

/* Hands over what waits in the backlog, oldest first, until ZeroMQ stops taking. */
static void upstream_flush_backlog(mw_upstream_t *u)
{
    while (u->bl_n) {
        msg_t *m = &u->backlog[u->bl_head];
        if (upstream_send_now(u, m->data, m->len) < 0)
            return;
        u->sent[m->kind]++;
        u->bl_bytes -= m->len;
        free(m->data);
        m->data = NULL;
        u->bl_head = (u->bl_head + 1) % u->bl_cap;
        u->bl_n--;
    }
}

/* Sends a hello, bye or AggState, or queues a copy behind what already waits. Returns 0 when
 * sent or queued, -1 when dropped (counted). */
static int upstream_send_ctl(mw_upstream_t *u, int kind, const void *data, size_t len)
{
    upstream_flush_backlog(u);
    if (!u->bl_n && upstream_send_now(u, data, len) == 0) {
        u->sent[kind]++;
        return 0;
    }
    if (u->bl_n == u->bl_cap && u->bl_cap < UPSTREAM_BACKLOG_MAX) {
        size_t cap = u->bl_cap ? u->bl_cap * 2 : 16;
        msg_t *p = malloc(cap * sizeof *p);
        if (p) {
            for (size_t i = 0; i < u->bl_n; i++)
                p[i] = u->backlog[(u->bl_head + i) % u->bl_cap];
            free(u->backlog);
            u->backlog = p;
            u->bl_cap = cap;
            u->bl_head = 0;
        }
    }
    uint8_t *copy = NULL;
    if (u->bl_n < u->bl_cap && u->bl_bytes + len <= UPSTREAM_BACKLOG_BYTES &&
        (copy = malloc(len ? len : 1)) != NULL) {
        memcpy(copy, data, len);
        u->backlog[(u->bl_head + u->bl_n) % u->bl_cap] = (msg_t){copy, len, kind};
        u->bl_n++;
        u->bl_bytes += len;
        return 0;
    }
    u->dropped[kind]++;
    return -1;
}

static uint32_t fn_table_size(void)
{
    return MW_FN_COUNT - 1u + mw_fn_extra_count();
}

/* The aggregator's AggState, sent or queued. */
static void upstream_send_agg(mw_collector_t *c, mw_upstream_t *u, int final)
{
    uint32_t n_fn = fn_table_size();
    size_t len = mw__aggstate_envelope_pack(c, &u->enc, u->id, u->seq++, final);
    if (!len) {
        u->dropped[K_AGG]++;
        MW_LOG(MW_LOG_ERROR, "upstream: cannot encode the AggState: out of memory");
        return;
    }
    u->agg_last_len = len;
    if (upstream_send_ctl(u, K_AGG, u->enc.out, len) == 0)
        u->fn_count_sent = n_fn;
    u->next_agg_ns = mw__collector_mono_ns(c) + UPSTREAM_AGG_EVERY_NS;
    upstream_log_drops(c, u);
}

/* A new job at the aggregator: what the previous one remembered is forgotten. */
static void upstream_job_reset(mw_collector_t *c, mw_upstream_t *u)
{
    for (size_t i = 0; i < u->n_byes; i++)
        free(u->byes[i].data);
    u->n_byes = 0;
    u->n_hashes = 0;
    u->seq = 0;
    u->closed = -1;
    u->byes_fwd = 0;
    u->fn_count_sent = 0;
    u->job_ended = 0;
    u->job_gen = c->stats.jobs;
    u->hello_drops0 = u->dropped[K_HELLO];
}

/* Whether a bye may go now: not the last of the ranks that said hello here (it waits for the
 * final AggState, at the job's end). */
static int upstream_bye_may_go(const mw_collector_t *c, const mw_upstream_t *u)
{
    return u->byes_fwd + 1u < c->job.hellos;
}

static void upstream_bye_send(mw_upstream_t *u, const void *data, size_t len)
{
    upstream_send_ctl(u, K_BYE, data, len);
    u->byes_fwd++;
}

/* The byes whose rank's last window is closed (through `closed`; all with `all`), in the order
 * they came. */
static void upstream_release_byes(mw_collector_t *c, mw_upstream_t *u, int all)
{
    size_t keep = 0;
    for (size_t i = 0; i < u->n_byes; i++) {
        bye_t *b = &u->byes[i];
        if (all || (b->last <= u->closed && upstream_bye_may_go(c, u))) {
            upstream_bye_send(u, b->data, b->len);
            free(b->data);
        } else {
            u->byes[keep++] = *b;
        }
    }
    u->n_byes = keep;
    upstream_log_drops(c, u);
}

void mw__upstream_window(mw_collector_t *c, const mw_window_t *w)
{
    mw_upstream_t *u = c->upstream;
    if (!u || u->job_gen != c->stats.jobs)
        return;
    /* An id the parent has not been told of yet: the AggState naming it goes first. */
    if (fn_table_size() != u->fn_count_sent)
        upstream_send_agg(c, u, 0);
    size_t len = mw__partial_envelope_pack(c, &u->enc, w, u->id, u->seq++);
    int too_large = len > MW_MAX_MESSAGE_BYTES;
    static uint64_t n_too_large;
    if (too_large && n_too_large++ % 1000 == 0) {
        /* The parent's ZMQ_MAXMSGSIZE would drop it and the connection with it (and whatever
         * else was on its way): it is dropped here instead, counted like any dropped partial. */
        MW_LOG(MW_LOG_ERROR,
               "upstream: the partial of window %" PRIu64 " is %zu bytes, over the %u-byte message"
               " limit: dropped (fewer ranks per aggregator, or --rank-detail off; %" PRIu64
               " so far)",
               w->index, len, (unsigned)MW_MAX_MESSAGE_BYTES, n_too_large);
    }
    if (too_large) {
        len = 0;
        u->too_large++;
    }
    upstream_flush_backlog(u);
    if (len && !u->bl_n && upstream_send_now(u, u->enc.out, len) == 0) {
        u->sent[K_PARTIAL]++;
        mw__aggstate_sent(c, w);
    } else {
        if (!len && !too_large)
            MW_LOG(MW_LOG_ERROR,
                   "upstream: cannot encode the partial of window %" PRIu64 ": out of memory",
                   w->index);
        u->dropped[K_PARTIAL]++;
        mw__aggstate_dropped(c, w);
    }
    if ((int64_t)w->index > u->closed)
        u->closed = (int64_t)w->index;
    upstream_release_byes(c, u, 0);
}

/* Whether a hello of this table hash already went up with its names in this job (the hashes
 * are noted as such hellos go up, while there is room: past it names keep going up, which is
 * only larger). */
static int upstream_hash_known(mw_upstream_t *u, uint64_t hash)
{
    for (unsigned i = 0; i < u->n_hashes; i++)
        if (u->hashes[i] == hash)
            return 1;
    return 0;
}

/* With --expect-ranks N, once N ranks said hello the aggregator has all of its ranks: the
 * job's other ranks (which report elsewhere) leave its merge's expectation, so its windows
 * close as soon as its own ranks have reported them instead of at their --lateness-ms
 * deadline. Without the count it cannot know, and its windows wait for the deadline. */
static void upstream_own_ranks(mw_collector_t *c)
{
    long long expect = mw_collector_options_expect_ranks(c->opt);
    if (expect <= 0 || c->job.hellos != (uint64_t)expect || !c->merge_ready)
        return;
    for (uint32_t r = 0; r < c->job.size; r++)
        if (!c->job.ranks[r].said_hello)
            mw__merge_leave(&c->merge, r);
}

static void upstream_hello(mw_collector_t *c, mw_upstream_t *u, const Mpiwatch__Envelope *env,
                           const void *data, size_t len)
{
    int new_job = u->job_gen != c->stats.jobs;
    if (new_job)
        upstream_job_reset(c, u);
    if (c->hello_again && !new_job && u->dropped[K_HELLO] == u->hello_drops0) {
        /* A rank that reconnected here: the parent knows it from its first hello, over this
         * aggregator's connection, which did not change. (Once a hello of the job was dropped
         * on its way up, repeats go up: one may be that rank's; the parent takes the others as
         * the repeats they are.) */
        u->hellos_again++;
        return;
    }
    const Mpiwatch__Hello *h = env->hello;
    int named = h->n_function_names > 0;
    if (named && upstream_hash_known(u, h->function_table_hash)) {
        /* The parent maps this rank by the table it already has (the hash). */
        Mpiwatch__Hello bare = *h;
        bare.n_function_names = 0;
        bare.function_names = NULL;
        bare.n_function_kinds = 0;
        bare.function_kinds = NULL;
        Mpiwatch__Envelope e = *env;
        e.hello = &bare;
        size_t n = mpiwatch__envelope__get_packed_size(&e);
        uint8_t *buf = malloc(n ? n : 1);
        if (buf) {
            n = mpiwatch__envelope__pack(&e, buf);
            if (upstream_send_ctl(u, K_HELLO, buf, n) == 0)
                u->hellos_stripped++;
            free(buf);
        } else {
            u->dropped[K_HELLO]++;
        }
    } else if (upstream_send_ctl(u, K_HELLO, data, len) == 0 && named &&
               u->n_hashes < UPSTREAM_MAX_HASHES) {
        u->hashes[u->n_hashes++] = h->function_table_hash;
    }
    /* After the hello that started it (the parent starts its job from a hello). */
    if (new_job || fn_table_size() != u->fn_count_sent)
        upstream_send_agg(c, u, 0);
    upstream_log_drops(c, u);
    upstream_own_ranks(c);
}

static void upstream_bye(mw_collector_t *c, mw_upstream_t *u, const Mpiwatch__Envelope *env,
                         const void *data, size_t len)
{
    int64_t last = c->merge_ready ? mw__merge_last_window(&c->merge, env->rank) : -1;
    /* Every window before the merge's head is closed (an empty one never had a partial). */
    int64_t through = u->closed;
    if (c->merge_ready && c->merge.started && c->merge.head - 1 > through)
        through = c->merge.head - 1;
    if (last <= through && upstream_bye_may_go(c, u)) {
        upstream_bye_send(u, data, len);
        upstream_log_drops(c, u);
        return;
    }
    if (u->n_byes == u->cap_byes) {
        size_t cap = u->cap_byes ? u->cap_byes * 2 : 64;
        bye_t *p = realloc(u->byes, cap * sizeof *p);
        if (!p) {
            upstream_bye_send(u, data, len); /* early rather than never */
            return;
        }
        u->byes = p;
        u->cap_byes = cap;
    }
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy) {
        upstream_bye_send(u, data, len);
        return;
    }
    memcpy(copy, data, len);
    u->byes[u->n_byes++] = (bye_t){env->rank, last, copy, len};
    u->byes_queued++;
}

void mw__upstream_frame(mw_collector_t *c, const Mpiwatch__Envelope *env, const void *data,
                        size_t len)
{
    mw_upstream_t *u = c->upstream;
    if (!u)
        return;
    if (env->body_case == MPIWATCH__ENVELOPE__BODY_HELLO)
        upstream_hello(c, u, env, data, len);
    else if (env->body_case == MPIWATCH__ENVELOPE__BODY_BYE && u->job_gen == c->stats.jobs)
        upstream_bye(c, u, env, data, len);
}

void mw__upstream_job_end(mw_collector_t *c)
{
    mw_upstream_t *u = c->upstream;
    if (!u || u->job_gen != c->stats.jobs || u->job_ended)
        return;
    upstream_send_agg(c, u, 1);
    upstream_release_byes(c, u, 1);
    u->job_ended = 1;
    MW_LOG(MW_LOG_INFO,
           "upstream: job '%s' done: partials sent %" PRIu64 ", dropped %" PRIu64
           "; hellos %" PRIu64 " (%" PRIu64 " without names), byes %" PRIu64
           "; %zu message(s) still waiting",
           c->job.job, u->sent[K_PARTIAL], u->dropped[K_PARTIAL], u->sent[K_HELLO],
           u->hellos_stripped, u->sent[K_BYE], u->bl_n);
}

int mw__upstream_job_done(const mw_collector_t *c, uint64_t now_mono_ns)
{
    if (!c->upstream || !c->job.active || !c->job.hellos)
        return 0;
    long long expect = mw_collector_options_expect_ranks(c->opt);
    if (expect > 0 && c->job.hellos < (uint64_t)expect)
        return 0;
    if (c->job.byes + c->job.dead < c->job.hellos)
        return 0;
    return expect > 0 ||
           now_mono_ns - c->job.last_activity_ns >= MW_UPSTREAM_SETTLE_MS * MW_NS_PER_MS;
}

/* ---- the steering relay -------------------------------------------------------------------- */

/* mpiwatch.window=MS@K relayed to the ranks: the aggregator's grid changes with theirs. */
static void upstream_relay_window(mw_collector_t *c, const uint8_t *body, size_t len)
{
    Mpiwatch__Steer *m = mpiwatch__steer__unpack(NULL, len, body);
    if (!m)
        return;
    uint64_t ms = 0, k = 0;
    char tail;
    if (m->key && strcmp(m->key, "mpiwatch.window") == 0 && c->job.active && m->job &&
        strcmp(m->job, c->job.job) == 0 && m->value &&
        sscanf(m->value, "%" SCNu64 "@%" SCNu64 "%c", &ms, &k, &tail) == 2) {
        char err[160], detail[160];
        if (mw_grid_append(&c->job.grid, k, ms, err, sizeof err) < 0) {
            MW_LOG(MW_LOG_WARN, "upstream: relayed window change %s not applied here: %s", m->value,
                   err);
        } else {
            snprintf(detail, sizeof detail,
                     "window=%" PRIu64 "ms from window %" PRIu64 " start %" PRIu64, ms, k,
                     mw_grid_start(&c->job.grid, k));
            mw__publish_event(c, "window", detail);
            MW_LOG(MW_LOG_INFO, "upstream: window length %" PRIu64 " ms from window %" PRIu64, ms,
                   k);
        }
    }
    mpiwatch__steer__free_unpacked(m, NULL);
}

/* Receives one message of the relay's SUB without waiting: its first two frames into f (the
 * caller closes those it got: *got), the rest counted in *parts and closed. Returns 1 when a
 * message was taken, 0 when none waits, -1 on an error. */
static int relay_recv(void *sub, zmq_msg_t f[2], int *got, int *parts)
{
    *got = 0;
    *parts = 0;
    for (;;) {
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, sub, *parts ? 0 : ZMQ_DONTWAIT) < 0) {
            int e = zmq_errno();
            zmq_msg_close(&m);
            if (*parts == 0 && (e == EAGAIN || e == EINTR))
                return 0;
            MW_LOG(MW_LOG_ERROR, "upstream steering: zmq_msg_recv: %s", zmq_strerror(e));
            return -1;
        }
        int more = zmq_msg_more(&m);
        if (*got < 2)
            f[(*got)++] = m;
        else
            zmq_msg_close(&m);
        (*parts)++;
        if (!more)
            return 1;
    }
}

static void upstream_relay(mw_collector_t *c, mw_upstream_t *u)
{
    void *pub = mw__steer_pub(c);
    for (int i = 0; u->sub && i < UPSTREAM_RELAY_BATCH; i++) {
        zmq_msg_t f[2];
        int got, parts;
        int rc = relay_recv(u->sub, f, &got, &parts);
        if (rc <= 0) {
            for (int k = 0; k < got; k++)
                zmq_msg_close(&f[k]);
            return;
        }
        const char *why = NULL;
        if (parts != 2)
            why = "not two frames";
        else if (zmq_msg_size(&f[0]) != 5 || memcmp(zmq_msg_data(&f[0]), "steer", 5) != 0)
            why = "topic is not steer";
        else if (zmq_msg_size(&f[1]) > MW_STEER_MAX_MESSAGE)
            why = "over MW_STEER_MAX_MESSAGE bytes";
        else if (!pub)
            why = "no --steer socket";
        if (!why) {
            size_t len = zmq_msg_size(&f[1]);
            if (zmq_send(pub, "steer", 5, ZMQ_SNDMORE | ZMQ_DONTWAIT) != 5 ||
                zmq_send(pub, zmq_msg_data(&f[1]), len, ZMQ_DONTWAIT) != (int)len) {
                why = "not taken by the --steer socket";
            } else {
                u->steer_relayed++;
                upstream_relay_window(c, zmq_msg_data(&f[1]), len);
            }
        }
        if (why) {
            u->steer_dropped++;
            MW_LOG(MW_LOG_DEBUG, "upstream steering: dropped a message of %d frame(s): %s", parts,
                   why);
            upstream_log_drops(c, u);
        }
        for (int k = 0; k < got; k++)
            zmq_msg_close(&f[k]);
    }
}

/* ---- the sockets ------------------------------------------------------------------------- */

static int upstream_setopt(void *sock, int opt, const void *val, size_t len, const char *name)
{
    if (zmq_setsockopt(sock, opt, val, len) != 0) {
        MW_LOG(MW_LOG_ERROR, "upstream: zmq_setsockopt(%s): %s", name, zmq_strerror(zmq_errno()));
        return -1;
    }
    return 0;
}

/* A client socket of the given type, a CURVE client when keys are given, connected to ep. */
static void *upstream_socket(void *ctx, int type, const char *ep, const mw_curve_client_t *keys,
                             const char *what)
{
    void *s = zmq_socket(ctx, type);
    if (!s) {
        MW_LOG(MW_LOG_ERROR, "upstream: zmq_socket: %s", zmq_strerror(zmq_errno()));
        return NULL;
    }
    int hwm = UPSTREAM_SNDHWM, one = 1, zero = 0, rcvhwm = 1000;
    int64_t maxmsg = MW_STEER_RANK_MAX_MESSAGE;
    char err[256];
    int ok = upstream_setopt(s, ZMQ_LINGER, &zero, sizeof zero, "ZMQ_LINGER") == 0;
    if (ok && type == ZMQ_PUSH)
        ok = upstream_setopt(s, ZMQ_SNDHWM, &hwm, sizeof hwm, "ZMQ_SNDHWM") == 0 &&
             upstream_setopt(s, ZMQ_IMMEDIATE, &one, sizeof one, "ZMQ_IMMEDIATE") == 0;
    if (ok && type == ZMQ_SUB)
        ok = upstream_setopt(s, ZMQ_RCVHWM, &rcvhwm, sizeof rcvhwm, "ZMQ_RCVHWM") == 0 &&
             upstream_setopt(s, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg, "ZMQ_MAXMSGSIZE") == 0 &&
             upstream_setopt(s, ZMQ_SUBSCRIBE, "steer", 5, "ZMQ_SUBSCRIBE") == 0;
    if (ok && keys && mw_curve_client_apply(s, keys, err, sizeof err) != 0) {
        MW_LOG(MW_LOG_ERROR, "upstream: %s", err);
        ok = 0;
    }
    if (ok && zmq_connect(s, ep) != 0) {
        MW_LOG(MW_LOG_ERROR, "upstream: cannot connect the %s to %s: %s", what, ep,
               zmq_strerror(zmq_errno()));
        ok = 0;
    }
    if (!ok) {
        zmq_close(s);
        return NULL;
    }
    MW_LOG(MW_LOG_INFO, "upstream: %s connected to %s%s", what, ep, keys ? " (CURVE)" : "");
    return s;
}

mw_upstream_t *mw__upstream_open(void *zmq_ctx, mw_collector_t *c)
{
    const mw_collector_options_t *o = c->opt;
    mw_upstream_t *u = calloc(1, sizeof *u);
    if (!u) {
        MW_LOG(MW_LOG_ERROR, "upstream: out of memory");
        return NULL;
    }
    u->id = (uint32_t)o->aggregator_id;
    u->closed = -1;
    mw_curve_client_t keys;
    int curve = 0;
    char err[256];
    if (o->upstream_curve_server && *o->upstream_curve_server) {
        if (mw_curve_client_load(o->upstream_curve_server, o->upstream_curve_secret, &keys, err,
                                 sizeof err) < 0) {
            MW_LOG(MW_LOG_ERROR, "upstream: %s", err);
            free(u);
            return NULL;
        }
        curve = 1;
    }
    u->push = upstream_socket(zmq_ctx, ZMQ_PUSH, o->upstream, curve ? &keys : NULL, "PUSH");
    if (u->push && o->upstream_steer)
        u->sub = upstream_socket(zmq_ctx, ZMQ_SUB, o->upstream_steer, curve ? &keys : NULL,
                                 "steering relay");
    mw_keyfile_wipe(&keys, sizeof keys);
    if (!u->push || (o->upstream_steer && !u->sub)) {
        if (u->push)
            zmq_close(u->push);
        free(u);
        return NULL;
    }
    MW_LOG(MW_LOG_INFO, "aggregator %u: feeding %s", u->id, o->upstream);
    return u;
}

void mw__upstream_close(mw_collector_t *c)
{
    mw_upstream_t *u = c->upstream;
    if (!u)
        return;
    /* The job is over: what waits (the last byes of thousands of ranks come at once) gets up to
     * UPSTREAM_LINGER_MS to go, waiting on the socket: the only wait of an aggregator. */
    uint64_t deadline = mw__collector_mono_ns(c) + UPSTREAM_LINGER_MS * 1000000ull;
    int waited = u->bl_n || u->n_byes; /* the stats JSON of the job's end shows them waiting */
    for (;;) {
        upstream_flush_backlog(u);
        uint64_t now = mw__collector_mono_ns(c);
        if (!u->bl_n || now >= deadline)
            break;
        zmq_pollitem_t it = {.socket = u->push, .fd = -1, .events = ZMQ_POLLOUT};
        if (zmq_poll(&it, 1, (long)((deadline - now) / 1000000ull) + 1) < 0 && zmq_errno() != EINTR)
            break;
    }
    waited |= u->bl_n || u->n_byes;
    for (size_t i = 0; i < u->bl_n; i++) {
        msg_t *m = &u->backlog[(u->bl_head + i) % u->bl_cap];
        u->dropped[m->kind]++;
        free(m->data);
    }
    u->bl_n = 0;
    for (size_t i = 0; i < u->n_byes; i++) {
        u->dropped[K_BYE]++;
        free(u->byes[i].data);
    }
    u->n_byes = 0;
    MW_LOG(MW_LOG_INFO,
           "upstream: sent partials %" PRIu64 ", aggstates %" PRIu64 ", hellos %" PRIu64
           ", byes %" PRIu64 " (%" PRIu64 " bytes); dropped partials %" PRIu64
           ", aggstates %" PRIu64 ", hellos %" PRIu64 ", byes %" PRIu64
           "; steering relayed %" PRIu64 ", dropped %" PRIu64,
           u->sent[K_PARTIAL], u->sent[K_AGG], u->sent[K_HELLO], u->sent[K_BYE], u->bytes_sent,
           u->dropped[K_PARTIAL], u->dropped[K_AGG], u->dropped[K_HELLO], u->dropped[K_BYE],
           u->steer_relayed, u->steer_dropped);
    /* Sent or lost, what was waiting is counted again in the stats JSON of the job's end. */
    if (waited && c->opt->stats_json)
        mw__stats_write(c, c->opt->stats_json);
    int linger = UPSTREAM_LINGER_MS;
    zmq_setsockopt(u->push, ZMQ_LINGER, &linger, sizeof linger);
    if (zmq_close(u->push) != 0)
        MW_LOG(MW_LOG_ERROR, "upstream: zmq_close: %s", zmq_strerror(zmq_errno()));
    if (u->sub && zmq_close(u->sub) != 0)
        MW_LOG(MW_LOG_ERROR, "upstream: zmq_close: %s", zmq_strerror(zmq_errno()));
    mw__pb_encoder_free(&u->enc);
    free(u->backlog);
    free(u->byes);
    free(u);
    c->upstream = NULL;
}

int mw__upstream_pollitems(const mw_upstream_t *u, zmq_pollitem_t *items, int max)
{
    int n = 0;
    if (!u)
        return 0;
    if (u->sub && n < max)
        items[n++] = (zmq_pollitem_t){.socket = u->sub, .fd = -1, .events = ZMQ_POLLIN};
    if (u->bl_n && n < max)
        items[n++] = (zmq_pollitem_t){.socket = u->push, .fd = -1, .events = ZMQ_POLLOUT};
    return n;
}

void mw__upstream_serve(mw_collector_t *c, uint64_t now_mono_ns)
{
    mw_upstream_t *u = c->upstream;
    if (!u)
        return;
    upstream_relay(c, u);
    upstream_flush_backlog(u);
    if (u->job_gen == c->stats.jobs && u->job_gen && !u->job_ended && c->job.active &&
        c->job.ended == MW_END_NONE && now_mono_ns >= u->next_agg_ns && !u->bl_n)
        upstream_send_agg(c, u, 0);
}

long mw__upstream_timeout_ms(const mw_collector_t *c, uint64_t now_mono_ns)
{
    const mw_upstream_t *u = c->upstream;
    if (!u || !u->job_gen || u->job_gen != c->stats.jobs || u->job_ended || !c->job.active ||
        c->job.ended != MW_END_NONE)
        return -1;
    if (u->next_agg_ns <= now_mono_ns)
        return 0;
    return (long)((u->next_agg_ns - now_mono_ns + 999999) / 1000000);
}

int mw__upstream_stats_json(const mw_collector_t *c, struct cJSON *root)
{
    const mw_upstream_t *u = c->upstream;
    if (!u)
        return 0;
    cJSON *o = cJSON_AddObjectToObject(root, "upstream");
    if (!o || mw_json_add_u64(o, "aggregator_id", u->id) < 0)
        return -1;
    char key[40];
    for (int k = 0; k < K_COUNT; k++) {
        snprintf(key, sizeof key, "%s_sent", kind_names[k]);
        if (mw_json_add_u64(o, key, u->sent[k]) < 0)
            return -1;
        snprintf(key, sizeof key, "%s_dropped", kind_names[k]);
        if (mw_json_add_u64(o, key, u->dropped[k]) < 0)
            return -1;
    }
    if (mw_json_add_u64(o, "hellos_without_names", u->hellos_stripped) < 0 ||
        mw_json_add_u64(o, "hellos_repeated", u->hellos_again) < 0 ||
        mw_json_add_u64(o, "byes_queued", u->byes_queued) < 0 ||
        mw_json_add_u64(o, "partials_too_large", u->too_large) < 0 ||
        mw_json_add_u64(o, "aggstate_bytes", u->agg_last_len) < 0 ||
        mw_json_add_u64(o, "waiting", u->bl_n + u->n_byes) < 0 ||
        mw_json_add_u64(o, "bytes_sent", u->bytes_sent) < 0 ||
        mw_json_add_u64(o, "steer_relayed", u->steer_relayed) < 0 ||
        mw_json_add_u64(o, "steer_dropped", u->steer_dropped) < 0)
        return -1;
    return 0;
}
