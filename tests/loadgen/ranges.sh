#!/bin/bash
# ranges.sh COLLECTOR LOADGEN: --rank-first / --rank-count and several --connect.
#
# An aggregator tree is fed by several generators, each emulating a range of ranks of one job,
# or by one generator sending contiguous blocks of its ranks to several endpoints. This checks
# that the pieces add up to the whole job exactly:
#  1. one generator emulates the whole 64-rank job (seed 7) encoding every sample with
#     protobuf-c (--variants 0): its totals are the reference; the others use cached encodings
#     (--variants 10, one per window of the run), so they must send exactly the same content;
#  2. a collector listening on two endpoints receives the same job from two generators running
#     at once, ranks 0..23 (split over both endpoints: two --connect) and 24..63: the two
#     totals files must add up to the whole one, each must say its range, and the collector's
#     summary must hold all 64 ranks, every rank's per-function totals from the generator that
#     emulated it, and the whole job's totals;
#  3. two collectors, one per endpoint, receive one generator's two blocks: the first must see
#     exactly ranks 0..31 and the second 32..63, each hello saying size 64.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
MW_COLLECTOR=$1
loadgen=$2
python=$MW_PYTHON
mw_init loadgen_ranges
dir=$MW_T
common=(--ranks 64 --rate 10 --functions 8 --seconds 1 --nodes 4 --job lgrange --seed 7)
cached=(--variants 10)

# 1. The whole job, every sample encoded by protobuf-c.
mw_start_collector --exit-after-job --quiet --silence-timeout-ms 30000
"$loadgen" --connect "$MW_EP" "${common[@]}" --variants 0 --totals-json "$dir/whole.json" \
    2>"$dir/whole.err" || { MW_FAILURE_LOG=$dir/whole.err; mw_fail "whole generator failed"; }
mw_collector_exits 15

# 2. Two half generators at once into one collector with two endpoints.
ep2="ipc://$dir/ingest2"
mw_start_collector --listen "$ep2" --exit-after-job --quiet --silence-timeout-ms 30000 \
    --summary-json "$dir/summary.json" --stats-json "$dir/stats.json"
"$loadgen" --connect "$MW_EP" --connect "$ep2" "${common[@]}" --rank-first 0 --rank-count 24 \
    "${cached[@]}" \
    --totals-json "$dir/a.json" 2>"$dir/a.err" &
pa=$!
"$loadgen" --connect "$ep2" "${common[@]}" --rank-first 24 --rank-count 40 "${cached[@]}" \
    --totals-json "$dir/b.json" 2>"$dir/b.err" &
pb=$!
wait "$pa" || { MW_FAILURE_LOG=$dir/a.err; mw_fail "generator of ranks 0..23 failed"; }
wait "$pb" || { MW_FAILURE_LOG=$dir/b.err; mw_fail "generator of ranks 24..63 failed"; }
mw_collector_exits 15

# 3. One generator, two endpoints, one collector each.
mw_start_collector --exit-after-job --quiet --silence-timeout-ms 30000 \
    --summary-json "$dir/s1.json"
c1=$MW_CPID
ep3="ipc://$dir/ingest3"
"$MW_COLLECTOR" --listen "$ep3" --exit-after-job --quiet --silence-timeout-ms 30000 \
    --summary-json "$dir/s2.json" </dev/null >"$dir/c2.out" 2>"$dir/c2.err" &
c2=$!
for ((i = 0; i < 200; i++)); do
    [ -S "$dir/ingest3" ] && break
    sleep 0.05
done
"$loadgen" --connect "$MW_EP" --connect "$ep3" "${common[@]}" "${cached[@]}" \
    --totals-json "$dir/c.json" \
    2>"$dir/c.err" || { MW_FAILURE_LOG=$dir/c.err; mw_fail "two-endpoint generator failed"; }
# Each collector sees only its half of the job: stop them once the byes are in.
for ((i = 0; i < 200; i++)); do
    [ -s "$dir/s1.json" ] && [ -s "$dir/s2.json" ] && break
    sleep 0.05
done
MW_CPID=$c1
mw_stop_collector 0
kill -TERM "$c2" 2>/dev/null
wait "$c2"

"$python" - "$dir" <<'PY' || mw_fail "output check"
import json, sys

d = sys.argv[1]
load = lambda name: json.load(open(f"{d}/{name}"))
whole, a, b, c = (load(f"{n}.json") for n in ("whole", "a", "b", "c"))
summary, stats, s1, s2 = (load(f"{n}.json") for n in ("summary", "stats", "s1", "s2"))
errors = []
def check(what, got, want):
    if got != want:
        errors.append(f"{what}: got {got!r}, want {want!r}")

check("whole range", (whole["rank_first"], whole["rank_count"]), (0, 64))
check("windows", [t["windows"] for t in (whole, a, b, c)], [10] * 4)
check("bytes sent", a["bytes"] + b["bytes"] - whole["bytes"], 0)
check("a range", (a["ranks"], a["rank_first"], a["rank_count"]), (64, 0, 24))
check("b range", (b["ranks"], b["rank_first"], b["rank_count"]), (64, 24, 40))
check("a hellos, samples", (a["hellos"], a["samples"]), (24, 24 * a["windows"]))
check("b hellos, samples", (b["hellos"], b["samples"]), (40, 40 * b["windows"]))
summed = {}
for t in (a, b):
    for f, v in t["functions"].items():
        s = summed.setdefault(f, {"count": 0, "time_ns": 0, "bytes": 0})
        for k in s:
            s[k] += v[k]
check("halves add up to the whole", summed, whole["functions"])
check("peer messages", a["peer_messages"] + b["peer_messages"], whole["peer_messages"])
if whole["functions"] == {}:
    errors.append("no functions in the whole job's totals")

check("accepted", stats["accepted"], sum(t[k] for t in (a, b) for k in ("hellos", "samples", "byes")))
for reason, n in stats["rejected"].items():
    check(f"rejected[{reason}]", n, 0)
check("summary ranks", summary["ranks"], 64)
check("summary per_rank", [r["rank"] for r in summary["per_rank"]], list(range(64)))
check("summary functions", summary["functions"], whole["functions"])
def rank_sum(per_rank, lo, hi):
    out = {}
    for r in per_rank:
        if lo <= r["rank"] < hi:
            for f, v in r["functions"].items():
                s = out.setdefault(f, {"count": 0, "time_ns": 0, "bytes": 0})
                for k in s:
                    s[k] += v[k]
    return out
check("ranks 0..23 in the summary", rank_sum(summary["per_rank"], 0, 24), a["functions"])
check("ranks 24..63 in the summary", rank_sum(summary["per_rank"], 24, 64), b["functions"])

check("two endpoints: totals", c["functions"], whole["functions"])
check("first endpoint's ranks", [r["rank"] for r in s1["per_rank"]], list(range(32)))
check("second endpoint's ranks", [r["rank"] for r in s2["per_rank"]], list(range(32, 64)))
check("first endpoint's job size", s1["ranks"], 64)
check("first endpoint's totals", rank_sum(s1["per_rank"], 0, 64), rank_sum(summary["per_rank"], 0, 32))
check("second endpoint's totals", rank_sum(s2["per_rank"], 0, 64), rank_sum(summary["per_rank"], 32, 64))
for e in errors:
    print("mismatch:", e)
sys.exit(1 if errors else 0)
PY
mw_log "ok"
