/* mw_fnmap_msg.c: translating the function ids of a message (mw_fnmap_msg.h).
 *
 * DESIGN: one pass per id column; an entry left out (its function has no id here, which
 * happens only when the extras are full) is removed from its column and the parallel ones by
 * one compaction, done only when there is something to remove. The running totals are sorted
 * again by the new ids (the collector checks that they increase). Translation happens before
 * any check, so a column whose parallel arrays disagree in length is translated but not
 * compacted: the checks refuse it as they would have.
 */
#include "mw_fnmap_msg.h"
#include "mw_trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The job's id of a rank's id: 0 when it names no function here (the entry is left out),
 * MW_FN_SPACE when it is no id of the rank's table (the checks refuse the message). */
static uint32_t fn_job_id(const mw_fnmap_t *m, uint32_t fn)
{
    if (fn == 0 || fn > m->n)
        return MW_FN_SPACE;
    return m->to_local[fn];
}

/* Translates a column of ids in place; returns how many became 0 (left out). */
static size_t fn_column(const mw_fnmap_t *m, uint32_t *fn, size_t n)
{
    size_t zero = 0;
    for (size_t i = 0; i < n; i++)
        zero += (fn[i] = fn_job_id(m, fn[i])) == 0;
    return zero;
}

/* One column of parallel arrays, to be compacted together. */
typedef struct {
    void *p;
    size_t size;
} fn_col_t;

/* Removes the entries whose id is 0 from key and the parallel columns; returns the new n. */
static size_t fn_compact(uint32_t *key, size_t n, fn_col_t *cols, size_t ncols)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!key[i])
            continue;
        if (k != i) {
            key[k] = key[i];
            for (size_t c = 0; c < ncols; c++)
                memcpy((char *)cols[c].p + k * cols[c].size, (char *)cols[c].p + i * cols[c].size,
                       cols[c].size);
        }
        k++;
    }
    return k;
}

static size_t fn_stats(const mw_fnmap_t *m, Mpiwatch__FunctionStat **f, size_t n, uint64_t *unknown)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (f[i] && (f[i]->fn = fn_job_id(m, f[i]->fn)) == 0) {
            ++*unknown;
            continue;
        }
        f[k++] = f[i];
    }
    return k;
}

typedef struct {
    uint32_t fn;
    uint64_t calls, ns, bytes;
} fn_total_t;

static int fn_total_cmp(const void *a, const void *b)
{
    uint32_t x = ((const fn_total_t *)a)->fn, y = ((const fn_total_t *)b)->fn;
    return (x > y) - (x < y);
}

/* Running totals (Sample.total_*, Bye.total_*, and a dormant rank's, without ns): translated,
 * and sorted again by id since the checks want increasing ids. Arrays of different lengths are
 * left for the checks to refuse. */
static void fn_totals(const mw_fnmap_t *m, uint32_t *fn, size_t *n, uint64_t *calls, size_t n_calls,
                      uint64_t *ns, size_t n_ns, uint64_t *bytes, size_t n_bytes, uint64_t *unknown)
{
    static _Thread_local fn_total_t tmp[MW_FN_TABLE_MAX];
    if (*n != n_calls || (ns && *n != n_ns) || *n != n_bytes || *n > MW_FN_TABLE_MAX) {
        fn_column(m, fn, *n);
        return;
    }
    size_t zero = fn_column(m, fn, *n);
    if (zero) {
        fn_col_t cols[3] = {{calls, 8}, {bytes, 8}, {ns, 8}};
        *n = fn_compact(fn, *n, cols, ns ? 3 : 2);
        *unknown += zero;
    }
    int sorted = 1;
    for (size_t i = 1; i < *n && sorted; i++)
        sorted = fn[i] > fn[i - 1];
    if (sorted)
        return;
    for (size_t i = 0; i < *n; i++)
        tmp[i] = (fn_total_t){fn[i], calls[i], ns ? ns[i] : 0, bytes[i]};
    qsort(tmp, *n, sizeof *tmp, fn_total_cmp);
    for (size_t i = 0; i < *n; i++) {
        fn[i] = tmp[i].fn;
        calls[i] = tmp[i].calls;
        if (ns)
            ns[i] = tmp[i].ns;
        bytes[i] = tmp[i].bytes;
    }
}

