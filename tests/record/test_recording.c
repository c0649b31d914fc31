/* test_recording.c: the recording file, written by collector/record_file.c and read by
 * proto/mw_recording.c.
 *
 * DESIGN: files are written through the collector's writer API with a fake clock, then read
 * back: every record in order, windows found through the index while the file is still being
 * written and after it is closed, and the first-sample offsets checked against the frames they
 * point at. The reader is then given every prefix of a file (a collector killed at any byte)
 * and files with random damage: it must never crash, must read exactly the complete frames of
 * a prefix, and must say when the tail is torn. Last, a collector run is recorded and replayed
 * into a second collector through mw_collector_apply_record: the regenerated windows must be
 * byte for byte the recorded ones, and the summary and stats JSON identical.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"
#include "mw_recording.h"
#include "record_file.h"
#include "summary.h"

#define JOB "rectest"
#define RANKS 4u
#define MAX_FRAMES 4096

static char tmpdir[64];

static int setup_dir(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/mw-rectest.XXXXXX");
    mw__log_level = MW_LOG_ERROR;
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void path_of(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", tmpdir, name);
}

/* A packed Window with `index` (the reader looks only at the index). */
static size_t window_bytes(uint64_t index, uint8_t *out, size_t cap)
{
    Mpiwatch__Window w = MPIWATCH__WINDOW__INIT;
    w.index = index;
    w.window_ns = TM_WINDOW_NS;
    w.ranks_reporting = RANKS;
    w.mpi_time_ns = index * 7;
    assert_true(mpiwatch__window__get_packed_size(&w) <= cap);
    return mpiwatch__window__pack(&w, out);
}

/* Appends window k (grid index FX_W0 + k): one sample per rank, then the closed window, and a
 * tick after every fifth window. */
static void write_window(mw_record_t *r, mw_clock_t *now, uint64_t k)
{
    tm_msg_t m;
    uint8_t *buf, wb[256];
    for (uint32_t rank = 0; rank < RANKS; rank++) {
        tm_sample(&m, JOB, rank, FX_W0 + k, now->real_ns);
        size_t n = tm_pack(&m, &buf);
        mw__record_frame(r, now, buf, n, 1);
        free(buf);
        now->mono_ns += 1000;
    }
    mw__record_window(r, now, FX_W0 + k, wb, window_bytes(FX_W0 + k, wb, sizeof wb));
    if (k % 5 == 4)
        mw__record_tick(r, now);
    now->mono_ns += TM_WINDOW_NS;
    now->real_ns += TM_WINDOW_NS;
}

static mw_record_t *open_writer(const char *path, mw_collector_options_t *opt)
{
    mw_collector_options_defaults(opt);
    opt->record_compress = -3; /* every file of these tests compressed (format version 3) */
    opt->record_full_span = 0; /* one record per frame: the coarse tier has tests of its own */
    mw_record_t *r = mw__record_open(path, opt, fx_wall_clock());
    assert_non_null(r);
    assert_int_equal(mw__record_failed(r), 0);
    return r;
}

/* Writes a complete file of `windows` windows. */
static void write_file(const char *path, uint64_t windows)
{
    mw_collector_options_t opt;
    mw_record_t *r = open_writer(path, &opt);
    mw_clock_t now = {FX_MONO_NS, FX_REAL_NS};
    for (uint64_t k = 0; k < windows; k++)
        write_window(r, &now, k);
    mw__record_finish(r, &now);
    assert_int_equal(mw__record_failed(r), 0);
    mw__record_close(r);
    mw_collector_options_free(&opt);
}

/* Checks that window k is found, that its offset holds its Window frame, and that its first
 * sample offset (required when `need_first`) holds rank 0's sample for it. */
static void check_window(mw_rec_reader_t *rd, uint64_t k, int need_first)
{
    uint64_t wo = 0, fs = 0;
    const Mpiwatch__Record *rec;
    char err[128];
    assert_int_equal(mw_rec_reader_find_window(rd, FX_W0 + k, &wo, &fs), 1);
    assert_int_equal(mw_rec_reader_seek(rd, wo), 0);
    assert_int_equal(mw_rec_reader_next(rd, &rec, NULL, err, sizeof err), 1);
    assert_int_equal(rec->body_case, MPIWATCH__RECORD__BODY_WINDOW);
    assert_int_equal(rec->window->index, FX_W0 + k);
    if (need_first)
        assert_true(fs != 0);
    if (fs) {
        assert_true(fs < wo);
        assert_int_equal(mw_rec_reader_seek(rd, fs), 0);
        assert_int_equal(mw_rec_reader_next(rd, &rec, NULL, err, sizeof err), 1);
        assert_int_equal(rec->body_case, MPIWATCH__RECORD__BODY_MESSAGE);
        Mpiwatch__Envelope *env =
            mpiwatch__envelope__unpack(NULL, rec->message.len, rec->message.data);
        assert_non_null(env);
        assert_int_equal(env->body_case, MPIWATCH__ENVELOPE__BODY_SAMPLE);
        assert_int_equal(env->sample->window, FX_W0 + k);
        assert_int_equal(env->rank, 0); /* the first of the window's samples */
        mpiwatch__envelope__free_unpacked(env, NULL);
    }
}

/* Every frame of a complete file: where each ends and, for window frames, the window. */
typedef struct {
    size_t n;
    uint64_t end[MAX_FRAMES];
    uint64_t window[MAX_FRAMES]; /* UINT64_MAX: not a window frame */
    uint64_t size;
} frames_t;

static void read_frames(const char *path, frames_t *f)
{
    char err[128];
    mw_rec_reader_t *rd = mw_rec_reader_open(path, err, sizeof err);
    assert_non_null(rd);
    const Mpiwatch__Record *rec;
    uint64_t off;
    f->n = 0;
    while (mw_rec_reader_next(rd, &rec, &off, err, sizeof err) == 1) {
        assert_true(f->n < MAX_FRAMES);
        if (f->n)
            f->end[f->n - 1] = off; /* a frame ends where the next begins */
        else
            assert_int_equal(off, MW_REC_HEADER_BYTES);
        f->window[f->n] =
            rec->body_case == MPIWATCH__RECORD__BODY_WINDOW ? rec->window->index : UINT64_MAX;
        f->n++;
    }
    assert_int_equal(mw_rec_reader_truncated(rd), 0);
    mw_rec_reader_close(rd);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    f->size = (uint64_t)st.st_size;
    assert_true(f->n > 0);
    f->end[f->n - 1] = f->size; /* and the last one at the end of the file */
}

static uint8_t *read_all(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    uint8_t *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
    fclose(fp);
    *len = (size_t)n;
    return buf;
}

static void write_all(const char *path, const uint8_t *buf, size_t len)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(buf, 1, len, fp), len);
    assert_int_equal(fclose(fp), 0);
}

/* ---- writer and reader --------------------------------------------------------------------- */

/* The frame checksum is zlib's CRC-32 (whatever computes it): its check value, and the same
 * result in pieces as in one go. */
static void test_crc(void **state)
{
    (void)state;
    assert_int_equal(mw_rec_crc(0, "123456789", 9), 0xCBF43926u);
    assert_int_equal(mw_rec_crc(0, "", 0), 0);
    uint8_t buf[3000];
    uint64_t seed = 99;
    for (size_t i = 0; i < sizeof buf; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        buf[i] = (uint8_t)(seed >> 56);
    }
    uint32_t whole = mw_rec_crc(0, buf, sizeof buf);
    for (size_t cut = 0; cut <= sizeof buf; cut += 37)
        assert_int_equal(mw_rec_crc(mw_rec_crc(0, buf, cut), buf + cut, sizeof buf - cut), whole);
}

