/* test_rules.c: the threshold rules (collector/rules.c, docs/steering.md).
 *
 * The rules are fed crafted merged windows directly, with a collector that has no sockets: a
 * rule fires exactly when its condition has held for `for` consecutive windows and never in
 * its cooldown; bad files are refused with file:line; a reload with a bad file keeps the old
 * set; exec passes shell metacharacters through as plain data (a script writes its argv into
 * a file, and no command hidden in the words runs); a program past its timeout is killed and
 * its end recorded; the capture action's keys are checked when the file is loaded, and its
 * first window K lies after the firing's lead. Issue 12: a job or node name that looks like an
 * option arrives sanitised; an action's whole process group (a `sh -c` and the grandchild it
 * puts in the background) is gone after its timeout, and after the rules are freed (the
 * collector's exit) while it runs. Issue 15: the lateness metrics read lateness batches, not
 * windows; they fire with `for` and `cooldown` counted in windows and name the rank, function
 * and step of the maximum.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "collector.h"
#include "rules.h"
#include "mw_bins.h"

static char dir[64];
static mw_collector_options_t opt;
static mw_collector_t *col;
static mw_window_t win;
static mw_fn_sum_t fns[MW_FN_SPACE];
static uint32_t pm[4];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/mw-test-rules.XXXXXX");
    assert_non_null(mkdtemp(dir));
    mw_collector_options_defaults(&opt);
    col = calloc(1, sizeof *col);
    assert_non_null(col);
    col->opt = &opt;
    memset(&win, 0, sizeof win);
    memset(fns, 0, sizeof fns);
    win.fn = fns;
    win.window_ns = 100 * MW_NS_PER_MS;
    win.duration_bins = MW_BINS_OCTAVE; /* hist[b] below: [2^b, 2^(b+1)) ns */
    win.rank_pm = pm;
    win.n_rank_pm = 4;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    mw__rules_free(col->rules);
    free(col->job.ranks);
    free(col);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    return 0;
}

static const char *write_file(const char *name, const char *text)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static mw_rules_t *load(const char *text)
{
    char err[320];
    mw_rules_t *rs = mw__rules_load(write_file("r.ini", text), err, sizeof err);
    if (!rs)
        fail_msg("%s", err);
    return rs;
}

/* Closes window `index` with the four ranks' MPI shares in thousandths. */
static void window(uint64_t index, uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    win.index = index;
    pm[0] = a, pm[1] = b, pm[2] = c, pm[3] = d;
    mw__rules_window(col->rules, col, &win);
}

static void test_persistence_and_cooldown(void **state)
{
    (void)state;
    col->rules = load("[rule imb]\nmetric = imbalance\nop = >\nthreshold = 1.5\nfor = 3\n"
                      "cooldown = 4\naction = log\n");
    /* imbalance = max / mean: 400 / 100 = 4 when one rank waits, 1 when even. */
    static const struct {
        int bad;
        uint64_t fired; /* after this window */
    } seq[] = {
        {1, 0}, {1, 0}, {0, 0}, /* 0-2: two, then broken */
        {1, 0}, {1, 0}, {1, 1}, /* 3-5: three in a row: fires at 5 */
        {1, 1}, {1, 1}, {1, 1}, /* 6-8: cooldown (4 windows after 5) */
        {1, 1}, {1, 2},         /* 9: still in cooldown; 10: held 5 windows, out: fires */
        {1, 2}, {1, 2}, {0, 2}, /* 11-13 */
        {1, 2}, {1, 2}, {1, 3}, /* 14-16: held 3 again and cooldown over */
    };
    for (uint64_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
        if (seq[i].bad)
            window(i, 100, 0, 0, 300);
        else
            window(i, 100, 100, 100, 100);
        if (mw__rules_fired(col->rules, "imb") != seq[i].fired)
            fail_msg("window %llu: fired %llu times, expected %llu", (unsigned long long)i,
                     (unsigned long long)mw__rules_fired(col->rules, "imb"),
                     (unsigned long long)seq[i].fired);
    }
    /* A gap in the window indices breaks the run. */
    window(30, 100, 0, 0, 300);
    window(31, 100, 0, 0, 300);
    window(33, 100, 0, 0, 300);
    assert_int_equal(mw__rules_fired(col->rules, "imb"), 3);
    window(34, 100, 0, 0, 300);
    window(35, 100, 0, 0, 300);
    assert_int_equal(mw__rules_fired(col->rules, "imb"), 4);
}

