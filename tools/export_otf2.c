/* export_otf2.c: mpiwatch-export --format otf2, the traced windows as an OTF2 archive.
 *
 * DESIGN: the records come from export_trace.c (every exact trace of the recording, reach-back
 * ones folded in, decoded and in memory). The archive is written with the OTF2 library's
 * serial writer, in the order OTF2 requires (docs/trace-plan.md §6): first the events, one
 * writer per location (a thread of a rank, id (thread << 32) | rank, as Score-P numbers
 * them), then an empty local definition file per location, then the global definitions, each
 * written before anything that refers to it. Every id the events use (regions, communicators)
 * is therefore decided before the first event.
 *
 * The events of a location are built from its records in three steps. Calls (records that
 * are calls, mw_trace_is_call) are sorted by start; completions (of Isend, Irecv and
 * non-blocking collectives) and the receive half of a Sendrecv are placed inside the call
 * that contains them in time (a completion is recorded at the end of the completing call);
 * then the events are written call after call, each call as Enter, the events at its start,
 * the completions, the events at its end, Leave. Timestamps are global nanoseconds (clock
 * resolution 1e9); a timestamp that would go back in time on a location (calls that overlap,
 * which one thread cannot do, or a clock step) is raised to the previous one and counted.
 *
 * OTF2 wants peers and roots as ranks in the event's communicator, and communicators with
 * 32-bit ids and their groups of world ranks: communicators are renumbered (WORLD 0, SELF 1,
 * then the others in an order where a parent comes before its children), and a peer is
 * translated through its communicator's group, which comes from the members' definitions
 * (Window.comms). A message on a communicator whose group is not known in full (a member's
 * definition missing, members that disagree, a member that is not a rank of the job or two
 * members of one world rank, inter-communicators, external ones) has no message event, only
 * its Enter and Leave: counted and reported.
 *
 * The logical step, lateness and differential lateness of each communication event
 * (export_trace.c's mw__xt_index, docs/logical.md) go on its OTF2 event as attributes and,
 * right after it, as an asynchronous metric (docs/export.md says why both); the strings they
 * refer to are decided before the first event, like every other id.
 */
#define _GNU_SOURCE
#include "export_otf2.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <otf2/otf2.h>

#include "export_trace.h"

#define MW_OTF2_NO_ID UINT32_MAX
#define MW_OTF2_FN_IDS 65536u /* fn is a uint16_t */

/* What a collective function is for OTF2: its operation and the role of its region. */
typedef struct {
    const char *name; /* without "MPI_", without the I of the non-blocking form */
    OTF2_CollectiveOp op;
    OTF2_RegionRole role;
} coll_kind_t;

static const coll_kind_t COLLS[] = {
    {"Barrier", OTF2_COLLECTIVE_OP_BARRIER, OTF2_REGION_ROLE_BARRIER},
    {"Bcast", OTF2_COLLECTIVE_OP_BCAST, OTF2_REGION_ROLE_COLL_ONE2ALL},
    {"Scatter", OTF2_COLLECTIVE_OP_SCATTER, OTF2_REGION_ROLE_COLL_ONE2ALL},
    {"Scatterv", OTF2_COLLECTIVE_OP_SCATTERV, OTF2_REGION_ROLE_COLL_ONE2ALL},
    {"Gather", OTF2_COLLECTIVE_OP_GATHER, OTF2_REGION_ROLE_COLL_ALL2ONE},
    {"Gatherv", OTF2_COLLECTIVE_OP_GATHERV, OTF2_REGION_ROLE_COLL_ALL2ONE},
    {"Reduce", OTF2_COLLECTIVE_OP_REDUCE, OTF2_REGION_ROLE_COLL_ALL2ONE},
    {"Allgather", OTF2_COLLECTIVE_OP_ALLGATHER, OTF2_REGION_ROLE_COLL_ALL2ALL},
    {"Allgatherv", OTF2_COLLECTIVE_OP_ALLGATHERV, OTF2_REGION_ROLE_COLL_ALL2ALL},
    {"Alltoall", OTF2_COLLECTIVE_OP_ALLTOALL, OTF2_REGION_ROLE_COLL_ALL2ALL},
    {"Alltoallv", OTF2_COLLECTIVE_OP_ALLTOALLV, OTF2_REGION_ROLE_COLL_ALL2ALL},
    {"Alltoallw", OTF2_COLLECTIVE_OP_ALLTOALLW, OTF2_REGION_ROLE_COLL_ALL2ALL},
    {"Allreduce", OTF2_COLLECTIVE_OP_ALLREDUCE, OTF2_REGION_ROLE_COLL_ALL2ALL},
    {"Reduce_scatter", OTF2_COLLECTIVE_OP_REDUCE_SCATTER, OTF2_REGION_ROLE_COLL_ALL2ALL},
    {"Reduce_scatter_block", OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK,
     OTF2_REGION_ROLE_COLL_ALL2ALL},
    {"Scan", OTF2_COLLECTIVE_OP_SCAN, OTF2_REGION_ROLE_COLL_OTHER},
    {"Exscan", OTF2_COLLECTIVE_OP_EXSCAN, OTF2_REGION_ROLE_COLL_OTHER},
    {"Comm_dup", OTF2_COLLECTIVE_OP_CREATE_HANDLE, OTF2_REGION_ROLE_COLL_OTHER},
    {"Comm_dup_with_info", OTF2_COLLECTIVE_OP_CREATE_HANDLE, OTF2_REGION_ROLE_COLL_OTHER},
    {"Comm_split", OTF2_COLLECTIVE_OP_CREATE_HANDLE, OTF2_REGION_ROLE_COLL_OTHER},
    {"Comm_split_type", OTF2_COLLECTIVE_OP_CREATE_HANDLE, OTF2_REGION_ROLE_COLL_OTHER},
    {"Comm_create", OTF2_COLLECTIVE_OP_CREATE_HANDLE, OTF2_REGION_ROLE_COLL_OTHER},
    {"Cart_create", OTF2_COLLECTIVE_OP_CREATE_HANDLE, OTF2_REGION_ROLE_COLL_OTHER},
    {"Cart_sub", OTF2_COLLECTIVE_OP_CREATE_HANDLE, OTF2_REGION_ROLE_COLL_OTHER},
    {"Graph_create", OTF2_COLLECTIVE_OP_CREATE_HANDLE, OTF2_REGION_ROLE_COLL_OTHER},
    {"Dist_graph_create", OTF2_COLLECTIVE_OP_CREATE_HANDLE, OTF2_REGION_ROLE_COLL_OTHER},
    {"Dist_graph_create_adjacent", OTF2_COLLECTIVE_OP_CREATE_HANDLE, OTF2_REGION_ROLE_COLL_OTHER},
    {"Intercomm_merge", OTF2_COLLECTIVE_OP_CREATE_HANDLE, OTF2_REGION_ROLE_COLL_OTHER},
    {"Comm_free", OTF2_COLLECTIVE_OP_DESTROY_HANDLE, OTF2_REGION_ROLE_COLL_OTHER},
    {"File_open", OTF2_COLLECTIVE_OP_CREATE_HANDLE, OTF2_REGION_ROLE_FILE_IO},
    {"File_close", OTF2_COLLECTIVE_OP_DESTROY_HANDLE, OTF2_REGION_ROLE_FILE_IO},
    {"Win_create", OTF2_COLLECTIVE_OP_CREATE_HANDLE_AND_ALLOCATE, OTF2_REGION_ROLE_RMA},
    {"Win_allocate", OTF2_COLLECTIVE_OP_CREATE_HANDLE_AND_ALLOCATE, OTF2_REGION_ROLE_RMA},
    {"Win_allocate_shared", OTF2_COLLECTIVE_OP_CREATE_HANDLE_AND_ALLOCATE, OTF2_REGION_ROLE_RMA},
    {"Win_create_dynamic", OTF2_COLLECTIVE_OP_CREATE_HANDLE, OTF2_REGION_ROLE_RMA},
    {"Win_free", OTF2_COLLECTIVE_OP_DESTROY_HANDLE_AND_DEALLOCATE, OTF2_REGION_ROLE_RMA},
};

