#!/bin/bash
# aggregator_loss.sh COLLECTOR LOADGEN: the root's accounting through aggregators with real
# processes (docs/collector.md, "Accounting through aggregators").
#
# Two aggregators (mpiwatch-collector --upstream) take 32 emulated ranks each from
# mpiwatch-loadgen; the root starts only once both have dropped partials (it was not there to
# take them). The root's summary must hold, exactly, per function (calls, ns, bytes) and in
# all, against the generator's own totals:
#     calls at the ranks == calls in the summary + calls reported missing,
# with every missing call on the hop between aggregators and the root (the partials left the
# aggregators' merge and were dropped on their way up), none before, each aggregator counting
# the partials it dropped; the report says so
# on one line. Without the aggregators' AggState (or with the drops unaccounted) the root
# would miss those calls silently.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
# shellcheck source=../aggregator/lib.sh
. "$(dirname "$0")/../aggregator/lib.sh"
MW_COLLECTOR=$1
LOADGEN=$2
python=$MW_PYTHON
agg_begin collector_aggregator_loss

for i in 0 1; do
    "$MW_COLLECTOR" -q --listen "ipc://$d/a$i" --upstream "ipc://$d/root" --aggregator-id "$i" \
        --expect-ranks 32 --exit-after-job --summary-json "$d/a$i.json" \
        </dev/null >"$d/a$i.out" 2>"$d/a$i.err" &
    PIDS+=($!)
done
"$LOADGEN" --connect "ipc://$d/a0" --connect "ipc://$d/a1" --ranks 64 --rate 10 --functions 6 \
    --seconds 5 --totals-json "$d/lg.json" </dev/null >"$d/lg.out" 2>"$d/lg.err" &
lg=$!
PIDS+=("$lg")

# The root comes once both aggregators have dropped a partial (each logs its drops).
for _ in $(seq 1 200); do
    grep -q 'dropped' "$d/a0.err" && grep -q 'dropped' "$d/a1.err" && break
    sleep 0.1
done
if ! { grep -q 'dropped' "$d/a0.err" && grep -q 'dropped' "$d/a1.err"; }; then
    mw_fail "the aggregators did not drop any partial without a root"
fi
"$MW_COLLECTOR" -q --listen "ipc://$d/root" --exit-after-job --summary-json "$d/root.json" \
    --stats-json "$d/stats.json" --report "$d/report.txt" </dev/null >"$d/root.out" \
    2>"$d/root.err" &
root=$!
PIDS+=("$root")

wait "$lg" || mw_fail "the load generator failed"
agg_wait_exit 30 "$root"

"$python" - "$d" <<'PY' || mw_fail "accounting check"
import json, sys

d = sys.argv[1]
lg = json.load(open(f"{d}/lg.json"))
root = json.load(open(f"{d}/root.json"))
stats = json.load(open(f"{d}/stats.json"))
missed = root["missed"]
errors = []
def check(what, got, want):
    if got != want:
        errors.append(f"{what}: got {got!r}, want {want!r}")
total = {"count": 0, "time_ns": 0, "bytes": 0}
for name, f in lg["functions"].items():
    for k in total:
        got = root["functions"].get(name, {}).get(k, 0) + missed["functions"].get(name, {}).get(k, 0)
        check(f"{name}.{k}: summary + missed", got, f[k])
        total[k] += f[k]
check("at_ranks.calls", missed["at_ranks"]["calls"], total["count"])
check("at_ranks.time_ns", missed["at_ranks"]["time_ns"], total["time_ns"])
check("at_ranks.bytes", missed["at_ranks"]["bytes"], total["bytes"])
check("at_ranks.samples", missed["at_ranks"]["samples"], lg["samples"])
merged = sum(f["count"] for f in root["functions"].values())
check("summary + missed", merged + missed["calls"], total["count"])
if missed["calls"] <= 0:
    errors.append("nothing missed although the aggregators dropped partials")
check("missed between ranks and aggregators", missed["ranks_to_aggregators"]["calls"], 0)
check("missed between aggregators and the root", missed["aggregators_to_collector"]["calls"],
      missed["calls"])
aggs = root.get("aggregators", [])
check("aggregators", sorted(a["id"] for a in aggs), [0, 1])
for a in aggs:
    if a["partials_dropped"] <= 0:
        errors.append(f"aggregator {a['id']} counts no dropped partial")
    check(f"aggregator {a['id']} final", a["final"], True)
    check(f"aggregator {a['id']} ranks", (a["ranks"], a["ranks_done"]), (32, 32))
    check(f"aggregator {a['id']} at_ranks = merged + missed", a["at_ranks"]["calls"],
          a["merged"]["calls"] + a["missed"]["calls"])
check("aggregators' missed add up",
      sum(a["missed"]["aggregator_to_collector"]["calls"] for a in aggs),
      missed["aggregators_to_collector"]["calls"])
check("stats missed", stats["missed"]["calls"], missed["calls"])
check("rejected at the root", sum(stats["rejected"].values()), 0)
line = (f"calls at the ranks: {total['count']} = {merged} in this report + {missed['calls']} "
        f"missed (0 between ranks and aggregators, {missed['calls']} between aggregators and "
        f"this collector)")
if line not in open(f"{d}/report.txt").read():
    errors.append(f"the report lacks: {line}")
for e in errors:
    print("  " + e, file=sys.stderr)
print(f"calls {total['count']}: {merged} merged + {missed['calls']} missed after the "
      f"aggregators ({sum(a['partials_dropped'] for a in aggs)} partials dropped)")
sys.exit(1 if errors else 0)
PY
echo "aggregator_loss: ok"
