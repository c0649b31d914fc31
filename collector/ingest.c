/* ingest.c: validating a decoded envelope against the job, then applying it.
 *
 * DESIGN: every message is checked completely before anything is changed, so a rejected
 * message leaves no trace except its counter. The checks are cheap (O(1) per field, no
 * allocation) because they run on every message at full ingest rate; they follow the order in
 * which a reader of the message would need each fact: version, body, which job, which rank,
 * whether that rank may send this now, timestamps, then every index that would be used to
 * address an array. Anything that addresses memory (function ids, bins, sub-slots, peers) is
 * bounded here, which is what lets merge.c and job.c index without checking.
 *
 * Strings end up in the report, the summary JSON and the terminal, so they must be short,
 * valid UTF-8 and free of control characters (protobuf-c does not check UTF-8).
 */
#include "aggstate.h"
#include "collector.h"
#include "ingest.h"
#include "mw_bins.h"
#include "mw_fnmap.h"
#include "mw_fnmap_msg.h"
#include "mw_trace.h"
#include "mw_wire.h"
#include "partial.h"
#include "publish.h"
#include "steps.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *str_or_empty(const char *s)
{
    return s ? s : "";
}

/* Valid UTF-8, no control characters, at most MW_MAX_STRING bytes (proto/mw_wire.h). */
static int text_ok(const char *s)
{
    s = str_or_empty(s);
    size_t n = strnlen(s, MW_MAX_STRING + 1);
    return n <= MW_MAX_STRING && mw_wire_text_ok((const unsigned char *)s, n);
}

/* A global timestamp within a day of the collector's real-time clock. */
static int time_ok(uint64_t ts, uint64_t now_real)
{
    return ts > now_real ? ts - now_real <= MW_TIMESTAMP_TOLERANCE_NS
                         : now_real - ts <= MW_TIMESTAMP_TOLERANCE_NS;
}

/* One past the job's largest function id (mw_fn_end), read once per message. */
static unsigned fn_end = MW_FN_COUNT;

static int fn_ok(uint32_t fn)
{
    return fn > 0 && fn < fn_end;
}

/* Whether the collector is taking messages for c->job (a hello started it, it has not ended). */
static int job_open(const mw_collector_t *c)
{
    return c->job.active && c->job.ended == MW_END_NONE;
}

/* ---- function identity by name (docs/function-table.md) -------------------------------------
 *
 * A rank's function ids are those of its own table, which its hello names (or, for a library
 * or a recording older than the names, identifies by its hash: this build's table or the
 * legacy one). Each distinct table is mapped once to the job's ids (this process's: its own
 * table, then the extras, mw_fnmap.h) and kept for the process's lifetime, at most
 * MW_FN_MAX_TABLES of them; ranks with the same table share its map. Every id a sample, a bye
 * or a trace carries is translated by fn_translate() right after decoding, before anything
 * checks or merges it, so the rest of the collector only ever sees the job's ids. A rank of
 * this build's table costs one test per message. */
typedef struct {
    uint64_t hash; /* mw_fn_names_hash of its names (or the table hash of a hello without) */
    uint32_t n;
    int named;   /* known by its names (else by its hash alone) */
    char *names; /* its names, NUL-separated (named tables), to tell hash collisions apart */
    size_t names_len;
    mw_fnmap_t map;
} fn_table_t;

static pthread_mutex_t fn_tables_lock = PTHREAD_MUTEX_INITIALIZER;
static fn_table_t fn_tables[MW_FN_MAX_TABLES];
static _Atomic uint32_t fn_tables_n;

static int same_names(const fn_table_t *t, char *const *names, size_t n)
{
    const char *p = t->names, *end = t->names + t->names_len;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(names[i]);
        if ((size_t)(end - p) < len + 1 || memcmp(p, names[i], len + 1) != 0)
            return 0;
        p += len + 1;
    }
    return p == end;
}

/* The index + 1 of the hello's table among those seen, adding it when new; 0 when it is not
 * understood (a bad name list, an unknown hash without names, too many tables), with the
 * reason in err. */
