#!/usr/bin/env bash
# run-dormant.sh: what the library's dormant mode costs per MPI call, beside no library and
# full recording, measured side by side (docs/overhead.md "Dormant mode").
#
# DESIGN: the same program as run-overhead.sh (bench/overhead.c, its Iprobe test: the cost of
# one MPI_Test of MPI_REQUEST_NULL, a timed wrapper around an MPI call that does almost
# nothing, so that the library's own cost shows; one MPI_Iprobe with nothing pending; one
# MPI_Comm_rank, a counted query; each the best of several repetitions) in three modes, in
# turn, each mode first in every third round so that a drift of the machine's load hits all
# alike (STYLE 19):
#   none     no library preloaded;
#   dormant  the library with MPIWATCH_MODE=dormant and an endpoint where no collector
#            listens, so it stays dormant for the whole run (counts and bytes only);
#   full     the library with a collector listening: full recording (the default settings).
# With --base LIB (or MW_BENCH_BASE_LIB) a fourth mode, base, runs LIB like full: an older
# build of the library, for the before/after comparison of full mode. It prints every run's
# figures, then the medians per mode and their differences to none. It is a benchmark: it
# exits 0 whatever the figures are, and fails only when a run fails.
#
# usage: run-dormant.sh [--mpirun PATH] [--base LIB] BUILD_DIR
# knobs (environment): MW_BENCH_ROUNDS (7), MW_BENCH_NP (2), MW_BENCH_IPROBE_CALLS (2000000),
#   MW_BENCH_IPROBE_REPS (5), MW_BENCH_KEEP=1 (keep the temporary directory).
set -u
argv=("$@")
# shellcheck source=../tests/lib/common.sh
. "$(dirname "$0")/../tests/lib/common.sh"

usage() {
    sed -n '/^# usage:/,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
}

build='' mpirun=${MPIRUN:-mpirun} base=${MW_BENCH_BASE_LIB:-}
while [ $# -gt 0 ]; do
    case $1 in
        --mpirun) mpirun=$2; shift 2 ;;
        --base) base=$2; shift 2 ;;
        -h|--help) usage ;;
        -*) echo "run-dormant.sh: unknown option $1" >&2; usage ;;
        *) [ -z "$build" ] || usage; build=$1; shift ;;
    esac
done
[ -n "$build" ] || usage
bench=$build/bench/mw-bench-overhead
lib=$build/pmpi-shim/libmpiwatch.so
collector=$build/collector/mpiwatch-collector
for f in "$bench" "$collector"; do
    [ -x "$f" ] || { echo "run-dormant.sh: not built: $f" >&2; exit 1; }
done
[ -r "$lib" ] || { echo "run-dormant.sh: not built: $lib" >&2; exit 1; }
lib=$(readlink -f "$lib")
if [ -n "$base" ]; then
    [ -r "$base" ] || { echo "run-dormant.sh: no library at $base" >&2; exit 1; }
    base=$(readlink -f "$base")
fi
command -v "$mpirun" >/dev/null || { echo "run-dormant.sh: no mpirun ($mpirun)" >&2; exit 1; }

rounds=${MW_BENCH_ROUNDS:-7}
np=${MW_BENCH_NP:-2}
args=(--tests iprobe --iprobe-calls "${MW_BENCH_IPROBE_CALLS:-2000000}"
    --iprobe-reps "${MW_BENCH_IPROBE_REPS:-5}" --warmup-s 0.2)
MW_KEEP_TMP=${MW_BENCH_KEEP:-0}
MW_COLLECTOR=$collector
mw_init bench-dormant
mw_mpi_env
unset MPIWATCH_VERBOSE MPIWATCH_MODE MPIWATCH_DORMANT_AFTER
: >"$MW_T/results"
run_no=0

