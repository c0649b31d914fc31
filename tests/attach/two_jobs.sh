#!/bin/bash
# two_jobs.sh: two jobs at once, found by name (docs/attach.md). Job alpha (2 ranks) runs under
# `mpiwatch run`; job beta (3 ranks) under a collector started by hand, and is attached to
# only after it started. Both run tests/programs/steer_cb mpi (an MPI_Bcast every 5 ms):
#   - `mpiwatch ls --json` lists both with their program and ranks, not stale;
#   - `mpiwatch top beta --once` (a unique prefix) shows beta's job, its 3 ranks and MPI_Bcast;
#     without a JOB, two running jobs make `top` list them and exit 2; an unknown name exits 1;
#   - `mpiwatch steer alpha-job KEY=VALUE` reaches alpha's ranks only, `mpiwatch steer beta
#     KEY=VALUE --ranks 1` beta's rank 1 only (each rank prints what it received);
#   - the old form `mpiwatch steer ENDPOINT KEY=VALUE` still works;
#   - once both jobs ended, the registry holds no entry.
. "$(dirname "${BASH_SOURCE[0]}")/lib_attach.sh"
mw_attach_setup attach_two_jobs
prog=$MW_PROGRAMS/steer_cb
[ -x "$prog" ] || mw_fail "program not built: $prog"
mkdir "$MW_T/a" "$MW_T/b"

# alpha: mpiwatch run (its own private endpoints; it registers itself).
MPIWATCH_JOB=alpha-job "$MW_LAUNCHER" run --quiet --no-record --no-viewer -- \
    "$MW_MPIRUN" --oversubscribe -np 2 "$prog" mpi "$MW_T/a" >"$MW_T/a.out" 2>"$MW_T/a.err" &
apid=$!
# beta: a collector by hand with a feed, steering and control.
mw_start_collector --exit-after-job --quiet --summary-json "$MW_T/summary.json" \
    --publish "ipc://$MW_T/b-feed" --history "ipc://$MW_T/b-history" \
    --steer "ipc://$MW_T/b-steer" --control "ipc://$MW_T/b-control"
MPIWATCH_JOB=beta-job "$MW_MPIRUN" --oversubscribe -np 3 -x LD_PRELOAD="$MW_LIB" \
    -x MPIWATCH_COLLECTOR="$MW_EP" -x MPIWATCH_JOB -x MPIWATCH_STEER="ipc://$MW_T/b-steer" \
    -x MPIWATCH_WINDOW_MS "$prog" mpi "$MW_T/b" >"$MW_T/b.out" 2>"$MW_T/b.err" &
bpid=$!
mw_wait_file "$MW_T/a/ready" "$apid" || mw_fail "alpha never got ready: $(tail -5 "$MW_T/a.err")"
mw_wait_file "$MW_T/b/ready" "$bpid" || mw_fail "beta never got ready: $(tail -5 "$MW_T/b.err")"

# Attached to after both started.
mw_ls_check '
len([j for j in jobs if not j["stale"]]) == 2 and
any(j["job"] == "alpha-job" and j["program"] == "steer_cb" and j["ranks"] == 2 and
    j["ranks_connected"] == 2 and j["state"] == "running" for j in jobs) and
any(j["job"] == "beta-job" and j["program"] == "steer_cb" and j["ranks"] == 3 and
    j["ranks_connected"] == 3 and "publish" in j["endpoints"] for j in jobs)' ||
    mw_fail "mpiwatch ls does not list both jobs right: $(cat "$MW_T/ls.json" "$MW_T/ls.err")"
"$MW_LAUNCHER" ls >"$MW_T/ls.txt" 2>&1 || mw_fail "mpiwatch ls failed: $(cat "$MW_T/ls.txt")"
{ grep -q '^alpha-job .*steer_cb .*2/2 ' "$MW_T/ls.txt" && grep -q '^beta-job .*3/3 ' "$MW_T/ls.txt"; } ||
    mw_fail "mpiwatch ls (text): $(cat "$MW_T/ls.txt")"

# top: by a unique prefix; ambiguous without a name; unknown name.
"$MW_LAUNCHER" top beta --once >"$MW_T/top.txt" 2>"$MW_T/top.err" ||
    mw_fail "mpiwatch top beta --once failed: $(cat "$MW_T/top.err")"
