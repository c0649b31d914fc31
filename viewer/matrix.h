/* matrix.h: the communication matrix view's model: sender x receiver sums of messages and
 * bytes, binned into at most max_bins x max_bins cells of equal rank ranges (exact integer sums
 * per bin), with the bins where a new node starts. No SDL or GL (part of mw_viewer_model).
 */
#ifndef MW_VIEWER_MATRIX_H
#define MW_VIEWER_MATRIX_H

#include <stddef.h>
#include <stdint.h>

#include "topo_layout.h"
#include "topo_lines.h"

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
