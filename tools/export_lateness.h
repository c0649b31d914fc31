/* export_lateness.h: mpiwatch-export --format lateness (export_lateness.c): the lateness
 * summaries the collector published online, as JSON lines (docs/lateness.md). */
#ifndef MW_EXPORT_LATENESS_H
#define MW_EXPORT_LATENESS_H

/* Writes every recorded window and step summary of `input` to `output` ("-": stdout).
 * Returns the exit status (0, 1 on a read or write error, 2 when the input is not a
 * recording). */
int mw__export_lateness(const char *input, const char *output);

#endif
