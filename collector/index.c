/* index.c: the collector's 64-bit-key hash index (see index.h).
 *
 * DESIGN: slots hold entry positions (+1), so growing rehashes only 4-byte slots and moves no
 * value; the load factor stays at or below one half, which keeps linear probing short. Clearing
 * walks the entries in reverse insertion order and empties each one's slot: an entry's probe
 * path only crosses slots of entries inserted before it, so those are still in place when it
 * is looked up (rehashing inserts in position order, which preserves that property). When most
 * slots are in use a memset is cheaper, and is used instead. A list (mw__index_init_list) is the
 * same storage with no slot array at all.
 */
#include "index.h"

#include <stdlib.h>
#include <string.h>

static uint64_t index_hash(uint64_t k)
{
    /* The MurmurHash3 finaliser: keys are packed (rank << 32 | fn) pairs whose low bits alone
     * would cluster badly. */
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    k ^= k >> 33;
    return k;
}

static uint32_t round_pow2(uint32_t v)
{
    uint32_t p = 1;
    while (p < v && p < (1u << 30))
        p <<= 1;
    return p;
}

static int index_alloc_slots(mw__index_t *ix, uint32_t cap)
{
    uint32_t nslots = cap * 2;
    uint32_t *slots = calloc(nslots, sizeof *slots);
    if (!slots)
        return -1;
    free(ix->slots);
    ix->slots = slots;
    ix->mask = nslots - 1;
    for (uint32_t pos = 0; pos < ix->n; pos++) {
        uint32_t s = (uint32_t)index_hash(ix->keys[pos]) & ix->mask;
        while (ix->slots[s])
            s = (s + 1) & ix->mask;
        ix->slots[s] = pos + 1;
    }
    return 0;
}

static int index_grow(mw__index_t *ix)
{
    if (ix->cap >= ix->max)
        return -1;
    uint32_t cap = ix->cap * 2;
    uint64_t *keys = realloc(ix->keys, (size_t)cap * sizeof *keys);
    if (!keys)
        return -1;
    ix->keys = keys;
    void *vals = realloc(ix->vals, (size_t)cap * ix->elem);
    if (!vals)
        return -1;
    ix->vals = vals;
    if (!ix->list && index_alloc_slots(ix, cap) < 0)
        return -1;
    ix->cap = cap;
    return 0;
}

int mw__index_init(mw__index_t *ix, size_t elem, uint32_t initial, uint32_t max)
{
    memset(ix, 0, sizeof *ix);
    ix->elem = elem;
    ix->max = round_pow2(max ? max : 1);
    ix->cap = round_pow2(initial ? initial : 1);
    if (ix->cap > ix->max)
        ix->cap = ix->max;
    ix->keys = malloc((size_t)ix->cap * sizeof *ix->keys);
    ix->vals = malloc((size_t)ix->cap * elem);
    if (!ix->keys || !ix->vals || index_alloc_slots(ix, ix->cap) < 0) {
        mw__index_free(ix);
        return -1;
    }
    return 0;
}

int mw__index_init_list(mw__index_t *ix, size_t elem, uint32_t initial, uint32_t max)
{
    memset(ix, 0, sizeof *ix);
    ix->list = 1;
    ix->elem = elem;
    ix->max = round_pow2(max ? max : 1);
    ix->cap = round_pow2(initial ? initial : 1);
    if (ix->cap > ix->max)
        ix->cap = ix->max;
    ix->keys = malloc((size_t)ix->cap * sizeof *ix->keys);
    ix->vals = malloc((size_t)ix->cap * elem);
    if (!ix->keys || !ix->vals) {
        mw__index_free(ix);
        return -1;
    }
    return 0;
}

void *mw__index_append(mw__index_t *ix, uint64_t key)
{
    if (!ix->list || (ix->n == ix->cap && index_grow(ix) < 0))
        return NULL;
    uint32_t pos = ix->n++;
    ix->keys[pos] = key;
    void *v = (char *)ix->vals + (size_t)pos * ix->elem;
    memset(v, 0, ix->elem);
    return v;
}

void mw__index_free(mw__index_t *ix)
{
    free(ix->slots);
    free(ix->keys);
    free(ix->vals);
    memset(ix, 0, sizeof *ix);
}

void mw__index_clear(mw__index_t *ix)
{
    if (!ix->slots) {
        ix->n = 0; /* a list (or an index that was never set up) */
        return;
    }
    if ((uint64_t)ix->n * 8 >= (uint64_t)ix->mask + 1) {
        memset(ix->slots, 0, ((size_t)ix->mask + 1) * sizeof *ix->slots);
    } else {
        for (uint32_t pos = ix->n; pos-- > 0;) {
            uint32_t s = (uint32_t)index_hash(ix->keys[pos]) & ix->mask;
            while (ix->slots[s] != pos + 1)
                s = (s + 1) & ix->mask;
            ix->slots[s] = 0;
        }
    }
    ix->n = 0;
}

/* Probes for key: returns its value, or NULL with *slot set to the free slot where it would
 * go. */
static void *index_probe(const mw__index_t *ix, uint64_t key, uint32_t *slot)
{
    uint32_t s = (uint32_t)index_hash(key) & ix->mask;
    for (uint32_t e; (e = ix->slots[s]) != 0; s = (s + 1) & ix->mask)
        if (ix->keys[e - 1] == key)
            return (char *)ix->vals + (size_t)(e - 1) * ix->elem;
    *slot = s;
    return NULL;
}

void *mw__index_find(const mw__index_t *ix, uint64_t key)
{
    uint32_t s;
    return ix->slots ? index_probe(ix, key, &s) : NULL;
}

void *mw__index_get(mw__index_t *ix, uint64_t key, int *created)
{
    if (created)
        *created = 0;
    if (!ix->slots)
        return NULL;
    uint32_t s;
    void *found = index_probe(ix, key, &s);
    if (found)
        return found;
    if (ix->n == ix->cap) {
        if (index_grow(ix) < 0)
            return NULL;
        s = (uint32_t)index_hash(key) & ix->mask;
        while (ix->slots[s])
            s = (s + 1) & ix->mask;
    }
    uint32_t pos = ix->n++;
    ix->keys[pos] = key;
    ix->slots[s] = pos + 1;
    void *v = (char *)ix->vals + (size_t)pos * ix->elem;
    memset(v, 0, ix->elem);
    if (created)
        *created = 1;
    return v;
}
