/* summary.c: the job summary JSON and the ingest statistics JSON.
 *
 * DESIGN: both documents are built with cJSON from the exact job totals (job.c) and the
 * collector's counters, and written atomically and durably with mw_file.h (a fresh temporary
 * file beside FILE, fsync, rename), so a reader never sees half a file and a symbolic link
 * planted at FILE is replaced, never written through. Counters are uint64; cJSON keeps
 * numbers as doubles and would print large ones as 1.2e+16, so every integer is inserted as
 * a raw, exactly formatted token instead. The key set is fixed: tools and tests depend on it.
 */
#include "collector.h"
#include "summary.h"
#include "mw_json.h"
#include "record_file.h"
#include "steer.h"
#include "mw_file.h"
#include "steps.h"
#include "report.h"
#include "dormant.h"
#include "upstream.h"
#include "aggstate.h"

#include <cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

int mw__write_file(const char *path, const char *text)
{
    char err[512];
    size_t len = strlen(text);
    mw_afile_t *a = mw_afile_open(path, err, sizeof err);
    int rc = -1;
    if (a) {
        FILE *f = mw_afile_stream(a);
        /* The documents end with a newline; the text from cJSON does not. */
        int failed = fwrite(text, 1, len, f) != len;
        if (len && text[len - 1] != '\n')
            failed |= fputc('\n', f) == EOF;
        if (failed) {
            snprintf(err, sizeof err, "cannot write %s: %s", path, strerror(errno ? errno : EIO));
            mw_afile_abort(a);
        } else {
            rc = mw_afile_commit(a, err, sizeof err);
        }
    }
    if (rc < 0)
        MW_LOG(MW_LOG_ERROR, "%s", err);
    return rc;
}

/* {"count": n, "time_ns": n, "bytes": n} under obj[name]. */
static int json_fn(cJSON *obj, unsigned fn, uint64_t count, uint64_t time_ns, uint64_t bytes)
{
    cJSON *o = cJSON_AddObjectToObject(obj, mw_fn_name(fn));
    if (!o)
        return -1;
    MW_TRY(mw_json_add_u64(o, "count", count));
    MW_TRY(mw_json_add_u64(o, "time_ns", time_ns));
    return mw_json_add_u64(o, "bytes", bytes);
}

cJSON *mw__json_tally(cJSON *obj, const char *name, const mw_tally_t *t)
{
    cJSON *o = cJSON_AddObjectToObject(obj, name);
    if (!o || mw_json_add_u64(o, "calls", t->calls) < 0 ||
        mw_json_add_u64(o, "time_ns", t->time_ns) < 0 ||
        mw_json_add_u64(o, "bytes", t->bytes) < 0 || mw_json_add_u64(o, "samples", t->samples) < 0)
        return NULL;
    return o;
}

/* A rank's loss accounting: what it missed and where its totals come from ("bye": final;
 * "last_sample": the rank did not say bye, its totals are as of its last sample; "none": an
 * older library, nothing known beyond what was merged; "aggregator": the rank is served
 * through an aggregator, whose entry of "aggregators" has its totals, aggstate.c). */
static int summary_rank_missed(const mw_job_t *job, uint32_t rank, cJSON *o)
{
    const mw_rank_t *r = &job->ranks[rank];
    mw_tally_t m = {0};
    if (r->has_totals)
        m = (mw_tally_t){r->tot_calls - r->calls, r->tot_time_ns - r->mpi_time_ns,
                         r->tot_bytes - r->bytes, r->tot_samples - r->samples};
    cJSON *x = mw__json_tally(o, "missed", &m);
    const char *from = !r->has_totals ? (mw__aggstate_forwarded(job, rank) ? "aggregator" : "none")
                       : r->totals_final ? "bye"
                                         : "last_sample";
    return x && cJSON_AddStringToObject(x, "totals", from) ? 0 : -1;
}

/* Adds rank numbers to an array: those for which keep() is true. */
static int json_ranks(const mw_job_t *job, cJSON *arr, int (*keep)(const mw_job_t *, uint32_t))
{
    for (uint32_t i = 0; i < job->size; i++) {
        if (!keep(job, i))
            continue;
        cJSON *v = cJSON_CreateNumber(i);
        if (!v || !cJSON_AddItemToArray(arr, v)) {
            cJSON_Delete(v);
            return -1;
        }
    }
    return 0;
}

