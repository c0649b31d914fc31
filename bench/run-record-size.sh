#!/usr/bin/env bash
# run-record-size.sh: how many bytes a recording takes per rank and window, by tier, with and
# without compression, and what that makes of a long job.
#
# DESIGN: the same emulated job (mpiwatch-loadgen, same seed, so the same messages) is recorded
# once per zstd level of --record-compress (0 = uncompressed). tests/record/mw-recdump reads
# each recording through the public reader and prints, per kind of record, the bytes it takes
# in the file and would take uncompressed (mw_rec_reader_last_size). The received frames
# (`message`: the raw samples, the tier kept for a recent span) and the merged windows
# (`window`: the tier kept for the whole run, with the per-rank essentials rf_*,
# rank_mpi_permille and pairs) are divided by the rank-windows of the run (windows x ranks
# reporting); everything else (job, steps, ticks, events, index) is shown as `other`. The last
# lines project the figures to MW_BENCH_PROJECT_RANKS ranks at the same rate for
# MW_BENCH_PROJECT_HOURS hours: all raw samples for the whole run, and the windows tier for
# the whole run plus MW_BENCH_FULL_SPAN seconds of raw samples (--record-full-span), and, for a
# tier that this build does NOT have, the windows without their per-rank arrays and pairs for
# every window plus those arrays once every MW_BENCH_ESSENTIALS_EVERY windows (their share of
# the windows' bytes is measured uncompressed by mw-recdump and given the windows' compression
# ratio). It is a
# benchmark: it prints figures and exits 0 whatever they are; it fails only when a run fails.
# With MW_BENCH_DEMO=1 it also records `mpiwatch demo` (4 MPI ranks, real library) the same
# way, through the launcher (--collector-arg=--record-compress=N).
#
# usage: run-record-size.sh BUILD_DIR
# knobs (environment): MW_BENCH_RANKS (4096), MW_BENCH_RATE (10), MW_BENCH_FUNCTIONS (20),
#   MW_BENCH_SECONDS (4), MW_BENCH_LEVELS ("0 -3 1 3"), MW_BENCH_PROJECT_RANKS (16384),
#   MW_BENCH_PROJECT_HOURS (24), MW_BENCH_FULL_SPAN (600), MW_BENCH_ESSENTIALS_EVERY (50),
#   MW_BENCH_DEMO (0),
#   MW_BENCH_DEMO_ITERS (750), MW_BENCH_KEEP=1 (keep the temporary directory).
set -u
# shellcheck source=../tests/lib/common.sh
. "$(dirname "$0")/../tests/lib/common.sh"

[ $# -eq 1 ] || {
    sed -n '/^# usage:/,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
}
build=$1
collector=$build/collector/mpiwatch-collector
loadgen=$build/tools/mpiwatch-loadgen
recdump=$build/tests/record/mw-recdump
launcher=$build/tools/mpiwatch
for p in "$collector" "$loadgen" "$recdump"; do
    [ -x "$p" ] || { echo "run-record-size.sh: not built: $p" >&2; exit 1; }
