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
# Every burst plan sent (the planner refines it while the rate settles, more often on a loaded
# machine); the check below takes the last one that started before the job's last window.
plan=$(grep -Eo "trace plan: [^ ]+" "$MW_T/collector.err" | tr '\n' ';')
grep -Eq "every:[0-9]+:3@[0-9]+/[0-9]+" <<<"$plan" ||
    mw_fail "no deferred burst plan in the collector's log: $(grep -i "trace" "$MW_T/collector.err")"
echo "$plan"
grep -h "deferred bursts" "$MW_T/app.err" || true
"$export_bin" --format trace "$MW_T/r.mpiw" -o "$MW_T/calls.jsonl" 2>"$MW_T/export.err" ||
    mw_fail "export --format trace failed: $(tail -3 "$MW_T/export.err")"

"${MW_PYTHON:-/usr/bin/python3}" - "$MW_T" "$plan" "$MW_NP" <<'EOF' || mw_fail "deferred bursts (above)"
import json, re, sys
d, plans, np_ = sys.argv[1], sys.argv[2], int(sys.argv[3])
# Every plan in the order sent: (P, B, K, G) for bursts (G 0: not deferred), None for "all"
# and the rest (they take effect at once).
seq = []
for tok in re.findall(r"trace plan: ([^;]+)", plans):
    m = re.fullmatch(r"every:(\d+):(\d+)@(\d+)(?:/(\d+))?", tok.strip())
    seq.append(tuple(int(x or 0) for x in m.groups()) if m else None)
errors = []
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
# Windows never left "deferred" (their records all came).
for w, o in windows.items():
    if any(s["reason"] == "deferred" for s in o["not_exact"]):
        errors.append(f"window {w} still deferred: {o}")
# At least a burst's worth of windows came entirely after their samples, on every rank.
full = sum(1 for w in {w for w, _ in recs}
           if all(recs.get((w, r), (0, 0))[0] > 0 and recs[(w, r)][1] == recs[(w, r)][0]
                  for r in range(np_)))
if full < 3:
    errors.append(f"{full} burst windows entirely from traces sent after their sample, want 3")


def check_plan(p, b, k, g, end):
    """The errors of one deferred plan over the windows it was in force: K .. end - 1."""
    errs = []
    if g < 2 or g > p:
        errs.append(f"G = {g}, want 2..P")
    burst = [w for w in range(k, end) if (w - k) % p < b]
    # A burst window is exact on every rank: records for each (those of a window still open
    # when they came are in the window itself, the others in reach-back frames), or a window
    # whose ranks had no calls at all (exact and empty: a line without any rank left out).
    for w in burst:
        o = windows.get(w)
        if o and o["not_exact"]:
            errs.append(f"burst window {w} not exact on every rank: {o}")
            continue
        n = [recs.get((w, r), (0, 0)) for r in range(np_)]
        if not o and any(c == 0 for c, _ in n):
            errs.append(f"burst window {w}: records per rank (all, sent later) {n}")
    # Outside the bursts: summary only by the budget.
    for w, o in windows.items():
        if k <= w < end and w not in burst and o["ranks_exact"]:
            errs.append(f"window {w} outside the bursts is exact: {o}")
    return burst, errs


# The deferred plans in force for a whole burst at least, the latest first: each from its K
# (within the job) to the next plan's K. A plan followed by one without K ("all", which takes
# effect when it arrives) has no known end and is not checked. On a loaded machine a plan can
# reach the ranks after its K (its lead is 4 windows) and is then not applied: the test asks
# that one deferred plan in force was carried out exactly, and shows the others' errors.
checked = []
for i in range(len(seq) - 1, -1, -1):
    pl = seq[i]
    if pl is None or pl[3] == 0 or pl[2] > last:
        continue
    later = seq[i + 1:]
    if any(x is None for x in later):
        continue
    end = min([x[2] for x in later if x[2] > pl[2]] + [last + 1])
    if end - pl[2] < pl[1]:
        continue
    burst, errs = check_plan(*pl, end)
    checked.append((pl, burst, errs))
    if not errs:
        break
if not checked:
    errors.append(f"no deferred burst plan in force for a whole burst: {seq}, last {last}")
elif checked[-1][2]:
    for pl, burst, errs in checked:
        errors.append(f"plan every:{pl[0]}:{pl[1]}@{pl[2]}/{pl[3]}: " + "; ".join(errs))
else:
    (p, b, k, g), burst, _ = checked[-1]
    print(f"plan every:{p}:{b}@{k}/{g}: burst windows {burst} exact on all {np_} ranks from traces "
          f"sent later; {t['deferred']} calls deferred, {t['reach_back']} traces after their sample")
sys.exit("\n".join(errors) if errors else 0)
EOF
echo "trace_defer: burst windows deferred by the ranks, exact in the export"
