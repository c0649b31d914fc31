/* record_file.c: --record FILE.mpiw, the recording of everything the collector receives and
 * derives, and mw_collector_apply_record(), which feeds a recording back (replay, tools).
 *
 * DESIGN: the file format is in docs/recording.md and proto/mw_recording.h. Every frame the
 * collector receives is appended before it is processed, accepted or not, with the clocks of
 * its batch; so are the ticks that changed something, the finish on a signal, and the
 * outputs (merged windows, the job, job events). Replay needs only the inputs and clocks to
 * derive the same outputs; the outputs are there for readers that seek (viewer, history).
 *
 * The hot frame is a received sample, so a Record is encoded by hand around the received
 * bytes (a few varints before them, `parts` after) straight into a large buffer: one memcpy
 * and one CRC per frame, no protobuf-c pack, no allocation. Records that are rare (start,
 * event, index) go through protobuf-c. A buffer is handed to a writer thread when it is full,
 * after every frame that is an output or a timer event (window, job, event, tick, finish,
 * index: a few per second), at least every REC_FLUSH_NS of recorded time while frames
 * arrive, and at close; the collector's loop never waits for the disk unless the writer is
 * two buffers behind. After kill -9 of the collector the file ends at most a moment behind,
 * with maybe part of a frame that the reader recognises and ignores; fsync would add only
 * protection against power loss, at a cost ingest should not pay.
 *
 * The file is written with O_DIRECT where the file system allows it, because at tens of MB/s
 * the kernel's copy into freshly allocated page-cache pages cost more CPU than the rest of the
 * recording together (measured with bench/run-record.sh: +36% of the collector's CPU with
 * buffered writes, single digits with direct ones). Direct writes must be block-aligned: a
 * hand-off writes whole blocks, the last one padded with zeros, and carries that block's bytes
 * into the next buffer, which writes the block again, whole; close cuts the padding. A file
 * read while being written (or after kill -9) can therefore end in up to a block of zeros,
 * which the reader treats as a torn tail. Where O_DIRECT is refused (tmpfs, devices) the same
 * buffers are written with plain write(), exactly, without padding.
 *
 * Every REC_INDEX_EVERY closed windows, and at close, an index frame lists where those
 * windows' frames are and where each one's first sample frame is (noted by looking into
 * received envelopes without decoding them), chained to the previous index frame.
 * Each index frame's payload begins with the file's index key, 16 random bytes drawn at open
 * and written only into the header: received frames are recorded verbatim and may be full of
 * index tags, but not of a key drawn after they were sent, so a reader's backward search for
 * the last index cannot be steered by them (proto/mw_recording.c).
 *
 * Nothing derived is left out silently: a record over the frame limit (a very large job
 * description or window) is split into MW_REC_TAG_CONT chunks that the reader reassembles, up
 * to MW_REC_MAX_RECORD; one beyond that is logged as an error and counted.
 *
 * The file is created with O_EXCL | O_NOFOLLOW: an existing name (a symbolic link included)
 * is refused, so a recording never truncates another file; only a device is opened as it is.
 *
 * Frames are compressed one by one with zstd (--record-compress LEVEL, format version 3), on
 * the collector's thread as they are appended, so that each keeps its own file offset: the
 * index, the traces' frame offsets, history and replay seek to frames exactly as before, a
 * torn tail is still one torn frame, and no reader needs to decompress anything but the
 * frames it reads. Index frames stay uncompressed (the reader's backward search looks for
 * their key); a payload that zstd does not make shorter is written as it is. Compressing
 * blocks of frames would compress better, but an offset would then have to name a block and
 * a place in it, and a crash would lose the block being built (docs/recording.md).
 *
 * Tiers (docs/recording.md "Tiers"): the received samples are the bulk of a recording, so
 * they are kept only for a recent span (--record-full-span) and around rule firings and
 * steering (--record-keep-around); everything else (hellos, the merged windows with their
 * per-rank essentials, job, events, ticks, index) is kept for the whole run. The sample frames
 * that follow each other in the file form a run; once a run is older than the span and no
 * pin is near it, the next index frame lists it as a hole (its first frame, the frame after
 * it, the windows of its samples), the index is written out, and the whole file-system blocks
 * inside the run are given back with fallocate(PUNCH_HOLE): the file keeps its length and
 * every offset, readers jump over a hole when they meet its zeros, and what a crash leaves is
 * a file whose holes are all listed. --record-max-gb bounds the blocks the file takes: at 90%
 * every run not yet dropped is dropped and samples are no longer recorded; at 100% the
 * recording stops (a last index is written) — logged once each and counted.
 *
 * A write error (a full disk) is logged once with the path and the reason, counted, and
 * stops the recording for good: from then on every call returns at once, and ingest and every
 * other output go on exactly as without --record.
 */
#define _GNU_SOURCE /* O_DIRECT */
#include "collector.h"
#include "record_file.h"
#include "mw_wire.h"
#include "steer.h"
#include "mw_recording.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef MW_VERSION
#define MW_VERSION "unknown"
#endif

#define REC_BLOCK 4096u               /* O_DIRECT alignment of offsets, lengths and memory */
#define REC_HANDOFF ((size_t)4 << 20) /* a buffer this full goes to the writer */
#define REC_BUFFERS 3u                /* one being filled, the others being written */
#define REC_BUFFER_CAP (REC_HANDOFF + 2 * REC_BLOCK + MW_REC_FRAME_HEADER_BYTES + MW_REC_MAX_FRAME)
#define REC_FLUSH_NS (250 * MW_NS_PER_MS) /* longest a received frame stays in memory ... */
#define REC_INDEX_EVERY 32u               /* closed windows per index frame */
#define REC_FIRST_SLOTS 1024u             /* > MW_MERGE_RING_MAX: open windows never collide */
#define REC_PREFIX_MAX 40u                /* mono, real, body key and length: 4 varints */
#define REC_CHUNK ((size_t)4 << 20)       /* chunk frames of a record over MW_REC_MAX_FRAME */
#define REC_Z_MIN 64u  /* shorter payloads (ticks, small events) are not worth a zstd frame */
#define REC_PINS 1024u /* the last rule firings and steering kept as pins */
#define REC_EXPIRE_NS MW_NS_PER_S /* how often old runs of samples are looked at */
#define REC_RUNS_MAX (1u << 20)   /* runs waiting to expire: beyond, the oldest expire */
/* The coarse tier's frames (lean windows, per-rank sums) are compressed at this zstd level even
 * when --record-compress is 0: they are kept for the whole run and are about 0.2% of the bytes
 * the collector records, so compressing them costs next to nothing (docs/recording.md). */
#define REC_COARSE_LEVEL 1

_Static_assert(REC_FIRST_SLOTS > MW_MERGE_RING_MAX &&
                   (REC_FIRST_SLOTS & (REC_FIRST_SLOTS - 1)) == 0,
               "one first-sample slot per open window, a power of two");

