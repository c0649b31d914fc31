/* test_regions_resend.c: how often the job description is sent again as call sites arrive.
 *
 * The attack (or a program that keeps reaching new call sites): a rank fills the job's tables
 * with long definitions once (here 4,000 sites of 3 x 500-byte strings: a 6 MB description),
 * then defines one new site in every window. The description was encoded and handed to every
 * output (recording, feed, history) again for each such window, so the collector wrote the
 * whole description per window (48 MB per window at the budget's cap). It must be sent again
 * at most once per so many windows as its size asks for, and still be complete at the job's end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "fixture.h"
#include "regions.h"
#include "window_pb.h"

#define BIG_SITES 4000u
#define STR_LEN 500u
#define LATER 40u /* windows that each define one new site */
#define QUIET 40u /* windows with nothing new */

static unsigned n_windows, n_sent;
static uint64_t seen_gen;

/* Called after the collector's own window path (collector.c), which sends the description first
 * when it is due: a change of rs_published_gen is one sending. */
static void on_window(const mw_window_t *w, void *user)
{
    (void)w;
    fx_t *f = user;
    n_windows++;
    if (f->c->job.rs_published_gen != seen_gen) {
        seen_gen = f->c->job.rs_published_gen;
        n_sent++;
    }
}

static void test_resend_rate(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    f->c->on_window = on_window;
    f->c->on_window_user = f;
    fx_hellos(f, "resend", 1);

    char *str = malloc(STR_LEN + 1);
    Mpiwatch__CallSiteDef *d = calloc(BIG_SITES, sizeof *d);
    Mpiwatch__CallSiteDef **dp = calloc(BIG_SITES, sizeof *dp);
    assert_true(str && d && dp);
    memset(str, 'x', STR_LEN);
    str[STR_LEN] = 0;
    for (uint32_t i = 0; i < BIG_SITES; i++) {
        mpiwatch__call_site_def__init(&d[i]);
        d[i].id = i + 1;
        d[i].module = d[i].function = d[i].file = str;
        d[i].offset = 0x1000u + i;
        d[i].line = 1;
        dp[i] = &d[i];
    }
    tm_msg_t m;
    tm_sample(&m, "resend", 0, FX_W0, FX_REAL_NS);
    m.sample.n_site_defs = BIG_SITES;
    m.sample.site_defs = dp;
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    assert_int_equal(f->c->job.rs.n_sites, BIG_SITES);
    assert_true(f->c->job.info_bytes > (uint64_t)BIG_SITES * 3 * STR_LEN);
    assert_int_equal(n_windows, 1);
    assert_int_equal(n_sent, 1); /* the first tables are sent at once */

    for (uint32_t k = 1; k <= LATER; k++) {
        fx_advance(f, TM_WINDOW_NS / MW_NS_PER_MS);
        tm_sample(&m, "resend", 0, FX_W0 + k, f->now.real_ns);
        tm_add_site_def(&m, BIG_SITES + k, "/bin/app", k, "f", "a.c", k);
        assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    }
    assert_int_equal(f->c->job.rs.n_sites, BIG_SITES + LATER);
    assert_int_equal(n_windows, 1 + LATER);
    /* ~6 MB at one MiB per window: once every 6 windows or so, never every window. */
    print_message("description sent %u times over %u windows\n", n_sent, n_windows);
    assert_true(n_sent >= 2);
    assert_true(n_sent <= 1 + LATER / 4);

    /* Nothing new for a while: the last tables go out without waiting for the job's end. */
    for (uint32_t k = LATER + 1; k <= LATER + QUIET; k++) {
        fx_advance(f, TM_WINDOW_NS / MW_NS_PER_MS);
        tm_sample(&m, "resend", 0, FX_W0 + k, f->now.real_ns);
        assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    }
    assert_int_equal(f->c->job.rs_published_gen, f->c->job.rs.gen);

    free(str);
    free(d);
    free(dp);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resend_rate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
