/* test_ingest.c: every rejection reason, triggered by one crafted defect in a valid message.
 *
 * Each case starts from a message the collector accepts (checked), breaks one field, and
 * checks the verdict and the per-reason counter; a last group checks that a rejected message
 * leaves no state behind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fixture.h"

#define JOB "job-1"

static void full_sample(tm_msg_t *m, uint32_t rank, uint64_t w, uint64_t now)
{
    tm_sample(m, JOB, rank, w, now);
    tm_add_fn(m, fx_fn(0), 10, 10000, 500, 2000, 800);
    tm_add_fn(m, fx_fn(1), 2, 300, 100, 200, 64);
    tm_add_peer(m, 1 - rank, 2, 64);
    tm_add_occ(m, fx_fn(0), 3, 10000);
    tm_add_density(m, fx_fn(0), 3, 10, 1, 10);
    tm_add_density(m, fx_fn(0), -2, 11, 0, 1);
    tm_add_call(m, fx_fn(0), now - 1000, 2000, 8, -1);
}

static void expect_reject(fx_t *f, const tm_msg_t *m, mw_reject_t want)
{
    uint64_t before = want ? f->c->stats.rejected[want] : f->c->stats.accepted;
    assert_string_equal(mw__reject_name(fx_feed(f, m)), mw__reject_name(want));
    assert_int_equal(want ? f->c->stats.rejected[want] : f->c->stats.accepted, before + 1);
}

static void test_good_job(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    tm_msg_t m;
    fx_hellos(f, JOB, 2);
    for (uint32_t r = 0; r < 2; r++) {
        full_sample(&m, r, FX_W0, f->now.real_ns);
        expect_reject(f, &m, MW_ACCEPTED);
    }
    for (uint32_t r = 0; r < 2; r++) {
        tm_bye(&m, JOB, r);
        expect_reject(f, &m, MW_ACCEPTED);
    }
    assert_int_equal(f->c->stats.accepted, 6);
    assert_int_equal(f->c->job.ended, MW_END_COMPLETE);
    for (int r = 1; r < MW_REJECT_COUNT; r++)
        assert_int_equal(f->c->stats.rejected[r], 0);
    fx_free(f);
}

static void test_frame_level(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    tm_msg_t m;
    uint8_t *buf;
    tm_hello(&m, JOB, 0, 1, f->now.real_ns);
    size_t n = tm_pack(&m, &buf);

    assert_int_equal(mw_collector_frame(f->c, buf, n, 2, &f->now), MW_REJECT_MULTIPART);
    assert_int_equal(mw_collector_frame(f->c, buf, n - 3, 1, &f->now), MW_REJECT_DECODE);
    uint8_t junk[64];
    memset(junk, 0xff, sizeof junk);
    assert_int_equal(mw_collector_frame(f->c, junk, sizeof junk, 1, &f->now), MW_REJECT_DECODE);
    assert_int_equal(mw_collector_frame(f->c, "GET / HTTP/1.1\r\n\r\n", 18, 1, &f->now),
                     MW_REJECT_DECODE);
    uint8_t *big = calloc(1, MW_MAX_MESSAGE_BYTES + 1);
    assert_non_null(big);
    assert_int_equal(mw_collector_frame(f->c, big, MW_MAX_MESSAGE_BYTES + 1, 1, &f->now),
                     MW_REJECT_TOO_LARGE);
    free(big);
    /* An empty frame decodes as an envelope with version 0. */
    assert_int_equal(mw_collector_frame(f->c, "", 0, 1, &f->now), MW_REJECT_VERSION);

    assert_int_equal(f->c->stats.rejected[MW_REJECT_MULTIPART], 1);
    assert_int_equal(f->c->stats.rejected[MW_REJECT_DECODE], 3);
    assert_int_equal(f->c->stats.rejected[MW_REJECT_TOO_LARGE], 1);
    assert_int_equal(f->c->stats.rejected[MW_REJECT_VERSION], 1);
    assert_int_equal(f->c->stats.accepted, 0);
    assert_false(f->c->job.active);
    /* The valid frame itself is still fine after all that. */
    assert_int_equal(mw_collector_frame(f->c, buf, n, 1, &f->now), MW_ACCEPTED);
    free(buf);
    fx_free(f);
}

