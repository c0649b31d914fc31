/* test_summary.c: the summary and stats JSON (exact keys, exact integers, sorting), the text
 * report, the live view's text, and option parsing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cJSON.h>
#include <stdio.h>
#include <unistd.h>

#include "fixture.h"
#include "report.h"
#include "publish.h"
#include "summary.h"

#define JOB "sum-job"

/* Checks that obj has exactly the listed keys, in any order. */
static void assert_keys(const cJSON *obj, const char *const *keys, int n)
{
    assert_true(cJSON_IsObject(obj));
    assert_int_equal(cJSON_GetArraySize(obj), n);
    for (int i = 0; i < n; i++) {
        if (!cJSON_HasObjectItem(obj, keys[i]))
            fail_msg("missing key '%s'", keys[i]);
    }
}

static double num(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsNumber(v))
        fail_msg("'%s' is not a number", key);
    return v->valuedouble;
}

/* A 3-rank job: rank 2 says hello late and sends nothing; ranks talk in a ring. */
static fx_t *sample_job(void)
{
    fx_t *f = fx_new();
    fx_hellos(f, JOB, 3);
    for (uint64_t k = 0; k < 3; k++) {
        for (uint32_t r = 0; r < 2; r++) {
            tm_msg_t m;
            tm_sample(&m, JOB, r, FX_W0 + k, f->now.real_ns);
            tm_add_fn(&m, fx_fn(0), 10, 1000 + r, 50, 200, 80);
            if (r == 1)
                tm_add_fn(&m, fx_fn(1), 2, 30, 10, 20, 4096);
            tm_add_fn(&m, fx_fn(3), 0, 0, 0, 0, 0); /* counted nothing: not in the summary */
            tm_add_peer(&m, 1 - r, 2, 4096);
            m.sample.samples_dropped_total = r == 0 ? k : 0;
            m.sample.records_dropped = r == 1 ? 5 : 0;
            assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
        }
    }
    tm_msg_t m;
    for (uint32_t r = 0; r < 3; r++) {
        tm_bye(&m, JOB, r);
        m.bye.records_dropped_total = r == 1 ? 12 : 0; /* less than the 15 in its samples */
        m.bye.samples_dropped_total = r == 0 ? 4 : 0;  /* more than its samples said */
        assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    }
    return f;
}

