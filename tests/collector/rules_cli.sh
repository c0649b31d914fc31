#!/bin/bash
# rules_cli.sh COLLECTOR MW_BADINPUT: mpiwatch-collector --rules FILE on the real executable.
#
# Checks: a bad rule file stops the start with file:line and exit status 2; a good one fires
# on a real job (an exec action runs a script with the event in its argv and environment);
# SIGHUP with a broken file keeps the old rules and says why; SIGHUP with a good file loads it;
# the collector still finishes normally on SIGTERM.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
MW_COLLECTOR=$1
badinput=$2
mw_init collector_rules_cli
dir=$MW_T
script=$(cd "$(dirname "$0")" && pwd)/rules_argv.sh

# 1. Invalid rules: refused before starting.
printf '[rule a]\nmetric = foo\n' >"$dir/bad.ini"
rc=0
"$MW_COLLECTOR" --listen "$MW_EP" --rules "$dir/bad.ini" 2>"$dir/bad.err" || rc=$?
[ "$rc" = 2 ] || mw_fail "bad rules: exit status $rc, want 2"
grep -qF "$dir/bad.ini:2: unknown metric 'foo'" "$dir/bad.err" || {
    cat "$dir/bad.err" >&2
    mw_fail "bad rules: no file:line message"
}

# 2. A rule that holds on every window, with an exec action.
cat >"$dir/rules.ini" <<INI
[rule every]
metric = missing_ranks
op = >=
threshold = 0
action = exec
exec = $script $dir/fired.txt {rule} "{window} w" {job}
INI
mw_start_collector --quiet --lateness-ms 100 --rules "$dir/rules.ini" --summary-json "$dir/summary.json"
"$badinput" partial "$MW_EP" >"$dir/job.json" || mw_fail "mw-badinput partial failed"
for ((i = 0; i < 100; i++)); do
    [ -s "$dir/fired.txt" ] && break
    sleep 0.05
done
[ -s "$dir/fired.txt" ] || mw_fail "the exec action did not run"
[ "$(sed -n 1p "$dir/fired.txt")" = every ] || mw_fail "argv[1] is not the rule name"
sed -n 2p "$dir/fired.txt" | grep -qE '^[0-9]+ w$' || mw_fail "argv[2] is not '{window} w'"
grep -q '^ENV every$' "$dir/fired.txt" || mw_fail "no MPIWATCH_RULE"

# 3. SIGHUP with a broken file keeps the old set; with a good one loads it.
printf '[rule a]\nop = ~\n' >"$dir/rules.ini"
kill -HUP "$MW_CPID"
for ((i = 0; i < 100; i++)); do
    grep -q 'keeping the current rules' "$MW_T/collector.err" && break
    sleep 0.05
done
grep -qF "keeping the current rules: $dir/rules.ini:2: unknown op '~'" "$MW_T/collector.err" ||
    mw_fail "a bad reload was not reported"
kill -0 "$MW_CPID" 2>/dev/null || mw_fail "the collector died on SIGHUP"
printf '[rule a]\nmetric = dropped\nop = >\nthreshold = 1\naction = log\n' >"$dir/rules.ini"
kill -HUP "$MW_CPID"
for ((i = 0; i < 100; i++)); do
    grep -q '1 rule(s) loaded' "$MW_T/collector.err" && break
    sleep 0.05
done
grep -q '1 rule(s) loaded' "$MW_T/collector.err" || mw_fail "a good reload was not applied"
kill -TERM "$MW_CPID"
mw_collector_exits 10
echo "rules cli: ok"
