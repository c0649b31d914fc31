/* mw_keyfile.c: reading, checking and writing CURVE key files (mw_keyfile.h, docs/security.md).
 *
 * DESIGN: one module, linked into every program that touches keys (the collector, the shim,
 * the tools, the viewer), so there is one definition of the format and one set of checks. A
 * file is opened once and checked on its descriptor (fstat: a regular file; for a secret key,
 * no access for group or others; for a secret key and for the authorized client keys, owned by
 * this user or root, because whoever owns a file can chmod it and rewrite it at will), so what
 * is checked is what is read; a directory of client keys is checked the same way (owner, not
 * writable by group or others) and its files are opened relative to its descriptor. A file
 * is read whole (a few hundred bytes, capped) and parsed from memory with inih. Keys are Z85
 * text of exactly 40 characters decoded with zmq_z85_decode, and a key pair must match
 * (zmq_curve_public of the secret gives the public key), which catches a file edited by hand.
 * Buffers that held a secret are wiped before they are released. Nothing here prints or exits:
 * every error comes back as a message that names the file, because the shim, which links
 * this too, must only log it and stay inert.
 */
#define _GNU_SOURCE /* mkostemp */
#include "mw_keyfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#define KEYFILE_MAX_BYTES 4096u      /* a key file is about 200 bytes */
#define CLIENTS_MAX_BYTES (1u << 20) /* one file of authorized keys: thousands of clients */
#define KEYFILE_MAX_LINE 190         /* below inih's line buffer, so no line is ever split */

void mw_keyfile_wipe(void *p, size_t len)
{
    if (p)
        explicit_bzero(p, len);
}

/* ---- reading ------------------------------------------------------------------------------ */

enum { FILE_ANY, FILE_SECRET, FILE_TRUSTED };

/* Whether a file or directory may decide who gets in: owned by the user running this program or
 * by root. Anyone else who owns it could change its mode and its content at any time, whatever
 * the mode says now. */
static int owner_trusted(const struct stat *st)
{
    return st->st_uid == geteuid() || st->st_uid == 0;
}

/* The message for a file or directory that owner_trusted refuses. */
static void owner_error(const char *path, const struct stat *st, const char *what, char *err,
                        size_t errlen)
{
    snprintf(err, errlen,
             "%s: owned by uid %u, not by this user (uid %u) or root: its owner could %s "
             "(chown it, or use a copy of your own)",
             path, (unsigned)st->st_uid, (unsigned)geteuid(), what);
}

/* Reads a whole file into a NUL-terminated buffer (caller wipes and frees). `kind`: FILE_SECRET
 * refuses a mode that lets group or others in, FILE_TRUSTED one that lets them write; both
 * refuse a file owned by another user than this one or root. The file is `name` relative to
 * the directory descriptor `dirfd` (AT_FDCWD: the current directory); `path` names it in
 * messages. */
