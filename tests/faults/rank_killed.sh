#!/usr/bin/env bash
# faults_rank_killed: rank 2 kills itself (SIGKILL) half way through; mpirun aborts the job.
# With the library the job aborts the same way (same stdout, same exit status); the collector
# declares the ranks that said no bye dead after its silence timeout, still writes its report
# and summary, and flags the dead ranks, whose totals are as of their last sample.
. "$(dirname "$0")/lib.sh"
ft_setup faults_rank_killed
# mpirun passes on the dead rank's 137 (SIGKILL), which fo_run would take for its own timeout
# killing a hang: FT_S137 reports it as 237 instead.
fo_run base "${FT_S137[@]}" env FAULT_DIE_RANK=2 "${FO_MPI[@]}" -x FAULT_DIE_RANK "${FT_APP[@]}"
base_rc=$(cat "$MW_T/base.rc")
{ [ "$base_rc" != 0 ] && [ "$base_rc" != 3 ]; } ||
    mw_fail "without the library a dying rank did not abort the job (status $base_rc)"
ft_collector --silence-timeout-ms 2000 --report "$MW_T/report.txt"
fo_lib "$MW_EP"
fo_start_bg with "${FT_S137[@]}" env FAULT_COUNTS="$MW_T/counts" FAULT_DIE_RANK=2 "${FO_LIB[@]}" \
    -x FAULT_COUNTS -x FAULT_DIE_RANK "${FT_APP[@]}"
fo_wait_bg
fo_same_stdout base with
fo_same_status base with
mw_collector_exits 40
[ -s "$MW_T/report.txt" ] || mw_fail "the collector wrote no report"
grep -q "rank_dead\|declared dead" "$MW_T/collector.err" ||
    mw_fail "the collector did not declare the silent ranks dead"
# mpirun kills the other ranks when rank 2 dies: none of them says bye.
ft_accounting --dead 0 --dead 1 --dead 2 --dead 3
[ -s "$MW_T/counts/counts.2.dying" ] || mw_fail "rank 2 did not die where the test wanted it to"
mw_log "ok"
