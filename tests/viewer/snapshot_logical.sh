#!/bin/bash
# snapshot_logical.sh VIEWER COLLECTOR LIBRARY PROGRAM MPIRUN PNGPROBE SYNTH VTK_FIXTURE: the
# logical view (docs/viewer.md, "Logical view") on the recording of a real job.
#
# tests/programs/logical_patterns `ring` runs on 4 ranks with the library preloaded and a
# collector recording; rank 2 sleeps 150 ms once, before its send of iteration 3. The viewer
# replays the recording offscreen with --view logical over the whole run (logicalcheck.py):
#   - by differential lateness: the marker of the largest differential lateness is on rank 2's
#     row, at least half the delay, framed in white on a cell of the scale's top colour; exactly
#     one cell has a differential lateness of half the delay or more; every cell is in its
#     colour of the scale; the message lines and the barriers' collective lines are drawn;
#   - by lateness: the delay propagates (at least two late cells), each cell in its colour;
#   - differential lateness over time per rank (--lateness diff,strip): the scale's top colour
#     along rank 2's row, nowhere else;
#   - a click on the marker picks that event (rank, step) and the per-rank timeline above
#     frames the picked rank; a click on that call in the per-rank timeline selects its event
#     in the logical plot (the two plots are linked both ways).
# A recording without traces (mw-synth) draws no event and no colour of the scale, and a
# recording with a job and no window (vtk_fixture empty) ends the snapshot with the viewer's
# message, not a crash.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
viewer=$1
MW_COLLECTOR=$2
lib=$3
prog=$4
mpirun=$5
probe=$6
synth=$7
fixture=$8
mw_init viewer_snapshot_logical
mw_mpi_env
for f in "$viewer" "$prog" "$probe" "$synth" "$fixture"; do
    [ -x "$f" ] || mw_fail "not built: $f"
done
[ -r "$lib" ] || mw_fail "library not built: $lib"
export SDL_VIDEODRIVER=offscreen MPIWATCH_WINDOW_MS=50
unset DISPLAY WAYLAND_DISPLAY
CHECK="$(dirname "$0")/logicalcheck.py"
PY=${MW_PYTHON:-/usr/bin/python3}
RANK=2
DELAY=150

mw_start_collector --exit-after-job --summary-json "$MW_T/summary.json" --record "$MW_T/r.mpiw"
"$mpirun" --oversubscribe -np 4 -x LD_PRELOAD="$lib" -x MPIWATCH_COLLECTOR="$MW_EP" \
    -x MPIWATCH_WINDOW_MS "$prog" ring -n 8 -d "$DELAY" -r "$RANK" -i 3 \
    >"$MW_T/job.out" 2>"$MW_T/job.err" ||
    { MW_FAILURE_LOG=$MW_T/job.err; mw_fail "the ring job failed"; }
grep -q "^logical_patterns ring ranks=4" "$MW_T/job.out" || mw_fail "the job did not report"
mw_collector_exits 30

# snap NAME RECORDING ARGS...: a snapshot and its meta; the viewer's status in $rc.
snap() {
    local name=$1 rec=$2
    shift 2
    rc=0
    "$viewer" --replay "$rec" --snapshot "$MW_T/$name.png" --meta "$MW_T/$name.meta.json" \
        --size 1280x800 "$@" >"$MW_T/$name.out" 2>"$MW_T/$name.err" || rc=$?
    if grep -qiE "offscreen.*(not available|unavailable)|no available video device|EGL not" \
        "$MW_T/$name.err"; then
        mw_no_display "$(head -n 3 "$MW_T/$name.err")"
    fi
}
ok_snap() {
    local name=$1
    snap "$@"
    if [ "$rc" != 0 ] || [ ! -s "$MW_T/$name.png" ] || [ ! -s "$MW_T/$name.meta.json" ]; then
        MW_FAILURE_LOG=$MW_T/$name.err
        mw_fail "snapshot $name: status $rc"
    fi
}

