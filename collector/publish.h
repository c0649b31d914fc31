/* publish.h: the one path from the collector's core to its outputs (publish.c).
 *
 * What the collector produces, a closed window, a closed time step, the job description or a
 * job event, is described once as an mw__pub_t and handed to mw__publish(), which walks one
 * table of outputs (the counters, the live view, the recording, the feed, the history, the
 * consumer hook, the steps kept for the summary, the rules) in a fixed order. Producers
 * (collector.c, steps.c, steer.c, rules.c) never touch an output; adding an output is adding one
 * entry to the table in publish.c.
 */
#ifndef MW_COLLECTOR_PUBLISH_H
#define MW_COLLECTOR_PUBLISH_H

#include <stddef.h>
#include <stdint.h>

#include "merge.h"
#include "mw_proto.h"

struct mw_collector;

typedef enum {
    MW_PUB_WINDOW,
    MW_PUB_STEP,
    MW_PUB_JOB,
    MW_PUB_EVENT,
    MW_PUB_TRACE,
    MW_PUB_LATENESS
} mw__pub_kind_t;

/* One thing to publish. `pb`/`len` is its wire form (a Mpiwatch__Window, __Step or
 * __JobInfo), encoded once by mw__publish() when the first output that takes bytes is reached; len
 * 0 when it could not be encoded (out of memory) or no output that is on takes bytes. */
typedef struct {
    mw__pub_kind_t kind;
    const mw_window_t *window;  /* MW_PUB_WINDOW */
    const Mpiwatch__Step *step; /* MW_PUB_STEP */
    const char *event_kind;     /* MW_PUB_EVENT: "job_start", "rule", ... */
    const char *event_detail;
    uint32_t trace_rank;                /* MW_PUB_TRACE: a trace of a closed window ... */
    const Mpiwatch__Trace *trace;       /* ... as received (a Feed's RankTrace) */
    const Mpiwatch__Lateness *lateness; /* MW_PUB_LATENESS: a batch of the analysis */
    const uint8_t *pb;
    size_t len;
} mw__pub_t;

/* One output: a name (docs, debugging) and what it does with each kind of message (NULL: not
 * interested). Each handler checks itself whether its output is on (--record, --publish...). */
typedef struct {
    const char *name;
    int takes_pb; /* its handlers read the wire form (m->pb, m->len) */
    void (*on_window)(struct mw_collector *c, const mw__pub_t *m);
    void (*on_step)(struct mw_collector *c, const mw__pub_t *m);
    void (*on_job)(struct mw_collector *c, const mw__pub_t *m);
    void (*on_event)(struct mw_collector *c, const mw__pub_t *m);
    void (*on_trace)(struct mw_collector *c, const mw__pub_t *m);
    void (*on_lateness)(struct mw_collector *c, const mw__pub_t *m);
} mw__output_t;

/* Hands `m` to every output, in the table's order, with the clock of c->now. */
void mw__publish(struct mw_collector *c, mw__pub_t *m);

/* Shorthands for the producers. */
void mw__publish_window(struct mw_collector *c, const mw_window_t *w);
void mw__publish_step(struct mw_collector *c, const Mpiwatch__Step *st);
/* The job description (JobInfo): at the job's start, once every rank has said hello, when
 * its window grid changes (steer.c) and at its end. */
void mw__publish_job(struct mw_collector *c);
/* A job event (kind "rule", "action_exit", ...). */
void mw__publish_event(struct mw_collector *c, const char *kind, const char *detail);
/* A rank's trace of a window that has closed already (a reach-back capture, or the trace of a
 * late sample): the feed only (topic "trace"); the recording has its frame. */
void mw__publish_trace(struct mw_collector *c, uint32_t rank, const Mpiwatch__Trace *t);

#endif
