/* metrics.c: the Prometheus endpoint (--metrics-port N): GET /metrics over HTTP.
 *
 * DESIGN: libmicrohttpd runs its own internal polling thread, bound to 127.0.0.1 only. That
 * thread never reads collector state: the collector's loop (server.c) formats the whole
 * exposition text (format 0.0.4) into a fresh buffer at most every METRICS_PERIOD_NS, and at
 * once when the job ends, then swaps it in under a mutex. The HTTP handler only copies the
 * current buffer out under that mutex, so a scrape costs the loop nothing and a slow client
 * can hold the lock no longer than one memcpy. Between rebuilds the loop keeps a cheap
 * signature of the counters; a rebuild happens only when it changed, and mw__metrics_update()
 * tells the poll how long to wait for the next allowed rebuild, so no change stays unpublished
 * for more than METRICS_PERIOD_NS even when no other timer is pending.
 *
 * Every sample line carries the job's name as the label `job` (docs/metrics.md: scrape with
 * honor_labels: true so that Prometheus keeps it). The text is formatted without it and the
 * label is inserted into each sample line in one pass at the end (metrics_add_job), so no
 * series can be left without it. The gauges of the latest closed window are taken by a hook
 * on the collector's closed windows (c->on_window, chained before any previous consumer), on
 * the loop's thread, like everything else the page shows.
 *
 * The page binds 127.0.0.1 unless --metrics-bind names another address; one that is not
 * loopback is refused by the option check without --allow-insecure (options.c).
 */
#include "aggstate.h"
#include "collector.h"
#include "metrics.h"
#include "options.h"
#include "record_file.h"
#include "report.h"
#include "steps.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define METRICS_PERIOD_NS (500ull * MW_NS_PER_MS)
#define METRICS_REGIONS                                                                            \
    50                   /* regions with their own series (by inclusive time); the rest: "_other" */
#define METRICS_SITES 20 /* call sites with their own series: the report's top twenty */
#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* The latest closed window of the current job, as the gauges show it (docs/metrics.md). */
typedef struct {
    int have;            /* a window of this job closed */
    uint64_t jobs;       /* stats.jobs when it closed: a new job hides the gauges until its own */
    uint64_t number;     /* index - the job's first window (job.min_window) */
    double start_s;      /* its start - the start of the job's first window, seconds */
    double length_s;     /* its own length */
    uint32_t seen;       /* ranks whose sample was merged */
    uint32_t missing;    /* expected ranks (no bye, not dead) that had not reported at close */
    double mpi_fraction; /* occupancy share when reported, else mpi_time / (length x seen) */
    int have_balance;    /* per-rank figures were available (rank detail or occupancy) */
    double imbalance;    /* max / mean - 1 of the per-rank MPI time (0 when none) */
    double load_balance; /* mean / max of the per-rank time outside MPI (POP; 1 when none) */
    double mpi_max_s, mpi_mean_s;
} metrics_window_t;

struct mw_metrics {
    struct MHD_Daemon *daemon;
    pthread_mutex_t lock; /* guards text and len: the only state the HTTP thread reads */
    char *text;
    size_t len;
    /* Loop side only. */
    uint64_t next_ns;   /* monotonic time before which no rebuild happens */
    uint64_t signature; /* of the counters at the last rebuild */
    mw_end_t ended;     /* job.ended at the last rebuild ... */
    uint64_t jobs;      /* ... and stats.jobs, so that each job's end is published at once */
    int built;
    mw_collector_t *c;           /* whose on_window hook this chains */
    mw_window_fn next_on_window; /* the hook that was there before */
    void *next_user;
    metrics_window_t win;
};

/* A growing text buffer; on allocation failure it stays failed and the rebuild is skipped. */
typedef struct {
    char *buf;
    size_t len, cap;
    int failed;
} metrics_buf_t;

static void metrics_put(metrics_buf_t *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void metrics_put(metrics_buf_t *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->buf + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = 1;
            return;
        }
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap * 2 > b->len + (size_t)n + 1 ? b->cap * 2 : b->len + (size_t)n + 1;
        char *p = realloc(b->buf, cap);
        if (!p) {
            b->failed = 1;
            return;
        }
        b->buf = p;
        b->cap = cap;
    }
}

