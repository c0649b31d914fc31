#!/usr/bin/env bash
# run-viewer.sh: the viewer's frame rate and memory on a 16,384-rank recording.
#
# DESIGN: a recording of a large emulated job is made once (a private mpiwatch-collector with
# --record, fed by mpiwatch-loadgen; the helpers of tests/lib/common.sh), or given with
# --recording. The viewer then replays it headless (SDL_VIDEODRIVER=offscreen) with
# --bench-frames, which loads what the view needs, draws that many frames back to back and
# prints {"frames", "seconds", "fps", "calls"} ("calls": the calls in the call view's range).
# Two modes, each run --runs times, alternating, and reported as medians:
#   cached  the data does not change between frames: the call view's binning is reused, a
#           frame is the GL drawing alone (what an idle, paused viewer costs);
#   rebin   MW_BENCH_REBIN=1: the call view is binned again every frame (what a live viewer
#           receiving windows, or a user scrolling, costs).
# The call view's range is the viewer's default (the last 10% of the run shown) unless
# --range is given; the script checks that it holds at least 1 M calls (the figure asked for)
# and says so when it does not. Every run's peak resident memory is taken: GNU time's %M when
# /usr/bin/time is there, otherwise the peak of VmHWM polled from /proc/PID/status while it
# runs. Last, "memory bounded": the viewer with a small --cache-mb on the long recording and on
# a short one (the first seconds of the same job, recorded separately): the two peaks should be
# close, since the model keeps at most --cache-mb of windows whatever the run's length. It is a
# benchmark: it prints figures and exits 0 whatever they are; it fails only when a run fails.
#
# --terrain instead measures the terrain view (docs/viewer.md, "Terrain view") on a recording of
# 16,384 ranks x 20 functions with known per-rank figures (mw-synth --pattern terrain, since a
# load generator's windows carry per-rank figures only from a collector that merges them): the
# 3D field and the heat map, cached (the vertex buffer or texture reused) and rebuilt every
# frame (MW_BENCH_REBIN=1), each against the timeline alone in the same round (the terrain shares
# the screen with it), alternating, medians of --runs: the frame rate, and the CPU per frame
# (user + system of every thread, llvmpipe's included, from GNU time, less a one-frame run's
# loading), which a machine shared with other work does not inflate as it does the frame rate.
#
# usage: run-viewer.sh [--recording FILE.mpiw [--short FILE.mpiw]] [--seconds S] [--runs N]
#                      [--frames N] [--range A:B] [--cache-mb N] [--terrain] BUILD_DIR
#        run-viewer.sh ... --viewer PATH --collector PATH --loadgen PATH
# defaults: --seconds 8 (of loadgen at 16384 ranks, 10 windows/s, 20 functions: about 7
# windows/s on 2 cores), --runs 3, --frames 300, --cache-mb 64 (memory bounded runs).
# knobs (environment): MW_BENCH_RANKS (16384), MW_BENCH_SIZE (1280x800), MW_BENCH_KEEP=1 keeps
# the temporary directory and the recordings made.
set -u
# shellcheck source=../tests/lib/common.sh
. "$(dirname "$0")/../tests/lib/common.sh"

usage() {
    sed -n '/^# usage:/,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
}

viewer='' collector='' loadgen='' build='' recording='' short='' range=''
seconds=8 runs=3 frames=300 cache_mb=64 terrain=0
while [ $# -gt 0 ]; do
    case $1 in
        --viewer) viewer=$2; shift 2 ;;
        --collector) collector=$2; shift 2 ;;
        --loadgen) loadgen=$2; shift 2 ;;
        --recording) recording=$2; shift 2 ;;
        --short) short=$2; shift 2 ;;
        --seconds) seconds=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --frames) frames=$2; shift 2 ;;
        --range) range=$2; shift 2 ;;
        --cache-mb) cache_mb=$2; shift 2 ;;
        --terrain) terrain=1; shift ;;
        -h|--help) usage ;;
        -*) echo "run-viewer.sh: unknown option $1" >&2; usage ;;
        *) [ -z "$build" ] || usage; build=$1; shift ;;
    esac
