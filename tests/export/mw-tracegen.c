/* mw-tracegen.c: writes a small recording with known traced windows, for the tests of
 * mpiwatch-export --format trace and --format otf2 (trace_export.sh).
 *
 *   mw-tracegen OUT.mpiw
 *
 * A job of 4 ranks on two hosts, windows 10 to 13:
 *   10  every rank exact: Comm_split, a Send/Recv, a Sendrecv pair, an Isend completed by Wait
 *       against an Irecv(MPI_ANY_SOURCE, MPI_ANY_TAG) completed by Waitall, an Allreduce, a
 *       Bcast on the split communicator (members world 3 and 1, in that order, so that world
 *       and communicator ranks differ), a Send on a communicator only one member defined;
 *   11  ranks 0 and 1 exact in the merged window, rank 2 summary only (budget), rank 3 summary
 *       only there but exact in a reach-back trace recorded after the window (an Isend on the
 *       split communicator whose receive is in that trace);
 *   12  no rank exact (messages sent there advance the channel indices all the same);
 *   13  every rank exact: an Ibcast completed by Wait, a Send to MPI_PROC_NULL, a Send from a
 *       second thread; plus a second reach-back trace of rank 0 that must be left out.
 *   14  every rank exact: rank 2 posts 150 Isends to rank 3, which posts 150 Irecvs, all open at
 *       once, then completed by one Waitall each in a scrambled order.
 * A reach-back trace of rank 2, window 11, from another job must be refused.
 * Traces of window 13 are compressed (zstd), the others are plain columns.
 *
 * The records are encoded with mw_trace_encode and the recording written frame by frame with
 * the collector's format functions. The expectations go to OUT.mpiw.expect.json: the OTF2
 * event counts by type (from the OTF2 mapping of docs/export.md applied record by record),
 * every message event with its world peer, and the messages the matcher must find.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mw_proto.h"
#include "mw_recording.h"
#include "mw_trace.h"

#define N_RANKS 4u
#define WINDOW_NS 100000000ull
#define START_NS 5000000000000ull
#define COMM_WORLD MW_COMM_ID_WORLD
#define COMM_C 0xc0ffee0000000001ull /* split: world 3 is rank 0, world 1 is rank 1 */
#define COMM_D 0xd00d000000000002ull /* only rank 0's definition arrives */
#define MAX_RECS 512
#define N_MANY 150 /* window 14: requests open at once on one location */

static FILE *out, *ex;

typedef struct {
    mw_trace_rec_t r[MAX_RECS];
    size_t n;
} recs_t;

/* Expected OTF2 events by type, and message events with their world peers. */
enum { E_ENTER, E_LEAVE, E_SEND, E_RECV, E_ISEND, E_ISENDC, E_IRECVREQ, E_IRECV, E_CB, E_CE, E_N };
static const char *const E_NAMES[E_N] = {"Enter",           "Leave",    "MpiSend",
                                         "MpiRecv",         "MpiIsend", "MpiIsendComplete",
                                         "MpiIrecvRequest", "MpiIrecv", "MpiCollectiveBegin",
                                         "MpiCollectiveEnd"};
static unsigned long counts[E_N];
static char msgs[65536];
static size_t msgs_len;

/* Channel indices: the k-th message on (comm, src, dst, tag), the same at both ends. */
typedef struct {
    uint64_t comm;
    uint32_t src, dst;
    int32_t tag;
    uint64_t next;
} chan_t;
static chan_t chans[2][64]; /* [0] sends, [1] receives */
static size_t nchans[2];

static uint64_t chan_next(int side, uint64_t comm, uint32_t src, uint32_t dst, int32_t tag)
{
    for (size_t i = 0; i < nchans[side]; i++) {
        chan_t *c = &chans[side][i];
        if (c->comm == comm && c->src == src && c->dst == dst && c->tag == tag)
            return c->next++;
    }
    chans[side][nchans[side]] = (chan_t){comm, src, dst, tag, 1};
    nchans[side]++;
    return 0;
}

