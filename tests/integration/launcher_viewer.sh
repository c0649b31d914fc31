#!/bin/bash
# launcher_viewer.sh: `mpiwatch run --viewer` gives the collector a live feed and a history
# endpoint and starts mpiwatch-viewer on them, in a session of its own, not waited for: after
# the run the viewer is still running (here drawing offscreen: SDL_VIDEODRIVER=offscreen comes
# from mw_init), connected to the run's endpoints, and no end-of-run snapshot was drawn (the
# window took its place). Without --viewer and without a display, no viewer is started.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mw_setup launcher_viewer
mw_require MW_LAUNCHER
probe=$MW_PROGRAMS/preload_probe
vpid=''
stop_viewer() { [ -z "$vpid" ] || kill -KILL "$vpid" 2>/dev/null; }
trap 'rc=$?; stop_viewer; (exit $rc); mw_teardown' EXIT

MW_FAILURE_LOG=$MW_T/viewer.err
"$MW_LAUNCHER" run --viewer --window-ms 50 -- "$MW_MPIRUN" --oversubscribe -np "$MW_NP" \
    "$probe" 0 >"$MW_T/viewer.out" 2>"$MW_T/viewer.err" || mw_fail "mpiwatch run --viewer failed"
vpid=$(sed -n 's/.*viewer started (pid \([0-9]*\)).*/\1/p' "$MW_T/viewer.err")
[ -n "$vpid" ] || mw_fail "the launcher did not start the viewer"
kill -0 "$vpid" 2>/dev/null || mw_fail "the viewer (pid $vpid) did not stay open after the run"
cmd=$(tr '\0' ' ' <"/proc/$vpid/cmdline")
case $cmd in
    *mpiwatch-viewer\ --connect\ ipc://*/feed\ --history\ ipc://*/history*) ;;
    *) mw_fail "the viewer runs as '$cmd'" ;;
esac
# Its session is its own: a Ctrl-C for the job's process group does not reach it.
[ "$(ps -o sid= -p "$vpid" | tr -d ' ')" = "$vpid" ] || mw_fail "the viewer is not a session leader"
! ls "$MPIWATCH_RECORD_DIR"/*.png >/dev/null 2>&1 || mw_fail "a snapshot was drawn although the viewer was open"
grep -q "^probe rank 0 " "$MW_T/viewer.out" || mw_fail "the job's output is missing"
stop_viewer
vpid=''

# No display, no --viewer: no viewer.
"$MW_LAUNCHER" run --window-ms 50 -- "$MW_MPIRUN" --oversubscribe -np "$MW_NP" "$probe" 0 \
    >"$MW_T/plain.out" 2>"$MW_T/plain.err" || { MW_FAILURE_LOG=$MW_T/plain.err; mw_fail "mpiwatch run failed"; }
! grep -q "viewer started" "$MW_T/plain.err" || mw_fail "a viewer was started without a display"
mw_log "ok"
