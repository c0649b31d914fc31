#!/usr/bin/env bash
# run-overhead.sh: measures what libmpiwatch costs an MPI program, with and without, in one run.
#
# DESIGN: the machines this runs on are shared and noisy, so absolute figures mean little and
# only ratios measured side by side do (STYLE 19). The driver runs bench/overhead.c in pairs,
# once without and once with the library preloaded (and a real collector listening on a
# private ipc endpoint, so the sender thread really encodes and sends), alternating which of
# the two goes first (ABBA) so that a drift of the machine's load hits both alike. Two jobs per
# run: 2 ranks (Iprobe cost, ping-pong) and 4 ranks (allreduce). It prints every run's
# figures, then the medians side by side with their difference or ratio and the target. A
# third mode runs the library with the per-call trace off (MPIWATCH_TRACE=off; "with" is the
# default, tracing on), so that tracing's own cost per timed call is printed beside the rest:
# MPI_Iprobe, a message to oneself (Irecv, Isend, two Waits), an Isend/Irecv+Wait ping-pong
# and Allreduce (docs/trace.md "Records and communicators", docs/overhead.md). It is
# a benchmark: it prints figures and exits 0 whatever they are; it fails only when a run
# fails. See docs/overhead.md.
#
# usage: run-overhead.sh [--mpirun PATH] BUILD_DIR
#        run-overhead.sh [--mpirun PATH] --bench PATH --lib PATH [--collector PATH|none]
# knobs (environment): MW_BENCH_PAIRS (5), MW_BENCH_NP (2), MW_BENCH_NP_ALLREDUCE (4),
#   MW_BENCH_IPROBE_CALLS (2000000), MW_BENCH_IPROBE_REPS (5), MW_BENCH_PINGPONG_ITERS (5000),
#   MW_BENCH_PINGPONG_REPS (11), MW_BENCH_ALLREDUCE_ITERS (2000), MW_BENCH_ALLREDUCE_REPS (11),
#   MW_BENCH_WARMUP_S (1), MW_BENCH_COLLECTOR=none (no collector: the library's samples are
#   dropped at once), MW_BENCH_KEEP=1 (keep the temporary directory), MPIWATCH_WINDOW_MS,
#   MW_BENCH_TRACE_OFF=0 (leave out the runs with MPIWATCH_TRACE=off), MW_BENCH_CALLSITES=0
#   (leave out the call sites' paired runs: MPIWATCH_CALLSITES=off beside =on, docs/callsites.md).
set -u
argv=("$@")
# The temporary directory, the Open MPI environment and the collector's start and stop are
# those of the tests; bench/ is only ever run from the source tree, beside tests/.
# shellcheck source=../tests/lib/common.sh
. "$(dirname "$0")/../tests/lib/common.sh"

usage() {
    sed -n '/^# usage:/,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
}

bench='' lib='' collector='' mpirun=${MPIRUN:-mpirun} build=''
while [ $# -gt 0 ]; do
    case $1 in
        --bench) bench=$2; shift 2 ;;
        --lib) lib=$2; shift 2 ;;
        --collector) collector=$2; shift 2 ;;
        --mpirun) mpirun=$2; shift 2 ;;
        -h|--help) usage ;;
        -*) echo "run-overhead.sh: unknown option $1" >&2; usage ;;
        *) [ -z "$build" ] || usage; build=$1; shift ;;
    esac
done
if [ -n "$build" ]; then
    bench=${bench:-$build/bench/mw-bench-overhead}
    lib=${lib:-$build/pmpi-shim/libmpiwatch.so}
    collector=${collector:-$build/collector/mpiwatch-collector}
fi
if [ -z "$bench" ] || [ -z "$lib" ]; then usage; fi
collector=${MW_BENCH_COLLECTOR:-$collector}
[ -x "$bench" ] || { echo "run-overhead.sh: no benchmark program at $bench" >&2; exit 1; }
[ -r "$lib" ] || { echo "run-overhead.sh: no library at $lib" >&2; exit 1; }
if [ "$collector" != none ] && [ ! -x "$collector" ]; then
    echo "run-overhead.sh: no collector at '$collector' (build mpiwatch-collector, or set" \
        "MW_BENCH_COLLECTOR=none to measure with nothing listening)" >&2
    exit 1
