/* mw_wire.h: small helpers for bytes on the wire, shared by every writer and reader that
 * handles protobuf by hand (mw_wire.c): varints and field keys, and the one check of text
 * (UTF-8 without control characters) that every string a peer sends has to pass.
 *
 * The varint writers are inline: the collector's recording writer and feed, the load
 * generator and the benchmarks put them on paths that run per message. They need no other
 * library, so the preloaded shim may link this one. The sample decoder (mw_decode.c) keeps its
 * own unrolled reader, its hot path; everything else reads varints with mw_wire_get_varint.
 */
#ifndef MW_WIRE_H
#define MW_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define MW_WIRE_VARINT_MAX 10u /* bytes of the longest varint (64 bits) */

/* Protobuf wire types. */
enum { MW_WIRE_VARINT = 0, MW_WIRE_I64 = 1, MW_WIRE_LEN = 2, MW_WIRE_I32 = 5 };

/* Bytes of the varint of v (1..10). */
static inline size_t mw_wire_varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* Writes the varint of v at p (room for MW_WIRE_VARINT_MAX bytes); returns its length. */
static inline size_t mw_wire_put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* Writes the key of field `field` with wire type `wire` (field << 3 | wire); returns its
 * length. */
static inline size_t mw_wire_put_tag(uint8_t *p, uint32_t field, unsigned wire)
{
    return mw_wire_put_varint(p, (uint64_t)field << 3 | wire);
}

/* Reads the varint at p[*pos] of p[0..len): 0 with the value in *v and *pos past it, or -1
 * (nothing changed) when it runs past len or is longer than MW_WIRE_VARINT_MAX bytes. Bits
 * beyond 64 in the tenth byte are dropped, as protobuf-c does. */
int mw_wire_get_varint(const uint8_t *p, size_t len, size_t *pos, uint64_t *v);

/* Length (1 to 4) of the well-formed UTF-8 sequence (RFC 3629: no overlong forms, no
 * surrogates, nothing past U+10FFFF) that starts at p[0] of the n bytes p[0..n), or 0 when
 * there is none (n == 0 included). */
int mw_wire_utf8_seq(const unsigned char *p, size_t n);
/* Whether p[0..n) is well-formed UTF-8 without control characters (C0, DEL, C1): the rule for
 * every text a peer sends (names, hosts, steering values). 1 or 0. */
int mw_wire_text_ok(const unsigned char *p, size_t n);

#endif
