/* steer.h: steering (steer.c; docs/steering.md). */
#ifndef MW_COLLECTOR_STEER_H
#define MW_COLLECTOR_STEER_H

#include <stddef.h>
#include <stdint.h>
#include <zmq.h>
#include "collector.h"

/* MW_STEER_MAX_KEY, _VALUE, _RANKS and _MESSAGE: proto/mw_proto.h (both ends agree). */
typedef struct mw_steer mw_steer_t;

/* Validates and publishes one Steer message to the ranks (all of them when n_ranks is 0) on
 * --steer, and records it as a "steer" job event. Returns the sequence number (> 0), or -1
 * when rejected (counted) or when there is no steer socket. The rules engine calls this. */
int mw__steer_send(mw_collector_t *c, const char *key, const char *value, const uint32_t *ranks,
                   size_t n_ranks);
/* Binds --steer (PUB) and --control (ROUTER) on `zmq_ctx` (either may be absent). Returns
 * NULL with a logged message. */
mw_steer_t *mw__steer_open(void *zmq_ctx, const mw_collector_options_t *opt);
void mw__steer_close(mw_steer_t *s);
/* The control socket for zmq_poll (NULL socket when there is none). */
void mw__steer_pollitem(mw_steer_t *s, zmq_pollitem_t *item);
/* Answers pending SteerRequests on --control without blocking (a bounded batch). */
void mw__steer_serve(mw_collector_t *c);
/* The --steer PUB socket, or NULL: the aggregator's relay publishes on it (upstream.c). */
void *mw__steer_pub(const mw_collector_t *c);
/* Steer requests rejected so far (bad key, value or ranks; undecodable). */
uint64_t mw__steer_rejected(const mw_collector_t *c);
/* mpiwatch.window requests refused (counted in steer_rejected too). */
uint64_t mw__steer_window_rejected(const mw_collector_t *c);
/* Applies a recorded "window" event's grid change (replay). Returns 0, or -1. */
int mw__grid_apply_event(mw_collector_t *c, const char *detail);

#endif