/* A dormant rank's exact counts (Sample.dormant, Bye.dormant). */
static void fn_dormant(const mw_fnmap_t *m, Mpiwatch__Dormant *d, uint64_t *unknown)
{
    if (d)
        fn_totals(m, d->fn, &d->n_fn, d->calls, d->n_calls, NULL, 0, d->bytes, d->n_bytes, unknown);
}

/* A trace's records carry function ids too: decoded, translated and encoded again (only for
 * ranks of another table). Records it cannot translate make the trace refused by its checks
 * (an unknown encoding), as records of a bad id would be. The new block is kept in *block, or
 * with block NULL replaces the old records, which the message owns (unpacked with malloc). */
void mw_fnmap_keep_clear(mw_fnmap_keep_t *keep)
{
    for (size_t i = 0; i < keep->n; i++)
        free(keep->p[i]);
    keep->n = 0;
}

void mw_fnmap_keep_free(mw_fnmap_keep_t *keep)
{
    mw_fnmap_keep_clear(keep);
    free(keep->p);
    memset(keep, 0, sizeof *keep);
}

static int keep_push(mw_fnmap_keep_t *keep, void *p)
{
    if (keep->n == keep->cap) {
        size_t cap = keep->cap ? 2 * keep->cap : 8;
        void **q = realloc(keep->p, cap * sizeof *q);
        if (!q)
            return -1;
        keep->p = q;
        keep->cap = cap;
    }
    keep->p[keep->n++] = p;
    return 0;
}

static void fn_trace(const mw_fnmap_t *m, Mpiwatch__Trace *t, mw_fnmap_keep_t *block)
{
    if (!t || !t->count || !t->records.len)
        return;
    mw_trace_rec_t *recs;
    size_t n;
    const char *why;
    if (mw_trace_decode(t->records.data, t->records.len, t->encoding, t->raw_bytes, t->count, &recs,
                        &n, &why) < 0)
        return; /* refused by the checks as it is */
    int bad = 0;
    for (size_t i = 0; i < n && !bad; i++) {
        uint32_t id = fn_job_id(m, recs[i].fn);
        bad = id == 0 || id >= MW_FN_SPACE;
        recs[i].fn = (uint16_t)id;
    }
    uint8_t *out = NULL;
    size_t out_len;
    uint32_t enc;
    uint64_t raw;
    if (bad || mw_trace_encode(recs, n, t->encoding == MW_TRACE_ENC_ZSTD ? 3 : 0, 0, &out, &out_len,
                               &enc, &raw) < 0) {
        free(recs);
        t->encoding = 0;
        return;
    }
    free(recs);
    if (!block) {
        free(t->records.data); /* the message owns its fields (unpacked with malloc) */
    } else if (keep_push(block, out) < 0) {
        free(out);
        t->encoding = 0;
        return;
    }
    t->records.data = out;
    t->records.len = out_len;
    t->encoding = enc;
    t->raw_bytes = raw;
}

/* Translates every function id of a sample from the rank's table to the job's. Entries whose
 * function has no id here are left out (counted); ids outside the rank's
 * table become MW_FN_SPACE, which the checks refuse. */
