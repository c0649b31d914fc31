#!/bin/bash
# metrics.sh COLLECTOR LOADGEN MW_BADINPUT: --metrics-port serves the Prometheus text format.
#
# A collector with --metrics-port on a free loopback port (and a TCP ingest port) first gets
# crafted bad input and a 1-rank job (mw-badinput bad, then job: every rejection reason it can
# provoke, each a known number of times, which it prints), then a 16-rank loadgen job (and
# stays up: no --exit-after-job). GET /metrics must then carry HELP and TYPE lines for every
# metric, the loadgen job's exact call counts (compared with what the loadgen says it sent), a
# rejected line for every reason mw-badinput knows, equal to its tally (a page at 0 fails),
# nothing rejected for a reason it did not provoke, accepted messages and closed windows of
# both jobs exactly, the 0.0.4 content type; /other must be 404. `promtool check metrics`
# (Debian package prometheus, installed by tools/setup.sh) must accept the body. SIGTERM must
# still exit 0.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
MW_COLLECTOR=$1
loadgen=$2
badinput=$3
python=$MW_PYTHON
mw_init collector_metrics
dir=$MW_T

# A port that was free a moment ago; a collector that cannot bind it exits 1 and fails here.
port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') ||
    mw_fail "no free port"
tcp=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') ||
    mw_fail "no free port"
mw_start_collector --quiet --metrics-port "$port" --listen "tcp://127.0.0.1:$tcp" \
    --silence-timeout-ms 30000

"$badinput" bad "$MW_EP" 127.0.0.1 "$tcp" >"$dir/bad.json" || mw_fail "mw-badinput bad failed"
# The job's samples are for the windows from "now" on: 0.2 s later they are past the bad
# phase's valid sample, and not duplicates of it.
sleep 0.2
"$badinput" job "$MW_EP" >"$dir/job.json" || mw_fail "mw-badinput job failed"
# A job whose hellos go over the job-wide caps of PUs and hardware objects (one part each).
"$badinput" caps "$MW_EP" >"$dir/caps.json" || mw_fail "mw-badinput caps failed"

"$loadgen" --connect "$MW_EP" --ranks 16 --rate 10 --functions 4 --seconds 1 --nodes 2 \
    --totals-json "$dir/totals.json" 2>"$dir/loadgen.err" || {
    MW_FAILURE_LOG=$dir/loadgen.err
    mw_fail "mpiwatch-loadgen failed"
}

"$python" - "$port" "$dir" <<'PY' || mw_fail "metrics check"
import json, re, sys, time, urllib.error, urllib.request

port, d = sys.argv[1], sys.argv[2]
base = f"http://127.0.0.1:{port}"
totals = json.load(open(f"{d}/totals.json"))
bad, job = json.load(open(f"{d}/bad.json")), json.load(open(f"{d}/job.json"))
caps = json.load(open(f"{d}/caps.json"))
errors = []

def scrape():
    with urllib.request.urlopen(base + "/metrics", timeout=5) as r:
        return r.status, r.headers.get("Content-Type", ""), r.read().decode()

jobs_seen = set()

def parse(body):
    """Sample lines by series, with the job label (first on every line, docs/metrics.md)
    checked and taken out, so that the keys below name the other labels only."""
    values = {}
    for line in body.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r'([a-zA-Z_:][a-zA-Z0-9_:]*)\{job="((?:[^"\\]|\\.)*)",?([^}]*)\} (\S+)',
                         line)
        if not m:
            errors.append(f"malformed sample line (or no job label first): {line!r}")
            continue
        jobs_seen.add(m.group(2))
        key = m.group(1) + (f"{{{m.group(3)}}}" if m.group(3) else "")
        values[key] = float(m.group(4))
    return values

# The snapshot is republished at most every 500 ms: wait until it shows the whole job.
want_calls = totals["functions"]["MPI_Allreduce"]["count"]
key = 'mpiwatch_calls_total{function="MPI_Allreduce"}'
deadline = time.time() + 10
while True:
    status, ctype, body = scrape()
    values = parse(body)
    if values.get(key) == want_calls and values.get("mpiwatch_ranks_reporting") == 0:
        break
    if time.time() > deadline:
        errors.append(f"{key} = {values.get(key)!r} and ranks_reporting = "
                      f"{values.get('mpiwatch_ranks_reporting')!r} after 10 s, "
                      f"want {want_calls} and 0")
        break
    time.sleep(0.2)

if status != 200:
    errors.append(f"status {status}")
if not ctype.startswith("text/plain; version=0.0.4"):
    errors.append(f"Content-Type {ctype!r}")

types = {"mpiwatch_calls_total": "counter", "mpiwatch_call_seconds_total": "counter",
         "mpiwatch_bytes_total": "counter", "mpiwatch_ranks_reporting": "gauge",
         "mpiwatch_ranks": "gauge", "mpiwatch_windows_closed_total": "counter",
         "mpiwatch_windows_partial_total": "counter",
         "mpiwatch_samples_dropped_total": "counter",
         "mpiwatch_samples_late_total": "counter",
         "mpiwatch_messages_accepted_total": "counter",
         "mpiwatch_messages_rejected_total": "counter",
         "mpiwatch_steps_refused_total": "counter",
         "mpiwatch_hello_parts_capped_total": "counter",
         "mpiwatch_recording_too_large_total": "counter"}
for name, t in types.items():
    if not re.search(rf"^# HELP {name} \S", body, re.M):
        errors.append(f"no HELP for {name}")
    if f"# TYPE {name} {t}\n" not in body:
        errors.append(f"no '# TYPE {name} {t}'")

def check(what, got, want):
    if got != want:
        errors.append(f"{what}: got {got!r}, want {want!r}")

