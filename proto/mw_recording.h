/* mw_recording.h: the recording file (FILE.mpiw): its format and a reader.
 *
 * The collector writes recordings (collector/record_file.c); replay, the exporters and the
 * viewer read them with the reader declared here, which is why it lives beside the wire
 * format and not in the collector. The format is specified in docs/recording.md:
 *
 *   header   8 bytes "MPIWATCH", u32 format version (MW_REC_VERSION), u32 header length (32),
 *            16 random bytes: the file's index key (version 2; version 1 has a 16-byte header)
 *   frames   u32 tag, u32 payload length, u32 CRC-32 (zlib) of the payload, then the payload:
 *            one Mpiwatch__Record. All integers little-endian. Tag MW_REC_TAG_FRAME for
 *            every frame but index frames and record chunks. Index frames carry
 *            MW_REC_TAG_INDEX and begin their payload with the file's index key, so that a
 *            reader can find the last index by searching backwards from the end of the file
 *            without being misled by received bytes (which are recorded verbatim and may
 *            contain the tag, but cannot contain a key that was drawn after they were sent
 *            and never leaves the file). A record larger than one frame is written as
 *            MW_REC_TAG_CONT frames followed by one MW_REC_TAG_FRAME frame; its payload is
 *            the concatenation of theirs, at most MW_REC_MAX_RECORD bytes.
 *            Version 3 adds compressed frames: MW_REC_TAG_ZFRAME and MW_REC_TAG_ZCONT are
 *            MW_REC_TAG_FRAME and MW_REC_TAG_CONT whose payload is one zstd frame (with its
 *            content size) of what the uncompressed frame's payload would be; the CRC covers
 *            the compressed bytes. Index frames are never compressed (the backward search
 *            looks for their key), and every offset (index entries, RankTrace.frame_offset,
 *            the reader's) is still the file offset of a frame.
 *
 * A file is valid up to its last complete frame whose CRC matches: a writer killed in the
 * middle of a frame leaves a file that reads fine up to that frame.
 */
#ifndef MW_RECORDING_H
#define MW_RECORDING_H

#include <stddef.h>
#include <stdint.h>

#include "mw_proto.h"

#define MW_REC_MAGIC "MPIWATCH"
#define MW_REC_VERSION 3u
#define MW_REC_VERSION_OLDEST 1u /* still read: no index key (bounded search) and no chunks */
#define MW_REC_HEADER_BYTES 32u  /* what this version writes; version 1 wrote 16 */
#define MW_REC_KEY_BYTES 16u
#define MW_REC_FRAME_HEADER_BYTES 12u
#define MW_REC_TAG_FRAME 0x4652574du  /* "MWRF" as little-endian bytes */
#define MW_REC_TAG_INDEX 0x5849574du  /* "MWIX" */
#define MW_REC_TAG_CONT 0x4352574du   /* "MWRC": a record continues in the next frame */
#define MW_REC_TAG_ZFRAME 0x465a574du /* "MWZF": MW_REC_TAG_FRAME, payload zstd-compressed (v3) */
#define MW_REC_TAG_ZCONT 0x435a574du  /* "MWZC": MW_REC_TAG_CONT, payload zstd-compressed (v3) */
#define MW_REC_MAX_FRAME (MW_MAX_MESSAGE_BYTES + (1u << 20)) /* a message plus its Record */
/* The trace records one recorded window resolves to at most: the collector's cap on a window's
 * records, all ranks (collector/merge.h MW_TRACE_WINDOW_MAX_BYTES). */
#define MW_REC_WINDOW_TRACE_BYTES (32u << 20)
#define MW_REC_MAX_RECORD (64u << 20) /* a chunked record (a large job or window), whole */

typedef struct mw_rec_reader mw_rec_reader_t;

/* Opens a recording and checks its header. Returns NULL with a message in err. */
mw_rec_reader_t *mw_rec_reader_open(const char *path, char *err, size_t errlen);
void mw_rec_reader_close(mw_rec_reader_t *r);

