#!/bin/bash
# feed.sh COLLECTOR LOADGEN KEYGEN LIBMPIWATCH DEMO MPIRUN: mpiwatch.follow on a live feed.
#
# a) A collector with --publish and --record, mpiwatch.follow subscribed before the job
#    (tests/python/follow_feed.py), and a 16-rank load generator job (10 windows/s, 3 s). The
#    follower must receive every window the recording holds, each with the same per-function
#    calls, time and bytes and the same job-relative number, their sums equal to the
#    collector's summary, the job (name, size), job_start and job_end, and nothing refused.
# b) The same over CURVE with a real 4-rank MPI job (mpiwatch-demo, the library preloaded with
#    the ranks' key): the follower with an authorized key gets every window of the summary; a
#    follower with a key the collector does not know gets nothing.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
MW_COLLECTOR=$1
loadgen=$2
keygen=$3
lib=$4
demo=$5
mpirun=$6
mw_require MW_PYDIR
mw_init python_feed
mw_mpi_env
d=$MW_T
here=$(dirname "$0")
export PYTHONPATH=$MW_PYDIR
pids=''
stop_followers() {
    local pid
    for pid in $pids; do kill -KILL "$pid" 2>/dev/null; done
}
trap 'rc=$?; stop_followers; (exit $rc); mw_teardown' EXIT

# follow NAME [ARGS...]: follow_feed.py on ipc://$d/pub into $d/NAME.json in the background,
# returning once it is subscribed (then one more second: the PUB socket's slow joiner).
follow() {
    local name=$1 i
    shift
    "$MW_PYTHON" "$here/follow_feed.py" "ipc://$d/pub" "$d/$name.json" "$d/$name.ready" "$@" \
        2>"$d/$name.err" &
    pids="$pids $!"
    eval "pid_$name=$!"
    for ((i = 0; i < 400; i++)); do
        [ -e "$d/$name.ready" ] && break
        sleep 0.05
    done
    [ -e "$d/$name.ready" ] || { MW_FAILURE_LOG=$d/$name.err; mw_fail "$name never subscribed"; }
}

# --- a) plain, load generator ------------------------------------------------------------------
mw_start_collector --exit-after-job --quiet --record "$d/a.mpiw" --summary-json "$d/a.sum.json" \
    --silence-timeout-ms 30000 --lateness-ms 2000 --publish "ipc://$d/pub"
follow a
sleep 1
"$loadgen" --connect "$MW_EP" --ranks 16 --rate 10 --functions 8 --seconds 3 --nodes 2 \
    --job pyfeed --seed 3 2>"$d/loadgen.err" ||
    { MW_FAILURE_LOG=$d/loadgen.err; mw_fail "mpiwatch-loadgen failed"; }
mw_collector_exits 20
# shellcheck disable=SC2154
wait "$pid_a" || { MW_FAILURE_LOG=$d/a.err; mw_fail "the follower failed"; }

MW_FAILURE_LOG=$d/check_a.err
"$MW_PYTHON" - "$d/a.json" "$d/a.mpiw" "$d/a.sum.json" pyfeed <<'PY' 2>"$d/check_a.err" ||
import json, sys
import mpiwatch
got = json.load(open(sys.argv[1]))
r = mpiwatch.Recording(sys.argv[2])
s = json.load(open(sys.argv[3]))
bad = []
fn = r.functions()
rec = {str(k): {f: [int(c), int(t), int(b)] for f, c, t, b in
                zip(g["function"], g["calls"], g["time_ns"], g["bytes"])}
       for k, g in fn.groupby("grid_index")}
win = r.windows()
rel = {str(k): [int(w), float(t)] for k, w, t in zip(win["grid_index"], win["window"], win["t_s"])}
if len(win) != s["windows"] or len(win) < 20:
    bad.append("recording: %d windows, summary %d" % (len(win), s["windows"]))
if set(got["windows"]) != set(str(k) for k in win["grid_index"]):
    bad.append("received %d windows, recorded %d" % (len(got["windows"]), len(win)))