/* Record fields (proto/mpiwatch.proto). */
enum {
    REC_MONO = 1,
    REC_REAL = 2,
    REC_MESSAGE = 10,
    REC_WINDOW = 11,
    REC_JOB = 12,
    REC_EVENT = 13,
    REC_TICK = 14,
    REC_FINISH = 15,
    REC_INDEX = 16,
    REC_START = 17,
    REC_STEP = 18,
    REC_LATENESS = 19,
    REC_PARTS = 20,
    REC_WINDOW_LEAN = 21,
    REC_RANKS = 22,
};

/* A run of sample frames that follow each other in the file: [start, end), the windows of
 * its samples and the monotonic times of its first and last frame. */
typedef struct {
    uint64_t start, end, wmin, wmax, mono_first, mono_last;
} rec_run_t;

/* A run of the file in memory: bytes [off, off + len) of the file. */
typedef struct {
    unsigned char *data; /* [REC_BUFFER_CAP], REC_BLOCK-aligned */
    uint64_t off;
    size_t len;
    size_t w_len; /* what the writer writes from data[0] at off (padded in direct mode) */
    int queued;   /* handed to the writer and not written yet */
} rec_buf_t;

struct mw_record {
    char *path;
    int fd;
    int direct; /* O_DIRECT: aligned, padded writes that bypass the page cache */
    rec_buf_t buf[REC_BUFFERS];
    unsigned cur;  /* the buffer frames are appended to */
    int dirty;     /* it has bytes the writer has not been given */
    uint64_t size; /* the file's length once everything is written: buf[cur].off + len */
    uint64_t handed_mono_ns;
    mw_clock_t last; /* the clock of the last frame, for the frames written at close */
    int failed;
    uint64_t windows, too_large, chunked;
    mw_rec_zctx_t *z;     /* --record-compress: zstd for frame payloads, NULL when off */
    mw_rec_zctx_t *zc;    /* the coarse tier's frames (REC_COARSE_LEVEL), NULL: as z */
    mw_rec_zctx_t *zuse;  /* the one for the frame being appended (rec_frame) */
    uint64_t plain_bytes; /* what the file would hold without compression */
    uint64_t zframes;     /* frames written compressed */

    /* Tiers (the file's DESIGN paragraph). */
    uint64_t span_ns, around_ns, max_bytes; /* 0: keep all samples / no limit */
    rec_run_t run;   /* the run of sample frames being appended (run.end: 0 none) */
    rec_run_t *runs; /* closed runs not dropped yet, oldest first: [runs_head, n_runs) */
    size_t n_runs, runs_head, cap_runs;
    uint64_t pins[REC_PINS]; /* monotonic times of rule firings and steering */
    size_t n_pins;
    rec_run_t *holes; /* dropped runs not listed in an index frame yet */
    size_t n_holes, cap_holes;
    uint64_t next_expire_ns;
    uint64_t punched; /* bytes given back to the file system */
    uint64_t dropped_runs, dropped_bytes, pinned_runs, samples_not_recorded;
    int no_punch;   /* the file system refused PUNCH_HOLE: nothing is dropped */
    int raw_off;    /* --record-max-gb at 90%: samples are no longer recorded */
    int limit_stop; /* --record-max-gb reached: the recording stopped */
    /* The coarse tier (on with the tiers): every window's lean copy, and the per-rank content
     * summed over --record-rank-every windows. */
    int coarse;
    uint32_t rank_every;
    mw_rec_ranks_t *ranks;
    unsigned char *lean;
    size_t lean_cap;
    uint64_t rank_frames, rank_lost, lean_windows;
    unsigned char key[MW_REC_KEY_BYTES]; /* begins every index frame (mw_recording.h) */
    uint64_t failed_bytes;               /* what the file holds, once the recording has failed */

    /* The writer thread. Everything below `lock` is shared with it. */
    pthread_t thread;
    int thread_started;
    pthread_mutex_t lock;
    pthread_cond_t work, done;
    unsigned next_write; /* the oldest queued buffer: buffers are written in order */
    unsigned queued;
    int stop;
    int werr;         /* the first write error (errno); the writer writes nothing after it */
    uint64_t on_disk; /* end of the data written so far (without padding) */

    uint64_t prev_index; /* offset of the last index frame, 0 none */
    uint64_t ix_window[REC_INDEX_EVERY], ix_offset[REC_INDEX_EVERY];
    uint64_t ix_first[REC_INDEX_EVERY], ix_mono[REC_INDEX_EVERY], ix_lean[REC_INDEX_EVERY];
    size_t ix_n;

    struct {
        uint64_t window, offset; /* offset 0: empty (the header is at 0, never a frame) */
    } first[REC_FIRST_SLOTS];

    unsigned char *scratch; /* rare records packed by protobuf-c */
    size_t scratch_cap;

    uint64_t last_frame; /* offset of the last received frame appended, 0 none */
    uint64_t *strip_off; /* per trace entry of the window being written: its frame offset */
    size_t strip_off_cap;
    unsigned char *strip; /* the window's recording form (mw_rec_window_strip) */
    size_t strip_cap;
};

/* Stops the recording on a write error: logged once, with what is in the file. Called on the
 * collector's thread only (the writer hands its errors over in werr). */
static void rec_fail(mw_record_t *r, int err)
{
    if (r->failed)
        return;
    r->failed = 1;
    /* The writer writes nothing after its error, so what it has written is final. */
    pthread_mutex_lock(&r->lock);
    r->failed_bytes = r->on_disk;
    pthread_mutex_unlock(&r->lock);
    MW_LOG(MW_LOG_ERROR,
           "recording %s: write failed: %s; recording stopped after %llu bytes (monitoring goes "
           "on)",
           r->path, strerror(err), (unsigned long long)r->failed_bytes);
}

/* Writes n bytes at `off` (pwrite, for the rewritten blocks of direct mode) or at the file's
 * position (write: plain mode also works on pipes and devices). Returns 0, or an errno. */
static int rec_write_all(int fd, int positioned, const unsigned char *p, size_t n, uint64_t off)
{
    while (n > 0) {
        ssize_t k = positioned ? pwrite(fd, p, n, (off_t)off) : write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k < 0 ? errno : ENOSPC;
        p += k;
        n -= (size_t)k;
        off += (uint64_t)k;
    }
    return 0;
}

/* The writer thread: writes the queued buffers in order, so that the collector's loop never
 * waits for the disk. After an error it only gives the buffers back. */
