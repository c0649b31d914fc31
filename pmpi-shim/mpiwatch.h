/* mpiwatch.h: the public C API of mpiwatch for applications that want to talk to it.
 *
 * Nothing here is needed to monitor a program: libmpiwatch.so is preloaded into unmodified
 * MPI programs. The standard MPI_Pcontrol() also steers it: MPI_Pcontrol(0) pauses recording
 * on the calling rank and MPI_Pcontrol(1) resumes it.
 *
 * Every function is declared weak, so a program built against this header still links and
 * runs without the library: check the function pointer before calling, e.g.
 *     if (mw_active) printf("monitored: %d\n", mw_active());
 */
#ifndef MPIWATCH_H
#define MPIWATCH_H

#ifdef __cplusplus
extern "C" {
#endif

#define MPIWATCH_VERSION_MAJOR 0
#define MPIWATCH_VERSION_MINOR 1

/* 1 while this rank records MPI calls (after MPI_Init, before MPI_Finalize, not paused, not
 * disabled), 0 otherwise. */
int mw_active(void) __attribute__((weak));

/* The library's version string, e.g. "0.1.0". */
const char *mw_version(void) __attribute__((weak));

/* Marks the end of time step `step` (>= 0, usually increasing) on this rank, from the thread
 * that called MPI_Init: the collector then reports the MPI calls of every step, summed over
 * the ranks, exactly (docs/steps.md). Call it once per step on every rank, e.g. at the end
 * of the time loop's body. Like every function here it is weak: guard the call,
 *     if (mw_step) mw_step(s);
 * or use MW_STEP(s), which does that for you. A program that calls it runs unchanged without
 * the library, and MPIWATCH_STEP / the detector are off once it is called. */
void mw_step(long step) __attribute__((weak));

/* mw_step(step) when the library is there, nothing otherwise. */
#define MW_STEP(step)                                                                              \
    do {                                                                                           \
        if (mw_step)                                                                               \
            mw_step(step);                                                                         \
    } while (0)

/* Code regions (docs/regions.md): mw_region_begin(name) opens a region on the calling thread,
 * mw_region_end(name) closes the innermost open one (name may be NULL; when given, it must be
 * that region's name, otherwise the end is counted as dropped and nothing is closed). Regions
 * nest, per thread. Per window, for each region name, the collector gets the instances that
 * ended in it: count, inclusive and exclusive time, and the time of the MPI calls made while it
 * was the innermost open region. Names are at most 128 bytes; the first call with a name costs
 * a table look-up under a lock, later ones with the same pointer a hash probe. A program built
 * with -finstrument-functions gets regions without source changes for the functions named by
 * MPIWATCH_REGIONS (docs/regions.md). Weak like the rest: use MW_REGION_BEGIN / MW_REGION_END. */
void mw_region_begin(const char *name) __attribute__((weak));
void mw_region_end(const char *name) __attribute__((weak));

#define MW_REGION_BEGIN(name)                                                                      \
    do {                                                                                           \
        if (mw_region_begin)                                                                       \
            mw_region_begin(name);                                                                 \
    } while (0)
#define MW_REGION_END(name)                                                                        \
    do {                                                                                           \
        if (mw_region_end)                                                                         \
            mw_region_end(name);                                                                   \
    } while (0)

/* Steering (docs/steering.md): a key=value message sent with `mpiwatch steer` (or by a rule
 * of the collector) to this rank. The callback runs on the application's own thread, never
 * on a library thread and never in a signal handler: inside mw_poll(), or at the next timed
 * MPI call of the thread that called MPI_Init (after that call's work, while recording). It
 * may call MPI. Messages that arrive while no callback is registered are dropped. Keys that
 * start with "mpiwatch." are the library's own (mpiwatch.pause, mpiwatch.resume) and never
 * reach the callback. */
typedef void (*mw_steer_fn)(const char *key, const char *value, void *ctx);

/* Registers the steering callback (NULL: none); replaces the previous one. */
void mw_on_steer(mw_steer_fn fn, void *ctx) __attribute__((weak));

/* Runs the callback for every steering message waiting, on the calling thread; returns how
 * many. Cheap (one load) when nothing waits. */
int mw_poll(void) __attribute__((weak));

/* mw_on_steer(fn, ctx) when the library is there, nothing otherwise. */
#define MW_ON_STEER(fn, ctx)                                                                       \
    do {                                                                                           \
        if (mw_on_steer)                                                                           \
            mw_on_steer((fn), (ctx));                                                              \
    } while (0)

/* mw_poll() when the library is there, 0 otherwise. */
#define MW_POLL() (mw_poll ? mw_poll() : 0)

#ifdef __cplusplus
}
#endif

#endif
