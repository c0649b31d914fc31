/* lateness.c: the online lateness analysis, beside the window pipeline (docs/lateness.md).
 *
 * DESIGN: the collector's loop must never wait for the analysis, and the analysis of one
 * window (decoding every exact trace, then the logical-structure stream of proto/mw_logical.h:
 * partitions, steps, lateness) can take longer than a window. So it runs on one worker
 * thread that owns the stream, with two bounded queues between it and the loop:
 *   - work: when a window closes, the loop copies its exact traces (the encoded records as
 *     they arrived: a memcpy, no decoding) into an item and queues it. A full queue
 *     (MW_LATENESS_QUEUE items or MW_LATENESS_QUEUE_BYTES of records) skips the window; the
 *     worker also skips an item that has waited longer than the budget (--lateness-budget-ms).
 *     A skipped window is a hole in the stream, which finalizes what it holds (a gap): the
 *     results stay right, they only lose the messages that crossed the hole.
 *   - results: the worker turns each batch the stream finalizes into a Mpiwatch__Lateness
 *     and queues it, then writes to an eventfd that the loop polls (server.c); the loop
 *     publishes the batches (mw__lateness_drain) on the publish path, where the rules, the
 *     recording, the feed and the history take them.
 * Both queues are arrays under one mutex that is held only to move a pointer, never while
 * copying or analysing. What a window carries into the stream: the ranks whose trace is exact
 * at close. Ranks summary-only in it, and deferred traces that arrive after the close, are not
 * analysed (messages to them stay unmatched); a window without any exact trace is a gap.
 * Items and batches carry the job's generation: a batch of a job that has ended is dropped.
 * Everything from the ranks is checked by the trace decoder (caps, counts); the stream caps
 * what it holds (MW_LOGICAL_MAX_*), and a stream error restarts the stream (counted).
 */
#define _GNU_SOURCE
#include "lateness.h"
#include "collector.h"
#include "publish.h"

#include "mw_logical.h"
#include "mw_trace.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define WINFO_SLOTS 256u /* windows whose traced ranks and length are remembered */

enum { IT_WINDOW, IT_GAP, IT_JOB, IT_END };

typedef struct {
    uint32_t rank, encoding, count;
    uint64_t raw_bytes;
    size_t off, len;
} item_rank_t;

typedef struct {
    int kind;
    uint64_t gen;
    uint64_t window, start_ns, window_ns, enq_ns;
    uint32_t nranks, partial;
    item_rank_t *ranks;
    uint8_t *bytes;
    size_t nbytes;
    char *job; /* IT_JOB */
} item_t;

typedef struct {
    Mpiwatch__Lateness msg;
    Mpiwatch__LatenessSummary *sums;
    Mpiwatch__LatenessSummary **ptrs;
    uint64_t gen;
} result_t;

typedef struct {
    uint64_t index, window_ns, start_ns;
    uint32_t ranks, partitions;
    int used;
} winfo_t;

struct mw_lateness {
    pthread_t thread;
    int thread_started;
    int efd;
    uint64_t budget_ns;
    int leap; /* MW_LOGICAL_LEAP in the stream's options */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
    item_t *work[MW_LATENESS_QUEUE];
    unsigned work_head, work_n;
    uint64_t work_bytes;
    result_t *res[MW_LATENESS_RESULTS];
    unsigned res_head, res_n;
    unsigned busy; /* the worker is processing an item */

    /* The loop's side. */
    uint64_t gen;
    int last_was_gap; /* the last item queued was a gap: the next untraced is not */
    atomic_uint_fast64_t skipped_full; /* windows the loop skipped (queue full), this job */
    atomic_uint_fast64_t untraced;     /* windows without an exact trace, this job */
    uint64_t results_dropped;          /* batches lost: the result queue was full */
    atomic_uint_fast64_t results_full; /* ... counted by the worker */
    uint64_t stale;                    /* batches of an ended job dropped */

