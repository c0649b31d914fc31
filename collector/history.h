/* history.h: the history endpoint (history.c): --history, a ROUTER socket answering
 * HistoryRequests from recent windows and samples kept in memory, or from the recording
 * (docs/feed.md). */
#ifndef MW_COLLECTOR_HISTORY_H
#define MW_COLLECTOR_HISTORY_H

#include <stddef.h>
#include <stdint.h>
#include <zmq.h>

#include "clock.h"
#include "options.h"

typedef struct mw_history mw_history_t;
struct mw_collector;

/* Binds --history on `zmq_ctx`. `clock` is the outer loop's clock (budgets of work per
 * request and per wakeup). Returns NULL with a logged message. */
mw_history_t *mw__history_open(void *zmq_ctx, const mw_collector_options_t *opt, mw_clock_fn clock);
/* Logs what was answered and closes; NULL is ignored. */
void mw__history_close(mw_history_t *h);
/* Keeps a closed window (the bytes of a Mpiwatch__Window) for requests. */
void mw__history_window(mw_history_t *h, uint64_t index, const void *pb, size_t len);
/* Keeps the job description (a Mpiwatch__JobInfo) for replies. */
void mw__history_job(mw_history_t *h, const void *pb, size_t len);
/* Keeps a lateness batch (the bytes of a Mpiwatch__Lateness) for requests. */
void mw__history_lateness(mw_history_t *h, const void *pb, size_t len);
/* Takes a job event: "job_start" empties the rings (they belong to the previous job). */
void mw__history_event(mw_history_t *h, const char *kind);
/* Keeps an accepted sample (the envelope as received) for rank queries. */
void mw__history_sample(mw_history_t *h, uint32_t rank, uint64_t window, const void *data,
                        size_t len);
/* The socket for zmq_poll (NULL socket when there is none). */
void mw__history_pollitem(mw_history_t *h, zmq_pollitem_t *item);
/* Answers the pending requests without blocking; `c` gives the recording for windows no
 * longer in memory. */
void mw__history_serve(mw_history_t *h, struct mw_collector *c);

#endif
