/* topo_lines.c: pairs merged into lines and node-to-node bundles (topo_lines.h). */
#include "topo_lines.h"

#include <stdlib.h>
#include <string.h>

/* The pairs of parallel arrays, cut to the shortest (a malformed message cannot make a reader
 * run past one of them). */
static mw_pairs_t pairs_of(size_t n_src, const uint32_t *src, size_t n_dst, const uint32_t *dst,
                           size_t n_messages, const uint64_t *messages, size_t n_bytes,
                           const uint64_t *bytes)
{
    size_t n = n_src;
    n = n_dst < n ? n_dst : n;
    n = n_messages < n ? n_messages : n;
    n = n_bytes < n ? n_bytes : n;
    mw_pairs_t p = {src, dst, messages, bytes, n};
    return p;
}

mw_pairs_t mw_pairs_of_window(const Mpiwatch__Window *w)
{
    mw_pairs_t p = {0};
    return w ? pairs_of(w->n_pair_src, w->pair_src, w->n_pair_dst, w->pair_dst, w->n_pair_messages,
                        w->pair_messages, w->n_pair_bytes, w->pair_bytes)
             : p;
}

mw_pairs_t mw_pairs_of_step(const Mpiwatch__Step *s)
{
    mw_pairs_t p = {0};
    return s ? pairs_of(s->n_pair_src, s->pair_src, s->n_pair_dst, s->pair_dst, s->n_pair_messages,
                        s->pair_messages, s->n_pair_bytes, s->pair_bytes)
             : p;
}

static int cmp_line(const void *a, const void *b)
{
    const mw_topo_line_t *x = a, *y = b;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    if (x->dst != y->dst)
        return x->dst < y->dst ? -1 : 1;
    return 0;
}

static int cmp_bundle(const void *a, const void *b)
{
    const mw_topo_bundle_t *x = a, *y = b;
    if (x->a != y->a)
        return x->a < y->a ? -1 : 1;
    if (x->b != y->b)
        return x->b < y->b ? -1 : 1;
    return 0;
}

void mw_topo_lines_free(mw_topo_lines_t *t)
{
    free(t->lines);
    free(t->bundles);
    free(t->rank_bytes);
    free(t->rank_messages);
    memset(t, 0, sizeof *t);
}

/* The class of a link between nodes a and b (n_nodes: not placed). */
static uint8_t link_class(const mw_topo_layout_t *L, uint32_t a, uint32_t b)
{
    if (a == b && a < L->n_nodes)
        return MW_LINK_INTRA_NODE;
    if (!L->network)
        return MW_LINK_INTRA_SWITCH;
    if (a >= L->n_nodes || b >= L->n_nodes)
        return MW_LINK_INTER_SWITCH;
    int32_t s = L->nodes[a].sw;
    int unknown = s < 0 || (size_t)s >= L->n_switches || L->switches[s].source < 0;
    return !unknown && s == L->nodes[b].sw ? MW_LINK_INTRA_SWITCH : MW_LINK_INTER_SWITCH;
}

static uint32_t node_of(const mw_topo_layout_t *L, uint32_t r)
{
    int32_t g = L->ranks[r].node;
    return g < 0 ? (uint32_t)L->n_nodes : (uint32_t)g;
}

