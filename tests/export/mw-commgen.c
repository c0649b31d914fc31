/* mw-commgen.c: writes recordings whose communicator definitions are crafted, for the tests of
 * mpiwatch-export --format otf2 on hostile input (comm_export.sh).
 *
 *   mw-commgen chain OUT.mpiw N   a 1-rank job with N communicators of size 1 whose ids ascend
 *                                 while each one's parent is the next id (a chain against the
 *                                 id order, as a job that duplicates its last duplicate may
 *                                 make); an MPI_Barrier on the deepest one (id 1000).
 *   mw-commgen cycle OUT.mpiw     a 1-rank job whose communicators 1000, 1001, 1002 are each
 *                                 other's parents (a cycle), 1003 a child of 1001 and 1004 a
 *                                 child of MPI_COMM_WORLD; an MPI_Barrier on 1003.
 *   mw-commgen badworld OUT.mpiw  a 2-rank job: communicator 1000 has a member of world rank 5,
 *                                 1001 two members of world rank 1, 1002 is sound (world 1 is
 *                                 rank 0, world 0 is rank 1), 1003 claims 3 members (its
 *                                 rank 0 is world 0). Rank 0 sends to rank 1 on 1001
 *                                 and on 1002, rank 1 receives both; rank 0 calls MPI_Barrier
 *                                 on 1000.
 *
 * Each window carries at most 20,000 definitions, with a trace of every rank.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mw_proto.h"
#include "mw_recording.h"
#include "mw_trace.h"

#define WINDOW_NS 100000000ull
#define START_NS 5000000000000ull
#define PER_WINDOW 20000u

typedef struct {
    uint64_t id, parent;
    uint32_t rank, size, world;
} def_t;

static FILE *out;

static int frame(Mpiwatch__Record *rec)
{
    size_t len = protobuf_c_message_get_packed_size(&rec->base);
    unsigned char *buf = malloc(len ? len : 1), hdr[MW_REC_FRAME_HEADER_BYTES];
    if (!buf)
        return -1;
    protobuf_c_message_pack(&rec->base, buf);
    mw_rec_put_frame_header(hdr, MW_REC_TAG_FRAME, (uint32_t)len, mw_rec_crc(0, buf, len));
    int rc = fwrite(hdr, 1, sizeof hdr, out) == sizeof hdr && fwrite(buf, 1, len, out) == len;
    free(buf);
    return rc ? 0 : -1;
}

static int header(uint32_t size)
{
    unsigned char h[MW_REC_HEADER_BYTES];
    mw_rec_put_header(h);
    if (fwrite(h, 1, sizeof h, out) != sizeof h)
        return -1;
    Mpiwatch__Record rec;
    Mpiwatch__RecordStart start;
    mpiwatch__record__init(&rec);
    mpiwatch__record_start__init(&start);
    start.proto_version = MW_PROTO_VERSION;
    rec.body_case = MPIWATCH__RECORD__BODY_START;
    rec.start = &start;
    if (frame(&rec) < 0)
        return -1;
    Mpiwatch__JobInfo job;
    mpiwatch__job_info__init(&job);
    job.job = "commgen";
    job.size = size;
    job.window_ns = WINDOW_NS;
    mpiwatch__record__init(&rec);
    rec.body_case = MPIWATCH__RECORD__BODY_JOB;
    rec.job = &job;
    return frame(&rec);
}

/* Window k with definitions d[0..nd) and the records of each rank (recs[r], nrecs[r]). */
static int window(uint64_t k, const def_t *d, size_t nd, uint32_t size, mw_trace_rec_t **recs,
                  const size_t *nrecs)
{
    Mpiwatch__CommDef *defs = calloc(nd + 1, sizeof *defs), **dp = calloc(nd + 1, sizeof *dp);
    uint32_t *world = calloc(nd + 1, sizeof *world);
    Mpiwatch__Trace *t = calloc(size, sizeof *t);
    Mpiwatch__RankTrace *rt = calloc(size, sizeof *rt), **rtp = calloc(size, sizeof *rtp);
    uint8_t **data = calloc(size, sizeof *data);
    uint32_t *pm = calloc(size, sizeof *pm);
    int rc = -1;
    if (!defs || !dp || !world || !t || !rt || !rtp || !data || !pm)
        goto out;
    for (size_t i = 0; i < nd; i++) {
        mpiwatch__comm_def__init(&defs[i]);
        defs[i].id = d[i].id;
        defs[i].parent = d[i].parent;
        defs[i].fn = mw_fn_id("MPI_Comm_dup");
        defs[i].rank = d[i].rank;
        defs[i].size = d[i].size;
        world[i] = d[i].world;
        dp[i] = &defs[i];
    }
    for (uint32_t r = 0; r < size; r++) {
        size_t len;
        uint32_t enc;
        uint64_t raw;
        if (mw_trace_encode(recs[r], nrecs[r], 0, 0, &data[r], &len, &enc, &raw) < 0)
            goto out;
        mpiwatch__trace__init(&t[r]);
        t[r].window = k;
        t[r].window_start_ns = START_NS + k * WINDOW_NS;
        t[r].state = MW_TRACE_EXACT;
        t[r].count = (uint32_t)nrecs[r];
        t[r].encoding = enc;
        t[r].raw_bytes = raw;
        t[r].records.data = data[r];
        t[r].records.len = len;
        t[r].threads = 1;
        mpiwatch__rank_trace__init(&rt[r]);
        rt[r].rank = r;
        rt[r].trace = &t[r];
        rtp[r] = &rt[r];
        pm[r] = 100;
    }
    Mpiwatch__Window win;
    mpiwatch__window__init(&win);
    win.index = k;
    win.window_ns = WINDOW_NS;
    win.start_ns = START_NS + k * WINDOW_NS;
    win.ranks_reporting = size;
    win.rank_mpi_permille = pm;
    win.n_rank_mpi_permille = size;
    win.traces = rtp;
    win.n_traces = size;
    win.traced_ranks = size;
    win.comms = dp;
    win.n_comms = nd;
    win.comm_world_rank = world;
    win.n_comm_world_rank = nd;
    win.closed_real_ns = 1;
    Mpiwatch__Record rec;
    mpiwatch__record__init(&rec);
    rec.mono_ns = win.start_ns + 2 * WINDOW_NS;
    rec.body_case = MPIWATCH__RECORD__BODY_WINDOW;
    rec.window = &win;
    rc = frame(&rec);
out:
    for (uint32_t r = 0; data && r < size; r++)
        free(data[r]);
    free(defs);
    free(dp);
    free(world);
    free(t);
    free(rt);
    free(rtp);
    free(data);
    free(pm);
    return rc;
}

