/* mw_decode.c: a hand-written decoder for the hot message, an Envelope that carries a Sample.
 *
 * protobuf-c's generic unpacker walks a field descriptor for every member of every message,
 * keeps a ScannedMember record per member, then parses each one through a switch on its
 * type: at 16,384 ranks x 10 windows/s that walk was about 70% of the collector's time. This
 * file knows the Envelope, Sample, FunctionStat and Call schemas and decodes them straight into
 * the same generated structs, allocated in the caller's arena, so that everything after
 * decoding (validation, merge, totals) is unchanged. It is about 2.5 times faster.
 *
 * DESIGN: the result must be exactly what protobuf-c would produce, for every input. Rather than
 * reproducing every corner of protobuf-c's behaviour, this decoder only ever answers in cases
 * where the answer is certain, and otherwise returns NULL, which makes mw_envelope_decode() run
 * protobuf-c itself on the frame ("fall back"). It falls back on anything an encoder of this
 * schema (protobuf-c, as used by the shim and the load generator) never produces: a Hello or a
 * Bye body (rare: once per rank), a second body field, an invalid encoding of any kind
 * (protobuf-c then rejects it itself; field number 0 is one), a length prefix longer than 4
 * bytes, and a message too large for the arena bound below. What it does handle is everything
 * the schema allows in a Sample: scalars given several times (the last one wins), repeated
 * scalars packed, unpacked or split across several chunks (concatenated in order), and unknown
 * fields, which are skipped and kept in the message's unknown_fields exactly as protobuf-c
 * keeps them. tests/collector/test_decode.c and the fuzz target compare the two decoders on
 * valid, crafted and mutated inputs.
 *
 * Values follow protobuf-c: varints of up to 10 bytes, uint32 fields take the low 32 bits,
 * sint32 is zigzag over those, a tag has at most 5 bytes. A Sample is decoded in one pass when
 * it has the usual form (each packed array in one chunk, whose payload length bounds its
 * elements: no counting pass over the bytes); otherwise a first pass over its member headers
 * counts the repeated messages and bounds each array, and a second one decodes, so that every
 * array is allocated once whatever the encoding.
 * The members of a FunctionStat or Call are first taken in the order protobuf-c writes them, a
 * predictable branch each, before a general loop handles anything else.
 *
 * Memory: an arena that cannot hold the result makes this decoder fall back, and protobuf-c
 * then decides. For that to give protobuf-c's answer, protobuf-c must never run out of arena
 * on a frame this decoder accepts: mw__envelope_decode_fast() is only tried on frames whose
 * MW_DECODE_BYTES_RATIO-fold size fits the free arena, a bound on what protobuf-c allocates per
 * wire byte for the messages accepted here (see the _Static_asserts).
 */
#include "mw_decode.h"

#include <stddef.h>
#include <string.h>

/* protobuf-c allocates per member at most: two ScannedMember slots of 32 bytes (its slabs
 * double), the struct of an embedded message and the pointer to it, each allocation rounded up
 * to 16 bytes by the arena; every member takes at least 2 wire bytes. Unknown fields cost a
 * ProtobufCMessageUnknownField and a copy of their bytes. */
#define MW_DECODE_SLAB_PER_MEMBER 64u
_Static_assert((MW_DECODE_SLAB_PER_MEMBER + sizeof(Mpiwatch__FunctionStat) + 16 + 8) / 2 <
                   MW_DECODE_BYTES_RATIO,
               "FunctionStat overhead");
_Static_assert((MW_DECODE_SLAB_PER_MEMBER + sizeof(Mpiwatch__Call) + 16 + 8) / 2 <
                   MW_DECODE_BYTES_RATIO,
               "Call overhead");
_Static_assert((MW_DECODE_SLAB_PER_MEMBER + sizeof(ProtobufCMessageUnknownField) + 2 * 16) / 2 <
                   MW_DECODE_BYTES_RATIO,
               "unknown field overhead");
_Static_assert(sizeof(Mpiwatch__Envelope) + sizeof(Mpiwatch__Sample) + 64 < MW_DECODE_SLACK_BYTES,
               "fixed overhead");

/* ---- reading -------------------------------------------------------------------------------- */

/* The general case of rd_varint() below: a varint of 3 to 10 bytes, or one that does not end
 * in time. With 10 bytes in reach the bytes are read without bounds checks (the loop is
 * unrolled; a continuation byte's 0x80 is added and then taken back out). */
const uint8_t *mw__rd_varint_long(const uint8_t *p, const uint8_t *end, uint64_t *out)
{
    if (end - p >= 10) {
        uint64_t v = (uint64_t)p[0] - 0x80, b;
#define MW_STEP(i)                                                                                 \
    do {                                                                                           \
        b = p[i];                                                                                  \
        v += b << (7 * (i));                                                                       \
        if (b < 0x80) {                                                                            \
            *out = v;                                                                              \
            return p + (i) + 1;                                                                    \
        }                                                                                          \
        v -= 0x80ull << (7 * (i));                                                                 \
    } while (0)
        MW_STEP(1);
        MW_STEP(2);
        MW_STEP(3);
        MW_STEP(4);
        MW_STEP(5);
        MW_STEP(6);
        MW_STEP(7);
        MW_STEP(8);
#undef MW_STEP
        b = p[9];
        if (b < 0x80) {
            *out = v + (b << 63); /* only the 64th bit fits: the rest is dropped */
            return p + 10;
        }
        return NULL;
    }
    uint64_t v = 0;
    for (unsigned shift = 0; shift <= 63 && p < end; shift += 7) {
        uint8_t b = *p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80) {
            *out = v;
            return p;
        }
    }
    return NULL;
}