/* Reads the frame at the current position and moves past it. Returns 1 with the decoded
 * record in *rec (valid until the next call on this reader) and its file offset in *offset
 * (may be NULL); 0 at the end of the complete frames (a torn or corrupt tail ends the file:
 * mw_rec_reader_truncated() then says so); -1 on a read error, with a message in err. */
int mw_rec_reader_next(mw_rec_reader_t *r, const Mpiwatch__Record **rec, uint64_t *offset,
                       char *err, size_t errlen);
/* 1 when the last window mw_rec_reader_next returned was a lean copy (Record.window_lean,
 * given as a `window` record: docs/recording.md "Tiers"): the full window, with its per-rank
 * content, was dropped with the samples around it, and only the coarse tier (RecordRanks)
 * holds that content, summed over a few windows. A lean copy that follows the full window it
 * copies is skipped, so every window is returned once, full where the file still has it. */
int mw_rec_reader_last_lean(const mw_rec_reader_t *r);
/* The lean copies mw_rec_reader_next skipped so far (the full window was there), and the bytes
 * they take in the file and would take uncompressed (for mw-recdump's sizes per tier). */
uint64_t mw_rec_reader_lean_skipped(const mw_rec_reader_t *r, uint64_t *disk, uint64_t *plain);
/* The size of the record mw_rec_reader_next returned last: the bytes its frames take in the
 * file (`disk`) and would take uncompressed (`plain`: the same in files of versions 1 and 2,
 * and for frames written uncompressed). */
void mw_rec_reader_last_size(const mw_rec_reader_t *r, uint64_t *disk, uint64_t *plain);
/* Moves to the frame at `offset` (an offset returned by the reader or found in an index). */
int mw_rec_reader_seek(mw_rec_reader_t *r, uint64_t offset);
/* The offset of the file's first frame (the header's length: it depends on the version). */
uint64_t mw_rec_reader_start(const mw_rec_reader_t *r);
/* 1 when reading stopped at a torn or corrupt frame rather than at a clean end of file. */
int mw_rec_reader_truncated(const mw_rec_reader_t *r);

/* Finds window `index` through the index frames (the file may still be growing: the end of
 * the file is looked at again on every call, and windows after the last index are found by
 * reading forward from it). Returns 1 with the offset of its Window frame and the offset of
 * the first frame with a sample for it (0 if unknown), 0 when the file has no such window,
 * -1 on a read error. Either output pointer may be NULL. */
int mw_rec_reader_find_window(mw_rec_reader_t *r, uint64_t index, uint64_t *window_offset,
                              uint64_t *first_sample_offset);
/* The first and last window indices in the file and the collector monotonic times of the
 * first and last frames. Returns 1, or 0 when the file has no window, -1 on error. */
int mw_rec_reader_span(mw_rec_reader_t *r, uint64_t *first_window, uint64_t *last_window,
                       uint64_t *first_mono_ns, uint64_t *last_mono_ns);

/* Tiers (docs/recording.md "Tiers"): whether the received samples of windows first..last are
 * all in the file. Returns 0 when they are ("raw" tier), 1 when samples of some of those
 * windows were dropped by the writer (only the merged windows cover them: "windows" tier),
 * -1 on a read error. *raw_from (may be NULL) is the window from which on no sample was
 * dropped (1 + the newest window of a dropped sample; 0 when nothing was dropped). Reading
 * (mw_rec_reader_next, find_window) goes over dropped samples on its own. */
int mw_rec_reader_tier(mw_rec_reader_t *r, uint64_t first, uint64_t last, uint64_t *raw_from);

/* ---- per-call traces in recorded windows (docs/recording.md "Traces") ----------------------- */

