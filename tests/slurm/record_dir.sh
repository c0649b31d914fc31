#!/bin/bash
# record_dir.sh: where `mpiwatch run` records by default when the current directory is not
# writable (docs/launcher.md "Recording and snapshot names"): into
# $XDG_DATA_HOME/mpiwatch/recordings (by default ~/.local/share/...), saying so on stderr; into
# $TMPDIR when that cannot be made either. Run as an unprivileged user (nobody) in /, which it
# cannot write (root writes everywhere), with a home directory of the test's.

. "$(dirname "$0")/../integration/lib.sh"
mw_setup launcher_record_dir
mw_require MW_LAUNCHER
[ "$(id -u)" = 0 ] || mw_skip "needs root to run the launcher as another user"
user=nobody
id "$user" >/dev/null 2>&1 || mw_skip "no user $user"
for f in "$MW_LAUNCHER" "$MW_COLLECTOR" "$MW_LIB"; do
    setpriv --reuid="$user" --regid=nogroup --clear-groups test -r "$f" ||
        mw_skip "$user cannot read $f (build tree not world-readable)"
done
home=$(mktemp -d /tmp/mw-record-home.XXXXXX)
chown "$user" "$home"
trap 'rc=$?; rm -rf -- "$home"; (exit "$rc"); mw_teardown' EXIT

# mw_as_user ENV... : the launcher as $user in /, no recording directory set, a job that
# starts no rank (`true`: its status then is 3, no hello, which is not what is checked here).
mw_as_user() {
    (cd / && env -u MPIWATCH_RECORD_DIR -u XDG_DATA_HOME "$@" \
        setpriv --reuid="$user" --regid=nogroup --clear-groups \
        "$MW_LAUNCHER" run --no-viewer --quiet --grace 0 -- true) >"$MW_T/out" 2>"$MW_T/err"
}

mw_as_user HOME="$home" TMPDIR=/tmp MPIWATCH_JOB=recdir
want=$home/.local/share/mpiwatch/recordings
grep -qF "the current directory is not writable: recording into $want" "$MW_T/err" ||
    mw_fail "the launcher did not say where it records: $(cat "$MW_T/err")"
[ -s "$want/recdir.mpiw" ] || mw_fail "no recording in $want: $(ls -la "$want" 2>&1)"

# A home where nothing can be created: $TMPDIR.
mkdir -m 755 "$MW_T/tmp" && chown "$user" "$MW_T/tmp" && chmod 711 "$MW_T"
mw_as_user HOME=/nonexistent TMPDIR="$MW_T/tmp" MPIWATCH_JOB=recdir2
grep -qF "the current directory is not writable: recording into $MW_T/tmp" "$MW_T/err" ||
    mw_fail "the launcher did not fall back to TMPDIR: $(cat "$MW_T/err")"
[ -s "$MW_T/tmp/recdir2.mpiw" ] || mw_fail "no recording in $MW_T/tmp: $(ls -la "$MW_T/tmp" 2>&1)"
mw_log ok