static void test_summary_keys_and_values(void **state)
{
    (void)state;
    fx_t *f = sample_job();
    char *text = mw_summary_json(f->c);
    assert_non_null(text);
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);

    static const char *const top[] = {"ranks",    "windows", "dropped", "late",  "functions",
                                      "per_rank", "pairs",   "nodes",   "missed"};
    assert_keys(root, top, 9);
    /* No rank was dormant (docs/shim.md "Dormant mode"): no section (assert_keys above). */
    assert_int_equal(num(root, "ranks"), 3);
    assert_int_equal(num(root, "windows"), 3);
    assert_int_equal(num(root, "late"), 0);
    assert_int_equal(num(root, "dropped"), 4 + 15); /* max samples (bye) + max records */

    static const char *const fkeys[] = {"count", "time_ns", "bytes"};
    const cJSON *fns = cJSON_GetObjectItemCaseSensitive(root, "functions");
    assert_int_equal(cJSON_GetArraySize(fns), 2);
    const cJSON *ar = cJSON_GetObjectItemCaseSensitive(fns, "MPI_Allreduce");
    assert_keys(ar, fkeys, 3);
    assert_int_equal(num(ar, "count"), 60);
    assert_int_equal(num(ar, "time_ns"), 3 * 1000 + 3 * 1001);
    assert_int_equal(num(ar, "bytes"), 480);
    const cJSON *send = cJSON_GetObjectItemCaseSensitive(fns, "MPI_Send");
    assert_keys(send, fkeys, 3);
    assert_int_equal(num(send, "count"), 6);
    assert_null(cJSON_GetObjectItemCaseSensitive(fns, "MPI_Barrier"));

    static const char *const rkeys[] = {"rank", "host", "mpi_time_ns", "functions",
                                        /* placement (docs/topology.md) */
                                        "node", "pu", "core", "l3", "package", "numa", "bound",
                                        "pus",
                                        /* loss accounting (docs/collector.md) */
                                        "missed"};
    const cJSON *per_rank = cJSON_GetObjectItemCaseSensitive(root, "per_rank");
    assert_int_equal(cJSON_GetArraySize(per_rank), 3);
    for (int i = 0; i < 3; i++) {
        const cJSON *r = cJSON_GetArrayItem(per_rank, i);
        assert_keys(r, rkeys, 13);
        assert_int_equal(num(r, "rank"), i);
        char host[16];
        snprintf(host, sizeof host, "node%d", i / 2);
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(r, "host")->valuestring, host);
        const cJSON *rf = cJSON_GetObjectItemCaseSensitive(r, "functions");
        assert_int_equal(cJSON_GetArraySize(rf), i == 0 ? 1 : i == 1 ? 2 : 0);
        const cJSON *e;
        cJSON_ArrayForEach(e, rf) assert_keys(e, fkeys, 3);
    }
    const cJSON *r1 = cJSON_GetArrayItem(per_rank, 1);
    assert_int_equal(num(r1, "mpi_time_ns"), 3 * 1001 + 3 * 30);
    const cJSON *r1send = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(r1, "functions"), "MPI_Send");
    assert_int_equal(num(r1send, "bytes"), 3 * 4096);

    static const char *const pkeys[] = {"src", "dst", "messages", "bytes"};
    const cJSON *pairs = cJSON_GetObjectItemCaseSensitive(root, "pairs");
    assert_int_equal(cJSON_GetArraySize(pairs), 2);
    for (int i = 0; i < 2; i++) {
        const cJSON *p = cJSON_GetArrayItem(pairs, i);
        assert_keys(p, pkeys, 4);
        assert_int_equal(num(p, "src"), i); /* sorted by (src, dst) */
        assert_int_equal(num(p, "dst"), 1 - i);
        assert_int_equal(num(p, "messages"), 6);
        assert_int_equal(num(p, "bytes"), 3 * 4096);
    }
    cJSON_Delete(root);
    free(text);
    fx_free(f);
}

static void test_summary_exact_integers(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    fx_hellos(f, JOB, 1);
    tm_msg_t m;
    tm_sample(&m, JOB, 0, FX_W0, f->now.real_ns);
    tm_add_fn(&m, fx_fn(0), 1, (1ull << 60) + 1, 1, 1, 123456789012345678ull);
    tm_add_fn(&m, fx_fn(1), 1200000, 1200000, 1, 1, 0);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    char *text = mw_summary_json(f->c);
    assert_non_null(text);
    /* Beyond 2^53 and round numbers alike are printed as exact integers. */
    assert_non_null(strstr(text, "1152921504606846977"));
    assert_non_null(strstr(text, "123456789012345678"));
    assert_non_null(strstr(text, "1200000"));
    assert_null(strstr(text, "e+"));
    assert_null(strstr(text, "E+"));
    free(text);
    fx_free(f);
}

static void test_summary_without_job_and_silent_rank(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    char *text = mw_summary_json(f->c); /* no job yet: every key, empty */
    assert_non_null(text);
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    static const char *const top[] = {"ranks",    "windows", "dropped", "late",  "functions",
                                      "per_rank", "pairs",   "nodes",   "missed"};
    assert_keys(root, top, 9);
    assert_int_equal(num(root, "ranks"), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "per_rank")), 0);
    cJSON_Delete(root);
    free(text);

    /* Rank 1 of 3 never says hello; the job ends by silence: it is dead, not in per_rank. */
    tm_msg_t m;
    for (uint32_t r = 0; r < 3; r += 2) {
        tm_hello(&m, JOB, r, 3, f->now.real_ns);
        assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    }
    fx_advance(f, f->opt.silence_timeout_ms);
    assert_int_equal(f->c->job.ended, MW_END_SILENCE);
    assert_int_equal(f->c->job.dead, 3);
    text = mw_summary_json(f->c);
    root = cJSON_Parse(text);
    assert_non_null(root);
    const cJSON *per_rank = cJSON_GetObjectItemCaseSensitive(root, "per_rank");
    assert_int_equal(cJSON_GetArraySize(per_rank), 2);
    assert_int_equal(num(cJSON_GetArrayItem(per_rank, 0), "rank"), 0);
    assert_int_equal(num(cJSON_GetArrayItem(per_rank, 1), "rank"), 2);
    cJSON_Delete(root);
    free(text);
    fx_free(f);
}

