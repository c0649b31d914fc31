/* memfile.h: an input of a fuzz target as a file, for parsers that take a path.
 *
 * DESIGN: the input is written to a memfd and named /proc/self/fd/N: no file on disk, nothing
 * to clean up after a crash, and every input is a fresh file of exactly its size (the parser
 * opens the path anew, as it would open the user's file). Header-only: each target is one
 * translation unit.
 */
#ifndef MW_FUZZ_MEMFILE_H
#define MW_FUZZ_MEMFILE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

/* Writes data to a new memfd and puts its path in path. Returns the descriptor (close it when
 * done), or -1. */
static inline int memfile(const uint8_t *data, size_t size, char *path, size_t pathlen)
{
    int fd = memfd_create("mw-fuzz", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(fd, data + done, size - done);
        if (w <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)w;
    }
    snprintf(path, pathlen, "/proc/self/fd/%d", fd);
    return fd;
}

#endif