    /* The worker's side. */
    mw_logical_stream_t *stream;
    char *job;
    uint64_t wgen;
    int64_t last_window; /* last window pushed, -1 none */
    uint64_t analysed, skipped_late, bad_traces, stream_errors, partial_windows;
    uint64_t extract_total, extract_max;
    winfo_t winfo[WINFO_SLOTS];
};

static uint64_t mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The worker's own CPU time: what an analysis costs, whatever else the machine runs (its wall
 * time also counts the time it waited for a core, and it runs at the lowest priority). */
static uint64_t cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void item_free(item_t *it)
{
    if (!it)
        return;
    free(it->ranks);
    free(it->bytes);
    free(it->job);
    free(it);
}

static void result_free(result_t *r)
{
    if (!r)
        return;
    free(r->msg.job);
    free(r->sums);
    free(r->ptrs);
    free(r);
}

/* ---- the worker --------------------------------------------------------------------------- */

static winfo_t *winfo_at(mw_lateness_t *l, uint64_t window)
{
    winfo_t *w = &l->winfo[window % WINFO_SLOTS];
    return w->used && w->index == window ? w : NULL;
}

/* Counts, for each window, the partitions of the batch that have events in it (events are
 * sorted by partition; a partition's windows are few, so a short list suffices). */
static void count_partitions(mw_lateness_t *l, const mw_logical_batch_t *b)
{
    uint64_t seen[16];
    size_t n = 0;
    for (size_t i = 0; i < b->nevents; i++) {
        const mw_logical_event_t *e = &b->events[i];
        if (i == 0 || e->partition != b->events[i - 1].partition)
            n = 0;
        size_t k = 0;
        while (k < n && seen[k] != e->window)
            k++;
        if (k < n)
            continue;
        if (n < sizeof seen / sizeof seen[0])
            seen[n++] = e->window;
        winfo_t *w = winfo_at(l, e->window);
        if (w && w->partitions < UINT32_MAX)
            w->partitions++;
    }
}

static void summary_fill(Mpiwatch__LatenessSummary *o, const mw_logical_summary_t *s)
{
    mpiwatch__lateness_summary__init(o);
    o->key = s->key;
    o->events = s->events;
    o->lateness_max_ns = s->lateness_max_ns;
    o->diff_max_ns = s->diff_max_ns;
    o->lost_ns = s->lost_ns;
    o->lateness_rank = s->lateness_rank;
    o->diff_rank = s->diff_rank;
    o->lateness_fn = s->lateness_fn;
    o->diff_fn = s->diff_fn;
    o->lateness_step = s->lateness_step;
    o->diff_step = s->diff_step;
}