static void test_metrics_and_scopes(void **state)
{
    (void)state;
    unsigned ar = mw_fn_id("MPI_Allreduce");
    col->rules = load("[rule slow2]\nmetric = rank_mpi_fraction\nop = >=\nthreshold = 0.8\n"
                      "scope = 2-3\naction = log\n"
                      "[rule allbusy]\nmetric = rank_mpi_fraction\nop = >\nthreshold = 0.5\n"
                      "scope = all\naction = log\n"
                      "[rule share]\nmetric = function_share\nfunction = MPI_Allreduce\nop = >\n"
                      "threshold = 0.5\naction = log\n"
                      "[rule p99]\nmetric = function_p99\nfunction = MPI_Allreduce\nop = >\n"
                      "threshold = 0.001\naction = log\n"
                      "[rule miss]\nmetric = missing_ranks\nop = >=\nthreshold = 1\n"
                      "action = log\n"
                      "[rule drop]\nmetric = dropped\nop = >\nthreshold = 10\naction = log\n");
    assert_int_equal(mw__rules_count(col->rules), 6);
    /* Rank 0 busy: outside 2-3, and not all ranks are. */
    window(0, 900, 100, 100, 100);
    /* Rank 3 at 0.8 and everyone above 0.5. */
    window(1, 600, 600, 700, 800);
    win.mpi_time_ns = 1000;
    fns[ar].s.total_ns = 600;
    fns[ar].hist[10] = 98; /* ~1-2 us */
    fns[ar].hist[21] = 2;  /* ~2-4 ms: the p99 is in this bin */
    win.ranks_missing = 1;
    win.samples_dropped = 5;
    win.records_dropped = 6;
    window(2, 0, 0, 0, 0);
    assert_int_equal(mw__rules_fired(col->rules, "slow2"), 1);
    assert_int_equal(mw__rules_fired(col->rules, "allbusy"), 1);
    assert_int_equal(mw__rules_fired(col->rules, "share"), 1);
    assert_int_equal(mw__rules_fired(col->rules, "p99"), 1);
    assert_int_equal(mw__rules_fired(col->rules, "miss"), 1);
    assert_int_equal(mw__rules_fired(col->rules, "drop"), 1);
    fns[ar].hist[21] = 0; /* p99 now ~2 us */
    window(3, 0, 0, 0, 0);
    assert_int_equal(mw__rules_fired(col->rules, "p99"), 1);
    assert_int_equal(mw__rules_fired(col->rules, "share"), 2);
}

/* One slow rank of four: the three others wait for it. Their MPI shares are alike, so
 * imbalance (max / mean of MPI shares: 900 / 700) stays low; load_imbalance compares the time
 * outside MPI (900 / 300 = 3) and singles the slow rank out. */
static void test_load_imbalance(void **state)
{
    (void)state;
    col->rules = load("[rule load]\nmetric = load_imbalance\nop = >\nthreshold = 2.9\n"
                      "action = log\n"
                      "[rule mpi]\nmetric = imbalance\nop = >\nthreshold = 1.3\naction = log\n"
                      "[rule waiters]\nmetric = load_imbalance\nop = >\nthreshold = 1.01\n"
                      "scope = 0-2\naction = log\n"
                      "[rule even]\nmetric = load_imbalance\nop = <\nthreshold = 1.01\n"
                      "action = log\n");
    window(0, 900, 900, 900, 100); /* 3.0 */
    assert_int_equal(mw__rules_fired(col->rules, "load"), 1);
    assert_int_equal(mw__rules_fired(col->rules, "mpi"), 0);     /* 1.2857 */
    assert_int_equal(mw__rules_fired(col->rules, "waiters"), 0); /* 1.0 among 0-2 */
    assert_int_equal(mw__rules_fired(col->rules, "even"), 0);
    window(1, 900, 900, 880, 100); /* 900 / 293.3 = 3.07; among 0-2: 120 / 106.7 = 1.125 */
    assert_int_equal(mw__rules_fired(col->rules, "load"), 2);
    assert_int_equal(mw__rules_fired(col->rules, "waiters"), 1);
    window(2, 500, 500, 500, 500); /* balanced: 1.0 */
    assert_int_equal(mw__rules_fired(col->rules, "load"), 2);
    assert_int_equal(mw__rules_fired(col->rules, "even"), 1);
    window(3, 1000, 1000, 1000, 1000); /* nobody computes: no value, nothing holds */
    assert_int_equal(mw__rules_fired(col->rules, "load"), 2);
    assert_int_equal(mw__rules_fired(col->rules, "even"), 1);
}

/* A closed time step as collector/steps.c hands it to the rules: DUR_MS long, MPI_NS of MPI
 * time over 4 ranks, AR_NS of it in MPI_Allreduce, BYTES point-to-point bytes. */
static void step(uint64_t n, uint64_t dur_ms, uint64_t mpi_ns, uint64_t ar_ns, uint64_t bytes)
{
    Mpiwatch__FunctionStat ar = MPIWATCH__FUNCTION_STAT__INIT;
    Mpiwatch__FunctionStat *fs[1] = {&ar};
    uint64_t pb[1] = {bytes};
    uint32_t src[1] = {0}, dst[1] = {1};
    uint64_t msg[1] = {1};
    Mpiwatch__Step st = MPIWATCH__STEP__INIT;
    ar.fn = mw_fn_id("MPI_Allreduce");
    ar.count = 1;
    ar.total_ns = ar_ns;
    st.step = n;
    st.start_ns = 1000000000000ull + n * 10000000000ull;
    st.end_ns = st.start_ns + dur_ms * 1000000ull;
    st.ranks = 4;
    st.mpi_time_ns = mpi_ns;
    st.n_functions = ar_ns ? 1 : 0;
    st.functions = fs;
    st.n_pair_src = st.n_pair_dst = st.n_pair_messages = st.n_pair_bytes = bytes ? 1 : 0;
    st.pair_src = src;
    st.pair_dst = dst;
    st.pair_messages = msg;
    st.pair_bytes = pb;
    mw__rules_step(col->rules, col, &st);
}

