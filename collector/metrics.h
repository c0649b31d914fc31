/* metrics.h: the Prometheus endpoint (metrics.c, in the executable only). */
#ifndef MW_COLLECTOR_METRICS_H
#define MW_COLLECTOR_METRICS_H

#include <stdint.h>
#include "collector.h"

typedef struct mw_metrics mw_metrics_t;

/* Serves GET /metrics on port of --metrics-bind (127.0.0.1 by default) from its own thread,
 * starting with a snapshot of `c`, and hooks c->on_window (chaining the previous consumer) for
 * the latest window's gauges. Returns the endpoint, or NULL with a logged message. */
mw_metrics_t *mw__metrics_start(mw_collector_t *c, unsigned port);
/* Called by the loop after every wakeup: republishes the snapshot when the counters changed
 * (at most every 500 ms, at once when the job has ended). Returns the milliseconds until a
 * pending change may be published (for the poll timeout), -1 when none is pending. */
long mw__metrics_update(mw_metrics_t *m, const mw_collector_t *c, uint64_t now_ns);
/* Stops the HTTP thread and frees everything; NULL is ignored. */
void mw__metrics_stop(mw_metrics_t *m);

#endif
