/* mw_fnmap.c: the extras registry, the legacy table and the map builder (mw_fnmap.h).
 *
 * DESIGN: names are looked up in one open-addressing hash table that holds this build's table
 * and the extras, so building a map costs O(names) whatever the table sizes. The extras are
 * appended under a lock and published by an atomic count (release), so mw_fn_name() and
 * mw_fn_kind() read them without the lock: an extra's name and kind never change once
 * counted. A map is a plain array from the peer's ids to ours; the caller translates each id
 * of a message once, right after decoding (collector/ingest.c), and everything after that
 * sees this process's ids only.
 */
#include "mw_fnmap.h"
#include "mw_limits.h"
#include "mw_proto.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(MW_FN_SPACE <= 65535u, "ids fit the maps' uint16_t");
_Static_assert(MW_FN_NAME_MAX < 256u, "names are short");

/* ---- the legacy table: the checked-in proto/mpi_functions.def, whatever MW_FN_TABLE_DEF is.
 * A quoted include looks in this file's directory first, so this is always that file. */
static const char *const legacy_names[] = {
    NULL,
#define MW_FN(name, ret, kind, params, args, bytes, peer, fortran, trace) "MPI_" #name,
#include "mpi_functions.def"
#undef MW_FN
};
static const unsigned char legacy_kinds[] = {
    MW_KIND_OTHER,
#define MW_FN(name, ret, kind, params, args, bytes, peer, fortran, trace) MW_KIND_##kind,
#include "mpi_functions.def"
#undef MW_FN
};
#define LEGACY_COUNT (sizeof legacy_names / sizeof legacy_names[0] - 1u)

unsigned mw_fn_legacy_count(void)
{
    return (unsigned)LEGACY_COUNT;
}

const char *mw_fn_legacy_name(unsigned id)
{
    return id > 0 && id <= LEGACY_COUNT ? legacy_names[id] : NULL;
}

unsigned mw_fn_legacy_kind(unsigned id)
{
    return id > 0 && id <= LEGACY_COUNT ? legacy_kinds[id] : 0u;
}

uint64_t mw_fn_names_hash(const char *const *names, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        for (const char *p = names[i]; p && *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ull;
        h = (h ^ 0xffu) * 1099511628211ull; /* separator, so "ab","c" differs from "a","bc" */
    }
    return h;
}

uint64_t mw_fn_legacy_hash(void)
{
    static _Atomic uint64_t hash;
    uint64_t h = atomic_load_explicit(&hash, memory_order_relaxed);
    if (!h) {
        h = mw_fn_names_hash(legacy_names + 1, LEGACY_COUNT);
        atomic_store_explicit(&hash, h, memory_order_relaxed);
    }
    return h;
}

int mw_fn_name_ok(const char *name)
{
    if (!name)
        return 0;
    size_t n = strnlen(name, MW_FN_NAME_MAX + 1);
    if (n == 0 || n > MW_FN_NAME_MAX || (name[0] >= '0' && name[0] <= '9'))
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_'))
            return 0;
    }
    return 1;
}

/* ---- the extras and the name index -------------------------------------------------------- */

/* Slots of the name index: a power of two at least twice the ids it may hold. */
#define INDEX_SLOTS 4096u
_Static_assert(INDEX_SLOTS >= 2u * MW_FN_SPACE, "the name index stays half empty");
_Static_assert((INDEX_SLOTS & (INDEX_SLOTS - 1u)) == 0, "a power of two");

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char extra_names[MW_FN_EXTRA][MW_FN_NAME_MAX + 1];
static unsigned char extra_kinds[MW_FN_EXTRA];
static _Atomic unsigned extra_count;
static uint64_t extras_refused;          /* under lock */
static uint16_t index_slot[INDEX_SLOTS]; /* id, 0 empty; under lock */
static int index_ready;                  /* under lock */

static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* Name of any id, without the lock (extras are published by the count). */
static const char *id_name(unsigned id)
{
    return mw_fn_name(id);
}

static void index_put(unsigned id)
{
    uint32_t i = name_hash(id_name(id)) & (INDEX_SLOTS - 1u);
    while (index_slot[i])
        i = (i + 1u) & (INDEX_SLOTS - 1u);
    index_slot[i] = (uint16_t)id;
}

/* Under lock: the id of name, 0 none. */
static unsigned index_find(const char *name)
{
    if (!index_ready) {
        for (unsigned id = 1; id < MW_FN_COUNT; id++)
            index_put(id);
        index_ready = 1;
    }
    uint32_t i = name_hash(name) & (INDEX_SLOTS - 1u);
    for (; index_slot[i]; i = (i + 1u) & (INDEX_SLOTS - 1u))
        if (strcmp(id_name(index_slot[i]), name) == 0)
            return index_slot[i];
    return 0;
}

unsigned mw__fn_lookup(const char *name);
unsigned mw__fn_lookup(const char *name)
{
    if (!name)
        return 0;
    pthread_mutex_lock(&lock);
    unsigned id = index_find(name);
    pthread_mutex_unlock(&lock);
    return id;
}

