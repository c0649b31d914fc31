/* clock.c: the one place the collector reads the system clocks.
 *
 * DESIGN: the core never reads a clock (docs/collector.md): each event brings its time
 * (mw_collector_frame, _tick, _finish), and the few places that need the time at the moment
 * they act, not the event's (a steering message's lead, a budget of work, a rate limit), ask
 * the clock the outer loop handed over (mw_collector_t.clock, the feed's clock), which is this
 * function in the executable and nothing (the event's time) in the tests and the exporter.
 */
#include "clock.h"

#include <time.h>

void mw__clock_now(mw_clock_t *now)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    now->mono_ns = (uint64_t)ts.tv_sec * MW_NS_PER_S + (uint64_t)ts.tv_nsec;
    clock_gettime(CLOCK_REALTIME, &ts);
    now->real_ns = (uint64_t)ts.tv_sec * MW_NS_PER_S + (uint64_t)ts.tv_nsec;
}
