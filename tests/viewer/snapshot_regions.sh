#!/bin/bash
# snapshot_regions.sh VIEWER REGIONS_SYNTH PNGPROBE: code regions, call sites, per-function links
# and the spread across ranks in the viewer (docs/viewer.md, "Code regions, call sites,
# per-function links").
#
# mw-regions-synth writes 6 windows of 8 ranks with known regions (solve, exchange, io), call
# sites of MPI_Allreduce, per-rank region times and per-function pairs (MPI_Isend to r + 1,
# MPI_Send to r - 1), and prints the expected values. regionscheck.py compares the --meta and
# the PNG with them: the timeline in region mode (each window's share per region, the stacked
# tops and the layer colours at their pixels, the clamped last window, the legend), a region
# picked in the legend, the details of MPI_Allreduce (its sites sorted by time with file, line,
# share and top rank, its spread), the topology coloured by solve's exclusive and inclusive time
# (each rank's value and its marker's colour) with the links of one sending function, and the
# matrix of MPI_Send only.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
mw_init viewer_snapshot_regions
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
CHECK="$(dirname "$0")/regionscheck.py"
EXP=$MW_T/regions.json

"$SV_SYNTH" "$MW_T/regions.mpiw" >"$EXP" 2>"$MW_T/synth.err" || mw_fail "mw-regions-synth failed"
REC=$MW_T/regions.mpiw

sv_snap timeline "$REC" --view timeline --timeline regions --size 1280x800 \
    --highlight-fn MPI_Allreduce
"$MW_PYTHON" "$CHECK" timeline "$EXP" "$MW_T/timeline.meta.json" "$SV_PROBE" \
    "$MW_T/timeline.png" || mw_fail "timeline in region mode"

# A click on the legend's second row (exchange) highlights that region.
read -r px py < <("$MW_PYTHON" "$CHECK" legend-row "$MW_T/timeline.meta.json" 1)
sv_snap pick "$REC" --view timeline --timeline regions --size 1280x800 --pick "$px,$py"
"$MW_PYTHON" "$CHECK" picked "$EXP" "$MW_T/pick.meta.json" "$SV_PROBE" "$MW_T/pick.png" ||
    mw_fail "picking a region in the legend"

for mode in excl incl; do
    sv_snap "topo-$mode" "$REC" --view topology --size 1280x800 --window 0 --camera 0,89 \
        --rank-color "$mode:1" --link-fn MPI_Isend
    "$MW_PYTHON" "$CHECK" topology "$EXP" "$MW_T/topo-$mode.meta.json" "$SV_PROBE" \
        "$MW_T/topo-$mode.png" "$mode" MPI_Isend || mw_fail "topology by solve's $mode time"
done
sv_snap topo-send "$REC" --view topology --size 1280x800 --window 0 --link-fn MPI_Send
"$MW_PYTHON" "$CHECK" links "$EXP" "$MW_T/topo-send.meta.json" MPI_Send ||
    mw_fail "topology: MPI_Send's links"
sv_snap topo-all "$REC" --view topology --size 1280x800 --window 0
"$MW_PYTHON" "$CHECK" links "$EXP" "$MW_T/topo-all.meta.json" all || mw_fail "topology: all links"
sv_snap matrix "$REC" --view matrix --size 1280x800 --window 0 --link-fn MPI_Send
"$MW_PYTHON" "$CHECK" matrix "$EXP" "$MW_T/matrix.meta.json" "$SV_PROBE" "$MW_T/matrix.png" ||
    mw_fail "matrix of MPI_Send"
mw_log "ok"
