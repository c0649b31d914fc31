/* export_out.h: where mpiwatch-export writes (docs/export.md), one way for every format.
 *
 * A regular file (or a new one) is written through mw_file.h's atomic file (a fresh temporary
 * file beside the target, fsync, rename), so that a failed export never leaves a file that
 * looks complete, and a symbolic link at the target is replaced rather than written through.
 * Only an output that is not a file is written in place: stdout ("-"), /dev/null, a FIFO, or a
 * link to one of those such as /dev/stdout (stat follows it).
 */
#ifndef MW_EXPORT_OUT_H
#define MW_EXPORT_OUT_H

#include <stdio.h>

#include "mw_file.h"

typedef struct {
    FILE *f;        /* where to write */
    mw_afile_t *af; /* the atomic file, NULL when written in place */
    const char *path;
    int to_stdout;
} mw__xout_t;

/* Opens the output `path` ("-": stdout). On failure prints why and returns -1. */
int mw__xout_open(mw__xout_t *o, const char *path);

/* Ends the output: when rc is 0 it is completed (flushed; a file synced and renamed into
 * place), else a file is dropped and the target left as it was. Prints what failed. Returns
 * rc, or 1 when the output could not be written. */
int mw__xout_close(mw__xout_t *o, int rc);

#endif
