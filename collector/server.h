/* server.h: the socket loop (server.c, in the executable only). */
#ifndef MW_COLLECTOR_SERVER_H
#define MW_COLLECTOR_SERVER_H

#include "collector.h"

/* Binds the ingest socket and runs the zmq_poll loop until a signal or, with
 * --exit-after-job, the end of the job. Returns 0, or -1 with a logged message. */
int mw__server_run(mw_collector_t *c);

#endif
