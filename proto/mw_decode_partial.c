/* mw_decode_partial.c: a hand-written decoder for the message a parent takes from each of its
 * aggregators every window, an Envelope that carries a Partial (docs/partial.md).
 *
 * A partial is almost all per-rank content: the ranks listed (rank_first, rank_count, rank_pm)
 * and its Window's per-rank arrays (rf_*, rr_*, pairs, per-function pairs), a few large packed
 * arrays of varints. protobuf-c reads each of those elements through its generic per-type code
 * (a counting pass, then a call per element); this decoder reads them in one pass, eight
 * one-byte varints at a time where it can (mw__append_packed), into arrays sized by the chunk
 * and trimmed to what it held. Everything else of a Partial and its Window is decoded here too:
 * the scalars, the function summaries and long calls (mw_decode.c's decoders), and the nested
 * messages that are rare or small (steps, dormant figures, definitions, traces, communicators,
 * region and site figures) through protobuf-c's own unpacker of that message, which is exactly
 * what protobuf-c does for each occurrence of a repeated message field.
 *
 * DESIGN: the invariant and the fallback are mw_decode.c's: the result is the Envelope protobuf-c
 * would produce, or NULL when that is not certain, and protobuf-c then decodes the frame. Each
 * message is read in two passes: the first checks every member header against a table of the
 * message's fields (wire types as protobuf-c accepts them: a packed field packed or unpacked),
 * counts the members of each field and bounds each packed array, so that the second pass
 * allocates every array once, with its exact size for repeated messages, whatever the encoding
 * (split or unpacked arrays, repeated scalars, where the last one wins; unknown fields, kept as
 * protobuf-c keeps them). A Window given twice in one Partial (protobuf-c merges the two) falls
 * back. The first pass reads headers only and skips each array's payload: its cost is the number
 * of members, a few hundred, not the number of ranks.
 *
 * Memory: a partial of 100,000 ranks is megabytes, far beyond what MW_DECODE_FITS() admits, so
 * this decoder bounds protobuf-c's needs frame by frame instead: protobuf-c allocates what this
 * decoder does (the same structs, arrays no larger, the nested messages through protobuf-c
 * itself) plus, per member of a message decoded here, at most 64 bytes of ScannedMember slabs
 * and 16 of rounding, and 32 bytes of rounding per message. The caller accepts the result only
 * when that bound fits the arena (mw__envelope_decode_fast()), so that protobuf-c could not have
 * run out of memory where this decoder succeeded. tests/collector/test_decode.c and the fuzz target
 * compare both decoders on the aggregator's real partials, crafted encodings and mutations.
 */
#include "mw_decode.h"

#include <stddef.h>
#include <string.h>

/* What a field of a message decoded here is. */
typedef enum {
    T_NONE,   /* not in the schema: an unknown field */
    T_U32,    /* uint32 scalar */
    T_U64,    /* uint64 scalar */
    T_P_U32,  /* repeated uint32, packed or not */
    T_P_S32,  /* repeated sint32 */
    T_P_U64,  /* repeated uint64 */
    T_FS,     /* repeated FunctionStat (mw_decode.c) */
    T_CALL,   /* repeated Call (mw_decode.c) */
    T_MSG,    /* repeated message of `desc`, through protobuf-c's unpacker */
    T_WINDOW, /* Partial.window: one Window, decoded here */
} ftype_t;

typedef struct {
    uint8_t type;   /* ftype_t */
    uint16_t off;   /* the member, or for repeated fields the array pointer */
    uint16_t n_off; /* repeated fields: n_<field> */
    const ProtobufCMessageDescriptor *desc; /* T_MSG */
} fdesc_t;

#define WINDOW_FIELDS 57  /* 1..56 */
#define PARTIAL_FIELDS 11 /* 1..10 */
#define MAX_FIELDS WINDOW_FIELDS

#define SCALAR(msg, t, name)                                                                       \
    {                                                                                              \
        t, offsetof(msg, name), 0, NULL                                                            \
    }
