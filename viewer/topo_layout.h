/* topo_layout.h: where a job's nodes, hardware and ranks go in 3D, the one layout of the
 * topology that the viewer's 3D view and `mpiwatch-export --format vtk` both draw.
 *
 * DESIGN: plain C without SDL or OpenGL, a library of its own (mw_topo_layout, with the pair
 * merging of topo_lines.h) that depends on proto/ only, so that the export links it without
 * the viewer; unit-tested in tests/viewer/test_topo.c and test_topo_caps.c, and compared with
 * the VTK files in tests/export (export_vtk_layout).
 *
 * World units, y up. Every node of the job is a plane (a thin slab under y = 0) in a
 * near-square grid on the x-z ground, in node order, row by row. On a node the hardware
 * objects the job uses (the PUs of its ranks' bindings and their ancestors) are nested boxes,
 * each level a step higher than its parent (package, L3, core, PU), laid out as near-square
 * grids of equal cells; a PU is one unit wide. A rank sits on top of its PU (its RankInfo.pu,
 * else the first of its pus, else its core), ranks sharing a PU are stacked. A node without
 * hardware (JobInfo.nodes empty, or a node whose objects did not arrive or are more than
 * MW_MAX_TOPO_OBJECTS) is a plane with its ranks on a grid; without JobInfo.nodes the planes
 * are the hosts (every host of the list, in order). A rank of a node with hardware whose PU
 * and core the node does not list sits at the plane's near left corner (stacked). Ranks the
 * job does not place (no description, a node or host index out of range) go to one more
 * plane at the end ("unplaced").
 *
 * Besides positions the layout counts, per box, the ranks placed in it or in a box inside it
 * and, per PU, the ranks whose binding includes it: the figures the VTK export writes.
 */
#ifndef MW_VIEWER_TOPO_LAYOUT_H
#define MW_VIEWER_TOPO_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "mw_network.h"
#include "mw_proto.h"

/* Heights of the layout (world units). */
#define MW_TOPO_PLANE_Y 0.0f
#define MW_TOPO_LEVEL_H 0.35f /* each hardware level is this much higher than its parent */
#define MW_TOPO_MARKER_H 0.9f /* a rank's marker */
#define MW_TOPO_MARKER_W 0.6f

typedef enum {
    MW_TOPO_NODE = 0,
    MW_TOPO_PACKAGE = 1,
    MW_TOPO_L3 = 2,
    MW_TOPO_CORE = 3,
    MW_TOPO_PU = 4,
    MW_TOPO_NUMA = 5, /* a NUMA node: a level where hwloc attaches it (pmpi-shim/topology.c) */
    MW_TOPO_TYPES
} mw_topo_type_t;

typedef struct {
    float lo[3], hi[3];
    uint32_t node;
    uint8_t type;     /* mw_topo_type_t */
    uint32_t logical; /* hwloc logical index (nodes: the node index) */
    int32_t os_index; /* TopoObject.os_index (-1: a plane, or over INT32_MAX) */
    uint32_t ranks;   /* ranks placed in it or in a box inside it */
    uint32_t bound;   /* PUs: ranks whose binding (RankInfo.pus) includes it; 0 otherwise */
} mw_topo_box_t;

typedef struct {
    char name[64];
    float lo[3], hi[3]; /* the plane */
    uint32_t ranks;     /* ranks placed on it */
    int hardware;       /* 1: boxes from its TopoObjects; 0: a grid of ranks */
    int32_t source;     /* its index in JobInfo.nodes (by_host: .hosts); -1: the unplaced */
    int32_t sw;         /* with a network: its switch (index into the layout's switches) */
} mw_topo_node_t;

/* With a network (mw_topo_layout_opts_t.net): a switch the job uses (one with a node of the
 * job under it, or above such a switch), drawn as a box above its nodes, and the "unknown
 * switch" that groups the job's nodes the network file does not name. */
typedef struct {
    char name[64];
    float lo[3], hi[3]; /* its box */
    int32_t parent;     /* index into the layout's switches, -1: none drawn above it */
    int32_t source;     /* its index in the network's switches; -1: the unknown switch */
    uint32_t level;     /* 0: the lowest drawn (leaf) switches, 1 above them, ... */
    uint32_t nodes;     /* the job's nodes directly under it */
} mw_topo_switch_t;

/* The layout's options; all zero: the defaults (no network, the default gap). */
typedef struct {
    const mw_network_t *net; /* group the nodes under their switches (NULL: none) */
    float node_gap;          /* between node planes (<= 0: MW_TOPO_NODE_GAP) */
} mw_topo_layout_opts_t;

#define MW_TOPO_NODE_GAP 4.0f /* the default gap between node planes */

typedef struct {
    float pos[3]; /* the centre of the marker's base, on top of its PU */
    int32_t node; /* index into the layout's nodes; -1: the rank is not in the job description */
} mw_topo_rank_t;

typedef struct {
    mw_topo_node_t *nodes;
    size_t n_nodes;
    mw_topo_box_t *boxes; /* planes first (one per node), then the hardware, parents first */
    size_t n_boxes;
    mw_topo_rank_t *ranks; /* indexed by rank */
    uint32_t n_ranks;
    float lo[3], hi[3];   /* the scene's bounds */
    float cell_w, cell_d; /* a node's grid cell */
    int cols;             /* nodes per row */
    int fallback;         /* no node had hardware */
    int by_host;          /* the job has no JobInfo.nodes: the planes are its hosts */
    size_t boxes_of_type[MW_TOPO_TYPES];
    uint32_t loose;     /* ranks on a node with hardware but in none of its objects */
    uint32_t big_nodes; /* nodes with more than MW_MAX_TOPO_OBJECTS objects (drawn as grids) */
    mw_topo_switch_t *switches; /* with a network: leaf switches first (in group order) */
    size_t n_switches;
    int network; /* laid out with a network: nodes grouped under their leaf switches */
    float node_gap, group_gap;
} mw_topo_layout_t;

/* Checks a job description against the caps of proto/mw_limits.h before anything uses it: job
 * size, ranks (each < size, once the list is longer than size), PUs per rank and in all,
 * names (hosts and nodes) and their bytes, hardware objects per node and in all, tree depth
 * (MW_MAX_TOPO_DEPTH), string lengths. O(size of the description). Returns 0, or -1 with the
 * reason in err. */
int mw_topo_job_check(const Mpiwatch__JobInfo *job, char *err, size_t errlen);

/* Builds the layout of `job` (NULL or empty: no nodes). Returns 0, -1 out of memory, -2 for a
 * job size over MW_MAX_RANKS (refused before anything is allocated). Never recurses; linear
 * in the objects of each node and the ranks placed on it (and their bindings). */
int mw_topo_layout(mw_topo_layout_t *L, const Mpiwatch__JobInfo *job);
/* The same with options: with a network, the nodes of each leaf switch form a group (a grid of
 * their own, in node order), groups are further apart than nodes (group_gap), the groups are
 * laid out in switch order (the file's) with the unknown switch last, and each switch is a box
 * above its nodes (switches of higher levels higher). */
int mw_topo_layout_ex(mw_topo_layout_t *L, const Mpiwatch__JobInfo *job,
                      const mw_topo_layout_opts_t *opt);
void mw_topo_layout_free(mw_topo_layout_t *L);

#endif
