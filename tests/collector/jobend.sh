#!/bin/bash
# jobend.sh COLLECTOR MW_BADINPUT MODE: a job without bye still ends, with its data written.
#
# MODE signal:  the collector runs without --exit-after-job; after a 1-rank job that never
#               says bye, SIGTERM must close the open windows, write the summary, stats and
#               report, and exit 0.
# MODE silence: with --exit-after-job and --silence-timeout-ms 500, the same job must end by
#               itself (the rank declared dead) and the collector exit 0.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
MW_COLLECTOR=$1
badinput=$2
mode=$3
python=$MW_PYTHON
mw_init "collector_jobend_$mode"
dir=$MW_T

extra=()
if [ "$mode" = silence ]; then extra=(--exit-after-job --silence-timeout-ms 500); fi
mw_start_collector --summary-json "$dir/summary.json" --stats-json "$dir/stats.json" \
    --report "$dir/report.txt" "${extra[@]}"
"$badinput" partial "$MW_EP" >"$dir/job.json" || mw_fail "mw-badinput partial failed"

if [ "$mode" = signal ]; then
    sleep 0.5
    kill -0 "$MW_CPID" 2>/dev/null || mw_fail "collector exited before the signal"
    [ -e "$dir/summary.json" ] && mw_fail "summary written before the job ended"
    kill -TERM "$MW_CPID"
fi
mw_collector_exits 10

"$python" - "$dir" "$mode" <<'PY' || mw_fail "output check"
import json, sys

d, mode = sys.argv[1], sys.argv[2]
job = json.load(open(f"{d}/job.json"))
stats = json.load(open(f"{d}/stats.json"))
summary = json.load(open(f"{d}/summary.json"))
errors = []
def check(what, got, want):
    if got != want:
        errors.append(f"{what}: got {got!r}, want {want!r}")
check("accepted", stats["accepted"], job["accepted"])
check("rejected", sum(stats["rejected"].values()), 0)
check("windows", summary["windows"], job["samples"])
check("stats windows", stats["windows"], job["samples"])
want = {f: {k: v * job["samples"] for k, v in c.items()} for f, c in job["per_sample"].items()}
check("functions", summary["functions"], want)
report = open(f"{d}/report.txt").read()
cause = "stopped by a signal" if mode == "signal" else "silence timeout"
if cause not in report:
    errors.append(f"report does not say {cause!r}")
if mode == "silence" and "1 declared dead" not in report:
    errors.append("report does not count the dead rank")
for e in errors:
    print("  " + e, file=sys.stderr)
sys.exit(1 if errors else 0)
PY
echo "jobend $mode: ok"