#define REP(msg, t, name)                                                                          \
    {                                                                                              \
        t, offsetof(msg, name), offsetof(msg, n_##name), NULL                                      \
    }
#define MSG(msg, name, d)                                                                          \
    {                                                                                              \
        T_MSG, offsetof(msg, name), offsetof(msg, n_##name), &d                                    \
    }

#define W Mpiwatch__Window
static const fdesc_t window_fields[WINDOW_FIELDS] = {
    [1] = SCALAR(W, T_U64, index),
    [2] = SCALAR(W, T_U64, window_ns),
    [3] = SCALAR(W, T_U32, subslots),
    [4] = SCALAR(W, T_U32, duration_bins),
    [5] = SCALAR(W, T_U32, ranks_reporting),
    [6] = SCALAR(W, T_U32, ranks_missing),
    [7] = SCALAR(W, T_U64, mpi_time_ns),
    [8] = SCALAR(W, T_U64, occ_total_ns),
    [9] = SCALAR(W, T_U64, records_dropped),
    [10] = SCALAR(W, T_U64, samples_dropped),
    [11] = SCALAR(W, T_U64, calls_late),
    [12] = SCALAR(W, T_U64, overflow),
    [13] = REP(W, T_FS, functions),
    [14] = REP(W, T_P_U32, occ_fn),
    [15] = REP(W, T_P_U32, occ_sub),
    [16] = REP(W, T_P_U64, occ_ns),
    [17] = REP(W, T_P_U32, density_fn),
    [18] = REP(W, T_P_S32, density_sub),
    [19] = REP(W, T_P_U32, density_bin),
    [20] = REP(W, T_P_U32, density_end),
    [21] = REP(W, T_P_U64, density_count),
    [22] = REP(W, T_P_U32, pair_src),
    [23] = REP(W, T_P_U32, pair_dst),
    [24] = REP(W, T_P_U64, pair_messages),
    [25] = REP(W, T_P_U64, pair_bytes),
    [26] = REP(W, T_CALL, longest),
    [27] = SCALAR(W, T_U64, closed_real_ns),
    [28] = REP(W, T_P_U32, rank_mpi_permille),
    [29] = SCALAR(W, T_U64, start_ns),
    [30] = MSG(W, traces, mpiwatch__rank_trace__descriptor),
    [31] = SCALAR(W, T_U32, traced_ranks),
    [32] = SCALAR(W, T_U64, trace_left_out),
    [33] = MSG(W, comms, mpiwatch__comm_def__descriptor),
    [34] = REP(W, T_P_U32, comm_world_rank),
    [35] = SCALAR(W, T_U32, trace_deferred),
    [36] = MSG(W, regions, mpiwatch__region_stat__descriptor),
    [37] = MSG(W, sites, mpiwatch__site_stat__descriptor),
    [38] = SCALAR(W, T_U64, regions_dropped),
    [39] = SCALAR(W, T_U64, sites_dropped),
    [40] = REP(W, T_P_U32, rf_rank),
    [41] = REP(W, T_P_U32, rf_fn),
    [42] = REP(W, T_P_U64, rf_count),
    [43] = REP(W, T_P_U64, rf_ns),
    [44] = REP(W, T_P_U64, rf_bytes),
    [45] = REP(W, T_P_U32, rr_rank),
    [46] = REP(W, T_P_U32, rr_region),
    [47] = REP(W, T_P_U64, rr_count),
    [48] = REP(W, T_P_U64, rr_incl_ns),
    [49] = REP(W, T_P_U64, rr_excl_ns),
    [50] = REP(W, T_P_U64, rr_mpi_ns),
    [51] = SCALAR(W, T_U64, rank_detail_left_out),
    [52] = REP(W, T_P_U32, fpair_src),
    [53] = REP(W, T_P_U32, fpair_dst),
    [54] = REP(W, T_P_U32, fpair_fn),
    [55] = REP(W, T_P_U64, fpair_messages),
    [56] = REP(W, T_P_U64, fpair_bytes),
};
#undef W

#define P Mpiwatch__Partial
static const fdesc_t partial_fields[PARTIAL_FIELDS] = {
    [1] = {T_WINDOW, offsetof(P, window), 0, NULL},
    [2] = REP(P, T_P_U32, rank_first),
    [3] = REP(P, T_P_U32, rank_count),
    [4] = REP(P, T_P_U32, rank_pm),
    [5] = SCALAR(P, T_U64, samples),
    [6] = MSG(P, steps, mpiwatch__step__descriptor),
    [7] = MSG(P, dormant, mpiwatch__rank_dormant__descriptor),
    [8] = MSG(P, region_defs, mpiwatch__region__descriptor),
    [9] = MSG(P, site_defs, mpiwatch__call_site__descriptor),
    [10] = REP(P, T_P_U32, fn_order),
};
#undef P
#undef SCALAR
#undef REP
#undef MSG

/* A message's schema for this decoder. */
typedef struct {
    const fdesc_t *fields;
    uint32_t n_fields; /* field numbers 1 .. n_fields - 1 */
    uint64_t known;    /* bit f: field f is in the schema */
    size_t size;       /* sizeof the generated struct */
    const void *init;  /* its INIT value */
} schema_t;

static const Mpiwatch__Window window_init = MPIWATCH__WINDOW__INIT;
static const Mpiwatch__Partial partial_init = MPIWATCH__PARTIAL__INIT;
static const schema_t window_schema = {window_fields, WINDOW_FIELDS,
                                       (BIT(WINDOW_FIELDS) - 1) & ~1ull, sizeof(Mpiwatch__Window),
                                       &window_init};
static const schema_t partial_schema = {partial_fields, PARTIAL_FIELDS,
                                        (BIT(PARTIAL_FIELDS) - 1) & ~1ull,
                                        sizeof(Mpiwatch__Partial), &partial_init};

/* protobuf-c's allocation beyond this decoder's, per member of a message decoded here (slabs of
 * ScannedMember, 32 bytes each, grow by doubling: at most 2 per member; 16 bytes of rounding)
 * and per message (its struct's rounding, and the pointer array's). */
#define PBC_PER_MEMBER 80u
#define PBC_PER_MESSAGE 32u

static inline int is_packed(uint8_t t)
{
    return t == T_P_U32 || t == T_P_S32 || t == T_P_U64;
}

static inline mw__kind_t packed_kind(uint8_t t)
{
    return t == T_P_U64 ? K_U64 : t == T_P_S32 ? K_S32 : K_U32;
}

/* First pass over the members of a message of schema `s`: checks each header and wire type,
 * counts the members of each field (cnt) and bounds each packed array's elements (bound: payload
 * bytes, or one per unpacked element). Returns the number of members, or -1. */
static long scan_msg(const schema_t *s, const uint8_t *p, const uint8_t *end, uint32_t *cnt,
                     size_t *bound, size_t *n_unknown)
{
    long members = 0;
    while (p < end) {
        uint32_t field, wire;
        const uint8_t *body;
        uint64_t v;
        if (!(p = rd_key(p, end, &field, &wire)))
            return -1;
        members++;
        uint8_t t = field < s->n_fields ? s->fields[field].type : T_NONE;
        switch (t) {
        case T_NONE:
            if (!(p = skip_unknown(p, end, field, wire, s->known, n_unknown)))
                return -1;
            continue;
        case T_U32:
        case T_U64:
            if (wire != WIRE_VARINT || !(p = rd_varint(p, end, &v)))
                return -1;
            break;
        case T_P_U32:
        case T_P_S32:
        case T_P_U64:
            if (wire == WIRE_LEN) {
                if (!(p = rd_len(p, end, &body)))
                    return -1;
                bound[field] += (size_t)(p - body);
            } else if (wire == WIRE_VARINT) {
                if (!(p = rd_varint(p, end, &v)))
                    return -1;
                bound[field]++;
            } else {
                return -1;
            }
            break;
        default: /* messages */
            if (wire != WIRE_LEN || !(p = rd_len(p, end, &body)))
                return -1;
            if (t == T_WINDOW && cnt[field])
                return -1; /* a second Window: protobuf-c merges them, it decodes the frame */
        }
        cnt[field]++;
    }
    return members;
}

static Mpiwatch__Window *dec_window(mw_arena_t *a, const uint8_t *p, const uint8_t *end,
                                    size_t *extra);

/* Second pass: decodes a message of schema `s` from [p, end) into a new struct in the arena.
 * *extra grows by what protobuf-c would allocate beyond this decoder (see PBC_PER_MEMBER).
 * NULL when invalid, unusual or the arena is full. */
static void *dec_msg(mw_arena_t *a, const schema_t *s, const uint8_t *p, const uint8_t *end,
                     size_t *extra)
{
    uint32_t cnt[MAX_FIELDS] = {0};
    size_t bound[MAX_FIELDS] = {0}, n_unknown = 0;
    long members = scan_msg(s, p, end, cnt, bound, &n_unknown);
    if (members < 0)
        return NULL;
    *extra += (size_t)members * PBC_PER_MEMBER + PBC_PER_MESSAGE;
    char *m = arena_get(a, s->size);
    if (!m)
        return NULL;
    memcpy(m, s->init, s->size);
    const uint8_t *start = p;
    uint64_t v = 0;
    while (p < end) {
        uint32_t field, wire;
        const uint8_t *body;
        if (!(p = rd_key_next(p, end, &field, &wire)))
            return NULL;
        if (field >= s->n_fields || s->fields[field].type == T_NONE) {
            p = mw__skip_value(p, end, wire); /* an unknown field: kept below */
            if (!p)
                return NULL;
            continue;
        }
        /* The scan checked every header and wire type: only the values are read here. */
        const fdesc_t *fd = &s->fields[field];
        void *at = m + fd->off;
        size_t *n = (size_t *)(m + fd->n_off);
        switch (fd->type) {
        case T_U32:
            p = rd_varint(p, end, &v);
            *(uint32_t *)at = (uint32_t)v;
            break;
        case T_U64:
            p = rd_varint(p, end, (uint64_t *)at);
            break;
        case T_P_U32:
        case T_P_S32:
        case T_P_U64: {
            mw__kind_t kind = packed_kind(fd->type);
            void **arr = at;
            if (!*arr && !(*arr = arena_get(a, bound[field] * kind_size(kind))))
                return NULL;
            if (wire == WIRE_LEN) {
                if (!(p = rd_len(p, end, &body)) ||
                    mw__append_packed(body, p, kind, *arr, n, bound[field]) < 0)
                    return NULL;
                if (cnt[field] == 1) /* its only chunk, the arena's last allocation: trim it */
                    a->used = (size_t)((unsigned char *)*arr - a->base) + *n * kind_size(kind);
            } else {
                if (!(p = rd_varint(p, end, &v)) || *n == bound[field])
                    return NULL;
                mw__append_one(v, kind, *arr, n);
            }
            break;
        }
        case T_WINDOW: {
            if (!(p = rd_len(p, end, &body)) ||
                !(*(Mpiwatch__Window **)at = dec_window(a, body, p, extra)))
                return NULL;
            break;
        }
        default: { /* repeated messages */
            void ***arr = at;
            if (!*arr && !(*arr = arena_get(a, cnt[field] * sizeof(void *))))
                return NULL;
            if (!(p = rd_len(p, end, &body)))
                return NULL;
            void *e;
            if (fd->type == T_FS) {
                e = mw__dec_function_stat(a, body, p);
                *extra += (size_t)(p - body) / 2 * PBC_PER_MEMBER + PBC_PER_MESSAGE;
            } else if (fd->type == T_CALL) {
                e = mw__dec_call(a, body, p);
                *extra += (size_t)(p - body) / 2 * PBC_PER_MEMBER + PBC_PER_MESSAGE;
            } else {
                e = protobuf_c_message_unpack(fd->desc, &a->allocator, (size_t)(p - body), body);
            }
            if (!e)
                return NULL;
            (*arr)[(*n)++] = e;
        }
        }
        if (!p)
            return NULL; /* cannot happen after the scan; kept as a guard */
    }
    for (uint32_t f = 1; f < s->n_fields; f++) {
        const fdesc_t *fd = &s->fields[f];
        if (is_packed(fd->type) && cnt[f] && *(size_t *)(m + fd->n_off) == 0)
            *(void **)(m + fd->off) = NULL; /* only empty chunks: protobuf-c allocates nothing */
    }
    if (n_unknown &&
        mw__keep_unknown(a, (ProtobufCMessage *)m, start, end, s->known, n_unknown) < 0)
        return NULL;
    return m;
}

static Mpiwatch__Window *dec_window(mw_arena_t *a, const uint8_t *p, const uint8_t *end,
                                    size_t *extra)
{
    return dec_msg(a, &window_schema, p, end, extra);
}

Mpiwatch__Partial *mw__dec_partial(mw_arena_t *a, const uint8_t *p, const uint8_t *end,
                                   size_t *extra)
{
    return dec_msg(a, &partial_schema, p, end, extra);
}
