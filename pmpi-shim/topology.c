/* topology.c: where this rank runs and what its node is made of, for its hello (hwloc).
 *
 * DESIGN: two steps. Inside MPI_Init (mw__topology_init) the rank learns its node and whether
 * it is the one rank of that node that reports the node's hardware: with MPIWATCH_NODES=N the
 * ranks are cut into N contiguous blocks (emulated nodes "HOST-n0".."HOST-n{N-1}", the first
 * rank of each block reports); otherwise the node is the host and the rank with local rank 0
 * in MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) reports. The split is done whatever the
 * setting, so the collective calls of MPI_Init do not depend on an environment variable that
 * might differ between ranks. If the split fails every rank reports, and the collector keeps
 * the first description of each node. Then on the sender thread, off the application's path
 * because loading the hwloc topology reads sysfs and takes milliseconds, mw__topology_place
 * reads the binding and, for the reporting rank, flattens the node's packages, NUMA nodes, L3
 * caches, cores and PUs (in depth-first order, so every object comes after its parent). The PU is
 * the one the application thread was on inside MPI_Init (sched_getcpu there), the binding that
 * thread's affinity there (sched_getaffinity, one system call); a rank whose binding covers the
 * whole node is "unbound" and reports that PU alone. An emulated node reports the whole real
 * machine: the ranks of every emulated node really run on it, so their PU numbers are valid on it.
 * Every hwloc failure leaves the fields unknown (-1, empty), never an error.
 */
#include "shim.h"

#include <hwloc.h>
#include <hwloc/glibc-sched.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct {
    int emulated;        /* MPIWATCH_NODES is in force */
    unsigned node;       /* emulated node index */
    int reporter;        /* this rank describes its node's hardware */
    cpu_set_t *init_set; /* the binding of the thread in MPI_Init, NULL if unknown */
    size_t init_set_size;
} T = {.reporter = 1};

/* The calling thread's CPU affinity, in a set large enough for the kernel's CPU count (the
 * fixed cpu_set_t stops at 1024 CPUs). One system call or a few, at init only. */
static void capture_binding(void)
{
    for (int ncpu = 1024; ncpu <= (1 << 20); ncpu *= 4) {
        size_t size = CPU_ALLOC_SIZE(ncpu);
        cpu_set_t *set = CPU_ALLOC(ncpu);
        if (!set)
            return;
        if (sched_getaffinity(0, size, set) == 0) {
            T.init_set = set;
            T.init_set_size = size;
            return;
        }
        CPU_FREE(set);
        if (errno != EINVAL)
            return;
    }
}

void mw__topology_init(MPI_Comm comm, int rank, int size, unsigned emulated_nodes)
{
    T.reporter = 1;
    capture_binding();
    MPI_Comm local = MPI_COMM_NULL;
    int local_rank = 0;
    if (PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local) == MPI_SUCCESS &&
        local != MPI_COMM_NULL) {
        if (PMPI_Comm_rank(local, &local_rank) == MPI_SUCCESS)
            T.reporter = local_rank == 0;
        PMPI_Comm_free(&local);
    } else {
        mw__log("MPI_Comm_split_type failed: every rank reports its node's hardware");
    }
    if (emulated_nodes > 0 && size > 0) {
        uint64_t n = emulated_nodes < (unsigned)size ? emulated_nodes : (unsigned)size;
        /* Contiguous, balanced blocks: rank r is on node floor(r * n / size). */
        T.emulated = 1;
        T.node = (unsigned)((uint64_t)rank * n / (uint64_t)size);
        T.reporter = rank == 0 || (uint64_t)(rank - 1) * n / (uint64_t)size != T.node;
    }
}

static unsigned topo_type(hwloc_obj_t o)
{
    switch (o->type) {
    case HWLOC_OBJ_PACKAGE:
        return 1;
    case HWLOC_OBJ_L3CACHE:
        return 2;
    case HWLOC_OBJ_CORE:
        return 3;
    case HWLOC_OBJ_PU:
        return 4;
    case HWLOC_OBJ_NUMANODE:
        return 5;
    default:
        return 0;
    }
}

