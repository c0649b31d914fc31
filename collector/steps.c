/* steps.c: time steps in the collector: exact per-step totals from the ranks' step marks.
 *
 * DESIGN: a rank's StepMark is a snapshot of its marking thread's totals in the window up to
 * the mark. For window w with totals T and marks S1..Sk the rank's step segments are S1,
 * S2-S1, ..., Sk-S(k-1), and T-Sk, which belongs to the step that has not ended yet. Each rank
 * keeps a "carry": its totals since its last mark, to which every segment is added; a mark
 * moves the carry into that step's open entry, summed over ranks. Counts, times, bytes and
 * messages are exact that way; min/max of a segment are the snapshot's (bounds, see
 * docs/steps.md). Calls of other threads of the rank are only in T, so they belong to the
 * step that is open at the end of their window.
 *
 * A step closes once every rank still expected (neither gone with a bye nor declared dead) has
 * ended it or a later step, or when the job ends; more than MW_STEPS_MAX_OPEN open steps close
 * the oldest. Everything is driven by accepted samples, byes and the job's end, so a replay of
 * a recording closes the same steps in the same order. A closed step is encoded once and goes
 * to the recording, the feed (topic "step") and the list the summary JSON is built from.
 *
 * The bookkeeping costs O(log MW_STEPS_MAX_OPEN) per mark, whatever the job's size (issue 12:
 * a scan of every rank per marked sample made 32,768 ranks cost 1.5 s per window). Steps
 * close lowest first, so every closed step is below every open one: `floor` is the highest
 * step closed. A rank's `passed` (the highest step it ended) is then either an open step or
 * <= floor. Each open step counts the expected ranks whose `passed` is that step (`at`), and
 * `behind` counts those whose `passed` is <= floor; the lowest open step can close exactly
 * when `behind` is 0, and closing it moves its `at` into `behind`. A mark moves one rank
 * between two counters. Open steps are found by binary search in `order` (slots sorted by
 * step). A mark of a step <= floor (closed already, e.g. by the cap, or never reached by a
 * rank that skipped it) would reopen a step that was emitted: instead its calls stay in the
 * rank's carry and go to the next step the rank ends, as a folded step (Step.folded), and it
 * is counted (`late`); a mark below every open step when the cap is reached is treated the
 * same way (`below_open`).
 *
 * Memory is bounded job-wide, not per rank: a rank's carry may hold an entry for every peer it
 * talked to since its last mark, so an all-to-all job would need ranks^2 entries, and a rank
 * that ends the same open step again and again appends pairs to it each time. Carry tables and
 * open steps' pair lists start small (MW_STEPS_TABLE_INITIAL entries, a fixed cost per sending
 * rank and per slot), and every doubling is charged to a budget: min(MW_STEPS_CARRY_PER_RANK x
 * ranks, MW_STEPS_MAX_CARRY) entries for the carries, MW_STEPS_MAX_PAIRS for the pair lists.
 * Charges count allocated entries, so they bound the memory itself; a table that grew is freed
 * and started small again when its contents are handed over (a mark, a step's close), so the
 * budget follows what is held now, not past peaks. What does not fit is left out of the step
 * and counted (`carry`, `pairs`), not folded into an "other" bucket: a Step has no field for
 * one, a made-up peer would mislead the viewer and the exports, and the same messages and calls
 * are still exact in the windows, the job's totals and the recording. Every refusal is counted
 * by reason and shown in the stats JSON, on the Prometheus page and in the report.
 */
#include "steps.h"
#include "partial.h"
#include "publish.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    mw__index_t fn;    /* fn -> mw_fn_stats_t: the rank's totals since its last mark */
    mw__index_t peer;  /* peer -> mw_pair_sum_t: its messages since its last mark */
    uint64_t start_ns; /* where its current step started: its last mark, or its first window */
    uint64_t passed1;  /* the highest step it ended plus 1, 0 none (see rank_passed()) */
    uint32_t folded;   /* marks folded into its carry (late or below_open marks) */
    uint32_t charged;  /* entries its carry tables grew by, charged to the carry budget */
    uint8_t ready, gone;
} step_rank_t;

typedef struct {
    int ready;
    uint64_t step, start_ns, end_ns;
    uint32_t ranks, folded;
    uint32_t at;       /* expected ranks whose `passed` is this step */
    uint32_t charged;  /* entries its pair list grew by, charged to the pair budget */
    mw__index_t fn;    /* fn -> mw_fn_stats_t */
    mw__index_t pairs; /* src << 32 | dst -> mw_pair_sum_t */
} step_open_t;

