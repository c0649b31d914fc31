/* topo.c: the topology and matrix views' model (see topo.h for what each part computes).
 *
 * DESIGN: the layout is built once per job description in two passes over every node: the first
 * sizes each node's used hardware bottom-up (objects come after their parents, so walking the
 * list backwards meets children first), which gives the common grid cell of the node planes; the
 * second places the same boxes top-down in that grid, walking the list forwards (a parent is
 * placed before its children). Neither pass recurses, and each is linear in the objects of the
 * node (children are linked lists, objects are found by binary search of sorted keys): a
 * crafted chain of 65,536 objects once overflowed the stack of a recursive placement, and the
 * job description's check (mw_topo_job_check) refuses trees deeper than MW_MAX_TOPO_DEPTH
 * before they get here. Lines are rebuilt per window or step: the
 * pairs are copied, sorted by (src, dst) and merged, so every pair is drawn exactly once whatever
 * order or duplicates the input has, and the node-to-node bundles are sums of those lines,
 * sorted the same way. Everything is deterministic, which is what the snapshot tests rely on.
 */
#include "topo.h"

#include "mw_limits.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAD 0.3f       /* inside a box, around its children */
#define GAP 0.25f      /* between sibling boxes */
#define NODE_GAP 4.0f  /* between node planes */
#define PLANE_T 0.25f  /* a node plane's thickness */
#define RANK_CELL 1.0f /* a rank's square on a node without hardware */

static float fmaxf2(float a, float b)
{
    return a > b ? a : b;
}

/* ---- layout ------------------------------------------------------------------------------- */

typedef struct {
    int *used;                /* per object: 1 when a rank's PU is in it */
    int *first, *next, *last; /* used children, in order */
    int *depth;
    float *w, *d;   /* sizes */
    uint64_t *keys; /* type << 60 | index << 28 | position, sorted: find_obj */
    int n;
} node_work_t;

static void work_free(node_work_t *k)
{
    free(k->keys);
    free(k->used);
    free(k->first);
    free(k->next);
    free(k->last);
    free(k->depth);
    free(k->w);
    free(k->d);
    memset(k, 0, sizeof *k);
}

static int work_alloc(node_work_t *k, int n)
{
    memset(k, 0, sizeof *k);
    size_t c = (size_t)(n > 0 ? n : 1);
    k->n = n;
    k->used = calloc(c, sizeof *k->used);
    k->first = malloc(c * sizeof *k->first);
    k->next = malloc(c * sizeof *k->next);
    k->last = malloc(c * sizeof *k->last);
    k->depth = calloc(c, sizeof *k->depth);
    k->w = calloc(c, sizeof *k->w);
    k->d = calloc(c, sizeof *k->d);
    k->keys = malloc(c * sizeof *k->keys);
    if (!k->used || !k->first || !k->next || !k->last || !k->depth || !k->w || !k->d ||
        !k->keys) {
        work_free(k);
        return -1;
    }
    return 0;
}

/* The columns of a grid of k cells of cw x cd that make it closest to square. */
static int grid_cols(int k, float cw, float cd)
{
    int best = 1;
    double best_q = 1e300;
    for (int cols = 1; cols <= k; cols++) {
        int rows = (k + cols - 1) / cols;
        double w = cols * cw + (cols - 1) * GAP, d = rows * cd + (rows - 1) * GAP;
        double q = fabs(log(w / d));
        if (q < best_q - 1e-9) {
            best_q = q;
            best = cols;
        }
    }
    return best;
}

/* Object lookup: PUs by OS index, other objects by logical index. */
static uint64_t obj_key(uint32_t type, uint32_t idx)
{
    return (uint64_t)(type & 0xf) << 60 | (uint64_t)idx << 28;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Sorts the keys of a node's objects (positions fit in 28 bits: a node has at most
 * MW_MAX_TOPO_OBJECTS of them, which the callers check). */
static void work_keys(node_work_t *k, const Mpiwatch__NodeTopology *nt)
{
    for (int i = 0; i < k->n; i++) {
        const Mpiwatch__TopoObject *o = nt->objects[i];
        k->keys[i] = obj_key(o->type, o->type == MW_TOPO_PU ? o->os_index : o->logical) |
                     (uint64_t)i;
    }
    qsort(k->keys, (size_t)k->n, sizeof *k->keys, cmp_u64);
}

/* The first object (in list order) of `type` with OS index (PUs) or logical index (others)
 * `idx`, or -1: a binary search of the sorted keys. */
static int find_obj(const node_work_t *k, unsigned type, int64_t idx)
{
    if (idx < 0 || idx > UINT32_MAX)
        return -1;
    const uint64_t mask = ~(((uint64_t)1 << 28) - 1), want = obj_key(type, (uint32_t)idx);
    size_t lo = 0, hi = (size_t)k->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((k->keys[mid] & mask) < want)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < (size_t)k->n && (k->keys[lo] & mask) == want ? (int)(k->keys[lo] & ~mask) : -1;
}

/* The object a rank sits on: its PU, else the first PU of its binding, else its core. */
static int rank_obj(const node_work_t *k, const Mpiwatch__RankInfo *ri)
{
    int o = find_obj(k, MW_TOPO_PU, ri->pu);
    for (size_t i = 0; o < 0 && i < ri->n_pus; i++)
        o = find_obj(k, MW_TOPO_PU, ri->pus[i]);
    if (o < 0)
        o = find_obj(k, MW_TOPO_CORE, ri->core);
    return o;
}

/* Marks the used objects of node topology nt and sizes them; returns the number of roots, 0
 * when none is used (the node is then drawn without hardware). */
