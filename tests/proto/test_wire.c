/* test_wire.c: the wire helpers (proto/mw_wire.c) and exact JSON integers (proto/mw_json.c).
 *
 * Varints: round trips at every length boundary (7 bits per byte, 1 to 10 bytes), known
 * encodings, keys, and the refusals of the reader: every truncation, an
 * eleventh byte, a read that starts at the end. The UTF-8 check: every class of ill-formed
 * sequence of RFC 3629 (overlong forms, surrogates, past U+10FFFF, stray continuation bytes,
 * cut sequences) and the control characters text from a peer may not hold (C0, DEL, C1).
 * JSON: integers past 2^53 come out digit for digit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "mw_json.h"
#include "mw_wire.h"

/* Values at each length boundary of the varint encoding, and their neighbours. */
static size_t boundary_values(uint64_t *v)
{
    size_t n = 0;
    v[n++] = 0;
    v[n++] = UINT64_MAX;
    for (unsigned b = 7; b < 64; b += 7) {
        v[n++] = (1ull << b) - 1;
        v[n++] = 1ull << b;
        v[n++] = (1ull << b) + 1;
    }
    v[n++] = 1ull << 63;
    v[n++] = (uint64_t)INT64_MAX;
    return n;
}

static void test_varint_round_trip(void **state)
{
    (void)state;
    uint64_t v[40];
    size_t nv = boundary_values(v);
    for (size_t i = 0; i < nv; i++) {
        uint8_t buf[MW_WIRE_VARINT_MAX + 2];
        memset(buf, 0xee, sizeof buf);
        size_t len = mw_wire_put_varint(buf, v[i]);
        assert_int_equal(len, mw_wire_varint_len(v[i]));
        assert_true(len >= 1 && len <= MW_WIRE_VARINT_MAX);
        assert_int_equal(buf[len], 0xee); /* nothing written past it */
        /* Little-endian groups of 7 bits, the continuation bit on all but the last. */
        for (size_t j = 0; j < len; j++) {
            assert_int_equal(buf[j] & 0x7f, (v[i] >> (7 * j)) & 0x7f);
            assert_int_equal(buf[j] >> 7, j + 1 < len);
        }
        /* Expected length: one byte per 7 bits. */
        unsigned bits = v[i] ? 64u - (unsigned)__builtin_clzll(v[i]) : 1u;
        assert_int_equal(len, (bits + 6) / 7);
        /* Read back, alone and after a prefix. */
        size_t pos = 0;
        uint64_t got = 1;
        assert_int_equal(mw_wire_get_varint(buf, len, &pos, &got), 0);
        assert_int_equal(pos, len);
        assert_int_equal(got, v[i]);
        uint8_t two[2 * MW_WIRE_VARINT_MAX];
        size_t a = mw_wire_put_varint(two, 300);
        size_t b = mw_wire_put_varint(two + a, v[i]);
        pos = a;
        assert_int_equal(mw_wire_get_varint(two, a + b, &pos, &got), 0);
        assert_int_equal(pos, a + b);
        assert_int_equal(got, v[i]);
    }
    /* Known encodings (the protobuf documentation's 150 and 300). */
    uint8_t b[MW_WIRE_VARINT_MAX];
    assert_int_equal(mw_wire_put_varint(b, 150), 2);
    assert_memory_equal(b, "\x96\x01", 2);
    assert_int_equal(mw_wire_put_varint(b, 300), 2);
    assert_memory_equal(b, "\xac\x02", 2);
    assert_int_equal(mw_wire_put_varint(b, UINT64_MAX), 10);
    assert_memory_equal(b, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10);
    assert_int_equal(mw_wire_varint_len(0), 1);
    assert_int_equal(mw_wire_varint_len(127), 1);
    assert_int_equal(mw_wire_varint_len(128), 2);
    assert_int_equal(mw_wire_varint_len(UINT64_MAX), 10);
}

