/* mw_progress.c: the progress line of long recording reads (mw_progress.h). */
#include "mw_progress.h"

#include <inttypes.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define PROGRESS_EVERY_NS 250000000ull /* at most four updates a second */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void mw_progress_init(mw_progress_t *p, const char *what, int mode, uint64_t total_bytes)
{
    p->what = what;
    p->tty = isatty(STDERR_FILENO);
    p->on = mode < 0 ? p->tty : mode;
    p->total = total_bytes;
    p->next_ns = now_ns() + PROGRESS_EVERY_NS; /* a read shorter than that shows nothing */
    p->shown = 0;
}

static void progress_line(mw_progress_t *p, uint64_t done, uint64_t windows)
{
    const double mb = 1024.0 * 1024.0;
    if (done > p->total)
        done = p->total;
    if (p->total)
        fprintf(stderr, "%s%s: %3u%% (%" PRIu64 " windows, %.1f/%.1f MB)%s", p->tty ? "\r" : "",
                p->what, (unsigned)(100.0 * (double)done / (double)p->total), windows,
                (double)done / mb, (double)p->total / mb, p->tty ? "\033[K" : "\n");
    else
        fprintf(stderr, "%s%s: %" PRIu64 " windows%s", p->tty ? "\r" : "", p->what, windows,
                p->tty ? "\033[K" : "\n");
    fflush(stderr);
    p->shown = 1;
}

void mw_progress_update(mw_progress_t *p, uint64_t done_bytes, uint64_t windows)
{
    if (!p->on)
        return;
    uint64_t t = now_ns();
    if (t < p->next_ns)
        return;
    p->next_ns = t + PROGRESS_EVERY_NS;
    progress_line(p, done_bytes, windows);
}

void mw_progress_end(mw_progress_t *p, uint64_t windows)
{
    if (!p->on)
        return;
    if (p->tty) {
        if (p->shown) {
            fputs("\r\033[K", stderr);
            fflush(stderr);
        }
        return;
    }
    progress_line(p, p->total, windows);
}
