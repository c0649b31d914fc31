#!/bin/bash
# loadgen.sh COLLECTOR LOADGEN: a real collector receives an emulated 64-rank job exactly.
#
# Starts mpiwatch-collector on a private ipc:// endpoint (tests/lib/common.sh), runs
# mpiwatch-loadgen with 64 ranks on 4 nodes, 8 functions, 10 windows/s for 2 s, and checks that
# the collector exits 0 after the job (every rank said bye), accepted every message and
# rejected none, lost nothing, merged every window completely, and that its summary holds the
# ranks, the hosts node000..node003 in blocks of 16, and exactly the per-function totals the
# generator wrote to --totals-json. A second run with the same seed must produce the same
# totals (the content is deterministic).
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
MW_COLLECTOR=$1
loadgen=$2
python=$MW_PYTHON
mw_init loadgen
dir=$MW_T

mw_start_collector --exit-after-job --quiet --summary-json "$dir/summary.json" \
    --stats-json "$dir/stats.json" --silence-timeout-ms 30000
"$loadgen" --connect "$MW_EP" --ranks 64 --rate 10 --functions 8 --seconds 2 --nodes 4 \
    --job lgtest --seed 7 --totals-json "$dir/totals.json" 2>"$dir/loadgen.err" ||
    { MW_FAILURE_LOG=$dir/loadgen.err; mw_fail "mpiwatch-loadgen failed"; }
MW_FAILURE_LOG=$dir/loadgen.err
mw_collector_exits 15 # --exit-after-job, with status 0

"$python" - "$dir" <<'PY' || mw_fail "output check"
import json, sys

d = sys.argv[1]
load = lambda name: json.load(open(f"{d}/{name}"))
tot, stats, summary = load("totals.json"), load("stats.json"), load("summary.json")
errors = []
def check(what, got, want):
    if got != want:
        errors.append(f"{what}: got {got!r}, want {want!r}")

check("loadgen hellos", tot["hellos"], 64)
check("loadgen samples", tot["samples"], 64 * tot["windows"])
check("loadgen windows", tot["windows"], 20)
check("loadgen functions", len(tot["functions"]), 8)

check("accepted", stats["accepted"], tot["hellos"] + tot["samples"] + tot["byes"])
for reason, n in stats["rejected"].items():
    check(f"rejected[{reason}]", n, 0)
check("stats late", stats["late"], 0)
check("stats windows", stats["windows"], tot["windows"])
check("stats partial", stats["partial_windows"], 0)

check("ranks", summary["ranks"], 64)
check("windows", summary["windows"], tot["windows"])
check("dropped", summary["dropped"], 0)
check("late", summary["late"], 0)
check("functions", summary["functions"], tot["functions"])
check("per_rank ranks", [r["rank"] for r in summary["per_rank"]], list(range(64)))
check("per_rank hosts", [r["host"] for r in summary["per_rank"]],
      [f"node{r // 16:03d}" for r in range(64)])
per_fn = {}
for r in summary["per_rank"]:
    for f, c in r["functions"].items():
        per_fn.setdefault(f, [0, 0, 0])
        for i, k in enumerate(("count", "time_ns", "bytes")):
            per_fn[f][i] += c[k]
check("per_rank sums", {f: dict(zip(("count", "time_ns", "bytes"), v)) for f, v in per_fn.items()},
      tot["functions"])
check("pair messages", sum(p["messages"] for p in summary["pairs"]), tot["peer_messages"])
for name in ("MPI_Allreduce", "MPI_Isend", "MPI_Irecv", "MPI_Waitall"):
    if not summary["functions"].get(name, {}).get("count"):
        errors.append(f"{name} missing from the summary")

# The machine-readable lines on stderr say the same as the JSON.
lines = [l.split() for l in open(f"{d}/loadgen.err") if l.startswith("loadgen: total ")]
check("stderr totals", {l[2]: {kv.split("=")[0]: int(kv.split("=")[1]) for kv in l[3:]}
                        for l in lines}, tot["functions"])
for e in errors:
    print("mismatch:", e)
sys.exit(1 if errors else 0)
PY

# Deterministic content: the same seed gives the same totals (a second collector receives it).
mw_start_collector --exit-after-job --quiet --silence-timeout-ms 30000
"$loadgen" --connect "$MW_EP" --ranks 64 --rate 10 --functions 8 --seconds 2 --nodes 4 \
    --job lgtest2 --seed 7 --totals-json "$dir/totals2.json" 2>"$dir/loadgen2.err" ||
    mw_fail "second mpiwatch-loadgen run failed"
mw_collector_exits 15
"$python" - "$dir" <<'PY' || mw_fail "the same seed gave different totals"
import json, sys
d = sys.argv[1]
a, b = (json.load(open(f"{d}/{n}"))["functions"] for n in ("totals.json", "totals2.json"))
sys.exit(0 if a == b else 1)
PY
mw_log "ok"
