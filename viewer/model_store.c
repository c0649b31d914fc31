/* model_store.c: the window store: the job description, the window cache and its paging (what
 * the screen needs, what to ask the source for, what to evict), the window grid, time steps,
 * function colors and the legend, the status counters and the highlighted rank's calls.
 * No SDL, no GL (see model_store.h).
 *
 * DESIGN: windows live in one array sorted by window index (binary search to find one; the
 * live feed appends at the end and history pages arrive in index order, so inserts are cheap).
 * Each window's memory is estimated from its array lengths; when the cache goes over budget,
 * the windows farthest from what the screen needs (mw_model_need) are evicted in one batch down
 * to 15/16 of the budget, so that the sort is paid once per many adds. What is needed is
 * trimmed to 3/4 of the budget (the call view's range first, then the end of the timeline's),
 * so that the model never asks for more than it can keep and the source and the evictor cannot
 * chase each other. Asked ranges and the windows already counted in the totals are small sets
 * of index intervals.
 */
#include "model_internal.h"
#include "mw_bins.h"
#include "mw_window_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_CACHE_BYTES ((size_t)256 << 20)
#define DEFAULT_WANTED 64

static const mw_rgb_t grey = {0.6f, 0.6f, 0.6f};

/* Tableau 10 without its grey, plus Tableau's olive from the classic set: distinct hues that
 * stay apart for the common color-vision deficiencies better than a rainbow does. */
static const mw_rgb_t palette[MW_PALETTE] = {
    {0x4e / 255.f, 0x79 / 255.f, 0xa7 / 255.f}, /* blue */
    {0xf2 / 255.f, 0x8e / 255.f, 0x2b / 255.f}, /* orange */
    {0xe1 / 255.f, 0x57 / 255.f, 0x59 / 255.f}, /* red */
    {0x76 / 255.f, 0xb7 / 255.f, 0xb2 / 255.f}, /* teal */
    {0x59 / 255.f, 0xa1 / 255.f, 0x4f / 255.f}, /* green */
    {0xed / 255.f, 0xc9 / 255.f, 0x48 / 255.f}, /* yellow */
    {0xb0 / 255.f, 0x7a / 255.f, 0xa1 / 255.f}, /* purple */
    {0xff / 255.f, 0x9d / 255.f, 0xa7 / 255.f}, /* pink */
    {0x9c / 255.f, 0x75 / 255.f, 0x5f / 255.f}, /* brown */
    {0xbc / 255.f, 0xbd / 255.f, 0x22 / 255.f}, /* olive */
};
/* ---- interval sets ------------------------------------------------------------------------ */

/* The span containing x, or NULL. */
static const mw__span_t *spans_find(const mw__spanset_t *s, uint64_t x)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->v[mid].b < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->n && s->v[lo].a <= x ? &s->v[lo] : NULL;
}

/* The first span starting after x, or NULL. */
static const mw__span_t *spans_next(const mw__spanset_t *s, uint64_t x)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->v[mid].a <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->n ? &s->v[lo] : NULL;
}

static int spans_reserve(mw__spanset_t *s, size_t n)
{
    if (n <= s->cap)
        return 0;
    size_t cap = s->cap ? s->cap * 2 : 8;
    while (cap < n)
        cap *= 2;
    mw__span_t *v = realloc(s->v, cap * sizeof *v);
    if (!v)
        return -1;
    s->v = v;
    s->cap = cap;
    return 0;
}

/* Adds [a, b], merging with the spans it touches. */
static int spans_add(mw__spanset_t *s, uint64_t a, uint64_t b)
{
    size_t i = 0;
    while (i < s->n && s->v[i].b != UINT64_MAX && s->v[i].b + 1 < a)
        i++;
    size_t j = i;
    while (j < s->n && (b == UINT64_MAX || s->v[j].a <= b + 1)) {
        if (s->v[j].a < a)
            a = s->v[j].a;
        if (s->v[j].b > b)
            b = s->v[j].b;
        j++;
    }
    if (j == i) {
        if (spans_reserve(s, s->n + 1) < 0)
            return -1;
        memmove(&s->v[i + 1], &s->v[i], (s->n - i) * sizeof *s->v);
        s->n++;
    } else if (j > i + 1) {
        memmove(&s->v[i + 1], &s->v[j], (s->n - j) * sizeof *s->v);
        s->n -= j - i - 1;
    }
    s->v[i].a = a;
    s->v[i].b = b;
    return 0;
}

/* Removes [a, b]; a span it cuts in two needs one more entry, which may fail (the set then
 * keeps a little too much, which only delays a request). */
