/* mw_file.c: whole-file outputs written atomically and durably (mw_file.h).
 *
 * DESIGN: the old way, fopen("PATH.tmp", "w") then rename, had three faults: the fixed name
 * could be a symbolic link planted by another user (fopen follows it and truncates its
 * target), two writers of the same PATH shared one temporary file, and without fsync a crash
 * soon after the rename could leave an empty file where the old one was. Here the temporary
 * file is made by mkstemp (O_EXCL on a random name: it is always a new file of ours) in the
 * target's directory, so the rename stays within one file system and is atomic; the data is
 * fsynced before the rename and the directory after it (the order ext4 and XFS document for a
 * durable replace). mkstemp creates mode 0600; the file is then given 0666 less the process's
 * umask, which is what fopen would have produced, read from /proc/self/status because umask()
 * can only be read by changing it, which is not safe while other threads create files. If the
 * umask cannot be read, 0600 is kept (private is the safe side).
 */
#define _GNU_SOURCE /* mkostemp, syncfs */
#include "mw_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A temporary name keeps at most this much of the target's base name, so that the prefix "."
 * and the suffix ".XXXXXX" never push it past NAME_MAX (255). */
#define AFILE_BASE_KEEP 200

struct mw_afile {
    FILE *f;
    char *path; /* the target */
    char *tmp;  /* the temporary file beside it */
    char *dir;  /* the target's directory, to fsync after the rename */
};

/* The process's umask, or -1 when it cannot be read without changing it. */
static int current_umask(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    if (!f)
        return -1;
    char line[256];
    int mask = -1;
    while (fgets(line, sizeof line, f)) {
        unsigned m;
        if (sscanf(line, "Umask: %o", &m) == 1) {
            mask = (int)(m & 0777);
            break;
        }
    }
    fclose(f);
    return mask;
}

static void afile_free(mw_afile_t *a)
{
    free(a->path);
    free(a->tmp);
    free(a->dir);
    free(a);
}

mw_afile_t *mw_afile_open(const char *path, char *err, size_t errlen)
{
    mw_afile_t *a = calloc(1, sizeof *a);
    size_t plen = strlen(path);
    if (!a || plen == 0 || path[plen - 1] == '/') {
        snprintf(err, errlen, "%s: %s", path, a ? "not a file name" : "out of memory");
        free(a);
        return NULL;
    }
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t dlen = slash ? (size_t)(slash - path) : 0, blen = strlen(base);
    if (blen > AFILE_BASE_KEEP)
        blen = AFILE_BASE_KEEP;
    a->path = strdup(path);
    a->dir = slash ? strndup(path, dlen ? dlen : 1) : strdup("."); /* "/x": the root */
    a->tmp = malloc(dlen + blen + 10);
    if (!a->path || !a->dir || !a->tmp) {
        snprintf(err, errlen, "%s: out of memory", path);
        afile_free(a);
        return NULL;
    }
    snprintf(a->tmp, dlen + blen + 10, "%.*s%s.%.*s.XXXXXX", (int)dlen, path, slash ? "/" : "",
             (int)blen, base);
    int fd = mkostemp(a->tmp, O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        afile_free(a);
        return NULL;
    }
    int mask = current_umask();
    if (mask >= 0)
        (void)fchmod(fd, (mode_t)(0666 & ~mask)); /* 0600 stays if it fails: the safe side */
    if (!(a->f = fdopen(fd, "w"))) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        close(fd);
        unlink(a->tmp);
        afile_free(a);
        return NULL;
    }
    return a;
}

FILE *mw_afile_stream(mw_afile_t *a)
{
    return a->f;
}

void mw_afile_abort(mw_afile_t *a)
{
    if (!a)
        return;
    if (a->f)
        fclose(a->f);
    unlink(a->tmp);
    afile_free(a);
}

/* mw_afile_commit and mw_afile_commit_nosync. */
static int afile_commit(mw_afile_t *a, int durable, char *err, size_t errlen)
{
    int e = 0;
    if (fflush(a->f) != 0 || ferror(a->f))
        e = errno ? errno : EIO;
    else if (durable && fsync(fileno(a->f)) != 0)
        e = errno;
    if (fclose(a->f) != 0 && !e)
        e = errno;
    a->f = NULL;
    if (!e && rename(a->tmp, a->path) != 0)
        e = errno;
    if (e) {
        snprintf(err, errlen, "cannot write %s: %s", a->path, strerror(e));
        mw_afile_abort(a);
        return -1;
    }
    /* The new entry is in place; syncing the directory makes the rename durable. A file
     * system that cannot sync a directory (EINVAL) has nothing more to do. */
    int dfd = durable ? open(a->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (dfd >= 0) {
        if (fsync(dfd) != 0 && errno != EINVAL && errno != EROFS)
            e = errno;
        close(dfd);
    }
    if (e)
        snprintf(err, errlen, "cannot write %s: syncing its directory: %s", a->path, strerror(e));
    afile_free(a);
    return e ? -1 : 0;
}

int mw_afile_commit(mw_afile_t *a, char *err, size_t errlen)
{
    return afile_commit(a, 1, err, errlen);
}

int mw_afile_commit_nosync(mw_afile_t *a, char *err, size_t errlen)
{
    return afile_commit(a, 0, err, errlen);
}

int mw_file_sync_fs(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0 || syncfs(fd) != 0) {
        snprintf(err, errlen, "cannot sync %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

int mw_file_write_atomic(const char *path, const void *data, size_t len, char *err, size_t errlen)
{
    mw_afile_t *a = mw_afile_open(path, err, errlen);
    if (!a)
        return -1;
    if (len && fwrite(data, 1, len, a->f) != len) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno ? errno : EIO));
        mw_afile_abort(a);
        return -1;
    }
    return mw_afile_commit(a, err, errlen);
}
