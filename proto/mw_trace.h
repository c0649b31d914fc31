/* mw_trace.h: per-call trace records, their wire encoding and message matching (docs/trace.md).
 *
 * DESIGN: a rank's trace of one window travels as one Trace message whose `records` field is
 * a block of columns (one column per field, each value a varint: starts as deltas from the
 * previous record, signed fields zigzagged), optionally compressed with zstd as a whole. The
 * shim encodes, the collector checks (decodes once, counts, keeps the bytes as they came), the
 * viewer, the exports and the analysis decode. Every size the block claims is capped before
 * anything is allocated: MW_TRACE_MAX_RECORDS records, MW_TRACE_MAX_RAW_BYTES of columns.
 *
 * Matching needs no state beyond the records: each send carries the index of its message on
 * its channel (communicator, source, destination, tag) in the sender's posting order, each
 * receive the index of the message it got, stamped by the receiving rank once MPI's
 * non-overtaking order fixes it. A send and a receive match when channel and index are equal,
 * so window edges, budget gaps and ranks traced at different times never cause a mismatch:
 * a receive whose send was not traced stays unmatched and is reported as such.
 */
#ifndef MW_TRACE_H
#define MW_TRACE_H

#include <stddef.h>
#include <stdint.h>

/* Caps a reader applies before allocating (one Trace message). */
#define MW_TRACE_MAX_RECORDS (1u << 20)
#define MW_TRACE_MAX_RAW_BYTES (64u << 20)

/* Trace.state */
enum { MW_TRACE_EXACT = 1, MW_TRACE_SUMMARY_ONLY = 2 };
/* Trace.reason */
enum { MW_TRACE_WHY_BUDGET = 1, MW_TRACE_WHY_RING_FULL = 2, MW_TRACE_WHY_NOT_ASKED = 3 };
/* Set by the collector only, in Window.traces: it refused the rank's records (a check failed,
 * or a cap; docs/trace.md "The job's budget (collector)"), the window is summary only there. */
enum { MW_TRACE_WHY_REFUSED = 4 };
/* Sent by a rank under a plan `every:P:B@K/G` for a window of a burst: the window is traced but
 * its records travel later, as an Envelope.trace a few windows on (docs/trace.md "Flight
 * recorder, plans and captures"); until they arrive the rank is summary only here. */
enum { MW_TRACE_WHY_DEFERRED = 5 };
/* Trace.encoding */
enum { MW_TRACE_ENC_COLUMNS = 1, MW_TRACE_ENC_ZSTD = 2 };
/* Trace.flags */
#define MW_TRACE_SEQ_UNRELIABLE 1u
/* CommDef.flags */
#define MW_COMM_INTER 1u
#define MW_COMM_EXTERNAL 2u
#define MW_COMM_GROUP_HASH 4u
/* Well-known communicator ids. */
#define MW_COMM_ID_WORLD 1ull
#define MW_COMM_ID_SELF 2ull

/* What a record is. A call is one record, except MPI_Sendrecv(_replace), which is a SEND and a
 * RECV record with the same times, the second flagged MW_TF_PART (not a call of its own).
 * Completions of requests are records of their own, at the end of the completing call, with
 * duration 0 and the completing call's function (MPI_Wait, MPI_Testsome, ...). */
enum {
    MW_TK_CALL = 0,      /* a call without a message (bytes may be set: RMA, I/O) */
    MW_TK_SEND = 1,      /* blocking send: peer = destination, tag, bytes, seq */
    MW_TK_RECV = 2,      /* blocking receive: peer = actual source, tag = actual tag, bytes
                          * received, seq */
    MW_TK_ISEND = 3,     /* post of a non-blocking or persistent send: as SEND, plus req */
    MW_TK_IRECV = 4,     /* post of a non-blocking receive: peer and tag as asked (MW_TRACE_ANY
                          * for MPI_ANY_SOURCE / MPI_ANY_TAG), bytes 0, req */
    MW_TK_SEND_DONE = 5, /* completion of the ISEND with the same req */
    MW_TK_RECV_DONE = 6, /* completion of the IRECV with the same req: actual peer, tag,
                          * bytes, seq */
    MW_TK_COLL = 7,      /* blocking collective: comm, peer = root's world rank (-1 none),
                          * seq = its instance on comm, bytes */
    MW_TK_ICOLL = 8,     /* post of a non-blocking collective: as COLL, plus req */
    MW_TK_COLL_DONE = 9, /* completion of the ICOLL with the same req */
    MW_TK_COUNT
};

/* Record flags */
#define MW_TF_PART 1u      /* second record of one call (Sendrecv's receive) */
#define MW_TF_CANCELLED 2u /* a completion of a cancelled request: no message */
#define MW_TF_UNORDERED 4u /* posted on a channel also used by another thread: no MPI order */
#define MW_TF_NOSEQ 8u     /* no channel index (lost records, external communicator) */
/* MW_TF_OPEN: still in progress when the window was sent: dur is so far; the call's own record
 * comes with the window it ends in. */
#define MW_TF_OPEN 16u
#define MW_TF_PROC_NULL 32u /* peer was MPI_PROC_NULL: no message */

#define MW_TRACE_ANY (-2) /* MPI_ANY_SOURCE / MPI_ANY_TAG in an IRECV post */

