#!/usr/bin/env bash
# run-ingest.sh: can one collector keep up with a large job? mpiwatch-loadgen -> collector.
#
# DESIGN: each run starts a private mpiwatch-collector on an ipc:// endpoint (the helpers of
# tests/lib/common.sh) and an mpiwatch-loadgen job of RANKS emulated ranks sending one sample
# per rank per window (--rate windows/s, --functions function summaries per sample) for
# --seconds, then checks the collector's stats and summary files. Per run it prints:
#   - windows/s achieved end to end: windows / (windows x window length + the largest close
#     latency), i.e. the rate at which the collector closed the windows the job produced (it
#     is the target rate when the collector keeps up, lower when it falls behind);
#   - samples sent, accepted, late, lost (sent but never accepted), rejected; windows closed
#     and partial;
#   - window close latency p50 / p99 / max (stats JSON; defined in docs/collector.md): from the
#     end of a window on the global grid to its close, against the window length;
#   - the collector's CPU (all its threads: main loop and ZeroMQ I/O thread, from
#     /proc/PID/stat) per second of the load generator's run, and the function summaries it
#     ingested per CPU second: the one-core figure. The load generator's own CPU is printed
#     too: on a 2-core machine it competes with the collector for the same cores;
#   - how long after the sender finished the collector exited (--exit-after-job): the backlog
#     it still had to work through, plus writing its report and files (a fraction of a second
#     at 16k ranks); the only rate figure for a collector without the close latency keys.
# Then the median of each figure over --runs runs per configuration. --sender blast replaces
# mpiwatch-loadgen by mw-ingest-blast (bench/ingest-blast.c), which sends the same kind of job
# for a fraction of the CPU: on 2 cores, the load generator itself cannot produce 16,384 ranks
# x 10 windows/s while the collector runs beside it. With --compare, every
# run is paired with one whose collector decodes with protobuf-c only
# (MPIWATCH_DECODER=protobuf-c), alternating which goes first, so both are measured under the
# same load. With --trace K, every sample of the load generator also carries an exact per-call
# trace (mpiwatch-loadgen --trace K: K traces encoded once, docs/loadgen.md), which the
# collector checks (one decode each) and keeps; each run then also prints the traced calls the
# collector accepted, the ones it refused, and the traced calls it ingested per second of its
# CPU: the one-core figure of issue 14's goal (5 M traced calls/s), docs/trace.md.
# It is a benchmark: it prints figures and exits 0 whatever they are; it fails only
# when a run fails. See docs/collector.md (Performance).
#
# usage: run-ingest.sh [--sizes "RANKS ..."] [--rate HZ] [--functions F] [--seconds S]
#                      [--runs N] [--compare] [--sender loadgen|blast] [--label NAME]
#                      [--trace K] BUILD_DIR
#        run-ingest.sh ... --collector PATH --loadgen PATH --blast PATH
# --label names the collector in the output ("fast" by default; e.g. "original" for the
# collector of another build given with --collector).
# defaults: --sizes "1024 4096 16384" --rate 10 --functions 20 --seconds 10 --runs 3;
# MW_BENCH_KEEP=1 keeps the temporary directory.
set -u
# shellcheck source=../tests/lib/common.sh
. "$(dirname "$0")/../tests/lib/common.sh"

usage() {
    sed -n '/^# usage:/,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
}

sizes="1024 4096 16384" rate=10 functions=20 seconds=10 runs=3 compare=0 sender=loadgen label=fast
trace=0
MW_COLLECTOR='' loadgen='' blast='' build=''
while [ $# -gt 0 ]; do
    case $1 in
        --sizes) sizes=$2; shift 2 ;;
        --rate) rate=$2; shift 2 ;;
        --functions) functions=$2; shift 2 ;;
        --seconds) seconds=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --compare) compare=1; shift ;;
        --collector) MW_COLLECTOR=$2; shift 2 ;;
        --loadgen) loadgen=$2; shift 2 ;;
        --blast) blast=$2; shift 2 ;;
        --sender) sender=$2; shift 2 ;;
        --label) label=$2; shift 2 ;;
        --trace) trace=$2; shift 2 ;;
        -h|--help) usage ;;
        -*) echo "run-ingest.sh: unknown option $1" >&2; usage ;;
        *) [ -z "$build" ] || usage; build=$1; shift ;;
    esac
done
if [ -n "$build" ]; then
    MW_COLLECTOR=${MW_COLLECTOR:-$build/collector/mpiwatch-collector}
    loadgen=${loadgen:-$build/tools/mpiwatch-loadgen}
    blast=${blast:-$build/bench/mw-ingest-blast}
fi
case $sender in
    loadgen) send=$loadgen ;;
    blast) send=$blast ;;
    *) echo "run-ingest.sh: --sender is loadgen or blast" >&2; usage ;;
esac
if [ -z "$MW_COLLECTOR" ] || [ -z "$send" ]; then usage; fi
trace_args=()
if [ "$trace" != 0 ]; then
    [ "$sender" = loadgen ] || { echo "run-ingest.sh: --trace needs --sender loadgen" >&2; exit 2; }
    trace_args=(--trace "$trace")
