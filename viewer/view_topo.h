/* view_topo.h: the state of the topology and matrix views (view_topology.c, view_matrix.c).
 *
 * DESIGN: the views receive what they draw (an mw_view_ctx_t: model, view state, layout, batch,
 * text; views.h) and this state of their own, which lives in mw_app_t but is touched only by
 * the two views, the keys and clicks that app.c hands them, and the snapshot's --meta. What the
 * state caches (layout, lines, matrix bins) is computed by the model's topology modules
 * (topo.h: topo_layout, topo_lines, topo_color, topo_curves, camera, topo_pick, matrix).
 */
#ifndef MW_VIEWER_VIEW_TOPO_H
#define MW_VIEWER_VIEW_TOPO_H

#include <stddef.h>
#include <stdint.h>

#include "gl_util.h"
#include "model.h"
#include "topo.h"

/* The command line's choices for the topology and matrix views (mw_viewer_options_t). */
typedef struct {
    int window_given, step_given;
    uint64_t window_n, step_n; /* --window N (relative to the oldest), --step N */
    int camera_given;
    float cam_yaw, cam_pitch, cam_distance; /* --camera (distance <= 0: the fitted one) */
    float cam_zoom;                         /* --zoom (<= 0: none) */
} mw_topo_opts_t;

/* Node planes coloured: plain, by node (a hue each), by switch (a hue per switch). */
enum { MW_PLANES_PLAIN, MW_PLANES_BY_NODE, MW_PLANES_BY_SWITCH, MW_PLANES_COUNT };

/* The topology and matrix views: their view state (what is shown, how), the model's answers for
 * it (layout, lines, matrix bins) cached until their inputs change, and their GL objects. */
typedef struct {
    /* What is shown: a window (relative to the oldest) or a time step (an index into the
     * model's steps); following: the newest one. */
    int step_mode;
    int follow;
    /* The shown window's per-rank MPI shares (Window.rank_mpi_permille), when it has them: the
     * ranks' default color; otherwise the bytes they sent. */
    const uint32_t *rank_pm;
    size_t n_rank_pm;
    uint64_t window; /* absolute window index */
    size_t step_idx;
    int playing;
    uint64_t play_ns;
    mw_topo_color_t color;
    int bundles; /* -1 auto */
    int periodic;
    int log; /* log color scales */
    int labels;
    /* The network (--network) and how node planes are drawn ('g' 'G' gap, 'n' colours). */
    mw_network_t net;
    int have_net;
    float node_gap;
    int plane_color; /* MW_PLANES_* */
    mw_camera_t cam;
    int cam_fitted;
    /* The model's answers. */
    mw_topo_layout_t layout;
    uint64_t layout_sig;
    int have_layout;
    mw_topo_lines_t lines;
    int have_data; /* the shown window or step is in the model */
    uint64_t lines_key[6];
    int bundled; /* lines drawn as bundles in the last frame */
    mw_scale_t scale, rank_scale;
    size_t curves; /* drawn */
    /* Level of detail for large jobs: with more node pairs than the view draws well, only the
     * heaviest bundles (messages, or bytes when coloured by bytes) are drawn. */
    size_t bundles_drawn, bundles_over; /* drawn / left out in the last upload */
    uint8_t *bundle_keep;               /* NULL: every bundle drawn; else [n_bundles]: 1 drawn */
    /* Per-frame work that scans every rank or every pair, cached until its inputs change: the
     * job's placement signature (per job and data generation) and the auto-bundling decision
     * (per camera and data). */
    const void *sig_job;
    uint64_t sig_gen, sig_val;
    uint64_t auto_key;
    int auto_val;
    /* The 3D pass's image, kept between frames: redrawn only when what it shows (boxes, ranks,
     * lines, camera, viewport, level of detail) changed, otherwise copied to the screen. */
    GLuint vao_agg, vao_aggpt, vbo_agg; /* aggregated rank markers (far from a large job) */
    size_t n_agg;
    int agg_drawn; /* the last frame drew them */
    mw_fbo_t scene;
    uint64_t scene_key;
    int scene_failed; /* the framebuffer could not be made: draw directly */
    char what[96];    /* "window 3 of 20" */
    /* The last pick. */
    mw_topo_pick_t pick;
    int mx_pick; /* a matrix cell was picked */
    int mx_src_bin, mx_dst_bin;
    /* GL: boxes and rank markers (instanced cubes), lines (instanced curves). */
    GLuint prog_box, prog_line;
    GLint u_box_mvp, u_line_mvp, u_line_alpha;
    GLuint vao_box, vao_rank, vao_rankpt, vao_line, vbo_cube, vbo_box, vbo_rank, vbo_line;
    size_t n_box, n_rank, n_line;
    uint64_t box_sig, rank_key, line_key;
    size_t n_line_verts; /* vertices of the curves' segments in vbo_line */
    float line_w_max;
    float mvp[16];
    mw_rect_t region;     /* the 3D viewport or the matrix' area, pixels */
    mw_rect_t legend_bar; /* the color bar of the line (matrix: cell) scale */
    mw_rect_t rank_bar;   /* the color bar of the rank metric */
    int labels_drawn;
    /* The matrix. */
    mw_matrix_t mx;
    int mx_valid;
    uint64_t mx_key[5];
    mw_rect_t mx_plot;
    GLuint prog_tex, tex, vao_quad, vbo_quad;
    GLint u_tex_proj, u_tex;
    unsigned char *rgba;
    size_t rgba_cap;
    int mx_bytes;      /* the matrix shows bytes (else messages) */
    int mx_edge_every; /* node boundaries drawn: every k-th (closer ones would grey the plot) */
    /* Code regions colouring the ranks, links of one sending function (model_regions.h). */
    mw_topo_regions_t *rx;
    /* What the command line asked for, applied once the job and its windows are known. */
    mw_topo_opts_t opt;
} mw_topo_gl_t;

#endif
