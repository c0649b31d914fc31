#!/bin/bash
# snapshot_pick.sh VIEWER SYNTH PNGPROBE: clicking a long call names it.
#
# A "picking" recording (16 ranks on 4 hosts, 2 s, four long calls of known function, rank,
# start, duration, bytes and peer over a light background) drawn as the call view over the
# whole run (--repr start). The pixel of each call's (start, duration) is computed without the
# viewer's axes: x from the --range the test asks for, y from the duration axis that
# docs/viewer.md defines over the calls mw-synth wrote (only the plot's rectangle is taken from
# the first snapshot's meta, whose ranges must equal those). The PNG must show the call's
# function color at that pixel, and --pick there must print that call (kind call, its
# function, rank, host, start, duration, bytes, peer).
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
mw_init viewer_snapshot_pick
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sv_synth pick --pattern picking --ranks 16 --windows 20 --hosts 4
dur=$("$MW_PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["duration_s"])' \
    "$MW_T/pick.json")
args=(--view density --size 1280x800 --repr start --range "0:$dur")
sv_snap pick "$MW_T/pick.mpiw" "${args[@]}"
"$MW_PYTHON" "$SV_CHECK" pick-target "$MW_T/pick.json" "$MW_T/pick.meta.json" "$SV_PROBE" \
    "$MW_T/pick.png" 0 "$dur" >"$MW_T/targets" || mw_fail "the long calls are not where they must be"
i=0
while read -r x y; do
    sv_snap "pick$i" "$MW_T/pick.mpiw" "${args[@]}" --pick "$x,$y"
    sv_check pick "$MW_T/pick.json" "$i" "$MW_T/pick$i.out"
    i=$((i + 1))
done <"$MW_T/targets"
[ "$i" = 4 ] || mw_fail "$i pick targets, want 4"
mw_log "ok"