struct mw_step_assembly {
    uint32_t size;
    uint64_t window_ns, lateness_ns;
    step_rank_t *rank;
    step_open_t open[MW_STEPS_MAX_OPEN];
    uint32_t order[MW_STEPS_MAX_OPEN]; /* slots of the open steps, by step */
    uint32_t free_slot[MW_STEPS_MAX_OPEN];
    uint32_t n_open, n_free;
    int64_t floor;                            /* the highest step closed, -1 none */
    uint32_t behind;                          /* expected ranks whose `passed` is <= floor */
    uint64_t refused[MW_STEPS_REFUSAL_COUNT]; /* by mw_steps_refusal_t */
    uint64_t marks;                           /* marks applied */
    uint64_t carry_budget, carry_held;        /* entries the carries may grow by / grew by */
    uint64_t pairs_held;                      /* entries the open steps' pair lists grew by */
    /* Scratch: the previous mark's (or, in validation, the sample's) totals, dense. */
    mw_fn_stats_t prev_fn[MW_FN_SPACE];
    mw_fn_stats_t tot_fn[MW_FN_SPACE];
    uint64_t *prev_pm, *prev_pb, *tot_pm, *tot_pb; /* [size] */
    /* Encoding of a closed step. */
    Mpiwatch__FunctionStat fs[MW_FN_SPACE];
    Mpiwatch__FunctionStat *fsp[MW_FN_SPACE];
    uint32_t *p_src, *p_dst;
    uint64_t *p_msg, *p_bytes;
    size_t p_cap;
    /* Closed steps for the summary. */
    uint8_t **kept;
    size_t *kept_len;
    size_t n_kept;
    uint64_t closed;
    uint64_t work; /* rank records and open-step entries visited (tests) */
};

int mw__steps_begin(mw_collector_t *c, uint32_t size, uint64_t window_ns, uint64_t lateness_ns)
{
    mw__steps_free(c);
    mw_step_assembly_t *S = calloc(1, sizeof *S);
    if (!S)
        return -1;
    S->size = size;
    S->carry_budget = (uint64_t)MW_STEPS_CARRY_PER_RANK * size;
    if (S->carry_budget > MW_STEPS_MAX_CARRY)
        S->carry_budget = MW_STEPS_MAX_CARRY;
    S->window_ns = window_ns;
    S->lateness_ns = lateness_ns;
    S->rank = calloc(size, sizeof *S->rank);
    S->prev_pm = calloc(size, sizeof(uint64_t));
    S->prev_pb = calloc(size, sizeof(uint64_t));
    S->tot_pm = calloc(size, sizeof(uint64_t));
    S->tot_pb = calloc(size, sizeof(uint64_t));
    c->steps = S;
    if (!S->rank || !S->prev_pm || !S->prev_pb || !S->tot_pm || !S->tot_pb) {
        mw__steps_free(c);
        return -1;
    }
    S->floor = -1;
    S->behind = size;
    for (uint32_t i = 0; i < MW_STEPS_MAX_OPEN; i++)
        S->free_slot[i] = MW_STEPS_MAX_OPEN - 1 - i;
    S->n_free = MW_STEPS_MAX_OPEN;
    return 0;
}

void mw__steps_free(mw_collector_t *c)
{
    mw_step_assembly_t *S = c->steps;
    if (!S)
        return;
    for (uint32_t r = 0; S->rank && r < S->size; r++) {
        if (S->rank[r].ready) {
            mw__index_free(&S->rank[r].fn);
            mw__index_free(&S->rank[r].peer);
        }
    }
    for (uint32_t i = 0; i < MW_STEPS_MAX_OPEN; i++) {
        if (S->open[i].ready) {
            mw__index_free(&S->open[i].fn);
            mw__index_free(&S->open[i].pairs);
        }
    }
    for (size_t i = 0; i < S->n_kept; i++)
        free(S->kept[i]);
    free(S->kept);
    free(S->kept_len);
    free(S->rank);
    free(S->prev_pm);
    free(S->prev_pb);
    free(S->tot_pm);
    free(S->tot_pb);
    free(S->p_src);
    free(S->p_dst);
    free(S->p_msg);
    free(S->p_bytes);
    free(S);
    c->steps = NULL;
}

/* ---- validation --------------------------------------------------------------------------- */

static void fs_set(mw_fn_stats_t *t, const Mpiwatch__FunctionStat *f)
{
    t->count = f->count;
    t->total_ns = f->total_ns;
    t->bytes = f->bytes;
    t->min_ns = f->min_ns;
    t->max_ns = f->max_ns;
}

/* a <= b in every summed field. */
static int fs_le(const mw_fn_stats_t *a, const mw_fn_stats_t *b)
{
    return a->count <= b->count && a->total_ns <= b->total_ns && a->bytes <= b->bytes;
}

/* Zeroes the scratch entries a sample and its marks may have touched. */
static void scratch_clear(mw_step_assembly_t *S, const Mpiwatch__Sample *s)
{
    for (size_t i = 0; i < s->n_functions; i++)
        if (s->functions[i] && s->functions[i]->fn < MW_FN_SPACE)
            memset(&S->tot_fn[s->functions[i]->fn], 0, sizeof S->tot_fn[0]);
    for (size_t i = 0; i < s->n_peer_rank; i++)
        if (s->peer_rank[i] < S->size)
            S->tot_pm[s->peer_rank[i]] = S->tot_pb[s->peer_rank[i]] = 0;
    for (size_t i = 0; i < s->n_steps; i++) {
        const Mpiwatch__StepMark *m = s->steps[i];
        if (!m)
            continue;
        for (size_t j = 0; j < m->n_functions; j++)
            if (m->functions[j] && m->functions[j]->fn < MW_FN_SPACE) {
                memset(&S->prev_fn[m->functions[j]->fn], 0, sizeof S->prev_fn[0]);
                memset(&S->tot_fn[m->functions[j]->fn], 0, sizeof S->tot_fn[0]);
            }
        for (size_t j = 0; j < m->n_peer_rank && j < m->n_peer_messages; j++)
            if (m->peer_rank[j] < S->size) {
                S->prev_pm[m->peer_rank[j]] = S->prev_pb[m->peer_rank[j]] = 0;
                S->tot_pm[m->peer_rank[j]] = S->tot_pb[m->peer_rank[j]] = 0;
            }
    }
}

