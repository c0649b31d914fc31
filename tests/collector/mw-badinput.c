/* mw-badinput: throws bad input at a running collector, then a valid 1-rank job.
 *
 *   mw-badinput bad ENDPOINT TCP_HOST TCP_PORT
 *       Over ZeroMQ (PUSH to ENDPOINT): garbage, an HTTP request, a truncated envelope, an
 *       oversized frame (on its own connection, which libzmq drops), a multipart message,
 *       wrong version, no body, sample before hello, rank out of range, foreign function
 *       table, insane timestamps, bogus fields; then the valid hello of job "badinput"
 *       (1 rank) and more bad messages that need a job (job mismatch, duplicate hello,
 *       duplicate window, ...), plus one valid sample. Over plain TCP to TCP_HOST:TCP_PORT
 *       (a ZeroMQ endpoint too): random bytes and an HTTP GET, i.e. not ZeroMQ at all, then
 *       hand-written ZMTP: a peer that announces a frame of 2^62 bytes, and a greeting that
 *       asks for the CURVE mechanism. None of these reaches the collector as a message.
 *   mw-badinput job ENDPOINT
 *       Two more valid samples and the bye that ends the job.
 *   mw-badinput partial ENDPOINT
 *       A valid hello and two samples, and no bye: a job the collector must end by itself
 *       (silence timeout) or on a signal.
 *
 * Each mode prints on stdout, as JSON, what the collector should have counted: accepted
 * messages, rejections by reason, and the number of valid samples, each of which carries the
 * same content (also printed), so the test script can check the stats and summary files.
 * DESIGN: envelopes are built with tests/collector/testmsg.c, the same builder the unit tests
 * use; everything is deterministic (fixed-seed "random" bytes) so a failure reproduces.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "mw_limits.h"
#include "testmsg.h"

#define JOB "badinput"
#define REASONS 21

static const char *const reason_names[REASONS] = {
    "multipart",     "too_large",      "decode",          "version",       "no_body",
    "job_mismatch",  "table_mismatch", "rank_range",      "no_hello",      "duplicate",
    "timestamp",     "bad_field",      "duplicate_hello", "capture_field", "capture_time",
    "grid_mismatch", "totals",         "topo_depth",      "ahead",         "trace",
    "connection"};

static unsigned expected[REASONS];
static unsigned accepted, samples;
static unsigned caps_pus, caps_objects; /* parts of hellos the collector must cap (caps mode) */

