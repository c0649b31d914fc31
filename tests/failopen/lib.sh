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
# The directory, the collector's start and stop, mw_fail and mw_log come from
# tests/lib/common.sh. Set MW_KEEP_TMP=1 to keep the directory of a run.

# The variables set here are used by the scripts that source this file.
# shellcheck shell=bash disable=SC2034,SC2119
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

FO_NP=${FO_NP:-4}
FO_HANG_S=${FO_HANG_S:-60} # a run still going after this long is a hang: killed, test failed

# fo_setup NAME [needs-collector]: private directory, clean environment, cleanup on exit.
fo_setup() {
    mw_init "$1"
    mw_require MW_LIB MW_FO_BIN MW_MPIRUN
    [ -r "$MW_LIB" ] || mw_fail "library not built: $MW_LIB"
    if [ "${2-}" = needs-collector ]; then
        [ -x "${MW_COLLECTOR-}" ] || mw_fail "collector not built: ${MW_COLLECTOR-}"
    fi
    mw_mpi_env
    # Tests compare stderr with the baseline: the library must not be asked to print.
    unset MPIWATCH_VERBOSE
    # Short windows: more samples, more chances for a send to meet the failure under test.
    export MPIWATCH_WINDOW_MS=${MPIWATCH_WINDOW_MS:-50}
    FO_MPI=("$MW_MPIRUN" --oversubscribe -np "$FO_NP")
}

fo_now_ms() { echo $(($(date +%s%N) / 1000000)); }

# fo_run TAG COMMAND...: runs COMMAND (stdin /dev/null) into $MW_T/TAG.{out,err}, records its
# status in $MW_T/TAG.rc and its wall time (ms) in $MW_T/TAG.ms, and keeps the command (shell
# quoted) in $MW_T/TAG.cmd so that fo_not_slower can run a baseline again. A run that takes
# longer than FO_HANG_S is killed and the test fails.
fo_run() {
    local tag=$1 t0
    shift
    printf '%q ' "$@" >"$MW_T/$tag.cmd"
    t0=$(fo_now_ms)
    timeout -k 5 "$FO_HANG_S" "$@" </dev/null >"$MW_T/$tag.out" 2>"$MW_T/$tag.err"
    fo__ended "$tag" $? "$t0" "$*"
}

# fo_start_bg TAG COMMAND...: like fo_run, in the background; fo_wait_bg collects it.
fo_start_bg() {
    FO_BG_TAG=$1
    shift
    FO_BG_CMD=$*
    FO_BG_T0=$(fo_now_ms)
    timeout -k 5 "$FO_HANG_S" "$@" </dev/null >"$MW_T/$FO_BG_TAG.out" 2>"$MW_T/$FO_BG_TAG.err" &
    FO_BG_PID=$!
}

fo_wait_bg() {
    wait "$FO_BG_PID"
    fo__ended "$FO_BG_TAG" $? "$FO_BG_T0" "$FO_BG_CMD"
}

# fo__ended TAG STATUS T0_MS COMMAND: the bookkeeping of fo_run and fo_wait_bg.
fo__ended() {
    local tag=$1 rc=$2
    echo $(($(fo_now_ms) - $3)) >"$MW_T/$tag.ms"
    echo "$rc" >"$MW_T/$tag.rc"
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        tail -n 20 "$MW_T/$tag.err" >&2
        mw_fail "run '$tag' did not finish within $FO_HANG_S s (hang): $4"
    fi
    mw_log "run '$tag': status $rc, $(cat "$MW_T/$tag.ms") ms"
}

