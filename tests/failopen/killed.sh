#!/usr/bin/env bash
# failopen_killed: the collector is killed with SIGKILL while the job runs: same stdout and
# exit status as without the library, and MPI_Finalize does not hang.
. "$(dirname "$0")/lib.sh"
fo_setup failopen_killed needs-collector

fo_half_way_start
mw_kill_collector
mw_log "collector killed half way through the job"
fo_wait_bg
fo_half_way_same
mw_log "ok"