static void *rec_writer(void *arg)
{
    mw_record_t *r = arg;
    pthread_mutex_lock(&r->lock);
    for (;;) {
        while (r->queued == 0 && !r->stop)
            pthread_cond_wait(&r->work, &r->lock);
        if (r->queued == 0)
            break;
        rec_buf_t *b = &r->buf[r->next_write];
        int err = r->werr;
        pthread_mutex_unlock(&r->lock);
        if (!err)
            err = rec_write_all(r->fd, r->direct, b->data, b->w_len, b->off);
        pthread_mutex_lock(&r->lock);
        if (err && !r->werr)
            r->werr = err;
        else if (!err)
            r->on_disk = b->off + b->len;
        b->queued = 0;
        r->queued--;
        r->next_write = (r->next_write + 1) % REC_BUFFERS;
        pthread_cond_broadcast(&r->done);
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

/* Gives the current buffer to the writer and continues in the next one, waiting while the
 * writer still has that one. In direct mode the last, partial block is written padded with
 * zeros and its bytes carried over to the next buffer, which writes that block again, whole,
 * later. Returns 0, or -1 when the recording has failed. */
static int rec_handoff(mw_record_t *r)
{
    if (r->failed)
        return -1;
    if (!r->dirty)
        return 0;
    rec_buf_t *b = &r->buf[r->cur];
    size_t keep = 0;
    b->w_len = b->len;
    if (r->direct) {
        b->w_len = (b->len + REC_BLOCK - 1) / REC_BLOCK * REC_BLOCK;
        memset(b->data + b->len, 0, b->w_len - b->len);
        keep = b->len % REC_BLOCK;
    }
    unsigned next = (r->cur + 1) % REC_BUFFERS;
    pthread_mutex_lock(&r->lock);
    b->queued = 1;
    r->queued++;
    pthread_cond_signal(&r->work);
    while (r->buf[next].queued)
        pthread_cond_wait(&r->done, &r->lock);
    int err = r->werr;
    pthread_mutex_unlock(&r->lock);

    rec_buf_t *n = &r->buf[next];
    n->off = b->off + b->len - keep; /* both only read b, which the writer may be writing */
    memcpy(n->data, b->data + b->len - keep, keep);
    n->len = keep;
    r->cur = next;
    r->dirty = 0;
    if (err) {
        rec_fail(r, err);
        return -1;
    }
    return 0;
}

/* Waits until the writer has written everything it was given. Returns 0, or -1 on an error. */
static int rec_drain(mw_record_t *r)
{
    pthread_mutex_lock(&r->lock);
    while (r->queued)
        pthread_cond_wait(&r->done, &r->lock);
    int err = r->werr;
    pthread_mutex_unlock(&r->lock);
    if (err) {
        rec_fail(r, err);
        return -1;
    }
    return 0;
}

/* Appends one frame of tag `tag` whose payload is the pieces a, b, c (any may be empty),
 * handing the buffer to the writer first when the frame does not fit. Returns the frame's
 * offset, or 0 when the recording has failed. */
static uint64_t rec_frame(mw_record_t *r, uint32_t tag, const void *a, size_t na, const void *b,
                          size_t nb, const void *c, size_t nc)
{
    size_t payload = na + nb + nc, frame = MW_REC_FRAME_HEADER_BYTES + payload;
    /* Room for the frame and the padding of its block; a buffer after a hand-off holds at
     * most one partial block, so the largest frame always fits. */
    if (r->buf[r->cur].len + frame + REC_BLOCK > REC_BUFFER_CAP && rec_handoff(r) < 0)
        return 0;
    rec_buf_t *buf = &r->buf[r->cur];
    uint64_t off = buf->off + buf->len;
    unsigned char *w = buf->data + buf->len, *q = w + MW_REC_FRAME_HEADER_BYTES;
    size_t z = 0;
    r->plain_bytes += frame;
    /* Compressed straight into the buffer: never longer than the payload (mw_rec_compress
     * gives up first), so the room checked above is enough. */
    mw_rec_zctx_t *zc = r->zuse ? r->zuse : r->z;
    if (zc && payload >= REC_Z_MIN && (tag == MW_REC_TAG_FRAME || tag == MW_REC_TAG_CONT))
        z = mw_rec_compress(zc, a, na, b, nb, c, nc, q, payload);
    if (z) {
        tag = tag == MW_REC_TAG_FRAME ? MW_REC_TAG_ZFRAME : MW_REC_TAG_ZCONT;
        payload = z;
        frame = MW_REC_FRAME_HEADER_BYTES + z;
        r->zframes++;
    } else {
        if (na)
            memcpy(q, a, na);
        if (nb)
            memcpy(q + na, b, nb);
        if (nc)
            memcpy(q + na + nb, c, nc);
    }
    mw_rec_put_frame_header(w, tag, (uint32_t)payload, mw_rec_crc(0, q, payload));
    buf->len += frame;
    r->size = off + frame;
    r->dirty = 1;
    return off;
}

/* A record over the frame limit (only an output can be: a job description of a very large
 * job, or its window): written as MW_REC_TAG_CONT chunks and a last frame with `tag`, which
 * the reader puts back together. Returns the first chunk's offset, or 0. */
static uint64_t rec_chunked(mw_record_t *r, uint32_t tag, const void *a, size_t na, const void *b,
                            size_t nb, const void *c, size_t nc)
{
    size_t payload = na + nb + nc;
    unsigned char *all = malloc(payload);
    if (!all) {
        if (r->too_large++ == 0)
            MW_LOG(MW_LOG_ERROR, "recording %s: out of memory for a %zu-byte record: left out",
                   r->path, payload);
        return 0;
    }
    memcpy(all, a, na);
    if (nb)
        memcpy(all + na, b, nb);
    if (nc)
        memcpy(all + na + nb, c, nc);
    uint64_t first = 0;
    for (size_t o = 0; o < payload;) {
        size_t n = payload - o > REC_CHUNK ? REC_CHUNK : payload - o;
        uint64_t off =
            rec_frame(r, o + n == payload ? tag : MW_REC_TAG_CONT, all + o, n, NULL, 0, NULL, 0);
        if (!off) {
            free(all);
            return 0; /* failed: the reader sees an unfinished sequence as a torn tail */
        }
        if (o == 0)
            first = off;
        o += n;
    }
    free(all);
    r->chunked++;
    return first;
}

/* Appends one record: the clocks, then the body as field `field` (the bytes of an embedded
 * message, or a flag when `body` is NULL), then `parts` when it is not 0; an index frame's
 * payload begins with the file's key. Hands the buffer to the writer when `handoff`, when it
 * is full, or when the last hand-off is REC_FLUSH_NS of recorded time ago. Returns the
 * record's offset, or 0 when not written. */
static uint64_t rec_append(mw_record_t *r, uint32_t tag, const mw_clock_t *now, uint32_t field,
                           const void *body, size_t body_len, uint32_t parts, int handoff)
{
    if (r->failed)
        return 0;
    unsigned char pre[MW_REC_KEY_BYTES + REC_PREFIX_MAX], suf[16];
    size_t np = 0, ns = 0;
    if (tag == MW_REC_TAG_INDEX) {
        memcpy(pre, r->key, MW_REC_KEY_BYTES);
        np = MW_REC_KEY_BYTES;
    }
    np += mw_wire_put_tag(pre + np, REC_MONO, 0);
    np += mw_wire_put_varint(pre + np, now->mono_ns);
    np += mw_wire_put_tag(pre + np, REC_REAL, 0);
    np += mw_wire_put_varint(pre + np, now->real_ns);
    if (body) {
        np += mw_wire_put_tag(pre + np, field, 2);
        np += mw_wire_put_varint(pre + np, body_len);
    } else {
        np += mw_wire_put_tag(pre + np, field, 0);
        np += mw_wire_put_varint(pre + np, 1);
        body_len = 0;
    }
    if (parts) {
        ns += mw_wire_put_tag(suf, REC_PARTS, 0);
        ns += mw_wire_put_varint(suf + ns, parts);
    }
    size_t payload = np + body_len + ns;
    uint64_t off;
    if (payload <= MW_REC_MAX_FRAME) {
        off = rec_frame(r, tag, pre, np, body, body_len, suf, ns);
    } else if (payload <= MW_REC_MAX_RECORD && tag == MW_REC_TAG_FRAME) {
        off = rec_chunked(r, tag, pre, np, body, body_len, suf, ns);
    } else {
        /* Larger than a reader accepts (received frames are cut long before, see
         * mw__record_frame): counted and logged, never silent. */
        if (r->too_large++ == 0)
            MW_LOG(MW_LOG_ERROR,
                   "recording %s: a %zu-byte record is over the limit of %u bytes and was left "
                   "out",
                   r->path, payload, MW_REC_MAX_RECORD);
        return 0;
    }
    if (!off)
        return 0;
    r->last = *now;
    rec_buf_t *b = &r->buf[r->cur];
    if (handoff || b->len >= REC_HANDOFF || now->mono_ns >= r->handed_mono_ns + REC_FLUSH_NS) {
        r->handed_mono_ns = now->mono_ns;
        if (rec_handoff(r) < 0)
            return 0;
    }
    return off;
}

/* Packs a rare record body into the scratch buffer. Returns its length, or -1. */
static long rec_pack(mw_record_t *r, const ProtobufCMessage *msg)
{
    size_t len = protobuf_c_message_get_packed_size(msg);
    if (len + 1 > r->scratch_cap) {
        unsigned char *p = realloc(r->scratch, len + 1);
        if (!p) {
            MW_LOG(MW_LOG_ERROR, "recording %s: out of memory", r->path);
            return -1;
        }
        r->scratch = p;
        r->scratch_cap = len + 1;
    }
    return (long)protobuf_c_message_pack(msg, r->scratch);
}

/* Writes the index frame of the windows closed since the previous one. */
static void rec_index(mw_record_t *r, const mw_clock_t *now)
{
    Mpiwatch__RecordIndex ix = MPIWATCH__RECORD_INDEX__INIT;
    ix.previous = r->prev_index;
    ix.n_window = ix.n_window_offset = ix.n_first_sample = ix.n_mono_ns = r->ix_n;
    ix.window = r->ix_window;
    ix.window_offset = r->ix_offset;
    ix.first_sample = r->ix_first;
    ix.mono_ns = r->ix_mono;
    if (r->coarse) {
        ix.n_lean_offset = r->ix_n;
        ix.lean_offset = r->ix_lean;
    }
    uint64_t *h = NULL;
    if (r->n_holes) {
        size_t n = r->n_holes;
        if (!(h = malloc(4 * n * sizeof *h))) {
            MW_LOG(MW_LOG_ERROR, "recording %s: out of memory", r->path);
            return;
        }
        for (size_t i = 0; i < n; i++) {
            h[i] = r->holes[i].start;
            h[n + i] = r->holes[i].end;
            h[2 * n + i] = r->holes[i].wmin;
            h[3 * n + i] = r->holes[i].wmax;
        }
        ix.n_hole_start = ix.n_hole_end = ix.n_hole_window_min = ix.n_hole_window_max = n;
        ix.hole_start = h;
        ix.hole_end = h + n;
        ix.hole_window_min = h + 2 * n;
        ix.hole_window_max = h + 3 * n;
    }
    long len = rec_pack(r, &ix.base);
    free(h);
    if (len < 0)
        return;
    uint64_t off = rec_append(r, MW_REC_TAG_INDEX, now, REC_INDEX, r->scratch, (size_t)len, 0, 1);
    if (off) {
        r->prev_index = off;
        r->ix_n = 0;
        r->n_holes = 0;
    }
}

/* ---- tiers ---------------------------------------------------------------------------------- */

/* The sample frame just appended at [off, end) for `window`: extends the current run when it
 * follows it, else closes that run and starts another. */
static void rec_run_note(mw_record_t *r, uint64_t off, uint64_t end, uint64_t window, uint64_t mono)
{
    if (r->run.end && r->run.end == off) {
        r->run.end = end;
        r->run.wmin = window < r->run.wmin ? window : r->run.wmin;
        r->run.wmax = window > r->run.wmax ? window : r->run.wmax;
        r->run.mono_last = mono;
        return;
    }
    if (r->run.end && (r->span_ns || r->max_bytes)) {
        if (r->n_runs == r->cap_runs && r->runs_head > 0) {
            /* Compact: the dropped runs at the front make room. */
            memmove(r->runs, r->runs + r->runs_head, (r->n_runs - r->runs_head) * sizeof *r->runs);
            r->n_runs -= r->runs_head;
            r->runs_head = 0;
        }
        if (r->n_runs == r->cap_runs && r->cap_runs < REC_RUNS_MAX) {
            size_t cap = r->cap_runs ? 2 * r->cap_runs : 1024;
            rec_run_t *p = realloc(r->runs, cap * sizeof *p);
            if (p)
                r->runs = p, r->cap_runs = cap;
        }
        if (r->n_runs < r->cap_runs)
            r->runs[r->n_runs++] = r->run;
        /* else: out of memory or REC_RUNS_MAX runs waiting (a span far longer than the job's
         * pace): this run stays in the file for good. */
    }
    r->run = (rec_run_t){off, end, window, window, mono, mono};
}

/* Whether a pin (rule firing, steering) lies within --record-keep-around of the run. */
static int rec_pinned(const mw_record_t *r, const rec_run_t *run)
{
    size_t n = r->n_pins < REC_PINS ? r->n_pins : REC_PINS;
    for (size_t i = 0; i < n; i++) {
        uint64_t p = r->pins[i];
        if (p + r->around_ns >= run->mono_first && p <= run->mono_last + r->around_ns)
            return 1;
    }
    return 0;
}

/* Drops runs: those older than the span and not pinned, or (`all`) every one. The holes are
 * first listed in an index frame that is written out; then the whole blocks inside each run
 * are given back. */
static void rec_expire(mw_record_t *r, const mw_clock_t *now, int all)
{
    if (r->failed || r->no_punch)
        return;
    if (all && r->run.end) {
        rec_run_note(r, 0, 0, 0, 0); /* closes the current run */
        r->run.end = 0;
    }
    size_t first = r->runs_head, last = first;
    while (last < r->n_runs) {
        rec_run_t *run = &r->runs[last];
        if (!all && run->mono_last + r->span_ns > now->mono_ns)
            break; /* the runs are in time order */
        if (!all && rec_pinned(r, run)) {
            run->end = 0; /* kept for good */
            r->pinned_runs++;
        } else if (r->n_holes == r->cap_holes) {
            size_t cap = r->cap_holes ? 2 * r->cap_holes : 64;
            rec_run_t *p = realloc(r->holes, cap * sizeof *p);
            if (!p)
                break;
            r->holes = p, r->cap_holes = cap;
            continue; /* the same run again, now with room */
        }
        if (run->end)
            r->holes[r->n_holes++] = *run;
        last++;
    }
    if (last == first)
        return;
    size_t listed = r->n_holes;
    r->runs_head = last;
    if (listed == 0)
        return;
    /* Listed and on disk before anything is given back: a reader that meets the zeros finds
     * the hole in the index, even after a crash right now. */
    rec_run_t *todo = malloc(listed * sizeof *todo);
    if (!todo)
        return;
    memcpy(todo, r->holes, listed * sizeof *todo);
    rec_index(r, now);
    if (r->n_holes || rec_handoff(r) < 0 || rec_drain(r) < 0) {
        free(todo);
        return;
    }
    for (size_t i = 0; i < listed; i++) {
        uint64_t a = (todo[i].start + REC_BLOCK - 1) / REC_BLOCK * REC_BLOCK;
        uint64_t b = todo[i].end / REC_BLOCK * REC_BLOCK;
        r->dropped_runs++;
        r->dropped_bytes += todo[i].end - todo[i].start;
        if (b <= a)
            continue;
        if (fallocate(r->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)a,
                      (off_t)(b - a)) != 0) {
            r->no_punch = 1;
            MW_LOG(MW_LOG_WARN,
                   "recording %s: the file system cannot give back old samples (%s): the "
                   "recording keeps every sample from now on",
                   r->path, strerror(errno));
            break;
        }
        r->punched += b - a;
    }
    free(todo);
}

/* --record-max-gb: at 90% of the limit every sample still in the file is dropped and no
 * more are recorded; at the limit the recording stops. */
static void rec_limit(mw_record_t *r, const mw_clock_t *now)
{
    if (!r->max_bytes || r->failed)
        return;
    uint64_t used = r->size - r->punched;
    if (!r->raw_off && used >= r->max_bytes / 10 * 9) {
        r->raw_off = 1;
        rec_expire(r, now, 1);
        MW_LOG(MW_LOG_WARN,
               "recording %s: %llu of %llu bytes (--record-max-gb): raw samples dropped and no "
               "longer recorded; merged windows go on",
               r->path, (unsigned long long)used, (unsigned long long)r->max_bytes);
        used = r->size - r->punched;
    }
    if (used >= r->max_bytes) {
        rec_index(r, now);
        rec_handoff(r);
        rec_drain(r);
        if (r->failed)
            return;
        r->limit_stop = 1;
        r->failed = 1;
        r->failed_bytes = r->size;
        MW_LOG(MW_LOG_WARN,
               "recording %s: %llu bytes reached the limit of %llu (--record-max-gb): recording "
               "stopped (monitoring goes on)",
               r->path, (unsigned long long)used, (unsigned long long)r->max_bytes);
    }
}

/* Frees what mw__record_open allocated; the writer thread is not running. */
static void rec_free(mw_record_t *r)
{
    for (unsigned i = 0; i < REC_BUFFERS; i++)
        free(r->buf[i].data);
    free(r->scratch);
    free(r->strip_off);
    free(r->strip);
    free(r->path);
    free(r->runs);
    free(r->holes);
    free(r->lean);
    mw_rec_ranks_free(r->ranks);
    mw_rec_zctx_free(r->z);
    mw_rec_zctx_free(r->zc);
    pthread_cond_destroy(&r->done);
    pthread_cond_destroy(&r->work);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

/* Opens the file, with O_DIRECT when the file system takes it (not tmpfs, for one). The file
 * is created, never reused: O_EXCL refuses an existing name, a symbolic link included (even
 * one to nowhere), so a recording never truncates another recording or whatever file a link
 * planted in a shared directory points at. Only an existing device (/dev/null, /dev/full) is
 * opened as it is, without following a link and without O_TRUNC: writing there replaces no
 * file. Returns 0, or -1 with a message in err. */
static int rec_open_file(mw_record_t *r, char *err, size_t errlen)
{
    int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    r->fd = open(r->path, flags | O_DIRECT, 0644);
    r->direct = r->fd >= 0;
    if (r->fd < 0 && errno == EINVAL)
        r->fd = open(r->path, flags, 0644);
    if (r->fd >= 0)
        return 0;
    if (errno != EEXIST) {
        snprintf(err, errlen, "%s", strerror(errno));
        return -1;
    }
    struct stat st;
    int fd = open(r->path, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0 && fstat(fd, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))) {
        r->fd = fd;
        r->direct = 0;
        return 0;
    }
    if (fd >= 0)
        close(fd);
    snprintf(err, errlen,
             "the file exists (a recording never replaces a file or follows a symbolic link: "
             "remove it or choose another name)");
    return -1;
}

/* Writes the header and the start frame at once, on this thread: a target that cannot be
 * written (a full disk) is known before the run starts, and a file system that accepts
 * O_DIRECT at open but not for writes is switched to plain writes. */
static void rec_first_write(mw_record_t *r)
{
    rec_buf_t *b = &r->buf[0];
    int err = 0;
    if (r->direct) {
        size_t w = (b->len + REC_BLOCK - 1) / REC_BLOCK * REC_BLOCK;
        memset(b->data + b->len, 0, w - b->len);
        err = rec_write_all(r->fd, 1, b->data, w, 0);
        int fl;
        if (err == EINVAL && (fl = fcntl(r->fd, F_GETFL)) >= 0 &&
            fcntl(r->fd, F_SETFL, fl & ~O_DIRECT) == 0)
            r->direct = 0;
        else if (!err)
            r->on_disk = b->len; /* the block stays in the buffer, to be written again whole */
    }
    if (!r->direct) {
        err = rec_write_all(r->fd, 0, b->data, b->len, 0);
        if (!err) {
            r->on_disk = b->len;
            b->off = b->len;
            b->len = 0;
        }
    }
    r->dirty = 0;
    if (err)
        rec_fail(r, err);
}

mw_record_t *mw__record_open(const char *path, const mw_collector_options_t *opt,
                             const mw_clock_t *now)
{
    mw_record_t *r = calloc(1, sizeof *r);
    if (!r) {
        MW_LOG(MW_LOG_ERROR, "cannot record into %s: out of memory", path);
        return NULL;
    }
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->work, NULL);
    pthread_cond_init(&r->done, NULL);
    int ok = (r->path = strdup(path)) != NULL;
    for (unsigned i = 0; i < REC_BUFFERS && ok; i++) {
        void *p;
        ok = posix_memalign(&p, REC_BLOCK, REC_BUFFER_CAP) == 0;
        r->buf[i].data = ok ? p : NULL;
    }
    if (!ok) {
        MW_LOG(MW_LOG_ERROR, "cannot record into %s: out of memory", path);
        rec_free(r);
        return NULL;
    }
    char why[200];
    if (getrandom(r->key, sizeof r->key, 0) != (ssize_t)sizeof r->key) {
        MW_LOG(MW_LOG_ERROR, "cannot record into %s: no random index key: %s", path,
               strerror(errno));
        rec_free(r);
        return NULL;
    }
    if (rec_open_file(r, why, sizeof why) < 0) {
        MW_LOG(MW_LOG_ERROR, "cannot record into %s: %s", path, why);
        rec_free(r);
        return NULL;
    }
    int level = (int)lround(opt->record_compress);
    if (level && !(r->z = mw_rec_zctx_new(level))) {
        MW_LOG(MW_LOG_ERROR, "cannot record into %s: out of memory", path);
        close(r->fd);
        rec_free(r);
        return NULL;
    }
    r->span_ns = opt->record_full_span * MW_NS_PER_S;
    r->around_ns = opt->record_keep_around * MW_NS_PER_S;
    r->max_bytes = (uint64_t)(opt->record_max_gb * 1e9);
    r->rank_every = opt->record_rank_every ? (uint32_t)opt->record_rank_every : 1;
    if ((r->span_ns || r->max_bytes) && !(r->ranks = mw_rec_ranks_new())) {
        MW_LOG(MW_LOG_ERROR, "cannot record into %s: out of memory", path);
        close(r->fd);
        rec_free(r);
        return NULL;
    }
    r->coarse = r->ranks != NULL;
    if (r->coarse && !r->z && !(r->zc = mw_rec_zctx_new(REC_COARSE_LEVEL))) {
        MW_LOG(MW_LOG_ERROR, "cannot record into %s: out of memory", path);
        close(r->fd);
        rec_free(r);
        return NULL;
    }
    r->next_expire_ns = now->mono_ns + REC_EXPIRE_NS;
    r->handed_mono_ns = now->mono_ns;
    r->last = *now;
    mw_rec_put_header_key(r->buf[0].data, r->key);
    r->buf[0].len = r->size = r->plain_bytes = MW_REC_HEADER_BYTES;

    /* The settings that decide which windows close when: replay runs with the same ones. */
    Mpiwatch__RecordStart st = MPIWATCH__RECORD_START__INIT;
    st.collector_version = (char *)MW_VERSION;
    st.proto_version = MW_PROTO_VERSION;
    st.function_table_hash = mw_fn_table_hash();
    st.lateness_ms = opt->lateness_ms;
    st.silence_timeout_ms = opt->silence_timeout_ms;
    long len = rec_pack(r, &st.base);
    if (len >= 0)
        rec_append(r, MW_REC_TAG_FRAME, now, REC_START, r->scratch, (size_t)len, 0, 0);
    rec_first_write(r);
    if (r->failed)
        return r; /* the run goes on without a recording, as after any write error */

    /* The writer takes no signal: they are the collector loop's business. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int e = pthread_create(&r->thread, NULL, rec_writer, r);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e != 0) {
        MW_LOG(MW_LOG_ERROR, "cannot record into %s: no writer thread: %s", path, strerror(e));
        close(r->fd);
        rec_free(r);
        return NULL;
    }
    r->thread_started = 1;
    MW_LOG(MW_LOG_INFO, "recording into %s%s", path,
           r->direct ? "" : " (buffered writes: the file system refuses O_DIRECT)");
    return r;
}

static void rec_ranks_flush(mw_record_t *r, const mw_clock_t *now);

void mw__record_close(mw_record_t *r)
{
    if (!r)
        return;
    if (!r->failed) {
        rec_ranks_flush(r, &r->last);
        /* The last index, so that a reader finds every window without scanning. */
        rec_index(r, &r->last);
        rec_handoff(r);
    }
    if (r->dropped_runs || r->pinned_runs || r->samples_not_recorded || r->limit_stop)
        MW_LOG(MW_LOG_INFO,
               "recording %s: tiers: %llu runs of samples dropped (%llu bytes, %llu given back), "
               "%llu kept around pins, %llu samples not recorded (--record-max-gb)%s",
               r->path, (unsigned long long)r->dropped_runs, (unsigned long long)r->dropped_bytes,
               (unsigned long long)r->punched, (unsigned long long)r->pinned_runs,
               (unsigned long long)r->samples_not_recorded,
               r->limit_stop ? "; stopped at the limit" : "");
    if (r->coarse)
        MW_LOG(r->rank_lost ? MW_LOG_WARN : MW_LOG_INFO,
               "recording %s: coarse tier: %llu lean windows, %llu per-rank frames (every %u "
               "windows), %llu windows' per-rank sums lost (out of memory)",
               r->path, (unsigned long long)r->lean_windows, (unsigned long long)r->rank_frames,
               r->rank_every, (unsigned long long)r->rank_lost);
    if (r->thread_started) {
        pthread_mutex_lock(&r->lock);
        r->stop = 1;
        pthread_cond_signal(&r->work);
        pthread_mutex_unlock(&r->lock);
        pthread_join(r->thread, NULL);
        if (r->werr)
            rec_fail(r, r->werr);
    }
    /* Direct writes end on a block boundary: cut the padding (after an error, everything
     * after the last complete write). */
    struct stat st;
    uint64_t end = r->failed ? r->failed_bytes : r->size;
    if (fstat(r->fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size > end &&
        ftruncate(r->fd, (off_t)end) != 0)
        rec_fail(r, errno);
    if (close(r->fd) != 0)
        rec_fail(r, errno);
    MW_LOG(r->failed || r->too_large ? MW_LOG_WARN : MW_LOG_INFO,
           "recording %s: %llu bytes (%llu uncompressed, %llu frames compressed), %llu windows, "
           "%llu records chunked, %llu left out (over %u bytes)%s",
           r->path, (unsigned long long)mw__record_bytes(r), (unsigned long long)r->plain_bytes,
           (unsigned long long)r->zframes, (unsigned long long)r->windows,
           (unsigned long long)r->chunked, (unsigned long long)r->too_large, MW_REC_MAX_RECORD,
           r->limit_stop ? " (stopped at --record-max-gb)"
           : r->failed   ? " (stopped by a write error)"
                         : "");
    rec_free(r);
}

