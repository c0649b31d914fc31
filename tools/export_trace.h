/* export_trace.h: the traced windows of a recording, gathered for mpiwatch-export's per-call
 * formats: --format trace (JSON lines, export_trace.c), --format logical (CSV, one row per
 * communication event with its logical step and lateness) and --format otf2 (export_otf2.c).
 *
 * Both formats need every traced record of the recording at once (records are sorted per
 * rank and thread, and messages are matched across windows), so unlike the other formats
 * these two hold the decoded records in memory: about 56 bytes per record.
 */
#ifndef MW_EXPORT_TRACE_H
#define MW_EXPORT_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "mw_logical.h"
#include "mw_proto.h"
#include "mw_trace.h"

/* One rank's exact trace of one window. */
typedef struct {
    uint32_t rank;
    uint64_t window;
    int64_t base_ns;      /* global ns of the window's start: record start_ns are relative */
    uint32_t trace_flags; /* Trace.flags */
    uint8_t reach_back;   /* from a reach-back Envelope.trace, not from Window.traces */
    mw_trace_rec_t *recs;
    size_t n;
} mw__xt_part_t;

/* A communicator as its members' definitions describe it. */
typedef struct {
    uint64_t id;
    uint64_t parent;
    uint32_t size;      /* members (the local group of an inter-communicator) */
    uint32_t flags;     /* MW_COMM_* of the first definition */
    uint32_t fn;        /* the function that created it */
    uint32_t known;     /* members whose definition arrived */
    uint32_t *world;    /* world rank of each member, by rank in the communicator; UINT32_MAX
                         * for a member whose definition did not arrive; NULL for SELF */
    uint32_t *by_world; /* member ranks sorted by world rank (known members only) */
    uint8_t conflict;   /* members disagree (size, flags, two world ranks for one member) */
    uint8_t bad_world;  /* a member's world rank is not a rank of the job, or two members have
                         * the same world rank: its group cannot be written */
} mw__xt_comm_t;

/* A merged window of the recording and what is exact in it. */
typedef struct {
    uint64_t index;
    uint64_t start_ns;
    uint32_t ranks_reporting, ranks_missing;
    uint32_t exact;         /* ranks with an exact trace, reach-back ones included */
    uint64_t left_out;      /* timed calls of ranks whose trace is not exact */
    uint32_t summary_first; /* its non-exact ranks: summary[summary_first .. + n_summary) */
    uint32_t n_summary;
} mw__xt_window_t;

/* A rank of a window whose trace was not exact (state SUMMARY_ONLY, or no Trace at all). */
typedef struct {
    uint32_t rank;
    uint32_t reason; /* Trace.reason; 0 when the rank sent no trace (tracing off) */
    uint64_t left_out;
    uint8_t exact_later; /* a reach-back trace of this window made it exact after all */
} mw__xt_summary_t;

typedef struct {
    Mpiwatch__JobInfo *job; /* the last job description, NULL when the recording has none */
    uint32_t size;          /* job size (or the highest rank seen + 1) */

    mw__xt_part_t *parts; /* sorted by rank, then window */
    size_t nparts, cap_parts;
    mw__xt_comm_t *comms; /* sorted by id; WORLD and SELF first */
    size_t ncomms, cap_comms;
    mw__xt_window_t *windows; /* in recording order */
    size_t nwindows, cap_windows;
    mw__xt_summary_t *summary;
    size_t nsummary, cap_summary;

    uint64_t records;          /* records in parts */
    uint64_t reach_back;       /* reach-back traces folded in */
    uint64_t duplicates;       /* traces of a (rank, window) already present, left out */
    uint64_t bad_traces;       /* traces that did not decode (reason in the first warning) */
    uint64_t bad_comms;        /* communicator definitions refused (sizes, ranks) */
    uint64_t conflict_comms;   /* communicators whose members disagree */
    uint64_t bad_world_comms;  /* communicators with bad_world set */
    uint64_t windows_partial;  /* windows with some ranks exact and some not */
    uint64_t windows_untraced; /* windows with no rank exact */
    int truncated;             /* the file ends with a torn frame */
} mw__xt_t;

