/* report.c: the end-of-run text report, in the spirit of mpiP.
 *
 * DESIGN: everything comes from the exact job totals (job.c) and the collector's counters, so
 * the report agrees with the summary JSON to the nanosecond. The layout is fixed-width text
 * for a terminal or a log; sections that would be long at scale (per-rank, pairs) show a
 * summary plus the extremes instead of every rank: selecting them is O(ranks) and O(pairs)
 * with small fixed top-N arrays, with no sort of the whole set.
 */
#include "collector.h"
#include "report.h"
#include "record_file.h"
#include "steps.h"
#include "zsock.h"
#include "dormant.h"
#include "aggstate.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define REPORT_ALL_RANKS 16 /* up to this many ranks, list every one */
#define REPORT_EXTREMES 5   /* otherwise, this many at each end */
#define REPORT_PAIRS 10
#define REPORT_HOSTS 8
#define REPORT_SITES 20   /* call sites listed (mpiP's "Aggregate Time (top twenty)") */
#define REPORT_REGIONS 20 /* regions listed, by inclusive time */

static double ns_to_s(uint64_t ns)
{
    return (double)ns / 1e9;
}

static double ns_to_us(uint64_t ns)
{
    return (double)ns / 1e3;
}

static int cmp_fn_time_desc(const void *pa, const void *pb)
{
    const mw_fn_total_t *a = *(const mw_fn_total_t *const *)pa;
    const mw_fn_total_t *b = *(const mw_fn_total_t *const *)pb;
    if (a->total_ns != b->total_ns)
        return a->total_ns > b->total_ns ? -1 : 1;
    return a->count > b->count ? -1 : a->count < b->count;
}

static void report_header(const mw_collector_t *c, FILE *out)
{
    const mw_job_t *job = &c->job;
    fprintf(out, "job          %s (%s)\n", job->job[0] ? job->job : "(unnamed)",
            mw__end_name(job->ended));
    fprintf(out, "program      %s\n", job->program[0] ? job->program : "?");
    if (job->mpi_library[0])
        fprintf(out, "MPI library  %s\n", job->mpi_library);
    fprintf(out, "ranks        %u (%u said hello, %u said bye, %u declared dead)\n", job->size,
            job->hellos, job->byes, job->dead);

    /* Host 0 is the "" placeholder for ranks that did not name theirs. */
    uint32_t hosts = job->n_hosts > 0 ? job->n_hosts - 1 : 0;
    fprintf(out, "hosts        %u", hosts);
    for (uint32_t i = 1; i < job->n_hosts && i <= REPORT_HOSTS; i++)
        fprintf(out, "%s%s", i == 1 ? ": " : ", ", job->hosts[i]);
    if (hosts > REPORT_HOSTS)
        fprintf(out, ", ... (%u more)", hosts - REPORT_HOSTS);
    fputc('\n', out);

    uint64_t span = job->min_window >= 0 ? mw_grid_span(&job->grid, (uint64_t)job->min_window,
                                                        (uint64_t)job->max_window + 1)
                                         : 0;
    uint64_t end = job->ended_ns ? job->ended_ns : job->last_activity_ns;
    fprintf(out, "duration     %.3f s of windows (%.3g ms each", ns_to_s(span),
            (double)job->window_ns / 1e6);
    for (uint32_t i = 1; i < job->grid.n; i++)
        fprintf(out, ", %.3g ms from window %" PRIu64, (double)job->grid.seg[i].window_ns / 1e6,
                job->grid.seg[i].first);
    fprintf(out, "), %.3f s of collection\n", ns_to_s(end - job->started_ns));
    fprintf(out, "windows      %" PRIu64 " merged, %" PRIu64 " partial (ranks missing)\n",
            job->windows, job->partial_windows);
    fprintf(out, "clock sync   max estimated error %.3f us\n", ns_to_us(job->max_clock_error_ns));
}

