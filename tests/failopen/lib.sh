# lib.sh: helpers of the fail-open tests (sourced, not run).
#
# Every fail-open test runs a program twice or more: a baseline without the library, and runs
# with libmpiwatch.so preloaded under some condition (no collector, a collector killed or
# stopped mid-run, the library disabled, ...). The runs must be indistinguishable from the
# baseline: same stdout, same exit status, no hang, and, where the test says so, same stderr.
# Each test gets a private temporary directory holding Open MPI's session directory, the
# collector's ipc endpoint and every output. Paths come from CTest through the environment:
#   MW_LIB        libmpiwatch.so        MW_COLLECTOR  mpiwatch-collector
#   MW_FO_BIN     directory of the test programs (failopen_app, fork_app, signals_app)
#   MW_MPIRUN     mpirun                MW_PYTHON     python3 (JSON checks)
# Set MW_KEEP_TMP=1 to keep the directory of a run. A test fails by calling fo_fail.

# The variables set here are used by the scripts that source this file.
# shellcheck disable=SC2034,SC2119
set -u

FO_NP=${FO_NP:-4}
FO_HANG_S=${FO_HANG_S:-60} # a run still going after this long is a hang: killed, test failed
FO_T=''
FO_CPID=''
FO_EP=''
FO_STOPPED=''

fo_log() { printf '%s: %s\n' "${FO_TEST:-failopen}" "$*" >&2; }

fo_fail() {
    printf 'FAIL: %s: %s\n' "${FO_TEST:-failopen}" "$*" >&2
    exit 1
}

fo_teardown() {
    local rc=$?
    if [ -n "$FO_CPID" ] && kill -0 "$FO_CPID" 2>/dev/null; then
        [ -n "$FO_STOPPED" ] && kill -CONT "$FO_CPID" 2>/dev/null
        kill -KILL "$FO_CPID" 2>/dev/null
        wait "$FO_CPID" 2>/dev/null
    fi
    if [ "$rc" != 0 ] && [ -n "$FO_T" ] && [ -s "$FO_T/collector.err" ]; then
        echo "----- collector stderr (last 40 lines) -----" >&2
        tail -n 40 "$FO_T/collector.err" >&2
    fi
    if [ -n "$FO_T" ] && [ -d "$FO_T" ]; then
        if [ "${MW_KEEP_TMP:-0}" = 1 ]; then fo_log "kept $FO_T"; else rm -rf -- "$FO_T"; fi
    fi
    exit "$rc"
}

# fo_setup NAME [needs-collector]: private directory, clean environment, cleanup on exit.
fo_setup() {
    FO_TEST=$1
    local v
    for v in MW_LIB MW_FO_BIN MW_MPIRUN; do
        [ -n "${!v-}" ] || fo_fail "environment variable $v is not set (run through ctest)"
    done
    [ -r "$MW_LIB" ] || fo_fail "library not built: $MW_LIB"
    if [ "${2-}" = needs-collector ]; then
        [ -x "${MW_COLLECTOR-}" ] || fo_fail "collector not built: ${MW_COLLECTOR-}"
    fi
    # Short path: it holds an ipc:// endpoint, and unix socket paths are limited to 107 bytes.
    FO_T=$(mktemp -d "/tmp/mwfo-$FO_TEST.XXXXXX") || fo_fail "mktemp failed"
    trap fo_teardown EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    mkdir -p "$FO_T/ompi"
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_MCA_orte_tmpdir_base=$FO_T/ompi
    export OMPI_MCA_rmaps_base_oversubscribe=1
    export TMPDIR=$FO_T
    # Short windows: more samples, more chances for a send to meet the failure under test.
    export MPIWATCH_WINDOW_MS=${MPIWATCH_WINDOW_MS:-50}
    unset LD_PRELOAD MPIWATCH_COLLECTOR MPIWATCH_DISABLE MPIWATCH_VERBOSE OMPI_MCA_mca_base_env_list
    FO_MPI=("$MW_MPIRUN" --oversubscribe -np "$FO_NP")
}

fo_now_ms() { echo $(($(date +%s%N) / 1000000)); }

