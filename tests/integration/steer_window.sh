#!/bin/bash
# steer_window.sh: the built-in key mpiwatch.window changes the window length of a running job
# (docs/steering.md, "Window length").
#   A 4-rank tests/programs/steady job (an MPI_Allreduce about every 2 ms on every rank) runs
#   with 100 ms windows; 2 s in, `mpiwatch steer CTL mpiwatch.window=200`. The collector picks
#   the switch window K (logged as "steer #N: mpiwatch.window=200@K") and records a `window`
#   job event. From the recording (jsonl export): windows before K are 100 ms long, from K on
#   200 ms, every window starts where the previous one ended (no gap, no overlap: indices and
#   times both contiguous), every window from K on until the last full one has all 4 ranks
#   (the switch makes no partial window), and the MPI_Allreduce counts over all windows add
#   up to exactly 4 x the iterations the program made; the collector rejected no sample for
#   its grid; a replay of the recording gives the same windows byte for byte. Refusals, each with exit status 1 and counted in `window_rejected`: 0, 100000,
#   abc, 1000 (beyond 8 x the first length), with --ranks, and after the change to 200,
#   200 again (already the length).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mw_setup steer_window
mw_require MW_LAUNCHER
CTL="ipc://$MW_T/control"
steer() { "$MW_LAUNCHER" steer "$@"; }

wait_file() {
    local i
    for ((i = 0; i < 400; i++)); do
        [ -e "$1" ] && return 0
        sleep 0.05
    done
    mw_fail "$2"
}

prog=$MW_PROGRAMS/steady
[ -x "$prog" ] || mw_fail "program not built: $prog"
mw_start_collector --exit-after-job --summary-json "$MW_T/summary.json" \
    --stats-json "$MW_T/stats.json" --record "$MW_T/job.mpiw" \
    --steer "ipc://$MW_T/steer" --control "$CTL"
MPIWATCH_WINDOW_MS=100 mw_mpirun -x MPIWATCH_STEER="ipc://$MW_T/steer" "$prog" "$MW_T" \
    >"$MW_T/job.out" 2>"$MW_T/job.err" &
job=$!
wait_file "$MW_T/ready" "the program never got ready"
sleep 2 # subscriptions in place, and a stretch of 100 ms windows

# Refusals first (the grid is unchanged by them), then the change, then one more refusal.
bad=0
for v in 0 100000 abc 1000 "200 --ranks 1"; do
    # shellcheck disable=SC2086 # "200 --ranks 1" is meant to split into arguments
    if steer "$CTL" mpiwatch.window=$v >"$MW_T/bad.out" 2>&1; then
        kill "$job"; mw_fail "mpiwatch.window=$v was accepted: $(cat "$MW_T/bad.out")"
    else
        rc=$?
        [ "$rc" = 1 ] || { kill "$job"; mw_fail "mpiwatch.window=$v: exit status $rc, not 1"; }
    fi
    bad=$((bad + 1))
done
steer "$CTL" mpiwatch.window=200 >"$MW_T/steer.out" 2>&1 ||
    { kill "$job"; mw_fail "the change was refused: $(cat "$MW_T/steer.out")"; }
if steer "$CTL" mpiwatch.window=200 >"$MW_T/bad.out" 2>&1; then
    kill "$job"; mw_fail "a second change to the same length was accepted"
fi
bad=$((bad + 1))
sleep 3.5 # the switch (about 1 s ahead) and a stretch of 200 ms windows
touch "$MW_T/stop"
wait "$job" || { cat "$MW_T/job.err" >&2; mw_fail "the job failed"; }
cat "$MW_T/job.out"
iters=$(sed -n 's/^steady: 4 ranks, \([0-9]*\) iterations$/\1/p' "$MW_T/job.out")
[ -n "$iters" ] || mw_fail "the program did not finish"
mw_wait_collector 30

K=$(sed -n 's/.*steer #[0-9]*: mpiwatch\.window=200@\([0-9]*\)$/\1/p' "$MW_T/collector.err")
[ -n "$K" ] || mw_fail "the collector did not log the change: $(grep steer "$MW_T/collector.err")"
# The log numbers windows from the job's first, the grid index in parentheses.
grep -Eq "window length 200 ms from window [0-9]+ \(t\+[0-9]+\.[0-9]{3} s; grid $K\)" \
    "$MW_T/collector.err" || mw_fail "the collector did not log the new grid"