static void test_steps(void **state)
{
    (void)state;
    col->rules =
        load("[rule slow]\nover = step\nmetric = step_time\nop = >\nthreshold = 1.0\n"
             "for = 2\ncooldown = 1\naction = log\n"
             "[rule share]\nover = step\nmetric = function_share\n"
             "function = MPI_Allreduce\nop = >=\nthreshold = 0.5\naction = log\n"
             "[rule frac]\nover = step\nmetric = mpi_fraction\nop = >\n"
             "threshold = 0.5\naction = log\n"
             "[rule bw]\nover = step\nmetric = bytes_per_s\nop = >\nthreshold = 1000\n"
             "action = log\n"
             "[rule late]\nover = step\nmetric = step_time\nop = >\nthreshold = 1.0\n"
             "cooldown = 25s\naction = log\n"
             "[rule win]\nmetric = mpi_fraction\nop = >=\nthreshold = 0.5\naction = log\n");
    static const struct {
        uint64_t step, dur_ms, slow, late; /* fired counts after this step */
    } seq[] = {
        /* Steps end 10 s apart. late (cooldown 25 s) fires at 1, then not before 30 s later. */
        {1, 2000, 0, 1}, /* slow: 1 in a row */
        {2, 2000, 1, 1}, /* slow: 2 in a row, fires */
        {3, 2000, 1, 1}, /* slow: 1 in a row since the firing (and in its cooldown) */
        {4, 2000, 2, 2}, /* slow: 2 in a row, 2 steps after the firing: fires; late: 30 s */
        {5, 500, 2, 2},  /* fast: the runs break */
        {7, 2000, 2, 3}, /* a gap (step 6 never closed): slow starts again; late: 30 s */
        {8, 2000, 3, 3}, /* late: 10 s after its firing */
    };
    for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
        step(seq[i].step, seq[i].dur_ms, 0, 0, 0);
        if (mw__rules_fired(col->rules, "slow") != seq[i].slow ||
            mw__rules_fired(col->rules, "late") != seq[i].late)
            fail_msg("step %llu: slow fired %llu (expected %llu), late %llu (expected %llu)",
                     (unsigned long long)seq[i].step,
                     (unsigned long long)mw__rules_fired(col->rules, "slow"),
                     (unsigned long long)seq[i].slow,
                     (unsigned long long)mw__rules_fired(col->rules, "late"),
                     (unsigned long long)seq[i].late);
    }
    assert_int_equal(mw__rules_fired(col->rules, "share"), 0); /* no MPI time: no value */
    assert_int_equal(mw__rules_fired(col->rules, "frac"), 0);
    assert_int_equal(mw__rules_fired(col->rules, "bw"), 0); /* 0 bytes: 0 <= 1000 */
    /* 4 ranks x 2 s = 8e9 ns: 4e9 of MPI is 0.5 (not > 0.5), 5e9 is 0.625. */
    step(20, 2000, 4000000000ull, 2400000000ull, 2000);
    assert_int_equal(mw__rules_fired(col->rules, "share"), 1); /* 0.6 */
    assert_int_equal(mw__rules_fired(col->rules, "frac"), 0);
    assert_int_equal(mw__rules_fired(col->rules, "bw"), 0); /* 1000 B/s, not > 1000 */
    step(21, 2000, 5000000000ull, 2000000000ull, 3000);
    assert_int_equal(mw__rules_fired(col->rules, "share"), 1); /* 0.4 */
    assert_int_equal(mw__rules_fired(col->rules, "frac"), 1);
    assert_int_equal(mw__rules_fired(col->rules, "bw"), 1);
    assert_int_equal(mw__rules_fired(col->rules, "slow"), 4); /* 20 and 21: 2 s, 2 in a row */
    /* Steps never feed window rules, and windows never feed step rules. */
    assert_int_equal(mw__rules_fired(col->rules, "win"), 0);
    win.ranks_reporting = 4;
    win.mpi_time_ns = 150 * MW_NS_PER_MS; /* of 4 x 100 ms: 0.375 */
    window(0, 500, 500, 500, 500);
    assert_int_equal(mw__rules_fired(col->rules, "win"), 0);
    win.mpi_time_ns = 200 * MW_NS_PER_MS; /* 0.5 */
    window(1, 500, 500, 500, 500);
    assert_int_equal(mw__rules_fired(col->rules, "win"), 1);
    assert_int_equal(mw__rules_fired(col->rules, "slow"), 4);
}