static uint64_t fn_sample(const mw_fnmap_t *m, Mpiwatch__Sample *s, mw_fnmap_keep_t *block)
{
    uint64_t unknown = 0;
    size_t z;
    s->n_functions = fn_stats(m, s->functions, s->n_functions, &unknown);
    if ((z = fn_column(m, s->occ_fn, s->n_occ_fn)) && s->n_occ_sub == s->n_occ_fn &&
        s->n_occ_ns == s->n_occ_fn) {
        fn_col_t cols[2] = {{s->occ_sub, 4}, {s->occ_ns, 8}};
        s->n_occ_fn = s->n_occ_sub = s->n_occ_ns = fn_compact(s->occ_fn, s->n_occ_fn, cols, 2);
        unknown += z;
    }
    size_t nd = s->n_density_fn;
    if ((z = fn_column(m, s->density_fn, nd)) && s->n_density_sub == nd && s->n_density_bin == nd &&
        s->n_density_end == nd && s->n_density_count == nd) {
        fn_col_t cols[4] = {
            {s->density_sub, 4}, {s->density_bin, 4}, {s->density_end, 4}, {s->density_count, 8}};
        nd = fn_compact(s->density_fn, nd, cols, 4);
        s->n_density_fn = s->n_density_sub = s->n_density_bin = s->n_density_end = nd;
        s->n_density_count = nd;
        unknown += z;
    }
    size_t k = 0;
    for (size_t i = 0; i < s->n_longest; i++) {
        if (s->longest[i] && (s->longest[i]->fn = fn_job_id(m, s->longest[i]->fn)) == 0) {
            unknown++;
            continue;
        }
        s->longest[k++] = s->longest[i];
    }
    s->n_longest = k;
    size_t np = s->n_peer_fn;
    if ((z = fn_column(m, s->peer_fn, np)) && s->n_peer_rank == np && s->n_peer_messages == np &&
        s->n_peer_bytes == np) {
        fn_col_t cols[3] = {{s->peer_rank, 4}, {s->peer_messages, 8}, {s->peer_bytes, 8}};
        np = fn_compact(s->peer_fn, np, cols, 3);
        s->n_peer_fn = s->n_peer_rank = s->n_peer_messages = s->n_peer_bytes = np;
        unknown += z;
    }
    fn_totals(m, s->total_fn, &s->n_total_fn, s->total_calls, s->n_total_calls, s->total_ns,
              s->n_total_ns, s->total_bytes, s->n_total_bytes, &unknown);
    for (size_t i = 0; i < s->n_steps; i++) {
        Mpiwatch__StepMark *mk = s->steps[i];
        if (!mk)
            continue;
        mk->n_functions = fn_stats(m, mk->functions, mk->n_functions, &unknown);
        np = mk->n_peer_fn;
        if ((z = fn_column(m, mk->peer_fn, np)) && mk->n_peer_rank == np &&
            mk->n_peer_messages == np && mk->n_peer_bytes == np) {
            fn_col_t cols[3] = {{mk->peer_rank, 4}, {mk->peer_messages, 8}, {mk->peer_bytes, 8}};
            np = fn_compact(mk->peer_fn, np, cols, 3);
            mk->n_peer_fn = mk->n_peer_rank = mk->n_peer_messages = mk->n_peer_bytes = np;
            unknown += z;
        }
    }
    /* Call sites: an entry of id 0 is left out and counted by regions.c (fn_range). */
    fn_column(m, s->site_fn, s->n_site_fn);
    Mpiwatch__Capture *cp = s->capture;
    if (cp && (z = fn_column(m, cp->fn, cp->n_fn)) && cp->n_start == cp->n_fn &&
        cp->n_duration_ns == cp->n_fn && cp->n_bytes == cp->n_fn && cp->n_peer == cp->n_fn) {
        fn_col_t cols[4] = {{cp->start, 8}, {cp->duration_ns, 8}, {cp->bytes, 8}, {cp->peer, 4}};
        cp->n_fn = cp->n_start = cp->n_duration_ns = cp->n_bytes = cp->n_peer =
            fn_compact(cp->fn, cp->n_fn, cols, 4);
        cp->dropped += z;
    }
    for (size_t i = 0; i < s->n_comms; i++)
        if (s->comms[i] && s->comms[i]->fn) {
            uint32_t id = fn_job_id(m, s->comms[i]->fn);
            s->comms[i]->fn = id < MW_FN_SPACE ? id : 0;
        }
    fn_trace(m, s->trace, block);
    fn_dormant(m, s->dormant, &unknown);
    return unknown;
}

uint64_t mw_fnmap_envelope(const mw_fnmap_t *m, Mpiwatch__Envelope *env,
                           mw_fnmap_keep_t *trace_block)
{
    uint64_t unknown = 0;
    switch (env->body_case) {
    case MPIWATCH__ENVELOPE__BODY_SAMPLE:
        if (env->sample)
            unknown = fn_sample(m, env->sample, trace_block);
        break;
    case MPIWATCH__ENVELOPE__BODY_BYE:
        if (env->bye) {
            Mpiwatch__Bye *b = env->bye;
            fn_totals(m, b->total_fn, &b->n_total_fn, b->total_calls, b->n_total_calls, b->total_ns,
                      b->n_total_ns, b->total_bytes, b->n_total_bytes, &unknown);
            fn_dormant(m, b->dormant, &unknown);
        }
        break;
    case MPIWATCH__ENVELOPE__BODY_TRACE:
        fn_trace(m, env->trace, trace_block);
        break;
    default:
        break;
    }
    return unknown;
}

