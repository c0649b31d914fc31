/* loadgen.c: mpiwatch-loadgen, a load generator that emulates the ranks of one MPI job.
 *
 * It sends a collector exactly the messages libmpiwatch.so sends (proto/mpiwatch.proto): one
 * hello per rank, then one sample per rank per window on the global grid, then one bye per
 * rank, with plausible hosts, bindings, function statistics, peers, occupancy, call density
 * and long calls. The scale tests, the collector benchmarks and the viewer's large-scale tests
 * use it instead of a real job with thousands of ranks.
 *
 * DESIGN: one thread. Windows are paced on the real-time grid the library uses (window k =
 * [k * window_ns, (k + 1) * window_ns) of CLOCK_REALTIME, proto/mw_grid.h with one segment:
 * the generator never changes its window length): the library sends window k when it
 * closes, so the generator sleeps until the end of window k and then sends window k for every
 * rank. Unlike the library (which drops rather than block the application), the generator must
 * never lose a message, so its PUSH sockets have a huge SNDHWM and send blocking; when the
 * collector cannot keep up, the generator falls behind schedule and says by how much.
 * Every random number comes from a generator seeded by (--seed, rank, window ordinal), so the
 * content of a run (everything except the window indices and timestamps, which follow the
 * clock) is the same for the same seed. The exact totals it sent are printed on stderr and,
 * with --totals-json, written as JSON, so a test can compare them with the collector's summary.
 * Like the library, every sample and bye also carries the rank's running totals (loss
 * accounting): kept per rank and function in increasing id, and sent without a copy.
 * With --trace K every sample also carries an exact per-call trace (Sample.trace, docs/trace.md)
 * as the library sends it. Encoding a window of thousands of calls per rank would make the
 * generator, not the collector, the bottleneck, so K traces are built and encoded once at
 * start (trace_build), and each sample takes one of them and its per-function call counts, so
 * that trace and summary agree as the collector checks.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <zmq.h>

#include "mw_bins.h"
#include "mw_file.h"
#include "mw_grid.h"
#include "mw_fnmap_msg.h"
#include "mw_proto.h"
#include "mw_trace.h"
#include "mw_version.h"

#include "collector.h" /* --aggregators: the real aggregator code (mw_collector_core) */
#include "partial.h"

#define LG_SUBSLOTS 10u
#define LG_BINS MW_BINS_QUARTER /* quarter octaves, as the library (mw_bins.h) */
#define LG_LONGEST 4u
#define LG_MAX_PEERS 6u
#define LG_DENSITY_FNS 3u /* functions with call-density entries */
#define LG_SPREAD 24u     /* quarter bins a function's calls are spread over (6 octaves) */
#define LG_OCC_FNS 4u     /* functions with occupancy entries */
#define LG_RANKS_PER_SOCKET_DEFAULT 1024u
#define LG_TRACE_MAX 1024u            /* --trace K: encoded traces kept */
#define LG_TRACE_MAX_BYTES (2u << 20) /* one encoded trace, far below a message's cap */

/* One emulated MPI function: its name, calls per second on one rank, the log2 bin of a
 * typical duration, and the bytes of one call (0: none counted). The order is roughly by how
 * common the function is in real applications; --functions F takes the first F. */
typedef struct {
    const char *name;
    double calls_per_s;
    unsigned bin;
    uint64_t bytes;
} lg_fn_model_t;

static const lg_fn_model_t FN_MODELS[] = {
    {"MPI_Allreduce", 2000, 13, 8},     {"MPI_Isend", 20000, 9, 65536},
    {"MPI_Irecv", 20000, 8, 65536},     {"MPI_Waitall", 10000, 14, 0},
    {"MPI_Bcast", 200, 12, 4096},       {"MPI_Barrier", 50, 16, 0},
    {"MPI_Send", 5000, 11, 16384},      {"MPI_Recv", 5000, 13, 16384},
    {"MPI_Reduce", 100, 13, 1024},      {"MPI_Allgather", 100, 14, 512},
    {"MPI_Alltoall", 50, 17, 262144},   {"MPI_Wait", 5000, 10, 0},
    {"MPI_Test", 10000, 7, 0},          {"MPI_Sendrecv", 1000, 12, 8192},
    {"MPI_Gather", 50, 14, 2048},       {"MPI_Scatter", 50, 14, 2048},
    {"MPI_Iallreduce", 500, 10, 64},    {"MPI_Waitany", 2000, 12, 0},
    {"MPI_Alltoallv", 20, 18, 1048576}, {"MPI_Allgatherv", 50, 15, 8192},
    {"MPI_Iprobe", 5000, 7, 0},         {"MPI_Reduce_scatter", 20, 15, 16384},
    {"MPI_Ibcast", 100, 10, 4096},      {"MPI_Scan", 20, 13, 64},
    {"MPI_Testall", 3000, 8, 0},        {"MPI_Probe", 500, 12, 0},
    {"MPI_Comm_rank", 10, 5, 0},        {"MPI_Comm_size", 10, 5, 0},
};
#define LG_MAX_FUNCTIONS ((unsigned)(sizeof FN_MODELS / sizeof FN_MODELS[0]))

#define LG_MAX_ENDPOINTS 256u /* --connect given several times */
#define LG_DEFAULT_VARIANTS 8u
#define LG_MAX_VARIANTS 64u
#define LG_CACHE_BUDGET ((size_t)2 << 30) /* bytes the cached samples may take by default */

typedef struct {
    const char *endpoint[LG_MAX_ENDPOINTS];
    unsigned n_endpoints;
    unsigned ranks, functions, nodes, sockets;
    unsigned rank_first, rank_count; /* --rank-first A --rank-count B: ranks [A, A + B) */
    unsigned hello_again; /* --hello-again N: the first N ranks say hello again after window 0 */
    unsigned variants;    /* --variants V: cached samples per rank (0: encode each one) */
    double rate, seconds;
    const char *job;
    uint64_t seed;
    const char *totals_json;
    unsigned trace; /* --trace K: traces kept, 0 none */
    int ring;       /* --trace-ring: messages matched across ranks (docs/loadgen.md) */
    unsigned late_rank, late_every; /* --late-rank R --late-every N (0: never late) */
    double late_ms;                 /* --late-ms D: how late, capped at 10 % of a window */
    unsigned regions;               /* --regions N: code regions per rank (docs/regions.md) */
    unsigned sites;                 /* --sites N: call sites per rank (docs/callsites.md) */
    int peer_fn;                    /* --peer-fn: peer entries per sending function */
    int shuffle;                    /* --table-shuffle SEED given */
    unsigned shuffle_seed;
    unsigned aggregators; /* --aggregators A: emulated aggregators feeding a root, 0 none */
} lg_opts_t;

#define LG_MAX_REGIONS 1024u /* MW_RANK_MAX_REGIONS */
#define LG_MAX_SITES 4096u   /* MW_RANK_MAX_SITES */
#define LG_SITE_MODULE "/loadgen/bin/app"

/* Known totals of one region or call site over every rank and window (--totals-json). */
typedef struct {
    uint64_t count, incl_ns, excl_ns, mpi_ns;
} lg_region_total_t;
typedef struct {
    uint64_t count, ns, bytes, max_ns;
} lg_site_total_t;

/* One window's trace, encoded once (--trace): the calls per function index it holds, which a
 * sample that carries it reports as its counts. */
typedef struct {
    uint64_t count[LG_MAX_FUNCTIONS];
    mw_trace_rec_t *recs; /* --trace-ring: the records, patched per rank and window */
    uint8_t *data;
    size_t len;
    uint32_t encoding, n;
    uint64_t raw_bytes, calls;
} lg_trace_t;

/* Job totals by function index, exactly what was sent. */
typedef struct {
    uint64_t count, time_ns, bytes;
} lg_total_t;

/* Everything the run keeps: one private state struct. */
static struct {
    lg_opts_t o;
    unsigned fn_id[LG_MAX_FUNCTIONS];
    unsigned char is_send[LG_MAX_FUNCTIONS]; /* its calls are the peer messages */
    uint64_t window_ns;
    mw_grid_t grid;        /* one segment of window_ns */
    unsigned per_node;     /* ranks on the fullest node */
    unsigned cores_per_l3; /* of the synthetic node hardware */
    Mpiwatch__TopoObject *topo;
    Mpiwatch__TopoObject **topo_ptr;
    void *ctx;
    void **socks;                            /* every endpoint's sockets, endpoint after endpoint */
    unsigned ep_first[LG_MAX_ENDPOINTS + 1]; /* endpoint e has ranks [ep_first[e], ep_first[e+1]) */
    unsigned ep_sock[LG_MAX_ENDPOINTS + 1];  /* and sockets [ep_sock[e], ep_sock[e + 1]) */
    unsigned n_socks;
    unsigned char *buf;
    size_t buf_cap;
    uint64_t *seq, *calls;
    lg_total_t tot[LG_MAX_FUNCTIONS];
    /* Running totals (loss accounting, docs/collector.md): per rank, per function in
     * increasing id (by_id), calls, ns and bytes since the rank's hello, as the library sends
     * them in every sample and its bye. rt[rank * functions + j] is function by_id[j]. */
    unsigned by_id[LG_MAX_FUNCTIONS];
    unsigned rank_pos[LG_MAX_FUNCTIONS]; /* where function index i is in by_id */
    uint32_t total_fn[LG_MAX_FUNCTIONS]; /* fn_id[by_id[j]]: the same for every rank */
    uint64_t *rt_calls, *rt_ns, *rt_bytes;
    uint64_t hellos, samples, byes, fn_summaries, bytes_sent, peer_messages;
    lg_trace_t *traces;
    uint64_t traced_calls, trace_records, trace_bytes;
    /* How the run went (--totals-json "run"): the first window's start and the end of the last
     * batch (CLOCK_REALTIME), the rate achieved, the windows sent more than a window late and
     * the CPU time spent sending the windows. */
    uint64_t first_window_ns, last_batch_ns, late_windows, sample_bytes;
    double achieved, cpu_windows;
} G;

/* ---------------------------------------------------------------------------------------- */
/* Small helpers                                                                            */

/* Where rank `rank` (one of this generator's, [rank_first, rank_first + rank_count)) is in the
 * per-rank arrays. */
static size_t lrank(unsigned rank)
{
    return rank - G.o.rank_first;
}

/* The socket of a rank: the ranks are split in contiguous blocks over the endpoints (one
 * block per aggregator), and each endpoint's block over its sockets round robin. */
static void *rank_socket(unsigned rank)
{
    unsigned e = 0;
    while (rank >= G.ep_first[e + 1])
        e++;
    unsigned n = G.ep_sock[e + 1] - G.ep_sock[e];
    return G.socks[G.ep_sock[e] + (rank - G.ep_first[e]) % n];
}

/* CPU time of the whole process (every thread, ZeroMQ's I/O threads included), user + system. */
static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
           ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e-6;
}

