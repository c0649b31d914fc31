#!/bin/bash
# endpoints.sh: which endpoints the collector treats as local (docs/security.md, "Which
# endpoints are local"), on the executable.
#   - an abstract ipc://@name socket has no file and so no permissions: any local user can
#     connect. Without CURVE it is refused (exit 2, the option and endpoint named) on --listen
#     and --publish; with --allow-insecure it starts and warns; and the attack is performed: a
#     plain ZeroMQ client of another user (nobody) connects to it, which is why it is refused;
#   - tcp://localhost is local when the name resolves to loopback only: here it starts with no
#     warning;
#   - the attack on a name: in a private mount namespace whose /etc/hosts maps localhost to a
#     non-loopback address (what a changed hosts file or resolver does), the same command is
#     refused (exit 2) instead of binding to that address without authentication.
. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"
mw_init security_endpoints
mw_require MW_COLLECTOR MW_ZMQ_CLIENT
cd "$MW_T" || mw_fail "cd $MW_T"
port=$("$MW_PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
abstract="ipc://@mw-test-endpoints-$$"

# refused EXPECTED_MESSAGE ARGS...: the collector exits 2 with that message (a collector that
# accepts the endpoint runs until the timeout: status 124).
refused() {
    local want=$1 rc=0
    shift
    timeout 20 "$MW_COLLECTOR" "$@" >out.txt 2>err.txt || rc=$?
    [ "$rc" = 2 ] || mw_fail "$*: exit status $rc, not 2 ($(cat err.txt))"
    grep -qF -- "$want" err.txt || mw_fail "$*: expected '$want', got: $(cat err.txt)"
}
fix="is not local (ipc://PATH or loopback): use CURVE"
refused "--listen $abstract $fix" --listen "$abstract"
refused "--publish $abstract $fix" --listen "ipc://$MW_T/x" --publish "$abstract"

# With --allow-insecure it starts and warns; another local user reaches it: the reason it needs
# CURVE. The client's ZMTP handshake completing shows the connection was accepted.
"$MW_COLLECTOR" --quiet --allow-insecure --listen "ipc://$MW_T/x" --control "$abstract" \
    </dev/null >collector.out 2>collector.err &
MW_CPID=$!
for ((i = 0; i < 200; i++)); do
    grep -q "steering control on $abstract is not local" collector.err && break
    kill -0 "$MW_CPID" 2>/dev/null || mw_fail "the collector exited: $(cat collector.err)"
    sleep 0.05
done
grep -q "warning: the steering control on $abstract is not local and has no authentication" \
    collector.err || mw_fail "no warning for an abstract socket: $(cat collector.err)"
# The premise of the rule, shown: another local user (nobody) completes a handshake with it.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
    setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$MW_ZMQ_CLIENT"; then
    setpriv --reuid=nobody --regid=nogroup --clear-groups "$MW_ZMQ_CLIENT" "$abstract" dealer \
        >nobody.out 2>&1
    grep -q "^accepted" nobody.out ||
        mw_fail "user nobody could not reach the abstract socket: $(cat nobody.out)"
    mw_log "user nobody completed a handshake with $abstract (no permission can stop it)"
fi
mw_stop_collector

# tcp://localhost resolving to loopback only: local, no warning.
getent ahosts localhost >hosts.txt || mw_skip "localhost does not resolve here"
if awk '{print $1}' hosts.txt | grep -qvE '^(127\.|::1$|::ffff:127\.)'; then
    mw_skip "localhost resolves to a non-loopback address on this machine: $(tr '\n' ' ' <hosts.txt)"
fi
: >"$MW_T/collector.err"
mw_start_collector --quiet --control "tcp://localhost:$port"
grep -q "warning" "$MW_T/collector.err" && mw_fail "a warning for localhost: $(cat "$MW_T/collector.err")"
mw_stop_collector

# The attack on the name: localhost mapped to 10.254.254.254 in a private /etc/hosts.
if [ "$(id -u)" != 0 ] || ! unshare -m true 2>/dev/null; then
    mw_skip "needs root and unshare -m for a private /etc/hosts (the rest passed)"
fi
printf '10.254.254.254 localhost\n' >evil-hosts
# shellcheck disable=SC2016 # the inner bash expands the single-quoted script
unshare -m bash -c 'mount --bind "$1" /etc/hosts && getent ahosts localhost >ns-hosts.txt &&
    exec "$2" --listen "ipc://$3/y" --control "tcp://localhost:$4"' _ \
    "$MW_T/evil-hosts" "$MW_COLLECTOR" "$MW_T" "$port" >out.txt 2>err.txt
rc=$?
grep -q "^10.254.254.254" ns-hosts.txt || mw_skip "the private /etc/hosts was not used: $(cat ns-hosts.txt)"
[ "$rc" = 2 ] || mw_fail "localhost resolving to 10.254.254.254: exit status $rc, not 2 ($(cat err.txt))"
grep -qF -- "--control tcp://localhost:$port $fix" err.txt ||
    mw_fail "localhost resolving elsewhere: expected the policy message, got: $(cat err.txt)"
mw_log "ok: ipc://@ refused, localhost local only while it resolves to loopback"
