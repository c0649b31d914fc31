/* api.c: the functions of the public header mpiwatch.h. */
#include "mpiwatch.h"
#include "shim.h"

int mw_active(void)
{
    return atomic_load(&mw__g.active) && !atomic_load(&mw__g.paused);
}

const char *mw_version(void)
{
    return MW_VERSION_STRING;
}
