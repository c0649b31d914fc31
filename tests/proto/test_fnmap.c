/* test_fnmap.c: function identity by name (proto/mw_fnmap.h): the map builder's checks, its
 * translation of a permuted table with names this build lacks, the extras' registry and what
 * happens when it is full, and the legacy table.
 *
 * The extras are one registry per process: the test that fills it runs last.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "mw_fnmap.h"
#include "mw_proto.h"

static int build(mw_fnmap_t *m, const char *const *names, size_t n)
{
    char err[160];
    return mw_fnmap_build(m, names, n, NULL, 0, err, sizeof err);
}

static void test_names(void **state)
{
    (void)state;
    assert_true(mw_fn_name_ok("MPI_Send"));
    assert_true(mw_fn_name_ok("MPIX_Comm_revoke"));
    assert_true(mw_fn_name_ok("_x9"));
    assert_false(mw_fn_name_ok(NULL));
    assert_false(mw_fn_name_ok(""));
    assert_false(mw_fn_name_ok("9MPI"));
    assert_false(mw_fn_name_ok("MPI Send"));
    assert_false(mw_fn_name_ok("MPI_Send\n"));
    assert_false(mw_fn_name_ok("MPI_S\xc3\xa9nd")); /* valid UTF-8, not a C name */
    assert_false(mw_fn_name_ok("MPI_\"x"));
    char longest[MW_FN_NAME_MAX + 2];
    memset(longest, 'a', sizeof longest);
    longest[MW_FN_NAME_MAX] = 0;
    assert_true(mw_fn_name_ok(longest));
    longest[MW_FN_NAME_MAX] = 'a';
    longest[MW_FN_NAME_MAX + 1] = 0;
    assert_false(mw_fn_name_ok(longest));
}

static void test_refused(void **state)
{
    (void)state;
    mw_fnmap_t m;
    char err[160] = "";
    const char *dup[] = {"MPI_Send", "MPI_Recv", "MPI_Send"};
    assert_int_equal(mw_fnmap_build(&m, dup, 3, NULL, 0, err, sizeof err), -1);
    assert_non_null(strstr(err, "twice"));
    assert_null(m.to_local);
    const char *bad[] = {"MPI_Send", "MPI_Recv;rm"};
    assert_int_equal(build(&m, bad, 2), -1);
    const char *null_name[] = {"MPI_Send", NULL};
    assert_int_equal(build(&m, null_name, 2), -1);
    assert_int_equal(build(&m, dup, 0), -1);
    /* kinds: one per name, each known */
    const char *two[] = {"MPI_Send", "MPI_Recv"};
    uint32_t kinds[2] = {MW_KIND_SEND, MW_KIND_COUNT};
    assert_int_equal(mw_fnmap_build(&m, two, 2, kinds, 2, err, sizeof err), -1);
    assert_int_equal(mw_fnmap_build(&m, two, 2, kinds, 1, err, sizeof err), -1);
    /* the cap on a table's size */
    static char names[MW_FN_TABLE_MAX + 1][16];
    static const char *ptr[MW_FN_TABLE_MAX + 1];
    for (unsigned i = 0; i <= MW_FN_TABLE_MAX; i++) {
        snprintf(names[i], sizeof names[i], "F%u", i);
        ptr[i] = names[i];
    }
    assert_int_equal(build(&m, ptr, MW_FN_TABLE_MAX + 1), -1);
    /* nothing was registered by the refused tables */
    assert_int_equal(mw_fn_extra_count(), 0);
    assert_int_equal(mw_fn_id("MPI_Recv;rm"), 0);
}

static void test_identity_and_known(void **state)
{
    (void)state;
    static const char *names[MW_FN_COUNT - 1];
    for (unsigned id = 1; id < MW_FN_COUNT; id++)
        names[id - 1] = mw_fn_name(id);
    mw_fnmap_t m;
    assert_int_equal(build(&m, names, MW_FN_COUNT - 1), 0);
    assert_true(m.identity);
    assert_int_equal(m.unknown, 0);
    assert_int_equal(mw_fnmap_get(&m, MW_ID_Send), MW_ID_Send);
    assert_int_equal(mw_fnmap_get(&m, MW_FN_COUNT), 0); /* beyond the peer's table */
    mw_fnmap_free(&m);
    assert_int_equal(mw_fnmap_known(&m, mw_fn_table_hash(), MW_FN_COUNT - 1), 0);
    assert_true(m.identity);
    mw_fnmap_free(&m);
    assert_int_equal(mw_fnmap_known(&m, mw_fn_table_hash() ^ 1, MW_FN_COUNT - 1), -1);
    assert_int_equal(mw_fnmap_known(&m, mw_fn_table_hash(), MW_FN_COUNT), -1);
    /* the legacy table (the checked-in .def) is always understood */
    assert_true(mw_fn_legacy_count() > 100);
    assert_string_equal(mw_fn_legacy_name(1), "MPI_Abort");
    assert_int_equal(mw_fnmap_known(&m, mw_fn_legacy_hash(), mw_fn_legacy_count()), 0);
    for (unsigned id = 1; id <= mw_fn_legacy_count(); id++)
        assert_string_equal(mw_fn_name(mw_fnmap_get(&m, id)), mw_fn_legacy_name(id));
    mw_fnmap_free(&m);
    if (mw_fn_legacy_hash() == mw_fn_table_hash()) /* no extras when it is this build's */
        assert_int_equal(mw_fn_extra_count(), 0);
    if (mw_fn_extra_count()) /* a build of another table: the tests below need none */
        skip();
}