static void metrics_head(metrics_buf_t *b, const char *name, const char *type, const char *help)
{
    metrics_put(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One line per function that was called in the current job. `what` selects the field. */
static void metrics_per_fn(metrics_buf_t *b, const mw_job_t *job, const char *name, int what)
{
    for (unsigned fn = 1; fn < MW_FN_SPACE; fn++) {
        const mw_fn_total_t *t = &job->fn[fn];
        if (!job->active || t->count == 0 || !mw_fn_name(fn))
            continue;
        if (what == 1)
            metrics_put(b, "%s{function=\"%s\"} %.9f\n", name, mw_fn_name(fn),
                        (double)t->total_ns / 1e9);
        else
            metrics_put(b, "%s{function=\"%s\"} %" PRIu64 "\n", name, mw_fn_name(fn),
                        what == 0 ? t->count : t->bytes);
    }
}

static void metrics_scalar(metrics_buf_t *b, const char *name, const char *type, const char *help,
                           uint64_t value)
{
    metrics_head(b, name, type, help);
    metrics_put(b, "%s %" PRIu64 "\n", name, value);
}

/* A gauge with a fractional value (%.9g: exact enough for seconds and shares). */
static void metrics_gauge(metrics_buf_t *b, const char *name, const char *help, double value)
{
    metrics_head(b, name, "gauge", help);
    metrics_put(b, "%s %.9g\n", name, value);
}

/* A label value in the exposition format: backslash, double quote and newline escaped; the
 * region and site strings come from the ranks (checked as text by regions.c, never trusted). */
static void metrics_label(metrics_buf_t *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\' || *s == '"')
            metrics_put(b, "\\%c", *s);
        else if (*s == '\n')
            metrics_put(b, "\\n");
        else
            metrics_put(b, "%c", *s);
    }
}

/* Code regions and call sites of the current job (docs/collector.md "/metrics"): the
 * METRICS_REGIONS regions with the most inclusive time each with its own series, the others
 * summed under region="_other"; the report's top METRICS_SITES call sites. The number of series
 * is bounded whatever the ranks define. */
static void metrics_regions(metrics_buf_t *b, const mw_collector_t *c)
{
    const mw__rs_t *rs = &c->job.rs;
    metrics_head(b, "mpiwatch_regions_refused_total", "counter",
                 "Region and call-site definitions and entries the collector left out, since "
                 "the collector started, by reason.");
    for (int r = 0; r < MW_RS_COUNT; r++)
        metrics_put(b, "mpiwatch_regions_refused_total{reason=\"%s\"} %" PRIu64 "\n",
                    mw__rs_reason_name((mw_rs_reason_t)r), c->stats.rs_refused[r]);
    if (!rs->n_regions && !rs->site_totals.n)
        return;
    /* The top regions by inclusive time: a small insertion list, O(regions x N). */
    const mw_region_t *top[METRICS_REGIONS];
    unsigned n = 0;
    for (uint32_t i = 0; i < rs->n_regions; i++) {
        const mw_region_t *r = &rs->regions[i];
        if (n == METRICS_REGIONS && r->incl_ns <= top[n - 1]->incl_ns)
            continue;
        unsigned j = n < METRICS_REGIONS ? n++ : n - 1;
        while (j > 0 && r->incl_ns > top[j - 1]->incl_ns) {
            top[j] = top[j - 1];
            j--;
        }
        top[j] = r;
    }
    mw_region_t other = {0};
    for (uint32_t i = 0; i < rs->n_regions; i++) {
        const mw_region_t *r = &rs->regions[i];
        int listed = 0;
        for (unsigned j = 0; j < n && !listed; j++)
            listed = top[j] == r;
        if (!listed) {
            other.count += r->count;
            other.incl_ns += r->incl_ns;
            other.excl_ns += r->excl_ns;
            other.mpi_ns += r->mpi_ns;
        }
    }
    int with_other = rs->n_regions > n;
    if (rs->n_regions) {
        static const char *const kinds[3] = {"inclusive", "exclusive", "mpi"};
        metrics_head(b, "mpiwatch_region_seconds_total", "counter",
                     "Time in each code region of the current job, all ranks: inclusive, "
                     "exclusive, and in MPI while it was the innermost region.");
        for (unsigned j = 0; j < n + (unsigned)with_other; j++) {
            const mw_region_t *r = j < n ? top[j] : &other;
            uint64_t v[3] = {r->incl_ns, r->excl_ns, r->mpi_ns};
            for (int k = 0; k < 3; k++) {
                metrics_put(b, "mpiwatch_region_seconds_total{region=\"");
                metrics_label(b, j < n ? r->name : "_other");
                metrics_put(b, "\",time=\"%s\"} %.9f\n", kinds[k], (double)v[k] / 1e9);
            }
        }
        metrics_head(b, "mpiwatch_region_count_total", "counter",
                     "Instances of each code region of the current job that ended, all ranks.");
        for (unsigned j = 0; j < n + (unsigned)with_other; j++) {
            const mw_region_t *r = j < n ? top[j] : &other;
            metrics_put(b, "mpiwatch_region_count_total{region=\"");
            metrics_label(b, j < n ? r->name : "_other");
            metrics_put(b, "\"} %" PRIu64 "\n", r->count);
        }
    }
    const mw_site_total_t *sites[METRICS_SITES];
    size_t ns = mw__report_top_sites(&c->job, sites, METRICS_SITES);
    if (!ns)
        return;
    metrics_head(b, "mpiwatch_callsite_seconds_total", "counter",
                 "Time in MPI calls of the current job's top call sites (by time), all ranks.");
    for (int pass = 0; pass < 2; pass++) {
        if (pass)
            metrics_head(b, "mpiwatch_callsite_calls_total", "counter",
                         "MPI calls of the current job's top call sites (by time), all ranks.");
        for (size_t i = 0; i < ns; i++) {
            const mw_site_t *st = &rs->sites[sites[i]->site - 1];
            metrics_put(b, "%s{site=\"%" PRIu32 "\",function=\"",
                        pass ? "mpiwatch_callsite_calls_total" : "mpiwatch_callsite_seconds_total",
                        sites[i]->site);
            metrics_label(b, st->function);
            metrics_put(b, "\",file=\"");
            metrics_label(b, st->file);
            metrics_put(b, "\",line=\"%" PRIu32 "\",mpi=\"%s\"} ", st->line,
                        mw_fn_name(sites[i]->fn));
            if (pass)
                metrics_put(b, "%" PRIu64 "\n", sites[i]->count);
            else
                metrics_put(b, "%.9f\n", (double)sites[i]->ns / 1e9);
        }
    }
}

/* Each reporting rank's MPI time in window `w` (ns) into a running max / sum, and its time
 * outside MPI (the window's length minus that, at least 0) likewise. Exact per-rank figures come
 * from the rank detail (Window.rf_*) when it is complete; otherwise from the occupancy shares
 * (rank_pm, thousandths). Returns 0 when neither is available. */
static int metrics_rank_times(const mw_window_t *w, double *mpi_max, double *mpi_sum,
                              double *out_max, double *out_sum)
{
    double len = (double)w->window_ns;
    uint32_t n = 0;
    *mpi_max = *mpi_sum = *out_max = *out_sum = 0;
    if (w->rank_detail_left_out == 0 && w->n_blocks <= w->ranks_reporting) {
        for (uint32_t i = 0; i < w->n_blocks; i++) {
            const mw_rank_block_t *bl = &w->blocks[i];
            double ns = 0;
            for (uint32_t k = 0; k < bl->rf_n; k++)
                ns += (double)w->rf[bl->rf_off + k].ns;
            double out = ns < len ? len - ns : 0;
            *mpi_max = ns > *mpi_max ? ns : *mpi_max;
            *out_max = out > *out_max ? out : *out_max;
            *mpi_sum += ns;
            *out_sum += out;
        }
        n = w->n_blocks;
        if (n < w->ranks_reporting) { /* reporting ranks with no entry made no MPI call */
            *out_max = len;
            *out_sum += len * (w->ranks_reporting - n);
        }
        return 1;
    }
    if (!w->rank_pm)
        return 0;
    for (uint32_t r = 0; r < w->n_rank_pm; r++) {
        if (w->rank_pm[r] == MW_RANK_PM_NONE)
            continue;
        double ns = len * w->rank_pm[r] / 1000.0;
        double out = ns < len ? len - ns : 0;
        *mpi_max = ns > *mpi_max ? ns : *mpi_max;
        *out_max = out > *out_max ? out : *out_max;
        *mpi_sum += ns;
        *out_sum += out;
        n++;
    }
    return n > 0;
}

/* The collector's hook for every closed window (loop thread): keeps the latest one's gauges,
 * then hands the window on to the consumer that was there before. */
static void metrics_on_window(const mw_window_t *w, void *user)
{
    mw_metrics_t *m = user;
    const mw_job_t *job = &m->c->job;
    metrics_window_t *g = &m->win;
    uint64_t first = job->min_window >= 0 && (uint64_t)job->min_window <= w->index
                         ? (uint64_t)job->min_window
                         : w->index;
    memset(g, 0, sizeof *g);
    g->have = 1;
    g->jobs = m->c->stats.jobs;
    g->number = w->index - first;
    uint64_t first_start = mw_grid_start(&job->grid, first);
    g->start_s = w->start_ns >= first_start ? (double)(w->start_ns - first_start) / 1e9 : 0;
    g->length_s = (double)w->window_ns / 1e9;
    g->seen = w->ranks_reporting;
    g->missing = w->ranks_missing;
    g->mpi_fraction = w->occ_total_ns ? w->occ_fraction : w->mpi_fraction;
    double mpi_max, mpi_sum, out_max, out_sum;
    if (w->ranks_reporting && metrics_rank_times(w, &mpi_max, &mpi_sum, &out_max, &out_sum)) {
        double n = w->ranks_reporting;
        g->have_balance = 1;
        g->mpi_max_s = mpi_max / 1e9;
        g->mpi_mean_s = mpi_sum / n / 1e9;
        g->imbalance = mpi_sum > 0 ? mpi_max / (mpi_sum / n) - 1 : 0;
        g->load_balance = out_max > 0 ? out_sum / n / out_max : 1;
    }
    if (m->next_on_window)
        m->next_on_window(w, m->next_user);
}

/* The gauges of the current job's latest closed window (docs/metrics.md); none before one
 * closed, rather than zeros that would read as a balanced, idle job. */
static void metrics_window_gauges(metrics_buf_t *b, const mw_metrics_t *m, const mw_collector_t *c)
{
    const metrics_window_t *g = &m->win;
    if (!g->have || g->jobs != c->stats.jobs || !c->job.active)
        return;
    metrics_gauge(b, "mpiwatch_window_number",
                  "Number of the latest closed window in the current job (0: its first window).",
                  (double)g->number);
    metrics_gauge(b, "mpiwatch_window_start_seconds",
                  "Start of the latest closed window, seconds after the start of the job's "
                  "first window.",
                  g->start_s);
    metrics_gauge(b, "mpiwatch_window_length_seconds", "Length of the latest closed window.",
                  g->length_s);
    metrics_gauge(b, "mpiwatch_window_mpi_fraction",
                  "Share of the latest closed window the reporting ranks spent in MPI: time "
                  "in MPI / (ranks reporting x window length).",
                  g->mpi_fraction);
    metrics_gauge(b, "mpiwatch_window_ranks_seen",
                  "Ranks whose sample of the latest closed window was merged.", (double)g->seen);
    metrics_gauge(b, "mpiwatch_window_ranks_missing",
                  "Ranks the latest closed window waited for in vain (no bye, not declared "
                  "dead, no sample when it closed).",
                  (double)g->missing);
    metrics_gauge(b, "mpiwatch_window_ranks_expected",
                  "Ranks the latest closed window expected: seen + missing.",
                  (double)g->seen + g->missing);
    if (!g->have_balance)
        return;
    metrics_gauge(b, "mpiwatch_window_mpi_imbalance",
                  "Load imbalance of the latest closed window: max / mean - 1 of the per-rank "
                  "time in MPI (0: every rank spent the same time in MPI).",
                  g->imbalance);
    metrics_gauge(b, "mpiwatch_window_load_balance",
                  "POP load-balance efficiency of the latest closed window: mean / max of the "
                  "per-rank time outside MPI (1: balanced).",
                  g->load_balance);
    metrics_head(b, "mpiwatch_window_rank_mpi_seconds", "gauge",
                 "Per-rank time in MPI in the latest closed window: the largest and the mean "
                 "over the reporting ranks.");
    metrics_put(b, "mpiwatch_window_rank_mpi_seconds{stat=\"max\"} %.9g\n", g->mpi_max_s);
    metrics_put(b, "mpiwatch_window_rank_mpi_seconds{stat=\"mean\"} %.9g\n", g->mpi_mean_s);
}

/* Inserts job="NAME" as the first label of every sample line of `text` (comments and blank
 * lines as they are). Returns a new buffer (caller frees) or NULL when out of memory. */
static char *metrics_add_job(const char *text, size_t len, const char *job, size_t *out_len)
{
    metrics_buf_t label = {.cap = 64};
    label.buf = malloc(label.cap);
    if (!label.buf)
        return NULL;
    metrics_put(&label, "job=\"");
    metrics_label(&label, job);
    metrics_put(&label, "\"");
    metrics_buf_t b = {.cap = len + len / 4 + 64};
    b.buf = malloc(b.cap);
    if (!b.buf || label.failed) {
        free(label.buf);
        free(b.buf);
        return NULL;
    }
    for (size_t i = 0; i < len;) {
        const char *line = text + i;
        const char *nl = memchr(line, '\n', len - i);
        size_t n = nl ? (size_t)(nl - line) + 1 : len - i;
        if (line[0] == '#' || line[0] == '\n') {
            metrics_put(&b, "%.*s", (int)n, line);
        } else {
            size_t name = strcspn(line, "{ ");
            if (line[name] == '{')
                metrics_put(&b, "%.*s{%s,%.*s", (int)name, line, label.buf, (int)(n - name - 1),
                            line + name + 1);
            else
                metrics_put(&b, "%.*s{%s}%.*s", (int)name, line, label.buf, (int)(n - name),
                            line + name);
        }
        i += n;
    }
    free(label.buf);
    if (b.failed) {
        free(b.buf);
        return NULL;
    }
    *out_len = b.len;
    return b.buf;
}

/* Formats the exposition text of the collector's current state. Returns it (caller frees) with
 * its length, or NULL when out of memory. */
static char *metrics_format(const mw_metrics_t *m, const mw_collector_t *c, size_t *len)
{
    metrics_buf_t b = {.cap = 4096};
    b.buf = malloc(b.cap);
    if (!b.buf)
        return NULL;
    const mw_job_t *job = &c->job;
    uint32_t live = 0;
    uint64_t dropped = 0;
    if (job->active) {
        for (uint32_t r = 0; r < job->size; r++) {
            live += job->ranks[r].state == MW_RANK_LIVE;
            dropped += job->ranks[r].samples_dropped;
        }
    }

    metrics_head(&b, "mpiwatch_calls_total", "counter",
                 "MPI calls made by the ranks of the current job, by function.");
    metrics_per_fn(&b, job, "mpiwatch_calls_total", 0);
    metrics_head(&b, "mpiwatch_call_seconds_total", "counter",
                 "Seconds spent inside MPI calls by all ranks of the current job, by function.");
    metrics_per_fn(&b, job, "mpiwatch_call_seconds_total", 1);
    metrics_head(&b, "mpiwatch_bytes_total", "counter",
                 "Bytes passed to MPI calls by the ranks of the current job, by function.");
    metrics_per_fn(&b, job, "mpiwatch_bytes_total", 2);
    metrics_scalar(&b, "mpiwatch_ranks_reporting", "gauge",
                   "Ranks of the current job that said hello and have neither said bye nor "
                   "been declared dead.",
                   live);
    metrics_scalar(&b, "mpiwatch_ranks", "gauge", "Size of the current job (0: no job yet).",
                   job->active ? job->size : 0);
    metrics_scalar(&b, "mpiwatch_windows_closed_total", "counter",
                   "Merged windows closed since the collector started.", c->stats.windows);
    metrics_scalar(&b, "mpiwatch_windows_partial_total", "counter",
                   "Merged windows closed with ranks missing since the collector started.",
                   c->stats.partial_windows);
    metrics_scalar(&b, "mpiwatch_samples_dropped_total", "counter",
                   "Samples the ranks of the current job dropped before sending (queue full).",
                   dropped);
    metrics_scalar(&b, "mpiwatch_samples_late_total", "counter",
                   "Samples that arrived after their window had closed, since the collector "
                   "started.",
                   c->stats.late);
    /* Loss accounting (docs/collector.md): the ranks' running totals minus what arrived. */
    mw_loss_t loss;
    mw__job_loss(job, &loss, NULL);
    metrics_scalar(&b, "mpiwatch_missed_calls_total", "counter",
                   "MPI calls the ranks of the current job made that never reached the "
                   "collector (their samples were dropped, lost in flight or sent before it "
                   "started).",
                   loss.missed.calls);
    metrics_head(&b, "mpiwatch_missed_call_seconds_total", "counter",
                 "Seconds inside MPI calls of the current job that never reached the collector.");
    metrics_put(&b, "mpiwatch_missed_call_seconds_total %.9f\n", (double)loss.missed.time_ns / 1e9);
    metrics_scalar(&b, "mpiwatch_missed_bytes_total", "counter",
                   "Bytes of MPI calls of the current job that never reached the collector.",
                   loss.missed.bytes);
    metrics_scalar(&b, "mpiwatch_missed_samples_total", "counter",
                   "Samples the ranks of the current job produced that never reached the "
                   "collector.",
                   loss.missed.samples);
    /* Through aggregators (aggstate.c): their part of the missed calls by hop, and the partials
     * they dropped; only when the job has aggregators. */
    if (loss.aggregators) {
        metrics_scalar(&b, "mpiwatch_aggregators", "gauge",
                       "Aggregators of the current job that reported their accounting.",
                       loss.aggregators);
        metrics_head(&b, "mpiwatch_missed_calls_by_hop_total", "counter",
                     "MPI calls of the current job missed through aggregators, by hop: between "
                     "the ranks and their aggregator, between the aggregators and this collector.");
        metrics_put(
            &b, "mpiwatch_missed_calls_by_hop_total{hop=\"ranks_to_aggregators\"} %" PRIu64 "\n",
            loss.missed_to_aggs.calls);
        metrics_put(&b,
                    "mpiwatch_missed_calls_by_hop_total{hop=\"aggregators_to_collector\"} "
                    "%" PRIu64 "\n",
                    loss.missed_from_aggs.calls);
        uint64_t dropped_partials = 0;
        for (uint32_t i = 0; i < loss.aggregators; i++) {
            mw_agg_figures_t af;
            mw__aggs_figures(job, i, &af);
            dropped_partials += af.partials_dropped;
        }
        metrics_scalar(&b, "mpiwatch_aggregator_partials_dropped_total", "counter",
                       "Partial windows the aggregators of the current job could not send "
                       "upstream (their calls count as missed between ranks and aggregators).",
                       dropped_partials);
    }
    metrics_scalar(&b, "mpiwatch_messages_accepted_total", "counter",
                   "Messages accepted since the collector started.", c->stats.accepted);
    metrics_head(&b, "mpiwatch_messages_rejected_total", "counter",
                 "Messages rejected since the collector started, by reason.");
    for (int r = 1; r < MW_REJECT_COUNT; r++)
        metrics_put(&b, "mpiwatch_messages_rejected_total{reason=\"%s\"} %" PRIu64 "\n",
                    mw__reject_name((mw_reject_t)r), c->stats.rejected[r]);
    /* Step data refused by a cap (steps.c, docs/steps.md): always listed, 0 without steps. */
    metrics_head(&b, "mpiwatch_steps_refused_total", "counter",
                 "Step marks, steps, pairs and carried segments of the current job that the "
                 "collector did not keep as claimed (a step cap), by reason.");
    for (int r = 0; r < MW_STEPS_REFUSAL_COUNT; r++)
        metrics_put(&b, "mpiwatch_steps_refused_total{reason=\"%s\"} %" PRIu64 "\n",
                    mw__steps_refusal_name((mw_steps_refusal_t)r),
                    mw__steps_refused(c, (mw_steps_refusal_t)r));
    /* Parts of hellos over a job-wide cap (job.c, docs/collector.md "Caps"): every reason,
     * 0 included (the stats JSON lists them only when one is not 0). */
    metrics_head(&b, "mpiwatch_hello_parts_capped_total", "counter",
                 "Parts of accepted hellos over a job-wide cap that the collector did not keep, "
                 "since the collector started, by reason.");
    for (int r = 0; r < MW_CAP_COUNT; r++)
        metrics_put(&b, "mpiwatch_hello_parts_capped_total{reason=\"%s\"} %" PRIu64 "\n",
                    mw__cap_reason_name((mw_cap_reason_t)r), c->stats.capped[r]);
    /* Per-call traces (trace_check.c, docs/trace.md): always listed, 0 without tracing. */
    const mw_trace_stats_t *ts = &c->tstats;
    metrics_scalar(&b, "mpiwatch_traced_calls_total", "counter",
                   "Timed MPI calls received in exact per-call traces since the collector "
                   "started.",
                   ts->traced_calls);
    metrics_scalar(&b, "mpiwatch_traced_windows_total", "counter",
                   "Rank windows received exact (every timed call traced) since the collector "
                   "started.",
                   ts->exact);
    metrics_scalar(&b, "mpiwatch_trace_left_out_calls_total", "counter",
                   "Timed MPI calls of traced rank windows that were not traced (summary only: "
                   "the budget, a full ring, or a refused trace) since the collector started.",
                   ts->left_out);
    metrics_scalar(&b, "mpiwatch_trace_plans_total", "counter",
                   "Trace plans (mpiwatch.trace) sent to the ranks since the collector started.",
                   ts->plans);
    metrics_head(&b, "mpiwatch_traces_refused_total", "counter",
                 "Per-call traces (or communicator definitions) the collector did not keep as "
                 "sent, by reason; the samples themselves were kept.");
    for (int r = 0; r < MW_TREFUSE_COUNT; r++)
        metrics_put(&b, "mpiwatch_traces_refused_total{reason=\"%s\"} %" PRIu64 "\n",
                    mw__trace_refuse_name((mw_trace_refuse_t)r), ts->refused[r]);
    /* The online lateness analysis (lateness.c, docs/lateness.md): always listed, 0 without
     * traces or with --lateness off. Seconds, as the other durations here. */
    const mw_lateness_totals_t *lt = &c->ltotals;
    metrics_gauge(&b, "mpiwatch_lateness_max_seconds",
                  "Largest lateness in the newest analysed window of the current job.",
                  (double)lt->last_lateness_ns / 1e9);
    metrics_gauge(&b, "mpiwatch_diff_lateness_max_seconds",
                  "Largest differential lateness (where a delay starts) in the newest analysed "
                  "window of the current job.",
                  (double)lt->last_diff_ns / 1e9);
    metrics_gauge(&b, "mpiwatch_lateness_share",
                  "Share of the newest analysed window's traced rank time lost to lateness.",
                  lt->share_last);
    metrics_gauge(&b, "mpiwatch_lateness_job_max_seconds",
                  "Largest lateness in any analysed window of the current job.",
                  (double)lt->lateness_max_ns / 1e9);
    metrics_scalar(&b, "mpiwatch_lateness_windows_total", "counter",
                   "Traced windows of the current job the lateness analysis analysed.",
                   lt->windows_analysed);
    metrics_scalar(&b, "mpiwatch_lateness_behind_total", "counter",
                   "Traced windows of the current job the lateness analysis skipped because it "
                   "was behind (its queue full, or a window waited over --lateness-budget-ms).",
                   lt->windows_skipped);
    metrics_scalar(&b, "mpiwatch_recording_too_large_total", "counter",
                   "Records left out of the recording (--record) because they are over its "
                   "64 MiB record limit; 0 without a recording.",
                   mw__record_too_large(c->record));
    metrics_regions(&b, c);
    metrics_window_gauges(&b, m, c);
    if (c->opt && c->opt->curve_secret) { /* as in the stats JSON: only when CURVE is on */
        metrics_head(&b, "mpiwatch_connections_refused_total", "counter",
                     "Connections refused by CURVE authentication, by reason.");
        for (int r = 0; r < MW_AUTH_COUNT; r++)
            metrics_put(&b, "mpiwatch_connections_refused_total{reason=\"%s\"} %" PRIu64 "\n",
                        mw__auth_reason_name((mw_auth_reason_t)r), c->stats.auth_refused[r]);
    }
    if (b.failed) {
        free(b.buf);
        return NULL;
    }
    char *text = metrics_add_job(b.buf, b.len, job->active ? job->job : "", len);
    free(b.buf);
    return text;
}

/* Changes whenever anything the text shows may have changed: every accepted message (which
 * is what moves job totals and rank states), rejection, window, late sample or new job. */
static uint64_t metrics_signature(const mw_collector_t *c)
{
    uint64_t s = c->stats.accepted + c->stats.late + c->stats.windows + c->stats.partial_windows +
                 c->stats.jobs + c->job.dead;
    for (int r = 0; r < MW_REJECT_COUNT; r++)
        s += c->stats.rejected[r];
    for (int r = 0; r < MW_AUTH_COUNT; r++)
        s += c->stats.auth_refused[r];
    for (int r = 0; r < MW_STEPS_REFUSAL_COUNT; r++)
        s += mw__steps_refused(c, (mw_steps_refusal_t)r);
    for (int r = 0; r < MW_CAP_COUNT; r++)
        s += c->stats.capped[r];
    for (int r = 0; r < MW_TREFUSE_COUNT; r++)
        s += c->tstats.refused[r];
    for (int r = 0; r < MW_RS_COUNT; r++)
        s += c->stats.rs_refused[r];
    s += c->tstats.plans;    /* the other trace counters move with accepted messages */
    s += c->ltotals.batches; /* lateness batches arrive after their windows */
    return s + mw__record_too_large(c->record);
}

static void metrics_publish(mw_metrics_t *m, const mw_collector_t *c)
{
    size_t len = 0;
    char *text = metrics_format(m, c, &len);
    if (!text) {
        MW_LOG(MW_LOG_WARN, "metrics: out of memory; serving the previous snapshot");
        return;
    }
    pthread_mutex_lock(&m->lock);
    char *old = m->text;
    m->text = text;
    m->len = len;
    pthread_mutex_unlock(&m->lock);
    free(old);
}

static enum MHD_Result metrics_reply(struct MHD_Connection *conn, unsigned status, char *body,
                                     size_t len, const char *type)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(
        len, body, body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!resp) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    enum MHD_Result rc = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return rc;
}

