#!/bin/bash
# bind.sh COLLECTOR: --metrics-bind ADDR (docs/metrics.md, docs/security.md).
#
#  - by default the page is on 127.0.0.1 only: it answers there and, when this host has a
#    non-loopback IPv4 address, not on that address;
#  - --metrics-bind ::1 serves it on IPv6 loopback (skipped part when the host has no IPv6);
#  - a non-loopback address (0.0.0.0, ::, this host's own address) without --allow-insecure:
#    exit 2 before binding anything, with the message; the same from a --config file;
#  - with --allow-insecure: it starts, warns once, and answers on this host's address;
#  - a bad address (a name, garbage, an IPv4 with a port): exit 2 with the message;
#  - --print-config shows the key.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
MW_COLLECTOR=$1
py=${MW_PYTHON:-/usr/bin/python3}
mw_init metrics_bind

free_port() {
    "$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# get URL: 0 when GET URL answers 200 within 2 s.
get() {
    "$py" -c 'import sys, urllib.request as u; sys.exit(0 if u.urlopen(sys.argv[1], timeout=2).status == 200 else 1)' \
        "$1" 2>/dev/null
}
host_ip=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9.]+$' | grep -v '^127\.' | head -n 1)

# Refusals: exit 2, the message, nothing started.
refuse() {
    local want=$1 rc
    shift
    "$MW_COLLECTOR" --listen "ipc://$MW_T/r" --metrics-port "$(free_port)" "$@" \
        >"$MW_T/r.out" 2>"$MW_T/r.err"
    rc=$?
    [ "$rc" = 2 ] || mw_fail "$* exited with $rc, want 2: $(cat "$MW_T/r.err")"
    grep -qF -- "$want" "$MW_T/r.err" || mw_fail "$*: no '$want' in: $(cat "$MW_T/r.err")"
}
refuse "--metrics-bind 0.0.0.0 is not loopback and the metrics page has no authentication: add --allow-insecure" \
    --metrics-bind 0.0.0.0
refuse "--metrics-bind :: is not loopback" --metrics-bind ::
[ -z "$host_ip" ] || refuse "--metrics-bind $host_ip is not loopback" --metrics-bind "$host_ip"
printf '[collector]\nmetrics-bind = 0.0.0.0\n' >"$MW_T/bind.ini"
refuse "is not loopback" --config "$MW_T/bind.ini"
for bad in localhost 1.2.3 '127.0.0.1:80' '[127.0.0.1]' 'fe80::1%lo x'; do
    refuse "--metrics-bind: '$bad' is not a numeric IPv4 or IPv6 address" --metrics-bind "$bad"
done
"$MW_COLLECTOR" --listen "ipc://$MW_T/r" --metrics-bind ::1 --print-config >"$MW_T/p.ini" ||
    mw_fail "--print-config failed"
grep -qx "metrics-bind = ::1" "$MW_T/p.ini" || mw_fail "--print-config: no 'metrics-bind = ::1'"

# The default: loopback only.
port=$(free_port)
mw_start_collector --quiet --metrics-port "$port"
for _ in $(seq 50); do get "http://127.0.0.1:$port/metrics" && break; sleep 0.1; done
get "http://127.0.0.1:$port/metrics" || mw_fail "default: no page on 127.0.0.1:$port"
if [ -n "$host_ip" ]; then
    ! get "http://$host_ip:$port/metrics" || mw_fail "default: the page answers on $host_ip"
else
    mw_log "no non-loopback IPv4 address here: not checking that the default is loopback only"
fi
grep -q "metrics on http://127.0.0.1:$port/metrics" "$MW_T/collector.err" ||
    mw_fail "default: no 'metrics on http://127.0.0.1:$port/metrics' in the log"
kill -TERM "$MW_CPID"
mw_collector_exits 10

# IPv6 loopback.
if "$py" -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
    port=$(free_port)
    mw_start_collector --quiet --metrics-port "$port" --metrics-bind '[::1]'
    for _ in $(seq 50); do get "http://[::1]:$port/metrics" && break; sleep 0.1; done
    get "http://[::1]:$port/metrics" || mw_fail "::1: no page on [::1]:$port"
    ! get "http://127.0.0.1:$port/metrics" || mw_fail "::1: the page answers on 127.0.0.1"
    grep -q "metrics on http://\[::1\]:$port/metrics" "$MW_T/collector.err" ||
        mw_fail "::1: no 'metrics on http://[::1]:$port/metrics' in the log"
    ! grep -q "not loopback" "$MW_T/collector.err" || mw_fail "::1: warned as not loopback"
    kill -TERM "$MW_CPID"
    mw_collector_exits 10
else
    mw_log "no IPv6 loopback here: --metrics-bind ::1 not checked"
fi

# Not loopback, explicitly allowed: a warning, and the page on the host's address.
port=$(free_port)
: >"$MW_T/collector.err"
mw_start_collector --quiet --metrics-port "$port" --metrics-bind 0.0.0.0 --allow-insecure
target=${host_ip:-127.0.0.1}
for _ in $(seq 50); do get "http://$target:$port/metrics" && break; sleep 0.1; done
get "http://$target:$port/metrics" || mw_fail "0.0.0.0: no page on $target:$port"
[ "$(grep -c "metrics page on 0.0.0.0:$port is not loopback and has no authentication" \
    "$MW_T/collector.err")" = 1 ] || mw_fail "0.0.0.0 --allow-insecure: not one warning"
kill -TERM "$MW_CPID"
mw_collector_exits 10
echo "metrics_bind: ok"