# fo_run TAG COMMAND...: runs COMMAND (stdin /dev/null) into $FO_T/TAG.{out,err}, records its
# status in $FO_T/TAG.rc and its wall time (ms) in $FO_T/TAG.ms. A run that takes longer than
# FO_HANG_S is killed and the test fails.
fo_run() {
    local tag=$1 t0 rc
    shift
    t0=$(fo_now_ms)
    timeout -k 5 "$FO_HANG_S" "$@" </dev/null >"$FO_T/$tag.out" 2>"$FO_T/$tag.err"
    rc=$?
    echo $(($(fo_now_ms) - t0)) >"$FO_T/$tag.ms"
    echo "$rc" >"$FO_T/$tag.rc"
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        tail -n 20 "$FO_T/$tag.err" >&2
        fo_fail "run '$tag' did not finish within $FO_HANG_S s: $*"
    fi
    fo_log "run '$tag': status $rc, $(cat "$FO_T/$tag.ms") ms"
}

# fo_start_bg TAG COMMAND...: like fo_run, in the background; fo_wait_bg collects it.
fo_start_bg() {
    FO_BG_TAG=$1
    shift
    FO_BG_T0=$(fo_now_ms)
    timeout -k 5 "$FO_HANG_S" "$@" </dev/null >"$FO_T/$FO_BG_TAG.out" 2>"$FO_T/$FO_BG_TAG.err" &
    FO_BG_PID=$!
}

fo_wait_bg() {
    local rc tag=$FO_BG_TAG
    wait "$FO_BG_PID"
    rc=$?
    echo $(($(fo_now_ms) - FO_BG_T0)) >"$FO_T/$tag.ms"
    echo "$rc" >"$FO_T/$tag.rc"
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        tail -n 20 "$FO_T/$tag.err" >&2
        fo_fail "run '$tag' did not finish within $FO_HANG_S s (hang)"
    fi
    fo_log "run '$tag': status $rc, $(cat "$FO_T/$tag.ms") ms"
}

# fo_wait_file PATH SECONDS: waits for PATH to exist while the background run is alive.
fo_wait_file() {
    local path=$1 limit=$2 i
    for ((i = 0; i < limit * 20; i++)); do
        [ -e "$path" ] && return 0
        kill -0 "$FO_BG_PID" 2>/dev/null || break
        sleep 0.05
    done
    [ -e "$path" ] || fo_fail "$path did not appear within $limit s (the job ended or stalled)"
}

# Command prefixes (arrays, so that fo_run can put `timeout` in front): FO_MPI is mpirun
# without the library; fo_lib EP sets FO_LIB to mpirun with the library pointed at EP.
FO_MPI=()
FO_LIB=()
fo_lib() {
    FO_LIB=("$MW_MPIRUN" --oversubscribe -np "$FO_NP" -x LD_PRELOAD="$MW_LIB"
        -x MPIWATCH_COLLECTOR="$1" -x MPIWATCH_WINDOW_MS)
}

# fo_same_stdout BASE TAG / fo_same_stderr / fo_same_status: the run TAG against BASE.
fo_same_stdout() {
    if ! cmp -s "$FO_T/$1.out" "$FO_T/$2.out"; then
        diff -u "$FO_T/$1.out" "$FO_T/$2.out" | head -n 40 >&2
        fo_fail "stdout of '$2' differs from the baseline '$1' (diff above)"
    fi
    [ -s "$FO_T/$1.out" ] || fo_fail "the baseline '$1' printed nothing: the test proves nothing"
}
fo_same_stderr() {
    if ! cmp -s "$FO_T/$1.err" "$FO_T/$2.err"; then
        diff -u "$FO_T/$1.err" "$FO_T/$2.err" | head -n 40 >&2
        fo_fail "stderr of '$2' differs from the baseline '$1' (diff above)"
    fi
}
fo_same_status() {
    local a b
    a=$(cat "$FO_T/$1.rc") b=$(cat "$FO_T/$2.rc")
    if [ "$a" != "$b" ]; then
        tail -n 20 "$FO_T/$2.err" >&2
        fo_fail "'$2' exited with status $b, the baseline '$1' with $a"
    fi
}
# fo_expect_status TAG N: the baseline itself must behave as the test assumes.
fo_expect_status() {
    local s
    s=$(cat "$FO_T/$1.rc")
    if [ "$s" != "$2" ]; then
        cat "$FO_T/$1.out" "$FO_T/$1.err" >&2
        fo_fail "'$1' exited with status $s, expected $2"
    fi
}