static char *read_whole_at(int dirfd, const char *name, const char *path, int kind, size_t max,
                           char *err, size_t errlen)
{
    /* O_NONBLOCK: a FIFO put in place of the file must not hang the reader (fstat refuses it). */
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    char *buf = NULL;
    if (fstat(fd, &st) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        goto fail;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        goto fail;
    }
    if (kind == FILE_SECRET && !owner_trusted(&st)) {
        owner_error(path, &st, "read or replace the secret key", err, errlen);
        goto fail;
    }
    if (kind == FILE_TRUSTED && !owner_trusted(&st)) {
        owner_error(path, &st, "add keys to it", err, errlen);
        goto fail;
    }
    if (kind == FILE_SECRET && (st.st_mode & 077)) {
        snprintf(err, errlen,
                 "%s: mode %04o lets group or others at the secret key (chmod 600 the file)", path,
                 (unsigned)(st.st_mode & 07777));
        goto fail;
    }
    if (kind == FILE_TRUSTED && (st.st_mode & 022)) {
        snprintf(err, errlen,
                 "%s: mode %04o lets group or others add keys to it (chmod go-w the file)", path,
                 (unsigned)(st.st_mode & 07777));
        goto fail;
    }
    if ((uint64_t)st.st_size > max) {
        snprintf(err, errlen, "%s: %lld bytes: not a key file (at most %zu)", path,
                 (long long)st.st_size, max);
        goto fail;
    }
    size_t cap = (size_t)st.st_size + 1, len = 0;
    if (!(buf = malloc(cap))) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto fail;
    }
    while (len < cap - 1) {
        ssize_t n = read(fd, buf + len, cap - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(err, errlen, "%s: %s", path, strerror(errno));
            goto fail;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    buf[len] = '\0';
    if (strlen(buf) != len) {
        snprintf(err, errlen, "%s: not a key file (binary content)", path);
        goto fail;
    }
    close(fd);
    return buf;
fail:
    if (buf) {
        mw_keyfile_wipe(buf, (size_t)st.st_size + 1);
        free(buf);
    }
    close(fd);
    return NULL;
}

static char *read_whole(const char *path, int kind, size_t max, char *err, size_t errlen)
{
    return read_whole_at(AT_FDCWD, path, path, kind, max, err, errlen);
}

/* ---- parsing ------------------------------------------------------------------------------ */

typedef struct {
    int want_secret; /* single-key mode: the file must (1) or must not (0) hold a secret key */
    int list;        /* list mode: any number of public keys, no secret key */
    int n_public, n_secret;
    mw_keypair_t *pair;
    int (*add)(void *, const uint8_t *, const char *, char *, size_t);
    void *user;
    const char *name;
    int stop; /* add() failed: its message is final */
    char msg[256];
} parse_ctx_t;

static int decode_key(const char *value, uint8_t out[MW_CURVE_KEY_BYTES])
{
    return strlen(value) == MW_CURVE_Z85_CHARS && zmq_z85_decode(out, value) ? 0 : -1;
}

static int on_key(void *user, const char *section, const char *key, const char *value)
{
    parse_ctx_t *x = user;
    if (strcmp(section, "curve") != 0) {
        snprintf(x->msg, sizeof x->msg, "%s",
                 section[0] ? "keys go in the [curve] section" : "key outside the [curve] section");
        return 0;
    }
    if (strcmp(key, "public-key") == 0) {
        uint8_t k[MW_CURVE_KEY_BYTES];
        if (decode_key(value, k) < 0) {
            snprintf(x->msg, sizeof x->msg, "public-key is not 40 characters of Z85");
            return 0;
        }
        if (x->list) {
            char src[PATH_MAX + 32];
            snprintf(src, sizeof src, "%s (key %d)", x->name, x->n_public + 1);
            x->n_public++;
            if (x->add(x->user, k, src, x->msg, sizeof x->msg) < 0) {
                x->stop = 1;
                return 0;
            }
            return 1;
        }
        if (x->n_public++) {
            snprintf(x->msg, sizeof x->msg, "a second public-key");
            return 0;
        }
        memcpy(x->pair->public_key, k, sizeof k);
        return 1;
    }
    if (strcmp(key, "secret-key") == 0) {
        if (x->list || !x->want_secret) {
            snprintf(x->msg, sizeof x->msg,
                     "a secret key where only public keys belong (give the .pub file, never "
                     "the .key file)");
            return 0;
        }
        if (x->n_secret++) {
            snprintf(x->msg, sizeof x->msg, "a second secret-key");
            return 0;
        }
        if (decode_key(value, x->pair->secret_key) < 0) {
            snprintf(x->msg, sizeof x->msg, "secret-key is not 40 characters of Z85");
            return 0;
        }
        return 1;
    }
    snprintf(x->msg, sizeof x->msg, "unknown key '%.64s' (expected public-key or secret-key)", key);
    return 0;
}

/* Runs inih over text; the message of the first error goes to err as "NAME:LINE: ...". */
static int parse_text(const char *text, parse_ctx_t *x, char *err, size_t errlen)
{
    int line = 1;
    for (const char *p = text; *p; line++) {
        size_t n = strcspn(p, "\n");
        if (n > KEYFILE_MAX_LINE) {
            snprintf(err, errlen, "%s:%d: line longer than %d characters", x->name, line,
                     KEYFILE_MAX_LINE);
            return -1;
        }
        p += n + (p[n] == '\n');
    }
    int rc = ini_parse_string(text, on_key, x);
    if (rc != 0) {
        if (x->stop)
            snprintf(err, errlen, "%s", x->msg);
        else if (rc > 0)
            snprintf(err, errlen, "%s:%d: %s", x->name, rc,
                     x->msg[0] ? x->msg : "syntax error (expected '[curve]' or 'key = value')");
        else
            snprintf(err, errlen, "%s: cannot parse (out of memory)", x->name);
        return -1;
    }
    return 0;
}

int mw_keyfile_parse(const char *text, const char *name, int want_secret, mw_keypair_t *out,
                     char *err, size_t errlen)
{
    parse_ctx_t x = {.want_secret = want_secret, .pair = out, .name = name};
    memset(out, 0, sizeof *out);
    int rc = parse_text(text, &x, err, errlen);
    if (rc == 0 && x.n_public != 1) {
        snprintf(err, errlen, "%s: no public-key", name);
        rc = -1;
    }
    if (rc == 0 && want_secret && x.n_secret != 1) {
        snprintf(err, errlen, "%s: no secret-key (a key pair file, NAME.key, is needed here)",
                 name);
        rc = -1;
    }
    if (rc == 0 && want_secret) {
        /* The public key must be the secret key's: a file edited by hand, or two halves of
         * different pairs, would otherwise fail later with an obscure handshake error. */
        char z_secret[MW_CURVE_Z85_CHARS + 1], z_public[MW_CURVE_Z85_CHARS + 1];
        uint8_t derived[MW_CURVE_KEY_BYTES];
        if (!zmq_z85_encode(z_secret, out->secret_key, MW_CURVE_KEY_BYTES) ||
            zmq_curve_public(z_public, z_secret) != 0 || !zmq_z85_decode(derived, z_public) ||
            memcmp(derived, out->public_key, MW_CURVE_KEY_BYTES) != 0) {
            snprintf(err, errlen, "%s: public-key is not the public key of secret-key", name);
            rc = -1;
        }
        mw_keyfile_wipe(z_secret, sizeof z_secret);
    }
    if (rc != 0)
        mw_keyfile_wipe(out, sizeof *out);
    return rc;
}

int mw_keyfile_read_pair(const char *path, mw_keypair_t *out, char *err, size_t errlen)
{
    char *text = read_whole(path, FILE_SECRET, KEYFILE_MAX_BYTES, err, errlen);
    if (!text)
        return -1;
    size_t len = strlen(text);
    int rc = mw_keyfile_parse(text, path, 1, out, err, errlen);
    mw_keyfile_wipe(text, len);
    free(text);
    return rc;
}

int mw_keyfile_read_public(const char *path, uint8_t key[MW_CURVE_KEY_BYTES], char *err,
                           size_t errlen)
{
    char *text = read_whole(path, FILE_ANY, KEYFILE_MAX_BYTES, err, errlen);
    if (!text)
        return -1;
    mw_keypair_t kp;
    size_t len = strlen(text);
    int rc = mw_keyfile_parse(text, path, 0, &kp, err, errlen);
    if (rc == 0)
        memcpy(key, kp.public_key, MW_CURVE_KEY_BYTES);
    mw_keyfile_wipe(text, len); /* a .key given by mistake: do not keep its secret around */
    free(text);
    return rc;
}

static int read_clients_file(int dirfd, const char *name, const char *path, parse_ctx_t *x,
                             char *err, size_t errlen)
{
    char *text = read_whole_at(dirfd, name, path, FILE_TRUSTED, CLIENTS_MAX_BYTES, err, errlen);
    if (!text)
        return -1;
    x->name = path;
    x->msg[0] = '\0';
    int before = x->n_public;
    int rc = parse_text(text, x, err, errlen);
    if (rc == 0 && x->n_public == before) {
        snprintf(err, errlen, "%s: no public-key", path);
        rc = -1;
    }
    mw_keyfile_wipe(text, strlen(text));
    free(text);
    return rc;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a > b && strcmp(s + a - b, suffix) == 0;
}

int mw_keyfile_read_clients(const char *path,
                            int (*add)(void *user, const uint8_t key[MW_CURVE_KEY_BYTES],
                                       const char *source, char *err, size_t errlen),
                            void *user, char *err, size_t errlen)
{
    parse_ctx_t x = {.list = 1, .add = add, .user = user, .name = path};
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return read_clients_file(AT_FDCWD, path, path, &x, err, errlen);
    /* The directory is checked on the descriptor it is then read through, and its files are
     * opened relative to it, so what was checked is what is read even if a name changes. */
    int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || fstat(dfd, &st) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        if (dfd >= 0)
            close(dfd);
        return -1;
    }
    if (!owner_trusted(&st)) {
        owner_error(path, &st, "add keys to this directory", err, errlen);
        close(dfd);
        return -1;
    }
    if (st.st_mode & 022) {
        snprintf(err, errlen,
                 "%s: mode %04o lets group or others add keys to this directory (chmod go-w it)",
                 path, (unsigned)(st.st_mode & 07777));
        close(dfd);
        return -1;
    }
    DIR *d = fdopendir(dfd); /* owns dfd from here; dirfd(d) opens the files */
    if (!d) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        close(dfd);
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (e->d_name[0] == '.' || !ends_with(e->d_name, ".pub"))
            continue;
        char file[PATH_MAX];
        if (snprintf(file, sizeof file, "%s/%s", path, e->d_name) >= (int)sizeof file) {
            snprintf(err, errlen, "%s/%s: path too long", path, e->d_name);
            rc = -1;
            break;
        }
        rc = read_clients_file(dirfd(d), e->d_name, file, &x, err, errlen);
    }
    closedir(d);
    if (rc == 0 && x.n_public == 0) {
        snprintf(err, errlen, "%s: no client keys (*.pub files) in this directory", path);
        rc = -1;
    }
    return rc;
}