int mw_topo_lines(mw_topo_lines_t *t, const mw_topo_layout_t *L, mw_pairs_t p)
{
    uint32_t n = L->n_ranks;
    if (p.n > t->cap) {
        mw_topo_line_t *v = realloc(t->lines, p.n * sizeof *v);
        mw_topo_bundle_t *b = realloc(t->bundles, p.n * sizeof *b);
        if (v)
            t->lines = v;
        if (b)
            t->bundles = b;
        if (!v || !b)
            return -1;
        t->cap = t->cap_b = p.n;
    }
    if (n > t->rank_cap || !t->rank_bytes) {
        uint64_t *a = realloc(t->rank_bytes, (n ? n : 1) * sizeof *a);
        if (a)
            t->rank_bytes = a;
        uint64_t *m = realloc(t->rank_messages, (n ? n : 1) * sizeof *m);
        if (m)
            t->rank_messages = m;
        if (!a || !m)
            return -1;
        t->rank_cap = n;
    }
    t->n_ranks = n;
    memset(t->rank_bytes, 0, (n ? n : 1) * sizeof *t->rank_bytes);
    memset(t->rank_messages, 0, (n ? n : 1) * sizeof *t->rank_messages);
    t->n_lines = t->intra = t->inter = t->periodic = t->dropped = 0;
    t->n_bundles = t->bundles_intra = t->bundles_inter = 0;
    memset(t->by_class, 0, sizeof t->by_class);
    t->messages = t->bytes = 0;
    for (size_t i = 0; i < p.n; i++) {
        if (p.src[i] >= n || p.dst[i] >= n) {
            t->dropped++;
            continue;
        }
        mw_topo_line_t *l = &t->lines[t->n_lines++];
        memset(l, 0, sizeof *l);
        l->src = p.src[i];
        l->dst = p.dst[i];
        l->messages = p.messages[i];
        l->bytes = p.bytes[i];
    }
    if (t->n_lines > 1)
        qsort(t->lines, t->n_lines, sizeof *t->lines, cmp_line);
    size_t k = 0;
    for (size_t i = 0; i < t->n_lines; i++) {
        if (k && t->lines[k - 1].src == t->lines[i].src && t->lines[k - 1].dst == t->lines[i].dst) {
            t->lines[k - 1].messages += t->lines[i].messages;
            t->lines[k - 1].bytes += t->lines[i].bytes;
        } else {
            t->lines[k++] = t->lines[i];
        }
    }
    t->n_lines = k;
    for (size_t i = 0; i < k; i++) {
        mw_topo_line_t *l = &t->lines[i];
        uint32_t a = node_of(L, l->src), b = node_of(L, l->dst);
        l->inter = a != b || L->ranks[l->src].node < 0;
        l->cls = l->inter ? link_class(L, a, b) : MW_LINK_INTRA_NODE;
        t->by_class[l->cls]++;
        uint32_t dist = l->src > l->dst ? l->src - l->dst : l->dst - l->src;
        l->periodic = (uint64_t)dist * 2 > n;
        t->intra += !l->inter;
        t->inter += l->inter;
        t->periodic += l->periodic;
        t->messages += l->messages;
        t->bytes += l->bytes;
        t->rank_bytes[l->src] += l->bytes;
        t->rank_messages[l->src] += l->messages;
        mw_topo_bundle_t *bd = &t->bundles[i];
        memset(bd, 0, sizeof *bd);
        bd->a = a;
        bd->b = b;
        bd->messages = l->messages;
        bd->bytes = l->bytes;
        bd->pairs = 1;
    }
    if (k > 1)
        qsort(t->bundles, k, sizeof *t->bundles, cmp_bundle);
    size_t nb = 0;
    for (size_t i = 0; i < k; i++) {
        if (nb && t->bundles[nb - 1].a == t->bundles[i].a &&
            t->bundles[nb - 1].b == t->bundles[i].b) {
            t->bundles[nb - 1].messages += t->bundles[i].messages;
            t->bundles[nb - 1].bytes += t->bundles[i].bytes;
            t->bundles[nb - 1].pairs++;
        } else {
            t->bundles[nb++] = t->bundles[i];
        }
    }
    t->n_bundles = nb;
    for (size_t i = 0; i < nb; i++) {
        mw_topo_bundle_t *bd = &t->bundles[i];
        uint32_t d = bd->a > bd->b ? bd->a - bd->b : bd->b - bd->a;
        bd->periodic = (uint64_t)d * 2 > L->n_nodes;
        bd->cls = link_class(L, bd->a, bd->b);
        t->bundles_intra += bd->a == bd->b;
        t->bundles_inter += bd->a != bd->b;
    }
    return 0;
}
