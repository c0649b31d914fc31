#!/bin/bash
# subscribe.sh COLLECTOR LOADGEN FEED GARBAGE: a subscriber of --publish receives every window.
#
# A collector with --publish, a subscriber (mpiwatch-feed --subscribe --until-job-end) started
# before the job, and a 64-rank load generator job (10 windows/s for 3 s). The subscriber must
# receive every window the collector closed (as many as its stats say, indices consecutive,
# none twice), each complete, whose per-function counts, times and bytes add up exactly to
# the generator's totals; the job description (size, name) and the job_start and job_end
# events; and nothing undecodable.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
MW_COLLECTOR=$1
loadgen=$2
feed=$3
python=$MW_PYTHON
mw_init feed_subscribe
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
dir=$MW_T

mw_start_collector --exit-after-job --quiet --summary-json "$dir/summary.json" \
    --stats-json "$dir/stats.json" --silence-timeout-ms 30000 --publish "$FEED_PUB"
"$feed" --subscribe "$FEED_PUB" --until-job-end --timeout-ms 60000 >"$dir/sub.jsonl" \
    2>"$dir/sub.err" &
sub=$!
feed_bg $sub
sleep 1 # the subscription reaches the PUB socket before the first window (slow joiner)
"$loadgen" --connect "$MW_EP" --ranks 64 --rate 10 --functions 8 --seconds 3 --nodes 4 \
    --job feedsub --seed 5 --totals-json "$dir/totals.json" 2>"$dir/loadgen.err" ||
    { MW_FAILURE_LOG=$dir/loadgen.err; mw_fail "mpiwatch-loadgen failed"; }
mw_collector_exits 15
MW_FAILURE_LOG=$dir/sub.err
wait $sub || mw_fail "the subscriber failed"

"$python" - "$dir" <<'PY' || mw_fail "feed check"
import json, sys

d = sys.argv[1]
load = lambda name: json.load(open(f"{d}/{name}"))
tot, stats = load("totals.json"), load("stats.json")
msgs = [json.loads(l) for l in open(f"{d}/sub.jsonl")]
errors = []
def check(what, got, want):
    if got != want:
        errors.append(f"{what}: got {got!r}, want {want!r}")

windows = [m["window"] for m in msgs if m["topic"] == "window"]
idx = [w["index"] for w in windows]
check("windows received", len(windows), stats["windows"])
check("windows sent", len(windows), tot["windows"])
check("consecutive indices", idx, list(range(idx[0], idx[0] + len(idx))) if idx else [])
check("complete windows", [w["ranks_reporting"] for w in windows if w["ranks_missing"]], [])
check("ranks_reporting", {w["ranks_reporting"] for w in windows}, {64})
sums = {}
for w in windows:
    for name, f in w["functions"].items():
        s = sums.setdefault(name, {"count": 0, "time_ns": 0, "bytes": 0})
        for k in s:
            s[k] += f[k]
check("per-function sums", sums, tot["functions"])
jobs = [m["job"] for m in msgs if m["topic"] == "job"]
check("job seen", bool(jobs), True)
if jobs:
    check("job name", jobs[0]["job"], "feedsub")
    check("job size", jobs[0]["size"], 64)
events = [m["event"]["kind"] for m in msgs if m["topic"] == "event"]
check("first event", events[:1], ["job_start"])
check("last message", msgs[-1].get("event", {}).get("kind"), "job_end")
check("errors", [m for m in msgs if "error" in m], [])
for e in errors:
    print("mismatch:", e)
sys.exit(1 if errors else 0)
PY
grep -q "0 gaps in window indices, 0 undecodable" "$dir/sub.err" ||
    mw_fail "the subscriber saw gaps or undecodable messages"
mw_log "ok"
