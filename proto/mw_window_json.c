/* mw_window_json.c: merged windows checked, laid out by function and written as JSON.
 *
 * DESIGN: see mw_window_json.h. Filling a view is one pass over the window's sparse arrays plus
 * one pass over the function table (to list the ids with data in ascending order, which makes
 * every output deterministic and sorted like the collector's summary). The JSON writer keeps
 * every counter exact: cJSON holds numbers as doubles, so integers go in as raw tokens printed
 * with PRIu64, as collector/summary.c does; fractions are derived values and go in with six
 * significant digits.
 */
#include "mw_window_json.h"

#include "mw_json.h"
#include "mw_wire.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

mw_window_view_t *mw_window_view_new(void)
{
    return calloc(1, sizeof(mw_window_view_t));
}

void mw_window_view_free(mw_window_view_t *v)
{
    free(v);
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* A function with a name here: this build's table or an extra registered (mw_fnmap.h). */
static int fn_valid(uint32_t fn)
{
    return fn > 0 && fn < mw_fn_end();
}

/* Whether k parallel arrays (data pointers and lengths) agree: the same length, and no length
 * without its data. */
static int parallel_ok(const void *const *data, const size_t *lens, int k)
{
    for (int i = 0; i < k; i++)
        if (lens[i] != lens[0] || (lens[i] && !data[i]))
            return 0;
    return 1;
}

/* Whether n messages are all present. */
static int entries_ok(const void *const *items, size_t n)
{
    if (n && !items)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!items[i])
            return 0;
    return 1;
}

const char *mw_window_check(const Mpiwatch__Window *w)
{
    if (!w)
        return "no window";
    if (w->window_ns == 0 || w->subslots < 1 || w->subslots > MW_MAX_SUBSLOTS ||
        w->duration_bins < 1 || w->duration_bins > MW_MAX_DURATION_BINS)
        return "a grid no collector writes (window_ns, subslots or duration_bins)";
    const void *occ[] = {w->occ_fn, w->occ_sub, w->occ_ns};
    const size_t n_occ[] = {w->n_occ_fn, w->n_occ_sub, w->n_occ_ns};
    if (!parallel_ok(occ, n_occ, 3))
        return "occupancy arrays of different lengths";
    const void *den[] = {w->density_fn, w->density_sub, w->density_bin, w->density_end,
                         w->density_count};
    const size_t n_den[] = {w->n_density_fn, w->n_density_sub, w->n_density_bin, w->n_density_end,
                            w->n_density_count};
    if (!parallel_ok(den, n_den, 5))
        return "density arrays of different lengths";
    const void *pairs[] = {w->pair_src, w->pair_dst, w->pair_messages, w->pair_bytes};
    const size_t n_pairs[] = {w->n_pair_src, w->n_pair_dst, w->n_pair_messages, w->n_pair_bytes};
    if (!parallel_ok(pairs, n_pairs, 4))
        return "pair arrays of different lengths";
    if (!entries_ok((const void *const *)w->functions, w->n_functions))
        return "a missing function entry";
    if (!entries_ok((const void *const *)w->longest, w->n_longest))
        return "a missing call entry";
    return NULL;
}

/* Forgets the previous window: only the rows it used are cleared. */
static void view_clear(mw_window_view_t *v)
{
    for (uint32_t i = 0; i < v->n_fn; i++) {
        uint32_t id = v->fn[i];
        v->stat[id] = NULL;
        v->occ_fn_ns[id] = 0;
        v->mark[id] = 0;
        if (v->subslots)
            memset(&v->occ_ns[(size_t)id * v->subslots], 0, v->subslots * sizeof v->occ_ns[0]);
    }
    v->n_fn = 0;
    v->skipped = 0;
    v->w = NULL;
}

/* The usable length of k parallel arrays: the shortest. The entries the longest has beyond it
 * are counted as skipped (parallel arrays of different lengths are a malformed message). */
