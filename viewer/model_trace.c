/* model_trace.c: the decoded traces of the cached windows, late traces, open calls and the
 * matched messages of a range (see model_trace.h). No SDL, no GL.
 *
 * DESIGN: decoded windows live in an array sorted by index (binary search per lookup; the views
 * walk the windows of a range in order). Everything read from a window is checked before use:
 * a rank trace whose window number, rank or block does not hold is left out and counted, and
 * the decoder (mw_trace_decode) caps what a block may claim before it allocates.
 */
#include "model_internal.h"
#include "model_trace.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t index;
    Mpiwatch__RankTrace *rt;
} late_t;

struct mw__traces {
    mw_trace_window_t **tw; /* sorted by index */
    size_t n, cap;
    size_t records, rec_cap;
    late_t *late; /* arrival order */
    size_t n_late, late_bytes;
    uint64_t late_gen;
    mw_trace_stats_t st;
    uint64_t gen; /* bumped when a decoded window appears or goes */
    /* The links of the last range asked for. */
    mw_trace_links_t links;
    uint64_t lk0, lk1, lgen;
    int lvalid;
};

mw__traces_t *mw__traces_new(void)
{
    mw__traces_t *t = calloc(1, sizeof *t);
    if (t)
        t->rec_cap = MW_TRACE_RECORDS_DEFAULT;
    return t;
}

static void tw_free(mw_trace_window_t *w)
{
    if (!w)
        return;
    for (uint32_t i = 0; i < w->n_ranks; i++)
        free(w->ranks[i].recs);
    free(w->ranks);
    free(w);
}

static void links_free(mw__traces_t *t)
{
    free(t->links.parts);
    free(t->links.part_window);
    if (t->links.ok)
        mw_trace_matches_free(&t->links.m);
    memset(&t->links, 0, sizeof t->links);
    t->lvalid = 0;
}

void mw__traces_clear(mw__traces_t *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        tw_free(t->tw[i]);
    t->n = 0;
    t->records = 0;
    for (size_t i = 0; i < t->n_late; i++)
        mpiwatch__rank_trace__free_unpacked(t->late[i].rt, NULL);
    t->n_late = t->late_bytes = 0;
    links_free(t);
    size_t cap = t->rec_cap;
    memset(&t->st, 0, sizeof t->st);
    t->rec_cap = cap;
    t->gen++;
}

void mw__traces_free(mw__traces_t *t)
{
    if (!t)
        return;
    mw__traces_clear(t);
    free(t->tw);
    free(t->late);
    free(t);
}

void mw_model_set_trace_cap(mw_model_t *m, size_t records)
{
    if (m->tr)
        m->tr->rec_cap = records ? records : MW_TRACE_RECORDS_DEFAULT;
}

static size_t tw_find(const mw__traces_t *t, uint64_t k)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->tw[mid]->index < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void tw_drop_at(mw__traces_t *t, size_t p)
{
    t->records -= t->tw[p]->records;
    tw_free(t->tw[p]);
    memmove(&t->tw[p], &t->tw[p + 1], (t->n - p - 1) * sizeof *t->tw);
    t->n--;
    t->gen++;
}

int mw_model_add_trace(mw_model_t *m, Mpiwatch__RankTrace *rt)
{
    mw__traces_t *t = m->tr;
    if (!rt)
        return -1;
    if (!t || !rt->trace || (m->job && rt->rank >= m->job->size)) {
        if (t)
            t->st.late_refused++;
        mpiwatch__rank_trace__free_unpacked(rt, NULL);
        return -1;
    }
    if (!t->late) {
        t->late = calloc(MW_TRACE_LATE_MAX, sizeof *t->late);
        if (!t->late) {
            mpiwatch__rank_trace__free_unpacked(rt, NULL);
            return -1;
        }
    }
    uint64_t k = rt->trace->window;
    /* The same rank's trace of the same window again replaces the one kept. */
    for (size_t i = 0; i < t->n_late; i++) {
        if (t->late[i].index == k && t->late[i].rt->rank == rt->rank) {
            t->late_bytes -= t->late[i].rt->trace->records.len;
            mpiwatch__rank_trace__free_unpacked(t->late[i].rt, NULL);
            memmove(&t->late[i], &t->late[i + 1], (t->n_late - i - 1) * sizeof *t->late);
            t->n_late--;
            break;
        }
    }
    size_t len = rt->trace->records.len, drop = 0;
    while (drop < t->n_late && (t->n_late - drop == MW_TRACE_LATE_MAX ||
                                t->late_bytes + len > MW_TRACE_LATE_MAX_BYTES)) {
        t->late_bytes -= t->late[drop].rt->trace->records.len;
        mpiwatch__rank_trace__free_unpacked(t->late[drop].rt, NULL);
        drop++;
        t->st.late_dropped++;
    }
    if (drop) {
        memmove(&t->late[0], &t->late[drop], (t->n_late - drop) * sizeof *t->late);
        t->n_late -= drop;
    }
    t->late_bytes += len;
    t->late[t->n_late].index = k;
    t->late[t->n_late].rt = rt;
    t->n_late++;
    t->st.late_kept++;
    t->late_gen++;
    size_t p = tw_find(t, k);
    if (p < t->n && t->tw[p]->index == k)
        tw_drop_at(t, p);
    return 0;
}

