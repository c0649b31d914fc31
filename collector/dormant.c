/* dormant.c: the dormant spans of a job's ranks (docs/shim.md "Dormant mode", docs/collector.md
 * "Loss accounting").
 *
 * DESIGN: a dormant library counts calls and bytes per function and nothing else, and sends
 * them as cumulative totals since MPI_Init in every sample and in its bye (proto Dormant), with
 * its dormant spans. Cumulative totals make the accounting exact whatever was lost on the way:
 * the newest totals a rank sent are all that is kept, and the job's figures move by the
 * difference with the previous ones. So the identity of the loss accounting extends to
 *     calls made at the ranks = calls in the summary + missed + dormant,
 * where dormant calls are counted, not lost. Per rank only the functions it called while
 * dormant are kept (a sorted list), allocated when the rank first reports some.
 */
#include "dormant.h"
#include "log.h"
#include "mw_json.h"

#include <cJSON.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Function ids beyond this build's table (proto/mw_proto.h), when the build has them. */
#ifndef MW_FN_SPACE
#define MW_FN_SPACE MW_FN_COUNT
#endif

typedef struct {
    uint32_t n;   /* entries in fn/calls/bytes */
    uint32_t *fn; /* increasing */
    uint64_t *calls, *bytes;
    uint64_t tot_calls, tot_bytes;
    uint32_t nspans;
    uint64_t folded;
    uint64_t span_start[MW_DORMANT_MAX_SPANS], span_end[MW_DORMANT_MAX_SPANS];
    uint64_t span_calls[MW_DORMANT_MAX_SPANS], span_bytes[MW_DORMANT_MAX_SPANS];
} rank_dormant_t;

struct mw_dormant {
    uint32_t size;
    rank_dormant_t **rank; /* [size], NULL for ranks never dormant */
    uint32_t ranks;
    uint64_t calls, bytes, bad;
    uint64_t fn_calls[MW_FN_SPACE], fn_bytes[MW_FN_SPACE];
};

/* Whether d is well formed: parallel arrays, known function ids in increasing order, spans
 * within the cap, each span's end after its start (0: open, only the last). */
static int dormant_ok(const Mpiwatch__Dormant *d)
{
    size_t n = d->n_fn;
    if (n > MW_FN_SPACE || d->n_calls != n || d->n_bytes != n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (d->fn[i] == 0 || d->fn[i] >= mw_fn_end() || (i && d->fn[i] <= d->fn[i - 1]))
            return 0;
    size_t s = d->n_span_start_ns;
    if (s > MW_DORMANT_MAX_SPANS || d->n_span_end_ns != s || d->n_span_calls != s ||
        d->n_span_bytes != s)
        return 0;
    for (size_t i = 0; i < s; i++)
        if ((d->span_end_ns[i] == 0 && i + 1 != s) ||
            (d->span_end_ns[i] && d->span_end_ns[i] < d->span_start_ns[i]))
            return 0;
    /* The rank's sums of calls and of bytes fit in 64 bits (the job's are checked on taking). */
    uint64_t tc = 0, tb = 0;
    for (size_t i = 0; i < n; i++)
        if (__builtin_add_overflow(tc, d->calls[i], &tc) ||
            __builtin_add_overflow(tb, d->bytes[i], &tb))
            return 0;
    return 1;
}

/* Whether every function of the rank's previous totals is still in d (both lists increase):
 * a function may not leave and come back from 0, which would count its calls twice. */
static int keeps_functions(const rank_dormant_t *r, const Mpiwatch__Dormant *d)
{
    size_t k = 0;
    for (uint32_t i = 0; i < r->n; i++) {
        while (k < d->n_fn && d->fn[k] < r->fn[i])
            k++;
        if (k == d->n_fn || d->fn[k] != r->fn[i])
            return 0;
    }
    return 1;
}

/* The rank's calls and bytes of function fn in its previous totals. */
static void rank_fn_prev(const rank_dormant_t *r, uint32_t fn, uint64_t *calls, uint64_t *bytes)
{
    *calls = *bytes = 0;
    uint32_t lo = 0, hi = r->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (r->fn[mid] < fn) {
            lo = mid + 1;
        } else if (r->fn[mid] > fn) {
            hi = mid;
        } else {
            *calls = r->calls[mid];
            *bytes = r->bytes[mid];
            return;
        }
    }
}

