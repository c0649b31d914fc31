/* partial.c: an aggregator's merged windows on the wire (Partial) and their exact merge into
 * the parent's windows (partial.h; docs/partial.md).
 *
 * DESIGN: an aggregator's closed window is what one collector of its ranks would have closed,
 * so its Partial is that Window (window_pb.c fills it once, as for the recording) plus what a
 * parent needs to add it exactly rather than approximately: the ranks it merged (sorted
 * ranges) with their MPI shares, each function's spread as exact integer moments (FunctionStat
 * 15..17: the parent's spread is then the same to the bit whatever the grouping of ranks), the
 * first-seen order of its functions, the region and call-site definitions its window's ids
 * refer to, the steps every one of its ranks ended, and its ranks' dormant totals.
 *
 * The parent checks everything before it changes anything (ingest.c's rule): the sender is an
 * aggregator of the job whose AggState named its function table (aggstate.c keeps the map),
 * every rank range is inside the job, sorted and disjoint, every listed rank is live and has
 * not reported this window or a later one, every array is as long as its siblings and within
 * the caps a window has, every function id translates to one here, every index (bins,
 * sub-slots, peers, ranks of pairs, calls and detail) is in range, every trace passes the
 * checks a rank's trace passes. Only then are the definitions taken, the job's totals and the
 * ranks' progress moved, and the window merged (merge.c mw__merge_add_partial) as if each
 * listed rank's sample had arrived now; the steps join the parent's assembly (steps.c).
 *
 * Costs: the checks and the merge are O(size of the partial + ranks listed), with no
 * allocation once the scratch has grown; docs/partial.md has the figures.
 */
#include "partial.h"
#include "aggstate.h"
#include "dormant.h"
#include "mw_fnmap_msg.h"
#include "mw_trace.h"
#include "mw_wire.h"
#include "steps.h"

#include <stdlib.h>
#include <string.h>

#define KIND_SITE (1ull << 31)

typedef struct {
    uint64_t window;
    uint32_t rank;
    uint8_t *pb; /* packed Mpiwatch__Dormant */
    size_t len;
} pending_dormant_t;

#define MAX_PENDING_DORMANT (1u << 20)

struct mw_partial {
    uint64_t jobs; /* c->stats.jobs when this state was set up: a new job starts afresh */
    /* Aggregator side. */
    uint32_t sent_regions, sent_sites; /* definitions already sent upstream */
    uint8_t *site_sent;                /* [sent_sites]: site_state() of each when sent */
    uint32_t cap_site_sent;
    uint8_t **steps; /* closed steps not yet sent (packed Mpiwatch__Step) */
    size_t *steps_len, n_steps, cap_steps;
    mw_rank_share_t *share; /* sorted copy of a window's ranks */
    uint32_t cap_share;
    uint32_t *rf, *rc, *pm; /* ranges and shares of the partial being encoded */
    uint32_t cap_rf, cap_pm;
    uint32_t *fn_order;
    pending_dormant_t *dorm; /* dormant totals of samples of windows not yet sent */
    size_t n_dorm, cap_dorm;
    /* Parent side: each aggregator's region and site ids -> the job's (agg << 32 | kind | id). */
    mw__index_t rsmap;
    mw__index_t defs; /* scratch: kind | id of the definitions of the partial being checked */
    mw_trace_in_t *tin;
    size_t cap_tin;
    uint32_t seen_gen;
    uint32_t *seen; /* [MW_FN_SPACE]: function seen in this partial (== seen_gen) */
};

static void partial_steps_clear(struct mw_partial *p)
{
    for (size_t i = 0; i < p->n_steps; i++)
        free(p->steps[i]);
    p->n_steps = 0;
}

void mw__partial_free(mw_collector_t *c)
{
    struct mw_partial *p = c->partial;
    if (!p)
        return;
    partial_steps_clear(p);
    for (size_t i = 0; i < p->n_dorm; i++)
        free(p->dorm[i].pb);
    free(p->dorm);
    free(p->steps);
    free(p->steps_len);
    free(p->share);
    free(p->rf);
    free(p->rc);
    free(p->pm);
    free(p->fn_order);
    free(p->site_sent);
    free(p->tin);
    free(p->seen);
    mw__index_free(&p->rsmap);
    mw__index_free(&p->defs);
    free(p);
    c->partial = NULL;
}

/* The collector's partial state for the current job (set up afresh for a new job), or NULL
 * when out of memory. */
static struct mw_partial *partial_state(mw_collector_t *c)
{
    if (c->partial && c->partial->jobs == c->stats.jobs)
        return c->partial;
    mw__partial_free(c);
    struct mw_partial *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->jobs = c->stats.jobs;
    p->seen = calloc(MW_FN_SPACE, sizeof *p->seen);
    p->fn_order = malloc(MW_FN_SPACE * sizeof *p->fn_order);
    if (!p->seen || !p->fn_order || mw__index_init(&p->rsmap, sizeof(uint32_t), 64, 1u << 24) < 0 ||
        mw__index_init(&p->defs, sizeof(uint32_t), 64, MW_JOB_MAX_REGIONS + MW_JOB_MAX_SITES) < 0) {
        mw__index_free(&p->rsmap);
        free(p->seen);
        free(p->fn_order);
        free(p);
        return NULL;
    }
    c->partial = p;
    return p;
}