void mw__record_frame(mw_record_t *r, const mw_clock_t *now, const void *data, size_t len,
                      int parts)
{
    if (!r || r->failed)
        return;
    /* A frame over the message limit is rejected unread as too_large: its first bytes past the
     * limit are enough for replay to reject it the same way. */
    if (len > MW_MAX_MESSAGE_BYTES)
        len = MW_MAX_MESSAGE_BYTES + 1;
    uint64_t window;
    int sample = mw_rec_sample_window(data, len, &window);
    if (sample && r->raw_off) {
        r->samples_not_recorded++;
        r->last_frame = 0; /* a trace of it stays inline in its window */
        return;
    }
    uint64_t off = rec_append(r, MW_REC_TAG_FRAME, now, REC_MESSAGE, data ? data : "", len,
                              parts > 0 ? (uint32_t)parts : 1, 0);
    r->last_frame = off;
    if (off && sample && (r->span_ns || r->max_bytes))
        rec_run_note(r, off, r->size, window, now->mono_ns);
    if (off && sample) {
        /* The first sample frame of a window, for the index. A frame that only looks like a
         * sample can take the slot of a real window; the index then points at a later sample
         * of that window, which is still correct to read from, only later. */
        unsigned slot = (unsigned)(window & (REC_FIRST_SLOTS - 1));
        if (r->first[slot].window != window || r->first[slot].offset == 0) {
            r->first[slot].window = window;
            r->first[slot].offset = off;
        }
    }
}

