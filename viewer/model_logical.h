/* model_logical.h: the logical view's data (docs/viewer.md, "Logical view"): the traced windows
 * of the call view's range analysed into logical steps and lateness (proto/mw_logical.h, Ravel's
 * method), and the picture of them: x = logical step, y = rank. No SDL, no GL.
 *
 * DESIGN: the analysis is the one the collector and the exports run: a fresh mw_logical stream
 * gets the traced windows of the range in order (a window without traces is a gap), then a
 * final gap; its events are kept, at most MW_LVIEW_MAX_EVENTS of them (the first ones, in step
 * order; the rest counted). Steps count from the first window of the range, so the same range
 * always gives the same steps. The analysis is cached until the range or the windows' traces
 * change (a signature of the decoded windows), so a frame that changes neither costs nothing.
 *
 * The picture is computed on the CPU into an opacity buffer A and a colour buffer C (row 0 at
 * the bottom, as the per-rank timeline's, so the view draws both through the call view's
 * shader). Columns: with S steps and w pixels, step s covers [s w / S, (s + 1) w / S) when
 * S <= w, its event cell the left part and the computation between a rank's events a thin band
 * in the rest; with more steps than pixels a column aggregates steps. Rows aggregate ranks the
 * same way (mw_ranks_rows). A cell shows the largest lateness (or differential lateness) of its
 * events, on one scale from 0 to the largest in view.
 */
#ifndef MW_VIEWER_MODEL_LOGICAL_H
#define MW_VIEWER_MODEL_LOGICAL_H

#include <stddef.h>
#include <stdint.h>

#include "model_layout.h"
#include "model_pick.h"
#include "model_store.h"
#include "mw_logical.h"

#define MW_LVIEW_MAX_EVENTS                                                                        \
    (1u << 20)                     /* analysed events kept (104 MiB): as many as the               \
                                    * decoded records the viewer keeps by default */
#define MW_LVIEW_MAX_WINDOWS 4096u /* windows of one range analysed */

/* What a cell's colour says. */
typedef enum { MW_LVIEW_LATENESS, MW_LVIEW_DIFF } mw_lview_metric_t;

typedef struct mw_lview mw_lview_t;

/* What the last analysis found. */
typedef struct {
    uint64_t k0, k1;          /* windows of the range */
    uint64_t traced_windows;  /* of them with an exact rank */
    uint64_t events;          /* analysed events kept */
    uint64_t dropped;         /* events over MW_LVIEW_MAX_EVENTS, not kept */
    uint64_t windows_skipped; /* traced windows not analysed: the cap was reached before them */
    uint64_t steps;           /* largest step + 1 */
    uint32_t ranks;           /* rows: the job's size */
    int64_t lateness_max_ns, diff_max_ns;
    int64_t diff_event; /* index (in mw_lview_events) of the event with the largest
                         * differential lateness, -1 none */
    mw_logical_stats_t st;
    uint64_t analyses; /* times the range was analysed */
    int failed;        /* the stream refused a window (no memory, a rank twice) */
} mw_lview_info_t;

mw_lview_t *mw_lview_new(void);
void mw_lview_free(mw_lview_t *lv);
/* The leap merge (MW_LOGICAL_LEAP, on by default: bulk-synchronous codes); off for codes whose
 * ranks communicate rarely (docs/logical.md). A change analyses the range again. */
void mw_lview_set_leap(mw_lview_t *lv, int on);
/* Analyses the windows of [t0, t1] (seconds on the model's axis) unless they are those of the
 * last call and unchanged. Returns 1 when it analysed again, 0 when nothing changed. */
int mw_lview_update(mw_lview_t *lv, const mw_model_t *m, double t0, double t1);
const mw_lview_info_t *mw_lview_info(const mw_lview_t *lv);
/* The kept events, in step order; ids are mw_logical_event_t.id. */
const mw_logical_event_t *mw_lview_events(const mw_lview_t *lv, size_t *n);
/* The kept event with id `id`, or NULL. */
const mw_logical_event_t *mw_lview_event(const mw_lview_t *lv, uint64_t id);

