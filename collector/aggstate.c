/* aggstate.c: aggregators' identity and accounting (AggState), both sides of a hop.
 *
 * DESIGN: an aggregator states cumulative figures only (what its ranks made, what it sent, what
 * it dropped or refused), so a lost or reordered AggState costs nothing: the next one carries
 * everything, and the parent keeps only the latest of each aggregator. What its ranks made is
 * the aggregator's own loss accounting (job.c mw__job_loss): the functions it merged plus what
 * it missed, per function, so that its ranks' totals, the ranks without totals (counted as
 * merged with nothing missed) and, in a deeper tree, its own aggregators' totals are all
 * covered by the same sum. What it sent is counted when the upstream code hands a partial to
 * ZeroMQ (mw__aggstate_sent).
 *
 * The parent checks an AggState completely before keeping anything (ingest.c's rule): the
 * aggregator's id, strings and function names as a hello's, parallel arrays, ids of its table,
 * each value capped, what it sent never above what its ranks made, and nothing ever decreasing
 * for one aggregator (per function, in this collector's ids: the aggregator's ids are stable in
 * its job, its table only grows, so its older ids translate with the map already kept). The map
 * of its ids (mw_fnmap_build) is rebuilt only when its table grew, as the last step, so a
 * refused AggState registers no extra.
 *
 * The job's accounting with aggregators (docs/collector.md, "Accounting through aggregators"):
 * at_ranks = the direct ranks' totals + each aggregator's latest totals; merged = what this
 * collector merged, direct samples and partials; missed = at_ranks - merged, split per
 * aggregator into the hop rank -> aggregator (totals - sent) and the hop aggregator -> here
 * (sent - merged from it). Mid-run, a partial can be merged here before the AggState that
 * counts it as sent (or its samples' totals) arrives; each stage then takes the larger of its
 * own figure and the next stage's, so the hops are never negative and always add up; once an
 * aggregator's final AggState has arrived after its last partial, every figure is its own.
 *
 * Storage: per aggregator a sorted sparse list of the functions it named (in this collector's
 * ids, 0 for names without an id here), so 4,096 aggregators of a few dozen functions each
 * cost kilobytes each, and a byte per rank of the job marking the ranks a partial listed.
 */
#include "aggstate.h"
#include "mw_json.h"
#include "mw_wire.h"
#include "partial.h"
#include "summary.h"

#include <cJSON.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { F_CALLS, F_NS, F_BYTES, F_N };

typedef struct {
    uint32_t fn;          /* this collector's id; 0: names without an id here */
    uint64_t tot[F_N];    /* its ranks' totals (latest AggState) */
    uint64_t sent[F_N];   /* what it sent (latest AggState) */
    uint64_t merged[F_N]; /* merged here from its partials */
    uint64_t adj[F_N];    /* its ranks' own totals in place of their shares (own_t.c) */
} agg_fn_t;

/* One entry of a rank's share in an aggregator's latest AggState, in this collector's ids. */
typedef struct {
    uint32_t fn;
    uint64_t v[F_N];
} share_t;

/* A rank known through an aggregator whose own running totals reached this collector: in its
 * samples sent here directly (it fell back to this collector) or in its bye. T: its latest
 * totals; D: what was merged here from its own samples; c: what its totals add to its
 * aggregator's figures over its share there (max(T - D, share) - share), applied to the
 * aggregator at position slot - 1. */
typedef struct {
    uint32_t fn;
    uint64_t T[F_N], D[F_N], c[F_N];
} own_fn_t;

typedef struct {
    uint32_t rank, slot, n, cap;
    int final; /* T came from its bye */
    own_fn_t *e;
    uint64_t T_samples, D_samples, c_samples;
} own_t;

typedef struct {
    uint32_t id, pid, ranks, ranks_done;
    char host[MW_MAX_STRING + 1];
    int final, has_map;
    char conn[112];  /* the connection of its first AggState (mw__aggstate_connection), or "" */
    uint64_t states; /* AggStates accepted */
    mw_fnmap_t map;
    uint32_t n_names;    /* its table: ids 1..n_names */
    uint64_t names_hash; /* mw_fn_names_hash of those names */
    agg_fn_t *fns;
    uint32_t n_fns, cap_fns;
    uint64_t samples_total, samples_sent, partials_sent, partials_dropped, rejected, late;
    uint64_t samples_merged, partials_merged; /* here */
    /* Its ranks' shares (latest AggState, when it listed them): ranks increasing, each rank's
     * entries at sh_e[sh_first[i], sh_first[i + 1]) in increasing id. */
    int shares;
    uint32_t n_sh, n_sh_e;
    uint32_t *sh_rank, *sh_first;
    uint64_t *sh_samples;
    share_t *sh_e;
    uint64_t adj_samples;
} agg_t;

struct mw_aggs {
    agg_t *agg; /* in order of first AggState */
    uint32_t n, cap;
    uint32_t slot[MW_MAX_AGGREGATORS]; /* id -> position + 1 in agg, 0 none */
    uint16_t *via; /* [via_n]: position + 1 of the aggregator whose partial last listed the rank */
    uint32_t via_n;
    own_t **own; /* [via_n]: ranks through an aggregator with their own totals here */
    uint32_t *own_list, n_own, cap_own;
    /* The aggregator side: what this process sent upstream in the job. */
    uint64_t sent[MW_FN_SPACE][F_N];
    uint64_t sent_samples, partials_sent, partials_dropped;
};

/* Largest value one AggState figure may claim: room for 512 such sums before a 64-bit total
 * could wrap (2^54 per rank and function is job.c's cap: a rank's total, not a sum). */
#define AGG_VALUE_MAX (1ull << 55)

static struct mw_aggs *aggs_get(mw_job_t *job)
{
    if (!job->aggs)
        job->aggs = calloc(1, sizeof *job->aggs);
    return job->aggs;
}

void mw__aggs_free(struct mw_aggs *a)
{
    if (!a)
        return;
    for (uint32_t i = 0; i < a->n; i++) {
        if (a->agg[i].has_map)
            mw_fnmap_free(&a->agg[i].map);
        free(a->agg[i].fns);
        free(a->agg[i].sh_rank);
        free(a->agg[i].sh_first);
        free(a->agg[i].sh_samples);
        free(a->agg[i].sh_e);
    }
    for (uint32_t i = 0; a->own && i < a->n_own; i++) {
        own_t *o = a->own[a->own_list[i]];
        if (o)
            free(o->e);
        free(o);
    }
    free(a->own);
    free(a->own_list);
    free(a->agg);
    free(a->via);
    free(a);
}

static agg_t *agg_find(const mw_job_t *job, uint32_t id)
{
    const struct mw_aggs *a = job->aggs;
    if (!a || id >= MW_MAX_AGGREGATORS || !a->slot[id])
        return NULL;
    return &a->agg[a->slot[id] - 1];
}

/* The entry of fn in g's list, created (zero) when absent and `create`; NULL otherwise or when
 * out of memory. */
