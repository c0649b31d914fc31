#!/bin/bash
# threads.sh M: two threads per rank each make M MPI_Iprobe calls under
# MPI_THREAD_MULTIPLE; the summary must count exactly 2*M per rank (no lost or doubled
# updates in the per-thread accumulators).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
m=$1
mw_setup threads
mw_run_job "^threads: 2 threads x $m MPI_Iprobe per rank, ok" mw_mpirun "$MW_PROGRAMS/threads" "$m"
mw_check --pattern threads --m "$m" --label threads
