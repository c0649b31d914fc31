#!/usr/bin/env bash
# A long fuzzing campaign of one target (docs/fuzzing.md, "Campaigns"): libFuzzer's fork mode,
# which keeps going after a finding (each is saved in OUT/artifacts), under /usr/bin/time so
# that the CPU time it got on a shared machine is known. Prints one summary line at the end:
# executions, coverage (edges and features), corpus size, findings, CPU seconds.
#   campaign.sh FUZZER SEEDS_DIR OUT_DIR SECONDS [MAX_LEN]
set -u
fuzzer=$1 seeds=$2 out=$3 seconds=$4 max_len=${5:-16384}
name=$(basename "$fuzzer")
mkdir -p "$out/corpus" "$out/artifacts"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
/usr/bin/time -f 'cpu_seconds %U %S wall %e' -o "$out/time" \
  "$fuzzer" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
  -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$out/artifacts/" "$out/corpus" "$seeds" >"$out/log" 2>&1
last=$(grep -a '^#[0-9]*: cov:' "$out/log" | tail -n 1)
# (time writes "Command exited with non-zero status N" first when the fuzzer found something.)
read -r _ user sys _ wall < <(grep '^cpu_seconds' "$out/time")
cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.0f", u + s }')
corpus=$(find "$out/corpus" -type f | wc -l)
findings=$(find "$out/artifacts" -type f | wc -l)
echo "$name: $last | corpus files $corpus | findings $findings | cpu ${cpu}s wall ${wall}s"
