/* model.c: the viewer's model: window cache, view state, layout, scales, colors, the stacked
 * timeline, the call-density buffers and picking. No SDL, no GL (see model.h).
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
 *
 * The call view is binned on the CPU in two passes so that the cost grows with the number of
 * density cells, not with the calls they count: points (START/END) first go into a grid of
 * (log2 bin, pixel column), spread over the columns their sub-slot covers, and each bin's row
 * is then spread over the pixel rows its duration span covers; lines go into per-bin
 * difference arrays (a cell is two additions whatever its length); arcs of one bin all have
 * the same shape, so they are gathered by start column and one walked polyline is stamped at
 * each (arcs wider than two plots, and long calls, are walked one by one). Recorded long calls
 * are drawn exactly and removed from the counts of their density cells so that they are not
 * counted twice.
 */
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_CACHE_BYTES ((size_t)256 << 20)
#define NS_PER_S 1e9
#define MIN_SPAN_S 1e-6 /* zoom limits: one microsecond ... */
#define MAX_SPAN_S 1e7  /* ... about four months */
#define DIM 0.125f      /* weight in C of what is not highlighted */
#define ARC_SEGMENTS 16
#define SCATTER_FILL 0.5   /* a cell with fewer calls than this share of its pixels: points */
#define SCATTER_MAX 65536u /* ... and never more points than this per cell */
#define SEED_MUL 0x9e3779b97f4a7c15ull
#define SEED_STEP 0xd1b54a32d192ed03ull
/* How far past the range calls that start in it are looked for, in windows. */
#define MAX_EXTRA_WINDOWS 2048
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

typedef struct {
    uint64_t a, b; /* inclusive */
} span_t;

typedef struct {
    span_t *v;
    size_t n, cap;
} spanset_t;

/* The span containing x, or NULL. */
static const span_t *spans_find(const spanset_t *s, uint64_t x)
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
static const span_t *spans_next(const spanset_t *s, uint64_t x)
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

static int spans_reserve(spanset_t *s, size_t n)
{
    if (n <= s->cap)
        return 0;
    size_t cap = s->cap ? s->cap * 2 : 8;
    while (cap < n)
        cap *= 2;
    span_t *v = realloc(s->v, cap * sizeof *v);
    if (!v)
        return -1;
    s->v = v;
    s->cap = cap;
    return 0;
}