/* A message drawn: from the send's cell to the receive's cell, in plot pixels (y down). */
typedef struct {
    float x0, y0, x1, y1;
    float late; /* the receive's value on the scale, 0..1 */
} mw_lview_msg_t;

/* A collective instance: a vertical line at its step across its ranks' rows. */
typedef struct {
    float x, y0, y1;
} mw_lview_coll_t;

/* The picture of the last analysis in a w x h plot. */
typedef struct {
    int w, h;
    mw_lview_metric_t metric;
    uint64_t steps;                      /* columns' steps: 0 .. steps - 1 */
    uint32_t ranks;                      /* rows' ranks */
    double steps_per_col, ranks_per_row; /* > 1: aggregated */
    double col_w;                        /* pixels per step (<= 1 when aggregated) */
    double cell_w;                       /* pixels of a step's event cell */
    int64_t scale_max_ns; /* the colour scale: 0 .. this (largest value drawn, at least 1) */
    uint64_t msgs, msgs_out, colls, colls_out;
    /* The event with the largest differential lateness: its cell (plot pixels), -1 none. */
    int64_t mark;
    float mark_x0, mark_y0, mark_x1, mark_y1;
    /* The picked event's cell (mw_lview_bin's pick arguments), -1 none. */
    int64_t sel;
    float sel_x0, sel_y0, sel_x1, sel_y1;
} mw_lview_pic_t;

/* The colour of position t (0..1) on the lateness scale. */
mw_rgb_t mw_lview_color(float t);
/* Bins the last analysis into A (w x h, opacity) and C (w x h x 3), row 0 at the bottom, and
 * writes up to max_msgs messages and max_colls collective lines. The event to select is the
 * one of rank sel_rank whose call overlaps [sel_start_ns, sel_end_ns] (global; sel_rank < 0:
 * none). Returns 0, or -1 (nothing analysed: A zero). */
int mw_lview_bin(const mw_lview_t *lv, mw_lview_metric_t metric, int w, int h, float *A, float *C,
                 mw_lview_msg_t *msgs, size_t max_msgs, mw_lview_coll_t *colls, size_t max_colls,
                 int64_t sel_rank, uint64_t sel_start_ns, uint64_t sel_end_ns, mw_lview_pic_t *pic);
/* The step column of plot pixel x and the cell of an event (plot pixels). */
void mw_lview_cell(const mw_lview_pic_t *pic, uint64_t step, uint32_t rank, float *x0, float *y0,
                   float *x1, float *y1);
/* A click at plot pixel (x, y) of a w x h plot as pic was binned: the event of the cell under
 * it with the largest value (MW_PICK_CALL, traced, with its step and lateness), the rank
 * (MW_PICK_RANK) when the cell is empty, else MW_PICK_NONE. */
mw_pick_t mw_lview_pick(const mw_lview_t *lv, const mw_model_t *m, const mw_lview_pic_t *pic, int x,
                        int y);

/* Lateness over time per rank (a strip beside the step view, from the same events): x = time
 * over [g0, g1] (global ns) in w columns, y = rank rows as in mw_lview_bin. Each event's value
 * (lateness or differential lateness, on the scale 0 .. scale_max_ns) covers its rank's row from
 * the end of the rank's previous event to its own end: the time over which it became late (a
 * rank's first event: its own call). Fills A and C (row 0 at the bottom). Returns 0, or -1
 * (nothing analysed). */
int mw_lview_strip(const mw_lview_t *lv, mw_lview_metric_t metric, int64_t scale_max_ns,
                   uint64_t g0, uint64_t g1, int w, int h, float *A, float *C);
/* The event whose span in the strip covers plot pixel (x, y), as mw_lview_pick answers. */
mw_pick_t mw_lview_strip_pick(const mw_lview_t *lv, const mw_model_t *m, mw_lview_metric_t metric,
                              uint64_t g0, uint64_t g1, int w, int h, int x, int y);

/* The screen split of the logical view: the per-rank timeline above (rect `ranks`), the
 * logical plot below (rect `plot`) with its header line at `head_y`, inside the call view's
 * region of l. */
void mw_lview_split(const mw_layout_t *l, mw_rect_t *ranks, mw_rect_t *plot, int *head_y);

#endif