fi
for p in "$MW_COLLECTOR" "$send"; do
    [ -x "$p" ] || { echo "run-ingest.sh: no executable $p (build it first)" >&2; exit 1; }
done
python=$MW_PYTHON
# MW_KEEP_TMP and MW_FAILURE_LOG are read by tests/lib/common.sh.
# shellcheck disable=SC2034
MW_KEEP_TMP=${MW_BENCH_KEEP:-0}
mw_init run-ingest
dir=$MW_T
hz=$(getconf CLK_TCK)

# CPU ticks (user + system, all threads) of a process so far.
cpu_ticks() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || { echo 0; return; }
    stat=${stat##*) } # the command name may contain spaces; fields from state on
    # shellcheck disable=SC2086
    set -- $stat
    echo $((${12} + ${13}))
}

now_s() { date +%s.%N; }

# run_one RANKS DECODER RESULTS: one collector, one job from the sender; appends a JSON line of
# figures to RESULTS and prints it readably.
run_one() {
    local ranks=$1 decoder=$2 results=$3 r=$dir/run c0 c1 t0 t1
    rm -rf "$r"
    mkdir -p "$r"
    if [ "$decoder" = protobuf-c ]; then
        MPIWATCH_DECODER=protobuf-c mw_start_collector --exit-after-job --quiet \
            --summary-json "$r/summary.json" --stats-json "$r/stats.json" --report "$r/report.txt" \
            --silence-timeout-ms 60000
    else
        mw_start_collector --exit-after-job --quiet --summary-json "$r/summary.json" \
            --stats-json "$r/stats.json" --report "$r/report.txt" --silence-timeout-ms 60000
    fi
    c0=$(cpu_ticks "$MW_CPID")
    t0=$(now_s)
    TIMEFORMAT='%3U %3S %3R'
    { time "$send" --connect "$MW_EP" --ranks "$ranks" --rate "$rate" \
        --functions "$functions" --seconds "$seconds" --job "bench-$ranks" \
        --totals-json "$r/totals.json" "${trace_args[@]}" 2>"$r/loadgen.err"; } \
        2>"$r/loadgen.time" ||
        { MW_FAILURE_LOG=$r/loadgen.err; mw_fail "$sender failed"; }
    c1=$(cpu_ticks "$MW_CPID")
    t1=$(now_s)
    mw_collector_exits 300
    t2=$(now_s)
    "$python" - "$r" "$ranks" "$decoder" "$((c1 - c0))" "$hz" "$t0" "$t1" "$t2" "$rate" \
        "$functions" "$results" <<'PY' || mw_fail "cannot read the run's outputs"
import json, sys

d, ranks, decoder, ticks, hz, t0, t1, t2, rate, nfn, results = sys.argv[1:]
load = lambda n: json.load(open(f"{d}/{n}"))
tot, stats, summary = load("totals.json"), load("stats.json"), load("summary.json")
user, system, real = (float(x) for x in open(f"{d}/loadgen.time").read().split())
span = float(t1) - float(t0)
window_s = 1.0 / float(rate)
windows = tot["windows"]
# A collector older than the close latency keys (to compare with an old build) gives no rate.
nan = float("nan")
lat = {k: stats.get(f"close_{k}", nan) for k in
       ("latency_ms_p50", "latency_ms_p99", "latency_ms_max", "wait_ms_p99")}
lat_max = lat["latency_ms_max"] / 1e3
achieved = stats["windows"] / (windows * window_s + lat_max) if windows else 0.0
accepted = stats["accepted"] - tot["hellos"] - tot["byes"]
cpu = int(ticks) / int(hz)
lg_wps = 0.0
for line in open(f"{d}/loadgen.err"):
    if " achieved " in line:
        lg_wps = float(line.split(" achieved ")[1].split()[0])
r = {"ranks": int(ranks), "decoder": decoder, "windows_sent": windows,
     "windows_closed": stats["windows"], "partial": stats["partial_windows"],
     "samples_sent": tot["samples"], "accepted": accepted, "late": stats["late"],
     "lost": tot["samples"] - accepted, "rejected": sum(stats["rejected"].values()),
     "rank_dropped": summary["dropped"], "achieved_wps": achieved,
     "summaries_per_s": achieved * int(ranks) * int(nfn), "loadgen_wps": lg_wps,
     "lat_p50_ms": lat["latency_ms_p50"], "lat_p99_ms": lat["latency_ms_p99"],
     "lat_max_ms": lat["latency_ms_max"], "wait_p99_ms": lat["wait_ms_p99"],
     "collector_cpu_per_s": cpu / span, "drain_s": float(t2) - float(t1),
     "summaries_per_cpu_s": tot["function_summaries"] / cpu if cpu else 0.0,
     "loadgen_cpu_per_s": (user + system) / real if real else 0.0}
# Traced calls (--trace): what the generator sent, what the collector kept and refused.
ts = stats.get("trace", {})
r["traced_sent"] = tot.get("traced_calls", 0)
r["traced_calls"] = ts.get("traced_calls", 0)
r["trace_refused"] = sum(ts.get("refused", {}).values())
r["traced_per_cpu_s"] = r["traced_calls"] / cpu if cpu else 0.0
r["trace_bytes_per_call"] = (tot.get("trace_bytes", 0) / r["traced_sent"]
                             if r["traced_sent"] else 0.0)
with open(results, "a") as f:
    f.write(json.dumps(r) + "\n")
print(f"  {r['ranks']:6d} ranks, {decoder:10s}: {achieved:5.2f} windows/s "
      f"({r['summaries_per_s'] / 1e6:4.2f} M summaries/s; sender sent {lg_wps:.2f}/s); samples "
      f"{r['samples_sent']} sent, {accepted} accepted, {r['late']} late, {r['lost']} lost, "
      f"{r['rejected']} rejected; windows {r['windows_closed']}/{windows} ({r['partial']} "
      f"partial); close latency p50 {r['lat_p50_ms']:.1f} p99 {r['lat_p99_ms']:.1f} max "
      f"{r['lat_max_ms']:.1f} ms; collector CPU {r['collector_cpu_per_s']:.2f} s/s "
      f"({r['summaries_per_cpu_s'] / 1e6:.2f} M summaries per CPU s); sender CPU "
      f"{r['loadgen_cpu_per_s']:.2f} s/s; exit {r['drain_s']:.2f} s after the sender")
if r["traced_sent"]:
    print(f"      traced calls: {r['traced_sent']} sent ({r['trace_bytes_per_call']:.2f} bytes "
          f"a call), {r['traced_calls']} kept, {r['trace_refused']} traces refused; "
          f"{r['traced_per_cpu_s'] / 1e6:.2f} M traced calls per collector CPU s")
PY
}

