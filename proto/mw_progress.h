/* mw_progress.h: a progress line on stderr while a long recording is read (mpiwatch-export,
 * mpiwatch-collector --replay), as users of long batch tools expect on a terminal.
 *
 * DESIGN: shown by default only when stderr is a terminal (a log file or a test's captured
 * stderr never gets it), forced on or off by the caller's --progress / --no-progress. The line
 * says how far through the file the reader is (bytes: known without a pass over the file) and
 * how many windows it has handled: "export: 45% (1200 windows, 230/512 MB)". It is written at
 * most four times a second, whatever the caller's update rate, so that it costs one clock read
 * per update and nothing else. On a terminal it is one line rewritten in place and erased at
 * the end; elsewhere (forced on) each update is a line of its own, the last one at 100%.
 */
#ifndef MW_PROGRESS_H
#define MW_PROGRESS_H

#include <stdint.h>

typedef struct {
    const char *what; /* "export", "replay" */
    int on, tty;      /* showing at all; stderr is a terminal */
    uint64_t total;   /* bytes of the file (0: unknown) */
    uint64_t next_ns; /* monotonic time of the next allowed update */
    int shown;        /* a line was written (erased at the end on a terminal) */
} mw_progress_t;

/* mode: 1 always (--progress), 0 never (--no-progress), -1 when stderr is a terminal. */
void mw_progress_init(mw_progress_t *p, const char *what, int mode, uint64_t total_bytes);
/* `done` bytes of the file read, `windows` handled; rate-limited. */
void mw_progress_update(mw_progress_t *p, uint64_t done_bytes, uint64_t windows);
/* The end: erases the line on a terminal, or writes the final 100% line elsewhere. */
void mw_progress_end(mw_progress_t *p, uint64_t windows);

#endif