static void report_functions(const mw_job_t *job, FILE *out)
{
    const mw_fn_total_t *rows[MW_FN_SPACE];
    unsigned ids[MW_FN_SPACE];
    unsigned n = 0;
    uint64_t mpi_ns = 0;
    for (unsigned fn = 1; fn < MW_FN_SPACE; fn++) {
        if (job->fn[fn].count) {
            rows[n++] = &job->fn[fn];
            mpi_ns += job->fn[fn].total_ns;
        }
    }
    qsort(rows, n, sizeof *rows, cmp_fn_time_desc);
    for (unsigned i = 0; i < n; i++)
        ids[i] = (unsigned)(rows[i] - job->fn);

    fprintf(out, "\nMPI functions by time (all ranks)\n");
    fprintf(out, "  %-24s %12s %14s %7s %11s %11s %11s %14s\n", "function", "calls", "time (s)",
            "%MPI", "avg (us)", "min (us)", "max (us)", "bytes");
    if (n == 0)
        fprintf(out, "  (no calls recorded)\n");
    for (unsigned i = 0; i < n; i++) {
        const mw_fn_total_t *t = rows[i];
        fprintf(out, "  %-24s %12" PRIu64 " %14.6f %7.2f %11.3f %11.3f %11.3f %14" PRIu64 "\n",
                mw_fn_name(ids[i]), t->count, ns_to_s(t->total_ns),
                mpi_ns ? 100.0 * (double)t->total_ns / (double)mpi_ns : 0.0,
                ns_to_us(t->total_ns) / (double)t->count, ns_to_us(t->min_ns), ns_to_us(t->max_ns),
                t->bytes);
    }
}

/* Inserts rank r into a sorted top list (by fraction, descending when `high`). */
static void top_insert(uint32_t *list, double *val, unsigned *n, unsigned cap, uint32_t r, double v,
                       int high)
{
    unsigned i = *n < cap ? (*n)++ : cap;
    if (i == cap) {
        if (high ? v <= val[cap - 1] : v >= val[cap - 1])
            return;
        i = cap - 1;
    }
    while (i > 0 && (high ? v > val[i - 1] : v < val[i - 1])) {
        list[i] = list[i - 1];
        val[i] = val[i - 1];
        i--;
    }
    list[i] = r;
    val[i] = v;
}

static void report_rank_row(const mw_job_t *job, uint32_t r, FILE *out)
{
    const mw_rank_t *rk = &job->ranks[r];
    fprintf(out, "  %8u %-20.20s %7.2f %14.6f %12" PRIu64 " %9" PRIu64 "\n", r, mw_job_host(job, r),
            100.0 * mw__job_rank_fraction(job, r), ns_to_s(rk->mpi_time_ns), rk->calls,
            rk->samples);
}

static void report_ranks(const mw_job_t *job, FILE *out)
{
    fprintf(out, "\nMPI time per rank (time in MPI / wall time of the rank's windows)\n");
    uint32_t lo[REPORT_EXTREMES], hi[REPORT_EXTREMES];
    double lov[REPORT_EXTREMES], hiv[REPORT_EXTREMES];
    unsigned nlo = 0, nhi = 0;
    uint32_t counted = 0;
    double sum = 0;
    for (uint32_t r = 0; r < job->size; r++) {
        double f = mw__job_rank_fraction(job, r);
        if (f < 0)
            continue;
        counted++;
        sum += f;
        top_insert(lo, lov, &nlo, REPORT_EXTREMES, r, f, 0);
        top_insert(hi, hiv, &nhi, REPORT_EXTREMES, r, f, 1);
    }
    if (counted == 0) {
        fprintf(out, "  (no rank reported a window)\n");
        return;
    }
    double mean = sum / counted;
    fprintf(out,
            "  min %.2f%% (rank %u)   mean %.2f%%   max %.2f%% (rank %u)   max/mean %.2f"
            "   (%u of %u ranks reported)\n",
            100.0 * lov[0], lo[0], 100.0 * mean, 100.0 * hiv[0], hi[0],
            mean > 0 ? hiv[0] / mean : 0.0, counted, job->size);
    fprintf(out, "  %8s %-20s %7s %14s %12s %9s\n", "rank", "host", "MPI %", "MPI time (s)",
            "calls", "windows");
    if (job->size <= REPORT_ALL_RANKS) {
        for (uint32_t r = 0; r < job->size; r++)
            if (mw__job_rank_fraction(job, r) >= 0)
                report_rank_row(job, r, out);
        return;
    }
    fprintf(out, "  highest:\n");
    for (unsigned i = 0; i < nhi; i++)
        report_rank_row(job, hi[i], out);
    fprintf(out, "  lowest:\n");
    for (unsigned i = 0; i < nlo; i++)
        report_rank_row(job, lo[i], out);
}

