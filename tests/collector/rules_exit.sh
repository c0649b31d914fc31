#!/bin/bash
# rules_exit.sh COLLECTOR MW_BADINPUT: an exec action's process tree does not outlive the
# collector (issue 12, defect 7; docs/steering.md, "exec").
#
# A rule fires an exec action on a real job: a shell that puts a grandchild `sleep 300` in the
# background and waits for it (timeout 60 s, far away). The collector gets SIGTERM while the
# action runs. Checks: the collector exits by itself within a bounded time with status 0, and
# afterwards no process of the action's process group is running (neither the shell nor the
# grandchild; no orphan reparented to pid 1).
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
MW_COLLECTOR=$1
badinput=$2
mw_init collector_rules_exit
dir=$MW_T

# Processes of process group $1 that are running (zombies excluded: they run nothing).
group_running() {
    local f stat state pgrp
    for f in /proc/[0-9]*/stat; do
        stat=$(cat "$f" 2>/dev/null) || continue
        # The fields after the command name, which may hold anything: state, ppid, pgrp.
        read -r state _ pgrp _ <<<"${stat##*) }"
        if [ "$pgrp" = "$1" ] && [ "$state" != Z ] && [ "$state" != X ]; then
            f=${f#/proc/}
            echo "${f%/stat}"
        fi
    done
    return 0
}

cat >"$dir/tree.sh" <<SH
echo \$\$ >"$dir/leader.tmp" && mv "$dir/leader.tmp" "$dir/leader"
sleep 300 &
echo \$! >"$dir/grand.tmp" && mv "$dir/grand.tmp" "$dir/grand"
wait
SH
cat >"$dir/rules.ini" <<INI
[rule tree]
metric = missing_ranks
op = >=
threshold = 0
action = exec
exec = sh $dir/tree.sh
timeout = 60
INI
mw_start_collector --quiet --lateness-ms 100 --rules "$dir/rules.ini"
"$badinput" partial "$MW_EP" >"$dir/job.json" || mw_fail "mw-badinput partial failed"
mw_wait_file "$dir/grand" || mw_fail "the exec action did not start its grandchild"
leader=$(cat "$dir/leader")
grand=$(cat "$dir/grand")
[ -n "$(group_running "$leader")" ] || mw_fail "the action's group is not running"
kill -0 "$grand" || mw_fail "the grandchild is not running"

kill -TERM "$MW_CPID"
# Bounded: the collector stops its actions within the kill grace (2 s) and one second more.
mw_collector_exits 10
left=$(group_running "$leader")
if [ -n "$left" ]; then
    ps -o pid,ppid,pgid,stat,args -p "${left//$'\n'/,}" >&2
    kill -KILL -- "-$leader" 2>/dev/null
    mw_fail "process(es) of the action's group still running after the collector exited: $left"
fi
grep -q 'stopping 1 running action' "$MW_T/collector.err" ||
    mw_fail "the collector did not say it stopped the running action"
echo "rules exit: ok"