/* Adds [a, b], merging with the spans it touches. */
static int spans_add(spanset_t *s, uint64_t a, uint64_t b)
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
static void spans_remove(spanset_t *s, uint64_t a, uint64_t b)
{
    for (size_t i = 0; i < s->n;) {
        span_t *v = &s->v[i];
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

/* ---- the model ---------------------------------------------------------------------------- */

typedef struct {
    uint64_t index;
    Mpiwatch__Window *w;
    size_t bytes;
} entry_t;

/* Buffers of mw_density_bin(), kept between frames; reached through a pointer so that a const
 * model can still use them. */
typedef struct {
    float *grid; /* [bins][w][4]: weight, r, g, b of points, before the rows are spread */
    size_t grid_cap;
    double *line; /* [bins][w + 1][4]: difference arrays of lines */
    size_t line_cap;
    float *arc; /* [bins][3w + 2][4]: arcs by start column (from -2w - 2), to be stamped */
    size_t arc_cap;
    int *stamp; /* the pixels of one bin's arc */
    size_t stamp_cap;
} scratch_t;

#define MODEL_MAX_SEGMENTS 16

struct mw_model {
    size_t budget;
    Mpiwatch__JobInfo *job;
    uint64_t generation;

    int grid_set;
    uint64_t window_ns; /* the job's first window length */
    uint32_t subslots, bins;
    /* The window grid (docs/steering.md, mpiwatch.window): seg[0] = {0, 0, window_ns}, later
     * segments from JobInfo.grid or from windows that carry their own start. */
    struct {
        uint64_t first, start_ns, len;
    } seg[MODEL_MAX_SEGMENTS];
    unsigned nseg;

    int origin_set, origin_from_extent;
    uint64_t origin_index;

    int extent_set;
    uint64_t ext_old, ext_new;

    entry_t *ent; /* sorted by index */
    size_t n, cap;
    size_t bytes;
    uint64_t bytes_added, windows_added; /* for the average size of a window */

    int need_set;
    double need_t0, need_t1, need_f0, need_f1;

    spanset_t asked; /* ranges handed out by mw_model_wanted and not answered */
    spanset_t seen;  /* windows counted in the totals and the stats */

    uint64_t total_ns[MW_FN_COUNT];
    unsigned char slot_of[MW_FN_COUNT]; /* palette slot, MW_PALETTE: none */
    unsigned slot_fn[MW_PALETTE];       /* function of each slot, 0: free */
    int slots_free;

    mw_model_stats_t st;
    int have_newest;

    uint32_t rc_rank;
    mw_rank_call_t *rc;
    size_t rc_n;

    scratch_t *scratch;

    Mpiwatch__Step **steps; /* sorted by step number */
    size_t n_steps, cap_steps, step_bytes;

    mw_event_t *ev; /* ring of MW_EVENTS_MAX: ev_n kept, the oldest at ev_head */
    size_t ev_head, ev_n;
    uint64_t ev_seq;
    mw_event_counts_t evc;
};

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

/* What a window costs in memory, unpacked: its arrays plus an allocation overhead each. */
static size_t window_bytes(const Mpiwatch__Window *w)
{
    size_t b = sizeof *w + 16 * 16;
    b += w->n_occ_fn * (4 + 4 + 8);
    b += w->n_density_fn * (4 + 4 + 4 + 4 + 8);
    b += w->n_pair_src * (4 + 4 + 8 + 8);
    for (size_t i = 0; i < w->n_functions; i++)
        b += sizeof(void *) + sizeof(Mpiwatch__FunctionStat) + 32 +
             (w->functions[i] ? w->functions[i]->n_hist * 4 : 0);
    b += w->n_longest * (sizeof(void *) + sizeof(Mpiwatch__Call) + 16);
    return b;
}

mw_model_t *mw_model_new(size_t cache_bytes)
{
    mw_model_t *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->scratch = calloc(1, sizeof *m->scratch);
    m->ev = calloc(MW_EVENTS_MAX, sizeof *m->ev);
    if (!m->scratch || !m->ev) {
        free(m->scratch);
        free(m->ev);
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
    free(m->ev);
    free(m);
}

static int grid_valid(uint64_t window_ns, uint32_t subslots, uint32_t bins)
{
    return window_ns > 0 && subslots > 0 && subslots <= MW_MAX_SUBSLOTS && bins > 0 &&
           bins <= MW_MAX_DURATION_BINS;
}

/* The segment of window k (the last one whose first window is <= k). */
static unsigned seg_of(const mw_model_t *m, uint64_t k)
{
    unsigned i = m->nseg ? m->nseg - 1 : 0;
    while (i > 0 && m->seg[i].first > k)
        i--;
    return i;
}

uint64_t mw_model_window_start(const mw_model_t *m, uint64_t k)
{
    if (m->nseg == 0)
        return k * m->window_ns;
    unsigned i = seg_of(m, k);
    return m->seg[i].start_ns + (k - m->seg[i].first) * m->seg[i].len;
}

uint64_t mw_model_window_len(const mw_model_t *m, uint64_t k)
{
    return m->nseg == 0 ? m->window_ns : m->seg[seg_of(m, k)].len;
}

uint64_t mw_model_window_at(const mw_model_t *m, uint64_t g)
{
    unsigned i = m->nseg ? m->nseg - 1 : 0;
    if (m->nseg == 0)
        return m->window_ns ? g / m->window_ns : 0;
    while (i > 0 && m->seg[i].start_ns > g)
        i--;
    return m->seg[i].first + (g - m->seg[i].start_ns) / m->seg[i].len;
}

static void grid_reset(mw_model_t *m, uint64_t window_ns)
{
    m->window_ns = window_ns;
    m->nseg = 1;
    m->seg[0].first = m->seg[0].start_ns = 0;
    m->seg[0].len = window_ns;
}

/* A window that carries its own start (the grid changed): a new segment from it on when the
 * grid known so far places it elsewhere, and it comes after the last known change. */
static void grid_learn(mw_model_t *m, const Mpiwatch__Window *w)
{
    if (!m->grid_set || !w->start_ns || m->nseg == 0 || m->nseg >= MODEL_MAX_SEGMENTS)
        return;
    if (mw_model_window_start(m, w->index) == w->start_ns &&
        mw_model_window_len(m, w->index) == w->window_ns)
        return;
    if (w->index <= m->seg[m->nseg - 1].first)
        return;
    m->seg[m->nseg].first = w->index;
    m->seg[m->nseg].start_ns = w->start_ns;
    m->seg[m->nseg].len = w->window_ns;
    m->nseg++;
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
        for (size_t i = 1; i < job->n_grid && m->nseg < MODEL_MAX_SEGMENTS; i++) {
            const Mpiwatch__GridSegment *g = job->grid[i];
            if (!g || !grid_valid(g->window_ns, 1, 1) || g->first <= m->seg[m->nseg - 1].first ||
                g->start_ns != mw_model_window_start(m, g->first))
                break;
            m->seg[m->nseg].first = g->first;
            m->seg[m->nseg].start_ns = g->start_ns;
            m->seg[m->nseg].len = g->window_ns;
            m->nseg++;
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
    return (double)(int64_t)(global_ns - mw_model_origin_ns(m)) / NS_PER_S;
}

/* ---- job events --------------------------------------------------------------------------- */

/* Copies at most cap - 1 bytes of src, cut at a UTF-8 character boundary, with control
 * characters (which would break a line of the events list) replaced by '?'. */
static void event_copy(char *dst, size_t cap, const char *src)
{
    size_t n = 0;
    if (src)
        while (src[n] && n < cap - 1)
            n++;
    if (src && src[n])
        while (n > 0 && ((unsigned char)src[n] & 0xc0) == 0x80)
            n--; /* do not end inside a character */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)src[i];
        dst[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
    }
    dst[n] = 0;
}

/* The value of field `name` ("window") in a detail of blank-separated name=value words: a
 * pointer to its first character and its length, or NULL. Only a word's start counts, so
 * "rank=" does not match inside "xrank=". */
static const char *event_field(const char *detail, const char *name, size_t *len)
{
    size_t nl = strlen(name);
    for (const char *p = detail; *p;) {
        if (!strncmp(p, name, nl) && p[nl] == '=') {
            const char *v = p + nl + 1;
            *len = strcspn(v, " ");
            return v;
        }
        p += strcspn(p, " ");
        p += strspn(p, " ");
    }
    return NULL;
}

/* A field as an unsigned integer below 2^53 (exact as a double). */
static int event_u64(const char *detail, const char *name, uint64_t *out)
{
    size_t len = 0;
    const char *v = event_field(detail, name, &len);
    if (!v || len == 0 || len > 16)
        return 0;
    uint64_t x = 0;
    for (size_t i = 0; i < len; i++) {
        if (v[i] < '0' || v[i] > '9')
            return 0;
        x = x * 10 + (uint64_t)(v[i] - '0');
    }
    if (x >= (1ull << 53))
        return 0;
    *out = x;
    return 1;
}

void mw_event_parse(mw_event_t *e, const char *kind, const char *detail, uint64_t real_ns)
{
    memset(e, 0, sizeof *e);
    e->rank = -1;
    event_copy(e->kind_name, sizeof e->kind_name, kind && *kind ? kind : "event");
    event_copy(e->detail, sizeof e->detail, detail ? detail : "");
    e->real_ns = real_ns;
    e->kind = !strcmp(e->kind_name, "rule")          ? MW_EVENT_RULE
              : !strcmp(e->kind_name, "steer")       ? MW_EVENT_STEER
              : !strcmp(e->kind_name, "action_exit") ? MW_EVENT_ACTION_EXIT
                                                     : MW_EVENT_OTHER;
    if (e->kind != MW_EVENT_RULE && e->kind != MW_EVENT_ACTION_EXIT)
        return;
    size_t len = 0;
    const char *v = event_field(e->detail, "rule", &len);
    if (v) {
        if (len >= sizeof e->rule)
            len = sizeof e->rule - 1;
        char tmp[MW_EVENT_NAME];
        memcpy(tmp, v, len);
        tmp[len] = 0;
        event_copy(e->rule, sizeof e->rule, tmp);
    }
    if (e->kind != MW_EVENT_RULE)
        return;
    e->has_window = event_u64(e->detail, "window", &e->window);
    if ((v = event_field(e->detail, "value", &len)) && len > 0 && len < 64) {
        char tmp[64], *end = NULL;
        memcpy(tmp, v, len);
        tmp[len] = 0;
        double x = strtod(tmp, &end);
        if (end == tmp + len && isfinite(x)) {
            e->has_value = 1;
            e->value = x;
        }
    }
    uint64_t r = 0;
    if (event_u64(e->detail, "rank", &r) && r <= UINT32_MAX)
        e->rank = (int64_t)r;
}

void mw_model_add_event(mw_model_t *m, const char *kind, const char *detail, uint64_t real_ns)
{
    mw_event_t e;
    mw_event_parse(&e, kind, detail, real_ns);
    e.seq = ++m->ev_seq;
    /* A rule's steer action publishes right after the firing is recorded: a steering message
     * within 50 ms of the newest event, a rule firing, is taken to be its action. */
    const mw_event_t *prev = m->ev_n ? mw_model_event_at(m, m->ev_n - 1) : NULL;
    if (e.kind == MW_EVENT_STEER && prev && prev->kind == MW_EVENT_RULE &&
        (e.real_ns > prev->real_ns ? e.real_ns - prev->real_ns : prev->real_ns - e.real_ns) <=
            50000000ull)
        e.steer_after = prev->seq;
    m->evc.total++;
    m->evc.by_kind[e.kind]++;
    if (m->ev_n == MW_EVENTS_MAX) {
        m->ev[m->ev_head] = e;
        m->ev_head = (m->ev_head + 1) % MW_EVENTS_MAX;
        m->evc.dropped++;
    } else {
        m->ev[(m->ev_head + m->ev_n) % MW_EVENTS_MAX] = e;
        m->ev_n++;
    }
}

size_t mw_model_event_count(const mw_model_t *m)
{
    return m->ev_n;
}

const mw_event_t *mw_model_event_at(const mw_model_t *m, size_t i)
{
    return i < m->ev_n ? &m->ev[(m->ev_head + i) % MW_EVENTS_MAX] : NULL;
}

void mw_model_event_counts(const mw_model_t *m, mw_event_counts_t *out)
{
    *out = m->evc;
}

int mw_model_event_time(const mw_model_t *m, const mw_event_t *e, double *t, uint64_t *window)
{
    if (!m->grid_set || !m->origin_set)
        return -1;
    uint64_t g;
    if (e->kind == MW_EVENT_RULE && e->has_window && e->window < UINT64_MAX / m->window_ns - 1)
        g = mw_model_window_start(m, e->window + 1);
    else if (e->real_ns)
        g = e->real_ns;
    else
        return -1;
    *t = mw_model_seconds(m, g);
    if (window)
        *window = e->kind == MW_EVENT_RULE && e->has_window ? e->window : mw_model_window_at(m, g);
    return 0;
}

void mw_event_text(const mw_model_t *m, const mw_event_t *e, const mw_event_t *with_steer,
                   char *buf, size_t len)
{
    if (!len)
        return;
    char w[32] = "";
    double t;
    uint64_t k;
    /* Windows are numbered from the run's first (as the topology view counts them): the
     * global index has eleven digits. */
    if (m && mw_model_event_time(m, e, &t, &k) == 0 && k >= m->origin_index)
        snprintf(w, sizeof w, "w %llu  ", (unsigned long long)(k - m->origin_index));
    else if (e->has_window)
        snprintf(w, sizeof w, "w %llu  ", (unsigned long long)e->window);
    char v[32] = "";
    if (e->has_value)
        snprintf(v, sizeof v, " %.3g", e->value);
    switch (e->kind) {
    case MW_EVENT_RULE:
        if (with_steer)
            snprintf(buf, len, "%srule %s%s → steer %s", w, e->rule[0] ? e->rule : "?", v,
                     with_steer->detail);
        else
            snprintf(buf, len, "%srule %s%s", w, e->rule[0] ? e->rule : "?", v);
        break;
    case MW_EVENT_STEER:
        snprintf(buf, len, "%ssteer %s", w, e->detail);
        break;
    default:
        snprintf(buf, len, "%s%s%s%s", w, e->kind_name, e->detail[0] ? ": " : "", e->detail);
        break;
    }
}

/* Window index of time t (seconds), which may be before window 0. */
static int64_t index_of_rel(const mw_model_t *m, double rel)
{
    /* Relative to the origin's segment while rel is before every later one (and always on a
     * grid of one segment: the arithmetic of a job that never changed its window length). */
    unsigned o = seg_of(m, m->origin_index), i = m->nseg ? m->nseg - 1 : 0;
    uint64_t origin = mw_model_origin_ns(m);
    while (i > o && (double)(int64_t)(m->seg[i].start_ns - origin) > rel)
        i--;
    if (i <= o)
        return (int64_t)m->origin_index +
               (int64_t)floordiv(rel, (double)mw_model_window_len(m, m->origin_index));
    double from = rel - (double)(int64_t)(m->seg[i].start_ns - origin);
    return (int64_t)m->seg[i].first + (int64_t)floordiv(from, (double)m->seg[i].len);
}

static int64_t index_of_time(const mw_model_t *m, double t)
{
    return index_of_rel(m, t * NS_PER_S);
}

/* The shortest window length of the grid. */
static uint64_t shortest_len(const mw_model_t *m)
{
    uint64_t l = m->window_ns;
    for (unsigned i = 1; i < m->nseg; i++)
        if (m->seg[i].len < l)
            l = m->seg[i].len;
    return l;
}

/* Start of window k (absolute index) in ns from the origin. */
static double rel_start(const mw_model_t *m, int64_t k)
{
    if (k < 0)
        return (double)(k - (int64_t)m->origin_index) * (double)m->window_ns;
    return (double)(int64_t)(mw_model_window_start(m, (uint64_t)k) - mw_model_origin_ns(m));
}

/* The newest window known, from the extent or the windows seen; -1 when none. */
static int newest_index(const mw_model_t *m, uint64_t *newest)
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
static int needed_ranges(const mw_model_t *m, int clip, span_t out[2])
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
        int64_t a = index_of_time(m, ranges[i][0]);
        /* The window holding t1 is needed only when t1 is inside it. */
        int64_t b = index_of_time(m, ranges[i][1] - 1e-12);
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

static uint64_t dist_to(uint64_t x, const span_t *s)
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
    span_t need[2];
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
            entry_t *e = &m->ent[v[i].pos];
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
        for (unsigned fn = 1; fn < MW_FN_COUNT; fn++)
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

static int window_valid(const Mpiwatch__Window *w)
{
    if (!grid_valid(w->window_ns, w->subslots, w->duration_bins))
        return 0;
    if (w->n_occ_sub != w->n_occ_fn || w->n_occ_ns != w->n_occ_fn)
        return 0;
    size_t nd = w->n_density_fn;
    if (w->n_density_sub != nd || w->n_density_bin != nd || w->n_density_end != nd ||
        w->n_density_count != nd)
        return 0;
    for (size_t i = 0; i < w->n_functions; i++)
        if (!w->functions[i])
            return 0;
    for (size_t i = 0; i < w->n_longest; i++)
        if (!w->longest[i])
            return 0;
    return 1;
}

int mw_model_add_window(mw_model_t *m, Mpiwatch__Window *w)
{
    if (!w)
        return -1;
    if (window_valid(w))
        grid_learn(m, w);
    if (!window_valid(w) || (m->grid_set && !same_grid(m, w))) {
        mpiwatch__window__free_unpacked(w, NULL);
        return -1;
    }
    if (!m->grid_set) {
        m->grid_set = 1;
        grid_reset(m, w->window_ns);
        if (w->start_ns) { /* a window after a change, before the job: its segment for now */
            m->seg[0].first = w->index;
            m->seg[0].start_ns = w->start_ns;
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
            entry_t *e = realloc(m->ent, cap * sizeof *e);
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
            if (fn < MW_FN_COUNT)
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
    span_t need[2];
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
            const span_t *s = spans_find(&m->asked, k);
            if (s) {
                if (s->b == UINT64_MAX)
                    break;
                k = s->b + 1;
                continue;
            }
            uint64_t end = need[r].b;
            if (p < m->n && m->ent[p].index - 1 < end)
                end = m->ent[p].index - 1;
            const span_t *nx = spans_next(&m->asked, k);
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

/* ---- the view state ----------------------------------------------------------------------- */

void mw_view_init(mw_view_t *v)
{
    memset(v, 0, sizeof *v);
    v->span = 30.0;
    v->t0 = 0.0;
    v->t1 = v->span;
    v->follow = 1;
    v->highlight_rank = -1;
    v->repr = MW_REPR_END;
    v->transfer = MW_TRANSFER_LOG;
    v->o_min = 0.3f; /* on the dark background, 0.15 leaves a lone call hard to see */
}

void mw_view_update(mw_view_t *v, const mw_model_t *m)
{
    if (!(v->span >= MIN_SPAN_S))
        v->span = v->span > 0 ? MIN_SPAN_S : 30.0;
    if (v->span > MAX_SPAN_S)
        v->span = MAX_SPAN_S;
    uint64_t newest;
    if (!m->grid_set || !m->origin_set || newest_index(m, &newest) < 0)
        return;
    double end = mw_model_seconds(m, mw_model_window_start(m, newest + 1));
    uint64_t oldest = m->extent_set ? m->ext_old : (m->n ? m->ent[0].index : m->origin_index);
    double begin = mw_model_seconds(m, mw_model_window_start(m, oldest));
    if (v->follow) {
        v->t1 = end;
        v->t0 = end - v->span;
        return;
    }
    double len = v->t1 - v->t0;
    if (!(len >= MIN_SPAN_S) || len > MAX_SPAN_S) {
        len = v->span;
        v->t0 = v->t1 - len;
    }
    /* A paused view stays over the data: not past its end, not before its beginning. */
    if (v->t1 > end) {
        v->t0 -= v->t1 - end;
        v->t1 = end;
    }
    if (v->t0 < begin) {
        v->t1 += begin - v->t0;
        v->t0 = begin;
    }
}

void mw_view_focus(const mw_view_t *v, double *t0, double *t1)
{
    if (v->sel1 > v->sel0) {
        *t0 = v->sel0;
        *t1 = v->sel1;
    } else {
        *t1 = v->t1;
        *t0 = v->t1 - 0.1 * (v->t1 - v->t0);
    }
}

void mw_view_scroll(mw_view_t *v, const mw_layout_t *l, double dx_px)
{
    if (l->timeline.w <= 0)
        return;
    double dt = dx_px * (v->t1 - v->t0) / l->timeline.w;
    v->t0 += dt;
    v->t1 += dt;
    v->follow = 0;
}

void mw_view_zoom(mw_view_t *v, const mw_layout_t *l, int x_px, double factor)
{
    if (!(factor > 0) || l->timeline.w <= 0)
        return;
    double old = v->t1 - v->t0;
    if (!(old > 0))
        old = v->span;
    double span = old / factor;
    if (span < MIN_SPAN_S)
        span = MIN_SPAN_S;
    if (span > MAX_SPAN_S)
        span = MAX_SPAN_S;
    int x = x_px < l->timeline.x                   ? l->timeline.x
            : x_px > l->timeline.x + l->timeline.w ? l->timeline.x + l->timeline.w
                                                   : x_px;
    double tx = mw_time_of_x(&l->timeline, v->t0, v->t0 + old, x);
    v->t0 = tx - (tx - v->t0) * (span / old);
    v->t1 = v->t0 + span;
    v->span = span;
    v->follow = 0;
}

/* ---- layout ------------------------------------------------------------------------------- */

static int imax(int a, int b)
{
    return a > b ? a : b;
}

static int imin(int a, int b)
{
    return a < b ? a : b;
}

void mw_layout(mw_layout_t *l, int width, int height, float scale, int show_timeline,
               int show_density, int legend_rows)
{
    memset(l, 0, sizeof *l);
    float s = scale > 0 ? scale : 1.0f;
    width = imax(width, 0);
    height = imax(height, 0);
    l->width = width;
    l->height = height;
    l->scale = s;
    l->show_timeline = show_timeline != 0;
    l->show_density = show_density != 0;
    l->font_px = imax(8, (int)lroundf(14.0f * s));
    int pad = imax(2, (int)lroundf(6.0f * s));
    int bar = l->font_px + 2 * pad;

    l->title = (mw_rect_t){0, 0, width, imin(bar, height)};
    l->status = (mw_rect_t){0, imax(height - bar, 0), width, imin(bar, height)};
    int top = l->title.h + pad;
    int bottom = imax(l->status.y - pad, top);

    /* The legend column: wide enough for "MPI_Allreduce  42.0%" at any size. */
    int lw = imax((int)lroundf(0.22f * (float)width), (int)lroundf(180.0f * s));
    lw = imin(lw, width / 2);
    l->legend_row_h = imax(1, (int)lroundf(1.5f * (float)l->font_px));
    int fit = imax(0, (bottom - top) * 3 / 5 / l->legend_row_h - 1);
    l->legend_rows = imax(0, imin(legend_rows, fit));
    int lx = width - lw;
    l->legend = (mw_rect_t){lx, top, imax(lw - pad, 0), (l->legend_rows + 1) * l->legend_row_h};
    int dy = l->legend.y + l->legend.h + pad;
    l->details = (mw_rect_t){lx, dy, l->legend.w, imax(bottom - dy, 0)};
    /* The events list takes what the details (a heading and six lines) leave, when that is
     * at least a heading and three lines. */
    int details_h = (int)lroundf(9.0f * (float)l->font_px);
    int events_y = dy + details_h + pad;
    if (bottom - events_y >= 5 * l->font_px) {
        l->details.h = details_h;
        l->events = (mw_rect_t){lx, events_y, l->legend.w, bottom - events_y};
    } else {
        l->events = (mw_rect_t){lx, bottom, l->legend.w, 0};
    }

    /* The plots: a left margin for the y labels, a strip under each for the x labels. */
    int left = imin((int)lroundf(7.0f * (float)l->font_px), lx / 2);
    int pw = imax(lx - pad - left, 0);
    int xlab = (int)lroundf(1.8f * (float)l->font_px);
    int avail = bottom - top;
    mw_rect_t none = {left, top, 0, 0};
    l->timeline = none;
    l->density = none;
    if (l->show_timeline && l->show_density) {
        int block = (int)lroundf(0.4f * (float)avail);
        l->timeline = (mw_rect_t){left, top, pw, imax(block - xlab, 0)};
        int y = top + block + pad;
        l->density = (mw_rect_t){left, y, pw, imax(bottom - y - xlab, 0)};
    } else if (l->show_timeline) {
        l->timeline = (mw_rect_t){left, top, pw, imax(avail - xlab, 0)};
    } else if (l->show_density) {
        l->density = (mw_rect_t){left, top, pw, imax(avail - xlab, 0)};
    }
}

/* ---- scales ------------------------------------------------------------------------------- */

double mw_x_of_time(const mw_rect_t *r, double t0, double t1, double t)
{
    if (!(t1 > t0))
        return r->x;
    return r->x + (t - t0) / (t1 - t0) * r->w;
}

double mw_time_of_x(const mw_rect_t *r, double t0, double t1, double x)
{
    if (r->w <= 0)
        return t0;
    return t0 + (x - r->x) / r->w * (t1 - t0);
}

double mw_y_of_duration(const mw_rect_t *r, double d0_ns, double d1_ns, double d_ns)
{
    if (!(d0_ns > 0) || !(d1_ns > d0_ns) || !(d_ns > 0))
        return r->y + r->h;
    return r->y + r->h - log(d_ns / d0_ns) / log(d1_ns / d0_ns) * r->h;
}

double mw_duration_of_y(const mw_rect_t *r, double d0_ns, double d1_ns, double y)
{
    if (!(d0_ns > 0) || !(d1_ns > d0_ns) || r->h <= 0)
        return d0_ns;
    return d0_ns * exp((r->y + r->h - y) / r->h * log(d1_ns / d0_ns));
}

static double nice_step(double raw)
{
    double e = pow(10.0, floor(log10(raw)));
    double f = raw / e;
    return (f <= 1.0 ? 1.0 : f <= 2.0 ? 2.0 : f <= 5.0 ? 5.0 : 10.0) * e;
}

int mw_time_ticks(double t0, double t1, const mw_rect_t *r, mw_tick_t *out, int max)
{
    if (!(t1 > t0) || r->w <= 0 || max <= 0)
        return 0;
    int target = imax(2, r->w / 110);
    double step = nice_step((t1 - t0) / target);
    /* The unit comes from the step: the largest in which the step needs at most one decimal
     * ("1.5 ms", not "1500 µs"); labels that would get too long in it (late in a long run) are
     * given in seconds. */
    double unit = step >= 0.1 ? 1.0 : step >= 1e-4 ? 1e-3 : 1e-6;
    double big = fmax(fabs(t0), fabs(t1)) / unit;
    if (big >= 1e5)
        unit = 1.0;
    const char *uname = unit == 1.0 ? "s" : unit == 1e-3 ? "ms" : "\xc2\xb5s";
    int dec = (int)ceil(-log10(step / unit) - 1e-9);
    if (dec < 0)
        dec = 0;
    int n = 0;
    double first = ceil(t0 / step - 1e-9);
    for (double i = first; n < max; i++) {
        double v = i * step;
        if (v > t1 + step * 1e-9)
            break;
        if (fabs(v) < step * 1e-6)
            v = 0.0;
        out[n].value = v;
        out[n].px = (int)lround(mw_x_of_time(r, t0, t1, v));
        snprintf(out[n].label, sizeof out[n].label, "%.*f %s", dec, v / unit, uname);
        n++;
    }
    return n;
}

/* A tick label of a duration axis: "1 µs", "20 ms", "500 ns", "2 s". */
static void duration_label(double ns, char *buf, size_t len)
{
    static const struct {
        double unit;
        const char *name;
    } units[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "\xc2\xb5s"}, {1.0, "ns"}};
    int u = 3;
    for (int i = 0; i < 3; i++) {
        if (ns >= units[i].unit * 0.9999) {
            u = i;
            break;
        }
    }
    double v = round(ns / units[u].unit * 1000.0) / 1000.0;
    snprintf(buf, len, "%g %s", v, units[u].name);
}

int mw_duration_ticks(double d0_ns, double d1_ns, const mw_rect_t *r, mw_tick_t *out, int max)
{
    if (!(d0_ns > 0) || !(d1_ns > d0_ns) || r->h <= 0 || max <= 0)
        return 0;
    double decades = log10(d1_ns / d0_ns);
    static const double fine[] = {1.0, 2.0, 5.0};
    int nmult = decades < 2.0 ? 3 : 1;
    /* Labels need about 18 pixels: with many decades in a short axis, every k-th one. */
    double px_per_decade = r->h / decades;
    int stride = px_per_decade >= 18.0 ? 1 : (int)ceil(18.0 / px_per_decade);
    int e0 = (int)floor(log10(d0_ns)), e1 = (int)ceil(log10(d1_ns));
    int n = 0;
    for (int e = e0; e <= e1 && n < max; e++) {
        if (((e % stride) + stride) % stride != 0)
            continue;
        for (int k = 0; k < nmult && n < max; k++) {
            double v = fine[k] * pow(10.0, e);
            if (v < d0_ns * (1 - 1e-9) || v > d1_ns * (1 + 1e-9))
                continue;
            out[n].value = v;
            out[n].px = (int)lround(mw_y_of_duration(r, d0_ns, d1_ns, v));
            duration_label(v, out[n].label, sizeof out[n].label);
            n++;
        }
    }
    return n;
}

void mw_format_duration(double ns, char *buf, size_t len)
{
    static const struct {
        double unit;
        const char *name;
    } units[] = {{1.0, "ns"}, {1e3, "\xc2\xb5s"}, {1e6, "ms"}, {1e9, "s"}};
    if (!len)
        return;
    const char *sign = ns < 0 ? "-" : "";
    ns = fabs(ns);
    if (!(ns > 0) || !isfinite(ns)) {
        snprintf(buf, len, "%s", isfinite(ns) ? "0 ns" : "?");
        return;
    }
    int u = 0;
    while (u < 3 && ns >= units[u + 1].unit)
        u++;
    for (;;) {
        double v = ns / units[u].unit;
        int dec = v >= 100.0 ? 0 : v >= 10.0 ? 1 : 2;
        double p = pow(10.0, dec);
        double rv = round(v * p) / p;
        /* 999.7 ns rounds to 1000: that is "1.00 µs". */
        if (rv >= 1000.0 && u < 3) {
            u++;
            continue;
        }
        if (rv >= 100.0)
            dec = 0;
        else if (rv >= 10.0 && dec > 1)
            dec = 1;
        snprintf(buf, len, "%s%.*f %s", sign, dec, rv, units[u].name);
        return;
    }
}

/* ---- colors and the legend ---------------------------------------------------------------- */

int mw_model_slot(const mw_model_t *m, unsigned fn)
{
    return fn < MW_FN_COUNT ? m->slot_of[fn] : MW_PALETTE;
}

mw_rgb_t mw_model_color(const mw_model_t *m, unsigned fn)
{
    int s = mw_model_slot(m, fn);
    return s < MW_PALETTE ? palette[s] : grey;
}

int mw_model_legend(const mw_model_t *m, mw_legend_entry_t *out, int max)
{
    uint64_t all = 0, other = 0;
    for (unsigned fn = 1; fn < MW_FN_COUNT; fn++) {
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

/* ---- the timeline ------------------------------------------------------------------------- */

#define LAYERS (MW_PALETTE + 1)

static int layer_of(const mw_model_t *m, unsigned fn)
{
    return fn < MW_FN_COUNT ? m->slot_of[fn] : MW_PALETTE;
}

int mw_timeline_columns(const mw_model_t *m, double t0, double t1, int ncols, float *out)
{
    const int stride = MW_PALETTE + 2;
    if (ncols <= 0)
        return 0;
    memset(out, 0, (size_t)ncols * stride * sizeof *out);
    if (!m->grid_set || !m->origin_set || !(t1 > t0) || m->n == 0)
        return 0;
    const uint32_t S = m->subslots;
    const double base = t0 * NS_PER_S, colw = (t1 - t0) * NS_PER_S / ncols;
    /* Fractions per sub-slot and layer of the window `cur`, computed once for the columns that
     * cut it. */
    double frac[MW_MAX_SUBSLOTS][LAYERS];
    int64_t cur = INT64_MIN;
    int with_data = 0;
    size_t pos = 0; /* cursor in the sorted windows: columns only move forward */
    for (int c = 0; c < ncols; c++) {
        double a = base + c * colw, b = a + colw;
        double acc[LAYERS] = {0}, covered = 0;
        /* k: absolute window index; the windows' own starts and lengths (the grid can
         * change mid-run). */
        int64_t k = index_of_rel(m, a);
        int64_t klast = index_of_rel(m, b);
        if (rel_start(m, klast) >= b)
            klast--;
        while (k <= klast) {
            int64_t abs = k;
            if (abs < 0) {
                k = 0;
                continue;
            }
            while (pos > 0 && m->ent[pos - 1].index >= (uint64_t)abs)
                pos--;
            while (pos < m->n && m->ent[pos].index < (uint64_t)abs)
                pos++;
            if (pos == m->n)
                break;
            if (m->ent[pos].index != (uint64_t)abs) {
                /* Jump over the gap to the next cached window. */
                k = (int64_t)m->ent[pos].index;
                continue;
            }
            const Mpiwatch__Window *w = m->ent[pos].w;
            const double W = (double)w->window_ns, ss = W / S;
            double ws = rel_start(m, k), we = ws + W;
            double oa = fmax(a, ws), ob = fmin(b, we);
            double rr = w->ranks_reporting;
            if (ob > oa && oa <= ws && ob >= we) {
                /* The whole window is in the column: its sub-slots need not be told apart. */
                for (size_t i = 0; rr > 0 && i < w->n_occ_fn; i++)
                    if (w->occ_sub[i] < S)
                        acc[layer_of(m, w->occ_fn[i])] += (double)w->occ_ns[i] / rr;
                covered += W;
            } else if (ob > oa) {
                if (cur != abs) {
                    cur = abs;
                    memset(frac, 0, sizeof frac);
                    for (size_t i = 0; rr > 0 && i < w->n_occ_fn; i++)
                        if (w->occ_sub[i] < S)
                            frac[w->occ_sub[i]][layer_of(m, w->occ_fn[i])] +=
                                (double)w->occ_ns[i] / (ss * rr);
                }
                int s0 = (int)floor((oa - ws) / ss), s1 = (int)ceil((ob - ws) / ss) - 1;
                s0 = imax(s0, 0);
                s1 = imin(s1, (int)S - 1);
                for (int s = s0; s <= s1; s++) {
                    double ov = fmin(ob, ws + (s + 1) * ss) - fmax(oa, ws + s * ss);
                    if (ov <= 0)
                        continue;
                    for (int l = 0; l < LAYERS; l++)
                        acc[l] += frac[s][l] * ov;
                    covered += ov;
                }
            }
            k++;
        }
        if (covered > 0) {
            float *o = &out[(size_t)c * stride];
            double cum = 0;
            for (int l = 0; l < LAYERS; l++) {
                cum += acc[l] / covered;
                o[l] = (float)(cum < 1.0 ? cum : 1.0);
            }
            o[MW_PALETTE + 1] = 1.0f;
            with_data++;
        }
    }
    return with_data;
}

/* ---- the call-density view ---------------------------------------------------------------- */

/* The range of cached windows [*p0, *p1) whose index is in [a, b]. */
static void window_range(const mw_model_t *m, int64_t a, int64_t b, size_t *p0, size_t *p1)
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

static unsigned bin_of(uint64_t ns, uint32_t nbins)
{
    unsigned b = ns ? 63u - (unsigned)__builtin_clzll(ns) : 0u;
    return b < nbins ? b : nbins - 1;
}

void mw_density_range(const mw_model_t *m, double t0, double t1, double *d0_ns, double *d1_ns)
{
    int lo = -1, hi = -1;
    if (m->grid_set && m->origin_set && t1 > t0) {
        size_t p0, p1;
        window_range(m, index_of_time(m, t0), index_of_time(m, t1), &p0, &p1);
        for (size_t p = p0; p < p1; p++) {
            const Mpiwatch__Window *w = m->ent[p].w;
            for (size_t i = 0; i < w->n_density_fn; i++) {
                int b = (int)w->density_bin[i];
                if (w->density_count[i] == 0 || b >= (int)m->bins)
                    continue;
                if (lo < 0 || b < lo)
                    lo = b;
                if (b > hi)
                    hi = b;
            }
            for (size_t i = 0; i < w->n_longest; i++) {
                if (!w->longest[i]->duration_ns)
                    continue;
                int b = (int)bin_of(w->longest[i]->duration_ns, 64);
                if (lo < 0 || b < lo)
                    lo = b;
                if (b > hi)
                    hi = b;
            }
        }
    }
    double d0 = 1e3, d1 = 1e9;
    if (lo >= 0) {
        /* Half a bin of room above the longest calls and below the shortest, so that the
         * markers of the extreme calls are not cut by the plot's edges. */
        d0 = ldexp(M_SQRT1_2, lo);
        d1 = ldexp(M_SQRT2, hi + 1);
    }
    /* At least two decades, so that a lone bin does not fill the plot. */
    if (d1 / d0 < 100.0) {
        double g = sqrt(d0 * d1);
        d0 = g / 10.0;
        d1 = g * 10.0;
        if (d0 < 1.0) {
            d1 /= d0;
            d0 = 1.0;
        }
    }
    *d0_ns = d0;
    *d1_ns = d1;
}

/* The frame of one mw_density_bin(): where things go on the w x h buffers. */
typedef struct {
    int w, h;
    double t0ns; /* left edge, ns since the origin */
    double xs;   /* pixels per ns */
    double l2d0; /* log2 of the bottom duration */
    double ys;   /* rows per log2 unit */
    uint64_t origin_ns;
    float *D, *C; /* sums of weight and of weighted color until normalized */
} frame_t;

static void frame_init(frame_t *f, const mw_model_t *m, double t0, double t1, double d0, double d1,
                       int w, int h, float *D, float *C)
{
    f->w = w;
    f->h = h;
    f->t0ns = t0 * NS_PER_S;
    f->xs = w / ((t1 - t0) * NS_PER_S);
    f->l2d0 = log2(d0);
    f->ys = h / (log2(d1) - f->l2d0);
    f->origin_ns = mw_model_origin_ns(m);
    f->D = D;
    f->C = C;
}

static double frame_x(const frame_t *f, uint64_t global_ns)
{
    return ((double)(int64_t)(global_ns - f->origin_ns) - f->t0ns) * f->xs;
}

static double frame_y(const frame_t *f, double d_ns)
{
    return (log2(d_ns) - f->l2d0) * f->ys;
}

static void plot(const frame_t *f, int x, int y, float wgt, const float cw[3])
{
    if (x < 0 || y < 0 || x >= f->w || y >= f->h)
        return;
    size_t i = (size_t)y * f->w + x;
    f->D[i] += wgt;
    f->C[3 * i] += cw[0] * wgt;
    f->C[3 * i + 1] += cw[1] * wgt;
    f->C[3 * i + 2] += cw[2] * wgt;
}

/* A recorded call drawn as a point: 2 x 2 pixels (one pixel is lost on a large screen), each
 * of density 1, so that it counts like any other call in Dmax and the transfer function. */
static void plot_dot(const frame_t *f, int x, int y, const float cw[3])
{
    int x1 = x + 1 < f->w ? x + 1 : x - 1, y1 = y + 1 < f->h ? y + 1 : y - 1;
    plot(f, x, y, 1.0f, cw);
    plot(f, x1, y, 1.0f, cw);
    plot(f, x, y1, 1.0f, cw);
    plot(f, x1, y1, 1.0f, cw);
}

/* splitmix64's finalizer: a well-mixed 64-bit hash of a counter. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The arc's polyline: ARC_SEGMENTS + 1 points of a half ellipse from (xa, 0) to (xb, 0) with
 * its apex at height ya. */
static void arc_points(double xa, double xb, double ya, double px[], double py[])
{
    double cx = (xa + xb) / 2, rx = (xb - xa) / 2;
    for (int i = 0; i <= ARC_SEGMENTS; i++) {
        double th = M_PI * (1.0 - (double)i / ARC_SEGMENTS);
        px[i] = cx + rx * cos(th);
        py[i] = ya * sin(th);
    }
}

typedef void (*pixel_fn)(void *ctx, int x, int y);

/* Walks the pixels an arc touches, each once along its path, in columns [0, xhi) (so that a
 * long arc costs its visible part only); rows are the visitor's to clip. */
static void arc_walk(double xa, double xb, double ya, int xhi, pixel_fn visit, void *ctx)
{
    if (xb < 0 || xa >= xhi || ya < 0)
        return;
    if (xb - xa < 1.0) {
        /* Narrower than a pixel: a vertical stroke, each pixel once. */
        int x = (int)floor(xa), top = (int)floor(ya);
        for (int y = 0; y <= top; y++)
            visit(ctx, x, y);
        return;
    }
    double px[ARC_SEGMENTS + 1], py[ARC_SEGMENTS + 1];
    arc_points(xa, xb, ya, px, py);
    int lastx = INT32_MIN, lasty = INT32_MIN;
    for (int s = 0; s < ARC_SEGMENTS; s++) {
        double x0 = px[s], y0 = py[s], x1 = px[s + 1], y1 = py[s + 1];
        if ((x0 < 0 && x1 < 0) || (x0 >= xhi && x1 >= xhi)) {
            lastx = lasty = INT32_MIN;
            continue;
        }
        double u0 = 0, u1 = 1, dx = x1 - x0;
        if (dx != 0) {
            double ua = (0 - x0) / dx, ub = (xhi - x0) / dx;
            if (ua > ub) {
                double t = ua;
                ua = ub;
                ub = t;
            }
            u0 = ua > u0 ? ua : u0;
            u1 = ub < u1 ? ub : u1;
        }
        double ax = x0 + u0 * dx, ay = y0 + u0 * (y1 - y0);
        double bx = x0 + u1 * dx, by = y0 + u1 * (y1 - y0);
        int steps = (int)ceil(fmax(fabs(bx - ax), fabs(by - ay))) + 1;
        for (int i = 0; i <= steps; i++) {
            double u = (double)i / steps;
            int x = (int)floor(ax + u * (bx - ax)), y = (int)floor(ay + u * (by - ay));
            if ((x == lastx && y == lasty) || x < 0 || x >= xhi)
                continue;
            lastx = x;
            lasty = y;
            visit(ctx, x, y);
        }
    }
}

typedef struct {
    const frame_t *f;
    float wgt;
    const float *cw;
} plot_ctx_t;

static void plot_visit(void *ctx, int x, int y)
{
    plot_ctx_t *p = ctx;
    plot(p->f, x, y, p->wgt, p->cw);
}

/* Adds `wgt` to each pixel an arc touches. */
static void draw_arc(const frame_t *f, double xa, double xb, double ya, float wgt,
                     const float cw[3])
{
    plot_ctx_t p = {f, wgt, cw};
    arc_walk(xa, xb, ya, f->w, plot_visit, &p);
}

/* The pixels of one arc as (x, y) offsets: every arc of a log2 bin has the same shape, so it is
 * walked once and stamped at each start column. */
typedef struct {
    int *xy;
    size_t n, cap;
    int h;
} stamp_t;

static void stamp_visit(void *ctx, int x, int y)
{
    stamp_t *s = ctx;
    if (y < 0 || y >= s->h || s->n >= s->cap)
        return;
    s->xy[2 * s->n] = x;
    s->xy[2 * s->n + 1] = y;
    s->n++;
}

/* Grows the scratch array whose pointer is at `pp` to at least n elements of `elem` bytes
 * (kept between calls, so that binning allocates nothing in the steady state). The pointer
 * is moved with memcpy so that one function serves arrays of every type. */
static int scratch_reserve(void *pp, size_t *cap, size_t elem, size_t n)
{
    if (n <= *cap)
        return 0;
    void *p;
    memcpy(&p, pp, sizeof p);
    void *q = realloc(p, n * elem);
    if (!q)
        return -1;
    memcpy(pp, &q, sizeof q);
    *cap = n;
    return 0;
}

/* Long calls already counted in a window's density cells, keyed by the cell they fall in. */
#define LC_SLOTS 128
typedef struct {
    uint64_t key[LC_SLOTS];
    uint32_t left[LC_SLOTS];
    uint64_t bins; /* bit b: a long call of bin b; other cells skip the lookup */
} lc_table_t;

static uint64_t cell_key(unsigned fn, int sub, unsigned bin, unsigned end)
{
    return ((uint64_t)fn << 28 | (uint64_t)(bin & 0xff) << 20 | (uint64_t)(end & 1) << 19 |
            (uint64_t)((uint32_t)(sub + 65536) & 0x7ffff)) +
           1;
}

static uint32_t lc_hash(uint64_t key)
{
    return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 57) & (LC_SLOTS - 1);
}

static void lc_add(lc_table_t *t, uint64_t key)
{
    for (uint32_t h = lc_hash(key);; h = (h + 1) & (LC_SLOTS - 1)) {
        if (t->key[h] == key || t->key[h] == 0) {
            t->key[h] = key;
            t->left[h]++;
            return;
        }
    }
}

/* Takes what is left to remove from the cell `key` (the long calls counted in it). */
static uint64_t lc_take(lc_table_t *t, uint64_t key, uint64_t count)
{
    for (uint32_t h = lc_hash(key); t->key[h]; h = (h + 1) & (LC_SLOTS - 1)) {
        if (t->key[h] == key) {
            uint64_t n = t->left[h] < count ? t->left[h] : count;
            t->left[h] -= (uint32_t)n;
            return n;
        }
    }
    return 0;
}

/* The cells of window w in which its recorded long calls were counted, as the library counts
 * them (pmpi-shim/record.c): by end in the sub-slot of the end; by start in the sub-slot of
 * the start, or whole sub-slots back (at most one window) for a start in an earlier window. */
static void lc_build(lc_table_t *t, const Mpiwatch__Window *w)
{
    memset(t, 0, sizeof *t);
    uint64_t W = w->window_ns, S = w->subslots, ss = W / S ? W / S : 1;
    uint64_t wstart = w->start_ns ? w->start_ns : w->index * W;
    size_t n = w->n_longest < LC_SLOTS / 2 ? w->n_longest : LC_SLOTS / 2;
    for (size_t i = 0; i < n; i++) {
        const Mpiwatch__Call *c = w->longest[i];
        unsigned bin = bin_of(c->duration_ns, w->duration_bins);
        t->bins |= 1ull << bin;
        uint64_t end = c->start_ns + c->duration_ns;
        uint64_t se = end > wstart ? (end - wstart) / ss : 0;
        if (se >= S)
            se = S - 1;
        lc_add(t, cell_key(c->fn, (int)se, bin, 1));
        int sub;
        if (c->start_ns >= wstart) {
            uint64_t s = (c->start_ns - wstart) / ss;
            sub = (int)(s < S ? s : S - 1);
        } else {
            uint64_t back = (wstart - c->start_ns + ss - 1) / ss;
            sub = -(int)(back < S ? back : S);
        }
        lc_add(t, cell_key(c->fn, sub, bin, 0));
    }
}

float mw_density_bin(const mw_model_t *m, const mw_view_t *v, double t0, double t1, double d0_ns,
                     double d1_ns, int w, int h, float *D, float *C)
{
    if (w <= 0 || h <= 0)
        return 0.0f;
    size_t npx = (size_t)w * h;
    memset(D, 0, npx * sizeof *D);
    memset(C, 0, 3 * npx * sizeof *C);
    if (!m->grid_set || !m->origin_set || !(t1 > t0) || !(d0_ns > 0) || !(d1_ns > d0_ns))
        return 0.0f;

    frame_t f;
    frame_init(&f, m, t0, t1, d0_ns, d1_ns, w, h, D, C);
    const mw_repr_t repr = v->repr < MW_REPR_COUNT ? v->repr : MW_REPR_END;
    const unsigned nb = m->bins, S = m->subslots;
    const unsigned want_end = repr == MW_REPR_START ? 0 : 1;
    const double W = (double)shortest_len(m); /* extra windows for long calls */
    const unsigned hfn = v->highlight_fn;
    const int64_t hrank = v->highlight_rank;
    scratch_t *sc = m->scratch;

    /* Colors per layer, and the dimmed ones. */
    float col[LAYERS][3], dimcol[LAYERS][3];
    for (int l = 0; l < LAYERS; l++) {
        mw_rgb_t c = l < MW_PALETTE ? palette[l] : grey;
        col[l][0] = c.r;
        col[l][1] = c.g;
        col[l][2] = c.b;
        for (int k = 0; k < 3; k++)
            dimcol[l][k] = col[l][k] * DIM;
    }

    /* Rows each bin covers (points) and the row of its geometric mean (lines, arcs). */
    double yb0[MW_MAX_DURATION_BINS], yb1[MW_MAX_DURATION_BINS];
    int visible[MW_MAX_DURATION_BINS], used[MW_MAX_DURATION_BINS];
    for (unsigned b = 0; b < nb; b++) {
        yb0[b] = (b - f.l2d0) * f.ys;
        yb1[b] = (b + 1 - f.l2d0) * f.ys;
        double ym = (b + 0.5 - f.l2d0) * f.ys;
        visible[b] = repr == MW_REPR_START || repr == MW_REPR_END ? yb1[b] > 0 && yb0[b] < h
                                                                  : ym >= 0 && ym < h;
        used[b] = 0;
    }
    float *grid = NULL;
    double *line = NULL;
    if (repr == MW_REPR_START || repr == MW_REPR_END) {
        if (scratch_reserve(&sc->grid, &sc->grid_cap, sizeof *sc->grid, (size_t)nb * w * 4) < 0)
            return 0.0f;
        grid = sc->grid;
        memset(grid, 0, (size_t)nb * w * 4 * sizeof *grid);
    } else if (repr == MW_REPR_LINES) {
        if (scratch_reserve(&sc->line, &sc->line_cap, sizeof *sc->line, (size_t)nb * (w + 1) * 4) <
            0)
            return 0.0f;
        line = sc->line;
        memset(line, 0, (size_t)nb * (w + 1) * 4 * sizeof *line);
    }
    /* Arcs up to two plot widths wide are gathered by start column and stamped; wider ones (few:
     * they need a deep zoom) are drawn one by one. */
    float *arc = NULL;
    const int aoff = 2 * w + 2, aw = w + aoff;
    if (repr == MW_REPR_ARCS) {
        if (scratch_reserve(&sc->arc, &sc->arc_cap, sizeof *sc->arc, (size_t)nb * aw * 4) < 0)
            return 0.0f;
        arc = sc->arc;
        memset(arc, 0, (size_t)nb * aw * 4 * sizeof *arc);
    }

    /* Calls visible in [t0, t1] end at or after t0; with END they end in it, with the others
     * they may end up to the longest duration shown after it. */
    int64_t k0 = index_of_time(m, t0), k1 = index_of_time(m, t1);
    if (repr != MW_REPR_END) {
        double extra = ceil(d1_ns / W) + 1;
        k1 += (int64_t)fmin(extra, MAX_EXTRA_WINDOWS);
    }
    size_t p0, p1;
    window_range(m, k0, k1, &p0, &p1);
    lc_table_t lc;

    for (size_t p = p0; p < p1; p++) {
        const Mpiwatch__Window *win = m->ent[p].w;
        const double wsr = rel_start(m, (int64_t)win->index) - f.t0ns;
        const double ss = (double)win->window_ns / S;
        const int have_lc = win->n_longest > 0;
        if (have_lc)
            lc_build(&lc, win);
        for (size_t i = 0; i < win->n_density_fn; i++) {
            unsigned b = win->density_bin[i];
            if (win->density_end[i] != want_end || b >= nb || !visible[b])
                continue;
            unsigned fn = win->density_fn[i];
            int sub = win->density_sub[i];
            uint64_t cnt = win->density_count[i];
            if (have_lc && (lc.bins >> b & 1))
                cnt -= lc_take(&lc, cell_key(fn, sub, b, want_end), cnt);
            if (cnt == 0)
                continue;
            int l = layer_of(m, fn);
            int dim = (hfn && fn != hfn) || hrank >= 0;
            const float *cw = dim ? dimcol[l] : col[l];
            float c = (float)cnt;
            if (grid) {
                double xa = (wsr + sub * ss) * f.xs, xb = xa + ss * f.xs;
                if (xb <= 0 || xa >= w)
                    continue;
                double area = (xb - xa) * (yb1[b] - yb0[b]);
                if ((double)cnt < area * SCATTER_FILL && cnt <= SCATTER_MAX) {
                    /* Fewer calls than the cell has pixels: each call becomes a point at a
                     * place drawn from a hash of the cell (stable from frame to frame), so a
                     * sparse cell looks like the calls it holds, each at density 1 like an
                     * exact call, rather than a faint block. */
                    uint64_t seed = cell_key(fn, sub, b, want_end) ^ (win->index * SEED_MUL);
                    for (uint64_t k = 0; k < cnt; k++) {
                        uint64_t r = mix64(seed + k * SEED_STEP);
                        double u = (double)(r & 0xffffffffu) * 0x1p-32;
                        double vv = (double)(r >> 32) * 0x1p-32;
                        double x = xa + u * (xb - xa), y = yb0[b] + vv * (yb1[b] - yb0[b]);
                        if (x >= 0 && y >= 0)
                            plot(&f, (int)x, (int)y, 1.0f, cw);
                    }
                    continue;
                }
                /* Clamped before the conversion: deep zooms put far cells beyond int. */
                int i0 = xa < -1.0 ? -1 : (int)floor(xa);
                int i1 = xb > w + 1.0 ? w : (int)ceil(xb) - 1;
                double inv = 1.0 / (xb - xa);
                if (i0 == i1) {
                    float *g = &grid[((size_t)b * w + i0) * 4];
                    g[0] += c;
                    g[1] += c * cw[0];
                    g[2] += c * cw[1];
                    g[3] += c * cw[2];
                } else {
                    /* Partial first and last columns, whole ones between. */
                    int xl = i0 > 0 ? i0 : 0, xr = i1 < w - 1 ? i1 : w - 1;
                    for (int x = xl; x <= xr; x++) {
                        double lo = x == i0 ? xa : x, hi = x == i1 ? xb : x + 1.0;
                        float wx = c * (float)((hi - lo) * inv);
                        float *g = &grid[((size_t)b * w + x) * 4];
                        g[0] += wx;
                        g[1] += wx * cw[0];
                        g[2] += wx * cw[1];
                        g[3] += wx * cw[2];
                    }
                }
                used[b] = 1;
            } else {
                /* A line or arc per cell: its duration is the bin's geometric mean, its end
                 * the middle of the sub-slot. */
                double d = ldexp(M_SQRT2, (int)b);
                double xe = (wsr + (sub + 0.5) * ss) * f.xs, xa = xe - d * f.xs;
                if (xe < 0 || xa >= w)
                    continue;
                if (line) {
                    int c0 = xa <= 0 ? 0 : (int)xa, c1 = xe >= w - 1 ? w - 1 : (int)xe;
                    double *L0 = &line[((size_t)b * (w + 1) + c0) * 4];
                    double *L1 = &line[((size_t)b * (w + 1) + c1 + 1) * 4];
                    L0[0] += c;
                    L1[0] -= c;
                    for (int k = 0; k < 3; k++) {
                        L0[k + 1] += (double)c * cw[k];
                        L1[k + 1] -= (double)c * cw[k];
                    }
                    used[b] = 1;
                } else if (d * f.xs <= 2.0 * w) {
                    float *a = &arc[((size_t)b * aw + (int)floor(xa) + aoff) * 4];
                    a[0] += c;
                    a[1] += c * cw[0];
                    a[2] += c * cw[1];
                    a[3] += c * cw[2];
                    used[b] = 1;
                } else {
                    draw_arc(&f, xa, xe, (b + 0.5 - f.l2d0) * f.ys, c, cw);
                }
            }
        }
        /* The recorded long calls, each at its exact place. */
        for (size_t i = 0; i < win->n_longest; i++) {
            const Mpiwatch__Call *lcall = win->longest[i];
            if (!lcall->duration_ns)
                continue;
            double y = frame_y(&f, (double)lcall->duration_ns);
            if (y < 0 || y >= h)
                continue;
            int l = layer_of(m, lcall->fn);
            int dim = (hfn && lcall->fn != hfn) || (hrank >= 0 && lcall->rank != hrank);
            const float *cw = dim ? dimcol[l] : col[l];
            double xa = frame_x(&f, lcall->start_ns);
            double xe = xa + (double)lcall->duration_ns * f.xs;
            switch (repr) {
            case MW_REPR_START:
                if (xa >= 0 && xa < w)
                    plot_dot(&f, (int)xa, (int)y, cw);
                break;
            case MW_REPR_END:
                if (xe >= 0 && xe < w)
                    plot_dot(&f, (int)xe, (int)y, cw);
                break;
            case MW_REPR_LINES:
                if (xe >= 0 && xa < w)
                    for (int x = xa <= 0 ? 0 : (int)xa, xr = xe >= w - 1 ? w - 1 : (int)xe; x <= xr;
                         x++)
                        plot(&f, x, (int)y, 1.0f, cw);
                break;
            default:
                draw_arc(&f, xa, xe, y, 1.0f, cw);
                break;
            }
        }
    }

    /* Spread each bin's points over its rows, and run the lines' difference arrays. */
    for (unsigned b = 0; b < nb; b++) {
        if (!used[b])
            continue;
        if (grid) {
            double span = yb1[b] - yb0[b];
            for (int r = imax((int)floor(yb0[b]), 0); r < h && r < yb1[b]; r++) {
                float wy = (float)((fmin(yb1[b], r + 1.0) - fmax(yb0[b], (double)r)) / span);
                if (wy <= 0)
                    continue;
                const float *g = &grid[(size_t)b * w * 4];
                float *Dr = &D[(size_t)r * w], *Cr = &C[(size_t)r * w * 3];
                for (int x = 0; x < w; x++, g += 4) {
                    if (g[0] == 0)
                        continue;
                    Dr[x] += g[0] * wy;
                    Cr[3 * x] += g[1] * wy;
                    Cr[3 * x + 1] += g[2] * wy;
                    Cr[3 * x + 2] += g[3] * wy;
                }
            }
        } else if (arc) {
            /* The bin's arc, walked once from the middle of column 0, stamped at each start. */
            double width = ldexp(M_SQRT2, (int)b) * f.xs, ym = (b + 0.5 - f.l2d0) * f.ys;
            int xhi = (int)ceil(width) + 2;
            stamp_t st = {NULL, 0, (size_t)xhi + 2 * (size_t)h + 4 * ARC_SEGMENTS + 8, h};
            if (scratch_reserve(&sc->stamp, &sc->stamp_cap, sizeof *sc->stamp, 2 * st.cap) < 0)
                continue;
            st.xy = sc->stamp;
            arc_walk(0.5, 0.5 + width, ym, xhi, stamp_visit, &st);
            const float *a = &arc[(size_t)b * aw * 4];
            for (int sx = 0; sx < aw; sx++) {
                const float *g = &a[sx * 4];
                if (g[0] == 0)
                    continue;
                int x0 = sx - aoff;
                for (size_t k = 0; k < st.n; k++) {
                    int x = x0 + st.xy[2 * k];
                    if (x < 0 || x >= w)
                        continue;
                    size_t i = (size_t)st.xy[2 * k + 1] * w + x;
                    D[i] += g[0];
                    C[3 * i] += g[1];
                    C[3 * i + 1] += g[2];
                    C[3 * i + 2] += g[3];
                }
            }
        } else if (line) {
            int r = (int)floor((b + 0.5 - f.l2d0) * f.ys);
            double acc[4] = {0, 0, 0, 0};
            const double *L = &line[(size_t)b * (w + 1) * 4];
            for (int x = 0; x < w; x++) {
                for (int k = 0; k < 4; k++)
                    acc[k] += L[x * 4 + k];
                /* Weights are whole counts: anything under a half is rounding residue. */
                if (acc[0] < 0.5)
                    continue;
                size_t i = (size_t)r * w + x;
                D[i] += (float)acc[0];
                C[3 * i] += (float)acc[1];
                C[3 * i + 1] += (float)acc[2];
                C[3 * i + 2] += (float)acc[3];
            }
        }
    }

    /* C becomes the average color (dimmed calls counting 1/8), and Dmax is found. */
    float dmax = 0;
    for (size_t i = 0; i < npx; i++) {
        float d = D[i];
        if (d <= 0) {
            D[i] = 0;
            C[3 * i] = C[3 * i + 1] = C[3 * i + 2] = 0;
            continue;
        }
        float inv = 1.0f / d;
        C[3 * i] *= inv;
        C[3 * i + 1] *= inv;
        C[3 * i + 2] *= inv;
        if (d > dmax)
            dmax = d;
    }
    return dmax;
}

float mw_transfer(mw_transfer_t t, float d, float dmax, float o_min)
{
    if (!(d > 0) || !(dmax > 0))
        return 0.0f;
    float o;
    if (t == MW_TRANSFER_LINEAR)
        o = o_min + (1.0f - o_min) * d / dmax;
    else
        o = o_min + (1.0f - o_min) * (float)(log1p((double)d) / log1p((double)dmax));
    return o < o_min ? o_min : o > 1.0f ? 1.0f : o;
}

/* ---- picking ------------------------------------------------------------------------------ */

/* Distance from (px, py) to the segment (ax, ay)-(bx, by). */
static double seg_dist(double px, double py, double ax, double ay, double bx, double by)
{
    double dx = bx - ax, dy = by - ay, l2 = dx * dx + dy * dy;
    double u = l2 > 0 ? ((px - ax) * dx + (py - ay) * dy) / l2 : 0;
    u = u < 0 ? 0 : u > 1 ? 1 : u;
    double ex = ax + u * dx - px, ey = ay + u * dy - py;
    return sqrt(ex * ex + ey * ey);
}

/* Distance in pixels from the pixel (cx, cy) (plot coordinates, row 0 at the bottom) to a call
 * drawn from xa to xe at height y with the representation. */
static double call_dist(mw_repr_t repr, double xa, double xe, double y, int cx, int cy)
{
    double px = cx + 0.5, py = cy + 0.5;
    switch (repr) {
    case MW_REPR_START:
    case MW_REPR_END: {
        double x = repr == MW_REPR_START ? xa : xe;
        double dx = floor(x) - cx, dy = floor(y) - cy;
        return sqrt(dx * dx + dy * dy);
    }
    case MW_REPR_LINES: {
        double x0 = floor(xa), x1 = floor(xe);
        double dx = cx < x0 ? x0 - cx : cx > x1 ? cx - x1 : 0, dy = floor(y) - cy;
        return sqrt(dx * dx + dy * dy);
    }
    default: {
        double ax[ARC_SEGMENTS + 1], ay[ARC_SEGMENTS + 1], best = INFINITY;
        arc_points(xa, xe, y, ax, ay);
        for (int s = 0; s < ARC_SEGMENTS; s++)
            best = fmin(best, seg_dist(px, py, ax[s], ay[s], ax[s + 1], ay[s + 1]));
        return best;
    }
    }
}

static void host_of(const mw_model_t *m, uint32_t rank, char *buf, size_t len)
{
    buf[0] = '\0';
    const Mpiwatch__JobInfo *j = m->job;
    if (!j)
        return;
    for (size_t i = 0; i < j->n_ranks; i++) {
        const Mpiwatch__RankInfo *r = j->ranks[i];
        if (r && r->rank == rank) {
            if (r->host < j->n_hosts && j->hosts[r->host])
                snprintf(buf, len, "%s", j->hosts[r->host]);
            return;
        }
    }
}

/* The nearest recorded call to a click so far (mw_pick). */
typedef struct {
    const frame_t *f;
    mw_repr_t repr;
    double cx, cy, radius;
    double best;     /* its distance in pixels */
    uint64_t best_d; /* its duration */
    mw_pick_t *pk;
} pick_ctx_t;

/* Takes a call as the pick when it is within the radius and nearer than the one so far (the
 * longer one wins a tie: it is drawn last). */
static void pick_call(pick_ctx_t *pc, unsigned fn, uint32_t rank, int32_t peer, uint64_t start_ns,
                      uint64_t duration_ns, uint64_t bytes)
{
    if (!duration_ns)
        return;
    const frame_t *f = pc->f;
    double yy = frame_y(f, (double)duration_ns);
    double xa = frame_x(f, start_ns), xe = xa + (double)duration_ns * f->xs;
    double dd = call_dist(pc->repr, xa, xe, yy, pc->cx, pc->cy);
    if (dd > pc->radius || dd > pc->best || (dd == pc->best && duration_ns <= pc->best_d))
        return;
    pc->best = dd;
    pc->best_d = duration_ns;
    pc->pk->kind = MW_PICK_CALL;
    pc->pk->fn = fn;
    pc->pk->rank = rank;
    pc->pk->peer = peer;
    pc->pk->start_ns = start_ns;
    pc->pk->duration_ns = duration_ns;
    pc->pk->bytes = bytes;
}

mw_pick_t mw_pick(const mw_model_t *m, const mw_view_t *v, const mw_layout_t *l, int x, int y,
                  int radius)
{
    mw_pick_t pk;
    memset(&pk, 0, sizeof pk);
    pk.kind = MW_PICK_NONE;
    pk.peer = -1;

    const mw_rect_t *lg = &l->legend;
    if (x >= lg->x && x < lg->x + lg->w && y >= lg->y && y < lg->y + lg->h && l->legend_row_h > 0) {
        int row = (y - lg->y) / l->legend_row_h - 1; /* the first row is the heading */
        mw_legend_entry_t e[MW_LEGEND_MAX];
        int n =
            mw_model_legend(m, e, l->legend_rows < MW_LEGEND_MAX ? l->legend_rows : MW_LEGEND_MAX);
        if (row >= 0 && row < n) {
            pk.kind = MW_PICK_LEGEND;
            pk.fn = e[row].fn;
        }
        return pk;
    }

    const mw_rect_t *r = &l->density;
    if (!l->show_density || x < r->x || x >= r->x + r->w || y < r->y || y >= r->y + r->h ||
        !m->grid_set || !m->origin_set)
        return pk;
    double f0, f1, d0, d1;
    mw_view_focus(v, &f0, &f1);
    if (!(f1 > f0))
        return pk;
    mw_density_range(m, f0, f1, &d0, &d1);
    frame_t f;
    frame_init(&f, m, f0, f1, d0, d1, r->w, r->h, NULL, NULL);
    const mw_repr_t repr = v->repr < MW_REPR_COUNT ? v->repr : MW_REPR_END;
    int cx = x - r->x, cy = r->y + r->h - 1 - y;
    const double W = (double)shortest_len(m);
    const unsigned S = m->subslots;
    int64_t k0 = index_of_time(m, f0), k1 = index_of_time(m, f1);
    if (repr != MW_REPR_END)
        k1 += (int64_t)fmin(ceil(d1 / W) + 1, MAX_EXTRA_WINDOWS);
    size_t p0, p1;
    window_range(m, k0, k1, &p0, &p1);

    /* The nearest recorded long call (the highlighted rank's exact calls count too); the
     * longer one wins a tie, it is the one drawn last in the eye. */
    pick_ctx_t pc = {&f, repr, cx, cy, radius, INFINITY, 0, &pk};
    for (size_t p = p0; p < p1; p++) {
        const Mpiwatch__Window *win = m->ent[p].w;
        for (size_t i = 0; i < win->n_longest; i++) {
            const Mpiwatch__Call *c = win->longest[i];
            pick_call(&pc, c->fn, c->rank, c->peer, c->start_ns, c->duration_ns, c->bytes);
        }
    }
    for (size_t i = 0; i < m->rc_n; i++) {
        const mw_rank_call_t *c = &m->rc[i];
        if (c->exact)
            pick_call(&pc, c->fn, m->rc_rank, c->peer, c->start_ns, c->duration_ns, c->bytes);
    }
    if (pk.kind == MW_PICK_CALL) {
        host_of(m, pk.rank, pk.host, sizeof pk.host);
        return pk;
    }

    /* Else the densest cell drawn through this pixel. */
    const unsigned want_end = repr == MW_REPR_START ? 0 : 1;
    uint64_t best_count = 0;
    for (size_t p = p0; p < p1; p++) {
        const Mpiwatch__Window *win = m->ent[p].w;
        const double wsr = rel_start(m, (int64_t)win->index) - f.t0ns;
        const double ss = (double)win->window_ns / S;
        for (size_t i = 0; i < win->n_density_fn; i++) {
            unsigned b = win->density_bin[i];
            uint64_t cnt = win->density_count[i];
            if (win->density_end[i] != want_end || b >= m->bins || cnt <= best_count)
                continue;
            int sub = win->density_sub[i];
            int hit;
            if (repr == MW_REPR_START || repr == MW_REPR_END) {
                double xa = (wsr + sub * ss) * f.xs, xb = xa + ss * f.xs;
                double ya = (b - f.l2d0) * f.ys, yb = (b + 1 - f.l2d0) * f.ys;
                hit = xb > cx && xa < cx + 1 && yb > cy && ya < cy + 1;
            } else {
                double d = ldexp(M_SQRT2, (int)b), ym = (b + 0.5 - f.l2d0) * f.ys;
                double xe = (wsr + (sub + 0.5) * ss) * f.xs, xa = xe - d * f.xs;
                if (repr == MW_REPR_LINES)
                    hit = (int)floor(ym) == cy && cx >= floor(xa) && cx <= floor(xe);
                else
                    hit = call_dist(repr, xa, xe, ym, cx, cy) <= 1.0;
            }
            if (!hit)
                continue;
            best_count = cnt;
            uint64_t sub0 = mw_model_window_start(m, win->index) +
                            (uint64_t)(int64_t)floor(sub * (double)win->window_ns / m->subslots);
            pk.kind = MW_PICK_CELL;
            pk.fn = win->density_fn[i];
            pk.cell_t0_ns = sub0;
            pk.cell_t1_ns = sub0 + (uint64_t)(win->window_ns / m->subslots);
            pk.cell_d0_ns = (uint64_t)1 << b;
            pk.cell_d1_ns = (uint64_t)1 << (b + 1);
            pk.cell_count = cnt;
        }
    }
    return pk;
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
                                 uint32_t subslots, mw_rank_call_t *out, size_t *n, size_t max)
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
        if (s->density_count[i] == 0 || s->density_bin[i] >= 64)
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
        o->duration_ns = (uint64_t)1 << s->density_bin[i];
        o->count = s->density_count[i];
        o->peer = -1;
        o->end = s->density_end[i] ? 1 : 0;
        o->exact = 0;
        added++;
    }
    return added;
}