static uint64_t now_ns(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* splitmix64: a tiny, good, seedable generator; the state is derived per (rank, window). */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rng_seed(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t s = a * 0x100000001b3ull ^ 0xcbf29ce484222325ull;
    s ^= rng_next(&s) + b;
    s ^= rng_next(&s) + c;
    rng_next(&s);
    return s;
}

/* Uniform in [0, n), n > 0. */
static uint64_t rng_below(uint64_t *s, uint64_t n)
{
    return rng_next(s) % n;
}

/* Uniform in [0, 1). */
static double rng_unit(uint64_t *s)
{
    return (double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* ---------------------------------------------------------------------------------------- */
/* Sending                                                                                  */

/* --table-shuffle SEED (docs/function-table.md): the ranks emulate another MPI's table, this
 * build's names in another order plus names this build does not have. Every message is
 * translated from this build's ids to the emulated ones after it is encoded (decoded again,
 * translated, encoded again: the messages share arrays between ranks, and speed does not
 * matter here). */
#define LG_SHUFFLE_EXTRAS 3u
static struct {
    char *names[MW_FN_COUNT - 1 + LG_SHUFFLE_EXTRAS];
    uint32_t kinds[MW_FN_COUNT - 1 + LG_SHUFFLE_EXTRAS];
    char extra[LG_SHUFFLE_EXTRAS][32];
    uint16_t to_emulated[MW_FN_COUNT];
    mw_fnmap_t map; /* this build's ids -> the emulated ones */
} SH;

static void shuffle_setup(unsigned seed)
{
    const unsigned n = MW_FN_COUNT - 1 + LG_SHUFFLE_EXTRAS;
    unsigned id_of[MW_FN_COUNT - 1 + LG_SHUFFLE_EXTRAS]; /* entry -> id here, 0: an extra */
    for (unsigned i = 0; i < n; i++)
        id_of[i] = i < MW_FN_COUNT - 1 ? i + 1 : 0;
    uint64_t x = 0x9e3779b97f4a7c15ull ^ seed;
    for (unsigned i = n - 1; i > 0; i--) { /* Fisher-Yates with xorshift64 */
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        unsigned j = (unsigned)(x % (i + 1)), t = id_of[i];
        id_of[i] = id_of[j];
        id_of[j] = t;
    }
    unsigned e = 0;
    for (unsigned i = 0; i < n; i++) {
        if (id_of[i]) {
            SH.names[i] = (char *)mw_fn_name(id_of[i]);
            SH.kinds[i] = (uint32_t)mw_fn_kind(id_of[i]);
            SH.to_emulated[id_of[i]] = (uint16_t)(i + 1);
        } else {
            snprintf(SH.extra[e], sizeof SH.extra[e], "MPIX_Loadgen_extra%u", e);
            SH.names[i] = SH.extra[e++];
            SH.kinds[i] = MW_KIND_OTHER;
        }
    }
    SH.map.n = MW_FN_COUNT - 1;
    SH.map.to_local = SH.to_emulated;
}

/* Fills in the envelope header, encodes it and sends it blocking on the socket of the rank. */
static int send_envelope(Mpiwatch__Envelope *env, unsigned rank)
{
    env->version = MW_PROTO_VERSION;
    env->job = (char *)G.o.job;
    env->rank = rank;
    env->seq = G.seq[lrank(rank)]++;
    size_t len = mpiwatch__envelope__get_packed_size(env);
    if (len > G.buf_cap) {
        fprintf(stderr, "mpiwatch-loadgen: message of %zu bytes is too large\n", len);
        return -1;
    }
    mpiwatch__envelope__pack(env, G.buf);
    if (G.o.shuffle && env->body_case != MPIWATCH__ENVELOPE__BODY_HELLO) {
        Mpiwatch__Envelope *copy = mpiwatch__envelope__unpack(NULL, len, G.buf);
        if (!copy) {
            fprintf(stderr, "mpiwatch-loadgen: a message did not decode again\n");
            return -1;
        }
        mw_fnmap_envelope(&SH.map, copy, NULL); /* unpacked with malloc: owns its fields */
        len = mpiwatch__envelope__get_packed_size(copy);
        if (len <= G.buf_cap)
            mpiwatch__envelope__pack(copy, G.buf);
        mpiwatch__envelope__free_unpacked(copy, NULL);
        if (len > G.buf_cap) {
            fprintf(stderr, "mpiwatch-loadgen: message of %zu bytes is too large\n", len);
            return -1;
        }
    }
    void *sock = rank_socket(rank);
    while (zmq_send(sock, G.buf, len, 0) < 0) {
        if (errno == EINTR)
            continue;
        fprintf(stderr, "mpiwatch-loadgen: zmq_send: %s\n", zmq_strerror(errno));
        return -1;
    }
    G.bytes_sent += len;
    return 0;
}

/* The node of a rank: K nodes get contiguous, balanced blocks (rank r on node r * K / N), so
 * every node has ranks, as MPIWATCH_NODES places them. */
static unsigned node_of(unsigned rank)
{
    return (unsigned)((uint64_t)rank * G.o.nodes / G.o.ranks);
}

static unsigned node_first_rank(unsigned node)
{
    return (unsigned)(((uint64_t)node * G.o.ranks + G.o.nodes - 1) / G.o.nodes);
}

/* The synthetic hardware of every node (docs/loadgen.md): LG_PACKAGES packages of LG_L3_PER_PKG
 * L3 caches of G.cores_per_l3 cores of two PUs each, numbered as Linux numbers them: core c
 * (logical, in package order) has PUs c and c + cores (the second hardware thread). */
#define LG_PACKAGES 2u
#define LG_L3_PER_PKG 2u
#define LG_MAX_CORES_PER_L3 4096u /* 16384 cores, 49158 objects: under the collector's limit */

static unsigned node_cores(void)
{
    return LG_PACKAGES * LG_L3_PER_PKG * G.cores_per_l3;
}

/* Appends one object to the node description; returns its index. */
static int topo_add(unsigned *n, uint32_t type, int parent, uint32_t logical, uint32_t os_index)
{
    Mpiwatch__TopoObject *o = &G.topo[*n];
    mpiwatch__topo_object__init(o);
    o->type = type;
    o->parent = parent;
    o->logical = logical;
    o->os_index = os_index;
    G.topo_ptr[*n] = o;
    return (int)(*n)++;
}

/* Fills the node's hardware as a flat list, every object after its parent. */
static void node_topology(Mpiwatch__NodeTopology *t, char *name)
{
    unsigned cores = node_cores(), n = 0;
    for (unsigned p = 0; p < LG_PACKAGES; p++) {
        int pkg = topo_add(&n, 1, -1, p, p);
        for (unsigned l = 0; l < LG_L3_PER_PKG; l++) {
            unsigned l3 = p * LG_L3_PER_PKG + l;
            int l3_at = topo_add(&n, 2, pkg, l3, l3);
            for (unsigned i = 0; i < G.cores_per_l3; i++) {
                unsigned c = l3 * G.cores_per_l3 + i;
                int core_at = topo_add(&n, 3, l3_at, c, c);
                topo_add(&n, 4, core_at, 2 * c, c);
                topo_add(&n, 4, core_at, 2 * c + 1, c + cores);
            }
        }
    }
    mpiwatch__node_topology__init(t);
    t->node = name;
    t->n_objects = n;
    t->objects = G.topo_ptr;
}

/* Builds rank `rank`'s hello (without its function names with `strip`, as an aggregator
 * forwards all but the first hello of a table: upstream.c) and hands its envelope to `use`. */
static int hello_envelope(unsigned rank, int strip,
                          int (*use)(Mpiwatch__Envelope *env, unsigned rank, void *user),
                          void *user)
{
    unsigned node = node_of(rank), slot = rank - node_first_rank(node);
    /* One rank per core in core order, bound to the core's two PUs; ranks beyond the cores
     * (only with more than 16384 ranks on a node) share them. */
    unsigned cores = node_cores(), core = slot % cores;
    unsigned l3 = core / G.cores_per_l3, pkg = l3 / LG_L3_PER_PKG;
    char host[32], binding[128], cpuset[32], prog[] = "mpiwatch-loadgen";
    char lib[] = "Open MPI v4.1.4 (emulated by mpiwatch-loadgen)", timer[] = "tsc";
    uint32_t pus[2] = {core, core + cores};
    snprintf(host, sizeof host, "node%03u", node);
    snprintf(cpuset, sizeof cpuset, "%u,%u", pus[0], pus[1]);
    snprintf(binding, sizeof binding, "bound to %s (pu %u core %u package %u)", cpuset, core, core,
             pkg);
    uint64_t rs = rng_seed(G.o.seed, rank, UINT64_MAX);

    Mpiwatch__Hello h = MPIWATCH__HELLO__INIT;
    h.size = G.o.ranks;
    h.host = host;
    h.pid = 10000u + slot * 7u + (unsigned)rng_below(&rs, 5);
    h.binding = binding;
    h.cpuset = cpuset;
    h.pu = (int32_t)core;
    h.core = (int32_t)core;
    h.package = (int32_t)pkg;
    h.node = host;
    h.l3 = (int32_t)l3;
    h.numa = (int32_t)pkg;
    h.bound = 1;
    h.n_pus = 2;
    h.pus = pus;
    Mpiwatch__NodeTopology topo;
    if (slot == 0) { /* the first rank of a node describes it, as in the library */
        node_topology(&topo, host);
        h.topology = &topo;
    }
    h.mpi_library = lib;
    h.clock_offset_ns = (int64_t)(now_ns(CLOCK_REALTIME) - now_ns(CLOCK_MONOTONIC));
    h.clock_error_ns = 500 + rng_below(&rs, 4000);
    h.window_ns = G.window_ns;
    h.subslots = LG_SUBSLOTS;
    h.duration_bins = LG_BINS;
    /* The table by name (docs/function-table.md), or the emulated one (--table-shuffle). */
    mw_hello_set_table(&h);
    if (G.o.shuffle) {
        h.function_count = h.n_function_names = h.n_function_kinds =
            MW_FN_COUNT - 1 + LG_SHUFFLE_EXTRAS;
        h.function_table_hash = mw_fn_names_hash((const char *const *)SH.names, h.n_function_names);
        h.function_names = SH.names;
        h.function_kinds = SH.kinds;
    }
    h.timer = timer;
    h.start_ns = now_ns(CLOCK_REALTIME);
    h.program = prog;
    h.thread_level = 0;
    if (strip) {
        h.n_function_names = h.n_function_kinds = 0;
        h.function_names = NULL;
        h.function_kinds = NULL;
    }

    Mpiwatch__Envelope env = MPIWATCH__ENVELOPE__INIT;
    env.body_case = MPIWATCH__ENVELOPE__BODY_HELLO;
    env.hello = &h;
    return use(&env, rank, user);
}

static int hello_send(Mpiwatch__Envelope *env, unsigned rank, void *user)
{
    (void)user;
    if (send_envelope(env, rank) != 0)
        return -1;
    G.hellos++;
    return 0;
}

static int send_hello(unsigned rank)
{
    return hello_envelope(rank, 0, hello_send, NULL);
}

/* Points a sample's or bye's running totals at the rank's own arrays (no copy: the message is
 * encoded before the next change). */
static void set_totals(unsigned rank, size_t *n_fn, uint32_t **fn, size_t *n_calls,
                       uint64_t **calls, size_t *n_ns, uint64_t **ns, size_t *n_bytes,
                       uint64_t **bytes)
{
    size_t nf = G.o.functions, at = lrank(rank) * nf;
    *n_fn = *n_calls = *n_ns = *n_bytes = nf;
    *fn = G.total_fn;
    *calls = &G.rt_calls[at];
    *ns = &G.rt_ns[at];
    *bytes = &G.rt_bytes[at];
}

/* Per-sample scratch, sized once for the largest sample. */
static struct {
    Mpiwatch__FunctionStat fs[LG_MAX_FUNCTIONS];
    Mpiwatch__FunctionStat *fsp[LG_MAX_FUNCTIONS];
    uint32_t hist[LG_MAX_FUNCTIONS][LG_BINS];
    uint32_t peer_rank[LG_MAX_PEERS];
    uint64_t peer_msg[LG_MAX_PEERS], peer_bytes[LG_MAX_PEERS];
    uint32_t occ_fn[LG_OCC_FNS * LG_SUBSLOTS], occ_sub[LG_OCC_FNS * LG_SUBSLOTS];
    uint64_t occ_ns[LG_OCC_FNS * LG_SUBSLOTS];
    uint32_t d_fn[LG_DENSITY_FNS * 4 * LG_SPREAD], d_bin[LG_DENSITY_FNS * 4 * LG_SPREAD],
        d_end[LG_DENSITY_FNS * 4 * LG_SPREAD];
    int32_t d_sub[LG_DENSITY_FNS * 4 * LG_SPREAD];
    uint64_t d_count[LG_DENSITY_FNS * 4 * LG_SPREAD];
    Mpiwatch__Call calls[LG_LONGEST];
    Mpiwatch__Call *callp[LG_LONGEST];
    uint64_t long_off[LG_LONGEST]; /* where in the window each longest call ends */
} W;

/* Regions and call sites (--regions, --sites): definitions sent in each rank's first sample;
 * region i is named "lg_region_<i>" and site j is line 100 + j of loadgen_app.c, at offset
 * 0x1000 + 16 j of LG_SITE_MODULE, calling function index j % F. Odd ranks number their
 * regions and sites backwards (id N - i), as ranks of a real job number them in their own
 * order, so the collector's per-rank id maps are exercised. */
static struct {
    char (*region_name)[24];
    char (*site_fn_name)[24];
    Mpiwatch__RegionDef *rdef;
    Mpiwatch__RegionDef **rdefp;
    Mpiwatch__CallSiteDef *sdef;
    Mpiwatch__CallSiteDef **sdefp;
    uint32_t *region_id, *site_id, *site_fn;
    uint64_t *region_count, *region_incl, *region_excl, *region_mpi;
    uint64_t *site_count, *site_ns, *site_bytes, *site_max;
    lg_region_total_t *rtot;
    lg_site_total_t *stot;
    uint32_t pf_rank[LG_MAX_PEERS * LG_MAX_FUNCTIONS], pf_fn[LG_MAX_PEERS * LG_MAX_FUNCTIONS];
    uint64_t pf_msg[LG_MAX_PEERS * LG_MAX_FUNCTIONS], pf_bytes[LG_MAX_PEERS * LG_MAX_FUNCTIONS];
} RS;

static uint32_t rs_id(unsigned rank, unsigned i, unsigned n)
{
    return rank & 1 ? n - i : i + 1;
}

static int rs_setup(void)
{
    unsigned nr = G.o.regions, ns = G.o.sites, nr1 = nr ? nr : 1, ns1 = ns ? ns : 1;
    RS.region_name = calloc(nr1, sizeof *RS.region_name);
    RS.site_fn_name = calloc(ns1, sizeof *RS.site_fn_name);
    RS.rdef = calloc(nr1, sizeof *RS.rdef);
    RS.rdefp = calloc(nr1, sizeof *RS.rdefp);
    RS.sdef = calloc(ns1, sizeof *RS.sdef);
    RS.sdefp = calloc(ns1, sizeof *RS.sdefp);
    RS.region_id = calloc(nr1, sizeof *RS.region_id);
    RS.region_count = calloc(nr1, sizeof *RS.region_count);
    RS.region_incl = calloc(nr1, sizeof *RS.region_incl);
    RS.region_excl = calloc(nr1, sizeof *RS.region_excl);
    RS.region_mpi = calloc(nr1, sizeof *RS.region_mpi);
    RS.site_id = calloc(ns1, sizeof *RS.site_id);
    RS.site_fn = calloc(ns1, sizeof *RS.site_fn);
    RS.site_count = calloc(ns1, sizeof *RS.site_count);
    RS.site_ns = calloc(ns1, sizeof *RS.site_ns);
    RS.site_bytes = calloc(ns1, sizeof *RS.site_bytes);
    RS.site_max = calloc(ns1, sizeof *RS.site_max);
    RS.rtot = calloc(nr1, sizeof *RS.rtot);
    RS.stot = calloc(ns1, sizeof *RS.stot);
    if (!RS.region_name || !RS.site_fn_name || !RS.rdef || !RS.rdefp || !RS.sdef || !RS.sdefp ||
        !RS.region_id || !RS.region_count || !RS.region_incl || !RS.region_excl || !RS.region_mpi ||
        !RS.site_id || !RS.site_fn || !RS.site_count || !RS.site_ns || !RS.site_bytes ||
        !RS.site_max || !RS.rtot || !RS.stot)
        return -1;
    for (unsigned i = 0; i < nr; i++)
        snprintf(RS.region_name[i], sizeof RS.region_name[i], "lg_region_%u", i);
    for (unsigned j = 0; j < ns; j++)
        snprintf(RS.site_fn_name[j], sizeof RS.site_fn_name[j], "lg_caller_%u", j);
    return 0;
}

/* Adds rank `rank`'s regions and call sites of one window to sample s (with their definitions
 * in its first sample), consistent with its function summaries: the calls and time of function
 * index f are split over the sites j with j % F == f; a region's MPI time is part of its
 * exclusive time, which is part of its inclusive time. */
static void rs_sample(Mpiwatch__Sample *s, unsigned rank, uint64_t ordinal, uint64_t *rs)
{
    unsigned nr = G.o.regions, ns = G.o.sites, nf = G.o.functions;
    if (ordinal == 0) {
        for (unsigned i = 0; i < nr; i++) {
            Mpiwatch__RegionDef *d = &RS.rdef[i];
            mpiwatch__region_def__init(d);
            d->id = rs_id(rank, i, nr);
            d->name = RS.region_name[i];
            d->source = 1;
            RS.rdefp[i] = d;
        }
        for (unsigned j = 0; j < ns; j++) {
            Mpiwatch__CallSiteDef *d = &RS.sdef[j];
            mpiwatch__call_site_def__init(d);
            d->id = rs_id(rank, j, ns);
            d->module = LG_SITE_MODULE;
            d->offset = 0x1000u + 16u * j;
            d->address = 0x400000u + d->offset;
            d->function = RS.site_fn_name[j];
            d->file = "loadgen_app.c";
            d->line = 100 + j;
            RS.sdefp[j] = d;
        }
        s->n_region_defs = nr;
        s->region_defs = nr ? RS.rdefp : NULL;
        s->n_site_defs = ns;
        s->site_defs = ns ? RS.sdefp : NULL;
    }
    uint64_t wns = G.window_ns;
    for (unsigned i = 0; i < nr; i++) {
        uint64_t count = 1 + (i + rank) % 3;
        uint64_t incl = wns / (4 * (uint64_t)(i + 1)) + rng_below(rs, 1000);
        uint64_t excl = incl / 2 + rng_below(rs, incl / 2 + 1);
        uint64_t mpi = rng_below(rs, excl + 1);
        RS.region_id[i] = rs_id(rank, i, nr);
        RS.region_count[i] = count;
        RS.region_incl[i] = incl;
        RS.region_excl[i] = excl;
        RS.region_mpi[i] = mpi;
        RS.rtot[i].count += count;
        RS.rtot[i].incl_ns += incl;
        RS.rtot[i].excl_ns += excl;
        RS.rtot[i].mpi_ns += mpi;
    }
    s->n_region_id = s->n_region_count = s->n_region_incl_ns = s->n_region_excl_ns =
        s->n_region_mpi_ns = nr;
    s->region_id = RS.region_id;
    s->region_count = RS.region_count;
    s->region_incl_ns = RS.region_incl;
    s->region_excl_ns = RS.region_excl;
    s->region_mpi_ns = RS.region_mpi;
    size_t n = 0;
    for (unsigned f = 0; f < nf && f < ns; f++) {
        const Mpiwatch__FunctionStat *fs = &W.fs[f];
        unsigned k = (ns - f + nf - 1) / nf; /* sites j = f, f + F, ... */
        uint64_t c_left = fs->count, t_left = fs->total_ns, b_left = fs->bytes;
        for (unsigned q = 0; q < k; q++) {
            unsigned j = f + q * nf;
            uint64_t c = q + 1 == k ? c_left : fs->count / k;
            uint64_t t = q + 1 == k ? t_left : fs->total_ns / k;
            uint64_t b = q + 1 == k ? b_left : fs->bytes / k;
            c_left -= c, t_left -= t, b_left -= b;
            RS.site_id[n] = rs_id(rank, j, ns);
            RS.site_fn[n] = fs->fn;
            RS.site_count[n] = c;
            RS.site_ns[n] = t;
            RS.site_bytes[n] = b;
            RS.site_max[n] = c ? fs->max_ns : 0;
            RS.stot[j].count += c;
            RS.stot[j].ns += t;
            RS.stot[j].bytes += b;
            if (RS.site_max[n] > RS.stot[j].max_ns)
                RS.stot[j].max_ns = RS.site_max[n];
            n++;
        }
    }
    s->n_site_id = s->n_site_fn = s->n_site_count = s->n_site_ns = s->n_site_bytes =
        s->n_site_max_ns = n;
    s->site_id = RS.site_id;
    s->site_fn = RS.site_fn;
    s->site_count = RS.site_count;
    s->site_ns = RS.site_ns;
    s->site_bytes = RS.site_bytes;
    s->site_max_ns = RS.site_max;
}

/* --peer-fn: each peer entry split over the send functions by their share of the sends. */
static void peer_fn_split(Mpiwatch__Sample *s, uint64_t sends)
{
    size_t n = 0;
    for (size_t p = 0; p < s->n_peer_rank; p++) {
        uint64_t m_left = s->peer_messages[p], b_left = s->peer_bytes[p];
        unsigned last = 0;
        for (unsigned i = 0; i < G.o.functions; i++)
            if (G.is_send[i])
                last = i;
        for (unsigned i = 0; i < G.o.functions; i++) {
            if (!G.is_send[i])
                continue;
            uint64_t m = i == last ? m_left
                                   : (uint64_t)((double)s->peer_messages[p] *
                                                (double)W.fs[i].count / (double)sends);
            uint64_t b =
                i == last
                    ? b_left
                    : (uint64_t)((double)s->peer_bytes[p] * (double)W.fs[i].count / (double)sends);
            if (m > m_left)
                m = m_left;
            if (b > b_left)
                b = b_left;
            m_left -= m, b_left -= b;
            RS.pf_rank[n] = s->peer_rank[p];
            RS.pf_fn[n] = W.fs[i].fn;
            RS.pf_msg[n] = m;
            RS.pf_bytes[n++] = b;
        }
    }
    s->n_peer_rank = s->n_peer_messages = s->n_peer_bytes = s->n_peer_fn = n;
    s->peer_rank = RS.pf_rank;
    s->peer_fn = RS.pf_fn;
    s->peer_messages = RS.pf_msg;
    s->peer_bytes = RS.pf_bytes;
}

/* The peers of a rank: its ring neighbours and up to four fixed random partners. */
static unsigned rank_peers(unsigned rank, uint32_t *peers)
{
    unsigned n = 0, size = G.o.ranks;
    if (size < 2)
        return 0;
    uint64_t rs = rng_seed(G.o.seed, rank, UINT64_MAX - 1);
    uint32_t cand[LG_MAX_PEERS] = {(rank + 1) % size, (rank + size - 1) % size};
    for (unsigned i = 2; i < LG_MAX_PEERS; i++)
        cand[i] = (uint32_t)rng_below(&rs, size);
    for (unsigned i = 0; i < LG_MAX_PEERS; i++) {
        int dup = cand[i] == rank;
        for (unsigned j = 0; j < n && !dup; j++)
            dup = peers[j] == cand[i];
        if (!dup)
            peers[n++] = cand[i];
    }
    return n;
}

/* ---------------------------------------------------------------------------------------- */
/* Traces (--trace)                                                                         */

/* Builds trace `t`: its calls per function, drawn like a sample's, laid out in one window as
 * the library records them (docs/trace.md): the timed calls in a random order, each with a
 * duration in its function's typical bins (scaled down when they would not fit), gaps between
 * them; Isend / Irecv are posts to or from a ring neighbour (rank 1 or the last rank, as for
 * rank 0) with request numbers and channel indices, Send / Recv / Sendrecv carry the same
 * fields, Waitall / Testall complete every open post and Wait / Waitany the oldest (completion
 * records at the end of the call), collectives carry an instance on MPI_COMM_WORLD and a root,
 * Iallreduce / Ibcast are posts completed like the others. Then encodes it as the library does
 * (zstd level 1 from 50 records). Returns 0, or -1 with a message. */
static int trace_build(unsigned t, lg_trace_t *out)
{
    uint64_t rs = rng_seed(G.o.seed ^ 0x7472616365ull, t, UINT64_MAX);
    double wsec = (double)G.window_ns * 1e-9;
    unsigned nf = G.o.functions, size = G.o.ranks;
    uint64_t calls = 0;
    double dsum = 0;
    for (unsigned i = 0; i < nf; i++) {
        const lg_fn_model_t *m = &FN_MODELS[i];
        uint64_t c = (uint64_t)(m->calls_per_s * wsec * (0.7 + 0.6 * rng_unit(&rs)));
        out->count[i] = c ? c : 1;
        if (mw_fn_timed(G.fn_id[i])) {
            calls += out->count[i];
            dsum += (double)out->count[i] * 1.5 * (double)(1ull << m->bin);
        }
    }
    /* every call is at most 2 records (Sendrecv), every completion follows one post */
    if (2 * calls + 16 > MW_TRACE_MAX_RECORDS) {
        fprintf(stderr,
                "mpiwatch-loadgen: --trace: %" PRIu64 " calls per window is over "
                "the trace's cap; use shorter windows or fewer functions\n",
                calls);
        return -1;
    }
    unsigned *order = malloc((calls + 1) * sizeof *order);
    mw_trace_rec_t *recs = malloc((2 * calls + 16) * sizeof *recs);
    uint32_t *pend = malloc((calls + 1) * sizeof *pend);
    if (!order || !recs || !pend) {
        free(order), free(recs), free(pend);
        fprintf(stderr, "mpiwatch-loadgen: out of memory\n");
        return -1;
    }
    size_t nc = 0;
    for (unsigned i = 0; i < nf; i++)
        if (mw_fn_timed(G.fn_id[i]))
            for (uint64_t c = 0; c < out->count[i]; c++)
                order[nc++] = i;
    for (size_t i = nc; i > 1; i--) {
        size_t j = rng_below(&rs, i);
        unsigned x = order[i - 1];
        order[i - 1] = order[j];
        order[j] = x;
    }
    /* durations in the typical bins, scaled to fill at most 80 % of the window */
    double scale = dsum > 0.8 * (double)G.window_ns ? 0.8 * (double)G.window_ns / dsum : 1.0;
    double gap = ((double)G.window_ns * 0.9 - dsum * scale) / (double)(nc + 1);
    int32_t nbr[2] = {(int32_t)(1 % size), (int32_t)((size - 1) % size)};
    uint64_t seq_send[2] = {0, 0}, seq_recv[2] = {0, 0}, instance = 0;
    uint32_t req = 0;
    size_t n = 0, np = 0, pfirst = 0;
    int64_t now = (int64_t)(gap * rng_unit(&rs));
    for (size_t c = 0; c < nc; c++) {
        unsigned i = order[c], fn = G.fn_id[i];
        const lg_fn_model_t *m = &FN_MODELS[i];
        uint64_t base = 1ull << m->bin;
        uint64_t dur = (uint64_t)((double)(base + rng_below(&rs, base)) * scale);
        unsigned side = (unsigned)rng_below(&rs, 2);
        mw_trace_rec_t *r = &recs[n++];
        memset(r, 0, sizeof *r);
        r->start_ns = now;
        r->dur_ns = dur;
        r->fn = (uint16_t)fn;
        r->peer = -1;
        r->kind = MW_TK_CALL;
        mw_kind_t kind = mw_fn_kind(fn);
        if (fn == MW_ID_Isend || fn == MW_ID_Send || fn == MW_ID_Sendrecv || fn == MW_ID_Irecv ||
            fn == MW_ID_Recv) {
            int send = fn != MW_ID_Irecv && fn != MW_ID_Recv;
            r->comm = MW_COMM_ID_WORLD;
            r->peer = nbr[side];
            r->tag = (int32_t)side;
            r->bytes = send ? m->bytes : 0;
            r->kind = fn == MW_ID_Isend   ? MW_TK_ISEND
                      : fn == MW_ID_Irecv ? MW_TK_IRECV
                      : send              ? MW_TK_SEND
                                          : MW_TK_RECV;
            if (send)
                r->seq = seq_send[side]++;
            else if (fn == MW_ID_Recv)
                r->seq = seq_recv[side]++, r->bytes = m->bytes;
            if (fn == MW_ID_Isend || fn == MW_ID_Irecv) {
                r->req = ++req;
                pend[np++] = (uint32_t)(n - 1);
            }
            if (fn == MW_ID_Sendrecv) { /* its receive half: the same times, flagged */
                mw_trace_rec_t *h = &recs[n++];
                *h = *r;
                h->kind = MW_TK_RECV;
                h->flags = MW_TF_PART;
                h->seq = seq_recv[side]++;
            }
        } else if (kind == MW_KIND_COLL) {
            r->comm = MW_COMM_ID_WORLD;
            r->seq = instance++;
            r->bytes = m->bytes;
            r->peer = fn == MW_ID_Bcast || fn == MW_ID_Reduce || fn == MW_ID_Gather ||
                              fn == MW_ID_Scatter || fn == MW_ID_Ibcast
                          ? 0
                          : -1;
            r->kind = MW_TK_COLL;
            if (fn == MW_ID_Iallreduce || fn == MW_ID_Ibcast) {
                r->kind = MW_TK_ICOLL;
                r->req = ++req;
                pend[np++] = (uint32_t)(n - 1);
            }
        }
        int64_t end = now + (int64_t)dur;
        size_t done = fn == MW_ID_Waitall || fn == MW_ID_Testall                 ? np - pfirst
                      : (fn == MW_ID_Wait || fn == MW_ID_Waitany) && np > pfirst ? 1
                                                                                 : 0;
        for (size_t d = 0; d < done; d++) {
            const mw_trace_rec_t *p = &recs[pend[pfirst++]];
            mw_trace_rec_t *x = &recs[n++];
            memset(x, 0, sizeof *x);
            x->start_ns = end;
            x->fn = (uint16_t)fn;
            x->comm = p->comm;
            x->peer = p->peer;
            x->tag = p->tag;
            x->req = p->req;
            x->bytes = p->bytes;
            x->seq = p->seq;
            x->kind = p->kind == MW_TK_ISEND   ? MW_TK_SEND_DONE
                      : p->kind == MW_TK_ICOLL ? MW_TK_COLL_DONE
                                               : MW_TK_RECV_DONE;
            if (x->kind == MW_TK_RECV_DONE) {
                unsigned sd = p->tag == 1;
                x->seq = seq_recv[sd]++;
                x->bytes = FN_MODELS[1].bytes; /* what the Isends send */
            }
        }
        now = end + (int64_t)(gap * (0.5 + rng_unit(&rs)));
    }
    out->calls = nc;
    out->n = (uint32_t)n;
    int rc =
        mw_trace_encode(recs, n, 1, 50, &out->data, &out->len, &out->encoding, &out->raw_bytes);
    free(order);
    if (G.o.ring)
        out->recs = recs; /* patched per rank and window (ring_trace) */
    else
        free(recs);
    free(pend);
    if (rc != 0 || out->len > LG_TRACE_MAX_BYTES) {
        fprintf(stderr, "mpiwatch-loadgen: --trace: cannot encode a trace of %zu records\n", n);
        return -1;
    }
    return 0;
}

/* --trace-ring: the template's records as rank `rank` sends them in its `ordinal`-th window,
 * encoded into *out (malloc'ed). Every rank of a window uses the same template, and every
 * message goes around a ring: sends (Send, Isend, Sendrecv's send) to rank + 1, receives
 * (Recv, the completion of an Irecv, Sendrecv's receive) from rank - 1, all with tag 0; channel
 * indices and collective instances start at ordinal << 24 in each window. So rank r's i-th send
 * of a window matches rank r + 1's i-th receive (the min of the two counts match, the rest stay
 * unmatched), and every collective matches across all ranks. With --late-every N, rank
 * --late-rank starts every N-th window --late-ms later (every record shifted): the delay that
 * the lateness analysis must find there and nowhere else. Returns 0, or -1. */
static int ring_trace(const lg_trace_t *tr, unsigned rank, uint64_t ordinal, uint8_t **out,
                      size_t *len, uint32_t *encoding, uint64_t *raw_bytes)
{
    mw_trace_rec_t *r = malloc((tr->n ? tr->n : 1) * sizeof *r);
    if (!r)
        return -1;
    unsigned size = G.o.ranks;
    int32_t up = (int32_t)((rank + 1) % size), down = (int32_t)((rank + size - 1) % size);
    uint64_t base = ordinal << 24, ns = 0, nr = 0;
    int64_t shift = 0;
    if (G.o.late_every && rank == G.o.late_rank && ordinal % G.o.late_every == G.o.late_every - 1) {
        double d = G.o.late_ms * 1e6, cap = 0.1 * (double)G.window_ns;
        shift = (int64_t)(d < cap ? d : cap);
    }
    for (uint32_t i = 0; i < tr->n; i++) {
        r[i] = tr->recs[i];
        mw_trace_rec_t *x = &r[i];
        x->start_ns += shift;
        switch (x->kind) {
        case MW_TK_SEND:
        case MW_TK_ISEND:
            x->peer = up, x->tag = 0, x->seq = base + ns++;
            break;
        case MW_TK_SEND_DONE:
            x->peer = up, x->tag = 0;
            break;
        case MW_TK_RECV:
        case MW_TK_RECV_DONE:
            x->peer = down, x->tag = 0, x->seq = base + nr++;
            break;
        case MW_TK_IRECV:
            x->peer = down, x->tag = 0;
            break;
        case MW_TK_COLL:
        case MW_TK_ICOLL:
        case MW_TK_COLL_DONE:
            x->seq += base;
            break;
        default:
            break;
        }
    }
    int rc = mw_trace_encode(r, tr->n, 1, 50, out, len, encoding, raw_bytes);
    free(r);
    return rc;
}

/* Builds the sample `s` of window `k` (the `ordinal`-th window of the run) of `rank` in the
 * scratch W (with trace `tr`'s counts when it has one). Counts, histogram, time, min and max of
 * each function agree with each other: every call is drawn into a quarter-octave bin, time is the
 * sum of per-bin durations inside their bins, min and max lie in the lowest and highest non-empty
 * bins. With `account` the job's and the rank's totals count it (the sample is sent); without,
 * nothing outside W changes (the sample is a cached variant, or the encoder's check at start).
 * Returns the window's send calls (its peer messages). */
static uint64_t build_sample(unsigned rank, uint64_t k, uint64_t ordinal, const lg_trace_t *tr,
                             Mpiwatch__Sample *sp, int account)
{
    uint64_t rs = rng_seed(G.o.seed, rank, ordinal);
    double wsec = (double)G.window_ns * 1e-9;
    unsigned nf = G.o.functions;
    uint64_t wstart = mw_grid_start(&G.grid, k);
    uint64_t sends = 0, send_bytes = 0;
    unsigned order[LG_MAX_FUNCTIONS]; /* function indices by time, descending */

    for (unsigned i = 0; i < nf; i++) {
        const lg_fn_model_t *m = &FN_MODELS[i];
        Mpiwatch__FunctionStat *f = &W.fs[i];
        mpiwatch__function_stat__init(f);
        uint64_t count = (uint64_t)(m->calls_per_s * wsec * (0.7 + 0.6 * rng_unit(&rs)));
        if (count == 0)
            count = 1;
        if (tr)
            count = tr->count[i]; /* the trace's calls (drawn the same way) */
        /* Spread the calls over the octaves bin-2 .. bin+3 with weights 1 2 4 2 1 1 (of 11), as
         * with factor-2 bins, and each octave's share over its 4 quarter bins along the line
         * between the weights of the octaves around it (a smooth profile, not steps). */
        static const double wt[6] = {1, 2, 4, 2, 1, 1};
        double qw[LG_SPREAD];
        for (unsigned q = 0; q < LG_SPREAD; q++) {
            double x = (q + 0.5) / 4.0 - 0.5;
            int o = (int)floor(x);
            double u = x - o, a = wt[o < 0 ? 0 : o], c = wt[o + 1 > 5 ? 5 : o + 1];
            qw[q] = a + (c - a) * u;
        }
        for (unsigned o = 0; o < LG_SPREAD / 4; o++) {
            double sum = qw[4 * o] + qw[4 * o + 1] + qw[4 * o + 2] + qw[4 * o + 3];
            for (unsigned q = 4 * o; q < 4 * o + 4; q++)
                qw[q] = qw[q] / sum * wt[o] / 11.0;
        }
        unsigned lo = m->bin >= 2 ? 4 * (m->bin - 2) : 0, nb = LG_SPREAD;
        if (lo + nb > LG_BINS)
            nb = LG_BINS - lo;
        uint64_t left = count, total = 0, mn = 0, mx = 0;
        int first = -1, last = -1;
        for (unsigned b = 0; b < nb; b++) {
            uint64_t c = b + 1 == nb ? left : (uint64_t)((double)count * qw[b]);
            if (c > left)
                c = left;
            left -= c;
            W.hist[i][b] = (uint32_t)c;
            if (!c)
                continue;
            uint64_t base = mw_bin_min_ns(lo + b, LG_BINS);
            uint64_t top = mw_bin_min_ns(lo + b + 1, LG_BINS); /* the next bin's first ns */
            uint64_t avg = base + rng_below(&rs, top - base);  /* mean duration inside the bin */
            total += c * avg;
            if (first < 0)
                mn = c > 1 ? base + (avg - base) / 2 : avg, first = (int)b;
            mx = c > 1 ? avg + (top - 1 - avg) / 2 : avg;
            last = (int)b;
        }
        f->fn = G.fn_id[i];
        f->count = count;
        f->total_ns = total;
        f->min_ns = mn;
        f->max_ns = mx;
        f->bytes = count * m->bytes;
        f->hist_first = lo + (unsigned)first;
        f->n_hist = (size_t)(last - first + 1);
        f->hist = &W.hist[i][first];
        W.fsp[i] = f;

        if (account) {
            G.tot[i].count += count;
            G.tot[i].time_ns += total;
            G.tot[i].bytes += f->bytes;
            size_t at = lrank(rank) * nf + G.rank_pos[i];
            G.rt_calls[at] += count;
            G.rt_ns[at] += total;
            G.rt_bytes[at] += f->bytes;
            G.calls[lrank(rank)] += count;
        }
        if (G.is_send[i])
            sends += count, send_bytes += f->bytes;

        order[i] = i;
        for (unsigned j = i; j > 0 && W.fs[order[j]].total_ns > W.fs[order[j - 1]].total_ns; j--) {
            unsigned t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    }

    Mpiwatch__Sample s = MPIWATCH__SAMPLE__INIT;
    s.window = k;
    s.n_functions = nf;
    s.functions = W.fsp;
    uint64_t peer_messages = 0;

    /* Point-to-point: the sends of the window split over the peers, the ring neighbours
     * getting the larger share (a halo exchange plus some irregular traffic). */
    unsigned np = rank_peers(rank, W.peer_rank);
    if (sends && np) {
        uint64_t ml = sends, bl = send_bytes;
        for (unsigned p = 0; p < np; p++) {
            uint64_t m = p + 1 == np ? ml : (p < 2 ? sends / 3 : sends / (6 * (np - 2) + 1));
            if (m > ml)
                m = ml;
            uint64_t b = p + 1 == np ? bl : (sends ? send_bytes / sends * m : 0);
            if (b > bl)
                b = bl;
            W.peer_msg[p] = m;
            W.peer_bytes[p] = b;
            ml -= m;
            bl -= b;
        }
        s.n_peer_rank = s.n_peer_messages = s.n_peer_bytes = np;
        s.peer_rank = W.peer_rank;
        s.peer_messages = W.peer_msg;
        s.peer_bytes = W.peer_bytes;
        peer_messages = sends;
        if (account)
            G.peer_messages += sends;
        if (G.o.peer_fn)
            peer_fn_split(&s, sends);
    }
    if (G.o.regions || G.o.sites)
        rs_sample(&s, rank, ordinal, &rs);

    /* Occupancy of the functions with most time: their time spread over the sub-slots,
     * never more than a sub-slot holds. */
    uint64_t slot_ns = G.window_ns / LG_SUBSLOTS;
    size_t no = 0;
    for (unsigned r = 0; r < nf && r < LG_OCC_FNS; r++) {
        const Mpiwatch__FunctionStat *f = &W.fs[order[r]];
        uint64_t t = f->total_ns < G.window_ns / 2 ? f->total_ns : G.window_ns / 2;
        for (unsigned sub = 0; sub < LG_SUBSLOTS; sub++) {
            uint64_t share = t / LG_SUBSLOTS;
            uint64_t v = share / 2 + rng_below(&rs, share + 1);
            if (v > slot_ns)
                v = slot_ns;
            if (!v)
                continue;
            W.occ_fn[no] = f->fn;
            W.occ_sub[no] = sub;
            W.occ_ns[no++] = v;
        }
    }
    s.n_occ_fn = s.n_occ_sub = s.n_occ_ns = no;
    s.occ_fn = W.occ_fn;
    s.occ_sub = W.occ_sub;
    s.occ_ns = W.occ_ns;

    /* Call density of the busiest functions: each histogram bin's calls end in one or two
     * sub-slots (end = 1), so the density of a function sums to its histogram, and each of
     * those cells has its twin by start (end = 0), as many sub-slots earlier as the bin's
     * duration spans (negative: a start in an earlier window), as the library writes them. */
    size_t nd = 0;
    for (unsigned r = 0; r < nf && r < LG_DENSITY_FNS; r++) {
        const Mpiwatch__FunctionStat *f = &W.fs[order[r]];
        for (size_t b = 0; b < f->n_hist && nd + 4 <= LG_DENSITY_FNS * 4 * LG_SPREAD; b++) {
            uint64_t c = f->hist[b];
            if (!c)
                continue;
            uint64_t half = c / 2;
            uint64_t parts[2] = {c - half, half};
            for (unsigned p = 0; p < 2; p++) {
                if (!parts[p])
                    continue;
                uint32_t bin = f->hist_first + (uint32_t)b;
                int32_t end_sub = (int32_t)rng_below(&rs, LG_SUBSLOTS);
                uint64_t back = (mw_bin_min_ns(bin, LG_BINS) + slot_ns / 2) / slot_ns;
                int32_t start_sub = back >= LG_SUBSLOTS + (uint64_t)end_sub
                                        ? -(int32_t)LG_SUBSLOTS
                                        : end_sub - (int32_t)back;
                for (unsigned e = 0; e < 2; e++) {
                    W.d_fn[nd] = f->fn;
                    W.d_sub[nd] = e ? end_sub : start_sub;
                    W.d_bin[nd] = bin;
                    W.d_end[nd] = e;
                    W.d_count[nd++] = parts[p];
                }
            }
        }
    }
    s.n_density_fn = s.n_density_sub = s.n_density_bin = s.n_density_end = s.n_density_count = nd;
    s.density_fn = W.d_fn;
    s.density_sub = W.d_sub;
    s.density_bin = W.d_bin;
    s.density_end = W.d_end;
    s.density_count = W.d_count;

    /* The longest calls: the maximum of each of the functions with the longest maximum,
     * ending inside this window. */
    unsigned used[LG_LONGEST], nl = 0;
    for (; nl < LG_LONGEST && nl < nf; nl++) {
        unsigned best = nf;
        for (unsigned i = 0; i < nf; i++) {
            int taken = 0;
            for (unsigned j = 0; j < nl; j++)
                taken |= used[j] == i;
            if (!taken && (best == nf || W.fs[i].max_ns > W.fs[best].max_ns))
                best = i;
        }
        used[nl] = best;
        const Mpiwatch__FunctionStat *f = &W.fs[best];
        Mpiwatch__Call *c = &W.calls[nl];
        mpiwatch__call__init(c);
        W.long_off[nl] = rng_below(&rs, G.window_ns);
        uint64_t end = wstart + W.long_off[nl];
        c->fn = f->fn;
        c->duration_ns = f->max_ns;
        c->start_ns = end > f->max_ns ? end - f->max_ns : 0;
        c->bytes = FN_MODELS[best].bytes;
        mw_kind_t kind = mw_fn_kind(f->fn);
        c->peer =
            (kind == MW_KIND_SEND || kind == MW_KIND_RECV) && np ? (int32_t)W.peer_rank[0] : -1;
        W.callp[nl] = c;
    }
    s.n_longest = nl;
    s.longest = W.callp;
    /* The running totals, this sample included (every function is called in every window,
     * so each is listed from the first sample on), and the samples produced: none dropped. */
    set_totals(rank, &s.n_total_fn, &s.total_fn, &s.n_total_calls, &s.total_calls, &s.n_total_ns,
               &s.total_ns, &s.n_total_bytes, &s.total_bytes);
    s.samples_total = ordinal + 1;
    *sp = s;
    return peer_messages;
}

/* Builds and sends the sample of window `k` (the `ordinal`-th window of the run) of `rank`,
 * encoded by protobuf-c (--variants 0, and --trace, --regions, --sites, --peer-fn,
 * --table-shuffle, which the cache does not cover). */
static int send_sample(unsigned rank, uint64_t k, uint64_t ordinal)
{
    unsigned nf = G.o.functions;
    uint64_t wstart = mw_grid_start(&G.grid, k);
    /* With --trace-ring every rank of a window takes the same one (rank 0's draw). */
    const lg_trace_t *tr =
        G.o.trace ? &G.traces[rng_seed(G.o.seed ^ 0x7472616365ull, G.o.ring ? 0 : rank, ordinal) %
                              G.o.trace]
                  : NULL;
    Mpiwatch__Sample s;
    build_sample(rank, k, ordinal, tr, &s, 1);
    Mpiwatch__Trace trace = MPIWATCH__TRACE__INIT;
    uint8_t *ring = NULL;
    if (tr) {
        trace.window = k;
        trace.state = MW_TRACE_EXACT;
        trace.count = tr->n;
        trace.encoding = tr->encoding;
        trace.raw_bytes = tr->raw_bytes;
        trace.records.data = tr->data;
        trace.records.len = tr->len;
        if (G.o.ring && ring_trace(tr, rank, ordinal, &ring, &trace.records.len, &trace.encoding,
                                   &trace.raw_bytes) != 0) {
            fprintf(stderr, "mpiwatch-loadgen: --trace-ring: cannot encode a trace\n");
            return -1;
        }
        if (ring)
            trace.records.data = ring;
        trace.window_start_ns = wstart;
        trace.threads = 1;
        s.trace = &trace;
        G.traced_calls += tr->calls;
        G.trace_records += tr->n;
        G.trace_bytes += tr->len;
    }
    s.sent_ns = now_ns(CLOCK_REALTIME);

    Mpiwatch__Envelope env = MPIWATCH__ENVELOPE__INIT;
    env.body_case = MPIWATCH__ENVELOPE__BODY_SAMPLE;
    env.sample = &s;
    int sent = send_envelope(&env, rank);
    free(ring);
    if (sent != 0)
        return -1;
    G.samples++;
    G.fn_summaries += nf;
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Cached encodings (--variants V)                                                          */

/* At 100,000 ranks and 10 windows/s the generator must send a million samples a second, far
 * more than drawing and encoding each one with protobuf-c allows (about 5 us a sample). So each
 * rank's samples of ordinals 0 .. V-1 are drawn once at start (as send_sample draws them) and
 * the part of each that never changes, the Sample's fields 2 to 13 (functions, peers, occupancy,
 * density), is encoded by protobuf-c into a variant; the sample of ordinal w is variant w mod V
 * (so the first V windows are exactly those of the uncached generator). Per window, only what
 * changes is written around it by the small writer below: the envelope (seq), the window, the
 * longest calls (their start follows the window), sent_ns, the running totals and
 * samples_total, in field order, as protobuf-c writes them. The totals are re-encoded in full
 * each window, so they stay exact. At start, cache_check() compares the writer's output with
 * protobuf-c's for one rank's variants, byte for byte, and refuses to run if they differ. */
typedef struct {
    uint32_t fn;
    int32_t peer;
    uint64_t dur, bytes, off; /* off: where in the window the call ends */
} lg_long_t;

typedef struct {
    const uint8_t *body;  /* Sample fields 2..13 as protobuf-c encodes them */
    const lg_total_t *fn; /* per function index: the variant's count, time and bytes */
    lg_long_t longest[LG_LONGEST];
    uint64_t sends; /* peer messages */
    uint32_t body_len;
    uint32_t nl;
} lg_variant_t;

static struct {
    unsigned v;        /* variants per rank; 0: no cache */
    lg_variant_t *var; /* [lrank * v + i] */
    uint8_t **chunks;  /* the arena holding bodies and per-function values */
    size_t n_chunks, used, bytes;
    uint8_t total_fn[8 + 5 * LG_MAX_FUNCTIONS]; /* field 23, the same for every rank */
    size_t total_fn_len;
    uint8_t *prefix; /* the envelope's version and job */
    size_t prefix_len;
} C;

#define LG_ARENA_CHUNK ((size_t)64 << 20)

static void *arena_alloc(size_t n)
{
    n = (n + 7) & ~(size_t)7;
    if (!C.n_chunks || C.used + n > LG_ARENA_CHUNK) {
        uint8_t **nc = realloc(C.chunks, (C.n_chunks + 1) * sizeof *nc);
        if (!nc)
            return NULL;
        C.chunks = nc;
        if (!(C.chunks[C.n_chunks] = malloc(LG_ARENA_CHUNK)))
            return NULL;
        C.n_chunks++;
        C.used = 0;
    }
    void *p = C.chunks[C.n_chunks - 1] + C.used;
    C.used += n;
    C.bytes += n;
    return p;
}

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80)
        v >>= 7, n++;
    return n;
}

static uint8_t *put_tag(uint8_t *p, unsigned field, unsigned wire)
{
    return put_varint(p, (uint64_t)field << 3 | wire);
}

/* A varint field as proto3 writes it: absent when 0. */
static uint8_t *put_u64(uint8_t *p, unsigned field, uint64_t v)
{
    return v ? put_varint(put_tag(p, field, 0), v) : p;
}

/* A packed repeated uint64 field of n > 0 values. */
static uint8_t *put_packed(uint8_t *p, unsigned field, const uint64_t *v, size_t n)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += varint_len(v[i]);
    p = put_varint(put_tag(p, field, 2), len);
    for (size_t i = 0; i < n; i++)
        p = put_varint(p, v[i]);
    return p;
}

/* Writes rank `rank`'s envelope of variant `v` for window k into out (MW_MAX_MESSAGE_BYTES)
 * and returns where it starts in out, its length in *len: the variant's body between the
 * per-window fields, the running totals from calls / ns / bytes (by_id order). */
static const uint8_t *cache_encode(unsigned rank, const lg_variant_t *v, uint64_t k, uint64_t seq,
                                   uint64_t samples_total, uint64_t sent_ns, const uint64_t *calls,
                                   const uint64_t *ns, const uint64_t *bytes, uint8_t *out,
                                   size_t *len)
{
    /* The sample first, after room for the envelope's fields, which are written before it
     * once its length is known. */
    uint8_t *p = out + C.prefix_len + 32, *sample = p;
    uint64_t wstart = mw_grid_start(&G.grid, k);
    p = put_u64(p, 1, k);
    memcpy(p, v->body, v->body_len);
    p += v->body_len;
    for (uint32_t i = 0; i < v->nl; i++) {
        const lg_long_t *c = &v->longest[i];
        uint64_t end = wstart + c->off;
        uint8_t call[64], *q = call;
        q = put_u64(q, 1, c->fn);
        q = put_u64(q, 2, end > c->dur ? end - c->dur : 0);
        q = put_u64(q, 3, c->dur);
        q = put_u64(q, 4, c->bytes);
        q = put_u64(q, 5, (uint32_t)((uint32_t)c->peer << 1) ^ (uint32_t)(c->peer >> 31));
        p = put_varint(put_tag(p, 14, 2), (uint64_t)(q - call));
        memcpy(p, call, (size_t)(q - call));
        p += q - call;
    }
    p = put_u64(p, 18, sent_ns);
    size_t nf = G.o.functions;
    memcpy(p, C.total_fn, C.total_fn_len);
    p += C.total_fn_len;
    p = put_packed(p, 24, calls, nf);
    p = put_packed(p, 25, ns, nf);
    p = put_packed(p, 26, bytes, nf);
    p = put_u64(p, 27, samples_total);
    size_t slen = (size_t)(p - sample);
    /* The envelope: version and job (C.prefix), rank, seq, the sample's tag and length. */
    uint8_t tail[32], *h = tail;
    h = put_u64(h, 3, rank);
    h = put_u64(h, 4, seq);
    h = put_varint(put_tag(h, 11, 2), slen);
    size_t tl = (size_t)(h - tail);
    uint8_t *start = sample - tl - C.prefix_len;
    memcpy(start, C.prefix, C.prefix_len);
    memcpy(start + C.prefix_len, tail, tl);
    *len = C.prefix_len + tl + slen;
    return start;
}

/* Draws rank `rank`'s sample of ordinal `ordinal` into variant v. Returns 0 or -1. */
static int cache_variant(unsigned rank, uint64_t ordinal, lg_variant_t *v)
{
    Mpiwatch__Sample s;
    unsigned nf = G.o.functions;
    v->sends = build_sample(rank, 0, ordinal, NULL, &s, 0);
    lg_total_t *fn = arena_alloc(nf * sizeof *fn);
    if (!fn)
        return -1;
    for (unsigned i = 0; i < nf; i++)
        fn[i] = (lg_total_t){W.fs[i].count, W.fs[i].total_ns, W.fs[i].bytes};
    v->fn = fn;
    v->nl = (uint32_t)s.n_longest;
    for (size_t i = 0; i < s.n_longest; i++)
        v->longest[i] = (lg_long_t){s.longest[i]->fn, s.longest[i]->peer, s.longest[i]->duration_ns,
                                    s.longest[i]->bytes, W.long_off[i]};
    /* Only fields 2..13 stay: the rest is written per window. */
    s.window = 0;
    s.n_longest = 0;
    s.longest = NULL;
    s.n_total_fn = s.n_total_calls = s.n_total_ns = s.n_total_bytes = 0;
    s.samples_total = 0;
    s.sent_ns = 0;
    size_t len = mpiwatch__sample__get_packed_size(&s);
    uint8_t *body = arena_alloc(len ? len : 1);
    if (!body)
        return -1;
    mpiwatch__sample__pack(&s, body);
    v->body = body;
    v->body_len = (uint32_t)len;
    return 0;
}

/* The writer against protobuf-c: rank `rank`'s variants as the first windows, encoded both
 * ways with the same seq, window, send time and totals. Returns 0, or -1 with a message. */
static int cache_check(unsigned rank)
{
    unsigned nf = G.o.functions;
    uint64_t calls[LG_MAX_FUNCTIONS] = {0}, ns[LG_MAX_FUNCTIONS] = {0},
             bytes[LG_MAX_FUNCTIONS] = {0};
    uint8_t *mine = malloc(MW_MAX_MESSAGE_BYTES), *theirs = malloc(MW_MAX_MESSAGE_BYTES);
    int rc = mine && theirs ? 0 : -1;
    uint64_t k = mw_grid_index(&G.grid, now_ns(CLOCK_REALTIME));
    for (unsigned w = 0; w < C.v && rc == 0; w++) {
        const lg_variant_t *v = &C.var[lrank(rank) * C.v + w];
        for (unsigned i = 0; i < nf; i++) {
            calls[G.rank_pos[i]] += v->fn[i].count;
            ns[G.rank_pos[i]] += v->fn[i].time_ns;
            bytes[G.rank_pos[i]] += v->fn[i].bytes;
        }
        Mpiwatch__Sample s;
        build_sample(rank, k + w, w, NULL, &s, 0);
        s.total_calls = calls;
        s.total_ns = ns;
        s.total_bytes = bytes;
        s.sent_ns = now_ns(CLOCK_REALTIME);
        Mpiwatch__Envelope env = MPIWATCH__ENVELOPE__INIT;
        env.version = MW_PROTO_VERSION;
        env.job = (char *)G.o.job;
        env.rank = rank;
        env.seq = 1 + w;
        env.body_case = MPIWATCH__ENVELOPE__BODY_SAMPLE;
        env.sample = &s;
        size_t len = mpiwatch__envelope__get_packed_size(&env);
        if (len > MW_MAX_MESSAGE_BYTES) {
            rc = -1;
            break;
        }
        mpiwatch__envelope__pack(&env, theirs);
        size_t got;
        const uint8_t *at =
            cache_encode(rank, v, k + w, 1 + w, w + 1, s.sent_ns, calls, ns, bytes, mine, &got);
        if (got != len || memcmp(at, theirs, len) != 0) {
            fprintf(stderr,
                    "mpiwatch-loadgen: the cached encoding of rank %u's window %u differs "
                    "from protobuf-c's (%zu vs %zu bytes)\n",
                    rank, w, got, len);
            rc = -1;
        }
    }
    free(mine);
    free(theirs);
    return rc;
}

/* Builds every rank's variants (docs/loadgen.md). Returns 0, or -1 with a message. */
static int cache_setup(void)
{
    if (!C.v)
        return 0;
    size_t n = (size_t)G.o.rank_count * C.v;
    C.var = calloc(n, sizeof *C.var);
    if (!C.var) {
        fprintf(stderr, "mpiwatch-loadgen: out of memory for %zu cached samples\n", n);
        return -1;
    }
    size_t jl = strlen(G.o.job);
    C.prefix = malloc(16 + jl);
    if (!C.prefix) {
        fprintf(stderr, "mpiwatch-loadgen: out of memory\n");
        return -1;
    }
    uint8_t *p = put_u64(C.prefix, 1, MW_PROTO_VERSION);
    if (jl) {
        p = put_varint(put_tag(p, 2, 2), jl);
        memcpy(p, G.o.job, jl);
        p += jl;
    }
    C.prefix_len = (size_t)(p - C.prefix);
    p = put_tag(C.total_fn, 23, 2);
    size_t len = 0;
    for (unsigned j = 0; j < G.o.functions; j++)
        len += varint_len(G.total_fn[j]);
    p = put_varint(p, len);
    for (unsigned j = 0; j < G.o.functions; j++)
        p = put_varint(p, G.total_fn[j]);
    C.total_fn_len = (size_t)(p - C.total_fn);
    for (unsigned r = G.o.rank_first; r < G.o.rank_first + G.o.rank_count; r++)
        for (unsigned w = 0; w < C.v; w++)
            if (cache_variant(r, w, &C.var[lrank(r) * C.v + w]) != 0) {
                fprintf(stderr, "mpiwatch-loadgen: out of memory for the cached samples\n");
                return -1;
            }
    if (cache_check(G.o.rank_first) != 0 || cache_check(G.o.rank_first + G.o.rank_count - 1) != 0)
        return -1;
    return 0;
}

/* Sends rank `rank`'s sample of window k (ordinal `ordinal`) from its cached variant. */
static int send_cached(unsigned rank, uint64_t k, uint64_t ordinal)
{
    const lg_variant_t *v = &C.var[lrank(rank) * C.v + ordinal % C.v];
    unsigned nf = G.o.functions;
    size_t at = lrank(rank) * nf;
    for (unsigned i = 0; i < nf; i++) {
        const lg_total_t *t = &v->fn[i];
        G.tot[i].count += t->count;
        G.tot[i].time_ns += t->time_ns;
        G.tot[i].bytes += t->bytes;
        size_t j = at + G.rank_pos[i];
        G.rt_calls[j] += t->count;
        G.rt_ns[j] += t->time_ns;
        G.rt_bytes[j] += t->bytes;
        G.calls[lrank(rank)] += t->count;
    }
    G.peer_messages += v->sends;
    size_t len;
    const uint8_t *msg =
        cache_encode(rank, v, k, G.seq[lrank(rank)]++, ordinal + 1, now_ns(CLOCK_REALTIME),
                     &G.rt_calls[at], &G.rt_ns[at], &G.rt_bytes[at], G.buf, &len);
    void *sock = rank_socket(rank);
    while (zmq_send(sock, msg, len, 0) < 0) {
        if (errno == EINTR)
            continue;
        fprintf(stderr, "mpiwatch-loadgen: zmq_send: %s\n", zmq_strerror(errno));
        return -1;
    }
    G.bytes_sent += len;
    G.samples++;
    G.fn_summaries += nf;
    return 0;
}

static int send_bye(unsigned rank, uint64_t windows)
{
    Mpiwatch__Bye b = MPIWATCH__BYE__INIT;
    b.windows_sent = windows;
    b.calls_total = G.calls[lrank(rank)];
    set_totals(rank, &b.n_total_fn, &b.total_fn, &b.n_total_calls, &b.total_calls, &b.n_total_ns,
               &b.total_ns, &b.n_total_bytes, &b.total_bytes);
    Mpiwatch__Envelope env = MPIWATCH__ENVELOPE__INIT;
    env.body_case = MPIWATCH__ENVELOPE__BODY_BYE;
    env.bye = &b;
    if (send_envelope(&env, rank) != 0)
        return -1;
    G.byes++;
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Emulated aggregators (--aggregators A)                                                   */

/* A root collector of an aggregator tree takes what A aggregators send it (docs/aggregator.md):
 * each rank's hello as its aggregator forwards it (without the function names after the first
 * hello of a table), each aggregator's AggState (after its first hello, every second, finally
 * at the end), one Partial per aggregator per window and the ranks' byes (the last one after
 * the final AggState). A machine that can run the root cannot run the aggregators of 100,000
 * ranks at 10 windows/s beside it (about 10 cores, docs/scale.md), so --aggregators emulates
 * them: aggregator a serves the a-th contiguous block of the generator's ranks over one socket
 * of its own, and its partials are made by the real aggregator code. At start, for each
 * aggregator, an in-process collector core configured as an aggregator (an --upstream option,
 * no socket: nothing is opened by the core) takes the hellos of its ranks and their cached
 * samples of windows 0 .. V-1, closes each window and gives its partial through
 * mw__partial_envelope_pack (collector/partial.h): the cached encoding of variant v. Window w
 * then sends variant w mod V, as the sample cache does, with what follows the clock written
 * again around the cached bytes: the envelope's seq, the Window's index (field 1), its longest
 * calls' start times (field 26, shifted by the window's start), closed_real_ns (27) and
 * start_ns (29), and the length prefixes of the Window and the Partial; every other byte is
 * the real code's. At start, each variant of the first and the last aggregator is rewritten at
 * its own window and compared with the real encoding byte for byte, and rewritten at another
 * window and compared with protobuf-c's encoding of the decoded partial with those fields set;
 * each variant's function totals are checked against the sum of its ranks' samples. The
 * AggStates are the real code's (its function table, host, pid) with the figures of the run:
 * an emulated aggregator loses nothing, so what its ranks made is what it sent, the sum of
 * the variants it sent, and every rank's running totals stay exact for its bye. */

#define LG_AGG_MAX LG_MAX_ENDPOINTS
#define LG_AGG_CALL_MAX 96u /* one encoded longest call */

typedef struct {
    uint32_t pre_off, pre_len, post_off, post_len; /* Call fields before / after start_ns */
    uint64_t start;
} lg_pcall_t;

typedef struct {
    uint8_t *orig; /* the envelope as mw__partial_envelope_pack made it */
    size_t orig_len;
    uint32_t pre_off, pre_len;   /* Window fields 2..25 */
    uint32_t mid_off, mid_len;   /* Window field 28 */
    uint32_t post_off, post_len; /* Window fields 30.. */
    uint32_t rest_off, rest_len; /* Partial fields 2.. */
    lg_pcall_t *calls;           /* Window field 26 */
    uint32_t n_calls;
    uint64_t index0, start0, closed0, seq0;
    uint64_t wstart0; /* the start of window index0 on the grid */
} lg_pvar_t;

typedef struct {
    unsigned first, count; /* its ranks */
    lg_pvar_t *var;        /* [C.v] */
    lg_total_t *vsum;      /* [C.v * functions]: each variant's totals over its ranks */
    uint64_t *vsends;      /* [C.v]: each variant's peer messages over its ranks */
    lg_total_t sent[LG_MAX_FUNCTIONS];
    uint64_t seq, partials, samples;
    Mpiwatch__Envelope *tmpl; /* its AggState as the real code encodes it (unpacked) */
    /* Its ranks' shares (AggState.share_*): ranks, entries, samples, ids rank-major. */
    uint32_t *sh_rank, *sh_entries, *sh_fn;
    uint64_t *sh_samples;
} lg_agg_t;

static struct {
    lg_agg_t *a;
    uint64_t partial_bytes, aggstates;
    double build_s;
    uint8_t *out; /* agg_encode's buffer */
} AG;

static int get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned sh = 0; sh < 64 && *p < end; sh += 7) {
        uint8_t b = *(*p)++;
        x |= (uint64_t)(b & 0x7f) << sh;
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

/* One field at *p: its number, wire type, value (varint) or payload [*data, *data + *dlen). */
static int next_field(const uint8_t **p, const uint8_t *end, unsigned *field, uint64_t *v,
                      const uint8_t **data, size_t *dlen)
{
    uint64_t tag;
    if (get_varint(p, end, &tag) < 0 || (tag >> 3) == 0 || (tag >> 3) > 536870911u)
        return -1;
    *field = (unsigned)(tag >> 3);
    *v = 0;
    *data = *p;
    *dlen = 0;
    switch (tag & 7) {
    case 0:
        return get_varint(p, end, v);
    case 1:
    case 5: {
        size_t n = (tag & 7) == 1 ? 8 : 4;
        if ((size_t)(end - *p) < n)
            return -1;
        *p += n;
        return 0;
    }
    case 2:
        if (get_varint(p, end, v) < 0 || *v > (uint64_t)(end - *p))
            return -1;
        *data = *p;
        *dlen = (size_t)*v;
        *p += *v;
        return 0;
    default:
        return -1;
    }
}

/* Finds the pieces of a cached partial (lg_pvar_t): the envelope's Partial (field 14), its
 * Window (field 1, first), and in the Window the fields written per window, which protobuf-c
 * writes in field order. Returns 0, or -1 when the layout is not the expected one. */
static int agg_split(lg_pvar_t *pv)
{
    const uint8_t *b = pv->orig, *p = b, *end = b + pv->orig_len, *d, *part = NULL;
    size_t dl, part_len = 0;
    unsigned f;
    uint64_t v;
    while (p < end) {
        if (next_field(&p, end, &f, &v, &d, &dl) < 0)
            return -1;
        if (f == 4)
            pv->seq0 = v;
        if (f == 14)
            part = d, part_len = dl;
    }
    if (!part)
        return -1;
    p = part;
    end = part + part_len;
    if (next_field(&p, end, &f, &v, &d, &dl) < 0 || f != 1)
        return -1;
    pv->rest_off = (uint32_t)(p - b);
    pv->rest_len = (uint32_t)(end - p);
    const uint8_t *wend = d + dl;
    p = d;
    unsigned last = 0;
    pv->pre_off = pv->mid_off = pv->post_off = 0;
    size_t cap_calls = 0;
    while (p < wend) {
        const uint8_t *at = p;
        if (next_field(&p, wend, &f, &v, &d, &dl) < 0 || f < last)
            return -1;
        last = f;
        uint32_t off = (uint32_t)(at - b), len = (uint32_t)(p - at);
        if (f == 1) {
            pv->index0 = v;
        } else if (f == 27) {
            pv->closed0 = v;
        } else if (f == 29) {
            pv->start0 = v;
        } else if (f == 26) {
            if (pv->n_calls == cap_calls) {
                size_t cap = cap_calls ? 2 * cap_calls : 8;
                lg_pcall_t *nc = realloc(pv->calls, cap * sizeof *nc);
                if (!nc)
                    return -1;
                pv->calls = nc;
                cap_calls = cap;
            }
            lg_pcall_t *c = &pv->calls[pv->n_calls++];
            memset(c, 0, sizeof *c);
            const uint8_t *q = d, *qend = d + dl, *qd;
            size_t ql;
            unsigned qf, qlast = 0;
            c->pre_off = (uint32_t)(d - b);
            while (q < qend) {
                const uint8_t *qat = q;
                uint64_t qv;
                if (next_field(&q, qend, &qf, &qv, &qd, &ql) < 0 || qf < qlast)
                    return -1;
                qlast = qf;
                if (qf < 2) {
                    c->pre_len += (uint32_t)(q - qat);
                } else if (qf == 2) {
                    c->start = qv;
                } else {
                    if (!c->post_len)
                        c->post_off = (uint32_t)(qat - b);
                    c->post_len += (uint32_t)(q - qat);
                }
            }
            if (dl > LG_AGG_CALL_MAX - 16)
                return -1;
        } else if (f < 26) {
            if (!pv->pre_len)
                pv->pre_off = off;
            pv->pre_len += len;
        } else if (f == 28) {
            if (!pv->mid_len)
                pv->mid_off = off;
            pv->mid_len += len;
        } else {
            if (!pv->post_len)
                pv->post_off = off;
            pv->post_len += len;
        }
    }
    pv->wstart0 = mw_grid_start(&G.grid, pv->index0);
    return 0;
}

/* Writes aggregator `id`'s partial of variant pv as window k (starting at `start`, closed at
 * `closed`), envelope seq `seq`, into out (MW_MAX_MESSAGE_BYTES + the variant's size): returns
 * where the envelope starts, its length in *len. */
static const uint8_t *agg_encode(unsigned id, const lg_pvar_t *pv, uint64_t k, uint64_t start,
                                 uint64_t closed, uint64_t seq, uint8_t *out, size_t *len)
{
    const uint8_t *b = pv->orig;
    uint8_t *win = out + C.prefix_len + 64, *p = win;
    p = put_u64(p, 1, k);
    memcpy(p, b + pv->pre_off, pv->pre_len);
    p += pv->pre_len;
    for (uint32_t i = 0; i < pv->n_calls; i++) {
        const lg_pcall_t *c = &pv->calls[i];
        uint8_t call[LG_AGG_CALL_MAX], *q = call;
        memcpy(q, b + c->pre_off, c->pre_len);
        q += c->pre_len;
        q = put_u64(q, 2, c->start ? c->start + (start - pv->wstart0) : 0);
        memcpy(q, b + c->post_off, c->post_len);
        q += c->post_len;
        p = put_varint(put_tag(p, 26, 2), (uint64_t)(q - call));
        memcpy(p, call, (size_t)(q - call));
        p += q - call;
    }
    p = put_u64(p, 27, closed);
    memcpy(p, b + pv->mid_off, pv->mid_len);
    p += pv->mid_len;
    p = put_u64(p, 29, pv->start0 ? start : 0); /* as the real code: absent or the start */
    memcpy(p, b + pv->post_off, pv->post_len);
    p += pv->post_len;
    size_t wlen = (size_t)(p - win);
    memcpy(p, b + pv->rest_off, pv->rest_len);
    /* Partial = Window header + Window + rest; then the envelope's fields before it. */
    uint8_t wh[16], *h = put_varint(put_tag(wh, 1, 2), wlen);
    size_t whl = (size_t)(h - wh), plen = whl + wlen + pv->rest_len;
    uint8_t tail[40], *t = tail;
    t = put_u64(t, 3, id);
    t = put_u64(t, 4, seq);
    t = put_varint(put_tag(t, 14, 2), plen);
    size_t tl = (size_t)(t - tail);
    uint8_t *s = win - whl - tl - C.prefix_len;
    memcpy(s, C.prefix, C.prefix_len);
    memcpy(s + C.prefix_len, tail, tl);
    memcpy(s + C.prefix_len + tl, wh, whl);
    *len = C.prefix_len + tl + plen;
    return s;
}

/* The checks of the rewriting (above). Returns 0, or -1 with a message. */
static int agg_check(unsigned a, uint8_t *out)
{
    const lg_agg_t *ag = &AG.a[a];
    for (unsigned v = 0; v < C.v; v++) {
        const lg_pvar_t *pv = &ag->var[v];
        size_t len;
        const uint8_t *m =
            agg_encode(a, pv, pv->index0, pv->wstart0, pv->closed0, pv->seq0, out, &len);
        if (len != pv->orig_len || memcmp(m, pv->orig, len) != 0) {
            fprintf(stderr,
                    "mpiwatch-loadgen: aggregator %u's partial %u rewritten differs from the "
                    "real one (%zu vs %zu bytes)\n",
                    a, v, len, pv->orig_len);
            return -1;
        }
        Mpiwatch__Envelope *env = mpiwatch__envelope__unpack(NULL, pv->orig_len, pv->orig);
        if (!env || env->body_case != MPIWATCH__ENVELOPE__BODY_PARTIAL || !env->partial->window) {
            if (env)
                mpiwatch__envelope__free_unpacked(env, NULL);
            fprintf(stderr, "mpiwatch-loadgen: aggregator %u's partial %u does not decode\n", a, v);
            return -1;
        }
        Mpiwatch__Window *w = env->partial->window;
        /* Its function totals are its ranks' samples'. */
        int same = 1;
        for (unsigned i = 0; i < G.o.functions; i++) {
            const lg_total_t *t = &ag->vsum[v * G.o.functions + i];
            uint64_t cnt = 0, ns = 0, by = 0;
            for (size_t j = 0; j < w->n_functions; j++)
                if (w->functions[j]->fn == G.fn_id[i])
                    cnt += w->functions[j]->count, ns += w->functions[j]->total_ns,
                        by += w->functions[j]->bytes;
            same &= cnt == t->count && ns == t->time_ns && by == t->bytes;
        }
        same &= w->ranks_reporting == ag->count;
        /* Another window, by protobuf-c. */
        uint64_t k = pv->index0 + 1000 + v, start = mw_grid_start(&G.grid, k);
        uint64_t closed = start + G.window_ns + 12345;
        for (size_t j = 0; j < w->n_longest; j++)
            if (w->longest[j]->start_ns)
                w->longest[j]->start_ns += start - pv->wstart0;
        w->index = k;
        w->start_ns = w->start_ns ? start : 0;
        w->closed_real_ns = closed;
        env->seq = 77 + v;
        size_t plen = mpiwatch__envelope__get_packed_size(env);
        uint8_t *theirs = plen <= MW_MAX_MESSAGE_BYTES ? malloc(plen) : NULL;
        if (theirs) {
            mpiwatch__envelope__pack(env, theirs);
            m = agg_encode(a, pv, k, start, closed, 77 + v, out, &len);
            same &= len == plen && memcmp(m, theirs, len) == 0;
        }
        free(theirs);
        mpiwatch__envelope__free_unpacked(env, NULL);
        if (!theirs || !same) {
            fprintf(stderr, "mpiwatch-loadgen: aggregator %u's partial %u: %s\n", a, v,
                    !theirs ? "out of memory"
                            : "its totals or its rewriting at another window do not check");
            return -1;
        }
    }
    return 0;
}

/* The in-process aggregator's closed windows: their partials become the cached variants. */
typedef struct {
    mw_collector_t *c;
    lg_agg_t *ag;
    unsigned id, n;
    uint32_t ranks[LG_MAX_VARIANTS];
    mw_pb_encoder_t enc;
    mw_clock_t now;
    int failed;
} lg_agg_build_t;

static void agg_on_window(const mw_window_t *w, void *user)
{
    lg_agg_build_t *bd = user;
    if (bd->n >= C.v) {
        bd->failed = 1;
        return;
    }
    size_t len = mw__partial_envelope_pack(bd->c, &bd->enc, w, bd->id, bd->n);
    lg_pvar_t *pv = &bd->ag->var[bd->n];
    bd->ranks[bd->n++] = w->ranks_reporting;
    pv->orig = len ? malloc(len) : NULL;
    if (!pv->orig || len > MW_MAX_MESSAGE_BYTES) {
        bd->failed = 1;
        return;
    }
    memcpy(pv->orig, bd->enc.out, len);
    pv->orig_len = len;
    AG.partial_bytes += len;
}

static int agg_feed_hello(Mpiwatch__Envelope *env, unsigned rank, void *user)
{
    lg_agg_build_t *bd = user;
    env->version = MW_PROTO_VERSION;
    env->job = (char *)G.o.job;
    env->rank = rank;
    env->seq = 0;
    size_t len = mpiwatch__envelope__get_packed_size(env);
    if (len > G.buf_cap)
        return -1;
    mpiwatch__envelope__pack(env, G.buf);
    return mw_collector_frame(bd->c, G.buf, len, 1, &bd->now) == MW_ACCEPTED ? 0 : -1;
}

/* Builds aggregator a's cached partials and AggState template. Returns 0, or -1 with a
 * message. */
static int agg_build(unsigned a, uint64_t kb)
{
    lg_agg_t *ag = &AG.a[a];
    unsigned nf = G.o.functions, r0 = ag->first, r1 = ag->first + ag->count;
    ag->var = calloc(C.v, sizeof *ag->var);
    ag->vsum = calloc((size_t)C.v * nf, sizeof *ag->vsum);
    ag->vsends = calloc(C.v, sizeof *ag->vsends);
    uint64_t *rt = calloc((size_t)ag->count * nf * 3, sizeof *rt); /* calls, ns, bytes */
    mw_collector_options_t o;
    mw_collector_options_defaults(&o);
    lg_agg_build_t bd = {.ag = ag, .id = a};
    bd.c = malloc(sizeof *bd.c); /* large: dense per-function tables */
    char err[256] = "out of memory";
    int rc = -1;
    if (!ag->var || !ag->vsum || !ag->vsends || !rt || !bd.c)
        goto out;
    /* An aggregator: --upstream makes the core build the aggregator's state; the endpoint is
     * never connected (only the executable opens the upstream socket). */
    if (mw_collector_options_set(&o, "upstream", "ipc:///nonexistent/mpiwatch-loadgen", err,
                                 sizeof err) < 0)
        goto out;
    o.aggregator_id = a;
    o.quiet = 1;
    if (mw_collector_init(bd.c, &o) < 0) {
        free(bd.c);
        bd.c = NULL;
        goto out;
    }
    bd.c->report_out = NULL;
    bd.c->on_window = agg_on_window;
    bd.c->on_window_user = &bd;
    uint64_t off = now_ns(CLOCK_REALTIME) - now_ns(CLOCK_MONOTONIC);
    bd.now.real_ns = now_ns(CLOCK_REALTIME);
    bd.now.mono_ns = bd.now.real_ns - off;
    snprintf(err, sizeof err, "a hello was refused");
    for (unsigned r = r0; r < r1; r++)
        if (hello_envelope(r, 0, agg_feed_hello, &bd) != 0)
            goto out;
    /* Its own ranks only (upstream.c with --expect-ranks): the others report elsewhere. */
    if (!bd.c->merge_ready)
        goto out;
    for (uint32_t r = 0; r < bd.c->job.size; r++)
        if (!bd.c->job.ranks[r].said_hello)
            mw__merge_leave(&bd.c->merge, r);
    for (unsigned v = 0; v < C.v; v++) {
        mw_clock_t now = {.real_ns = mw_grid_start(&G.grid, kb + v + 1) + 1000000u};
        now.mono_ns = now.real_ns - off;
        for (unsigned r = r0; r < r1; r++) {
            const lg_variant_t *var = &C.var[lrank(r) * C.v + v];
            uint64_t *rc_ = &rt[(size_t)(r - r0) * nf * 3], *rn = rc_ + nf, *rb = rn + nf;
            ag->vsends[v] += var->sends;
            for (unsigned i = 0; i < nf; i++) {
                rc_[G.rank_pos[i]] += var->fn[i].count;
                rn[G.rank_pos[i]] += var->fn[i].time_ns;
                rb[G.rank_pos[i]] += var->fn[i].bytes;
                lg_total_t *t = &ag->vsum[v * nf + i];
                t->count += var->fn[i].count;
                t->time_ns += var->fn[i].time_ns;
                t->bytes += var->fn[i].bytes;
            }
            size_t len;
            const uint8_t *m =
                cache_encode(r, var, kb + v, 1 + v, v + 1, now.real_ns, rc_, rn, rb, G.buf, &len);
            if (mw_collector_frame(bd.c, m, len, 1, &now) != MW_ACCEPTED) {
                snprintf(err, sizeof err, "rank %u's sample of window %u was refused", r, v);
                goto out;
            }
        }
        mw_collector_tick(bd.c, &now);
        if (bd.n == v) { /* not closed on its last sample: at its deadline */
            now.real_ns += (uint64_t)o.lateness_ms * 1000000u + G.window_ns;
            now.mono_ns += (uint64_t)o.lateness_ms * 1000000u + G.window_ns;
            mw_collector_tick(bd.c, &now);
        }
        if (bd.n != v + 1 || bd.failed || bd.ranks[v] != ag->count) {
            snprintf(err, sizeof err, "window %u did not close with its %u ranks", v, ag->count);
            goto out;
        }
    }
    size_t len = mw__aggstate_envelope_pack(bd.c, &bd.enc, a, 0, 0);
    if (!len || !(ag->tmpl = mpiwatch__envelope__unpack(NULL, len, bd.enc.out)))
        goto out;
    for (unsigned v = 0; v < C.v; v++)
        if (agg_split(&ag->var[v]) != 0) {
            snprintf(err, sizeof err, "partial %u is not laid out as expected", v);
            goto out;
        }
    rc = 0;
out:
    if (rc != 0)
        fprintf(stderr, "mpiwatch-loadgen: emulated aggregator %u: %s\n", a, err);
    if (bd.c) {
        mw_collector_free(bd.c);
        free(bd.c);
    }
    mw__pb_encoder_free(&bd.enc);
    mw_collector_options_free(&o);
    free(rt);
    return rc;
}

/* Splits the ranks over the aggregators and builds them (docs/loadgen.md). Returns 0, or -1. */
static int agg_setup(void)
{
    unsigned n = G.o.aggregators;
    if (!n)
        return 0;
    uint64_t t0 = now_ns(CLOCK_MONOTONIC);
    AG.a = calloc(n, sizeof *AG.a);
    uint8_t *out = AG.out = malloc(2 * (size_t)MW_MAX_MESSAGE_BYTES);
    if (!AG.a || !out) {
        fprintf(stderr, "mpiwatch-loadgen: out of memory\n");
        return -1;
    }
    mw_collector_set_log(NULL, MW_LOG_ERROR);
    uint64_t kb = mw_grid_index(&G.grid, now_ns(CLOCK_REALTIME)) + 1;
    int rc = 0;
    for (unsigned a = 0; a < n && rc == 0; a++) {
        AG.a[a].first = G.ep_first[a];
        AG.a[a].count = G.ep_first[a + 1] - G.ep_first[a];
        rc = agg_build(a, kb);
    }
    if (rc == 0)
        rc = agg_check(0, out);
    if (rc == 0 && n > 1)
        rc = agg_check(n - 1, out);
    AG.build_s = (double)(now_ns(CLOCK_MONOTONIC) - t0) * 1e-9;
    return rc;
}

/* Fields of AggState after `final` (21) describe the template's own run, not this one: they
 * are left empty (scalars 0, repeated fields without entries), whatever they are; the ranks'
 * shares are then set from the run (agg_send_state). */
static void agg_state_tail_clear(Mpiwatch__AggState *s)
{
    const ProtobufCMessageDescriptor *d = s->base.descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->id <= 21)
            continue;
        char *at = (char *)s + f->offset;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            *(size_t *)((char *)s + f->quantifier_offset) = 0;
            *(void **)at = NULL;
        } else if (f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_MESSAGE) {
            *(void **)at = NULL;
        } else if (f->type == PROTOBUF_C_TYPE_BYTES) {
            memset(at, 0, sizeof(ProtobufCBinaryData));
        } else if (f->type == PROTOBUF_C_TYPE_UINT64 || f->type == PROTOBUF_C_TYPE_INT64 ||
                   f->type == PROTOBUF_C_TYPE_SINT64 || f->type == PROTOBUF_C_TYPE_FIXED64 ||
                   f->type == PROTOBUF_C_TYPE_SFIXED64 || f->type == PROTOBUF_C_TYPE_DOUBLE) {
            memset(at, 0, 8);
        } else if (f->type == PROTOBUF_C_TYPE_BOOL) {
            memset(at, 0, sizeof(protobuf_c_boolean));
        } else {
            memset(at, 0, 4);
        }
    }
}

