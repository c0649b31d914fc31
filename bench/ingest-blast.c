/* ingest-blast.c: mw-ingest-blast, a cheap sender of one large job, for bench/run-ingest.sh.
 *
 *   mw-ingest-blast --connect ENDPOINT --ranks N --rate HZ --functions F --seconds S
 *                   [--job NAME] [--totals-json FILE]
 *
 * mpiwatch-loadgen builds and encodes every sample from scratch (random content, protobuf-c
 * pack), which at 16,384 ranks x 10 windows/s takes more than one core of the 2-core machine
 * the benchmark runs on, so the generator, not the collector, sets the pace. This sender does
 * the same job (hellos, one sample per rank per window on the real-time grid, byes) for a
 * fraction of the CPU, so that the collector can be loaded at that rate on such a machine.
 *
 * DESIGN: each rank's Sample is encoded once with protobuf-c, with content shaped like the
 * load generator's (F function summaries with a 6-bin histogram, up to 6 peers, occupancy of 4
 * functions over 10 sub-slots, 36 density cells, 4 long calls; about 1.2 KB with 20
 * functions). For each window only the window index and sent_ns change; both are varints of
 * a length that does not change during a run (a window index near now, a time in ns), so they
 * are rewritten in place, and the envelope header (version, job, rank, seq) is written in
 * front of the encoded sample by hand. Pacing and "never drop" are the load generator's: window
 * k is sent when it ends, on PUSH sockets with a huge high-water mark and blocking sends. The
 * content is the same every window, which the collector's cost does not depend on; every
 * message is still a distinct, valid envelope it decodes, checks and merges in full.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <zmq.h>

#include "mw_proto.h"
#include "mw_wire.h"

#define BL_SUBSLOTS 10u
#define BL_BINS 40u
#define BL_PEERS 6u
#define BL_OCC_FNS 4u
#define BL_DENSITY 36u
#define BL_LONGEST 4u
#define BL_MAX_FUNCTIONS 28u
#define BL_RANKS_PER_SOCKET 1024u

/* The functions, in the order (and with the typical duration bins) of the load generator. */
static const struct {
    const char *name;
    unsigned bin;
} FNS[BL_MAX_FUNCTIONS] = {
    {"MPI_Allreduce", 13},  {"MPI_Isend", 9},
    {"MPI_Irecv", 8},       {"MPI_Waitall", 14},
    {"MPI_Bcast", 12},      {"MPI_Barrier", 16},
    {"MPI_Send", 11},       {"MPI_Recv", 13},
    {"MPI_Reduce", 13},     {"MPI_Allgather", 14},
    {"MPI_Alltoall", 17},   {"MPI_Wait", 10},
    {"MPI_Test", 7},        {"MPI_Sendrecv", 12},
    {"MPI_Gather", 14},     {"MPI_Scatter", 14},
    {"MPI_Iallreduce", 10}, {"MPI_Waitany", 12},
    {"MPI_Alltoallv", 18},  {"MPI_Allgatherv", 15},
    {"MPI_Iprobe", 7},      {"MPI_Reduce_scatter", 15},
    {"MPI_Ibcast", 10},     {"MPI_Scan", 13},
    {"MPI_Testall", 8},     {"MPI_Probe", 12},
    {"MPI_Comm_rank", 5},   {"MPI_Comm_size", 5},
};

static struct {
    const char *endpoint, *job, *totals_json;
    unsigned ranks, functions;
    double rate, seconds;
    uint64_t window_ns;
    void *ctx;
    void **socks;
    unsigned n_socks;
    unsigned fn_id[BL_MAX_FUNCTIONS];
    uint8_t **sample; /* [ranks]: the encoded Sample of each rank */
    size_t *sample_len;
    size_t window_at, sent_at; /* offsets of the two varints rewritten every window */
    size_t window_len, sent_len;
    uint64_t *seq;
    uint8_t *buf;
    uint64_t hellos, samples, byes, bytes, summaries;
} B;

