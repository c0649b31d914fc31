#!/bin/bash
# curve.sh: attaching over TCP with CURVE, as from a login node to a batch job's collector
# (docs/attach.md, "Across hosts"). The collector listens on tcp://127.0.0.1 with CURVE and a
# port chosen by the system for its feed and history, and trusts the client keys in the user's
# ~/.mpiwatch/clients/ (where `mpiwatch-jobs client-key` puts the user's key, generated on
# first use). The registry entry holds the bound (not the asked) endpoints and the collector's
# public key, and never a secret key. With nothing but the job's name:
#   - `mpiwatch top JOB --once` shows the job's functions over CURVE;
#   - `mpiwatch view JOB --snapshot` draws the job offscreen, its name in the snapshot's meta
#     (when the viewer is built);
#   - `mpiwatch steer JOB` reaches the ranks;
#   - with another client key (not trusted) top gets nothing and says why.
. "$(dirname "${BASH_SOURCE[0]}")/lib_attach.sh"
mw_attach_setup attach_curve
cd "$MW_T" || mw_fail "cd $MW_T"
prog=$MW_PROGRAMS/steer_cb
[ -x "$prog" ] || mw_fail "program not built: $prog"
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
"$MW_LAUNCHER" keygen coll >/dev/null || mw_fail "keygen coll"
key=$("$MW_JOBS" client-key 2>"$MW_T/key.err") || mw_fail "client-key: $(cat "$MW_T/key.err")"
{ [ "$key" = "$HOME/.mpiwatch/client.key" ] && [ -s "$HOME/.mpiwatch/clients/client.pub" ]; } ||
    mw_fail "client-key: $key; $(ls -la "$HOME/.mpiwatch" "$HOME/.mpiwatch/clients")"
[ "$(stat -c %a "$key")" = 600 ] || mw_fail "client key mode $(stat -c %a "$key")"
[ "$("$MW_JOBS" client-key 2>/dev/null)" = "$key" ] || mw_fail "client-key is not stable"

ING="tcp://127.0.0.1:$(free_port)"
CTL="tcp://127.0.0.1:$(free_port)"
STEER="tcp://127.0.0.1:$(free_port)"
mkdir "$MW_T/job"
mw_start_collector --exit-after-job --quiet --listen "$ING" --summary-json "$MW_T/summary.json" \
    --curve-secret "$MW_T/coll.key" --curve-clients "$HOME/.mpiwatch/clients" \
    --publish 'tcp://127.0.0.1:*' --history 'tcp://127.0.0.1:*' --control "$CTL" --steer "$STEER"
MPIWATCH_JOB=far-job "$MW_MPIRUN" --oversubscribe -np 2 -x LD_PRELOAD="$MW_LIB" \
    -x MPIWATCH_COLLECTOR="$ING" -x MPIWATCH_JOB -x MPIWATCH_STEER="$STEER" -x MPIWATCH_WINDOW_MS \
    -x MPIWATCH_CURVE_SERVER="$MW_T/coll.pub" -x MPIWATCH_CURVE_KEY="$key" \
    "$prog" mpi "$MW_T/job" >"$MW_T/job.out" 2>"$MW_T/job.err" &
jpid=$!
mw_wait_file "$MW_T/job/ready" "$jpid" || mw_fail "the job never got ready: $(tail -5 "$MW_T/job.err")"

pubkey=$(sed -n 's/^public-key = //p' "$MW_T/coll.pub")
mw_ls_check '
len(jobs) == 1 and jobs[0]["job"] == "far-job" and jobs[0]["ranks_connected"] == 2 and
jobs[0]["curve"] is True and jobs[0]["server_key"] == "'"$pubkey"'" and
jobs[0]["endpoints"]["publish"].startswith("tcp://127.0.0.1:") and
not jobs[0]["endpoints"]["publish"].endswith(":*") and
not jobs[0]["endpoints"]["history"].endswith(":*") and
jobs[0]["endpoints"]["control"] == "'"$CTL"'"' ||
    mw_fail "the entry: $(cat "$MW_T/ls.json" "$MW_T/ls.err")"
secret=$(sed -n 's/^secret-key = //p' "$MW_T/coll.key")
if grep -rqF "$secret" "$MPIWATCH_REGISTRY"; then mw_fail "the secret key is in the registry"; fi
grep -q '^public-key = ' "$MPIWATCH_REGISTRY"/*.pub || mw_fail "no .pub beside the entry"

"$MW_LAUNCHER" top far --once >"$MW_T/top.txt" 2>"$MW_T/top.err" ||
    mw_fail "top over CURVE: $(cat "$MW_T/top.err")"
cat "$MW_T/top.txt"
{ grep -q 'job far-job  program steer_cb  ranks 2/2' "$MW_T/top.txt" &&
    grep -q '^  MPI_Bcast ' "$MW_T/top.txt"; } || mw_fail "top over CURVE: $(cat "$MW_T/top.txt")"

if [ -x "${MW_VIEWER-}" ]; then
    SDL_VIDEODRIVER=offscreen "$MW_LAUNCHER" view far-job --snapshot "$MW_T/view.png" \
        --meta "$MW_T/view.json" >"$MW_T/view.out" 2>"$MW_T/view.err" ||
        mw_fail "mpiwatch view: $(tail -5 "$MW_T/view.err")"
    [ -s "$MW_T/view.png" ] || mw_fail "mpiwatch view drew nothing"
    python3 -c 'import json, sys; j = json.load(open(sys.argv[1]))["job"]
sys.exit(0 if j["job"] == "far-job" and j["size"] == 2 else 1)' "$MW_T/view.json" ||
        mw_fail "the viewer did not show the job: $(head -c 600 "$MW_T/view.json")"
else
    mw_log "viewer not built: view not tested"
fi

{ "$MW_LAUNCHER" steer far-job app.msg=over-curve >"$MW_T/s.out" 2>&1 &&
    grep -q '^sent app.msg=over-curve' "$MW_T/s.out"; } || mw_fail "steer over CURVE: $(cat "$MW_T/s.out")"

# Another key, not among the trusted clients: nothing gets through, and top says why.
"$MW_LAUNCHER" keygen stranger >/dev/null || mw_fail "keygen stranger"
rc=0
MPIWATCH_CURVE_KEY=$MW_T/stranger.key "$MW_LAUNCHER" top far --once --timeout-ms 3000 \
    >"$MW_T/top2.txt" 2>"$MW_T/top2.err" || rc=$?
{ [ "$rc" = 1 ] && grep -q "curve-clients" "$MW_T/top2.err"; } ||
    mw_fail "an untrusted key: exit status $rc: $(cat "$MW_T/top2.txt" "$MW_T/top2.err")"

sleep 1
touch "$MW_T/job/stop"
wait "$jpid" || mw_fail "the job failed: $(tail -5 "$MW_T/job.err")"
mw_wait_collector 30
grep -qx "rank 0: app.msg=over-curve thread=app via=mpi" "$MW_T/job.out" ||
    mw_fail "the message did not reach rank 0: $(cat "$MW_T/job.out")"
{ [ "$(mw_registry_entries)" = 0 ] && [ -z "$(ls "$MPIWATCH_REGISTRY")" ]; } ||
    mw_fail "left in the registry: $(ls "$MPIWATCH_REGISTRY")"
mw_log "ok: attached over TCP with CURVE"
