#!/usr/bin/env bash
# failopen_no_collector: MPIWATCH_COLLECTOR points where nothing listens (an ipc path with no
# socket, and a TCP port with no listener): the job prints the same, exits with the same
# non-zero status after MPI_Finalize, and takes about as long as without the library.
. "$(dirname "$0")/lib.sh"
fo_setup failopen_no_collector
app=("$MW_FO_BIN/failopen_app" 3)

fo_run base "${FO_MPI[@]}" "${app[@]}"
fo_expect_status base 3
fo_lib "ipc://$MW_T/nobody-listens-here"
fo_run ipc "${FO_LIB[@]}" "${app[@]}"
fo_same ipc base
[ -e "$MW_T/nobody-listens-here" ] && mw_fail "something created the collector's endpoint"
fo_lib "tcp://127.0.0.1:1"
fo_run tcp "${FO_LIB[@]}" "${app[@]}"
fo_same tcp base
mw_log "ok"