/* A recorded Window stores each rank's trace records once: in the `message` frame that
 * brought them (the Envelope as received), which its RankTrace names by file offset
 * (frame_offset), its Trace keeping every field but `records`. Every reader of windows from a
 * recording calls this after decoding one: for each RankTrace with a frame_offset it reads that
 * frame (bounds, CRC, a single record frame holding a message), decodes the Envelope, checks
 * that it is from `job` (skipped when NULL), from the RankTrace's rank, and holds a Trace
 * (Envelope.trace or Sample.trace) of this window with the same count, encoding, sizes, start,
 * threads, flags and capture, and puts its records into the RankTrace's Trace; frame_offset
 * is then 0, so the window is the one the live feed published (packing it again gives the
 * same bytes). A trace that cannot be resolved is marked not exact (state 2, reason 4
 * "refused", no records; traced_ranks lowered) and counted (mw_rec_reader_trace_failures).
 * `w` must be the window mw_rec_reader_next returned (on any reader); the records point into
 * a buffer of `r`, valid until the next resolve call on `r` or its close. Windows of older
 * recordings (records inline, no offsets) are left as they are. A window resolves at most one
 * trace per rank and at most MW_REC_WINDOW_TRACE_BYTES of records in all (what the collector
 * keeps of one window): a second entry of a rank, and entries beyond the bytes, fail unread.
 * Returns the number of traces that failed, or -1 when out of memory (the failed ones are
 * marked as well). */
int mw_rec_reader_resolve_window(mw_rec_reader_t *r, Mpiwatch__Window *w, const char *job);
/* One RankTrace of window `window`: 1 with its records in *records, *len (the same buffer and
 * lifetime), 0 when it has no frame_offset (its records, if any, are inline), -1 when it does
 * not resolve (the reason in err; counted). */
int mw_rec_reader_resolve_trace(mw_rec_reader_t *r, const char *job, uint64_t window,
                                const Mpiwatch__RankTrace *rt, const uint8_t **records, size_t *len,
                                char *err, size_t errlen);
/* Traces that failed to resolve on this reader since it was opened. */
uint64_t mw_rec_reader_trace_failures(const mw_rec_reader_t *r);

/* ---- shared with the writer (collector/record_file.c) --------------------------------------- */

/* The recording's form of an encoded Window (what the writer stores): a copy of the `len`
 * bytes at `pb` where the RankTrace entries (field 30, in order) whose frame_off[i] is not 0
 * lose their Trace's records and gain frame_offset = frame_off[i]; n is the number of
 * entries frame_off describes (entries beyond it are copied as they are). `out` must hold
 * len + 11 * n bytes. Returns the length written, or 0 when the bytes are not a Window as
 * protobuf-c writes it (the caller then stores them unchanged). */
size_t mw_rec_window_strip(const void *pb, size_t len, const uint64_t *frame_off, size_t n,
                           void *out);

/* The coarse tier (docs/recording.md "Tiers"). The lean copy of an encoded Window: the same
 * bytes without the per-rank fields (pair_*, rank_mpi_permille, traces, rf_*, rr_*, fpair_*).
 * `out` must hold len bytes. Returns the length written, or 0 when the bytes are not protobuf. */
size_t mw_rec_window_lean(const void *pb, size_t len, void *out);
/* Sums of the per-rank fields of consecutive windows of one job, exact (RecordRanks). */
#define MW_REC_RANK_ENTRIES_MAX (1u << 21) /* rf_* or rr_* entries of one RecordRanks */
typedef struct mw_rec_ranks mw_rec_ranks_t;
mw_rec_ranks_t *mw_rec_ranks_new(void);
void mw_rec_ranks_free(mw_rec_ranks_t *a);
/* Adds an encoded Window's per-rank fields. Returns 0, 1 when the window was not added because
 * it belongs to another job (its index is not after the last one added) or would pass a cap
 * on the entries (take the sums first, then add it again), -1 when the bytes are not protobuf.
 * An entry that does not fit even alone is counted in RecordRanks.left_out. */
