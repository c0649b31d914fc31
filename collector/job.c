/* job.c: one MPI job as the collector sees it: its ranks, their lifecycle, and exact totals.
 *
 * DESIGN: per-rank state is one array sized by the job's size at the first hello, so every
 * later message finds its rank in O(1) and nothing is allocated per message. The totals used
 * by the report and the summary (per function, per rank and function, per communicating pair)
 * are accumulated here from every accepted sample, late or not, so they are exact whatever
 * happened to the windows. Per-function totals are dense by id; per-rank-function and pair
 * totals are sparse (a 16k-rank job touches ~20 functions and a few peers per rank, not
 * size x MW_FN_SPACE or size^2) in tables that grow by doubling (and start at room for 32
 * functions and 8 peers per rank), so allocation happens O(log n) times per job, not per
 * sample. Only validated messages reach this file.
 *
 * Those two tables are the main cost of the totals at scale, so they avoid hashing what is
 * predictable. A rank's first sample creates its entries as one block at the end of the table,
 * sorted by key (duplicates within the sample folded together), and later samples list mostly
 * the same keys, usually in the same order: each sample walks its rank's block like a merge
 * join (sequential memory) and binary-searches it when the order differs. Only an entry that
 * is not in the rank's block (a function or peer the rank had not reported in its first sample)
 * is appended elsewhere and indexed in a small hash of such "late" entries. Hashing every entry,
 * as before, cost a cache miss per function summary in a table of size x functions entries and
 * made a job's first window (where every entry is created) slow enough to close late.
 * Correctness never depends on the order of the keys in a sample; only the speed does. The
 * tables are read in any order by the outputs, which sort what they print.
 *
 * Placement (docs/topology.md): hosts and nodes are interned names (a hash index, so a burst
 * of hellos costs O(1) each); a node's hardware is the first description any hello of it
 * carried, even a repeated hello, and is never replaced, so the outcome depends only on the
 * order of the messages (replay regenerates it). Ranks' PU lists share one growing array.
 *
 * Caps (docs/collector.md, "Caps"): what hellos make the job keep is capped job-wide, not only
 * per message (proto/mw_limits.h): PU entries, hardware objects, distinct names and their
 * bytes, and an upper bound of the encoded job description, kept as hellos arrive (each part
 * is charged its largest possible encoding). A part of a hello over a cap is not kept and is
 * counted by reason (mw_cap_reason_t); the rank itself is always in the job, so none of its
 * samples is lost. The per-rank array is sized by the job size a hello claims, but it is
 * calloc'd and only written for ranks that say hello, so a 152-byte hello claiming 2^20 ranks
 * costs address space, not memory: pages are touched as ranks actually connect.
 *
 * Loss accounting (docs/collector.md, "Loss accounting"): every sample and bye of a current
 * library carries the rank's running totals since MPI_Init (per function ever called: calls,
 * ns, bytes; samples produced). The latest ones are kept per rank and function beside what was
 * merged (mw_rank_fn_t), and job-wide as two sums, so that missed = totals - merged is exact
 * and costs O(1) to read. Samples that arrive after their window closed are merged into the
 * totals like any other (counted as late, not as missed). The check (mw__job_totals_check)
 * makes missed never negative: a rank's totals never decrease, and each sample's totals grow
 * by at least what the sample itself adds, so the sum of its merged samples can never exceed
 * its latest totals. A rank either sends totals from its first message on or never (older
 * libraries): the two are not mixed, so its figures are either all accounted or flagged.
 */
#include "aggstate.h"
#include "collector.h"
#include "dormant.h"
#include "job.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void copy_string(char *dst, const char *src)
{
    size_t n = src ? strnlen(src, MW_MAX_STRING) : 0;
    memcpy(dst, src ? src : "", n);
    dst[n] = '\0';
}

static uint64_t string_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* A table of interned names (the hosts, the nodes), as fields of mw_job_t. */
typedef struct {
    char ***names;
    uint64_t **hash;
    uint32_t *n, *cap;
    mw__index_t *index;
    mw_job_t *job; /* for the job-wide caps on names */
} name_table_t;

/* The largest encoding of each part of a JobInfo (protobuf varints: 10 bytes for a negative
 * int32, 5 for any other 32-bit value, 10 for 64 bits; a key byte and a length varint of at
 * most 5 bytes per field), which is what the job description budget is charged. */
#define INFO_FIXED (3u * (MW_MAX_STRING + 6u) + 256u + MW_GRID_MAX_SEGMENTS * 40u)
#define INFO_NAME(len) ((uint64_t)(len) + 6u) /* a host, or a node's name */
#define INFO_NODE 6u                          /* a NodeTopology's own key */
#define INFO_OBJECT 24u                       /* a TopoObject */
#define INFO_RANK 104u                        /* a RankInfo without PUs */
#define INFO_PU 5u                            /* one of its PUs */

/* Charges `bytes` to the job description's budget; 0 when they do not fit (nothing charged). */
static int info_charge(mw_job_t *job, uint64_t bytes)
{
    if (bytes > MW_JOB_MAX_INFO_BYTES - job->info_bytes)
        return 0;
    job->info_bytes += bytes;
    return 1;
}

/* Whether n more items of a job-wide list (used of max kept so far), each costing unit bytes
 * of the job description, may be kept: counted under reason when the list is full, under
 * job_info when the description is. */
static int job_admit(mw_job_t *job, uint64_t n, uint64_t used, uint64_t max, mw_cap_reason_t reason,
                     uint64_t unit)
{
    if (n > max - used) {
        job->capped[reason]++;
        return 0;
    }
    if (!info_charge(job, n * unit)) {
        job->capped[MW_CAP_JOB_INFO]++;
        return 0;
    }
    return 1;
}

