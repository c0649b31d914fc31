/* test_decode.c: the hand-written decoder (proto/mw_decode.c) against protobuf-c.
 *
 * The property checked on every input: mw_envelope_decode() (the fast decoder, falling back to
 * protobuf-c) accepts exactly the frames protobuf-c accepts, and then yields a deep-equal
 * envelope (pbequal.c compares every field, repeated element and unknown field); and whenever
 * the fast decoder answers on its own, protobuf-c accepts the frame and agrees. Inputs:
 *   - valid messages from testmsg.c as protobuf-c packs them (the fast decoder must take every
 *     sample among them without falling back: that is the speed-up);
 *   - hand-made encodings protobuf-c accepts but its packer never writes: unpacked and split
 *     repeated fields, repeated scalars, unknown fields of every wire type at every level,
 *     overlong and 10-byte varints, uint32 values past 32 bits, fields in reverse order;
 *   - hand-made invalid encodings: truncated and unterminated varints, wrong wire types,
 *     lengths past the end, groups, a 5-byte tag that does not end;
 *   - random mutations of all of the above (bit flips, byte changes, truncation, insertion,
 *     deletion, duplication of a range, splices), from a fixed seed so a failure reproduces;
 *   - the frames of the fuzz seed corpus and of any corpus directories given as arguments
 *     (CTest passes build/tests/fuzz/seeds; the first directory is taken to hold the seeds,
 *     whose samples the fast decoder must all take; others, such as a fuzzing run's corpus,
 *     are only checked for the property), each also mutated.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mw_proto.h"
#include "pbequal.h"
#include "testmsg.h"
#include "testpartial.h"

#define NOW 1700000000000000000ull
#define MUTATIONS 20000 /* per input */

static mw_arena_t arena, arena2;
static char **dirs;
static int n_dirs;

/* Totals over a test, printed at its end. */
static struct {
    unsigned long inputs, pbc_ok, fast_ok, fast_fallback_valid;
} st;

/* ---- the property ----------------------------------------------------------------------- */

/* Checks one frame; returns 1 when the fast decoder answered on its own. */
static int check_frame(const uint8_t *data, size_t len)
{
    st.inputs++;
    Mpiwatch__Envelope *ref = mpiwatch__envelope__unpack(NULL, len, data);
    Mpiwatch__Envelope *got = mw_envelope_decode(&arena, data, len);
    if ((ref == NULL) != (got == NULL)) {
        fprintf(stderr, "frame of %zu bytes: protobuf-c %s it, mw_envelope_decode %s it\n", len,
                ref ? "accepts" : "rejects", got ? "accepts" : "rejects");
        for (size_t i = 0; i < len && i < 256; i++)
            fprintf(stderr, "%02x%s", data[i], (i + 1) % 32 ? " " : "\n");
        fprintf(stderr, "\n");
        fail();
    }
    if (ref) {
        const char *diff = pb_diff(&ref->base, &got->base);
        if (diff) {
            fprintf(stderr, "frame of %zu bytes: decoders differ at %s\n", len, diff);
            fail();
        }
        st.pbc_ok++;
    }
    int fast = 0;
    mw_arena_reset(&arena2); /* the fast decoder checks MW_DECODE_FITS() itself */
    Mpiwatch__Envelope *f = mw__envelope_decode_fast(&arena2, data, len);
    if (f) {
        fast = 1;
        st.fast_ok++;
        assert_non_null(ref); /* the fast decoder never accepts what protobuf-c rejects */
        const char *diff = pb_diff(&ref->base, &f->base);
        if (diff) {
            fprintf(stderr, "fast decoder differs at %s\n", diff);
            fail();
        }
    } else if (ref) {
        st.fast_fallback_valid++;
    }
    if (ref)
        mpiwatch__envelope__free_unpacked(ref, NULL);
    return fast;
}

/* ---- mutations -------------------------------------------------------------------------- */

static uint64_t rng_state = 0x6d77646563u;

static uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static size_t below(size_t n)
{
    return n ? (size_t)(rng() % n) : 0;
}

#define MUT_MAX 65536

/* Applies 1..4 random edits to buf (len bytes, capacity MUT_MAX); returns the new length.
 * `other` is another input for splices. */
static size_t mutate(uint8_t *buf, size_t len, const uint8_t *other, size_t other_len)
{
    static const uint8_t special[] = {0x00, 0x01, 0x7f, 0x80, 0xff, 0x08, 0x0a, 0x5a, 0x12};
    unsigned edits = 1 + (unsigned)below(4);
    for (unsigned e = 0; e < edits; e++) {
        size_t at = below(len + 1), n;
        switch (below(8)) {
        case 0: /* flip a bit */
            if (len)
                buf[below(len)] ^= (uint8_t)(1u << below(8));
            break;
        case 1: /* a random or boundary byte */
            if (len)
                buf[below(len)] = below(2) ? (uint8_t)rng() : special[below(sizeof special)];
            break;
        case 2: /* truncate */
            len = below(len + 1);
            break;
        case 3: /* insert 1..8 bytes */
            n = 1 + below(8);
            if (len + n <= MUT_MAX) {
                memmove(buf + at + n, buf + at, len - at);
                for (size_t i = 0; i < n; i++)
                    buf[at + i] = below(2) ? (uint8_t)rng() : special[below(sizeof special)];
                len += n;
            }
            break;
        case 4: /* delete 1..16 bytes */
            n = below(17);
            if (at + n > len)
                n = len - at;
            memmove(buf + at, buf + at + n, len - at - n);
            len -= n;
            break;
        case 5: /* duplicate a range (members given twice) */
            if (len) {
                size_t from = below(len), cnt = 1 + below(len - from);
                if (len + cnt <= MUT_MAX) {
                    memmove(buf + at + cnt, buf + at, len - at);
                    /* The copy may overlap its source (from just below at). */
                    memmove(buf + at, buf + (from >= at ? from + cnt : from), cnt);
                    len += cnt;
                }
            }
            break;
        case 6: /* splice: the tail of another input */
            if (other_len) {
                size_t from = below(other_len);
                n = other_len - from;
                if (at + n > MUT_MAX)
                    n = MUT_MAX - at;
                memcpy(buf + at, other + from, n);
                len = at + n;
            }
            break;
        default: /* change a byte by +-1 (lengths and varint ends) */
            if (len)
                buf[below(len)] += below(2) ? 1 : 0xff;
        }
    }
    return len;
}

typedef struct {
    uint8_t *data;
    size_t len;
} input_t;

static void check_with_mutations(const input_t *in, size_t n_in, unsigned mutations)
{
    static uint8_t buf[MUT_MAX];
    for (size_t i = 0; i < n_in; i++) {
        check_frame(in[i].data, in[i].len);
        for (unsigned m = 0; m < mutations; m++) {
            size_t len = in[i].len < MUT_MAX ? in[i].len : MUT_MAX;
            memcpy(buf, in[i].data, len);
            const input_t *o = &in[below(n_in)];
            len = mutate(buf, len, o->data, o->len);
            check_frame(buf, len);
        }
    }
}

/* ---- hand-made frames (testmsg.h's encoder) ---------------------------------------------- */

static void env_head(tm_enc_t *e, uint32_t rank)
{
    tm_put_head(e, "job", rank);
}

static input_t keep(const void *p, size_t n)
{
    input_t in = {malloc(n ? n : 1), n};
    assert_non_null(in.data);
    memcpy(in.data, p, n);
    return in;
}

static void free_inputs(input_t *in, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(in[i].data);
}