void mw__dormant_take(struct mw_dormant **state, uint32_t size, uint32_t rank,
                      const Mpiwatch__Dormant *d)
{
    if (!d || (!d->n_fn && !d->n_span_start_ns) || rank >= size)
        return;
    struct mw_dormant *j = *state;
    if (!j) {
        j = calloc(1, sizeof *j);
        if (!j)
            return;
        j->rank = calloc(size, sizeof *j->rank);
        if (!j->rank) {
            free(j);
            return;
        }
        j->size = size;
        *state = j;
    }
    if (!dormant_ok(d)) {
        j->bad++;
        return;
    }
    rank_dormant_t *r = j->rank[rank];
    if (!r) {
        r = calloc(1, sizeof *r);
        if (!r)
            return;
        j->rank[rank] = r;
        j->ranks++;
    }
    /* Totals never decrease: every function's must be at least what it was, none is gone,
     * and the job's sums do not wrap around. */
    uint64_t dc = 0, db = 0, sum;
    for (size_t i = 0; i < d->n_fn; i++) {
        uint64_t c, b;
        rank_fn_prev(r, d->fn[i], &c, &b);
        if (d->calls[i] < c || d->bytes[i] < b) {
            j->bad++;
            return;
        }
        dc += d->calls[i] - c; /* at most the rank's sum, checked by dormant_ok */
        db += d->bytes[i] - b;
    }
    if (!keeps_functions(r, d) || __builtin_add_overflow(j->calls, dc, &sum) ||
        __builtin_add_overflow(j->bytes, db, &sum)) {
        j->bad++;
        return;
    }
    if (d->n_fn > r->n) {
        uint32_t *fn = realloc(r->fn, d->n_fn * sizeof *fn);
        if (fn)
            r->fn = fn;
        uint64_t *calls = fn ? realloc(r->calls, d->n_fn * sizeof *calls) : NULL;
        if (calls)
            r->calls = calls;
        uint64_t *bytes = calls ? realloc(r->bytes, d->n_fn * sizeof *bytes) : NULL;
        if (!bytes)
            return; /* no memory: the next totals try again */
        r->bytes = bytes;
    }
    for (size_t i = 0; i < d->n_fn; i++) {
        uint64_t c, b;
        rank_fn_prev(r, d->fn[i], &c, &b);
        j->fn_calls[d->fn[i]] += d->calls[i] - c;
        j->fn_bytes[d->fn[i]] += d->bytes[i] - b;
        j->calls += d->calls[i] - c;
        j->bytes += d->bytes[i] - b;
    }
    /* rank_fn_prev reads the old list above: the new one is written only now. */
    uint64_t tc = 0, tb = 0;
    for (size_t i = 0; i < d->n_fn; i++) {
        r->fn[i] = d->fn[i];
        r->calls[i] = d->calls[i];
        r->bytes[i] = d->bytes[i];
        tc += d->calls[i];
        tb += d->bytes[i];
    }
    r->n = (uint32_t)d->n_fn;
    r->tot_calls = tc;
    r->tot_bytes = tb;
    r->nspans = (uint32_t)d->n_span_start_ns;
    r->folded = d->spans_folded;
    for (uint32_t i = 0; i < r->nspans; i++) {
        r->span_start[i] = d->span_start_ns[i];
        r->span_end[i] = d->span_end_ns[i];
        r->span_calls[i] = d->span_calls[i];
        r->span_bytes[i] = d->span_bytes[i];
    }
}

