/* topology.c: where this rank runs, for its hello (hwloc).
 *
 * DESIGN: runs on the sender thread, off the application's path, because loading the hwloc
 * topology reads sysfs and takes milliseconds; the PU is the one the application thread was
 * on inside MPI_Init (sched_getcpu there). The binding is the process's CPU binding; if
 * the process is bound to the whole machine, it is reported as "unbound" with the PU it was
 * last seen on.
 */
#include "shim.h"

#include <hwloc.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void mw__topology_place(mw_place_t *p, int pu_at_init)
{
    memset(p, 0, sizeof *p);
    p->pu = pu_at_init;
    p->core = p->package = -1;
    gethostname(p->host, sizeof p->host - 1);
    snprintf(p->binding, sizeof p->binding, "unknown");
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0)
        return;
    if (hwloc_topology_load(topo) != 0) {
        hwloc_topology_destroy(topo);
        return;
    }
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (set && hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0) {
        hwloc_bitmap_list_snprintf(p->cpuset, sizeof p->cpuset, set);
        int bound = !hwloc_bitmap_isincluded(hwloc_topology_get_topology_cpuset(topo), set);
        hwloc_obj_t pu = p->pu >= 0 ? hwloc_get_pu_obj_by_os_index(topo, (unsigned)p->pu) : NULL;
        hwloc_obj_t core = pu ? hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pu) : NULL;
        hwloc_obj_t pkg = pu ? hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, pu) : NULL;
        p->core = core ? (int)core->logical_index : -1;
        p->package = pkg ? (int)pkg->logical_index : -1;
        if (bound)
            snprintf(p->binding, sizeof p->binding, "bound to %s (pu %d core %d package %d)",
                     p->cpuset, p->pu, p->core, p->package);
        else
            snprintf(p->binding, sizeof p->binding, "unbound (on pu %d core %d package %d)",
                     p->pu, p->core, p->package);
    }
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(topo);
}
