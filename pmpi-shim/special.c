/* special.c: the hand-written wrappers, and the library's start and end.
 *
 * DESIGN: MPI_Init / MPI_Init_thread (C and Fortran) call the real init first and then
 * mw__init_common(), which is collective over a private duplicate of MPI_COMM_WORLD (clock
 * offsets, job identity and window settings from rank 0) and then purely local (memory, the
 * sender thread). Every failure after the collective part leaves this rank inert, never the
 * application broken. MPI_Finalize stops recording, lets the sender flush the last windows
 * and say bye (bounded by MPIWATCH_LINGER_MS), and only then calls the real finalize.
 * MPI_Pcontrol(0) pauses recording and MPI_Pcontrol(1) resumes it, as in mpiP.
 */
#include "shim.h"

#include <errno.h>
#include <sched.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int init_done;

void mw__set_state(int active, int paused)
{
    if (active >= 0)
        atomic_store(&mw__g.active, active);
    if (paused >= 0)
        atomic_store(&mw__g.paused, paused);
    /* Dormant mode (dormant.c): the new state's flag is set before the old one is cleared, so
     * that a call always finds one of them and is counted once. */
    int on = atomic_load(&mw__g.active) && !atomic_load(&mw__g.paused);
    int dormant = on && atomic_load(&mw__g.dormant_req);
    if (dormant) {
        atomic_store(&mw__g.dormant, 1);
        atomic_store(&mw__g.recording, 0);
    } else {
        atomic_store(&mw__g.recording, on);
        atomic_store(&mw__g.dormant, 0);
    }
}

static void atfork_child(void)
{
    /* The child has none of the parent's threads, and its MPI calls are not the job's. */
    mw__set_state(0, -1);
}

static int membarrier_setup(void)
{
    long q = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (q < 0 || !(q & MEMBARRIER_CMD_PRIVATE_EXPEDITED))
        return -1;
    return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 ? 0 : -1;
}

int mw__init_common(int thread_level)
{
    if (init_done)
        return 0;
    init_done = 1;
    mw__config_read(&mw__g.cfg);
    /* Tracing starts only once its memory and the communicator table exist. */
    int trace_want = mw__trace.on;
    mw__trace.on = 0;
    if (mw__g.cfg.disable)
        return 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &mw__g.rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &mw__g.size);
    mw__timer_init(mw__g.cfg.timer);

    mw_hello_info_t hi;
    memset(&hi, 0, sizeof hi);
    hi.job.window_ns = (uint64_t)mw__g.cfg.window_ms * 1000000ull;
    hi.job.subslots = mw__g.cfg.subslots;
    MPI_Comm sync;
    if (PMPI_Comm_dup(MPI_COMM_WORLD, &sync) != MPI_SUCCESS)
        return -1;
    PMPI_Comm_set_errhandler(sync, MPI_ERRORS_RETURN);
    mw__topology_init(sync, mw__g.rank, mw__g.size, mw__g.cfg.nodes);
    int rc = mw__clocksync(sync, (int)mw__g.cfg.sync_rounds, &hi.job);
    PMPI_Comm_free(&sync);
    if (rc != 0) {
        mw__log("clock synchronisation failed; this rank stays inert");
        return -1;
    }
    /* From here on everything is local to this rank. */
    mw__grid_init(hi.job.window_ns, hi.job.subslots);
    mw__trace.on = trace_want;
    if (mw__alloc() != 0) {
        mw__log("cannot map %u thread blocks; inert", mw__g.cfg.max_threads);
        return -1;
    }
    if (mw__trace.on && mw__comm_init() != 0)
        mw__trace.on = 0;
    mw__g.need_fence = membarrier_setup() != 0;
    mw__steps_init();   /* this thread takes the step marks (docs/steps.md) */
    mw__regions_init(); /* region stacks, MPIWATCH_REGIONS (docs/regions.md) */
    uint64_t now_g = mw__global_ns(mw__now());
    atomic_store(&mw__g.closed_upto, mw__grid_index(now_g) - 1);

    int len = 0;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    if (PMPI_Get_library_version(lib, &len) == MPI_SUCCESS) {
        lib[len < (int)sizeof lib ? len : (int)sizeof lib - 1] = 0;
        lib[strcspn(lib, "\n")] = 0;
        /* MPICH's first line is "MPICH Version:<TAB>4.0.2": the wire takes no control
         * characters (mw_wire_text_ok), so a tab becomes a space. */
        for (char *p = lib; *p; p++)
            if ((unsigned char)*p < 0x20)
                *p = ' ';
        snprintf(hi.mpi_library, sizeof hi.mpi_library, "%.*s", (int)sizeof hi.mpi_library - 1,
                 lib); /* MPICH's lib is 8192 bytes long: cut, as meant */
    }
    snprintf(hi.program, sizeof hi.program, "%s", program_invocation_short_name);
    hi.thread_level = thread_level;
    hi.pu = sched_getcpu();
    mw__dormant_init(now_g); /* MPIWATCH_MODE=dormant (dormant.c) */
    if (mw__sender_start(&hi) != 0) {
        mw__log("cannot start the sender; inert");
        return -1;
    }
    static int atfork_registered;
    if (!atfork_registered++)
        pthread_atfork(NULL, NULL, atfork_child);
    mw__set_state(1, -1);
    mw__log("recording: window %llu ns, timer %s, clock offset %lld ns +- %llu ns",
            (unsigned long long)mw__g.window_ns, mw__g.use_tsc ? "tsc" : "clock_gettime",
            (long long)mw__g.offset_ns, (unsigned long long)mw__g.clock_error_ns);
    return 0;
}

