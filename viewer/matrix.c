/* matrix.c: the communication matrix, binned (matrix.h). */
#include "matrix.h"

#include <stdlib.h>
#include <string.h>

void mw_matrix_free(mw_matrix_t *mx)
{
    free(mx->messages);
    free(mx->bytes);
    free(mx->node_edges);
    memset(mx, 0, sizeof *mx);
}

int mw_matrix_bin_of(const mw_matrix_t *mx, uint32_t r)
{
    if (!mx->n_ranks)
        return 0;
    return (int)((uint64_t)r * (uint64_t)mx->bins / mx->n_ranks);
}

void mw_matrix_bin_ranks(const mw_matrix_t *mx, int b, uint32_t *r0, uint32_t *r1)
{
    uint64_t n = mx->n_ranks, B = (uint64_t)(mx->bins > 0 ? mx->bins : 1);
    /* The smallest r with r * B / n >= b, and one before that of b + 1. */
    *r0 = (uint32_t)(((uint64_t)b * n + B - 1) / B);
    uint64_t next = ((uint64_t)(b + 1) * n + B - 1) / B;
    *r1 = (uint32_t)(next > 0 ? next - 1 : 0);
}

int mw_matrix_bin(mw_matrix_t *mx, mw_pairs_t p, uint32_t n_ranks, int max_bins,
                  const mw_topo_layout_t *L)
{
    int bins = n_ranks < (uint32_t)(max_bins > 0 ? max_bins : 1) ? (int)n_ranks : max_bins;
    if (bins < 1)
        bins = 1;
    size_t cells = (size_t)bins * (size_t)bins;
    if (cells > mx->cap) {
        uint64_t *m = realloc(mx->messages, cells * sizeof *m);
        if (m)
            mx->messages = m;
        uint64_t *b = realloc(mx->bytes, cells * sizeof *b);
        if (b)
            mx->bytes = b;
        int *e = realloc(mx->node_edges, (size_t)(bins + 1) * sizeof *e);
        if (e)
            mx->node_edges = e;
        if (!m || !b || !e)
            return -1;
        mx->cap = cells;
    }
    mx->bins = bins;
    mx->n_ranks = n_ranks;
    memset(mx->messages, 0, cells * sizeof *mx->messages);
    memset(mx->bytes, 0, cells * sizeof *mx->bytes);
    for (size_t i = 0; i < p.n; i++) {
        if (p.src[i] >= n_ranks || p.dst[i] >= n_ranks)
            continue;
        size_t c = (size_t)mw_matrix_bin_of(mx, p.src[i]) * (size_t)bins +
                   (size_t)mw_matrix_bin_of(mx, p.dst[i]);
        mx->messages[c] += p.messages[i];
        mx->bytes[c] += p.bytes[i];
    }
    mx->max_messages = mx->max_bytes = mx->min_messages = mx->min_bytes = 0;
    mx->cells_used = 0;
    for (size_t c = 0; c < cells; c++) {
        if (!mx->messages[c] && !mx->bytes[c])
            continue;
        uint64_t m = mx->messages[c], b = mx->bytes[c];
        if (!mx->cells_used || m < mx->min_messages)
            mx->min_messages = m;
        if (!mx->cells_used || b < mx->min_bytes)
            mx->min_bytes = b;
        mx->max_messages = m > mx->max_messages ? m : mx->max_messages;
        mx->max_bytes = b > mx->max_bytes ? b : mx->max_bytes;
        mx->cells_used++;
    }
    mx->n_edges = 0;
    if (L && L->n_ranks == n_ranks) {
        int last = -1;
        for (uint32_t r = 1; r < n_ranks; r++) {
            if (L->ranks[r].node == L->ranks[r - 1].node)
                continue;
            int b = mw_matrix_bin_of(mx, r);
            if (b != last && mx->n_edges < bins + 1)
                mx->node_edges[mx->n_edges++] = b;
            last = b;
        }
    }
    return 0;
}
