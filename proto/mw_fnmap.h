/* mw_fnmap.h: function identity by name (docs/function-table.md).
 *
 * A function id means "row id - 1 of the table of the process that sent it": a rank built
 * against MPICH numbers its functions differently from one built against Open MPI, so ids
 * never cross a process boundary alone. A rank's hello names its whole table once; a receiver
 * turns the names into a map from the sender's ids to its own (mw_fnmap_build), and numbers the
 * names its own table lacks after its table, in the order it first meets them (the extras,
 * MW_FN_EXTRA at most per process). Every id a process handles is therefore below MW_FN_SPACE,
 * and mw_fn_name(), mw_fn_kind() and mw_fn_id() (mw_proto.h) answer for the extras as well.
 *
 * A hello without names (a library or a recording older than the names) is understood when
 * its table hash is this build's table or the LEGACY table: the checked-in
 * proto/mpi_functions.def (Open MPI 4.1), whose names are compiled in here whatever table the
 * build itself uses, so that a collector built against another MPI still reads old ranks and
 * old recordings.
 *
 * Only libc (and pthread for the extras' lock): the shim links it through mw_proto.
 */
#ifndef MW_FNMAP_H
#define MW_FNMAP_H

#include <stddef.h>
#include <stdint.h>

/* Whether name can be a function name: 1..MW_FN_NAME_MAX bytes of [A-Za-z0-9_], not starting
 * with a digit (every MPI name; a subset of UTF-8 that is safe in CSV, JSON and terminals). */
int mw_fn_name_ok(const char *name);

/* The id of name here: its row in this build's table, an extra registered earlier, or a new
 * extra of that kind (mw_kind_t; another value counts as MW_KIND_OTHER). 0 when the name is
 * not valid or the extras are full (counted: mw_fn_extras_refused). Thread safe. */
unsigned mw_fn_register(const char *name, unsigned kind);
/* Extras registered so far: ids MW_FN_COUNT .. MW_FN_COUNT + mw_fn_extra_count() - 1. */
unsigned mw_fn_extra_count(void);
/* Names refused because the extras were full, since the process started. */
uint64_t mw_fn_extras_refused(void);
/* Forget every extra (a collector between two jobs, so that one job's names never use up the
 * next jobs' extras): their ids mean nothing afterwards. Only while no other thread may still
 * read their names. */
void mw_fn_extras_reset(void);

/* The legacy table (the checked-in proto/mpi_functions.def): its hash (as mw_fn_table_hash()
 * computes it), its size, and the name and kind of its id (1..count), NULL / 0 outside. */
uint64_t mw_fn_legacy_hash(void);
unsigned mw_fn_legacy_count(void);
const char *mw_fn_legacy_name(unsigned id);
unsigned mw_fn_legacy_kind(unsigned id);

/* The hash mw_fn_table_hash() computes, over any list of names (FNV-1a, a separator after each
 * name). */
uint64_t mw_fn_names_hash(const char *const *names, size_t n);

/* A peer's ids mapped to this process's ids. */
typedef struct {
    uint32_t n;         /* the peer's table: its ids 1..n; anything else is not a function */
    uint32_t unknown;   /* of its names, those without an id here (the extras were full) */
    int identity;       /* every peer id is the same id here: nothing to translate */
    uint16_t *to_local; /* [n + 1]: the id here of each peer id, 0 none (unknown), [0] = 0 */
} mw_fnmap_t;

/* Builds m from a peer's table (names[i] is its id i + 1, kinds[i] its kind, or n_kinds = 0
 * for none), registering the names this build does not know as extras. Never trusts the
 * peer: 1..MW_FN_TABLE_MAX names, each mw_fn_name_ok(), no name twice, kinds absent or one per
 * name and each below MW_KIND_COUNT. Returns 0, or -1 with the reason in err (m is then empty,
 * nothing to free). A name that finds no id (extras full) maps to 0 and counts in m->unknown. */
int mw_fnmap_build(mw_fnmap_t *m, const char *const *names, size_t n, const uint32_t *kinds,
                   size_t n_kinds, char *err, size_t errlen);
/* The map of a table known by its hash alone: this build's table (identity) or the legacy
 * one. Returns 0, or -1 when the hash names neither. */
int mw_fnmap_known(mw_fnmap_t *m, uint64_t table_hash, uint32_t function_count);
void mw_fnmap_free(mw_fnmap_t *m);

/* The id here of a peer's id: 0 when the peer's table has no such id (id 0, id > n) or the
 * name has no id here; callers that must tell the two apart compare id with m->n first. */
static inline unsigned mw_fnmap_get(const mw_fnmap_t *m, uint32_t id)
{
    return id <= m->n ? m->to_local[id] : 0u;
}

#endif
