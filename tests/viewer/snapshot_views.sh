#!/bin/bash
# snapshot_views.sh VIEWER SYNTH PNGPROBE: every view renders at every size.
#
# The "outlier" recording (a dense cluster and one long call: both plots have content) drawn
# as timeline, density and all, at 800x600 and 1920x1080: each snapshot exits 0 and writes a
# PNG of the requested size that is not blank, and a meta JSON whose rects of the shown plots,
# legend, title and status lie inside the image and are not empty, with something drawn in
# the plots.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
mw_init viewer_snapshot_views
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sv_synth views --pattern outlier --ranks 16 --windows 20
for view in timeline density all; do
    for size in 800x600 1920x1080; do
        n=${view}_$size
        sv_snap "$n" "$MW_T/views.mpiw" --view "$view" --size "$size"
        sv_check views "$SV_PROBE" "$MW_T/$n.meta.json" "$MW_T/$n.png" "$view" "${size%x*}" \
            "${size#*x}"
    done
done
mw_log "ok"