static int node_size(node_work_t *k, const Mpiwatch__NodeTopology *nt,
                     const Mpiwatch__RankInfo *const *ri, const uint32_t *ranks, uint32_t nr,
                     float *w, float *d)
{
    int n = (int)nt->n_objects;
    work_keys(k, nt);
    for (uint32_t i = 0; i < nr; i++) {
        const Mpiwatch__RankInfo *r = ri[ranks[i]];
        if (!r)
            continue;
        int o = rank_obj(k, r);
        if (o >= 0)
            k->used[o] = 1;
        for (size_t j = 0; j < r->n_pus; j++) {
            int p = find_obj(k, MW_TOPO_PU, r->pus[j]);
            if (p >= 0)
                k->used[p] = 1;
        }
    }
    /* Parents come first: walking backwards carries the marks up. */
    for (int i = n - 1; i >= 0; i--) {
        int p = nt->objects[i]->parent;
        if (k->used[i] && p >= 0 && p < i)
            k->used[p] = 1;
    }
    for (int i = 0; i < n; i++)
        k->first[i] = k->next[i] = k->last[i] = -1;
    int roots = 0;
    for (int i = 0; i < n; i++) {
        if (!k->used[i])
            continue;
        int p = nt->objects[i]->parent;
        if (p >= 0 && p < i) {
            k->depth[i] = k->depth[p] + 1;
            if (k->last[p] < 0)
                k->first[p] = i;
            else
                k->next[k->last[p]] = i;
            k->last[p] = i;
        } else {
            k->depth[i] = 1;
            roots++;
        }
    }
    if (!roots)
        return 0;
    for (int i = n - 1; i >= 0; i--) {
        if (!k->used[i])
            continue;
        if (k->first[i] < 0) {
            k->w[i] = k->d[i] = 1.0f;
            continue;
        }
        float cw = 0, cd = 0;
        int c = 0;
        for (int j = k->first[i]; j >= 0; j = k->next[j], c++) {
            cw = fmaxf2(cw, k->w[j]);
            cd = fmaxf2(cd, k->d[j]);
        }
        int cols = grid_cols(c, cw, cd), rows = (c + cols - 1) / cols;
        k->w[i] = cols * cw + (cols - 1) * GAP + 2 * PAD;
        k->d[i] = rows * cd + (rows - 1) * GAP + 2 * PAD;
    }
    float cw = 0, cd = 0;
    for (int i = 0; i < n; i++)
        if (k->used[i] && k->depth[i] == 1) {
            cw = fmaxf2(cw, k->w[i]);
            cd = fmaxf2(cd, k->d[i]);
        }
    int cols = grid_cols(roots, cw, cd), rows = (roots + cols - 1) / cols;
    *w = cols * cw + (cols - 1) * GAP + 2 * PAD;
    *d = rows * cd + (rows - 1) * GAP + 2 * PAD;
    return roots;
}

static void grid_place(float x0, float z0, int c, int cols, float cw, float cd, float *x, float *z)
{
    int col = c % cols, row = c / cols;
    *x = x0 + PAD + col * (cw + GAP);
    *z = z0 + PAD + row * (cd + GAP);
}

/* Places the children of object i (or the roots, i = -1, whose list starts at `head`) on a
 * grid inside the area starting at (x0, z0): their corners go to ox, oz. */
static void place_grid(node_work_t *k, int head, float x0, float z0, float *ox, float *oz)
{
    int c = 0;
    float cw = 0, cd = 0;
    for (int j = head; j >= 0; j = k->next[j], c++) {
        cw = fmaxf2(cw, k->w[j]);
        cd = fmaxf2(cd, k->d[j]);
    }
    int cols = grid_cols(c, cw, cd), idx = 0;
    for (int j = head; j >= 0; j = k->next[j]) {
        float cx, cz;
        grid_place(x0, z0, idx++, cols, cw, cd, &cx, &cz);
        ox[j] = cx + (cw - k->w[j]) / 2;
        oz[j] = cz + (cd - k->d[j]) / 2;
    }
}

/* Places the used hardware of a node whose plane starts at (x0, z0) and adds its boxes, parents
 * first, in list order. No recursion (see DESIGN): the roots are placed on the plane, then each
 * object, met after its parent, places its own children. Returns the deepest level placed. */
static int place_node(mw_topo_layout_t *L, node_work_t *k, const Mpiwatch__NodeTopology *nt,
                      uint32_t node, float x0, float z0, float *ox, float *oz)
{
    int n = (int)nt->n_objects, roots = -1, last = -1, deepest = 0;
    for (int j = 0; j < n; j++) {
        if (!k->used[j] || k->depth[j] != 1)
            continue;
        k->next[j] = -1; /* roots are linked through next too: they have no siblings */
        if (last < 0)
            roots = j;
        else
            k->next[last] = j;
        last = j;
    }
    place_grid(k, roots, x0, z0, ox, oz);
    for (int j = 0; j < n; j++) {
        if (!k->used[j])
            continue;
        mw_topo_box_t *b = &L->boxes[L->n_boxes++];
        unsigned type = nt->objects[j]->type;
        b->type = (uint8_t)(type >= 1 && type <= 4 ? type : MW_TOPO_CORE);
        b->node = node;
        b->logical = nt->objects[j]->logical;
        b->lo[0] = ox[j];
        b->lo[2] = oz[j];
        b->hi[0] = ox[j] + k->w[j];
        b->hi[2] = oz[j] + k->d[j];
        b->lo[1] = MW_TOPO_PLANE_Y + (float)(k->depth[j] - 1) * MW_TOPO_LEVEL_H;
        b->hi[1] = b->lo[1] + MW_TOPO_LEVEL_H;
        L->boxes_of_type[b->type]++;
        if (k->depth[j] > deepest)
            deepest = k->depth[j];
        if (k->first[j] >= 0)
            place_grid(k, k->first[j], ox[j], oz[j], ox, oz);
    }
    return deepest;
}