/* ---- what a collector produces, read by a consumer of another table ----------------------- */

int mw_fnmap_job(mw_fnmap_t *m, const Mpiwatch__JobInfo *job, char *err, size_t errlen)
{
    if (job->n_function_names)
        return mw_fnmap_build(m, (const char *const *)job->function_names, job->n_function_names,
                              job->n_function_kinds ? job->function_kinds : NULL,
                              job->n_function_kinds == job->n_function_names ? job->n_function_kinds
                                                                             : 0,
                              err, errlen);
    if (mw_fnmap_known(m, job->function_table_hash, job->function_count) == 0)
        return 0;
    if (err && errlen)
        snprintf(err, errlen,
                 "the job's function table (%u functions, hash %016llx) has no names and is "
                 "neither this build's nor the legacy one",
                 job->function_count, (unsigned long long)job->function_table_hash);
    return -1;
}

typedef struct {
    uint32_t rank, fn;
    uint64_t count, ns, bytes;
} fn_rf_t;

static int fn_rf_cmp(const void *a, const void *b)
{
    const fn_rf_t *x = a, *y = b;
    if (x->rank != y->rank)
        return (x->rank > y->rank) - (x->rank < y->rank);
    return (x->fn > y->fn) - (x->fn < y->fn);
}

/* The terrain's per-rank entries: translated, and in increasing ids within each rank again. */
static uint64_t fn_rank_fn(const mw_fnmap_t *m, Mpiwatch__Window *w)
{
    size_t n = w->n_rf_fn;
    if (w->n_rf_rank != n || w->n_rf_count != n || w->n_rf_ns != n || w->n_rf_bytes != n) {
        fn_column(m, w->rf_fn, n);
        return 0;
    }
    size_t z = fn_column(m, w->rf_fn, n);
    if (z) {
        fn_col_t cols[4] = {{w->rf_rank, 4}, {w->rf_count, 8}, {w->rf_ns, 8}, {w->rf_bytes, 8}};
        n = fn_compact(w->rf_fn, n, cols, 4);
        w->n_rf_fn = w->n_rf_rank = w->n_rf_count = w->n_rf_ns = w->n_rf_bytes = n;
    }
    int sorted = 1;
    for (size_t i = 1; i < n && sorted; i++)
        sorted = w->rf_rank[i] > w->rf_rank[i - 1] ||
                 (w->rf_rank[i] == w->rf_rank[i - 1] && w->rf_fn[i] > w->rf_fn[i - 1]);
    if (sorted)
        return z;
    fn_rf_t *tmp = malloc(n * sizeof *tmp);
    if (!tmp)
        return z;
    for (size_t i = 0; i < n; i++)
        tmp[i] = (fn_rf_t){w->rf_rank[i], w->rf_fn[i], w->rf_count[i], w->rf_ns[i], w->rf_bytes[i]};
    qsort(tmp, n, sizeof *tmp, fn_rf_cmp);
    for (size_t i = 0; i < n; i++) {
        w->rf_rank[i] = tmp[i].rank;
        w->rf_fn[i] = tmp[i].fn;
        w->rf_count[i] = tmp[i].count;
        w->rf_ns[i] = tmp[i].ns;
        w->rf_bytes[i] = tmp[i].bytes;
    }
    free(tmp);
    return z;
}

