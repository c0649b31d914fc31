#!/bin/bash
# launcher_names.sh: `mpiwatch run` never replaces a file with a recording or a snapshot
# (docs/launcher.md, "Recording and snapshot names").
#   - two runs with the same MPIWATCH_JOB (what a batch script with a fixed job name does, and
#     what two runs in the same second get by default) keep both recordings and both
#     snapshots: JOB.mpiw/.png, then JOB-2.mpiw/.png; the first is byte for byte unchanged;
#   - two such runs started at the same moment both record, into different files (the
#     collector's O_EXCL open decides a tie, and the loser takes the next name);
#   - a symbolic link planted at the next default name is skipped, its target intact;
#   - an explicit --record FILE that exists, or is a symbolic link, is refused before the
#     application runs (exit 125, the file named), and the file is untouched;
#   - an explicit --snapshot FILE that is a symbolic link is replaced by the PNG, the file it
#     pointed to intact.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
MW_NP=2
mw_setup launcher_names
mw_require MW_LAUNCHER
probe=$MW_PROGRAMS/preload_probe
[ -x "$probe" ] || mw_fail "program not built: $probe"
export MPIWATCH_RECORD_DIR=$MW_T/rec MPIWATCH_JOB=nightly
mkdir "$MPIWATCH_RECORD_DIR"
unset DISPLAY WAYLAND_DISPLAY # no window: the launcher writes the end-of-run snapshot

# run NAME ARGS...: mpiwatch run ARGS -- mpirun (2 ranks) probe 0; stdout and stderr in
# $MW_T/NAME.out and .err; returns the launcher's status.
run() {
    local name=$1
    shift
    "$MW_LAUNCHER" run --window-ms 50 "$@" -- "$MW_MPIRUN" --oversubscribe -np "$MW_NP" \
        "$probe" 0 >"$MW_T/$name.out" 2>"$MW_T/$name.err"
}
# recorded FILE: FILE is a regular, non-empty recording whose summary export names 2 ranks.
recorded() {
    { [ -f "$1" ] && [ ! -L "$1" ] && [ -s "$1" ]; } || mw_fail "no recording $1: $(ls -l "$MPIWATCH_RECORD_DIR")"
    "$MW_LAUNCHER" export --format summary "$1" -o "$MW_T/x.json" 2>"$MW_T/export.err" ||
        { MW_FAILURE_LOG=$MW_T/export.err; mw_fail "cannot export $1"; }
    grep -qE '"ranks":[[:space:]]*2,' "$MW_T/x.json" || mw_fail "$1 is not a 2-rank recording"
}
# png FILE: FILE is a regular PNG.
png() {
    { [ -f "$1" ] && [ ! -L "$1" ]; } || mw_fail "no snapshot $1: $(ls -l "$MPIWATCH_RECORD_DIR")"
    [ "$(od -An -tx1 -N8 "$1" | tr -d ' \n')" = 89504e470d0a1a0a ] || mw_fail "$1 is not a PNG"
}

R=$MPIWATCH_RECORD_DIR
MW_FAILURE_LOG=$MW_T/first.err
run first || mw_fail "first run: status $?"
recorded "$R/nightly.mpiw"
png "$R/nightly.png"
sum1=$(cksum <"$R/nightly.mpiw")
png1=$(cksum <"$R/nightly.png")

MW_FAILURE_LOG=$MW_T/second.err
run second || mw_fail "second run with the same MPIWATCH_JOB: status $?"
recorded "$R/nightly-2.mpiw"
png "$R/nightly-2.png"
[ "$(cksum <"$R/nightly.mpiw")" = "$sum1" ] || mw_fail "the first recording was changed by the second run"
[ "$(cksum <"$R/nightly.png")" = "$png1" ] || mw_fail "the first snapshot was changed by the second run"
grep -q "recording: $R/nightly-2.mpiw" "$MW_T/second.err" || mw_fail "the launcher did not name nightly-2.mpiw"

# A link planted at the next name (nightly-3) is skipped: the run records into nightly-4.
printf 'victim\n' >"$MW_T/victim"
ln -s "$MW_T/victim" "$R/nightly-3.mpiw"
# Two runs at the same moment: both record, into two new files.
MW_FAILURE_LOG=$MW_T/para1.err
run para1 &
p1=$!
run para2 &
p2=$!
wait "$p1" || mw_fail "concurrent run 1: status $? ($(tail -n 3 "$MW_T/para1.err"))"
wait "$p2" || mw_fail "concurrent run 2: status $? ($(tail -n 3 "$MW_T/para2.err"))"
[ "$(cat "$MW_T/victim")" = victim ] || mw_fail "the file behind a planted link was changed"
[ -L "$R/nightly-3.mpiw" ] || mw_fail "the planted link was replaced"
for n in 4 5; do
    recorded "$R/nightly-$n.mpiw"
    png "$R/nightly-$n.png"
done
[ "$(cksum <"$R/nightly.mpiw")" = "$sum1" ] || mw_fail "the first recording was changed"
mw_log "$(grep -h "taken by another run" "$MW_T"/para?.err || echo "no tie this time")"

# Explicit names: an existing file or a link is refused before the application runs.
for target in "$R/nightly.mpiw" "$R/nightly-3.mpiw"; do
    rc=0
    run explicit --record "$target" || rc=$?
    [ "$rc" = 125 ] || mw_fail "--record $target (taken): status $rc, not 125"
    grep -q "error: --record $target exists: a recording never replaces a file" "$MW_T/explicit.err" ||
        mw_fail "--record $target: no clear refusal: $(cat "$MW_T/explicit.err")"
    [ ! -s "$MW_T/explicit.out" ] || mw_fail "the application ran although --record was refused"
done
[ "$(cksum <"$R/nightly.mpiw")" = "$sum1" ] || mw_fail "an explicit --record changed an existing file"
[ "$(cat "$MW_T/victim")" = victim ] || mw_fail "an explicit --record wrote through a link"

# An explicit --snapshot that is a link: the link is replaced by the PNG, its target intact.
ln -s "$MW_T/victim" "$MW_T/shot.png"
MW_FAILURE_LOG=$MW_T/shot.err
run shot --record "$MW_T/shot.mpiw" --snapshot "$MW_T/shot.png" || mw_fail "--snapshot run: status $?"
png "$MW_T/shot.png"
[ "$(cat "$MW_T/victim")" = victim ] || mw_fail "--snapshot wrote through a symbolic link"
mw_log "ok: 6 runs, no file replaced"