static void test_invalid(void **state)
{
    (void)state;
    static const struct {
        const char *text, *msg;
    } cases[] = {
        {"[rule a]\nmetric = foo\n", "r.ini:2: unknown metric 'foo'"},
        {"[rule a]\nmetric = imbalance\nop = !=\n", "r.ini:3: unknown op '!='"},
        {"; c\n[rule a]\nmetric = imbalance\nop = >\naction = log\n",
         "r.ini:2: rule 'a': no threshold"},
        {"[rule a]\nmetric = imbalance\nop = >\nthreshold = x1\n", "r.ini:4: threshold 'x1'"},
        {"[rule a]\nmetric = dropped\nop = >\nthreshold = 1\naction = log\nscope = all\n",
         "r.ini:1: rule 'a': metric dropped is job-wide and takes no scope"},
        {"[rule a]\nmetric = function_p50\nop = >\nthreshold = 1\naction = log\n",
         "r.ini:1: rule 'a': metric function_p50 needs 'function'"},
        {"[rule a]\nfunction = MPI_Nope\n", "r.ini:2: unknown MPI function 'MPI_Nope'"},
        {"[rule a]\nmetric = dropped\nop = >\nthreshold = 1\naction = exec\nexec = /bin/true "
         "{oops}\n",
         "r.ini:6: unknown placeholder"},
        {"[rule a]\nexec = /bin/echo 'open\n", "r.ini:2: unterminated quote"},
        {"[rule a]\nscope = 3-1\n", "r.ini:2: scope '3-1'"},
        {"[rule a]\nbogus = 1\n", "r.ini:2: unknown key 'bogus'"},
        {"[collector]\nlisten = x\n", "r.ini:1: section '[collector]'"},
        {"[rule a]\n[rule b]\nmetric = dropped\n", "r.ini:1: section without keys"},
        {"[rule a]\nmetric = dropped\nop = >\nthreshold = 1\naction = log\n[rule a]\nop = <\n",
         "r.ini:6: duplicate rule 'a'"},
        {"[rule a]\nmetric = dropped\nthis is not ini\n", "r.ini:3: syntax error"},
        {"[rule a]\nmetric = dropped\nop = >\nthreshold = 1\naction = steer\n",
         "r.ini:1: rule 'a': action steer needs"},
        {"[rule a]\nmetric = dropped\nop = >\nthreshold = 1\naction = log\ncooldown = 5m\n",
         "r.ini:6: cooldown '5m'"},
        {"[rule a]\nmetric = step_time\nop = >\nthreshold = 1\naction = log\n",
         "r.ini:1: rule 'a': metric step_time needs over = step"},
        {"[rule a]\nmetric = function_p99\nfunction = MPI_Send\nover = step\nop = >\n"
         "threshold = 1\naction = log\n",
         "r.ini:1: rule 'a': metric function_p99 is per window; over = step takes"},
        {"[rule a]\nmetric = load_imbalance\nover = step\nop = >\nthreshold = 1\naction = log\n",
         "r.ini:1: rule 'a': metric load_imbalance is per window"},
        {"[rule a]\nmetric = diff_lateness_max\nover = step\nop = >\nthreshold = 1\n"
         "action = log\n",
         "r.ini:1: rule 'a': metric diff_lateness_max is per window"},
        {"[rule a]\nmetric = lateness_max\nscope = 0-1\nop = >\nthreshold = 1\naction = log\n",
         "r.ini:1: rule 'a': metric lateness_max is job-wide and takes no scope"},
        {"[rule a]\nmetric = step_time\nover = steps\n",
         "r.ini:3: over must be 'window' or 'step'"},
        {"[rule a]\nmetric = step_time\nover = step\nscope = 0-1\nop = >\nthreshold = 1\n"
         "action = log\n",
         "r.ini:1: rule 'a': metric step_time is job-wide and takes no scope"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[320] = "";
        const char *path = write_file("r.ini", cases[i].text);
        mw_rules_t *rs = mw__rules_load(path, err, sizeof err);
        if (rs)
            fail_msg("case %zu loaded", i);
        if (!strstr(err, cases[i].msg))
            fail_msg("case %zu: '%s' lacks '%s'", i, err, cases[i].msg);
    }
    char err[320];
    assert_null(mw__rules_load("/nonexistent/r.ini", err, sizeof err));
    assert_non_null(strstr(err, "/nonexistent/r.ini: "));
}

/* action = capture (docs/steering.md): `capture = N` in 1..MW_CAPTURE_MAX_WINDOWS is
 * required, `ranks` optional; K is the first window starting after now + the lead. */
static void test_capture_action(void **state)
{
    (void)state;
    static const struct {
        const char *text, *msg;
    } cases[] = {
        {"[rule a]\nmetric = dropped\nop = >\nthreshold = 1\naction = capture\n",
         "r.ini:1: rule 'a': action capture needs 'capture = N' (windows)"},
        {"[rule a]\naction = capture\ncapture = 0\n",
         "r.ini:3: capture '0': expected windows, 1..1000"},
        {"[rule a]\naction = capture\ncapture = 1001\n",
         "r.ini:3: capture '1001': expected windows, 1..1000"},
        {"[rule a]\naction = capture\ncapture = 3@7\n", "r.ini:3: capture '3@7'"},
        {"[rule a]\naction = capture\ncapture = -2\n", "r.ini:3: capture '-2'"},
        {"[rule a]\naction = capture\ncapture = 2\nranks = 1-\n", "r.ini:4: ranks '1-'"},
        {"[rule a]\naction = trace\n", "r.ini:2: unknown action 'trace' (log, exec, steer, "
                                       "capture)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[320] = "";
        mw_rules_t *rs = mw__rules_load(write_file("r.ini", cases[i].text), err, sizeof err);
        if (rs)
            fail_msg("case %zu loaded", i);
        if (!strstr(err, cases[i].msg))
            fail_msg("case %zu: '%s' lacks '%s'", i, err, cases[i].msg);
    }
    /* Valid, with and without ranks: loads, and fires like any rule (the message cannot be
     * sent here, there is no steering socket: a warning, never a failure). */
    col->rules = load("[rule cap]\nmetric = rank_mpi_fraction\nop = >=\nthreshold = 0\n"
                      "action = capture\ncapture = 1000\ncooldown = 5\n"
                      "[rule cap2]\nmetric = missing_ranks\nop = >\nthreshold = 0\n"
                      "action = capture\ncapture = 2\nranks = 0,2-3\n");
    assert_int_equal(mw__rules_count(col->rules), 2);
    window(10, 0, 0, 0, 0);
    window(11, 0, 0, 0, 0);
    assert_int_equal(mw__rules_fired(col->rules, "cap"), 1);
    assert_int_equal(mw__rules_fired(col->rules, "cap2"), 0);
    /* K: the window after the one holding now + 200 ms, never before index + 1. */
    const uint64_t W = 100 * MW_NS_PER_MS, lead = MW_RULES_CAPTURE_LEAD_NS;
    assert_int_equal(lead, 200 * MW_NS_PER_MS);
    assert_int_equal(mw__rules_capture_first(10, W, 12 * W), 15);
    assert_int_equal(mw__rules_capture_first(10, W, 12 * W + W - 1), 15);
    assert_int_equal(mw__rules_capture_first(10, W, 13 * W), 16);
    assert_int_equal(mw__rules_capture_first(20, W, 12 * W), 21);
    assert_int_equal(mw__rules_capture_first(5, 10 * MW_NS_PER_MS, 1000 * MW_NS_PER_MS), 121);
    assert_int_equal(mw__rules_capture_first(5, 0, 12 * W), 6);
}

/* A capture range around the firing (docs/steering.md): `capture = -5..+3` asks for the
 * windows firing-5 .. firing+3, sent as mpiwatch.capture=9@K with K = firing - 5 (the ranks
 * answer the past ones from their flight recorder); strict parsing; a range that starts before
 * window 0 is cut there. The request is checked through its log line (no steering socket). */
static void test_capture_range(void **state)
{
    (void)state;
    static const struct {
        const char *text, *msg;
    } cases[] = {
        {"[rule a]\naction = capture\ncapture = -5..\n",
         "r.ini:3: capture '-5..': expected a range"},
        {"[rule a]\naction = capture\ncapture = 3..-5\n", "r.ini:3: capture '3..-5'"},
        {"[rule a]\naction = capture\ncapture = -5..+3x\n", "r.ini:3: capture '-5..+3x'"},
        {"[rule a]\naction = capture\ncapture = -600..+600\n", "r.ini:3: capture '-600..+600'"},
        {"[rule a]\naction = capture\ncapture = -5...3\n", "r.ini:3: capture '-5...3'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[320] = "";
        mw_rules_t *rs = mw__rules_load(write_file("r.ini", cases[i].text), err, sizeof err);
        if (rs)
            fail_msg("case %zu loaded", i);
        if (!strstr(err, cases[i].msg))
            fail_msg("case %zu: '%s' lacks '%s'", i, err, cases[i].msg);
    }
    col->rules = load("[rule back]\nmetric = rank_mpi_fraction\nop = >=\nthreshold = 0.5\n"
                      "action = capture\ncapture = -5..+3\n");
    char *text = NULL;
    size_t len = 0;
    FILE *log = open_memstream(&text, &len);
    assert_non_null(log);
    mw_collector_set_log(log, MW_LOG_INFO);
    window(10, 0, 0, 0, 0);   /* does not fire */
    window(11, 600, 0, 0, 0); /* fires: windows 6..14 */
    window(102, 0, 0, 0, 0);  /* does not fire */
    win.index = 2;            /* fires near the start: windows 0..5 */
    pm[1] = 900;
    mw__rules_window(col->rules, col, &win);
    mw_collector_set_log(NULL, MW_LOG_ERROR);
    fclose(log);
    assert_int_equal(mw__rules_fired(col->rules, "back"), 2);
    if (!strstr(text, "rule 'back': capture of windows 6..14"))
        fail_msg("no capture of windows 6..14 in: %s", text);
    if (!strstr(text, "rule 'back': capture of windows 0..5"))
        fail_msg("no capture of windows 0..5 in: %s", text);
    free(text);
}

static void test_reload_keeps_old(void **state)
{
    (void)state;
    static char path[128];
    snprintf(path, sizeof path, "%s/r.ini", dir);
    opt.rules = path;
    col->rules = load("[rule m]\nmetric = missing_ranks\nop = >\nthreshold = 0\nfor = 2\n"
                      "action = log\n");
    win.ranks_missing = 2;
    window(0, 0, 0, 0, 0);
    mw_rules_t *before = col->rules;
    write_file("r.ini", "[rule m]\nmetric = nonsense\n");
    assert_int_equal(mw__rules_reload(col), -1);
    assert_ptr_equal(col->rules, before);
    /* The same rule again plus one: its persistence count survives the reload. */
    write_file("r.ini", "[rule m]\nmetric = missing_ranks\nop = >\nthreshold = 0\nfor = 2\n"
                        "action = log\n[rule n]\nmetric = missing_ranks\nop = >\nthreshold = 0\n"
                        "action = log\n");
    assert_int_equal(mw__rules_reload(col), 0);
    assert_int_equal(mw__rules_count(col->rules), 2);
    window(1, 0, 0, 0, 0);
    assert_int_equal(mw__rules_fired(col->rules, "m"), 1);
    assert_int_equal(mw__rules_fired(col->rules, "n"), 1);
    opt.rules = NULL;
}

/* Ticks the rules until no program runs (at most `max_s` seconds). */
static void wait_programs(double max_s)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        mw__rules_tick(col->rules, col, (uint64_t)t.tv_sec * MW_NS_PER_S + (uint64_t)t.tv_nsec);
        if (!mw__rules_running(col->rules))
            return;
        if ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 > max_s)
            fail_msg("programs still running after %g s", max_s);
        usleep(10000);
    }
}

