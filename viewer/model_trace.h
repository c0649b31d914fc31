/* model_trace.h: the per-call traces of the windows the viewer holds (docs/trace.md, "Viewing
 * traced windows"): decoded on demand, bounded, matched. No SDL, no GL.
 *
 * DESIGN: a merged window carries its ranks' traces as the ranks encoded them
 * (Window.traces, a few bytes per call), so the window cache (model_store.h) already keeps
 * them within its byte budget. What the views need is the decoded records, 64 bytes each:
 * those are decoded when a view first asks for a window (mw_trace_window) and kept in a cache
 * of at most MW_TRACE_RECORDS_DEFAULT records (mw_model_set_trace_cap); when it is full, the
 * decoded windows outside the call view's range go first, oldest first, and a window that does
 * not fit even so is drawn from its summary and counted. A decoded window remembers the cached
 * Window it came from, so a window fetched again or evicted is decoded again when it is next
 * asked for. Traces that arrive after their window closed (a reach-back capture: Feed.trace)
 * are kept beside the windows (at most MW_TRACE_LATE_MAX, the oldest dropped and counted) and
 * folded into their window's decoded form. Messages are matched (mw_trace_match, proto/
 * mw_trace.h) over the traced windows of a range, cached until the range or the data change.
 */
#ifndef MW_VIEWER_MODEL_TRACE_H
#define MW_VIEWER_MODEL_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "model_store.h"
#include "mw_trace.h"

#define MW_TRACE_RECORDS_DEFAULT (1u << 20) /* decoded records kept: 64 MiB */
/* Late traces kept: a deferred burst (docs/trace.md, `every:P:B@K/G`) of 16,384 ranks x 3
 * windows is 49,152 of them, each a rank's records; the oldest go first past either cap. */
#define MW_TRACE_LATE_MAX 65536
#define MW_TRACE_LATE_MAX_BYTES (256u << 20) /* their record bytes */
#define MW_TRACE_TIME_MAX (1ll << 50)        /* |start|, duration of a record kept (13 days) */

/* One rank's trace of one window, decoded. */
typedef struct {
    uint32_t rank;
    int exact;         /* state TRACE_EXACT: every timed call of the window is in recs */
    uint64_t left_out; /* calls the rank left out (summary only) */
    uint64_t base_ns;  /* global ns the records' start_ns count from (the window's start) */
    mw_trace_rec_t *recs;
    size_t n;
} mw_trace_rank_t;

/* A window's traces. */
typedef struct {
    uint64_t index;
    uint64_t start_ns, len_ns; /* the window (global ns) */
    mw_trace_rank_t *ranks;    /* by rank */
    uint32_t n_ranks;
    uint32_t exact;     /* entries that are exact */
    uint32_t reporting; /* the window's ranks_reporting */
    int all_exact;      /* every reporting rank is exact: the summary is not drawn at all */
    size_t records;
    const void *src;   /* the cached Window it was decoded from */
    uint64_t late_gen; /* late traces folded in */
    int over_cap;      /* did not fit the decoded-record cap: drawn from the summary */
} mw_trace_window_t;

/* How a window is drawn. */
typedef enum {
    MW_COVER_NONE,    /* not loaded */
    MW_COVER_SUMMARY, /* from its summary only (not traced, over budget, over the cap) */
    MW_COVER_PARTIAL, /* some ranks exact, the others from the summary */
    MW_COVER_EXACT    /* every reporting rank exact */
} mw_cover_t;

typedef struct {
    uint64_t windows_decoded; /* decodings done (a window fetched again counts again) */
    uint64_t windows_kept, records_kept, records_cap;
    uint64_t windows_evicted; /* decoded windows let go for room */
    uint64_t over_cap;        /* windows drawn from their summary for lack of room */
    uint64_t decode_errors;   /* rank traces refused (bad block, wrong window, rank) */
    uint64_t records_refused; /* records with times beyond MW_TRACE_TIME_MAX */
    uint64_t late_kept, late_dropped, late_refused;
} mw_trace_stats_t;

/* The cap on decoded records (0: the default). */
void mw_model_set_trace_cap(mw_model_t *m, size_t records);
/* A rank's trace of a window that closed before it came (Feed.trace); takes ownership.
 * Returns 0, or -1 when refused (freed, counted). */
int mw_model_add_trace(mw_model_t *m, Mpiwatch__RankTrace *rt);
/* Window k's decoded traces, decoding them now if needed; NULL when the window is not cached
 * or has no trace at all. Valid until the next call that may decode (any mw_trace_* call). */
const mw_trace_window_t *mw_trace_window(const mw_model_t *m, uint64_t k);
/* How window k is drawn. */
mw_cover_t mw_trace_cover(const mw_model_t *m, uint64_t k);
void mw_trace_stats(const mw_model_t *m, mw_trace_stats_t *out);

/* Matched messages over the traced windows of [k0, k1]: parts are (window, rank) entries. */
typedef struct {
    mw_trace_part_t *parts;
    uint64_t *part_window;
    size_t n_parts;
    mw_trace_matches_t m;
    int ok; /* matching ran */
} mw_trace_links_t;
const mw_trace_links_t *mw_trace_links(const mw_model_t *m, uint64_t k0, uint64_t k1);

/* Calls still in progress when the newest traced window was sent (records flagged
 * MW_TF_OPEN), drawn open-ended: `grown_ns` is how long they have lasted by the end of the
 * newest window the model knows (at least what the record says). */
typedef struct {
    uint32_t rank;
    unsigned fn;
    uint64_t start_ns; /* global */
    uint64_t dur_ns, grown_ns;
} mw_trace_open_t;
size_t mw_trace_open_calls(const mw_model_t *m, mw_trace_open_t *out, size_t max);

/* Global start of a record of an entry. */
static inline uint64_t mw_trace_rec_start(const mw_trace_rank_t *t, const mw_trace_rec_t *r)
{
    return t->base_ns + (uint64_t)r->start_ns; /* modulo 2^64: a negative start goes back */
}

#endif
