#!/bin/bash
# trace_job.sh: a real traced job through a real collector (docs/trace.md, "The job's budget
# (collector)"). tests/programs/trace_known (ANY_SOURCE, ANY_TAG, ignored statuses, Waitany,
# Testsome, Waitall, Sendrecv, persistent requests, dup and split communicators, PROC_NULL) runs
# on 4 ranks with the library preloaded and the collector's steering socket: the collector must
# keep every rank's traces exact (no refusal: its checks accept every record a real rank
# sends), count the traced calls per rank, keep the communicator definitions, send no plan (the
# job is far below the budget and the ranks start with `all`), and its recording must replay to
# the same windows, traces included, and the same trace counters; exported with mpiwatch export
# --format trace, every message of the program is one send matched to one receive
# (check_trace_matched.py). Then tests/programs/steady
# (an MPI_Allreduce every 2 ms per rank, about 2,000 timed calls/s) with --trace-budget 200: the
# collector must send a burst plan (mpiwatch.trace=every:P:3@K, a trace_plan event) and the ranks
# follow it: some rank windows exact, the others summary only, nothing refused.
. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"
mw_setup trace_job
prog=$MW_PROGRAMS/trace_known
[ -x "$prog" ] || mw_fail "program not built: $prog"
MW_JOB_ARGS=(--steer "ipc://$MW_T/steer" --record "$MW_T/r.mpiw" --stats-json "$MW_T/stats.json")
mw_run_job "^trace_known: $MW_NP ranks, 0 unexpected receives" \
    mw_mpirun -x MPIWATCH_STEER="ipc://$MW_T/steer" "$prog" "$MW_T/truth.txt"
if grep -q "trace plan:" "$MW_T/collector.err"; then
    mw_fail "a plan for a job within its budget: $(grep "trace plan" "$MW_T/collector.err")"
fi

# The recording replayed: the same windows (the replay compares them) and trace counters.
"$MW_COLLECTOR" --replay "$MW_T/r.mpiw" --speed 0 --quiet --stats-json "$MW_T/replay.json" \
    2>"$MW_T/replay.err" || mw_fail "the replay failed: $(tail -3 "$MW_T/replay.err")"
grep -Eq "windows compared with the recording, 0 differ" "$MW_T/replay.err" ||
    mw_fail "the replay's windows differ: $(grep -E 'compared|differ' "$MW_T/replay.err")"

# The whole chain: the recording's traces exported, every message of the program matched.
export_bin=${1:?usage: trace_job.sh MPIWATCH-EXPORT}
"$export_bin" --format trace "$MW_T/r.mpiw" -o "$MW_T/calls.jsonl" 2>"$MW_T/export.err" ||
    mw_fail "export --format trace failed: $(tail -3 "$MW_T/export.err")"
"${MW_PYTHON:-/usr/bin/python3}" "$(dirname "${BASH_SOURCE[0]}")/../integration/check_trace_matched.py" \
    "$MW_T/truth.txt" "$MW_T/calls.jsonl" "$MW_NP" ||
    mw_fail "the exported messages are not the program's, each matched once (above)"

"${MW_PYTHON:-/usr/bin/python3}" - "$MW_T" "$MW_NP" <<'EOF' || mw_fail "trace figures (above)"
import json, sys
d, np_ = sys.argv[1], int(sys.argv[2])
stats = json.load(open(f"{d}/stats.json"))
replay = json.load(open(f"{d}/replay.json"))
summary = json.load(open(f"{d}/summary.json"))
errors = []
t = stats.get("trace")
if not t:
    sys.exit(f"no trace counters in the stats: {sorted(stats)}")
refused = {k: v for k, v in t["refused"].items() if v}
if refused:
    errors.append(f"traces refused: {refused}")
if t["exact"] < np_ or t["summary_only"] != 0 or t["left_out"] != 0:
    errors.append(f"exact {t['exact']}, summary only {t['summary_only']}, left out {t['left_out']}")
if t["plans"] != 0:
    errors.append(f"{t['plans']} plans sent, want none")
# dup and split on every rank: at least two definitions each.
if t["comms"] < 2 * np_:
    errors.append(f"{t['comms']} communicator definitions, want at least {2 * np_}")
ranks = summary["per_rank"]
per_rank = sum(r.get("traced_calls", 0) for r in ranks)
if per_rank != t["traced_calls"] or t["traced_calls"] == 0:
    errors.append(f"traced calls per rank sum to {per_rank}, the stats say {t['traced_calls']}")
if any(r.get("traced_windows", 0) == 0 for r in ranks) or len(ranks) != np_:
    errors.append(f"a rank without an exact window: {[r.get('traced_windows') for r in ranks]}")
rt = replay.get("trace", {})
for k, v in t.items():
    if k != "plans" and rt.get(k) != v:  # a replay has no steering socket: no plan
        errors.append(f"replay {k}: {rt.get(k)}, live {v}")
print(f"traces: {t['exact']} exact rank windows, {t['traced_calls']} traced calls, "
      f"{t['bytes']} record bytes, {t['comms']} communicator definitions, {t['plans']} plan")
sys.exit("\n".join(errors) if errors else 0)
EOF

# Over budget: a burst plan, followed by the ranks.
mv "$MW_T/collector.err" "$MW_T/collector1.err"
mkdir -p "$MW_T/steady"
mw_start_collector --exit-after-job --summary-json "$MW_T/summary.json" \
    --steer "ipc://$MW_T/steer2" --trace-budget 200 --stats-json "$MW_T/stats2.json"
mw_mpirun -x MPIWATCH_STEER="ipc://$MW_T/steer2" "$MW_PROGRAMS/steady" "$MW_T/steady" \
    >"$MW_T/app.out" 2>"$MW_T/app.err" &
job=$!
mw_wait_file "$MW_T/steady/ready" "$job" || mw_fail "steady did not start"
sleep 3
touch "$MW_T/steady/stop"
wait "$job" || mw_fail "steady failed: $(tail -5 "$MW_T/app.err")"
mw_wait_collector 30
grep -Eq "trace plan: every:[0-9]+:3@[0-9]+(/[0-9]+)? calls_per_s=" "$MW_T/collector.err" ||
    mw_fail "no burst plan in the collector's log: $(grep -i "trace\|steer" "$MW_T/collector.err")"
"${MW_PYTHON:-/usr/bin/python3}" - "$MW_T/stats2.json" <<'EOF' || mw_fail "burst figures (above)"
import json, sys
t = json.load(open(sys.argv[1]))["trace"]
print(f"burst plan: {t['exact']} exact, {t['summary_only']} summary only, {t['plans']} plans")
refused = {k: v for k, v in t["refused"].items() if v}
ok = t["plans"] >= 1 and t["exact"] > 0 and t["summary_only"] > 0 and t["left_out"] > 0
sys.exit(0 if ok and not refused else f"want plans, exact and summary-only windows, no refusal: {t}")
EOF
echo "trace_job: traces kept exact, no plan within the budget, the replay agrees; a burst plan over it"
