/* mw_fnmap_msg.h: translating the function ids of a rank's message (docs/function-table.md).
 *
 * The collector translates every message of a rank whose table is not its own, right after
 * decoding (collector/ingest.c); the load generator translates the other way to emulate a
 * rank of another MPI (tools/loadgen.c --table-shuffle); the readers of a collector's outputs
 * translate the job's ids to their own when they were built with another table. Links protobuf-c
 * and zstd (a trace's records are decoded and encoded again), so never the shim.
 */
#ifndef MW_FNMAP_MSG_H
#define MW_FNMAP_MSG_H

#include "mw_fnmap.h"
#include "mw_proto.h"

/* Trace records translated into new blocks that the message points at: kept here until the
 * caller is done with the message (mw_fnmap_keep_clear), freed with mw_fnmap_keep_free. */
typedef struct {
    void **p;
    size_t n, cap;
} mw_fnmap_keep_t;
void mw_fnmap_keep_clear(mw_fnmap_keep_t *keep);
void mw_fnmap_keep_free(mw_fnmap_keep_t *keep);

/* Translates in place every function id of a sample, bye or trace envelope with m (ids of
 * m's peer table -> ids here). An entry whose function has no id here (m->to_local 0) is left
 * out; an id outside the peer's table becomes MW_FN_SPACE, which every check refuses; a
 * trace that cannot be translated gets encoding 0 (refused by its checks). A translated
 * trace's records move to a fresh block kept in *trace_block (for a message in an arena), or
 * with trace_block NULL that replaces and frees the old records (for a message unpacked with
 * malloc, which owns its fields). Returns the entries left out. */
uint64_t mw_fnmap_envelope(const mw_fnmap_t *m, Mpiwatch__Envelope *env,
                           mw_fnmap_keep_t *trace_block);

/* A consumer of a collector's outputs (the viewer, the exports, the feed client): the job's
 * ids (JobInfo.function_names, or for a job description without names its table hash: this
 * build's or the legacy table) mapped to this process's ids. Returns 0, or -1 with the reason
 * in err. */
int mw_fnmap_job(mw_fnmap_t *m, const Mpiwatch__JobInfo *job, char *err, size_t errlen);
/* Translates a merged window, a step or lateness summaries of the job in place, as
 * mw_fnmap_envelope does a rank's message (nothing to do for an identity map). Returns the
 * entries left out (their function has no id here). A translated trace's records are kept in
 * *trace_block as above, or with trace_block NULL replace (and free) the window's own, for a
 * window unpacked with malloc that owns its fields. A recorded window's traces are translated
 * once resolved (mw_rec_reader_resolve_window): translate it after resolving it. */
uint64_t mw_fnmap_window(const mw_fnmap_t *m, Mpiwatch__Window *w, mw_fnmap_keep_t *trace_block);
uint64_t mw_fnmap_step(const mw_fnmap_t *m, Mpiwatch__Step *st);
void mw_fnmap_lateness(const mw_fnmap_t *m, Mpiwatch__Lateness *l);
/* For a reader of a recording, record after record: a job description (re)builds m (returns
 * UINT64_MAX with the reason in err when it cannot: m is then empty and nothing is
 * translated), a window, step or lateness record of the job is translated with m. */
uint64_t mw_fnmap_record(mw_fnmap_t *m, Mpiwatch__Record *rec, mw_fnmap_keep_t *trace_block,
                         char *err, size_t errlen);

#endif
