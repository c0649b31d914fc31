#!/bin/bash
# run-root-cpu.sh BUILD [VAR=VALUE...]: the CPU of a root collector fed by 100,000 emulated
# ranks through 8 emulated aggregators (mpiwatch-loadgen --aggregators, docs/loadgen.md) at 10
# windows/s for 30 s, over the job's windows 2 s to 28 s (no start, no end of job): one line,
# "cpu P% windows N partial M p99ms L". The VAR=VALUE arguments are given to the root's
# environment only (e.g. GLIBC_TUNABLES=... to compare malloc settings on one build); run it
# alternately with and without them, or with two builds, and compare the medians
# (docs/scale.md, "Measured at 100,000 ranks"). MW_ROOT_RANKS, MW_ROOT_AGGS change the size.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: run-root-cpu.sh BUILD [VAR=VALUE...]" >&2; exit 2; }
build=$(cd "$1" && pwd)
shift
ranks=${MW_ROOT_RANKS:-100000}
aggs=${MW_ROOT_AGGS:-8}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
env "$@" "$build/collector/mpiwatch-collector" --listen "ipc://$d/root" --exit-after-job --quiet \
    --stats-json "$d/stats.json" </dev/null >/dev/null 2>"$d/root.err" &
root=$!
for _ in $(seq 1 100); do [ -S "$d/root" ] && break; sleep 0.05; done
"$build/tools/mpiwatch-loadgen" --connect "ipc://$d/root" --ranks "$ranks" --rate 10 \
    --functions 4 --seconds 30 --variants 2 --job "rootcpu-$$" --aggregators "$aggs" \
    --totals-json "$d/totals.json" 2>"$d/loadgen.err" &
gen=$!
# utime + stime of the root every 0.2 s, with the wall clock (µs)
while { read -r line <"/proc/$root/stat"; } 2>/dev/null; do
    read -r -a f <<<"${line##*) }"
    echo "${EPOCHREALTIME/./} $((f[11] + f[12]))"
    sleep 0.2
done >"$d/cpu"
wait "$gen" || { cat "$d/loadgen.err" >&2; exit 1; }
wait "$root" || { cat "$d/root.err" >&2; exit 1; }
python3 - "$d" <<'PY'
import json, os, sys
d = sys.argv[1]
tot = json.load(open(f"{d}/totals.json"))
st = json.load(open(f"{d}/stats.json"))
tck = os.sysconf("SC_CLK_TCK")
first = tot["run"]["first_window_ns"] / 1e3
pts = [tuple(map(int, l.split())) for l in open(f"{d}/cpu")]
a = [p for p in pts if p[0] <= first + 2e6][-1]
b = [p for p in pts if p[0] <= first + 28e6][-1]
cpu = 100.0 * (b[1] - a[1]) / tck / ((b[0] - a[0]) / 1e6)
print(f"cpu {cpu:.1f}% windows {st['windows']} partial {st['partial_windows']} "
      f"p99ms {st['close_latency_ms_p99']:.0f}")
PY