done
if [ -n "$build" ]; then
    viewer=${viewer:-$build/viewer/mpiwatch-viewer}
    collector=${collector:-$build/collector/mpiwatch-collector}
    loadgen=${loadgen:-$build/tools/mpiwatch-loadgen}
fi
[ -n "$viewer" ] || usage
[ -x "$viewer" ] || { echo "run-viewer.sh: not built: $viewer" >&2; exit 1; }
if [ "$terrain" = 0 ] && { [ -z "$recording" ] || [ -z "$short" ]; }; then
    for p in "$collector" "$loadgen"; do
        if [ -z "$p" ] || [ ! -x "$p" ]; then
            echo "run-viewer.sh: not built: '$p'" >&2
            exit 1
        fi
    done
fi
ranks=${MW_BENCH_RANKS:-16384}
size=${MW_BENCH_SIZE:-1280x800}
MW_KEEP_TMP=${MW_BENCH_KEEP:-0}
mw_init bench-viewer
export SDL_VIDEODRIVER=offscreen
unset MW_BENCH_REBIN
sock=${MW_EP#ipc://}

# record FILE SECONDS: a loadgen job of $ranks ranks recorded by a private collector.
record() {
    local out=$1 secs=$2 i t0 t1
    rm -f "$sock"
    "$collector" --listen "$MW_EP" --exit-after-job --quiet --silence-timeout-ms 60000 \
        --record "$out" </dev/null >/dev/null 2>"$MW_T/record.err" &
    MW_CPID=$!
    for ((i = 0; i < 200; i++)); do
        [ -S "$sock" ] && break
        sleep 0.05
    done
    [ -S "$sock" ] || { cat "$MW_T/record.err" >&2; mw_fail "the collector did not start"; }
    t0=$(date +%s.%N)
    "$loadgen" --connect "$MW_EP" --ranks "$ranks" --rate 10 --functions 20 --seconds "$secs" \
        --seed 7 --job bench-viewer 2>"$MW_T/loadgen.err" ||
        { cat "$MW_T/loadgen.err" >&2; mw_fail "mpiwatch-loadgen failed"; }
    wait "$MW_CPID" || { cat "$MW_T/record.err" >&2; mw_fail "the recording collector failed"; }
    MW_CPID=''
    t1=$(date +%s.%N)
    awk -v f="$out" -v b="$(stat -c %s "$out")" -v t0="$t0" -v t1="$t1" -v r="$ranks" \
        -v s="$secs" 'BEGIN { printf "recorded %s: %d ranks, %d s of loadgen in %.1f s, %.0f MB\n",
                              f, r, s, t1 - t0, b / 1e6 }'
}

if [ "$terrain" = 0 ] && [ -z "$recording" ]; then
    recording=$MW_T/long.mpiw
    record "$recording" "$seconds"
fi
if [ "$terrain" = 0 ] && [ -z "$short" ]; then
    short=$MW_T/short.mpiw
    record "$short" 2
fi

gnu_time=''
if [ -x /usr/bin/time ] && /usr/bin/time -f %M true 2>/dev/null >/dev/null; then
    gnu_time=/usr/bin/time
fi

# view NAME ARGS...: one viewer run; its JSON line in NAME.json, its peak RSS (kB) in NAME.rss.
view() {
    local name=$1 pid hwm peak=0 rc
    shift
    if [ -n "$gnu_time" ]; then
        "$gnu_time" -f %M -o "$MW_T/$name.rss" "$viewer" "$@" >"$MW_T/$name.json" \
            2>"$MW_T/$name.err"
        rc=$?
    else
        "$viewer" "$@" >"$MW_T/$name.json" 2>"$MW_T/$name.err" &
        pid=$!
        while kill -0 "$pid" 2>/dev/null; do
            hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
            [ -n "$hwm" ] && [ "$hwm" -gt "$peak" ] && peak=$hwm
            sleep 0.05
        done
        wait "$pid"
        rc=$?
        echo "$peak" >"$MW_T/$name.rss"
    fi
    return $rc
}