fi
lib=$(readlink -f "$lib")
command -v "$mpirun" >/dev/null || { echo "run-overhead.sh: no mpirun ($mpirun)" >&2; exit 1; }

pairs=${MW_BENCH_PAIRS:-5}
np=${MW_BENCH_NP:-2}
np_coll=${MW_BENCH_NP_ALLREDUCE:-4}
common=(--iprobe-calls "${MW_BENCH_IPROBE_CALLS:-2000000}" --iprobe-reps "${MW_BENCH_IPROBE_REPS:-5}"
    --pingpong-iters "${MW_BENCH_PINGPONG_ITERS:-5000}" --pingpong-reps "${MW_BENCH_PINGPONG_REPS:-11}"
    --allreduce-iters "${MW_BENCH_ALLREDUCE_ITERS:-2000}"
    --allreduce-reps "${MW_BENCH_ALLREDUCE_REPS:-11}" --warmup-s "${MW_BENCH_WARMUP_S:-1}")

# A private directory MW_T for Open MPI's session files, the collector's endpoint MW_EP and
# every run's output; the library's window is its default unless MPIWATCH_WINDOW_MS is set.
MW_KEEP_TMP=${MW_BENCH_KEEP:-0}
MW_COLLECTOR=$collector
mw_init bench
mw_mpi_env
unset MPIWATCH_VERBOSE
window_x=()
[ -n "${MPIWATCH_WINDOW_MS-}" ] && window_x=(-x MPIWATCH_WINDOW_MS)

: >"$MW_T/results"
run_no=0

# run_one MODE NP TESTS: one job; appends "MODE NP NAME VALUE" lines to $MW_T/results.
run_one() {
    local mode=$1 n=$2 tests=$3 rc accepted=-
    run_no=$((run_no + 1))
    local out=$MW_T/run$run_no.out err=$MW_T/run$run_no.err
    local cmd=("$mpirun" --oversubscribe -np "$n")
    if [ "$mode" = with ]; then
        if [ "$collector" != none ]; then
            mw_start_collector --exit-after-job --quiet --stats-json "$MW_T/stats$run_no.json"
        fi
        cmd+=(-x LD_PRELOAD="$lib" -x MPIWATCH_COLLECTOR="$MW_EP" -x MPIWATCH_TRACE=on
            "${window_x[@]}")
    elif [ "$mode" = off ]; then
        # the library with the trace off: what "with" costs without its records
        if [ "$collector" != none ]; then
            mw_start_collector --exit-after-job --quiet --stats-json "$MW_T/stats$run_no.json"
        fi
        cmd+=(-x LD_PRELOAD="$lib" -x MPIWATCH_COLLECTOR="$MW_EP" -x MPIWATCH_TRACE=off
            "${window_x[@]}")
    fi
    cmd+=("$bench" --tests "$tests" "${common[@]}")
    [ -n "${shown[$mode$n]-}" ] || { shown[$mode$n]=1; echo "  [$mode, $n ranks] ${cmd[*]}"; }
    "${cmd[@]}" </dev/null >"$out" 2>"$err"
    rc=$?
    if [ "$rc" != 0 ]; then
        echo "run-overhead.sh: run $run_no ($mode, $n ranks) exited with status $rc:" >&2
        cat "$out" "$err" >&2
        exit 1
    fi
    if [ "$mode" != without ] && [ -n "$MW_CPID" ]; then
        # --exit-after-job: the collector leaves once every rank said bye; a collector that
        # lost a bye would wait for its silence timeout, which a benchmark need not.
        mw_stop_collector 5
        accepted=$(sed -n 's/^[[:space:]]*"accepted":[[:space:]]*\([0-9]*\).*/\1/p' "$MW_T/stats$run_no.json" 2>/dev/null)
        echo "$mode $n accepted ${accepted:-0}" >>"$MW_T/results"
    fi
    sed -n "s/^result \([a-z_]*\) \([-0-9.]*\)\$/$mode $n \1 \2/p" "$out" >>"$MW_T/results"
    printf '  run %2d %-7s %d ranks: %s%s\n' "$run_no" "$mode" "$n" \
        "$(sed -n 's/^result \([a-z_]*\) \(.*\)/\1=\2/p' "$out" | grep -v _min | tr '\n' ' ')" \
        "$([ "$accepted" != - ] && echo "collector accepted=${accepted:-0}")"
}

