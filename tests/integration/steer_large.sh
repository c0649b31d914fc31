#!/bin/bash
# steer_large.sh: the largest request the collector accepts reaches the ranks, and steering
# keeps working after it (issue 12, defect 4; docs/steering.md, "Sizes").
#   A collector with --steer and --control serves job "big" of 4096 ranks, emulated by
#   mpiwatch-loadgen (the collector checks a rank list against the job size). Ranks 0..3 of
#   that job are a real 4-rank tests/programs/steer_cb job with MPIWATCH_JOB=big, subscribed to
#   the collector's steering socket (their samples go nowhere: only steering is under test).
#   `mpiwatch steer CTL app.big=<1024 bytes> --ranks 0-4095` (4096 ranks and a 1024-byte value:
#   about 9.2 KiB as one Steer, which the ranks' old 8 KiB limit turned into a dropped
#   connection for the rest of the run), then `mpiwatch steer CTL app.msg=small`.
#   A rule with `ranks = 0-4095` and a 150-byte value (over 8 KiB as one Steer) fires once.
#   Checks: both requests accepted; the collector published the first as more than one Steer,
#   none over MW_STEER_MAX_MESSAGE (it logs the split), and the rule's too; every one of the 4
#   ranks got app.big, app.msg=small and app.rule once each, on its own thread; the job's exit
#   status is 0.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mw_setup steer_large
mw_require MW_LAUNCHER MW_LOADGEN
prog=$MW_PROGRAMS/steer_cb
[ -x "$prog" ] || mw_fail "program not built: $prog"
steer() { "$MW_LAUNCHER" steer "$@"; }
CTL="ipc://$MW_T/control"

# A rule with `ranks = 0-4095` takes the same path: it fires once, at the first closed window.
rv=$(printf 'r%.0s' $(seq 150)) # a value that, with 4096 ranks, makes more than 8 KiB
cat >"$MW_T/rules.ini" <<EOF
[rule all-ranks]
metric    = missing_ranks
op        = >=
threshold = 0
for       = 1
cooldown  = 100000
action    = steer
steer     = app.rule=$rv
ranks     = 0-4095
EOF
mw_start_collector --steer "ipc://$MW_T/steer" --control "$CTL" --quiet --verbose \
    --rules "$MW_T/rules.ini"
# 4096 emulated ranks, one sample each every 5 s: light, and the job stays known meanwhile.
"$MW_LOADGEN" --connect "$MW_EP" --ranks 4096 --rate 0.2 --functions 1 --seconds 120 \
    --job big >"$MW_T/loadgen.out" 2>&1 &
lg=$!
mw_mpirun -x MPIWATCH_STEER="ipc://$MW_T/steer" -x MPIWATCH_JOB=big \
    -x MPIWATCH_COLLECTOR="ipc://$MW_T/nobody" --output-filename "$MW_T/ranks" \
    "$prog" mpi "$MW_T" \
    >"$MW_T/job.out" 2>"$MW_T/job.err" &
job=$!
MW_FAILURE_LOG=$MW_T/job.err
stop_all() {
    touch "$MW_T/stop"
    kill "$lg" 2>/dev/null
}
mw_wait_file "$MW_T/ready" "$job" || { stop_all; mw_fail "the program never got ready"; }
sleep 2 # the ranks' subscriptions reach the collector (made in MPI_Init, before "ready")

big=$(printf 'v%.0s' $(seq 1024))
# The collector refuses a rank list until the 4096-rank job is known: retry that (bounded).
ok=0
for ((i = 0; i < 60; i++)); do
    if steer "$CTL" "app.big=$big" --ranks 0-4095 >"$MW_T/steer.out" 2>&1; then
        ok=1
        break
    fi
    grep -q "rejected: no job yet\|is not below the job size" "$MW_T/steer.out" ||
        { stop_all; mw_fail "the large request failed: $(cat "$MW_T/steer.out")"; }
    sleep 0.5
done
[ "$ok" = 1 ] || { stop_all; mw_fail "the 4096-rank job never became known to the collector"; }
steer "$CTL" "app.msg=small" >"$MW_T/steer2.out" 2>&1 ||
    { stop_all; mw_fail "the small request failed: $(cat "$MW_T/steer2.out")"; }
cat "$MW_T/steer.out" "$MW_T/steer2.out" | cut -c 1-120

# The rule fires when the first window of the emulated job closes (bounded wait).
for ((i = 0; i < 1200; i++)); do
    grep -q "steer #[0-9]*: app.rule=" "$MW_T/collector.err" && break
    sleep 0.1
done
grep -q "steer #[0-9]*: app.rule=" "$MW_T/collector.err" ||
    { stop_all; mw_fail "the rule did not fire within 120 s"; }
# All must reach every rank's callback; poll the program's result, bounded.
sleep 2 # the ranks take the messages at their next MPI call (every 5 ms)
touch "$MW_T/stop"
for ((i = 0; i < 600; i++)); do
    kill -0 "$job" 2>/dev/null || break
    sleep 0.1
done
kill -0 "$job" 2>/dev/null && { kill "$job"; stop_all; mw_fail "the job did not exit within 60 s"; }
wait "$job" || { stop_all; mw_fail "the job exited with status $?"; }
kill "$lg" 2>/dev/null
wait "$lg" 2>/dev/null
cut -c 1-100 "$MW_T/job.out"
# Each rank's own stdout (--output-filename): mpirun may cut a long line with another rank's.
cat "$MW_T"/ranks/1/rank.*/stdout >"$MW_T/ranks.out"
for ((r = 0; r < MW_NP; r++)); do
    [ "$(grep -c "^rank $r: " "$MW_T/ranks.out")" = 3 ] ||
        mw_fail "rank $r: not exactly three messages: $(grep "^rank $r: " "$MW_T/ranks.out" | cut -c 1-100)"
    grep -qx "rank $r: app.rule=$rv thread=app via=mpi" "$MW_T/ranks.out" ||
        mw_fail "rank $r did not get the rule's 4096-rank request"
    grep -qx "rank $r: app.big=$big thread=app via=mpi" "$MW_T/ranks.out" ||
        mw_fail "rank $r did not get the 4096-rank request"
    grep -qx "rank $r: app.msg=small thread=app via=mpi" "$MW_T/ranks.out" ||
        mw_fail "rank $r did not get the later small request: steering broke after the large one"
done
mw_stop_collector
grep -Eq "steer: published 3, rejected [0-9]+, send errors 0, split 2 \(into [4-9] messages\)" \
    "$MW_T/collector.err" ||
    mw_fail "the collector did not split the large request: $(grep 'steer: published' "$MW_T/collector.err")"
echo "steer_large: ok"