/* Aggregator ag's ranks' running totals, calls and seq after n windows, in G: rank r sent
 * variants 0, 1, .., V-1, 0, .., so its totals are n / V times the sum of its variants plus
 * its first n mod V variants. Computed when an AggState or the byes need them (once a second
 * at most), not per rank per window: the generator's work per window stays per aggregator. */
static void agg_rank_totals(const lg_agg_t *ag, uint64_t n)
{
    unsigned nf = G.o.functions;
    uint64_t q = n / C.v, m = n % C.v;
    for (unsigned r = ag->first; r < ag->first + ag->count; r++) {
        size_t at = lrank(r) * nf;
        uint64_t calls = 0;
        for (unsigned i = 0; i < nf; i++) {
            uint64_t c = 0, ns = 0, by = 0;
            for (unsigned v = 0; v < C.v; v++) {
                const lg_total_t *x = &C.var[lrank(r) * C.v + v].fn[i];
                uint64_t times = q + (v < m);
                c += times * x->count;
                ns += times * x->time_ns;
                by += times * x->bytes;
            }
            size_t j = at + G.rank_pos[i];
            G.rt_calls[j] = c;
            G.rt_ns[j] = ns;
            G.rt_bytes[j] = by;
            calls += c;
        }
        G.calls[lrank(r)] = calls;
        G.seq[lrank(r)] = 1 + n; /* its hello, then one sample a window */
    }
}

