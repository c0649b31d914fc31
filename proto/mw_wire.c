/* mw_wire.c: reading varints and checking text (mw_wire.h).
 *
 * DESIGN: the UTF-8 check follows RFC 3629 table 3.7 (the ranges of the second byte rule out
 * overlong forms, surrogates and code points past U+10FFFF), so one table replaces the
 * decode-then-compare checks that the collector, the steering request and the JSON writers
 * each had. Text from a peer must also be free of control characters: C0 and DEL are single
 * bytes, C1 (U+0080..U+009F) is the two-byte sequence 0xC2 0x80..0x9F.
 */
#include "mw_wire.h"

int mw_wire_get_varint(const uint8_t *p, size_t len, size_t *pos, uint64_t *v)
{
    uint64_t x = 0;
    size_t i = *pos;
    for (unsigned shift = 0; shift < 7 * MW_WIRE_VARINT_MAX; shift += 7) {
        if (i >= len)
            return -1;
        uint8_t b = p[i++];
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            *pos = i;
            return 0;
        }
    }
    return -1;
}

int mw_wire_utf8_seq(const unsigned char *p, size_t n)
{
    if (n == 0)
        return 0;
    if (p[0] < 0x80)
        return 1;
    int len;
    unsigned char lo = 0x80, hi = 0xbf; /* the range of the second byte */
    if (p[0] >= 0xc2 && p[0] <= 0xdf) {
        len = 2;
    } else if (p[0] >= 0xe0 && p[0] <= 0xef) {
        len = 3;
        lo = p[0] == 0xe0 ? 0xa0 : 0x80; /* no overlong forms */
        hi = p[0] == 0xed ? 0x9f : 0xbf; /* no surrogates */
    } else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
        len = 4;
        lo = p[0] == 0xf0 ? 0x90 : 0x80;
        hi = p[0] == 0xf4 ? 0x8f : 0xbf; /* nothing past U+10FFFF */
    } else {
        return 0;
    }
    if (n < (size_t)len || p[1] < lo || p[1] > hi)
        return 0;
    for (int i = 2; i < len; i++)
        if (p[i] < 0x80 || p[i] > 0xbf)
            return 0;
    return len;
}

int mw_wire_text_ok(const unsigned char *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char c = p[i];
        if (c < 0x20 || c == 0x7f)
            return 0;
        int len = mw_wire_utf8_seq(p + i, n - i);
        if (len == 0 || (c == 0xc2 && p[i + 1] < 0xa0)) /* C1 controls */
            return 0;
        i += (size_t)len;
    }
    return 1;
}
