#!/bin/bash
# lateness_job.sh EXPORT FEED: the online lateness analysis on a real MPI job through a real
# collector (docs/lateness.md).
#   on:  tests/programs/logical_patterns ring on 4 ranks, rank 2 sleeping 200 ms once before
#        its send of iteration 5, traced (the ranks start with `all`), 50 ms windows. The
#        collector runs with --publish, --history, --steer, --record and a rule on
#        diff_lateness_max > 0.1 s that steers {rank}. Checks: the feed's "lateness" topic has
#        window summaries, and the one with the largest differential lateness names rank 2
#        and MPI_Isend, at least 150 ms, with a larger lateness downstream than anywhere
#        before the delay; no window of the feed puts a differential lateness of 100 ms or more
#        on another rank; the rule fired once with rank=2, function=MPI_Isend and a step, and
#        its steering message went to rank 2 only; the history serves the same batches
#        (--lateness N); the recording exported with --format lateness has exactly the feed's
#        window summaries; the report names rank 2; /metrics shows the analysed windows, none
#        behind, and the job's largest lateness; a replay of the recording (--replay, which
#        republishes the recorded batches) fires the same rule once, at rank 2.
#   off: the same job with --lateness off: no message on the topic, nothing recorded, no
#        lateness section in the report, the /metrics figures 0.
. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"
mw_setup lateness_job
export_bin=${1:?usage: lateness_job.sh MPIWATCH-EXPORT MPIWATCH-FEED}
feed_bin=${2:?usage: lateness_job.sh MPIWATCH-EXPORT MPIWATCH-FEED}
prog=$MW_PROGRAMS/logical_patterns
[ -x "$prog" ] || mw_fail "program not built: $prog"
PY=${MW_PYTHON:-/usr/bin/python3}

cat >"$MW_T/rules.ini" <<'EOF'
[rule origin]
metric    = diff_lateness_max
op        = >
threshold = 0.1
cooldown  = 1000
action    = steer
steer     = app.lateness=origin
ranks     = {rank}
EOF

# run NAME COLLECTOR-OPTIONS...: a collector (left running after the job), a feed subscriber
# on "lateness" and "event" until the job's end, the ring job; the history is asked for the
# lateness batches before the collector is stopped.
run() {
    local name=$1 i port
    shift
    mkdir -p "$MW_T/$name"
    : >"$MW_T/collector.err"
    port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') ||
        mw_fail "no free port"
    mw_start_collector --summary-json "$MW_T/summary.json" --publish "ipc://$MW_T/$name/pub" \
        --metrics-port "$port" \
        --history "ipc://$MW_T/$name/hist" --steer "ipc://$MW_T/$name/steer" \
        --record "$MW_T/$name/r.mpiw" --rules "$MW_T/rules.ini" "$@"
    "$feed_bin" --subscribe "ipc://$MW_T/$name/pub" --topic lateness --topic event \
        --until-job-end --timeout-ms 60000 >"$MW_T/$name/feed.jsonl" 2>"$MW_T/$name/feed.err" &
    local feed_pid=$!
    mw_wait_connected "$MW_T/$name/pub" 1 || mw_fail "$name: the feed client did not connect"
    sleep 0.3 # its subscription reaches the PUB socket
    mw_mpirun -x MPIWATCH_STEER="ipc://$MW_T/$name/steer" "$prog" ring -n 12 -d 200 -r 2 -i 5 \
        -c 10 >"$MW_T/$name/app.out" 2>"$MW_T/$name/app.err" ||
        { cat "$MW_T/$name/app.err" >&2; mw_fail "$name: the job failed"; }
    grep -q "^logical_patterns ring ranks=$MW_NP" "$MW_T/$name/app.out" ||
        mw_fail "$name: the program did not report"
    for ((i = 0; i < 400; i++)); do
        kill -0 "$feed_pid" 2>/dev/null || break
        sleep 0.05
    done
    wait "$feed_pid" || mw_fail "$name: the feed client failed: $(tail -3 "$MW_T/$name/feed.err")"
    "$feed_bin" --history "ipc://$MW_T/$name/hist" --lateness 100000 \
        >"$MW_T/$name/history.json" 2>"$MW_T/$name/history.err" ||
        mw_fail "$name: the history request failed: $(tail -3 "$MW_T/$name/history.err")"
    # The page is rebuilt at once at the job's end, at most 500 ms after a change otherwise.
    "$PY" - "$port" >"$MW_T/$name/metrics.txt" <<'PY' || mw_fail "$name: no /metrics page"
import re, sys, time, urllib.request
for _ in range(50):
    try:
        text = urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=5).read()
        if b"mpiwatch_lateness_windows_total" in text:
            break
    except OSError:
        pass
    time.sleep(0.1)
