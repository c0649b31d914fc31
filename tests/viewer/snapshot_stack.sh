#!/bin/bash
# snapshot_stack.sh VIEWER SYNTH PNGPROBE: the timeline's stacked layers are the known
# fractions of the ranks.
#
# A "stack" recording (16 ranks, 2 s: every rank 40% of each sub-slot in MPI_Waitall, 25% in
# MPI_Allreduce, 10% in MPI_Send) drawn offscreen at 1280x800 with every view: in three
# columns of the timeline plot the run of each function's legend color is that fraction of the
# plot's height within 1 pixel, the stack tops out at 75% of it, and each legend row shows its
# function's swatch (with the function's share of MPI time). Also at 1920x1080, timeline only.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
mw_init viewer_snapshot_stack
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sv_synth stack --pattern stack --ranks 16 --windows 20
sv_snap stack "$MW_T/stack.mpiw" --view all --size 1280x800
sv_check stack "$SV_PROBE" "$MW_T/stack.json" "$MW_T/stack.meta.json" "$MW_T/stack.png"
sv_snap stack_tl "$MW_T/stack.mpiw" --view timeline --size 1920x1080
sv_check stack "$SV_PROBE" "$MW_T/stack.json" "$MW_T/stack_tl.meta.json" "$MW_T/stack_tl.png"
mw_log "ok"
