#!/bin/bash
# planted.sh COLLECTOR LOADGEN RECDUMP FEED PLANT VIEWER: frames full of forged index tags,
# sent to a recording collector during a job, cost neither the collector nor a reader of the
# recording more than a moment (issue 12, defect 1; docs/recording.md, "Why the key").
#
# A 64-rank loadgen job feeds a collector with --record and --history (4 windows kept in
# memory, so history requests read the recording). mw-rec-plant sends 3 frames of 8 MiB, each
# holding about 700,000 forged "MWIX" headers claiming 1 MiB; the collector rejects and records
# them. Then, with the job still running:
#   - a history request for every window (read from the recording, whose last index lies
#     before the planted frames) must be answered within HIST_MAX seconds;
#   - a copy of the growing file is read by mw-recdump (the public reader API) and replayed
#     by mpiwatch-viewer --snapshot, each within READ_MAX seconds, every window found;
#   - 3 more planted frames, 4 rank requests over the whole run in flight, then SIGTERM: the
#     collector must exit 0 within TERM_MAX seconds with its summary written, and the samples
#     of the job must have been taken in while all that happened (loadgen exits 0, windows
#     accepted).
# Before the fix each forged header cost a CRC over 1 MiB: the history request took minutes
# and SIGTERM waited for it. The bounds are generous for a loaded 2-core machine; the times
# measured are printed.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
MW_COLLECTOR=$1
REC_LOADGEN=$2
REC_DUMP=$3
feed=$4
plant=$5
viewer=$6
HIST_MAX=10
READ_MAX=20
TERM_MAX=10
mw_init record_planted
d=$MW_T
hist="ipc://$d/hist"

ms() { date +%s%3N; }
size() { stat -c %s "$1" 2>/dev/null || echo 0; }
# wait_size FILE BYTES: until FILE holds BYTES (up to 30 s).
wait_size() {
    local i
    for ((i = 0; i < 600; i++)); do
        [ "$(size "$1")" -ge "$2" ] && return 0
        sleep 0.05
    done
    mw_fail "$1 did not reach $2 bytes"
}

# Frames recorded as they came (--record-compress 0): compressed, the forged headers would not
# be in the file at all, and the readers would not be put to the test.
mw_start_collector --record "$d/run.mpiw" --record-compress 0 --history "$hist" \
    --history-windows 4 --summary-json "$d/summary.json" --silence-timeout-ms 60000
"$REC_LOADGEN" --connect "$MW_EP" --ranks 64 --rate 10 --functions 8 --seconds 30 \
    2>"$d/loadgen.err" &
lg=$!
# The job has started and closed windows: the 64 hellos (each naming the whole function table,
# about 8 KB) and 2 MB of samples (about two seconds of windows) are in.
wait_size "$d/run.mpiw" 2600000
base=$(size "$d/run.mpiw")
"$plant" "$MW_EP" 3 || mw_fail "mw-rec-plant failed"
wait_size "$d/run.mpiw" $((base + 3 * 8 * 1024 * 1024))

t0=$(ms)
"$feed" --history "$hist" --last 100000 --timeout-ms 120000 >"$d/last.json" 2>"$d/feed.err" ||
    { MW_FAILURE_LOG=$d/feed.err; mw_fail "the history request failed"; }
t_hist=$(($(ms) - t0))
mw_log "history request over the planted frames: ${t_hist} ms"
n_hist=$("$MW_PYTHON" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["windows"]))' \
    "$d/last.json") || mw_fail "the history reply is not JSON"
[ "$n_hist" -ge 5 ] || mw_fail "the history reply holds $n_hist windows"
[ "$t_hist" -le $((HIST_MAX * 1000)) ] || mw_fail "the history request took ${t_hist} ms"

# A reader of the growing file: the planted tags lie after its last index.
cp "$d/run.mpiw" "$d/crafted.mpiw"
t0=$(ms)
rec_dump "$d/crafted.mpiw" "$d/dump"
t_read=$(($(ms) - t0))
mw_log "mw-recdump of the crafted copy: ${t_read} ms"
[ "$t_read" -le $((READ_MAX * 1000)) ] || mw_fail "reading the crafted copy took ${t_read} ms"
windows=$(rec_val "$d/dump" window)
[ "$(rec_val "$d/dump" find_ok)" = "$windows" ] ||
    mw_fail "find_window found $(rec_val "$d/dump" find_ok) of $windows windows"
t0=$(ms)
timeout 120 "$viewer" --replay "$d/crafted.mpiw" --snapshot "$d/replay.png" \
    >"$d/viewer.out" 2>"$d/viewer.err" ||
    { MW_FAILURE_LOG=$d/viewer.err; mw_fail "mpiwatch-viewer --replay of the crafted copy failed"; }
t_view=$(($(ms) - t0))
mw_log "mpiwatch-viewer --replay --snapshot of the crafted copy: ${t_view} ms"
[ "$t_view" -le $((READ_MAX * 1000)) ] || mw_fail "the viewer's replay took ${t_view} ms"

# More planted frames, requests that read them, and SIGTERM meanwhile.
base=$(size "$d/run.mpiw")
"$plant" "$MW_EP" 3 || mw_fail "mw-rec-plant failed"
wait_size "$d/run.mpiw" $((base + 3 * 8 * 1024 * 1024))
pids=()
for r in 0 1 2 3; do
    "$feed" --history "$hist" --rank "$r" --range 0:100000000 --timeout-ms 60000 \
        >/dev/null 2>&1 &
    pids+=($!)
done
sleep 0.2
kill -0 "$MW_CPID" || mw_fail "the collector died"
t0=$(ms)
kill -TERM "$MW_CPID"
mw_collector_exits "$TERM_MAX"
t_term=$(($(ms) - t0))
mw_log "SIGTERM to exit with 4 rank requests over the planted frames in flight: ${t_term} ms"
for p in "${pids[@]}"; do wait "$p"; done
kill "$lg" 2>/dev/null
wait "$lg"
[ -s "$d/summary.json" ] || mw_fail "no summary after SIGTERM"
w=$(rec_json "$d/summary.json" 'j["windows"]')
mw_log "windows in the summary: $w"
[ "${w:-0}" -ge 5 ] 2>/dev/null || mw_fail "the summary holds $w windows"
exit 0
