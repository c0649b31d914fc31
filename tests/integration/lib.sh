# lib.sh: helpers shared by the integration test scripts (sourced, not run).
#
# Each test gets a private temporary directory holding its collector endpoint, Open MPI's
# session directory (concurrent mpiruns sharing one race), the summary and the logs. The
# paths of what is under test come from CTest through the environment:
#   MW_LIB        libmpiwatch.so          MW_COLLECTOR  mpiwatch-collector
#   MW_LAUNCHER   the mpiwatch launcher   MW_PROGRAMS   directory of tests/programs binaries
#   MW_CHECKER    check_summary.py        MW_PYTHON     interpreter with mpi4py (/usr/bin/python3)
#   MW_MPIRUN     mpirun (with MPICH, a script mapping the mpirun options used here to Hydra's:
#                 tests/lib/mpiexec-hydra.in)     MW_MPI_KIND   ompi or hydra
# The directory, the collector's start and stop, mw_fail, mw_skip (exit 77: skipped) and
# mw_log come from tests/lib/common.sh. Set MW_KEEP_TMP=1 to keep the directory of a run.

# shellcheck shell=bash source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

# Four ranks; two with MPICH (MW_MPI_KIND=hydra): its ch4 ranks poll without yielding, so four
# of them on a two-core machine that is busy take minutes for what two do in seconds
# (docs/mpich.md, "Ranks per job").
if [ "${MW_MPI_KIND:-ompi}" = hydra ]; then MW_NP=${MW_NP:-2}; else MW_NP=${MW_NP:-4}; fi

# mw_setup NAME: private directory, a clean MPI/mpiwatch environment, cleanup on exit.
mw_setup() {
    mw_init "$1"
    mw_require MW_LIB MW_COLLECTOR MW_PROGRAMS MW_CHECKER MW_MPIRUN
    mw_mpi_env
    export MPIWATCH_WINDOW_MS=${MPIWATCH_WINDOW_MS:-50}
    [ -r "$MW_LIB" ] || mw_fail "library not built: $MW_LIB"
    [ -x "$MW_COLLECTOR" ] || mw_fail "collector not built: $MW_COLLECTOR"
}

# mw_wait_collector [SECONDS]: the collector must exit by itself (--exit-after-job) with
# status 0 within SECONDS (default 30), leave a summary, and print nothing on stdout.
mw_wait_collector() {
    mw_collector_exits "${1:-30}"
    [ -s "$MW_T/summary.json" ] || mw_fail "the collector wrote no summary ($MW_T/summary.json)"
    if [ -s "$MW_T/collector.out" ]; then
        mw_fail "the collector printed on stdout (it must use stderr): $(head -c 300 "$MW_T/collector.out")"
    fi
}

# mw_run_job SUCCESS_REGEX COMMAND...: a collector (--exit-after-job, summary in
# $MW_T/summary.json), then COMMAND, which must exit 0 and print a line matching SUCCESS_REGEX
# (its stdout is shown), then the collector must end cleanly (mw_wait_collector). The array
# MW_JOB_ARGS, when set, adds collector options.
mw_run_job() {
    local want=$1 rc
    shift
    mw_start_collector --exit-after-job --summary-json "$MW_T/summary.json" \
        ${MW_JOB_ARGS[@]+"${MW_JOB_ARGS[@]}"}
    "$@" >"$MW_T/app.out" 2>"$MW_T/app.err"
    rc=$?
    cat "$MW_T/app.out"
    if [ "$rc" != 0 ]; then
        cat "$MW_T/app.err" >&2
        mw_fail "the job exited with status $rc: $*"
    fi
    grep -q "$want" "$MW_T/app.out" || mw_fail "the program did not report success on stdout"
    mw_wait_collector 30
}

# mw_mpirun ARGS...: mpirun with the library preloaded into the ranks and pointed at the
# test's collector, the way docs/launcher.md tells users to run by hand.
mw_mpirun() {
    "$MW_MPIRUN" --oversubscribe -np "$MW_NP" \
        -x LD_PRELOAD="$MW_LIB" -x MPIWATCH_COLLECTOR="$MW_EP" -x MPIWATCH_WINDOW_MS "$@"
}

# mw_check ARGS...: runs check_summary.py on the test's summary.
mw_check() {
    "${MW_PYTHON:-/usr/bin/python3}" "$MW_CHECKER" "$MW_T/summary.json" --np "$MW_NP" "$@" ||
        mw_fail "the summary differs from the expectation (above); summary: $(head -c 2000 "$MW_T/summary.json")"
}

# mw_run_known PROGRAM N [COMMAND...]: the whole known-pattern test: collector, job, checks.
# COMMAND defaults to the program binary in MW_PROGRAMS.
mw_run_known() {
    local prog=$1 n=$2
    shift 2
    [ $# -gt 0 ] || set -- "$MW_PROGRAMS/$prog"
    mw_run_job "^$prog: $MW_NP ranks, N=$n, pattern ok" mw_mpirun "$@" "$n"
    mw_check --pattern known --n "$n" --label "$prog"
}