if [ "$terrain" = 1 ]; then
    synth=${build:+$build/tests/viewer/mw-synth}
    if [ -z "$synth" ] || [ ! -x "$synth" ]; then
        mw_fail "--terrain needs BUILD_DIR with tests/viewer/mw-synth"
    fi
    trec=$MW_T/terrain.mpiw
    "$synth" --pattern terrain --ranks "$ranks" --functions 20 --windows 4 "$trec" >/dev/null ||
        mw_fail "mw-synth --pattern terrain failed"
    echo "run-viewer.sh: terrain of $ranks ranks x 20 functions, 4 windows, $size," \
        "$frames frames per run, $runs runs"
    : >"$MW_T/tresults"
    heat=functions,heatmap
    # trun NAME FRAMES MODE: one run; its JSON line, and its CPU seconds (user + system, every
    # thread: llvmpipe's too) when GNU time is there.
    trun() {
        local args=(--replay "$trec" --size "$size" --bench-frames "$2" --range 0:0.4) rb=0
        case $3 in
            timeline) args+=(--view timeline) ;;
            3d*) args+=(--view terrain) ;;
            heatmap*) args+=(--view terrain --terrain "$heat") ;;
        esac
        [ "${3%_rebuild}" != "$3" ] && rb=1
        if [ -n "$gnu_time" ]; then
            MW_BENCH_REBIN=$rb "$gnu_time" -f "%U %S" -o "$MW_T/$1.cpu" "$viewer" "${args[@]}" \
                >"$MW_T/$1.json" 2>"$MW_T/$1.err"
        else
            echo "0 0" >"$MW_T/$1.cpu"
            MW_BENCH_REBIN=$rb "$viewer" "${args[@]}" >"$MW_T/$1.json" 2>"$MW_T/$1.err"
        fi || { cat "$MW_T/$1.err" >&2; mw_fail "viewer run $1 failed"; }
    }
    modes=(timeline 3d heatmap 3d_rebuild heatmap_rebuild)
    # What loading the recording costs, to take out of the CPU per frame.
    for mode in "${modes[@]}"; do
        trun "t_${mode}_setup" 1 "$mode"
        echo "setup_$mode $(tail -n 1 "$MW_T/t_${mode}_setup.cpu") $(grep '^{' \
            "$MW_T/t_${mode}_setup.json" | tail -n 1)" >>"$MW_T/tresults"
    done
    for ((r = 1; r <= runs; r++)); do
        for mode in "${modes[@]}"; do
            trun "t_$mode$r" "$frames" "$mode"
            echo "$mode $(tail -n 1 "$MW_T/t_$mode$r.cpu") $(grep '^{' "$MW_T/t_$mode$r.json" |
                tail -n 1)" >>"$MW_T/tresults"
        done
    done
    "$MW_PYTHON" - "$MW_T/tresults" <<'PY'
import json, statistics, sys
rows, setup = {}, {}
for line in open(sys.argv[1]):
    mode, u, s, js = line.split(" ", 3)
    j = json.loads(js)
    if mode.startswith("setup_"):
        setup[mode[6:]] = float(u) + float(s)
    else:
        rows.setdefault(mode, []).append((j["fps"], float(u) + float(s), j["frames"]))
def med(mode):
    r = rows[mode]
    fps = statistics.median(f for f, _, _ in r)
    cpu = statistics.median((c - setup.get(mode, 0)) / n * 1000 for _, c, n in r)
    return fps, cpu
bf, bc = med("timeline")
print(f"timeline alone         : median {bf:6.1f} fps ({1000 / bf:6.2f} ms/frame), "
      f"CPU {bc:6.2f} ms/frame")
for mode in ("3d", "heatmap", "3d_rebuild", "heatmap_rebuild"):
    f, c = med(mode)
    print(f"terrain {mode:15s}: median {f:6.1f} fps ({1000 / f:6.2f} ms/frame), "
          f"CPU {c:6.2f} ms/frame: the terrain adds {c - bc:+.2f} ms of CPU to the timeline's")
