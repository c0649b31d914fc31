/* mw_logical.h: logical structure and lateness of traced MPI calls (Ravel's method, online).
 *
 * DESIGN (docs/logical.md): from per-call trace records (mw_trace.h) with matched messages and
 * collective instances, every communication event gets a logical step from the happened-before
 * relation, and a lateness: how much later it completed than the earliest related event at the
 * same step. Two phases, as in the paper:
 *   1. partitions: a matched send and its receive, and all members of one collective instance,
 *      start in one partition; partitions that form a cycle in the order of each rank's events
 *      are merged; optionally (MW_LOGICAL_LEAP, on by default) partitions are merged until each
 *      rank is active in each (bulk-synchronous codes);
 *   2. steps inside each partition (happened-before kept, sends first, least step possible),
 *      global steps from the partition order.
 * Differential lateness = lateness minus the largest lateness among the event's predecessors
 * (the previous event on its rank and, for a receive, the matched send): it is non-zero where
 * a delay starts, zero where it only propagates.
 *
 * Events are the records that communicate: SEND, ISEND (the post: the message leaves then),
 * RECV, RECV_DONE (the completion: the message arrived then), the second half of a Sendrecv
 * (its receive) and collectives (COLL; ICOLL at its post, completed at its COLL_DONE). Every
 * other record (IRECV posts, send completions, calls without a message) is part of the
 * aggregated non-communication time before the next event of its rank.
 *
 * The library does no I/O and keeps no global state. The stream (mw_logical_stream_*) is the
 * one way windows are analysed online (collector), live (viewer) and from recordings
 * (exports): the same windows pushed in the same order give the same steps, by construction.
 * Every size is capped (MW_LOGICAL_MAX_*): over a cap the stream finalizes what it holds early
 * and counts it, it never grows without bound. O(events log events) per push.
 */
#ifndef MW_LOGICAL_H
#define MW_LOGICAL_H

#include "mw_trace.h"

#include <stddef.h>
#include <stdint.h>

/* Caps: events one stream holds unfinished, windows it keeps pending. */
#define MW_LOGICAL_MAX_PENDING_EVENTS (4u << 20)
#define MW_LOGICAL_MAX_PENDING_WINDOWS 8u
/* Distinct ranks a stream keeps state for (a push that would exceed it fails). */
#define MW_LOGICAL_MAX_RANKS (1u << 20)

/* Differential lateness under this is noise (message transit, timer and scheduling jitter): it
 * is reported in diff_ns as it is but makes no event an origin of delay (class compute or call),
 * and lateness under it makes no event late (class none). The default of
 * mw_logical_opts_t.noise_floor_ns, so that the collector, the viewer and the exports give the
 * same classes; measured on the pattern jobs in docs/logical.md ("Noise floor"). */
#define MW_LOGICAL_NOISE_FLOOR_NS 1000000

/* Options (mw_logical_opts_t.flags) */
#define MW_LOGICAL_LEAP 1u /* merge partitions until every rank is active in each (default) */

/* Event kinds (mw_logical_event_t.kind) */
enum { MW_LE_SEND = 1, MW_LE_RECV = 2, MW_LE_COLL = 3 };

/* Lateness classes (mw_logical_event_t.cls): where an event's lateness comes from. The four
 * situations of the paper's classification are the four non-zero values. With L = lateness,
 * D = differential lateness, P = lateness of the previous event on the rank, M = lateness of
 * the message (matched send; for a completion, the latest send its completing call waited
 * for), S = start minus the earliest start at (partition, step) (docs/logical.md):
 * none: L = 0; rank: L > 0, D = 0, P >= M; message: L > 0, D = 0, M > P;
 * compute: D > 0, S > max(P, M); call: D > 0, S <= max(P, M); where "> 0" means "at least the
 * noise floor F" and "= 0" "under F" (with F = 1 ns, as written). */
enum {
    MW_LATE_NONE = 0,    /* on time: lateness 0 */
    MW_LATE_RANK = 1,    /* inherited from the previous event on its rank (propagated) */
    MW_LATE_MESSAGE = 2, /* inherited from the matched send: waited for a late sender */
    MW_LATE_COMPUTE = 3, /* originates here: the computation before the call took longer than
                          * its peers' (it began late) */
    MW_LATE_CALL = 4,    /* originates here: the call itself took longer than its peers' */
    MW_LATE_COUNT
};

typedef struct {
    uint32_t flags;     /* MW_LOGICAL_* (0 = no leap merge) */
    uint64_t step_base; /* global step of the first step of a fresh stream (normally 0) */
    /* Smaller caps than the defaults (0 = MW_LOGICAL_MAX_PENDING_EVENTS / _WINDOWS; larger
     * values are clamped to them): bound memory or delay further, or test the caps. */
    uint32_t max_pending_events, max_pending_windows;
    /* Noise floor of the classes (0 or negative = MW_LOGICAL_NOISE_FLOOR_NS; 1 = none: every
     * non-zero differential lateness is an origin). */
    int64_t noise_floor_ns;
} mw_logical_opts_t;