# The whole run: the end of the timeline of a first snapshot.
ok_snap first "$MW_T/r.mpiw" --view logical
end=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["timeline"]["t1"])' \
    "$MW_T/first.meta.json")
ok_snap diff "$MW_T/r.mpiw" --view logical --range "0:$end" --lateness diff
"$PY" "$CHECK" traced "$MW_T/diff.meta.json" "$MW_T/diff.png" "$probe" "$RANK" "$DELAY" diff ||
    mw_fail "logical view by differential lateness (above)"
ok_snap late "$MW_T/r.mpiw" --view logical --range "0:$end"
"$PY" "$CHECK" traced "$MW_T/late.meta.json" "$MW_T/late.png" "$probe" "$RANK" "$DELAY" \
    lateness || mw_fail "logical view by lateness (above)"

# Differential lateness over time per rank in the upper plot.
ok_snap strip "$MW_T/r.mpiw" --view logical --range "0:$end" --lateness diff,strip
"$PY" "$CHECK" strip "$MW_T/strip.meta.json" "$MW_T/strip.png" "$probe" "$RANK" ||
    mw_fail "lateness over time per rank (above)"

# Linked: a click on the marker.
read -r mx my step < <("$PY" -c 'import json,sys
m = json.load(open(sys.argv[1]))["trace"]["logical_view"]["marker"]
print(int(m["x"]), int(m["y"]), m["step"])' "$MW_T/diff.meta.json")
ok_snap pick "$MW_T/r.mpiw" --view logical --range "0:$end" --lateness diff --pick "$mx,$my"
"$PY" "$CHECK" linked "$MW_T/pick.meta.json" "$MW_T/pick.png" "$probe" "$MW_T/pick.out" \
    "$RANK" "$step" || mw_fail "picking the marked event (above)"

# And the other way: a click on that call in the per-rank timeline above selects its event.
read -r cx cy < <("$PY" -c 'import json,sys
m = json.load(open(sys.argv[1])); p = json.load(open(sys.argv[2]))
r = m["trace"]["logical_view"]["ranks_plot"]; d = m["density"]; R = int(sys.argv[3])
x = r["x"] + (p["start_s"] - d["t0"]) / (d["t1"] - d["t0"]) * r["w"]
y = r["y"] + (R * r["h"] // 4 + (R + 1) * r["h"] // 4) / 2
print(int(x), int(y))' "$MW_T/pick.meta.json" "$MW_T/pick.out" "$RANK")
ok_snap back "$MW_T/r.mpiw" --view logical --range "0:$end" --lateness diff --pick "$cx,$cy"
"$PY" - "$MW_T/back.meta.json" "$MW_T/back.out" "$RANK" <<'PYEOF' ||
import json, sys
m, p, rank = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
sel = m["trace"]["logical_view"].get("selected")
print(f"per-rank timeline pick: {p['fn']} of rank {p['rank']}; selected in the logical view: {sel}")
ok = p["kind"] == "call" and p["rank"] == rank and not p.get("step") and sel and sel["rank"] == rank
sys.exit(0 if ok else "the call picked in the per-rank timeline is not selected in the logical view")
PYEOF
    mw_fail "picking in the per-rank timeline (above)"

# No traces; no window at all.
"$synth" --windows 6 "$MW_T/plain.mpiw" >/dev/null 2>"$MW_T/synth.err" || mw_fail "mw-synth"
ok_snap plain "$MW_T/plain.mpiw" --view logical --range 0:0.6
"$PY" "$CHECK" untraced "$MW_T/plain.meta.json" "$MW_T/plain.png" "$probe" ||
    mw_fail "logical view of a recording without traces (above)"
"$fixture" "$MW_T/empty.mpiw" empty || mw_fail "vtk_fixture empty"
snap empty "$MW_T/empty.mpiw" --view logical
if [ "$rc" != 1 ] || ! grep -q "did not all arrive" "$MW_T/empty.err"; then
    MW_FAILURE_LOG=$MW_T/empty.err
    mw_fail "empty recording: status $rc, want 1 and why"
fi
mw_log "ok"
