#!/bin/bash
# steps.sh MODE N: per-step totals (docs/steps.md). Runs tests/programs/steps MODE N on 4 ranks
# and checks the summary's "steps" against the program's known pattern (check_steps.py):
#   api    steps marked with mw_step(); also runs the program without the library
#   every  MPIWATCH_STEP=MPI_Allreduce:3
#   auto   MPIWATCH_STEP=auto: the detector must find the period
# In every mode a rule over steps (docs/steering.md, `over = step`) that always holds must fire
# exactly once per closed step, with that step's number, in order.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mode=$1
n=$2
export MPIWATCH_WINDOW_MS=${MPIWATCH_WINDOW_MS:-10}
mw_setup "steps_$mode"
prog=$MW_PROGRAMS/steps
[ -x "$prog" ] || mw_fail "program not built: $prog"
case $mode in
    api) unset MPIWATCH_STEP ;;
    every) export MPIWATCH_STEP=MPI_Allreduce:3 ;;
    auto) export MPIWATCH_STEP=auto ;;
    *) mw_fail "unknown mode $mode" ;;
esac
if [ "$mode" = api ]; then
    # A program that calls mw_step() runs without the library (weak symbol, MW_STEP guard).
    "$MW_MPIRUN" --oversubscribe -np "$MW_NP" "$prog" api 3 >"$MW_T/bare.out" 2>&1 ||
        mw_fail "without the library the program failed: $(head -c 500 "$MW_T/bare.out")"
    grep -q "ok" "$MW_T/bare.out" || mw_fail "without the library: no success line"
fi
cat >"$MW_T/rules.ini" <<'EOF'
[rule each-step]
over      = step
metric    = step_time
op        = >=
threshold = 0
action    = log
EOF
MW_JOB_ARGS=(--rules "$MW_T/rules.ini")
mw_run_job "^steps: $MW_NP ranks, $mode, N=$n, ok" mw_mpirun -x MPIWATCH_STEP "$prog" "$mode" "$n"
"${MW_PYTHON:-/usr/bin/python3}" - "$MW_T/summary.json" "$MW_T/collector.err" <<'PY' ||
import json, re, sys
steps = [s["step"] for s in json.load(open(sys.argv[1]))["steps"]]
fired = [int(m) for m in re.findall(r"rule fired: rule=each-step metric=step_time .* step=(\d+)$",
                                     open(sys.argv[2]).read(), re.M)]
if not steps or fired != steps:
    sys.exit(f"rule over steps fired for steps {fired}, the summary has steps {steps}")
print(f"the rule over steps fired once for each of the {len(steps)} steps")
PY
    mw_fail "the rule over steps (above)"
"${MW_PYTHON:-/usr/bin/python3}" "$(dirname "${BASH_SOURCE[0]}")/check_steps.py" \
    "$MW_T/summary.json" "$mode" "$n" "$MW_NP" ||
    mw_fail "per-step totals differ (above); summary: $(head -c 1500 "$MW_T/summary.json")"
