/* grid_wrap.h: the attack of issue 12 on the window grid, for the tests of mw_grid_plan
 * (tests/proto/test_grid.c) and of the shim's MS@K requests (tests/shim/test_grid.c). */
#ifndef MW_TEST_GRID_WRAP_H
#define MW_TEST_GRID_WRAP_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#define MS 1000000ull

/* A K below 10^15 (what a steering value can hold) whose start on a grid of one segment
 * {0, 0, len} wraps around 2^64 to somewhere in [lo, lo + 3 s): K x len = T (mod 2^64). With
 * len = 2^s x odd, K = (T / 2^s) x odd^-1 (mod 2^(64-s)) for T a multiple of 2^s; about one
 * such K in 70 fits 15 digits. */
static inline uint64_t wrapping_k(uint64_t len, uint64_t lo)
{
    unsigned sh = (unsigned)__builtin_ctzll(len);
    uint64_t odd = len >> sh, inv = odd; /* Newton's iteration for the inverse mod 2^64 */
    for (int i = 0; i < 6; i++)
        inv *= 2 - odd * inv;
    const uint64_t step = 1ull << sh, mask = UINT64_MAX >> sh;
    for (uint64_t t = (lo + step - 1) & ~(step - 1); t < lo + 3000 * MS; t += step) {
        uint64_t k = ((t >> sh) * inv) & mask;
        if (k < 1000000000000000ull && k > UINT64_MAX / len) { /* a real wrap */
            assert_int_equal(k * len, t);                      /* the old, unchecked product */
            return k;
        }
    }
    fail_msg("no wrapping K found");
    return 0;
}

#endif
