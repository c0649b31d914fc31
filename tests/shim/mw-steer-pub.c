/* mw-steer-pub: a rogue steering publisher for the shim's tests (tests/shim/steer_crafted.sh).
 *
 * mw-steer-pub ENDPOINT JOB SCRIPT binds an XPUB socket (no CURVE) where the ranks'
 * MPIWATCH_STEER points, the way anyone who can reach an unauthenticated steering endpoint
 * could, and plays SCRIPT, one action per line, fields separated by tabs:
 *   subs N             wait (at most 60 s) until N more subscriptions to "steer" arrived
 *   steer KEY VALUE [RANKS [JOB]]   a Steer; RANKS "-" for none, a comma list otherwise
 *   wrap MS LEN        mpiwatch.window=MS@K with K (< 10^15) chosen so that K x LEN ms (LEN:
 *                      the job's window length now, which places K) wraps around 2^64 to
 *                      2..5 s after now (CLOCK_REALTIME, the ranks' global time base): the
 *                      attack of issue 12
 *   frame N            the topic "steer" and a frame of N bytes of 0xff (N = 0: topic alone)
 *   topic T            a one-frame message on topic T (not "steer" exactly)
 *   sleep MS
 * It prints what it did on stdout and exits 0, or 1 when a wait timed out or a line is bad.
 * XPUB_VERBOSE makes every subscription arrive, also a second one from a rank that reconnected,
 * which is how a test knows that a rank came back.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "mw_proto.h"

static void *pub;
static const char *job;

static uint64_t now_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Counts subscription messages without waiting more than `ms`. */
static unsigned take_subs(int ms)
{
    unsigned n = 0;
    zmq_pollitem_t it = {.socket = pub, .events = ZMQ_POLLIN};
    while (zmq_poll(&it, 1, ms) > 0) {
        char b[64];
        int len = zmq_recv(pub, b, sizeof b, 0);
        if (len >= 6 && b[0] == 1 && memcmp(b + 1, "steer", 5) == 0)
            n++;
        ms = 0;
    }
    return n;
}

static int send2(const void *a, size_t al, const void *b, size_t bl)
{
    if (zmq_send(pub, a, al, ZMQ_SNDMORE) != (int)al || zmq_send(pub, b, bl, 0) != (int)bl) {
        fprintf(stderr, "mw-steer-pub: send: %s\n", zmq_strerror(zmq_errno()));
        return -1;
    }
    return 0;
}

static int send_steer(const char *key, const char *value, const char *ranks, const char *j)
{
    static uint64_t seq;
    uint32_t rk[8192];
    size_t n = 0;
    if (ranks && strcmp(ranks, "-") != 0) {
        const char *p = ranks;
        while (*p && n < sizeof rk / sizeof rk[0]) {
            char *end;
            rk[n++] = (uint32_t)strtoul(p, &end, 10);
            p = *end == ',' ? end + 1 : end;
            if (end == p && *p)
                return -1;
        }
    }
    Mpiwatch__Steer m = MPIWATCH__STEER__INIT;
    m.seq = ++seq;
    m.job = (char *)(j ? j : job);
    m.key = (char *)key;
    m.value = (char *)value;
    m.n_ranks = n;
    m.ranks = rk;
    size_t len = mpiwatch__steer__get_packed_size(&m);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf)
        return -1;
    mpiwatch__steer__pack(&m, buf);
    int rc = send2("steer", 5, buf, len);
    free(buf);
    printf("sent %s=%.60s%s (%zu ranks, %zu bytes)\n", key, value, strlen(value) > 60 ? "..." : "",
           n, len);
    return rc;
}

