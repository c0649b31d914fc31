#!/bin/bash
# registry_security.sh: a registry directory that someone else controls could send a user's
# viewer, key or steering request to any endpoint: the collector does not register in it and
# mpiwatch ls / find refuse it, with the reason (docs/attach.md, "Security"):
#   - group- or world-writable (mode 0770, 0777): refused;
#   - owned by another user (when the test runs as root, which can chown): refused;
#   - a symbolic link to a good directory: refused;
#   - an entry file owned by another user inside a good directory: listed as unreadable, not
#     used;
#   - the directory the collector creates is mode 0700, its entry 0600.
. "$(dirname "${BASH_SOURCE[0]}")/lib_attach.sh"
mw_attach_setup attach_registry_security
reg=$MPIWATCH_REGISTRY

# refused DESCRIPTION PATTERN: the collector runs but logs the refusal and registers nothing;
# ls exits 1 with the reason.
refused() {
    : >"$MW_T/collector.err"
    mw_start_collector --quiet
    sleep 0.3
    mw_stop_collector
    grep -q "registry $reg: $2" "$MW_T/collector.err" ||
        mw_fail "$1: the collector did not say why: $(cat "$MW_T/collector.err")"
    [ -z "$(find "$reg/" -maxdepth 1 -name '*.json' 2>/dev/null)" ] || mw_fail "$1: registered"
    local rc=0
    "$MW_LAUNCHER" ls >"$MW_T/ls.out" 2>&1 || rc=$?
    { [ "$rc" = 1 ] && grep -q "registry $reg: $2" "$MW_T/ls.out"; } ||
        mw_fail "$1: ls: exit status $rc: $(cat "$MW_T/ls.out")"
}

mkdir -m 777 "$reg"
chmod 777 "$reg"
refused "mode 0777" "mode 0777 lets group or others add entries"
chmod 770 "$reg"
refused "mode 0770" "mode 0770 lets group or others add entries"
rmdir "$reg"
mkdir -m 700 "$MW_T/real"
ln -s "$MW_T/real" "$reg"
refused "a symbolic link" "a symbolic link"
rm "$reg"
if [ "$(id -u)" = 0 ]; then
    mkdir -m 700 "$reg"
    chown 65534:65534 "$reg"
    refused "owned by nobody" "owned by uid 65534, not by you"
    rmdir "$reg"
else
    mw_log "not root: the foreign owner case is not tested"
fi

# A good directory, created by the collector.
mw_start_collector --quiet
mw_ls_check 'len(jobs) == 1 and not jobs[0]["stale"]' || mw_fail "not registered: $(cat "$MW_T/ls.err")"
[ "$(stat -c %a "$reg")" = 700 ] || mw_fail "registry mode $(stat -c %a "$reg")"
for f in "$reg"/*.json; do
    [ "$(stat -c %a "$f")" = 600 ] || mw_fail "entry mode $(stat -c %a "$f")"
done
if [ "$(id -u)" = 0 ]; then
    # A planted entry of another user is not trusted.
    cp "$reg"/*.json "$MW_T/planted.json"
    mv "$MW_T/planted.json" "$reg/planted.1.json"
    chown 65534:65534 "$reg/planted.1.json"
    "$MW_LAUNCHER" ls >"$MW_T/ls.txt" 2>&1
    grep -q "^planted.1 .*owned by another user" "$MW_T/ls.txt" ||
        mw_fail "a planted entry: $(cat "$MW_T/ls.txt")"
    "$MW_JOBS" find >"$MW_T/find.out" 2>&1 || mw_fail "find with a planted entry: $(cat "$MW_T/find.out")"
    grep -q "^id=planted" "$MW_T/find.out" && mw_fail "find used the planted entry"
    rm -f "$reg/planted.1.json"
fi
mw_stop_collector
mw_log "ok: unsafe registry directories refused"