int mw_rec_ranks_add(mw_rec_ranks_t *a, const void *pb, size_t len);
/* Windows added since the last take. */
uint32_t mw_rec_ranks_windows(const mw_rec_ranks_t *a);
/* The sums as an encoded RecordRanks (valid until the next take; *len its length), and starts
 * again from zero. NULL (and *len 0) when no window was added, or out of memory (the sums are
 * lost, which the caller counts). */
const void *mw_rec_ranks_take(mw_rec_ranks_t *a, size_t *len);
/* Why a decoded RecordRanks cannot be used (parallel arrays of different lengths: refused
 * whole, never paired by a guess, as mw_window_check does for windows), or NULL. */
const char *mw_rec_ranks_check(const Mpiwatch__RecordRanks *rk);
/* A RecordRanks (checked by mw_rec_ranks_check) cut down to rank `rank`: its rf_* and rr_*
 * entries, the pairs and per-function pairs it is the source or the destination of, and its
 * own element of rank_mpi_permille_sum, rank_windows and sums.rank_mpi_permille (one element
 * each, none when the frame has no entry for it). Encoded into *buf (grown as needed, *cap its
 * size); returns the length, or 0 when out of memory. */
size_t mw_rec_ranks_one(const Mpiwatch__RecordRanks *rk, uint32_t rank, uint8_t **buf, size_t *cap);

/* CRC-32 (zlib's and gzip's: polynomial 0x04C11DB7 reflected, check value 0xCBF43926) of n
 * bytes, continuing `crc` (start with 0). */
uint32_t mw_rec_crc(uint32_t crc, const void *data, size_t n);
/* A compressor of frame payloads (the writer keeps one): zstd at `level` (1..19, or one of
 * zstd's fast levels below 0). NULL when out of memory or for a level zstd refuses. */
typedef struct mw_rec_zctx mw_rec_zctx_t;
mw_rec_zctx_t *mw_rec_zctx_new(int level);
void mw_rec_zctx_free(mw_rec_zctx_t *z);
/* Compresses the payload pieces a, b, c (any may be empty) as one zstd frame with its content
 * size into out (room for `cap` bytes: MW_REC_ZBOUND(na + nb + nc) always suffices). Returns
 * the compressed length, or 0 when compression failed or would not make the payload shorter
 * (the caller then writes it uncompressed). */
size_t mw_rec_compress(mw_rec_zctx_t *z, const void *a, size_t na, const void *b, size_t nb,
                       const void *c, size_t nc, void *out, size_t cap);
/* The most mw_rec_compress writes for n bytes (zstd's ZSTD_COMPRESSBOUND). */
#define MW_REC_ZBOUND(n)                                                                           \
    ((size_t)(n) + ((size_t)(n) >> 8) +                                                            \
     ((size_t)(n) < (128u << 10) ? (((128u << 10) - (size_t)(n)) >> 11) : 0))
/* The file header of this format version with the index key `key` (MW_REC_KEY_BYTES random
 * bytes, as the writer draws them). */
void mw_rec_put_header_key(unsigned char out[MW_REC_HEADER_BYTES], const unsigned char *key);
/* The same with a key of zeros, for hand-made test files that hold no index frame. */
void mw_rec_put_header(unsigned char out[MW_REC_HEADER_BYTES]);
/* A frame header: tag, payload length, CRC-32 of the payload, little-endian. */
void mw_rec_put_frame_header(unsigned char out[MW_REC_FRAME_HEADER_BYTES], uint32_t tag,
                             uint32_t len, uint32_t crc);
/* Looks into a received frame without decoding it: returns 1 with the window index when it is
 * an Envelope carrying a Sample, 0 otherwise (any other body, or not an envelope at all). */
int mw_rec_sample_window(const void *data, size_t len, uint64_t *window);
/* The same for the sender's world rank (Envelope.rank): 1 with *rank, 0 when the bytes do
 * not show one. A scan of one rank's samples decodes only that rank's frames with it. */
int mw_rec_envelope_rank(const void *data, size_t len, uint32_t *rank);

#endif
