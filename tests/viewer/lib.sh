# lib.sh: what the viewer's snapshot scripts share (sourced after tests/lib/common.sh and
# mw_init).
#
# DESIGN: every script gets the viewer, mw-synth and mw-pngprobe as arguments (CTest passes
# the built paths) and works in its own MW_T. sv_synth writes a synthetic recording and keeps
# mw-synth's JSON description next to it; sv_snap runs the viewer offscreen on a recording
# and fails the script, with the viewer's output, when it does not write its PNG and meta
# JSON. The pixel checks are in snapcheck.py (python3, standard library).
# shellcheck shell=bash

SV_VIEWER=$1
SV_SYNTH=$2
SV_PROBE=$3
SV_CHECK="$(dirname "$0")/snapcheck.py"
# A script that makes its recordings another way passes "" for mw-synth.
[ -z "$SV_SYNTH" ] || [ -x "$SV_SYNTH" ] || mw_fail "mw-synth is not built: $SV_SYNTH"
[ -x "$SV_PROBE" ] || mw_fail "mw-pngprobe is not built: $SV_PROBE"
[ -x "$SV_VIEWER" ] || mw_fail "the viewer is not built: $SV_VIEWER"
export SDL_VIDEODRIVER=offscreen
unset DISPLAY WAYLAND_DISPLAY

# sv_synth NAME ARGS...: $MW_T/NAME.mpiw and its description $MW_T/NAME.json.
# shellcheck disable=SC2034 # MW_FAILURE_LOG is read by mw_teardown (tests/lib/common.sh)
sv_synth() {
    local name=$1
    shift
    "$SV_SYNTH" "$@" "$MW_T/$name.mpiw" >"$MW_T/$name.json" 2>"$MW_T/$name.synth.err" ||
        { MW_FAILURE_LOG=$MW_T/$name.synth.err; mw_fail "mw-synth $* failed"; }
}

# sv_snap NAME RECORDING ARGS...: the viewer's snapshot $MW_T/NAME.png and meta
# $MW_T/NAME.meta.json of RECORDING; its stdout in $MW_T/NAME.out. An offscreen driver the
# machine does not have (no EGL) fails the test unless that was allowed (mw_no_display).
# shellcheck disable=SC2034 # MW_FAILURE_LOG is read by mw_teardown (tests/lib/common.sh)
sv_snap() {
    local name=$1 rec=$2 rc
    shift 2
    "$SV_VIEWER" --replay "$rec" --snapshot "$MW_T/$name.png" --meta "$MW_T/$name.meta.json" \
        "$@" >"$MW_T/$name.out" 2>"$MW_T/$name.err"
    rc=$?
    if [ $rc != 0 ]; then
        if grep -qiE "offscreen.*(not available|unavailable)|no available video device|EGL not" \
            "$MW_T/$name.err"; then
            mw_no_display "$(head -n 3 "$MW_T/$name.err")"
        fi
        MW_FAILURE_LOG=$MW_T/$name.err
        mw_fail "viewer snapshot $name ($*) exited with status $rc"
    fi
    [ -s "$MW_T/$name.png" ] || { MW_FAILURE_LOG=$MW_T/$name.err; mw_fail "$name.png missing"; }
    [ -s "$MW_T/$name.meta.json" ] ||
        { MW_FAILURE_LOG=$MW_T/$name.err; mw_fail "$name.meta.json missing"; }
}

# sv_check CHECK ARGS...: one of snapcheck.py's checks; its report goes to the test's output.
sv_check() {
    "$MW_PYTHON" "$SV_CHECK" "$@" || mw_fail "check $1 failed (see above)"
}