static mw_trace_rec_t rec(const char *fn, uint8_t kind, int64_t start, uint64_t comm, int32_t peer,
                          uint64_t seq)
{
    mw_trace_rec_t r;
    memset(&r, 0, sizeof r);
    r.fn = (uint16_t)mw_fn_id(fn);
    r.kind = kind;
    r.start_ns = start;
    r.dur_ns = 1000;
    r.comm = comm;
    r.peer = peer;
    r.tag = kind == MW_TK_COLL ? 0 : 7;
    r.seq = seq;
    r.bytes = kind == MW_TK_COLL ? 0 : 64;
    return r;
}

/* Writes the definitions d[0..n) in windows of PER_WINDOW, the records in the first. */
static int windows(const def_t *d, size_t n, uint32_t size, mw_trace_rec_t **recs,
                   const size_t *nrecs)
{
    size_t none[2] = {0, 0};
    for (size_t w0 = 0, k = 10; w0 < n || w0 == 0; w0 += PER_WINDOW, k++)
        if (window(k, d + w0, n - w0 < PER_WINDOW ? n - w0 : PER_WINDOW, size, recs,
                   w0 == 0 ? nrecs : none) < 0)
            return -1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "chain") == 0 && argc != 4)) {
        fprintf(stderr, "usage: mw-commgen chain|cycle|badworld OUT.mpiw [N]\n");
        return 2;
    }
    out = fopen(argv[2], "wb");
    if (!out) {
        perror(argv[2]);
        return 1;
    }
    int rc = -1;
    def_t *d = NULL;
    if (strcmp(argv[1], "chain") == 0) {
        size_t n = strtoull(argv[3], NULL, 10);
        d = calloc(n + 1, sizeof *d);
        mw_trace_rec_t b = rec("MPI_Barrier", MW_TK_COLL, 1000, 1000, -1, 0), *recs[1] = {&b};
        size_t nrecs[1] = {1};
        for (size_t i = 0; d && i < n; i++)
            d[i] = (def_t){1000 + i, 1000 + i + 1, 0, 1, 0};
        rc = d && header(1) == 0 ? windows(d, n, 1, recs, nrecs) : -1;
    } else if (strcmp(argv[1], "cycle") == 0) {
        static const def_t c[] = {{1000, 1001, 0, 1, 0},
                                  {1001, 1002, 0, 1, 0},
                                  {1002, 1000, 0, 1, 0},
                                  {1003, 1001, 0, 1, 0},
                                  {1004, MW_COMM_ID_WORLD, 0, 1, 0}};
        mw_trace_rec_t b = rec("MPI_Barrier", MW_TK_COLL, 1000, 1003, -1, 0), *recs[1] = {&b};
        size_t nrecs[1] = {1};
        rc = header(1) == 0 ? windows(c, sizeof c / sizeof c[0], 1, recs, nrecs) : -1;
    } else if (strcmp(argv[1], "badworld") == 0) {
        static const def_t c[] = {
            {1000, MW_COMM_ID_WORLD, 0, 1, 5}, {1001, MW_COMM_ID_WORLD, 0, 2, 1},
            {1001, MW_COMM_ID_WORLD, 1, 2, 1}, {1002, MW_COMM_ID_WORLD, 0, 2, 1},
            {1002, MW_COMM_ID_WORLD, 1, 2, 0}, {1003, MW_COMM_ID_WORLD, 0, 3, 0}};
        mw_trace_rec_t r0[3] = {rec("MPI_Send", MW_TK_SEND, 1000, 1001, 1, 0),
                                rec("MPI_Send", MW_TK_SEND, 3000, 1002, 1, 0),
                                rec("MPI_Barrier", MW_TK_COLL, 5000, 1000, -1, 0)};
        mw_trace_rec_t r1[2] = {rec("MPI_Recv", MW_TK_RECV, 1000, 1001, 0, 0),
                                rec("MPI_Recv", MW_TK_RECV, 3000, 1002, 0, 0)};
        mw_trace_rec_t *recs[2] = {r0, r1};
        size_t nrecs[2] = {3, 2};
        rc = header(2) == 0 ? windows(c, sizeof c / sizeof c[0], 2, recs, nrecs) : -1;
    } else {
        fprintf(stderr, "mw-commgen: unknown input %s\n", argv[1]);
        fclose(out);
        return 2;
    }
    free(d);
    if (fclose(out) != 0 || rc < 0) {
        fprintf(stderr, "mw-commgen: cannot write %s\n", argv[2]);
        return 1;
    }
    return 0;
}
