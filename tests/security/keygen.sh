#!/bin/bash
# keygen.sh: `mpiwatch keygen NAME` (docs/security.md). NAME.key is mode 0600 and NAME.pub
# 0644 whatever the umask; the .key holds a public and a matching secret key, the .pub the same
# public key only; a second run without --force exits 1, says why and leaves both files as
# they were; --force writes a new pair with the same modes; the collector loads the pair and
# refuses it once it is group-readable.
. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"
mw_init security_keygen
mw_require MW_LAUNCHER MW_COLLECTOR
cd "$MW_T" || mw_fail "cd $MW_T"

mode() { stat -c %a "$1"; }
pubkey() { sed -n 's/^public-key = //p' "$1"; }

(umask 000 && "$MW_LAUNCHER" keygen job >keygen.out 2>&1) || mw_fail "keygen: $(cat keygen.out)"
[ "$(mode job.key)" = 600 ] || mw_fail "job.key has mode $(mode job.key), not 600"
[ "$(mode job.pub)" = 644 ] || mw_fail "job.pub has mode $(mode job.pub), not 644"
pub=$(pubkey job.key)
[ "${#pub}" = 40 ] || mw_fail "job.key: no 40-character public key: $(cat job.key)"
[ "$(pubkey job.pub)" = "$pub" ] || mw_fail "job.pub holds another key than job.key"
[ "$(grep -c '^secret-key = ' job.key)" = 1 ] || mw_fail "job.key has no secret key"
grep -q secret job.pub && grep -q '^secret-key' job.pub && mw_fail "job.pub holds a secret key"
grep -qxF "public key $pub" keygen.out || mw_fail "keygen did not print the public key: $(cat keygen.out)"

# No overwrite without --force: exit 1, a message naming the file, both files unchanged.
sums=$(md5sum job.key job.pub)
rc=0
"$MW_LAUNCHER" keygen job >again.out 2>&1 || rc=$?
[ "$rc" = 1 ] || mw_fail "a second keygen: exit status $rc, not 1"
grep -q "job.key exists; not overwritten (use --force to replace it)" again.out ||
    mw_fail "a second keygen: unclear message: $(cat again.out)"
[ "$(md5sum job.key job.pub)" = "$sums" ] || mw_fail "a refused keygen changed the files"
# Only the .pub exists: still refused, and no .key appears.
mv job.key keep.key
rc=0
"$MW_LAUNCHER" keygen job >again.out 2>&1 || rc=$?
{ [ "$rc" = 1 ] && [ ! -e job.key ]; } || mw_fail "keygen over an existing job.pub: status $rc"
mv keep.key job.key

# --force under a strict umask: a new pair, the same modes.
(umask 077 && "$MW_LAUNCHER" keygen --force job >force.out 2>&1) || mw_fail "keygen --force: $(cat force.out)"
{ [ "$(mode job.key)" = 600 ] && [ "$(mode job.pub)" = 644 ]; } ||
    mw_fail "after --force: modes $(mode job.key) and $(mode job.pub)"
[ "$(pubkey job.key)" != "$pub" ] || mw_fail "--force kept the old key"
[ "$(pubkey job.pub)" = "$(pubkey job.key)" ] || mw_fail "after --force the two files disagree"

# Usage errors: exit 2.
rc=0
"$MW_LAUNCHER" keygen >usage.out 2>&1 || rc=$?
[ "$rc" = 2 ] || mw_fail "keygen without NAME: exit status $rc, not 2"

# The collector takes the pair (--print-config would not load it: start it for real) and
# refuses it when group-readable, naming the file.
{ mkdir clients && "$MW_LAUNCHER" keygen clients/ranks >/dev/null; } || mw_fail "keygen clients/ranks"
chmod 640 job.key
rc=0
"$MW_COLLECTOR" --listen "$MW_EP" --curve-secret job.key --curve-clients clients \
    >coll.out 2>coll.err || rc=$?
[ "$rc" = 2 ] || mw_fail "a 0640 secret key: collector exit status $rc, not 2"
grep -q "job.key: mode 0640 lets group or others at the secret key (chmod 600 the file)" coll.err ||
    mw_fail "a 0640 secret key: unclear message: $(cat coll.err)"
chmod 600 job.key
mw_start_collector --quiet --curve-secret job.key --curve-clients clients
grep -qF "CURVE on: server key $(pubkey job.key), 1 authorized client key" "$MW_T/collector.err" ||
    mw_fail "the collector did not load the keys: $(cat "$MW_T/collector.err")"
mw_stop_collector
echo "keygen: ok"
