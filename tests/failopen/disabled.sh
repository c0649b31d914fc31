#!/usr/bin/env bash
# failopen_disabled: MPIWATCH_DISABLE=1 makes the library inert although a collector is
# listening: the collector receives nothing (not even a hello) and the job's output and exit
# status are unchanged.
. "$(dirname "$0")/lib.sh"
fo_setup failopen_disabled needs-collector
app=("$MW_FO_BIN/failopen_app" 3 100)

fo_run base "${FO_MPI[@]}" "${app[@]}"
fo_expect_status base 3
fo_start_collector --quiet
fo_lib "$MW_EP"
fo_run with env MPIWATCH_DISABLE=1 "${FO_LIB[@]}" -x MPIWATCH_DISABLE "${app[@]}"
sleep 0.5 # anything the ranks might have sent has arrived by now
mw_stop_collector 0
fo_same with base
fo_nothing_received
mw_log "ok"