/* A string field within MW_MAX_STRING bytes (NULL counts as empty). */
static int short_text(const char *t)
{
    return !t || strnlen(t, MW_MAX_STRING + 1) <= MW_MAX_STRING;
}

int mw_topo_job_check(const Mpiwatch__JobInfo *job, char *err, size_t errlen)
{
    if (!job) {
        snprintf(err, errlen, "no job description");
        return -1;
    }
    if (job->size > MW_MAX_RANKS || job->n_ranks > job->size) {
        snprintf(err, errlen, "%u ranks described in a job of %u (at most %u)",
                 (unsigned)job->n_ranks, job->size, MW_MAX_RANKS);
        return -1;
    }
    if (!short_text(job->job) || !short_text(job->program) || !short_text(job->mpi_library) ||
        !short_text(job->state)) {
        snprintf(err, errlen, "a string over %u bytes", MW_MAX_STRING);
        return -1;
    }
    if (job->n_hosts + (uint64_t)job->n_nodes > MW_JOB_MAX_NAMES) {
        snprintf(err, errlen, "%zu hosts and %zu nodes (at most %u names)", job->n_hosts,
                 job->n_nodes, MW_JOB_MAX_NAMES);
        return -1;
    }
    uint64_t bytes = 0, pus = 0, objects = 0;
    for (size_t i = 0; i < job->n_hosts; i++) {
        if (!short_text(job->hosts[i])) {
            snprintf(err, errlen, "host %zu: a name over %u bytes", i, MW_MAX_STRING);
            return -1;
        }
        bytes += job->hosts[i] ? strlen(job->hosts[i]) : 0;
    }
    for (size_t i = 0; i < job->n_ranks; i++) {
        const Mpiwatch__RankInfo *r = job->ranks[i];
        if (!r || r->rank >= job->size || r->n_pus > MW_MAX_PUS) {
            snprintf(err, errlen, "rank entry %zu: rank out of range or over %u PUs", i,
                     MW_MAX_PUS);
            return -1;
        }
        pus += r->n_pus;
    }
    if (pus > MW_JOB_MAX_PUS) {
        snprintf(err, errlen, "%llu PUs in all (at most %u)", (unsigned long long)pus,
                 MW_JOB_MAX_PUS);
        return -1;
    }
    uint8_t *depth = NULL;
    for (size_t g = 0; g < job->n_nodes; g++) {
        const Mpiwatch__NodeTopology *nt = job->nodes[g];
        if (!nt)
            continue;
        if (!short_text(nt->node)) {
            snprintf(err, errlen, "node %zu: a name over %u bytes", g, MW_MAX_STRING);
            goto fail;
        }
        bytes += nt->node ? strlen(nt->node) : 0;
        objects += nt->n_objects;
        if (nt->n_objects > MW_MAX_TOPO_OBJECTS || objects > MW_JOB_MAX_TOPO_OBJECTS) {
            snprintf(err, errlen, "node %zu: %zu hardware objects (at most %u, %u in all)", g,
                     nt->n_objects, MW_MAX_TOPO_OBJECTS, MW_JOB_MAX_TOPO_OBJECTS);
            goto fail;
        }
        if (!depth && nt->n_objects && !(depth = malloc(MW_MAX_TOPO_OBJECTS))) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
        /* Depth by one forward pass (a parent comes first; one that does not is a root, as
         * the layout takes it). */
        for (size_t i = 0; i < nt->n_objects; i++) {
            const Mpiwatch__TopoObject *o = nt->objects[i];
            if (!o) {
                snprintf(err, errlen, "node %zu: a missing object", g);
                goto fail;
            }
            depth[i] = o->parent >= 0 && (size_t)o->parent < i ? depth[o->parent] + 1 : 1;
            if (depth[i] > MW_MAX_TOPO_DEPTH) {
                snprintf(err, errlen, "node %zu: hardware deeper than %u levels", g,
                         MW_MAX_TOPO_DEPTH);
                goto fail;
            }
        }
    }
    free(depth);
    if (bytes > MW_JOB_MAX_NAME_BYTES) {
        snprintf(err, errlen, "%llu bytes of names (at most %u)", (unsigned long long)bytes,
                 MW_JOB_MAX_NAME_BYTES);
        return -1;
    }
    return 0;
fail:
    free(depth);
    return -1;
}

void mw_topo_layout_free(mw_topo_layout_t *L)
{
    free(L->nodes);
    free(L->boxes);
    free(L->ranks);
    memset(L, 0, sizeof *L);
}

