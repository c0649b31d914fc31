/* fixture.h: a collector without sockets, a fixed clock, and a way to feed it messages.
 *
 * The unit tests drive mw_collector_frame() with packed envelopes (so decoding is exercised
 * too) and move time by hand: real time is fixed in November 2023, monotonic time starts at
 * 1000 s. Closed windows are copied into a small log for the merge tests to inspect.
 */
#ifndef MW_TEST_FIXTURE_H
#define MW_TEST_FIXTURE_H

#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "testmsg.h"

#define FX_REAL_NS 1700000000000000000ull
#define FX_MONO_NS 1000000000000ull
#define FX_W0 (FX_REAL_NS / TM_WINDOW_NS) /* the window containing the fixed real time */
#define FX_MAX_CLOSED 64

/* A closed window as the tests see it (the mw_window_t is only valid in the callback). */
typedef struct {
    uint64_t index;
    uint64_t start_ns, window_ns; /* its place on the job's grid */
    uint32_t reporting, missing;
    uint64_t mpi_time_ns, occ_total_ns;
    double mpi_fraction, occ_fraction;
    mw_fn_sum_t fn[8]; /* of the fx_fn ids below */
    uint64_t occ[8][TM_SUBSLOTS];
    uint32_t n_density, n_pairs, n_longest;
    mw_density_cell_t density[16];
    mw_pair_sum_t pairs[16];
    mw_merge_call_t longest[MW_MERGE_LONGEST];
    uint64_t records_dropped, samples_dropped, calls_late;
    uint32_t rank_pm[8], n_rank_pm; /* the first 8 ranks' MPI shares, and how many there are */
} fx_window_t;

typedef struct {
    mw_collector_options_t opt;
    mw_collector_t *c;
    mw_clock_t now;
    fx_window_t closed[FX_MAX_CLOSED];
    unsigned n_closed;
} fx_t;

/* The function ids the tests use, looked up by name (ids change with the table). */
/* The system clocks now: what a recording's first frame is stamped with (the tests play the
 * outer loop, the only reader of the clocks). */
static inline const mw_clock_t *fx_wall_clock(void)
{
    static mw_clock_t now;
    mw__clock_now(&now);
    return &now;
}

static inline unsigned fx_fn(int i)
{
    static const char *const names[8] = {"MPI_Allreduce", "MPI_Send", "MPI_Recv",  "MPI_Barrier",
                                         "MPI_Bcast",     "MPI_Wait", "MPI_Isend", "MPI_Irecv"};
    unsigned id = mw_fn_id(names[i]);
    if (id == 0)
        abort(); /* the table lost a basic function: every test would be meaningless */
    return id;
}

static inline void fx_on_window(const mw_window_t *w, void *user)
{
    fx_t *f = user;
    if (f->n_closed == FX_MAX_CLOSED)
        return;
    fx_window_t *o = &f->closed[f->n_closed++];
    memset(o, 0, sizeof *o);
    o->index = w->index;
    o->start_ns = w->start_ns;
    o->window_ns = w->window_ns;
    o->reporting = w->ranks_reporting;
    o->missing = w->ranks_missing;
    o->mpi_time_ns = w->mpi_time_ns;
    o->mpi_fraction = w->mpi_fraction;
    o->occ_total_ns = w->occ_total_ns;
    o->n_rank_pm = w->n_rank_pm;
    for (uint32_t r = 0; r < w->n_rank_pm && r < 8; r++)
        o->rank_pm[r] = w->rank_pm[r];
    o->occ_fraction = w->occ_fraction;
    o->records_dropped = w->records_dropped;
    o->samples_dropped = w->samples_dropped;
    o->calls_late = w->calls_late;
    for (int i = 0; i < 8; i++) {
        o->fn[i] = w->fn[fx_fn(i)];
        memcpy(o->occ[i], &w->occ_ns[(size_t)fx_fn(i) * w->subslots],
               sizeof o->occ[i][0] * (w->subslots < TM_SUBSLOTS ? w->subslots : TM_SUBSLOTS));
    }
    o->n_density = w->density.n;
    for (uint32_t i = 0; i < w->density.n && i < 16; i++)
        o->density[i] = *MW__INDEX_AT(&w->density, mw_density_cell_t, i);
    o->n_pairs = w->pairs.n;
    for (uint32_t i = 0; i < w->pairs.n && i < 16; i++)
        o->pairs[i] = *MW__INDEX_AT(&w->pairs, mw_pair_sum_t, i);
    o->n_longest = w->n_longest;
    memcpy(o->longest, w->longest, w->n_longest * sizeof *w->longest);
}

static inline fx_t *fx_new(void)
{
    fx_t *f = calloc(1, sizeof *f);
    if (!f)
        abort();
    mw__log_level = MW_LOG_ERROR;
    mw_collector_options_defaults(&f->opt);
    f->opt.quiet = 1;
    f->c = malloc(sizeof *f->c);
    if (!f->c || mw_collector_init(f->c, &f->opt) < 0)
        abort();
    f->c->on_window = fx_on_window;
    f->c->on_window_user = f;
    f->now.real_ns = FX_REAL_NS;
    f->now.mono_ns = FX_MONO_NS;
    return f;
}

static inline void fx_free(fx_t *f)
{
    mw_collector_free(f->c);
    free(f->c);
    mw_collector_options_free(&f->opt);
    free(f);
}

static inline mw_reject_t fx_feed(fx_t *f, const tm_msg_t *m)
{
    uint8_t *buf;
    size_t n = tm_pack(m, &buf);
    mw_reject_t r = mw_collector_frame(f->c, buf, n, 1, &f->now);
    free(buf);
    return r;
}

/* Advances both clocks by `ms` and runs the timers. */
static inline void fx_advance(fx_t *f, uint64_t ms)
{
    f->now.mono_ns += ms * MW_NS_PER_MS;
    f->now.real_ns += ms * MW_NS_PER_MS;
    mw_collector_tick(f->c, &f->now);
}

/* Says hello for ranks 0..size-1 of job `job`. */
static inline void fx_hellos(fx_t *f, const char *job, uint32_t size)
{
    tm_msg_t m;
    for (uint32_t r = 0; r < size; r++) {
        tm_hello(&m, job, r, size, f->now.real_ns);
        if (fx_feed(f, &m) != MW_ACCEPTED)
            abort();
    }
}

#endif