static size_t parallel_len(const size_t *lens, int k, uint64_t *skipped)
{
    size_t lo = lens[0], hi = lens[0];
    for (int i = 1; i < k; i++) {
        lo = lens[i] < lo ? lens[i] : lo;
        hi = lens[i] > hi ? lens[i] : hi;
    }
    *skipped += hi - lo;
    return lo;
}

static void view_fill(mw_window_view_t *v, uint64_t index, uint64_t window_ns, uint64_t start_ns,
                      uint32_t subslots, uint32_t ranks, Mpiwatch__FunctionStat *const *functions,
                      size_t n_functions, const uint32_t *occ_fn, size_t n_occ_fn,
                      const uint32_t *occ_sub, size_t n_occ_sub, const uint64_t *occ_ns,
                      size_t n_occ_ns)
{
    view_clear(v);
    v->index = index;
    v->window_ns = window_ns;
    /* Its own start when it carries one (the grid changed, docs/recording.md), else on the
     * job's one grid. */
    if (start_ns)
        v->start_ns = start_ns;
    else if (__builtin_mul_overflow(index, window_ns, &v->start_ns))
        v->start_ns = 0;
    v->subslots = subslots >= 1 && subslots <= MW_MAX_SUBSLOTS ? subslots : 0;
    v->slot_ns = v->subslots ? window_ns / v->subslots : 0;
    v->ranks = ranks;

    for (size_t i = 0; i < n_functions; i++) {
        const Mpiwatch__FunctionStat *f = functions ? functions[i] : NULL;
        if (!f || !fn_valid(f->fn) || v->stat[f->fn]) { /* a function twice is malformed too */
            v->skipped++;
            continue;
        }
        v->stat[f->fn] = f;
        v->mark[f->fn] = 1;
    }

    const size_t lens[] = {n_occ_fn, n_occ_sub, n_occ_ns};
    size_t n = occ_fn && occ_sub && occ_ns ? parallel_len(lens, 3, &v->skipped) : 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t id = occ_fn[i], sub = occ_sub[i];
        if (!fn_valid(id) || sub >= v->subslots) {
            v->skipped++;
            continue;
        }
        uint64_t *cell = &v->occ_ns[(size_t)id * v->subslots + sub];
        *cell = add_sat(*cell, occ_ns[i]);
        v->occ_fn_ns[id] = add_sat(v->occ_fn_ns[id], occ_ns[i]);
        v->mark[id] = 1;
    }

    for (uint32_t id = 1; id < MW_FN_SPACE; id++)
        if (v->mark[id])
            v->fn[v->n_fn++] = id;
}

int mw_window_view_set(mw_window_view_t *v, const Mpiwatch__Window *w)
{
    if (mw_window_check(w)) {
        view_clear(v);
        return -1;
    }
    view_fill(v, w->index, w->window_ns, w->start_ns, w->subslots, w->ranks_reporting, w->functions,
              w->n_functions, w->occ_fn, w->n_occ_fn, w->occ_sub, w->n_occ_sub, w->occ_ns,
              w->n_occ_ns);
    v->w = w;
    return 0;
}

void mw_window_view_set_sample(mw_window_view_t *v, const Mpiwatch__Sample *s, uint64_t window_ns,
                               uint32_t subslots)
{
    view_fill(v, s->window, s->window_ns ? s->window_ns : window_ns, s->window_start_ns, subslots,
              1, s->functions, s->n_functions, s->occ_fn, s->n_occ_fn, s->occ_sub, s->n_occ_sub,
              s->occ_ns, s->n_occ_ns);
}

double mw_window_view_inside(const mw_window_view_t *v, uint32_t fn, uint32_t sub)
{
    if (!fn_valid(fn) || sub >= v->subslots || !v->slot_ns || !v->ranks)
        return 0;
    return (double)v->occ_ns[(size_t)fn * v->subslots + sub] / ((double)v->slot_ns * v->ranks);
}

double mw_window_view_fn_fraction(const mw_window_view_t *v, uint32_t fn)
{
    if (!fn_valid(fn) || !v->window_ns || !v->ranks)
        return 0;
    return (double)v->occ_fn_ns[fn] / ((double)v->window_ns * v->ranks);
}

