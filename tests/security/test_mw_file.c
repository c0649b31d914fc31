/* test_mw_file.c: the atomic output helper (proto/mw_file.h, docs/security.md "Files mpiwatch
 * writes"), attacked and made to fail directly.
 *
 * - a symbolic link at the target is replaced by the new file; the file it pointed to keeps
 *   its content; a dangling link is replaced too (nothing is created at its target);
 * - links planted at the fixed name the old code used (TARGET.tmp) are not touched;
 * - an aborted write, and a write whose rename fails (the target is a directory), leave the
 *   target as it was and no temporary file behind; the message names the target;
 * - the new file has mode 0666 less the umask, like fopen (umask 027 gives 0640);
 * - the no-sync commit and mw_file_sync_fs work; a directory that does not exist is an error.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "mw_file.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/mw-test-file.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf -- '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* The content of path (static buffer), or "" when it cannot be read. */
static const char *content(const char *path)
{
    static char buf[256];
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f) {
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = '\0';
        fclose(f);
    }
    return buf;
}

/* Entries of dir whose name starts with '.' other than . and .. (temporary files). */
static int hidden_files(void)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

static void test_symlinks(void **state)
{
    (void)state;
    char victim[128], target[128], tmp[128], dangling[128], nowhere[128], err[512];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    snprintf(target, sizeof target, "%s/summary.json", dir);
    snprintf(tmp, sizeof tmp, "%s/summary.json.tmp", dir);
    put(victim, "precious\n");
    assert_int_equal(symlink(victim, target), 0);
    assert_int_equal(symlink(victim, tmp), 0);
    assert_int_equal(mw_file_write_atomic(target, "new\n", 4, err, sizeof err), 0);
    assert_string_equal(content(victim), "precious\n");
    struct stat st;
    assert_int_equal(lstat(target, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_string_equal(content(target), "new\n");
    assert_int_equal(lstat(tmp, &st), 0); /* the planted old-style name is left alone */
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(hidden_files(), 0);

    /* A dangling link: replaced, and nothing appears where it pointed. */
    snprintf(dangling, sizeof dangling, "%s/report.txt", dir);
    snprintf(nowhere, sizeof nowhere, "%s/created-by-link", dir);
    assert_int_equal(symlink(nowhere, dangling), 0);
    assert_int_equal(mw_file_write_atomic(dangling, "r\n", 2, err, sizeof err), 0);
    assert_int_equal(access(nowhere, F_OK), -1);
    assert_int_equal(lstat(dangling, &st), 0);
    assert_true(S_ISREG(st.st_mode));
}

static void test_failures(void **state)
{
    (void)state;
    char target[128], sub[128], err[512];
    snprintf(target, sizeof target, "%s/out.csv", dir);
    put(target, "old\n");
    /* Abort: the target is unchanged, the temporary file gone. */
    mw_afile_t *a = mw_afile_open(target, err, sizeof err);
    assert_non_null(a);
    fputs("half a fi", mw_afile_stream(a));
    assert_int_equal(hidden_files(), 1);
    mw_afile_abort(a);
    assert_string_equal(content(target), "old\n");
    assert_int_equal(hidden_files(), 0);
    /* The rename fails (a directory is in the way): an error naming it, nothing left. */
    snprintf(sub, sizeof sub, "%s/adir", dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    assert_int_equal(mw_file_write_atomic(sub, "x", 1, err, sizeof err), -1);
    assert_non_null(strstr(err, sub));
    assert_int_equal(hidden_files(), 0);
    /* A directory that does not exist. */
    snprintf(sub, sizeof sub, "%s/missing/out.json", dir);
    assert_int_equal(mw_file_write_atomic(sub, "x", 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "No such file or directory"));
    /* A name ending in '/' is not a file name. */
    snprintf(sub, sizeof sub, "%s/", dir);
    assert_int_equal(mw_file_write_atomic(sub, "x", 1, err, sizeof err), -1);
}

static void test_mode_and_nosync(void **state)
{
    (void)state;
    char target[128], err[512];
    snprintf(target, sizeof target, "%s/m.json", dir);
    mode_t old = umask(027);
    int rc = mw_file_write_atomic(target, "{}\n", 3, err, sizeof err);
    umask(old);
    assert_int_equal(rc, 0);
    struct stat st;
    assert_int_equal(stat(target, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);

    mw_afile_t *a = mw_afile_open(target, err, sizeof err);
    assert_non_null(a);
    fputs("frame\n", mw_afile_stream(a));
    assert_int_equal(mw_afile_commit_nosync(a, err, sizeof err), 0);
    assert_string_equal(content(target), "frame\n");
    assert_int_equal(mw_file_sync_fs(dir, err, sizeof err), 0);
    assert_int_equal(hidden_files(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_symlinks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mode_and_nosync, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
