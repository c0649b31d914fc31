/* trace_known.c: a known MPI program for the per-call trace (docs/trace.md), with the ground
 * truth of every message it sends and receives.
 *
 * It uses what makes matching hard: MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_STATUS_IGNORE and
 * MPI_STATUSES_IGNORE, Isend/Irecv completed by MPI_Waitany, MPI_Testsome and MPI_Waitall,
 * MPI_Sendrecv, persistent requests (Send_init/Recv_init/Startall), a duplicated and a split
 * communicator, one made by MPI_Comm_idup, MPI_Bcast with a root, MPI_Allreduce, MPI_Ibarrier,
 * and a send to MPI_PROC_NULL (no message).
 * Every message has its own size, so a wrong pairing shows.
 *
 * Usage: trace_known FILE. Each rank appends, in rank order, one line per message it sent
 * and received, and one per collective it took part in:
 *   send COMM SRC DST TAG BYTES      (SRC, DST: world ranks; COMM: world, dup, split0, split1,
 *                                     idup)
 *   recv COMM SRC DST TAG BYTES      (what MPI delivered: the status's source and tag)
 *   coll COMM FUNCTION ROOT BYTES    (ROOT: world rank, -1 none)
 * Exit status 0 when every receive got what the program expects.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXLINES 256
#define TAG_A 10
#define TAG_B1 21
#define TAG_B2 22
#define TAG_C 30
#define TAG_D 40
#define TAG_E 50
#define TAG_G 60

static char lines[MAXLINES][96];
static int nlines, failures;
static int world_rank, world_size;

static void line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void line(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (nlines < MAXLINES)
        vsnprintf(lines[nlines++], sizeof lines[0], fmt, ap);
    va_end(ap);
}

/* World rank of `rank` in comm. */
static int wr(MPI_Comm comm, int rank)
{
    MPI_Group g, w;
    int out = -1;
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    MPI_Group_translate_ranks(g, 1, &rank, w, &out);
    MPI_Group_free(&g);
    MPI_Group_free(&w);
    return out;
}

/* Message size (bytes, a multiple of 4) from world source to world destination in phase p. */
static int msg_bytes(int src, int dst, int phase)
{
    return 4 * (1 + phase * 64 + src * 8 + dst);
}

static void coll(const char *comm, const char *fn, int root, int bytes)
{
    line("coll %s %s %d %d", comm, fn, root, bytes);
}

static void sent(const char *comm, int dst_world, int tag, int bytes)
{
    line("send %s %d %d %d %d", comm, world_rank, dst_world, tag, bytes);
}

static void got(const char *comm, MPI_Comm c, const MPI_Status *st, int want_tag, int want_bytes,
                int want_src_world)
{
    int n = 0;
    MPI_Get_count(st, MPI_BYTE, &n);
    int src = wr(c, st->MPI_SOURCE);
    line("recv %s %d %d %d %d", comm, src, world_rank, st->MPI_TAG, n);
    if ((want_tag >= 0 && st->MPI_TAG != want_tag) || (want_bytes >= 0 && n != want_bytes) ||
        (want_src_world >= 0 && src != want_src_world)) {
        fprintf(stderr, "trace_known[%d]: %s: got src %d tag %d bytes %d\n", world_rank, comm, src,
                st->MPI_TAG, n);
        failures++;
    }
}

