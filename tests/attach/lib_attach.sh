# lib_attach.sh: helpers of the attach tests (sourced, not run): a private registry and home
# directory, and reading `mpiwatch ls --json`.

# shellcheck shell=bash source=../integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"

# mw_attach_setup NAME: mw_setup, then the registry and the home directory (client key) in
# MW_T, so that a test never reads or writes the user's own.
mw_attach_setup() {
    mw_setup "$1"
    mw_require MW_LAUNCHER MW_JOBS
    [ -x "$MW_JOBS" ] || mw_fail "not built: $MW_JOBS"
    export MPIWATCH_REGISTRY=$MW_T/registry HOME=$MW_T/home
    mkdir -m 700 "$MW_T/home"
    unset MPIWATCH_CURVE_SERVER MPIWATCH_CURVE_KEY MPIWATCH_CLIENT_KEY XDG_RUNTIME_DIR
}

# mw_ls_check PYTHON_EXPR: true once `mpiwatch ls --json` (as `jobs`, a list) satisfies the
# Python expression, within 15 s (entries are rewritten at most once a second); the last
# listing is in $MW_T/ls.json.
mw_ls_check() {
    local i
    for ((i = 0; i < 30; i++)); do
        "$MW_LAUNCHER" ls --json >"$MW_T/ls.json" 2>"$MW_T/ls.err" || true
        python3 -c "import json,sys; jobs=json.load(open(sys.argv[1])); sys.exit(0 if ($1) else 1)" \
            "$MW_T/ls.json" 2>/dev/null && return 0
        sleep 0.5
    done
    return 1
}

# mw_registry_entries: the number of entry files in the registry.
mw_registry_entries() {
    find "$MPIWATCH_REGISTRY" -maxdepth 1 -name '*.json' 2>/dev/null | wc -l
}
