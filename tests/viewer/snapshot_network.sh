#!/bin/bash
# snapshot_network.sh VIEWER TOPO-SYNTH PNGPROBE EXPORT: the topology view with --network FILE.
#
# A topo-synth recording (32 ranks on 8 nodes node000..node007, 4 ranks each, known pairs) and a
# Slurm topology.conf with node[000-003] under s1, node[004-007] under s2, both under top:
#   - the meta's network says each node's switch and the switches with their parents and
#     levels; the window's links counted intra-node, intra-switch and inter-switch exactly as
#     computed here from the window's pairs (mpiwatch-export's jsonl) and the file;
#   - the groups: every node is closer to a node of its own switch than any node of the other
#     switch is (the gap between groups is larger than between nodes); --node-gap 8 spreads the
#     nodes of a group further than the default 4;
#   - each switch is drawn: pixels of its colour around where its top projects (the meta's
#     screen point), nearly top-down and from the default camera;
#   - node006 left out of the file: it is under the "unknown switch", its links to other nodes
#     inter-switch;
#   - without --network nothing changes (no network in the meta, between nodes = intra-switch);
#   - a bad file (a node under two switches) stops the viewer with the reason and its line.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
mw_init viewer_snapshot_network
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
export_=$4

"$SV_SYNTH" --ranks 32 --nodes 8 --partners 4 --windows 3 "$MW_T/t.mpiw" >"$MW_T/t.json" \
    2>"$MW_T/t.err" || mw_fail "topo-synth failed"
cat >"$MW_T/net.conf" <<'EOF'
# two leaf switches of four nodes under one top switch
SwitchName=s1 Nodes=node[000-003]
SwitchName=s2 Nodes=node[004-007] \
   LinkSpeed=100
SwitchName=top Switches=s[1-2]
EOF
"$export_" --format jsonl "$MW_T/t.mpiw" -o "$MW_T/t.jsonl" || mw_fail "jsonl export"
sed 's/Nodes=node\[004-007\]/Nodes=node[004-005],node007/' "$MW_T/net.conf" >"$MW_T/net6.conf"

sv_snap net "$MW_T/t.mpiw" --view topology --window 1 --bundles off --network "$MW_T/net.conf"
sv_snap top "$MW_T/t.mpiw" --view topology --window 1 --bundles off --network "$MW_T/net.conf" \
    --camera 0,89 --no-labels
sv_snap gap8 "$MW_T/t.mpiw" --view topology --window 1 --bundles off \
    --network "$MW_T/net.conf" --node-gap 8
sv_snap unk "$MW_T/t.mpiw" --view topology --window 1 --bundles off --network "$MW_T/net6.conf"
sv_snap plain "$MW_T/t.mpiw" --view topology --window 1 --bundles off

"$MW_PYTHON" - "$MW_T" "$SV_PROBE" <<'PY' || mw_fail "the network layer is wrong (see above)"
import json, subprocess, sys

d, probe = sys.argv[1:3]
synth = json.load(open(f"{d}/t.json"))
rank_node = [f"node{r // 4:03d}" for r in range(32)]
full = {f"node{i:03d}": "s1" if i < 4 else "s2" for i in range(8)}
part = {k: v for k, v in full.items() if k != "node006"}


def fail(msg):
    sys.exit(f"snapshot_network: {msg}")


def meta(name):
    return json.load(open(f"{d}/{name}.meta.json"))["topology"]


def classes(pairs, node_sw):
    c = [0, 0, 0]
    for s, t in pairs:
        a, b = rank_node[s], rank_node[t]
        c[0 if a == b else 1 if node_sw.get(a) and node_sw.get(a) == node_sw.get(b) else 2] += 1
    return c


# The window's pairs, from the recording's jsonl export (not from the viewer).
index = meta("net")["window_index"]
pairs = None
for line in open(f"{d}/t.jsonl"):
    w = json.loads(line)
    if int(w["index"]) == index:
        pairs = sorted({(p["src"], p["dst"]) for p in w.get("pairs", [])})
if not pairs or len(pairs) != synth["windows"][1]["pairs"]:
    fail(f"window {index}: {len(pairs or [])} pairs in the export")