/* Writes the per-rank sums of the windows added since the last ones (a RecordRanks). */
static void rec_ranks_flush(mw_record_t *r, const mw_clock_t *now)
{
    if (!r->coarse || r->failed)
        return;
    uint32_t n = mw_rec_ranks_windows(r->ranks);
    if (!n)
        return;
    size_t len;
    const void *p = mw_rec_ranks_take(r->ranks, &len);
    if (!p) {
        r->rank_lost += n;
        return;
    }
    r->zuse = r->zc;
    if (rec_append(r, MW_REC_TAG_FRAME, now, REC_RANKS, p, len, 0, 1))
        r->rank_frames++;
    r->zuse = NULL;
}

/* The coarse tier of a window just recorded: its lean copy and its per-rank content added to
 * the sums. Returns the lean copy's offset, 0 when none was written. */
static uint64_t rec_coarse(mw_record_t *r, const mw_clock_t *now, const void *pb, size_t len)
{
    if (len > r->lean_cap) {
        unsigned char *p = realloc(r->lean, len);
        if (!p)
            return 0;
        r->lean = p;
        r->lean_cap = len;
    }
    size_t k = len ? mw_rec_window_lean(pb, len, r->lean) : 0;
    r->zuse = r->zc;
    uint64_t off = k ? rec_append(r, MW_REC_TAG_FRAME, now, REC_WINDOW_LEAN, r->lean, k, 0, 1) : 0;
    r->zuse = NULL;
    if (!off)
        return 0;
    r->lean_windows++;
    int a = mw_rec_ranks_add(r->ranks, pb, len);
    if (a == 1) { /* another job, or a cap: what is summed goes first */
        rec_ranks_flush(r, now);
        a = mw_rec_ranks_add(r->ranks, pb, len);
    }
    if (a != 0)
        r->rank_lost++;
    if (mw_rec_ranks_windows(r->ranks) >= r->rank_every)
        rec_ranks_flush(r, now);
    return off;
}