int mw_topo_layout(mw_topo_layout_t *L, const Mpiwatch__JobInfo *job)
{
    memset(L, 0, sizeof *L);
    if (!job || !job->size)
        return 0;
    /* The per-rank arrays below are sized by the claimed job size, so a claim over the cap a
     * collector keeps to (MW_MAX_RANKS) is refused here too, before any allocation, whoever
     * calls: one 28-byte feed message claiming 10^8 ranks made the old layout allocate 2.4 GB
     * and run for 25 s, and 4*10^9 ranks asked for one 32 GB calloc. Under the cap the layout
     * holds at most about 36 bytes per rank (36 MiB), whatever the message's size. */
    if (job->size > MW_MAX_RANKS)
        return -2;
    uint32_t n = job->size;
    int have_nodes = job->n_nodes > 0;
    size_t groups = have_nodes ? job->n_nodes : job->n_hosts;
    const Mpiwatch__RankInfo **ri = calloc(n, sizeof *ri);
    uint32_t *group = malloc(n * sizeof *group);
    uint32_t *count = NULL, *start = NULL, *order = NULL;
    float *nw = NULL, *nd = NULL;
    int rc = -1;
    L->ranks = calloc(n, sizeof *L->ranks);
    if (!ri || !group || !L->ranks)
        goto out;
    L->n_ranks = n;
    for (size_t i = 0; i < job->n_ranks; i++) {
        const Mpiwatch__RankInfo *r = job->ranks[i];
        if (r && r->rank < n)
            ri[r->rank] = r;
    }
    /* Ranks without a description (or naming no node) go to one extra plane at the end. */
    int extra = 0;
    for (uint32_t r = 0; r < n; r++) {
        uint32_t g = (uint32_t)groups;
        if (ri[r])
            g = have_nodes ? ri[r]->node : ri[r]->host;
        if (g >= groups) {
            g = (uint32_t)groups;
            extra = 1;
        }
        group[r] = g;
    }
    size_t G = groups + (size_t)extra;
    count = calloc(G + 1, sizeof *count);
    start = calloc(G + 1, sizeof *start);
    order = malloc(n * sizeof *order);
    nw = calloc(G, sizeof *nw);
    nd = calloc(G, sizeof *nd);
    L->nodes = calloc(G ? G : 1, sizeof *L->nodes);
    if (!count || !start || !order || !nw || !nd || !L->nodes)
        goto out;
    L->n_nodes = G;
    for (uint32_t r = 0; r < n; r++)
        count[group[r]]++;
    for (size_t g = 1; g <= G; g++)
        start[g] = start[g - 1] + count[g - 1];
    {
        uint32_t *fill = calloc(G + 1, sizeof *fill);
        if (!fill)
            goto out;
        for (uint32_t r = 0; r < n; r++)
            order[start[group[r]] + fill[group[r]]++] = r;
        free(fill);
    }

    /* Pass 1: sizes. */
    size_t max_boxes = G;
    L->fallback = 1;
    for (size_t g = 0; g < G; g++) {
        mw_topo_node_t *nd_ = &L->nodes[g];
        nd_->ranks = count[g];
        if (g < groups && have_nodes && job->nodes[g] && job->nodes[g]->node)
            snprintf(nd_->name, sizeof nd_->name, "%s", job->nodes[g]->node);
        else if (g < groups && !have_nodes && job->hosts[g])
            snprintf(nd_->name, sizeof nd_->name, "%s", job->hosts[g]);
        else
            snprintf(nd_->name, sizeof nd_->name, "%s", g < groups ? "node" : "unplaced");
        const Mpiwatch__NodeTopology *nt = g < groups && have_nodes ? job->nodes[g] : NULL;
        /* Positions in the lookup keys take 28 bits: more objects are not believed. */
        if (nt && nt->n_objects && nt->n_objects <= MW_MAX_TOPO_OBJECTS && count[g]) {
            node_work_t k;
            if (work_alloc(&k, (int)nt->n_objects) < 0)
                goto out;
            if (node_size(&k, nt, ri, order + start[g], count[g], &nw[g], &nd[g]) > 0) {
                nd_->hardware = 1;
                L->fallback = 0;
                max_boxes += nt->n_objects;
            }
            work_free(&k);
        }
        if (!nd_->hardware) {
            int k = (int)count[g];
            int cols = k ? (int)ceil(sqrt((double)k)) : 1, rows = k ? (k + cols - 1) / cols : 1;
            nw[g] = cols * RANK_CELL + (cols - 1) * GAP + 2 * PAD;
            nd[g] = rows * RANK_CELL + (rows - 1) * GAP + 2 * PAD;
        }
    }
    float cw = 0, cd = 0;
    for (size_t g = 0; g < G; g++) {
        cw = fmaxf2(cw, nw[g]);
        cd = fmaxf2(cd, nd[g]);
    }
    cw += NODE_GAP;
    cd += NODE_GAP;
    L->cell_w = cw;
    L->cell_d = cd;
    int cols = G ? grid_cols((int)G, cw, cd) : 1, rows = G ? ((int)G + cols - 1) / cols : 1;
    L->cols = cols;
    float W = cols * cw, D = rows * cd;
    L->boxes = calloc(max_boxes ? max_boxes : 1, sizeof *L->boxes);
    if (!L->boxes)
        goto out;

    /* The planes first, so that box i < n_nodes is node i's plane. */
    for (size_t g = 0; g < G; g++) {
        float x0 = -W / 2 + (float)(g % (size_t)cols) * cw + (cw - nw[g]) / 2;
        float z0 = -D / 2 + (float)(g / (size_t)cols) * cd + (cd - nd[g]) / 2;
        mw_topo_node_t *p = &L->nodes[g];
        p->lo[0] = x0;
        p->lo[1] = MW_TOPO_PLANE_Y - PLANE_T;
        p->lo[2] = z0;
        p->hi[0] = x0 + nw[g];
        p->hi[1] = MW_TOPO_PLANE_Y;
        p->hi[2] = z0 + nd[g];
        mw_topo_box_t *b = &L->boxes[L->n_boxes++];
        memcpy(b->lo, p->lo, sizeof b->lo);
        memcpy(b->hi, p->hi, sizeof b->hi);
        b->type = MW_TOPO_NODE;
        b->node = (uint32_t)g;
        b->logical = (uint32_t)g;
        L->boxes_of_type[MW_TOPO_NODE]++;
    }

    /* Pass 2: boxes and ranks. */
    int levels = 4; /* the deepest hardware placed: the scene's height */
    for (size_t g = 0; g < G; g++) {
        mw_topo_node_t *p = &L->nodes[g];
        const uint32_t *rk = order + start[g];
        if (p->hardware) {
            const Mpiwatch__NodeTopology *nt = job->nodes[g];
            node_work_t k;
            float w_ = 0, d_ = 0;
            float *ox = calloc(nt->n_objects, sizeof *ox), *oz = calloc(nt->n_objects, sizeof *oz);
            uint32_t *stack = calloc(nt->n_objects, sizeof *stack);
            if (!ox || !oz || !stack || work_alloc(&k, (int)nt->n_objects) < 0) {
                free(ox);
                free(oz);
                free(stack);
                goto out;
            }
            node_size(&k, nt, ri, rk, count[g], &w_, &d_);
            int deep = place_node(L, &k, nt, (uint32_t)g, p->lo[0], p->lo[2], ox, oz);
            if (deep > levels)
                levels = deep;
            for (uint32_t i = 0; i < count[g]; i++) {
                mw_topo_rank_t *t = &L->ranks[rk[i]];
                t->node = (int32_t)g;
                int o = ri[rk[i]] ? rank_obj(&k, ri[rk[i]]) : -1;
                if (o < 0 || !k.used[o]) {
                    /* A rank whose PU is unknown: at the plane's near left corner. */
                    t->pos[0] = p->lo[0] + 0.5f;
                    t->pos[1] = MW_TOPO_PLANE_Y + (float)stack[0] * MW_TOPO_MARKER_H;
                    t->pos[2] = p->hi[2] - 0.5f;
                    stack[0]++;
                    continue;
                }
                t->pos[0] = ox[o] + k.w[o] / 2;
                t->pos[2] = oz[o] + k.d[o] / 2;
                t->pos[1] = MW_TOPO_PLANE_Y + (float)k.depth[o] * MW_TOPO_LEVEL_H +
                            (float)stack[o] * MW_TOPO_MARKER_H;
                stack[o]++;
            }
            free(ox);
            free(oz);
            free(stack);
            work_free(&k);
        } else {
            int kk = (int)count[g];
            int c = kk ? (int)ceil(sqrt((double)kk)) : 1;
            for (uint32_t i = 0; i < count[g]; i++) {
                float x, z;
                grid_place(p->lo[0], p->lo[2], (int)i, c, RANK_CELL, RANK_CELL, &x, &z);
                mw_topo_rank_t *t = &L->ranks[rk[i]];
                t->node = (int32_t)g;
                t->pos[0] = x + RANK_CELL / 2;
                t->pos[1] = MW_TOPO_PLANE_Y;
                t->pos[2] = z + RANK_CELL / 2;
            }
        }
    }
    L->lo[0] = -W / 2;
    L->hi[0] = W / 2;
    L->lo[2] = -D / 2;
    L->hi[2] = D / 2;
    L->lo[1] = MW_TOPO_PLANE_Y - PLANE_T;
    L->hi[1] = MW_TOPO_PLANE_Y + (float)levels * MW_TOPO_LEVEL_H + MW_TOPO_MARKER_H;
    rc = 0;
out:
    free(ri);
    free(group);
    free(count);
    free(start);
    free(order);
    free(nw);
    free(nd);
    if (rc < 0)
        mw_topo_layout_free(L);
    return rc;
}

