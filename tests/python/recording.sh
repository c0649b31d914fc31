#!/bin/bash
# recording.sh MPIWATCH EXPORT EXAMPLES COLLECTOR: the Python package reads a real job's
# recording exactly.
#
# `mpiwatch demo` (4 ranks of mpiwatch-demo under mpirun, the library preloaded, a private
# collector with 2 s of lateness so that no sample comes late) records the run and writes the
# collector's summary JSON. check_recording.py reads the recording with mpiwatch.Recording
# (PYTHONPATH: the package in the build tree, with its generated mpiwatch_pb2) and compares
# every figure exactly with the summary and, window by window, with `mpiwatch-export --format
# jsonl`, then proves each comparison can fail. check_corrupt.py then damages copies of the
# recording (torn, bad CRC, bad lengths, tags, versions): each must raise RecordingError with a
# clear message, never hang. The example script and notebook run on the recording. The package
# is used from the source tree, generating its protobuf module with protoc on the fly, and must
# read the same tables. Last, the progress line of export and replay (see below).
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
mpiwatch=$1
export_=$2
examples=$3
collector=$4
mw_require MW_PYDIR
mw_init python_recording
mw_mpi_env
d=$MW_T
here=$(dirname "$0")
export PYTHONPATH=$MW_PYDIR

"$mpiwatch" demo --quiet --no-viewer --record "$d/run.mpiw" --summary-json "$d/summary.json" \
    --collector-arg=--lateness-ms=2000 -- 150 >"$d/demo.out" 2>"$d/demo.err" ||
    { MW_FAILURE_LOG=$d/demo.err; mw_fail "mpiwatch demo failed"; }
{ [ -s "$d/run.mpiw" ] && [ -s "$d/summary.json" ]; } || mw_fail "no recording or no summary"
"$export_" --format jsonl "$d/run.mpiw" -o "$d/run.jsonl" 2>"$d/export.err" ||
    { MW_FAILURE_LOG=$d/export.err; mw_fail "mpiwatch-export failed"; }

MW_FAILURE_LOG=$d/check.err
"$MW_PYTHON" "$here/check_recording.py" "$d/run.mpiw" "$d/summary.json" "$d/run.jsonl" \
    >"$d/check.out" 2>"$d/check.err" || mw_fail "the package's figures differ from the summary"
cat "$d/check.out"

MW_FAILURE_LOG=$d/corrupt.err
mkdir "$d/bad"
timeout 120 "$MW_PYTHON" "$here/check_corrupt.py" "$d/run.mpiw" "$d/bad" >"$d/corrupt.out" \
    2>"$d/corrupt.err" || mw_fail "damaged recordings"
tail -n 1 "$d/corrupt.out"

# From the source tree: no generated module there, protoc makes one for the process.
MW_FAILURE_LOG=$d/src.err
PYTHONPATH=$here/../../tools/python "$MW_PYTHON" - "$d/run.mpiw" <<'PY' >"$d/src.out" \
    2>"$d/src.err" || mw_fail "the package from the source tree"
import os, sys
import mpiwatch
assert not os.path.exists(os.path.join(os.path.dirname(mpiwatch.__file__), "mpiwatch_pb2.py"))
r = mpiwatch.Recording(sys.argv[1])
print(len(r.windows()), int(r.functions()["calls"].sum()), int(r.totals()["time_ns"].sum()))
PY
PYTHONPATH=$MW_PYDIR "$MW_PYTHON" -c '
import sys, mpiwatch
r = mpiwatch.Recording(sys.argv[1])
print(len(r.windows()), int(r.functions()["calls"].sum()), int(r.totals()["time_ns"].sum()))' \
    "$d/run.mpiw" >"$d/build.out" 2>>"$d/src.err"
cmp "$d/src.out" "$d/build.out" || mw_fail "the source tree and the build tree read differently"

