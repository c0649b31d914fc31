#!/bin/bash
# default_endpoint.sh: the default collector endpoint cannot be taken over by another user
# (issue 12, "also found"; docs/security.md, "The default endpoint").
#   - A collector without --listen and ranks without MPIWATCH_COLLECTOR meet on this user's
#     ipc://$XDG_RUNTIME_DIR/mpiwatch/collector; the directory is created with mode 0700; the
#     collector gets the 4-rank job (it exits after it, its summary has 4 ranks).
#   - The attacks: the directory already exists open to others (mode 0777, where another user
#     could bind the socket first), or is a symlink (to a directory of this user, even), or
#     belongs to another user (chown nobody, when the test runs as root). A "rogue" collector
#     listens exactly where the ranks' default would point; the ranks must send it nothing
#     (the library stays inert, says why with MPIWATCH_VERBOSE=1), and the program's output
#     and exit status are the same. A collector without --listen refuses to start there
#     (exit status 2, the reason on stderr).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mw_setup default_endpoint
prog=$MW_PROGRAMS/steer_cb
[ -x "$prog" ] || mw_fail "program not built: $prog"

# run_bare XDG: the program with the library and no MPIWATCH_COLLECTOR; must print its line.
run_bare() {
    "$MW_MPIRUN" --oversubscribe -np "$MW_NP" -x LD_PRELOAD="$MW_LIB" -x XDG_RUNTIME_DIR="$1" \
        -x MPIWATCH_VERBOSE=1 -x MPIWATCH_WINDOW_MS "$prog" bare "$MW_T" \
        >"$MW_T/bare.out" 2>"$MW_T/bare.err" ||
        mw_fail "the job failed with XDG_RUNTIME_DIR=$1: $(head -c 500 "$MW_T/bare.err")"
    grep -qx "steer_cb: bare, $MW_NP ranks, library present, polled 0, ok" "$MW_T/bare.out" ||
        mw_fail "unexpected output: $(head -c 300 "$MW_T/bare.out")"
}

# 1. The default works, and its directory is private.
mkdir -m 700 "$MW_T/xdg"
export XDG_RUNTIME_DIR=$MW_T/xdg
"$MW_COLLECTOR" --exit-after-job --quiet --summary-json "$MW_T/summary.json" \
    </dev/null >"$MW_T/collector.out" 2>>"$MW_T/collector.err" &
MW_CPID=$!
mw_wait_file "$MW_T/xdg/mpiwatch/collector" || mw_fail "the collector did not bind the default"
[ "$(stat -c %a "$MW_T/xdg/mpiwatch")" = 700 ] || mw_fail "the directory is not mode 0700"
run_bare "$MW_T/xdg"
mw_collector_exits 30
"$MW_PYTHON" -c 'import json,sys; s=json.load(open(sys.argv[1])); r=s["ranks"]; sys.exit(0 if (r if isinstance(r,int) else len(r))==int(sys.argv[2]) else 1)' \
    "$MW_T/summary.json" "$MW_NP" || mw_fail "the default collector did not get the job: $(head -c 400 "$MW_T/summary.json")"

# 2. Directories another user could use: open (0777), a symlink, another user's.
mkdir -p "$MW_T/open/mpiwatch" && chmod 777 "$MW_T/open/mpiwatch"
mkdir -p "$MW_T/link" && ln -s "$MW_T/xdg/mpiwatch" "$MW_T/link/mpiwatch"
cases="open link"
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    mkdir -p "$MW_T/other" && mkdir -m 700 "$MW_T/other/mpiwatch" && chown nobody "$MW_T/other/mpiwatch"
    cases="$cases other"
fi
for c in $cases; do
    rm -f "$MW_T/xdg/mpiwatch/collector"
    # The rogue collector, exactly where the default would point.
    MW_EP="ipc://$MW_T/$c/mpiwatch/collector"
    mw_start_collector --quiet --stats-json "$MW_T/rogue-$c.json"
    run_bare "$MW_T/$c"
    grep -q "no MPIWATCH_COLLECTOR and .*mpiwatch is not a directory of this user with mode 0700.*stays inert" \
        "$MW_T/bare.err" || mw_fail "$c: the ranks did not say why they stay inert: $(head -c 400 "$MW_T/bare.err")"
    sleep 1 # anything sent would have arrived by now
    mw_stop_collector
    "$MW_PYTHON" - "$MW_T/rogue-$c.json" <<'PY' || mw_fail "$c: the rogue collector received samples"
import json, sys
s = json.load(open(sys.argv[1]))
got = s["accepted"]  # frames taken from the ranks (a key every stats file has)
got = sum(got.values()) if isinstance(got, dict) else got
sys.exit(0 if got == 0 else 1)
PY
    # A collector without --listen refuses such a directory.
    rc=0
    XDG_RUNTIME_DIR=$MW_T/$c "$MW_COLLECTOR" --quiet </dev/null >/dev/null 2>"$MW_T/refused.err" || rc=$?
    { [ "$rc" = 2 ] && grep -q "no --listen and .*not a directory of this user" "$MW_T/refused.err"; } ||
        mw_fail "$c: a collector without --listen started or was unclear (status $rc): $(cat "$MW_T/refused.err")"
    mw_log "$c: refused"
done
echo "default_endpoint: ok"
