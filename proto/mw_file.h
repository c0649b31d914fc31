/* mw_file.h: writing an output file so that it is either wholly the new content or untouched
 * (docs/security.md, "Files mpiwatch writes").
 *
 * Every file mpiwatch writes as a whole (the collector's summary, stats and report, the
 * exports, the load generator's totals, the viewer's snapshots) goes through these functions:
 * a temporary file is created with mkstemp in the target's own directory (a fresh name, never
 * an existing file or a symbolic link someone planted), written, flushed to disk with fsync,
 * renamed over the target, and the directory is synced so that the rename itself survives a
 * crash. The rename replaces the directory entry: when the target is a symbolic link, the link
 * is replaced by the new file and whatever it pointed to is left untouched. Every function
 * returns 0 (or a handle), or -1 (NULL) with a message naming the file in err; nothing here
 * prints or exits.
 */
#ifndef MW_FILE_H
#define MW_FILE_H

#include <stddef.h>
#include <stdio.h>

typedef struct mw_afile mw_afile_t;

/* Starts writing `path`: creates the temporary file beside it (mode 0666 less the umask, as
 * fopen would). Returns the handle, or NULL with err. */
mw_afile_t *mw_afile_open(const char *path, char *err, size_t errlen);
/* The stream to write the content to (owned by the handle: do not fclose it). */
FILE *mw_afile_stream(mw_afile_t *a);
/* Finishes: flush, fsync, close, rename over the target, fsync the directory. The handle is
 * freed in every case; on an error the temporary file is removed and the target is unchanged.
 * Returns 0, or -1 with err. */
int mw_afile_commit(mw_afile_t *a, char *err, size_t errlen);
/* The same without either fsync: still atomic (a reader never sees half a file, a symbolic
 * link is replaced), not yet durable. For a set of many files that one file completes (the VTK
 * frames and their .pvd collection): commit the members with this, call mw_file_sync_fs, then
 * commit the last one with mw_afile_commit. One sync instead of one per file (an export of
 * 201 VTK frames on a virtual disk: 2.6 s with a sync per file, 0.6 s with one). */
int mw_afile_commit_nosync(mw_afile_t *a, char *err, size_t errlen);
/* Makes every file written so far on the file system holding `path` durable (syncfs). */
int mw_file_sync_fs(const char *path, char *err, size_t errlen);
/* Gives up: the temporary file is removed, the target is unchanged, the handle freed. NULL is
 * allowed. */
void mw_afile_abort(mw_afile_t *a);

/* The whole of `data` (len bytes) to `path` through the functions above. */
int mw_file_write_atomic(const char *path, const void *data, size_t len, char *err, size_t errlen);

#endif
