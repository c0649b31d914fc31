/* synth.h: synthetic recordings with exactly known content, for the viewer's tests.
 *
 * A synthetic recording is a real collector recording: the collector core runs in-process
 * with a recording open and is fed hellos, samples and byes built here, on a chosen clock, so
 * the file holds what a live collector would have written (start, raw messages, ticks,
 * windows, job descriptions, events, index). What the samples contain is decided by a
 * pattern, and a JSON description of it is written alongside so that the tests compare the
 * viewer's pixels with numbers stated once, here.
 *
 *   stack    every rank spends 40% of every sub-slot in MPI_Waitall, 25% in MPI_Allreduce and
 *            10% in MPI_Send (one call each per sub-slot), so the timeline's stacked layers
 *            are exactly those fractions of the ranks all along the run.
 *   outlier  a dense cluster of about 1e6 MPI_Test calls of 1.5 us (counted in the density
 *            cells, all ranks, windows W/4 .. W/4 + W/10) and one 200 ms MPI_Barrier of rank 3
 *            starting in window W/2, a recorded long call.
 *   picking  light MPI_Allreduce background and four long calls of known function, rank,
 *            start and duration (recorded long calls) to click on.
 *   terrain  merged windows with known per-rank figures per function and code region
 *            (Window.rf_*, rr_*: terrain_values.h), written directly (synth_terrain.c).
 */
#ifndef MW_TEST_SYNTH_H
#define MW_TEST_SYNTH_H

#include <stdint.h>
#include <stdio.h>

typedef enum { SY_STACK, SY_OUTLIER, SY_PICKING, SY_TERRAIN } sy_pattern_t;

typedef struct {
    sy_pattern_t pattern;
    uint32_t ranks;         /* default 16 */
    uint32_t windows;       /* default 20 */
    uint32_t hosts;         /* distinct host names, ranks in blocks; default 4 */
    uint32_t subslots;      /* default 16 */
    uint64_t window_ns;     /* default 100 ms */
    uint64_t cluster_calls; /* outlier: short calls in all (default 1,000,000) */
    const char *job;        /* default "synth-<pattern>" */
    uint32_t functions;     /* terrain: functions per rank (default 24) */
} sy_options_t;

void sy_defaults(sy_options_t *o);
/* "stack", ... -> pattern; -1 when unknown. */
int sy_pattern_of(const char *name);

/* Writes the recording to `path` and its description as one JSON object to `json` (may be
 * NULL). Returns 0, or -1 with a message on stderr. */
int sy_write(const sy_options_t *o, const char *path, FILE *json);

/* What the tests need without parsing the JSON: the first window index and the known long
 * calls (picking: 4, outlier: 1). */
#define SY_MAX_LONG 8
typedef struct {
    unsigned fn;
    uint32_t rank;
    int32_t peer;
    uint64_t start_ns, duration_ns, bytes;
} sy_call_t;

typedef struct {
    uint64_t first_window, last_window, window_ns;
    sy_call_t calls[SY_MAX_LONG];
    unsigned n_calls;
    uint64_t total_calls;
} sy_result_t;

/* As sy_write(), also filling *res. */
int sy_write_result(const sy_options_t *o, const char *path, FILE *json, sy_result_t *res);
/* The terrain pattern (synth_terrain.c), which sy_write_result() hands over to. */
int sy_write_terrain(const sy_options_t *o, const char *path, FILE *json, sy_result_t *res);

#endif
