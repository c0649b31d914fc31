#!/bin/bash
# crash.sh COLLECTOR LOADGEN RECDUMP MODE EXPORT FEED BINDGATE: a recording survives the end
# of its collector.
#
# MODE kill:    kill -9 of the collector in the middle of a 256-rank loadgen job. The file
#               must read without error up to its last complete frame (a torn tail is
#               allowed, reported, not an error), hold the windows closed so far (flushed at
#               every window), all of them found through the index and the forward scan, and
#               replay (exit 0) with every regenerated window equal to the recorded one.
#               That is checked on what the replay publishes, not on its own log line: a
#               subscriber (mpiwatch-feed) takes the windows of a --publish replay, and
#               windows_equal.py compares them with `mpiwatch-export --format jsonl` of the
#               file (every recorded window, in order, field by field).
# MODE sigterm: SIGTERM in the middle of the job. The collector must exit 0 with the summary
#               written and the recording flushed and closed (finish frame, last index, not
#               truncated), and replaying it must give a byte-identical summary and publish
#               the recorded windows, as above.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
MW_COLLECTOR=$1
REC_LOADGEN=$2
REC_DUMP=$3
mode=$4
REC_EXPORT=$5
REC_FEED=$6
REC_GATE=$7
mw_init "record_crash_$mode"
d=$MW_T

mw_start_collector --record "$d/run.mpiw" --summary-json "$d/live.json" \
    --stats-json "$d/live-stats.json"
"$REC_LOADGEN" --connect "$MW_EP" --ranks 256 --rate 10 --functions 12 --seconds 6 \
    2>"$d/loadgen.err" &
lg=$!
sleep 2.5
kill -0 "$MW_CPID" || mw_fail "the collector died"
if [ "$mode" = kill ]; then
    mw_kill_collector
    [ -e "$d/live.json" ] && mw_fail "a summary exists although the job never ended"
else
    kill -TERM "$MW_CPID"
    mw_collector_exits 10
    [ -s "$d/live.json" ] || mw_fail "SIGTERM did not write the summary"
    [ "$(rec_json "$d/live-stats.json" 'j["recording_bytes"]')" -gt 0 ] ||
        mw_fail "the stats do not report the recording's size"
fi
kill "$lg" 2>/dev/null # its collector is gone: it would wait for it
wait "$lg" 2>/dev/null

rec_dump "$d/run.mpiw" "$d/dump"
windows=$(rec_val "$d/dump" window)
[ "${windows:-0}" -ge 5 ] || mw_fail "only ${windows:-0} windows in the recording after 2.5 s"
[ "$(rec_val "$d/dump" find_ok)" = "$windows" ] ||
    mw_fail "find_window found $(rec_val "$d/dump" find_ok) of $windows windows"
if [ "$mode" = sigterm ]; then
    [ "$(rec_val "$d/dump" truncated)" = 0 ] || mw_fail "the recording was not closed cleanly"
    [ "$(rec_val "$d/dump" finish)" = 1 ] || mw_fail "no finish frame"
    [ "$(rec_val "$d/dump" last)" = index ] || mw_fail "the recording does not end with its index"
else
    [ "$(rec_val "$d/dump" finish)" = 0 ] || mw_fail "a finish frame after kill -9?"
fi

rec_replay "$d/replay.err" --replay "$d/run.mpiw" --speed 0 --summary-json "$d/replay.json" ||
    { MW_FAILURE_LOG=$d/replay.err; mw_fail "replay failed"; }
MW_FAILURE_LOG=$d/replay.err
read -r compared differ <<<"$(rec_compared "$d/replay.err")"
{ [ "$compared" = "$windows" ] && [ "$differ" = 0 ]; } ||
    mw_fail "replay compared ${compared:-?} of $windows windows, ${differ:-?} differ"
[ -s "$d/replay.json" ] || mw_fail "the replay wrote no summary"

# The windows the replay derives again, as a subscriber receives them, against the recorded
# ones as the exporter reads them. mw-bindgate holds the replay right after it binds its feed
# until ss shows the subscriber connected (and half a second more for its subscription), so
# that no window is published before anyone listens; the subscriber stops once it has as many
# windows as the recording holds, and the replay (which then waits for the recorded ranks'
# silence timeout) is stopped with SIGTERM.
"$REC_EXPORT" --format jsonl "$d/run.mpiw" -o "$d/recorded.jsonl" 2>"$d/export.err" ||
    { MW_FAILURE_LOG=$d/export.err; mw_fail "mpiwatch-export failed"; }
LD_PRELOAD=$REC_GATE MW_GATE_ENDPOINT="ipc://$d/pub" MW_GATE_FILE="$d/gate" \
    "$MW_COLLECTOR" --quiet --replay "$d/run.mpiw" --speed 1 --publish "ipc://$d/pub" \
    </dev/null >/dev/null 2>"$d/published.err" &
MW_CPID=$!
mw_wait_file "$d/pub" || mw_fail "the replay did not bind its feed"
"$REC_FEED" --subscribe "ipc://$d/pub" --topic window --count "$windows" --timeout-ms 30000 \
    >"$d/replayed.jsonl" 2>"$d/feed.err" &
feed=$!
mw_wait_connected "$d/pub" || mw_fail "the subscriber did not connect within 20 s"
touch "$d/gate"
wait "$feed" || { MW_FAILURE_LOG=$d/feed.err; mw_fail "the subscriber got no complete replay"; }
kill -TERM "$MW_CPID" 2>/dev/null
MW_FAILURE_LOG=$d/published.err
mw_collector_exits 10
"$MW_PYTHON" "$(dirname "$0")/windows_equal.py" all "$d/recorded.jsonl" "$d/replayed.jsonl" ||
    mw_fail "the replay did not publish the recorded windows"
if [ "$mode" = sigterm ]; then
    cmp "$d/live.json" "$d/replay.json" || mw_fail "the replayed summary differs from the live one"
fi
mw_log "ok: $windows windows, truncated tail: $(rec_val "$d/dump" truncated)"