/* One mark against its bound (tot_*: the next mark's snapshot, or the window's totals). The
 * mark's own values are collected in prev_* to catch an id listed twice. */
static mw_reject_t check_mark(mw_step_assembly_t *S, const Mpiwatch__StepMark *m, uint64_t lo,
                              uint64_t hi)
{
    if (!m || m->source < 1 || m->source > 3 || m->end_ns < lo || m->end_ns > hi ||
        m->step > (uint64_t)INT64_MAX)
        return MW_REJECT_BAD_FIELD;
    if (m->n_peer_messages != m->n_peer_rank || m->n_peer_bytes != m->n_peer_rank ||
        m->n_functions >= MW_FN_SPACE)
        return MW_REJECT_BAD_FIELD;
    for (size_t j = 0; j < m->n_functions; j++) {
        const Mpiwatch__FunctionStat *f = m->functions[j];
        if (!f || f->fn == 0 || f->fn >= mw_fn_end() || S->prev_fn[f->fn].count || f->count == 0)
            return MW_REJECT_BAD_FIELD; /* an invalid id, or one listed twice */
        fs_set(&S->prev_fn[f->fn], f);
        if (!fs_le(&S->prev_fn[f->fn], &S->tot_fn[f->fn]) || f->min_ns > f->max_ns)
            return MW_REJECT_BAD_FIELD;
    }
    for (size_t j = 0; j < m->n_peer_rank; j++) {
        uint32_t p = m->peer_rank[j];
        if (p >= S->size || S->prev_pm[p] || m->peer_messages[j] == 0 ||
            m->peer_messages[j] > S->tot_pm[p] || m->peer_bytes[j] > S->tot_pb[p])
            return MW_REJECT_BAD_FIELD;
        S->prev_pm[p] = m->peer_messages[j];
        S->prev_pb[p] = m->peer_bytes[j];
    }
    return MW_ACCEPTED;
}

/* Every snapshot lies within the next one and the last within the window's totals: the marks
 * are checked from the last to the first, each becoming the bound of the one before it. */
mw_reject_t mw__steps_check(mw_collector_t *c, const Mpiwatch__Sample *s)
{
    mw_step_assembly_t *S = c->steps;
    if (s->n_steps == 0)
        return MW_ACCEPTED;
    if (s->n_steps > MW_STEPS_MAX_MARKS)
        return MW_REJECT_BAD_FIELD;
    if (!S)
        return MW_ACCEPTED; /* no memory for steps: the marks are ignored */
    for (size_t i = 0; i < s->n_functions; i++)
        fs_set(&S->tot_fn[s->functions[i]->fn], s->functions[i]); /* checked, distinct */
    for (size_t i = 0; i < s->n_peer_rank; i++) {
        S->tot_pm[s->peer_rank[i]] += s->peer_messages[i];
        S->tot_pb[s->peer_rank[i]] += s->peer_bytes[i];
    }
    /* A mark may sit in a later window's sample than its time (a late mark, a slot left
     * behind), never in an earlier one. */
    uint64_t wstart = mw_grid_start(&c->job.grid, s->window);
    uint64_t wlen = mw_grid_len(&c->job.grid, s->window);
    uint64_t slack = 5 * (wlen > S->window_ns ? wlen : S->window_ns) + S->lateness_ns;
    uint64_t lo = wstart > slack ? wstart - slack : 0;
    uint64_t hi = wstart + wlen + S->lateness_ns;
    mw_reject_t r = MW_ACCEPTED;
    for (size_t i = s->n_steps; i-- > 0;) {
        const Mpiwatch__StepMark *m = s->steps[i];
        r = check_mark(S, m, lo, hi);
        if (r != MW_ACCEPTED)
            break;
        hi = m->end_ns; /* marks are in time order */
        /* This mark becomes the bound: clear the old bound, then copy prev_* over. */
        scratch_clear(S, &(Mpiwatch__Sample){.n_functions = s->n_functions,
                                             .functions = s->functions,
                                             .n_peer_rank = s->n_peer_rank,
                                             .peer_rank = s->peer_rank});
        if (i + 1 < s->n_steps)
            scratch_clear(S, &(Mpiwatch__Sample){.n_steps = 1, .steps = s->steps + i + 1});
        for (size_t j = 0; j < m->n_functions; j++) {
            uint32_t fn = m->functions[j]->fn;
            fs_set(&S->tot_fn[fn], m->functions[j]);
            memset(&S->prev_fn[fn], 0, sizeof S->prev_fn[fn]);
        }
        for (size_t j = 0; j < m->n_peer_rank; j++) {
            uint32_t p = m->peer_rank[j];
            S->tot_pm[p] = m->peer_messages[j];
            S->tot_pb[p] = m->peer_bytes[j];
            S->prev_pm[p] = S->prev_pb[p] = 0;
        }
    }
    scratch_clear(S, s);
    return r;
}

