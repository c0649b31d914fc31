#!/bin/bash
# launcher_run.sh: `mpiwatch run` returns the application's exit code, keeps stdout the
# application's alone, cleans up its temporary directory, and puts the library into the MPI
# ranks only. tests/programs/preload_probe reports, from inside each rank, whether the rank
# has libmpiwatch mapped and which of its ancestors (mpirun, shells, the launcher) have it.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mw_setup launcher_run
mw_require MW_LAUNCHER
probe=$MW_PROGRAMS/preload_probe
[ -x "$probe" ] || mw_fail "program not built: $probe"

# expect_probe_output FILE ANCESTORS: stdout must be exactly one probe line per rank, each
# with the library mapped in the rank and ANCESTORS ("none", or a pattern) as its ancestors.
expect_probe_output() {
    local file=$1 ancestors=$2 r line
    local lines
    lines=$(wc -l <"$file")
    [ "$lines" = "$MW_NP" ] || mw_fail "stdout has $lines lines, expected only the $MW_NP probe lines: $(cat "$file")"
    for ((r = 0; r < MW_NP; r++)); do
        line=$(grep "^probe rank $r " "$file") || mw_fail "no probe line from rank $r in: $(cat "$file")"
        # ANCESTORS is a pattern: unquoted on purpose.
        # shellcheck disable=SC2254
        case $line in
            "probe rank $r self=1 ancestors="$ancestors) ;;
            *) mw_fail "rank $r: expected 'self=1 ancestors=$ancestors', got '$line'" ;;
        esac
    done
}

# run_case NAME EXPECTED_RC ANCESTORS LAUNCHER_ARGS...
run_case() {
    local name=$1 want_rc=$2 ancestors=$3 rc
    shift 3
    mw_log "case $name: mpiwatch run $*"
    rm -f "$MW_T/summary.json"
    MW_FAILURE_LOG=$MW_T/$name.err
    "$MW_LAUNCHER" run --summary-json "$MW_T/summary.json" --window-ms 50 "$@" \
        >"$MW_T/$name.out" 2>"$MW_T/$name.err"
    rc=$?
    cat "$MW_T/$name.out"
    if [ "$rc" != "$want_rc" ]; then
        mw_fail "case $name: mpiwatch run returned $rc, expected the application's $want_rc"
    fi
    expect_probe_output "$MW_T/$name.out" "$ancestors"
    # Exactly the 4 ranks said hello: nothing else (mpirun, a shell) was counted as a rank.
    mw_check --pattern ranks --label "mpiwatch run ($name)" || exit 1
    local left
    left=$(find "$MW_T" -maxdepth 1 -name 'mpiwatch.*' | head -n 1)
    [ -z "$left" ] || mw_fail "case $name: the launcher left its temporary directory $left"
}

# The common case: mpirun directly; the library travels in OMPI_MCA_mca_base_env_list.
rm -f "$MPIWATCH_RECORD_DIR"/*.mpiw
run_case direct 3 none -- "$MW_MPIRUN" --oversubscribe -np "$MW_NP" "$probe" 3

# It recorded the run by default, into $MPIWATCH_RECORD_DIR, under the program's name and the
# start time; the summary exported from that recording is the run's summary, byte for byte.
mapfile -t recs < <(find "$MPIWATCH_RECORD_DIR" -maxdepth 1 -name '*.mpiw')
[ "${#recs[@]}" = 1 ] || mw_fail "expected one recording in $MPIWATCH_RECORD_DIR, found ${#recs[@]}: ${recs[*]}"
case ${recs[0]##*/} in
    preload_probe-[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]-[0-9][0-9][0-9][0-9][0-9][0-9].mpiw) ;;
    *) mw_fail "the recording is named ${recs[0]##*/}, expected preload_probe-YYYYmmdd-HHMMSS.mpiw" ;;
esac
MW_FAILURE_LOG=$MW_T/export.err
"$MW_LAUNCHER" export --format summary "${recs[0]}" -o "$MW_T/exported.json" 2>"$MW_T/export.err" ||
    mw_fail "mpiwatch export --format summary failed"
cmp "$MW_T/summary.json" "$MW_T/exported.json" ||
    mw_fail "the summary exported from the default recording differs from the run's"
# Without a display it drew the recorded run into JOB.png beside the recording: a 1280x800
# PNG (signature, then the IHDR chunk's width and height).
png=${recs[0]%.mpiw}.png
[ -s "$png" ] || mw_fail "no end-of-run snapshot $png; launcher said: $(grep -i snapshot "$MW_T/direct.err")"
[ "$(od -An -tx1 -N24 "$png" | tr -d ' \n')" = 89504e470d0a1a0a0000000d494844520000050000000320 ] ||
    mw_fail "$png is not a 1280x800 PNG"
grep -q "snapshot of the run: $png" "$MW_T/direct.err" || mw_fail "the launcher did not name the snapshot"
rm -f "${recs[0]}" "$png"

# A command line that uses -x: Open MPI refuses -x together with mca_base_env_list, so the
# launcher must add -x options instead; the application's own -x must still work.
MW_PROBE_MARK=1 run_case with_x 5 none -- "$MW_MPIRUN" --oversubscribe -x MW_PROBE_MARK \
    -np "$MW_NP" "$probe" 5

# mpirun started by a shell: the shell must not load the library either. (The inner shell
# expands the single-quoted script.) Open MPI only: the library reaches its ranks through the
# variable OMPI_MCA_mca_base_env_list, which Hydra has no equivalent of; with Hydra behind a
# shell, --preload-all is the way (docs/launcher.md), the next case.
if [ "${MW_MPI_KIND:-ompi}" = ompi ]; then
    # shellcheck disable=SC2016
    run_case via_shell 0 none -- sh -c '"$0" --oversubscribe -np "$1" "$2" 0' \
        "$MW_MPIRUN" "$MW_NP" "$probe"
else
    mw_log "case via_shell: not run with $MW_MPI_KIND (Open MPI's mca_base_env_list only)"
fi

# --preload-all: every process gets LD_PRELOAD (so mpirun and the shell have the library
# mapped) but the library stays inert outside the ranks: still exactly 4 ranks, same result.
mpirun_comm=${MW_MPIRUN##*/}
mpirun_comm="${mpirun_comm:0:15}(*)"
# Hydra: its per-node proxy is between the launcher and the ranks, and the tests' launcher
# script (tests/lib/mpiexec-hydra.in) has exec'ed the real launcher (mpiexec.mpich).
[ "${MW_MPI_KIND:-ompi}" = ompi ] || mpirun_comm="hydra_pmi_proxy(*),mpiexec*(*)"
# shellcheck disable=SC2016 # the inner shell expands the single-quoted script
run_case preload_all 4 "$mpirun_comm,sh(*)" --preload-all -- sh -c '"$0" --oversubscribe -np "$1" "$2" 4' \
    "$MW_MPIRUN" "$MW_NP" "$probe"

mw_log "ok"
