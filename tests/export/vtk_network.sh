#!/bin/bash
# vtk_network.sh EXPORT TOPO-SYNTH COLLECTOR LIB STEPS_PROGRAM MPIRUN: mpiwatch-export
# --format vtk --network FILE, read by ParaView (pvpython) and by VTK (the system python3's vtk module).
#
#   synthetic    topo-synth: 32 ranks on 8 nodes (node000..node007, 4 ranks each), 3 windows of
#                known pairs; a Slurm topology.conf puts node[000-003] under s1, node[004-007]
#                under s2, both under top. vtk_network.py checks every frame with ParaView's
#                reader (OpenDataFile on the .pvd) and with vtkXMLPolyDataReader: each node's
#                switch, each rank point's, the switches and wires, and each link's class
#                computed from its ranks (intra-node, intra-switch, inter-switch), the links
#                being exactly the window's pairs (jsonl export), the field counts agreeing.
#                The same with node006 left out of the file: it is under the unknown switch.
#                check_vtk.py checks the files as every VTK export.
#   a real job   tests/programs/steps on 8 ranks with MPIWATCH_NODES=8 (emulated nodes
#                HOST-n0..HOST-n7, one rank each) and the file HOST-n[0-3] under s1,
#                HOST-n[4-7] under s2: the same checks, and links of both switch classes.
#   refusals     a node under two switches, an unknown key, an expression of 10^9 names and a
#                missing file: exit 2 with the reason and its line, no output.
# pvpython is Debian's paraview package (tools/setup.sh installs it): without it the test fails.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
export_=$1
synth=$2
MW_COLLECTOR=$3
lib=$4
steps_prog=$5
mpirun=$6
mw_init export_vtk_network
dir=$MW_T
check=$(dirname "$0")/vtk_network.py
pyvtk=/usr/bin/python3 # the vtk module (python3-paraview or python3-vtk9) is the system one's
command -v pvpython >/dev/null || mw_fail "pvpython (Debian's paraview) is not installed"

# both DIR PREFIX PAIRS EXPECT: vtk_network.py with ParaView and with VTK.
both() {
    local how
    for how in paraview vtk; do
        if [ "$how" = paraview ]; then
            # ParaView's offscreen start-up prints on stderr; the verdict is the status.
            timeout 300 pvpython "$check" paraview "$@" >"$dir/pv.out" 2>&1
        else
            "$pyvtk" "$check" vtk "$@" >"$dir/pv.out" 2>&1
        fi || { MW_FAILURE_LOG=$dir/pv.out; mw_fail "$how: the network of $1 is wrong"; }
        grep '^vtk_network:' "$dir/pv.out"
    done
}

# The synthetic job.
"$synth" --ranks 32 --nodes 8 --partners 4 --windows 3 "$dir/t.mpiw" >"$dir/t.json" ||
    mw_fail "topo-synth failed"
"$export_" --format jsonl "$dir/t.mpiw" -o "$dir/t.jsonl" || mw_fail "jsonl export"
cat >"$dir/net.conf" <<'EOF'
# two leaf switches of four nodes under one top switch
SwitchName=s1 Nodes=node[000-003] LinkSpeed=100
SwitchName=s2 \
    Nodes=node[004-007]
switchname=top switches=s[1-2]
EOF
"$export_" --format vtk "$dir/t.mpiw" -o "$dir/v" --network "$dir/net.conf" 2>"$dir/e.err" ||
    { MW_FAILURE_LOG=$dir/e.err; mw_fail "export with --network failed"; }
[ ! -s "$dir/e.err" ] || { MW_FAILURE_LOG=$dir/e.err; mw_fail "the export printed on stderr"; }
"$MW_PYTHON" - "$dir" <<'PY' || mw_fail "expectation"
import json, sys
d = sys.argv[1]
ns = {f"node{i:03d}": "s1" if i < 4 else "s2" for i in range(8)}
e = {"node_switch": ns, "rank_node": [f"node{r // 4:03d}" for r in range(32)],
     "switches": ["s1", "s2", "top"], "parents": {"s1": "top", "s2": "top"}}
json.dump(e, open(f"{d}/exp.json", "w"))
del ns["node006"]
e["switches"].append("unknown switch")
json.dump(e, open(f"{d}/exp6.json", "w"))
PY
both "$dir/v" topo-synth "$dir/t.jsonl" "$dir/exp.json"
"$pyvtk" "$(dirname "$0")/check_vtk.py" "$dir/v" topo-synth "$dir/t.jsonl" --planes 8 \
    --hardware yes || mw_fail "check_vtk.py on the network export"
