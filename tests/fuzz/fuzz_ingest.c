/* fuzz_ingest.c: a libFuzzer target for the collector's decode + validate + merge path.
 *
 * One fuzz input is a small script run against a fresh collector (the socket-free core of
 * fixture.h: fake clocks, real time fixed in November 2023, no ZeroMQ). The script is a
 * sequence of operations, each starting with one byte `op`:
 *
 *   op & 3 == 0   frame: a 2-byte little-endian length L follows, then L bytes (fewer if the
 *                 input ends first), given to mw_collector_frame() as one ZeroMQ frame
 *   op & 3 == 1   the same, but decoded with protobuf-c's malloc allocator (see below)
 *   op & 3 == 2   time passes: (op >> 2) x 250 ms on both clocks (0..15.75 s), then the timers
 *                 run, so windows reach their lateness deadline and jobs their silence timeout
 *   op & 3 == 3   by (op >> 2) & 3: 0 a 2-frame message (length-prefixed like a frame),
 *                 1 SIGTERM-style finish, 2 jump to the collector's next timer and run it,
 *                 3 format the live view (it is disabled, but its text is built from the state)
 *
 * A sequence is what lets the fuzzer reach the deep states: a hello must be accepted before a
 * sample is merged, and windows only close when time passes. tests/fuzz/seeds.c writes seed
 * inputs in this format from the valid messages of testmsg.c.
 *
 * DESIGN: the collector decodes into one 32 MiB arena, inside which ASan cannot see the end
 * of a repeated field: an index one past an array would read the next field, not a redzone.
 * So this file replaces mw_envelope_decode() (the build links with
 * -Wl,--wrap=mw_envelope_decode: the collector's calls reach __wrap_mw_envelope_decode below,
 * and __real_mw_envelope_decode is the real one) and, for op 1 frames, unpacks with malloc, which
 * gives every array its own redzone. Op 0 frames keep the arena, so its code is fuzzed too.
 * The decoded envelope lives until the next decode, exactly as with the arena.
 *
 * Every frame is also checked against protobuf-c (the property of tests/collector/
 * test_decode.c): when the hand-written decoder (proto/mw_decode.c for samples,
 * mw_decode_partial.c for an aggregator's partials) answers on its own, in an
 * arena of its own sized for the largest input, protobuf-c (with malloc) must accept the frame
 * and give a deep-equal envelope (pbequal.c); a difference aborts, which libFuzzer reports as
 * a crash with the frame's script.
 *
 * State: the collector is made once (its arena is large, and a fresh one per input would cost
 * more than the input) and its job, windows and counters are reset before every input, so each
 * input runs from the same state and a crash reproduces from its file alone. Memory is bounded
 * by what one input can make the collector allocate (a hello may size a job of 2^20 ranks).
 *
 * The collector's report is printed on stdio's stderr at every job end; that stream is sent to
 * /dev/null here (set MW_FUZZ_VERBOSE=1 to keep it). Sanitizer and libFuzzer messages are
 * written to file descriptor 2 directly and are not affected.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "partial.h"
#include "steps.h"
#include "fixture.h"
#include "pbequal.h"
#include "fuzz.h"

/* The real decoder and its replacement, named by the linker's --wrap (see the top). */
Mpiwatch__Envelope *__real_mw_envelope_decode(mw_arena_t *arena, const void *data, size_t len);
Mpiwatch__Envelope *__wrap_mw_envelope_decode(mw_arena_t *arena, const void *data, size_t len);

static int use_malloc_decode;
static Mpiwatch__Envelope *malloc_env; /* the last envelope unpacked with malloc */
static mw_arena_t diff_arena;          /* the fast decoder's arena in the differential check */

#define FUZZ_MAX_LEN 65536u /* the largest frame an input can hold (2-byte length) */

/* The fast decoder, when it answers, agrees with protobuf-c (see the top of this file). */
static void differential(const void *data, size_t len)
{
    mw_arena_reset(&diff_arena); /* the fast decoder checks MW_DECODE_FITS() itself */
    Mpiwatch__Envelope *fast = mw__envelope_decode_fast(&diff_arena, data, len);
    if (!fast)
        return; /* protobuf-c decides */
    Mpiwatch__Envelope *ref = mpiwatch__envelope__unpack(NULL, len, data);
    const char *diff = ref ? pb_diff(&ref->base, &fast->base) : "protobuf-c rejects the frame";
    if (diff) {
        /* File descriptor 2 directly: stdio's stderr may be /dev/null (see the top). */
        dprintf(2, "fuzz_ingest: the fast decoder differs from protobuf-c: %s\n", diff);
        abort();
    }
    mpiwatch__envelope__free_unpacked(ref, NULL);
}