static void print_stats(const char *what)
{
    print_message("%s: %lu frames, %lu valid, fast decoder answered %lu, fell back on %lu valid\n",
                  what, st.inputs, st.pbc_ok, st.fast_ok, st.fast_fallback_valid);
    memset(&st, 0, sizeof st);
}

/* ---- valid messages as protobuf-c packs them -------------------------------------------- */

static void add_packed(input_t *in, size_t *n, const tm_msg_t *m)
{
    in[*n].len = tm_pack(m, &in[*n].data);
    ++*n;
}

static size_t canonical_inputs(input_t *in)
{
    static tm_msg_t m;
    size_t n = 0;
    tm_hello(&m, "job-1", 3, 8, NOW);
    add_packed(in, &n, &m);
    tm_bye(&m, "job-1", 3);
    m.bye.calls_total = 123456789;
    tm_add_total(&m, 4, 123456780, 99, 1 << 20);
    tm_add_total(&m, 9, 9, 1, 0);
    add_packed(in, &n, &m);
    tm_sample(&m, "job-1", 0, 17000000000ull, NOW); /* empty */
    add_packed(in, &n, &m);

    for (unsigned variant = 0; variant < 4; variant++) {
        tm_sample(&m, variant & 1 ? "" : "job-with-a-longer-name-\xc3\xa9", variant * 1000,
                  17000000000ull + variant, NOW);
        unsigned nfn = variant == 3 ? TM_MAX : 3 + variant * 5;
        for (unsigned i = 0; i < nfn; i++) {
            Mpiwatch__FunctionStat *f =
                tm_add_fn(&m, 1 + i * 7, variant == 2 ? UINT64_MAX - i : 10 + i, 5000 * i + 1,
                          100 + i, 1u << (i % 30), 1ull << (i % 64));
            f->hist_first = i % 5;
            f->n_hist = i % 9;
            for (size_t b = 0; b < f->n_hist; b++)
                f->hist[b] = (uint32_t)(b * 1000003u * (i + 1));
        }
        for (unsigned i = 0; i < 6 + variant * 6 && i < TM_MAX; i++) {
            tm_add_peer(&m, i * 977u, i * 3, (uint64_t)i << (i % 50));
            tm_add_occ(&m, 1 + i, i % TM_SUBSLOTS, 1000u * i);
            tm_add_density(&m, 2 + i, (int32_t)i - 8, i % 40, i & 1, i * i);
        }
        for (unsigned i = 0; i < variant * 8 && i < TM_MAX; i++)
            tm_add_call(&m, 1 + i, NOW - i, 77 * i, i, (int32_t)i - 1);
        m.sample.records_dropped = variant;
        m.sample.samples_dropped_total = variant * 1000;
        m.sample.calls_late = variant == 2 ? UINT64_MAX : 0;
        /* Running totals (Sample.total_*, samples_total): a few, or none in variant 0. */
        for (unsigned i = 0; variant && i < 4 * variant && i < TM_MAX; i++)
            tm_add_total(&m, 1 + i * 3, variant == 2 ? UINT64_MAX - i : 1000 + i,
                         (uint64_t)i << (i % 60), i * 4096);
        m.sample.samples_total = variant == 2 ? UINT64_MAX : variant * 77;
        /* Regions, call sites and per-function peers (Sample 31..36, 38..45), without their
         * definitions (a sample with RegionDefs or CallSiteDefs falls back). */
        for (unsigned i = 0; variant && i < 5 * variant && i < TM_MAX; i++) {
            tm_add_region(&m, 1 + i, variant == 2 ? UINT64_MAX - i : i, 1000u * i + 7,
                          (uint64_t)i << (i % 60), i * 3);
            tm_add_site(&m, 2 + i * 5, 1 + i % 40, 1 + i, variant == 3 ? UINT64_MAX : 99 * i,
                        i << 10, 17 * i);
        }
        m.sample.regions_dropped = variant == 2 ? UINT64_MAX : variant;
        m.sample.sites_dropped = variant * 5;
        if (variant >= 2) { /* peer entries each with their sending function */
            m.sample.n_peer_rank = m.sample.n_peer_messages = m.sample.n_peer_bytes = 0;
            for (unsigned i = 0; i < 6 + variant * 6 && i < TM_MAX; i++)
                tm_add_peer_fn(&m, i * 977u, 1 + i % 7, i * 3, (uint64_t)i << (i % 50));
        }
        if (variant == 3) { /* extreme values of every kind */
            m.env.rank = UINT32_MAX;
            m.env.seq = UINT64_MAX;
            m.density_sub[0] = INT32_MIN;
            m.density_sub[1] = INT32_MAX;
            m.calls[0].peer = INT32_MIN;
            m.calls[1].peer = INT32_MAX;
            m.occ_ns[0] = UINT64_MAX;
        }
        /* A per-call trace (Sample.trace) in variants 1 and 3: the fast decoder takes it. */
        static Mpiwatch__Trace tr;
        mpiwatch__trace__init(&tr);
        tr.window = 17000000000ull + variant;
        tr.state = 1;
        tr.count = 3 * variant;
        tr.encoding = 1;
        tr.raw_bytes = 5;
        tr.records.len = variant == 3 ? 0 : 5;
        tr.records.data = (uint8_t *)"\x01\x02\x03\x04\x05";
        tr.capture = variant == 3 ? UINT64_MAX : 0;
        m.sample.trace = variant & 1 ? &tr : NULL;
        add_packed(in, &n, &m);
        m.sample.trace = NULL;
    }
    return n;
}

static void test_canonical(void **state)
{
    (void)state;
    input_t in[16];
    size_t n = canonical_inputs(in);
    for (size_t i = 0; i < n; i++) {
        int fast = check_frame(in[i].data, in[i].len);
        Mpiwatch__Envelope *env = mw_envelope_decode(&arena, in[i].data, in[i].len);
        assert_non_null(env);
        /* Every sample takes the fast path; hellos and byes are left to protobuf-c. */
        assert_int_equal(fast, env->body_case == MPIWATCH__ENVELOPE__BODY_SAMPLE);
    }
    print_stats("canonical");
    check_with_mutations(in, n, MUTATIONS);
    print_stats("canonical, mutated");
    free_inputs(in, n);
}

/* ---- valid encodings protobuf-c's packer does not write --------------------------------- */

/* A function summary with its histogram split into a packed chunk, an unpacked element and an
 * empty chunk, a field repeated (the last value wins) and unknown fields of each wire type. */
static void odd_function(tm_enc_t *f, uint32_t fn)
{
    static const uint8_t chunk1[] = {1, 2, 0x80, 0x01};
    static const uint8_t nan[8] = {0, 0, 0, 0, 0, 0, 0xf8, 0x7f}; /* a quiet NaN double */
    f->n = 0;
    tm_put_uint(f, 1, fn + 100);
    tm_put_uint(f, 2, 5);
    tm_put_ld(f, 8, chunk1, sizeof chunk1);
    tm_put_uint(f, 8, 77);
    tm_put_ld(f, 8, "", 0);
    tm_put_uint(f, 1, fn); /* the last fn wins */
    tm_put_uint(f, 30, 1); /* unknown varint */
    tm_put_key(f, 31, 1);  /* unknown fixed64: NaN bits */
    tm_put(f, nan, 8);
    tm_put_ld(f, 2000, "xyz", 3); /* unknown bytes, 2-byte tag */
    tm_put_key(f, 536870911, 5);  /* unknown fixed32, largest field number */
    tm_put(f, "abcd", 4);
    tm_put_uint(f, 7, 3);
}