static int rank_missed_some(const mw_job_t *job, uint32_t rank)
{
    const mw_rank_t *r = &job->ranks[rank];
    return r->has_totals && (r->tot_calls != r->calls || r->tot_time_ns != r->mpi_time_ns ||
                             r->tot_bytes != r->bytes || r->tot_samples != r->samples);
}

static int rank_not_final(const mw_job_t *job, uint32_t rank)
{
    const mw_rank_t *r = &job->ranks[rank];
    return r->has_totals && !r->totals_final;
}

/* The ranks without totals, less those served through an aggregator (their totals are in its
 * AggState, aggstate.c). */
static int rank_no_totals(const mw_job_t *job, uint32_t rank)
{
    return job->ranks[rank].said_hello && !job->ranks[rank].has_totals &&
           !mw__aggstate_forwarded(job, rank);
}

/* "missed" (docs/collector.md, "Loss accounting"): what the ranks did that is not in this
 * summary, exactly: at_ranks = the functions above + missed, for calls, time and bytes. */
static int summary_missed(const mw_job_t *job, cJSON *root)
{
    mw_loss_t loss;
    mw_tally_t *per_fn = calloc(MW_FN_SPACE, sizeof *per_fn);
    if (!per_fn)
        return -1;
    mw__job_loss(job, &loss, per_fn);
    cJSON *o = mw__json_tally(root, "missed", &loss.missed), *arr, *fns;
    int rc = -1;
    if (o && mw__json_tally(o, "at_ranks", &loss.at_ranks) &&
        (arr = cJSON_AddArrayToObject(o, "ranks")) && json_ranks(job, arr, rank_missed_some) == 0 &&
        (arr = cJSON_AddArrayToObject(o, "ranks_without_bye")) &&
        json_ranks(job, arr, rank_not_final) == 0 &&
        (arr = cJSON_AddArrayToObject(o, "ranks_without_totals")) &&
        json_ranks(job, arr, rank_no_totals) == 0 &&
        (fns = cJSON_AddObjectToObject(o, "functions"))) {
        rc = 0;
        for (unsigned fn = 1; fn < MW_FN_SPACE && rc == 0; fn++) {
            const mw_tally_t *t = &per_fn[fn];
            if (t->calls || t->time_ns || t->bytes)
                rc = json_fn(fns, fn, t->calls, t->time_ns, t->bytes);
        }
        if (rc == 0) /* through aggregators: the part of each hop (aggstate.c) */
            rc = mw__aggs_missed_json(&loss, o);
    }
    free(per_fn);
    return rc;
}

static int cmp_rank_fn(const void *pa, const void *pb)
{
    const mw_rank_fn_t *a = *(const mw_rank_fn_t *const *)pa, *b = *(const mw_rank_fn_t *const *)pb;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return a->fn < b->fn ? -1 : a->fn > b->fn;
}

static int cmp_pair(const void *pa, const void *pb)
{
    const mw_pair_sum_t *a = *(const mw_pair_sum_t *const *)pa,
                        *b = *(const mw_pair_sum_t *const *)pb;
    if (a->src != b->src)
        return a->src < b->src ? -1 : 1;
    return a->dst < b->dst ? -1 : a->dst > b->dst;
}

/* A rank's placement (docs/topology.md): its node's name, its PU, core, L3, package and NUMA
 * node (-1 unknown), whether it is bound, and the PUs of its binding. */
static int summary_rank_place(const mw_job_t *job, uint32_t rank, cJSON *o)
{
    const mw_rank_t *r = &job->ranks[rank];
    cJSON *pus = NULL;
    if (!cJSON_AddStringToObject(o, "node", mw__job_node(job, rank)) ||
        !cJSON_AddNumberToObject(o, "pu", r->pu) || !cJSON_AddNumberToObject(o, "core", r->core) ||
        !cJSON_AddNumberToObject(o, "l3", r->l3) ||
        !cJSON_AddNumberToObject(o, "package", r->package) ||
        !cJSON_AddNumberToObject(o, "numa", r->numa) ||
        !cJSON_AddBoolToObject(o, "bound", r->bound) || !(pus = cJSON_AddArrayToObject(o, "pus")))
        return -1;
    for (uint32_t i = 0; i < r->pus_n; i++) {
        cJSON *v = cJSON_CreateNumber(job->pus[r->pus_first + i]);
        if (!v || !cJSON_AddItemToArray(pus, v)) {
            cJSON_Delete(v);
            return -1;
        }
    }
    return 0;
}