static void message(const char *type, uint32_t rank, int32_t peer, int32_t tag, uint64_t bytes,
                    const char *comm)
{
    msgs_len += (size_t)snprintf(msgs + msgs_len, sizeof msgs - msgs_len,
                                 "%s[\"%s\",%u,%d,%d,%llu,\"%s\"]", msgs_len ? "," : "", type, rank,
                                 peer, tag, (unsigned long long)bytes, comm);
}

static mw_trace_rec_t *add(recs_t *v, const char *fn, uint8_t kind, uint64_t start_us,
                           uint64_t dur_us)
{
    mw_trace_rec_t *r = &v->r[v->n++];
    memset(r, 0, sizeof *r);
    r->fn = (uint16_t)mw_fn_id(fn);
    if (!r->fn) {
        fprintf(stderr, "mw-tracegen: no function %s\n", fn);
        exit(1);
    }
    r->kind = kind;
    r->start_ns = (int64_t)(start_us * 1000);
    r->dur_ns = dur_us * 1000;
    r->peer = -1;
    if (kind != MW_TK_SEND_DONE && kind != MW_TK_RECV_DONE && kind != MW_TK_COLL_DONE) {
        counts[E_ENTER]++;
        counts[E_LEAVE]++;
    }
    return r;
}

/* What `counted` says: the record is in a traced window (the export writes it). */
static void send(recs_t *v, uint32_t me, const char *fn, uint64_t t, uint64_t d, uint64_t comm,
                 uint32_t to, int32_t tag, uint64_t bytes, uint32_t req, int counted)
{
    mw_trace_rec_t *r = add(v, fn, req ? MW_TK_ISEND : MW_TK_SEND, t, d);
    r->comm = comm;
    r->peer = (int32_t)to;
    r->tag = tag;
    r->bytes = bytes;
    r->req = req;
    r->seq = chan_next(0, comm, me, to, tag);
    if (!counted)
        return;
    if (comm == COMM_D)
        return; /* its group is not known in full: Enter and Leave only */
    counts[req ? E_ISEND : E_SEND]++;
    message(req ? "MpiIsend" : "MpiSend", me, (int32_t)to, tag, bytes,
            comm == COMM_C ? "C" : "WORLD");
}

static void recv(recs_t *v, uint32_t me, const char *fn, uint64_t t, uint64_t d, uint64_t comm,
                 uint32_t from, int32_t tag, uint64_t bytes, uint8_t kind, uint32_t req)
{
    mw_trace_rec_t *r = add(v, fn, kind, t, d);
    r->comm = comm;
    r->peer = (int32_t)from;
    r->tag = tag;
    r->bytes = bytes;
    r->req = req;
    r->seq = chan_next(1, comm, from, me, tag);
    if (kind == MW_TK_RECV_DONE) {
        counts[E_IRECV]++;
        message("MpiIrecv", me, (int32_t)from, tag, bytes, comm == COMM_C ? "C" : "WORLD");
    } else {
        counts[E_RECV]++;
        message("MpiRecv", me, (int32_t)from, tag, bytes, comm == COMM_C ? "C" : "WORLD");
    }
}

static void coll(recs_t *v, const char *fn, uint8_t kind, uint64_t t, uint64_t d, uint64_t comm,
                 uint64_t instance, int32_t root, uint64_t bytes, uint32_t req)
{
    mw_trace_rec_t *r = add(v, fn, kind, t, d);
    r->comm = comm;
    r->seq = instance;
    r->peer = root;
    r->bytes = bytes;
    r->req = req;
    if (kind == MW_TK_COLL) {
        counts[E_CB]++;
        counts[E_CE]++;
    }
}

static void done(recs_t *v, const char *fn, uint8_t kind, uint64_t t, uint32_t req)
{
    mw_trace_rec_t *r = add(v, fn, kind, t, 0);
    r->req = req;
    if (kind == MW_TK_SEND_DONE)
        counts[E_ISENDC]++;
    if (kind == MW_TK_COLL_DONE) { /* a non-blocking collective, written where it completes */
        counts[E_CB]++;
        counts[E_CE]++;
    }
}

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

