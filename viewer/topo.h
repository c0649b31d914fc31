/* topo.h: the topology and matrix views' model: layout, lines, colors, camera, picking.
 *
 * DESIGN: plain C without SDL or OpenGL, unit-tested in tests/viewer/test_topo.c; the views
 * (view_topology.c, view_matrix.c) upload what these functions compute and draw it as is.
 *
 * Layout (mw_topo_layout): world units, y up. Every node of the job is a plane (a thin slab
 * under y = 0) in a near-square grid on the x-z ground, in node order, row by row. On a node
 * the hardware objects the job uses (the PUs of its ranks' bindings and their ancestors) are
 * nested boxes, each level a step higher than its parent (package, L3, core, PU), laid out as
 * near-square grids of equal cells; a PU is one unit wide. A rank sits on top of its PU (its
 * RankInfo.pu, else the first of its pus, else its core), ranks sharing a PU are stacked. A
 * node without hardware (JobInfo.nodes empty, or a node whose objects did not arrive) is a
 * plane with its ranks on a grid; without JobInfo.nodes the planes are the hosts.
 *
 * Lines (mw_topo_lines): the per-peer pairs of one window or step, merged so that every
 * (src, dst) appears once, each classified intra-node or inter-node, and summed into directed
 * node-to-node bundles. A line or bundle is drawn as curves (mw_topo_curves): an arc that leaves
 * the sender at its base and arrives on top of the receiver, bowed to the side of its direction
 * so that a->b and b->a do not overlap; intra-node arcs stay low, inter-node arcs rise (and are
 * dashed by the view). With the periodic option a pair further apart than half the job in rank
 * order (half the nodes, for bundles) becomes two stubs that leave the scene's edges: one from
 * the sender, one into the receiver. The curve formula (mw_topo_curve_point) is the one the
 * vertex shader evaluates, so picking and the snapshot meta see the pixels the view draws.
 *
 * Colors: lines by messages, bytes (linear or log between the drawn minimum and maximum), or by
 * source or destination rank (a hue ramp over 0..size-1). Ranks by the bytes they sent in the
 * window or step (from the pairs): a merged Window carries no per-rank MPI time.
 *
 * Matrix (mw_matrix_bin): sender x receiver sums of messages and bytes, binned into at most
 * max_bins x max_bins cells of equal rank ranges (exact integer sums per bin).
 */
#ifndef MW_VIEWER_TOPO_H
#define MW_VIEWER_TOPO_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

#define MW_TOPO_SEGMENTS 16 /* line segments per drawn curve */

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
    MW_TOPO_TYPES
} mw_topo_type_t;

typedef struct {
    float lo[3], hi[3];
    uint32_t node;
    uint8_t type;     /* mw_topo_type_t */
    uint32_t logical; /* hwloc logical index (nodes: the node index) */
} mw_topo_box_t;

typedef struct {
    char name[64];
    float lo[3], hi[3]; /* the plane */
    uint32_t ranks;     /* ranks placed on it */
    int hardware;       /* 1: boxes from its TopoObjects; 0: a grid of ranks */
} mw_topo_node_t;

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
    size_t boxes_of_type[MW_TOPO_TYPES];
} mw_topo_layout_t;

/* Checks a job description against the caps of proto/mw_limits.h before anything uses it: job
 * size, ranks (each < size, once the list is longer than size), PUs per rank and in all,
 * names (hosts and nodes) and their bytes, hardware objects per node and in all, tree depth
 * (MW_MAX_TOPO_DEPTH), string lengths. O(size of the description). Returns 0, or -1 with the
 * reason in err. */
int mw_topo_job_check(const Mpiwatch__JobInfo *job, char *err, size_t errlen);

/* Builds the layout of `job` (NULL or empty: no nodes). Returns 0, -1 out of memory, -2 for a
 * job size over MW_MAX_RANKS (refused before anything is allocated). Never recurses; linear
 * in the objects of each node and the ranks placed on it. */
int mw_topo_layout(mw_topo_layout_t *L, const Mpiwatch__JobInfo *job);
void mw_topo_layout_free(mw_topo_layout_t *L);

/* ---- pairs and lines ---------------------------------------------------------------------- */

/* The per-peer data of a window or step: parallel arrays of n entries. */
typedef struct {
    const uint32_t *src, *dst;
    const uint64_t *messages, *bytes;
    size_t n;
} mw_pairs_t;

mw_pairs_t mw_pairs_of_window(const Mpiwatch__Window *w);
mw_pairs_t mw_pairs_of_step(const Mpiwatch__Step *s);

typedef struct {
    uint32_t src, dst;
    uint64_t messages, bytes;
    uint8_t inter;    /* the ranks are on different nodes (or either is not placed) */
    uint8_t periodic; /* further apart than half the job in rank order */
} mw_topo_line_t;

typedef struct {
    uint32_t a, b; /* sender's and receiver's node */
    uint64_t messages, bytes;
    uint32_t pairs;
    uint8_t periodic; /* further apart than half the nodes */
} mw_topo_bundle_t;

