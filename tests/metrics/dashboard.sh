#!/bin/bash
# dashboard.sh COLLECTOR LOADGEN DASHBOARD EXPORT: the job label, the latest window's gauges and
# the Grafana dashboard against a live page (docs/metrics.md).
#
# A collector with --metrics-port gets a 6-rank loadgen job whose name holds a double quote, a
# backslash and a blank. Once the page shows the whole job: `promtool check metrics` accepts it
# (the label is escaped), every sample line has job="..." as its first label and it decodes to
# the job's name, and check_dashboard.py finds every query of DASHBOARD on series (and labels)
# the page really has. The latest window's gauges must equal what the recording of the same
# job (--record, read back with mpiwatch-export EXPORT: jsonl and csv --per-rank) says of its
# last window: number and start from the job's first window, ranks seen and missing, MPI
# fraction, and max / mean - 1 and the POP load balance recomputed from the per-rank times.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
MW_COLLECTOR=$1
loadgen=$2
dashboard=$3
export_tool=$4
py=${MW_PYTHON:-/usr/bin/python3}
mw_init metrics_dashboard
port=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') ||
    mw_fail "no free port"
mw_start_collector --quiet --metrics-port "$port" --silence-timeout-ms 30000 \
    --record "$MW_T/job.mpiw"
job='dash"board\ job'
"$loadgen" --connect "$MW_EP" --ranks 6 --rate 20 --functions 4 --seconds 1 --job "$job" \
    2>"$MW_T/loadgen.err" >/dev/null || {
    MW_FAILURE_LOG=$MW_T/loadgen.err
    mw_fail "mpiwatch-loadgen failed"
}
"$py" - "$port" "$job" "$MW_T/page.txt" <<'PY' || mw_fail "the page (above)"
import re, sys, time, urllib.request

port, job, out = sys.argv[1], sys.argv[2], sys.argv[3]
deadline = time.time() + 10
while True:
    body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    if re.search(r"^mpiwatch_ranks_reporting\{[^}]*\} 0$", body, re.M) and \
            "mpiwatch_window_mpi_fraction{" in body:
        break
    if time.time() > deadline:
        sys.exit("the page did not show the ended job within 10 s")
    time.sleep(0.2)
open(out, "w").write(body)
errors = []
for line in body.splitlines():
    if not line or line.startswith("#"):
        continue
    m = re.match(r'[a-zA-Z_:][a-zA-Z0-9_:]*\{job="((?:[^"\\]|\\.)*)"[,}]', line)
    if not m:
        errors.append(f"no job label first: {line!r}")
        continue
    name = re.sub(r'\\(.)', lambda x: {"n": "\n"}.get(x.group(1), x.group(1)), m.group(1))
    if name != job:
        errors.append(f"job label {m.group(1)!r} decodes to {name!r}, not {job!r}")
for e in errors[:20]:
    print("  " + e, file=sys.stderr)
sys.exit(1 if errors else 0)
PY
command -v promtool >/dev/null 2>&1 ||
    mw_fail "promtool is not installed (Debian: prometheus; tools/setup.sh installs it)"
promtool check metrics <"$MW_T/page.txt" || mw_fail "promtool check metrics rejected the page"
"$py" "$(dirname "$0")/check_dashboard.py" "$dashboard" --metrics "$MW_T/page.txt" ||
    mw_fail "the dashboard queries series the page does not have (above)"
kill -TERM "$MW_CPID"
mw_collector_exits 10

"$export_tool" --format jsonl "$MW_T/job.mpiw" -o "$MW_T/job.jsonl" || mw_fail "jsonl export failed"
"$export_tool" --format csv --per-rank "$MW_T/job.mpiw" -o "$MW_T/ranks.csv" ||
    mw_fail "csv export failed"
"$py" - "$MW_T" <<'PY' || mw_fail "the window gauges differ from the recording (above)"
import csv, json, re, sys

d = sys.argv[1]
page = {}
for line in open(f"{d}/page.txt"):
    m = re.match(r'(mpiwatch_window_[a-z_]+)\{job="(?:[^"\\]|\\.)*"(?:,stat="(\w+)")?\} (\S+)', line)
    if m:
        page[m.group(1) + (f".{m.group(2)}" if m.group(2) else "")] = float(m.group(3))
last = [json.loads(l) for l in open(f"{d}/job.jsonl")][-1]
k = last["window"]
per_rank = {}
for row in csv.DictReader(open(f"{d}/ranks.csv")):
    if int(row["window"]) == k:
        per_rank[row["rank"]] = per_rank.get(row["rank"], 0) + int(row["time_ns"])
mpi = list(per_rank.values()) + [0] * (last["ranks_reporting"] - len(per_rank))
out = [max(last["window_ns"] - t, 0) for t in mpi]
mean = sum(mpi) / len(mpi)
want = {
    "mpiwatch_window_number": k,
    "mpiwatch_window_start_seconds": last["t_s"],
    "mpiwatch_window_length_seconds": last["window_ns"] / 1e9,
    "mpiwatch_window_ranks_seen": last["ranks_reporting"],
    "mpiwatch_window_ranks_missing": last["ranks_missing"],
    "mpiwatch_window_ranks_expected": last["ranks_reporting"] + last["ranks_missing"],
    "mpiwatch_window_mpi_fraction":
        last["occ_fraction"] if last["occ_total_ns"] else last["mpi_fraction"],
    "mpiwatch_window_mpi_imbalance": max(mpi) / mean - 1 if mean else 0,
    "mpiwatch_window_load_balance": sum(out) / len(out) / max(out) if max(out) else 1,
    "mpiwatch_window_rank_mpi_seconds.max": max(mpi) / 1e9,
    "mpiwatch_window_rank_mpi_seconds.mean": mean / 1e9,
}
errors = []
for name, w in want.items():
    got = page.get(name)
    # The export prints fractions with 6 significant digits, the page with 9.
    if got is None or abs(got - w) > 2e-6 * max(1, abs(w)):
        errors.append(f"{name}: page {got!r}, recording {w!r}")
print(f"window {k}: imbalance {want['mpiwatch_window_mpi_imbalance']:.6f}, "
      f"load balance {want['mpiwatch_window_load_balance']:.6f}, "
      f"MPI fraction {want['mpiwatch_window_mpi_fraction']}, {len(mpi)} ranks", file=sys.stderr)
for e in errors:
    print("  " + e, file=sys.stderr)
sys.exit(1 if errors else 0)
PY
echo "metrics_dashboard: ok"
