#!/bin/bash
# badinput.sh COLLECTOR LOADGEN FEED GARBAGE: bad requests leave the history endpoint serving.
#
# A collector with --history on a TCP port takes a small load generator job, then receives
# through ZeroMQ DEALER sockets (mw-feed-garbage): two undecodable bodies, an empty request, a
# 200 KiB request, two messages with the wrong frames, a 2 MiB frame (past the size at which
# libzmq drops the connection) and valid requests; and plain bytes that are not ZeroMQ at all
# on its TCP port (an HTTP request, random bytes). The bad requests with a usable envelope must
# be answered with an error and no content, the others dropped; valid requests before and
# after must be answered; the collector must still run, answer mpiwatch-feed --job and
# --last, and at the end count every bad request by reason in its log.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
MW_COLLECTOR=$1
loadgen=$2
feed=$3
garbage=$4
python=$MW_PYTHON
mw_init feed_badinput
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
dir=$MW_T

port=$("$python" -c '
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')
hist=tcp://127.0.0.1:$port
mw_start_collector --quiet --summary-json "$dir/summary.json" --silence-timeout-ms 30000 \
    --history "$hist" --publish "$FEED_PUB"
"$loadgen" --connect "$MW_EP" --ranks 16 --rate 10 --functions 4 --seconds 1 --job feedbad \
    2>"$dir/loadgen.err" || { MW_FAILURE_LOG=$dir/loadgen.err; mw_fail "mpiwatch-loadgen failed"; }
feed_wait_file "$dir/summary.json" 30

"$garbage" "$hist" >"$dir/garbage.json" 2>"$dir/garbage.err" ||
    { MW_FAILURE_LOG=$dir/garbage.err; mw_fail "mw-feed-garbage: $(cat "$dir/garbage.json")"; }
# Bytes that are not ZeroMQ: libzmq drops the connection during the handshake.
exec 3<>"/dev/tcp/127.0.0.1/$port" || mw_fail "cannot connect to $hist"
printf 'GET /history HTTP/1.0\r\n\r\n' >&3
head -c 65536 /dev/urandom >&3
exec 3>&-
kill -0 "$MW_CPID" 2>/dev/null || mw_fail "the collector died on bad requests"
"$feed" --history "$hist" --job >"$dir/job.json" 2>"$dir/job.err" ||
    mw_fail "--job after bad requests: $(cat "$dir/job.err")"
"$feed" --history "$hist" --last 5 --dealer >"$dir/last.json" 2>"$dir/last.err" ||
    mw_fail "--last after bad requests: $(cat "$dir/last.err")"
mw_stop_collector

"$python" - "$dir" <<'PY' || mw_fail "output check"
import json, re, sys
d = sys.argv[1]
errors = []
g = json.load(open(f"{d}/garbage.json"))
job = json.load(open(f"{d}/job.json"))
last = json.load(open(f"{d}/last.json"))
if (job["job"] or {}).get("job") != "feedbad":
    errors.append(f"--job: {job}")
if len(last["windows"]) != 5:
    errors.append(f"--last 5: {len(last['windows'])} windows")
log = open(f"{d}/collector.err").read()
m = re.search(r"history: (\d+) requests, (\d+) answered, (\d+) errors.*bad requests: (.*)", log)
if not m:
    errors.append("no feed line in the collector's log")
else:
    bad = {k: int(v) for k, v in (kv.rsplit(" ", 1) for kv in m.group(4).split(", "))}
    want = dict(g["expected"])
    if bad != {**{k: 0 for k in bad}, **want}:
        errors.append(f"bad requests counted {bad}, want {want}")
    # garbage: 4 error replies, 1 job, 1 job after the 2 MiB frame; then --job and --last.
    got = [int(x) for x in m.group(1, 2, 3)]
    if got != [8, 8, 4]:
        errors.append(f"requests, answered, errors: {got}, want [8, 8, 4]")
for e in errors:
    print("mismatch:", e)
sys.exit(1 if errors else 0)
PY
mw_log "ok"