static int reserve(void **arr, uint32_t *cap, size_t n, size_t size)
{
    if (n <= *cap)
        return 0;
    size_t c = *cap ? *cap : 256;
    while (c < n)
        c *= 2;
    if (c > UINT32_MAX)
        return -1;
    void *q = realloc(*arr, c * size);
    if (!q)
        return -1;
    *arr = q;
    *cap = (uint32_t)c;
    return 0;
}

/* ---- aggregator side ------------------------------------------------------------------------ */

int mw__partial_aggregating(const mw_collector_t *c)
{
    return c->opt && c->opt->upstream && c->opt->upstream[0];
}

void mw__partial_step_closed(mw_collector_t *c, const Mpiwatch__Step *st)
{
    struct mw_partial *p = partial_state(c);
    if (!p)
        return;
    if (p->n_steps == p->cap_steps) {
        size_t cap = p->cap_steps ? p->cap_steps * 2 : 16;
        if (cap > MW_STEPS_MAX_OPEN * 4u)
            return; /* never sent (no partial for a long time): the job's end will tell */
        uint8_t **s = realloc(p->steps, cap * sizeof *s);
        if (!s)
            return;
        p->steps = s;
        size_t *l = realloc(p->steps_len, cap * sizeof *l);
        if (!l)
            return;
        p->steps_len = l;
        p->cap_steps = cap;
    }
    size_t len = protobuf_c_message_get_packed_size(&st->base);
    uint8_t *b = malloc(len ? len : 1);
    if (!b)
        return;
    protobuf_c_message_pack(&st->base, b);
    p->steps[p->n_steps] = b;
    p->steps_len[p->n_steps++] = len;
}

void mw__partial_dormant(mw_collector_t *c, uint32_t rank, uint64_t window,
                         const Mpiwatch__Dormant *d)
{
    struct mw_partial *p = partial_state(c);
    if (!p || p->n_dorm >= MAX_PENDING_DORMANT)
        return;
    if (p->n_dorm == p->cap_dorm) {
        size_t cap = p->cap_dorm ? p->cap_dorm * 2 : 64;
        pending_dormant_t *q = realloc(p->dorm, cap * sizeof *q);
        if (!q)
            return;
        p->dorm = q;
        p->cap_dorm = cap;
    }
    size_t len = protobuf_c_message_get_packed_size(&d->base);
    uint8_t *b = malloc(len ? len : 1);
    if (!b)
        return;
    protobuf_c_message_pack(&d->base, b);
    p->dorm[p->n_dorm++] = (pending_dormant_t){window, rank, b, len};
}

/* What a site's definition knows: bit 0 its function, bit 1 its file or line (a later
 * definition completes a site, regions.c site_upgrade: it goes up again then). */
static uint8_t site_state(const mw_site_t *st)
{
    return (uint8_t)((st->function[0] != '\0') | (st->file[0] != '\0' || st->line) << 1);
}

static int cmp_share(const void *a, const void *b)
{
    uint32_t x = ((const mw_rank_share_t *)a)->rank, y = ((const mw_rank_share_t *)b)->rank;
    return x < y ? -1 : x > y;
}

