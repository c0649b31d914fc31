#!/bin/bash
# stale.sh: entries of collectors that are gone (docs/attach.md, "Stale entries"):
#   - a collector registers at start (no job yet) and removes its entry on SIGTERM;
#   - a collector killed with SIGKILL leaves its entry: `mpiwatch ls` marks it stale (text and
#     JSON), `find` (view, top, steer) ignores it, `ls --prune` removes it (and its .pub);
#   - the next collector's start on the same host removes such an entry too;
#   - an entry of another host is live while it is rewritten, stale once not rewritten for a
#     minute (its file's age); its ipc:// endpoints are not offered (a path on that host);
#   - --registry off: no entry.
. "$(dirname "${BASH_SOURCE[0]}")/lib_attach.sh"
mw_attach_setup attach_stale

mw_start_collector --quiet
mw_ls_check 'len(jobs) == 1 and not jobs[0]["stale"] and jobs[0]["state"] == "waiting" and
    jobs[0]["pid"] == '"$MW_CPID"' and jobs[0]["endpoints"]["ingest"] == "'"$MW_EP"'"' ||
    mw_fail "a waiting collector is not listed: $(cat "$MW_T/ls.json" "$MW_T/ls.err")"
[ "$(stat -c %a "$MPIWATCH_REGISTRY")" = 700 ] || mw_fail "registry mode $(stat -c %a "$MPIWATCH_REGISTRY")"
mw_stop_collector
[ "$(mw_registry_entries)" = 0 ] || mw_fail "SIGTERM left the entry: $(ls "$MPIWATCH_REGISTRY")"

# The Prometheus page, when the collector serves one (built with MW_METRICS).
if ldd "$MW_COLLECTOR" | grep -q microhttpd; then
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    mw_start_collector --quiet --metrics-port "$port"
    mw_ls_check 'jobs[0]["endpoints"]["metrics"] == "http://127.0.0.1:'"$port"'/metrics"' ||
        mw_fail "no metrics endpoint in the entry: $(cat "$MW_T/ls.json")"
    mw_stop_collector
fi

# SIGKILL: stale, ignored, pruned.
mw_start_collector --quiet
mw_ls_check 'len(jobs) == 1 and not jobs[0]["stale"]' || mw_fail "not registered"
killed=$MW_CPID
mw_kill_collector
mw_ls_check 'len(jobs) == 1 and jobs[0]["stale"] and jobs[0]["pid"] == '"$killed" ||
    mw_fail "the killed collector's entry is not stale: $(cat "$MW_T/ls.json")"
"$MW_LAUNCHER" ls >"$MW_T/ls.txt" 2>&1
grep -q "stale: its collector is gone" "$MW_T/ls.txt" || mw_fail "ls (text): $(cat "$MW_T/ls.txt")"
rc=0
"$MW_JOBS" find >/dev/null 2>"$MW_T/find.err" || rc=$?
[ "$rc" = 1 ] || mw_fail "find used a stale entry (exit status $rc)"
"$MW_LAUNCHER" ls --prune >"$MW_T/prune.out" 2>&1 || mw_fail "ls --prune: $(cat "$MW_T/prune.out")"
grep -q "removed .*$killed" "$MW_T/prune.out" || mw_fail "ls --prune: $(cat "$MW_T/prune.out")"
[ "$(mw_registry_entries)" = 0 ] || mw_fail "ls --prune left: $(ls "$MPIWATCH_REGISTRY")"

# The next start removes a stale entry of its host.
mw_start_collector --quiet
killed=$MW_CPID
mw_ls_check 'len(jobs) == 1' || mw_fail "not registered"
mw_kill_collector
[ -e "$MPIWATCH_REGISTRY/$(hostname | tr -c 'A-Za-z0-9._\n-' '_').$killed.json" ] ||
    mw_fail "no entry named HOST.PID.json: $(ls "$MPIWATCH_REGISTRY")"
mw_start_collector --quiet
mw_ls_check 'len(jobs) == 1 and jobs[0]["pid"] == '"$MW_CPID"' and not jobs[0]["stale"]' ||
    mw_fail "the next start did not remove the stale entry: $(cat "$MW_T/ls.json")"
mw_stop_collector

# Another host's entries, judged by age.
cat >"$MPIWATCH_REGISTRY/far.example.42.json" <<'EOF'
{"version":1,"job":"far-job","program":"app","ranks":8,"ranks_connected":8,"state":"running","started":1,"host":"far.example","pid":42,"endpoints":{"publish":"tcp://far.example:1","control":"ipc:///far/control"},"curve":false}
EOF
chmod 600 "$MPIWATCH_REGISTRY/far.example.42.json"
mw_ls_check 'len(jobs) == 1 and jobs[0]["job"] == "far-job" and not jobs[0]["stale"]' ||
    mw_fail "a fresh entry of another host is not live: $(cat "$MW_T/ls.json")"
"$MW_JOBS" find far >"$MW_T/find.out" 2>"$MW_T/find.err" || mw_fail "find far"
grep -qx "publish=tcp://far.example:1" "$MW_T/find.out" || mw_fail "find: $(cat "$MW_T/find.out")"
# Its ipc:// endpoint is a path on that host: left out, with the reason.
grep -q "^control=" "$MW_T/find.out" && mw_fail "find gave another host's ipc:// endpoint"
grep -q "job far-job runs on far.example, whose local (ipc://) endpoints cannot be reached" \
    "$MW_T/find.err" || mw_fail "find, ipc of another host: $(cat "$MW_T/find.err")"
touch -d '-2 minutes' "$MPIWATCH_REGISTRY/far.example.42.json"
mw_ls_check 'len(jobs) == 1 and jobs[0]["stale"]' ||
    mw_fail "an old entry of another host is not stale: $(cat "$MW_T/ls.json")"

# A malformed entry is listed as unreadable, never used.
printf '{"job": ' >"$MPIWATCH_REGISTRY/bad.1.json"
"$MW_LAUNCHER" ls >"$MW_T/ls.txt" 2>&1
grep -q "^bad.1 .*unreadable" "$MW_T/ls.txt" || mw_fail "malformed entry: $(cat "$MW_T/ls.txt")"
rm -f "$MPIWATCH_REGISTRY"/*.json

# --registry off.
mw_start_collector --quiet --registry off
sleep 0.5
[ "$(mw_registry_entries)" = 0 ] || mw_fail "--registry off registered"
mw_stop_collector
mw_log "ok: stale entries reported and pruned"
