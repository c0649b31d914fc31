#!/bin/bash
# trace_export.sh EXPORT TRACEGEN COLLECTOR LIB SUBCOMM MPIRUN: mpiwatch-export --format trace
# and --format otf2
#   - on a recording with known traced windows (mw-tracegen.c): the JSON lines checked by
#     check_trace_jsonl.py, the OTF2 archive by otf2-print (valid, no INVALID reference) and by
#     the OTF2 Python bindings (check_otf2.py, exact counts and peers), the warning that names
#     the windows not traced, and the refusals (an archive already there, no -o, not a
#     recording);
#   - on the recording of a real MPI job traced in full (tests/programs/subcomm: split and
#     duplicated communicators, Isend/Irecv/Waitall, Send/Recv on 4 ranks): every send and
#     receive matched, and the archive's events equal to what the trace lines say.
export_bin=$1
tracegen=$2
MW_COLLECTOR=$3
lib=$4
subcomm=$5
mpirun=${6:-}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/common.sh
. "$here/../lib/common.sh"
mw_init export_trace
dir=$MW_T
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

"$tracegen" "$dir/t.mpiw" || { echo "FAIL: mw-tracegen"; exit 1; }
expect="$dir/t.mpiw.expect.json"

# --format trace
"$export_bin" --format trace "$dir/t.mpiw" -o "$dir/t.jsonl" 2>"$dir/trace.err" ||
    fail "--format trace exited $?"
python3 "$here/check_trace_jsonl.py" "$dir/t.jsonl" "$expect" || fail "check_trace_jsonl"
# The logical steps of these windows (a hole at 12, a partial window, reach-back and unmatched
# messages) against the brute-force reference (docs/logical.md).
python3 "$here/check_logical.py" "$dir/t.jsonl" >"$dir/logical.out" ||
    fail "check_logical: $(cat "$dir/logical.out")"
grep -q "window(s) not traced, not in the export: 12$" "$dir/trace.err" ||
    fail "no warning naming the untraced window 12: $(cat "$dir/trace.err")"
grep -q "traced for only some ranks: 11$" "$dir/trace.err" ||
    fail "no warning naming the partial window 11"
grep -q "1 trace(s) refused" "$dir/trace.err" || fail "the other job's trace is not reported"
"$export_bin" --format trace "$dir/t.mpiw" >"$dir/stdout.jsonl" 2>/dev/null ||
    fail "--format trace to stdout"
cmp -s "$dir/t.jsonl" "$dir/stdout.jsonl" || fail "the file and stdout differ"
# The checker must notice a receive without its match.
sed '0,/"kind":"recv","fn":"MPI_Recv"\(.*\),"match":[0-9]*}/s//"kind":"recv","fn":"MPI_Recv"\1}/' \
    "$dir/t.jsonl" >"$dir/unmatched.jsonl"
cmp -s "$dir/t.jsonl" "$dir/unmatched.jsonl" && fail "could not take a match out"
if python3 "$here/check_trace_jsonl.py" "$dir/unmatched.jsonl" "$expect" >/dev/null; then
    fail "check_trace_jsonl accepted a receive without its send"
fi

# --format otf2
"$export_bin" --format otf2 "$dir/t.mpiw" -o "$dir/arch" 2>"$dir/otf2.err" ||
    fail "--format otf2 exited $?: $(cat "$dir/otf2.err")"
grep -q "window(s) not traced, not in the export: 12$" "$dir/otf2.err" ||
    fail "otf2: no warning naming the untraced window 12"
grep -q "1 message or collective event(s) on a communicator whose group is not known" \
    "$dir/otf2.err" || fail "otf2: the send on the half-defined communicator is not reported"
anchor="$dir/arch/traces.otf2"
otf2-print --silent -Werror "$anchor" >"$dir/print.silent" 2>&1 ||
    fail "otf2-print --silent -Werror: $(cat "$dir/print.silent")"
otf2-print -A "$anchor" >"$dir/print.txt" 2>&1 || fail "otf2-print exited $?"
if grep -q INVALID "$dir/print.txt"; then
    fail "otf2-print shows INVALID references: $(grep -m3 INVALID "$dir/print.txt")"
fi
grep -q "BUFFER_FLUSH" "$dir/print.txt" && fail "BufferFlush events in the archive"
/usr/bin/python3 "$here/check_otf2.py" "$anchor" "$expect" || fail "check_otf2"
# The checker must notice a wrong count.
sed 's/"MpiIrecv":1/"MpiIrecv":2/' "$expect" >"$dir/wrong.json"
if /usr/bin/python3 "$here/check_otf2.py" "$anchor" "$dir/wrong.json" >/dev/null; then
    fail "check_otf2 accepted a wrong count"
fi

# Refusals: an archive already there, no -o, not a recording.
"$export_bin" --format otf2 "$dir/t.mpiw" -o "$dir/arch" 2>"$dir/again.err"
rc=$?
[ "$rc" = 1 ] || fail "a second export into the same directory exited $rc, not 1"
grep -q "not overwritten" "$dir/again.err" || fail "no message about the existing archive"
"$export_bin" --format otf2 "$dir/t.mpiw" 2>/dev/null
rc=$?
[ "$rc" = 2 ] || fail "--format otf2 without -o exited $rc, not 2"
echo "not a recording" >"$dir/bad.mpiw"
"$export_bin" --format trace "$dir/bad.mpiw" >/dev/null 2>&1
rc=$?
[ "$rc" = 2 ] || fail "--format trace of a file that is not a recording exited $rc, not 2"

# A real job, traced in full (4 ranks, a moderate rate: every window within the budget).
if [ -z "$mpirun" ] || [ ! -x "$subcomm" ]; then
    fail "no mpirun or no subcomm program: a real recording cannot be exported"
else
    mw_mpi_env
    export MPIWATCH_TRACE=on
    mw_start_collector --exit-after-job --quiet --record "$dir/real.mpiw" \
        --silence-timeout-ms 30000
    "$mpirun" --oversubscribe -np 4 -x LD_PRELOAD="$lib" -x MPIWATCH_COLLECTOR="$MW_EP" \
        -x MPIWATCH_TRACE "$subcomm" 20 >"$dir/subcomm.out" 2>&1 ||
        { MW_FAILURE_LOG=$dir/subcomm.out; mw_fail "the subcomm program failed"; }
    mw_collector_exits 30
    "$export_bin" --format trace "$dir/real.mpiw" -o "$dir/real.jsonl" 2>"$dir/real.err" ||
        fail "real: --format trace exited $?"
    python3 "$here/check_trace_jsonl.py" "$dir/real.jsonl" --complete || fail "real: trace lines"
    python3 "$here/check_logical.py" "$dir/real.jsonl" >"$dir/real_logical.out" ||
        fail "real: check_logical: $(cat "$dir/real_logical.out")"
    "$export_bin" --format otf2 "$dir/real.mpiw" -o "$dir/real" 2>>"$dir/real.err" ||
        fail "real: --format otf2 exited $?"
    if grep -q warning "$dir/real.err"; then
        fail "real: warnings: $(grep warning "$dir/real.err")"
    fi
    otf2-print --silent -Werror "$dir/real/traces.otf2" >"$dir/real.print" 2>&1 ||
        fail "real: otf2-print: $(cat "$dir/real.print")"
    /usr/bin/python3 "$here/check_otf2.py" "$dir/real/traces.otf2" --jsonl "$dir/real.jsonl" ||
        fail "real: the archive and the trace lines disagree"
fi

[ "$fails" -eq 0 ] || mw_fail "$fails failure(s)"
mw_log "ok"