/* Focus windows (the call view's range): never evicted to make room. */
static void focus_windows(const mw_model_t *m, int64_t *a, int64_t *b)
{
    *a = 1;
    *b = 0;
    if (m->need_set && m->grid_set && m->origin_set && m->need_f1 > m->need_f0) {
        *a = mw__index_of_time(m, m->need_f0);
        *b = mw__index_of_time(m, m->need_f1) + 1;
    }
}

/* Makes room for `need` more records: decoded windows outside the focus go, oldest first.
 * Returns 0 when they fit. */
static int make_room(const mw_model_t *m, mw__traces_t *t, size_t need)
{
    if (t->records + need <= t->rec_cap)
        return 0;
    int64_t a, b;
    focus_windows(m, &a, &b);
    for (size_t p = 0; p < t->n && t->records + need > t->rec_cap;) {
        int64_t k = (int64_t)t->tw[p]->index;
        if (k >= a && k <= b && !t->tw[p]->over_cap) {
            p++;
            continue;
        }
        tw_drop_at(t, p);
        t->st.windows_evicted++;
    }
    return t->records + need <= t->rec_cap ? 0 : -1;
}

/* Decodes one rank trace into e; 0, or -1 (counted). */
static int decode_rank(const mw_model_t *m, mw__traces_t *t, uint64_t k, uint64_t wstart,
                       const Mpiwatch__RankTrace *rt, mw_trace_rank_t *e)
{
    const Mpiwatch__Trace *tr = rt ? rt->trace : NULL;
    memset(e, 0, sizeof *e);
    if (!tr || tr->window != k || (m->job && rt->rank >= m->job->size)) {
        t->st.decode_errors++;
        return -1;
    }
    e->rank = rt->rank;
    e->left_out = tr->left_out;
    e->base_ns = tr->window_start_ns ? tr->window_start_ns : wstart;
    /* The records' base is the window's start as the rank saw it: within a window's length or
     * so of the grid's, never far from it (that would move the calls anywhere). */
    if ((e->base_ns > wstart ? e->base_ns - wstart : wstart - e->base_ns) >
        (uint64_t)MW_TRACE_TIME_MAX) {
        t->st.decode_errors++;
        return -1;
    }
    if (tr->state != MW_TRACE_EXACT)
        return 0;
    if (tr->count > 0) {
        const char *why = NULL;
        if (mw_trace_decode(tr->records.data, tr->records.len, tr->encoding, tr->raw_bytes,
                            tr->count, &e->recs, &e->n, &why) < 0) {
            t->st.decode_errors++;
            e->recs = NULL;
            e->n = 0;
            return -1;
        }
    }
    /* Times beyond 2^50 ns (13 days) of the window are no call of it: left out and counted,
     * so that no sum of a start and a duration can overflow anywhere after this. */
    size_t o = 0;
    for (size_t i = 0; i < e->n; i++) {
        const mw_trace_rec_t *r = &e->recs[i];
        if (r->start_ns < -MW_TRACE_TIME_MAX || r->start_ns > MW_TRACE_TIME_MAX ||
            r->dur_ns > (uint64_t)MW_TRACE_TIME_MAX) {
            t->st.records_refused++;
            continue;
        }
        e->recs[o++] = *r;
    }
    e->n = o;
    e->exact = 1;
    return 0;
}

static int rank_cmp(const void *pa, const void *pb)
{
    const mw_trace_rank_t *a = pa, *b = pb;
    return a->rank < b->rank ? -1 : a->rank > b->rank;
}

