#!/bin/bash
# export.sh COLLECTOR LOADGEN EXPORT GAPJOB: a recorded load-generator run exported in every format.
#
# A real collector records (--record) an emulated 64-rank job on 4 nodes (mpiwatch-loadgen,
# fixed seed) and writes its live summary and stats. Then mpiwatch-export must give:
#   summary   the live summary byte for byte (to a file and to stdout);
#   jsonl     one valid JSON line per window of the summary, whose per-function sums are the
#             summary's functions (the run has no late samples, so every call is in a window);
#   csv       per-function sums equal to the summary, fractions in [0, 1];
#   --per-rank  per-rank, per-function sums equal to the summary's per_rank, with its hosts;
#   perfetto  JSON that loads, counters for the busiest function with values in [0, 1], the
#             longest calls as X events on threads tid = rank inside the rank's host process,
#             as many partial-window markers as the stats count, the job's start and end.
# A second run of 1024 ranks with --lateness-ms 1 (windows close before all ranks report:
# partial windows and late samples, as many as the machine makes) must still give the live
# summary and per-rank sums, and one marker per partial window. Because run b may happen to
# have no partial window on a fast machine, run c is a 4-rank job (mw-gapjob) whose rank 3 is
# silent for 10 of its 16 windows, recorded with --lateness-ms 200: the 5 windows mw-gapjob says
# are sure to be partial must be exported as partial (jsonl: ranks_missing 1), no window
# outside the gap may be, and the perfetto trace has one marker per partial window. A truncated and a corrupted copy of the
# recording export what precedes the damage with a warning and exit 0; a missing file, a file
# that is not a recording and an unknown format exit 2.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
MW_COLLECTOR=$1
loadgen=$2
export_=$3
gapjob=$4
python=$MW_PYTHON
mw_init export
dir=$MW_T

# record_run NAME RANKS NODES SECONDS [COLLECTOR ARGS...]: a recorded loadgen run (seed 7, 8
# functions, 10 windows/s) into $dir/NAME.*
record_run() {
    local name=$1 ranks=$2 nodes=$3 seconds=$4
    shift 4
    mw_start_collector --exit-after-job --quiet --record "$dir/$name.mpiw" \
        --summary-json "$dir/$name.live.json" --stats-json "$dir/$name.stats.json" \
        --silence-timeout-ms 30000 "$@"
    "$loadgen" --connect "$MW_EP" --ranks "$ranks" --rate 10 --functions 8 --seconds "$seconds" \
        --nodes "$nodes" --job "lg$name" --seed 7 --totals-json "$dir/$name.totals.json" \
        2>"$dir/$name.loadgen.err" ||
        { MW_FAILURE_LOG=$dir/$name.loadgen.err; mw_fail "mpiwatch-loadgen failed ($name)"; }
    mw_collector_exits 20
    [ -s "$dir/$name.mpiw" ] || mw_fail "no recording written ($name)"
}

# run_export NAME FORMAT [ARGS...]: exports $dir/NAME.mpiw, which must succeed without a word.
run_export() {
    local name=$1 format=$2
    shift 2
    "$export_" --format "$format" "$dir/$name.mpiw" "$@" 2>"$dir/export.err" ||
        { MW_FAILURE_LOG=$dir/export.err; mw_fail "export $format of $name failed"; }
    [ ! -s "$dir/export.err" ] ||
        { MW_FAILURE_LOG=$dir/export.err; mw_fail "export $format of $name printed on stderr"; }
}

record_run a 64 4 2
for f in summary jsonl csv perfetto; do
    run_export a "$f" -o "$dir/a.$f"
done
run_export a csv --per-rank -o "$dir/a.rank.csv"
cmp "$dir/a.live.json" "$dir/a.summary" || mw_fail "the exported summary differs from the live one"
run_export a summary -o - >"$dir/a.stdout"
cmp "$dir/a.live.json" "$dir/a.stdout" || mw_fail "the summary on stdout differs from the live one"
[ ! -e "$dir/a.summary.tmp" ] || mw_fail "a temporary file was left behind"

"$python" "$(dirname "$0")/check_export.py" "$dir" a full || mw_fail "export check (run a)"

# Damaged copies: the tail torn off in the middle of a frame, and a flipped byte (CRC).
size=$(stat -c %s "$dir/a.mpiw")
head -c $((size * 55 / 100)) "$dir/a.mpiw" >"$dir/torn.mpiw"
cp "$dir/a.mpiw" "$dir/flip.mpiw"
printf '\xff' | dd of="$dir/flip.mpiw" bs=1 seek=$((size / 2)) conv=notrunc status=none
for name in torn flip; do
    for f in summary jsonl csv perfetto; do
        "$export_" --format "$f" "$dir/$name.mpiw" -o "$dir/$name.$f" 2>"$dir/$name.err" ||
            { MW_FAILURE_LOG=$dir/$name.err; mw_fail "export $f of the $name recording failed"; }
        grep -q "warning: .*incomplete or corrupt" "$dir/$name.err" ||
            { MW_FAILURE_LOG=$dir/$name.err; mw_fail "no warning about the $name recording"; }
    done