# fo_wait_file PATH SECONDS: waits for PATH to exist while the background run is alive.
fo_wait_file() {
    local path=$1 limit=$2 i
    for ((i = 0; i < limit * 20; i++)); do
        [ -e "$path" ] && return 0
        kill -0 "$FO_BG_PID" 2>/dev/null || break
        sleep 0.05
    done
    [ -e "$path" ] || mw_fail "$path did not appear within $limit s (the job ended or stalled)"
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
    if ! cmp -s "$MW_T/$1.out" "$MW_T/$2.out"; then
        diff -u "$MW_T/$1.out" "$MW_T/$2.out" | head -n 40 >&2
        mw_fail "stdout of '$2' differs from the baseline '$1' (diff above)"
    fi
    [ -s "$MW_T/$1.out" ] || mw_fail "the baseline '$1' printed nothing: the test proves nothing"
}
fo_same_stderr() {
    if ! cmp -s "$MW_T/$1.err" "$MW_T/$2.err"; then
        diff -u "$MW_T/$1.err" "$MW_T/$2.err" | head -n 40 >&2
        mw_fail "stderr of '$2' differs from the baseline '$1' (diff above)"
    fi
}
fo_same_status() {
    local a b
    a=$(cat "$MW_T/$1.rc") b=$(cat "$MW_T/$2.rc")
    if [ "$a" != "$b" ]; then
        tail -n 20 "$MW_T/$2.err" >&2
        mw_fail "'$2' exited with status $b, the baseline '$1' with $a"
    fi
}
# fo_expect_status TAG N: the baseline itself must behave as the test assumes.
fo_expect_status() {
    local s
    s=$(cat "$MW_T/$1.rc")
    if [ "$s" != "$2" ]; then
        cat "$MW_T/$1.out" "$MW_T/$1.err" >&2
        mw_fail "'$1' exited with status $s, expected $2"
    fi
}

# fo_not_slower BASE TAG: TAG took about as long as the baseline BASE. The baseline is run
# once more right after TAG (its command from BASE.cmd), so that the two baselines bracket TAG
# in time and a machine whose load changed during the test moves the reference with it; TAG
# must stay under the slower of the two x 1.5 + 1.5 s. That catches a stall of a few seconds
# (a wait at MPI_Finalize, a blocked send) in a run of 1 to 5 s, which the former bound
# (x 3 + 5 s) let through, while the jobs of other users of a loaded 2-core machine, which
# slow a baseline as much as a monitored run, do not fail it. The ratio is printed either way.
fo_not_slower() {
    local a a2 b ref again="${1}_again_$2"
    a=$(cat "$MW_T/$1.ms") b=$(cat "$MW_T/$2.ms")
    a2=$a
    if [ -s "$MW_T/$1.cmd" ]; then
        eval "fo_run $again $(cat "$MW_T/$1.cmd")"
        a2=$(cat "$MW_T/$again.ms")
    fi
    ref=$((a > a2 ? a : a2))
    mw_log "wall time '$2' / baselines '$1': $b ms / $a and $a2 ms = $(awk -v a="$ref" -v b="$b" 'BEGIN { printf "%.2f", a ? b / a : 0 }')"
    [ "$b" -lt $((ref * 3 / 2 + 1500)) ] ||
        mw_fail "'$2' took $b ms, the baseline '$1' $a and $a2 ms (limit: the slower x 1.5 + 1.5 s)"
}

# fo_same TAG BASE: stdout, status and time of TAG against BASE.
fo_same() {
    fo_same_stdout "$2" "$1"
    fo_same_status "$2" "$1"
    fo_not_slower "$2" "$1"
}

# fo_start_collector [ARGS...]: a collector on MW_EP writing $MW_T/stats.json and
# $MW_T/summary.json (none left from an earlier collector), listening when this returns.
fo_start_collector() {
    rm -f "$MW_T/stats.json" "$MW_T/summary.json"
    mw_start_collector --stats-json "$MW_T/stats.json" --summary-json "$MW_T/summary.json" "$@"
}

