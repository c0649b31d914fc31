#!/bin/bash
# vtk.sh COLLECTOR LOADGEN EXPORT FIXTURE [LIB STEPS_PROGRAM MPIRUN]: mpiwatch-export
# --format vtk (ParaView).
#
# Every output is checked by check_vtk.py: XML that parses, counts and cell arrays that agree,
# a .pvd that lists every file with increasing times, lines that are exactly the frame's pairs.
#   fixture "full"   (vtk_fixture.c: 3 nodes, two with hardware, names with <&"--, windows
#                    100, 101, 103, 104, steps 1-3): one file per window (frames 0, 1, 3, 4),
#                    26 PU rectangles (the PUs of the ranks' bindings: the layout, the
#                    viewer's, draws the hardware the job uses), every one bound, 4 planes;
#                    --by step gives steps 1-3; --from/--to and
#                    --every pick the frames they say; a second export into the same directory
#                    replaces the files.
#   fixture "plain"  (no nodes, no steps): one plane per host of the job's list (the
#                    collector's "" host included, as the viewer draws it) and one for the
#                    rank that never said hello, no hardware; --by step exits 1.
#   fixture "empty"  (no window): exit 1 with a message and no collection.
#   a recorded load-generator run (48 ranks on 3 nodes): lines equal to the pairs of its jsonl
#                    export, the nodes' hardware with every rank on a PU of its own and every
#                    PU in a binding; it has no steps: --by step exits 1.
#   a real MPI job   (tests/programs/steps with the library, mw_step() 5 times, recorded):
#                    one file per step, with the pairs of the summary's steps (skipped with a
#                    message without mpirun).
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
MW_COLLECTOR=$1
loadgen=$2
export_=$3
fixture=$4
lib=${5:-}        # libmpiwatch.so, the steps program and mpirun: the part with real steps
steps_prog=${6:-}
mpirun=${7:-}
python=$MW_PYTHON
check=$(dirname "$0")/check_vtk.py
mw_init export_vtk
dir=$MW_T

# vtk NAME OUTDIR [ARGS...]: exports $dir/NAME.mpiw to $dir/OUTDIR, which must succeed quietly.
vtk() {
    local name=$1 out=$2
    shift 2
    "$export_" --format vtk "$dir/$name.mpiw" -o "$dir/$out" "$@" 2>"$dir/export.err" ||
        { MW_FAILURE_LOG=$dir/export.err; mw_fail "export vtk of $name $* failed"; }
    [ ! -s "$dir/export.err" ] ||
        { MW_FAILURE_LOG=$dir/export.err; mw_fail "export vtk of $name $* printed on stderr"; }
}

