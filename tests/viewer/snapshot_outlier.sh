#!/bin/bash
# snapshot_outlier.sh VIEWER SYNTH PNGPROBE: one long call stays visible next to a million
# short ones.
#
# An "outlier" recording (16 ranks, 2 s: about 1e6 MPI_Test calls of 1.5 us within 0.2 s, and
# one 200 ms MPI_Barrier on rank 3) drawn offscreen as the call view over the whole run, with the
# linear and the log transfer and two values of o_min: the pixel at the barrier's (start,
# duration) is drawn in MPI_Barrier's legend color at an opacity of at least o_min, while the
# cluster's density maximum (Dmax) is in the hundreds or more.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
mw_init viewer_snapshot_outlier
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sv_synth outlier --pattern outlier --ranks 16 --windows 20
dur=$("$MW_PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["duration_s"])' \
    "$MW_T/outlier.json")
for transfer in linear log; do
    for omin in 0.15 0.3; do
        n=outlier_${transfer}_$omin
        sv_snap "$n" "$MW_T/outlier.mpiw" --view density --size 1280x800 --repr start \
            --transfer "$transfer" --omin "$omin" --range "0:$dur"
        sv_check outlier "$SV_PROBE" "$MW_T/outlier.json" "$MW_T/$n.meta.json" "$MW_T/$n.png" \
            "$omin"
    done
done
# With both plots the call view is smaller: the outlier must still show.
sv_snap outlier_all "$MW_T/outlier.mpiw" --view all --size 800x600 --repr start \
    --transfer linear --omin 0.15 --range "0:$dur"
sv_check outlier "$SV_PROBE" "$MW_T/outlier.json" "$MW_T/outlier_all.meta.json" \
    "$MW_T/outlier_all.png" 0.15
mw_log "ok"
