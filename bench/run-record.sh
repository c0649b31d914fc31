#!/usr/bin/env bash
# run-record.sh: what --record costs the collector, measured side by side with and without it.
#
# DESIGN: the same emulated job (mpiwatch-loadgen, same seed, so the same messages) is sent to
# a collector without --record and to one with --record, in pairs whose order alternates
# (ABBA) so that a drift of the machine's load hits both alike. For each run the collector's
# CPU time (user + system, from bash's `time` around it, which counts every thread) is taken
# when it exits after the job (--exit-after-job). Only the collector is measured: the load
# generator shares the machine but its CPU is not counted. The script prints every run, then
# the median of the per-pair ratios (with / without) against the target of issue 3 (recording
# adds at most 10% CPU to ingest), the recording's size and data rate. It is a benchmark: it
# prints figures and exits 0 whatever they are; it fails only when a run fails. The
# recordings go to MW_BENCH_RECORD_DIR (default: the temporary directory) and are deleted
# after each run (at the default load one is about 550 MB).
#
# usage: run-record.sh BUILD_DIR
#        run-record.sh --collector PATH --loadgen PATH
# knobs (environment): MW_BENCH_PAIRS (3), MW_BENCH_RANKS (4096), MW_BENCH_RATE (10),
#   MW_BENCH_FUNCTIONS (20), MW_BENCH_SECONDS (10), MW_BENCH_RECORD_DIR, MW_BENCH_KEEP=1 (keep
#   the temporary directory, recordings excepted).
set -u
# The temporary directory and its cleanup are those of the tests (tests/lib/common.sh).
# shellcheck source=../tests/lib/common.sh
. "$(dirname "$0")/../tests/lib/common.sh"

usage() {
    sed -n '/^# usage:/,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
}

collector='' loadgen='' build=''
while [ $# -gt 0 ]; do
    case $1 in
        --collector) collector=$2; shift 2 ;;
        --loadgen) loadgen=$2; shift 2 ;;
        -h|--help) usage ;;
        -*) echo "run-record.sh: unknown option $1" >&2; usage ;;
        *) [ -z "$build" ] || usage; build=$1; shift ;;
    esac
done
if [ -n "$build" ]; then
    collector=${collector:-$build/collector/mpiwatch-collector}
    loadgen=${loadgen:-$build/tools/mpiwatch-loadgen}
fi
{ [ -n "$collector" ] && [ -n "$loadgen" ]; } || usage
for p in "$collector" "$loadgen"; do
    [ -x "$p" ] || { echo "run-record.sh: not built: $p" >&2; exit 1; }
done

pairs=${MW_BENCH_PAIRS:-3}
ranks=${MW_BENCH_RANKS:-4096}
rate=${MW_BENCH_RATE:-10}
functions=${MW_BENCH_FUNCTIONS:-20}
seconds=${MW_BENCH_SECONDS:-10}
MW_KEEP_TMP=${MW_BENCH_KEEP:-0}
mw_init bench-record
recdir=${MW_BENCH_RECORD_DIR:-$MW_T}
sock=${MW_EP#ipc://}

# run MODE N: one collector run; appends "MODE N CPU_S USER_S SYS_S BYTES ACCEPTED" to results.
run() {
    local mode=$1 n=$2 out=$MW_T/$1-$2 rec=() i cpu bytes=0 accepted
    [ "$mode" = record ] && rec=(--record "$recdir/bench.mpiw") && rm -f "$recdir/bench.mpiw"
    rm -f "$sock"
    (
        TIMEFORMAT='%3U %3S'
        time "$collector" --listen "$MW_EP" --exit-after-job --quiet \
            --silence-timeout-ms 60000 --stats-json "$out.stats" "${rec[@]}" \
            </dev/null >/dev/null 2>"$out.err"
    ) 2>"$out.cpu" &
    MW_CPID=$!
    for ((i = 0; i < 200; i++)); do
        [ -S "$sock" ] && break
        sleep 0.05
    done
    [ -S "$sock" ] || { cat "$out.err" >&2; mw_fail "the collector did not start"; }
    "$loadgen" --connect "$MW_EP" --ranks "$ranks" --rate "$rate" --functions "$functions" \
        --seconds "$seconds" --seed 11 --job bench 2>"$out.loadgen" ||
        { cat "$out.loadgen" >&2; mw_fail "mpiwatch-loadgen failed"; }
    wait "$MW_CPID" || { cat "$out.err" >&2; mw_fail "the collector failed ($mode run $n)"; }
    MW_CPID=''
    read -r user sys <"$out.cpu"
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.3f", u + s }')
    if [ "$mode" = record ]; then
        bytes=$(stat -c %s "$recdir/bench.mpiw")
        rm -f "$recdir/bench.mpiw"
    fi
    accepted=$("$MW_PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["accepted"])' \
        "$out.stats")
    local size=''
    [ "$mode" = record ] &&
        size=$(awk -v b="$bytes" 'BEGIN { printf ", recorded %.1f MB", b / 1e6 }')
    printf '%-7s %d: collector CPU %6.3f s (user %s, sys %s), accepted %s%s\n' "$mode" "$n" \
        "$cpu" "$user" "$sys" "$accepted" "$size"
    echo "$mode $n $cpu $user $sys $bytes $accepted" >>"$MW_T/results"
}

echo "run-record.sh: $pairs pairs; loadgen $ranks ranks, $rate Hz, $functions functions, $seconds s"
: >"$MW_T/results"
for ((p = 1; p <= pairs; p++)); do
    if ((p % 2)); then run plain "$p"; run record "$p"; else run record "$p"; run plain "$p"; fi
done

"$MW_PYTHON" - "$MW_T/results" "$seconds" <<'PY'
import statistics, sys
runs = [l.split() for l in open(sys.argv[1])]
seconds = float(sys.argv[2])
cpu = {m: {int(r[1]): float(r[2]) for r in runs if r[0] == m} for m in ("plain", "record")}
ratios = [cpu["record"][p] / cpu["plain"][p] for p in sorted(cpu["plain"]) if p in cpu["record"]]
sizes = [int(r[5]) for r in runs if r[0] == "record"]
accepted = {r[6] for r in runs}
med = statistics.median(ratios)
print(f"per-pair CPU ratios (with --record / without): {' '.join(f'{r:.3f}' for r in ratios)}")
print(f"median collector CPU: without {statistics.median(cpu['plain'].values()):.3f} s, "
      f"with --record {statistics.median(cpu['record'].values()):.3f} s")
print(f"recording overhead: median ratio {med:.3f} ({100 * (med - 1):+.1f}% CPU; target <= +10%)")
print(f"recording: {statistics.median(sizes) / 1e6:.1f} MB per run, "
      f"{statistics.median(sizes) / 1e6 / seconds:.1f} MB/s; accepted messages per run: "
      f"{', '.join(sorted(accepted))}")
PY
