/* vtk_layout.c: the 3D places of a job's nodes, hardware and ranks (vtk_layout.h).
 *
 * DESIGN: sizes go bottom-up and places top-down. A PU (or any object without children) is a
 * 1 x 1 square; an object's children sit on a grid of equal cells, each as large as the
 * largest child, with the number of columns chosen to make the object as square as possible,
 * and a margin of MW_VTK_PAD around and between them. Because a node's objects come as a flat
 * list in which every object follows its parent, one backward sweep sizes every object and
 * one forward sweep places every child inside its parent: no recursion, whatever the depth.
 * Every pass is linear in the objects of a node (the ranks of each box are summed by one more
 * backward sweep, not by walking up from every rank), and a node whose tree is deeper than
 * MW_MAX_TOPO_DEPTH or that has more than MW_MAX_TOPO_OBJECTS objects (proto/mw_limits.h,
 * what a collector ever sends) is drawn without hardware and counted as bad.
 * The planes (nodes) then sit in rows, about as many rows as columns, left to right.
 *
 * Each node is laid out twice by the same function: once to learn its size (so the rows can
 * be arranged), once to write its rectangles and rank points at its final place. Recomputing
 * is cheaper than keeping every node's temporary arrays, and the layout is made once per
 * export.
 *
 * A rank goes to the PU whose OS index it reported (RankInfo.pu), else to its core or package
 * (logical indices), else to a grid of "loose" ranks below the node's hardware. Several ranks
 * in one object (oversubscription, or a rank known only by its package) share its rectangle
 * on a small grid of their own.
 */
#include "vtk_layout.h"

#include <stdlib.h>
#include <string.h>

#include "mw_limits.h"

#define MW_VTK_PAD 0.25f              /* margin around and between children */
#define MW_VTK_NODE_GAP 2.0f          /* space between planes */
#define MW_VTK_MAX_RANKS (1u << 20)   /* as the collector's MW_MAX_RANKS */
#define MW_VTK_MAX_OBJECTS MW_MAX_TOPO_OBJECTS /* more objects in a node are not believed */

static const char UNPLACED_NAME[] = "(unplaced ranks)";

/* Scratch shared by every node of one layout, sized for the largest node. */
typedef struct {
    const Mpiwatch__JobInfo *job;
    const Mpiwatch__RankInfo **info;  /* [n_ranks]: what the job says about rank r, or NULL */
    uint32_t *plane_head, *rank_next; /* ranks of each plane, ascending: a linked list */
    uint32_t *plane_count;
    float *plane_w, *plane_h;
    int32_t *child, *sibling; /* [objects]: first child, next sibling (-1 none) */
    float *w, *h, *x, *y;     /* [objects]: size and place */
    uint32_t *cols;           /* [objects]: columns of its children's grid */
    uint32_t *in_obj;         /* [objects]: ranks placed directly in it */
    uint32_t *next_slot;      /* [objects]: ranks placed in it so far (second pass) */
    uint64_t *keys;           /* [objects]: type << 32 | index, sorted: the lookup below */
    int32_t *rank_obj;        /* [n_ranks]: the object rank r goes to, -1 loose */
    uint8_t *depth;           /* [MW_VTK_MAX_OBJECTS]: levels above each object, plane_topology */
} mw_vtk_ctx_t;

/* Object lookup: PUs by OS index, cores and packages by logical index. Each key holds the
 * type, the index and the object's position, sorted, so that finding the object of a rank is
 * a binary search even on a node of tens of thousands of objects. */