done
ranks=${MW_BENCH_RANKS:-4096}
rate=${MW_BENCH_RATE:-10}
functions=${MW_BENCH_FUNCTIONS:-20}
seconds=${MW_BENCH_SECONDS:-4}
levels=${MW_BENCH_LEVELS:-0 -3 1 3}
MW_KEEP_TMP=${MW_BENCH_KEEP:-0}
mw_init bench-record-size
sock=${MW_EP#ipc://}

# loadgen_run LEVEL: records the loadgen job into $MW_T/lg-LEVEL.mpiw.
loadgen_run() {
    local level=$1 rec=$MW_T/lg-$1.mpiw i
    rm -f "$sock" "$rec"
    "$collector" --listen "$MW_EP" --exit-after-job --quiet --silence-timeout-ms 60000 \
        --record "$rec" --record-compress="$level" </dev/null >/dev/null 2>"$MW_T/lg-$level.err" &
    MW_CPID=$!
    for ((i = 0; i < 200; i++)); do
        [ -S "$sock" ] && break
        sleep 0.05
    done
    [ -S "$sock" ] || { cat "$MW_T/lg-$level.err" >&2; mw_fail "the collector did not start"; }
    "$loadgen" --connect "$MW_EP" --ranks "$ranks" --rate "$rate" --functions "$functions" \
        --seconds "$seconds" --seed 11 --job size 2>"$MW_T/lg-$level.loadgen" ||
        { cat "$MW_T/lg-$level.loadgen" >&2; mw_fail "mpiwatch-loadgen failed"; }
    wait "$MW_CPID" || { cat "$MW_T/lg-$level.err" >&2; mw_fail "the collector failed"; }
    MW_CPID=''
}

# demo_run LEVEL: records `mpiwatch demo` into $MW_T/demo-LEVEL.mpiw.
demo_run() {
    local level=$1
    rm -f "$MW_T/demo-$level.mpiw"
    "$launcher" demo --quiet --record "$MW_T/demo-$level.mpiw" \
        --collector-arg=--record-compress="$level" -- "${MW_BENCH_DEMO_ITERS:-750}" \
        >"$MW_T/demo-$level.out" 2>&1 ||
        { cat "$MW_T/demo-$level.out" >&2; mw_fail "mpiwatch demo failed"; }
}

# report NAME FILE...: one line per recording, then the projection of the last one.
report() {
    local name=$1 f
    shift
    for f in "$@"; do
        "$recdump" "$f" >"$f.dump" || mw_fail "mw-recdump $f failed"
    done
    "$MW_PYTHON" - "$name" "${MW_BENCH_PROJECT_RANKS:-16384}" "$rate" \
        "${MW_BENCH_PROJECT_HOURS:-24}" "${MW_BENCH_FULL_SPAN:-600}" \
        "${MW_BENCH_ESSENTIALS_EVERY:-50}" "$@" <<'PY'
import os, re, sys
name, pranks, rate, hours, span, every = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), \
    float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
rows = []
for f in sys.argv[7:]:
    d = dict(l.split(None, 1) for l in open(f + ".dump") if len(l.split(None, 1)) == 2)
    g = lambda k: int(d.get(k, "0").split()[0])
    rw = g("window") * g("ranks")
    level = re.search(r"-(-?\d+)\.mpiw$", f).group(1)
    size = os.path.getsize(f)
    raw = (g("disk_message"), g("plain_message"))
    win = (g("disk_window"), g("plain_window"))
    other = (size - raw[0] - win[0], 0)
    # The per-rank arrays' and pairs' share of the windows, uncompressed.
    share = (g("window_bytes_rank") + g("window_bytes_pairs")) / max(win[1], 1)
    rows.append((level, rw, size, raw, win, other, share))
    print(f"{name} level {level}: {g('window')} windows x {g('ranks')} ranks = {rw} rank-windows,"
          f" file {size / 1e6:.2f} MB")
    print(f"  bytes per rank-window: raw samples {raw[0] / rw:8.1f} (uncompressed "
          f"{raw[1] / rw:8.1f}), windows {win[0] / rw:7.2f} (uncompressed {win[1] / rw:7.2f}), "
          f"other {other[0] / rw:6.2f}, all {size / rw:8.1f}")
    print(f"  windows: per-rank arrays {g('window_bytes_rank') / max(win[1], 1):.1%}, pairs "
          f"{g('window_bytes_pairs') / max(win[1], 1):.1%} of their uncompressed bytes")
level, rw, size, raw, win, other, share = rows[-1]
prw = pranks * rate * hours * 3600
spanrw = pranks * rate * min(span, hours * 3600)
full = size / rw * prw
tiers = (win[0] + other[0]) / rw * prw + raw[0] / rw * spanrw
rawspan = raw[0] / rw * spanrw
lite = (win[0] * (1 - share) + other[0]) / rw * prw
ess = win[0] * share / rw * prw / every
print(f"projection from level {level} to {pranks} ranks, {rate:g} windows/s, {hours:g} h "
      f"({prw:.3g} rank-windows):")
print(f"  every raw sample for the whole run: {full / 1e9:,.0f} GB")
print(f"  tiers of this build (windows for the whole run + raw samples for {span:g} s): "
      f"{tiers / 1e9:,.1f} GB ({(tiers - rawspan) / 1e9:,.1f} + {rawspan / 1e9:,.1f})")
print(f"  not implemented: windows without per-rank arrays and pairs for the whole run "
      f"{lite / 1e9:,.1f} GB + those arrays every {every} windows {ess / 1e9:,.1f} GB + raw "
      f"samples for {span:g} s {rawspan / 1e9:,.1f} GB = {(lite + ess + rawspan) / 1e9:,.1f} GB")
PY
}

echo "run-record-size.sh: loadgen $ranks ranks, $rate Hz, $functions functions, $seconds s;" \
    "levels $levels"
files=()
for level in $levels; do
    loadgen_run "$level"
    files+=("$MW_T/lg-$level.mpiw")
done
report loadgen "${files[@]}"
if [ "${MW_BENCH_DEMO:-0}" = 1 ]; then
    files=()
    for level in $levels; do
        demo_run "$level"
        files+=("$MW_T/demo-$level.mpiw")
    done
    report demo "${files[@]}"
fi
