/* mw_decode.h: what the hand-written decoders of proto/ share (internal to proto/mw_decode*.c).
 *
 * mw_decode.c decodes an Envelope that carries a Sample, mw_decode_partial.c one that carries a
 * Partial; both read the wire with the same primitives, straight into the protobuf-c generated
 * structs in the caller's arena, and both answer only when certain (mw_decode.c's opening
 * comment states the invariant and the fallback). The small readers are inline here; the
 * larger shared pieces (unknown fields, packed arrays, FunctionStat, Call) live in mw_decode.c.
 */
#ifndef MW_DECODE_H
#define MW_DECODE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mw_proto.h"

enum { WIRE_VARINT = 0, WIRE_64BIT = 1, WIRE_LEN = 2, WIRE_32BIT = 5 };

#define BIT(f) (1ull << (f))
#define KEY(field, wire) ((field) << 3 | (wire))

/* ---- reading -------------------------------------------------------------------------------- */

/* The general case of rd_varint() (mw_decode.c). */
const uint8_t *mw__rd_varint_long(const uint8_t *p, const uint8_t *end, uint64_t *out);

/* A varint of at most 10 bytes that ends before `end`; returns the position after it, or NULL
 * when it does not end in time (protobuf-c's limit: its 10th byte must end it). Bits beyond the
 * 64th are dropped, as protobuf-c does. One- and two-byte varints, the most common, are read
 * inline. (Branch-free readers, of up to 8 bytes with one load and a count of trailing zeros,
 * or of one or two bytes, were slower on samples with random values: they put the length on
 * the critical path, where a predicted branch costs nothing.) */
static inline const uint8_t *rd_varint(const uint8_t *p, const uint8_t *end, uint64_t *out)
{
    if (p < end && *p < 0x80) {
        *out = *p;
        return p + 1;
    }
    if (end - p >= 2 && p[1] < 0x80) {
        *out = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
        return p + 2;
    }
    return mw__rd_varint_long(p, end, out);
}

/* A member's key: field number << 3 | wire type, from a tag of at most 5 bytes. Returns the
 * position after it, or NULL. Field number 0 is refused (protobuf-c rejects it too). */
static inline const uint8_t *rd_key(const uint8_t *p, const uint8_t *end, uint32_t *field,
                                    uint32_t *wire)
{
    uint64_t v;
    const uint8_t *q = rd_varint(p, end, &v);
    if (!q || q - p > 5 || v >> 3 == 0)
        return NULL;
    *field = (uint32_t)(v >> 3);
    *wire = (uint32_t)(v & 7);
    return q;
}

/* rd_key() for the next member of a message, p < end: a one-byte key (fields 1..15, the
 * common case) is read inline. */
static inline const uint8_t *rd_key_next(const uint8_t *p, const uint8_t *end, uint32_t *field,
                                         uint32_t *wire)
{
    if (*p < 0x80 && *p >= 8) {
        *field = *p >> 3;
        *wire = *p & 7;
        return p + 1;
    }
    return rd_key(p, end, field, wire);
}

/* The payload of a length-delimited member: sets [*body, *body_end) and returns its end. The
 * prefix may have at most 4 bytes (256 MiB, far beyond MW_MAX_MESSAGE_BYTES); protobuf-c's
 * reading of longer prefixes is left to protobuf-c. */
static inline const uint8_t *rd_len(const uint8_t *p, const uint8_t *end, const uint8_t **body)
{
    uint64_t n;
    const uint8_t *q = rd_varint(p, end, &n);
    if (!q || q - p > 4 || n > (uint64_t)(end - q))
        return NULL;
    *body = q;
    return q + n;
}

/* A double (wire type 64-bit), stored as protobuf-c stores it: the 8 bytes as they are, on
 * the little-endian machines it runs on. */
static inline const uint8_t *rd_double(const uint8_t *p, const uint8_t *end, double *out)
{
    if (end - p < 8)
        return NULL;
    memcpy(out, p, 8);
    return p + 8;
}
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && sizeof(double) == 8,
               "rd_double() copies the wire's little-endian bytes");

/* Skips the value of a member of wire type `wire` starting at p; NULL when it does not fit or
 * the wire type is one protobuf-c refuses (groups, 6, 7). */
const uint8_t *mw__skip_value(const uint8_t *p, const uint8_t *end, uint32_t wire);

/* ---- the arena ------------------------------------------------------------------------------ */

/* 8-byte aligned bump allocation (every member here is at most 8-byte aligned); NULL when the
 * arena is full, which makes the caller fall back. */
static inline void *arena_get(mw_arena_t *a, size_t size)
{
    size_t off = (a->used + 7u) & ~(size_t)7u;
    if (off > a->size || size > a->size - off)
        return NULL;
    a->used = off + size;
    return a->base + off;
}

/* ---- unknown fields ------------------------------------------------------------------------- */

/* Fills msg->unknown_fields with the `n` members of [p, end) whose field number is not in
 * `known` (bit f: field f is in the schema), in order, each with a copy of its bytes, as
 * protobuf-c keeps them. The members were checked by the caller. Returns 0, or -1. */
int mw__keep_unknown(mw_arena_t *a, ProtobufCMessage *msg, const uint8_t *p, const uint8_t *end,
                     uint64_t known, size_t n);

/* Skips an unknown member (field not in `known`) and counts it; NULL when its wire type is
 * invalid or it does not fit. Fields in `known` reaching here have the wrong wire type, which
 * protobuf-c rejects: NULL. */
static inline const uint8_t *skip_unknown(const uint8_t *p, const uint8_t *end, uint32_t field,
                                          uint32_t wire, uint64_t known, size_t *n_unknown)
{
    if (field < 64 && (known >> field & 1))
        return NULL;
    (*n_unknown)++;
    return mw__skip_value(p, end, wire);
}

/* ---- repeated scalars ----------------------------------------------------------------------- */

typedef enum { K_U32, K_S32, K_U64 } mw__kind_t;

/* Appends the varints of [p, end) to an array of `kind` holding *n of `cap` elements (a varint
 * may not run past the end of its chunk). Returns 0, or -1. */
int mw__append_packed(const uint8_t *p, const uint8_t *end, mw__kind_t kind, void *arr, size_t *n,
                      size_t cap);
/* One unpacked element. */
void mw__append_one(uint64_t v, mw__kind_t kind, void *arr, size_t *n);

static inline size_t kind_size(mw__kind_t kind)
{
    return kind == K_U64 ? 8 : 4;
}

/* ---- messages both decoders meet ------------------------------------------------------------ */

/* A FunctionStat or a Call from its payload [p, end); NULL when invalid or the arena is full. */
Mpiwatch__FunctionStat *mw__dec_function_stat(mw_arena_t *a, const uint8_t *p, const uint8_t *end);
Mpiwatch__Call *mw__dec_call(mw_arena_t *a, const uint8_t *p, const uint8_t *end);

/* A Partial from its payload (mw_decode_partial.c); NULL when invalid, unusual or the arena is
 * full. Adds to *extra what protobuf-c would allocate for it beyond what this decoder did. */
Mpiwatch__Partial *mw__dec_partial(mw_arena_t *a, const uint8_t *p, const uint8_t *end,
                                   size_t *extra);

#endif
