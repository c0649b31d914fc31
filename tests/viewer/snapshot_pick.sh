#!/bin/bash
# snapshot_pick.sh VIEWER SYNTH PNGPROBE: clicking a long call names it.
#
# A "picking" recording (16 ranks on 4 hosts, 2 s, four long calls of known function, rank,
# start, duration, bytes and peer over a light background) drawn as the call view over the
# whole run (--repr start): a first snapshot gives the layout and axes, from which the pixel of
# each call's (start, duration) is computed; then --pick at that pixel must print that call
# (kind call, its function, rank, host, start, duration, bytes, peer).
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
"$MW_PYTHON" "$SV_CHECK" pick-target "$MW_T/pick.json" "$MW_T/pick.meta.json" \
    >"$MW_T/targets" || mw_fail "no pick targets"
i=0
while read -r x y; do
    sv_snap "pick$i" "$MW_T/pick.mpiw" "${args[@]}" --pick "$x,$y"
    sv_check pick "$MW_T/pick.json" "$i" "$MW_T/pick$i.out"
    i=$((i + 1))
done <"$MW_T/targets"
[ "$i" = 4 ] || mw_fail "$i pick targets, want 4"
mw_log "ok"