/* Runs on libmicrohttpd's thread: reads nothing but the published snapshot. */
static enum MHD_Result metrics_handler(void *cls, struct MHD_Connection *conn, const char *url,
                                       const char *method, const char *version,
                                       const char *upload_data, size_t *upload_data_size,
                                       void **con_cls)
{
    (void)version;
    (void)upload_data;
    (void)con_cls;
    mw_metrics_t *m = cls;
    if (*upload_data_size != 0) {
        *upload_data_size = 0; /* a body is ignored */
        return MHD_YES;
    }
    static char not_found[] = "not found: the metrics are at /metrics\n";
    static char not_allowed[] = "only GET is served\n";
    if (strcmp(url, "/metrics") != 0) {
        struct MHD_Response *resp = MHD_create_response_from_buffer(sizeof not_found - 1, not_found,
                                                                    MHD_RESPMEM_PERSISTENT);
        if (!resp)
            return MHD_NO;
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain");
        enum MHD_Result rc = MHD_queue_response(conn, MHD_HTTP_NOT_FOUND, resp);
        MHD_destroy_response(resp);
        return rc;
    }
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
        struct MHD_Response *resp = MHD_create_response_from_buffer(
            sizeof not_allowed - 1, not_allowed, MHD_RESPMEM_PERSISTENT);
        if (!resp)
            return MHD_NO;
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
        enum MHD_Result rc = MHD_queue_response(conn, MHD_HTTP_METHOD_NOT_ALLOWED, resp);
        MHD_destroy_response(resp);
        return rc;
    }
    pthread_mutex_lock(&m->lock);
    size_t len = m->len;
    char *body = malloc(len ? len : 1);
    if (body)
        memcpy(body, m->text, len);
    pthread_mutex_unlock(&m->lock);
    if (!body)
        return MHD_NO;
    return metrics_reply(conn, MHD_HTTP_OK, body, len, METRICS_CONTENT_TYPE);
}

