#!/bin/bash
# forge.sh COLLECTOR LOADGEN KEYGEN: partials and AggStates are tied to the connection that
# announced their aggregator (docs/aggregator.md, "Accounting"). A root with CURVE takes
# aggregator 0 (a real mpiwatch-collector --upstream fed by 16 emulated ranks) and a second
# authorized CURVE client, a forger played by pyzmq, that sends Partials and an AggState under
# aggregator 0's id (its host and pid) once aggregator 0 has announced itself. Every forged
# message is refused with reason "connection" (stats JSON, logged), every partial of the real
# aggregator is merged, and the root's totals are exactly the generator's. Skipped (77) without
# pyzmq or the generated protobuf module.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
MW_COLLECTOR=$1
LOADGEN=$2
KEYGEN=$3
agg_begin aggregator_forge
"$MW_PYTHON" -c 'import zmq' 2>/dev/null || mw_skip "no python3-zmq (Debian: python3-zmq)"
[ -s "${MW_PB2_DIR:-}/mpiwatch_pb2.py" ] || mw_skip "no generated mpiwatch_pb2.py (protoc)"


mkdir -m 700 "$d/keys" "$d/aggs"
for k in root agg forger; do
    "$KEYGEN" "$d/keys/$k" >/dev/null || mw_fail "keygen $k"
done
cp "$d/keys/agg.pub" "$d/keys/forger.pub" "$d/aggs/"
port=$("$MW_PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$MW_COLLECTOR" --listen "tcp://127.0.0.1:$port" --curve-secret "$d/keys/root.key" \
    --curve-clients "$d/aggs" --exit-after-job --silence-timeout-ms 5000 \
    --summary-json "$d/root.json" --stats-json "$d/root-stats.json" </dev/null \
    >"$d/root.out" 2>"$d/root.err" &
root=$!
PIDS+=("$root")
"$MW_COLLECTOR" -q --listen "ipc://$d/agg" --upstream "tcp://127.0.0.1:$port" \
    --upstream-curve-server "$d/keys/root.pub" --upstream-curve-secret "$d/keys/agg.key" \
    --aggregator-id 0 --expect-ranks 16 --exit-after-job --stats-json "$d/agg-stats.json" \
    </dev/null >"$d/agg.out" 2>"$d/agg.err" &
agg=$!
PIDS+=("$agg")
agg_wait_sockets "$d/agg"
"$LOADGEN" --connect "ipc://$d/agg" --ranks 16 --rate 10 --functions 6 --seconds 4 \
    --job forge --totals-json "$d/lg.json" </dev/null >"$d/lg.out" 2>"$d/lg.err" &
lg=$!
PIDS+=("$lg")

# The forger: once the root knows aggregator 0 (its log says so), 3 Partials and an AggState
# that claim to be aggregator 0's, from another authorized key.
for _ in $(seq 1 100); do
    grep -q "aggregator 0 .* joined the job" "$d/root.err" && break
    sleep 0.1
done
grep -q "aggregator 0 .* joined the job" "$d/root.err" || mw_fail "the root never saw aggregator 0"
"$MW_PYTHON" - "$d" "$port" "$agg" >"$d/forger.out" 2>"$d/forger.err" <<'PY' ||
import importlib.util, os, socket, sys, time
import zmq

d, port, agg_pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
spec = importlib.util.spec_from_file_location(
    "mpiwatch_pb2", os.path.join(os.environ["MW_PB2_DIR"], "mpiwatch_pb2.py"))
pb = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pb)


def key(path, name):
    for line in open(path):
        if line.startswith(name):
            return line.split("=", 1)[1].strip().encode()
    raise SystemExit(f"no {name} in {path}")


ctx = zmq.Context()
s = ctx.socket(zmq.PUSH)
s.curve_publickey = key(f"{d}/keys/forger.key", "public-key")
s.curve_secretkey = key(f"{d}/keys/forger.key", "secret-key")
s.curve_serverkey = key(f"{d}/keys/root.pub", "public-key")
s.setsockopt(zmq.LINGER, 3000)
s.connect(f"tcp://127.0.0.1:{port}")
for seq in range(3):
    e = pb.Envelope(version=1, job="forge", rank=0, seq=1000 + seq)
    e.partial.window.index = 1
    f = e.partial.window.functions.add()
    f.fn = 1
    f.count = 1000000
    e.partial.rank_first.append(0)
    e.partial.rank_count.append(16)
    e.partial.samples = 16
    s.send(e.SerializeToString())
e = pb.Envelope(version=1, job="forge", rank=0, seq=2000)
e.agg.id = 0
e.agg.host = socket.gethostname()
e.agg.pid = agg_pid
e.agg.ranks = 16
s.send(e.SerializeToString())
time.sleep(0.5)
s.close()
ctx.term()
PY
    mw_fail "the forger failed"
wait "$lg" || mw_fail "the load generator failed"
agg_wait_exit 30 "$agg" "$root"
grep -q "partial of aggregator 0 from key:.* refused: its first AggState came from key:" \
    "$d/root.err" || mw_fail "the root did not log the forged partials"

"$MW_PYTHON" - "$d" <<'PY' || mw_fail "check"
import json, sys

d = sys.argv[1]
lg = json.load(open(f"{d}/lg.json"))
root = json.load(open(f"{d}/root.json"))
stats = json.load(open(f"{d}/root-stats.json"))
up = json.load(open(f"{d}/agg-stats.json"))["upstream"]
errors = []


def check(what, got, want):
    if got != want:
        errors.append(f"{what}: got {got!r}, want {want!r}")


check("refused: connection", stats["rejected"].get("connection"), 4)
others = {r: n for r, n in stats["rejected"].items() if n and r != "connection"}
check("other refusals", others, {})
missed = root["missed"]
for name, f in lg["functions"].items():
    got = root["functions"].get(name, {}).get("count", 0)
    got += missed["functions"].get(name, {}).get("count", 0)
    check(f"{name}: summary + missed", got, f["count"])
total = sum(f["count"] for f in lg["functions"].values())
check("at_ranks.calls", missed["at_ranks"]["calls"], total)
aggs = root.get("aggregators", [])
check("aggregators", [a["id"] for a in aggs], [0])
for a in aggs:
    check("partials merged", a["partials_merged"], up["partials_sent"])
for e in errors:
    print("  " + e, file=sys.stderr)
print(f"forged messages refused: {stats['rejected'].get('connection')}; calls {total}")
sys.exit(1 if errors else 0)
PY
mw_log "ok"
