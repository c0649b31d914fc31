/* live.c: the live terminal view on stderr (never stdout, which belongs to the user).
 *
 * DESIGN: on a terminal, a small block is redrawn in place twice a second (cursor up over the
 * previous block, clear to the end of the screen); anywhere else (a log file, a pipe) one
 * compact line is printed per second while a job runs, and nothing while idle so an idle
 * collector does not fill its log. "Recent" function time is an exponentially decaying sum
 * over closed windows with a 3 s time constant: it follows the last few seconds without
 * keeping a history, costs one multiply per function per window, and does not depend on the
 * window length. The text is built by mw__live_format() so it can be tested without a tty.
 *
 * Steering shows in the view: every rule firing, steering message and end of a rule's program
 * (job events of kinds rule, steer, action_exit, and capture*) becomes one short line, e.g.
 * "w 37  rule imbalance fired: imbalance 3.51 (rank 0)" and "w 37  steer rebalance=1 ranks
 * 0-3", numbered by the job's windows (the first closed window is w 0). The block shows the last
 * MW_LIVE_EVENTS of them; the one-line-per-second mode prints each once, when it happens, on a
 * line of its own, so a log keeps every one. A rule's steering message follows its firing as
 * its own line: the view does not guess which event caused which.
 */
#include "collector.h"
#include "live.h"
#include "record_file.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LIVE_TTY_PERIOD_NS (500 * MW_NS_PER_MS)
#define LIVE_LINE_PERIOD_NS (1000 * MW_NS_PER_MS)
#define LIVE_DECAY_NS 3e9 /* time constant of the "recent" function times */
#define LIVE_TOP 5

void mw__live_init(mw_live_t *live, FILE *out, int enabled)
{
    memset(live, 0, sizeof *live);
    live->out = out;
    live->enabled = enabled;
    live->tty = out && isatty(fileno(out));
}

void mw__live_window(mw_live_t *live, const mw_window_t *w)
{
    if (!live->enabled)
        return;
    double keep = exp(-(double)w->window_ns / LIVE_DECAY_NS);
    for (unsigned fn = 1; fn < MW_FN_SPACE; fn++)
        live->recent_ns[fn] *= keep;
    for (uint32_t i = 0; i < w->n_fn_used; i++)
        live->recent_ns[w->fn_used[i]] += (double)w->fn[w->fn_used[i]].s.total_ns;
    /* Occupancy is the honest share of the window when the ranks report it. */
    live->last_fraction = w->occ_total_ns ? w->occ_fraction : w->mpi_fraction;
    live->last_reporting = w->ranks_reporting;
    live->have_window = 1;
    if (!live->have_first) {
        live->first_index = w->index;
        live->have_first = 1;
    }
    live->last_index = w->index;
}

/* The value of `key=` in an event's detail ("rule=x metric=y ..."), up to the next blank, into
 * out; "" when absent. */
static void live_field(const char *detail, const char *key, char *out, size_t len)
{
    size_t klen = strlen(key);
    out[0] = '\0';
    for (const char *p = detail; p;) {
        if (strncmp(p, key, klen) == 0 && p[klen] == '=') {
            p += klen + 1;
            size_t n = strcspn(p, " ");
            snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), p);
            return;
        }
        p = strchr(p, ' ');
        if (p)
            p++;
    }
}

/* A window index as the view numbers it: from the job's first closed window. */
static long long live_window_number(const mw_live_t *live, uint64_t index)
{
    if (!live->have_first)
        return (long long)index;
    return index >= live->first_index ? (long long)(index - live->first_index)
                                      : -(long long)(live->first_index - index);
}

