#!/usr/bin/env bash
# run-viewer-scale.sh: every view's frame rate, CPU per frame and peak memory at 100,000 ranks,
# side by side with 16,384 ranks.
#
# DESIGN: two recordings of mpiwatch-loadgen jobs (100,000 ranks on 400 nodes and 16,384 on 128,
# 20 functions, 6 partners a rank), each made by one private mpiwatch-collector with --record,
# or given with --big / --small. One collector does not keep up with 100,000 ranks at 10
# windows/s on this machine, and the viewer only reads the windows: the jobs run at --rate
# (default 1 window/s) with --lateness-ms 20000, so that every window closes with all ranks.
# The viewer then replays each headless (SDL_VIDEODRIVER=offscreen) with --bench-frames in
# every mode below, --runs times alternating the sizes, and the script prints per mode the
# median frames per second, the median CPU per frame (user + system of every thread, llvmpipe's
# included, from GNU time, less a one-frame run's: the loading), which a machine shared with
# other work does not inflate as it does the frame rate, and the largest peak RSS.
#   timeline, density, all    the 2D views (the call view's binning cached)
#   terrain, heatmap          the terrain under the timeline: 3D, heat map
#   topology                  the whole job, unchanged camera (the scene's image reused)
#   topology_orbit            the camera turning every frame (MW_BENCH_ORBIT=1): drawn again
#   topology_zoom5, zoom30    --zoom 5 / 30, unchanged camera
#   matrix                    the communication matrix, binned to the plot's pixels
# It is a benchmark: it prints figures and exits 0 whatever they are; it fails when a run fails.
#
# usage: run-viewer-scale.sh [--big FILE.mpiw] [--small FILE.mpiw] [--runs N] [--frames N]
#                            [--rate HZ] [--seconds S] BUILD_DIR
# defaults: --runs 3, --frames 120, --rate 1, --seconds 3. MW_BENCH_SIZE (1280x800),
# MW_BENCH_KEEP=1 keeps the recordings (in the printed directory).
set -u
usage() {
    sed -n '/^# usage:/,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
}
big='' small='' runs=3 frames=120 rate=1 seconds=3 build=''
while [ $# -gt 0 ]; do
    case $1 in
        --big) big=$2; shift 2 ;;
        --small) small=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --frames) frames=$2; shift 2 ;;
        --rate) rate=$2; shift 2 ;;
        --seconds) seconds=$2; shift 2 ;;
        -h|--help) usage ;;
        -*) echo "run-viewer-scale.sh: unknown option $1" >&2; usage ;;
        *) [ -z "$build" ] || usage; build=$1; shift ;;
    esac
done
[ -n "$build" ] || usage
viewer=$build/viewer/mpiwatch-viewer
collector=$build/collector/mpiwatch-collector
loadgen=$build/tools/mpiwatch-loadgen
for p in "$viewer" "$collector" "$loadgen"; do
    [ -x "$p" ] || { echo "run-viewer-scale.sh: not built: $p" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "run-viewer-scale.sh: needs GNU time (/usr/bin/time)" >&2; exit 1; }
size=${MW_BENCH_SIZE:-1280x800}
T=$(mktemp -d)
if [ "${MW_BENCH_KEEP:-0}" = 1 ]; then
    echo "run-viewer-scale.sh: keeping $T"
else
    trap 'rm -rf "$T"' EXIT
fi
export SDL_VIDEODRIVER=offscreen
unset DISPLAY WAYLAND_DISPLAY MW_BENCH_REBIN MW_BENCH_ORBIT

