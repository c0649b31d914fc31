#!/bin/bash
# run_multi.sh: a job `mpiwatch run` starts for several nodes is attachable from another host
# (docs/attach.md, "Across hosts"). The launcher is told the allocation has two nodes
# (SLURM_JOB_NUM_NODES=2, not passed on to mpirun, which runs both ranks here): its collector
# then listens on TCP with CURVE and keys made for the run, and also serves its feed, history
# and control on TCP, and trusts the user's own client key (~/.mpiwatch/client.key, generated
# on first use). With nothing but the job's name and the user's key:
#   - the registry entry names TCP endpoints only and the collector's public key;
#   - `mpiwatch top JOB --once` shows the job over CURVE;
#   - `mpiwatch steer KEY=VALUE` (the only running job) reaches its ranks;
#   - the entry is gone after the run.
. "$(dirname "${BASH_SOURCE[0]}")/lib_attach.sh"
mw_attach_setup attach_run_multi
grep -q -- '--endpoints-file' "$MW_LAUNCHER" ||
    mw_skip "this launcher has no multi-node mode (TCP with CURVE keys made for the run) yet"
prog=$MW_PROGRAMS/steer_cb
[ -x "$prog" ] || mw_fail "program not built: $prog"
mkdir "$MW_T/job"
MPIWATCH_JOB=multi-job SLURM_JOB_NUM_NODES=2 "$MW_LAUNCHER" run --quiet --no-record --no-viewer -- \
    env -u SLURM_JOB_NUM_NODES "$MW_MPIRUN" --oversubscribe -np 2 "$prog" mpi "$MW_T/job" \
    >"$MW_T/job.out" 2>"$MW_T/job.err" &
jpid=$!
mw_wait_file "$MW_T/job/ready" "$jpid" || mw_fail "the job never got ready: $(tail -5 "$MW_T/job.err")"
grep -q "2 nodes: the collector listens on" "$MW_T/job.err" ||
    mw_fail "the launcher did not take the job for a multi-node one: $(cat "$MW_T/job.err")"
[ -s "$HOME/.mpiwatch/client.key" ] || mw_fail "no client key generated for the user"

mw_ls_check '
len(jobs) == 1 and jobs[0]["job"] == "multi-job" and jobs[0]["ranks_connected"] == 2 and
jobs[0]["curve"] is True and len(jobs[0]["server_key"]) == 40 and
all(jobs[0]["endpoints"][k].startswith("tcp://") and not jobs[0]["endpoints"][k].endswith(":*")
    for k in ("ingest", "publish", "history", "control", "steer"))' ||
    mw_fail "the entry: $(cat "$MW_T/ls.json" "$MW_T/ls.err")"

"$MW_LAUNCHER" top multi --once >"$MW_T/top.txt" 2>"$MW_T/top.err" ||
    mw_fail "top: $(cat "$MW_T/top.err")"
cat "$MW_T/top.txt"
{ grep -q 'job multi-job  program steer_cb  ranks 2/2' "$MW_T/top.txt" &&
    grep -q '^  MPI_Bcast ' "$MW_T/top.txt"; } || mw_fail "top: $(cat "$MW_T/top.txt")"
# The only running job: no name needed.
{ "$MW_LAUNCHER" steer app.msg=from-login >"$MW_T/s.out" 2>&1 &&
    grep -q '^sent app.msg=from-login' "$MW_T/s.out"; } || mw_fail "steer: $(cat "$MW_T/s.out")"
sleep 1
touch "$MW_T/job/stop"
wait "$jpid" || mw_fail "the run failed: $(tail -5 "$MW_T/job.err")"
for r in 0 1; do
    grep -qx "rank $r: app.msg=from-login thread=app via=mpi" "$MW_T/job.out" ||
        mw_fail "rank $r did not get the message: $(cat "$MW_T/job.out")"
done
[ "$(mw_registry_entries)" = 0 ] || mw_fail "left in the registry: $(ls "$MPIWATCH_REGISTRY")"
mw_log "ok: a multi-node run attached to over TCP with CURVE"