static int pair_before(const mw_pair_sum_t *a, const mw_pair_sum_t *b)
{
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes;
    if (a->messages != b->messages)
        return a->messages > b->messages;
    return a->src != b->src ? a->src < b->src : a->dst < b->dst;
}

static void report_pairs(const mw_job_t *job, FILE *out)
{
    const mw_pair_sum_t *top[REPORT_PAIRS];
    unsigned n = 0;
    for (uint32_t i = 0; i < job->pairs.n; i++) {
        const mw_pair_sum_t *p = MW__INDEX_AT(&job->pairs, const mw_pair_sum_t, i);
        unsigned k = n < REPORT_PAIRS ? n++ : REPORT_PAIRS;
        if (k == REPORT_PAIRS) {
            if (!pair_before(p, top[REPORT_PAIRS - 1]))
                continue;
            k = REPORT_PAIRS - 1;
        }
        while (k > 0 && pair_before(p, top[k - 1])) {
            top[k] = top[k - 1];
            k--;
        }
        top[k] = p;
    }
    fprintf(out, "\nTop communicating pairs (point-to-point, by bytes; %u pairs in all)\n",
            job->pairs.n);
    if (n == 0) {
        fprintf(out, "  (none)\n");
        return;
    }
    fprintf(out, "  %8s %8s %14s %16s\n", "src", "dst", "messages", "bytes");
    for (unsigned i = 0; i < n; i++)
        fprintf(out, "  %8u %8u %14" PRIu64 " %16" PRIu64 "\n", top[i]->src, top[i]->dst,
                top[i]->messages, top[i]->bytes);
}