/* ---- pairs and lines ---------------------------------------------------------------------- */

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
        t->bundles_intra += bd->a == bd->b;
        t->bundles_inter += bd->a != bd->b;
    }
    return 0;
}

/* ---- colors ------------------------------------------------------------------------------- */

static const char *const color_names[MW_TOPO_COLOR_COUNT] = {"messages", "bytes", "src", "dst"};

const char *mw_topo_color_name(mw_topo_color_t c)
{
    return (unsigned)c < MW_TOPO_COLOR_COUNT ? color_names[c] : "?";
}

int mw_topo_color_of(const char *name)
{
    for (int i = 0; i < MW_TOPO_COLOR_COUNT; i++)
        if (!strcmp(name, color_names[i]))
            return i;
    return -1;
}

float mw_scale_t01(const mw_scale_t *s, double v)
{
    double t;
    if (s->log && !s->ranks) {
        if (!(v > 0) || !(s->min > 0))
            return 0;
        t = s->max > s->min ? log(v / s->min) / log(s->max / s->min) : 1;
    } else {
        t = s->max > s->min ? (v - s->min) / (s->max - s->min) : 1;
    }
    return t < 0 ? 0 : t > 1 ? 1 : (float)t;
}

mw_rgb_t mw_ramp(float t)
{
    /* Blue (little) through cyan, green and yellow to red (most): readable on the dark
     * background at both ends. */
    static const float stop[5][3] = {{0.25f, 0.40f, 0.95f},
                                     {0.10f, 0.75f, 0.90f},
                                     {0.35f, 0.85f, 0.35f},
                                     {0.98f, 0.85f, 0.20f},
                                     {0.95f, 0.25f, 0.20f}};
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    float x = t * 4;
    int i = (int)x;
    if (i > 3)
        i = 3;
    float f = x - (float)i;
    mw_rgb_t c = {stop[i][0] + (stop[i + 1][0] - stop[i][0]) * f,
                  stop[i][1] + (stop[i + 1][1] - stop[i][1]) * f,
                  stop[i][2] + (stop[i + 1][2] - stop[i][2]) * f};
    return c;
}

