#!/bin/bash
# trace.sh plan|reach|ring|off: the shim's sender side of per-call tracing (docs/trace.md,
# "Flight recorder, plans and captures") in a real MPI job (tests/programs/capture_job, 4
# ranks), received by mw-trace-sink (a stand-in collector that also publishes the steering
# messages of a script, timed by the windows it receives) and checked by check_trace.py:
#   plan   default plan (all), then mpiwatch.trace=every:4:2@K sent 8 windows before K: the
#          windows sent before it are traced, then none until K, from K on exactly windows
#          K + 4i and K + 4i + 1; bad plans are refused and change nothing;
#   reach  MPIWATCH_TRACE_PLAN=off (no window is traced), then mpiwatch.capture=3@K with K
#          six windows in the past: windows K..K+2, all before the request, come back as
#          reach-back traces; then capture=6@K' with K' two windows back: the past part as
#          reach-back traces, the rest traced with their samples, each window exactly once;
#   ring   MPIWATCH_TRACE_RING=1024 with 3 s windows (about 7,000 records a window on a quiet
#          machine; 1 s windows had 470 to 770 calls, under the ring, on a busy one): the
#          windows over the ring are summary only, reason ring full, their calls counted;
#   off    MPIWATCH_TRACE=off: no sample says anything about tracing, mpiwatch.trace is
#          refused, and the job runs as without it.
# In every traced window the calls per function must equal the sample's counts, and every
# summary-only window must count its timed calls as left out.
. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"
mode=${1:-}
case $mode in plan | reach | ring | off) ;; *) echo "usage: trace.sh plan|reach|ring|off" >&2; exit 2 ;; esac
mw_init "shim_trace_$mode"
mw_require MW_LIB MW_PROGRAMS MW_MPIRUN MW_SINK MW_TRACE_CHECKER
mw_mpi_env
prog=$MW_PROGRAMS/capture_job
[ -x "$prog" ] || mw_fail "program not built: $prog"
export MPIWATCH_WINDOW_MS=50 MPIWATCH_JOB=trace-test
seconds=30
env_args=()
script=$MW_T/script
: >"$script"
step() { printf '%s\n' "$*" | tr ' ' '\t' >>"$script"; }
step subs "$MW_NP"
case $mode in
plan)
    step at 4 mpiwatch.trace "every:4:2@{+8}"
    for v in every:0:1@5 every:2:3@5 every:4:2 4+0 x 1+ every:4:2@1234567890123456 2+3x; do
        step at 5 mpiwatch.trace "$v"
    done
    step touch 24 "$MW_T/stop"
    ;;
reach)
    export MPIWATCH_TRACE_PLAN=off
    step at 10 mpiwatch.capture "3@{-6}"
    step at 20 mpiwatch.capture "6@{-2}"
    step touch 34 "$MW_T/stop"
    ;;
ring)
    export MPIWATCH_WINDOW_MS=3000 MPIWATCH_TRACE_RING=1024
    step touch 4 "$MW_T/stop"
    ;;
off)
    export MPIWATCH_TRACE=off
    step at 2 mpiwatch.trace all
    step touch 14 "$MW_T/stop"
    ;;
esac
env_args=(-x MPIWATCH_JOB -x MPIWATCH_STEER="ipc://$MW_T/steer" -x MPIWATCH_VERBOSE=1)
for v in MPIWATCH_TRACE MPIWATCH_TRACE_RING MPIWATCH_TRACE_PLAN; do
    [ -n "${!v-}" ] && env_args+=(-x "$v")
done

"$MW_SINK" "ipc://$MW_T/ingest" "ipc://$MW_T/steer" trace-test "$MW_NP" "$script" \
    "$MW_T/out.jsonl" >"$MW_T/sink.out" 2>"$MW_T/sink.err" &
sink=$!
"$MW_MPIRUN" --oversubscribe -np "$MW_NP" -x LD_PRELOAD="$MW_LIB" \
    -x MPIWATCH_COLLECTOR="ipc://$MW_T/ingest" -x MPIWATCH_WINDOW_MS "${env_args[@]}" \
    "$prog" "$MW_T" "$seconds" >"$MW_T/app.out" 2>"$MW_T/app.err" ||
    { cat "$MW_T/app.err" >&2; mw_fail "the job failed"; }
grep -q "^capture_job: $MW_NP ranks, [0-9]* iterations, done" "$MW_T/app.out" ||
    mw_fail "the program did not finish: $(cat "$MW_T/app.out")"
MW_FAILURE_LOG=$MW_T/app.err
wait "$sink" || { cat "$MW_T/sink.err" >&2; mw_fail "mw-trace-sink failed"; }
MW_FAILURE_LOG=$MW_T/out.jsonl
"$MW_PYTHON" "$MW_TRACE_CHECKER" "$MW_T/out.jsonl" --np "$MW_NP" --mode "$mode" \
    --log "$MW_T/app.err" || mw_fail "the traces differ from the expectation (above)"
echo "shim_trace_$mode: ok"
