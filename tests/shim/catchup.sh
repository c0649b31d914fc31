#!/usr/bin/env bash
# shim_catchup: the ranks are stopped (SIGSTOP) for 3 s with 1 ms windows, so that the sender
# thread wakes up ~3,000 windows behind the present and catch_up() (pmpi-shim/sender.c)
# skips all but the last MW_CATCHUP_MAX (1,000). The skipped windows are dropped samples: they
# are in samples_dropped_total and must also be in the samples the rank produced
# (Sample.samples_total, Bye.windows_sent), or the summary's missed.samples leaves them out
# (docs/collector.md, Loss accounting). The job prints and exits as without the library, its
# calls are accounted for exactly, and missed.samples covers at least every skipped window.
FO_NP=2
. "$(dirname "$0")/../faults/lib.sh"
export MPIWATCH_WINDOW_MS=1
ft_setup shim_catchup 1200 5000
ft_baseline
ft_collector
# The library reports the windows it skipped at finalize (MPIWATCH_VERBOSE=1, on stderr).
ft_start_with MPIWATCH_VERBOSE=1
fo_wait_file "$MW_T/half" 60
fo_collector_saw_job
# The ranks: fault_app processes below the background run (mpirun's children).
ranks=()
walk() {
    local c
    for c in $(pgrep -P "$1"); do
        [ "$(cat "/proc/$c/comm" 2>/dev/null)" = fault_app ] && ranks+=("$c")
        walk "$c"
    done
}
walk "$FO_BG_PID"
[ "${#ranks[@]}" = "$FO_NP" ] || mw_fail "found ${#ranks[@]} rank processes, not $FO_NP"
kill -STOP "${ranks[@]}"
mw_log "ranks ${ranks[*]} stopped half way through the job"
sleep 3
kill -CONT "${ranks[@]}"
mw_log "ranks continued"
fo_wait_bg
mw_collector_exits 40
fo_same_stdout base with
fo_same_status base with
ft_accounting
skipped=$(sed -n 's/.*sender: \([0-9]*\) windows skipped to catch up.*/\1/p' "$MW_T/with.err" |
    awk '{s += $1} END {print s + 0}')
[ "$skipped" -ge 1000 ] ||
    mw_fail "the senders skipped $skipped windows: the stop did not make them catch up"
missed=$(fo_json "$MW_T/summary.json" 'j["missed"]["samples"]')
dropped=$(fo_json "$MW_T/summary.json" 'j["dropped"]')
[ "$missed" -ge "$skipped" ] ||
    mw_fail "missed.samples is $missed but the ranks skipped $skipped windows (dropped $dropped)"
[ "$missed" -ge "$dropped" ] || mw_fail "missed.samples $missed is below dropped $dropped"
mw_log "ok ($skipped windows skipped, $missed samples missed, $dropped dropped)"
