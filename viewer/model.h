/* model.h: everything the viewer knows and computes, without SDL or OpenGL: one header that
 * includes the model's modules, one per concern.
 *
 * DESIGN: the model is a library of its own (mw_viewer_model) so that the unit tests
 * (tests/viewer/test_model.c) link it alone:
 *   model_store.h    the window store: job description, cache and paging of merged windows,
 *                    the (segmented) window grid, time steps, function colors and the legend,
 *                    the highlighted rank's calls, the status counters
 *   model_events.h   the job's events: kept, parsed, placed on the time axis, worded
 *   model_view.h     the view state: visible and selected ranges, following, highlights,
 *                    representation and transfer function
 *   model_layout.h   the screen's regions and the axes' scales and ticks
 *   model_timeline.h the stacked timeline's columns
 *   model_density.h  the call view's density and color buffers, the transfer functions
 *   model_pick.h     what a click finds
 *   model_trace.h    the windows' per-call traces, decoded and matched
 *   model_ranks.h    the per-rank timeline's rows and messages
 *   model_logical.h  the logical view: steps and lateness of the range, and their picture
 *   model_terrain.h  the terrain: ranks x functions (or regions) x a metric over the range
 *   model_regions.h  code regions, call sites, per-function links, spread across ranks
 * From these the views (view_*.c) only turn results into GL calls, so the numbers they draw
 * are unit-tested here and written next to snapshots (--meta) for the snapshot tests.
 */
#ifndef MW_VIEWER_MODEL_H
#define MW_VIEWER_MODEL_H

#include "model_density.h"
#include "model_events.h"
#include "model_layout.h"
#include "model_logical.h"
#include "model_pick.h"
#include "model_ranks.h"
#include "model_regions.h"
#include "model_store.h"
#include "model_terrain.h"
#include "model_timeline.h"
#include "model_trace.h"
#include "model_view.h"

#endif