/* The collective kind of function fn, or NULL (MPI_Ibcast and MPI_Bcast_init are Bcast). */
static const coll_kind_t *coll_kind(unsigned fn)
{
    const char *name = mw_fn_name(fn);
    if (!name || strncmp(name, "MPI_", 4) != 0)
        return NULL;
    name += 4;
    char base[64];
    size_t len = strlen(name);
    if (len >= sizeof base)
        return NULL;
    memcpy(base, name, len + 1);
    if (len > 5 && strcmp(base + len - 5, "_init") == 0)
        base[len - 5] = '\0'; /* persistent collectives (MPI 4) */
    for (int pass = 0; pass < 2; pass++) {
        const char *b = base;
        if (pass == 1) { /* MPI_Ibcast: Bcast */
            if (base[0] != 'I' || base[1] < 'a' || base[1] > 'z')
                break;
            base[1] = (char)(base[1] - 'a' + 'A');
            b = base + 1;
        }
        for (size_t i = 0; i < sizeof COLLS / sizeof COLLS[0]; i++)
            if (strcmp(COLLS[i].name, b) == 0)
                return &COLLS[i];
    }
    return NULL;
}

static OTF2_RegionRole region_role(unsigned fn)
{
    const coll_kind_t *c = coll_kind(fn);
    if (c)
        return c->role;
    switch (mw_fn_kind(fn)) {
    case MW_KIND_SEND:
    case MW_KIND_RECV:
    case MW_KIND_WAIT:
        return OTF2_REGION_ROLE_POINT2POINT;
    case MW_KIND_COLL:
        return OTF2_REGION_ROLE_COLL_OTHER;
    case MW_KIND_RMA:
        return OTF2_REGION_ROLE_RMA;
    case MW_KIND_IO:
        return OTF2_REGION_ROLE_FILE_IO;
    default:
        return OTF2_REGION_ROLE_FUNCTION;
    }
}

/* ---- state -------------------------------------------------------------------------------- */

typedef struct {
    char **v;
    uint32_t n, cap;
    int oom; /* a string could not be added */
} strings_t;

/* A request posted on a location and not yet completed. */
typedef struct {
    uint32_t req;
    uint8_t kind; /* MW_TK_ISEND, MW_TK_IRECV, MW_TK_ICOLL */
    const mw_trace_rec_t *post;
    int64_t ev; /* the post's logical event (a non-blocking collective's), -1 */
} pending_t;

typedef struct {
    const mw__xt_t *x;
    OTF2_Archive *ar;
    strings_t str;
    uint32_t *region; /* fn -> region id, MW_OTF2_NO_ID when unused */
    uint16_t *region_fn;
    uint32_t nregions;
    uint32_t *comm_id;    /* x->comms index -> OTF2 communicator id, MW_OTF2_NO_ID unusable */
    uint32_t *comm_order; /* OTF2 communicator id -> x->comms index */
    uint32_t ncomm_ids;

    /* locations: (rank, thread) with records, plus thread 0 of every rank */
    uint64_t *locs;
    uint64_t *loc_events;
    size_t nlocs;
    uint64_t tmin, tmax;

    pending_t *pend;
    size_t npend, cap_pend;
    uint64_t pend_mult; /* odd, random: request numbers come from the recording */

    /* what could not be written as it was recorded */
    uint64_t clamped, open_calls, untranslated, orphans, no_coll_op, events;
    uint64_t cycles; /* cycles of parent communicators, each broken at one of its members */
    uint64_t counts[16];

    /* logical steps and lateness (docs/logical.md): attributes on the communication events
     * and an asynchronous metric class, decided before the events (plan_logical) */
    mw__xt_index_t ix;
    OTF2_AttributeList *alist;
    uint32_t s_cls[MW_LATE_COUNT]; /* class names */
    uint32_t s_attr[5][2];         /* attribute names and descriptions */
    uint32_t s_metric[2][2], s_unit;
    uint64_t logical_events; /* communication events written with their attributes */
} otf2_x_t;

enum {
    C_ENTER,
    C_LEAVE,
    C_SEND,
    C_RECV,
    C_ISEND,
    C_ISEND_DONE,
    C_IRECV_REQ,
    C_IRECV,
    C_CBEGIN,
    C_CEND,
    C_CANCEL,
    C_N
};
static const char *const COUNT_NAMES[C_N] = {"Enter",
                                             "Leave",
                                             "MpiSend",
                                             "MpiRecv",
                                             "MpiIsend",
                                             "MpiIsendComplete",
                                             "MpiIrecvRequest",
                                             "MpiIrecv",
                                             "MpiCollectiveBegin",
                                             "MpiCollectiveEnd",
                                             "MpiRequestCancelled"};

static uint32_t str_add(otf2_x_t *o, const char *s)
{
    if (o->str.n == o->str.cap) {
        uint32_t c = o->str.cap ? 2 * o->str.cap : 64;
        char **v = reallocarray(o->str.v, c, sizeof *v);
        if (!v) {
            o->str.oom = 1;
            return MW_OTF2_NO_ID;
        }
        o->str.v = v;
        o->str.cap = c;
    }
    char *d = strdup(s ? s : "");
    if (!d) {
        o->str.oom = 1;
        return MW_OTF2_NO_ID;
    }
    o->str.v[o->str.n] = d;
    return o->str.n++;
}

static uint32_t str_addf(otf2_x_t *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static uint32_t str_addf(otf2_x_t *o, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return str_add(o, buf);
}

static int otf2_ok(OTF2_ErrorCode e, const char *what)
{
    if (e == OTF2_SUCCESS)
        return 0;
    fprintf(stderr, "mpiwatch-export: OTF2: %s: %s (%s)\n", what, OTF2_Error_GetName(e),
            OTF2_Error_GetDescription(e));
    return -1;
}

#define TRY_OTF2(call, what)                                                                       \
    do {                                                                                           \
        if (otf2_ok((call), (what)) < 0)                                                           \
            return -1;                                                                             \
    } while (0)

static OTF2_FlushType pre_flush(void *ud, OTF2_FileType ft, OTF2_LocationRef loc, void *cd,
                                bool final)
{
    (void)ud, (void)ft, (void)loc, (void)cd, (void) final;
    return OTF2_FLUSH;
}

/* No post-flush callback: with one, OTF2 writes a BufferFlush event into the stream. */
static const OTF2_FlushCallbacks FLUSH = {pre_flush, NULL};

static uint64_t loc_id(uint32_t rank, uint32_t thread)
{
    return ((uint64_t)thread << 32) | rank;
}

/* ---- ids decided before the events -------------------------------------------------------- */

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return a < b ? -1 : a > b;
}

