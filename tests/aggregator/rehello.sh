#!/bin/bash
# rehello.sh COLLECTOR LOADGEN: a rank that says hello again (the library does on every
# reconnection of its socket) is known to its aggregator already; the aggregator counts the
# repeat (stats "hellos_repeated") and does not forward it, and the root's figures are the same
# as without it. A 16-rank load generator job, 5 of whose ranks repeat their hello after the
# first window, through one aggregator (--expect-ranks 16) to a root.
. "$(dirname "$0")/../lib/common.sh"
MW_COLLECTOR=$1
LOADGEN=$2
mw_init aggregator_rehello
d=$MW_T
PIDS=()

stop_all() {
    local rc=$? p f
    for p in "${PIDS[@]}"; do
        kill "$p" 2>/dev/null
    done
    if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
        for f in "$d"/root.err "$d"/agg.err "$d"/lg.err; do
            mw_show_log "$f"
        done
    fi
    (exit "$rc")
    mw_teardown
}
trap stop_all EXIT

"$MW_COLLECTOR" --listen "ipc://$d/root" --exit-after-job --silence-timeout-ms 30000 \
    --summary-json "$d/root.json" --stats-json "$d/root-stats.json" </dev/null >"$d/root.out" \
    2>"$d/root.err" &
root=$!
PIDS+=("$root")
"$MW_COLLECTOR" --listen "ipc://$d/agg" --upstream "ipc://$d/root" --aggregator-id 0 \
    --expect-ranks 16 --exit-after-job --stats-json "$d/agg-stats.json" </dev/null \
    >"$d/agg.out" 2>"$d/agg.err" &
agg=$!
PIDS+=("$agg")
for _ in $(seq 1 100); do
    [ -S "$d/root" ] && [ -S "$d/agg" ] && break
    sleep 0.1
done
"$LOADGEN" --connect "ipc://$d/agg" --ranks 16 --rate 10 --functions 4 --seconds 2 \
    --job rehello --hello-again 5 --totals-json "$d/lg.json" </dev/null >"$d/lg.out" \
    2>"$d/lg.err" || mw_fail "the load generator failed"
for p in "$agg" "$root"; do
    for _ in $(seq 1 300); do
        kill -0 "$p" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$p" 2>/dev/null && mw_fail "a collector (pid $p) did not end the job within 30 s"
done
wait "$agg" || mw_fail "the aggregator exited with an error"
wait "$root" || mw_fail "the root exited with an error"

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
