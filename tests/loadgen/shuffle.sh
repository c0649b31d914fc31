#!/bin/bash
# shuffle.sh COLLECTOR LOADGEN EXPORT: ranks of another MPI's function table (docs/function-table.md).
#
# mpiwatch-loadgen --table-shuffle SEED makes every rank's hello name a table of this build's
# functions in another order plus names this build does not have, and translates every id it
# sends (functions, occupancy, density, longest calls, peers per function, running totals,
# call sites, traces) into that table. The collector must attribute every call to the right
# name: its summary holds exactly the per-function totals the generator sent, rejects nothing,
# misses nothing, and equals, function by function, the summary of the same job (same seed)
# sent in this build's own ids. The recording of the shuffled run exports (csv) the same
# per-function counts, and its traced calls (export --format trace) carry the names of the
# generator's functions only.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
MW_COLLECTOR=$1
loadgen=$2
export_bin=$3
python=$MW_PYTHON
mw_init loadgen_shuffle
dir=$MW_T
args=(--ranks 8 --rate 20 --functions 16 --seconds 0.3 --nodes 2 --seed 11 --trace 4
    --peer-fn --sites 6)

for run in plain shuffled; do
    extra=()
    [ "$run" = shuffled ] && extra=(--table-shuffle 5)
    mw_start_collector --exit-after-job --quiet --summary-json "$dir/$run.summary.json" \
        --stats-json "$dir/$run.stats.json" --silence-timeout-ms 30000 \
        --record "$dir/$run.mpiw"
    "$loadgen" --connect "$MW_EP" "${args[@]}" "${extra[@]}" --job "lg$run" \
        --totals-json "$dir/$run.totals.json" 2>"$dir/$run.loadgen.err" ||
        { MW_FAILURE_LOG=$dir/$run.loadgen.err; mw_fail "mpiwatch-loadgen ($run) failed"; }
    MW_FAILURE_LOG=$dir/$run.loadgen.err
    mw_collector_exits 15
done
"$export_bin" --format csv "$dir/shuffled.mpiw" -o "$dir/shuffled.csv" 2>"$dir/export.err" ||
    { MW_FAILURE_LOG=$dir/export.err; mw_fail "export --format csv failed"; }
"$export_bin" --format trace "$dir/shuffled.mpiw" -o "$dir/shuffled.trace" \
    2>"$dir/export.err" ||
    { MW_FAILURE_LOG=$dir/export.err; mw_fail "export --format trace failed"; }

"$python" - "$dir" <<'PY' || mw_fail "output check"
import csv, json, sys

d = sys.argv[1]
load = lambda name: json.load(open(f"{d}/{name}"))
errors = []
def check(what, got, want):
    if got != want:
        errors.append(f"{what}: got {got!r}, want {want!r}")

for run in ("plain", "shuffled"):
    tot, stats, summary = (load(f"{run}.{n}.json") for n in ("totals", "stats", "summary"))
    check(f"{run}: accepted", stats["accepted"], tot["hellos"] + tot["samples"] + tot["byes"])
    for reason, n in stats["rejected"].items():
        check(f"{run}: rejected[{reason}]", n, 0)
    check(f"{run}: functions", summary["functions"], tot["functions"])
    check(f"{run}: functions sent", len(tot["functions"]), 16)
    check(f"{run}: missed calls", summary["missed"]["calls"], 0)
a, b = load("plain.summary.json"), load("shuffled.summary.json")
for key in ("functions", "pairs", "top_sites"):
    check(f"shuffled {key} == plain {key}", b.get(key), a.get(key))
check("per-rank functions", [r["functions"] for r in b["per_rank"]],
      [r["functions"] for r in a["per_rank"]])

# The recording of the shuffled run, exported: the same calls per function name.
counts = {}
with open(f"{d}/shuffled.csv") as f:
    rows = list(csv.DictReader(f))
if not rows:
    errors.append("the csv export is empty")
for row in rows:
    counts[row["function"]] = counts.get(row["function"], 0) + int(row["calls"])
check("csv counts", counts, {k: v["count"] for k, v in load("shuffled.totals.json")["functions"].items()})
names = set()
for line in open(f"{d}/shuffled.trace"):
    rec = json.loads(line)
    if rec.get("type") == "record":
        names.add(rec["fn"])
if not names:
    errors.append("no traced record in the export")
extra = names - set(load("shuffled.totals.json")["functions"])
check("traced functions not sent", extra, set())
for e in errors:
    print("mismatch:", e)
sys.exit(1 if errors else 0)
PY
mw_log "ok: the shuffled table's calls are attributed by name"