static void topo_add(hwloc_obj_t o, unsigned type, int *parent, Mpiwatch__TopoObject *objs,
                     unsigned *n)
{
    if (*n >= MW_TOPO_MAX_OBJECTS)
        return;
    Mpiwatch__TopoObject *t = &objs[*n];
    mpiwatch__topo_object__init(t);
    t->type = type;
    t->parent = *parent;
    t->logical = o->logical_index;
    t->os_index = o->os_index;
    *parent = (int)(*n)++;
}

/* The NUMA nodes among o's memory children (hwloc 2 attaches them there, possibly behind
 * memory-side caches), at most `max`. */
static int numa_children(hwloc_obj_t o, hwloc_obj_t *out, int max)
{
    int k = 0;
    for (hwloc_obj_t m = o->memory_first_child; m && k < max; m = m->next_sibling) {
        if (m->type == HWLOC_OBJ_NUMANODE)
            out[k++] = m;
        else
            k += numa_children(m, out + k, max - k);
    }
    return k;
}

/* Appends o (if it is of a reported type) and then its subtree; the parent of an object is
 * its nearest reported ancestor. NUMA nodes, memory children in hwloc 2, become a level: a
 * NUMA node attached to o comes right after o, and o's children whose CPUs it covers go under
 * it (one NUMA node per package: package > NUMA > L3; a package split in sub-NUMA clusters:
 * each cluster's caches and cores under its NUMA node). A child covered by none of them (it
 * spans several) stays under o; a PU covered by two (memory of two kinds) goes under the
 * first, the one the rank's `numa` names. */
static void topo_walk(hwloc_obj_t o, int parent, Mpiwatch__TopoObject *objs, unsigned *n)
{
    unsigned type = topo_type(o);
    if (type)
        topo_add(o, type, &parent, objs, n);
    hwloc_obj_t numa[64];
    int numa_at[64], nn = numa_children(o, numa, 64);
    for (int i = 0; i < nn; i++) {
        numa_at[i] = parent;
        topo_add(numa[i], 5, &numa_at[i], objs, n);
    }
    for (hwloc_obj_t c = o->first_child; c; c = c->next_sibling) {
        int under = parent;
        for (int i = 0; i < nn; i++)
            if (c->cpuset && numa[i]->cpuset && !hwloc_bitmap_iszero(numa[i]->cpuset) &&
                hwloc_bitmap_isincluded(c->cpuset, numa[i]->cpuset)) {
                under = numa_at[i];
                break;
            }
        topo_walk(c, under, objs, n);
    }
}

/* The node's hardware as one allocation (message, objects, pointers), or NULL. */
static Mpiwatch__NodeTopology *topo_describe(hwloc_topology_t topo, const char *node)
{
    static const hwloc_obj_type_t types[] = {HWLOC_OBJ_PACKAGE, HWLOC_OBJ_L3CACHE, HWLOC_OBJ_CORE,
                                             HWLOC_OBJ_PU, HWLOC_OBJ_NUMANODE};
    size_t total = 0;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        int k = hwloc_get_nbobjs_by_type(topo, types[i]);
        total += k > 0 ? (size_t)k : 0;
    }
    if (total == 0 || total > MW_TOPO_MAX_OBJECTS) {
        mw__log("node topology of %zu objects not reported (limit %u)", total, MW_TOPO_MAX_OBJECTS);
        return NULL;
    }
    size_t name_len = strlen(node) + 1;
    unsigned char *mem = malloc(sizeof(Mpiwatch__NodeTopology) +
                                total * (sizeof(Mpiwatch__TopoObject) + sizeof(void *)) + name_len);
    if (!mem)
        return NULL;
    Mpiwatch__NodeTopology *nt = (Mpiwatch__NodeTopology *)mem;
    Mpiwatch__TopoObject *objs = (Mpiwatch__TopoObject *)(nt + 1);
    Mpiwatch__TopoObject **ptrs = (Mpiwatch__TopoObject **)(objs + total);
    char *name = (char *)(ptrs + total);
    memcpy(name, node, name_len);
    unsigned n = 0;
    topo_walk(hwloc_get_root_obj(topo), -1, objs, &n);
    for (unsigned i = 0; i < n; i++)
        ptrs[i] = &objs[i];
    mpiwatch__node_topology__init(nt);
    nt->node = name;
    nt->n_objects = n;
    nt->objects = ptrs;
    return nt;
}

static int ancestor_index(hwloc_topology_t topo, hwloc_obj_type_t type, hwloc_obj_t pu)
{
    hwloc_obj_t o = pu ? hwloc_get_ancestor_obj_by_type(topo, type, pu) : NULL;
    return o ? (int)o->logical_index : -1;
}