def check(name, node_sw, switches):
    t = meta(name)
    n = t.get("network")
    if not n:
        fail(f"{name}: no network in the meta")
    got = {k: v for k, v in n["node_switch"].items()}
    want = {k: node_sw.get(k, "unknown switch") for k in full}
    if got != want:
        fail(f"{name}: node -> switch {got}, want {want}")
    sw = {s["name"]: s for s in n["switches"]}
    if sorted(sw) != sorted(switches):
        fail(f"{name}: switches {sorted(sw)}, want {sorted(switches)}")
    for s in ("s1", "s2"):
        if sw[s]["parent"] != "top" or sw[s]["level"] != 0:
            fail(f"{name}: {s} {sw[s]}")
    if sw["top"]["parent"] != "" or sw["top"]["level"] != 1:
        fail(f"{name}: top {sw['top']}")
    ln = t["lines"]
    c = classes(pairs, node_sw)
    got = [ln["intra_node"], ln["intra_switch"], ln["inter_switch"]]
    if got != c or ln["pairs"] != len(pairs):
        fail(f"{name}: link classes {got} of {ln['pairs']}, want {c} of {len(pairs)}")
    if min(c) == 0:
        fail(f"{name}: a class never occurs: {c}")
    return t, n


def spacing(n, node_sw):
    """The largest distance from a node to its nearest node of the same switch, and the
    smallest between nodes of different switches (gaps between the planes' rectangles)."""
    names = list(n["node_switch"])
    rect = dict(zip(names, n["planes_x"]))

    def gap(a, b):
        ra, rb = rect[a], rect[b]
        dx = max(rb[0] - ra[1], ra[0] - rb[1], 0)
        dz = max(rb[2] - ra[3], ra[2] - rb[3], 0)
        return max(dx, dz)
    same = max(min(gap(a, b) for b in names if b != a and node_sw.get(b) == node_sw.get(a))
               for a in names if sum(1 for b in names if node_sw.get(b) == node_sw.get(a)) > 1)
    other = min(gap(a, b) for a in names for b in names
                if node_sw.get(a, "?") != node_sw.get(b, "?"))
    return same, other


t, n = check("net", full, ["s1", "s2", "top"])
same, other = spacing(n, full)
if not other > same + 1:
    fail(f"the gap between switches ({other}) is not larger than between nodes ({same})")
if n["node_gap"] != 4 or n["group_gap"] <= n["node_gap"]:
    fail(f"gaps {n['node_gap']}, {n['group_gap']}")
_, n8 = check("gap8", full, ["s1", "s2", "top"])
same8, _ = spacing(n8, full)
if n8["node_gap"] != 8 or not same8 > same + 3:
    fail(f"--node-gap 8: nodes {same8} apart, {same} with the default gap")
_, nu = check("unk", part, ["s1", "s2", "top", "unknown switch"])
unk = [s for s in nu["switches"] if s["name"] == "unknown switch"][0]
if unk["nodes"] != 1 or not unk["unknown"] or unk["parent"] != "":
    fail(f"the unknown switch: {unk}")

# Each switch drawn: pixels of its colour near where its top face projects.
for name in ("net", "top"):
    for s in meta(name)["network"]["switches"]:
        if "screen" not in s:
            fail(f"{name}: switch {s['name']} not in front of the camera")
        x, y = (int(v) for v in s["screen"])
        r, g, b = s["color"]
        out = subprocess.run([probe, f"{d}/{name}.png", "find", str(r), str(g), str(b), "6",
                              str(max(x - 25, 0)), str(max(y - 25, 0)), str(x + 25),
                              str(y + 25)], capture_output=True, text=True).stdout.split()
        if not out or int(out[0]) < 6:
            fail(f"{name}: switch {s['name']} ({r} {g} {b}) not drawn near ({x}, {y}): {out}")
p = meta("plain")
if "network" in p or p["lines"]["intra_switch"] != p["lines"]["inter"] or \
        p["lines"]["inter_switch"] != 0:
    fail(f"without --network: {p['lines']}")
print(f"snapshot_network: classes {classes(pairs, full)} with the file, "
      f"{classes(pairs, part)} without node006; nodes {same} apart, groups {other}")
PY

# A bad file stops the viewer before it draws.
printf 'SwitchName=s1 Nodes=node[000-003]\nSwitchName=s2 Nodes=node[003-007]\n' >"$MW_T/bad.conf"
if "$SV_VIEWER" --replay "$MW_T/t.mpiw" --view topology --network "$MW_T/bad.conf" \
    --snapshot "$MW_T/bad.png" >"$MW_T/bad.out" 2>&1; then
    mw_fail "a node under two switches was accepted"
fi
grep -qF "line 2: node 'node003' is already under switch 's1' (line 1)" "$MW_T/bad.out" ||
    { MW_FAILURE_LOG=$MW_T/bad.out; mw_fail "no reason for the bad network file"; }
[ ! -e "$MW_T/bad.png" ] || mw_fail "a snapshot was written with a bad network file"
mw_log "ok"
