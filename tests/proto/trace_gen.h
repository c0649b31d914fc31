/* trace_gen.h: a realistic per-window trace of one rank, for the codec's tests and
 * bench/trace-codec.c: a 3-D 7-point stencil as the shim records it (docs/trace.md).
 *
 * Per step: 6 MPI_Irecv posts, 6 MPI_Isend posts (one per neighbour, tag by direction, halo
 * bytes by direction), one MPI_Waitall (a CALL record) followed by its 12 completions
 * (RECV_DONE with the actual source, tag, bytes and channel index; SEND_DONE with its post's
 * fields), and one MPI_Allreduce of 8 bytes on another communicator: 14 calls, 26 records.
 * Times in ns from the window's start, as the shim converts them: posting gaps and durations
 * log-normal around a few hundred ns, the wait and the allreduce around tens of µs with
 * jitter, compute between steps filling the window. Records are in end order, as one thread's
 * ring holds them. Request numbers, channel indices and collective instances continue from
 * window to window, as they do in a job. The function ids are the table's (mw_proto.h).
 * `irregular` makes it harder to predict: receives posted from MPI_ANY_SOURCE with
 * MPI_ANY_TAG, message sizes that vary by up to 4 KiB, completions in a random order.
 */
#ifndef MW_TRACE_GEN_H
#define MW_TRACE_GEN_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "mw_proto.h"
#include "mw_trace.h"

typedef struct {
    uint64_t rng;
    int32_t nbr[6];
    uint32_t next_req;
    uint64_t send_seq[6], recv_seq[6], coll_seq;
    uint64_t comm_cart, comm_world;
    int irregular; /* receives from MPI_ANY_SOURCE, message sizes that vary, completions in a
                    * random order (as Testsome or Waitany loops report them) */
} mw_tgen_t;

