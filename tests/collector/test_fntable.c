/* test_fntable.c: ranks of different function tables in one job (docs/function-table.md).
 *
 * Rank 0 emulates another MPI: its hello names a table that lists this build's functions in
 * reverse order after a name this build does not have (MPIX_Test_extra), and every id it sends
 * (functions, occupancy, density, longest calls, peers, running totals, call sites, bye) is
 * one of that table's. Rank 1 is of this build's table, identified by its hash alone (as a
 * library older than the names). The merged window, the summary and the loss accounting must
 * attribute every call to the right NAME. Then the refusals: a table listing a name twice, a
 * bad name, a hash without names that is no known table; and the legacy table's hash is
 * understood.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "fixture.h"
#include "mw_fnmap.h"

#define JOB "job-fn"
#define EXTRA "MPIX_Test_extra"

/* The emulated table: entry 0 the extra, then this build's names from the last id down. */
static char *emu_names[MW_FN_COUNT];
static uint32_t emu_kinds[MW_FN_COUNT];
#define EMU_N ((size_t)MW_FN_COUNT) /* the extra + MW_FN_COUNT - 1 names */
#define EMU_EXTRA 1u

static uint32_t emu(unsigned local)
{
    return MW_FN_COUNT + 1u - local;
}

static void emu_setup(void)
{
    emu_names[0] = EXTRA;
    emu_kinds[0] = MW_KIND_COLL;
    for (unsigned local = 1; local < MW_FN_COUNT; local++) {
        emu_names[emu(local) - 1] = (char *)mw_fn_name(local);
        emu_kinds[emu(local) - 1] = mw_fn_kind(local);
    }
}

static void emu_hello(tm_msg_t *m, uint32_t rank, uint32_t size, uint64_t now)
{
    tm_hello(m, JOB, rank, size, now);
    m->hello.function_count = EMU_N;
    m->hello.function_table_hash = 12345; /* not a table this build knows: the names decide */
    m->hello.n_function_names = EMU_N;
    m->hello.function_names = emu_names;
    m->hello.n_function_kinds = EMU_N;
    m->hello.function_kinds = emu_kinds;
}

static int64_t num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    assert_non_null(v);
    return (int64_t)v->valuedouble;
}