void mw__live_event(mw_live_t *live, const char *kind, const char *detail)
{
    if (!live->enabled || !kind)
        return;
    if (!detail)
        detail = "";
    if (strcmp(kind, "job_start") == 0) {
        live->n_events = 0;
        live->have_first = 0;
        return;
    }
    char line[MW_LIVE_EVENT_LEN];
    long long wnum = live_window_number(live, live->last_index);
    if (strcmp(kind, "rule") == 0) {
        char rule[64], metric[40], value[32], window[24], rank[16];
        live_field(detail, "rule", rule, sizeof rule);
        live_field(detail, "metric", metric, sizeof metric);
        live_field(detail, "value", value, sizeof value);
        live_field(detail, "window", window, sizeof window);
        live_field(detail, "rank", rank, sizeof rank);
        char *end;
        unsigned long long k = strtoull(window, &end, 10);
        if (window[0] && !*end)
            wnum = live_window_number(live, k);
        double v = strtod(value, &end);
        char shown[32];
        if (value[0] && !*end)
            snprintf(shown, sizeof shown, "%.3g", v);
        else
            snprintf(shown, sizeof shown, "%s", value[0] ? value : "?");
        snprintf(line, sizeof line, "w %lld  rule %.40s fired: %.30s %.16s%s%.12s%s", wnum,
                 rule[0] ? rule : "?", metric[0] ? metric : "?", shown,
                 rank[0] && strcmp(rank, "-1") != 0 ? " (rank " : "",
                 rank[0] && strcmp(rank, "-1") != 0 ? rank : "",
                 rank[0] && strcmp(rank, "-1") != 0 ? ")" : "");
    } else if (strcmp(kind, "steer") == 0) {
        snprintf(line, sizeof line, "w %lld  steer %.130s", wnum, detail);
    } else if (strcmp(kind, "action_exit") == 0) {
        char rule[64];
        live_field(detail, "rule", rule, sizeof rule);
        const char *rest = strncmp(detail, "rule=", 5) == 0 && strchr(detail, ' ')
                               ? strchr(detail, ' ') + 1
                               : detail;
        snprintf(line, sizeof line, "w %lld  rule %.40s: program ended, %.90s", wnum,
                 rule[0] ? rule : "?", rest);
    } else if (strncmp(kind, "capture", 7) == 0) {
        snprintf(line, sizeof line, "w %lld  %.20s %.120s", wnum, kind, detail);
    } else {
        return; /* job start and end, dead ranks: the rest of the view says it */
    }
    memcpy(live->events[live->n_events % MW_LIVE_EVENTS], line, sizeof line);
    live->n_events++;
    if (!live->tty && live->out) {
        fprintf(live->out, "mpiwatch: %s\n", line);
        fflush(live->out);
    }
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

size_t mw__live_format(const mw_live_t *live, const mw_collector_t *c, int block, char *buf,
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
    for (int r = 0; r < MW_AUTH_COUNT; r++)
        rejected += c->stats.auth_refused[r]; /* connections refused by CURVE (auth.c) */

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
    for (unsigned fn = 1; fn < MW_FN_SPACE; fn++) {
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
    if (block && live->n_events) {
        unsigned n = live->n_events < MW_LIVE_EVENTS ? live->n_events : MW_LIVE_EVENTS;
        for (unsigned i = live->n_events - n; i < live->n_events; i++)
            live_put(buf, len, &pos, "  %s\n", live->events[i % MW_LIVE_EVENTS]);
    }
    live_put(buf, len, &pos, "%sdropped %llu  late %llu  rejected %llu", block ? "  " : "",
             (unsigned long long)mw__job_dropped(job), (unsigned long long)job->late,
             (unsigned long long)rejected);
    if (c->record)
        live_put(buf, len, &pos, "  recording %s %.1f MB%s", mw__record_path(c->record),
                 (double)mw__record_bytes(c->record) / 1e6,
                 mw__record_failed(c->record) ? " (stopped: write error)" : "");
    live_put(buf, len, &pos, "\n");
    return pos;
}

uint64_t mw__live_tick(mw_live_t *live, const mw_collector_t *c, uint64_t now_ns)
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
    size_t n = mw__live_format(live, c, live->tty, text, sizeof text);
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

void mw__live_release(mw_live_t *live)
{
    live->lines_drawn = 0;
}
