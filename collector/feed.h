/* feed.h: the live feed and history endpoint (feed.c). */
#ifndef MW_COLLECTOR_FEED_H
#define MW_COLLECTOR_FEED_H

#include <stddef.h>
#include <stdint.h>
#include <zmq.h>
#include "collector.h"

typedef struct mw_feed mw_feed_t;

/* Binds --publish and --history on `zmq_ctx` (either may be absent). `clock` is the outer
 * loop's clock (budgets of work, the job description's repeat). Returns NULL with a logged
 * message. */
mw_feed_t *mw__feed_open(void *zmq_ctx, const mw_collector_options_t *opt, mw_clock_fn clock);
void mw__feed_close(mw_feed_t *f);
/* Publishes a closed window (the bytes of a Mpiwatch__Window) and keeps it in the history. */
void mw__feed_window(mw_feed_t *f, uint64_t index, const void *pb, size_t len);
/* Publishes the job description (a Mpiwatch__JobInfo) and an event. */
void mw__feed_job(mw_feed_t *f, const void *pb, size_t len);
/* Publishes a closed time step (the bytes of a Mpiwatch__Step) on topic "step". */
void mw__feed_step(mw_feed_t *f, const void *pb, size_t len);
void mw__feed_event(mw_feed_t *f, const char *kind, const char *job, const char *detail,
                    uint64_t real_ns);
/* Keeps an accepted sample (the envelope as received) for rank queries. */
void mw__feed_sample(mw_feed_t *f, uint32_t rank, uint64_t window, const void *data, size_t len);
/* The history socket for zmq_poll (NULL socket when there is none). */
void mw__feed_pollitem(mw_feed_t *f, zmq_pollitem_t *item);
/* Answers the pending history requests without blocking; `c` gives the recording for windows
 * no longer in memory. */
void mw__feed_serve(mw_feed_t *f, mw_collector_t *c);

#endif
