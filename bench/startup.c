/* startup.c: what the preloaded library costs a rank's start (docs/install.md, "What the
 * library loads"), run by bench/run-startup.sh with and without LD_PRELOAD.
 *
 * DESIGN: the first thing main does is read the clock; MPI_Init follows at once, then
 * MPI_Finalize. It prints one line: the shared libraries mapped into the process after
 * MPI_Init (distinct .so files in /proc/self/maps, the ones the MPI library dlopen'ed
 * included), the time MPI_Init took (where the library sets itself up: topology, sockets, its
 * sender thread) and the time MPI_Finalize took (where it flushes and stops). The time spent
 * before main (the dynamic loader mapping the libraries) is measured by the script with
 * LD_DEBUG=statistics, and the whole rank by the wall time of mpirun -n 1.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Distinct shared objects mapped into this process. */
static int count_libraries(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return -1;
    static char seen[512][256];
    int n = 0;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        char *path = strchr(line, '/');
        if (!path || !strstr(path, ".so"))
            continue;
        path[strcspn(path, "\n")] = '\0';
        int dup = 0;
        for (int i = 0; i < n && !dup; i++)
            dup = strcmp(seen[i], path) == 0;
        if (!dup && n < 512)
            snprintf(seen[n++], sizeof seen[0], "%s", path);
    }
    fclose(f);
    return n;
}

int main(int argc, char **argv)
{
    double t0 = now_ms();
    MPI_Init(&argc, &argv);
    double t1 = now_ms();
    int libs = count_libraries();
    double t2 = now_ms();
    MPI_Finalize();
    double t3 = now_ms();
    printf("libraries=%d init_ms=%.3f finalize_ms=%.3f\n", libs, t1 - t0, t3 - t2);
    return 0;
}