static unsigned fn_table_of(const Mpiwatch__Hello *h, char *err, size_t errlen)
{
    int named = h->n_function_names > 0;
    if (named && h->n_function_names > MW_FN_TABLE_MAX) {
        snprintf(err, errlen, "a function table of %zu names (the cap is %u)", h->n_function_names,
                 MW_FN_TABLE_MAX);
        return 0;
    }
    for (size_t i = 0; named && i < h->n_function_names; i++)
        if (!mw_fn_name_ok(h->function_names[i])) {
            snprintf(err, errlen, "function name %zu is not a function name", i + 1);
            return 0;
        }
    uint64_t hash =
        named ? mw_fn_names_hash((const char *const *)h->function_names, h->n_function_names)
              : h->function_table_hash;
    uint32_t n = named ? (uint32_t)h->n_function_names : h->function_count;
    unsigned found = 0;
    pthread_mutex_lock(&fn_tables_lock);
    uint32_t have = atomic_load_explicit(&fn_tables_n, memory_order_relaxed);
    /* A hello without names whose hash and size are those of a table already received with
     * names in this job maps by that table: an aggregator forwards only the first hello of
     * each table with its names (docs/function-table.md). */
    for (uint32_t i = 0; i < have && !found; i++) {
        const fn_table_t *t = &fn_tables[i];
        if (t->hash == hash && t->n == n && (t->named == named || t->named) &&
            (!named || same_names(t, h->function_names, h->n_function_names)))
            found = i + 1;
    }
    if (!found && have >= MW_FN_MAX_TABLES) {
        snprintf(err, errlen, "more than %u distinct function tables", MW_FN_MAX_TABLES);
    } else if (!found) {
        fn_table_t *t = &fn_tables[have];
        memset(t, 0, sizeof *t);
        int rc;
        if (named) {
            rc =
                mw_fnmap_build(&t->map, (const char *const *)h->function_names, h->n_function_names,
                               h->function_kinds, h->n_function_kinds, err, errlen);
            size_t len = 0;
            for (size_t i = 0; rc == 0 && i < h->n_function_names; i++)
                len += strlen(h->function_names[i]) + 1;
            if (rc == 0 && !(t->names = malloc(len ? len : 1))) {
                mw_fnmap_free(&t->map);
                snprintf(err, errlen, "out of memory");
                rc = -1;
            }
            for (size_t i = 0, off = 0; rc == 0 && i < h->n_function_names; i++) {
                size_t l = strlen(h->function_names[i]) + 1;
                memcpy(t->names + off, h->function_names[i], l);
                off += l;
            }
            t->names_len = len;
        } else {
            rc = mw_fnmap_known(&t->map, h->function_table_hash, h->function_count);
            if (rc < 0)
                snprintf(err, errlen,
                         "a hello without function names whose table (%u functions, hash "
                         "%016llx) is neither this build's (%u, %016llx) nor the legacy one "
                         "(%u, %016llx)",
                         h->function_count, (unsigned long long)h->function_table_hash,
                         (unsigned)MW_FN_COUNT - 1, (unsigned long long)mw_fn_table_hash(),
                         mw_fn_legacy_count(), (unsigned long long)mw_fn_legacy_hash());
        }
        if (rc == 0) {
            t->hash = hash;
            t->n = n;
            t->named = named;
            atomic_store_explicit(&fn_tables_n, have + 1, memory_order_release);
            found = have + 1;
            if (t->map.unknown)
                MW_LOG(MW_LOG_WARN,
                       "%u function names of a rank's table have no id here (%u extra names "
                       "at most): their calls are left out and counted",
                       t->map.unknown, MW_FN_EXTRA);
        }
    }
    pthread_mutex_unlock(&fn_tables_lock);
    return found;
}

/* Forget every table and extra (the first hello of a job, check_hello). */
static void fn_tables_reset(void)
{
    pthread_mutex_lock(&fn_tables_lock);
    uint32_t have = atomic_load_explicit(&fn_tables_n, memory_order_relaxed);
    atomic_store_explicit(&fn_tables_n, 0u, memory_order_release);
    for (uint32_t i = 0; i < have; i++) {
        mw_fnmap_free(&fn_tables[i].map);
        free(fn_tables[i].names);
        memset(&fn_tables[i], 0, sizeof fn_tables[i]);
    }
    mw_fn_extras_reset();
    pthread_mutex_unlock(&fn_tables_lock);
}