mw_rgb_t mw_hue_ramp(float t)
{
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    float h = t * 5.0f; /* red through magenta, not back to red */
    int i = (int)h;
    float f = h - (float)i, v = 1.0f, s = 0.75f;
    float p = v * (1 - s), q = v * (1 - s * f), u = v * (1 - s * (1 - f));
    mw_rgb_t c;
    switch (i) {
    case 0:
        c = (mw_rgb_t){v, u, p};
        break;
    case 1:
        c = (mw_rgb_t){q, v, p};
        break;
    case 2:
        c = (mw_rgb_t){p, v, u};
        break;
    case 3:
        c = (mw_rgb_t){p, q, v};
        break;
    default:
        c = (mw_rgb_t){u, p, v};
        break;
    }
    return c;
}

mw_rgb_t mw_scale_color(const mw_scale_t *s, double v)
{
    float t = mw_scale_t01(s, v);
    return s->ranks ? mw_hue_ramp(t) : mw_ramp(t);
}

double mw_topo_line_value(const mw_topo_lines_t *t, int bundled, size_t i, mw_topo_color_t c)
{
    if (bundled) {
        const mw_topo_bundle_t *b = &t->bundles[i];
        switch (c) {
        case MW_TOPO_COLOR_MESSAGES:
            return (double)b->messages;
        case MW_TOPO_COLOR_BYTES:
            return (double)b->bytes;
        case MW_TOPO_COLOR_SRC:
            return b->a;
        default:
            return b->b;
        }
    }
    const mw_topo_line_t *l = &t->lines[i];
    switch (c) {
    case MW_TOPO_COLOR_MESSAGES:
        return (double)l->messages;
    case MW_TOPO_COLOR_BYTES:
        return (double)l->bytes;
    case MW_TOPO_COLOR_SRC:
        return l->src;
    default:
        return l->dst;
    }
}

mw_scale_t mw_topo_line_scale(const mw_topo_lines_t *t, int bundled, mw_topo_color_t c, int log)
{
    mw_scale_t s = {0, 0, log, 0};
    size_t n = bundled ? t->n_bundles : t->n_lines;
    if (c == MW_TOPO_COLOR_SRC || c == MW_TOPO_COLOR_DST) {
        /* Rank (bundles: node) numbers: the whole range, so a color means the same rank in
         * every window. */
        s.ranks = 1;
        s.log = 0;
        s.min = 0;
        if (bundled) {
            uint32_t mx = 0;
            for (size_t i = 0; i < n; i++) {
                uint32_t v = c == MW_TOPO_COLOR_SRC ? t->bundles[i].a : t->bundles[i].b;
                mx = v > mx ? v : mx;
            }
            s.max = mx;
        } else {
            s.max = t->n_ranks ? t->n_ranks - 1 : 0;
        }
        return s;
    }
    int any = 0;
    for (size_t i = 0; i < n; i++) {
        double v = mw_topo_line_value(t, bundled, i, c);
        if (log && !(v > 0))
            continue;
        if (!any || v < s.min)
            s.min = v;
        if (!any || v > s.max)
            s.max = v;
        any = 1;
    }
    return s;
}

mw_scale_t mw_topo_rank_scale(const mw_topo_lines_t *t)
{
    mw_scale_t s = {0, 0, 1, 0};
    int any = 0;
    for (uint32_t r = 0; r < t->n_ranks; r++) {
        double v = (double)t->rank_bytes[r];
        if (!(v > 0))
            continue;
        if (!any || v < s.min)
            s.min = v;
        if (!any || v > s.max)
            s.max = v;
        any = 1;
    }
    return s;
}

/* ---- curves ------------------------------------------------------------------------------- */

/* Distance from p along the horizontal direction (dx, dz) to where it leaves the box. */
static float exit_distance(const mw_topo_layout_t *L, const float p[3], float dx, float dz)
{
    float best = 1e30f;
    if (dx > 1e-6f)
        best = fminf(best, (L->hi[0] - p[0]) / dx);
    if (dx < -1e-6f)
        best = fminf(best, (L->lo[0] - p[0]) / dx);
    if (dz > 1e-6f)
        best = fminf(best, (L->hi[2] - p[2]) / dz);
    if (dz < -1e-6f)
        best = fminf(best, (L->lo[2] - p[2]) / dz);
    return best < 0 ? 0 : best > 1e29f ? 0 : best;
}

static void node_centre(const mw_topo_layout_t *L, uint32_t g, float out[3])
{
    const mw_topo_node_t *n = &L->nodes[g];
    out[0] = (n->lo[0] + n->hi[0]) / 2;
    out[1] = L->hi[1] + 0.4f;
    out[2] = (n->lo[2] + n->hi[2]) / 2;
}