static void test_version_and_body(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    tm_msg_t m;
    tm_hello(&m, JOB, 0, 1, f->now.real_ns);
    m.env.version = MW_PROTO_VERSION + 1;
    expect_reject(f, &m, MW_REJECT_VERSION);
    m.env.version = 0;
    expect_reject(f, &m, MW_REJECT_VERSION);
    m.env.version = MW_PROTO_VERSION;
    m.env.body_case = MPIWATCH__ENVELOPE__BODY__NOT_SET;
    expect_reject(f, &m, MW_REJECT_NO_BODY);
    fx_free(f);
}

static void test_job_mismatch(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    tm_msg_t m;
    fx_hellos(f, JOB, 2);
    full_sample(&m, 0, FX_W0, f->now.real_ns);
    snprintf(m.job, sizeof m.job, "other");
    expect_reject(f, &m, MW_REJECT_JOB_MISMATCH);
    tm_hello(&m, "other", 1, 2, f->now.real_ns);
    expect_reject(f, &m, MW_REJECT_JOB_MISMATCH);
    tm_bye(&m, "other", 1);
    expect_reject(f, &m, MW_REJECT_JOB_MISMATCH);
    fx_free(f);
}

static void test_table_mismatch(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    tm_msg_t m;
    tm_hello(&m, JOB, 0, 1, f->now.real_ns);
    m.hello.function_count++;
    expect_reject(f, &m, MW_REJECT_TABLE_MISMATCH);
    tm_hello(&m, JOB, 0, 1, f->now.real_ns);
    m.hello.function_table_hash ^= 1;
    expect_reject(f, &m, MW_REJECT_TABLE_MISMATCH);
    assert_false(f->c->job.active);
    fx_free(f);
}

static void test_rank_range(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    tm_msg_t m;
    tm_hello(&m, JOB, 4, 4, f->now.real_ns);
    expect_reject(f, &m, MW_REJECT_RANK_RANGE);
    tm_hello(&m, JOB, 0, 0, f->now.real_ns);
    expect_reject(f, &m, MW_REJECT_RANK_RANGE);
    tm_hello(&m, JOB, 0, MW_MAX_RANKS + 1, f->now.real_ns);
    expect_reject(f, &m, MW_REJECT_RANK_RANGE);
    assert_false(f->c->job.active);

    fx_hellos(f, JOB, 2);
    tm_hello(&m, JOB, 1, 8, f->now.real_ns); /* the size changed */
    expect_reject(f, &m, MW_REJECT_RANK_RANGE);
    full_sample(&m, 0, FX_W0, f->now.real_ns);
    m.env.rank = 2;
    expect_reject(f, &m, MW_REJECT_RANK_RANGE);
    tm_bye(&m, JOB, 7);
    expect_reject(f, &m, MW_REJECT_RANK_RANGE);
    fx_free(f);
}

static void test_no_hello(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    tm_msg_t m;
    full_sample(&m, 0, FX_W0, f->now.real_ns);
    expect_reject(f, &m, MW_REJECT_NO_HELLO); /* no job at all */
    tm_bye(&m, JOB, 0);
    expect_reject(f, &m, MW_REJECT_NO_HELLO);

    tm_hello(&m, JOB, 0, 3, f->now.real_ns);
    expect_reject(f, &m, MW_ACCEPTED);
    full_sample(&m, 1, FX_W0, f->now.real_ns); /* rank 1 never said hello */
    expect_reject(f, &m, MW_REJECT_NO_HELLO);
    tm_bye(&m, JOB, 1);
    expect_reject(f, &m, MW_REJECT_NO_HELLO);

    tm_bye(&m, JOB, 0);
    expect_reject(f, &m, MW_ACCEPTED);
    full_sample(&m, 0, FX_W0, f->now.real_ns); /* after its bye */
    expect_reject(f, &m, MW_REJECT_NO_HELLO);
    fx_free(f);
}

