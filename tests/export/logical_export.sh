#!/bin/bash
# logical_export.sh PATTERN NP EXPORT COLLECTOR LIB PROGRAM MPIRUN [PROGRAM ARGS...]: logical
# steps and lateness (docs/logical.md) of a real MPI job with a known pattern and a known delay
# (tests/programs/logical_patterns.c), recorded with tracing on:
#   - --format trace: every communication event's step, lateness, differential lateness, class
#     and partition, checked by check_logical.py against its own brute-force extraction and the
#     pattern's hand-computed answer (where the delay starts, which steps the tree levels take);
#   - --format logical (CSV): the same events, row for row;
#   - --format otf2: the same values as attributes and metrics of the events (otf2-print, the
#     OTF2 Python bindings);
#   - --format lateness: the collector's online summaries per step equal those computed from the
#     recording's events (the same steps online and from the recording);
#   - the checker fails on a export whose step, lateness or class was changed.
pattern=$1
np=$2
export_bin=$3
MW_COLLECTOR=$4
lib=$5
prog=$6
mpirun=$7
shift 7
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/common.sh
. "$here/../lib/common.sh"
mw_init "logical_$pattern"
dir=$MW_T
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
[ -x "$prog" ] || mw_fail "no program $prog"
[ -n "$mpirun" ] || mw_fail "no mpirun"

mw_mpi_env
export MPIWATCH_TRACE=on
# The default windows (100 ms), shorter than the program's delay (tests/export/CMakeLists.txt):
# the delayed rank's message comes windows after its peers' events, which the online analysis
# must still hold (a rank waiting inside a communication call holds the partition of its last
# event, docs/logical.md "The stream"). MW_LOGICAL_WINDOW_MS overrides it.
export MPIWATCH_WINDOW_MS=${MW_LOGICAL_WINDOW_MS:-100}
# One run: the job recorded, exported in every format, checked. Returns check_logical.py's
# status (3: the pattern's delay did not show as the program made it, e.g. a rank of this loaded
# machine lost its core for longer than the delay or the window cap), or 3 when a window was not
# traced for every rank.
run_job() {
    rm -rf "$dir/job.mpiw" "$dir/arch"
    mw_start_collector --exit-after-job --quiet --record "$dir/job.mpiw" \
        --silence-timeout-ms 30000
    "$mpirun" --oversubscribe -np "$np" -x LD_PRELOAD="$lib" -x MPIWATCH_COLLECTOR="$MW_EP" \
        -x MPIWATCH_TRACE -x MPIWATCH_WINDOW_MS "$prog" "$pattern" "$@" >"$dir/prog.out" 2>&1 ||
        { MW_FAILURE_LOG=$dir/prog.out; mw_fail "logical_patterns $pattern failed"; }
    mw_collector_exits 60
    params=$(grep -m1 '^logical_patterns ' "$dir/prog.out") ||
        { MW_FAILURE_LOG=$dir/prog.out; mw_fail "the program printed no parameters"; }

    "$export_bin" --format trace "$dir/job.mpiw" -o "$dir/job.jsonl" 2>"$dir/trace.err" ||
        mw_fail "--format trace exited $?: $(cat "$dir/trace.err")"
    "$export_bin" --format logical "$dir/job.mpiw" -o "$dir/job.csv" 2>"$dir/logical.err" ||
        mw_fail "--format logical exited $?: $(cat "$dir/logical.err")"
    "$export_bin" --format otf2 "$dir/job.mpiw" -o "$dir/arch" 2>"$dir/otf2.err" ||
        mw_fail "--format otf2 exited $?: $(cat "$dir/otf2.err")"
    "$export_bin" --format lateness "$dir/job.mpiw" -o "$dir/online.jsonl" \
        2>"$dir/lateness.err" || mw_fail "--format lateness exited $?: $(cat "$dir/lateness.err")"
    # A window traced for only some ranks (a call that raced the drain on this loaded machine
    # demotes the rank's window to summary only, docs/trace.md) leaves messages without their
    # other end: the run says nothing about the analysis, run it again (status 3).
    if grep -q warning "$dir/trace.err"; then
        mw_log "warnings (a window not traced?): $(grep warning "$dir/trace.err")"
        return 3
    fi
    otf2-print --silent -Werror "$dir/arch/traces.otf2" >"$dir/print.silent" 2>&1 ||
        mw_fail "otf2-print --silent -Werror: $(cat "$dir/print.silent")"
    "$MW_PYTHON" "$here/check_logical.py" "$dir/job.jsonl" --params "$params" \
        --csv "$dir/job.csv" --otf2 "$dir/arch/traces.otf2" --online "$dir/online.jsonl"
}

for attempt in 1 2 3; do
    run_job "$@"
    rc=$?
    [ "$rc" = 3 ] || break
    mw_log "attempt $attempt: the delay was hidden by the machine's own (above); once more"
done
[ "$rc" = 0 ] || mw_fail "check_logical failed (status $rc)"

# Without the leap merge (--no-leap): the export says so and the reference, told by it, agrees
# event by event (partitions, steps and lateness change where the leap merge joined layers).
"$export_bin" --format trace --no-leap "$dir/job.mpiw" -o "$dir/noleap.jsonl" \
    2>"$dir/noleap.err" || mw_fail "--format trace --no-leap exited $?: $(cat "$dir/noleap.err")"
grep -q '"type":"logical".*"leap":false' "$dir/noleap.jsonl" ||
    mw_fail "--no-leap: the export does not say leap false"
"$MW_PYTHON" "$here/check_logical.py" "$dir/noleap.jsonl" ||
    mw_fail "check_logical failed on the --no-leap export"

# The checker must fail on a changed step, lateness and class (the reference is not a copy).
"$MW_PYTHON" - "$dir/job.jsonl" "$dir" <<'EOF' || fail "could not make the altered exports"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
ev = [i for i, x in enumerate(lines) if x.get("type") == "record" and "step" in x]
late = max(ev, key=lambda i: lines[i]["late_ns"])
for name, field, i, value in (("step", "step", ev[len(ev) // 2], None),
                              ("late", "late_ns", late, 0),
                              ("class", "class", late, "none")):
    out = [dict(x) for x in lines]
    out[i][field] = out[i][field] + 1 if value is None else value
    with open("%s/bad_%s.jsonl" % (sys.argv[2], name), "w", encoding="utf-8") as f:
        for x in out:
            f.write(json.dumps(x) + "\n")
EOF
for bad in step late class; do
    if "$MW_PYTHON" "$here/check_logical.py" "$dir/bad_$bad.jsonl" --params "$params" \
        >"$dir/bad_$bad.out" 2>&1; then
        fail "check_logical accepted an export with a wrong $bad"
    fi
done

[ "$fails" -eq 0 ] || mw_fail "$fails failure(s)"
mw_log "ok"
