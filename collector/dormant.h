/* dormant.h: what ranks counted while their library was dormant (docs/shim.md, "Dormant
 * mode"): exact calls and bytes per function, no time, and the spans they were dormant. */
#ifndef MW_COLLECTOR_DORMANT_H
#define MW_COLLECTOR_DORMANT_H

#include "mw_proto.h"

#include <stdint.h>
#include <stdio.h>

struct cJSON;
struct mw_dormant; /* per job, allocated at the first rank that reports a dormant span */

/* Dormant spans kept per rank (the library keeps as many: proto Dormant). */
#define MW_DORMANT_MAX_SPANS 16u

/* Takes a rank's cumulative dormant totals from a sample or a bye (d may be NULL: nothing).
 * *state is the job's (mw_job_t.dormant), created here; size is the job's rank count. Totals
 * that are malformed or smaller than the rank's previous ones are ignored and counted. */
void mw__dormant_take(struct mw_dormant **state, uint32_t size, uint32_t rank,
                      const Mpiwatch__Dormant *d);
void mw__dormant_free(struct mw_dormant **state);
/* Job-wide figures: ranks that were dormant at all, their dormant calls and bytes, spans. */
typedef struct {
    uint32_t ranks;
    uint64_t calls, bytes, spans, bad;
} mw_dormant_tally_t;
void mw__dormant_tally(const struct mw_dormant *state, mw_dormant_tally_t *out);
/* Adds "dormant": {ranks, calls, bytes, functions, spans: [{rank, start_ns, end_ns, calls,
 * bytes}], spans_folded, bad} to the summary's root object. Returns 0, or -1 (no memory). */
int mw__dormant_json(const struct mw_dormant *state, struct cJSON *root);
/* One line of the text report, when any rank was dormant. */
void mw__dormant_report(const struct mw_dormant *state, FILE *out);

#endif
