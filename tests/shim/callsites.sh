#!/bin/bash
# callsites.sh c|fortran|f08|off|stripped|full: call sites on the rank's side (docs/callsites.md), in a
# real MPI job whose samples mw-site-sink (a stand-in collector) decodes and
# check_callsites.py checks against the program's known pattern and its source's markers:
#   c         tests/programs/callsites (-g): exact counts per (site, function), file, line and
#             function of every site
#   fortran   tests/programs/callsites_f (use mpi, -g): the same, the lines in the .F90 source
#   f08       tests/programs/callsites_f08 (use mpi_f08, -g): the same
#   off       MPIWATCH_CALLSITES=off: no site field in any sample
#   stripped  a stripped copy of callsites: module and offset, no file or line, exact counts
#   full      MPIWATCH_CALLSITES_MAX=1: the slot tables overflow; entries + dropped are exact
. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"
mode=${1:-}
case $mode in c | fortran | f08 | off | stripped | full) ;;
*) echo "usage: callsites.sh c|fortran|f08|off|stripped|full" >&2; exit 2 ;;
esac
mw_init "shim_callsites_$mode"
mw_require MW_LIB MW_PROGRAMS MW_MPIRUN MW_SITE_SINK MW_SITE_CHECKER MW_SOURCES
mw_mpi_env
np=2
n=20000
prog=$MW_PROGRAMS/callsites
src=$MW_SOURCES/callsites.c
case $mode in
fortran)
    prog=$MW_PROGRAMS/callsites_f
    src=$MW_SOURCES/callsites_f.F90
    [ -x "$prog" ] || mw_skip "no Fortran program (no Fortran compiler or MPI Fortran support)"
    ;;
f08)
    prog=$MW_PROGRAMS/callsites_f08
    src=$MW_SOURCES/callsites_f.F90
    [ -x "$prog" ] || mw_skip "no mpi_f08 program (no Fortran compiler or mpi_f08 module)"
    ;;
off) export MPIWATCH_CALLSITES=off ;;
full) export MPIWATCH_CALLSITES_MAX=1 ;;
stripped)
    [ -x "$prog" ] || mw_fail "program not built: $prog"
    command -v strip >/dev/null || mw_skip "no strip"
    strip -o "$MW_T/callsites_stripped" "$prog" || mw_fail "strip failed"
    prog=$MW_T/callsites_stripped
    ;;
esac
[ -x "$prog" ] || mw_fail "program not built: $prog"
export MPIWATCH_WINDOW_MS=20 MPIWATCH_CALLSITES=${MPIWATCH_CALLSITES:-on}
export MPIWATCH_CALLSITES_MAX=${MPIWATCH_CALLSITES_MAX:-64}
"$MW_SITE_SINK" "ipc://$MW_T/ingest" "$np" "$MW_T/out.jsonl" >"$MW_T/sink.out" 2>"$MW_T/sink.err" &
sink=$!
"$MW_MPIRUN" --oversubscribe -np "$np" -x LD_PRELOAD="$MW_LIB" \
    -x MPIWATCH_COLLECTOR="ipc://$MW_T/ingest" -x MPIWATCH_WINDOW_MS -x MPIWATCH_CALLSITES \
    -x MPIWATCH_CALLSITES_MAX \
    -x MPIWATCH_VERBOSE=1 \
    "$prog" "$n" >"$MW_T/app.out" 2>"$MW_T/app.err" ||
    { cat "$MW_T/app.err" >&2; mw_fail "the job failed"; }
MW_FAILURE_LOG=$MW_T/app.err
wait "$sink" || { cat "$MW_T/sink.err" >&2; mw_fail "mw-site-sink failed"; }
MW_FAILURE_LOG=$MW_T/out.jsonl
"$MW_PYTHON" "$MW_SITE_CHECKER" "$MW_T/out.jsonl" --np "$np" --n "$n" --mode "${mode/f08/fortran}" \
    --source "$src" --program "$prog" || mw_fail "the call sites differ from the expectation (above)"
echo "shim_callsites_$mode: ok"