const char *mw_jobinfo_host(const Mpiwatch__JobInfo *job, uint32_t rank)
{
    if (!job || !job->ranks)
        return NULL;
    /* The collector lists the ranks in rank order; a list that is not is searched in full. */
    const Mpiwatch__RankInfo *found = NULL;
    size_t lo = 0, hi = job->n_ranks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const Mpiwatch__RankInfo *r = job->ranks[mid];
        if (!r)
            break;
        if (r->rank == rank) {
            found = r;
            break;
        }
        if (r->rank < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = 0; !found && i < job->n_ranks; i++)
        if (job->ranks[i] && job->ranks[i]->rank == rank)
            found = job->ranks[i];
    if (!found || found->host >= job->n_hosts || !job->hosts || !job->hosts[found->host] ||
        !*job->hosts[found->host]) /* the collector's "" host: unknown */
        return NULL;
    return job->hosts[found->host];
}

/* ---- text --------------------------------------------------------------------------------- */

int mw_utf8_seq(const char *p)
{
    /* The one UTF-8 check (mw_wire.h), on at most the 4 bytes before the terminating NUL. */
    size_t n = 0;
    while (n < 4 && p[n])
        n++;
    return mw_wire_utf8_seq((const unsigned char *)p, n);
}

char *mw_utf8_clean(const char *s)
{
    if (!s)
        s = "";
    size_t len = strlen(s);
    char *out = malloc(3 * len + 1); /* each byte becomes at most the 3 bytes of U+FFFD */
    if (!out)
        return NULL;
    size_t o = 0;
    while (*s) {
        int n = mw_utf8_seq(s);
        if (n) {
            memcpy(out + o, s, (size_t)n);
            o += (size_t)n;
            s += n;
        } else {
            memcpy(out + o, "\xef\xbf\xbd", 3);
            o += 3;
            s++;
        }
    }
    out[o] = 0;
    return out;
}

/* ---- JSON --------------------------------------------------------------------------------- */

/* obj[key] = s, with what is not UTF-8 replaced. Returns 0, or -1 when out of memory. */
static int json_text(cJSON *obj, const char *key, const char *s)
{
    char *clean = mw_utf8_clean(s);
    int rc = clean && cJSON_AddStringToObject(obj, key, clean) ? 0 : -1;
    free(clean);
    return rc;
}

/* Exact integers (mw_json.h). */
static int json_u64(cJSON *obj, const char *key, uint64_t v)
{
    return mw_json_add_u64(obj, key, v);
}

static int json_i64(cJSON *obj, const char *key, int64_t v)
{
    return mw_json_add_i64(obj, key, v);
}

/* A derived fraction: six significant digits are plenty and keep lines short. */
static int json_frac(cJSON *obj, const char *key, double v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.6g", v);
    return cJSON_AddRawToObject(obj, key, buf) ? 0 : -1;
}

static int array_add_frac(cJSON *arr, double v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.6g", v);
    cJSON *n = cJSON_CreateRaw(buf);
    if (!n || !cJSON_AddItemToArray(arr, n)) {
        cJSON_Delete(n);
        return -1;
    }
    return 0;
}

