/* regions.h: the job-wide tables of code regions and call sites, each rank's map from its own
 * ids to them, and the checks of what a sample claims about them (regions.c; docs/regions.md
 * and docs/callsites.md "In the collector"). */
#ifndef MW_COLLECTOR_REGIONS_H
#define MW_COLLECTOR_REGIONS_H

#include <stdint.h>

#include "index.h"
#include "mw_limits.h"
#include "mw_proto.h"

/* What the collector did not take of a sample's regions and call sites, by reason. None of
 * them rejects the sample: the part is left out and counted (stats JSON "regions_refused"). */
#define MW_RS_REASONS(X)                                                                           \
    X(DEF_ID, "def_id")             /* a definition with id 0 or above the per-rank cap */         \
    X(DEF_TEXT, "def_text")         /* an empty or too long name, or not valid text */             \
    X(DEF_RANK_CAP, "def_rank_cap") /* a rank defining over MW_RANK_MAX_REGIONS / _SITES */        \
    X(DEF_CHANGED, "def_changed")   /* an id defined again differently: the first is kept */       \
    X(JOB_CAP, "job_cap")           /* the job's table full (MW_JOB_MAX_REGIONS / _SITES) */       \
    X(JOB_INFO, "job_info")         /* the job description full (MW_JOB_MAX_INFO_BYTES) */         \
    X(MAP_FULL, "map_full")         /* the per-rank id map full, or out of memory */               \
    X(UNDEFINED, "undefined")       /* an entry whose id the rank never defined (or refused) */    \
    X(FN_RANGE, "fn_range")         /* a site entry whose function is not a timed function */      \
    X(DUPLICATE, "duplicate")       /* an entry given twice in one sample */                       \
    X(VALUE, "value")               /* a figure above MW_RS_VALUE_MAX */                           \
    X(ENTRIES_CAP, "entries_cap")   /* entries beyond MW_SAMPLE_MAX_REGION/SITE_ENTRIES */

typedef enum {
#define MW_X(id, name) MW_RS_##id,
    MW_RS_REASONS(MW_X)
#undef MW_X
        MW_RS_COUNT
} mw_rs_reason_t;

const char *mw__rs_reason_name(mw_rs_reason_t reason);

/* Largest count or time one entry may claim (2^54 ns: 208 days, as job.h's MW_TOTAL_MAX); the
 * sums over ranks and windows saturate (mw__rs_sat_add) rather than wrap. */
#define MW_RS_VALUE_MAX (1ull << 54)

static inline uint64_t mw__rs_sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* A job-wide region (JobInfo.regions[id - 1]) and its totals over the job. */
typedef struct {
    char *name;
    uint32_t source;
    uint64_t count, incl_ns, excl_ns, mpi_ns;
} mw_region_t;

/* A job-wide call site (JobInfo.sites[id - 1]), as the first rank defined it; its function,
 * file and line completed once by a later definition that knows them (an unresolved site's
 * first definition has only module and offset: docs/callsites.md). */
typedef struct {
    char *module, *function, *file;
    uint64_t offset;
    uint32_t line, first_rank;
} mw_site_t;

/* Job totals of one (site, function) (the report's "Aggregate Time"). */
typedef struct {
    uint32_t site, fn;
    uint64_t count, ns, bytes, max_ns;
} mw_site_total_t;

/* A sample's entries in job-wide ids, checked: what the merge adds (merge.c). */
typedef struct {
    uint32_t region;
    uint64_t count, incl_ns, excl_ns, mpi_ns;
} mw_region_in_t;

typedef struct {
    uint32_t site, fn;
    uint64_t count, ns, bytes, max_ns;
} mw_site_in_t;

typedef struct {
    const mw_region_in_t *regions;
    uint32_t n_regions;
    const mw_site_in_t *sites;
    uint32_t n_sites;
} mw_rs_in_t;

typedef struct {
    uint32_t size;
    mw_region_t *regions; /* [n_regions]: id = index + 1 */
    uint32_t n_regions, cap_regions;
    mw_site_t *sites;
    uint32_t n_sites, cap_sites;
    mw__index_t region_by_name; /* name hash (probed) -> position (uint32_t) */
    mw__index_t site_by_key;    /* (module, offset) hash (probed) -> position */
    mw__index_t map;            /* rank << 32 | kind << 31 | rank's id -> job id (uint32_t) */
    uint16_t *rank_regions;     /* [size]: definitions each rank made */
    uint16_t *rank_sites;
    mw__index_t site_totals; /* (site << 32 | fn) -> mw_site_total_t */
    uint64_t gen;            /* +1 whenever a table grows: JobInfo must be sent again */
    uint64_t refused[MW_RS_COUNT];
    uint64_t regions_dropped, sites_dropped; /* the ranks' own counts, summed */
    /* Scratch: the entries of the sample being ingested, in job ids. */
    mw_region_in_t *rin;
    mw_site_in_t *sin;
    uint32_t *mark; /* [MW_JOB_MAX_REGIONS + 1]: region seen in this sample (== mark_gen) */
    uint32_t mark_gen;
    mw__index_t seen_sites; /* (site << 32 | fn) of this sample */
} mw__rs_t;

int mw__rs_init(mw__rs_t *rs, uint32_t size);
void mw__rs_free(mw__rs_t *rs);

/* Structural checks of a sample's region and site arrays (parallel lengths): MW_ACCEPTED or
 * MW_REJECT_BAD_FIELD. Nothing else about them rejects a sample. */
int mw__rs_check(const Mpiwatch__Sample *s);

/* Applies an accepted sample of `rank`: its definitions into the job's tables (charging
 * `info_bytes` against MW_JOB_MAX_INFO_BYTES through `charge`), then its entries translated
 * to job ids into *out (valid until the next call), each refused part counted in rs->refused
 * and in `refused` (the collector's lifetime counters, may be NULL). */
typedef int (*mw_rs_charge_fn)(void *user, uint64_t bytes);
void mw__rs_apply(mw__rs_t *rs, uint32_t rank, const Mpiwatch__Sample *s, mw_rs_charge_fn charge,
                  void *user, mw_rs_in_t *out, uint64_t *refused);

/* The job id of a region or call site an aggregator's partial defines (partial.c), added to
 * the job's table when new (a site as its first rank defined it); 0 with *why set when its
 * text is not valid or a cap refused it. */
uint32_t mw__rs_define_region(mw__rs_t *rs, const Mpiwatch__Region *r, mw_rs_charge_fn charge,
                              void *user, mw_rs_reason_t *why);
uint32_t mw__rs_define_site(mw__rs_t *rs, const Mpiwatch__CallSite *cs, mw_rs_charge_fn charge,
                            void *user, mw_rs_reason_t *why);

/* The site total entries (mw_site_total_t), in first-seen order. */
#define MW__RS_SITE_TOTAL(rs, i) MW__INDEX_AT(&(rs)->site_totals, mw_site_total_t, i)

#endif
