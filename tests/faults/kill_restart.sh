#!/usr/bin/env bash
# faults_kill_restart: the collector is killed with SIGKILL half way through a job and a new
# one is started on the same endpoint. The job prints and exits as without the library; the
# new collector picks the job up and its summary accounts for every call exactly: what it
# merged plus what it reports missing (the samples in flight to the dead collector and all the
# windows before it started) equals what the program itself counted, rank by rank.
. "$(dirname "$0")/lib.sh"
ft_setup faults_kill_restart
ft_baseline
ft_collector
ft_start_with
fo_wait_file "$MW_T/half" 60
fo_collector_saw_job
mw_kill_collector
mw_log "collector killed half way through the job"
ft_collector
fo_wait_bg
mw_collector_exits 40
ft_same
ft_accounting --expect-missed
mw_log "ok"
