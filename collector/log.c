/* log.c: the collector's log lines, on stderr or the sink set by mw__log_sink().
 *
 * DESIGN: one function behind the MW_LOG macro, which filters by level before any argument is
 * formatted. Each line is counted so that the live view, which redraws a block in place on a
 * terminal, knows not to move the cursor up over a line logged since its last refresh.
 */
#include "log.h"
#include "collector.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

int mw__log_level = MW_LOG_INFO;
unsigned long mw__log_lines;
static FILE *log_out; /* NULL: stderr (not a constant, so it cannot be the initializer) */

void mw__log_sink(FILE *out)
{
    log_out = out;
}

void mw_collector_set_log(FILE *sink, mw_log_level_t level)
{
    mw__log_sink(sink);
    mw__log_level = (int)level;
}

void mw__log(mw_log_level_t level, const char *fmt, ...)
{
    static const char *const names[] = {"error", "warning", "info", "debug"};
    char stamp[32] = "";
    time_t t = time(NULL);
    struct tm tm;
    if (localtime_r(&t, &tm))
        strftime(stamp, sizeof stamp, "%H:%M:%S", &tm);

    FILE *out = log_out ? log_out : stderr;
    va_list ap;
    va_start(ap, fmt);
    fprintf(out, "mpiwatch-collector %s %s: ", stamp, names[level]);
    vfprintf(out, fmt, ap);
    fputc('\n', out);
    va_end(ap);
    mw__log_lines++;
}
