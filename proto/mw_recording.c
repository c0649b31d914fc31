/* mw_recording.c: the reader of recording files (FILE.mpiw) and the byte layout its writer
 * shares (header, frame header, CRC, a look inside an envelope).
 *
 * DESIGN: the reader trusts nothing in the file. Every length is checked against the cap of
 * one frame (MW_REC_MAX_FRAME) and against the bytes actually there, every frame's CRC is
 * checked before its payload is decoded, and a frame that fails any check ends the file for
 * mw_rec_reader_next() (reported by mw_rec_reader_truncated(), because a collector killed in
 * the middle of a write leaves exactly that). Frames are read through a read-ahead buffer with
 * pread(), so sequential reading costs one system call per megabyte, and decoded into a bump
 * arena that grows only when a record does not fit.
 *
 * Seeking by window (find_window, span) keeps a table of (window, offset) built from three
 * sources, cheapest first: the last index frame, found by searching backwards from the end of
 * the file for its tag followed by the file's index key, then verifying length and CRC; the
 * chain of index frames before it
 * (`previous`); and a forward scan of the frames after the last index, which only looks at a
 * record's first fields instead of decoding it. The table is kept between calls: on a file
 * that is still being written, a later call looks only at what was appended since (the
 * backward search never goes below the point the forward scan has covered), and the bytes
 * read near the end are read again, since a writer doing aligned writes pads its last block
 * with zeros and rewrites it when it has more (collector/record_file.c). An offset taken
 * from an index is data from the file like any other, so find_window reads the frame it points
 * at and checks that it holds that window before returning it.
 *
 * The backward search cannot be steered by what peers send. The collector records received
 * frames verbatim, so they may hold the bytes "MWIX" followed by a plausible length, as often
 * as a crafted frame likes (an 8 MiB frame holds a million); verifying each such candidate
 * costs a CRC over its claimed length. A version 2 file begins every index frame's payload
 * with 16 random bytes drawn when the file was created (the header holds them, nothing sends
 * them anywhere), so a candidate without them is skipped after a 16-byte compare. Whatever the
 * version, the search verifies at most RD_BACK_TRIES candidates and looks at most RD_BACK_MAX
 * bytes back, then leaves the rest to the forward scan, which reads each frame once by its
 * length; a crafted version 1 file therefore costs a bounded search plus one pass.
 *
 * The window table is looked up by binary search: over the table itself while window indices
 * only grow in file order, otherwise over a copy sorted by (window, offset) that is brought up
 * to date (sorting only the new entries and merging) when the table has grown. A recording of
 * several jobs, or of windows closed out of order, therefore costs O(log n) per lookup too.
 *
 * Records larger than a frame (a job description of a very large job) arrive as chunk frames
 * (MW_REC_TAG_CONT) ending with an ordinary frame; they are reassembled into a buffer of their
 * own, capped at MW_REC_MAX_RECORD, and a broken sequence ends the file like a torn frame.
 *
 * Compressed frames (version 3: MW_REC_TAG_ZFRAME, MW_REC_TAG_ZCONT) are checked like the
 * others (length cap, CRC of the bytes on disk) and then decompressed into a buffer of the
 * rd_buf_t they were read through; the content size their zstd frame declares must be at
 * most MW_REC_MAX_FRAME and must be exactly what decompression gives, or the frame is damaged
 * (it ends the file like a torn one). Past that point they are the frames they stand for:
 * nothing above rd_frame() knows whether a frame was compressed.
 *
 * Holes (docs/recording.md "Tiers"): a writer that drops old runs of sample frames lists each
 * one in an index frame (its first frame, the frame after it, the windows of its samples)
 * before giving its blocks back to the file system, so the dropped bytes read as zeros (or
 * as the intact frames left at either end). The reader takes the holes with the windows from
 * the index chain and the forward scan; wherever reading stops at a frame that is not intact,
 * and that place lies inside a listed hole, reading goes on at the hole's end. Holes come
 * from the file's own (keyed) index frames and are checked like any offset: inside the
 * frames, start before end, the end before the index that lists them, in file order.
 */
#include "mw_recording.h"
#include "mw_wire.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <libdeflate.h>
#include <unistd.h>
#include <zstd.h>

#define RD_AHEAD (1u << 20)                          /* sequential read-ahead */
#define RD_BACK_CHUNK (64u << 10)                    /* backward search step */
#define RD_MAX_HEADER 4096u                          /* a longer header is not a recording */
#define RD_ARENA_MIN ((size_t)4 << 20)               /* decoding arena, grown on demand ... */
#define RD_ARENA_MAX ((size_t)8 * MW_REC_MAX_RECORD) /* ... up to this */
#define RD_BACK_TRIES 16u                            /* index candidates verified per search */
#define RD_BACK_MAX ((uint64_t)64 << 20)             /* bytes one backward search looks at */

/* Record fields the reader looks at without decoding (proto/mpiwatch.proto, Record). */
#define RD_FIELD_MONO 1u
#define RD_FIELD_WINDOW 11u
#define RD_FIELD_INDEX 16u
#define RD_FIELD_LEAN 21u  /* Record.window_lean: a window's coarse-tier copy */
#define RD_FIELD_RANKS 22u /* Record.ranks */

/* ---- shared byte layout -------------------------------------------------------------------- */

/* libdeflate computes zlib's CRC-32 with carry-less multiplication, about seven times as
 * fast as zlib's own: at 50 MB/s of recording that is the difference between a tenth of the
 * collector's CPU and a few percent. */
uint32_t mw_rec_crc(uint32_t crc, const void *data, size_t n)
{
    return n ? libdeflate_crc32(crc, data, n) : crc;
}

static void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void mw_rec_put_header_key(unsigned char out[MW_REC_HEADER_BYTES], const unsigned char *key)
{
    _Static_assert(MW_REC_HEADER_BYTES == 16 + MW_REC_KEY_BYTES, "magic, version, length, key");
    memcpy(out, MW_REC_MAGIC, 8);
    put32(out + 8, MW_REC_VERSION);
    put32(out + 12, MW_REC_HEADER_BYTES);
    if (key)
        memcpy(out + 16, key, MW_REC_KEY_BYTES);
    else
        memset(out + 16, 0, MW_REC_KEY_BYTES);
}

void mw_rec_put_header(unsigned char out[MW_REC_HEADER_BYTES])
{
    mw_rec_put_header_key(out, NULL);
}

void mw_rec_put_frame_header(unsigned char out[MW_REC_FRAME_HEADER_BYTES], uint32_t tag,
                             uint32_t len, uint32_t crc)
{
    put32(out, tag);
    put32(out + 4, len);
    put32(out + 8, crc);
}

struct mw_rec_zctx {
    ZSTD_CCtx *cctx;
};

mw_rec_zctx_t *mw_rec_zctx_new(int level)
{
    mw_rec_zctx_t *z = calloc(1, sizeof *z);
    if (!z || !(z->cctx = ZSTD_createCCtx())) {
        free(z);
        return NULL;
    }
    /* The content size goes into every frame (the reader checks it before allocating); no
     * zstd checksum: the frame's CRC-32 already covers the compressed bytes, and the
     * decompressed length must match the declared one. */
    if (ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_compressionLevel, level)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_contentSizeFlag, 1)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_checksumFlag, 0))) {
        ZSTD_freeCCtx(z->cctx);
        free(z);
        return NULL;
    }
    return z;
}

void mw_rec_zctx_free(mw_rec_zctx_t *z)
{
    if (!z)
        return;
    ZSTD_freeCCtx(z->cctx);
    free(z);
}

size_t mw_rec_compress(mw_rec_zctx_t *z, const void *a, size_t na, const void *b, size_t nb,
                       const void *c, size_t nc, void *out, size_t cap)
{
    size_t total = na + nb + nc;
    if (!z || total == 0)
        return 0;
    /* The pieces are streamed in, so the received bytes are never copied before compression;
     * with the size pledged, the frame still declares its content size. */
    ZSTD_CCtx_reset(z->cctx, ZSTD_reset_session_only);
    if (ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(z->cctx, total)))
        return 0;
    ZSTD_outBuffer o = {out, cap < total ? cap : total - 1, 0}; /* shorter, or not worth it */
    const void *piece[3] = {a, b, c};
    size_t len[3] = {na, nb, nc};
    for (int i = 0; i < 3; i++) {
        ZSTD_inBuffer in = {piece[i], len[i], 0};
        ZSTD_EndDirective end = i == 2 ? ZSTD_e_end : ZSTD_e_continue;
        for (;;) {
            size_t k = ZSTD_compressStream2(z->cctx, &o, &in, end);
            if (ZSTD_isError(k))
                goto fail;
            if (end == ZSTD_e_end ? k == 0 : in.pos == in.size)
                break;
            if (o.pos == o.size)
                goto fail; /* would not be shorter */
        }
    }
    return o.pos;
fail:
    ZSTD_CCtx_reset(z->cctx, ZSTD_reset_session_only);
    return 0;
}

/* ---- a look at protobuf fields without decoding -------------------------------------------- */

typedef struct {
    const unsigned char *p, *end;
} pb_cursor_t;

static int pb_varint(pb_cursor_t *c, uint64_t *v)
{
    size_t pos = 0;
    if (mw_wire_get_varint(c->p, (size_t)(c->end - c->p), &pos, v) < 0)
        return -1;
    c->p += pos;
    return 0;
}

/* The next field: 1 with its number, its wire type and, for a varint its value, for a
 * length-delimited field its bytes; 0 at the end; -1 when the bytes are not protobuf. */
static int pb_next(pb_cursor_t *c, uint32_t *field, unsigned *type, uint64_t *v,
                   const unsigned char **data, size_t *len)
{
    uint64_t key, n;
    if (c->p >= c->end)
        return 0;
    if (pb_varint(c, &key) < 0 || (key >> 3) == 0 || (key >> 3) > 0x1fffffffu)
        return -1;
    *field = (uint32_t)(key >> 3);
    *type = (unsigned)(key & 7);
    *v = 0;
    *data = NULL;
    *len = 0;
    switch (*type) {
    case MW_WIRE_VARINT:
        return pb_varint(c, v) < 0 ? -1 : 1;
    case MW_WIRE_I64:
        n = 8;
        break;
    case MW_WIRE_I32:
        n = 4;
        break;
    case MW_WIRE_LEN:
        if (pb_varint(c, &n) < 0)
            return -1;
        *data = c->p;
        *len = (size_t)n;
        break;
    default:
        return -1;
    }
    if (n > (uint64_t)(c->end - c->p))
        return -1;
    c->p += n;
    return 1;
}

/* Field 1 (a varint) of the message in [data, data + len), 0 when absent. Returns 0, or -1
 * when the bytes are not protobuf. protobuf-c writes fields in number order, so field 1 is
 * the first one and the walk stops there; a later repetition of it (which a decoder would
 * take instead) is not looked for: this is a hint for the index, not a decoder. */
