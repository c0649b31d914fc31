/* model_density.h: the call view's binning: the density and color buffers of the calls of a
 * time range, its duration axis, and the paper's transfer functions. No SDL, no GL.
 */
#ifndef MW_VIEWER_MODEL_DENSITY_H
#define MW_VIEWER_MODEL_DENSITY_H

#include "model_store.h"
#include "model_view.h"

/* Duration range of the call view's y axis for [t0, t1]: from the shortest to the longest bin
 * with calls (at least two decades). */
void mw_density_range(const mw_model_t *m, double t0, double t1, double *d0_ns, double *d1_ns);

/* Bins the calls of [t0, t1] into a w x h float density buffer D (calls per pixel, row 0 at the
 * bottom) and color buffer C (w x h x 3: the color each pixel averages, weighted by calls)
 * for the representation `repr`; each density cell contributes its count spread over its
 * sub-slot and log2 bin as the representation maps them, each recorded long call contributes
 * one call at its exact place. Highlighted function or rank: the others are drawn at 1/8 of
 * their weight in C (dimmed), the highlighted rank's own calls (mw_model_set_rank_calls) are
 * drawn on top by the view. Returns D's maximum (Dmax). */
float mw_density_bin(const mw_model_t *m, const mw_view_t *v, double t0, double t1, double d0_ns,
                     double d1_ns, int w, int h, float *D, float *C);

/* The paper's transfer functions: the opacity of a pixel of density d, d > 0:
 *   linear: o_min + (1 - o_min) * d / dmax
 *   log:    o_min + (1 - o_min) * log(1 + d) / log(1 + dmax)
 * (log(1 + d) rather than the paper's log(d) so that a call spread over several pixels, d < 1,
 * still gets o_min); 0 for d == 0. */
float mw_transfer(mw_transfer_t t, float d, float dmax, float o_min);

#endif
