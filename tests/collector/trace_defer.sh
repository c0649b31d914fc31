#!/bin/bash
# trace_defer.sh: deferred trace bursts through a real collector (docs/trace.md, "The job's
# budget (collector)"). tests/programs/steady (an MPI_Allreduce every 2 ms per rank, about 2,000
# timed calls/s) on 4 ranks with --trace-budget 200: a burst window of the whole job is more than
# twice the budget's share of a window, so the collector must send a deferred burst plan
# (mpiwatch.trace=every:P:3@K/G, G >= 2). The ranks trace the burst windows together, their
# samples say "deferred" (reason 5) and each rank sends its burst from its flight recorder
# G windows later at most (rank mod G), as Envelope.trace. Checked: the recording's windows say
# which ranks are deferred, the traces after their sample were all taken (no refusal), and
# exported with mpiwatch export --format trace every burst window ends up exact on every rank
# (its records marked reach_back), no rank left "deferred".
. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"
mw_setup trace_defer
export_bin=${1:?usage: trace_defer.sh MPIWATCH-EXPORT}
mkdir -p "$MW_T/steady"
mw_start_collector --exit-after-job --summary-json "$MW_T/summary.json" \
    --steer "ipc://$MW_T/steer" --trace-budget 200 --stats-json "$MW_T/stats.json" \
    --record "$MW_T/r.mpiw"
mw_mpirun -x MPIWATCH_STEER="ipc://$MW_T/steer" -x MPIWATCH_VERBOSE=1 \
    "$MW_PROGRAMS/steady" "$MW_T/steady" >"$MW_T/app.out" 2>"$MW_T/app.err" &
job=$!
mw_wait_file "$MW_T/steady/ready" "$job" || mw_fail "steady did not start"
sleep 4
touch "$MW_T/steady/stop"
wait "$job" || mw_fail "steady failed: $(tail -5 "$MW_T/app.err")"
mw_wait_collector 30
# The plan in force at the end (the planner may refine it once while the rate settles).
plan=$(grep -Eo "trace plan: every:[0-9]+:3@[0-9]+/[0-9]+ " "$MW_T/collector.err" | tail -1)
[ -n "$plan" ] ||
    mw_fail "no deferred burst plan in the collector's log: $(grep -i "trace" "$MW_T/collector.err")"
echo "$plan"
grep -h "deferred bursts" "$MW_T/app.err" || true
"$export_bin" --format trace "$MW_T/r.mpiw" -o "$MW_T/calls.jsonl" 2>"$MW_T/export.err" ||
    mw_fail "export --format trace failed: $(tail -3 "$MW_T/export.err")"

"${MW_PYTHON:-/usr/bin/python3}" - "$MW_T" "$plan" "$MW_NP" <<'EOF' || mw_fail "deferred bursts (above)"
import json, re, sys
d, plan, np_ = sys.argv[1], sys.argv[2], int(sys.argv[3])
p, b, k, g = map(int, re.search(r"every:(\d+):(\d+)@(\d+)/(\d+)", plan).groups())
errors = []
if g < 2 or g > p:
    errors.append(f"G = {g}, want 2..P")
t = json.load(open(f"{d}/stats.json"))["trace"]
refused = {r: v for r, v in t["refused"].items() if v}
if refused:
    errors.append(f"traces refused: {refused}")
if t["deferred"] == 0 or t["reach_back"] == 0:
    errors.append(f"no deferred calls ({t['deferred']}) or no trace after its sample ({t['reach_back']})")
windows, recs = {}, {}
for line in open(f"{d}/calls.jsonl"):
    o = json.loads(line)
    if o.get("type") == "window":
        windows[o["window"]] = o
    elif o.get("type") == "record":
        key = (o["window"], o["rank"])
        recs.setdefault(key, [0, 0])
        recs[key][0] += 1
        recs[key][1] += bool(o.get("reach_back"))
# The export writes a window line only for a window not exact on every rank.
seen = set(windows) | {w for w, _ in recs}
last = max(seen) if seen else 0
burst = [w for w in range(k, last + 1) if (w - k) % p < b]
if not burst:
    errors.append(f"no burst window in the export (K {k}, windows {min(seen)}..{last})")
# A burst window is exact on every rank: records for each (those of a window still open when
# they came are in the window itself, the others in reach-back frames), or a window whose ranks
# had no calls at all (exact and empty: a line without any rank left out).
for w in burst:
    o = windows.get(w)
    if o and o["not_exact"]:
        errors.append(f"burst window {w} not exact on every rank: {o}")
        continue
    n = [recs.get((w, r), (0, 0)) for r in range(np_)]
    if not o and any(c == 0 for c, _ in n):
        errors.append(f"burst window {w}: records per rank (all, sent later) {n}")
# At least a burst's worth of windows came entirely after their samples, on every rank (under
# the last plan or an earlier one: a plan refined near the end leaves its last burst to the
# finalize, when its windows may still be open).
full = sum(1 for w in {w for w, _ in recs}
           if all(recs.get((w, r), (0, 0))[0] > 0 and recs[(w, r)][1] == recs[(w, r)][0]
                  for r in range(np_)))
if full < b:
    errors.append(f"{full} burst windows entirely from traces sent after their sample, want {b}")
# Outside the bursts (after K): summary only by the budget, never deferred.
for w, o in windows.items():
    if any(s["reason"] == "deferred" for s in o["not_exact"]):
        errors.append(f"window {w} still deferred: {o}")
    if w >= k and w not in burst and o["ranks_exact"]:
        errors.append(f"window {w} outside the bursts is exact: {o}")
print(f"plan every:{p}:{b}@{k}/{g}: burst windows {burst} exact on all {np_} ranks from traces "
      f"sent later; {t['deferred']} calls deferred, {t['reach_back']} traces after their sample")
sys.exit("\n".join(errors) if errors else 0)
EOF
echo "trace_defer: burst windows deferred by the ranks, exact in the export"
