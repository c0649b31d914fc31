#!/usr/bin/env bash
# faults_late_start: the collector is started half way through the job (the ranks' first
# samples had nowhere to go). It takes the job up from the ranks' next samples and reports
# exactly what happened before it: merged + missing == what the program counted.
. "$(dirname "$0")/lib.sh"
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
