/* mw_logical.c: logical steps, lateness and differential lateness of traced MPI calls, as a
 * stream of windows (mw_logical.h, docs/logical.md).
 *
 * DESIGN: the stream holds the records that communicate (events) of the windows whose events
 * are not all final yet, plus the completions of non-blocking collectives and the communication
 * calls still in progress at a window's end (a collective one may be any instance's missing
 * member; a rank waiting inside one holds the partition of its last event). Each push re-runs
 * the whole analysis over what it holds: matching (mw_trace_match), partitions (union-find of
 * messages and collective instances, then strongly connected components of the partition graph
 * merged, then the optional leap merge), the order of partitions, and the finality rule. Final
 * partitions get their steps (longest path from the partition's first events, sends and
 * receives linked, a collective instance one node), a global offset (each rank's steps keep
 * increasing across partitions and pushes) and lateness, in a topological order of the
 * partitions; what they leave behind on each rank (last event's id, step, end, lateness) is
 * carried into the next push. Held events are at most MW_LOGICAL_MAX_PENDING_EVENTS and held
 * windows at most MW_LOGICAL_MAX_PENDING_WINDOWS, so re-analysing them costs a bounded factor.
 *
 * Invariants: a partition is final only when its DAG predecessors are, so each rank's final
 * events are a prefix of its events (what `first` of a part tracks). Every order is a sort with
 * a full tie-break on event indices, which follow the input order (windows, ranks ascending,
 * records): the same pushes give the same bytes. Only sorting, union-find and linear passes:
 * O(E log E) per push whatever the records say; the strongly connected components and the
 * topological orders are iterative (no recursion whose depth the input controls); a cycle that
 * survives inside a partition (inconsistent records) is broken at its smallest event rather
 * than looped on. Times are added and subtracted with saturation (records come from the
 * network).
 */
#include "mw_logical.h"
#include "mw_fn_def.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* How far back a receive's completion looks for the call that completed it (its start is the
 * event's start: the time spent waiting belongs to the event, not to the computation). */
#define LOGICAL_BACKSCAN 64u

typedef struct {
    uint32_t rec;       /* record index in the rank's trace of its window */
    uint32_t call;      /* a receive's completing call (record index), UINT32_MAX none */
    int64_t start, end; /* job time */
} logical_meta_t;

/* One rank's kept records of one held window: events and completions of collectives. */
typedef struct {
    uint32_t rank;
    uint32_t nkept, first; /* kept records before `first` are final (or no longer needed) */
    uint32_t nin;          /* records the window brought for the rank (kept or not) */
    mw_trace_rec_t *recs;
    logical_meta_t *meta;
} logical_part_t;

typedef struct {
    uint64_t window;
    int64_t start_ns;
    logical_part_t *parts; /* ranks ascending */
    size_t nparts;
    uint64_t pending; /* its events not final yet */
    mw_logical_summary_t sum;
} logical_win_t;

/* What the finalized events left on one rank. */
typedef struct {
    uint32_t rank;
    uint8_t has;      /* id, late, end describe the rank's previous event */
    uint8_t has_step; /* step is the rank's last step (kept across gaps) */
    uint64_t id, step;
    int64_t late, end;
} logical_carry_t;

struct mw_logical_stream {
    mw_logical_opts_t opts;
    logical_win_t wins[MW_LOGICAL_MAX_PENDING_WINDOWS + 1];
    size_t nwins;
    logical_carry_t *carry; /* ranks ascending */
    size_t ncarry, carry_cap;
    uint64_t last_window;
    int has_last;
    uint64_t next_id, next_part;
    mw_logical_stats_t st;
};

/* ---- small helpers ------------------------------------------------------------------------ */

static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

static int64_t sat_sub(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r))
        return b < 0 ? INT64_MAX : INT64_MIN;
    return r;
}

static uint64_t usat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static void *xcalloc(size_t n, size_t size)
{
    return calloc(n ? n : 1, size);
}

/* The event kind of a record (MW_LE_*), 0 when it is not an event. */
static uint8_t event_kind(const mw_trace_rec_t *r)
{
    if (r->flags & MW_TF_OPEN)
        return 0;
    switch (r->kind) {
    case MW_TK_SEND:
    case MW_TK_ISEND:
        return (r->flags & MW_TF_PROC_NULL) ? 0 : MW_LE_SEND;
    case MW_TK_RECV:
    case MW_TK_RECV_DONE:
        return (r->flags & (MW_TF_PROC_NULL | MW_TF_CANCELLED)) ? 0 : MW_LE_RECV;
    case MW_TK_COLL:
    case MW_TK_ICOLL:
        return MW_LE_COLL;
    default:
        return 0;
    }
}

/* Whether function id is a collective: the table's kind column, expanded here so that this
 * library needs no protobuf-c (as mw_trace.c). */
enum {
#define MW_FN(name, ret, kind, ...) LOGICAL_FN_##name,
#include MW_FN_TABLE_DEF
#undef MW_FN
    LOGICAL_FN_ROWS
};
static const uint8_t fn_coll[LOGICAL_FN_ROWS + 1] = {
    0, /* id 0: none */
#define LOGICAL_IS_COLL_COLL 1
#define LOGICAL_IS_COLL_SEND 0
#define LOGICAL_IS_COLL_RECV 0
#define LOGICAL_IS_COLL_WAIT 0
#define LOGICAL_IS_COLL_RMA 0
#define LOGICAL_IS_COLL_IO 0
#define LOGICAL_IS_COLL_QUERY 0
#define LOGICAL_IS_COLL_OTHER 0
#define LOGICAL_IS_COLL_SPECIAL 0
#define MW_FN(name, ret, kind, ...) LOGICAL_IS_COLL_##kind,
#include MW_FN_TABLE_DEF
#undef MW_FN
};

/* Whether function id communicates or waits for communication (kinds SEND, RECV, WAIT, COLL):
 * a rank inside such a call is waiting for an event of its own to end. */
static const uint8_t fn_comm[LOGICAL_FN_ROWS + 1] = {
    0, /* id 0: none */
#define LOGICAL_IS_COMM_COLL 1
#define LOGICAL_IS_COMM_SEND 1
#define LOGICAL_IS_COMM_RECV 1
#define LOGICAL_IS_COMM_WAIT 1
#define LOGICAL_IS_COMM_RMA 0
#define LOGICAL_IS_COMM_IO 0
#define LOGICAL_IS_COMM_QUERY 0
#define LOGICAL_IS_COMM_OTHER 0
#define LOGICAL_IS_COMM_SPECIAL 0
#define MW_FN(name, ret, kind, ...) LOGICAL_IS_COMM_##kind,
#include MW_FN_TABLE_DEF
#undef MW_FN
};

/* A collective call still in progress at the end of its window (its record comes later). */
static int open_coll(const mw_trace_rec_t *r)
{
    return (r->flags & MW_TF_OPEN) && r->fn < sizeof fn_coll && fn_coll[r->fn];
}

/* A communication call (or a wait) still in progress at the end of its window. */
static int open_comm(const mw_trace_rec_t *r)
{
    return (r->flags & MW_TF_OPEN) && r->fn < sizeof fn_comm && fn_comm[r->fn];
}

/* Records a part keeps: events, completions of collectives, communication calls in progress
 * (collectives among them). */
static int kept_record(const mw_trace_rec_t *r)
{
    return event_kind(r) || (r->kind == MW_TK_COLL_DONE && !(r->flags & MW_TF_OPEN)) ||
           open_comm(r);
}

static int64_t rec_start(int64_t base, const mw_trace_rec_t *r)
{
    return sat_add(base, r->start_ns);
}

static int64_t rec_end(int64_t start, const mw_trace_rec_t *r)
{
    return sat_add(start, r->dur_ns > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)r->dur_ns);
}

const char *mw_logical_class_name(unsigned cls)
{
    static const char *const names[MW_LATE_COUNT] = {"none", "rank", "message", "compute", "call"};
    return cls < MW_LATE_COUNT ? names[cls] : "?";
}

static int u32_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* ---- union-find ----------------------------------------------------------------------------- */

static uint32_t uf_find(uint32_t *p, uint32_t x)
{
    while (p[x] != x) {
        p[x] = p[p[x]];
        x = p[x];
    }
    return x;
}

static void uf_union(uint32_t *p, uint32_t *sz, uint32_t a, uint32_t b)
{
    a = uf_find(p, a);
    b = uf_find(p, b);
    if (a == b)
        return;
    if (sz[a] < sz[b]) {
        uint32_t t = a;
        a = b;
        b = t;
    }
    p[b] = a;
    sz[a] += sz[b];
}

/* ---- the batch being built -------------------------------------------------------------- */

typedef struct {
    mw_logical_batch_t b;
    size_t ev_cap, part_cap, win_cap;
    int64_t *lost; /* per batch event: its contribution to lost time */
} logical_out_t;

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 64;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * size);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

