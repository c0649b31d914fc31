#!/bin/bash
# demo_steer.sh: `mpiwatch demo --steer` end to end (docs/steering.md, "Demo"), headless and
# shortened (500k cells, 1500 iterations, rank 2 slow from iteration 100: 15 to 45 s,
# depending on how busy the machine is). Checks:
#   - the application's stdout: every rank printed its rebalance line, all after the same
#     iteration, and apart from those lines stdout is byte for byte that of the same program
#     run without mpiwatch (never rebalanced; and with --slow-factor 1, which changes the
#     speed, not the numbers, and keeps this check short): same residuals, same checksum;
#   - the terminal view (stderr, not a tty) printed the firing and the steering message once,
#     and the launcher its before/after statement;
#   - from the recording (mpiwatch-export): the rule `imbalance` (metric load_imbalance) fired
#     at window F, naming the slow rank 2, where the load imbalance recomputed from the
#     per-rank CSV (max / mean of the ranks' time outside MPI) was above the rule's threshold
#     (1.5) in the `for` (3) windows F-2..F; the steer event rebalance=1 follows the firing;
#     from F+4 to the end the mean load imbalance is below the threshold and below 0.85 x the
#     mean of F-2..F, and the ranks that waited for rank 2 spend less than 0.75 x the share
#     of their time in MPI that they did in F-2..F.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mw_setup demo_steer
mw_require MW_LAUNCHER
app_args=(--cells 500000 --iterations 1500 --slow-from 100 --slow-ranks 2)
rec=$MW_T/demo.mpiw
MW_FAILURE_LOG=$MW_T/launcher.err
"$MW_LAUNCHER" demo --steer --record "$rec" -- "${app_args[@]}" \
    >"$MW_T/app.out" 2>"$MW_T/launcher.err"
rc=$?
cat "$MW_T/app.out"
[ "$rc" = 0 ] || mw_fail "mpiwatch demo --steer exited with status $rc"
[ -s "$rec" ] || mw_fail "no recording at $rec"

# The application: every rank rebalanced after the same iteration(s) (once per firing of the
# rule; a second firing is allowed, under heavy load, but must be agreed like the first).
its=$(sed -n 's/^rebalance: rank [0-3] after iteration \([0-9]*\): .*/\1/p' "$MW_T/app.out" | sort -u)
[ -n "$its" ] || mw_fail "no rank printed a rebalance line"
for it in $its; do
    for r in 0 1 2 3; do
        grep -Eq "^rebalance: rank $r after iteration $it: [0-9]+ -> [0-9]+ cells" "$MW_T/app.out" ||
            mw_fail "rank $r printed no rebalance line for iteration $it"
    done
done
grep -q "^mpiwatch-rebalance: done, 1500 iterations, checksum [0-9a-f]\{16\}$" "$MW_T/app.out" ||
    mw_fail "the application did not finish"

# The same program without mpiwatch prints the same, minus the rebalance lines.
"$MW_MPIRUN" --oversubscribe -np 4 "${MW_LAUNCHER%/tools/mpiwatch}/examples/mpiwatch-rebalance" \
    "${app_args[@]}" --slow-factor 1 >"$MW_T/bare.out" 2>"$MW_T/bare.err" ||
    mw_fail "without mpiwatch the application failed: $(head -c 500 "$MW_T/bare.err")"
# The first line names the slow factor; the rest must be equal.
grep -v '^rebalance: ' "$MW_T/app.out" | tail -n +2 >"$MW_T/app.rest"
tail -n +2 "$MW_T/bare.out" >"$MW_T/bare.rest"
[ -s "$MW_T/bare.rest" ] || mw_fail "without mpiwatch the application printed nothing"
diff "$MW_T/bare.rest" "$MW_T/app.rest" >"$MW_T/diff.out" ||
    mw_fail "stdout differs from the run without mpiwatch: $(head -c 1000 "$MW_T/diff.out")"