# fo_finalize_bounded TAG MS: every rank of run TAG (started with FAILOPEN_TIMING=$MW_T/TAG.fin
# exported) spent less than MS ms in MPI_Finalize; the slowest is printed.
fo_finalize_bounded() {
    local worst
    worst=$(cat "$MW_T/$1.fin".* 2>/dev/null | sort -g | tail -n 1)
    [ -n "$worst" ] || mw_fail "run '$1' left no MPI_Finalize timing"
    mw_log "run '$1': slowest MPI_Finalize $worst ms (bound $2 ms)"
    awk -v w="$worst" -v b="$2" 'BEGIN { exit !(w < b) }' ||
        mw_fail "MPI_Finalize took $worst ms in run '$1' (bound $2 ms)"
}

# fo_collector_saw_job: the collector logged the start of the job (a hello arrived), so what
# happens to it next happens to a connected library, not to one still waiting to connect.
fo_collector_saw_job() {
    local i
    for ((i = 0; i < 100; i++)); do
        grep -q "info: job .* started" "$MW_T/collector.err" 2>/dev/null && return 0
        sleep 0.05
    done
    mw_fail "the collector had not seen the job half way through it: the test would prove nothing"
}

# fo_json FILE PYTHON_EXPR: evaluates the expression with j bound to the JSON in FILE and
# prints the result.
fo_json() {
    [ -s "$1" ] || mw_fail "the collector wrote no $1"
    "${MW_PYTHON:-/usr/bin/python3}" -c 'import json, sys
j = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$1" "$2" || mw_fail "cannot evaluate $2 on $1"
}

# fo_nothing_received: the collector's stats show that no message at all arrived.
fo_nothing_received() {
    local got
    got=$(fo_json "$MW_T/stats.json" 'j["accepted"] + sum(j["rejected"].values())')
    [ "$got" = 0 ] || mw_fail "the collector received $got message(s): $(cat "$MW_T/stats.json")"
}

# fo_ranks_reported: the summary counts exactly the job's FO_NP ranks: none missing (the
# library was active in every rank) and none more (nothing else said hello).
fo_ranks_reported() {
    local ranks
    ranks=$(fo_json "$MW_T/summary.json" 'j["ranks"]')
    [ "$ranks" = "$FO_NP" ] || mw_fail "the collector saw $ranks rank(s), expected the job's $FO_NP"
}

# fo_nothing_rejected WHO: the collector rejected no message; WHO is who would have sent one.
fo_nothing_rejected() {
    local rejected
    rejected=$(fo_json "$MW_T/stats.json" 'sum(j["rejected"].values())')
    [ "$rejected" = 0 ] ||
        mw_fail "the collector rejected messages ($1 said hello?): $(cat "$MW_T/stats.json")"
}

# The collector killed or stopped half way through a job (killed.sh, stopped.sh).
# fo_half_way_start: the baseline run 'base' of failopen_app (status 3, MPI_Finalize timed),
# then a collector and the run 'with' in the background, with the library; returns half way
# through 'with', once the collector has seen the job. The script then does its harm to the
# collector, collects 'with' (fo_wait_bg) and calls fo_half_way_same.
fo_half_way_start() {
    local app=("$MW_FO_BIN/failopen_app" 3)
    fo_run base env FAILOPEN_TIMING="$MW_T/base.fin" "${FO_MPI[@]}" -x FAILOPEN_TIMING "${app[@]}"
    fo_expect_status base 3
    fo_start_collector --quiet
    fo_lib "$MW_EP"
    fo_start_bg with env FAILOPEN_MARK="$MW_T/half" FAILOPEN_TIMING="$MW_T/with.fin" \
        "${FO_LIB[@]}" -x FAILOPEN_MARK -x FAILOPEN_TIMING "${app[@]}"
    fo_wait_file "$MW_T/half" 60
    fo_collector_saw_job
}

# fo_half_way_same: 'with' printed and exited as 'base', and its MPI_Finalize was bounded.
# The library waits at most MPIWATCH_LINGER_MS (200 ms) in MPI_Finalize; the bound is generous
# because the machines are shared and noisy, and only catches a wait that is not bounded.
fo_half_way_same() {
    fo_same with base
    fo_finalize_bounded base 100000
    fo_finalize_bounded with "${FO_FINALIZE_BOUND_MS:-2000}"
}