/* Regions (one per function that has a call record), locations, and the time span. */
static int plan_regions_locations(otf2_x_t *o)
{
    const mw__xt_t *x = o->x;
    o->region = malloc(MW_OTF2_FN_IDS * sizeof *o->region);
    o->region_fn = malloc(MW_OTF2_FN_IDS * sizeof *o->region_fn);
    size_t cap = x->size + 16;
    o->locs = malloc(cap * sizeof *o->locs);
    if (!o->region || !o->region_fn || !o->locs)
        return -1;
    memset(o->region, 0xff, MW_OTF2_FN_IDS * sizeof *o->region);
    for (uint32_t r = 0; r < x->size; r++)
        o->locs[o->nlocs++] = loc_id(r, 0);
    o->tmin = UINT64_MAX;
    for (size_t i = 0; i < x->nparts; i++) {
        const mw__xt_part_t *p = &x->parts[i];
        for (size_t j = 0; j < p->n; j++) {
            const mw_trace_rec_t *r = &p->recs[j];
            if (r->thread) {
                if (o->nlocs == cap) {
                    cap *= 2;
                    uint64_t *v = reallocarray(o->locs, cap, sizeof *v);
                    if (!v)
                        return -1;
                    o->locs = v;
                }
                o->locs[o->nlocs++] = loc_id(p->rank, r->thread);
            }
            if (mw_trace_is_call(r) && o->region[r->fn] == MW_OTF2_NO_ID) {
                o->region_fn[o->nregions] = r->fn;
                o->region[r->fn] = o->nregions++;
            }
        }
    }
    if (o->nlocs)
        qsort(o->locs, o->nlocs, sizeof *o->locs, cmp_u64);
    size_t k = 0;
    for (size_t i = 0; i < o->nlocs; i++)
        if (k == 0 || o->locs[k - 1] != o->locs[i])
            o->locs[k++] = o->locs[i];
    o->nlocs = k;
    o->loc_events = calloc(k ? k : 1, sizeof *o->loc_events);
    return o->loc_events ? 0 : -1;
}

/* Whether a communicator's group is known in full, so its events can be written. */
static int comm_usable(const mw__xt_comm_t *c)
{
    if (c->id == MW_COMM_ID_WORLD || c->id == MW_COMM_ID_SELF)
        return 1;
    return !c->conflict && !c->bad_world && !(c->flags & (MW_COMM_INTER | MW_COMM_EXTERNAL)) &&
           c->world && c->known == c->size;
}

/* Pushes the children of v (kids[first[v] .. first[v + 1]), in id order) that have no id yet
 * onto the stack, the first child on top. */
static void push_kids(const otf2_x_t *o, const uint32_t *first, const uint32_t *kids, uint32_t v,
                      uint32_t *stack, size_t *top)
{
    for (uint32_t k = first[v + 1]; k > first[v]; k--)
        if (o->comm_id[kids[k - 1]] == MW_OTF2_NO_ID)
            stack[(*top)++] = kids[k - 1];
}

/* Gives ids to v and its descendants that have none, depth first (a parent before its
 * children). Each communicator is pushed once, by its only parent: the stack holds at most
 * all of them. */
static void number_tree(otf2_x_t *o, const uint32_t *first, const uint32_t *kids, uint32_t root,
                        uint32_t *stack)
{
    size_t top = 0;
    stack[top++] = root;
    while (top) {
        uint32_t v = stack[--top];
        if (o->comm_id[v] == MW_OTF2_NO_ID) {
            o->comm_order[o->ncomm_ids] = v;
            o->comm_id[v] = o->ncomm_ids++;
        }
        push_kids(o, first, kids, v, stack, &top);
    }
}

/* OTF2 ids of the communicators: WORLD 0, SELF 1, then each usable one after its parent (a
 * parent that is not usable or not known leaves the communicator without parent).
 *
 * The parents make a forest: its children lists (kids, in x->comms order, which is id order,
 * each parent found by binary search) are walked once, depth first, from the roots in id
 * order, so that the cost is O(n log n) however ids and parents are laid out (a job that
 * duplicates its last duplicate makes chains, whose ids may run against the parent order).
 * Parents cannot form a cycle in a sane recording; a crafted one can: a walk up from a
 * communicator left without id finds the cycle above it, which is entered at the member
 * reached, written without parent and counted (o->cycles). */
