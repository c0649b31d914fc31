/* test_keyfile.c: the security checks that need no sockets (docs/security.md).
 *
 * - mw__endpoint_local: which endpoints the collector may bind without CURVE (ipc://PATH,
 *   inproc://, tcp:// on 127.0.0.0/8, ::1, localhost resolving to loopback only) and which it
 *   may not (abstract ipc://@name, wildcards, other addresses, interface and host names, other
 *   transports, malformed endpoints); localhost resolving elsewhere is tested by policy.sh;
 * - mw__auth_check: the start-up policy (a non-local endpoint of any kind needs CURVE or
 *   --allow-insecure; --curve-secret and --curve-clients go together; --replay refuses CURVE);
 * - the key-file parser (mw_keyfile_parse) on good and bad text, with the line of the error;
 * - reading files: modes (a secret key open to group or others is refused, naming the file),
 *   not a regular file, a .key given where a .pub belongs, the list of client keys (a file of
 *   several keys, a directory of *.pub, writable by others refused), and mw_keyfile_generate
 *   (modes whatever the umask, refusal to overwrite, --force);
 * - owners (test_owner): a secret key, a client list, a directory of client keys or one key in
 *   it owned by another user (chowned to nobody) is refused naming the file; back in this
 *   user's (or root's) hands it is accepted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include <cmocka.h>

#include "collector.h"
#include "mw_keyfile.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/mw-test-keyfile.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf -- '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_endpoint_local(void **state)
{
    (void)state;
    static const char *const local[] = {
        "ipc:///tmp/x",
        "ipc://rel/path",
        "inproc://a",
        "tcp://127.0.0.1:5555",
        "tcp://127.1.2.3:1",
        "tcp://127.0.0.1:*",
        "tcp://[::1]:5555",
        "tcp://::1:5555",
        "tcp://localhost:5555",
        "tcp://LocalHost:1",
        "tcp://[::ffff:127.0.0.1]:7",
    };
    static const char *const remote[] = {
        "tcp://*:5555",
        "tcp://0.0.0.0:5555",
        "tcp://[::]:5555",
        "tcp://:::5555",
        "tcp://10.0.0.1:5555",
        "tcp://128.0.0.1:1",
        "tcp://eth0:5555",
        "tcp://lo:5555",
        "tcp://node1:5555",
        "tcp://[::2]:5555",
        "tcp://[::ffff:10.0.0.1]:7",
        "tcp://127.0.0.1",
        "tcp://:5555",
        "tcp://[::1:5555",
        "tcp://127.0.0.1;10.0.0.1:5",
        "pgm://127.0.0.1;239.192.1.1:5555",
        "ws://127.0.0.1:80",
        "udp://127.0.0.1:5",
        "TCP://127.0.0.1:5",
        "",
        "127.0.0.1:5555",
        "tcp://1270.0.0.1:5",
        "tcp://127.0.0.1.evil.example:5",
        /* Abstract sockets have no file, so no permission keeps other local users out. */
        "ipc://@abstract",
        "ipc://@",
        "ipc://@/tmp/x",
    };
    for (size_t i = 0; i < sizeof local / sizeof local[0]; i++) {
        if (mw__endpoint_local(local[i]) != 1)
            fail_msg("%s should be local", local[i]);
    }
    for (size_t i = 0; i < sizeof remote / sizeof remote[0]; i++) {
        if (mw__endpoint_local(remote[i]) != 0)
            fail_msg("%s should not be local", remote[i]);
    }
}

/* Writes text into dir/name with a mode; returns the path (static buffer per call site). */
static const char *put(const char *name, const char *text, mode_t mode, char *path, size_t len)
{
    snprintf(path, len, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(path, mode), 0);
    return path;
}

