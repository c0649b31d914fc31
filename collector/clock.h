/* clock.h: the collector's time: the two clocks of an event, passed in.
 *
 * Only the outer loops (main.c, server.c, replay.c) read the clocks (mw__clock_now, clock.c);
 * the core takes the time of each event as an argument (docs/collector.md). */
#ifndef MW_COLLECTOR_CLOCK_H
#define MW_COLLECTOR_CLOCK_H

#include <stdint.h>

/* The collector's two clocks, read once per batch of messages: monotonic for every timer
 * (lateness, silence, refresh), real time for checking rank timestamps. */
typedef struct {
    uint64_t mono_ns;
    uint64_t real_ns;
} mw_clock_t;

/* Reads both clocks (clock.c): called by the outer loops only, which hand it to the core. */
void mw__clock_now(mw_clock_t *now);
/* A clock source handed to the core (mw__clock_now, or a test's fake clock). */
typedef void (*mw_clock_fn)(mw_clock_t *now);

#define MW_NS_PER_MS 1000000ull
#define MW_NS_PER_S 1000000000ull
#define MW_TIMESTAMP_TOLERANCE_NS (86400ull * MW_NS_PER_S) /* timestamps within a day of now */
/* A sample's window may start at most this long after the collector's real-time clock (reason
 * "ahead"): ranks send a window once it has ended, so only a clock skew between the job's global
 * clock and the collector's puts it ahead. A window far in the future would otherwise become
 * the newest the collector knows, from which it places the K of mpiwatch.window and captures,
 * beyond what the ranks accept (docs/collector.md "The window grid"). */
#define MW_SAMPLE_MAX_LEAD_NS (5ull * MW_NS_PER_S)
#define MW_MAX_WINDOW_NS (60ull * MW_NS_PER_S)
/* MW_MAX_RANKS, MW_MAX_STRING, MW_MAX_PUS, MW_MAX_TOPO_OBJECTS, MW_MAX_TOPO_DEPTH and the
 * job-wide caps MW_JOB_MAX_* are in proto/mw_limits.h: the readers of a job description check
 * the same caps (docs/collector.md, "Caps"). */
#include "mw_limits.h"
/* A captured call must end inside its sample's window, give or take this (the ticks to ns
 * rounding of the rank's clock is a few ns), unless it is one of the sample's late calls. */
#define MW_CAPTURE_TOLERANCE_NS 1000ull

#endif
