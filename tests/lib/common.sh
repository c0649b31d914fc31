# common.sh: helpers shared by every shell test and by bench/run-overhead.sh (sourced, not run).
#
# DESIGN: a script calls mw_init NAME once. That gives it a private temporary directory MW_T
# (short, because it holds the collector's ipc:// endpoint MW_EP and a unix socket path is
# limited to 107 bytes), and a trap that on exit stops a collector still running, shows the
# collector's log (and MW_FAILURE_LOG) when the script failed, and removes MW_T unless
# MW_KEEP_TMP=1. mw_mpi_env points Open MPI's session directory into MW_T (concurrent mpiruns
# sharing one race) and clears what would put the library where the script did not ask for it.
# One collector at a time runs on MW_EP; its pid is MW_CPID, its stdout goes to
# $MW_T/collector.out and its stderr to $MW_T/collector.err. A script fails with mw_fail;
# mw_skip exits 77, which CTest reports as skipped (with SKIP_RETURN_CODE 77).

# The variables set here are used by the scripts that source this file.
# shellcheck shell=bash disable=SC2034
set -u

MW_TEST=${MW_TEST:-test}
MW_T=''
MW_EP=''
MW_CPID=''
MW_FAILURE_LOG='' # a log file to show (tail) when the script fails, besides the collector's

# The interpreter for the JSON checks: Debian's python3 (the one with mpi4py), else the first
# python3 on PATH.
MW_PYTHON=${MW_PYTHON:-/usr/bin/python3}
[ -x "$MW_PYTHON" ] || MW_PYTHON=python3

mw_log() { printf '%s: %s\n' "$MW_TEST" "$*" >&2; }

mw_fail() {
    printf 'FAIL: %s: %s\n' "$MW_TEST" "$*" >&2
    exit 1
}

mw_skip() {
    printf 'SKIP: %s: %s\n' "$MW_TEST" "$*" >&2
    exit 77
}

# mw_no_display WHY: the viewer could not draw here (no video device, no EGL, no offscreen
# driver). That is a skip only where it was explicitly allowed (MW_ALLOW_NO_DISPLAY=1) and never
# in CI (CI=true); anywhere else it fails, because a viewer that lost its headless drawing would
# otherwise pass every snapshot test as "skipped".
mw_no_display() {
    if [ "${MW_ALLOW_NO_DISPLAY:-0}" = 1 ] && [ "${CI:-}" != true ]; then
        mw_skip "no offscreen GL here (MW_ALLOW_NO_DISPLAY=1): $*"
    fi
    mw_fail "the viewer cannot draw offscreen: $* (MW_ALLOW_NO_DISPLAY=1 skips this outside CI)"
}

# mw_require VAR...: each variable is set and not empty (CTest passes the paths that way).
mw_require() {
    local v
    for v in "$@"; do
        [ -n "${!v-}" ] || mw_fail "environment variable $v is not set (run through ctest)"
    done
}

# mw_sanitized PROGRAM: true when the tree under test is sanitized (MW_SANITIZE, docs/fuzzing.md):
# MW_SANITIZED=1 in the environment, or PROGRAM (one of the tree's executables) links the ASan
# runtime. A test whose measure is distorted by the sanitizers (ASan's quarantine in a process's
# resident memory, a 2-5x slower program in a fixed time budget) asks this, and adapts the
# measure, never the property it checks.
mw_sanitized() {
    [ "${MW_SANITIZED:-0}" = 1 ] && return 0
    [ -n "${1:-}" ] && ldd "$1" 2>/dev/null | grep -q 'libasan\.so'
}

# mw_show_log FILE: the end of FILE, to make a failure diagnosable from the CTest output alone.
mw_show_log() {
    [ -s "$1" ] || return 0
    echo "----- ${1##*/} (last 60 lines) -----" >&2
    tail -n 60 "$1" >&2
    echo "----- end of ${1##*/} -----" >&2
}

mw_teardown() {
    local rc=$?
    if [ -n "$MW_CPID" ] && kill -0 "$MW_CPID" 2>/dev/null; then
        # SIGCONT first: the test may have stopped it. SIGTERM lets it log why it leaves.
        kill -CONT "$MW_CPID" 2>/dev/null
        kill -TERM "$MW_CPID" 2>/dev/null
        mw_collector_gone_within 1 || kill -KILL "$MW_CPID" 2>/dev/null
        wait "$MW_CPID" 2>/dev/null
    fi
    if [ "$rc" != 0 ] && [ "$rc" != 77 ] && [ -n "$MW_T" ]; then
        mw_show_log "$MW_T/collector.err"
        [ -z "$MW_FAILURE_LOG" ] || mw_show_log "$MW_FAILURE_LOG"
    fi
    if [ -n "$MW_T" ] && [ -d "$MW_T" ]; then
        if [ "${MW_KEEP_TMP:-0}" = 1 ]; then mw_log "kept $MW_T"; else rm -rf -- "$MW_T"; fi
    fi
    exit "$rc"
}