/* Aggregator a's AggState: the real code's, with the run's figures. */
static int agg_send_state(unsigned a, int final, uint32_t hellos, uint32_t done)
{
    lg_agg_t *ag = &AG.a[a];
    unsigned nf = G.o.functions;
    uint32_t fn[LG_MAX_FUNCTIONS];
    uint64_t calls[LG_MAX_FUNCTIONS], ns[LG_MAX_FUNCTIONS], bytes[LG_MAX_FUNCTIONS];
    size_t n = 0;
    for (unsigned j = 0; j < nf; j++) {
        const lg_total_t *t = &ag->sent[G.by_id[j]];
        if (!t->count && !t->time_ns && !t->bytes)
            continue;
        fn[n] = G.total_fn[j];
        calls[n] = t->count;
        ns[n] = t->time_ns;
        bytes[n++] = t->bytes;
    }
    Mpiwatch__AggState s = *ag->tmpl->agg;
    agg_state_tail_clear(&s);
    s.ranks = hellos;
    s.ranks_done = done;
    s.n_total_fn = s.n_total_calls = s.n_total_ns = s.n_total_bytes = n;
    s.n_sent_calls = s.n_sent_ns = s.n_sent_bytes = n;
    s.total_fn = fn;
    s.total_calls = s.sent_calls = calls;
    s.total_ns = s.sent_ns = ns;
    s.total_bytes = s.sent_bytes = bytes;
    s.samples_total = s.samples_merged = ag->samples;
    s.partials_sent = ag->partials;
    s.partials_dropped = s.rejected = s.late = 0;
    s.final = final ? 1 : 0;
    /* The ranks' shares, as aggstate.c states them: every rank with running totals (one sample
     * or more), its latest totals per function, rank-major in increasing ids: the rank's own
     * slice of the running totals (by_id order). */
    if (!ag->sh_rank) {
        ag->sh_rank = malloc(ag->count * sizeof *ag->sh_rank);
        ag->sh_entries = malloc(ag->count * sizeof *ag->sh_entries);
        ag->sh_samples = malloc(ag->count * sizeof *ag->sh_samples);
        ag->sh_fn = malloc((size_t)ag->count * nf * sizeof *ag->sh_fn);
        if (!ag->sh_rank || !ag->sh_entries || !ag->sh_samples || !ag->sh_fn)
            return -1;
        for (unsigned i = 0; i < ag->count; i++) {
            ag->sh_rank[i] = ag->first + i;
            ag->sh_entries[i] = nf;
            memcpy(&ag->sh_fn[(size_t)i * nf], G.total_fn, nf * sizeof *G.total_fn);
        }
    }
    agg_rank_totals(ag, ag->partials);
    uint64_t per_rank = ag->samples / ag->count;
    size_t nr = per_rank ? ag->count : 0, at = lrank(ag->first) * nf;
    for (size_t i = 0; i < nr; i++)
        ag->sh_samples[i] = per_rank;
    s.shares = 1;
    s.n_share_rank = s.n_share_entries = s.n_share_samples = nr;
    s.share_rank = ag->sh_rank;
    s.share_entries = ag->sh_entries;
    s.share_samples = ag->sh_samples;
    s.n_share_fn = s.n_share_calls = s.n_share_ns = s.n_share_bytes = nr * nf;
    s.share_fn = ag->sh_fn;
    s.share_calls = &G.rt_calls[at];
    s.share_ns = &G.rt_ns[at];
    s.share_bytes = &G.rt_bytes[at];
    Mpiwatch__Envelope env = *ag->tmpl;
    env.agg = &s;
    env.seq = ag->seq++;
    size_t len = mpiwatch__envelope__get_packed_size(&env);
    if (len > MW_MAX_MESSAGE_BYTES / 2) { /* aggstate.c leaves them out then */
        s.shares = 0;
        s.n_share_rank = s.n_share_entries = s.n_share_samples = 0;
        s.n_share_fn = s.n_share_calls = s.n_share_ns = s.n_share_bytes = 0;
        len = mpiwatch__envelope__get_packed_size(&env);
    }
    if (len > G.buf_cap)
        return -1;
    mpiwatch__envelope__pack(&env, G.buf);
    void *sock = G.socks[G.ep_sock[a]];
    while (zmq_send(sock, G.buf, len, 0) < 0) {
        if (errno == EINTR)
            continue;
        fprintf(stderr, "mpiwatch-loadgen: zmq_send: %s\n", zmq_strerror(errno));
        return -1;
    }
    G.bytes_sent += len;
    AG.aggstates++;
    return 0;
}

