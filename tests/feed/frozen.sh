#!/bin/bash
# frozen.sh COLLECTOR LOADGEN FEED GARBAGE: a stopped subscriber never slows ingest.
#
# A subscriber of --publish is stopped (SIGSTOP) before a heavy load generator job: 2048 ranks
# on 64 nodes, 20 windows/s for 15 s (300 windows of about 120 KB on the feed, more than the
# PUB socket queues for one subscriber). The collector must still take everything in time:
# it exits 0 after the job, accepted every message and rejected none, and its summary equals
# the generator's totals; its feed published every window. A generator starved of CPU on a
# loaded 2-core machine may send a few samples after their window's 3 s lateness allowance:
# at most 1% of the samples may be late and 2% of the windows partial (a collector that waits
# for its stopped subscriber stalls for good, far beyond that). Continued after the job, the subscriber must receive some windows but not all of
# them: it really was subscribed, and the collector kept a bounded queue for it and dropped
# the rest instead of waiting or buffering the whole run.
# The subscriber is stopped once ss shows it connected to the feed (and half a second more for
# its subscription to arrive), not after a fixed sleep.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
MW_COLLECTOR=$1
loadgen=$2
feed=$3
python=$MW_PYTHON
mw_init feed_frozen
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
dir=$MW_T

mw_start_collector --quiet --summary-json "$dir/summary.json" \
    --stats-json "$dir/stats.json" --silence-timeout-ms 60000 --lateness-ms 3000 \
    --publish "$FEED_PUB"
"$feed" --subscribe "$FEED_PUB" --topic window --timeout-ms 3000 >"$dir/sub.jsonl" \
    2>"$dir/sub.err" &
sub=$!
feed_bg $sub
mw_wait_connected "${FEED_PUB#ipc://}" || mw_fail "the subscriber did not connect to the feed within 20 s"
kill -STOP $sub
"$loadgen" --connect "$MW_EP" --ranks 2048 --nodes 64 --rate 20 --functions 8 --seconds 15 \
    --job frozen --seed 3 --totals-json "$dir/totals.json" 2>"$dir/loadgen.err" ||
    { MW_FAILURE_LOG=$dir/loadgen.err; mw_fail "mpiwatch-loadgen failed"; }
MW_FAILURE_LOG=$dir/loadgen.err
feed_wait_file "$dir/summary.json" 60 # the job has ended
kill -CONT $sub
wait $sub # it leaves 3 s after the last message it gets
MW_FAILURE_LOG=$dir/sub.err
mw_stop_collector

"$python" - "$dir" <<'PY' || mw_fail "output check"
import json, re, sys

d = sys.argv[1]
load = lambda name: json.load(open(f"{d}/{name}"))
tot, stats, summary = load("totals.json"), load("stats.json"), load("summary.json")
errors = []
def check(what, got, want):
    if got != want:
        errors.append(f"{what}: got {got!r}, want {want!r}")

check("accepted", stats["accepted"], tot["hellos"] + tot["samples"] + tot["byes"])
for reason, n in stats["rejected"].items():
    check(f"rejected[{reason}]", n, 0)
if stats["late"] * 100 > tot["samples"]:
    errors.append(f"late samples: {stats['late']} of {tot['samples']} (at most 1%)")
if stats["partial_windows"] * 50 > tot["windows"]:
    errors.append(f"partial windows: {stats['partial_windows']} of {tot['windows']} (at most 2%)")
check("windows", stats["windows"], tot["windows"])
check("summary functions", summary["functions"], tot["functions"])
check("summary dropped", summary["dropped"], 0)
log = open(f"{d}/collector.err").read()
m = re.search(r"feed: published (\d+) windows", log)
check("windows published", int(m.group(1)) if m else None, tot["windows"])
got = sum(1 for l in open(f"{d}/sub.jsonl") if l.startswith('{"topic": "window"'))
if not 0 < got < tot["windows"]:
    errors.append(f"the stopped subscriber received {got} of {tot['windows']} windows")
print(f"feed_frozen: the stopped subscriber received {got} of {tot['windows']} windows")
for e in errors:
    print("mismatch:", e)
sys.exit(1 if errors else 0)
PY
mw_log "ok"
