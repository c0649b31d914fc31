#!/bin/bash
# run-tree.sh [BUILD_DIR]: one collector against an aggregator tree, with mpiwatch-loadgen.
#
#   (a) one collector at increasing sizes (MW_TREE_SIZES, default 4096 8192 16384 32768 ranks),
#       saying at each whether it keeps up: no window closed partial, no late sample, close
#       latency p99 within 2 windows, the generator within 5% of the requested rate (with
#       MW_TREE_STOP=1 the sweep stops at the first size that does not);
#   (b) MW_TREE_RANKS (default 100000) ranks through MW_TREE_AGGS (default 8) aggregators
#       (`mpiwatch-collector --upstream ROOT --aggregator-id i --expect-ranks n
#       --exit-after-job`) and a root (`mpiwatch-collector --stats-json --summary-json`), one
#       generator sending contiguous blocks of ranks to the aggregators (--connect per
#       aggregator).
#   (c) MW_EMU_RANKS (default 100000) ranks through MW_EMU_AGGS (8) EMULATED aggregators
#       (`mpiwatch-loadgen --aggregators`: their partials built by the real aggregator code,
#       docs/loadgen.md) into a root alone, for MW_EMU_SECONDS (30): what the root of a tree
#       costs, on a machine that cannot run the aggregators of 100,000 ranks beside it; then the
#       root side by side with the largest size (a) kept up with, and the goals of issue 18
#       (root under 50 % of a core, every window closed with all ranks, p99 within 2 windows,
#       totals exact).
# MW_TREE_PARTS (default "a b c") chooses the parts run. MW_TREE_ROOT_NICE=N runs the root (the
# single collector) under `nice -n N` (a negative N needs root): on a machine shared with other
# work, what the root does when it gets the CPU it needs.
# Every run: MW_TREE_RATE windows/s (10) for MW_TREE_SECONDS (5), MW_TREE_FUNCTIONS functions
# (4), cached encodings (--variants MW_TREE_VARIANTS, 2), ipc:// endpoints, nothing recorded.
# Each configuration runs MW_BENCH_ROUNDS times (3) and the medians are printed side by side:
#   cpu%      CPU of a process (utime + stime from /proc/PID/stat, sampled every 0.1 s) from
#             the start of the first window to its exit, over the job's length (windows x
#             window): the share of a core it needs to keep up (over 100: more than a core);
#   windows   closed complete / partial at the collector or root (stats JSON);
#   p99 win   the root's close latency p99 in windows (stats close_latency_ms_p99 / window);
#   max win   ... and its maximum (close_latency_ms_max / window);
#   exact     the generator's per-function calls, time and bytes (--totals-json) equal the
#             summary's, in every round;
#   acct      the accounting closes: the generator's calls = the summary's + its missed.calls
#             (what was lost is counted), in every round;
#   MB/s      bytes per second of job into the level: ranks -> collector or aggregators (the
#             generator's samples: run.sample_bytes of its totals JSON), aggregators -> root
#             (their stats' upstream.bytes_sent: partials, AggStates, hellos and byes);
#   gen       the generator's achieved windows/s and its CPU per sample (cached encodings);
#   us/smp    CPU per sample of the busiest collector process (root or aggregator): cpu% x
#             job length / the samples it took (its ranks' samples).
# MW_TREE_ROOT_ARGS and MW_TREE_AGG_ARGS add options to the root (the single collector) and to
# every aggregator (e.g. MW_TREE_ROOT_ARGS="--rank-detail off").
# A benchmark, not a test: it prints figures. The machine is shared: read the ratios.
set -u
build=${1:-$(dirname "$0")/../build}
collector=$build/collector/mpiwatch-collector
loadgen=$build/tools/mpiwatch-loadgen
for b in "$collector" "$loadgen"; do
    [ -x "$b" ] || {
        echo "run-tree.sh: $b not built" >&2
        exit 1
    }
