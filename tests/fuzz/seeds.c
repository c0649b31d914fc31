/* seeds.c: writes the seed corpora of the binary fuzz targets from valid messages.
 *
 *   mw-fuzz-seeds INGEST_DIR RECORDING_DIR FEED_DIR STEER_DIR
 *
 * fuzz_ingest: scripts in its input format (see fuzz_ingest.c) built from the messages of
 * testmsg.c, so that the fuzzer starts from inputs that get past decoding and validation: a
 * whole job with windows that close, a job that ends by silence, late samples, and a few
 * messages rejected for one reason each.
 * fuzz_recording: recordings written by the collector's own writer (record_file.c) while a job
 * runs through the collector core (more windows than one index frame covers, so the files have
 * several index frames), and a copy with a torn last frame.
 * fuzz_feed: the job description, windows, steps and events of that recording, each wrapped as
 * the Feed message the collector publishes, in fuzz_feed's length-prefixed sequence.
 * fuzz_steer: Steer messages for the built-in keys (pause, resume, capture, window) and for the
 * application, with and without rank lists, in fuzz_steer's length-prefixed sequence.
 * Generated at build time so that the seeds follow the function table, the proto and the
 * recording format instead of being binaries checked in.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "mw_recording.h"
#include "record_file.h"
#include "testpartial.h"

typedef struct {
    uint8_t buf[1 << 16];
    size_t n;
    uint64_t real_ns; /* mirrors the fuzz target's real clock */
} script_t;

static void put(script_t *s, const void *p, size_t n)
{
    if (s->n + n > sizeof s->buf)
        abort();
    memcpy(s->buf + s->n, p, n);
    s->n += n;
}

/* A frame op of the bytes msg (op 0: arena decoding, op 1: malloc decoding). */
static void frame_bytes(script_t *s, const uint8_t *msg, size_t n, int malloc_decode)
{
    if (n > 0xffff)
        abort();
    uint8_t hdr[3] = {(uint8_t)(malloc_decode ? 1 : 0), (uint8_t)n, (uint8_t)(n >> 8)};
    put(s, hdr, 3);
    put(s, msg, n);
}

static void frame(script_t *s, const tm_msg_t *m, int malloc_decode)
{
    uint8_t *msg;
    size_t n = tm_pack(m, &msg);
    frame_bytes(s, msg, n, malloc_decode);
    free(msg);
}

/* Lets quarters of a second pass (op 2). */
static void advance(script_t *s, unsigned quarters)
{
    while (quarters > 0) {
        unsigned q = quarters > 63 ? 63 : quarters;
        uint8_t op = (uint8_t)(q << 2 | 2);
        put(s, &op, 1);
        s->real_ns += q * 250 * MW_NS_PER_MS;
        quarters -= q;
    }
}

static void op3(script_t *s, unsigned sub)
{
    uint8_t op = (uint8_t)(sub << 2 | 3);
    put(s, &op, 1);
}

/* A sample with a bit of everything: functions, peers, occupancy, density, a long call. */
static void full_sample(tm_msg_t *m, const char *job, uint32_t rank, uint32_t size, uint64_t w,
                        uint64_t real_ns)
{
    tm_sample(m, job, rank, w, real_ns);
    tm_add_fn(m, fx_fn(0), 10, 50000, 1000, 20000, 800);
    tm_add_fn(m, fx_fn(1), 3, 3000, 500, 1500, 3 * 4096);
    tm_add_peer_fn(m, (rank + 1) % size, fx_fn(1), 3, 3 * 4096);
    /* A region and a call site (docs/regions.md): defined by rank 0 only, so that the other
     * ranks' entries take the fast decoder and the collector's "undefined" path. */
    if (rank == 0) {
        tm_add_region_def(m, 1, "seed_region", 1);
        tm_add_site_def(m, 1, "/seed/app", 0x40, "main", "seed.c", 12);
    }
    tm_add_region(m, 1, 2, 40000, 30000, 20000);
    tm_add_site(m, 1, fx_fn(0), 10, 50000, 800, 20000);
    tm_add_occ(m, fx_fn(0), 2, 40000);
    tm_add_occ(m, fx_fn(1), 5, 3000);
    tm_add_density(m, fx_fn(0), 2, tm_bin(20000), 1, 10);
    tm_add_call(m, fx_fn(0), w * TM_WINDOW_NS + 1000, 20000, 800, -1);
}

