# lib.sh: helpers of the fault suite (sourced, not run).
#
# Every fault test runs tests/faults/fault_app on a real mpirun job twice: a baseline without
# the library, then with libmpiwatch.so preloaded while the test harms the collector or its
# clients (kill -9 and restart, SIGSTOP, a late start, a dying rank, a full disk, stopped
# subscribers, a flood of steering requests). The run with the library must print and exit as
# the baseline did, and the collector's accounting must be exact: for every rank and every
# function, the calls the program counted itself == the calls in the summary + the calls the
# summary reports missing (check_accounting.py). The fail-open helpers (baseline runs, output
# comparison, bounded MPI_Finalize) come from tests/failopen/lib.sh; paths come from CTest:
#   MW_LIB, MW_COLLECTOR, MW_FO_BIN (directory of fault_app), MW_MPIRUN, MW_PYTHON,
#   MW_LAUNCHER (mpiwatch), MW_TOOLS (directory of mpiwatch-feed, -loadgen, -export),
#   MW_VIEWER (mpiwatch-viewer), MW_BADINPUT (tests/collector/mw-badinput).

# shellcheck shell=bash
# shellcheck source=../failopen/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../failopen/lib.sh"

FT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FT_APP=()

# ft_setup NAME [ITERATIONS [SLEEP_US]]: the fail-open set-up (private directory, clean
# environment) for fault_app with the given length (default 600 iterations of 5 ms: ~3 s).
ft_setup() {
    fo_setup "$1" needs-collector
    FT_APP=("$MW_FO_BIN/fault_app" "${2:-600}" "${3:-5000}" 3)
    [ -x "${FT_APP[0]}" ] || mw_fail "program not built: ${FT_APP[0]}"
    mkdir -p "$MW_T/counts"
}

# ft_baseline: the run 'base' without the library (exit status 3 by design: fault_app's
# rank 0 returns its third argument, so a changed status is visible).
ft_baseline() {
    fo_run base "${FO_MPI[@]}" "${FT_APP[@]}"
    fo_expect_status base 3
}

# ft_start_with [ENV=VALUE...]: the run 'with' in the background, the library pointed at
# MW_EP, rank 0 marking $MW_T/half and $MW_T/late (three quarters), every rank writing its
# own counts into $MW_T/counts. More environment for the ranks may be given as NAME=VALUE.
ft_start_with() {
    local xs=() kv
    fo_lib "$MW_EP"
    for kv in "$@"; do
        xs+=(-x "$kv")
    done
    fo_start_bg with env FAULT_MARK="$MW_T/half" FAULT_MARK2="$MW_T/late" \
        FAULT_COUNTS="$MW_T/counts" "${FO_LIB[@]}" -x FAULT_MARK -x FAULT_MARK2 -x FAULT_COUNTS \
        ${xs[@]+"${xs[@]}"} "${FT_APP[@]}"
}

# ft_collector [ARGS...]: a collector on MW_EP that ends with the job and writes the summary
# and stats files of fo_start_collector.
ft_collector() {
    fo_start_collector --quiet --exit-after-job "$@"
}

# ft_accounting [ARGS...]: check_accounting.py on the summary and the program's own counts;
# ARGS: --expect-missed (the fault must have lost calls, else the test proved nothing),
# --no-missed (nothing may be reported missing), --dead RANK (a rank that died: its counts
# file is absent and its totals are as of its last sample).
ft_accounting() {
    "${MW_PYTHON:-/usr/bin/python3}" "$FT_DIR/check_accounting.py" "$MW_T/summary.json" \
        "$MW_T/counts" --np "$FO_NP" "$@" ||
        mw_fail "the accounting is not exact (above); summary: $(head -c 1500 "$MW_T/summary.json")"
}

# ft_same: 'with' printed and exited as the baseline, and its MPI_Finalize was not held up.
ft_same() {
    fo_same with base
}

# ft_on_exit COMMAND: runs COMMAND (a string) when the script exits, before the usual
# clean-up, keeping the script's exit status (which the clean-up reports and passes on).
ft_on_exit() {
    # SC2064: COMMAND is expanded now, on purpose. SC2154: ft_rc is assigned in the trap
    # string itself, where shellcheck does not see assignments.
    # shellcheck disable=SC2064,SC2154
    trap "ft_rc=\$?; $1; (exit \$ft_rc); mw_teardown" EXIT
}

# FT_S137 COMMAND...: a prefix that runs COMMAND and exits with its status, except 137 (a rank
# killed by SIGKILL, passed on by mpirun), which becomes 237 so that fo_run does not take it
# for the kill of its own timeout (a hang).
# shellcheck disable=SC2016,SC2034 # expanded by the inner bash; used by the scripts that source this
FT_S137=(bash -c '"$@"; rc=$?; [ "$rc" = 137 ] && rc=237; exit "$rc"' ft_s137)