static void test_permuted_with_extras(void **state)
{
    (void)state;
    const char *names[] = {"MPI_Recv", "MPIX_Stream_create", "MPI_Send", "MPI_Allreduce",
                           "MPIX_Comm_revoke"};
    uint32_t kinds[] = {MW_KIND_RECV, MW_KIND_OTHER, MW_KIND_SEND, MW_KIND_COLL, MW_KIND_QUERY};
    mw_fnmap_t m;
    char err[160];
    assert_int_equal(mw_fnmap_build(&m, names, 5, kinds, 5, err, sizeof err), 0);
    assert_false(m.identity);
    assert_int_equal(m.n, 5);
    assert_int_equal(mw_fnmap_get(&m, 1), MW_ID_Recv);
    assert_int_equal(mw_fnmap_get(&m, 3), MW_ID_Send);
    assert_int_equal(mw_fnmap_get(&m, 4), MW_ID_Allreduce);
    unsigned x1 = mw_fnmap_get(&m, 2), x2 = mw_fnmap_get(&m, 5);
    assert_int_equal(x1, MW_FN_COUNT);
    assert_int_equal(x2, MW_FN_COUNT + 1);
    assert_int_equal(mw_fn_extra_count(), 2);
    assert_int_equal(mw_fn_kind(x1), MW_KIND_OTHER);
    assert_string_equal(mw_fn_name(x1), "MPIX_Stream_create");
    assert_int_equal(mw_fn_id("MPIX_Comm_revoke"), x2);
    assert_int_equal(mw_fn_kind(x2), MW_KIND_QUERY);
    assert_false(mw_fn_timed(x2));
    assert_true(mw_fn_timed(x1));
    assert_null(mw_fn_name(MW_FN_COUNT + 2));
    assert_null(mw_fn_name(MW_FN_SPACE));
    /* the same names again get the same ids: one registry */
    mw_fnmap_t m2;
    const char *again[] = {"MPIX_Comm_revoke", "MPI_Send"};
    assert_int_equal(build(&m2, again, 2), 0);
    assert_int_equal(mw_fnmap_get(&m2, 1), x2);
    assert_int_equal(mw_fnmap_get(&m2, 2), MW_ID_Send);
    assert_int_equal(mw_fn_extra_count(), 2);
    mw_fnmap_free(&m);
    mw_fnmap_free(&m2);
}

/* Last: fills the registry. */
static void test_extras_full(void **state)
{
    (void)state;
    static char names[MW_FN_EXTRA + 8][24];
    static const char *ptr[MW_FN_EXTRA + 8];
    unsigned have = mw_fn_extra_count();
    for (unsigned i = 0; i < MW_FN_EXTRA + 8; i++) {
        snprintf(names[i], sizeof names[i], "MPIX_Fill_%u", i);
        ptr[i] = names[i];
    }
    mw_fnmap_t m;
    assert_int_equal(build(&m, ptr, MW_FN_EXTRA + 8), 0);
    unsigned room = MW_FN_EXTRA - have;
    assert_int_equal(mw_fn_extra_count(), MW_FN_EXTRA);
    assert_int_equal(m.unknown, MW_FN_EXTRA + 8 - room);
    assert_int_equal(mw_fnmap_get(&m, room), MW_FN_SPACE - 1);
    assert_int_equal(mw_fnmap_get(&m, room + 1), 0);
    assert_int_equal(mw_fn_extras_refused(), MW_FN_EXTRA + 8 - room);
    assert_string_equal(mw_fn_name(MW_FN_SPACE - 1), names[room - 1]);
    /* known names still map */
    assert_int_equal(mw_fn_register("MPI_Send", MW_KIND_SEND), MW_ID_Send);
    assert_int_equal(mw_fn_register("MPIX_Another", MW_KIND_OTHER), 0);
    mw_fnmap_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_identity_and_known),
        cmocka_unit_test(test_permuted_with_extras),
        cmocka_unit_test(test_extras_full),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