static void spans_remove(mw__spanset_t *s, uint64_t a, uint64_t b)
{
    for (size_t i = 0; i < s->n;) {
        mw__span_t *v = &s->v[i];
        if (v->b < a || v->a > b) {
            i++;
        } else if (v->a >= a && v->b <= b) {
            memmove(v, v + 1, (s->n - i - 1) * sizeof *v);
            s->n--;
        } else if (v->a < a && v->b > b) {
            if (spans_reserve(s, s->n + 1) < 0)
                return;
            v = &s->v[i];
            memmove(v + 1, v, (s->n - i) * sizeof *v);
            s->n++;
            s->v[i].b = a - 1;
            s->v[i + 1].a = b + 1;
            i += 2;
        } else if (v->a < a) {
            v->b = a - 1;
            i++;
        } else {
            v->a = b + 1;
            i++;
        }
    }
}

static double floordiv(double a, double b)
{
    return floor(a / b);
}

static size_t lower_bound(const mw_model_t *m, uint64_t index)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->ent[mid].index < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const Mpiwatch__Window *mw_model_window(const mw_model_t *m, uint64_t index)
{
    size_t p = lower_bound(m, index);
    return p < m->n && m->ent[p].index == index ? m->ent[p].w : NULL;
}

/* What a message costs in memory, unpacked by protobuf-c: the struct, every repeated field's
 * array, strings, bytes and sub-messages, plus an allocation overhead each. Walked through the
 * message's descriptor so that no field is forgotten: counting a window's arrays by hand once
 * left out the per-rank fields (rf_*, rr_*, rank_mpi_permille), which at 100,000 ranks are 80%
 * of a window (64 MB of 80), so the cache held five times its budget. */
static size_t msg_bytes(const ProtobufCMessage *m, int depth)
{
    if (!m || depth > 8)
        return 0;
    const ProtobufCMessageDescriptor *d = m->descriptor;
    size_t b = d->sizeof_message + 16;
    const char *base = (const char *)m;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        size_t elem;
        switch (f->type) {
        case PROTOBUF_C_TYPE_INT64:
        case PROTOBUF_C_TYPE_SINT64:
        case PROTOBUF_C_TYPE_SFIXED64:
        case PROTOBUF_C_TYPE_UINT64:
        case PROTOBUF_C_TYPE_FIXED64:
        case PROTOBUF_C_TYPE_DOUBLE:
        case PROTOBUF_C_TYPE_STRING:
        case PROTOBUF_C_TYPE_MESSAGE:
            elem = 8;
            break;
        case PROTOBUF_C_TYPE_BYTES:
            elem = sizeof(ProtobufCBinaryData);
            break;
        default:
            elem = 4;
            break;
        }
        const void *at = base + f->offset;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)(const void *)(base + f->quantifier_offset);
            if (!n)
                continue;
            b += n * elem + 16;
            for (size_t k = 0; k < n; k++) {
                if (f->type == PROTOBUF_C_TYPE_MESSAGE)
                    b += msg_bytes(((ProtobufCMessage *const *)*(void *const *)at)[k], depth + 1);
                else if (f->type == PROTOBUF_C_TYPE_STRING) {
                    const char *str = ((char *const *)*(void *const *)at)[k];
                    b += str ? strlen(str) + 17 : 0;
                } else if (f->type == PROTOBUF_C_TYPE_BYTES)
                    b += ((const ProtobufCBinaryData *)*(void *const *)at)[k].len + 16;
                else
                    break;
            }
        } else if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
            b += msg_bytes(*(ProtobufCMessage *const *)at, depth + 1);
        } else if (f->type == PROTOBUF_C_TYPE_STRING) {
            const char *str = *(char *const *)at;
            b += str && str != (const char *)f->default_value ? strlen(str) + 17 : 0;
        } else if (f->type == PROTOBUF_C_TYPE_BYTES) {
            b += ((const ProtobufCBinaryData *)at)->len;
        }
    }
    return b;
}

/* What a window costs in memory, unpacked (per-call traces included: they travel encoded,
 * docs/trace.md; decoded ones are model_trace.c's). */
static size_t window_bytes(const Mpiwatch__Window *w)
{
    return msg_bytes(&w->base, 0);
}

mw_model_t *mw_model_new(size_t cache_bytes)
{
    mw_model_t *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->scratch = calloc(1, sizeof *m->scratch);
    m->ev = calloc(MW_EVENTS_MAX, sizeof *m->ev);
    m->tr = mw__traces_new();
    if (!m->scratch || !m->ev || !m->tr) {
        free(m->scratch);
        free(m->ev);
        mw__traces_free(m->tr);
        free(m);
        return NULL;
    }
    m->budget = cache_bytes ? cache_bytes : DEFAULT_CACHE_BYTES;
    memset(m->slot_of, MW_PALETTE, sizeof m->slot_of);
    m->slots_free = MW_PALETTE;
    return m;
}