/* A Trace message of v (exact), or summary only when v is NULL. */
static void make_trace(Mpiwatch__Trace *t, uint64_t window, const recs_t *v, int zstd,
                       uint64_t left_out)
{
    mpiwatch__trace__init(t);
    t->window = window;
    t->window_start_ns = START_NS + (window - 10) * WINDOW_NS;
    if (!v) {
        t->state = MW_TRACE_SUMMARY_ONLY;
        t->reason = MW_TRACE_WHY_BUDGET;
        t->left_out = left_out;
        return;
    }
    uint8_t *data;
    size_t len;
    uint32_t enc;
    uint64_t raw;
    if (mw_trace_encode(v->r, v->n, zstd ? 1 : 0, zstd ? 1 : 0, &data, &len, &enc, &raw) < 0) {
        fprintf(stderr, "mw-tracegen: mw_trace_encode failed\n");
        exit(1);
    }
    t->state = MW_TRACE_EXACT;
    t->count = (uint32_t)v->n;
    t->encoding = enc;
    t->raw_bytes = raw;
    t->records.data = data;
    t->records.len = len;
    t->threads = 1;
}

static void window(uint64_t index, recs_t v[N_RANKS], const int exact[N_RANKS], int zstd,
                   Mpiwatch__CommDef **defs, uint32_t *def_world, size_t ndefs)
{
    Mpiwatch__Record rec;
    Mpiwatch__Window w;
    Mpiwatch__RankTrace rt[N_RANKS], *rtp[N_RANKS];
    Mpiwatch__Trace t[N_RANKS];
    uint32_t permille[N_RANKS] = {100, 100, 100, 100};
    mpiwatch__record__init(&rec);
    mpiwatch__window__init(&w);
    w.index = index;
    w.window_ns = WINDOW_NS;
    w.start_ns = START_NS + (index - 10) * WINDOW_NS;
    w.ranks_reporting = N_RANKS;
    w.rank_mpi_permille = permille;
    w.n_rank_mpi_permille = N_RANKS;
    for (uint32_t r = 0; r < N_RANKS; r++) {
        mpiwatch__rank_trace__init(&rt[r]);
        rt[r].rank = r;
        make_trace(&t[r], index, exact[r] ? &v[r] : NULL, zstd, 3 + r);
        rt[r].trace = &t[r];
        rtp[r] = &rt[r];
        w.traced_ranks += exact[r] != 0;
    }
    w.traces = rtp;
    w.n_traces = N_RANKS;
    w.comms = defs;
    w.n_comms = ndefs;
    w.comm_world_rank = def_world;
    w.n_comm_world_rank = ndefs;
    w.closed_real_ns = 1;
    rec.mono_ns = w.start_ns + 2 * WINDOW_NS;
    rec.body_case = MPIWATCH__RECORD__BODY_WINDOW;
    rec.window = &w;
    frame(&rec);
    for (uint32_t r = 0; r < N_RANKS; r++)
        free(t[r].records.data);
}

/* A reach-back trace as the collector records it: the frame a rank sent, verbatim. */
static void reach_back(const char *job, uint32_t rank, uint64_t index, const recs_t *v,
                       uint64_t seq)
{
    Mpiwatch__Envelope env;
    Mpiwatch__Trace t;
    mpiwatch__envelope__init(&env);
    env.version = MW_PROTO_VERSION;
    env.job = (char *)job;
    env.rank = rank;
    env.seq = seq;
    make_trace(&t, index, v, 0, 0);
    t.capture = 7;
    env.body_case = MPIWATCH__ENVELOPE__BODY_TRACE;
    env.trace = &t;
    size_t len = protobuf_c_message_get_packed_size(&env.base);
    uint8_t *buf = malloc(len);
    if (!buf)
        exit(1);
    protobuf_c_message_pack(&env.base, buf);
    Mpiwatch__Record rec;
    mpiwatch__record__init(&rec);
    rec.body_case = MPIWATCH__RECORD__BODY_MESSAGE;
    rec.message.data = buf;
    rec.message.len = len;
    frame(&rec);
    free(buf);
    free(t.records.data);
}

