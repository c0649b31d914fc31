/* topo.h: the topology and matrix views' model, one header that includes its modules, one per
 * concern (none uses SDL or OpenGL; the views upload what they compute and draw it as is):
 *   topo_layout.h  where nodes, hardware and ranks go in 3D: the one layout, shared with
 *                  `mpiwatch-export --format vtk` (library mw_topo_layout)
 *   topo_lines.h   a window's or step's pairs merged into lines and node bundles (also in
 *                  mw_topo_layout: the export writes the same merged pairs)
 *   topo_color.h   colour modes, scales and ramps
 *   topo_curves.h  lines and bundles as the curves the vertex shader draws
 *   camera.h       the orbit camera and the projection to pixels
 *   topo_pick.h    what a click on the topology view finds
 *   matrix.h       the communication matrix, binned
 * Unit-tested in tests/viewer/test_topo.c and test_topo_caps.c.
 */
#ifndef MW_VIEWER_TOPO_H
#define MW_VIEWER_TOPO_H

#include "camera.h"
#include "matrix.h"
#include "topo_color.h"
#include "topo_curves.h"
#include "topo_layout.h"
#include "topo_lines.h"
#include "topo_pick.h"

#endif