static int pb_field1(const unsigned char *data, size_t len, uint64_t *out)
{
    pb_cursor_t c = {data, data + len};
    uint32_t field;
    unsigned type;
    uint64_t v;
    const unsigned char *d;
    size_t n;
    int k;
    *out = 0;
    while ((k = pb_next(&c, &field, &type, &v, &d, &n)) == 1) {
        if (field == 1 && type == MW_WIRE_VARINT) {
            *out = v;
            return 0;
        }
    }
    return k;
}

int mw_rec_sample_window(const void *data, size_t len, uint64_t *window)
{
    pb_cursor_t c = {data, (const unsigned char *)data + len};
    uint32_t field;
    unsigned type;
    uint64_t v;
    const unsigned char *d;
    size_t n;
    if (!data)
        return 0;
    while (pb_next(&c, &field, &type, &v, &d, &n) == 1)
        if (field == 11 && type == 2) /* Envelope.sample */
            return pb_field1(d, n, window) == 0;
    return 0;
}

int mw_rec_envelope_rank(const void *data, size_t len, uint32_t *rank)
{
    pb_cursor_t c = {data, (const unsigned char *)data + len};
    uint32_t field;
    unsigned type;
    uint64_t v;
    const unsigned char *d;
    size_t n;
    if (!data)
        return 0;
    while (pb_next(&c, &field, &type, &v, &d, &n) == 1)
        if (field == 3 && type == 0) { /* Envelope.rank */
            *rank = (uint32_t)v;
            return v <= UINT32_MAX;
        }
    return 0;
}

/* What the window table needs of a record: its time, which body it has, and for a window
 * its index. */
typedef struct {
    uint64_t mono_ns;
    uint32_t body; /* field number of the body, 0 none */
    uint64_t window;
} rd_peek_t;

static int rd_peek(const unsigned char *p, size_t len, rd_peek_t *out)
{
    pb_cursor_t c = {p, p + len};
    uint32_t field;
    unsigned type;
    uint64_t v;
    const unsigned char *d;
    size_t n;
    int k;
    memset(out, 0, sizeof *out);
    while ((k = pb_next(&c, &field, &type, &v, &d, &n)) == 1) {
        if (field == RD_FIELD_MONO && type == 0)
            out->mono_ns = v;
        else if ((field >= 10 && field <= 17) || field == RD_FIELD_LEAN ||
                 field == RD_FIELD_RANKS) {
            out->body = field;
            if ((field == RD_FIELD_WINDOW || field == RD_FIELD_LEAN) &&
                (type != 2 || pb_field1(d, n, &out->window) < 0))
                return -1;
        }
    }
    return k;
}

/* ---- the reader ---------------------------------------------------------------------------- */

/* A window of the file held in memory. */
typedef struct {
    unsigned char *data;
    size_t cap;
    uint64_t off;       /* file offset of data[0] */
    size_t len;         /* bytes held */
    unsigned char *rec; /* a chunked record reassembled (its own buffer: data is reused) */
    size_t rec_cap;
    unsigned char *z; /* the payload of the last compressed frame, decompressed */
    size_t z_cap;
    uint64_t plain; /* the last frame's size as an uncompressed frame (rd_frame) */
} rd_buf_t;

/* A window table entry's place in index order (the sorted copy of an unsorted table). */
typedef struct {
    uint64_t window, pos;
} rd_order_t;

typedef struct {
    uint64_t window, offset, first_sample, mono_ns;
    uint64_t lean; /* offset of its lean copy (Record.window_lean), 0 none */
} rd_win_t;

/* A run of dropped sample frames: [start, end) and the windows of its samples. */
typedef struct {
    uint64_t start, end, wmin, wmax;
} rd_hole_t;

struct mw_rec_reader {
    int fd;
    unsigned version;
    unsigned char key[MW_REC_KEY_BYTES]; /* version 2: what every index frame begins with */
    uint64_t start;                      /* offset of the first frame: the header's length */
    uint64_t pos;                        /* the next frame for mw_rec_reader_next */
    int truncated;
    rd_buf_t seq;     /* mw_rec_reader_next */
    rd_buf_t scan;    /* the window table's reads, so they never disturb the sequential ones */
    rd_buf_t back;    /* the backward search */
    rd_buf_t res;     /* frames read to resolve traces (mw_rec_reader_resolve_window) */
    uint8_t *res_out; /* the resolved records of the last resolve call */
    size_t res_len, res_cap;
    uint64_t res_failed;
    mw_arena_t arena;
    ZSTD_DCtx *dctx; /* compressed frames (version 3), created on the first one */

    rd_win_t *win; /* every window found so far, in file order */
    size_t n_win, cap_win;
    int unsorted;      /* window indices are not non-decreasing in file order */
    rd_order_t *order; /* then: entries [0, n_order) sorted by (window, offset) */
    size_t n_order, cap_order;
    uint64_t tail;       /* frames before this offset are in the table */
    uint64_t known_size; /* file size when the table was last brought up to date */
    uint64_t first_mono, last_mono;
    int have_first, have_last;
    uint64_t last_disk, last_plain; /* the last record of mw_rec_reader_next, its sizes */
    rd_hole_t *holes;               /* in file order */
    size_t n_holes, cap_holes;
    uint64_t raw_from; /* 1 + the newest window of a hole's samples, 0 without holes */
    /* mw_rec_reader_next: the end and index of the last full window it returned (the lean
     * copy right after it is skipped), and whether the last window was a lean copy. */
    uint64_t full_end, full_index;
    int last_lean;
    uint64_t skip_disk, skip_plain, skip_n; /* the lean copies skipped */
};

static void rd_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void rd_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* Reads the whole of [off, off + n) if the file has it. Returns the bytes read (fewer at the
 * end of the file), or -1 with errno. */
static ssize_t rd_pread(int fd, unsigned char *dst, size_t n, uint64_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(fd, dst + got, n - got, (off_t)(off + got));
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (k == 0)
            break;
        got += (size_t)k;
    }
    return (ssize_t)got;
}

/* Makes bytes [off, off + n) available through *p, reading at least `ahead` bytes when it has
 * to read. Returns how many of the n bytes the file has (fewer at its end), or -1 on a read
 * error (errno set). */
static ssize_t rd_get(int fd, rd_buf_t *b, uint64_t off, size_t n, size_t ahead,
                      const unsigned char **p)
{
    if (off >= b->off && off - b->off <= b->len && n <= b->len - (off - b->off)) {
        *p = b->data + (off - b->off);
        return (ssize_t)n;
    }
    size_t want = n > ahead ? n : ahead;
    if (b->cap < want) {
        unsigned char *d = realloc(b->data, want);
        if (!d) {
            errno = ENOMEM;
            return -1;
        }
        b->data = d;
        b->cap = want;
    }
    ssize_t got = rd_pread(fd, b->data, want, off);
    if (got < 0) {
        b->len = 0;
        return -1;
    }
    b->off = off;
    b->len = (size_t)got;
    *p = b->data;
    return (size_t)got < n ? got : (ssize_t)n;
}

/* Decompresses the payload of a compressed frame (its CRC already checked) into b->z and
 * points *payload, *len at it. Returns 1; 0 when the bytes are not one zstd frame declaring a
 * content size of at most MW_REC_MAX_FRAME that decompresses to exactly that size (damaged);
 * -1 when out of memory (errno set). */
static int rd_unzip(mw_rec_reader_t *r, rd_buf_t *b, const unsigned char **payload, uint32_t *len)
{
    unsigned long long want = ZSTD_getFrameContentSize(*payload, *len);
    if (want == ZSTD_CONTENTSIZE_UNKNOWN || want == ZSTD_CONTENTSIZE_ERROR ||
        want > MW_REC_MAX_FRAME || ZSTD_findFrameCompressedSize(*payload, *len) != (size_t)*len)
        return 0;
    if (!r->dctx && !(r->dctx = ZSTD_createDCtx())) {
        errno = ENOMEM;
        return -1;
    }
    if (want > b->z_cap || !b->z) {
        size_t cap = want > 65536 ? (size_t)want : 65536;
        unsigned char *z = realloc(b->z, cap);
        if (!z) {
            errno = ENOMEM;
            return -1;
        }
        b->z = z;
        b->z_cap = cap;
    }
    size_t got = ZSTD_decompressDCtx(r->dctx, b->z, (size_t)want, *payload, *len);
    if (ZSTD_isError(got) || got != (size_t)want)
        return 0;
    *payload = b->z;
    *len = (uint32_t)got;
    return 1;
}

/* Checks the frame at `off`. Returns 1 with its tag and payload (valid until the next read
 * into b; an index frame's key is checked and left out); 0 when no complete, intact frame
 * starts there (*torn: there are bytes, but not a good frame); -1 on a read error. *next is
 * the offset after the frame. */
static int rd_frame(mw_rec_reader_t *r, rd_buf_t *b, uint64_t off, size_t ahead, uint32_t *tag,
                    const unsigned char **payload, uint32_t *len, int *torn, uint64_t *next)
{
    const unsigned char *h;
    *torn = 0;
    ssize_t got = rd_get(r->fd, b, off, MW_REC_FRAME_HEADER_BYTES, ahead, &h);
    if (got < 0)
        return -1;
    if (got < (ssize_t)MW_REC_FRAME_HEADER_BYTES) {
        *torn = got > 0;
        return 0;
    }
    uint32_t t = get32(h), n = get32(h + 4), crc = get32(h + 8);
    int zipped = (t == MW_REC_TAG_ZFRAME || t == MW_REC_TAG_ZCONT) && r->version >= 3;
    if ((t != MW_REC_TAG_FRAME && t != MW_REC_TAG_INDEX &&
         (t != MW_REC_TAG_CONT || r->version < 2) && !zipped) ||
        n > MW_REC_MAX_FRAME) {
        *torn = 1;
        return 0;
    }
    size_t total = MW_REC_FRAME_HEADER_BYTES + (size_t)n;
    got = rd_get(r->fd, b, off, total, ahead, &h);
    if (got < 0)
        return -1;
    if ((size_t)got < total || mw_rec_crc(0, h + MW_REC_FRAME_HEADER_BYTES, n) != crc) {
        *torn = 1;
        return 0;
    }
    *tag = t;
    *payload = h + MW_REC_FRAME_HEADER_BYTES;
    *len = n;
    *next = off + total;
    b->plain = total;
    if (zipped) {
        *tag = t == MW_REC_TAG_ZFRAME ? MW_REC_TAG_FRAME : MW_REC_TAG_CONT;
        int k = rd_unzip(r, b, payload, len);
        if (k <= 0) {
            *torn = k == 0;
            return k;
        }
        b->plain = MW_REC_FRAME_HEADER_BYTES + (uint64_t)*len;
    }
    if (t == MW_REC_TAG_INDEX && r->version >= 2) {
        /* The writer begins every index frame with the key: one without is not its own. */
        if (n < MW_REC_KEY_BYTES || memcmp(*payload, r->key, MW_REC_KEY_BYTES) != 0) {
            *torn = 1;
            return 0;
        }
        *payload += MW_REC_KEY_BYTES;
        *len -= MW_REC_KEY_BYTES;
    }
    return 1;
}