# Every class occurs (32 ranks, 4 partners each, on 8 nodes under 2 switches).
"$MW_PYTHON" -c "import json,sys; c=json.load(open(sys.argv[1]))['classes']; sys.exit(min(c) == 0)" \
    "$dir/v/network-check-vtk.json" || mw_fail "a link class never occurs"

sed 's/Nodes=node\[004-007\]/Nodes=node[004-005],node007/' "$dir/net.conf" >"$dir/net6.conf"
"$export_" --format vtk "$dir/t.mpiw" -o "$dir/v6" --network "$dir/net6.conf" ||
    mw_fail "export with node006 unknown"
both "$dir/v6" topo-synth "$dir/t.jsonl" "$dir/exp6.json"

# A real job on emulated nodes.
mw_mpi_env
host=$(hostname)
export MPIWATCH_WINDOW_MS=20 MPIWATCH_NODES=8
mw_start_collector --exit-after-job --quiet --record "$dir/r.mpiw" --silence-timeout-ms 30000
"$mpirun" --oversubscribe -np 8 -x LD_PRELOAD="$lib" -x MPIWATCH_COLLECTOR="$MW_EP" \
    -x MPIWATCH_WINDOW_MS -x MPIWATCH_NODES "$steps_prog" api 5 >"$dir/steps.out" 2>&1 ||
    { MW_FAILURE_LOG=$dir/steps.out; mw_fail "the steps program failed"; }
mw_collector_exits 60
unset MPIWATCH_NODES
printf 'SwitchName=s1 Nodes=%s-n[0-3]\nSwitchName=s2 Nodes=%s-n[4-7]\n' "$host" "$host" \
    >"$dir/real.conf"
"$export_" --format jsonl "$dir/r.mpiw" -o "$dir/r.jsonl" || mw_fail "jsonl export (real)"
"$export_" --format vtk "$dir/r.mpiw" -o "$dir/rv" --network "$dir/real.conf" ||
    mw_fail "export of the real job"
"$MW_PYTHON" - "$dir" "$host" <<'PY' || mw_fail "expectation (real)"
import json, sys
d, host = sys.argv[1:3]
ns = {f"{host}-n{i}": "s1" if i < 4 else "s2" for i in range(8)}
json.dump({"node_switch": ns, "rank_node": [f"{host}-n{r}" for r in range(8)],
           "switches": ["s1", "s2"], "parents": {}}, open(f"{d}/expr.json", "w"))
PY
pvd=("$dir"/rv/*.pvd)
if [ "${#pvd[@]}" != 1 ] || [ ! -e "${pvd[0]}" ]; then
    mw_fail "real job: no single collection"
fi
name=${pvd[0]##*/}
both "$dir/rv" "${name%.pvd}" "$dir/r.jsonl" "$dir/expr.json"
"$MW_PYTHON" -c "import json,sys; c=json.load(open(sys.argv[1]))['classes']; \
sys.exit(not (c[0] == 0 and c[1] > 0 and c[2] > 0))" "$dir/rv/network-check-vtk.json" ||
    mw_fail "real job: want intra- and inter-switch links and none within a node"

# Refusals: exit 2, the reason with its line, no collection.
refused() {
    local what=$1 rc
    shift
    "$export_" --format vtk "$dir/t.mpiw" -o "$dir/bad" --network "$@" 2>"$dir/bad.err"
    rc=$?
    [ "$rc" = 2 ] || mw_fail "$what: exit status $rc, want 2"
    grep -qF "$what" "$dir/bad.err" || { MW_FAILURE_LOG=$dir/bad.err; mw_fail "no '$what'"; }
    [ ! -e "$dir/bad" ] || mw_fail "$what: output written"
}
printf 'SwitchName=s1 Nodes=node[000-003]\nSwitchName=s2 Nodes=node[003-007]\n' >"$dir/b1.conf"
refused "line 2: node 'node003' is already under switch 's1' (line 1)" "$dir/b1.conf"
printf '# x\nSwitchName=s1 Nodes=a Speed=1\n' >"$dir/b2.conf"
refused "line 2: unknown key 'Speed'" "$dir/b2.conf"
printf 'SwitchName=s1 Nodes=n[0-999999999]\n' >"$dir/b3.conf"
refused "line 1: Nodes: the expression stands for more than 262144 names" "$dir/b3.conf"
refused "$dir/none.conf: No such file or directory" "$dir/none.conf"
mw_log "ok"