static int plan_comms(otf2_x_t *o)
{
    const mw__xt_t *x = o->x;
    uint32_t n = (uint32_t)x->ncomms; /* at most XT_MAX_MEMBERS + 2: each has a member */
    size_t sz = (size_t)n + 1;
    o->comm_id = malloc(sz * sizeof *o->comm_id);
    o->comm_order = malloc(sz * sizeof *o->comm_order);
    uint32_t *par = malloc(sz * sizeof *par), *first = calloc(sz + 1, sizeof *first);
    uint32_t *kids = malloc(sz * sizeof *kids), *stack = malloc(sz * sizeof *stack);
    uint32_t *fill = malloc(sz * sizeof *fill), *stamp = calloc(sz, sizeof *stamp);
    int rc = -1;
    if (!o->comm_id || !o->comm_order || !par || !first || !kids || !stack || !fill || !stamp)
        goto out;
    for (uint32_t i = 0; i < n; i++) {
        const mw__xt_comm_t *c = &x->comms[i];
        o->comm_id[i] = par[i] = MW_OTF2_NO_ID;
        const mw__xt_comm_t *p = i >= 2 && c->parent ? mw__xt_comm(x, c->parent) : NULL;
        if (p && p != c && comm_usable(c) && comm_usable(p)) {
            par[i] = (uint32_t)(p - x->comms);
            first[par[i] + 1]++;
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        first[i + 1] += first[i];
        fill[i] = first[i];
    }
    for (uint32_t i = 0; i < n; i++)
        if (par[i] != MW_OTF2_NO_ID)
            kids[fill[par[i]]++] = i;
    for (uint32_t i = 0; i < n && i < 2; i++) { /* WORLD and SELF */
        o->comm_order[o->ncomm_ids] = i;
        o->comm_id[i] = o->ncomm_ids++;
    }
    for (uint32_t i = 0; i < n; i++)
        if (par[i] == MW_OTF2_NO_ID && comm_usable(&x->comms[i]))
            number_tree(o, first, kids, i, stack);
    /* Left without id: usable communicators under a cycle of parents. The walk up marks what
     * it passes with its own stamp and stops at the first communicator passed twice, which is
     * on the cycle; everything it passed is under that one, so it gets its id in the same
     * traversal and no communicator is walked twice. */
    for (uint32_t i = 0; i < n; i++) {
        if (o->comm_id[i] != MW_OTF2_NO_ID || !comm_usable(&x->comms[i]))
            continue;
        uint32_t v = i;
        while (stamp[v] != i + 1 && par[v] != MW_OTF2_NO_ID &&
               o->comm_id[par[v]] == MW_OTF2_NO_ID) {
            stamp[v] = i + 1;
            v = par[v];
        }
        o->cycles++;
        number_tree(o, first, kids, v, stack);
    }
    rc = 0;
out:
    free(par);
    free(first);
    free(kids);
    free(stack);
    free(fill);
    free(stamp);
    return rc;
}

/* ---- events ------------------------------------------------------------------------------- */

/* One event slot of a location: ordered by (call, sub, t, i). */
typedef struct {
    uint64_t call; /* 1 + index of the call it belongs to; standalone points follow call k */
    uint8_t sub;   /* 0 Enter, 1 at the start, 2 completions, 3 at the end, 4 Leave, 5 alone */
    int64_t t;
    uint32_t i; /* record index in the location's list (stable order) */
    const mw_trace_rec_t *r;
    int64_t t0, t1; /* the record's global start and end */
    int64_t ev;     /* the record's logical event (index into o->ix.events), -1 */
} slot_t;

static int cmp_slot(const void *pa, const void *pb)
{
    const slot_t *a = pa, *b = pb;
    if (a->call != b->call)
        return a->call < b->call ? -1 : 1;
    if (a->sub != b->sub)
        return a->sub < b->sub ? -1 : 1;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

/* The rank of world rank w in the record's communicator (*comm: its OTF2 id), or -1. */
static int64_t translate(otf2_x_t *o, const mw_trace_rec_t *r, int32_t w, uint32_t *comm)
{
    const mw__xt_comm_t *c = mw__xt_comm(o->x, r->comm);
    if (!c || o->comm_id[c - o->x->comms] == MW_OTF2_NO_ID || w < 0)
        return -1;
    *comm = o->comm_id[c - o->x->comms];
    return mw__xt_comm_rank(c, (uint32_t)w, o->x->size);
}

/* Open requests of a location: a hash table on the request number (linear probing, deletion
 * by backward shift), so that a trace with many open requests costs no more per completion. A
 * slot is empty when its post is NULL. The hash is multiply-shift with a random odd multiplier
 * drawn per export: request numbers are input, and with a fixed hash a crafted trace could
 * send every open request to one home and make each look-up walk all of them. */
static size_t pend_home(const otf2_x_t *o, uint32_t req)
{
    unsigned bits = (unsigned)__builtin_ctzll((unsigned long long)o->cap_pend);
    return (size_t)(((uint64_t)req * o->pend_mult) >> (64 - bits));
}

static pending_t *pend_find(otf2_x_t *o, uint32_t req)
{
    if (!o->cap_pend)
        return NULL;
    for (size_t i = pend_home(o, req);; i = (i + 1) & (o->cap_pend - 1)) {
        if (!o->pend[i].post)
            return NULL;
        if (o->pend[i].req == req)
            return &o->pend[i];
    }
}

static void pend_drop(otf2_x_t *o, pending_t *p)
{
    size_t mask = o->cap_pend - 1, i = (size_t)(p - o->pend);
    for (size_t j = (i + 1) & mask; o->pend[j].post; j = (j + 1) & mask) {
        size_t k = pend_home(o, o->pend[j].req);
        /* the entry at j may move to the hole at i when its home is not in (i, j] */
        if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
            continue;
        o->pend[i] = o->pend[j];
        i = j;
    }
    o->pend[i].post = NULL;
    o->npend--;
}

/* A new location starts with no table: clearing a table grown by an earlier location with
 * many open requests would cost its whole size again for every later location. */
static void pend_clear(otf2_x_t *o)
{
    free(o->pend);
    o->pend = NULL;
    o->npend = o->cap_pend = 0;
}

static int pend_add(otf2_x_t *o, const mw_trace_rec_t *r, int64_t ev)
{
    pending_t *p = pend_find(o, r->req);
    if (p) { /* a request number used again before its completion was seen */
        p->kind = r->kind;
        p->post = r;
        p->ev = ev;
        return 0;
    }
    if (2 * (o->npend + 1) > o->cap_pend) {
        size_t cap = o->cap_pend ? 2 * o->cap_pend : 64, old_cap = o->cap_pend;
        pending_t *old = o->pend, *v = calloc(cap, sizeof *v);
        if (!v)
            return -1;
        o->pend = v;
        o->cap_pend = cap;
        o->npend = 0;
        for (size_t i = 0; i < old_cap; i++)
            if (old[i].post)
                pend_add(o, old[i].post, old[i].ev); /* cannot fail: the table has room */
        free(old);
    }
    size_t i = pend_home(o, r->req);
    while (o->pend[i].post)
        i = (i + 1) & (o->cap_pend - 1);
    o->pend[i] = (pending_t){r->req, r->kind, r, ev};
    o->npend++;
    return 0;
}

/* What MpiCollectiveEnd says of a collective record of world rank `me` (the post, for a
 * non-blocking one). Returns 0, or -1 when the record cannot be written as a collective
 * (no OTF2 operation for the function, a communicator or root that cannot be translated). */
typedef struct {
    OTF2_CollectiveOp op;
    uint32_t comm, root;
    uint64_t sent, recvd;
} coll_info_t;

static int coll_info(otf2_x_t *o, const mw_trace_rec_t *r, uint32_t me, coll_info_t *ci)
{
    const coll_kind_t *k = coll_kind(r->fn);
    if (!k)
        return -1;
    const mw__xt_comm_t *c = mw__xt_comm(o->x, r->comm);
    if (!c || o->comm_id[c - o->x->comms] == MW_OTF2_NO_ID)
        return -1;
    int64_t root = -1;
    if (r->peer >= 0 && (root = mw__xt_comm_rank(c, (uint32_t)r->peer, o->x->size)) < 0)
        return -1;
    ci->op = k->op;
    ci->comm = o->comm_id[c - o->x->comms];
    ci->root = root >= 0 ? (uint32_t)root : OTF2_UNDEFINED_UINT32;
    /* One size per record (what this rank handed to or got from MPI): the root of a
     * one-to-all operation sends it and the others receive it; every member of an all-to-one
     * operation sends it and the root receives it; the other operations send and receive it. */
    int is_root = r->peer >= 0 && (uint32_t)r->peer == me;
    ci->sent = ci->recvd = r->bytes;
    if (k->op == OTF2_COLLECTIVE_OP_BARRIER)
        ci->sent = ci->recvd = 0;
    else if (k->role == OTF2_REGION_ROLE_COLL_ONE2ALL && is_root)
        ci->recvd = 0;
    else if (k->role == OTF2_REGION_ROLE_COLL_ONE2ALL)
        ci->sent = 0;
    else if (k->role == OTF2_REGION_ROLE_COLL_ALL2ONE && !is_root)
        ci->recvd = 0;
    return 0;
}

/* A timestamp for the location: never before the previous one (counted when raised). */
static uint64_t ts(otf2_x_t *o, uint64_t *last, int64_t t)
{
    uint64_t u = t > 0 ? (uint64_t)t : 0;
    if (u < *last) {
        o->clamped++;
        u = *last;
    }
    *last = u;
    if (u < o->tmin)
        o->tmin = u;
    if (u > o->tmax)
        o->tmax = u;
    return u;
}

/* ---- logical steps and lateness on the events ----------------------------------------------- */

enum { A_STEP, A_LATE, A_DIFF, A_CLASS, A_PART, A_N };

/* The attributes of logical event `ev` in o->alist (NULL when the record is no event): they go
 * with the event record written next, which empties the list. */
static OTF2_AttributeList *ev_attrs(otf2_x_t *o, int64_t ev)
{
    if (ev < 0 || !o->alist)
        return NULL;
    const mw_logical_event_t *e = &o->ix.events[ev];
    unsigned cls = e->cls < MW_LATE_COUNT ? e->cls : 0;
    OTF2_AttributeList_RemoveAllAttributes(o->alist);
    if (OTF2_AttributeList_AddUint64(o->alist, A_STEP, e->step) != OTF2_SUCCESS ||
        OTF2_AttributeList_AddInt64(o->alist, A_LATE, e->lateness_ns) != OTF2_SUCCESS ||
        OTF2_AttributeList_AddInt64(o->alist, A_DIFF, e->diff_ns) != OTF2_SUCCESS ||
        OTF2_AttributeList_AddStringRef(o->alist, A_CLASS, o->s_cls[cls]) != OTF2_SUCCESS ||
        OTF2_AttributeList_AddUint64(o->alist, A_PART, e->partition) != OTF2_SUCCESS)
        OTF2_AttributeList_RemoveAllAttributes(o->alist); /* out of memory: none at all */
    return o->alist;
}

/* After the event of `ev` (written at *last): the lateness metric (class 0: lateness and
 * differential lateness), at the same time, for the readers that draw metrics (Vampir's
 * counter timelines). */
static int ev_metric(otf2_x_t *o, OTF2_EvtWriter *w, int64_t ev, uint64_t *last)
{
    if (ev < 0 || !o->alist)
        return 0;
    const mw_logical_event_t *e = &o->ix.events[ev];
    OTF2_Type types[2] = {OTF2_TYPE_INT64, OTF2_TYPE_INT64};
    OTF2_MetricValue v[2];
    v[0].signed_int = e->lateness_ns;
    v[1].signed_int = e->diff_ns;
    TRY_OTF2(OTF2_EvtWriter_Metric(w, NULL, *last, 0, 2, types, v), "Metric");
    o->logical_events++;
    return 0;
}

/* The strings of the logical attributes and metrics: decided before the first event, since
 * the class attribute refers to its string. */
static int plan_logical(otf2_x_t *o)
{
    if (mw__xt_index(o->x, MW__XT_LOGICAL, &o->ix) < 0)
        return -1;
    if (o->ix.nevents == 0)
        return 0; /* no communication event: no attribute, no metric */
    static const char *const attr[A_N][2] = {
        {"mpiwatch::logical_step", "global logical step of the event (docs/logical.md)"},
        {"mpiwatch::lateness_ns",
         "completion time minus the earliest completion at the same step (ns)"},
        {"mpiwatch::diff_lateness_ns", "lateness minus the lateness the event inherited (ns)"},
        {"mpiwatch::lateness_class", "where the lateness comes from: none, rank, message, "
                                     "compute or call"},
        {"mpiwatch::partition", "partition of the event (docs/logical.md)"}};
    for (int i = 0; i < A_N; i++)
        for (int j = 0; j < 2; j++)
            o->s_attr[i][j] = str_add(o, attr[i][j]);
    for (unsigned c = 0; c < MW_LATE_COUNT; c++)
        o->s_cls[c] = str_add(o, mw_logical_class_name(c));
    o->s_metric[0][0] = str_add(o, "lateness");
    o->s_metric[0][1] = str_add(o, "lateness of the communication event (docs/logical.md)");
    o->s_metric[1][0] = str_add(o, "differential lateness");
    o->s_metric[1][1] = str_add(o, "lateness minus the lateness the event inherited: non-zero "
                                   "where a delay starts");
    o->s_unit = str_add(o, "s");
    o->alist = OTF2_AttributeList_New();
    return o->str.oom || !o->alist ? -1 : 0;
}

static int write_logical_defs(otf2_x_t *o, OTF2_GlobalDefWriter *g)
{
    static const OTF2_Type types[A_N] = {OTF2_TYPE_UINT64, OTF2_TYPE_INT64, OTF2_TYPE_INT64,
                                         OTF2_TYPE_STRING, OTF2_TYPE_UINT64};
    if (!o->alist)
        return 0;
    for (uint32_t i = 0; i < A_N; i++)
        TRY_OTF2(
            OTF2_GlobalDefWriter_WriteAttribute(g, i, o->s_attr[i][0], o->s_attr[i][1], types[i]),
            "attribute");
    for (uint32_t i = 0; i < 2; i++)
        TRY_OTF2(OTF2_GlobalDefWriter_WriteMetricMember(
                     g, i, o->s_metric[i][0], o->s_metric[i][1], OTF2_METRIC_TYPE_USER,
                     OTF2_METRIC_ABSOLUTE_POINT, OTF2_TYPE_INT64, OTF2_BASE_DECIMAL, -9, o->s_unit),
                 "metric member");
    OTF2_MetricMemberRef members[2] = {0, 1};
    TRY_OTF2(OTF2_GlobalDefWriter_WriteMetricClass(g, 0, 2, members, OTF2_METRIC_ASYNCHRONOUS,
                                                   OTF2_RECORDER_KIND_ABSTRACT),
             "metric class");
    return 0;
}

/* The completion of a request (Wait*, Test*). */
static int write_done(otf2_x_t *o, OTF2_EvtWriter *w, uint32_t me, const slot_t *s, uint64_t *last)
{
    const mw_trace_rec_t *r = s->r;
    pending_t *p = r->req ? pend_find(o, r->req) : NULL;
    uint32_t comm = 0;
    int64_t peer;
    coll_info_t ci;
    if (r->flags & MW_TF_CANCELLED) {
        if (p) {
            TRY_OTF2(OTF2_EvtWriter_MpiRequestCancelled(w, NULL, ts(o, last, s->t), r->req),
                     "MpiRequestCancelled");
            o->counts[C_CANCEL]++;
            pend_drop(o, p);
        }
        return 0;
    }
    if (r->kind == MW_TK_SEND_DONE) {
        if (!p) {
            o->orphans++;
            return 0;
        }
        TRY_OTF2(OTF2_EvtWriter_MpiIsendComplete(w, NULL, ts(o, last, s->t), r->req),
                 "MpiIsendComplete");
        o->counts[C_ISEND_DONE]++;
        pend_drop(o, p);
        return 0;
    }
    if (r->kind == MW_TK_COLL_DONE) {
        /* OTF2 3.0 has no events for non-blocking collectives: the operation is written where
         * it completes, as a Begin and an End at its completion. */
        if (!p || p->kind != MW_TK_ICOLL) {
            o->orphans++;
            return 0;
        }
        const mw_trace_rec_t *post = p->post;
        int64_t p_ev = p->ev;
        pend_drop(o, p);
        if (coll_info(o, post, me, &ci) < 0) {
            o->untranslated++;
            return 0;
        }
        uint64_t t = ts(o, last, s->t);
        TRY_OTF2(OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, t), "MpiCollectiveBegin");
        TRY_OTF2(OTF2_EvtWriter_MpiCollectiveEnd(w, ev_attrs(o, p_ev), t, ci.op, ci.comm, ci.root,
                                                 ci.sent, ci.recvd),
                 "MpiCollectiveEnd");
        o->counts[C_CBEGIN]++;
        o->counts[C_CEND]++;
        return ev_metric(o, w, p_ev, last);
    }
    /* RECV_DONE */
    if ((r->flags & MW_TF_PROC_NULL) || (p && p->kind != MW_TK_IRECV)) {
        if (p)
            pend_drop(o, p);
        return 0;
    }
    if ((peer = translate(o, r, r->peer, &comm)) < 0) {
        o->untranslated++;
        if (p)
            pend_drop(o, p);
        return 0;
    }
    if (p) {
        TRY_OTF2(OTF2_EvtWriter_MpiIrecv(w, ev_attrs(o, s->ev), ts(o, last, s->t), (uint32_t)peer,
                                         comm, (uint32_t)r->tag, r->bytes, r->req),
                 "MpiIrecv");
        o->counts[C_IRECV]++;
        pend_drop(o, p);
        return ev_metric(o, w, s->ev, last);
    }
    /* Posted in a window that is not traced: the message still arrived, here. */
    o->orphans++;
    TRY_OTF2(OTF2_EvtWriter_MpiRecv(w, ev_attrs(o, s->ev), ts(o, last, s->t), (uint32_t)peer, comm,
                                    (uint32_t)r->tag, r->bytes),
             "MpiRecv");
    o->counts[C_RECV]++;
    return ev_metric(o, w, s->ev, last);
}

/* One slot's events. */
static int write_slot(otf2_x_t *o, OTF2_EvtWriter *w, uint32_t me, const slot_t *s, uint64_t *last)
{
    const mw_trace_rec_t *r = s->r;
    uint32_t comm = 0;
    int64_t peer;
    coll_info_t ci;
    int msg = !(r->flags & (MW_TF_PROC_NULL | MW_TF_CANCELLED));
    if (s->sub == 0) {
        TRY_OTF2(OTF2_EvtWriter_Enter(w, NULL, ts(o, last, s->t), o->region[r->fn]), "Enter");
        o->counts[C_ENTER]++;
        return 0;
    }
    if (s->sub == 4) {
        TRY_OTF2(OTF2_EvtWriter_Leave(w, NULL, ts(o, last, s->t), o->region[r->fn]), "Leave");
        o->counts[C_LEAVE]++;
        return 0;
    }
    switch (r->kind) {
    case MW_TK_SEND:
    case MW_TK_ISEND:
        if (!msg)
            return 0;
        if ((peer = translate(o, r, r->peer, &comm)) < 0) {
            o->untranslated++;
            return 0;
        }
        if (r->kind == MW_TK_SEND) {
            TRY_OTF2(OTF2_EvtWriter_MpiSend(w, ev_attrs(o, s->ev), ts(o, last, s->t),
                                            (uint32_t)peer, comm, (uint32_t)r->tag, r->bytes),
                     "MpiSend");
            o->counts[C_SEND]++;
            return ev_metric(o, w, s->ev, last);
        }
        TRY_OTF2(OTF2_EvtWriter_MpiIsend(w, ev_attrs(o, s->ev), ts(o, last, s->t), (uint32_t)peer,
                                         comm, (uint32_t)r->tag, r->bytes, r->req),
                 "MpiIsend");
        o->counts[C_ISEND]++;
        if (ev_metric(o, w, s->ev, last) < 0)
            return -1;
        return pend_add(o, r, s->ev);
    case MW_TK_IRECV:
        if (!msg)
            return 0;
        TRY_OTF2(OTF2_EvtWriter_MpiIrecvRequest(w, NULL, ts(o, last, s->t), r->req),
                 "MpiIrecvRequest");
        o->counts[C_IRECV_REQ]++;
        return pend_add(o, r, s->ev);
    case MW_TK_ICOLL:
        return msg ? pend_add(o, r, s->ev) : 0;
    case MW_TK_SEND_DONE:
    case MW_TK_RECV_DONE:
    case MW_TK_COLL_DONE:
        return write_done(o, w, me, s, last);
    case MW_TK_RECV:
        if (!msg)
            return 0;
        if ((peer = translate(o, r, r->peer, &comm)) < 0) {
            o->untranslated++;
            return 0;
        }
        TRY_OTF2(OTF2_EvtWriter_MpiRecv(w, ev_attrs(o, s->ev), ts(o, last, s->t), (uint32_t)peer,
                                        comm, (uint32_t)r->tag, r->bytes),
                 "MpiRecv");
        o->counts[C_RECV]++;
        return ev_metric(o, w, s->ev, last);
    case MW_TK_COLL:
        /* Begin and End are decided alike (the same record), so they stay paired. */
        if (coll_info(o, r, me, &ci) < 0) {
            if (s->sub == 3 && coll_kind(r->fn))
                o->untranslated++;
            else if (s->sub == 3)
                o->no_coll_op++;
            return 0;
        }
        if (s->sub == 1) {
            TRY_OTF2(OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, ts(o, last, s->t)),
                     "MpiCollectiveBegin");
            o->counts[C_CBEGIN]++;
        } else {
            TRY_OTF2(OTF2_EvtWriter_MpiCollectiveEnd(w, ev_attrs(o, s->ev), ts(o, last, s->t),
                                                     ci.op, ci.comm, ci.root, ci.sent, ci.recvd),
                     "MpiCollectiveEnd");
            o->counts[C_CEND]++;
            return ev_metric(o, w, s->ev, last);
        }
        return 0;
    default:
        return 0;
    }
}

