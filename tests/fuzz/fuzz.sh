#!/usr/bin/env bash
# Runs one fuzz target for a bounded time from its seed corpus; fails on any crash, sanitizer
# report, leak, timeout or out-of-memory. Set MW_FUZZ_RUNS / MW_FUZZ_SECONDS to change the
# bounds (docs/fuzzing.md); CTest passes its default time in MW_FUZZ_SECONDS_DEFAULT.
# CRASHES_DIR holds the inputs of earlier findings (tests/fuzz/crashes/TARGET): each is run
# first, and one that still crashes, leaks, times out or runs out of memory fails the test, so a
# finding stays a failing test until it is fixed and a regression test after.
#   fuzz.sh FUZZER SEEDS_DIR WORK_DIR [CRASHES_DIR]
set -u
fuzzer=$1 seeds=$2 work=$3 crashes=${4:-}
name=$(basename "$fuzzer")
runs=${MW_FUZZ_RUNS:--1}
seconds=${MW_FUZZ_SECONDS:-${MW_FUZZ_SECONDS_DEFAULT:-25}}

if [ -z "$(ls -A "$seeds" 2>/dev/null)" ]; then
  echo "$name: no seeds in $seeds" >&2
  exit 1
fi
if [ ! -x "$fuzzer" ]; then
  echo "$name: $fuzzer was not built" >&2
  exit 1
fi
# A fresh corpus directory each run: new inputs go there, the seeds stay as generated.
rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts"

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

if [ -n "$crashes" ] && [ -d "$crashes" ]; then
  for f in "$crashes"/*; do
    [ -f "$f" ] || continue
    if ! "$fuzzer" -timeout=10 -rss_limit_mb=2048 -error_exitcode=1 -timeout_exitcode=1 \
      "$f" >"$work/known.log" 2>&1; then
      grep -a -m 1 -A 12 'ERROR\|runtime error\|fuzz_[a-z]*:' "$work/known.log" >&2
      echo "$name: FAILED: the earlier finding $f still reproduces (docs/fuzzing.md)" >&2
      exit 1
    fi
  done
fi
# libFuzzer exits with 77 on a finding by default, which CTest would read as "skipped".
"$fuzzer" -runs="$runs" -max_total_time="$seconds" -seed=1 -max_len="${MW_FUZZ_MAX_LEN:-16384}" -timeout=10 \
  -rss_limit_mb=2048 -error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 \
  -artifact_prefix="$work/artifacts/" "$work/corpus" "$seeds" 2>"$work/log"
rc=$?
if [ $rc -ne 0 ] || [ -n "$(ls -A "$work/artifacts")" ]; then
  # The sanitizer report and its stack, then libFuzzer's summary.
  sed -n '/^==[0-9]*==\|runtime error\|deadly signal\|^==[0-9]*== ERROR: libFuzzer/,$p' "$work/log" | head -n 150
  echo "$name: FAILED (status $rc); the log is $work/log" >&2
  for f in "$work"/artifacts/*; do
    [ -f "$f" ] || continue
    echo "input $f as hex:" >&2
    od -An -tx1 -v "$f" | head -n 64 >&2
  done
  exit 1
fi
tail -n 8 "$work/log"
# A run that executed (almost) nothing proves nothing: the seeds must have been read and the
# fuzzer must have run inputs of its own.
units=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
if [ -z "$units" ] || [ "$units" -lt 100 ]; then
  echo "$name: FAILED: only ${units:-0} inputs were executed; the log is $work/log" >&2
  exit 1
fi
echo "$name: no crash, no sanitizer report"