static void set_clock(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    col->now.mono_ns = (uint64_t)t.tv_sec * MW_NS_PER_S + (uint64_t)t.tv_nsec;
}

/* The collector's job: 4 ranks on one node of the given name, the job of the given name. */
static void job_on_node(char *node, const char *name)
{
    static char *nodes[1];
    nodes[0] = node;
    col->job.size = 4;
    col->job.ranks = calloc(4, sizeof *col->job.ranks);
    assert_non_null(col->job.ranks);
    col->job.nodes = nodes;
    col->job.n_nodes = 1;
    snprintf(col->job.job, sizeof col->job.job, "%s", name);
}

static void test_exec_metacharacters(void **state)
{
    (void)state;
    /* A job whose rank 1 is on a node with a name full of shell syntax. */
    static char node[] = "n1 $(touch x);`touch x`'\"|&>x";
    job_on_node(node, "job;$(touch x)");
    char text[1024];
    snprintf(text, sizeof text,
             "[rule r;$(touch x)]\nmetric = rank_mpi_fraction\nop = >\nthreshold = 0.5\n"
             "action = exec\n"
             "exec = %s %s/argv.txt {rule} \"a b\" '$(touch x)' ';' `touch x` {node} "
             "pre-{rank}-{value}-post {window}{node}\n",
             MW_RULES_ARGV_SCRIPT, dir);
    col->rules = load(text);
    assert_int_equal(chdir(dir), 0);
    set_clock();
    window(7, 100, 900, 100, 100);
    assert_int_equal(mw__rules_fired(col->rules, "r;$(touch x)"), 1);
    wait_programs(10);
    assert_non_null(strstr(mw__rules_last_exit(col->rules), "status=exit 0"));

    char path[128], line[256];
    snprintf(path, sizeof path, "%s/argv.txt", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    /* The node and job names come from peers: they arrive sanitised (fire_clean). */
    const char *expect[] = {"r;$(touch x)",
                            "a b",
                            "$(touch x)",
                            ";",
                            "`touch",
                            "x`",
                            "n1___touch_x___touch_x______x",
                            "pre-1-0.9-post",
                            "7n1___touch_x___touch_x______x",
                            "ENV r;$(touch x)",
                            "ENV 1",
                            "ENV 0.9",
                            "ENV 7",
                            "ENV job___touch_x_",
                            "ENV n1___touch_x___touch_x______x",
                            "ENV -1", /* MPIWATCH_STEP of a window rule */
                            "ENV "};  /* MPIWATCH_FUNCTION: only for the lateness metrics */
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
        assert_non_null(fgets(line, sizeof line, f));
        line[strcspn(line, "\n")] = '\0';
        assert_string_equal(line, expect[i]);
    }
    assert_null(fgets(line, sizeof line, f));
    fclose(f);
    struct stat st;
    snprintf(path, sizeof path, "%s/x", dir);
    assert_int_not_equal(stat(path, &st), 0); /* nothing ran "touch x" or redirected to x */
    assert_int_not_equal(stat("x", &st), 0);
    assert_int_equal(chdir("/"), 0);
    col->job.nodes = NULL;
    col->job.n_nodes = 0;
}

