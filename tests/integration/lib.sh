# lib.sh: helpers shared by the integration test scripts (sourced, not run).
#
# Each test gets a private temporary directory holding its collector endpoint, Open MPI's
# session directory (concurrent mpiruns sharing one race), the summary and the logs. The
# paths of what is under test come from CTest through the environment:
#   MW_LIB        libmpiwatch.so          MW_COLLECTOR  mpiwatch-collector
#   MW_LAUNCHER   the mpiwatch launcher   MW_PROGRAMS   directory of tests/programs binaries
#   MW_CHECKER    check_summary.py        MW_PYTHON     interpreter with mpi4py (/usr/bin/python3)
#   MW_MPIRUN     mpirun
# A test fails by calling mw_fail (or exiting non-zero); mw_skip exits 77, which CTest
# reports as skipped. Set MW_KEEP_TMP=1 to keep the directory of a run for inspection.

set -u

MW_NP=${MW_NP:-4}
MW_T=''
MW_CPID=''
MW_EP=''
MW_FAILURE_LOG=''   # a log file to show (tail) when the test fails, besides the collector's

mw_log() { printf '%s: %s\n' "${MW_TEST:-test}" "$*" >&2; }

mw_fail() {
    printf 'FAIL: %s: %s\n' "${MW_TEST:-test}" "$*" >&2
    exit 1
}

mw_skip() {
    printf 'SKIP: %s: %s\n' "${MW_TEST:-test}" "$*" >&2
    exit 77
}

mw_require() {
    local v
    for v in "$@"; do
        [ -n "${!v-}" ] || mw_fail "environment variable $v is not set (run through ctest)"
    done
}

# Shows the collector's log, to make a failure diagnosable from the CTest output alone.
mw_show_collector_log() {
    [ -n "$MW_T" ] || return 0
    if [ -s "$MW_T/collector.err" ]; then
        echo "----- collector stderr (last 60 lines) -----" >&2
        tail -n 60 "$MW_T/collector.err" >&2
        echo "----- end of collector stderr -----" >&2
    fi
}

mw_teardown() {
    local rc=$?
    if [ -n "$MW_CPID" ] && kill -0 "$MW_CPID" 2>/dev/null; then
        kill -TERM "$MW_CPID" 2>/dev/null
        sleep 0.5
        kill -KILL "$MW_CPID" 2>/dev/null
    fi
    if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
        mw_show_collector_log
        if [ -n "$MW_FAILURE_LOG" ] && [ -s "$MW_FAILURE_LOG" ]; then
            echo "----- ${MW_FAILURE_LOG##*/} (last 60 lines) -----" >&2
            tail -n 60 "$MW_FAILURE_LOG" >&2
            echo "----- end of ${MW_FAILURE_LOG##*/} -----" >&2
        fi
    fi
    if [ -n "$MW_T" ] && [ -d "$MW_T" ]; then
        if [ "${MW_KEEP_TMP:-0}" = 1 ]; then
            mw_log "kept $MW_T"
        else
            rm -rf -- "$MW_T"
        fi
    fi
    exit "$rc"
}

# mw_setup NAME: private directory, a clean MPI/mpiwatch environment, cleanup on exit.
mw_setup() {
    MW_TEST=$1
    mw_require MW_LIB MW_COLLECTOR MW_PROGRAMS MW_CHECKER MW_MPIRUN
    # Short path: it holds an ipc:// endpoint, and unix socket paths are limited to 107 bytes.
    MW_T=$(mktemp -d "/tmp/mwit-$MW_TEST.XXXXXX") || mw_fail "mktemp failed"
    trap mw_teardown EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    mkdir -p "$MW_T/ompi"
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_MCA_orte_tmpdir_base=$MW_T/ompi
    export OMPI_MCA_rmaps_base_oversubscribe=1
    export TMPDIR=$MW_T
    export MPIWATCH_WINDOW_MS=${MPIWATCH_WINDOW_MS:-50}
    unset LD_PRELOAD MPIWATCH_COLLECTOR MPIWATCH_DISABLE OMPI_MCA_mca_base_env_list
    [ -r "$MW_LIB" ] || mw_fail "library not built: $MW_LIB"
    [ -x "$MW_COLLECTOR" ] || mw_fail "collector not built: $MW_COLLECTOR"
}

# mw_start_collector [EXTRA ARGS]: a collector on a private ipc endpoint writing
# $MW_T/summary.json, ready (listening) when this returns.
mw_start_collector() {
    MW_EP="ipc://$MW_T/ingest"
    "$MW_COLLECTOR" --listen "$MW_EP" --exit-after-job --summary-json "$MW_T/summary.json" "$@" \
        </dev/null >"$MW_T/collector.out" 2>"$MW_T/collector.err" &
    MW_CPID=$!
    local i
    for ((i = 0; i < 200; i++)); do
        [ -S "$MW_T/ingest" ] && return 0
        if ! kill -0 "$MW_CPID" 2>/dev/null; then
            wait "$MW_CPID"
            local rc=$?
            MW_CPID=''
            mw_fail "the collector exited with status $rc before listening on $MW_EP"
        fi
        sleep 0.05
    done
    mw_fail "the collector did not create $MW_T/ingest within 10 s"
}

# mw_wait_collector [SECONDS]: the collector must exit by itself (--exit-after-job) with
# status 0 within SECONDS (default 30) and leave a summary.
mw_wait_collector() {
    local limit=${1:-30} i rc
    for ((i = 0; i < limit * 10; i++)); do
        kill -0 "$MW_CPID" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$MW_CPID" 2>/dev/null; then
        kill -TERM "$MW_CPID" 2>/dev/null
        mw_fail "the collector (--exit-after-job) was still running ${limit} s after the job ended"
    fi
    wait "$MW_CPID"
    rc=$?
    MW_CPID=''
    [ "$rc" = 0 ] || mw_fail "the collector exited with status $rc"
    [ -s "$MW_T/summary.json" ] || mw_fail "the collector wrote no summary ($MW_T/summary.json)"
    if [ -s "$MW_T/collector.out" ]; then
        mw_fail "the collector printed on stdout (it must use stderr): $(head -c 300 "$MW_T/collector.out")"
    fi
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
    local prog=$1 n=$2 rc
    shift 2
    [ $# -gt 0 ] || set -- "$MW_PROGRAMS/$prog"
    mw_start_collector
    mw_mpirun "$@" "$n" >"$MW_T/app.out" 2>"$MW_T/app.err"
    rc=$?
    cat "$MW_T/app.out"
    if [ "$rc" != 0 ]; then
        cat "$MW_T/app.err" >&2
        mw_fail "the job exited with status $rc"
    fi
    grep -q "^$prog: $MW_NP ranks, N=$n, pattern ok" "$MW_T/app.out" ||
        mw_fail "the program did not report success on stdout"
    mw_wait_collector 30
    mw_check --pattern known --n "$n" --label "$prog"
}
