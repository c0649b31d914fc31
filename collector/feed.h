/* feed.h: the live feed (feed.c): --publish, a PUB socket of merged windows, steps, the job
 * description and job events (docs/feed.md). */
#ifndef MW_COLLECTOR_FEED_H
#define MW_COLLECTOR_FEED_H

#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "options.h"

typedef struct mw_feed mw_feed_t;

/* Binds --publish on `zmq_ctx`. `clock` is the outer loop's clock (the job description's
 * repeat). Returns NULL with a logged message. */
mw_feed_t *mw__feed_open(void *zmq_ctx, const mw_collector_options_t *opt, mw_clock_fn clock);
/* Logs what was published and closes; NULL is ignored. */
void mw__feed_close(mw_feed_t *f);
/* Publishes a closed window (the bytes of a Mpiwatch__Window) on topic "window". */
void mw__feed_window(mw_feed_t *f, const void *pb, size_t len);
/* Publishes the job description (a Mpiwatch__JobInfo) and keeps it to send again. */
void mw__feed_job(mw_feed_t *f, const void *pb, size_t len);
/* Publishes a closed time step (the bytes of a Mpiwatch__Step) on topic "step". */
void mw__feed_step(mw_feed_t *f, const void *pb, size_t len);
/* Publishes a rank's trace of a closed window (the bytes of a Mpiwatch__RankTrace) on topic
 * "trace". */
void mw__feed_trace(mw_feed_t *f, const void *pb, size_t len);
/* Publishes a lateness batch (the bytes of a Mpiwatch__Lateness) on topic "lateness". */
void mw__feed_lateness(mw_feed_t *f, const void *pb, size_t len);
/* Publishes a job event on topic "event". */
void mw__feed_event(mw_feed_t *f, const char *kind, const char *job, const char *detail,
                    uint64_t real_ns);
/* Sends the job description again when it is due (once a second); the loop calls it. */
void mw__feed_serve(mw_feed_t *f);

#endif