results=$dir/results.jsonl
: >"$results"
echo "run-ingest: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at start;" \
    "rate $rate windows/s, $functions functions, $seconds s per run, $runs runs per size," \
    "sender $sender, traces ${trace}"
for ranks in $sizes; do
    for ((i = 0; i < runs; i++)); do
        if [ "$compare" = 1 ]; then
            if ((i % 2 == 0)); then order="$label protobuf-c"; else order="protobuf-c $label"; fi
        else
            order=$label
        fi
        for decoder in $order; do
            run_one "$ranks" "$decoder" "$results"
        done
    done
done
echo "run-ingest: load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"

"$python" - "$results" "$rate" "$functions" <<'PY'
import json, statistics, sys

rows = [json.loads(l) for l in open(sys.argv[1])]
rate, nfn = float(sys.argv[2]), int(sys.argv[3])
print(f"medians over the runs (late, lost, partial: the worst run); target {rate:g} windows/s, "
      f"p99 close latency <= {1e3 / rate:g} ms, nothing late or lost, collector CPU <= 1 s/s:")
print(f"  {'ranks':>6} {'decoder':10} {'windows/s':>9} {'M summ/s':>8} {'late':>5} {'lost':>5} "
      f"{'partial':>7} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} {'CPU s/s':>7} "
      f"{'M summ/CPU s':>12} {'sender CPU':>10} {'exit s':>6}")
keys = sorted({(r["ranks"], r["decoder"]) for r in rows},
              key=lambda k: (k[0], k[1] == "protobuf-c"))
for ranks, dec in keys:
    rs = [r for r in rows if r["ranks"] == ranks and r["decoder"] == dec]
    m = lambda k: statistics.median(r[k] for r in rs)
    print(f"  {ranks:6d} {dec:10} {m('achieved_wps'):9.2f} {m('summaries_per_s') / 1e6:8.2f} "
          f"{max(r['late'] for r in rs):5d} {max(r['lost'] for r in rs):5d} "
          f"{max(r['partial'] for r in rs):7d} {m('lat_p50_ms'):7.1f} {m('lat_p99_ms'):7.1f} "
          f"{m('lat_max_ms'):7.1f} {m('collector_cpu_per_s'):7.2f} "
          f"{m('summaries_per_cpu_s') / 1e6:12.2f} {m('loadgen_cpu_per_s'):10.2f} "
          f"{m('drain_s'):6.2f}")
if any(r["traced_sent"] for r in rows):
    print("traced calls (--trace; medians, refused: the worst run):")
    print(f"  {'ranks':>6} {'decoder':10} {'M sent/s':>8} {'B/call':>6} {'refused':>7} "
          f"{'M traced calls/CPU s':>20}")
    for ranks, dec in keys:
        rs = [r for r in rows if r["ranks"] == ranks and r["decoder"] == dec]
        m = lambda k: statistics.median(r[k] for r in rs)
        sent_s = statistics.median(r["traced_sent"] / (r["windows_sent"] / rate) for r in rs)
        print(f"  {ranks:6d} {dec:10} {sent_s / 1e6:8.2f} {m('trace_bytes_per_call'):6.2f} "
              f"{max(r['trace_refused'] for r in rs):7d} {m('traced_per_cpu_s') / 1e6:20.2f}")
PY