/* The hellos as the aggregators forward them, each aggregator's AggState after its first. */
static int agg_send_hellos(void)
{
    for (unsigned a = 0; a < G.o.aggregators; a++) {
        const lg_agg_t *ag = &AG.a[a];
        for (unsigned r = ag->first; r < ag->first + ag->count; r++) {
            if (hello_envelope(r, r != ag->first, hello_send, NULL) != 0)
                return -1;
            if (r == ag->first && agg_send_state(a, 0, 1, 0) != 0)
                return -1;
        }
    }
    return 0;
}

/* Every aggregator's partial of window k (the `ordinal`-th of the run), with the accounting
 * of its ranks' samples in it, and its AggState every second. */
static int agg_send_window(uint64_t k, uint64_t ordinal)
{
    unsigned nf = G.o.functions, v = (unsigned)(ordinal % C.v);
    uint64_t start = mw_grid_start(&G.grid, k);
    uint64_t every = (uint64_t)llround(1e9 / (double)G.window_ns);
    for (unsigned a = 0; a < G.o.aggregators; a++) {
        lg_agg_t *ag = &AG.a[a];
        if (ordinal && every && ordinal % every == 0 && agg_send_state(a, 0, ag->count, 0) != 0)
            return -1;
        G.peer_messages += ag->vsends[v]; /* its ranks' running totals: agg_rank_totals */
        for (unsigned i = 0; i < nf; i++) {
            const lg_total_t *t = &ag->vsum[v * nf + i];
            G.tot[i].count += t->count;
            G.tot[i].time_ns += t->time_ns;
            G.tot[i].bytes += t->bytes;
            ag->sent[i].count += t->count;
            ag->sent[i].time_ns += t->time_ns;
            ag->sent[i].bytes += t->bytes;
        }
        G.samples += ag->count;
        G.fn_summaries += (uint64_t)ag->count * nf;
        ag->samples += ag->count;
        size_t len;
        const uint8_t *m =
            agg_encode(a, &ag->var[v], k, start, now_ns(CLOCK_REALTIME), ag->seq++, AG.out, &len);
        void *sock = G.socks[G.ep_sock[a]];
        while (zmq_send(sock, m, len, 0) < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "mpiwatch-loadgen: zmq_send: %s\n", zmq_strerror(errno));
            return -1;
        }
        ag->partials++;
        G.bytes_sent += len;
    }
    return 0;
}

