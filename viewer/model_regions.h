/* model_regions.h: what the viewer shows of code regions, call sites, per-function links and the
 * spread of a function across ranks (docs/viewer.md, "Code regions, call sites, per-function
 * links"). No SDL, no GL (part of mw_viewer_model).
 *
 * DESIGN: every number the views draw for these comes from here, computed from the merged
 * windows' fields as the collector fills them (proto/mpiwatch.proto: Window.regions, sites,
 * rr_*, fpair_*, FunctionStat.rank_*; JobInfo.regions, sites), so the unit tests check them
 * exactly and the snapshot's --meta writes them. A region instance is accounted in the window in
 * which it ENDS (docs/regions.md), so a window's summed exclusive time can exceed its rank-time
 * (an instance that began windows earlier): the timeline's share is clamped at 1 and the columns
 * where that happened are counted, for the view to say so. Region colours are stable: the
 * job-wide id i (JobInfo.regions, in the order the job named them) gets palette slot i - 1 for
 * the first MW_PALETTE regions, the others share grey.
 */
#ifndef MW_VIEWER_MODEL_REGIONS_H
#define MW_VIEWER_MODEL_REGIONS_H

#include <stddef.h>
#include <stdint.h>

#include "model_layout.h"
#include "model_store.h"
#include "model_view.h"
#include "topo_color.h" /* mw_scale_t, mw_pairs_t */

/* How the views show regions and links (the app's keys and options change it). */
typedef enum {
    MW_RANKS_DEFAULT,     /* topology ranks: MPI share of the window (or bytes sent) */
    MW_RANKS_REGION_EXCL, /* ... a region's exclusive time in the window (Window.rr_excl_ns) */
    MW_RANKS_REGION_INCL, /* ... its inclusive time (Window.rr_incl_ns) */
    MW_RANKS_MODES
} mw_rank_mode_t;

typedef struct {
    int timeline;         /* the timeline shows code regions ('r', --timeline regions) */
    uint32_t highlight;   /* the highlighted region (job-wide id), 0 none */
    mw_rank_mode_t ranks; /* what colours the topology's ranks ('g', --rank-color) */
    uint32_t rank_region; /* the region they show (0: the one with the most time in view) */
    unsigned link_fn;     /* topology and matrix links of one sending function, 0 all ('f') */
} mw_regions_view_t;

/* ---- regions ------------------------------------------------------------------------------ */

/* The name of job-wide region `id` ("region N" when the job has not named it). */
const char *mw_region_name(const mw_model_t *m, uint32_t id, char *buf, size_t len);
/* The layer (palette slot, MW_PALETTE grey) of region id, and its colour. */
int mw_region_layer(uint32_t id);
mw_rgb_t mw_region_color(uint32_t id);

/* A window's share of rank-time in each layer: sum of its regions' exclusive time over
 * ranks_reporting x window_ns, per layer (out[MW_PALETTE + 1]); returns the total, not clamped
 * (0 for a window without ranks or regions). */
double mw_region_window_shares(const Mpiwatch__Window *w, double *out);

/* The timeline in region mode, in mw_timeline_columns()'s format (stride MW_PALETTE + 2,
 * cumulative tops clamped at 1, the last entry 1 where the column has data): a column is the
 * mean of the shares of the windows it covers, weighted by the time it covers of each.
 * *clamped (may be NULL): columns whose total was above 1. Returns the columns with data. */
int mw_region_columns(const mw_model_t *m, double t0, double t1, int ncols, float *out,
                      int *clamped);

/* The region legend of [t0, t1]: the regions with exclusive time in the cached windows of the
 * range, most time first, at most max (the others summed into a last entry of id 0). share:
 * of all regions' exclusive time in the range. */
typedef struct {
    uint32_t id; /* 0: "other regions" */
    mw_rgb_t color;
    uint64_t excl_ns, incl_ns, count;
    double share;
} mw_region_entry_t;
int mw_region_legend(const mw_model_t *m, double t0, double t1, mw_region_entry_t *out, int max);

/* The region with the most exclusive time in window w (0 none). */
uint32_t mw_region_top(const Mpiwatch__Window *w);
/* The job's region after `cur` (ids 1..n, then 1 again). */
uint32_t mw_region_next(const mw_model_t *m, uint32_t cur);

/* Per-rank time of `region` in window w (Window.rr_*): out[0..n_ranks) = inclusive (incl) or
 * exclusive ns, 0 for a rank without an entry. Returns the ranks with an entry. */