/* Skips the value of a member of wire type `wire` starting at p; NULL when it does not fit or
 * the wire type is one protobuf-c refuses (groups, 6, 7). */
const uint8_t *mw__skip_value(const uint8_t *p, const uint8_t *end, uint32_t wire)
{
    uint64_t v;
    const uint8_t *body;
    switch (wire) {
    case WIRE_VARINT:
        return rd_varint(p, end, &v);
    case WIRE_64BIT:
        return end - p >= 8 ? p + 8 : NULL;
    case WIRE_LEN:
        return rd_len(p, end, &body);
    case WIRE_32BIT:
        return end - p >= 4 ? p + 4 : NULL;
    default:
        return NULL;
    }
}

/* ---- the arena ------------------------------------------------------------------------------ */

/* ---- unknown fields ------------------------------------------------------------------------- */

/* Fills msg->unknown_fields with the `n` members of [p, end) whose field number is not in
 * `known` (bit f: field f is in the schema), in order, each with a copy of its bytes (the
 * length prefix included), as protobuf-c keeps them. The members were checked by the caller. */
int mw__keep_unknown(mw_arena_t *a, ProtobufCMessage *msg, const uint8_t *p, const uint8_t *end,
                     uint64_t known, size_t n)
{
    ProtobufCMessageUnknownField *u = arena_get(a, n * sizeof *u);
    if (!u)
        return -1;
    msg->unknown_fields = u;
    msg->n_unknown_fields = 0;
    while (p < end) {
        uint32_t field, wire;
        p = rd_key(p, end, &field, &wire);
        const uint8_t *q = p ? mw__skip_value(p, end, wire) : NULL;
        if (!q)
            return -1;
        if (field >= 64 || !(known >> field & 1)) {
            if (msg->n_unknown_fields == n)
                return -1;
            ProtobufCMessageUnknownField *f = &u[msg->n_unknown_fields++];
            f->tag = field;
            f->wire_type = (ProtobufCWireType)wire;
            f->len = (size_t)(q - p);
            f->data = arena_get(a, f->len ? f->len : 1);
            if (!f->data)
                return -1;
            memcpy(f->data, p, f->len);
        }
        p = q;
    }
    return msg->n_unknown_fields == n ? 0 : -1;
}

/* ---- repeated scalars ----------------------------------------------------------------------- */

/* True when the 8 bytes at p (8 of them in reach) are 8 one-byte varints: none has its
 * continuation bit, so each is a whole varint whose value is the byte itself. */
static inline int eight_short(const uint8_t *p)
{
    uint64_t w;
    memcpy(&w, p, sizeof w);
    return (w & 0x8080808080808080ull) == 0;
}

/* Stores element i of an array of `kind` (a constant wherever this is inlined). */
static inline __attribute__((always_inline)) void put_elem(void *arr, size_t i, uint64_t v,
                                                           mw__kind_t kind)
{
    switch (kind) {
    case K_U32:
        ((uint32_t *)arr)[i] = (uint32_t)v;
        break;
    case K_S32: {
        uint32_t u = (uint32_t)v;
        ((int32_t *)arr)[i] = (int32_t)(u >> 1) ^ -(int32_t)(u & 1);
        break;
    }
    case K_U64:
        ((uint64_t *)arr)[i] = v;
        break;
    }
}

/* mw__append_packed() for one kind. While 10 bytes are in reach (a whole varint of any length),
 * varints are read without bounds checks: those of 1 to 3 bytes (most per-rank figures of a
 * partial: ranks, counts, bytes, nanoseconds under 2 ms) byte by byte in registers, those of 4 to
 * 8 from one word; the last bytes of the chunk go through rd_varint(). */
static inline __attribute__((always_inline)) int append_kind(const uint8_t *p, const uint8_t *end,
                                                             mw__kind_t kind, void *arr, size_t *n,
                                                             size_t cap, int room)
{
    size_t i = *n;
    while (end - p >= 10) {
        if (!room && i == cap)
            return -1;
        uint64_t b0 = p[0], b1, b2;
        if (b0 < 0x80) {
            if ((room || cap - i >= 8) && eight_short(p)) {
                for (unsigned b = 0; b < 8; b++)
                    put_elem(arr, i + b, p[b], kind);
                i += 8, p += 8;
                continue;
            }
            put_elem(arr, i++, b0, kind);
            p += 1;
        } else if ((b1 = p[1]) < 0x80) {
            put_elem(arr, i++, (b0 & 0x7f) | b1 << 7, kind);
            p += 2;
        } else if ((b2 = p[2]) < 0x80) {
            put_elem(arr, i++, (b0 & 0x7f) | (b1 & 0x7f) << 7 | b2 << 14, kind);
            p += 3;
        } else {
            /* 4 to 8 bytes: the end found in one word, the 7-bit groups joined in three
             * steps; 9 or 10 bytes (values of 2^56 and more) the general way. */
            uint64_t w, v;
            memcpy(&w, p, sizeof w);
            uint64_t stop = ~w & 0x8080808080808080ull;
            if (stop) {
                unsigned len = ((unsigned)__builtin_ctzll(stop) >> 3) + 1;
                v = w & 0x7f7f7f7f7f7f7f7full;
                if (len < 8)
                    v &= (1ull << (8 * len)) - 1;
                v = (v & 0x007f007f007f007full) | (v & 0x7f007f007f007f00ull) >> 1;
                v = (v & 0x00003fff00003fffull) | (v & 0x3fff00003fff0000ull) >> 2;
                v = (v & 0x000000000fffffffull) | (v & 0x0fffffff00000000ull) >> 4;
                p += len;
            } else if (!(p = mw__rd_varint_long(p, end, &v))) {
                return -1;
            }
            put_elem(arr, i++, v, kind);
        }
    }
    while (p < end) {
        uint64_t v;
        if (i == cap || !(p = rd_varint(p, end, &v)))
            return -1;
        put_elem(arr, i++, v, kind);
    }
    *n = i;
    return 0;
}