/* The job's nodes in order of first hello: name, how many packages, L3 caches, cores and PUs
 * its hardware has (0 when no rank described it), and its ranks in rank order. */
static int summary_nodes(const mw_job_t *job, cJSON *root)
{
    cJSON *arr = cJSON_AddArrayToObject(root, "nodes");
    if (!arr)
        return -1;
    cJSON **ranks = malloc((job->n_nodes ? job->n_nodes : 1) * sizeof *ranks);
    if (!ranks)
        return -1;
    static const char *const counts[] = {"packages", "l3", "cores", "pus", "numa"};
    int rc = 0;
    for (uint32_t i = 0; i < job->n_nodes && rc == 0; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o)) {
            cJSON_Delete(o);
            rc = -1;
            break;
        }
        uint64_t n[5] = {0, 0, 0, 0, 0};
        const mw_node_hw_t *hw = &job->node_hw[i];
        for (uint32_t j = 0; j < hw->n_objects; j++)
            n[hw->objects[j].type - 1]++; /* types are 1..5 (ingest.c) */
        if (!cJSON_AddStringToObject(o, "name", job->nodes[i]) ||
            !(ranks[i] = cJSON_AddArrayToObject(o, "ranks")))
            rc = -1;
        /* NUMA nodes (type 5) only when the hardware lists some: older recordings' summaries
         * stay as they were. */
        for (int t = 0; t < 5 && rc == 0; t++)
            if (t < 4 || n[t])
                rc = mw_json_add_u64(o, counts[t], n[t]);
    }
    for (uint32_t rank = 0; rank < job->size && rc == 0; rank++) {
        const mw_rank_t *r = &job->ranks[rank];
        if (!r->said_hello || r->node >= job->n_nodes)
            continue;
        cJSON *v = cJSON_CreateNumber(rank);
        if (!v || !cJSON_AddItemToArray(ranks[r->node], v)) {
            cJSON_Delete(v);
            rc = -1;
        }
    }
    free(ranks);
    return rc;
}

/* The windows a rank was exact in and the calls they traced (docs/trace.md), only for a rank
 * that traced: an untraced job keeps its key set. */
static int summary_rank_traced(const mw_rank_t *r, cJSON *o)
{
    if (!r->traced_windows)
        return 0;
    return mw_json_add_u64(o, "traced_windows", r->traced_windows) < 0 ||
                   mw_json_add_u64(o, "traced_calls", r->traced_calls) < 0
               ? -1
               : 0;
}

/* The collector's trace counters (trace_check.h), only once a trace or a communicator
 * definition arrived, so that the key set of a run without tracing stays what it was. */
static int stats_trace(const mw_collector_t *c, cJSON *root)
{
    const mw_trace_stats_t *t = &c->tstats;
    uint64_t refused = 0;
    for (int r = 0; r < MW_TREFUSE_COUNT; r++)
        refused += t->refused[r];
    if (!t->traces && !t->comms && !refused && !t->plans)
        return 0;
    cJSON *o = cJSON_AddObjectToObject(root, "trace"), *ref;
    if (!o || mw_json_add_u64(o, "traces", t->traces) < 0 ||
        mw_json_add_u64(o, "exact", t->exact) < 0 ||
        mw_json_add_u64(o, "summary_only", t->summary_only) < 0 ||
        mw_json_add_u64(o, "traced_calls", t->traced_calls) < 0 ||
        mw_json_add_u64(o, "left_out", t->left_out) < 0 ||
        mw_json_add_u64(o, "deferred", t->deferred) < 0 ||
        mw_json_add_u64(o, "bytes", t->bytes) < 0 ||
        mw_json_add_u64(o, "reach_back", t->reach_back) < 0 ||
        mw_json_add_u64(o, "published", t->published) < 0 ||
        mw_json_add_u64(o, "comms", t->comms) < 0 || mw_json_add_u64(o, "plans", t->plans) < 0 ||
        !(ref = cJSON_AddObjectToObject(o, "refused")))
        return -1;
    for (int r = 0; r < MW_TREFUSE_COUNT; r++)
        if (mw_json_add_u64(ref, mw__trace_refuse_name((mw_trace_refuse_t)r), t->refused[r]) < 0)
            return -1;
    return 0;
}