declare -A shown
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "mpiwatch overhead benchmark"
echo "command:  $0${argv[*]+ ${argv[*]}}"
env | grep -E '^MW_BENCH_|^MPIWATCH_WINDOW_MS=' | sort | sed 's/^/          env /'
echo "machine:  $(hostname), nproc $(nproc), $cpu, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "          $(uname -sr), $("$mpirun" --version 2>/dev/null | head -1)"
echo "library:  $lib"
echo "collector: $collector"
echo "pairs:    $pairs (order alternates), ${np} ranks for Iprobe / ping-pong, ${np_coll} for allreduce"
echo "runs:"
start=$(date +%s)
for ((p = 1; p <= pairs; p++)); do
    if [ "${MW_BENCH_TRACE_OFF:-1}" = 0 ]; then
        if ((p % 2)); then order=(without with); else order=(with without); fi
    else
        # the three modes in turn, each one first in every third pair
        case $((p % 3)) in
            1) order=(without off with) ;;
            2) order=(off with without) ;;
            0) order=(with without off) ;;
        esac
    fi
    for mode in "${order[@]}"; do
        run_one "$mode" "$np" iprobe,pingpong,selfmsg,isendrecv
        run_one "$mode" "$np_coll" allreduce
    done
done
echo "elapsed:  $(($(date +%s) - start)) s"

# median MODE NP NAME
median() {
    awk -v m="$1" -v n="$2" -v k="$3" '$1 == m && $2 == n && $3 == k { print $4 }' "$MW_T/results" |
        sort -g | awk '{ v[NR] = $1 } END {
            if (NR == 0) { print "nan"; exit }
            if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
maximum() {
    awk -v m="$1" -v k="$2" '$1 == m && $3 == k { if (!s || $4 > x) x = $4; s = 1 }
        END { print s ? x : "nan" }' "$MW_T/results"
}

# row LABEL WITHOUT WITH HOW TARGET DECIMALS: HOW is "diff" (with - without) or "ratio".
row() {
    awk -v l="$1" -v a="$2" -v b="$3" -v how="$4" -v t="$5" -v p="${6:-1}" 'BEGIN {
        if (a == "nan" || b == "nan") { printf "%-36s %10s %10s %12s\n", l, a, b, "n/a"; exit }
        if (how == "diff") { d = b - a; c = sprintf("%+.*f", p, d); ok = d <= t; tt = sprintf("<= %g", t) }
        else { d = a > 0 ? b / a : 0; c = sprintf("%.3fx", d); ok = d <= t; tt = sprintf("<= %.2fx", t) }
        if (t == "") { tt = ""; v = "" } else v = ok ? "ok" : "ABOVE TARGET"
        printf "%-36s %10.*f %10.*f %12s  %-9s %s\n", l, p, a, p, b, c, tt, v }'
}

echo
printf '%-36s %10s %10s %12s  %-9s %s\n' "medians over $pairs pairs" without with difference \
    target verdict
row "MPI_Iprobe, nothing pending (ns)" "$(median without "$np" iprobe_ns)" \
    "$(median with "$np" iprobe_ns)" diff 25
row "MPI_Comm_rank, counted (ns)" "$(median without "$np" comm_rank_ns)" \
    "$(median with "$np" comm_rank_ns)" diff ""
row "ping-pong 0 B, half RTT (us)" "$(median without "$np" pingpong_us)" \
    "$(median with "$np" pingpong_us)" ratio 1.15 3
row "allreduce 8 B, $np_coll ranks (us)" "$(median without "$np_coll" allreduce_us)" \
    "$(median with "$np_coll" allreduce_us)" ratio 1.10 3
