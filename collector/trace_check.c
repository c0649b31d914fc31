/* trace_check.c: the ranks' per-call traces and communicator definitions, checked before a
 * window keeps them (docs/trace.md, "The job's budget (collector)").
 *
 * DESIGN: a trace is the most expensive part of a sample and the least essential, so a bad
 * trace never costs the sample: the summary part was checked on its own (ingest.c) and is merged
 * whatever happens here; a trace that fails a check is refused (counted by reason) and the rank
 * is marked summary only in that window (reason MW_TRACE_WHY_REFUSED), so the window still
 * says exactly which ranks are exact. Checks go from cheap to expensive: the fields (window,
 * state, reason, encoding, flags), the caps (records, column bytes, the window's byte cap)
 * before anything is decoded, then one decode (mw_trace_decode, which caps what it allocates)
 * and one pass over the records: every kind, function, peer and time in range, and for a trace
 * that claims to be exact, its calls per function (mw_trace_is_call) equal to the sample's
 * counts of timed functions; otherwise it is demoted to summary only (reason counts). The
 * records are kept as they arrived (never re-encoded); the decoded copy is freed here. Work per
 * message is bounded by MW_TRACE_MAX_RECORDS records and by the frame size.
 *
 * Communicator definitions (Sample.comms) are few: at most MW_TRACE_MAX_COMMS_MSG per sample and
 * MW_TRACE_MAX_COMMS_RANK per rank and job; one out of range drops the sample's list (comm).
 */
#include "trace_check.h"

#include "collector.h"
#include "mw_trace.h"
#include "trace_budget.h"

#include <stdlib.h>
#include <string.h>

const char *mw__trace_refuse_name(mw_trace_refuse_t r)
{
    static const char *const names[MW_TREFUSE_COUNT] = {
#define MW_X(id, name) name,
        MW_TRACE_REFUSE_REASONS(MW_X)
#undef MW_X
    };
    return (unsigned)r < MW_TREFUSE_COUNT ? names[r] : "?";
}

static int fn_ok(uint32_t fn)
{
    return fn > 0 && fn < mw_fn_end(); /* a function with a name (extras included) */
}

/* Timed calls of a sample: what an exact trace must hold. */
static uint64_t sample_timed_calls(const Mpiwatch__Sample *s)
{
    uint64_t n = 0;
    for (size_t i = 0; i < s->n_functions; i++)
        if (mw_fn_timed(s->functions[i]->fn))
            n += s->functions[i]->count;
    return n;
}

/* The fields every Trace must have right, and the caps, before any decoding. */
static int trace_fields(const mw_collector_t *c, const Mpiwatch__Trace *t, mw_trace_refuse_t *why)
{
    if (t->window_start_ns && t->window_start_ns != mw_grid_start(&c->job.grid, t->window)) {
        *why = MW_TREFUSE_WINDOW;
        return -1;
    }
    int has = t->count || t->records.len;
    if ((t->state != MW_TRACE_EXACT && t->state != MW_TRACE_SUMMARY_ONLY) ||
        (t->reason > MW_TRACE_WHY_NOT_ASKED && t->reason != MW_TRACE_WHY_DEFERRED) ||
        (t->flags & ~MW_TRACE_SEQ_UNRELIABLE) || t->threads > MW_TRACE_MAX_THREADS ||
        (has && t->encoding != MW_TRACE_ENC_COLUMNS && t->encoding != MW_TRACE_ENC_ZSTD) ||
        (t->state == MW_TRACE_SUMMARY_ONLY && has) || (t->count && !t->records.len) ||
        (!t->count && t->records.len)) { /* records that would never be decoded */
        *why = MW_TREFUSE_FIELD;
        return -1;
    }
    if (t->count > MW_TRACE_MAX_RECORDS || t->raw_bytes > MW_TRACE_MAX_RAW_BYTES) {
        *why = MW_TREFUSE_CAPS;
        return -1;
    }
    return 0;
}

/* One record in range: its kind and function, its peer (a world rank, -1, or MW_TRACE_ANY in a
 * receive's post), its thread and its times (within a day, ending by the window's end). The tag
 * is any value: it addresses nothing, and a completion from MPI_PROC_NULL carries the status's
 * MPI_ANY_TAG as it came. */
