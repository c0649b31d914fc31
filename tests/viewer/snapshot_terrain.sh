#!/bin/bash
# snapshot_terrain.sh VIEWER MW-SYNTH PNGPROBE: the terrain view against known per-rank values.
#
# mw-synth --pattern terrain writes merged windows whose per-rank figures per function and code
# region are stated once (tests/viewer/terrain_values.h) and prints, for the whole run, the
# columns by total and the five largest cells. The viewer draws the whole run (--range) as a 3D
# field and as a heat map, for functions and regions, at 16 ranks and at 16,384 ranks (rows
# aggregating ranks, the maximum shown): terraincheck.py compares the meta with those numbers,
# the PNG's pixels with the meta (the largest cell in the scale's top colour where the meta
# says, a non-empty plot, the colour bar), and --pick on the largest cell with that cell and
# the highlighted rank.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
mw_init viewer_snapshot_terrain
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
TC="$(dirname "$0")/terraincheck.py"
tc() { "$MW_PYTHON" "$TC" "$@" || mw_fail "check $1 failed (see above)"; }

sv_synth small --pattern terrain --ranks 16 --windows 5 --functions 24
sv_synth big --pattern terrain --ranks 16384 --windows 2 --functions 20

# The whole run of each recording.
all_small=(--range 0:0.5)
all_big=(--range 0:0.2)

sv_snap f3d "$MW_T/small.mpiw" --view terrain "${all_small[@]}"
tc meta "$MW_T/small.json" "$MW_T/f3d.meta.json" functions
tc pixels "$SV_PROBE" "$MW_T/f3d.meta.json" "$MW_T/f3d.png"

sv_snap fheat "$MW_T/small.mpiw" --view terrain --terrain functions,heatmap "${all_small[@]}"
tc meta "$MW_T/small.json" "$MW_T/fheat.meta.json" functions
tc pixels "$SV_PROBE" "$MW_T/fheat.meta.json" "$MW_T/fheat.png"

sv_snap r3d "$MW_T/small.mpiw" --view terrain --terrain regions "${all_small[@]}"
tc meta "$MW_T/small.json" "$MW_T/r3d.meta.json" regions
tc pixels "$SV_PROBE" "$MW_T/r3d.meta.json" "$MW_T/r3d.png"

sv_snap b3d "$MW_T/big.mpiw" --view terrain "${all_big[@]}"
tc meta "$MW_T/big.json" "$MW_T/b3d.meta.json" functions
tc pixels "$SV_PROBE" "$MW_T/b3d.meta.json" "$MW_T/b3d.png"

sv_snap bheat "$MW_T/big.mpiw" --view terrain --terrain functions,heatmap "${all_big[@]}"
tc meta "$MW_T/big.json" "$MW_T/bheat.meta.json" functions
tc pixels "$SV_PROBE" "$MW_T/bheat.meta.json" "$MW_T/bheat.png"

# --pick on the largest cell, where the meta drew it, in both modes.
for m in f3d bheat r3d; do
    xy=$("$MW_PYTHON" -c 'import json, sys
t = json.load(open(sys.argv[1]))["terrain"]["top"][0]["px"]
print(f"{round(t[0])},{round(t[1])}")' "$MW_T/$m.meta.json") || mw_fail "no top cell in $m"
    heat=functions,heatmap
    case $m in
        f3d) rec=small args=() what=functions ;;
        bheat) rec=big args=(--terrain "$heat") what=functions ;;
        r3d) rec=small args=(--terrain regions) what=regions ;;
    esac
    range=("${all_small[@]}")
    [ "$rec" = big ] && range=("${all_big[@]}")
    sv_snap "pick_$m" "$MW_T/$rec.mpiw" --view terrain "${args[@]}" "${range[@]}" --pick "$xy"
    tc pick "$MW_T/pick_$m.out" "$MW_T/pick_$m.meta.json" "$MW_T/$rec.json" "$what"
done
mw_log "ok"