static void test_varint_truncated(void **state)
{
    (void)state;
    uint64_t v[40];
    size_t nv = boundary_values(v);
    for (size_t i = 0; i < nv; i++) {
        uint8_t buf[MW_WIRE_VARINT_MAX];
        size_t len = mw_wire_put_varint(buf, v[i]);
        /* Every proper prefix is refused, and nothing is changed. */
        for (size_t cut = 0; cut < len; cut++) {
            size_t pos = 0;
            uint64_t got = 77;
            assert_int_equal(mw_wire_get_varint(buf, cut, &pos, &got), -1);
            assert_int_equal(pos, 0);
            assert_int_equal(got, 77);
        }
    }
    /* A read starting at (or past) the end. */
    uint8_t one = 5;
    size_t pos = 1;
    uint64_t got;
    assert_int_equal(mw_wire_get_varint(&one, 1, &pos, &got), -1);
    assert_int_equal(pos, 1);
    /* Eleven bytes with the continuation bit: longer than any varint, even with more data. */
    uint8_t longv[16];
    memset(longv, 0x80, sizeof longv);
    longv[11] = 0x01;
    pos = 0;
    assert_int_equal(mw_wire_get_varint(longv, sizeof longv, &pos, &got), -1);
    assert_int_equal(pos, 0);
    /* Ten bytes, the last one ending it: the bits past 64 are dropped (protobuf-c does too). */
    memset(longv, 0xff, 9);
    longv[9] = 0x7f;
    pos = 0;
    assert_int_equal(mw_wire_get_varint(longv, 10, &pos, &got), 0);
    assert_int_equal(got, UINT64_MAX);
    assert_int_equal(pos, 10);
    /* A redundant (non-minimal) encoding of 1 is still 1. */
    const uint8_t padded[3] = {0x81, 0x80, 0x00};
    pos = 0;
    assert_int_equal(mw_wire_get_varint(padded, 3, &pos, &got), 0);
    assert_int_equal(got, 1);
    assert_int_equal(pos, 3);
}

static void test_tags(void **state)
{
    (void)state;
    uint8_t buf[MW_WIRE_VARINT_MAX];
    assert_int_equal(mw_wire_put_tag(buf, 1, MW_WIRE_VARINT), 1);
    assert_int_equal(buf[0], 0x08);
    assert_int_equal(mw_wire_put_tag(buf, 2, MW_WIRE_LEN), 1);
    assert_int_equal(buf[0], 0x12);
    assert_int_equal(mw_wire_put_tag(buf, 15, MW_WIRE_I32), 1);
    assert_int_equal(buf[0], 15 << 3 | 5);
    assert_int_equal(mw_wire_put_tag(buf, 16, MW_WIRE_I64), 2); /* 129: two bytes */
    assert_int_equal(buf[0], 0x81);
    assert_int_equal(buf[1], 0x01);
    /* The largest field number protobuf allows, 2^29 - 1: five bytes. */
    size_t n = mw_wire_put_tag(buf, (1u << 29) - 1, MW_WIRE_LEN);
    assert_int_equal(n, 5);
    size_t pos = 0;
    uint64_t key;
    assert_int_equal(mw_wire_get_varint(buf, n, &pos, &key), 0);
    assert_int_equal(key >> 3, (1u << 29) - 1);
    assert_int_equal(key & 7, MW_WIRE_LEN);
}

static int seq(const char *s)
{
    return mw_wire_utf8_seq((const unsigned char *)s, strlen(s));
}

static int text(const char *s)
{
    return mw_wire_text_ok((const unsigned char *)s, strlen(s));
}

static void test_utf8_sequences(void **state)
{
    (void)state;
    assert_int_equal(mw_wire_utf8_seq((const unsigned char *)"a", 0), 0); /* nothing */
    assert_int_equal(seq("a"), 1);
    assert_int_equal(seq("\x7f"), 1);
    assert_int_equal(seq("\xc2\x80"), 2);         /* U+0080 */
    assert_int_equal(seq("\xdf\xbf"), 2);         /* U+07FF */
    assert_int_equal(seq("\xe0\xa0\x80"), 3);     /* U+0800 */
    assert_int_equal(seq("\xed\x9f\xbf"), 3);     /* U+D7FF */
    assert_int_equal(seq("\xee\x80\x80"), 3);     /* U+E000 */
    assert_int_equal(seq("\xef\xbf\xbd"), 3);     /* U+FFFD */
    assert_int_equal(seq("\xf0\x90\x80\x80"), 4); /* U+10000 */
    assert_int_equal(seq("\xf4\x8f\xbf\xbf"), 4); /* U+10FFFF */
    /* Overlong forms. */
    assert_int_equal(seq("\xc0\x80"), 0);
    assert_int_equal(seq("\xc1\xbf"), 0);
    assert_int_equal(seq("\xe0\x9f\xbf"), 0);
    assert_int_equal(seq("\xf0\x8f\xbf\xbf"), 0);
    /* Surrogates, past U+10FFFF, bytes that never start a sequence. */
    assert_int_equal(seq("\xed\xa0\x80"), 0);
    assert_int_equal(seq("\xed\xbf\xbf"), 0);
    assert_int_equal(seq("\xf4\x90\x80\x80"), 0);
    assert_int_equal(seq("\xf5\x80\x80\x80"), 0);
    assert_int_equal(seq("\xff"), 0);
    assert_int_equal(seq("\x80"), 0);
    assert_int_equal(seq("\xbf"), 0);
    /* Cut sequences: by the length given, or by a byte that is not a continuation. */
    assert_int_equal(mw_wire_utf8_seq((const unsigned char *)"\xe2\x82\xac", 2), 0);
    assert_int_equal(mw_wire_utf8_seq((const unsigned char *)"\xf0\x90\x80\x80", 3), 0);
    assert_int_equal(mw_wire_utf8_seq((const unsigned char *)"\xc3", 1), 0);
    assert_int_equal(seq("\xe2\x82"
                         "a"),
                     0);
    assert_int_equal(seq("\xf0\x90\x80"
                         "a"),
                     0);
    assert_int_equal(mw_wire_utf8_seq((const unsigned char *)"\xc3\x00", 2), 0);
}