static void test_exec_timeout(void **state)
{
    (void)state;
    col->rules = load("[rule slow]\nmetric = dropped\nop = >\nthreshold = 0\naction = exec\n"
                      "exec = sleep 30\ntimeout = 0.2\n"
                      "[rule fail]\nmetric = dropped\nop = >\nthreshold = 0\naction = exec\n"
                      "exec = /nonexistent/program\n");
    win.samples_dropped = 1;
    set_clock();
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    window(0, 0, 0, 0, 0);
    assert_int_equal(mw__rules_running(col->rules), 1); /* the missing program did not start */
    /* A second firing while the first program runs is skipped (max_running = 1). */
    window(1, 0, 0, 0, 0);
    assert_int_equal(mw__rules_running(col->rules), 1);
    wait_programs(10);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_true(t1.tv_sec - t0.tv_sec < 5);
    assert_non_null(strstr(mw__rules_last_exit(col->rules), "rule=slow"));
    assert_non_null(strstr(mw__rules_last_exit(col->rules), "status=signal 15 timeout"));
}

/* Peer-chosen names that look like options arrive with their leading '-' or '.' replaced,
 * alone or inside a word, in argv and in the environment. */
static void test_exec_option_names(void **state)
{
    (void)state;
    static char node[] = "-rf";
    job_on_node(node, "--help");
    char text[512];
    snprintf(text, sizeof text,
             "[rule r]\nmetric = rank_mpi_fraction\nop = >\nthreshold = 0.5\naction = exec\n"
             "exec = %s %s/argv.txt {job} {node} --name={job} {node}{job}\n",
             MW_RULES_ARGV_SCRIPT, dir);
    col->rules = load(text);
    set_clock();
    window(3, 100, 900, 100, 100);
    assert_int_equal(mw__rules_fired(col->rules, "r"), 1);
    wait_programs(10);
    assert_non_null(strstr(mw__rules_last_exit(col->rules), "status=exit 0"));
    char path[128], line[256];
    snprintf(path, sizeof path, "%s/argv.txt", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    const char *expect[] = {"_-help", "_rf",     "--name=_-help", "_rf_-help",  "ENV r",
                            "ENV 1",  "ENV 0.9", "ENV 3",         "ENV _-help", "ENV _rf"};
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
        assert_non_null(fgets(line, sizeof line, f));
        line[strcspn(line, "\n")] = '\0';
        assert_string_equal(line, expect[i]);
    }
    fclose(f);
    col->job.nodes = NULL;
    col->job.n_nodes = 0;
}