static void drop_windows(mw_model_t *m)
{
    for (size_t i = 0; i < m->n; i++)
        mpiwatch__window__free_unpacked(m->ent[i].w, NULL);
    m->n = 0;
    m->bytes = 0;
}

/* Forgets everything about the previous job (its windows, requests, totals, colors). */
static size_t step_size(const Mpiwatch__Step *s)
{
    return 128 + s->n_pair_src * (2 * sizeof(uint32_t) + 2 * sizeof(uint64_t)) +
           s->n_functions * 64;
}

static void drop_steps(mw_model_t *m)
{
    for (size_t i = 0; i < m->n_steps; i++)
        mpiwatch__step__free_unpacked(m->steps[i], NULL);
    m->n_steps = 0;
    m->step_bytes = 0;
}

static void clear_job_state(mw_model_t *m)
{
    drop_windows(m);
    m->grid_set = 0;
    m->origin_set = m->origin_from_extent = 0;
    m->extent_set = 0;
    m->bytes_added = m->windows_added = 0;
    m->asked.n = 0;
    m->seen.n = 0;
    memset(m->total_ns, 0, sizeof m->total_ns);
    memset(m->slot_of, MW_PALETTE, sizeof m->slot_of);
    memset(m->slot_fn, 0, sizeof m->slot_fn);
    m->slots_free = MW_PALETTE;
    memset(&m->st, 0, sizeof m->st);
    m->have_newest = 0;
    free(m->rc);
    m->rc = NULL;
    m->rc_n = 0;
    drop_steps(m);
    mw__traces_clear(m->tr);
    m->ev_head = m->ev_n = 0;
    memset(&m->evc, 0, sizeof m->evc);
    m->generation++;
}

void mw_model_free(mw_model_t *m)
{
    if (!m)
        return;
    drop_windows(m);
    free(m->ent);
    free(m->asked.v);
    free(m->seen.v);
    free(m->rc);
    drop_steps(m);
    free(m->steps);
    if (m->job)
        mpiwatch__job_info__free_unpacked(m->job, NULL);
    free(m->scratch->grid);
    free(m->scratch->line);
    free(m->scratch->arc);
    free(m->scratch->stamp);
    free(m->scratch);
    mw__traces_free(m->tr);
    free(m->ev);
    free(m);
}

static int grid_valid(uint64_t window_ns, uint32_t subslots, uint32_t bins)
{
    return window_ns > 0 && subslots > 0 && subslots <= MW_MAX_SUBSLOTS && bins > 0 &&
           bins <= MW_MAX_DURATION_BINS;
}

/* The grid's arithmetic is proto's (mw_grid.h). Before any grid is known (m->grid.n == 0) its
 * zeroed seg[0] answers 0 for every window, as window_ns is 0 then. */
uint64_t mw_model_window_start(const mw_model_t *m, uint64_t k)
{
    return mw_grid_start(&m->grid, k);
}

uint64_t mw_model_window_len(const mw_model_t *m, uint64_t k)
{
    return mw_grid_len(&m->grid, k);
}

uint64_t mw_model_window_at(const mw_model_t *m, uint64_t g)
{
    return mw_grid_index(&m->grid, g);
}

static void grid_reset(mw_model_t *m, uint64_t window_ns)
{
    m->window_ns = window_ns;
    mw_grid_init(&m->grid, window_ns);
}

/* A window that carries its own start (the grid changed): a new segment from it on when the
 * grid known so far places it elsewhere, and it comes after the last known change. */
static void grid_learn(mw_model_t *m, const Mpiwatch__Window *w)
{
    if (!m->grid_set || !w->start_ns || m->grid.n == 0 || m->grid.n >= MW_GRID_MAX_SEGMENTS)
        return;
    if (mw_model_window_start(m, w->index) == w->start_ns &&
        mw_model_window_len(m, w->index) == w->window_ns)
        return;
    (void)mw_grid_push(&m->grid, w->index, w->start_ns, w->window_ns); /* refused: not after */
}

static int same_grid(const mw_model_t *m, const Mpiwatch__Window *w)
{
    uint64_t start = w->start_ns ? w->start_ns : w->index * w->window_ns;
    return w->window_ns == mw_model_window_len(m, w->index) &&
           start == mw_model_window_start(m, w->index) && w->subslots == m->subslots &&
           w->duration_bins == m->bins;
}