/* Appends a new object to `arr`; NULL when out of memory. */
static cJSON *array_add_object(cJSON *arr)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(arr, o)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static int json_function(const mw_window_view_t *v, cJSON *fns, uint32_t id)
{
    const Mpiwatch__FunctionStat *f = v->stat[id];
    cJSON *o = cJSON_AddObjectToObject(fns, mw_fn_name(id));
    if (!o)
        return -1;
    if (json_u64(o, "id", id) < 0 || json_u64(o, "count", f ? f->count : 0) < 0 ||
        json_u64(o, "time_ns", f ? f->total_ns : 0) < 0 ||
        json_u64(o, "min_ns", f ? f->min_ns : 0) < 0 ||
        json_u64(o, "max_ns", f ? f->max_ns : 0) < 0 ||
        json_u64(o, "bytes", f ? f->bytes : 0) < 0 ||
        json_u64(o, "hist_first", f ? f->hist_first : 0) < 0)
        return -1;
    cJSON *hist = cJSON_AddArrayToObject(o, "hist");
    if (!hist)
        return -1;
    for (size_t b = 0; f && f->hist && b < f->n_hist; b++) {
        cJSON *n = cJSON_CreateNumber(f->hist[b]);
        if (!n || !cJSON_AddItemToArray(hist, n)) {
            cJSON_Delete(n);
            return -1;
        }
    }
    if (json_u64(o, "occ_ns", v->occ_fn_ns[id]) < 0 ||
        json_frac(o, "fraction", mw_window_view_fn_fraction(v, id)) < 0)
        return -1;
    /* The spread across ranks (merged windows of collectors that compute it; docs/export.md):
     * absent rather than 0 in older recordings. */
    if (f && (f->rank_max_ns || f->rank_sd_ns > 0) &&
        (!cJSON_AddNumberToObject(o, "rank_sd_ns", f->rank_sd_ns) ||
         json_u64(o, "rank_max", f->rank_max) < 0 ||
         json_u64(o, "rank_max_ns", f->rank_max_ns) < 0))
        return -1;
    cJSON *inside = cJSON_AddArrayToObject(o, "inside");
    if (!inside)
        return -1;
    for (uint32_t s = 0; s < v->subslots; s++)
        if (array_add_frac(inside, mw_window_view_inside(v, id, s)) < 0)
            return -1;
    return 0;
}

static int json_pairs(const Mpiwatch__Window *w, cJSON *root, uint64_t *skipped)
{
    cJSON *arr = cJSON_AddArrayToObject(root, "pairs");
    if (!arr)
        return -1;
    const size_t lens[] = {w->n_pair_src, w->n_pair_dst, w->n_pair_messages, w->n_pair_bytes};
    size_t n = w->pair_src && w->pair_dst && w->pair_messages && w->pair_bytes
                   ? parallel_len(lens, 4, skipped)
                   : 0;
    for (size_t i = 0; i < n; i++) {
        cJSON *o = array_add_object(arr);
        if (!o || json_u64(o, "src", w->pair_src[i]) < 0 ||
            json_u64(o, "dst", w->pair_dst[i]) < 0 ||
            json_u64(o, "messages", w->pair_messages[i]) < 0 ||
            json_u64(o, "bytes", w->pair_bytes[i]) < 0)
            return -1;
    }
    return 0;
}

static int json_longest(const Mpiwatch__Window *w, const Mpiwatch__JobInfo *job, cJSON *root,
                        uint64_t *skipped)
{
    cJSON *arr = cJSON_AddArrayToObject(root, "longest");
    if (!arr)
        return -1;
    for (size_t i = 0; i < w->n_longest; i++) {
        const Mpiwatch__Call *c = w->longest ? w->longest[i] : NULL;
        if (!c || !fn_valid(c->fn)) {
            (*skipped)++;
            continue;
        }
        cJSON *o = array_add_object(arr);
        if (!o || json_u64(o, "rank", c->rank) < 0)
            return -1;
        const char *host = mw_jobinfo_host(job, c->rank);
        if (host && json_text(o, "host", host) < 0)
            return -1;
        if (!cJSON_AddStringToObject(o, "fn", mw_fn_name(c->fn)) ||
            json_u64(o, "start_ns", c->start_ns) < 0 ||
            json_u64(o, "duration_ns", c->duration_ns) < 0 || json_u64(o, "bytes", c->bytes) < 0 ||
            json_i64(o, "peer", c->peer) < 0)
            return -1;
    }
    return 0;
}

