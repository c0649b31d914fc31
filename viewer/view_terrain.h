/* view_terrain.h: the state of the terrain view (view_terrain.c; docs/viewer.md, "Terrain
 * view"): what it shows (functions or regions, the metric, 3D or heat map, log or linear), the
 * model's sums (model_terrain.h), the camera, the vertex buffer of the height field and what it
 * was built from. It lives in mw_app_t; the view's functions are declared in views.h.
 */
#ifndef MW_VIEWER_VIEW_TERRAIN_H
#define MW_VIEWER_VIEW_TERRAIN_H

#include "camera.h"
#include "gl_util.h"
#include "model_layout.h"
#include "model_terrain.h"

typedef struct {
    mw_terrain_t *tr;
    mw_terrain_what_t what;     /* 'g' */
    mw_terrain_metric_t metric; /* 'm' */
    int heatmap;                /* 'h' */
    int log;                    /* 't' */
    mw_camera_t cam;
    int cam_fitted, cam_cols, cam_w, cam_h; /* fitted for these columns and viewport */
    int camera_given;                       /* --camera: yaw, pitch, distance */
    float cam_yaw, cam_pitch, cam_distance;
    /* The last frame: the grid, where it was drawn and how. */
    mw_terrain_grid_t grid;
    uint32_t max_rows; /* the rows the ranks were aggregated to at most: pixels along them */
    int have_grid;
    mw_rect_t region; /* the view's area (the call view's region) */
    mw_rect_t plot;   /* the heat map's plot, or the 3D viewport */
    mw_rect_t bar;    /* the colour bar */
    float mvp[16];
    /* The picked cell (row, column of the grid), -1 none. */
    int pick_col;
    uint32_t pick_row;
    uint32_t pick_rank;
    double pick_value;
    /* GL: the height field as triangles (position, colour), rebuilt when key changes. */
    GLuint prog, vao, vbo;
    GLint u_mvp;
    size_t n_verts, n_tri; /* vertices, of them triangles' (then the walls' grid lines) */
    uint64_t key;
    unsigned long rebuilds;
    /* The heat map: a texture of one texel per cell, drawn through its own program. */
    GLuint prog_tex, tex;
    GLint u_tex_proj, u_tex;
    mw_vbuf_t quad;
    uint64_t tex_key;
} mw_terrain_gl_t;

#endif
