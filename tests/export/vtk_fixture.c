/* vtk_fixture.c: writes a small recording with known placement, hardware and time steps, for
 * the tests of mpiwatch-export --format vtk (vtk.sh).
 *
 *   vtk_fixture OUT.mpiw full|plain|empty
 *
 * full   a job of 16 ranks on three nodes: node 0 and 1 describe their hardware (2 packages,
 *        each 1 L3, 4 cores, 2 PUs per core: 16 PUs per node), node 2 does not (its rank goes
 *        on a grid); rank 15 never said hello (the plane of unplaced ranks). Rank 5 knows
 *        only its core, rank 6 nothing of its placement (a loose rank). The job, host and
 *        node names hold XML's special characters. Windows 100, 101, 103 (a gap) and 104,
 *        time steps 1 to 3, all with pairs within and across nodes.
 * plain  the same job and windows as a recording from before the topology issue: hosts only,
 *        no nodes, no steps.
 * empty  a job and no window.
 *
 * The test could not wait for the load generator and the collector to fill JobInfo.nodes and
 * write Step records, and needs exact names and numbers besides: the recording is written
 * frame by frame with the same functions as the collector's writer. The expected figures go
 * to OUT.mpiw.expect.json.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mw_proto.h"
#include "mw_recording.h"

#define N_RANKS 16u
#define N_NODES 3u
#define PUS_PER_NODE 16u
#define WINDOW_NS 100000000ull

static const char JOB_NAME[] = "vtk <test> & \"quotes\" -- x";
static const char *const NODE_NAMES[N_NODES] = {"n<0>&a", "node-1", "node \"2\""};

static FILE *out;

static void frame(Mpiwatch__Record *rec)
{
    size_t len = protobuf_c_message_get_packed_size(&rec->base);
    unsigned char *buf = malloc(len ? len : 1), hdr[MW_REC_FRAME_HEADER_BYTES];
    if (!buf)
        exit(1);
    protobuf_c_message_pack(&rec->base, buf);
    mw_rec_put_frame_header(hdr, MW_REC_TAG_FRAME, (uint32_t)len, mw_rec_crc(0, buf, len));
    fwrite(hdr, 1, sizeof hdr, out);
    fwrite(buf, 1, len, out);
    free(buf);
}

/* One hardware object whose logical and OS index are the same number. */
static void topo_object(Mpiwatch__TopoObject *o, uint32_t type, int32_t parent, uint32_t index)
{
    mpiwatch__topo_object__init(o);
    o->type = type;
    o->parent = parent;
    o->logical = index;
    o->os_index = index;
}

/* The node of a rank: 0..6 on node 0, 7..13 on node 1, 14 on node 2, 15 unknown. */
static uint32_t node_of(uint32_t r)
{
    return r < 7 ? 0 : r < 14 ? 1 : 2;
}

/* The pairs of one frame: rank r sends to r + 1 and to r + 7 (wrapping), with figures that
 * depend on the frame so that every frame's sums differ. */
typedef struct {
    uint32_t src[2 * N_RANKS], dst[2 * N_RANKS];
    uint64_t msg[2 * N_RANKS], bytes[2 * N_RANKS];
    size_t n;
} pairs_t;

static void make_pairs(pairs_t *p, uint64_t seed)
{
    p->n = 0;
    for (uint32_t r = 0; r < N_RANKS; r++)
        for (uint32_t k = 0; k < 2; k++) {
            p->src[p->n] = r;
            p->dst[p->n] = (r + (k ? 7 : 1)) % N_RANKS;
            p->msg[p->n] = 1 + (r + seed) % 5;
            p->bytes[p->n] = 1000 * (r + 1) + seed * 7 + k;
            p->n++;
        }
}

