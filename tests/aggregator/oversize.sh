#!/bin/bash
# oversize.sh COLLECTOR LOADGEN: an aggregator whose partials exceed the 8 MiB message limit
# (docs/aggregator.md, "Decisions and limits"). 32,000 emulated ranks of 28 functions each
# (mpiwatch-loadgen, 1 window/s, 2 s) report to one aggregator feeding a root: a window's
# partial (about 12 MB with its per-rank detail) is not sent, the aggregator logs it and counts
# it (stats JSON upstream.partials_too_large, partials_dropped), and the root's accounting stays
# exact against the generator's own totals, per function and in all:
#     calls at the ranks == calls in the summary + calls reported missing,
# with the calls of the dropped partials missing on the hop between the aggregator and the root
# (aggregators_to_collector): they left the aggregator's merge and were lost on the way up.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
MW_COLLECTOR=$1
LOADGEN=$2
agg_begin aggregator_oversize
N=32000

agg_root
agg_child agg 0 --expect-ranks "$N" --silence-timeout-ms 60000
agg=$AGG_PID
agg_wait_sockets "$d/root" "$d/agg"
"$LOADGEN" --connect "ipc://$d/agg" --ranks "$N" --rate 1 --functions 28 --seconds 2 \
    --job oversize --totals-json "$d/lg.json" </dev/null >"$d/lg.out" 2>"$d/lg.err" ||
    mw_fail "the load generator failed"
agg_wait_exit 60 "$agg" "$root"
grep -q "over the 8388608-byte message limit: dropped" "$d/agg.err" ||
    mw_fail "the aggregator did not log an oversize partial"

"$MW_PYTHON" - "$d" <<'PY' || mw_fail "accounting check"
import json, sys

d = sys.argv[1]
lg = json.load(open(f"{d}/lg.json"))
root = json.load(open(f"{d}/root.json"))
up = json.load(open(f"{d}/agg-stats.json"))["upstream"]
missed = root["missed"]
errors = []


def check(what, got, want):
    if got != want:
        errors.append(f"{what}: got {got!r}, want {want!r}")


too_large = up["partials_too_large"]
if too_large <= 0:
    errors.append("the aggregator counts no partial over the message limit")
check("partials dropped >= too large", up["partials_dropped"] >= too_large, True)
total = {"count": 0, "time_ns": 0, "bytes": 0}
for name, f in lg["functions"].items():
    for k in total:
        got = root["functions"].get(name, {}).get(k, 0) + missed["functions"].get(name, {}).get(k, 0)
        check(f"{name}.{k}: summary + missed", got, f[k])
        total[k] += f[k]
check("at_ranks.calls", missed["at_ranks"]["calls"], total["count"])
check("at_ranks.samples", missed["at_ranks"]["samples"], lg["samples"])
merged = sum(f["count"] for f in root["functions"].values())
check("summary + missed", merged + missed["calls"], total["count"])
hop = missed["aggregators_to_collector"]
if hop["calls"] <= 0 or hop["samples"] <= 0:
    errors.append(f"nothing missed between the aggregator and the root: {hop}")
check("the hops add up", missed["ranks_to_aggregators"]["calls"] + hop["calls"], missed["calls"])
aggs = root.get("aggregators", [])
check("aggregators", [a["id"] for a in aggs], [0])
for a in aggs:
    check("partials dropped, as the root knows", a["partials_dropped"], up["partials_dropped"])
    check("its hop", a["missed"]["aggregator_to_collector"]["calls"], hop["calls"])
    check("final", a["final"], True)
if errors:  # what each level refused or lost, to tell a race from a counting error
    for name in ("agg-stats", "root-stats"):
        st = json.load(open(f"{d}/{name}.json"))
        print(f"  {name}: rejected {dict((r, n) for r, n in st['rejected'].items() if n)}, "
              f"late {st.get('late')}, missed {st.get('missed')}", file=sys.stderr)
    print(f"  aggregators: {aggs}", file=sys.stderr)
for e in errors:
    print("  " + e, file=sys.stderr)
print(f"calls {total['count']}: {merged} merged + {missed['calls']} missed, "
      f"{hop['calls']} of them between the aggregator and the root "
      f"({too_large} partials over the limit)")
sys.exit(1 if errors else 0)
PY
mw_log "ok"