/* The online lateness analysis (lateness.c, docs/lateness.md), once it had a traced window to
 * analyse, so that the key set of a run without traces or with --lateness off stays what it
 * was. */
static int stats_lateness(const mw_collector_t *c, cJSON *root)
{
    const mw_lateness_totals_t *t = &c->ltotals;
    if (!c->lateness || (!t->windows_analysed && !t->windows_skipped))
        return 0; /* no worker (a replay, --lateness off) or no traced window */
    cJSON *o = cJSON_AddObjectToObject(root, "lateness");
    if (!o || mw_json_add_u64(o, "batches", t->batches) < 0 ||
        mw_json_add_u64(o, "windows_analysed", t->windows_analysed) < 0 ||
        mw_json_add_u64(o, "windows_skipped", t->windows_skipped) < 0 ||
        mw_json_add_u64(o, "windows_untraced", t->windows_untraced) < 0 ||
        mw_json_add_u64(o, "gaps", t->gaps) < 0 || mw_json_add_u64(o, "events", t->events) < 0 ||
        mw_json_add_u64(o, "partitions", t->partitions) < 0 ||
        mw_json_add_u64(o, "forced", t->forced) < 0 ||
        mw_json_add_u64(o, "unmatched", t->unmatched) < 0 ||
        mw_json_add_u64(o, "bad_traces", t->bad_traces) < 0 ||
        mw_json_add_u64(o, "lateness_max_ns",
                        (uint64_t)(t->lateness_max_ns > 0 ? t->lateness_max_ns : 0)) < 0 ||
        mw_json_add_u64(o, "diff_max_ns", (uint64_t)(t->diff_max_ns > 0 ? t->diff_max_ns : 0)) <
            0 ||
        mw_json_add_u64(o, "diff_rank", t->diff_rank) < 0 ||
        !cJSON_AddNumberToObject(o, "extract_ms_p50",
                                 (double)mw__latency_quantile(&t->extract, 0.5) / 1e6) ||
        !cJSON_AddNumberToObject(o, "extract_ms_p99",
                                 (double)mw__latency_quantile(&t->extract, 0.99) / 1e6) ||
        !cJSON_AddNumberToObject(o, "extract_ms_max", (double)t->extract_ns_max / 1e6) ||
        !cJSON_AddNumberToObject(o, "extract_ms_total", (double)t->extract_ns_total / 1e6))
        return -1;
    return 0;
}

static int summary_per_rank(const mw_job_t *job, cJSON *root)
{
    cJSON *arr = cJSON_AddArrayToObject(root, "per_rank");
    if (!arr)
        return -1;
    uint32_t n = job->rank_fn.n;
    const mw_rank_fn_t **sorted = malloc((n ? n : 1) * sizeof *sorted);
    if (!sorted)
        return -1;
    for (uint32_t i = 0; i < n; i++)
        sorted[i] = MW__INDEX_AT(&job->rank_fn, const mw_rank_fn_t, i);
    qsort(sorted, n, sizeof *sorted, cmp_rank_fn);

    int rc = 0;
    uint32_t next = 0;
    for (uint32_t rank = 0; rank < job->size && rc == 0; rank++) {
        if (!job->ranks[rank].said_hello) /* nothing known about it */
            continue;
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o)) {
            cJSON_Delete(o);
            rc = -1;
            break;
        }
        cJSON *fns = NULL;
        if (mw_json_add_u64(o, "rank", rank) < 0 ||
            !cJSON_AddStringToObject(o, "host", mw_job_host(job, rank)) ||
            mw_json_add_u64(o, "mpi_time_ns", job->ranks[rank].mpi_time_ns) < 0 ||
            summary_rank_place(job, rank, o) < 0 || summary_rank_missed(job, rank, o) < 0 ||
            summary_rank_traced(&job->ranks[rank], o) < 0 ||
            !(fns = cJSON_AddObjectToObject(o, "functions"))) {
            rc = -1;
            break;
        }
        while (next < n && sorted[next]->rank < rank)
            next++;
        for (; next < n && sorted[next]->rank == rank; next++) {
            const mw_rank_fn_t *rf = sorted[next];
            if (rf->count && json_fn(fns, rf->fn, rf->count, rf->time_ns, rf->bytes) < 0) {
                rc = -1;
                break;
            }
        }
    }
    free(sorted);
    return rc;
}