static uint64_t obj_key(uint32_t type, uint32_t index)
{
    return (uint64_t)type << 60 | (uint64_t)index << 28;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void lookup_build(mw_vtk_ctx_t *c, const Mpiwatch__NodeTopology *t)
{
    for (size_t i = 0; i < t->n_objects; i++) {
        const Mpiwatch__TopoObject *o = t->objects[i];
        c->keys[i] = obj_key(o->type, o->type == 4 ? o->os_index : o->logical) | i;
    }
    qsort(c->keys, t->n_objects, sizeof *c->keys, cmp_u64);
}

/* The first object of that type and index, or -1. */
static int32_t lookup(const mw_vtk_ctx_t *c, size_t n, uint32_t type, int32_t index)
{
    if (index < 0)
        return -1;
    uint64_t want = obj_key(type, (uint32_t)index), mask = ~(((uint64_t)1 << 28) - 1);
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((c->keys[mid] & mask) < want)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && (c->keys[lo] & mask) == want ? (int32_t)(c->keys[lo] & ~mask) : -1;
}

/* Columns and rows of a grid of k cells of cw x ch whose outline is closest to a square, each
 * empty cell counting against it (4 cores go 2 x 2, not 3 + 1); on a tie, more columns. */
static void grid_dims(uint32_t k, float cw, float ch, uint32_t *cols, uint32_t *rows)
{
    uint32_t best = 1;
    float best_score = 0;
    if (k == 0) {
        *cols = *rows = 0;
        return;
    }
    for (uint32_t c = 1; c <= k; c++) {
        uint32_t r = (k + c - 1) / c;
        float w = (float)c * cw + (float)(c + 1) * MW_VTK_PAD;
        float h = (float)r * ch + (float)(r + 1) * MW_VTK_PAD;
        float aspect = w > h ? w / h : h / w;
        float score = aspect * (1 + (float)(c * r - k) / (float)k);
        if (c == 1 || score <= best_score) {
            best = c;
            best_score = score;
        }
        /* Wider than high, further columns only make the outline longer. */
        if (w > h && aspect >= best_score)
            break;
    }
    *cols = best;
    *rows = (k + best - 1) / best;
}

/* The extent of a grid of k cells of cw x ch with its margins. */
static void grid_size(uint32_t k, float cw, float ch, float *w, float *h)
{
    uint32_t cols, rows;
    grid_dims(k, cw, ch, &cols, &rows);
    *w = (float)cols * cw + (float)(cols + 1) * MW_VTK_PAD;
    *h = (float)rows * ch + (float)(rows + 1) * MW_VTK_PAD;
}

/* The centre of cell j of k equal cells spread over a rectangle without margins: how ranks
 * share one object. */
static void share_spot(uint32_t j, uint32_t k, float x0, float y0, float w, float h, float *x,
                       float *y)
{
    uint32_t cols = 1;
    while (cols * cols < k)
        cols++;
    uint32_t rows = (k + cols - 1) / cols;
    *x = x0 + ((float)(j % cols) + 0.5f) * w / (float)cols;
    *y = y0 + ((float)(j / cols) + 0.5f) * h / (float)rows;
}

/* The hardware of a plane when it can be drawn: a node of the job with objects that hold
 * together (known types, every parent before its child, at most MW_MAX_TOPO_DEPTH levels).
 * NULL otherwise. */
static const Mpiwatch__NodeTopology *plane_topology(const mw_vtk_ctx_t *c, uint32_t plane, int *bad)
{
    const Mpiwatch__JobInfo *job = c->job;
    *bad = 0;
    if (!job || plane >= job->n_nodes || !job->nodes[plane])
        return NULL;
    const Mpiwatch__NodeTopology *t = job->nodes[plane];
    if (t->n_objects == 0)
        return NULL;
    if (t->n_objects > MW_VTK_MAX_OBJECTS) {
        *bad = 1;
        return NULL;
    }
    for (size_t i = 0; i < t->n_objects; i++) {
        const Mpiwatch__TopoObject *o = t->objects[i];
        if (!o || o->type < 1 || o->type > 4 || o->parent < -1 || o->parent >= (int32_t)i) {
            *bad = 1;
            return NULL;
        }
        /* Parents come first: one forward pass gives every depth. */
        c->depth[i] = (uint8_t)(o->parent < 0 ? 1 : c->depth[o->parent] + 1);
        if (c->depth[i] > MW_MAX_TOPO_DEPTH) {
            *bad = 1;
            return NULL;
        }
    }
    return t;
}

/* The object a rank goes to: its PU, else its core, else its package; -1 for none. */
static int32_t rank_object(const mw_vtk_ctx_t *c, size_t n, const Mpiwatch__RankInfo *ri)
{
    if (!ri)
        return -1;
    int32_t k = lookup(c, n, 4, ri->pu);
    if (k < 0)
        k = lookup(c, n, 3, ri->core);
    if (k < 0)
        k = lookup(c, n, 1, ri->package);
    return k;
}

/* Adds a box. The array was sized for every box beforehand. */
static mw_vtk_box_t *add_box(mw_vtk_layout_t *l, uint8_t kind, int32_t plane, float x0, float y0,
                             float w, float h)
{
    mw_vtk_box_t *b = &l->boxes[l->n_boxes++];
    b->x0 = x0;
    b->y0 = y0;
    b->x1 = x0 + w;
    b->y1 = y0 + h;
    b->z = MW_VTK_LEVEL_DZ * (float)(kind - MW_VTK_NODE);
    b->kind = kind;
    b->node = plane;
    b->logical = -1;
    b->os_index = -1;
    b->ranks = 0;
    b->bound = 0;
    return b;
}

/* Lays out one plane with its lower left corner at (ox, oy). With emit 0 only its size is
 * computed (into c->plane_w/h); with emit 1 its boxes and rank points are written. */
static void plane_layout(mw_vtk_layout_t *l, mw_vtk_ctx_t *c, uint32_t p, float ox, float oy,
                         int emit)
{
    int bad;
    const Mpiwatch__NodeTopology *t = plane_topology(c, p, &bad);
    uint32_t nr = c->plane_count[p];
    if (!t) {
        /* The ranks on a square grid of PU-sized cells. */
        float w = 1 + 2 * MW_VTK_PAD, h = w;
        uint32_t cols = 0, rows = 0;
        if (nr) {
            grid_size(nr, 1, 1, &w, &h);
            grid_dims(nr, 1, 1, &cols, &rows);
        }
        c->plane_w[p] = w;
        c->plane_h[p] = h;
        if (!emit)
            return;
        if (bad)
            l->bad_nodes++;
        mw_vtk_box_t *nb = add_box(l, MW_VTK_NODE, (int32_t)p, ox, oy, w, h);
        nb->ranks = nr;
        uint32_t j = 0;
        for (uint32_t r = c->plane_head[p]; r != UINT32_MAX; r = c->rank_next[r], j++) {
            mw_vtk_point_t *pt = &l->rank[r];
            pt->x = ox + MW_VTK_PAD + (float)(j % cols) * (1 + MW_VTK_PAD) + 0.5f;
            pt->y = oy + MW_VTK_PAD + (float)(j / cols) * (1 + MW_VTK_PAD) + 0.5f;
            pt->z = MW_VTK_RANK_Z;
            pt->node = (int32_t)p;
            pt->bound = c->info[r] ? c->info[r]->bound : -1;
        }
        return;
    }

    size_t n = t->n_objects;
    /* Which object each rank goes to, and how many go to each. */
    uint32_t loose = 0;
    memset(c->in_obj, 0, n * sizeof *c->in_obj);
    memset(c->next_slot, 0, n * sizeof *c->next_slot);
    lookup_build(c, t);
    for (uint32_t r = c->plane_head[p]; r != UINT32_MAX; r = c->rank_next[r]) {
        c->rank_obj[r] = rank_object(c, n, c->info[r]);
        if (c->rank_obj[r] >= 0)
            c->in_obj[c->rank_obj[r]]++;
        else
            loose++;
    }

    /* Children lists in object order (built backwards by prepending), roots under -1. */
    int32_t roots = -1;
    for (size_t k = n; k-- > 0;)
        c->child[k] = -1;
    for (size_t k = n; k-- > 0;) {
        int32_t parent = t->objects[k]->parent;
        int32_t *head = parent < 0 ? &roots : &c->child[parent];
        c->sibling[k] = *head;
        *head = (int32_t)k;
    }
    /* Sizes, children before parents. */
    for (size_t k = n; k-- > 0;) {
        float cw = 0, ch = 0;
        uint32_t kids = 0;
        for (int32_t q = c->child[k]; q >= 0; q = c->sibling[q], kids++) {
            cw = c->w[q] > cw ? c->w[q] : cw;
            ch = c->h[q] > ch ? c->h[q] : ch;
        }
        if (!kids) {
            c->w[k] = c->h[k] = 1;
            c->cols[k] = 0;
            continue;
        }
        uint32_t rows;
        grid_dims(kids, cw, ch, &c->cols[k], &rows);
        grid_size(kids, cw, ch, &c->w[k], &c->h[k]);
    }
    float rw = 0, rh = 0, cw = 0, ch = 0;
    uint32_t n_roots = 0, root_cols = 0, rows;
    for (int32_t q = roots; q >= 0; q = c->sibling[q], n_roots++) {
        cw = c->w[q] > cw ? c->w[q] : cw;
        ch = c->h[q] > ch ? c->h[q] : ch;
    }
    grid_dims(n_roots, cw, ch, &root_cols, &rows);
    grid_size(n_roots, cw, ch, &rw, &rh);
    /* Loose ranks on a grid of their own below the hardware. */
    float lw = 0, lh = 0;
    uint32_t loose_cols = 0;
    if (loose) {
        grid_size(loose, 1, 1, &lw, &lh);
        grid_dims(loose, 1, 1, &loose_cols, &rows);
    }
    c->plane_w[p] = rw > lw ? rw : lw;
    c->plane_h[p] = rh + (loose ? lh - MW_VTK_PAD : 0);
    if (!emit)
        return;

    l->hw_nodes++;
    size_t base = l->n_boxes + 1; /* box of object k: base + k */
    mw_vtk_box_t *nb = add_box(l, MW_VTK_NODE, (int32_t)p, ox, oy, c->plane_w[p], c->plane_h[p]);
    nb->ranks = nr;
    /* Places, parents before children: each object places its children in its grid. */
    uint32_t j = 0;
    for (int32_t q = roots; q >= 0; q = c->sibling[q], j++) {
        c->x[q] = ox + MW_VTK_PAD + (float)(j % root_cols) * (cw + MW_VTK_PAD) + (cw - c->w[q]) / 2;
        c->y[q] = oy + MW_VTK_PAD + (float)(j / root_cols) * (ch + MW_VTK_PAD) + (ch - c->h[q]) / 2;
    }
    for (size_t k = 0; k < n; k++) {
        const Mpiwatch__TopoObject *o = t->objects[k];
        mw_vtk_box_t *b =
            add_box(l, (uint8_t)(o->type + 1), (int32_t)p, c->x[k], c->y[k], c->w[k], c->h[k]);
        b->logical = o->logical > INT32_MAX ? -1 : (int32_t)o->logical;
        b->os_index = o->os_index > INT32_MAX ? -1 : (int32_t)o->os_index;
        float kw = 0, kh = 0;
        for (int32_t q = c->child[k]; q >= 0; q = c->sibling[q]) {
            kw = c->w[q] > kw ? c->w[q] : kw;
            kh = c->h[q] > kh ? c->h[q] : kh;
        }
        j = 0;
        for (int32_t q = c->child[k]; q >= 0; q = c->sibling[q], j++) {
            uint32_t cc = c->cols[k];
            c->x[q] =
                c->x[k] + MW_VTK_PAD + (float)(j % cc) * (kw + MW_VTK_PAD) + (kw - c->w[q]) / 2;
            c->y[q] =
                c->y[k] + MW_VTK_PAD + (float)(j / cc) * (kh + MW_VTK_PAD) + (kh - c->h[q]) / 2;
        }
    }
    /* The ranks, and the count of ranks in every box that encloses them. */
    j = 0;
    for (uint32_t r = c->plane_head[p]; r != UINT32_MAX; r = c->rank_next[r]) {
        mw_vtk_point_t *pt = &l->rank[r];
        int32_t k = c->rank_obj[r];
        pt->z = MW_VTK_RANK_Z;
        pt->node = (int32_t)p;
        pt->bound = c->info[r] ? c->info[r]->bound : -1;
        if (k < 0) {
            pt->x = ox + MW_VTK_PAD + (float)(j % loose_cols) * (1 + MW_VTK_PAD) + 0.5f;
            pt->y = oy + rh + (float)(j / loose_cols) * (1 + MW_VTK_PAD) + 0.5f;
            j++;
            l->loose++;
            continue;
        }
        const Mpiwatch__RankInfo *ri = c->info[r];
        for (size_t i = 0; ri && i < ri->n_pus; i++) {
            int32_t pu = ri->pus[i] > INT32_MAX ? -1 : lookup(c, n, 4, (int32_t)ri->pus[i]);
            if (pu >= 0)
                l->boxes[base + (size_t)pu].bound++;
        }
        share_spot(c->next_slot[k]++, c->in_obj[k], c->x[k], c->y[k], c->w[k], c->h[k], &pt->x,
                   &pt->y);
    }
    /* Each box counts the ranks in it and in every box inside it: children come after their
     * parent, so a backward sweep adds each finished sum into its parent once. */
    for (size_t k = n; k-- > 0;) {
        l->boxes[base + k].ranks += c->in_obj[k];
        int32_t parent = t->objects[k]->parent;
        if (parent >= 0)
            l->boxes[base + (size_t)parent].ranks += l->boxes[base + k].ranks;
    }
}

static void ctx_free(mw_vtk_ctx_t *c)
{
    free(c->info);
    free(c->plane_head);
    free(c->rank_next);
    free(c->plane_count);
    free(c->plane_w);
    free(c->plane_h);
    free(c->child);
    free(c->sibling);
    free(c->w);
    free(c->h);
    free(c->x);
    free(c->y);
    free(c->cols);
    free(c->in_obj);
    free(c->next_slot);
    free(c->keys);
    free(c->rank_obj);
    free(c->depth);
}

int mw_vtk_layout_build(mw_vtk_layout_t *l, const Mpiwatch__JobInfo *job)
{
    memset(l, 0, sizeof *l);
    mw_vtk_ctx_t c;
    memset(&c, 0, sizeof c);
    c.job = job;

    /* Ranks: the job's size, or more when it lists higher ranks. */
    uint32_t n_ranks = job ? job->size : 0;
    for (size_t i = 0; job && i < job->n_ranks; i++)
        if (job->ranks[i] && job->ranks[i]->rank >= n_ranks)
            n_ranks = job->ranks[i]->rank + 1;
    if (n_ranks > MW_VTK_MAX_RANKS)
        n_ranks = MW_VTK_MAX_RANKS;
    l->n_ranks = n_ranks;

    /* Planes: the job's nodes, else its hosts, plus one for ranks without a place. */
    int by_node = job && job->n_nodes > 0;
    size_t known = job ? (by_node ? job->n_nodes : job->n_hosts) : 0;
    if (known > MW_VTK_MAX_RANKS)
        known = MW_VTK_MAX_RANKS;
    size_t planes = known + 1;
    size_t nr = n_ranks ? n_ranks : 1;
    c.info = calloc(nr, sizeof *c.info);
    c.rank_next = malloc(nr * sizeof *c.rank_next);
    c.rank_obj = malloc(nr * sizeof *c.rank_obj);
    c.plane_head = malloc(planes * sizeof *c.plane_head);
    c.plane_count = calloc(planes, sizeof *c.plane_count);
    c.plane_w = malloc(planes * sizeof *c.plane_w);
    c.plane_h = malloc(planes * sizeof *c.plane_h);
    c.depth = malloc(MW_VTK_MAX_OBJECTS);
    l->node_name = malloc(planes * sizeof *l->node_name);
    l->rank = calloc(nr, sizeof *l->rank);
    if (!c.info || !c.rank_next || !c.rank_obj || !c.plane_head || !c.plane_count || !c.plane_w ||
        !c.plane_h || !c.depth || !l->node_name || !l->rank)
        goto oom;

    for (size_t i = 0; job && i < job->n_ranks; i++) {
        const Mpiwatch__RankInfo *ri = job->ranks[i];
        if (ri && ri->rank < n_ranks)
            c.info[ri->rank] = ri;
    }
    for (size_t p = 0; p < planes; p++)
        c.plane_head[p] = UINT32_MAX;
    for (uint32_t r = n_ranks; r-- > 0;) {
        const Mpiwatch__RankInfo *ri = c.info[r];
        uint32_t p = ri ? (by_node ? ri->node : ri->host) : UINT32_MAX;
        if (p >= known) {
            p = (uint32_t)known;
            l->unplaced++;
        }
        c.rank_next[r] = c.plane_head[p];
        c.plane_head[p] = r;
        c.plane_count[p]++;
    }
    /* Every node is a plane; a host only when ranks run on it (the collector's host list
     * starts with "", its name for an unknown host). Dropping planes keeps the order. */
    uint32_t q = 0;
    for (size_t p = 0; p <= known; p++) {
        if (p == known ? !l->unplaced : !by_node && !c.plane_count[p])
            continue;
        const char *name = UNPLACED_NAME;
        if (p < known)
            name = by_node ? (job->nodes[p] ? job->nodes[p]->node : NULL) : job->hosts[p];
        l->node_name[q] = name ? name : "";
        c.plane_head[q] = c.plane_head[p];
        c.plane_count[q] = c.plane_count[p];
        q++;
    }
    l->n_nodes = q;

    /* Room for the largest node's objects, and for every box. */
    size_t boxes = l->n_nodes, cap = 1;
    for (uint32_t p = 0; p < l->n_nodes; p++) {
        int bad;
        const Mpiwatch__NodeTopology *t = plane_topology(&c, p, &bad);
        if (t) {
            boxes += t->n_objects;
            cap = t->n_objects > cap ? t->n_objects : cap;
        }
    }
    c.child = malloc(cap * sizeof *c.child);
    c.sibling = malloc(cap * sizeof *c.sibling);
    c.w = malloc(cap * sizeof *c.w);
    c.h = malloc(cap * sizeof *c.h);
    c.x = malloc(cap * sizeof *c.x);
    c.y = malloc(cap * sizeof *c.y);
    c.cols = malloc(cap * sizeof *c.cols);
    c.in_obj = malloc(cap * sizeof *c.in_obj);
    c.next_slot = malloc(cap * sizeof *c.next_slot);
    c.keys = malloc(cap * sizeof *c.keys);
    l->boxes = malloc(boxes * sizeof *l->boxes);
    if (!c.child || !c.sibling || !c.w || !c.h || !c.x || !c.y || !c.cols || !c.in_obj ||
        !c.next_slot || !c.keys || (boxes && !l->boxes))
        goto oom;

    /* Sizes, then rows of planes: about as many rows as columns. */
    for (uint32_t p = 0; p < l->n_nodes; p++)
        plane_layout(l, &c, p, 0, 0, 0);
    uint32_t cols = 1;
    while (cols * cols < l->n_nodes)
        cols++;
    float oy = 0;
    for (uint32_t row = 0; row * cols < l->n_nodes; row++) {
        float ox = 0, row_h = 0;
        for (uint32_t p = row * cols; p < l->n_nodes && p < (row + 1) * cols; p++) {
            plane_layout(l, &c, p, ox, oy, 1);
            ox += c.plane_w[p] + MW_VTK_NODE_GAP;
            row_h = c.plane_h[p] > row_h ? c.plane_h[p] : row_h;
        }
        oy += row_h + MW_VTK_NODE_GAP;
    }
    ctx_free(&c);
    return 0;

oom:
    ctx_free(&c);
    mw_vtk_layout_free(l);
    return -1;
}

void mw_vtk_layout_free(mw_vtk_layout_t *l)
{
    free(l->node_name);
    free(l->boxes);
    free(l->rank);
    memset(l, 0, sizeof *l);
}
