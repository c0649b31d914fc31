/* index.h: a hash index from 64-bit keys to densely stored fixed-size values (collector-internal).
 *
 * DESIGN: open addressing with linear probing over a power-of-two slot array that holds entry
 * positions; keys and values live in insertion order in two dense arrays, so iterating the
 * values is a plain loop over `vals[0..n)` and clearing costs O(entries), not O(capacity). The
 * table grows by doubling up to `max` entries and keeps its memory across clears: a table that
 * is reused window after window stops allocating once it has reached its working size, which
 * is how the merge keeps to "no allocation per sample" without guessing sizes up front.
 */
#ifndef MW_COLLECTOR_INDEX_H
#define MW_COLLECTOR_INDEX_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t *slots; /* [mask + 1]: 0 empty, else entry position + 1 */
    uint64_t *keys;  /* [cap]: key of each entry */
    void *vals;      /* [cap]: values of `elem` bytes each, in insertion order */
    size_t elem;
    uint32_t n;   /* entries in use */
    uint32_t cap; /* entries allocated (power of two) */
    uint32_t mask;
    uint32_t max; /* entries never exceed this */
    int list;     /* made by mw__index_init_list(): no slots, appended to, never looked up */
} mw__index_t;

/* Prepares an index of values of `elem` bytes; `initial` and `max` are entry counts (rounded
 * up to powers of two). Returns 0, or -1 when out of memory. */
int mw__index_init(mw__index_t *ix, size_t elem, uint32_t initial, uint32_t max);
/* The same storage without the hash: entries are only appended (mw__index_append), read in
 * insertion order and cleared; mw__index_get() and mw__index_find() always return NULL on it.
 * For tables whose keys the caller knows to be distinct, which then cost no hashing and no
 * random access into a slot array (a merged window's pairs: see merge.c). */
int mw__index_init_list(mw__index_t *ix, size_t elem, uint32_t initial, uint32_t max);
/* Appends a zero-filled entry for `key` to a list; NULL when it is full (`max`) or cannot grow.
 * The caller guarantees that `key` is not in it already. */
void *mw__index_append(mw__index_t *ix, uint64_t key);
void mw__index_free(mw__index_t *ix);
/* Removes every entry, keeping the memory. */
void mw__index_clear(mw__index_t *ix);
/* Value of `key`, inserted zero-filled when absent (`*created` set to 1). Returns NULL when
 * the index is full (`max` entries) or cannot grow; the pointer stays valid until the next
 * insertion. */
void *mw__index_get(mw__index_t *ix, uint64_t key, int *created);
/* Value of `key`, or NULL when absent. */
void *mw__index_find(const mw__index_t *ix, uint64_t key);

/* The i-th value, 0 <= i < n, in insertion order. */
#define MW__INDEX_AT(ix, type, i) (&((type *)(ix)->vals)[(i)])

#endif