# The example script (examples/python/analyse.py) on the same recording: its three analyses,
# with the busiest function of the summary at the top.
MW_FAILURE_LOG=$d/example.err
"$MW_PYTHON" "$examples/analyse.py" "$d/run.mpiw" >"$d/example.out" 2>"$d/example.err" ||
    mw_fail "examples/python/analyse.py failed"
top=$("$MW_PYTHON" -c 'import json, sys; f = json.load(open(sys.argv[1]))["functions"]
print(max(f, key=lambda k: f[k]["time_ns"]))' "$d/summary.json")
for h in "top functions" "MPI fraction over time" "imbalance"; do
    grep -qi "$h" "$d/example.out" || mw_fail "the example printed no '$h'"
done
grep -A2 -i "top functions" "$d/example.out" | grep -q "$top" ||
    mw_fail "the example's top function is not the summary's ($top)"
# The notebook's code cells, in order, on the same recording (plots drawn off screen).
MW_FAILURE_LOG=$d/notebook.err
(cd "$d" && MPLBACKEND=Agg "$MW_PYTHON" - "$examples/analyse.ipynb" <<'PY') >"$d/notebook.out" \
    2>"$d/notebook.err" || mw_fail "the notebook examples/python/analyse.ipynb failed"
import json, sys
nb = json.load(open(sys.argv[1]))
env = {}
for cell in nb["cells"]:
    if cell["cell_type"] == "code":
        exec("".join(cell["source"]), env)
assert env["per_rank"].idxmax() is not None and len(env["tot"]) > 0
PY
# Progress (docs/export.md): --progress off a terminal prints lines, the last one at 100% with
# every window; on a terminal (script(1)), a replay with --quiet shows one line rewritten in
# place, at most four times a second, erased at the end; --no-progress and the live view (no
# --quiet) show none.
MW_FAILURE_LOG=$d/progress.err
"$export_" --format csv --progress "$d/run.mpiw" -o "$d/p.csv" 2>"$d/progress.err" ||
    mw_fail "export --progress failed"
windows=$("$MW_PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["windows"])' \
    "$d/summary.json")
tail -n 1 "$d/progress.err" | grep -Eq "^export: 100% \($windows windows, [0-9.]+/[0-9.]+ MB\)$" ||
    mw_fail "export --progress did not end with 100% and $windows windows"
# The pace of the replay: about 3 s whatever the demo's length (its 150 iterations took 1.2 s
# on a quiet machine and 10 s on a loaded one), so that several updates are due.
speed=$(awk -v w="$windows" 'BEGIN { s = w * 0.1 / 3; if (s > 3) s = 3; if (s < 0.05) s = 0.05; print s }')
replay_tty() { # OUT ARGS...: a replay on a terminal at that pace, what the terminal showed into OUT
    local out=$1 cmd
    shift
    printf -v cmd '%q ' "$collector" --replay "$d/run.mpiw" --speed "$speed" "$@"
    SECONDS=0
    script -qec "$cmd" /dev/null >"$out" 2>&1 </dev/null || mw_fail "replay $* failed"
    echo "$SECONDS"
}
secs=$(replay_tty "$d/tty.out" --quiet)
updates=$(grep -o $'\rreplay: *[0-9]*% ([0-9]* windows' "$d/tty.out" | wc -l)
{ [ "$updates" -ge 2 ] && [ "$updates" -le $((4 * secs + 4)) ]; } ||
    { cp "$d/tty.out" "$d/progress.err"; mw_fail "$updates progress updates in $secs s on a terminal"; }
grep -q $'\r\033\[K' "$d/tty.out" || mw_fail "the progress line was not erased at the end"
replay_tty "$d/tty_no.out" --quiet --no-progress >/dev/null
replay_tty "$d/tty_live.out" >/dev/null
! grep -q "replay: *[0-9]*%" "$d/tty_no.out" "$d/tty_live.out" ||
    mw_fail "a progress line with --no-progress or beside the live view"
mw_log "ok"
