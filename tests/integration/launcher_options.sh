#!/bin/bash
# launcher_options.sh: `mpiwatch run --keep --endpoint EP --snapshot FILE` (docs/launcher.md)
# and the {metric} and {step} placeholders of exec actions (docs/steering.md), each untested
# before. tests/programs/steps (mw_step() every step) on 4 ranks under `mpiwatch run` with
#   --endpoint ipc://DIR/ep  the collector says it listens there, the socket is there, and all 4
#                            ranks reached it (summary);
#   --keep                   the launcher prints "kept DIR": DIR exists, is private (0700),
#                            under $TMPDIR; a second run without --keep leaves no directory;
#   --snapshot FILE          FILE is a PNG (signature, IHDR of a non-empty image), announced;
#   rules (--collector-arg=--rules=FILE), exec'ing tests/collector/rules_argv.sh, which writes
#   its argv: a rule over windows gets {metric} mpi_fraction and {step} -1, a rule over steps
#   {metric} step_time and {step} a step number the summary holds.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mw_setup launcher_options
mw_require MW_LAUNCHER
prog=$MW_PROGRAMS/steps
[ -x "$prog" ] || mw_fail "program not built: $prog"
argv_prog="$(cd "$(dirname "${BASH_SOURCE[0]}")/../collector" && pwd)/rules_argv.sh"
[ -r "$argv_prog" ] || mw_fail "no $argv_prog"
export MPIWATCH_WINDOW_MS=20
cat >"$MW_T/rules.ini" <<INI
[rule win-rule]
metric    = mpi_fraction
op        = >=
threshold = 0
cooldown  = 1000000
action    = exec
exec      = /bin/sh $argv_prog $MW_T/win.txt {metric} {step} {rule}

[rule step-rule]
over      = step
metric    = step_time
op        = >=
threshold = 0
cooldown  = 1000000
action    = exec
exec      = /bin/sh $argv_prog $MW_T/step.txt {metric} {step} {rule}
INI

# run TAG ARGS...: `mpiwatch run ARGS -- mpirun ... steps api 20` into TAG.out / TAG.err.
run() {
    local tag=$1
    shift
    "$MW_LAUNCHER" run --no-viewer --summary-json "$MW_T/$tag.json" \
        --collector-arg=--rules="$MW_T/rules.ini" "$@" -- \
        "$MW_MPIRUN" --oversubscribe -np "$MW_NP" "$prog" api 20 >"$MW_T/$tag.out" 2>"$MW_T/$tag.err" ||
        { MW_FAILURE_LOG=$MW_T/$tag.err; mw_fail "$tag: mpiwatch run failed"; }
    grep -q "^steps: $MW_NP ranks, api, N=20, ok" "$MW_T/$tag.out" ||
        { MW_FAILURE_LOG=$MW_T/$tag.err; mw_fail "$tag: the program did not succeed"; }
}
run opts --keep --endpoint "ipc://$MW_T/ep" --snapshot "$MW_T/snap.png"
MW_FAILURE_LOG=$MW_T/opts.err
grep -q "info: listening on ipc://$MW_T/ep$" "$MW_T/opts.err" || mw_fail "--endpoint: not listening on it"
[ -S "$MW_T/ep" ] || mw_fail "--endpoint: no socket at $MW_T/ep"
ranks=$("$MW_PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["ranks"])' "$MW_T/opts.json")
[ "$ranks" = "$MW_NP" ] || mw_fail "--endpoint: $ranks ranks reached the collector"
kept=$(sed -n 's/^mpiwatch: kept //p' "$MW_T/opts.err")
{ [ -n "$kept" ] && [ -d "$kept" ]; } || mw_fail "--keep: no directory kept ('$kept')"
[ "$(dirname "$kept")" = "$MW_T" ] || mw_fail "--keep: $kept is not under \$TMPDIR ($MW_T)"
[ "$(stat -c %a "$kept")" = 700 ] || mw_fail "--keep: $kept has mode $(stat -c %a "$kept")"
grep -q "^mpiwatch: snapshot of the run: $MW_T/snap.png$" "$MW_T/opts.err" ||
    mw_fail "--snapshot: not announced"
"$MW_PYTHON" - "$MW_T/snap.png" <<'PY' || mw_fail "--snapshot: not a PNG image"
import struct, sys
b = open(sys.argv[1], "rb").read(33)
w, h = struct.unpack(">II", b[16:24])
print(f"snapshot: {w}x{h}")
sys.exit(0 if b[:8] == b"\x89PNG\r\n\x1a\n" and b[12:16] == b"IHDR" and w > 0 and h > 0 else 1)
PY
"$MW_PYTHON" - "$MW_T" <<'PY' || mw_fail "the {metric} / {step} placeholders (above)"
import json, sys
d = sys.argv[1]
win = open(f"{d}/win.txt").read().split("\n")[:3]
step = open(f"{d}/step.txt").read().split("\n")[:3]
steps = [s["step"] for s in json.load(open(f"{d}/opts.json"))["steps"]]
print(f"window rule argv {win}, step rule argv {step}, summary steps {steps[:5]}...")
ok = win == ["mpi_fraction", "-1", "win-rule"] and step[0] == "step_time" and \
    step[2] == "step-rule" and step[1].isdigit() and int(step[1]) in steps
sys.exit(0 if ok else 1)
PY
# Without --keep nothing is left behind.
before=$(find "$MW_T" -maxdepth 1 -name 'mpiwatch.*' -type d | wc -l)
run plain
grep -q "^mpiwatch: kept " "$MW_T/plain.err" && mw_fail "kept a directory without --keep"
after=$(find "$MW_T" -maxdepth 1 -name 'mpiwatch.*' -type d | wc -l)
[ "$after" = "$before" ] || mw_fail "without --keep: $after private directories, $before before"
echo "launcher_options: ok"
