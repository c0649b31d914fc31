#!/bin/bash
# steer_crafted.sh: the library trusts nothing it receives on its steering socket (issue 12,
# defects 3 and 4; docs/steering.md, "What a rank accepts").
#   A rogue publisher (tests/shim/mw-steer-pub, an XPUB with no CURVE where MPIWATCH_STEER
#   points) plays crafted messages into a 4-rank tests/programs/steer_cb job (mpi mode), first
#   mpiwatch.window=MS@K with a K whose start (K x the current window length) wraps around 2^64
#   to 2..5 s ahead (it used
#   to be accepted, and MPI_Finalize then never returned: ~10^14 windows to send), malformed
#   window and capture values (16+ digits, signs, zero, far windows), unknown built-in keys, bad
#   keys, another job, other ranks, wrong topics, empty and garbage frames; then a legal Steer
#   of 16 KiB (8000 ranks, a 1024-byte value: above the old 8 KiB limit, below the rank's
#   32 KiB), then a 1 MiB frame, which makes libzmq drop the rank's connection (the rank must
#   reconnect by itself: the publisher waits for the 4 ranks to subscribe again), then a small
#   message. The job runs on past the wrapped time, then stops.
#   Checks: the job exits 0 within 60 s of being told to stop (generous; the old library hung),
#   its output is exactly what it is without any crafted message (each rank got app.big and
#   app.msg=after, nothing else), and with MPIWATCH_VERBOSE the ranks counted the refusals.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mw_setup steer_crafted
mw_require MW_STEER_PUB
prog=$MW_PROGRAMS/steer_cb
[ -x "$prog" ] || mw_fail "program not built: $prog"
[ -x "$MW_STEER_PUB" ] || mw_fail "publisher not built: $MW_STEER_PUB"
STEER="ipc://$MW_T/steer"

big=$(printf 'b%.0s' $(seq 1024))
ranks=$(seq -s, 0 7999)
T=$'\t'
cat >"$MW_T/script" <<EOF
subs${T}$MW_NP
wrap${T}100${T}$MPIWATCH_WINDOW_MS
steer${T}mpiwatch.window${T}100@999999999999999
steer${T}mpiwatch.window${T}100@1000000000000000
steer${T}mpiwatch.window${T}18446744073709551615@5
steer${T}mpiwatch.window${T}100@9223372036854775807
steer${T}mpiwatch.window${T}100@-1
steer${T}mpiwatch.window${T}0@99999
steer${T}mpiwatch.window${T}100@
steer${T}mpiwatch.window${T}abc
steer${T}mpiwatch.capture${T}1000@999999999999999
steer${T}mpiwatch.capture${T}0
steer${T}mpiwatch.capture${T}99999999999999@5
steer${T}mpiwatch.capture${T}1@-5
steer${T}mpiwatch.capture${T}1@
steer${T}mpiwatch.bogus${T}1
steer${T}bad key${T}1
steer${T}app.msg${T}for-another-job${T}-${T}another-job
steer${T}app.msg${T}not-for-these-ranks${T}4,5,99
topic${T}steerX
topic${T}st
frame${T}0
frame${T}200
steer${T}app.big${T}$big${T}$ranks
sleep${T}300
frame${T}1048576
subs${T}$MW_NP
steer${T}app.msg${T}after
EOF

mw_mpirun -x MPIWATCH_STEER="$STEER" -x MPIWATCH_JOB=crafted -x MPIWATCH_VERBOSE=1 \
    -x MPIWATCH_COLLECTOR="ipc://$MW_T/nobody" --output-filename "$MW_T/ranks" \
    "$prog" mpi "$MW_T" \
    >"$MW_T/job.out" 2>"$MW_T/job.err" &
job=$!
MW_FAILURE_LOG=$MW_T/job.err
mw_wait_file "$MW_T/ready" "$job" || mw_fail "the program never got ready"
"$MW_STEER_PUB" "$STEER" crafted "$MW_T/script" >"$MW_T/pub.out" 2>&1
prc=$?
cat "$MW_T/pub.out"
if [ "$prc" != 0 ]; then
    touch "$MW_T/stop"
    sleep 5
    kill "$job" 2>/dev/null
    mw_fail "the publisher failed (status $prc): the ranks did not subscribe (again)"
fi
sleep 6 # past the wrapped time (2..5 s after the wrap was sent)
touch "$MW_T/stop"
start=$SECONDS
for ((i = 0; i < 600; i++)); do
    kill -0 "$job" 2>/dev/null || break
    sleep 0.1
done
if kill -0 "$job" 2>/dev/null; then
    pkill -KILL -P "$job" 2>/dev/null
    kill -KILL "$job" 2>/dev/null
    mw_fail "the job did not exit within 60 s of being told to stop (MPI_Finalize hangs?)"
fi
wait "$job" || mw_fail "the job exited with status $? (want 0)"
mw_log "the job exited $((SECONDS - start)) s after the stop"
cat "$MW_T/job.out"

{
    for ((r = 0; r < MW_NP; r++)); do
        echo "rank $r: app.big=$big thread=app via=mpi"
        echo "rank $r: app.msg=after thread=app via=mpi"
    done
    echo "steer_cb: mpi, $MW_NP ranks, done"
} | sort >"$MW_T/want.out"
# mpirun forwards the ranks' lines in an order of its own, and may cut a long line with
# another rank's output: read each rank's own stdout (--output-filename), as a set of lines.
cat "$MW_T"/ranks/1/rank.*/stdout | sort >"$MW_T/got.out"
diff "$MW_T/want.out" "$MW_T/got.out" >/dev/null ||
    mw_fail "the output differs from the expected one: $(diff "$MW_T/want.out" "$MW_T/got.out" | head -c 1500)"

# The refusals, counted by every rank (MPIWATCH_VERBOSE=1 at finalize).
for ((r = 0; r < MW_NP; r++)); do
    grep -q "^mpiwatch\[$r\]: window: 9 requests, 0 applied, 7 bad, 0 too late, 2 too far ahead" \
        "$MW_T/job.err" || mw_fail "rank $r: window refusals not counted as expected: $(grep "^mpiwatch\[$r\]: window" "$MW_T/job.err")"
    grep -q "^mpiwatch\[$r\]: capture: 5 requests, 0 accepted, 5 bad" "$MW_T/job.err" ||
        mw_fail "rank $r: capture refusals not counted: $(grep "^mpiwatch\[$r\]: capture" "$MW_T/job.err")"
    line=$(grep "^mpiwatch\[$r\]: steer: " "$MW_T/job.err")
    { [[ $line =~ ([0-9]+)\ reconnections ]] && [ "${BASH_REMATCH[1]}" -ge 1 ]; } ||
        mw_fail "rank $r: no reconnection counted: $line"
    [[ $line =~ 1\ for\ another\ job,\ 1\ for\ other\ ranks ]] ||
        mw_fail "rank $r: other job / other ranks not counted: $line"
done
echo "steer_crafted: ok"
