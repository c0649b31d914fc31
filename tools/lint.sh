#!/usr/bin/env bash
# lint.sh: the project's static checks; exits 1 when any check has a finding, 2 when a check
# cannot run (a missing tool), 0 otherwise. CTest runs it as the test `lint` (label lint), so
# the suite, tools/test.sh and CI (.ci/run) fail on a finding.
#   tools/lint.sh                  every check on the tree this script belongs to
#   tools/lint.sh --root DIR       the same on the tree DIR (how tests/lint/ shows a failure)
#
# DESIGN: one function per check, check_NAME, run from the root directory (the current
# directory when it runs). A check prints its findings and returns 1 when there are any, 2
# when it cannot run; every check runs even when an earlier one failed, so one run shows
# everything. Adding a check is writing its function and two lines at the end
# (`check_NAME` and `note $?`).
#
#   shell   shellcheck, with the settings of .shellcheckrc, on every shell script under
#           tools/, tests/ and bench/ (*.sh, any file starting with a sh or bash #! line,
#           the launcher template tools/mpiwatch.in) and on .ci/run.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = --root ]; then
    [ $# = 2 ] || { echo "usage: lint.sh [--root DIR]" >&2; exit 2; }
    root=$(cd "$2" && pwd) || exit 2
fi
cd "$root" || exit 2

# shell_scripts: the files check_shell checks, one per line, relative to the root. The fuzz
# corpora are inputs, not scripts.
shell_scripts() {
    local f
    find tools tests bench -path tests/fuzz/corpus -prune -o -type f -print 2>/dev/null |
        LC_ALL=C sort | while IFS= read -r f; do
            case $f in
                *.sh | tools/mpiwatch.in) echo "$f" ;;
                *) head -n 1 "$f" 2>/dev/null | grep -Eq '^#!.*[/ ](ba)?sh( |$)' && echo "$f" ;;
            esac
        done
    [ ! -f .ci/run ] || echo .ci/run
}

check_shell() {
    local scripts=()
    command -v shellcheck >/dev/null || {
        echo "lint: shellcheck is not installed (tools/setup.sh installs it)" >&2
        return 2
    }
    mapfile -t scripts < <(shell_scripts)
    [ ${#scripts[@]} -gt 0 ] || { echo "lint: no shell scripts under $root" >&2; return 2; }
    # The settings (followed sources, disabled checks) are in .shellcheckrc at the root.
    shellcheck --format=gcc "${scripts[@]}"
    case $? in
        0) ;;
        1) return 1 ;;
        *) echo "lint: shellcheck could not check the scripts" >&2; return 2 ;;
    esac
    echo "lint: shellcheck: ${#scripts[@]} scripts, no finding"
}

# note STATUS: folds a check's status into the script's (2, a check that could not run, wins).
rc=0
note() {
    if [ "$1" = 2 ]; then
        rc=2
    elif [ "$1" != 0 ] && [ "$rc" = 0 ]; then
        rc=1
    fi
}

check_shell
note $?
case $rc in
    1) echo "lint: FAILED (findings above)" >&2 ;;
    2) echo "lint: FAILED (a check could not run, above)" >&2 ;;
esac
exit "$rc"