void mw_model_set_job(mw_model_t *m, Mpiwatch__JobInfo *job)
{
    if (!job)
        return;
    const char *name = job->job ? job->job : "";
    if (m->job && strcmp(m->job->job ? m->job->job : "", name) != 0)
        clear_job_state(m);
    if (m->job)
        mpiwatch__job_info__free_unpacked(m->job, NULL);
    m->job = job;
    m->st.ranks = job->size;
    /* The job's grid rules; windows taken before it (or of another grid) that do not fit it
     * are dropped. A job without a grid leaves the one taken from the windows. */
    if (grid_valid(job->window_ns, job->subslots, job->duration_bins)) {
        m->grid_set = 1;
        grid_reset(m, job->window_ns);
        /* The job's later segments, when its window length changed (checked: increasing
         * first windows, contiguous in time, lengths that grid_valid accepts). */
        for (size_t i = 1; i < job->n_grid && m->grid.n < MW_GRID_MAX_SEGMENTS; i++) {
            const Mpiwatch__GridSegment *g = job->grid[i];
            if (!g || !grid_valid(g->window_ns, 1, 1) ||
                g->first <= m->grid.seg[m->grid.n - 1].first ||
                g->start_ns != mw_model_window_start(m, g->first) ||
                mw_grid_push(&m->grid, g->first, g->start_ns, g->window_ns) < 0)
                break;
        }
        m->subslots = job->subslots;
        m->bins = job->duration_bins;
        size_t k = 0;
        for (size_t i = 0; i < m->n; i++) {
            if (same_grid(m, m->ent[i].w)) {
                m->ent[k++] = m->ent[i];
            } else {
                m->bytes -= m->ent[i].bytes;
                mpiwatch__window__free_unpacked(m->ent[i].w, NULL);
            }
        }
        m->n = k;
    }
}

long mw_model_step_find(const mw_model_t *m, uint64_t step)
{
    size_t lo = 0, hi = m->n_steps;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->steps[mid]->step < step)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->n_steps && m->steps[lo]->step == step ? (long)lo : -1;
}

int mw_model_add_step(mw_model_t *m, Mpiwatch__Step *s)
{
    if (!s)
        return -1;
    size_t sz = step_size(s);
    uint64_t num = s->step; /* s may be evicted below */
    if (sz > MW_STEPS_BYTES) {
        mpiwatch__step__free_unpacked(s, NULL);
        return -1;
    }
    size_t lo = 0, hi = m->n_steps;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->steps[mid]->step < s->step)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < m->n_steps && m->steps[lo]->step == s->step) {
        m->step_bytes -= step_size(m->steps[lo]);
        mpiwatch__step__free_unpacked(m->steps[lo], NULL);
        m->steps[lo] = s;
        m->step_bytes += sz;
    } else {
        if (m->n_steps == m->cap_steps) {
            size_t cap = m->cap_steps ? m->cap_steps * 2 : 64;
            Mpiwatch__Step **v = realloc(m->steps, cap * sizeof *v);
            if (!v) {
                mpiwatch__step__free_unpacked(s, NULL);
                return -1;
            }
            m->steps = v;
            m->cap_steps = cap;
        }
        memmove(m->steps + lo + 1, m->steps + lo, (m->n_steps - lo) * sizeof *m->steps);
        m->steps[lo] = s;
        m->n_steps++;
        m->step_bytes += sz;
    }
    /* Over the bounds: the lowest step numbers go (the newest is what a live view shows). */
    size_t drop = 0;
    while (m->n_steps - drop > 1 &&
           (m->n_steps - drop > MW_STEPS_MAX || m->step_bytes > MW_STEPS_BYTES)) {
        m->step_bytes -= step_size(m->steps[drop]);
        mpiwatch__step__free_unpacked(m->steps[drop], NULL);
        drop++;
    }
    if (drop) {
        memmove(m->steps, m->steps + drop, (m->n_steps - drop) * sizeof *m->steps);
        m->n_steps -= drop;
    }
    return mw_model_step_find(m, num) >= 0 ? 0 : -1;
}

size_t mw_model_step_count(const mw_model_t *m)
{
    return m->n_steps;
}

const Mpiwatch__Step *mw_model_step_at(const mw_model_t *m, size_t i)
{
    return i < m->n_steps ? m->steps[i] : NULL;
}

const Mpiwatch__JobInfo *mw_model_job(const mw_model_t *m)
{
    return m->job;
}

uint64_t mw_model_generation(const mw_model_t *m)
{
    return m->generation;
}

void mw_model_set_extent(mw_model_t *m, uint64_t oldest, uint64_t newest)
{
    if (newest < oldest)
        return;
    m->extent_set = 1;
    m->ext_old = oldest;
    m->ext_new = newest;
    /* The origin is the job's first window: the first extent tells it (a later one may have
     * lost old windows to the collector's history limit, which must not move the axis). */
    if (!m->origin_from_extent) {
        m->origin_from_extent = 1;
        m->origin_set = 1;
        m->origin_index = oldest;
    }
}