/* The byes as the aggregators forward them: all but the last of each aggregator after its
 * last partial, then its final AggState, then its last bye (upstream.c). */
static int agg_send_byes(uint64_t windows)
{
    for (unsigned a = 0; a < G.o.aggregators; a++) {
        const lg_agg_t *ag = &AG.a[a];
        unsigned last = ag->first + ag->count - 1, nf = G.o.functions;
        agg_rank_totals(ag, windows);
        /* The byes' totals, computed from the variants, must add up to what went up in the
         * partials (aggregated per window): otherwise the generator is wrong, and says so. */
        for (unsigned i = 0; i < nf; i++) {
            uint64_t c = 0, ns = 0, by = 0;
            for (unsigned r = ag->first; r <= last; r++) {
                size_t j = lrank(r) * nf + G.rank_pos[i];
                c += G.rt_calls[j], ns += G.rt_ns[j], by += G.rt_bytes[j];
            }
            if (c != ag->sent[i].count || ns != ag->sent[i].time_ns || by != ag->sent[i].bytes) {
                fprintf(stderr,
                        "mpiwatch-loadgen: aggregator %u: its ranks' totals of %s differ from "
                        "its partials'\n",
                        a, FN_MODELS[i].name);
                return -1;
            }
        }
        for (unsigned r = ag->first; r < last; r++)
            if (send_bye(r, windows) != 0)
                return -1;
        if (agg_send_state(a, 1, ag->count, ag->count) != 0 || send_bye(last, windows) != 0)
            return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Setup, pacing, report                                                                    */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mpiwatch-loadgen --connect ENDPOINT --ranks N --rate HZ --functions F\n"
            "                        --seconds S [--nodes K] [--job NAME] [--seed X]\n"
            "                        [--sockets M] [--totals-json FILE] [--trace K]\n"
            "                        [--trace-ring [--late-rank R] [--late-every N]\n"
            "                        [--late-ms D]] [--regions N] [--sites N] [--peer-fn]\n"
            "                        [--table-shuffle SEED] [--rank-first A] [--rank-count B]\n"
            "                        [--variants V] [--aggregators A] [--hello-again N]\n"
            "Emulates N ranks of one MPI job sending hellos, one sample per window (HZ windows\n"
            "per second, F functions each) for S seconds, and byes, to a collector.\n"
            "F is at most %u. Default nodes N/16 (at least 1), sockets one per %u ranks.\n"
            "--rank-first A --rank-count B: only ranks A..A+B-1 of the N (hellos say size N).\n"
            "--variants V: samples cached per rank (default %u, 0: encode every sample).\n"
            "--connect given E times: the ranks in E contiguous blocks, one per endpoint;\n"
            "--sockets M is then per endpoint.\n"
            "--trace K: every sample carries an exact per-call trace, one of K built at start.\n"
            "--trace-ring: the traces' messages go around a ring of ranks and match across\n"
            "ranks; rank R (default 1) starts every N-th window (default 10, 0 never) D ms\n"
            "late (default 5, at most a tenth of a window).\n"
            "--regions N / --sites N: every rank reports N code regions / N call sites with\n"
            "known totals (docs/loadgen.md); --peer-fn: peer entries per sending function.\n"
            "--table-shuffle SEED: the ranks emulate another MPI's function table (this build's\n"
            "names in another order, plus names this build does not have).\n"
            "--aggregators A: emulate A aggregators feeding the root at --connect: each takes a\n"
            "contiguous block of the ranks; their partials are built at start by the real\n"
            "aggregator code from the cached samples (docs/loadgen.md).\n"
            "--hello-again N: after the first window, the first N ranks say hello again, as\n"
            "the library does when its socket reconnects.\n",
            LG_MAX_FUNCTIONS, LG_RANKS_PER_SOCKET_DEFAULT, LG_DEFAULT_VARIANTS);
    fputs("\n  -h, --help         print this help and exit\n"
          "      --version      print the version and exit\n",
          f);
}

