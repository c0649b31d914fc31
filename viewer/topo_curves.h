/* topo_curves.h: a line or bundle of the topology view as the curves the view draws.
 *
 * An arc leaves the sender at its base and arrives on top of the receiver, bowed to the side of
 * its direction so that a->b and b->a do not overlap; intra-node arcs stay low, inter-node arcs
 * rise (and are dashed by the view). With the periodic option a pair further apart than half
 * the job in rank order (half the nodes, for bundles) becomes two stubs that leave the scene's
 * edges: one from the sender, one into the receiver. The curve formula (mw_topo_curve_point) is
 * the one the vertex shader evaluates, so picking and the snapshot meta see the pixels the view
 * draws. No SDL or GL (part of mw_viewer_model).
 */
#ifndef MW_VIEWER_TOPO_CURVES_H
#define MW_VIEWER_TOPO_CURVES_H

#include <stddef.h>

#include "model_store.h" /* mw_rgb_t */
#include "topo_layout.h"
#include "topo_lines.h"

#define MW_TOPO_SEGMENTS 16 /* line segments per drawn curve */

/* One drawn curve: the instance the view's vertex shader evaluates. */
typedef struct {
    float p0[3], p1[3]; /* ends */
    float height;       /* the apex above the straight line */
    float side;         /* the sideways bow (to the right of p0 -> p1, seen from above) */
    float t0, t1;       /* the part of the whole line this curve is (stubs: halves) */
    float rgb[3];
    float inter; /* the link class: 0 solid, 1 dashed (between nodes), 2 dotted (switches) */
} mw_topo_curve_t;

/* The curves of line i (bundled: bundle i), 1 or 2 (periodic stubs); returns how many. */
int mw_topo_curves(const mw_topo_layout_t *L, const mw_topo_lines_t *t, int bundled, size_t i,
                   int periodic, mw_rgb_t color, mw_topo_curve_t out[2]);
/* The point at s (0..1) along curve c; the vertex shader computes the same. */
void mw_topo_curve_point(const mw_topo_curve_t *c, float s, float out[3]);

#endif
