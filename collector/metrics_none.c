/* metrics_none.c: the Prometheus endpoint of a collector built with MW_METRICS=OFF (no
 * libmicrohttpd).
 *
 * DESIGN: the same three entry points as metrics.c (metrics.h), so server.c is the same in
 * both builds; main.c refuses --metrics-port before anything starts ("not built in"), so
 * mw__metrics_start is never reached with a port, and says so if it ever is.
 */
#include "metrics.h"

#include "log.h"

mw_metrics_t *mw__metrics_start(mw_collector_t *c, unsigned port)
{
    (void)c;
    MW_LOG(MW_LOG_ERROR, "--metrics-port %u: the metrics server is not built in (MW_METRICS=OFF)",
           port);
    return NULL;
}

long mw__metrics_update(mw_metrics_t *m, const mw_collector_t *c, uint64_t now_ns)
{
    (void)m;
    (void)c;
    (void)now_ns;
    return -1;
}

void mw__metrics_stop(mw_metrics_t *m)
{
    (void)m;
}