/* ---- assembly ----------------------------------------------------------------------------- */

static void stats_add(mw_fn_stats_t *t, const mw_fn_stats_t *x)
{
    if (!x->count && !x->total_ns && !x->bytes)
        return;
    if (x->count) {
        if (t->count == 0 || x->min_ns < t->min_ns)
            t->min_ns = x->min_ns;
        if (x->max_ns > t->max_ns)
            t->max_ns = x->max_ns;
    }
    t->count += x->count;
    t->total_ns += x->total_ns;
    t->bytes += x->bytes;
}

/* The entry of `key` in one of the rank's carry tables, created when absent. A table that is
 * full doubles, and the entries it gains are charged to the job-wide carry budget; when they
 * do not fit (or memory runs out) the segment is left out of the rank's next step and counted
 * as `carry`. The budget counts allocated entries, not used ones, so it bounds memory. */
static void *carry_get(mw_step_assembly_t *S, step_rank_t *r, mw__index_t *ix, uint64_t key,
                       int *created)
{
    *created = 0;
    if (ix->n == ix->cap && S->carry_held + ix->cap > S->carry_budget && !mw__index_find(ix, key)) {
        S->refused[MW_STEPS_CARRY]++;
        return NULL;
    }
    uint32_t before = ix->cap;
    void *v = mw__index_get(ix, key, created);
    if (!v) {
        S->refused[MW_STEPS_CARRY]++; /* the table's own maximum, or out of memory */
        return NULL;
    }
    S->carry_held += ix->cap - before;
    r->charged += ix->cap - before;
    return v;
}

/* Sets up (again) a rank's carry tables at their initial size. On failure a table stays empty
 * and zeroed, so every later segment is refused and counted instead of touching it. */
static int carry_init(mw_step_assembly_t *S, step_rank_t *r)
{
    int fn = mw__index_init(&r->fn, sizeof(mw_fn_stats_t), MW_STEPS_TABLE_INITIAL, MW_FN_SPACE);
    int peer = mw__index_init(&r->peer, sizeof(mw_pair_sum_t), MW_STEPS_TABLE_INITIAL, S->size);
    return fn < 0 || peer < 0 ? -1 : 0;
}

/* Empties a rank's carry. Tables that grew are given back to the budget (freed and set up at
 * their initial size), so the budget measures what the carries hold now, not past peaks. */
static void carry_release(mw_step_assembly_t *S, step_rank_t *r)
{
    mw__index_clear(&r->fn);
    mw__index_clear(&r->peer);
    if (!r->charged)
        return;
    S->carry_held -= r->charged;
    r->charged = 0;
    mw__index_free(&r->fn);
    mw__index_free(&r->peer);
    (void)carry_init(S, r);
}

/* Adds snapshot f minus the previous one (prev_fn) to the rank's carry. */
static void carry_fn(mw_step_assembly_t *S, step_rank_t *r, const Mpiwatch__FunctionStat *f,
                     const mw_fn_stats_t *prev)
{
    mw_fn_stats_t d = {.count = f->count - prev->count,
                       .total_ns = f->total_ns - prev->total_ns,
                       .bytes = f->bytes - prev->bytes,
                       .min_ns = f->min_ns,
                       .max_ns = f->max_ns};
    if (!d.count && !d.total_ns && !d.bytes)
        return;
    int created;
    mw_fn_stats_t *t = carry_get(S, r, &r->fn, f->fn, &created);
    if (t)
        stats_add(t, &d);
}

static void carry_peer(mw_step_assembly_t *S, step_rank_t *r, uint32_t peer, uint64_t messages,
                       uint64_t bytes)
{
    if (!messages && !bytes)
        return;
    int created;
    mw_pair_sum_t *p = carry_get(S, r, &r->peer, peer, &created);
    if (p)
        mw__pair_add(p, created, 0, peer, messages, bytes);
}

static int cmp_fs(const void *a, const void *b)
{
    uint32_t x = (*(Mpiwatch__FunctionStat *const *)a)->fn;
    uint32_t y = (*(Mpiwatch__FunctionStat *const *)b)->fn;
    return x < y ? -1 : x > y;
}

static int cmp_pair(const void *a, const void *b)
{
    const mw_pair_sum_t *x = a, *y = b;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    return x->dst < y->dst ? -1 : x->dst > y->dst;
}

