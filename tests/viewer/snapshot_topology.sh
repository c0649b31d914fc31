#!/bin/bash
# snapshot_topology.sh VIEWER TOPO-SYNTH PNGPROBE: the 3D topology view draws the window's pairs.
#
# A topo-synth recording (32 ranks on 4 nodes of 2 packages x 4 cores x 2 PUs, 4 windows of
# known pairs, 3 time steps) drawn with --view topology: window 1 as rank lines must show
# exactly its pairs (intra- and inter-node counts, totals, color scale min and max) and have
# pixels of the sampled intra- and inter-node lines' colors where they are drawn, and the legend
# bar; node bundles must sum to the same totals; the periodic option splits the wrap-around
# pairs; --step shows a time step; a recording without hardware falls back to planes by host.
# Where rank 0 is drawn is checked without the viewer's meta (topocheck.py orbit): nearly
# top-down at yaw 0 in the top-left corner of the scene, and at yaw 180 and 90 where the orbit
# about the scene's centre must put it.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
mw_init viewer_snapshot_topology
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
TC="$(dirname "$0")/topocheck.py"

"$SV_SYNTH" "$MW_T/t.mpiw" >"$MW_T/t.json" 2>"$MW_T/t.err" || mw_fail "topo-synth failed"
"$SV_SYNTH" --no-hardware "$MW_T/h.mpiw" >"$MW_T/h.json" 2>"$MW_T/h.err" ||
    mw_fail "topo-synth --no-hardware failed"
tc() { "$MW_PYTHON" "$TC" "$@" || mw_fail "check $1 failed (see above)"; }

sv_snap lines "$MW_T/t.mpiw" --view topology --window 1 --bundles off --camera 0,60
tc lines "$SV_PROBE" "$MW_T/t.json" "$MW_T/lines.meta.json" "$MW_T/lines.png" 1
tc legend "$SV_PROBE" "$MW_T/t.json" "$MW_T/lines.meta.json" "$MW_T/lines.png"

for yaw in 0 180 90; do
    sv_snap "yaw$yaw" "$MW_T/t.mpiw" --view topology --window 1 --bundles on --no-labels \
        --camera "$yaw,89"
done
tc orbit "$SV_PROBE" "$MW_T/t.json" "$MW_T/yaw0.meta.json" "$MW_T/yaw0.png" \
    "$MW_T/yaw180.meta.json" "$MW_T/yaw180.png" "$MW_T/yaw90.meta.json" "$MW_T/yaw90.png"

sv_snap bytes "$MW_T/t.mpiw" --view topology --window 2 --bundles off --color bytes
tc lines "$SV_PROBE" "$MW_T/t.json" "$MW_T/bytes.meta.json" "$MW_T/bytes.png" 2

sv_snap bundles "$MW_T/t.mpiw" --view topology --window 0 --bundles on
tc bundles "$SV_PROBE" "$MW_T/t.json" "$MW_T/bundles.meta.json" "$MW_T/bundles.png" 0

# Periodic: every pair further apart than half the job becomes two stubs.
sv_snap periodic "$MW_T/t.mpiw" --view topology --window 0 --bundles off --periodic
"$MW_PYTHON" - "$MW_T/periodic.meta.json" <<'PY' || mw_fail "periodic stubs"
import json, sys
t = json.load(open(sys.argv[1]))["topology"]
ln = t["lines"]
assert ln["periodic"] > 0, ln
assert t["curves"] == ln["pairs"] + ln["periodic"], (t["curves"], ln)
PY

# A time step: the ring pairs (r, r + 1) with 2 messages each.
sv_snap step "$MW_T/t.mpiw" --view topology --step 2 --bundles off
"$MW_PYTHON" - "$MW_T/step.meta.json" <<'PY' || mw_fail "step 2 not shown"
import json, sys
t = json.load(open(sys.argv[1]))["topology"]
assert t["step_mode"] and t["step"] == 2 and t["steps_kept"] == 3, t
assert t["lines"]["pairs"] == 32 and t["lines"]["messages"] == 64, t["lines"]
PY

# No hardware in the recording: one plane per host, the same lines.
sv_snap nohw "$MW_T/h.mpiw" --view topology --window 1 --bundles off
"$MW_PYTHON" - "$MW_T/nohw.meta.json" "$MW_T/h.json" <<'PY' || mw_fail "fallback layout"
import json, sys
t = json.load(open(sys.argv[1]))["topology"]
w = json.load(open(sys.argv[2]))["windows"][1]
assert t["layout"]["fallback"] and t["layout"]["nodes"] == 4 and t["layout"]["pus"] == 0, t
assert t["lines"]["intra"] == w["intra"] and t["lines"]["inter"] == w["inter"], t["lines"]
PY
mw_log "ok"
