/* upstream.h: the aggregator's side of the tree (upstream.c; docs/aggregator.md): the PUSH
 * socket to the parent (--upstream), the steering relay (--upstream-steer), and the hooks the
 * collector core calls when it runs as an aggregator. */
#ifndef MW_COLLECTOR_UPSTREAM_H
#define MW_COLLECTOR_UPSTREAM_H

#include <stddef.h>
#include <stdint.h>
#include <zmq.h>

#include "collector.h"

struct cJSON;
typedef struct mw_upstream mw_upstream_t;

/* The start-up checks of the aggregator's options (from mw_collector_options_check): the
 * endpoints, the key files (both or neither, and they load), CURVE for an upstream that is not
 * local unless --allow-insecure, --upstream-steer with --steer, and neither --replay nor
 * --rules with --upstream. Returns 0, or -1 with the reason in err. */
int mw__upstream_check(const mw_collector_options_t *o, char *err, size_t errlen);

/* With --upstream: connects the PUSH socket to the parent and, with --upstream-steer, the SUB
 * socket of the relay, in `zmq_ctx` (after --steer is bound: the relay publishes on it).
 * Returns NULL with a logged message. */
mw_upstream_t *mw__upstream_open(void *zmq_ctx, mw_collector_t *c);
/* Tries once more to hand over what waits, counts what still cannot go as dropped, logs the
 * totals and closes the sockets (the PUSH lingers a bounded time). NULL is a no-op. */
void mw__upstream_close(mw_collector_t *c);
/* The relay's SUB (POLLIN) and, while messages wait, the PUSH (POLLOUT) for zmq_poll; returns
 * how many items were written (at most max). */
int mw__upstream_pollitems(const mw_upstream_t *u, zmq_pollitem_t *items, int max);
/* Relays pending steering messages (a bounded batch), hands over waiting messages and sends
 * the periodic AggState. Never blocks. */
void mw__upstream_serve(mw_collector_t *c, uint64_t now_mono_ns);
/* Milliseconds until the next periodic AggState, -1 when none is due. */
long mw__upstream_timeout_ms(const mw_collector_t *c, uint64_t now_mono_ns);

/* Core hooks (collector.c), each a no-op when c->upstream is NULL. */
/* A window the aggregator closed: its Partial goes upstream, then the byes it releases. */
void mw__upstream_window(mw_collector_t *c, const mw_window_t *w);
/* An accepted hello or bye (env, as decoded; data/len, as received) goes upstream. */
void mw__upstream_frame(mw_collector_t *c, const Mpiwatch__Envelope *env, const void *data,
                        size_t len);
/* The job ended (its windows closed): the final AggState, then the byes still queued. */
void mw__upstream_job_end(mw_collector_t *c);
/* 1 when the aggregator's share of the job is over (an aggregator never sees the job's size in
 * byes): with --expect-ranks N, N ranks said hello and every one of them said bye or died;
 * without it, every rank that said hello said bye or died and nothing came for
 * MW_UPSTREAM_SETTLE_MS since (the ranks of one node start together in MPI_Init). */
#define MW_UPSTREAM_SETTLE_MS 2000u
int mw__upstream_job_done(const mw_collector_t *c, uint64_t now_mono_ns);
/* Adds the "upstream" object (what went up, what was dropped, the relay) to the stats JSON.
 * Returns 0, or -1 out of memory. */
int mw__upstream_stats_json(const mw_collector_t *c, struct cJSON *root);

#endif
