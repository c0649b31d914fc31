/* model_pick.h: what a click at a pixel of the call view or the legend finds. No SDL, no GL.
 */
#ifndef MW_VIEWER_MODEL_PICK_H
#define MW_VIEWER_MODEL_PICK_H

#include "model_layout.h"
#include "model_store.h"
#include "model_view.h"

/* What a click found. */
typedef enum {
    MW_PICK_NONE,
    MW_PICK_CALL,
    MW_PICK_CELL,
    MW_PICK_LEGEND,
    MW_PICK_RANK,   /* a row of the per-rank timeline (rank) */
    MW_PICK_TERRAIN /* a cell of the terrain (model_terrain.h): rank, fn or region, value */
} mw_pick_kind_t;

typedef struct {
    mw_pick_kind_t kind;
    unsigned fn;
    /* MW_PICK_CALL: one recorded long call */
    uint32_t rank;
    int32_t peer;      /* -1 none */
    uint64_t start_ns; /* global */
    uint64_t duration_ns;
    uint64_t bytes;
    char host[64]; /* from the job description; "" unknown */
    /* A call of a traced window (exact: every call of the window is known) */
    int traced;
    int32_t tag;
    uint64_t comm;  /* job-wide communicator id, 0 none */
    unsigned tkind; /* MW_TK_* */
    int open;       /* still in progress: duration_ns is how long so far */
    /* An event of the logical view (model_logical.h): its step and lateness */
    int logical;
    uint64_t step;
    int64_t lateness_ns, diff_ns;
    unsigned lclass; /* MW_LATE_* */
    /* MW_PICK_CELL: a density cell (calls binned by sub-slot and log2 duration) */
    uint64_t cell_t0_ns, cell_t1_ns; /* global time span of the sub-slot */
    uint64_t cell_d0_ns, cell_d1_ns; /* duration span of the bin */
    uint64_t cell_count;
    /* MW_PICK_TERRAIN: the column (fn, or region's id) and its name, the metric's value, the
     * ranks of the cell's row (rank: the one holding the value, the row's largest) */
    int terrain_regions, terrain_metric;
    unsigned region;
    char col_name[72];
    double value;
    uint32_t rank_first, rank_last;
} mw_pick_t;

/* What is at pixel (x, y): a legend entry, else in the call view the nearest recorded long call
 * within `radius` pixels (as drawn by the current representation), else the densest cell
 * under the pixel. */
mw_pick_t mw_pick(const mw_model_t *m, const mw_view_t *v, const mw_layout_t *l, int x, int y,
                  int radius);

#endif
