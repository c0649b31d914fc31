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

fo_half_way_start
# A stopped collector is sent SIGCONT by mw_kill_collector, or by the cleanup on failure.
kill -STOP "$MW_CPID"
mw_log "collector stopped half way through the job"
fo_wait_bg
mw_kill_collector
fo_half_way_same
mw_log "ok"
