/* topo_lines.h: the per-peer pairs of one window or step as the topology draws them: merged so
 * that every (src, dst) appears once, each classified intra-node or inter-node, and summed into
 * directed node-to-node bundles.
 *
 * DESIGN: part of the mw_topo_layout library (no SDL or GL) with topo_layout.h, because the VTK
 * export writes the same merged pairs as its links that the viewer draws as lines. Lines are
 * rebuilt per window or step: the pairs are copied, sorted by (src, dst) and merged, so every
 * pair is drawn exactly once whatever order or duplicates the input has, and the bundles are
 * sums of those lines, sorted the same way. Deterministic (the snapshot tests rely on it).
 */
#ifndef MW_VIEWER_TOPO_LINES_H
#define MW_VIEWER_TOPO_LINES_H

#include <stddef.h>
#include <stdint.h>

#include "topo_layout.h"

/* The per-peer data of a window or step: parallel arrays of n entries. */
typedef struct {
    const uint32_t *src, *dst;
    const uint64_t *messages, *bytes;
    size_t n;
} mw_pairs_t;

/* The pairs of a window or step, cut to the shortest of its four arrays (a malformed message
 * cannot make a reader run past one of them). */
mw_pairs_t mw_pairs_of_window(const Mpiwatch__Window *w);
mw_pairs_t mw_pairs_of_step(const Mpiwatch__Step *s);

/* A link's class: within a node; between nodes under one switch (without a network: between
 * nodes); between switches (a pair of nodes under different switches, or of which either is
 * under the unknown switch or not placed: nothing says they share one). */
typedef enum {
    MW_LINK_INTRA_NODE = 0,
    MW_LINK_INTRA_SWITCH = 1,
    MW_LINK_INTER_SWITCH = 2,
} mw_topo_link_class_t;

typedef struct {
    uint32_t src, dst;
    uint64_t messages, bytes;
    uint8_t inter;    /* the ranks are on different nodes (or either is not placed) */
    uint8_t cls;      /* mw_topo_link_class_t */
    uint8_t periodic; /* further apart than half the job in rank order */
} mw_topo_line_t;

typedef struct {
    uint32_t a, b; /* sender's and receiver's node */
    uint64_t messages, bytes;
    uint32_t pairs;
    uint8_t periodic; /* further apart than half the nodes */
    uint8_t cls;      /* mw_topo_link_class_t */
} mw_topo_bundle_t;

typedef struct {
    mw_topo_line_t *lines; /* sorted by (src, dst), each pair once */
    size_t n_lines, intra, inter, periodic;
    mw_topo_bundle_t *bundles; /* sorted by (a, b) */
    size_t n_bundles, bundles_intra, bundles_inter;
    size_t by_class[3];       /* lines per mw_topo_link_class_t */
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

#endif
