/* trace.h: the shim's per-call trace (docs/trace.md): the per-thread record ring the wrappers
 * append to, the communicator table, and what the sender thread does with them.
 *
 * DESIGN: with MPIWATCH_TRACE=on (the default) every timed call also appends one raw record
 * (mw_trec_t, 48 bytes) to its thread's ring: a single-producer single-consumer ring of
 * MPIWATCH_TRACE_RING records, written only by its thread and read only by the sender thread.
 * The producer stores the record, then publishes `head` with release order; the consumer reads
 * `head` with acquire, reads the records, then publishes `tail`. A full ring drops the record
 * and counts it (the window is then sent as summary only, reason ring full). No lock, no
 * allocation, no system call on the application's threads.
 *
 * The sender thread drains the rings window by window (a record belongs to the window holding
 * its end, like the summary's counts), converts ticks to global ns, stamps channel indices
 * (docs/trace.md "Matching"), encodes the window (proto/mw_trace.h) into the flight recorder
 * (the encoded windows of the last MPIWATCH_TRACE_HISTORY windows) and sends it with the
 * window's sample when the job's plan (mpiwatch.trace, set by the collector) includes it, or
 * later when a capture reaches back to it.
 */
#ifndef MW_TRACE_SHIM_H
#define MW_TRACE_SHIM_H

#include <mpi.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "mw_trace.h"

/* MPIWATCH_TRACE_RING: records per thread ring (rounded up to a power of two). */
#define MW_TRACE_RING_DEFAULT 32768u
#define MW_TRACE_RING_MIN 1024u
#define MW_TRACE_RING_MAX (1u << 22) /* 192 MiB of address space per thread, touched on use */

/* One raw record as a wrapper writes it. Times in ticks of the shim's timer; the sender
 * converts. comm is an index into the communicator table (0: none). */
typedef struct {
    uint64_t t0, t1;
    uint64_t bytes;
    int32_t peer; /* world rank, -1 none, MW_TRACE_ANY; for a collective the root */
    int32_t tag;  /* for a collective: its instance on comm (low 32 bits) */
    uint32_t req; /* request number (posts, completions), 0 none */
    uint32_t comm;
    uint16_t fn;
    uint8_t kind, flags; /* MW_TK_*, MW_TF_* */
    uint32_t spare;
} mw_trec_t;
_Static_assert(sizeof(mw_trec_t) == 48, "a raw trace record is 48 bytes");

/* One thread's ring (allocated at init for max_threads threads, touched on use). The first
 * cache line is the producer's (head and its private state), the second the consumer's. */
typedef struct mw_tring {
    _Atomic uint64_t head; /* records written (producer) */
    /* producer-private (the thread's own trace state, trace_calls.c) */
    uint32_t tidx;    /* thread index */
    uint32_t req_seq; /* request numbers handed out by this thread */
    void *tstate;     /* request map and status scratch (trace_calls.c) */
    char pad0[40];
    _Atomic uint64_t tail; /* records consumed (sender) */
    uint64_t lost;         /* producer: records dropped because the ring was full */
    char pad1[48];
    mw_trec_t rec[]; /* mw__trace.ring_size entries, a power of two */
} mw_tring_t;
_Static_assert(offsetof(mw_tring_t, tail) == 64, "producer and consumer lines apart");
_Static_assert(offsetof(mw_tring_t, rec) == 128, "records start on their own line");

typedef struct {
    int on;                    /* MPIWATCH_TRACE */
    uint32_t ring_size;        /* records per thread ring (power of two) */
    unsigned history;          /* windows kept encoded (flight recorder) */
    unsigned char *rings;      /* max_threads rings */
    size_t ring_bytes;         /* bytes of one ring */
    _Atomic uint32_t next_req; /* unused: request numbers are per thread (trace_calls.c) */
    unsigned nrings;           /* rings mapped (max_threads) */
    unsigned req_shift;        /* request number = thread index << req_shift | sequence */
} mw_trace_global_t;

extern mw_trace_global_t mw__trace;

static inline mw_tring_t *mw__tring(unsigned thread_index)
{
    return (mw_tring_t *)(mw__trace.rings + (size_t)thread_index * mw__trace.ring_bytes);
}

/* record.c: maps the rings (inside mw__alloc, when mw__trace.on); on failure tracing is off. */
int mw__trace_alloc(unsigned max_threads);
/* trace_calls.c: bytes of a thread's trace state (request map, status scratch), placed after
 * its ring in the same mapping. */
size_t mw__tstate_bytes(void);

/* Appends one record to ring r (the calling thread's own). Inline, no branch but "full". */
static inline __attribute__((always_inline)) void mw__trace_put(mw_tring_t *r, const mw_trec_t *x)
{
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    /* acquire: pairs with the sender's release of tail, so that its reads of a slot are done
     * before the slot is written again (a plain load on x86) */
    uint64_t tl = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (__builtin_expect(h - tl >= mw__trace.ring_size, 0)) {
        r->lost++;
        return;
    }
    r->rec[h & (mw__trace.ring_size - 1)] = *x;
    atomic_store_explicit(&r->head, h + 1, memory_order_release);
}