N=$(sed -En "s/.*window length 200 ms from window ([0-9]+) \(t.*grid $K\)$/\1/p" "$MW_T/collector.err")
if [ -z "$N" ] || [ "$N" -ge 1000 ] || [ "$N" -ge "$K" ]; then
    mw_fail "window $K is not numbered from the job's first window: ${N:-none}"
fi
"${MW_LAUNCHER%/mpiwatch}/mpiwatch-export" --format jsonl "$MW_T/job.mpiw" -o "$MW_T/job.jsonl" ||
    mw_fail "export failed"
"$MW_PYTHON" - "$MW_T/job.jsonl" "$MW_T/job.mpiw" "$MW_T/stats.json" "$K" "$iters" "$bad" <<'PY' ||
import json, sys
path, rec, stats_path, K, iters, bad = sys.argv[1], sys.argv[2], sys.argv[3], *map(int, sys.argv[4:])
ws = [json.loads(line) for line in open(path)]
MS = 1_000_000
idx = [w["index"] for w in ws]
assert idx == list(range(idx[0], idx[0] + len(ws))), "window indices not contiguous"
before = [w for w in ws if w["index"] < K]
after = [w for w in ws if w["index"] >= K]
print(f"K={K}: {len(before)} windows of 100 ms before, {len(after)} from K on; {iters} iterations")
assert len(before) >= 15 and len(after) >= 10, "too few windows on one side of the switch"
assert all(w["window_ns"] == 100 * MS for w in before), "a window before K is not 100 ms"
assert all(w["window_ns"] == 200 * MS for w in after), "a window from K on is not 200 ms"
for a, b in zip(ws, ws[1:]):
    assert a["start_ns"] + a["window_ns"] == b["start_ns"], f"gap or overlap at window {b['index']}"
assert after[0]["start_ns"] == K * 100 * MS, "window K does not start where 100 ms window K would"
# Every window from K on has all 4 ranks, but the last one (the ranks' finalize flush).
partial = [w["index"] for w in after[:-1] if w["ranks_reporting"] != 4 or w["ranks_missing"]]
assert not partial, f"windows after the switch without every rank: {partial}"
def count(w, fn):
    f = w["functions"].get(fn)
    return f["count"] if f else 0
total = sum(count(w, "MPI_Allreduce") for w in ws)
assert total == 4 * iters, f"MPI_Allreduce calls {total} != 4 x {iters}"
data = open(rec, "rb").read()
assert b"window=200ms from window %d start %d" % (K, K * 100 * MS) in data, "no window event recorded"
stats = json.load(open(stats_path))
assert stats["rejected"]["grid_mismatch"] == 0, stats["rejected"]
assert stats["window_rejected"] == bad, f"window_rejected {stats['window_rejected']} != {bad}"
print("steer_window: grid, contiguity, full windows, exact counts, event, refusals: ok")
PY
    mw_fail "the recording does not show a clean switch (above)"
# Replay re-applies the recorded window event: the same windows, byte for byte, and the same
# summary.
cp "$MW_T/summary.json" "$MW_T/live.json"
"$MW_COLLECTOR" --quiet --replay "$MW_T/job.mpiw" --speed 0 --summary-json "$MW_T/replay.json" \
    </dev/null >"$MW_T/replay.out" 2>"$MW_T/replay.err" || mw_fail "replay failed: $(cat "$MW_T/replay.err")"
read -r compared differ <<<"$(sed -n 's/.* \([0-9]*\) windows compared with the recording, \([0-9]*\) differ.*/\1 \2/p' "$MW_T/replay.err" | tail -n 1)"
{ [ -n "$compared" ] && [ "$compared" -gt 20 ] && [ "$differ" = 0 ]; } ||
    mw_fail "replay compared ${compared:-?} windows, ${differ:-?} differ: $(tail -3 "$MW_T/replay.err")"
cmp "$MW_T/live.json" "$MW_T/replay.json" || mw_fail "the replayed summary differs from the live one"
echo "steer_window: ok"