/* Counts the init call once recording is on. Like MPI_Finalize it is counted, not timed:
 * monitoring starts inside it, and its duration (process start-up, the clock
 * synchronisation) is not time the application spends communicating. */
static void record_init(unsigned fn)
{
    mw_thread_t *t = mw__self(fn);
    if (t)
        mw__count(t, fn);
    else if (atomic_load_explicit(&mw__g.dormant, memory_order_relaxed))
        mw__dormant_count(fn);
}

void mw__finalize_common(void)
{
    if (!atomic_load(&mw__g.active))
        return;
    mw_thread_t *t = mw__self(MW_ID_Finalize);
    if (t)
        mw__count(t, MW_ID_Finalize);
    else if (atomic_load_explicit(&mw__g.dormant, memory_order_relaxed))
        mw__dormant_count(MW_ID_Finalize);
    mw__set_state(0, -1);
    mw__sender_stop();
    mw__sites_close(); /* after the sender: libdw's state too (docs/callsites.md) */
    mw__tcalls_log();
    mw__comm_log();
}

static int provided_level(void)
{
    int level = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&level);
    return level;
}

MW_EXPORT int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv); /* not recording yet: nothing inside it is counted */
    if (rc == MPI_SUCCESS && mw__init_common(provided_level()) == 0)
        record_init(MW_ID_Init);
    return rc;
}

MW_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS && mw__init_common(provided ? *provided : provided_level()) == 0)
        record_init(MW_ID_Init_thread);
    return rc;
}

MW_EXPORT int MPI_Finalize(void)
{
    mw__finalize_common();
    return PMPI_Finalize();
}

MW_EXPORT int MPI_Pcontrol(const int level, ...)
{
    mw_thread_t *t = mw__self(MW_ID_Pcontrol);
    if (t)
        mw__count(t, MW_ID_Pcontrol);
    else if (atomic_load_explicit(&mw__g.dormant, memory_order_relaxed))
        mw__dormant_count(MW_ID_Pcontrol);
    mw__set_state(-1, level == 0);
    return PMPI_Pcontrol(level);
}

/* Freeing a communicator invalidates the cached group used to translate its ranks. */
/* Inlined into the wrappers, as mw__begin() must be to read the application's return
 * address (docs/callsites.md). */
