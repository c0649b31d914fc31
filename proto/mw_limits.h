/* mw_limits.h: the caps on everything a peer can claim about a job, shared by both ends.
 *
 * DESIGN: a hello is small, but what it claims (a job size, a PU list, a node's hardware, host
 * and node names) is kept by the collector for the whole job and re-encoded in every job
 * description it sends to viewers, recordings and exporters. Each claim is therefore capped
 * twice: per message (what one hello may say) and per job (what all hellos together may make
 * the collector keep). The collector refuses what goes over a cap and counts it by reason
 * (docs/collector.md, "Caps"); the readers of a job description (the viewer, the exporters)
 * refuse a description that goes over the same caps, so neither end can be made to build or
 * walk something the other would not have sent. The caps are chosen so that a real job of
 * 100,000 ranks fits with room to spare; the memory they bound is stated in docs/collector.md.
 */
#ifndef MW_LIMITS_H
#define MW_LIMITS_H

/* Per message (one hello). */
#define MW_MAX_RANKS (1u << 20)    /* job size a hello may claim (MPI_COMM_WORLD size) */
#define MW_MAX_STRING 1024u        /* longest string field (host, job, node, program, ...) */
#define MW_MAX_TOPO_OBJECTS 65536u /* objects of one node's hardware */
#define MW_MAX_PUS 65536u          /* PUs of one rank's binding */
/* Levels of one node's hardware tree: hwloc trees are under 16 levels deep (machine, groups,
 * packages, dies, caches, cores, PUs) and mpiwatch sends four (package, L3, core, PU). */
#define MW_MAX_TOPO_DEPTH 64u

/* Per job (all hellos together). */
#define MW_JOB_MAX_PUS (1u << 21)          /* PU entries of all ranks' bindings: 8 MiB */
#define MW_JOB_MAX_TOPO_OBJECTS (1u << 20) /* hardware objects of all nodes: 16 MiB */
#define MW_JOB_MAX_NAMES (1u << 18)        /* distinct host and node names together */
#define MW_JOB_MAX_NAME_BYTES (8u << 20)   /* bytes of those names */
/* The encoded job description (JobInfo) never exceeds this: the collector keeps an upper
 * bound of its size and refuses what would cross it. Under the history reply's 64 MiB. */
#define MW_JOB_MAX_INFO_BYTES (48u << 20)

/* Code regions and call sites (docs/regions.md, docs/callsites.md). */
#define MW_REGION_NAME_MAX 128u            /* bytes of a region's name */
#define MW_RANK_MAX_REGIONS 1024u          /* regions one rank may define */
#define MW_JOB_MAX_REGIONS 4096u           /* distinct region names of a job */
#define MW_SITE_STRING_MAX 512u            /* bytes of a call site's module, function or file */
#define MW_RANK_MAX_SITES 4096u            /* call sites one rank may define */
#define MW_JOB_MAX_SITES 65536u            /* distinct call sites of a job */
#define MW_SAMPLE_MAX_SITE_ENTRIES 16384u  /* (site, function) entries of one sample */
#define MW_SAMPLE_MAX_REGION_ENTRIES 4096u /* region entries of one sample */
/* Per-rank entries (rf_*, rr_*) one merged window keeps: 16,384 ranks x 64 functions and
 * 16,384 x 64 regions fit; beyond, entries are left out and counted (Window.rank_detail_left_out).
 */
#define MW_WINDOW_MAX_RANK_ENTRIES (1u << 21)
/* Per-function pair entries (fpair_*) one merged window keeps, beyond which they are counted
 * as left out. */
#define MW_WINDOW_MAX_FPAIRS (1u << 20)

/* Function identity by name (docs/function-table.md, proto/mw_fnmap.h). Ids a process gives
 * to functions beyond its own table (names of another MPI's table): MW_FN_SPACE = MW_FN_COUNT +
 * MW_FN_EXTRA bounds every job function id. A peer's table may list at most MW_FN_TABLE_MAX
 * names of at most MW_FN_NAME_MAX bytes each; a collector keeps the maps of at most
 * MW_FN_MAX_TABLES distinct tables per job. */
#define MW_FN_EXTRA 256u
#define MW_FN_TABLE_MAX 4096u
#define MW_FN_NAME_MAX 64u
#define MW_FN_MAX_TABLES 16u

#endif
