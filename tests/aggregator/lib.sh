#!/bin/bash
# lib.sh: what the aggregator tests with real collectors and load generators share. Sourced
# after tests/lib/common.sh.
#   agg_begin NAME        mw_init NAME; d=$MW_T; PIDS=(); on exit every pid in PIDS is killed
#                         and, on a failure, every $d/*.err is shown.
#   agg_root ARGS..       starts the root collector at ipc://$d/root (--exit-after-job,
#                         --silence-timeout-ms 30000, summary $d/root.json, stats
#                         $d/root-stats.json, then ARGS); its pid in root and PIDS.
#   agg_child NAME ID ARGS..  starts aggregator ID at ipc://$d/NAME feeding the root (stats
#                         $d/NAME-stats.json, then ARGS); its pid in AGG_PID and PIDS.
#   agg_wait_sockets P..  waits up to 10 s for the ipc socket files P (paths) to exist.
#   agg_wait_exit S P..   waits up to S seconds for each process P to end, then waits for its
#                         status; fails when one is still there or exited with an error.
# shellcheck disable=SC2034 # d, PIDS, root and AGG_PID are the caller's
agg_begin() {
    mw_init "$1"
    d=$MW_T
    PIDS=()
    trap agg_stop_all EXIT
}

agg_stop_all() {
    local rc=$? p f
    for p in "${PIDS[@]}"; do
        kill "$p" 2>/dev/null
    done
    if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
        for f in "$d"/*.err; do
            [ -e "$f" ] && mw_show_log "$f"
        done
    fi
    (exit "$rc")
    mw_teardown
}

agg_root() {
    "$MW_COLLECTOR" --listen "ipc://$d/root" --exit-after-job --silence-timeout-ms 30000 \
        --summary-json "$d/root.json" --stats-json "$d/root-stats.json" "$@" </dev/null \
        >"$d/root.out" 2>"$d/root.err" &
    root=$!
    PIDS+=("$root")
}

agg_child() {
    local name=$1 id=$2
    shift 2
    "$MW_COLLECTOR" --listen "ipc://$d/$name" --upstream "ipc://$d/root" --aggregator-id "$id" \
        --exit-after-job --stats-json "$d/$name-stats.json" "$@" </dev/null >"$d/$name.out" \
        2>"$d/$name.err" &
    AGG_PID=$!
    PIDS+=("$AGG_PID")
}

agg_wait_sockets() {
    local s ok
    for _ in $(seq 1 100); do
        ok=1
        for s in "$@"; do
            [ -S "$s" ] || ok=0
        done
        [ "$ok" = 1 ] && return 0
        sleep 0.1
    done
}

agg_wait_exit() {
    local secs=$1 p
    shift
    for p in "$@"; do
        for _ in $(seq 1 $((secs * 10))); do
            kill -0 "$p" 2>/dev/null || break
            sleep 0.1
        done
        kill -0 "$p" 2>/dev/null && mw_fail "a collector (pid $p) did not end the job within $secs s"
        wait "$p" || mw_fail "a collector (pid $p) exited with an error"
    done
}
