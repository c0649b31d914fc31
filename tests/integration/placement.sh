#!/bin/bash
# placement.sh NP MPIRUN_ARGS...: the placement libmpiwatch reports for every rank of a real
# job (the collector's summary) matches what the rank itself reads with hwloc_get_cpubind(),
# the call behind `hwloc-bind --get` (tests/programs/placement prints it), under one
# mpirun --map-by / --bind-to variant. Checked per rank: bound or not; the PUs of a bound rank
# are exactly its cpuset, an unbound rank lists the one PU it ran on, inside its cpuset; the
# core, L3 and package are those hwloc-calc gives for that PU; the node is the host, and the
# job has that one node, with every rank and the machine's packages, L3s, cores and PUs.
# A variant this Open MPI refuses on this machine (binding more ranks than cores) is skipped
# (docs/topology.md lists the ones that work on 2 cores).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
MW_NP=$1
shift
mw_setup placement
command -v hwloc-calc >/dev/null || mw_skip "hwloc-calc (hwloc-nox) is not installed"
mw_start_collector --exit-after-job --summary-json "$MW_T/summary.json"
mw_mpirun "$@" "$MW_PROGRAMS/placement" >"$MW_T/app.out" 2>"$MW_T/app.err"
rc=$?
if [ "$rc" != 0 ]; then
    if grep -qi "binding more processes than cpus\|not enough slots" "$MW_T/app.err"; then
        mw_skip "this mpirun refuses $* with $MW_NP ranks here"
    fi
    cat "$MW_T/app.err" >&2
    mw_fail "the job exited with status $rc: mpirun $*"
fi
grep -q "^placement: $MW_NP ranks, ok" "$MW_T/app.out" || mw_fail "the program did not finish"
mw_wait_collector 30

# What hwloc says about this machine: counts, and per PU its logical core, L3 and package.
{
    for t in package l3cache core pu; do echo "count $t $(hwloc-calc -N "$t" all)"; done
    for pu in $(hwloc-calc --physical-output --intersect pu all | tr , ' '); do
        c=$(hwloc-calc --physical-input --intersect core "pu:$pu")
        l=$(hwloc-calc --physical-input --intersect l3cache "pu:$pu" 2>/dev/null)
        p=$(hwloc-calc --physical-input --intersect package "pu:$pu")
        echo "pu $pu ${c:--1} ${l:--1} ${p:--1}"
    done
} >"$MW_T/hw.txt" || mw_fail "hwloc-calc failed"

"$MW_PYTHON" - "$MW_T/summary.json" "$MW_T/app.out" "$MW_T/hw.txt" "$MW_NP" "$(hostname)" \
    <<'PY' || mw_fail "placement differs from hwloc (above); mpirun $*"
import json, re, sys

summary, app, hw, np, host = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
s = json.load(open(summary))
counts, pu_info = {}, {}
for line in open(hw):
    f = line.split()
    if f[0] == "count":
        counts[f[1]] = int(f[2])
    else:
        pu_info[int(f[1])] = tuple(int(x) if x.lstrip("-").isdigit() else -1 for x in f[2:5])

def parse_list(text):
    out = set()
    for part in text.split(","):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out

seen = {}
for line in open(app):
    m = re.match(r"placement: rank (\d+) of \d+ cpuset (\S+) bound (-?\d) pu", line)
    if m:
        seen[int(m.group(1))] = (parse_list(m.group(2)), m.group(3) == "1")
errors = []
def check(what, got, want):
    if got != want:
        errors.append(f"{what}: got {got!r}, want {want!r}")

check("ranks that printed", sorted(seen), list(range(np)))
ranks = {r["rank"]: r for r in s["per_rank"]}
check("ranks in the summary", sorted(ranks), list(range(np)))
for rank, (cpuset, bound) in sorted(seen.items()):
    r = ranks.get(rank)
    if r is None:
        continue
    print(f"rank {rank}: hwloc cpuset {sorted(cpuset)} bound {bound}; mpiwatch pus {r['pus']} "
          f"bound {r['bound']} pu {r['pu']} core {r['core']} l3 {r['l3']} package {r['package']}")
    check(f"rank {rank} bound", r["bound"], bound)
    if bound:
        check(f"rank {rank} pus", sorted(r["pus"]), sorted(cpuset))
    else:
        check(f"rank {rank} pus (unbound: the PU at init)", r["pus"], [r["pu"]])
    if r["pu"] not in cpuset:
        errors.append(f"rank {rank}: pu {r['pu']} is outside its cpuset {sorted(cpuset)}")
    want = pu_info.get(r["pu"], (-2, -2, -2))
    check(f"rank {rank} core/l3/package of pu {r['pu']}", (r["core"], r["l3"], r["package"]), want)
    check(f"rank {rank} node", r["node"], host)
check("nodes", [n["name"] for n in s["nodes"]], [host])
if s["nodes"]:
    n = s["nodes"][0]
    check("node ranks", n["ranks"], list(range(np)))
    check("node hardware", (n["packages"], n["l3"], n["cores"], n["pus"]),
          (counts["package"], counts["l3cache"], counts["core"], counts["pu"]))
print("\n".join(errors) if errors else "placement matches hwloc")
sys.exit(1 if errors else 0)
PY