/* A lateness batch with one window summary: differential lateness diff_ms on rank 3's
 * MPI_Isend at step 42, `events` events, lost time lost_ms of 4 ranks x 100 ms. */
static void lateness(uint64_t index, double diff_ms, uint64_t events, double lost_ms)
{
    Mpiwatch__LatenessSummary s = MPIWATCH__LATENESS_SUMMARY__INIT, *sp = &s;
    s.key = index;
    s.events = events;
    s.diff_max_ns = (int64_t)(diff_ms * 1e6);
    s.lateness_max_ns = s.diff_max_ns + 1000000;
    s.diff_rank = 3;
    s.lateness_rank = 1;
    s.diff_fn = mw_fn_id("MPI_Isend");
    s.lateness_fn = mw_fn_id("MPI_Recv");
    s.diff_step = 42;
    s.lateness_step = 43;
    s.traced_ranks = 4;
    s.window_ns = 100 * MW_NS_PER_MS;
    s.lost_ns = (int64_t)(lost_ms * 1e6);
    s.lateness_share = lost_ms / 400.0;
    Mpiwatch__Lateness b = MPIWATCH__LATENESS__INIT;
    b.window = index;
    b.n_windows = 1;
    b.windows = &sp;
    mw__rules_lateness(col->rules, col, &b);
}

