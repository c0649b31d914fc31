/* trace-rate: a steady rate of timed MPI calls, and the resident memory it leaves, for the
 * memory figures of docs/trace.md ("Flight recorder, plans and captures"). Not a test.
 *
 * mw-trace-rate RATE SECONDS: every rank calls MPI_Iprobe (nothing pending) RATE times per
 * second, in bursts of RATE / 1000 every millisecond, for SECONDS, then prints on rank 0 its
 * resident set size (VmRSS, KiB) after MPI_Init and at the end, and the calls made. Run it
 * with and without libmpiwatch.so and with MPIWATCH_TRACE=on / off; with MPIWATCH_VERBOSE=1 the
 * library prints its own figures at MPI_Finalize (rings, flight recorder peak, sender buffers).
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            v = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return v;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: mw-trace-rate RATE SECONDS\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long rate = atol(argv[1]), burst = rate / 1000 > 0 ? rate / 1000 : 1;
    double secs = atof(argv[2]);
    long rss0 = rss_kib(), calls = 0;
    double t0 = now_s(), next = t0;
    while (now_s() - t0 < secs) {
        for (long i = 0; i < burst; i++) {
            int flag;
            MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            calls++;
        }
        next += 0.001;
        double d = next - now_s();
        if (d > 0) {
            struct timespec ts = {0, (long)(d * 1e9)};
            nanosleep(&ts, NULL);
        }
    }
    long rss1 = rss_kib();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("trace-rate: rate %ld calls %ld rss_init_kib %ld rss_end_kib %ld growth_kib %ld\n",
               rate, calls, rss0, rss1, rss1 - rss0);
    MPI_Finalize();
    return 0;
}