done
rounds=${MW_BENCH_ROUNDS:-3}
sizes=${MW_TREE_SIZES:-4096 8192 16384 32768}
tree_ranks=${MW_TREE_RANKS:-100000}
aggs=${MW_TREE_AGGS:-8}
rate=${MW_TREE_RATE:-10}
seconds=${MW_TREE_SECONDS:-5}
functions=${MW_TREE_FUNCTIONS:-4}
variants=${MW_TREE_VARIANTS:-2}
emu_ranks=${MW_EMU_RANKS:-100000}
emu_aggs=${MW_EMU_AGGS:-8}
emu_seconds=${MW_EMU_SECONDS:-30}
parts=${MW_TREE_PARTS:-a b c}
read -r -a root_args <<<"${MW_TREE_ROOT_ARGS:-}"
root_prefix=()
[ -n "${MW_TREE_ROOT_NICE:-}" ] && root_prefix=(nice -n "$MW_TREE_ROOT_NICE")
read -r -a agg_args <<<"${MW_TREE_AGG_ARGS:-}"
python=${MW_PYTHON:-/usr/bin/python3}
[ -x "$python" ] || python=python3
dir=$(mktemp -d /tmp/mw-tree.XXXXXX) || exit 1
pids=()
# shellcheck disable=SC2317 # called by the trap
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    if [ "${MW_KEEP_TMP:-0}" = 1 ]; then echo "kept $dir" >&2; else rm -rf -- "$dir"; fi
}
trap cleanup EXIT
trap 'exit 130' INT

# cpu_sampler OUT PID...: every 0.1 s, one line "realtime_ns pid ticks" per live PID, until
# none is left (ticks: utime + stime, fields 14 and 15 of /proc/PID/stat).
cpu_sampler() {
    local out=$1 p line live t f
    shift
    while :; do
        live=0
        t=${EPOCHREALTIME/./}
        for p in "$@"; do
            if { read -r line <"/proc/$p/stat"; } 2>/dev/null; then
                read -r -a f <<<"${line##*) }" # f[0] is field 3 (the state)
                echo "${t}000 $p $((f[11] + f[12]))" >>"$out"
                live=1
            fi
        done
        [ "$live" = 1 ] || break
        sleep 0.1
    done
}

wait_socket() {
    local i
    for ((i = 0; i < 400; i++)); do
        [ -S "$1" ] && return 0
        sleep 0.05
    done
    echo "run-tree.sh: nothing listens on $1" >&2
    return 1
}

# one_run KIND RANKS ROUND: runs one configuration, leaves its files in $dir/KIND-RANKS-ROUND.
# KIND: single, tree (real aggregators) or emu (a root and emulated aggregators).
one_run() {
    local kind=$1 ranks=$2 round=$3 d i n eps=() cpids=() gen rc=0 secs=$seconds extra=()
    d=$dir/$kind-$ranks-$round
    mkdir -p "$d"
    local job=tree-$kind-$ranks-$round
    # The root's job ends on the last bye; should byes be lost on the way (an aggregator that
    # exits before delivering them), after MW_TREE_SILENCE_MS of silence.
    "${root_prefix[@]}" "$collector" --listen "ipc://$d/root" --exit-after-job --quiet \
        --silence-timeout-ms "${MW_TREE_SILENCE_MS:-5000}" "${root_args[@]}" \
        --stats-json "$d/root-stats.json" --summary-json "$d/root-summary.json" \
        </dev/null >/dev/null 2>"$d/root.err" &
    cpids+=($!)
    pids+=($!)
    echo "root $!" >"$d/pids"
    wait_socket "$d/root" || return 1
    if [ "$kind" = tree ]; then
        for ((i = 0; i < aggs; i++)); do
            # the generator's blocks: ranks * i / aggs .. ranks * (i + 1) / aggs
            n=$((ranks * (i + 1) / aggs - ranks * i / aggs))
            "$collector" --listen "ipc://$d/agg$i" --upstream "ipc://$d/root" \
                --aggregator-id "$i" --expect-ranks "$n" --exit-after-job --quiet \
                --silence-timeout-ms 60000 --stats-json "$d/agg$i-stats.json" "${agg_args[@]}" \
                </dev/null >/dev/null 2>"$d/agg$i.err" &
            cpids+=($!)
            pids+=($!)
            echo "agg$i $!" >>"$d/pids"
            eps+=(--connect "ipc://$d/agg$i")
        done
        for ((i = 0; i < aggs; i++)); do wait_socket "$d/agg$i" || return 1; done
    else
        eps=(--connect "ipc://$d/root")
    fi
    if [ "$kind" = emu ]; then
        secs=$emu_seconds
        extra=(--aggregators "$emu_aggs")
    fi
    cpu_sampler "$d/cpu" "${cpids[@]}" &
    local sampler=$!
    "$loadgen" "${eps[@]}" --ranks "$ranks" --rate "$rate" --functions "$functions" \
        --seconds "$secs" --variants "$variants" --job "$job" "${extra[@]}" \
        --totals-json "$d/totals.json" 2>"$d/loadgen.err" &
    gen=$!
    pids+=("$gen")
    echo "gen $gen" >>"$d/pids"
    wait "$gen" || rc=1
    for i in "${cpids[@]}"; do wait "$i" || rc=1; done
    wait "$sampler"
    [ "$rc" = 0 ] || echo "run-tree.sh: $kind $ranks round $round: a process failed ($d)" >&2
    return 0
}