/* A receive whose status the program ignored: it knows what it asked for. */
static void got_known(const char *comm, int src_world, int tag, int bytes)
{
    line("recv %s %d %d %d %d", comm, src_world, world_rank, tag, bytes);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (argc < 2) {
        if (world_rank == 0)
            fprintf(stderr, "usage: trace_known FILE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int n = world_size, me = world_rank;
    int right = (me + 1) % n, left = (me + n - 1) % n;
    char *sbuf = calloc(1, 65536), *rbuf = calloc(1, 65536), *rbuf2 = calloc(1, 65536);
    char *pbuf[2] = {calloc(1, 65536), calloc(1, 65536)};
    MPI_Status st[4];

    /* A: world, receives from MPI_ANY_SOURCE, completed by MPI_Waitany. */
    {
        MPI_Request rq[4];
        MPI_Irecv(rbuf, 16384, MPI_BYTE, MPI_ANY_SOURCE, TAG_A, MPI_COMM_WORLD, &rq[0]);
        MPI_Irecv(rbuf2, 16384, MPI_BYTE, MPI_ANY_SOURCE, TAG_A, MPI_COMM_WORLD, &rq[1]);
        int br = msg_bytes(me, right, 0), bl = msg_bytes(me, left, 0) + 4 * 32;
        MPI_Isend(sbuf, br, MPI_BYTE, right, TAG_A, MPI_COMM_WORLD, &rq[2]);
        MPI_Isend(sbuf, bl, MPI_BYTE, left, TAG_A, MPI_COMM_WORLD, &rq[3]);
        sent("world", right, TAG_A, br);
        sent("world", left, TAG_A, bl);
        for (int k = 0; k < 4; k++) {
            int idx = -1;
            MPI_Status s;
            MPI_Waitany(4, rq, &idx, &s);
            if (idx < 2)
                got("world", MPI_COMM_WORLD, &s, TAG_A, -1, -1);
        }
    }

    /* B: a duplicate of world, MPI_ANY_TAG, completed by MPI_Testsome. */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    {
        MPI_Request rq[4];
        MPI_Irecv(rbuf, 16384, MPI_BYTE, left, MPI_ANY_TAG, dup, &rq[0]);
        MPI_Irecv(rbuf2, 16384, MPI_BYTE, right, MPI_ANY_TAG, dup, &rq[1]);
        int br = msg_bytes(me, right, 1), bl = msg_bytes(me, left, 1) + 4 * 32;
        MPI_Isend(sbuf, br, MPI_BYTE, right, TAG_B1, dup, &rq[2]);
        MPI_Isend(sbuf, bl, MPI_BYTE, left, TAG_B2, dup, &rq[3]);
        sent("dup", right, TAG_B1, br);
        sent("dup", left, TAG_B2, bl);
        int done = 0;
        while (done < 4) {
            int out = 0, idx[4];
            MPI_Testsome(4, rq, &out, idx, st);
            for (int j = 0; out != MPI_UNDEFINED && j < out; j++) {
                /* non-overtaking: from one source, TAG_B1 was sent before TAG_B2 */
                if (idx[j] == 0)
                    got("dup", dup, &st[j], TAG_B1, msg_bytes(left, me, 1), left);
                else if (idx[j] == 1)
                    got("dup", dup, &st[j], TAG_B2, msg_bytes(right, me, 1) + 4 * 32, right);
            }
            done += out == MPI_UNDEFINED ? 4 : out;
        }
    }

    /* C: a split of world (even and odd ranks): MPI_Sendrecv, then Isend/Irecv completed by
     * MPI_Waitall with MPI_STATUSES_IGNORE. */
    MPI_Comm split;
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &split);
    const char *sname = me % 2 ? "split1" : "split0";
    {
        int sr, sn;
        MPI_Comm_rank(split, &sr);
        MPI_Comm_size(split, &sn);
        int sright = (sr + 1) % sn, sleft = (sr + sn - 1) % sn;
        int wright = wr(split, sright), wleft = wr(split, sleft);
        int b = msg_bytes(me, wright, 2);
        MPI_Status s;
        MPI_Sendrecv(sbuf, b, MPI_BYTE, sright, TAG_C, rbuf, 16384, MPI_BYTE, MPI_ANY_SOURCE,
                     MPI_ANY_TAG, split, &s);
        sent(sname, wright, TAG_C, b);
        got(sname, split, &s, TAG_C, msg_bytes(wleft, me, 2), wleft);

        MPI_Request rq[2];
        int b2 = msg_bytes(me, wright, 3);
        MPI_Irecv(rbuf, 16384, MPI_BYTE, sleft, TAG_C + 1, split, &rq[0]);
        MPI_Isend(sbuf, b2, MPI_BYTE, sright, TAG_C + 1, split, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        sent(sname, wright, TAG_C + 1, b2);
        got_known(sname, wleft, TAG_C + 1, msg_bytes(wleft, me, 3));
    }

    /* D: persistent requests on world, started three times with MPI_Startall. */
    {
        MPI_Request rq[2];
        int b = msg_bytes(me, right, 4);
        MPI_Recv_init(pbuf[0], 16384, MPI_BYTE, left, TAG_D, MPI_COMM_WORLD, &rq[0]);
        MPI_Send_init(pbuf[1], b, MPI_BYTE, right, TAG_D, MPI_COMM_WORLD, &rq[1]);
        for (int it = 0; it < 3; it++) {
            MPI_Startall(2, rq);
            MPI_Waitall(2, rq, st);
            sent("world", right, TAG_D, b);
            got("world", MPI_COMM_WORLD, &st[0], TAG_D, msg_bytes(left, me, 4), left);
        }
        MPI_Request_free(&rq[0]);
        MPI_Request_free(&rq[1]);
    }

    /* E: a blocking receive with MPI_STATUS_IGNORE, a send to MPI_PROC_NULL (no message). */
    {
        MPI_Request rq;
        int b = msg_bytes(me, right, 5);
        MPI_Isend(sbuf, b, MPI_BYTE, right, TAG_E, MPI_COMM_WORLD, &rq);
        MPI_Recv(rbuf, 16384, MPI_BYTE, left, TAG_E, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        sent("world", right, TAG_E, b);
        got_known("world", left, TAG_E, msg_bytes(left, me, 5));
        MPI_Send(sbuf, 8, MPI_BYTE, MPI_PROC_NULL, TAG_E, MPI_COMM_WORLD);
    }

    /* F: collectives: a broadcast from a root on world and on dup, an allreduce on split. */
    {
        int root = 1 % n, v = me, sum = 0;
        MPI_Bcast(rbuf, 64, MPI_BYTE, root, MPI_COMM_WORLD);
        coll("world", "MPI_Bcast", root, 64);
        MPI_Bcast(rbuf, 32, MPI_BYTE, 0, dup);
        coll("dup", "MPI_Bcast", wr(dup, 0), 32);
        MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, split);
        coll(sname, "MPI_Allreduce", -1, 4);
    }

    /* G: a communicator made by MPI_Comm_idup (completed by MPI_Wait), a message on it, and a
     * non-blocking barrier. */
    {
        MPI_Comm idup;
        MPI_Request rq;
        MPI_Comm_idup(dup, &idup, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        int b = msg_bytes(me, right, 6);
        MPI_Status s;
        MPI_Sendrecv(sbuf, b, MPI_BYTE, right, TAG_G, rbuf, 16384, MPI_BYTE, left, TAG_G, idup, &s);
        sent("idup", right, TAG_G, b);
        got("idup", idup, &s, TAG_G, msg_bytes(left, me, 6), left);
        MPI_Ibarrier(idup, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        coll("idup", "MPI_Ibarrier", -1, 0);
        MPI_Comm_free(&idup);
    }

    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);

    /* The ground truth, one rank after the other. */
    for (int r = 0; r < n; r++) {
        if (r == me) {
            FILE *f = fopen(argv[1], me == 0 ? "w" : "a");
            if (!f) {
                perror(argv[1]);
                failures++;
            } else {
                for (int i = 0; i < nlines; i++)
                    fprintf(f, "%s\n", lines[i]);
                fclose(f);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("trace_known: %d ranks, %d unexpected receives\n", n, all);
    free(sbuf);
    free(rbuf);
    free(rbuf2);
    free(pbuf[0]);
    free(pbuf[1]);
    MPI_Finalize();
    return all ? 1 : 0;
}
