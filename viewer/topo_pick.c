/* topo_pick.c: picking in the topology view (topo_pick.h). */
#include "topo_pick.h"

#include <math.h>

#include "camera.h"
#include "topo_curves.h"

static float seg_dist(float px, float py, float ax, float ay, float bx, float by)
{
    float vx = bx - ax, vy = by - ay, wx = px - ax, wy = py - ay;
    float l2 = vx * vx + vy * vy, u = l2 > 0 ? (wx * vx + wy * vy) / l2 : 0;
    u = u < 0 ? 0 : u > 1 ? 1 : u;
    float dx = ax + u * vx - px, dy = ay + u * vy - py;
    return sqrtf(dx * dx + dy * dy);
}

mw_topo_pick_t mw_topo_pick(const mw_topo_layout_t *L, const mw_topo_lines_t *t, int bundled,
                            int periodic, const float mvp[16], int w, int h, float x, float y,
                            float radius)
{
    mw_topo_pick_t best = {MW_TOPO_PICK_NONE, 0, 0, radius};
    for (uint32_t r = 0; r < L->n_ranks; r++) {
        float p[3] = {L->ranks[r].pos[0], L->ranks[r].pos[1] + MW_TOPO_MARKER_H / 2,
                      L->ranks[r].pos[2]};
        float sx, sy;
        if (!mw_camera_project(mvp, p, w, h, &sx, &sy))
            continue;
        float d = sqrtf((sx - x) * (sx - x) + (sy - y) * (sy - y));
        if (d <= best.dist_px) {
            best.kind = MW_TOPO_PICK_RANK;
            best.rank = r;
            best.dist_px = d;
        }
    }
    if (best.kind == MW_TOPO_PICK_RANK || !t)
        return best;
    size_t n = bundled ? t->n_bundles : t->n_lines;
    mw_rgb_t none = {0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        mw_topo_curve_t c[2];
        int k = mw_topo_curves(L, t, bundled, i, periodic, none, c);
        for (int j = 0; j < k; j++) {
            float px = 0, py = 0;
            int prev = 0;
            for (int s = 0; s <= MW_TOPO_SEGMENTS; s++) {
                float q[3], sx, sy;
                mw_topo_curve_point(&c[j], (float)s / MW_TOPO_SEGMENTS, q);
                int ok = mw_camera_project(mvp, q, w, h, &sx, &sy);
                if (ok && prev) {
                    float d = seg_dist(x, y, px, py, sx, sy);
                    if (d < best.dist_px) {
                        best.kind = bundled ? MW_TOPO_PICK_BUNDLE : MW_TOPO_PICK_LINE;
                        best.index = i;
                        best.dist_px = d;
                    }
                }
                prev = ok;
                px = sx;
                py = sy;
            }
        }
    }
    return best;
}
