/* source_internal.h: what the viewer's two sources (source_live.c, source_replay.c) and their
 * common part (source.c) share and nothing else includes: the source's state, one part for each
 * kind, and the small interface a kind implements.
 *
 * DESIGN: mw_source_t is one struct whatever the kind, so that the rank request, the extent and
 * the job bookkeeping are written once (source.c); what only the live feed or only a recording
 * needs is in s->live or s->rp. The calls of source.h that differ by kind go through s->ops.
 */
#ifndef MW_VIEWER_SOURCE_INTERNAL_H
#define MW_VIEWER_SOURCE_INTERNAL_H

#include <stdint.h>

#include "mw_fnmap_msg.h"
#include "mw_recording.h"
#include "source.h"

#define MW__SOURCE_PENDING_MAX 256u /* feed windows kept until the job is known */
#define MW__SOURCE_MAX_REQUEST 256u /* windows per range request (history, recording) */

/* A request on the history socket. */
typedef struct {
    int active;
    uint64_t id;
    uint64_t sent_ns;
    uint64_t first, last;   /* what is asked now (a continuation after a truncated reply) */
    uint64_t mfirst, mlast; /* the range mw_model_wanted() gave, answered at the end */
    int from_model;         /* mfirst..mlast must be reported with mw_model_answered() */
    int last_n;             /* the initial "last N" request */
} mw__source_req_t;

/* A rank request: wanted (to send or scan), then being answered. */
typedef struct {
    int wanted;  /* mw_source_want_rank() set it, not started yet */
    int running; /* sent (live) or being scanned (replay) */
    uint32_t rank;
    uint64_t first, last;
    uint64_t id, sent_ns;
    mw_rank_call_t *calls;
    size_t n, cap;
    /* replay: the scan */
    int taken;
    uint64_t taken_last;
} mw__source_rank_t;

/* What differs between the live source and the replay source. */
typedef struct {
    /* One frame's work (mw_source_poll). */
    int (*poll)(mw_source_t *s, mw_model_t *m, uint64_t now_ns);
    /* Waits up to timeout_ms for something to do (mw_source_wait); timeout_ms >= 0. */
    void (*wait)(mw_source_t *s, int timeout_ms);
    /* 1 when a rank request can be answered (mw_source_want_rank). */
    int (*can_rank)(const mw_source_t *s);
    /* Frees what the kind holds (mw_source_free frees the rest); the source may be half open. */
    void (*release)(mw_source_t *s);
} mw__source_ops_t;

/* The live source: the feed (SUB) and the history endpoint (DEALER). */
typedef struct {
    void *ctx, *sub, *dealer;
    uint64_t next_id;
    mw__source_req_t req;
    uint64_t backoff_until; /* no new range request before this time (failures, holes) */
    int job_req_sent;
    uint64_t job_req_id, job_req_ns;
    int asked_last; /* the initial last-N request has been sent */
    int have_prev;
    uint64_t prev_index;
} mw__source_live_t;

/* The replay source: readers of the recording. */
typedef struct {
    mw_rec_reader_t *rd, *rd_rank;
    double speed;
    int have_span;
    uint64_t first_w, last_w, first_mono, last_mono;
    uint64_t read_full, read_lean;  /* windows read as recorded, and as lean copies (coarse) */
    uint8_t *job_start, *job_final; /* packed JobInfo of the start and of the end */
    size_t job_start_len, job_final_len;
    int started;             /* the first poll has set the job */
    uint64_t t0_ns;          /* wall clock (CLOCK_MONOTONIC) of the first poll */
    uint64_t play_next;      /* next window index to read ahead */
    Mpiwatch__Window *ahead; /* read ahead, not due yet */
    uint64_t ahead_mono;
    int have_due;
    uint64_t due_newest; /* the newest window given while playing */
    int serving;         /* a wanted range is being read */
    uint64_t serve_next, serve_first, serve_last;
    uint8_t *pack; /* scratch: a record's window encoded again to be unpacked alone */
    size_t pack_cap;
    int more; /* the last poll left work, or did some: do not sleep */
    /* Time steps: a reader of their own walks the whole file once, a budget per poll. */
    mw_rec_reader_t *rd_step;
    int steps_done;
    Mpiwatch__Step *step_ahead; /* playing: read, not due yet */
    uint64_t step_ahead_mono;
    /* Job events are read by the same walk; playing, one waits here until it is due. */
    int ev_ahead;
    char ev_kind[32], ev_detail[MW_EVENT_DETAIL];
    uint64_t ev_real_ns, ev_mono;
    mw_arena_t arena; /* decodes recorded envelopes for rank requests */
    int arena_ready;
} mw__source_replay_t;

struct mw_source {
    const mw__source_ops_t *ops;
    mw_source_status_t st;
    char event[256];    /* the last event, "kind: detail" */
    int hold_ext;       /* live with history: no extent for the model before its first answer */
    char job_name[256]; /* of the job in the model: a new one resets the feed's bookkeeping */
    Mpiwatch__Window *pending[MW__SOURCE_PENDING_MAX]; /* windows that came before the job */
    unsigned n_pending;
    int have_ext;
    uint64_t ext_oldest, ext_newest;
    mw__source_rank_t rk;
    mw__source_live_t live;
    mw__source_replay_t rp;
    /* The job's function ids -> this viewer's (docs/function-table.md): identity unless the
     * collector was built with another table; to_local NULL before the first job. */
    mw_fnmap_t fnmap;
};

/* source.c: the common part. */
void mw__source_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
uint64_t mw__source_clock_ns(void);
/* A new source of this kind, named `what` for the status; NULL when out of memory. */
mw_source_t *mw__source_new(const char *what, const mw__source_ops_t *ops);
/* Notes the last event for the status ("kind: detail"). */
void mw__source_set_event(mw_source_t *s, const char *kind, const char *detail);
/* Notes the job's state for the status: ended when it is no longer "running". */
void mw__source_job_state(mw_source_t *s, const Mpiwatch__JobInfo *job);
/* The windows the source can serve; given to the model once it may have them. */
void mw__source_extent(mw_source_t *s, mw_model_t *m, uint64_t oldest, uint64_t newest);
/* Adds the calls of one of the requested rank's samples. */
void mw__source_rank_sample(mw__source_rank_t *rk, const Mpiwatch__JobInfo *job,
                            const Mpiwatch__Envelope *env);
/* Gives a window to the model; before the job is known it waits in s->pending. Returns 1 when
 * the model took it. */
int mw__source_add_window(mw_source_t *s, mw_model_t *m, Mpiwatch__Window *w);
/* Hands the model a job description (owned from now on); returns the windows added. */
int mw__source_set_job(mw_source_t *s, mw_model_t *m, Mpiwatch__JobInfo *job);
/* The job's function ids in a step, a reach-back trace or a history sample, made this
 * viewer's (the windows are translated by mw__source_add_window). */
void mw__source_fn_step(mw_source_t *s, Mpiwatch__Step *st);
void mw__source_fn_trace(mw_source_t *s, Mpiwatch__RankTrace *rt);
void mw__source_fn_sample(mw_source_t *s, Mpiwatch__Envelope *env);

#endif