static void expect(const char *reason)
{
    for (int i = 0; i < REASONS; i++) {
        if (strcmp(reason_names[i], reason) == 0) {
            expected[i]++;
            return;
        }
    }
    fprintf(stderr, "mw-badinput: unknown reason %s\n", reason);
    exit(2);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die_zmq(const char *what)
{
    fprintf(stderr, "mw-badinput: %s: %s\n", what, zmq_strerror(zmq_errno()));
    exit(1);
}

static void *push_socket(void *ctx, const char *endpoint)
{
    void *s = zmq_socket(ctx, ZMQ_PUSH);
    if (!s)
        die_zmq("zmq_socket");
    int linger = 5000, hwm = 100000;
    if (zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
        zmq_setsockopt(s, ZMQ_SNDHWM, &hwm, sizeof hwm) != 0)
        die_zmq("zmq_setsockopt");
    if (zmq_connect(s, endpoint) != 0)
        die_zmq("zmq_connect");
    return s;
}

static void send_raw(void *s, const void *data, size_t len, int flags)
{
    if (zmq_send(s, data, len, flags) < 0)
        die_zmq("zmq_send");
}

static void send_msg(void *s, const tm_msg_t *m, const char *reason)
{
    uint8_t *buf;
    size_t n = tm_pack(m, &buf);
    send_raw(s, buf, n, 0);
    free(buf);
    if (reason)
        expect(reason);
    else
        accepted++;
}

/* The content of every valid sample. */
static void valid_sample(tm_msg_t *m, uint64_t window)
{
    tm_sample(m, JOB, 0, window, now_ns());
    tm_add_fn(m, mw_fn_id("MPI_Allreduce"), 10, 10000, 500, 2000, 800);
    tm_add_fn(m, mw_fn_id("MPI_Send"), 2, 300, 100, 200, 128);
    tm_add_peer(m, 0, 2, 128);
    tm_add_occ(m, mw_fn_id("MPI_Allreduce"), 1, 10000);
    tm_add_call(m, mw_fn_id("MPI_Allreduce"), now_ns() - 5000, 2000, 8, -1);
}

static uint64_t current_window(void)
{
    return tm_window_of(now_ns());
}

/* Bytes that can never be a protobuf message: every byte has the varint continuation bit,
 * so the first tag never ends. */
static void garbage(uint8_t *buf, size_t len, uint64_t seed)
{
    for (size_t i = 0; i < len; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        buf[i] = (uint8_t)(seed >> 56) | 0x80;
    }
}

/* A ZMTP/3.0 greeting (64 bytes) with the given mechanism, as a client. */
static size_t zmtp_greeting(uint8_t *g, const char *mechanism)
{
    memset(g, 0, 64);
    g[0] = 0xff;
    g[9] = 0x7f;
    g[10] = 3; /* version 3.0 */
    memcpy(g + 12, mechanism, strlen(mechanism));
    return 64;
}

/* Round 2: a well-formed ZMTP/3.0 peer (NULL mechanism, READY as a PUSH socket) that then
 * announces one frame of 2^62 bytes. */
static size_t zmtp_huge_frame(uint8_t *b)
{
    static const uint8_t ready[] = {0x04, 26,  5,   'R', 'E', 'A', 'D', 'Y', 11,  'S',
                                    'o',  'c', 'k', 'e', 't', '-', 'T', 'y', 'p', 'e',
                                    0,    0,   0,   4,   'P', 'U', 'S', 'H'};
    size_t n = zmtp_greeting(b, "NULL");
    memcpy(b + n, ready, sizeof ready);
    n += sizeof ready;
    static const uint8_t frame[9] = {0x02, 0x40, 0, 0, 0, 0, 0, 0, 0}; /* long, 2^62 bytes */
    memcpy(b + n, frame, sizeof frame);
    n += sizeof frame;
    memset(b + n, 0x41, 64); /* the start of its body */
    return n + 64;
}

static void not_zeromq(const char *host, const char *port)
{
    static const char http[] = "GET /metrics HTTP/1.1\r\nHost: collector\r\n\r\n";
    /* Random bytes; an HTTP request; a ZMTP peer announcing a 2^62-byte frame; a ZMTP
     * greeting asking for a security mechanism the collector does not run (CURVE). */
    for (int round = 0; round < 4; round++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port))};
        if (fd < 0 || inet_pton(AF_INET, host, &sa.sin_addr) != 1 ||
            connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
            fprintf(stderr, "mw-badinput: connect %s:%s: %s\n", host, port, strerror(errno));
            exit(1);
        }
        uint8_t junk[4096];
        size_t len = sizeof junk;
        const void *out = junk;
        garbage(junk, sizeof junk, 99 + (uint64_t)round);
        if (round == 1) {
            out = http;
            len = sizeof http - 1;
        } else if (round == 2) {
            len = zmtp_huge_frame(junk);
        } else if (round == 3) {
            len = zmtp_greeting(junk, "CURVE");
        }
        ssize_t n = write(fd, out, len);
        if (n < 0)
            fprintf(stderr, "mw-badinput: write: %s (the collector hung up: fine)\n",
                    strerror(errno));
        char reply[256];
        struct timeval tv = {.tv_sec = 0, .tv_usec = 300000};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        while (read(fd, reply, sizeof reply) > 0) /* the ZMTP greeting, then a hang-up */
            ;
        close(fd);
    }
}