/* The binding the thread that called MPI_Init had there, else the process's now. Not the
 * process's first: it is read later, on Linux it is the union over all threads, and anything
 * that moves one thread for a moment (hwloc's own x86 backend in the application, an OpenMP
 * runtime placing its threads) changes it. */
static int read_binding(hwloc_topology_t topo, hwloc_bitmap_t set)
{
    if (T.init_set &&
        hwloc_cpuset_from_glibc_sched_affinity(topo, set, T.init_set, T.init_set_size) == 0)
        return 0;
    return hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS);
}

void mw__topology_place(mw_place_t *p, int pu_at_init)
{
    memset(p, 0, sizeof *p);
    p->pu = pu_at_init;
    p->core = p->package = p->l3 = p->numa = -1;
    gethostname(p->host, sizeof p->host - 1);
    if (T.emulated)
        snprintf(p->node, sizeof p->node, "%s-n%u", p->host, T.node);
    else
        snprintf(p->node, sizeof p->node, "%s", p->host);
    snprintf(p->binding, sizeof p->binding, "unknown");
    if (p->pu >= 0) {
        p->pus[0] = (uint32_t)p->pu; /* until the binding is known */
        p->npus = 1;
    }
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0)
        return;
#if HWLOC_API_VERSION >= 0x00020100
    /* Linux's sysfs describes packages, caches, cores and PUs. The x86 backend would add
     * nothing we report, but it reads CPUID by binding this thread to every PU in turn, which
     * for that moment widens the process's binding as `hwloc-bind --get` sees it. */
    hwloc_topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "x86");
#endif
    if (hwloc_topology_load(topo) != 0) {
        hwloc_topology_destroy(topo);
        return;
    }
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (set && read_binding(topo, set) == 0 && !hwloc_bitmap_iszero(set)) {
        hwloc_bitmap_list_snprintf(p->cpuset, sizeof p->cpuset, set);
        p->bound = !hwloc_bitmap_isincluded(hwloc_topology_get_topology_cpuset(topo), set);
        /* A PU outside the binding would mean the binding changed since MPI_Init: the
         * binding is what the rank has now, so the PU is taken from it. */
        if (p->bound && (p->pu < 0 || !hwloc_bitmap_isset(set, (unsigned)p->pu)))
            p->pu = hwloc_bitmap_first(set);
        if (p->bound) {
            p->npus = 0;
            int i;
            hwloc_bitmap_foreach_begin(i, set)
            {
                if (p->npus < MW_PLACE_MAX_PUS)
                    p->pus[p->npus++] = (uint32_t)i;
            }
            hwloc_bitmap_foreach_end();
        } else if (p->pu >= 0) {
            p->pus[0] = (uint32_t)p->pu;
            p->npus = 1;
        }
        hwloc_obj_t pu = p->pu >= 0 ? hwloc_get_pu_obj_by_os_index(topo, (unsigned)p->pu) : NULL;
        p->core = ancestor_index(topo, HWLOC_OBJ_CORE, pu);
        p->package = ancestor_index(topo, HWLOC_OBJ_PACKAGE, pu);
        p->l3 = ancestor_index(topo, HWLOC_OBJ_L3CACHE, pu);
        /* NUMA nodes are memory children in hwloc 2, not ancestors: the one covering the PU. */
        hwloc_obj_t numa = pu ? hwloc_get_next_obj_covering_cpuset_by_type(topo, pu->cpuset,
                                                                           HWLOC_OBJ_NUMANODE, NULL)
                              : NULL;
        p->numa = numa ? (int)numa->logical_index : -1;
        if (p->bound)
            snprintf(p->binding, sizeof p->binding, "bound to %s (pu %d core %d package %d)",
                     p->cpuset, p->pu, p->core, p->package);
        else
            snprintf(p->binding, sizeof p->binding, "unbound (on pu %d core %d package %d)", p->pu,
                     p->core, p->package);
    }
    hwloc_bitmap_free(set);
    mw__log("node %s, %s, pus listed %u%s", p->node, p->binding, p->npus,
            T.reporter ? ", reports the node's hardware" : "");
    if (T.reporter)
        p->topology = topo_describe(topo, p->node);
    hwloc_topology_destroy(topo);
}
