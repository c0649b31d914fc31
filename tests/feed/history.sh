#!/bin/bash
# history.sh COLLECTOR LOADGEN FEED GARBAGE: late clients of --history get what the feed had.
#
# Part 1, with a recording and little memory (--history-windows 4, --history-mb 1): a
# subscriber keeps the bytes of every window of a 64-rank load generator job (10 windows/s,
# 3 s); after the job, late clients ask the history endpoint, through REQ and DEALER sockets:
#   --job                  the job, ended, 64 ranks, its name;
#   --last 3, --last 10    the newest windows (the first from memory, the second partly from
#                          the recording), byte for byte the ones the subscriber received;
#   --range FIRST:LAST     every window, 4 from memory and the rest from the recording, byte
#                          for byte the subscriber's, with oldest and newest filled in;
#   --rank 5 and 63        one sample per window, in order, whose per-function counts, times
#                          and bytes add up to the summary's totals of that rank (most of them
#                          read back from the recording: 1 MiB holds a few windows of samples);
#   --rank 64              an error: the job has 64 ranks.
# The collector must report windows and samples served from the recording.
# Part 2, without a recording: windows and samples that left memory are refused with an
# error saying so, while the last windows are still answered.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
MW_COLLECTOR=$1
loadgen=$2
feed=$3
python=$MW_PYTHON
mw_init feed_history
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
dir=$MW_T

# ---- part 1: memory and recording
mw_start_collector --quiet --summary-json "$dir/summary.json" --silence-timeout-ms 30000 \
    --publish "$FEED_PUB" --history "$FEED_HIST" --record "$dir/run.mpiw" \
    --history-windows 4 --history-mb 1
"$feed" --subscribe "$FEED_PUB" --until-job-end --pb-hex --timeout-ms 60000 \
    >"$dir/sub.jsonl" 2>"$dir/sub.err" &
sub=$!
feed_bg $sub
sleep 1 # subscribed before the first window
"$loadgen" --connect "$MW_EP" --ranks 64 --rate 10 --functions 8 --seconds 3 --nodes 4 \
    --job feedhist --seed 11 2>"$dir/loadgen.err" ||
    { MW_FAILURE_LOG=$dir/loadgen.err; mw_fail "mpiwatch-loadgen failed"; }
wait $sub || { MW_FAILURE_LOG=$dir/sub.err; mw_fail "the subscriber failed"; }
feed_wait_file "$dir/summary.json" 30