static void print_expectations(void)
{
    printf("{\"accepted\": %u, \"samples\": %u, \"rejected\": {", accepted, samples);
    for (int i = 0; i < REASONS; i++)
        printf("%s\"%s\": %u", i ? ", " : "", reason_names[i], expected[i]);
    printf("}, \"capped\": {\"pus\": %u, \"objects\": %u, \"names\": 0, \"job_info\": 0}", caps_pus,
           caps_objects);
    printf(",\n \"per_sample\": {\"MPI_Allreduce\": {\"count\": 10, \"time_ns\": 10000, "
           "\"bytes\": 800}, \"MPI_Send\": {\"count\": 2, \"time_ns\": 300, \"bytes\": 128}},\n"
           " \"pair_per_sample\": {\"src\": 0, \"dst\": 0, \"messages\": 2, \"bytes\": 128}}\n");
}

static void mode_bad(void *ctx, const char *endpoint, const char *host, const char *port)
{
    tm_msg_t m;
    uint8_t *buf;
    size_t n;

    /* An oversized frame, alone on its connection: libzmq (ZMQ_MAXMSGSIZE) drops the frame
     * and that connection before the collector sees it, so no counter moves. */
    {
        void *big = push_socket(ctx, endpoint);
        size_t len = MW_MAX_MESSAGE_BYTES + 1;
        uint8_t *data = calloc(1, len);
        if (!data)
            exit(1);
        send_raw(big, data, len, 0);
        free(data);
        if (zmq_close(big) != 0)
            die_zmq("zmq_close");
    }

    void *s = push_socket(ctx, endpoint);
    uint8_t junk[512];
    garbage(junk, sizeof junk, 1);
    send_raw(s, junk, sizeof junk, 0);
    expect("decode");
    garbage(junk, 7, 2);
    send_raw(s, junk, 7, 0);
    expect("decode");
    static const char http[] = "GET / HTTP/1.1\r\nHost: collector\r\n\r\n";
    send_raw(s, http, sizeof http - 1, 0);
    expect("decode");

    tm_hello(&m, JOB, 0, 1, now_ns());
    n = tm_pack(&m, &buf);
    send_raw(s, buf, n - 3, 0); /* truncated inside the last string */
    expect("decode");
    send_raw(s, buf, n, ZMQ_SNDMORE); /* a valid hello, but in two frames */
    send_raw(s, buf, n, 0);
    expect("multipart");
    free(buf);

    tm_hello(&m, JOB, 0, 1, now_ns());
    m.env.version = 7;
    send_msg(s, &m, "version");
    tm_hello(&m, JOB, 0, 1, now_ns());
    m.env.body_case = MPIWATCH__ENVELOPE__BODY__NOT_SET;
    send_msg(s, &m, "no_body");
    valid_sample(&m, current_window());
    send_msg(s, &m, "no_hello");
    tm_hello(&m, JOB, 5, 1, now_ns());
    send_msg(s, &m, "rank_range");
    tm_hello(&m, JOB, 0, 1, now_ns());
    m.hello.function_table_hash ^= 0x5a5a;
    send_msg(s, &m, "table_mismatch");
    tm_hello(&m, JOB, 0, 1, now_ns() - 2 * 86400000000000ull);
    send_msg(s, &m, "timestamp");
    tm_hello(&m, JOB, 0, 1, now_ns());
    m.hello.window_ns = 0;
    send_msg(s, &m, "bad_field");
    /* A node's hardware as a chain of 65,536 objects, each inside the previous one (~1 MB):
     * deeper than MW_MAX_TOPO_DEPTH. It once reached every viewer and crashed its layout. */
    {
        static Mpiwatch__TopoObject chain[MW_MAX_TOPO_OBJECTS];
        static Mpiwatch__TopoObject *chain_p[MW_MAX_TOPO_OBJECTS];
        Mpiwatch__NodeTopology topo = MPIWATCH__NODE_TOPOLOGY__INIT;
        for (uint32_t i = 0; i < MW_MAX_TOPO_OBJECTS; i++) {
            mpiwatch__topo_object__init(&chain[i]);
            chain[i].type = i + 1 < MW_MAX_TOPO_OBJECTS ? 3 : 4;
            chain[i].parent = (int32_t)i - 1;
            chain[i].logical = chain[i].os_index = i;
            chain_p[i] = &chain[i];
        }
        topo.n_objects = MW_MAX_TOPO_OBJECTS;
        topo.objects = chain_p;
        tm_hello(&m, JOB, 0, 1, now_ns());
        m.hello.topology = &topo;
        send_msg(s, &m, "topo_depth");
    }

    tm_hello(&m, JOB, 0, 1, now_ns()); /* the job starts */
    send_msg(s, &m, NULL);

    valid_sample(&m, current_window());
    snprintf(m.job, sizeof m.job, "another-job");
    send_msg(s, &m, "job_mismatch");
    valid_sample(&m, current_window());
    m.env.rank = 3;
    send_msg(s, &m, "rank_range");
    valid_sample(&m, current_window());
    m.fs[0].fn = 0;
    send_msg(s, &m, "bad_field");
    valid_sample(&m, current_window());
    m.density_fn[0] = mw_fn_id("MPI_Send");
    m.sample.n_density_fn = 1; /* one of five parallel arrays */
    send_msg(s, &m, "bad_field");
    valid_sample(&m, current_window());
    m.sample.sent_ns += 3 * 86400000000000ull;
    send_msg(s, &m, "timestamp");
    /* A window of another grid (a rank that missed an mpiwatch.window change). */
    valid_sample(&m, current_window());
    m.sample.window_ns = 2 * TM_WINDOW_NS;
    m.sample.window_start_ns = current_window() * TM_WINDOW_NS;
    send_msg(s, &m, "grid_mismatch");
    /* A window an hour ahead of the collector's clock (its K placing would follow it). */
    valid_sample(&m, current_window() + 36000);
    send_msg(s, &m, "ahead");
    /* Running totals whose parallel arrays differ in length (loss accounting). */
    valid_sample(&m, current_window());
    tm_add_total(&m, mw_fn_id("MPI_Allreduce"), 10, 10000, 800);
    m.sample.n_total_bytes = 0;
    m.sample.samples_total = 1;
    send_msg(s, &m, "totals");
    tm_hello(&m, JOB, 0, 1, now_ns());
    m.hello.pid = 777;
    send_msg(s, &m, "duplicate_hello");
    /* A trace sent after its sample (Envelope.trace) for a window the rank never sent. */
    {
        Mpiwatch__Trace t = MPIWATCH__TRACE__INIT;
        t.window = current_window() + 5;
        t.state = 2; /* summary only */
        Mpiwatch__Envelope env = MPIWATCH__ENVELOPE__INIT;
        env.version = MW_PROTO_VERSION;
        env.job = (char *)JOB;
        env.body_case = MPIWATCH__ENVELOPE__BODY_TRACE;
        env.trace = &t;
        uint8_t tbuf[256];
        size_t tlen = mpiwatch__envelope__pack(&env, tbuf);
        send_raw(s, tbuf, tlen, 0);
        expect("trace");
    }

    valid_sample(&m, current_window());
    send_msg(s, &m, NULL);
    samples++;
    send_msg(s, &m, "duplicate");

    if (zmq_close(s) != 0) /* lingers until everything is delivered */
        die_zmq("zmq_close");
    not_zeromq(host, port);
}

