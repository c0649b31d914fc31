#!/bin/bash
# launcher.sh: `mpiwatch run` passes MPIWATCH_CURVE_SERVER and MPIWATCH_CURVE_KEY on to the
# ranks (docs/security.md). Its private collector gets CURVE through --collector-arg; a 4-rank
# known_c job then delivers exactly the known pattern, both when the command uses -x (the
# launcher adds -x for the two variables) and when it does not (mca_base_env_list); no
# connection is refused. With the variables set and no --curve-secret the launcher warns.
# The variables are given to the launcher alone (not exported by this script), and the command
# is a wrapper named mpirun that removes them from its own environment before it runs the real
# mpirun, keeping only what the launcher forwarded (a bare "-x NAME" becomes "-x NAME=VALUE",
# as Open MPI forwards it to another node; mca_base_env_list carries its values): on one
# machine the ranks would otherwise inherit them from mpirun, and a launcher that forgot to
# forward them would pass.
. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"
mw_setup security_launcher
mw_require MW_LAUNCHER
prog=$MW_PROGRAMS/known_c
[ -x "$prog" ] || mw_fail "program not built: $prog"
cd "$MW_T" || mw_fail "cd $MW_T"
n=2000
mw_curve_keys ranks "$MW_LAUNCHER" keygen
unset MPIWATCH_CURVE_SERVER MPIWATCH_CURVE_KEY
keys=(MPIWATCH_CURVE_SERVER="$MW_T/coll.pub" MPIWATCH_CURVE_KEY="$MW_T/clients/ranks.key")

# bin/mpirun: the real one, with the CURVE variables only where the launcher forwarded them.
mkdir -p bin
cat >bin/mpirun <<EOF
#!/bin/bash
args=()
while [ \$# -gt 0 ]; do
    if [ "\$1" = -x ] && [ \$# -gt 1 ] && [[ \$2 == MPIWATCH_CURVE_* ]] && [[ \$2 != *=* ]]; then
        args+=(-x "\$2=\${!2-}")
        shift 2
    else
        args+=("\$1")
        shift
    fi
done
unset MPIWATCH_CURVE_SERVER MPIWATCH_CURVE_KEY
exec "$MW_MPIRUN" "\${args[@]}"
EOF
chmod +x bin/mpirun

for variant in x env; do
    extra=()
    [ "$variant" = x ] && extra=(-x MW_SECURITY_TEST=1)
    rm -f summary.json stats.json
    env "${keys[@]}" "$MW_LAUNCHER" run --no-viewer --no-record --quiet \
        --summary-json "$MW_T/summary.json" --stats-json "$MW_T/stats.json" \
        --collector-arg=--curve-secret="$MW_T/coll.key" \
        --collector-arg=--curve-clients="$MW_T/clients" -- \
        "$MW_T/bin/mpirun" "${extra[@]}" --oversubscribe -np "$MW_NP" "$prog" "$n" \
        >"$variant.out" 2>"$variant.err" ||
        mw_fail "$variant: mpiwatch run failed: $(tail -c 1500 "$variant.err")"
    grep -q "^known_c: $MW_NP ranks, N=$n, pattern ok" "$variant.out" || mw_fail "$variant: $(cat "$variant.out")"
    grep -q "note: MPIWATCH_CURVE" "$variant.err" && mw_fail "$variant: a note although CURVE is configured"
    mw_check --pattern known --n "$n" --label "known_c ($variant)"
    "$MW_PYTHON" -c 'import json, sys; a = json.load(open(sys.argv[1]))["auth_refused"]; sys.exit(sum(a.values()))' \
        "$MW_T/stats.json" || mw_fail "$variant: connections refused: $(cat "$MW_T/stats.json")"
done

# The variables without a CURVE collector: a note (the job still runs, unmonitored, so the
# launcher ends with status 3: its 2 ranks never said hello, docs/launcher.md).
env "${keys[@]}" "$MW_LAUNCHER" run --no-viewer --no-record --quiet --grace 1 -- \
    "$MW_T/bin/mpirun" --oversubscribe -np 2 "$prog" 10 >note.out 2>note.err
rc=$?
[ "$rc" = 3 ] || mw_fail "run without CURVE: exit status $rc, not 3: $(tail -c 800 note.err)"
grep -q "^known_c: 2 ranks, N=10, pattern ok" note.out || mw_fail "run without CURVE: the job failed: $(cat note.out)"
grep -q '^  the launcher started 2 ranks; 0 said hello: 2 ranks not watched' note.err ||
    mw_fail "run without CURVE: no missing ranks in the report"
grep -q "note: MPIWATCH_CURVE_SERVER/MPIWATCH_CURVE_KEY are set but the collector has no --curve-secret" note.err ||
    mw_fail "no note: $(cat note.err)"
echo "launcher: ok"
