/* job.c: one MPI job as the collector sees it: its ranks, their lifecycle, and exact totals.
 *
 * DESIGN: per-rank state is one array sized by the job's size at the first hello, so every
 * later message finds its rank in O(1) and nothing is allocated per message. The totals used
 * by the report and the summary (per function, per rank and function, per communicating pair)
 * are accumulated here from every accepted sample, late or not, so they are exact whatever
 * happened to the windows. Per-function totals are dense by id; per-rank-function and pair
 * totals are sparse (a 16k-rank job touches ~20 functions and a few peers per rank, not
 * size x MW_FN_COUNT or size^2) in hash indexes that grow by doubling, so allocation happens
 * O(log n) times per job, not per sample. Only validated messages reach this file.
 *
 * Those two indexes are the merge's main cost at scale: a hash lookup per function summary
 * is a cache miss in a table of size x functions entries. A rank's first sample inserts its
 * entries contiguously and (as the shim lists functions and peers in increasing order) sorted,
 * and later samples list mostly the same keys in the same order, so each sample first walks
 * that block like a merge join (sequential memory) and only falls back to the hash for keys
 * that are not there. Correctness never depends on the order: a miss is just a hash lookup.
 */
#include "collector.h"

#include <stdlib.h>
#include <string.h>

static void copy_string(char *dst, const char *src)
{
    size_t n = src ? strnlen(src, MW_MAX_STRING) : 0;
    memcpy(dst, src ? src : "", n);
    dst[n] = '\0';
}

static uint64_t string_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Index of host name `name`, added when new; 0 (the "" host) when memory runs out. */
static uint32_t job_intern_host(mw_job_t *job, const char *name)
{
    uint64_t h = string_hash(name);
    for (uint32_t i = 0; i < job->n_hosts; i++)
        if (job->host_hash[i] == h && strcmp(job->hosts[i], name) == 0)
            return i;
    if (job->n_hosts == job->cap_hosts) {
        uint32_t cap = job->cap_hosts ? job->cap_hosts * 2 : 16;
        char **hosts = realloc(job->hosts, cap * sizeof *hosts);
        if (!hosts)
            return 0;
        job->hosts = hosts;
        uint64_t *hashes = realloc(job->host_hash, cap * sizeof *hashes);
        if (!hashes)
            return 0;
        job->host_hash = hashes;
        job->cap_hosts = cap;
    }
    char *copy = strdup(name);
    if (!copy)
        return 0;
    job->hosts[job->n_hosts] = copy;
    job->host_hash[job->n_hosts] = h;
    return job->n_hosts++;
}

/* Value of `key` in `ix`, trying the rank's sorted block at *pos first (see DESIGN). *first is
 * the block's start + 1 (0: not yet known) and is set by the rank's first insertion. */
static void *job_hinted_get(mw__index_t *ix, uint32_t *pos, uint32_t *first, uint64_t key,
                            int *created)
{
    uint32_t p = *pos;
    while (p < ix->n && ix->keys[p] >> 32 == key >> 32 && ix->keys[p] < key)
        p++;
    if (p < ix->n && ix->keys[p] == key) {
        *pos = p + 1;
        *created = 0;
        return (char *)ix->vals + (size_t)p * ix->elem;
    }
    void *v = mw__index_get(ix, key, created);
    if (v && *created && *first == 0)
        *first = ix->n; /* the entry just appended, + 1 */
    return v;
}

int mw__job_begin(mw_job_t *job, const Mpiwatch__Envelope *env, uint64_t now_ns)
{
    const Mpiwatch__Hello *h = env->hello;
    mw__job_free(job);
    job->ranks = calloc(h->size, sizeof *job->ranks);
    if (!job->ranks)
        goto fail;
    /* Room for about 8 functions per rank before the first doubling, within reason. */
    uint32_t want = h->size < (1u << 17) ? h->size * 8 : (1u << 20);
    if (mw__index_init(&job->rank_fn, sizeof(mw_rank_fn_t), want, MW_JOB_MAX_RANK_FN) < 0)
        goto fail;
    if (mw__index_init(&job->pairs, sizeof(mw_pair_sum_t), 1024, MW_JOB_MAX_PAIRS) < 0)
        goto fail;
    job->active = 1;
    job->size = h->size;
    job->window_ns = h->window_ns;
    job->subslots = h->subslots;
    job->duration_bins = h->duration_bins;
    copy_string(job->job, env->job);
    copy_string(job->program, h->program);
    copy_string(job->mpi_library, h->mpi_library);
    for (uint32_t r = 0; r < h->size; r++)
        job->ranks[r].first_window = job->ranks[r].last_window = -1;
    job->min_window = job->max_window = -1;
    job->started_ns = job->last_activity_ns = now_ns;
    job_intern_host(job, ""); /* index 0: unknown host */
    return 0;
fail:
    mw__job_free(job);
    MW_LOG(MW_LOG_ERROR, "cannot allocate the state of a %u-rank job", h->size);
    return -1;
}

void mw__job_free(mw_job_t *job)
{
    free(job->ranks);
    for (uint32_t i = 0; i < job->n_hosts; i++)
        free(job->hosts[i]);
    free(job->hosts);
    free(job->host_hash);
    mw__index_free(&job->rank_fn);
    mw__index_free(&job->pairs);
    memset(job, 0, sizeof *job);
}

