/* rules.h: threshold rules over closed windows and the actions they fire (rules.c).
 *
 * A rule set is loaded from an INI file (--rules FILE, syntax in docs/steering.md), evaluated
 * on every closed window and reloaded on SIGHUP. Rules fire log lines, programs (exec) and
 * steering messages (mw__steer_send); every firing is a job event "rule", every program's end
 * an event "action_exit".
 */
#ifndef MW_COLLECTOR_RULES_H
#define MW_COLLECTOR_RULES_H

#include <stddef.h>
#include <stdint.h>

#include "merge.h"

struct mw_collector;
typedef struct mw_rules mw_rules_t;

#define MW_RULES_MAX_CHILDREN 16    /* programs run by exec actions at once, all rules */
#define MW_RULES_REAP_NS 100000000u /* how often running programs are reaped (100 ms) */
#define MW_RULES_KILL_GRACE_NS (2ull * 1000000000ull) /* SIGTERM -> SIGKILL, to the group */
/* action = capture: the first captured window starts at least this long after the firing
 * (collector real time), time for the message to reach every rank (docs/steering.md). */
#define MW_RULES_CAPTURE_LEAD_NS 200000000ull

/* Reads a rule file. Returns the set, or NULL with "FILE:LINE: message" (or "FILE: message")
 * in err. */
mw_rules_t *mw__rules_load(const char *path, char *err, size_t errlen);
/* Frees a set. Actions still running are stopped first: SIGTERM to each one's process group,
 * SIGKILL MW_RULES_KILL_GRACE_NS later to what remains, leaders reaped (at most the grace and
 * one second; the collector calls this as it exits). NULL is ignored. */
void mw__rules_free(mw_rules_t *rs);
/* Evaluates every rule on a closed window and fires those due. */
void mw__rules_window(mw_rules_t *rs, struct mw_collector *c, const mw_window_t *w);
/* Evaluates the `over = step` rules on a time step that just closed (collector/steps.c). */
struct Mpiwatch__Step;
void mw__rules_step(mw_rules_t *rs, struct mw_collector *c, const struct Mpiwatch__Step *st);
/* Evaluates the lateness rules (lateness_max, diff_lateness_max, lateness_share) on the window
 * summaries of a lateness batch (lateness.c), which arrives after its windows. */
struct Mpiwatch__Lateness;
void mw__rules_lateness(mw_rules_t *rs, struct mw_collector *c, const struct Mpiwatch__Lateness *b);
/* Reaps finished programs and kills those past their timeout. */
void mw__rules_tick(mw_rules_t *rs, struct mw_collector *c, uint64_t now_ns);
/* Monotonic time at which mw__rules_tick() has work (UINT64_MAX: none). */
uint64_t mw__rules_next_ns(const mw_rules_t *rs, uint64_t now_ns);
/* Rereads c->opt->rules (SIGHUP). On an error the old set stays and the reason is logged.
 * Rules that keep their name keep their state (persistence count, cooldown). Returns 0 or -1. */
int mw__rules_reload(struct mw_collector *c);

/* action = capture: the first window K of "N@K" for a rule firing on window `index` at
 * collector real time now_real_ns: the window after the one that holds now +
 * MW_RULES_CAPTURE_LEAD_NS, and never one before index + 1. */
uint64_t mw__rules_capture_first(uint64_t index, uint64_t window_ns, uint64_t now_real_ns);

/* Parses a rule's capture range "FROM..TO" (windows relative to the firing, e.g. "-5..+3"),
 * strictly. Returns 0, or -1. */
int mw__rules_parse_capture(const char *v, int64_t *from, int64_t *to);

/* For tests and the log: rules in the set, times a rule fired (0 for an unknown name),
 * programs running. */
unsigned mw__rules_count(const mw_rules_t *rs);
uint64_t mw__rules_fired(const mw_rules_t *rs, const char *name);
unsigned mw__rules_running(const mw_rules_t *rs);
/* The detail of the last "action_exit" event ("rule=R pid=P status=exit 0"), "" before one. */
const char *mw__rules_last_exit(const mw_rules_t *rs);

#endif