static void test_lateness_metrics(void **state)
{
    (void)state;
    char text[1024];
    snprintf(text, sizeof text,
             "[rule d]\nmetric = diff_lateness_max\nop = >\nthreshold = 0.01\nfor = 2\n"
             "cooldown = 3\naction = exec\nexec = %s %s/argv.txt {rank} {function} {step} "
             "{metric}\n"
             "[rule l]\nmetric = lateness_max\nop = >\nthreshold = 0.05\naction = steer\n"
             "steer = app.x=1\nranks = {rank}\n"
             "[rule s]\nmetric = lateness_share\nop = >\nthreshold = 0.5\naction = log\n",
             MW_RULES_ARGV_SCRIPT, dir);
    col->rules = load(text);
    set_clock();
    /* Windows never fire them. */
    win.samples_dropped = 5;
    for (uint64_t k = 0; k < 5; k++)
        window(k, 1000, 1000, 1000, 0);
    assert_int_equal(mw__rules_fired(col->rules, "d"), 0);
    /* 20 ms from window 10: fires at 11 (for 2), not at 12..14 (cooldown 3), at 15. */
    static const uint64_t fired[] = {0, 1, 1, 1, 1, 2};
    for (uint64_t k = 0; k < 6; k++) {
        lateness(10 + k, 20, 10, 100);
        if (mw__rules_fired(col->rules, "d") != fired[k])
            fail_msg("window %llu: fired %llu times, want %llu", (unsigned long long)(10 + k),
                     (unsigned long long)mw__rules_fired(col->rules, "d"),
                     (unsigned long long)fired[k]);
    }
    wait_programs(10);
    char path[128], line[256];
    snprintf(path, sizeof path, "%s/argv.txt", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    const char *expect[] = {"3",     "MPI_Isend", "42",       "diff_lateness_max",
                            "ENV d", "ENV 3",     "ENV 0.02", "ENV 11",
                            "ENV ",  "ENV ",      "ENV 42",   "ENV MPI_Isend"};
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
        assert_non_null(fgets(line, sizeof line, f));
        line[strcspn(line, "\n")] = '\0';
        assert_string_equal(line, expect[i]);
    }
    fclose(f);
    /* A window without events breaks the run; under the threshold nothing fires. */
    lateness(30, 20, 10, 100);
    lateness(31, 20, 0, 100);
    lateness(32, 20, 10, 100);
    assert_int_equal(mw__rules_fired(col->rules, "d"), 2);
    lateness(33, 20, 10, 100);
    assert_int_equal(mw__rules_fired(col->rules, "d"), 3);
    assert_int_equal(mw__rules_fired(col->rules, "l"), 0); /* 21 ms < 50 ms */
    lateness(40, 60, 10, 100);
    assert_int_equal(mw__rules_fired(col->rules, "l"), 1);
    /* lateness_share: 100 ms of 400 ms is 0.25; 300 of 400 is 0.75. */
    assert_int_equal(mw__rules_fired(col->rules, "s"), 0);
    lateness(50, 0, 10, 300);
    assert_int_equal(mw__rules_fired(col->rules, "s"), 1);
}

/* 1 while `pid` exists and is not a zombie (a zombie runs nothing; whoever is its parent
 * reaps it). */
static int running(long pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *e = strrchr(buf, ')'); /* the name may hold anything */
    return e && e[1] == ' ' && e[2] != 'Z' && e[2] != 'X';
}

/* The pid a program wrote into dir/name, waited for up to 10 s. */
static long read_pid(const char *name)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    for (int i = 0; i < 1000; i++) {
        FILE *f = fopen(path, "r");
        long pid = 0;
        if (f) {
            int ok = fscanf(f, "%ld", &pid) == 1;
            fclose(f);
            if (ok && pid > 1)
                return pid;
        }
        usleep(10000);
    }
    fail_msg("no pid in %s", path);
    return -1;
}

/* An exec action made of a shell and a grandchild it puts in the background. */
static void load_tree(double timeout_s)
{
    char text[1024];
    snprintf(text, sizeof text,
             "echo $$ >%s/leader.tmp && mv %s/leader.tmp %s/leader\n"
             "sleep 300 &\n"
             "echo $! >%s/grand.tmp && mv %s/grand.tmp %s/grand\n"
             "wait\n",
             dir, dir, dir, dir, dir, dir);
    write_file("tree.sh", text);
    snprintf(text, sizeof text,
             "[rule tree]\nmetric = dropped\nop = >\nthreshold = 0\naction = exec\n"
             "exec = sh %s/tree.sh\ntimeout = %g\n",
             dir, timeout_s);
    col->rules = load(text);
    win.samples_dropped = 1;
    set_clock();
    window(0, 0, 0, 0, 0);
    assert_int_equal(mw__rules_running(col->rules), 1);
}

/* Issue 12, defect 7: at the timeout the whole group goes, the grandchild too. */
static void test_exec_timeout_group(void **state)
{
    (void)state;
    load_tree(0.3);
    long leader = read_pid("leader"), grand = read_pid("grand");
    wait_programs(15);
    assert_non_null(strstr(mw__rules_last_exit(col->rules), "timeout"));
    int left = running(leader) + running(grand);
    if (running(grand))
        kill((pid_t)grand, SIGKILL); /* not left behind by the test either */
    assert_int_equal(left, 0);
}

/* Issue 12, defect 7: the collector exits (the rules are freed) while an action runs: the
 * action's group is stopped and reaped, nothing is left running with ppid 1. */
static void test_exec_stopped_at_exit(void **state)
{
    (void)state;
    load_tree(60);
    long leader = read_pid("leader"), grand = read_pid("grand");
    assert_true(running(leader));
    assert_true(running(grand));
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    mw__rules_free(col->rules);
    col->rules = NULL;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    /* Bounded: the kill grace and one second at most, with room for a loaded machine. */
    assert_true(t1.tv_sec - t0.tv_sec < 10);
    int left = running(leader) + running(grand);
    if (running(leader))
        kill((pid_t)leader, SIGKILL);
    if (running(grand))
        kill((pid_t)grand, SIGKILL);
    assert_int_equal(left, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_persistence_and_cooldown, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_imbalance, setup, teardown),
        cmocka_unit_test_setup_teardown(test_steps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_metrics_and_scopes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_invalid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_capture_action, setup, teardown),
        cmocka_unit_test_setup_teardown(test_capture_range, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reload_keeps_old, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exec_metacharacters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exec_timeout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exec_option_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lateness_metrics, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exec_timeout_group, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exec_stopped_at_exit, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
