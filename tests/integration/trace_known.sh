#!/bin/bash
# trace_known.sh: tests/programs/trace_known on 4 ranks with the library preloaded and a real
# collector; every rank dumps the trace records its ring still holds at MPI_Finalize
# (MPIWATCH_VERBOSE=3), and check_trace_known.py compares them with the program's ground truth:
# each message sent and received (ANY_SOURCE, ANY_TAG, ignored statuses, Waitany, Testsome,
# Waitall, Sendrecv, persistent requests, dup and split communicators) is exactly one record
# with its peer's world rank, tag and bytes, communicator ids agree, collective instances line
# up, every request's post has one completion. Then MPIWATCH_TRACE=off: no records at all.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mw_setup trace_known
prog=$MW_PROGRAMS/trace_known
[ -x "$prog" ] || mw_fail "program not built: $prog"
export MPIWATCH_VERBOSE=3
# Each rank's stderr in a file of its own: mpirun's merged stream may cut lines.
mw_run_job "^trace_known: $MW_NP ranks, 0 unexpected receives" \
    mw_mpirun --output-filename "$MW_T/ranks" -x MPIWATCH_VERBOSE "$prog" "$MW_T/truth.txt"
cat "$MW_T"/ranks/*/rank.*/stderr >"$MW_T/dump.txt" || mw_fail "no per-rank stderr files"
"${MW_PYTHON:-/usr/bin/python3}" "$(dirname "${BASH_SOURCE[0]}")/check_trace_known.py" \
    "$MW_T/truth.txt" "$MW_T/dump.txt" "$MW_NP" ||
    mw_fail "the trace records differ from the program's ground truth"

# Tracing off: the same job, no ring, no record.
export MPIWATCH_TRACE=off
mw_run_job "^trace_known: $MW_NP ranks, 0 unexpected receives" \
    mw_mpirun -x MPIWATCH_VERBOSE -x MPIWATCH_TRACE "$prog" "$MW_T/truth.txt"
if grep -q "trec \|trace thread" "$MW_T/app.err"; then
    mw_fail "MPIWATCH_TRACE=off still wrote trace records"
fi
echo "trace_known: records match the ground truth; none with MPIWATCH_TRACE=off"