static char *read_all(const char *path)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    return buf;
}

static void test_files_written_at_job_end(void **state)
{
    (void)state;
    char dir[] = "/tmp/mw-test-summary-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char summary[128], stats[128], report[128], tmp[140];
    snprintf(summary, sizeof summary, "%s/summary.json", dir);
    snprintf(stats, sizeof stats, "%s/stats.json", dir);
    snprintf(report, sizeof report, "%s/report.txt", dir);

    fx_t *f = fx_new();
    f->opt.summary_json = strdup(summary);
    f->opt.stats_json = strdup(stats);
    f->opt.report = strdup(report);
    fx_hellos(f, JOB, 1);
    assert_int_equal(mw_collector_frame(f->c, "\xff\xff\xff", 3, 1, &f->now), MW_REJECT_DECODE);
    tm_msg_t m;
    tm_sample(&m, JOB, 0, FX_W0, f->now.real_ns);
    tm_add_fn(&m, fx_fn(0), 4, 400, 100, 100, 32);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    assert_null(read_all(summary)); /* nothing before the job ends */
    tm_bye(&m, JOB, 0);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);

    char *text = read_all(summary);
    assert_non_null(text);
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    assert_int_equal(num(root, "ranks"), 1);
    assert_int_equal(num(root, "windows"), 1);
    const cJSON *ar = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(root, "functions"), "MPI_Allreduce");
    assert_int_equal(num(ar, "count"), 4);
    cJSON_Delete(root);

    text = read_all(stats);
    assert_non_null(text);
    root = cJSON_Parse(text);
    assert_non_null(root);
    static const char *const skeys[] = {"accepted",
                                        "rejected",
                                        "late",
                                        "missed",
                                        "windows",
                                        "partial_windows",
                                        "close_latency_ms_p50",
                                        "close_latency_ms_p99",
                                        "close_latency_ms_max",
                                        "close_wait_ms_p50",
                                        "close_wait_ms_p99"};
    assert_keys(root, skeys, 11);
    assert_int_equal(num(root, "accepted"), 3);
    assert_int_equal(num(root, "windows"), 1);
    const cJSON *rej = cJSON_GetObjectItemCaseSensitive(root, "rejected");
    assert_int_equal(cJSON_GetArraySize(rej), MW_REJECT_COUNT - 1);
    for (int r = 1; r < MW_REJECT_COUNT; r++)
        assert_int_equal(num(rej, mw__reject_name((mw_reject_t)r)), r == MW_REJECT_DECODE);
    cJSON_Delete(root);

    text = read_all(report);
    assert_non_null(text);
    assert_non_null(strstr(text, "MPI_Allreduce"));
    assert_non_null(strstr(text, JOB));
    assert_non_null(strstr(text, "rejected messages: 1 (decode 1)"));

    for (const char *p = summary; p; p = p == summary ? stats : p == stats ? report : NULL) {
        snprintf(tmp, sizeof tmp, "%s.tmp", p);
        assert_int_equal(access(tmp, F_OK), -1); /* renamed into place */
        unlink(p);
    }
    rmdir(dir);
    fx_free(f);
}

