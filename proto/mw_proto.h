/* mw_proto.h: what every mpiwatch component shares about the wire.
 *
 * The protocol version, the size cap of one message, the MPI function table (ids, names and
 * kinds, expanded from proto/mpi_functions.def so that the library, the collector and the
 * viewer agree on every id) and an arena allocator that lets protobuf-c unpack a message
 * without one malloc per field.
 */
#ifndef MW_PROTO_H
#define MW_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "mpiwatch.pb-c.h"
#include "mw_fn_def.h"
#include "mw_limits.h"

#define MW_PROTO_VERSION 1u
#define MW_MAX_MESSAGE_BYTES (8u << 20) /* one envelope; larger frames are rejected unread */
#define MW_MAX_DURATION_BINS 192u       /* 48 octaves of 4 bins: 1 ns .. ~3 days (mw_bins.h) */
#define MW_MAX_SUBSLOTS 64u
/* Captures (docs/steering.md): windows one request may ask for, and traced calls one sample
 * may carry (all threads; ~45 wire bytes each at most, so a full sample stays far below
 * MW_MAX_MESSAGE_BYTES and its decoding within the collector's arena). */
#define MW_CAPTURE_MAX_WINDOWS 1000u
#define MW_CAPTURE_MAX_CALLS 65536u
/* Steering (docs/steering.md): both ends must agree on these. A request may carry a key of
 * 1..64 of [A-Za-z0-9._-], a value of at most 1024 bytes and at most 4096 ranks. The collector
 * never publishes a Steer larger than MW_STEER_MAX_MESSAGE bytes: a request whose rank list
 * would make it larger goes out as several Steers, each listing a part of the ranks (one seq).
 * A rank takes frames of up to MW_STEER_RANK_MAX_MESSAGE (ZMQ_MAXMSGSIZE; libzmq drops the
 * connection on a larger one), comfortably above what the collector sends. */
#define MW_STEER_MAX_KEY 64u
#define MW_STEER_MAX_VALUE 1024u
#define MW_STEER_MAX_RANKS 4096u
#define MW_STEER_MAX_MESSAGE 8192u
#define MW_STEER_RANK_MAX_MESSAGE (4u * MW_STEER_MAX_MESSAGE)

/* What kind of MPI call a function is; drives how bytes and peers are counted. */
typedef enum {
    MW_KIND_SEND,    /* point-to-point send (blocking or posted) */
    MW_KIND_RECV,    /* point-to-point receive or probe */
    MW_KIND_COLL,    /* collective, blocking or nonblocking */
    MW_KIND_WAIT,    /* completion: Wait*, Test* */
    MW_KIND_RMA,     /* one-sided */
    MW_KIND_IO,      /* MPI-IO */
    MW_KIND_QUERY,   /* local query, counted without timing */
    MW_KIND_OTHER,   /* everything else: setup, datatypes, communicators, ... */
    MW_KIND_SPECIAL, /* hand-written wrapper (Init, Finalize, Pcontrol, ...) */
    MW_KIND_COUNT
} mw_kind_t;

/* Function ids: MW_ID_<Name> for MPI_<Name>, from 1; MW_FN_COUNT is the largest id + 1 of this
 * build's table (mw_fn_def.h says which). Ids MW_FN_COUNT .. MW_FN_SPACE - 1 are the extras:
 * names of other MPIs' tables this process has met (mw_fnmap.h). Everything indexed by the
 * function ids of a JOB (the collector, the viewer, the tools) is sized MW_FN_SPACE; the
 * shim's own tables, which only ever hold its own ids, stay MW_FN_COUNT. */
enum {
    MW_ID_NONE = 0,
#define MW_FN(name, ret, kind, params, args, bytes, peer, fortran, trace) MW_ID_##name,
#include MW_FN_TABLE_DEF
#undef MW_FN
    MW_FN_COUNT
};
#define MW_FN_SPACE ((unsigned)MW_FN_COUNT + MW_FN_EXTRA)

/* Name of function id ("MPI_Allreduce"), extras included, or NULL when no function has it. */
const char *mw_fn_name(unsigned id);
/* Id of an MPI function name (this build's table or an extra), or 0 when it has none. */
unsigned mw_fn_id(const char *name);
mw_kind_t mw_fn_kind(unsigned id);
/* One past the largest id that names a function now: MW_FN_COUNT + the extras registered so
 * far. Every id a check lets through is below it (an id of an unregistered extra has no name). */
