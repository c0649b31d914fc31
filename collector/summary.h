/* summary.h: the summary and stats JSON files (summary.c). */
#ifndef MW_COLLECTOR_SUMMARY_H
#define MW_COLLECTOR_SUMMARY_H

#include "collector.h"

#include <cJSON.h>

/* Writes the summary JSON (atomically, mw__write_file). Returns 0, or -1 with a log message. */
int mw__summary_write(const mw_collector_t *c, const char *path);
/* The stats JSON (docs/collector.md), as a file or a string (caller frees). */
int mw__stats_write(const mw_collector_t *c, const char *path);
char *mw__stats_json(const mw_collector_t *c);
/* Writes `path` atomically and durably (proto/mw_file.h: a fresh temporary file, fsync, rename;
 * a symbolic link at path is replaced, not followed). Returns 0, or -1 logged. */
int mw__write_file(const char *path, const char *text);
/* {"calls": n, "time_ns": n, "bytes": n, "samples": n} under obj[name]; NULL when out of memory
 * (the loss accounting's shape, here and in aggstate.c). */
cJSON *mw__json_tally(cJSON *obj, const char *name, const mw_tally_t *t);

#endif