read -r first last < <("$python" -c '
import json, sys
msgs = [json.loads(l) for l in open(sys.argv[1])]
w = [m["window"]["index"] for m in msgs if m["topic"] == "window"]
print(w[0], w[-1])' "$dir/sub.jsonl") || mw_fail "no windows on the feed"
ask() { # ask NAME ARGS...: one request, its reply in NAME.json
    local name=$1
    shift
    "$feed" --history "$FEED_HIST" --pb-hex "$@" >"$dir/$name.json" 2>"$dir/$name.err"
}
ask job --job --id 7 || mw_fail "--job failed: $(cat "$dir/job.err")"
ask last3 --last 3 --dealer || mw_fail "--last 3 failed: $(cat "$dir/last3.err")"
ask last10 --last 10 || mw_fail "--last 10 failed: $(cat "$dir/last10.err")"
ask all --range "$first:$last" --dealer || mw_fail "--range failed: $(cat "$dir/all.err")"
ask rank5 --rank 5 --range "$first:$last" || mw_fail "--rank 5 failed: $(cat "$dir/rank5.err")"
ask rank63 --rank 63 --range "$first:$last" --dealer ||
    mw_fail "--rank 63 failed: $(cat "$dir/rank63.err")"
ask rank64 --rank 64 --range "$first:$last" && mw_fail "--rank 64 was answered"
mw_stop_collector
MW_FAILURE_LOG=''

"$python" - "$dir" "$first" "$last" <<'PY' || mw_fail "part 1 check"
import json, re, sys

d, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
load = lambda name: json.load(open(f"{d}/{name}"))
summary = load("summary.json")
sub = {m["window"]["index"]: m["window"] for m in map(json.loads, open(f"{d}/sub.jsonl"))
       if m["topic"] == "window"}
errors = []
def check(what, got, want):
    if got != want:
        errors.append(f"{what}: got {got!r}, want {want!r}")

check("subscriber windows", sorted(sub), list(range(first, last + 1)))
check("windows in the summary", len(sub), summary["windows"])
job = load("job.json")
check("job id", job["id"], 7)
check("job", (job["job"] or {}).get("job"), "feedhist")
check("job size", (job["job"] or {}).get("size"), 64)
if (job["job"] or {}).get("state", "running") == "running":
    errors.append("the job is still running after its end")
for name, want in (("last3", list(range(last - 2, last + 1))),
                   ("last10", list(range(last - 9, last + 1))),
                   ("all", list(range(first, last + 1)))):
    r = load(f"{name}.json")
    check(f"{name} error", r["error"], "")
    check(f"{name} truncated", r["truncated"], False)
    check(f"{name} oldest", r["oldest"], first)
    check(f"{name} newest", r["newest"], last)
    check(f"{name} windows", [w["index"] for w in r["windows"]], want)
    bad = [w["index"] for w in r["windows"] if w["pb"] != sub.get(w["index"], {}).get("pb")]
    check(f"{name}: windows whose bytes differ from the feed's", bad, [])
per_rank = {r["rank"]: r["functions"] for r in summary["per_rank"]}
for rank in (5, 63):
    r = load(f"rank{rank}.json")
    check(f"rank {rank} error", r["error"], "")
    check(f"rank {rank} ranks", {s["rank"] for s in r["samples"]}, {rank})
    check(f"rank {rank} windows", [s["window"] for s in r["samples"]], list(range(first, last + 1)))
    sums = {}
    for s in r["samples"]:
        for name, f in s["functions"].items():
            t = sums.setdefault(name, {"count": 0, "time_ns": 0, "bytes": 0})
            for k in t:
                t[k] += f[k]
    check(f"rank {rank} totals", sums, per_rank[rank])
r64 = load("rank64.json")
check("rank 64", bool(re.search("not in the job", r64["error"])), True)
log = open(f"{d}/collector.err").read()
m = re.search(r"history: (\d+) requests, (\d+) answered, (\d+) errors, \d+ truncated, "
              r"(\d+) from the recording", log)
if not m:
    errors.append("no feed line in the collector's log")
else:
    check("requests, answered, errors", [int(x) for x in m.groups()[:3]], [7, 7, 1])
    # last10 and all read 6 windows and all but 4 from the recording; the rank requests the
    # samples that 1 MiB could not hold.
    if int(m.group(4)) <= 6 + len(sub) - 4:
        errors.append(f"only {m.group(4)} windows and samples came from the recording")
for e in errors:
    print("mismatch:", e)
sys.exit(1 if errors else 0)
PY

# ---- part 2: no recording
rm -f "$dir/summary.json"
mw_start_collector --quiet --summary-json "$dir/summary.json" --silence-timeout-ms 30000 \
    --history "$FEED_HIST" --history-windows 4 --history-mb 1
"$loadgen" --connect "$MW_EP" --ranks 64 --rate 10 --functions 8 --seconds 2 --nodes 4 \
    --job feedhist2 --seed 11 2>"$dir/loadgen2.err" ||
    { MW_FAILURE_LOG=$dir/loadgen2.err; mw_fail "second mpiwatch-loadgen failed"; }
feed_wait_file "$dir/summary.json" 30
ask last4 --last 4 || mw_fail "--last 4 without a recording failed: $(cat "$dir/last4.err")"
read -r first2 last2 < <("$python" -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(r["newest"] - 30, r["newest"])' "$dir/last4.json")
ask gone --range "$first2:$last2" && mw_fail "windows no longer in memory were answered"
ask gone_rank --rank 5 --range "$first2:$last2" &&
    mw_fail "samples no longer in memory were answered"
mw_stop_collector
"$python" - "$dir" <<'PY' || mw_fail "part 2 check"
import json, sys
d = sys.argv[1]
errors = []
last4 = json.load(open(f"{d}/last4.json"))
if len(last4["windows"]) != 4 or last4["error"]:
    errors.append(f"--last 4: {len(last4['windows'])} windows, error {last4['error']!r}")
for name in ("gone", "gone_rank"):
    r = json.load(open(f"{d}/{name}.json"))
    if "no longer in memory" not in r["error"] or r["windows"] or r["samples"]:
        errors.append(f"{name}: error {r['error']!r}, {len(r['windows'])} windows, "
                      f"{len(r['samples'])} samples")
for e in errors:
    print("mismatch:", e)
sys.exit(1 if errors else 0)
PY
mw_log "ok"