static int summary_pairs(const mw_job_t *job, cJSON *root)
{
    cJSON *arr = cJSON_AddArrayToObject(root, "pairs");
    if (!arr)
        return -1;
    uint32_t n = job->pairs.n;
    const mw_pair_sum_t **sorted = malloc((n ? n : 1) * sizeof *sorted);
    if (!sorted)
        return -1;
    for (uint32_t i = 0; i < n; i++)
        sorted[i] = MW__INDEX_AT(&job->pairs, const mw_pair_sum_t, i);
    qsort(sorted, n, sizeof *sorted, cmp_pair);
    int rc = 0;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o)) {
            cJSON_Delete(o);
            rc = -1;
            break;
        }
        if (mw_json_add_u64(o, "src", sorted[i]->src) < 0 ||
            mw_json_add_u64(o, "dst", sorted[i]->dst) < 0 ||
            mw_json_add_u64(o, "messages", sorted[i]->messages) < 0 ||
            mw_json_add_u64(o, "bytes", sorted[i]->bytes) < 0)
            rc = -1;
    }
    free(sorted);
    return rc;
}

/* "regions" (every job region with its totals) and "top_sites" (the report's top twenty call
 * sites), only for a job that had some: the key set of a job without them stays what it was. */
static int summary_regions(const mw_job_t *job, cJSON *root)
{
    const mw__rs_t *rs = &job->rs;
    if (rs->n_regions) {
        cJSON *arr = cJSON_AddArrayToObject(root, "regions");
        if (!arr)
            return -1;
        for (uint32_t i = 0; i < rs->n_regions; i++) {
            const mw_region_t *r = &rs->regions[i];
            cJSON *o = cJSON_CreateObject();
            if (!o || !cJSON_AddItemToArray(arr, o)) {
                cJSON_Delete(o);
                return -1;
            }
            if (mw_json_add_u64(o, "id", i + 1) < 0 ||
                !cJSON_AddStringToObject(o, "name", r->name) ||
                mw_json_add_u64(o, "source", r->source) < 0 ||
                mw_json_add_u64(o, "count", r->count) < 0 ||
                mw_json_add_u64(o, "incl_ns", r->incl_ns) < 0 ||
                mw_json_add_u64(o, "excl_ns", r->excl_ns) < 0 ||
                mw_json_add_u64(o, "mpi_ns", r->mpi_ns) < 0)
                return -1;
        }
    }
    if (rs->site_totals.n) {
        const mw_site_total_t *top[20];
        size_t n = mw__report_top_sites(job, top, 20);
        cJSON *arr = cJSON_AddArrayToObject(root, "top_sites");
        if (!arr)
            return -1;
        for (size_t i = 0; i < n; i++) {
            const mw_site_t *st = &rs->sites[top[i]->site - 1];
            cJSON *o = cJSON_CreateObject();
            if (!o || !cJSON_AddItemToArray(arr, o)) {
                cJSON_Delete(o);
                return -1;
            }
            if (mw_json_add_u64(o, "site", top[i]->site) < 0 ||
                !cJSON_AddStringToObject(o, "fn", mw_fn_name(top[i]->fn)) ||
                !cJSON_AddStringToObject(o, "function", st->function) ||
                !cJSON_AddStringToObject(o, "file", st->file) ||
                mw_json_add_u64(o, "line", st->line) < 0 ||
                !cJSON_AddStringToObject(o, "module", st->module) ||
                mw_json_add_u64(o, "offset", st->offset) < 0 ||
                mw_json_add_u64(o, "count", top[i]->count) < 0 ||
                mw_json_add_u64(o, "ns", top[i]->ns) < 0 ||
                mw_json_add_u64(o, "bytes", top[i]->bytes) < 0 ||
                mw_json_add_u64(o, "max_ns", top[i]->max_ns) < 0)
                return -1;
        }
    }
    return 0;
}