void mw__record_window(mw_record_t *r, const mw_clock_t *now, uint64_t index, const void *pb,
                       size_t len)
{
    if (!r || r->failed)
        return;
    if (!pb)
        pb = "", len = 0;
    /* With the tiers, the full window joins the run of samples before it and goes with them;
     * once samples are no longer recorded (--record-max-gb) only the lean copy is. */
    uint64_t off = 0, lean = 0;
    if (!r->coarse || !r->raw_off) {
        if (!(off = rec_append(r, MW_REC_TAG_FRAME, now, REC_WINDOW, pb, len, 0, !r->coarse)))
            return;
        if (r->coarse)
            rec_run_note(r, off, r->size, index, now->mono_ns);
    }
    if (r->coarse) {
        lean = rec_coarse(r, now, pb, len);
        if (!off && !(off = lean))
            return;
    }
    r->windows++;
    unsigned slot = (unsigned)(index & (REC_FIRST_SLOTS - 1));
    uint64_t first = 0;
    if (r->first[slot].window == index && r->first[slot].offset) {
        first = r->first[slot].offset;
        r->first[slot].offset = 0;
    }
    r->ix_window[r->ix_n] = index;
    r->ix_offset[r->ix_n] = off;
    r->ix_first[r->ix_n] = first;
    r->ix_mono[r->ix_n] = now->mono_ns;
    r->ix_lean[r->ix_n] = lean != off ? lean : 0;
    if (++r->ix_n == REC_INDEX_EVERY)
        rec_index(r, now);
    if (r->span_ns && now->mono_ns >= r->next_expire_ns) {
        r->next_expire_ns = now->mono_ns + REC_EXPIRE_NS;
        rec_expire(r, now, 0);
    }
    rec_limit(r, now);
}