int mw_topo_curves(const mw_topo_layout_t *L, const mw_topo_lines_t *t, int bundled, size_t i,
                   int periodic, mw_rgb_t color, mw_topo_curve_t out[2])
{
    mw_topo_curve_t c;
    memset(&c, 0, sizeof c);
    c.rgb[0] = color.r;
    c.rgb[1] = color.g;
    c.rgb[2] = color.b;
    c.t0 = 0;
    c.t1 = 1;
    int wrap = 0;
    if (bundled) {
        const mw_topo_bundle_t *b = &t->bundles[i];
        if (b->a >= L->n_nodes || b->b >= L->n_nodes)
            return 0;
        node_centre(L, b->a, c.p0);
        node_centre(L, b->b, c.p1);
        c.p1[1] += MW_TOPO_MARKER_H;
        c.inter = b->a != b->b;
        if (b->a == b->b) {
            /* A node's own traffic: a loop over the node, in the direction of its row. */
            c.p0[0] -= L->cell_w * 0.25f;
            c.p1[0] += L->cell_w * 0.25f;
        }
        wrap = periodic && b->periodic;
    } else {
        const mw_topo_line_t *l = &t->lines[i];
        memcpy(c.p0, L->ranks[l->src].pos, sizeof c.p0);
        memcpy(c.p1, L->ranks[l->dst].pos, sizeof c.p1);
        c.p1[1] += MW_TOPO_MARKER_H;
        c.inter = l->inter;
        wrap = periodic && l->periodic;
    }
    float dx = c.p1[0] - c.p0[0], dz = c.p1[2] - c.p0[2];
    float dist = sqrtf(dx * dx + dz * dz);
    if (c.inter) {
        c.height = 0.22f * dist + 2.5f;
        c.side = 0.06f * dist;
    } else {
        c.height = 0.3f * dist + 0.6f;
        c.side = 0.12f * dist + (dist < 1e-3f ? 0.4f : 0);
    }
    if (!wrap || dist < 1e-3f) {
        out[0] = c;
        return 1;
    }
    /* Periodic: two stubs leaving the scene, away from the partner, each half of the line. */
    float ux = dx / dist, uz = dz / dist;
    mw_topo_curve_t a = c, b = c;
    float la = exit_distance(L, c.p0, -ux, -uz) + 2.0f;
    a.p1[0] = c.p0[0] - ux * la;
    a.p1[1] = c.p0[1] + 1.0f;
    a.p1[2] = c.p0[2] - uz * la;
    a.height = 0.15f * la + 0.5f;
    a.side = 0;
    a.t0 = 0;
    a.t1 = 0.5f;
    float lb = exit_distance(L, c.p1, ux, uz) + 2.0f;
    b.p0[0] = c.p1[0] + ux * lb;
    b.p0[1] = c.p1[1] + 1.0f;
    b.p0[2] = c.p1[2] + uz * lb;
    b.height = 0.15f * lb + 0.5f;
    b.side = 0;
    b.t0 = 0.5f;
    b.t1 = 1;
    out[0] = a;
    out[1] = b;
    return 2;
}

void mw_topo_curve_point(const mw_topo_curve_t *c, float s, float out[3])
{
    float dx = c->p1[0] - c->p0[0], dz = c->p1[2] - c->p0[2];
    float len = sqrtf(dx * dx + dz * dz);
    float rx = 1, rz = 0;
    if (len > 1e-6f) {
        rx = -dz / len;
        rz = dx / len;
    }
    float bump = 4 * s * (1 - s);
    out[0] = c->p0[0] + dx * s + rx * c->side * bump;
    out[1] = c->p0[1] + (c->p1[1] - c->p0[1]) * s + c->height * bump;
    out[2] = c->p0[2] + dz * s + rz * c->side * bump;
}

/* ---- camera ------------------------------------------------------------------------------- */

#define DEG (3.14159265358979f / 180.0f)

void mw_camera_fit(mw_camera_t *c, const mw_topo_layout_t *L)
{
    memset(c, 0, sizeof *c);
    c->fov = 40;
    c->yaw = -20;
    c->pitch = 48;
    float w = L->hi[0] - L->lo[0], d = L->hi[2] - L->lo[2];
    float r = 0.5f * sqrtf(w * w + d * d);
    if (r < 2)
        r = 2;
    c->target[0] = (L->lo[0] + L->hi[0]) / 2;
    c->target[1] = 0;
    c->target[2] = (L->lo[2] + L->hi[2]) / 2;
    c->distance = r / sinf(c->fov / 2 * DEG);
}

void mw_camera_eye(const mw_camera_t *c, float out[3])
{
    float p = c->pitch * DEG, y = c->yaw * DEG;
    out[0] = c->target[0] + c->distance * cosf(p) * sinf(y);
    out[1] = c->target[1] + c->distance * sinf(p);
    out[2] = c->target[2] + c->distance * cosf(p) * cosf(y);
}

static void mat_mul(const float a[16], const float b[16], float out[16])
{
    float r[16];
    for (int col = 0; col < 4; col++)
        for (int row = 0; row < 4; row++) {
            float s = 0;
            for (int k = 0; k < 4; k++)
                s += a[k * 4 + row] * b[col * 4 + k];
            r[col * 4 + row] = s;
        }
    memcpy(out, r, sizeof r);
}