# figures DIR...: the medians of the rounds of one configuration, one line.
figures() {
    "$python" - "$rate" "$@" <<'PY'
import json, os, statistics, sys
rate = float(sys.argv[1])
tck = os.sysconf("SC_CLK_TCK")
rows = []
for d in sys.argv[2:]:
    load = lambda n: json.load(open(f"{d}/{n}")) if os.path.exists(f"{d}/{n}") else None
    tot, st, sm = load("totals.json"), load("root-stats.json"), load("root-summary.json")
    if not tot or not st or not sm:
        rows.append(None)
        continue
    run = tot["run"]
    job_s = tot["windows"] * tot["window_ns"] / 1e9
    names = dict(l.split() for l in open(f"{d}/pids"))
    series = {}
    for l in open(f"{d}/cpu"):
        t, p, c = l.split()
        series.setdefault(p, []).append((int(t), int(c)))
    # CPU from the job's first window to the process's exit (the byes, the summary and the
    # report included), as % of one core over the job's length; cpu_steady: over the job's
    # windows only (the last sample before the first window to the last one before the end of
    # the last window), the rate a process sustains while windows stream.
    def cpu(name):
        s = series.get(names[name], [])
        before = [c for t, c in s if t <= run["first_window_ns"]]
        c0 = before[-1] if before else (s[0][1] if s else 0)
        return 100.0 * ((s[-1][1] if s else 0) - c0) / tck / job_s
    def cpu_steady(name):
        s = series.get(names[name], [])
        t_end = run["first_window_ns"] + tot["windows"] * tot["window_ns"]
        span = [(t, c) for t, c in s if run["first_window_ns"] <= t <= t_end]
        before = [(t, c) for t, c in s if t <= run["first_window_ns"]]
        if before:
            span.insert(0, before[-1])
        if len(span) < 2 or span[-1][0] <= span[0][0]:
            return float("nan")
        return 100.0 * (span[-1][1] - span[0][1]) / tck / ((span[-1][0] - span[0][0]) / 1e9)
    aggs = sorted((n for n in names if n.startswith("agg")), key=lambda n: int(n[3:]))
    up = sum(load(f"{a}-stats.json")["upstream"]["bytes_sent"] for a in aggs) if aggs else 0
    rows.append({
        "root": cpu("root"), "root_steady": cpu_steady("root"), "aggs": [cpu(a) for a in aggs],
        "complete": st["windows"] - st["partial_windows"], "partial": st["partial_windows"],
        "late": st["late"], "p99": st["close_latency_ms_p99"] / (tot["window_ns"] / 1e6),
        "max": st["close_latency_ms_max"] / (tot["window_ns"] / 1e6),
        "calls": sum(f["count"] for f in tot["functions"].values()),
        "gen_late": run["late_windows"], "wait99": st.get("close_wait_ms_p99", 0),
        "got": sum(f["count"] for f in sm["functions"].values()), "missed": sm["missed"]["calls"],
        "exact": sm["functions"] == tot["functions"],
        "acct": sum(f["count"] for f in sm["functions"].values()) + sm["missed"]["calls"]
                == sum(f["count"] for f in tot["functions"].values()),
        "in_mbs": run["sample_bytes"] / job_s / 1e6, "up_mbs": up / job_s / 1e6,
        "rate": run["achieved_rate"], "gen_us": 1e6 * run["cpu_samples_s"] / tot["samples"],
        "us_smp": max([cpu("root")] + [cpu(a) * len(aggs) for a in aggs]) / 100 * job_s
                  / tot["samples"] * 1e6,
        "ranks": tot["ranks"]})
ok = [r for r in rows if r]
if not ok:
    print("no complete round"); sys.exit(1)
med = lambda k: statistics.median(r[k] for r in ok)
aggs = len(ok[0]["aggs"])
aggcpu = " ".join(f"{statistics.median(r['aggs'][i] for r in ok):.0f}" for i in range(aggs))
keeps = (all(r["partial"] == 0 and r["late"] == 0 for r in ok) and med("p99") <= 2
         and med("rate") >= 0.95 * rate)
print(f"{ok[0]['ranks']:>7} {med('root'):6.0f} {aggcpu or '-':>32} "
      f"{med('complete'):5.0f}/{med('partial'):<4.0f} {med('late'):6.0f} {med('p99'):7.2f} "
      f"{med('max'):7.2f} "
      f"{'yes' if all(r['exact'] for r in ok) and len(ok) == len(rows) else 'NO':>5} "
      f"{'yes' if all(r['acct'] for r in ok) and len(ok) == len(rows) else 'NO':>4} "
      f"{med('in_mbs'):8.1f} {med('up_mbs'):7.1f} {med('rate'):6.2f} {med('gen_us'):6.2f} "
      f"{med('us_smp'):6.2f} {'yes' if keeps else 'no':>5} ({len(ok)}/{len(rows)} rounds)")
if os.environ.get("MW_FIGURES_GOALS"):
    # Issue 18's goals for the root of the tree, round by round.
    for i, r in enumerate(ok):
        print(f"  round {i}: root cpu {r['root_steady']:.1f} % of a core while the windows "
              f"streamed (goal < 50), {r['root']:.1f} % counting its end of job; windows "
              f"{r['complete'] + r['partial']} closed, {r['complete']} with all ranks; close "
              f"latency p99 {r['p99']:.2f} max {r['max']:.2f} windows (goal p99 <= 2); totals "
              f"{'exact' if r['exact'] else 'NOT exact'}: {r['calls']} calls sent, {r['got']} "
              f"in the summary + {r['missed']} missed; the generator sent {r['gen_late']} "
              f"windows more than a window late; the root's close wait p99 {r['wait99']:.1f} ms "
              f"(last partial merged -> close)")
sys.exit(0 if keeps else 3)
PY
}

