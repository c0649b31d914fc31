#!/bin/bash
# dashboard.sh COLLECTOR LOADGEN DASHBOARD: the job label and the Grafana dashboard against a
# live page (docs/metrics.md).
#
# A collector with --metrics-port gets a 6-rank loadgen job whose name holds a double quote, a
# backslash and a blank. Once the page shows the whole job: `promtool check metrics` accepts it
# (the label is escaped), every sample line has job="..." as its first label and it decodes to
# the job's name, the latest window's gauges are there, and check_dashboard.py finds every
# query of DASHBOARD on series (and labels) the page really has.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
MW_COLLECTOR=$1
loadgen=$2
dashboard=$3
py=${MW_PYTHON:-/usr/bin/python3}
mw_init metrics_dashboard
port=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') ||
    mw_fail "no free port"
mw_start_collector --quiet --metrics-port "$port" --silence-timeout-ms 30000
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
echo "metrics_dashboard: ok"
