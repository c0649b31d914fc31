#!/bin/bash
# steer_rule.sh: steering from a rule, and the library's own keys (docs/steering.md).
#   rule:  a rule with `action = steer` and `ranks = 1` (on a condition that holds in every
#          window, `for = 20`: about a second into the job, once) sends app.msg=... to a
#          4-rank steer_cb job: rank 1's callback gets exactly that key and value, on its own
#          thread at an MPI call, and ranks 0, 2 and 3 get nothing; the collector logged one
#          firing and one message for rank 1.
#   pause: `mpiwatch steer CTL mpiwatch.pause=1`, 3 s later `mpiwatch.resume=1`, while
#          tests/programs/steady makes an MPI_Allreduce every ~2 ms on 4 ranks, with 100 ms
#          windows: from the recording (jsonl export), the windows between the two (a 500 ms
#          margin after the pause, for it to reach every rank's sender thread even on a busy
#          machine) are there (at least 15 of the ~25) and hold exactly zero calls; the
#          windows from 500 ms after the resume to the end of the stream hold calls again, like
#          those before the pause (at least 3 windows each side, at least half of them with
#          calls: on a loaded 2-core machine 4 ranks can be kept from finishing an Allreduce
#          for several windows, but a pause that never ends leaves none).
#   one:   `mpiwatch steer CTL rebalance=1 --ranks 2` to examples/rebalance.c: the request
#          reaches rank 2 only (each rank's MPIWATCH_VERBOSE=1 line at finalize: rank 2
#          received it and dropped none as not its own, ranks 0, 1 and 3 dropped exactly one
#          as meant for another rank), travels in the application's allreduce, and all 4 ranks
#          rebalance after the same iteration.
# Steering messages are sent once the ranks' SUB sockets are connected (ss lists 4
# connections on the collector's steering endpoint), not after a fixed sleep.
# Four ranks with every MPI (the expectations name ranks 0-3; lib.sh gives MPICH two).
MW_NP=${MW_NP:-4}
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mw_setup steer_rule
mw_require MW_LAUNCHER
CTL="ipc://$MW_T/control"
steer() { "$MW_LAUNCHER" steer "$@"; }
now_ns() { date +%s%N; }

# wait_file PATH WHAT: up to 20 s.
wait_file() { mw_wait_file "$1" || mw_fail "$2"; }

# wait_subscribed: the 4 ranks' steering SUB sockets are connected to the collector's steering
# endpoint (up to 20 s), and half a second more for their subscriptions to arrive.
wait_subscribed() {
    mw_wait_connected "$MW_T/steer" 4 ||
        mw_fail "$1: not every rank connected to the steering endpoint within 20 s"
}

# ---- a rule steers rank 1 ---------------------------------------------------------------
cat >"$MW_T/rules.ini" <<'EOF'
[rule to-rank-1]
metric    = rank_mpi_fraction
op        = >=
threshold = 0
for       = 20
cooldown  = 100000
action    = steer
steer     = app.msg=rule:to-rank-1
ranks     = 1
EOF
prog=$MW_PROGRAMS/steer_cb
[ -x "$prog" ] || mw_fail "program not built: $prog"
rm -f "$MW_T/ready" "$MW_T/stop"
mw_start_collector --exit-after-job --summary-json "$MW_T/summary.json" --rules "$MW_T/rules.ini" \
    --steer "ipc://$MW_T/steer" --control "$CTL"
mw_mpirun -x MPIWATCH_STEER="ipc://$MW_T/steer" "$prog" mpi "$MW_T" \
    >"$MW_T/rule.out" 2>"$MW_T/rule.err" &
job=$!
wait_file "$MW_T/ready" "rule: the program never got ready"
for ((i = 0; i < 200; i++)); do
    grep -q "steer #1: " "$MW_T/collector.err" && break
    sleep 0.05
