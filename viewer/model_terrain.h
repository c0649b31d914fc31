/* model_terrain.h: the terrain (docs/viewer.md, "Terrain view"; issue 16): ranks x functions (or
 * code regions) x a metric, summed over the windows of the call view's range, as a grid the view
 * draws as a 3D height field or a 2D heat map. No SDL, no GL.
 *
 * DESIGN: the merged windows carry per rank and function (Window.rf_*: count, time, bytes) and
 * per rank and region (Window.rr_*: count, inclusive, exclusive and MPI time) sparse entries.
 * mw_terrain_update() sums the chosen metric over the windows of the range in two passes: the
 * totals per function (region) choose the columns, largest first, MW_TERRAIN_COLS of them and
 * the rest summed in one "other" column; then a dense ranks x columns array of per-rank sums.
 * The largest MW_TERRAIN_TOP cells of named columns are the marked contributors. All of this is
 * cached under a signature of the range's windows, so an unchanged frame costs a pass over the
 * range's window pointers only. mw_terrain_rows() then aggregates ranks into at most max_rows
 * rows (the pixels the view has): k = ceil(ranks / max_rows) consecutive ranks per row, and a
 * row's cell holds the largest of its ranks' values and that rank, so a hot rank is never
 * averaged away. The 3D geometry (where a cell's column stands and how high), the camera that
 * frames it and picking (a ray through the pixel against the cells' boxes, or the heat map's
 * cell under the pixel) are computed here too, so the view and the tests agree to the pixel.
 */
#ifndef MW_VIEWER_MODEL_TERRAIN_H
#define MW_VIEWER_MODEL_TERRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "camera.h"
#include "model_layout.h"
#include "model_store.h"

#define MW_TERRAIN_COLS 20          /* named columns; the rest is summed in "other" */
#define MW_TERRAIN_TOP 5            /* the largest cells marked */
#define MW_TERRAIN_MAX_WINDOWS 4096 /* windows of one range summed */

typedef enum { MW_TERRAIN_FUNCTIONS, MW_TERRAIN_REGIONS } mw_terrain_what_t;

/* Functions: time, count, bytes. Regions: exclusive time (TIME, the default), inclusive time,
 * count, MPI time (of the MPI calls made while the region was the innermost open one). */
typedef enum {
    MW_TERRAIN_TIME,
    MW_TERRAIN_COUNT,
    MW_TERRAIN_BYTES,
    MW_TERRAIN_INCL,
    MW_TERRAIN_MPI,
    MW_TERRAIN_METRICS
} mw_terrain_metric_t;

/* "time" / "exclusive time", "count", ... as the screen says it. */
const char *mw_terrain_metric_name(mw_terrain_what_t what, mw_terrain_metric_t m);
/* 1 when metric m exists for `what`. */
int mw_terrain_metric_valid(mw_terrain_what_t what, mw_terrain_metric_t m);
/* The next valid metric after m ('m' key). */
mw_terrain_metric_t mw_terrain_metric_next(mw_terrain_what_t what, mw_terrain_metric_t m);
/* 1 when the metric's values are nanoseconds. */
int mw_terrain_metric_is_time(mw_terrain_metric_t m);

/* The command line's --terrain WHAT[,METRIC][,heatmap][,log]: WHAT functions|regions, METRIC
 * time|excl|incl|count|bytes|mpi. 0, or -1 with the reason in err. */
typedef struct {
    mw_terrain_what_t what;
    mw_terrain_metric_t metric;
    int heatmap, log;
} mw_terrain_opts_t;
int mw_terrain_parse(const char *s, mw_terrain_opts_t *o, char *err, size_t errlen);

typedef struct {
    unsigned id;   /* function id or job-wide region id; 0: "other" */
    char name[72]; /* "MPI_Allreduce", a region's name, "other (7)" */
    double total;  /* over every rank */
} mw_terrain_col_t;

typedef struct {
    uint32_t rank;
    int col;
    double value;
} mw_terrain_top_t;