static void sum_add(mw_logical_summary_t *m, const mw_logical_event_t *e, int64_t lost)
{
    m->events++;
    if (m->events == 1 || e->lateness_ns > m->lateness_max_ns) {
        m->lateness_max_ns = e->lateness_ns;
        m->lateness_rank = e->rank;
        m->lateness_fn = e->fn;
        m->lateness_step = e->step;
    }
    if (m->events == 1 || e->diff_ns > m->diff_max_ns) {
        m->diff_max_ns = e->diff_ns;
        m->diff_rank = e->rank;
        m->diff_fn = e->fn;
        m->diff_step = e->step;
    }
    m->lost_ns = sat_add(m->lost_ns, lost);
}

void mw_logical_batch_free(mw_logical_batch_t *b)
{
    if (!b)
        return;
    free(b->events);
    free(b->partitions);
    free(b->steps);
    free(b->windows);
    memset(b, 0, sizeof *b);
}

typedef struct {
    uint64_t step;
    size_t idx;
} logical_stepref_t;

static int stepref_cmp(const void *a, const void *b)
{
    const logical_stepref_t *x = a, *y = b;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Per-step summaries of the events the batch holds. */
static int out_steps(logical_out_t *o)
{
    mw_logical_batch_t *b = &o->b;
    if (!b->nevents)
        return 0;
    logical_stepref_t *r = malloc(b->nevents * sizeof *r);
    mw_logical_summary_t *sums = xcalloc(b->nevents, sizeof *sums);
    if (!r || !sums) {
        free(r);
        free(sums);
        return -1;
    }
    for (size_t i = 0; i < b->nevents; i++) {
        r[i].step = b->events[i].step;
        r[i].idx = i;
    }
    qsort(r, b->nevents, sizeof *r, stepref_cmp);
    size_t n = 0;
    for (size_t i = 0; i < b->nevents; i++) {
        if (i == 0 || r[i].step != r[i - 1].step) {
            n++;
            sums[n - 1].key = r[i].step;
        }
        sum_add(&sums[n - 1], &b->events[r[i].idx], o->lost[r[i].idx]);
    }
    free(r);
    free(b->steps);
    b->steps = sums;
    b->nsteps = n;
    return 0;
}

/* ---- carried per-rank state ----------------------------------------------------------------- */

static long carry_find(const mw_logical_stream_t *s, uint32_t rank)
{
    size_t lo = 0, hi = s->ncarry;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->carry[mid].rank < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->ncarry && s->carry[lo].rank == rank ? (long)lo : -1;
}

/* Adds the ranks of `ranks` (ascending, distinct) that have no carry entry yet: a merge of
 * two sorted lists into a fresh array. */
static int carry_merge(mw_logical_stream_t *s, const uint32_t *ranks, size_t n)
{
    size_t add = 0;
    for (size_t i = 0; i < n; i++)
        add += carry_find(s, ranks[i]) < 0;
    if (!add)
        return 0;
    if (s->ncarry + add > MW_LOGICAL_MAX_RANKS)
        return -1;
    logical_carry_t *c = malloc((s->ncarry + add) * sizeof *c);
    if (!c)
        return -1;
    size_t i = 0, j = 0, k = 0;
    while (i < s->ncarry || j < n) {
        if (j >= n || (i < s->ncarry && s->carry[i].rank <= ranks[j])) {
            if (j < n && s->carry[i].rank == ranks[j])
                j++;
            c[k++] = s->carry[i++];
        } else {
            memset(&c[k], 0, sizeof c[k]);
            c[k++].rank = ranks[j++];
        }
    }
    free(s->carry);
    s->carry = c;
    s->ncarry = k;
    s->carry_cap = k;
    return 0;
}

/* ---- the analysis of what the stream holds ------------------------------------------------ */

typedef struct {
    uint32_t part; /* index into the flattened held parts */
    uint32_t k;    /* kept index in the part */
    uint32_t slot; /* carry slot of its rank */
    uint32_t win;  /* held window position */
    int64_t start, end;
    int32_t msg;   /* partner event, -1 */
    int32_t rprev; /* previous held event on its rank, -1 */
    int32_t node;  /* step node (a consistent collective instance is one node) */
    uint32_t grp;  /* first event of its completing call's receives (itself if none) */
    uint8_t kind;
    uint8_t blocks; /* a later window could still complete it */
    uint8_t held;   /* the last held event of a rank still inside a communication call at the
                     * newest window's end (its partition waits, but not at a gap) */
    uint8_t matched;
} logical_ev_t;

typedef struct {
    uint32_t a, b;
} logical_edge_t;

/* Compressed adjacency of n nodes from m edges (sorted, duplicates removed in place). */
typedef struct {
    uint32_t *off, *to;
    size_t n, m;
} logical_adj_t;

static void adj_free(logical_adj_t *g)
{
    free(g->off);
    free(g->to);
    memset(g, 0, sizeof *g);
}

/* Two stable counting sorts (by target, then by source) and a pass that drops duplicates:
 * O(n + m), every node's targets ascending. `reverse` builds the graph of predecessors. */
static int adj_build(logical_adj_t *g, size_t n, const logical_edge_t *e, size_t m, int reverse)
{
    memset(g, 0, sizeof *g);
    uint32_t *cnt = xcalloc(n + 1, sizeof *cnt);
    uint32_t *by_b = malloc((m ? m : 1) * sizeof *by_b);
    uint32_t *full = malloc((m ? m : 1) * sizeof *full);
    g->off = xcalloc(n + 1, sizeof *g->off);
    g->to = malloc((m ? m : 1) * sizeof *g->to);
    if (!cnt || !by_b || !full || !g->off || !g->to) {
        free(cnt);
        free(by_b);
        free(full);
        adj_free(g);
        return -1;
    }
#define SRC(i) (reverse ? e[(i)].b : e[(i)].a)
#define DST(i) (reverse ? e[(i)].a : e[(i)].b)
    for (size_t i = 0; i < m; i++)
        cnt[DST(i) + 1]++;
    for (size_t v = 0; v < n; v++)
        cnt[v + 1] += cnt[v];
    for (size_t i = 0; i < m; i++)
        by_b[cnt[DST(i)]++] = (uint32_t)i;
    memset(cnt, 0, (n + 1) * sizeof *cnt);
    for (size_t i = 0; i < m; i++)
        cnt[SRC(i) + 1]++;
    for (size_t v = 0; v < n; v++)
        cnt[v + 1] += cnt[v];
    for (size_t k = 0; k < m; k++) {
        uint32_t i = by_b[k];
        full[cnt[SRC(i)]++] = DST(i);
    }
    /* cnt[v] is now the end of v's range; its start is cnt[v - 1] (0 for v = 0) */
    size_t u = 0;
    for (size_t v = 0; v < n; v++) {
        size_t from = v ? cnt[v - 1] : 0;
        for (size_t k = from; k < cnt[v]; k++)
            if (k == from || full[k] != full[k - 1])
                g->to[u++] = full[k];
        g->off[v + 1] = (uint32_t)u;
    }
#undef SRC
#undef DST
    free(cnt);
    free(by_b);
    free(full);
    g->n = n;
    g->m = u;
    return 0;
}

/* Strongly connected components (Tarjan, iterative). comp[v] = component, numbered in the
 * order components complete. Returns the number of components, or -1 (no memory). */
static long scc(const logical_adj_t *g, uint32_t *comp)
{
    size_t n = g->n;
    uint32_t *idx = malloc((n ? n : 1) * sizeof *idx), *low = malloc((n ? n : 1) * sizeof *low);
    uint32_t *stk = malloc((n ? n : 1) * sizeof *stk), *cs = malloc((n ? n : 1) * sizeof *cs);
    uint32_t *it = malloc((n ? n : 1) * sizeof *it);
    uint8_t *on = xcalloc(n, 1);
    if (!idx || !low || !stk || !cs || !it || !on) {
        free(idx), free(low), free(stk), free(cs), free(it), free(on);
        return -1;
    }
    const uint32_t UNSEEN = UINT32_MAX;
    for (size_t v = 0; v < n; v++)
        idx[v] = UNSEEN;
    uint32_t counter = 0, ncomp = 0;
    size_t sp = 0, csp = 0;
    for (size_t root = 0; root < n; root++) {
        if (idx[root] != UNSEEN)
            continue;
        cs[csp++] = (uint32_t)root;
        idx[root] = low[root] = counter++;
        it[root] = g->off[root];
        stk[sp++] = (uint32_t)root;
        on[root] = 1;
        while (csp) {
            uint32_t v = cs[csp - 1];
            if (it[v] < g->off[v + 1]) {
                uint32_t w = g->to[it[v]++];
                if (idx[w] == UNSEEN) {
                    idx[w] = low[w] = counter++;
                    it[w] = g->off[w];
                    stk[sp++] = w;
                    on[w] = 1;
                    cs[csp++] = w;
                } else if (on[w] && idx[w] < low[v]) {
                    low[v] = idx[w];
                }
                continue;
            }
            csp--;
            if (csp && low[v] < low[cs[csp - 1]])
                low[cs[csp - 1]] = low[v];
            if (low[v] == idx[v]) {
                uint32_t w;
                do {
                    w = stk[--sp];
                    on[w] = 0;
                    comp[w] = ncomp;
                } while (w != v);
                ncomp++;
            }
        }
    }
    free(idx), free(low), free(stk), free(cs), free(it), free(on);
    return (long)ncomp;
}

/* A binary min-heap of uint32 (deterministic order of ready nodes). */
typedef struct {
    uint32_t *a;
    size_t n;
} logical_heap_t;

static void heap_push(logical_heap_t *h, uint32_t v)
{
    size_t i = h->n++;
    h->a[i] = v;
    while (i > 0 && h->a[(i - 1) / 2] > h->a[i]) {
        uint32_t t = h->a[i];
        h->a[i] = h->a[(i - 1) / 2];
        h->a[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static uint32_t heap_pop(logical_heap_t *h)
{
    uint32_t top = h->a[0];
    h->a[0] = h->a[--h->n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->n && h->a[l] < h->a[m])
            m = l;
        if (r < h->n && h->a[r] < h->a[m])
            m = r;
        if (m == i)
            break;
        uint32_t t = h->a[i];
        h->a[i] = h->a[m];
        h->a[m] = t;
        i = m;
    }
    return top;
}

/* Topological order of an acyclic graph, smallest ready node first. Returns 0 or -1. */
static int topo(const logical_adj_t *g, uint32_t *order)
{
    size_t n = g->n;
    uint32_t *indeg = xcalloc(n, sizeof *indeg);
    logical_heap_t h = {malloc((n ? n : 1) * sizeof(uint32_t)), 0};
    if (!indeg || !h.a) {
        free(indeg);
        free(h.a);
        return -1;
    }
    for (size_t i = 0; i < g->m; i++)
        indeg[g->to[i]]++;
    for (size_t v = 0; v < n; v++)
        if (!indeg[v])
            heap_push(&h, (uint32_t)v);
    size_t k = 0;
    while (h.n) {
        uint32_t v = heap_pop(&h);
        order[k++] = v;
        for (uint32_t i = g->off[v]; i < g->off[v + 1]; i++)
            if (--indeg[g->to[i]] == 0)
                heap_push(&h, g->to[i]);
    }
    /* Not reached for an acyclic graph; kept so that a mistake cannot leave holes. */
    for (size_t v = 0; v < n && k < n; v++)
        if (indeg[v])
            order[k++] = (uint32_t)v;
    free(indeg);
    free(h.a);
    return 0;
}

typedef struct {
    uint64_t key;
    uint32_t idx;
    uint32_t slot;
} logical_sortref_t;

static int sortref_cmp(const void *a, const void *b)
{
    const logical_sortref_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->slot != y->slot)
        return x->slot < y->slot ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The working state of one analysis. */
typedef struct {
    logical_part_t **parts; /* flattened held parts */
    uint32_t *part_win;
    size_t nparts;
    uint32_t *part_ev0; /* first event index of each part's pending kept records, by kept
                         * offset: evat[part_off[p] + k - first] */
    size_t *part_off;
    int32_t *evat;
    logical_ev_t *ev;
    size_t nev;
    uint32_t *uf, *ufsz;
    uint32_t *plabel; /* event -> partition label */
    size_t np;
} logical_work_t;

static void work_free(logical_work_t *w)
{
    free(w->parts);
    free(w->part_win);
    free(w->part_ev0);
    free(w->part_off);
    free(w->evat);
    free(w->ev);
    free(w->uf);
    free(w->ufsz);
    free(w->plabel);
    memset(w, 0, sizeof *w);
}

/* Labels partitions 0.. in the order of their first event; returns their number. */
static size_t relabel(logical_work_t *w)
{
    size_t np = 0;
    for (size_t e = 0; e < w->nev; e++)
        w->plabel[e] = UINT32_MAX;
    /* root -> label, found through the first event that has that root */
    uint32_t *root_label = malloc((w->nev ? w->nev : 1) * sizeof *root_label);
    if (!root_label)
        return SIZE_MAX;
    for (size_t e = 0; e < w->nev; e++)
        root_label[e] = UINT32_MAX;
    for (size_t e = 0; e < w->nev; e++) {
        uint32_t r = uf_find(w->uf, (uint32_t)e);
        if (root_label[r] == UINT32_MAX)
            root_label[r] = (uint32_t)np++;
        w->plabel[e] = root_label[r];
    }
    free(root_label);
    w->np = np;
    return np;
}

/* Edges between partitions along each rank's events. */
static int part_edges(const logical_work_t *w, logical_edge_t **out, size_t *m)
{
    logical_edge_t *e = malloc((w->nev ? w->nev : 1) * sizeof *e);
    if (!e)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < w->nev; i++) {
        int32_t p = w->ev[i].rprev;
        if (p >= 0 && w->plabel[p] != w->plabel[i]) {
            e[k].a = w->plabel[p];
            e[k].b = w->plabel[i];
            k++;
        }
    }
    *out = e;
    *m = k;
    return 0;
}

/* Merges the partitions of each cycle. Returns the number of merges, or -1. */
static long merge_cycles(logical_work_t *w)
{
    logical_edge_t *e;
    size_t m;
    logical_adj_t g;
    if (part_edges(w, &e, &m))
        return -1;
    if (adj_build(&g, w->np, e, m, 0)) {
        free(e);
        return -1;
    }
    free(e);
    uint32_t *comp = malloc((w->np ? w->np : 1) * sizeof *comp);
    long nc = comp ? scc(&g, comp) : -1;
    adj_free(&g);
    if (nc < 0) {
        free(comp);
        return -1;
    }
    long merges = (long)w->np - nc;
    if (merges > 0) {
        /* first event of each component, then unite every event with it */
        uint32_t *rep = malloc((size_t)nc * sizeof *rep);
        if (!rep) {
            free(comp);
            return -1;
        }
        for (long c = 0; c < nc; c++)
            rep[c] = UINT32_MAX;
        for (size_t i = 0; i < w->nev; i++) {
            uint32_t c = comp[w->plabel[i]];
            if (rep[c] == UINT32_MAX)
                rep[c] = (uint32_t)i;
            else
                uf_union(w->uf, w->ufsz, rep[c], (uint32_t)i);
        }
        free(rep);
        if (relabel(w) == SIZE_MAX) {
            free(comp);
            return -1;
        }
    }
    free(comp);
    return merges;
}

/* The leap merge (docs/logical.md, Definitions, Partitions 3). The partition DAG is walked in
 * layers (a layer: the partitions whose predecessors are all in earlier layers, i.e. its leap).
 * When the partitions of a layer together miss some of the active ranks, they become one partition,
 * and the partitions that become ready through them join it one by one (in label order) until every
 * active rank is present or none is ready any more; what became ready after that is the next layer.
 * Joining only partitions whose predecessors are all in earlier layers or already joined cannot
 * close a cycle. Each partition enters one layer once: linear after the sort of the edges. Returns
 * the number of merges, or -1. */
static long merge_leaps(logical_work_t *w, size_t nslots)
{
    size_t np = w->np;
    logical_edge_t *e;
    size_t m;
    logical_adj_t g = {0}, gr = {0};
    if (part_edges(w, &e, &m))
        return -1;
    int rc = adj_build(&g, np, e, m, 0) || adj_build(&gr, np, e, m, 1);
    free(e);
    long merges = -1;
    uint32_t *indeg = xcalloc(np, sizeof *indeg);
    uint32_t *pev0 = xcalloc(np + 1, sizeof *pev0); /* events by partition */
    uint32_t *pev = malloc((w->nev ? w->nev : 1) * sizeof *pev);
    uint32_t *stamp = malloc((nslots ? nslots : 1) * sizeof *stamp);
    uint32_t *rep = malloc((np ? np : 1) * sizeof *rep);
    uint32_t *cur = malloc((np ? np : 1) * sizeof *cur);
    uint32_t *cand = malloc((np ? np : 1) * sizeof *cand);
    uint32_t *next = malloc((np ? np : 1) * sizeof *next);
    if (rc || !indeg || !pev0 || !pev || !stamp || !rep || !cur || !cand || !next)
        goto out;
    for (size_t i = 0; i < w->nev; i++)
        pev0[w->plabel[i] + 1]++;
    for (size_t p = 0; p < np; p++)
        pev0[p + 1] += pev0[p];
    {
        uint32_t *fill = malloc((np ? np : 1) * sizeof *fill);
        if (!fill)
            goto out;
        memcpy(fill, pev0, np * sizeof *fill);
        for (size_t i = 0; i < w->nev; i++)
            pev[fill[w->plabel[i]]++] = (uint32_t)i;
        free(fill);
    }
    for (size_t i = 0; i < nslots; i++)
        stamp[i] = UINT32_MAX;
    size_t active = 0;
    for (size_t i = 0; i < w->nev; i++)
        if (stamp[w->ev[i].slot] != 0) {
            stamp[w->ev[i].slot] = 0;
            active++;
        }
    for (size_t i = 0; i < nslots; i++)
        stamp[i] = UINT32_MAX;
    size_t ncur = 0;
    for (size_t p = 0; p < np; p++) {
        rep[p] = pev[pev0[p]];
        indeg[p] = gr.off[p + 1] - gr.off[p];
        if (!indeg[p])
            cur[ncur++] = (uint32_t)p;
    }
    merges = 0;
    for (uint32_t l = 0; ncur; l++) {
        size_t covered = 0, ncand = 0, nnext = 0;
        for (size_t i = 0; i < ncur; i++) {
            uint32_t p = cur[i];
            for (uint32_t j = pev0[p]; j < pev0[p + 1]; j++)
                if (stamp[w->ev[pev[j]].slot] != l) {
                    stamp[w->ev[pev[j]].slot] = l;
                    covered++;
                }
        }
        for (size_t i = 0; i < ncur; i++)
            for (uint32_t j = g.off[cur[i]]; j < g.off[cur[i] + 1]; j++)
                if (--indeg[g.to[j]] == 0)
                    cand[ncand++] = g.to[j];
        if (covered < active) {
            for (size_t i = 1; i < ncur; i++) {
                uf_union(w->uf, w->ufsz, rep[cur[0]], rep[cur[i]]);
                merges++;
            }
            /* cand grows while it is read: a FIFO of the partitions made ready */
            size_t head = 0;
            while (head < ncand && covered < active) {
                uint32_t c = cand[head++];
                uf_union(w->uf, w->ufsz, rep[cur[0]], rep[c]);
                merges++;
                for (uint32_t j = pev0[c]; j < pev0[c + 1]; j++)
                    if (stamp[w->ev[pev[j]].slot] != l) {
                        stamp[w->ev[pev[j]].slot] = l;
                        covered++;
                    }
                for (uint32_t j = g.off[c]; j < g.off[c + 1]; j++)
                    if (--indeg[g.to[j]] == 0)
                        cand[ncand++] = g.to[j];
            }
            for (size_t i = head; i < ncand; i++)
                next[nnext++] = cand[i];
        } else {
            memcpy(next, cand, ncand * sizeof *next);
            nnext = ncand;
        }
        qsort(next, nnext, sizeof *next, u32_cmp);
        memcpy(cur, next, nnext * sizeof *cur);
        ncur = nnext;
    }
    if (merges > 0 && relabel(w) == SIZE_MAX)
        merges = -1;
out:
    adj_free(&g);
    adj_free(&gr);
    free(indeg), free(pev0), free(pev), free(stamp), free(rep), free(cur);
    free(cand), free(next);
    return merges;
}

/* Marks as blocking the members of every collective instance that misses a rank still inside
 * a collective call at the end of the newest window (an open record of a collective function:
 * it carries no communicator, so any instance without that rank may be the one it is in; its
 * member comes with a later window). Linear in the members. */
static int block_open_colls(const mw_logical_stream_t *s, logical_work_t *w,
                            const mw_trace_matches_t *mt, uint32_t newest)
{
    size_t nslots = s->ncarry;
    uint8_t *in = NULL;
    uint32_t nopen = 0;
    for (size_t p = 0; p < w->nparts; p++) {
        const logical_part_t *lp = w->parts[p];
        if (w->part_win[p] != newest)
            continue;
        for (uint32_t k = lp->first; k < lp->nkept; k++)
            if (open_coll(&lp->recs[k])) {
                long slot = carry_find(s, lp->rank);
                if (!in && !(in = xcalloc(nslots, 1)))
                    return -1;
                if (slot >= 0 && !in[slot]) {
                    in[slot] = 1;
                    nopen++;
                }
                break;
            }
    }
    if (!nopen)
        return 0;
    uint32_t *seen = xcalloc(nslots, sizeof *seen);
    if (!seen) {
        free(in);
        return -1;
    }
    for (size_t i = 0; i < mt->ncolls; i++) {
        const mw_trace_coll_t *c = &mt->colls[i];
        uint32_t have = 0;
        for (uint32_t j = 0; j < c->n; j++) {
            uint32_t part = mt->coll_members[2 * ((size_t)c->first + j)];
            uint32_t slot =
                w->ev[w->evat[w->part_off[part] + mt->coll_members[2 * ((size_t)c->first + j) + 1]]]
                    .slot;
            if (in[slot] && seen[slot] != i + 1) {
                seen[slot] = (uint32_t)i + 1;
                have++;
            }
        }
        if (have < nopen)
            for (uint32_t j = 0; j < c->n; j++) {
                uint32_t part = mt->coll_members[2 * ((size_t)c->first + j)];
                uint32_t r = mt->coll_members[2 * ((size_t)c->first + j) + 1];
                w->ev[w->evat[w->part_off[part] + r]].blocks = 1;
            }
    }
    free(in);
    free(seen);
    return 0;
}

/* Modes of an analysis. */
enum { RUN_NORMAL = 0, RUN_FORCE_OLDEST = 1, RUN_FORCE_ALL = 2 };

static void free_win(logical_win_t *wn)
{
    for (size_t i = 0; i < wn->nparts; i++) {
        free(wn->parts[i].recs);
        free(wn->parts[i].meta);
    }
    free(wn->parts);
    memset(wn, 0, sizeof *wn);
}

/* Runs the analysis over what the stream holds and appends what is final to o. */
static int analyse(mw_logical_stream_t *s, int mode, logical_out_t *o)
{
    logical_work_t w;
    memset(&w, 0, sizeof w);
    int rc = -1;
    mw_trace_part_t *tp = NULL;
    mw_trace_matches_t mt;
    memset(&mt, 0, sizeof mt);
    logical_sortref_t *sr = NULL;
    logical_edge_t *pe = NULL, *ne = NULL;
    logical_adj_t pg = {0}, pgr = {0}, ng = {0};
    uint32_t *porder = NULL, *pev0 = NULL, *pev = NULL, *indeg = NULL, *pos = NULL;
    uint8_t *pfinal = NULL, *pnormal = NULL, *pblock = NULL, *pforce = NULL, *evfinal = NULL;
    uint64_t *lstep = NULL;
    int64_t *late = NULL, *slate = NULL, *gmax = NULL;
    uint32_t *queue = NULL, *lastslot = NULL, *lab0 = NULL, *lab1 = NULL;
    uint32_t *mark0 = NULL, *mark1 = NULL;
    logical_sortref_t *esort = NULL;

    for (size_t i = 0; i < s->nwins; i++)
        w.nparts += s->wins[i].nparts;
    w.parts = malloc((w.nparts ? w.nparts : 1) * sizeof *w.parts);
    w.part_win = malloc((w.nparts ? w.nparts : 1) * sizeof *w.part_win);
    w.part_off = malloc((w.nparts + 1) * sizeof *w.part_off);
    tp = malloc((w.nparts ? w.nparts : 1) * sizeof *tp);
    if (!w.parts || !w.part_win || !w.part_off || !tp)
        goto out;
    {
        size_t k = 0, off = 0;
        for (size_t i = 0; i < s->nwins; i++)
            for (size_t j = 0; j < s->wins[i].nparts; j++) {
                logical_part_t *p = &s->wins[i].parts[j];
                w.parts[k] = p;
                w.part_win[k] = (uint32_t)i;
                w.part_off[k] = off;
                off += p->nkept - p->first;
                tp[k].rank = p->rank;
                tp[k].recs = p->recs + p->first;
                tp[k].n = p->nkept - p->first;
                tp[k].base_ns = 0;
                k++;
            }
        w.part_off[k] = off;
    }
    size_t nkept = w.part_off[w.nparts];
    w.evat = malloc((nkept ? nkept : 1) * sizeof *w.evat);
    if (!w.evat)
        goto out;
    for (size_t p = 0; p < w.nparts; p++) {
        const logical_part_t *lp = w.parts[p];
        for (uint32_t k = lp->first; k < lp->nkept; k++)
            w.nev += event_kind(&lp->recs[k]) != 0;
    }
    w.ev = xcalloc(w.nev, sizeof *w.ev);
    w.uf = malloc((w.nev ? w.nev : 1) * sizeof *w.uf);
    w.ufsz = malloc((w.nev ? w.nev : 1) * sizeof *w.ufsz);
    w.plabel = malloc((w.nev ? w.nev : 1) * sizeof *w.plabel);
    if (!w.ev || !w.uf || !w.ufsz || !w.plabel)
        goto out;
    {
        size_t e = 0;
        for (size_t p = 0; p < w.nparts; p++) {
            const logical_part_t *lp = w.parts[p];
            long slot = carry_find(s, lp->rank);
            for (uint32_t k = lp->first; k < lp->nkept; k++) {
                uint8_t kind = event_kind(&lp->recs[k]);
                if (!kind) {
                    w.evat[w.part_off[p] + k - lp->first] = -1;
                    continue;
                }
                logical_ev_t *v = &w.ev[e];
                v->part = (uint32_t)p;
                v->k = k;
                v->slot = (uint32_t)(slot < 0 ? 0 : slot);
                v->win = w.part_win[p];
                v->start = lp->meta[k].start;
                v->end = lp->meta[k].end;
                v->msg = -1;
                v->rprev = -1;
                v->node = (int32_t)e;
                v->grp = (uint32_t)e;
                if (lp->meta[k].call != UINT32_MAX && e > 0 && w.ev[e - 1].part == p &&
                    lp->meta[w.ev[e - 1].k].call == lp->meta[k].call)
                    v->grp = w.ev[e - 1].grp;
                v->kind = kind;
                w.uf[e] = (uint32_t)e;
                w.ufsz[e] = 1;
                w.evat[w.part_off[p] + k - lp->first] = (int32_t)e;
                e++;
            }
        }
    }
#define EVAT(p, r) (w.evat[w.part_off[(p)] + (r)])

    /* Messages and collective instances. */
    if (mw_trace_match(tp, w.nparts, &mt))
        goto out;
    for (size_t i = 0; i < mt.nmsgs; i++) {
        int32_t a = EVAT(mt.msgs[i].send_part, mt.msgs[i].send_rec);
        int32_t b = EVAT(mt.msgs[i].recv_part, mt.msgs[i].recv_rec);
        if (a < 0 || b < 0 || w.ev[a].kind != MW_LE_SEND || w.ev[b].kind != MW_LE_RECV)
            continue;
        w.ev[a].msg = b;
        w.ev[b].msg = a;
        w.ev[a].matched = w.ev[b].matched = 1;
        uf_union(w.uf, w.ufsz, (uint32_t)a, (uint32_t)b);
    }
    for (size_t i = 0; i < mt.ncolls; i++) {
        const mw_trace_coll_t *c = &mt.colls[i];
        int32_t first = -1;
        for (uint32_t j = 0; j < c->n; j++) {
            uint32_t part = mt.coll_members[2 * ((size_t)c->first + j)];
            uint32_t r = mt.coll_members[2 * ((size_t)c->first + j) + 1];
            int32_t e = EVAT(part, r);
            if (e < 0)
                continue;
            w.ev[e].matched = 1;
            if (first < 0) {
                first = e;
                continue;
            }
            uf_union(w.uf, w.ufsz, (uint32_t)first, (uint32_t)e);
            if (c->consistent)
                w.ev[e].node = first;
        }
    }
    /* Whether a later window could still complete an event: a send without its receive (the
     * receive may end any time later); a receive without its send only while its window is
     * one of the two newest (a send is posted before its receive ends: only a blocking send
     * that returns after the receive, in the next window, can come later); a member of a
     * collective instance that a rank of the newest window is still in (its member comes
     * with a later window). */
    for (size_t e = 0; e < w.nev; e++) {
        const mw_trace_rec_t *r = &w.parts[w.ev[e].part]->recs[w.ev[e].k];
        if (w.ev[e].matched)
            continue;
        if (mw_trace_is_send(r) || (mw_trace_is_recv(r) && w.ev[e].win + 2 >= s->nwins))
            w.ev[e].blocks = 1;
    }
    if (block_open_colls(s, &w, &mt, (uint32_t)(s->nwins - 1)))
        goto out;

    /* Each rank's held events in order, and ICOLL posts paired with their completions. */
    sr = malloc((nkept ? nkept : 1) * sizeof *sr);
    if (!sr)
        goto out;
    {
        /* Events are numbered window by window, ranks ascending, records in order: walking
         * them with the last event seen per rank links each rank's events in order. */
        int32_t *last = malloc((s->ncarry ? s->ncarry : 1) * sizeof *last);
        if (!last)
            goto out;
        for (size_t i = 0; i < s->ncarry; i++)
            last[i] = -1;
        for (size_t e = 0; e < w.nev; e++) {
            w.ev[e].rprev = last[w.ev[e].slot];
            last[w.ev[e].slot] = (int32_t)e;
        }
        /* A rank inside a communication call at the newest window's end is waiting for its
         * next event, which may belong with the partition of its last one (a message from a
         * rank delayed longer than a window: the leap merge or a cycle puts it there). Inside:
         * the newest window that brought records of the rank has an open record of a
         * communication function. A window without any record of the rank says nothing (the
         * shim collected it after the call had ended, so without its open record, and the
         * call's own record comes with the next one). */
        uint8_t *waiting = xcalloc(s->ncarry, 1);
        if (!waiting) {
            free(last);
            goto out;
        }
        for (size_t p = 0; p < w.nparts; p++) {
            const logical_part_t *lp = w.parts[p];
            long slot = carry_find(s, lp->rank);
            if (!lp->nin || slot < 0)
                continue;
            waiting[slot] = 0;
            for (uint32_t k = lp->first; k < lp->nkept && !waiting[slot]; k++)
                waiting[slot] = (uint8_t)open_comm(&lp->recs[k]);
        }
        for (size_t i = 0; i < s->ncarry; i++)
            if (waiting[i] && last[i] >= 0)
                w.ev[last[i]].held = 1;
        free(waiting);
        free(last);
        /* ICOLL pairing: (rank, req, position) with posts and completions. */
        size_t m = 0;
        for (size_t p = 0; p < w.nparts; p++)
            for (uint32_t k = w.parts[p]->first; k < w.parts[p]->nkept; k++) {
                const mw_trace_rec_t *r = &w.parts[p]->recs[k];
                int32_t e = w.evat[w.part_off[p] + k - w.parts[p]->first];
                if (r->req == 0 ||
                    !((r->kind == MW_TK_ICOLL && e >= 0) || r->kind == MW_TK_COLL_DONE))
                    continue;
                sr[m].slot = w.parts[p]->rank;
                sr[m].key = r->req;
                sr[m].idx = (uint32_t)(w.part_off[p] + k - w.parts[p]->first);
                m++;
            }
        /* sort by (req, rank, position): same key order is fine, slot ties on rank */
        for (size_t i = 0; i < m; i++) {
            uint64_t req = sr[i].key;
            sr[i].key = ((uint64_t)sr[i].slot << 32) | (req & 0xffffffffu);
        }
        qsort(sr, m, sizeof *sr, sortref_cmp);
        for (size_t i = 0; i < m; i++) {
            int32_t e = w.evat[sr[i].idx];
            if (e < 0)
                continue;
            if (i + 1 < m && sr[i + 1].key == sr[i].key && w.evat[sr[i + 1].idx] < 0) {
                /* find the completion record through its flattened index */
                size_t fi = sr[i + 1].idx;
                size_t lo = 0, hi = w.nparts;
                while (hi - lo > 1) {
                    size_t mid = (lo + hi) / 2;
                    if (w.part_off[mid] <= fi)
                        lo = mid;
                    else
                        hi = mid;
                }
                const logical_part_t *lp = w.parts[lo];
                int64_t done_end = lp->meta[lp->first + (fi - w.part_off[lo])].end;
                if (done_end > w.ev[e].end)
                    w.ev[e].end = done_end;
            } else {
                w.ev[e].blocks = 1;
            }
        }
    }
    free(sr);
    sr = NULL;

    /* Partitions. */
    if (relabel(&w) == SIZE_MAX)
        goto out;
    /* The labels before and after the cycle merge say, for each final partition, how many
     * merges of each kind made it (counted once, when it is final: held partitions are
     * analysed again at every push). */
    lab0 = malloc((w.nev ? w.nev : 1) * sizeof *lab0);
    lab1 = malloc((w.nev ? w.nev : 1) * sizeof *lab1);
    if (!lab0 || !lab1)
        goto out;
    memcpy(lab0, w.plabel, w.nev * sizeof *lab0);
    if (merge_cycles(&w) < 0)
        goto out;
    memcpy(lab1, w.plabel, w.nev * sizeof *lab1);
    if (s->opts.flags & MW_LOGICAL_LEAP) {
        long ml = merge_leaps(&w, s->ncarry);
        if (ml < 0 || (ml > 0 && merge_cycles(&w) < 0))
            goto out;
    }
    size_t np = w.np;
    {
        size_t m;
        if (part_edges(&w, &pe, &m) || adj_build(&pg, np, pe, m, 0) ||
            adj_build(&pgr, np, pe, m, 1))
            goto out;
    }
    porder = malloc((np ? np : 1) * sizeof *porder);
    pfinal = xcalloc(np, 1);
    pnormal = xcalloc(np, 1);
    pblock = xcalloc(np, 1);
    pforce = xcalloc(np, 1);
    if (!porder || !pfinal || !pnormal || !pblock || !pforce || topo(&pg, porder))
        goto out;
    {
        uint32_t newest = (uint32_t)(s->nwins - 1);
        for (size_t e = 0; e < w.nev; e++) {
            uint32_t p = w.plabel[e];
            /* At a gap nothing later comes: only a missing partner blocks (forced) */
            if (w.ev[e].blocks ||
                ((w.ev[e].win == newest || w.ev[e].held) && mode != RUN_FORCE_ALL))
                pblock[p] = 1;
            if (mode == RUN_FORCE_ALL || (mode == RUN_FORCE_OLDEST && w.ev[e].win == 0))
                pforce[p] = 1;
        }
    }
    /* Forced sets are closed over predecessors (reverse topological order); then, in
     * topological order, a partition is final when it is forced or when nothing blocks it and
     * its predecessors are final. `pnormal` says the latter: a forced partition that did not
     * need the force is not reported as forced. */
    for (size_t i = np; i-- > 0;) {
        uint32_t p = porder[i];
        if (pforce[p])
            for (uint32_t j = pgr.off[p]; j < pgr.off[p + 1]; j++)
                pforce[pgr.to[j]] = 1;
    }
    for (size_t i = 0; i < np; i++) {
        uint32_t p = porder[i];
        int ok = !pblock[p];
        for (uint32_t j = pgr.off[p]; j < pgr.off[p + 1] && ok; j++)
            ok = pfinal[pgr.to[j]];
        pnormal[p] = (uint8_t)ok;
        pfinal[p] = (uint8_t)(ok || pforce[p]);
    }

    /* Events by partition (input order within). */
    pev0 = xcalloc(np + 1, sizeof *pev0);
    pev = malloc((w.nev ? w.nev : 1) * sizeof *pev);
    if (!pev0 || !pev)
        goto out;
    for (size_t e = 0; e < w.nev; e++)
        pev0[w.plabel[e] + 1]++;
    for (size_t p = 0; p < np; p++)
        pev0[p + 1] += pev0[p];
    {
        uint32_t *fill = malloc((np ? np : 1) * sizeof *fill);
        if (!fill)
            goto out;
        memcpy(fill, pev0, np * sizeof *fill);
        for (size_t e = 0; e < w.nev; e++)
            pev[fill[w.plabel[e]]++] = (uint32_t)e;
        free(fill);
    }

    /* Node edges inside partitions: rank order and messages, between step nodes. */
    ne = malloc((2 * w.nev + 1) * sizeof *ne);
    if (!ne)
        goto out;
    size_t nne = 0;
    for (size_t e = 0; e < w.nev; e++) {
        int32_t rp = w.ev[e].rprev;
        if (rp >= 0 && w.plabel[rp] == w.plabel[e] && w.ev[rp].node != w.ev[e].node) {
            ne[nne].a = (uint32_t)w.ev[rp].node;
            ne[nne].b = (uint32_t)w.ev[e].node;
            nne++;
        }
        if (w.ev[e].kind == MW_LE_RECV && w.ev[e].msg >= 0 &&
            w.ev[w.ev[e].msg].node != w.ev[e].node) {
            ne[nne].a = (uint32_t)w.ev[w.ev[e].msg].node;
            ne[nne].b = (uint32_t)w.ev[e].node;
            nne++;
        }
    }
    if (adj_build(&ng, w.nev, ne, nne, 0))
        goto out;
    indeg = xcalloc(w.nev, sizeof *indeg);
    lstep = xcalloc(w.nev, sizeof *lstep);
    late = xcalloc(w.nev, sizeof *late);
    slate = xcalloc(w.nev, sizeof *slate);
    gmax = xcalloc(w.nev, sizeof *gmax);
    pos = malloc((w.nev ? w.nev : 1) * sizeof *pos);
    queue = malloc((w.nev ? w.nev : 1) * sizeof *queue);
    evfinal = xcalloc(w.nev, 1);
    esort = malloc((w.nev ? w.nev : 1) * sizeof *esort);
    lastslot = malloc((s->ncarry ? s->ncarry : 1) * sizeof *lastslot);
    mark0 = xcalloc(w.nev, sizeof *mark0);
    mark1 = xcalloc(w.nev, sizeof *mark1);
    if (!mark0 || !mark1)
        goto out;
    if (!indeg || !lstep || !late || !slate || !gmax || !pos || !queue || !evfinal || !esort ||
        !lastslot)
        goto out;
    for (size_t i = 0; i < ng.m; i++)
        indeg[ng.to[i]]++;
    uint8_t *done = evfinal; /* a node whose step is known (reset per use below) */

    for (size_t pi = 0; pi < np; pi++) {
        uint32_t p = porder[pi];
        if (!pfinal[p])
            continue;
        uint32_t b0 = pev0[p], b1 = pev0[p + 1], n = b1 - b0;
        /* Local steps: longest path over nodes, a cycle broken at its smallest node. */
        size_t qh = 0, qt = 0, scan = b0;
        for (uint32_t i = b0; i < b1; i++) {
            uint32_t v = pev[i];
            if ((uint32_t)w.ev[v].node == v && indeg[v] == 0)
                queue[qt++] = v;
        }
        size_t nodes_done = 0, nodes = 0;
        for (uint32_t i = b0; i < b1; i++)
            nodes += (uint32_t)w.ev[pev[i]].node == pev[i];
        while (nodes_done < nodes) {
            uint32_t v;
            if (qh < qt) {
                v = queue[qh++];
                if (done[v])
                    continue;
            } else {
                while (scan < b1 &&
                       ((uint32_t)w.ev[pev[scan]].node != pev[scan] || done[pev[scan]]))
                    scan++;
                if (scan >= b1)
                    break;
                v = pev[scan];
            }
            done[v] = 1;
            nodes_done++;
            for (uint32_t j = ng.off[v]; j < ng.off[v + 1]; j++) {
                uint32_t t = ng.to[j];
                if (done[t])
                    continue;
                if (lstep[t] < lstep[v] + 1)
                    lstep[t] = lstep[v] + 1;
                if (indeg[t] > 0 && --indeg[t] == 0)
                    queue[qt++] = t;
            }
        }
        for (uint32_t i = b0; i < b1; i++) {
            uint32_t v = pev[i];
            lstep[v] = lstep[w.ev[v].node];
        }
        /* Global offset: every rank's steps keep increasing. */
        uint64_t off = s->opts.step_base;
        for (uint32_t i = b0; i < b1; i++) {
            uint32_t v = pev[i];
            int32_t rp = w.ev[v].rprev;
            if (rp >= 0 && w.plabel[rp] == p)
                continue;
            const logical_carry_t *c = &s->carry[w.ev[v].slot];
            if (!c->has_step)
                continue;
            uint64_t need = usat_add(c->step, 1);
            if (need > lstep[v] && need - lstep[v] > off)
                off = need - lstep[v];
        }
        /* Output order: (step, rank, input order). */
        for (uint32_t i = 0; i < n; i++) {
            uint32_t v = pev[b0 + i];
            esort[i].key = lstep[v];
            esort[i].slot = w.ev[v].slot;
            esort[i].idx = v;
        }
        qsort(esort, n, sizeof *esort, sortref_cmp);
        size_t base = o->b.nevents;
        if (grow((void **)&o->b.events, &o->ev_cap, base + n, sizeof *o->b.events))
            goto out;
        {
            size_t cap = o->ev_cap;
            void *q = realloc(o->lost, cap * sizeof *o->lost);
            if (!q)
                goto out;
            o->lost = q;
        }
        for (uint32_t i = 0; i < n; i++)
            pos[esort[i].idx] = (uint32_t)i;
        /* Lateness against the earliest end per step (and how late each call began, for the
         * class), then what the receives of one completing call waited for together. */
        uint64_t first_id = s->next_id;
        uint32_t nranks = 0;
        for (uint32_t i = 0; i < n;) {
            uint32_t j = i;
            int64_t minend = INT64_MAX, minstart = INT64_MAX;
            for (; j < n && esort[j].key == esort[i].key; j++) {
                const logical_ev_t *v = &w.ev[esort[j].idx];
                if (v->end < minend)
                    minend = v->end;
                if (v->start < minstart)
                    minstart = v->start;
            }
            for (uint32_t k = i; k < j; k++) {
                const logical_ev_t *v = &w.ev[esort[k].idx];
                int64_t l = sat_sub(v->end, minend), sl = sat_sub(v->start, minstart);
                late[esort[k].idx] = l > 0 ? l : 0;
                slate[esort[k].idx] = sl > 0 ? sl : 0;
            }
            i = j;
        }
        for (uint32_t i = b0; i < b1; i++)
            gmax[w.ev[pev[i]].grp] = 0;
        for (uint32_t i = b0; i < b1; i++) {
            const logical_ev_t *v = &w.ev[pev[i]];
            if (v->kind == MW_LE_RECV && v->msg >= 0 && w.plabel[v->msg] == p &&
                late[v->msg] > gmax[v->grp])
                gmax[v->grp] = late[v->msg];
        }
        for (uint32_t k = 0; k < n; k++) {
            uint32_t vi = esort[k].idx;
            const logical_ev_t *v = &w.ev[vi];
            const logical_part_t *lp = w.parts[v->part];
            const mw_trace_rec_t *r = &lp->recs[v->k];
            const logical_carry_t *c = &s->carry[v->slot];
            mw_logical_event_t *oe = &o->b.events[base + k];
            memset(oe, 0, sizeof *oe);
            oe->window = s->wins[v->win].window;
            oe->step = usat_add(off, lstep[vi]);
            oe->start_ns = v->start;
            oe->end_ns = v->end;
            oe->lateness_ns = late[vi];
            oe->partition = s->next_part;
            oe->id = first_id + k;
            oe->rank = lp->rank;
            oe->rec = lp->meta[v->k].rec;
            oe->peer = r->peer;
            oe->fn = r->fn;
            oe->kind = v->kind;
            /* The previous event on the rank: in this partition, or carried. */
            int32_t rp = v->rprev;
            int has_prev = 0;
            int64_t prev_late = 0, prev_end = 0;
            if (rp >= 0 && w.plabel[rp] == p) {
                has_prev = 1;
                prev_late = late[rp];
                prev_end = w.ev[rp].end;
                oe->rank_prev = (int64_t)(first_id + pos[rp]);
            } else if (c->has) {
                has_prev = 1;
                prev_late = c->late;
                prev_end = c->end;
                oe->rank_prev = (int64_t)c->id;
            } else {
                oe->rank_prev = -1;
            }
            int64_t msg_late = 0;
            oe->msg_peer = -1;
            if (v->msg >= 0 && w.plabel[v->msg] == p) {
                oe->msg_peer = (int64_t)(first_id + pos[v->msg]);
                if (v->kind == MW_LE_RECV)
                    msg_late = gmax[v->grp];
            }
            int64_t inherited = prev_late > msg_late ? prev_late : msg_late;
            int64_t d = sat_sub(oe->lateness_ns, inherited);
            oe->diff_ns = d > 0 ? d : 0;
            if (has_prev) {
                int64_t cb = sat_sub(v->start, prev_end);
                oe->comp_before_ns = cb > 0 ? cb : 0;
            }
            int64_t lost = sat_sub(oe->lateness_ns, prev_late);
            o->lost[base + k] = lost > 0 ? lost : 0;
            /* Under the noise floor a lateness is none and a differential lateness no origin. */
            if (oe->lateness_ns < s->opts.noise_floor_ns)
                oe->cls = MW_LATE_NONE;
            else if (oe->diff_ns < s->opts.noise_floor_ns)
                oe->cls = msg_late > prev_late ? MW_LATE_MESSAGE : MW_LATE_RANK;
            else
                oe->cls = slate[vi] > inherited ? MW_LATE_COMPUTE : MW_LATE_CALL;
        }
        /* Partition record, window summaries, carried state. */
        if (grow((void **)&o->b.partitions, &o->part_cap, o->b.npartitions + 1,
                 sizeof *o->b.partitions))
            goto out;
        mw_logical_partition_t *op = &o->b.partitions[o->b.npartitions++];
        memset(op, 0, sizeof *op);
        op->id = s->next_part++;
        op->step_first = o->b.events[base].step;
        op->step_last = o->b.events[base + n - 1].step;
        op->event_first = first_id;
        op->nevents = n;
        op->forced = (uint8_t)!pnormal[p];
        s->st.partitions++;
        s->st.forced += op->forced;
        for (uint32_t i = b0; i < b1; i++)
            lastslot[w.ev[pev[i]].slot] = UINT32_MAX;
        for (uint32_t i = b0; i < b1; i++) {
            /* input order: the last one per rank wins */
            uint32_t v = pev[i];
            if (lastslot[w.ev[v].slot] == UINT32_MAX)
                nranks++;
            lastslot[w.ev[v].slot] = v;
        }
        op->ranks = nranks;
        {
            /* distinct labels before and after the cycle merge (a label is < nev) */
            uint64_t d0 = 0, d1 = 0;
            for (uint32_t i = b0; i < b1; i++) {
                uint32_t v = pev[i];
                if (mark0[lab0[v]] != p + 1) {
                    mark0[lab0[v]] = p + 1;
                    d0++;
                }
                if (mark1[lab1[v]] != p + 1) {
                    mark1[lab1[v]] = p + 1;
                    d1++;
                }
            }
            s->st.merged_cycles += d0 - d1;
            s->st.merged_leap += d1 - 1;
        }
        for (uint32_t i = 0; i < n; i++) {
            uint32_t vi = esort[i].idx;
            const logical_ev_t *v = &w.ev[vi];
            mw_logical_event_t *oe = &o->b.events[base + i];
            logical_win_t *wn = &s->wins[v->win];
            sum_add(&wn->sum, oe, o->lost[base + i]);
            wn->pending--;
            s->st.events++;
            const mw_trace_rec_t *r = &w.parts[v->part]->recs[v->k];
            if (v->kind != MW_LE_COLL && !v->matched &&
                (mw_trace_is_send(r) || mw_trace_is_recv(r)))
                s->st.unmatched++;
            if (lastslot[v->slot] == vi) {
                logical_carry_t *c = &s->carry[v->slot];
                c->has = 1;
                c->has_step = 1;
                c->id = oe->id;
                c->step = oe->step;
                c->late = oe->lateness_ns;
                c->end = oe->end_ns;
                lastslot[v->slot] = UINT32_MAX - 1;
            }
        }
        o->b.nevents += n;
        s->next_id += n;
        for (uint32_t i = b0; i < b1; i++)
            evfinal[pev[i]] = 2;
    }
    /* Advance each part past its final events, unless its rank has an event pending in an
     * earlier window: then the part stays whole, since a completion at its start (before its
     * first event) may be the one of a non-blocking collective still pending (parts come window
     * by window, so `lastslot` says which ranks have had a pending event). */
    for (size_t i = 0; i < s->ncarry; i++)
        lastslot[i] = 0;
    for (size_t p = 0; p < w.nparts; p++) {
        logical_part_t *lp = w.parts[p];
        long slot = carry_find(s, lp->rank);
        uint32_t first = lp->nkept;
        for (uint32_t k = lp->first; k < lp->nkept; k++) {
            int32_t e = w.evat[w.part_off[p] + k - lp->first];
            if (e >= 0 && evfinal[e] != 2) {
                first = k;
                break;
            }
        }
        if (slot >= 0 && lastslot[slot])
            continue;
        if (slot >= 0 && first < lp->nkept)
            lastslot[slot] = 1;
        lp->first = first;
    }
    rc = 0;
#undef EVAT
out:
    free(tp);
    mw_trace_matches_free(&mt);
    free(sr);
    free(pe);
    free(ne);
    adj_free(&pg);
    adj_free(&pgr);
    adj_free(&ng);
    free(porder), free(pev0), free(pev), free(indeg), free(pos);
    free(pfinal), free(pnormal), free(pblock), free(pforce), free(evfinal);
    free(lstep), free(late), free(slate), free(gmax), free(queue), free(lastslot), free(lab0),
        free(lab1), free(mark0), free(mark1), free(esort);
    work_free(&w);
    return rc;
}

/* Emits the summaries of the complete windows at the front and drops them. */
static int emit_windows(mw_logical_stream_t *s, logical_out_t *o)
{
    size_t k = 0;
    while (k < s->nwins && s->wins[k].pending == 0) {
        if (grow((void **)&o->b.windows, &o->win_cap, o->b.nwindows + 1, sizeof *o->b.windows))
            return -1;
        o->b.windows[o->b.nwindows] = s->wins[k].sum;
        o->b.windows[o->b.nwindows].key = s->wins[k].window;
        o->b.nwindows++;
        free_win(&s->wins[k]);
        k++;
    }
    if (k) {
        memmove(s->wins, s->wins + k, (s->nwins - k) * sizeof *s->wins);
        s->nwins -= k;
        memset(s->wins + s->nwins, 0, k * sizeof *s->wins);
    }
    return 0;
}

static uint64_t held_events(const mw_logical_stream_t *s)
{
    uint64_t n = 0;
    for (size_t i = 0; i < s->nwins; i++)
        n += s->wins[i].pending;
    return n;
}

static int run(mw_logical_stream_t *s, int mode, logical_out_t *o)
{
    if (s->nwins && analyse(s, mode, o))
        return -1;
    return emit_windows(s, o);
}

/* A gap: everything held is finalized, and what comes next does not inherit lateness, an
 * end time or a previous event across it (the windows between were not analysed); steps keep
 * increasing. */
static int gap(mw_logical_stream_t *s, logical_out_t *o)
{
    s->st.gaps++;
    int rc = run(s, RUN_FORCE_ALL, o);
    for (size_t i = 0; i < s->ncarry; i++)
        s->carry[i].has = 0;
    return rc;
}

static int finish_out(mw_logical_stream_t *s, logical_out_t *o, mw_logical_batch_t *out, int rc)
{
    if (rc == 0)
        rc = out_steps(o);
    s->st.pending_events = held_events(s);
    s->st.pending_windows = s->nwins;
    free(o->lost);
    if (rc) {
        mw_logical_batch_free(&o->b);
        memset(out, 0, sizeof *out);
        return -1;
    }
    *out = o->b;
    return 0;
}

/* ---- public entry points ------------------------------------------------------------------ */

mw_logical_stream_t *mw_logical_stream_new(const mw_logical_opts_t *opts)
{
    mw_logical_stream_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    if (opts)
        s->opts = *opts;
    if (!s->opts.max_pending_events || s->opts.max_pending_events > MW_LOGICAL_MAX_PENDING_EVENTS)
        s->opts.max_pending_events = MW_LOGICAL_MAX_PENDING_EVENTS;
    if (!s->opts.max_pending_windows ||
        s->opts.max_pending_windows > MW_LOGICAL_MAX_PENDING_WINDOWS)
        s->opts.max_pending_windows = MW_LOGICAL_MAX_PENDING_WINDOWS;
    if (s->opts.noise_floor_ns <= 0)
        s->opts.noise_floor_ns = MW_LOGICAL_NOISE_FLOOR_NS;
    return s;
}

void mw_logical_stream_free(mw_logical_stream_t *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nwins; i++)
        free_win(&s->wins[i]);
    free(s->carry);
    free(s);
}

void mw_logical_stream_stats(const mw_logical_stream_t *s, mw_logical_stats_t *st)
{
    *st = s->st;
}

int mw_logical_stream_gap(mw_logical_stream_t *s, mw_logical_batch_t *out)
{
    logical_out_t o;
    memset(&o, 0, sizeof o);
    int rc = gap(s, &o);
    return finish_out(s, &o, out, rc);
}

/* Copies one rank's records into a held part: events and completions of collectives. */
static int copy_part(logical_part_t *p, int64_t base, const mw_logical_rank_t *in, size_t keep)
{
    p->rank = in->rank;
    p->recs = malloc((keep ? keep : 1) * sizeof *p->recs);
    p->meta = malloc((keep ? keep : 1) * sizeof *p->meta);
    if (!p->recs || !p->meta)
        return -1;
    uint32_t k = 0;
    for (size_t i = 0; i < in->n; i++) {
        const mw_trace_rec_t *r = &in->recs[i];
        if (!kept_record(r))
            continue;
        int64_t st = rec_start(base, r);
        int64_t en = rec_end(st, r);
        p->meta[k].call = UINT32_MAX;
        if (r->kind == MW_TK_RECV_DONE) {
            /* the completing call ended where the completion starts */
            size_t lim = i > LOGICAL_BACKSCAN ? i - LOGICAL_BACKSCAN : 0;
            for (size_t j = i; j-- > lim;) {
                const mw_trace_rec_t *q = &in->recs[j];
                if (q->kind == MW_TK_CALL && q->fn == r->fn && q->thread == r->thread &&
                    !(q->flags & MW_TF_OPEN)) {
                    int64_t qs = rec_start(base, q);
                    /* The shim rounds a record's start and its duration to ns apart, so the
                     * call's end may be 1 ns off its completion's start (half of them are). */
                    int64_t off_ns = sat_sub(st, rec_end(qs, q));
                    if (off_ns >= -1 && off_ns <= 1) {
                        st = qs;
                        p->meta[k].call = (uint32_t)j;
                    }
                    break;
                }
            }
        }
        p->recs[k] = *r;
        p->meta[k].rec = (uint32_t)i;
        p->meta[k].start = st;
        p->meta[k].end = en;
        k++;
    }
    p->nkept = k;
    p->first = 0;
    p->nin = (uint32_t)in->n;
    return 0;
}

int mw_logical_stream_push(mw_logical_stream_t *s, uint64_t window, int64_t start_ns,
                           const mw_logical_rank_t *ranks, size_t nranks, mw_logical_batch_t *out)
{
    logical_out_t o;
    memset(&o, 0, sizeof o);
    memset(out, 0, sizeof *out);
    if (s->has_last && window <= s->last_window)
        return -1;
    if (nranks > MW_LOGICAL_MAX_RANKS || (nranks && !ranks))
        return -1;
    /* Distinct ranks, in ascending order. */
    uint32_t *rk = malloc((nranks ? nranks : 1) * sizeof *rk);
    size_t *ord = malloc((nranks ? nranks : 1) * sizeof *ord);
    if (!rk || !ord) {
        free(rk);
        free(ord);
        return -1;
    }
    for (size_t i = 0; i < nranks; i++) {
        if (ranks[i].n > MW_TRACE_MAX_RECORDS || (ranks[i].n && !ranks[i].recs)) {
            free(rk);
            free(ord);
            return -1;
        }
        rk[i] = ranks[i].rank;
    }
    qsort(rk, nranks, sizeof *rk, u32_cmp);
    for (size_t i = 1; i < nranks; i++)
        if (rk[i] == rk[i - 1]) {
            free(rk);
            free(ord);
            return -1;
        }
    if (carry_merge(s, rk, nranks)) {
        free(rk);
        free(ord);
        return -1;
    }
    int rc = 0;
    /* A hole in the windows: nothing pending can connect to what comes. */
    if (s->has_last && window != s->last_window + 1)
        rc = gap(s, &o);
    s->has_last = 1;
    s->last_window = window;
    s->st.windows++;
    /* Sizes: events the window brings, ranks kept under the cap. */
    size_t *keep = xcalloc(nranks, sizeof *keep);
    uint64_t wev = 0;
    if (!keep)
        rc = -1;
    for (size_t i = 0; i < nranks && !rc; i++) {
        for (size_t j = 0; j < ranks[i].n; j++) {
            keep[i] += kept_record(&ranks[i].recs[j]);
            wev += event_kind(&ranks[i].recs[j]) != 0;
        }
    }
    if (!rc && held_events(s) + wev > s->opts.max_pending_events && s->nwins)
        rc = run(s, RUN_FORCE_ALL, &o);
    /* A failed analysis may have left one window too many: finalize it all first. */
    if (!rc && s->nwins > s->opts.max_pending_windows)
        rc = run(s, RUN_FORCE_ALL, &o);
    logical_win_t *wn = NULL;
    if (!rc && s->nwins >= MW_LOGICAL_MAX_PENDING_WINDOWS + 1)
        rc = -1;
    if (!rc) {
        wn = &s->wins[s->nwins++];
        memset(wn, 0, sizeof *wn);
        wn->window = window;
        wn->start_ns = start_ns;
        wn->parts = xcalloc(nranks, sizeof *wn->parts);
        if (!wn->parts)
            rc = -1;
    }
    /* Parts in rank order; ranks over the event cap are left out (counted). */
    uint64_t taken = 0;
    for (size_t i = 0; i < nranks && !rc; i++)
        ord[i] = i;
    if (!rc) {
        /* order input indices by rank: nranks log nranks */
        logical_sortref_t *t = malloc((nranks ? nranks : 1) * sizeof *t);
        if (!t)
            rc = -1;
        for (size_t i = 0; i < nranks && !rc; i++) {
            t[i].key = ranks[i].rank;
            t[i].slot = 0;
            t[i].idx = (uint32_t)i;
        }
        if (!rc) {
            qsort(t, nranks, sizeof *t, sortref_cmp);
            for (size_t i = 0; i < nranks; i++)
                ord[i] = t[i].idx;
        }
        free(t);
    }
    for (size_t i = 0; i < nranks && !rc; i++) {
        const mw_logical_rank_t *in = &ranks[ord[i]];
        uint64_t ev = 0;
        for (size_t j = 0; j < in->n; j++)
            ev += event_kind(&in->recs[j]) != 0;
        if (taken + ev > s->opts.max_pending_events) {
            s->st.dropped_ranks++;
            continue;
        }
        logical_part_t *p = &wn->parts[wn->nparts];
        if (copy_part(p, start_ns, in, keep[ord[i]])) {
            free(p->recs);
            free(p->meta);
            memset(p, 0, sizeof *p);
            rc = -1;
            break;
        }
        wn->nparts++;
        taken += ev;
        wn->pending += ev;
    }
    free(keep);
    free(rk);
    free(ord);
    if (!rc) {
        int mode = s->nwins > s->opts.max_pending_windows ? RUN_FORCE_OLDEST : RUN_NORMAL;
        rc = run(s, mode, &o);
    }
    return finish_out(s, &o, out, rc);
}