PY
    exit 0
fi
base=(--replay "$recording" --view all --size "$size" --bench-frames "$frames")
range_args=()
[ -z "$range" ] || range_args=(--range "$range")

echo "run-viewer.sh: $recording, $size, $frames frames per run, $runs runs per mode;" \
    "peak RSS from ${gnu_time:-/proc VmHWM polling}"
: >"$MW_T/results"
for ((r = 1; r <= runs; r++)); do
    for mode in cached rebin; do
        [ $((r % 2)) = 0 ] && mode=$([ "$mode" = cached ] && echo rebin || echo cached)
        if [ "$mode" = rebin ]; then
            MW_BENCH_REBIN=1 view "$mode$r" "${base[@]}" "${range_args[@]}" ||
                { cat "$MW_T/$mode$r.err" >&2; mw_fail "viewer run $mode $r failed"; }
        else
            view "$mode$r" "${base[@]}" "${range_args[@]}" ||
                { cat "$MW_T/$mode$r.err" >&2; mw_fail "viewer run $mode $r failed"; }
        fi
        line=$(grep '^{' "$MW_T/$mode$r.json" | tail -n 1)
        echo "$mode $r $(cat "$MW_T/$mode$r.rss") $line" >>"$MW_T/results"
        printf '%-6s %d: %s, peak RSS %s kB\n' "$mode" "$r" "$line" "$(cat "$MW_T/$mode$r.rss")"
    done
done

# Memory bounded: a small cache on the long and on the short recording.
for which in short long; do
    f=$recording
    [ "$which" = short ] && f=$short
    view "mem_$which" --replay "$f" --view all --size "$size" --bench-frames 30 \
        --cache-mb "$cache_mb" ||
        { cat "$MW_T/mem_$which.err" >&2; mw_fail "viewer run on the $which recording failed"; }
    echo "mem_$which 0 $(cat "$MW_T/mem_$which.rss") $(grep '^{' "$MW_T/mem_$which.json" |
        tail -n 1)" >>"$MW_T/results"
done

"$MW_PYTHON" - "$MW_T/results" "$cache_mb" "$(stat -c %s "$recording")" \
    "$(stat -c %s "$short")" <<'PY'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    mode, n, rss, js = line.split(" ", 3)
    rows.setdefault(mode, []).append((int(rss or 0), json.loads(js)))
cache_mb, long_b, short_b = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
for mode in ("cached", "rebin"):
    r = rows.get(mode, [])
    if not r:
        continue
    fps = statistics.median(j["fps"] for _, j in r)
    ms = 1000 / fps if fps else float("inf")
    rss = max(x for x, _ in r)
    calls = statistics.median(j.get("calls", 0) for _, j in r)
    print(f"{mode:6s}: median {fps:8.1f} fps ({ms:.2f} ms/frame) over {len(r)} runs; "
          f"call view range holds {calls / 1e6:.2f} M calls; max RSS {rss / 1024:.0f} MB")
    if calls < 1e6:
        print(f"        note: fewer than 1 M calls in the call view range (give --range)")
if "cached" in rows and "rebin" in rows:
    c = statistics.median(j["fps"] for _, j in rows["cached"])
    b = statistics.median(j["fps"] for _, j in rows["rebin"])
    print(f"re-binning every frame costs {1000 / b - 1000 / c:.2f} ms per frame "
          f"(cached / rebin fps ratio {c / b:.2f})")
if "mem_short" in rows and "mem_long" in rows:
    s, l = rows["mem_short"][0][0], rows["mem_long"][0][0]
    print(f"memory bounded (--cache-mb {cache_mb}): peak RSS {s / 1024:.0f} MB on the short "
          f"recording ({short_b / 1e6:.0f} MB), {l / 1024:.0f} MB on the long one "
          f"({long_b / 1e6:.0f} MB): ratio {l / s:.2f}")
PY
