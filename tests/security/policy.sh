#!/bin/bash
# policy.sh: the collector's start-up policy (docs/security.md) on the executable.
#   - an endpoint that is not local (wildcard, another address), on any socket the collector
#     binds (--listen, --publish, --history, --steer, --control), without CURVE: exit 2 before
#     binding anything, with a message naming the option, the endpoint and the fix;
#   - the same with --allow-insecure: it starts, binds and warns;
#   - loopback and ipc:// need nothing; CURVE on loopback works;
#   - the same settings from the [collector] section of --config;
#   - --curve-secret without --curve-clients, a .key as the client list: exit 2.
. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"
mw_init security_policy
mw_require MW_LAUNCHER MW_COLLECTOR
cd "$MW_T" || mw_fail "cd $MW_T"
port=$("$MW_PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# refused EXPECTED_MESSAGE ARGS...: the collector exits 2 with that message, binding nothing.
refused() {
    local want=$1 rc=0
    shift
    "$MW_COLLECTOR" "$@" >out.txt 2>err.txt || rc=$?
    [ "$rc" = 2 ] || mw_fail "$*: exit status $rc, not 2 ($(cat err.txt))"
    grep -qF -- "$want" err.txt || mw_fail "$*: expected '$want', got: $(cat err.txt)"
    [ ! -S "$MW_T/x" ] || mw_fail "$*: bound an ipc socket before refusing"
}
fix="is not local (ipc://PATH or loopback): use CURVE (--curve-secret FILE --curve-clients FILE_OR_DIR, docs/security.md) or --allow-insecure"
refused "--listen tcp://*:$port $fix" --listen "tcp://*:$port"
refused "--listen tcp://0.0.0.0:$port $fix" --listen "ipc://$MW_T/x" --listen "tcp://0.0.0.0:$port"
refused "--publish tcp://[::]:$port $fix" --listen "ipc://$MW_T/x" --publish "tcp://[::]:$port"
refused "--history tcp://*:$port $fix" --listen "ipc://$MW_T/x" --history "tcp://*:$port"
refused "--steer tcp://*:$port $fix" --listen "ipc://$MW_T/x" --steer "tcp://*:$port"
refused "--control tcp://*:$port $fix" --listen "ipc://$MW_T/x" --control "tcp://*:$port"
ip=$(hostname -I 2>/dev/null | awk '{print $1}')
[ -z "$ip" ] || refused "--listen tcp://$ip:$port $fix" --listen "tcp://$ip:$port"

# --allow-insecure: starts, listens on the wildcard, warns about it.
mw_start_collector --quiet --allow-insecure --control "tcp://*:$port"
grep -q "warning: the steering control on tcp://\*:$port is not local and has no authentication (--allow-insecure)" \
    "$MW_T/collector.err" || mw_fail "no warning for an insecure endpoint: $(cat "$MW_T/collector.err")"
# Reachable without keys: the request gets the collector's own answer (no --steer here).
"$MW_LAUNCHER" steer --timeout-ms 3000 "tcp://127.0.0.1:$port" app.x=1 >steer.out 2>&1 || true
grep -q "rejected: steering is off (no --steer)" steer.out ||
    mw_fail "--allow-insecure: control not reachable: $(cat steer.out)"
mw_stop_collector

# Local endpoints need nothing (no warning).
: >"$MW_T/collector.err"
mw_start_collector --quiet --control "tcp://127.0.0.1:$port" --publish "ipc://$MW_T/feed"
grep -q "warning" "$MW_T/collector.err" && mw_fail "a warning for local endpoints: $(cat "$MW_T/collector.err")"
mw_stop_collector

# The same policy from --config; keys in the file; flags as usual.
mw_curve_keys op "$MW_LAUNCHER" keygen
cat >insecure.ini <<INI
[collector]
control = tcp://*:$port
INI
refused "--control tcp://*:$port $fix" --listen "ipc://$MW_T/x" --config insecure.ini
echo "allow-insecure = true" >>insecure.ini
: >"$MW_T/collector.err"
mw_start_collector --quiet --config insecure.ini
grep -q "steering control on tcp://\*:$port is not local" "$MW_T/collector.err" || mw_fail "config: no warning"
mw_stop_collector
cat >curve.ini <<INI
[collector]
control = tcp://*:$port
curve-secret = $MW_T/coll.key
curve-clients = $MW_T/clients
INI
: >"$MW_T/collector.err"
mw_start_collector --quiet --config curve.ini
grep -q "CURVE on: server key .*, 1 authorized client key$" "$MW_T/collector.err" ||
    mw_fail "config: CURVE not on: $(cat "$MW_T/collector.err")"
grep -q "warning" "$MW_T/collector.err" && mw_fail "CURVE: a warning: $(cat "$MW_T/collector.err")"
"$MW_COLLECTOR" --config curve.ini --print-config >printed.ini || mw_fail "--print-config"
{ grep -qx "curve-secret = $MW_T/coll.key" printed.ini && grep -qx "curve-clients = $MW_T/clients" printed.ini &&
    grep -qx "allow-insecure = false" printed.ini; } || mw_fail "--print-config: $(cat printed.ini)"
mw_stop_collector

# CURVE options that do not go together, and a secret key in place of the client list.
refused "--curve-secret needs --curve-clients FILE_OR_DIR" --listen "ipc://$MW_T/x" --curve-secret coll.key
refused "--curve-clients needs --curve-secret FILE" --listen "ipc://$MW_T/x" --curve-clients clients
refused "coll.key:5: a secret key where only public keys belong" --listen "ipc://$MW_T/x" \
    --curve-secret coll.key --curve-clients coll.key
refused "missing.key: No such file or directory" --listen "ipc://$MW_T/x" \
    --curve-secret missing.key --curve-clients clients
echo "policy: ok"