static int record_ok(const mw_trace_rec_t *r, uint32_t size, uint32_t threads, int64_t w)
{
    const int64_t tol = (int64_t)MW_CAPTURE_TOLERANCE_NS, day = (int64_t)MW_TIMESTAMP_TOLERANCE_NS;
    if (r->kind >= MW_TK_COUNT || !fn_ok(r->fn) || !mw_fn_timed(r->fn))
        return 0;
    if (r->peer < -1 && !(r->peer == MW_TRACE_ANY && r->kind == MW_TK_IRECV))
        return 0;
    if (r->peer >= 0 && (uint32_t)r->peer >= size)
        return 0;
    if (threads && r->thread >= threads)
        return 0;
    if (r->start_ns < -day || r->start_ns > w + tol || r->dur_ns > (uint64_t)day)
        return 0;
    return r->start_ns + (int64_t)r->dur_ns <= w + tol;
}

/* Decodes an exact trace once and checks its records; with `s`, also its calls per function
 * against the sample's counts. Returns 0, or -1 with the reason. *calls: its calls. */
static int trace_records(const mw_collector_t *c, const Mpiwatch__Trace *t,
                         const Mpiwatch__Sample *s, uint64_t *calls, mw_trace_refuse_t *why)
{
    /* Calls per function id: static scratch (the core runs on one thread), cleared after use
     * through the list of ids touched. */
    static uint64_t per_fn[MW_FN_SPACE];
    static uint16_t touched[MW_FN_SPACE];
    mw_trace_rec_t *recs = NULL;
    size_t n = 0;
    const char *reason = NULL;
    *calls = 0;
    if (t->count == 0)
        return 0;
    if (mw_trace_decode(t->records.data, t->records.len, t->encoding, t->raw_bytes, t->count, &recs,
                        &n, &reason) < 0 ||
        n != t->count) {
        free(recs);
        char wl[96];
        MW_LOG(MW_LOG_DEBUG, "trace of window %s refused: %s",
               mw__job_windows_label(&c->job, t->window, t->window, wl, sizeof wl),
               reason ? reason : "count");
        *why = MW_TREFUSE_DECODE;
        return -1;
    }
    int64_t w = (int64_t)mw_grid_len(&c->job.grid, t->window);
    uint32_t nt = 0;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        const mw_trace_rec_t *r = &recs[i];
        if (!record_ok(r, c->job.size, t->threads, w)) {
            MW_LOG(MW_LOG_DEBUG,
                   "trace of window %llu refused: record %zu (kind %u, %s, peer %d, tag %d, "
                   "thread %u of %u, start %lld ns, duration %llu ns, window %lld ns)",
                   (unsigned long long)t->window, i, r->kind, mw_fn_name(r->fn), r->peer, r->tag,
                   r->thread, t->threads, (long long)r->start_ns, (unsigned long long)r->dur_ns,
                   (long long)w);
            *why = MW_TREFUSE_RECORD;
            rc = -1;
            break;
        }
        if (!mw_trace_is_call(r))
            continue;
        ++*calls;
        if (per_fn[r->fn]++ == 0)
            touched[nt++] = r->fn;
    }
    if (rc == 0 && s) {
        /* Every timed function of the sample has exactly its count of calls here, and nothing
         * else is here: the ids seen are each matched once (per_fn is cleared as they are). */
        uint32_t matched = 0;
        for (size_t i = 0; i < s->n_functions && rc == 0; i++) {
            const Mpiwatch__FunctionStat *f = s->functions[i];
            if (!mw_fn_timed(f->fn))
                continue;
            if (per_fn[f->fn] != f->count)
                rc = -1;
            else if (f->count)
                matched++;
        }
        if (rc == 0 && matched != nt)
            rc = -1;
        if (rc < 0)
            *why = MW_TREFUSE_COUNTS;
    }
    for (uint32_t i = 0; i < nt; i++)
        per_fn[touched[i]] = 0;
    free(recs);
    return rc;
}