int mw_model_extent(const mw_model_t *m, uint64_t *oldest, uint64_t *newest)
{
    if (!m->extent_set)
        return -1;
    if (oldest)
        *oldest = m->ext_old;
    if (newest)
        *newest = m->ext_new;
    return 0;
}

uint64_t mw_model_origin_ns(const mw_model_t *m)
{
    return m->origin_set && m->grid_set ? mw_model_window_start(m, m->origin_index) : 0;
}

double mw_model_seconds(const mw_model_t *m, uint64_t global_ns)
{
    return (double)(int64_t)(global_ns - mw_model_origin_ns(m)) / MW__NS_PER_S;
}

/* Window index of time t (seconds), which may be before window 0. */
int64_t mw__index_of_rel(const mw_model_t *m, double rel)
{
    /* Relative to the origin's segment while rel is before every later one (and always on a
     * grid of one segment: the arithmetic of a job that never changed its window length). */
    const mw_grid_seg_t *seg = m->grid.seg;
    unsigned o = mw_grid_find(seg, m->grid.n, m->origin_index), i = m->grid.n ? m->grid.n - 1 : 0;
    uint64_t origin = mw_model_origin_ns(m);
    while (i > o && (double)(int64_t)(seg[i].start_ns - origin) > rel)
        i--;
    if (i <= o)
        return (int64_t)m->origin_index +
               (int64_t)floordiv(rel, (double)mw_model_window_len(m, m->origin_index));
    double from = rel - (double)(int64_t)(seg[i].start_ns - origin);
    return (int64_t)seg[i].first + (int64_t)floordiv(from, (double)seg[i].window_ns);
}

int64_t mw__index_of_time(const mw_model_t *m, double t)
{
    return mw__index_of_rel(m, t * MW__NS_PER_S);
}

/* The shortest window length of the grid. */
uint64_t mw__shortest_len(const mw_model_t *m)
{
    uint64_t l = m->window_ns;
    for (unsigned i = 1; i < m->grid.n; i++)
        if (m->grid.seg[i].window_ns < l)
            l = m->grid.seg[i].window_ns;
    return l;
}

/* Start of window k (absolute index) in ns from the origin. */
double mw__rel_start(const mw_model_t *m, int64_t k)
{
    if (k < 0)
        return (double)(k - (int64_t)m->origin_index) * (double)m->window_ns;
    return (double)(int64_t)(mw_model_window_start(m, (uint64_t)k) - mw_model_origin_ns(m));
}

/* The newest window known, from the extent or the windows seen; -1 when none. */
int mw__newest_index(const mw_model_t *m, uint64_t *newest)
{
    if (!m->extent_set && !m->have_newest)
        return -1;
    uint64_t n = m->extent_set ? m->ext_new : 0;
    if (m->have_newest && m->st.newest > n)
        n = m->st.newest;
    *newest = n;
    return 0;
}

/* ---- what is needed, eviction, requests --------------------------------------------------- */

/* The needed window ranges, most important first: the call view's range, then the timeline's;
 * trimmed (from their old end) to what 3/4 of the budget holds; clipped to the extent when
 * `clip`. Returns the number of ranges (0..2). */
static int needed_ranges(const mw_model_t *m, int clip, mw__span_t out[2])
{
    if (!m->need_set || !m->grid_set || !m->origin_set)
        return 0;
    double ranges[2][2] = {{m->need_f0, m->need_f1}, {m->need_t0, m->need_t1}};
    uint64_t avg = m->windows_added ? m->bytes_added / m->windows_added : 0;
    uint64_t room = avg ? (uint64_t)(m->budget / 4 * 3) / avg : UINT64_MAX;
    int n = 0;
    for (int i = 0; i < 2; i++) {
        if (!(ranges[i][1] > ranges[i][0]))
            continue;
        int64_t a = mw__index_of_time(m, ranges[i][0]);
        /* The window holding t1 is needed only when t1 is inside it. */
        int64_t b = mw__index_of_time(m, ranges[i][1] - 1e-12);
        if (b < a)
            b = a;
        if (b < 0)
            continue;
        if (a < 0)
            a = 0;
        if (clip) {
            if (!m->extent_set)
                return 0;
            if ((uint64_t)a < m->ext_old)
                a = (int64_t)m->ext_old;
            if ((uint64_t)b > m->ext_new)
                b = (int64_t)m->ext_new;
            if (b < a)
                continue;
        }
        uint64_t len = (uint64_t)(b - a) + 1;
        if (len > room)
            a = b - (int64_t)room + 1;
        if (room == 0)
            break;
        room -= len > room ? room : len;
        out[n].a = (uint64_t)a;
        out[n].b = (uint64_t)b;
        n++;
    }
    return n;
}