static int write_seed(const char *dir, const char *name, const script_t *s)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(s->buf, 1, s->n, f) != s->n || fclose(f) != 0) {
        fprintf(stderr, "mw-fuzz-seeds: cannot write %s\n", path);
        return -1;
    }
    return 0;
}

/* ---- fuzz_recording, fuzz_feed, fuzz_steer ------------------------------------------------ */

/* A 2-byte little-endian length and the bytes (the input format of fuzz_feed and fuzz_steer). */
static void put_lp(script_t *s, const void *p, size_t n)
{
    if (n > 0xffff)
        abort();
    uint8_t hdr[2] = {(uint8_t)n, (uint8_t)(n >> 8)};
    put(s, hdr, 2);
    put(s, p, n);
}

/* A job of `size` ranks run through the collector core with a recording open: hellos, `windows`
 * windows of full samples, a rejected frame, the byes, then the recording is closed. */
static int write_recording(const char *path, uint32_t size, uint64_t windows)
{
    fx_t *f = fx_new();
    f->c->record = mw__record_open(path, &f->opt, fx_wall_clock());
    if (!f->c->record) {
        fprintf(stderr, "mw-fuzz-seeds: cannot record to %s\n", path);
        fx_free(f);
        return -1;
    }
    static tm_msg_t m;
    fx_hellos(f, "rec", size);
    for (uint64_t w = 0; w < windows; w++) {
        for (uint32_t r = 0; r < size; r++) {
            full_sample(&m, "rec", r, size, FX_W0 + w, f->now.real_ns);
            fx_feed(f, &m);
        }
        fx_advance(f, TM_WINDOW_NS / MW_NS_PER_MS);
    }
    tm_hello(&m, "rec", size + 3, size, f->now.real_ns); /* rejected, still recorded */
    fx_feed(f, &m);
    for (uint32_t r = 0; r < size; r++) {
        tm_bye(&m, "rec", r);
        fx_feed(f, &m);
    }
    fx_advance(f, 5000);
    mw__record_close(f->c->record);
    f->c->record = NULL;
    fx_free(f);
    return 0;
}

/* A copy of the first n - cut bytes of a file. */
static int write_torn(const char *from, const char *to, long cut)
{
    FILE *in = fopen(from, "rb");
    if (!in)
        return -1;
    static uint8_t buf[1 << 22];
    size_t n = fread(buf, 1, sizeof buf, in);
    fclose(in);
    if ((long)n <= cut)
        return -1;
    FILE *out = fopen(to, "wb");
    if (!out || fwrite(buf, 1, n - (size_t)cut, out) != n - (size_t)cut || fclose(out) != 0)
        return -1;
    return 0;
}

/* The job, windows, steps and events of a recording as one fuzz_feed input. */
static int write_feed(const char *recording, const char *dir, const char *name)
{
    char err[256];
    mw_rec_reader_t *r = mw_rec_reader_open(recording, err, sizeof err);
    if (!r) {
        fprintf(stderr, "mw-fuzz-seeds: %s\n", err);
        return -1;
    }
    static script_t s;
    memset(&s, 0, sizeof s);
    const Mpiwatch__Record *rec;
    unsigned windows = 0;
    while (mw_rec_reader_next(r, &rec, NULL, err, sizeof err) == 1) {
        Mpiwatch__Feed feed = MPIWATCH__FEED__INIT;
        switch (rec->body_case) {
        case MPIWATCH__RECORD__BODY_JOB:
            feed.body_case = MPIWATCH__FEED__BODY_JOB;
            feed.job = rec->job;
            break;
        case MPIWATCH__RECORD__BODY_WINDOW:
            if (windows++ >= 8) /* a few windows: the seed stays small */
                continue;
            feed.body_case = MPIWATCH__FEED__BODY_WINDOW;
            feed.window = rec->window;
            break;
        case MPIWATCH__RECORD__BODY_STEP:
            feed.body_case = MPIWATCH__FEED__BODY_STEP;
            feed.step = rec->step;
            break;
        case MPIWATCH__RECORD__BODY_EVENT:
            feed.body_case = MPIWATCH__FEED__BODY_EVENT;
            feed.event = rec->event;
            break;
        default:
            continue;
        }
        size_t n = mpiwatch__feed__get_packed_size(&feed);
        uint8_t *buf = malloc(n ? n : 1);
        if (!buf)
            abort();
        mpiwatch__feed__pack(&feed, buf);
        if (s.n + 2 + n <= sizeof s.buf)
            put_lp(&s, buf, n);
        free(buf);
    }
    mw_rec_reader_close(r);
    /* Two events the viewer parses (a rule firing, the steering message it sent). */
    Mpiwatch__JobEvent ev = MPIWATCH__JOB_EVENT__INIT;
    Mpiwatch__Feed feed = MPIWATCH__FEED__INIT;
    feed.body_case = MPIWATCH__FEED__BODY_EVENT;
    feed.event = &ev;
    const char *kinds[] = {"rule", "steer"};
    const char *details[] = {"rule=slow metric=mpi_fraction scope=rank value=0.8 window=3 rank=1 "
                             "node=node000",
                             "rebalance=1 ranks 1"};
    for (int i = 0; i < 2; i++) {
        ev.kind = (char *)kinds[i];
        ev.detail = (char *)details[i];
        ev.real_ns = FX_REAL_NS + 300 * MW_NS_PER_MS;
        uint8_t buf[512];
        size_t n = mpiwatch__feed__get_packed_size(&feed);
        if (n > sizeof buf)
            abort();
        mpiwatch__feed__pack(&feed, buf);
        put_lp(&s, buf, n);
    }
    if (windows == 0) {
        fprintf(stderr, "mw-fuzz-seeds: %s has no window\n", recording);
        return -1;
    }
    return write_seed(dir, name, &s);
}

