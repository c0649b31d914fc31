#!/bin/bash
# snapshot_scale.sh VIEWER TOPO-SYNTH PNGPROBE: the topology and matrix views at 100,000 ranks.
#
# A topo-synth recording of 100,000 ranks on 800 nodes (125 ranks a node, 2 packages x 2 L3 x
# 16 cores x 4 PUs, 6 partners a rank: 600,001 pairs and 4,000 node pairs a window, 2 windows)
# drawn whole (scalecheck.py computes every expectation from topo-synth's stated pattern, not
# from the viewer):
#   topology  the 2,000 heaviest node bundles drawn and the others left out (the lightest drawn
#             and heaviest left out are the computed 2,000th and 2,001st weights), drawn
#             curves in their colours, rank markers aggregated per node cell with rank 0's in
#             the rank scale's maximum colour, and the viewer's peak RSS under 512 MB
#   matrix    binned to the plot's pixels: bins, cells, sums and the largest cell as computed,
#             in the scale's maximum colour; node boundaries thinned to 6 px or more apart
#   cache     --cache-mb 20 (less than the two windows): one window kept, counted at no less
#             than its pairs' arrays and no more than the budget
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
mw_init viewer_snapshot_scale
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
SC="$(dirname "$0")/scalecheck.py"
RSS_MAX_MB=512
# Under ASan the viewer's pages hold shadow memory and a quarantine of freed blocks as well
# (679 MB measured where the uninstrumented viewer peaks under 400 MB): the 512 MB bound is
# the uninstrumented run's, a sanitized one is held to three times it.
if mw_sanitized "$SV_VIEWER"; then
    RSS_MAX_MB=1536
fi

"$SV_SYNTH" --ranks 100000 --nodes 800 --packages 2 --l3 2 --cores 16 --pus 4 --partners 6 \
    --windows 2 --steps 1 "$MW_T/big.mpiw" >"$MW_T/big.json" 2>"$MW_T/big.err" ||
    mw_fail "topo-synth failed"
sc() { "$MW_PYTHON" "$SC" "$@" || mw_fail "check $1 failed (see above)"; }

# The topology snapshot's peak RSS: the viewer run through scalecheck.py's rss wrapper.
real_viewer=$SV_VIEWER
cat >"$MW_T/viewer-rss" <<WRAP
#!/bin/bash
exec "$MW_PYTHON" "$SC" rss "$MW_T/topo.rss" -- "$real_viewer" "\$@"
WRAP
chmod +x "$MW_T/viewer-rss"
SV_VIEWER=$MW_T/viewer-rss
sv_snap topo "$MW_T/big.mpiw" --view topology --window 0
SV_VIEWER=$real_viewer
sc topo "$SV_PROBE" "$MW_T/big.json" "$MW_T/topo.meta.json" "$MW_T/topo.png" "$MW_T/topo.rss" \
    "$RSS_MAX_MB"

sv_snap mx "$MW_T/big.mpiw" --view matrix --window 0
sc matrix "$SV_PROBE" "$MW_T/big.json" "$MW_T/mx.meta.json" "$MW_T/mx.png"

sv_snap cache "$MW_T/big.mpiw" --view topology --window 0 --cache-mb 20
sc cache "$MW_T/cache.meta.json" "$MW_T/big.json" 20
mw_log "ok"