/* Reads the record at `off` like rd_frame, reassembling a chunked one (MW_REC_TAG_CONT frames
 * and the frame that ends them) into b->rec; the tag returned is then MW_REC_TAG_FRAME. A
 * chunk sequence that is broken, ends in another kind of frame or passes MW_REC_MAX_RECORD is
 * not a good record (0, *torn set). */
static int rd_record(mw_rec_reader_t *r, rd_buf_t *b, uint64_t off, size_t ahead, uint32_t *tag,
                     const unsigned char **payload, uint32_t *len, int *torn, uint64_t *next)
{
    int k = rd_frame(r, b, off, ahead, tag, payload, len, torn, next);
    if (k <= 0 || *tag != MW_REC_TAG_CONT)
        return k;
    size_t have = 0;
    uint64_t plain = 0;
    for (;;) {
        plain += b->plain;
        if (have + *len > MW_REC_MAX_RECORD) {
            *torn = 1;
            return 0;
        }
        if (have + *len > b->rec_cap) {
            size_t cap = b->rec_cap ? b->rec_cap : (size_t)MW_REC_MAX_FRAME;
            while (cap < have + *len)
                cap *= 2;
            if (cap > MW_REC_MAX_RECORD)
                cap = MW_REC_MAX_RECORD;
            unsigned char *p = realloc(b->rec, cap);
            if (!p) {
                *torn = 1; /* cannot be held: unreadable, like a damaged record */
                return 0;
            }
            b->rec = p;
            b->rec_cap = cap;
        }
        memcpy(b->rec + have, *payload, *len);
        have += *len;
        if (*tag == MW_REC_TAG_FRAME)
            break;
        k = rd_frame(r, b, *next, ahead, tag, payload, len, torn, next);
        if (k < 0)
            return -1;
        if (k == 0 || *tag == MW_REC_TAG_INDEX) {
            *torn = 1;
            return 0;
        }
    }
    *tag = MW_REC_TAG_FRAME;
    *payload = b->rec;
    *len = (uint32_t)have;
    b->plain = plain;
    return 1;
}