static void steer(script_t *s, const char *job, const char *key, const char *value,
                  const uint32_t *ranks, size_t n_ranks)
{
    Mpiwatch__Steer m = MPIWATCH__STEER__INIT;
    m.seq = 1;
    m.job = (char *)job;
    m.key = (char *)key;
    m.value = (char *)value;
    m.ranks = (uint32_t *)ranks;
    m.n_ranks = n_ranks;
    uint8_t buf[8192];
    size_t n = mpiwatch__steer__get_packed_size(&m);
    if (n > sizeof buf)
        abort();
    mpiwatch__steer__pack(&m, buf);
    put_lp(s, buf, n);
}

static int write_steer_seeds(const char *dir)
{
    static script_t s;
    static const uint32_t r0[] = {0}, r13[] = {1, 3}, many[] = {5, 4, 3, 2, 1, 0};
    int rc = 0;
    memset(&s, 0, sizeof s);
    steer(&s, "", "rebalance", "1", NULL, 0);
    steer(&s, "", "my.key-2_x", "a value with spaces", r0, 1);
    steer(&s, "", "other", "not for rank 0", r13, 2);
    steer(&s, "another-job", "k", "v", NULL, 0);
    rc |= write_seed(dir, "app", &s);
    memset(&s, 0, sizeof s);
    steer(&s, "", "mpiwatch.pause", "", NULL, 0);
    steer(&s, "", "mpiwatch.resume", "", many, 6);
    rc |= write_seed(dir, "pause", &s);
    memset(&s, 0, sizeof s);
    steer(&s, "", "mpiwatch.capture", "3", NULL, 0);
    steer(&s, "", "mpiwatch.capture", "2@170000000000", NULL, 0);
    rc |= write_seed(dir, "capture", &s);
    memset(&s, 0, sizeof s);
    steer(&s, "", "mpiwatch.window", "200@17000000999", NULL, 0);
    steer(&s, "", "mpiwatch.window", "50@17000001999", r0, 1);
    steer(&s, "", "mpiwatch.window", "100@1", NULL, 0);
    rc |= write_seed(dir, "window", &s);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s INGEST_DIR RECORDING_DIR FEED_DIR STEER_DIR\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    static script_t s;
    static tm_msg_t m;
    int rc = 0;

    /* A 4-rank job: hellos, six windows from every rank, time passing, byes. */
    memset(&s, 0, sizeof s);
    s.real_ns = FX_REAL_NS;
    for (uint32_t r = 0; r < 4; r++) {
        tm_hello(&m, "fz", r, 4, s.real_ns);
        frame(&s, &m, r & 1);
    }
    for (uint64_t w = 0; w < 6; w++) {
        for (uint32_t r = 0; r < 4; r++) {
            full_sample(&m, "fz", r, 4, FX_W0 + w, s.real_ns);
            frame(&s, &m, (r + w) & 1);
        }
        advance(&s, 1);
    }
    op3(&s, 3);
    for (uint32_t r = 0; r < 4; r++) {
        tm_bye(&m, "fz", r);
        frame(&s, &m, 0);
    }
    rc |= write_seed(dir, "job", &s);

    /* Two ranks, one goes quiet: windows close by lateness, the job ends by silence. */
    memset(&s, 0, sizeof s);
    s.real_ns = FX_REAL_NS;
    for (uint32_t r = 0; r < 2; r++) {
        tm_hello(&m, "quiet", r, 2, s.real_ns);
        frame(&s, &m, 0);
    }
    for (uint64_t w = 0; w < 3; w++) {
        full_sample(&m, "quiet", 0, 2, FX_W0 + w, s.real_ns);
        frame(&s, &m, 1);
    }
    op3(&s, 2); /* the first window's lateness deadline */
    full_sample(&m, "quiet", 1, 2, FX_W0, s.real_ns);
    frame(&s, &m, 0); /* late */
    advance(&s, 44);  /* past the silence timeout */
    rc |= write_seed(dir, "silence", &s);

    /* One message rejected for each of a few reasons, then a SIGTERM-style finish. */
    memset(&s, 0, sizeof s);
    s.real_ns = FX_REAL_NS;
    tm_hello(&m, "bad", 0, 2, s.real_ns);
    frame(&s, &m, 0);
    tm_hello(&m, "bad", 5, 2, s.real_ns); /* rank_range */
    frame(&s, &m, 0);
    tm_sample(&m, "bad", 0, FX_W0, s.real_ns);
    m.env.version = 2; /* version */
    frame(&s, &m, 0);
    tm_sample(&m, "bad", 0, FX_W0, s.real_ns);
    tm_add_fn(&m, MW_FN_COUNT, 1, 10, 10, 10, 0); /* bad_field */
    frame(&s, &m, 1);
    tm_sample(&m, "bad", 0, FX_W0 + 365 * 864000ull, s.real_ns); /* timestamp, a year off */
    frame(&s, &m, 1);
    tm_sample(&m, "bad", 0, FX_W0, s.real_ns);
    tm_add_peer(&m, 1, 1, 1);
    m.sample.n_peer_bytes = 0; /* unequal parallel arrays: bad_field */
    frame(&s, &m, 1);
    full_sample(&m, "bad", 0, 2, FX_W0, s.real_ns);
    frame(&s, &m, 0);
    op3(&s, 0); /* the same bytes as two frames would be multipart */
    put(&s, "\x02\x00\x08\x01", 4);
    op3(&s, 1);
    rc |= write_seed(dir, "rejects", &s);

    /* A parent of one aggregator (docs/partial.md): the ranks' hellos, the aggregator's
     * AggState, then its partials of four windows (testpartial.h: a real aggregator's). */
    {
        enum { RANKS = 8, WINDOWS = 4 };
        tp_frame_t f[WINDOWS + 1];
        size_t nf = tp_aggregator_frames("fzp", RANKS, WINDOWS, 2, f, WINDOWS + 1);
        if (nf != WINDOWS + 1) {
            fprintf(stderr, "mw-fuzz-seeds: the aggregator wrote no partials\n");
            return 1;
        }
        memset(&s, 0, sizeof s);
        s.real_ns = FX_REAL_NS;
        for (uint32_t r = 0; r < RANKS; r++) {
            tm_hello(&m, "fzp", r, RANKS, s.real_ns);
            frame(&s, &m, 0);
        }
        for (size_t i = 0; i < nf; i++)
            frame_bytes(&s, f[i].b, f[i].n, (int)(i & 1));
        advance(&s, 1);
        tp_frames_free(f, nf);
        rc |= write_seed(dir, "partials", &s);
    }

    /* Recordings: a small job, and one with more windows than an index frame covers. */
    char rec1[4096], rec2[4096], torn[4096];
    snprintf(rec1, sizeof rec1, "%s/job4", argv[2]);
    snprintf(rec2, sizeof rec2, "%s/job2-long", argv[2]);
    snprintf(torn, sizeof torn, "%s/job4-torn", argv[2]);
    rc |= write_recording(rec1, 4, 6);
    rc |= write_recording(rec2, 2, 80);
    rc |= write_torn(rec1, torn, 7);
    rc |= write_feed(rec1, argv[3], "job4");
    rc |= write_steer_seeds(argv[4]);
    return rc ? 1 : 0;
}