# Without the job label every series carries (docs/metrics.md), so that the keys are the names.
sys.stdout.write(re.sub(r'\{job="(?:[^"\\]|\\.)*"\}|job="(?:[^"\\]|\\.)*",', "", text.decode()))
PY
    mw_stop_collector 0
    cp "$MW_T/collector.err" "$MW_T/$name/collector.err"
    "$export_bin" --format lateness "$MW_T/$name/r.mpiw" -o "$MW_T/$name/lateness.jsonl" \
        2>"$MW_T/$name/export.err" || mw_fail "$name: export --format lateness failed"
}

run on
run off --lateness off
printf '[rule origin]\nmetric = diff_lateness_max\nop = >\nthreshold = 0.1\naction = log\n' \
    >"$MW_T/replay.ini"
"$MW_COLLECTOR" --replay "$MW_T/on/r.mpiw" --speed 0 --quiet --rules "$MW_T/replay.ini" \
    2>"$MW_T/replay.err" || mw_fail "the replay failed: $(tail -3 "$MW_T/replay.err")"

"$PY" - "$MW_T" "$MW_NP" <<'EOF' || mw_fail "lateness (above)"
import json, re, sys
d, np_ = sys.argv[1], int(sys.argv[2])
errors = []
def lines(p):
    return [json.loads(l) for l in open(p) if l.strip()]

# ---- on ----
feed = lines(f"{d}/on/feed.jsonl")
batches = [m["lateness"] for m in feed if m["topic"] == "lateness"]
wins = [w for b in batches for w in b["windows"]]
if not wins:
    sys.exit(f"no window summary on the feed ({len(batches)} lateness messages)")
top = max(wins, key=lambda w: w["diff_max_ns"])
print(f"feed: {len(batches)} batches, {len(wins)} window summaries, largest differential "
      f"lateness {top['diff_max_ns'] / 1e6:.1f} ms on rank {top['diff_rank']} "
      f"({top['diff_fn']}, step {top['diff_step']}, window {top['window']})")
if top["diff_rank"] != 2 or top["diff_fn"] != "MPI_Isend":
    errors.append(f"the largest differential lateness is on rank {top['diff_rank']} "
                  f"{top['diff_fn']}, want rank 2 MPI_Isend")
if top["diff_max_ns"] < 150e6:
    errors.append(f"largest differential lateness {top['diff_max_ns']} ns, want >= 150 ms")
others = [w for w in wins if w["diff_rank"] != 2 and w["diff_max_ns"] >= 100e6]
if others:
    errors.append(f"differential lateness >= 100 ms on other ranks: {others[:3]}")
before = [w for w in wins if w["window"] < top["window"]]
late_after = max((w["lateness_max_ns"] for w in wins if w["window"] >= top["window"]), default=0)
if before and late_after <= max(w["lateness_max_ns"] for w in before):
    errors.append("no lateness larger than before the delay from its window on")
# (The job's first and last windows may have fewer ranks: they start and end at other times.)
if top["traced_ranks"] != np_ or any(not 0 < w["traced_ranks"] <= np_ for w in wins):
    errors.append(f"traced ranks {[w['traced_ranks'] for w in wins]}, want {np_} at the delay")
last = batches[-1]
if last["windows_analysed"] < len(wins) or last["windows_skipped"] != 0:
    errors.append(f"analysed {last['windows_analysed']}, skipped {last['windows_skipped']}")

