#!/bin/bash
# replay_equal.sh COLLECTOR LOADGEN RECDUMP BADINPUT: a recording replays to the same outputs.
#
# A collector records (--record) a run with bad input and a 1-rank job from mw-badinput, then a
# 64-rank loadgen job, and is stopped by SIGTERM. The recording must be complete (finish frame,
# closed by an index, every window found through the index with its first sample), its size in
# the stats JSON. `--replay --speed 0` of it must then write a byte-identical summary JSON and
# the same stats counters (accepted, rejected by reason, late, windows), with every
# regenerated window equal to the recorded one.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
MW_COLLECTOR=$1
REC_LOADGEN=$2
REC_DUMP=$3
badinput=$4
mw_init record_replay_equal
d=$MW_T

port=$("$MW_PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')
mw_start_collector --listen "tcp://127.0.0.1:$port" --record "$d/run.mpiw" \
    --summary-json "$d/live.json" --stats-json "$d/live-stats.json" --silence-timeout-ms 30000
"$badinput" bad "$MW_EP" 127.0.0.1 "$port" >"$d/bad.json" || mw_fail "mw-badinput bad failed"
"$badinput" job "$MW_EP" >"$d/job.json" || mw_fail "mw-badinput job failed"
rec_loadgen --ranks 64 --rate 10 --functions 8 --seconds 2 --nodes 4 --job recjob --seed 3
# Every rank said bye: the job has ended and its files are written; then the signal.
for ((i = 0; i < 100; i++)); do
    grep -q "job 'recjob' ended" "$d/collector.err" && break
    sleep 0.1
done
kill -TERM "$MW_CPID"
mw_collector_exits 10
grep -q "^Recording" "$d/collector.err" || mw_fail "the report has no Recording section"

rec_dump "$d/run.mpiw" "$d/dump"
[ "$(rec_val "$d/dump" truncated)" = 0 ] || mw_fail "a cleanly closed recording reads as truncated"
[ "$(rec_val "$d/dump" last)" = index ] || mw_fail "the recording does not end with its index"
[ "$(rec_val "$d/dump" finish)" = 1 ] || mw_fail "the SIGTERM finish is not recorded"
[ "$(rec_val "$d/dump" start)" = 1 ] || mw_fail "no start frame"
windows=$(rec_val "$d/dump" window)
[ "$windows" -ge 21 ] || mw_fail "only $windows windows recorded (20 loadgen + badinput's)"
[ "$(rec_val "$d/dump" find_ok)" = "$windows" ] ||
    mw_fail "find_window found $(rec_val "$d/dump" find_ok) of $windows windows"
first=$(rec_val "$d/dump" find_first_sample)
[ "$first" = "$windows" ] ||
    mw_fail "the index knows the first sample of $first of $windows windows"
size=$(stat -c %s "$d/run.mpiw")
rb=$(rec_json "$d/live-stats.json" 'j["recording_bytes"]')
{ [ "$rb" -gt 0 ] && [ "$rb" -le "$size" ]; } || mw_fail "recording_bytes $rb, file size $size"
[ "$(rec_json "$d/live-stats.json" 'j["recording_errors"]')" = 0 ] || mw_fail "recording errors"
# The hello-less and multipart junk was recorded as received, so it is rejected again in replay.
[ "$(rec_val "$d/dump" message)" -gt "$(rec_json "$d/live-stats.json" 'j["accepted"]')" ] ||
    mw_fail "rejected frames are missing from the recording"

MW_FAILURE_LOG=$d/replay.err
rec_replay "$d/replay.err" --replay "$d/run.mpiw" --speed 0 --summary-json "$d/replay.json" \
    --stats-json "$d/replay-stats.json" || mw_fail "replay failed"
MW_FAILURE_LOG=$d/replay.err
cmp "$d/live.json" "$d/replay.json" || mw_fail "the replayed summary differs from the live one"
# The counters, not the timings the stats also hold.
"$MW_PYTHON" - "$d/live-stats.json" "$d/replay-stats.json" <<'PY' || mw_fail "stats differ"
import json, sys
live, rep = (json.load(open(p)) for p in sys.argv[1:])
keys = ("accepted", "rejected", "late", "windows", "partial_windows")
pick = lambda j: {k: j[k] for k in keys}
print("live:", pick(live), "\nreplay:", pick(rep))
sys.exit(0 if pick(live) == pick(rep) and sum(rep["rejected"].values()) > 0 else 1)
PY
read -r compared differ <<<"$(rec_compared "$d/replay.err")"
{ [ "$compared" = "$windows" ] && [ "$differ" = 0 ]; } ||
    mw_fail "replay compared ${compared:-?} of $windows windows, ${differ:-?} differ"
mw_log "ok: $windows windows, $size bytes, summary and stats identical"
