#!/bin/bash
# aggregators.sh: aggregators per node from `mpiwatch run` on a real Slurm cluster of two
# nodes on this host (cluster.sh: munged, slurmctld, two slurmds n1 and n2), in a batch job of
# two nodes (docs/launcher.md, "Aggregators"). Skipped (77) when the daemons cannot start
# here, or when this mpiwatch-collector has no --upstream (no aggregators to start).
#
# `sbatch -N2 -n4 --wait` of `mpiwatch run -- srun --mpi=pmix known_c` (per node is the
# default with two nodes): the launcher starts one aggregator per node through srun (one task
# per node, --overlap) before the job, waits for their endpoints and gives the tasks the
# node-local endpoint ipc://.../agg-{node} and the root as MPIWATCH_COLLECTOR_FALLBACK in
# srun's --export; each node's aggregator listens on the socket its node name gives (two
# slurmds on one host: two sockets); both took ranks and fed the root; the root's job totals
# (calls and bytes per function: partials carry no per-rank functions) are exactly those of
# the same run with --aggregators off, whose summary is the known pattern, and its report
# accounts for every call; both aggregators exited with status 0 and the launcher says so.
# A killed aggregator's ranks falling back to the root: aggregator_fallback.sh.

. "$(dirname "$0")/../integration/lib.sh"
# shellcheck source=cluster.sh
. "$(dirname "$0")/cluster.sh"

mw_setup slurm_aggregators
mw_require MW_LAUNCHER MW_KEYGEN
MW_TREE_CHECK=$(dirname "$0")/check_tree.py
SECONDS=0
sl_up_aggregators
N=20
KNOWN=$MW_PROGRAMS/known_c

# ---- 1. sbatch -N2 -n4, aggregators per node -------------------------------------------------
# The same program without aggregators first, in the same allocation: the reference.
cat >"$MW_T/job1.sh" <<EOF2
#!/bin/bash
"$MW_LAUNCHER" run --aggregators off --no-record --no-viewer --quiet \
    --summary-json "$MW_T/summary0.json" -- srun --mpi=pmix "$KNOWN" "$N" 2>"$MW_T/job0.err" || exit
exec "$MW_LAUNCHER" run --keep --no-record --no-viewer --quiet \
    --summary-json "$MW_T/summary1.json" --report "$MW_T/report1.txt" \
    -- "$MW_T/bin/srun" --mpi=pmix "$KNOWN" "$N"
EOF2
chmod +x "$MW_T/job1.sh"
timeout 120 sbatch --wait -N2 -n4 -o "$MW_T/job1.out" -e "$MW_T/job1.err" "$MW_T/job1.sh" >"$MW_T/sbatch1.out" 2>&1
rc=$?
MW_FAILURE_LOG=$MW_T/job1.err
[ "$rc" = 0 ] || mw_fail "the batch job failed (sbatch --wait status $rc): $(cat "$MW_T/sbatch1.out")"
[ "$(grep -c "^known_c: 4 ranks, N=$N, pattern ok" "$MW_T/job1.out")" = 2 ] || mw_fail "the program did not succeed: $(cat "$MW_T/job1.out")"
if grep -q "aggregators (one per node" "$MW_T/job0.err"; then
    mw_fail "--aggregators off started aggregators"
fi
cp "$MW_T/summary0.json" "$MW_T/summary.json"
MW_NP=4 mw_check --pattern known --n "$N" --label "sbatch -N2 -n4 without aggregators"
grep -q "mpiwatch: 2 aggregators (one per node, through srun): the ranks report to ipc://[^ ]*/nodes/agg-{node} on their node" "$MW_T/job1.err" ||
    mw_fail "the launcher did not start 2 aggregators"
grep -q -- "--overlap --mpi=none --ntasks-per-node=1 -N 2 -n 2 .* aggregator-node " "$MW_T/srun.args" ||
    mw_fail "the aggregators were not started through srun, one task per node: $(cat "$MW_T/srun.args")"
grep -q -- "--export=ALL,LD_PRELOAD=[^,]*,MPIWATCH_COLLECTOR=ipc://[^,]*/nodes/agg-{node},MPIWATCH_JOB=[^,]*,MPIWATCH_STEER=ipc://[^,]*/nodes/steer-{node},MPIWATCH_COLLECTOR_FALLBACK=tcp://127.0.0.1:[0-9]*,MPIWATCH_STEER_FALLBACK=tcp://127.0.0.1:[0-9]*" "$MW_T/srun.args" ||
    mw_fail "the job's srun did not get the node-local endpoints and the root as fallback: $(cat "$MW_T/srun.args")"