int mw__job_info_charge(void *job, uint64_t bytes)
{
    return info_charge(job, bytes);
}

const char *mw__cap_reason_name(mw_cap_reason_t reason)
{
    static const char *const names[MW_CAP_COUNT] = {
#define MW_X(id, name) name,
        MW_CAP_REASONS(MW_X)
#undef MW_X
    };
    return (unsigned)reason < MW_CAP_COUNT ? names[reason] : "?";
}

/* Index of name `name` in a table, added when new; -1 when memory runs out, -2 when a new name
 * would go over a job-wide cap (counted by the caller). A hash index finds
 * a known name in O(1): the hellos of a 16k-rank job on 1k nodes arrive in one burst, and
 * scanning every host for each of them stalled ingest for tens of milliseconds. The index
 * keeps the first name of each hash; a name whose hash is already taken by another name (a
 * collision, or a crafted name) is found by scanning, as before. */
static int64_t intern_name(name_table_t t, const char *name)
{
    uint64_t h = string_hash(name);
    const uint32_t *known = mw__index_find(t.index, h);
    if (known && strcmp((*t.names)[*known], name) == 0)
        return *known;
    /* Scan when the index cannot answer alone: the hash is taken by another name, or some
     * name is not indexed (collisions, or memory ran out). */
    if (known || t.index->n != *t.n) {
        for (uint32_t i = 0; i < *t.n; i++)
            if ((*t.hash)[i] == h && strcmp((*t.names)[i], name) == 0)
                return i;
    }
    size_t len = strlen(name);
    mw_job_t *job = t.job;
    if (job->n_hosts + job->n_nodes >= MW_JOB_MAX_NAMES ||
        len > MW_JOB_MAX_NAME_BYTES - job->name_bytes)
        return -2;
    if (!info_charge(job, INFO_NAME(len) + (t.names == &job->nodes ? INFO_NODE : 0)))
        return -2;
    job->name_bytes += len;
    if (*t.n == *t.cap) {
        uint32_t cap = *t.cap ? *t.cap * 2 : 16;
        char **names = realloc(*t.names, cap * sizeof *names);
        if (!names)
            return -1;
        *t.names = names;
        uint64_t *hashes = realloc(*t.hash, cap * sizeof *hashes);
        if (!hashes)
            return -1;
        *t.hash = hashes;
        *t.cap = cap;
    }
    char *copy = strdup(name);
    if (!copy)
        return -1;
    (*t.names)[*t.n] = copy;
    (*t.hash)[*t.n] = h;
    if (!known) {
        int created;
        uint32_t *slot = mw__index_get(t.index, h, &created);
        if (slot) /* when the index is full, later names are still found by the scan above */
            *slot = *t.n;
    }
    return (*t.n)++;
}

/* Index of host name `name`, added when new; 0 (the "" host) when memory runs out or a cap
 * refuses it. */
static uint32_t job_intern_host(mw_job_t *job, const char *name)
{
    name_table_t t = {&job->hosts,     &job->host_hash,  &job->n_hosts,
                      &job->cap_hosts, &job->host_index, job};
    int64_t i = intern_name(t, name);
    if (i == -2)
        job->capped[MW_CAP_NAMES]++;
    return i < 0 ? 0 : (uint32_t)i;
}

/* Index of node `name`, added (without hardware) when new; -1 when memory runs out or a cap
 * refuses it (counted). Room for
 * the hardware of one more node is made first, so a node is never interned without it. */
static int64_t job_intern_node(mw_job_t *job, const char *name)
{
    if (job->n_nodes == job->cap_node_hw) {
        uint32_t cap = job->cap_node_hw ? job->cap_node_hw * 2 : 16;
        mw_node_hw_t *hw = realloc(job->node_hw, cap * sizeof *hw);
        if (!hw)
            return -1;
        memset(hw + job->cap_node_hw, 0, (cap - job->cap_node_hw) * sizeof *hw);
        job->node_hw = hw;
        job->cap_node_hw = cap;
    }
    name_table_t t = {&job->nodes,     &job->node_hash,  &job->n_nodes,
                      &job->cap_nodes, &job->node_index, job};
    int64_t i = intern_name(t, name);
    if (i == -2)
        job->capped[MW_CAP_NAMES]++;
    return i < 0 ? -1 : i;
}

/* Keeps the hardware a hello describes for node `node` if the node has none yet: the first
 * description wins, so that which rank reported it does not matter (see docs/topology.md).
 * Hardware that would take the job over MW_JOB_MAX_TOPO_OBJECTS or the job description's
 * budget is not kept (counted); a later hello of the node may still bring a smaller one. */
static void job_node_hardware(mw_job_t *job, uint32_t node, const Mpiwatch__NodeTopology *t)
{
    if (!t || t->n_objects == 0 || node >= job->n_nodes || job->node_hw[node].n_objects)
        return;
    if (!job_admit(job, t->n_objects, job->n_objects, MW_JOB_MAX_TOPO_OBJECTS, MW_CAP_OBJECTS,
                   INFO_OBJECT))
        return;
    mw_topo_obj_t *o = malloc(t->n_objects * sizeof *o);
    if (!o) {
        MW_LOG(MW_LOG_WARN, "node %s: no memory for its %zu hardware objects", job->nodes[node],
               t->n_objects);
        job->info_bytes -= (uint64_t)t->n_objects * INFO_OBJECT;
        return;
    }
    for (size_t i = 0; i < t->n_objects; i++) {
        o[i].type = t->objects[i]->type;
        o[i].parent = t->objects[i]->parent;
        o[i].logical = t->objects[i]->logical;
        o[i].os_index = t->objects[i]->os_index;
    }
    job->node_hw[node].objects = o;
    job->node_hw[node].n_objects = (uint32_t)t->n_objects;
    job->n_objects += t->n_objects;
}

