/* model_ranks.h: the per-rank timeline (docs/viewer.md, "Per-rank timeline"): one row per
 * rank, calls as coloured spans, matched messages as lines. No SDL, no GL.
 *
 * DESIGN: like the call view, the picture is computed on the CPU into an opacity buffer A and
 * a colour buffer C (row 0 at the bottom, as mw_density_bin's D and C, so that the view draws
 * both through the same shader) and the view only uploads them. Rows: with R ranks and h pixel
 * rows, rank r covers rows [r h / R, (r + 1) h / R) from the top when R <= h; with more ranks
 * than rows, row y aggregates ranks [y R / h, (y + 1) R / h), and a pixel shows the dominant
 * function of the time its ranks spent in MPI there (palette slot, grey for the others) at an
 * opacity that grows with the share of that time in MPI. Windows drawn from summaries show each
 * rank's share of the window in MPI (Window.rank_mpi_permille) in grey, hatched.
 */
#ifndef MW_VIEWER_MODEL_RANKS_H
#define MW_VIEWER_MODEL_RANKS_H

#include "model_layout.h"
#include "model_pick.h"
#include "model_store.h"
#include "model_view.h"

/* A matched message as drawn: from the send record's start (sender's row) to the end of the
 * receive (receiver's row), in plot pixels (x right, y down from the plot's top). */
typedef struct {
    double x0, y0, x1, y1;
    uint32_t src, dst;
    uint64_t send_ns, recv_end_ns; /* global */
} mw_ranks_msg_t;

typedef struct {
    uint32_t ranks;  /* rows' ranks: the job's size */
    int groups;      /* pixel rows used: R when R <= h, else h */
    uint64_t msgs;   /* matched messages with an end in the range */
    size_t msgs_out; /* of them written to the caller's array */
    uint64_t exact_windows, partial_windows, summary_windows;
    double alpha_min; /* opacity of a pixel with any time in MPI */
} mw_ranks_info_t;

#define MW_RANKS_ALPHA_MIN 0.35f
#define MW_RANKS_SUMMARY_ALPHA_MIN 0.12f
/* Colour of summary shading. */
#define MW_RANKS_SUMMARY_R 0.62f
#define MW_RANKS_SUMMARY_G 0.66f
#define MW_RANKS_SUMMARY_B 0.74f

/* Rows [*y0, *y1) of rank r (from the plot's top), fractional. */
void mw_ranks_rows(uint32_t ranks, int h, uint32_t r, double *y0, double *y1);
/* The first rank of pixel row y (and in *last the last one). */
uint32_t mw_ranks_at(uint32_t ranks, int h, int y, uint32_t *last);
/* Bins [t0, t1] (seconds) into A (w x h, opacity 0..1) and C (w x h x 3), row 0 at the bottom;
 * writes up to max_msgs matched messages. Returns 0, or -1 (nothing to draw). */
int mw_ranks_bin(const mw_model_t *m, const mw_view_t *v, double t0, double t1, int w, int h,
                 float *A, float *C, mw_ranks_msg_t *msgs, size_t max_msgs, mw_ranks_info_t *info);
/* A click at plot pixel (x, y) of rect r: the rank under it (MW_PICK_RANK), or the traced call
 * of that rank there (MW_PICK_CALL). */
mw_pick_t mw_ranks_pick(const mw_model_t *m, const mw_view_t *v, const mw_rect_t *r, int x, int y);

#endif
