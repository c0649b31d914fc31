/* seeds.c: writes the seed corpus of fuzz_ingest from valid messages.
 *
 *   mw-fuzz-seeds DIR
 *
 * Each seed is a script in fuzz_ingest's input format (see fuzz_ingest.c) built from the
 * messages of testmsg.c, so that the fuzzer starts from inputs that get past decoding and
 * validation: a whole job with windows that close, a job that ends by silence, late samples,
 * and a few messages rejected for one reason each. Generated at build time so that the seeds
 * follow the function table and the proto instead of being binaries checked in.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

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

/* A frame op (op 0: arena decoding, op 1: malloc decoding). */
static void frame(script_t *s, const tm_msg_t *m, int malloc_decode)
{
    uint8_t *msg;
    size_t n = tm_pack(m, &msg);
    if (n > 0xffff)
        abort();
    uint8_t hdr[3] = {(uint8_t)(malloc_decode ? 1 : 0), (uint8_t)n, (uint8_t)(n >> 8)};
    put(s, hdr, 3);
    put(s, msg, n);
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
    tm_add_peer(m, (rank + 1) % size, 3, 3 * 4096);
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

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
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

    return rc ? 1 : 0;
}
