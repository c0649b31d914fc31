#!/usr/bin/env bash
# failopen_stdout: with a live collector and MPIWATCH_VERBOSE unset, the library writes
# nothing: the job's stdout and stderr are byte-identical to a run without it.
. "$(dirname "$0")/lib.sh"
fo_setup failopen_stdout needs-collector
app=("$MW_FO_BIN/failopen_app" 0)

fo_run base "${FO_MPI[@]}" "${app[@]}"
fo_expect_status base 0
fo_start_collector --quiet --exit-after-job
fo_lib "$MW_EP"
fo_run with "${FO_LIB[@]}" "${app[@]}"
fo_same with base
fo_same_stderr base with
mw_stop_collector 15
fo_ranks_reported
mw_log "ok"