mw_metrics_t *mw__metrics_start(mw_collector_t *c, unsigned port)
{
    mw_metrics_t *m = calloc(1, sizeof *m);
    if (!m) {
        MW_LOG(MW_LOG_ERROR, "metrics: out of memory");
        return NULL;
    }
    pthread_mutex_init(&m->lock, NULL);
    metrics_publish(m, c); /* a scrape before the first update already gets a valid page */
    if (!m->text) {
        mw__metrics_stop(m);
        return NULL;
    }
    struct sockaddr_storage addr;
    unsigned addrlen;
    int loopback;
    char err[200];
    const char *bind = c->opt ? c->opt->metrics_bind : NULL;
    if (mw__metrics_bind_parse(bind, port, &addr, &addrlen, &loopback, err, sizeof err) < 0) {
        MW_LOG(MW_LOG_ERROR, "metrics: %s", err); /* refused by the option check before */
        mw__metrics_stop(m);
        return NULL;
    }
    char host[INET6_ADDRSTRLEN + 2] = "";
    if (addr.ss_family == AF_INET6) {
        host[0] = '[';
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&addr)->sin6_addr, host + 1, INET6_ADDRSTRLEN);
        strcat(host, "]");
    } else {
        inet_ntop(AF_INET, &((struct sockaddr_in *)&addr)->sin_addr, host, sizeof host);
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    if (addr.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    m->daemon = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, metrics_handler, m,
                                 MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
                                 MHD_OPTION_CONNECTION_LIMIT, 64u, MHD_OPTION_CONNECTION_TIMEOUT,
                                 10u, MHD_OPTION_END);
    if (!m->daemon) {
        MW_LOG(MW_LOG_ERROR,
               "metrics: cannot serve HTTP on %s:%u (port in use, or no such address here?)", host,
               port);
        mw__metrics_stop(m);
        return NULL;
    }
    if (!loopback)
        MW_LOG(MW_LOG_WARN,
               "warning: the metrics page on %s:%u is not loopback and has no authentication "
               "(--allow-insecure): anyone who reaches it can read the job's figures",
               host, port);
    /* The latest window's gauges: chained before whatever consumer was there. */
    m->c = c;
    m->next_on_window = c->on_window;
    m->next_user = c->on_window_user;
    c->on_window = metrics_on_window;
    c->on_window_user = m;
    MW_LOG(MW_LOG_INFO, "metrics on http://%s:%u/metrics", host, port);
    return m;
}

