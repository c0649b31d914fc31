/* test_dormant.c: the dormant recording path (pmpi-shim/dormant.c, docs/shim.md "Dormant
 * mode"), driven through the real wrappers without MPI_Init.
 *
 * The PMPI functions the wrappers call are defined here (the executable's definitions take
 * precedence over the MPI library's), so that no MPI runtime is needed: PMPI_Send also calls
 * MPI_Comm_rank itself, as an MPI implementation may, which must not be counted (a nested
 * call). The timer is put in clock_gettime mode and clock_gettime is defined here too,
 * counting the calls made on the test's thread: a dormant call must read no clock at all,
 * while a call recorded in full reads it twice. The counts and bytes must be exact.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"

static __thread unsigned long clock_reads;
static unsigned long nested_calls; /* MPI_Comm_rank calls made from inside PMPI_Send */

int clock_gettime(clockid_t id, struct timespec *ts)
{
    clock_reads++;
    return (int)syscall(SYS_clock_gettime, id, ts);
}

int PMPI_Type_size(MPI_Datatype type, int *size)
{
    (void)type;
    *size = 4;
    return MPI_SUCCESS;
}

int PMPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    (void)buf, (void)count, (void)type, (void)dest, (void)tag;
    int r;
    nested_calls++;
    return MPI_Comm_rank(comm, &r); /* an implementation calling MPI itself */
}

int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    (void)comm;
    *rank = 0;
    return MPI_SUCCESS;
}

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    (void)source, (void)tag, (void)comm, (void)status;
    *flag = 0;
    return MPI_SUCCESS;
}

int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    (void)request, (void)status;
    *flag = 1;
    return MPI_SUCCESS;
}

static int setup(void **state)
{
    (void)state;
    memset(&mw__g, 0, sizeof mw__g);
    mw__config_read(&mw__g.cfg);
    mw__trace.on = 0;
    mw__g.cfg.max_threads = 4;
    mw__g.cfg.callsites = 0;
    mw__g.size = 2;
    mw__timer_init(2); /* clock_gettime: every clock read goes through the function above */
    mw__g.need_fence = 1;
    if (mw__alloc() != 0)
        return -1;
    mw__grid_init(1000000, 10);
    mw__set_state(1, 0);
    return 0;
}

#define N 1000

static void calls(int with_send)
{
    int buf[3] = {1, 2, 3}, flag, r;
    MPI_Request rq = MPI_REQUEST_NULL;
    for (int i = 0; i < N; i++) {
        if (with_send)
            assert_int_equal(MPI_Send(buf, 3, MPI_INT, 1, 0, MPI_COMM_WORLD), MPI_SUCCESS);
        assert_int_equal(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
        assert_int_equal(MPI_Comm_rank(MPI_COMM_WORLD, &r), MPI_SUCCESS);
        assert_int_equal(MPI_Iprobe(0, 0, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
    }
}

/* Dormant: exact counts and bytes per function, no clock read, nested calls not counted. */
static void test_dormant_counts(void **state)
{
    (void)state;
    mw__dormant_set(1);
    assert_int_equal(atomic_load(&mw__g.recording), 0);
    assert_int_equal(atomic_load(&mw__g.dormant), 1);
    clock_reads = 0;
    nested_calls = 0;
    calls(1);
    assert_int_equal(clock_reads, 0);
    assert_int_equal(nested_calls, N);
    static mw_dsum_t d;
    mw__dormant_sum(&d);
    assert_int_equal(d.calls[MW_ID_Send], N);
    assert_int_equal(d.bytes[MW_ID_Send], (uint64_t)N * 3 * 4);
    assert_int_equal(d.calls[MW_ID_Test], N);
    assert_int_equal(d.calls[MW_ID_Comm_rank], N); /* not 2N: the nested ones are not counted */
    assert_int_equal(d.calls[MW_ID_Iprobe], N);
    assert_int_equal(d.bytes[MW_ID_Test] + d.bytes[MW_ID_Comm_rank] + d.bytes[MW_ID_Iprobe], 0);
    uint64_t all = 0;
    for (unsigned f = 1; f < MW_FN_COUNT; f++)
        all += d.calls[f];
    assert_int_equal(all, 4 * N);
}

/* Full again: the clock is read (twice per timed call) and nothing more is counted dormant;
 * dormant again: counting resumes where it was, still without clock reads. */
static void test_switch(void **state)
{
    (void)state;
    static mw_dsum_t before, after;
    mw__dormant_sum(&before);
    mw__dormant_set(0);
    assert_int_equal(atomic_load(&mw__g.recording), 1);
    assert_int_equal(atomic_load(&mw__g.dormant), 0);
    clock_reads = 0;
    calls(0);
    assert_true(clock_reads >= 2 * 2 * N); /* Test and Iprobe are timed */
    mw__dormant_sum(&after);
    assert_memory_equal(&before, &after, sizeof before);

    mw__dormant_set(1);
    clock_reads = 0;
    calls(0);
    assert_int_equal(clock_reads, 0);
    mw__dormant_sum(&after);
    assert_int_equal(after.calls[MW_ID_Test], before.calls[MW_ID_Test] + N);
    assert_int_equal(after.calls[MW_ID_Iprobe], before.calls[MW_ID_Iprobe] + N);
    assert_int_equal(after.calls[MW_ID_Send], before.calls[MW_ID_Send]);

    /* Paused (MPI_Pcontrol(0)): neither recorded nor counted. */
    mw__set_state(-1, 1);
    assert_int_equal(atomic_load(&mw__g.recording) | atomic_load(&mw__g.dormant), 0);
    calls(0);
    mw__dormant_sum(&before);
    assert_memory_equal(&before, &after, sizeof before);
    mw__set_state(-1, 0);
    assert_int_equal(atomic_load(&mw__g.dormant), 1);
}

/* mpiwatch.mode values (steering): full and dormant only. */
static void test_steer_values(void **state)
{
    (void)state;
    assert_int_equal(mw__dormant_steer("full"), 0);
    assert_int_equal(atomic_load(&mw__g.recording), 1);
    assert_int_equal(mw__dormant_steer("dormant"), 0);
    assert_int_equal(atomic_load(&mw__g.dormant), 1);
    assert_int_equal(mw__dormant_steer("sleep"), -1);
    assert_int_equal(mw__dormant_steer(""), -1);
    assert_int_equal(atomic_load(&mw__g.dormant), 1);
    /* The wire: totals by increasing function id, one open span. */
    Mpiwatch__Dormant d = MPIWATCH__DORMANT__INIT;
    assert_int_equal(mw__dormant_wire(&d), 1);
    assert_true(d.n_fn >= 4);
    for (size_t i = 1; i < d.n_fn; i++)
        assert_true(d.fn[i] > d.fn[i - 1]);
    assert_true(d.n_span_start_ns >= 1);
    assert_int_equal(d.span_end_ns[d.n_span_start_ns - 1], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dormant_counts),
        cmocka_unit_test(test_switch),
        cmocka_unit_test(test_steer_values),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
