#!/bin/bash
# loss.sh MODE: exact loss accounting on a real job (docs/collector.md, "Loss accounting").
#
#   restart  a collector is killed with SIGKILL in the middle of the job and a new one is
#            started on the same endpoint (with --summary-json): the samples the dead one had
#            received, and those in flight to it, are reported as missed by the new one.
#   late     the collector is started seconds after the job, longer than the ranks' send
#            backlog holds (64 samples): it reports the calls of the first seconds as missed,
#            also on its Prometheus page while the job runs.
#
# The job is tests/programs/steady on 4 ranks, which prints its own number of iterations N:
# every rank made exactly N MPI_Allreduce calls. The check is the identity, exactly:
#     N x 4 == MPI_Allreduce calls in the summary + MPI_Allreduce calls reported missed,
# and for all functions, calls, time and bytes: the ranks' final totals (their byes) == the
# summary's functions + missed; each rank's totals come from its bye, and something was missed.
# Four ranks with every MPI (the expectations name ranks 0-3; lib.sh gives MPICH two).
MW_NP=${MW_NP:-4}
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mode=$1
export MPIWATCH_WINDOW_MS=20 # 64 samples of backlog are 1.3 s: the late collector misses more
mw_setup "loss_$mode"
prog=$MW_PROGRAMS/steady
[ -x "$prog" ] || mw_fail "program not built: $prog"

# wait_log PATTERN COUNT: true once collector.err has COUNT lines matching PATTERN (up to 30 s).
wait_log() {
    local i
    for ((i = 0; i < 600; i++)); do
        [ "$(grep -c "$1" "$MW_T/collector.err" 2>/dev/null)" -ge "$2" ] && return 0
        sleep 0.05
    done
    return 1
}

port=$("$MW_PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
final=(--exit-after-job --summary-json "$MW_T/summary.json" --stats-json "$MW_T/stats.json")
case $mode in
    restart)
        mw_start_collector
        mw_mpirun "$prog" "$MW_T" >"$MW_T/app.out" 2>"$MW_T/app.err" &
        job=$!
        mw_wait_file "$MW_T/ready" "$job" || mw_fail "the program never got ready"
        wait_log "job '.*' started" 1 || mw_fail "the first collector never saw the job"
        sleep 1.5 # a stretch of windows that only the first collector receives
        mw_kill_collector
        sleep 0.5 # the ranks go on without a collector (their backlog holds 1.3 s)
        mw_start_collector "${final[@]}"
        wait_log "job '.*' started" 2 || mw_fail "the restarted collector never saw the job"
        ;;
    late)
        mw_mpirun "$prog" "$MW_T" >"$MW_T/app.out" 2>"$MW_T/app.err" &
        job=$!
        mw_wait_file "$MW_T/ready" "$job" || mw_fail "the program never got ready"
        sleep 3 # more than the backlog holds: the first windows are dropped on the ranks
        mw_start_collector "${final[@]}" --metrics-port "$port"
        wait_log "job '.*' started" 1 || mw_fail "the collector never saw the job"
        # While the job runs, the Prometheus page already shows what was missed.
        "$MW_PYTHON" - "$port" <<'PY' || mw_fail "the Prometheus page never showed missed calls"
import re, sys, time, urllib.request
deadline = time.time() + 20
while time.time() < deadline:
    try:
        page = urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=2).read().decode()
        page = re.sub(r'\{job="(?:[^"\\]|\\.)*"\}|job="(?:[^"\\]|\\.)*",', "", page)  # the job label
        vals = dict(l.split(" ", 1) for l in page.splitlines() if l and not l.startswith("#"))
        if float(vals.get("mpiwatch_missed_calls_total", 0)) > 0 and \
           float(vals.get("mpiwatch_missed_samples_total", 0)) > 0 and \
           "mpiwatch_missed_call_seconds_total" in vals and "mpiwatch_missed_bytes_total" in vals:
            sys.exit(0)
    except OSError:
        pass
    time.sleep(0.2)
sys.exit(1)
PY
        ;;
    *) mw_fail "unknown mode $mode" ;;
esac
sleep 0.5 # a stretch of windows that the (new) collector receives
touch "$MW_T/stop"
wait "$job" || { cat "$MW_T/app.err" >&2; mw_fail "the job failed"; }
cat "$MW_T/app.out"
grep -q "^steady: 4 ranks, [0-9]* iterations$" "$MW_T/app.out" || mw_fail "the program did not finish"
mw_wait_collector 30
n=$(sed -n 's/^steady: 4 ranks, \([0-9]*\) iterations$/\1/p' "$MW_T/app.out")
"$MW_PYTHON" - "$MW_T" "$n" <<'PY' || mw_fail "loss accounting (above); summary: $(head -c 3000 "$MW_T/summary.json")"
import json, sys
d, n = sys.argv[1], int(sys.argv[2])
s = json.load(open(f"{d}/summary.json"))
st = json.load(open(f"{d}/stats.json"))
m = s["missed"]
errors = []
def check(what, got, want):
    if got != want:
        errors.append(f"{what}: got {got!r}, want {want!r}")
ar = "MPI_Allreduce"
merged = s["functions"].get(ar, {}).get("count", 0)
missed = m["functions"].get(ar, {}).get("count", 0)
# The application's own count, independent of mpiwatch.
check("Allreduce calls: summary + missed == 4 x N", merged + missed, 4 * n)
for k, fk in (("calls", "count"), ("time_ns", "time_ns"), ("bytes", "bytes")):
    in_summary = sum(f[fk] for f in s["functions"].values())
    check(f"{k}: at the ranks == summary + missed", m["at_ranks"][k], in_summary + m[k])
    check(f"{k}: missed == sum over functions", m[k], sum(f[fk] for f in m["functions"].values()))
    check(f"{k}: missed == sum over ranks", m[k], sum(r["missed"][k] for r in s["per_rank"]))
check("samples: missed == sum over ranks", m["samples"], sum(r["missed"]["samples"] for r in s["per_rank"]))
if not (m["calls"] > 0 and missed > 0 and m["samples"] > 0):
    errors.append(f"nothing reported missed: {m['calls']} calls, {missed} {ar}, {m['samples']} samples")
check("totals from the byes", sorted({r["missed"]["totals"] for r in s["per_rank"]}), ["bye"])
check("ranks without bye", m["ranks_without_bye"], [])
check("ranks without totals", m["ranks_without_totals"], [])
check("ranks with something missed", m["ranks"], [0, 1, 2, 3])
check("stats missed", st["missed"], {k: m[k] for k in ("calls", "time_ns", "bytes", "samples")})
for e in errors:
    print("  " + e, file=sys.stderr)
print(f"loss: N={n}, {merged} {ar} in the summary + {missed} missed; {m['calls']} calls and "
      f"{m['samples']} samples missed in all")
sys.exit(1 if errors else 0)
PY
grep -q "calls at the ranks: [0-9]* = [0-9]* in this report + [1-9][0-9]* missed" "$MW_T/collector.err" ||
    mw_fail "the text report does not state the missed calls"