# mw_init NAME: names the script in its messages, makes MW_T and sets the exit trap.
mw_init() {
    MW_TEST=$1
    MW_T=$(mktemp -d "/tmp/mw-$MW_TEST.XXXXXX") || mw_fail "mktemp failed"
    MW_EP="ipc://$MW_T/ingest"
    # `mpiwatch run` records by default into this directory (not the test's working one).
    export MPIWATCH_RECORD_DIR=$MW_T
    # Collectors register in a registry of the test's own (docs/attach.md), not the user's.
    export MPIWATCH_REGISTRY=$MW_T/registry
    # No viewer window from a test, even on a desktop: `mpiwatch run` then draws its
    # end-of-run snapshot offscreen instead.
    export SDL_VIDEODRIVER=offscreen
    trap mw_teardown EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
}

# mw_mpi_env: Open MPI's session files in MW_T, running as root allowed (containers), and no
# library, collector address or kill switch inherited from the caller's environment.
mw_mpi_env() {
    mkdir -p "$MW_T/ompi"
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_MCA_orte_tmpdir_base=$MW_T/ompi
    export OMPI_MCA_rmaps_base_oversubscribe=1
    export TMPDIR=$MW_T
    unset LD_PRELOAD MPIWATCH_COLLECTOR MPIWATCH_DISABLE MPIWATCH_JOB OMPI_MCA_mca_base_env_list
}

# mw_start_collector [ARGS...]: $MW_COLLECTOR listening on MW_EP (and whatever ARGS add),
# listening when this returns; a collector that exits first fails the script.
mw_start_collector() {
    local sock=${MW_EP#ipc://} i rc
    rm -f "$sock" # left behind by a collector killed earlier in the same test
    "$MW_COLLECTOR" --listen "$MW_EP" "$@" </dev/null >"$MW_T/collector.out" \
        2>>"$MW_T/collector.err" &
    MW_CPID=$!
    for ((i = 0; i < 200; i++)); do
        [ -S "$sock" ] && return 0
        if ! kill -0 "$MW_CPID" 2>/dev/null; then
            wait "$MW_CPID"
            rc=$?
            MW_CPID=''
            mw_fail "the collector exited with status $rc before listening on $MW_EP"
        fi
        sleep 0.05
    done
    mw_fail "the collector did not listen on $MW_EP within 10 s"
}

# mw_curve_keys CLIENT KEYGEN...: CURVE keys in the current directory (docs/security.md): the
# collector's coll.key / coll.pub and the client's clients/CLIENT.key in a client directory of
# mode 755, made with the command KEYGEN... (`mpiwatch keygen` or mpiwatch-keygen).
mw_curve_keys() {
    local client=$1
    shift
    { "$@" coll >/dev/null && mkdir -m 755 clients && "$@" "clients/$client" >/dev/null; } ||
        mw_fail "keygen"
}

# mw_wait_file PATH [PID]: true once PATH exists (up to 20 s); false after that, having killed
# PID when one is given (a job that never got ready).
mw_wait_file() {
    local i
    for ((i = 0; i < 400; i++)); do
        [ -e "$1" ] && return 0
        sleep 0.05
    done
    [ -z "${2:-}" ] || kill "$2" 2>/dev/null
    return 1
}

# mw_collector_gone_within SECONDS: true once the collector has exited, false if it is still
# running SECONDS later (0: right now).
mw_collector_gone_within() {
    local i
    for ((i = 0; i < $1 * 20; i++)); do
        kill -0 "$MW_CPID" 2>/dev/null || return 0
        sleep 0.05
    done
    ! kill -0 "$MW_CPID" 2>/dev/null
}

# mw_collector_exits SECONDS: the collector must exit by itself (--exit-after-job, or after a
# signal the script sent) within SECONDS, with status 0.
mw_collector_exits() {
    local rc
    mw_collector_gone_within "$1" || mw_fail "the collector was still running $1 s later"
    wait "$MW_CPID"
    rc=$?
    MW_CPID=''
    [ "$rc" = 0 ] || mw_fail "the collector exited with status $rc"
}

# mw_stop_collector [WAIT_S]: lets a collector with --exit-after-job leave by itself within
# WAIT_S (default 0), then asks it to stop (SIGTERM: it writes its files) and waits for it.
# Its exit status is not checked.
mw_stop_collector() {
    if ! mw_collector_gone_within "${1:-0}"; then
        kill -TERM "$MW_CPID"
        mw_collector_gone_within 10 || mw_fail "the collector did not exit 10 s after SIGTERM"
    fi
    wait "$MW_CPID" 2>/dev/null
    MW_CPID=''
}

# mw_kill_collector: SIGKILL, also for a stopped collector, and reaped.
mw_kill_collector() {
    kill -CONT "$MW_CPID" 2>/dev/null
    kill -KILL "$MW_CPID"
    wait "$MW_CPID" 2>/dev/null
    MW_CPID=''
}

# mw_wait_connected SOCKET_PATH [N]: true once N (default 1) peers are connected to the unix
# socket SOCKET_PATH (an ipc:// endpoint without its scheme), as `ss` shows them, and half a
# second more has passed for their subscriptions to arrive; false after 20 s.
mw_wait_connected() {
    local i n=0
    for ((i = 0; i < 400; i++)); do
        n=$(ss -xn 2>/dev/null | grep -cF "$1 ")
        [ "$n" -ge "${2:-1}" ] && break
        sleep 0.05
    done
    [ "$n" -ge "${2:-1}" ] || return 1
    sleep 0.5
}