uint64_t mw_fnmap_window(const mw_fnmap_t *m, Mpiwatch__Window *w, mw_fnmap_keep_t *trace_block)
{
    uint64_t unknown = 0;
    size_t z;
    if (m->identity)
        return 0;
    w->n_functions = fn_stats(m, w->functions, w->n_functions, &unknown);
    if ((z = fn_column(m, w->occ_fn, w->n_occ_fn)) && w->n_occ_sub == w->n_occ_fn &&
        w->n_occ_ns == w->n_occ_fn) {
        fn_col_t cols[2] = {{w->occ_sub, 4}, {w->occ_ns, 8}};
        w->n_occ_fn = w->n_occ_sub = w->n_occ_ns = fn_compact(w->occ_fn, w->n_occ_fn, cols, 2);
        unknown += z;
    }
    size_t nd = w->n_density_fn;
    if ((z = fn_column(m, w->density_fn, nd)) && w->n_density_sub == nd && w->n_density_bin == nd &&
        w->n_density_end == nd && w->n_density_count == nd) {
        fn_col_t cols[4] = {
            {w->density_sub, 4}, {w->density_bin, 4}, {w->density_end, 4}, {w->density_count, 8}};
        nd = fn_compact(w->density_fn, nd, cols, 4);
        w->n_density_fn = w->n_density_sub = w->n_density_bin = w->n_density_end = nd;
        w->n_density_count = nd;
        unknown += z;
    }
    size_t k = 0;
    for (size_t i = 0; i < w->n_longest; i++) {
        if (w->longest[i] && (w->longest[i]->fn = fn_job_id(m, w->longest[i]->fn)) == 0) {
            unknown++;
            continue;
        }
        w->longest[k++] = w->longest[i];
    }
    w->n_longest = k;
    unknown += fn_rank_fn(m, w);
    size_t np = w->n_fpair_fn;
    if ((z = fn_column(m, w->fpair_fn, np)) && w->n_fpair_src == np && w->n_fpair_dst == np &&
        w->n_fpair_messages == np && w->n_fpair_bytes == np) {
        fn_col_t cols[4] = {
            {w->fpair_src, 4}, {w->fpair_dst, 4}, {w->fpair_messages, 8}, {w->fpair_bytes, 8}};
        np = fn_compact(w->fpair_fn, np, cols, 4);
        w->n_fpair_fn = w->n_fpair_src = w->n_fpair_dst = w->n_fpair_messages = np;
        w->n_fpair_bytes = np;
        unknown += z;
    }
    for (size_t i = 0; i < w->n_sites; i++)
        if (w->sites[i])
            w->sites[i]->fn = fn_job_id(m, w->sites[i]->fn);
    for (size_t i = 0; i < w->n_comms; i++)
        if (w->comms[i] && w->comms[i]->fn) {
            uint32_t id = fn_job_id(m, w->comms[i]->fn);
            w->comms[i]->fn = id < MW_FN_SPACE ? id : 0;
        }
    for (size_t i = 0; i < w->n_traces; i++)
        if (w->traces[i])
            fn_trace(m, w->traces[i]->trace, trace_block);
    return unknown;
}

uint64_t mw_fnmap_step(const mw_fnmap_t *m, Mpiwatch__Step *st)
{
    uint64_t unknown = 0;
    if (!m->identity)
        st->n_functions = fn_stats(m, st->functions, st->n_functions, &unknown);
    return unknown;
}

static uint32_t fn_or_none(const mw_fnmap_t *m, uint32_t fn)
{
    uint32_t id = fn ? fn_job_id(m, fn) : 0;
    return id < MW_FN_SPACE ? id : 0;
}

void mw_fnmap_lateness(const mw_fnmap_t *m, Mpiwatch__Lateness *l)
{
    if (m->identity)
        return;
    for (size_t i = 0; i < l->n_windows; i++)
        if (l->windows[i]) {
            l->windows[i]->lateness_fn = fn_or_none(m, l->windows[i]->lateness_fn);
            l->windows[i]->diff_fn = fn_or_none(m, l->windows[i]->diff_fn);
        }
    for (size_t i = 0; i < l->n_steps; i++)
        if (l->steps[i]) {
            l->steps[i]->lateness_fn = fn_or_none(m, l->steps[i]->lateness_fn);
            l->steps[i]->diff_fn = fn_or_none(m, l->steps[i]->diff_fn);
        }
}

uint64_t mw_fnmap_record(mw_fnmap_t *m, Mpiwatch__Record *rec, mw_fnmap_keep_t *trace_block,
                         char *err, size_t errlen)
{
    switch (rec->body_case) {
    case MPIWATCH__RECORD__BODY_JOB:
        if (rec->job) {
            mw_fnmap_free(m);
            if (mw_fnmap_job(m, rec->job, err, errlen) < 0)
                return UINT64_MAX;
        }
        return 0;
    case MPIWATCH__RECORD__BODY_WINDOW:
        return m->to_local && rec->window ? mw_fnmap_window(m, rec->window, trace_block) : 0;
    case MPIWATCH__RECORD__BODY_STEP:
        return m->to_local && rec->step ? mw_fnmap_step(m, rec->step) : 0;
    case MPIWATCH__RECORD__BODY_LATENESS:
        if (m->to_local && rec->lateness)
            mw_fnmap_lateness(m, rec->lateness);
        return 0;
    default:
        return 0;
    }
}
