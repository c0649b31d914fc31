#!/bin/bash
# prometheus.sh: a real Prometheus server scrapes the collector of a real MPI job and answers
# the job's exact call count through its HTTP API (issue 17, docs/metrics.md).
#
# A collector (no --exit-after-job: it keeps serving /metrics after the job, as a collector
# started by hand does) with --metrics-port on a free loopback port; a Prometheus server
# (Debian `prometheus`) in the test's directory, with its own configuration (one scrape job
# on that page every second, honor_labels: true), its own TSDB directory and a free loopback
# port; then a 4-rank known_c job (MPIWATCH_JOB set to a name with a quote, a backslash and a
# blank, which the page must escape). Once the summary JSON is written, Prometheus's
# /api/v1/query for mpiwatch_calls_total{job=NAME,function="MPI_Allreduce"} must return exactly
# the summary's count (4 x N), and the gauges of the latest window must be stored under the
# job too. Every PromQL expression of the Grafana dashboard (share/grafana) is then run
# through the same API for this job and must return data (check_dashboard.py --prometheus).
# Skipped (77) only when the prometheus binary is missing or the server does not become ready.
. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"
n=${1:-2000}
dashboard=$2
mw_setup metrics_prometheus
export MPIWATCH_WINDOW_MS=100
py=${MW_PYTHON:-/usr/bin/python3}
[ -x "$MW_PROGRAMS/known_c" ] || mw_fail "program not built: $MW_PROGRAMS/known_c"
prom=$(command -v prometheus) || mw_skip "no prometheus binary (Debian: prometheus; tools/setup.sh installs it)"

free_port() {
    "$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
mport=$(free_port) || mw_fail "no free port"
pport=$(free_port) || mw_fail "no free port"
PROM_PID=''
stop_prometheus() {
    if [ -n "$PROM_PID" ] && kill -0 "$PROM_PID" 2>/dev/null; then
        kill -TERM "$PROM_PID" 2>/dev/null
        for _ in $(seq 50); do kill -0 "$PROM_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$PROM_PID" 2>/dev/null
        wait "$PROM_PID" 2>/dev/null
    fi
    PROM_PID=''
}
# mw_teardown takes the script's exit status from $?: keep it across stop_prometheus.
on_exit() {
    local rc=$?
    stop_prometheus
    (exit "$rc")
    mw_teardown
}
trap on_exit EXIT

cat >"$MW_T/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: mpiwatch
    honor_labels: true
    static_configs:
      - targets: ["127.0.0.1:$mport"]
YML
"$prom" --config.file="$MW_T/prometheus.yml" --storage.tsdb.path="$MW_T/tsdb" \
    --web.listen-address="127.0.0.1:$pport" >"$MW_T/prometheus.log" 2>&1 &
PROM_PID=$!
ready=0
for _ in $(seq 150); do
    kill -0 "$PROM_PID" 2>/dev/null || break
    if "$py" -c 'import sys, urllib.request as u; u.urlopen(sys.argv[1], timeout=1)' \
        "http://127.0.0.1:$pport/-/ready" 2>/dev/null; then
        ready=1
        break
    fi
    sleep 0.2
done
if [ "$ready" != 1 ]; then
    tail -n 20 "$MW_T/prometheus.log" >&2
    mw_skip "the Prometheus server did not become ready within 30 s (log above)"
fi

job='pr"om\ job'
mw_start_collector --quiet --metrics-port "$mport" --summary-json "$MW_T/summary.json" \
    --silence-timeout-ms 30000
MPIWATCH_JOB=$job mw_mpirun -x MPIWATCH_JOB "$MW_PROGRAMS/known_c" "$n" >"$MW_T/app.out" \
    2>"$MW_T/app.err" || {
    MW_FAILURE_LOG=$MW_T/app.err
    mw_fail "the job failed"
}
mw_wait_file "$MW_T/summary.json" || mw_fail "no summary JSON 20 s after the job"

MW_FAILURE_LOG=$MW_T/prometheus.log
"$py" - "$pport" "$MW_T/summary.json" "$job" "$n" <<'PY' || mw_fail "Prometheus does not hold the job's exact figures (above)"
import json, sys, time, urllib.parse, urllib.request

port, summary, job, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
want = json.load(open(summary))["functions"]["MPI_Allreduce"]["count"]
if want != 4 * n:
    sys.exit(f"the summary says {want} MPI_Allreduce calls, the program made {4 * n}")
# A PromQL string literal: backslash and double quote escaped.
lit = '"' + job.replace("\\", "\\\\").replace('"', '\\"') + '"'

def query(q):
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": q})
    with urllib.request.urlopen(url, timeout=5) as r:
        body = json.load(r)
    if body.get("status") != "success":
        sys.exit(f"{q}: {body}")
    return body["data"]["result"]

q = f'mpiwatch_calls_total{{job={lit},function="MPI_Allreduce"}}'
deadline, got = time.time() + 20, None
while time.time() < deadline:
    res = query(q)
    if res:
        got = res[0]["value"][1]
        if float(got) == want:
            break
    time.sleep(0.5)
print(f"Prometheus API: {q} = {got}; summary JSON: {want}")
if got is None or float(got) != want:
    sys.exit(f"Prometheus answered {got!r}, the summary says {want}")
if len(res) != 1 or res[0]["metric"].get("job") != job:
    sys.exit(f"the series is not labelled with the job's name: {res}")
for g in ("mpiwatch_window_mpi_fraction", "mpiwatch_window_ranks_seen",
          "mpiwatch_window_ranks_missing", "mpiwatch_window_mpi_imbalance"):
    if not query(f"{g}{{job={lit}}}"):
        sys.exit(f"Prometheus holds no {g} for the job")
seen = float(query(f"mpiwatch_window_ranks_seen{{job={lit}}}")[0]["value"][1])
if not 1 <= seen <= 4:
    sys.exit(f"mpiwatch_window_ranks_seen = {seen}")
PY

if [ -n "$dashboard" ]; then
    "$py" "$(dirname "${BASH_SOURCE[0]}")/check_dashboard.py" "$dashboard" \
        --prometheus "http://127.0.0.1:$pport" --job "$job" ||
        mw_fail "a query of the Grafana dashboard returns nothing from Prometheus (above)"
fi
stop_prometheus
kill -TERM "$MW_CPID"
mw_collector_exits 10
echo "metrics_prometheus: ok"
