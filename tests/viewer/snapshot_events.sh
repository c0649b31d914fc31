#!/bin/bash
# snapshot_events.sh VIEWER COLLECTOR LOADGEN PNGPROBE: rule firings and steering messages in
# the viewer, from a real recording.
#
# A collector with two rules whose conditions always hold (allreduce: MPI_Allreduce's share
# >= 0 for 2 windows, cooldown 6, action steer rebalance=1 to ranks 0-1; busy: a rank's MPI
# share >= 0 for 4 windows, cooldown 7, action log) and --steer records a 16-rank load generator
# job of 3 s at 10 windows/s. The viewer replays the recording offscreen (1280x800, all views)
# and again at 1920x1080 with the timeline only. Checked (eventcheck.py) against the
# collector's own log of what fired and what it published: the --meta events list holds every
# firing with its rule and window and every steering message with its detail, each steer action
# tied to its firing; the events list shows "w K  rule allreduce V → steer rebalance=1 ranks
# 0,1" with K counted from the run's first window; every event in the timeline's range has a
# marker whose pixel column has the marker color (magenta solid for a rule, cyan dashes for a
# steering message) and the events panel shows both colors.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
viewer=$1
MW_COLLECTOR=$2
loadgen=$3
probe=$4
mw_init viewer_snapshot_events
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$viewer" "" "$probe"
unset MPIWATCH_CONTROL

cat >"$MW_T/rules.ini" <<'INI'
[rule allreduce]
metric    = function_share
function  = MPI_Allreduce
op        = >=
threshold = 0
for       = 2
cooldown  = 6
action    = steer
steer     = rebalance=1
ranks     = 0-1

[rule busy]
metric    = rank_mpi_fraction
op        = >=
threshold = 0
for       = 4
cooldown  = 7
action    = log
INI
mw_start_collector --record "$MW_T/run.mpiw" --rules "$MW_T/rules.ini" \
    --steer "ipc://$MW_T/steer" --exit-after-job --summary-json "$MW_T/summary.json"
"$loadgen" --connect "$MW_EP" --ranks 16 --rate 10 --functions 6 --seconds 3 --job evjob \
    --seed 3 2>"$MW_T/loadgen.err" ||
    { MW_FAILURE_LOG=$MW_T/loadgen.err; mw_fail "mpiwatch-loadgen failed"; }
mw_collector_exits 30
grep -c "rule fired" "$MW_T/collector.err" >/dev/null ||
    { MW_FAILURE_LOG=$MW_T/collector.err; mw_fail "no rule fired"; }

sv_snap all "$MW_T/run.mpiw" --view all --size 1280x800
"$MW_PYTHON" "$(dirname "$0")/eventcheck.py" replay "$probe" "$MW_T/collector.err" \
    "$MW_T/all.meta.json" "$MW_T/all.png" || mw_fail "events check (all) failed"
sv_snap tl "$MW_T/run.mpiw" --view timeline --size 1920x1080
"$MW_PYTHON" "$(dirname "$0")/eventcheck.py" replay "$probe" "$MW_T/collector.err" \
    "$MW_T/tl.meta.json" "$MW_T/tl.png" || mw_fail "events check (timeline) failed"
mw_log "ok"