/* "steps": the closed time steps in closing order (docs/steps.md), only for a job that had
 * any, so that the keys of a job without steps stay what they were. */
static int summary_steps(const mw_collector_t *c, cJSON *root)
{
    if (mw__steps_closed(c) == 0)
        return 0;
    cJSON *arr = cJSON_AddArrayToObject(root, "steps");
    if (!arr)
        return -1;
    const uint8_t *pb;
    size_t len;
    for (size_t i = 0; (len = mw__steps_kept(c, i, &pb)) != 0; i++) {
        Mpiwatch__Step *st = mpiwatch__step__unpack(NULL, len, pb);
        cJSON *o = cJSON_CreateObject(), *fns = NULL, *pairs = NULL;
        int rc = st && o && cJSON_AddItemToArray(arr, o) ? 0 : -1;
        if (rc < 0)
            cJSON_Delete(o);
        if (rc == 0 && (mw_json_add_u64(o, "step", st->step) < 0 ||
                        mw_json_add_u64(o, "start_ns", st->start_ns) < 0 ||
                        mw_json_add_u64(o, "end_ns", st->end_ns) < 0 ||
                        mw_json_add_u64(o, "ranks", st->ranks) < 0 ||
                        mw_json_add_u64(o, "folded", st->folded) < 0 ||
                        mw_json_add_u64(o, "mpi_time_ns", st->mpi_time_ns) < 0 ||
                        !(fns = cJSON_AddObjectToObject(o, "functions")) ||
                        !(pairs = cJSON_AddArrayToObject(o, "pairs"))))
            rc = -1;
        for (size_t j = 0; rc == 0 && j < st->n_functions; j++) {
            const Mpiwatch__FunctionStat *f = st->functions[j];
            if (mw_fn_name(f->fn) && json_fn(fns, f->fn, f->count, f->total_ns, f->bytes) < 0)
                rc = -1;
        }
        for (size_t j = 0; rc == 0 && j < st->n_pair_src; j++) {
            cJSON *p = cJSON_CreateObject();
            if (!p || !cJSON_AddItemToArray(pairs, p)) {
                cJSON_Delete(p);
                rc = -1;
            } else if (mw_json_add_u64(p, "src", st->pair_src[j]) < 0 ||
                       mw_json_add_u64(p, "dst", st->pair_dst[j]) < 0 ||
                       mw_json_add_u64(p, "messages", st->pair_messages[j]) < 0 ||
                       mw_json_add_u64(p, "bytes", st->pair_bytes[j]) < 0) {
                rc = -1;
            }
        }
        if (st)
            mpiwatch__step__free_unpacked(st, NULL);
        if (rc < 0)
            return -1;
    }
    return 0;
}

char *mw_summary_json(const mw_collector_t *c)
{
    const mw_job_t *job = &c->job;
    cJSON *root = cJSON_CreateObject();
    cJSON *fns = NULL;
    char *text = NULL;
    if (!root)
        return NULL;
    if (mw_json_add_u64(root, "ranks", job->size) < 0 ||
        mw_json_add_u64(root, "windows", job->windows) < 0 ||
        mw_json_add_u64(root, "dropped", mw__job_dropped(job)) < 0 ||
        mw_json_add_u64(root, "late", job->late) < 0 ||
        !(fns = cJSON_AddObjectToObject(root, "functions")))
        goto out;
    for (unsigned fn = 1; fn < MW_FN_SPACE; fn++) {
        const mw_fn_total_t *t = &job->fn[fn];
        if (t->count && json_fn(fns, fn, t->count, t->total_ns, t->bytes) < 0)
            goto out;
    }
    if (summary_per_rank(job, root) < 0 || summary_pairs(job, root) < 0 ||
        summary_steps(c, root) < 0)
        goto out;
    if (summary_nodes(job, root) < 0 || summary_missed(job, root) < 0 ||
        mw__aggs_json(job, root) < 0 || summary_regions(job, root) < 0 ||
        mw__dormant_json(job->dormant, root) < 0)
        goto out;
    text = cJSON_Print(root);
out:
    cJSON_Delete(root);
    return text;
}