size_t mw__partial_envelope_pack(mw_collector_t *c, mw_pb_encoder_t *e, const mw_window_t *w,
                                 uint32_t agg_id, uint64_t seq)
{
    struct mw_partial *p = partial_state(c);
    if (!p)
        return 0;
    Mpiwatch__Window pw;
    if (mw__window_fill(e, w, c->now.real_ns, 1, &pw) < 0)
        return 0;
    Mpiwatch__Partial part = MPIWATCH__PARTIAL__INIT;
    part.window = &pw;

    /* Its ranks as sorted ranges, and their shares in that order. */
    uint32_t n = w->n_rep;
    if (n != w->ranks_reporting)
        return 0; /* no memory for the list: nothing exact to send */
    if (reserve((void **)&p->share, &p->cap_share, n, sizeof *p->share) < 0 ||
        reserve((void **)&p->pm, &p->cap_pm, n, sizeof *p->pm) < 0)
        return 0;
    if (n)
        memcpy(p->share, w->rep, n * sizeof *p->share);
    int sorted = 1;
    for (uint32_t i = 1; i < n && sorted; i++)
        sorted = p->share[i - 1].rank < p->share[i].rank;
    if (!sorted)
        qsort(p->share, n, sizeof *p->share, cmp_share);
    uint32_t nr = 0;
    for (uint32_t i = 0; i < n; i++) {
        p->pm[i] = p->share[i].pm;
        if (nr && p->rf[nr - 1] + p->rc[nr - 1] == p->share[i].rank) {
            p->rc[nr - 1]++;
            continue;
        }
        uint32_t cap = p->cap_rf;
        if (reserve((void **)&p->rf, &cap, nr + 1, sizeof *p->rf) < 0 ||
            reserve((void **)&p->rc, &p->cap_rf, nr + 1, sizeof *p->rc) < 0)
            return 0;
        p->rf[nr] = p->share[i].rank;
        p->rc[nr++] = 1;
    }
    part.n_rank_first = part.n_rank_count = nr;
    part.rank_first = p->rf;
    part.rank_count = p->rc;
    part.n_rank_pm = n;
    part.rank_pm = p->pm;
    part.samples = n;
    for (uint32_t i = 0; i < w->n_fn_used; i++)
        p->fn_order[i] = w->fn_used[i];
    part.n_fn_order = w->n_fn_used;
    part.fn_order = p->fn_order;

    /* The definitions new since the previous partial (its window's ids are among them). */
    const mw__rs_t *rs = &c->job.rs;
    uint32_t nrd = rs->n_regions - p->sent_regions, nsd = rs->n_sites - p->sent_sites, nup = 0;
    if (reserve((void **)&p->site_sent, &p->cap_site_sent, rs->n_sites, 1) < 0)
        return 0;
    for (uint32_t i = 0; i < p->sent_sites; i++)
        nup += site_state(&rs->sites[i]) != p->site_sent[i];
    Mpiwatch__Region *rd = calloc(nrd ? nrd : 1, sizeof *rd);
    Mpiwatch__Region **rdp = calloc(nrd ? nrd : 1, sizeof *rdp);
    Mpiwatch__CallSite *sd = calloc(nsd + nup ? nsd + nup : 1, sizeof *sd);
    Mpiwatch__CallSite **sdp = calloc(nsd + nup ? nsd + nup : 1, sizeof *sdp);
    /* The steps its ranks ended since the previous partial. */
    Mpiwatch__Step **steps = calloc(p->n_steps ? p->n_steps : 1, sizeof *steps);
    /* Its ranks' dormant totals as their samples of this window carried them. */
    Mpiwatch__RankDormant *dm = calloc(p->n_dorm ? p->n_dorm : 1, sizeof *dm);
    Mpiwatch__RankDormant **dmp = calloc(p->n_dorm ? p->n_dorm : 1, sizeof *dmp);
    size_t len = 0, ns = 0, nd = 0;
    if (!rd || !rdp || !sd || !sdp || !steps || !dm || !dmp)
        goto out;
    for (uint32_t i = 0; i < nrd; i++) {
        const mw_region_t *r = &rs->regions[p->sent_regions + i];
        mpiwatch__region__init(&rd[i]);
        rd[i].id = p->sent_regions + i + 1;
        rd[i].name = r->name;
        rd[i].source = r->source;
        rdp[i] = &rd[i];
    }
    /* Sites completed since they went up, then the new ones. */
    uint32_t nsi = 0;
    for (uint32_t i = 0; i < rs->n_sites; i++) {
        const mw_site_t *st = &rs->sites[i];
        if (i < p->sent_sites && site_state(st) == p->site_sent[i])
            continue;
        mpiwatch__call_site__init(&sd[nsi]);
        sd[nsi].id = i + 1;
        sd[nsi].module = st->module;
        sd[nsi].offset = st->offset;
        sd[nsi].function = st->function;
        sd[nsi].file = st->file;
        sd[nsi].line = st->line;
        sd[nsi].first_rank = st->first_rank;
        sdp[nsi] = &sd[nsi];
        nsi++;
    }
    part.n_region_defs = nrd;
    part.region_defs = rdp;
    part.n_site_defs = nsi;
    part.site_defs = sdp;
    for (size_t i = 0; i < p->n_steps; i++) {
        Mpiwatch__Step *st = mpiwatch__step__unpack(NULL, p->steps_len[i], p->steps[i]);
        if (!st)
            goto out;
        steps[ns++] = st;
    }
    part.n_steps = ns;
    part.steps = steps;

    for (size_t i = 0; i < p->n_dorm; i++) {
        if (p->dorm[i].window != w->index)
            continue;
        mpiwatch__rank_dormant__init(&dm[nd]);
        dm[nd].rank = p->dorm[i].rank;
        if (!(dm[nd].dormant = mpiwatch__dormant__unpack(NULL, p->dorm[i].len, p->dorm[i].pb)))
            goto out;
        dmp[nd] = &dm[nd];
        nd++;
    }
    part.n_dormant = nd;
    part.dormant = dmp;

    Mpiwatch__Envelope env = MPIWATCH__ENVELOPE__INIT;
    env.version = MW_PROTO_VERSION;
    env.job = c->job.job;
    env.rank = agg_id;
    env.seq = seq;
    env.body_case = MPIWATCH__ENVELOPE__BODY_PARTIAL;
    env.partial = &part;
    len = mw__pb_pack_msg(e, &env.base);
    if (len) {
        p->sent_regions = rs->n_regions;
        p->sent_sites = rs->n_sites;
        for (uint32_t i = 0; i < rs->n_sites; i++)
            p->site_sent[i] = site_state(&rs->sites[i]);
        partial_steps_clear(p);
        /* Those of this window went; older ones belong to windows that closed without them. */
        size_t k = 0;
        for (size_t i = 0; i < p->n_dorm; i++) {
            if (p->dorm[i].window <= w->index)
                free(p->dorm[i].pb);
            else
                p->dorm[k++] = p->dorm[i];
        }
        p->n_dorm = k;
    }
out:
    for (size_t i = 0; i < nd; i++)
        mpiwatch__dormant__free_unpacked(dm[i].dormant, NULL);
    free(dm);
    free(dmp);
    for (size_t i = 0; i < ns; i++)
        mpiwatch__step__free_unpacked(steps[i], NULL);
    free(steps);
    free(rd);
    free(rdp);
    free(sd);
    free(sdp);
    return len;
}

/* ---- parent side ---------------------------------------------------------------------------- */

static int fn_ok(uint32_t fn)
{
    return fn > 0 && fn < mw_fn_end();
}

