#!/bin/bash
# launcher_exec.sh N: `mpirun -np 4 mpiwatch exec ./known_c N`, the collector address given
# to the ranks with -x; the summary must match the known pattern exactly.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
n=$1
mw_setup launcher_exec
mw_require MW_LAUNCHER
mw_run_job "^known_c: $MW_NP ranks, N=$n, pattern ok" \
    "$MW_MPIRUN" --oversubscribe -np "$MW_NP" -x MPIWATCH_COLLECTOR="$MW_EP" -x MPIWATCH_WINDOW_MS \
    "$MW_LAUNCHER" exec "$MW_PROGRAMS/known_c" "$n"
mw_check --pattern known --n "$n" --label "mpiwatch exec known_c"