/* ---- communicators (trace_comm.c) ----------------------------------------------------------
 * A table of the communicators this rank belongs to, filled when they are created (the
 * creating wrappers call mw__comm_created) and found on the hot path through
 * mw__comm_index(): a map indexed by PMPI_Comm_c2f() (Open MPI's small indices map directly;
 * MPICH's large handles are folded, with the key checked). Each entry holds the job-wide id,
 * the collective instance counter (incremented when a collective starts, in every state of
 * the library so that every member counts the same), this rank's rank and the size.
 * Entries are append-only (index 1 MPI_COMM_WORLD, 2 MPI_COMM_SELF): the sender thread reads
 * entries 1..mw__comm_count() once the count says they are complete. */
typedef struct {
    uint64_t id, parent;
    uint64_t created_ns;
    _Atomic uint64_t instance; /* collectives started on it so far */
    uint32_t rank, size, remote_size;
    uint16_t fn;
    uint16_t flags;  /* MW_COMM_* */
    int32_t *world;  /* world rank of each member (of the remote group for an inter-communicator;
                      * shared between communicators of one group); NULL: identity (WORLD) */
    uint32_t nworld; /* entries of world */
    uint32_t pad_;
} mw_comm_t;

#define MW_COMM_MAP 8192u               /* map slots (a power of two) */
#define MW_COMM_MAX 65536u              /* entries: communicators created in the run */
#define MW_COMM_PROBE 16u               /* slots probed before giving up */
#define MW_COMM_WORLD_BYTES (64u << 20) /* member arrays at most (beyond: no translation) */
#define MW_NOROOT (-1)

extern _Atomic uint64_t *mw__comm_map; /* (u32 key << 32) | entry index; 0 empty */
extern mw_comm_t *mw__comms;
extern _Atomic uint32_t mw__ncomms; /* entries used, index 0 included */

static inline uint32_t mw__comm_slot(uint32_t key)
{
    return (key ^ (key >> 20)) & (MW_COMM_MAP - 1);
}

/* Index of comm's entry (0: not known; the call is then traced without a communicator). */
static inline uint32_t mw__comm_index(MPI_Comm comm)
{
    if (comm == MPI_COMM_WORLD)
        return 1;
    if (comm == MPI_COMM_NULL || !mw__comm_map)
        return 0;
    uint32_t key = (uint32_t)PMPI_Comm_c2f(comm);
    uint32_t h = mw__comm_slot(key);
    for (unsigned i = 0; i < MW_COMM_PROBE; i++, h = (h + 1) & (MW_COMM_MAP - 1)) {
        uint64_t v = atomic_load_explicit(&mw__comm_map[h], memory_order_acquire);
        if (!v)
            return 0;
        if ((uint32_t)(v >> 32) == key)
            return (uint32_t)v;
    }
    return 0;
}
mw_comm_t *mw__comm_entry(uint32_t index);
/* World rank of `rank` in entry e, -1 when out of range / unknown. */
static inline int32_t mw__comm_world(const mw_comm_t *e, int rank)
{
    if (rank < 0)
        return -1;
    if (!e->world)
        return (uint32_t)rank < e->nworld ? rank : -1;
    return (uint32_t)rank < e->nworld ? e->world[rank] : -1;
}
/* The world rank of `rank` of the communicator of entry `index` (-1 unknown). */
static inline int32_t mw__comm_peer(uint32_t index, int rank)
{
    return index ? mw__comm_world(&mw__comms[index], rank) : -1;
}
/* A collective starts on the communicator of entry `index`: its instance number. Collectives
 * on one communicator are ordered by the application (MPI requires it), so a load and a
 * store suffice. */
static inline uint64_t mw__coll_start(uint32_t index)
{
    if (!index)
        return 0;
    _Atomic uint64_t *c = &mw__comms[index].instance;
    uint64_t v = atomic_load_explicit(c, memory_order_relaxed);
    atomic_store_explicit(c, v + 1, memory_order_relaxed);
    return v;
}
/* At init (tracing on): the table with MPI_COMM_WORLD and MPI_COMM_SELF. 0, or -1 (no memory:
 * tracing off). */
int mw__comm_init(void);
/* How a communicator was made (the wrappers' trace kinds, proto/mpi_functions.def). */
enum { MW_MADE_CREATE, MW_MADE_IDUP, MW_MADE_GROUP, MW_MADE_INTER, MW_MADE_EXTERN };
/* After a successful creating call (fn) on the parent of entry `parent` (0 unknown), whose
 * instance number was taken when the call started: registers newcomm. `tag` and `group`
 * serve MW_MADE_GROUP / MW_MADE_INTER. Returns its index (0: not registered). */