/* The record of a walk entry, and its logical event (-1 none). */
static const mw_trace_rec_t *ref_rec(const otf2_x_t *o, const mw__xt_ref_t *ref)
{
    return &o->x->parts[ref->part].recs[ref->rec];
}

static int64_t ref_event(const otf2_x_t *o, const mw__xt_ref_t *ref)
{
    return o->ix.event ? o->ix.event[o->ix.off[ref->part] + ref->rec] : -1;
}

/* The slots of one location's records (lr[0..n), sorted by start). Returns their count (at
 * most 4 per record). */
static size_t make_slots(const otf2_x_t *o, const mw__xt_ref_t *lr, size_t n, slot_t *s)
{
    size_t ns = 0;
    uint64_t ncalls = 0;
    for (size_t i = 0; i < n; i++) {
        const mw_trace_rec_t *r = ref_rec(o, &lr[i]);
        if (!mw_trace_is_call(r))
            continue;
        uint64_t k = ++ncalls;
        slot_t c = {k, 0, lr[i].t0, (uint32_t)i, r, lr[i].t0, lr[i].t1, ref_event(o, &lr[i])};
        s[ns++] = c;
        c.sub = 1;
        if (r->kind == MW_TK_SEND || r->kind == MW_TK_ISEND || r->kind == MW_TK_IRECV ||
            r->kind == MW_TK_ICOLL || r->kind == MW_TK_COLL)
            s[ns++] = c;
        c.sub = 3;
        c.t = lr[i].t1;
        if (r->kind == MW_TK_RECV || r->kind == MW_TK_COLL)
            s[ns++] = c;
        c.sub = 4;
        s[ns++] = c;
    }
    /* Points (completions, the receive half of a Sendrecv) go inside the call that began last
     * at or before them when it contains them, otherwise after it, alone. The Enter slots are
     * in start order: a binary search finds that call. */
    size_t ncs = ns;
    for (size_t i = 0; i < n; i++) {
        const mw_trace_rec_t *r = ref_rec(o, &lr[i]);
        if (mw_trace_is_call(r))
            continue;
        int part = (r->flags & MW_TF_PART) != 0;
        int64_t at = lr[i].t0;
        size_t lo = 0, hi = ncs;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (s[mid].t0 <= at)
                lo = mid + 1;
            else
                hi = mid;
        }
        uint64_t k = lo ? s[lo - 1].call : 0;
        int inside = k && at >= s[lo - 1].t0 && (part ? lr[i].t1 : at) <= s[lo - 1].t1;
        s[ns++] = (slot_t){k,
                           (uint8_t)(inside ? (part ? 3 : 2) : 5),
                           part ? lr[i].t1 : at,
                           (uint32_t)i,
                           r,
                           lr[i].t0,
                           lr[i].t1,
                           ref_event(o, &lr[i])};
    }
    return ns;
}

