/* source.h: where the viewer's windows come from: a live collector or a recording.
 *
 * DESIGN: a source fills the model (model.h) and never blocks the frame loop. Live
 * (--connect FEED [--history EP]): a SUB socket on the collector's feed, drained with
 * ZMQ_DONTWAIT once per frame up to a cap, and a DEALER socket on its history endpoint with at
 * most one request outstanding, asking for what mw_model_wanted() says is missing (paging
 * back through the run, filling feed gaps) and for one rank's samples when a call is picked.
 * Replay (--replay FILE.mpiw): the recording's reader, through its index, stands in for the
 * history endpoint; with a speed the recorded windows are released as the clock reaches their
 * recorded time, as if live, otherwise the whole recording is history from the start.
 */
#ifndef MW_VIEWER_SOURCE_H
#define MW_VIEWER_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

typedef struct mw_source mw_source_t;

typedef struct {
    int live;                         /* 1: --connect, 0: --replay */
    int connected;                    /* live: a job description has arrived */
    int playing;                      /* replay with a speed, not yet at the end */
    int ended;                        /* the job ended (JobInfo.state is not "running") */
    uint64_t feed_windows, feed_gaps; /* windows from the feed, indices missed on it */
    uint64_t requests, replies, errors;
    uint64_t steps;    /* time steps handed to the model */
    int steps_pending; /* replay: the recording's steps and events are still being read */
    uint64_t events;   /* job events handed to the model */
    uint64_t traces;   /* reach-back traces handed to the model (feed, recording) */
    char what[256];    /* the endpoint or the file */
    /* Where the windows paged in came from (docs/recording.md "Tiers"): the newest history
     * answer's HistoryReply.tier ("memory", "windows", "raw", "coarse"), "windows" for a
     * replay (the recording's merged windows); "" until one came. */
    char tier[16];
} mw_source_status_t;

/* Connects to a collector's feed (and history endpoint, which may be NULL: then nothing
 * before the viewer started can be shown). Returns NULL with a message in err. */
mw_source_t *mw_source_connect(const char *feed, const char *history, char *err, size_t len);
/* Opens a recording. speed 0: the whole recording is available at once; speed X > 0: windows
 * appear as the wall clock reaches their recorded time divided by X. */
mw_source_t *mw_source_replay(const char *path, double speed, char *err, size_t len);
void mw_source_free(mw_source_t *s);

/* Internal, for tests and the fuzz target: a live source with no sockets, and the function
 * that applies one feed message (the second frame of the feed) to the model, as the live
 * source does for every message it receives. Returns the windows added. */
mw_source_t *mw__source_detached(void);
int mw__source_feed_message(mw_source_t *s, mw_model_t *m, const void *data, size_t len);

/* One frame's work, never blocking: takes what arrived (job, windows, events, replies) into
 * the model, updates the model's extent, and sends the next request the model wants.
 * now_ns is CLOCK_MONOTONIC. Returns the number of windows added, or -1 on a fatal error. */
int mw_source_poll(mw_source_t *s, mw_model_t *m, uint64_t now_ns);
/* Asks for the calls of `rank` in windows [first, last]; they reach the model
 * (mw_model_set_rank_calls) in a later mw_source_poll(). Replaces an earlier rank request. */
int mw_source_want_rank(mw_source_t *s, uint32_t rank, uint64_t first, uint64_t last);
/* 1 while a rank request is outstanding. */
int mw_source_rank_busy(const mw_source_t *s);
/* Waits up to timeout_ms for something to arrive (headless snapshots and benchmarks only). */
void mw_source_wait(mw_source_t *s, int timeout_ms);
void mw_source_status(const mw_source_t *s, mw_source_status_t *out);
/* The last job event seen ("job_end: complete"), "" before the first. */
const char *mw_source_event(const mw_source_t *s);

#endif