done
grep -q "steer #1: " "$MW_T/collector.err" || { kill "$job"; mw_fail "rule: the rule sent nothing within 10 s"; }
sleep 1 # the message reaches rank 1 at its next MPI call
touch "$MW_T/stop"
wait "$job" || { cat "$MW_T/rule.err" >&2; mw_fail "rule: the job failed"; }
cat "$MW_T/rule.out"
mw_wait_collector 30
grep -qx "rank 1: app.msg=rule:to-rank-1 thread=app via=mpi" "$MW_T/rule.out" ||
    mw_fail "rule: rank 1 did not get app.msg=rule:to-rank-1 at an MPI call on its own thread"
[ "$(grep -c '^rank 1: ' "$MW_T/rule.out")" = 1 ] || mw_fail "rule: rank 1 got more than one message"
for r in 0 2 3; do
    grep -qx "rank $r: none" "$MW_T/rule.out" || mw_fail "rule: rank $r got a message meant for rank 1"
done
[ "$(grep -c 'rule fired: rule=to-rank-1 ' "$MW_T/collector.err")" = 1 ] ||
    mw_fail "rule: not exactly one firing logged"
grep -q "steer #1: app.msg=rule:to-rank-1 ranks 1$" "$MW_T/collector.err" ||
    mw_fail "rule: the collector did not log the message for rank 1"
! grep -q "steer #2" "$MW_T/collector.err" || mw_fail "rule: a second message was sent (cooldown)"

# ---- mpiwatch.pause / mpiwatch.resume ------------------------------------------------------
prog=$MW_PROGRAMS/steady
[ -x "$prog" ] || mw_fail "program not built: $prog"
rm -f "$MW_T/ready" "$MW_T/stop" "$MW_T/summary.json"
mw_start_collector --exit-after-job --summary-json "$MW_T/summary.json" --record "$MW_T/pause.mpiw" \
    --steer "ipc://$MW_T/steer" --control "$CTL"
MPIWATCH_WINDOW_MS=100 mw_mpirun -x MPIWATCH_STEER="ipc://$MW_T/steer" "$prog" "$MW_T" \
    >"$MW_T/pause.out" 2>"$MW_T/pause.err" &
job=$!
wait_file "$MW_T/ready" "pause: the program never got ready"
wait_subscribed pause
sleep 1 # a stretch of windows with calls before the pause
t_pause=$(now_ns)
steer "$CTL" mpiwatch.pause=1 >"$MW_T/steer.out" 2>&1 || mw_fail "pause: $(cat "$MW_T/steer.out")"
t_paused=$(now_ns)
sleep 3
t_resume=$(now_ns)
steer "$CTL" mpiwatch.resume=1 >>"$MW_T/steer.out" 2>&1 || mw_fail "resume: $(cat "$MW_T/steer.out")"
t_resumed=$(now_ns)
sleep 1.5
t_stop=$(now_ns)
touch "$MW_T/stop"
wait "$job" || { cat "$MW_T/pause.err" >&2; mw_fail "pause: the job failed"; }
cat "$MW_T/pause.out"
grep -q "^steady: 4 ranks, [0-9]* iterations$" "$MW_T/pause.out" || mw_fail "pause: the program did not finish"
mw_wait_collector 30
"${MW_LAUNCHER%/mpiwatch}/mpiwatch-export" --format jsonl "$MW_T/pause.mpiw" -o "$MW_T/pause.jsonl" ||
    mw_fail "pause: export failed"
"$MW_PYTHON" - "$MW_T/pause.jsonl" "$t_pause" "$t_paused" "$t_resume" "$t_resumed" "$t_stop" <<'PY' ||
import json, sys
t_pause, t_paused, t_resume, t_resumed, t_stop = map(int, sys.argv[2:])
MARGIN = 500_000_000
windows = [json.loads(line) for line in open(sys.argv[1])]
def calls(w):
    return sum(f["count"] for f in w["functions"].values())
def span(a, b):
    return [w for w in windows if w["start_ns"] >= a and w["start_ns"] + w["window_ns"] <= b]
