#!/usr/bin/env bash
# failopen_signals: the library installs no signal handler and changes no signal mask of the
# application's threads: the dispositions of signals 1..64 and the main thread's mask, after
# MPI_Init and after MPI_Finalize, are those of a run without the library.
. "$(dirname "$0")/lib.sh"
fo_setup failopen_signals needs-collector

fo_run base "${FO_MPI[@]}" "$MW_FO_BIN/signals_app"
fo_expect_status base 0
grep -q '^all .* ranks agree: yes$' "$MW_T/base.out" || mw_fail "ranks disagree in the baseline"
fo_start_collector --quiet --exit-after-job
fo_lib "$MW_EP"
fo_run with "${FO_LIB[@]}" "$MW_FO_BIN/signals_app"
cat "$MW_T/with.out" >&2
fo_same with base
mw_stop_collector 15
fo_ranks_reported
mw_log "ok"
