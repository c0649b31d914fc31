#!/bin/bash
# wait.sh COLLECTOR LOADGEN: a root waits for a late aggregator (docs/aggregator.md "When a
# parent closes a window"), with real processes.
#
# A root at its default 1 s lateness, fed by two real aggregators of a 64-rank load generator
# job (two generators, ranks 0-31 and 32-63, 10 windows/s, 8 s): A (--expect-ranks 32) closes
# each window as soon as its ranks are in; B, without --expect-ranks and with --lateness-ms
# 1500, closes each 1.5 s after its first sample, so its partials reach the root about 1.5 s
# after A's, later than the root's lateness. The root must close every window with all 64 ranks
# (nothing late, every window counted as having waited, none closed without B) and exactly the
# generators' totals; before the wait, it closed every window at 1 s without B's 32 ranks.
. "$(dirname "$0")/../lib/common.sh"
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
MW_COLLECTOR=$1
LOADGEN=$2
agg_begin aggregator_wait

agg_root
agg_child a 0 --expect-ranks 32 --quiet
a=$AGG_PID
agg_child b 1 --lateness-ms 1500 --quiet
b=$AGG_PID
agg_wait_sockets "$d/root" "$d/a" "$d/b"
common=(--ranks 64 --rate 10 --functions 4 --seconds 8 --nodes 8 --job aggwait --seed 1)
"$LOADGEN" --connect "ipc://$d/a" "${common[@]}" --rank-first 0 --rank-count 32 \
    --totals-json "$d/lga.json" </dev/null >"$d/lga.out" 2>"$d/lga.err" &
lga=$!
PIDS+=("$lga")
"$LOADGEN" --connect "ipc://$d/b" "${common[@]}" --rank-first 32 --rank-count 32 \
    --totals-json "$d/lgb.json" </dev/null >"$d/lgb.out" 2>"$d/lgb.err" ||
    mw_fail "the load generator of aggregator B failed"
wait "$lga" || mw_fail "the load generator of aggregator A failed"
agg_wait_exit 60 "$a" "$b" "$root"

"${MW_PYTHON:-/usr/bin/python3}" - "$d/root.json" "$d/root-stats.json" "$d/lga.json" \
    "$d/lgb.json" <<'PY' || mw_fail "checks failed (above)"
import json, sys
summary, stats = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
gens = [json.load(open(p)) for p in sys.argv[3:5]]
errors = []
def check(what, ok):
    print(("ok: " if ok else "FAIL: ") + what, file=sys.stderr)
    if not ok:
        errors.append(what)
aw = stats.get("aggregator_wait", {})
windows = stats.get("windows", 0)
check(f"windows closed ({windows})", windows >= 60)
check(f"none with ranks missing (partial_windows {stats.get('partial_windows')})",
      stats.get("partial_windows") == 0)
check(f"nothing late at the root (late {stats.get('late')})", stats.get("late") == 0)
check(f"both aggregators known ({aw.get('aggregators')})", aw.get("aggregators") == 2)
check(f"windows that waited for B and closed complete ({aw.get('waited_complete')} of {windows})",
      aw.get("waited_complete", 0) >= windows - 2)
check(f"none closed without B ({aw.get('closed_without')})", aw.get("closed_without") == 0)
check(f"close latency p50 {stats['close_latency_ms_p50']:.0f} ms: B's 1.5 s, within the bound",
      1300 < stats["close_latency_ms_p50"] < 2500)
# Every call exactly: the two generators' totals per function, summed, are the root's.
want = {}
for g in gens:
    for name, f in g["functions"].items():
        w = want.setdefault(name, [0, 0, 0])
        for i, k in enumerate(("count", "time_ns", "bytes")):
            w[i] += f[k]
got = {name: [f["count"], f["time_ns"], f["bytes"]] for name, f in summary["functions"].items()}
check(f"the root's calls, time and bytes per function are the generators' ({len(want)} functions)",
      got == want)
sys.exit(1 if errors else 0)
PY
mw_log "ok"