char *mw__stats_json(const mw_collector_t *c)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *rej = NULL, *miss;
    char *text = NULL;
    if (!root)
        return NULL;
    if (mw_json_add_u64(root, "accepted", c->stats.accepted) < 0 ||
        !(rej = cJSON_AddObjectToObject(root, "rejected")))
        goto out;
    for (int r = 1; r < MW_REJECT_COUNT; r++)
        if (mw_json_add_u64(rej, mw__reject_name((mw_reject_t)r), c->stats.rejected[r]) < 0)
            goto out;
    /* What the current job's ranks did that the collector never received (loss accounting). */
    mw_loss_t loss;
    mw__job_loss(&c->job, &loss, NULL);
    if (mw_json_add_u64(root, "late", c->stats.late) < 0 ||
        !(miss = mw__json_tally(root, "missed", &loss.missed)) ||
        mw__aggs_missed_json(&loss, miss) < 0 || mw__aggs_json(&c->job, root) < 0 ||
        mw_json_add_u64(root, "windows", c->stats.windows) < 0 ||
        mw_json_add_u64(root, "partial_windows", c->stats.partial_windows) < 0)
        goto out;
    if (stats_trace(c, root) < 0 || stats_lateness(c, root) < 0)
        goto out;
    /* Steering requests refused (steer.c), only when steering is on. */
    if (c->steer && (mw_json_add_u64(root, "steer_rejected", mw__steer_rejected(c)) < 0 ||
                     mw_json_add_u64(root, "window_rejected", mw__steer_window_rejected(c)) < 0))
        goto out;
    /* Records left out of the recording (over 64 MiB), only when recording. */
    if (c->record && mw_json_add_u64(root, "record_too_large", mw__record_too_large(c->record)) < 0)
        goto out;
    /* Parts of hellos over a job-wide cap (job.c), by reason, only when there were some, so
     * that the key set of an ordinary run stays what it was. */
    uint64_t capped = 0;
    for (int r = 0; r < MW_CAP_COUNT; r++)
        capped += c->stats.capped[r];
    if (capped) {
        cJSON *cap = cJSON_AddObjectToObject(root, "capped");
        if (!cap)
            goto out;
        for (int r = 0; r < MW_CAP_COUNT; r++)
            if (mw_json_add_u64(cap, mw__cap_reason_name((mw_cap_reason_t)r), c->stats.capped[r]) <
                0)
                goto out;
    }
    /* Regions and call sites (regions.c): the current job's table sizes and the ranks' own
     * dropped counts, and what the collector left out (all jobs) by reason, zeros included;
     * only once a job had some, so that the key set of a run without them stays what it was. */
    uint64_t rs_refused = 0;
    for (int r = 0; r < MW_RS_COUNT; r++)
        rs_refused += c->stats.rs_refused[r];
    const mw__rs_t *rs = &c->job.rs;
    if (rs_refused || rs->n_regions || rs->n_sites || rs->regions_dropped || rs->sites_dropped) {
        cJSON *o = cJSON_AddObjectToObject(root, "regions");
        cJSON *ref = o ? cJSON_AddObjectToObject(o, "refused") : NULL;
        if (!ref || mw_json_add_u64(o, "regions", rs->n_regions) < 0 ||
            mw_json_add_u64(o, "sites", rs->n_sites) < 0 ||
            mw_json_add_u64(o, "regions_dropped", rs->regions_dropped) < 0 ||
            mw_json_add_u64(o, "sites_dropped", rs->sites_dropped) < 0)
            goto out;
        for (int r = 0; r < MW_RS_COUNT; r++)
            if (mw_json_add_u64(ref, mw__rs_reason_name((mw_rs_reason_t)r),
                                c->stats.rs_refused[r]) < 0)
                goto out;
    }
    /* Step data of the current job refused by a cap (steps.c, docs/steps.md), by reason, zeros
     * included, once the job applied a step mark: a job without steps keeps its key set. */
    if (mw__steps_marked(c)) {
        cJSON *st = cJSON_AddObjectToObject(root, "steps_refused");
        if (!st)
            goto out;
        for (int r = 0; r < MW_STEPS_REFUSAL_COUNT; r++)
            if (mw_json_add_u64(st, mw__steps_refusal_name((mw_steps_refusal_t)r),
                                mw__steps_refused(c, (mw_steps_refusal_t)r)) < 0)
                goto out;
    }
    /* Connections refused by CURVE (auth.c), by reason, only when CURVE is on. */
    if (c->opt && c->opt->curve_secret) {
        cJSON *auth = cJSON_AddObjectToObject(root, "auth_refused");
        if (!auth)
            goto out;
        for (int r = 0; r < MW_AUTH_COUNT; r++)
            if (mw_json_add_u64(auth, mw__auth_reason_name((mw_auth_reason_t)r),
                                c->stats.auth_refused[r]) < 0)
                goto out;
    }
    /* The current job's windows that waited for an aggregator's partial (merge.c), only when
     * partials came: a collector without aggregators keeps its key set. */
    if (c->merge_ready && c->merge.n_aggs) {
        cJSON *aw = cJSON_AddObjectToObject(root, "aggregator_wait");
        if (!aw || mw_json_add_u64(aw, "aggregators", c->merge.n_aggs) < 0 ||
            mw_json_add_u64(aw, "waited_complete", c->merge.agg_waited) < 0 ||
            mw_json_add_u64(aw, "closed_without", c->merge.agg_given_up) < 0 ||
            mw_json_add_u64(aw, "partials_missing", c->merge.agg_owed) < 0 ||
            mw_json_add_u64(aw, "wait_ms", c->merge.agg_wait_ns / MW_NS_PER_MS) < 0)
            goto out;
    }
    /* An aggregator's traffic to its parent and its steering relay (upstream.c). */
    if (c->upstream && mw__upstream_stats_json(c, root) < 0)
        goto out;
    /* Window close latency quantiles in ms (docs/collector.md, Performance). */
    const struct {
        const char *key;
        const mw_latency_t *h;
        double q;
    } lat[] = {{"close_latency_ms_p50", &c->stats.close_latency, 0.5},
               {"close_latency_ms_p99", &c->stats.close_latency, 0.99},
               {"close_latency_ms_max", &c->stats.close_latency, 1.0},
               {"close_wait_ms_p50", &c->stats.close_wait, 0.5},
               {"close_wait_ms_p99", &c->stats.close_wait, 0.99}};
    for (size_t i = 0; i < sizeof lat / sizeof lat[0]; i++)
        if (!cJSON_AddNumberToObject(root, lat[i].key,
                                     (double)mw__latency_quantile(lat[i].h, lat[i].q) / 1e6))
            goto out;
    /* Only with --record, so that the key set without it stays what it was. */
    uint64_t rec_dropped = 0, rec_not = 0;
    int rec_limit = 0;
    mw__record_tiers(c->record, &rec_dropped, &rec_not, &rec_limit);
    if (c->record &&
        (mw_json_add_u64(root, "recording_bytes", mw__record_bytes(c->record)) < 0 ||
         mw_json_add_u64(root, "recording_errors", (uint64_t)mw__record_failed(c->record)) < 0 ||
         mw_json_add_u64(root, "recording_dropped_bytes", rec_dropped) < 0 ||
         mw_json_add_u64(root, "recording_not_recorded", rec_not) < 0 ||
         mw_json_add_u64(root, "recording_limit_reached", (uint64_t)rec_limit) < 0))
        goto out;
    text = cJSON_Print(root);
out:
    cJSON_Delete(root);
    return text;
}

static int write_json(char *text, const char *path)
{
    if (!text) {
        MW_LOG(MW_LOG_ERROR, "cannot build %s: out of memory", path);
        return -1;
    }
    int rc = mw__write_file(path, text);
    cJSON_free(text);
    return rc;
}

int mw__summary_write(const mw_collector_t *c, const char *path)
{
    return write_json(mw_summary_json(c), path);
}

int mw__stats_write(const mw_collector_t *c, const char *path)
{
    return write_json(mw__stats_json(c), path);
}
