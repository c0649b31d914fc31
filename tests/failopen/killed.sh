#!/usr/bin/env bash
# failopen_killed: the collector is killed with SIGKILL while the job runs: same stdout and
# exit status as without the library, and MPI_Finalize does not hang.
. "$(dirname "$0")/lib.sh"
fo_setup failopen_killed needs-collector
app=("$MW_FO_BIN/failopen_app" 3)
# The library waits at most MPIWATCH_LINGER_MS (200 ms) in MPI_Finalize; the bound is generous
# because the machines are shared and noisy, and only catches a wait that is not bounded.
FINALIZE_BOUND_MS=${FO_FINALIZE_BOUND_MS:-2000}

fo_run base env FAILOPEN_TIMING="$FO_T/base.fin" "${FO_MPI[@]}" -x FAILOPEN_TIMING "${app[@]}"
fo_expect_status base 3

fo_start_collector --quiet
fo_lib "$FO_EP"
fo_start_bg with env FAILOPEN_MARK="$FO_T/half" FAILOPEN_TIMING="$FO_T/with.fin" "${FO_LIB[@]}" \
    -x FAILOPEN_MARK -x FAILOPEN_TIMING "${app[@]}"
fo_wait_file "$FO_T/half" 60
fo_collector_saw_job
kill -KILL "$FO_CPID"
wait "$FO_CPID" 2>/dev/null
FO_CPID=''
fo_log "collector killed half way through the job"
fo_wait_bg
fo_same with base
fo_finalize_bounded base 100000
fo_finalize_bounded with "$FINALIZE_BOUND_MS"
fo_log "ok"