static agg_fn_t *agg_fn(agg_t *g, uint32_t fn, int create)
{
    uint32_t lo = 0, hi = g->n_fns;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (g->fns[mid].fn < fn)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < g->n_fns && g->fns[lo].fn == fn)
        return &g->fns[lo];
    if (!create)
        return NULL;
    if (g->n_fns == g->cap_fns) {
        uint32_t cap = g->cap_fns ? g->cap_fns * 2 : 32;
        agg_fn_t *p = realloc(g->fns, cap * sizeof *p);
        if (!p)
            return NULL;
        g->fns = p;
        g->cap_fns = cap;
    }
    memmove(&g->fns[lo + 1], &g->fns[lo], (g->n_fns - lo) * sizeof *g->fns);
    g->n_fns++;
    memset(&g->fns[lo], 0, sizeof g->fns[lo]);
    g->fns[lo].fn = fn;
    return &g->fns[lo];
}

/* ---- ranks' own totals in place of their shares (parent side) -------------------------------- */

static int via_alloc(struct mw_aggs *a, uint32_t size)
{
    if (a->via)
        return 1;
    if (!size || !(a->via = calloc(size, sizeof *a->via)) ||
        !(a->own = calloc(size, sizeof *a->own))) {
        free(a->via);
        a->via = NULL;
        return 0;
    }
    a->via_n = size;
    return 1;
}

/* Rank's share entry of fn in g's latest AggState, or NULL (no share: counted as 0). */
static const share_t *share_find(const agg_t *g, uint32_t rank, uint32_t fn, uint64_t *samples)
{
    uint32_t lo = 0, hi = g->n_sh;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (g->sh_rank[mid] < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == g->n_sh || g->sh_rank[lo] != rank)
        return NULL;
    if (samples)
        *samples = g->sh_samples[lo];
    uint32_t b = g->sh_first[lo], e = g->sh_first[lo + 1];
    while (b < e) {
        uint32_t mid = b + (e - b) / 2;
        if (g->sh_e[mid].fn < fn)
            b = mid + 1;
        else
            e = mid;
    }
    return b < g->sh_first[lo + 1] && g->sh_e[b].fn == fn ? &g->sh_e[b] : NULL;
}

static uint64_t over_share(uint64_t T, uint64_t D, uint64_t share)
{
    uint64_t rest = T > D ? T - D : 0;
    return rest > share ? rest - share : 0;
}

/* Moves o's contribution to its aggregator's figures to what its totals and that aggregator's
 * latest shares give now (see DESIGN): the old one is taken back from the aggregator it was
 * added to, the new one added to the aggregator whose partial listed the rank last. */
static void own_update(struct mw_aggs *a, own_t *o)
{
    agg_t *old = o->slot ? &a->agg[o->slot - 1] : NULL;
    uint32_t slot = o->rank < a->via_n ? a->via[o->rank] : 0;
    agg_t *g = slot ? &a->agg[slot - 1] : NULL;
    if (old) {
        for (uint32_t i = 0; i < o->n; i++) {
            agg_fn_t *e = agg_fn(old, o->e[i].fn, 0);
            for (int k = 0; e && k < F_N; k++)
                e->adj[k] -= o->e[i].c[k];
        }
        old->adj_samples -= o->c_samples;
    }
    o->c_samples = 0;
    o->slot = 0;
    for (uint32_t i = 0; i < o->n; i++)
        memset(o->e[i].c, 0, sizeof o->e[i].c);
    if (!g || !g->shares)
        return; /* an aggregator that states no shares keeps its own figures */
    uint64_t sh_samples = 0;
    share_find(g, o->rank, 0, &sh_samples);
    for (uint32_t i = 0; i < o->n; i++) {
        own_fn_t *f = &o->e[i];
        agg_fn_t *e = agg_fn(g, f->fn, 1);
        if (!e)
            continue; /* out of memory: the aggregator's figure as stated */
        const share_t *sh = share_find(g, o->rank, f->fn, NULL);
        for (int k = 0; k < F_N; k++) {
            f->c[k] = over_share(f->T[k], f->D[k], sh ? sh->v[k] : 0);
            e->adj[k] += f->c[k];
        }
    }
    o->c_samples = over_share(o->T_samples, o->D_samples, sh_samples);
    g->adj_samples += o->c_samples;
    o->slot = slot;
}

/* Every rank with its own totals behind aggregator g, after g's shares changed; a rank whose
 * final totals g's share now covers (nothing merged here directly, nothing added) is forgotten,
 * so that the list stays as short as the ranks that fell back. */
static void own_refresh(struct mw_aggs *a, const agg_t *g)
{
    uint32_t slot = (uint32_t)(g - a->agg) + 1, keep = 0;
    for (uint32_t i = 0; i < a->n_own; i++) {
        uint32_t rank = a->own_list[i];
        own_t *o = a->own[rank];
        if (a->via[rank] == slot || o->slot == slot)
            own_update(a, o);
        int idle = o->final && o->slot && o->D_samples == 0 && o->c_samples == 0;
        for (uint32_t j = 0; idle && j < o->n; j++)
            idle = !(o->e[j].D[0] | o->e[j].D[1] | o->e[j].D[2] | o->e[j].c[0] | o->e[j].c[1] |
                     o->e[j].c[2]);
        if (idle) {
            free(o->e);
            free(o);
            a->own[rank] = NULL;
            continue;
        }
        a->own_list[keep++] = rank;
    }
    a->n_own = keep;
}

mw_reject_t mw__aggstate_own_check(const mw_job_t *job, uint32_t rank, size_t n, const uint32_t *fn,
                                   const uint64_t *calls, const uint64_t *ns, const uint64_t *bytes,
                                   uint64_t samples)
{
    const struct mw_aggs *a = job->aggs;
    if (n > MW_FN_SPACE - 1 || samples > MW_TOTAL_MAX)
        return MW_REJECT_TOTALS;
    for (size_t i = 0; i < n; i++)
        if (fn[i] == 0 || fn[i] >= MW_FN_SPACE || (i && fn[i] <= fn[i - 1]) || calls[i] == 0 ||
            calls[i] > MW_TOTAL_MAX || ns[i] > MW_TOTAL_MAX || bytes[i] > MW_TOTAL_MAX)
            return MW_REJECT_TOTALS;
    const own_t *o = a && a->own && rank < a->via_n ? a->own[rank] : NULL;
    if (!o)
        return MW_ACCEPTED;
    /* Never decreasing, no function lost (both lists in increasing id). */
    if (samples < o->T_samples)
        return MW_REJECT_TOTALS;
    size_t j = 0;
    for (uint32_t i = 0; i < o->n; i++) {
        while (j < n && fn[j] < o->e[i].fn)
            j++;
        if (j == n || fn[j] != o->e[i].fn || calls[j] < o->e[i].T[F_CALLS] ||
            ns[j] < o->e[i].T[F_NS] || bytes[j] < o->e[i].T[F_BYTES])
            return MW_REJECT_TOTALS;
    }
    return MW_ACCEPTED;
}

