/* topo_color.h: the colours of the topology and matrix views: colour modes of the lines, value
 * scales (linear or log between the drawn minimum and maximum, or of rank numbers) and the two
 * ramps (values: blue to red; ranks: hues).
 *
 * Lines are coloured by messages, bytes, or by source or destination rank (a hue ramp over
 * 0..size-1). Ranks by the bytes they sent in the window or step (from the pairs): a merged
 * Window carries no per-rank MPI time. No SDL or GL (part of mw_viewer_model).
 */
#ifndef MW_VIEWER_TOPO_COLOR_H
#define MW_VIEWER_TOPO_COLOR_H

#include <stddef.h>

#include "model_store.h" /* mw_rgb_t */
#include "topo_lines.h"

typedef enum {
    MW_TOPO_COLOR_MESSAGES,
    MW_TOPO_COLOR_BYTES,
    MW_TOPO_COLOR_SRC,
    MW_TOPO_COLOR_DST,
    MW_TOPO_COLOR_COUNT
} mw_topo_color_t;

const char *mw_topo_color_name(mw_topo_color_t c);
/* -1 when unknown. */
int mw_topo_color_of(const char *name);

typedef struct {
    double min, max; /* of the values drawn */
    int log;         /* log scale (values > 0) */
    int ranks;       /* the scale is of rank numbers (src / dst modes) */
} mw_scale_t;

/* Where v falls on the scale, 0..1. */
float mw_scale_t01(const mw_scale_t *s, double v);
/* The value ramp (dark blue, teal, green, yellow) and the rank ramp (hues). */
mw_rgb_t mw_ramp(float t);
mw_rgb_t mw_hue_ramp(float t);
mw_rgb_t mw_scale_color(const mw_scale_t *s, double v);

/* The scale of the lines (bundled: of the bundles) in color mode c. */
mw_scale_t mw_topo_line_scale(const mw_topo_lines_t *t, int bundled, mw_topo_color_t c, int log);
/* The value of line i (bundled: bundle i) in mode c. */
double mw_topo_line_value(const mw_topo_lines_t *t, int bundled, size_t i, mw_topo_color_t c);
/* The scale of the ranks' metric (bytes sent, log), over ranks that sent anything. */
mw_scale_t mw_topo_rank_scale(const mw_topo_lines_t *t);

#endif