static const mw_fnmap_t *rank_fnmap(const mw_collector_t *c, uint32_t rank)
{
    unsigned t = rank < c->job.size ? c->job.ranks[rank].fn_table : 0;
    /* A table of an ended job is gone once the next job's first hello came. */
    return t && t <= atomic_load_explicit(&fn_tables_n, memory_order_acquire)
               ? &fn_tables[t - 1].map
               : NULL;
}

int mw__ingest_translated(const mw_collector_t *c, uint32_t rank)
{
    const mw_fnmap_t *m = rank_fnmap(c, rank);
    return m && !m->identity;
}

/* The one place where a rank's function ids become the job's (see above). */
static void fn_translate(mw_collector_t *c, Mpiwatch__Envelope *env)
{
    static mw_fnmap_keep_t trace_block; /* a translated trace's records, until the next one */
    const mw_fnmap_t *m = rank_fnmap(c, env->rank);
    if (m && !m->identity) {
        mw_fnmap_keep_clear(&trace_block);
        c->job.fn_unknown += mw_fnmap_envelope(m, env, &trace_block);
        /* Its trace stays in the recorded window (the frame has the rank's ids). */
        c->merge.frame_off = 0;
    }
}

/* The placement fields of a hello (docs/topology.md): the node name is text like the host,
 * indices are -1 or more, a rank lists at most MW_MAX_PUS PUs, and a node's hardware is at
 * most MW_MAX_TOPO_OBJECTS objects of the four known types, each after its parent (so that
 * a reader can build the tree in one pass and never loops), a PU enclosing nothing, and it
 * describes the hello's own node (bad_field otherwise). Its tree is at most MW_MAX_TOPO_DEPTH
 * levels deep (topo_depth otherwise): every reader walks it, and a chain of 65,536 objects
 * once crashed the viewer's recursive layout. O(objects), paid once per node. */
static mw_reject_t check_placement(const Mpiwatch__Hello *h)
{
    /* Depth of each object, by index: parents come first, so one forward pass computes it.
     * Static scratch: the collector's core runs on one thread. */
    static uint8_t depth[MW_MAX_TOPO_OBJECTS];
    _Static_assert(MW_MAX_TOPO_DEPTH < 255, "depths fit in a byte");
    if (!text_ok(h->node) || h->l3 < -1 || h->numa < -1 || h->n_pus > MW_MAX_PUS)
        return MW_REJECT_BAD_FIELD;
    const Mpiwatch__NodeTopology *t = h->topology;
    if (!t)
        return MW_ACCEPTED;
    if (!text_ok(t->node) || t->n_objects > MW_MAX_TOPO_OBJECTS)
        return MW_REJECT_BAD_FIELD;
    if (t->node && t->node[0] && strcmp(t->node, mw__hello_node(h)) != 0)
        return MW_REJECT_BAD_FIELD;
    for (size_t i = 0; i < t->n_objects; i++) {
        const Mpiwatch__TopoObject *o = t->objects[i];
        if (o->type < 1 || o->type > 5 || o->parent < -1 || (int64_t)o->parent >= (int64_t)i)
            return MW_REJECT_BAD_FIELD;
        if (o->parent >= 0 && t->objects[o->parent]->type == 4)
            return MW_REJECT_BAD_FIELD;
    }
    for (size_t i = 0; i < t->n_objects; i++) {
        int32_t p = t->objects[i]->parent;
        depth[i] = (uint8_t)(p < 0 ? 1 : depth[p] + 1);
        if (depth[i] > MW_MAX_TOPO_DEPTH)
            return MW_REJECT_TOPO_DEPTH;
    }
    return MW_ACCEPTED;
}

