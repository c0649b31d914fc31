#!/bin/bash
# dormant.sh MODE: the library's dormant mode on a real job (docs/shim.md "Dormant mode").
#
#   late   the job starts with MPIWATCH_MODE=dormant and the endpoint of a collector that is
#          not running yet; the collector starts 3 s later. Every rank was dormant from
#          MPI_Init until the collector appeared (one closed span, ending after the collector's
#          start), then recorded in full: the summary has MPI_Allreduce both in its dormant
#          counts and in its functions, and, exactly, N x 4 == merged + missed + dormant
#          MPI_Allreduce calls; nothing recorded was missed (the samples dropped while dormant
#          were empty), and the one MPI_Barrier per rank is in the dormant counts.
#   steer  a job recording in full is steered `mpiwatch.mode=dormant`, 3 s later
#          `mpiwatch.mode=full`, 3 s later `mpiwatch.mode=dormant` again, with 100 ms windows:
#          from the recording, the windows of the two dormant stretches (from 500 ms after the
#          message) hold no call and those of the full stretch calls; every rank has two spans,
#          the first closed, the second open to the end, each starting within a second of its
#          message (a window or two: the time to reach the rank); and the count is exact as
#          above.
# The job is tests/programs/steady on 4 ranks: every rank makes exactly N MPI_Allreduce calls,
# N printed by the program itself.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mode=$1
mw_setup "dormant_$mode"
prog=$MW_PROGRAMS/steady
[ -x "$prog" ] || mw_fail "program not built: $prog"
now_ns() { date +%s%N; }

# wait_log PATTERN: true once collector.err has a line matching PATTERN (up to 30 s).
wait_log() {
    local i
    for ((i = 0; i < 600; i++)); do
        grep -q "$1" "$MW_T/collector.err" 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}

final=(--exit-after-job --summary-json "$MW_T/summary.json")
case $mode in
    late)
        export MPIWATCH_WINDOW_MS=50
        t_job=$(now_ns)
        mw_mpirun -x MPIWATCH_MODE=dormant "$prog" "$MW_T" >"$MW_T/app.out" 2>"$MW_T/app.err" &
        job=$!
        mw_wait_file "$MW_T/ready" "$job" || mw_fail "the program never got ready"
        sleep 3 # dormant: no collector anywhere
        t_collector=$(now_ns)
        mw_start_collector "${final[@]}"
        wait_log "job '.*' started" || mw_fail "the collector never saw the job"
        sleep 1.5 # windows recorded in full
        t_steps=()
        ;;
    steer)
        mw_require MW_LAUNCHER
        export MPIWATCH_WINDOW_MS=100
        CTL="ipc://$MW_T/control"
        mw_start_collector "${final[@]}" --record "$MW_T/dormant.mpiw" --steer "ipc://$MW_T/steer" \
            --control "$CTL"
        t_job=$(now_ns)
        mw_mpirun -x MPIWATCH_STEER="ipc://$MW_T/steer" "$prog" "$MW_T" \
            >"$MW_T/app.out" 2>"$MW_T/app.err" &
        job=$!
        mw_wait_file "$MW_T/ready" "$job" || mw_fail "the program never got ready"
        mw_wait_connected "$MW_T/steer" 4 ||
            mw_fail "not every rank connected to the steering endpoint within 20 s"
        sleep 1 # windows in full first
        t_steps=()
        for value in dormant full dormant; do
            t_steps+=("$(now_ns)")
            "$MW_LAUNCHER" steer "$CTL" "mpiwatch.mode=$value" >>"$MW_T/steer.out" 2>&1 ||
                mw_fail "steer mpiwatch.mode=$value: $(cat "$MW_T/steer.out")"
            sleep 3
        done
        t_collector=0
        ;;
    *) mw_fail "unknown mode $mode" ;;
esac
t_stop=$(now_ns)
touch "$MW_T/stop"
wait "$job" || { cat "$MW_T/app.err" >&2; mw_fail "the job failed"; }
cat "$MW_T/app.out"
grep -q "^steady: 4 ranks, [0-9]* iterations$" "$MW_T/app.out" || mw_fail "the program did not finish"
mw_wait_collector 30
n=$(sed -n 's/^steady: 4 ranks, \([0-9]*\) iterations$/\1/p' "$MW_T/app.out")
jsonl=''
if [ "$mode" = steer ]; then
    "${MW_LAUNCHER%/mpiwatch}/mpiwatch-export" --format jsonl "$MW_T/dormant.mpiw" \
        -o "$MW_T/dormant.jsonl" || mw_fail "export failed"
    jsonl=$MW_T/dormant.jsonl
fi
"$MW_PYTHON" - "$mode" "$MW_T/summary.json" "$n" "$t_job" "$t_collector" "$t_stop" "$jsonl" \
    "${t_steps[@]}" <<'PY' || mw_fail "dormant accounting (above); summary: $(head -c 3000 "$MW_T/summary.json")"