typedef struct {
    mw_topo_line_t *lines; /* sorted by (src, dst), each pair once */
    size_t n_lines, intra, inter, periodic;
    mw_topo_bundle_t *bundles; /* sorted by (a, b) */
    size_t n_bundles, bundles_intra, bundles_inter;
    uint64_t messages, bytes; /* totals */
    size_t dropped;           /* pairs naming a rank outside the job */
    uint64_t *rank_bytes;     /* bytes each rank sent (n_ranks) */
    uint64_t *rank_messages;
    uint32_t n_ranks;
    size_t cap, cap_b;
    uint32_t rank_cap;
} mw_topo_lines_t;

/* Merges `p` into lines and bundles for layout L (replacing what `out` held; out must be zeroed
 * before its first use). Returns 0, -1 out of memory. */
int mw_topo_lines(mw_topo_lines_t *out, const mw_topo_layout_t *L, mw_pairs_t p);
void mw_topo_lines_free(mw_topo_lines_t *t);

/* ---- colors ------------------------------------------------------------------------------- */

typedef enum {
    MW_TOPO_COLOR_MESSAGES,
    MW_TOPO_COLOR_BYTES,
    MW_TOPO_COLOR_SRC,
    MW_TOPO_COLOR_DST,
    MW_TOPO_COLOR_COUNT
} mw_topo_color_t;

const char *mw_topo_color_name(mw_topo_color_t c);
/* -1 when unknown. */
int mw_topo_color_of(const char *name);

typedef struct {
    double min, max; /* of the values drawn */
    int log;         /* log scale (values > 0) */
    int ranks;       /* the scale is of rank numbers (src / dst modes) */
} mw_scale_t;

/* Where v falls on the scale, 0..1. */
float mw_scale_t01(const mw_scale_t *s, double v);
/* The value ramp (dark blue, teal, green, yellow) and the rank ramp (hues). */
mw_rgb_t mw_ramp(float t);
mw_rgb_t mw_hue_ramp(float t);
mw_rgb_t mw_scale_color(const mw_scale_t *s, double v);

/* The scale of the lines (bundled: of the bundles) in color mode c. */
mw_scale_t mw_topo_line_scale(const mw_topo_lines_t *t, int bundled, mw_topo_color_t c, int log);
/* The value of line i (bundled: bundle i) in mode c. */
double mw_topo_line_value(const mw_topo_lines_t *t, int bundled, size_t i, mw_topo_color_t c);
/* The scale of the ranks' metric (bytes sent, log), over ranks that sent anything. */
mw_scale_t mw_topo_rank_scale(const mw_topo_lines_t *t);

/* ---- curves ------------------------------------------------------------------------------- */

/* One drawn curve: the instance the view's vertex shader evaluates. */
typedef struct {
    float p0[3], p1[3]; /* ends */
    float height;       /* the apex above the straight line */
    float side;         /* the sideways bow (to the right of p0 -> p1, seen from above) */
    float t0, t1;       /* the part of the whole line this curve is (stubs: halves) */
    float rgb[3];
    float inter; /* 1: dashed */
} mw_topo_curve_t;

/* The curves of line i (bundled: bundle i), 1 or 2 (periodic stubs); returns how many. */
int mw_topo_curves(const mw_topo_layout_t *L, const mw_topo_lines_t *t, int bundled, size_t i,
                   int periodic, mw_rgb_t color, mw_topo_curve_t out[2]);
/* The point at s (0..1) along curve c; the vertex shader computes the same. */
void mw_topo_curve_point(const mw_topo_curve_t *c, float s, float out[3]);

/* ---- camera ------------------------------------------------------------------------------- */

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

/* ---- picking ------------------------------------------------------------------------------ */

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

/* ---- the matrix --------------------------------------------------------------------------- */

typedef struct {
    int bins;           /* bins x bins cells */
    uint32_t n_ranks;   /* ranks covered (rank r is in bin r * bins / n_ranks) */
    uint64_t *messages; /* [src_bin * bins + dst_bin] */
    uint64_t *bytes;
    uint64_t max_messages, max_bytes, min_messages, min_bytes; /* over non-empty cells */
    size_t cells_used;
    int *node_edges; /* bins where a new node starts (rank order), ascending */
    int n_edges;
    size_t cap;
} mw_matrix_t;

/* Bins pairs p over ranks 0..n_ranks-1 into at most max_bins per axis (ranks <= max_bins: one
 * rank per bin). L (may be NULL) gives the node boundaries. 0, or -1 out of memory. */
int mw_matrix_bin(mw_matrix_t *mx, mw_pairs_t p, uint32_t n_ranks, int max_bins,
                  const mw_topo_layout_t *L);
void mw_matrix_free(mw_matrix_t *mx);
/* The ranks [*r0, *r1] of bin b. */
void mw_matrix_bin_ranks(const mw_matrix_t *mx, int b, uint32_t *r0, uint32_t *r1);
/* The bin of rank r. */
int mw_matrix_bin_of(const mw_matrix_t *mx, uint32_t r);

#endif
