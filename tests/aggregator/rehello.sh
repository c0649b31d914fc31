#!/bin/bash
# rehello.sh COLLECTOR LOADGEN: a rank that says hello again (the library does on every
# reconnection of its socket) is known to its aggregator already; the aggregator counts the
# repeat (stats "hellos_repeated") and does not forward it, and the root's figures are the same
# as without it. A 16-rank load generator job, 5 of whose ranks repeat their hello after the
# first window, through one aggregator (--expect-ranks 16) to a root.
. "$(dirname "$0")/../lib/common.sh"
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
MW_COLLECTOR=$1
LOADGEN=$2
agg_begin aggregator_rehello

agg_root
agg_child agg 0 --expect-ranks 16
agg=$AGG_PID
agg_wait_sockets "$d/root" "$d/agg"
"$LOADGEN" --connect "ipc://$d/agg" --ranks 16 --rate 10 --functions 4 --seconds 2 \
    --job rehello --hello-again 5 --totals-json "$d/lg.json" </dev/null >"$d/lg.out" \
    2>"$d/lg.err" || mw_fail "the load generator failed"
agg_wait_exit 30 "$agg" "$root"

"${MW_PYTHON:-/usr/bin/python3}" - "$d" <<'PY' || mw_fail "checks failed (above)"
import json, sys
d = sys.argv[1]
lg = json.load(open(f"{d}/lg.json"))
root = json.load(open(f"{d}/root.json"))
stats = json.load(open(f"{d}/root-stats.json"))
up = json.load(open(f"{d}/agg-stats.json"))["upstream"]
errors = []
def check(what, ok):
    print(("ok: " if ok else "FAIL: ") + what, file=sys.stderr)
    if not ok:
        errors.append(what)
check(f"the generator said 21 hellos ({lg['hellos']})", lg["hellos"] == 21)
check(f"the aggregator forwarded 16 ({up['hellos_sent']}), dropped none "
      f"({up['hellos_dropped']})", up["hellos_sent"] == 16 and up["hellos_dropped"] == 0)
check(f"and counted 5 repeats ({up.get('hellos_repeated')})", up.get("hellos_repeated") == 5)
check(f"the root: 16 ranks ({root['ranks']}), nothing refused ({stats['rejected']})",
      root["ranks"] == 16 and not any(stats["rejected"].values()))
check(f"no window without a rank (partial_windows {stats.get('partial_windows')})",
      stats.get("partial_windows") == 0)
got = {n: f["count"] for n, f in root["functions"].items()}
want = {n: f["count"] for n, f in lg["functions"].items()}
check("the root's calls per function are the generator's", got == want)
check(f"no calls missed ({root['missed']['calls']})", root["missed"]["calls"] == 0)
sys.exit(1 if errors else 0)
PY
mw_log "ok"
