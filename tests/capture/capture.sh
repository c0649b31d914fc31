#!/bin/bash
# capture.sh steer|rule: per-call traces of whole windows (mpiwatch.capture, docs/steering.md)
# in a real MPI job (tests/programs/capture_job, 4 ranks, 50 ms windows) with steering on and
# a recording, checked from the recording's exports by check_capture.py:
#   steer  `mpiwatch steer` sends, one after the other: mpiwatch.capture=3 (the next three
#          whole windows), =2@K (windows K and K+1, K 20 windows = 1 s ahead, so that the
#          request reaches every rank before K even on a loaded machine; the script waits
#          until K+1 has passed before going on), =8@K' with K' already
#          begun (only the windows still ahead, and the samples say how many were skipped),
#          =2 while recording is paused (captured windows without calls), and bad values
#          that every rank must refuse;
#   rule   a rule whose condition always holds fires once with action capture: every rank
#          captures the same 3 windows, and the firing and its message are in the recording.
# For every captured window of every rank the trace must hold exactly the calls the window's
# sample counts, function by function, inside the window; no other window may have a trace;
# the Perfetto export must hold exactly those calls as slices. With MPIWATCH_TRACE set (e.g.
# off, test capture_steer_trace_off) the ranks get it: a capture must behave the same whether
# per-call tracing is on (the default) or off.
. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"
mode=${1:-}
case $mode in steer | rule) ;; *) echo "usage: capture.sh steer|rule" >&2; exit 2 ;; esac
mw_setup "capture_$mode"
mw_require MW_LAUNCHER MW_EXPORT MW_CAPTURE_CHECKER
prog=$MW_PROGRAMS/capture_job
[ -x "$prog" ] || mw_fail "program not built: $prog"
CTL="ipc://$MW_T/control"
W_NS=$((MPIWATCH_WINDOW_MS * 1000000))

steer() {
    "$MW_LAUNCHER" steer "$CTL" "$1" >>"$MW_T/steer.out" 2>&1 ||
        mw_fail "mpiwatch steer $1 failed: $(tail -n 3 "$MW_T/steer.out")"
}
now_window() { echo $(($(date +%s%N) / W_NS)); }

args=()
if [ "$mode" = rule ]; then
    # Fires once, 30 windows (1.5 s) into the job, when every rank's SUB socket is connected.
    cat >"$MW_T/rules.ini" <<'INI'
[rule trace-it]
metric    = rank_mpi_fraction
op        = >=
threshold = 0
for       = 30
cooldown  = 100000
action    = capture
capture   = 3
INI
    args=(--rules "$MW_T/rules.ini")
fi
mw_start_collector --exit-after-job --summary-json "$MW_T/summary.json" --record "$MW_T/run.mpiw" \
    --steer "ipc://$MW_T/steer" --control "$CTL" "${args[@]}"
trace_args=()
[ -n "${MPIWATCH_TRACE-}" ] && trace_args=(-x MPIWATCH_TRACE)
mw_mpirun -x MPIWATCH_STEER="ipc://$MW_T/steer" "${trace_args[@]}" "$prog" "$MW_T" 40 \
    >"$MW_T/app.out" 2>"$MW_T/app.err" &
job=$!
mw_wait_file "$MW_T/ready" "$job" || mw_fail "the program never got ready"
# The ranks' SUB sockets connected to the steering endpoint (ss), and half a second more for
# their subscriptions to arrive.
mw_wait_connected "$MW_T/steer" "$MW_NP" ||
    mw_fail "the ranks did not connect to the steering endpoint within 20 s"

check_args=()
if [ "$mode" = steer ]; then
    steer mpiwatch.capture=3
    sleep 1
    k=$(($(now_window) + 20)) # 1 s ahead
    steer "mpiwatch.capture=2@$k"
    for ((i = 0; i < 400; i++)); do # until windows K and K+1 are over (at most 20 s)
        [ "$(now_window)" -gt $((k + 2)) ] && break
        sleep 0.05
    done
    kl=$(($(now_window) - 1)) # begun already
    steer "mpiwatch.capture=8@$kl"
    sleep 1
    steer mpiwatch.pause=1
    steer mpiwatch.capture=2
    sleep 0.6
    steer mpiwatch.resume=1
    for v in 0 1001 x 3@ @3 2@1 3x; do
        steer "mpiwatch.capture=$v"
    done
    sleep 0.5
    check_args=(--auto 3 --at "2@$k" --late "8@$kl" --paused 2)
else
    sleep 2.5
    check_args=(--rule 3)
fi
touch "$MW_T/stop"
wait "$job" || { cat "$MW_T/app.err" >&2; mw_fail "the job failed"; }
grep -q "^capture_job: $MW_NP ranks, [0-9]* iterations, done" "$MW_T/app.out" ||
    mw_fail "the program did not finish: $(cat "$MW_T/app.out")"
mw_wait_collector 30

"$MW_EXPORT" --format capture "$MW_T/run.mpiw" -o "$MW_T/capture.jsonl" ||
    mw_fail "mpiwatch-export --format capture failed"
"$MW_EXPORT" --format perfetto "$MW_T/run.mpiw" -o "$MW_T/trace.json" ||
    mw_fail "mpiwatch-export --format perfetto failed"
MW_FAILURE_LOG=$MW_T/capture.jsonl
"$MW_PYTHON" "$MW_CAPTURE_CHECKER" --capture "$MW_T/capture.jsonl" --perfetto "$MW_T/trace.json" \
    --np "$MW_NP" --window-ns "$W_NS" "${check_args[@]}" ||
    mw_fail "the captures differ from the expectation (above)"
if [ "$mode" = rule ]; then
    grep -q "rule fired: rule=trace-it" "$MW_T/collector.err" ||
        mw_fail "the collector did not log the firing"
fi
echo "capture_$mode: ok"