/* A sample's CommDefs: 1 when they may be kept, 0 when dropped (counted). */
static int comms_ok(mw_collector_t *c, uint32_t rank, const Mpiwatch__Sample *s)
{
    mw_rank_t *r = &c->job.ranks[rank];
    if (s->n_comms > MW_TRACE_MAX_COMMS_MSG || s->n_comms > MW_TRACE_MAX_COMMS_RANK - r->comms) {
        c->tstats.refused[MW_TREFUSE_COMM_CAP]++;
        return 0;
    }
    for (size_t i = 0; i < s->n_comms; i++) {
        const Mpiwatch__CommDef *d = s->comms[i];
        if (!d) {
            c->tstats.refused[MW_TREFUSE_COMM]++;
            return 0;
        }
        int inter = d->flags & MW_COMM_INTER, external = d->flags & MW_COMM_EXTERNAL;
        if (d->id == 0 || d->size == 0 || d->rank >= d->size ||
            (d->flags & ~(MW_COMM_INTER | MW_COMM_EXTERNAL | MW_COMM_GROUP_HASH)) ||
            (d->fn && !fn_ok(d->fn)) || d->remote_size > MW_MAX_RANKS ||
            (!inter && d->remote_size) ||
            (!external && (d->size > c->job.size || d->remote_size > c->job.size))) {
            c->tstats.refused[MW_TREFUSE_COMM]++;
            return 0;
        }
    }
    r->comms += (uint32_t)s->n_comms;
    c->tstats.comms += s->n_comms;
    return 1;
}

/* The figures of a kept trace. */
static void trace_count(mw_collector_t *c, uint32_t rank, const mw_trace_in_t *in)
{
    mw_trace_stats_t *st = &c->tstats;
    if (in->state != MW_TRACE_EXACT && in->reason == MW_TRACE_WHY_DEFERRED)
        st->deferred += in->left_out; /* traced: the records come later */
    else
        st->left_out += in->left_out;
    if (in->state == MW_TRACE_EXACT) {
        st->exact++;
        st->traced_calls += in->calls;
        st->bytes += in->t->records.len;
        c->job.ranks[rank].traced_windows++;
        c->job.ranks[rank].traced_calls += in->calls;
    } else {
        st->summary_only++;
    }
}

/* Refuses a trace: the rank is summary only in the window, its timed calls left out. */
static void trace_refuse(mw_collector_t *c, mw_trace_in_t *in, mw_trace_refuse_t why,
                         uint64_t timed)
{
    c->tstats.refused[why]++;
    in->state = MW_TRACE_SUMMARY_ONLY;
    in->reason = MW_TRACE_WHY_REFUSED;
    in->keep_records = 0;
    in->calls = 0;
    in->left_out = timed;
}

void mw__trace_check_sample(mw_collector_t *c, uint32_t rank, const Mpiwatch__Sample *s,
                            mw_trace_in_t *in)
{
    memset(in, 0, sizeof *in);
    if (s->n_comms && comms_ok(c, rank, s)) {
        in->comms = s->comms;
        in->n_comms = s->n_comms;
    }
    const Mpiwatch__Trace *t = s->trace;
    if (!t)
        return;
    c->tstats.traces++;
    in->t = t;
    uint64_t timed = sample_timed_calls(s);
    mw_trace_refuse_t why;
    in->state = t->state;
    in->reason = t->reason;
    in->left_out = t->state == MW_TRACE_EXACT ? 0 : timed;
    in->keep_records = t->state == MW_TRACE_EXACT;
    if (t->window != s->window) {
        trace_refuse(c, in, MW_TREFUSE_WINDOW, timed);
    } else if (trace_fields(c, t, &why) < 0) {
        trace_refuse(c, in, why, timed);
    } else if (t->state == MW_TRACE_EXACT) {
        if (mw__merge_trace_exact(&c->merge, s->window, rank))
            trace_refuse(c, in, MW_TREFUSE_DUPLICATE, timed); /* a later trace came first */
        else if (!mw__merge_trace_room(&c->merge, s->window, t->records.len))
            trace_refuse(c, in, MW_TREFUSE_WINDOW_BYTES, timed);
        else if (trace_records(c, t, s, &in->calls, &why) < 0)
            trace_refuse(c, in, why, timed);
        else if (t->count == 0 && timed) /* "exact" without records, calls in the summary */
            trace_refuse(c, in, MW_TREFUSE_COUNTS, timed);
    }
    trace_count(c, rank, in);
}