static void test_two_tables(void **state)
{
    (void)state;
    emu_setup();
    fx_t *f = fx_new();
    tm_msg_t m;
    const unsigned ar = fx_fn(0), send = fx_fn(1);
    const uint64_t now = f->now.real_ns;

    emu_hello(&m, 0, 2, now);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    tm_hello(&m, JOB, 1, 2, now); /* this build's table, by its hash */
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    const unsigned extra = mw_fn_id(EXTRA);
    assert_true(extra >= MW_FN_COUNT && extra < MW_FN_SPACE);
    assert_int_equal(mw_fn_kind(extra), MW_KIND_COLL);

    /* rank 0, in its own ids */
    tm_sample(&m, JOB, 0, FX_W0, now);
    tm_add_fn(&m, emu(ar), 10, 10000, 500, 2000, 80);
    tm_add_fn(&m, EMU_EXTRA, 7, 700, 100, 100, 0);
    tm_add_fn(&m, emu(send), 2, 300, 100, 200, 64);
    tm_add_peer_fn(&m, 1, emu(send), 2, 64);
    tm_add_occ(&m, emu(ar), 3, 10000);
    tm_add_occ(&m, EMU_EXTRA, 4, 700);
    tm_add_density(&m, emu(ar), 3, 10, 1, 10);
    tm_add_call(&m, emu(send), now - 1000, 200, 64, 1);
    /* running totals in increasing ids of ITS table: decreasing ids here */
    tm_add_total(&m, EMU_EXTRA, 7, 700, 0);
    tm_add_total(&m, emu(send), 2, 300, 64);
    tm_add_total(&m, emu(ar), 10, 10000, 80);
    tm_add_site_def(&m, 1, "/app", 0x40, "main", "app.c", 12);
    tm_add_site(&m, 1, emu(ar), 10, 10000, 80, 2000);
    m.sample.samples_total = 1;
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);

    /* rank 1, in this build's ids */
    tm_sample(&m, JOB, 1, FX_W0, now);
    tm_add_fn(&m, ar, 5, 5000, 500, 1500, 40);
    tm_add_fn(&m, send, 1, 100, 100, 100, 32);
    tm_add_total(&m, ar < send ? ar : send, ar < send ? 5 : 1, ar < send ? 5000 : 100,
                 ar < send ? 40 : 32);
    tm_add_total(&m, ar < send ? send : ar, ar < send ? 1 : 5, ar < send ? 100 : 5000,
                 ar < send ? 32 : 40);
    m.sample.samples_total = 1;
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);

    fx_advance(f, 1000); /* closes the window */
    assert_int_equal(f->n_closed, 1);
    const fx_window_t *w = &f->closed[0];
    assert_int_equal(w->reporting, 2);
    assert_int_equal(w->fn[0].s.count, 15); /* fx_fn(0): MPI_Allreduce */
    assert_int_equal(w->fn[0].s.bytes, 120);
    assert_int_equal(w->fn[1].s.count, 3); /* fx_fn(1): MPI_Send */
    assert_int_equal(w->occ[0][3], 10000);
    assert_int_equal(w->n_longest, 1);
    assert_int_equal(w->longest[0].fn, send);
    assert_int_equal(w->n_pairs, 1);
    assert_int_equal(f->c->job.fn_unknown, 0);

    /* the byes' totals, in each rank's ids */
    tm_bye(&m, JOB, 0);
    tm_add_total(&m, EMU_EXTRA, 7, 700, 0);
    tm_add_total(&m, emu(send), 2, 300, 64);
    tm_add_total(&m, emu(ar), 10, 10000, 80);
    m.bye.windows_sent = 1;
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    tm_bye(&m, JOB, 1);
    tm_add_total(&m, ar < send ? ar : send, ar < send ? 5 : 1, ar < send ? 5000 : 100,
                 ar < send ? 40 : 32);
    tm_add_total(&m, ar < send ? send : ar, ar < send ? 1 : 5, ar < send ? 100 : 5000,
                 ar < send ? 32 : 40);
    m.bye.windows_sent = 1;
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    assert_int_equal(f->c->job.ended, MW_END_COMPLETE);
    for (int r = 1; r < MW_REJECT_COUNT; r++)
        assert_int_equal(f->c->stats.rejected[r], 0);

    char *text = mw_summary_json(f->c);
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    const cJSON *fns = cJSON_GetObjectItemCaseSensitive(root, "functions");
    assert_int_equal(cJSON_GetArraySize(fns), 3);
    assert_int_equal(num(cJSON_GetObjectItemCaseSensitive(fns, "MPI_Allreduce"), "count"), 15);
    assert_int_equal(num(cJSON_GetObjectItemCaseSensitive(fns, "MPI_Send"), "count"), 3);
    assert_int_equal(num(cJSON_GetObjectItemCaseSensitive(fns, EXTRA), "count"), 7);
    assert_int_equal(num(cJSON_GetObjectItemCaseSensitive(fns, EXTRA), "time_ns"), 700);
    /* nothing missed: the totals of rank 0 were matched to what was merged, by name */
    const cJSON *missed = cJSON_GetObjectItemCaseSensitive(root, "missed");
    assert_non_null(missed);
    assert_int_equal(num(missed, "calls"), 0);
    const cJSON *sites = cJSON_GetObjectItemCaseSensitive(root, "top_sites");
    if (sites && cJSON_GetArraySize(sites) > 0) {
        const cJSON *fn = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(sites, 0), "fn");
        assert_string_equal(fn->valuestring, "MPI_Allreduce");
    }
    cJSON_Delete(root);
    free(text);
    fx_free(f);
}

/* An id outside the rank's own table is refused like any bad id. */
static void test_id_outside_table(void **state)
{
    (void)state;
    emu_setup();
    fx_t *f = fx_new();
    tm_msg_t m;
    emu_hello(&m, 0, 1, f->now.real_ns);
    m.hello.n_function_names = m.hello.n_function_kinds = 3; /* a table of 3 functions */
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    tm_sample(&m, JOB, 0, FX_W0, f->now.real_ns);
    tm_add_fn(&m, 4, 1, 10, 10, 10, 0);
    assert_int_equal(fx_feed(f, &m), MW_REJECT_BAD_FIELD);
    tm_sample(&m, JOB, 0, FX_W0, f->now.real_ns);
    tm_add_fn(&m, 3, 1, 10, 10, 10, 0);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    fx_free(f);
}