/* Reads every traced window of a recording into *x (zeroed first). Returns 0, 1 on a read
 * error or out of memory, 2 when the input is missing or not a recording (exit statuses);
 * messages go to stderr. */
int mw__xt_load(mw__xt_t *x, const char *path);
void mw__xt_free(mw__xt_t *x);

/* The communicator with job-wide id `id`, or NULL. */
const mw__xt_comm_t *mw__xt_comm(const mw__xt_t *x, uint64_t id);
/* The rank in communicator c of world rank w, or -1 when w is not a known member. */
int64_t mw__xt_comm_rank(const mw__xt_comm_t *c, uint32_t w, uint32_t size);

/* Prints the warning about the windows that are not (all) traced, and the other counts. */
void mw__xt_warn(const mw__xt_t *x);

/* A record's global start and end in ns (saturated: records come from the network). */
void mw__xt_times(const mw__xt_part_t *p, const mw_trace_rec_t *r, int64_t *t0, int64_t *t1);

/* The name of a record kind ("send", "irecv", ...). */
const char *mw__xt_kind_name(unsigned kind);

/* ---- the record walk both per-call formats share ------------------------------------------ */

/* A record of x->parts[part].recs[rec] with its global start and end. */
typedef struct {
    int64_t t0, t1;
    uint32_t rank, thread;
    uint32_t part, rec;
} mw__xt_ref_t;

enum {
    MW__XT_BY_START = 0, /* rank, start, thread, part, record: the trace lines */
    MW__XT_BY_THREAD = 1 /* rank, thread, start, the longer first, part, record: OTF2's
                          * locations, where a call contains the records it completes */
};

/* The records of parts [first, last) in a fresh array (*out, *n), sorted in `order`. With
 * skip_open, records of calls still in progress (MW_TF_OPEN) are left out and counted in
 * *open. Returns 0, or -1 when out of memory. */
int mw__xt_refs(const mw__xt_t *x, size_t first, size_t last, int order, int skip_open,
                mw__xt_ref_t **out, size_t *n, uint64_t *open);

/* What the formats add to each record, by its flat index off[part] + rec. */
typedef struct {
    size_t *off; /* nparts + 1 entries */
    size_t total;
    /* MW__XT_MATCH: mw_trace_match over the whole recording */
    mw_trace_matches_t m;
    int64_t *match, *coll; /* message / collective instance of a record, -1 */
    /* MW__XT_LOGICAL: the traced windows pushed in window order through one
     * mw_logical_stream (docs/logical.md): steps, lateness, partitions */
    mw_logical_event_t *events; /* in the order the stream finalized them */
    size_t nevents;
    int64_t *event; /* index into events of a record that is an event, -1 */
    mw_logical_partition_t *lparts;
    size_t nlparts;
    mw_logical_stats_t lstats;
    uint64_t lost_events; /* events whose (window, rank, record) names no record (none) */
    uint64_t *pushed;     /* the windows pushed, as ranges: pushed[2i] .. pushed[2i + 1] */
    size_t npushed;       /* ranges */
} mw__xt_index_t;

#define MW__XT_MATCH 1u
#define MW__XT_LOGICAL 2u

/* Builds what `what` asks for. Returns 0, or -1 when out of memory (or the stream refused a
 * window: a message on stderr). */
int mw__xt_index(const mw__xt_t *x, unsigned what, mw__xt_index_t *ix);
void mw__xt_index_free(mw__xt_index_t *ix);

/* --format trace: every record as a JSON line, communication events with their logical step
 * and lateness (docs/export.md). Returns the exit status. */
/* --no-leap: the logical steps of trace, logical and otf2 without the leap merge (set by
 * export.c before an export; docs/logical.md). */
extern int mw__export_no_leap;

int mw__export_trace(const char *input, const char *output);

/* --format logical: one CSV row per communication event (docs/export.md). Returns the exit
 * status. */
int mw__export_logical(const char *input, const char *output);

#endif
