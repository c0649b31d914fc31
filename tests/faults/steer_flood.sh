#!/usr/bin/env bash
# faults_steer_flood: steering under load. While the job runs, `mpiwatch steer` sends request
# after request with 1,024-byte values to every rank, and requests with long rank lists, as
# fast as it can, from half way to three quarters of the job; then one last small message.
# The job prints and exits as without the library, is not held up, and the last message still
# reaches every rank's callback (a flood must never cut a rank off from steering); the
# collector's accounting stays exact.
. "$(dirname "$0")/lib.sh"
mw_require MW_LAUNCHER
ft_setup faults_steer_flood 1600 5000
ft_baseline
ctl="ipc://$MW_T/control"
ft_collector --steer "ipc://$MW_T/steer" --control "$ctl"
mkdir -p "$MW_T/steerlog"
ft_start_with MPIWATCH_STEER="ipc://$MW_T/steer" FAULT_STEER="$MW_T/steerlog"
fo_wait_file "$MW_T/half" 60
fo_collector_saw_job
big=$(head -c 1024 /dev/zero | tr '\0' 'v')
# A long list naming every rank many times over, in single ranks and ranges.
list=$(for ((i = 0; i < 200; i++)); do printf '%d,%d-%d,' $((i % FO_NP)) 0 $((FO_NP - 1)); done)
list=${list%,}
sent=0 refused=0
while [ ! -e "$MW_T/late" ] && kill -0 "$FO_BG_PID" 2>/dev/null; do
    if "$MW_LAUNCHER" steer "$ctl" "app.flood$((sent % 7))=$big" >/dev/null 2>&1; then
        sent=$((sent + 1))
    else
        refused=$((refused + 1))
    fi
    "$MW_LAUNCHER" steer --ranks "$list" "$ctl" "app.list=$sent" >/dev/null 2>>"$MW_T/list.err" ||
        refused=$((refused + 1))
done
mw_log "flood: $sent requests with 1 KiB values sent, $refused refused"
[ "$sent" -ge 20 ] || mw_fail "only $sent flood requests went out: the test proves nothing"
"$MW_LAUNCHER" steer "$ctl" "last.flood=1" >"$MW_T/last.out" 2>&1 ||
    mw_fail "the last message was refused: $(cat "$MW_T/last.out")"
fo_wait_bg
mw_collector_exits 40
ft_same
ft_accounting --no-missed
for ((r = 0; r < FO_NP; r++)); do
    grep -qx "last.flood" "$MW_T/steerlog/steer.$r" 2>/dev/null ||
        mw_fail "rank $r never received the message sent after the flood: $(cat "$MW_T/steerlog/steer.$r" 2>&1)"
done
mw_log "ok: $(head -n 1 "$MW_T/steerlog/steer.0") on rank 0, the last message on every rank"
