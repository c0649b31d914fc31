#!/bin/bash
# source_live.sh COLLECTOR LOADGEN PROBE: the viewer's data source on a live collector.
#
# A collector with --publish, --history and a recording takes a 32-rank load generator job
# (10 windows/s, 6 s). 2.5 s into it, mw-source-probe connects as the viewer does
# (mw_source_connect with the history endpoint) and polls until the job has ended, needing
# the whole run, then asks for rank 5's calls. Checks: the job (name, size, ended) arrived;
# windows came on the feed without a gap; the model holds every window of the run (as many as
# the collector's summary counts) once, without a hole, and the ones closed before the probe
# connected came from the history endpoint; no request failed; rank 5's calls came back.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
MW_COLLECTOR=$1
loadgen=$2
probe=$3
mw_init viewer_source_live
pub="ipc://$MW_T/pub"
hist="ipc://$MW_T/hist"

mw_start_collector --quiet --publish "$pub" --history "$hist" --record "$MW_T/run.mpiw" \
    --summary-json "$MW_T/summary.json" --silence-timeout-ms 30000
"$loadgen" --connect "$MW_EP" --ranks 32 --rate 10 --functions 8 --seconds 6 --nodes 4 \
    --job srclive --seed 5 2>"$MW_T/loadgen.err" &
lg=$!
sleep 2.5
"$probe" --feed "$pub" --history "$hist" --seconds 20 --until-ended --rank 5 \
    >"$MW_T/probe.json" 2>"$MW_T/probe.err" ||
    { MW_FAILURE_LOG=$MW_T/probe.err; mw_fail "mw-source-probe failed"; }
wait $lg || { MW_FAILURE_LOG=$MW_T/loadgen.err; mw_fail "mpiwatch-loadgen failed"; }
mw_stop_collector 2
cat "$MW_T/probe.json" >&2

"$MW_PYTHON" - "$MW_T/probe.json" "$MW_T/summary.json" <<'PY' || mw_fail "checks failed"
import json, sys
p = json.load(open(sys.argv[1]))
s = json.load(open(sys.argv[2]))
errors = []
def check(what, ok):
    if not ok:
        errors.append(what)
check("connected", p["connected"] == 1)
check("job name srclive", p["job"] == "srclive")
check("job size 32", p["size"] == 32)
check("job ended", p["ended"] == 1)
check("windows on the feed", p["feed_windows"] > 0)
check("no gap on the feed", p["feed_gaps"] == 0)
check("no failed request", p["errors"] == 0)
check("requests answered", p["requests"] > 0 and p["replies"] >= 2)
check(f"every window held: {p['held']} of {s['windows']}", p["held"] == s["windows"])
check("no hole", p["holes"] == 0 and p["held"] == p["held_last"] - p["held_first"] + 1)
check(f"the feed delivered at most the windows after the probe joined",
      p["feed_windows"] <= s["windows"] - p["older_than_feed"])
check(f"windows before the probe joined came from history ({p['older_than_feed']})",
      p["older_than_feed"] >= 10)
check("extent is the run", p["extent"][1] - p["extent"][0] + 1 >= s["windows"])
check(f"rank 5's calls ({p['rank_calls']})", p["rank_calls"] > 0 and p["rank_exact"] > 0)
check("the job_end event", p["event"].startswith("job_end"))
for e in errors:
    print("FAIL:", e, file=sys.stderr)
sys.exit(1 if errors else 0)
PY
mw_log "ok"
