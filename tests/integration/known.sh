#!/bin/bash
# known.sh PROGRAM N: run tests/programs/PROGRAM (known_c, known_cxx, known_fh, known_fmpi,
# known_f08, known_py, known_py_ctypes) on 4 ranks with the library preloaded by hand (mpirun -x), and check
# that the collector's summary has exactly the counts, bytes and pairs of the known pattern:
# each call counted once, under its C name, also for Fortran and Python.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
prog=$1
n=$2
# Short windows: the run then spans tens of windows, so the exact totals also check that
# the library hands over and the collector merges many windows without losing a call.
export MPIWATCH_WINDOW_MS=${MPIWATCH_WINDOW_MS:-10}
mw_setup "$prog"
case $prog in
    known_py)
        # Debian's python3-mpi4py is built for Open MPI only: with MPICH, known_py_ctypes is
        # the Python test (docs/mpich.md, "Python").
        [ "${MW_MPI_KIND:-ompi}" = ompi ] ||
            mw_skip "Debian's mpi4py is built for Open MPI, not for this build's MPI (known_py_ctypes runs instead)"
        py=${MW_PYTHON:-/usr/bin/python3}
        [ -x "$py" ] || mw_skip "no interpreter $py"
        "$py" -c 'import mpi4py, numpy' 2>/dev/null ||
            mw_skip "$py lacks mpi4py or numpy (Debian: python3-mpi4py python3-numpy)"
        mw_run_known known_py "$n" "$py" "$MW_PROGRAMS_SRC/known_py.py"
        ;;
    known_py_ctypes)
        # The same pattern through ctypes against MPICH's libmpich (tests/programs/known_py_ctypes.py).
        mw_run_known known_py_ctypes "$n" /usr/bin/python3 "$MW_PROGRAMS_SRC/known_py_ctypes.py"
        ;;
    known_f08)
        [ -x "$MW_PROGRAMS/$prog" ] || mw_fail "program not built: $MW_PROGRAMS/$prog"
        if [ "${MW_MPI_KIND:-ompi}" = hydra ]; then
            # MPICH's mpi_f08 bindings call PMPI_X directly, and their entry points
            # (mpi_x_f08ts_, TS 29113 descriptors) are not wrapped yet: the job must run
            # unchanged with the library and every rank must say hello, but the calls cannot
            # be counted (docs/mpich.md, "Fortran").
            mw_run_job "^$prog: $MW_NP ranks, N=$n, pattern ok" mw_mpirun "$MW_PROGRAMS/$prog" "$n"
            mw_check --pattern ranks --label "$prog (MPICH: ranks only)"
            mw_skip "MPICH's mpi_f08 calls are not counted (they call PMPI_X directly); ran, ranks checked"
        fi
        mw_run_known "$prog" "$n"
        ;;
    *)
        [ -x "$MW_PROGRAMS/$prog" ] || mw_fail "program not built: $MW_PROGRAMS/$prog"
        mw_run_known "$prog" "$n"
        ;;
esac