cat "$MW_T/top.txt"
grep -q 'job beta-job  program steer_cb  ranks 3/3' "$MW_T/top.txt" ||
    mw_fail "top: not beta's job and ranks: $(cat "$MW_T/top.txt")"
grep -q '^  MPI_Bcast ' "$MW_T/top.txt" || mw_fail "top: no MPI_Bcast: $(cat "$MW_T/top.txt")"
rc=0
"$MW_LAUNCHER" top --once >"$MW_T/amb.out" 2>"$MW_T/amb.err" || rc=$?
[ "$rc" = 2 ] || mw_fail "top without JOB and two jobs: exit status $rc, not 2"
{ grep -q "2 running jobs" "$MW_T/amb.err" && grep -q '^alpha-job' "$MW_T/amb.err" &&
    grep -q '^beta-job' "$MW_T/amb.err"; } || mw_fail "top, ambiguous: $(cat "$MW_T/amb.err")"
rc=0
"$MW_LAUNCHER" top gamma --once >/dev/null 2>"$MW_T/none.err" || rc=$?
{ [ "$rc" = 1 ] && grep -q "no running job named 'gamma'" "$MW_T/none.err"; } ||
    mw_fail "top gamma: exit status $rc: $(cat "$MW_T/none.err")"

# steer by name (each reaches its own job only) and by endpoint (the old form).
{ "$MW_LAUNCHER" steer alpha-job app.msg=to-alpha >"$MW_T/s1.out" 2>&1 &&
    grep -q '^sent app.msg=to-alpha' "$MW_T/s1.out"; } ||
    mw_fail "steer alpha-job: $(cat "$MW_T/s1.out")"
{ "$MW_LAUNCHER" steer beta app.msg=to-beta --ranks 1 >"$MW_T/s2.out" 2>&1 &&
    grep -q '^sent app.msg=to-beta' "$MW_T/s2.out"; } || mw_fail "steer beta: $(cat "$MW_T/s2.out")"
{ "$MW_LAUNCHER" steer "ipc://$MW_T/b-control" app.msg=by-endpoint --ranks 2 >"$MW_T/s3.out" 2>&1 &&
    grep -q '^sent app.msg=by-endpoint' "$MW_T/s3.out"; } ||
    mw_fail "steer ENDPOINT: $(cat "$MW_T/s3.out")"
sleep 1
touch "$MW_T/a/stop" "$MW_T/b/stop"
wait "$apid" || mw_fail "alpha (mpiwatch run) failed: $(tail -5 "$MW_T/a.err")"
wait "$bpid" || mw_fail "beta failed: $(tail -5 "$MW_T/b.err")"
mw_wait_collector 30
cat "$MW_T/a.out" "$MW_T/b.out"
for r in 0 1; do
    grep -qx "rank $r: app.msg=to-alpha thread=app via=mpi" "$MW_T/a.out" ||
        mw_fail "alpha rank $r did not get its message"
done
grep -q "to-beta\|by-endpoint" "$MW_T/a.out" && mw_fail "a message for beta reached alpha"
grep -qx "rank 1: app.msg=to-beta thread=app via=mpi" "$MW_T/b.out" ||
    mw_fail "beta rank 1 did not get its message"
grep -qx "rank 2: app.msg=by-endpoint thread=app via=mpi" "$MW_T/b.out" ||
    mw_fail "beta rank 2 did not get the message sent to the endpoint"
grep -qx "rank 0: none" "$MW_T/b.out" || mw_fail "beta rank 0 got a message"
grep -q "to-alpha" "$MW_T/b.out" && mw_fail "alpha's message reached beta"

# Both collectors are gone: so are their entries.
[ "$(mw_registry_entries)" = 0 ] ||
    mw_fail "entries left after the jobs: $(ls -l "$MPIWATCH_REGISTRY")"
rc=0
"$MW_LAUNCHER" top --once >/dev/null 2>"$MW_T/none.err" || rc=$?
{ [ "$rc" = 1 ] && grep -q "no running job" "$MW_T/none.err"; } ||
    mw_fail "top with no job: exit status $rc: $(cat "$MW_T/none.err")"
mw_log "ok: two jobs listed, top and steer by name, entries removed"
