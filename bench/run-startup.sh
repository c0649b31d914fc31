#!/bin/bash
# run-startup.sh [--mpirun MPIRUN] [--runs N] BUILD: what the preloaded library costs a rank's
# start (docs/install.md, "What the library loads"), side by side without and with
# LD_PRELOAD=libmpiwatch.so.0, and preloaded but switched off (MPIWATCH_DISABLE=1: the cost of
# loading alone), medians of N runs (default 15) interleaved, one machine, one run:
#   libraries     distinct shared objects mapped after MPI_Init (the MPI's own plugins included)
#   loader_ms     the dynamic loader's start-up (LD_DEBUG=statistics, cycles at the CPU's
#                 nominal rate from /proc/cpuinfo)
#   init_ms       MPI_Init (where the library sets up its topology, sockets and thread)
#   finalize_ms   MPI_Finalize (where it flushes and stops)
#   mpirun_ms     wall time of `mpirun -n 1 mw-bench-startup`, the whole job
# and the libraries the library itself needs (ldd). No collector runs: the library's
# MPIWATCH_COLLECTOR is an ipc:// path nobody listens on, so nothing waits for one.
set -euo pipefail
mpirun=mpirun
runs=15
while [ $# -gt 1 ]; do
    case $1 in
        --mpirun) mpirun=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        *) break ;;
    esac
done
build=${1:?usage: run-startup.sh [--mpirun MPIRUN] [--runs N] BUILD}
bench=$build/bench/mw-bench-startup
lib=$build/pmpi-shim/libmpiwatch.so.0
[ -x "$bench" ] || { echo "run-startup.sh: no $bench (build the tree first)" >&2; exit 2; }
[ -e "$lib" ] || { echo "run-startup.sh: no $lib" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_MCA_orte_tmpdir_base=$tmp OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
unset LD_PRELOAD MPIWATCH_DISABLE

# The CPU's nominal MHz (the loader counts TSC cycles, which tick at that rate).
mhz=$(awk -F: '/^cpu MHz/ {print $2; exit}' /proc/cpuinfo | tr -d ' ')
[ -n "$mhz" ] || mhz=1000

# one MODE OUT: one rank, its line and the loader's statistics appended to OUT.
one() {
    local mode=$1 out=$2 t0 t1 line cycles
    local -a env=(-x "MPIWATCH_COLLECTOR=ipc://$tmp/nobody")
    [ "$mode" = without ] || env+=(-x "LD_PRELOAD=$lib")
    [ "$mode" != disabled ] || env+=(-x MPIWATCH_DISABLE=1)
    t0=$(date +%s%N)
    line=$("$mpirun" -np 1 "${env[@]}" -x LD_DEBUG=statistics -x "LD_DEBUG_OUTPUT=$tmp/ld" \
        "$bench")
    t1=$(date +%s%N)
    # The rank's loader statistics (-x gives LD_DEBUG to the rank only, not to mpirun).
    cycles=$(cat "$tmp"/ld.* | grep 'total startup time in dynamic loader' |
        grep -o '[0-9]\+ cycles' | grep -o '[0-9]\+' | head -n 1 || echo 0)
    rm -f "$tmp"/ld.*
    echo "$line loader_ms=$(awk -v c="$cycles" -v m="$mhz" 'BEGIN {printf "%.3f", c / m / 1000}') mpirun_ms=$(((t1 - t0) / 1000000))" >>"$out"
}

: >"$tmp/without"
: >"$tmp/disabled"
: >"$tmp/with"
for ((i = 0; i < runs; i++)); do
    one without "$tmp/without"
    one disabled "$tmp/disabled"
    one with "$tmp/with"
done

# median FILE KEY
median() {
    grep -o "$2=[0-9.]\+" "$1" | cut -d= -f2 | sort -g |
        awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

echo "mpiwatch start-up cost: mpirun -np 1 $(basename "$bench"), medians of $runs runs each"
printf '%-14s %10s %10s %10s %10s\n' "" "without" "disabled" "with" "extra"
for k in libraries loader_ms init_ms finalize_ms mpirun_ms; do
    a=$(median "$tmp/without" "$k")
    d=$(median "$tmp/disabled" "$k")
    b=$(median "$tmp/with" "$k")
    printf '%-14s %10s %10s %10s %10s\n' "$k" "$a" "$d" "$b" \
        "$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%+.3g", b - a}')"
done
echo
echo "libmpiwatch's own NEEDED: $(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
echo "ldd $(basename "$(readlink -f "$lib")"): $(ldd "$lib" | grep -c '=>') libraries"