/* Round trip through the index while the file grows, then after it is closed. */
static void test_roundtrip_growing(void **state)
{
    (void)state;
    char path[128], err[128];
    path_of(path, sizeof path, "grow.mpiw");
    mw_collector_options_t opt;
    mw_record_t *r = open_writer(path, &opt);
    mw_clock_t now = {FX_MONO_NS, FX_REAL_NS};
    for (uint64_t k = 0; k < 70; k++) /* index frames after windows 32 and 64, 6 after that */
        write_window(r, &now, k);

    /* A flush makes everything written so far readable while the file is open (the writer
     * also hands every window to its thread, but asynchronously). */
    mw__record_flush(r);
    mw_rec_reader_t *rd = mw_rec_reader_open(path, err, sizeof err);
    assert_non_null(rd);
    for (uint64_t k = 0; k < 70; k++)
        check_window(rd, k, k < 64); /* first samples are known for indexed windows */
    assert_int_equal(mw_rec_reader_find_window(rd, FX_W0 + 70, NULL, NULL), 0);
    assert_int_equal(mw_rec_reader_find_window(rd, FX_W0 - 1, NULL, NULL), 0);
    uint64_t first, last, fm, lm;
    assert_int_equal(mw_rec_reader_span(rd, &first, &last, &fm, &lm), 1);
    assert_int_equal(first, FX_W0);
    assert_int_equal(last, FX_W0 + 69);
    assert_true(fm > 0);
    assert_int_equal(lm, now.mono_ns - TM_WINDOW_NS); /* the last window frame's clock */

    /* More windows, found by the same reader: the end of the file is looked at again. */
    for (uint64_t k = 70; k < 100; k++)
        write_window(r, &now, k);
    mw__record_flush(r);
    check_window(rd, 80, 1); /* indexed by the frame written after window 96 */
    check_window(rd, 99, 0);
    assert_int_equal(mw_rec_reader_span(rd, &first, &last, NULL, NULL), 1);
    assert_int_equal(last, FX_W0 + 99);

    mw__record_finish(r, &now);
    assert_true(mw__record_bytes(r) > 100 * RANKS * 20);
    assert_string_equal(mw__record_path(r), path);
    mw__record_close(r);
    mw_collector_options_free(&opt);

    /* Closed: the last index names windows 96..99, their first samples become known. */
    for (uint64_t k = 0; k < 100; k++)
        check_window(rd, k, 1);
    mw_rec_reader_close(rd);

    /* A fresh reader: every record in order. */
    rd = mw_rec_reader_open(path, err, sizeof err);
    assert_non_null(rd);
    for (uint64_t k = 0; k < 100; k += 7)
        check_window(rd, k, 1);
    assert_int_equal(mw_rec_reader_seek(rd, MW_REC_HEADER_BYTES), 0);
    unsigned counts[32] = {0};
    const Mpiwatch__Record *rec;
    uint64_t prev_mono = 0;
    int k;
    while ((k = mw_rec_reader_next(rd, &rec, NULL, err, sizeof err)) == 1) {
        assert_true((unsigned)rec->body_case < 32);
        counts[rec->body_case]++;
        if (rec->body_case != MPIWATCH__RECORD__BODY_START) { /* the start has the real clock */
            assert_true(rec->mono_ns >= prev_mono);
            prev_mono = rec->mono_ns;
        }
        if (rec->body_case == MPIWATCH__RECORD__BODY_MESSAGE)
            assert_int_equal(rec->parts, 1);
        if (rec->body_case == MPIWATCH__RECORD__BODY_START) {
            assert_int_equal(rec->start->proto_version, MW_PROTO_VERSION);
            assert_int_equal(rec->start->function_table_hash, mw_fn_table_hash());
            assert_int_equal(rec->start->lateness_ms, opt.lateness_ms);
        }
    }
    assert_int_equal(k, 0);
    assert_int_equal(mw_rec_reader_truncated(rd), 0);
    assert_int_equal(counts[MPIWATCH__RECORD__BODY_START], 1);
    assert_int_equal(counts[MPIWATCH__RECORD__BODY_MESSAGE], 100 * RANKS);
    assert_int_equal(counts[MPIWATCH__RECORD__BODY_WINDOW], 100);
    assert_int_equal(counts[MPIWATCH__RECORD__BODY_TICK], 20);
    assert_int_equal(counts[MPIWATCH__RECORD__BODY_FINISH], 1);
    assert_int_equal(counts[MPIWATCH__RECORD__BODY_INDEX], 4); /* 32, 64, 96, close */
    mw_rec_reader_close(rd);
}