/* Writes the events of every location of rank `rank` (its parts: x->parts[first..last)). */
static int write_rank(otf2_x_t *o, uint32_t rank, size_t first, size_t last)
{
    /* Records of calls still in progress are left out: the call's own record comes with the
     * window it ends in. */
    mw__xt_ref_t *lr = NULL;
    size_t k = 0;
    int rc = mw__xt_refs(o->x, first, last, MW__XT_BY_THREAD, 1, &lr, &k, &o->open_calls);
    slot_t *s = rc == 0 ? malloc((4 * k + 1) * sizeof *s) : NULL;
    if (!s) {
        free(lr);
        fprintf(stderr, "mpiwatch-export: out of memory\n");
        return -1;
    }
    /* Thread 0 always has a location (COMM_LOCATIONS refers to it), even without records. */
    size_t i = 0;
    uint32_t thread = 0;
    for (;;) {
        size_t j = i;
        while (j < k && lr[j].thread == thread)
            j++;
        if (j > i || thread == 0) {
            OTF2_EvtWriter *w = OTF2_Archive_GetEvtWriter(o->ar, loc_id(rank, thread));
            if (!w) {
                fprintf(stderr, "mpiwatch-export: OTF2: no event writer for rank %" PRIu32 "\n",
                        rank);
                rc = -1;
                break;
            }
            size_t ns = make_slots(o, lr + i, j - i, s);
            qsort(s, ns, sizeof *s, cmp_slot);
            uint64_t lastt = 0;
            pend_clear(o); /* requests are per location */
            for (size_t e = 0; e < ns && rc == 0; e++)
                rc = write_slot(o, w, rank, &s[e], &lastt);
            uint64_t nev = 0;
            if (rc == 0 && otf2_ok(OTF2_EvtWriter_GetNumberOfEvents(w, &nev), "events") < 0)
                rc = -1;
            uint64_t id = loc_id(rank, thread);
            uint64_t *pos = bsearch(&id, o->locs, o->nlocs, sizeof *o->locs, cmp_u64);
            if (pos)
                o->loc_events[pos - o->locs] = nev;
            o->events += nev;
            if (otf2_ok(OTF2_Archive_CloseEvtWriter(o->ar, w), "closing an event writer") < 0)
                rc = -1;
            if (rc < 0)
                break;
        }
        if (j >= k)
            break;
        i = j;
        thread = lr[j].thread;
    }
    free(lr);
    free(s);
    return rc;
}