int mw__trace_check_late(mw_collector_t *c, uint32_t rank, const Mpiwatch__Trace *t,
                         mw_trace_in_t *in)
{
    memset(in, 0, sizeof *in);
    mw_trace_refuse_t why;
    c->tstats.traces++;
    /* A window of the job that this rank has sent its sample for. */
    const mw_rank_t *r = &c->job.ranks[rank];
    if (r->first_window < 0 || (int64_t)t->window < r->first_window ||
        (int64_t)t->window > r->last_window) {
        c->tstats.refused[MW_TREFUSE_LATE]++;
        return -1;
    }
    int bad = trace_fields(c, t, &why) < 0;
    /* One entry per rank and window: a second exact trace (a repeated capture) is refused
     * before it is decoded or charged to any cap. */
    if (!bad && t->state == MW_TRACE_EXACT && mw__merge_trace_exact(&c->merge, t->window, rank)) {
        why = MW_TREFUSE_DUPLICATE;
        bad = 1;
    }
    if (!bad && t->state == MW_TRACE_EXACT &&
        !mw__merge_trace_room(&c->merge, t->window, t->records.len)) {
        why = MW_TREFUSE_WINDOW_BYTES;
        bad = 1;
    }
    /* Later traces (deferred bursts, reach-back captures) are taken at most at the budget's
     * pace per window of arrival, whatever window they describe (trace_budget.c). */
    if (!bad && t->state == MW_TRACE_EXACT) {
        uint64_t now_w = mw_grid_index(&c->job.grid, c->now.real_ns);
        double win_s = (double)mw_grid_len(&c->job.grid, now_w) / 1e9;
        if (mw__tbudget_late_take(&c->tbudget, now_w, win_s, t->count, t->records.len) < 0) {
            why = MW_TREFUSE_LATE_CAP;
            bad = 1;
        }
    }
    if (bad) {
        c->tstats.refused[why]++;
        return -1;
    }
    in->t = t;
    in->state = t->state;
    in->reason = t->reason;
    /* The rank's own claim (a late summary-only trace): capped so that the job's sums cannot
     * wrap (2^40 calls in one window of one rank is far beyond any real rank). */
    in->left_out = t->state == MW_TRACE_EXACT ? 0 : t->left_out;
    if (in->left_out > MW_TRACE_LEFT_OUT_MAX)
        in->left_out = MW_TRACE_LEFT_OUT_MAX;
    in->keep_records = t->state == MW_TRACE_EXACT;
    if (in->keep_records && trace_records(c, t, NULL, &in->calls, &why) < 0) {
        c->tstats.refused[why]++;
        return -1;
    }
    trace_count(c, rank, in);
    c->tstats.reach_back++;
    return 0;
}

int mw__trace_check_partial(mw_collector_t *c, const Mpiwatch__Trace *t, mw_trace_in_t *in)
{
    memset(in, 0, sizeof *in);
    mw_trace_refuse_t why;
    /* A trace the aggregator refused or demoted is kept as summary only with reason refused,
     * which only a collector sets: checked as any other summary-only trace. */
    Mpiwatch__Trace f = *t;
    if (f.reason == MW_TRACE_WHY_REFUSED && f.state == MW_TRACE_SUMMARY_ONLY)
        f.reason = MW_TRACE_WHY_NOT_ASKED;
    if (trace_fields(c, &f, &why) < 0 ||
        (t->state == MW_TRACE_EXACT && trace_records(c, t, NULL, &in->calls, &why) < 0)) {
        c->tstats.refused[why]++;
        return -1;
    }
    in->t = t;
    in->state = t->state;
    in->reason = t->reason;
    in->left_out = t->left_out > MW_TRACE_LEFT_OUT_MAX ? MW_TRACE_LEFT_OUT_MAX : t->left_out;
    in->keep_records = t->state == MW_TRACE_EXACT;
    return 0;
}

int mw__trace_check_comm(const mw_collector_t *c, const Mpiwatch__CommDef *d)
{
    int inter = d->flags & MW_COMM_INTER, external = d->flags & MW_COMM_EXTERNAL;
    return d->id != 0 && d->size != 0 && d->rank < d->size &&
           !(d->flags & ~(MW_COMM_INTER | MW_COMM_EXTERNAL | MW_COMM_GROUP_HASH)) &&
           (!d->fn || fn_ok(d->fn)) && d->remote_size <= MW_MAX_RANKS &&
           (inter || !d->remote_size) &&
           (external || (d->size <= c->job.size && d->remote_size <= c->job.size));
}
