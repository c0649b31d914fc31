#!/bin/bash
# steer_live.sh VIEWER COLLECTOR LIBRARY STEER_CB MPIRUN: steering from the viewer, live.
#
# A collector with --publish, --history, --record, --steer and --control; tests/programs/
# steer_cb on 4 ranks (poll mode: each rank calls MW_POLL() every 5 ms) with the library
# preloaded. Once the job is ready, the viewer connects offscreen with --control and
# `--steer app.msg=x:1 --steer app.msg=y:9` and takes a snapshot. Checked: the viewer prints
# "steer: sent app.msg=x ranks 1 (seq 1)" and "steer: rejected: rank 9 is not below the job
# size 4" and exits 1 (one request not sent); its --meta has both results and the steer
# event that came back on the feed; the callback of rank 1, and of no other rank, got
# app.msg=x, on its own thread; the collector's recording holds the steer event (the viewer
# replaying it lists it). Without --control (and $MPIWATCH_CONTROL) --steer is not sent and
# says that steering is off.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
viewer=$1
MW_COLLECTOR=$2
lib=$3
prog=$4
mpirun=$5
mw_init viewer_steer_live
mw_mpi_env
[ -x "$viewer" ] || mw_fail "the viewer is not built: $viewer"
[ -x "$prog" ] || mw_fail "program not built: $prog"
[ -r "$lib" ] || mw_fail "library not built: $lib"
export SDL_VIDEODRIVER=offscreen MPIWATCH_WINDOW_MS=50
unset DISPLAY WAYLAND_DISPLAY MPIWATCH_CONTROL
pub="ipc://$MW_T/pub"
hist="ipc://$MW_T/hist"
ctl="ipc://$MW_T/control"

mw_start_collector --exit-after-job --summary-json "$MW_T/summary.json" \
    --record "$MW_T/run.mpiw" --publish "$pub" --history "$hist" \
    --steer "ipc://$MW_T/steer" --control "$ctl"
"$mpirun" --oversubscribe -np 4 -x LD_PRELOAD="$lib" -x MPIWATCH_COLLECTOR="$MW_EP" \
    -x MPIWATCH_WINDOW_MS -x MPIWATCH_STEER="ipc://$MW_T/steer" "$prog" poll "$MW_T" \
    >"$MW_T/job.out" 2>"$MW_T/job.err" &
job=$!
mw_wait_file "$MW_T/ready" "$job" || mw_fail "the program never got ready"
# The 4 ranks' SUB sockets connected to the steering endpoint (ss), and half a second more for
# their subscriptions to arrive.
mw_wait_connected "$MW_T/steer" 4 ||
    { kill "$job"; mw_fail "the ranks did not connect to the steering endpoint"; }

# view ARGS...: the viewer on the live feed, a snapshot; its exit status in $rc.
view() {
    local name=$1
    shift
    rc=0
    "$viewer" --connect "$pub" --history "$hist" --snapshot "$MW_T/$name.png" \
        --meta "$MW_T/$name.meta.json" "$@" >"$MW_T/$name.out" 2>"$MW_T/$name.err" || rc=$?
    cat "$MW_T/$name.out"
    if grep -qiE "offscreen.*(not available|unavailable)|no available video device|EGL not" \
        "$MW_T/$name.err"; then
        kill "$job"
        mw_no_display "$(head -n 3 "$MW_T/$name.err")"
    fi
}
view live --control "$ctl" --steer app.msg=x:1 --steer app.msg=y:9
[ "$rc" = 1 ] || { MW_FAILURE_LOG=$MW_T/live.err; mw_fail "viewer exit status $rc, not 1"; }
grep -qx "steer: sent app.msg=x ranks 1 (seq 1)" "$MW_T/live.out" ||
    { MW_FAILURE_LOG=$MW_T/live.err; mw_fail "the first --steer was not reported sent"; }
grep -qx "steer: rejected: rank 9 is not below the job size 4" "$MW_T/live.out" ||
    mw_fail "the second --steer was not reported rejected"
view off --steer app.msg=z
[ "$rc" = 1 ] || mw_fail "without --control: exit status $rc, not 1"
grep -q "^steer: not sent: steering is off" "$MW_T/off.out" ||
    mw_fail "without --control: $(cat "$MW_T/off.out")"

sleep 0.5
touch "$MW_T/stop"
wait "$job" || { MW_FAILURE_LOG=$MW_T/job.err; mw_fail "the job failed"; }
cat "$MW_T/job.out"
grep -qx "rank 1: app.msg=x thread=app via=poll" "$MW_T/job.out" ||
    mw_fail "rank 1 did not get app.msg=x in mw_poll on its own thread"
for r in 0 2 3; do
    grep -qx "rank $r: none" "$MW_T/job.out" || mw_fail "rank $r got a message not for it"
done
mw_collector_exits 30
grep -q "steer #1: app.msg=x ranks 1" "$MW_T/collector.err" ||
    mw_fail "the collector did not publish app.msg=x to rank 1"

check="$(dirname "$0")/eventcheck.py"
"$MW_PYTHON" "$check" steer "$MW_T/live.meta.json" steer "app.msg=x ranks 1" sent ||
    mw_fail "the live viewer's meta"
"$MW_PYTHON" - "$MW_T/live.meta.json" <<'PY' || mw_fail "the --steer results in the meta"
import json, sys
st = json.load(open(sys.argv[1]))["steer"]
want = [("app.msg=x:1", "sent", "app.msg=x ranks 1"), ("app.msg=y:9", "rejected", "app.msg=y ranks 9")]
got = [(s["option"], s["state"], s["request"]) for s in st]
print("steer results:", got)
sys.exit(0 if got == want and st[0]["seq"] == 1 else 1)
PY
"$viewer" --replay "$MW_T/run.mpiw" --snapshot "$MW_T/replay.png" \
    --meta "$MW_T/replay.meta.json" >"$MW_T/replay.out" 2>"$MW_T/replay.err" ||
    { MW_FAILURE_LOG=$MW_T/replay.err; mw_fail "the replay snapshot failed"; }
"$MW_PYTHON" "$check" steer "$MW_T/replay.meta.json" steer "app.msg=x ranks 1" ||
    mw_fail "the recording has no steer event for app.msg=x"
mw_log "ok"