static mw_reject_t check_hello(mw_collector_t *c, const Mpiwatch__Envelope *env,
                               const mw_clock_t *now, unsigned *fn_table)
{
    const Mpiwatch__Hello *h = env->hello;
    int fresh = !job_open(c); /* this hello would start a new job */
    if (!h)
        return MW_REJECT_NO_BODY;
    if (!fresh && strcmp(str_or_empty(env->job), c->job.job) != 0)
        return MW_REJECT_JOB_MISMATCH;
    if (h->size == 0 || h->size > MW_MAX_RANKS || env->rank >= h->size)
        return MW_REJECT_RANK_RANGE;
    if (!fresh && h->size != c->job.size)
        return MW_REJECT_RANK_RANGE;
    if (!text_ok(env->job) || !text_ok(h->host) || !text_ok(h->binding) || !text_ok(h->cpuset) ||
        !text_ok(h->mpi_library) || !text_ok(h->timer) || !text_ok(h->program))
        return MW_REJECT_BAD_FIELD;
    mw_reject_t placement = check_placement(h);
    if (placement != MW_ACCEPTED)
        return placement;
    if (h->window_ns == 0 || h->window_ns > MW_MAX_WINDOW_NS || h->subslots == 0 ||
        h->subslots > MW_MAX_SUBSLOTS || !mw_bins_valid(h->duration_bins) ||
        h->duration_bins > MW_MAX_DURATION_BINS || h->pu < -1 || h->core < -1 || h->package < -1)
        return MW_REJECT_BAD_FIELD;
    /* The grid and the shapes of the merged arrays are the job's: every rank must agree. */
    if (!fresh && (h->window_ns != c->job.window_ns || h->subslots != c->job.subslots ||
                   h->duration_bins != c->job.duration_bins))
        return MW_REJECT_BAD_FIELD;
    if (!time_ok(h->start_ns, now->real_ns))
        return MW_REJECT_TIMESTAMP;
    if (!fresh) {
        const mw_rank_t *r = &c->job.ranks[env->rank];
        if (r->state != MW_RANK_PENDING && r->pid != h->pid)
            return MW_REJECT_DUPLICATE_HELLO;
    }
    /* Last, as it keeps what it learns: a hello refused for another reason costs no table and
     * no extra. The first hello of a job forgets the previous jobs' tables and extras, so that
     * no job can use up the tables or extras of the jobs after it. */
    if (fresh)
        fn_tables_reset();
    char err[256];
    if (!(*fn_table = fn_table_of(h, err, sizeof err))) {
        if (!c->job.fn_table_warned) {
            MW_LOG(MW_LOG_ERROR, "rank %u refused: %s", env->rank, err);
            c->job.fn_table_warned = 1;
        }
        return MW_REJECT_TABLE_MISMATCH;
    }
    return MW_ACCEPTED;
}

/* Common checks of samples and byes: the job is open, the rank is in it and has said hello. */
static mw_reject_t check_sender(const mw_collector_t *c, const Mpiwatch__Envelope *env)
{
    if (!job_open(c))
        return MW_REJECT_NO_HELLO;
    if (strcmp(str_or_empty(env->job), c->job.job) != 0)
        return MW_REJECT_JOB_MISMATCH;
    if (env->rank >= c->job.size)
        return MW_REJECT_RANK_RANGE;
    uint8_t state = c->job.ranks[env->rank].state;
    if (state == MW_RANK_DONE)
        return env->body_case == MPIWATCH__ENVELOPE__BODY_BYE ? MW_REJECT_DUPLICATE
                                                              : MW_REJECT_NO_HELLO;
    if (state != MW_RANK_LIVE)
        return MW_REJECT_NO_HELLO;
    return MW_ACCEPTED;
}

/* Marks fn as seen in this sample; returns 0 when it already was. */
static int fn_first_time(mw_collector_t *c, uint32_t fn)
{
    if (c->fn_seen[fn] == c->fn_seen_gen)
        return 0;
    c->fn_seen[fn] = c->fn_seen_gen;
    return 1;
}

/* A captured window's trace (docs/steering.md): a sane request that covers this window,
 * parallel arrays of at most MW_CAPTURE_MAX_CALLS calls, timed function ids and peers in
 * range, and every call ending inside the window (within MW_CAPTURE_TOLERANCE_NS), except at
 * most calls_late calls that ended earlier, within a day. O(calls), only for captured windows. */
