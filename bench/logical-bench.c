/* logical-bench.c: the logical-structure extraction's speed on one core (proto/mw_logical.h,
 * docs/logical.md "Performance").
 *
 * Synthetic traces as the shim records them, generated window by window and pushed through
 * one stream (mw_logical_stream_push, then a gap at the end); only the pushes and the gap are
 * timed (the thread's CPU time, as the machine may be shared). Two patterns: a periodic 1-D stencil
 * (per iteration and rank: two Irecv posts, Isend left and right, a Waitall and its four
 * completions: 4 events in 9 records) and a ring (blocking send to the right, receive from the
 * left: 2 events in 2 records). A few ranks are late by a random amount now and then, so that
 * lateness is not all zero. Each configuration runs `runs` times; the median is printed, as seconds
 * per million events.
 *
 *   mw-bench-logical [events_per_config (default 1000000)] [runs (default 5)]
 */
#include "mw_logical.h"
#include "mw_proto.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    const char *name;
    int stencil;
    uint32_t ranks;
    uint32_t iters_per_window;
    uint32_t flags;
} config_t;

static uint64_t rng(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static mw_trace_rec_t mk(uint8_t kind, uint16_t fn, int64_t t, uint64_t dur, int32_t peer,
                         int32_t tag, uint64_t seq, uint32_t req)
{
    mw_trace_rec_t r;
    memset(&r, 0, sizeof r);
    r.kind = kind;
    r.fn = fn;
    r.start_ns = t;
    r.dur_ns = dur;
    r.comm = MW_COMM_ID_WORLD;
    r.peer = peer;
    r.tag = tag;
    r.seq = seq;
    r.req = req;
    return r;
}

/* One window of the pattern: iterations [it0, it0 + n) into recs[rank]; returns events. */
static uint64_t gen_window(const config_t *c, uint64_t it0, uint64_t *x, mw_trace_rec_t **recs,
                           size_t *nrec, int64_t *delay)
{
    uint32_t R = c->ranks;
    const int64_t ITER = 20000;
    uint64_t events = 0;
    for (uint32_t r = 0; r < R; r++)
        nrec[r] = 0;
    for (uint64_t it = it0; it < it0 + c->iters_per_window; it++) {
        int64_t T = (int64_t)(it - it0) * ITER;
        for (uint32_t r = 0; r < R; r++)
            delay[r] = rng(x) % 64 == 0 ? (int64_t)(rng(x) % 5000) : (int64_t)(rng(x) % 50);
        for (uint32_t r = 0; r < R; r++) {
            uint32_t left = (r + R - 1) % R, right = (r + 1) % R;
            int64_t p = T + delay[r];
            mw_trace_rec_t *o = recs[r];
            size_t n = nrec[r];
            if (c->stencil) {
                int64_t wend = p + 300;
                if (T + delay[left] + 300 > wend)
                    wend = T + delay[left] + 300;
                if (T + delay[right] + 200 > wend)
                    wend = T + delay[right] + 200;
                o[n++] = mk(MW_TK_IRECV, MW_ID_Irecv, p - 100, 50, (int32_t)left, 1, 0, 1);
                o[n++] = mk(MW_TK_IRECV, MW_ID_Irecv, p - 50, 50, (int32_t)right, 0, 0, 2);
                o[n++] = mk(MW_TK_ISEND, MW_ID_Isend, p, 100, (int32_t)left, 0, it, 3);
                o[n++] = mk(MW_TK_ISEND, MW_ID_Isend, p + 100, 100, (int32_t)right, 1, it, 4);
                o[n++] =
                    mk(MW_TK_CALL, MW_ID_Waitall, p + 200, (uint64_t)(wend - p - 200), -1, 0, 0, 0);
                o[n++] = mk(MW_TK_RECV_DONE, MW_ID_Waitall, wend, 0, (int32_t)left, 1, it, 1);
                o[n++] = mk(MW_TK_RECV_DONE, MW_ID_Waitall, wend, 0, (int32_t)right, 0, it, 2);
                o[n++] = mk(MW_TK_SEND_DONE, MW_ID_Waitall, wend, 0, (int32_t)left, 0, 0, 3);
                o[n++] = mk(MW_TK_SEND_DONE, MW_ID_Waitall, wend, 0, (int32_t)right, 1, 0, 4);
                events += 4;
            } else {
                int64_t arrive = T + delay[left] + 200;
                int64_t rend = p + 200 > arrive ? p + 200 : arrive;
                o[n++] = mk(MW_TK_SEND, MW_ID_Send, p, 100, (int32_t)right, 0, it, 0);
                o[n++] = mk(MW_TK_RECV, MW_ID_Recv, p + 100, (uint64_t)(rend - p - 100),
                            (int32_t)left, 0, it, 0);
                events += 2;
            }
            nrec[r] = n;
        }
    }
    return events;
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Pushes windows until `target` events; returns the seconds spent in the stream. */
static double run_once(const config_t *c, uint64_t target, uint64_t *events_out,
                       uint64_t *finalized)
{
    uint32_t R = c->ranks;
    size_t per = (size_t)c->iters_per_window * 9;
    mw_trace_rec_t **recs = calloc(R, sizeof *recs);
    size_t *nrec = calloc(R, sizeof *nrec);
    int64_t *delay = calloc(R, sizeof *delay);
    mw_logical_rank_t *rk = calloc(R, sizeof *rk);
    if (!recs || !nrec || !delay || !rk)
        exit(1);
    for (uint32_t r = 0; r < R; r++)
        if (!(recs[r] = malloc(per * sizeof **recs)))
            exit(1);
    mw_logical_opts_t o;
    memset(&o, 0, sizeof o);
    o.flags = c->flags;
    mw_logical_stream_t *s = mw_logical_stream_new(&o);
    uint64_t x = 42, events = 0, it = 0, w = 0, fin = 0;
    double spent = 0;
    mw_logical_batch_t out;
    while (events < target) {
        events += gen_window(c, it, &x, recs, nrec, delay);
        it += c->iters_per_window;
        for (uint32_t r = 0; r < R; r++) {
            rk[r].rank = r;
            rk[r].recs = recs[r];
            rk[r].n = nrec[r];
        }
        double t0 = now();
        if (mw_logical_stream_push(s, w, (int64_t)w * 20000 * c->iters_per_window, rk, R, &out))
            exit(1);
        spent += now() - t0;
        fin += out.nevents;
        mw_logical_batch_free(&out);
        w++;
    }
    double t0 = now();
    if (mw_logical_stream_gap(s, &out))
        exit(1);
    spent += now() - t0;
    fin += out.nevents;
    mw_logical_batch_free(&out);
    mw_logical_stream_free(s);
    for (uint32_t r = 0; r < R; r++)
        free(recs[r]);
    free(recs);
    free(nrec);
    free(delay);
    free(rk);
    *events_out = events;
    *finalized = fin;
    return spent;
}

int main(int argc, char **argv)
{
    uint64_t target = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    if (runs < 1 || runs > 99 || target == 0)
        return 2;
    const config_t cfg[] = {
        {"stencil", 1, 64, 40, MW_LOGICAL_LEAP},
        {"stencil", 1, 1024, 4, MW_LOGICAL_LEAP},
        {"ring", 0, 64, 80, MW_LOGICAL_LEAP},
        {"ring", 0, 1024, 8, MW_LOGICAL_LEAP},
        {"stencil", 1, 64, 40, 0},
        {"stencil", 1, 1024, 4, 0},
    };
    printf("%-8s %6s %5s %10s %12s %14s\n", "pattern", "ranks", "leap", "events", "s/Mevents",
           "events/window");
    for (size_t i = 0; i < sizeof cfg / sizeof cfg[0]; i++) {
        double t[99];
        uint64_t ev = 0, fin = 0;
        for (int k = 0; k < runs; k++) {
            t[k] = run_once(&cfg[i], target, &ev, &fin);
            if (fin != ev) {
                fprintf(stderr, "%s: %llu events in, %llu out\n", cfg[i].name,
                        (unsigned long long)ev, (unsigned long long)fin);
                return 1;
            }
        }
        qsort(t, (size_t)runs, sizeof t[0], dbl_cmp);
        double med = t[runs / 2];
        printf("%-8s %6u %5s %10llu %12.3f %14u\n", cfg[i].name, cfg[i].ranks,
               cfg[i].flags ? "on" : "off", (unsigned long long)ev, med * 1e6 / (double)ev,
               cfg[i].ranks * cfg[i].iters_per_window * (cfg[i].stencil ? 4u : 2u));
    }
    return 0;
}
