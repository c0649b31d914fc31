#!/bin/bash
# replay_pace.sh COLLECTOR LOADGEN EXPORT FEED BINDGATE: --speed, --from, --to and a signal during
# replay.
#
# A 3 s loadgen job (16 ranks, 10 windows/s) is recorded. Then:
#   --speed 1 must take about the recorded time (at least 2 s: the machine may be slow, never
#     faster), --speed 0 much less (under half of it);
#   --from 1 --to 2 must have about 10 windows closing in range (7..13), the ones before
#     --from not published, and a summary with fewer windows than the whole run's; a
#     subscriber of a --speed 1 --from 1 --to 2 --publish replay checks what was published
#     (windows_equal.py range): no window that closed before --from, every window of the range
#     (but for a margin at its edges), each equal to the recorded one (mpiwatch-export);
#   SIGINT one second into a --speed 1 replay must stop it with status 0 and the summary
#     written, with fewer windows than the whole run.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
MW_COLLECTOR=$1
REC_LOADGEN=$2
REC_EXPORT=$3
REC_FEED=$4
REC_GATE=$5
mw_init record_replay_pace
d=$MW_T

# The realtime clock around the collector's start: its first frame, from which --from counts,
# is recorded between the two.
t0_ns=$(date +%s%N)
mw_start_collector --exit-after-job --quiet --record "$d/run.mpiw" --summary-json "$d/live.json"
t1_ns=$(date +%s%N)
rec_loadgen --ranks 16 --rate 10 --functions 4 --seconds 3 --job pace
mw_collector_exits 15
total=$(rec_json "$d/live.json" 'j["windows"]')
[ "$total" = 30 ] || mw_fail "the live run has $total windows, 30 expected"

now_ms() { date +%s%3N; }
t0=$(now_ms)
rec_replay "$d/r1.err" --replay "$d/run.mpiw" --speed 1 --summary-json "$d/r1.json" ||
    { MW_FAILURE_LOG=$d/r1.err; mw_fail "--speed 1 replay failed"; }
t1=$(now_ms)
rec_replay "$d/r0.err" --replay "$d/run.mpiw" --speed 0 --summary-json "$d/r0.json" ||
    { MW_FAILURE_LOG=$d/r0.err; mw_fail "--speed 0 replay failed"; }
t2=$(now_ms)
speed1=$((t1 - t0))
speed0=$((t2 - t1))
mw_log "--speed 1: $speed1 ms, --speed 0: $speed0 ms"
[ "$speed1" -ge 2000 ] || mw_fail "--speed 1 replayed a 3 s recording in $speed1 ms"
[ $((speed0 * 2)) -lt "$speed1" ] || mw_fail "--speed 0 took $speed0 ms, --speed 1 $speed1 ms"
cmp "$d/live.json" "$d/r1.json" || mw_fail "the --speed 1 summary differs from the live one"
cmp "$d/live.json" "$d/r0.json" || mw_fail "the --speed 0 summary differs from the live one"

MW_FAILURE_LOG=$d/range.err
rec_replay "$d/range.err" --replay "$d/run.mpiw" --speed 0 --from 1 --to 2 \
    --summary-json "$d/range.json" || mw_fail "range replay failed"
read -r in_range before <<<"$(rec_in_range "$d/range.err")"
mw_log "--from 1 --to 2: $in_range windows in range, $before before"
{ [ "${in_range:-0}" -ge 7 ] && [ "$in_range" -le 13 ]; } ||
    mw_fail "--from 1 --to 2: ${in_range:-?} windows in range (about 10 expected)"
[ "${before:-0}" -ge 3 ] || mw_fail "--from 1: ${before:-?} windows before it"
grep -q "stopped at --to" "$d/range.err" || mw_fail "--to did not stop the replay"
ranged=$(rec_json "$d/range.json" 'j["windows"]')
{ [ "$ranged" -eq $((in_range + before)) ] && [ "$ranged" -lt "$total" ]; } ||
    mw_fail "--to 2: the summary has $ranged windows ($in_range + $before expected, of $total)"

# What a subscriber of the range replay gets. The windows before --from are applied within
# milliseconds, so the subscriber must be connected before the replay starts: mw-bindgate
# holds the replay right after it binds its feed until the test has seen the subscriber's
# connection (ss), and half a second more for its subscription to arrive (were it later, the
# check would only see less, never fail wrongly). The subscriber stops after 5 s of silence.
"$REC_EXPORT" --format jsonl "$d/run.mpiw" -o "$d/recorded.jsonl" 2>"$d/export.err" ||
    { MW_FAILURE_LOG=$d/export.err; mw_fail "mpiwatch-export failed"; }
MW_FAILURE_LOG=$d/pub.err
LD_PRELOAD=$REC_GATE MW_GATE_ENDPOINT="ipc://$d/pub" MW_GATE_FILE="$d/gate" \
    "$MW_COLLECTOR" --quiet --replay "$d/run.mpiw" --speed 1 --from 1 --to 2 \
    --publish "ipc://$d/pub" </dev/null >/dev/null 2>"$d/pub.err" &
MW_CPID=$!
mw_wait_file "$d/pub" || mw_fail "the replay did not bind its feed"
"$REC_FEED" --subscribe "ipc://$d/pub" --topic window --timeout-ms 5000 \
    >"$d/ranged.jsonl" 2>"$d/feed.err" &
feed=$!
mw_wait_connected "$d/pub" || mw_fail "the subscriber did not connect within 20 s"
touch "$d/gate"
mw_collector_exits 30
wait "$feed" || { MW_FAILURE_LOG=$d/feed.err; mw_fail "the subscriber received nothing"; }
"$MW_PYTHON" "$(dirname "$0")/windows_equal.py" range "$d/recorded.jsonl" "$d/ranged.jsonl" \
    "$t0_ns" "$t1_ns" 1 2 || mw_fail "--from 1 --to 2: the published windows (see above)"

"$MW_COLLECTOR" --quiet --replay "$d/run.mpiw" --speed 1 --summary-json "$d/int.json" \
    </dev/null >/dev/null 2>"$d/int.err" &
MW_CPID=$!
sleep 1
kill -INT "$MW_CPID"
MW_FAILURE_LOG=$d/int.err
mw_collector_exits 5
interrupted=$(rec_json "$d/int.json" 'j["windows"]')
[ "$interrupted" -lt "$total" ] ||
    mw_fail "the interrupted replay has $interrupted windows of $total"
grep -q "replay stopped on signal" "$d/int.err" || mw_fail "no stop on the signal"
mw_log "ok"