/* Emits an open step and frees its entry. */
static void step_close(mw_collector_t *c, step_open_t *o)
{
    mw_step_assembly_t *S = c->steps;
    Mpiwatch__Step st = MPIWATCH__STEP__INIT;
    st.step = o->step;
    st.start_ns = o->start_ns;
    st.end_ns = o->end_ns;
    st.ranks = o->ranks;
    st.folded = o->folded;
    size_t nf = 0;
    for (uint32_t i = 0; i < o->fn.n && nf < MW_FN_SPACE; i++) {
        const mw_fn_stats_t *t = MW__INDEX_AT(&o->fn, const mw_fn_stats_t, i);
        Mpiwatch__FunctionStat *f = &S->fs[nf];
        mpiwatch__function_stat__init(f);
        f->fn = (uint32_t)o->fn.keys[i];
        f->count = t->count;
        f->total_ns = t->total_ns;
        f->min_ns = t->min_ns;
        f->max_ns = t->max_ns;
        f->bytes = t->bytes;
        st.mpi_time_ns += t->total_ns;
        S->fsp[nf++] = f;
    }
    qsort(S->fsp, nf, sizeof S->fsp[0], cmp_fs);
    st.n_functions = nf;
    st.functions = S->fsp;
    size_t np = o->pairs.n;
    if (np > S->p_cap) {
        /* Room to grow, never beyond what one step can hold (docs/steps.md: 96 MiB). */
        size_t cap = np < MW_STEPS_MAX_PAIRS / 2 ? np * 2 : MW_STEPS_MAX_PAIRS;
        uint32_t *a = realloc(S->p_src, cap * sizeof *a),
                 *b = a ? realloc(S->p_dst, cap * sizeof *b) : NULL;
        if (a)
            S->p_src = a;
        if (b)
            S->p_dst = b;
        uint64_t *m = b ? realloc(S->p_msg, cap * sizeof *m) : NULL;
        if (m)
            S->p_msg = m;
        uint64_t *y = m ? realloc(S->p_bytes, cap * sizeof *y) : NULL;
        if (y) {
            S->p_bytes = y;
            S->p_cap = cap;
        } else {
            np = S->p_cap; /* out of memory: the pairs that fit */
        }
    }
    mw_pair_sum_t *pairs = o->pairs.vals;
    qsort(pairs, o->pairs.n, sizeof *pairs, cmp_pair); /* a list: never looked up again */
    for (size_t i = 0; i < np; i++) {
        S->p_src[i] = pairs[i].src;
        S->p_dst[i] = pairs[i].dst;
        S->p_msg[i] = pairs[i].messages;
        S->p_bytes[i] = pairs[i].bytes;
    }
    st.n_pair_src = st.n_pair_dst = st.n_pair_messages = st.n_pair_bytes = np;
    st.pair_src = S->p_src;
    st.pair_dst = S->p_dst;
    st.pair_messages = S->p_msg;
    st.pair_bytes = S->p_bytes;

    S->closed++;
    /* The rules, the recording, the feed and the steps kept for the summary take it from the
     * publish path (publish.c). */
    mw__publish_step(c, &st);
    if (mw__partial_aggregating(c))
        mw__partial_step_closed(c, &st); /* an aggregator: it goes up with the next partial */
    mw__index_clear(&o->fn);
    mw__index_clear(&o->pairs);
    if (o->charged) {
        /* A slot whose pair list grew gives it back: step_entry() sets it up again small. */
        S->pairs_held -= o->charged;
        o->charged = 0;
        mw__index_free(&o->fn);
        mw__index_free(&o->pairs);
        o->ready = 0;
    }
}