/* Appends a rank's PU list to job->pus; leaves the rank without PUs when memory runs out, or
 * when the list would take the job over MW_JOB_MAX_PUS or the job description's budget
 * (counted). Called for a rank whose RankInfo is in the job description only. */
static void job_rank_pus(mw_job_t *job, mw_rank_t *r, const Mpiwatch__Hello *h)
{
    if (h->n_pus == 0)
        return;
    if (!job_admit(job, h->n_pus, job->n_pus, MW_JOB_MAX_PUS, MW_CAP_PUS, INFO_PU))
        return;
    uint32_t need = job->n_pus + (uint32_t)h->n_pus;
    if (need > job->cap_pus) {
        uint32_t cap = job->cap_pus ? job->cap_pus : 1024;
        while (cap < need)
            cap = cap > UINT32_MAX / 2 ? need : cap * 2;
        uint32_t *p = realloc(job->pus, (size_t)cap * sizeof *p);
        if (!p) {
            job->info_bytes -= (uint64_t)h->n_pus * INFO_PU;
            return;
        }
        job->pus = p;
        job->cap_pus = cap;
    }
    memcpy(job->pus + job->n_pus, h->pus, h->n_pus * sizeof *h->pus);
    r->pus_first = job->n_pus;
    r->pus_n = (uint32_t)h->n_pus;
    job->n_pus = need;
}

const char *mw__hello_node(const Mpiwatch__Hello *h)
{
    if (h->node && h->node[0])
        return h->node;
    return h->host ? h->host : "";
}

/* ---- per-rank totals: blocks and late entries (see DESIGN) --------------------------------- */

_Static_assert(sizeof(mw_rank_fn_t) <= 64 && sizeof(mw_pair_sum_t) <= 64, "entry size");

static void *entry_at(const mw__index_t *ix, uint32_t i)
{
    return (char *)ix->vals + (size_t)i * ix->elem;
}

static void entry_swap(mw__index_t *ix, uint32_t i, uint32_t j)
{
    unsigned char tmp[64];
    uint64_t k = ix->keys[i];
    ix->keys[i] = ix->keys[j];
    ix->keys[j] = k;
    memcpy(tmp, entry_at(ix, i), ix->elem);
    memcpy(entry_at(ix, i), entry_at(ix, j), ix->elem);
    memcpy(entry_at(ix, j), tmp, ix->elem);
}

/* Sorts entries [b, b + n) of a list by key (heapsort: in place, no allocation, O(n log n)
 * whatever the number of peers a rank reports). */
static void block_sort(mw__index_t *ix, uint32_t b, uint32_t n)
{
    const uint64_t *k = ix->keys + b;
    for (uint32_t end = n, start = n / 2;;) {
        uint32_t root;
        if (start > 0) {
            root = --start;
        } else {
            if (--end == 0)
                break;
            entry_swap(ix, b, b + end);
            root = 0;
        }
        for (uint32_t child; (child = 2 * root + 1) < end; root = child) {
            if (child + 1 < end && k[child + 1] > k[child])
                child++;
            if (k[root] >= k[child])
                break;
            entry_swap(ix, b + root, b + child);
        }
    }
}

/* Adds the figures of one entry into another with the same key. */
typedef void (*fold_fn)(void *into, const void *from);

static void fold_rank_fn(void *into, const void *from)
{
    mw_rank_fn_t *a = into;
    const mw_rank_fn_t *b = from;
    a->count += b->count;
    a->time_ns += b->time_ns;
    a->bytes += b->bytes;
}

static void fold_pair(void *into, const void *from)
{
    const mw_pair_sum_t *b = from;
    mw__pair_add(into, 0, b->src, b->dst, b->messages, b->bytes);
}

/* Turns the entries a rank's first sample appended at [b, ix->n) into its block: sorted, with
 * entries of the same key folded together. Sets *first (position + 1) and *count. */
static void block_close(mw__index_t *ix, uint32_t b, fold_fn fold, uint32_t *first, uint32_t *count)
{
    block_sort(ix, b, ix->n - b);
    uint32_t out = b;
    for (uint32_t i = b; i < ix->n; i++) {
        if (out > b && ix->keys[out - 1] == ix->keys[i]) {
            fold(entry_at(ix, out - 1), entry_at(ix, i));
            continue;
        }
        if (out != i) {
            ix->keys[out] = ix->keys[i];
            memcpy(entry_at(ix, out), entry_at(ix, i), ix->elem);
        }
        out++;
    }
    ix->n = out;
    *first = b + 1;
    *count = out - b;
}

/* The entry of `key` for a rank whose block is [b, b + n): the walk goes on from *pos (keys
 * usually come in the block's order), else a binary search of the block, else the late entries;
 * a new entry is appended and indexed among the late ones (*created set). NULL when a table is
 * full. */
static void *table_get(mw__index_t *ix, mw__index_t *late, uint32_t b, uint32_t n, uint32_t *pos,
                       uint64_t key, int *created)
{
    uint32_t end = b + n, p = *pos;
    *created = 0;
    if (p < end && ix->keys[p] == key) {
        *pos = p + 1;
        return entry_at(ix, p);
    }
    uint32_t lo = b, hi = end;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ix->keys[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < end && ix->keys[lo] == key) {
        *pos = lo + 1;
        return entry_at(ix, lo);
    }
    const uint32_t *at = mw__index_find(late, key);
    if (at)
        return entry_at(ix, *at);
    void *v = mw__index_append(ix, key);
    if (!v)
        return NULL;
    int fresh;
    uint32_t *slot = mw__index_get(late, key, &fresh);
    if (!slot) {
        ix->n--; /* an entry nobody could find again: count it as lost instead */
        return NULL;
    }
    *slot = ix->n - 1;
    *created = 1;
    return v;
}