/* Appends the varints of [p, end) to an array of `kind` holding *n of `cap` elements. A varint
 * may not run past the end of its chunk. Returns 0, or -1.
 * Most elements of a sample's arrays are small (function ids, sub-slots, bins, flags, counts
 * under 128: the 264 density cells of a loadgen sample are 5 such arrays), so 8 one-byte
 * varints are taken at once when the next 8 bytes are all that and 8 elements still fit; what
 * is stored is the same as element by element, and anything else goes the general way. */
int mw__append_packed(const uint8_t *p, const uint8_t *end, mw__kind_t kind, void *arr, size_t *n,
                      size_t cap)
{
    /* Every varint takes at least one byte: when the chunk's bytes fit the room left, so do
     * its elements, and the loop needs no check of the room (a version of its own). */
    int room = (size_t)(end - p) <= cap - *n;
    switch (kind) {
    case K_U32:
        return room ? append_kind(p, end, K_U32, arr, n, cap, 1)
                    : append_kind(p, end, K_U32, arr, n, cap, 0);
    case K_S32:
        return room ? append_kind(p, end, K_S32, arr, n, cap, 1)
                    : append_kind(p, end, K_S32, arr, n, cap, 0);
    case K_U64:
        return room ? append_kind(p, end, K_U64, arr, n, cap, 1)
                    : append_kind(p, end, K_U64, arr, n, cap, 0);
    }
    return -1;
}

/* One unpacked element. */
void mw__append_one(uint64_t v, mw__kind_t kind, void *arr, size_t *n)
{
    put_elem(arr, (*n)++, v, kind);
}

/* ---- FunctionStat and Call ------------------------------------------------------------------ */

/* Adds one member of field 8 (hist) starting at p (after its key) to f; returns the position
 * after it, or NULL. Every element still to come takes at least one of the bytes left in the
 * message, so the first member allocates that many elements: room for all chunks of the
 * field, packed or not. */
static const uint8_t *add_hist(mw_arena_t *a, Mpiwatch__FunctionStat *f, size_t *cap,
                               const uint8_t *p, const uint8_t *end, uint32_t wire)
{
    uint64_t v;
    if (!f->hist) {
        *cap = (size_t)(end - p);
        if (!(f->hist = arena_get(a, *cap * sizeof *f->hist)))
            return NULL;
    }
    if (wire == WIRE_LEN) {
        const uint8_t *body;
        if (!(p = rd_len(p, end, &body)) ||
            mw__append_packed(body, p, K_U32, f->hist, &f->n_hist, *cap) < 0)
            return NULL;
        return p;
    }
    if (!(p = rd_varint(p, end, &v)) || f->n_hist == *cap)
        return NULL;
    mw__append_one(v, K_U32, f->hist, &f->n_hist);
    return p;
}

/* Reads a varint member with one-byte key `key` at p, if that is what comes next: the fields
 * of a message in the order protobuf-c writes them (zero values left out) are taken this way,
 * one predictable branch each, before the general loop handles whatever is left. */
#define MW_NEXT_VARINT(key, assign)                                                                \
    if (p < end && *p == (key)) {                                                                  \
        if (!(p = rd_varint(p + 1, end, &v)))                                                      \
            return NULL;                                                                           \
        assign;                                                                                    \
    }

