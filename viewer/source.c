/* source.c: the viewer's data source, the part common to the live source (source_live.c) and
 * the replay source (source_replay.c): the calls of source.h that dispatch to the kind, the
 * rank request, the extent, and how a job description and windows reach the model.
 *
 * DESIGN: both kinds fill the model the same way: a job description is checked and handed over
 * (a different job resets what was learnt of the previous one), windows that arrive before the
 * job wait for it, and the extent reaches the model only once it has the job's grid (and, live
 * with a history endpoint, the history's first answer). See source_internal.h for the state.
 */
#include "source_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topo.h"

#define SOURCE_RANK_CALLS_MAX (1u << 24) /* calls one rank request may collect */

/* ---- helpers ------------------------------------------------------------------------------ */

void mw__source_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("mpiwatch-viewer: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

uint64_t mw__source_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void mw__source_set_event(mw_source_t *s, const char *kind, const char *detail)
{
    snprintf(s->event, sizeof s->event, "%s%s%s", kind ? kind : "event",
             detail && *detail ? ": " : "", detail ? detail : "");
}

/* Notes the job's state for the status: ended when it is no longer "running". */
void mw__source_job_state(mw_source_t *s, const Mpiwatch__JobInfo *job)
{
    s->st.ended = job->state && *job->state && strcmp(job->state, "running") != 0;
}

void mw__source_extent(mw_source_t *s, mw_model_t *m, uint64_t oldest, uint64_t newest)
{
    if (!s->have_ext || newest > s->ext_newest)
        s->ext_newest = newest;
    s->ext_oldest = oldest;
    s->have_ext = 1;
    if (s->ext_oldest > s->ext_newest)
        s->ext_oldest = s->ext_newest;
    /* The model takes its time axis' origin from the first extent it is given: with a history
     * endpoint that must be the history's oldest window, not the feed's first window; and it
     * needs the job's grid first. */
    if (!s->hold_ext && mw_model_job(m))
        mw_model_set_extent(m, s->ext_oldest, s->ext_newest);
}

/* Makes room for `more` calls in the rank request's buffer. Returns 0, or -1. */
static int source_rank_reserve(mw__source_rank_t *rk, size_t more)
{
    if (rk->n + more <= rk->cap)
        return 0;
    if (rk->n + more > SOURCE_RANK_CALLS_MAX)
        return -1;
    size_t cap = rk->cap ? rk->cap : 1024;
    while (cap < rk->n + more)
        cap *= 2;
    mw_rank_call_t *c = realloc(rk->calls, cap * sizeof *c);
    if (!c)
        return -1;
    rk->calls = c;
    rk->cap = cap;
    return 0;
}

/* Adds the calls of one of the rank's samples. */
void mw__source_rank_sample(mw__source_rank_t *rk, const Mpiwatch__JobInfo *job,
                            const Mpiwatch__Envelope *env)
{
    const Mpiwatch__Sample *smp = env->sample;
    if (!job || !smp || env->rank != rk->rank)
        return;
    if (source_rank_reserve(rk, smp->n_density_fn + smp->n_longest + 1) < 0)
        return; /* the request stops growing; what was collected is shown */
    mw_rank_calls_from_sample(env, job->window_ns, job->subslots, job->duration_bins, rk->calls,
                              &rk->n, rk->cap);
}

void mw__source_fn_step(mw_source_t *s, Mpiwatch__Step *st)
{
    if (s->fnmap.to_local && st)
        mw_fnmap_step(&s->fnmap, st);
}

void mw__source_fn_trace(mw_source_t *s, Mpiwatch__RankTrace *rt)
{
    if (s->fnmap.to_local && !s->fnmap.identity && rt && rt->trace) {
        Mpiwatch__Window w = MPIWATCH__WINDOW__INIT; /* a window of this one trace */
        Mpiwatch__RankTrace *one[1] = {rt};
        w.n_traces = 1;
        w.traces = one;
        mw_fnmap_window(&s->fnmap, &w, NULL);
    }
}

void mw__source_fn_sample(mw_source_t *s, Mpiwatch__Envelope *env)
{
    /* unpacked with malloc (a history reply): the envelope owns its fields */
    if (s->fnmap.to_local && !s->fnmap.identity)
        mw_fnmap_envelope(&s->fnmap, env, NULL);
}

int mw__source_add_window(mw_source_t *s, mw_model_t *m, Mpiwatch__Window *w)
{
    if (mw_model_job(m) && s->fnmap.to_local)
        mw_fnmap_window(&s->fnmap, w, NULL);
    if (!mw_model_job(m)) {
        if (s->n_pending < MW__SOURCE_PENDING_MAX) {
            s->pending[s->n_pending++] = w;
        } else {
            mpiwatch__window__free_unpacked(w, NULL);
        }
        return 0;
    }
    return mw_model_add_window(m, w) == 0;
}

/* Hands the model a job description (owned from now on). A different job resets what the feed
 * taught us; windows that waited for a job go in now. Returns the windows added. A description
 * over the caps a collector keeps to (mw_topo_job_check: ranks, names, PUs, hardware objects
 * and depth, strings; proto/mw_limits.h) is refused, logged and counted as an error: the
 * model keeps the job it had, so a crafted feed or recording cannot make the views build or
 * walk more than a real collector would send. */
int mw__source_set_job(mw_source_t *s, mw_model_t *m, Mpiwatch__JobInfo *job)
{
    char why[160];
    if (mw_topo_job_check(job, why, sizeof why) < 0) {
        mw__source_log("%s: job description refused: %s", s->st.what, why);
        s->st.errors++;
        mpiwatch__job_info__free_unpacked(job, NULL);
        return 0;
    }
    const char *name = job->job ? job->job : "";
    if (strcmp(name, s->job_name) != 0) {
        if (*s->job_name) { /* another job: what we knew of the previous one is void */
            s->live.have_prev = 0;
            s->have_ext = 0;
        }
        snprintf(s->job_name, sizeof s->job_name, "%s", name);
    }
    mw__source_job_state(s, job);
    s->st.connected = 1;
    /* The job's function ids by name (docs/function-table.md): a job without names, of a
     * table this viewer does not know, is taken as it is (ids as this build's), and said. */
    mw_fnmap_free(&s->fnmap);
    if (mw_fnmap_job(&s->fnmap, job, why, sizeof why) < 0) {
        mw__source_log("%s: %s; function ids taken as this build's", s->st.what, why);
        s->fnmap.to_local = calloc(1, sizeof *s->fnmap.to_local);
        s->fnmap.identity = 1;
    }
    mw_model_set_job(m, job);
    int added = 0;
    for (unsigned i = 0; i < s->n_pending; i++) {
        if (s->fnmap.to_local)
            mw_fnmap_window(&s->fnmap, s->pending[i], NULL);
        added += mw_model_add_window(m, s->pending[i]) == 0;
    }
    s->n_pending = 0;
    if (s->have_ext && !s->hold_ext)
        mw_model_set_extent(m, s->ext_oldest, s->ext_newest);
    return added;
}

/* ---- the interface ------------------------------------------------------------------------ */

mw_source_t *mw__source_new(const char *what, const mw__source_ops_t *ops)
{
    mw_source_t *s = calloc(1, sizeof *s);
    if (s) {
        s->ops = ops;
        snprintf(s->st.what, sizeof s->st.what, "%s", what);
    }
    return s;
}

void mw_source_free(mw_source_t *s)
{
    if (!s)
        return;
    s->ops->release(s);
    for (unsigned i = 0; i < s->n_pending; i++)
        mpiwatch__window__free_unpacked(s->pending[i], NULL);
    free(s->rk.calls);
    mw_fnmap_free(&s->fnmap);
    free(s);
}

int mw_source_poll(mw_source_t *s, mw_model_t *m, uint64_t now_ns)
{
    return s->ops->poll(s, m, now_ns);
}

int mw_source_want_rank(mw_source_t *s, uint32_t rank, uint64_t first, uint64_t last)
{
    if (!s->ops->can_rank(s))
        return -1;
    if (first > last) {
        uint64_t t = first;
        first = last;
        last = t;
    }
    /* A running request is abandoned: its reply, if any, no longer matches an id. */
    s->rk.running = 0;
    s->rk.wanted = 1;
    s->rk.rank = rank;
    s->rk.first = first;
    s->rk.last = last;
    return 0;
}

int mw_source_rank_busy(const mw_source_t *s)
{
    return s->rk.wanted || s->rk.running;
}

const char *mw_source_event(const mw_source_t *s)
{
    return s->event;
}

void mw_source_wait(mw_source_t *s, int timeout_ms)
{
    if (timeout_ms < 0)
        timeout_ms = 0;
    s->ops->wait(s, timeout_ms);
}

void mw_source_status(const mw_source_t *s, mw_source_status_t *out)
{
    *out = s->st;
}