/* One analysed event. */
typedef struct {
    uint64_t window;        /* window the record came in */
    uint64_t step;          /* global logical step */
    int64_t start_ns;       /* call start on the stream's time axis (job time, ns) */
    int64_t end_ns;         /* completion (COLL: its end; ICOLL: its COLL_DONE's end) */
    int64_t lateness_ns;    /* end_ns minus the earliest end at (partition, step) */
    int64_t diff_ns;        /* differential lateness: lateness minus the inherited lateness
                             * (the largest of P and M, see the classes), 0 when negative */
    int64_t comp_before_ns; /* aggregated non-communication time since the previous event on
                             * its rank ended (0 for a rank's first event in the stream) */
    uint64_t partition;     /* partition id, unique in the stream */
    int64_t rank_prev;      /* event id (seq of mw_logical_event_t) of the previous event on
                             * its rank, -1 none */
    int64_t msg_peer;       /* for a matched send/receive: the event id of the other side, -1 */
    uint64_t id;            /* event id: consecutive in the order the stream finalizes */
    uint32_t rank;          /* world rank */
    uint32_t rec;           /* record index in that rank's trace of `window` */
    int32_t peer;           /* record's peer (world rank), -1 none */
    uint16_t fn;            /* function id */
    uint8_t kind;           /* MW_LE_* */
    uint8_t cls;            /* MW_LATE_* */
} mw_logical_event_t;

/* A finished partition. */
typedef struct {
    uint64_t id;
    uint64_t step_first, step_last; /* global steps it covers */
    uint64_t event_first, nevents;  /* its events: ids event_first .. (contiguous, see
                                     * mw_logical_batch_t.events, sorted by partition) */
    uint32_t ranks;                 /* ranks active in it */
    uint8_t forced;                 /* finalized early by a cap or a gap, not by its inputs
                                     * (a partner could still have come) */
} mw_logical_partition_t;

/* Summary of one step or one window: the largest lateness and differential lateness, where
 * they occur, and the time lost: sum over events of max(0, lateness - lateness of the
 * previous event on its rank) (each rank's own increase of lateness; docs/logical.md). */
typedef struct {
    uint64_t key; /* step (per-step summaries) or window index (per-window summaries) */
    uint64_t events;
    int64_t lateness_max_ns;
    int64_t diff_max_ns;
    int64_t lost_ns;
    uint32_t lateness_rank, diff_rank;
    uint16_t lateness_fn, diff_fn;
    uint64_t lateness_step, diff_step; /* step of the maxima (per-window summaries) */
} mw_logical_summary_t;

/* What one push finalized: events sorted by (partition, step, rank), their partitions, and
 * summaries per step and per window (a window's summary is complete once none of its events is
 * pending any more: `windows_done` lists those; a window that had no event still gets one). */
typedef struct {
    mw_logical_event_t *events;
    size_t nevents;
    mw_logical_partition_t *partitions;
    size_t npartitions;
    mw_logical_summary_t *steps;
    size_t nsteps;
    mw_logical_summary_t *windows; /* complete windows, in window order */
    size_t nwindows;
} mw_logical_batch_t;

/* Counters of a stream (all cumulative). */
typedef struct {
    uint64_t windows, events, partitions;
    uint64_t merged_cycles;   /* partitions merged because they formed a cycle */
    uint64_t merged_leap;     /* partitions merged by the leap rule */
    uint64_t forced;          /* partitions finalized early (cap, gap, end) */
    uint64_t gaps;            /* mw_logical_stream_gap calls (windows not analysed) */
    uint64_t unmatched;       /* send or receive events whose partner never came */
    uint64_t pending_events;  /* events held now */
    uint64_t pending_windows; /* windows held now */
    uint64_t dropped_ranks;   /* ranks of a window left out: alone it held more events than
                               * MW_LOGICAL_MAX_PENDING_EVENTS */
} mw_logical_stats_t;

typedef struct mw_logical_stream mw_logical_stream_t;

/* One rank's records of one window (decoded, as mw_trace_decode returns them). */
typedef struct {
    uint32_t rank;
    const mw_trace_rec_t *recs;
    size_t n;
} mw_logical_rank_t;

mw_logical_stream_t *mw_logical_stream_new(const mw_logical_opts_t *opts);
void mw_logical_stream_free(mw_logical_stream_t *s);

/* Adds the traced ranks of window `window` (starting at job time `start_ns`; the records'
 * start_ns are relative to it) and finalizes what the new window makes final into *out (which
 * the caller frees with mw_logical_batch_free; zeroed when nothing is final). Windows must come
 * in increasing order; a window after a hole (a window not pushed) is preceded by an implicit
 * gap. Ranks missing from a window are not traced there: messages to them stay unmatched.
 * Copies what it keeps. Returns 0, or -1 (no memory, windows out of order, a rank twice, a
 * rank with n records and no array or more than MW_TRACE_MAX_RECORDS, more than
 * MW_LOGICAL_MAX_RANKS ranks in the stream). */
int mw_logical_stream_push(mw_logical_stream_t *s, uint64_t window, int64_t start_ns,
                           const mw_logical_rank_t *ranks, size_t nranks, mw_logical_batch_t *out);

/* Nothing more will connect to what is pending (a hole in the windows, the end of the job):
 * finalizes everything held into *out. */
int mw_logical_stream_gap(mw_logical_stream_t *s, mw_logical_batch_t *out);

void mw_logical_stream_stats(const mw_logical_stream_t *s, mw_logical_stats_t *st);
void mw_logical_batch_free(mw_logical_batch_t *b);

const char *mw_logical_class_name(unsigned cls); /* "none", "rank", "message", "compute",
                                                  * "call"; "?" out of range */

#endif
