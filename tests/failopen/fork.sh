#!/usr/bin/env bash
# failopen_fork: children forked by a monitored rank (system(), fork+exec, and forks whose
# child makes MPI query calls before _exit() or exit()) stay inert: the output and exit status
# are those of the baseline, no child says hello (the collector rejects nothing and counts
# exactly the job's ranks), and the parents' own calls are all counted.
. "$(dirname "$0")/lib.sh"
fo_setup failopen_fork needs-collector
iters=100

fo_run base "${FO_MPI[@]}" "$MW_FO_BIN/fork_app" "$iters"
fo_expect_status base 0
grep -q '^child-output$' "$MW_T/base.out" || mw_fail "the baseline lacks the system() output"
grep -q '^batch of forks: .*, 0 problems$' "$MW_T/base.out" || mw_fail "the baseline failed"

fo_start_collector --quiet --exit-after-job
fo_lib "$MW_EP"
fo_run with "${FO_LIB[@]}" "$MW_FO_BIN/fork_app" "$iters"
fo_same with base
mw_stop_collector 15
fo_ranks_reported
fo_nothing_rejected "a child"
# The parents' counts are exact: each rank made $iters MPI_Allreduce and one MPI_Comm_rank
# (the children's query calls must not show up anywhere).
count() {
    fo_json "$MW_T/summary.json" "next((v['count'] for k, v in j['functions'].items() if k in ('$1', 'MPI_$1')), 0)"
}
n=$(count Allreduce)
[ "$n" = $((FO_NP * iters)) ] || mw_fail "MPI_Allreduce counted $n times, expected $((FO_NP * iters))"
n=$(count Comm_rank)
[ "$n" = "$FO_NP" ] || mw_fail "MPI_Comm_rank counted $n times, expected $FO_NP (children counted?)"
n=$(count Initialized)
[ "$n" = 0 ] || mw_fail "MPI_Initialized (called only by children) counted $n times"
mw_log "ok"