# record FILE RANKS NODES: a loadgen job recorded by a private collector.
record() {
    local out=$1 ranks=$2 nodes=$3 sock=$T/c.sock pid i
    rm -f "$sock"
    "$collector" --listen "ipc://$sock" --exit-after-job --quiet --silence-timeout-ms 120000 \
        --lateness-ms 20000 --record "$out" </dev/null >/dev/null 2>"$T/collector.err" &
    pid=$!
    for ((i = 0; i < 200; i++)); do
        [ -S "$sock" ] && break
        sleep 0.05
    done
    "$loadgen" --connect "ipc://$sock" --ranks "$ranks" --nodes "$nodes" --rate "$rate" \
        --functions 20 --seconds "$seconds" --seed 7 --job "scale$ranks" 2>"$T/loadgen.err" ||
        { cat "$T/loadgen.err" >&2; kill "$pid"; exit 1; }
    wait "$pid" || { cat "$T/collector.err" >&2; exit 1; }
    echo "recorded $out: $ranks ranks on $nodes nodes, $(grep -o 'windows [0-9]* in' \
        "$T/loadgen.err" | head -n 1 | awk '{print $2}') windows, $(($(stat -c %s "$out") / \
        1000000)) MB"
}
[ -n "$big" ] || { big=$T/big.mpiw; record "$big" 100000 400; }
[ -n "$small" ] || { small=$T/small.mpiw; record "$small" 16384 128; }

modes=(timeline density all terrain heatmap topology topology_orbit topology_zoom5
    topology_zoom30 matrix)
args_of() {
    case $1 in
        timeline | density | all | topology | matrix) echo "--view $1" ;;
        terrain) echo "--view terrain" ;;
        heatmap) echo "--view terrain --terrain functions,heatmap" ;;
        topology_orbit) echo "--view topology" ;;
        topology_zoom5) echo "--view topology --zoom 5" ;;
        topology_zoom30) echo "--view topology --zoom 30" ;;
    esac
}
# run NAME REC MODE N: one viewer run; "NAME user sys maxrss_kB {json}" appended to results.
run() {
    local name=$1 rec=$2 mode=$3 n=$4 orbit=0
    [ "$mode" = topology_orbit ] && orbit=1
    # shellcheck disable=SC2046 # the mode's arguments are words
    MW_BENCH_ORBIT=$orbit /usr/bin/time -f "%U %S %M" -o "$T/$name.time" "$viewer" \
        --replay "$rec" --size "$size" --bench-frames "$n" $(args_of "$mode") \
        >"$T/$name.json" 2>"$T/$name.err" ||
        { cat "$T/$name.err" >&2; echo "run-viewer-scale.sh: viewer run $name failed" >&2;
          exit 1; }
    echo "$name $(tail -n 1 "$T/$name.time") $(grep '^{' "$T/$name.json" | tail -n 1)" \
        >>"$T/results"
}
echo "run-viewer-scale.sh: $size, $frames frames a run, $runs runs; CPU per frame from GNU time"
: >"$T/results"
for mode in "${modes[@]}"; do
    for which in big small; do
        rec=$big
        [ "$which" = small ] && rec=$small
        run "setup:$which:$mode" "$rec" "$mode" 1
        for ((r = 1; r <= runs; r++)); do
            run "$which:$mode:$r" "$rec" "$mode" "$frames"
        done
    done
done

python3 - "$T/results" "${modes[@]}" <<'PY'
import json, statistics, sys
rows, setup = {}, {}
for line in open(sys.argv[1]):
    name, u, s, rss, js = line.split(" ", 4)
    j = json.loads(js)
    cpu = float(u) + float(s)
    parts = name.split(":")
    if parts[0] == "setup":
        setup[(parts[1], parts[2])] = cpu
    else:
        rows.setdefault((parts[0], parts[1]), []).append((j["fps"], cpu, j["frames"], int(rss)))
def med(which, mode):
    r = rows.get((which, mode))
    if not r:
        return None
    fps = statistics.median(f for f, _, _, _ in r)
    cpu = statistics.median((c - setup.get((which, mode), 0)) / max(n - 1, 1) * 1000
                            for _, c, n, _ in r)
    return fps, cpu, max(x for _, _, _, x in r) / 1024
print("%-16s | %-32s | %-32s" % ("view", "100,000 ranks (400 nodes)", "16,384 ranks (128 nodes)"))
print("%-16s | %-32s | %-32s" % ("", "fps    CPU ms/frame   peak RSS", "fps    CPU ms/frame   peak RSS"))
for mode in sys.argv[2:]:
    cells = []
    for which in ("big", "small"):
        m = med(which, mode)
        cells.append("%6.1f   %8.1f     %6.0f MB" % m if m else "-")
    print("%-16s | %-32s | %-32s" % (mode, cells[0], cells[1]))
PY
