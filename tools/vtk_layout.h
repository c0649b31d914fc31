/* vtk_layout.h: where the ranks and the hardware of a job go in 3D, for the ParaView export.
 *
 * The picture is the viewer's topology view told in plain numbers: every node is a flat
 * rectangle (a plane) side by side with the others, its packages, L3 caches, cores and PUs
 * are nested rectangles stacked above it (one height per kind of object, so that the levels
 * read as terraces from the side and as nested outlines from above), and every rank is a
 * point just above the PU it runs on. Units are PU widths: a PU is 1 x 1.
 *
 * A node whose hardware the job does not describe (recordings made before the topology issue,
 * a node none of whose ranks reported it, an object list that does not hold together) gets
 * its ranks on a square grid instead; a job without nodes gets one plane per host. Ranks the
 * job does not place (no hello, an index out of range) go to one more plane at the end.
 *
 * The layout reads only the job description (Mpiwatch__JobInfo) and uses no graphics library,
 * so that it is tested on its own; export_vtk.c turns it into VTK cells.
 */
#ifndef MW_VTK_LAYOUT_H
#define MW_VTK_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "mw_proto.h"

/* The `kind` of a cell in the VTK files: what it draws. The hardware kinds are in nesting
 * order; TopoObject.type t (1 package .. 4 PU) is kind t + 1. */
typedef enum {
    MW_VTK_RANK = 0,    /* a vertex: one rank */
    MW_VTK_NODE = 1,    /* a rectangle: one node (or host) */
    MW_VTK_PACKAGE = 2, /* rectangles: the node's hardware */
    MW_VTK_L3 = 3,
    MW_VTK_CORE = 4,
    MW_VTK_PU = 5,
    MW_VTK_LINK = 6, /* a line: messages from one rank to another */
} mw_vtk_kind_t;

/* Height of each kind above the plane z = 0, and of the rank points. */
#define MW_VTK_LEVEL_DZ 0.5f
#define MW_VTK_RANK_Z (MW_VTK_LEVEL_DZ * (float)MW_VTK_LINK)

/* A flat rectangle [x0, x1] x [y0, y1] at height z. */
typedef struct {
    float x0, y0, x1, y1, z;
    uint8_t kind;     /* MW_VTK_NODE .. MW_VTK_PU */
    int32_t node;     /* index of its plane in mw_vtk_layout_t.node_name */
    int32_t logical;  /* hwloc logical index (TopoObject.logical), -1 for a plane */
    int32_t os_index; /* TopoObject.os_index, -1 for a plane */
    uint32_t ranks;   /* ranks placed in it or in an object inside it */
    uint32_t bound;   /* PUs: ranks whose binding (RankInfo.pus) includes it; 0 otherwise */
} mw_vtk_box_t;

typedef struct {
    float x, y, z;
    int32_t node;  /* its plane */
    int32_t bound; /* RankInfo.bound: 1 bound to fewer PUs than the node has, -1 unknown */
} mw_vtk_point_t;

typedef struct {
    uint32_t n_nodes;       /* planes, the extra one for unplaced ranks included */
    const char **node_name; /* [n_nodes]: names (pointers into the job, or static text) */
    mw_vtk_box_t *boxes;    /* every plane, each followed by the hardware laid out on it */
    size_t n_boxes;
    mw_vtk_point_t *rank; /* [n_ranks]: position of rank r */
    uint32_t n_ranks;     /* JobInfo.size, or more when the job lists higher ranks */
    uint32_t hw_nodes;    /* planes whose hardware was laid out */
    uint32_t bad_nodes;   /* planes whose hardware description was unusable (grid instead) */
    uint32_t unplaced;    /* ranks on the extra plane */
    uint32_t loose;       /* ranks on a node with hardware but not in any object of it */
} mw_vtk_layout_t;

/* Lays out a job (NULL: nothing is known, no rank has a place). The names point into `job`,
 * which must outlive the layout. Returns 0, or -1 when out of memory. */
int mw_vtk_layout_build(mw_vtk_layout_t *l, const Mpiwatch__JobInfo *job);
void mw_vtk_layout_free(mw_vtk_layout_t *l);

#endif
