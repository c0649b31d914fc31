#!/usr/bin/env bash
# Runs fuzz_ingest for a bounded time from the seed corpus; fails on any crash, sanitizer
# report, leak, timeout or out-of-memory. Set MW_FUZZ_RUNS / MW_FUZZ_SECONDS to change the
# bounds (docs/fuzzing.md).
#   fuzz.sh FUZZER SEEDS_DIR WORK_DIR
set -u
fuzzer=$1 seeds=$2 work=$3
runs=${MW_FUZZ_RUNS:-200000}
seconds=${MW_FUZZ_SECONDS:-60}

if [ ! -x "$fuzzer" ]; then
  echo "collector_fuzz: $fuzzer was not built" >&2
  exit 1
fi
# A fresh corpus directory each run: new inputs go there, the seeds stay as generated.
rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts"

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# libFuzzer exits with 77 on a finding by default, which CTest would read as "skipped".
"$fuzzer" -runs="$runs" -max_total_time="$seconds" -seed=1 -max_len=16384 -timeout=10 \
  -rss_limit_mb=2048 -error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 \
  -artifact_prefix="$work/artifacts/" "$work/corpus" "$seeds" 2>"$work/log"
rc=$?
if [ $rc -ne 0 ] || [ -n "$(ls -A "$work/artifacts")" ]; then
  # The sanitizer report and its stack, then libFuzzer's summary.
  sed -n '/^==[0-9]*==\|runtime error\|deadly signal\|^==[0-9]*== ERROR: libFuzzer/,$p' "$work/log" | head -n 150
  echo "collector_fuzz: FAILED (status $rc); the log is $work/log" >&2
  for f in "$work"/artifacts/*; do
    [ -f "$f" ] || continue
    echo "input $f as hex:" >&2
    od -An -tx1 -v "$f" | head -n 64 >&2
  done
  exit 1
fi
tail -n 8 "$work/log"
echo "collector_fuzz: no crash, no sanitizer report"