/* Adds the traffic a rank sent to n peers (a peer may be listed twice) to its pairs: its first
 * entries make its block of job->pairs, later ones find theirs (table_get). */
static void rank_pairs_add(mw_job_t *job, mw_rank_t *r, uint32_t rank, size_t n,
                           const uint32_t *peer, const uint64_t *messages, const uint64_t *bytes)
{
    int first = r->pairs_first == 0;
    uint32_t b = first ? job->pairs.n : r->pairs_first - 1, pos = b;
    for (size_t i = 0; i < n; i++) {
        uint64_t key = (uint64_t)rank << 32 | peer[i];
        int created = 1;
        mw_pair_sum_t *p =
            first ? mw__index_append(&job->pairs, key)
                  : table_get(&job->pairs, &job->pairs_late, b, r->pairs_n, &pos, key, &created);
        if (!p) {
            job->overflow++;
            continue;
        }
        mw__pair_add(p, created, rank, peer[i], messages[i], bytes[i]);
    }
    if (first && job->pairs.n > b)
        block_close(&job->pairs, b, fold_pair, &r->pairs_first, &r->pairs_n);
}

/* ---- loss accounting (see DESIGN) --------------------------------------------------------- */

/* A rank's running totals as the wire carries them, from a sample or a bye. */
typedef struct {
    size_t n;
    const uint32_t *fn;
    const uint64_t *calls, *ns, *bytes;
    uint64_t samples;
    int present; /* the message carries totals at all */
} totals_t;

/* A bye's totals count as present when it lists any, or when the rank sent totals before (a
 * rank that never recorded a call lists none). */
static totals_t totals_of(const mw_rank_t *r, const Mpiwatch__Sample *s, const Mpiwatch__Bye *b)
{
    totals_t t = {0};
    if (s) {
        t = (totals_t){s->n_total_fn,
                       s->total_fn,
                       s->total_calls,
                       s->total_ns,
                       s->total_bytes,
                       s->samples_total,
                       0};
        t.present = s->n_total_fn || s->n_total_calls || s->n_total_ns || s->n_total_bytes ||
                    s->samples_total;
        if (t.present &&
            (s->n_total_calls != t.n || s->n_total_ns != t.n || s->n_total_bytes != t.n))
            t.n = SIZE_MAX; /* parallel arrays of different lengths: refused below */
    } else if (b) {
        t = (totals_t){b->n_total_fn,
                       b->total_fn,
                       b->total_calls,
                       b->total_ns,
                       b->total_bytes,
                       b->windows_sent,
                       0};
        t.present =
            r->has_totals || b->n_total_fn || b->n_total_calls || b->n_total_ns || b->n_total_bytes;
        if (t.present &&
            (b->n_total_calls != t.n || b->n_total_ns != t.n || b->n_total_bytes != t.n))
            t.n = SIZE_MAX;
    }
    return t;
}

/* The entry of `key` in a rank's block or among the late entries, without creating it. Keys
 * asked in increasing order walk the block: *pos (from the block's start) only moves forward. */
static const mw_rank_fn_t *rank_fn_find(const mw_job_t *job, const mw_rank_t *r, uint64_t key,
                                        uint32_t *pos)
{
    const mw__index_t *ix = &job->rank_fn;
    if (r->rank_fn_first) {
        uint32_t lo = *pos, hi = r->rank_fn_first - 1 + r->rank_fn_n;
        if (lo < hi && ix->keys[lo] == key) {
            *pos = lo + 1;
            return entry_at(ix, lo);
        }
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (ix->keys[mid] < key)
                lo = mid + 1;
            else
                hi = mid;
        }
        *pos = lo;
        if (lo < r->rank_fn_first - 1 + r->rank_fn_n && ix->keys[lo] == key) {
            *pos = lo + 1;
            return entry_at(ix, lo);
        }
    }
    const uint32_t *at = mw__index_find(&job->rank_fn_late, key);
    return at ? entry_at(ix, *at) : NULL;
}

/* Position of fn in the totals (ids strictly increasing, checked first), or -1. */
static int64_t totals_find(const totals_t *t, uint32_t fn)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->fn[mid] < fn)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->n && t->fn[lo] == fn ? (int64_t)lo : -1;
}

