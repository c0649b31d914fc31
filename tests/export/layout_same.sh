#!/bin/bash
# layout_same.sh COLLECTOR LOADGEN EXPORT DUMP TOPO-SYNTH FIXTURE VIEWER: the viewer's 3D view
# and mpiwatch-export --format vtk place the same ranks at the same positions.
#
# For each recording, mw-layout-dump prints the viewer's layout (mw_topo_layout of the last job
# description) and layout_same.py compares it with every .vtp of the VTK export: each rank's
# point, its node, and each hardware rectangle, exactly, in the files' frame (z up). The viewer
# itself is tied in twice: its snapshot meta must count the same nodes, ranks and boxes of each
# kind as the dump, and clicking (--pick) where the dump's position of a rank projects through
# the viewer's camera must pick that rank (top-down camera, up to 8 ranks spread over the job).
# Recordings:
#   a load-generator run recorded by a real collector: 37 ranks on 5 nodes (blocks of 7 and
#                 8), every node with hardware;
#   topo-synth:   32 ranks on 4 nodes with hardware, and the same without hardware (planes by
#                 host);
#   vtk_fixture:  a node without hardware, a rank known only by its core, one with no
#                 placement (loose), one that never said hello (the unplaced plane), and the
#                 same job described by hosts only.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
MW_COLLECTOR=$1
loadgen=$2
export_=$3
dump=$4
synth=$5
fixture=$6
viewer=$7
check=$(dirname "$0")/layout_same.py
mw_init export_vtk_layout
dir=$MW_T
export SDL_VIDEODRIVER=offscreen

# same NAME CHECK-ARGS...: exports $dir/NAME.mpiw and compares it with the viewer's layout.
same() {
    local name=$1
    shift
    "$dump" "$dir/$name.mpiw" >"$dir/$name.layout.json" 2>"$dir/$name.dump.err" ||
        { MW_FAILURE_LOG=$dir/$name.dump.err; mw_fail "mw-layout-dump $name"; }
    "$export_" --format vtk "$dir/$name.mpiw" -o "$dir/$name.vtk" 2>"$dir/$name.export.err" ||
        { MW_FAILURE_LOG=$dir/$name.export.err; mw_fail "export vtk of $name"; }
    "$MW_PYTHON" "$check" "$dir/$name.layout.json" "$dir/$name.vtk" "$@" ||
        mw_fail "$name: the VTK export does not place the ranks where the viewer does"
    # The viewer: the same counts of nodes, ranks and boxes, and its picks find the ranks where
    # the dump puts them.
    "$viewer" --replay "$dir/$name.mpiw" --view topology --window 0 --bundles off --no-labels \
        --camera 0,89 --size 1200x900 --snapshot "$dir/$name.png" --meta "$dir/$name.meta.json" \
        >/dev/null 2>"$dir/$name.viewer.err" ||
        { MW_FAILURE_LOG=$dir/$name.viewer.err; mw_fail "viewer snapshot of $name"; }
    "$MW_PYTHON" - "$dir/$name.layout.json" "$dir/$name.meta.json" <<'PY' ||
import json, sys
d = json.load(open(sys.argv[1]))
t = json.load(open(sys.argv[2]))["topology"]["layout"]
kinds = [sum(1 for b in d["boxes"] if b[0] == k) for k in range(5)]
got = [t["planes"], t["packages"], t["l3"], t["cores"], t["pus"]]
assert t["nodes"] == d["nodes"] and t["ranks"] == len(d["ranks"]), (t, d["nodes"])
assert got == kinds, (got, kinds)
assert bool(t["fallback"]) == bool(d["fallback"]), t
PY
        mw_fail "$name: the viewer's layout counts differ from the dump's"
    "$MW_PYTHON" "$check" --pick-plan "$dir/$name.layout.json" "$dir/$name.meta.json" \
        >"$dir/$name.picks" || mw_fail "$name: no pick plan"
    local n=0 rank x y out
    while read -r rank x y; do
        out=$("$viewer" --replay "$dir/$name.mpiw" --view topology --window 0 --bundles off \
            --no-labels --camera 0,89 --size 1200x900 --snapshot "$dir/pick.png" \
            --pick "$x,$y" 2>/dev/null)
        case $out in
        *'"kind":"rank","rank":'"$rank"[,\}]*) n=$((n + 1)) ;;
        *) mw_fail "$name: a click at $x,$y (rank $rank in the viewer's layout) picked: $out" ;;
        esac
    done <"$dir/$name.picks"
    [ "$n" -ge 2 ] || mw_fail "$name: only $n rank(s) picked"
    mw_log "$name: $n ranks picked where the layout puts them"
}

mw_start_collector --exit-after-job --quiet --record "$dir/lg.mpiw" --silence-timeout-ms 30000
"$loadgen" --connect "$MW_EP" --ranks 37 --rate 10 --functions 6 --seconds 1 --nodes 5 \
    --job lglayout --seed 3 2>"$dir/loadgen.err" ||
    { MW_FAILURE_LOG=$dir/loadgen.err; mw_fail "mpiwatch-loadgen failed"; }
mw_collector_exits 20
same lg --nodes 5 --ranks 37 --hardware yes

"$synth" "$dir/t.mpiw" >/dev/null 2>"$dir/t.err" || mw_fail "topo-synth"
same t --nodes 4 --ranks 32 --hardware yes
"$synth" --no-hardware "$dir/h.mpiw" >/dev/null 2>"$dir/h.err" || mw_fail "topo-synth --no-hardware"
same h --nodes 4 --ranks 32 --hardware no

"$fixture" "$dir/full.mpiw" full || mw_fail "vtk_fixture full"
same full --nodes 4 --ranks 16 --hardware yes
"$fixture" "$dir/plain.mpiw" plain || mw_fail "vtk_fixture plain"
same plain --nodes 5 --ranks 16 --hardware no
mw_log "ok"