static int json_density(const Mpiwatch__Window *w, cJSON *root, uint64_t *skipped)
{
    cJSON *arr = cJSON_AddArrayToObject(root, "density");
    if (!arr)
        return -1;
    const size_t lens[] = {w->n_density_fn, w->n_density_sub, w->n_density_bin, w->n_density_end,
                           w->n_density_count};
    size_t n =
        w->density_fn && w->density_sub && w->density_bin && w->density_end && w->density_count
            ? parallel_len(lens, 5, skipped)
            : 0;
    for (size_t i = 0; i < n; i++) {
        if (!fn_valid(w->density_fn[i])) {
            (*skipped)++;
            continue;
        }
        cJSON *o = array_add_object(arr);
        if (!o || !cJSON_AddStringToObject(o, "fn", mw_fn_name(w->density_fn[i])) ||
            json_i64(o, "sub", w->density_sub[i]) < 0 ||
            json_u64(o, "bin", w->density_bin[i]) < 0 ||
            json_u64(o, "end", w->density_end[i]) < 0 ||
            json_u64(o, "count", w->density_count[i]) < 0)
            return -1;
    }
    return 0;
}

/* The job's region / call site of job-wide id `id` (JobInfo entry id - 1), or NULL. */
static const Mpiwatch__Region *job_region(const Mpiwatch__JobInfo *job, uint32_t id)
{
    if (!job || id == 0 || id > job->n_regions || !job->regions)
        return NULL;
    const Mpiwatch__Region *r = job->regions[id - 1];
    return r && r->id == id ? r : NULL;
}

static const Mpiwatch__CallSite *job_site(const Mpiwatch__JobInfo *job, uint32_t id)
{
    if (!job || id == 0 || id > job->n_sites || !job->sites)
        return NULL;
    const Mpiwatch__CallSite *s = job->sites[id - 1];
    return s && s->id == id ? s : NULL;
}

/* "regions" and "sites" (Window.regions, .sites) with their names from the job description,
 * "fpairs" (per sending function), and the dropped and left-out counts: each only when the
 * window has some, so that older recordings export as before. */
static int json_regions(const Mpiwatch__Window *w, const Mpiwatch__JobInfo *job, cJSON *root,
                        uint64_t *skipped)
{
    if (w->n_regions) {
        cJSON *arr = cJSON_AddArrayToObject(root, "regions");
        if (!arr)
            return -1;
        for (size_t i = 0; i < w->n_regions; i++) {
            const Mpiwatch__RegionStat *r = w->regions ? w->regions[i] : NULL;
            if (!r) {
                (*skipped)++;
                continue;
            }
            const Mpiwatch__Region *def = job_region(job, r->region);
            cJSON *o = array_add_object(arr);
            if (!o || json_u64(o, "id", r->region) < 0 ||
                (def && def->name && json_text(o, "name", def->name) < 0) ||
                json_u64(o, "count", r->count) < 0 || json_u64(o, "incl_ns", r->incl_ns) < 0 ||
                json_u64(o, "excl_ns", r->excl_ns) < 0 || json_u64(o, "mpi_ns", r->mpi_ns) < 0 ||
                json_u64(o, "ranks", r->ranks) < 0)
                return -1;
        }
    }
    if (w->n_sites) {
        cJSON *arr = cJSON_AddArrayToObject(root, "sites");
        if (!arr)
            return -1;
        for (size_t i = 0; i < w->n_sites; i++) {
            const Mpiwatch__SiteStat *t = w->sites ? w->sites[i] : NULL;
            if (!t || !fn_valid(t->fn)) {
                (*skipped)++;
                continue;
            }
            const Mpiwatch__CallSite *def = job_site(job, t->site);
            cJSON *o = array_add_object(arr);
            if (!o || json_u64(o, "site", t->site) < 0 ||
                !cJSON_AddStringToObject(o, "fn", mw_fn_name(t->fn)) ||
                (def && def->function && json_text(o, "function", def->function) < 0) ||
                (def && def->file && json_text(o, "file", def->file) < 0) ||
                (def && json_u64(o, "line", def->line) < 0) || json_u64(o, "count", t->count) < 0 ||
                json_u64(o, "ns", t->ns) < 0 || json_u64(o, "bytes", t->bytes) < 0 ||
                json_u64(o, "max_ns", t->max_ns) < 0 || json_u64(o, "ranks", t->ranks) < 0 ||
                json_u64(o, "top_rank", t->top_rank) < 0 ||
                json_u64(o, "top_rank_ns", t->top_rank_ns) < 0)
                return -1;
        }
    }
    const size_t lens[] = {w->n_fpair_src, w->n_fpair_dst, w->n_fpair_fn, w->n_fpair_messages,
                           w->n_fpair_bytes};
    size_t n = w->fpair_src && w->fpair_dst && w->fpair_fn && w->fpair_messages && w->fpair_bytes
                   ? parallel_len(lens, 5, skipped)
                   : 0;
    if (n) {
        cJSON *arr = cJSON_AddArrayToObject(root, "fpairs");
        if (!arr)
            return -1;
        for (size_t i = 0; i < n; i++) {
            if (!fn_valid(w->fpair_fn[i])) {
                (*skipped)++;
                continue;
            }
            cJSON *o = array_add_object(arr);
            if (!o || json_u64(o, "src", w->fpair_src[i]) < 0 ||
                json_u64(o, "dst", w->fpair_dst[i]) < 0 ||
                !cJSON_AddStringToObject(o, "fn", mw_fn_name(w->fpair_fn[i])) ||
                json_u64(o, "messages", w->fpair_messages[i]) < 0 ||
                json_u64(o, "bytes", w->fpair_bytes[i]) < 0)
                return -1;
        }
    }
    if ((w->regions_dropped && json_u64(root, "regions_dropped", w->regions_dropped) < 0) ||
        (w->sites_dropped && json_u64(root, "sites_dropped", w->sites_dropped) < 0) ||
        (w->rank_detail_left_out &&
         json_u64(root, "rank_detail_left_out", w->rank_detail_left_out) < 0))
        return -1;
    return 0;
}

