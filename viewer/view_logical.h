/* view_logical.h: the state of the logical view (view_logical.c; docs/viewer.md, "Logical
 * view"): its analysis (model_logical.h), its textures, the picture of the last binning and the
 * metric shown. It lives in mw_app_t (app.h includes this after mw_density_gl_t); the view's
 * functions are declared in views.h with the others.
 */
#ifndef MW_VIEWER_VIEW_LOGICAL_H
#define MW_VIEWER_VIEW_LOGICAL_H

#include "model_layout.h"
#include "model_logical.h"

typedef struct {
    mw_density_gl_t g; /* the opacity (D) and colour textures, drawn through the call view's
                        * shader */
    mw_lview_t *lv;
    mw_lview_msg_t *msgs;
    size_t msgs_cap;
    mw_lview_coll_t *colls;
    size_t colls_cap;
    mw_lview_pic_t pic;
    mw_lview_metric_t metric; /* the 'd' key: lateness or differential lateness */
    int strip;                /* the 'o' key: the upper plot shows lateness over time per rank
                               * (g2) instead of the per-rank timeline */
    mw_density_gl_t g2;       /* the strip's textures */
    int throttle;             /* interactive: analyses spaced by three times their cost */
    int pending;              /* a range is waiting for its analysis */
    uint64_t next_ns;         /* no new analysis before (mw__now_ns) */
    struct {
        double f0, f1;
        int w, h, metric;
        uint64_t analyses;
        int valid;
    } skey;
    /* Where it was drawn in the last frame (picking uses the same). */
    mw_rect_t ranks_r, plot_r;
    int head_y;
    struct {
        int w, h;
        int metric;
        int64_t sel_rank;
        uint64_t sel0, sel1;
        uint64_t analyses;
        int valid;
    } key;
} mw_logical_gl_t;

#endif
