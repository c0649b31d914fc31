/* mw_endpoint.c: the default collector endpoint of this user (mw_default_endpoint).
 *
 * DESIGN: a rank started without MPIWATCH_COLLECTOR and a collector started without --listen
 * must meet somewhere that no other user can take over. A fixed local TCP port (the old
 * default, tcp://127.0.0.1:7811) can be bound by any local user first, who then receives
 * every unconfigured rank's samples. An ipc:// socket inside a directory that only this user
 * can enter cannot be bound, replaced or connected to by anyone else: the directory is
 * $XDG_RUNTIME_DIR/mpiwatch when XDG_RUNTIME_DIR is set to an absolute path (a per-user
 * directory of mode 0700 on systemd machines), else /tmp/mpiwatch-UID. It is created with mode
 * 0700 when missing, and then checked with lstat(): a real directory (not a symlink), owned by
 * the effective user, with no permission for group or others. Anything else (another user
 * created the name first, a symlink, a mode opened up) is refused with the reason: the caller
 * then has no default endpoint (the library stays inert, the collector asks for --listen),
 * never a shared one. Both ends compute it with this one function, so they agree.
 */
#include "mw_proto.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int mw_default_endpoint(char *ep, size_t eplen, char *err, size_t errlen)
{
    char dir[160];
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    int n = xdg && xdg[0] == '/'
                ? snprintf(dir, sizeof dir, "%s/mpiwatch", xdg)
                : snprintf(dir, sizeof dir, "/tmp/mpiwatch-%lu", (unsigned long)geteuid());
    /* A unix socket path holds at most 107 bytes: DIR, "/collector" and the NUL. */
    if (n < 0 || (size_t)n >= sizeof dir || (size_t)n + 11 > 107) {
        snprintf(err, errlen, "the default endpoint's directory name is too long");
        return -1;
    }
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    struct stat st;
    if (lstat(dir, &st) != 0) {
        snprintf(err, errlen, "cannot check %s: %s", dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
        snprintf(err, errlen,
                 "%s is not a directory of this user with mode 0700 (a symlink, another "
                 "user's, or open to others): no default endpoint",
                 dir);
        return -1;
    }
    if ((size_t)snprintf(ep, eplen, "ipc://%s/collector", dir) >= eplen) {
        snprintf(err, errlen, "the default endpoint is too long");
        return -1;
    }
    return 0;
}