Mpiwatch__FunctionStat *mw__dec_function_stat(mw_arena_t *a, const uint8_t *p, const uint8_t *end)
{
    /* 9..17 (the spread across ranks, its state in partials) belong to merged windows: a
     * partial's functions carry them (mw_decode_partial.c), a rank's sample never does. */
    static const uint64_t known = BIT(1) | BIT(2) | BIT(3) | BIT(4) | BIT(5) | BIT(6) | BIT(7) |
                                  BIT(8) | BIT(9) | BIT(10) | BIT(11) | BIT(12) | BIT(13) |
                                  BIT(14) | BIT(15) | BIT(16) | BIT(17);
    Mpiwatch__FunctionStat *f = arena_get(a, sizeof *f);
    if (!f)
        return NULL;
    *f = (Mpiwatch__FunctionStat)MPIWATCH__FUNCTION_STAT__INIT; /* inline: once per function */
    const uint8_t *start = p;
    size_t cap = 0, n_unknown = 0;
    uint64_t v;
    MW_NEXT_VARINT(KEY(1, WIRE_VARINT), f->fn = (uint32_t)v)
    MW_NEXT_VARINT(KEY(2, WIRE_VARINT), f->count = v)
    MW_NEXT_VARINT(KEY(3, WIRE_VARINT), f->total_ns = v)
    MW_NEXT_VARINT(KEY(4, WIRE_VARINT), f->min_ns = v)
    MW_NEXT_VARINT(KEY(5, WIRE_VARINT), f->max_ns = v)
    MW_NEXT_VARINT(KEY(6, WIRE_VARINT), f->bytes = v)
    MW_NEXT_VARINT(KEY(7, WIRE_VARINT), f->hist_first = (uint32_t)v)
    if (p < end && *p == KEY(8, WIRE_LEN) && !(p = add_hist(a, f, &cap, p + 1, end, WIRE_LEN)))
        return NULL;
    while (p < end) {
        uint32_t field, wire;
        if (!(p = rd_key_next(p, end, &field, &wire)))
            return NULL;
        switch (KEY(field, wire)) {
        case KEY(1, WIRE_VARINT):
            if (!(p = rd_varint(p, end, &v)))
                return NULL;
            f->fn = (uint32_t)v;
            break;
        case KEY(2, WIRE_VARINT):
            if (!(p = rd_varint(p, end, &f->count)))
                return NULL;
            break;
        case KEY(3, WIRE_VARINT):
            if (!(p = rd_varint(p, end, &f->total_ns)))
                return NULL;
            break;
        case KEY(4, WIRE_VARINT):
            if (!(p = rd_varint(p, end, &f->min_ns)))
                return NULL;
            break;
        case KEY(5, WIRE_VARINT):
            if (!(p = rd_varint(p, end, &f->max_ns)))
                return NULL;
            break;
        case KEY(6, WIRE_VARINT):
            if (!(p = rd_varint(p, end, &f->bytes)))
                return NULL;
            break;
        case KEY(7, WIRE_VARINT):
            if (!(p = rd_varint(p, end, &v)))
                return NULL;
            f->hist_first = (uint32_t)v;
            break;
        case KEY(8, WIRE_LEN):
        case KEY(8, WIRE_VARINT):
            if (!(p = add_hist(a, f, &cap, p, end, wire)))
                return NULL;
            break;
        case KEY(9, WIRE_64BIT):
            p = rd_double(p, end, &f->rank_sd_ns);
            break;
        case KEY(10, WIRE_VARINT):
            if (!(p = rd_varint(p, end, &v)))
                return NULL;
            f->rank_max = (uint32_t)v;
            break;
        case KEY(11, WIRE_VARINT):
            p = rd_varint(p, end, &f->rank_max_ns);
            break;
        case KEY(12, WIRE_VARINT):
            if (!(p = rd_varint(p, end, &v)))
                return NULL;
            f->spread_ranks = (uint32_t)v;
            break;
        case KEY(13, WIRE_64BIT):
            p = rd_double(p, end, &f->spread_mean_ns);
            break;
        case KEY(14, WIRE_64BIT):
            p = rd_double(p, end, &f->spread_m2);
            break;
        case KEY(15, WIRE_VARINT):
            p = rd_varint(p, end, &f->spread_sum_ns);
            break;
        case KEY(16, WIRE_VARINT):
            p = rd_varint(p, end, &f->spread_sq_hi);
            break;
        case KEY(17, WIRE_VARINT):
            p = rd_varint(p, end, &f->spread_sq_lo);
            break;
        default:
            p = skip_unknown(p, end, field, wire, known, &n_unknown);
        }
        if (!p)
            return NULL;
    }
    if (f->n_hist == 0)
        f->hist = NULL; /* an empty packed chunk: protobuf-c allocates nothing */
    if (n_unknown && mw__keep_unknown(a, &f->base, start, end, known, n_unknown) < 0)
        return NULL;
    return f;
}

Mpiwatch__Call *mw__dec_call(mw_arena_t *a, const uint8_t *p, const uint8_t *end)
{
    static const uint64_t known = BIT(1) | BIT(2) | BIT(3) | BIT(4) | BIT(5) | BIT(6);
    Mpiwatch__Call *c = arena_get(a, sizeof *c);
    if (!c)
        return NULL;
    *c = (Mpiwatch__Call)MPIWATCH__CALL__INIT;
    const uint8_t *start = p;
    size_t n_unknown = 0;
    uint64_t v;
    MW_NEXT_VARINT(KEY(1, WIRE_VARINT), c->fn = (uint32_t)v)
    MW_NEXT_VARINT(KEY(2, WIRE_VARINT), c->start_ns = v)
    MW_NEXT_VARINT(KEY(3, WIRE_VARINT), c->duration_ns = v)
    MW_NEXT_VARINT(KEY(4, WIRE_VARINT), c->bytes = v)
    if (p < end && *p == KEY(5, WIRE_VARINT)) {
        if (!(p = rd_varint(p + 1, end, &v)))
            return NULL;
        uint32_t u = (uint32_t)v;
        c->peer = (int32_t)(u >> 1) ^ -(int32_t)(u & 1);
    }
    MW_NEXT_VARINT(KEY(6, WIRE_VARINT), c->rank = (uint32_t)v)
    while (p < end) {
        uint32_t field, wire;
        if (!(p = rd_key(p, end, &field, &wire)))
            return NULL;
        switch (KEY(field, wire)) {
        case KEY(1, WIRE_VARINT):
            if (!(p = rd_varint(p, end, &v)))
                return NULL;
            c->fn = (uint32_t)v;
            break;
        case KEY(2, WIRE_VARINT):
            if (!(p = rd_varint(p, end, &c->start_ns)))
                return NULL;
            break;
        case KEY(3, WIRE_VARINT):
            if (!(p = rd_varint(p, end, &c->duration_ns)))
                return NULL;
            break;
        case KEY(4, WIRE_VARINT):
            if (!(p = rd_varint(p, end, &c->bytes)))
                return NULL;
            break;
        case KEY(5, WIRE_VARINT): {
            if (!(p = rd_varint(p, end, &v)))
                return NULL;
            uint32_t u = (uint32_t)v;
            c->peer = (int32_t)(u >> 1) ^ -(int32_t)(u & 1);
            break;
        }
        case KEY(6, WIRE_VARINT):
            if (!(p = rd_varint(p, end, &v)))
                return NULL;
            c->rank = (uint32_t)v;
            break;
        default:
            if (!(p = skip_unknown(p, end, field, wire, known, &n_unknown)))
                return NULL;
        }
    }
    if (n_unknown && mw__keep_unknown(a, &c->base, start, end, known, n_unknown) < 0)
        return NULL;
    return c;
}

