/* logical_patterns.c: MPI programs with a known logical structure and a known delay, for the
 * logical steps and lateness of docs/logical.md (Ravel's method).
 *
 * Usage: logical_patterns PATTERN [-n ITERS] [-d DELAY_MS] [-r RANK] [-i ITER] [-k K]
 *                                 [-c COMPUTE_MS]
 *   ring      each iteration: Isend to the right, Recv from the left, Wait. Rank RANK sleeps
 *             DELAY_MS once, before its Isend of iteration ITER.
 *   stencil   a periodic 1-D halo: Irecv left and right, Isend left and right, Waitall. Rank
 *             RANK sleeps DELAY_MS before its sends in every iteration i with i % K == ITER % K
 *             (one slow rank every K iterations).
 *   kary      a K-ary tree (the merge tree of the paper's case study): each iteration gathers
 *             up the levels (a child sends to its parent, a parent receives from its children
 *             in order) and scatters down again. Rank RANK sleeps DELAY_MS before its gather
 *             send of iteration ITER. The number of ranks should be a power of K.
 *   mixed     each iteration: a ring exchange (Isend/Irecv/Waitall), MPI_Allreduce, a
 *             MPI_Sendrecv with the neighbours, MPI_Bcast from a rotating root, MPI_Ibarrier
 *             and MPI_Wait. Rank RANK sleeps before its ring send of iteration ITER.
 *   wildcard  a master and workers: each worker sends to rank 0, which receives with
 *             MPI_ANY_SOURCE and MPI_ANY_TAG (blocking Recv in even iterations, Irecv and
 *             Waitall in odd ones), then answers every worker. Rank RANK sleeps before its send
 *             of iteration ITER.
 * Every rank sleeps COMPUTE_MS (the computation) at the start of each iteration. Messages of
 * iteration i carry tag i (kary: i * 64 + level; the answers of wildcard: i + 16384), so a
 * trace tells the iteration of each message. The run starts and ends with MPI_Barrier.
 * Defaults: 8 iterations, delay 100 ms, rank 1, iteration 3, K 2 (stencil: 3), compute 2 ms.
 * Rank 0 prints one line: "logical_patterns PATTERN ranks=N iters=N delay_ms=N rank=N iter=N
 * k=N compute_ms=N". Exit status 0, or 2 on a usage error.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    const char *pattern;
    int iters, delay_ms, slow_rank, slow_iter, k, compute_ms;
} opts_t;

static int me, np;

static void sleep_ms(int ms)
{
    if (ms <= 0)
        return;
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* The delay of rank `me` before its sends of iteration `it`. */
static void maybe_delay(const opts_t *o, int it)
{
    if (me != o->slow_rank)
        return;
    int slow = strcmp(o->pattern, "stencil") == 0 ? o->k > 0 && it % o->k == o->slow_iter % o->k
                                                  : it == o->slow_iter;
    if (slow)
        sleep_ms(o->delay_ms);
}