static void report_losses(const mw_collector_t *c, FILE *out)
{
    const mw_job_t *job = &c->job;
    uint64_t samples = 0, records = 0, calls_late = 0;
    for (uint32_t r = 0; r < job->size; r++) {
        const mw_rank_t *rk = &job->ranks[r];
        samples += rk->samples_dropped;
        records += rk->records_dropped_bye > rk->records_dropped ? rk->records_dropped_bye
                                                                 : rk->records_dropped;
        calls_late += rk->calls_late;
    }
    fprintf(out, "\nLosses\n");
    fprintf(out,
            "  dropped on the ranks: %" PRIu64 " samples, %" PRIu64 " records; %" PRIu64
            " calls counted in a later window\n",
            samples, records, calls_late);
    fprintf(out,
            "  late at the collector: %" PRIu64 " samples (in the totals, not in their window)\n",
            job->late);
    /* Loss accounting (docs/collector.md): the ranks' running totals against what arrived. */
    mw_loss_t loss;
    mw__job_loss(job, &loss, NULL);
    fprintf(out,
            "  missed by the collector: %" PRIu64 " calls, %.6f s in MPI, %" PRIu64
            " bytes, %" PRIu64 " samples of %u rank(s)\n",
            loss.missed.calls, ns_to_s(loss.missed.time_ns), loss.missed.bytes, loss.missed.samples,
            loss.ranks_missing);
    if (!loss.aggregators)
        fprintf(out,
                "  calls at the ranks: %" PRIu64 " = %" PRIu64 " in this report + %" PRIu64
                " missed\n",
                loss.at_ranks.calls, loss.merged.calls, loss.missed.calls);
    else /* through aggregators: the part of each hop (aggstate.c) */
        mw__aggs_report(job, &loss, out);
    mw__dormant_report(job->dormant, out); /* dormant calls: counted, not missed (dormant.c) */
    if (loss.ranks_not_final)
        fprintf(out, "  ranks without bye: %u (their totals are as of their last sample)\n",
                loss.ranks_not_final);
    if (loss.ranks_no_totals)
        fprintf(out, "  ranks without running totals (older library): %u (missed unknown)\n",
                loss.ranks_no_totals);
    if (c->merge_ready && c->merge.evicted)
        fprintf(out, "  windows closed early to bound memory: %" PRIu64 "\n", c->merge.evicted);
    if (c->merge_ready && (c->merge.agg_waited || c->merge.agg_given_up)) /* merge.c */
        fprintf(out,
                "  windows that waited for an aggregator: %" PRIu64 " complete, %" PRIu64
                " closed without its partial (%" PRIu64 " partials missing)\n",
                c->merge.agg_waited, c->merge.agg_given_up, c->merge.agg_owed);
    if (job->overflow)
        fprintf(out, "  totals that did not fit their table: %" PRIu64 "\n", job->overflow);
    /* Time steps (docs/steps.md): what a step cap refused, once the job marked steps. */
    if (mw__steps_marked(c)) {
        fprintf(out, "  steps refused by a cap:");
        for (int r = 0; r < MW_STEPS_REFUSAL_COUNT; r++)
            fprintf(out, "%s %s %" PRIu64, r ? "," : "",
                    mw__steps_refusal_name((mw_steps_refusal_t)r),
                    mw__steps_refused(c, (mw_steps_refusal_t)r));
        fprintf(out, "\n");
    }

    uint64_t rejected = 0;
    for (int r = 1; r < MW_REJECT_COUNT; r++)
        rejected += c->stats.rejected[r];
    fprintf(out, "  rejected messages: %" PRIu64, rejected);
    const char *sep = " (";
    for (int r = 1; r < MW_REJECT_COUNT; r++) {
        if (c->stats.rejected[r]) {
            fprintf(out, "%s%s %" PRIu64, sep, mw__reject_name((mw_reject_t)r),
                    c->stats.rejected[r]);
            sep = ", ";
        }
    }
    fprintf(out, "%s\n", rejected ? ")" : "");
}

/* Per-call traces (docs/trace.md), once any arrived: what was traced, what was left out, what
 * was refused and why, and how many windows each rank was exact in (the fewest and the most,
 * with a rank of each). */
static void report_traces(const mw_collector_t *c, FILE *out)
{
    const mw_trace_stats_t *t = &c->tstats;
    uint64_t refused = 0;
    for (int r = 0; r < MW_TREFUSE_COUNT; r++)
        refused += t->refused[r];
    if (!t->traces && !refused && !t->comms)
        return;
    fprintf(out,
            "\nTraces\n  rank windows: %" PRIu64 " exact, %" PRIu64
            " summary only; traced calls %" PRIu64 ", left out %" PRIu64 "; %" PRIu64
            " record bytes\n",
            t->exact, t->summary_only, t->traced_calls, t->left_out, t->bytes);
    fprintf(out,
            "  reach-back traces %" PRIu64 " (%" PRIu64 " of closed windows, feed only); "
            "communicator definitions %" PRIu64 "; plans sent %" PRIu64 "\n",
            t->reach_back, t->published, t->comms, t->plans);
    fprintf(out, "  refused: %" PRIu64, refused);
    const char *sep = " (";
    for (int r = 0; r < MW_TREFUSE_COUNT; r++)
        if (t->refused[r]) {
            fprintf(out, "%s%s %" PRIu64, sep, mw__trace_refuse_name((mw_trace_refuse_t)r),
                    t->refused[r]);
            sep = ", ";
        }
    fprintf(out, "%s\n", refused ? ")" : "");
    const mw_job_t *job = &c->job;
    if (!job->active)
        return;
    uint32_t lo = UINT32_MAX, hi = UINT32_MAX, n = 0;
    for (uint32_t r = 0; r < job->size; r++) {
        if (!job->ranks[r].said_hello)
            continue;
        n++;
        if (lo == UINT32_MAX || job->ranks[r].traced_windows < job->ranks[lo].traced_windows)
            lo = r;
        if (hi == UINT32_MAX || job->ranks[r].traced_windows > job->ranks[hi].traced_windows)
            hi = r;
    }
    if (n)
        fprintf(out,
                "  windows exact per rank: fewest %" PRIu64 " (rank %u), most %" PRIu64
                " (rank %u), of %" PRIu64 " windows merged\n",
                job->ranks[lo].traced_windows, lo, job->ranks[hi].traced_windows, hi, job->windows);
}

