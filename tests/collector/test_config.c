/* test_config.c: the INI file of the collector (mw_collector_options_load,
 * mw_collector_options_print).
 *
 * Each test writes a file into a private temporary directory, loads it over options that a
 * command line may already have set, and checks the settings or the "FILE:LINE: message"
 * error. The same checks on the real executable (exit status, nothing started) are in
 * config.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "collector.h"

static char dir[64];
static char path[128];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/mw-test-config.XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof path, "%s/c.ini", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(path);
    rmdir(dir);
    return 0;
}

static void write_file(const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* Parses argv (NULL-terminated), then loads the file as main() does. */
static int load_with_args(mw_collector_options_t *o, char **argv, char *err, size_t errlen)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    mw_collector_options_defaults(o);
    if (mw_collector_options_parse(o, argc, argv, err, errlen) < 0)
        return -1;
    return mw_collector_options_load(o, path, err, errlen);
}

static void test_file_values_applied(void **state)
{
    (void)state;
    write_file("# comment\n[collector]\nlisten = tcp://*:7811, ipc:///tmp/x\n"
               "lateness-ms = 500\nexit-after-job = true\nquiet = on ; inline comment\n"
               "stats-json = s.json\nlisten = tcp://*:7812\n");
    mw_collector_options_t o;
    char err[256] = "";
    char *argv[] = {"x", NULL};
    assert_int_equal(load_with_args(&o, argv, err, sizeof err), 0);
    assert_int_equal(o.n_listen, 3); /* repeated keys append, like repeated flags */
    assert_string_equal(o.listen[0], "tcp://*:7811");
    assert_string_equal(o.listen[1], "ipc:///tmp/x");
    assert_string_equal(o.listen[2], "tcp://*:7812");
    assert_int_equal(o.lateness_ms, 500);
    assert_int_equal(o.silence_timeout_ms, 10000);
    assert_true(o.exit_after_job);
    assert_true(o.quiet);
    assert_false(o.verbose);
    assert_string_equal(o.stats_json, "s.json");
    assert_null(o.summary_json);
    mw_collector_options_free(&o);
}

static void test_flags_override_file(void **state)
{
    (void)state;
    write_file("[collector]\nlisten = tcp://*:1\nlateness-ms = 500\nquiet = true\n"
               "report = file.txt\nverbose = true\n");
    mw_collector_options_t o;
    char err[256] = "";
    char *argv[] = {
        "x", "--lateness-ms", "7", "-l", "ipc:///cli", "--quiet=false", "--config", path, NULL};
    assert_int_equal(load_with_args(&o, argv, err, sizeof err), 0);
    assert_int_equal(o.lateness_ms, 7);
    assert_int_equal(o.n_listen, 1); /* the file's endpoints are replaced, not added */
    assert_string_equal(o.listen[0], "ipc:///cli");
    assert_false(o.quiet);
    assert_string_equal(o.report, "file.txt"); /* not on the command line: from the file */
    assert_true(o.verbose);
    mw_collector_options_free(&o);

    /* A bad value for an overridden key is still an error. */
    write_file("[collector]\nlateness-ms = never\n");
    char *argv2[] = {"x", "--lateness-ms", "7", NULL};
    assert_int_equal(load_with_args(&o, argv2, err, sizeof err), -1);
    assert_non_null(strstr(err, ":2: lateness-ms:"));
    mw_collector_options_free(&o);
}

static void test_print_round_trip(void **state)
{
    (void)state;
    mw_collector_options_t o;
    char err[256] = "";
    char *argv[] = {"x",        "-l",       "tcp://*:5",
                    "-l",       "ipc:///a", "--summary-json",
                    "sum.json", "-v",       "--silence-timeout-ms",
                    "86400000", NULL};
    mw_collector_options_defaults(&o);
    assert_int_equal(mw_collector_options_parse(&o, 10, argv, err, sizeof err), 0);
    char *first = NULL, *second = NULL;
    size_t n1 = 0, n2 = 0;
    FILE *m = open_memstream(&first, &n1);
    mw_collector_options_print(m, &o);
    fclose(m);
    mw_collector_options_free(&o);
    assert_non_null(strstr(first, "\n[collector]\n"));
    assert_non_null(strstr(first, "\nlisten = tcp://*:5\nlisten = ipc:///a\n"));
    assert_non_null(strstr(first, "\nverbose = true\n"));
    assert_non_null(strstr(first, "\nreport =\n"));
    assert_null(strstr(first, "\nconfig")); /* command-line only: no key */
    assert_null(strstr(first, "\nprint-config"));
    assert_null(strstr(first, "\nhelp"));

    write_file(first);
    char *none[] = {"x", NULL};
    assert_int_equal(load_with_args(&o, none, err, sizeof err), 0);
    m = open_memstream(&second, &n2);
    mw_collector_options_print(m, &o);
    fclose(m);
    assert_string_equal(first, second);
    assert_null(o.report); /* "report =" means none */
    mw_collector_options_free(&o);
    free(first);
    free(second);
}

