#!/bin/bash
# snapshot_tier.sh VIEWER SYNTH PNGPROBE COLLECTOR LOADGEN: the status bar names the tier of
# what is shown (docs/viewer.md, "Status bar"; HistoryReply.tier, docs/recording.md "Tiers").
#
#   1. a replay of a synthetic recording: tier "windows" (the recording's merged windows);
#   2. live, a collector's feed and history after a load generator job: the windows paged in
#      come from the history's memory, tier "memory";
#   3. a replay of a recording whose early full windows were dropped (--record-full-span 1):
#      tier "windows+coarse" (lean copies of the early windows, docs/recording.md "Tiers").
# Each snapshot's meta says the tier, the status bar's text as drawn holds "tier: NAME", and the
# pixel columns where the tier was drawn hold text: pixels of the status bar that are not its
# background (mw-pngprobe), as many as a word has.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
mw_init viewer_snapshot_tier
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
MW_COLLECTOR=$4
loadgen=$5
[ -x "$MW_COLLECTOR" ] || mw_fail "the collector is not built: $MW_COLLECTOR"
[ -x "$loadgen" ] || mw_fail "the load generator is not built: $loadgen"

# check NAME TIER: the meta and the pixels of snapshot NAME.
check() {
    local name=$1 want=$2
    "$MW_PYTHON" - "$MW_T/$name.meta.json" "$want" >"$MW_T/$name.rect" <<'PY' ||
import json, sys
m = json.load(open(sys.argv[1]))
want = sys.argv[2]
st = m.get("status", {})
errors = []
if st.get("tier") != want:
    errors.append(f"meta tier {st.get('tier')!r}, expected {want!r}")
if f"tier: {want}" not in st.get("text", ""):
    errors.append(f"status bar text {st.get('text')!r} does not name the tier")
r = m["layout"]["status"]
x0, x1 = int(st.get("tier_x0", 0)), int(st.get("tier_x1", 0))
if not (r["x"] <= x0 < x1 <= r["x"] + r["w"]):
    errors.append(f"tier drawn at columns {x0}-{x1}, outside the status bar {r}")
for e in errors:
    print("FAIL:", e, file=sys.stderr)
print(x0, r["y"], x1, r["y"] + r["h"] - 1, r["x"] + 1, r["y"] + 1)
sys.exit(1 if errors else 0)
PY
        mw_fail "$name: the meta does not show tier $want"
    local x0 y0 x1 y1 bx by bg total same
    read -r x0 y0 x1 y1 bx by <"$MW_T/$name.rect"
    bg=$("$SV_PROBE" "$MW_T/$name.png" pixel "$bx" "$by") || mw_fail "$name: cannot read the PNG"
    # shellcheck disable=SC2086 # "R G B"
    same=$("$SV_PROBE" "$MW_T/$name.png" count $bg 12 "$x0" "$y0" "$x1" "$y1") ||
        mw_fail "$name: cannot count pixels"
    total=$(((x1 - x0 + 1) * (y1 - y0 + 1)))
    mw_log "$name: tier '$want' drawn at columns $x0-$x1: $((total - same)) of $total pixels are text"
    [ $((total - same)) -ge 30 ] || mw_fail "$name: no text where the tier is said to be drawn"
}

# ---- 1. replay -----------------------------------------------------------------------------
sv_synth tier --pattern outlier --ranks 16 --windows 20
sv_snap replay "$MW_T/tier.mpiw" --view timeline --size 1280x720
check replay windows

# ---- 2. live, from the history's memory ---------------------------------------------------------
pub="ipc://$MW_T/pub"
hist="ipc://$MW_T/hist"
mw_start_collector --quiet --publish "$pub" --history "$hist" --silence-timeout-ms 30000
"$loadgen" --connect "$MW_EP" --ranks 16 --rate 10 --functions 4 --seconds 2 --nodes 2 \
    --job tierlive --seed 3 2>"$MW_T/loadgen.err" ||
    { MW_FAILURE_LOG=$MW_T/loadgen.err; mw_fail "mpiwatch-loadgen failed"; }
"$SV_VIEWER" --connect "$pub" --history "$hist" --snapshot "$MW_T/live.png" \
    --meta "$MW_T/live.meta.json" --view timeline --size 1280x720 \
    >"$MW_T/live.out" 2>"$MW_T/live.err" ||
    { MW_FAILURE_LOG=$MW_T/live.err; mw_fail "the live snapshot failed"; }
mw_stop_collector 2
check live memory

# ---- 3. replay of a tiered recording: early windows from the coarse tier ---------------------
# Full windows older than 1 s are dropped with their samples; the replay reads those windows'
# lean copies and the last second's full windows: both tiers are named.
mw_start_collector --quiet --record "$MW_T/tiered.mpiw" --record-full-span 1 \
    --record-keep-around 0 --silence-timeout-ms 30000
"$loadgen" --connect "$MW_EP" --ranks 16 --rate 10 --functions 4 --seconds 4 --nodes 2 \
    --job tiertiered --seed 5 2>"$MW_T/loadgen2.err" ||
    { MW_FAILURE_LOG=$MW_T/loadgen2.err; mw_fail "mpiwatch-loadgen failed"; }
mw_stop_collector 2
sv_snap tiered "$MW_T/tiered.mpiw" --view timeline --size 1280x720
check tiered windows+coarse
mw_log "ok"
