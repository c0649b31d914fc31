/* camera.h: the topology view's orbit camera: fit to a layout, orbit, pan, zoom, the
 * projection matrix the view uploads and the projection of world points to pixels that picking
 * and the snapshot meta use. No SDL or GL (part of mw_viewer_model).
 */
#ifndef MW_VIEWER_CAMERA_H
#define MW_VIEWER_CAMERA_H

#include "topo_layout.h"

typedef struct {
    float yaw, pitch; /* degrees: yaw around y, pitch above the ground */
    float distance;   /* from the target */
    float target[3];
    float fov; /* vertical, degrees */
} mw_camera_t;

/* A camera that shows the whole layout from the front, above. */
void mw_camera_fit(mw_camera_t *c, const mw_topo_layout_t *L);
/* The eye position. */
void mw_camera_eye(const mw_camera_t *c, float out[3]);
/* The ray through pixel (x, y) of a w x h view as mw_camera_matrix() projects it: from the eye
 * along dir (not unit length). */
void mw_camera_ray(const mw_camera_t *c, int w, int h, float x, float y, float eye[3],
                   float dir[3]);
/* projection * view, column-major (OpenGL), for a viewport of the given aspect (w / h). */
void mw_camera_matrix(const mw_camera_t *c, float aspect, float out[16]);
/* Pixel position (origin top left of a w x h viewport) of p; 0 when p is behind the eye. */
int mw_camera_project(const float mvp[16], const float p[3], int w, int h, float *x, float *y);
/* Mouse interaction: drag by (dx, dy) pixels, zoom by a factor (> 1: closer). */
void mw_camera_orbit(mw_camera_t *c, float dx, float dy);
void mw_camera_pan(mw_camera_t *c, float dx, float dy, int viewport_h);
void mw_camera_zoom(mw_camera_t *c, float factor);
/* Pixels one world unit spans at the target's distance. */
float mw_camera_px_per_unit(const mw_camera_t *c, int viewport_h);

/* 1 when lines should be drawn as node-to-node bundles: a node's cell spans fewer than
 * `min_px` pixels on screen. */
int mw_topo_auto_bundles(const mw_camera_t *c, const mw_topo_layout_t *L, int viewport_h,
                         float min_px);

#endif
