/* report.h: the end-of-run text report (report.c). */
#ifndef MW_COLLECTOR_REPORT_H
#define MW_COLLECTOR_REPORT_H

#include <stdio.h>
#include "collector.h"

/* Writes the end-of-run report. */
void mw__report_write(const mw_collector_t *c, FILE *out);
/* Ranks the launcher started (--expect-ranks) that did not say hello: 0 when every one did or
 * nothing is expected (the report's "Missing ranks", the exit status 3 of main.c). */
uint64_t mw__report_missing(const mw_collector_t *c);
/* The job's top call sites (site, function) by time, at most `cap`, best first: O(entries x cap).
 * Returns how many were written to top (the report, the summary JSON, /metrics). */
size_t mw__report_top_sites(const mw_job_t *job, const mw_site_total_t **top, size_t cap);

#endif