static void test_refused_tables(void **state)
{
    (void)state;
    emu_setup();
    fx_t *f = fx_new();
    tm_msg_t m;
    char *dup[3] = {"MPI_Send", "MPI_Recv", "MPI_Send"};
    tm_hello(&m, JOB, 0, 2, f->now.real_ns);
    m.hello.n_function_names = 3;
    m.hello.function_names = dup;
    assert_int_equal(fx_feed(f, &m), MW_REJECT_TABLE_MISMATCH);
    char *bad[2] = {"MPI_Send", "MPI_Recv\x1b[2J"};
    m.hello.n_function_names = 2;
    m.hello.function_names = bad;
    assert_int_equal(fx_feed(f, &m), MW_REJECT_TABLE_MISMATCH);
    /* names with kinds of another count */
    char *two[2] = {"MPI_Send", "MPI_Recv"};
    uint32_t kinds[1] = {MW_KIND_SEND};
    m.hello.function_names = two;
    m.hello.n_function_kinds = 1;
    m.hello.function_kinds = kinds;
    assert_int_equal(fx_feed(f, &m), MW_REJECT_TABLE_MISMATCH);
    /* no names, a table this build does not know */
    tm_hello(&m, JOB, 0, 2, f->now.real_ns);
    m.hello.function_table_hash ^= 0x77;
    assert_int_equal(fx_feed(f, &m), MW_REJECT_TABLE_MISMATCH);
    assert_int_equal(f->c->stats.rejected[MW_REJECT_TABLE_MISMATCH], 4);
    /* no names, the legacy table (the checked-in .def): understood whatever this build is */
    tm_hello(&m, JOB, 0, 2, f->now.real_ns);
    m.hello.function_count = mw_fn_legacy_count();
    m.hello.function_table_hash = mw_fn_legacy_hash();
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    fx_free(f);
}

/* The attack on a long-lived collector: one job's rank re-says hello with twenty tables of
 * sixteen new names each, more than the distinct tables (MW_FN_MAX_TABLES) and the extras
 * (MW_FN_EXTRA) one process keeps. The next job, of another MPI (a name of its own), must
 * still be taken, and its name must still get an id: each job starts with no tables and no
 * extras of the jobs before it. */
static void test_job_cannot_starve_next(void **state)
{
    (void)state;
    emu_setup();
    fx_t *f = fx_new();
    tm_msg_t m;
    enum { TABLES = 20, NAMES = 16 };
    static char store[TABLES][NAMES][24];
    static char *names[TABLES][NAMES];
    unsigned refused = 0;
    for (int t = 0; t < TABLES; t++) {
        for (int j = 0; j < NAMES; j++) {
            snprintf(store[t][j], sizeof store[t][j], "MPIX_evil_%d_%d", t, j);
            names[t][j] = store[t][j];
        }
        tm_hello(&m, "evil", 0, 1, f->now.real_ns);
        m.hello.function_count = NAMES;
        m.hello.n_function_names = NAMES;
        m.hello.function_names = names[t];
        if (fx_feed(f, &m) != MW_ACCEPTED)
            refused++;
    }
    assert_true(refused > 0); /* the caps hold within the job */
    assert_true(mw_fn_extra_count() >= MW_FN_EXTRA);
    tm_bye(&m, "evil", 0);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    assert_int_not_equal(f->c->job.ended, MW_END_NONE);

    emu_hello(&m, 0, 1, f->now.real_ns);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    assert_string_equal(f->c->job.job, JOB);
    const unsigned extra = mw_fn_id(EXTRA);
    assert_true(extra >= MW_FN_COUNT && extra < MW_FN_SPACE);
    assert_int_equal(mw_fn_id("MPIX_evil_0_0"), 0); /* the previous job's names are gone */
    /* a call of the extra is counted under its name */
    tm_sample(&m, JOB, 0, FX_W0, f->now.real_ns);
    tm_add_fn(&m, EMU_EXTRA, 1, 10, 10, 10, 0);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    assert_int_equal(f->c->job.fn_unknown, 0);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_tables),
        cmocka_unit_test(test_id_outside_table),
        cmocka_unit_test(test_refused_tables),
        cmocka_unit_test(test_job_cannot_starve_next),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
