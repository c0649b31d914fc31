#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run) and as the README's second command runs it,
# after tools/setup.sh has built the tree:
#   1. every test of the normal build (CTest in build/: unit tests, real mpirun jobs, the fault
#      suite, the libFuzzer targets, which run on the clang tree inside it, and the static
#      checks of the sources, tools/lint.sh);
#   2. the same suite once more on a tree built with AddressSanitizer and
#      UndefinedBehaviorSanitizer (-DMW_SANITIZE=address,undefined, in build-asan/): the unit
#      tests with leak detection, everything else without (Open MPI does not free what it
#      allocates) and with the library preloaded after libasan (docs/fuzzing.md, Sanitizers);
#      not the static checks, which read the sources only.
# MW_TEST_SANITIZED=0 skips the second part (e.g. a quick local run). The exit status is 0
# only when every part passed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
build=${BUILD_DIR:-build}
rc=0

ctest --test-dir "$build" --output-on-failure || rc=1

if [ "${MW_TEST_SANITIZED:-1}" != 0 ]; then
    asan=${build}-asan
    echo "mpiwatch tests: building the sanitized tree in $asan" >&2
    if cmake -S . -B "$asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMW_SANITIZE=address,undefined \
        -DMW_WERROR=OFF -DMW_FUZZ=OFF >&2 && cmake --build "$asan" -j"$(nproc)" >&2; then
        export UBSAN_OPTIONS=print_stacktrace=1 MW_SANITIZED=1
        ASAN_OPTIONS=detect_leaks=1 ctest --test-dir "$asan" -L unit -LE fuzz \
            --output-on-failure || rc=1
        ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0 ctest --test-dir "$asan" \
            -LE 'unit|fuzz|lint' --output-on-failure || rc=1
    else
        echo "mpiwatch tests: the sanitized tree did not build" >&2
        rc=1
    fi
fi
exit "$rc"