unsigned mw_fn_end(void);
const char *mw_kind_name(mw_kind_t kind);
/* Whether calls of function id are timed, and so traced by a capture: everything but the
 * local queries and the four counted special functions. */
int mw_fn_timed(unsigned id);
/* FNV-1a hash of this build's table's names in id order (mw_fn_names_hash): a hello without
 * names is understood when it carries this hash or the legacy table's (mw_fnmap.h). */
uint64_t mw_fn_table_hash(void);
/* Sets a hello's function table fields to this build's table (count, hash, every name and
 * kind; docs/function-table.md). The arrays are static and read-only: nothing to free. */
void mw_hello_set_table(Mpiwatch__Hello *h);

/* A bump allocator for protobuf-c unpacking. Memory comes from one block allocated at init;
 * mw_arena_reset() frees everything at once. When a message does not fit, allocation fails
 * and protobuf-c reports the message as undecodable, which is what an oversized message is. */
typedef struct {
    ProtobufCAllocator allocator; /* pass &arena->allocator to *_unpack() */
    unsigned char *base;
    size_t size;
    size_t used;
    size_t failed; /* allocations refused since the last reset */
} mw_arena_t;

/* The default collector endpoint of this user (mw_endpoint.c, docs/security.md): ipc://DIR/
 * collector, DIR = $XDG_RUNTIME_DIR/mpiwatch or /tmp/mpiwatch-UID, created with mode 0700 and
 * checked (a directory, not a symlink, owned by this user, no group or other permission).
 * Returns 0, or -1 with the reason in err (then there is no default). */
int mw_default_endpoint(char *ep, size_t eplen, char *err, size_t errlen);

int mw_arena_init(mw_arena_t *arena, size_t size);
void mw_arena_reset(mw_arena_t *arena);
void mw_arena_free(mw_arena_t *arena);

/* Unpacks one envelope from a frame into the arena (resetting it first). Returns NULL when the
 * frame is larger than MW_MAX_MESSAGE_BYTES or is not a valid encoding. Samples go through the
 * hand-written decoder of mw_decode.c, everything else (and anything it is not sure about)
 * through protobuf-c; the result is the same either way. MPIWATCH_DECODER=protobuf-c in the
 * environment makes every frame use protobuf-c (for benchmarks). */
Mpiwatch__Envelope *mw_envelope_decode(mw_arena_t *arena, const void *data, size_t len);

/* A copy of a job description on the heap that outlives the message it is part of (free it
 * with mpiwatch__job_info__free_unpacked). NULL when out of memory. */
Mpiwatch__JobInfo *mw_job_info_copy(const Mpiwatch__JobInfo *job);

/* The two decoders behind mw_envelope_decode(), for tests and benchmarks. */
/* protobuf-c only (resets the arena first). */
Mpiwatch__Envelope *mw__envelope_decode_pbc(mw_arena_t *arena, const void *data, size_t len);
/* The hand-written decoders (mw_decode.c for samples, mw_decode_partial.c for partials), into
 * the arena as it is (no reset): the envelope protobuf-c would produce, or NULL when it cannot
 * be sure of that (a hello or bye, an invalid or unusual encoding, a full arena, a sample in a
 * frame that does not satisfy MW_DECODE_FITS()), in which case protobuf-c must decide. */
Mpiwatch__Envelope *mw__envelope_decode_fast(mw_arena_t *arena, const void *data, size_t len);
/* protobuf-c allocates less than MW_DECODE_BYTES_RATIO bytes per wire byte, plus
 * MW_DECODE_SLACK_BYTES, for any sample the fast decoder accepts (mw_decode.c): a sample is
 * decoded there only when protobuf-c could not run out of arena on it either. */
#define MW_DECODE_BYTES_RATIO 256u
#define MW_DECODE_SLACK_BYTES 65536u
#define MW_DECODE_FITS(arena, len)                                                                 \
    ((arena)->size >= MW_DECODE_SLACK_BYTES &&                                                     \
     (len) <= ((arena)->size - MW_DECODE_SLACK_BYTES) / MW_DECODE_BYTES_RATIO)

#endif