/* Turns what the stream finalized into a result (NULL when out of memory). */
static result_t *make_result(mw_lateness_t *l, const mw_logical_batch_t *b, uint64_t window,
                             int gap, uint64_t extract_ns, uint64_t queued)
{
    result_t *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    size_t nsteps = b->nsteps < MW_LATENESS_MAX_SUMMARIES ? b->nsteps : MW_LATENESS_MAX_SUMMARIES;
    size_t n = b->nwindows + nsteps;
    r->sums = calloc(n ? n : 1, sizeof *r->sums);
    r->ptrs = calloc(n ? n : 1, sizeof *r->ptrs);
    r->msg.job = NULL;
    if (!r->sums || !r->ptrs) {
        result_free(r);
        return NULL;
    }
    mpiwatch__lateness__init(&r->msg);
    r->msg.job = strdup(l->job ? l->job : "");
    if (!r->msg.job) {
        result_free(r);
        return NULL;
    }
    count_partitions(l, b);
    for (size_t i = 0; i < b->nwindows; i++) {
        Mpiwatch__LatenessSummary *o = &r->sums[i];
        summary_fill(o, &b->windows[i]);
        winfo_t *w = winfo_at(l, b->windows[i].key);
        if (w) {
            o->traced_ranks = w->ranks;
            o->window_ns = w->window_ns;
            o->start_ns = w->start_ns;
            o->partitions = w->partitions;
            if (w->ranks && w->window_ns && o->lost_ns > 0)
                o->lateness_share = (double)o->lost_ns / ((double)w->ranks * (double)w->window_ns);
            w->used = 0; /* complete: its summary is out */
        }
        r->ptrs[i] = o;
    }
    for (size_t i = 0; i < nsteps; i++) {
        Mpiwatch__LatenessSummary *o = &r->sums[b->nwindows + i];
        summary_fill(o, &b->steps[i]);
        o->lateness_step = o->diff_step = b->steps[i].key;
        r->ptrs[b->nwindows + i] = o;
    }
    r->msg.n_windows = b->nwindows;
    r->msg.windows = r->ptrs;
    r->msg.n_steps = nsteps;
    r->msg.steps = r->ptrs + b->nwindows;
    r->msg.window = window;
    r->msg.gap = gap != 0;
    r->msg.extract_ns = extract_ns;
    r->msg.queued = queued;
    mw_logical_stats_t st;
    memset(&st, 0, sizeof st);
    if (l->stream)
        mw_logical_stream_stats(l->stream, &st);
    r->msg.windows_analysed = l->analysed;
    r->msg.windows_skipped = l->skipped_late + atomic_load(&l->skipped_full);
    r->msg.windows_untraced = atomic_load(&l->untraced);
    r->msg.gaps = st.gaps;
    r->msg.events = st.events;
    r->msg.partitions = st.partitions;
    r->msg.forced = st.forced;
    r->msg.unmatched = st.unmatched;
    r->msg.pending_events = st.pending_events;
    r->msg.pending_windows = st.pending_windows;
    r->msg.bad_traces = l->bad_traces;
    r->msg.extract_ns_total = l->extract_total;
    r->msg.extract_ns_max = l->extract_max;
    r->msg.partial_windows = l->partial_windows;
    r->gen = l->wgen;
    return r;
}

/* Queues a result for the loop and wakes it. A full result queue drops the batch (counted):
 * the loop is not draining, and the worker must not wait for it either. */
static void emit(mw_lateness_t *l, result_t *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&l->mu);
    int ok = l->res_n < MW_LATENESS_RESULTS;
    if (ok)
        l->res[(l->res_head + l->res_n++) % MW_LATENESS_RESULTS] = r;
    pthread_mutex_unlock(&l->mu);
    if (!ok) {
        atomic_fetch_add(&l->results_full, 1);
        result_free(r);
        return;
    }
    uint64_t one = 1;
    ssize_t w = write(l->efd, &one, sizeof one); /* EAGAIN: the counter is already set */
    (void)w;
}

/* Whether a batch carries anything worth publishing. */
static int batch_empty(const mw_logical_batch_t *b)
{
    return b->nwindows == 0 && b->nsteps == 0 && b->nevents == 0;
}

static void stream_restart(mw_lateness_t *l)
{
    mw_logical_stream_free(l->stream);
    mw_logical_opts_t o = {.flags = l->leap ? MW_LOGICAL_LEAP : 0,
                           .step_base = 0,
                           .max_pending_events = MW_LATENESS_MAX_PENDING_EVENTS};
    l->stream = mw_logical_stream_new(&o);
    l->last_window = -1;
    memset(l->winfo, 0, sizeof l->winfo);
}

/* Finalizes what the stream holds (a hole, the job's end) and emits it. */
static void worker_gap(mw_lateness_t *l, uint64_t window, int always)
{
    if (!l->stream)
        return;
    mw_logical_stats_t st;
    mw_logical_stream_stats(l->stream, &st);
    if (!always && st.pending_events == 0 && st.pending_windows == 0)
        return;
    mw_logical_batch_t b;
    memset(&b, 0, sizeof b);
    uint64_t t0 = cpu_now();
    if (mw_logical_stream_gap(l->stream, &b) < 0) {
        l->stream_errors++;
        stream_restart(l);
        return;
    }
    uint64_t dt = cpu_now() - t0;
    l->extract_total += dt;
    if (!always && batch_empty(&b)) {
        mw_logical_batch_free(&b);
        return;
    }
    emit(l, make_result(l, &b, window, 1, dt, 0));
    mw_logical_batch_free(&b);
}

