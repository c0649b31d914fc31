/* live.h: the live terminal view (live.c). */
#ifndef MW_COLLECTOR_LIVE_H
#define MW_COLLECTOR_LIVE_H

#include <stdint.h>
#include <stdio.h>
#include "merge.h"
#include "mw_proto.h"

#define MW_LIVE_EVENTS 4
#define MW_LIVE_EVENT_LEN 160
typedef struct {
    int enabled;
    int tty;
    FILE *out;
    uint64_t next_ns;              /* monotonic time of the next refresh */
    int lines_drawn;               /* lines of the block on screen, for redrawing in place */
    unsigned long log_mark;        /* mw__log_lines when the block was drawn */
    double recent_ns[MW_FN_SPACE]; /* decaying time per function over the last seconds */
    double last_fraction;
    uint32_t last_reporting;
    int have_window;
    /* The last few rule / steer / action_exit events as shown (mw__live_event): a ring of
     * MW_LIVE_EVENTS lines, n_events taken since the job started. Windows are shown counted
     * from the job's first closed window. */
    char events[MW_LIVE_EVENTS][MW_LIVE_EVENT_LEN];
    unsigned n_events;
    int have_first;
    uint64_t first_index, last_index;
} mw_live_t;

struct mw_collector;

void mw__live_init(mw_live_t *live, FILE *out, int enabled);
void mw__live_window(mw_live_t *live, const mw_window_t *w);
/* Takes a job event (mw__publish_event): rule, steer and action_exit events are kept for
 * the block and, when stderr is not a terminal, printed at once on a line of their own. */
void mw__live_event(mw_live_t *live, const char *kind, const char *detail);
/* Redraws when due; returns the monotonic time of the next refresh (UINT64_MAX: never). */
uint64_t mw__live_tick(mw_live_t *live, const struct mw_collector *c, uint64_t now_ns);
/* Forgets the block on screen so that what follows is not overwritten (before the report). */
void mw__live_release(mw_live_t *live);
/* The view's text for the current state; `block` selects the multi-line form. */
size_t mw__live_format(const mw_live_t *live, const struct mw_collector *c, int block, char *buf,
                       size_t len);

#endif