/* What the last mw_terrain_update() summed. */
typedef struct {
    mw_terrain_what_t what;
    mw_terrain_metric_t metric;
    uint64_t k0, k1;   /* windows of the range (absolute indexes) */
    uint64_t windows;  /* of them cached and summed */
    uint64_t detailed; /* of them with per-rank entries of this kind */
    uint64_t left_out; /* Window.rank_detail_left_out summed */
    uint64_t bad;      /* entries ignored: a rank outside the job, an unknown id, or a window
                        * whose arrays differ in length (counted per entry of its rank array) */
    uint32_t ranks;    /* the job's size: the rows before aggregation */
    int ncols;         /* columns, "other" included */
    int other;         /* 1: the last column is "other" */
    mw_terrain_col_t cols[MW_TERRAIN_COLS + 1];
    double total; /* the metric over every rank and column */
    double vmax;  /* the largest per-rank cell */
    int ntop;
    mw_terrain_top_t top[MW_TERRAIN_TOP]; /* largest first; named columns only */
    uint64_t gen;                         /* changes whenever the values change */
} mw_terrain_info_t;

typedef struct mw_terrain mw_terrain_t;

mw_terrain_t *mw_terrain_new(void);
void mw_terrain_free(mw_terrain_t *t);
/* Sums the windows of [t0, t1] (seconds on the model's axis) unless they, the job and the
 * choice are those of the last call. Returns 1 when the values changed, 0 when not, -1 when out
 * of memory (the terrain is then empty). */
int mw_terrain_update(mw_terrain_t *t, const mw_model_t *m, double t0, double t1,
                      mw_terrain_what_t what, mw_terrain_metric_t metric);
const mw_terrain_info_t *mw_terrain_info(const mw_terrain_t *t);
/* The value of rank r in column c (0 outside). */
double mw_terrain_value(const mw_terrain_t *t, uint32_t r, int c);

/* The grid aggregated to rows. */
typedef struct {
    uint32_t rows;
    int ncols;
    uint32_t per_row;   /* ranks per row (the last row may hold fewer); 1: not aggregated */
    const double *v;    /* rows x ncols, row-major: the largest value of the row's ranks */
    const uint32_t *at; /* the rank holding it */
    double vmax;
    uint64_t gen; /* changes with the values or the rows */
} mw_terrain_grid_t;

/* Aggregates the last sums into at most max_rows rows (cached). 0, or -1 (nothing, or no
 * memory: g empty). g's arrays are the terrain's: valid until its next update or rows call. */
int mw_terrain_rows(mw_terrain_t *t, uint32_t max_rows, mw_terrain_grid_t *g);
/* The ranks of row y, and the row of rank r. */
void mw_terrain_row_ranks(const mw_terrain_grid_t *g, uint32_t ranks, uint32_t y, uint32_t *first,
                          uint32_t *last);
uint32_t mw_terrain_row_of(const mw_terrain_grid_t *g, uint32_t r);

/* Where v falls on the scale 0..vmax, linear or log(1 + v). */
float mw_terrain_t01(double v, double vmax, int log);

/* The 3D scene: column c spans x [c, c + 1) (a gap at both sides), row y spans z [y d, (y + 1) d)
 * with d = MW_TERRAIN_DEPTH / rows (rank 0 at the back, z = 0), heights up to MW_TERRAIN_HEIGHT. */
#define MW_TERRAIN_DEPTH 10.0f
#define MW_TERRAIN_HEIGHT 5.5f
#define MW_TERRAIN_GAP 0.12f
/* The width of a column: 1, or wider when there are fewer than 12 columns, so that a few
 * regions make a field as wide as a dozen functions. Column c spans x [c w, (c + 1) w). */
float mw_terrain_col_w(int ncols);
/* The box of cell (y, c) (its height from the value). */
void mw_terrain_cell_box(const mw_terrain_grid_t *g, int log, uint32_t y, int c, float lo[3],
                         float hi[3]);
/* A camera framing the scene from the front, above, turned a little so that the columns' sides
 * show, at the distance where the scene fills a viewport of that aspect (w / h). */
void mw_terrain_camera(mw_camera_t *cam, int ncols, float aspect);

/* A click at pixel (x, y) of a w x h viewport showing the scene through cam: the cell whose box
 * the ray through the pixel meets first (empty cells: their floor tile). 1 with *row, *col. */
int mw_terrain_pick_3d(const mw_terrain_grid_t *g, int log, const mw_camera_t *cam, int w, int h,
                       float x, float y, uint32_t *row, int *col);
/* The heat map's cell under pixel (x, y) of plot p (rows from the top, columns left to right). */
int mw_terrain_pick_2d(const mw_terrain_grid_t *g, const mw_rect_t *p, int x, int y, uint32_t *row,
                       int *col);
/* The heat map's pixel rectangle of cell (y, c) in plot p. */
void mw_terrain_cell_rect(const mw_terrain_grid_t *g, const mw_rect_t *p, uint32_t y, int c,
                          float *x0, float *y0, float *x1, float *y1);

#endif
