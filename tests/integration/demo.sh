#!/bin/bash
# demo.sh ITERATIONS: `mpiwatch demo --summary-json F -- ITERATIONS` completes with status
# 0, the demo's own progress lines reach stdout, and the summary shows the demo's pattern
# (several functions, at least one 32 MB broadcast, halo exchange pairs).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
iters=$1
mw_setup demo
mw_require MW_LAUNCHER
MW_FAILURE_LOG=$MW_T/launcher.err
"$MW_LAUNCHER" demo --summary-json "$MW_T/summary.json" --window-ms 50 -- "$iters" \
    >"$MW_T/app.out" 2>"$MW_T/launcher.err"
rc=$?
cat "$MW_T/app.out"
if [ "$rc" != 0 ]; then
    mw_fail "mpiwatch demo exited with status $rc"
fi
grep -q "^mpiwatch-demo: done, $iters iterations" "$MW_T/app.out" ||
    mw_fail "the demo's own output did not reach stdout"
[ -s "$MW_T/summary.json" ] || mw_fail "mpiwatch demo wrote no summary"
mw_check --pattern demo --iterations "$iters" --label "mpiwatch demo"
# The demo runs on two emulated nodes (MPIWATCH_NODES=2, docs/topology.md), each described.
"$MW_PYTHON" - "$MW_T/summary.json" <<'PY' || mw_fail "the demo does not show two nodes"
import json, sys
nodes = json.load(open(sys.argv[1]))["nodes"]
got = sorted((n["name"].rsplit("-", 1)[-1], n["ranks"], n["pus"] > 0) for n in nodes)
want = [("n0", [0, 1], True), ("n1", [2, 3], True)]
print(f"demo nodes: {got}")
sys.exit(0 if got == want else 1)
PY