keys=$(sed -n 's|^mpiwatch: kept \(.*\)|\1|p' "$MW_T/job1.err" | head -n 1)
agg=$(find "$MW_T/keys" -maxdepth 2 -name aggregators -type d | head -n 1)
[ -n "$agg" ] || mw_fail "no aggregators directory in the run's key directory (kept: $keys)"
for n in n1 n2; do
    grep -q "^[01] $n 0$" "$agg"/agg-*.status ||
        mw_fail "the aggregator of node $n did not end with status 0: $(cat "$agg"/agg-*.status 2>/dev/null)"
done
for id in 0 1; do
    grep -q "info: job .* started: 4 ranks" "$agg/agg-$id.log" ||
        mw_fail "aggregator $id saw no ranks: $(tail -n 5 "$agg/agg-$id.log")"
done
grep -q "mpiwatch: aggregators: 2 of 2 exited with status 0" "$MW_T/job1.err" ||
    mw_fail "the launcher did not report both aggregators' status"
# Partials carry merged windows, not each rank's functions: the job's totals are compared.
"${MW_PYTHON:-/usr/bin/python3}" "$MW_TREE_CHECK" "$MW_T/summary1.json" --aggregators 2 \
    --same-as "$MW_T/summary0.json" || mw_fail "the root's summary through the aggregators differs (above)"
grep -q '^ranks        4 (4 said hello' "$MW_T/report1.txt" ||
    mw_fail "not every rank said hello at the root: $(grep '^ranks' "$MW_T/report1.txt")"
grep -q '^  calls at the ranks: 556 = 556 in this report + 0 missed' "$MW_T/report1.txt" ||
    mw_fail "the root's report does not account for every call: $(grep 'calls at the ranks' "$MW_T/report1.txt")"
mw_log "1. sbatch -N2 -n4 through 2 aggregators: the job's calls and bytes those of the run without, both exited 0 (${SECONDS} s)"

# ---- 2. the same with Open MPI's mpirun inside the allocation -------------------------------
# mpirun starts its daemons through srun, so the ranks of each slurmd see its SLURMD_NODENAME;
# the aggregators come from `mpirun --map-by ppr:1:node -np 2`.
cat >"$MW_T/job2.sh" <<EOF2
#!/bin/bash
exec "$MW_LAUNCHER" run --keep --no-record --no-viewer --quiet \
    --summary-json "$MW_T/summary2.json" --report "$MW_T/report2.txt" \
    -- "$MW_MPIRUN" -np 4 "$KNOWN" "$N"
EOF2
chmod +x "$MW_T/job2.sh"
timeout 120 sbatch --wait -N2 -n4 -o "$MW_T/job2.out" -e "$MW_T/job2.err" "$MW_T/job2.sh" >"$MW_T/sbatch2.out" 2>&1
rc=$?
MW_FAILURE_LOG=$MW_T/job2.err
[ "$rc" = 0 ] || mw_fail "the batch job with mpirun failed (sbatch --wait status $rc): $(cat "$MW_T/sbatch2.out")"
grep -q "^known_c: 4 ranks, N=$N, pattern ok" "$MW_T/job2.out" || mw_fail "the program did not succeed under mpirun: $(cat "$MW_T/job2.out")"
grep -q "mpiwatch: 2 aggregators (one per node, through ${MW_MPIRUN##*/})" "$MW_T/job2.err" ||
    mw_fail "the launcher did not start 2 aggregators through mpirun"
grep -q "mpiwatch: aggregators: 2 of 2 exited with status 0" "$MW_T/job2.err" ||
    mw_fail "the launcher did not report both aggregators' status"
"${MW_PYTHON:-/usr/bin/python3}" "$MW_TREE_CHECK" "$MW_T/summary2.json" --aggregators 2 \
    --same-as "$MW_T/summary0.json" || mw_fail "the root's summary through mpirun's aggregators differs (above)"
mw_log "2. mpirun -np 4 in the allocation through 2 aggregators: the same totals, both exited 0 (${SECONDS} s)"
mw_log "ok (${SECONDS} s)"