uint32_t mw_region_rank_values(const Mpiwatch__Window *w, uint32_t region, int incl, double *out,
                               uint32_t n_ranks);

/* The region of the legend row at pixel (x, y) when the legend lists regions (the rows of
 * mw_region_legend over the visible range, as panels.c draws them); 0 none. */
uint32_t mw_region_legend_pick(const mw_model_t *m, const mw_view_t *v, const mw_layout_t *l, int x,
                               int y);

/* ---- per-function links ------------------------------------------------------------------- */

/* The sending functions of window w's per-function pairs (Window.fpair_fn), ascending; returns
 * how many (at most max). */
int mw_fpair_fns(const Mpiwatch__Window *w, unsigned *out, int max);
/* The next one after cur (0: all sends; after the last, 0 again). */
unsigned mw_fpair_next_fn(const Mpiwatch__Window *w, unsigned cur);

/* The pairs of one sending function, kept in buffers that live with the topology's state. */
typedef struct {
    uint32_t *src, *dst;
    uint64_t *messages, *bytes;
    size_t n, cap;
} mw_fpairs_t;
/* The pairs of window w sent by fn (empty when w is NULL or has none); -1 out of memory (the
 * pairs are then empty). */
int mw_fpairs_of_window(mw_fpairs_t *fp, const Mpiwatch__Window *w, unsigned fn, mw_pairs_t *out);
void mw_fpairs_free(mw_fpairs_t *fp);

/* What the topology and matrix views keep for these (view_topo.h: mw_topo_gl_t.rx): the
 * settings as the app has them, the pairs of the one sending function shown, and the ranks'
 * time in the region shown with its scale (linear from 0 to the largest; topo_color.c). */
typedef struct {
    mw_regions_view_t set;
    mw_fpairs_t fp;
    int fpairs_none; /* links of one function asked for, but the window has no fpair entries */
    double *rank_ns; /* [n_ranks] */
    uint32_t n_ranks, rank_cap;
    uint32_t region;  /* the region the ranks show (set.rank_region, or the window's top one) */
    uint32_t with;    /* ranks with time in it */
    mw_scale_t scale; /* of rank_ns */
} mw_topo_regions_t;

/* In topo_color.c: fills x->rank_ns with each rank's time in the region x->set asks for (its
 * exclusive or inclusive time in window w, Window.rr_*), resolves the region (0: the window's
 * top one) and sets the scale, linear from 0 to the largest value. 0, or -1 out of memory. */
int mw_topo_region_ranks(mw_topo_regions_t *x, const Mpiwatch__Window *w, uint32_t n_ranks);
void mw_topo_regions_free(mw_topo_regions_t *x);
/* The lines' legend title: "links: MPI_Isend messages" (fn 0: "links: messages"). */
void mw_topo_link_title(unsigned fn, const char *what, char *buf, size_t len);

/* ---- a function's call sites and spread --------------------------------------------------- */

/* One call site of a function over a range (Window.sites summed per job-wide site id). */
typedef struct {
    uint32_t site;
    const char *function, *file, *module; /* from JobInfo.sites ("" unknown) */
    uint32_t line;
    uint64_t count, ns, bytes, max_ns;
    double share;         /* of the function's time in the range (FunctionStat.total_ns) */
    uint32_t top_rank;    /* the rank with the most time at the site in one window ... */
    uint64_t top_rank_ns; /* ... and that time */
} mw_site_row_t;

/* The call sites of function fn in the cached windows of [t0, t1], most time first (ties: the
 * lower site id), at most max. *fn_ns: the function's time in the range, *n_sites: sites in all.
 * Returns the rows written. */
int mw_fn_sites(const mw_model_t *m, double t0, double t1, unsigned fn, mw_site_row_t *out, int max,
                uint64_t *fn_ns, int *n_sites);

/* The spread of fn across ranks over [t0, t1] (FunctionStat.rank_sd_ns, rank_max, rank_max_ns):
 * the mean of the windows' standard deviations, and the window whose busiest rank spent the
 * most time in fn, that rank and its time. windows: windows in the range with fn. */
typedef struct {
    int windows;
    double sd_ns;
    uint32_t max_rank;
    uint64_t max_ns;
    uint64_t max_window; /* absolute index */
    double mean_ns;      /* the mean per rank: total_ns / ranks_reporting, averaged */
} mw_fn_spread_t;
int mw_fn_spread(const mw_model_t *m, double t0, double t1, unsigned fn, mw_fn_spread_t *out);

#endif