static void test_duplicate(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    tm_msg_t m;
    fx_hellos(f, JOB, 2);
    full_sample(&m, 0, FX_W0, f->now.real_ns);
    expect_reject(f, &m, MW_ACCEPTED);
    expect_reject(f, &m, MW_REJECT_DUPLICATE);
    full_sample(&m, 0, FX_W0 - 1, f->now.real_ns); /* before the last one */
    expect_reject(f, &m, MW_REJECT_DUPLICATE);
    tm_bye(&m, JOB, 0);
    expect_reject(f, &m, MW_ACCEPTED);
    expect_reject(f, &m, MW_REJECT_DUPLICATE);
    fx_free(f);
}

static void test_timestamp(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    tm_msg_t m;
    const uint64_t day = MW_TIMESTAMP_TOLERANCE_NS;
    tm_hello(&m, JOB, 0, 2, f->now.real_ns + day + 1);
    expect_reject(f, &m, MW_REJECT_TIMESTAMP);
    tm_hello(&m, JOB, 0, 2, 0);
    expect_reject(f, &m, MW_REJECT_TIMESTAMP);
    fx_hellos(f, JOB, 2);

    full_sample(&m, 0, FX_W0, f->now.real_ns);
    m.sample.sent_ns = f->now.real_ns - 2 * day;
    expect_reject(f, &m, MW_REJECT_TIMESTAMP);
    full_sample(&m, 0, FX_W0, f->now.real_ns);
    m.sample.sent_ns = 0;
    expect_reject(f, &m, MW_REJECT_TIMESTAMP);
    full_sample(&m, 0, FX_W0 + 2 * day / TM_WINDOW_NS, f->now.real_ns);
    expect_reject(f, &m, MW_REJECT_TIMESTAMP);
    full_sample(&m, 0, 5, f->now.real_ns); /* window 5: 1970 */
    expect_reject(f, &m, MW_REJECT_TIMESTAMP);
    full_sample(&m, 0, UINT64_MAX, f->now.real_ns); /* window x window_ns would wrap */
    expect_reject(f, &m, MW_REJECT_TIMESTAMP);
    full_sample(&m, 0, FX_W0, f->now.real_ns);
    m.calls[0].start_ns = f->now.real_ns + 2 * day;
    expect_reject(f, &m, MW_REJECT_TIMESTAMP);

    /* Within a day either way is fine. */
    full_sample(&m, 0, FX_W0, f->now.real_ns + day - 1);
    expect_reject(f, &m, MW_ACCEPTED);
    fx_free(f);
}

/* ---- bad fields ------------------------------------------------------------------------- */

typedef struct {
    const char *what;
    void (*mutate)(tm_msg_t *m);
} mutation_t;

static void s_fn0(tm_msg_t *m)
{
    m->fs[0].fn = 0;
}
static void s_fn_big(tm_msg_t *m)
{
    m->fs[0].fn = MW_FN_COUNT;
}
static void s_fn_twice(tm_msg_t *m)
{
    m->fs[1].fn = m->fs[0].fn;
}
static void s_min_gt_max(tm_msg_t *m)
{
    m->fs[0].min_ns = m->fs[0].max_ns + 1;
}
static void s_hist_past(tm_msg_t *m)
{
    m->fs[0].hist_first = TM_BINS - 1;
    m->fs[0].n_hist = 2;
}
static void s_hist_first(tm_msg_t *m)
{
    m->fs[0].hist_first = TM_BINS;
}
static void s_peer_big(tm_msg_t *m)
{
    m->peer_rank[0] = 2;
}
static void s_peer_len(tm_msg_t *m)
{
    m->sample.n_peer_bytes = 0;
}
static void s_occ_len(tm_msg_t *m)
{
    m->sample.n_occ_ns = 0;
}
static void s_occ_sub(tm_msg_t *m)
{
    m->occ_sub[0] = TM_SUBSLOTS;
}
static void s_occ_fn(tm_msg_t *m)
{
    m->occ_fn[0] = 0;
}
static void s_dens_len(tm_msg_t *m)
{
    m->sample.n_density_count = 1;
}
static void s_dens_bin(tm_msg_t *m)
{
    m->density_bin[1] = TM_BINS;
}
static void s_dens_sub(tm_msg_t *m)
{
    m->density_sub[0] = TM_SUBSLOTS;
}
static void s_dens_end(tm_msg_t *m)
{
    m->density_end[0] = 2;
}
static void s_dens_fn(tm_msg_t *m)
{
    m->density_fn[1] = MW_FN_COUNT + 7;
}
static void s_call_fn(tm_msg_t *m)
{
    m->calls[0].fn = 0;
}
static void s_call_peer(tm_msg_t *m)
{
    m->calls[0].peer = 2;
}
static void s_call_peer_neg(tm_msg_t *m)
{
    m->calls[0].peer = -2;
}

