/* feed.c: placeholder until the live feed lands (being written now). */
#include "collector.h"

mw_feed_t *mw__feed_open(void *zmq_ctx, const mw_options_t *opt)
{
    (void)zmq_ctx, (void)opt;
    MW_LOG(MW_LOG_ERROR, "the live feed is not implemented yet");
    return NULL;
}
void mw__feed_close(mw_feed_t *f) { (void)f; }
void mw__feed_window(mw_feed_t *f, uint64_t index, const void *pb, size_t len)
{
    (void)f, (void)index, (void)pb, (void)len;
}
void mw__feed_job(mw_feed_t *f, const void *pb, size_t len) { (void)f, (void)pb, (void)len; }
void mw__feed_event(mw_feed_t *f, const char *kind, const char *job, const char *detail,
                    uint64_t real_ns)
{
    (void)f, (void)kind, (void)job, (void)detail, (void)real_ns;
}
void mw__feed_sample(mw_feed_t *f, uint32_t rank, uint64_t window, const void *data, size_t len)
{
    (void)f, (void)rank, (void)window, (void)data, (void)len;
}
void mw__feed_pollitem(mw_feed_t *f, zmq_pollitem_t *item)
{
    (void)f;
    item->socket = NULL;
    item->fd = -1;
    item->events = 0;
}
void mw__feed_serve(mw_feed_t *f, mw_collector_t *c) { (void)f, (void)c; }