done
"$python" - "$dir" <<'PY' || mw_fail "damaged recordings"
import json, sys
d = sys.argv[1]
full = sum(1 for _ in open(f"{d}/a.jsonl"))
for name in ("torn", "flip"):
    lines = [json.loads(l) for l in open(f"{d}/{name}.jsonl")]
    if not 0 < len(lines) < full:
        sys.exit(f"{name}: {len(lines)} windows of {full}")
    json.load(open(f"{d}/{name}.perfetto"))
    s = json.load(open(f"{d}/{name}.summary"))
    if s["ranks"] != 64:
        sys.exit(f"{name}: summary ranks {s['ranks']}")
PY

# Errors: exit status 2, a message, no output file.
expect_2() {
    local what=$1 rc
    shift
    "$export_" "$@" -o "$dir/err.out" 2>"$dir/err.txt"
    rc=$?
    [ "$rc" = 2 ] || mw_fail "$what: exit status $rc, want 2"
    [ -s "$dir/err.txt" ] || mw_fail "$what: no message"
    if [ -e "$dir/err.out" ] || [ -e "$dir/err.out.tmp" ]; then
        mw_fail "$what: output left behind"
    fi
}
expect_2 "missing file" --format jsonl "$dir/none.mpiw"
echo "not a recording at all" >"$dir/text.mpiw"
expect_2 "not a recording" --format csv "$dir/text.mpiw"
expect_2 "unknown format" --format bogus "$dir/a.mpiw"
expect_2 "no file" --format csv
"$export_" --format csv "$dir/a.mpiw" -o "$dir/no/such/dir/out.csv" 2>/dev/null
[ $? = 1 ] || mw_fail "an output that cannot be written must exit 1"
"$export_" --help | grep -q -- "--per-rank" || mw_fail "--help"

# An output that is not a regular file is written in place, never renamed over (which would
# replace a FIFO, /dev/null or a link such as /dev/stdout by a plain file).
mkfifo "$dir/fifo"
cat "$dir/fifo" >"$dir/fifo.out" &
reader=$!
run_export a summary -o "$dir/fifo"
if [ ! -p "$dir/fifo" ]; then
    kill "$reader" # it still waits for a writer on the FIFO that is gone
    mw_fail "the FIFO given as output was replaced"
fi
wait "$reader"
cmp "$dir/a.live.json" "$dir/fifo.out" || mw_fail "the summary written to a FIFO differs"
# A symbolic link at the output's name is replaced by the file, never written through
# (docs/security.md: a planted link must not let an export overwrite another file).
echo keep >"$dir/a.link.target"
ln -s a.link.target "$dir/a.link"
run_export a summary -o "$dir/a.link"
[ ! -L "$dir/a.link" ] || mw_fail "the export wrote through the symbolic link given as output"
cmp "$dir/a.live.json" "$dir/a.link" || mw_fail "the summary that replaced a link differs"
[ "$(cat "$dir/a.link.target")" = keep ] || mw_fail "the link's target was overwritten"

# Run b: 1024 ranks on 8 nodes, whose samples of one window take the load generator several
# ms to send, and windows that close 1 ms after their first sample: ranks are missing (partial
# windows) and samples arrive late, as many as this machine makes.
record_run b 1024 8 1 --lateness-ms 1
for f in summary jsonl csv perfetto; do
    run_export b "$f" -o "$dir/b.$f"
done
run_export b csv --per-rank -o "$dir/b.rank.csv"
cmp "$dir/b.live.json" "$dir/b.summary" ||
    mw_fail "run b: the exported summary differs from the live one"
"$python" "$(dirname "$0")/check_export.py" "$dir" b partial ||
    mw_fail "export check (run b)"

# Run c: partial windows for certain (the sender's own list), not as many as the machine makes.
mw_start_collector --exit-after-job --quiet --record "$dir/c.mpiw" \
    --summary-json "$dir/c.live.json" --stats-json "$dir/c.stats.json" --lateness-ms 200
"$gapjob" "$MW_EP" >"$dir/c.totals.json" || mw_fail "mw-gapjob failed"
mw_collector_exits 20
for f in summary jsonl csv perfetto; do
    run_export c "$f" -o "$dir/c.$f"
done
run_export c csv --per-rank -o "$dir/c.rank.csv"
cmp "$dir/c.live.json" "$dir/c.summary" ||
    mw_fail "run c: the exported summary differs from the live one"
"$python" "$(dirname "$0")/check_export.py" "$dir" c partial ||
    mw_fail "export check (run c)"
"$python" - "$dir" <<'PY' || mw_fail "run c: the partial windows"
import json, sys
d = sys.argv[1]
sent = json.load(open(f"{d}/c.totals.json"))
stats = json.load(open(f"{d}/c.stats.json"))
lines = [json.loads(l) for l in open(f"{d}/c.jsonl")]
partial = [w["index"] for w in lines if w["partial"]]
missing = [w["ranks_missing"] for w in lines if w["partial"]]
print(f"run c: partial {partial}, sure {sent['partial_sure']}, maybe {sent['partial_maybe']}")
ok = (set(sent["partial_sure"]) <= set(partial)
      and set(partial) <= set(sent["partial_sure"]) | set(sent["partial_maybe"])
      and set(missing) == {1} and stats["partial_windows"] == len(partial)
      and [w["index"] for w in lines] == sent["windows"])
sys.exit(0 if ok else 1)
PY
mw_log "ok"