/* The online lateness analysis (lateness.c, docs/lateness.md), once it published a batch:
 * where the largest lateness and differential lateness of the job occurred, the time lost,
 * and whether the worker kept up. */
static void report_lateness(const mw_collector_t *c, FILE *out)
{
    const mw_lateness_totals_t *t = &c->ltotals;
    /* No traced window: nothing to say. A replay (no worker) republishes the recorded batches,
     * whose last ones follow the job's end in the file: its report would miss them. */
    if (!c->lateness || (!t->windows_analysed && !t->windows_skipped))
        return;
    fprintf(out,
            "\nLateness (logical steps of the traced windows)\n  windows analysed %" PRIu64
            ", skipped (behind) %" PRIu64 ", untraced %" PRIu64 "; events %" PRIu64
            ", partitions %" PRIu64 " (%" PRIu64 " forced), unmatched %" PRIu64 "\n",
            t->windows_analysed, t->windows_skipped, t->windows_untraced, t->events, t->partitions,
            t->forced, t->unmatched);
    if (t->windows_summarised) {
        const char *lf = t->lateness_fn < MW_FN_SPACE ? mw_fn_name(t->lateness_fn) : NULL;
        const char *df = t->diff_fn < MW_FN_SPACE ? mw_fn_name(t->diff_fn) : NULL;
        fprintf(out,
                "  largest lateness %.3f ms (rank %u, %s, window %" PRIu64
                ")\n  largest differential lateness %.3f ms (rank %u, %s, window %" PRIu64
                ", step %" PRIu64 "): where delays start\n  time lost to lateness %.3f ms; "
                "largest share of a window %.4f\n",
                (double)t->lateness_max_ns / 1e6, t->lateness_rank, lf ? lf : "?",
                t->lateness_window, (double)t->diff_max_ns / 1e6, t->diff_rank, df ? df : "?",
                t->diff_window, t->diff_step, (double)t->lost_ns / 1e6, t->share_max);
    }
    if (t->windows_analysed)
        fprintf(out, "  worker time per window: mean %.3f ms, max %.3f ms\n",
                (double)t->extract_ns_total / 1e6 / (double)t->windows_analysed,
                (double)t->extract_ns_max / 1e6);
}

/* The recording's path and size so far (the last index and flush come at exit). */
static void report_recording(const mw_collector_t *c, FILE *out)
{
    if (!c->record)
        return;
    uint64_t bytes = mw__record_bytes(c->record);
    fprintf(out, "\nRecording\n  %s: %" PRIu64 " bytes (%.1f MB)%s\n", mw__record_path(c->record),
            bytes, (double)bytes / 1e6,
            mw__record_failed(c->record) ? ", stopped by a write error" : "");
}

static uint64_t job_mpi_ns(const mw_job_t *job)
{
    uint64_t ns = 0;
    for (unsigned fn = 1; fn < MW_FN_SPACE; fn++)
        ns += job->fn[fn].total_ns;
    return ns;
}

/* Whether site total a ranks before b: more time, then more calls, then lower ids. */
static int site_before(const mw_site_total_t *a, const mw_site_total_t *b)
{
    if (a->ns != b->ns)
        return a->ns > b->ns;
    if (a->count != b->count)
        return a->count > b->count;
    return a->site != b->site ? a->site < b->site : a->fn < b->fn;
}