uint64_t mw__record_last_frame(const mw_record_t *r)
{
    return r && !r->failed ? r->last_frame : 0;
}

void mw__record_merged(mw_record_t *r, const mw_clock_t *now, const mw_window_t *w, const void *pb,
                       size_t len)
{
    if (!r || r->failed)
        return;
    /* Which entries lose their records: those kept with records whose frame is in the file
     * (an earlier frame of this recording: the offset is below everything appended since). */
    size_t n = w->n_traces, strip = 0;
    if (n && n > r->strip_off_cap) {
        uint64_t *p = realloc(r->strip_off, n * sizeof *p);
        if (!p)
            n = 0; /* out of memory: the window is stored with its records */
        else
            r->strip_off = p, r->strip_off_cap = n;
    }
    for (size_t i = 0; i < n; i++) {
        const mw_rank_trace_t *t = &w->traces[i];
        r->strip_off[i] = t->len && t->frame_off ? t->frame_off : 0;
        strip += r->strip_off[i] != 0;
    }
    if (strip) {
        size_t cap = len + 11 * n;
        if (cap > r->strip_cap) {
            unsigned char *p = realloc(r->strip, cap);
            if (p)
                r->strip = p, r->strip_cap = cap;
        }
        size_t k =
            cap <= r->strip_cap ? mw_rec_window_strip(pb, len, r->strip_off, n, r->strip) : 0;
        if (k) {
            pb = r->strip;
            len = k;
        }
    }
    mw__record_window(r, now, w->index, pb, len);
}