long mw__metrics_update(mw_metrics_t *m, const mw_collector_t *c, uint64_t now_ns)
{
    uint64_t sig = metrics_signature(c);
    int changed = !m->built || sig != m->signature;
    int job_ended =
        c->job.ended != MW_END_NONE && (c->job.ended != m->ended || c->stats.jobs != m->jobs);
    if (!changed && !job_ended)
        return -1;
    if (!job_ended && now_ns < m->next_ns)
        return (long)((m->next_ns - now_ns + MW_NS_PER_MS - 1) / MW_NS_PER_MS);
    metrics_publish(m, c);
    m->built = 1;
    m->signature = sig;
    m->ended = c->job.ended;
    m->jobs = c->stats.jobs;
    m->next_ns = now_ns + METRICS_PERIOD_NS;
    return -1;
}

void mw__metrics_stop(mw_metrics_t *m)
{
    if (!m)
        return;
    if (m->daemon)
        MHD_stop_daemon(m->daemon); /* joins the HTTP thread: nothing reads text after this */
    if (m->c && m->c->on_window == metrics_on_window && m->c->on_window_user == m) {
        m->c->on_window = m->next_on_window;
        m->c->on_window_user = m->next_user;
    }
    pthread_mutex_destroy(&m->lock);
    free(m->text);
    free(m);
}