static void mode_job(void *ctx, const char *endpoint)
{
    void *s = push_socket(ctx, endpoint);
    tm_msg_t m;
    uint64_t w = current_window(); /* later than the bad phase's sample */
    for (uint64_t k = 0; k < 2; k++) {
        valid_sample(&m, w + k);
        send_msg(s, &m, NULL);
        samples++;
    }
    tm_bye(&m, JOB, 0);
    m.bye.windows_sent = 3;
    send_msg(s, &m, NULL);
    if (zmq_close(s) != 0)
        die_zmq("zmq_close");
}

/* A job whose hellos claim more than two job-wide caps (docs/collector.md "Caps"): ranks of
 * MW_MAX_PUS PUs each, one more than MW_JOB_MAX_PUS holds, and as many nodes of
 * MW_MAX_TOPO_OBJECTS objects (a package and its PUs), one more than MW_JOB_MAX_TOPO_OBJECTS
 * holds. Every hello is accepted; the collector counts one `pus` and one `objects` (printed as
 * "capped"). Every rank then says bye, so the job ends. About 20 MB in all. */
static void mode_caps(void *ctx, const char *endpoint)
{
    void *s = push_socket(ctx, endpoint);
    static uint32_t pus[MW_MAX_PUS];
    static Mpiwatch__TopoObject obj[MW_MAX_TOPO_OBJECTS];
    static Mpiwatch__TopoObject *obj_p[MW_MAX_TOPO_OBJECTS];
    for (uint32_t i = 0; i < MW_MAX_PUS; i++)
        pus[i] = i;
    for (uint32_t i = 0; i < MW_MAX_TOPO_OBJECTS; i++) {
        mpiwatch__topo_object__init(&obj[i]);
        obj[i].type = i ? 4 : 1;
        obj[i].parent = i ? 0 : -1;
        obj[i].logical = obj[i].os_index = i;
        obj_p[i] = &obj[i];
    }
    const uint32_t pu_ranks = MW_JOB_MAX_PUS / MW_MAX_PUS + 1;
    const uint32_t hw_ranks = MW_JOB_MAX_TOPO_OBJECTS / MW_MAX_TOPO_OBJECTS + 1;
    const uint32_t size = pu_ranks > hw_ranks ? pu_ranks : hw_ranks;
    tm_msg_t m;
    for (uint32_t r = 0; r < size; r++) {
        char node[32];
        snprintf(node, sizeof node, "capsnode%u", r);
        Mpiwatch__NodeTopology topo = MPIWATCH__NODE_TOPOLOGY__INIT;
        tm_hello(&m, "caps-job", r, size, now_ns());
        m.hello.node = node;
        if (r < pu_ranks) {
            m.hello.n_pus = MW_MAX_PUS;
            m.hello.pus = pus;
        }
        if (r < hw_ranks) {
            topo.node = node;
            topo.n_objects = MW_MAX_TOPO_OBJECTS;
            topo.objects = obj_p;
            m.hello.topology = &topo;
        }
        send_msg(s, &m, NULL);
    }
    caps_pus = 1;
    caps_objects = 1;
    for (uint32_t r = 0; r < size; r++) {
        tm_bye(&m, "caps-job", r);
        send_msg(s, &m, NULL);
    }
    if (zmq_close(s) != 0)
        die_zmq("zmq_close");
}

