#!/bin/bash
# topology.sh COLLECTOR LOADGEN FEED: mpiwatch-loadgen --nodes K gives every node a synthetic
# hardware description and every rank a place on it: the collector's JobInfo (history
# endpoint) has K nodes in rank order, each with 2 packages, 4 L3 caches, 2 PUs per core and
# every object after its parent, and every rank is bound to the two PUs of one core of its
# own node (contiguous balanced blocks), with node, pu, core, l3 and package consistent with
# that hardware. 10 ranks on 3 nodes: blocks of 4, 3 and 3.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
MW_COLLECTOR=$1
loadgen=$2
feed=$3
mw_init loadgen_topology
mw_start_collector --quiet --history "ipc://$MW_T/hist" --summary-json "$MW_T/summary.json"
"$loadgen" --connect "$MW_EP" --ranks 10 --rate 20 --functions 2 --seconds 0.2 --nodes 3 \
    --job lgtopo 2>"$MW_T/loadgen.err" ||
    { MW_FAILURE_LOG=$MW_T/loadgen.err; mw_fail "mpiwatch-loadgen failed"; }
"$feed" --history "ipc://$MW_T/hist" --job >"$MW_T/job.json" 2>"$MW_T/feed.err" ||
    { MW_FAILURE_LOG=$MW_T/feed.err; mw_fail "the history query failed"; }
mw_stop_collector

"$MW_PYTHON" - "$MW_T/job.json" <<'PY' || mw_fail "JobInfo topology differs (above)"
import json, sys
j = json.load(open(sys.argv[1]))["job"]
errors = []
def check(what, got, want):
    if got != want:
        errors.append(f"{what}: got {got!r}, want {want!r}")
check("nodes", [n["name"] for n in j["nodes"]], ["node000", "node001", "node002"])
pus_of = []
for n in j["nodes"]:
    objs = n["objects"]
    count = [sum(o[0] == t for o in objs) for t in (1, 2, 3, 4)]
    check(f"{n['name']} packages, L3s, cores, PUs", count, [2, 4, 4, 8])
    for i, (t, parent, logical, os_index) in enumerate(objs):
        if not -1 <= parent < i:
            errors.append(f"{n['name']} object {i}: parent {parent}")
        elif parent >= 0 and objs[parent][0] >= t:
            errors.append(f"{n['name']} object {i} of type {t} inside type {objs[parent][0]}")
    # PU os index -> (core logical, l3 logical, package logical), through the parents.
    up = {}
    for t, parent, logical, os_index in objs:
        if t == 4:
            chain, p = {}, parent
            while p >= 0:
                chain[objs[p][0]] = objs[p][2]
                p = objs[p][1]
            up[os_index] = (chain.get(3), chain.get(2), chain.get(1))
    pus_of.append(up)
check("ranks", [p["rank"] for p in j["placement"]], list(range(10)))
for p in j["placement"]:
    r = p["rank"]
    check(f"rank {r} node", p["node"], r * 3 // 10)
    check(f"rank {r} bound", p["bound"], True)
    check(f"rank {r} pus", len(p["pus"]), 2)
    up = pus_of[p["node"]] if p["node"] < len(pus_of) else {}
    for pu in p["pus"]:
        check(f"rank {r} pu {pu} core/l3/package", up.get(pu), (p["core"], p["l3"], p["package"]))
    if p["pu"] not in p["pus"]:
        errors.append(f"rank {r}: pu {p['pu']} not in {p['pus']}")
cores = {(p["node"], p["core"]) for p in j["placement"]}
check("one core per rank", len(cores), 10)
print("\n".join(errors) if errors else "loadgen topology ok")
sys.exit(1 if errors else 0)
PY