static void test_errors_name_the_line(void **state)
{
    (void)state;
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"[collector]\nquiet = true\n\nbogus = 1\n", ":4: unknown key 'bogus'"},
        {"[collector]\nlateness-ms = 0\n", ":2: lateness-ms: expected an integer in [1, 3600000]"},
        {"[collector]\nverbose = maybe\n", ":2: verbose: expected true or false, not 'maybe'"},
        {"[collector]\nhelp = true\n", ":2: unknown key 'help'"},
        {"[collector]\nprint-config = true\n", ":2: unknown key 'print-config'"},
        {"quiet = true\n", ":1: key 'quiet' is outside the [collector] section"},
        {"[viewer]\nquiet = true\n", ":2: section [viewer] is unknown"},
        /* The first error is the one reported, whether inih or the table found it. */
        {"[collector]\nnot a key\nbogus = 1\n", ":2: syntax error"},
        {"[collector]\nbogus = 1\nnot a key\n", ":2: unknown key 'bogus'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_file(cases[i].text);
        mw_collector_options_t o;
        char err[256] = "";
        char *argv[] = {"x", NULL};
        assert_int_equal(load_with_args(&o, argv, err, sizeof err), -1);
        if (!strstr(err, cases[i].want) || strncmp(err, path, strlen(path)) != 0)
            fail_msg("case %zu: got '%s', want '%s'", i, err, cases[i].want);
        mw_collector_options_free(&o);
    }

    /* A line too long for inih is one error on its own line, not several lines. */
    char text[512];
    snprintf(text, sizeof text, "[collector]\nreport = %0300d\nbogus = 1\n", 0);
    write_file(text);
    mw_collector_options_t o;
    char err[256] = "";
    char *argv[] = {"x", NULL};
    assert_int_equal(load_with_args(&o, argv, err, sizeof err), -1);
    assert_non_null(strstr(err, ":2: line longer than"));
    mw_collector_options_free(&o);

    /* An unreadable file. */
    mw_collector_options_defaults(&o);
    assert_int_equal(mw_collector_options_load(&o, "/nonexistent/c.ini", err, sizeof err), -1);
    assert_string_equal(err, "/nonexistent/c.ini: No such file or directory");
    mw_collector_options_free(&o);
}

/* The settings of o as --print-config prints them (malloc'd); asserts that it prints. */
static char *print_text(const mw_collector_options_t *o)
{
    char *text = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&text, &n);
    assert_non_null(m);
    assert_int_equal(mw_collector_options_print(m, o), 0);
    assert_int_equal(fclose(m), 0);
    return text;
}

/* Writes what --print-config prints for o, loads it into fresh options and checks that
 * printing those gives the same text (fuzz_config's promise). Returns the loaded options. */
static void round_trip(const mw_collector_options_t *o, mw_collector_options_t *back)
{
    char err[256] = "";
    char *first = print_text(o);
    write_file(first);
    mw_collector_options_defaults(back);
    if (mw_collector_options_load(back, path, err, sizeof err) != 0)
        fail_msg("printed configuration does not load: %s\n%s", err, first);
    char *second = print_text(back);
    assert_string_equal(first, second);
    free(first);
    free(second);
}

/* fuzz_config's findings (tests/fuzz/crashes/config/): --print-config wrote every listen
 * endpoint on one line, which past inih's line length did not load, and wrote a value that
 * starts with ';' after a blank, which inih reads as an empty value and a comment. Every type
 * of option with nasty values goes through print, load, print; values that an INI line cannot
 * hold are refused at print time with a reason, and nothing is printed. */