static void mode_partial(void *ctx, const char *endpoint)
{
    void *s = push_socket(ctx, endpoint);
    tm_msg_t m;
    tm_hello(&m, JOB, 0, 1, now_ns());
    send_msg(s, &m, NULL);
    uint64_t w = current_window();
    for (uint64_t k = 0; k < 2; k++) {
        valid_sample(&m, w + k);
        send_msg(s, &m, NULL);
        samples++;
    }
    if (zmq_close(s) != 0)
        die_zmq("zmq_close");
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "bad") == 0 && argc != 5) ||
        (strcmp(argv[1], "bad") != 0 && argc != 3)) {
        fprintf(stderr, "usage: mw-badinput bad ENDPOINT TCP_HOST TCP_PORT\n"
                        "       mw-badinput job|partial|caps ENDPOINT\n");
        return 2;
    }
    void *ctx = zmq_ctx_new();
    if (!ctx)
        die_zmq("zmq_ctx_new");
    if (strcmp(argv[1], "bad") == 0)
        mode_bad(ctx, argv[2], argv[3], argv[4]);
    else if (strcmp(argv[1], "job") == 0)
        mode_job(ctx, argv[2]);
    else if (strcmp(argv[1], "partial") == 0)
        mode_partial(ctx, argv[2]);
    else if (strcmp(argv[1], "caps") == 0)
        mode_caps(ctx, argv[2]);
    else
        return 2;
    if (zmq_ctx_term(ctx) != 0)
        die_zmq("zmq_ctx_term");
    print_expectations();
    return 0;
}