row "RSS after MPI_Init, $np ranks (kB)" "$(median without "$np" rss_init_kb)" \
    "$(median with "$np" rss_init_kb)" diff "" 0
row "RSS after warm-up, $np ranks (kB)" "$(median without "$np" rss_warm_kb)" \
    "$(median with "$np" rss_warm_kb)" diff "" 0
row "RSS growth after warm-up, max (kB)" "$(maximum without rss_growth_kb)" \
    "$(maximum with rss_growth_kb)" diff 0 0
# row3 LABEL NONE OFF ON SCALE: tracing's cost per timed call: differences times SCALE (1 for
# figures in ns per call; 1000 / calls on the critical path for figures in us).
row3() {
    awk -v l="$1" -v a="$2" -v b="$3" -v c="$4" -v k="$5" 'BEGIN {
        if (a == "nan" || b == "nan" || c == "nan") { printf "%-40s %9s %9s %9s\n", l, a, b, c; exit }
        s = k
        lib = (b - a) * s; tr = (c - b) * s; r = b > 0 ? c / b : 0
        printf "%-40s %9.3f %9.3f %9.3f %+10.1f %+10.1f %8.3fx  %s\n", l, a, b, c, lib, tr, r,
            tr <= 8 ? "ok" : "ABOVE TARGET" }'
}
if [ "${MW_BENCH_TRACE_OFF:-1}" != 0 ]; then
    echo
    echo "tracing: medians over $pairs runs each; none = no mpiwatch, off = MPIWATCH_TRACE=off," \
        "on = MPIWATCH_TRACE=on (the default)"
    printf '%-40s %9s %9s %9s %10s %10s %9s  %s\n' "" none off on "off-none" "on-off" "on/off" \
        "on-off per timed call <= 8 ns"
    printf '%-40s %9s %9s %9s %10s %10s\n' "" "" "" "" "ns/call" "ns/call"
    row3 "MPI_Iprobe, nothing pending (ns/call)" "$(median without "$np" iprobe_ns)" \
        "$(median off "$np" iprobe_ns)" "$(median with "$np" iprobe_ns)" 1
    row3 "Irecv+Isend+2 Wait to self (ns/call)" "$(median without "$np" selfmsg_ns)" \
        "$(median off "$np" selfmsg_ns)" "$(median with "$np" selfmsg_ns)" 1
    row3 "Isend/Irecv+Wait ping-pong, half RTT (us)" "$(median without "$np" isendrecv_us)" \
        "$(median off "$np" isendrecv_us)" "$(median with "$np" isendrecv_us)" 250
    row3 "Allreduce 8 B, $np_coll ranks (us)" "$(median without "$np_coll" allreduce_us)" \
        "$(median off "$np_coll" allreduce_us)" "$(median with "$np_coll" allreduce_us)" 1000
    echo "(per timed call: ns figures as they are; the ping-pong's half round trip holds 4 timed" \
        "calls of each rank on its critical path, an allreduce 1)"
