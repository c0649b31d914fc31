/* Prototype: write an OTF2 archive of 2 MPI ranks x 1 thread, serial writer.
 * Build:  cc -std=c11 -Wall -Wextra $(pkg-config --cflags otf2) otf2_write.c \
 *            $(pkg-config --libs otf2) -o otf2_write
 * Usage:  ./otf2_write OUTDIR [fault] [bulkN]
 *   fault: none | unordered | outofclock | nevents | grouporder | nolocgroup | fwdstring |
 *          postflush | noflushcb | nodefs | badcomm | badregion | equal | realtime
 *   bulkN: extra MPI_Send Enter/MpiSend/Leave triples on rank 0 (flush test)
 * Writes OUTDIR/traces.otf2 (+ traces.def, traces/N.evt, traces/N.def) and
 * prints the expected per-type event counts on stdout (checked by check.sh). */
#define _POSIX_C_SOURCE 200809L
#include <otf2/otf2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <inttypes.h>

#define NRANKS 2
#ifndef NTHREADS
#define NTHREADS 1 /* -DNTHREADS=2: thread 1 of each rank also records */
#endif
#define CHK(call)                                                                                  \
    do {                                                                                           \
        OTF2_ErrorCode e_ = (call);                                                                \
        if (e_ != OTF2_SUCCESS) {                                                                  \
            fprintf(stderr, "%s:%d %s -> %s: %s\n", __FILE__, __LINE__, #call,                     \
                    OTF2_Error_GetName(e_), OTF2_Error_GetDescription(e_));                        \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static const char *fault = "none";
static bool F(const char *f)
{
    return strcmp(fault, f) == 0;
}

/* Flush callbacks: pre must return OTF2_FLUSH (default for evt writers is NO
 * flush -> OTF2_ERROR_MEM_FAULT / lost data once the chunk pool is full).
 * post == NULL suppresses the BufferFlush *event* that OTF2 would otherwise
 * insert into the event stream at the returned timestamp. */
static OTF2_FlushType pre_flush(void *ud, OTF2_FileType ft, OTF2_LocationRef loc, void *cd,
                                bool final)
{
    (void)ud;
    (void)ft;
    (void)loc;
    (void)cd;
    (void) final;
    return OTF2_FLUSH;
}
static OTF2_TimeStamp post_flush(void *ud, OTF2_FileType ft, OTF2_LocationRef loc)
{
    (void)ud;
    (void)ft;
    (void)loc;
    return 1000000000ull + 50;
}

/* ---- ids ------------------------------------------------------------- */
/* location id: Score-P style (thread << 32) | rank; location group id == rank */
static uint64_t loc_id(int rank, int thr)
{
    return ((uint64_t)thr << 32) | (uint64_t)rank;
}

enum {
    STR_EMPTY,
    STR_NODE,
    STR_MACHINE,
    STR_RANK0,
    STR_RANK1,
    STR_THR00,
    STR_THR10,
    STR_SEND,
    STR_RECV,
    STR_ISEND,
    STR_IRECV,
    STR_WAIT,
    STR_BCAST,
    STR_WORLD,
    STR_SPLIT,
    STR_MPI,
    STR_GRP_LOCS,
    STR_GRP_WORLD,
    STR_GRP_SPLIT,
    STR_CLASS_NODE,
    STR_THRX,
    STR_NSTR
};
static const char *strings[STR_NSTR] = {"",
                                        "node0",
                                        "machine",
                                        "MPI Rank 0",
                                        "MPI Rank 1",
                                        "Master thread 0",
                                        "Master thread 1",
                                        "MPI_Send",
                                        "MPI_Recv",
                                        "MPI_Isend",
                                        "MPI_Irecv",
                                        "MPI_Wait",
                                        "MPI_Bcast",
                                        "MPI_COMM_WORLD",
                                        "split_comm",
                                        "MPI",
                                        "",
                                        "",
                                        "",
                                        "node",
                                        "Pthread"};
enum { R_SEND, R_RECV, R_ISEND, R_IRECV, R_WAIT, R_BCAST, R_N };
enum { GRP_LOCS = 0, GRP_WORLD = 1, GRP_SPLIT = 2 };
enum { COMM_WORLD = 0, COMM_SPLIT = 1 };

/* expected counts, printed at the end */
enum {
    E_ENTER,
    E_LEAVE,
    E_SEND,
    E_RECV,
    E_ISEND,
    E_ISENDC,
    E_IRECVREQ,
    E_IRECV,
    E_CBEGIN,
    E_CEND,
    E_BUFFLUSH,
    E_NTYPES
};
static const char *ename[E_NTYPES] = {"Enter",
                                      "Leave",
                                      "MpiSend",
                                      "MpiRecv",
                                      "MpiIsend",
                                      "MpiIsendComplete",
                                      "MpiIrecvRequest",
                                      "MpiIrecv",
                                      "MpiCollectiveBegin",
                                      "MpiCollectiveEnd",
                                      "BufferFlush"};
static uint64_t cnt[E_NTYPES];
static uint64_t tmin = UINT64_MAX, tmax = 0;
static void ts(uint64_t t)
{
    if (t < tmin)
        tmin = t;
    if (t > tmax)
        tmax = t;
}

/* All timestamps are in ns, 1e9 = recording start ("base"). */
#define B 1000000000ull

static void enter(OTF2_EvtWriter *w, uint64_t t, uint32_t r)
{
    CHK(OTF2_EvtWriter_Enter(w, NULL, t, r));
    cnt[E_ENTER]++;
    ts(t);
}
static void leave(OTF2_EvtWriter *w, uint64_t t, uint32_t r)
{
    CHK(OTF2_EvtWriter_Leave(w, NULL, t, r));
    cnt[E_LEAVE]++;
    ts(t);
}

/* rank 0 and rank 1 scripts. Peers are ranks *in the given communicator*.
 * split_comm was created with MPI_Comm_split(WORLD, 0, key = -rank), so its
 * group is [world 1, world 0]: world rank 0 is split rank 1 and vice versa. */
static void write_rank0(OTF2_EvtWriter *w, long bulk)
{
    /* blocking send to world 1 */
    enter(w, B + 100, R_SEND);
    CHK(OTF2_EvtWriter_MpiSend(w, NULL, B + 110, 1, COMM_WORLD, 7, 64));
    cnt[E_SEND]++;
    leave(w, B + 200, R_SEND);
    /* Isend to world 1 (request 1), Irecv from world 1 (request 2) */
    enter(w, B + 300, R_ISEND);
    CHK(OTF2_EvtWriter_MpiIsend(w, NULL, B + 305, 1, COMM_WORLD, 8, 128, 1));
    cnt[E_ISEND]++;
    leave(w, B + 310, R_ISEND);
    enter(w, B + 320, R_IRECV);
    CHK(OTF2_EvtWriter_MpiIrecvRequest(w, NULL, B + 325, 2));
    cnt[E_IRECVREQ]++;
    leave(w, B + 330, R_IRECV);
    enter(w, B + 400, R_WAIT);
    CHK(OTF2_EvtWriter_MpiIsendComplete(w, NULL, B + 410, 1));
    cnt[E_ISENDC]++;
    leave(w, B + 420, R_WAIT);
    enter(w, B + 430, R_WAIT);
    CHK(OTF2_EvtWriter_MpiIrecv(w, NULL, B + 440, 1, COMM_WORLD, 9, 32, 2));
    cnt[E_IRECV]++;
    leave(w, B + 450, R_WAIT);
    /* Bcast on WORLD, root world 0 = me, 256 bytes. Sizes follow Score-P's
     * convention: root sent = N*bytes (itself included), recv = bytes;
     * non-root sent = 0, recv = bytes. */
    enter(w, B + 500, R_BCAST);
    CHK(OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, B + 501));
    cnt[E_CBEGIN]++;
    CHK(OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, B + 590, OTF2_COLLECTIVE_OP_BCAST, COMM_WORLD, 0,
                                        256 * NRANKS, 256));
    cnt[E_CEND]++;
    leave(w, B + 600, R_BCAST);
    /* send on split comm to world 1 == split rank 0 */
    enter(w, B + 700, R_SEND);
    CHK(OTF2_EvtWriter_MpiSend(w, NULL, B + 705, F("badcomm") ? 1 : 0,
                               F("badcomm") ? 9 : COMM_SPLIT, 11, 16));
    cnt[E_SEND]++;
    leave(w, B + 720, R_SEND);
    /* Bcast on split, root split 0 == world 1, I receive 8 bytes */
    enter(w, B + 800, R_BCAST);
    CHK(OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, B + 801));
    cnt[E_CBEGIN]++;
    CHK(OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, B + 850, OTF2_COLLECTIVE_OP_BCAST, COMM_SPLIT, 0,
                                        0, 8));
    cnt[E_CEND]++; /* non-root: sent 0 */
    leave(w, B + 860, R_BCAST);
    /* bulk: many self-contained sends to world 1 (no matching recv: tests flushing only) */
    uint64_t t = B + 1000;
    for (long i = 0; i < bulk; i++) {
        enter(w, t, R_SEND);
        CHK(OTF2_EvtWriter_MpiSend(w, NULL, t + 1, 1, COMM_WORLD, 99, 8));
        cnt[E_SEND]++;
        leave(w, t + 2, R_SEND);
        t += 3;
    }
    if (F("equal"))
        enter(w, t + 5, R_WAIT), leave(w, t + 5, R_WAIT); /* equal ts: allowed */
    if (F("unordered"))
        enter(w, B + 50, R_WAIT), leave(w, B + 60, R_WAIT);
    if (F("outofclock"))
        enter(w, t + 100000, R_WAIT), leave(w, t + 100001, R_WAIT);
    if (F("badregion"))
        enter(w, t + 10, 42), leave(w, t + 11, 42);
}