# The terminal view and the launcher's statement.
grep -Eq '^mpiwatch: w [0-9]+  rule imbalance fired: load_imbalance [0-9.]+ \(rank 2\)$' \
    "$MW_T/launcher.err" || mw_fail "the terminal view did not show the rule firing"
grep -Eq '^mpiwatch: w [0-9]+  steer rebalance=1 ranks 0,1,2,3$' "$MW_T/launcher.err" ||
    mw_fail "the terminal view did not show the steering message"
grep -E '^mpiwatch: demo: load imbalance [0-9.]+ \(windows [0-9]+-[0-9]+\) before rule imbalance fired at window [0-9]+ .* after$' \
    "$MW_T/launcher.err" || mw_fail "no before/after statement from the launcher"

# The recording.
export="${MW_LAUNCHER%/mpiwatch}/mpiwatch-export"
"$export" --format perfetto "$rec" -o "$MW_T/trace.json" || mw_fail "export perfetto failed"
"$export" --format csv --per-rank "$rec" -o "$MW_T/ranks.csv" || mw_fail "export csv failed"
"$MW_PYTHON" - "$MW_T/trace.json" "$MW_T/ranks.csv" <<'PY' || mw_fail "the recording does not show the imbalance going away (above)"
import csv, json, sys
from collections import defaultdict
THRESHOLD, FOR = 1.5, 3
events = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("ph") == "i"]
share = defaultdict(lambda: defaultdict(float))
for row in csv.DictReader(open(sys.argv[2])):
    share[int(row["grid_index"])][int(row["rank"])] += float(row["fraction_inside"])
def imb(w):  # load imbalance: max / mean of the time outside MPI
    s = share.get(w)
    c = [max(0.0, 1.0 - v) for v in s.values()] if s else []
    if not c or sum(c) <= 0:
        return None
    return max(c) / (sum(c) / len(c))
first, last = min(share), max(share)
fires = [e for e in events if e["name"] == "rule" and "rule=imbalance " in e["args"]["detail"]]
assert fires, "the rule never fired"
d = dict(kv.split("=", 1) for kv in fires[0]["args"]["detail"].split() if "=" in kv)
F = int(d["window"])
print(f"rule fired at window {F - first}: {fires[0]['args']['detail']}")
assert float(d["value"]) > THRESHOLD, d
held = [imb(w) for w in range(F - FOR + 1, F + 1)]
print("imbalance in the 'for' windows:", [round(v, 3) for v in held])
assert all(v is not None and v > THRESHOLD - 0.02 for v in held), "condition did not hold"
i = events.index(fires[0])
steer = [e for e in events[i + 1:] if e["name"] == "steer"]
assert steer and steer[0]["args"]["detail"] == "rebalance=1 ranks 0,1,2,3", steer[:1]
assert steer[0]["ts"] >= fires[0]["ts"]
after = [v for v in (imb(w) for w in range(F + 4, last)) if v is not None]
assert len(after) >= 8, f"only {len(after)} windows after the rebalance"
before = sum(held) / len(held)
mean = sum(after) / len(after)
print(f"imbalance {before:.2f} before, {mean:.2f} after (windows {F + 4 - first}-{last - 1 - first})")
assert mean < THRESHOLD and mean < 0.85 * before, "imbalance did not drop clearly"
assert int(d["rank"]) == 2, f"the rule named rank {d['rank']}, not the slow rank 2"
waiters = (0, 1, 3)
def waiting(ws):
    vals = [share[w].get(r, 0.0) for w in ws if w in share for r in waiters]
    return sum(vals) / len(vals)
s_before = waiting(range(F - FOR + 1, F + 1))
s_after = waiting(range(F + 4, last))
print(f"ranks 0, 1, 3 in MPI: {s_before:.3f} of their time before, {s_after:.3f} after")
assert s_after < 0.75 * s_before, "the other ranks still wait for rank 2"
PY
echo "demo_steer: ok"
