#!/usr/bin/env bash
# faults_stop_cont: the collector is stopped (SIGSTOP) half way through the job for longer
# than the ranks' send queues can hold (1 ms windows, a send high-water mark of 4, a backlog of
# 64 samples, and what the kernel's socket buffers take), then
# continued (SIGCONT) while the job still runs. The job is not slowed and prints and exits as
# without the library; the samples the ranks had to drop are reported missing, exactly.
. "$(dirname "$0")/lib.sh"
export MPIWATCH_WINDOW_MS=1 MPIWATCH_SNDHWM=4
ft_setup faults_stop_cont 1600 5000
ft_baseline
ft_collector
ft_start_with MPIWATCH_SNDHWM
fo_wait_file "$MW_T/half" 60
fo_collector_saw_job
kill -STOP "$MW_CPID"
mw_log "collector stopped half way through the job"
# Three seconds at 1 ms windows are 3,000 samples (about 450 KB) a rank: far more than the
# backlog and the socket buffers hold.
sleep 3
kill -CONT "$MW_CPID"
mw_log "collector continued"
fo_wait_bg
mw_collector_exits 40
ft_same
ft_accounting --expect-missed
dropped=$(fo_json "$MW_T/summary.json" 'j["dropped"]')
[ "$dropped" -gt 0 ] || mw_fail "no sample reported dropped although the queue overflowed"
mw_log "ok ($dropped samples dropped)"