const mw_trace_window_t *mw_trace_window(const mw_model_t *m, uint64_t k)
{
    mw__traces_t *t = m->tr;
    if (!t)
        return NULL;
    const Mpiwatch__Window *w = mw_model_window(m, k);
    size_t p = tw_find(t, k);
    int have = p < t->n && t->tw[p]->index == k;
    if (have && t->tw[p]->src == (const void *)w && t->tw[p]->late_gen == t->late_gen)
        return t->tw[p];
    if (have)
        tw_drop_at(t, p);
    if (!w)
        return NULL;
    /* The window's traces and the late ones of this window (a late one replaces the window's
     * entry of its rank). */
    size_t nlate = 0;
    for (size_t i = 0; i < t->n_late; i++)
        nlate += t->late[i].index == k;
    if (w->n_traces == 0 && nlate == 0)
        return NULL;
    size_t total = 0;
    for (size_t i = 0; i < w->n_traces; i++)
        if (w->traces[i] && w->traces[i]->trace && w->traces[i]->trace->state == MW_TRACE_EXACT)
            total += w->traces[i]->trace->count;
    for (size_t i = 0; i < t->n_late; i++)
        if (t->late[i].index == k && t->late[i].rt->trace->state == MW_TRACE_EXACT)
            total += t->late[i].rt->trace->count;

    mw_trace_window_t *tw = calloc(1, sizeof *tw);
    if (!tw)
        return NULL;
    tw->index = k;
    tw->start_ns = mw_model_window_start(m, k);
    tw->len_ns = w->window_ns;
    tw->reporting = w->ranks_reporting;
    tw->src = w;
    tw->late_gen = t->late_gen;
    if (make_room(m, t, total) < 0) {
        tw->over_cap = 1;
        t->st.over_cap++;
    } else {
        tw->ranks = calloc(w->n_traces + nlate, sizeof *tw->ranks);
        if (!tw->ranks) {
            free(tw);
            return NULL;
        }
        for (size_t i = 0; i < w->n_traces; i++) {
            mw_trace_rank_t *e = &tw->ranks[tw->n_ranks];
            if (decode_rank(m, t, k, tw->start_ns, w->traces[i], e) == 0)
                tw->n_ranks++;
        }
        for (size_t i = 0; i < t->n_late; i++) {
            if (t->late[i].index != k)
                continue;
            mw_trace_rank_t e;
            if (decode_rank(m, t, k, tw->start_ns, t->late[i].rt, &e) < 0)
                continue;
            uint32_t j = 0;
            while (j < tw->n_ranks && tw->ranks[j].rank != e.rank)
                j++;
            if (j < tw->n_ranks) {
                if (tw->ranks[j].exact) { /* the window's own exact trace stays */
                    free(e.recs);
                    continue;
                }
                free(tw->ranks[j].recs);
            } else {
                tw->n_ranks++;
            }
            tw->ranks[j] = e;
        }
        if (tw->n_ranks)
            qsort(tw->ranks, tw->n_ranks, sizeof *tw->ranks, rank_cmp);
        /* One entry per rank: a duplicate (a collector would not send one) is left out. */
        uint32_t o = 0;
        for (uint32_t i = 0; i < tw->n_ranks; i++) {
            if (o > 0 && tw->ranks[o - 1].rank == tw->ranks[i].rank) {
                free(tw->ranks[i].recs);
                t->st.decode_errors++;
                continue;
            }
            tw->ranks[o++] = tw->ranks[i];
        }
        tw->n_ranks = o;
        for (uint32_t i = 0; i < tw->n_ranks; i++) {
            tw->exact += tw->ranks[i].exact != 0;
            tw->records += tw->ranks[i].n;
        }
        tw->all_exact = tw->exact > 0 && tw->exact >= tw->reporting;
        t->records += tw->records;
        t->st.windows_decoded++;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        mw_trace_window_t **v = realloc(t->tw, cap * sizeof *v);
        if (!v) {
            t->records -= tw->records;
            tw_free(tw);
            return NULL;
        }
        t->tw = v;
        t->cap = cap;
    }
    p = tw_find(t, k); /* make_room may have moved it */
    memmove(&t->tw[p + 1], &t->tw[p], (t->n - p) * sizeof *t->tw);
    t->tw[p] = tw;
    t->n++;
    t->gen++;
    return tw;
}