size_t mw__report_top_sites(const mw_job_t *job, const mw_site_total_t **top, size_t cap)
{
    size_t n = 0;
    for (uint32_t i = 0; i < job->rs.site_totals.n; i++) {
        const mw_site_total_t *t = MW__RS_SITE_TOTAL(&job->rs, i);
        if (n == cap && !site_before(t, top[n - 1]))
            continue;
        size_t j = n < cap ? n++ : n - 1;
        while (j > 0 && site_before(t, top[j - 1])) {
            top[j] = top[j - 1];
            j--;
        }
        top[j] = t;
    }
    return n;
}

/* The top call sites (mpiP's "Aggregate Time (top twenty, descending)"): where the application
 * calls MPI, with the calls' time summed over ranks and its share of all MPI time. */
static void report_sites(const mw_job_t *job, FILE *out)
{
    const mw__rs_t *rs = &job->rs;
    if (!rs->site_totals.n && !rs->sites_dropped)
        return;
    const mw_site_total_t *top[REPORT_SITES];
    size_t n = mw__report_top_sites(job, top, REPORT_SITES);
    uint64_t mpi_ns = job_mpi_ns(job);
    fprintf(out, "\nCall sites: top %zu by MPI time (all ranks; %u sites, %u (site, function))\n",
            n, rs->n_sites, rs->site_totals.n);
    fprintf(out, "  %3s %-24s %-28s %-18s %12s %14s %7s %11s\n", "#", "function", "file:line",
            "MPI function", "calls", "time (s)", "%MPI", "max (us)");
    for (size_t i = 0; i < n; i++) {
        const mw_site_total_t *t = top[i];
        const mw_site_t *st = &rs->sites[t->site - 1];
        char where[64];
        const char *file = st->file[0] ? strrchr(st->file, '/') : NULL;
        file = file ? file + 1 : st->file[0] ? st->file : "?";
        if (st->line)
            snprintf(where, sizeof where, "%.40s:%u", file, st->line);
        else
            snprintf(where, sizeof where, "%.40s+0x%" PRIx64, file, st->offset);
        fprintf(out, "  %3zu %-24.24s %-28.28s %-18.18s %12" PRIu64 " %14.6f %7.2f %11.3f\n", i + 1,
                st->function[0] ? st->function : "?", where, mw_fn_name(t->fn), t->count,
                ns_to_s(t->ns), mpi_ns ? 100.0 * (double)t->ns / (double)mpi_ns : 0.0,
                ns_to_us(t->max_ns));
    }
    if (rs->sites_dropped)
        fprintf(out, "  (%" PRIu64 " timed calls without a site entry: the ranks' tables full)\n",
                rs->sites_dropped);
}

static int region_before(const mw_region_t *a, const mw_region_t *b)
{
    if (a->incl_ns != b->incl_ns)
        return a->incl_ns > b->incl_ns;
    return a < b;
}

/* The code regions by inclusive time: instances, inclusive and exclusive time, and the MPI
 * time spent while each was the innermost open region (with its share of all MPI time). */
static void report_regions(const mw_job_t *job, FILE *out)
{
    const mw__rs_t *rs = &job->rs;
    if (!rs->n_regions && !rs->regions_dropped)
        return;
    const mw_region_t *top[REPORT_REGIONS];
    size_t n = 0;
    for (uint32_t i = 0; i < rs->n_regions; i++) {
        const mw_region_t *r = &rs->regions[i];
        if (n == REPORT_REGIONS && !region_before(r, top[n - 1]))
            continue;
        size_t j = n < REPORT_REGIONS ? n++ : n - 1;
        while (j > 0 && region_before(r, top[j - 1])) {
            top[j] = top[j - 1];
            j--;
        }
        top[j] = r;
    }
    uint64_t mpi_ns = job_mpi_ns(job);
    fprintf(out, "\nCode regions by inclusive time (all ranks; %u regions)\n", rs->n_regions);
    fprintf(out, "  %-32s %12s %14s %14s %14s %7s\n", "region", "count", "incl (s)", "excl (s)",
            "MPI (s)", "%MPI");
    for (size_t i = 0; i < n; i++) {
        const mw_region_t *r = top[i];
        fprintf(out, "  %-32.32s %12" PRIu64 " %14.6f %14.6f %14.6f %7.2f\n", r->name, r->count,
                ns_to_s(r->incl_ns), ns_to_s(r->excl_ns), ns_to_s(r->mpi_ns),
                mpi_ns ? 100.0 * (double)r->mpi_ns / (double)mpi_ns : 0.0);
    }
    if (rs->n_regions > n)
        fprintf(out, "  ... (%u more)\n", rs->n_regions - (uint32_t)n);
    if (rs->regions_dropped)
        fprintf(out, "  (%" PRIu64 " region events not accounted by the ranks)\n",
                rs->regions_dropped);
}