static void worker_window(mw_lateness_t *l, item_t *it, uint64_t queued)
{
    if (!l->stream)
        return;
    if (l->last_window >= 0 && it->window <= (uint64_t)l->last_window) {
        l->skipped_late++; /* not after the last one pushed: the merge's order forbids it */
        return;
    }
    if (l->budget_ns && mono_now() - it->enq_ns > l->budget_ns) {
        l->skipped_late++; /* behind: a hole, so what is pending is final */
        worker_gap(l, it->window, 0);
        return;
    }
    uint64_t t0 = cpu_now();
    mw_logical_rank_t *ranks = calloc(it->nranks ? it->nranks : 1, sizeof *ranks);
    mw_trace_rec_t **recs = calloc(it->nranks ? it->nranks : 1, sizeof *recs);
    size_t n = 0;
    for (uint32_t i = 0; ranks && recs && i < it->nranks; i++) {
        const item_rank_t *ir = &it->ranks[i];
        mw_trace_rec_t *out = NULL;
        size_t cnt = 0;
        const char *why = NULL;
        if (ir->count && mw_trace_decode(it->bytes + ir->off, ir->len, ir->encoding, ir->raw_bytes,
                                         ir->count, &out, &cnt, &why) < 0) {
            l->bad_traces++;
            continue;
        }
        recs[n] = out;
        ranks[n] = (mw_logical_rank_t){ir->rank, out, cnt};
        n++;
    }
    mw_logical_batch_t b;
    memset(&b, 0, sizeof b);
    int rc = ranks && recs ? mw_logical_stream_push(l->stream, it->window, (int64_t)it->start_ns,
                                                    ranks, n, &b)
                           : -1;
    for (size_t i = 0; recs && i < n; i++)
        free(recs[i]);
    free(recs);
    free(ranks);
    if (rc < 0) {
        l->stream_errors++;
        mw_logical_batch_free(&b);
        stream_restart(l);
        return;
    }
    winfo_t *w = &l->winfo[it->window % WINFO_SLOTS];
    *w = (winfo_t){it->window, it->window_ns, it->start_ns, (uint32_t)n, 0, 1};
    l->last_window = (int64_t)it->window;
    l->analysed++;
    l->partial_windows += it->partial != 0;
    uint64_t dt = cpu_now() - t0;
    l->extract_total += dt;
    if (dt > l->extract_max)
        l->extract_max = dt;
    /* A batch per pushed window, even an empty one: its counters say the worker keeps up. */
    emit(l, make_result(l, &b, it->window, 0, dt, queued));
    mw_logical_batch_free(&b);
}

static void worker_item(mw_lateness_t *l, item_t *it, uint64_t queued)
{
    switch (it->kind) {
    case IT_JOB:
        free(l->job);
        l->job = it->job;
        it->job = NULL;
        l->wgen = it->gen;
        l->analysed = l->skipped_late = l->bad_traces = l->partial_windows = 0;
        l->extract_total = l->extract_max = 0;
        stream_restart(l);
        break;
    case IT_END:
        /* The job's last batch carries its final counters; a job without a traced window
         * publishes nothing at all (its outputs are those of a collector without the analysis). */
        worker_gap(l, it->window,
                   l->analysed || l->skipped_late || atomic_load(&l->skipped_full) != 0);
        break;
    case IT_GAP:
        worker_gap(l, it->window, 0);
        break;
    default:
        worker_window(l, it, queued);
        break;
    }
}