static void test_print_nasty_values(void **state)
{
    (void)state;
    char err[256] = "";
    mw_collector_options_t o, back;

    /* MW_MAX_LISTEN endpoints of 150 characters: one line each, all read back in order. */
    mw_collector_options_defaults(&o);
    for (int i = 0; i < MW_MAX_LISTEN; i++) {
        char ep[160];
        snprintf(ep, sizeof ep, "ipc:///tmp/%0138d%c", i, 'a' + i % 26);
        assert_int_equal(mw_collector_options_set(&o, "listen", ep, err, sizeof err), 0);
    }
    /* Strings: a leading ';', '#' anywhere, '=' and ':' (inih's key separators), a ';' not
     * after a blank, a tab inside, a '[' ; and the longest value a line holds (no blanks). */
    const char *strings[][2] = {
        {"record", ";x.mpiw"},
        {"report", "#not-a-comment"},
        {"summary-json", "a#b=c:d;e"},
        {"stats-json", "[collector]"},
        {"rules", "a\tb"},
        {"publish", "tcp://*:1;2"},
    };
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++)
        assert_int_equal(
            mw_collector_options_set(&o, strings[i][0], strings[i][1], err, sizeof err), 0);
    char longest[256];
    memset(longest, 'z', sizeof longest);
    longest[198 - strlen("history=")] = '\0'; /* a line of 198 characters: inih takes it */
    assert_int_equal(mw_collector_options_set(&o, "history", longest, err, sizeof err), 0);
    /* Numbers at their bounds and flags. */
    assert_int_equal(
        mw_collector_options_set(&o, "silence-timeout-ms", "86400000", err, sizeof err), 0);
    assert_int_equal(mw_collector_options_set(&o, "metrics-port", "0", err, sizeof err), 0);
    assert_int_equal(mw_collector_options_set(&o, "speed", "0.1", err, sizeof err), 0);
    assert_int_equal(mw_collector_options_set(&o, "from", "1e-300", err, sizeof err), 0);
    assert_int_equal(mw_collector_options_set(&o, "verbose", "on", err, sizeof err), 0);
    assert_int_equal(mw_collector_options_printable(&o, err, sizeof err), 0);
    round_trip(&o, &back);
    assert_int_equal(back.n_listen, MW_MAX_LISTEN);
    for (unsigned i = 0; i < MW_MAX_LISTEN; i++)
        assert_string_equal(back.listen[i], o.listen[i]);
    assert_string_equal(back.record, ";x.mpiw");
    assert_string_equal(back.report, "#not-a-comment");
    assert_string_equal(back.summary_json, "a#b=c:d;e");
    assert_string_equal(back.stats_json, "[collector]");
    assert_string_equal(back.rules, "a\tb");
    assert_string_equal(back.history, longest);
    assert_true(back.speed == 0.1 && back.from_s == 1e-300 && back.verbose);
    mw_collector_options_free(&back);
    mw_collector_options_free(&o);

    /* Values no INI line can hold: refused with a reason, nothing printed. */
    const char *bad[][3] = {
        {"record", " lead", "blank"},
        {"record", "trail\t", "blank"},
        {"report", "a ;b", "';'"},
        {"report", "a\t;b", "';'"},
        {"rules", "two\nlines", "line break"},
        {"history", longest, "at most 198"}, /* one character longer than a line holds */
    };
    longest[198 - strlen("history=")] = 'z';
    longest[199 - strlen("history=")] = '\0';
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mw_collector_options_defaults(&o);
        assert_int_equal(mw_collector_options_set(&o, bad[i][0], bad[i][1], err, sizeof err), 0);
        err[0] = '\0';
        assert_int_equal(mw_collector_options_printable(&o, err, sizeof err), -1);
        assert_non_null(strstr(err, bad[i][2]));
        char *text = NULL;
        size_t n = 0;
        FILE *m = open_memstream(&text, &n);
        assert_int_equal(mw_collector_options_print(m, &o), -1);
        fclose(m);
        assert_int_equal(n, 0);
        free(text);
        mw_collector_options_free(&o);
    }

    /* The reader: a line of 199 characters (one more than inih's buffer holds) is an error
     * with the file and line; so is a NUL byte, which fgets() would have hidden. */
    char text[512];
    snprintf(text, sizeof text, "[collector]\nverbose = true\nhistory=%0191d\n", 0);
    write_file(text);
    char *argv[] = {"x", NULL};
    assert_int_equal(load_with_args(&o, argv, err, sizeof err), -1);
    assert_non_null(strstr(err, ":3: line longer than 198 characters"));
    mw_collector_options_free(&o);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fwrite("[collector]\nreport = a\0b\n", 1, 26, f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(load_with_args(&o, argv, err, sizeof err), -1);
    assert_non_null(strstr(err, ":2: a NUL byte"));
    mw_collector_options_free(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_file_values_applied, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flags_override_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_print_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_print_nasty_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors_name_the_line, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
