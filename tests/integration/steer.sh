#!/bin/bash
# steer.sh: steering into the ranks (docs/steering.md). Runs tests/programs/steer_cb on 4
# ranks against a collector with --steer and --control and sends messages with
# `mpiwatch steer`:
#   - without the library the program (built against mpiwatch.h) runs;
#   - poll: a message to all ranks reaches every rank's callback once, on the thread that
#     called MPI_Init, inside mw_poll();
#   - mpi: a message to --ranks 1-2 reaches ranks 1 and 2 only, at their next MPI call, on the
#     application thread;
#   - a bad key is refused by `mpiwatch steer` (exit 2, a clear message), a rank out of range
#     and a value with a control character by the collector (exit 1), which counts them.
# Four ranks with every MPI (the expectations name ranks 0-3; lib.sh gives MPICH two).
MW_NP=${MW_NP:-4}
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mw_setup steer
mw_require MW_LAUNCHER
prog=$MW_PROGRAMS/steer_cb
[ -x "$prog" ] || mw_fail "program not built: $prog"
steer() { "$MW_LAUNCHER" steer "$@"; }
CTL="ipc://$MW_T/control"

"$MW_MPIRUN" --oversubscribe -np "$MW_NP" "$prog" bare "$MW_T" >"$MW_T/bare.out" 2>&1 ||
    mw_fail "without the library the program failed: $(head -c 500 "$MW_T/bare.out")"
grep -q "library absent, polled 0, ok" "$MW_T/bare.out" ||
    mw_fail "without the library: $(head -c 300 "$MW_T/bare.out")"

# run_steered MODE RANKS_ARGS...: one job; sends app.msg=MODE-hello, then stops it.
run_steered() {
    local mode=$1 i
    shift
    rm -f "$MW_T/ready" "$MW_T/stop"
    mw_start_collector --exit-after-job --summary-json "$MW_T/summary.json" \
        --stats-json "$MW_T/stats.json" --steer "ipc://$MW_T/steer" --control "$CTL"
    mw_mpirun -x MPIWATCH_STEER="ipc://$MW_T/steer" "$prog" "$mode" "$MW_T" \
        >"$MW_T/$mode.out" 2>"$MW_T/$mode.err" &
    local job=$!
    mw_wait_file "$MW_T/ready" "$job" || mw_fail "$mode: the program never got ready"
    sleep 1 # the ranks' subscriptions reach the collector
    steer "$CTL" "app.msg=$mode-hello" "$@" >"$MW_T/steer.out" 2>&1 ||
        mw_fail "$mode: mpiwatch steer failed: $(cat "$MW_T/steer.out")"
    grep -q "^sent app.msg=$mode-hello (seq 1)" "$MW_T/steer.out" ||
        mw_fail "$mode: unexpected reply: $(cat "$MW_T/steer.out")"
    if [ "$mode" = mpi ]; then
        # Refusals, while the job (4 ranks) is known to the collector.
        local rc=0
        steer "$CTL" "bad key=1" >"$MW_T/bad.out" 2>&1 || rc=$?
        [ "$rc" = 2 ] || mw_fail "a bad key: exit status $rc, not 2"
        grep -q "bad key 'bad key': the key may only contain" "$MW_T/bad.out" ||
            mw_fail "a bad key: unclear message: $(cat "$MW_T/bad.out")"
        rc=0
        steer "$CTL" "app.msg=x" --ranks 9 >"$MW_T/bad.out" 2>&1 || rc=$?
        [ "$rc" = 1 ] || mw_fail "rank 9 of 4: exit status $rc, not 1"
        grep -q "rejected: rank 9 is not below the job size 4" "$MW_T/bad.out" ||
            mw_fail "rank 9 of 4: unclear message: $(cat "$MW_T/bad.out")"
        rc=0
        steer "$CTL" "app.msg=a$(printf '\001')b" >"$MW_T/bad.out" 2>&1 || rc=$?
        [ "$rc" = 1 ] || mw_fail "a control character: exit status $rc, not 1"
        grep -q "rejected: value is not UTF-8 text without control characters" \
            "$MW_T/bad.out" || mw_fail "a control character: $(cat "$MW_T/bad.out")"
    fi
    sleep 1
    touch "$MW_T/stop"
    wait "$job" || { cat "$MW_T/$mode.err" >&2; mw_fail "$mode: the job failed"; }
    cat "$MW_T/$mode.out"
    grep -q "^steer_cb: $mode, $MW_NP ranks, done" "$MW_T/$mode.out" ||
        mw_fail "$mode: the program did not finish"
    mw_wait_collector 30
}

run_steered poll
for r in 0 1 2 3; do
    [ "$(grep -c "^rank $r: " "$MW_T/poll.out")" = 1 ] || mw_fail "poll: rank $r: not one line"
    grep -qx "rank $r: app.msg=poll-hello thread=app via=poll" "$MW_T/poll.out" ||
        mw_fail "poll: rank $r did not get the message in mw_poll on its own thread"
done
grep -Eq '"steer_rejected":[[:space:]]*0,' "$MW_T/stats.json" ||
    mw_fail "poll: steer_rejected not 0: $(cat "$MW_T/stats.json")"

run_steered mpi --ranks 1-2
for r in 1 2; do
    grep -qx "rank $r: app.msg=mpi-hello thread=app via=mpi" "$MW_T/mpi.out" ||
        mw_fail "mpi: rank $r did not get the message at an MPI call on its own thread"
done
for r in 0 3; do
    grep -qx "rank $r: none" "$MW_T/mpi.out" || mw_fail "mpi: rank $r got a message not for it"
done
grep -Eq '"steer_rejected":[[:space:]]*2,' "$MW_T/stats.json" ||
    mw_fail "mpi: the collector did not count 2 rejected requests: $(cat "$MW_T/stats.json")"
echo "steer: ok"