static size_t odd_valid_inputs(input_t *in)
{
    tm_enc_t e, s, f, c;
    size_t n = 0;

    /* 1: unpacked parallel arrays, split chunks, odd functions, repeated scalars. */
    s.n = 0;
    tm_put_uint(&s, 1, 17000000001ull);
    tm_put_uint(&s, 1, 17000000002ull); /* last wins */
    for (uint32_t i = 0; i < 3; i++) {
        tm_put_uint(&s, 3, i + 1); /* peer_rank unpacked */
        tm_put_uint(&s, 4, 10 * i);
    }
    static const uint8_t bytes_chunk[] = {0x80, 0x80, 0x04, 5};
    tm_put_ld(&s, 5, bytes_chunk, sizeof bytes_chunk); /* peer_bytes: two packed ... */
    tm_put_uint(&s, 5, 99);                            /* ... and one unpacked */
    static const uint8_t sub_chunk[] = {0x01, 0x02, 0xff, 0xff, 0xff, 0xff, 0x0f}; /* sint32 */
    tm_put_ld(&s, 10, sub_chunk, sizeof sub_chunk);
    tm_put_ld(&s, 10, sub_chunk, 2);
    for (uint32_t i = 0; i < 3; i++) {
        odd_function(&f, 1 + i);
        tm_put_msg(&s, 2, &f);
    }
    c.n = 0;
    tm_put_uint(&c, 1, 4);
    tm_put_key(&c, 5, 0); /* peer -2 */
    tm_put_varint(&c, 3);
    tm_put_uint(&c, 40, 1); /* unknown in a call */
    tm_put_msg(&s, 14, &c);
    tm_put_ld(&s, 14, "", 0); /* an empty call */
    tm_put_ld(&s, 2, "", 0);  /* an empty function summary */
    tm_put_uint(&s, 45, 5);   /* peer_fn unpacked */
    tm_put_uint(&s, 47, 5);   /* unknown in the sample (19 is Sample.steps, 28-29 traces) */
    tm_put_uint(&s, 31, 4);   /* regions: unpacked, split and packed */
    tm_put_ld(&s, 31, "\x05\x06", 2);
    tm_put_ld(&s, 33, "\x80\x01\x02", 3);
    tm_put_uint(&s, 33, 7);
    tm_put_uint(&s, 36, 9);
    tm_put_uint(&s, 36, 10); /* last wins */
    tm_put_ld(&s, 43, "\x01\x02\x03", 3);
    tm_put_uint(&s, 39, 2);
    tm_put_ld(&s, 39, "\x03", 1);
    tm_put_uint(&s, 44, 11);
    tm_put_ld(&s, 63, "q", 1);
    tm_put_uint(&s, 64, 1);
    tm_put_uint(&s, 18, NOW);
    tm_put_uint(&s, 23, 4); /* running totals: unpacked, split and packed */
    tm_put_ld(&s, 23, "\x05\x06", 2);
    tm_put_ld(&s, 24, "\x80\x01\x02", 3);
    tm_put_uint(&s, 24, 7);
    tm_put_ld(&s, 25, "\x01\x02\x03", 3);
    tm_put_uint(&s, 26, 1);
    tm_put_uint(&s, 26, 2);
    tm_put_ld(&s, 26, "\x03", 1);
    tm_put_uint(&s, 27, 41);
    tm_put_uint(&s, 27, 42); /* last wins */
    env_head(&e, 1);
    tm_put_uint(&e, 9, 1); /* unknown in the envelope, before the body */
    tm_put_msg(&e, 11, &s);
    tm_put_ld(&e, 2, "second-job-wins", 15);
    tm_put_uint(&e, 100, 2);
    in[n++] = keep(e.b, e.n);

    /* 2: overlong varints, 10-byte varints, uint32 values past 32 bits, an overlong tag. */
    s.n = 0;
    tm_put(&s, "\x08\x85\x80\x80\x00", 5);                              /* window 5 in 4 bytes */
    tm_put(&s, "\x78\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11);     /* records_dropped max */
    tm_put(&s, "\x80\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 12); /* extra bits dropped */
    f.n = 0;
    tm_put_key(&f, 1, 0); /* fn: low 32 bits */
    tm_put_varint(&f, (1ull << 32) + 9);
    tm_put_key(&f, 7, 0);
    tm_put_varint(&f, UINT64_MAX);
    tm_put(&f, "\x88\x80\x00\x03", 4); /* field 1 with a 3-byte tag */
    tm_put_msg(&s, 2, &f);
    static const uint8_t big32[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    tm_put_ld(&s, 6, big32, sizeof big32); /* occ_fn: low 32 bits of a 64-bit value */
    env_head(&e, 2);
    tm_put_key(&e, 3, 0); /* rank 1 after truncation */
    tm_put_varint(&e, (1ull << 32) + 1);
    tm_put_msg(&e, 11, &s);
    in[n++] = keep(e.b, e.n);

    /* 3: fields in reverse order, the body first. */
    s.n = 0;
    tm_put_uint(&s, 18, NOW);
    tm_put_ld(&s, 13, "\x01\x02", 2);
    tm_put_ld(&s, 12, "\x01\x00", 2);
    tm_put_ld(&s, 11, "\x05\x06", 2);
    tm_put_ld(&s, 10, "\x03\x04", 2);
    tm_put_ld(&s, 9, "\x07\x07", 2);
    tm_put_uint(&s, 1, 3);
    e.n = 0;
    tm_put_msg(&e, 11, &s);
    tm_put_uint(&e, 4, 1);
    tm_put_uint(&e, 3, 0);
    tm_put_ld(&e, 2, "j", 1);
    tm_put_uint(&e, 1, MW_PROTO_VERSION);
    in[n++] = keep(e.b, e.n);

    /* 3b: more function summaries and long calls than the one-pass decoder holds (300). */
    s.n = 0;
    tm_put_uint(&s, 1, 17000000003ull);
    for (uint32_t i = 0; i < 300; i++) {
        f.n = 0;
        tm_put_uint(&f, 1, 1 + i);
        tm_put_uint(&f, 2, i);
        tm_put_msg(&s, 2, &f);
        c.n = 0;
        tm_put_uint(&c, 3, 1000 + i);
        tm_put_msg(&s, 14, &c);
    }
    env_head(&e, 5);
    tm_put_msg(&e, 11, &s);
    in[n++] = keep(e.b, e.n);

    /* 3c: packed arrays read 8 one-byte varints at a time: blocks of 8, a longer varint at
     * each place of a block, tails of fewer than 8; u32 (density_fn), s32 (density_sub: odd
     * bytes are negative) and u64 (density_count). */
    static const uint8_t mixed[] = {
        1,  2,  3,  4,  5,  6,    7,    8,  9,  10, 11, 12, 13, 14, 15, 0x81, 1, 16,   17, 18, 19,
        20, 21, 22, 23, 24, 0x90, 0x02, 25, 26, 27, 28, 29, 30, 31, 32, 0x7f, 0, 0x7f, 0,  1};
    s.n = 0;
    tm_put_uint(&s, 1, 17000000004ull);
    tm_put_ld(&s, 9, mixed, sizeof mixed);
    tm_put_ld(&s, 10, mixed, sizeof mixed);
    tm_put_ld(&s, 11, mixed, 8); /* density_bin: exactly one block */
    tm_put_ld(&s, 12, mixed + 1, 7);
    tm_put_ld(&s, 13, mixed, sizeof mixed);
    env_head(&e, 6);
    tm_put_msg(&e, 11, &s);
    in[n++] = keep(e.b, e.n);

    /* 3d: varints of every length from 1 to 10 bytes (overlong ones, values past 32 bits in
     * u32 and s32 arrays, past 56 bits, the 10th byte's one bit), each with 10 or more bytes
     * after it in its chunk and near the chunk's end: the word and byte readers of a packed
     * array and its tail. */
    {
        tm_enc_t arr;
        arr.n = 0;
        for (unsigned len = 1; len <= 10; len++) {
            static const uint64_t last[] = {0x00, 0x01, 0x7f};
            for (unsigned k = 0; k < 3; k++) {
                for (unsigned b = 0; b + 1 < len; b++) {
                    uint8_t byte = (uint8_t)(0x80 | (0x35 * (b + 1) + k));
                    tm_put(&arr, &byte, 1);
                }
                uint8_t byte = (uint8_t)(len == 10 ? last[k] & 1 : last[k]);
                tm_put(&arr, &byte, 1);
                tm_put(&arr, "\x05\x06", 2);
            }
        }
        s.n = 0;
        tm_put_uint(&s, 1, 17000000005ull);
        tm_put_ld(&s, 9, arr.b, arr.n);
        tm_put_ld(&s, 10, arr.b, arr.n);
        tm_put_ld(&s, 13, arr.b, arr.n);
        tm_put_ld(&s, 4, arr.b + arr.n - 14, 14); /* peer_messages: the last ones only */
        env_head(&e, 7);
        tm_put_msg(&e, 11, &s);
        in[n++] = keep(e.b, e.n);
    }

    /* 4: an empty sample and an envelope of unknown fields only. */
    env_head(&e, 3);
    tm_put_ld(&e, 11, "", 0);
    in[n++] = keep(e.b, e.n);
    e.n = 0;
    tm_put_uint(&e, 50, 1);
    tm_put_key(&e, 51, 5); /* a NaN float, unknown */
    tm_put(&e, "\x00\x00\xc0\x7f", 4);
    in[n++] = keep(e.b, e.n);
    return n;
}

static void test_odd_valid(void **state)
{
    (void)state;
    input_t in[16];
    size_t n = odd_valid_inputs(in);
    for (size_t i = 0; i < n; i++) {
        /* Valid, and handled by the fast decoder itself rather than by falling back. */
        assert_int_equal(check_frame(in[i].data, in[i].len), 1);
    }
    /* Spot checks that the values are the ones protobuf-c gives (pbequal compares the rest). */
    Mpiwatch__Envelope *env = mw_envelope_decode(&arena, in[0].data, in[0].len);
    assert_string_equal(env->job, "second-job-wins");
    assert_int_equal(env->sample->window, 17000000002ull);
    assert_int_equal(env->sample->n_peer_rank, 3);
    assert_int_equal(env->sample->n_peer_bytes, 3);
    assert_int_equal(env->sample->peer_bytes[0], 65536);
    assert_int_equal(env->sample->n_functions, 4);
    assert_int_equal(env->sample->functions[0]->fn, 1);
    assert_int_equal(env->sample->functions[0]->n_hist, 4);
    assert_int_equal(env->sample->functions[0]->hist[3], 77);
    assert_int_equal(env->sample->functions[0]->base.n_unknown_fields, 4);
    assert_int_equal(env->sample->longest[0]->peer, -2);
    assert_int_equal(env->sample->n_density_sub, 5);
    assert_int_equal(env->sample->density_sub[2], INT32_MIN);
    assert_int_equal(env->base.n_unknown_fields, 2);
    assert_int_equal(env->sample->n_total_fn, 3);
    assert_int_equal(env->sample->total_fn[2], 6);
    assert_int_equal(env->sample->total_calls[0], 128);
    assert_int_equal(env->sample->n_total_bytes, 3);
    assert_int_equal(env->sample->samples_total, 42);
    assert_int_equal(env->sample->n_region_id, 3);
    assert_int_equal(env->sample->region_id[2], 6);
    assert_int_equal(env->sample->n_region_incl_ns, 3);
    assert_int_equal(env->sample->region_incl_ns[0], 128);
    assert_int_equal(env->sample->regions_dropped, 10);
    assert_int_equal(env->sample->sites_dropped, 11);
    assert_int_equal(env->sample->n_site_fn, 2);
    assert_int_equal(env->sample->n_peer_fn, 1);
    assert_int_equal(env->sample->base.n_unknown_fields, 3);
    env = mw_envelope_decode(&arena, in[1].data, in[1].len);
    assert_int_equal(env->rank, 1);
    assert_int_equal(env->sample->window, 5);
    assert_int_equal(env->sample->functions[0]->fn, 3);
    assert_int_equal(env->sample->records_dropped, UINT64_MAX);
    assert_int_equal(env->sample->occ_fn[0], UINT32_MAX);
    env = mw_envelope_decode(&arena, in[3].data, in[3].len);
    assert_int_equal(env->sample->n_functions, 300);
    assert_int_equal(env->sample->functions[299]->count, 299);
    assert_int_equal(env->sample->n_longest, 300);
    env = mw_envelope_decode(&arena, in[4].data, in[4].len);
    assert_int_equal(env->sample->n_density_fn, 39);
    assert_int_equal(env->sample->density_fn[8], 9);
    assert_int_equal(env->sample->density_fn[15], 129);
    assert_int_equal(env->sample->density_fn[25], 272);
    assert_int_equal(env->sample->density_fn[38], 1);
    assert_int_equal(env->sample->density_sub[0], -1);
    assert_int_equal(env->sample->density_sub[1], 1);
    assert_int_equal(env->sample->density_sub[15], -65);
    assert_int_equal(env->sample->density_sub[34], -64);
    assert_int_equal(env->sample->n_density_bin, 8);
    assert_int_equal(env->sample->density_bin[7], 8);
    assert_int_equal(env->sample->n_density_end, 7);
    assert_int_equal(env->sample->density_end[6], 8);
    assert_int_equal(env->sample->n_density_count, 39);
    assert_int_equal(env->sample->density_count[25], 272);
    assert_int_equal(env->sample->density_count[35], 0);
    print_stats("valid odd encodings");
    check_with_mutations(in, n, MUTATIONS);
    print_stats("valid odd encodings, mutated");
    free_inputs(in, n);
}

/* ---- invalid encodings, and valid ones the fast decoder leaves to protobuf-c ------------ */

static void test_invalid_and_fallback(void **state)
{
    (void)state;
    tm_enc_t e, s;
    input_t in[32];
    size_t n = 0;
    int expect_valid[32];

    s.n = 0;
    tm_put_uint(&s, 1, 17000000000ull);
    tm_put_ld(&s, 3, "\x01\x02", 2);
    tm_put_ld(&s, 4, "\x01\x02", 2);
    tm_put_ld(&s, 5, "\x01\x02", 2);

#define ADD(valid)                                                                                 \
    do {                                                                                           \
        expect_valid[n] = (valid);                                                                 \
        in[n++] = keep(e.b, e.n);                                                                  \
    } while (0)
    /* A varint cut short at the end of the frame. */
    env_head(&e, 0);
    tm_put_msg(&e, 11, &s);
    tm_put(&e, "\x20\xff\xff", 3);
    ADD(0);
    /* An 11-byte varint. */
    env_head(&e, 0);
    tm_put(&e, "\x20\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12);
    ADD(0);
    /* A packed chunk whose last varint runs past the chunk. */
    env_head(&e, 0);
    {
        tm_enc_t t = s;
        tm_put_ld(&t, 8, "\x01\x81", 2);
        tm_put_msg(&e, 11, &t);
    }
    ADD(0);
    /* Wrong wire types: version as bytes, the sample as a varint, a packed field as fixed64, a
     * function summary as fixed32, a group. */
    env_head(&e, 0);
    tm_put_ld(&e, 1, "\x01", 1);
    ADD(0);
    env_head(&e, 0);
    tm_put_uint(&e, 11, 1);
    ADD(0);
    env_head(&e, 0);
    {
        tm_enc_t t = s;
        tm_put_key(&t, 4, 1); /* NaN bits */
        tm_put(&t, "\x00\x00\x00\x00\x00\x00\xf8\x7f", 8);
        tm_put_msg(&e, 11, &t);
    }
    ADD(0);
    env_head(&e, 0);
    {
        tm_enc_t t = s;
        tm_put_key(&t, 2, 5);
        tm_put(&t, "abcd", 4);
        tm_put_msg(&e, 11, &t);
    }
    ADD(0);
    env_head(&e, 0);
    tm_put_key(&e, 20, 3);
    tm_put_key(&e, 20, 4);
    ADD(0);
    env_head(&e, 0);
    tm_put_key(&e, 20, 7);
    ADD(0);
    /* A length past the end, and an enormous one. */
    env_head(&e, 0);
    tm_put_key(&e, 11, 2);
    tm_put_varint(&e, 1000);
    tm_put(&e, "\x08\x01", 2);
    ADD(0);
    env_head(&e, 0);
    tm_put(&e, "\x5a\xff\xff\xff\xff\x0f\x08\x01\x08\x01", 10);
    ADD(0);
    /* A tag that does not end within 5 bytes. */
    env_head(&e, 0);
    tm_put(&e, "\xf8\xff\xff\xff\xff\x01\x00", 7);
    ADD(0);

    /* Field number 0 (protobuf-c 1.4 rejects it). */
    env_head(&e, 0);
    tm_put_uint(&e, 0, 5);
    ADD(0);

    /* Valid, but left to protobuf-c: a hello, a bye, two bodies, a sample with a 5-byte length
     * prefix. */
    env_head(&e, 0);
    tm_put_ld(&e, 10, "\x08\x04", 2);
    ADD(1);
    env_head(&e, 0);
    tm_put_ld(&e, 12, "\x08\x04", 2);
    ADD(1);
    env_head(&e, 0);
    tm_put_msg(&e, 11, &s);
    tm_put_msg(&e, 11, &s);
    ADD(1);
    env_head(&e, 0);
    tm_put_msg(&e, 11, &s);
    tm_put_ld(&e, 10, "", 0);
    ADD(1);
    env_head(&e, 0);
    tm_put_key(&e, 11, 2);
    tm_put(&e, "\x82\x80\x80\x80\x00\x08\x01", 7);
    ADD(1);
    /* RegionDefs and CallSiteDefs (rare: once per region or site and rank) go to protobuf-c. */
    env_head(&e, 0);
    {
        tm_enc_t t = s, d;
        d.n = 0;
        tm_put_uint(&d, 1, 1);
        tm_put_ld(&d, 2, "solve", 5);
        tm_put_uint(&d, 3, 1);
        tm_put_msg(&t, 30, &d);
        tm_put_ld(&t, 31, "\x01", 1);
        tm_put_ld(&t, 32, "\x02", 1);
        tm_put_msg(&e, 11, &t);
    }
    ADD(1);
    env_head(&e, 0);
    {
        tm_enc_t t = s, d;
        d.n = 0;
        tm_put_uint(&d, 1, 1);
        tm_put_ld(&d, 3, "/bin/app", 8);
        tm_put_uint(&d, 4, 0x1234);
        tm_put_ld(&d, 6, "app.c", 5);
        tm_put_uint(&d, 7, 42);
        tm_put_msg(&t, 37, &d);
        tm_put_msg(&e, 11, &t);
    }
    ADD(1);
    /* A region scalar with a wrong wire type. */
    env_head(&e, 0);
    {
        tm_enc_t t = s;
        tm_put_ld(&t, 36, "\x01", 1);
        tm_put_msg(&e, 11, &t);
    }
    ADD(0);
#undef ADD

    for (size_t i = 0; i < n; i++) {
        print_message("case %zu\n", i);
        assert_int_equal(check_frame(in[i].data, in[i].len), 0);
        Mpiwatch__Envelope *env = mw_envelope_decode(&arena, in[i].data, in[i].len);
        assert_int_equal(env != NULL, expect_valid[i]);
    }
    print_stats("invalid and left to protobuf-c");
    check_with_mutations(in, n, MUTATIONS);
    print_stats("invalid and left to protobuf-c, mutated");
    free_inputs(in, n);
}

/* ---- the arena bound ------------------------------------------------------------------------ */

/* MW_DECODE_FITS() lets the fast decoder try a frame only when protobuf-c could not run out of
 * arena on it: checked here with the installed protobuf-c on frames that cost it the most
 * memory per byte (empty embedded messages, 2-byte unknown fields, 1-byte packed 64-bit
 * values), as large as the bound allows for a 1 MiB arena. */
static void test_arena_bound(void **state)
{
    (void)state;
    mw_arena_t small;
    assert_int_equal(mw_arena_init(&small, 1u << 20), 0);
    size_t limit = ((1u << 20) - MW_DECODE_SLACK_BYTES) / MW_DECODE_BYTES_RATIO;
    assert_true(MW_DECODE_FITS(&small, limit) && !MW_DECODE_FITS(&small, limit + 1));
    static const struct {
        const char *what, *member; /* one member of the sample, repeated; NULL: packed */
        size_t len;
    } kinds[] = {{"empty function summaries", "\x12\x00", 2},
                 {"empty long calls", "\x72\x00", 2},
                 {"unknown fields (47: 1)", "\xf8\x02\x01", 3},
                 {"one packed array of 1-byte 64-bit values", NULL, 1}};
    for (int kind = 0; kind < 4; kind++) {
        tm_enc_t e, s;
        s.n = 0;
        size_t room = limit - 24; /* the envelope header and the sample's key and length */
        if (!kinds[kind].member) {
            static uint8_t ones[8192];
            memset(ones, 1, sizeof ones);
            tm_put_key(&s, 8, 2);
            tm_put_varint(&s, room - 3);
            tm_put(&s, ones, room - 3);
        }
        while (kinds[kind].member && s.n + kinds[kind].len <= room)
            tm_put(&s, kinds[kind].member, kinds[kind].len);
        tm_put_head(&e, "j", 1);
        tm_put_msg(&e, 11, &s);
        assert_true(e.n <= limit);
        mw_arena_reset(&small);
        Mpiwatch__Envelope *ref = mw__envelope_decode_pbc(&small, e.b, e.n);
        assert_non_null(ref); /* protobuf-c did not run out of the arena */
        assert_int_equal(small.failed, 0);
        print_message("%s: %zu bytes, protobuf-c used %zu bytes of arena (%.0f per byte)\n",
                      kinds[kind].what, e.n, small.used, (double)small.used / (double)e.n);
        assert_true(small.used <= MW_DECODE_BYTES_RATIO * e.n + MW_DECODE_SLACK_BYTES);
        Mpiwatch__Envelope *copy = mpiwatch__envelope__unpack(NULL, e.n, e.b);
        mw_arena_reset(&small);
        Mpiwatch__Envelope *fast = mw__envelope_decode_fast(&small, e.b, e.n);
        assert_non_null(fast);
        assert_null(pb_diff(&copy->base, &fast->base));
        mpiwatch__envelope__free_unpacked(copy, NULL);
    }
    mw_arena_free(&small);
}

/* ---- the fuzz corpus ------------------------------------------------------------------------ */

/* Appends the frames of one fuzz_ingest script (tests/fuzz/fuzz_ingest.c) to in[]. */
static size_t script_frames(const uint8_t *p, size_t size, input_t *in, size_t n, size_t max)
{
    const uint8_t *end = p + size;
    while (p < end && n < max) {
        uint8_t op = *p++;
        int frame = (op & 3) < 2 || ((op & 3) == 3 && ((op >> 2) & 3) == 0);
        if (!frame)
            continue;
        size_t want = 0;
        if (end - p >= 2) {
            want = (size_t)p[0] | (size_t)p[1] << 8;
            p += 2;
        } else {
            p = end;
        }
        if (want > (size_t)(end - p))
            want = (size_t)(end - p);
        in[n++] = keep(p, want);
        p += want;
    }
    return n;
}

static void test_fuzz_corpus(void **state)
{
    (void)state;
    enum { MAX_FRAMES = 4096 };
    input_t *in = calloc(MAX_FRAMES, sizeof *in);
    assert_non_null(in);
    size_t n = 0, n_seeds = 0;
    if (n_dirs == 0)
        print_message("no corpus directory given: only the built-in inputs are checked\n");
    for (int d = 0; d < n_dirs; d++) {
        if (d == 1)
            n_seeds = n;
        DIR *dir = opendir(dirs[d]);
        if (!dir) {
            print_message("%s: cannot open, skipped\n", dirs[d]);
            continue;
        }
        struct dirent *de;
        while ((de = readdir(dir)) && n < MAX_FRAMES) {
            if (de->d_name[0] == '.')
                continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", dirs[d], de->d_name);
            FILE *f = fopen(path, "rb");
            if (!f)
                continue;
            static uint8_t buf[1 << 20];
            size_t len = fread(buf, 1, sizeof buf, f);
            fclose(f);
            n = script_frames(buf, len, in, n, MAX_FRAMES);
        }
        closedir(dir);
    }
    if (n_dirs == 1)
        n_seeds = n;
    size_t valid_samples = 0, partials = 0;
    for (size_t i = 0; i < n; i++) {
        int fast = check_frame(in[i].data, in[i].len);
        Mpiwatch__Envelope *env = mw_envelope_decode(&arena, in[i].data, in[i].len);
        if (i < n_seeds && env && env->body_case == MPIWATCH__ENVELOPE__BODY_PARTIAL) {
            partials++; /* an aggregator's (seeds.c): the fast decoder takes them all */
            assert_int_equal(fast, 1);
        }
        if (i < n_seeds && env && env->body_case == MPIWATCH__ENVELOPE__BODY_SAMPLE) {
            const Mpiwatch__Sample *s = env->sample;
            valid_samples++;
            /* The seeds are packed by protobuf-c: no fallback, except on the definitions left
             * to protobuf-c (communicators, regions, call sites). */
            if (!s->n_comms && !s->n_region_defs && !s->n_site_defs)
                assert_int_equal(fast, 1);
        }
    }
    if (n_dirs > 0)
        assert_true(n == 0 || (valid_samples > 0 && partials > 0));
    print_stats("fuzz corpus");
    check_with_mutations(in, n, n > 200 ? 500 : 5000);
    print_stats("fuzz corpus, mutated");
    free_inputs(in, n);
    free(in);
}

/* ---- partials (proto/mw_decode_partial.c) --------------------------------------------------- */

#define PJOB "decode-partial-job"
#define P_RANKS 24
#define P_WINDOWS 4

/* An aggregator's AggState and partials (testpartial.h), as a parent receives them. */
static size_t real_partials(input_t *in)
{
    tp_frame_t f[P_WINDOWS + 1];
    size_t n = tp_aggregator_frames(PJOB, P_RANKS, P_WINDOWS, 3, f, P_WINDOWS + 1);
    assert_int_equal(n, P_WINDOWS + 1);
    for (size_t i = 0; i < n; i++)
        in[i] = (input_t){f[i].b, f[i].n};
    return n;
}

/* Every partial an aggregator writes is taken by the fast decoder (that is the speed-up) and
 * equals protobuf-c's; the AggState is left to protobuf-c. The partials carry every per-rank
 * array, functions with their spread, long calls and definitions, so that none is untested. */
static void test_partial_real(void **state)
{
    (void)state;
    input_t in[P_WINDOWS + 1];
    size_t n = real_partials(in);
    for (size_t i = 0; i < n; i++) {
        int fast = check_frame(in[i].data, in[i].len);
        Mpiwatch__Envelope *env = mw_envelope_decode(&arena, in[i].data, in[i].len);
        assert_non_null(env);
        if (i == 0) {
            assert_int_equal(env->body_case, MPIWATCH__ENVELOPE__BODY_AGG);
            assert_int_equal(fast, 0);
            continue;
        }
        assert_int_equal(env->body_case, MPIWATCH__ENVELOPE__BODY_PARTIAL);
        assert_int_equal(fast, 1);
        const Mpiwatch__Partial *pa = env->partial;
        const Mpiwatch__Window *w = pa->window;
        assert_non_null(w);
        assert_int_equal(pa->n_rank_pm, P_RANKS);
        assert_int_equal(w->ranks_reporting, P_RANKS);
        assert_true(pa->n_rank_first >= 1 && pa->n_fn_order > 0);
        assert_true(w->n_functions >= 5 && w->n_longest > 0 && w->n_occ_fn > 0 &&
                    w->n_density_sub > 0 && w->n_pair_src > 0 && w->n_fpair_fn > 0 &&
                    w->n_rf_rank >= P_RANKS && w->n_rr_rank > 0 && w->n_regions > 0 &&
                    w->n_sites > 0);
        assert_true(w->functions[0]->spread_ranks > 0 && w->functions[0]->n_hist > 0);
        if (i == 1) /* the definitions come with the first window */
            assert_true(pa->n_region_defs == 1 && pa->n_site_defs == 1);
    }
    print_stats("real partials");
    check_with_mutations(in, n, MUTATIONS / 4);
    print_stats("real partials, mutated");
    free_inputs(in, n);
}

/* The bytes of a message as protobuf-c packs it. */
static void put_packed(tm_enc_t *e, const ProtobufCMessage *m)
{
    size_t n = protobuf_c_message_get_packed_size(m);
    assert_true(e->n + n <= sizeof e->b);
    protobuf_c_message_pack(m, e->b + e->n);
    e->n += n;
}

static void put_packed_field(tm_enc_t *e, uint64_t field, const ProtobufCMessage *m)
{
    tm_enc_t inner;
    inner.n = 0;
    put_packed(&inner, m);
    tm_put_msg(e, field, &inner);
}

/* Packed uint32 values as one chunk of field `field`. */
static void put_u32s(tm_enc_t *e, uint64_t field, const uint32_t *v, size_t n)
{
    tm_enc_t c;
    c.n = 0;
    for (size_t i = 0; i < n; i++)
        tm_put_varint(&c, v[i]);
    tm_put_msg(e, field, &c);
}

/* Partials protobuf-c's packer never writes, built from a real one: split, unpacked and empty
 * chunks, repeated scalars, unknown fields at every level, every rare nested message; the
 * unusual ones the fast decoder leaves to protobuf-c (a second Window, a 5-byte length), and
 * invalid ones (wrong wire types, lengths past the end, every truncation of a partial). */
static void test_partial_crafted(void **state)
{
    (void)state;
    input_t real[P_WINDOWS + 1];
    size_t n_real = real_partials(real);
    Mpiwatch__Envelope *ref = mpiwatch__envelope__unpack(NULL, real[1].len, real[1].data);
    assert_non_null(ref);
    const Mpiwatch__Partial *pa = ref->partial;
    tm_enc_t win; /* the real Window */
    win.n = 0;
    put_packed(&win, &pa->window->base);

    /* The rare nested messages, each with values in every field. */
    Mpiwatch__FunctionStat fs = MPIWATCH__FUNCTION_STAT__INIT, *fsp = &fs;
    fs.fn = pa->window->functions[0]->fn;
    fs.count = 3;
    fs.rank_sd_ns = 1.5;
    fs.spread_ranks = 2;
    fs.spread_sq_lo = UINT64_MAX;
    uint32_t src[2] = {0, 1};
    uint64_t msgs[2] = {1, UINT64_MAX};
    Mpiwatch__Step step = MPIWATCH__STEP__INIT;
    step.step = 9;
    step.end_ns = 7;
    step.ranks = 2;
    step.n_functions = 1;
    step.functions = &fsp;
    step.n_pair_src = step.n_pair_dst = step.n_pair_messages = step.n_pair_bytes = 2;
    step.pair_src = step.pair_dst = src;
    step.pair_messages = step.pair_bytes = msgs;
    Mpiwatch__Dormant dor = MPIWATCH__DORMANT__INIT;
    dor.n_fn = dor.n_calls = dor.n_bytes = 2;
    dor.fn = src;
    dor.calls = dor.bytes = msgs;
    dor.spans_folded = 4;
    Mpiwatch__RankDormant rd = MPIWATCH__RANK_DORMANT__INIT;
    rd.rank = 1;
    rd.dormant = &dor;
    Mpiwatch__Region reg = MPIWATCH__REGION__INIT;
    reg.id = 2;
    reg.name = "crafted";
    reg.source = 1;
    Mpiwatch__CallSite cs = MPIWATCH__CALL_SITE__INIT;
    cs.id = 2;
    cs.module = "/m";
    cs.function = "f";
    cs.file = "";
    cs.line = 3;
    Mpiwatch__Trace tr = MPIWATCH__TRACE__INIT;
    tr.window = pa->window->index;
    tr.state = 1;
    tr.records.len = 3;
    tr.records.data = (uint8_t *)"abc";
    Mpiwatch__RankTrace rt = MPIWATCH__RANK_TRACE__INIT;
    rt.rank = 1;
    rt.trace = &tr;
    Mpiwatch__CommDef cd = MPIWATCH__COMM_DEF__INIT;
    cd.id = 5;
    cd.size = 2;
    Mpiwatch__RegionStat rs = MPIWATCH__REGION_STAT__INIT;
    rs.region = 2;
    rs.count = UINT64_MAX;
    Mpiwatch__SiteStat ss = MPIWATCH__SITE_STAT__INIT;
    ss.site = 2;
    ss.top_rank_ns = 1;

    static input_t in[64];
    static int expect_fast[64], expect_valid[64];
    size_t n = 0;
    tm_enc_t e, p, w;
#define BEGIN() (p.n = 0, w = win)
#define ADD(fast, valid)                                                                           \
    do {                                                                                           \
        e.n = 0;                                                                                   \
        tm_put_head(&e, PJOB, 3);                                                                  \
        tm_put_msg(&e, 14, &p);                                                                    \
        assert_true(n < 64);                                                                       \
        expect_fast[n] = (fast), expect_valid[n] = (valid);                                        \
        in[n++] = keep(e.b, e.n);                                                                  \
    } while (0)
#define RANKS()                                                                                    \
    do {                                                                                           \
        put_u32s(&p, 2, pa->rank_first, pa->n_rank_first);                                         \
        put_u32s(&p, 3, pa->rank_count, pa->n_rank_count);                                         \
        put_u32s(&p, 4, pa->rank_pm, pa->n_rank_pm);                                               \
        tm_put_uint(&p, 5, pa->samples);                                                           \
    } while (0)

    /* As protobuf-c would write it, the fields in another order. */
    BEGIN();
    RANKS();
    tm_put_msg(&p, 1, &w);
    ADD(1, 1);
    /* Split, unpacked and empty chunks; a field with only an empty chunk (NULL, 0). */
    BEGIN();
    put_u32s(&p, 2, pa->rank_first, pa->n_rank_first);
    put_u32s(&p, 3, pa->rank_count, pa->n_rank_count);
    put_u32s(&p, 4, pa->rank_pm, 5);
    put_u32s(&p, 4, NULL, 0);
    for (size_t i = 5; i < 9; i++)
        tm_put_uint(&p, 4, pa->rank_pm[i]);
    put_u32s(&p, 4, pa->rank_pm + 9, pa->n_rank_pm - 9);
    put_u32s(&p, 10, NULL, 0);
    put_u32s(&w, 41, NULL, 0); /* a second, empty chunk of rf_fn */
    tm_put_uint(&w, 40, 0);    /* an unpacked element after a chunk: rf_rank one longer */
    tm_put_msg(&p, 1, &w);
    ADD(1, 1);
    /* Repeated scalars (the last wins), values past 32 bits in uint32 fields, 10-byte varints. */
    BEGIN();
    tm_put_uint(&w, 1, 5);
    tm_put_uint(&w, 5, 0x100000000ull | P_RANKS);
    tm_put(&w, "\x38\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11); /* mpi_time_ns = 2^64 - 1 */
    RANKS();
    tm_put_uint(&p, 5, 1); /* samples again */
    tm_put_msg(&p, 1, &w);
    ADD(1, 1);
    /* Unknown fields of every wire type in the Partial, its Window and a FunctionStat. */
    BEGIN();
    {
        tm_enc_t f;
        f.n = 0;
        tm_put_uint(&f, 1, fs.fn);
        tm_put_uint(&f, 30, 7);
        tm_put_key(&f, 31, 1);
        tm_put(&f, "12345678", 8);
        tm_put_msg(&w, 13, &f);
    }
    tm_put_uint(&w, 57, 1);
    tm_put_ld(&w, 200, "xyz", 3);
    tm_put_key(&w, 63, 5);
    tm_put(&w, "1234", 4);
    tm_put_msg(&p, 1, &w);
    RANKS();
    tm_put_uint(&p, 11, 3);
    tm_put_key(&p, 12, 1);
    tm_put(&p, "87654321", 8);
    tm_put_ld(&p, 99, "", 0);
    ADD(1, 1);
    /* Every rare nested message: steps, dormant figures, definitions; traces, communicators,
     * region and site figures; a function with its spread; an empty Window. */
    BEGIN();
    put_packed_field(&w, 30, &rt.base);
    put_packed_field(&w, 30, &rt.base);
    put_packed_field(&w, 33, &cd.base);
    put_packed_field(&w, 36, &rs.base);
    put_packed_field(&w, 37, &ss.base);
    put_packed_field(&w, 13, &fs.base);
    tm_put_msg(&p, 1, &w);
    RANKS();
    put_packed_field(&p, 6, &step.base);
    put_packed_field(&p, 7, &rd.base);
    put_packed_field(&p, 7, &rd.base);
    put_packed_field(&p, 8, &reg.base);
    put_packed_field(&p, 9, &cs.base);
    ADD(1, 1);
    BEGIN();
    tm_put_ld(&p, 1, "", 0);
    ADD(1, 1);
    BEGIN(); /* no Window at all */
    RANKS();
    ADD(1, 1);
    /* Left to protobuf-c: a second Window (merged), a 5-byte length prefix, a Partial and a
     * Sample in one envelope. */
    BEGIN();
    tm_put_msg(&p, 1, &w);
    tm_put_msg(&p, 1, &w);
    ADD(0, 1);
    BEGIN();
    tm_put_key(&p, 2, 2);
    tm_put(&p, "\x81\x80\x80\x80\x00\x01", 6);
    ADD(0, 1);
    BEGIN();
    RANKS();
    e.n = 0;
    tm_put_head(&e, PJOB, 3);
    tm_put_msg(&e, 14, &p);
    tm_put_ld(&e, 11, "", 0);
    in[n] = keep(e.b, e.n), expect_fast[n] = 0, expect_valid[n++] = 1;
    /* Invalid: wrong wire types, a length past the end, a packed varint cut by its chunk. */
    BEGIN();
    tm_put_uint(&p, 1, 1); /* the Window as a varint */
    ADD(0, 0);
    BEGIN();
    tm_put_key(&p, 2, 5); /* rank_first as fixed32 */
    tm_put(&p, "1234", 4);
    ADD(0, 0);
    BEGIN();
    tm_put_ld(&w, 13, "\x08", 1); /* a FunctionStat whose fn has no value */
    tm_put_msg(&p, 1, &w);
    ADD(0, 0);
    BEGIN();
    tm_put_ld(&w, 42, "\x01\x80", 2); /* rf_count: a varint that does not end in its chunk */
    tm_put_msg(&p, 1, &w);
    ADD(0, 0);
    BEGIN();
    tm_put_ld(&w, 2, "\x01", 1); /* window_ns as bytes */
    tm_put_msg(&p, 1, &w);
    ADD(0, 0);
    BEGIN();
    tm_put_key(&p, 1, 2);
    tm_put_varint(&p, win.n + 1); /* past the end */
    tm_put(&p, win.b, win.n);
    ADD(0, 0);
#undef ADD
#undef BEGIN
#undef RANKS
    for (size_t i = 0; i < n; i++) {
        print_message("partial case %zu\n", i);
        assert_int_equal(check_frame(in[i].data, in[i].len), expect_fast[i]);
        Mpiwatch__Envelope *env = mw_envelope_decode(&arena, in[i].data, in[i].len);
        assert_int_equal(env != NULL, expect_valid[i]);
    }
    /* Spot checks of the values (pbequal compares the rest). */
    Mpiwatch__Envelope *env = mw_envelope_decode(&arena, in[1].data, in[1].len);
    assert_int_equal(env->partial->n_rank_pm, pa->n_rank_pm);
    assert_int_equal(env->partial->rank_pm[7], pa->rank_pm[7]);
    assert_null(env->partial->fn_order);
    assert_int_equal(env->partial->window->n_rf_rank, pa->window->n_rf_rank + 1);
    env = mw_envelope_decode(&arena, in[2].data, in[2].len);
    assert_int_equal(env->partial->samples, 1);
    assert_int_equal(env->partial->window->index, 5);
    assert_int_equal(env->partial->window->ranks_reporting, P_RANKS);
    assert_int_equal(env->partial->window->mpi_time_ns, UINT64_MAX);
    env = mw_envelope_decode(&arena, in[4].data, in[4].len);
    assert_int_equal(env->partial->n_dormant, 2);
    assert_int_equal(env->partial->window->n_traces, 2);
    assert_int_equal(
        env->partial->window->functions[env->partial->window->n_functions - 1]->spread_sq_lo,
        UINT64_MAX);
    /* Every truncation of a partial. */
    for (size_t len = 0; len < in[0].len; len++)
        check_frame(in[0].data, len);
    print_stats("crafted partials");
    check_with_mutations(in, n, MUTATIONS / 8);
    print_stats("crafted partials, mutated");
    mpiwatch__envelope__free_unpacked(ref, NULL);
    free_inputs(in, n);
    free_inputs(real, n_real);
}

/* A partial is too large for MW_DECODE_FITS(): the fast decoder bounds protobuf-c's memory frame
 * by frame instead, and must never accept a partial on which protobuf-c, given the same arena,
 * would run out. Checked on a real partial and on the shapes that cost protobuf-c the most per
 * byte (empty function summaries and long calls, 2-byte unknown fields), in arenas of every size
 * from too small for either to large enough for both. */
static void test_partial_arena_bound(void **state)
{
    (void)state;
    input_t real[P_WINDOWS + 1];
    size_t n_real = real_partials(real);
    input_t in[4];
    in[0] = real[1];
    static const struct {
        const char *b;
        size_t n;
    } members[] = {{"\x6a\x00", 2}, {"\xd2\x01\x00", 3}, {"\xc8\x03\x01", 3}};
    for (int k = 0; k < 3; k++) {
        tm_enc_t e, p, w;
        w.n = p.n = 0;
        while (w.n + 3 < 8000)
            tm_put(&w, members[k].b, members[k].n);
        tm_put_msg(&p, 1, &w);
        e.n = 0;
        tm_put_head(&e, PJOB, 3);
        tm_put_msg(&e, 14, &p);
        in[1 + k] = keep(e.b, e.n);
    }
    for (int k = 0; k < 4; k++) {
        size_t fast_from = 0, pbc_from = 0;
        for (size_t size = 4096; size < 256 * in[k].len + 262144; size += size / 64) {
            mw_arena_t a;
            assert_int_equal(mw_arena_init(&a, size), 0);
            Mpiwatch__Envelope *fast = mw__envelope_decode_fast(&a, in[k].data, in[k].len);
            Mpiwatch__Envelope *pbc = mw__envelope_decode_pbc(&a, in[k].data, in[k].len);
            assert_true(!fast || pbc); /* protobuf-c never runs out where the fast one answers */
            if (fast && !fast_from)
                fast_from = size;
            if (pbc && !pbc_from)
                pbc_from = size;
            mw_arena_free(&a);
        }
        print_message("partial shape %d, %zu bytes: protobuf-c decodes it from an arena of %zu "
                      "bytes, the fast decoder from %zu\n",
                      k, in[k].len, pbc_from, fast_from);
        assert_true(fast_from > 0 && fast_from >= pbc_from);
        assert_true(fast_from < 2 * pbc_from + 65536); /* the bound is not absurdly loose */
    }
    free_inputs(in + 1, 3);
    free_inputs(real, n_real);
}

int main(int argc, char **argv)
{
    dirs = argv + 1;
    n_dirs = argc - 1;
    if (mw_arena_init(&arena, 4 * (size_t)MW_MAX_MESSAGE_BYTES) < 0 ||
        mw_arena_init(&arena2, 4 * (size_t)MW_MAX_MESSAGE_BYTES) < 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_canonical),
        cmocka_unit_test(test_odd_valid),
        cmocka_unit_test(test_invalid_and_fallback),
        cmocka_unit_test(test_arena_bound),
        cmocka_unit_test(test_fuzz_corpus),
        cmocka_unit_test(test_partial_real),
        cmocka_unit_test(test_partial_crafted),
        cmocka_unit_test(test_partial_arena_bound),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    mw_arena_free(&arena);
    mw_arena_free(&arena2);
    return rc;
}
