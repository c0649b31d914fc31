#!/bin/bash
# regions_job.sh COLLECTOR LOADGEN EXPORT: code regions and call sites end to end (docs/regions.md,
# docs/callsites.md "In the collector").
#
# A 32-rank loadgen job with --regions 3 --sites 5 --peer-fn (odd ranks number their regions and
# sites backwards) goes to a recording collector with --exit-after-job. The summary JSON must
# hold every region with exactly the totals the generator says it sent, the top call sites with
# their function, file, line, MPI function, calls and time exactly; the text report must list
# the same sites and regions; the stats JSON must count nothing refused. Replaying the
# recording must give the same regions and sites, and its jsonl export (mpiwatch-export) windows
# whose regions and sites, named from the job description, add up to the same totals, with
# the spread across ranks of every function.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
MW_COLLECTOR=$1
loadgen=$2
export_tool=$3
python=$MW_PYTHON
mw_init collector_regions_job
dir=$MW_T

mw_start_collector --quiet --exit-after-job --summary-json "$dir/summary.json" \
    --stats-json "$dir/stats.json" --report "$dir/report.txt" --record "$dir/run.mpiw"
"$loadgen" --connect "$MW_EP" --ranks 32 --rate 10 --functions 6 --seconds 1 --nodes 2 \
    --regions 3 --sites 5 --peer-fn --totals-json "$dir/totals.json" 2>"$dir/loadgen.err" || {
    MW_FAILURE_LOG=$dir/loadgen.err
    mw_fail "mpiwatch-loadgen failed"
}
mw_collector_exits 30

# The same recording replayed: the same regions and sites.
"$MW_COLLECTOR" --quiet --replay "$dir/run.mpiw" --speed 0 --exit-after-job \
    --summary-json "$dir/replay.json" </dev/null >"$dir/replay.out" 2>"$dir/replay.err" ||
    mw_fail "replay failed"
"$export_tool" --format jsonl "$dir/run.mpiw" -o "$dir/windows.jsonl" 2>"$dir/export.err" ||
    mw_fail "mpiwatch-export failed"
for t in regions sites; do
    "$export_tool" --format csv --table "$t" "$dir/run.mpiw" -o "$dir/$t.csv" 2>>"$dir/export.err" ||
        mw_fail "mpiwatch-export --table $t failed"
done

"$python" - "$dir" <<'PY' || mw_fail "regions check"
import json, sys

d = sys.argv[1]
totals = json.load(open(f"{d}/totals.json"))
summary = json.load(open(f"{d}/summary.json"))
replay = json.load(open(f"{d}/replay.json"))
stats = json.load(open(f"{d}/stats.json"))
report = open(f"{d}/report.txt").read()
errors = []

got = {r["name"]: r for r in summary.get("regions", [])}
if set(got) != set(totals["regions"]):
    errors.append(f"regions {sorted(got)} != {sorted(totals['regions'])}")
for name, want in totals["regions"].items():
    r = got.get(name, {})
    for k in ("count", "incl_ns", "excl_ns", "mpi_ns"):
        if r.get(k) != want[k]:
            errors.append(f"region {name} {k}: {r.get(k)} != {want[k]}")
    if want["count"] == 0:
        errors.append(f"region {name}: nothing sent (the test would prove nothing)")

sites = summary.get("top_sites", [])
if len(sites) != len(totals["sites"]):
    errors.append(f"{len(sites)} top sites, {len(totals['sites'])} sent")
for want in totals["sites"]:
    match = [s for s in sites if s["line"] == want["line"]]
    if len(match) != 1:
        errors.append(f"site line {want['line']}: {len(match)} entries")
        continue
    s = match[0]
    for k in ("function", "file", "fn", "count", "ns", "bytes", "max_ns"):
        if s.get(k) != want[k]:
            errors.append(f"site line {want['line']} {k}: {s.get(k)} != {want[k]}")
# Sorted by time, descending.
if [s["ns"] for s in sites] != sorted((s["ns"] for s in sites), reverse=True):
    errors.append("top sites not by time")

# The text report lists them: a row per site with file:line and the MPI function.
if "Call sites: top" not in report or "Code regions by inclusive time" not in report:
    errors.append("report sections missing")
for want in totals["sites"]:
    row = [l for l in report.splitlines() if f"loadgen_app.c:{want['line']} " in l]
    if len(row) != 1 or want["fn"] not in row[0] or f" {want['count']} " not in row[0]:
        errors.append(f"report row of line {want['line']}: {row}")
for name, want in totals["regions"].items():
    row = [l for l in report.splitlines() if l.strip().startswith(name + " ")]
    if len(row) != 1 or f" {want['count']} " not in row[0]:
        errors.append(f"report row of {name}: {row}")

reg = stats.get("regions", {})
if reg.get("regions") != 3 or reg.get("sites") != 5:
    errors.append(f"stats regions: {reg}")
if any(reg.get("refused", {"?": 1}).values()):
    errors.append(f"refused: {reg.get('refused')}")

# The exported windows: regions by name and sites by line add up to the totals sent.
wr, ws, spread = {}, {}, 0
for line in open(f"{d}/windows.jsonl"):
    w = json.loads(line)
    for r in w.get("regions", []):
        t = wr.setdefault(r.get("name"), [0, 0])
        t[0] += r["count"]
        t[1] += r["incl_ns"]
        if r["ranks"] > 32:
            errors.append(f"window {w['index']}: {r}")
    for s in w.get("sites", []):
        ws[s.get("line")] = ws.get(s.get("line"), 0) + s["ns"]
    spread += sum(1 for f in w["functions"].values() if "rank_sd_ns" in f)
for name, want in totals["regions"].items():
    if wr.get(name) != [want["count"], want["incl_ns"]]:
        errors.append(f"export region {name}: {wr.get(name)}")
for want in totals["sites"]:
    if ws.get(want["line"]) != want["ns"]:
        errors.append(f"export site line {want['line']}: {ws.get(want['line'])} != {want['ns']}")
import csv
cr, cs = {}, {}
for row in csv.DictReader(open(f"{d}/regions.csv")):
    cr[row["region"]] = cr.get(row["region"], 0) + int(row["incl_ns"])
for row in csv.DictReader(open(f"{d}/sites.csv")):
    cs[int(row["line"])] = cs.get(int(row["line"]), 0) + int(row["ns"])
if cr != {n: w["incl_ns"] for n, w in totals["regions"].items()}:
    errors.append(f"csv regions: {cr}")
if cs != {w["line"]: w["ns"] for w in totals["sites"]}:
    errors.append(f"csv sites: {cs}")
if spread == 0:
    errors.append("no function carries its spread across ranks in the export")

for k in ("regions", "top_sites"):
    if replay.get(k) != summary.get(k):
        errors.append(f"replay {k} differs")

if errors:
    print("\n".join(errors))
    sys.exit(1)
PY
mw_log "ok"