static uint64_t now_ns(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t rng(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Writes v into exactly `len` bytes (the length it had when the sample was encoded). */
static int put_varint_fixed(uint8_t *p, uint64_t v, size_t len)
{
    if (mw_wire_varint_len(v) != len)
        return -1;
    mw_wire_put_varint(p, v);
    return 0;
}

static int send_bytes(unsigned rank, const void *data, size_t len)
{
    void *sock = B.socks[rank % B.n_socks];
    while (zmq_send(sock, data, len, 0) < 0) {
        if (errno == EINTR)
            continue;
        fprintf(stderr, "mw-ingest-blast: zmq_send: %s\n", zmq_strerror(errno));
        return -1;
    }
    B.bytes += len;
    return 0;
}

static int send_envelope(Mpiwatch__Envelope *env, unsigned rank)
{
    env->version = MW_PROTO_VERSION;
    env->job = (char *)B.job;
    env->rank = rank;
    env->seq = B.seq[rank]++;
    size_t len = mpiwatch__envelope__get_packed_size(env);
    if (len > MW_MAX_MESSAGE_BYTES)
        return -1;
    mpiwatch__envelope__pack(env, B.buf);
    return send_bytes(rank, B.buf, len);
}

static int send_hello(unsigned rank)
{
    char host[32], binding[64], cpuset[16];
    unsigned slot = rank % 16;
    snprintf(host, sizeof host, "node%03u", rank / 16);
    snprintf(binding, sizeof binding, "pu %u core %u package %u", slot, slot, slot / 8);
    snprintf(cpuset, sizeof cpuset, "%u", slot);
    Mpiwatch__Hello h = MPIWATCH__HELLO__INIT;
    h.size = B.ranks;
    h.host = host;
    h.pid = 10000 + rank;
    h.binding = binding;
    h.cpuset = cpuset;
    h.pu = h.core = (int32_t)slot;
    h.package = (int32_t)(slot / 8);
    h.mpi_library = "Open MPI v4.1.4 (emulated by mw-ingest-blast)";
    h.clock_error_ns = 1000;
    h.window_ns = B.window_ns;
    h.subslots = BL_SUBSLOTS;
    h.duration_bins = BL_BINS;
    h.function_count = MW_FN_COUNT - 1;
    static uint64_t table_hash;
    if (!table_hash)
        table_hash = mw_fn_table_hash();
    h.function_table_hash = table_hash;
    h.timer = "tsc";
    h.start_ns = now_ns(CLOCK_REALTIME);
    h.program = "mw-ingest-blast";
    Mpiwatch__Envelope env = MPIWATCH__ENVELOPE__INIT;
    env.body_case = MPIWATCH__ENVELOPE__BODY_HELLO;
    env.hello = &h;
    if (send_envelope(&env, rank) < 0)
        return -1;
    B.hellos++;
    return 0;
}

/* Encodes rank's sample for window `k` (sent at `sent`); records where the two varints are. */
static int build_sample(unsigned rank, uint64_t k, uint64_t sent)
{
    Mpiwatch__FunctionStat fs[BL_MAX_FUNCTIONS], *fsp[BL_MAX_FUNCTIONS];
    uint32_t hist[BL_MAX_FUNCTIONS][6];
    uint32_t peer[BL_PEERS], occ_fn[BL_OCC_FNS * BL_SUBSLOTS], occ_sub[BL_OCC_FNS * BL_SUBSLOTS];
    uint64_t pmsg[BL_PEERS], pbytes[BL_PEERS], occ_ns[BL_OCC_FNS * BL_SUBSLOTS];
    uint32_t d_fn[BL_DENSITY], d_bin[BL_DENSITY], d_end[BL_DENSITY];
    int32_t d_sub[BL_DENSITY];
    uint64_t d_count[BL_DENSITY];
    Mpiwatch__Call calls[BL_LONGEST], *callp[BL_LONGEST];
    uint64_t s = 0x1234567ull + rank;

    Mpiwatch__Sample smp = MPIWATCH__SAMPLE__INIT;
    for (unsigned i = 0; i < B.functions; i++) {
        Mpiwatch__FunctionStat *f = &fs[i];
        mpiwatch__function_stat__init(f);
        unsigned lo = FNS[i].bin - 2;
        uint64_t count = 0, total = 0;
        for (unsigned b = 0; b < 6; b++) {
            hist[i][b] = (uint32_t)(1 + rng(&s) % 200);
            count += hist[i][b];
            total += hist[i][b] * ((3ull << (lo + b)) / 2);
        }
        f->fn = B.fn_id[i];
        f->count = count;
        f->total_ns = total;
        f->min_ns = 1ull << lo;
        f->max_ns = (2ull << (lo + 5)) - 1;
        f->bytes = count * (rng(&s) % 65536);
        f->hist_first = lo;
        f->n_hist = 6;
        f->hist = hist[i];
        fsp[i] = f;
    }
    smp.n_functions = B.functions;
    smp.functions = fsp;
    unsigned np = B.ranks > 1 ? (B.ranks > BL_PEERS ? BL_PEERS : B.ranks - 1) : 0;
    for (unsigned p = 0; p < np; p++) {
        peer[p] = p < 2 ? (rank + (p ? B.ranks - 1 : 1)) % B.ranks : (uint32_t)(rng(&s) % B.ranks);
        pmsg[p] = 1 + rng(&s) % 500;
        pbytes[p] = pmsg[p] * 16384;
    }
    smp.n_peer_rank = smp.n_peer_messages = smp.n_peer_bytes = np;
    smp.peer_rank = peer;
    smp.peer_messages = pmsg;
    smp.peer_bytes = pbytes;
    size_t no = 0;
    for (unsigned i = 0; i < BL_OCC_FNS && i < B.functions; i++)
        for (unsigned sub = 0; sub < BL_SUBSLOTS; sub++, no++) {
            occ_fn[no] = fs[i].fn;
            occ_sub[no] = sub;
            occ_ns[no] = 1000 + rng(&s) % (B.window_ns / BL_SUBSLOTS / 2);
        }
    smp.n_occ_fn = smp.n_occ_sub = smp.n_occ_ns = no;
    smp.occ_fn = occ_fn;
    smp.occ_sub = occ_sub;
    smp.occ_ns = occ_ns;
    for (unsigned i = 0; i < BL_DENSITY; i++) {
        const Mpiwatch__FunctionStat *f = &fs[i % (B.functions < 3 ? B.functions : 3)];
        d_fn[i] = f->fn;
        d_sub[i] = (int32_t)(rng(&s) % BL_SUBSLOTS);
        d_bin[i] = f->hist_first + (uint32_t)(i % 6);
        d_end[i] = 1;
        d_count[i] = 1 + rng(&s) % 100;
    }
    smp.n_density_fn = smp.n_density_sub = smp.n_density_bin = smp.n_density_end =
        smp.n_density_count = BL_DENSITY;
    smp.density_fn = d_fn;
    smp.density_sub = d_sub;
    smp.density_bin = d_bin;
    smp.density_end = d_end;
    smp.density_count = d_count;
    for (unsigned i = 0; i < BL_LONGEST; i++) {
        mpiwatch__call__init(&calls[i]);
        calls[i].fn = fs[i % B.functions].fn;
        calls[i].duration_ns = fs[i % B.functions].max_ns;
        calls[i].start_ns = sent - calls[i].duration_ns - rng(&s) % B.window_ns;
        calls[i].bytes = 4096;
        calls[i].peer = np ? (int32_t)peer[0] : -1;
        callp[i] = &calls[i];
    }
    smp.n_longest = BL_LONGEST;
    smp.longest = callp;
    smp.window = k;
    smp.sent_ns = sent;

    size_t len = mpiwatch__sample__get_packed_size(&smp);
    uint8_t *out = malloc(len);
    if (!out)
        return -1;
    mpiwatch__sample__pack(&smp, out);
    /* protobuf-c writes fields in number order: the window (1) first, sent_ns (18) last. */
    size_t wl = mw_wire_varint_len(k), sl = mw_wire_varint_len(sent);
    if (out[0] != 0x08 || len < 3 + sl || out[len - sl - 2] != 0x90 || out[len - sl - 1] != 0x01) {
        fprintf(stderr, "mw-ingest-blast: unexpected sample layout\n");
        free(out);
        return -1;
    }
    B.sample[rank] = out;
    B.sample_len[rank] = len;
    B.window_at = 1;
    B.window_len = wl;
    B.sent_at = len - sl;
    B.sent_len = sl;
    return 0;
}

/* The sample of rank for window k, sent now: header written in front of the stored sample. */
static int send_sample(unsigned rank, uint64_t k)
{
    uint8_t *smp = B.sample[rank];
    size_t n = B.sample_len[rank];
    if (put_varint_fixed(smp + B.window_at, k, B.window_len) < 0 ||
        put_varint_fixed(smp + n - B.sent_len, now_ns(CLOCK_REALTIME), B.sent_len) < 0) {
        fprintf(stderr, "mw-ingest-blast: a window index or time changed length\n");
        return -1;
    }
    size_t job_len = strlen(B.job);
    uint8_t *p = B.buf;
    p += mw_wire_put_tag(p, 1, MW_WIRE_VARINT); /* version */
    p += mw_wire_put_varint(p, MW_PROTO_VERSION);
    p += mw_wire_put_tag(p, 2, MW_WIRE_LEN); /* job */
    p += mw_wire_put_varint(p, job_len);
    memcpy(p, B.job, job_len);
    p += job_len;
    p += mw_wire_put_tag(p, 3, MW_WIRE_VARINT); /* rank */
    p += mw_wire_put_varint(p, rank);
    p += mw_wire_put_tag(p, 4, MW_WIRE_VARINT); /* seq */
    p += mw_wire_put_varint(p, B.seq[rank]++);
    p += mw_wire_put_tag(p, 11, MW_WIRE_LEN); /* sample */
    p += mw_wire_put_varint(p, n);
    memcpy(p, smp, n);
    p += n;
    if (send_bytes(rank, B.buf, (size_t)(p - B.buf)) < 0)
        return -1;
    B.samples++;
    B.summaries += B.functions;
    return 0;
}

static int send_bye(unsigned rank, uint64_t windows)
{
    Mpiwatch__Bye b = MPIWATCH__BYE__INIT;
    b.windows_sent = windows;
    Mpiwatch__Envelope env = MPIWATCH__ENVELOPE__INIT;
    env.body_case = MPIWATCH__ENVELOPE__BODY_BYE;
    env.bye = &b;
    if (send_envelope(&env, rank) < 0)
        return -1;
    B.byes++;
    return 0;
}

static int parse_args(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"connect", required_argument, 0, 'c'},     {"ranks", required_argument, 0, 'n'},
        {"rate", required_argument, 0, 'r'},        {"functions", required_argument, 0, 'f'},
        {"seconds", required_argument, 0, 's'},     {"job", required_argument, 0, 'j'},
        {"totals-json", required_argument, 0, 't'}, {0, 0, 0, 0}};
    int c;
    B.job = "blast";
    while ((c = getopt_long(argc, argv, "c:n:r:f:s:j:t:", longopts, NULL)) != -1) {
        switch (c) {
        case 'c':
            B.endpoint = optarg;
            break;
        case 'n':
            B.ranks = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 'r':
            B.rate = strtod(optarg, NULL);
            break;
        case 'f':
            B.functions = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 's':
            B.seconds = strtod(optarg, NULL);
            break;
        case 'j':
            B.job = optarg;
            break;
        case 't':
            B.totals_json = optarg;
            break;
        default:
            return -1;
        }
    }
    if (optind < argc || !B.endpoint || B.ranks == 0 || B.ranks > (1u << 20) || B.functions == 0 ||
        B.functions > BL_MAX_FUNCTIONS || !(B.rate > 0 && B.rate <= 1000) || !(B.seconds > 0) ||
        strlen(B.job) > 200)
        return -1;
    return 0;
}

