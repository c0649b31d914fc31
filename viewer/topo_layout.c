/* topo_layout.c: the one layout of a job's topology (topo_layout.h), for the viewer's 3D view
 * and the VTK export.
 *
 * DESIGN: the layout is built once per job description in two passes over every node: the first
 * sizes each node's used hardware bottom-up (objects come after their parents, so walking the
 * list backwards meets children first), which gives the common grid cell of the node planes; the
 * second places the same boxes top-down in that grid, walking the list forwards (a parent is
 * placed before its children). Neither pass recurses, and each is linear in the objects of the
 * node (children are linked lists, objects are found by binary search of sorted keys): a
 * crafted chain of 65,536 objects once overflowed the stack of a recursive placement, and the
 * job description's check (mw_topo_job_check) refuses trees deeper than MW_MAX_TOPO_DEPTH
 * before the viewer gets here. The export lays out what a recording holds even when the check
 * refuses it (it warns), which is safe for the same reasons. The ranks counted in each box are
 * summed by one more backward sweep (each finished sum added to its parent once), not by
 * walking up from every rank. Everything is deterministic, which is what the snapshot tests
 * rely on.
 *
 * This is the viewer's layout of before the export shared it; the export's own layout
 * (tools/vtk_layout.c, removed) differed in its fallbacks, see docs/export.md ("vtk").
 */
#include "topo_layout.h"