static void test_text(void **state)
{
    (void)state;
    assert_true(text(""));
    assert_true(text("node-17.cluster_a"));
    assert_true(text("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xc2\xa0"));
    assert_true(text("~ !\"#"));
    /* Control characters: C0 (tab and newline included), DEL, C1 (U+0080..U+009F). */
    assert_false(text("a\tb"));
    assert_false(text("a\nb"));
    assert_false(text("\x1f"));
    assert_false(text("\x7f"));
    assert_false(text("\xc2\x80"));
    assert_false(text("x\xc2\x9fy"));
    assert_true(text("\xc2\xa0"));
    /* A NUL inside the given length is a control character. */
    assert_false(mw_wire_text_ok((const unsigned char *)"ab\0cd", 5));
    /* Ill-formed UTF-8 anywhere, at the end included. */
    assert_false(text("abc\xff"));
    assert_false(text("\xed\xa0\x80"));
    assert_false(text("ok\xe2\x82"));
    assert_false(mw_wire_text_ok((const unsigned char *)"\xc3\xa9", 1));
    assert_true(mw_wire_text_ok((const unsigned char *)"\xc3\xa9", 2));
    /* Every single byte: exactly the printable ASCII ones pass alone. */
    for (unsigned c = 0; c < 256; c++) {
        unsigned char b = (unsigned char)c;
        assert_int_equal(mw_wire_text_ok(&b, 1), c >= 0x20 && c < 0x7f);
    }
    /* Every two-byte sequence: well-formed and not C1. */
    for (unsigned c = 0xc0; c < 0xe0; c++)
        for (unsigned d = 0; d < 256; d++) {
            unsigned char b[2] = {(unsigned char)c, (unsigned char)d};
            int want = c >= 0xc2 && d >= 0x80 && d <= 0xbf && !(c == 0xc2 && d < 0xa0);
            assert_int_equal(mw_wire_text_ok(b, 2), want);
        }
}

static void test_json_integers(void **state)
{
    (void)state;
    cJSON *o = cJSON_CreateObject();
    assert_non_null(o);
    assert_int_equal(mw_json_add_u64(o, "big", UINT64_MAX), 0);
    assert_int_equal(mw_json_add_u64(o, "near", (1ull << 53) + 1), 0);
    assert_int_equal(mw_json_add_i64(o, "min", INT64_MIN), 0);
    assert_int_equal(mw_json_add_i64(o, "neg", -1), 0);
    cJSON *a = cJSON_AddArrayToObject(o, "arr");
    assert_non_null(a);
    cJSON *n = mw_json_u64(1790000000000000001ull);
    assert_non_null(n);
    assert_true(cJSON_AddItemToArray(a, n));
    char *s = cJSON_PrintUnformatted(o);
    assert_non_null(s);
    assert_string_equal(s, "{\"big\":18446744073709551615,\"near\":9007199254740993,"
                           "\"min\":-9223372036854775808,\"neg\":-1,"
                           "\"arr\":[1790000000000000001]}");
    free(s);
    cJSON_Delete(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_varint_round_trip),
        cmocka_unit_test(test_varint_truncated),
        cmocka_unit_test(test_tags),
        cmocka_unit_test(test_utf8_sequences),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_json_integers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