static inline __attribute__((always_inline)) int comm_release(MPI_Comm *comm, unsigned fn,
                                                              int (*real)(MPI_Comm *))
{
    MPI_Comm c = comm ? *comm : MPI_COMM_NULL;
    /* The trace's key of the handle, read while it is valid. */
    int64_t key = mw__trace.on && c != MPI_COMM_NULL ? (int64_t)(uint32_t)PMPI_Comm_c2f(c) : -1;
    mw_thread_t *t = mw__self(fn);
    if (!t) {
        mw_thread_t *d = atomic_load_explicit(&mw__g.dormant, memory_order_relaxed)
                             ? mw__dormant_enter(fn)
                             : NULL;
        int rc = real(comm);
        if (d)
            mw__dormant_leave(d, fn, 0);
        if (rc == MPI_SUCCESS && c != MPI_COMM_NULL) {
            mw__comm_forget(c);
            mw__comm_freed(key);
        }
        return rc;
    }
    uint64_t t0 = mw__begin(t, fn);
    int rc = real(comm);
    uint64_t t1 = mw__now();
    if (rc == MPI_SUCCESS && c != MPI_COMM_NULL) {
        mw__comm_forget(c);
        mw__comm_freed(key);
    }
    mw__record(t, fn, t0, t1, 0, -1);
    return rc;
}

MW_EXPORT int MPI_Comm_free(MPI_Comm *comm)
{
    return comm_release(comm, MW_ID_Comm_free, PMPI_Comm_free);
}

MW_EXPORT int MPI_Comm_disconnect(MPI_Comm *comm)
{
    return comm_release(comm, MW_ID_Comm_disconnect, PMPI_Comm_disconnect);
}

#ifdef MW_HAVE_FORTRAN
/* Fortran entry points of the same functions. Weak: present only in Fortran programs. */
extern void pmpi_init_(MPI_Fint *ierr) __attribute__((weak));
extern void pmpi_init_f08_(MPI_Fint *ierr) __attribute__((weak));
extern void pmpi_init_thread_(MPI_Fint *req, MPI_Fint *prov, MPI_Fint *ierr) __attribute__((weak));
extern void pmpi_init_thread_f08_(MPI_Fint *req, MPI_Fint *prov, MPI_Fint *ierr)
    __attribute__((weak));
extern void pmpi_finalize_(MPI_Fint *ierr) __attribute__((weak));
extern void pmpi_finalize_f08_(MPI_Fint *ierr) __attribute__((weak));
extern void pmpi_pcontrol_(MPI_Fint *level) __attribute__((weak));
extern void pmpi_pcontrol_f08_(MPI_Fint *level) __attribute__((weak));
extern void pmpi_comm_free_(MPI_Fint *comm, MPI_Fint *ierr) __attribute__((weak));
extern void pmpi_comm_free_f08_(MPI_Fint *comm, MPI_Fint *ierr) __attribute__((weak));
extern void pmpi_comm_disconnect_(MPI_Fint *comm, MPI_Fint *ierr) __attribute__((weak));
extern void pmpi_comm_disconnect_f08_(MPI_Fint *comm, MPI_Fint *ierr) __attribute__((weak));
/* MPICH's mpi_f08 names the same procedures mpi_<lower>_f08_ (its module procedures) and their
 * profiling twins pmpir_<lower>_f08_: without Open MPI's pmpi_<lower>_f08_, those are called,
 * so that an MPICH mpi_f08 program still initialises MPI (docs/mpich.md). */
extern void pmpir_init_f08_(MPI_Fint *ierr) __attribute__((weak));
extern void pmpir_init_thread_f08_(MPI_Fint *req, MPI_Fint *prov, MPI_Fint *ierr)
    __attribute__((weak));
extern void pmpir_finalize_f08_(MPI_Fint *ierr) __attribute__((weak));
extern void pmpir_pcontrol_f08_(MPI_Fint *level) __attribute__((weak));
extern void pmpir_comm_free_f08_(MPI_Fint *comm, MPI_Fint *ierr) __attribute__((weak));
extern void pmpir_comm_disconnect_f08_(MPI_Fint *comm, MPI_Fint *ierr) __attribute__((weak));

#define MW_FALIAS(target, name) MW_EXPORT __typeof__(target) name __attribute__((alias(#target)));
#define MW_FALIASES3(target, a, b, c) MW_FALIAS(target, a) MW_FALIAS(target, b) MW_FALIAS(target, c)

/* Defines mpi_<lower>_ with its three other manglings, and mpi_<lower>_f08_, each calling
 * helper() with the matching real entry point and the arguments. */
