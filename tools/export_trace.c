/* export_trace.c: the traced windows of a recording (export_trace.h), the record walk and
 * index both per-call formats share, --format trace (every traced record as one JSON line) and
 * --format logical (one CSV row per communication event).
 *
 * DESIGN: one pass over the recording gathers three things: the exact traces of the merged
 * windows (Window.traces), the reach-back traces that arrived after their window had closed
 * (Envelope.trace frames, recorded as received) and the communicator definitions
 * (Window.comms). A trace of a (rank, window) already present is a duplicate and left out,
 * the one from the merged window winning. The traces are decoded with mw_trace_decode, which
 * caps every size before allocating; a trace that does not decode is counted and left out.
 * Then, with everything in memory, messages are matched by mw_trace_match (channel and
 * index, so windows and gaps do not matter) and the records are written sorted by rank, then
 * global start time. Every window that is not exact for every rank is listed: a summary line
 * per window, and a warning on stderr with the count.
 *
 * The logical structure (docs/logical.md) is computed as the collector computes it online: the
 * traced windows are pushed in window order through one mw_logical_stream, so that the same
 * windows give the same steps here and live; each event is tied back to its record by
 * (window, rank, record index). mw__xt_refs (records sorted for a format) and mw__xt_index
 * (matches, collective instances and logical events by record) are the one walk over the
 * records that --format trace, --format logical and --format otf2 share.
 */
#define _GNU_SOURCE
#include "export_trace.h"
#include "export_out.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mw_fnmap_msg.h"
#include "mw_file.h"
#include "mw_limits.h"
#include "mw_recording.h"

#define XT_MAX_MEMBERS (1u << 26) /* communicator members held over all communicators */
#define XT_WARN_FIRST 3u          /* bad traces described one by one before only counting */

/* A communicator definition as it arrived (several per communicator: one per member). */
typedef struct {
    uint64_t id, parent;
    uint32_t rank, size, flags, fn, world;
} xt_def_t;

typedef struct {
    xt_def_t *v;
    size_t n, cap;
} xt_defs_t;

static const char *const KIND_NAMES[MW_TK_COUNT] = {"call",  "send",      "recv",      "isend",
                                                    "irecv", "send_done", "recv_done", "coll",
                                                    "icoll", "coll_done"};

const char *mw__xt_kind_name(unsigned kind)
{
    return kind < MW_TK_COUNT ? KIND_NAMES[kind] : "unknown";
}

void mw__xt_times(const mw__xt_part_t *p, const mw_trace_rec_t *r, int64_t *t0, int64_t *t1)
{
    int64_t d = r->dur_ns > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)r->dur_ns;
    if (__builtin_add_overflow(p->base_ns, r->start_ns, t0))
        *t0 = r->start_ns < 0 ? INT64_MIN : INT64_MAX;
    if (__builtin_add_overflow(*t0, d, t1))
        *t1 = INT64_MAX;
}

/* Grows *v (elements of `size` bytes) to hold at least n + 1. Returns 0, or -1. */
static int grow(void **v, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? 2 * *cap : 64;
    void *p = reallocarray(*v, c, size);
    if (!p)
        return -1;
    *v = p;
    *cap = c;
    return 0;
}

/* ---- gathering ---------------------------------------------------------------------------- */

/* A trace of `rank`: decoded and kept when it is exact. base_ns 0 = the window's start is
 * looked up at the end. Returns 0 (kept or counted), -1 when out of memory. */
static int add_trace(mw__xt_t *x, uint32_t rank, const Mpiwatch__Trace *t, int reach_back,
                     uint64_t base_ns)
{
    if (t->state != MW_TRACE_EXACT)
        return 0;
    if (rank >= MW_MAX_RANKS) {
        x->bad_traces++;
        return 0;
    }
    mw_trace_rec_t *recs = NULL;
    size_t n = 0;
    const char *why = "undecodable";
    /* Exact without records: the rank made no timed call in the window (nothing to decode). */
    if (t->count && mw_trace_decode(t->records.data, t->records.len, t->encoding, t->raw_bytes,
                                    t->count, &recs, &n, &why) < 0) {
        if (x->bad_traces++ < XT_WARN_FIRST)
            fprintf(stderr,
                    "mpiwatch-export: warning: the trace of rank %" PRIu32 ", window %" PRIu64
                    " does not decode (%s): left out\n",
                    rank, t->window, why ? why : "?");
        return 0;
    }
    if (grow((void **)&x->parts, &x->cap_parts, x->nparts, sizeof *x->parts) < 0) {
        free(recs);
        return -1;
    }
    mw__xt_part_t *p = &x->parts[x->nparts++];
    memset(p, 0, sizeof *p);
    p->rank = rank;
    p->window = t->window;
    p->base_ns = (int64_t)(t->window_start_ns ? t->window_start_ns : base_ns);
    p->trace_flags = t->flags;
    p->reach_back = (uint8_t)reach_back;
    p->recs = recs;
    p->n = n;
    return 0;
}

static int add_summary(mw__xt_t *x, uint32_t rank, uint32_t reason, uint64_t left_out)
{
    if (grow((void **)&x->summary, &x->cap_summary, x->nsummary, sizeof *x->summary) < 0)
        return -1;
    mw__xt_summary_t *s = &x->summary[x->nsummary++];
    memset(s, 0, sizeof *s);
    s->rank = rank;
    s->reason = reason;
    s->left_out = left_out;
    return 0;
}