static int write_events(otf2_x_t *o)
{
    const mw__xt_t *x = o->x;
    TRY_OTF2(OTF2_Archive_OpenEvtFiles(o->ar), "opening the event files");
    size_t i = 0;
    for (uint32_t rank = 0; rank < x->size; rank++) {
        size_t j = i;
        while (j < x->nparts && x->parts[j].rank == rank)
            j++;
        if (write_rank(o, rank, i, j) < 0)
            return -1;
        i = j;
    }
    TRY_OTF2(OTF2_Archive_CloseEvtFiles(o->ar), "closing the event files");
    /* An empty local definition file per location: readers expect one. */
    TRY_OTF2(OTF2_Archive_OpenDefFiles(o->ar), "opening the definition files");
    for (size_t l = 0; l < o->nlocs; l++) {
        OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(o->ar, o->locs[l]);
        if (!dw) {
            fprintf(stderr, "mpiwatch-export: OTF2: no definition writer\n");
            return -1;
        }
        TRY_OTF2(OTF2_Archive_CloseDefWriter(o->ar, dw), "closing a definition writer");
    }
    TRY_OTF2(OTF2_Archive_CloseDefFiles(o->ar), "closing the definition files");
    return 0;
}

/* ---- global definitions ------------------------------------------------------------------- */

/* The host index of every rank of the job description (-1: not known), in one pass over its
 * ranks (one scan per rank would be quadratic when the list is not in rank order). An entry
 * at the index of its rank wins over another entry of the same rank. NULL when out of memory. */
static int64_t *rank_hosts(const Mpiwatch__JobInfo *job, uint32_t size)
{
    int64_t *h = malloc(((size_t)size + 1) * sizeof *h);
    if (!h)
        return NULL;
    for (uint32_t r = 0; r < size; r++)
        h[r] = INT64_MIN;
    for (size_t i = 0; job && i < job->n_ranks; i++) {
        const Mpiwatch__RankInfo *ri = job->ranks[i];
        if (!ri || ri->rank >= size || (h[ri->rank] != INT64_MIN && i != ri->rank))
            continue;
        h[ri->rank] = ri->host < job->n_hosts ? (int64_t)ri->host : -1;
    }
    for (uint32_t r = 0; r < size; r++)
        if (h[r] == INT64_MIN)
            h[r] = -1;
    return h;
}

/* COMM_LOCATIONS, then a group per communicator (its members' world ranks in communicator
 * rank order; SELF as a COMM_SELF group), then the communicators. */
static int write_comms(otf2_x_t *o, OTF2_GlobalDefWriter *g, uint32_t s_empty, uint32_t s_locs,
                       uint32_t s_world, uint32_t s_self, uint32_t s_comm0)
{
    const mw__xt_t *x = o->x;
    uint64_t *m = malloc(((size_t)x->size + 1) * sizeof *m);
    if (!m)
        return -1;
    for (uint32_t r = 0; r < x->size; r++)
        m[r] = loc_id(r, 0);
    int rc = otf2_ok(OTF2_GlobalDefWriter_WriteGroup(g, 0, s_locs, OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                                     OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                                     x->size, m),
                     "group");
    for (uint32_t i = 0; i < o->ncomm_ids && rc == 0; i++) {
        const mw__xt_comm_t *c = &x->comms[o->comm_order[i]];
        OTF2_GroupType type = OTF2_GROUP_TYPE_COMM_GROUP;
        uint32_t n = 0;
        uint64_t *mm = m, *own = NULL;
        if (c->id == MW_COMM_ID_WORLD) {
            for (uint32_t r = 0; r < x->size; r++)
                m[r] = r;
            n = x->size;
        } else if (c->id == MW_COMM_ID_SELF) {
            type = OTF2_GROUP_TYPE_COMM_SELF;
        } else {
            own = malloc(((size_t)c->size + 1) * sizeof *own);
            if (!own) {
                rc = -1;
                break;
            }
            for (uint32_t k = 0; k < c->size; k++)
                own[k] = c->world[k];
            n = c->size;
            mm = own;
        }
        rc = otf2_ok(OTF2_GlobalDefWriter_WriteGroup(g, 1 + i, s_empty, type, OTF2_PARADIGM_MPI,
                                                     OTF2_GROUP_FLAG_NONE, n, mm),
                     "communicator group");
        free(own);
    }
    free(m);
    for (uint32_t i = 0; i < o->ncomm_ids && rc == 0; i++) {
        const mw__xt_comm_t *c = &x->comms[o->comm_order[i]];
        uint32_t name = c->id == MW_COMM_ID_WORLD  ? s_world
                        : c->id == MW_COMM_ID_SELF ? s_self
                                                   : s_comm0 + i - 2;
        uint32_t parent = OTF2_UNDEFINED_COMM;
        if (c->id > MW_COMM_ID_SELF) {
            const mw__xt_comm_t *p = c->parent ? mw__xt_comm(x, c->parent) : NULL;
            if (p && o->comm_id[p - x->comms] < i)
                parent = o->comm_id[p - x->comms];
        }
        rc = otf2_ok(OTF2_GlobalDefWriter_WriteComm(g, i, name, 1 + i, parent, OTF2_COMM_FLAG_NONE),
                     "communicator");
    }
    return rc;
}

static int write_defs(otf2_x_t *o)
{
    const mw__xt_t *x = o->x;
    const Mpiwatch__JobInfo *job = x->job;
    OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(o->ar);
    if (!g) {
        fprintf(stderr, "mpiwatch-export: OTF2: no global definition writer\n");
        return -1;
    }
    /* The strings first: the other definitions refer to them. */
    uint32_t s_empty = str_add(o, ""), s_mpi = str_add(o, "MPI");
    uint32_t s_machine = str_add(o, "machine"), s_node = str_add(o, "node");
    uint32_t s_locs = str_add(o, ""), s_world = str_add(o, "MPI_COMM_WORLD");
    uint32_t s_self = str_add(o, "MPI_COMM_SELF");
    uint32_t s_job = str_add(o, job && job->job && *job->job ? job->job : "mpiwatch job");
    uint32_t s_region0 = o->str.n;
    for (uint32_t i = 0; i < o->nregions; i++) {
        const char *name = mw_fn_name(o->region_fn[i]);
        str_add(o, name ? name : "unknown MPI function");
    }
    uint32_t nhosts = job ? (uint32_t)job->n_hosts : 0, s_host0 = o->str.n;
    for (uint32_t h = 0; h < nhosts; h++)
        str_add(o, job->hosts[h] && *job->hosts[h] ? job->hosts[h] : "unknown host");
    uint32_t s_rank0 = o->str.n;
    for (uint32_t r = 0; r < x->size; r++)
        str_addf(o, "MPI Rank %" PRIu32, r);
    uint32_t s_loc0 = o->str.n;
    for (size_t l = 0; l < o->nlocs; l++)
        str_addf(o, "rank %" PRIu32 " thread %" PRIu32, (uint32_t)o->locs[l],
                 (uint32_t)(o->locs[l] >> 32));
    uint32_t s_comm0 = o->str.n;
    for (uint32_t i = 2; i < o->ncomm_ids; i++) {
        const mw__xt_comm_t *c = &x->comms[o->comm_order[i]];
        const char *fn = mw_fn_name(c->fn);
        str_addf(o, "%s %016" PRIx64, fn ? fn : "communicator", c->id);
    }
    if (o->str.oom) {
        fprintf(stderr, "mpiwatch-export: out of memory\n");
        return -1;
    }
    TRY_OTF2(OTF2_GlobalDefWriter_WriteClockProperties(
                 g, 1000000000ull, o->tmin == UINT64_MAX ? 0 : o->tmin,
                 o->tmin == UINT64_MAX ? 1 : o->tmax - o->tmin + 1, OTF2_UNDEFINED_TIMESTAMP),
             "clock");
    for (uint32_t i = 0; i < o->str.n; i++)
        TRY_OTF2(OTF2_GlobalDefWriter_WriteString(g, i, o->str.v[i]), "string");
    TRY_OTF2(OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_MPI, s_mpi,
                                                OTF2_PARADIGM_CLASS_PROCESS),
             "paradigm");
    for (uint32_t i = 0; i < o->nregions; i++)
        TRY_OTF2(OTF2_GlobalDefWriter_WriteRegion(g, i, s_region0 + i, s_region0 + i, s_empty,
                                                  region_role(o->region_fn[i]), OTF2_PARADIGM_MPI,
                                                  OTF2_REGION_FLAG_NONE, s_empty, 0, 0),
                 "region");
    /* System tree: the job's machine, a node per host of the job description. */
    TRY_OTF2(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, s_job, s_machine,
                                                      OTF2_UNDEFINED_SYSTEM_TREE_NODE),
             "system tree");
    for (uint32_t h = 0; h < nhosts; h++)
        TRY_OTF2(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 1 + h, s_host0 + h, s_node, 0),
                 "system tree node");
    int64_t *hosts = rank_hosts(job, x->size);
    if (!hosts) {
        fprintf(stderr, "mpiwatch-export: out of memory\n");
        return -1;
    }
    for (uint32_t r = 0; r < x->size; r++)
        if (otf2_ok(OTF2_GlobalDefWriter_WriteLocationGroup(
                        g, r, s_rank0 + r, OTF2_LOCATION_GROUP_TYPE_PROCESS,
                        hosts[r] >= 0 ? (uint32_t)(1 + hosts[r]) : 0,
                        OTF2_UNDEFINED_LOCATION_GROUP),
                    "location group") < 0) {
            free(hosts);
            return -1;
        }
    free(hosts);
    for (size_t l = 0; l < o->nlocs; l++)
        TRY_OTF2(OTF2_GlobalDefWriter_WriteLocation(g, o->locs[l], s_loc0 + (uint32_t)l,
                                                    OTF2_LOCATION_TYPE_CPU_THREAD, o->loc_events[l],
                                                    (uint32_t)o->locs[l]),
                 "location");
    if (write_comms(o, g, s_empty, s_locs, s_world, s_self, s_comm0) < 0 ||
        write_logical_defs(o, g) < 0)
        return -1;
    TRY_OTF2(OTF2_Archive_CloseGlobalDefWriter(o->ar, g), "closing the global definitions");
    return 0;
}

