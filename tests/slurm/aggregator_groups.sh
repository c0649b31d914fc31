#!/bin/bash
# aggregator_groups.sh: `mpiwatch run --aggregators 2` (groups of 2 nodes per aggregator) on the
# real two-node Slurm cluster of this host (cluster.sh), docs/launcher.md "Aggregators". Skipped
# (77) when the daemons cannot start here, or when this mpiwatch-collector has no --upstream.
#
# `sbatch -N2 -n4 --wait` of `mpiwatch run --aggregators 2 -- srun --mpi=pmix known_c`: one
# aggregator for the two nodes, on TCP on the first node, started through srun (one task per
# node: the second node's task only notes its group); the job's srun gets --task-prolog, which
# exports each task's group aggregator, so the ranks of both nodes report to the one aggregator
# (it took the 4 ranks); the root's calls and bytes per function are exactly those of the same
# run with --aggregators off (whose summary is the known pattern), its report accounts for every
# call, and the aggregator exited with status 0.

. "$(dirname "$0")/../integration/lib.sh"
# shellcheck source=cluster.sh
. "$(dirname "$0")/cluster.sh"

mw_setup slurm_aggregator_groups
mw_require MW_LAUNCHER MW_KEYGEN
SECONDS=0
sl_up_aggregators
N=20
KNOWN=$MW_PROGRAMS/known_c

cat >"$MW_T/job.sh" <<EOF2
#!/bin/bash
"$MW_LAUNCHER" run --aggregators off --no-record --no-viewer --quiet \
    --summary-json "$MW_T/summary0.json" -- srun --mpi=pmix "$KNOWN" "$N" 2>"$MW_T/job0.err" || exit
exec "$MW_LAUNCHER" run --aggregators 2 --keep --no-record --no-viewer --quiet \
    --summary-json "$MW_T/summary1.json" --report "$MW_T/report1.txt" \
    -- "$MW_T/bin/srun" --mpi=pmix "$KNOWN" "$N"
EOF2
chmod +x "$MW_T/job.sh"
timeout 120 sbatch --wait -N2 -n4 -o "$MW_T/job.out" -e "$MW_T/job.err" "$MW_T/job.sh" >"$MW_T/sbatch.out" 2>&1
rc=$?
MW_FAILURE_LOG=$MW_T/job.err
[ "$rc" = 0 ] || mw_fail "the batch job failed (sbatch --wait status $rc): $(cat "$MW_T/sbatch.out")"
[ "$(grep -c "^known_c: 4 ranks, N=$N, pattern ok" "$MW_T/job.out")" = 2 ] || mw_fail "the program did not succeed: $(cat "$MW_T/job.out")"
cp "$MW_T/summary0.json" "$MW_T/summary.json"
MW_NP=4 mw_check --pattern known --n "$N" --label "sbatch -N2 -n4 without aggregators"
grep -q "mpiwatch: 1 aggregators (one per 2 nodes, through srun)" "$MW_T/job.err" ||
    mw_fail "the launcher did not start 1 aggregator for the 2 nodes"
grep -q -- "--task-prolog=[^ ]*/aggregators/prolog.sh " "$MW_T/srun.args" ||
    mw_fail "the job's srun did not get the task prolog: $(cat "$MW_T/srun.args")"
agg=$(find "$MW_T/keys" -maxdepth 2 -name aggregators -type d | head -n 1)
[ -n "$agg" ] || mw_fail "no aggregators directory in the run's key directory"
[ ! -e "$agg/agg-1.log" ] || mw_fail "a second aggregator ran: $(ls "$agg")"
grep -q "^0 [^ ]* 0$" "$agg/agg-0.status" ||
    mw_fail "the aggregator did not end with status 0: $(cat "$agg"/agg-*.status 2>/dev/null); its launch: $(tail -n 3 "$agg/launch.log")"
grep -q "info: job .* started: 4 ranks" "$agg/agg-0.log" ||
    mw_fail "the aggregator did not take the ranks: $(tail -n 5 "$agg/agg-0.log")"
grep -q "mpiwatch: aggregators: 1 of 1 exited with status 0" "$MW_T/job.err" ||
    mw_fail "the launcher did not report the aggregator's status"
"${MW_PYTHON:-/usr/bin/python3}" "$(dirname "$0")/check_tree.py" "$MW_T/summary1.json" \
    --aggregators 1 --same-as "$MW_T/summary0.json" ||
    mw_fail "the root's summary through the group's aggregator differs (above)"
grep -q '^  calls at the ranks: 556 = 556 in this report + 0 missed' "$MW_T/report1.txt" ||
    mw_fail "the root's report does not account for every call: $(grep 'calls at the ranks' "$MW_T/report1.txt")"
mw_log "ok: sbatch -N2 -n4 through 1 aggregator for 2 nodes (${SECONDS} s)"