mw_reject_t mw__job_totals_check(const mw_job_t *job, uint32_t rank, const Mpiwatch__Sample *s,
                                 const Mpiwatch__Bye *b)
{
    const mw_rank_t *r = &job->ranks[rank];
    /* A rank known through an aggregator: its totals are in the aggregator's AggState. A bye the
     * aggregator forwarded, or a sample the rank sends here itself once its aggregator died
     * (MPIWATCH_COLLECTOR_FALLBACK), is accepted without them (aggstate.c). */
    if (b ? mw__aggstate_forwarded(job, rank) : mw__aggstate_via(job, rank)) {
        /* Its own totals, when it sends any, take the place of its share (aggstate.c). */
        totals_t t = totals_of(r, s, b);
        if (!t.present || (b && !b->n_total_fn && !t.samples))
            return MW_ACCEPTED;
        return t.n == SIZE_MAX ? MW_REJECT_TOTALS
                               : mw__aggstate_own_check(job, rank, t.n, t.fn, t.calls, t.ns,
                                                        t.bytes, t.samples);
    }
    totals_t t = totals_of(r, s, b);
    if (!t.present) /* an older library: accepted, unless this rank did send totals before */
        return r->has_totals ? MW_REJECT_TOTALS : MW_ACCEPTED;
    if (!r->has_totals && r->samples > 0) /* merged without totals before: not mixed */
        return MW_REJECT_TOTALS;
    /* The shape: parallel arrays, each function at most once, in increasing id, called at
     * least once; every value capped; the samples produced grow with every sample. */
    if (t.n > MW_FN_SPACE - 1 || t.samples > MW_TOTAL_MAX)
        return MW_REJECT_TOTALS;
    if (s ? t.samples <= r->tot_samples : t.samples < r->tot_samples)
        return MW_REJECT_TOTALS;
    /* The rank's previous totals of each entry, found once, for both passes below. */
    uint64_t prev[MW_FN_SPACE][3];
    uint32_t matched = 0, pos = r->rank_fn_first ? r->rank_fn_first - 1 : 0;
    for (size_t i = 0; i < t.n; i++) {
        if (t.fn[i] == 0 || t.fn[i] >= mw_fn_end() || (i && t.fn[i] <= t.fn[i - 1]) ||
            t.calls[i] == 0 || t.calls[i] > MW_TOTAL_MAX || t.ns[i] > MW_TOTAL_MAX ||
            t.bytes[i] > MW_TOTAL_MAX)
            return MW_REJECT_TOTALS;
        const mw_rank_fn_t *e = rank_fn_find(job, r, (uint64_t)rank << 32 | t.fn[i], &pos);
        prev[i][0] = e ? e->tot_count : 0;
        prev[i][1] = e ? e->tot_time_ns : 0;
        prev[i][2] = e ? e->tot_bytes : 0;
        if (e && e->tot_count) {
            if (t.calls[i] < e->tot_count || t.ns[i] < e->tot_time_ns || t.bytes[i] < e->tot_bytes)
                return MW_REJECT_TOTALS; /* totals never decrease */
            matched++;
        }
    }
    if (matched != r->tot_fns) /* a function the rank had reported is gone */
        return MW_REJECT_TOTALS;
    /* What the sample adds must fit in the growth of its totals. */
    for (size_t i = 0; s && i < s->n_functions; i++) {
        const Mpiwatch__FunctionStat *f = s->functions[i];
        if (!f->count && !f->total_ns && !f->bytes)
            continue;
        int64_t at = totals_find(&t, f->fn);
        if (at < 0)
            return MW_REJECT_TOTALS;
        if (t.calls[at] - prev[at][0] < f->count || t.ns[at] - prev[at][1] < f->total_ns ||
            t.bytes[at] - prev[at][2] < f->bytes)
            return MW_REJECT_TOTALS;
    }
    return MW_ACCEPTED;
}

/* Keeps a checked message's totals as the rank's latest, and moves the job-wide sum. */
static void job_totals_apply(mw_job_t *job, uint32_t rank, const totals_t *t, int final)
{
    mw_rank_t *r = &job->ranks[rank];
    if (!t->present)
        return;
    uint64_t calls = 0, ns = 0, bytes = 0;
    uint32_t fns = 0;
    int first = r->rank_fn_first == 0;
    uint32_t b = first ? job->rank_fn.n : r->rank_fn_first - 1, pos = b;
    for (size_t i = 0; i < t->n; i++) {
        calls += t->calls[i];
        ns += t->ns[i];
        bytes += t->bytes[i];
        uint64_t key = (uint64_t)rank << 32 | t->fn[i];
        int created = 1;
        mw_rank_fn_t *rf = first ? mw__index_append(&job->rank_fn, key)
                                 : table_get(&job->rank_fn, &job->rank_fn_late, b, r->rank_fn_n,
                                             &pos, key, &created);
        if (!rf) {
            job->overflow++; /* the rank's sums stay exact; this function's share is unknown */
            continue;
        }
        if (created) {
            rf->rank = rank;
            rf->fn = t->fn[i];
        }
        rf->tot_count = t->calls[i];
        rf->tot_time_ns = t->ns[i];
        rf->tot_bytes = t->bytes[i];
        fns++;
    }
    if (first && job->rank_fn.n > b)
        block_close(&job->rank_fn, b, fold_rank_fn, &r->rank_fn_first, &r->rank_fn_n);
    job->at_ranks.calls += calls - r->tot_calls;
    job->at_ranks.time_ns += ns - r->tot_time_ns;
    job->at_ranks.bytes += bytes - r->tot_bytes;
    job->at_ranks.samples += t->samples - r->tot_samples;
    r->tot_calls = calls;
    r->tot_time_ns = ns;
    r->tot_bytes = bytes;
    r->tot_samples = t->samples;
    r->tot_fns = fns;
    r->has_totals = 1;
    if (final)
        r->totals_final = 1;
}