#define MW_FSPECIAL(lower, UPPER, params, helper, ...)                                             \
    MW_EXPORT void mpi_##lower##_ params;                                                          \
    void mpi_##lower##_ params                                                                     \
    {                                                                                              \
        helper(pmpi_##lower##_, __VA_ARGS__);                                                      \
    }                                                                                              \
    MW_FALIASES3(mpi_##lower##_, mpi_##lower, mpi_##lower##__, MPI_##UPPER)                        \
    MW_EXPORT void mpi_##lower##_f08_ params;                                                      \
    void mpi_##lower##_f08_ params                                                                 \
    {                                                                                              \
        helper(pmpi_##lower##_f08_ ? pmpi_##lower##_f08_ : pmpir_##lower##_f08_, __VA_ARGS__);     \
    }

static void f_init(void (*real)(MPI_Fint *), MPI_Fint *ierr)
{
    if (!real)
        return;
    real(ierr);
    if ((!ierr || *ierr == MPI_SUCCESS) && mw__init_common(provided_level()) == 0)
        record_init(MW_ID_Init);
}

static void f_init_thread(void (*real)(MPI_Fint *, MPI_Fint *, MPI_Fint *), MPI_Fint *req,
                          MPI_Fint *prov, MPI_Fint *ierr)
{
    if (!real)
        return;
    real(req, prov, ierr);
    if ((!ierr || *ierr == MPI_SUCCESS) &&
        mw__init_common(prov ? (int)*prov : provided_level()) == 0)
        record_init(MW_ID_Init_thread);
}

static void f_finalize(void (*real)(MPI_Fint *), MPI_Fint *ierr)
{
    mw__finalize_common();
    if (real)
        real(ierr);
}

static void f_pcontrol(void (*real)(MPI_Fint *), MPI_Fint *level)
{
    mw_thread_t *t = mw__self(MW_ID_Pcontrol);
    if (t)
        mw__count(t, MW_ID_Pcontrol);
    else if (atomic_load_explicit(&mw__g.dormant, memory_order_relaxed))
        mw__dormant_count(MW_ID_Pcontrol);
    if (level)
        mw__set_state(-1, *level == 0);
    if (real)
        real(level);
}

static inline __attribute__((always_inline)) void
f_comm_release(void (*real)(MPI_Fint *, MPI_Fint *), unsigned fn, MPI_Fint *comm, MPI_Fint *ierr)
{
    if (!real)
        return;
    MPI_Comm c = comm ? PMPI_Comm_f2c(*comm) : MPI_COMM_NULL;
    int64_t key = comm && mw__trace.on ? (int64_t)(uint32_t)*comm : -1;
    mw_thread_t *t = mw__self(fn);
    mw_thread_t *d = !t && atomic_load_explicit(&mw__g.dormant, memory_order_relaxed)
                         ? mw__dormant_enter(fn)
                         : NULL;
    uint64_t t0 = t ? mw__begin(t, fn) : 0;
    real(comm, ierr);
    uint64_t t1 = t ? mw__now() : 0; /* no clock read when not recording (dormant mode) */
    if (d)
        mw__dormant_leave(d, fn, 0);
    if ((!ierr || *ierr == MPI_SUCCESS) && c != MPI_COMM_NULL) {
        mw__comm_forget(c);
        mw__comm_freed(key);
    }
    if (t)
        mw__record(t, fn, t0, t1, 0, -1);
}

#define f_comm_free(real, comm, ierr) f_comm_release(real, MW_ID_Comm_free, comm, ierr)
#define f_comm_disconnect(real, comm, ierr) f_comm_release(real, MW_ID_Comm_disconnect, comm, ierr)

MW_FSPECIAL(init, INIT, (MPI_Fint * ierr), f_init, ierr)
MW_FSPECIAL(init_thread, INIT_THREAD, (MPI_Fint * req, MPI_Fint *prov, MPI_Fint *ierr),
            f_init_thread, req, prov, ierr)
MW_FSPECIAL(finalize, FINALIZE, (MPI_Fint * ierr), f_finalize, ierr)
MW_FSPECIAL(pcontrol, PCONTROL, (MPI_Fint * level), f_pcontrol, level)
MW_FSPECIAL(comm_free, COMM_FREE, (MPI_Fint * comm, MPI_Fint *ierr), f_comm_free, comm, ierr)
MW_FSPECIAL(comm_disconnect, COMM_DISCONNECT, (MPI_Fint * comm, MPI_Fint *ierr), f_comm_disconnect,
            comm, ierr)
#endif /* MW_HAVE_FORTRAN */