/* The ranks the launcher started (--expect-ranks) against the hellos: how many ranks did not
 * say hello, 0 when all did or nothing is expected. The number of ranks is the larger of the
 * launcher's count and the size of MPI_COMM_WORLD the hellos give; with "any" (a launcher
 * that cannot tell) no hello at all counts as 1 missing rank. */
uint64_t mw__report_missing(const mw_collector_t *c)
{
    long long expect = mw_collector_options_expect_ranks(c->opt);
    if (expect == 0 || expect == -1)
        return 0;
    uint64_t hellos = c->job.active ? c->job.hellos : 0;
    /* An aggregator (--upstream) takes a share of the job: its count is its own ranks'. */
    uint64_t want = c->job.active && !c->opt->upstream ? c->job.size : 0;
    if (expect > 0 && (uint64_t)expect > want)
        want = (uint64_t)expect;
    if (want == 0)
        return hellos ? 0 : 1;
    return hellos < want ? want - hellos : 0;
}

/* Lists the ranks of the job that did not say hello (the first few). */
static void report_missing_list(const mw_job_t *job, FILE *out)
{
    uint32_t shown = 0, total = 0;
    for (uint32_t r = 0; r < job->size; r++)
        if (!job->ranks[r].said_hello && total++ < REPORT_ALL_RANKS)
            fprintf(out, "%s%u", shown++ ? ", " : "  ranks without hello: ", r);
    if (total > shown)
        fprintf(out, " ... (%u in all)", total);
    if (shown)
        fprintf(out, "\n");
}

/* When ranks are missing (mw__report_missing): the likely causes, picked with the counters. A
 * cause the counters show comes first; "nothing arrived" lists what keeps a rank silent. */