void mw_model_need(mw_model_t *m, double t0, double t1, double f0, double f1)
{
    m->need_set = 1;
    m->need_t0 = t0;
    m->need_t1 = t1;
    m->need_f0 = f0;
    m->need_f1 = f1;
}

typedef struct {
    uint64_t dist, tie;
    size_t pos;
} victim_t;

static int victim_cmp(const void *pa, const void *pb)
{
    const victim_t *a = pa, *b = pb;
    if (a->dist != b->dist)
        return a->dist < b->dist ? 1 : -1;
    if (a->tie != b->tie)
        return a->tie < b->tie ? 1 : -1;
    return 0;
}

static uint64_t dist_to(uint64_t x, const mw__span_t *s)
{
    return x < s->a ? s->a - x : x > s->b ? x - s->b : 0;
}

/* Evicts the windows farthest from the needed ranges (or, with none, the oldest) until the
 * cache is at 15/16 of its budget; `keep` (the window just added) goes last. */
static void evict(mw_model_t *m, uint64_t keep)
{
    if (m->bytes <= m->budget || m->n == 0)
        return;
    victim_t *v = malloc(m->n * sizeof *v);
    mw__span_t need[2];
    int nn = needed_ranges(m, 0, need);
    uint64_t newest = m->ent[m->n - 1].index;
    uint64_t center = nn ? need[0].a / 2 + need[0].b / 2 : newest;
    for (size_t i = 0; v && i < m->n; i++) {
        uint64_t x = m->ent[i].index;
        uint64_t d = nn ? UINT64_MAX : newest - x;
        for (int k = 0; k < nn; k++) {
            uint64_t dk = dist_to(x, &need[k]);
            if (dk < d)
                d = dk;
        }
        v[i].dist = x == keep ? 0 : d;
        v[i].tie = x == keep ? 0 : x > center ? x - center : center - x;
        v[i].pos = i;
    }
    size_t target = m->budget - m->budget / 16;
    if (v) {
        qsort(v, m->n, sizeof *v, victim_cmp);
        for (size_t i = 0; i < m->n && m->bytes > target; i++) {
            mw__entry_t *e = &m->ent[v[i].pos];
            m->bytes -= e->bytes;
            mpiwatch__window__free_unpacked(e->w, NULL);
            e->w = NULL;
        }
    } else {
        /* Out of memory for the ranking: the oldest windows go. */
        for (size_t i = 0; i < m->n && m->bytes > target; i++) {
            m->bytes -= m->ent[i].bytes;
            mpiwatch__window__free_unpacked(m->ent[i].w, NULL);
            m->ent[i].w = NULL;
        }
    }
    free(v);
    size_t k = 0;
    for (size_t i = 0; i < m->n; i++)
        if (m->ent[i].w)
            m->ent[k++] = m->ent[i];
    m->n = k;
}

/* Gives free palette slots to the functions with the most time that have none. */
static void assign_slots(mw_model_t *m)
{
    while (m->slots_free > 0) {
        unsigned best = 0;
        for (unsigned fn = 1; fn < MW_FN_SPACE; fn++)
            if (m->slot_of[fn] == MW_PALETTE && m->total_ns[fn] > 0 &&
                (best == 0 || m->total_ns[fn] > m->total_ns[best]))
                best = fn;
        if (best == 0)
            return;
        for (int s = 0; s < MW_PALETTE; s++) {
            if (m->slot_fn[s] == 0) {
                m->slot_fn[s] = best;
                m->slot_of[best] = (unsigned char)s;
                m->slots_free--;
                break;
            }
        }
    }
}

/* The one window policy (proto/mw_window_json.h): a window whose structure is broken is
 * refused whole; entries out of range are left out where they are drawn. */
static int window_valid(const Mpiwatch__Window *w)
{
    return mw_window_check(w) == NULL;
}