/* The position in `order` of `step`, or where it would go. */
static uint32_t order_find(mw_step_assembly_t *S, uint64_t step)
{
    uint32_t lo = 0, hi = S->n_open;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        S->work++;
        if (S->open[S->order[mid]].step < step)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static step_open_t *open_find(mw_step_assembly_t *S, int64_t step)
{
    if (step < 0 || !S->n_open)
        return NULL;
    uint32_t i = order_find(S, (uint64_t)step);
    return i < S->n_open && S->open[S->order[i]].step == (uint64_t)step ? &S->open[S->order[i]]
                                                                        : NULL;
}

/* Emits the lowest open step: it becomes the floor and its ranks fall behind. */
static void close_lowest(mw_collector_t *c)
{
    mw_step_assembly_t *S = c->steps;
    uint32_t slot = S->order[0];
    step_open_t *o = &S->open[slot];
    S->work++;
    S->floor = (int64_t)o->step;
    S->behind += o->at;
    step_close(c, o);
    memmove(S->order, S->order + 1, (S->n_open - 1) * sizeof S->order[0]);
    S->n_open--;
    S->free_slot[S->n_free++] = slot;
}

/* Closes the steps every expected rank has passed, lowest first. */
static void close_ready(mw_collector_t *c)
{
    mw_step_assembly_t *S = c->steps;
    while (S->n_open && S->behind == 0)
        close_lowest(c);
}

/* The open entry of `step` (> floor), opened if needed; NULL when the step cannot be opened
 * (below every open step while MW_STEPS_MAX_OPEN are open, or out of memory). */
static step_open_t *step_entry(mw_collector_t *c, uint64_t step)
{
    mw_step_assembly_t *S = c->steps;
    uint32_t pos = order_find(S, step);
    if (pos < S->n_open && S->open[S->order[pos]].step == step)
        return &S->open[S->order[pos]];
    if (S->n_open == MW_STEPS_MAX_OPEN) {
        /* Too many steps waiting for slow or silent ranks: the oldest goes as it is, unless
         * the new step would be older still. */
        if (pos == 0) {
            S->refused[MW_STEPS_BELOW_OPEN]++;
            return NULL;
        }
        S->refused[MW_STEPS_FORCED]++;
        close_lowest(c);
        pos--;
    }
    uint32_t slot = S->free_slot[S->n_free - 1];
    step_open_t *o = &S->open[slot];
    if (!o->ready) {
        if (mw__index_init(&o->fn, sizeof(mw_fn_stats_t), 16, MW_FN_SPACE) < 0)
            return NULL;
        if (mw__index_init_list(&o->pairs, sizeof(mw_pair_sum_t), MW_STEPS_TABLE_INITIAL,
                                MW_STEPS_MAX_PAIRS) < 0) {
            mw__index_free(&o->fn);
            return NULL;
        }
        o->ready = 1;
    }
    S->n_free--;
    memmove(S->order + pos + 1, S->order + pos, (S->n_open - pos) * sizeof S->order[0]);
    S->order[pos] = slot;
    S->n_open++;
    o->step = step;
    o->start_ns = UINT64_MAX;
    o->end_ns = 0;
    o->ranks = o->folded = o->at = 0;
    return o;
}

/* The highest step the rank ended, -1 none. Stored plus one so that a rank that never sent a
 * sample is all zeros: the per-rank arrays come from calloc and are never written for such a
 * rank, so a hello claiming 2^20 ranks costs address space, not memory (docs/steps.md). */
static int64_t rank_passed(const step_rank_t *r)
{
    return (int64_t)r->passed1 - 1;
}

/* The rank's `passed` moves to `step` (an open step above it): one counter to another. */
static void rank_pass(mw_step_assembly_t *S, step_rank_t *r, step_open_t *o)
{
    if (!r->gone) {
        step_open_t *from = rank_passed(r) > S->floor ? open_find(S, rank_passed(r)) : NULL;
        if (from)
            from->at--;
        else
            S->behind--;
        o->at++;
    }
    r->passed1 = o->step + 1; /* step <= INT64_MAX (checked) */
}

/* The rank ended `m->step`: its carry goes into the step's entry. Pairs of one rank are
 * distinct per (src, dst), but a step gets each rank once only for a well-behaved rank; a
 * rank that reports a step twice gets a second pair entry, which the sums still count. */
static void rank_ends_step(mw_collector_t *c, uint32_t rank, const Mpiwatch__StepMark *m)
{
    mw_step_assembly_t *S = c->steps;
    step_rank_t *r = &S->rank[rank];
    S->work++;
    step_open_t *o = (int64_t)m->step > S->floor ? step_entry(c, m->step) : NULL;
    if (!o) {
        /* A closed step (or one refused): its calls stay in the carry, folded into the next
         * step this rank ends. */
        if ((int64_t)m->step <= S->floor)
            S->refused[MW_STEPS_LATE]++;
        r->folded += 1 + m->folded;
        return;
    }
    {
        o->ranks++;
        o->folded += m->folded + r->folded;
        r->folded = 0;
        if (r->start_ns < o->start_ns)
            o->start_ns = r->start_ns;
        if (m->end_ns > o->end_ns)
            o->end_ns = m->end_ns;
        for (uint32_t i = 0; i < r->fn.n; i++) {
            int created;
            mw_fn_stats_t *t = mw__index_get(&o->fn, r->fn.keys[i], &created);
            if (t)
                stats_add(t, MW__INDEX_AT(&r->fn, const mw_fn_stats_t, i));
        }
        for (uint32_t i = 0; i < r->peer.n; i++) {
            const mw_pair_sum_t *p = MW__INDEX_AT(&r->peer, const mw_pair_sum_t, i);
            /* A full list doubles; what it gains is charged to the job-wide pair budget. */
            if (o->pairs.n == o->pairs.cap && S->pairs_held + o->pairs.cap > MW_STEPS_MAX_PAIRS) {
                S->refused[MW_STEPS_PAIRS] += r->peer.n - i;
                break;
            }
            uint32_t before = o->pairs.cap;
            mw_pair_sum_t *q = mw__index_append(&o->pairs, (uint64_t)rank << 32 | p->dst);
            if (!q) {
                S->refused[MW_STEPS_PAIRS]++; /* the list's maximum, or out of memory */
                continue;
            }
            S->pairs_held += o->pairs.cap - before;
            o->charged += o->pairs.cap - before;
            mw__pair_add(q, 1, rank, p->dst, p->messages, p->bytes);
        }
    }
    carry_release(S, r);
    r->start_ns = m->end_ns;
    if ((int64_t)m->step > rank_passed(r))
        rank_pass(S, r, o);
}

void mw__steps_sample(mw_collector_t *c, uint32_t rank, const Mpiwatch__Sample *s)
{
    mw_step_assembly_t *S = c->steps;
    if (!S || rank >= S->size)
        return;
    step_rank_t *r = &S->rank[rank];
    if (!r->ready) {
        if (carry_init(S, r) < 0) {
            mw__index_free(&r->fn);
            mw__index_free(&r->peer);
            return;
        }
        r->ready = 1;
        r->start_ns = mw_grid_start(&c->job.grid, s->window);
    }
    /* prev_* hold the previous mark of this window (zero before the first). */
    for (size_t i = 0; i < s->n_steps; i++) {
        const Mpiwatch__StepMark *m = s->steps[i];
        for (size_t j = 0; j < m->n_functions; j++)
            carry_fn(S, r, m->functions[j], &S->prev_fn[m->functions[j]->fn]);
        for (size_t j = 0; j < m->n_peer_rank; j++) {
            uint32_t p = m->peer_rank[j];
            carry_peer(S, r, p, m->peer_messages[j] - S->prev_pm[p],
                       m->peer_bytes[j] - S->prev_pb[p]);
        }
        S->marks++;
        rank_ends_step(c, rank, m);
        if (i > 0)
            scratch_clear(S, &(Mpiwatch__Sample){.n_steps = 1, .steps = s->steps + i - 1});
        for (size_t j = 0; j < m->n_functions; j++)
            fs_set(&S->prev_fn[m->functions[j]->fn], m->functions[j]);
        for (size_t j = 0; j < m->n_peer_rank; j++) {
            S->prev_pm[m->peer_rank[j]] = m->peer_messages[j];
            S->prev_pb[m->peer_rank[j]] = m->peer_bytes[j];
        }
    }
    /* The rest of the window belongs to the rank's next step. Peers may repeat in a sample
     * (nothing forbids it), so the window's totals per peer are summed first. */
    for (size_t i = 0; i < s->n_functions; i++)
        carry_fn(S, r, s->functions[i], &S->prev_fn[s->functions[i]->fn]);
    for (size_t i = 0; i < s->n_peer_rank; i++) {
        uint32_t p = s->peer_rank[i];
        S->tot_pm[p] += s->peer_messages[i];
        S->tot_pb[p] += s->peer_bytes[i];
    }
    for (size_t i = 0; i < s->n_peer_rank; i++) {
        uint32_t p = s->peer_rank[i];
        if (S->tot_pm[p] || S->tot_pb[p]) {
            carry_peer(S, r, p, S->tot_pm[p] - S->prev_pm[p], S->tot_pb[p] - S->prev_pb[p]);
            S->tot_pm[p] = S->tot_pb[p] = 0;
        }
    }
    if (s->n_steps) {
        scratch_clear(S, &(Mpiwatch__Sample){.n_steps = 1, .steps = s->steps + s->n_steps - 1});
        close_ready(c);
    }
}

/* Steps from an aggregator's partial (checked: partial.c): each is a step every one of its
 * ranks ended, its figures summed over them. They add to the step's open entry as the ranks'
 * own marks would (ranks, functions and pairs add, start is the earliest, end the latest), and
 * every listed rank passes the step, so that it closes here once every rank expected here has
 * passed it, as for marks. O(steps x (functions + pairs + ranks listed)). */
void mw__steps_partial(mw_collector_t *c, const Mpiwatch__Partial *pa)
{
    mw_step_assembly_t *S = c->steps;
    if (!S || !pa->n_steps)
        return;
    for (size_t i = 0; i < pa->n_steps; i++) {
        const Mpiwatch__Step *st = pa->steps[i];
        S->marks++;
        step_open_t *o = (int64_t)st->step > S->floor ? step_entry(c, st->step) : NULL;
        if (!o) {
            if ((int64_t)st->step <= S->floor)
                S->refused[MW_STEPS_LATE]++;
            continue;
        }
        o->ranks += st->ranks;
        o->folded += st->folded;
        if (st->start_ns < o->start_ns)
            o->start_ns = st->start_ns;
        if (st->end_ns > o->end_ns)
            o->end_ns = st->end_ns;
        for (size_t j = 0; j < st->n_functions; j++) {
            const Mpiwatch__FunctionStat *f = st->functions[j];
            int created;
            mw_fn_stats_t *t = mw__index_get(&o->fn, f->fn, &created);
            if (t)
                stats_add(t, &(mw_fn_stats_t){.count = f->count,
                                              .total_ns = f->total_ns,
                                              .min_ns = f->min_ns,
                                              .max_ns = f->max_ns,
                                              .bytes = f->bytes});
        }
        for (size_t j = 0; j < st->n_pair_src; j++) {
            if (o->pairs.n == o->pairs.cap && S->pairs_held + o->pairs.cap > MW_STEPS_MAX_PAIRS) {
                S->refused[MW_STEPS_PAIRS] += st->n_pair_src - j;
                break;
            }
            uint32_t before = o->pairs.cap;
            mw_pair_sum_t *q =
                mw__index_append(&o->pairs, (uint64_t)st->pair_src[j] << 32 | st->pair_dst[j]);
            if (!q) {
                S->refused[MW_STEPS_PAIRS]++;
                continue;
            }
            S->pairs_held += o->pairs.cap - before;
            o->charged += o->pairs.cap - before;
            mw__pair_add(q, 1, st->pair_src[j], st->pair_dst[j], st->pair_messages[j],
                         st->pair_bytes[j]);
        }
        for (size_t k = 0; k < pa->n_rank_first; k++)
            for (uint32_t j = 0; j < pa->rank_count[k]; j++) {
                step_rank_t *r = &S->rank[pa->rank_first[k] + j];
                S->work++;
                if ((int64_t)st->step > rank_passed(r))
                    rank_pass(S, r, o);
            }
    }
    close_ready(c);
}

void mw__steps_leave(mw_collector_t *c, uint32_t rank)
{
    mw_step_assembly_t *S = c->steps;
    if (!S || rank >= S->size || S->rank[rank].gone)
        return;
    step_rank_t *r = &S->rank[rank];
    step_open_t *at = rank_passed(r) > S->floor ? open_find(S, rank_passed(r)) : NULL;
    if (at)
        at->at--;
    else
        S->behind--;
    r->gone = 1; /* what it did after its last mark belongs to no step */
    if (r->ready)
        carry_release(S, r);
    close_ready(c);
}

void mw__steps_end(mw_collector_t *c)
{
    mw_step_assembly_t *S = c->steps;
    if (!S)
        return;
    while (S->n_open)
        close_lowest(c);
    const uint64_t *n = S->refused;
    if (n[MW_STEPS_LATE] || n[MW_STEPS_BELOW_OPEN] || n[MW_STEPS_FORCED])
        MW_LOG(MW_LOG_WARN,
               "steps: %" PRIu64 " closed before every rank ended them (over %u open), %" PRIu64
               " mark(s) of closed steps and %" PRIu64 " over the cap folded into later steps",
               n[MW_STEPS_FORCED], MW_STEPS_MAX_OPEN, n[MW_STEPS_LATE], n[MW_STEPS_BELOW_OPEN]);
    if (n[MW_STEPS_PAIRS] || n[MW_STEPS_CARRY])
        MW_LOG(MW_LOG_WARN,
               "steps: %" PRIu64 " pair(s) over the %u pair entries of open steps and %" PRIu64
               " function or peer segment(s) over the carry budget (%" PRIu64
               " entries) left out of their steps (the windows have them)",
               n[MW_STEPS_PAIRS], MW_STEPS_MAX_PAIRS, n[MW_STEPS_CARRY], S->carry_budget);
}

void mw__steps_keep(mw_collector_t *c, const uint8_t *pb, size_t len)
{
    mw_step_assembly_t *S = c->steps;
    if (!S || S->n_kept >= MW_STEPS_KEEP)
        return;
    if (S->n_kept % 1024 == 0) {
        uint8_t **k = realloc(S->kept, (S->n_kept + 1024) * sizeof *k);
        if (k)
            S->kept = k;
        size_t *kl = k ? realloc(S->kept_len, (S->n_kept + 1024) * sizeof *kl) : NULL;
        if (kl)
            S->kept_len = kl;
        if (!k || !kl)
            return;
    }
    uint8_t *copy = malloc(len);
    if (copy) {
        memcpy(copy, pb, len);
        S->kept[S->n_kept] = copy;
        S->kept_len[S->n_kept++] = len;
    }
}

size_t mw__steps_kept(const mw_collector_t *c, size_t i, const uint8_t **pb)
{
    const mw_step_assembly_t *S = c->steps;
    if (!S || i >= S->n_kept)
        return 0;
    *pb = S->kept[i];
    return S->kept_len[i];
}

uint64_t mw__steps_closed(const mw_collector_t *c)
{
    return c->steps ? c->steps->closed : 0;
}

uint64_t mw__steps_work(const mw_collector_t *c)
{
    return c->steps ? c->steps->work : 0;
}

uint64_t mw__steps_refused(const mw_collector_t *c, mw_steps_refusal_t reason)
{
    const mw_step_assembly_t *S = c->steps;
    return S && (unsigned)reason < MW_STEPS_REFUSAL_COUNT ? S->refused[reason] : 0;
}

const char *mw__steps_refusal_name(mw_steps_refusal_t reason)
{
    static const char *const names[] = {
#define MW_X(id, name) name,
        MW_STEPS_REFUSALS(MW_X)
#undef MW_X
    };
    return (unsigned)reason < MW_STEPS_REFUSAL_COUNT ? names[reason] : "?";
}

int mw__steps_marked(const mw_collector_t *c)
{
    return c->steps && c->steps->marks > 0;
}

void mw__steps_held(const mw_collector_t *c, uint64_t *carry, uint64_t *carry_budget,
                    uint64_t *pairs)
{
    const mw_step_assembly_t *S = c->steps;
    *carry = S ? S->carry_held : 0;
    *carry_budget = S ? S->carry_budget : 0;
    *pairs = S ? S->pairs_held : 0;
}
