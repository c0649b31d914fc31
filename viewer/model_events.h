/* model_events.h: the job's events (rule firings, steering messages...) as the viewer keeps,
 * parses, places on the time axis and words them. No SDL, no GL.
 */
#ifndef MW_VIEWER_MODEL_EVENTS_H
#define MW_VIEWER_MODEL_EVENTS_H

#include "model_store.h"

/* The job's events (JobEvent of the feed and of recordings): rule firings, steering messages,
 * the ends of rule programs, job start and end... The model keeps the last MW_EVENTS_MAX in
 * arrival order with counts of all; a different job clears them. Each is parsed once when it
 * arrives: a rule firing's detail "rule=NAME metric=M scope=S value=V window=K rank=R node=N"
 * gives its rule, value, rank and window; a steering message's detail is "key=value [ranks
 * ...]". Details come from the network: they are cut to MW_EVENT_DETAIL - 1 bytes, and a field
 * that is missing or not a number is simply not known. */
#define MW_EVENTS_MAX 256
#define MW_EVENT_DETAIL 256
#define MW_EVENT_NAME 48

typedef enum {
    MW_EVENT_OTHER,
    MW_EVENT_RULE,        /* "rule": a rule fired */
    MW_EVENT_STEER,       /* "steer": a steering message was published */
    MW_EVENT_ACTION_EXIT, /* "action_exit": a rule's program ended */
    MW_EVENT_KINDS
} mw_event_kind_t;

typedef struct {
    mw_event_kind_t kind;
    char kind_name[24];           /* as received, cut */
    char detail[MW_EVENT_DETAIL]; /* as received, cut, control characters replaced by '?' */
    uint64_t real_ns;             /* collector wall clock, 0 unknown */
    uint64_t seq;                 /* arrival order, from 1 */
    int has_window;               /* window=K was in the detail */
    uint64_t window;
    char rule[MW_EVENT_NAME]; /* rule and action_exit: rule=NAME; "" unknown */
    int has_value;
    double value;         /* rule: value=V */
    int64_t rank;         /* rule: rank=R; -1 none or unknown */
    uint64_t steer_after; /* steer: seq of the rule firing it directly followed, 0 */
} mw_event_t;

/* Counts of the events the model has seen (kept or not). */
typedef struct {
    uint64_t total;
    uint64_t by_kind[MW_EVENT_KINDS];
    uint64_t dropped; /* older events no longer kept */
} mw_event_counts_t;

/* Parses one event into *e (seq 0, steer_after 0). Pure: used by mw_model_add_event. */
void mw_event_parse(mw_event_t *e, const char *kind, const char *detail, uint64_t real_ns);
/* Adds an event (copied). */
void mw_model_add_event(mw_model_t *m, const char *kind, const char *detail, uint64_t real_ns);
size_t mw_model_event_count(const mw_model_t *m);
/* The i-th kept event, oldest first; NULL past the end. */
const mw_event_t *mw_model_event_at(const mw_model_t *m, size_t i);
void mw_model_event_counts(const mw_model_t *m, mw_event_counts_t *out);
/* Where an event goes on the time axis, in seconds: a rule firing at the end of its window
 * (when the window closed and the rule saw it), anything else at its wall-clock time (the
 * windows' global clock is the wall clock of rank 0). Returns 0, or -1 when it cannot be placed
 * (no job grid yet, no window and no time). The window it falls in goes to *window (may be
 * NULL). */
int mw_model_event_time(const mw_model_t *m, const mw_event_t *e, double *t, uint64_t *window);
/* One line for the events list: "w 37  rule imbalance 1.82", "w 38  steer rebalance=1 ranks
 * 1", "w 37  rule imbalance 1.82 → steer rebalance=1" (with_steer: the steering message that
 * followed it, or NULL), "job_end: complete". Windows are counted from the run's first (the
 * time axis' origin); without a model (NULL) or a place, the line has no window. */
void mw_event_text(const mw_model_t *m, const mw_event_t *e, const mw_event_t *with_steer,
                   char *buf, size_t len);

#endif