int mw_model_add_window(mw_model_t *m, Mpiwatch__Window *w)
{
    if (!w)
        return -1;
    int valid = window_valid(w);
    if (valid)
        grid_learn(m, w);
    else
        m->st.refused++;
    if (!valid || (m->grid_set && !same_grid(m, w))) {
        mpiwatch__window__free_unpacked(w, NULL);
        return -1;
    }
    if (!m->grid_set) {
        m->grid_set = 1;
        grid_reset(m, w->window_ns);
        if (w->start_ns) { /* a window after a change, before the job: its segment for now */
            m->grid.seg[0].first = w->index;
            m->grid.seg[0].start_ns = w->start_ns;
        }
        m->subslots = w->subslots;
        m->bins = w->duration_bins;
    }
    if (!m->origin_set) {
        m->origin_set = 1;
        m->origin_index = w->index;
    }
    size_t bytes = window_bytes(w);
    size_t p = lower_bound(m, w->index);
    if (p < m->n && m->ent[p].index == w->index) {
        m->bytes -= m->ent[p].bytes;
        mpiwatch__window__free_unpacked(m->ent[p].w, NULL);
    } else {
        if (m->n == m->cap) {
            size_t cap = m->cap ? m->cap * 2 : 256;
            mw__entry_t *e = realloc(m->ent, cap * sizeof *e);
            if (!e) {
                mpiwatch__window__free_unpacked(w, NULL);
                return -1;
            }
            m->ent = e;
            m->cap = cap;
        }
        memmove(&m->ent[p + 1], &m->ent[p], (m->n - p) * sizeof *m->ent);
        m->n++;
    }
    m->ent[p].index = w->index;
    m->ent[p].w = w;
    m->ent[p].bytes = bytes;
    m->bytes += bytes;
    m->bytes_added += bytes;
    m->windows_added++;

    /* Totals and counters count each window once, however often it is fetched again. */
    if (!spans_find(&m->seen, w->index)) {
        spans_add(&m->seen, w->index, w->index);
        m->st.windows++;
        if (w->ranks_missing > 0)
            m->st.partial++;
        m->st.samples_dropped += w->samples_dropped;
        m->st.records_dropped += w->records_dropped;
        for (size_t i = 0; i < w->n_functions; i++) {
            unsigned fn = w->functions[i]->fn;
            if (fn < MW_FN_SPACE)
                m->total_ns[fn] += w->functions[i]->total_ns;
        }
        assign_slots(m);
    }
    if (!m->have_newest || w->index >= m->st.newest) {
        m->have_newest = 1;
        m->st.newest = w->index;
        m->st.ranks_reporting = w->ranks_reporting;
    }
    evict(m, w->index);
    return 0;
}

int mw_model_wanted(mw_model_t *m, uint64_t *first, uint64_t *last, uint64_t max_windows)
{
    mw__span_t need[2];
    int nn = needed_ranges(m, 1, need);
    if (max_windows == 0)
        max_windows = DEFAULT_WANTED;
    for (int r = 0; r < nn; r++) {
        uint64_t k = need[r].a;
        while (k <= need[r].b) {
            size_t p = lower_bound(m, k);
            if (p < m->n && m->ent[p].index == k) {
                /* Skip the run of cached windows. */
                while (p < m->n && m->ent[p].index == k && k <= need[r].b) {
                    p++;
                    k++;
                }
                continue;
            }
            const mw__span_t *s = spans_find(&m->asked, k);
            if (s) {
                if (s->b == UINT64_MAX)
                    break;
                k = s->b + 1;
                continue;
            }
            uint64_t end = need[r].b;
            if (p < m->n && m->ent[p].index - 1 < end)
                end = m->ent[p].index - 1;
            const mw__span_t *nx = spans_next(&m->asked, k);
            if (nx && nx->a - 1 < end)
                end = nx->a - 1;
            if (end - k + 1 > max_windows)
                end = k + max_windows - 1;
            if (spans_add(&m->asked, k, end) < 0)
                return 0;
            *first = k;
            *last = end;
            return 1;
        }
    }
    return 0;
}

void mw_model_answered(mw_model_t *m, uint64_t first, uint64_t last)
{
    if (last >= first)
        spans_remove(&m->asked, first, last);
}

int mw_model_busy(const mw_model_t *m)
{
    return m->asked.n > 0;
}

size_t mw_model_cached_bytes(const mw_model_t *m)
{
    return m->bytes;
}

size_t mw_model_cached_windows(const mw_model_t *m)
{
    return m->n;
}

void mw_model_stats(const mw_model_t *m, mw_model_stats_t *out)
{
    *out = m->st;
    out->ranks = m->job ? m->job->size : 0;
}

/* ---- colors and the legend ---------------------------------------------------------------- */

int mw_model_slot(const mw_model_t *m, unsigned fn)
{
    return fn < MW_FN_SPACE ? m->slot_of[fn] : MW_PALETTE;
}

mw_rgb_t mw_model_color(const mw_model_t *m, unsigned fn)
{
    int s = mw_model_slot(m, fn);
    return s < MW_PALETTE ? palette[s] : grey;
}

mw_rgb_t mw__layer_color(int l)
{
    return l < MW_PALETTE ? palette[l] : grey;
}