# fails NAME WHAT [ARGS...]: the export exits 1 with a message and leaves no collection.
fails() {
    local name=$1 what=$2 rc
    shift 2
    "$export_" --format vtk "$dir/$name.mpiw" -o "$dir/fail" "$@" 2>"$dir/fail.err"
    rc=$?
    [ "$rc" = 1 ] || mw_fail "$what: exit status $rc, want 1"
    grep -q "$what" "$dir/fail.err" ||
        { MW_FAILURE_LOG=$dir/fail.err; mw_fail "no message '$what'"; }
    ! ls "$dir"/fail/*.pvd >/dev/null 2>&1 || mw_fail "$what: a collection was left behind"
}

for m in full plain empty; do
    "$fixture" "$dir/$m.mpiw" "$m" || mw_fail "vtk_fixture $m"
done
# The job "vtk <test> & \"quotes\" -- x" gives the file prefix:
p='vtk__test_____quotes__--_x'
job='vtk <test> & "quotes" -- x'

vtk full w
"$python" "$check" "$dir/w" "$p" "$dir/full.mpiw.expect.json" --frames 0,1,3,4 --planes 4 \
    --pu-boxes 26 --pu-bound 26 --hardware yes --job "$job" || mw_fail "full, by window"
vtk full s --by step
"$python" "$check" "$dir/s" "$p" "$dir/full.mpiw.expect.json" --by step --frames 1,2,3 \
    --planes 4 --pu-boxes 26 --hardware yes || mw_fail "full, by step"
grep -q 'timestep="2"' "$dir/s/$p.pvd" || mw_fail "by step: the timestep is not the step number"
vtk full r --from 1 --to 3
"$python" "$check" "$dir/r" "$p" "$dir/full.mpiw.expect.json" --frames 1,3 || mw_fail "--from/--to"
vtk full e --every 2
"$python" "$check" "$dir/e" "$p" "$dir/full.mpiw.expect.json" --frames 0,3 || mw_fail "--every"
vtk full e --every 3 # again into the same directory: the collection is replaced, no .tmp left
for f in "$dir"/e/*.tmp; do
    [ ! -e "$f" ] || mw_fail "a temporary file was left behind: $f"
done
grep -c '<DataSet' "$dir/e/$p.pvd" | grep -qx 2 || mw_fail "the second export's collection"
fails full "in the range" --from 5

vtk plain pl
"$python" "$check" "$dir/pl" "$p" "$dir/plain.mpiw.expect.json" --frames 0,1,3,4 --planes 5 \
    --hardware no || mw_fail "plain (hosts only)"
fails plain "holds no time steps" --by step
fails empty "holds no windows"

# Usage errors exit 2.
for args in "-o -" "--by steps -o $dir/x" "--every 0 -o $dir/x"; do
    # shellcheck disable=SC2086 # the arguments are meant to split
    "$export_" --format vtk "$dir/full.mpiw" $args 2>/dev/null
    [ $? = 2 ] || mw_fail "vtk $args: exit status, want 2"
done
"$export_" --format jsonl --by step "$dir/full.mpiw" 2>/dev/null
[ $? = 2 ] || mw_fail "--by without --format vtk must exit 2"

# A real recording: 48 ranks of the load generator on 3 nodes.
mw_start_collector --exit-after-job --quiet --record "$dir/lg.mpiw" --silence-timeout-ms 30000
"$loadgen" --connect "$MW_EP" --ranks 48 --rate 10 --functions 8 --seconds 2 --nodes 3 \
    --job lgvtk --seed 11 2>"$dir/loadgen.err" ||
    { MW_FAILURE_LOG=$dir/loadgen.err; mw_fail "mpiwatch-loadgen failed"; }
mw_collector_exits 20
"$export_" --format jsonl "$dir/lg.mpiw" -o "$dir/lg.jsonl" || mw_fail "jsonl export"
vtk lg lg
# The load generator describes every node's hardware (2 packages of 2 L3 of 4 cores of 2 PUs
# for 16 ranks a node) and binds each rank to the two PUs of a core of its own: 96 PU
# rectangles, every one in a binding, 48 with a rank on it.
"$python" "$check" "$dir/lg" lgvtk "$dir/lg.jsonl" --planes 3 --hardware yes --pu-boxes 96 \
    --pu-used-if-hardware 48 --all-pus-bound-if-hardware || mw_fail "load-generator run"
"$export_" --format vtk "$dir/lg.mpiw" -o "$dir/lgs" --by step 2>"$dir/lgs.err"
rc=$?
if [ "$rc" != 1 ] || ! grep -q "holds no time steps" "$dir/lgs.err"; then
    MW_FAILURE_LOG=$dir/lgs.err
    mw_fail "--by step of a recording without steps: exit status $rc"
fi

# Real time steps: tests/programs/steps (mw_step() every iteration) on 4 ranks with the
# library, recorded; its step files must carry the pairs of the summary's steps.
if [ -z "$mpirun" ] || [ ! -x "$steps_prog" ]; then
    mw_fail "no mpirun or no steps program: real Step records cannot be checked"
else
    mw_mpi_env
    export MPIWATCH_WINDOW_MS=10
    mw_start_collector --exit-after-job --quiet --record "$dir/st.mpiw" \
        --silence-timeout-ms 30000
    "$mpirun" --oversubscribe -np 4 -x LD_PRELOAD="$lib" -x MPIWATCH_COLLECTOR="$MW_EP" \
        -x MPIWATCH_WINDOW_MS "$steps_prog" api 5 >"$dir/steps.out" 2>&1 ||
        { MW_FAILURE_LOG=$dir/steps.out; mw_fail "the steps program failed"; }
    mw_collector_exits 30
    "$export_" --format summary "$dir/st.mpiw" -o "$dir/st.summary" || mw_fail "summary export"
    vtk st st --by step
    pvd=("$dir"/st/*.pvd) # one collection, named after the job
    if [ "${#pvd[@]}" != 1 ] || [ ! -e "${pvd[0]}" ]; then
        mw_fail "real steps: no single collection"
    fi
    name=${pvd[0]##*/}
    "$python" "$check" "$dir/st" "${name%.pvd}" "$dir/st.summary" --by step --frames 0,1,2,3,4 ||
        mw_fail "real steps"
fi
mw_log "ok"
