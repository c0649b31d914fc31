/* replay.h: --replay (replay.c, in the executable only). */
#ifndef MW_COLLECTOR_REPLAY_H
#define MW_COLLECTOR_REPLAY_H

#include "collector.h"

/* Feeds --replay FILE through the collector with the recorded clocks, paced by --speed, and
 * serves the feed while doing so. Returns 0, or -1 with a logged message. */
int mw__replay_run(mw_collector_t *c);

#endif