static void report_missing(const mw_collector_t *c, FILE *out)
{
    uint64_t missing = mw__report_missing(c);
    if (!missing)
        return;
    const mw_job_t *job = &c->job;
    long long expect = mw_collector_options_expect_ranks(c->opt);
    uint32_t hellos = job->active ? job->hellos : 0;
    fprintf(out, "\nMissing ranks\n");
    if (expect > 0)
        fprintf(out, "  the launcher started %lld rank%s; %u said hello", expect,
                expect == 1 ? "" : "s", hellos);
    else if (hellos)
        fprintf(out, "  the launcher's rank count is unknown; %u said hello", hellos);
    else
        fprintf(out, "  no rank said hello (the launcher's rank count is unknown)");
    if (job->active && expect > 0 && job->size != (uint64_t)expect)
        fprintf(out, " (their MPI_COMM_WORLD has %u)", job->size);
    if (expect > 0 || hellos)
        fprintf(out, ": %" PRIu64 " rank%s not watched", missing, missing == 1 ? "" : "s");
    fprintf(out, "\n");
    if (job->active)
        report_missing_list(job, out);

    /* The endpoint as bound (a port chosen by the system), else as asked. */
    const char *ep = mw__zsock_bound_endpoint("ingest socket");
    if (!ep)
        ep = c->opt->n_listen ? c->opt->listen[0] : "the endpoint";
    uint64_t refused = 0, rejected = 0;
    for (int r = 0; r < MW_AUTH_COUNT; r++)
        refused += c->stats.auth_refused[r];
    for (int r = 1; r < MW_REJECT_COUNT; r++)
        rejected += c->stats.rejected[r];
    const uint64_t *rj = c->stats.rejected;
    int n = 0;
    fprintf(out, "  likely causes:\n");
    if (refused)
        fprintf(out,
                "  %d. CURVE: %" PRIu64
                " connection%s refused in the handshake (unauthorized %" PRIu64 ", crypto %" PRIu64
                ", mechanism %" PRIu64
                "): ranks with another key pair or server key, or without the keys "
                "(MPIWATCH_CURVE_SERVER / MPIWATCH_CURVE_KEY not forwarded or not readable on "
                "their node; docs/security.md)\n",
                ++n, refused, refused == 1 ? "" : "s", c->stats.auth_refused[MW_AUTH_UNAUTHORIZED],
                c->stats.auth_refused[MW_AUTH_CRYPTO], c->stats.auth_refused[MW_AUTH_MECHANISM]);
    if (rj[MW_REJECT_JOB_MISMATCH] || rj[MW_REJECT_DUPLICATE_HELLO] ||
        (job->active && expect > 0 && job->size < (uint64_t)expect))
        fprintf(out,
                "  %d. the processes do not form one MPI job (%" PRIu64 " hellos of another job, "
                "%" PRIu64 " repeated): each started as an MPI job of its own, as when the "
                "launcher's process management does not match the MPI library (srun needs "
                "--mpi=pmix for Open MPI, --mpi=pmi2 or pmix for MPICH: srun --mpi=list)\n",
                ++n, rj[MW_REJECT_JOB_MISMATCH], rj[MW_REJECT_DUPLICATE_HELLO]);
    if (rj[MW_REJECT_VERSION] || rj[MW_REJECT_DECODE] || rj[MW_REJECT_TABLE_MISMATCH] ||
        rj[MW_REJECT_TOO_LARGE] || rj[MW_REJECT_MULTIPART])
        fprintf(out,
                "  %d. %" PRIu64 " message%s refused (rejected messages below): ranks with "
                "another mpiwatch version or function table, or something that is not a rank "
                "sending to the endpoint\n",
                ++n, rejected, rejected == 1 ? "" : "s");
    int local = 1;
    for (unsigned i = 0; i < c->opt->n_listen; i++)
        local &= mw__endpoint_local(c->opt->listen[i]);
    if (hellos && local)
        fprintf(out,
                "  %d. ranks on other hosts cannot reach the local endpoint %s (use tcp:// with "
                "CURVE; under Slurm `mpiwatch run` does so by itself for several nodes)\n",
                ++n, ep);
    if (!n || !c->stats.accepted)
        fprintf(out,
                "  %d. %s reached the collector from %s: the library was not loaded into them "
                "(a launcher that does not pass LD_PRELOAD to the ranks: `mpiwatch run` handles "
                "mpirun, mpiexec and srun, others need --preload-all or `LAUNCHER ... mpiwatch "
                "exec ./app`; a statically linked MPI or program; a container without the "
                "library), the program does not call MPI_Init, or they cannot reach %s (another "
                "host, a firewall, a host name that resolves to an address they cannot reach); "
                "the library says why on the ranks' stderr when it gives up\n",
                ++n, c->stats.accepted ? "nothing" : "nothing at all",
                hellos ? "the missing ranks" : "the ranks", ep);
}

void mw__report_write(const mw_collector_t *c, FILE *out)
{
    fprintf(out, "\n== mpiwatch report ==================================================\n");
    if (!c->job.active) {
        fprintf(out, "no job: no valid hello was received\n");
        report_missing(c, out);
        report_losses(c, out);
        report_recording(c, out);
        return;
    }
    report_header(c, out);
    report_missing(c, out);
    report_functions(&c->job, out);
    report_sites(&c->job, out);
    report_regions(&c->job, out);
    report_ranks(&c->job, out);
    report_pairs(&c->job, out);
    report_losses(c, out);
    report_traces(c, out);
    report_lateness(c, out);
    report_recording(c, out);
}