/* ---- Sample --------------------------------------------------------------------------------- */

/* The packed parallel arrays of a Sample, by field number. */
typedef struct {
    size_t n_off;   /* offset of n_<field> */
    size_t arr_off; /* offset of the array pointer */
    mw__kind_t kind;
} rep_field_t;

#define REP(field, name, kind)                                                                     \
    [field] = {offsetof(Mpiwatch__Sample, n_##name), offsetof(Mpiwatch__Sample, name), kind}
#define SAMPLE_REP_END 46 /* packed arrays are fields 3..13, 23..26, 31..35, 38..43, 45 */
static const rep_field_t sample_rep[SAMPLE_REP_END] = {
    REP(3, peer_rank, K_U32),       REP(4, peer_messages, K_U64),  REP(5, peer_bytes, K_U64),
    REP(6, occ_fn, K_U32),          REP(7, occ_sub, K_U32),        REP(8, occ_ns, K_U64),
    REP(9, density_fn, K_U32),      REP(10, density_sub, K_S32),   REP(11, density_bin, K_U32),
    REP(12, density_end, K_U32),    REP(13, density_count, K_U64), REP(23, total_fn, K_U32),
    REP(24, total_calls, K_U64),    REP(25, total_ns, K_U64),      REP(26, total_bytes, K_U64),
    REP(31, region_id, K_U32),      REP(32, region_count, K_U64),  REP(33, region_incl_ns, K_U64),
    REP(34, region_excl_ns, K_U64), REP(35, region_mpi_ns, K_U64), REP(38, site_id, K_U32),
    REP(39, site_fn, K_U32),        REP(40, site_count, K_U64),    REP(41, site_ns, K_U64),
    REP(42, site_bytes, K_U64),     REP(43, site_max_ns, K_U64),   REP(45, peer_fn, K_U32),
};
#undef REP

/* Whether a Sample field is one of its packed arrays. */
static inline int sample_is_rep(uint32_t field)
{
    return (field >= 3 && field <= 13) || (field >= 23 && field <= 26) ||
           (field >= 31 && field <= 35) || (field >= 38 && field <= 43) || field == 45;
}

#define SAMPLE_KNOWN                                                                               \
    (BIT(1) | BIT(2) | BIT(3) | BIT(4) | BIT(5) | BIT(6) | BIT(7) | BIT(8) | BIT(9) | BIT(10) |    \
     BIT(11) | BIT(12) | BIT(13) | BIT(14) | BIT(15) | BIT(16) | BIT(17) | BIT(18) | BIT(21) |     \
     BIT(22) | BIT(23) | BIT(24) | BIT(25) | BIT(26) | BIT(27) | BIT(28) | BIT(29) | BIT(30) |     \
     BIT(31) | BIT(32) | BIT(33) | BIT(34) | BIT(35) | BIT(36) | BIT(37) | BIT(38) | BIT(39) |     \
     BIT(40) | BIT(41) | BIT(42) | BIT(43) | BIT(44) | BIT(45) | BIT(46))

/* Sample.trace (field 28): protobuf-c's own unpacker on the embedded message, in the arena, which
 * is exactly what protobuf-c does for one occurrence. A second occurrence (protobuf-c merges
 * them) and a wrong wire type return NULL: the caller falls back. CommDefs (field 29, a few per
 * job and rank), RegionDefs (30) and CallSiteDefs (37) (sent once per region or site and rank,
 * until a sample carried them) make the whole sample fall back; the region and site entries
 * (31..36, 38..44) and peer_fn (45), in every sample, are decoded here. */
static const uint8_t *dec_trace(mw_arena_t *a, const uint8_t *p, const uint8_t *end, uint32_t wire,
                                Mpiwatch__Trace **out)
{
    const uint8_t *body;
    if (wire != WIRE_LEN || *out || !(p = rd_len(p, end, &body)))
        return NULL;
    if (!(*out = mpiwatch__trace__unpack(&a->allocator, (size_t)(p - body), body)))
        return NULL;
    return p;
}

/* Sample.dormant (field 46, in every sample of a rank that has been dormant): the same way. */
static const uint8_t *dec_dormant(mw_arena_t *a, const uint8_t *p, const uint8_t *end,
                                  uint32_t wire, Mpiwatch__Dormant **out)
{
    const uint8_t *body;
    if (wire != WIRE_LEN || *out || !(p = rd_len(p, end, &body)))
        return NULL;
    if (!(*out = mpiwatch__dormant__unpack(&a->allocator, (size_t)(p - body), body)))
        return NULL;
    return p;
}

static inline size_t *rep_n(Mpiwatch__Sample *s, uint32_t field)
{
    return (size_t *)((char *)s + sample_rep[field].n_off);
}

static inline void **rep_arr(Mpiwatch__Sample *s, uint32_t field)
{
    return (void **)((char *)s + sample_rep[field].arr_off);
}

/* First pass: checks every member header of the Sample, counts the repeated messages and the
 * unknown fields, and bounds each packed array (payload bytes, or 1 per unpacked element). */
static int scan_sample(const uint8_t *p, const uint8_t *end, size_t *n_fn, size_t *n_long,
                       size_t bound[SAMPLE_REP_END], size_t *n_unknown, size_t *n_trace)
{
    size_t n_dormant = 0;
    while (p < end) {
        uint32_t field, wire;
        const uint8_t *body;
        if (!(p = rd_key(p, end, &field, &wire)))
            return -1;
        if (sample_is_rep(field)) {
            if (wire == WIRE_LEN) {
                if (!(p = rd_len(p, end, &body)))
                    return -1;
                bound[field] += (size_t)(p - body);
            } else if (wire == WIRE_VARINT) {
                uint64_t v;
                if (!(p = rd_varint(p, end, &v)))
                    return -1;
                bound[field]++;
            } else {
                return -1;
            }
        } else if (field == 2 || field == 14) {
            if (wire != WIRE_LEN || !(p = rd_len(p, end, &body)))
                return -1;
            ++*(field == 2 ? n_fn : n_long);
        } else if (field == 1 || (field >= 15 && field <= 18) || field == 21 || field == 22 ||
                   field == 27 || field == 36 || field == 44) {
            uint64_t v;
            if (wire != WIRE_VARINT || !(p = rd_varint(p, end, &v)))
                return -1;
        } else if (field == 19 || field == 20 || field == 29 || field == 30 || field == 37) {
            return -1; /* step marks, captures, CommDefs, RegionDefs, CallSiteDefs (rare):
                          protobuf-c decodes the sample */
        } else if (field == 28) {
            if (wire != WIRE_LEN || !(p = rd_len(p, end, &body)) || ++*n_trace > 1)
                return -1; /* a second Trace is merged by protobuf-c: it decodes the sample */
        } else if (field == 46) {
            if (wire != WIRE_LEN || !(p = rd_len(p, end, &body)) || ++n_dormant > 1)
                return -1; /* the same for a second Dormant */
        } else if (!(p = skip_unknown(p, end, field, wire, SAMPLE_KNOWN, n_unknown))) {
            return -1;
        }
    }
    return 0;
}

/* The general decoder of a Sample: a scan of its member headers first (counts and bounds),
 * then the values. Handles every valid encoding. */
static Mpiwatch__Sample *dec_sample_two_pass(mw_arena_t *a, const uint8_t *p, const uint8_t *end)
{
    size_t n_fn = 0, n_long = 0, n_unknown = 0, n_trace = 0, bound[SAMPLE_REP_END] = {0};
    if (scan_sample(p, end, &n_fn, &n_long, bound, &n_unknown, &n_trace) < 0)
        return NULL;
    Mpiwatch__Sample *s = arena_get(a, sizeof *s);
    if (!s)
        return NULL;
    *s = (Mpiwatch__Sample)MPIWATCH__SAMPLE__INIT;
    if ((n_fn && !(s->functions = arena_get(a, n_fn * sizeof *s->functions))) ||
        (n_long && !(s->longest = arena_get(a, n_long * sizeof *s->longest))))
        return NULL;
    for (uint32_t f = 3; f < SAMPLE_REP_END; f++)
        if (sample_is_rep(f) && bound[f] &&
            !(*rep_arr(s, f) = arena_get(a, bound[f] * kind_size(sample_rep[f].kind))))
            return NULL;

    const uint8_t *start = p;
    uint64_t v;
    while (p < end) {
        uint32_t field, wire;
        const uint8_t *body;
        if (!(p = rd_key_next(p, end, &field, &wire)))
            return NULL;
        /* The scan checked every header and wire type: only the values are read here. */
        switch (field) {
        case 1:
            p = rd_varint(p, end, &s->window);
            break;
        case 2:
            if (!(p = rd_len(p, end, &body)) ||
                !(s->functions[s->n_functions++] = mw__dec_function_stat(a, body, p)))
                return NULL;
            break;
        case 14:
            if (!(p = rd_len(p, end, &body)) ||
                !(s->longest[s->n_longest++] = mw__dec_call(a, body, p)))
                return NULL;
            break;
        case 15:
            p = rd_varint(p, end, &s->records_dropped);
            break;
        case 16:
            p = rd_varint(p, end, &s->samples_dropped_total);
            break;
        case 17:
            p = rd_varint(p, end, &s->calls_late);
            break;
        case 18:
            p = rd_varint(p, end, &s->sent_ns);
            break;
        case 21:
            p = rd_varint(p, end, &s->window_ns);
            break;
        case 22:
            p = rd_varint(p, end, &s->window_start_ns);
            break;
        case 27:
            p = rd_varint(p, end, &s->samples_total);
            break;
        case 36:
            p = rd_varint(p, end, &s->regions_dropped);
            break;
        case 44:
            p = rd_varint(p, end, &s->sites_dropped);
            break;
        case 28:
            p = dec_trace(a, p, end, wire, &s->trace);
            break;
        case 46:
            p = dec_dormant(a, p, end, wire, &s->dormant);
            break;
        default:
            if (sample_is_rep(field)) {
                mw__kind_t kind = sample_rep[field].kind;
                if (wire == WIRE_LEN) {
                    if (!(p = rd_len(p, end, &body)) ||
                        mw__append_packed(body, p, kind, *rep_arr(s, field), rep_n(s, field),
                                          bound[field]) < 0)
                        return NULL;
                } else {
                    if (!(p = rd_varint(p, end, &v)) || *rep_n(s, field) == bound[field])
                        return NULL;
                    mw__append_one(v, kind, *rep_arr(s, field), rep_n(s, field));
                }
            } else {
                p = mw__skip_value(p, end, wire);
            }
        }
        if (!p)
            return NULL; /* cannot happen after the scan; kept as a guard */
    }
    for (uint32_t f = 3; f < SAMPLE_REP_END; f++)
        if (sample_is_rep(f) && *rep_n(s, f) == 0)
            *rep_arr(s, f) = NULL; /* only empty chunks: protobuf-c allocates nothing */
    if (n_unknown && mw__keep_unknown(a, &s->base, start, end, SAMPLE_KNOWN, n_unknown) < 0)
        return NULL;
    return s;
}

#define ONE_PASS_MAX 256 /* function summaries, and long calls, the one-pass decoder holds */

/* The common Sample in one pass: each packed array in one chunk (its payload length bounds its
 * elements), at most ONE_PASS_MAX function summaries and long calls (their pointers are kept
 * here until their number is known). Anything else (an unpacked or split array, more
 * summaries) sets *retry: dec_sample_two_pass() then decodes the sample from the start. NULL
 * without *retry: invalid, or the arena is full. */
static Mpiwatch__Sample *dec_sample_one_pass(mw_arena_t *a, const uint8_t *p, const uint8_t *end,
                                             int *retry)
{
    Mpiwatch__FunctionStat *fns[ONE_PASS_MAX];
    Mpiwatch__Call *calls[ONE_PASS_MAX];
    uint64_t seen = 0; /* bit f: packed field f had its chunk */
    size_t n_unknown = 0;
    *retry = 0;
    Mpiwatch__Sample *s = arena_get(a, sizeof *s);
    if (!s)
        return NULL;
    *s = (Mpiwatch__Sample)MPIWATCH__SAMPLE__INIT;
    const uint8_t *start = p;
    while (p < end) {
        uint32_t field, wire;
        const uint8_t *body;
        if (!(p = rd_key_next(p, end, &field, &wire)))
            return NULL;
        switch (KEY(field, wire)) {
        case KEY(1, WIRE_VARINT):
            p = rd_varint(p, end, &s->window);
            break;
        case KEY(2, WIRE_LEN):
            if (s->n_functions == ONE_PASS_MAX) {
                *retry = 1;
                return NULL;
            }
            if (!(p = rd_len(p, end, &body)) ||
                !(fns[s->n_functions++] = mw__dec_function_stat(a, body, p)))
                return NULL;
            break;
        case KEY(14, WIRE_LEN):
            if (s->n_longest == ONE_PASS_MAX) {
                *retry = 1;
                return NULL;
            }
            if (!(p = rd_len(p, end, &body)) || !(calls[s->n_longest++] = mw__dec_call(a, body, p)))
                return NULL;
            break;
        case KEY(15, WIRE_VARINT):
            p = rd_varint(p, end, &s->records_dropped);
            break;
        case KEY(16, WIRE_VARINT):
            p = rd_varint(p, end, &s->samples_dropped_total);
            break;
        case KEY(17, WIRE_VARINT):
            p = rd_varint(p, end, &s->calls_late);
            break;
        case KEY(18, WIRE_VARINT):
            p = rd_varint(p, end, &s->sent_ns);
            break;
        case KEY(21, WIRE_VARINT):
            p = rd_varint(p, end, &s->window_ns);
            break;
        case KEY(22, WIRE_VARINT):
            p = rd_varint(p, end, &s->window_start_ns);
            break;
        case KEY(27, WIRE_VARINT):
            p = rd_varint(p, end, &s->samples_total);
            break;
        case KEY(36, WIRE_VARINT):
            p = rd_varint(p, end, &s->regions_dropped);
            break;
        case KEY(44, WIRE_VARINT):
            p = rd_varint(p, end, &s->sites_dropped);
            break;
        case KEY(28, WIRE_LEN):
            p = dec_trace(a, p, end, wire, &s->trace);
            break;
        case KEY(46, WIRE_LEN):
            p = dec_dormant(a, p, end, wire, &s->dormant);
            break;
        default:
            if (field == 19 || field == 20 || field == 28 || field == 29 || field == 30 ||
                field == 37 || field == 46)
                return NULL; /* step marks, captures, CommDefs, RegionDefs, CallSiteDefs
                                (rare), a Trace of another wire type: protobuf-c decodes the
                                sample */
            if (sample_is_rep(field)) {
                if (wire != WIRE_LEN || (seen >> field & 1)) {
                    *retry = 1; /* unpacked, split, or a wrong wire type: the general way */
                    return NULL;
                }
                seen |= 1ull << field;
                if (!(p = rd_len(p, end, &body)))
                    return NULL;
                size_t bound = (size_t)(p - body);
                if (bound) {
                    mw__kind_t kind = sample_rep[field].kind;
                    void *arr = arena_get(a, bound * kind_size(kind));
                    if (!arr || mw__append_packed(body, p, kind, arr, rep_n(s, field), bound) < 0)
                        return NULL;
                    *rep_arr(s, field) = arr;
                }
            } else {
                p = skip_unknown(p, end, field, wire, SAMPLE_KNOWN, &n_unknown);
            }
        }
        if (!p)
            return NULL;
    }
    if (s->n_functions) {
        if (!(s->functions = arena_get(a, s->n_functions * sizeof *s->functions)))
            return NULL;
        memcpy(s->functions, fns, s->n_functions * sizeof *s->functions);
    }
    if (s->n_longest) {
        if (!(s->longest = arena_get(a, s->n_longest * sizeof *s->longest)))
            return NULL;
        memcpy(s->longest, calls, s->n_longest * sizeof *s->longest);
    }
    if (n_unknown && mw__keep_unknown(a, &s->base, start, end, SAMPLE_KNOWN, n_unknown) < 0)
        return NULL;
    return s;
}

/* A Sample: in one pass when it has the usual form, else in two (the first attempt's
 * allocations are given back to the arena). */
static Mpiwatch__Sample *dec_sample(mw_arena_t *a, const uint8_t *p, const uint8_t *end)
{
    size_t mark = a->used;
    int retry;
    Mpiwatch__Sample *s = dec_sample_one_pass(a, p, end, &retry);
    if (s || !retry)
        return s;
    a->used = mark;
    return dec_sample_two_pass(a, p, end);
}

/* ---- Envelope ------------------------------------------------------------------------------- */

Mpiwatch__Envelope *mw__envelope_decode_fast(mw_arena_t *a, const void *data, size_t len)
{
    static const uint64_t known = BIT(1) | BIT(2) | BIT(3) | BIT(4) | BIT(10) | BIT(11) | BIT(12) |
                                  BIT(13) | BIT(14) | BIT(15);
    const uint8_t *p = data, *end = p + len, *start = p;
    /* A received frame was written by ZeroMQ's I/O thread, often on another core: ask for all
     * its cache lines at once, so that their transfers overlap instead of stalling the decoder
     * one after the other (worth about a third of the decoding time at full load). */
    for (size_t off = 0; off < len && off < 16384; off += 64)
        __builtin_prefetch(p + off);
    /* Samples rely on MW_DECODE_FITS() (above); partials bound protobuf-c's needs themselves
     * (mw_decode_partial.c), which lets the large ones through. */
    const int fits = MW_DECODE_FITS(a, len);
    Mpiwatch__Envelope *env = arena_get(a, sizeof *env);
    if (!env)
        return NULL;
    *env = (Mpiwatch__Envelope)MPIWATCH__ENVELOPE__INIT;
    size_t n_unknown = 0, members = 0, extra = 0;
    uint64_t v;
    while (p < end) {
        uint32_t field, wire;
        const uint8_t *body;
        if (!(p = rd_key(p, end, &field, &wire)))
            return NULL;
        members++;
        switch (KEY(field, wire)) {
        case KEY(1, WIRE_VARINT):
            if (!(p = rd_varint(p, end, &v)))
                return NULL;
            env->version = (uint32_t)v;
            break;
        case KEY(2, WIRE_LEN): {
            if (!(p = rd_len(p, end, &body)))
                return NULL;
            size_t n = (size_t)(p - body);
            char *s = arena_get(a, n + 1);
            if (!s)
                return NULL;
            memcpy(s, body, n);
            s[n] = '\0';
            env->job = s;
            break;
        }
        case KEY(3, WIRE_VARINT):
            if (!(p = rd_varint(p, end, &v)))
                return NULL;
            env->rank = (uint32_t)v;
            break;
        case KEY(4, WIRE_VARINT):
            if (!(p = rd_varint(p, end, &env->seq)))
                return NULL;
            break;
        case KEY(11, WIRE_LEN):
            /* A second body would be freed and replaced (or merged) by protobuf-c: leave it
             * that case. */
            if (!fits || env->body_case != MPIWATCH__ENVELOPE__BODY__NOT_SET ||
                !(p = rd_len(p, end, &body)))
                return NULL;
            if (!(env->sample = dec_sample(a, body, p)))
                return NULL;
            env->body_case = MPIWATCH__ENVELOPE__BODY_SAMPLE;
            break;
        case KEY(14, WIRE_LEN):
            if (env->body_case != MPIWATCH__ENVELOPE__BODY__NOT_SET || !(p = rd_len(p, end, &body)))
                return NULL;
            if (!(env->partial = mw__dec_partial(a, body, p, &extra)))
                return NULL;
            env->body_case = MPIWATCH__ENVELOPE__BODY_PARTIAL;
            break;
        default:
            /* Hellos and byes (rare), and known fields with a wrong wire type (invalid), go to
             * protobuf-c. */
            if (!(p = skip_unknown(p, end, field, wire, known, &n_unknown)))
                return NULL;
        }
    }
    if (n_unknown && mw__keep_unknown(a, &env->base, start, end, known, n_unknown) < 0)
        return NULL;
    /* A partial is accepted only if protobuf-c could not have run out of arena on it: what was
     * allocated here, plus its own overhead on the messages decoded here (the arena was reset
     * before this decoder ran, as it is before protobuf-c runs). */
    if (env->body_case == MPIWATCH__ENVELOPE__BODY_PARTIAL &&
        (extra += members * 80u + 32u) > a->size - a->used)
        return NULL;
    return env;
}
