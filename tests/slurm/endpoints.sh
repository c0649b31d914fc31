#!/bin/bash
# endpoints.sh: the endpoints the collector binds and reports, and its missing-ranks status
# (docs/collector.md, docs/launcher.md "Exit status"). No Slurm needed.
#
# - A port out of range (tcp://127.0.0.1:99999, which libzmq would bind as port 34463), a tcp
#   endpoint without a port and an unknown transport are refused at start (exit 2) with the
#   real reason, on every socket option; an unknown transport is not called "not local".
# - tcp://127.0.0.1:* and :0: the collector logs the port the system chose (ZMQ_LAST_ENDPOINT)
#   and writes it to --endpoints-file (never through a symbolic link planted at FILE.tmp), and
#   that port is the one listening.
# - --expect-ranks: a bad value is refused (exit 2); "any" with no hello ends with status 3
#   and "Missing ranks" in the report; without the option the same run ends with status 0.

. "$(dirname "$0")/../integration/lib.sh"
mw_setup slurm_endpoints
C=$MW_COLLECTOR

# mw_refused WANT ARGS...: the collector exits 2 and says WANT (a fixed string) on stderr.
mw_refused() {
    local want=$1 rc
    shift
    "$C" "$@" >"$MW_T/out" 2>"$MW_T/err" </dev/null
    rc=$?
    [ "$rc" = 2 ] || mw_fail "collector $* exited $rc, not 2: $(cat "$MW_T/err")"
    grep -qF -- "$want" "$MW_T/err" || mw_fail "collector $*: expected \"$want\", got: $(cat "$MW_T/err")"
}
mw_refused '--listen tcp://127.0.0.1:99999: the port must be a number from 1 to 65535, or * (or 0)' \
    --listen tcp://127.0.0.1:99999
mw_refused '--publish tcp://127.0.0.1:65536: the port must be' --listen "$MW_EP" --publish tcp://127.0.0.1:65536
mw_refused '--steer tcp://127.0.0.1:-5: the port must be' --listen "$MW_EP" --steer tcp://127.0.0.1:-5
mw_refused '--listen tcp://127.0.0.1: a tcp endpoint is tcp://HOST:PORT' --listen tcp://127.0.0.1
mw_refused "--control udp://127.0.0.1:5: unknown transport 'udp://'" --listen "$MW_EP" --control udp://127.0.0.1:5
mw_refused "--history /tmp/x is not an endpoint" --listen "$MW_EP" --history /tmp/x
if grep -q 'not local' "$MW_T/err"; then mw_fail "an unknown transport was called not local"; fi
mw_refused "--expect-ranks: expected a number of ranks or any, not 'many'" --listen "$MW_EP" --expect-ranks many

# Ports chosen by the system, read back and written out. A symbolic link planted where the
# file's temporary used to be (FILE.tmp, a shared directory) must not be written through.
echo precious >"$MW_T/victim"
ln -s "$MW_T/victim" "$MW_T/bound.tmp"
"$C" --listen 'tcp://127.0.0.1:*' --steer tcp://127.0.0.1:0 --endpoints-file "$MW_T/bound" \
    --quiet --expect-ranks any --report "$MW_T/report.txt" >"$MW_T/out" 2>"$MW_T/collector.err" </dev/null &
MW_CPID=$!
for ((i = 0; i < 200; i++)); do
    [ ! -s "$MW_T/bound" ] || break
    sleep 0.05
done
[ -s "$MW_T/bound" ] || mw_fail "no --endpoints-file within 10 s"
[ "$(cat "$MW_T/victim")" = precious ] || mw_fail "--endpoints-file wrote through a planted FILE.tmp link"
[ ! -L "$MW_T/bound" ] || mw_fail "--endpoints-file is a symbolic link"
port=$(sed -n 's|^ingest-socket tcp://127\.0\.0\.1:\([0-9]*\)$|\1|p' "$MW_T/bound")
sport=$(sed -n 's|^steering tcp://127\.0\.0\.1:\([0-9]*\)$|\1|p' "$MW_T/bound")
if [ -z "$port" ] || [ -z "$sport" ] || [ "$port" = 0 ] || [ "$sport" = 0 ]; then
    mw_fail "the endpoints file lacks the ports bound: $(cat "$MW_T/bound")"
fi
grep -q "info: listening on tcp://127.0.0.1:$port (asked for tcp://127.0.0.1:\*)" "$MW_T/collector.err" ||
    mw_fail "the log does not give the port bound"
grep -q "info: steering on tcp://127.0.0.1:$sport (asked for tcp://127.0.0.1:0)" "$MW_T/collector.err" ||
    mw_fail "the log does not give the steering port bound"
ss -Hltn "sport = :$port" | grep -q . || mw_fail "nothing listens on the reported port $port"
kill -TERM "$MW_CPID"
wait "$MW_CPID"
rc=$?
MW_CPID=''
[ "$rc" = 3 ] || mw_fail "--expect-ranks any and no hello: exit status $rc, not 3"
grep -q '^Missing ranks$' "$MW_T/report.txt" || mw_fail "no Missing ranks section: $(cat "$MW_T/report.txt")"
grep -q '^  no rank said hello (the launcher.s rank count is unknown)$' "$MW_T/report.txt" ||
    mw_fail "the report does not say no rank said hello"
grep -q "cannot reach tcp://127.0.0.1:$port " "$MW_T/report.txt" || mw_fail "the report does not name the endpoint bound"

# The same without --expect-ranks: status 0, no section (as before).
"$C" --listen "$MW_EP" --quiet --report "$MW_T/report0.txt" >"$MW_T/out" 2>"$MW_T/collector.err" </dev/null &
MW_CPID=$!
sleep 0.5
kill -TERM "$MW_CPID"
wait "$MW_CPID"
rc=$?
MW_CPID=''
[ "$rc" = 0 ] || mw_fail "no --expect-ranks: exit status $rc, not 0"
if grep -q 'Missing ranks' "$MW_T/report0.txt"; then mw_fail "Missing ranks without --expect-ranks"; fi
mw_log "ok"
