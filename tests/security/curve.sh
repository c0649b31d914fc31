#!/bin/bash
# curve.sh: CURVE on the collector's sockets, on tcp://127.0.0.1 (docs/security.md).
#  1. A 4-rank known_c job whose ranks have an authorized key (MPIWATCH_CURVE_SERVER,
#     MPIWATCH_CURVE_KEY) delivers its data: the summary has exactly the known pattern; no
#     connection was refused.
#  2. steer_cb on 4 ranks, whose steering SUB sockets are CURVE clients too, with --steer and
#     --control on CURVE: `mpiwatch steer` with an authorized key (given through the
#     environment) is published (seq 1) and reaches every rank's callback exactly once;
#     `mpiwatch steer` with no key and with a key the collector does not know, a plain ZeroMQ
#     DEALER (NULL mechanism) on the control socket and a plain SUB on the steering socket are
#     refused, and so is a client with another collector's public key: the tools say so
#     (exit 1), no callback runs for them, the collector counts exactly 1 unauthorized key,
#     3 peers without CURVE and 1 wrong server key (in --stats-json and, while the job runs,
#     on the Prometheus page), refuses nothing else, logs the refusals with
#     the socket and (for the key) the peer address, and stays up until the job ends. The same
#     plain client with the right keys gets in, and its bogus request is still refused by the
#     steering checks (steer_rejected 1).
. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"
mw_setup security_curve
mw_require MW_LAUNCHER MW_ZMQ_CLIENT
cd "$MW_T" || mw_fail "cd $MW_T"
for p in known_c steer_cb; do
    [ -x "$MW_PROGRAMS/$p" ] || mw_fail "program not built: $MW_PROGRAMS/$p"
done
free_port() {
    "$MW_PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
ING="tcp://127.0.0.1:$(free_port)"
STEER="tcp://127.0.0.1:$(free_port)"
CTL="tcp://127.0.0.1:$(free_port)"
for k in coll rogue; do "$MW_LAUNCHER" keygen "$k" >/dev/null || mw_fail "keygen $k"; done
mkdir -m 755 clients
for k in ranks op; do "$MW_LAUNCHER" keygen "clients/$k" >/dev/null || mw_fail "keygen $k"; done
curve=(--curve-secret "$MW_T/coll.key" --curve-clients "$MW_T/clients")
rank_keys=(-x MPIWATCH_CURVE_SERVER="$MW_T/coll.pub" -x MPIWATCH_CURVE_KEY="$MW_T/clients/ranks.key")

# check_refused UNAUTHORIZED PLAIN CRYPTO: the stats' exact auth_refused counts. A peer without CURVE
# is counted as "mechanism" when the collector reads its greeting first, as "handshake" when
# the peer sees the collector's greeting first and hangs up (a race inside libzmq): each one
# is counted once, under one of the two.
check_refused() {
    "$MW_PYTHON" - "$MW_T/stats.json" "$1" "$2" "$3" <<'PY' || mw_fail "refusals counted: $(cat "$MW_T/stats.json")"
import json, sys
got = json.load(open(sys.argv[1]))["auth_refused"]
unauthorized, plain, crypto = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
if (sorted(got) != ["crypto", "handshake", "mechanism", "unauthorized"] or
        got["unauthorized"] != unauthorized or got["crypto"] != crypto or
        got["mechanism"] + got["handshake"] != plain):
    sys.exit(f"auth_refused {got}: expected {unauthorized} unauthorized, {plain} plain peers, "
             f"{crypto} crypto")
PY
}

# 1. Data over CURVE.
n=5000
mw_start_collector --quiet --exit-after-job --listen "$ING" "${curve[@]}" \
    --summary-json "$MW_T/summary.json" --stats-json "$MW_T/stats.json"
"$MW_MPIRUN" --oversubscribe -np "$MW_NP" -x LD_PRELOAD="$MW_LIB" -x MPIWATCH_COLLECTOR="$ING" \
    -x MPIWATCH_WINDOW_MS "${rank_keys[@]}" "$MW_PROGRAMS/known_c" "$n" >known.out 2>known.err ||
    mw_fail "known_c failed: $(head -c 1000 known.err)"
grep -q "^known_c: $MW_NP ranks, N=$n, pattern ok" known.out || mw_fail "known_c: $(cat known.out)"
mw_wait_collector 30
mw_check --pattern known --n "$n" --label known_c
check_refused 0 0 0

# 2. Steering over CURVE, and the refused ones.
rm -f "$MW_T/summary.json" "$MW_T/stats.json" ready stop
: >"$MW_T/collector.err"
mport=$(free_port)
mw_start_collector --quiet --exit-after-job --listen "$ING" --steer "$STEER" --control "$CTL" \
    "${curve[@]}" --summary-json "$MW_T/summary.json" --stats-json "$MW_T/stats.json" \
    --metrics-port "$mport"
"$MW_MPIRUN" --oversubscribe -np "$MW_NP" -x LD_PRELOAD="$MW_LIB" -x MPIWATCH_COLLECTOR="$ING" \
    -x MPIWATCH_WINDOW_MS -x MPIWATCH_STEER="$STEER" "${rank_keys[@]}" \
    "$MW_PROGRAMS/steer_cb" mpi "$MW_T" >steer_cb.out 2>steer_cb.err &
job=$!
mw_wait_file ready "$job" || mw_fail "steer_cb never got ready: $(head -c 1000 steer_cb.err)"
sleep 1 # the ranks' subscriptions reach the collector

# expect_refused NAME MESSAGE COMMAND...: exit status 1 and MESSAGE on stderr.
expect_refused() {
    local name=$1 want=$2 rc=0
    shift 2
    "$@" >"$name.out" 2>&1 || rc=$?
    [ "$rc" = 1 ] || mw_fail "$name: exit status $rc, not 1: $(cat "$name.out")"
    grep -qF -- "$want" "$name.out" || mw_fail "$name: expected '$want': $(cat "$name.out")"
}
expect_refused nokey "mpiwatch-steer: rejected: $CTL refused the connection: " \
    env -u MPIWATCH_CURVE_SERVER -u MPIWATCH_CURVE_KEY "$MW_LAUNCHER" steer "$CTL" app.msg=nokey
expect_refused rogue "refused the connection: the server refused this client's key (ZAP status 400: not authorized" \
    "$MW_LAUNCHER" steer --curve-server "$MW_T/coll.pub" --curve-key "$MW_T/rogue.key" "$CTL" app.msg=rogue
expect_refused plain_dealer "refused: event" "$MW_ZMQ_CLIENT" "$CTL" dealer
expect_refused plain_sub "refused: event" "$MW_ZMQ_CLIENT" "$STEER" sub
# A client that has another collector's public key: its CURVE hello does not decrypt.
expect_refused wrong_server "refused: event" \
    "$MW_ZMQ_CLIENT" "$CTL" dealer "$MW_T/rogue.pub" "$MW_T/clients/op.key"
# The same client with the right keys gets in (so the refusals above are not the helper's
# doing), and what it sends ("hello", not a SteerRequest) is still checked: steer_rejected 1.
"$MW_ZMQ_CLIENT" "$CTL" dealer "$MW_T/coll.pub" "$MW_T/clients/op.key" >authorized.out 2>&1 ||
    mw_fail "an authorized plain client was refused: $(cat authorized.out)"
grep -qx accepted authorized.out || mw_fail "authorized client: $(cat authorized.out)"
kill -0 "$MW_CPID" 2>/dev/null || mw_fail "the collector died"

MPIWATCH_CURVE_SERVER="$MW_T/coll.pub" MPIWATCH_CURVE_KEY="$MW_T/clients/op.key" \
    "$MW_LAUNCHER" steer "$CTL" app.msg=secure-hello >op.out 2>&1 ||
    mw_fail "authorized steer failed: $(cat op.out)"
grep -qx "sent app.msg=secure-hello (seq 1)" op.out || mw_fail "authorized steer: $(cat op.out)"
sleep 1
# The same refusals on the Prometheus page, while the job runs.
"$MW_PYTHON" - "$mport" <<'PY' || mw_fail "/metrics does not show the refusals (above)"
import re, sys, urllib.request
text = urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=5).read().decode()
got = {m[0]: int(m[1]) for m in
       re.findall(r'^mpiwatch_connections_refused_total\{job="[^"]*",reason="(\w+)"\} (\d+)$',
                  text, re.M)}
