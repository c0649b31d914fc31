#!/bin/bash
# run-curve.sh BUILD_DIR [SECONDS] [RUNS]: what CURVE costs the collector (docs/security.md).
# Not a test: it prints figures. Each run starts a collector on tcp://127.0.0.1 (with CURVE, or
# without), runs tests/programs/steer_cb on 4 ranks for SECONDS (default 8) with 2 ms windows
# (about 2,000 small samples per second), and prints the collector's CPU seconds (user + system,
# both threads, from /proc/PID/stat after the job) and the samples it accepted. Runs alternate
# plain / CURVE, RUNS pairs (default 3); the medians come last. Needs a built tree.
set -u
build=$(readlink -f "${1:?usage: run-curve.sh BUILD_DIR [SECONDS] [RUNS]}")
secs=${2:-8}
runs=${3:-3}
MW_COLLECTOR=$build/collector/mpiwatch-collector
. "$(dirname "${BASH_SOURCE[0]}")/../tests/lib/common.sh"
mw_init bench_curve
mw_mpi_env
cd "$MW_T" || exit 1
mw_curve_keys ranks "$build/tools/mpiwatch-keygen"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

one() {
    local mode=$1 port args=() keys=() job ut st
    port=$("$MW_PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    if [ "$mode" = curve ]; then
        args=(--curve-secret coll.key --curve-clients clients)
        keys=(-x MPIWATCH_CURVE_SERVER="$MW_T/coll.pub" -x MPIWATCH_CURVE_KEY="$MW_T/clients/ranks.key")
    fi
    mw_start_collector --quiet --listen "tcp://127.0.0.1:$port" --stats-json "$MW_T/stats.json" "${args[@]}"
    rm -f ready stop
    mpirun --oversubscribe -np 4 -x LD_PRELOAD="$build/pmpi-shim/libmpiwatch.so" \
        -x MPIWATCH_COLLECTOR="tcp://127.0.0.1:$port" -x MPIWATCH_WINDOW_MS=2 "${keys[@]}" \
        "$build/tests/programs/steer_cb" mpi "$MW_T" >/dev/null 2>&1 &
    job=$!
    while [ ! -e ready ]; do sleep 0.05; done
    sleep "$secs"
    touch stop
    wait "$job"
    sleep 1.5 # the last samples
    read -r ut st < <(awk '{print $14, $15}' "/proc/$MW_CPID/stat")
    mw_stop_collector
    "$MW_PYTHON" -c 'import json, sys; print(sys.argv[1], (int(sys.argv[2]) + int(sys.argv[3])) / 100, json.load(open(sys.argv[4]))["accepted"])' \
        "$mode" "$ut" "$st" "$MW_T/stats.json"
}
for ((i = 0; i < runs; i++)); do
    one plain
    one curve
done | tee runs.txt
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
"$MW_PYTHON" - runs.txt <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
for mode in ("plain", "curve"):
    cpu = statistics.median(float(r[1]) for r in rows if r[0] == mode)
    acc = statistics.median(int(r[2]) for r in rows if r[0] == mode)
    print(f"median {mode}: collector CPU {cpu:.2f} s for {acc} samples, {1e6 * cpu / acc:.1f} us per sample")
PY
