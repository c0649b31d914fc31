#!/bin/bash
# regions.sh api|traceoff|instr|fortran: code regions and per-function peer entries on the rank's side
# (docs/regions.md), in a real MPI job whose samples mw-region-sink (a stand-in collector)
# decodes and check_regions.py checks against the program's known pattern:
#   api      tests/programs/regions (mw_region_begin/end), 2 ranks x 2 threads
#   traceoff the same with MPIWATCH_TRACE=off (regions do not depend on tracing)
#   instr    tests/programs/regions_instr (-finstrument-functions, MPIWATCH_REGIONS)
#   fortran  tests/programs/regions_f (the Fortran bindings), 2 ranks
. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"
mode=${1:-}
case $mode in api | traceoff | instr | fortran) ;; *) echo "usage: regions.sh api|traceoff|instr|fortran" >&2; exit 2 ;; esac
mw_init "shim_regions_$mode"
mw_require MW_LIB MW_PROGRAMS MW_MPIRUN MW_SINK MW_REGION_CHECKER
mw_mpi_env
np=2
n=20
case $mode in
api) prog=$MW_PROGRAMS/regions ;;
traceoff)
    prog=$MW_PROGRAMS/regions
    export MPIWATCH_TRACE=off
    ;;
instr) prog=$MW_PROGRAMS/regions_instr ;;
fortran)
    prog=$MW_PROGRAMS/regions_f
    [ -x "$prog" ] || mw_skip "no Fortran program (no Fortran compiler or MPI Fortran support)"
    ;;
esac
[ -x "$prog" ] || mw_fail "program not built: $prog"
export MPIWATCH_TRACE=${MPIWATCH_TRACE:-on} MPIWATCH_WINDOW_MS=20 MPIWATCH_REGION_DEPTH=8 MPIWATCH_REGIONS='region_*,thread_?,deep_region,paused_*'
"$MW_SINK" "ipc://$MW_T/ingest" "$np" "$MW_T/out.jsonl" >"$MW_T/sink.out" 2>"$MW_T/sink.err" &
sink=$!
"$MW_MPIRUN" --oversubscribe -np "$np" -x LD_PRELOAD="$MW_LIB" \
    -x MPIWATCH_COLLECTOR="ipc://$MW_T/ingest" -x MPIWATCH_WINDOW_MS -x MPIWATCH_REGION_DEPTH \
    -x MPIWATCH_REGIONS -x MPIWATCH_TRACE -x MPIWATCH_VERBOSE=1 \
    "$prog" "$n" >"$MW_T/app.out" 2>"$MW_T/app.err" ||
    { cat "$MW_T/app.err" >&2; mw_fail "the job failed"; }
MW_FAILURE_LOG=$MW_T/app.err
wait "$sink" || { cat "$MW_T/sink.err" >&2; mw_fail "mw-region-sink failed"; }
MW_FAILURE_LOG=$MW_T/out.jsonl
"$MW_PYTHON" "$MW_REGION_CHECKER" "$MW_T/out.jsonl" --np "$np" --n "$n" \
    --mode "${mode/traceoff/api}" --app "$MW_T/app.out" || mw_fail "the regions differ from the expectation (above)"
echo "shim_regions_$mode: ok"