static int json_window(const mw_window_view_t *v, const Mpiwatch__JobInfo *job, cJSON *root)
{
    const Mpiwatch__Window *w = v->w;
    double denom = (double)w->window_ns * w->ranks_reporting;
    if (json_u64(root, "index", w->index) < 0 || json_u64(root, "start_ns", v->start_ns) < 0 ||
        json_u64(root, "window_ns", w->window_ns) < 0 ||
        json_u64(root, "subslots", w->subslots) < 0 ||
        json_u64(root, "duration_bins", w->duration_bins) < 0 ||
        json_u64(root, "ranks_reporting", w->ranks_reporting) < 0 ||
        json_u64(root, "ranks_missing", w->ranks_missing) < 0 ||
        !cJSON_AddBoolToObject(root, "partial", w->ranks_missing > 0) ||
        json_u64(root, "mpi_time_ns", w->mpi_time_ns) < 0 ||
        json_frac(root, "mpi_fraction", denom > 0 ? (double)w->mpi_time_ns / denom : 0) < 0 ||
        json_u64(root, "occ_total_ns", w->occ_total_ns) < 0 ||
        json_frac(root, "occ_fraction", denom > 0 ? (double)w->occ_total_ns / denom : 0) < 0 ||
        json_u64(root, "records_dropped", w->records_dropped) < 0 ||
        json_u64(root, "samples_dropped", w->samples_dropped) < 0 ||
        json_u64(root, "calls_late", w->calls_late) < 0 ||
        json_u64(root, "overflow", w->overflow) < 0 ||
        json_u64(root, "closed_real_ns", w->closed_real_ns) < 0)
        return -1;
    if (job && job->job && json_text(root, "job", job->job) < 0)
        return -1;
    cJSON *fns = cJSON_AddObjectToObject(root, "functions");
    if (!fns)
        return -1;
    for (uint32_t i = 0; i < v->n_fn; i++)
        if (json_function(v, fns, v->fn[i]) < 0)
            return -1;
    uint64_t skipped = v->skipped;
    if (json_pairs(w, root, &skipped) < 0 || json_longest(w, job, root, &skipped) < 0 ||
        json_density(w, root, &skipped) < 0 || json_regions(w, job, root, &skipped) < 0)
        return -1;
    if (skipped && json_u64(root, "skipped", skipped) < 0)
        return -1;
    return 0;
}