# fo_not_slower BASE TAG: a generous bound that only catches hangs and stalls
# (TAG < BASE x 3 + 5 s); the ratio is printed either way.
fo_not_slower() {
    local a b
    a=$(cat "$FO_T/$1.ms") b=$(cat "$FO_T/$2.ms")
    fo_log "wall time '$2' / '$1': $b ms / $a ms = $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a ? b / a : 0 }')"
    [ "$b" -lt $((a * 3 + 5000)) ] || fo_fail "'$2' took $b ms, the baseline '$1' $a ms (limit: x3 + 5 s)"
}

# fo_same TAG BASE: stdout, status and time of TAG against BASE.
fo_same() {
    fo_same_stdout "$2" "$1"
    fo_same_status "$2" "$1"
    fo_not_slower "$2" "$1"
}

# fo_start_collector [ARGS...]: a collector on the private endpoint ipc://$FO_T/ingest,
# writing $FO_T/stats.json and $FO_T/summary.json, listening when this returns.
fo_start_collector() {
    FO_EP="ipc://$FO_T/ingest"
    rm -f "$FO_T/ingest" "$FO_T/stats.json" "$FO_T/summary.json"
    "$MW_COLLECTOR" --listen "$FO_EP" --stats-json "$FO_T/stats.json" \
        --summary-json "$FO_T/summary.json" "$@" </dev/null >"$FO_T/collector.out" \
        2>>"$FO_T/collector.err" &
    FO_CPID=$!
    local i
    for ((i = 0; i < 200; i++)); do
        [ -S "$FO_T/ingest" ] && return 0
        kill -0 "$FO_CPID" 2>/dev/null || break
        sleep 0.05
    done
    fo_fail "the collector did not listen on $FO_EP within 10 s"
}

# fo_finalize_bounded TAG MS: every rank of run TAG (started with FAILOPEN_TIMING=$FO_T/TAG.fin
# exported) spent less than MS ms in MPI_Finalize; the slowest is printed.
fo_finalize_bounded() {
    local worst
    worst=$(cat "$FO_T/$1.fin".* 2>/dev/null | sort -g | tail -n 1)
    [ -n "$worst" ] || fo_fail "run '$1' left no MPI_Finalize timing"
    fo_log "run '$1': slowest MPI_Finalize $worst ms (bound $2 ms)"
    awk -v w="$worst" -v b="$2" 'BEGIN { exit !(w < b) }' ||
        fo_fail "MPI_Finalize took $worst ms in run '$1' (bound $2 ms)"
}

# fo_collector_saw_job: the collector logged the start of the job (a hello arrived), so what
# happens to it next happens to a connected library, not to one still waiting to connect.
fo_collector_saw_job() {
    local i
    for ((i = 0; i < 100; i++)); do
        grep -q "info: job .* started" "$FO_T/collector.err" 2>/dev/null && return 0
        sleep 0.05
    done
    fo_fail "the collector had not seen the job half way through it: the test would prove nothing"
}

# fo_stop_collector [WAIT_S]: lets a collector with --exit-after-job leave by itself within
# WAIT_S (default 0), then asks it to stop (SIGTERM: it writes its files) and waits for it.
fo_stop_collector() {
    local limit=${1:-0} i
    for ((i = 0; i < limit * 10; i++)); do
        kill -0 "$FO_CPID" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$FO_CPID" 2>/dev/null; then
        kill -TERM "$FO_CPID"
        for ((i = 0; i < 100; i++)); do
            kill -0 "$FO_CPID" 2>/dev/null || break
            sleep 0.1
        done
        kill -0 "$FO_CPID" 2>/dev/null && fo_fail "the collector did not exit 10 s after SIGTERM"
    fi
    wait "$FO_CPID" 2>/dev/null
    FO_CPID=''
}

# fo_json FILE PYTHON_EXPR: evaluates the expression with j bound to the JSON in FILE and
# prints the result.
fo_json() {
    [ -s "$1" ] || fo_fail "the collector wrote no $1"
    "${MW_PYTHON:-/usr/bin/python3}" -c 'import json, sys
j = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$1" "$2" || fo_fail "cannot evaluate $2 on $1"
}

# fo_nothing_received: the collector's stats show that no message at all arrived.
fo_nothing_received() {
    local got
    got=$(fo_json "$FO_T/stats.json" 'j["accepted"] + sum(j["rejected"].values())')
    [ "$got" = 0 ] || fo_fail "the collector received $got message(s): $(cat "$FO_T/stats.json")"
}