int mw_model_legend(const mw_model_t *m, mw_legend_entry_t *out, int max)
{
    uint64_t all = 0, other = 0;
    for (unsigned fn = 1; fn < MW_FN_SPACE; fn++) {
        all += m->total_ns[fn];
        if (m->slot_of[fn] == MW_PALETTE)
            other += m->total_ns[fn];
    }
    mw_legend_entry_t e[MW_LEGEND_MAX];
    uint64_t tot[MW_LEGEND_MAX];
    int n = 0;
    for (int s = 0; s < MW_PALETTE; s++) {
        unsigned fn = m->slot_fn[s];
        if (!fn)
            continue;
        /* Insertion sort, most time first; equal times keep slot order. */
        int i = n++;
        while (i > 0 && tot[i - 1] < m->total_ns[fn]) {
            e[i] = e[i - 1];
            tot[i] = tot[i - 1];
            i--;
        }
        e[i].fn = fn;
        e[i].color = palette[s];
        e[i].share = all ? (double)m->total_ns[fn] / (double)all : 0.0;
        tot[i] = m->total_ns[fn];
    }
    if (other > 0) {
        e[n].fn = 0;
        e[n].color = grey;
        e[n].share = (double)other / (double)all;
        n++;
    }
    if (n > max)
        n = max > 0 ? max : 0;
    memcpy(out, e, (size_t)n * sizeof *e);
    return n;
}

void mw__window_range(const mw_model_t *m, int64_t a, int64_t b, size_t *p0, size_t *p1)
{
    if (a < 0)
        a = 0;
    if (b < a) {
        *p0 = *p1 = 0;
        return;
    }
    *p0 = lower_bound(m, (uint64_t)a);
    *p1 = b == INT64_MAX ? m->n : lower_bound(m, (uint64_t)b + 1);
}
/* ---- the calls of one rank ---------------------------------------------------------------- */

void mw_model_set_rank_calls(mw_model_t *m, uint32_t rank, const mw_rank_call_t *calls, size_t n)
{
    free(m->rc);
    m->rc = NULL;
    m->rc_n = 0;
    m->rc_rank = rank;
    if (!n || !calls)
        return;
    m->rc = malloc(n * sizeof *m->rc);
    if (!m->rc)
        return;
    memcpy(m->rc, calls, n * sizeof *m->rc);
    m->rc_n = n;
}

const mw_rank_call_t *mw_model_rank_calls(const mw_model_t *m, uint32_t *rank, size_t *n)
{
    if (rank)
        *rank = m->rc_rank;
    if (n)
        *n = m->rc_n;
    return m->rc;
}

size_t mw_rank_calls_from_sample(const Mpiwatch__Envelope *env, uint64_t window_ns,
                                 uint32_t subslots, uint32_t duration_bins, mw_rank_call_t *out,
                                 size_t *n, size_t max)
{
    if (!env || env->body_case != MPIWATCH__ENVELOPE__BODY_SAMPLE || !env->sample || !n)
        return 0;
    const Mpiwatch__Sample *s = env->sample;
    size_t added = 0;
    for (size_t i = 0; i < s->n_longest && *n < max; i++) {
        const Mpiwatch__Call *c = s->longest[i];
        if (!c)
            continue;
        mw_rank_call_t *o = &out[(*n)++];
        memset(o, 0, sizeof *o);
        o->fn = c->fn;
        o->start_ns = c->start_ns;
        o->duration_ns = c->duration_ns;
        o->bytes = c->bytes;
        o->peer = c->peer;
        o->count = 1;
        o->end = 0;
        o->exact = 1;
        added++;
    }
    if (!window_ns || !subslots)
        return added;
    size_t nd = s->n_density_fn;
    if (s->n_density_sub < nd)
        nd = s->n_density_sub;
    if (s->n_density_bin < nd)
        nd = s->n_density_bin;
    if (s->n_density_end < nd)
        nd = s->n_density_end;
    if (s->n_density_count < nd)
        nd = s->n_density_count;
    /* The sample's own place on the grid when it says (the grid can change mid-job). */
    if (s->window_ns)
        window_ns = s->window_ns;
    int64_t wstart = (int64_t)(s->window_start_ns ? s->window_start_ns : s->window * window_ns);
    for (size_t i = 0; i < nd && *n < max; i++) {
        if (s->density_count[i] == 0 || s->density_bin[i] >= MW_MAX_DURATION_BINS)
            continue;
        /* Sub-slot starts on the global clock; a negative sub-slot is in an earlier window. */
        int64_t num = (int64_t)s->density_sub[i] * (int64_t)window_ns;
        int64_t off = num / (int64_t)subslots;
        if (num % (int64_t)subslots != 0 && num < 0)
            off--;
        mw_rank_call_t *o = &out[(*n)++];
        memset(o, 0, sizeof *o);
        o->fn = s->density_fn[i];
        o->start_ns = (uint64_t)(wstart + off);
        o->duration_ns = mw_bin_min_ns(s->density_bin[i], duration_bins);
        o->count = s->density_count[i];
        o->peer = -1;
        o->end = s->density_end[i] ? 1 : 0;
        o->exact = 0;
        added++;
    }
    return added;
}