static Mpiwatch__CommDef *commdef(Mpiwatch__CommDef *c, uint64_t id, uint32_t rank, uint32_t size)
{
    mpiwatch__comm_def__init(c);
    c->id = id;
    c->parent = COMM_WORLD;
    c->fn = mw_fn_id("MPI_Comm_split");
    c->rank = rank;
    c->size = size;
    return c;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: mw-tracegen OUT.mpiw\n");
        return 2;
    }
    out = fopen(argv[1], "wb");
    char epath[4096];
    snprintf(epath, sizeof epath, "%s.expect.json", argv[1]);
    ex = fopen(epath, "w");
    if (!out || !ex)
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

    Mpiwatch__JobInfo job;
    mpiwatch__job_info__init(&job);
    job.job = "tracegen";
    job.size = N_RANKS;
    job.window_ns = WINDOW_NS;
    char *hosts[3] = {"", "node-a", "node-b"};
    job.hosts = hosts;
    job.n_hosts = 3;
    Mpiwatch__RankInfo ri[N_RANKS], *rip[N_RANKS];
    for (uint32_t r = 0; r < N_RANKS; r++) {
        mpiwatch__rank_info__init(&ri[r]);
        ri[r].rank = r;
        ri[r].host = 1 + r / 2;
        rip[r] = &ri[r];
    }
    job.ranks = rip;
    job.n_ranks = N_RANKS;
    rec.body_case = MPIWATCH__RECORD__BODY_JOB;
    rec.job = &job;
    frame(&rec);

    static recs_t v[N_RANKS];
    const int all[N_RANKS] = {1, 1, 1, 1};

    /* ---- window 10 ---- */
    memset(v, 0, sizeof v);
    for (uint32_t r = 0; r < N_RANKS; r++) /* instance 0 on WORLD */
        coll(&v[r], "MPI_Comm_split", MW_TK_COLL, 100 + r, 50, COMM_WORLD, 0, -1, 0, 0);
    send(&v[0], 0, "MPI_Send", 1000, 20, COMM_WORLD, 1, 7, 64, 0, 1);
    recv(&v[1], 1, "MPI_Recv", 1005, 30, COMM_WORLD, 0, 7, 64, MW_TK_RECV, 0);
    /* Sendrecv 0 <-> 2: a SEND record and its receive half (MW_TF_PART, same times) */
    send(&v[0], 0, "MPI_Sendrecv", 2000, 30, COMM_WORLD, 2, 5, 16, 0, 1);
    recv(&v[0], 0, "MPI_Sendrecv", 2000, 30, COMM_WORLD, 2, 6, 16, MW_TK_RECV, 0);
    v[0].r[v[0].n - 1].flags = MW_TF_PART;
    counts[E_ENTER]--, counts[E_LEAVE]--; /* not a call of its own */
    send(&v[2], 2, "MPI_Sendrecv", 2000, 30, COMM_WORLD, 0, 6, 16, 0, 1);
    recv(&v[2], 2, "MPI_Sendrecv", 2000, 30, COMM_WORLD, 0, 5, 16, MW_TK_RECV, 0);
    v[2].r[v[2].n - 1].flags = MW_TF_PART;
    counts[E_ENTER]--, counts[E_LEAVE]--;
    /* Isend 2 -> 3 (Wait), Irecv(ANY, ANY) on 3 (Waitall) */
    send(&v[2], 2, "MPI_Isend", 500, 5, COMM_WORLD, 3, 3, 128, 1, 1);
    mw_trace_rec_t *ir = add(&v[3], "MPI_Irecv", MW_TK_IRECV, 400, 5);
    ir->comm = COMM_WORLD;
    ir->peer = MW_TRACE_ANY;
    ir->tag = MW_TRACE_ANY;
    ir->req = 1;
    counts[E_IRECVREQ]++;
    for (uint32_t r = 0; r < N_RANKS; r++) /* instance 1 on WORLD */
        coll(&v[r], "MPI_Allreduce", MW_TK_COLL, 3000, 40 + r, COMM_WORLD, 1, -1, 8, 0);
    /* Bcast on C, root world 3 (rank 0 in C) */
    coll(&v[1], "MPI_Bcast", MW_TK_COLL, 5000, 60, COMM_C, 0, 3, 32, 0);
    coll(&v[3], "MPI_Bcast", MW_TK_COLL, 5000, 55, COMM_C, 0, 3, 32, 0);
    add(&v[2], "MPI_Wait", MW_TK_CALL, 6000, 20);
    done(&v[2], "MPI_Wait", MW_TK_SEND_DONE, 6020, 1);
    add(&v[3], "MPI_Waitall", MW_TK_CALL, 6000, 100);
    recv(&v[3], 3, "MPI_Waitall", 6100, 0, COMM_WORLD, 2, 3, 128, MW_TK_RECV_DONE, 1);
    /* a Send on D, whose group is not known in full */
    send(&v[0], 0, "MPI_Send", 4000, 10, COMM_D, 2, 9, 4, 0, 1);
    Mpiwatch__CommDef cd[3],
        *cdp[3] = {commdef(&cd[0], COMM_C, 0, 2), commdef(&cd[1], COMM_C, 1, 2),
                   commdef(&cd[2], COMM_D, 0, 2)};
    uint32_t cdw[3] = {3, 1, 0};
    window(10, v, all, 0, cdp, cdw, 3);

    /* ---- window 11: ranks 2 and 3 summary only; rank 3 reach-back later ---- */
    memset(v, 0, sizeof v);
    send(&v[0], 0, "MPI_Send", 100, 10, COMM_WORLD, 1, 7, 64, 0, 1);
    recv(&v[1], 1, "MPI_Recv", 120, 20, COMM_WORLD, 0, 7, 64, MW_TK_RECV, 0);
    send(&v[1], 1, "MPI_Isend", 500, 10, COMM_C, 3, 4, 256, 2, 1);
    add(&v[1], "MPI_Wait", MW_TK_CALL, 900, 5);
    done(&v[1], "MPI_Wait", MW_TK_SEND_DONE, 905, 2);
    recv(&v[3], 3, "MPI_Recv", 510, 30, COMM_C, 1, 4, 256, MW_TK_RECV, 0);
    const int w11[N_RANKS] = {1, 1, 0, 0};
    window(11, v, w11, 0, NULL, NULL, 0);
    reach_back("tracegen", 3, 11, &v[3], 100);
    /* a trace of rank 2 from another job: refused (window 11 stays partial) */
    recs_t other = {0};
    other.r[other.n++] = v[3].r[0];
    reach_back("another job", 2, 11, &other, 100);

    /* ---- window 12: nothing exact; a message 0 -> 1 all the same ---- */
    memset(v, 0, sizeof v);
    unsigned long saved[E_N];
    memcpy(saved, counts, sizeof counts);
    size_t saved_len = msgs_len;
    send(&v[0], 0, "MPI_Send", 100, 10, COMM_WORLD, 1, 7, 64, 0, 0);
    recv(&v[1], 1, "MPI_Recv", 100, 20, COMM_WORLD, 0, 7, 64, MW_TK_RECV, 0);
    memcpy(counts, saved, sizeof counts); /* not traced: no events */
    msgs_len = saved_len;
    msgs[msgs_len] = '\0';
    const int none[N_RANKS] = {0, 0, 0, 0};
    window(12, v, none, 0, NULL, NULL, 0);

    /* ---- window 13: Ibcast (instance 2 on WORLD, root 0), PROC_NULL, a second thread ---- */
    memset(v, 0, sizeof v);
    static const uint32_t ireq[N_RANKS] = {3, 1, 5, 2};
    static const uint64_t wait_at[N_RANKS] = {800, 700, 650, 600};
    for (uint32_t r = 0; r < N_RANKS; r++) {
        coll(&v[r], "MPI_Ibcast", MW_TK_ICOLL, 100 + 10 * r, 10, COMM_WORLD, 2, 0, 1000, ireq[r]);
        add(&v[r], "MPI_Wait", MW_TK_CALL, wait_at[r], 30);
        done(&v[r], "MPI_Wait", MW_TK_COLL_DONE, wait_at[r] + 30, ireq[r]);
    }
    send(&v[0], 0, "MPI_Send", 1000, 10, COMM_WORLD, 1, 7, 64, 0, 1);
    recv(&v[1], 1, "MPI_Recv", 1005, 20, COMM_WORLD, 0, 7, 64, MW_TK_RECV, 0);
    mw_trace_rec_t *pn = add(&v[0], "MPI_Send", MW_TK_SEND, 1200, 5);
    pn->flags = MW_TF_PROC_NULL;
    pn->comm = COMM_WORLD;
    send(&v[0], 0, "MPI_Send", 300, 15, COMM_WORLD, 2, 11, 8, 0, 1);
    v[0].r[v[0].n - 1].thread = 1;
    recv(&v[2], 2, "MPI_Recv", 310, 30, COMM_WORLD, 0, 11, 8, MW_TK_RECV, 0);
    window(13, v, all, 1, NULL, NULL, 0);
    /* a second trace of (0, 13): must be left out, not doubled */
    recs_t dup = {0};
    mw_trace_rec_t *d = &dup.r[dup.n++];
    memset(d, 0, sizeof *d);
    d->fn = (uint16_t)mw_fn_id("MPI_Barrier");
    d->kind = MW_TK_CALL;
    d->dur_ns = 1000;
    d->peer = -1;
    reach_back("tracegen", 0, 13, &dup, 101);

    /* ---- window 14: many requests open at once, completed out of order ---- */
    memset(v, 0, sizeof v);
    for (uint32_t i = 0; i < N_MANY; i++) {
        send(&v[2], 2, "MPI_Isend", 100 + i, 1, COMM_WORLD, 3, 20, 8 + i, 1000 + i, 1);
        mw_trace_rec_t *p = add(&v[3], "MPI_Irecv", MW_TK_IRECV, 100 + i, 1);
        p->comm = COMM_WORLD;
        p->peer = 2;
        p->tag = 20;
        p->req = 5000 + 7 * i; /* numbers that collide in a small table */
        counts[E_IRECVREQ]++;
    }
    add(&v[2], "MPI_Waitall", MW_TK_CALL, 1000, 50);
    add(&v[3], "MPI_Waitall", MW_TK_CALL, 1000, 60);
    for (uint32_t k = 0; k < N_MANY; k++) {
        uint32_t i = (k * 37) % N_MANY; /* a permutation: 37 and 150 are coprime */
        done(&v[2], "MPI_Waitall", MW_TK_SEND_DONE, 1050, 1000 + i);
        /* receives complete in their channel order (non-overtaking), requests in any order */
        recv(&v[3], 3, "MPI_Waitall", 1060, 0, COMM_WORLD, 2, 20, 8 + k, MW_TK_RECV_DONE,
             5000 + 7 * k);
    }
    window(14, v, all, 1, NULL, NULL, 0);

    fprintf(ex, "{\"counts\":{");
    for (int i = 0; i < E_N; i++)
        fprintf(ex, "%s\"%s\":%lu", i ? "," : "", E_NAMES[i], counts[i]);
    fprintf(ex,
            "},\"messages\":[%s],\"matched\":[[0,1,7,0],[0,2,5,0],[2,0,6,0],[2,3,3,0],"
            "[0,1,7,1],[1,3,4,0],[0,1,7,3],[0,2,11,0]",
            msgs);
    for (uint32_t k = 0; k < N_MANY; k++)
        fprintf(ex, ",[2,3,20,%u]", k);
    fprintf(ex, "],\"sends_unmatched\":1,\"recvs_unmatched\":0,\"coll_instances\":4,"
                "\"untraced_windows\":[12],\"partial_windows\":[11],\"duplicates\":1,"
                "\"reach_back\":1}\n");
    if (fclose(out) != 0 || fclose(ex) != 0)
        return 1;
    return 0;
}
