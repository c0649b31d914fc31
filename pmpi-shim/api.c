/* api.c: the functions of the public header mpiwatch.h. */
#include "mpiwatch.h"
#include "shim.h"

MW_EXPORT int mw_active(void)
{
    return atomic_load(&mw__g.recording);
}

MW_EXPORT const char *mw_version(void)
{
    return MW_VERSION_STRING;
}
