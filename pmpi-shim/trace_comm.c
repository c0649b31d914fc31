/* trace_comm.c: the communicator table of the trace (docs/trace.md "Records and
 * communicators").
 *
 * DESIGN: every member of a new communicator computes the same job-wide id without
 * communicating. A communicator made collectively over a parent (dup, idup, split,
 * split_type, create, cart/graph/dist_graph creation, cart_sub, intercomm_merge) gets
 * H64(parent id, the parent's collective instance when the creating call started, world rank
 * of the new communicator's rank 0): creation is ordered with the parent's other collectives
 * on every member, and the communicators one call makes are disjoint, so their rank 0 differ.
 * MPI_Comm_create_group and MPI_Intercomm_create have no collective parent: their id hashes
 * the sorted world ranks of the group(s), the tag and how often this rank has made the same
 * one before. Connect, accept, spawn and join reach processes outside the job: flagged
 * external. MPI_COMM_WORLD is 1 and MPI_COMM_SELF 2 (proto/mw_trace.h).
 *
 * Registration takes a mutex (creation is no hot path). Lookups (mw__comm_index in trace.h)
 * take none: an entry is written completely before its map slot is published with release
 * order, and entries are never moved or reused, so the sender thread can read them too.
 * Freeing a communicator turns its map slot into a tombstone (key kept, index 0): lookups of
 * a freed handle find "unknown", and MPI's reuse of the handle re-registers the slot.
 * Member arrays (world rank of each member) are shared between communicators with the same
 * group (dups) and bounded in total by MW_COMM_WORLD_BYTES.
 */
#include "shim.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

_Atomic uint64_t *mw__comm_map;
mw_comm_t *mw__comms;
_Atomic uint32_t mw__ncomms;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static MPI_Group world_group = MPI_GROUP_NULL;
static int32_t self_world[1];
static size_t world_bytes;
/* counters (MPIWATCH_VERBOSE) */
static uint64_t n_full, n_unknown_parent, n_no_members, n_external, n_freed;
/* occurrences of group-hashed ids, for ids made twice from the same group and tag */
#define OCC_SLOTS 1024u
static uint64_t occ_key[OCC_SLOTS];
static uint32_t occ_n[OCC_SLOTS];

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 29;
    return h;
}

/* Ids 0..2 are "none", WORLD and SELF. */
static uint64_t final_id(uint64_t h)
{
    return h < 3 ? h + 3 : h;
}

static void map_put(uint32_t key, uint32_t index)
{
    uint32_t h = mw__comm_slot(key), free_at = UINT32_MAX;
    for (unsigned i = 0; i < MW_COMM_PROBE; i++, h = (h + 1) & (MW_COMM_MAP - 1)) {
        uint64_t v = atomic_load_explicit(&mw__comm_map[h], memory_order_relaxed);
        if (v && (uint32_t)(v >> 32) == key) {
            free_at = h; /* the same handle again (a tombstone, or a handle MPI reused) */
            break;
        }
        if (!v) {
            if (free_at == UINT32_MAX)
                free_at = h;
            break;
        }
    }
    if (free_at == UINT32_MAX) {
        n_full++;
        return;
    }
    atomic_store_explicit(&mw__comm_map[free_at], (uint64_t)key << 32 | index,
                          memory_order_release);
}

