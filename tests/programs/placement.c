/* placement.c: prints where each rank is bound, as hwloc sees it from inside the rank.
 *
 * DESIGN: the placement test (tests/topology/placement.sh) compares what libmpiwatch reported
 * for each rank with what the rank itself reads through hwloc_get_cpubind(), the call behind
 * `hwloc-bind --get` (the process's binding), under several mpirun --map-by / --bind-to
 * variants. Each rank prints one
 * line "placement: rank R of N cpuset LIST bound B pu P host H" (LIST in hwloc's list syntax,
 * B 1 when the binding is narrower than the machine, P the PU it runs on now); rank 0 then
 * prints a success line once every rank has passed a barrier, so the output is complete.
 */
#define _GNU_SOURCE
#include <hwloc.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char list[256] = "?", host[256] = "";
    int bound = -1;
    gethostname(host, sizeof host - 1);
    hwloc_topology_t topo;
    int ok = hwloc_topology_init(&topo) == 0;
#if HWLOC_API_VERSION >= 0x00020100
    /* hwloc's x86 backend binds this thread to every PU in turn to read CPUID: that would
     * change, for a moment, the binding libmpiwatch is reading. */
    if (ok)
        hwloc_topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "x86");
#endif
    if (ok && hwloc_topology_load(topo) == 0) {
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        if (set && hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0) {
            hwloc_bitmap_list_snprintf(list, sizeof list, set);
            bound = !hwloc_bitmap_isincluded(hwloc_topology_get_topology_cpuset(topo), set);
        }
        hwloc_bitmap_free(set);
        hwloc_topology_destroy(topo);
    }
    /* One line per rank, written in rank order so the lines never interleave. */
    for (int r = 0; r < size; r++) {
        if (r == rank) {
            printf("placement: rank %d of %d cpuset %s bound %d pu %d host %s\n", rank, size, list,
                   bound, sched_getcpu(), host);
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank == 0)
        printf("placement: %d ranks, ok\n", size);
    MPI_Finalize();
    return 0;
}
