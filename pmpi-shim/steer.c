/* steer.c: steering messages into the rank (MPIWATCH_STEER, docs/steering.md).
 *
 * DESIGN: the sender thread owns a SUB socket connected to the collector's --steer endpoint
 * (only when MPIWATCH_STEER is set). It drains it with ZMQ_DONTWAIT on every wake-up, decodes
 * each Steer into a fixed static arena (no malloc), and checks it like every other input:
 * two frames with the topic "steer", a bounded size, this rank's job, this rank listed (or
 * no list), a key of 1..64 of [A-Za-z0-9._-] and a value of at most 1024 bytes without
 * control characters. Bad messages are dropped and counted. Keys under "mpiwatch." belong to
 * the library and are applied on the sender thread at once (pause and resume flip the same
 * flag as MPI_Pcontrol; capture schedules a per-call trace of whole windows, capture.c;
 * window switches the window grid at the window the collector chose, grid.c; trace sets the
 * job's plan of traced windows, trace_send.c).
 * Every other key goes into a fixed single-producer/single-consumer ring (dropped and counted
 * when full) and raises a one-byte "pending" flag.
 *
 * The application's callback runs on the application's own thread, never on the sender
 * thread and never in a signal handler: either in mw_poll(), or at the next recorded timed
 * MPI call of the thread that called MPI_Init, whose wrapper, after recording, makes one
 * relaxed byte load of the flag (MW_STEER_HOOK, the same shape as the step-mark byte check)
 * and only when it is set calls out of line. The consumer side is serialised by a try-lock
 * flag that is never waited on: a second thread arriving while callbacks run (or an MPI call
 * made from inside a callback) just returns, so callbacks never nest.
 *
 * Sizes and the link: the socket takes frames of up to MW_STEER_RANK_MAX_MESSAGE (32 KiB),
 * four times the largest Steer the collector publishes (MW_STEER_MAX_MESSAGE, proto/
 * mw_proto.h; the collector splits longer rank lists), and the arena decodes any frame of that
 * size. A larger frame still makes libzmq drop the connection (a protocol error), and libzmq
 * does not reconnect after a protocol error or a failed handshake: that used to end steering
 * for the rest of the run. So a monitor watches the socket: when the link went down and libzmq
 * has not announced a retry of its own within STEER_REVIVE_NS, the socket is closed and made
 * again (counted; the delay doubles up to STEER_REVIVE_MAX_NS while no valid message arrives),
 * so a peer that keeps sending garbage costs at most one reconnection per interval.
 */
#include "mpiwatch.h"
#include "mw_steer_request.h" /* the one key check (proto/) */
#include "mw_zmq_monitor.h"
#include "shim.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#define STEER_RING 16u /* messages waiting for the application; a power of two */
#define STEER_KEY_MAX MW_STEER_MAX_KEY
#define STEER_VALUE_MAX MW_STEER_MAX_VALUE
#define STEER_FRAME_MAX MW_STEER_RANK_MAX_MESSAGE
/* Decoding memory for one message (protobuf-c allocator): a frame's strings, and its ranks at
 * 4 bytes each when every rank took one byte on the wire, fit whatever the frame holds. */
#define STEER_ARENA (5u * STEER_FRAME_MAX + 4096u)
#define STEER_REVIVE_NS 1000000000ull      /* link down with no retry by libzmq: remake it */
#define STEER_REVIVE_MAX_NS 16000000000ull /* the delay doubles up to this */
_Static_assert(MW_STEER_RANK_MAX_MESSAGE >= 2 * MW_STEER_MAX_MESSAGE,
               "a rank takes comfortably more than the collector sends");
#define STEER_BATCH 64 /* messages taken per wake-up */

typedef struct {
    char key[STEER_KEY_MAX + 1];
    char value[STEER_VALUE_MAX + 1];
} steer_entry_t;

_Atomic unsigned char mw__steer_pending;

