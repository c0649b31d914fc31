/* commid.c: cost of finding a communicator's job-wide id on the hot path:
 * MPI_Comm_get_attr with a keyval vs a per-thread 8-entry direct-mapped cache keyed by handle.
 * build: mpicc -O2 -o commid commid.c ; run: mpirun -np 1 ./commid */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void)
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
typedef struct {
    uintptr_t h;
    uint32_t id;
} ce_t;
static __thread ce_t cache[8];
static int kv;
__attribute__((noinline)) static uint32_t slow_lookup(MPI_Comm c)
{
    void *v;
    int f;
    MPI_Comm_get_attr(c, kv, &v, &f);
    return f ? (uint32_t)(uintptr_t)v : 0;
}
static inline uint32_t cached(MPI_Comm c)
{
    uintptr_t h = (uintptr_t)c;
    ce_t *e = &cache[(h * 0x9E3779B97F4A7C15ull) >> 61];
    if (__builtin_expect(e->h == h, 1))
        return e->id;
    uint32_t id = slow_lookup(c);
    e->h = h;
    e->id = id;
    return id;
}
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kv, NULL);
    MPI_Comm cs[4];
    cs[0] = MPI_COMM_WORLD;
    for (int i = 1; i < 4; i++)
        MPI_Comm_dup(MPI_COMM_WORLD, &cs[i]);
    for (int i = 0; i < 4; i++)
        MPI_Comm_set_attr(cs[i], kv, (void *)(uintptr_t)(0x100 + i));
    long n = 5000000;
    int R = 15;
    double a[4][15];
    static uint32_t byf[1024];
    for (int i = 0; i < 4; i++)
        byf[MPI_Comm_c2f(cs[i])] = 0x100 + i;
    volatile uint32_t sink = 0;
    for (int r = 0; r < R; r++) {
        double t = now();
        for (long i = 0; i < n; i++)
            sink += i & 1;
        a[0][r] = (now() - t) / n;
        t = now();
        for (long i = 0; i < n; i++)
            sink += slow_lookup(cs[i & 3]);
        a[1][r] = (now() - t) / n;
        t = now();
        for (long i = 0; i < n; i++)
            sink += cached(cs[i & 3]);
        a[2][r] = (now() - t) / n;
        t = now();
        for (long i = 0; i < n; i++) {
            int f = PMPI_Comm_c2f(cs[i & 3]);
            sink += (unsigned)f < 1024 ? byf[f] : slow_lookup(cs[i & 3]);
        }
        a[3][r] = (now() - t) / n;
    }
    for (int k = 0; k < 4; k++)
        qsort(a[k], R, sizeof(double), cmpd);
    printf("comm id lookup, 4 communicators round robin, median of %d x %ld: loop %.2f ns, "
           "MPI_Comm_get_attr %.2f ns (+%.2f), 8-entry cache %.2f ns (+%.2f), Comm_c2f-indexed "
           "table %.2f ns (+%.2f)\n",
           R, n, a[0][R / 2], a[1][R / 2], a[1][R / 2] - a[0][R / 2], a[2][R / 2],
           a[2][R / 2] - a[0][R / 2], a[3][R / 2], a[3][R / 2] - a[0][R / 2]);
    MPI_Finalize();
    return 0;
}