/* fn_ok() with mw_fn_end() read once, for the loops over per-rank and per-cell entries. */
static inline int fn_below(uint32_t fn, unsigned end)
{
    return fn > 0 && fn < end;
}

/* Whether `rank` is in the partial's ranges (sorted, disjoint): binary search, after a check of
 * the common case of one range (an aggregator's ranks in one block), as it is called for every
 * per-rank entry. */
static int listed(const Mpiwatch__Partial *p, uint32_t rank)
{
    if (p->n_rank_first == 1)
        return rank >= p->rank_first[0] && rank - p->rank_first[0] < p->rank_count[0];
    size_t lo = 0, hi = p->n_rank_first;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (rank < p->rank_first[mid])
            hi = mid;
        else if (rank - p->rank_first[mid] >= p->rank_count[mid])
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

static int time_ok(uint64_t ts, uint64_t now_real)
{
    return ts > now_real ? ts - now_real <= MW_TIMESTAMP_TOLERANCE_NS
                         : now_real - ts <= MW_TIMESTAMP_TOLERANCE_NS;
}

/* Each function at most once in one list (functions of the window, of a step, fn_order). */
static int fn_once(struct mw_partial *p, uint32_t fn)
{
    if (p->seen[fn] == p->seen_gen)
        return 0;
    p->seen[fn] = p->seen_gen;
    return 1;
}

static void fn_once_reset(struct mw_partial *p)
{
    if (++p->seen_gen == 0) {
        memset(p->seen, 0, MW_FN_SPACE * sizeof *p->seen);
        p->seen_gen = 1;
    }
}

/* The job id of an aggregator's region (kind 0) or site (KIND_SITE) id, 0 when unknown. */
static uint32_t rs_get(const struct mw_partial *p, uint32_t agg, uint64_t kind, uint32_t id)
{
    const uint32_t *v = mw__index_find(&p->rsmap, (uint64_t)agg << 32 | kind | id);
    return v ? *v : 0;
}

/* Whether id is defined for the aggregator, before or in this partial (p->defs). */
static int rs_known(const struct mw_partial *p, uint32_t agg, uint64_t kind, uint32_t id)
{
    return rs_get(p, agg, kind, id) || mw__index_find(&p->defs, kind | id);
}

static mw_reject_t check_steps(mw_collector_t *c, struct mw_partial *p, const Mpiwatch__Partial *pa)
{
    if (pa->n_steps > MW_STEPS_MAX_OPEN)
        return MW_REJECT_BAD_FIELD;
    for (size_t i = 0; i < pa->n_steps; i++) {
        const Mpiwatch__Step *st = pa->steps[i];
        if (!st || st->step > (uint64_t)INT64_MAX || st->ranks == 0 || st->start_ns > st->end_ns ||
            st->n_functions > MW_FN_SPACE || (i && st->step <= pa->steps[i - 1]->step))
            return MW_REJECT_BAD_FIELD;
        fn_once_reset(p);
        for (size_t j = 0; j < st->n_functions; j++) {
            const Mpiwatch__FunctionStat *f = st->functions[j];
            if (!f || !fn_ok(f->fn) || !fn_once(p, f->fn) || (f->count && f->min_ns > f->max_ns))
                return MW_REJECT_BAD_FIELD;
        }
        size_t np = st->n_pair_src;
        if (st->n_pair_dst != np || st->n_pair_messages != np || st->n_pair_bytes != np ||
            np > MW_STEPS_MAX_PAIRS)
            return MW_REJECT_BAD_FIELD;
        for (size_t j = 0; j < np; j++)
            if (st->pair_src[j] >= c->job.size || st->pair_dst[j] >= c->job.size)
                return MW_REJECT_BAD_FIELD;
    }
    return MW_ACCEPTED;
}

/* Every check of a partial whose function ids are translated; nothing changes here except the
 * trace scratch (p->tin). */
static mw_reject_t check_partial(mw_collector_t *c, struct mw_partial *p, uint32_t agg,
                                 const Mpiwatch__Partial *pa, uint32_t *n_ranks)
{
    const mw_job_t *job = &c->job;
    const Mpiwatch__Window *w = pa->window;
    uint64_t now = c->now.real_ns;
    /* The window: on the job's grid, of the job's shapes, at a sane time. */
    if (w->subslots != job->subslots || w->duration_bins != job->duration_bins)
        return MW_REJECT_BAD_FIELD;
    if (w->index > mw_grid_index(&job->grid, now + MW_TIMESTAMP_TOLERANCE_NS) ||
        !time_ok(mw_grid_start(&job->grid, w->index), now) ||
        mw_grid_start(&job->grid, w->index) > now + MW_SAMPLE_MAX_LEAD_NS)
        return MW_REJECT_TIMESTAMP;
    if (w->window_ns != mw_grid_len(&job->grid, w->index) ||
        (w->start_ns && w->start_ns != mw_grid_start(&job->grid, w->index)) ||
        (!w->start_ns && mw_grid_start(&job->grid, w->index) != w->index * w->window_ns))
        return MW_REJECT_GRID_MISMATCH;

    /* Its ranks: sorted, disjoint ranges inside the job, each rank live and not yet past this
     * window. */
    size_t nr = pa->n_rank_first;
    if (nr == 0 || pa->n_rank_count != nr || nr > job->size)
        return MW_REJECT_RANK_RANGE;
    uint64_t total = 0, end = 0;
    for (size_t i = 0; i < nr; i++) {
        uint64_t f = pa->rank_first[i], k = pa->rank_count[i];
        if (k == 0 || f < end || f + k > job->size)
            return MW_REJECT_RANK_RANGE;
        end = f + k;
        total += k;
    }
    for (size_t i = 0; i < nr; i++)
        for (uint32_t k = 0; k < pa->rank_count[i]; k++) {
            uint32_t r = pa->rank_first[i] + k;
            if (job->ranks[r].state != MW_RANK_LIVE)
                return MW_REJECT_NO_HELLO;
            if ((int64_t)w->index <= mw__merge_last_window(&c->merge, r))
                return MW_REJECT_DUPLICATE;
        }
    *n_ranks = (uint32_t)total;
    if (w->ranks_reporting != total || pa->n_rank_pm != total || pa->samples > total)
        return MW_REJECT_BAD_FIELD;
    for (size_t i = 0; i < pa->n_rank_pm; i++)
        if (pa->rank_pm[i] >= MW_RANK_PM_NONE)
            return MW_REJECT_BAD_FIELD;

    /* Functions (each once), their histograms and spread; the first-seen order. */
    if (w->n_functions > MW_FN_SPACE || pa->n_fn_order > MW_FN_SPACE)
        return MW_REJECT_BAD_FIELD;
    fn_once_reset(p);
    for (size_t i = 0; i < w->n_functions; i++) {
        const Mpiwatch__FunctionStat *f = w->functions[i];
        if (!f || !fn_ok(f->fn) || !fn_once(p, f->fn) || (f->count && f->min_ns > f->max_ns))
            return MW_REJECT_BAD_FIELD;
        if (f->n_hist &&
            (f->hist_first >= job->duration_bins || f->n_hist > job->duration_bins - f->hist_first))
            return MW_REJECT_BAD_FIELD;
        if (f->spread_ranks > total || (f->spread_ranks && !listed(pa, f->rank_max)))
            return MW_REJECT_BAD_FIELD;
    }
    fn_once_reset(p);
    for (size_t i = 0; i < pa->n_fn_order; i++)
        if (!fn_ok(pa->fn_order[i]) || !fn_once(p, pa->fn_order[i]))
            return MW_REJECT_BAD_FIELD;

    /* Occupancy and density: every index bounded. */
    size_t n = w->n_occ_fn;
    if (w->n_occ_sub != n || w->n_occ_ns != n || n > (size_t)MW_FN_SPACE * job->subslots)
        return MW_REJECT_BAD_FIELD;
    const unsigned fn_end = mw_fn_end();
    for (size_t i = 0; i < n; i++)
        if (!fn_below(w->occ_fn[i], fn_end) || w->occ_sub[i] >= job->subslots)
            return MW_REJECT_BAD_FIELD;
    n = w->n_density_fn;
    if (w->n_density_sub != n || w->n_density_bin != n || w->n_density_end != n ||
        w->n_density_count != n || n > MW_MERGE_MAX_DENSITY)
        return MW_REJECT_BAD_FIELD;
    for (size_t i = 0; i < n; i++)
        if (!fn_below(w->density_fn[i], fn_end) || w->density_sub[i] >= (int32_t)job->subslots ||
            w->density_bin[i] >= job->duration_bins || w->density_end[i] > 1)
            return MW_REJECT_BAD_FIELD;

    /* Pairs and per-function pairs: sent by a listed rank to a rank of the job. */
    n = w->n_pair_src;
    if (w->n_pair_dst != n || w->n_pair_messages != n || w->n_pair_bytes != n ||
        n > MW_MERGE_MAX_PAIRS)
        return MW_REJECT_BAD_FIELD;
    for (size_t i = 0; i < n; i++)
        if (w->pair_dst[i] >= job->size || !listed(pa, w->pair_src[i]))
            return MW_REJECT_BAD_FIELD;
    n = w->n_fpair_src;
    if (w->n_fpair_dst != n || w->n_fpair_fn != n || w->n_fpair_messages != n ||
        w->n_fpair_bytes != n || n > MW_WINDOW_MAX_FPAIRS)
        return MW_REJECT_BAD_FIELD;
    for (size_t i = 0; i < n; i++)
        if (w->fpair_dst[i] >= job->size || !fn_below(w->fpair_fn[i], fn_end) ||
            !listed(pa, w->fpair_src[i]))
            return MW_REJECT_BAD_FIELD;

    /* The longest calls: at most a window's, by listed ranks, peers in the job. */
    if (w->n_longest > MW_MERGE_LONGEST)
        return MW_REJECT_BAD_FIELD;
    for (size_t i = 0; i < w->n_longest; i++) {
        const Mpiwatch__Call *k = w->longest[i];
        if (!k || !fn_ok(k->fn) || k->peer < -1 ||
            (k->peer >= 0 && (uint32_t)k->peer >= job->size) || !listed(pa, k->rank))
            return MW_REJECT_BAD_FIELD;
        if (!time_ok(k->start_ns, now))
            return MW_REJECT_TIMESTAMP;
    }

    /* Region and site definitions: within the caps, ids noted (O(1) lookups below). */
    if (pa->n_region_defs > MW_JOB_MAX_REGIONS || pa->n_site_defs > MW_JOB_MAX_SITES)
        return MW_REJECT_BAD_FIELD;
    mw__index_clear(&p->defs);
    int created;
    for (size_t i = 0; i < pa->n_region_defs; i++)
        if (!pa->region_defs[i] || pa->region_defs[i]->id == 0 ||
            pa->region_defs[i]->id >= KIND_SITE ||
            !mw__index_get(&p->defs, pa->region_defs[i]->id, &created))
            return MW_REJECT_BAD_FIELD;
    for (size_t i = 0; i < pa->n_site_defs; i++)
        if (!pa->site_defs[i] || pa->site_defs[i]->id == 0 || pa->site_defs[i]->id >= KIND_SITE ||
            !mw__index_get(&p->defs, KIND_SITE | pa->site_defs[i]->id, &created))
            return MW_REJECT_BAD_FIELD;

    /* Per-rank detail: parallel arrays, in rank order, listed ranks, known ids. */
    n = w->n_rf_rank;
    if (w->n_rf_fn != n || w->n_rf_count != n || w->n_rf_ns != n || w->n_rf_bytes != n ||
        n > MW_WINDOW_MAX_RANK_ENTRIES)
        return MW_REJECT_BAD_FIELD;
    for (size_t i = 0; i < n; i++)
        if (!fn_below(w->rf_fn[i], fn_end) || (i && w->rf_rank[i] < w->rf_rank[i - 1]) ||
            !listed(pa, w->rf_rank[i]))
            return MW_REJECT_BAD_FIELD;
    n = w->n_rr_rank;
    if (w->n_rr_region != n || w->n_rr_count != n || w->n_rr_incl_ns != n || w->n_rr_excl_ns != n ||
        w->n_rr_mpi_ns != n || n > MW_WINDOW_MAX_RANK_ENTRIES)
        return MW_REJECT_BAD_FIELD;
    for (size_t i = 0; i < n; i++)
        if ((i && w->rr_rank[i] < w->rr_rank[i - 1]) || !listed(pa, w->rr_rank[i]) ||
            !rs_known(p, agg, 0, w->rr_region[i]))
            return MW_REJECT_BAD_FIELD;

    /* Regions and sites: definitions within the caps, entries of defined ids. */
    if (pa->n_region_defs > MW_JOB_MAX_REGIONS || pa->n_site_defs > MW_JOB_MAX_SITES ||
        w->n_regions > MW_JOB_MAX_REGIONS || w->n_sites > MW_JOB_MAX_SITES * 4u)
        return MW_REJECT_BAD_FIELD;
    for (size_t i = 0; i < w->n_regions; i++)
        if (!w->regions[i] || w->regions[i]->ranks > total ||
            !rs_known(p, agg, 0, w->regions[i]->region))
            return MW_REJECT_BAD_FIELD;
    for (size_t i = 0; i < w->n_sites; i++) {
        const Mpiwatch__SiteStat *s = w->sites[i];
        if (!s || !fn_ok(s->fn) || s->ranks > total || (s->ranks && !listed(pa, s->top_rank)) ||
            !rs_known(p, agg, KIND_SITE, s->site))
            return MW_REJECT_BAD_FIELD;
    }

    /* Traces (one per listed rank, checked as a rank's) and communicator definitions. */
    if (w->n_traces > total || w->n_comms > MW_TRACE_WINDOW_MAX_COMMS ||
        w->n_comm_world_rank != w->n_comms)
        return MW_REJECT_BAD_FIELD;
    for (size_t i = 0; i < w->n_comms; i++)
        if (!w->comms[i] || !listed(pa, w->comm_world_rank[i]) ||
            !mw__trace_check_comm(c, w->comms[i]))
            return MW_REJECT_BAD_FIELD;
    if (w->n_traces > p->cap_tin) {
        mw_trace_in_t *t = realloc(p->tin, w->n_traces * sizeof *t);
        if (!t)
            return MW_REJECT_TOO_LARGE;
        p->tin = t;
        p->cap_tin = w->n_traces;
    }
    uint64_t bytes = 0;
    for (size_t i = 0; i < w->n_traces; i++) {
        const Mpiwatch__RankTrace *rt = w->traces[i];
        if (!rt || !rt->trace || !listed(pa, rt->rank) || (i && rt->rank <= w->traces[i - 1]->rank))
            return MW_REJECT_BAD_FIELD;
        if (rt->trace->window != w->index)
            return MW_REJECT_TRACE;
        bytes += rt->trace->records.len;
        if (!mw__merge_trace_room(&c->merge, w->index, bytes))
            return MW_REJECT_TRACE;
    }
    for (size_t i = 0; i < w->n_traces; i++)
        if (mw__trace_check_partial(c, w->traces[i]->trace, &p->tin[i]) < 0)
            return MW_REJECT_TRACE;

    /* Dormant totals of listed ranks; steps. */
    if (pa->n_dormant > total)
        return MW_REJECT_BAD_FIELD;
    for (size_t i = 0; i < pa->n_dormant; i++)
        if (!pa->dormant[i] || !pa->dormant[i]->dormant || !listed(pa, pa->dormant[i]->rank))
            return MW_REJECT_BAD_FIELD;
    return check_steps(c, p, pa);
}

/* Takes the partial's definitions into the job's tables and translates its region and site
 * ids to the job's. An entry whose definition the job refused (a cap) is left out, counted. */
static void apply_rs(mw_collector_t *c, struct mw_partial *p, uint32_t agg, Mpiwatch__Partial *pa)
{
    mw__rs_t *rs = &c->job.rs;
    Mpiwatch__Window *w = pa->window;
    for (size_t i = 0; i < pa->n_region_defs; i++) {
        const Mpiwatch__Region *d = pa->region_defs[i];
        mw_rs_reason_t why;
        uint32_t jid = mw__rs_define_region(rs, d, mw__job_info_charge, &c->job, &why);
        int created;
        uint32_t *v = jid ? mw__index_get(&p->rsmap, (uint64_t)agg << 32 | d->id, &created) : NULL;
        if (v)
            *v = jid;
        else
            rs->refused[jid ? MW_RS_MAP_FULL : why]++;
    }
    for (size_t i = 0; i < pa->n_site_defs; i++) {
        const Mpiwatch__CallSite *d = pa->site_defs[i];
        mw_rs_reason_t why;
        uint32_t jid = mw__rs_define_site(rs, d, mw__job_info_charge, &c->job, &why);
        int created;
        uint32_t *v =
            jid ? mw__index_get(&p->rsmap, (uint64_t)agg << 32 | KIND_SITE | d->id, &created)
                : NULL;
        if (v)
            *v = jid;
        else
            rs->refused[jid ? MW_RS_MAP_FULL : why]++;
    }
    /* Entries: translated in place; those of refused definitions dropped (counted). */
    size_t k = 0;
    for (size_t i = 0; i < w->n_regions; i++) {
        uint32_t jid = rs_get(p, agg, 0, w->regions[i]->region);
        if (!jid) {
            rs->refused[MW_RS_UNDEFINED]++;
            continue;
        }
        Mpiwatch__RegionStat *e = w->regions[i];
        e->region = jid;
        w->regions[k++] = e;
        mw_region_t *r = &rs->regions[jid - 1];
        r->count = mw__rs_sat_add(r->count, e->count);
        r->incl_ns = mw__rs_sat_add(r->incl_ns, e->incl_ns);
        r->excl_ns = mw__rs_sat_add(r->excl_ns, e->excl_ns);
        r->mpi_ns = mw__rs_sat_add(r->mpi_ns, e->mpi_ns);
    }
    w->n_regions = k;
    k = 0;
    for (size_t i = 0; i < w->n_sites; i++) {
        uint32_t jid = rs_get(p, agg, KIND_SITE, w->sites[i]->site);
        if (!jid) {
            rs->refused[MW_RS_UNDEFINED]++;
            continue;
        }
        Mpiwatch__SiteStat *e = w->sites[i];
        e->site = jid;
        w->sites[k++] = e;
        int created;
        mw_site_total_t *t = mw__index_get(&rs->site_totals, (uint64_t)jid << 32 | e->fn, &created);
        if (!t)
            continue;
        t->site = jid;
        t->fn = e->fn;
        t->count = mw__rs_sat_add(t->count, e->count);
        t->ns = mw__rs_sat_add(t->ns, e->ns);
        t->bytes = mw__rs_sat_add(t->bytes, e->bytes);
        if (e->max_ns > t->max_ns)
            t->max_ns = e->max_ns;
    }
    w->n_sites = k;
    k = 0;
    for (size_t i = 0; i < w->n_rr_rank; i++) {
        uint32_t jid = rs_get(p, agg, 0, w->rr_region[i]);
        if (!jid) {
            w->rank_detail_left_out++;
            continue;
        }
        w->rr_rank[k] = w->rr_rank[i];
        w->rr_region[k] = jid;
        w->rr_count[k] = w->rr_count[i];
        w->rr_incl_ns[k] = w->rr_incl_ns[i];
        w->rr_excl_ns[k] = w->rr_excl_ns[i];
        w->rr_mpi_ns[k++] = w->rr_mpi_ns[i];
    }
    w->n_rr_rank = w->n_rr_region = w->n_rr_count = w->n_rr_incl_ns = w->n_rr_excl_ns =
        w->n_rr_mpi_ns = k;
    rs->regions_dropped = mw__rs_sat_add(rs->regions_dropped, w->regions_dropped);
    rs->sites_dropped = mw__rs_sat_add(rs->sites_dropped, w->sites_dropped);
}

/* The job's side of the listed ranks' samples (job.c mw__job_sample): progress, activity and
 * the job's per-function totals; each rank's own totals are its aggregator's (AggState). */
static void apply_job(mw_collector_t *c, const Mpiwatch__Partial *pa, uint32_t n_ranks)
{
    mw_job_t *job = &c->job;
    const Mpiwatch__Window *w = pa->window;
    int64_t k = (int64_t)w->index;
    uint64_t now = c->now.mono_ns;
    job->last_activity_ns = now;
    job->samples += n_ranks;
    if (job->min_window < 0 || k < job->min_window)
        job->min_window = k;
    if (k > job->max_window)
        job->max_window = k;
    for (size_t i = 0; i < pa->n_rank_first; i++)
        for (uint32_t j = 0; j < pa->rank_count[i]; j++) {
            mw_rank_t *r = &job->ranks[pa->rank_first[i] + j];
            r->last_seen_ns = now;
            r->samples++;
            if (r->first_window < 0)
                r->first_window = k;
            r->last_window = k;
        }
    for (size_t i = 0; i < w->n_functions; i++)
        mw__fn_stats_add(&job->fn[w->functions[i]->fn], w->functions[i]);
    /* Each rank's functions (its detail block, in rank order) and pairs (contiguous per
     * source as merged; any order is taken): the job's per-rank tables and totals. */
    size_t i = 0, j = 0;
    while (i < w->n_rf_rank || j < w->n_pair_src) {
        uint32_t rank = i < w->n_rf_rank && (j >= w->n_pair_src || w->rf_rank[i] <= w->pair_src[j])
                            ? w->rf_rank[i]
                            : w->pair_src[j];
        size_t kf = 0, kp = 0;
        while (i + kf < w->n_rf_rank && w->rf_rank[i + kf] == rank)
            kf++;
        while (j + kp < w->n_pair_src && w->pair_src[j + kp] == rank)
            kp++;
        mw_job_entries_t e = {.fn = w->rf_fn + i,
                              .count = w->rf_count + i,
                              .ns = w->rf_ns + i,
                              .bytes = w->rf_bytes + i,
                              .n_fn = kf,
                              .peer = w->pair_dst + j,
                              .messages = w->pair_messages + j,
                              .peer_bytes = w->pair_bytes + j,
                              .n_peer = kp};
        mw__job_rank_entries(job, rank, &e);
        i += kf;
        j += kp;
    }
    for (size_t d = 0; d < pa->n_dormant; d++)
        mw__dormant_take(&job->dormant, job->size, pa->dormant[d]->rank, pa->dormant[d]->dormant);
}

/* Translates every function id of the partial with the aggregator's map (ids outside its
 * table become MW_FN_SPACE, refused by the checks). Returns the entries left out. */
static uint64_t translate(const mw_fnmap_t *m, Mpiwatch__Partial *pa, mw_fnmap_keep_t *keep)
{
    if (m->identity)
        return 0;
    uint64_t out = mw_fnmap_window(m, pa->window, keep);
    for (size_t i = 0; i < pa->n_steps; i++)
        if (pa->steps[i])
            out += mw_fnmap_step(m, pa->steps[i]);
    size_t k = 0;
    for (size_t i = 0; i < pa->n_fn_order; i++) {
        uint32_t id = pa->fn_order[i];
        unsigned local = mw_fnmap_get(m, id);
        if (id > m->n)
            pa->fn_order[k++] = MW_FN_SPACE;
        else if (local)
            pa->fn_order[k++] = local;
    }
    pa->n_fn_order = k;
    return out;
}

mw_reject_t mw__partial_ingest(mw_collector_t *c, const Mpiwatch__Envelope *env,
                               const mw_clock_t *now)
{
    static mw_fnmap_keep_t keep; /* translated trace records, until the next partial */
    (void)now;
    if (!c->job.active || c->job.ended != MW_END_NONE)
        return MW_REJECT_NO_HELLO;
    if (strcmp(env->job ? env->job : "", c->job.job) != 0)
        return MW_REJECT_JOB_MISMATCH;
    Mpiwatch__Partial *pa = env->partial;
    if (!pa || !pa->window)
        return MW_REJECT_NO_BODY;
    if (env->rank >= MW_MAX_AGGREGATORS)
        return MW_REJECT_RANK_RANGE;
    const mw_fnmap_t *map = mw__aggstate_fnmap(c, env->rank);
    if (!map)
        return MW_REJECT_NO_HELLO; /* no AggState of it in this job: its ids mean nothing */
    struct mw_partial *p = partial_state(c);
    if (!p)
        return MW_REJECT_TOO_LARGE;
    mw_fnmap_keep_clear(&keep);
    uint64_t unknown = translate(map, pa, &keep);
    uint32_t n_ranks = 0;
    mw_reject_t r = check_partial(c, p, env->rank, pa, &n_ranks);
    if (r != MW_ACCEPTED)
        return r;

    /* Everything checked: apply. */
    c->job.fn_unknown += unknown;
    apply_rs(c, p, env->rank, pa);
    apply_job(c, pa, n_ranks);
    mw_partial_in_t in = {.pw = pa->window,
                          .rank_first = pa->rank_first,
                          .rank_count = pa->rank_count,
                          .n_ranges = pa->n_rank_first,
                          .n_ranks = n_ranks,
                          .rank_pm = pa->rank_pm,
                          .n_rank_pm = pa->n_rank_pm,
                          .fn_order = pa->fn_order,
                          .n_fn_order = pa->n_fn_order,
                          .traces = p->tin,
                          .from = env->rank + 1};
    c->merge.frame_off = 0; /* its traces are kept as bytes: the frame is no rank's sample */
    /* An aggregator closes the steps before the window they may complete (as for samples,
     * ingest.c): they go up with that window's partial. */
    int aggregating = mw__partial_aggregating(c);
    if (aggregating)
        mw__steps_partial(c, pa);
    int late = mw__merge_add_partial(&c->merge, &in, c->now.mono_ns);
    if (late > 0) {
        c->job.late += n_ranks;
        c->stats.late += n_ranks;
    } else if (late < 0) {
        c->tstats.refused[MW_TREFUSE_WINDOW_BYTES] += pa->window->n_traces;
    }
    if (!aggregating)
        mw__steps_partial(c, pa);
    mw__aggstate_merged(c, env->rank, pa);
    return MW_ACCEPTED;
}
