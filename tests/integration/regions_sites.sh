#!/bin/bash
# regions_sites.sh regions|sites EXPORT: code regions and call sites from a real MPI job through
# a real collector, end to end (docs/regions.md, docs/callsites.md): the job's summary, its
# end-of-run report and the recording's window export must hold exactly what the known program
# did (check_regions_sites.py). tests/shim/regions.sh and callsites.sh check the ranks' samples;
# this checks what the user reads.
#   regions  tests/programs/regions on 2 ranks x 2 threads (mw_region_begin/end)
#   sites    tests/programs/callsites on 2 ranks
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mode=${1:-}
export_bin=${2:-}
case $mode in regions | sites) ;; *) echo "usage: regions_sites.sh regions|sites EXPORT" >&2; exit 2 ;; esac
MW_NP=2
export MPIWATCH_WINDOW_MS=20
mw_setup "regions_sites_$mode"
[ -x "$export_bin" ] || mw_fail "mpiwatch-export not built: $export_bin"
n=20
MW_JOB_ARGS=(--record "$MW_T/run.mpiw" --report "$MW_T/report.txt")
case $mode in
regions)
    export MPIWATCH_REGION_DEPTH=8
    mw_run_job "^regions: 2 ranks, done" mw_mpirun -x MPIWATCH_REGION_DEPTH "$MW_PROGRAMS/regions" "$n"
    ;;
sites)
    mw_run_job "callsites" mw_mpirun "$MW_PROGRAMS/callsites" "$n"
    ;;
esac
"$export_bin" --format jsonl "$MW_T/run.mpiw" -o "$MW_T/windows.jsonl" 2>"$MW_T/export.err" ||
    { cat "$MW_T/export.err" >&2; mw_fail "mpiwatch-export --format jsonl failed"; }
MW_FAILURE_LOG=$MW_T/report.txt
"${MW_PYTHON:-/usr/bin/python3}" "$(dirname "${BASH_SOURCE[0]}")/check_regions_sites.py" "$mode" \
    --n "$n" --np "$MW_NP" --summary "$MW_T/summary.json" --report "$MW_T/report.txt" \
    --windows "$MW_T/windows.jsonl" --app "$MW_T/app.out" \
    --source "$MW_PROGRAMS_SRC/callsites.c" ||
    mw_fail "the job's regions or call sites differ from the program's (above)"
mw_log "ok: $mode end to end"