typedef struct {
    int64_t start_ns; /* from the window's start (negative: the call began in an earlier one) */
    uint64_t dur_ns;
    uint64_t comm;   /* job-wide communicator id (CommDef.id), 0 none */
    uint64_t seq;    /* message index on its channel, or collective instance on comm */
    uint64_t bytes;  /* payload this rank handed to / got from MPI */
    uint32_t req;    /* request number on the rank (posts and their completions), 0 none */
    uint32_t thread; /* thread index on the rank, 0 = the thread that called MPI_Init */
    int32_t peer;    /* world rank: destination, actual source or root; -1 none */
    int32_t tag;     /* message tag; 0 for collectives */
    uint16_t fn;     /* function id (proto/mpi_functions.def) */
    uint8_t kind;    /* MW_TK_* */
    uint8_t flags;   /* MW_TF_* */
} mw_trace_rec_t;

/* A call: every kind but the completions, the second halves and calls still in progress. */
static inline int mw_trace_is_call(const mw_trace_rec_t *r)
{
    return !(r->flags & (MW_TF_PART | MW_TF_OPEN)) && r->kind != MW_TK_SEND_DONE &&
           r->kind != MW_TK_RECV_DONE && r->kind != MW_TK_COLL_DONE;
}
/* A record that sends / receives one message (for matching). */
static inline int mw_trace_is_send(const mw_trace_rec_t *r)
{
    return (r->kind == MW_TK_SEND || r->kind == MW_TK_ISEND) &&
           !(r->flags & (MW_TF_PROC_NULL | MW_TF_NOSEQ)) && r->peer >= 0;
}
static inline int mw_trace_is_recv(const mw_trace_rec_t *r)
{
    return (r->kind == MW_TK_RECV || r->kind == MW_TK_RECV_DONE) &&
           !(r->flags & (MW_TF_PROC_NULL | MW_TF_NOSEQ | MW_TF_CANCELLED)) && r->peer >= 0;
}

/* ---- encoding ---------------------------------------------------------------------------- */

/* Encodes n records into a fresh malloc'ed block (*out, *out_len): the columns, compressed with
 * zstd level `zstd_level` when zstd_level > 0 and n >= `zstd_min`. Sets *encoding
 * (MW_TRACE_ENC_*) and *raw_bytes (column bytes before compression). Returns 0, or -1 (no
 * memory, n over the cap, a record a decoder would refuse: kind >= MW_TK_COUNT, fn 0 or
 * >= MW_FN_SPACE). Thread safe; keeps one zstd context per calling thread. */
int mw_trace_encode(const mw_trace_rec_t *recs, size_t n, int zstd_level, size_t zstd_min,
                    uint8_t **out, size_t *out_len, uint32_t *encoding, uint64_t *raw_bytes);

/* Decodes a block into a fresh malloc'ed array (*out, *n). `count`, `encoding` and `raw_bytes`
 * are the Trace message's fields: the block must hold exactly `count` records and, when
 * compressed, decompress to exactly `raw_bytes`. Returns 0, or -1 with a static reason in
 * *why (never crashes, allocates at most what the caps allow). */
int mw_trace_decode(const uint8_t *data, size_t len, uint32_t encoding, uint64_t raw_bytes,
                    uint32_t count, mw_trace_rec_t **out, size_t *n, const char **why);

/* ---- matching ---------------------------------------------------------------------------- */

/* One rank's records, as the matcher sees them (a window or a range of windows). */
typedef struct {
    uint32_t rank; /* world rank */
    const mw_trace_rec_t *recs;
    size_t n;
    int64_t base_ns; /* added to start_ns to put the records on one time axis (window start) */
} mw_trace_part_t;

/* A matched message: the send record and the receive record (part index, record index). */
typedef struct {
    uint32_t send_part, recv_part;
    uint32_t send_rec, recv_rec;
} mw_trace_match_t;

/* All ranks' records of one collective instance (communicator, instance). */
typedef struct {
    uint64_t comm, seq;
    uint32_t first, n; /* members first .. first + n - 1 of mw_trace_matches_t.coll_members:
                        * member j is (part, record) = coll_members[2 * (first + j)],
                        * coll_members[2 * (first + j) + 1] */
    uint16_t fn;
    uint8_t consistent; /* same function and root on every member */
} mw_trace_coll_t;

typedef struct {
    mw_trace_match_t *msgs;
    size_t nmsgs;
    uint64_t sends_unmatched, recvs_unmatched; /* their partner was not in the range */
    uint64_t duplicates;                       /* the same channel index twice: not matched */
    mw_trace_coll_t *colls;
    size_t ncolls;
    uint32_t *coll_members; /* pairs (part, record) flattened: 2 entries per member */
    uint64_t coll_inconsistent;
} mw_trace_matches_t;

/* Matches every send to the receive with the same channel and index, and groups collective
 * records by (communicator, instance); records with MW_TF_OPEN are left out (docs/trace.md
 * "Matching"). O(records log records) whatever the records. Returns 0, or -1 (no memory, more
 * than 2^32 records). */
int mw_trace_match(const mw_trace_part_t *parts, size_t nparts, mw_trace_matches_t *out);
void mw_trace_matches_free(mw_trace_matches_t *m);

#endif
