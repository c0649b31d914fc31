/* clocksync.c: one time base for the whole job, computed inside MPI_Init.
 *
 * DESIGN: every rank r != 0 ping-pongs with rank 0 `rounds` times over a private duplicate
 * of MPI_COMM_WORLD (PMPI only, so nothing is recorded and no application message can match).
 * Each round gives rank 0's monotonic clock at the midpoint of the round trip; the round with
 * the smallest round-trip time wins, and half of that time bounds the error. Rank 0 then
 * broadcasts the offset of its monotonic clock to its realtime clock, the job identity and
 * the window settings, so that global time is rank 0's realtime and window k is the same
 * interval on every rank. Rank 0 serves ranks one after the other: O(size x rounds) round
 * trips, a fraction of a second for a few thousand ranks.
 */
#include "shim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TAG_PING 7101
#define TAG_PONG 7102

typedef struct {
    mw_jobinfo_t info;
    int64_t realtime_minus_mono; /* rank 0 */
} bcast_t;

static int64_t realtime_minus_mono(void)
{
    struct timespec a, r, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    clock_gettime(CLOCK_REALTIME, &r);
    clock_gettime(CLOCK_MONOTONIC, &b);
    int64_t mono =
        ((int64_t)a.tv_sec * 1000000000 + a.tv_nsec + (int64_t)b.tv_sec * 1000000000 + b.tv_nsec) /
        2;
    return (int64_t)r.tv_sec * 1000000000 + r.tv_nsec - mono;
}

int mw__clocksync(MPI_Comm comm, int rounds, mw_jobinfo_t *info)
{
    int rank, size;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    int64_t mono_offset = 0; /* rank 0's monotonic minus ours */
    uint64_t best = UINT64_MAX;
    if (rank == 0) {
        for (int r = 1; r < size; r++) {
            for (int i = 0; i < rounds; i++) {
                uint64_t t;
                if (PMPI_Recv(&t, 8, MPI_BYTE, r, TAG_PING, comm, MPI_STATUS_IGNORE) != 0)
                    return -1;
                t = mw__monotonic_ns();
                if (PMPI_Send(&t, 8, MPI_BYTE, r, TAG_PONG, comm) != 0)
                    return -1;
            }
        }
        best = 0;
    } else {
        for (int i = 0; i < rounds; i++) {
            uint64_t t1 = mw__monotonic_ns(), t0;
            if (PMPI_Send(&t1, 8, MPI_BYTE, 0, TAG_PING, comm) != 0 ||
                PMPI_Recv(&t0, 8, MPI_BYTE, 0, TAG_PONG, comm, MPI_STATUS_IGNORE) != 0)
                return -1;
            uint64_t t2 = mw__monotonic_ns();
            if (t2 - t1 < best) {
                best = t2 - t1;
                mono_offset = (int64_t)t0 - (int64_t)(t1 + (t2 - t1) / 2);
            }
        }
    }
    bcast_t b;
    memset(&b, 0, sizeof b);
    if (rank == 0) {
        b.info = *info;
        const char *job = getenv("MPIWATCH_JOB");
        char host[64] = "";
        gethostname(host, sizeof host - 1);
        if (job && *job)
            snprintf(b.info.job, sizeof b.info.job, "%s", job);
        else
            snprintf(b.info.job, sizeof b.info.job, "%.40s-%ld-%ld", host, (long)getpid(),
                     (long)time(NULL));
        b.realtime_minus_mono = realtime_minus_mono();
    }
    if (PMPI_Bcast(&b, (int)sizeof b, MPI_BYTE, 0, comm) != MPI_SUCCESS)
        return -1;
    *info = b.info;
    info->job[sizeof info->job - 1] = 0;
    mw__g.offset_ns = mono_offset + b.realtime_minus_mono;
    mw__g.clock_error_ns = rank == 0 ? 0 : best / 2;
    return 0;
}
