/* report.h: the end-of-run text report (report.c). */
#ifndef MW_COLLECTOR_REPORT_H
#define MW_COLLECTOR_REPORT_H

#include <stdio.h>
#include "collector.h"

/* Writes the end-of-run report. */
void mw__report_write(const mw_collector_t *c, FILE *out);

#endif