static void expect_pairs(FILE *e, const pairs_t *p)
{
    fputc('[', e);
    for (size_t i = 0; i < p->n; i++)
        fprintf(e, "%s[%u,%u,%llu,%llu]", i ? "," : "", p->src[i], p->dst[i],
                (unsigned long long)p->msg[i], (unsigned long long)p->bytes[i]);
    fputc(']', e);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: vtk_fixture OUT.mpiw full|plain|empty\n");
        return 2;
    }
    int full = strcmp(argv[2], "full") == 0, empty = strcmp(argv[2], "empty") == 0;
    out = fopen(argv[1], "wb");
    char epath[4096];
    snprintf(epath, sizeof epath, "%s.expect.json", argv[1]);
    FILE *e = fopen(epath, "w");
    if (!out || !e)
        return 1;
    unsigned char h[MW_REC_HEADER_BYTES];
    mw_rec_put_header(h);
    fwrite(h, 1, sizeof h, out);

    Mpiwatch__Record rec;
    Mpiwatch__RecordStart start;
    mpiwatch__record__init(&rec);
    mpiwatch__record_start__init(&start);
    start.proto_version = 1;
    rec.body_case = MPIWATCH__RECORD__BODY_START;
    rec.start = &start;
    frame(&rec);

    /* The job: hosts "" (the collector's unknown host) then one per node. */
    Mpiwatch__JobInfo job;
    mpiwatch__job_info__init(&job);
    job.job = (char *)JOB_NAME;
    job.size = N_RANKS;
    job.window_ns = WINDOW_NS;
    char *hosts[N_NODES + 1] = {""};
    for (uint32_t n = 0; n < N_NODES; n++)
        hosts[n + 1] = (char *)NODE_NAMES[n];
    job.hosts = hosts;
    job.n_hosts = N_NODES + 1;
    Mpiwatch__RankInfo ri[N_RANKS], *rip[N_RANKS];
    uint32_t pus[N_RANKS][2];
    for (uint32_t r = 0; r < N_RANKS - 1; r++) {
        mpiwatch__rank_info__init(&ri[r]);
        uint32_t n = node_of(r), slot = r - (n == 0 ? 0 : n == 1 ? 7 : 14);
        ri[r].rank = r;
        ri[r].host = n + 1;
        ri[r].node = n;
        ri[r].pu = (int32_t)(2 * slot); /* the first PU of core `slot` */
        ri[r].core = (int32_t)slot;
        ri[r].package = (int32_t)(slot / 4);
        ri[r].l3 = ri[r].package;
        pus[r][0] = 2 * slot; /* bound to the two PUs of its core */
        pus[r][1] = 2 * slot + 1;
        ri[r].pus = pus[r];
        ri[r].n_pus = 2;
        ri[r].bound = 1;
        rip[r] = &ri[r];
    }
    ri[5].pu = -1;                              /* only its core */
    ri[6].pu = ri[6].core = ri[6].package = -1; /* nothing: a loose rank ... */
    ri[6].n_pus = 0;                            /* ... not bound */
    ri[6].bound = 0;
    ri[7].pu = 1, ri[8].pu = 1, ri[8].core = 0; /* two ranks on one PU */
    job.ranks = rip;
    job.n_ranks = N_RANKS - 1;

    /* Hardware of nodes 0 and 1: package p, L3 p, cores 4p..4p+3, PUs 2c and 2c+1 (OS). */
    Mpiwatch__TopoObject obj[2][2 + 2 + 8 + PUS_PER_NODE], *objp[2][2 + 2 + 8 + PUS_PER_NODE];
    Mpiwatch__NodeTopology topo[N_NODES], *topop[N_NODES];
    for (uint32_t n = 0; n < N_NODES; n++) {
        mpiwatch__node_topology__init(&topo[n]);
        topo[n].node = (char *)NODE_NAMES[n];
        topop[n] = &topo[n];
        if (n == 2)
            continue;
        size_t k = 0;
        for (uint32_t p = 0; p < 2; p++) {
            size_t pk = k, l3;
            topo_object(&obj[n][k], 1, -1, p);
            k++;
            l3 = k;
            topo_object(&obj[n][k], 2, (int32_t)pk, p);
            k++;
            for (uint32_t c = 4 * p; c < 4 * p + 4; c++) {
                size_t ck = k;
                topo_object(&obj[n][k], 3, (int32_t)l3, c);
                k++;
                for (uint32_t u = 2 * c; u < 2 * c + 2; u++) {
                    topo_object(&obj[n][k], 4, (int32_t)ck, u);
                    k++;
                }
            }
        }
        for (size_t i = 0; i < k; i++)
            objp[n][i] = &obj[n][i];
        topo[n].objects = objp[n];
        topo[n].n_objects = k;
    }

    /* The first description knows no nodes yet; the last one, which the export uses, does. */
    rec.body_case = MPIWATCH__RECORD__BODY_JOB;
    rec.job = &job;
    frame(&rec);
    if (full) {
        job.nodes = topop;
        job.n_nodes = N_NODES;
    }

    fprintf(e, "{\"job\":\"vtk <test> & \\\"quotes\\\" -- x\",\"ranks\":%u,\"mode\":\"%s\"",
            N_RANKS, argv[2]);
    fprintf(e, ",\"planes\":%u,\"pu_boxes\":%u,\"hw_nodes\":%u", full ? N_NODES + 1 : N_NODES + 1,
            full ? 2 * PUS_PER_NODE : 0, full ? 2 : 0);
    fputs(",\"windows\":{", e);
    static const uint64_t windows[] = {100, 101, 103, 104};
    pairs_t p;
    Mpiwatch__Window w;
    for (size_t i = 0; !empty && i < sizeof windows / sizeof windows[0]; i++) {
        make_pairs(&p, windows[i]);
        mpiwatch__window__init(&w);
        w.index = windows[i];
        w.window_ns = WINDOW_NS;
        w.subslots = 4;
        w.ranks_reporting = N_RANKS - 1;
        w.ranks_missing = 1;
        w.pair_src = p.src, w.n_pair_src = p.n;
        w.pair_dst = p.dst, w.n_pair_dst = p.n;
        w.pair_messages = p.msg, w.n_pair_messages = p.n;
        w.pair_bytes = p.bytes, w.n_pair_bytes = p.n;
        rec.body_case = MPIWATCH__RECORD__BODY_WINDOW;
        rec.window = &w;
        frame(&rec);
        fprintf(e, "%s\"%llu\":", i ? "," : "", (unsigned long long)windows[i]);
        expect_pairs(e, &p);
        if (full && i == 1) { /* steps are closed between windows */
            Mpiwatch__Step s;
            for (uint64_t st = 1; st <= 3; st++) {
                make_pairs(&p, 1000 + st);
                mpiwatch__step__init(&s);
                s.step = st;
                s.start_ns = 100 * WINDOW_NS + (st - 1) * WINDOW_NS / 2;
                s.end_ns = s.start_ns + WINDOW_NS / 2;
                s.ranks = N_RANKS - 1;
                s.pair_src = p.src, s.n_pair_src = p.n;
                s.pair_dst = p.dst, s.n_pair_dst = p.n;
                s.pair_messages = p.msg, s.n_pair_messages = p.n;
                s.pair_bytes = p.bytes, s.n_pair_bytes = p.n;
                rec.body_case = MPIWATCH__RECORD__BODY_STEP;
                rec.step = &s;
                frame(&rec);
            }
        }
    }
    fputs("},\"steps\":{", e);
    for (uint64_t st = 1; full && st <= 3; st++) {
        make_pairs(&p, 1000 + st);
        fprintf(e, "%s\"%llu\":", st > 1 ? "," : "", (unsigned long long)st);
        expect_pairs(e, &p);
    }
    fputs("}}\n", e);

    job.state = "complete";
    rec.body_case = MPIWATCH__RECORD__BODY_JOB;
    rec.job = &job;
    frame(&rec);
    return fclose(out) != 0 || fclose(e) != 0;
}