static void test_report_and_live_text(void **state)
{
    (void)state;
    fx_t *f = sample_job();
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    assert_non_null(mem);
    mw__report_write(f->c, mem);
    fclose(mem);
    assert_non_null(strstr(text, "MPI_Allreduce"));
    assert_non_null(strstr(text, "MPI_Send"));
    assert_non_null(strstr(text, "testprog"));
    assert_non_null(strstr(text, "ranks        3 (3 said hello, 3 said bye, 0 declared dead)"));
    assert_non_null(strstr(text, "hosts        2: node0, node1"));
    assert_null(strstr(text, "MPI_Barrier")); /* no calls */
    free(text);

    f->c->live.enabled = 1;
    mw_collector_t *c = f->c;
    for (unsigned fn = 0; fn < MW_FN_COUNT; fn++)
        c->live.recent_ns[fn] = 0;
    c->live.recent_ns[fx_fn(0)] = 300;
    c->live.recent_ns[fx_fn(1)] = 100;
    c->live.have_window = 1;
    c->live.last_fraction = 0.25;
    c->live.last_reporting = 2;
    char buf[2048];
    mw__live_format(&c->live, c, 1, buf, sizeof buf);
    assert_non_null(strstr(buf, "job " JOB));
    assert_non_null(strstr(buf, "ranks 2/3"));
    assert_non_null(strstr(buf, "MPI 25.0%"));
    assert_non_null(strstr(buf, "MPI_Allreduce"));
    assert_non_null(strstr(buf, "75.0%"));
    assert_true(strstr(buf, "MPI_Allreduce") < strstr(buf, "MPI_Send")); /* by time */
    mw__live_format(&c->live, c, 0, buf, sizeof buf);
    assert_non_null(strchr(buf, '\n'));
    assert_ptr_equal(strchr(buf, '\n'), buf + strlen(buf) - 1); /* one line */
    fx_free(f);
}

/* Rule, steer and action_exit events in the live view: exact lines, printed once each in the
 * one-line mode, the last MW_LIVE_EVENTS in the block, windows counted from the job's first. */
static void test_live_events(void **state)
{
    (void)state;
    fx_t *f = sample_job();
    mw_collector_t *c = f->c;
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    assert_non_null(mem);
    c->live.enabled = 1;
    c->live.tty = 0;
    c->live.out = mem;
    mw__publish_event(c, "job_start", "3 ranks");
    mw_window_t w;
    memset(&w, 0, sizeof w);
    w.window_ns = 500 * MW_NS_PER_MS;
    w.index = 1000;
    mw__live_window(&c->live, &w);
    w.index = 1037;
    mw__live_window(&c->live, &w);
    mw__publish_event(c, "rule",
                      "rule=imbalance metric=imbalance scope=all value=3.50132 window=1037 "
                      "rank=0 node=n1");
    mw__publish_event(c, "steer", "rebalance=1 ranks 0,1,2,3");
    mw__publish_event(c, "rank_dead", "rank 2"); /* not shown */
    w.index = 1040;
    mw__live_window(&c->live, &w);
    mw__publish_event(c, "action_exit", "rule=notify pid=42 status=exit 3");
    mw__publish_event(c, "rule",
                      "rule=losing-data metric=dropped scope=any value=12 window=1040 rank=-1");
    fflush(mem);
    assert_string_equal(text, "mpiwatch: w 37  rule imbalance fired: imbalance 3.5 (rank 0)\n"
                              "mpiwatch: w 37  steer rebalance=1 ranks 0,1,2,3\n"
                              "mpiwatch: w 40  rule notify: program ended, pid=42 status=exit 3\n"
                              "mpiwatch: w 40  rule losing-data fired: dropped 12\n");
    assert_int_equal(c->live.n_events, 4);

    /* A fifth event pushes the first out of the block. */
    mw__publish_event(c, "steer", "app.mode=fast");
    char buf[4096];
    mw__live_format(&c->live, c, 1, buf, sizeof buf);
    assert_null(strstr(buf, "rule imbalance fired"));
    const char *a = strstr(buf, "\n  w 37  steer rebalance=1 ranks 0,1,2,3\n");
    const char *b = strstr(buf, "\n  w 40  steer app.mode=fast\n");
    assert_non_null(a);
    assert_non_null(b);
    assert_true(a < b);                           /* oldest first */
    assert_true(b < strstr(buf, "\n  dropped ")); /* above the loss counters */
    /* The one-line status does not repeat them. */
    mw__live_format(&c->live, c, 0, buf, sizeof buf);
    assert_null(strstr(buf, "steer"));
    /* A new job starts with none; --quiet shows nothing. */
    mw__publish_event(c, "job_start", "3 ranks");
    assert_int_equal(c->live.n_events, 0);
    c->live.enabled = 0;
    size_t before = len;
    mw__publish_event(c, "rule", "rule=x metric=dropped value=1 window=1 rank=-1");
    fflush(mem);
    assert_int_equal(len, before);
    assert_int_equal(c->live.n_events, 0);
    c->live.out = stderr;
    fclose(mem);
    free(text);
    fx_free(f);
}