static void *worker_main(void *arg)
{
    mw_lateness_t *l = arg;
    /* The loop comes first: on a busy machine the worker gets what the loop leaves (a Linux
     * thread has its own nice value); when it falls behind it skips windows, it never slows
     * the window pipeline. Failure leaves the default priority. */
    if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19) != 0)
        MW_LOG(MW_LOG_DEBUG, "lateness: cannot lower the worker's priority: %s", strerror(errno));
    pthread_mutex_lock(&l->mu);
    for (;;) {
        while (!l->stop && l->work_n == 0)
            pthread_cond_wait(&l->cv, &l->mu);
        if (l->stop)
            break;
        item_t *it = l->work[l->work_head];
        l->work_head = (l->work_head + 1) % MW_LATENESS_QUEUE;
        l->work_n--;
        l->work_bytes -= it->nbytes;
        uint64_t queued = l->work_n;
        l->busy = 1;
        pthread_mutex_unlock(&l->mu);
        worker_item(l, it, queued);
        item_free(it);
        pthread_mutex_lock(&l->mu);
        l->busy = 0;
        pthread_cond_broadcast(&l->cv); /* mw__lateness_flush waits for an idle worker */
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

/* ---- the loop's side ---------------------------------------------------------------------- */

mw_lateness_t *mw__lateness_open(uint64_t budget_ms, int leap)
{
    mw_lateness_t *l = calloc(1, sizeof *l);
    if (!l) {
        MW_LOG(MW_LOG_ERROR, "lateness: out of memory");
        return NULL;
    }
    l->budget_ns = budget_ms * MW_NS_PER_MS;
    l->leap = leap != 0;
    l->last_window = -1;
    l->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (l->efd < 0) {
        MW_LOG(MW_LOG_ERROR, "lateness: eventfd: %s", strerror(errno));
        free(l);
        return NULL;
    }
    pthread_mutex_init(&l->mu, NULL);
    /* Waits are timed on the monotonic clock: a wall-clock step cannot stretch them. */
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&l->cv, &ca);
    pthread_condattr_destroy(&ca);
    int e = pthread_create(&l->thread, NULL, worker_main, l);
    if (e != 0) {
        MW_LOG(MW_LOG_ERROR, "lateness: cannot start the worker: %s", strerror(e));
        mw__lateness_close(l);
        return NULL;
    }
    l->thread_started = 1;
    return l;
}

void mw__lateness_close(mw_lateness_t *l)
{
    if (!l)
        return;
    if (l->thread_started) {
        pthread_mutex_lock(&l->mu);
        l->stop = 1;
        pthread_cond_broadcast(&l->cv);
        pthread_mutex_unlock(&l->mu);
        /* The worker stops after the item it is analysing. It runs at the lowest priority, so
         * on a busy machine one analysis can take many seconds: the collector is exiting and
         * does not wait for it longer than MW_LATENESS_CLOSE_MS; the worker, which touches only
         * this structure, is then left running with it until the process exits. */
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        uint64_t ns = (uint64_t)dl.tv_nsec + (uint64_t)MW_LATENESS_CLOSE_MS * MW_NS_PER_MS;
        dl.tv_sec += (time_t)(ns / 1000000000ull);
        dl.tv_nsec = (long)(ns % 1000000000ull);
        if (pthread_timedjoin_np(l->thread, NULL, &dl) != 0) {
            MW_LOG(MW_LOG_WARN, "lateness: the worker is still in an analysis at exit; not waited "
                                "for");
            pthread_detach(l->thread);
            return;
        }
    }
    for (unsigned i = 0; i < l->work_n; i++)
        item_free(l->work[(l->work_head + i) % MW_LATENESS_QUEUE]);
    for (unsigned i = 0; i < l->res_n; i++)
        result_free(l->res[(l->res_head + i) % MW_LATENESS_RESULTS]);
    mw_logical_stream_free(l->stream);
    free(l->job);
    if (l->efd >= 0)
        close(l->efd);
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->cv);
    free(l);
}

int mw__lateness_fd(const mw_lateness_t *l)
{
    return l ? l->efd : -1;
}

/* Queues an item; returns 0, or -1 (queue full: the caller frees it). Control items (job,
 * end) are always taken: they are few and carry no records. */
