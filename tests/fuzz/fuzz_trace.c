/* fuzz_trace.c: a libFuzzer target for the trace block decoder and the matcher
 * (proto/mw_trace.c, proto/mw_trace_match.c, docs/trace.md).
 *
 * One input is a Trace message's fields and its records: a mode byte, a 32-bit count, a 64-bit
 * raw size (little endian), then the block. The mode says which of those header fields are
 * used as given and which are derived from the block, so that the fuzzer reaches both the
 * refusals of inconsistent fields and the decoding of consistent ones:
 *   bit 0  encoding zstd (else columns); bit 3: the encoding is the count's low byte instead
 *   bit 1  raw size as given (else the block's length, or the zstd frame's content size)
 *   bit 2  count as given (else the count the block itself states)
 *   bit 4  re-encode with zstd level 1 (else columns)
 * A block that decodes must survive a round trip exactly: encoded again (which must succeed:
 * every decoded record is valid) and decoded again, every field equal, or the target traps.
 * Its records are then split in two parts (ranks from the count's bytes) and matched: every
 * message must pair a send with a receive of the same key, every collective member must be a
 * collective record of its instance.
 *
 * DESIGN: the decoder is the only parser of a Trace's bytes; the collector runs it on every
 * traced window a rank sends, the viewer and the exports on what they read back. Seeds are
 * checked in (tests/fuzz/corpus/trace/): blocks of the codec's own encoder, columns and zstd,
 * of the stencil trace of tests/proto/trace_gen.h and of random records at the extremes.
 */
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "fuzz.h"
#include "mw_trace.h"

#define HDR 13

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* The count a block states (a varint after the format byte), or 0. */
static uint32_t block_count(const uint8_t *b, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 1; i < n && i < 6; i++) {
        v |= (uint64_t)(b[i] & 0x7f) << (7 * (i - 1));
        if (!(b[i] & 0x80))
            return v <= UINT32_MAX ? (uint32_t)v : 0;
    }
    return 0;
}

static int same(const mw_trace_rec_t *x, const mw_trace_rec_t *y)
{
    return x->start_ns == y->start_ns && x->dur_ns == y->dur_ns && x->comm == y->comm &&
           x->seq == y->seq && x->bytes == y->bytes && x->req == y->req && x->thread == y->thread &&
           x->peer == y->peer && x->tag == y->tag && x->fn == y->fn && x->kind == y->kind &&
           x->flags == y->flags;
}

static void check_matches(const mw_trace_part_t *parts, const mw_trace_matches_t *m)
{
    for (size_t i = 0; i < m->nmsgs; i++) {
        const mw_trace_match_t *x = &m->msgs[i];
        if (x->send_part > 1 || x->recv_part > 1 || x->send_rec >= parts[x->send_part].n ||
            x->recv_rec >= parts[x->recv_part].n)
            __builtin_trap();
        const mw_trace_rec_t *s = &parts[x->send_part].recs[x->send_rec];
        const mw_trace_rec_t *r = &parts[x->recv_part].recs[x->recv_rec];
        if (!mw_trace_is_send(s) || !mw_trace_is_recv(r) || s->comm != r->comm ||
            s->tag != r->tag || s->seq != r->seq || (uint32_t)s->peer != parts[x->recv_part].rank ||
            (uint32_t)r->peer != parts[x->send_part].rank)
            __builtin_trap();
    }
    for (size_t i = 0; i < m->ncolls; i++) {
        const mw_trace_coll_t *c = &m->colls[i];
        for (uint32_t j = 0; j < c->n; j++) {
            uint32_t p = m->coll_members[2 * ((size_t)c->first + j)];
            uint32_t k = m->coll_members[2 * ((size_t)c->first + j) + 1];
            if (p > 1 || k >= parts[p].n)
                __builtin_trap();
            const mw_trace_rec_t *r = &parts[p].recs[k];
            if ((r->kind != MW_TK_COLL && r->kind != MW_TK_ICOLL) || r->comm != c->comm ||
                r->seq != c->seq)
                __builtin_trap();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < HDR)
        return 0;
    unsigned mode = data[0];
    uint32_t count = (uint32_t)le(data + 1, 4);
    uint64_t raw = le(data + 5, 8);
    const uint8_t *blk = data + HDR;
    size_t len = size - HDR;
    uint32_t enc = mode & 1 ? MW_TRACE_ENC_ZSTD : MW_TRACE_ENC_COLUMNS;
    if (mode & 8)
        enc = count & 0xff;

    if (!(mode & 2)) {
        if (enc == MW_TRACE_ENC_ZSTD) {
            unsigned long long fcs = ZSTD_getFrameContentSize(blk, len);
            raw = fcs <= MW_TRACE_MAX_RAW_BYTES ? fcs : 0;
        } else {
            raw = len;
        }
    }
    if (!(mode & 4)) {
        if (enc == MW_TRACE_ENC_ZSTD) {
            /* the count inside the frame (bounded: the decoder allows more) */
            count = 0;
            if (raw >= 1 && raw <= (1u << 20)) {
                uint8_t *tmp = malloc(raw);
                if (tmp) {
                    size_t all = ZSTD_decompress(tmp, raw, blk, len);
                    if (!ZSTD_isError(all))
                        count = block_count(tmp, all);
                    free(tmp);
                }
            }
        } else {
            count = block_count(blk, len);
        }
    }

    mw_trace_rec_t *recs;
    size_t n;
    const char *why = NULL;
    if (mw_trace_decode(blk, len, enc, raw, count, &recs, &n, &why) != 0) {
        if (!why || recs || n)
            __builtin_trap(); /* a refusal has a reason and no records */
        return 0;
    }
    if (n != count)
        __builtin_trap();

    /* round trip */
    uint8_t *b2;
    size_t len2;
    uint32_t enc2;
    uint64_t raw2;
    if (mw_trace_encode(recs, n, mode & 16 ? 1 : 0, 1, &b2, &len2, &enc2, &raw2) != 0)
        __builtin_trap();
    mw_trace_rec_t *again;
    size_t n2;
    if (mw_trace_decode(b2, len2, enc2, raw2, (uint32_t)n, &again, &n2, &why) != 0 || n2 != n)
        __builtin_trap();
    for (size_t i = 0; i < n; i++)
        if (!same(&recs[i], &again[i]))
            __builtin_trap();
    free(again);
    free(b2);

    /* matching, in two parts */
    mw_trace_part_t parts[2] = {
        {.rank = data[1] & 3, .recs = recs, .n = n / 2},
        {.rank = data[2] & 3, .recs = recs + n / 2, .n = n - n / 2},
    };
    mw_trace_matches_t m;
    if (mw_trace_match(parts, 2, &m) == 0) {
        check_matches(parts, &m);
        mw_trace_matches_free(&m);
    }
    free(recs);
    return 0;
}
