#!/bin/bash
# snapshot_matrix.sh VIEWER TOPO-SYNTH PNGPROBE: the communication matrix shows the pairs.
#
# A topo-synth recording (32 ranks on 4 nodes) drawn with --view matrix: window 0 must be 32 x 32
# cells summing to the window's messages and bytes, with node boundaries after every 8 ranks;
# the known pair (0, 9), the window's largest, must have the scale's maximum color, as the
# legend bar's right end; clicking its cell (--pick) must name it with its messages and bytes.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
mw_init viewer_snapshot_matrix
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
TC="$(dirname "$0")/topocheck.py"

"$SV_SYNTH" "$MW_T/t.mpiw" >"$MW_T/t.json" 2>"$MW_T/t.err" || mw_fail "topo-synth failed"
tc() { "$MW_PYTHON" "$TC" "$@" || mw_fail "check $1 failed (see above)"; }

sv_snap mx "$MW_T/t.mpiw" --view matrix --window 0
tc matrix "$SV_PROBE" "$MW_T/t.json" "$MW_T/mx.meta.json" "$MW_T/mx.png" 0
xy=$("$MW_PYTHON" "$TC" target "$SV_PROBE" "$MW_T/t.json" "$MW_T/mx.meta.json" "$MW_T/mx.png") ||
    mw_fail "no target"
sv_snap mxpick "$MW_T/t.mpiw" --view matrix --window 0 --pick "$xy"
tc mxpick "$SV_PROBE" "$MW_T/t.json" "$MW_T/mxpick.meta.json" "$MW_T/mxpick.png" 0 \
    "$MW_T/mxpick.out"
mw_log "ok"
