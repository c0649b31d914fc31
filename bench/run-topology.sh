#!/bin/bash
# run-topology.sh [BUILD_DIR]: frame rates of the viewer's topology and matrix views on a job of
# 16,384 emulated ranks on 128 nodes (2 packages x 2 L3 x 16 cores x 2 PUs each, one rank per
# PU) with 6 partners per rank (98,305 pairs a window), drawn offscreen at 1280x800.
#
# Prints one line per case: the median frames per second of REPEATS runs of FRAMES frames each
# (--bench-frames), and what was drawn. The machine is shared: compare cases of one run.
#   zoomed out   the default camera: node-to-node bundles (auto)
#   zoom N       --zoom N: auto mode, node bundles until at most 2,000 rank lines are in
#                view (about --zoom 30 here), then rank-to-rank lines culled to the view
#   all lines    the default camera with --bundles off: every one of the 98,305 lines
#   matrix       --view matrix
#   orbit        the default camera turning every frame (MW_BENCH_ORBIT=1: the scene drawn
#                again each frame rather than its image reused)
# RANKS=100000 NODES=400 CORES=32 (environment) measures 100,000 ranks on 400 nodes (250 a node;
# CORES cores per L3, 2 PUs each, must hold a node's ranks); docs/viewer.md, "At 100,000 ranks".
set -eu
BUILD=${1:-build}
VIEWER=$BUILD/viewer/mpiwatch-viewer
SYNTH=$BUILD/tests/viewer/topo-synth
FRAMES=${FRAMES:-60}
RANKS=${RANKS:-16384}
NODES=${NODES:-128}
CORES=${CORES:-16}
REPEATS=${REPEATS:-3}
{ [ -x "$VIEWER" ] && [ -x "$SYNTH" ]; } || { echo "build mpiwatch-viewer and topo-synth in $BUILD" >&2; exit 1; }
export SDL_VIDEODRIVER=offscreen
unset DISPLAY WAYLAND_DISPLAY
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$SYNTH" --ranks "$RANKS" --nodes "$NODES" --packages 2 --l3 2 --cores "$CORES" --pus 2 \
    --partners 6 \
    --windows 3 --steps 2 --quiet "$T/big.mpiw" >/dev/null

bench() {
    local name=$1
    shift
    for _ in $(seq "$REPEATS"); do
        "$VIEWER" --replay "$T/big.mpiw" --size 1280x800 --bench-frames "$FRAMES" "$@" 2>/dev/null
    done | python3 -c '
import json, statistics, sys
runs = [json.loads(l) for l in sys.stdin if l.startswith("{")]
fps = statistics.median(r["fps"] for r in runs)
r = runs[-1]
print("%-12s median %6.1f fps over %d runs of %d frames  (%s: %d ranks, %d nodes, %d pairs, "
      "bundled %d, %d curves)" % (sys.argv[1], fps, len(runs), r["frames"], r["view"], r["ranks"],
                                  r["nodes"], r["pairs"], r["bundled"], r["curves"]))' "$name"
}
bench "zoomed out" --view topology
bench "zoom 5" --view topology --zoom 5
bench "zoom 15" --view topology --zoom 15
bench "zoom 30" --view topology --zoom 30
bench "zoom 60" --view topology --zoom 60
bench "all lines" --view topology --bundles off
bench "matrix" --view matrix
MW_BENCH_ORBIT=1 bench "orbit" --view topology