# The rule: one firing, at rank 2 and MPI_Isend, and its message to rank 2 only.
log = open(f"{d}/on/collector.err").read()
fired = re.findall(r"rule fired: rule=origin .*", log)
if len(fired) != 1:
    errors.append(f"{len(fired)} firings of the rule, want 1: {fired}")
elif not re.search(r" rank=2 .*step=\d+ function=MPI_Isend", fired[0]):
    errors.append(f"the rule fired elsewhere: {fired[0]}")
events = [m["event"] for m in feed if m["topic"] == "event" and m["event"]["kind"] == "rule"]
if len(events) != 1 or " rank=2 " not in events[0]["detail"]:
    errors.append(f"rule events on the feed: {events}")
if not re.search(r"steer #\d+: app\.lateness=origin ranks 2$", log, re.M):
    errors.append("no steering message app.lateness=origin to rank 2 in the log")

# The history serves the same batches; the recording's export has the same summaries.
hist = json.load(open(f"{d}/on/history.json"))
hwins = [w for b in hist["lateness"] for w in b["windows"]]
if [w["window"] for w in hwins] != [w["window"] for w in wins]:
    errors.append(f"history windows {[w['window'] for w in hwins]} != feed "
                  f"{[w['window'] for w in wins]}")
exp = lines(f"{d}/on/lateness.jsonl")
ewins = [w for w in exp if w["type"] == "window"]
key = lambda w: (w["window"], w["diff_max_ns"], w["diff_rank"], w["lateness_max_ns"],
                 w["lateness_rank"], w["lost_ns"], w["events"])
if [key(w) for w in ewins] != [key(w) for w in wins]:
    errors.append("the exported window summaries differ from the feed's")
if not any(w["type"] == "step" for w in exp):
    errors.append("no step summary in the export")
if "Lateness (logical steps" not in log or "(rank 2, MPI_Isend" not in log:
    errors.append("the report has no lateness section naming rank 2")

metrics = dict(l.split() for l in open(f"{d}/on/metrics.txt") if l[:1] not in "#\n")
m_win = float(metrics.get("mpiwatch_lateness_windows_total", -1))
if m_win != last["windows_analysed"] or float(metrics["mpiwatch_lateness_behind_total"]) != 0:
    errors.append(f"/metrics: {m_win} windows analysed (want {last['windows_analysed']}), "
                  f"{metrics.get('mpiwatch_lateness_behind_total')} behind")
if abs(float(metrics["mpiwatch_lateness_job_max_seconds"]) * 1e9 -
       max(w["lateness_max_ns"] for w in wins)) > 1e3:
    errors.append(f"/metrics: job max {metrics['mpiwatch_lateness_job_max_seconds']} s")

replayed = re.findall(r"rule fired: rule=origin .*", open(f"{d}/replay.err").read())
if len(replayed) != 1 or not re.search(r" rank=2 .*function=MPI_Isend", replayed[0]):
    errors.append(f"the replay's firings: {replayed}, want one at rank 2")

# ---- off ----
off = lines(f"{d}/off/feed.jsonl")
if any(m["topic"] == "lateness" for m in off):
    errors.append("--lateness off published lateness messages")
if not any(m["topic"] == "event" and m["event"]["kind"] == "job_end" for m in off):
    errors.append("--lateness off: the feed did not see the job's end")
if open(f"{d}/off/lateness.jsonl").read().strip():
    errors.append("--lateness off: lateness summaries in the recording")
if json.load(open(f"{d}/off/history.json"))["lateness"]:
    errors.append("--lateness off: lateness batches in the history")
if "Lateness (logical steps" in open(f"{d}/off/collector.err").read():
    errors.append("--lateness off: a lateness section in the report")
off_metrics = dict(l.split() for l in open(f"{d}/off/metrics.txt") if l[:1] not in "#\n")
if float(off_metrics.get("mpiwatch_lateness_windows_total", -1)) != 0:
    errors.append("--lateness off: /metrics counts analysed windows")
if "rule fired" in open(f"{d}/off/collector.err").read():
    errors.append("--lateness off: the lateness rule fired")
sys.exit("\n".join(errors) if errors else 0)
EOF