static void h_window0(tm_msg_t *m)
{
    m->hello.window_ns = 0;
}
static void h_window_long(tm_msg_t *m)
{
    m->hello.window_ns = MW_MAX_WINDOW_NS + 1;
}
static void h_subslots0(tm_msg_t *m)
{
    m->hello.subslots = 0;
}
static void h_subslots_big(tm_msg_t *m)
{
    m->hello.subslots = MW_MAX_SUBSLOTS + 1;
}
static void h_bins0(tm_msg_t *m)
{
    m->hello.duration_bins = 0;
}
static void h_bins_big(tm_msg_t *m)
{
    m->hello.duration_bins = MW_MAX_DURATION_BINS + 1;
}
static void h_pu(tm_msg_t *m)
{
    m->hello.pu = -2;
}
static void h_host_utf8(tm_msg_t *m)
{
    snprintf(m->host, sizeof m->host, "n\xff\xfe");
}
static void h_host_ctl(tm_msg_t *m)
{
    snprintf(m->host, sizeof m->host, "n1\033[2J");
}
static void h_job_utf8(tm_msg_t *m)
{
    snprintf(m->job, sizeof m->job, "j\xc0\xaf");
}
static void h_host_long(tm_msg_t *m)
{
    static char longhost[MW_MAX_STRING + 2];
    memset(longhost, 'h', MW_MAX_STRING + 1);
    m->hello.host = longhost;
}

static void test_bad_field(void **state)
{
    (void)state;
    static const mutation_t samples[] = {
        {"fn 0", s_fn0},
        {"fn >= MW_FN_COUNT", s_fn_big},
        {"fn twice", s_fn_twice},
        {"min > max", s_min_gt_max},
        {"hist past the bins", s_hist_past},
        {"hist_first past the bins", s_hist_first},
        {"peer_rank >= size", s_peer_big},
        {"peer arrays of unequal length", s_peer_len},
        {"occupancy arrays of unequal length", s_occ_len},
        {"occ_sub >= subslots", s_occ_sub},
        {"occ_fn 0", s_occ_fn},
        {"density arrays of unequal length", s_dens_len},
        {"density_bin >= duration_bins", s_dens_bin},
        {"density_sub >= subslots", s_dens_sub},
        {"density_end 2", s_dens_end},
        {"density_fn out of range", s_dens_fn},
        {"call fn 0", s_call_fn},
        {"call peer >= size", s_call_peer},
        {"call peer < -1", s_call_peer_neg},
    };
    static const mutation_t hellos[] = {
        {"window_ns 0", h_window0},
        {"window_ns > 60 s", h_window_long},
        {"subslots 0", h_subslots0},
        {"subslots > max", h_subslots_big},
        {"duration_bins 0", h_bins0},
        {"duration_bins > max", h_bins_big},
        {"pu < -1", h_pu},
        {"host not UTF-8", h_host_utf8},
        {"host with control characters", h_host_ctl},
        {"job id overlong UTF-8", h_job_utf8},
        {"host too long", h_host_long},
    };
    fx_t *f = fx_new();
    tm_msg_t m;
    for (size_t i = 0; i < sizeof hellos / sizeof hellos[0]; i++) {
        print_message("hello: %s\n", hellos[i].what);
        tm_hello(&m, JOB, 0, 2, f->now.real_ns);
        hellos[i].mutate(&m);
        expect_reject(f, &m, MW_REJECT_BAD_FIELD);
        assert_false(f->c->job.active);
    }
    fx_hellos(f, JOB, 2);
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        print_message("sample: %s\n", samples[i].what);
        full_sample(&m, 0, FX_W0, f->now.real_ns);
        samples[i].mutate(&m);
        expect_reject(f, &m, MW_REJECT_BAD_FIELD);
    }
    /* A second hello of the job must agree on the grid. */
    tm_hello(&m, JOB, 1, 2, f->now.real_ns);
    m.hello.window_ns *= 2;
    expect_reject(f, &m, MW_REJECT_BAD_FIELD);
    /* None of the above left anything: the intact sample is accepted. */
    full_sample(&m, 0, FX_W0, f->now.real_ns);
    expect_reject(f, &m, MW_ACCEPTED);
    assert_int_equal(f->c->stats.rejected[MW_REJECT_BAD_FIELD],
                     sizeof samples / sizeof samples[0] + sizeof hellos / sizeof hellos[0] + 1);
    fx_free(f);
}

