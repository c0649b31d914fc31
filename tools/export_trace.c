/* export_trace.c: the traced windows of a recording (export_trace.h) and --format trace, every
 * traced record as one JSON line.
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
 */
#define _GNU_SOURCE
#include "export_trace.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
        int m = 0;
        if (rec->body_case == MPIWATCH__RECORD__BODY_JOB && rec->job) {
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

/* ---- --format trace ----------------------------------------------------------------------- */

typedef struct {
    int64_t t; /* global start */
    uint32_t rank, thread;
    uint32_t part; /* index into parts */
    uint32_t rec;  /* index into the part's records */
} xt_line_t;

static int cmp_line(const void *pa, const void *pb)
{
    const xt_line_t *a = pa, *b = pb;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    if (a->part != b->part)
        return a->part < b->part ? -1 : 1;
    return a->rec < b->rec ? -1 : a->rec > b->rec;
}

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

static void record_line(FILE *out, const mw__xt_part_t *p, const mw_trace_rec_t *r, int64_t t,
                        int64_t match, int64_t coll)
{
    const char *fn = mw_fn_name(r->fn);
    fprintf(out,
            "{\"type\":\"record\",\"window\":%" PRIu64 ",\"rank\":%" PRIu32 ",\"thread\":%" PRIu32
            ",\"kind\":\"%s\",\"fn\":\"%s\",\"start_ns\":%" PRId64 ",\"dur_ns\":%" PRIu64
            ",\"comm\":\"%" PRIu64 "\",\"peer\":%" PRId32 ",\"tag\":%" PRId32 ",\"seq\":%" PRIu64
            ",\"bytes\":%" PRIu64 ",\"req\":%" PRIu32 ",\"flags\":%u",
            p->window, p->rank, r->thread, mw__xt_kind_name(r->kind), fn ? fn : "unknown", t,
            r->dur_ns, r->comm, r->peer, r->tag, r->seq, r->bytes, r->req, (unsigned)r->flags);
    if (p->reach_back)
        fputs(",\"reach_back\":true", out);
    if (p->trace_flags & MW_TRACE_SEQ_UNRELIABLE)
        fputs(",\"seq_unreliable\":true", out);
    if (match >= 0)
        fprintf(out, ",\"match\":%" PRId64, match);
    if (coll >= 0)
        fprintf(out, ",\"coll\":%" PRId64, coll);
    fputs("}\n", out);
}

/* Writes the lines. Returns 0, or -1 when out of memory. */
static int trace_lines(FILE *out, const mw__xt_t *x)
{
    size_t *off = malloc((x->nparts + 1) * sizeof *off);
    mw_trace_part_t *tp = malloc((x->nparts ? x->nparts : 1) * sizeof *tp);
    if (!off || !tp) {
        free(off);
        free(tp);
        return -1;
    }
    off[0] = 0;
    for (size_t i = 0; i < x->nparts; i++) {
        const mw__xt_part_t *p = &x->parts[i];
        tp[i] = (mw_trace_part_t){p->rank, p->recs, p->n, p->base_ns};
        off[i + 1] = off[i] + p->n;
    }
    size_t total = off[x->nparts];
    int64_t *match = malloc((total ? total : 1) * sizeof *match);
    int64_t *coll = malloc((total ? total : 1) * sizeof *coll);
    xt_line_t *lines = malloc((total ? total : 1) * sizeof *lines);
    mw_trace_matches_t m;
    memset(&m, 0, sizeof m);
    if (!match || !coll || !lines || mw_trace_match(tp, x->nparts, &m) < 0) {
        free(off);
        free(tp);
        free(match);
        free(coll);
        free(lines);
        return -1;
    }
    for (size_t i = 0; i < total; i++)
        match[i] = coll[i] = -1;
    for (size_t i = 0; i < m.nmsgs; i++) {
        const mw_trace_match_t *mm = &m.msgs[i];
        if (mm->send_part < x->nparts && mm->send_rec < x->parts[mm->send_part].n)
            match[off[mm->send_part] + mm->send_rec] = (int64_t)i;
        if (mm->recv_part < x->nparts && mm->recv_rec < x->parts[mm->recv_part].n)
            match[off[mm->recv_part] + mm->recv_rec] = (int64_t)i;
    }
    for (size_t i = 0; i < m.ncolls; i++)
        for (uint32_t j = 0; j < m.colls[i].n; j++) {
            uint32_t pi = m.coll_members[2 * ((size_t)m.colls[i].first + j)];
            uint32_t ri = m.coll_members[2 * ((size_t)m.colls[i].first + j) + 1];
            if (pi < x->nparts && ri < x->parts[pi].n)
                coll[off[pi] + ri] = (int64_t)i;
        }

    for (size_t i = 0; i < x->nwindows; i++) {
        const mw__xt_window_t *w = &x->windows[i];
        if (w->exact < w->ranks_reporting + w->ranks_missing || w->exact == 0)
            window_line(out, x, w);
    }
    size_t n = 0;
    for (size_t i = 0; i < x->nparts; i++)
        for (size_t j = 0; j < x->parts[i].n; j++) {
            const mw_trace_rec_t *r = &x->parts[i].recs[j];
            int64_t t0, t1;
            mw__xt_times(&x->parts[i], r, &t0, &t1);
            lines[n++] = (xt_line_t){t0, x->parts[i].rank, r->thread, (uint32_t)i, (uint32_t)j};
        }
    if (n)
        qsort(lines, n, sizeof *lines, cmp_line);
    for (size_t i = 0; i < n; i++) {
        const mw__xt_part_t *p = &x->parts[lines[i].part];
        size_t k = off[lines[i].part] + lines[i].rec;
        record_line(out, p, &p->recs[lines[i].rec], lines[i].t, match[k], coll[k]);
    }
    fprintf(stderr,
            "mpiwatch-export: %" PRIu64 " record(s) of %zu traced rank window(s); %zu message(s) "
            "matched, %" PRIu64 " send(s) and %" PRIu64 " receive(s) without their partner, "
            "%zu collective instance(s)\n",
            x->records, x->nparts, m.nmsgs, m.sends_unmatched, m.recvs_unmatched, m.ncolls);
    mw_trace_matches_free(&m);
    free(off);
    free(tp);
    free(match);
    free(coll);
    free(lines);
    return 0;
}

int mw__export_trace(const char *input, const char *output)
{
    mw__xt_t x;
    int rc = mw__xt_load(&x, input);
    if (rc != 0) {
        mw__xt_free(&x);
        return rc;
    }
    char err[512] = "";
    FILE *out = stdout;
    mw_afile_t *af = NULL;
    struct stat st;
    int to_stdout = strcmp(output, "-") == 0;
    if (!to_stdout && stat(output, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
        out = fopen(output, "w"); /* a FIFO or a device: written in place */
        if (!out)
            snprintf(err, sizeof err, "cannot write %s: %s", output, strerror(errno));
    } else if (!to_stdout) {
        af = mw_afile_open(output, err, sizeof err);
        out = af ? mw_afile_stream(af) : NULL;
    }
    if (!out) {
        fprintf(stderr, "mpiwatch-export: %s\n", err);
        mw__xt_free(&x);
        return 1;
    }
    mw__xt_warn(&x);
    if (trace_lines(out, &x) < 0) {
        fprintf(stderr, "mpiwatch-export: out of memory\n");
        rc = 1;
    }
    mw__xt_free(&x);
    if (af) {
        if (rc != 0) {
            mw_afile_abort(af);
        } else if (mw_afile_commit(af, err, sizeof err) != 0) {
            fprintf(stderr, "mpiwatch-export: %s\n", err);
            rc = 1;
        }
        return rc;
    }
    if (fflush(out) != 0 || ferror(out)) {
        fprintf(stderr, "mpiwatch-export: cannot write %s: %s\n", output, strerror(errno));
        rc = 1;
    }
    if (!to_stdout && fclose(out) != 0 && rc == 0)
        rc = 1;
    return rc;
}
