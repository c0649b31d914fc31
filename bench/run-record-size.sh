#!/usr/bin/env bash
# run-record-size.sh: how many bytes a recording takes per rank and window, by tier, with and
# without compression, and what that makes of a long job.
#
# DESIGN: the same emulated job (mpiwatch-loadgen, same seed, so the same messages) is recorded
# once per zstd level of --record-compress (0 = uncompressed), with the collector's default
# tiers (docs/recording.md "Tiers"; the run is shorter than --record-full-span, so nothing is
# dropped and every tier can be measured in one file). tests/record/mw-recdump reads each
# recording through the public reader and prints, per kind of record, the bytes it takes in the
# file and would take uncompressed (mw_rec_reader_last_size). Per rank-window (windows x ranks
# reporting): the received frames (`message`: the raw samples) and the full merged windows
# (`window`), the two tiers kept for the recent span; the lean copies (`lean`) kept for every
# window of the run; the per-rank sums (`rank_sums`, one RecordRanks every
# --record-rank-every windows) per frame and rank; everything else (job, steps, ticks,
# events, index, hellos and byes) as `other`. The last lines project what this build keeps to
# MW_BENCH_PROJECT_RANKS ranks at the same rate for MW_BENCH_PROJECT_HOURS hours: lean windows
# and other records for the whole run, one per-rank frame every MW_BENCH_RANK_EVERY windows
# (the size of a frame per rank as measured: it sums the same entries as one window's per-rank
# content), and raw samples and full windows for MW_BENCH_FULL_SPAN seconds (around rule
# firings and captures, --record-keep-around adds what it pins: not modelled). `other` is
# projected per rank-window too (index, ticks, events: an overstatement for more ranks), except
# the job's descriptions (a few per job, projected once by the ranks). It is a
# benchmark: it prints figures and exits 0 whatever they are; it fails only when a run fails.
# With MW_BENCH_DEMO=1 it also records `mpiwatch demo` (4 MPI ranks, real library) the same
# way, through the launcher (--collector-arg=--record-compress=N).
#
# usage: run-record-size.sh BUILD_DIR
# knobs (environment): MW_BENCH_RANKS (4096), MW_BENCH_RATE (10), MW_BENCH_FUNCTIONS (20),
#   MW_BENCH_SECONDS (6), MW_BENCH_LEVELS ("0 -3 1 3"), MW_BENCH_PROJECT_RANKS (16384),
#   MW_BENCH_PROJECT_HOURS (24), MW_BENCH_FULL_SPAN (60: --record-full-span),
#   MW_BENCH_RANK_EVERY (100: --record-rank-every), MW_BENCH_DEMO (0),
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
seconds=${MW_BENCH_SECONDS:-6}
full_span=${MW_BENCH_FULL_SPAN:-60}
rank_every=${MW_BENCH_RANK_EVERY:-100}
levels=${MW_BENCH_LEVELS:-0 -3 1 3}
MW_KEEP_TMP=${MW_BENCH_KEEP:-0}
mw_init bench-record-size
sock=${MW_EP#ipc://}

# loadgen_run LEVEL: records the loadgen job into $MW_T/lg-LEVEL.mpiw.
loadgen_run() {
    local level=$1 rec=$MW_T/lg-$1.mpiw i
    rm -f "$sock" "$rec"
    "$collector" --listen "$MW_EP" --exit-after-job --quiet --silence-timeout-ms 60000 \
        --record "$rec" --record-compress="$level" --record-full-span "$full_span" \
        --record-rank-every "$rank_every" </dev/null >/dev/null 2>"$MW_T/lg-$level.err" &
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
        --collector-arg=--record-compress="$level" --collector-arg=--record-full-span="$full_span" \
        --collector-arg=--record-rank-every="$rank_every" -- "${MW_BENCH_DEMO_ITERS:-750}" \
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
        "${MW_BENCH_PROJECT_HOURS:-24}" "$full_span" "$rank_every" "$@" <<'PY'
import os, re, sys
name, pranks, rate, hours, span, every = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), \
    float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
rows = []
for f in sys.argv[7:]:
    d = dict(l.split(None, 1) for l in open(f + ".dump") if len(l.split(None, 1)) == 2)
    g = lambda k: int(d.get(k, "0").split()[0])
    ranks = g("ranks")
    rw = g("window") * ranks
    level = re.search(r"-(-?\d+)\.mpiw$", f).group(1)
    size = os.path.getsize(f)
    kinds = {k: (g("disk_" + k), g("plain_" + k)) for k in ("message", "window", "lean",
                                                            "rank_sums")}
    # The job's descriptions are written a few times per job, whatever its length: projected
    # once, by the ranks; the rest of `other` per rank-window.
    job = g("disk_job")
    other = size - sum(v[0] for v in kinds.values()) - job
    frames = max(g("rank_sums"), 1)
    rows.append((level, rw, ranks, frames, size, kinds, other, job))
    print(f"{name} level {level}: {g('window')} windows x {ranks} ranks = {rw} rank-windows,"
          f" file {size / 1e6:.2f} MB, {g('rank_sums')} per-rank frames")
    print("  bytes per rank-window: " + ", ".join(
        f"{k} {v[0] / rw:.2f} (uncompressed {v[1] / rw:.2f})" for k, v in kinds.items()
        if k != "rank_sums") + f", other {other / rw:.2f} (+ job descriptions {job / 1e3:.0f} kB"
        f" per job), all {size / rw:.1f}")
    rs = kinds["rank_sums"]
    print(f"  per-rank frame per rank: {rs[0] / frames / ranks:.2f} bytes (uncompressed "
          f"{rs[1] / frames / ranks:.2f})")
for level, rw, ranks, frames, size, kinds, other, job in rows:
    prw = pranks * rate * hours * 3600
    spanrw = pranks * rate * min(span, hours * 3600)
    per = lambda k, kinds=kinds, rw=rw: kinds[k][0] / rw
    lean = (per("lean") + other / rw) * prw + job * pranks / ranks
    coarse = kinds["rank_sums"][0] / frames / ranks * prw / every
    recent = (per("message") + per("window")) * spanrw
    print(f"projection from level {level} to {pranks} ranks, {rate:g} windows/s, {hours:g} h "
          f"({prw:.3g} rank-windows):")
    print(f"  every raw sample and full window for the whole run: "
          f"{(size - kinds['lean'][0] - kinds['rank_sums'][0]) / rw * prw / 1e9:,.0f} GB")
    print(f"  this build: lean windows and other records for the whole run {lean / 1e9:,.1f} GB + "
          f"per-rank sums every {every} windows {coarse / 1e9:,.1f} GB + raw samples and full "
          f"windows for {span:g} s {recent / 1e9:,.1f} GB = {(lean + coarse + recent) / 1e9:,.1f} GB")
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