static int enqueue(mw_lateness_t *l, item_t *it)
{
    pthread_mutex_lock(&l->mu);
    int control = it->kind == IT_JOB || it->kind == IT_END;
    int ok = l->work_n < MW_LATENESS_QUEUE &&
             (control || l->work_bytes + it->nbytes <= MW_LATENESS_QUEUE_BYTES);
    if (!ok && control && l->work_n == MW_LATENESS_QUEUE) {
        /* Make room: the newest window item goes (counted as skipped). */
        unsigned last = (l->work_head + l->work_n - 1) % MW_LATENESS_QUEUE;
        if (l->work[last]->kind == IT_WINDOW)
            atomic_fetch_add(&l->skipped_full, 1);
        l->work_bytes -= l->work[last]->nbytes;
        item_free(l->work[last]);
        l->work_n--;
        ok = 1;
    } else if (!ok && control) {
        ok = 1;
    }
    if (ok) {
        l->work[(l->work_head + l->work_n++) % MW_LATENESS_QUEUE] = it;
        l->work_bytes += it->nbytes;
        pthread_cond_signal(&l->cv);
    }
    pthread_mutex_unlock(&l->mu);
    return ok ? 0 : -1;
}

void mw__lateness_job(mw_lateness_t *l, const char *job)
{
    if (!l)
        return;
    item_t *it = calloc(1, sizeof *it);
    char *name = strdup(job ? job : "");
    if (!it || !name) {
        free(it);
        free(name);
        MW_LOG(MW_LOG_ERROR, "lateness: out of memory at the job's start");
        return;
    }
    l->gen++;
    atomic_store(&l->skipped_full, 0);
    atomic_store(&l->untraced, 0);
    l->last_was_gap = 1;
    it->kind = IT_JOB;
    it->gen = l->gen;
    it->job = name;
    enqueue(l, it);
}

void mw__lateness_job_end(mw_lateness_t *l)
{
    if (!l)
        return;
    item_t *it = calloc(1, sizeof *it);
    if (!it)
        return;
    it->kind = IT_END;
    it->gen = l->gen;
    enqueue(l, it);
    l->last_was_gap = 1;
}

void mw__lateness_window(mw_lateness_t *l, const mw_window_t *w, uint64_t mono_ns)
{
    if (!l)
        return;
    uint32_t nexact = 0;
    size_t bytes = 0;
    for (uint32_t i = 0; i < w->n_traces; i++) {
        const mw_rank_trace_t *t = &w->traces[i];
        if (t->state == MW_TRACE_EXACT && (t->count == 0 || t->len > 0)) {
            nexact++;
            bytes += t->len;
        }
    }
    if (nexact == 0) {
        atomic_fetch_add(&l->untraced, 1);
        if (l->last_was_gap)
            return; /* one gap after the last traced window is enough */
        item_t *g = calloc(1, sizeof *g);
        if (!g)
            return;
        g->kind = IT_GAP;
        g->gen = l->gen;
        g->window = w->index;
        g->enq_ns = mono_ns;
        if (enqueue(l, g) == 0)
            l->last_was_gap = 1;
        else
            item_free(g);
        return;
    }
    item_t *it = calloc(1, sizeof *it);
    if (it) {
        it->ranks = malloc(nexact * sizeof *it->ranks);
        it->bytes = malloc(bytes ? bytes : 1);
    }
    if (!it || !it->ranks || !it->bytes) {
        item_free(it);
        atomic_fetch_add(&l->skipped_full, 1);
        return;
    }
    it->kind = IT_WINDOW;
    it->gen = l->gen;
    it->window = w->index;
    it->start_ns = w->start_ns;
    it->window_ns = w->window_ns;
    it->enq_ns = mono_ns;
    it->partial = nexact < w->ranks_reporting;
    size_t off = 0;
    for (uint32_t i = 0; i < w->n_traces; i++) {
        const mw_rank_trace_t *t = &w->traces[i];
        if (t->state != MW_TRACE_EXACT || (t->count != 0 && t->len == 0))
            continue;
        item_rank_t *r = &it->ranks[it->nranks++];
        *r = (item_rank_t){t->rank, t->encoding, t->count, t->raw_bytes, off, (size_t)t->len};
        if (t->len)
            memcpy(it->bytes + off, w->tbytes + t->off, t->len);
        off += t->len;
    }
    it->nbytes = off;
    if (enqueue(l, it) < 0) {
        item_free(it);
        atomic_fetch_add(&l->skipped_full, 1);
        return;
    }
    l->last_was_gap = 0;
}