/* Under lock: the id of name, registering it as an extra when it is new. */
static unsigned register_locked(const char *name, unsigned kind)
{
    unsigned id = index_find(name);
    if (id)
        return id;
    unsigned n = atomic_load_explicit(&extra_count, memory_order_relaxed);
    if (n >= MW_FN_EXTRA) {
        extras_refused++;
        return 0;
    }
    memcpy(extra_names[n], name, strlen(name) + 1);
    extra_kinds[n] = (unsigned char)(kind < MW_KIND_COUNT ? kind : MW_KIND_OTHER);
    atomic_store_explicit(&extra_count, n + 1, memory_order_release);
    id = MW_FN_COUNT + n;
    index_put(id);
    return id;
}

unsigned mw_fn_register(const char *name, unsigned kind)
{
    if (!mw_fn_name_ok(name))
        return 0;
    pthread_mutex_lock(&lock);
    unsigned id = register_locked(name, kind);
    pthread_mutex_unlock(&lock);
    return id;
}

unsigned mw_fn_extra_count(void)
{
    return atomic_load_explicit(&extra_count, memory_order_acquire);
}

uint64_t mw_fn_extras_refused(void)
{
    pthread_mutex_lock(&lock);
    uint64_t n = extras_refused;
    pthread_mutex_unlock(&lock);
    return n;
}

void mw_fn_extras_reset(void)
{
    pthread_mutex_lock(&lock);
    atomic_store_explicit(&extra_count, 0u, memory_order_release);
    memset(index_slot, 0, sizeof index_slot);
    index_ready = 0; /* rebuilt with this build's table alone at the next lookup */
    pthread_mutex_unlock(&lock);
}

/* For mw_proto.c: the name and kind of extra i (0-based), NULL / OTHER when not registered. */
const char *mw__fn_extra_name(unsigned i);
const char *mw__fn_extra_name(unsigned i)
{
    return i < mw_fn_extra_count() ? extra_names[i] : NULL;
}

unsigned mw__fn_extra_kind(unsigned i);
unsigned mw__fn_extra_kind(unsigned i)
{
    return i < mw_fn_extra_count() ? extra_kinds[i] : (unsigned)MW_KIND_OTHER;
}

/* ---- maps ---------------------------------------------------------------------------------- */

static int fail(mw_fnmap_t *m, char *err, size_t errlen, const char *what, size_t i)
{
    free(m->to_local);
    memset(m, 0, sizeof *m);
    if (err && errlen)
        snprintf(err, errlen, "function table: %s (entry %zu)", what, i);
    return -1;
}

int mw_fnmap_build(mw_fnmap_t *m, const char *const *names, size_t n, const uint32_t *kinds,
                   size_t n_kinds, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    if (n == 0 || n > MW_FN_TABLE_MAX)
        return fail(m, err, errlen, "no names, or more than the cap", n);
    if (n_kinds != 0 && n_kinds != n)
        return fail(m, err, errlen, "not one kind per name", n_kinds);
    for (size_t i = 0; i < n; i++) {
        if (!mw_fn_name_ok(names[i]))
            return fail(m, err, errlen, "a name that is not a function name", i);
        if (n_kinds && kinds[i] >= MW_KIND_COUNT)
            return fail(m, err, errlen, "an unknown kind", i);
    }
    /* Duplicates: a local index of the peer's names (ids are uint16_t, n <= 4096). */
    static const size_t slots = 2u * MW_FN_TABLE_MAX;
    uint16_t *seen = calloc(slots, sizeof *seen);
    m->to_local = calloc(n + 1, sizeof *m->to_local);
    if (!seen || !m->to_local) {
        free(seen);
        return fail(m, err, errlen, "out of memory", 0);
    }
    for (size_t i = 0; i < n; i++) {
        size_t s = name_hash(names[i]) & (slots - 1u);
        for (; seen[s]; s = (s + 1u) & (slots - 1u))
            if (strcmp(names[seen[s] - 1u], names[i]) == 0) {
                free(seen);
                return fail(m, err, errlen, "a name listed twice", i);
            }
        seen[s] = (uint16_t)(i + 1u);
    }
    free(seen);

    m->n = (uint32_t)n;
    m->identity = 1;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n; i++) {
        unsigned id = register_locked(names[i], n_kinds ? kinds[i] : (unsigned)MW_KIND_OTHER);
        m->to_local[i + 1] = (uint16_t)id;
        if (!id)
            m->unknown++;
        if (id != i + 1)
            m->identity = 0;
    }
    pthread_mutex_unlock(&lock);
    return 0;
}

int mw_fnmap_known(mw_fnmap_t *m, uint64_t table_hash, uint32_t function_count)
{
    memset(m, 0, sizeof *m);
    if (function_count == MW_FN_COUNT - 1u && table_hash == mw_fn_table_hash()) {
        m->to_local = calloc(MW_FN_COUNT, sizeof *m->to_local);
        if (!m->to_local)
            return -1;
        for (unsigned id = 1; id < MW_FN_COUNT; id++)
            m->to_local[id] = (uint16_t)id;
        m->n = MW_FN_COUNT - 1u;
        m->identity = 1;
        return 0;
    }
    if (function_count == LEGACY_COUNT && table_hash == mw_fn_legacy_hash()) {
        uint32_t kinds[LEGACY_COUNT];
        for (unsigned i = 0; i < LEGACY_COUNT; i++)
            kinds[i] = legacy_kinds[i + 1];
        return mw_fnmap_build(m, legacy_names + 1, LEGACY_COUNT, kinds, LEGACY_COUNT, NULL, 0);
    }
    return -1;
}

void mw_fnmap_free(mw_fnmap_t *m)
{
    free(m->to_local);
    memset(m, 0, sizeof *m);
}