void mw__job_hello(mw_job_t *job, const Mpiwatch__Envelope *env, uint64_t now_ns)
{
    const Mpiwatch__Hello *h = env->hello;
    mw_rank_t *r = &job->ranks[env->rank];
    job->last_activity_ns = now_ns;
    r->last_seen_ns = now_ns;
    if (r->state != MW_RANK_PENDING)
        return; /* the same process saying hello again: nothing new */
    r->state = MW_RANK_LIVE;
    r->said_hello = 1;
    r->pid = h->pid;
    r->host = job_intern_host(job, h->host ? h->host : "");
    r->pu = h->pu;
    r->core = h->core;
    r->package = h->package;
    r->clock_error_ns = h->clock_error_ns;
    if (h->clock_error_ns > job->max_clock_error_ns)
        job->max_clock_error_ns = h->clock_error_ns;
    if (env->rank == 0 || job->program[0] == '\0')
        copy_string(job->program, h->program);
    if (env->rank == 0 || job->mpi_library[0] == '\0')
        copy_string(job->mpi_library, h->mpi_library);
    job->hellos++;
}

uint64_t mw__job_sample(mw_job_t *job, const Mpiwatch__Envelope *env, uint64_t now_ns)
{
    const Mpiwatch__Sample *s = env->sample;
    uint32_t rank = env->rank;
    mw_rank_t *r = &job->ranks[rank];
    int64_t w = (int64_t)s->window;

    job->last_activity_ns = now_ns;
    job->samples++;
    r->last_seen_ns = now_ns;
    r->samples++;
    if (r->first_window < 0)
        r->first_window = w;
    r->last_window = w;
    if (job->min_window < 0 || w < job->min_window)
        job->min_window = w;
    if (w > job->max_window)
        job->max_window = w;

    uint32_t pos = r->rank_fn_first ? r->rank_fn_first - 1 : UINT32_MAX;
    for (size_t i = 0; i < s->n_functions; i++) {
        const Mpiwatch__FunctionStat *f = s->functions[i];
        mw_fn_stats_add(&job->fn[f->fn], f);
        r->calls += f->count;
        r->mpi_time_ns += f->total_ns;

        int created;
        mw_rank_fn_t *rf = job_hinted_get(&job->rank_fn, &pos, &r->rank_fn_first,
                                          (uint64_t)rank << 32 | f->fn, &created);
        if (!rf) {
            job->overflow++;
            continue;
        }
        if (created) {
            rf->rank = rank;
            rf->fn = f->fn;
        }
        rf->count += f->count;
        rf->time_ns += f->total_ns;
        rf->bytes += f->bytes;
    }

    pos = r->pairs_first ? r->pairs_first - 1 : UINT32_MAX;
    for (size_t i = 0; i < s->n_peer_rank; i++) {
        int created;
        mw_pair_sum_t *p = job_hinted_get(&job->pairs, &pos, &r->pairs_first,
                                          (uint64_t)rank << 32 | s->peer_rank[i], &created);
        if (!p) {
            job->overflow++;
            continue;
        }
        mw_pair_add(p, created, rank, s->peer_rank[i], s->peer_messages[i], s->peer_bytes[i]);
    }

    r->records_dropped += s->records_dropped;
    r->calls_late += s->calls_late;
    uint64_t dropped_more = 0;
    if (s->samples_dropped_total > r->samples_dropped) {
        dropped_more = s->samples_dropped_total - r->samples_dropped;
        r->samples_dropped = s->samples_dropped_total;
    }
    return dropped_more;
}

void mw__job_bye(mw_job_t *job, const Mpiwatch__Envelope *env, uint64_t now_ns)
{
    const Mpiwatch__Bye *b = env->bye;
    mw_rank_t *r = &job->ranks[env->rank];
    job->last_activity_ns = now_ns;
    r->last_seen_ns = now_ns;
    r->state = MW_RANK_DONE;
    if (b->samples_dropped_total > r->samples_dropped)
        r->samples_dropped = b->samples_dropped_total;
    r->records_dropped_bye = b->records_dropped_total;
    job->byes++;
}

uint32_t mw__job_declare_dead(mw_job_t *job)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < job->size; i++) {
        if (job->ranks[i].state == MW_RANK_PENDING || job->ranks[i].state == MW_RANK_LIVE) {
            job->ranks[i].state = MW_RANK_DEAD;
            n++;
        }
    }
    job->dead += n;
    return n;
}

uint64_t mw_job_dropped(const mw_job_t *job)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < job->size; i++) {
        const mw_rank_t *r = &job->ranks[i];
        /* The bye's total also covers records of windows whose sample was itself dropped. */
        uint64_t records = r->records_dropped_bye > r->records_dropped ? r->records_dropped_bye
                                                                       : r->records_dropped;
        total += r->samples_dropped + records;
    }
    return total;
}

const char *mw_job_host(const mw_job_t *job, uint32_t rank)
{
    if (rank >= job->size || job->ranks[rank].host >= job->n_hosts)
        return "";
    return job->hosts[job->ranks[rank].host];
}

double mw_job_rank_fraction(const mw_job_t *job, uint32_t rank)
{
    const mw_rank_t *r = &job->ranks[rank];
    if (r->first_window < 0 || job->window_ns == 0)
        return -1.0;
    double span = (double)(r->last_window - r->first_window + 1) * (double)job->window_ns;
    return (double)r->mpi_time_ns / span;
}

const char *mw_end_name(mw_end_t end)
{
    switch (end) {
    case MW_END_NONE:
        return "running";
    case MW_END_COMPLETE:
        return "every rank said bye";
    case MW_END_SILENCE:
        return "silence timeout (ranks without bye declared dead)";
    case MW_END_SIGNAL:
        return "collector stopped by a signal";
    }
    return "?";
}