static int setup(void)
{
    B.window_ns = (uint64_t)llround(1e9 / B.rate);
    for (unsigned i = 0; i < B.functions; i++) {
        if (!(B.fn_id[i] = mw_fn_id(FNS[i].name))) {
            fprintf(stderr, "mw-ingest-blast: %s is not in the function table\n", FNS[i].name);
            return -1;
        }
    }
    B.n_socks = (B.ranks + BL_RANKS_PER_SOCKET - 1) / BL_RANKS_PER_SOCKET;
    B.sample = calloc(B.ranks, sizeof *B.sample);
    B.sample_len = calloc(B.ranks, sizeof *B.sample_len);
    B.seq = calloc(B.ranks, sizeof *B.seq);
    B.socks = calloc(B.n_socks, sizeof *B.socks);
    B.buf = malloc(MW_MAX_MESSAGE_BYTES);
    B.ctx = zmq_ctx_new();
    if (!B.sample || !B.sample_len || !B.seq || !B.socks || !B.buf || !B.ctx) {
        fprintf(stderr, "mw-ingest-blast: out of memory\n");
        return -1;
    }
    for (unsigned i = 0; i < B.n_socks; i++) {
        void *s = zmq_socket(B.ctx, ZMQ_PUSH);
        int hwm = 10 * 1000 * 1000, linger = 60000;
        if (!s || zmq_setsockopt(s, ZMQ_SNDHWM, &hwm, sizeof hwm) != 0 ||
            zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
            zmq_connect(s, B.endpoint) != 0) {
            fprintf(stderr, "mw-ingest-blast: socket for %s: %s\n", B.endpoint,
                    zmq_strerror(errno));
            return -1;
        }
        B.socks[i] = s;
    }
    return 0;
}

