/* testpartial.c: real partials from an aggregator collector (testpartial.h). */
#include "testpartial.h"

#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "partial.h"

typedef struct {
    fx_t *f;
    mw_pb_encoder_t enc;
    uint32_t agg_id;
    uint64_t seq;
    tp_frame_t *out;
    size_t n, max;
} agg_t;

static void keep(agg_t *a, size_t len)
{
    if (len == 0 || a->n == a->max)
        return;
    tp_frame_t *o = &a->out[a->n];
    if (!(o->b = malloc(len)))
        return;
    memcpy(o->b, a->enc.out, len);
    o->n = len;
    a->n++;
}

static void on_window(const mw_window_t *w, void *user)
{
    agg_t *a = user;
    keep(a, mw__partial_envelope_pack(a->f->c, &a->enc, w, a->agg_id, a->seq++));
}

/* A sample with a bit of everything a partial carries per rank and per window: functions with
 * histograms, peers with their sending function, occupancy, density, long calls, a region and a
 * call site (defined by rank 0 in the first window), values of every size. */
static void sample(tm_msg_t *m, const char *job, uint32_t r, uint32_t size, uint64_t w, unsigned k,
                   uint64_t now)
{
    tm_sample(m, job, r, w, now);
    for (int i = 0; i < 5; i++) {
        Mpiwatch__FunctionStat *f = tm_add_fn(m, fx_fn(i), 3 + i + r % 5 + k,
                                              (10000u + 999u * r) * (uint64_t)(i + 1) << (k % 3),
                                              100 + i, 9000 + r % 50 + 7 * k, 64u * i << (r % 20));
        f->hist_first = 6;
        f->n_hist = 4;
        for (int b = 0; b < 4; b++)
            m->hist[i][b] = 1 + (uint32_t)b + r % 3;
    }
    for (uint32_t p = 1; p <= 3; p++)
        tm_add_peer_fn(m, (r + p) % size, fx_fn((int)p % 2), p + k, (1024ull * p) << (r % 30));
    for (uint32_t s = 0; s < 4; s++)
        tm_add_occ(m, fx_fn((int)s % 2), s * 3, 100000 + r % 1000);
    tm_add_density(m, fx_fn(0), 3, 12, 1, 5 + r);
    tm_add_density(m, fx_fn(1), (int32_t)(r % 16), 10, 0, 2);
    tm_add_call(m, fx_fn(0), now - 50000, 9000 + r % 5000, 8, -1);
    tm_add_call(m, fx_fn(1), now - 40000, 8000 + r * 37 % 3000, 64, (int32_t)((r + 1) % size));
    if (r == 0 && k == 0) {
        tm_add_region_def(m, 1, "tp_region", 1);
        tm_add_site_def(m, 1, "/tp/app", 0x40, "main", "tp.c", 12);
    }
    tm_add_region(m, 1, 2 + r, 40000 + r, 30000, 20000);
    tm_add_site(m, 1, fx_fn(0), 10, 50000 + r, 800, 20000);
}

size_t tp_aggregator_frames(const char *job, uint32_t ranks, unsigned windows, uint32_t agg_id,
                            tp_frame_t *out, size_t max)
{
    agg_t a = {.f = fx_new(), .agg_id = agg_id, .out = out, .max = max};
    a.f->opt.upstream = strdup("tcp://127.0.0.1:1"); /* aggregator mode, no socket here */
    a.f->c->report_out = NULL;
    a.f->c->on_window = on_window;
    a.f->c->on_window_user = &a;
    fx_hellos(a.f, job, ranks);
    keep(&a, mw__aggstate_envelope_pack(a.f->c, &a.enc, agg_id, a.seq++, 0));
    int ok = a.n == 1;
    for (unsigned k = 0; ok && k < windows && a.n < max; k++) {
        if (k) { /* a window ahead by more than MW_SAMPLE_MAX_LEAD_NS is refused */
            a.f->now.real_ns += TM_WINDOW_NS;
            a.f->now.mono_ns += TM_WINDOW_NS;
        }
        size_t before = a.n;
        for (uint32_t r = 0; ok && r < ranks; r++) {
            static tm_msg_t m;
            sample(&m, job, r, ranks, FX_W0 + k, k, a.f->now.real_ns);
            ok = fx_feed(a.f, &m) == MW_ACCEPTED;
        }
        ok = ok && a.n == before + 1; /* the last rank's sample closed the window */
    }
    mw__pb_encoder_free(&a.enc);
    fx_free(a.f);
    if (!ok) {
        tp_frames_free(out, a.n);
        return 0;
    }
    return a.n;
}

void tp_frames_free(tp_frame_t *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(f[i].b);
        f[i].b = NULL;
    }
}
