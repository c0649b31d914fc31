#!/bin/bash
# replay_pace.sh COLLECTOR LOADGEN: --speed, --from, --to and a signal during replay.
#
# A 3 s loadgen job (16 ranks, 10 windows/s) is recorded. Then:
#   --speed 1 must take about the recorded time (at least 2 s: the machine may be slow, never
#     faster), --speed 0 much less (under half of it);
#   --from 1 --to 2 must have about 10 windows closing in range (7..13), the ones before
#     --from not published, and a summary with fewer windows than the whole run's;
#   SIGINT one second into a --speed 1 replay must stop it with status 0 and the summary
#     written, with fewer windows than the whole run.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
MW_COLLECTOR=$1
REC_LOADGEN=$2
mw_init record_replay_pace
d=$MW_T

mw_start_collector --exit-after-job --quiet --record "$d/run.mpiw" --summary-json "$d/live.json"
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
