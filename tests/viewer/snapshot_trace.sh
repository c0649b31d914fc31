#!/bin/bash
# snapshot_trace.sh VIEWER TRACE_SYNTH PNGPROBE: traced windows drawn exactly.
#
# mw-trace-synth writes 6 windows of 4 ranks with known per-call traces (windows 0 and 4
# summaries only). The call view (points by start, log and linear duration axes) must show each
# known call at the pixel computed here from its start and duration (x from the --range asked
# for, y from the duration axis in the meta) in its function's legend colour, nothing at a pixel
# with no call, and the summary windows marked. The per-rank timeline must draw the known
# message from the send's start in rank 0's row to the receive's end in rank 3's row, and the
# 30 ms MPI_Barrier as a span of its colour in rank 2's row. --pick at a traced call names it.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
mw_init viewer_snapshot_trace
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
CHECK="$(dirname "$0")/tracecheck.py"

sv_synth trace
for axis in log linear; do
    sv_snap "calls-$axis" "$MW_T/trace.mpiw" --view density --size 1280x800 --repr start \
        --range 0:0.6 --duration-axis "$axis"
    "$MW_PYTHON" "$CHECK" calls "$MW_T/trace.json" "$MW_T/calls-$axis.meta.json" "$SV_PROBE" \
        "$MW_T/calls-$axis.png" "$axis" >"$MW_T/calls-$axis.targets" ||
        mw_fail "call view ($axis axis): the traced calls are not where they must be"
done
sv_snap ranks "$MW_T/trace.mpiw" --view ranks --size 1280x800 --range 0:0.6
"$MW_PYTHON" "$CHECK" ranks "$MW_T/trace.json" "$MW_T/ranks.meta.json" "$SV_PROBE" \
    "$MW_T/ranks.png" || mw_fail "rank timeline: spans or message not where they must be"
# Picking the Barrier at its pixel (first line of the log axis' targets).
read -r x y <"$MW_T/calls-log.targets"
sv_snap pick "$MW_T/trace.mpiw" --view density --size 1280x800 --repr start --range 0:0.6 \
    --pick "$x,$y"
if ! grep -q '"fn":"MPI_Barrier"' "$MW_T/pick.out" || ! grep -q '"rank":2' "$MW_T/pick.out" ||
    ! grep -q '"traced":true' "$MW_T/pick.out"; then
    mw_fail "picking the traced MPI_Barrier: $(cat "$MW_T/pick.out")"
fi
mw_log "ok"