/* thread t>0 of rank r (MPI_THREAD_MULTIPLE): rank 0 thread sends to world 1,
 * rank 1 thread receives; the peer in the event is still a *rank*, so readers
 * attribute the message to the rank's COMM_LOCATIONS location (thread 0). */
static void write_thread(OTF2_EvtWriter *w, int r, int t)
{
    (void)t;
    enter(w, B + 900, r == 0 ? R_SEND : R_RECV);
    if (r == 0) {
        CHK(OTF2_EvtWriter_MpiSend(w, NULL, B + 901, 1, COMM_WORLD, 12, 4));
        cnt[E_SEND]++;
    } else {
        CHK(OTF2_EvtWriter_MpiRecv(w, NULL, B + 905, 0, COMM_WORLD, 12, 4));
        cnt[E_RECV]++;
    }
    leave(w, B + 910, r == 0 ? R_SEND : R_RECV);
}

static void write_rank1(OTF2_EvtWriter *w)
{
    enter(w, B + 150, R_RECV);
    CHK(OTF2_EvtWriter_MpiRecv(w, NULL, B + 210, 0, COMM_WORLD, 7, 64));
    cnt[E_RECV]++;
    leave(w, B + 220, R_RECV);
    enter(w, B + 300, R_IRECV);
    CHK(OTF2_EvtWriter_MpiIrecvRequest(w, NULL, B + 302, 1));
    cnt[E_IRECVREQ]++;
    leave(w, B + 303, R_IRECV);
    enter(w, B + 310, R_ISEND);
    CHK(OTF2_EvtWriter_MpiIsend(w, NULL, B + 312, 0, COMM_WORLD, 9, 32, 2));
    cnt[E_ISEND]++;
    leave(w, B + 315, R_ISEND);
    enter(w, B + 350, R_WAIT);
    CHK(OTF2_EvtWriter_MpiIrecv(w, NULL, B + 380, 0, COMM_WORLD, 8, 128, 1));
    cnt[E_IRECV]++;
    leave(w, B + 390, R_WAIT);
    enter(w, B + 400, R_WAIT);
    CHK(OTF2_EvtWriter_MpiIsendComplete(w, NULL, B + 405, 2));
    cnt[E_ISENDC]++;
    leave(w, B + 410, R_WAIT);
    enter(w, B + 500, R_BCAST);
    CHK(OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, B + 505));
    cnt[E_CBEGIN]++;
    CHK(OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, B + 595, OTF2_COLLECTIVE_OP_BCAST, COMM_WORLD, 0,
                                        0, 256));
    cnt[E_CEND]++;
    leave(w, B + 600, R_BCAST);
    /* recv on split comm from world 0 == split rank 1 */
    enter(w, B + 690, R_RECV);
    CHK(OTF2_EvtWriter_MpiRecv(w, NULL, B + 710, 1, COMM_SPLIT, 11, 16));
    cnt[E_RECV]++;
    leave(w, B + 715, R_RECV);
    enter(w, B + 800, R_BCAST);
    CHK(OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, B + 802));
    cnt[E_CBEGIN]++;
    CHK(OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, B + 840, OTF2_COLLECTIVE_OP_BCAST, COMM_SPLIT, 0,
                                        8 * NRANKS, 8));
    cnt[E_CEND]++;
    leave(w, B + 860, R_BCAST);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s OUTDIR [fault] [bulkN]\n", argv[0]);
        return 2;
    }
    if (argc > 2)
        fault = argv[2];
    long bulk = argc > 3 ? atol(argv[3]) : 0;

    /* 1. open archive: path, archive name ("traces" -> traces.otf2), mode,
     *    event chunk size, def chunk size, substrate POSIX, no compression.
     *    Fails (NULL) if OUTDIR/traces.otf2 ... already exists? -> see findings. */
    OTF2_Archive *ar =
        OTF2_Archive_Open(argv[1], "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                          OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!ar) {
        fprintf(stderr, "OTF2_Archive_Open failed\n");
        return 1;
    }

    /* 2. flush callbacks (mandatory for writing), then serial collectives */
    OTF2_FlushCallbacks fcb = {pre_flush, F("postflush") ? post_flush : NULL};
    if (!F("noflushcb"))
        CHK(OTF2_Archive_SetFlushCallbacks(ar, &fcb, NULL));
    CHK(OTF2_Archive_SetSerialCollectiveCallbacks(ar));
    CHK(OTF2_Archive_SetCreator(ar, "mpiwatch otf2 prototype"));
    CHK(OTF2_Archive_SetDescription(ar, "2 ranks x 1 thread"));
    CHK(OTF2_Archive_SetMachineName(ar, "localhost"));

    /* 3. events: one EvtWriter per location, all open at the same time is fine */
    CHK(OTF2_Archive_OpenEvtFiles(ar));
    uint64_t nev[NRANKS][NTHREADS];
    for (int r = 0; r < NRANKS; r++)
        for (int t = 0; t < NTHREADS; t++) {
            OTF2_EvtWriter *w = OTF2_Archive_GetEvtWriter(ar, loc_id(r, t));
            if (!w) {
                fprintf(stderr, "GetEvtWriter failed\n");
                return 1;
            }
            if (t == 0) {
                if (r == 0)
                    write_rank0(w, bulk);
                else
                    write_rank1(w);
            } else
                write_thread(w, r, t);
            CHK(OTF2_EvtWriter_GetNumberOfEvents(w, &nev[r][t]));
            CHK(OTF2_Archive_CloseEvtWriter(ar, w));
        }
    CHK(OTF2_Archive_CloseEvtFiles(ar));

    /* 4. local definition files: one (empty) DefWriter per location. Without
     *    them otf2-print/readers warn or fail to open the location. */
    if (!F("nodefs")) {
        CHK(OTF2_Archive_OpenDefFiles(ar));
        for (int r = 0; r < NRANKS; r++)
            for (int t = 0; t < NTHREADS; t++) {
                OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(ar, loc_id(r, t));
                CHK(OTF2_Archive_CloseDefWriter(ar, dw));
            }
        CHK(OTF2_Archive_CloseDefFiles(ar));
    }

    /* 5. global definitions */
    OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(ar);
    if (!g) {
        fprintf(stderr, "GetGlobalDefWriter failed\n");
        return 1;
    }
    uint64_t off = tmin, len = tmax - tmin;
    if (F("outofclock"))
        len = 1000;
    CHK(OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000ull, off, len,
                                                  F("realtime") ? 1764122400000000000ull
                                                                : OTF2_UNDEFINED_TIMESTAMP));
    /* every referenced definition must be written BEFORE the referencing one:
     * fault fwdstring writes Paradigm before its name string -> otf2-print
     * shows 'Name: INVALID <15>', python3-otf2 dies with KeyError 15. */
    if (F("fwdstring"))
        CHK(OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_MPI, STR_MPI,
                                               OTF2_PARADIGM_CLASS_PROCESS));
    for (uint32_t s = 0; s < STR_NSTR; s++)
        CHK(OTF2_GlobalDefWriter_WriteString(g, s, strings[s]));
    if (!F("fwdstring"))
        CHK(OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_MPI, STR_MPI,
                                               OTF2_PARADIGM_CLASS_PROCESS));

    static const struct {
        uint32_t name;
        OTF2_RegionRole role;
    } reg[R_N] = {
        {STR_SEND, OTF2_REGION_ROLE_POINT2POINT},  {STR_RECV, OTF2_REGION_ROLE_POINT2POINT},
        {STR_ISEND, OTF2_REGION_ROLE_POINT2POINT}, {STR_IRECV, OTF2_REGION_ROLE_POINT2POINT},
        {STR_WAIT, OTF2_REGION_ROLE_POINT2POINT},  {STR_BCAST, OTF2_REGION_ROLE_COLL_ONE2ALL}};
    for (uint32_t i = 0; i < R_N; i++)
        CHK(OTF2_GlobalDefWriter_WriteRegion(g, i, reg[i].name, reg[i].name, STR_EMPTY, reg[i].role,
                                             OTF2_PARADIGM_MPI, OTF2_REGION_FLAG_NONE, STR_EMPTY, 0,
                                             0));

    /* system tree: one node; location group per rank (id == rank); locations */
    CHK(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, STR_NODE, STR_CLASS_NODE,
                                                 OTF2_UNDEFINED_SYSTEM_TREE_NODE));
    for (int r = 0; r < NRANKS; r++) {
        if (!F("nolocgroup"))
            CHK(OTF2_GlobalDefWriter_WriteLocationGroup(g, r, STR_RANK0 + r,
                                                        OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                                        OTF2_UNDEFINED_LOCATION_GROUP));
        for (int t = 0; t < NTHREADS; t++)
            CHK(OTF2_GlobalDefWriter_WriteLocation(g, loc_id(r, t), t ? STR_THRX : STR_THR00 + r,
                                                   OTF2_LOCATION_TYPE_CPU_THREAD,
                                                   F("nevents") ? nev[r][t] + 5 : nev[r][t], r));
    }

    /* MPI groups: COMM_LOCATIONS (index = world rank, value = location id of
     * the rank's MPI thread) must precede all COMM_GROUP groups of MPI. */
    uint64_t locs[NRANKS], world[NRANKS], split[NRANKS];
    for (int r = 0; r < NRANKS; r++) {
        locs[r] = loc_id(r, 0);
        world[r] = r;
        split[r] = NRANKS - 1 - r;
    }
    if (F("grouporder")) {
        CHK(OTF2_GlobalDefWriter_WriteGroup(g, GRP_WORLD, STR_GRP_WORLD, OTF2_GROUP_TYPE_COMM_GROUP,
                                            OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, NRANKS,
                                            world));
        CHK(OTF2_GlobalDefWriter_WriteGroup(g, GRP_LOCS, STR_GRP_LOCS,
                                            OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                            OTF2_GROUP_FLAG_NONE, NRANKS, locs));
    } else {
        CHK(OTF2_GlobalDefWriter_WriteGroup(g, GRP_LOCS, STR_GRP_LOCS,
                                            OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                            OTF2_GROUP_FLAG_NONE, NRANKS, locs));
        CHK(OTF2_GlobalDefWriter_WriteGroup(g, GRP_WORLD, STR_GRP_WORLD, OTF2_GROUP_TYPE_COMM_GROUP,
                                            OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, NRANKS,
                                            world));
    }
    /* members of a COMM_GROUP are world ranks (indices into COMM_LOCATIONS),
     * listed in communicator-rank order */
    CHK(OTF2_GlobalDefWriter_WriteGroup(g, GRP_SPLIT, STR_GRP_SPLIT, OTF2_GROUP_TYPE_COMM_GROUP,
                                        OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, NRANKS, split));
    CHK(OTF2_GlobalDefWriter_WriteComm(g, COMM_WORLD, STR_WORLD, GRP_WORLD, OTF2_UNDEFINED_COMM,
                                       OTF2_COMM_FLAG_NONE));
    CHK(OTF2_GlobalDefWriter_WriteComm(g, COMM_SPLIT, STR_SPLIT, GRP_SPLIT, COMM_WORLD,
                                       OTF2_COMM_FLAG_NONE));
    CHK(OTF2_Archive_CloseGlobalDefWriter(ar, g));

    /* 6. close: writes the anchor file traces.otf2 */
    CHK(OTF2_Archive_Close(ar));

    for (int i = 0; i < E_NTYPES; i++)
        printf("%s %" PRIu64 "\n", ename[i], cnt[i]);
    uint64_t tot = 0;
    for (int r = 0; r < NRANKS; r++)
        for (int t = 0; t < NTHREADS; t++)
            tot += nev[r][t];
    fprintf(stderr, "events written per OTF2_EvtWriter_GetNumberOfEvents: %" PRIu64 "\n", tot);
    return 0;
}
