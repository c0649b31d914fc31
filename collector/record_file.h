/* record_file.h: the recording writer (record_file.c; the file format is in
 * docs/recording.md and proto/mw_recording.h). */
#ifndef MW_COLLECTOR_RECORD_FILE_H
#define MW_COLLECTOR_RECORD_FILE_H

#include <stddef.h>
#include <stdint.h>
#include "clock.h"
#include "merge.h"
#include "options.h"

typedef struct mw_record mw_record_t;

/* Starts a recording into `path` (created or truncated) at time `now`; the first frame
 * describes the collector (`opt` gives the settings replay needs). Returns NULL with a logged
 * message. */
mw_record_t *mw__record_open(const char *path, const mw_collector_options_t *opt,
                             const mw_clock_t *now);
/* Flushes, writes the last index and closes; NULL is ignored. */
void mw__record_close(mw_record_t *r);
/* Each of these appends one frame. A write error (a full disk) is logged once, counted and
 * stops the recording; ingest goes on. */
void mw__record_frame(mw_record_t *r, const mw_clock_t *now, const void *data, size_t len,
                      int parts);
void mw__record_window(mw_record_t *r, const mw_clock_t *now, uint64_t index, const void *pb,
                       size_t len);
/* A merged window as the collector closed it (pb, len: its encoding for every consumer). Each
 * rank's trace records are already in the file, in the received frame that brought them: the
 * window frame stores them once, by that frame's offset (mw_rec_window_strip, docs/recording.md
 * "Traces"); a trace whose frame is not in the file keeps its records inline. */
void mw__record_merged(mw_record_t *r, const mw_clock_t *now, const mw_window_t *w, const void *pb,
                       size_t len);
/* The offset of the last received frame appended (mw__record_frame), 0 when it was not (no
 * recording, stopped, or not written); NULL is allowed. */
uint64_t mw__record_last_frame(const mw_record_t *r);
void mw__record_job(mw_record_t *r, const mw_clock_t *now, const void *pb, size_t len);
void mw__record_step(mw_record_t *r, const mw_clock_t *now, const void *pb, size_t len);
/* A lateness batch (the bytes of a Mpiwatch__Lateness), as published (lateness.c). */
void mw__record_lateness(mw_record_t *r, const mw_clock_t *now, const void *pb, size_t len);
void mw__record_event(mw_record_t *r, const mw_clock_t *now, const char *kind, const char *job,
                      const char *detail);
void mw__record_tick(mw_record_t *r, const mw_clock_t *now);
void mw__record_finish(mw_record_t *r, const mw_clock_t *now);
/* Makes everything written so far readable by another reader of the file (history). */
void mw__record_flush(mw_record_t *r);
/* Bytes written so far, and whether the recording stopped on an error. */
uint64_t mw__record_bytes(const mw_record_t *r);
/* Records left out of the recording because they are over MW_REC_MAX_RECORD (64 MiB) or could
 * not be chunked for lack of memory: counted in the stats JSON and on the Prometheus page. */
uint64_t mw__record_too_large(const mw_record_t *r);
int mw__record_failed(const mw_record_t *r);
/* The tiers (docs/recording.md): bytes of samples dropped from the file, samples not recorded
 * once --record-max-gb was near, and whether the recording stopped at that limit. */
void mw__record_tiers(const mw_record_t *r, uint64_t *dropped_bytes, uint64_t *not_recorded,
                      int *limit_reached);
const char *mw__record_path(const mw_record_t *r);

#endif
