/* topo_pick.h: what a click on the topology view finds: a rank marker within a radius, else the
 * nearest drawn curve, measured in pixels on the curves the view draws (topo_curves.h). No SDL
 * or GL (part of mw_viewer_model).
 */
#ifndef MW_VIEWER_TOPO_PICK_H
#define MW_VIEWER_TOPO_PICK_H

#include <stddef.h>
#include <stdint.h>

#include "topo_layout.h"
#include "topo_lines.h"

typedef enum {
    MW_TOPO_PICK_NONE,
    MW_TOPO_PICK_RANK,
    MW_TOPO_PICK_LINE,
    MW_TOPO_PICK_BUNDLE
} mw_topo_pick_kind_t;

typedef struct {
    mw_topo_pick_kind_t kind;
    uint32_t rank; /* RANK */
    size_t index;  /* LINE / BUNDLE: index in the lines' arrays */
    float dist_px; /* how far from the click */
} mw_topo_pick_t;

/* The rank marker within radius pixels of (x, y) (nearest first), else the nearest curve. */
mw_topo_pick_t mw_topo_pick(const mw_topo_layout_t *L, const mw_topo_lines_t *t, int bundled,
                            int periodic, const float mvp[16], int w, int h, float x, float y,
                            float radius);

#endif
