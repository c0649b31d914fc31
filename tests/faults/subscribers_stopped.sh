#!/usr/bin/env bash
# faults_subscribers_stopped: a live viewer (offscreen) and a feed subscriber are stopped
# (SIGSTOP) half way through the job and continued (SIGCONT) at three quarters. The collector
# must not wait for them: the job prints and exits as without the library, the accounting is
# exact with nothing missing, the subscriber goes on receiving after it is continued (it sees
# the job's end), and the viewer is still alive and leaves on SIGTERM.
. "$(dirname "$0")/lib.sh"
mw_require MW_TOOLS MW_VIEWER
ft_setup faults_subscribers_stopped 1200 5000
ft_baseline
pub="ipc://$MW_T/feed"
ft_collector --publish "$pub" --history "ipc://$MW_T/history"
"$MW_TOOLS/mpiwatch-feed" --subscribe "$pub" --until-job-end >"$MW_T/feed.jsonl" \
    2>"$MW_T/feed.err" &
feed=$!
SDL_VIDEODRIVER=offscreen "$MW_VIEWER" --connect "$pub" --history "ipc://$MW_T/history" \
    --size 640x400 >"$MW_T/viewer.out" 2>"$MW_T/viewer.err" &
viewer=$!
ft_on_exit "kill -CONT $feed $viewer 2>/dev/null; kill $feed $viewer 2>/dev/null"
sleep 0.5 # the subscriptions reach the collector (a missed first window is harmless here)
ft_start_with
fo_wait_file "$MW_T/half" 60
kill -STOP "$feed" "$viewer"
before=$(wc -l <"$MW_T/feed.jsonl")
mw_log "subscribers stopped half way through the job ($before feed lines so far)"
fo_wait_file "$MW_T/late" 60
kill -CONT "$feed" "$viewer"
mw_log "subscribers continued"
fo_wait_bg
mw_collector_exits 40
ft_same
ft_accounting --no-missed
for ((i = 0; i < 200; i++)); do
    kill -0 "$feed" 2>/dev/null || break
    sleep 0.05
done
kill -0 "$feed" 2>/dev/null && mw_fail "the feed subscriber never saw the job end after SIGCONT"
wait "$feed" || mw_fail "the feed subscriber failed: $(tail -c 400 "$MW_T/feed.err")"
grep -q '"job_end"' "$MW_T/feed.jsonl" || mw_fail "the subscriber did not receive the job's end"
after=$(wc -l <"$MW_T/feed.jsonl")
[ "$after" -gt "$before" ] || mw_fail "the subscriber received nothing after it was continued"
kill -0 "$viewer" 2>/dev/null || mw_fail "the viewer died: $(tail -c 600 "$MW_T/viewer.err")"
kill -TERM "$viewer"
rc=0
wait "$viewer" || rc=$?
[ "$rc" = 0 ] || [ "$rc" = 143 ] || mw_fail "the viewer exited with $rc: $(tail -c 600 "$MW_T/viewer.err")"
late=$(fo_json "$MW_T/stats.json" 'j["late"]')
mw_log "ok ($before feed lines before the stop, $after in all; $late late samples)"
