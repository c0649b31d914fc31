/* reqmap.c: per-thread open-addressing map MPI_Request value -> pending record index.
 * Linear probing, power-of-two table, backward-shift deletion (no tombstones).
 * Keys mimic Open MPI request handles: pointers to ~256 B objects from a LIFO free list.
 * Measures ns per (insert at Isend + lookup&delete at Wait) with K requests outstanding,
 * FIFO and random completion order, vs an empty loop doing the same key bookkeeping.
 * build: gcc -O2 -std=gnu11 -o reqmap reqmap.c
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    uintptr_t key;
    uint32_t rec;
    uint32_t pad;
} ent_t;
typedef struct {
    ent_t *e;
    unsigned mask, n;
} map_t;

static inline unsigned h(uintptr_t k, unsigned mask)
{
    return (unsigned)(((uint64_t)k * 0x9E3779B97F4A7C15ull) >> 40) & mask;
}

static inline int map_put(map_t *m, uintptr_t k, uint32_t rec)
{
    if (m->n * 4 >= (m->mask + 1) * 3)
        return -1; /* full: caller counts it as untracked */
    unsigned i = h(k, m->mask);
    while (m->e[i].key) {
        if (m->e[i].key == k) {
            m->e[i].rec = rec;
            return 0;
        }
        i = (i + 1) & m->mask;
    }
    m->e[i].key = k;
    m->e[i].rec = rec;
    m->n++;
    return 0;
}
static inline int64_t map_take(map_t *m, uintptr_t k)
{
    unsigned i = h(k, m->mask);
    for (;;) {
        if (!m->e[i].key)
            return -1;
        if (m->e[i].key == k)
            break;
        i = (i + 1) & m->mask;
    }
    uint32_t rec = m->e[i].rec;
    /* backward-shift delete */
    unsigned j = i;
    for (;;) {
        j = (j + 1) & m->mask;
        if (!m->e[j].key)
            break;
        unsigned home = h(m->e[j].key, m->mask);
        /* move e[j] to the hole i if home is not cyclically in (i, j] */
        if (((j - home) & m->mask) >= ((j - i) & m->mask)) {
            m->e[i] = m->e[j];
            i = j;
        }
    }
    m->e[i].key = 0;
    m->n--;
    return rec;
}

static double ns_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}
static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static uint64_t rng = 88172645463325252ull;
static inline uint64_t xr(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* pool of request objects, LIFO free list like ompi_free_list */
#define POOL 8192
static char *objs[POOL];
static int freelist[POOL], nfree;

static volatile uint64_t sink;

/* one experiment: K outstanding; n completions; mode 0 FIFO, 1 random; use_map 0/1 */
static double run(map_t *m, int K, long n, int random_order, int use_map)
{
    int live[4096];
    int head = 0, cnt = 0;
    uint64_t acc = 0;
    /* fill K */
    for (int i = 0; i < K; i++) {
        int o = freelist[--nfree];
        live[(head + cnt++) % 4096] = o;
        if (use_map)
            map_put(m, (uintptr_t)objs[o], (uint32_t)i);
    }
    double a = ns_now();
    for (long it = 0; it < n; it++) {
        int pos = random_order ? (int)(xr() % (unsigned)cnt) : 0;
        int idx = (head + pos) % 4096;
        int o = live[idx];
        if (use_map)
            acc += (uint64_t)map_take(m, (uintptr_t)objs[o]);
        else
            acc += (uint64_t)(uintptr_t)objs[o];
        /* remove from live: swap with head, advance head */
        live[idx] = live[head % 4096];
        head = (head + 1) % 4096;
        cnt--;
        freelist[nfree++] = o;
        int o2 = freelist[--nfree];
        live[(head + cnt++) % 4096] = o2;
        if (use_map)
            map_put(m, (uintptr_t)objs[o2], (uint32_t)it);
        else
            acc += (uint64_t)(uintptr_t)objs[o2];
    }
    double t = (ns_now() - a) / (double)n;
    while (cnt) {
        int o = live[head % 4096];
        head++;
        cnt--;
        if (use_map)
            map_take(m, (uintptr_t)objs[o]);
        freelist[nfree++] = o;
    }
    sink = acc;
    return t;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 2000000;
    int R = argc > 2 ? atoi(argv[2]) : 9;
    for (int i = 0; i < POOL; i++) {
        objs[i] = aligned_alloc(64, 256);
        freelist[nfree++] = POOL - 1 - i;
    }
    int Ks[] = {1, 8, 64, 512, 2048};
    printf("ns per Isend-insert + Wait-lookup&delete (median of %d, %ld ops; table sized 4x max "
           "live, load <= 0.75)\n",
           R, n);
    for (unsigned k = 0; k < sizeof Ks / sizeof *Ks; k++) {
        int K = Ks[k];
        unsigned size = 64;
        while (size < (unsigned)K * 4)
            size <<= 1;
        map_t m = {calloc(size, sizeof(ent_t)), size - 1, 0};
        for (int ro = 0; ro < 2; ro++) {
            double b[32], w[32];
            for (int r = 0; r < R; r++) {
                b[r] = run(&m, K, n, ro, 0);
                w[r] = run(&m, K, n, ro, 1);
            }
            qsort(b, (size_t)R, sizeof(double), cmpd);
            qsort(w, (size_t)R, sizeof(double), cmpd);
            printf("  K=%-5d table %5u slots (%6zu B)  %-6s  baseline %6.2f  with map %6.2f  map "
                   "cost %+6.2f ns\n",
                   K, size, size * sizeof(ent_t), ro ? "random" : "FIFO", b[R / 2], w[R / 2],
                   w[R / 2] - b[R / 2]);
        }
        free(m.e);
    }
    return 0;
}