int mw__comm_init(void)
{
    size_t mb = MW_COMM_MAP * sizeof(uint64_t), eb = MW_COMM_MAX * sizeof(mw_comm_t);
    void *m = mmap(NULL, mb + eb, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return -1;
    mw__comms = (mw_comm_t *)((unsigned char *)m + mb);
    PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
    uint64_t now = mw__global_ns(mw__now());
    mw_comm_t *w = &mw__comms[1], *s = &mw__comms[2];
    w->id = MW_COMM_ID_WORLD;
    w->rank = (uint32_t)mw__g.rank;
    w->size = w->nworld = (uint32_t)mw__g.size;
    w->created_ns = now;
    self_world[0] = mw__g.rank;
    s->id = MW_COMM_ID_SELF;
    s->size = s->nworld = 1;
    s->world = self_world;
    s->created_ns = now;
    atomic_store_explicit(&mw__ncomms, 3, memory_order_release);
    mw__comm_map = m;
    map_put((uint32_t)PMPI_Comm_c2f(MPI_COMM_WORLD), 1);
    map_put((uint32_t)PMPI_Comm_c2f(MPI_COMM_SELF), 2);
    return 0;
}

mw_comm_t *mw__comm_entry(uint32_t index)
{
    if (!mw__comms || index == 0 ||
        index >= atomic_load_explicit(&mw__ncomms, memory_order_acquire))
        return NULL;
    return &mw__comms[index];
}

unsigned mw__comm_count(void)
{
    uint32_t n = atomic_load_explicit(&mw__ncomms, memory_order_acquire);
    return n ? n - 1 : 0;
}

/* World ranks of a group's members (malloc'ed), or NULL (no memory, over the bound). */
static int32_t *group_world(MPI_Group g, int n)
{
    if (n <= 0 || world_bytes + (size_t)n * 4 > MW_COMM_WORLD_BYTES)
        return NULL;
    int32_t *out = malloc((size_t)n * sizeof *out);
    int *in = malloc((size_t)n * sizeof *in);
    if (!out || !in) {
        free(out);
        free(in);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        in[i] = i;
    int *tr = (int *)out; /* int and int32_t are the same size here */
    if (PMPI_Group_translate_ranks(g, n, in, world_group, tr) != MPI_SUCCESS) {
        free(out);
        free(in);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        if (tr[i] == MPI_UNDEFINED || tr[i] < 0)
            out[i] = -1;
    free(in);
    world_bytes += (size_t)n * 4;
    return out;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Hash of the sorted world ranks of up to two member lists. */
static uint64_t members_hash(const int32_t *a, uint32_t na, const int32_t *b, uint32_t nb)
{
    uint32_t n = na + nb;
    int32_t *all = malloc((size_t)(n ? n : 1) * sizeof *all);
    if (!all)
        return 0;
    if (na)
        memcpy(all, a, na * sizeof *all);
    if (nb)
        memcpy(all + na, b, nb * sizeof *all);
    qsort(all, n, sizeof *all, cmp_i32);
    uint64_t h = mix(0x67726f7570ull, n);
    for (uint32_t i = 0; i < n; i++)
        h = mix(h, (uint64_t)(uint32_t)all[i]);
    free(all);
    return h;
}

/* How many times this rank has made the id h before (group-hashed ids). */
static uint32_t occurrence(uint64_t h)
{
    uint32_t s = (uint32_t)h & (OCC_SLOTS - 1);
    for (unsigned i = 0; i < OCC_SLOTS; i++, s = (s + 1) & (OCC_SLOTS - 1)) {
        if (occ_key[s] == h || occ_n[s] == 0) {
            occ_key[s] = h;
            return occ_n[s]++;
        }
    }
    return 0;
}

uint32_t mw__comm_created(uint32_t parent, uint64_t instance, MPI_Comm newcomm, unsigned fn,
                          int made, int tag)
{
    if (!mw__comm_map || newcomm == MPI_COMM_NULL)
        return 0;
    uint32_t key = (uint32_t)PMPI_Comm_c2f(newcomm);
    pthread_mutex_lock(&lock);
    uint32_t idx = atomic_load_explicit(&mw__ncomms, memory_order_relaxed);
    if (idx >= MW_COMM_MAX) {
        n_full++;
        pthread_mutex_unlock(&lock);
        return 0;
    }
    const mw_comm_t *p = parent ? &mw__comms[parent] : NULL;
    mw_comm_t *e = &mw__comms[idx];
    memset(e, 0, sizeof *e);
    e->parent = p ? p->id : 0;
    e->fn = (uint16_t)fn;
    e->created_ns = mw__global_ns(mw__now());
    int inter = 0, rank = 0, size = 0, rsize = 0;
    PMPI_Comm_test_inter(newcomm, &inter);
    if (made == MW_MADE_IDUP && !p) {
        n_unknown_parent++; /* not usable yet and nothing to copy: an entry without members */
    } else if (made == MW_MADE_IDUP) {
        /* Not usable before its request completes: the parent's group, shared. */
        rank = (int)p->rank;
        size = (int)p->size;
        rsize = (int)p->remote_size;
        inter = p->flags & MW_COMM_INTER;
    } else {
        PMPI_Comm_rank(newcomm, &rank);
        PMPI_Comm_size(newcomm, &size);
        if (inter)
            PMPI_Comm_remote_size(newcomm, &rsize);
    }
    e->rank = (uint32_t)rank;
    e->size = (uint32_t)size;
    e->remote_size = (uint32_t)rsize;
    e->flags = inter ? MW_COMM_INTER : 0;
    /* Members: the parent's array when the group is the parent's (dup, idup), else the
     * group's (the remote group's for an inter-communicator: the peers of its messages). */
    int same = p && (made == MW_MADE_IDUP || (fn == MW_ID_Comm_dup && p->size == (uint32_t)size) ||
                     (fn == MW_ID_Comm_dup_with_info && p->size == (uint32_t)size));
    int32_t *local = NULL; /* the local group's world ranks, when computed here */
    if (same) {
        e->world = p->world;
        e->nworld = p->nworld;
    } else if (made != MW_MADE_IDUP) {
        MPI_Group g = MPI_GROUP_NULL;
        if (PMPI_Comm_group(newcomm, &g) == MPI_SUCCESS) {
            local = group_world(g, size);
            PMPI_Group_free(&g);
        }
        if (inter) {
            if (PMPI_Comm_remote_group(newcomm, &g) == MPI_SUCCESS) {
                e->world = group_world(g, rsize);
                e->nworld = e->world ? (uint32_t)rsize : 0;
                PMPI_Group_free(&g);
            }
        } else {
            e->world = local;
            e->nworld = local ? (uint32_t)size : 0;
        }
        if (!local)
            n_no_members++;
    }
    /* The id. */
    uint64_t h;
    int32_t rank0 = same && p ? mw__comm_world(p, 0) : local ? local[0] : -1;
    switch (made) {
    case MW_MADE_CREATE:
    case MW_MADE_IDUP:
        if (!p) {
            n_unknown_parent++;
            e->flags |= MW_COMM_EXTERNAL; /* no parent id: not matchable */
            h = mix(mix(0x6e6f706172ull, fn), occurrence(mix(fn, 0x6e70ull)));
        } else {
            h = mix(mix(mix(0x636f6d6dull, p->id), instance), (uint64_t)(uint32_t)rank0);
        }
        break;
    case MW_MADE_GROUP:
    case MW_MADE_INTER: {
        const int32_t *rw = inter ? e->world : NULL;
        uint32_t rn = inter ? e->nworld : 0;
        h = mix(members_hash(local, local ? (uint32_t)size : 0, rw, rn), (uint64_t)(uint32_t)tag);
        h = mix(h, occurrence(h));
        e->flags |= MW_COMM_GROUP_HASH;
        break;
    }
    default:
        n_external++;
        e->flags |= MW_COMM_EXTERNAL;
        h = mix(mix(mix(0x6578746eull, p ? p->id : 0), instance), fn);
        h = mix(h, occurrence(h));
        break;
    }
    if (inter && local && e->world != local) {
        free(local); /* only its hash was needed */
        world_bytes -= (size_t)size * 4;
    }
    e->id = final_id(h);
    atomic_store_explicit(&e->instance, 0, memory_order_relaxed);
    atomic_store_explicit(&mw__ncomms, idx + 1, memory_order_release);
    map_put(key, idx);
    pthread_mutex_unlock(&lock);
    return idx;
}

void mw__comm_freed(int64_t fkey)
{
    if (!mw__comm_map || fkey < 0)
        return;
    uint32_t key = (uint32_t)fkey;
    pthread_mutex_lock(&lock);
    uint32_t h = mw__comm_slot(key);
    for (unsigned i = 0; i < MW_COMM_PROBE; i++, h = (h + 1) & (MW_COMM_MAP - 1)) {
        uint64_t v = atomic_load_explicit(&mw__comm_map[h], memory_order_relaxed);
        if (!v)
            break;
        if ((uint32_t)(v >> 32) == key) {
            atomic_store_explicit(&mw__comm_map[h], (uint64_t)key << 32, memory_order_release);
            n_freed++;
            break;
        }
    }
    pthread_mutex_unlock(&lock);
}

void mw__comm_log(void)
{
    if (!mw__comm_map)
        return;
    mw__log("trace communicators: %u known, %llu freed, %llu external, %llu without a known "
            "parent, %llu without members, %llu not kept (table full); member arrays %zu bytes",
            mw__comm_count(), (unsigned long long)n_freed, (unsigned long long)n_external,
            (unsigned long long)n_unknown_parent, (unsigned long long)n_no_members,
            (unsigned long long)n_full, world_bytes);
}
