/* log.h: the collector's log (log.c): levels, a macro that costs one
 * comparison below its level, and the sink the lines go to (stderr unless set otherwise). */
#ifndef MW_COLLECTOR_LOG_H
#define MW_COLLECTOR_LOG_H

#include <stdarg.h>
#include <stdio.h>

typedef enum { MW_LOG_ERROR, MW_LOG_WARN, MW_LOG_INFO, MW_LOG_DEBUG } mw_log_level_t;

extern int mw__log_level;
extern unsigned long mw__log_lines; /* lines logged so far: the live view redraws below them */

/* Where the lines go: `out` (NULL: stderr, the default). The exporter keeps stderr but sets
 * the level to errors only; a test may take the lines into a memory stream. */
void mw__log_sink(FILE *out);

void mw__log(mw_log_level_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Costs one comparison when the level is filtered out. */
#define MW_LOG(level, ...)                                                                         \
    do {                                                                                           \
        if ((int)(level) <= mw__log_level)                                                         \
            mw__log((level), __VA_ARGS__);                                                         \
    } while (0)

#define MW_TRY(expr)                                                                               \
    do {                                                                                           \
        if ((expr) < 0)                                                                            \
            return -1;                                                                             \
    } while (0)

#endif