mw_rec_reader_t *mw_rec_reader_open(const char *path, char *err, size_t errlen)
{
    unsigned char h[MW_REC_HEADER_BYTES];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        rd_err(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    ssize_t got = rd_pread(fd, h, sizeof h, 0);
    const char *why = NULL;
    uint32_t version = 0, hlen = 0;
    if (got < 0) {
        rd_err(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    /* Version 1 headers are 16 bytes: a file of just that is an empty version 1 recording. */
    if (got < 16 || memcmp(h, MW_REC_MAGIC, 8) != 0) {
        why = "not an mpiwatch recording";
    } else {
        version = get32(h + 8);
        hlen = get32(h + 12);
        uint32_t min = version >= 2 ? MW_REC_HEADER_BYTES : 16;
        if (version < MW_REC_VERSION_OLDEST || version > MW_REC_VERSION)
            why = "unsupported format version";
        else if (hlen < min || hlen > RD_MAX_HEADER || (uint64_t)got < min)
            why = "bad header length";
    }
    if (why) {
        if (version && (version < MW_REC_VERSION_OLDEST || version > MW_REC_VERSION))
            rd_err(err, errlen, "%s: %s %u (this reader reads versions %u to %u)", path, why,
                   version, MW_REC_VERSION_OLDEST, MW_REC_VERSION);
        else
            rd_err(err, errlen, "%s: %s", path, why);
        close(fd);
        return NULL;
    }
    mw_rec_reader_t *r = calloc(1, sizeof *r);
    if (!r || mw_arena_init(&r->arena, RD_ARENA_MIN) < 0) {
        rd_err(err, errlen, "%s: out of memory", path);
        free(r);
        close(fd);
        return NULL;
    }
    r->fd = fd;
    r->version = version;
    if (version >= 2)
        memcpy(r->key, h + 16, MW_REC_KEY_BYTES);
    r->start = r->pos = r->tail = hlen;
    return r;
}

void mw_rec_reader_close(mw_rec_reader_t *r)
{
    if (!r)
        return;
    close(r->fd);
    free(r->seq.data);
    free(r->scan.data);
    free(r->back.data);
    free(r->res.data);
    free(r->res.rec);
    free(r->res_out);
    free(r->seq.rec);
    free(r->scan.rec);
    free(r->seq.z);
    free(r->scan.z);
    free(r->back.z);
    free(r->res.z);
    ZSTD_freeDCtx(r->dctx);
    free(r->win);
    free(r->order);
    free(r->holes);
    mw_arena_free(&r->arena);
    free(r);
}

static int rd_refresh(mw_rec_reader_t *r);

/* The hole that `off` lies in, or NULL. */
static const rd_hole_t *rd_hole_at(const mw_rec_reader_t *r, uint64_t off)
{
    size_t lo = 0, hi = r->n_holes;
    while (lo < hi) { /* the first hole that starts after off */
        size_t mid = lo + (hi - lo) / 2;
        if (r->holes[mid].start <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && off < r->holes[lo - 1].end ? &r->holes[lo - 1] : NULL;
}

/* Takes the holes an index frame at `at` lists. A hole out of order, outside the frames or
 * not before its index is ignored. Returns 0, or -1 when out of memory. */
static int rd_holes_take(mw_rec_reader_t *r, const Mpiwatch__RecordIndex *ix, uint64_t at)
{
    size_t n = ix->n_hole_start;
    if (ix->n_hole_end < n || ix->n_hole_window_min < n || ix->n_hole_window_max < n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        rd_hole_t h = {ix->hole_start[i], ix->hole_end[i], ix->hole_window_min[i],
                       ix->hole_window_max[i]};
        if (h.start < r->start || h.end <= h.start || h.end > at || h.wmin > h.wmax ||
            (r->n_holes && h.start < r->holes[r->n_holes - 1].end))
            continue;
        if (r->n_holes == r->cap_holes) {
            size_t cap = r->cap_holes ? 2 * r->cap_holes : 64;
            rd_hole_t *p = realloc(r->holes, cap * sizeof *p);
            if (!p) {
                errno = ENOMEM;
                return -1;
            }
            r->holes = p;
            r->cap_holes = cap;
        }
        r->holes[r->n_holes++] = h;
        if (h.wmax + 1 > r->raw_from)
            r->raw_from = h.wmax + 1;
    }
    return 0;
}

/* Decodes a record into the arena, growing it when the record does not fit. */
static Mpiwatch__Record *rd_decode(mw_rec_reader_t *r, const unsigned char *p, size_t n)
{
    for (;;) {
        if (!r->arena.base && mw_arena_init(&r->arena, RD_ARENA_MIN) < 0)
            return NULL; /* out of memory: the record is reported as unreadable */
        mw_arena_reset(&r->arena);
        Mpiwatch__Record *rec = mpiwatch__record__unpack(&r->arena.allocator, n, p);
        if (rec || r->arena.failed == 0 || r->arena.size >= RD_ARENA_MAX)
            return rec;
        size_t size = 2 * r->arena.size < RD_ARENA_MAX ? 2 * r->arena.size : RD_ARENA_MAX;
        mw_arena_free(&r->arena);
        if (mw_arena_init(&r->arena, size) < 0)
            return NULL; /* the next call starts again from the smallest arena */
    }
}

int mw_rec_reader_next(mw_rec_reader_t *r, const Mpiwatch__Record **rec, uint64_t *offset,
                       char *err, size_t errlen)
{
    uint32_t tag, len;
    const unsigned char *p;
    int torn;
    uint64_t next;
    int k, refreshed = 0;
    const rd_hole_t *h;
    for (;;) {
        k = rd_record(r, &r->seq, r->pos, RD_AHEAD, &tag, &p, &len, &torn, &next);
        if (k != 0 || !torn)
            break;
        /* Not an intact frame: a dropped run of samples (its holes are in the index), or the
         * torn end of the file. */
        if (!(h = rd_hole_at(r, r->pos)) && !refreshed && r->version >= 3) {
            refreshed = 1;
            if (rd_refresh(r) < 0) {
                rd_err(err, errlen, "read error at offset %llu: %s", (unsigned long long)r->pos,
                       strerror(errno));
                return -1;
            }
            h = rd_hole_at(r, r->pos);
        }
        if (!h)
            break;
        r->pos = h->end;
        r->seq.len = 0;
    }
    if (k < 0) {
        rd_err(err, errlen, "read error at offset %llu: %s", (unsigned long long)r->pos,
               strerror(errno));
        return -1;
    }
    if (k == 0) {
        /* The end as it is now: a writer may still fill it (and may rewrite a zero-padded
         * last block), so the next call reads the file again rather than this buffer. */
        r->seq.len = 0;
        r->truncated = torn;
        return 0;
    }
    Mpiwatch__Record *d = rd_decode(r, p, len);
    if (!d) {
        r->truncated = 1; /* an intact CRC around bytes that are not a Record */
        return 0;
    }
    r->truncated = 0;
    if (d->body_case == MPIWATCH__RECORD__BODY_WINDOW_LEAN && d->window_lean) {
        /* The coarse tier's copy of a window: skipped right after the full window it copies,
         * given as the window itself where that one is gone (dropped with the samples). */
        if (r->full_end == r->pos && r->full_index == d->window_lean->index) {
            r->full_end = 0;
            r->skip_disk += next - r->pos;
            r->skip_plain += r->seq.plain;
            r->skip_n++;
            r->pos = next;
            return mw_rec_reader_next(r, rec, offset, err, errlen);
        }
        d->body_case = MPIWATCH__RECORD__BODY_WINDOW; /* one union: the same Window pointer */
        r->last_lean = 1;
    } else if (d->body_case == MPIWATCH__RECORD__BODY_WINDOW && d->window) {
        r->full_end = next;
        r->full_index = d->window->index;
        r->last_lean = 0;
    }
    if (offset)
        *offset = r->pos;
    r->last_disk = next - r->pos;
    r->last_plain = r->seq.plain;
    r->pos = next;
    *rec = d;
    return 1;
}

int mw_rec_reader_last_lean(const mw_rec_reader_t *r)
{
    return r->last_lean;
}

uint64_t mw_rec_reader_lean_skipped(const mw_rec_reader_t *r, uint64_t *disk, uint64_t *plain)
{
    *disk = r->skip_disk;
    *plain = r->skip_plain;
    return r->skip_n;
}

void mw_rec_reader_last_size(const mw_rec_reader_t *r, uint64_t *disk, uint64_t *plain)
{
    *disk = r->last_disk;
    *plain = r->last_plain;
}

int mw_rec_reader_seek(mw_rec_reader_t *r, uint64_t offset)
{
    if (offset < r->start)
        return -1;
    r->pos = offset;
    r->truncated = 0;
    return 0;
}

uint64_t mw_rec_reader_start(const mw_rec_reader_t *r)
{
    return r->start;
}

int mw_rec_reader_truncated(const mw_rec_reader_t *r)
{
    return r->truncated;
}

/* ---- the window table ---------------------------------------------------------------------- */

static int rd_win_add(mw_rec_reader_t *r, uint64_t window, uint64_t offset, uint64_t first,
                      uint64_t mono_ns)
{
    if (r->n_win == r->cap_win) {
        size_t cap = r->cap_win ? 2 * r->cap_win : 256;
        rd_win_t *w = realloc(r->win, cap * sizeof *w);
        if (!w) {
            errno = ENOMEM;
            return -1;
        }
        r->win = w;
        r->cap_win = cap;
    }
    if (r->n_win && window < r->win[r->n_win - 1].window)
        r->unsorted = 1;
    r->win[r->n_win++] = (rd_win_t){window, offset, first, mono_ns, 0};
    return 0;
}

/* The table entry whose Window frame is at `offset` (entries are in file order), or NULL. */
static rd_win_t *rd_win_at(mw_rec_reader_t *r, uint64_t offset)
{
    size_t lo = 0, hi = r->n_win;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->win[mid].offset < offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->n_win && r->win[lo].offset == offset ? &r->win[lo] : NULL;
}

static int rd_order_cmp(const void *a, const void *b)
{
    const rd_order_t *x = a, *y = b;
    if (x->window != y->window)
        return x->window < y->window ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Brings the sorted copy up to date with the table: sorts the entries added since and merges
 * them in. Returns 0, or -1 when out of memory. */
static int rd_order_update(mw_rec_reader_t *r)
{
    if (r->n_order == r->n_win)
        return 0;
    size_t add = r->n_win - r->n_order, n = r->n_win;
    if (r->cap_order < 2 * n) {
        rd_order_t *o = realloc(r->order, 2 * n * sizeof *o);
        if (!o)
            return -1;
        r->order = o;
        r->cap_order = 2 * n;
    }
    /* The new entries sorted behind the old ones, then merged into the second half. */
    rd_order_t *fresh = r->order + r->n_order;
    for (size_t i = 0; i < add; i++)
        fresh[i] = (rd_order_t){r->win[r->n_order + i].window, r->n_order + i};
    qsort(fresh, add, sizeof *fresh, rd_order_cmp);
    rd_order_t *out = r->order + n;
    size_t a = 0, b = r->n_order, o = 0;
    while (a < r->n_order || b < n)
        out[o++] = b >= n || (a < r->n_order && rd_order_cmp(&r->order[a], &r->order[b]) <= 0)
                       ? r->order[a++]
                       : r->order[b++];
    memmove(r->order, out, n * sizeof *out);
    r->n_order = n;
    return 0;
}

/* The first entry of window `index`, or -1 (also when out of memory). */
static long rd_win_find(mw_rec_reader_t *r, uint64_t index)
{
    if (r->unsorted) {
        if (rd_order_update(r) < 0)
            return -1;
        size_t lo = 0, hi = r->n_order;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (r->order[mid].window < index)
                lo = mid + 1;
            else
                hi = mid;
        }
        return lo < r->n_order && r->order[lo].window == index ? (long)r->order[lo].pos : -1;
    }
    size_t lo = 0, hi = r->n_win;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->win[mid].window < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->n_win && r->win[lo].window == index ? (long)lo : -1;
}

/* Reads the index frame at `off`. Returns 1 with the decoded record (free it with
 * mpiwatch__record__free_unpacked) and the end of its frame, 0 when there is no intact index
 * frame there, -1 on a read error. */
static int rd_index_at(mw_rec_reader_t *r, uint64_t off, Mpiwatch__Record **out, uint64_t *end)
{
    uint32_t tag, len;
    const unsigned char *p;
    int torn;
    uint64_t next;
    int k = rd_frame(r, &r->scan, off, 0, &tag, &p, &len, &torn, &next);
    if (k <= 0)
        return k;
    if (tag != MW_REC_TAG_INDEX)
        return 0;
    Mpiwatch__Record *rec = mpiwatch__record__unpack(NULL, len, p);
    if (!rec)
        return 0;
    if (rec->body_case != MPIWATCH__RECORD__BODY_INDEX || !rec->index) {
        mpiwatch__record__free_unpacked(rec, NULL);
        return 0;
    }
    *out = rec;
    *end = next;
    return 1;
}

/* Copies the first-sample offsets of an index into the table entries it names. */
static void rd_index_first_samples(mw_rec_reader_t *r, const Mpiwatch__RecordIndex *ix)
{
    size_t n = ix->n_window_offset < ix->n_first_sample ? ix->n_window_offset : ix->n_first_sample;
    for (size_t i = 0; i < n; i++) {
        rd_win_t *w = rd_win_at(r, ix->window_offset[i]);
        if (w && ix->first_sample[i] >= r->start && ix->first_sample[i] < w->offset)
            w->first_sample = ix->first_sample[i];
    }
}

/* Searches [lo, hi) backwards for the last intact index frame. Returns 1 with its offset, 0
 * when there is none or the search gave up (the forward scan then covers the rest), -1 on a
 * read error. A candidate is the tag followed, in a version 2 file, by the file's key 12
 * bytes later; at most RD_BACK_TRIES candidates are verified and RD_BACK_MAX bytes looked at,
 * so what received frames contain decides neither how long this takes nor what it finds. */
static int rd_find_last_index(mw_rec_reader_t *r, uint64_t lo, uint64_t hi, uint64_t *found)
{
    static const unsigned char tag[4] = {'M', 'W', 'I', 'X'};
    _Static_assert(MW_REC_TAG_INDEX == ((uint32_t)'M' | 'W' << 8 | 'I' << 16 | (uint32_t)'X' << 24),
                   "the index tag is the bytes MWIX");
    size_t need = MW_REC_FRAME_HEADER_BYTES + (r->version >= 2 ? MW_REC_KEY_BYTES : 0);
    if (hi < lo + need)
        return 0;
    uint64_t end = hi - need + 1; /* candidates start in [lo, end) */
    uint64_t looked = 0;
    unsigned tries = 0;
    while (end > lo && looked < RD_BACK_MAX) {
        uint64_t from = end - lo > RD_BACK_CHUNK ? end - RD_BACK_CHUNK : lo;
        size_t span = (size_t)(end - from);
        const unsigned char *p;
        /* The chunk and the bytes a candidate at its end needs after its first byte. */
        ssize_t got = rd_get(r->fd, &r->back, from, span + need - 1, 0, &p);
        if (got < 0)
            return -1;
        for (size_t i = span; i-- > 0;) {
            if (p[i] != tag[0] || i + need > (size_t)got || memcmp(p + i, tag, 4) != 0)
                continue;
            if (r->version >= 2 &&
                memcmp(p + i + MW_REC_FRAME_HEADER_BYTES, r->key, MW_REC_KEY_BYTES) != 0)
                continue;
            if (++tries > RD_BACK_TRIES)
                return 0;
            Mpiwatch__Record *rec;
            uint64_t fend;
            int k = rd_index_at(r, from + i, &rec, &fend);
            if (k < 0)
                return -1;
            if (k == 1) {
                mpiwatch__record__free_unpacked(rec, NULL);
                *found = from + i;
                return 1;
            }
            /* rd_index_at read through r->scan: p (in r->back) is still valid. */
        }
        looked += span;
        end = from;
    }
    return 0;
}

/* Takes the windows of the index chain that ends at `last` (an intact index frame after the
 * part of the file already in the table) into the table, and moves the table's tail behind
 * that frame. Returns 0, or -1 on a read error. */
static int rd_take_chain(mw_rec_reader_t *r, uint64_t last)
{
    uint64_t *chain = NULL;
    size_t n = 0, cap = 0;
    uint64_t cur = last, last_end = 0, last_mono = 0;
    int rc = 0;
    /* Walk back to the first index the table has already covered (or the chain's start). */
    while (cur >= r->tail) {
        Mpiwatch__Record *rec;
        uint64_t end;
        int k = rd_index_at(r, cur, &rec, &end);
        if (k < 0) {
            rc = -1;
            break;
        }
        if (k == 0)
            break; /* a broken link: the windows before it are not reachable through the index */
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            uint64_t *c = realloc(chain, cap * sizeof *c);
            if (!c) {
                mpiwatch__record__free_unpacked(rec, NULL);
                errno = ENOMEM;
                rc = -1;
                break;
            }
            chain = c;
        }
        chain[n++] = cur;
        if (cur == last) {
            last_end = end;
            last_mono = rec->mono_ns;
        }
        uint64_t prev = rec->index->previous;
        mpiwatch__record__free_unpacked(rec, NULL);
        if (prev == 0 || prev >= cur)
            break;
        cur = prev;
    }
    /* Oldest first, so the table stays in file order. */
    for (size_t i = n; i-- > 0 && rc == 0;) {
        Mpiwatch__Record *rec;
        uint64_t end;
        int k = rd_index_at(r, chain[i], &rec, &end);
        if (k < 0) {
            rc = -1;
            break;
        }
        if (k == 0)
            continue; /* cannot happen unless the file changed under us */
        const Mpiwatch__RecordIndex *ix = rec->index;
        uint64_t after = r->n_win ? r->win[r->n_win - 1].offset : 0;
        for (size_t j = 0; j < ix->n_window && j < ix->n_window_offset; j++) {
            uint64_t off = ix->window_offset[j];
            uint64_t first = j < ix->n_first_sample ? ix->first_sample[j] : 0;
            uint64_t mono = j < ix->n_mono_ns ? ix->mono_ns[j] : 0;
            if (off < r->start || off >= chain[i])
                continue; /* a window frame comes before the index that lists it */
            if (off <= after) {
                rd_win_t *w = rd_win_at(r, off);
                if (w && w->first_sample == 0 && first >= r->start && first < off)
                    w->first_sample = first;
                continue;
            }
            if (rd_win_add(r, ix->window[j], off, first >= r->start && first < off ? first : 0,
                           mono) < 0) {
                rc = -1;
                break;
            }
            uint64_t lean = j < ix->n_lean_offset ? ix->lean_offset[j] : 0;
            if (lean > off && lean < chain[i])
                r->win[r->n_win - 1].lean = lean;
            after = off;
        }
        if (rc == 0 && rd_holes_take(r, ix, chain[i]) < 0)
            rc = -1;
        mpiwatch__record__free_unpacked(rec, NULL);
    }
    if (rc == 0 && last_end) {
        r->tail = last_end;
        r->last_mono = last_mono;
        r->have_last = 1;
    }
    free(chain);
    return rc;
}

/* Takes every intact frame from the table's tail to the end of the file. Returns 0, or -1 on
 * a read error. */
static int rd_scan_forward(mw_rec_reader_t *r)
{
    for (;;) {
        uint32_t tag, len;
        const unsigned char *p;
        int torn;
        uint64_t next;
        rd_peek_t pk;
        int k = rd_record(r, &r->scan, r->tail, RD_AHEAD, &tag, &p, &len, &torn, &next);
        if (k == 0 && torn) {
            const rd_hole_t *h = rd_hole_at(r, r->tail);
            if (h) {
                r->tail = h->end;
                r->scan.len = 0;
                continue;
            }
        }
        if (k <= 0)
            return k;
        if (rd_peek(p, len, &pk) < 0)
            return 0; /* an intact CRC around bytes that are not a Record: the file ends here */
        if (pk.body == RD_FIELD_LEAN && r->n_win && r->win[r->n_win - 1].window == pk.window &&
            r->win[r->n_win - 1].offset < r->tail) {
            if (r->win[r->n_win - 1].lean == 0) /* the lean copy of the window before it */
                r->win[r->n_win - 1].lean = r->tail;
        } else if (pk.body == RD_FIELD_WINDOW || pk.body == RD_FIELD_LEAN) {
            if (rd_win_add(r, pk.window, r->tail, 0, pk.mono_ns) < 0)
                return -1;
        } else if (pk.body == RD_FIELD_INDEX && tag == MW_REC_TAG_INDEX) {
            Mpiwatch__Record *rec = mpiwatch__record__unpack(NULL, len, p);
            int bad = 0;
            if (rec && rec->body_case == MPIWATCH__RECORD__BODY_INDEX && rec->index) {
                rd_index_first_samples(r, rec->index);
                bad = rd_holes_take(r, rec->index, r->tail) < 0;
            }
            if (rec)
                mpiwatch__record__free_unpacked(rec, NULL);
            if (bad)
                return -1;
        }
        r->last_mono = pk.mono_ns;
        r->have_last = 1;
        r->tail = next;
    }
}

/* Brings the window table up to date with the file as it is now. Returns 0, or -1. */
static int rd_refresh(mw_rec_reader_t *r)
{
    struct stat st;
    if (fstat(r->fd, &st) < 0)
        return -1;
    uint64_t size = (uint64_t)st.st_size;
    /* What was read at the end may have changed since: a writer with aligned writes pads its
     * last block with zeros and writes it again when it has more. */
    r->scan.len = 0;
    r->back.len = 0;
    if (size < r->known_size) {
        /* Shorter than before: the padding cut at close, or not the same file any more. */
        r->n_win = 0;
        r->n_order = 0;
        r->unsorted = 0;
        r->tail = r->start;
        r->known_size = 0;
        r->have_first = r->have_last = 0;
        r->n_holes = 0;
        r->raw_from = 0;
    }
    int grew = size > r->known_size;
    r->known_size = size;
    if (!r->have_first) {
        uint32_t tag, len;
        const unsigned char *p;
        int torn;
        uint64_t next;
        rd_peek_t pk;
        int k = rd_record(r, &r->scan, r->start, 0, &tag, &p, &len, &torn, &next);
        if (k < 0)
            return -1;
        if (k == 1 && rd_peek(p, len, &pk) == 0) {
            r->first_mono = pk.mono_ns;
            r->have_first = 1;
        }
    }
    /* Through the index over what is new, then frame by frame from where the table ends
     * (also when the size did not change: a padded block may have been filled). */
    uint64_t last;
    int k = grew ? rd_find_last_index(r, r->tail, size, &last) : 0;
    if (k < 0 || (k == 1 && rd_take_chain(r, last) < 0))
        return -1;
    return rd_scan_forward(r);
}

int mw_rec_reader_find_window(mw_rec_reader_t *r, uint64_t index, uint64_t *window_offset,
                              uint64_t *first_sample_offset)
{
    if (rd_refresh(r) < 0)
        return -1;
    long i = rd_win_find(r, index);
    if (i < 0)
        return 0;
    const rd_win_t *w = &r->win[i];
    uint32_t tag, len;
    const unsigned char *p;
    int torn;
    uint64_t next;
    rd_peek_t pk;
    uint64_t at = w->offset;
    int k = rd_record(r, &r->scan, at, 0, &tag, &p, &len, &torn, &next);
    if (k < 0)
        return -1;
    if (k == 0 && w->lean && rd_hole_at(r, at)) {
        /* The full window went with the samples around it: its lean copy (coarse tier). */
        at = w->lean;
        if ((k = rd_record(r, &r->scan, at, 0, &tag, &p, &len, &torn, &next)) < 0)
            return -1;
    }
    if (k == 0 || tag != MW_REC_TAG_FRAME || rd_peek(p, len, &pk) < 0 ||
        (pk.body != RD_FIELD_WINDOW && pk.body != RD_FIELD_LEAN) || pk.window != index)
        return -1; /* the index points somewhere else: the file is corrupt */
    if (window_offset)
        *window_offset = at;
    if (first_sample_offset) /* a dropped sample is no place to start reading from */
        *first_sample_offset = rd_hole_at(r, w->first_sample) ? 0 : w->first_sample;
    return 1;
}

int mw_rec_reader_span(mw_rec_reader_t *r, uint64_t *first_window, uint64_t *last_window,
                       uint64_t *first_mono_ns, uint64_t *last_mono_ns)
{
    if (rd_refresh(r) < 0)
        return -1;
    if (first_mono_ns)
        *first_mono_ns = r->have_first ? r->first_mono : 0;
    if (last_mono_ns)
        *last_mono_ns = r->have_last ? r->last_mono : 0;
    if (r->n_win == 0)
        return 0;
    if (first_window)
        *first_window = r->win[0].window;
    if (last_window)
        *last_window = r->win[r->n_win - 1].window;
    return 1;
}

int mw_rec_reader_tier(mw_rec_reader_t *r, uint64_t first, uint64_t last, uint64_t *raw_from)
{
    if (rd_refresh(r) < 0)
        return -1;
    if (raw_from)
        *raw_from = r->raw_from;
    for (size_t i = 0; i < r->n_holes; i++)
        if (r->holes[i].wmin <= last && r->holes[i].wmax >= first)
            return 1;
    return 0;
}

/* ---- per-call traces in recorded windows ---------------------------------------------------- */

#define RD_FIELD_WINDOW_TRACES 30u /* Window.traces */
#define RD_FIELD_RT_TRACE 2u       /* RankTrace.trace */
#define RD_FIELD_RT_OFFSET 3u      /* RankTrace.frame_offset */
#define RD_FIELD_TRACE_RECORDS 8u  /* Trace.records */

/* One field walker rewrites the three levels (Window, RankTrace, Trace): a rule says, for each
 * field, what takes its place in the output. */
#define PB_KEEP (SIZE_MAX - 1) /* a rule's answer: the field as it is */

/* A rule: writes (out NULL: only counts) what replaces the field `field` of wire type `type`
 * (a length-delimited field's bytes in [data, data + len)) and returns its size (0: the field
 * goes), PB_KEEP to keep the field as it is, SIZE_MAX when the bytes are not protobuf. */
typedef size_t (*pb_rule_t)(void *ctx, uint32_t field, unsigned type, const unsigned char *data,
                            size_t len, unsigned char *out);

/* The message in [d, d + n) rewritten field by field by `rule` into out (NULL: only counts).
 * Returns the bytes, or SIZE_MAX when the bytes are not protobuf. */
static size_t pb_rewrite(const unsigned char *d, size_t n, pb_rule_t rule, void *ctx,
                         unsigned char *out)
{
    pb_cursor_t c = {d, d + n};
    size_t w = 0;
    for (;;) {
        const unsigned char *at = c.p;
        uint32_t field;
        unsigned type;
        uint64_t v;
        const unsigned char *data;
        size_t len;
        int k = pb_next(&c, &field, &type, &v, &data, &len);
        if (k < 0)
            return SIZE_MAX;
        if (k == 0)
            return w;
        size_t put = rule(ctx, field, type, data, len, out ? out + w : NULL);
        if (put == SIZE_MAX)
            return SIZE_MAX;
        if (put == PB_KEEP) {
            put = (size_t)(c.p - at);
            if (out)
                memcpy(out + w, at, put);
        }
        w += put;
    }
}

/* A body writer: the body of a length-delimited field, [d, d + n) rewritten into out (NULL:
 * only counts); its size, or SIZE_MAX when the bytes are not protobuf. */
typedef size_t (*pb_body_t)(const unsigned char *d, size_t n, void *ctx, unsigned char *out);

/* The length-delimited field `field` whose body, [data, data + len), `body` rewrites: the body
 * is counted first for the length prefix, then written. */
static size_t pb_rewrite_field(uint32_t field, const unsigned char *data, size_t len,
                               pb_body_t body, void *ctx, unsigned char *out)
{
    size_t bl = body(data, len, ctx, NULL);
    if (bl == SIZE_MAX)
        return SIZE_MAX;
    unsigned char hdr[1 + MW_WIRE_VARINT_MAX];
    size_t h = mw_wire_put_tag(hdr, field, MW_WIRE_LEN);
    h += mw_wire_put_varint(hdr + h, bl);
    if (out) {
        memcpy(out, hdr, h);
        body(data, len, ctx, out + h);
    }
    return h + bl;
}

/* Trace: all but its records. */
static size_t rule_trace(void *ctx, uint32_t field, unsigned type, const unsigned char *data,
                         size_t len, unsigned char *out)
{
    (void)ctx, (void)type, (void)data, (void)len, (void)out;
    return field == RD_FIELD_TRACE_RECORDS ? 0 : PB_KEEP;
}

static size_t body_trace(const unsigned char *d, size_t n, void *ctx, unsigned char *out)
{
    return pb_rewrite(d, n, rule_trace, ctx, out);
}

/* RankTrace: its Trace without records, no frame_offset (strip_rank_trace appends it). */
static size_t rule_rank_trace(void *ctx, uint32_t field, unsigned type, const unsigned char *data,
                              size_t len, unsigned char *out)
{
    (void)ctx;
    if (field == RD_FIELD_RT_OFFSET)
        return 0;
    if (field == RD_FIELD_RT_TRACE && type == MW_WIRE_LEN)
        return pb_rewrite_field(RD_FIELD_RT_TRACE, data, len, body_trace, NULL, out);
    return PB_KEEP;
}

/* Writes (out NULL: counts) the body of a RankTrace [d, d + n) in its recording form: its
 * Trace without records, then frame_offset = off. SIZE_MAX when the bytes are not protobuf. */
static size_t strip_rank_trace(const unsigned char *d, size_t n, uint64_t off, unsigned char *out)
{
    size_t w = pb_rewrite(d, n, rule_rank_trace, NULL, out);
    if (w == SIZE_MAX)
        return SIZE_MAX;
    unsigned char tail[1 + MW_WIRE_VARINT_MAX];
    size_t t = mw_wire_put_tag(tail, RD_FIELD_RT_OFFSET, MW_WIRE_VARINT);
    t += mw_wire_put_varint(tail + t, off);
    if (out)
        memcpy(out + w, tail, t);
    return w + t;
}

static size_t body_rank_trace(const unsigned char *d, size_t n, void *ctx, unsigned char *out)
{
    return strip_rank_trace(d, n, *(const uint64_t *)ctx, out);
}

typedef struct {
    const uint64_t *frame_off;
    size_t n, i;
} strip_window_t;

/* Window: its i-th traces entry, when frame_off[i] is set, in its recording form. */
static size_t rule_window(void *ctx, uint32_t field, unsigned type, const unsigned char *data,
                          size_t len, unsigned char *out)
{
    strip_window_t *sw = ctx;
    if (field != RD_FIELD_WINDOW_TRACES || type != MW_WIRE_LEN || sw->i >= sw->n)
        return PB_KEEP;
    uint64_t off = sw->frame_off[sw->i++];
    if (!off)
        return PB_KEEP;
    /* Never longer than the entry plus 11 bytes: the records only go. */
    return pb_rewrite_field(RD_FIELD_WINDOW_TRACES, data, len, body_rank_trace, &off, out);
}

size_t mw_rec_window_strip(const void *pb, size_t len, const uint64_t *frame_off, size_t n,
                           void *out)
{
    strip_window_t sw = {frame_off, n, 0};
    size_t w = pb_rewrite(pb, len, rule_window, &sw, out);
    return w == SIZE_MAX ? 0 : w;
}

uint64_t mw_rec_reader_trace_failures(const mw_rec_reader_t *r)
{
    return r ? r->res_failed : 0;
}

/* Resolves one RankTrace: appends its records to r->res_out at *at (length *len). Returns 1,
 * 0 when it has no frame_offset, -1 (reason in err) when it does not resolve, -2 when out of
 * memory. */
static int rd_resolve(mw_rec_reader_t *r, const char *job, uint64_t window,
                      const Mpiwatch__RankTrace *rt, size_t *at, size_t *len, char *err,
                      size_t errlen)
{
    if (!rt || rt->frame_offset == 0)
        return 0;
    const Mpiwatch__Trace *want = rt->trace;
    uint64_t off = rt->frame_offset;
    if (!want) {
        rd_err(err, errlen, "rank %u: a frame offset without a trace", rt->rank);
        return -1;
    }
    if (off < r->start) {
        rd_err(err, errlen, "rank %u: frame offset %llu is in the header", rt->rank,
               (unsigned long long)off);
        return -1;
    }
    if (r->res_len >= MW_REC_WINDOW_TRACE_BYTES) {
        rd_err(err, errlen, "rank %u: the window's traces already hold %u bytes", rt->rank,
               MW_REC_WINDOW_TRACE_BYTES);
        return -1;
    }
    uint32_t tag, flen;
    const unsigned char *p;
    int torn;
    uint64_t next;
    int k = rd_frame(r, &r->res, off, 0, &tag, &p, &flen, &torn, &next);
    if (k < 0) {
        rd_err(err, errlen, "rank %u: read error at offset %llu: %s", rt->rank,
               (unsigned long long)off, strerror(errno));
        return -1;
    }
    if (k == 0 || tag != MW_REC_TAG_FRAME) {
        rd_err(err, errlen, "rank %u: no intact record frame at offset %llu", rt->rank,
               (unsigned long long)off);
        return -1;
    }
    Mpiwatch__Record *rec = mpiwatch__record__unpack(NULL, flen, p);
    if (!rec || rec->body_case != MPIWATCH__RECORD__BODY_MESSAGE || rec->parts > 1) {
        if (rec)
            mpiwatch__record__free_unpacked(rec, NULL);
        rd_err(err, errlen, "rank %u: the frame at offset %llu is not a received message", rt->rank,
               (unsigned long long)off);
        return -1;
    }
    Mpiwatch__Envelope *env =
        rec->message.len <= MW_MAX_MESSAGE_BYTES
            ? mpiwatch__envelope__unpack(NULL, rec->message.len, rec->message.data)
            : NULL;
    mpiwatch__record__free_unpacked(rec, NULL);
    const Mpiwatch__Trace *t = NULL;
    if (env && env->body_case == MPIWATCH__ENVELOPE__BODY_TRACE)
        t = env->trace;
    else if (env && env->body_case == MPIWATCH__ENVELOPE__BODY_SAMPLE && env->sample)
        t = env->sample->trace;
    const char *why = NULL;
    if (!env)
        why = "is not an envelope";
    else if (job && (!env->job || strcmp(env->job, job) != 0))
        why = "is from another job";
    else if (env->rank != rt->rank)
        why = "is from another rank";
    else if (!t)
        why = "holds no trace";
    else if (t->window != window || want->window != window)
        why = "holds a trace of another window";
    else if (t->count != want->count || t->encoding != want->encoding ||
             t->raw_bytes != want->raw_bytes || t->window_start_ns != want->window_start_ns ||
             t->threads != want->threads || t->flags != want->flags || t->capture != want->capture)
        why = "holds another trace of this window";
    else if (t->records.len == 0)
        why = "holds a trace without records";
    else if (t->records.len > MW_REC_WINDOW_TRACE_BYTES - r->res_len)
        why = "holds more records than the window's traces may (MW_REC_WINDOW_TRACE_BYTES)";
    int rc = 1;
    if (why) {
        rd_err(err, errlen, "rank %u, window %llu: the frame at offset %llu %s", rt->rank,
               (unsigned long long)window, (unsigned long long)off, why);
        rc = -1;
    } else if (r->res_len + t->records.len > r->res_cap) {
        size_t cap = r->res_cap ? r->res_cap : 65536;
        while (cap < r->res_len + t->records.len)
            cap *= 2;
        uint8_t *q = realloc(r->res_out, cap);
        if (!q) {
            rd_err(err, errlen, "out of memory");
            rc = -2;
        } else {
            r->res_out = q;
            r->res_cap = cap;
        }
    }
    if (rc == 1) {
        memcpy(r->res_out + r->res_len, t->records.data, t->records.len);
        *at = r->res_len;
        *len = t->records.len;
        r->res_len += t->records.len;
    }
    if (env)
        mpiwatch__envelope__free_unpacked(env, NULL);
    return rc;
}

int mw_rec_reader_resolve_trace(mw_rec_reader_t *r, const char *job, uint64_t window,
                                const Mpiwatch__RankTrace *rt, const uint8_t **records, size_t *len,
                                char *err, size_t errlen)
{
    size_t at = 0, n = 0;
    r->res_len = 0;
    int k = rd_resolve(r, job, window, rt, &at, &n, err, errlen);
    if (k < 0) {
        r->res_failed++;
        return -1;
    }
    *records = k ? r->res_out + at : NULL;
    *len = n;
    return k;
}

/* Entries of a window's traces by rank, then position: a rank's second entry is refused. */
static int cmp_rank_pos(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int mw_rec_reader_resolve_window(mw_rec_reader_t *r, Mpiwatch__Window *w, const char *job)
{
    int failed = 0, oom = 0;
    r->res_len = 0;
    /* Two passes: the buffer may move while it fills, so pointers are set at the end. */
    size_t *at = NULL;
    uint64_t *by_rank = NULL; /* rank << 32 | position of the entries with an offset */
    size_t nb = 0;
    for (size_t i = 0; i < w->n_traces; i++) {
        Mpiwatch__RankTrace *rt = w->traces[i];
        if (!rt || rt->frame_offset == 0)
            continue;
        if (!at) {
            at = calloc(2 * w->n_traces, sizeof *at);
            by_rank = malloc(w->n_traces * sizeof *by_rank);
            if (!at || !by_rank) {
                free(at);
                at = NULL;
                oom = 1;
                break;
            }
        }
        by_rank[nb++] = (uint64_t)rt->rank << 32 | (uint32_t)i; /* a message has < 2^32 */
    }
    if (nb > 1)
        qsort(by_rank, nb, sizeof *by_rank, cmp_rank_pos);
    for (size_t j = 1; j < nb; j++)
        if (by_rank[j] >> 32 == by_rank[j - 1] >> 32)
            at[2 * (uint32_t)by_rank[j] + 1] = SIZE_MAX; /* the rank's second entry */
    free(by_rank);
    for (size_t i = 0; at && i < w->n_traces; i++) {
        Mpiwatch__RankTrace *rt = w->traces[i];
        if (!rt || rt->frame_offset == 0 || at[2 * i + 1] == SIZE_MAX)
            continue;
        char err[200] = "";
        int k = rd_resolve(r, job, w->index, rt, &at[2 * i], &at[2 * i + 1], err, sizeof err);
        if (k == -2)
            oom = 1;
        if (k < 0)
            at[2 * i + 1] = SIZE_MAX; /* failed */
    }
    for (size_t i = 0; i < w->n_traces; i++) {
        Mpiwatch__RankTrace *rt = w->traces[i];
        if (!rt || rt->frame_offset == 0)
            continue;
        Mpiwatch__Trace *t = rt->trace;
        rt->frame_offset = 0;
        if (at && at[2 * i + 1] != SIZE_MAX) {
            t->records.data = r->res_out + at[2 * i];
            t->records.len = at[2 * i + 1];
            continue;
        }
        /* Not resolved: the rank is not exact in this window. */
        failed++;
        r->res_failed++;
        if (!t)
            continue;
        if (t->state == 1 && w->traced_ranks > 0)
            w->traced_ranks--;
        t->state = 2;  /* TRACE_SUMMARY_ONLY */
        t->reason = 4; /* refused */
        t->count = t->encoding = 0;
        t->raw_bytes = 0;
        t->records.data = NULL;
        t->records.len = 0;
    }
    free(at);
    return oom ? -1 : failed;
}

/* ---- the coarse tier: lean windows and per-rank sums ---------------------------------------- */

/* The Window fields a lean copy leaves out: the per-rank content (pairs 22-25, MPI shares 28,
 * traces 30, rf_* 40-44, rr_* 45-50, fpair_* 52-56), which RecordRanks keeps summed. */
static int lean_drops(uint32_t field)
{
    return (field >= 22 && field <= 25) || field == 28 || field == 30 ||
           (field >= 40 && field <= 50) || (field >= 52 && field <= 56);
}

static size_t rule_lean(void *ctx, uint32_t field, unsigned type, const unsigned char *data,
                        size_t len, unsigned char *out)
{
    (void)ctx, (void)type, (void)data, (void)len, (void)out;
    return lean_drops(field) ? 0 : PB_KEEP;
}

size_t mw_rec_window_lean(const void *pb, size_t len, void *out)
{
    size_t n = pb_rewrite(pb, len, rule_lean, NULL, out);
    return n == SIZE_MAX ? 0 : n;
}

#define RK_PAIRS_MAX (1u << 22) /* pairs summed per coarse frame (the merge's cap per window) */
#define RK_PM_MAX (1u << 20)    /* ranks with an MPI share */

/* One summed entry: a key of up to three numbers (rank and function, rank and region, source
 * and destination, source, destination and function) and up to four sums. */
typedef struct {
    uint32_t k[3];
    uint64_t v[4];
} rk_ent_t;

/* The entries summed so far, sorted by key, at most `max` of them; `fresh` collects the keys
 * of the window being added that are not there yet. A window's entries come sorted (the merge
 * sorts them at close) and repeat from window to window, so adding one is a walk along both
 * in step, and a merge of the few new keys: sequential, where a hash table missed the cache on
 * nearly every entry (15% of the collector's time at 4096 ranks). */
typedef struct {
    rk_ent_t *e, *fresh, *tmp;
    size_t n, cap, n_fresh, cap_fresh, cap_tmp, max;
} rk_tab_t;

struct mw_rec_ranks {
    rk_tab_t rf, rr, pair, fpair;
    uint64_t *pm_sum;
    uint32_t *pm_win;
    size_t n_pm, cap_pm;
    uint64_t first, last, left_out;
    uint32_t windows;
    unsigned char *out;
    size_t out_cap;
};

static int rk_less(const uint32_t *a, const uint32_t *b)
{
    return a[0] != b[0] ? a[0] < b[0] : a[1] != b[1] ? a[1] < b[1] : a[2] < b[2];
}

static int rk_cmp(const void *x, const void *y)
{
    const rk_ent_t *a = x, *b = y;
    return rk_less(a->k, b->k) ? -1 : rk_less(b->k, a->k);
}

/* Room for n entries in *p (capacity *cap). Returns 0, or -1 when out of memory. */
static int rk_room(rk_ent_t **p, size_t *cap, size_t n)
{
    if (n <= *cap)
        return 0;
    size_t c = *cap ? *cap : 1024;
    while (c < n)
        c *= 2;
    rk_ent_t *q = realloc(*p, c * sizeof *q);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* Merges the fresh keys (sorted here, equal ones added together) into the table. */
static void rk_merge_fresh(mw_rec_ranks_t *a, rk_tab_t *t)
{
    if (!t->n_fresh)
        return;
    qsort(t->fresh, t->n_fresh, sizeof *t->fresh, rk_cmp);
    size_t m = 0;
    for (size_t i = 0; i < t->n_fresh; i++) {
        if (m && !rk_less(t->fresh[m - 1].k, t->fresh[i].k)) {
            for (int j = 0; j < 4; j++)
                t->fresh[m - 1].v[j] += t->fresh[i].v[j];
        } else {
            t->fresh[m++] = t->fresh[i];
        }
    }
    t->n_fresh = 0;
    if (t->n + m > t->max || rk_room(&t->tmp, &t->cap_tmp, t->n + m) < 0) {
        a->left_out += m; /* never more than max: checked before the window was added */
        return;
    }
    size_t i = 0, j = 0, o = 0;
    while (i < t->n || j < m)
        t->tmp[o++] =
            j >= m || (i < t->n && rk_less(t->e[i].k, t->fresh[j].k)) ? t->e[i++] : t->fresh[j++];
    rk_ent_t *e = t->e;
    size_t cap = t->cap;
    t->e = t->tmp, t->cap = t->cap_tmp;
    t->tmp = e, t->cap_tmp = cap;
    t->n = o;
}

mw_rec_ranks_t *mw_rec_ranks_new(void)
{
    mw_rec_ranks_t *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->rf.max = a->rr.max = MW_REC_RANK_ENTRIES_MAX;
    a->pair.max = a->fpair.max = RK_PAIRS_MAX;
    return a;
}

void mw_rec_ranks_free(mw_rec_ranks_t *a)
{
    if (!a)
        return;
    rk_tab_t *t[4] = {&a->rf, &a->rr, &a->pair, &a->fpair};
    for (int i = 0; i < 4; i++)
        free(t[i]->e), free(t[i]->fresh), free(t[i]->tmp);
    free(a->pm_sum);
    free(a->pm_win);
    free(a->out);
    free(a);
}

uint32_t mw_rec_ranks_windows(const mw_rec_ranks_t *a)
{
    return a ? a->windows : 0;
}

/* A packed field's values in order: one cursor per parallel array of a Window. */
typedef struct {
    pb_cursor_t c;
    int set;
} rk_col_t;

static int rk_val(rk_col_t *col, uint64_t *v)
{
    return col->set && col->c.p < col->c.end && pb_varint(&col->c, v) == 0;
}

/* Entries in a packed field (its varints), for the check that a window fits. */
static size_t rk_count(const rk_col_t *col)
{
    size_t n = 0;
    if (col->set)
        for (const unsigned char *p = col->c.p; p < col->c.end; p++)
            n += (*p & 0x80) == 0;
    return n;
}

/* Adds the rows of parallel columns cols[0..nk) (keys) and cols[nk..nk+nv) (sums) to t: a
 * walk along the table in step with the rows while they come in key order (a lower bound
 * searched again when one does not), new keys collected and merged in at the end. */
static void rk_rows(mw_rec_ranks_t *a, rk_tab_t *t, rk_col_t *cols, unsigned nk, unsigned nv)
{
    size_t pos = 0;
    uint32_t prev[3] = {0, 0, 0};
    for (;;) {
        uint64_t k[3] = {0, 0, 0}, v[4] = {0, 0, 0, 0};
        for (unsigned i = 0; i < nk; i++)
            if (!rk_val(&cols[i], &k[i]))
                goto done;
        for (unsigned i = 0; i < nv; i++)
            rk_val(&cols[nk + i], &v[i]);
        uint32_t key[3] = {(uint32_t)k[0], (uint32_t)k[1], (uint32_t)k[2]};
        if (rk_less(key, prev)) { /* out of order: search the table again */
            size_t lo = 0, hi = t->n;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (rk_less(t->e[mid].k, key))
                    lo = mid + 1;
                else
                    hi = mid;
            }
            pos = lo;
        }
        while (pos < t->n && rk_less(t->e[pos].k, key))
            pos++;
        memcpy(prev, key, sizeof prev);
        rk_ent_t *e;
        if (pos < t->n && !rk_less(key, t->e[pos].k)) {
            e = &t->e[pos];
        } else if (t->n + t->n_fresh < t->max &&
                   rk_room(&t->fresh, &t->cap_fresh, t->n_fresh + 1) == 0) {
            e = &t->fresh[t->n_fresh++];
            *e = (rk_ent_t){{key[0], key[1], key[2]}, {0, 0, 0, 0}};
        } else {
            a->left_out++;
            continue;
        }
        for (unsigned i = 0; i < nv; i++)
            e->v[i] += v[i];
    }
done:
    rk_merge_fresh(a, t);
}

int mw_rec_ranks_add(mw_rec_ranks_t *a, const void *pb, size_t len)
{
    /* Columns by Window field number: 22..25 pairs, 28 shares, 40..50 rf_*, rr_*, 52..56 fpair_*.
     */
    rk_col_t col[57];
    memset(col, 0, sizeof col);
    pb_cursor_t c = {pb, (const unsigned char *)pb + len};
    uint32_t field;
    unsigned type;
    uint64_t v, index = 0;
    const unsigned char *d;
    size_t n;
    int k;
    while ((k = pb_next(&c, &field, &type, &v, &d, &n)) == 1) {
        if (field == 1 && type == MW_WIRE_VARINT)
            index = v;
        else if (field < 57 && lean_drops(field) && field != 30 && type == MW_WIRE_LEN &&
                 !col[field].set)
            col[field] = (rk_col_t){{d, d + n}, 1};
    }
    if (k < 0)
        return -1;
    if (a->windows) {
        /* Another job (indices start again), or a window whose entries would pass a cap:
         * the caller writes what is summed first. */
        if (index <= a->last || a->rf.n + rk_count(&col[40]) > a->rf.max ||
            a->rr.n + rk_count(&col[45]) > a->rr.max ||
            a->pair.n + rk_count(&col[22]) > a->pair.max ||
            a->fpair.n + rk_count(&col[52]) > a->fpair.max)
            return 1;
    } else {
        a->first = index;
    }
    a->last = index;
    a->windows++;
    rk_rows(a, &a->rf, &col[40], 2, 3);
    rk_rows(a, &a->rr, &col[45], 2, 4);
    rk_rows(a, &a->pair, &col[22], 2, 2);
    rk_rows(a, &a->fpair, &col[52], 3, 2);
    uint64_t pm;
    for (size_t rank = 0; rk_val(&col[28], &pm); rank++) {
        if (rank >= RK_PM_MAX)
            break;
        if (rank >= a->cap_pm) {
            size_t cap = a->cap_pm ? 2 * a->cap_pm : 1024;
            uint64_t *s = realloc(a->pm_sum, cap * sizeof *s);
            if (s)
                a->pm_sum = s;
            uint32_t *w = s ? realloc(a->pm_win, cap * sizeof *w) : NULL;
            if (!w) {
                a->left_out++;
                break;
            }
            a->pm_win = w;
            memset(a->pm_sum + a->cap_pm, 0, (cap - a->cap_pm) * sizeof *s);
            memset(a->pm_win + a->cap_pm, 0, (cap - a->cap_pm) * sizeof *w);
            a->cap_pm = cap;
        }
        if (rank >= a->n_pm)
            a->n_pm = rank + 1;
        if (pm != 65535u) { /* MW_RANK_PM_NONE: the rank's sample is not in the window */
            a->pm_sum[rank] += pm;
            a->pm_win[rank]++;
        }
    }
    return 0;
}

/* Points the per-rank arrays of a RecordRanks' sums (nrf rf_*, nrr rr_*, np pair_*, nfp
 * fpair_* entries) into the words at *p32 and *p64 and sets their counts; the pointers are
 * moved past them. An entry takes 32-bit + 64-bit words: rf 2 + 3, rr 2 + 4, pairs 2 + 2,
 * fpairs 3 + 2. */
static void rk_layout(Mpiwatch__Window *s, size_t nrf, size_t nrr, size_t np, size_t nfp,
                      uint32_t **p32, uint64_t **p64)
{
    uint32_t *q32 = *p32;
    uint64_t *q64 = *p64;
    s->n_rf_rank = s->n_rf_fn = s->n_rf_count = s->n_rf_ns = s->n_rf_bytes = nrf;
    s->rf_rank = q32, s->rf_fn = q32 + nrf, q32 += 2 * nrf;
    s->rf_count = q64, s->rf_ns = q64 + nrf, s->rf_bytes = q64 + 2 * nrf, q64 += 3 * nrf;
    s->n_rr_rank = s->n_rr_region = s->n_rr_count = s->n_rr_incl_ns = s->n_rr_excl_ns =
        s->n_rr_mpi_ns = nrr;
    s->rr_rank = q32, s->rr_region = q32 + nrr, q32 += 2 * nrr;
    s->rr_count = q64, s->rr_incl_ns = q64 + nrr, s->rr_excl_ns = q64 + 2 * nrr;
    s->rr_mpi_ns = q64 + 3 * nrr, q64 += 4 * nrr;
    s->n_pair_src = s->n_pair_dst = s->n_pair_messages = s->n_pair_bytes = np;
    s->pair_src = q32, s->pair_dst = q32 + np, q32 += 2 * np;
    s->pair_messages = q64, s->pair_bytes = q64 + np, q64 += 2 * np;
    s->n_fpair_src = s->n_fpair_dst = s->n_fpair_fn = s->n_fpair_messages = s->n_fpair_bytes = nfp;
    s->fpair_src = q32, s->fpair_dst = q32 + nfp, s->fpair_fn = q32 + 2 * nfp, q32 += 3 * nfp;
    s->fpair_messages = q64, s->fpair_bytes = q64 + nfp, q64 += 2 * nfp;
    *p32 = q32;
    *p64 = q64;
}

const void *mw_rec_ranks_take(mw_rec_ranks_t *a, size_t *len)
{
    *len = 0;
    if (!a || !a->windows)
        return NULL;
    int oom = 0;
    size_t nrf = a->rf.n, nrr = a->rr.n, np = a->pair.n, nfp = a->fpair.n;
    const rk_ent_t *rf = a->rf.e, *rr = a->rr.e, *pr = a->pair.e, *fp = a->fpair.e;
    size_t words = 5 * nrf + 6 * nrr + 4 * np + 5 * nfp + 2 * a->n_pm;
    uint64_t *w64 = words ? malloc(words * sizeof *w64) : NULL;
    uint32_t *w32 = words ? malloc(words * sizeof *w32) : NULL;
    const void *out = NULL;
    if (oom || (words && (!w64 || !w32)))
        goto done;
    Mpiwatch__Window s = MPIWATCH__WINDOW__INIT;
    Mpiwatch__RecordRanks rk = MPIWATCH__RECORD_RANKS__INIT;
    uint32_t *p32 = w32;
    uint64_t *p64 = w64;
    s.index = a->first;
    rk_layout(&s, nrf, nrr, np, nfp, &p32, &p64);
    for (size_t i = 0; i < nrf; i++) {
        s.rf_rank[i] = rf[i].k[0], s.rf_fn[i] = rf[i].k[1];
        s.rf_count[i] = rf[i].v[0], s.rf_ns[i] = rf[i].v[1], s.rf_bytes[i] = rf[i].v[2];
    }
    for (size_t i = 0; i < nrr; i++) {
        s.rr_rank[i] = rr[i].k[0], s.rr_region[i] = rr[i].k[1];
        s.rr_count[i] = rr[i].v[0], s.rr_incl_ns[i] = rr[i].v[1];
        s.rr_excl_ns[i] = rr[i].v[2], s.rr_mpi_ns[i] = rr[i].v[3];
    }
    for (size_t i = 0; i < np; i++) {
        s.pair_src[i] = pr[i].k[0], s.pair_dst[i] = pr[i].k[1];
        s.pair_messages[i] = pr[i].v[0], s.pair_bytes[i] = pr[i].v[1];
    }
    for (size_t i = 0; i < nfp; i++) {
        s.fpair_src[i] = fp[i].k[0], s.fpair_dst[i] = fp[i].k[1], s.fpair_fn[i] = fp[i].k[2];
        s.fpair_messages[i] = fp[i].v[0], s.fpair_bytes[i] = fp[i].v[1];
    }
    s.n_rank_mpi_permille = rk.n_rank_mpi_permille_sum = rk.n_rank_windows = a->n_pm;
    s.rank_mpi_permille = p32, rk.rank_windows = p32 + a->n_pm;
    rk.rank_mpi_permille_sum = p64;
    for (size_t i = 0; i < a->n_pm; i++) {
        uint32_t nw = a->pm_win[i];
        s.rank_mpi_permille[i] = nw ? (uint32_t)((a->pm_sum[i] + nw / 2) / nw) : 65535u;
        rk.rank_windows[i] = nw;
        rk.rank_mpi_permille_sum[i] = a->pm_sum[i];
    }
    rk.first_window = a->first;
    rk.last_window = a->last;
    rk.windows = a->windows;
    rk.sums = &s;
    rk.left_out = a->left_out;
    size_t need = mpiwatch__record_ranks__get_packed_size(&rk);
    if (need > a->out_cap) {
        unsigned char *o = realloc(a->out, need);
        if (!o)
            goto done;
        a->out = o;
        a->out_cap = need;
    }
    *len = mpiwatch__record_ranks__pack(&rk, a->out);
    out = a->out;
done:
    free(w64), free(w32);
    a->rf.n = a->rr.n = a->pair.n = a->fpair.n = 0;
    if (a->n_pm) {
        memset(a->pm_sum, 0, a->n_pm * sizeof *a->pm_sum);
        memset(a->pm_win, 0, a->n_pm * sizeof *a->pm_win);
    }
    a->n_pm = 0;
    a->windows = 0;
    a->left_out = 0;
    return out;
}

const char *mw_rec_ranks_check(const Mpiwatch__RecordRanks *rk)
{
    const Mpiwatch__Window *s = rk->sums;
    if (!s)
        return NULL;
    size_t rf = s->n_rf_rank, rr = s->n_rr_rank, pr = s->n_pair_src, fp = s->n_fpair_src;
    if (s->n_rf_fn != rf || s->n_rf_count != rf || s->n_rf_ns != rf || s->n_rf_bytes != rf ||
        s->n_rr_region != rr || s->n_rr_count != rr || s->n_rr_incl_ns != rr ||
        s->n_rr_excl_ns != rr || s->n_rr_mpi_ns != rr || s->n_pair_dst != pr ||
        s->n_pair_messages != pr || s->n_pair_bytes != pr || s->n_fpair_dst != fp ||
        s->n_fpair_fn != fp || s->n_fpair_messages != fp || s->n_fpair_bytes != fp)
        return "parallel arrays of different lengths";
    return NULL;
}

size_t mw_rec_ranks_one(const Mpiwatch__RecordRanks *rk, uint32_t rank, uint8_t **buf, size_t *cap)
{
    const Mpiwatch__Window *w = rk->sums;
    Mpiwatch__Window s = MPIWATCH__WINDOW__INIT;
    Mpiwatch__RecordRanks one = MPIWATCH__RECORD_RANKS__INIT;
    size_t nrf = 0, nrr = 0, np = 0, nfp = 0;
    if (w) {
        for (size_t i = 0; i < w->n_rf_rank; i++)
            nrf += w->rf_rank[i] == rank;
        for (size_t i = 0; i < w->n_rr_rank; i++)
            nrr += w->rr_rank[i] == rank;
        for (size_t i = 0; i < w->n_pair_src; i++)
            np += w->pair_src[i] == rank || w->pair_dst[i] == rank;
        for (size_t i = 0; i < w->n_fpair_src; i++)
            nfp += w->fpair_src[i] == rank || w->fpair_dst[i] == rank;
    }
    /* Each kept entry in the same layout as the whole frame's (mw_rec_ranks_take). */
    size_t words = 5 * nrf + 6 * nrr + 4 * np + 5 * nfp + 2;
    uint64_t *w64 = malloc(words * sizeof *w64);
    uint32_t *w32 = malloc(words * sizeof *w32);
    size_t len = 0;
    if (!w64 || !w32)
        goto done;
    uint32_t *p32 = w32;
    uint64_t *p64 = w64;
    s.index = w ? w->index : rk->first_window;
    rk_layout(&s, nrf, nrr, np, nfp, &p32, &p64);
    size_t k = 0;
    for (size_t i = 0; w && i < w->n_rf_rank; i++)
        if (w->rf_rank[i] == rank) {
            s.rf_rank[k] = rank, s.rf_fn[k] = w->rf_fn[i], s.rf_count[k] = w->rf_count[i];
            s.rf_ns[k] = w->rf_ns[i], s.rf_bytes[k++] = w->rf_bytes[i];
        }
    k = 0;
    for (size_t i = 0; w && i < w->n_rr_rank; i++)
        if (w->rr_rank[i] == rank) {
            s.rr_rank[k] = rank, s.rr_region[k] = w->rr_region[i], s.rr_count[k] = w->rr_count[i];
            s.rr_incl_ns[k] = w->rr_incl_ns[i], s.rr_excl_ns[k] = w->rr_excl_ns[i];
            s.rr_mpi_ns[k++] = w->rr_mpi_ns[i];
        }
    k = 0;
    for (size_t i = 0; w && i < w->n_pair_src; i++)
        if (w->pair_src[i] == rank || w->pair_dst[i] == rank) {
            s.pair_src[k] = w->pair_src[i], s.pair_dst[k] = w->pair_dst[i];
            s.pair_messages[k] = w->pair_messages[i], s.pair_bytes[k++] = w->pair_bytes[i];
        }
    k = 0;
    for (size_t i = 0; w && i < w->n_fpair_src; i++)
        if (w->fpair_src[i] == rank || w->fpair_dst[i] == rank) {
            s.fpair_src[k] = w->fpair_src[i], s.fpair_dst[k] = w->fpair_dst[i];
            s.fpair_fn[k] = w->fpair_fn[i], s.fpair_messages[k] = w->fpair_messages[i];
            s.fpair_bytes[k++] = w->fpair_bytes[i];
        }
    /* The rank's own share: one element where the frame has one for it. */
    if (w && rank < w->n_rank_mpi_permille) {
        s.n_rank_mpi_permille = 1;
        s.rank_mpi_permille = p32++;
        s.rank_mpi_permille[0] = w->rank_mpi_permille[rank];
    }
    if (rank < rk->n_rank_mpi_permille_sum && rank < rk->n_rank_windows) {
        one.n_rank_mpi_permille_sum = one.n_rank_windows = 1;
        one.rank_mpi_permille_sum = p64;
        one.rank_windows = p32;
        one.rank_mpi_permille_sum[0] = rk->rank_mpi_permille_sum[rank];
        one.rank_windows[0] = rk->rank_windows[rank];
    }
    one.first_window = rk->first_window;
    one.last_window = rk->last_window;
    one.windows = rk->windows;
    one.left_out = rk->left_out;
    one.sums = &s;
    size_t need = mpiwatch__record_ranks__get_packed_size(&one);
    if (need > *cap) {
        uint8_t *p = realloc(*buf, need);
        if (!p)
            goto done;
        *buf = p;
        *cap = need;
    }
    len = mpiwatch__record_ranks__pack(&one, *buf);
done:
    free(w64), free(w32);
    return len;
}
