#!/bin/bash
# threads.sh M: two threads per rank each make M MPI_Iprobe calls under
# MPI_THREAD_MULTIPLE; the summary must count exactly 2*M per rank (no lost or doubled
# updates in the per-thread accumulators).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
m=$1
mw_setup threads
mw_start_collector
mw_mpirun "$MW_PROGRAMS/threads" "$m" >"$MW_T/app.out" 2>"$MW_T/app.err"
rc=$?
cat "$MW_T/app.out"
if [ "$rc" != 0 ]; then
    cat "$MW_T/app.err" >&2
    mw_fail "the job exited with status $rc"
fi
grep -q "^threads: 2 threads x $m MPI_Iprobe per rank, ok" "$MW_T/app.out" ||
    mw_fail "the program did not report success"
mw_wait_collector 30
mw_check --pattern threads --m "$m" --label threads
