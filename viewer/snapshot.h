/* snapshot.h: the viewer without a person in front of it: PNG snapshots and benchmarks.
 *
 * DESIGN: a snapshot loads what the requested view needs (polling the source, waiting on it
 * between polls, until the model has nothing left to ask for), applies --at / --range /
 * --pick as a user would, draws one frame into the offscreen target and writes it as a PNG,
 * with the numbers behind it as JSON (--meta) so tests can compare pixels with known values.
 * A benchmark draws N frames back to back and reports the frame rate.
 */
#ifndef MW_VIEWER_SNAPSHOT_H
#define MW_VIEWER_SNAPSHOT_H

#include "app.h"

/* Runs --snapshot; returns the exit status (0 written, 1 failed with a message). */
int mw__snapshot_run(mw_app_t *app);
/* Runs --bench-frames; returns the exit status. */
int mw__bench_run(mw_app_t *app);
/* Writes the bound framebuffer (w x h) to a PNG file; -1 after printing why. */
int mw__write_png(const char *path, int w, int h);
/* The --meta object "regions" (snapshot_regions.c): regions, call sites, per-function links. */
struct cJSON;
void mw__regions_meta(mw_app_t *app, struct cJSON *root);

#endif