/* A merged window: its traces, its non-exact ranks and its communicator definitions. */
static int add_window(mw__xt_t *x, xt_defs_t *defs, const Mpiwatch__Window *w)
{
    if (grow((void **)&x->windows, &x->cap_windows, x->nwindows, sizeof *x->windows) < 0)
        return -1;
    mw__xt_window_t *xw = &x->windows[x->nwindows++];
    memset(xw, 0, sizeof *xw);
    xw->index = w->index;
    xw->start_ns = w->start_ns ? w->start_ns : w->index * w->window_ns;
    xw->ranks_reporting = w->ranks_reporting;
    xw->ranks_missing = w->ranks_missing;
    xw->summary_first = (uint32_t)x->nsummary;

    /* Ranks that reported: rank_mpi_permille is 65535 for a rank without a sample. A
     * reporting rank without a RankTrace traced nothing (tracing off, an older library). */
    size_t nr = w->n_rank_mpi_permille < MW_MAX_RANKS ? w->n_rank_mpi_permille : MW_MAX_RANKS;
    unsigned char *seen = nr ? calloc(nr, 1) : NULL;
    if (nr && !seen)
        return -1;
    for (size_t i = 0; i < w->n_traces; i++) {
        const Mpiwatch__RankTrace *rt = w->traces[i];
        if (!rt || !rt->trace)
            continue;
        if (rt->rank < nr)
            seen[rt->rank] = 1;
        int rc = rt->trace->state == MW_TRACE_EXACT
                     ? add_trace(x, rt->rank, rt->trace, 0, xw->start_ns)
                     : add_summary(x, rt->rank, rt->trace->reason, rt->trace->left_out);
        if (rc < 0) {
            free(seen);
            return -1;
        }
    }
    for (size_t r = 0; r < nr; r++)
        if (!seen[r] && w->rank_mpi_permille[r] != 65535u &&
            add_summary(x, (uint32_t)r, 0, 0) < 0) {
            free(seen);
            return -1;
        }
    free(seen);
    xw = &x->windows[x->nwindows - 1];
    xw->n_summary = (uint32_t)(x->nsummary - xw->summary_first);

    for (size_t i = 0; i < w->n_comms; i++) {
        const Mpiwatch__CommDef *c = w->comms[i];
        if (!c || c->id <= MW_COMM_ID_SELF)
            continue; /* WORLD and SELF are implicit */
        if (i >= w->n_comm_world_rank || c->size == 0 || c->size > MW_MAX_RANKS ||
            c->rank >= c->size || w->comm_world_rank[i] >= MW_MAX_RANKS) {
            x->bad_comms++;
            continue;
        }
        if (grow((void **)&defs->v, &defs->cap, defs->n, sizeof *defs->v) < 0)
            return -1;
        defs->v[defs->n++] =
            (xt_def_t){c->id, c->parent, c->rank, c->size, c->flags, c->fn, w->comm_world_rank[i]};
    }
    return 0;
}