static struct {
    void *sub, *ctx, *monitor;
    unsigned generation; /* sockets made so far (names the monitor's endpoint) */
    uint64_t lost_ns;    /* monotonic time the link went down without a retry; 0: fine */
    uint64_t revive_ns;  /* current delay before the socket is remade */
    uint64_t reconnects; /* sockets remade */
    char job[64];
    const char *endpoint; /* MPIWATCH_STEER, or MPIWATCH_STEER_FALLBACK after a fallback */
    steer_entry_t ring[STEER_RING];
    _Atomic uint32_t head, tail;
    atomic_flag consuming;
    mw_steer_fn fn; /* written and read only while holding `consuming` */
    void *fn_ctx;
    /* sender-thread counters (read at finalize, after the sender stopped) */
    uint64_t received, bad, other_job, not_mine, full, builtin;
    _Atomic uint64_t delivered, unhandled;
    /* the decoding arena */
    size_t arena_used;
    _Alignas(16) unsigned char arena[STEER_ARENA];
} T = {.consuming = ATOMIC_FLAG_INIT};

static __thread int in_callback; /* this thread is running the callback */

static void *arena_alloc(void *data, size_t size)
{
    (void)data;
    size = (size + 15u) & ~(size_t)15u;
    if (size > STEER_ARENA - T.arena_used)
        return NULL; /* protobuf-c then fails the decode: the message is too big */
    void *p = T.arena + T.arena_used;
    T.arena_used += size;
    return p;
}

static void arena_free(void *data, void *p)
{
    (void)data, (void)p; /* the whole arena is reset for the next message */
}

static ProtobufCAllocator steer_allocator = {.alloc = arena_alloc, .free = arena_free};

/* Makes the SUB socket, its monitor, and connects it. Returns 0, or -1 (logged). */
static int steer_connect(void)
{
    T.sub = zmq_socket(T.ctx, ZMQ_SUB);
    if (!T.sub)
        return -1;
    int zero = 0, hwm = 64;
    int64_t maxmsg = STEER_FRAME_MAX;
    zmq_setsockopt(T.sub, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt(T.sub, ZMQ_RCVHWM, &hwm, sizeof hwm);
    zmq_setsockopt(T.sub, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg);
    char ep[80];
    snprintf(ep, sizeof ep, "inproc://mpiwatch-steer-monitor-%ld-%u", (long)getpid(),
             T.generation++);
    if (zmq_socket_monitor(
            T.sub, ep,
            ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_CONNECT_RETRIED |
                ZMQ_EVENT_CONNECT_DELAYED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) == 0 &&
        (T.monitor = zmq_socket(T.ctx, ZMQ_PAIR)) != NULL) {
        zmq_setsockopt(T.monitor, ZMQ_LINGER, &zero, sizeof zero);
        if (zmq_connect(T.monitor, ep) != 0) {
            zmq_close(T.monitor);
            T.monitor = NULL; /* steering still works; only the revival is lost */
        }
    }
    if (zmq_setsockopt(T.sub, ZMQ_SUBSCRIBE, "steer", 5) != 0 || mw__curve_client(T.sub) != 0 ||
        zmq_connect(T.sub, T.endpoint) != 0) {
        mw__log("cannot connect the steering socket to %s: %s", T.endpoint,
                zmq_strerror(zmq_errno()));
        return -1;
    }
    return 0;
}

static void steer_disconnect(void)
{
    if (T.sub) {
        zmq_socket_monitor(T.sub, NULL, 0);
        zmq_close(T.sub);
    }
    if (T.monitor)
        zmq_close(T.monitor);
    T.sub = T.monitor = NULL;
}

void mw__steer_open(void *ctx, const char *job, const char *endpoint)
{
    if (!ctx || !endpoint || !endpoint[0])
        return;
    T.endpoint = endpoint; /* the configuration's, alive for the run */
    T.lost_ns = 0;
    snprintf(T.job, sizeof T.job, "%s", job);
    T.ctx = ctx;
    T.revive_ns = STEER_REVIVE_NS;
    if (steer_connect() != 0)
        steer_disconnect();
}

/* Reads the monitor without waiting, and remakes the socket when the link has been down for
 * the revival delay with no retry announced by libzmq (a protocol error, an oversized frame,
 * a failed handshake: libzmq gives such a connection up for good). */
static void steer_watch(void)
{
    if (!T.monitor)
        return;
    uint16_t event;
    uint32_t value;
    while (mw_zmq_monitor_event(T.monitor, &event, &value)) {
        if (event == ZMQ_EVENT_DISCONNECTED || event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL ||
            event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL ||
            event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) {
            if (!T.lost_ns)
                T.lost_ns = mw__monotonic_ns();
        } else {
            T.lost_ns = 0; /* connected, or libzmq is retrying by itself */
        }
    }
    if (!T.lost_ns || mw__monotonic_ns() - T.lost_ns < T.revive_ns)
        return;
    steer_disconnect();
    T.lost_ns = 0;
    T.reconnects++;
    if (T.revive_ns < STEER_REVIVE_MAX_NS)
        T.revive_ns *= 2;
    if (steer_connect() != 0)
        steer_disconnect(); /* steering is off from here on, as when the first connect fails */
}

void *mw__steer_socket(void)
{
    return T.sub;
}

void mw__steer_close(void)
{
    if (T.sub) {
        steer_disconnect();
        mw__log("steer: %llu received, %llu bad, %llu for another job, %llu for other ranks, "
                "%llu built-in, %llu dropped (ring full), %llu reconnections",
                (unsigned long long)T.received, (unsigned long long)T.bad,
                (unsigned long long)T.other_job, (unsigned long long)T.not_mine,
                (unsigned long long)T.builtin, (unsigned long long)T.full,
                (unsigned long long)T.reconnects);
    }
}

int mw__steer_number(const char **s, uint64_t *out)
{
    const char *p = *s;
    uint64_t v = 0;
    size_t n = 0;
    while (*p >= '0' && *p <= '9' && n < 16) {
        v = v * 10 + (uint64_t)(*p++ - '0');
        n++;
    }
    if (n == 0 || n > 15)
        return -1;
    *s = p;
    *out = v;
    return 0;
}

uint64_t mw__fenced_now(void)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (mw__g.use_tsc)
        __builtin_ia32_lfence();
    return mw__global_ns(mw__now());
}