static void release_malloc_env(void)
{
    if (malloc_env) {
        mpiwatch__envelope__free_unpacked(malloc_env, NULL);
        malloc_env = NULL;
    }
}

Mpiwatch__Envelope *__wrap_mw_envelope_decode(mw_arena_t *arena, const void *data, size_t len)
{
    release_malloc_env();
    differential(data, len);
    if (!use_malloc_decode)
        return __real_mw_envelope_decode(arena, data, len);
    if (len > MW_MAX_MESSAGE_BYTES)
        return NULL;
    malloc_env = mpiwatch__envelope__unpack(NULL, len, data);
    return malloc_env;
}

static mw_collector_options_t opt;
static mw_collector_t *coll;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *verbose = getenv("MW_FUZZ_VERBOSE");
    if (!verbose || strcmp(verbose, "1") != 0) {
        FILE *null = fopen("/dev/null", "w");
        if (null)
            stderr = null;
    }
    mw__log_level = MW_LOG_ERROR;
    mw_collector_options_defaults(&opt);
    opt.quiet = 1;
    coll = malloc(sizeof *coll);
    if (!coll || mw_collector_init(coll, &opt) < 0 ||
        mw_arena_init(&diff_arena,
                      MW_DECODE_SLACK_BYTES + (size_t)MW_DECODE_BYTES_RATIO * FUZZ_MAX_LEN) < 0)
        abort();
    return 0;
}

/* Brings the collector back to the state mw_collector_init() leaves, keeping the arena. */
static void collector_reset(void)
{
    mw_arena_t arena = coll->arena;
    if (coll->merge_ready)
        mw__merge_free(&coll->merge);
    mw__steps_free(coll);
    mw__partial_free(coll); /* a parent's state for its aggregators' partials */
    mw__pb_encoder_free(&coll->enc);
    mw__job_free(&coll->job);
    memset(coll, 0, sizeof *coll);
    coll->opt = &opt;
    coll->arena = arena;
    mw__live_init(&coll->live, stderr, 0);
}

/* Reads a 2-byte length and returns the frame that follows (clipped to the input). */
static const uint8_t *take_frame(const uint8_t **p, const uint8_t *end, size_t *len)
{
    size_t want = 0;
    if (end - *p >= 2) {
        want = (size_t)(*p)[0] | (size_t)(*p)[1] << 8;
        *p += 2;
    } else {
        *p = end;
    }
    if (want > (size_t)(end - *p))
        want = (size_t)(end - *p);
    const uint8_t *frame = *p;
    *p += want;
    *len = want;
    return frame;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mw_clock_t now = {.mono_ns = FX_MONO_NS, .real_ns = FX_REAL_NS};
    const uint8_t *p = data, *end = data + size;
    char live[4096];
    size_t len;

    collector_reset();
    while (p < end) {
        uint8_t op = *p++;
        switch (op & 3) {
        case 0:
        case 1: {
            const uint8_t *frame = take_frame(&p, end, &len);
            use_malloc_decode = op & 1;
            mw_collector_frame(coll, frame, len, 1, &now);
            break;
        }
        case 2:
            now.mono_ns += (uint64_t)(op >> 2) * 250 * MW_NS_PER_MS;
            now.real_ns += (uint64_t)(op >> 2) * 250 * MW_NS_PER_MS;
            mw_collector_tick(coll, &now);
            break;
        default:
            switch ((op >> 2) & 3) {
            case 0: {
                const uint8_t *frame = take_frame(&p, end, &len);
                use_malloc_decode = 0;
                mw_collector_frame(coll, frame, len, 2, &now);
                break;
            }
            case 1:
                mw_collector_finish(coll, &now);
                break;
            case 2: {
                long ms = mw_collector_timeout_ms(coll, &now);
                if (ms > 0) {
                    now.mono_ns += (uint64_t)ms * MW_NS_PER_MS;
                    now.real_ns += (uint64_t)ms * MW_NS_PER_MS;
                }
                mw_collector_tick(coll, &now);
                break;
            }
            default:
                mw__live_format(&coll->live, coll, op >> 4 & 1, live, sizeof live);
                break;
            }
        }
    }
    release_malloc_env();
    use_malloc_decode = 0;
    return 0;
}