/* A fresh key pair in key-file text: secret (with both keys) and public (public key only). */
static void pair_text(char *secret, char *public, size_t len, uint8_t pub_bin[32])
{
    char pub[41], sec[41];
    assert_int_equal(zmq_curve_keypair(pub, sec), 0);
    snprintf(secret, len, "# c\n[curve]\npublic-key = %s\nsecret-key = %s\n", pub, sec);
    snprintf(public, len, "[curve]\npublic-key = %s\n", pub);
    if (pub_bin)
        assert_non_null(zmq_z85_decode(pub_bin, pub));
}

static void test_parse(void **state)
{
    (void)state;
    char sec[256], pub[256], err[512];
    uint8_t bin[32];
    mw_keypair_t kp;
    pair_text(sec, pub, sizeof sec, bin);
    assert_int_equal(mw_keyfile_parse(sec, "a.key", 1, &kp, err, sizeof err), 0);
    assert_memory_equal(kp.public_key, bin, 32);
    assert_int_equal(mw_keyfile_parse(pub, "a.pub", 0, &kp, err, sizeof err), 0);
    assert_memory_equal(kp.public_key, bin, 32);

    /* Each bad text with the exact message (file and line). */
    char other_sec[256], other_pub[256];
    pair_text(other_sec, other_pub, sizeof other_sec, NULL);
    char mixed[256]; /* the public key of one pair with the secret key of another */
    snprintf(mixed, sizeof mixed, "[curve]\n%.*s%s", 54, pub + 8, strstr(other_sec, "secret-key"));
    const struct {
        const char *text;
        int want_secret;
        const char *err;
    } bad[] = {
        {pub, 1, "x: no secret-key (a key pair file, NAME.key, is needed here)"},
        {sec, 0,
         "x:4: a secret key where only public keys belong (give the .pub file, never "
         "the .key file)"},
        {"", 0, "x: no public-key"},
        {"[curve]\npublic-key = abc\n", 0, "x:2: public-key is not 40 characters of Z85"},
        {"[curve]\npublic-key = 0000000000000000000000000000000000000 \"\n", 0,
         "x:2: public-key is not 40 characters of Z85"},
        {"[curve]\npublic-key = \x01"
         "000000000000000000000000000000000000000\n",
         0, "x:2: public-key is not 40 characters of Z85"},
        {"public-key = 0000000000000000000000000000000000000000\n", 0,
         "x:1: key outside the [curve] section"},
        {"[other]\npublic-key = 0000000000000000000000000000000000000000\n", 0,
         "x:2: keys go in the [curve] section"},
        {"[curve]\nprivate-key = 1\n", 0,
         "x:2: unknown key 'private-key' (expected public-key or secret-key)"},
        {"[curve]\njunk\n", 0, "x:2: syntax error (expected '[curve]' or 'key = value')"},
        {"[curve]\npublic-key = 0000000000000000000000000000000000000000\n"
         "public-key = 0000000000000000000000000000000000000000\n",
         0, "x:3: a second public-key"},
        {mixed, 1, "x: public-key is not the public key of secret-key"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        if (mw_keyfile_parse(bad[i].text, "x", bad[i].want_secret, &kp, err, sizeof err) != -1)
            fail_msg("case %zu accepted", i);
        if (strcmp(err, bad[i].err) != 0)
            fail_msg("case %zu: '%s', expected '%s'", i, err, bad[i].err);
    }
    char longline[400];
    memset(longline, 'a', sizeof longline);
    memcpy(longline, "[curve]\n", 8);
    longline[sizeof longline - 1] = '\0';
    assert_int_equal(mw_keyfile_parse(longline, "x", 0, &kp, err, sizeof err), -1);
    assert_string_equal(err, "x:2: line longer than 190 characters");
}

static void test_read_modes(void **state)
{
    (void)state;
    char sec[256], pub[256], err[512], p[128], want[256];
    mw_keypair_t kp;
    uint8_t key[32];
    pair_text(sec, pub, sizeof sec, NULL);
    put("a.key", sec, 0600, p, sizeof p);
    assert_int_equal(mw_keyfile_read_pair(p, &kp, err, sizeof err), 0);
    assert_int_equal(
        mw_keyfile_read_pair(put("a.key", sec, 0400, p, sizeof p), &kp, err, sizeof err), 0);
    static const mode_t open_modes[] = {0644, 0640, 0604, 0660, 0601, 0610, 0700 | 0004};
    for (size_t i = 0; i < sizeof open_modes / sizeof open_modes[0]; i++) {
        put("a.key", sec, open_modes[i], p, sizeof p);
        assert_int_equal(mw_keyfile_read_pair(p, &kp, err, sizeof err), -1);
        snprintf(want, sizeof want,
                 "%s: mode %04o lets group or others at the secret key (chmod 600 the file)", p,
                 (unsigned)open_modes[i]);
        assert_string_equal(err, want);
    }
    /* Not a regular file, a missing file. */
    assert_int_equal(mw_keyfile_read_pair(dir, &kp, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: not a regular file", dir);
    assert_string_equal(err, want);
    snprintf(p, sizeof p, "%s/missing.key", dir);
    assert_int_equal(mw_keyfile_read_pair(p, &kp, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: No such file or directory", p);
    assert_string_equal(err, want);
    /* A public key file may be 0644; a .key file where a .pub belongs is refused. */
    assert_int_equal(
        mw_keyfile_read_public(put("a.pub", pub, 0644, p, sizeof p), key, err, sizeof err), 0);
    assert_int_equal(
        mw_keyfile_read_public(put("b.key", sec, 0600, p, sizeof p), key, err, sizeof err), -1);
    assert_non_null(strstr(err, "a secret key where only public keys belong"));
}

static int collect(void *user, const uint8_t *key, const char *source, char *err, size_t errlen)
{
    (void)source, (void)err, (void)errlen;
    uint8_t(*keys)[32] = user;
    for (int i = 0; i < 8; i++)
        if (!keys[i][0] && !memcmp(keys[i], keys[i] + 1, 31)) { /* first empty slot */
            memcpy(keys[i], key, 32);
            return 0;
        }
    return -1;
}

static void test_clients(void **state)
{
    (void)state;
    char sec[3][256], pub[3][256], err[512], p[128], d[128], want[256];
    uint8_t bin[3][32], got[8][32];
    for (int i = 0; i < 3; i++)
        pair_text(sec[i], pub[i], sizeof sec[i], bin[i]);
    /* One file holding two keys (two .pub files concatenated). */
    char two[600];
    snprintf(two, sizeof two, "%s%s", pub[0], pub[1]);
    memset(got, 0, sizeof got);
    put("clients", two, 0644, p, sizeof p);
    assert_int_equal(mw_keyfile_read_clients(p, collect, got, err, sizeof err), 0);
    assert_memory_equal(got[0], bin[0], 32);
    assert_memory_equal(got[1], bin[1], 32);
    assert_true(!got[2][0] && !memcmp(got[2], got[2] + 1, 31));
    /* Writable by others: refused. */
    chmod(p, 0666);
    assert_int_equal(mw_keyfile_read_clients(p, collect, got, err, sizeof err), -1);
    snprintf(want, sizeof want,
             "%s: mode 0666 lets group or others add keys to it (chmod go-w the file)", p);
    assert_string_equal(err, want);
    /* A secret key in the list: refused. */
    put("clients", sec[2], 0644, p, sizeof p);
    assert_int_equal(mw_keyfile_read_clients(p, collect, got, err, sizeof err), -1);
    assert_non_null(strstr(err, "a secret key where only public keys belong"));

    /* A directory: every *.pub, nothing else. */
    snprintf(d, sizeof d, "%s/clients.d", dir);
    assert_int_equal(mkdir(d, 0755), 0);
    for (int i = 0; i < 3; i++) {
        char name[64];
        snprintf(name, sizeof name, "clients.d/%c.pub", 'a' + i);
        put(name, pub[i], 0644, p, sizeof p);
    }
    put("clients.d/README", "not a key\n", 0644, p, sizeof p);
    put("clients.d/x.key", sec[0], 0600, p, sizeof p);
    memset(got, 0, sizeof got);
    assert_int_equal(mw_keyfile_read_clients(d, collect, got, err, sizeof err), 0);
    int found = 0;
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++)
            found += memcmp(got[k], bin[i], 32) == 0;
    assert_int_equal(found, 3);
    assert_true(!got[3][0] && !memcmp(got[3], got[3] + 1, 31));
    chmod(d, 0777);
    assert_int_equal(mw_keyfile_read_clients(d, collect, got, err, sizeof err), -1);
    snprintf(want, sizeof want,
             "%s: mode 0777 lets group or others add keys to this directory (chmod go-w it)", d);
    assert_string_equal(err, want);
    /* An empty directory. */
    snprintf(d, sizeof d, "%s/empty.d", dir);
    assert_int_equal(mkdir(d, 0700), 0);
    assert_int_equal(mw_keyfile_read_clients(d, collect, got, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: no client keys (*.pub files) in this directory", d);
    assert_string_equal(err, want);
}

static void test_generate(void **state)
{
    (void)state;
    char name[128], path[160], err[512], z1[41], z2[41];
    struct stat st;
    snprintf(name, sizeof name, "%s/gen", dir);
    mode_t old = umask(0);
    assert_int_equal(mw_keyfile_generate(name, 0, z1, err, sizeof err), 0);
    umask(old);
    snprintf(path, sizeof path, "%s.key", name);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    mw_keypair_t kp;
    uint8_t bin[32];
    assert_int_equal(mw_keyfile_read_pair(path, &kp, err, sizeof err), 0);
    assert_non_null(zmq_z85_decode(bin, z1));
    assert_memory_equal(kp.public_key, bin, 32);
    snprintf(path, sizeof path, "%s.pub", name);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0644);
    /* Not again without force; the files are left alone. */
    assert_int_equal(mw_keyfile_generate(name, 0, z2, err, sizeof err), -1);
    char want[256];
    snprintf(want, sizeof want, "%s.key exists; not overwritten (use --force to replace it)", name);
    assert_string_equal(err, want);
    uint8_t again[32];
    assert_int_equal(mw_keyfile_read_public(path, again, err, sizeof err), 0);
    assert_memory_equal(again, bin, 32);
    /* With force, under a strict umask: a new pair, the same modes. */
    old = umask(077);
    assert_int_equal(mw_keyfile_generate(name, 1, z2, err, sizeof err), 0);
    umask(old);
    assert_string_not_equal(z1, z2);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0644);
    snprintf(path, sizeof path, "%s.key", name);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
}

static void test_policy(void **state)
{
    (void)state;
    char err[512], p[128], sec[256], pub[256], key[128], clients[128];
    pair_text(sec, pub, sizeof sec, NULL);
    snprintf(key, sizeof key, "%s", put("coll.key", sec, 0600, p, sizeof p));
    pair_text(sec, pub, sizeof sec, NULL);
    snprintf(clients, sizeof clients, "%s", put("clients.pub", pub, 0644, p, sizeof p));

    mw_collector_options_t o;
    const struct {
        const char *name, *value;
        const char *err; /* NULL: accepted */
    } cases[] = {
        {"listen", "ipc:///tmp/a,tcp://127.0.0.1:1", NULL},
        {"listen", "tcp://*:1",
         "--listen tcp://*:1 is not local (ipc://PATH or loopback): use CURVE (--curve-secret "
         "FILE --curve-clients FILE_OR_DIR, docs/security.md) or --allow-insecure"},
        {"publish", "tcp://0.0.0.0:2", "--publish tcp://0.0.0.0:2 is not local"},
        {"history", "tcp://[::]:3", "--history tcp://[::]:3 is not local"},
        {"steer", "tcp://10.1.1.1:4", "--steer tcp://10.1.1.1:4 is not local"},
        {"control", "tcp://node:5", "--control tcp://node:5 is not local"},
        {"listen", "ipc://@mw-abstract", "--listen ipc://@mw-abstract is not local"},
        {"publish", "ipc://@mw-feed", "--publish ipc://@mw-feed is not local"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mw_collector_options_defaults(&o);
        if (strcmp(cases[i].name, "listen") != 0)
            assert_int_equal(
                mw_collector_options_set(&o, "listen", "ipc:///tmp/a", err, sizeof err), 0);
        assert_int_equal(
            mw_collector_options_set(&o, cases[i].name, cases[i].value, err, sizeof err), 0);
        int rc = mw_collector_options_check(&o, err, sizeof err);
        if (!cases[i].err) {
            assert_int_equal(rc, 0);
        } else {
            assert_int_equal(rc, -1);
            if (strncmp(err, cases[i].err, strlen(cases[i].err)) != 0)
                fail_msg("case %zu: '%s'", i, err);
            /* --allow-insecure lets it start; so does CURVE. */
            assert_int_equal(mw_collector_options_set(&o, "allow-insecure", NULL, err, sizeof err),
                             0);
            assert_int_equal(mw_collector_options_check(&o, err, sizeof err), 0);
            assert_int_equal(
                mw_collector_options_set(&o, "allow-insecure", "false", err, sizeof err), 0);
            assert_int_equal(mw_collector_options_set(&o, "curve-secret", key, err, sizeof err), 0);
            assert_int_equal(
                mw_collector_options_set(&o, "curve-clients", clients, err, sizeof err), 0);
            assert_int_equal(mw_collector_options_check(&o, err, sizeof err), 0);
        }
        mw_collector_options_free(&o);
    }
    /* The two CURVE options go together; bad files stop the start with their name. */
    mw_collector_options_defaults(&o);
    assert_int_equal(mw_collector_options_set(&o, "listen", "ipc:///tmp/a", err, sizeof err), 0);
    assert_int_equal(mw_collector_options_set(&o, "curve-secret", key, err, sizeof err), 0);
    assert_int_equal(mw_collector_options_check(&o, err, sizeof err), -1);
    assert_non_null(strstr(err, "--curve-secret needs --curve-clients"));
    assert_int_equal(mw_collector_options_set(&o, "curve-clients", key, err, sizeof err), 0);
    assert_int_equal(mw_collector_options_check(&o, err, sizeof err), -1);
    assert_non_null(strstr(err, "a secret key where only public keys belong"));
    assert_int_equal(mw_collector_options_set(&o, "curve-clients", clients, err, sizeof err), 0);
    chmod(key, 0640);
    assert_int_equal(mw_collector_options_check(&o, err, sizeof err), -1);
    char want[256];
    snprintf(want, sizeof want,
             "%s: mode 0640 lets group or others at the secret key (chmod 600 the file)", key);
    assert_string_equal(err, want);
    chmod(key, 0600);
    assert_int_equal(mw_collector_options_check(&o, err, sizeof err), 0);
    assert_int_equal(mw_collector_options_set(&o, "curve-secret", "", err, sizeof err), 0);
    assert_int_equal(mw_collector_options_check(&o, err, sizeof err), -1);
    assert_non_null(strstr(err, "--curve-clients needs --curve-secret"));
    mw_collector_options_free(&o);
    /* Replay binds only the feed; CURVE is not served there. */
    mw_collector_options_defaults(&o);
    assert_int_equal(mw_collector_options_set(&o, "replay", "r.mpiw", err, sizeof err), 0);
    assert_int_equal(mw_collector_options_set(&o, "publish", "tcp://*:9", err, sizeof err), 0);
    assert_int_equal(mw_collector_options_check(&o, err, sizeof err), -1);
    assert_non_null(strstr(err, "--publish tcp://*:9 is not local"));
    assert_int_equal(mw_collector_options_set(&o, "curve-secret", key, err, sizeof err), 0);
    assert_int_equal(mw_collector_options_set(&o, "curve-clients", clients, err, sizeof err), 0);
    assert_int_equal(mw_collector_options_check(&o, err, sizeof err), -1);
    assert_non_null(strstr(err, "--replay does not serve CURVE"));
    mw_collector_options_free(&o);
}

/* Another user who owns a key list, its directory or a secret key could rewrite it (and chmod
 * it first): each is refused naming the file, whatever its mode. Needs root to chown. */
static void test_owner(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip();
    const uid_t other = 65534; /* nobody */
    char sec[256], pub[256], err[512], p[128], d[128], key[128];
    mw_keypair_t kp;
    uint8_t got[8][32];
    pair_text(sec, pub, sizeof sec, NULL);

    /* The secret key: 0600 but owned by another user. */
    snprintf(key, sizeof key, "%s", put("own.key", sec, 0600, p, sizeof p));
    assert_int_equal(chown(key, other, (gid_t)-1), 0);
    assert_int_equal(mw_keyfile_read_pair(key, &kp, err, sizeof err), -1);
    assert_non_null(strstr(err, key));
    assert_non_null(strstr(err, "owned by uid 65534, not by this user (uid 0) or root"));
    assert_int_equal(chown(key, 0, (gid_t)-1), 0);
    assert_int_equal(mw_keyfile_read_pair(key, &kp, err, sizeof err), 0);

    /* One file of client keys owned by another user. */
    put("list.pub", pub, 0644, p, sizeof p);
    assert_int_equal(chown(p, other, (gid_t)-1), 0);
    memset(got, 0, sizeof got);
    assert_int_equal(mw_keyfile_read_clients(p, collect, got, err, sizeof err), -1);
    assert_non_null(strstr(err, p));
    assert_non_null(strstr(err, "its owner could add keys to it"));

    /* A directory owned by another user, with files of ours: refused (its owner may add a
     * file at any time). */
    snprintf(d, sizeof d, "%s/own.d", dir);
    assert_int_equal(mkdir(d, 0755), 0);
    put("own.d/a.pub", pub, 0644, p, sizeof p);
    assert_int_equal(chown(d, other, (gid_t)-1), 0);
    memset(got, 0, sizeof got);
    assert_int_equal(mw_keyfile_read_clients(d, collect, got, err, sizeof err), -1);
    char want[256];
    snprintf(want, sizeof want, "%s: owned by uid 65534", d);
    assert_non_null(strstr(err, want));
    assert_non_null(strstr(err, "add keys to this directory"));
    assert_int_equal(chown(d, 0, (gid_t)-1), 0);
    memset(got, 0, sizeof got);
    assert_int_equal(mw_keyfile_read_clients(d, collect, got, err, sizeof err), 0);

    /* Our directory, one key in it owned by another user: refused naming that file. */
    put("own.d/b.pub", pub, 0644, p, sizeof p);
    assert_int_equal(chown(p, other, (gid_t)-1), 0);
    memset(got, 0, sizeof got);
    assert_int_equal(mw_keyfile_read_clients(d, collect, got, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: owned by uid 65534", p);
    assert_non_null(strstr(err, want));
    assert_int_equal(chown(p, 0, (gid_t)-1), 0);
    memset(got, 0, sizeof got);
    assert_int_equal(mw_keyfile_read_clients(d, collect, got, err, sizeof err), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_endpoint_local),
        cmocka_unit_test(test_parse),
        cmocka_unit_test_setup_teardown(test_read_modes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_clients, setup, teardown),
        cmocka_unit_test_setup_teardown(test_generate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_policy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_owner, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
