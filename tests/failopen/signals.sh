#!/usr/bin/env bash
# failopen_signals: the library installs no signal handler and changes no signal mask of the
# application's threads: the dispositions of signals 1..64 and the main thread's mask, after
# MPI_Init and after MPI_Finalize, are those of a run without the library.
. "$(dirname "$0")/lib.sh"
fo_setup failopen_signals needs-collector

fo_run base "${FO_MPI[@]}" "$MW_FO_BIN/signals_app"
fo_expect_status base 0
grep -q '^all .* ranks agree: yes$' "$FO_T/base.out" || fo_fail "ranks disagree in the baseline"
fo_start_collector --quiet --exit-after-job
fo_lib "$FO_EP"
fo_run with "${FO_LIB[@]}" "$MW_FO_BIN/signals_app"
cat "$FO_T/with.out" >&2
fo_same with base
fo_stop_collector 15
ranks=$(fo_json "$FO_T/summary.json" 'j["ranks"]')
[ "$ranks" = "$FO_NP" ] || fo_fail "the collector saw $ranks rank(s): the library was not active"
fo_log "ok"