void mw__job_loss(const mw_job_t *job, mw_loss_t *out, mw_tally_t *per_fn)
{
    memset(out, 0, sizeof *out);
    mw_tally_t all = {0};
    for (unsigned fn = 1; fn < MW_FN_SPACE; fn++) {
        all.calls += job->fn[fn].count;
        all.time_ns += job->fn[fn].total_ns;
        all.bytes += job->fn[fn].bytes;
    }
    all.samples = job->samples;
    /* Ranks without totals count as what was merged from them, with nothing missed; ranks
     * behind aggregators as their aggregators' figures say (aggstate.c). */
    out->aggregators = mw__aggs_count(job);
    mw__aggs_totals(job, NULL, NULL, &out->missed_to_aggs, &out->missed_from_aggs, NULL);
    out->missed.calls = job->at_ranks.calls - job->merged.calls + out->missed_to_aggs.calls +
                        out->missed_from_aggs.calls;
    out->missed.time_ns = job->at_ranks.time_ns - job->merged.time_ns +
                          out->missed_to_aggs.time_ns + out->missed_from_aggs.time_ns;
    out->missed.bytes = job->at_ranks.bytes - job->merged.bytes + out->missed_to_aggs.bytes +
                        out->missed_from_aggs.bytes;
    out->missed.samples = job->at_ranks.samples - job->merged.samples +
                          out->missed_to_aggs.samples + out->missed_from_aggs.samples;
    out->merged = all;
    out->at_ranks.calls = all.calls + out->missed.calls;
    out->at_ranks.time_ns = all.time_ns + out->missed.time_ns;
    out->at_ranks.bytes = all.bytes + out->missed.bytes;
    out->at_ranks.samples = all.samples + out->missed.samples;
    for (uint32_t i = 0; i < job->size; i++) {
        const mw_rank_t *r = &job->ranks[i];
        if (r->has_totals) {
            out->ranks_not_final += !r->totals_final;
            out->ranks_missing += r->tot_calls != r->calls || r->tot_time_ns != r->mpi_time_ns ||
                                  r->tot_bytes != r->bytes || r->tot_samples != r->samples;
        } else if (r->said_hello && !mw__aggstate_forwarded(job, i)) {
            out->ranks_no_totals++;
        }
    }
    if (!per_fn)
        return;
    memset(per_fn, 0, MW_FN_SPACE * sizeof *per_fn);
    for (uint32_t i = 0; i < job->rank_fn.n; i++) {
        const mw_rank_fn_t *rf = MW__INDEX_AT(&job->rank_fn, const mw_rank_fn_t, i);
        if (!job->ranks[rf->rank].has_totals || rf->tot_count == 0)
            continue;
        per_fn[rf->fn].calls += rf->tot_count - rf->count;
        per_fn[rf->fn].time_ns += rf->tot_time_ns - rf->time_ns;
        per_fn[rf->fn].bytes += rf->tot_bytes - rf->bytes;
    }
    mw__aggs_totals(job, NULL, NULL, NULL, NULL, per_fn);
}

int mw__job_begin(mw_job_t *job, const Mpiwatch__Envelope *env, uint64_t now_ns)
{
    const Mpiwatch__Hello *h = env->hello;
    mw__job_free(job);
    job->ranks = calloc(h->size, sizeof *job->ranks);
    if (!job->ranks)
        goto fail;
    /* Room for 32 functions and 8 peers per rank, within reason, so that the tables rarely
     * grow (a copy of everything) during the job's first windows. Memory that is never used is
     * never touched: it costs address space only. */
    uint32_t want = h->size < (1u << 16) ? h->size * 32 : (1u << 21);
    if (mw__index_init_list(&job->rank_fn, sizeof(mw_rank_fn_t), want, MW_JOB_MAX_RANK_FN) < 0 ||
        mw__index_init(&job->rank_fn_late, sizeof(uint32_t), 64, MW_JOB_MAX_RANK_FN) < 0)
        goto fail;
    want = h->size < (1u << 18) ? h->size * 8 : (1u << 21);
    if (mw__index_init_list(&job->pairs, sizeof(mw_pair_sum_t), want, MW_JOB_MAX_PAIRS) < 0 ||
        mw__index_init(&job->pairs_late, sizeof(uint32_t), 64, MW_JOB_MAX_PAIRS) < 0)
        goto fail;
    if (mw__index_init(&job->host_index, sizeof(uint32_t), 64, MW_MAX_RANKS) < 0 ||
        mw__index_init(&job->node_index, sizeof(uint32_t), 64, MW_MAX_RANKS) < 0)
        goto fail;
    if (mw__rs_init(&job->rs, h->size) < 0) /* regions and call sites (regions.c) */
        goto fail;
    job->active = 1;
    job->size = h->size;
    job->window_ns = h->window_ns;
    mw_grid_init(&job->grid, h->window_ns);
    job->subslots = h->subslots;
    job->duration_bins = h->duration_bins;
    copy_string(job->job, env->job);
    copy_string(job->program, h->program);
    copy_string(job->mpi_library, h->mpi_library);
    /* No loop over the ranks here: a rank's state is written when it says hello (see DESIGN),
     * so the claimed size costs memory only as ranks connect. */
    job->info_bytes = INFO_FIXED;
    job->min_window = job->max_window = -1;
    job->started_ns = job->last_activity_ns = now_ns;
    job_intern_host(job, ""); /* index 0: unknown host */
    return 0;
fail:
    mw__job_free(job);
    MW_LOG(MW_LOG_ERROR, "cannot allocate the state of a %u-rank job", h->size);
    return -1;
}

void mw__job_free(mw_job_t *job)
{
    free(job->ranks);
    for (uint32_t i = 0; i < job->n_hosts; i++)
        free(job->hosts[i]);
    free(job->hosts);
    free(job->host_hash);
    for (uint32_t i = 0; i < job->n_nodes; i++) {
        free(job->nodes[i]);
        free(job->node_hw[i].objects);
    }
    free(job->nodes);
    free(job->node_hash);
    free(job->node_hw);
    free(job->pus);
    mw__index_free(&job->node_index);
    mw__index_free(&job->rank_fn);
    mw__index_free(&job->rank_fn_late);
    mw__index_free(&job->pairs);
    mw__index_free(&job->pairs_late);
    mw__index_free(&job->host_index);
    mw__rs_free(&job->rs);
    mw__dormant_free(&job->dormant);
    mw__aggs_free(job->aggs);
    memset(job, 0, sizeof *job);
}