/* K < 10^15 with K x len = T (mod 2^64), T in [lo, lo + 3 s), and a real wrap (see above). */
static uint64_t wrapping_k(uint64_t len, uint64_t lo)
{
    unsigned sh = (unsigned)__builtin_ctzll(len);
    uint64_t odd = len >> sh, inv = odd;
    for (int i = 0; i < 6; i++)
        inv *= 2 - odd * inv;
    const uint64_t step = 1ull << sh, mask = UINT64_MAX >> sh;
    for (uint64_t t = (lo + step - 1) & ~(step - 1); t < lo + 3000000000ull; t += step) {
        uint64_t k = ((t >> sh) * inv) & mask;
        if (k < 1000000000000000ull && k > UINT64_MAX / len)
            return k;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: mw-steer-pub ENDPOINT JOB SCRIPT\n");
        return 2;
    }
    job = argv[2];
    FILE *f = fopen(argv[3], "r");
    void *ctx = zmq_ctx_new();
    pub = zmq_socket(ctx, ZMQ_XPUB);
    int one = 1, zero = 0, hwm = 100000;
    zmq_setsockopt(pub, ZMQ_XPUB_VERBOSE, &one, sizeof one);
    zmq_setsockopt(pub, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt(pub, ZMQ_SNDHWM, &hwm, sizeof hwm);
    if (!f || zmq_bind(pub, argv[1]) != 0) {
        fprintf(stderr, "mw-steer-pub: cannot open %s or bind %s\n", argv[3], argv[1]);
        return 1;
    }
    printf("bound %s\n", argv[1]);
    fflush(stdout);
    static char line[1 << 16];
    unsigned have = 0; /* subscriptions seen and not yet waited for */
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *fld[6] = {0};
        int nf = 0;
        for (char *p = line; p && nf < 6;) {
            fld[nf++] = p;
            p = strchr(p, '\t');
            if (p)
                *p++ = 0;
        }
        if (nf == 0 || !fld[0][0] || fld[0][0] == '#')
            continue;
        have += take_subs(0);
        if (strcmp(fld[0], "subs") == 0 && nf == 2) {
            unsigned want = (unsigned)strtoul(fld[1], NULL, 10);
            uint64_t end = now_ns(CLOCK_MONOTONIC) + 60000000000ull;
            while (have < want && now_ns(CLOCK_MONOTONIC) < end)
                have += take_subs(100);
            printf("subscriptions: %u of %u\n", have < want ? have : want, want);
            if (have < want)
                rc = 1;
            else
                have -= want;
        } else if (strcmp(fld[0], "steer") == 0 && nf >= 3) {
            rc = send_steer(fld[1], fld[2], nf > 3 ? fld[3] : NULL, nf > 4 ? fld[4] : NULL);
        } else if (strcmp(fld[0], "wrap") == 0 && nf == 3) {
            uint64_t ms = strtoull(fld[1], NULL, 10), len = strtoull(fld[2], NULL, 10);
            uint64_t k = wrapping_k(len * 1000000ull, now_ns(CLOCK_REALTIME) + 2000000000ull);
            char v[64];
            snprintf(v, sizeof v, "%llu@%llu", (unsigned long long)ms, (unsigned long long)k);
            rc = k ? send_steer("mpiwatch.window", v, NULL, NULL) : -1;
        } else if (strcmp(fld[0], "frame") == 0 && nf == 2) {
            size_t n = strtoul(fld[1], NULL, 10);
            char *b = malloc(n ? n : 1);
            if (!b)
                return 1;
            memset(b, 0xff, n);
            rc = n ? send2("steer", 5, b, n) : (zmq_send(pub, "steer", 5, 0) == 5 ? 0 : -1);
            free(b);
            printf("sent a frame of %zu bytes\n", n);
        } else if (strcmp(fld[0], "topic") == 0 && nf == 2) {
            rc = zmq_send(pub, fld[1], strlen(fld[1]), 0) >= 0 ? 0 : -1;
            printf("sent topic %s\n", fld[1]);
        } else if (strcmp(fld[0], "sleep") == 0 && nf == 2) {
            long ms = strtol(fld[1], NULL, 10);
            struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
            nanosleep(&ts, NULL);
        } else {
            fprintf(stderr, "mw-steer-pub: bad line: %s\n", fld[0]);
            rc = 1;
        }
        fflush(stdout);
    }
    /* Let the last messages leave before the socket closes. */
    struct timespec ts = {0, 300000000};
    nanosleep(&ts, NULL);
    fclose(f);
    zmq_close(pub);
    zmq_ctx_term(ctx);
    return rc ? 1 : 0;
}