static void publish_result(mw_collector_t *c, result_t *r)
{
    mw_lateness_t *l = c->lateness;
    if (r->gen != l->gen) {
        l->stale++; /* a job that has ended: its rules and totals are gone */
        return;
    }
    mw__pub_t m = {.kind = MW_PUB_LATENESS, .lateness = &r->msg};
    mw__publish(c, &m);
}

void mw__lateness_drain(mw_collector_t *c)
{
    mw_lateness_t *l = c->lateness;
    if (!l)
        return;
    uint64_t v;
    ssize_t got = read(l->efd, &v, sizeof v); /* resets the counter; EAGAIN: nothing new */
    (void)got;
    for (;;) {
        pthread_mutex_lock(&l->mu);
        result_t *r = NULL;
        if (l->res_n) {
            r = l->res[l->res_head];
            l->res_head = (l->res_head + 1) % MW_LATENESS_RESULTS;
            l->res_n--;
        }
        pthread_mutex_unlock(&l->mu);
        if (!r)
            break;
        publish_result(c, r);
        result_free(r);
    }
}

void mw__lateness_flush(mw_collector_t *c, uint64_t timeout_ms)
{
    mw_lateness_t *l = c->lateness;
    if (!l)
        return;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    uint64_t ns = (uint64_t)until.tv_nsec + timeout_ms * MW_NS_PER_MS;
    until.tv_sec += (time_t)(ns / 1000000000ull);
    until.tv_nsec = (long)(ns % 1000000000ull);
    pthread_mutex_lock(&l->mu);
    while ((l->work_n || l->busy) && pthread_cond_timedwait(&l->cv, &l->mu, &until) != ETIMEDOUT)
        ;
    pthread_mutex_unlock(&l->mu);
    mw__lateness_drain(c);
}

void mw__lateness_account(mw_lateness_totals_t *t, const Mpiwatch__Lateness *b)
{
    t->batches++;
    t->windows_analysed = b->windows_analysed;
    t->windows_skipped = b->windows_skipped;
    t->windows_untraced = b->windows_untraced;
    t->gaps = b->gaps;
    t->events = b->events;
    t->partitions = b->partitions;
    t->forced = b->forced;
    t->unmatched = b->unmatched;
    t->bad_traces = b->bad_traces;
    t->extract_ns_total = b->extract_ns_total;
    t->extract_ns_max = b->extract_ns_max;
    t->extract_ns_last = b->extract_ns;
    if (!b->gap)
        mw__latency_add(&t->extract, b->extract_ns);
    for (size_t i = 0; i < b->n_windows; i++) {
        const Mpiwatch__LatenessSummary *s = b->windows[i];
        if (!s)
            continue;
        if (t->windows_summarised == 0 || s->lateness_max_ns > t->lateness_max_ns) {
            t->lateness_max_ns = s->lateness_max_ns;
            t->lateness_rank = s->lateness_rank;
            /* 0 (unknown) out of the table: a replayed id is not cut to another one */
            t->lateness_fn = (uint16_t)(s->lateness_fn < MW_FN_SPACE ? s->lateness_fn : 0);
            t->lateness_window = s->key;
        }
        if (t->windows_summarised == 0 || s->diff_max_ns > t->diff_max_ns) {
            t->diff_max_ns = s->diff_max_ns;
            t->diff_rank = s->diff_rank;
            t->diff_fn = (uint16_t)(s->diff_fn < MW_FN_SPACE ? s->diff_fn : 0);
            t->diff_window = s->key;
            t->diff_step = s->diff_step;
        }
        if (s->lost_ns > 0) /* saturates: a replayed recording's batches are crafted at will */
            t->lost_ns = t->lost_ns > INT64_MAX - s->lost_ns ? INT64_MAX : t->lost_ns + s->lost_ns;
        t->share_last = s->lateness_share;
        if (s->lateness_share > t->share_max)
            t->share_max = s->lateness_share;
        t->last_lateness_ns = s->lateness_max_ns;
        t->last_diff_ns = s->diff_max_ns;
        t->last_window = s->key;
        t->windows_summarised++;
    }
}