static inline uint64_t mw_tgen_u64(mw_tgen_t *g)
{
    uint64_t x = g->rng += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static inline double mw_tgen_unit(mw_tgen_t *g)
{
    return (double)(mw_tgen_u64(g) >> 11) * (1.0 / 9007199254740992.0);
}

/* A log-normal value around `median` with spread `sigma` (Box-Muller). */
static inline uint64_t mw_tgen_lognormal(mw_tgen_t *g, double median, double sigma)
{
    double u1 = mw_tgen_unit(g), u2 = mw_tgen_unit(g);
    if (u1 < 1e-300)
        u1 = 1e-300;
    double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
    return (uint64_t)(median * exp(sigma * z));
}

/* Rank `rank` of a px x py x pz periodic grid. */
static inline void mw_tgen_init(mw_tgen_t *g, uint64_t seed, int rank, int px, int py, int pz)
{
    memset(g, 0, sizeof *g);
    g->rng = seed;
    int x = rank % px, y = rank / px % py, z = rank / (px * py);
    int c[6][3] = {{x - 1, y, z}, {x + 1, y, z}, {x, y - 1, z},
                   {x, y + 1, z}, {x, y, z - 1}, {x, y, z + 1}};
    for (int d = 0; d < 6; d++) {
        int cx = (c[d][0] + px) % px, cy = (c[d][1] + py) % py, cz = (c[d][2] + pz) % pz;
        g->nbr[d] = cx + px * (cy + py * cz);
    }
    g->next_req = 1;
    g->comm_cart = 0x8c3f2a71d09e55b1ull; /* a job-wide id as the shim hashes them */
    g->comm_world = MW_COMM_ID_WORLD;
}

#define MW_TGEN_RECS_PER_STEP 26u
#define MW_TGEN_CALLS_PER_STEP 14u

/* Fills out[] (room for MW_TGEN_RECS_PER_STEP per step) with one window of about `calls`
 * calls over `window_ns`; returns the records written (*ncalls: the calls among them). */
static inline size_t mw_tgen_window(mw_tgen_t *g, mw_trace_rec_t *out, size_t calls,
                                    uint64_t window_ns, size_t *ncalls)
{
    size_t steps = calls / MW_TGEN_CALLS_PER_STEP ? calls / MW_TGEN_CALLS_PER_STEP : 1;
    uint64_t period = window_ns / steps;
    static const uint64_t halo[6] = {32768, 32768, 16384, 16384, 8192, 8192};
    size_t n = 0;
    int64_t t = (int64_t)(mw_tgen_u64(g) % 2000);
    for (size_t s = 0; s < steps; s++) {
        int64_t step0 = t;
        uint32_t rreq[6], sreq[6];
        for (int pass = 0; pass < 2; pass++)
            for (int d = 0; d < 6; d++) {
                mw_trace_rec_t *r = &out[n++];
                memset(r, 0, sizeof *r);
                r->start_ns = t;
                r->dur_ns = mw_tgen_lognormal(g, 250, 0.4);
                r->comm = g->comm_cart;
                r->peer = g->nbr[d];
                r->tag = 100 + (pass ? (d ^ 1) : d); /* a send in direction d arrives from d^1 */
                r->req = g->next_req++;
                if (pass == 0) {
                    r->kind = MW_TK_IRECV;
                    r->fn = MW_ID_Irecv;
                    rreq[d] = r->req;
                    if (g->irregular)
                        r->peer = r->tag = MW_TRACE_ANY;
                } else {
                    r->kind = MW_TK_ISEND;
                    r->fn = MW_ID_Isend;
                    r->bytes = halo[d] + (g->irregular ? 8 * (mw_tgen_u64(g) % 512) : 0);
                    r->seq = g->send_seq[d]++;
                    sreq[d] = r->req;
                }
                t += (int64_t)r->dur_ns + (int64_t)mw_tgen_lognormal(g, 60, 0.5);
            }
        mw_trace_rec_t *w = &out[n++];
        memset(w, 0, sizeof *w);
        w->start_ns = t;
        w->dur_ns = mw_tgen_lognormal(g, period * 0.2 < 30000 ? period * 0.2 : 30000, 1.0);
        w->peer = -1;
        w->kind = MW_TK_CALL;
        w->fn = MW_ID_Waitall;
        int64_t end = t + (int64_t)w->dur_ns;
        for (int pass = 0; pass < 2; pass++)
            for (int d = 0; d < 6; d++) {
                mw_trace_rec_t *r = &out[n++];
                memset(r, 0, sizeof *r);
                r->start_ns = end;
                r->comm = g->comm_cart;
                r->fn = MW_ID_Waitall;
                r->peer = g->nbr[d];
                if (pass == 0) {
                    r->kind = MW_TK_RECV_DONE;
                    r->req = rreq[d];
                    r->tag = 100 + d;
                    r->bytes = halo[d ^ 1] + (g->irregular ? 8 * (mw_tgen_u64(g) % 512) : 0);
                    r->seq = g->recv_seq[d]++;
                } else {
                    r->kind = MW_TK_SEND_DONE;
                    r->req = sreq[d];
                    r->tag = 100 + (d ^ 1);
                    r->bytes = out[n - 14].bytes; /* its post's (12 records back) */
                    r->seq = g->send_seq[d] - 1;
                }
            }
        if (g->irregular) /* the 12 completions in a random order */
            for (size_t i = n - 12; i < n - 1; i++) {
                size_t j = i + mw_tgen_u64(g) % (n - i);
                mw_trace_rec_t x = out[i];
                out[i] = out[j];
                out[j] = x;
            }
        t = end + (int64_t)mw_tgen_lognormal(g, 40, 0.5);
        mw_trace_rec_t *a = &out[n++];
        memset(a, 0, sizeof *a);
        a->start_ns = t;
        a->dur_ns = mw_tgen_lognormal(g, period * 0.05 < 8000 ? period * 0.05 : 8000, 1.0);
        a->comm = g->comm_world;
        a->peer = -1;
        a->bytes = 8;
        a->seq = g->coll_seq++;
        a->kind = MW_TK_COLL;
        a->fn = MW_ID_Allreduce;
        t += (int64_t)a->dur_ns;
        /* compute until the next step */
        int64_t next = step0 + (int64_t)period;
        if (next > t)
            t = next + (int64_t)(mw_tgen_u64(g) % 1000) - 500;
        if (t < a->start_ns + (int64_t)a->dur_ns)
            t = a->start_ns + (int64_t)a->dur_ns;
    }
    *ncalls = steps * MW_TGEN_CALLS_PER_STEP;
    return n;
}

#endif