/* Bounded, no C0 control characters and no DEL; the collector checks the full UTF-8. */
static int value_ok(const char *v)
{
    size_t n = strnlen(v, STEER_VALUE_MAX + 1);
    if (n > STEER_VALUE_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
            return 0;
    return 1;
}

/* A key of the library itself. Returns 1 when handled (or refused) here. */
static int steer_builtin(const char *key, const char *value)
{
    if (strncmp(key, "mpiwatch.", 9) != 0)
        return 0;
    T.builtin++;
    const char *k = key + 9;
    if (strcmp(k, "pause") == 0) {
        mw__set_state(-1, 1);
    } else if (strcmp(k, "resume") == 0) {
        mw__set_state(-1, 0);
    } else if (strcmp(k, "capture") == 0) {
        mw__capture_request(value); /* refusals are counted there, by reason */
    } else if (strcmp(k, "window") == 0) {
        mw__grid_request(value); /* grid.c; refusals are counted there, by reason */
    } else if (strcmp(k, "trace") == 0) {
        mw__trace_plan_request(value); /* trace_send.c; refusals are counted there */
    } else if (strcmp(k, "mode") == 0) {
        if (mw__dormant_steer(value) != 0) /* dormant.c: full or dormant */
            T.bad++;
    } else {
        T.bad++;
    }
    return 1;
}

static void steer_take(const void *data, size_t len)
{
    T.arena_used = 0;
    Mpiwatch__Steer *m = mpiwatch__steer__unpack(&steer_allocator, len, data);
    if (!m || !m->key || !m->value || !m->job || mw_steer_key_error(m->key, NULL) ||
        !value_ok(m->value)) {
        T.bad++;
        return;
    }
    T.revive_ns = STEER_REVIVE_NS; /* a valid message: the link works */
    if (strcmp(m->job, T.job) != 0) {
        T.other_job++;
        return;
    }
    if (m->n_ranks) {
        size_t i = 0;
        while (i < m->n_ranks && m->ranks[i] != (uint32_t)mw__g.rank)
            i++;
        if (i == m->n_ranks) {
            T.not_mine++;
            return;
        }
    }
    if (steer_builtin(m->key, m->value))
        return;
    uint32_t h = atomic_load_explicit(&T.head, memory_order_relaxed);
    if (h - atomic_load_explicit(&T.tail, memory_order_acquire) >= STEER_RING) {
        T.full++;
        return;
    }
    steer_entry_t *e = &T.ring[h % STEER_RING];
    snprintf(e->key, sizeof e->key, "%s", m->key);
    snprintf(e->value, sizeof e->value, "%s", m->value);
    atomic_store_explicit(&T.head, h + 1, memory_order_release);
    atomic_store_explicit(&mw__steer_pending, 1, memory_order_release);
}

/* The parser of one received Steer frame, for the fuzz target (tests/fuzz/fuzz_steer.c): the
 * same checks and effects as a message taken by mw__steer_drain(), without a socket. */
void mw__steer_take(const void *data, size_t len)
{
    steer_take(data, len);
}

void mw__steer_drain(void)
{
    steer_watch();
    if (!T.sub)
        return;
    for (int i = 0; i < STEER_BATCH; i++) {
        char topic[16];
        int n = zmq_recv(T.sub, topic, sizeof topic, ZMQ_DONTWAIT);
        if (n < 0)
            return;
        int more = 0;
        size_t ml = sizeof more;
        zmq_getsockopt(T.sub, ZMQ_RCVMORE, &more, &ml);
        T.received++;
        if (n != 5 || memcmp(topic, "steer", 5) != 0 || !more) {
            T.bad++;
            while (more && zmq_recv(T.sub, topic, 0, 0) >= 0 &&
                   zmq_getsockopt(T.sub, ZMQ_RCVMORE, &more, &ml) == 0)
                ;
            continue;
        }
        zmq_msg_t msg;
        zmq_msg_init(&msg);
        if (zmq_msg_recv(&msg, T.sub, 0) < 0) {
            zmq_msg_close(&msg);
            T.bad++;
            continue;
        }
        if (zmq_msg_more(&msg)) {
            T.bad++;
            zmq_msg_close(&msg);
            more = 1;
            while (more && zmq_recv(T.sub, topic, 0, 0) >= 0 &&
                   zmq_getsockopt(T.sub, ZMQ_RCVMORE, &more, &ml) == 0)
                ;
            continue;
        }
        steer_take(zmq_msg_data(&msg), zmq_msg_size(&msg));
        zmq_msg_close(&msg);
    }
}

/* Runs the callback on every waiting message. Returns how many were delivered. */
static int steer_consume(void)
{
    if (atomic_flag_test_and_set_explicit(&T.consuming, memory_order_acquire))
        return 0; /* another thread, or a callback's own MPI call, is consuming */
    /* Clearing first (an exchange that reads the producer's release store) means a message
     * pushed after the loop below looked at `head` raises the flag again: none is missed. */
    atomic_exchange_explicit(&mw__steer_pending, 0, memory_order_acq_rel);
    int n = 0;
    uint32_t t = atomic_load_explicit(&T.tail, memory_order_relaxed);
    while (t != atomic_load_explicit(&T.head, memory_order_acquire)) {
        steer_entry_t *e = &T.ring[t % STEER_RING];
        if (T.fn) {
            in_callback = 1;
            T.fn(e->key, e->value, T.fn_ctx);
            in_callback = 0;
            n++;
        } else {
            atomic_fetch_add_explicit(&T.unhandled, 1, memory_order_relaxed);
        }
        atomic_store_explicit(&T.tail, ++t, memory_order_release);
    }
    atomic_fetch_add_explicit(&T.delivered, (uint64_t)n, memory_order_relaxed);
    atomic_flag_clear_explicit(&T.consuming, memory_order_release);
    return n;
}

void mw__steer_dispatch(mw_thread_t *t)
{
    /* Only the thread that called MPI_Init delivers from inside an MPI call: a program's other
     * threads may not expect the callback (they can still call mw_poll()). */
    if (t == mw__steps.thread)
        steer_consume();
}

MW_EXPORT void mw_on_steer(mw_steer_fn fn, void *ctx)
{
    if (in_callback) { /* from inside the callback: this thread holds the flag */
        T.fn = fn;
        T.fn_ctx = ctx;
        return;
    }
    /* Registration is rare: wait for a running delivery to finish rather than tear the pair. */
    while (atomic_flag_test_and_set_explicit(&T.consuming, memory_order_acquire))
        sched_yield();
    T.fn = fn;
    T.fn_ctx = ctx;
    atomic_flag_clear_explicit(&T.consuming, memory_order_release);
}

MW_EXPORT int mw_poll(void)
{
    if (!atomic_load_explicit(&mw__steer_pending, memory_order_acquire))
        return 0;
    return steer_consume();
}
