/* topo-synth: a synthetic recording for the topology and matrix views, with placement,
 * hardware, per-peer pairs and time steps of exactly known content.
 *
 *   topo-synth [--ranks N] [--nodes K] [--packages P] [--l3 L] [--cores C] [--pus U]
 *              [--partners M] [--windows W] [--steps S] [--no-hardware] [--quiet] OUT.mpiw
 *
 * The job has N ranks on K nodes in blocks of N / K (rank r on node r / (N / K)); every node
 * has P packages with L L3 caches each, C cores per L3 and U PUs per core (PU OS indices in
 * that order). A node's local rank l is bound to the first PU of core l when the node has a
 * core per rank, else to PU l. --no-hardware leaves JobInfo.nodes empty (an old recording:
 * the viewer falls back to one plane per host).
 *
 * Window w (0-based) holds, for every rank r and each of the first M offsets of
 * (+1, -1, +N/K, -N/K, +2N/K, -2N/K) (modulo N, equal destinations merged), a pair (r, d) of
 * messages 1 + (r + d + w) % 5 and bytes messages * 1024 * (1 + offset number); on top the
 * "known pair" (0, N/K + 1) gets 1000 more messages and 1,000,000 more bytes in every window,
 * so it is the largest pair of every window. Step s (numbered from 1) holds the ring pairs
 * (r, r + 1 mod N) with s messages of 100 * s bytes each.
 *
 * The JSON description on stdout gives the layout and, per window, the intra- and inter-node
 * pair counts and totals the viewer must show (--quiet: only the summary).
 *
 * DESIGN: the file is written directly in the recording format (docs/recording.md: header,
 * start, job, windows and steps, the job again at the end) without index frames; the reader
 * finds windows by reading forward, as it does after the last index of any file. The
 * collector's writer has no step record yet, which is why this does not go through it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mw_proto.h"
#include "mw_recording.h"

#define REAL0 1700000000000000000ull
#define WINDOW_NS 100000000ull

static FILE *out;

static int put_record(Mpiwatch__Record *rec)
{
    size_t n = mpiwatch__record__get_packed_size(rec);
    uint8_t *p = malloc(n ? n : 1);
    if (!p)
        return -1;
    mpiwatch__record__pack(rec, p);
    unsigned char h[MW_REC_FRAME_HEADER_BYTES];
    mw_rec_put_frame_header(h, MW_REC_TAG_FRAME, (uint32_t)n, mw_rec_crc(0, p, n));
    int ok = fwrite(h, 1, sizeof h, out) == sizeof h && fwrite(p, 1, n, out) == n;
    free(p);
    return ok ? 0 : -1;
}

typedef struct {
    uint32_t *src, *dst;
    uint64_t *msg, *bytes;
    size_t n, cap;
} pairs_t;

static void pairs_add(pairs_t *p, uint32_t s, uint32_t d, uint64_t m, uint64_t b)
{
    for (size_t i = p->n; i-- > 0 && p->src[i] == s;)
        if (p->dst[i] == d) {
            p->msg[i] += m;
            p->bytes[i] += b;
            return;
        }
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 1024;
        p->src = realloc(p->src, p->cap * sizeof *p->src);
        p->dst = realloc(p->dst, p->cap * sizeof *p->dst);
        p->msg = realloc(p->msg, p->cap * sizeof *p->msg);
        p->bytes = realloc(p->bytes, p->cap * sizeof *p->bytes);
        if (!p->src || !p->dst || !p->msg || !p->bytes) {
            fprintf(stderr, "topo-synth: out of memory\n");
            exit(1);
        }
    }
    p->src[p->n] = s;
    p->dst[p->n] = d;
    p->msg[p->n] = m;
    p->bytes[p->n] = b;
    p->n++;
}

int main(int argc, char **argv)
{
    uint32_t N = 32, K = 4, P = 2, L3 = 1, C = 4, U = 2, M = 6, W = 4, S = 3;
    int hardware = 1, quiet = 0;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        uint32_t *v = NULL;
        if (!strcmp(a, "--ranks"))
            v = &N;
        else if (!strcmp(a, "--nodes"))
            v = &K;
        else if (!strcmp(a, "--packages"))
            v = &P;
        else if (!strcmp(a, "--l3"))
            v = &L3;
        else if (!strcmp(a, "--cores"))
            v = &C;
        else if (!strcmp(a, "--pus"))
            v = &U;
        else if (!strcmp(a, "--partners"))
            v = &M;
        else if (!strcmp(a, "--windows"))
            v = &W;
        else if (!strcmp(a, "--steps"))
            v = &S;
        else if (!strcmp(a, "--no-hardware"))
            hardware = 0;
        else if (!strcmp(a, "--quiet"))
            quiet = 1;
        else if (a[0] != '-' && !path)
            path = a;
        else {
            fprintf(stderr, "topo-synth: unknown argument %s\n", a);
            return 2;
        }
        if (v) {
            if (++i >= argc) {
                fprintf(stderr, "topo-synth: %s needs a value\n", a);
                return 2;
            }
            *v = (uint32_t)strtoul(argv[i], NULL, 10);
        }
    }
    if (!path || !N || !K || N % K || !P || !L3 || !C || !U || M > 6) {
        fprintf(stderr, "topo-synth: bad arguments (N must be a multiple of K, M <= 6)\n");
        return 2;
    }
    uint32_t rpn = N / K, cores = P * L3 * C, npus = cores * U;
    if (rpn > npus) {
        fprintf(stderr, "topo-synth: %u ranks per node but only %u PUs\n", rpn, npus);
        return 2;
    }
    out = fopen(path, "wb");
    if (!out) {
        perror(path);
        return 1;
    }
    unsigned char hdr[MW_REC_HEADER_BYTES];
    mw_rec_put_header(hdr);
    fwrite(hdr, 1, sizeof hdr, out);

    uint64_t first = REAL0 / WINDOW_NS, mono = 1000000000ull;
    Mpiwatch__Record rec = MPIWATCH__RECORD__INIT;
    Mpiwatch__RecordStart st = MPIWATCH__RECORD_START__INIT;
    st.collector_version = "topo-synth";
    st.proto_version = MW_PROTO_VERSION;
    st.function_table_hash = mw_fn_table_hash();
    rec.mono_ns = mono;
    rec.real_ns = REAL0;
    rec.body_case = MPIWATCH__RECORD__BODY_START;
    rec.start = &st;
    if (put_record(&rec) < 0)
        goto fail;

    /* The job. */
    Mpiwatch__JobInfo job = MPIWATCH__JOB_INFO__INIT;
    job.job = "topo-synth";
    job.program = "halo3d";
    job.mpi_library = "synthetic";
    job.size = N;
    job.window_ns = WINDOW_NS;
    job.subslots = 16;
    job.duration_bins = 32;
    job.function_table_hash = mw_fn_table_hash();
    job.function_count = MW_FN_COUNT - 1;
    job.state = "running";
    char **hosts = calloc(K, sizeof *hosts);
    Mpiwatch__NodeTopology **nodes = calloc(K, sizeof *nodes);
    Mpiwatch__TopoObject *objs = calloc((size_t)K * (P + P * L3 + cores + npus), sizeof *objs);
    Mpiwatch__TopoObject **objp = calloc((size_t)K * (P + P * L3 + cores + npus), sizeof *objp);
    Mpiwatch__RankInfo *ri = calloc(N, sizeof *ri);
    Mpiwatch__RankInfo **rip = calloc(N, sizeof *rip);
    uint32_t *pus = calloc(N, sizeof *pus);
    if (!hosts || !nodes || !objs || !objp || !ri || !rip || !pus)
        goto fail;
    size_t no = 0;
    for (uint32_t k = 0; k < K; k++) {
        hosts[k] = malloc(32);
        snprintf(hosts[k], 32, "node%03u", k);
        nodes[k] = malloc(sizeof **nodes);
        mpiwatch__node_topology__init(nodes[k]);
        nodes[k]->node = hosts[k];
        nodes[k]->objects = objp + no;
        size_t base = no;
        uint32_t l3i = 0, corei = 0, pui = 0;
        for (uint32_t p = 0; p < P; p++) {
            size_t pi = no;
            mpiwatch__topo_object__init(&objs[no]);
            objs[no].type = 1;
            objs[no].parent = -1;
            objs[no].logical = p;
            objs[no].os_index = p;
            objp[no] = &objs[no];
            no++;
            for (uint32_t l = 0; l < L3; l++) {
                size_t li = no;
                mpiwatch__topo_object__init(&objs[no]);
                objs[no].type = 2;
                objs[no].parent = (int32_t)(pi - base);
                objs[no].logical = l3i++;
                objp[no] = &objs[no];
                no++;
                for (uint32_t c = 0; c < C; c++) {
                    size_t ci = no;
                    mpiwatch__topo_object__init(&objs[no]);
                    objs[no].type = 3;
                    objs[no].parent = (int32_t)(li - base);
                    objs[no].logical = corei;
                    objs[no].os_index = corei;
                    corei++;
                    objp[no] = &objs[no];
                    no++;
                    for (uint32_t u = 0; u < U; u++) {
                        mpiwatch__topo_object__init(&objs[no]);
                        objs[no].type = 4;
                        objs[no].parent = (int32_t)(ci - base);
                        objs[no].logical = pui;
                        objs[no].os_index = pui;
                        pui++;
                        objp[no] = &objs[no];
                        no++;
                    }
                }
            }
        }
        nodes[k]->n_objects = no - base;
    }
    job.hosts = hosts;
    job.n_hosts = K;
    if (hardware) {
        job.nodes = nodes;
        job.n_nodes = K;
    }
    for (uint32_t r = 0; r < N; r++) {
        mpiwatch__rank_info__init(&ri[r]);
        uint32_t l = r % rpn;
        uint32_t pu = rpn <= cores ? l * U : l;
        ri[r].rank = r;
        ri[r].host = r / rpn;
        ri[r].node = r / rpn;
        ri[r].pid = 1000 + r;
        ri[r].pu = (int32_t)pu;
        ri[r].core = (int32_t)(pu / U);
        ri[r].package = (int32_t)(pu / U / (L3 * C));
        ri[r].l3 = (int32_t)(pu / U / C);
        ri[r].bound = 1;
        ri[r].numa = ri[r].package;
        pus[r] = pu;
        ri[r].pus = &pus[r];
        ri[r].n_pus = 1;
        rip[r] = &ri[r];
    }
    job.ranks = rip;
    job.n_ranks = N;
    rec.body_case = MPIWATCH__RECORD__BODY_JOB;
    rec.job = &job;
    rec.mono_ns = ++mono;
    if (put_record(&rec) < 0)
        goto fail;

    const int64_t offs[6] = {
        1, -1, (int64_t)rpn, -(int64_t)rpn, 2 * (int64_t)rpn, -2 * (int64_t)rpn};
    uint32_t known_dst = (rpn + 1) % N;
    if (!quiet)
        printf("{\"ranks\":%u,\"nodes\":%u,\"ranks_per_node\":%u,\"hardware\":%s,"
               "\"first_window\":%" PRIu64 ",\"window_ns\":%llu,\"known_pair\":[0,%u],"
               "\"windows\":[",
               N, K, rpn, hardware ? "true" : "false", first, WINDOW_NS, known_dst);
    pairs_t pr = {0};
    for (uint32_t w = 0; w < W; w++) {
        pr.n = 0;
        for (uint32_t r = 0; r < N; r++)
            for (uint32_t o = 0; o < M; o++) {
                uint32_t d = (uint32_t)((((int64_t)r + offs[o]) % (int64_t)N + N) % N);
                if (d == r)
                    continue;
                uint64_t m = 1 + (r + d + w) % 5;
                pairs_add(&pr, r, d, m, m * 1024 * (1 + o));
            }
        pairs_add(&pr, 0, known_dst, 1000, 1000000);
        Mpiwatch__Window win = MPIWATCH__WINDOW__INIT;
        win.index = first + w;
        win.window_ns = WINDOW_NS;
        win.subslots = 16;
        win.duration_bins = 32;
        win.ranks_reporting = N;
        win.mpi_time_ns = (uint64_t)N * WINDOW_NS / 4;
        win.pair_src = pr.src;
        win.pair_dst = pr.dst;
        win.pair_messages = pr.msg;
        win.pair_bytes = pr.bytes;
        win.n_pair_src = win.n_pair_dst = win.n_pair_messages = win.n_pair_bytes = pr.n;
        rec.body_case = MPIWATCH__RECORD__BODY_WINDOW;
        rec.window = &win;
        rec.mono_ns = mono + (w + 1) * WINDOW_NS;
        rec.real_ns = REAL0 + (w + 1) * WINDOW_NS;
        if (put_record(&rec) < 0)
            goto fail;
        if (!quiet) {
            uint64_t intra = 0, inter = 0, msgs = 0, bytes = 0, km = 0, kb = 0, maxm = 0,
                     minm = UINT64_MAX, maxb = 0, minb = UINT64_MAX;
            for (size_t i = 0; i < pr.n; i++) {
                if (pr.src[i] / rpn == pr.dst[i] / rpn)
                    intra++;
                else
                    inter++;
                msgs += pr.msg[i];
                bytes += pr.bytes[i];
                if (pr.src[i] == 0 && pr.dst[i] == known_dst) {
                    km = pr.msg[i];
                    kb = pr.bytes[i];
                }
                maxm = pr.msg[i] > maxm ? pr.msg[i] : maxm;
                minm = pr.msg[i] < minm ? pr.msg[i] : minm;
                maxb = pr.bytes[i] > maxb ? pr.bytes[i] : maxb;
                minb = pr.bytes[i] < minb ? pr.bytes[i] : minb;
            }
            printf("%s{\"index\":%" PRIu64 ",\"pairs\":%zu,\"intra\":%" PRIu64 ",\"inter\":%" PRIu64
                   ",\"messages\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"known_messages\":%" PRIu64
                   ",\"known_bytes\":%" PRIu64 ",\"min_messages\":%" PRIu64
                   ",\"max_messages\":%" PRIu64 ",\"min_bytes\":%" PRIu64 ",\"max_bytes\":%" PRIu64
                   "}",
                   w ? "," : "", first + w, pr.n, intra, inter, msgs, bytes, km, kb, minm, maxm,
                   minb, maxb);
        }
    }
    for (uint32_t s = 1; s <= S; s++) {
        pr.n = 0;
        for (uint32_t r = 0; r < N; r++)
            pairs_add(&pr, r, (r + 1) % N, s, 100ull * s * s);
        Mpiwatch__Step stp = MPIWATCH__STEP__INIT;
        stp.step = s;
        stp.start_ns = REAL0 + (s - 1) * WINDOW_NS / 2;
        stp.end_ns = REAL0 + s * WINDOW_NS / 2;
        stp.ranks = N;
        stp.mpi_time_ns = (uint64_t)N * WINDOW_NS / 8;
        stp.pair_src = pr.src;
        stp.pair_dst = pr.dst;
        stp.pair_messages = pr.msg;
        stp.pair_bytes = pr.bytes;
        stp.n_pair_src = stp.n_pair_dst = stp.n_pair_messages = stp.n_pair_bytes = pr.n;
        rec.body_case = MPIWATCH__RECORD__BODY_STEP;
        rec.step = &stp;
        rec.mono_ns = mono + W * WINDOW_NS + s;
        if (put_record(&rec) < 0)
            goto fail;
    }
    job.state = "complete";
    rec.body_case = MPIWATCH__RECORD__BODY_JOB;
    rec.job = &job;
    rec.mono_ns = mono + W * WINDOW_NS + S + 10;
    if (put_record(&rec) < 0)
        goto fail;
    if (fclose(out) != 0)
        goto fail;
    if (!quiet)
        printf("],\"steps\":%u}\n", S);
    else
        printf("{\"ranks\":%u,\"nodes\":%u,\"windows\":%u,\"steps\":%u}\n", N, K, W, S);
    return 0;
fail:
    fprintf(stderr, "topo-synth: cannot write %s\n", path);
    return 1;
}