static int parse_uint(const char *s, const char *what, unsigned lo, unsigned hi, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || end == s || v < lo || v > hi) {
        fprintf(stderr, "mpiwatch-loadgen: %s must be an integer in %u..%u\n", what, lo, hi);
        return -1;
    }
    *out = (unsigned)v;
    return 0;
}

static int parse_double(const char *s, const char *what, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || end == s || !(v >= lo && v <= hi)) {
        fprintf(stderr, "mpiwatch-loadgen: %s must be a number in %g..%g\n", what, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

/* Returns 0, -1 on a usage error, 1 after --help. */
static int parse_args(int argc, char **argv, lg_opts_t *o)
{
    static const struct option longopts[] = {{"connect", required_argument, 0, 'c'},
                                             {"ranks", required_argument, 0, 'n'},
                                             {"rate", required_argument, 0, 'r'},
                                             {"functions", required_argument, 0, 'f'},
                                             {"seconds", required_argument, 0, 's'},
                                             {"nodes", required_argument, 0, 'k'},
                                             {"job", required_argument, 0, 'j'},
                                             {"seed", required_argument, 0, 'x'},
                                             {"sockets", required_argument, 0, 'm'},
                                             {"totals-json", required_argument, 0, 't'},
                                             {"trace", required_argument, 0, 'T'},
                                             {"trace-ring", no_argument, 0, 'R'},
                                             {"late-rank", required_argument, 0, 'L'},
                                             {"late-every", required_argument, 0, 'E'},
                                             {"late-ms", required_argument, 0, 'D'},
                                             {"regions", required_argument, 0, 'G'},
                                             {"sites", required_argument, 0, 'S'},
                                             {"peer-fn", no_argument, 0, 'P'},
                                             {"table-shuffle", required_argument, 0, 'Y'},
                                             {"rank-first", required_argument, 0, 'A'},
                                             {"rank-count", required_argument, 0, 'B'},
                                             {"variants", required_argument, 0, 'W'},
                                             {"aggregators", required_argument, 0, 'g'},
                                             {"hello-again", required_argument, 0, 'H'},
                                             {"help", no_argument, 0, 'h'},
                                             {"version", no_argument, 0, 'V'},
                                             {0, 0, 0, 0}};
    unsigned seed = 1;
    int c;
    o->variants = LG_DEFAULT_VARIANTS;
    o->late_rank = 1;
    o->late_every = 10;
    o->late_ms = 5;
    while ((c = getopt_long(argc, argv, "c:n:r:f:s:k:j:x:m:t:T:RL:E:D:G:S:PY:A:B:W:g:H:h", longopts,
                            NULL)) != -1) {
        int rc = 0;
        switch (c) {
        case 'c':
            if (o->n_endpoints == LG_MAX_ENDPOINTS) {
                fprintf(stderr, "mpiwatch-loadgen: at most %u --connect\n", LG_MAX_ENDPOINTS);
                return -1;
            }
            o->endpoint[o->n_endpoints++] = optarg;
            break;
        case 'A':
            rc = parse_uint(optarg, "--rank-first", 0, (1u << 20) - 1, &o->rank_first);
            break;
        case 'B':
            rc = parse_uint(optarg, "--rank-count", 1, 1u << 20, &o->rank_count);
            break;
        case 'W':
            rc = parse_uint(optarg, "--variants", 0, LG_MAX_VARIANTS, &o->variants);
            break;
        case 'g':
            rc = parse_uint(optarg, "--aggregators", 1, LG_AGG_MAX, &o->aggregators);
            break;
        case 'H':
            rc = parse_uint(optarg, "--hello-again", 0, 1u << 20, &o->hello_again);
            break;
        case 'n':
            rc = parse_uint(optarg, "--ranks", 1, 1u << 20, &o->ranks);
            break;
        case 'r':
            rc = parse_double(optarg, "--rate", 1.0 / 60, 1000, &o->rate);
            break;
        case 'f':
            rc = parse_uint(optarg, "--functions", 1, LG_MAX_FUNCTIONS, &o->functions);
            break;
        case 's':
            rc = parse_double(optarg, "--seconds", 0, 1e6, &o->seconds);
            break;
        case 'k':
            rc = parse_uint(optarg, "--nodes", 1, 1u << 20, &o->nodes);
            break;
        case 'j':
            o->job = optarg;
            break;
        case 'x':
            rc = parse_uint(optarg, "--seed", 0, UINT32_MAX, &seed);
            break;
        case 'm':
            rc = parse_uint(optarg, "--sockets", 1, 1024, &o->sockets);
            break;
        case 't':
            o->totals_json = optarg;
            break;
        case 'T':
            rc = parse_uint(optarg, "--trace", 1, LG_TRACE_MAX, &o->trace);
            break;
        case 'R':
            o->ring = 1;
            break;
        case 'L':
            rc = parse_uint(optarg, "--late-rank", 0, 1u << 20, &o->late_rank);
            break;
        case 'E':
            rc = parse_uint(optarg, "--late-every", 0, 1u << 20, &o->late_every);
            break;
        case 'D':
            rc = parse_double(optarg, "--late-ms", 0, 1e6, &o->late_ms);
            break;
        case 'G':
            rc = parse_uint(optarg, "--regions", 0, LG_MAX_REGIONS, &o->regions);
            break;
        case 'S':
            rc = parse_uint(optarg, "--sites", 0, LG_MAX_SITES, &o->sites);
            break;
        case 'P':
            o->peer_fn = 1;
            break;
        case 'Y':
            o->shuffle = 1;
            rc = parse_uint(optarg, "--table-shuffle", 0, UINT32_MAX, &o->shuffle_seed);
            break;
        case 'h':
            usage(stdout);
            return 1;
        case 'V':
            printf("mpiwatch-loadgen %s\n", MW_VERSION_FULL);
            return 1;
        default:
            usage(stderr);
            return -1;
        }
        if (rc)
            return -1;
    }
    if (optind < argc || !o->n_endpoints || !o->ranks || !o->functions || o->rate == 0 ||
        o->seconds == 0) {
        fprintf(stderr, "mpiwatch-loadgen: --connect, --ranks, --rate, --functions and "
                        "--seconds are required\n");
        usage(stderr);
        return -1;
    }
    if (o->ring && !o->trace) {
        fprintf(stderr, "mpiwatch-loadgen: --trace-ring needs --trace K\n");
        return -1;
    }
    if (!o->rank_count)
        o->rank_count = o->ranks - (o->rank_first < o->ranks ? o->rank_first : o->ranks);
    if ((uint64_t)o->rank_first + o->rank_count > o->ranks || o->rank_count == 0) {
        fprintf(stderr,
                "mpiwatch-loadgen: --rank-first %u --rank-count %u is not inside the %u ranks\n",
                o->rank_first, o->rank_count, o->ranks);
        return -1;
    }
    if (o->aggregators) {
        /* One socket per emulated aggregator, all to the root. */
        if (o->n_endpoints != 1 || o->aggregators > o->rank_count || o->variants == 0 || o->trace ||
            o->regions || o->sites || o->peer_fn || o->shuffle || o->hello_again) {
            fprintf(stderr, "mpiwatch-loadgen: --aggregators A needs one --connect (the root), "
                            "at most one aggregator per rank and cached samples (--variants "
                            "1 or more; not --trace, --regions, --sites, --peer-fn, "
                            "--table-shuffle or --hello-again)\n");
            return -1;
        }
        for (unsigned e = 1; e < o->aggregators; e++)
            o->endpoint[e] = o->endpoint[0];
        o->n_endpoints = o->aggregators;
        o->sockets = 1;
    }
    if (o->n_endpoints > o->rank_count) {
        fprintf(stderr, "mpiwatch-loadgen: %u endpoints for %u ranks\n", o->n_endpoints,
                o->rank_count);
        return -1;
    }
    o->seed = seed;
    if (!o->nodes)
        o->nodes = o->ranks / 16 ? o->ranks / 16 : 1;
    if (o->nodes > o->ranks)
        o->nodes = o->ranks;
    return 0; /* --sockets 0 (not given): one per LG_RANKS_PER_SOCKET_DEFAULT ranks, setup() */
}

static int setup(void)
{
    if (G.o.shuffle)
        shuffle_setup(G.o.shuffle_seed);
    for (unsigned i = 0; i < G.o.functions; i++) {
        G.fn_id[i] = mw_fn_id(FN_MODELS[i].name);
        G.is_send[i] =
            G.fn_id[i] == MW_ID_Isend || G.fn_id[i] == MW_ID_Send || G.fn_id[i] == MW_ID_Sendrecv;
        if (!G.fn_id[i]) {
            fprintf(stderr, "mpiwatch-loadgen: %s is not in the function table\n",
                    FN_MODELS[i].name);
            return -1;
        }
    }
    /* The running totals list functions in increasing id (the collector checks the order). */
    for (unsigned i = 0; i < G.o.functions; i++) {
        unsigned j = i;
        for (; j > 0 && G.fn_id[G.by_id[j - 1]] > G.fn_id[i]; j--)
            G.by_id[j] = G.by_id[j - 1];
        G.by_id[j] = i;
    }
    for (unsigned j = 0; j < G.o.functions; j++) {
        G.rank_pos[G.by_id[j]] = j;
        G.total_fn[j] = G.fn_id[G.by_id[j]];
    }
    G.window_ns = (uint64_t)llround(1e9 / G.o.rate);
    mw_grid_init(&G.grid, G.window_ns);
    if (rs_setup() != 0) {
        fprintf(stderr, "mpiwatch-loadgen: out of memory\n");
        return -1;
    }
    G.per_node = (G.o.ranks + G.o.nodes - 1) / G.o.nodes;
    unsigned l3s = LG_PACKAGES * LG_L3_PER_PKG;
    G.cores_per_l3 = (G.per_node + l3s - 1) / l3s;
    if (G.cores_per_l3 > LG_MAX_CORES_PER_L3)
        G.cores_per_l3 = LG_MAX_CORES_PER_L3;
    size_t objects = LG_PACKAGES + l3s + (size_t)3 * node_cores();
    G.topo = malloc(objects * sizeof *G.topo);
    G.topo_ptr = malloc(objects * sizeof *G.topo_ptr);
    G.buf_cap = MW_MAX_MESSAGE_BYTES;
    G.buf = malloc(G.buf_cap);
    size_t nr = G.o.rank_count;
    G.seq = calloc(nr, sizeof *G.seq);
    G.calls = calloc(nr, sizeof *G.calls);
    G.rt_calls = calloc(nr * G.o.functions, sizeof *G.rt_calls);
    G.rt_ns = calloc(nr * G.o.functions, sizeof *G.rt_ns);
    G.rt_bytes = calloc(nr * G.o.functions, sizeof *G.rt_bytes);
    /* The ranks in contiguous blocks over the endpoints; each block's sockets: --sockets M
     * each, or one per LG_RANKS_PER_SOCKET_DEFAULT ranks of the block. */
    unsigned ne = G.o.n_endpoints;
    G.n_socks = 0;
    for (unsigned e = 0; e <= ne; e++) {
        G.ep_first[e] = G.o.rank_first + (unsigned)((uint64_t)G.o.rank_count * e / ne);
        if (e == 0)
            continue;
        unsigned block = G.ep_first[e] - G.ep_first[e - 1];
        unsigned m = G.o.sockets
                         ? G.o.sockets
                         : (block + LG_RANKS_PER_SOCKET_DEFAULT - 1) / LG_RANKS_PER_SOCKET_DEFAULT;
        if (m > block)
            m = block;
        if (m == 0)
            m = 1;
        G.ep_sock[e - 1] = G.n_socks;
        G.n_socks += m;
    }
    G.ep_sock[ne] = G.n_socks;
    G.socks = calloc(G.n_socks, sizeof *G.socks);
    if (!G.buf || !G.seq || !G.calls || !G.socks || !G.topo || !G.topo_ptr || !G.rt_calls ||
        !G.rt_ns || !G.rt_bytes) {
        fprintf(stderr, "mpiwatch-loadgen: out of memory\n");
        return -1;
    }
    G.ctx = zmq_ctx_new();
    if (!G.ctx) {
        fprintf(stderr, "mpiwatch-loadgen: zmq_ctx_new: %s\n", zmq_strerror(errno));
        return -1;
    }
    /* One I/O thread per socket up to 4: encoding and I/O then overlap on several cores. */
    zmq_ctx_set(G.ctx, ZMQ_IO_THREADS, G.n_socks < 4 ? (int)G.n_socks : 4);
    for (unsigned i = 0, e = 0; i < G.n_socks; i++) {
        while (i >= G.ep_sock[e + 1])
            e++;
        void *s = zmq_socket(G.ctx, ZMQ_PUSH);
        /* Never drop: a huge HWM and blocking sends. Linger long enough to deliver the
         * queue at exit, but do not hang forever when no collector ever shows up. */
        int hwm = 10 * 1000 * 1000, linger = 60000;
        if (!s || zmq_setsockopt(s, ZMQ_SNDHWM, &hwm, sizeof hwm) != 0 ||
            zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
            zmq_connect(s, G.o.endpoint[e]) != 0) {
            fprintf(stderr, "mpiwatch-loadgen: socket for %s: %s\n", G.o.endpoint[e],
                    zmq_strerror(errno));
            if (s)
                zmq_close(s);
            return -1;
        }
        G.socks[i] = s;
    }
    if (G.o.trace) {
        G.traces = calloc(G.o.trace, sizeof *G.traces);
        if (!G.traces) {
            fprintf(stderr, "mpiwatch-loadgen: out of memory\n");
            return -1;
        }
        for (unsigned t = 0; t < G.o.trace; t++)
            if (trace_build(t, &G.traces[t]) != 0)
                return -1;
    }
    return 0;
}

static void sleep_until_realtime(uint64_t t)
{
    struct timespec ts = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
    while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static int write_totals_json(const char *path, uint64_t windows, double elapsed)
{
    char err[512];
    mw_afile_t *af = mw_afile_open(path, err, sizeof err);
    if (!af) {
        fprintf(stderr, "mpiwatch-loadgen: %s\n", err);
        return -1;
    }
    FILE *f = mw_afile_stream(af);
    fprintf(f,
            "{\"job\": \"%s\", \"ranks\": %u, \"rank_first\": %u, \"rank_count\": %u, "
            "\"nodes\": %u, \"window_ns\": %" PRIu64 ", \"windows\": %" PRIu64
            ", \"hellos\": %" PRIu64 ", \"samples\": %" PRIu64 ", \"byes\": %" PRIu64
            ", \"function_summaries\": %" PRIu64 ", \"bytes\": %" PRIu64
            ", \"peer_messages\": %" PRIu64 ", \"elapsed_s\": %.3f,\n \"traced_calls\": %" PRIu64
            ", \"trace_records\": %" PRIu64 ", \"trace_bytes\": %" PRIu64
            ",\n \"run\": {\"first_window_ns\": %" PRIu64 ", \"last_batch_ns\": %" PRIu64
            ", \"sample_bytes\": %" PRIu64 ", \"achieved_rate\": %.3f, \"late_windows\": %" PRIu64
            ", \"cpu_samples_s\": %.3f, \"variants\": %u, \"aggregators\": %u, "
            "\"aggregator_setup_s\": %.3f, \"cached_partial_bytes\": %" PRIu64
            "},\n \"functions\": {",
            G.o.job, G.o.ranks, G.o.rank_first, G.o.rank_count, G.o.nodes, G.window_ns, windows,
            G.hellos, G.samples, G.byes, G.fn_summaries, G.bytes_sent, G.peer_messages, elapsed,
            G.traced_calls, G.trace_records, G.trace_bytes, G.first_window_ns, G.last_batch_ns,
            G.sample_bytes, G.achieved, G.late_windows, G.cpu_windows, C.v, G.o.aggregators,
            AG.build_s, AG.partial_bytes);
    for (unsigned i = 0; i < G.o.functions; i++)
        fprintf(f,
                "%s\n  \"%s\": {\"count\": %" PRIu64 ", \"time_ns\": %" PRIu64
                ", \"bytes\": %" PRIu64 "}",
                i ? "," : "", FN_MODELS[i].name, G.tot[i].count, G.tot[i].time_ns, G.tot[i].bytes);
    fprintf(f, "}");
    /* --regions, --sites: each one's totals over every rank and window. */
    fprintf(f, ",\n \"regions\": {");
    for (unsigned i = 0; i < G.o.regions; i++)
        fprintf(f,
                "%s\n  \"%s\": {\"count\": %" PRIu64 ", \"incl_ns\": %" PRIu64
                ", \"excl_ns\": %" PRIu64 ", \"mpi_ns\": %" PRIu64 "}",
                i ? "," : "", RS.region_name[i], RS.rtot[i].count, RS.rtot[i].incl_ns,
                RS.rtot[i].excl_ns, RS.rtot[i].mpi_ns);
    fprintf(f, "},\n \"sites\": [");
    for (unsigned j = 0; j < G.o.sites; j++)
        fprintf(f,
                "%s\n  {\"function\": \"%s\", \"file\": \"loadgen_app.c\", \"line\": %u, "
                "\"fn\": \"%s\", \"count\": %" PRIu64 ", \"ns\": %" PRIu64 ", \"bytes\": %" PRIu64
                ", \"max_ns\": %" PRIu64 "}",
                j ? "," : "", RS.site_fn_name[j], 100 + j, FN_MODELS[j % G.o.functions].name,
                RS.stot[j].count, RS.stot[j].ns, RS.stot[j].bytes, RS.stot[j].max_ns);
    fprintf(f, "]}\n");
    if (mw_afile_commit(af, err, sizeof err) != 0) {
        fprintf(stderr, "mpiwatch-loadgen: %s\n", err);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int rc = parse_args(argc, argv, &G.o);
    if (rc)
        return rc > 0 ? 0 : 2;
    char jobbuf[64];
    if (!G.o.job) {
        snprintf(jobbuf, sizeof jobbuf, "loadgen-%ld-%" PRIu64, (long)getpid(), G.o.seed);
        G.o.job = jobbuf;
    }
    if (setup() != 0)
        return 1;

    uint64_t nwin = (uint64_t)llround(G.o.seconds * G.o.rate);
    if (!nwin)
        nwin = 1;
    uint64_t t0 = now_ns(CLOCK_MONOTONIC);
    /* Cached encodings, unless an option needs per-sample content the cache does not hold;
     * no more variants than windows, and within LG_CACHE_BUDGET (an estimate of a variant's
     * size from its functions). */
    C.v = G.o.variants < nwin ? G.o.variants : (unsigned)nwin;
    if (G.o.trace || G.o.regions || G.o.sites || G.o.peer_fn || G.o.shuffle)
        C.v = 0;
    /* about 2 KB of density, occupancy and peers, 80 bytes and 3 totals per function */
    size_t per_var = sizeof(lg_variant_t) + 2400 + (size_t)G.o.functions * (24 + 80);
    while (C.v > 1 && (size_t)C.v * G.o.rank_count * per_var > LG_CACHE_BUDGET)
        C.v--;
    if (G.o.aggregators && !C.v) {
        fprintf(stderr, "mpiwatch-loadgen: --aggregators needs cached samples (--variants)\n");
        return 2;
    }
    if (cache_setup() != 0)
        return 1;
    double cache_s = (double)(now_ns(CLOCK_MONOTONIC) - t0) * 1e-9;
    if (agg_setup() != 0)
        return 1;
    const unsigned r0 = G.o.rank_first, r1 = G.o.rank_first + G.o.rank_count;
    if (G.o.aggregators) {
        if (agg_send_hellos() != 0)
            return 1;
    } else {
        for (unsigned r = r0; r < r1; r++)
            if (send_hello(r) != 0)
                return 1;
    }

    /* The first window is the one after the hellos; window k is sent when it closes, at
     * (k + 1) * window_ns, like the library does. */
    uint64_t k0 = mw_grid_index(&G.grid, now_ns(CLOCK_REALTIME)) + 1;
    uint64_t max_lag = 0, sum_lag = 0, late_windows = 0;
    uint64_t send_ns_max = 0, send_ns_sum = 0, last_done = 0;
    double cpu0 = cpu_s(), cpu_windows = 0;
    uint64_t bytes0 = G.bytes_sent;
    for (uint64_t w = 0; w < nwin; w++) {
        uint64_t k = k0 + w, due = mw_grid_start(&G.grid, k + 1);
        sleep_until_realtime(due);
        uint64_t start = now_ns(CLOCK_REALTIME);
        if (G.o.aggregators && agg_send_window(k, w) != 0)
            return 1;
        for (unsigned r = r0; r < r1 && !G.o.aggregators; r++)
            if ((C.v ? send_cached(r, k, w) : send_sample(r, k, w)) != 0)
                return 1;
        for (unsigned r = r0; w == 0 && r < r1 && r - r0 < G.o.hello_again; r++)
            if (send_hello(r) != 0) /* as after a reconnection: the same hello again */
                return 1;
        uint64_t done = now_ns(CLOCK_REALTIME);
        last_done = done;
        /* Behind schedule: how far past its deadline the batch of this window finished
         * beyond one window length (what the collector sees as a rank sending late). */
        uint64_t lag = start > due ? start - due : 0;
        sum_lag += lag;
        if (lag > max_lag)
            max_lag = lag;
        if (done > due + G.window_ns)
            late_windows++;
        send_ns_sum += done - start;
        if (done - start > send_ns_max)
            send_ns_max = done - start;
    }
    cpu_windows = cpu_s() - cpu0;
    G.sample_bytes = G.bytes_sent - bytes0;
    if (G.o.aggregators) {
        if (agg_send_byes(nwin) != 0)
            return 1;
    } else {
        for (unsigned r = r0; r < r1; r++)
            if (send_bye(r, nwin) != 0)
                return 1;
    }
    /* Achieved rate: windows over the time from the start of the first window to the end of
     * the last batch (nwin windows should take nwin window lengths plus one batch). */
    double span = (double)(last_done - mw_grid_start(&G.grid, k0)) * 1e-9;
    G.first_window_ns = mw_grid_start(&G.grid, k0);
    G.last_batch_ns = last_done;
    G.achieved = (double)nwin / span;
    G.late_windows = late_windows;
    G.cpu_windows = cpu_windows;
    for (unsigned i = 0; i < G.n_socks; i++)
        zmq_close(G.socks[i]);
    zmq_ctx_term(G.ctx); /* waits (up to the linger) until every queued message is out */
    uint64_t t_end = now_ns(CLOCK_MONOTONIC);

    double elapsed = (double)(t_end - t0) * 1e-9;
    fprintf(stderr,
            "loadgen: job %s ranks %u (emulated %u..%u) nodes %u endpoints %u sockets %u window "
            "%.3f ms functions %u seed %" PRIu64 "\n"
            "loadgen: sent hellos %" PRIu64 " samples %" PRIu64 " byes %" PRIu64
            " function_summaries %" PRIu64 " bytes %" PRIu64 " peer_messages %" PRIu64 "\n"
            "loadgen: windows %" PRIu64
            " in %.3f s (run %.3f s with hellos and delivery): achieved %.2f "
            "windows/s for %.2f requested, %.0f samples/s, %.0f function summaries/s\n"
            "loadgen: behind schedule: window start lag max %.3f ms mean %.3f ms; batch send "
            "time max %.3f ms mean %.3f ms; %" PRIu64 " windows finished more than a window "
            "late\n",
            G.o.job, G.o.ranks, r0, r1 - 1, G.o.nodes, G.o.n_endpoints, G.n_socks,
            (double)G.window_ns * 1e-6, G.o.functions, G.o.seed, G.hellos, G.samples, G.byes,
            G.fn_summaries, G.bytes_sent, G.peer_messages, nwin, span, elapsed, (double)nwin / span,
            G.o.rate, (double)G.samples / span, (double)G.fn_summaries / span,
            (double)max_lag * 1e-6, (double)sum_lag * 1e-6 / (double)nwin,
            (double)send_ns_max * 1e-6, (double)send_ns_sum * 1e-6 / (double)nwin, late_windows);
    fprintf(stderr,
            "loadgen: cpu %.3f s for the samples (%.3f us a sample, user + system, all "
            "threads), %.3f s in all\n",
            cpu_windows, G.samples ? cpu_windows * 1e6 / (double)G.samples : 0.0, cpu_s());
    if (C.v)
        fprintf(stderr,
                "loadgen: cached %u samples per rank (%.1f MB), built and checked in %.3f s\n", C.v,
                (double)(C.bytes + (size_t)G.o.rank_count * C.v * sizeof(lg_variant_t)) / 1e6,
                cache_s);
    else
        fprintf(stderr, "loadgen: no cached samples: every sample encoded by protobuf-c\n");
    if (G.o.aggregators)
        fprintf(stderr,
                "loadgen: emulated %u aggregators: %u cached partials each (%.1f MB), built by "
                "the aggregator code and checked in %.3f s; sent %" PRIu64 " partials, %" PRIu64
                " AggStates\n",
                G.o.aggregators, C.v, (double)AG.partial_bytes / 1e6, AG.build_s,
                nwin * G.o.aggregators, AG.aggstates);
    if (G.o.trace)
        fprintf(stderr,
                "loadgen: traces %u built; traced calls %" PRIu64 " records %" PRIu64
                " bytes %" PRIu64 " (%.2f bytes per call)\n",
                G.o.trace, G.traced_calls, G.trace_records, G.trace_bytes,
                G.traced_calls ? (double)G.trace_bytes / (double)G.traced_calls : 0.0);
    for (unsigned i = 0; i < G.o.functions; i++)
        fprintf(stderr,
                "loadgen: total %s count=%" PRIu64 " time_ns=%" PRIu64 " bytes=%" PRIu64 "\n",
                FN_MODELS[i].name, G.tot[i].count, G.tot[i].time_ns, G.tot[i].bytes);
    if (G.o.totals_json && write_totals_json(G.o.totals_json, nwin, elapsed) != 0)
        return 1;
    return 0;
}