static mw_reject_t check_capture(const mw_job_t *job, const Mpiwatch__Sample *s)
{
    const Mpiwatch__Capture *cp = s->capture;
    size_t n = cp->n_fn;
    if (cp->windows == 0 || cp->windows > MW_CAPTURE_MAX_WINDOWS || cp->skipped >= cp->windows ||
        cp->first > s->window || s->window - cp->first >= cp->windows ||
        s->window - cp->first < cp->skipped)
        return MW_REJECT_CAPTURE_FIELD;
    if (n > MW_CAPTURE_MAX_CALLS || cp->n_start != n || cp->n_duration_ns != n ||
        cp->n_bytes != n || cp->n_peer != n)
        return MW_REJECT_CAPTURE_FIELD;
    const int64_t w = (int64_t)mw_grid_len(&job->grid, s->window);
    const int64_t tol = (int64_t)MW_CAPTURE_TOLERANCE_NS;
    const int64_t day = (int64_t)MW_TIMESTAMP_TOLERANCE_NS;
    uint64_t early = 0;
    for (size_t i = 0; i < n; i++) {
        if (!fn_ok(cp->fn[i]) || !mw_fn_timed(cp->fn[i]) || cp->peer[i] < -1 ||
            (cp->peer[i] >= 0 && (uint32_t)cp->peer[i] >= job->size))
            return MW_REJECT_CAPTURE_FIELD;
        /* Both bounded by a day first, so the end cannot overflow. */
        if (cp->start[i] < -day || cp->start[i] > w + tol || cp->duration_ns[i] > (uint64_t)day)
            return MW_REJECT_CAPTURE_TIME;
        int64_t end = cp->start[i] + (int64_t)cp->duration_ns[i];
        if (end > w + tol)
            return MW_REJECT_CAPTURE_TIME;
        if (end < -tol)
            early++;
    }
    return early <= s->calls_late ? MW_ACCEPTED : MW_REJECT_CAPTURE_TIME;
}

static mw_reject_t check_sample(mw_collector_t *c, const Mpiwatch__Envelope *env,
                                const mw_clock_t *now)
{
    const Mpiwatch__Sample *s = env->sample;
    const mw_job_t *job = &c->job;
    mw_reject_t r = check_sender(c, env);
    if (r != MW_ACCEPTED)
        return r;
    if (!s)
        return MW_REJECT_NO_BODY;

    if (!time_ok(s->sent_ns, now->real_ns))
        return MW_REJECT_TIMESTAMP;
    /* The window's start must be a sane time too; index first, the product could wrap. */
    if (s->window > mw_grid_index(&job->grid, now->real_ns + MW_TIMESTAMP_TOLERANCE_NS) ||
        !time_ok(mw_grid_start(&job->grid, s->window), now->real_ns))
        return MW_REJECT_TIMESTAMP;
    /* A window that starts in the future by more than a clock skew (reason ahead): the newest
     * windows place K for mpiwatch.window and captures (steer.c), so one rank or one forged
     * sample must not be able to claim one far ahead; it would also evict the open windows. */
    if (mw_grid_start(&job->grid, s->window) > now->real_ns + MW_SAMPLE_MAX_LEAD_NS)
        return MW_REJECT_AHEAD;
    /* A rank on another grid (it missed or got too late an mpiwatch.window change): its
     * windows cover other times than ours, so none of them is merged. Older libraries send
     * neither field. */
    if ((s->window_ns || s->window_start_ns) &&
        (s->window_ns != mw_grid_len(&job->grid, s->window) ||
         s->window_start_ns != mw_grid_start(&job->grid, s->window)))
        return MW_REJECT_GRID_MISMATCH;
    if ((int64_t)s->window <= mw__merge_last_window(&c->merge, env->rank))
        return MW_REJECT_DUPLICATE;

    if (++c->fn_seen_gen == 0) { /* wrapped: forget every old mark */
        memset(c->fn_seen, 0, sizeof c->fn_seen);
        c->fn_seen_gen = 1;
    }
    for (size_t i = 0; i < s->n_functions; i++) {
        const Mpiwatch__FunctionStat *f = s->functions[i];
        if (!f || !fn_ok(f->fn) || !fn_first_time(c, f->fn))
            return MW_REJECT_BAD_FIELD;
        if (f->count && f->min_ns > f->max_ns)
            return MW_REJECT_BAD_FIELD;
        if (f->n_hist &&
            (f->hist_first >= job->duration_bins || f->n_hist > job->duration_bins - f->hist_first))
            return MW_REJECT_BAD_FIELD;
    }

    if (s->n_peer_messages != s->n_peer_rank || s->n_peer_bytes != s->n_peer_rank)
        return MW_REJECT_BAD_FIELD;
    for (size_t i = 0; i < s->n_peer_rank; i++)
        if (s->peer_rank[i] >= job->size)
            return MW_REJECT_BAD_FIELD;
    /* The sending function of each peer entry (older libraries send none). */
    if (s->n_peer_fn && s->n_peer_fn != s->n_peer_rank)
        return MW_REJECT_BAD_FIELD;
    for (size_t i = 0; i < s->n_peer_fn; i++)
        if (!fn_ok(s->peer_fn[i]))
            return MW_REJECT_BAD_FIELD;
    /* Regions and call sites: only their array lengths can reject the sample; each definition
     * and entry is checked when applied, and left out and counted if bad (regions.c). */
    if ((r = mw__rs_check(s)) != MW_ACCEPTED)
        return r;

    if (s->n_occ_sub != s->n_occ_fn || s->n_occ_ns != s->n_occ_fn)
        return MW_REJECT_BAD_FIELD;
    for (size_t i = 0; i < s->n_occ_fn; i++)
        if (!fn_ok(s->occ_fn[i]) || s->occ_sub[i] >= job->subslots)
            return MW_REJECT_BAD_FIELD;

    size_t nd = s->n_density_fn;
    if (s->n_density_sub != nd || s->n_density_bin != nd || s->n_density_end != nd ||
        s->n_density_count != nd)
        return MW_REJECT_BAD_FIELD;
    for (size_t i = 0; i < nd; i++)
        if (!fn_ok(s->density_fn[i]) || s->density_sub[i] >= (int32_t)job->subslots ||
            s->density_bin[i] >= job->duration_bins || s->density_end[i] > 1)
            return MW_REJECT_BAD_FIELD;

    for (size_t i = 0; i < s->n_longest; i++) {
        const Mpiwatch__Call *call = s->longest[i];
        if (!call || !fn_ok(call->fn) || call->peer < -1 ||
            (call->peer >= 0 && (uint32_t)call->peer >= job->size))
            return MW_REJECT_BAD_FIELD;
        if (!time_ok(call->start_ns, now->real_ns))
            return MW_REJECT_TIMESTAMP;
    }
    if (s->capture && (r = check_capture(job, s)) != MW_ACCEPTED)
        return r;
    /* Running totals (loss accounting, job.c): after the functions they are checked against. */
    if ((r = mw__job_totals_check(job, env->rank, s, NULL)) != MW_ACCEPTED)
        return r;
    /* Step marks last: their bounds are the totals checked above (steps.c). */
    return mw__steps_check(c, s);
}