void mw__aggstate_own(mw_job_t *job, uint32_t rank, size_t n, const uint32_t *fn,
                      const uint64_t *calls, const uint64_t *ns, const uint64_t *bytes,
                      uint64_t samples, const Mpiwatch__Sample *merged, int final)
{
    struct mw_aggs *a = job->aggs;
    if (!a || !via_alloc(a, job->size) || rank >= a->via_n)
        return;
    own_t *o = a->own[rank];
    if (!o) {
        if (a->n_own == a->cap_own) {
            uint32_t cap = a->cap_own ? a->cap_own * 2 : 16;
            uint32_t *p = realloc(a->own_list, cap * sizeof *p);
            if (!p)
                return;
            a->own_list = p;
            a->cap_own = cap;
        }
        if (!(o = calloc(1, sizeof *o)))
            return;
        o->rank = rank;
        a->own[rank] = o;
        a->own_list[a->n_own++] = rank;
    }
    /* Its entries: one per function of its totals (the lists only grow: checked). */
    for (size_t i = 0; i < n; i++) {
        uint32_t lo = 0, hi = o->n;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (o->e[mid].fn < fn[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == o->n || o->e[lo].fn != fn[i]) {
            if (o->n == o->cap) {
                uint32_t cap = o->cap ? o->cap * 2 : 8;
                own_fn_t *p = realloc(o->e, cap * sizeof *p);
                if (!p)
                    continue; /* out of memory: this function keeps its share */
                o->e = p;
                o->cap = cap;
            }
            memmove(&o->e[lo + 1], &o->e[lo], (o->n - lo) * sizeof *o->e);
            memset(&o->e[lo], 0, sizeof o->e[lo]);
            o->e[lo].fn = fn[i];
            o->n++;
            /* Its contribution so far was 0 for this function: nothing to take back. */
        }
        o->e[lo].T[F_CALLS] = calls[i];
        o->e[lo].T[F_NS] = ns[i];
        o->e[lo].T[F_BYTES] = bytes[i];
    }
    o->T_samples = samples;
    o->final |= final;
    if (merged) {
        for (size_t i = 0; i < merged->n_functions; i++) {
            const Mpiwatch__FunctionStat *f = merged->functions[i];
            for (uint32_t j = 0; j < o->n; j++)
                if (o->e[j].fn == f->fn) {
                    o->e[j].D[F_CALLS] += f->count;
                    o->e[j].D[F_NS] += f->total_ns;
                    o->e[j].D[F_BYTES] += f->bytes;
                    break;
                }
        }
        o->D_samples++;
    }
    own_update(a, o);
}

/* ---- aggregator side ------------------------------------------------------------------------ */

static void aggstate_count(mw_collector_t *c, const mw_window_t *w, int sent)
{
    struct mw_aggs *a = aggs_get(&c->job);
    if (!a)
        return;
    /* A partial the socket could not take (or over the message limit) still left this
     * aggregator's merge: its calls count as sent, so the parent reports them missed on the
     * hop between this aggregator and itself, where they were lost. */
    if (sent)
        a->partials_sent++;
    else
        a->partials_dropped++;
    a->sent_samples += w->ranks_reporting;
    for (uint32_t i = 0; i < w->n_fn_used; i++) {
        uint32_t fn = w->fn_used[i];
        if (fn == 0 || fn >= MW_FN_SPACE)
            continue;
        a->sent[fn][F_CALLS] += w->fn[fn].s.count;
        a->sent[fn][F_NS] += w->fn[fn].s.total_ns;
        a->sent[fn][F_BYTES] += w->fn[fn].s.bytes;
    }
}

void mw__aggstate_sent(mw_collector_t *c, const mw_window_t *w)
{
    aggstate_count(c, w, 1);
}

void mw__aggstate_dropped(mw_collector_t *c, const mw_window_t *w)
{
    aggstate_count(c, w, 0);
}

static const char *self_host(void)
{
    static char host[MW_MAX_STRING + 1];
    if (!host[0] && gethostname(host, sizeof host - 1) != 0)
        host[0] = '\0';
    host[MW_MAX_STRING] = '\0';
    if (!mw_wire_text_ok((const unsigned char *)host, strlen(host)))
        host[0] = '\0';
    return host;
}

/* Scratch of the per-rank shares (grown, never freed: one aggregator's ranks). */
struct share_key {
    uint64_t key; /* rank << 32 | fn */
    uint32_t at;  /* its position in job.rank_fn */
};
static struct {
    struct share_key *keys;
    uint32_t *rank, *entries, *fn;
    uint64_t *samples, *calls, *ns, *bytes;
    size_t cap_keys, cap_ranks;
} sh;

static int cmp_key(const void *a, const void *b)
{
    uint64_t x = ((const struct share_key *)a)->key, y = ((const struct share_key *)b)->key;
    return x < y ? -1 : x > y;
}

static int grow(void **p, size_t n, size_t size)
{
    void *q = realloc(*p, n * size);
    if (!q)
        return -1;
    *p = q;
    return 0;
}

/* The per-rank shares of an AggState (docs/aggregator.md "Accounting"): every rank with running
 * totals, its latest totals per function (its mw_rank_fn_t entries), ranks and functions in
 * increasing order. Left out (s->shares false) when memory runs out or when they would not add
 * up to the totals stated (tcalls.. per listed function, n of them, ids increasing): the parent
 * then keeps the aggregator's figures as stated, without replacing any rank's share. */
static void shares_fill(const mw_job_t *job, Mpiwatch__AggState *s, const uint64_t *tcalls,
                        const uint64_t *tns, const uint64_t *tbytes, size_t n)
{
    static uint64_t sum[MW_FN_SPACE][3];
    size_t ne = 0, nr = 0;
    if (job->rank_fn.n > sh.cap_keys) {
        size_t cap = job->rank_fn.n * 2;
        if (grow((void **)&sh.keys, cap, sizeof *sh.keys) < 0 ||
            grow((void **)&sh.fn, cap, sizeof *sh.fn) < 0 ||
            grow((void **)&sh.calls, cap, sizeof *sh.calls) < 0 ||
            grow((void **)&sh.ns, cap, sizeof *sh.ns) < 0 ||
            grow((void **)&sh.bytes, cap, sizeof *sh.bytes) < 0)
            return;
        sh.cap_keys = cap;
    }
    for (uint32_t i = 0; i < job->rank_fn.n; i++) {
        const mw_rank_fn_t *rf = MW__INDEX_AT(&job->rank_fn, const mw_rank_fn_t, i);
        if (rf->tot_count == 0 || rf->rank >= job->size || !job->ranks[rf->rank].has_totals ||
            rf->fn == 0 || rf->fn >= MW_FN_SPACE)
            continue;
        sh.keys[ne].key = (uint64_t)rf->rank << 32 | rf->fn;
        sh.keys[ne++].at = i;
    }
    if (ne) /* no keys yet: qsort must not be given their NULL array */
        qsort(sh.keys, ne, sizeof *sh.keys, cmp_key);
    /* The ranks: one entry per distinct rank, in the keys' order. */
    size_t ranks = 0;
    for (size_t i = 0; i < ne; i++)
        ranks += !i || sh.keys[i].key >> 32 != sh.keys[i - 1].key >> 32;
    if (ranks > sh.cap_ranks) {
        size_t cap = ranks * 2;
        if (grow((void **)&sh.rank, cap, sizeof *sh.rank) < 0 ||
            grow((void **)&sh.entries, cap, sizeof *sh.entries) < 0 ||
            grow((void **)&sh.samples, cap, sizeof *sh.samples) < 0)
            return;
        sh.cap_ranks = cap;
    }
    memset(sum, 0, sizeof sum);
    const mw_rank_t *prev = NULL;
    size_t out = 0;
    for (size_t i = 0; i < ne; i++) {
        if (i && sh.keys[i].key == sh.keys[i - 1].key)
            continue; /* one entry per rank and function (the first) */
        uint32_t rank = (uint32_t)(sh.keys[i].key >> 32), fn = (uint32_t)sh.keys[i].key;
        const mw_rank_fn_t *rf = MW__INDEX_AT(&job->rank_fn, const mw_rank_fn_t, sh.keys[i].at);
        const mw_rank_t *r = &job->ranks[rank];
        if (r != prev) {
            sh.rank[nr] = rank;
            sh.entries[nr] = 0;
            sh.samples[nr] = r->tot_samples;
            nr++;
            prev = r;
        }
        sh.entries[nr - 1]++;
        sh.fn[out] = fn;
        sh.calls[out] = rf->tot_count;
        sh.ns[out] = rf->tot_time_ns;
        sh.bytes[out] = rf->tot_bytes;
        out++;
        sum[fn][0] += rf->tot_count;
        sum[fn][1] += rf->tot_time_ns;
        sum[fn][2] += rf->tot_bytes;
    }
    /* They must add up to no more than the totals stated (the parent checks it). */
    size_t j = 0;
    for (uint32_t fn = 1; fn < MW_FN_SPACE; fn++) {
        if (!sum[fn][0] && !sum[fn][1] && !sum[fn][2])
            continue;
        while (j < n && s->total_fn[j] < fn)
            j++;
        if (j == n || s->total_fn[j] != fn || sum[fn][0] > tcalls[j] || sum[fn][1] > tns[j] ||
            sum[fn][2] > tbytes[j])
            return;
    }
    uint64_t samples = 0;
    for (size_t i = 0; i < nr; i++)
        samples += sh.samples[i];
    if (samples > s->samples_total)
        return;
    s->shares = 1;
    s->n_share_rank = s->n_share_entries = s->n_share_samples = nr;
    s->share_rank = sh.rank;
    s->share_entries = sh.entries;
    s->share_samples = sh.samples;
    s->n_share_fn = s->n_share_calls = s->n_share_ns = s->n_share_bytes = out;
    s->share_fn = sh.fn;
    s->share_calls = sh.calls;
    s->share_ns = sh.ns;
    s->share_bytes = sh.bytes;
}

size_t mw__aggstate_envelope_pack(mw_collector_t *c, mw_pb_encoder_t *e, uint32_t agg_id,
                                  uint64_t seq, int final)
{
    /* Static scratch: the collector's core runs on one thread. */
    static char *names[MW_FN_SPACE];
    static uint32_t kinds[MW_FN_SPACE], tfn[MW_FN_SPACE];
    static uint64_t tcalls[MW_FN_SPACE], tns[MW_FN_SPACE], tbytes[MW_FN_SPACE];
    static uint64_t scalls[MW_FN_SPACE], sns[MW_FN_SPACE], sbytes[MW_FN_SPACE];
    static mw_tally_t missed[MW_FN_SPACE];
    const mw_job_t *job = &c->job;
    const struct mw_aggs *a = job->aggs;

    Mpiwatch__AggState s = MPIWATCH__AGG_STATE__INIT;
    s.id = agg_id;
    s.host = (char *)self_host();
    s.pid = (uint32_t)getpid();
    uint32_t n_fn = mw_fn_end() - 1u;
    for (uint32_t id = 1; id <= n_fn; id++) {
        names[id - 1] = (char *)mw_fn_name(id);
        kinds[id - 1] = (uint32_t)mw_fn_kind(id);
    }
    s.n_function_names = s.n_function_kinds = n_fn;
    s.function_names = names;
    s.function_kinds = kinds;
    s.ranks = job->hellos;
    s.ranks_done = job->byes + job->dead > job->hellos ? job->hellos : job->byes + job->dead;

    /* What the ranks made, per function: merged + missed (the job's own accounting). */
    mw_loss_t loss;
    mw__job_loss(job, &loss, missed);
    size_t n = 0;
    for (uint32_t fn = 1; fn <= n_fn && fn < MW_FN_SPACE; fn++) {
        uint64_t calls = job->fn[fn].count + missed[fn].calls;
        uint64_t ns = job->fn[fn].total_ns + missed[fn].time_ns;
        uint64_t bytes = job->fn[fn].bytes + missed[fn].bytes;
        const uint64_t *sent = a ? a->sent[fn] : NULL;
        if (!calls && !ns && !bytes && !(sent && (sent[0] | sent[1] | sent[2])))
            continue;
        tfn[n] = fn;
        tcalls[n] = calls;
        tns[n] = ns;
        tbytes[n] = bytes;
        /* What was sent is part of what was merged: never above the totals (a parent refuses
         * that); the minimum only guards against a counting slip here. */
        scalls[n] = sent && sent[F_CALLS] < calls ? sent[F_CALLS] : sent ? calls : 0;
        sns[n] = sent && sent[F_NS] < ns ? sent[F_NS] : sent ? ns : 0;
        sbytes[n] = sent && sent[F_BYTES] < bytes ? sent[F_BYTES] : sent ? bytes : 0;
        n++;
    }
    s.n_total_fn = s.n_total_calls = s.n_total_ns = s.n_total_bytes = n;
    s.n_sent_calls = s.n_sent_ns = s.n_sent_bytes = n;
    s.total_fn = tfn;
    s.total_calls = tcalls;
    s.total_ns = tns;
    s.total_bytes = tbytes;
    s.sent_calls = scalls;
    s.sent_ns = sns;
    s.sent_bytes = sbytes;
    s.samples_total = loss.at_ranks.samples;
    s.samples_merged = a ? a->sent_samples : 0;
    if (s.samples_merged > s.samples_total)
        s.samples_merged = s.samples_total;
    s.partials_sent = a ? a->partials_sent : 0;
    s.partials_dropped = a ? a->partials_dropped : 0;
    for (int r = 0; r < MW_REJECT_COUNT; r++)
        s.rejected += c->stats.rejected[r];
    s.late = job->late;
    s.final = final ? 1 : 0;
    shares_fill(job, &s, tcalls, tns, tbytes, n);

    Mpiwatch__Envelope env = MPIWATCH__ENVELOPE__INIT;
    env.version = MW_PROTO_VERSION;
    env.job = (char *)job->job;
    env.rank = agg_id;
    env.seq = seq;
    env.body_case = MPIWATCH__ENVELOPE__BODY_AGG;
    env.agg = &s;
    size_t len = mpiwatch__envelope__get_packed_size(&env);
    if (len > MW_MAX_MESSAGE_BYTES / 2 && s.shares) {
        /* The shares would take it near the message limit (a parent drops a larger message
         * and the connection with it): without them, the parent keeps the figures as stated. */
        static uint64_t n_left_out;
        if (n_left_out++ % 100 == 0)
            MW_LOG(MW_LOG_WARN,
                   "AggState of %zu bytes: its ranks' shares left out (%" PRIu64 " times)", len,
                   n_left_out);
        s.shares = 0;
        s.n_share_rank = s.n_share_entries = s.n_share_samples = 0;
        s.n_share_fn = s.n_share_calls = s.n_share_ns = s.n_share_bytes = 0;
        len = mpiwatch__envelope__get_packed_size(&env);
    }
    if (len > e->cap_out) {
        uint8_t *p = realloc(e->out, len);
        if (!p)
            return 0;
        e->out = p;
        e->cap_out = len;
    }
    return mpiwatch__envelope__pack(&env, e->out);
}

/* ---- parent side ---------------------------------------------------------------------------- */

/* The connection of the frame being handled, or NULL (collector.h frame_peer). */
static const char *frame_conn(const mw_collector_t *c, char *buf, size_t cap)
{
    return c->frame_peer && c->frame_msg ? c->frame_peer(c->frame_msg, buf, cap) : NULL;
}

/* Whether a message of aggregator g came on another connection than its first AggState
 * (logged: the first time, then every 1000th). Unknown on either side: not told apart. */
static int conn_differs(const mw_collector_t *c, const agg_t *g, const char *peer, const char *what)
{
    static uint64_t n;
    (void)c;
    if (!g->conn[0] || !peer || strcmp(peer, g->conn) == 0)
        return 0;
    if (n++ % 1000 == 0)
        MW_LOG(MW_LOG_WARN,
               "%s of aggregator %u from %s refused: its first AggState came from %s (%" PRIu64
               " so refused)",
               what, g->id, peer, g->conn, n);
    return 1;
}

mw_reject_t mw__aggstate_connection(mw_collector_t *c, uint32_t id)
{
    const agg_t *g = agg_find(&c->job, id);
    char buf[sizeof g->conn];
    if (!g || !g->conn[0])
        return MW_ACCEPTED;
    return conn_differs(c, g, frame_conn(c, buf, sizeof buf), "partial") ? MW_REJECT_CONNECTION
                                                                         : MW_ACCEPTED;
}

const mw_fnmap_t *mw__aggstate_fnmap(const mw_collector_t *c, uint32_t id)
{
    const agg_t *g = agg_find(&c->job, id);
    return g && g->has_map ? &g->map : NULL;
}

void mw__aggstate_merged(mw_collector_t *c, uint32_t id, const Mpiwatch__Partial *p)
{
    agg_t *g = agg_find(&c->job, id);
    struct mw_aggs *a = c->job.aggs;
    if (!g || !p)
        return;
    g->partials_merged++;
    const Mpiwatch__Window *w = p->window;
    for (size_t i = 0; w && i < w->n_functions; i++) {
        const Mpiwatch__FunctionStat *f = w->functions[i];
        if (!f || f->fn == 0 || f->fn >= MW_FN_SPACE)
            continue;
        agg_fn_t *e = agg_fn(g, f->fn, 1);
        if (!e)
            continue; /* out of memory: shows as missed, never as more than made */
        e->merged[F_CALLS] += f->count;
        e->merged[F_NS] += f->total_ns;
        e->merged[F_BYTES] += f->bytes;
    }
    /* Its samples, one per listed rank (as partial.c counts them in job.samples), and its
     * ranks as served through an aggregator (mw__aggstate_forwarded). */
    uint32_t size = c->job.size;
    size_t nr = p->n_rank_first < p->n_rank_count ? p->n_rank_first : p->n_rank_count;
    for (size_t i = 0; i < nr; i++)
        g->samples_merged += p->rank_count[i];
    if (!via_alloc(a, size))
        return;
    uint16_t slot = (uint16_t)a->slot[id];
    for (size_t i = 0; i < nr; i++)
        for (uint64_t r = p->rank_first[i];
             r < (uint64_t)p->rank_first[i] + p->rank_count[i] && r < size; r++) {
            if (a->via[r] != slot && a->own[r]) {
                a->via[r] = slot;
                own_update(c->job.aggs, a->own[r]); /* its totals move to this aggregator */
            }
            a->via[r] = slot;
        }
}

int mw__aggstate_via(const mw_job_t *job, uint32_t rank)
{
    const struct mw_aggs *a = job->aggs;
    return a && rank < a->via_n && a->via[rank];
}

int mw__aggstate_forwarded(const mw_job_t *job, uint32_t rank)
{
    const struct mw_aggs *a = job->aggs;
    if (!a || a->n == 0 || rank >= job->size)
        return 0;
    if (rank < a->via_n && a->via[rank])
        return 1;
    const mw_rank_t *r = &job->ranks[rank];
    return r->samples == 0 && !r->has_totals;
}

static int text_ok(const char *s)
{
    s = s ? s : "";
    size_t n = strnlen(s, MW_MAX_STRING + 1);
    return n <= MW_MAX_STRING && mw_wire_text_ok((const unsigned char *)s, n);
}

/* The figures of one AggState entry or stored entry, dense by this collector's id. */
typedef struct {
    uint64_t tot[F_N], sent[F_N];
} agg_dense_t;

/* The shares of an AggState (docs/aggregator.md "Accounting"): parallel arrays, ranks of the
 * job in increasing order, each rank's entries ids of its table (n_ids) in increasing order,
 * values capped, and per function (and for the samples) no more than the totals stated, so that
 * taking a rank's share out of them never goes below zero. */
static mw_reject_t shares_check(const mw_job_t *job, const Mpiwatch__AggState *s, uint32_t n_ids)
{
    static uint64_t left[MW_FN_TABLE_MAX + 1][F_N];
    size_t nr = s->n_share_rank, ne = s->n_share_fn;
    if (!s->shares)
        return nr || ne || s->n_share_entries || s->n_share_samples || s->n_share_calls ||
                       s->n_share_ns || s->n_share_bytes
                   ? MW_REJECT_TOTALS
                   : MW_ACCEPTED;
    if (s->n_share_entries != nr || s->n_share_samples != nr || s->n_share_calls != ne ||
        s->n_share_ns != ne || s->n_share_bytes != ne || nr > job->size || n_ids > MW_FN_TABLE_MAX)
        return MW_REJECT_TOTALS;
    memset(left, 0, (n_ids + 1) * sizeof left[0]);
    for (size_t i = 0; i < s->n_total_fn; i++) { /* ids checked within n_ids by the caller */
        left[s->total_fn[i]][F_CALLS] = s->total_calls[i];
        left[s->total_fn[i]][F_NS] = s->total_ns[i];
        left[s->total_fn[i]][F_BYTES] = s->total_bytes[i];
    }
    uint64_t samples_left = s->samples_total;
    size_t at = 0;
    for (size_t r = 0; r < nr; r++) {
        if (s->share_rank[r] >= job->size || (r && s->share_rank[r] <= s->share_rank[r - 1]) ||
            s->share_entries[r] == 0 || s->share_entries[r] > n_ids ||
            s->share_entries[r] > ne - at || s->share_samples[r] > samples_left)
            return MW_REJECT_TOTALS;
        samples_left -= s->share_samples[r];
        for (size_t i = at; i < at + s->share_entries[r]; i++) {
            uint32_t fn = s->share_fn[i];
            if (fn == 0 || fn > n_ids || (i > at && fn <= s->share_fn[i - 1]) ||
                s->share_calls[i] > left[fn][F_CALLS] || s->share_ns[i] > left[fn][F_NS] ||
                s->share_bytes[i] > left[fn][F_BYTES])
                return MW_REJECT_TOTALS;
            left[fn][F_CALLS] -= s->share_calls[i];
            left[fn][F_NS] -= s->share_ns[i];
            left[fn][F_BYTES] -= s->share_bytes[i];
        }
        at += s->share_entries[r];
    }
    return at == ne ? MW_ACCEPTED : MW_REJECT_TOTALS;
}

static int cmp_share(const void *x, const void *y)
{
    uint32_t a = ((const share_t *)x)->fn, b = ((const share_t *)y)->fn;
    return a < b ? -1 : a > b;
}

/* Keeps a checked AggState's shares as g's latest, in this collector's ids (entries of names
 * without an id here are left out: no rank's own totals name them), then moves the ranks with
 * their own totals behind g to those shares. Out of memory: g states no shares. */
static void shares_keep(struct mw_aggs *a, agg_t *g, const Mpiwatch__AggState *s)
{
    size_t nr = s->shares ? s->n_share_rank : 0, ne = s->shares ? s->n_share_fn : 0;
    g->shares = 0;
    g->n_sh = g->n_sh_e = 0;
    if (s->shares) {
        uint32_t *rank = realloc(g->sh_rank, (nr + 1) * sizeof *rank);
        if (rank)
            g->sh_rank = rank;
        uint32_t *first = realloc(g->sh_first, (nr + 1) * sizeof *first);
        if (first)
            g->sh_first = first;
        uint64_t *samples = realloc(g->sh_samples, (nr + 1) * sizeof *samples);
        if (samples)
            g->sh_samples = samples;
        share_t *e = realloc(g->sh_e, (ne + 1) * sizeof *e);
        if (e)
            g->sh_e = e;
        if (rank && first && samples && e) {
            size_t at = 0, out = 0;
            for (size_t r = 0; r < nr; r++) {
                g->sh_rank[r] = s->share_rank[r];
                g->sh_samples[r] = s->share_samples[r];
                g->sh_first[r] = (uint32_t)out;
                size_t b = out;
                for (size_t i = at; i < at + s->share_entries[r]; i++) {
                    unsigned fn = mw_fnmap_get(&g->map, s->share_fn[i]);
                    if (fn == 0 || fn >= MW_FN_SPACE)
                        continue;
                    g->sh_e[out].fn = fn;
                    g->sh_e[out].v[F_CALLS] = s->share_calls[i];
                    g->sh_e[out].v[F_NS] = s->share_ns[i];
                    g->sh_e[out].v[F_BYTES] = s->share_bytes[i];
                    out++;
                }
                /* Its ids in this collector's order: the map need not keep the order. */
                qsort(&g->sh_e[b], out - b, sizeof *g->sh_e, cmp_share);
                at += s->share_entries[r];
            }
            g->sh_first[nr] = (uint32_t)out;
            g->n_sh = (uint32_t)nr;
            g->n_sh_e = (uint32_t)out;
            g->shares = 1;
        }
    }
    if (a->n_own)
        own_refresh(a, g);
}

mw_reject_t mw__aggstate_ingest(mw_collector_t *c, const Mpiwatch__Envelope *env,
                                const mw_clock_t *now)
{
    static agg_dense_t cur[MW_FN_SPACE]; /* scratch: the collector's core runs on one thread */
    const Mpiwatch__AggState *s = env->agg;
    mw_job_t *job = &c->job;
    (void)now;
    if (!s)
        return MW_REJECT_NO_BODY;
    /* Its job: the one open here (or just ended: a final AggState comes after the last bye). */
    if (!job->active)
        return MW_REJECT_NO_HELLO;
    if (strcmp(env->job ? env->job : "", job->job) != 0)
        return MW_REJECT_JOB_MISMATCH;
    if (s->id >= MW_MAX_AGGREGATORS || env->rank != s->id)
        return MW_REJECT_RANK_RANGE;
    if (!text_ok(s->host))
        return MW_REJECT_BAD_FIELD;
    agg_t *g = agg_find(job, s->id);
    if (!g && job->aggs && job->aggs->n >= MW_MAX_AGGREGATORS)
        return MW_REJECT_RANK_RANGE;
    if (g && (g->pid != s->pid || strcmp(g->host, s->host ? s->host : "") != 0))
        return MW_REJECT_DUPLICATE_HELLO; /* another process claims this id */
    char peer_buf[sizeof g->conn];
    const char *peer = frame_conn(c, peer_buf, sizeof peer_buf);
    if (g && conn_differs(c, g, peer, "AggState"))
        return MW_REJECT_CONNECTION;

    /* Its function table: names as a hello's (capped, each a function name, kinds in range),
     * growing only (its older ids keep their names). */
    size_t nn = s->n_function_names;
    if (nn > MW_FN_TABLE_MAX || (s->n_function_kinds && s->n_function_kinds != nn))
        return MW_REJECT_TABLE_MISMATCH;
    if (nn == 0 && !(g && g->has_map))
        return MW_REJECT_TABLE_MISMATCH; /* nothing to read its ids with */
    for (size_t i = 0; i < nn; i++)
        if (!mw_fn_name_ok(s->function_names[i]) ||
            (s->n_function_kinds && s->function_kinds[i] >= MW_KIND_COUNT))
            return MW_REJECT_TABLE_MISMATCH;
    int grew = !(g && g->has_map);
    if (g && g->has_map && nn) {
        if (nn < g->n_names ||
            mw_fn_names_hash((const char *const *)s->function_names, g->n_names) != g->names_hash)
            return MW_REJECT_TABLE_MISMATCH;
        grew = nn > g->n_names;
    }
    uint32_t n_ids = nn ? (uint32_t)nn : g->n_names;

    /* The figures: ranks within the job, parallel arrays, ids of its table in increasing order,
     * values capped, sent within made. */
    if (s->ranks > job->size || s->ranks_done > s->ranks)
        return MW_REJECT_BAD_FIELD;
    size_t n = s->n_total_fn;
    if (s->n_total_calls != n || s->n_total_ns != n || s->n_total_bytes != n)
        return MW_REJECT_TOTALS;
    int has_sent = s->n_sent_calls || s->n_sent_ns || s->n_sent_bytes;
    if (has_sent && (s->n_sent_calls != n || s->n_sent_ns != n || s->n_sent_bytes != n))
        return MW_REJECT_TOTALS;
    if (s->samples_total > AGG_VALUE_MAX || s->samples_merged > s->samples_total ||
        s->partials_sent > AGG_VALUE_MAX || s->partials_dropped > AGG_VALUE_MAX ||
        s->rejected > AGG_VALUE_MAX || s->late > AGG_VALUE_MAX)
        return MW_REJECT_TOTALS;
    for (size_t i = 0; i < n; i++) {
        if (s->total_fn[i] == 0 || s->total_fn[i] > n_ids ||
            (i && s->total_fn[i] <= s->total_fn[i - 1]))
            return MW_REJECT_TOTALS;
        if (s->total_calls[i] > AGG_VALUE_MAX || s->total_ns[i] > AGG_VALUE_MAX ||
            s->total_bytes[i] > AGG_VALUE_MAX)
            return MW_REJECT_TOTALS;
        if (has_sent && (s->sent_calls[i] > s->total_calls[i] || s->sent_ns[i] > s->total_ns[i] ||
                         s->sent_bytes[i] > s->total_bytes[i]))
            return MW_REJECT_TOTALS;
    }
    if (shares_check(job, s, n_ids) != MW_ACCEPTED)
        return MW_REJECT_TOTALS;

    /* Nothing decreases for one aggregator: its counters, and per function (in this
     * collector's ids, through the map already kept: ids past its older table are new
     * functions, with nothing before them) what its ranks made and what it sent. */
    if (g) {
        if (s->ranks < g->ranks || s->ranks_done < g->ranks_done ||
            s->samples_total < g->samples_total || s->samples_merged < g->samples_sent ||
            s->partials_sent < g->partials_sent || s->partials_dropped < g->partials_dropped ||
            s->rejected < g->rejected || s->late < g->late || (g->final && !s->final))
            return MW_REJECT_TOTALS;
        memset(cur, 0, sizeof cur);
        for (size_t i = 0; i < n; i++) {
            if (s->total_fn[i] > g->n_names)
                continue;
            unsigned fn = mw_fnmap_get(&g->map, s->total_fn[i]);
            if (fn >= MW_FN_SPACE)
                fn = 0;
            uint64_t v[2][F_N] = {{s->total_calls[i], s->total_ns[i], s->total_bytes[i]},
                                  {has_sent ? s->sent_calls[i] : 0, has_sent ? s->sent_ns[i] : 0,
                                   has_sent ? s->sent_bytes[i] : 0}};
            for (int k = 0; k < F_N; k++) {
                cur[fn].tot[k] += v[0][k];
                cur[fn].sent[k] += v[1][k];
            }
        }
        for (uint32_t i = 0; i < g->n_fns; i++) {
            const agg_fn_t *e = &g->fns[i];
            for (int k = 0; k < F_N; k++)
                if (cur[e->fn].tot[k] < e->tot[k] || cur[e->fn].sent[k] < e->sent[k])
                    return MW_REJECT_TOTALS;
        }
    }

    /* Everything checked: its map (only when its table is new or grew), then the figures. */
    mw_fnmap_t map;
    if (grew) {
        char err[256];
        if (mw_fnmap_build(&map, (const char *const *)s->function_names, nn, s->function_kinds,
                           s->n_function_kinds, err, sizeof err) < 0) {
            MW_LOG(MW_LOG_WARN, "aggregator %u refused: %s", s->id, err);
            return MW_REJECT_TABLE_MISMATCH;
        }
    }
    struct mw_aggs *a = aggs_get(job);
    if (!a) {
        if (grew)
            mw_fnmap_free(&map);
        return MW_REJECT_RANK_RANGE; /* out of memory */
    }
    if (!g) {
        if (a->n == a->cap) {
            uint32_t cap = a->cap ? a->cap * 2 : 8;
            agg_t *p = realloc(a->agg, cap * sizeof *p);
            if (!p) {
                if (grew)
                    mw_fnmap_free(&map);
                return MW_REJECT_RANK_RANGE;
            }
            a->agg = p;
            a->cap = cap;
        }
        g = &a->agg[a->n];
        memset(g, 0, sizeof *g);
        g->id = s->id;
        g->pid = s->pid;
        size_t hl = strnlen(s->host ? s->host : "", MW_MAX_STRING);
        memcpy(g->host, s->host ? s->host : "", hl);
        g->host[hl] = '\0';
        if (peer)
            snprintf(g->conn, sizeof g->conn, "%s", peer);
        a->slot[s->id] = ++a->n;
        MW_LOG(MW_LOG_INFO, "aggregator %u (%s pid %u) joined the job: %u ranks", s->id, g->host,
               s->pid, s->ranks);
    }
    if (grew) {
        if (g->has_map)
            mw_fnmap_free(&g->map);
        g->map = map;
        g->has_map = 1;
        g->n_names = (uint32_t)nn;
        g->names_hash = mw_fn_names_hash((const char *const *)s->function_names, nn);
        if (map.unknown)
            MW_LOG(MW_LOG_WARN,
                   "%u function names of aggregator %u have no id here: their calls are counted "
                   "as missed",
                   map.unknown, s->id);
    }
    /* The latest figures replace the previous ones; what was merged here stays. */
    for (uint32_t i = 0; i < g->n_fns; i++) {
        memset(g->fns[i].tot, 0, sizeof g->fns[i].tot);
        memset(g->fns[i].sent, 0, sizeof g->fns[i].sent);
    }
    for (size_t i = 0; i < n; i++) {
        unsigned fn = mw_fnmap_get(&g->map, s->total_fn[i]);
        agg_fn_t *e = agg_fn(g, fn < MW_FN_SPACE ? fn : 0, 1);
        if (!e)
            continue; /* out of memory: these figures stay as before */
        e->tot[F_CALLS] += s->total_calls[i];
        e->tot[F_NS] += s->total_ns[i];
        e->tot[F_BYTES] += s->total_bytes[i];
        if (has_sent) {
            e->sent[F_CALLS] += s->sent_calls[i];
            e->sent[F_NS] += s->sent_ns[i];
            e->sent[F_BYTES] += s->sent_bytes[i];
        }
    }
    g->ranks = s->ranks;
    g->ranks_done = s->ranks_done;
    g->samples_total = s->samples_total;
    g->samples_sent = s->samples_merged;
    g->partials_sent = s->partials_sent;
    g->partials_dropped = s->partials_dropped;
    g->rejected = s->rejected;
    g->late = s->late;
    g->final = s->final;
    g->states++;
    shares_keep(a, g, s);
    return MW_ACCEPTED;
}

/* ---- accounting ----------------------------------------------------------------------------- */

int mw__aggs_final(const mw_job_t *job)
{
    const struct mw_aggs *a = job->aggs;
    for (uint32_t i = 0; a && i < a->n; i++)
        if (!a->agg[i].final)
            return 0;
    return 1;
}

uint32_t mw__aggs_count(const mw_job_t *job)
{
    return job->aggs ? job->aggs->n : 0;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/* One figure through the two hops: merged here <= sent <= made, each stage at least the next
 * one's (see DESIGN). */
static void hops(uint64_t made, uint64_t sent, uint64_t merged, uint64_t *at, uint64_t *out_sent,
                 uint64_t *to_agg, uint64_t *to_parent)
{
    uint64_t s = max64(sent, merged), m = max64(made, s);
    *at = m;
    *out_sent = s;
    *to_agg = m - s;
    *to_parent = s - merged;
}

static void tally_add(mw_tally_t *t, int k, uint64_t v)
{
    if (k == F_CALLS)
        t->calls += v;
    else if (k == F_NS)
        t->time_ns += v;
    else
        t->bytes += v;
}

void mw__aggs_figures(const mw_job_t *job, uint32_t i, mw_agg_figures_t *o)
{
    memset(o, 0, sizeof *o);
    const struct mw_aggs *a = job->aggs;
    if (!a || i >= a->n)
        return;
    const agg_t *g = &a->agg[i];
    o->id = g->id;
    o->pid = g->pid;
    o->host = g->host;
    o->ranks = g->ranks;
    o->ranks_done = g->ranks_done;
    o->final = g->final;
    o->partials_sent = g->partials_sent;
    o->partials_dropped = g->partials_dropped;
    o->partials_merged = g->partials_merged;
    o->rejected = g->rejected;
    o->late = g->late;
    o->states = g->states;
    for (uint32_t j = 0; j < g->n_fns; j++) {
        const agg_fn_t *e = &g->fns[j];
        for (int k = 0; k < F_N; k++) {
            uint64_t at, sent, h1, h2;
            hops(e->tot[k] + e->adj[k], e->sent[k], e->merged[k], &at, &sent, &h1, &h2);
            tally_add(&o->at_ranks, k, at);
            tally_add(&o->sent, k, sent);
            tally_add(&o->merged, k, e->merged[k]);
            tally_add(&o->to_agg, k, h1);
            tally_add(&o->to_parent, k, h2);
        }
    }
    hops(g->samples_total + g->adj_samples, g->samples_sent, g->samples_merged,
         &o->at_ranks.samples, &o->sent.samples, &o->to_agg.samples, &o->to_parent.samples);
    o->merged.samples = g->samples_merged;
}

static void tally_sum(mw_tally_t *t, const mw_tally_t *v)
{
    if (!t)
        return;
    t->calls += v->calls;
    t->time_ns += v->time_ns;
    t->bytes += v->bytes;
    t->samples += v->samples;
}

void mw__aggs_totals(const mw_job_t *job, mw_tally_t *at_ranks, mw_tally_t *merged,
                     mw_tally_t *to_agg, mw_tally_t *to_parent, mw_tally_t *per_fn)
{
    uint32_t n = mw__aggs_count(job);
    for (uint32_t i = 0; i < n; i++) {
        mw_agg_figures_t f;
        mw__aggs_figures(job, i, &f);
        tally_sum(at_ranks, &f.at_ranks);
        tally_sum(merged, &f.merged);
        tally_sum(to_agg, &f.to_agg);
        tally_sum(to_parent, &f.to_parent);
        if (!per_fn)
            continue;
        const agg_t *g = &job->aggs->agg[i];
        for (uint32_t j = 0; j < g->n_fns; j++) {
            const agg_fn_t *e = &g->fns[j];
            for (int k = 0; k < F_N; k++) {
                uint64_t at, sent, h1, h2;
                hops(e->tot[k] + e->adj[k], e->sent[k], e->merged[k], &at, &sent, &h1, &h2);
                tally_add(&per_fn[e->fn], k, h1 + h2);
            }
        }
    }
}

/* ---- outputs -------------------------------------------------------------------------------- */

int mw__aggs_missed_json(const mw_loss_t *loss, cJSON *missed)
{
    if (!loss->aggregators)
        return 0;
    return mw__json_tally(missed, "ranks_to_aggregators", &loss->missed_to_aggs) &&
                   mw__json_tally(missed, "aggregators_to_collector", &loss->missed_from_aggs)
               ? 0
               : -1;
}

int mw__aggs_json(const mw_job_t *job, cJSON *obj)
{
    uint32_t n = mw__aggs_count(job);
    if (!n)
        return 0;
    cJSON *arr = cJSON_AddArrayToObject(obj, "aggregators");
    if (!arr)
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        mw_agg_figures_t f;
        mw__aggs_figures(job, i, &f);
        mw_tally_t missed = f.to_agg;
        tally_sum(&missed, &f.to_parent);
        cJSON *o = cJSON_CreateObject(), *m;
        if (!o || !cJSON_AddItemToArray(arr, o)) {
            cJSON_Delete(o);
            return -1;
        }
        if (mw_json_add_u64(o, "id", f.id) < 0 || !cJSON_AddStringToObject(o, "host", f.host) ||
            mw_json_add_u64(o, "pid", f.pid) < 0 || mw_json_add_u64(o, "ranks", f.ranks) < 0 ||
            mw_json_add_u64(o, "ranks_done", f.ranks_done) < 0 ||
            !cJSON_AddBoolToObject(o, "final", f.final) ||
            !mw__json_tally(o, "at_ranks", &f.at_ranks) || !mw__json_tally(o, "sent", &f.sent) ||
            !mw__json_tally(o, "merged", &f.merged) ||
            !(m = mw__json_tally(o, "missed", &missed)) ||
            !mw__json_tally(m, "ranks_to_aggregator", &f.to_agg) ||
            !mw__json_tally(m, "aggregator_to_collector", &f.to_parent) ||
            mw_json_add_u64(o, "partials_sent", f.partials_sent) < 0 ||
            mw_json_add_u64(o, "partials_dropped", f.partials_dropped) < 0 ||
            mw_json_add_u64(o, "partials_merged", f.partials_merged) < 0 ||
            mw_json_add_u64(o, "rejected", f.rejected) < 0 ||
            mw_json_add_u64(o, "late", f.late) < 0 || mw_json_add_u64(o, "states", f.states) < 0)
            return -1;
    }
    return 0;
}

void mw__aggs_report(const mw_job_t *job, const mw_loss_t *loss, FILE *out)
{
    fprintf(out,
            "  calls at the ranks: %" PRIu64 " = %" PRIu64 " in this report + %" PRIu64
            " missed (%" PRIu64 " between ranks and aggregators, %" PRIu64
            " between aggregators and this collector)\n",
            loss->at_ranks.calls, loss->merged.calls, loss->missed.calls,
            loss->missed_to_aggs.calls, loss->missed_from_aggs.calls);
    uint32_t n = mw__aggs_count(job), finals = 0;
    mw_agg_figures_t sum = {0}, f;
    for (uint32_t i = 0; i < n; i++) {
        mw__aggs_figures(job, i, &f);
        finals += f.final ? 1u : 0u;
        sum.partials_sent += f.partials_sent;
        sum.partials_dropped += f.partials_dropped;
        sum.partials_merged += f.partials_merged;
        sum.rejected += f.rejected;
        sum.late += f.late;
    }
    fprintf(out,
            "  aggregators: %u (%u final); partials sent %" PRIu64 ", dropped %" PRIu64
            ", merged here %" PRIu64 "; messages they refused %" PRIu64 ", late samples %" PRIu64
            "\n",
            n, finals, sum.partials_sent, sum.partials_dropped, sum.partials_merged, sum.rejected,
            sum.late);
    for (uint32_t i = 0; i < n && i < 32; i++) {
        mw__aggs_figures(job, i, &f);
        fprintf(out,
                "    aggregator %u (%s pid %u): %u ranks, %u done%s; calls %" PRIu64
                " at its ranks, %" PRIu64 " sent, %" PRIu64 " merged here; missed %" PRIu64
                " before it, %" PRIu64 " after it\n",
                f.id, f.host[0] ? f.host : "?", f.pid, f.ranks, f.ranks_done,
                f.final ? ", final" : "", f.at_ranks.calls, f.sent.calls, f.merged.calls,
                f.to_agg.calls, f.to_parent.calls);
    }
    if (n > 32)
        fprintf(out, "    ... and %u more aggregators (summary JSON \"aggregators\")\n", n - 32);
}
