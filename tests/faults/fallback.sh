#!/usr/bin/env bash
# shim_fallback: a rank's collector (the node's aggregator in a tree; any collector will do,
# the fallback does not care what the primary is) is killed with SIGKILL half way through a
# job whose ranks have MPIWATCH_COLLECTOR_FALLBACK pointing at a second collector, the root.
# Until the kill no rank is connected to the root; after it every rank is, within
# MPIWATCH_FALLBACK_AFTER plus a bound. The job prints and exits as without the library, and
# the root's accounting is exact rank by rank: what it merged plus what it reports missing (the
# first half, sent to the dead collector, and what its socket held) equals what the program
# counted itself. The ranks name their first collector as `mpiwatch run` names a node's
# aggregator, ipc://DIR/agg-{node}, with SLURMD_NODENAME=node/1: the library must expand it to
# agg-node_1 (the '/' made '_') or the first collector never sees the job. docs/shim.md,
# "Fallback to the root".
. "$(dirname "$0")/lib.sh"
AFTER_S=1
BOUND_S=6 # AFTER_S, a window or two, the reconnection, on a shared and noisy machine (2.2 s seen)
# 1,200 iterations of 5 ms: about 6 s, so that the second half outlasts the fallback.
ft_setup shim_fallback 1200
ft_baseline
ROOT_EP=$MW_EP
AGG_EP="ipc://$MW_T/agg-node_1"
ft_collector # the root, on MW_EP: it writes summary.json and stats.json
"$MW_COLLECTOR" --listen "$AGG_EP" --quiet </dev/null >"$MW_T/agg.out" 2>"$MW_T/agg.err" &
AGG_PID=$!
# shellcheck disable=SC2016 # expanded when the script exits
ft_on_exit 'kill -KILL $AGG_PID 2>/dev/null'
mw_wait_file "$MW_T/agg-node_1" || mw_fail "the first collector did not listen on $AGG_EP"

MW_EP="ipc://$MW_T/agg-{node}" ft_start_with SLURMD_NODENAME=node/1 \
    MPIWATCH_COLLECTOR_FALLBACK="$ROOT_EP" MPIWATCH_FALLBACK_AFTER=$AFTER_S
fo_wait_file "$MW_T/half" 60
for ((i = 0; i < 100; i++)); do
    grep -q "info: job .* started" "$MW_T/agg.err" 2>/dev/null && break
    sleep 0.05
done
grep -q "info: job .* started" "$MW_T/agg.err" ||
    mw_fail "the first collector had not seen the job half way through: the test would prove nothing"
n=$(ss -xn 2>/dev/null | grep -cF "$MW_T/ingest ")
[ "$n" = 0 ] || mw_fail "$n connection(s) to the root before the first collector died (no fallback yet)"

t0=$(fo_now_ms)
kill -KILL "$AGG_PID"
wait "$AGG_PID" 2>/dev/null
mw_log "first collector killed half way through the job"
mw_wait_connected "$MW_T/ingest" "$FO_NP" ||
    mw_fail "the ranks did not fall back to the root within 20 s"
ms=$(($(fo_now_ms) - t0 - 500)) # mw_wait_connected waits half a second more
mw_log "the $FO_NP ranks connected to the root ${ms} ms after the kill (MPIWATCH_FALLBACK_AFTER=$AFTER_S, bound $BOUND_S s)"
[ "$ms" -le $((BOUND_S * 1000)) ] ||
    mw_fail "the fallback took $ms ms, more than $BOUND_S s"

fo_wait_bg
mw_collector_exits 40
ft_same
ft_accounting --expect-missed
mw_log "ok"