mw_cover_t mw_trace_cover(const mw_model_t *m, uint64_t k)
{
    if (!mw_model_window(m, k))
        return MW_COVER_NONE;
    const mw_trace_window_t *tw = mw_trace_window(m, k);
    if (!tw || tw->over_cap || tw->exact == 0)
        return MW_COVER_SUMMARY;
    return tw->all_exact ? MW_COVER_EXACT : MW_COVER_PARTIAL;
}

void mw_trace_stats(const mw_model_t *m, mw_trace_stats_t *out)
{
    memset(out, 0, sizeof *out);
    if (!m->tr)
        return;
    *out = m->tr->st;
    out->windows_kept = m->tr->n;
    out->records_kept = m->tr->records;
    out->records_cap = m->tr->rec_cap;
}

const mw_trace_links_t *mw_trace_links(const mw_model_t *m, uint64_t k0, uint64_t k1)
{
    mw__traces_t *t = m->tr;
    if (!t)
        return NULL;
    /* Decode first: decoding changes the generation. */
    size_t nparts = 0;
    for (uint64_t k = k0; k <= k1 && k - k0 < MW__MAX_EXTRA_WINDOWS * 8; k++) {
        const mw_trace_window_t *tw = mw_trace_window(m, k);
        if (tw)
            nparts += tw->exact;
    }
    if (t->lvalid && t->lk0 == k0 && t->lk1 == k1 && t->lgen == t->gen)
        return &t->links;
    links_free(t);
    t->lk0 = k0;
    t->lk1 = k1;
    t->lgen = t->gen;
    t->lvalid = 1;
    if (nparts == 0)
        return &t->links;
    t->links.parts = calloc(nparts, sizeof *t->links.parts);
    t->links.part_window = calloc(nparts, sizeof *t->links.part_window);
    if (!t->links.parts || !t->links.part_window)
        return &t->links;
    size_t n = 0;
    for (uint64_t k = k0; k <= k1 && k - k0 < MW__MAX_EXTRA_WINDOWS * 8; k++) {
        size_t p = tw_find(t, k);
        if (p >= t->n || t->tw[p]->index != k)
            continue;
        const mw_trace_window_t *tw = t->tw[p];
        for (uint32_t i = 0; i < tw->n_ranks && n < nparts; i++) {
            if (!tw->ranks[i].exact)
                continue;
            mw_trace_part_t *pt = &t->links.parts[n];
            pt->rank = tw->ranks[i].rank;
            pt->recs = tw->ranks[i].recs;
            pt->n = tw->ranks[i].n;
            pt->base_ns = (int64_t)tw->ranks[i].base_ns;
            t->links.part_window[n] = k;
            n++;
        }
    }
    t->links.n_parts = n;
    if (mw_trace_match(t->links.parts, n, &t->links.m) == 0)
        t->links.ok = 1;
    else
        memset(&t->links.m, 0, sizeof t->links.m);
    return &t->links;
}

size_t mw_trace_open_calls(const mw_model_t *m, mw_trace_open_t *out, size_t max)
{
    uint64_t newest = 0;
    if (!m->tr || mw__newest_index(m, &newest) < 0)
        return 0;
    uint64_t now = mw_model_window_start(m, newest) + mw_model_window_len(m, newest);
    /* The newest traced window among the last few: its open calls have not ended in a window
     * the model holds. */
    size_t n = 0;
    for (uint64_t back = 0; back < 4 && back <= newest; back++) {
        const mw_trace_window_t *tw = mw_trace_window(m, newest - back);
        if (!tw || tw->exact == 0)
            continue;
        for (uint32_t i = 0; i < tw->n_ranks; i++) {
            const mw_trace_rank_t *e = &tw->ranks[i];
            for (size_t j = 0; j < e->n && n < max; j++) {
                const mw_trace_rec_t *r = &e->recs[j];
                if (!(r->flags & MW_TF_OPEN))
                    continue;
                mw_trace_open_t *o = &out[n++];
                o->rank = e->rank;
                o->fn = r->fn;
                o->start_ns = mw_trace_rec_start(e, r);
                o->dur_ns = r->dur_ns;
                uint64_t g = now > o->start_ns ? now - o->start_ns : 0;
                o->grown_ns = g > r->dur_ns ? g : r->dur_ns;
            }
        }
        break;
    }
    return n;
}
