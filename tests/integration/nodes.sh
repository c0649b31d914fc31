#!/bin/bash
# nodes.sh: MPIWATCH_NODES=2 makes a real 4-rank job on this one machine look like two nodes:
# ranks 0-1 on HOST-n0 and 2-3 on HOST-n1, each node with the machine's hardware (the first
# rank of each block describes it), in the summary and in the JobInfo of the live feed; then
# MPIWATCH_NODES=3 splits 4 ranks as [0, 1], [2], [3] (balanced contiguous blocks).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
MW_NP=4
mw_setup nodes
feed=$(dirname "$MW_COLLECTOR")/../tools/mpiwatch-feed
[ -x "$feed" ] || mw_fail "mpiwatch-feed not built: $feed"
command -v hwloc-calc >/dev/null || mw_skip "hwloc-calc (hwloc-nox) is not installed"
host=$(hostname)
pus=$(hwloc-calc -N pu all)

run() { # run NODES: the job, its summary in $MW_T/summary.json, the feed's jobs in feed.out
    export MPIWATCH_NODES=$1
    mw_start_collector --exit-after-job --summary-json "$MW_T/summary.json" \
        --publish "ipc://$MW_T/pub"
    "$feed" --subscribe "ipc://$MW_T/pub" --topic job --topic event --until-job-end --timeout-ms 30000 \
        >"$MW_T/feed.out" 2>"$MW_T/feed.err" &
    local fpid=$!
    sleep 0.3 # the subscription reaches the collector before the job starts
    mw_mpirun -x MPIWATCH_NODES "$MW_PROGRAMS/placement" >"$MW_T/app.out" 2>"$MW_T/app.err" ||
        { cat "$MW_T/app.err" >&2; mw_fail "the job failed with MPIWATCH_NODES=$1"; }
    mw_wait_collector 30
    wait "$fpid" || { cat "$MW_T/feed.err" >&2; mw_fail "mpiwatch-feed failed"; }
}

check() { # check NODES EXPECTED_BLOCKS_JSON
    "$MW_PYTHON" - "$MW_T/summary.json" "$MW_T/feed.out" "$host" "$pus" "$2" <<'PY' ||
import json, sys
s = json.load(open(sys.argv[1]))
jobs = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
host, pus, blocks = sys.argv[3], int(sys.argv[4]), json.loads(sys.argv[5])
names = [f"{host}-n{i}" for i in range(len(blocks))]
errors = []
def check(what, got, want):
    if got != want:
        errors.append(f"{what}: got {got!r}, want {want!r}")
# Nodes come in the order of their first hello, which is any order.
check("summary nodes", sorted(n["name"] for n in s["nodes"]), names)
check("summary node ranks", {n["name"]: n["ranks"] for n in s["nodes"]}, dict(zip(names, blocks)))
check("summary node PUs", [n["pus"] for n in s["nodes"]], [pus] * len(blocks))
where = {r: names[i] for i, b in enumerate(blocks) for r in b}
check("per_rank node", {r["rank"]: r["node"] for r in s["per_rank"]}, where)
check("per_rank host", {r["host"] for r in s["per_rank"]}, {host})
job = [j for j in jobs if j.get("topic") == "job"]
if not job:
    errors.append(f"no job on the feed: {jobs!r:.300}")
else:
    j = job[-1]["job"]
    check("JobInfo nodes", sorted(n["name"] for n in j["nodes"]), names)
    check("JobInfo PUs per node", [sum(o[0] == 4 for o in n["objects"]) for n in j["nodes"]],
          [pus] * len(blocks))
    for n in j["nodes"]:
        for i, o in enumerate(n["objects"]):
            if not -1 <= o[1] < i:
                errors.append(f"JobInfo node {n['name']} object {i}: parent {o[1]}")
    check("JobInfo rank nodes", {p["rank"]: j["nodes"][p["node"]]["name"] for p in j["placement"]},
          where)
print("\n".join(errors) if errors else f"{len(blocks)} emulated nodes as expected")
sys.exit(1 if errors else 0)
PY
        mw_fail "MPIWATCH_NODES=$1: nodes differ (above)"
}

run 2
check 2 '[[0, 1], [2, 3]]'
run 3
check 3 '[[0, 1], [2], [3]]'