int mw__job_hello(mw_job_t *job, const Mpiwatch__Envelope *env, uint64_t now_ns)
{
    const Mpiwatch__Hello *h = env->hello;
    mw_rank_t *r = &job->ranks[env->rank];
    job->last_activity_ns = now_ns;
    r->last_seen_ns = now_ns;
    if (r->state != MW_RANK_PENDING) {
        /* The same process saying hello again: nothing new, except the hardware of its node
         * if no description of it had arrived yet. */
        if (r->node < job->n_nodes && strcmp(job->nodes[r->node], mw__hello_node(h)) == 0)
            job_node_hardware(job, r->node, h->topology);
        return 0;
    }
    r->state = MW_RANK_LIVE;
    r->said_hello = 1;
    r->first_window = r->last_window = -1; /* the rank's state is first written here */
    /* Its entry in the job description first: the budget keeps room for the entries of the
     * ranks that connect, before their PU lists. */
    r->in_info = (uint8_t)info_charge(job, INFO_RANK);
    if (!r->in_info)
        job->capped[MW_CAP_JOB_INFO]++;
    r->pid = h->pid;
    r->host = job_intern_host(job, h->host ? h->host : "");
    r->pu = h->pu;
    r->core = h->core;
    r->package = h->package;
    r->l3 = h->l3;
    r->numa = h->numa;
    r->bound = h->bound ? 1 : 0;
    int64_t node = job_intern_node(job, mw__hello_node(h));
    r->node = node < 0 ? UINT32_MAX : (uint32_t)node; /* UINT32_MAX: out of memory or capped */
    if (node >= 0)
        job_node_hardware(job, (uint32_t)node, h->topology);
    if (r->in_info)
        job_rank_pus(job, r, h);
    r->clock_error_ns = h->clock_error_ns;
    if (h->clock_error_ns > job->max_clock_error_ns)
        job->max_clock_error_ns = h->clock_error_ns;
    if (env->rank == 0 || job->program[0] == '\0')
        copy_string(job->program, h->program);
    if (env->rank == 0 || job->mpi_library[0] == '\0')
        copy_string(job->mpi_library, h->mpi_library);
    job->hellos++;
    return 1;
}

uint64_t mw__job_sample(mw_job_t *job, const Mpiwatch__Envelope *env, uint64_t now_ns)
{
    const Mpiwatch__Sample *s = env->sample;
    uint32_t rank = env->rank;
    mw_rank_t *r = &job->ranks[rank];
    int64_t w = (int64_t)s->window;

    job->last_activity_ns = now_ns;
    job->samples++;
    r->last_seen_ns = now_ns;
    r->samples++;
    if (r->first_window < 0)
        r->first_window = w;
    r->last_window = w;
    if (job->min_window < 0 || w < job->min_window)
        job->min_window = w;
    if (w > job->max_window)
        job->max_window = w;

    /* Per-rank totals of each function: the rank's first sample with functions makes its
     * block; later ones find their entries in it (see DESIGN). */
    int first = r->rank_fn_first == 0;
    uint32_t b = first ? job->rank_fn.n : r->rank_fn_first - 1, pos = b;
    for (size_t i = 0; i < s->n_functions; i++) {
        const Mpiwatch__FunctionStat *f = s->functions[i];
        mw__fn_stats_add(&job->fn[f->fn], f);
        r->calls += f->count;
        r->mpi_time_ns += f->total_ns;
        r->bytes += f->bytes;

        uint64_t key = (uint64_t)rank << 32 | f->fn;
        int created = 1;
        mw_rank_fn_t *rf = first ? mw__index_append(&job->rank_fn, key)
                                 : table_get(&job->rank_fn, &job->rank_fn_late, b, r->rank_fn_n,
                                             &pos, key, &created);
        if (!rf) {
            job->overflow++;
            continue;
        }
        if (created) {
            rf->rank = rank;
            rf->fn = f->fn;
        }
        rf->count += f->count;
        rf->time_ns += f->total_ns;
        rf->bytes += f->bytes;
    }
    if (first && job->rank_fn.n > b)
        block_close(&job->rank_fn, b, fold_rank_fn, &r->rank_fn_first, &r->rank_fn_n);

    /* The same for the pairs it sends to; a peer may be listed twice in one sample. */
    rank_pairs_add(job, r, rank, s->n_peer_rank, s->peer_rank, s->peer_messages, s->peer_bytes);

    /* Loss accounting: what this sample merged, then its running totals (checked in ingest). */
    totals_t t = totals_of(r, s, NULL);
    if (t.present && !mw__aggstate_via(job, rank)) { /* else in its aggregator's (aggstate.c) */
        for (size_t i = 0; i < s->n_functions; i++) {
            job->merged.calls += s->functions[i]->count;
            job->merged.time_ns += s->functions[i]->total_ns;
            job->merged.bytes += s->functions[i]->bytes;
        }
        job->merged.samples++;
        job_totals_apply(job, rank, &t, 0);
    } else if (t.present) { /* fell back here from its aggregator */
        mw__aggstate_own(job, rank, t.n, t.fn, t.calls, t.ns, t.bytes, t.samples, s, 0);
    }

    r->records_dropped += s->records_dropped;
    r->calls_late += s->calls_late;
    uint64_t dropped_more = 0;
    if (s->samples_dropped_total > r->samples_dropped) {
        dropped_more = s->samples_dropped_total - r->samples_dropped;
        r->samples_dropped = s->samples_dropped_total;
    }
    mw__dormant_take(&job->dormant, job->size, rank, s->dormant); /* dormant.c */
    return dropped_more;
}