void mw_camera_matrix(const mw_camera_t *c, float aspect, float out[16])
{
    float eye[3];
    mw_camera_eye(c, eye);
    float f[3] = {c->target[0] - eye[0], c->target[1] - eye[1], c->target[2] - eye[2]};
    float fl = sqrtf(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    for (int i = 0; i < 3; i++)
        f[i] /= fl > 0 ? fl : 1;
    /* s = f x up, u = s x f */
    float s[3] = {-f[2], 0, f[0]};
    float sl = sqrtf(s[0] * s[0] + s[2] * s[2]);
    if (sl < 1e-6f) {
        s[0] = 1;
        s[2] = 0;
        sl = 1;
    }
    s[0] /= sl;
    s[2] /= sl;
    float u[3] = {s[1] * f[2] - s[2] * f[1], s[2] * f[0] - s[0] * f[2], s[0] * f[1] - s[1] * f[0]};
    float view[16] = {s[0], u[0], -f[0], 0, s[1], u[1], -f[1], 0, s[2], u[2], -f[2], 0, 0, 0, 0, 1};
    view[12] = -(s[0] * eye[0] + s[1] * eye[1] + s[2] * eye[2]);
    view[13] = -(u[0] * eye[0] + u[1] * eye[1] + u[2] * eye[2]);
    view[14] = f[0] * eye[0] + f[1] * eye[1] + f[2] * eye[2];
    float n = c->distance * 0.01f, fa = c->distance * 6 + 100;
    float t = 1.0f / tanf(c->fov / 2 * DEG);
    float proj[16] = {0};
    proj[0] = t / (aspect > 0 ? aspect : 1);
    proj[5] = t;
    proj[10] = (fa + n) / (n - fa);
    proj[11] = -1;
    proj[14] = 2 * fa * n / (n - fa);
    mat_mul(proj, view, out);
}

int mw_camera_project(const float m[16], const float p[3], int w, int h, float *x, float *y)
{
    float cx = m[0] * p[0] + m[4] * p[1] + m[8] * p[2] + m[12];
    float cy = m[1] * p[0] + m[5] * p[1] + m[9] * p[2] + m[13];
    float cw = m[3] * p[0] + m[7] * p[1] + m[11] * p[2] + m[15];
    if (cw <= 1e-6f)
        return 0;
    *x = (cx / cw * 0.5f + 0.5f) * (float)w;
    *y = (1 - (cy / cw * 0.5f + 0.5f)) * (float)h;
    return 1;
}

void mw_camera_orbit(mw_camera_t *c, float dx, float dy)
{
    c->yaw -= dx * 0.3f;
    c->pitch += dy * 0.3f;
    c->pitch = c->pitch < 5 ? 5 : c->pitch > 89 ? 89 : c->pitch;
    c->yaw = fmodf(c->yaw, 360.0f);
}

float mw_camera_px_per_unit(const mw_camera_t *c, int viewport_h)
{
    return (float)viewport_h / (2 * c->distance * tanf(c->fov / 2 * DEG));
}

void mw_camera_pan(mw_camera_t *c, float dx, float dy, int viewport_h)
{
    float k = 1.0f / mw_camera_px_per_unit(c, viewport_h);
    float y = c->yaw * DEG;
    /* Screen right and screen up projected on the ground. */
    float rx = cosf(y), rz = -sinf(y);
    float fx = -sinf(y), fz = -cosf(y);
    c->target[0] -= (rx * dx - fx * dy) * k;
    c->target[2] -= (rz * dx - fz * dy) * k;
}

void mw_camera_zoom(mw_camera_t *c, float factor)
{
    if (factor > 0)
        c->distance /= factor;
    c->distance = c->distance < 1 ? 1 : c->distance > 1e6f ? 1e6f : c->distance;
}

int mw_topo_auto_bundles(const mw_camera_t *c, const mw_topo_layout_t *L, int viewport_h,
                         float min_px)
{
    float cell = fmaxf2(L->cell_w, L->cell_d);
    return cell * mw_camera_px_per_unit(c, viewport_h) < min_px;
}

/* ---- picking ------------------------------------------------------------------------------ */

static float seg_dist(float px, float py, float ax, float ay, float bx, float by)
{
    float vx = bx - ax, vy = by - ay, wx = px - ax, wy = py - ay;
    float l2 = vx * vx + vy * vy, u = l2 > 0 ? (wx * vx + wy * vy) / l2 : 0;
    u = u < 0 ? 0 : u > 1 ? 1 : u;
    float dx = ax + u * vx - px, dy = ay + u * vy - py;
    return sqrtf(dx * dx + dy * dy);
}

mw_topo_pick_t mw_topo_pick(const mw_topo_layout_t *L, const mw_topo_lines_t *t, int bundled,
                            int periodic, const float mvp[16], int w, int h, float x, float y,
                            float radius)
{
    mw_topo_pick_t best = {MW_TOPO_PICK_NONE, 0, 0, radius};
    for (uint32_t r = 0; r < L->n_ranks; r++) {
        float p[3] = {L->ranks[r].pos[0], L->ranks[r].pos[1] + MW_TOPO_MARKER_H / 2,
                      L->ranks[r].pos[2]};
        float sx, sy;
        if (!mw_camera_project(mvp, p, w, h, &sx, &sy))
            continue;
        float d = sqrtf((sx - x) * (sx - x) + (sy - y) * (sy - y));
        if (d <= best.dist_px) {
            best.kind = MW_TOPO_PICK_RANK;
            best.rank = r;
            best.dist_px = d;
        }
    }
    if (best.kind == MW_TOPO_PICK_RANK || !t)
        return best;
    size_t n = bundled ? t->n_bundles : t->n_lines;
    mw_rgb_t none = {0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        mw_topo_curve_t c[2];
        int k = mw_topo_curves(L, t, bundled, i, periodic, none, c);
        for (int j = 0; j < k; j++) {
            float px = 0, py = 0;
            int prev = 0;
            for (int s = 0; s <= MW_TOPO_SEGMENTS; s++) {
                float q[3], sx, sy;
                mw_topo_curve_point(&c[j], (float)s / MW_TOPO_SEGMENTS, q);
                int ok = mw_camera_project(mvp, q, w, h, &sx, &sy);
                if (ok && prev) {
                    float d = seg_dist(x, y, px, py, sx, sy);
                    if (d < best.dist_px) {
                        best.kind = bundled ? MW_TOPO_PICK_BUNDLE : MW_TOPO_PICK_LINE;
                        best.index = i;
                        best.dist_px = d;
                    }
                }
                prev = ok;
                px = sx;
                py = sy;
            }
        }
    }
    return best;
}

/* ---- the matrix --------------------------------------------------------------------------- */

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
