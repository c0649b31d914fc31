# lib.sh: what the feed tests share (sourced after tests/lib/common.sh and mw_init).
#
# DESIGN: the tests run clients of the feed in the background (a subscriber, possibly stopped
# with SIGSTOP, a loop of history requests); feed_bg records their pids and the exit trap
# continues and kills whatever is still running before common.sh's own teardown, keeping the
# script's exit status. The endpoints live in the test's private directory.
# shellcheck shell=bash

FEED_PIDS=''
# The endpoints are used by the scripts that source this file.
# shellcheck disable=SC2034
FEED_PUB="ipc://$MW_T/pub"
# shellcheck disable=SC2034
FEED_HIST="ipc://$MW_T/hist"

feed_cleanup() {
    local pid
    for pid in $FEED_PIDS; do
        kill -CONT "$pid" 2>/dev/null
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    FEED_PIDS=''
}
# shellcheck disable=SC2154 # rc is assigned in the trap string, where shellcheck does not look
trap 'rc=$?; feed_cleanup; (exit $rc); mw_teardown' EXIT

# feed_bg PID: a background process to stop if the script ends early.
feed_bg() { FEED_PIDS="$FEED_PIDS $1"; }

# feed_wait_file FILE SECONDS: FILE exists within SECONDS (the collector writes its summary
# after it has published the job's end).
feed_wait_file() {
    local i
    for ((i = 0; i < $2 * 20; i++)); do
        [ -s "$1" ] && return 0
        sleep 0.05
    done
    mw_fail "$1 was not written within $2 s"
}

# feed_rss_kb PID: the resident set of a process, in kB.
feed_rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