void mw__job_bye(mw_job_t *job, const Mpiwatch__Envelope *env, uint64_t now_ns)
{
    const Mpiwatch__Bye *b = env->bye;
    mw_rank_t *r = &job->ranks[env->rank];
    job->last_activity_ns = now_ns;
    r->last_seen_ns = now_ns;
    r->state = MW_RANK_DONE;
    if (b->samples_dropped_total > r->samples_dropped)
        r->samples_dropped = b->samples_dropped_total;
    r->records_dropped_bye = b->records_dropped_total;
    totals_t t = totals_of(r, NULL, b);
    if (!mw__aggstate_forwarded(job, env->rank)) /* else in its aggregator's totals */
        job_totals_apply(job, env->rank, &t, 1);
    else if (t.present && (b->n_total_fn || t.samples)) /* ... its own in place of its share */
        mw__aggstate_own(job, env->rank, t.n, t.fn, t.calls, t.ns, t.bytes, t.samples, NULL, 1);
    mw__dormant_take(&job->dormant, job->size, env->rank, b->dormant); /* dormant.c */
    job->byes++;
}

uint32_t mw__job_declare_dead(mw_job_t *job)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < job->size; i++) {
        /* A rank that never said hello is counted without being written to: its state was
         * never touched (see DESIGN) and stays pending. */
        uint8_t state = job->ranks[i].state;
        if (state == MW_RANK_LIVE)
            job->ranks[i].state = MW_RANK_DEAD;
        if (state == MW_RANK_LIVE || state == MW_RANK_PENDING)
            n++;
    }
    job->dead += n;
    return n;
}

uint64_t mw__job_dropped(const mw_job_t *job)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < job->size; i++) {
        const mw_rank_t *r = &job->ranks[i];
        /* The bye's total also covers records of windows whose sample was itself dropped. */
        uint64_t records = r->records_dropped_bye > r->records_dropped ? r->records_dropped_bye
                                                                       : r->records_dropped;
        total += r->samples_dropped + records;
    }
    return total;
}

const char *mw_job_host(const mw_job_t *job, uint32_t rank)
{
    if (rank >= job->size || job->ranks[rank].host >= job->n_hosts)
        return "";
    return job->hosts[job->ranks[rank].host];
}

const char *mw__job_node(const mw_job_t *job, uint32_t rank)
{
    if (rank >= job->size || job->ranks[rank].node >= job->n_nodes)
        return "";
    return job->nodes[job->ranks[rank].node];
}

double mw__job_rank_fraction(const mw_job_t *job, uint32_t rank)
{
    const mw_rank_t *r = &job->ranks[rank];
    if (!r->said_hello || r->first_window < 0 || job->window_ns == 0) /* see DESIGN */
        return -1.0;
    double span =
        (double)mw_grid_span(&job->grid, (uint64_t)r->first_window, (uint64_t)r->last_window + 1);
    return (double)r->mpi_time_ns / span;
}

const char *mw__end_name(mw_end_t end)
{
    switch (end) {
    case MW_END_NONE:
        return "running";
    case MW_END_COMPLETE:
        return "every rank said bye";
    case MW_END_SILENCE:
        return "silence timeout (ranks without bye declared dead)";
    case MW_END_SIGNAL:
        return "collector stopped by a signal";
    }
    return "?";
}

/* A window number relative to the job's first window, with its sign. */
static void job_window_number(char *buf, size_t len, uint64_t k, uint64_t first)
{
    if (k >= first)
        snprintf(buf, len, "%" PRIu64, k - first);
    else
        snprintf(buf, len, "-%" PRIu64, first - k);
}

const char *mw__job_windows_label(const mw_job_t *job, uint64_t first, uint64_t last, char *buf,
                                  size_t len)
{
    char grid[48];
    if (first == last)
        snprintf(grid, sizeof grid, "%" PRIu64, first);
    else
        snprintf(grid, sizeof grid, "%" PRIu64 "..%" PRIu64, first, last);
    if (!job->active || job->min_window < 0) {
        snprintf(buf, len, "%s (grid)", grid);
        return buf;
    }
    uint64_t w0 = (uint64_t)job->min_window;
    char a[24], b[24];
    job_window_number(a, sizeof a, first, w0);
    job_window_number(b, sizeof b, last, w0);
    uint64_t s0 = mw_grid_start(&job->grid, w0), s = mw_grid_start(&job->grid, first);
    double t = s >= s0 ? (double)(s - s0) / 1e9 : -(double)(s0 - s) / 1e9;
    if (first == last)
        snprintf(buf, len, "%s (t%+.3f s; grid %s)", a, t, grid);
    else
        snprintf(buf, len, "%s..%s (t%+.3f s; grid %s)", a, b, t, grid);
    return buf;
}

void mw__job_rank_entries(mw_job_t *job, uint32_t rank, const mw_job_entries_t *e)
{
    mw_rank_t *r = &job->ranks[rank];
    /* As mw__job_sample: the rank's first entries make its block, later ones find theirs. */
    int first = r->rank_fn_first == 0;
    uint32_t b = first ? job->rank_fn.n : r->rank_fn_first - 1, pos = b;
    for (size_t i = 0; i < e->n_fn; i++) {
        uint64_t key = (uint64_t)rank << 32 | e->fn[i];
        int created = 1;
        mw_rank_fn_t *rf = first ? mw__index_append(&job->rank_fn, key)
                                 : table_get(&job->rank_fn, &job->rank_fn_late, b, r->rank_fn_n,
                                             &pos, key, &created);
        if (!rf) {
            job->overflow++;
            continue;
        }
        if (created) {
            rf->rank = rank;
            rf->fn = e->fn[i];
        }
        rf->count += e->count[i];
        rf->time_ns += e->ns[i];
        rf->bytes += e->bytes[i];
        r->calls += e->count[i];
        r->mpi_time_ns += e->ns[i];
        r->bytes += e->bytes[i];
    }
    if (first && job->rank_fn.n > b)
        block_close(&job->rank_fn, b, fold_rank_fn, &r->rank_fn_first, &r->rank_fn_n);
    rank_pairs_add(job, r, rank, e->n_peer, e->peer, e->messages, e->peer_bytes);
}
