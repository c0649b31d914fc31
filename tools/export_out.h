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
#include "mw_recording.h"

typedef struct {
    FILE *f;        /* where to write */
    mw_afile_t *af; /* the atomic file, NULL when written in place */
    const char *path;
    int to_stdout;
} mw__xout_t;

/* Opens the output `path` ("-": stdout). On failure prints why and returns -1. */
int mw__xout_open(mw__xout_t *o, const char *path);

/* Opens the recording `input` into *r and the output `path` into *o, the beginning of every
 * export that reads records one by one. Returns 0; 2 when the recording cannot be read, 1 when
 * the output cannot be opened (the reader closed again), after printing why: the exit status. */
int mw__xout_open_reader(const char *input, mw_rec_reader_t **r, mw__xout_t *o, const char *path);

/* Ends the output: when rc is 0 it is completed (flushed; a file synced and renamed into
 * place), else a file is dropped and the target left as it was. Prints what failed. Returns
 * rc, or 1 when the output could not be written. */
int mw__xout_close(mw__xout_t *o, int rc);

/* The windows an export read from the recording's coarse tier (docs/recording.md "Tiers"):
 * lean copies, whose per-rank content was dropped with the samples. Every reading loop notes
 * each record and reports at the end, so that the output's reader knows what it lacks. */
typedef struct {
    uint64_t n, first, last;
} mw__xlean_t;
void mw__xlean_note(mw__xlean_t *l, const mw_rec_reader_t *r, const Mpiwatch__Record *rec);
/* One line on stderr when windows came from the coarse tier; nothing otherwise. */
void mw__xlean_report(const mw__xlean_t *l, const char *input);

#endif