echo "run-tree.sh: $rate windows/s, $seconds s, $functions functions, --variants $variants, " \
    "$rounds rounds (medians), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
header() {
    printf '%7s %6s %32s %10s %6s %7s %7s %5s %4s %8s %7s %6s %6s %6s %5s\n' ranks "root%" \
        "aggregators cpu% (each)" "win ok/par" late "p99 win" "max win" exact acct "in MB/s" \
        "up MB/s" "gen/s" "gen us" "us/smp" keeps
}
header
kept=none
kept_runs=()
case " $parts " in *" a "*) ;; *) sizes= ;; esac
[ -n "$sizes" ] && echo "(a) one collector"
for ranks in $sizes; do
    runs=()
    for ((r = 0; r < rounds; r++)); do
        one_run single "$ranks" "$r"
        runs+=("$dir/single-$ranks-$r")
    done
    if figures "${runs[@]}"; then
        kept=$ranks
        kept_runs=("${runs[@]}")
    else
        echo "  (one collector does not keep up at $ranks ranks)"
        [ "${MW_TREE_STOP:-0}" = 1 ] && break
    fi
done
[ -n "$sizes" ] && echo "  largest size one collector kept up with: $kept"
case " $parts " in
*" b "*)
    echo "(b) $tree_ranks ranks through $aggs aggregators and a root"
    runs=()
    for ((r = 0; r < rounds; r++)); do
        one_run tree "$tree_ranks" "$r"
        runs+=("$dir/tree-$tree_ranks-$r")
    done
    figures "${runs[@]}"
    ;;
esac
case " $parts " in
*" c "*)
    echo "(c) $emu_ranks ranks through $emu_aggs emulated aggregators (mpiwatch-loadgen" \
        "--aggregators) into a root alone, $emu_seconds s"
    runs=()
    for ((r = 0; r < rounds; r++)); do
        one_run emu "$emu_ranks" "$r"
        runs+=("$dir/emu-$emu_ranks-$r")
    done
    MW_FIGURES_GOALS=1 figures "${runs[@]}"
    grep -h "emulated" "$dir/emu-$emu_ranks-"*/loadgen.err | sed 's/^/  /'
    echo "side by side: the root of the tree at $emu_ranks ranks, one collector at the largest" \
        "size it kept up with ($kept)"
    header
    [ "${#kept_runs[@]}" -gt 0 ] && figures "${kept_runs[@]}"
    figures "${runs[@]}"
    ;;
esac
exit 0
