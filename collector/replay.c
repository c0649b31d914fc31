/* replay.c: placeholder until replay lands (being written now). */
#include "collector.h"

int mw_replay_run(mw_collector_t *c)
{
    MW_LOG(MW_LOG_ERROR, "%s: replay is not implemented yet", c->opt->replay);
    return -1;
}