import json, sys
mode, path, n, t_job, t_coll, t_stop, jsonl = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:7]), sys.argv[7]
steps = [int(x) for x in sys.argv[8:]]
s = json.load(open(path))
d, m = s["dormant"], s["missed"]
errors = []
def check(what, ok, detail=""):
    if not ok:
        errors.append(f"{what} {detail}")
ar = "MPI_Allreduce"
merged = s["functions"].get(ar, {}).get("count", 0)
missed = m["functions"].get(ar, {}).get("count", 0)
dormant = d["functions"].get(ar, {}).get("count", 0)
print(f"dormant: N={n}; {ar}: {merged} in the summary + {missed} missed + {dormant} dormant; "
      f"{d['ranks']} dormant ranks, {d['calls']} dormant calls, spans:")
for sp in d["spans"]:
    end = (sp["end_ns"] - t_job) / 1e9 if sp["end_ns"] else None
    print(f"  rank {sp['rank']}: {(sp['start_ns'] - t_job) / 1e9:.3f} s .. "
          f"{'the end' if end is None else f'{end:.3f} s'} after the job's start, {sp['calls']} calls")
# The application's own count, independent of mpiwatch.
check("exact: summary + missed + dormant == 4 x N", merged + missed + dormant == 4 * n,
      f"({merged} + {missed} + {dormant} != {4 * n})")
check("dormant calls in full", dormant > 0 and merged > 0, f"(dormant {dormant}, merged {merged})")
check("dormant ranks", d["ranks"] == 4, f"({d['ranks']})")
check("dormant total == sum over functions", d["calls"] == sum(f["count"] for f in d["functions"].values()))
check("no refused dormant totals", d["bad"] == 0, f"({d['bad']})")
check("nothing recorded missed", m["calls"] == 0, f"({m['calls']} calls)")
spans = {r: sorted((sp for sp in d["spans"] if sp["rank"] == r), key=lambda x: x["start_ns"]) for r in range(4)}
for r, sps in spans.items():
    if mode == "late":
        check(f"rank {r}: one span", len(sps) == 1, f"({len(sps)})")
        if sps:
            sp = sps[0]
            check(f"rank {r}: dormant from MPI_Init", t_job <= sp["start_ns"] < t_coll, "")
            check(f"rank {r}: awake once the collector came", t_coll <= sp["end_ns"] < t_stop,
                  f"(end {sp['end_ns']}, collector at {t_coll})")
    else:
        check(f"rank {r}: two spans", len(sps) == 2, f"({len(sps)})")
        if len(sps) == 2:
            a, b = sps
            print(f"rank {r}: dormant {(a['start_ns'] - steps[0]) / 1e6:.0f} ms after mode=dormant, "
                  f"full {(a['end_ns'] - steps[1]) / 1e6:.0f} ms after mode=full, dormant "
                  f"{(b['start_ns'] - steps[2]) / 1e6:.0f} ms after mode=dormant")
            for sp, t in ((a, steps[0]), (b, steps[2])):
                check(f"rank {r}: span starts within 1 s of its message",
                      t <= sp["start_ns"] < t + 1_000_000_000, f"({(sp['start_ns'] - t) / 1e6:.0f} ms)")
            check(f"rank {r}: first span ends within 1 s of mode=full",
                  steps[1] <= a["end_ns"] < steps[1] + 1_000_000_000, f"({(a['end_ns'] - steps[1]) / 1e6:.0f} ms)")
            check(f"rank {r}: second span open to the end", b["end_ns"] == 0, f"({b['end_ns']})")
if mode == "late":
    bar = s["functions"].get("MPI_Barrier", {}).get("count", 0) + d["functions"].get("MPI_Barrier", {}).get("count", 0)
    check("one MPI_Barrier per rank, dormant", d["functions"].get("MPI_Barrier", {}).get("count", 0) == 4 and bar == 4, f"({bar})")
if jsonl:
    MARGIN = 500_000_000
    windows = [json.loads(line) for line in open(jsonl)]
    def calls(w):
        return sum(f["count"] for f in w["functions"].values())
    def span(a, b):
        return [w for w in windows if w["start_ns"] >= a and w["start_ns"] + w["window_ns"] <= b]
    stretches = (("full", steps[0] - 1_000_000_000, steps[0]), ("dormant", steps[0] + MARGIN, steps[1]),
                 ("full", steps[1] + MARGIN, steps[2]), ("dormant", steps[2] + MARGIN, t_stop))
    for name, a, b in stretches:
        ws = span(a, b)
        print(f"{name}: {len(ws)} windows, calls {[calls(w) for w in ws]}")
        if name == "dormant":
            check("dormant windows are there", len(ws) >= 15, f"({len(ws)})")
            check("no call recorded while dormant", all(calls(w) == 0 for w in ws))
        else:
            check("full windows hold calls", len(ws) >= 3 and sum(calls(w) > 0 for w in ws) >= 0.5 * len(ws))
for e in errors:
    print("  " + e, file=sys.stderr)
sys.exit(1 if errors else 0)
PY
grep -q "dormant (counted, not timed): [1-9][0-9]* calls" "$MW_T/collector.err" ||
    mw_fail "the text report does not state the dormant calls"
mw_log "ok"
