# lib.sh: helpers shared by the recording tests (sourced, not run).
#
# The temporary directory, the collector's start and stop, mw_fail and the JSON interpreter
# come from tests/lib/common.sh; the tests get the paths of what they run as arguments from
# CTest and put them in MW_COLLECTOR, REC_LOADGEN and REC_DUMP (mw-recdump) before calling
# these.

# shellcheck shell=bash source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

REC_LOADGEN=${REC_LOADGEN:-}
REC_DUMP=${REC_DUMP:-}

# rec_dump FILE OUT: mw-recdump's "key value" lines for FILE into OUT; fails the test when the
# file cannot be read at all.
rec_dump() {
    "$REC_DUMP" "$1" >"$2" 2>"$2.err" || { MW_FAILURE_LOG=$2.err; mw_fail "mw-recdump $1 failed"; }
}

# rec_val DUMP KEY [FIELD]: a value from a rec_dump output (FIELD 2 by default).
rec_val() {
    awk -v k="$2" -v f="${3:-2}" '$1 == k { print $f }' "$1"
}

# rec_replay LOG ARGS...: mpiwatch-collector --replay ARGS, stderr into LOG; returns its status.
rec_replay() {
    local log=$1
    shift
    "$MW_COLLECTOR" --quiet "$@" </dev/null >"$MW_T/replay.out" 2>"$log"
}

# rec_compared LOG: "COMPARED DIFFER" from a replay's last log line.
rec_compared() {
    sed -n 's/.* \([0-9]*\) windows compared with the recording, \([0-9]*\) differ.*/\1 \2/p' \
        "$1" | tail -n 1
}

# rec_in_range LOG: "IN_RANGE BEFORE_FROM" from a replay's last log line.
rec_in_range() {
    sed -n 's/.* \([0-9]*\) windows in range.*), \([0-9]*\) before --from.*/\1 \2/p' "$1" |
        tail -n 1
}

# rec_loadgen ARGS...: the load generator against the test's collector, stderr kept.
rec_loadgen() {
    "$REC_LOADGEN" --connect "$MW_EP" "$@" 2>>"$MW_T/loadgen.err" ||
        { MW_FAILURE_LOG=$MW_T/loadgen.err; mw_fail "mpiwatch-loadgen $* failed"; }
}

# rec_json FILE EXPR: evaluates a Python expression over the JSON document j in FILE.
rec_json() {
    "$MW_PYTHON" -c 'import json, sys; j = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
        "$1" "$2"
}