mw_reject_t mw__ingest(mw_collector_t *c, const Mpiwatch__Envelope *env, const mw_clock_t *now)
{
    mw_reject_t r;
    if (env->version != MW_PROTO_VERSION)
        return MW_REJECT_VERSION;
    fn_end = mw_fn_end();
    /* The envelope lives in the decoding arena, for this call only: translated in place. */
    /* A partial's or AggState's ids are its aggregator's (partial.c, aggstate.c translate). */
    if (env->body_case != MPIWATCH__ENVELOPE__BODY_HELLO &&
        env->body_case != MPIWATCH__ENVELOPE__BODY_PARTIAL &&
        env->body_case != MPIWATCH__ENVELOPE__BODY_AGG && job_open(c))
        fn_translate(c, (Mpiwatch__Envelope *)env);

    switch (env->body_case) {
    case MPIWATCH__ENVELOPE__BODY_HELLO: {
        unsigned fn_table = 0;
        r = check_hello(c, env, now, &fn_table);
        if (r != MW_ACCEPTED)
            return r;
        if (!job_open(c) && mw__collector_job_begin(c, env, now->mono_ns) < 0)
            return MW_REJECT_RANK_RANGE; /* no memory for a job this size */
        uint64_t capped[MW_CAP_COUNT];
        memcpy(capped, c->job.capped, sizeof capped);
        c->hello_again = !mw__job_hello(&c->job, env, now->mono_ns);
        c->job.ranks[env->rank].fn_table = (uint8_t)fn_table;
        /* What went over a job-wide cap, also counted for the collector's lifetime. */
        for (int i = 0; i < MW_CAP_COUNT; i++)
            c->stats.capped[i] += c->job.capped[i] - capped[i];
        return MW_ACCEPTED;
    }

    case MPIWATCH__ENVELOPE__BODY_SAMPLE: {
        r = check_sample(c, env, now);
        if (r != MW_ACCEPTED)
            return r;
        /* The trace and the communicator definitions last: whatever they say, the sample is
         * merged (trace_check.c). */
        mw_trace_in_t trace;
        mw__trace_check_sample(c, env->rank, env->sample, &trace);
        uint64_t dropped = mw__job_sample(&c->job, env, now->mono_ns);
        /* An aggregator closes the steps this sample completes, and notes its dormant totals,
         * before the window it may complete: they go up with that window's partial. */
        int aggregating = mw__partial_aggregating(c);
        if (aggregating) {
            mw__steps_sample(c, env->rank, env->sample);
            if (env->sample->dormant)
                mw__partial_dormant(c, env->rank, env->sample->window, env->sample->dormant);
        }
        mw_rs_in_t rs;
        mw__rs_apply(&c->job.rs, env->rank, env->sample, mw__job_info_charge, &c->job, &rs,
                     c->stats.rs_refused);
        c->merge.rs_in = &rs;
        int late = mw__merge_add(&c->merge, env->rank, env->sample, dropped, now->mono_ns, &trace);
        c->merge.rs_in = NULL;
        if (late) {
            c->job.late++;
            c->stats.late++;
            /* Its window has closed: an exact trace still reaches the feed's clients. */
            if (trace.t && trace.state == MW_TRACE_EXACT)
                mw__publish_trace(c, env->rank, trace.t);
        }
        if (!aggregating)
            mw__steps_sample(c, env->rank, env->sample);
        return MW_ACCEPTED;
    }

    /* From an aggregator (docs/partial.md): its merged window, its identity and accounting. */
    case MPIWATCH__ENVELOPE__BODY_PARTIAL:
        if ((r = mw__aggstate_connection(c, env->rank)) != MW_ACCEPTED)
            return r;
        return mw__partial_ingest(c, env, now);

    case MPIWATCH__ENVELOPE__BODY_AGG:
        r = mw__aggstate_ingest(c, env, now);
        if (r == MW_ACCEPTED && c->merge_ready) /* windows wait for its partials (merge.c) */
            mw__merge_agg_state(&c->merge, env->agg->id,
                                env->agg->ranks - (env->agg->ranks_done < env->agg->ranks
                                                       ? env->agg->ranks_done
                                                       : env->agg->ranks),
                                env->agg->final, now->mono_ns);
        return r;

    case MPIWATCH__ENVELOPE__BODY_BYE:
        r = check_sender(c, env);
        if (r != MW_ACCEPTED)
            return r;
        if (!env->bye)
            return MW_REJECT_NO_BODY;
        if ((r = mw__job_totals_check(&c->job, env->rank, NULL, env->bye)) != MW_ACCEPTED)
            return r;
        mw__job_bye(&c->job, env, now->mono_ns);
        mw__merge_leave(&c->merge, env->rank);
        mw__steps_leave(c, env->rank);
        return MW_ACCEPTED;

    case MPIWATCH__ENVELOPE__BODY_TRACE: {
        /* A flight-recorder window sent after its sample (a reach-back capture): into its
         * window while that is open, else on the feed only (topic "trace"); the frame itself is
         * in the recording like every frame. */
        if ((r = check_sender(c, env)) != MW_ACCEPTED)
            return r;
        if (!env->trace)
            return MW_REJECT_NO_BODY;
        mw_trace_in_t in;
        if (mw__trace_check_late(c, env->rank, env->trace, &in) < 0)
            return MW_REJECT_TRACE;
        c->job.last_activity_ns = now->mono_ns;
        c->job.ranks[env->rank].last_seen_ns = now->mono_ns;
        int added = mw__merge_trace_add(&c->merge, env->rank, env->trace->window, &in);
        if (added < 0)
            c->tstats.refused[MW_TREFUSE_WINDOW_BYTES]++;
        else if (added > 0)
            mw__publish_trace(c, env->rank, env->trace);
        return MW_ACCEPTED;
    }

    default:
        return MW_REJECT_NO_BODY;
    }
}
