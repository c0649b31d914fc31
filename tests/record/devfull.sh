#!/bin/bash
# devfull.sh COLLECTOR LOADGEN: a full disk stops the recording, nothing else.
#
# The same 64-rank loadgen job (same seed, so the same content) goes once into a collector with
# --record /dev/full (every write fails with ENOSPC) and once into one without --record. The
# first must log the write error exactly once with the path and the reason, count it in the
# stats JSON, exit 0 after the job, and write a summary byte-identical to the second's.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
MW_COLLECTOR=$1
REC_LOADGEN=$2
mw_init record_devfull
d=$MW_T
[ -w /dev/full ] || mw_skip "no /dev/full"

run() {
    mw_start_collector --exit-after-job --quiet --summary-json "$d/$1.json" \
        --stats-json "$d/$1-stats.json" --silence-timeout-ms 30000 "${@:2}"
    rec_loadgen --ranks 64 --rate 10 --functions 8 --seconds 2 --nodes 4 --job full --seed 5
    mw_collector_exits 15
}
run full --record /dev/full
errors=$(grep -c "write failed" "$d/collector.err")
[ "$errors" = 1 ] || mw_fail "the write error was logged $errors times (once expected)"
grep -q "recording /dev/full: write failed: No space left on device" "$d/collector.err" ||
    mw_fail "the log does not name the file and the reason"
[ "$(rec_json "$d/full-stats.json" 'j["recording_errors"]')" = 1 ] ||
    mw_fail "recording_errors is not 1"
[ "$(rec_json "$d/full-stats.json" 'j["accepted"]')" = $((64 * 20 + 2 * 64)) ] ||
    mw_fail "ingest lost messages: $(cat "$d/full-stats.json")"
: >"$d/collector.err"
run plain
cmp "$d/full.json" "$d/plain.json" || mw_fail "the summary with a failed recording differs"
mw_log "ok"
