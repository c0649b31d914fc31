#!/usr/bin/env bash
# faults_late_start: the collector is started half way through the job (the ranks' first
# samples had nowhere to go). It takes the job up from the ranks' next samples and reports
# exactly what happened before it: merged + missing == what the program counted.
. "$(dirname "$0")/lib.sh"
# 5 ms windows: the ranks keep a backlog of 64 samples (0.3 s) for a collector that is not
# there yet, far less than the half of the job that goes by before it starts.
export MPIWATCH_WINDOW_MS=5
ft_setup faults_late_start
ft_baseline
ft_start_with
fo_wait_file "$MW_T/half" 60
ft_collector
mw_log "collector started half way through the job"
fo_wait_bg
mw_collector_exits 40
ft_same
ft_accounting --expect-missed
mw_log "ok"
