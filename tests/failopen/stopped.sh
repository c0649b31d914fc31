#!/usr/bin/env bash
# failopen_stopped: the collector is stopped (SIGSTOP) half way through the job and stays
# stopped until the job has ended: the job's sends pile up and then fail, yet it prints the
# same, exits the same, and MPI_Finalize returns (the library waits at most
# MPIWATCH_LINGER_MS for its last samples).
. "$(dirname "$0")/lib.sh"
fo_setup failopen_stopped needs-collector
# 5 ms windows: enough samples to fill the socket buffers while the collector is stopped, so
# the sends really fail and MPI_Finalize meets a full queue (it then waits the linger, about
# 200 ms, printed below, instead of about nothing).
export MPIWATCH_WINDOW_MS=5
app=("$MW_FO_BIN/failopen_app" 3)
# The library waits at most MPIWATCH_LINGER_MS (200 ms) in MPI_Finalize; the bound is generous
# because the machines are shared and noisy, and only catches a wait that is not bounded.
FINALIZE_BOUND_MS=${FO_FINALIZE_BOUND_MS:-2000}

fo_run base env FAILOPEN_TIMING="$FO_T/base.fin" "${FO_MPI[@]}" -x FAILOPEN_TIMING "${app[@]}"
fo_expect_status base 3

# shellcheck disable=SC2034 # FO_STOPPED tells lib.sh's cleanup to SIGCONT the collector
fo_start_collector --quiet
fo_lib "$FO_EP"
fo_start_bg with env FAILOPEN_MARK="$FO_T/half" FAILOPEN_TIMING="$FO_T/with.fin" "${FO_LIB[@]}" \
    -x FAILOPEN_MARK -x FAILOPEN_TIMING "${app[@]}"
fo_wait_file "$FO_T/half" 60
fo_collector_saw_job
kill -STOP "$FO_CPID"
FO_STOPPED=1
fo_log "collector stopped half way through the job"
fo_wait_bg
kill -CONT "$FO_CPID"
FO_STOPPED=''
kill -KILL "$FO_CPID"
wait "$FO_CPID" 2>/dev/null
FO_CPID=''
fo_same with base
fo_finalize_bounded base 100000
fo_finalize_bounded with "$FINALIZE_BOUND_MS"
fo_log "ok"