/* ---- writing ------------------------------------------------------------------------------ */

/* Writes all of text to fd. Returns 0, or -1 with errno set. */
static int write_all(int fd, const char *text)
{
    size_t len = strlen(text), done = 0;
    while (done < len) {
        ssize_t n = write(fd, text + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        done += (size_t)n;
    }
    return 0;
}

/* Creates `path` with exactly `mode` (whatever the umask) holding `text`. Without force the
 * file must not exist (O_EXCL, never following a symbolic link); with force it is written to
 * a temporary file in the same directory and renamed over the old one, so a secret never
 * passes through a file with a wider mode. */
static int write_key_file(const char *path, const char *text, mode_t mode, int force, char *err,
                          size_t errlen)
{
    char tmp[PATH_MAX];
    const char *target = path;
    int fd;
    if (force) {
        if (snprintf(tmp, sizeof tmp, "%s.XXXXXX", path) >= (int)sizeof tmp) {
            snprintf(err, errlen, "%s: path too long", path);
            return -1;
        }
        fd = mkostemp(tmp, O_CLOEXEC); /* mode 0600 */
        target = tmp;
    } else {
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    }
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s%s", path, strerror(errno),
                 errno == EEXIST ? " (use --force to replace it)" : "");
        return -1;
    }
    if (fchmod(fd, mode) != 0 || write_all(fd, text) != 0 || fsync(fd) != 0) {
        snprintf(err, errlen, "%s: %s", target, strerror(errno));
        close(fd);
        unlink(target);
        return -1;
    }
    if (close(fd) != 0) {
        snprintf(err, errlen, "%s: %s", target, strerror(errno));
        unlink(target);
        return -1;
    }
    if (force && rename(tmp, path) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

int mw_keyfile_generate(const char *name, int force, char *z85_public, char *err, size_t errlen)
{
    char key_path[PATH_MAX], pub_path[PATH_MAX];
    if (!name[0] || snprintf(key_path, sizeof key_path, "%s.key", name) >= (int)sizeof key_path ||
        snprintf(pub_path, sizeof pub_path, "%s.pub", name) >= (int)sizeof pub_path) {
        snprintf(err, errlen, "'%s': not a usable name for key files", name);
        return -1;
    }
    struct stat st;
    if (!force) {
        /* Both are checked first so that a refusal writes nothing; O_EXCL still guards the
         * creation itself against a race. */
        for (int i = 0; i < 2; i++) {
            const char *p = i ? pub_path : key_path;
            if (lstat(p, &st) == 0) {
                snprintf(err, errlen, "%s exists; not overwritten (use --force to replace it)", p);
                return -1;
            }
        }
    }
    char pub[MW_CURVE_Z85_CHARS + 1], sec[MW_CURVE_Z85_CHARS + 1];
    if (zmq_curve_keypair(pub, sec) != 0) {
        snprintf(err, errlen, "zmq_curve_keypair: %s", zmq_strerror(zmq_errno()));
        return -1;
    }
    char text[512];
    snprintf(text, sizeof text,
             "# mpiwatch CURVE key pair (mpiwatch keygen). Keep this file secret: mode 0600.\n"
             "# Give %s.pub to the peers that must know this key.\n"
             "[curve]\npublic-key = %s\nsecret-key = %s\n",
             name, pub, sec);
    int rc = write_key_file(key_path, text, 0600, force, err, errlen);
    mw_keyfile_wipe(text, sizeof text);
    mw_keyfile_wipe(sec, sizeof sec);
    if (rc != 0)
        return -1;
    snprintf(text, sizeof text,
             "# mpiwatch CURVE public key (mpiwatch keygen); the secret half is in %s.key.\n"
             "[curve]\npublic-key = %s\n",
             name, pub);
    if (write_key_file(pub_path, text, 0644, force, err, errlen) != 0) {
        if (!force)
            unlink(key_path); /* all or nothing: a pair without its .pub is only confusing */
        return -1;
    }
    if (z85_public)
        memcpy(z85_public, pub, sizeof pub);
    return 0;
}

/* ---- clients ------------------------------------------------------------------------------ */

int mw_curve_client_load(const char *server_pub, const char *own_key, mw_curve_client_t *out,
                         char *err, size_t errlen)
{
    if (!server_pub || !server_pub[0])
        server_pub = getenv(MW_ENV_CURVE_SERVER);
    if (!own_key || !own_key[0])
        own_key = getenv(MW_ENV_CURVE_KEY);
    int have_server = server_pub && server_pub[0], have_key = own_key && own_key[0];
    if (!have_server && !have_key)
        return 0;
    if (!have_server || !have_key) {
        snprintf(err, errlen,
                 "CURVE needs both the collector's public key (%s, --curve-server) and this "
                 "client's key pair (%s, --curve-key); only the %s is given",
                 MW_ENV_CURVE_SERVER, MW_ENV_CURVE_KEY, have_server ? "first" : "second");
        return -1;
    }
    memset(out, 0, sizeof *out);
    if (mw_keyfile_read_public(server_pub, out->server_key, err, errlen) != 0 ||
        mw_keyfile_read_pair(own_key, &out->own, err, errlen) != 0) {
        mw_keyfile_wipe(out, sizeof *out);
        return -1;
    }
    return 1;
}

int mw_curve_client_apply(void *sock, const mw_curve_client_t *keys, char *err, size_t errlen)
{
    static const struct {
        int opt;
        const char *name;
        size_t offset;
    } opts[] = {
        {ZMQ_CURVE_SERVERKEY, "ZMQ_CURVE_SERVERKEY", offsetof(mw_curve_client_t, server_key)},
        {ZMQ_CURVE_PUBLICKEY, "ZMQ_CURVE_PUBLICKEY",
         offsetof(mw_curve_client_t, own) + offsetof(mw_keypair_t, public_key)},
        {ZMQ_CURVE_SECRETKEY, "ZMQ_CURVE_SECRETKEY",
         offsetof(mw_curve_client_t, own) + offsetof(mw_keypair_t, secret_key)},
    };
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        if (zmq_setsockopt(sock, opts[i].opt, (const char *)keys + opts[i].offset,
                           MW_CURVE_KEY_BYTES) != 0) {
            snprintf(err, errlen, "zmq_setsockopt(%s): %s", opts[i].name,
                     zmq_strerror(zmq_errno()));
            return -1;
        }
    }
    return 0;
}