static void test_duplicate_hello(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    tm_msg_t m;
    fx_hellos(f, JOB, 2);
    tm_hello(&m, JOB, 1, 2, f->now.real_ns);
    expect_reject(f, &m, MW_ACCEPTED); /* the same process again: harmless */
    m.hello.pid = 4242;
    expect_reject(f, &m, MW_REJECT_DUPLICATE_HELLO);
    assert_int_equal(f->c->job.hellos, 2);
    assert_int_equal(f->c->job.ranks[1].pid, 1001);
    fx_free(f);
}

static void test_reject_leaves_no_state(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    tm_msg_t m;
    fx_hellos(f, JOB, 2);
    uint64_t activity = f->c->job.last_activity_ns;
    f->now.mono_ns += 5 * MW_NS_PER_MS;

    /* Everything valid except the very last field checked. */
    full_sample(&m, 0, FX_W0, f->now.real_ns);
    m.calls[0].peer = 9;
    expect_reject(f, &m, MW_REJECT_BAD_FIELD);
    const mw_job_t *job = &f->c->job;
    assert_int_equal(job->fn[fx_fn(0)].count, 0);
    assert_int_equal(job->rank_fn.n, 0);
    assert_int_equal(job->pairs.n, 0);
    assert_int_equal(job->samples, 0);
    assert_int_equal(job->ranks[0].samples, 0);
    assert_int_equal(job->last_activity_ns, activity); /* a bad message is not a sign of life */
    assert_int_equal(mw__merge_last_window(&f->c->merge, 0), -1);
    assert_false(f->c->merge.started);

    full_sample(&m, 0, FX_W0, f->now.real_ns);
    expect_reject(f, &m, MW_ACCEPTED);
    assert_int_equal(job->fn[fx_fn(0)].count, 10);
    assert_int_equal(mw__merge_last_window(&f->c->merge, 0), (int64_t)FX_W0);
    fx_free(f);
}

static void test_new_job_after_end(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    tm_msg_t m;
    fx_hellos(f, JOB, 1);
    full_sample(&m, 0, FX_W0, f->now.real_ns);
    m.peer_rank[0] = 0;
    expect_reject(f, &m, MW_ACCEPTED);
    tm_bye(&m, JOB, 0);
    expect_reject(f, &m, MW_ACCEPTED);
    assert_int_equal(f->c->job.ended, MW_END_COMPLETE);

    /* A straggler of the ended job is refused, a hello starts the next job afresh. */
    full_sample(&m, 0, FX_W0 + 1, f->now.real_ns);
    expect_reject(f, &m, MW_REJECT_NO_HELLO);
    tm_hello(&m, "job-2", 0, 3, f->now.real_ns);
    expect_reject(f, &m, MW_ACCEPTED);
    assert_string_equal(f->c->job.job, "job-2");
    assert_int_equal(f->c->job.size, 3);
    assert_int_equal(f->c->job.fn[fx_fn(0)].count, 0);
    assert_int_equal(f->c->job.ended, MW_END_NONE);
    assert_int_equal(f->c->stats.jobs, 2);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_job),          cmocka_unit_test(test_frame_level),
        cmocka_unit_test(test_version_and_body),  cmocka_unit_test(test_job_mismatch),
        cmocka_unit_test(test_table_mismatch),    cmocka_unit_test(test_rank_range),
        cmocka_unit_test(test_no_hello),          cmocka_unit_test(test_duplicate),
        cmocka_unit_test(test_timestamp),         cmocka_unit_test(test_bad_field),
        cmocka_unit_test(test_duplicate_hello),   cmocka_unit_test(test_reject_leaves_no_state),
        cmocka_unit_test(test_new_job_after_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