for fn, t in totals["functions"].items():
    if t["count"] == 0:
        continue
    check(f"calls {fn}", values.get(f'mpiwatch_calls_total{{function="{fn}"}}'), t["count"])
    check(f"bytes {fn}", values.get(f'mpiwatch_bytes_total{{function="{fn}"}}'), t["bytes"])
    got = values.get(f'mpiwatch_call_seconds_total{{function="{fn}"}}')
    if got is None or abs(got - t["time_ns"] / 1e9) > 1e-6:
        errors.append(f"seconds {fn}: got {got!r}, want {t['time_ns'] / 1e9}")
check("ranks", values.get("mpiwatch_ranks"), totals["ranks"])
check("accepted", values.get("mpiwatch_messages_accepted_total"),
      bad["accepted"] + job["accepted"] + caps["accepted"] + totals["hellos"] +
      totals["samples"] + totals["byes"])
# mw-badinput's job has one window per valid sample (badinput.sh checks the same in the stats).
check("windows closed", values.get("mpiwatch_windows_closed_total"),
      bad["samples"] + job["samples"] + totals["windows"])
# Every reason mw-badinput knows is on the page with its tally; any other reason the page
# lists (one newer than mw-badinput) was not provoked and must be 0.
page = {m.group(1): v for k, v in values.items()
        if (m := re.fullmatch(r'mpiwatch_messages_rejected_total\{reason="([a-z_]+)"\}', k))}
for r, n in bad["rejected"].items():
    check(f"rejected {r}", page.get(r), float(n + job["rejected"][r]))
for r, v in page.items():
    if r not in bad["rejected"]:
        check(f"rejected {r} (not provoked)", v, 0)
provoked = sum(1 for r, n in bad["rejected"].items() if n)
if provoked < 10:
    errors.append(f"mw-badinput provoked only {provoked} reasons")
print(f"rejected on the page: {sum(page.values()):.0f} over {len(page)} reasons, "
      f"{provoked} provoked", file=sys.stderr)
# Step refusals (docs/steps.md): every reason listed; the loadgen job marks no steps, so 0
# (collector_steps overflows each cap and checks the exact counts).
steps = {m.group(1): v for k, v in values.items()
         if (m := re.fullmatch(r'mpiwatch_steps_refused_total\{reason="([a-z_]+)"\}', k))}
check("step refusal reasons", sorted(steps),
      sorted(["late", "below_open", "forced", "pairs", "carry"]))
for r, v in steps.items():
    check(f"steps refused {r}", v, 0)
# Hello parts over a job-wide cap (docs/collector.md, Caps): every reason listed, each equal
# to what mw-badinput's caps job went over (a pus and an objects part), the others 0.
capped = {m.group(1): v for k, v in values.items()
          if (m := re.fullmatch(r'mpiwatch_hello_parts_capped_total\{reason="([a-z_]+)"\}', k))}
check("capped reasons", sorted(capped), sorted(caps["capped"]))
for r, n in caps["capped"].items():
    check(f"capped {r}", capped.get(r), float(n))
if sum(caps["capped"].values()) < 2:
    errors.append("mw-badinput's caps job provoked no cap")
check("recording too_large (no recording)", values.get("mpiwatch_recording_too_large_total"), 0)
# One job label on the last page: the loadgen job's name, on every line.
jobs_now = set()
for line in body.splitlines():
    if line and not line.startswith("#"):
        jobs_now.add(re.match(r'[^{]*\{job="([^"]*)"', line).group(1))
check("job labels on the last page", sorted(jobs_now), [totals["job"]])
# The latest closed window's gauges (docs/metrics.md): all there, and consistent.
w = {k: values.get(f"mpiwatch_window_{k}") for k in
     ("number", "start_seconds", "length_seconds", "mpi_fraction", "ranks_seen",
      "ranks_missing", "ranks_expected", "mpi_imbalance", "load_balance")}
for k, v in w.items():
    if v is None:
        errors.append(f"no mpiwatch_window_{k}")
if None not in w.values():
    check("window ranks expected", w["ranks_expected"], w["ranks_seen"] + w["ranks_missing"])
    if not (w["number"] >= 0 and w["start_seconds"] >= 0 and w["length_seconds"] > 0 and
            0 <= w["mpi_fraction"] and 0 < w["ranks_seen"] <= totals["ranks"] and
            w["mpi_imbalance"] >= 0 and 0 < w["load_balance"] <= 1):
        errors.append(f"window gauges out of range: {w}")
    mx = values.get('mpiwatch_window_rank_mpi_seconds{stat="max"}')
    mean = values.get('mpiwatch_window_rank_mpi_seconds{stat="mean"}')
    if mx is None or mean is None or (mean > 0 and abs(mx / mean - 1 - w["mpi_imbalance"]) > 1e-6):
        errors.append(f"imbalance {w['mpi_imbalance']} is not max/mean - 1 of {mx}, {mean}")
with open(f"{d}/metrics.txt", "w") as f:
    f.write(body)

try:
    urllib.request.urlopen(base + "/other", timeout=5)
    errors.append("/other did not answer 404")
except urllib.error.HTTPError as e:
    check("/other status", e.code, 404)

for e in errors:
    print("  " + e, file=sys.stderr)
sys.exit(1 if errors else 0)
PY

command -v promtool >/dev/null 2>&1 ||
    mw_fail "promtool is not installed (Debian: prometheus; tools/setup.sh installs it)"
promtool check metrics <"$dir/metrics.txt" || mw_fail "promtool check metrics rejected the page"

kill -TERM "$MW_CPID"
mw_collector_exits 10
echo "metrics: ok"
