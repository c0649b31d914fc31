#!/bin/bash
# aggregators.sh COLLECTOR LOADGEN: --aggregators, a root fed by emulated aggregators.
#
# mpiwatch-loadgen --aggregators A sends a root collector what A aggregators would send
# (forwarded hellos, AggStates, one partial per aggregator per window built by the real
# aggregator code, byes; docs/loadgen.md). This checks, with 2,000 ranks, 4 aggregators and
# 3 s at 10 windows/s:
#  1. the root's summary holds exactly the generator's totals per function, nothing missed
#     (calls at the ranks = the summary's + 0 missed), no message refused, every window
#     closed with all ranks, and the 4 aggregators' final AggStates with their 500 ranks each;
#  2. the same generator in sample mode (every rank to one collector, no --aggregators) gives
#     the same summary: functions, pairs, windows, ranks, nodes and every rank's figures (the
#     tree equals one collector);
#  3. --aggregators is refused without cached samples (--variants 0).
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
MW_COLLECTOR=$1
loadgen=$2
python=$MW_PYTHON
mw_init loadgen_aggregators
dir=$MW_T
common=(--ranks 2000 --rate 10 --functions 6 --seconds 3 --variants 4 --job lgagg --seed 5)

# 3. Refused without the cache (before anything is sent).
rc=0
"$loadgen" --connect "$MW_EP" "${common[@]}" --variants 0 --aggregators 4 \
    2>"$dir/refused.err" || rc=$?
[ "$rc" = 2 ] || { MW_FAILURE_LOG=$dir/refused.err; mw_fail "--variants 0 accepted ($rc)"; }

# 1. The root and the emulated aggregators.
mw_start_collector --exit-after-job --quiet --silence-timeout-ms 30000 \
    --summary-json "$dir/tree-summary.json" --stats-json "$dir/tree-stats.json"
"$loadgen" --connect "$MW_EP" "${common[@]}" --aggregators 4 --totals-json "$dir/tree.json" \
    2>"$dir/tree.err" || { MW_FAILURE_LOG=$dir/tree.err; mw_fail "tree generator failed"; }
grep -q "emulated 4 aggregators" "$dir/tree.err" ||
    { MW_FAILURE_LOG=$dir/tree.err; mw_fail "no emulated aggregators said"; }
mw_collector_exits 30

# 2. The same ranks, each to one collector.
mw_start_collector --exit-after-job --quiet --silence-timeout-ms 30000 \
    --summary-json "$dir/one-summary.json" --stats-json "$dir/one-stats.json"
"$loadgen" --connect "$MW_EP" "${common[@]}" --totals-json "$dir/one.json" \
    2>"$dir/one.err" || { MW_FAILURE_LOG=$dir/one.err; mw_fail "sample-mode generator failed"; }
mw_collector_exits 30

"$python" - "$dir" <<'PY' || mw_fail "output check"
import json, sys

d = sys.argv[1]
load = lambda name: json.load(open(f"{d}/{name}.json"))
tree, tsum, tst = load("tree"), load("tree-summary"), load("tree-stats")
one, osum, ost = load("one"), load("one-summary"), load("one-stats")
errors = []
def check(what, got, want):
    if got != want:
        errors.append(f"{what}: got {str(got)[:300]}, want {str(want)[:300]}")

if not tree["functions"] or tree["windows"] != 30:
    errors.append(f"generator: {tree['windows']} windows, functions {tree['functions']}")
check("tree: summary functions = the generator's", tsum["functions"], tree["functions"])
at_ranks = sum(f["count"] for f in tree["functions"].values())
check("tree: calls at the ranks = summary + missed",
      sum(f["count"] for f in tsum["functions"].values()) + tsum["missed"]["calls"], at_ranks)
check("tree: missed calls", tsum["missed"]["calls"], 0)
check("tree: missed at_ranks", tsum["missed"]["at_ranks"]["calls"], at_ranks)
check("tree: windows closed", tst["windows"], 30)
check("tree: windows closed without all ranks", tst["partial_windows"], 0)
check("tree: late", tst["late"], 0)
for reason, n in tst["rejected"].items():
    check(f"tree: rejected[{reason}]", n, 0)
aggs = tsum.get("aggregators", [])
check("tree: aggregators", len(aggs), 4)
for a in aggs:
    check(f"aggregator {a.get('id')}: final, ranks",
          (a.get("final"), a.get("ranks"), a.get("ranks_done")), (True, 500, 500))
check("tree: ranks", tsum["ranks"], 2000)

check("one collector: generator totals", one["functions"], tree["functions"])
check("one collector: summary functions", osum["functions"], tsum["functions"])
check("one collector: windows closed", (ost["windows"], ost["partial_windows"]), (30, 0))
for key in ("pairs", "windows", "ranks", "dropped", "late"):
    check(f"tree = one collector: {key}", tsum[key], osum[key])
# Nodes are listed as their first hello arrived (several sockets either way): by name.
by_name = lambda s: sorted(s["nodes"], key=lambda n: n["name"])
check("tree = one collector: nodes", by_name(tsum), by_name(osum))
strip = lambda r: {k: v for k, v in r.items() if k != "missed"}
check("tree = one collector: per_rank (without where the totals came from)",
      [strip(r) for r in tsum["per_rank"]], [strip(r) for r in osum["per_rank"]])
check("per_rank listed", len(tsum["per_rank"]), 2000)
for e in errors:
    print("mismatch:", e)
sys.exit(1 if errors else 0)
PY
mw_log "ok"