#include "mw_limits.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAD 0.3f         /* inside a box, around its children */
#define GAP 0.25f        /* between sibling boxes */
#define SWITCH_RISE 2.5f /* a switch above the scene's hardware, and each level above the last */
#define SWITCH_H 1.0f
#define SWITCH_D 1.6f
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
    if (!k->used || !k->first || !k->next || !k->last || !k->depth || !k->w || !k->d || !k->keys) {
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

/* The columns of a grid of k cells of cw x cd whose width over depth is closest to `aspect`
 * (the groups of a network: a screen is wider than deep). */
static int grid_cols_aspect(int k, float cw, float cd, double aspect)
{
    int best = 1;
    double best_q = 1e300;
    for (int cols = 1; cols <= k; cols++) {
        int rows = (k + cols - 1) / cols;
        double q = fabs(log((cols * (double)cw) / (rows * (double)cd) / aspect));
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
        k->keys[i] =
            obj_key(o->type, o->type == MW_TOPO_PU ? o->os_index : o->logical) | (uint64_t)i;
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
 * first, in list order; box_of[j] is the box of object j. No recursion (see DESIGN): the roots
 * are placed on the plane, then each object, met after its parent, places its own children.
 * Returns the deepest level placed. */
static int place_node(mw_topo_layout_t *L, node_work_t *k, const Mpiwatch__NodeTopology *nt,
                      uint32_t node, float x0, float z0, float *ox, float *oz, size_t *box_of)
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
        box_of[j] = L->n_boxes;
        mw_topo_box_t *b = &L->boxes[L->n_boxes++];
        unsigned type = nt->objects[j]->type;
        b->type = (uint8_t)(type >= 1 && type < MW_TOPO_TYPES ? type : MW_TOPO_CORE);
        b->node = node;
        b->logical = nt->objects[j]->logical;
        b->os_index = nt->objects[j]->os_index > INT32_MAX ? -1 : (int32_t)nt->objects[j]->os_index;
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
    free(L->switches);
    free(L->nodes);
    free(L->boxes);
    free(L->ranks);
    memset(L, 0, sizeof *L);
}

/* ---- the network ------------------------------------------------------------------------- */

/* The name a plane's node has in the job (not cut to the layout's 64 bytes), or NULL. */
static const char *job_node_name(const Mpiwatch__JobInfo *job, size_t g, size_t groups,
                                 int have_nodes)
{
    if (g >= groups)
        return NULL;
    if (have_nodes)
        return job->nodes[g] ? job->nodes[g]->node : NULL;
    return job->hosts[g];
}

/* Groups the G planes under their leaf switches and gives each plane's cell corner (cx, cz) in a
 * scene of W x D: groups in a near-square grid of group cells (the largest group's size plus
 * the group gap), each group a near-square grid of node cells (cw x cd, which hold the node
 * gap). Fills L->switches: the groups' switches first (group i is switch i, level 0; the
 * unknown switch last among them), then the switches above them, each with the footprint of
 * the groups below it in lo/hi x and z (made into a box by net_boxes). Returns 0 or -1. */
static int net_place(mw_topo_layout_t *L, const Mpiwatch__JobInfo *job, const mw_network_t *net,
                     size_t G, size_t groups, int have_nodes, float cw, float cd, float *cx,
                     float *cz, float *W, float *D)
{
    uint32_t ns = net->n_switches, unknown = ns;
    uint32_t *key = malloc((G ? G : 1) * sizeof *key), *count = calloc(ns + 1, sizeof *count);
    int32_t *group_of = malloc((ns + 1) * sizeof *group_of), *lay_of = NULL;
    uint32_t *filled = NULL;
    float *gw = NULL, *gd = NULL;
    int *gcols = NULL, rc = -1;
    if (!key || !count || !group_of)
        goto out;
    for (size_t g = 0; g < G; g++) {
        int32_t s = mw_network_find(net, job_node_name(job, g, groups, have_nodes));
        key[g] = s < 0 ? unknown : (uint32_t)s;
        count[key[g]]++;
    }
    size_t ng = 0;
    for (uint32_t s = 0; s <= ns; s++)
        group_of[s] = count[s] ? (int32_t)ng++ : -1;
    /* Ancestors: at most the switches' count, found by walking up from every group. */
    lay_of = malloc((ns + 1) * sizeof *lay_of);
    L->switches = calloc(ns + 1, sizeof *L->switches);
    gw = calloc(ng ? ng : 1, sizeof *gw);
    gd = calloc(ng ? ng : 1, sizeof *gd);
    gcols = calloc(ng ? ng : 1, sizeof *gcols);
    filled = calloc(ng ? ng : 1, sizeof *filled);
    if (!lay_of || !L->switches || !gw || !gd || !gcols || !filled)
        goto out;
    float GW = 0, GD = 0;
    for (uint32_t s = 0; s <= ns; s++) {
        int32_t i = group_of[s];
        lay_of[s] = i;
        if (i < 0)
            continue;
        mw_topo_switch_t *sw = &L->switches[i];
        snprintf(sw->name, sizeof sw->name, "%s",
                 s < ns ? net->switches[s].name : "unknown switch");
        sw->source = s < ns ? (int32_t)s : -1;
        sw->parent = -1;
        sw->nodes = count[s];
        int k = (int)count[s];
        gcols[i] = grid_cols(k, cw, cd);
        gw[i] = (float)gcols[i] * cw;
        gd[i] = (float)((k + gcols[i] - 1) / gcols[i]) * cd;
        GW = fmaxf2(GW, gw[i]);
        GD = fmaxf2(GD, gd[i]);
    }
    L->n_switches = ng;
    GW += L->group_gap;
    GD += L->group_gap;
    int cols = ng ? grid_cols_aspect((int)ng, GW, GD, 1.6) : 1;
    int rows = ng ? ((int)ng + cols - 1) / cols : 1;
    L->cols = cols;
    *W = (float)cols * GW;
    *D = (float)rows * GD;
    for (size_t i = 0; i < ng; i++) {
        mw_topo_switch_t *sw = &L->switches[i];
        float gx = -*W / 2 + (float)(i % (size_t)cols) * GW + (GW - gw[i]) / 2;
        float gz = -*D / 2 + (float)(i / (size_t)cols) * GD + (GD - gd[i]) / 2;
        sw->lo[0] = gx;
        sw->lo[2] = gz;
        sw->hi[0] = gx + gw[i];
        sw->hi[2] = gz + gd[i];
    }
    for (size_t g = 0; g < G; g++) {
        int32_t i = group_of[key[g]];
        uint32_t j = filled[i]++;
        cx[g] = L->switches[i].lo[0] + (float)(j % (uint32_t)gcols[i]) * cw;
        cz[g] = L->switches[i].lo[2] + (float)(j / (uint32_t)gcols[i]) * cd;
        L->nodes[g].sw = i;
    }
    /* The switches above the groups, each once, with the footprint of all below it. */
    for (size_t i = 0; i < ng; i++) {
        int32_t s = L->switches[i].source;
        if (s < 0)
            continue;
        int32_t child = (int32_t)i;
        for (int32_t up = net->switches[s].parent; up >= 0; up = net->switches[up].parent) {
            if (lay_of[up] < 0) {
                lay_of[up] = (int32_t)L->n_switches;
                mw_topo_switch_t *a = &L->switches[L->n_switches++];
                snprintf(a->name, sizeof a->name, "%s", net->switches[up].name);
                a->source = up;
                a->parent = -1;
                memcpy(a->lo, L->switches[i].lo, sizeof a->lo);
                memcpy(a->hi, L->switches[i].hi, sizeof a->hi);
            }
            mw_topo_switch_t *a = &L->switches[lay_of[up]];
            uint32_t lvl = net->switches[s].level - net->switches[up].level;
            if (lvl > a->level)
                a->level = lvl;
            for (int c = 0; c < 3; c += 2) {
                a->lo[c] = a->lo[c] < L->switches[i].lo[c] ? a->lo[c] : L->switches[i].lo[c];
                a->hi[c] = a->hi[c] > L->switches[i].hi[c] ? a->hi[c] : L->switches[i].hi[c];
            }
            L->switches[child].parent = lay_of[up];
            child = lay_of[up];
        }
    }
    rc = 0;
out:
    free(key);
    free(count);
    free(group_of);
    free(lay_of);
    free(filled);
    free(gw);
    free(gd);
    free(gcols);
    return rc;
}

/* The switches' boxes: centred over their footprint, above the scene's hardware (top), each
 * level SWITCH_RISE higher. Returns the highest top. */
static float net_boxes(mw_topo_layout_t *L, float top)
{
    float high = top, rise = SWITCH_RISE;
    /* Seen from the side, the switches must stand clear of the nodes' arcs: a rise that grows
     * with the groups' size. */
    for (size_t i = 0; i < L->n_switches; i++)
        if (L->switches[i].level == 0)
            rise = fmaxf2(rise, 0.3f * (L->switches[i].hi[0] - L->switches[i].lo[0]));
    for (size_t i = 0; i < L->n_switches; i++) {
        mw_topo_switch_t *s = &L->switches[i];
        float x = (s->lo[0] + s->hi[0]) / 2, z = (s->lo[2] + s->hi[2]) / 2;
        float w = 0.3f * (s->hi[0] - s->lo[0]);
        w = w < 2.0f ? 2.0f : w > 10.0f ? 10.0f : w;
        s->lo[0] = x - w / 2;
        s->hi[0] = x + w / 2;
        s->lo[2] = z - SWITCH_D / 2;
        s->hi[2] = z + SWITCH_D / 2;
        s->lo[1] = top + rise * (float)(s->level + 1);
        s->hi[1] = s->lo[1] + SWITCH_H;
        high = fmaxf2(high, s->hi[1]);
    }
    return high;
}

int mw_topo_layout(mw_topo_layout_t *L, const Mpiwatch__JobInfo *job)
{
    return mw_topo_layout_ex(L, job, NULL);
}

int mw_topo_layout_ex(mw_topo_layout_t *L, const Mpiwatch__JobInfo *job,
                      const mw_topo_layout_opts_t *opt)
{
    memset(L, 0, sizeof *L);
    L->node_gap = opt && opt->node_gap > 0 ? opt->node_gap : MW_TOPO_NODE_GAP;
    L->group_gap = 2 * L->node_gap + 4.0f;
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
    float *nw = NULL, *nd = NULL, *cx = NULL, *cz = NULL;
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
    L->by_host = !have_nodes;
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
        nd_->source = g < groups ? (int32_t)g : -1;
        nd_->sw = -1;
        if (g < groups && have_nodes && job->nodes[g] && job->nodes[g]->node)
            snprintf(nd_->name, sizeof nd_->name, "%s", job->nodes[g]->node);
        else if (g < groups && !have_nodes && job->hosts[g])
            snprintf(nd_->name, sizeof nd_->name, "%s", job->hosts[g]);
        else
            snprintf(nd_->name, sizeof nd_->name, "%s", g < groups ? "node" : "unplaced");
        const Mpiwatch__NodeTopology *nt = g < groups && have_nodes ? job->nodes[g] : NULL;
        /* Positions in the lookup keys take 28 bits: more objects are not believed. */
        if (nt && nt->n_objects > MW_MAX_TOPO_OBJECTS && count[g])
            L->big_nodes++;
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
    cw += L->node_gap;
    cd += L->node_gap;
    L->cell_w = cw;
    L->cell_d = cd;
    cx = malloc((G ? G : 1) * sizeof *cx);
    cz = malloc((G ? G : 1) * sizeof *cz);
    if (!cx || !cz)
        goto out;
    float W, D;
    if (opt && opt->net && G) {
        L->network = 1;
        if (net_place(L, job, opt->net, G, groups, have_nodes, cw, cd, cx, cz, &W, &D) < 0)
            goto out;
    } else {
        int cols = G ? grid_cols((int)G, cw, cd) : 1, rows = G ? ((int)G + cols - 1) / cols : 1;
        L->cols = cols;
        W = (float)cols * cw;
        D = (float)rows * cd;
        for (size_t g = 0; g < G; g++) {
            cx[g] = -W / 2 + (float)(g % (size_t)cols) * cw;
            cz[g] = -D / 2 + (float)(g / (size_t)cols) * cd;
        }
    }
    L->boxes = calloc(max_boxes ? max_boxes : 1, sizeof *L->boxes);
    if (!L->boxes)
        goto out;

    /* The planes first, so that box i < n_nodes is node i's plane. */
    for (size_t g = 0; g < G; g++) {
        float x0 = cx[g] + (cw - nw[g]) / 2;
        float z0 = cz[g] + (cd - nd[g]) / 2;
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
        b->os_index = -1;
        b->ranks = count[g];
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
            size_t *box_of = calloc(nt->n_objects, sizeof *box_of);
            if (!ox || !oz || !stack || !box_of || work_alloc(&k, (int)nt->n_objects) < 0) {
                free(ox);
                free(oz);
                free(stack);
                free(box_of);
                goto out;
            }
            node_size(&k, nt, ri, rk, count[g], &w_, &d_);
            int deep = place_node(L, &k, nt, (uint32_t)g, p->lo[0], p->lo[2], ox, oz, box_of);
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
                    L->loose++;
                    continue;
                }
                L->boxes[box_of[o]].ranks++;
                const Mpiwatch__RankInfo *r = ri[rk[i]];
                for (size_t j = 0; j < r->n_pus; j++) {
                    int pu = find_obj(&k, MW_TOPO_PU, r->pus[j]);
                    if (pu >= 0 && k.used[pu])
                        L->boxes[box_of[pu]].bound++;
                }
                t->pos[0] = ox[o] + k.w[o] / 2;
                t->pos[2] = oz[o] + k.d[o] / 2;
                t->pos[1] = MW_TOPO_PLANE_Y + (float)k.depth[o] * MW_TOPO_LEVEL_H +
                            (float)stack[o] * MW_TOPO_MARKER_H;
                stack[o]++;
            }
            /* Each box counts the ranks in it and in every box inside it: children come after
             * their parent, so a backward sweep adds each finished sum into its parent once. */
            for (int j = (int)nt->n_objects - 1; j >= 0; j--) {
                int up = nt->objects[j]->parent;
                if (k.used[j] && up >= 0 && up < j)
                    L->boxes[box_of[up]].ranks += L->boxes[box_of[j]].ranks;
            }
            free(ox);
            free(oz);
            free(stack);
            free(box_of);
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
    if (L->network)
        L->hi[1] = net_boxes(L, L->hi[1]);
    rc = 0;
out:
    free(ri);
    free(group);
    free(count);
    free(start);
    free(order);
    free(nw);
    free(nd);
    free(cx);
    free(cz);
    if (rc < 0)
        mw_topo_layout_free(L);
    return rc;
}