for k, v in got["windows"].items():
    if rec.get(k, {}) != v:
        bad.append("window %s differs from the recording's" % k)
    if rel.get(k) != got["relative"][k]:
        bad.append("window %s: relative number/time %s, recording %s" % (k, got["relative"][k],
                                                                         rel.get(k)))
ref = {f: [v["count"], v["time_ns"], v["bytes"]] for f, v in s["functions"].items()}
if got["totals"] != ref:
    bad.append("totals %s != summary %s" % (got["totals"], ref))
if got["job"] != {"name": sys.argv[4], "size": s["ranks"]}:
    bad.append("job %s" % got["job"])
if "job_start" not in got["events"] or "job_end" not in got["events"]:
    bad.append("events %s" % got["events"])
if got["bad"] or got["gaps"]:
    bad.append("%d refused, %d gaps" % (got["bad"], got["gaps"]))
for b in bad:
    print(b, file=sys.stderr)
print("a: %d windows received, equal to the recording and the summary" % len(got["windows"]))
sys.exit(1 if bad else 0)
PY
    mw_fail "the followed windows differ"

# --- b) CURVE, a real MPI job ------------------------------------------------------------------
{ mkdir "$d/keys" && cd "$d/keys"; } || mw_fail "mkdir"
mw_curve_keys ranks "$keygen"
{ "$keygen" clients/py >/dev/null && "$keygen" intruder >/dev/null; } || mw_fail "keygen"
rm -f "$d/pub"
mw_start_collector --exit-after-job --quiet --summary-json "$d/b.sum.json" --lateness-ms 2000 \
    --silence-timeout-ms 30000 --publish "ipc://$d/pub" --curve-secret coll.key \
    --curve-clients clients
follow b "$d/keys/coll.pub" "$d/keys/clients/py.key"
follow c "$d/keys/coll.pub" "$d/keys/intruder.key" 10
sleep 1
"$mpirun" --oversubscribe -np 4 -x LD_PRELOAD="$lib" -x MPIWATCH_COLLECTOR="$MW_EP" \
    -x MPIWATCH_CURVE_SERVER="$d/keys/coll.pub" -x MPIWATCH_CURVE_KEY="$d/keys/clients/ranks.key" \
    "$demo" 100 >"$d/app.out" 2>"$d/app.err" ||
    { MW_FAILURE_LOG=$d/app.err; mw_fail "the MPI job failed"; }
mw_collector_exits 30
# shellcheck disable=SC2154
wait "$pid_b" || { MW_FAILURE_LOG=$d/b.err; mw_fail "the CURVE follower failed"; }
# shellcheck disable=SC2154
wait "$pid_c" || { MW_FAILURE_LOG=$d/c.err; mw_fail "the intruder follower failed"; }
MW_FAILURE_LOG=$d/check_b.err
"$MW_PYTHON" - "$d/b.json" "$d/c.json" "$d/b.sum.json" <<'PY' 2>"$d/check_b.err" ||
import json, sys
got, intruder, s = (json.load(open(p)) for p in sys.argv[1:4])
bad = []
ref = {f: [v["count"], v["time_ns"], v["bytes"]] for f, v in s["functions"].items()}
if len(got["windows"]) != s["windows"] or s["windows"] < 5:
    bad.append("received %d windows, summary %d" % (len(got["windows"]), s["windows"]))
if got["totals"] != ref:
    bad.append("totals %s != summary %s" % (got["totals"], ref))
if got["job"] is None or got["job"]["size"] != 4 or got["ranks_rows"] == 0:
    bad.append("job %s, %d per-rank rows" % (got["job"], got["ranks_rows"]))
if intruder["received"] or intruder["windows"]:
    bad.append("a follower with an unknown key received %d messages" % intruder["received"])
for b in bad:
    print(b, file=sys.stderr)
print("b: %d windows over CURVE equal to the summary; an unknown key got nothing" %
      len(got["windows"]))
sys.exit(1 if bad else 0)
PY
    mw_fail "the CURVE feed"
mw_log "ok"
