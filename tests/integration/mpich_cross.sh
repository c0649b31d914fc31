#!/bin/bash
# mpich_cross.sh N: ranks of the MPICH build (this build's libmpiwatch.so, its function table
# generated from MPICH's mpi.h: 617 functions) report to the collector of an Open MPI build
# (MW_CROSS_COLLECTOR, its table Open MPI's 413 functions), and the summary must hold exactly
# the known pattern of known_c under its MPI names. Function identity is by name on the wire
# (the hello names the rank's table; docs/function-table.md): with ids alone this job's
# MPI_Send would be counted as whatever function has the same row number in the other table.
# Registered in the MPICH build only; skipped when no Open MPI build's collector is given
# (tools/test.sh gives the one of its first part).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
n=$1
export MPIWATCH_WINDOW_MS=${MPIWATCH_WINDOW_MS:-10}
mw_setup mpich_cross
[ "${MW_MPI_KIND:-ompi}" = hydra ] || mw_skip "the ranks of this test are an MPICH build's"
[ -n "${MW_CROSS_COLLECTOR:-}" ] ||
    mw_skip "no Open MPI build's collector given (cmake -DMW_CROSS_COLLECTOR=.../mpiwatch-collector)"
[ -x "$MW_CROSS_COLLECTOR" ] || mw_fail "not executable: $MW_CROSS_COLLECTOR"
# The two tables must really differ, or the test would prove nothing.
mine=$(grep -c '^MW_FN(' "$MW_FN_TABLE") || mw_fail "cannot read $MW_FN_TABLE"
ompi=$(grep -c '^MW_FN(' "$MW_PROGRAMS_SRC/../../proto/mpi_functions.def")
[ "$mine" != "$ompi" ] || mw_fail "this build's table has the Open MPI table's $ompi rows"
mw_log "ranks' table: $mine functions; collector: $MW_CROSS_COLLECTOR (Open MPI's $ompi)"
MW_COLLECTOR=$MW_CROSS_COLLECTOR
mw_run_known known_c "$n"
grep -q "MPICH" "$MW_T/summary.json" || mw_log "note: the summary does not name MPICH as the ranks' library"
