#!/bin/bash
# trace_reqs.sh: tests/programs/trace_reqs on 4 ranks with the library preloaded and a real
# collector; every rank dumps its trace records at MPI_Finalize (MPIWATCH_VERBOSE=3) and
# check_trace_reqs.py checks that completions are credited to the right posts after a failed
# MPI_Wait/Waitall/Test (MPI_ERR_TRUNCATE under MPI_ERRORS_RETURN) and after a request
# completed on another thread (the handles MPI hands out again), and that Waitall/Testall and
# loops of Waitany/Waitsome/Testany/Testsome on more than 256 requests (Issend and Isend to
# self) complete every post exactly once. Then
# MPIWATCH_TRACE=off: the same results for the application, no records.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mw_setup trace_reqs
prog=$MW_PROGRAMS/trace_reqs
[ -x "$prog" ] || mw_fail "program not built: $prog"
export MPIWATCH_VERBOSE=3
mw_run_job "^trace_reqs: $MW_NP ranks, ok" \
    mw_mpirun --output-filename "$MW_T/ranks" -x MPIWATCH_VERBOSE "$prog"
cat "$MW_T"/ranks/*/rank.*/stderr >"$MW_T/dump.txt" || mw_fail "no per-rank stderr files"
# 8 rounds of 200 receives and 200 sends per rank.
"${MW_PYTHON:-/usr/bin/python3}" "$(dirname "${BASH_SOURCE[0]}")/check_trace_reqs.py" \
    "$MW_T/dump.txt" "$MW_NP" 3200 ||
    mw_fail "completions credited to the wrong posts, or missing"
grep -q "threads multiple" "$MW_T/app.out" ||
    mw_log "MPI_THREAD_MULTIPLE not provided: the cross-thread case was not run"

export MPIWATCH_TRACE=off
mw_run_job "^trace_reqs: $MW_NP ranks, ok" \
    mw_mpirun -x MPIWATCH_VERBOSE -x MPIWATCH_TRACE "$prog"
if grep -q "trec \|trace thread" "$MW_T/app.err"; then
    mw_fail "MPIWATCH_TRACE=off still wrote trace records"
fi
echo "trace_reqs: completions credited to their posts; none with MPIWATCH_TRACE=off"