/* ---- the export --------------------------------------------------------------------------- */

static void otf2_x_free(otf2_x_t *o)
{
    for (uint32_t i = 0; i < o->str.n; i++)
        free(o->str.v[i]);
    free(o->str.v);
    free(o->region);
    free(o->region_fn);
    free(o->comm_id);
    free(o->comm_order);
    free(o->locs);
    free(o->loc_events);
    free(o->pend);
    if (o->alist)
        OTF2_AttributeList_Delete(o->alist);
    mw__xt_index_free(&o->ix);
}

static void report(const otf2_x_t *o, const mw__xt_t *x, const char *anchor)
{
    fprintf(stderr,
            "mpiwatch-export: %s: %" PRIu64 " event(s) from %" PRIu64 " record(s), %zu "
            "location(s), %" PRIu32 " communicator(s):",
            anchor, o->events, x->records, o->nlocs, o->ncomm_ids);
    for (int i = 0; i < C_N; i++)
        if (o->counts[i])
            fprintf(stderr, " %s %" PRIu64, COUNT_NAMES[i], o->counts[i]);
    fputc('\n', stderr);
    if (o->logical_events)
        fprintf(stderr,
                "mpiwatch-export: %" PRIu64 " communication event(s) with their logical step and "
                "lateness (attributes mpiwatch::*, metrics lateness and differential lateness)\n",
                o->logical_events);
    if (o->untranslated)
        fprintf(stderr,
                "mpiwatch-export: warning: %" PRIu64 " message or collective event(s) on a "
                "communicator whose group is not known in full: Enter and Leave only\n",
                o->untranslated);
    if (o->orphans)
        fprintf(stderr,
                "mpiwatch-export: warning: %" PRIu64 " completion(s) of a request posted "
                "outside the traced windows or on another thread\n",
                o->orphans);
    if (o->no_coll_op)
        fprintf(stderr,
                "mpiwatch-export: %" PRIu64 " collective call(s) without an OTF2 operation "
                "(neighbourhood collectives, ...): Enter and Leave only\n",
                o->no_coll_op);
    if (o->clamped)
        fprintf(stderr,
                "mpiwatch-export: warning: %" PRIu64 " timestamp(s) raised to keep a location's "
                "time non-decreasing\n",
                o->clamped);
    if (o->cycles)
        fprintf(stderr,
                "mpiwatch-export: warning: %" PRIu64 " cycle(s) of parent communicators (the "
                "definitions contradict each other): one communicator of each written without "
                "parent\n",
                o->cycles);
    if (o->open_calls)
        fprintf(stderr,
                "mpiwatch-export: %" PRIu64 " record(s) of calls still in progress left out "
                "(the call is in the window it ended in)\n",
                o->open_calls);
}

int mw__export_otf2(const char *input, const char *dir)
{
    mw__xt_t x;
    int rc = mw__xt_load(&x, input);
    if (rc != 0) {
        mw__xt_free(&x);
        return rc;
    }
    mw__xt_warn(&x);
    if (x.nparts == 0)
        fprintf(stderr,
                "mpiwatch-export: warning: %s holds no traced window: the archive has no "
                "events\n",
                input);

    /* The archive goes into DIR, made when missing; an archive already there is kept. */
    char anchor[4096];
    struct stat st;
    snprintf(anchor, sizeof anchor, "%s/traces.otf2", dir);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "mpiwatch-export: cannot make %s: %s\n", dir, strerror(errno));
        mw__xt_free(&x);
        return 1;
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "mpiwatch-export: %s is not a directory\n", dir);
        mw__xt_free(&x);
        return 1;
    }
    if (access(anchor, F_OK) == 0) {
        fprintf(stderr,
                "mpiwatch-export: %s already holds an OTF2 archive (traces.otf2): not "
                "overwritten\n",
                dir);
        mw__xt_free(&x);
        return 1;
    }

    otf2_x_t o;
    memset(&o, 0, sizeof o);
    o.x = &x;
    if (getrandom(&o.pend_mult, sizeof o.pend_mult, 0) != (ssize_t)sizeof o.pend_mult)
        o.pend_mult = 0x9e3779b97f4a7c15ull ^ (uint64_t)time(NULL);
    o.pend_mult |= 1;
    rc = 1;
    if (plan_regions_locations(&o) < 0 || plan_comms(&o) < 0 || plan_logical(&o) < 0) {
        fprintf(stderr, "mpiwatch-export: out of memory\n");
        goto out;
    }
    o.ar = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                             OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!o.ar) {
        fprintf(stderr, "mpiwatch-export: OTF2: cannot open an archive in %s\n", dir);
        goto out;
    }
    if (otf2_ok(OTF2_Archive_SetFlushCallbacks(o.ar, &FLUSH, NULL), "flush callbacks") == 0 &&
        otf2_ok(OTF2_Archive_SetSerialCollectiveCallbacks(o.ar), "collective callbacks") == 0 &&
        otf2_ok(OTF2_Archive_SetCreator(o.ar, "mpiwatch-export"), "creator") == 0 &&
        otf2_ok(OTF2_Archive_SetDescription(o.ar, x.job && x.job->job ? x.job->job : ""),
                "description") == 0 &&
        write_events(&o) == 0 && write_defs(&o) == 0)
        rc = 0;
    if (otf2_ok(OTF2_Archive_Close(o.ar), "closing the archive") < 0)
        rc = 1;
out:
    if (rc == 0)
        report(&o, &x, anchor);
    otf2_x_free(&o);
    mw__xt_free(&x);
    return rc;
}
