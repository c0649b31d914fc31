/* live.c: the live terminal view on stderr (never stdout, which belongs to the user).
 *
 * DESIGN: on a terminal, a small block is redrawn in place twice a second (cursor up over the
 * previous block, clear to the end of the screen); anywhere else (a log file, a pipe) one
 * compact line is printed per second while a job runs, and nothing while idle so an idle
 * collector does not fill its log. "Recent" function time is an exponentially decaying sum
 * over closed windows with a 3 s time constant: it follows the last few seconds without
 * keeping a history, costs one multiply per function per window, and does not depend on the
 * window length. The text is built by mw_live_format() so it can be tested without a tty.
 */
#include "collector.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#define LIVE_TTY_PERIOD_NS (500 * MW_NS_PER_MS)
#define LIVE_LINE_PERIOD_NS (1000 * MW_NS_PER_MS)
#define LIVE_DECAY_NS 3e9 /* time constant of the "recent" function times */
#define LIVE_TOP 5

void mw_live_init(mw_live_t *live, FILE *out, int enabled)
{
    memset(live, 0, sizeof *live);
    live->out = out;
    live->enabled = enabled;
    live->tty = out && isatty(fileno(out));
}

void mw_live_window(mw_live_t *live, const mw_window_t *w)
{
    if (!live->enabled)
        return;
    double keep = exp(-(double)w->window_ns / LIVE_DECAY_NS);
    for (unsigned fn = 1; fn < MW_FN_COUNT; fn++)
        live->recent_ns[fn] *= keep;
    for (uint32_t i = 0; i < w->n_fn_used; i++)
        live->recent_ns[w->fn_used[i]] += (double)w->fn[w->fn_used[i]].s.total_ns;
    /* Occupancy is the honest share of the window when the ranks report it. */
    live->last_fraction = w->occ_total_ns ? w->occ_fraction : w->mpi_fraction;
    live->last_reporting = w->ranks_reporting;
    live->have_window = 1;
}

/* Appends to buf at *pos, never past len; keeps *pos meaningful when truncating. */
static void live_put(char *buf, size_t len, size_t *pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void live_put(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
    if (*pos >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *pos, len - *pos, fmt, ap);
    va_end(ap);
    if (n > 0)
        *pos = *pos + (size_t)n < len ? *pos + (size_t)n : len - 1;
}

size_t mw_live_format(const mw_live_t *live, const mw_collector_t *c, int block, char *buf,
                      size_t len)
{
    const mw_job_t *job = &c->job;
    size_t pos = 0;
    if (len == 0)
        return 0;
    buf[0] = '\0';

    uint64_t rejected = 0;
    for (int r = 1; r < MW_REJECT_COUNT; r++)
        rejected += c->stats.rejected[r];

    if (!job->active) {
        live_put(buf, len, &pos, "mpiwatch: waiting for ranks on %s (rejected %llu)\n",
                 c->opt && c->opt->n_listen ? c->opt->listen[0]
                 : c->opt && c->opt->replay ? c->opt->replay
                                            : "?",
                 (unsigned long long)rejected);
        return pos;
    }

    /* Top functions by recent time. */
    unsigned top[LIVE_TOP];
    unsigned ntop = 0;
    double total = 0;
    for (unsigned fn = 1; fn < MW_FN_COUNT; fn++) {
        double v = live->recent_ns[fn];
        if (v <= 0)
            continue;
        total += v;
        unsigned i = ntop < LIVE_TOP ? ntop++ : LIVE_TOP;
        if (i == LIVE_TOP) {
            if (v <= live->recent_ns[top[LIVE_TOP - 1]])
                continue;
            i = LIVE_TOP - 1;
        }
        while (i > 0 && v > live->recent_ns[top[i - 1]]) {
            top[i] = top[i - 1];
            i--;
        }
        top[i] = fn;
    }

    const char *state = job->ended == MW_END_NONE ? "running" : "ended";
    const char *sep = block ? "\n" : "  ";
    live_put(buf, len, &pos, "mpiwatch: job %s (%s, %s)  ranks %u/%u  windows %llu (%llu partial)",
             job->job, job->program[0] ? job->program : "?", state,
             live->have_window ? live->last_reporting : 0, job->size,
             (unsigned long long)job->windows, (unsigned long long)job->partial_windows);
    if (live->have_window)
        live_put(buf, len, &pos, "  MPI %.1f%%", 100.0 * live->last_fraction);
    live_put(buf, len, &pos, "%s", sep);
    for (unsigned i = 0; i < ntop; i++) {
        double share = total > 0 ? live->recent_ns[top[i]] / total : 0;
        if (block) {
            char bar[21];
            int n = (int)lround(share * 20);
            memset(bar, '#', (size_t)n);
            bar[n] = '\0';
            live_put(buf, len, &pos, "  %-24s %5.1f%%  %s\n", mw_fn_name(top[i]), 100 * share, bar);
        } else {
            live_put(buf, len, &pos, "%s %.0f%%  ", mw_fn_name(top[i]), 100 * share);
        }
    }
    live_put(buf, len, &pos, "%sdropped %llu  late %llu  rejected %llu", block ? "  " : "",
             (unsigned long long)mw_job_dropped(job), (unsigned long long)job->late,
             (unsigned long long)rejected);
    if (c->record)
        live_put(buf, len, &pos, "  recording %s %.1f MB%s", mw__record_path(c->record),
                 (double)mw__record_bytes(c->record) / 1e6,
                 mw__record_failed(c->record) ? " (stopped: write error)" : "");
    live_put(buf, len, &pos, "\n");
    return pos;
}

uint64_t mw_live_tick(mw_live_t *live, const mw_collector_t *c, uint64_t now_ns)
{
    if (!live->enabled)
        return UINT64_MAX;
    if (now_ns < live->next_ns)
        return live->next_ns;
    live->next_ns = now_ns + (live->tty ? LIVE_TTY_PERIOD_NS : LIVE_LINE_PERIOD_NS);

    int running = c->job.active && c->job.ended == MW_END_NONE;
    if (!live->tty && !running)
        return live->next_ns;

    char text[2048];
    size_t n = mw_live_format(live, c, live->tty, text, sizeof text);
    if (live->tty) {
        /* Redraw over our own block only: if anything was logged since, start below it. */
        if (live->lines_drawn > 0 && live->log_mark == mw__log_lines)
            fprintf(live->out, "\033[%dF", live->lines_drawn);
        fputs("\033[J", live->out);
        live->lines_drawn = 0;
        for (size_t i = 0; i < n; i++)
            live->lines_drawn += text[i] == '\n';
        live->log_mark = mw__log_lines;
    }
    fwrite(text, 1, n, live->out);
    fflush(live->out);
    return live->next_ns;
}

void mw_live_release(mw_live_t *live)
{
    live->lines_drawn = 0;
}
