/* mw_window_json.h: a merged window (Mpiwatch__Window) made readable: checked, its fractions
 * computed as collector/merge.h defines them, and turned into one JSON object.
 *
 * The viewer, the exporter (mpiwatch-export: JSON lines, CSV, Chrome trace) and live feed
 * clients use it. All read windows that come from a file or a socket and may hold anything, so
 * nothing here trusts a field, and all apply the one window policy (mw_window_check):
 *   - a window whose structure is broken is refused whole, with the reason: a grid no
 *     collector writes (window_ns 0, subslots outside 1..MW_MAX_SUBSLOTS, duration_bins outside
 *     1..MW_MAX_DURATION_BINS), parallel arrays of different lengths (occupancy, density,
 *     pairs), an array whose length is set without its data, a missing function or call.
 *     Entry i of parallel arrays belongs with entry i of the others only while their lengths
 *     agree; once they do not, any pairing is a guess, and a guess would show time in the wrong
 *     function or between the wrong ranks. A refused window is a gap, counted, never a guess;
 *   - an entry whose structure is sound but whose value this reader cannot place is left out
 *     and counted (`skipped`), the rest of the window kept: a function id 0 or beyond this
 *     build's table (a newer collector's table may be longer), a function listed twice, a
 *     sub-slot beyond the window's, a call of an unknown function. One unknown entry does not
 *     hide a window of good ones.
 * docs/export.md ("Malformed windows") states the policy for users.
 *
 * DESIGN: a "view" is laid out densely by function id (the table has a few hundred entries),
 * so that every consumer asks the same questions (which functions have data, what fraction of
 * the ranks was inside one during a sub-slot) in O(1) without re-scanning the sparse arrays.
 * A view is large (the occupancy of every function in every sub-slot) and meant to be reused
 * for window after window: filling it clears only what the previous window used. The same view
 * also reads one rank's Sample, whose figures have the same shape, with a divisor of one rank.
 */
#ifndef MW_WINDOW_JSON_H
#define MW_WINDOW_JSON_H

#include <cJSON.h>
#include <stdint.h>
#include <stdio.h>

#include "mw_proto.h"

typedef struct {
    uint64_t index;     /* window index on the global grid */
    uint64_t window_ns; /* window length */
    uint64_t start_ns;  /* global time: the window's own start, else index * window_ns (0 when
                         * that overflows) */
    uint32_t subslots;  /* sub-slots per window; 0 when the window's value is unusable */
    uint64_t slot_ns;   /* window_ns / subslots (0 with no sub-slots) */
    uint32_t ranks;     /* divisor of the fractions: ranks that reported (1 for a sample) */

    uint32_t n_fn;                                   /* functions with data ... */
    uint32_t fn[MW_FN_SPACE];                        /* ... their ids, ascending */
    const Mpiwatch__FunctionStat *stat[MW_FN_SPACE]; /* by id: its figures, NULL for none */
    uint64_t occ_fn_ns[MW_FN_SPACE];                 /* by id: ns inside it, whole window */
    uint64_t occ_ns[MW_FN_SPACE * MW_MAX_SUBSLOTS];  /* [id * subslots + s]: ns inside it */
    uint64_t skipped; /* entries that failed the checks and were left out */

    const Mpiwatch__Window *w; /* the window read last (NULL after reading a sample) */
    unsigned char mark[MW_FN_SPACE];
} mw_window_view_t;

/* The one window policy, first part: NULL when `w` may be read, else why the whole window is
 * refused ("grid", "parallel arrays of different lengths", ...; a short phrase for a log line
 * or a counter). Entries are not checked here: the view leaves out and counts the bad ones. */
const char *mw_window_check(const Mpiwatch__Window *w);

/* A fresh view (about 240 KiB), or NULL when out of memory. */
mw_window_view_t *mw_window_view_new(void);
void mw_window_view_free(mw_window_view_t *v);

/* Reads a merged window into the view. `w` must stay valid while the view is used. Returns 0,
 * or -1 when mw_window_check refuses the window: the view is then empty (v->w NULL). */
int mw_window_view_set(mw_window_view_t *v, const Mpiwatch__Window *w);
/* Reads one rank's sample into the view, on the job's grid (window_ns and subslots from the
 * hellos). Fractions are then the rank's own: its time inside a function over the window.
 * Samples reach the view after the collector's own checks of a sample (docs/collector.md);
 * entries are still left out and counted as for a window. */
void mw_window_view_set_sample(mw_window_view_t *v, const Mpiwatch__Sample *s, uint64_t window_ns,
                               uint32_t subslots);

/* Fraction of the reporting ranks inside `fn` during sub-slot `sub`: occupancy over
 * (slot_ns * ranks). 0 when there is no such sub-slot or nobody reported. Above 1 only when
 * ranks ran several threads inside MPI at once. */
double mw_window_view_inside(const mw_window_view_t *v, uint32_t fn, uint32_t sub);
/* The same over the whole window: occupancy of `fn` over (window_ns * ranks). */
double mw_window_view_fn_fraction(const mw_window_view_t *v, uint32_t fn);

/* The host name of `rank` in a job description, or NULL when the job does not know it (no
 * such rank, or the collector's empty name for an unknown host). */
const char *mw_jobinfo_host(const Mpiwatch__JobInfo *job, uint32_t rank);

/* Length (1 to 4) of the well-formed UTF-8 sequence that starts at p, or 0 when the byte at p
 * does not start one (or p is at the terminating NUL). Names in a recording (hosts, jobs) come
 * from the ranks unchecked; writers replace what is not UTF-8 so that their output stays
 * readable by strict JSON and CSV parsers. */
int mw_utf8_seq(const char *p);
/* A copy of `s` (NULL: "") in which every byte that is not part of well-formed UTF-8 is
 * replaced by U+FFFD. The caller frees it; NULL when out of memory. */
char *mw_utf8_clean(const char *s);

/* The window of a filled view as a JSON object (keys in docs/export.md); `job`, when given,
 * adds the job name and the hosts of the ranks of the longest calls. Integers are exact (raw
 * tokens, not doubles). Returns NULL when out of memory or when the view holds no window (a
 * sample, or a refused window). */
cJSON *mw_window_view_json(const mw_window_view_t *v, const Mpiwatch__JobInfo *job);
/* The same for a window on its own (uses a temporary view); NULL also when it is refused (ask
 * mw_window_check first to tell the two apart). */
cJSON *mw_window_json(const Mpiwatch__Window *w, const Mpiwatch__JobInfo *job);
/* Adds the window's place in its job to a window's JSON object, as its last two keys:
 * "window", its number from the job's first window (index - that window's index), and "t_s",
 * seconds from that window's start to this one's (t_ns, printed exactly with nine decimals).
 * The caller decides what the job's first window is (docs/export.md). Returns 0, or -1. */
int mw_window_json_add_place(cJSON *obj, uint64_t window, uint64_t t_ns);
/* A RecordRanks (checked by mw_rec_ranks_check) as one JSON object, without a newline:
 * {"type":"ranks", first_window, last_window, windows, left_out, "functions" [[rank, fn, name,
 * count, ns, bytes]...], "regions", "pairs", "fn_pairs", "mpi_permille" (null: no share),
 * "rank_windows"} (docs/export.md, coarse). Function names are this build's. */
void mw_rank_sums_json(FILE *out, const Mpiwatch__RecordRanks *rk);

#endif