/* Files that are not recordings, or of another version, are refused with a message. */
static void test_open_refuses(void **state)
{
    (void)state;
    char path[128], err[128];
    uint8_t hdr[MW_REC_HEADER_BYTES];
    path_of(path, sizeof path, "bad.mpiw");

    err[0] = '\0';
    assert_null(mw_rec_reader_open("/nonexistent/x.mpiw", err, sizeof err));
    assert_non_null(strstr(err, "No such file"));

    write_all(path, (const uint8_t *)"hello", 5);
    assert_null(mw_rec_reader_open(path, err, sizeof err));
    assert_non_null(strstr(err, "not an mpiwatch recording"));

    mw_rec_put_header(hdr);
    hdr[8] = MW_REC_VERSION + 1; /* a version from the future */
    write_all(path, hdr, sizeof hdr);
    assert_null(mw_rec_reader_open(path, err, sizeof err));
    assert_non_null(strstr(err, "version 4"));

    mw_rec_put_header(hdr);
    hdr[12] = 8; /* header shorter than itself */
    write_all(path, hdr, sizeof hdr);
    assert_null(mw_rec_reader_open(path, err, sizeof err));

    /* A bare header is an empty recording, not an error. */
    mw_rec_put_header(hdr);
    write_all(path, hdr, sizeof hdr);
    mw_rec_reader_t *rd = mw_rec_reader_open(path, err, sizeof err);
    assert_non_null(rd);
    const Mpiwatch__Record *rec;
    assert_int_equal(mw_rec_reader_next(rd, &rec, NULL, err, sizeof err), 0);
    assert_int_equal(mw_rec_reader_truncated(rd), 0);
    assert_int_equal(mw_rec_reader_span(rd, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(mw_rec_reader_find_window(rd, 1, NULL, NULL), 0);
    assert_int_equal(mw_rec_reader_seek(rd, 3), -1); /* inside the header */
    mw_rec_reader_close(rd);
}

/* Reads everything a damaged or cut file offers. Returns the records read; *found counts the
 * windows (of `f`) that find_window returned. */
static size_t read_damaged(const char *path, const frames_t *f, int *truncated, size_t *found)
{
    char err[128];
    size_t n = 0;
    *found = 0;
    mw_rec_reader_t *rd = mw_rec_reader_open(path, err, sizeof err);
    if (!rd)
        return SIZE_MAX;
    const Mpiwatch__Record *rec;
    int k;
    while ((k = mw_rec_reader_next(rd, &rec, NULL, err, sizeof err)) == 1)
        n++;
    assert_int_equal(k, 0);
    *truncated = mw_rec_reader_truncated(rd);
    uint64_t a, b, c, d;
    int s = mw_rec_reader_span(rd, &a, &b, &c, &d);
    assert_true(s >= -1 && s <= 1);
    for (size_t i = 0; i < f->n; i++) {
        if (f->window[i] == UINT64_MAX)
            continue;
        uint64_t wo, fs;
        int fw = mw_rec_reader_find_window(rd, f->window[i], &wo, &fs);
        assert_true(fw >= -1 && fw <= 1);
        if (fw == 1) {
            /* Whatever the damage, a window returned is that window's intact frame. */
            const Mpiwatch__Record *w;
            assert_int_equal(mw_rec_reader_seek(rd, wo), 0);
            assert_int_equal(mw_rec_reader_next(rd, &w, NULL, err, sizeof err), 1);
            assert_int_equal(w->body_case, MPIWATCH__RECORD__BODY_WINDOW);
            assert_int_equal(w->window->index, f->window[i]);
            (*found)++;
        }
    }
    mw_rec_reader_close(rd);
    return n;
}

/* A writer killed at any byte: the reader reads exactly the complete frames, says the tail is
 * torn when there is one, and finds exactly the windows whose frames are complete. */
static void test_truncated_everywhere(void **state)
{
    (void)state;
    char path[128], cut[128];
    path_of(path, sizeof path, "full.mpiw");
    path_of(cut, sizeof cut, "cut.mpiw");
    write_file(path, 40); /* index frames after 32 windows and at close */
    static frames_t f;
    read_frames(path, &f);
    size_t len;
    uint8_t *all = read_all(path, &len);
    assert_int_equal(len, f.size);
    write_all(cut, all, len);
    int fd = open(cut, O_WRONLY);
    assert_true(fd >= 0);

    for (uint64_t size = len;; size--) {
        assert_int_equal(ftruncate(fd, (off_t)size), 0);
        size_t complete = 0, windows = 0;
        while (complete < f.n && f.end[complete] <= size) {
            windows += f.window[complete] != UINT64_MAX;
            complete++;
        }
        int truncated = 0;
        size_t found;
        size_t n = read_damaged(cut, &f, &truncated, &found);
        if (size < MW_REC_HEADER_BYTES) {
            assert_int_equal(n, SIZE_MAX); /* not even a header: refused */
        } else {
            assert_int_equal(n, complete);
            uint64_t clean_end = complete ? f.end[complete - 1] : MW_REC_HEADER_BYTES;
            assert_int_equal(truncated, size != clean_end);
            assert_int_equal(found, windows);
        }
        if (size == 0)
            break;
    }
    close(fd);
    free(all);
}

/* Random damage anywhere: never a crash, every frame before the first damaged byte is read,
 * and a window returned by find_window is always the right one (checked in read_damaged). */
static void test_random_damage(void **state)
{
    (void)state;
    char path[128], bad[128];
    path_of(path, sizeof path, "orig.mpiw");
    path_of(bad, sizeof bad, "damaged.mpiw");
    write_file(path, 70);
    static frames_t f;
    read_frames(path, &f);
    size_t len;
    uint8_t *all = read_all(path, &len);
    uint8_t *copy = malloc(len);
    assert_non_null(copy);
    uint64_t seed = 12345;
    for (int round = 0; round < 600; round++) {
        memcpy(copy, all, len);
        size_t lowest = len;
        int hits = 1 + round % 4;
        for (int h = 0; h < hits; h++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            size_t at = (size_t)(seed >> 33) % len;
            uint8_t v = (uint8_t)(seed >> 20);
            if (round % 3 == 0)
                v = 0xff; /* lengths become huge */
            if (copy[at] == v)
                v ^= 0x5a;
            copy[at] = v;
            if (at < lowest)
                lowest = at;
        }
        write_all(bad, copy, len);
        int truncated = 0;
        size_t found;
        size_t n = read_damaged(bad, &f, &truncated, &found);
        if (lowest < MW_REC_HEADER_BYTES)
            continue; /* a damaged header may be refused */
        size_t intact = 0;
        while (intact < f.n && f.end[intact] <= lowest)
            intact++;
        assert_true(n != SIZE_MAX);
        assert_true(n >= intact);
        assert_true(n <= f.n);
    }
    /* Garbage after a valid header, and a frame header claiming 4 GiB. */
    uint8_t junk[4096];
    mw_rec_put_header(junk);
    for (size_t i = MW_REC_HEADER_BYTES; i < sizeof junk; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        junk[i] = (uint8_t)(seed >> 40);
    }
    memcpy(junk + MW_REC_HEADER_BYTES, "MWIX\xff\xff\xff\xff\0\0\0\0", 12);
    write_all(bad, junk, sizeof junk);
    int truncated = 0;
    size_t found;
    assert_int_equal(read_damaged(bad, &f, &truncated, &found), 0);
    assert_int_equal(truncated, 1);
    assert_int_equal(found, 0);
    free(copy);
    free(all);
}

/* A full disk: the write error is counted, the recording stops, nothing else happens. */
static void test_write_error(void **state)
{
    (void)state;
    mw_collector_options_t opt;
    mw_collector_options_defaults(&opt);
    if (access("/dev/full", W_OK) != 0) {
        mw_collector_options_free(&opt);
        skip();
    }
    mw_record_t *r = mw__record_open("/dev/full", &opt, fx_wall_clock());
    assert_non_null(r); /* opening works; the first write fails */
    assert_int_equal(mw__record_failed(r), 1);
    assert_int_equal(mw__record_bytes(r), 0);
    mw_clock_t now = {FX_MONO_NS, FX_REAL_NS};
    write_window(r, &now, 0); /* no effect, no crash */
    assert_int_equal(mw__record_failed(r), 1);
    mw__record_close(r);

    assert_null(mw__record_open("/nonexistent/dir/x.mpiw", &opt, fx_wall_clock()));
    mw_collector_options_free(&opt);
}

/* --record-max-gb with the tiers on: at 90% the samples are dropped and no longer recorded
 * (counted), the coarse tier goes on (lean windows, per-rank sums every window), and at the
 * limit the recording stops, which is not an error; the file stays within the limit and a
 * window's worth, reads cleanly to its last index, and its last window (a lean copy) is found. */
static void test_max_gb(void **state)
{
    (void)state;
    char path[128], err[128];
    path_of(path, sizeof path, "maxgb.mpiw");
    mw_collector_options_t opt;
    mw_collector_options_defaults(&opt);
    opt.record_max_gb = 0.0001; /* 100 kB */
    opt.record_rank_every = 1;
    mw_record_t *r = mw__record_open(path, &opt, fx_wall_clock());
    assert_non_null(r);
    mw_clock_t now = {FX_MONO_NS, FX_REAL_NS};
    uint64_t dropped = 0, not_recorded = 0, k, stop_at = 0;
    int limit = 0;
    for (k = 0; k < 100000 && !limit; k++) {
        write_window(r, &now, k);
        mw__record_tiers(r, &dropped, &not_recorded, &limit);
        if (limit)
            stop_at = k;
    }
    assert_int_equal(limit, 1);
    assert_true(stop_at > 10);
    assert_true(not_recorded > 0);
    assert_int_equal(mw__record_failed(r), 0); /* the limit is not an error */
    uint64_t bytes = mw__record_bytes(r);
    write_window(r, &now, k); /* stopped: nothing more, no crash */
    assert_int_equal(mw__record_bytes(r), bytes);
    mw__record_close(r);
    mw_collector_options_free(&opt);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true((uint64_t)st.st_blocks * 512 <= 100000 + 64 * 1024);
    mw_rec_reader_t *rd = mw_rec_reader_open(path, err, sizeof err);
    assert_non_null(rd);
    const Mpiwatch__Record *rec;
    int n, last_body = 0, lean = 0;
    while ((n = mw_rec_reader_next(rd, &rec, NULL, err, sizeof err)) == 1) {
        last_body = rec->body_case;
        lean += rec->body_case == MPIWATCH__RECORD__BODY_WINDOW && mw_rec_reader_last_lean(rd);
    }
    assert_int_equal(n, 0);
    assert_int_equal(mw_rec_reader_truncated(rd), 0);
    assert_int_equal(last_body, MPIWATCH__RECORD__BODY_INDEX);
    assert_true(lean > 0);
    uint64_t wo;
    assert_int_equal(mw_rec_reader_find_window(rd, FX_W0 + stop_at, &wo, NULL), 1);
    assert_int_equal(mw_rec_reader_seek(rd, wo), 0);
    assert_int_equal(mw_rec_reader_next(rd, &rec, NULL, err, sizeof err), 1);
    assert_int_equal(rec->body_case, MPIWATCH__RECORD__BODY_WINDOW);
    assert_int_equal(rec->window->index, FX_W0 + stop_at);
    assert_int_equal(mw_rec_reader_last_lean(rd), 1);
    mw_rec_reader_close(rd);
}

/* ---- replay ------------------------------------------------------------------------------- */

typedef struct {
    mw_collector_t *c;
    mw_pb_encoder_t enc;
    uint8_t *bytes[64];
    size_t len[64];
    unsigned n;
} regen_t;

static void regen_on_window(const mw_window_t *w, void *user)
{
    regen_t *g = user;
    size_t len = mw__window_pack(&g->enc, w, g->c->now.real_ns);
    assert_true(len > 0 && g->n < 64);
    g->bytes[g->n] = malloc(len);
    memcpy(g->bytes[g->n], g->enc.out, len);
    g->len[g->n++] = len;
}

/* A live run recorded, then replayed into another collector: the same windows byte for byte
 * (so the same closes at the same times), the same summary and stats. */
static void test_replay_equals_live(void **state)
{
    (void)state;
    char path[128], err[128];
    path_of(path, sizeof path, "live.mpiw");
    fx_t *live = fx_new();
    live->c->record = mw__record_open(path, &live->opt, fx_wall_clock());
    assert_non_null(live->c->record);

    /* Rejected input is recorded too: garbage and a multipart message. */
    mw_collector_frame(live->c, "garbage", 7, 1, &live->now);
    mw_collector_frame(live->c, "", 0, 3, &live->now);
    fx_hellos(live, JOB, RANKS);
    tm_msg_t m;
    for (uint64_t k = 0; k < 12; k++) {
        for (uint32_t rank = 0; rank < RANKS; rank++) {
            if (rank == 3 && k % 4 == 1)
                continue; /* closes by deadline, with a rank missing */
            tm_sample(&m, JOB, rank, FX_W0 + k, live->now.real_ns);
            tm_add_fn(&m, fx_fn(0), 3 + rank, 3000 + k, 500, 1500, 64 * (k + 1));
            tm_add_peer(&m, (rank + 1) % RANKS, 2, 128);
            tm_add_occ(&m, fx_fn(0), (uint32_t)(k % TM_SUBSLOTS), 2000);
            tm_add_call(&m, fx_fn(0), live->now.real_ns - 5000, 1500, 64, -1);
            fx_feed(live, &m);
        }
        /* Past the lateness allowance when rank 3 is missing: the tick closes the window. */
        fx_advance(live, k % 4 == 1 ? live->opt.lateness_ms + 100 : 40);
    }
    for (uint32_t rank = 0; rank < RANKS; rank++) {
        tm_bye(&m, JOB, rank);
        fx_feed(live, &m);
    }
    assert_true(live->c->job.ended == MW_END_COMPLETE);
    assert_true(live->c->job.partial_windows > 0);
    mw__record_close(live->c->record);
    live->c->record = NULL;

    fx_t *rep = fx_new();
    regen_t g = {.c = rep->c};
    rep->c->on_window = regen_on_window;
    rep->c->on_window_user = &g;
    mw_rec_reader_t *rd = mw_rec_reader_open(path, err, sizeof err);
    assert_non_null(rd);
    const Mpiwatch__Record *rec;
    uint8_t *rec_bytes[64];
    size_t rec_len[64];
    unsigned recorded = 0, applied = 0;
    while (mw_rec_reader_next(rd, &rec, NULL, err, sizeof err) == 1) {
        if (rec->body_case == MPIWATCH__RECORD__BODY_WINDOW) {
            assert_true(recorded < 64);
            rec_bytes[recorded] = malloc(mpiwatch__window__get_packed_size(rec->window));
            rec_len[recorded] = mpiwatch__window__pack(rec->window, rec_bytes[recorded]);
            recorded++;
        }
        applied += mw_collector_apply_record(rep->c, rec) == 1;
    }
    assert_int_equal(mw_rec_reader_truncated(rd), 0);
    mw_rec_reader_close(rd);
    /* 2 rejected frames, the hellos, the samples, the byes, and the ticks that closed. */
    assert_true(applied > 2 + 2 * RANKS + 12 * (RANKS - 1));

    assert_int_equal(recorded, live->c->job.windows);
    assert_int_equal(g.n, recorded);
    for (unsigned i = 0; i < recorded; i++) {
        assert_int_equal(g.len[i], rec_len[i]);
        assert_memory_equal(g.bytes[i], rec_bytes[i], rec_len[i]);
        free(g.bytes[i]);
        free(rec_bytes[i]);
    }
    char *a = mw_summary_json(live->c), *b = mw_summary_json(rep->c);
    assert_non_null(a);
    assert_non_null(b);
    assert_string_equal(a, b);
    free(a);
    free(b);
    a = mw__stats_json(live->c);
    b = mw__stats_json(rep->c);
    assert_string_equal(a, b);
    assert_non_null(strstr(a, "\"multipart\":\t1")); /* cJSON_Print indents with tabs */
    free(a);
    free(b);
    mw__pb_encoder_free(&g.enc);
    fx_free(rep);
    fx_free(live);
}

/* ---- hardening (issue 12) ------------------------------------------------------------------ */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A received frame full of planted index frame headers: "MWIX", a length of `claim` bytes and
 * a CRC, every 12 bytes. Verifying one costs a CRC over `claim` bytes, which is what made the
 * old backward search cost 1-2 ms per planted header. */
static uint8_t *planted_frame(size_t len, uint32_t claim)
{
    uint8_t *p = malloc(len);
    assert_non_null(p);
    for (size_t i = 0; i + 12 <= len; i += 12) {
        memcpy(p + i, "MWIX", 4);
        mw_rec_put_frame_header(p + i, MW_REC_TAG_INDEX, claim, 0x12345678u);
    }
    return p;
}

/* Finds every window of a fresh reader on `path` and returns the seconds it took. */
static double time_find_all(const char *path, uint64_t windows)
{
    char err[128];
    double t0 = now_s();
    mw_rec_reader_t *rd = mw_rec_reader_open(path, err, sizeof err);
    assert_non_null(rd);
    for (uint64_t k = 0; k < windows; k++)
        check_window(rd, k, 0);
    uint64_t first, last;
    assert_int_equal(mw_rec_reader_span(rd, &first, &last, NULL, NULL), 1);
    assert_int_equal(last, FX_W0 + windows - 1);
    mw_rec_reader_close(rd);
    return now_s() - t0;
}

/* A peer plants hundreds of thousands of index tags in frames the collector records, after the
 * last index frame (as on a file still being written, which is what --history reads). The
 * reader must find every window without verifying them: with the file's key, a planted tag is
 * rejected by a 16-byte compare. The bound is generous for a loaded machine; the search this
 * replaces took minutes here (a CRC over 1 MiB per planted tag). */
static void test_planted_index_tags(void **state)
{
    (void)state;
    char path[128];
    path_of(path, sizeof path, "planted.mpiw");
    mw_collector_options_t opt;
    mw_record_t *r = open_writer(path, &opt);
    mw_clock_t now = {FX_MONO_NS, FX_REAL_NS};
    for (uint64_t k = 0; k < 40; k++) /* an index after window 32 */
        write_window(r, &now, k);
    size_t len = MW_MAX_MESSAGE_BYTES;
    uint8_t *bad = planted_frame(len, 1u << 20);
    for (int i = 0; i < 3; i++) /* about 2 million planted tags */
        mw__record_frame(r, &now, bad, len, 1);
    free(bad);
    for (uint64_t k = 40; k < 44; k++)
        write_window(r, &now, k);
    mw__record_flush(r);
    double t = time_find_all(path, 44);
    print_message("planted tags: all 44 windows found in %.3f s\n", t);
    assert_true(t < 5.0);
    mw__record_close(r);
    mw_collector_options_free(&opt);
}

/* Appends one hand-made frame holding `rec` to fp (the frame layout is the same in versions 1
 * and 2). */
static uint64_t v1_frame(FILE *fp, uint32_t tag, const Mpiwatch__Record *rec)
{
    size_t n = mpiwatch__record__get_packed_size(rec);
    uint8_t *p = malloc(n), h[MW_REC_FRAME_HEADER_BYTES];
    assert_non_null(p);
    mpiwatch__record__pack(rec, p);
    mw_rec_put_frame_header(h, tag, (uint32_t)n, mw_rec_crc(0, p, n));
    uint64_t off = (uint64_t)ftell(fp);
    assert_int_equal(fwrite(h, 1, sizeof h, fp), sizeof h);
    assert_int_equal(fwrite(p, 1, n, fp), n);
    free(p);
    return off;
}

/* A version 1 file (no key: every planted tag is a candidate) stays readable and fast: the
 * search verifies a bounded number of candidates, then the forward scan reads each frame once. */
static void test_planted_v1(void **state)
{
    (void)state;
    char path[128];
    path_of(path, sizeof path, "planted-v1.mpiw");
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    uint8_t hdr[16];
    memcpy(hdr, MW_REC_MAGIC, 8);
    memcpy(hdr + 8, "\1\0\0\0\20\0\0\0", 8); /* version 1, header 16 */
    assert_int_equal(fwrite(hdr, 1, 16, fp), 16);
    uint8_t wb[256];
    size_t len = MW_MAX_MESSAGE_BYTES;
    uint8_t *bad = planted_frame(len, 1u << 20);
    for (uint64_t k = 0; k < 8; k++) {
        Mpiwatch__Record rec = MPIWATCH__RECORD__INIT;
        rec.mono_ns = FX_MONO_NS + k;
        rec.body_case = MPIWATCH__RECORD__BODY_MESSAGE;
        rec.message.data = bad;
        rec.message.len = len;
        v1_frame(fp, MW_REC_TAG_FRAME, &rec);
        Mpiwatch__Window w = MPIWATCH__WINDOW__INIT;
        (void)wb;
        w.index = FX_W0 + k;
        w.window_ns = TM_WINDOW_NS;
        rec.body_case = MPIWATCH__RECORD__BODY_WINDOW;
        rec.window = &w;
        v1_frame(fp, MW_REC_TAG_FRAME, &rec);
    }
    free(bad);
    assert_int_equal(fclose(fp), 0);
    double t = time_find_all(path, 8);
    print_message("planted tags in a version 1 file: all 8 windows found in %.3f s\n", t);
    assert_true(t < 5.0);
}

/* A record over the frame limit (a job description of a very large job) is written as chunks
 * and read back whole, by the sequential reader and by the window table's forward scan. */
static void test_chunked_job(void **state)
{
    (void)state;
    char path[128], err[128];
    path_of(path, sizeof path, "bigjob.mpiw");
    mw_collector_options_t opt;
    mw_record_t *r = open_writer(path, &opt);
    mw_clock_t now = {FX_MONO_NS, FX_REAL_NS};
    write_window(r, &now, 0);
    Mpiwatch__JobInfo job = MPIWATCH__JOB_INFO__INIT;
    size_t big = 3 * (size_t)MW_REC_MAX_FRAME + 12345;
    char *name = malloc(big + 1);
    assert_non_null(name);
    for (size_t i = 0; i < big; i++)
        name[i] = (char)('a' + i % 26);
    name[big] = '\0';
    job.job = name;
    size_t n = mpiwatch__job_info__get_packed_size(&job);
    uint8_t *pb = malloc(n);
    assert_non_null(pb);
    mpiwatch__job_info__pack(&job, pb);
    mw__record_job(r, &now, pb, n);
    free(pb);
    for (uint64_t k = 1; k < 3; k++)
        write_window(r, &now, k);
    mw__record_close(r);
    mw_collector_options_free(&opt);

    size_t flen;
    uint8_t *all = read_all(path, &flen);
    int chunks = 0;
    for (size_t i = 0; i + 4 <= flen; i++) /* chunks, compressed (version 3) or not */
        chunks += memcmp(all + i, "MWRC", 4) == 0 || memcmp(all + i, "MWZC", 4) == 0;
    free(all);
    assert_true(chunks >= 3);

    mw_rec_reader_t *rd = mw_rec_reader_open(path, err, sizeof err);
    assert_non_null(rd);
    const Mpiwatch__Record *rec;
    int jobs = 0, k;
    while ((k = mw_rec_reader_next(rd, &rec, NULL, err, sizeof err)) == 1) {
        if (rec->body_case == MPIWATCH__RECORD__BODY_JOB) {
            assert_non_null(rec->job);
            assert_int_equal(strlen(rec->job->job), big);
            assert_memory_equal(rec->job->job, name, big);
            jobs++;
        }
    }
    assert_int_equal(k, 0);
    assert_int_equal(mw_rec_reader_truncated(rd), 0);
    assert_int_equal(jobs, 1);
    mw_rec_reader_close(rd);
    free(name);
    rd = mw_rec_reader_open(path, err, sizeof err);
    for (uint64_t w = 0; w < 3; w++)
        check_window(rd, w, 0);
    mw_rec_reader_close(rd);
}

/* A recording never replaces a file: an existing name and a symbolic link (to a file that must
 * stay intact, and to nowhere) are refused; a device is written as before. */
static void test_no_overwrite(void **state)
{
    (void)state;
    char path[128], target[128], link[128], dangling[128];
    path_of(path, sizeof path, "exists.mpiw");
    path_of(target, sizeof target, "precious.txt");
    path_of(link, sizeof link, "link.mpiw");
    path_of(dangling, sizeof dangling, "dangling.mpiw");
    write_all(path, (const uint8_t *)"old recording", 13);
    write_all(target, (const uint8_t *)"precious", 8);
    assert_int_equal(symlink(target, link), 0);
    char nowhere[160];
    snprintf(nowhere, sizeof nowhere, "%s/nowhere", tmpdir);
    assert_int_equal(symlink(nowhere, dangling), 0);
    mw_collector_options_t opt;
    mw_collector_options_defaults(&opt);
    assert_null(mw__record_open(path, &opt, fx_wall_clock()));
    assert_null(mw__record_open(link, &opt, fx_wall_clock()));
    assert_null(mw__record_open(dangling, &opt, fx_wall_clock()));
    size_t len;
    uint8_t *b = read_all(target, &len);
    assert_int_equal(len, 8);
    assert_memory_equal(b, "precious", 8);
    free(b);
    b = read_all(path, &len);
    assert_int_equal(len, 13);
    free(b);
    struct stat st;
    assert_int_equal(lstat(nowhere, &st), -1); /* the dangling link created nothing */
    mw_record_t *r = mw__record_open("/dev/null", &opt, fx_wall_clock());
    assert_non_null(r);
    mw__record_close(r);
    mw_collector_options_free(&opt);
}

/* A window length change in a recording is checked before it is applied: lengths the live
 * collector refuses, a change that does not start where the grid says, and garbage leave the
 * grid as it was. A good one is applied. */
static void test_bad_window_event(void **state)
{
    (void)state;
    fx_t *fx = fx_new();
    fx_hellos(fx, JOB, RANKS);
    const mw_grid_t before = fx->c->job.grid;
    assert_int_equal(before.n, 1);
    uint64_t k = FX_W0 + 1000, start = mw_grid_start(&before, k);
    char bad[6][128];
    snprintf(bad[0], sizeof bad[0], "window=1ms from window %llu start %llu", (unsigned long long)k,
             (unsigned long long)start);
    snprintf(bad[1], sizeof bad[1], "window=999999ms from window %llu start %llu",
             (unsigned long long)k, (unsigned long long)start);
    snprintf(bad[2], sizeof bad[2], "window=200ms from window %llu start %llu",
             (unsigned long long)k, (unsigned long long)start + 1);
    snprintf(bad[3], sizeof bad[3], "window=200ms from window 0 start 0");
    snprintf(bad[4], sizeof bad[4], "window=200ms from window %llu start %llu trailing",
             (unsigned long long)k, (unsigned long long)start);
    snprintf(bad[5], sizeof bad[5], "window=200ms");
    Mpiwatch__JobEvent ev = MPIWATCH__JOB_EVENT__INIT;
    Mpiwatch__Record rec = MPIWATCH__RECORD__INIT;
    rec.body_case = MPIWATCH__RECORD__BODY_EVENT;
    rec.event = &ev;
    rec.mono_ns = fx->now.mono_ns;
    rec.real_ns = fx->now.real_ns;
    ev.kind = "window";
    ev.job = JOB;
    for (int i = 0; i < 6; i++) {
        ev.detail = bad[i];
        mw_collector_apply_record(fx->c, &rec);
        assert_int_equal(fx->c->job.grid.n, 1);
        assert_memory_equal(&fx->c->job.grid, &before, sizeof before);
    }
    assert_int_equal(fx->c->replay_window_refused, 6);
    char good[128];
    snprintf(good, sizeof good, "window=200ms from window %llu start %llu", (unsigned long long)k,
             (unsigned long long)start);
    ev.detail = good;
    mw_collector_apply_record(fx->c, &rec);
    assert_int_equal(fx->c->job.grid.n, 2);
    assert_int_equal(fx->c->replay_window_refused, 6);
    fx_free(fx);
}

/* Window indices that do not grow in file order (two jobs in one recording, each starting its
 * grid again) are looked up by binary search over a sorted copy, not by a linear walk: 200,000
 * windows in two runs of 100,000, every one found, the first of two equal indices returned.
 * A linear walk per lookup (the reader before) took 13 s here, this 1.4 s. */
/* ---- per-call traces stored once ---------------------------------------------------------- */

#define TR_W 5000u
#define TR_RANKS 3u

static void tr_fill(Mpiwatch__Trace *t, uint64_t window, uint32_t rank, uint8_t *rec, size_t n)
{
    mpiwatch__trace__init(t);
    t->window = window;
    t->state = 1;
    t->count = 10 + rank;
    t->encoding = 1;
    t->raw_bytes = n + rank;
    t->window_start_ns = window * TM_WINDOW_NS;
    t->threads = 1;
    for (size_t i = 0; i < n; i++)
        rec[i] = (uint8_t)(rank * 31 + i * 7);
    t->records.data = rec;
    t->records.len = n;
}

/* A received sample of `rank` for `window` carrying its trace; returns its recording offset. */
static uint64_t tr_frame(mw_record_t *r, mw_clock_t *now, const char *job, uint32_t rank,
                         uint64_t window, int as_trace_body)
{
    uint8_t rec[300], buf[1024];
    Mpiwatch__Trace t;
    tr_fill(&t, window, rank, rec, 100 + 50 * rank);
    Mpiwatch__Sample s = MPIWATCH__SAMPLE__INIT;
    s.window = window;
    s.trace = &t;
    Mpiwatch__Envelope e = MPIWATCH__ENVELOPE__INIT;
    e.version = MW_PROTO_VERSION;
    e.job = (char *)job;
    e.rank = rank;
    if (as_trace_body) {
        e.body_case = MPIWATCH__ENVELOPE__BODY_TRACE;
        e.trace = &t;
    } else {
        e.body_case = MPIWATCH__ENVELOPE__BODY_SAMPLE;
        e.sample = &s;
    }
    size_t n = mpiwatch__envelope__pack(&e, buf);
    mw__record_frame(r, now, buf, n, 1);
    now->mono_ns += 1000;
    return mw__record_last_frame(r);
}

/* The live window `window` with one exact trace per rank (the records as the frames hold
 * them), packed into out; w gets the merge's view (frame offsets as given). */
static size_t tr_window(uint64_t window, const uint64_t *frame_off, mw_window_t *w,
                        mw_rank_trace_t *rt, uint8_t *out)
{
    static uint8_t rec[TR_RANKS][300];
    Mpiwatch__Trace t[TR_RANKS];
    Mpiwatch__RankTrace r[TR_RANKS], *rp[TR_RANKS];
    Mpiwatch__Window pw = MPIWATCH__WINDOW__INIT;
    pw.index = window;
    pw.window_ns = TM_WINDOW_NS;
    pw.ranks_reporting = TR_RANKS;
    memset(w, 0, sizeof *w);
    w->index = window;
    w->traces = rt;
    w->n_traces = TR_RANKS;
    for (uint32_t i = 0; i < TR_RANKS; i++) {
        tr_fill(&t[i], window, i, rec[i], 100 + 50 * i);
        mpiwatch__rank_trace__init(&r[i]);
        r[i].rank = i;
        r[i].trace = &t[i];
        rp[i] = &r[i];
        rt[i] = (mw_rank_trace_t){
            .rank = i, .state = 1, .len = t[i].records.len, .frame_off = frame_off[i]};
    }
    pw.n_traces = TR_RANKS;
    pw.traces = rp;
    pw.traced_ranks = TR_RANKS;
    return mpiwatch__window__pack(&pw, out);
}

/* The next window record of the reader, or NULL at the end. */
static Mpiwatch__Window *next_window(mw_rec_reader_t *rd)
{
    const Mpiwatch__Record *rec;
    char err[256];
    while (mw_rec_reader_next(rd, &rec, NULL, err, sizeof err) == 1)
        if (rec->body_case == MPIWATCH__RECORD__BODY_WINDOW)
            return rec->window;
    return NULL;
}

/* A window's trace records are stored once, in the received frame: the window frame names it
 * (frame_offset) and readers put the records back, byte-identical to the live window; an
 * offset that does not lead to the right frame (another rank's, another window's, not a frame,
 * past the end, another job's) leaves the rank not exact and is counted. */
static void test_traces_once(void **state)
{
    (void)state;
    char path[128];
    path_of(path, sizeof path, "traces.mpiw");
    mw_collector_options_t opt;
    mw_record_t *r = open_writer(path, &opt);
    mw_clock_t now = *fx_wall_clock();
    uint64_t off[TR_RANKS], off2[TR_RANKS];
    for (uint32_t i = 0; i < TR_RANKS; i++)
        off[i] = tr_frame(r, &now, JOB, i, TR_W, i == 1); /* rank 1: a reach-back trace */
    assert_true(off[0] && off[1] > off[0] && off[2] > off[1]);
    for (uint32_t i = 0; i < TR_RANKS; i++)
        off2[i] = tr_frame(r, &now, i == 2 ? "another" : JOB, i, TR_W + 1, 0);

    /* Window TR_W: ranks 0 and 1 by reference, rank 2 left inline (no frame known). */
    static uint8_t live[8192], live2[8192];
    mw_window_t w;
    mw_rank_trace_t rt[TR_RANKS];
    uint64_t fo[TR_RANKS] = {off[0], off[1], 0};
    size_t live_len = tr_window(TR_W, fo, &w, rt, live);
    mw__record_merged(r, &now, &w, live, live_len);
    /* Window TR_W + 1: rank 0 names rank 1's frame, rank 1 the middle of a frame, rank 2 a
     * frame of another job. */
    uint64_t bad[TR_RANKS] = {off2[1], off2[1] + 1, off2[2]};
    size_t live2_len = tr_window(TR_W + 1, bad, &w, rt, live2);
    mw__record_merged(r, &now, &w, live2, live2_len);
    uint64_t size_before_close = mw__record_bytes(r);
    mw__record_close(r);
    assert_true(size_before_close > 0);

    char err[256];
    mw_rec_reader_t *rd = mw_rec_reader_open(path, err, sizeof err);
    assert_non_null(rd);
    int seen = 0;
    Mpiwatch__Window *pw;
    while ((pw = next_window(rd)) != NULL) {
        assert_int_equal(pw->n_traces, TR_RANKS);
        size_t stored = mpiwatch__window__get_packed_size(pw);
        if (pw->index == TR_W) {
            seen++;
            assert_int_equal(pw->traces[0]->frame_offset, off[0]);
            assert_int_equal(pw->traces[1]->frame_offset, off[1]);
            assert_int_equal(pw->traces[0]->trace->records.len, 0);
            assert_int_equal(pw->traces[2]->frame_offset, 0);
            assert_int_equal(pw->traces[2]->trace->records.len, 200);
            assert_true(stored + 250 - 2 * 11 < live_len);
            assert_int_equal(mw_rec_reader_resolve_window(rd, pw, JOB), 0);
            uint8_t again[8192];
            assert_int_equal(mpiwatch__window__get_packed_size(pw), live_len);
            mpiwatch__window__pack(pw, again);
            assert_memory_equal(again, live, live_len);
            /* One trace alone, and the same one with a job that is not the frame's. */
            const uint8_t *p;
            size_t n;
            Mpiwatch__RankTrace one = *pw->traces[1];
            Mpiwatch__Trace t1 = *one.trace;
            one.trace = &t1;
            one.frame_offset = off[1];
            assert_int_equal(
                mw_rec_reader_resolve_trace(rd, JOB, TR_W, &one, &p, &n, err, sizeof err), 1);
            assert_int_equal(n, 150);
            /* (the window's records point into the same buffer: refilled by this call) */
            uint8_t want[150];
            for (size_t i = 0; i < n; i++)
                want[i] = (uint8_t)(31 + i * 7);
            assert_memory_equal(p, want, n);
            assert_int_equal(
                mw_rec_reader_resolve_trace(rd, "other", TR_W, &one, &p, &n, err, sizeof err), -1);
            assert_non_null(strstr(err, "another job"));
            one.frame_offset = size_before_close + 4096; /* past the end */
            assert_int_equal(
                mw_rec_reader_resolve_trace(rd, JOB, TR_W, &one, &p, &n, err, sizeof err), -1);
            one.frame_offset = 3; /* the header */
            assert_int_equal(
                mw_rec_reader_resolve_trace(rd, JOB, TR_W, &one, &p, &n, err, sizeof err), -1);
            one.frame_offset = off[1];
            t1.count++; /* another trace of this window */
            assert_int_equal(
                mw_rec_reader_resolve_trace(rd, JOB, TR_W, &one, &p, &n, err, sizeof err), -1);
            assert_int_equal(mw_rec_reader_trace_failures(rd), 4);
        } else if (pw->index == TR_W + 1) {
            seen++;
            uint64_t before = mw_rec_reader_trace_failures(rd);
            assert_int_equal(mw_rec_reader_resolve_window(rd, pw, JOB), 3);
            assert_int_equal(mw_rec_reader_trace_failures(rd), before + 3);
            assert_int_equal(pw->traced_ranks, 0);
            for (uint32_t i = 0; i < TR_RANKS; i++) {
                assert_int_equal(pw->traces[i]->trace->state, 2);
                assert_int_equal(pw->traces[i]->trace->reason, 4);
                assert_int_equal(pw->traces[i]->trace->records.len, 0);
                assert_int_equal(pw->traces[i]->frame_offset, 0);
            }
        }
    }
    assert_int_equal(seen, 2);
    mw_rec_reader_close(rd);

    /* Bytes that are not a Window are stored as they are. */
    uint8_t junk[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    uint8_t out[64];
    uint64_t one_off = 99;
    assert_int_equal(mw_rec_window_strip(junk, sizeof junk, &one_off, 1, out), 0);
}

/* A received sample of `rank` for `window` whose trace holds `len` records bytes (all equal to
 * the rank); returns its recording offset. */
static uint64_t tr_big_frame(mw_record_t *r, mw_clock_t *now, uint32_t rank, uint64_t window,
                             size_t len)
{
    uint8_t *rec = malloc(len), *buf = malloc(len + 4096);
    assert_true(rec && buf);
    memset(rec, (int)rank, len);
    Mpiwatch__Trace t;
    tr_fill(&t, window, 0, rec, 0);
    t.records.data = rec;
    t.records.len = len;
    Mpiwatch__Sample s = MPIWATCH__SAMPLE__INIT;
    s.window = window;
    s.trace = &t;
    Mpiwatch__Envelope e = MPIWATCH__ENVELOPE__INIT;
    e.version = MW_PROTO_VERSION;
    e.job = (char *)JOB;
    e.rank = rank;
    e.body_case = MPIWATCH__ENVELOPE__BODY_SAMPLE;
    e.sample = &s;
    size_t n = mpiwatch__envelope__pack(&e, buf);
    mw__record_frame(r, now, buf, n, 1);
    now->mono_ns += 1000;
    free(rec);
    free(buf);
    return mw__record_last_frame(r);
}

/* A stored window (its recording form) with n trace entries: entry i of rank ranks[i], naming
 * the frame at off[i], its Trace as tr_big_frame writes it, without records. */
static void tr_ref_window(mw_record_t *r, mw_clock_t *now, uint64_t window, size_t n,
                          const uint32_t *ranks, const uint64_t *off)
{
    Mpiwatch__Trace *t = calloc(n, sizeof *t);
    Mpiwatch__RankTrace *rt = calloc(n, sizeof *rt), **rp = calloc(n, sizeof *rp);
    uint8_t *out = malloc(256 * n + 256);
    assert_true(t && rt && rp && out);
    for (size_t i = 0; i < n; i++) {
        tr_fill(&t[i], window, 0, NULL, 0);
        mpiwatch__rank_trace__init(&rt[i]);
        rt[i].rank = ranks[i];
        rt[i].trace = &t[i];
        rt[i].frame_offset = off[i];
        rp[i] = &rt[i];
    }
    Mpiwatch__Window pw = MPIWATCH__WINDOW__INIT;
    pw.index = window;
    pw.window_ns = TM_WINDOW_NS;
    pw.ranks_reporting = (uint32_t)n;
    pw.n_traces = n;
    pw.traces = rp;
    pw.traced_ranks = (uint32_t)n;
    size_t len = mpiwatch__window__pack(&pw, out);
    mw__record_window(r, now, window, out, len);
    now->mono_ns += 1000;
    free(t);
    free(rt);
    free(rp);
    free(out);
}

/* A crafted recording cannot make a reader resolve more records for one window than the
 * collector keeps of a window (MW_REC_WINDOW_TRACE_BYTES): 40 entries of one rank naming the
 * same 1 MiB trace resolve one (the reader copied 40 MiB before, and a window frame of 9 MiB
 * holds entries enough to ask for terabytes); 40 ranks of 1 MiB each resolve 32 of them. */
#define AMP_N 40u
static void test_traces_amplified(void **state)
{
    (void)state;
    char path[128];
    path_of(path, sizeof path, "amplified.mpiw");
    mw_collector_options_t opt;
    mw_record_t *r = open_writer(path, &opt);
    mw_clock_t now = *fx_wall_clock();
    uint64_t off[AMP_N], same[AMP_N];
    uint32_t ranks[AMP_N], zero[AMP_N] = {0};
    for (uint32_t i = 0; i < AMP_N; i++) {
        off[i] = tr_big_frame(r, &now, i, TR_W, 1u << 20);
        assert_true(off[i] > 0);
        ranks[i] = i;
        same[i] = off[0];
    }
    tr_ref_window(r, &now, TR_W, AMP_N, zero, same); /* one rank 40 times */
    tr_ref_window(r, &now, TR_W, AMP_N, ranks, off); /* 40 ranks */
    mw__record_close(r);

    char err[256];
    mw_rec_reader_t *rd = mw_rec_reader_open(path, err, sizeof err);
    assert_non_null(rd);
    int seen = 0;
    Mpiwatch__Window *pw;
    while ((pw = next_window(rd)) != NULL) {
        assert_int_equal(pw->n_traces, AMP_N);
        int failed = mw_rec_reader_resolve_window(rd, pw, JOB);
        size_t total = 0, exact = 0;
        for (uint32_t i = 0; i < AMP_N; i++) {
            const Mpiwatch__Trace *t = pw->traces[i]->trace;
            total += t->records.len;
            exact += t->state == 1;
            if (t->state == 1) {
                assert_int_equal(t->records.len, 1u << 20);
                assert_int_equal(t->records.data[0], (uint8_t)pw->traces[i]->rank);
            }
        }
        assert_true(total <= MW_REC_WINDOW_TRACE_BYTES);
        assert_int_equal(pw->traced_ranks, exact);
        if (seen++ == 0) {
            assert_int_equal(failed, AMP_N - 1);
            assert_int_equal(exact, 1);
            assert_int_equal(pw->traces[0]->trace->state, 1); /* the first entry is kept */
        } else {
            assert_int_equal(failed, AMP_N - 32);
            assert_int_equal(exact, 32);
        }
    }
    assert_int_equal(seen, 2);
    mw_rec_reader_close(rd);
}

static void test_unsorted_lookup(void **state)
{
    (void)state;
    char path[128], err[128];
    path_of(path, sizeof path, "unsorted.mpiw");
    /* Written by hand (the writer's hand-off per window would make this slow, not the read). */
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    uint8_t hdr[MW_REC_HEADER_BYTES];
    mw_rec_put_header(hdr);
    assert_int_equal(fwrite(hdr, 1, sizeof hdr, fp), sizeof hdr);
    enum { HALF = 100000 };
    for (int job = 0; job < 2; job++)
        for (uint64_t k = 0; k < HALF; k++) {
            uint64_t index = job == 0 ? 1000000 + k : k + (k >= HALF / 2 ? 1000000 : 0);
            Mpiwatch__Window w = MPIWATCH__WINDOW__INIT;
            w.index = index;
            w.window_ns = TM_WINDOW_NS;
            Mpiwatch__Record rec = MPIWATCH__RECORD__INIT;
            rec.mono_ns = FX_MONO_NS + k;
            rec.body_case = MPIWATCH__RECORD__BODY_WINDOW;
            rec.window = &w;
            v1_frame(fp, MW_REC_TAG_FRAME, &rec);
        }
    assert_int_equal(fclose(fp), 0);
    double t0 = now_s();
    mw_rec_reader_t *rd = mw_rec_reader_open(path, err, sizeof err);
    assert_non_null(rd);
    uint64_t prev = 0;
    for (int job = 0; job < 2; job++)
        for (uint64_t k = 0; k < HALF; k++) {
            uint64_t index = job == 0 ? 1000000 + k : k + (k >= HALF / 2 ? 1000000 : 0), off;
            assert_int_equal(mw_rec_reader_find_window(rd, index, &off, NULL), 1);
            if (job == 1 && index >= 1000000)
                assert_true(off <= prev); /* the first job's window, which comes first */
            if (job == 0)
                prev = off;
        }
    assert_int_equal(mw_rec_reader_find_window(rd, 999999, NULL, NULL), 0);
    mw_rec_reader_close(rd);
    double t = now_s() - t0;
    print_message("200000 unsorted windows found in %.3f s\n", t);
    assert_true(t < 5.0); /* 1.4 s here; the linear walk took 13 s */
}

/* Writes the file of test_compressed: `windows` windows with frames compressed at `level`. */
static void write_file_level(const char *path, uint64_t windows, int level)
{
    mw_collector_options_t opt;
    mw_collector_options_defaults(&opt);
    opt.record_compress = level;
    mw_record_t *r = mw__record_open(path, &opt, fx_wall_clock());
    assert_non_null(r);
    mw_clock_t now = {FX_MONO_NS, FX_REAL_NS};
    uint32_t perm[512];
    uint8_t wb[4096];
    for (uint64_t k = 0; k < windows; k++) {
        write_window(r, &now, k);
        /* A window of a wider job, as large as real ones are compared to a sample: its
         * per-rank MPI share, which compresses like a real one (similar from rank to rank). */
        Mpiwatch__Window w = MPIWATCH__WINDOW__INIT;
        w.index = FX_W0 + k;
        w.window_ns = TM_WINDOW_NS;
        for (size_t i = 0; i < 512; i++)
            perm[i] = 600 + (uint32_t)((i * 7 + k) % 50);
        w.n_rank_mpi_permille = 512;
        w.rank_mpi_permille = perm;
        assert_true(mpiwatch__window__get_packed_size(&w) <= sizeof wb);
        mw__record_step(r, &now, wb, mpiwatch__window__pack(&w, wb));
    }
    mw__record_finish(r, &now);
    assert_int_equal(mw__record_failed(r), 0);
    mw__record_close(r);
    mw_collector_options_free(&opt);
}

static size_t count_tag(const uint8_t *p, size_t n, const char *tag)
{
    size_t k = 0;
    for (size_t i = 0; i + 4 <= n; i++)
        k += memcmp(p + i, tag, 4) == 0;
    return k;
}

/* Reads every record of a file but the index and the start: their packed bytes concatenated into
 * *out. Returns the count; *truncated says whether the reader stopped at a damaged frame. */
static size_t read_records(const char *path, uint8_t **out, size_t *len, int *truncated)
{
    char err[160];
    mw_rec_reader_t *rd = mw_rec_reader_open(path, err, sizeof err);
    assert_non_null(rd);
    const Mpiwatch__Record *rec;
    size_t n = 0, cap = 1 << 16;
    *len = 0;
    *out = malloc(cap);
    int k;
    while ((k = mw_rec_reader_next(rd, &rec, NULL, err, sizeof err)) == 1) {
        if (rec->body_case == MPIWATCH__RECORD__BODY_INDEX ||
            rec->body_case == MPIWATCH__RECORD__BODY_START)
            continue; /* file offsets, and the wall clock at open */
        size_t m = mpiwatch__record__get_packed_size(rec);
        while (*len + m > cap)
            *out = realloc(*out, cap *= 2);
        assert_non_null(*out);
        *len += mpiwatch__record__pack(rec, *out + *len);
        n++;
    }
    assert_int_equal(k, 0);
    *truncated = mw_rec_reader_truncated(rd);
    mw_rec_reader_close(rd);
    return n;
}

/* Compressed frames (format version 3): the same writes with and without compression read
 * back as the same records, windows are found through the index in both, and a compressed
 * frame that is damaged behind a good CRC (bytes that are not zstd, a content size over the
 * frame cap, a size that lies) or that appears in a version 2 file ends the file like a torn
 * frame, without a crash. */
static void test_compressed(void **state)
{
    (void)state;
    char plain[128], zip[128], bad[128], fast[128];
    path_of(fast, sizeof fast, "fast.mpiw");
    path_of(plain, sizeof plain, "plain.mpiw");
    path_of(zip, sizeof zip, "zip.mpiw");
    path_of(bad, sizeof bad, "zbad.mpiw");
    write_file_level(plain, 70, 0);
    write_file_level(zip, 70, 3);

    size_t np, nz;
    uint8_t *fp = read_all(plain, &np), *fz = read_all(zip, &nz);
    assert_int_equal(fp[8], 3);
    assert_int_equal(count_tag(fp, np, "MWZF"), 0);
    size_t zf = count_tag(fz, nz, "MWZF");
    assert_true(zf >= 70); /* the wide windows at least */
    assert_true(nz < np);
    print_message("compressed: %zu frames, %zu -> %zu bytes (%.2fx)\n", zf, np, nz,
                  (double)np / (double)nz);

    uint8_t *rp, *rz;
    size_t lp, lz;
    int tp, tz;
    size_t cp = read_records(plain, &rp, &lp, &tp), cz = read_records(zip, &rz, &lz, &tz);
    assert_int_equal(cp, cz);
    assert_true(cp > 70 * (RANKS + 1));
    assert_int_equal(lp, lz);
    assert_memory_equal(rp, rz, lp);
    assert_int_equal(tp, 0);
    assert_int_equal(tz, 0);
    free(rp);
    /* A fast level (the default) gives the same records too. */
    write_file_level(fast, 70, -3);
    size_t cf = read_records(fast, &rp, &lp, &tp);
    assert_int_equal(cf, cz);
    assert_int_equal(lp, lz);
    assert_memory_equal(rp, rz, lp);
    assert_int_equal(tp, 0);
    free(rp);

    char err[160];
    mw_rec_reader_t *rd = mw_rec_reader_open(zip, err, sizeof err);
    assert_non_null(rd);
    for (uint64_t k = 0; k < 70; k += 7)
        check_window(rd, k, 1);
    mw_rec_reader_close(rd);

    /* The first compressed frame, damaged three ways behind a CRC that matches. */
    size_t at = 0;
    while (at + 4 <= nz && memcmp(fz + at, "MWZF", 4) != 0)
        at++;
    assert_true(at + 4 <= nz);
    uint32_t flen = (uint32_t)fz[at + 4] | (uint32_t)fz[at + 5] << 8 | (uint32_t)fz[at + 6] << 16 |
                    (uint32_t)fz[at + 7] << 24;
    for (int how = 0; how < 3; how++) {
        uint8_t *d = malloc(nz);
        assert_non_null(d);
        memcpy(d, fz, nz);
        uint8_t *pl = d + at + MW_REC_FRAME_HEADER_BYTES;
        if (how == 0) {
            pl[0] ^= 0xff; /* not a zstd frame any more */
        } else if (how == 1) {
            pl[flen - 1] ^= 0x55; /* the compressed data itself */
        } else {
            /* A version 2 reader never saw compressed frames: in a version 2 file they are
             * not frames. */
            d[8] = 2;
        }
        uint32_t crc = mw_rec_crc(0, pl, flen);
        mw_rec_put_frame_header(d + at, MW_REC_TAG_ZFRAME, flen, crc);
        write_all(bad, d, nz);
        free(d);
        uint8_t *rb;
        size_t lb;
        int tb;
        size_t cb = read_records(bad, &rb, &lb, &tb);
        if (how != 1 || cb < cz) {
            /* Decoding stops at the damaged frame (flipping a bit of the data may leave a
             * frame that still decodes, to other bytes of the same length: then the records
             * after it must still all be there). */
            assert_true(cb < cz);
            assert_int_equal(tb, 1);
            assert_memory_equal(rb, rz, lb);
        }
        free(rb);
        unlink(bad);
    }

    /* A zstd frame declaring more than a frame may hold is refused before any allocation. */
    size_t big = (size_t)MW_REC_MAX_FRAME + 1;
    uint8_t *zeros = calloc(1, big), *out = malloc(MW_REC_ZBOUND(big));
    assert_non_null(zeros);
    assert_non_null(out);
    mw_rec_zctx_t *z = mw_rec_zctx_new(1);
    assert_non_null(z);
    size_t zl = mw_rec_compress(z, zeros, big, NULL, 0, NULL, 0, out, MW_REC_ZBOUND(big));
    assert_true(zl > 0 && zl < 4096);
    mw_rec_zctx_free(z);
    uint8_t *d = malloc(nz + MW_REC_FRAME_HEADER_BYTES + zl);
    assert_non_null(d);
    memcpy(d, fz, at);
    mw_rec_put_frame_header(d + at, MW_REC_TAG_ZFRAME, (uint32_t)zl, mw_rec_crc(0, out, zl));
    memcpy(d + at + MW_REC_FRAME_HEADER_BYTES, out, zl);
    write_all(bad, d, at + MW_REC_FRAME_HEADER_BYTES + zl);
    uint8_t *rb;
    size_t lb;
    int tb;
    size_t cb = read_records(bad, &rb, &lb, &tb);
    assert_true(cb < cz);
    assert_int_equal(tb, 1);
    free(rb);
    free(d);
    free(out);
    free(zeros);
    free(rz);
    free(fp);
    free(fz);
}

/* The coarse tier's per-rank sums (mw_rec_ranks_*): windows with overlapping and new
 * (rank, function) entries, pairs and MPI shares, summed exactly; a window of another job (its
 * index not after the last) is refused until the sums are taken; the lean copy keeps the
 * job-wide fields and drops every per-rank one. */
static size_t rk_window(uint64_t index, uint32_t shift, uint8_t *out, size_t cap)
{
    uint32_t rank[3] = {0, 1, 2 + shift}, fn[3] = {4, 4, 7};
    uint64_t count[3] = {1 + index, 2, 3}, ns[3] = {100, 200 + index, 300};
    uint64_t bytes[3] = {8, 16, 32 * index};
    uint32_t src[2] = {0, 1 + shift}, dst[2] = {1, 0};
    uint64_t msgs[2] = {5, 6 + index}, pbytes[2] = {50, 60};
    uint32_t pm[4] = {500, 65535, 250 + (uint32_t)index, 1000};
    Mpiwatch__Window w = MPIWATCH__WINDOW__INIT;
    w.index = index;
    w.window_ns = TM_WINDOW_NS;
    w.ranks_reporting = 4;
    w.mpi_time_ns = 77;
    w.n_rf_rank = w.n_rf_fn = w.n_rf_count = w.n_rf_ns = w.n_rf_bytes = 3;
    w.rf_rank = rank, w.rf_fn = fn, w.rf_count = count, w.rf_ns = ns, w.rf_bytes = bytes;
    w.n_pair_src = w.n_pair_dst = w.n_pair_messages = w.n_pair_bytes = 2;
    w.pair_src = src, w.pair_dst = dst, w.pair_messages = msgs, w.pair_bytes = pbytes;
    w.n_rank_mpi_permille = 4;
    w.rank_mpi_permille = pm;
    assert_true(mpiwatch__window__get_packed_size(&w) <= cap);
    return mpiwatch__window__pack(&w, out);
}

static void test_rank_sums(void **state)
{
    (void)state;
    uint8_t wb[1024], lean[1024];
    mw_rec_ranks_t *a = mw_rec_ranks_new();
    assert_non_null(a);
    size_t n;
    assert_null(mw_rec_ranks_take(a, &n)); /* nothing added */
    for (uint64_t k = 10; k < 13; k++) {
        size_t len = rk_window(k, k == 12, wb, sizeof wb);
        assert_int_equal(mw_rec_ranks_add(a, wb, len), 0);
        if (k == 10) { /* the lean copy: job-wide fields kept, per-rank ones gone */
            size_t ln = mw_rec_window_lean(wb, len, lean);
            assert_true(ln > 0 && ln < len);
            Mpiwatch__Window *lw = mpiwatch__window__unpack(NULL, ln, lean);
            assert_non_null(lw);
            assert_int_equal(lw->index, 10);
            assert_int_equal(lw->mpi_time_ns, 77);
            assert_int_equal(lw->ranks_reporting, 4);
            assert_int_equal(lw->n_rf_rank + lw->n_pair_src + lw->n_rank_mpi_permille, 0);
            mpiwatch__window__free_unpacked(lw, NULL);
        }
    }
    size_t len = rk_window(5, 0, wb, sizeof wb); /* another job: its windows start again */
    assert_int_equal(mw_rec_ranks_add(a, wb, len), 1);
    assert_int_equal(mw_rec_ranks_windows(a), 3);
    const void *p = mw_rec_ranks_take(a, &n);
    assert_non_null(p);
    Mpiwatch__RecordRanks *rk = mpiwatch__record_ranks__unpack(NULL, n, p);
    assert_non_null(rk);
    assert_int_equal(rk->first_window, 10);
    assert_int_equal(rk->last_window, 12);
    assert_int_equal(rk->windows, 3);
    assert_int_equal(rk->left_out, 0);
    const Mpiwatch__Window *s = rk->sums;
    /* (0,4) x3, (1,4) x3, (2,7) x2, (3,7) x1: sorted by rank, then function. */
    assert_int_equal(s->n_rf_rank, 4);
    assert_int_equal(s->rf_rank[0], 0);
    assert_int_equal(s->rf_count[0], 11 + 12 + 13);
    assert_int_equal(s->rf_ns[1], 3 * 200 + 10 + 11 + 12);
    assert_int_equal(s->rf_rank[2], 2);
    assert_int_equal(s->rf_bytes[2], 32 * 10 + 32 * 11);
    assert_int_equal(s->rf_rank[3], 3);
    assert_int_equal(s->rf_fn[3], 7);
    assert_int_equal(s->rf_bytes[3], 32 * 12);
    /* Pairs (0,1) x3, (1,0) x2, (2,0) x1. */
    assert_int_equal(s->n_pair_src, 3);
    assert_int_equal(s->pair_messages[0], 15);
    assert_int_equal(s->pair_messages[1], 6 + 10 + 6 + 11);
    assert_int_equal(s->pair_bytes[2], 60);
    /* Shares: rank 1 never reported (65535), rank 2 the mean of 260, 261, 262. */
    assert_int_equal(rk->n_rank_windows, 4);
    assert_int_equal(rk->rank_windows[1], 0);
    assert_int_equal(s->rank_mpi_permille[1], 65535);
    assert_int_equal(rk->rank_mpi_permille_sum[2], 260 + 261 + 262);
    assert_int_equal(s->rank_mpi_permille[2], 261);
    /* Cut down to rank 0 (history's rank requests): its entry, the pairs it is in. */
    assert_null(mw_rec_ranks_check(rk));
    uint8_t *one = NULL;
    size_t one_cap = 0, on = mw_rec_ranks_one(rk, 0, &one, &one_cap);
    assert_true(on > 0);
    Mpiwatch__RecordRanks *o = mpiwatch__record_ranks__unpack(NULL, on, one);
    assert_non_null(o);
    assert_int_equal(o->first_window, 10);
    assert_int_equal(o->last_window, 12);
    assert_int_equal(o->windows, 3);
    assert_int_equal(o->sums->n_rf_rank, 1);
    assert_int_equal(o->sums->rf_count[0], 11 + 12 + 13);
    assert_int_equal(o->sums->n_pair_src, 3); /* (0,1), (1,0), (2,0) */
    assert_int_equal(o->sums->pair_bytes[2], 60);
    assert_int_equal(o->n_rank_windows, 1);
    assert_int_equal(o->rank_windows[0], rk->rank_windows[0]);
    assert_int_equal(o->rank_mpi_permille_sum[0], rk->rank_mpi_permille_sum[0]);
    assert_int_equal(o->sums->rank_mpi_permille[0], s->rank_mpi_permille[0]);
    mpiwatch__record_ranks__free_unpacked(o, NULL);
    /* Rank 3: one entry, no pair; a rank past the frame: nothing but the frame's span. */
    on = mw_rec_ranks_one(rk, 3, &one, &one_cap);
    o = mpiwatch__record_ranks__unpack(NULL, on, one);
    assert_non_null(o);
    assert_int_equal(o->sums->n_rf_rank, 1);
    assert_int_equal(o->sums->rf_bytes[0], 32 * 12);
    assert_int_equal(o->sums->n_pair_src, 0);
    mpiwatch__record_ranks__free_unpacked(o, NULL);
    on = mw_rec_ranks_one(rk, 1000, &one, &one_cap);
    o = mpiwatch__record_ranks__unpack(NULL, on, one);
    assert_non_null(o);
    assert_int_equal(o->sums->n_rf_rank + o->sums->n_pair_src + o->n_rank_windows, 0);
    assert_int_equal(o->windows, 3);
    mpiwatch__record_ranks__free_unpacked(o, NULL);
    free(one);
    /* Parallel arrays that disagree are refused whole. */
    rk->sums->n_rf_count--;
    assert_non_null(mw_rec_ranks_check(rk));
    rk->sums->n_rf_count++;
    rk->sums->n_pair_bytes--;
    assert_non_null(mw_rec_ranks_check(rk));
    rk->sums->n_pair_bytes++;
    mpiwatch__record_ranks__free_unpacked(rk, NULL);
    /* Taken: empty again, and the other job's window is taken now. */
    assert_int_equal(mw_rec_ranks_windows(a), 0);
    assert_int_equal(mw_rec_ranks_add(a, wb, len), 0);
    assert_non_null(mw_rec_ranks_take(a, &n));
    assert_int_equal(mw_rec_ranks_add(a, "\xff", 1), -1); /* not protobuf */
    mw_rec_ranks_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rank_sums),
        cmocka_unit_test(test_max_gb),
        cmocka_unit_test(test_crc),
        cmocka_unit_test(test_roundtrip_growing),
        cmocka_unit_test(test_open_refuses),
        cmocka_unit_test(test_truncated_everywhere),
        cmocka_unit_test(test_random_damage),
        cmocka_unit_test(test_write_error),
        cmocka_unit_test(test_replay_equals_live),
        cmocka_unit_test(test_planted_index_tags),
        cmocka_unit_test(test_planted_v1),
        cmocka_unit_test(test_chunked_job),
        cmocka_unit_test(test_no_overwrite),
        cmocka_unit_test(test_bad_window_event),
        cmocka_unit_test(test_unsorted_lookup),
        cmocka_unit_test(test_traces_once),
        cmocka_unit_test(test_traces_amplified),
        cmocka_unit_test(test_compressed),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
