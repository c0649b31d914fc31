/* model_timeline.h: the stacked timeline's columns (the fraction of ranks inside each
 * function) computed from the cached windows. No SDL, no GL.
 */
#ifndef MW_VIEWER_MODEL_TIMELINE_H
#define MW_VIEWER_MODEL_TIMELINE_H

#include "model_store.h"

/* Stacked columns for [t0, t1] across `ncols` pixel columns: out[col * (MW_PALETTE + 2) + k]
 * is the top of layer k (fractions of ranks, 0..1, cumulative; layer k = palette slot k, layer
 * MW_PALETTE = grey); out[col * (MW_PALETTE + 2) + MW_PALETTE + 1] is 1 when the column has
 * data and 0 when its windows are not cached (drawn as a gap). A column averages the sub-slots
 * it covers. Returns the number of columns with data. */
int mw_timeline_columns(const mw_model_t *m, double t0, double t1, int ncols, float *out);

#endif
