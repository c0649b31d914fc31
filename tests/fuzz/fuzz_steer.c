/* fuzz_steer.c: a libFuzzer target for the shim's steering message parsing (pmpi-shim/steer.c,
 * and through its built-in keys grid.c and capture.c).
 *
 * One input is a sequence of received Steer frames (the second frame of a message on the
 * rank's SUB socket), each preceded by its length as 2 little-endian bytes. Each goes to
 * mw__steer_take(), the parser mw__steer_drain() calls for a frame it received: decoding into
 * the static arena, the checks (key, value, job, rank list), the built-in keys (pause, resume,
 * capture=N[@K], window=MS@K, which change the window grid) and the ring to the application.
 * After the input, mw_poll() delivers what the ring holds to a callback that checks what the
 * library promises the application: a key of 1..64 of [A-Za-z0-9._-] and a value of at most
 * 1024 bytes without control characters. A broken promise aborts (a finding).
 *
 * DESIGN: the shim's objects are linked as they are in libmpiwatch.so, without MPI_Init: the
 * recorder is set up the way tests/shim/test_record.c sets it up (rank 0 of 8, 100 ms windows),
 * and the grid is reset before every input so that each input starts from one grid segment.
 * The rank's job is "" (mw__steer_open is never called), so the seeds' Steer messages name the
 * job "". The shim never allocates after init, so a leak or a heap access here is a bug of the
 * steering code itself. State that the shim keeps for the run (counters, a capture scheduled
 * by an earlier input) carries over between inputs, as it does between messages in a rank.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpiwatch.h"
#include "shim.h"
#include "fuzz.h"

#define FUZZ_WINDOW_NS 100000000ull
#define FUZZ_SUBSLOTS 10u

static int key_ok(const char *k)
{
    size_t n = strlen(k);
    if (n == 0 || n > 64)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = k[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

static void on_steer(const char *key, const char *value, void *ctx)
{
    (void)ctx;
    size_t n = strlen(value);
    int bad = !key_ok(key) || n > 1024;
    for (size_t i = 0; i < n; i++)
        bad |= (unsigned char)value[i] < 0x20 || value[i] == 0x7f;
    if (bad || strncmp(key, "mpiwatch.", 9) == 0) /* built-in keys never reach the application */
        abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    memset(&mw__g, 0, sizeof mw__g);
    mw__config_read(&mw__g.cfg);
    mw__g.cfg.subslots = FUZZ_SUBSLOTS;
    mw__g.cfg.max_threads = 2;
    mw__g.size = 8;
    mw__g.rank = 0;
    mw__timer_init(2);
    if (mw__alloc() != 0)
        abort();
    mw__set_state(1, 0);
    mw_on_steer(on_steer, NULL);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mw__grid_init(FUZZ_WINDOW_NS, FUZZ_SUBSLOTS);
    mw__set_state(1, 0);
    size_t pos = 0;
    while (pos + 2 <= size) {
        size_t len = (size_t)data[pos] | (size_t)data[pos + 1] << 8;
        pos += 2;
        if (len > size - pos)
            len = size - pos;
        /* A copy of exactly the frame's bytes, so that ASan sees a read past its end. */
        uint8_t *frame = malloc(len ? len : 1);
        if (!frame)
            return 0;
        memcpy(frame, data + pos, len);
        mw__steer_take(frame, len);
        free(frame);
        pos += len;
    }
    mw_poll();
    return 0;
}