print("metrics:", got)
assert sorted(got) == ["crypto", "handshake", "mechanism", "unauthorized"], got
assert got["unauthorized"] == 1 and got["crypto"] == 1, got
assert got["mechanism"] + got["handshake"] == 3, got
PY
touch stop
wait "$job" || mw_fail "steer_cb failed: $(head -c 1000 steer_cb.err)"
cat steer_cb.out
for ((r = 0; r < MW_NP; r++)); do
    [ "$(grep -c "^rank $r: " steer_cb.out)" = 1 ] || mw_fail "rank $r: not exactly one message"
    grep -qx "rank $r: app.msg=secure-hello thread=app via=mpi" steer_cb.out ||
        mw_fail "rank $r did not get the authorized message"
done
grep -q "^steer_cb: mpi, $MW_NP ranks, done" steer_cb.out || mw_fail "steer_cb did not finish"
mw_wait_collector 30
check_refused 1 3 1
"$MW_PYTHON" - "$MW_T" "$MW_NP" <<'PY' || mw_fail "stats or summary: $(cat "$MW_T/stats.json")"
import json, sys
d, np = sys.argv[1], int(sys.argv[2])
stats = json.load(open(f"{d}/stats.json"))
summary = json.load(open(f"{d}/summary.json"))
assert stats["steer_rejected"] == 1, stats
assert sum(stats["rejected"].values()) == 0, stats["rejected"]
assert summary["ranks"] == np and len(summary["per_rank"]) == np, summary["ranks"]
assert summary["functions"]["MPI_Bcast"]["count"] > 0, summary["functions"]
PY
log=$MW_T/collector.err
grep -q "warning: refused a peer of the steering control ($CTL) from 127.0.0.1: unauthorized: client key not authorized $(sed -n 's/^public-key = //p' rogue.pub | sed 's/[]\[^$.*/]/\\&/g')" "$log" ||
    mw_fail "no log line for the unauthorized key"
grep -Eq "warning: refused a peer of the steering control \($CTL\): (mechanism: the peer does not use CURVE|handshake: the peer hung up)" "$log" ||
    mw_fail "no log line for the control socket's plain peers"
grep -Eq "warning: refused a peer of the steering \($STEER\): (mechanism: the peer does not use CURVE|handshake: the peer hung up)" "$log" ||
    mw_fail "no log line for the steering socket's plain peer"
echo "curve: ok"