uint32_t mw__comm_created(uint32_t parent, uint64_t instance, MPI_Comm newcomm, unsigned fn,
                          int made, int tag);
/* MPI_Comm_free / MPI_Comm_disconnect succeeded on the handle whose PMPI_Comm_c2f() was key
 * (read before the call; -1 none). */
void mw__comm_freed(int64_t key);
/* Sender thread: the entries 1..mw__comm_count() are complete. */
unsigned mw__comm_count(void);
/* Counters for MPIWATCH_VERBOSE at finalize. */
void mw__comm_log(void);

/* ---- requests and completions (trace_calls.c) --------------------------------------------- */
/* A request posted: a new request number (0 when the thread's map is full: counted), its
 * pattern kept until Wait/Test completes it. Persistent requests (persist = 1) stay in the map
 * until MPI_Request_free; MPI_Start / MPI_Startall post them. */
uint32_t mw__req_post(struct mw_tring *r, MPI_Request req, unsigned kind, uint32_t comm,
                      int32_t peer, int32_t tag, uint64_t bytes, int persist);
/* The trace peer and flags of a point-to-point argument: MPI_PROC_NULL (flagged),
 * MPI_ANY_SOURCE (MW_TRACE_ANY), else the world rank through the communicator table. */
static inline int32_t mw__tr_rank(uint32_t comm, int rank, uint8_t *flags)
{
    if (rank == MPI_PROC_NULL) {
        *flags |= MW_TF_PROC_NULL;
        return -1;
    }
    if (rank == MPI_ANY_SOURCE)
        return MW_TRACE_ANY;
    return mw__comm_peer(comm, rank);
}
static inline int32_t mw__tr_tag(int tag)
{
    return tag == MPI_ANY_TAG ? MW_TRACE_ANY : tag;
}
/* Counters for MPIWATCH_VERBOSE at finalize. */
void mw__tcalls_log(void);

/* ---- the sender thread's side (trace_send.c, docs/trace.md "Flight recorder, plans and
 * captures") ---------------------------------------------------------------------------------
 * After mw__collect(k) the sender drains every ring of the records ending in windows <= k,
 * numbers their channels, checks their count against the sample's timed calls and keeps the
 * encoded window in the flight recorder; it then asks which windows travel and how. */
#include "mw_proto.h"
/* At the sender's start: the flight recorder and the plan (MPIWATCH_TRACE_HISTORY,
 * MPIWATCH_TRACE_HISTORY_MB, MPIWATCH_TRACE_PLAN). Returns 0 (tracing may still be off), or
 * -1 (no memory: tracing is off). */
int mw__trace_send_init(void);
/* 1 when the sender traces (MPIWATCH_TRACE=on and the rings exist). */
int mw__trace_enabled(void);
/* Window k was collected; `timed` is its sample's count of timed calls. */
void mw__trace_collect(int64_t k, uint64_t timed);
/* Fills the Trace of window k's sample (records when the plan or a capture wants it, else its
 * summary-only mark). Returns 1 when set, 0 when not tracing. */
int mw__trace_sample(int64_t k, uint64_t timed, Mpiwatch__Trace *tr);
/* The sample did not fit one message with its records: tr becomes summary only. */
void mw__trace_unsent(Mpiwatch__Trace *tr, uint64_t timed);
/* mpiwatch.trace=PLAN (steer.c). Returns 0, or -1 when refused (counted). A plan
 * `every:P:B@K/G` defers its bursts: their samples say MW_TRACE_WHY_DEFERRED and this rank
 * queues the burst [s, s + B) for mw__trace_reach_next() after collecting window
 * s + B + rank mod G (the flight recorder grows to B + G windows, at most 1024). */
int mw__trace_plan_request(const char *value);
/* Queues the deferred burst windows not sent yet (at finalize, before the bye). */
void mw__trace_flush_deferred(void);
/* mpiwatch.capture=N@K (capture.c): windows [first, first + n) with request id `id`; those
 * still in the flight recorder are queued for mw__trace_reach_next(), the later ones go
 * traced with their samples. Returns 1 when some window was taken, 0 otherwise. */
int mw__trace_capture(uint64_t first, uint64_t n, uint64_t id);
/* The next queued reach-back window as a Trace (records point into the flight recorder, valid
 * until the next collection). Returns 1, or 0 when none is left. */
int mw__trace_reach_next(Mpiwatch__Trace *tr);
/* The communicator definitions not yet sent, at most a sample's worth: *out, and the count;
 * they are table entries [*from, *upto). mw__trace_comms_sent(upto) once a message carrying
 * them was handed to ZeroMQ (or queued), mw__trace_comms_lost(from) when it was dropped. */
unsigned mw__trace_comms(Mpiwatch__CommDef ***out, unsigned *from, unsigned *upto);
void mw__trace_comms_sent(unsigned upto);
void mw__trace_comms_lost(unsigned from);
/* Counters for MPIWATCH_VERBOSE at finalize. */
void mw__trace_log(void);

#endif