fi
# Tracing's cost once more, measured so that the machine's load hits both sides alike: one
# single-rank job with MPIWATCH_TRACE=off and one with it on, started together, MW_BENCH_PAIRS
# times; the medians of the paired differences (on - off) per timed call.
paired_once() {
    local i=$1 mode pids=()
    for mode in off on; do
        "$mpirun" --oversubscribe -np 1 -x LD_PRELOAD="$lib" -x MPIWATCH_COLLECTOR="tcp://127.0.0.1:1" \
            -x MPIWATCH_TRACE="$mode" "${window_x[@]}" "$bench" --tests iprobe,selfmsg "${common[@]}" \
            </dev/null >"$MW_T/paired.$mode.$i" 2>&1 &
        pids+=($!)
    done
    wait "${pids[@]}"
}
if [ "${MW_BENCH_TRACE_OFF:-1}" != 0 ]; then
    for ((p = 1; p <= pairs; p++)); do
        paired_once "$p"
        for k in iprobe_ns selfmsg_ns; do
            a=$(sed -n "s/^result $k \([-0-9.]*\)\$/\1/p" "$MW_T/paired.off.$p")
            b=$(sed -n "s/^result $k \([-0-9.]*\)\$/\1/p" "$MW_T/paired.on.$p")
            [ -n "$a" ] && [ -n "$b" ] && echo "paired 1 $k $(awk -v a="$a" -v b="$b" 'BEGIN { print b - a }')" >>"$MW_T/results"
            [ -n "$a" ] && echo "pairedoff 1 $k $a" >>"$MW_T/results"
        done
    done
    echo "tracing, paired: off and on started together, 1 rank each, $pairs times; median of" \
        "(on - off) per timed call (goal <= 8 ns), beside the median off figure:"
    printf '  %-40s %+8.1f ns/call   (off: %.1f ns/call)\n' "MPI_Iprobe, nothing pending" \
        "$(median paired 1 iprobe_ns)" "$(median pairedoff 1 iprobe_ns)"
    printf '  %-40s %+8.1f ns/call   (off: %.1f ns/call)\n' "Irecv+Isend+2 Wait to self" \
        "$(median paired 1 selfmsg_ns)" "$(median pairedoff 1 selfmsg_ns)"
fi
# Call sites' cost (docs/callsites.md), measured the same way: MPIWATCH_CALLSITES=off and =on
# started together (the trace off in both, so that only the call sites differ).
paired_sites_once() {
    local i=$1 mode pids=()
    for mode in off on; do
        "$mpirun" --oversubscribe -np 1 -x LD_PRELOAD="$lib" -x MPIWATCH_COLLECTOR="tcp://127.0.0.1:1" \
            -x MPIWATCH_TRACE=off -x MPIWATCH_CALLSITES="$mode" "${window_x[@]}" "$bench" \
            --tests iprobe,selfmsg "${common[@]}" </dev/null >"$MW_T/sites.$mode.$i" 2>&1 &
        pids+=($!)
    done
    wait "${pids[@]}"
}
if [ "${MW_BENCH_CALLSITES:-1}" != 0 ]; then
    for ((p = 1; p <= pairs; p++)); do
        paired_sites_once "$p"
        for k in iprobe_ns selfmsg_ns; do
            a=$(sed -n "s/^result $k \([-0-9.]*\)\$/\1/p" "$MW_T/sites.off.$p")
            b=$(sed -n "s/^result $k \([-0-9.]*\)\$/\1/p" "$MW_T/sites.on.$p")
            [ -n "$a" ] && [ -n "$b" ] && echo "sites 1 $k $(awk -v a="$a" -v b="$b" 'BEGIN { print b - a }')" >>"$MW_T/results"
            [ -n "$a" ] && echo "sitesoff 1 $k $a" >>"$MW_T/results"
        done
    done
    echo "call sites, paired: MPIWATCH_CALLSITES=off and =on (trace off) started together, 1 rank" \
        "each, $pairs times; median of (on - off) per timed call (goal <= 3 ns):"
    printf '  %-40s %+8.1f ns/call   (off: %.1f ns/call)\n' "MPI_Iprobe, nothing pending" \
        "$(median sites 1 iprobe_ns)" "$(median sitesoff 1 iprobe_ns)"
    printf '  %-40s %+8.1f ns/call   (off: %.1f ns/call)\n' "Irecv+Isend+2 Wait to self" \
        "$(median sites 1 selfmsg_ns)" "$(median sitesoff 1 selfmsg_ns)"
fi
if [ "$collector" != none ]; then
    echo "collector: median messages accepted per run: $(median with "$np" accepted) ($np ranks)," \
        "$(median with "$np_coll" accepted) ($np_coll ranks)"
else
    echo "collector: none (MW_BENCH_COLLECTOR=none): every sample was dropped at the socket"
fi
echo "(Iprobe and Comm_rank: best of ${MW_BENCH_IPROBE_REPS:-5} loops of" \
    "${MW_BENCH_IPROBE_CALLS:-2000000} calls per run; latencies: median of the repetitions;" \
    "RSS growth: end minus after warm-up, worst rank and worst run)"
