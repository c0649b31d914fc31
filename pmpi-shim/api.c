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

/* Marks the end of time step `step` on this rank (docs/steps.md). Not recording (paused,
 * finalized, inside an MPI call), nothing happens. */
MW_EXPORT void mw_step(long step)
{
    mw_thread_t *t = mw__self(0);
    if (t)
        mw__step_api(t, step);
}