void mw__dormant_free(struct mw_dormant **state)
{
    struct mw_dormant *j = *state;
    if (!j)
        return;
    for (uint32_t i = 0; i < j->size; i++) {
        rank_dormant_t *r = j->rank[i];
        if (r) {
            free(r->fn);
            free(r->calls);
            free(r->bytes);
            free(r);
        }
    }
    free(j->rank);
    free(j);
    *state = NULL;
}

void mw__dormant_tally(const struct mw_dormant *j, mw_dormant_tally_t *out)
{
    memset(out, 0, sizeof *out);
    if (!j)
        return;
    out->ranks = j->ranks;
    out->calls = j->calls;
    out->bytes = j->bytes;
    out->bad = j->bad;
    for (uint32_t i = 0; i < j->size; i++)
        if (j->rank[i])
            out->spans += j->rank[i]->nspans + j->rank[i]->folded;
}

static int json_span(cJSON *arr, uint32_t rank, const rank_dormant_t *r, uint32_t i)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(arr, o)) {
        cJSON_Delete(o);
        return -1;
    }
    MW_TRY(mw_json_add_u64(o, "rank", rank));
    MW_TRY(mw_json_add_u64(o, "start_ns", r->span_start[i]));
    MW_TRY(mw_json_add_u64(o, "end_ns", r->span_end[i])); /* 0: dormant to the end */
    MW_TRY(mw_json_add_u64(o, "calls", r->span_calls[i]));
    return mw_json_add_u64(o, "bytes", r->span_bytes[i]);
}

int mw__dormant_json(const struct mw_dormant *j, cJSON *root)
{
    mw_dormant_tally_t t;
    mw__dormant_tally(j, &t);
    /* Only a job that had a dormant span (or refused dormant counts) gets the section: the
     * summary of every other job, and of every older recording's replay, stays as it was. */
    if (!t.ranks && !t.calls && !t.bad)
        return 0;
    cJSON *o = cJSON_AddObjectToObject(root, "dormant"), *fns, *spans;
    if (!o)
        return -1;
    MW_TRY(mw_json_add_u64(o, "ranks", t.ranks));
    MW_TRY(mw_json_add_u64(o, "calls", t.calls));
    MW_TRY(mw_json_add_u64(o, "bytes", t.bytes));
    MW_TRY(mw_json_add_u64(o, "bad", t.bad));
    if (!(fns = cJSON_AddObjectToObject(o, "functions")) ||
        !(spans = cJSON_AddArrayToObject(o, "spans")))
        return -1;
    uint64_t folded = 0;
    if (j) {
        for (unsigned fn = 1; fn < MW_FN_SPACE; fn++) {
            if (!j->fn_calls[fn] && !j->fn_bytes[fn])
                continue;
            cJSON *f = cJSON_AddObjectToObject(fns, mw_fn_name(fn));
            if (!f)
                return -1;
            MW_TRY(mw_json_add_u64(f, "count", j->fn_calls[fn]));
            MW_TRY(mw_json_add_u64(f, "bytes", j->fn_bytes[fn]));
        }
        for (uint32_t rank = 0; rank < j->size; rank++) {
            const rank_dormant_t *r = j->rank[rank];
            if (!r)
                continue;
            folded += r->folded;
            for (uint32_t i = 0; i < r->nspans; i++)
                MW_TRY(json_span(spans, rank, r, i));
        }
    }
    return mw_json_add_u64(o, "spans_folded", folded);
}

void mw__dormant_report(const struct mw_dormant *j, FILE *out)
{
    mw_dormant_tally_t t;
    mw__dormant_tally(j, &t);
    if (!t.ranks && !t.bad)
        return;
    fprintf(out,
            "  dormant (counted, not timed): %" PRIu64 " calls, %" PRIu64
            " bytes on %u ranks in %" PRIu64 " spans\n",
            t.calls, t.bytes, t.ranks, t.spans);
    if (t.bad)
        fprintf(out, "  dormant totals refused (malformed or decreasing): %" PRIu64 "\n", t.bad);
}
