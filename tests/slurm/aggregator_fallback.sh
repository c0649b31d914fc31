#!/bin/bash
# aggregator_fallback.sh: a node's aggregator killed (SIGKILL) half way through a job of two
# nodes started by `mpiwatch run -- srun` in a batch job on the test's two-node Slurm cluster
# (cluster.sh): the ranks of that node fall back to the root (MPIWATCH_COLLECTOR_FALLBACK,
# docs/shim.md), the job prints and exits as it would, and the root's accounting is exact per
# function (calls the program made == summary + missed; check_tree.py), with calls reported
# missing; the launcher reports the killed aggregator's status (137). Skipped (77) as
# aggregators.sh.

. "$(dirname "$0")/../integration/lib.sh"
# shellcheck source=cluster.sh
. "$(dirname "$0")/cluster.sh"

mw_setup slurm_aggregator_fallback
mw_require MW_LAUNCHER MW_KEYGEN MW_FT_APP
MW_TREE_CHECK=$(dirname "$0")/check_tree.py
SECONDS=0
sl_up_aggregators
mkdir -p "$MW_T/counts"
cat >"$MW_T/job2.sh" <<EOF2
#!/bin/bash
export FAULT_MARK=$MW_T/half FAULT_COUNTS=$MW_T/counts MPIWATCH_FALLBACK_AFTER=1
exec "$MW_LAUNCHER" run --aggregators per-node --keep --no-record --no-viewer --quiet \
    --window-ms 50 --summary-json "$MW_T/summary2.json" \
    -- "$MW_T/bin/srun" --mpi=pmix "$MW_FT_APP" 400 5000 3
EOF2
chmod +x "$MW_T/job2.sh"
timeout 150 sbatch --wait -N2 -n4 -o "$MW_T/job2.out" -e "$MW_T/job2.err" "$MW_T/job2.sh" >"$MW_T/sbatch2.out" 2>&1 &
sb=$!
for ((i = 0; i < 1200; i++)); do
    [ -e "$MW_T/half" ] && break
    kill -0 "$sb" 2>/dev/null || break
    sleep 0.05
done
MW_FAILURE_LOG=$MW_T/job2.err
[ -e "$MW_T/half" ] || mw_fail "the job did not reach half way"
agg=$(find "$MW_T/keys" -maxdepth 2 -name aggregators -type d | head -n 1)
pidf='' # n2's aggregator: the one whose endpoints name n2's socket
for f in "$agg"/agg-*.endpoints; do
    grep -q "agg-n2" "$f" && pidf=${f%.endpoints}.pid
done
[ -s "${pidf:-/nonexistent}" ] || mw_fail "cannot find the pid of n2's aggregator in $agg"
kill -KILL "$(cat "$pidf")" || mw_fail "cannot kill n2's aggregator"
mw_log "n2's aggregator (pid $(cat "$pidf")) killed half way through the job"
wait "$sb"
rc=$?
# fault_app's rank 0 exits with status 3 by design: the batch job fails with it.
grep -q "checksum" "$MW_T/job2.out" || mw_fail "the program did not finish: $(tail -n 5 "$MW_T/job2.out")"
[ "$(find "$MW_T/counts" -name 'counts.*' | wc -l)" = 4 ] || mw_fail "not every rank wrote its counts"
killed=${pidf##*/agg-}
"${MW_PYTHON:-/usr/bin/python3}" "$MW_TREE_CHECK" "$MW_T/summary2.json" --aggregators 2 \
    --killed "${killed%.pid}" --counts "$MW_T/counts" --np 4 --expect-missed ||
    mw_fail "the root's accounting is not exact after the fallback (above)"
grep -q "mpiwatch: aggregators: 1 of 2 exited with status 0: .*n2 (id [01]) status 137" "$MW_T/job2.err" ||
    mw_fail "the launcher did not report the killed aggregator: $(grep aggregators "$MW_T/job2.err")"
mw_log "n2's aggregator killed: its ranks fell back to the root, accounting exact (sbatch status $rc, ${SECONDS} s)"
mw_log "ok (${SECONDS} s)"
