#!/usr/bin/env bash
# run-lateness.sh: does the collector's online lateness analysis keep up, and does it leave the
# window pipeline alone? (docs/lateness.md, "Performance")
#
# DESIGN: pairs of runs of one private mpiwatch-collector (ipc:// endpoint, the helpers of
# tests/lib/common.sh) fed by mpiwatch-loadgen --trace K --trace-ring: RANKS emulated ranks
# sending one traced sample per window at --rate windows/s, their messages matched across
# ranks, rank 1 late by 5 ms every 10th window (docs/loadgen.md). In each pair one run has
# --lateness on and the other --lateness off, alternating which goes first, so that both see
# the same load on a shared machine. Per run it prints, from the collector's stats JSON:
#   - window close latency p50 / p99 / max (docs/collector.md): must not change with the
#     analysis on, since the analysis runs on its own thread beside the pipeline;
#   - with the analysis on: the worker's time per window (p50 / p99 / max; decoding the
#     traces included), the windows analysed and skipped (behind: queue full or over
#     --lateness-budget-ms), the events analysed and the worker's time per million events;
#   - the collector's CPU (all threads, /proc/PID/stat) per second of the run.
# Then the median of each figure over the runs of each mode, side by side. It is a benchmark:
# it prints figures and exits 0 whatever they are; it fails only when a run fails.
#
# usage: run-lateness.sh [--ranks N] [--rate HZ] [--functions F] [--seconds S] [--trace K]
#                        [--runs N] [--budget-ms MS] BUILD_DIR
# defaults: --ranks 64 --rate 10 --functions 2 --seconds 10 --trace 4 --runs 3
#           --budget-ms 2000; MW_BENCH_KEEP=1 keeps the temporary directory.
set -u
# shellcheck source=../tests/lib/common.sh
. "$(dirname "$0")/../tests/lib/common.sh"

usage() {
    sed -n '/^# usage:/,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
}

ranks=64 rate=10 functions=2 seconds=10 trace=4 runs=3 budget=2000 build=''
while [ $# -gt 0 ]; do
    case $1 in
        --ranks) ranks=$2; shift 2 ;;
        --rate) rate=$2; shift 2 ;;
        --functions) functions=$2; shift 2 ;;
        --seconds) seconds=$2; shift 2 ;;
        --trace) trace=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --budget-ms) budget=$2; shift 2 ;;
        -h|--help) usage ;;
        -*) echo "run-lateness.sh: unknown option $1" >&2; usage ;;
        *) [ -z "$build" ] || usage; build=$1; shift ;;
    esac
done
[ -n "$build" ] || usage
MW_COLLECTOR=$build/collector/mpiwatch-collector
loadgen=$build/tools/mpiwatch-loadgen
for p in "$MW_COLLECTOR" "$loadgen"; do
    [ -x "$p" ] || { echo "run-lateness.sh: no executable $p (build it first)" >&2; exit 1; }
done
python=${MW_PYTHON:-/usr/bin/python3}
# MW_KEEP_TMP and MW_FAILURE_LOG are read by tests/lib/common.sh.
# shellcheck disable=SC2034
MW_KEEP_TMP=${MW_BENCH_KEEP:-0}
mw_init run-lateness
dir=$MW_T
hz=$(getconf CLK_TCK)
results=$dir/results.jsonl

# CPU ticks (user + system, all threads) of a process so far.
cpu_ticks() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || { echo 0; return; }
    stat=${stat##*) }
    # shellcheck disable=SC2086
    set -- $stat
    echo $((${12} + ${13}))
}

# run_one MODE: one collector (--lateness MODE), one load generator run; appends a JSON line.
run_one() {
    local mode=$1 r=$dir/run c0 c1
    rm -rf "$r"
    mkdir -p "$r"
    mw_start_collector --exit-after-job --quiet --stats-json "$r/stats.json" \
        --report "$r/report.txt" --silence-timeout-ms 60000 --lateness "$mode" \
        --lateness-budget-ms "$budget"
    c0=$(cpu_ticks "$MW_CPID")
    "$loadgen" --connect "$MW_EP" --ranks "$ranks" --rate "$rate" --functions "$functions" \
        --seconds "$seconds" --job "bench-lateness" --trace "$trace" --trace-ring \
        2>"$r/loadgen.err" || { MW_FAILURE_LOG=$r/loadgen.err; mw_fail "loadgen failed"; }
    c1=$(cpu_ticks "$MW_CPID")
    mw_collector_exits 300
    "$python" - "$r/stats.json" "$mode" "$((c1 - c0))" "$hz" "$seconds" >>"$results" <<'EOF'
import json, sys
st = json.load(open(sys.argv[1]))
mode, ticks, hz, secs = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
out = {"mode": mode, "windows": st.get("windows", 0),
       "close_p50": st["close_latency_ms_p50"], "close_p99": st["close_latency_ms_p99"],
       "close_max": st["close_latency_ms_max"], "cpu_per_s": ticks / hz / secs}
l = st.get("lateness")
if l:
    ev = l["events"]
    out.update(extract_p50=l["extract_ms_p50"], extract_p99=l["extract_ms_p99"],
               extract_max=l["extract_ms_max"], analysed=l["windows_analysed"],
               skipped=l["windows_skipped"], events=ev,
               s_per_mevent=l["extract_ms_total"] / 1e3 / (ev / 1e6) if ev else 0.0)
print(json.dumps(out))
EOF
    tail -1 "$results" >&2
}

echo "run-lateness: $ranks ranks, $rate windows/s, $functions functions, $seconds s per run," \
    "--trace $trace --trace-ring, $runs pair(s)" >&2
for ((i = 0; i < runs; i++)); do
    if ((i % 2 == 0)); then
        run_one on
        run_one off
    else
        run_one off
        run_one on
    fi
done

"$python" - "$results" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
med = lambda mode, k: statistics.median(r[k] for r in rows if r["mode"] == mode and k in r)
print(f"{'':32}{'lateness on':>14}{'lateness off':>14}")
for k, label in [("windows", "windows closed"), ("close_p50", "close latency p50 (ms)"),
                 ("close_p99", "close latency p99 (ms)"), ("close_max", "close latency max (ms)"),
                 ("cpu_per_s", "collector CPU s per s")]:
    print(f"{label:32}{med('on', k):14.3f}{med('off', k):14.3f}")
for k, label in [("extract_p50", "worker ms per window p50"),
                 ("extract_p99", "worker ms per window p99"),
                 ("extract_max", "worker ms per window max"), ("analysed", "windows analysed"),
                 ("skipped", "windows skipped (behind)"), ("events", "events analysed"),
                 ("s_per_mevent", "worker s per million events")]:
    print(f"{label:32}{med('on', k):14.3f}{'-':>14}")
EOF