# run_one MODE: one job; appends "MODE NAME VALUE" lines to $MW_T/results.
run_one() {
    local mode=$1 rc
    run_no=$((run_no + 1))
    local out=$MW_T/run$run_no.out err=$MW_T/run$run_no.err
    local cmd=("$mpirun" --oversubscribe -np "$np")
    case $mode in
        dormant)
            # nobody listens at this endpoint: the library never leaves dormancy
            cmd+=(-x LD_PRELOAD="$lib" -x MPIWATCH_COLLECTOR="ipc://$MW_T/nobody"
                -x MPIWATCH_MODE=dormant) ;;
        full | base)
            mw_start_collector --exit-after-job --quiet
            local l=$lib
            [ "$mode" = base ] && l=$base
            cmd+=(-x LD_PRELOAD="$l" -x MPIWATCH_COLLECTOR="$MW_EP") ;;
    esac
    cmd+=("$bench" "${args[@]}")
    [ -n "${shown[$mode]-}" ] || { shown[$mode]=1; echo "  [$mode] ${cmd[*]}"; }
    "${cmd[@]}" </dev/null >"$out" 2>"$err"
    rc=$?
    [ "$mode" = full ] || [ "$mode" = base ] && mw_stop_collector 5
    if [ "$rc" != 0 ]; then
        echo "run-dormant.sh: run $run_no ($mode) exited with status $rc:" >&2
        cat "$out" "$err" >&2
        exit 1
    fi
    sed -n "s/^result \([a-z_]*\) \([-0-9.]*\)\$/$mode \1 \2/p" "$out" >>"$MW_T/results"
    printf '  run %2d %-8s %s\n' "$run_no" "$mode" \
        "$(sed -n 's/^result \([a-z_]*\) \(.*\)/\1=\2/p' "$out" | tr '\n' ' ')"
}

modes=(none dormant full)
[ -n "$base" ] && modes+=(base)
declare -A shown
echo "mpiwatch dormant-mode benchmark"
echo "command:  $0${argv[*]+ ${argv[*]}}"
echo "machine:  $(hostname), nproc $(nproc), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "library:  $lib${base:+ (base: $base)}"
echo "rounds:   $rounds, $np ranks, modes ${modes[*]} (each first in turn)"
for ((r = 0; r < rounds; r++)); do
    n=${#modes[@]}
    for ((i = 0; i < n; i++)); do
        run_one "${modes[$(((r + i) % n))]}"
    done
done

# median MODE NAME
median() {
    awk -v m="$1" -v k="$2" '$1 == m && $2 == k { print $3 }' "$MW_T/results" | sort -g |
        awk '{ v[NR] = $1 } END {
            if (NR == 0) { print "nan"; exit }
            if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
echo
printf '%-32s' "medians over $rounds runs (ns)"
for m in "${modes[@]}"; do printf ' %10s' "$m"; done
for m in "${modes[@]:1}"; do printf ' %12s' "$m-none"; done
echo
for k in test_null_ns iprobe_ns comm_rank_ns; do
    case $k in
        test_null_ns) label="MPI_Test(MPI_REQUEST_NULL)" ;;
        iprobe_ns) label="MPI_Iprobe, nothing pending" ;;
        *) label="MPI_Comm_rank (counted query)" ;;
    esac
    printf '%-32s' "$label"
    none=$(median none "$k")
    for m in "${modes[@]}"; do printf ' %10.2f' "$(median "$m" "$k")"; done
    for m in "${modes[@]:1}"; do
        awk -v a="$none" -v b="$(median "$m" "$k")" 'BEGIN { printf " %+12.2f", b - a }'
    done
    echo
done
# The best run of each mode: on a loaded machine the median moves with the load, the best run
# much less (each run's figure is already the best of its repetitions).
printf '%-32s' "best of $rounds runs (ns)"
for m in "${modes[@]}"; do printf ' %10s' "$m"; done
for m in "${modes[@]:1}"; do printf ' %12s' "$m-none"; done
echo
for k in test_null_ns iprobe_ns comm_rank_ns; do
    printf '%-32s' "$k"
    best() { awk -v m="$1" -v k="$2" '$1 == m && $2 == k { if (!s || $3 < x) x = $3; s = 1 }
        END { print s ? x : "nan" }' "$MW_T/results"; }
    none=$(best none "$k")
    for m in "${modes[@]}"; do printf ' %10.2f' "$(best "$m" "$k")"; done
    for m in "${modes[@]:1}"; do
        awk -v a="$none" -v b="$(best "$m" "$k")" 'BEGIN { printf " %+12.2f", b - a }'
    done
    echo
done
echo "target: dormant - none <= 3 ns per call; full no slower than base beyond noise"