static void test_options(void **state)
{
    (void)state;
    mw_collector_options_t o;
    char err[256];
    mw_collector_options_defaults(&o);
    char *argv[] = {"mpiwatch-collector",
                    "--listen",
                    "ipc:///tmp/a,tcp://127.0.0.1:5555",
                    "-l",
                    "tcp://*:6000",
                    "--lateness-ms=250",
                    "--exit-after-job",
                    "--summary-json",
                    "s.json",
                    "-q",
                    "--allow-insecure", /* the wildcard endpoint is not local (docs/security.md) */
                    NULL};
    assert_int_equal(mw_collector_options_parse(&o, 11, argv, err, sizeof err), 0);
    assert_int_equal(o.n_listen, 3);
    assert_string_equal(o.listen[1], "tcp://127.0.0.1:5555");
    assert_string_equal(o.listen[2], "tcp://*:6000");
    assert_int_equal(o.lateness_ms, 250);
    assert_int_equal(o.silence_timeout_ms, 10000);
    assert_true(o.exit_after_job);
    assert_true(o.quiet);
    assert_string_equal(o.summary_json, "s.json");
    assert_int_equal(mw_collector_options_check(&o, err, sizeof err), 0);
    /* The generic setter (what the INI file and environment will use). */
    assert_int_equal(mw_collector_options_set(&o, "silence-timeout-ms", "5", err, sizeof err), 0);
    assert_int_equal(o.silence_timeout_ms, 5);
    assert_int_equal(mw_collector_options_set(&o, "quiet", "false", err, sizeof err), 0);
    assert_false(o.quiet);
    mw_collector_options_free(&o);

    char *bad[][3] = {
        {"x", "--lateness-ms", "soon"},
        {"x", "--lateness-ms", "0"},
        {"x", "--bogus", "1"},
        {"x", "--silence-timeout-ms", "-5"},
        {"x", "stray", "y"},
        {"x", "--quiet=maybe", "-q"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mw_collector_options_defaults(&o);
        assert_int_equal(mw_collector_options_parse(&o, 3, bad[i], err, sizeof err), -1);
        assert_true(strlen(err) > 0);
        mw_collector_options_free(&o);
    }
    char *missing[] = {"x", "--report", NULL};
    mw_collector_options_defaults(&o);
    assert_int_equal(mw_collector_options_parse(&o, 2, missing, err, sizeof err), -1);
    assert_int_equal(mw_collector_options_check(&o, err, sizeof err), -1); /* no --listen */
    mw_collector_options_free(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summary_keys_and_values),
        cmocka_unit_test(test_summary_exact_integers),
        cmocka_unit_test(test_summary_without_job_and_silent_rank),
        cmocka_unit_test(test_files_written_at_job_end),
        cmocka_unit_test(test_report_and_live_text),
        cmocka_unit_test(test_live_events),
        cmocka_unit_test(test_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