static void sleep_until_realtime(uint64_t t)
{
    struct timespec ts = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
    while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

int main(int argc, char **argv)
{
    if (parse_args(argc, argv) < 0) {
        fprintf(stderr,
                "usage: mw-ingest-blast --connect ENDPOINT --ranks N --rate HZ "
                "--functions F(<=%u) --seconds S [--job NAME] [--totals-json FILE]\n",
                BL_MAX_FUNCTIONS);
        return 2;
    }
    if (setup() < 0)
        return 1;
    uint64_t nwin = (uint64_t)llround(B.seconds * B.rate);
    if (!nwin)
        nwin = 1;
    uint64_t t0 = now_ns(CLOCK_MONOTONIC);
    for (unsigned r = 0; r < B.ranks; r++)
        if (send_hello(r) < 0)
            return 1;
    uint64_t k0 = now_ns(CLOCK_REALTIME) / B.window_ns + 2;
    for (unsigned r = 0; r < B.ranks; r++)
        if (build_sample(r, k0, now_ns(CLOCK_REALTIME)) < 0)
            return 1;
    uint64_t max_lag = 0, sum_lag = 0, late = 0, last_done = 0;
    for (uint64_t w = 0; w < nwin; w++) {
        uint64_t k = k0 + w, due = (k + 1) * B.window_ns;
        sleep_until_realtime(due);
        uint64_t start = now_ns(CLOCK_REALTIME);
        for (unsigned r = 0; r < B.ranks; r++)
            if (send_sample(r, k) < 0)
                return 1;
        last_done = now_ns(CLOCK_REALTIME);
        uint64_t lag = start > due ? start - due : 0;
        sum_lag += lag;
        max_lag = lag > max_lag ? lag : max_lag;
        late += last_done > due + B.window_ns;
    }
    for (unsigned r = 0; r < B.ranks; r++)
        if (send_bye(r, nwin) < 0)
            return 1;
    double span = (double)(last_done - k0 * B.window_ns) * 1e-9;
    for (unsigned i = 0; i < B.n_socks; i++)
        zmq_close(B.socks[i]);
    zmq_ctx_term(B.ctx);
    double elapsed = (double)(now_ns(CLOCK_MONOTONIC) - t0) * 1e-9;
    fprintf(stderr,
            "blast: job %s ranks %u functions %u window %.3f ms: hellos %" PRIu64
            " samples %" PRIu64 " byes %" PRIu64 " bytes %" PRIu64 "\n"
            "blast: windows %" PRIu64 " in %.3f s (run %.3f s): achieved %.2f windows/s for "
            "%.2f requested; window start lag max %.3f ms mean %.3f ms; %" PRIu64
            " windows finished more than a window late\n",
            B.job, B.ranks, B.functions, (double)B.window_ns * 1e-6, B.hellos, B.samples, B.byes,
            B.bytes, nwin, span, elapsed, (double)nwin / span, B.rate, (double)max_lag * 1e-6,
            (double)sum_lag * 1e-6 / (double)nwin, late);
    if (B.totals_json) {
        FILE *f = fopen(B.totals_json, "w");
        if (!f ||
            fprintf(f,
                    "{\"job\": \"%s\", \"ranks\": %u, \"windows\": %" PRIu64
                    ", \"hellos\": %" PRIu64 ", \"samples\": %" PRIu64 ", \"byes\": %" PRIu64
                    ", \"function_summaries\": %" PRIu64 ", \"bytes\": %" PRIu64
                    ", \"elapsed_s\": %.3f}\n",
                    B.job, B.ranks, nwin, B.hellos, B.samples, B.byes, B.summaries, B.bytes,
                    elapsed) < 0 ||
            fclose(f) != 0) {
            fprintf(stderr, "mw-ingest-blast: cannot write %s\n", B.totals_json);
            return 1;
        }
    }
    for (unsigned r = 0; r < B.ranks; r++)
        free(B.sample[r]);
    return 0;
}