static void ring(const opts_t *o)
{
    int right = (me + 1) % np, left = (me + np - 1) % np;
    for (int it = 0; it < o->iters; it++) {
        int out = me * 1000 + it, in = -1;
        MPI_Request rq;
        sleep_ms(o->compute_ms);
        maybe_delay(o, it);
        MPI_Isend(&out, 1, MPI_INT, right, it, MPI_COMM_WORLD, &rq);
        MPI_Recv(&in, 1, MPI_INT, left, it, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
    }
}

static void stencil(const opts_t *o)
{
    int right = (me + 1) % np, left = (me + np - 1) % np;
    double halo_out[2][16], halo_in[2][16];
    for (int it = 0; it < o->iters; it++) {
        MPI_Request rq[4];
        sleep_ms(o->compute_ms);
        for (int j = 0; j < 16; j++)
            halo_out[0][j] = halo_out[1][j] = me + it;
        MPI_Irecv(halo_in[0], 16, MPI_DOUBLE, left, it, MPI_COMM_WORLD, &rq[0]);
        MPI_Irecv(halo_in[1], 16, MPI_DOUBLE, right, it, MPI_COMM_WORLD, &rq[1]);
        maybe_delay(o, it);
        MPI_Isend(halo_out[0], 16, MPI_DOUBLE, left, it, MPI_COMM_WORLD, &rq[2]);
        MPI_Isend(halo_out[1], 16, MPI_DOUBLE, right, it, MPI_COMM_WORLD, &rq[3]);
        MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
    }
}

/* Level l of a K-ary tree: ranks that are multiples of K^l take part; a rank that is not a
 * multiple of K^(l+1) sends to its parent, the others receive from their children in order. */
static void kary(const opts_t *o)
{
    int k = o->k < 2 ? 2 : o->k, levels = 0;
    for (long s = 1; s < np; s *= k)
        levels++;
    for (int it = 0; it < o->iters; it++) {
        int v = it;
        sleep_ms(o->compute_ms);
        long s = 1;
        for (int l = 0; l < levels; l++, s *= k) { /* gather up */
            if (me % s != 0)
                continue;
            int tag = it * 64 + l;
            if ((me / s) % k != 0) {
                maybe_delay(o, it);
                MPI_Send(&v, 1, MPI_INT, (int)(me - ((me / s) % k) * s), tag, MPI_COMM_WORLD);
            } else {
                for (int c = 1; c < k && me + c * s < np; c++)
                    MPI_Recv(&v, 1, MPI_INT, (int)(me + c * s), tag, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
            }
        }
        for (int l = levels - 1; l >= 0; l--) { /* scatter down */
            s = 1;
            for (int j = 0; j < l; j++)
                s *= k;
            if (me % s != 0)
                continue;
            int tag = it * 64 + 32 + l;
            if ((me / s) % k != 0) {
                MPI_Recv(&v, 1, MPI_INT, (int)(me - ((me / s) % k) * s), tag, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            } else {
                for (int c = 1; c < k && me + c * s < np; c++)
                    MPI_Send(&v, 1, MPI_INT, (int)(me + c * s), tag, MPI_COMM_WORLD);
            }
        }
    }
}

static void mixed(const opts_t *o)
{
    int right = (me + 1) % np, left = (me + np - 1) % np;
    for (int it = 0; it < o->iters; it++) {
        int out = me + it, in = -1, a = -1, b = -1;
        double x = me, sum = 0;
        MPI_Request rq[2];
        sleep_ms(o->compute_ms);
        MPI_Irecv(&in, 1, MPI_INT, left, it, MPI_COMM_WORLD, &rq[0]);
        maybe_delay(o, it);
        MPI_Isend(&out, 1, MPI_INT, right, it, MPI_COMM_WORLD, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Sendrecv(&out, 1, MPI_INT, left, it, &a, 1, MPI_INT, right, it, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        b = it;
        MPI_Bcast(&b, 1, MPI_INT, it % np, MPI_COMM_WORLD);
        MPI_Request ib;
        MPI_Ibarrier(MPI_COMM_WORLD, &ib);
        MPI_Wait(&ib, MPI_STATUS_IGNORE);
    }
}

static void wildcard(const opts_t *o)
{
    for (int it = 0; it < o->iters; it++) {
        sleep_ms(o->compute_ms);
        if (me == 0) {
            int n = np - 1, got[64];
            if (n > 64)
                n = 64;
            if (it % 2 == 0) {
                for (int j = 0; j < n; j++)
                    MPI_Recv(&got[j], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
            } else {
                MPI_Request rq[64];
                for (int j = 0; j < n; j++)
                    MPI_Irecv(&got[j], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                              &rq[j]);
                MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
            }
            for (int w = 1; w <= n; w++)
                MPI_Send(&it, 1, MPI_INT, w, it + 16384, MPI_COMM_WORLD);
        } else if (me <= 64) {
            int v = me, back = -1;
            maybe_delay(o, it);
            MPI_Send(&v, 1, MPI_INT, 0, it, MPI_COMM_WORLD);
            MPI_Recv(&back, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
}

static int parse(opts_t *o, int argc, char **argv)
{
    *o = (opts_t){NULL, 8, 100, 1, 3, 0, 2};
    if (argc < 2)
        return -1;
    o->pattern = argv[1];
    for (int i = 2; i < argc; i++) {
        if (i + 1 >= argc || argv[i][0] != '-' || strlen(argv[i]) != 2)
            return -1;
        char *end;
        long v = strtol(argv[i + 1], &end, 10);
        if (*end || v < 0 || v > 1000000)
            return -1;
        switch (argv[i][1]) {
        case 'n':
            o->iters = (int)v;
            break;
        case 'd':
            o->delay_ms = (int)v;
            break;
        case 'r':
            o->slow_rank = (int)v;
            break;
        case 'i':
            o->slow_iter = (int)v;
            break;
        case 'k':
            o->k = (int)v;
            break;
        case 'c':
            o->compute_ms = (int)v;
            break;
        default:
            return -1;
        }
        i++;
    }
    if (o->k == 0)
        o->k = strcmp(o->pattern, "stencil") == 0 ? 3 : 2;
    return o->iters <= 16000 ? 0 : -1; /* tags stay below 2^20 (kary: 64 per iteration) */
}

int main(int argc, char **argv)
{
    opts_t o;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    static const char *const names[] = {"ring", "stencil", "kary", "mixed", "wildcard"};
    static void (*const fns[])(const opts_t *) = {ring, stencil, kary, mixed, wildcard};
    int which = -1;
    if (parse(&o, argc, argv) == 0)
        for (int i = 0; i < 5; i++)
            if (strcmp(o.pattern, names[i]) == 0)
                which = i;
    if (which < 0) {
        if (me == 0)
            fprintf(stderr, "usage: logical_patterns ring|stencil|kary|mixed|wildcard [-n ITERS] "
                            "[-d DELAY_MS] [-r RANK] [-i ITER] [-k K] [-c COMPUTE_MS]\n");
        MPI_Finalize();
        return 2;
    }
    if (me == 0)
        printf("logical_patterns %s ranks=%d iters=%d delay_ms=%d rank=%d iter=%d k=%d "
               "compute_ms=%d\n",
               o.pattern, np, o.iters, o.delay_ms, o.slow_rank, o.slow_iter, o.k, o.compute_ms);
    MPI_Barrier(MPI_COMM_WORLD);
    fns[which](&o);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