first = windows[0]["start_ns"]
before = span(first + 5 * windows[0]["window_ns"], t_pause)
paused = span(t_paused + MARGIN, t_resume)
after = span(t_resumed + MARGIN, t_stop)
def show(name, ws):
    print(f"{name}: {len(ws)} windows, calls {[calls(w) for w in ws]}")
for name, ws in (("before", before), ("paused", paused), ("after", after)):
    show(name, ws)
def mostly_calls(ws):
    return len(ws) >= 3 and sum(calls(w) > 0 for w in ws) >= 0.5 * len(ws)
assert mostly_calls(before), "calls missing before the pause"
assert all(calls(w) == 0 for w in paused), "calls recorded while paused"
assert mostly_calls(after), "no calls after the resume"
# While paused the ranks still report their (empty) windows: the pause is visible, not a gap.
assert len(paused) >= 15, f"only {len(paused)} windows while paused"
PY
    mw_fail "pause: the windows do not show the pause and the resume (above)"
# ---- one rank told, every rank rebalances ------------------------------------------------
app="${MW_LAUNCHER%/tools/mpiwatch}/examples/mpiwatch-rebalance"
[ -x "$app" ] || mw_fail "program not built: $app"
rm -f "$MW_T/summary.json"
mw_start_collector --exit-after-job --summary-json "$MW_T/summary.json" \
    --steer "ipc://$MW_T/steer" --control "$CTL"
MPIWATCH_VERBOSE=1 mw_mpirun -x MPIWATCH_STEER="ipc://$MW_T/steer" -x MPIWATCH_VERBOSE "$app" \
    --cells 200000 --iterations 600 --slow-from 1 --print-every 1000 \
    >"$MW_T/one.out" 2>"$MW_T/one.err" &
job=$!
for ((i = 0; i < 400; i++)); do
    grep -q "^mpiwatch-rebalance: 4 ranks" "$MW_T/one.out" && break
    sleep 0.05
done
wait_subscribed one
steer "$CTL" rebalance=1 --ranks 2 >"$MW_T/steer.out" 2>&1 || mw_fail "one: $(cat "$MW_T/steer.out")"
# 600 iterations take several seconds (the slow ranks' share alone is 2.4 s of CPU).
wait "$job" || { cat "$MW_T/one.err" >&2; mw_fail "one: the job failed"; }
cat "$MW_T/one.out"
grep -q "^mpiwatch-rebalance: done, 600 iterations" "$MW_T/one.out" || mw_fail "one: did not finish"
mw_wait_collector 30
its=$(sed -n 's/^rebalance: rank [0-3] after iteration \([0-9]*\): .*/\1/p' "$MW_T/one.out" | sort -u)
[ "$(printf '%s\n' "$its" | grep -c .)" = 1 ] || mw_fail "one: not one agreed iteration: '$its'"
for r in 0 1 2 3; do
    grep -Eq "^rebalance: rank $r after iteration $its: 50000 -> [0-9]+ cells" "$MW_T/one.out" ||
        mw_fail "one: rank $r did not rebalance after iteration $its"
done
# Who got the request: "mpiwatch[R]: steer: N received, B bad, J for another job, O for other
# ranks, ..." at each rank's finalize.
for r in 0 1 2 3; do
    line=$(grep "^mpiwatch\[$r\]: steer: " "$MW_T/one.err")
    [ -n "$line" ] || { MW_FAILURE_LOG=$MW_T/one.err; mw_fail "one: rank $r printed no steer line"; }
    others=$(sed -n 's/.*, \([0-9]*\) for other ranks,.*/\1/p' <<<"$line")
    received=$(sed -n 's/.*steer: \([0-9]*\) received,.*/\1/p' <<<"$line")
    echo "rank $r: $received received, $others for other ranks"
    if [ "$r" = 2 ]; then
        { [ "$others" = 0 ] && [ "${received:-0}" -ge 1 ]; } ||
            mw_fail "one: rank 2 did not take the request as its own: $line"
    else
        [ "$others" = 1 ] || mw_fail "one: rank $r did not drop exactly one request for rank 2: $line"
    fi
done
echo "steer_rule: ok"