/* A closed time step: an output, like a window (replay derives it again). */
void mw__record_step(mw_record_t *r, const mw_clock_t *now, const void *pb, size_t len)
{
    if (r && !r->failed)
        rec_append(r, MW_REC_TAG_FRAME, now, REC_STEP, pb ? pb : "", len, 0, 0);
}

/* A lateness batch (collector/lateness.c): an output whose content depends on when the worker
 * ran, so replay does not derive it again; the export reads it (--format lateness). */
void mw__record_lateness(mw_record_t *r, const mw_clock_t *now, const void *pb, size_t len)
{
    if (r && !r->failed)
        rec_append(r, MW_REC_TAG_FRAME, now, REC_LATENESS, pb ? pb : "", len, 0, 0);
}

void mw__record_job(mw_record_t *r, const mw_clock_t *now, const void *pb, size_t len)
{
    if (r && !r->failed)
        rec_ranks_flush(r, now); /* a job's end (or grid) closes its per-rank sums */
    if (r && !r->failed)
        rec_append(r, MW_REC_TAG_FRAME, now, REC_JOB, pb ? pb : "", len, 0, 1);
}

void mw__record_event(mw_record_t *r, const mw_clock_t *now, const char *kind, const char *job,
                      const char *detail)
{
    if (!r || r->failed)
        return;
    /* Rule firings and steering (captures included) pin the samples around them. */
    if (kind && (strcmp(kind, "rule") == 0 || strcmp(kind, "steer") == 0))
        r->pins[r->n_pins++ % REC_PINS] = now->mono_ns;
    Mpiwatch__JobEvent ev = MPIWATCH__JOB_EVENT__INIT;
    ev.kind = (char *)(kind ? kind : "");
    ev.job = (char *)(job ? job : "");
    ev.detail = (char *)(detail ? detail : "");
    ev.real_ns = now->real_ns;
    long len = rec_pack(r, &ev.base);
    if (len >= 0)
        rec_append(r, MW_REC_TAG_FRAME, now, REC_EVENT, r->scratch, (size_t)len, 0, 1);
}

void mw__record_tick(mw_record_t *r, const mw_clock_t *now)
{
    if (r && !r->failed)
        rec_append(r, MW_REC_TAG_FRAME, now, REC_TICK, NULL, 0, 0, 1);
}

void mw__record_finish(mw_record_t *r, const mw_clock_t *now)
{
    if (r && !r->failed)
        rec_append(r, MW_REC_TAG_FRAME, now, REC_FINISH, NULL, 0, 0, 1);
}

void mw__record_flush(mw_record_t *r)
{
    if (r && !r->failed && rec_handoff(r) == 0)
        rec_drain(r);
}

uint64_t mw__record_too_large(const mw_record_t *r)
{
    return r ? r->too_large : 0;
}

uint64_t mw__record_bytes(const mw_record_t *r)
{
    if (!r)
        return 0;
    return r->failed ? r->failed_bytes : r->size;
}

int mw__record_failed(const mw_record_t *r)
{
    return r ? r->failed && !r->limit_stop : 0; /* the limit is not an error */
}

void mw__record_tiers(const mw_record_t *r, uint64_t *dropped_bytes, uint64_t *not_recorded,
                      int *limit_reached)
{
    *dropped_bytes = r ? r->dropped_bytes : 0;
    *not_recorded = r ? r->samples_not_recorded : 0;
    *limit_reached = r ? r->limit_stop : 0;
}

const char *mw__record_path(const mw_record_t *r)
{
    return r ? r->path : "";
}

/* Checks a recorded window length change (`window=MSms from window K start T`) against the
 * job's grid as it is now, with the rules a live request passes (proto/mw_grid.c: length bounds,
 * the factor from the job's first length, the segment count, the merge ring) and the place it must
 * start at: K after the last segment's first window, T the start K has on the grid before the
 * change. Returns 0 when it may be applied, -1 with a reason. Nothing is changed. */
static int rec_check_window_event(const mw_collector_t *c, const char *detail, char *err,
                                  size_t errlen)
{
    uint64_t ms, k, start;
    char tail;
    if (!c->job.active || !c->merge_ready) {
        snprintf(err, errlen, "no running job");
        return -1;
    }
    if (sscanf(detail, "window=%" SCNu64 "ms from window %" SCNu64 " start %" SCNu64 "%c", &ms, &k,
               &start, &tail) != 3) {
        snprintf(err, errlen, "not a window change");
        return -1;
    }
    const mw_grid_t *g = &c->job.grid;
    if (mw_grid_check(g, ms, mw__merge_min_window_ns(&c->merge), err, errlen) < 0)
        return -1;
    if (g->n && k <= g->seg[g->n - 1].first) {
        snprintf(err, errlen, "window %" PRIu64 " is not after the grid's last change", k);
        return -1;
    }
    if (mw_grid_start(g, k) != start) {
        snprintf(err, errlen, "window %" PRIu64 " starts at %" PRIu64 " on this grid, not %" PRIu64,
                 k, mw_grid_start(g, k), start);
        return -1;
    }
    return 0;
}

int mw_collector_apply_record(mw_collector_t *c, const Mpiwatch__Record *rec)
{
    mw_clock_t clock = {rec->mono_ns, rec->real_ns};
    switch (rec->body_case) {
    case MPIWATCH__RECORD__BODY_MESSAGE: {
        /* parts is 1 for a plain message; 0 is an older or hand-made file's "1". */
        int parts = rec->parts == 0 ? 1 : rec->parts > INT_MAX ? INT_MAX : (int)rec->parts;
        mw_collector_frame(c, rec->message.data, rec->message.len, parts, &clock);
        return 1;
    }
    case MPIWATCH__RECORD__BODY_TICK:
        mw_collector_tick(c, &clock);
        return 1;
    case MPIWATCH__RECORD__BODY_FINISH:
        mw_collector_finish(c, &clock);
        return 1;
    case MPIWATCH__RECORD__BODY_EVENT:
        /* The one recorded output that is also an input: a window length change decided by
         * a steering request, which replay cannot repeat. The samples need its grid. */
        if (rec->event && rec->event->kind && strcmp(rec->event->kind, "window") == 0 &&
            rec->event->job && strcmp(rec->event->job, c->job.job) == 0 && rec->event->detail) {
            /* Data from the file: checked in full before the grid changes, as a live
             * request is (a refused one changes nothing and is counted). */
            char err[160];
            if (rec_check_window_event(c, rec->event->detail, err, sizeof err) < 0) {
                c->replay_window_refused++;
                MW_LOG(MW_LOG_WARN, "recorded window change '%.80s' refused: %s",
                       rec->event->detail, err);
                return 0;
            }
            c->now = clock;
            mw__grid_apply_event(c, rec->event->detail);
        }
        return 0;
    default:
        return 0; /* outputs (window, job, event), index and start: derived or not inputs */
    }
}
