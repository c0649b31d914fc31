"""check_export.py DIR NAME MODE: checks the exports of DIR/NAME.mpiw against the live files.

Called by export.sh with DIR/NAME.{live.json,stats.json} (what the live collector wrote) and
DIR/NAME.{jsonl,csv,rank.csv,perfetto} (what mpiwatch-export wrote). MODE "full": the run had
no late samples, so every call is in a window and the windows' sums must equal the summary;
"partial": only what holds with late samples and partial windows. Prints every mismatch and
exits 1 if there was one.
"""
import csv, json, sys
from collections import defaultdict

d, name, mode = sys.argv[1:4]
load = lambda suffix: json.load(open(f"{d}/{name}.{suffix}"))
summary, stats = load("live.json"), load("stats.json")
errors = []
def check(what, got, want):
    if got != want:
        errors.append(f"{what}: got {got!r}, want {want!r}")
def sums():
    return defaultdict(lambda: {"count": 0, "time_ns": 0, "bytes": 0})

fns = summary["functions"]
ranks = summary["ranks"]
host_of = {pr["rank"]: pr["host"] for pr in summary["per_rank"]}
job = load("totals.json")["job"]
if mode == "full":
    check("precondition: late samples", stats["late"], 0)
    check("precondition: windows", summary["windows"], 20)

# JSON lines: one window per line.
lines = [json.loads(l) for l in open(f"{d}/{name}.jsonl")]
check("jsonl lines", len(lines), summary["windows"])
check("jsonl windows in order", [w["index"] for w in lines], sorted(w["index"] for w in lines))
check("jsonl partial windows", sum(w["partial"] for w in lines), stats["partial_windows"])
if mode == "full":
    per_fn = sums()
    for w in lines:
        check("jsonl job", w["job"], job)
        for f, v in w["functions"].items():
            for k in ("count", "time_ns", "bytes"):
                per_fn[f][k] += v[k]
            if not all(0 <= x <= 1 for x in v["inside"]):
                errors.append(f"jsonl window {w['index']} {f}: inside {v['inside']}")
    check("jsonl sums", {f: v for f, v in per_fn.items() if v["count"]}, fns)

# CSV: one row per window and function.
rows = list(csv.DictReader(open(f"{d}/{name}.csv", newline="")))
check("csv columns", list(rows[0].keys()) if rows else None,
      ["window", "t_s", "grid_index", "start_s", "function", "calls", "time_ns", "min_ns",
       "max_ns", "bytes",
       "fraction_inside", "ranks_reporting", "ranks_missing"])
check("csv windows", len({r["window"] for r in rows}), summary["windows"])
# The job-relative place (one job per recording here): window = grid index - the first one,
# t_s = start - the first window's start, exactly, in the CSV and in the JSON lines.
from decimal import Decimal
if rows:
    g0, s0 = int(rows[0]["grid_index"]), Decimal(rows[0]["start_s"])
    check("csv window = grid_index - first", [int(r["window"]) for r in rows],
          [int(r["grid_index"]) - g0 for r in rows])
    check("csv t_s = start_s - first", [Decimal(r["t_s"]) for r in rows],
          [Decimal(r["start_s"]) - s0 for r in rows])
if lines:
    check("jsonl window = index - first", [w["window"] for w in lines],
          [w["index"] - lines[0]["index"] for w in lines])
    check("jsonl t_s = start - first", [round(w["t_s"] * 1e9) for w in lines],
          [w["start_ns"] - lines[0]["start_ns"] for w in lines])
if mode == "full":
    per_fn = sums()
    for r in rows:
        for k, col in (("count", "calls"), ("time_ns", "time_ns"), ("bytes", "bytes")):
            per_fn[r["function"]][k] += int(r[col])
        if not 0 <= float(r["fraction_inside"]) <= 1:
            errors.append(f"csv fraction {r['fraction_inside']}")
        check("csv ranks_reporting", r["ranks_reporting"], str(ranks))
    check("csv sums", {f: v for f, v in per_fn.items() if v["count"]}, fns)

# CSV per rank: the accepted samples, which the summary's per_rank totals.
per_rank = defaultdict(sums)
hosts = {}
for r in csv.DictReader(open(f"{d}/{name}.rank.csv", newline="")):
    rank = int(r["rank"])
    hosts[rank] = r["host"]
    for k, col in (("count", "calls"), ("time_ns", "time_ns"), ("bytes", "bytes")):
        per_rank[rank][r["function"]][k] += int(r[col])
for pr in summary["per_rank"]:
    check(f"per-rank {pr['rank']}", {f: v for f, v in per_rank[pr["rank"]].items() if v["count"]},
          pr["functions"])
    check(f"per-rank {pr['rank']} host", hosts.get(pr["rank"]), pr["host"])
check("per-rank ranks", sorted(per_rank), [pr["rank"] for pr in summary["per_rank"]])

# Chrome trace.
trace = load("perfetto")
events = trace["traceEvents"]
top = max(fns, key=lambda f: fns[f]["time_ns"])
values = [e["args"]["fraction"] for e in events if e["ph"] == "C" and e["name"] == top]
if not values or not all(0 <= v <= 1 for v in values) or max(values) <= 0:
    errors.append(f"counters of {top}: {values[:20]}")
procs = {e["pid"]: e["args"]["name"] for e in events
         if e["ph"] == "M" and e["name"] == "process_name"}
threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
           if e["ph"] == "M" and e["name"] == "thread_name"}
calls = [e for e in events if e["ph"] == "X"]
if not calls:
    errors.append("no X events")
for e in calls:
    rank = e["tid"] % (1 << 20)
    if not 0 <= rank < ranks:
        errors.append(f"X event with tid {e['tid']}")
        break
    check(f"process of rank {rank}", procs.get(e["pid"]), host_of.get(rank))
    if e["tid"] == rank:
        check(f"thread of rank {rank}", threads.get((e["pid"], e["tid"])), f"rank {rank}")
    if e["dur"] < 0 or e["name"] not in fns:
        errors.append(f"bad X event {e}")
if not any(e["tid"] < ranks for e in calls):
    errors.append("no call on a rank's own thread")
longest = sum(len(w["longest"]) for w in lines)
check("calls in the trace", len(calls) + int(trace["otherData"]["calls_without_lane"]), longest)
marks = [e for e in events if e["ph"] == "i"]
check("partial-window markers", sum(e["name"].startswith("partial window") for e in marks),
      stats["partial_windows"])
for kind in ("job_start", "job_end"):
    check(f"{kind} markers", sum(e["name"] == kind for e in marks), 1)
if not all(e.get("s") == "g" for e in marks):
    errors.append("an instant event is not global")
tids = {}
for e in events:
    if tids.setdefault(e["tid"], e["pid"]) != e["pid"]:
        errors.append(f"tid {e['tid']} in two processes")
        break

if mode == "partial":
    print(f"{name}: {stats['partial_windows']} partial windows, {stats['late']} late samples")
for e in errors[:30]:
    print("mismatch:", e)
sys.exit(1 if errors else 0)