cJSON *mw_window_view_json(const mw_window_view_t *v, const Mpiwatch__JobInfo *job)
{
    if (!v->w)
        return NULL;
    cJSON *root = cJSON_CreateObject();
    if (root && json_window(v, job, root) < 0) {
        cJSON_Delete(root);
        root = NULL;
    }
    return root;
}

cJSON *mw_window_json(const Mpiwatch__Window *w, const Mpiwatch__JobInfo *job)
{
    mw_window_view_t *v = mw_window_view_new();
    if (!v)
        return NULL;
    cJSON *root = mw_window_view_set(v, w) == 0 ? mw_window_view_json(v, job) : NULL;
    mw_window_view_free(v);
    return root;
}

int mw_window_json_add_place(cJSON *obj, uint64_t window, uint64_t t_ns)
{
    char t[32];
    snprintf(t, sizeof t, "%" PRIu64 ".%09" PRIu64, t_ns / 1000000000u, t_ns % 1000000000u);
    cJSON *ts = cJSON_CreateRaw(t);
    if (!ts || json_u64(obj, "window", window) < 0 || !cJSON_AddItemToObject(obj, "t_s", ts)) {
        cJSON_Delete(ts);
        return -1;
    }
    return 0;
}

static const char *rank_sums_fn_name(uint32_t fn)
{
    const char *name = fn < MW_FN_SPACE ? mw_fn_name(fn) : NULL;
    return name ? name : "unknown";
}

void mw_rank_sums_json(FILE *out, const Mpiwatch__RecordRanks *rk)
{
    const Mpiwatch__Window *s = rk->sums;
    fprintf(out,
            "{\"type\":\"ranks\",\"first_window\":%" PRIu64 ",\"last_window\":%" PRIu64
            ",\"windows\":%" PRIu32 ",\"left_out\":%" PRIu64 ",\"functions\":[",
            rk->first_window, rk->last_window, rk->windows, rk->left_out);
    size_t n = s ? s->n_rf_rank : 0;
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s[%" PRIu32 ",%" PRIu32 ",\"%s\",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]",
                i ? "," : "", s->rf_rank[i], s->rf_fn[i], rank_sums_fn_name(s->rf_fn[i]),
                s->rf_count[i], s->rf_ns[i], s->rf_bytes[i]);
    fputs("],\"regions\":[", out);
    n = s ? s->n_rr_rank : 0;
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s[%" PRIu32 ",%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]",
                i ? "," : "", s->rr_rank[i], s->rr_region[i], s->rr_count[i], s->rr_incl_ns[i],
                s->rr_excl_ns[i], s->rr_mpi_ns[i]);
    fputs("],\"pairs\":[", out);
    n = s ? s->n_pair_src : 0;
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s[%" PRIu32 ",%" PRIu32 ",%" PRIu64 ",%" PRIu64 "]", i ? "," : "",
                s->pair_src[i], s->pair_dst[i], s->pair_messages[i], s->pair_bytes[i]);
    fputs("],\"fn_pairs\":[", out);
    n = s ? s->n_fpair_src : 0;
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s[%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%" PRIu64 ",%" PRIu64 "]",
                i ? "," : "", s->fpair_src[i], s->fpair_dst[i], s->fpair_fn[i],
                s->fpair_messages[i], s->fpair_bytes[i]);
    /* Per rank: the mean share of the windows it was in (null: none), and those windows. */
    fputs("],\"mpi_permille\":[", out);
    n = s ? s->n_rank_mpi_permille : 0;
    for (size_t i = 0; i < n; i++) {
        if (s->rank_mpi_permille[i] == 65535u)
            fprintf(out, "%snull", i ? "," : "");
        else
            fprintf(out, "%s%" PRIu32, i ? "," : "", s->rank_mpi_permille[i]);
    }
    fputs("],\"rank_windows\":[", out);
    for (size_t i = 0; i < rk->n_rank_windows; i++)
        fprintf(out, "%s%" PRIu32, i ? "," : "", rk->rank_windows[i]);
    fputs("]}", out);
}