static int cmp_def(const void *pa, const void *pb)
{
    const xt_def_t *a = pa, *b = pb;
    if (a->id != b->id)
        return a->id < b->id ? -1 : 1;
    return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/* qsort has no context argument: the member table being sorted. */
static const uint32_t *sort_world;

static int cmp_by_world(const void *pa, const void *pb)
{
    uint32_t a = sort_world[*(const uint32_t *)pa], b = sort_world[*(const uint32_t *)pb];
    return a < b ? -1 : a > b;
}

/* The communicators: WORLD, SELF, then one per id defined, with its members. */
static int build_comms(mw__xt_t *x, xt_defs_t *d)
{
    if (d->n) /* no definition: d->v may be NULL */
        qsort(d->v, d->n, sizeof *d->v, cmp_def);
    uint64_t members = 0;
    for (size_t i = 0; i < d->n + 2; i++) {
        if (i >= 2 && i - 2 > 0 && d->v[i - 2].id == d->v[i - 3].id)
            continue; /* the communicator was made at its first definition */
        if (grow((void **)&x->comms, &x->cap_comms, x->ncomms, sizeof *x->comms) < 0)
            return -1;
        mw__xt_comm_t *c = &x->comms[x->ncomms];
        memset(c, 0, sizeof *c);
        if (i < 2) {
            c->id = i == 0 ? MW_COMM_ID_WORLD : MW_COMM_ID_SELF;
            c->size = i == 0 ? x->size : 1;
            c->known = c->size;
            x->ncomms++;
            continue;
        }
        const xt_def_t *f = &d->v[i - 2];
        c->id = f->id;
        c->parent = f->parent;
        c->size = f->size;
        c->flags = f->flags;
        c->fn = f->fn;
        if (c->size > x->size) { /* more members than the job has ranks: no group to hold */
            c->bad_world = 1;
            x->bad_world_comms++;
            x->ncomms++;
            continue;
        }
        if (members + c->size > XT_MAX_MEMBERS) {
            x->bad_comms++;
            continue;
        }
        members += c->size;
        c->world = malloc((size_t)c->size * sizeof *c->world);
        if (!c->world)
            return -1;
        memset(c->world, 0xff, (size_t)c->size * sizeof *c->world);
        for (size_t j = i - 2; j < d->n && d->v[j].id == f->id; j++) {
            const xt_def_t *e = &d->v[j];
            if (e->size != f->size || e->flags != f->flags ||
                (c->world[e->rank] != UINT32_MAX && c->world[e->rank] != e->world)) {
                c->conflict = 1;
                continue;
            }
            if (c->world[e->rank] == UINT32_MAX) {
                c->world[e->rank] = e->world;
                c->known++;
            }
        }
        if (c->conflict)
            x->conflict_comms++;
        c->by_world = malloc(((size_t)c->known + 1) * sizeof *c->by_world);
        if (!c->by_world)
            return -1;
        uint32_t k = 0;
        for (uint32_t r = 0; r < c->size; r++)
            if (c->world[r] != UINT32_MAX)
                c->by_world[k++] = r;
        sort_world = c->world;
        qsort(c->by_world, k, sizeof *c->by_world, cmp_by_world);
        /* The members must be distinct ranks of the job (x->size is the job's size by now):
         * OTF2 readers refuse a group holding a rank the job does not have, and a peer given
         * as a world rank held twice could not be translated. Sorted, so twins are neighbours. */
        for (uint32_t j = 0; j < k; j++)
            if (c->world[c->by_world[j]] >= x->size ||
                (j > 0 && c->world[c->by_world[j]] == c->world[c->by_world[j - 1]]))
                c->bad_world = 1;
        if (c->bad_world)
            x->bad_world_comms++;
        x->ncomms++;
    }
    return 0;
}

const mw__xt_comm_t *mw__xt_comm(const mw__xt_t *x, uint64_t id)
{
    size_t lo = 0, hi = x->ncomms;
    if (id == MW_COMM_ID_WORLD || id == MW_COMM_ID_SELF)
        return x->ncomms >= 2 ? &x->comms[id == MW_COMM_ID_WORLD ? 0 : 1] : NULL;
    lo = x->ncomms >= 2 ? 2 : x->ncomms;
    while (lo < hi) { /* entries after WORLD and SELF are sorted by id */
        size_t mid = lo + (hi - lo) / 2;
        if (x->comms[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < x->ncomms && x->comms[lo].id == id ? &x->comms[lo] : NULL;
}

int64_t mw__xt_comm_rank(const mw__xt_comm_t *c, uint32_t w, uint32_t size)
{
    if (c->id == MW_COMM_ID_WORLD)
        return w < size ? (int64_t)w : -1;
    if (c->id == MW_COMM_ID_SELF)
        return 0;
    if (!c->world || !c->by_world || c->bad_world)
        return -1;
    size_t lo = 0, hi = c->known; /* by_world holds the known members */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->world[c->by_world[mid]] < w)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->known && c->world[c->by_world[lo]] == w ? (int64_t)c->by_world[lo] : -1;
}

static int cmp_part(const void *pa, const void *pb)
{
    const mw__xt_part_t *a = pa, *b = pb;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->window != b->window)
        return a->window < b->window ? -1 : 1;
    return (int)a->reach_back - (int)b->reach_back; /* the merged window's own trace first */
}

static int cmp_window_index(const void *pa, const void *pb)
{
    const mw__xt_window_t *a = *(const mw__xt_window_t *const *)pa;
    const mw__xt_window_t *b = *(const mw__xt_window_t *const *)pb;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* The part of (rank, window), or NULL (parts sorted and without duplicates). */
static const mw__xt_part_t *find_part(const mw__xt_t *x, uint32_t rank, uint64_t window)
{
    size_t lo = 0, hi = x->nparts;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const mw__xt_part_t *p = &x->parts[mid];
        if (p->rank < rank || (p->rank == rank && p->window < window))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < x->nparts && x->parts[lo].rank == rank && x->parts[lo].window == window
               ? &x->parts[lo]
               : NULL;
}

/* After the pass: reach-back traces get their window's start, duplicates go, windows learn
 * which of their ranks are exact. */
static int finish(mw__xt_t *x)
{
    mw__xt_window_t **byidx = malloc((x->nwindows ? x->nwindows : 1) * sizeof *byidx);
    if (!byidx)
        return -1;
    for (size_t i = 0; i < x->nwindows; i++)
        byidx[i] = &x->windows[i];
    if (x->nwindows)
        qsort(byidx, x->nwindows, sizeof *byidx, cmp_window_index);

    size_t k = 0;
    if (x->nparts) /* none: x->parts may be NULL */
        qsort(x->parts, x->nparts, sizeof *x->parts, cmp_part);
    for (size_t i = 0; i < x->nparts; i++) {
        mw__xt_part_t *p = &x->parts[i];
        int dup = k > 0 && x->parts[k - 1].rank == p->rank && x->parts[k - 1].window == p->window;
        if (!dup && p->base_ns == 0) { /* a reach-back trace without its start */
            mw__xt_window_t key = {.index = p->window}, *kp = &key;
            mw__xt_window_t **w = bsearch(&kp, byidx, x->nwindows, sizeof *byidx, cmp_window_index);
            if (w)
                p->base_ns = (int64_t)(*w)->start_ns;
        }
        if (dup || p->base_ns == 0) {
            if (dup)
                x->duplicates++;
            else
                x->bad_traces++;
            free(p->recs);
            continue;
        }
        if (p->reach_back)
            x->reach_back++;
        if (p->rank >= x->size)
            x->size = p->rank + 1;
        x->records += p->n;
        x->parts[k++] = *p;
    }
    x->nparts = k;

    for (size_t i = 0; i < x->nwindows; i++) {
        mw__xt_window_t *w = &x->windows[i];
        w->exact = 0;
        w->left_out = 0;
        for (uint32_t j = 0; j < w->n_summary; j++) {
            mw__xt_summary_t *s = &x->summary[w->summary_first + j];
            s->exact_later = find_part(x, s->rank, w->index) != NULL;
            if (!s->exact_later)
                w->left_out += s->left_out;
        }
    }
    /* Exact ranks per window: parts are sorted by rank, so count through the index. */
    for (size_t i = 0; i < x->nparts; i++) {
        mw__xt_window_t key = {.index = x->parts[i].window}, *kp = &key;
        mw__xt_window_t **w = bsearch(&kp, byidx, x->nwindows, sizeof *byidx, cmp_window_index);
        if (w)
            (*w)->exact++;
    }
    for (size_t i = 0; i < x->nwindows; i++) {
        const mw__xt_window_t *w = &x->windows[i];
        if (w->exact == 0)
            x->windows_untraced++;
        else if (w->exact < w->ranks_reporting + w->ranks_missing)
            x->windows_partial++;
    }
    free(byidx);
    return 0;
}

int mw__xt_load(mw__xt_t *x, const char *path)
{
    memset(x, 0, sizeof *x);
    char err[512] = "";
    mw_rec_reader_t *r = mw_rec_reader_open(path, err, sizeof err);
    if (!r) {
        fprintf(stderr, "mpiwatch-export: %s\n", *err ? err : "cannot read the recording");
        return 2;
    }
    mw_arena_t arena;
    xt_defs_t defs = {0};
    int rc = 0;
    mw_fnmap_t fnmap = {0}; /* the job's function ids -> this build's */
    mw_fnmap_keep_t keep = {0};
    mw__xlean_t lean = {0};
    if (mw_arena_init(&arena, 2 * (size_t)MW_MAX_MESSAGE_BYTES) < 0) {
        fprintf(stderr, "mpiwatch-export: out of memory\n");
        mw_rec_reader_close(r);
        return 1;
    }
    for (;;) {
        const Mpiwatch__Record *rec;
        int n = mw_rec_reader_next(r, &rec, NULL, err, sizeof err);
        if (n == 0)
            break;
        if (n < 0) {
            fprintf(stderr, "mpiwatch-export: %s: %s\n", path, err);
            rc = 1;
            break;
        }
        mw__xlean_note(&lean, r, rec);
        int m = 0;
        if (rec->body_case == MPIWATCH__RECORD__BODY_JOB && rec->job) {
            /* The job's function ids -> this build's (docs/function-table.md). */
            mw_fnmap_record(&fnmap, (Mpiwatch__Record *)rec, NULL, err, sizeof err);
            Mpiwatch__JobInfo *copy = mw_job_info_copy(rec->job);
            if (!copy) {
                m = -1;
            } else {
                if (x->job)
                    mpiwatch__job_info__free_unpacked(x->job, NULL);
                x->job = copy;
            }
        } else if (rec->body_case == MPIWATCH__RECORD__BODY_WINDOW && rec->window) {
            /* Its traces' records are in the frames that brought them (docs/recording.md
             * "Traces"); one that is not there leaves its rank not exact, counted. */
            int bad = mw_rec_reader_resolve_window(r, rec->window,
                                                   x->job && x->job->job ? x->job->job : NULL);
            if (bad < 0)
                m = -1;
            else
                x->bad_traces += (uint64_t)bad;
            mw_fnmap_keep_clear(&keep);
            if (m == 0 && fnmap.to_local) /* resolved first: every trace is translated */
                mw_fnmap_window(&fnmap, rec->window, &keep);
            if (m == 0)
                m = add_window(x, &defs, rec->window);
        } else if (rec->body_case == MPIWATCH__RECORD__BODY_MESSAGE) {
            /* A reach-back trace, recorded as received: checked like the collector does. */
            const Mpiwatch__Envelope *env =
                mw_envelope_decode(&arena, rec->message.data, rec->message.len);
            if (env && env->version == MW_PROTO_VERSION &&
                env->body_case == MPIWATCH__ENVELOPE__BODY_TRACE && env->trace) {
                if (x->job && (env->rank >= x->job->size || !env->job || !x->job->job ||
                               strcmp(env->job, x->job->job) != 0))
                    x->bad_traces++; /* another job's, or a rank the job does not have */
                else
                    m = add_trace(x, env->rank, env->trace, 1, 0);
            }
        }
        if (m < 0) {
            fprintf(stderr, "mpiwatch-export: out of memory\n");
            rc = 1;
            break;
        }
    }
    x->truncated = mw_rec_reader_truncated(r);
    if (rc == 0)
        mw__xlean_report(&lean, path);
    mw_fnmap_free(&fnmap);
    mw_fnmap_keep_free(&keep);
    mw_rec_reader_close(r);
    mw_arena_free(&arena);
    if (x->job && x->job->size <= MW_MAX_RANKS)
        x->size = x->job->size;
    if (rc == 0 && (finish(x) < 0 || build_comms(x, &defs) < 0)) {
        fprintf(stderr, "mpiwatch-export: out of memory\n");
        rc = 1;
    }
    free(defs.v);
    return rc;
}

void mw__xt_free(mw__xt_t *x)
{
    for (size_t i = 0; i < x->nparts; i++)
        free(x->parts[i].recs);
    for (size_t i = 0; i < x->ncomms; i++) {
        free(x->comms[i].world);
        free(x->comms[i].by_world);
    }
    free(x->parts);
    free(x->comms);
    free(x->windows);
    free(x->summary);
    if (x->job)
        mpiwatch__job_info__free_unpacked(x->job, NULL);
    memset(x, 0, sizeof *x);
}

/* Window indices as ranges: "3-7, 12". At most `max` ranges, then "...". */
static void put_ranges(FILE *out, const uint64_t *v, size_t n, size_t max)
{
    size_t shown = 0;
    for (size_t i = 0; i < n; shown++) {
        size_t j = i;
        while (j + 1 < n && v[j + 1] == v[j] + 1)
            j++;
        if (shown == max) {
            fputs(", ...", out);
            return;
        }
        fprintf(out, "%s%" PRIu64, shown ? ", " : "", v[i]);
        if (j > i)
            fprintf(out, "-%" PRIu64, v[j]);
        i = j + 1;
    }
}

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return a < b ? -1 : a > b;
}

void mw__xt_warn(const mw__xt_t *x)
{
    if (x->truncated)
        fprintf(stderr, "mpiwatch-export: warning: the recording ends with an incomplete or "
                        "corrupt frame: exported what precedes it\n");
    uint64_t *v = malloc((x->nwindows ? x->nwindows : 1) * sizeof *v);
    for (int pass = 0; v && pass < 2; pass++) {
        size_t n = 0;
        for (size_t i = 0; i < x->nwindows; i++) {
            const mw__xt_window_t *w = &x->windows[i];
            int untraced = w->exact == 0;
            int partial = !untraced && w->exact < w->ranks_reporting + w->ranks_missing;
            if (pass == 0 ? untraced : partial)
                v[n++] = w->index;
        }
        if (!n)
            continue;
        qsort(v, n, sizeof *v, cmp_u64);
        fprintf(stderr,
                pass == 0 ? "mpiwatch-export: warning: %zu of %zu window(s) not traced, not "
                            "in the export: "
                          : "mpiwatch-export: warning: %zu of %zu window(s) traced for only "
                            "some ranks: ",
                n, x->nwindows);
        put_ranges(stderr, v, n, 20);
        fputc('\n', stderr);
    }
    free(v);
    if (x->duplicates)
        fprintf(stderr,
                "mpiwatch-export: warning: %" PRIu64 " trace(s) of a rank's window that was "
                "already traced: left out\n",
                x->duplicates);
    if (x->bad_traces)
        fprintf(stderr, "mpiwatch-export: warning: %" PRIu64 " trace(s) refused\n", x->bad_traces);
    if (x->bad_comms)
        fprintf(stderr,
                "mpiwatch-export: warning: %" PRIu64 " communicator definition(s) refused\n",
                x->bad_comms);
    if (x->conflict_comms)
        fprintf(stderr,
                "mpiwatch-export: warning: %" PRIu64 " communicator(s) whose members disagree: "
                "their peers are not translated\n",
                x->conflict_comms);
    if (x->bad_world_comms)
        fprintf(stderr,
                "mpiwatch-export: warning: %" PRIu64 " communicator(s) with a member that is not "
                "a rank of the job or two members of one world rank: their peers are not "
                "translated\n",
                x->bad_world_comms);
}

/* ---- the record walk and the index -------------------------------------------------------- */

static int cmp_ref_start(const void *pa, const void *pb)
{
    const mw__xt_ref_t *a = pa, *b = pb;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->t0 != b->t0)
        return a->t0 < b->t0 ? -1 : 1;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    if (a->part != b->part)
        return a->part < b->part ? -1 : 1;
    return a->rec < b->rec ? -1 : a->rec > b->rec;
}

static int cmp_ref_thread(const void *pa, const void *pb)
{
    const mw__xt_ref_t *a = pa, *b = pb;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    if (a->t0 != b->t0)
        return a->t0 < b->t0 ? -1 : 1;
    if (a->t1 != b->t1)
        return a->t1 > b->t1 ? -1 : 1; /* the longer one first: it contains the other */
    if (a->part != b->part)
        return a->part < b->part ? -1 : 1;
    return a->rec < b->rec ? -1 : a->rec > b->rec;
}

int mw__xt_refs(const mw__xt_t *x, size_t first, size_t last, int order, int skip_open,
                mw__xt_ref_t **out, size_t *n, uint64_t *open)
{
    size_t total = 0;
    for (size_t i = first; i < last; i++)
        total += x->parts[i].n;
    mw__xt_ref_t *v = malloc((total ? total : 1) * sizeof *v);
    *out = v;
    *n = 0;
    if (!v)
        return -1;
    size_t k = 0;
    for (size_t i = first; i < last; i++) {
        const mw__xt_part_t *p = &x->parts[i];
        for (size_t j = 0; j < p->n; j++) {
            const mw_trace_rec_t *r = &p->recs[j];
            if (skip_open && (r->flags & MW_TF_OPEN)) {
                if (open)
                    (*open)++; /* the call's own record comes with the window it ends in */
                continue;
            }
            int64_t t0, t1;
            mw__xt_times(p, r, &t0, &t1);
            v[k++] = (mw__xt_ref_t){t0, t1, p->rank, r->thread, (uint32_t)i, (uint32_t)j};
        }
    }
    if (k)
        qsort(v, k, sizeof *v, order == MW__XT_BY_THREAD ? cmp_ref_thread : cmp_ref_start);
    *n = k;
    return 0;
}

/* Parts in the order the stream takes them: window, then rank. */
static const mw__xt_t *sort_parts_x;

static int cmp_part_window(const void *pa, const void *pb)
{
    const mw__xt_part_t *a = &sort_parts_x->parts[*(const uint32_t *)pa];
    const mw__xt_part_t *b = &sort_parts_x->parts[*(const uint32_t *)pb];
    if (a->window != b->window)
        return a->window < b->window ? -1 : 1;
    return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/* Keeps what one batch finalized. Returns 0, or -1 when out of memory. */
static int keep_batch(mw__xt_index_t *ix, size_t *cap_ev, size_t *cap_lp,
                      const mw_logical_batch_t *b)
{
    if (b->nevents) {
        if (ix->nevents + b->nevents > *cap_ev) {
            size_t c = *cap_ev ? *cap_ev : 1024;
            while (c < ix->nevents + b->nevents)
                c *= 2;
            mw_logical_event_t *v = reallocarray(ix->events, c, sizeof *v);
            if (!v)
                return -1;
            ix->events = v;
            *cap_ev = c;
        }
        memcpy(ix->events + ix->nevents, b->events, b->nevents * sizeof *b->events);
        ix->nevents += b->nevents;
    }
    if (b->npartitions) {
        if (ix->nlparts + b->npartitions > *cap_lp) {
            size_t c = *cap_lp ? *cap_lp : 256;
            while (c < ix->nlparts + b->npartitions)
                c *= 2;
            mw_logical_partition_t *v = reallocarray(ix->lparts, c, sizeof *v);
            if (!v)
                return -1;
            ix->lparts = v;
            *cap_lp = c;
        }
        memcpy(ix->lparts + ix->nlparts, b->partitions, b->npartitions * sizeof *b->partitions);
        ix->nlparts += b->npartitions;
    }
    return 0;
}

/* The traced windows through one stream, in window order, as the collector does online
 * (docs/logical.md): a window's exact ranks in one push; a window missing from the recording
 * or traced by no rank is a hole, which the stream takes as a gap; the end of the recording is
 * a gap. A rank whose records were put on another start than its window's (a reach-back trace
 * with its own start) is shifted onto the window's. */
int mw__export_no_leap;

static int run_logical(const mw__xt_t *x, mw__xt_index_t *ix)
{
    mw_logical_opts_t opts = {.flags = mw__export_no_leap ? 0 : MW_LOGICAL_LEAP};
    mw_logical_stream_t *s = mw_logical_stream_new(&opts);
    uint32_t *order = malloc((x->nparts ? x->nparts : 1) * sizeof *order);
    mw_logical_rank_t *ranks = malloc((x->nparts ? x->nparts : 1) * sizeof *ranks);
    mw_trace_rec_t **shifted = calloc(x->nparts ? x->nparts : 1, sizeof *shifted);
    ix->pushed = malloc(2 * (x->nparts ? x->nparts : 1) * sizeof *ix->pushed);
    const mw__xt_window_t **byidx = malloc((x->nwindows ? x->nwindows : 1) * sizeof *byidx);
    size_t cap_ev = 0, cap_lp = 0;
    int rc = -1;
    if (!s || !order || !ranks || !shifted || !byidx || !ix->pushed)
        goto out;
    for (size_t i = 0; i < x->nwindows; i++)
        byidx[i] = &x->windows[i];
    if (x->nwindows)
        qsort(byidx, x->nwindows, sizeof *byidx, cmp_window_index);
    for (size_t i = 0; i < x->nparts; i++)
        order[i] = (uint32_t)i;
    sort_parts_x = x;
    if (x->nparts)
        qsort(order, x->nparts, sizeof *order, cmp_part_window);
    for (size_t i = 0; i < x->nparts;) {
        uint64_t win = x->parts[order[i]].window;
        int64_t start = x->parts[order[i]].base_ns;
        mw__xt_window_t key = {.index = win}, *kp = &key;
        mw__xt_window_t **wp =
            x->nwindows ? bsearch(&kp, byidx, x->nwindows, sizeof *byidx, cmp_window_index) : NULL;
        if (wp)
            start = (int64_t)(*wp)->start_ns;
        size_t nr = 0;
        for (; i < x->nparts && x->parts[order[i]].window == win; i++) {
            const mw__xt_part_t *p = &x->parts[order[i]];
            const mw_trace_rec_t *recs = p->recs;
            if (p->base_ns != start && p->n) {
                mw_trace_rec_t *c = malloc(p->n * sizeof *c);
                if (!c)
                    goto out;
                for (size_t j = 0; j < p->n; j++) {
                    /* Saturated, as mw__xt_times (a crafted trace's start can be anything):
                     * a wrapped time would make its peers look late. */
                    int64_t t0, t1;
                    c[j] = p->recs[j];
                    mw__xt_times(p, &p->recs[j], &t0, &t1);
                    if (__builtin_sub_overflow(t0, start, &c[j].start_ns))
                        c[j].start_ns = t0 < 0 ? INT64_MIN : INT64_MAX;
                }
                shifted[order[i]] = c;
                recs = c;
            }
            ranks[nr++] = (mw_logical_rank_t){p->rank, recs, p->n};
        }
        if (ix->npushed && ix->pushed[2 * ix->npushed - 1] + 1 == win) {
            ix->pushed[2 * ix->npushed - 1] = win;
        } else {
            ix->pushed[2 * ix->npushed] = ix->pushed[2 * ix->npushed + 1] = win;
            ix->npushed++;
        }
        mw_logical_batch_t b;
        memset(&b, 0, sizeof b);
        if (mw_logical_stream_push(s, win, start, ranks, nr, &b) < 0) {
            fprintf(stderr,
                    "mpiwatch-export: the logical structure of window %" PRIu64
                    " could not be computed (out of memory)\n",
                    win);
            mw_logical_batch_free(&b);
            goto out;
        }
        int k = keep_batch(ix, &cap_ev, &cap_lp, &b);
        mw_logical_batch_free(&b);
        if (k < 0)
            goto out;
    }
    mw_logical_batch_t b;
    memset(&b, 0, sizeof b);
    if (mw_logical_stream_gap(s, &b) < 0) {
        mw_logical_batch_free(&b);
        goto out;
    }
    int k = keep_batch(ix, &cap_ev, &cap_lp, &b);
    mw_logical_batch_free(&b);
    if (k < 0)
        goto out;
    mw_logical_stream_stats(s, &ix->lstats);

    ix->event = malloc((ix->total ? ix->total : 1) * sizeof *ix->event);
    if (!ix->event)
        goto out;
    for (size_t i = 0; i < ix->total; i++)
        ix->event[i] = -1;
    for (size_t e = 0; e < ix->nevents; e++) {
        const mw_logical_event_t *ev = &ix->events[e];
        const mw__xt_part_t *p = find_part(x, ev->rank, ev->window);
        if (!p || ev->rec >= p->n) {
            ix->lost_events++;
            continue;
        }
        ix->event[ix->off[p - x->parts] + ev->rec] = (int64_t)e;
    }
    rc = 0;
out:
    for (size_t i = 0; shifted && i < x->nparts; i++)
        free(shifted[i]);
    free(shifted);
    free(byidx);
    free(order);
    free(ranks);
    mw_logical_stream_free(s);
    return rc;
}

int mw__xt_index(const mw__xt_t *x, unsigned what, mw__xt_index_t *ix)
{
    memset(ix, 0, sizeof *ix);
    ix->off = malloc((x->nparts + 1) * sizeof *ix->off);
    if (!ix->off)
        return -1;
    ix->off[0] = 0;
    for (size_t i = 0; i < x->nparts; i++)
        ix->off[i + 1] = ix->off[i] + x->parts[i].n;
    ix->total = ix->off[x->nparts];
    if (what & MW__XT_MATCH) {
        size_t n = ix->total ? ix->total : 1;
        mw_trace_part_t *tp = malloc((x->nparts ? x->nparts : 1) * sizeof *tp);
        ix->match = malloc(n * sizeof *ix->match);
        ix->coll = malloc(n * sizeof *ix->coll);
        if (!tp || !ix->match || !ix->coll) {
            free(tp);
            return -1;
        }
        for (size_t i = 0; i < x->nparts; i++) {
            const mw__xt_part_t *p = &x->parts[i];
            tp[i] = (mw_trace_part_t){p->rank, p->recs, p->n, p->base_ns};
        }
        int rc = mw_trace_match(tp, x->nparts, &ix->m);
        free(tp);
        if (rc < 0)
            return -1;
        for (size_t i = 0; i < ix->total; i++)
            ix->match[i] = ix->coll[i] = -1;
        const mw_trace_matches_t *m = &ix->m;
        for (size_t i = 0; i < m->nmsgs; i++) {
            const mw_trace_match_t *mm = &m->msgs[i];
            if (mm->send_part < x->nparts && mm->send_rec < x->parts[mm->send_part].n)
                ix->match[ix->off[mm->send_part] + mm->send_rec] = (int64_t)i;
            if (mm->recv_part < x->nparts && mm->recv_rec < x->parts[mm->recv_part].n)
                ix->match[ix->off[mm->recv_part] + mm->recv_rec] = (int64_t)i;
        }
        for (size_t i = 0; i < m->ncolls; i++)
            for (uint32_t j = 0; j < m->colls[i].n; j++) {
                uint32_t pi = m->coll_members[2 * ((size_t)m->colls[i].first + j)];
                uint32_t ri = m->coll_members[2 * ((size_t)m->colls[i].first + j) + 1];
                if (pi < x->nparts && ri < x->parts[pi].n)
                    ix->coll[ix->off[pi] + ri] = (int64_t)i;
            }
    }
    if ((what & MW__XT_LOGICAL) && run_logical(x, ix) < 0)
        return -1;
    return 0;
}

void mw__xt_index_free(mw__xt_index_t *ix)
{
    mw_trace_matches_free(&ix->m);
    free(ix->off);
    free(ix->match);
    free(ix->coll);
    free(ix->events);
    free(ix->event);
    free(ix->lparts);
    free(ix->pushed);
    memset(ix, 0, sizeof *ix);
}

/* ---- --format trace and --format logical -------------------------------------------------- */

static const char *reason_name(uint32_t reason)
{
    switch (reason) {
    case 0:
        return "untraced";
    case MW_TRACE_WHY_BUDGET:
        return "budget";
    case MW_TRACE_WHY_RING_FULL:
        return "ring_full";
    case MW_TRACE_WHY_NOT_ASKED:
        return "not_asked";
    case MW_TRACE_WHY_REFUSED:
        return "refused";
    case MW_TRACE_WHY_DEFERRED:
        return "deferred"; /* its records never came (the rank's flight recorder lost them) */
    default:
        return "other";
    }
}

static void window_line(FILE *out, const mw__xt_t *x, const mw__xt_window_t *w)
{
    fprintf(out,
            "{\"type\":\"window\",\"window\":%" PRIu64 ",\"start_ns\":%" PRIu64
            ",\"ranks_reporting\":%" PRIu32 ",\"ranks_missing\":%" PRIu32
            ",\"ranks_exact\":%" PRIu32 ",\"left_out\":%" PRIu64 ",\"not_exact\":[",
            w->index, w->start_ns, w->ranks_reporting, w->ranks_missing, w->exact, w->left_out);
    int first = 1;
    for (uint32_t j = 0; j < w->n_summary; j++) {
        const mw__xt_summary_t *s = &x->summary[w->summary_first + j];
        if (s->exact_later)
            continue;
        fprintf(out, "%s{\"rank\":%" PRIu32 ",\"reason\":\"%s\",\"left_out\":%" PRIu64 "}",
                first ? "" : ",", s->rank, reason_name(s->reason), s->left_out);
        first = 0;
    }
    fputs("]}\n", out);
}

static const char *const EV_KIND_NAMES[] = {"?", "send", "recv", "coll"};

static const char *ev_kind_name(unsigned kind)
{
    return kind < sizeof EV_KIND_NAMES / sizeof EV_KIND_NAMES[0] ? EV_KIND_NAMES[kind] : "?";
}

static void record_line(FILE *out, const mw__xt_part_t *p, const mw__xt_ref_t *ref,
                        const mw__xt_index_t *ix)
{
    const mw_trace_rec_t *r = &p->recs[ref->rec];
    size_t k = ix->off[ref->part] + ref->rec;
    const char *fn = mw_fn_name(r->fn);
    fprintf(out,
            "{\"type\":\"record\",\"window\":%" PRIu64 ",\"rank\":%" PRIu32 ",\"thread\":%" PRIu32
            ",\"rec\":%" PRIu32 ",\"kind\":\"%s\",\"fn\":\"%s\",\"start_ns\":%" PRId64
            ",\"dur_ns\":%" PRIu64 ",\"comm\":\"%" PRIu64 "\",\"peer\":%" PRId32 ",\"tag\":%" PRId32
            ",\"seq\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"req\":%" PRIu32 ",\"flags\":%u",
            p->window, p->rank, r->thread, ref->rec, mw__xt_kind_name(r->kind), fn ? fn : "unknown",
            ref->t0, r->dur_ns, r->comm, r->peer, r->tag, r->seq, r->bytes, r->req,
            (unsigned)r->flags);
    if (ix->event && ix->event[k] >= 0) {
        const mw_logical_event_t *e = &ix->events[ix->event[k]];
        fprintf(out,
                ",\"event\":%" PRIu64 ",\"ev_kind\":\"%s\",\"step\":%" PRIu64
                ",\"partition\":%" PRIu64 ",\"end_ns\":%" PRId64 ",\"late_ns\":%" PRId64
                ",\"diff_ns\":%" PRId64 ",\"comp_ns\":%" PRId64 ",\"class\":\"%s\""
                ",\"prev_event\":%" PRId64 ",\"peer_event\":%" PRId64,
                e->id, ev_kind_name(e->kind), e->step, e->partition, e->end_ns, e->lateness_ns,
                e->diff_ns, e->comp_before_ns, mw_logical_class_name(e->cls), e->rank_prev,
                e->msg_peer);
    }
    if (p->reach_back)
        fputs(",\"reach_back\":true", out);
    if (p->trace_flags & MW_TRACE_SEQ_UNRELIABLE)
        fputs(",\"seq_unreliable\":true", out);
    if (ix->match[k] >= 0)
        fprintf(out, ",\"match\":%" PRId64, ix->match[k]);
    if (ix->coll[k] >= 0)
        fprintf(out, ",\"coll\":%" PRId64, ix->coll[k]);
    fputs("}\n", out);
}

static void logical_lines(FILE *out, const mw__xt_index_t *ix)
{
    for (size_t i = 0; i < ix->nlparts; i++) {
        const mw_logical_partition_t *lp = &ix->lparts[i];
        fprintf(out,
                "{\"type\":\"partition\",\"partition\":%" PRIu64 ",\"step_first\":%" PRIu64
                ",\"step_last\":%" PRIu64 ",\"events\":%" PRIu64 ",\"ranks\":%" PRIu32
                ",\"forced\":%s}\n",
                lp->id, lp->step_first, lp->step_last, lp->nevents, lp->ranks,
                lp->forced ? "true" : "false");
    }
    const mw_logical_stats_t *st = &ix->lstats;
    fprintf(out,
            "{\"type\":\"logical\",\"windows\":%" PRIu64 ",\"events\":%" PRIu64
            ",\"partitions\":%" PRIu64 ",\"merged_cycles\":%" PRIu64 ",\"merged_leap\":%" PRIu64
            ",\"forced\":%" PRIu64 ",\"gaps\":%" PRIu64 ",\"unmatched\":%" PRIu64
            ",\"dropped_ranks\":%" PRIu64 ",\"lost_events\":%" PRIu64 ",\"leap\":%s,\"pushed\":[",
            st->windows, st->events, st->partitions, st->merged_cycles, st->merged_leap, st->forced,
            st->gaps, st->unmatched, st->dropped_ranks, ix->lost_events,
            mw__export_no_leap ? "false" : "true");
    for (size_t i = 0; i < ix->npushed; i++)
        fprintf(out, "%s[%" PRIu64 ",%" PRIu64 "]", i ? "," : "", ix->pushed[2 * i],
                ix->pushed[2 * i + 1]);
    fputs("]}\n", out);
}

/* Writes the lines. Returns 0, or -1 when out of memory. */
static int trace_lines(FILE *out, const mw__xt_t *x)
{
    mw__xt_index_t ix;
    mw__xt_ref_t *refs = NULL;
    size_t n = 0;
    if (mw__xt_index(x, MW__XT_MATCH | MW__XT_LOGICAL, &ix) < 0 ||
        mw__xt_refs(x, 0, x->nparts, MW__XT_BY_START, 0, &refs, &n, NULL) < 0) {
        free(refs);
        mw__xt_index_free(&ix);
        return -1;
    }
    for (size_t i = 0; i < x->nwindows; i++) {
        const mw__xt_window_t *w = &x->windows[i];
        if (w->exact < w->ranks_reporting + w->ranks_missing || w->exact == 0)
            window_line(out, x, w);
    }
    for (size_t i = 0; i < n; i++)
        record_line(out, &x->parts[refs[i].part], &refs[i], &ix);
    logical_lines(out, &ix);
    fprintf(stderr,
            "mpiwatch-export: %" PRIu64 " record(s) of %zu traced rank window(s); %zu message(s) "
            "matched, %" PRIu64 " send(s) and %" PRIu64 " receive(s) without their partner, "
            "%zu collective instance(s); %zu communication event(s) in %zu partition(s)\n",
            x->records, x->nparts, ix.m.nmsgs, ix.m.sends_unmatched, ix.m.recvs_unmatched,
            ix.m.ncolls, ix.nevents, ix.nlparts);
    free(refs);
    mw__xt_index_free(&ix);
    return 0;
}

static int cmp_event_row(const void *pa, const void *pb)
{
    const mw_logical_event_t *a = *(const mw_logical_event_t *const *)pa;
    const mw_logical_event_t *b = *(const mw_logical_event_t *const *)pb;
    if (a->step != b->step)
        return a->step < b->step ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* --format logical: one CSV row per event, by step, then rank. Returns 0, or -1. */
static int logical_rows(FILE *out, const mw__xt_t *x)
{
    mw__xt_index_t ix;
    if (mw__xt_index(x, MW__XT_LOGICAL, &ix) < 0) {
        mw__xt_index_free(&ix);
        return -1;
    }
    const mw_logical_event_t **rows = malloc((ix.nevents ? ix.nevents : 1) * sizeof *rows);
    if (!rows) {
        mw__xt_index_free(&ix);
        return -1;
    }
    for (size_t i = 0; i < ix.nevents; i++)
        rows[i] = &ix.events[i];
    if (ix.nevents)
        qsort(rows, ix.nevents, sizeof *rows, cmp_event_row);
    fputs("window,rank,record,function,kind,step,start_ns,end_ns,lateness_ns,diff_lateness_ns,"
          "class,partition,peer,event,comp_before_ns\n",
          out);
    for (size_t i = 0; i < ix.nevents; i++) {
        const mw_logical_event_t *e = rows[i];
        const char *fn = mw_fn_name(e->fn);
        fprintf(out,
                "%" PRIu64 ",%" PRIu32 ",%" PRIu32 ",%s,%s,%" PRIu64 ",%" PRId64 ",%" PRId64
                ",%" PRId64 ",%" PRId64 ",%s,%" PRIu64 ",%" PRId32 ",%" PRIu64 ",%" PRId64 "\n",
                e->window, e->rank, e->rec, fn ? fn : "unknown", ev_kind_name(e->kind), e->step,
                e->start_ns, e->end_ns, e->lateness_ns, e->diff_ns, mw_logical_class_name(e->cls),
                e->partition, e->peer, e->id, e->comp_before_ns);
    }
    fprintf(stderr,
            "mpiwatch-export: %zu communication event(s) in %zu partition(s) from %zu traced "
            "rank window(s); %" PRIu64 " partition(s) finalized early, %" PRIu64
            " send(s) or receive(s) without their partner\n",
            ix.nevents, ix.nlparts, x->nparts, ix.lstats.forced, ix.lstats.unmatched);
    free(rows);
    mw__xt_index_free(&ix);
    return 0;
}

/* Loads the recording and writes `lines` into OUTPUT ("-": stdout; a regular file through
 * mw_file.h, replaced only when the export succeeded). Returns the exit status. */
static int export_lines(const char *input, const char *output,
                        int (*lines)(FILE *, const mw__xt_t *))
{
    mw__xt_t x;
    int rc = mw__xt_load(&x, input);
    if (rc != 0) {
        mw__xt_free(&x);
        return rc;
    }
    mw__xout_t xo;
    if (mw__xout_open(&xo, output) < 0) {
        mw__xt_free(&x);
        return 1;
    }
    FILE *out = xo.f;
    mw__xt_warn(&x);
    if (lines(out, &x) < 0) {
        fprintf(stderr, "mpiwatch-export: out of memory\n");
        rc = 1;
    }
    mw__xt_free(&x);
    return mw__xout_close(&xo, rc);
}

int mw__export_trace(const char *input, const char *output)
{
    return export_lines(input, output, trace_lines);
}

int mw__export_logical(const char *input, const char *output)
{
    return export_lines(input, output, logical_rows);
}
