#!/usr/bin/env bash
# faults_disk_full: the recording fills its file system (a 256 KiB tmpfs) during the job. The
# job prints and exits as without the library; the collector says once that the recording
# failed and why, goes on merging, and its summary is exact with nothing missing; what was
# recorded before the disk filled is still readable (exported window by window).
. "$(dirname "$0")/lib.sh"
ft_setup faults_disk_full
disk=$MW_T/disk
mkdir -p "$disk"
if ! mount -t tmpfs -o size=256k mwfull "$disk" 2>"$MW_T/mount.err"; then
    [ "${CI:-}" != true ] && [ "${MW_ALLOW_NO_MOUNT:-0}" = 1 ] &&
        mw_skip "cannot mount a tmpfs: $(cat "$MW_T/mount.err")"
    mw_fail "cannot mount a tmpfs (needs root; MW_ALLOW_NO_MOUNT=1 allows a skip outside CI): $(cat "$MW_T/mount.err")"
fi
ft_on_exit "umount '$disk' 2>/dev/null"
ft_baseline
ft_collector --record "$disk/run.mpiw" --stats-json "$MW_T/stats.json"
ft_start_with
fo_wait_bg
mw_collector_exits 40
ft_same
ft_accounting --no-missed
grep -q "recording .*No space left on device" "$MW_T/collector.err" ||
    mw_fail "the collector did not say that the disk filled"
errors=$(fo_json "$MW_T/stats.json" 'j["recording_errors"]')
[ "$errors" -ge 1 ] || mw_fail "recording_errors is $errors"
"$MW_TOOLS/mpiwatch-export" --format jsonl "$disk/run.mpiw" >"$MW_T/export.jsonl" \
    2>"$MW_T/export.err" || true
n=$(grep -c '"index"' "$MW_T/export.jsonl" || true)
[ "$n" -gt 0 ] || mw_fail "nothing of the full recording can be read: $(head -c 400 "$MW_T/export.err")"
mw_log "ok ($n windows readable from the full disk)"
