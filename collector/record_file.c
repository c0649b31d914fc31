/* record_file.c: placeholder until the recording lands (being written now). */
#include "collector.h"

mw_record_t *mw__record_open(const char *path, const mw_options_t *opt)
{
    (void)opt;
    MW_LOG(MW_LOG_ERROR, "%s: recording is not implemented yet", path);
    return NULL;
}
void mw__record_close(mw_record_t *r) { (void)r; }
void mw__record_frame(mw_record_t *r, const mw_clock_t *now, const void *data, size_t len,
                      int parts)
{
    (void)r, (void)now, (void)data, (void)len, (void)parts;
}
void mw__record_window(mw_record_t *r, const mw_clock_t *now, uint64_t index, const void *pb,
                       size_t len)
{
    (void)r, (void)now, (void)index, (void)pb, (void)len;
}
void mw__record_job(mw_record_t *r, const mw_clock_t *now, const void *pb, size_t len)
{
    (void)r, (void)now, (void)pb, (void)len;
}
void mw__record_event(mw_record_t *r, const mw_clock_t *now, const char *kind, const char *job,
                      const char *detail)
{
    (void)r, (void)now, (void)kind, (void)job, (void)detail;
}
void mw__record_tick(mw_record_t *r, const mw_clock_t *now) { (void)r, (void)now; }
void mw__record_finish(mw_record_t *r, const mw_clock_t *now) { (void)r, (void)now; }
void mw__record_flush(mw_record_t *r) { (void)r; }
uint64_t mw__record_bytes(const mw_record_t *r) { (void)r; return 0; }
int mw__record_failed(const mw_record_t *r) { (void)r; return 1; }
const char *mw__record_path(const mw_record_t *r) { (void)r; return ""; }
int mw_collector_apply_record(mw_collector_t *c, const Mpiwatch__Record *rec)
{
    (void)c, (void)rec;
    return 0;
}
