#!/bin/bash
# hydra.sh: `mpiwatch run --aggregators per-node` under MPICH's Hydra launcher (mpiexec.mpich)
# on this one node (docs/launcher.md, "Aggregators"). Needs the Hydra launcher of an MPICH
# build (MW_MPI_KIND=hydra: the MPICH leg of tools/test.sh); skipped (77) in an Open MPI build,
# whose ranks could not run under MPICH's launcher.
#
#   1. the reference: `mpiwatch run --aggregators off -- mpiexec.mpich -n 4 known_c N`, whose
#      summary is the known pattern (the program's own counts, check_summary.py);
#   2. `mpiwatch run --aggregators per-node` of the same: the root on TCP with CURVE, one
#      aggregator started through `mpiexec.mpich -ppn 1 -n 1` (the launcher's Hydra line, never
#      run before), the ranks on its node-local socket with the root as their fallback; the
#      root's calls and bytes per function exactly those of the reference (check_tree.py), its
#      report accounts for every call, the aggregator took the 4 ranks and exited with 0.
MW_NP=4
. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"
mw_setup aggregator_hydra
mw_require MW_LAUNCHER
[ "${MW_MPI_KIND:-ompi}" = hydra ] ||
    mw_skip "the build's MPI is not launched by Hydra (MW_MPI_KIND=${MW_MPI_KIND:-ompi})"
"$MW_COLLECTOR" --help 2>&1 | grep -q -- '--upstream ' ||
    mw_skip "this mpiwatch-collector has no --upstream: no aggregators to start"
KNOWN=$MW_PROGRAMS/known_c
[ -x "$KNOWN" ] || mw_fail "program not built: $KNOWN"
N=200
SECONDS=0
mkdir -m 700 "$MW_T/keys"
export MPIWATCH_KEY_DIR=$MW_T/keys # the run's keys, and the aggregators' logs and status

# ---- 1. the reference, without aggregators ---------------------------------------------------
MW_FAILURE_LOG=$MW_T/run0.err
"$MW_LAUNCHER" run --aggregators off --no-record --no-viewer --quiet \
    --summary-json "$MW_T/summary0.json" -- "$MW_MPIRUN" -n "$MW_NP" "$KNOWN" "$N" \
    >"$MW_T/run0.out" 2>"$MW_T/run0.err" || mw_fail "mpiwatch run --aggregators off failed"
grep -q "^known_c: $MW_NP ranks, N=$N, pattern ok" "$MW_T/run0.out" ||
    mw_fail "the program did not succeed: $(cat "$MW_T/run0.out")"
! grep -q "aggregators (one per node" "$MW_T/run0.err" || mw_fail "--aggregators off started aggregators"
cp "$MW_T/summary0.json" "$MW_T/summary.json"
mw_check --pattern known --n "$N" --label "mpiexec.mpich without aggregators"
mw_log "1. the reference run: the known pattern (${SECONDS} s)"

# ---- 2. one aggregator per node, through Hydra ----------------------------------------------
MW_FAILURE_LOG=$MW_T/run1.err
"$MW_LAUNCHER" run --aggregators per-node --keep --no-record --no-viewer --quiet \
    --summary-json "$MW_T/summary1.json" --report "$MW_T/report1.txt" \
    -- "$MW_MPIRUN" -n "$MW_NP" "$KNOWN" "$N" \
    >"$MW_T/run1.out" 2>"$MW_T/run1.err" || mw_fail "mpiwatch run --aggregators per-node failed"
grep -q "^known_c: $MW_NP ranks, N=$N, pattern ok" "$MW_T/run1.out" ||
    mw_fail "the program did not succeed through the aggregator: $(cat "$MW_T/run1.out")"
grep -q "mpiwatch: 1 aggregators (one per node, through ${MW_MPIRUN##*/}): the ranks report to ipc://[^ ]*/nodes/agg-{node} on their node" "$MW_T/run1.err" ||
    mw_fail "the launcher did not start the aggregator through ${MW_MPIRUN##*/}"
grep -q "mpiwatch: aggregators: 1 of 1 exited with status 0" "$MW_T/run1.err" ||
    mw_fail "the aggregator did not exit with status 0"
agg=$(find "$MW_T/keys" -maxdepth 2 -name aggregators -type d | head -n 1)
[ -n "$agg" ] || mw_fail "no aggregators directory in the run's key directory"
grep -q "^0 [^ ]* 0$" "$agg/agg-0.status" ||
    mw_fail "the aggregator did not end with status 0: $(cat "$agg"/agg-*.status 2>/dev/null)"
grep -q "info: job .* started: $MW_NP ranks" "$agg/agg-0.log" ||
    mw_fail "the aggregator saw no ranks: $(tail -n 5 "$agg/agg-0.log")"
"${MW_PYTHON:-/usr/bin/python3}" "$(dirname "${BASH_SOURCE[0]}")/../slurm/check_tree.py" \
    "$MW_T/summary1.json" --aggregators 1 --same-as "$MW_T/summary0.json" ||
    mw_fail "the root's summary through the aggregator differs from the reference (above)"
calls=$(grep -o '^  calls at the ranks: [0-9]* = [0-9]* in this report + 0 missed' "$MW_T/report1.txt") ||
    mw_fail "the root's report does not account for every call: $(grep 'calls at the ranks' "$MW_T/report1.txt")"
read -r _ _ _ _ at _ in _ <<<"$calls"
[ "$at" = "$in" ] || mw_fail "calls at the ranks ($at) differ from those in the report ($in)"
keep=$(sed -n 's|^mpiwatch: kept \(.*\)|\1|p' "$MW_T/run1.err" | head -n 1)
case $keep in /tmp/mpiwatch.* | "${TMPDIR:-/tmp}"/mpiwatch.*) rm -rf -- "$keep" ;; esac
mw_log "2. mpiexec.mpich through 1 aggregator: the job's calls and bytes those of the reference, $in calls accounted, the aggregator exited 0 (${SECONDS} s)"
echo "aggregator_hydra: ok"
