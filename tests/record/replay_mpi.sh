#!/bin/bash
# replay_mpi.sh COLLECTOR LIBMPIWATCH KNOWN_C MPIRUN RECDUMP: a real MPI job, recorded and
# replayed.
#
# tests/programs/known_c runs on 4 ranks with libmpiwatch.so preloaded by hand (mpirun -x, as
# docs/launcher.md shows) and 10 ms windows, into a collector with --record and
# --exit-after-job. Replaying the recording at full speed must write a byte-identical summary
# JSON, regenerate every recorded window identically, and find every window through the index.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
MW_COLLECTOR=$1
lib=$2
prog=$3
mpirun=$4
REC_DUMP=$5
mw_init record_replay_mpi
mw_mpi_env
d=$MW_T
n=5000

mw_start_collector --exit-after-job --record "$d/run.mpiw" --summary-json "$d/live.json"
"$mpirun" --oversubscribe -np 4 -x LD_PRELOAD="$lib" -x MPIWATCH_COLLECTOR="$MW_EP" \
    -x MPIWATCH_WINDOW_MS=10 "$prog" "$n" >"$d/app.out" 2>"$d/app.err" ||
    { MW_FAILURE_LOG=$d/app.err; mw_fail "the MPI job failed"; }
grep -q "pattern ok" "$d/app.out" || mw_fail "the program did not report success"
mw_collector_exits 30

rec_dump "$d/run.mpiw" "$d/dump"
windows=$(rec_val "$d/dump" window)
[ "$windows" -ge 5 ] || mw_fail "only ${windows:-0} windows recorded"
[ "$(rec_val "$d/dump" truncated)" = 0 ] || mw_fail "the recording reads as truncated"
[ "$(rec_val "$d/dump" find_ok)" = "$windows" ] || mw_fail "find_window misses windows"
[ "$(rec_val "$d/dump" message)" -ge $((4 * 2 + windows)) ] || mw_fail "messages missing"

rec_replay "$d/replay.err" --replay "$d/run.mpiw" --speed 0 --summary-json "$d/replay.json" ||
    { MW_FAILURE_LOG=$d/replay.err; mw_fail "replay failed"; }
MW_FAILURE_LOG=$d/replay.err
cmp "$d/live.json" "$d/replay.json" || mw_fail "the replayed summary differs from the live one"
read -r compared differ <<<"$(rec_compared "$d/replay.err")"
{ [ "$compared" = "$windows" ] && [ "$differ" = 0 ]; } ||
    mw_fail "replay compared ${compared:-?} of $windows windows, ${differ:-?} differ"
mw_log "ok: $windows windows, summary identical"
