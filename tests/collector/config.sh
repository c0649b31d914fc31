#!/bin/bash
# config.sh COLLECTOR MW_BADINPUT: mpiwatch-collector --config FILE and --print-config.
#
# Checks, on the real executable: the values of a file are applied (seen by --print-config,
# and by a collector started with nothing but --config, which must listen where the file says,
# write the summary the file names and exit after the job as the file asks); flags override
# the file whatever their order, and --listen replaces the file's endpoints; the output of
# --print-config fed back as --config prints the same; a bad key, a bad value, a syntax error,
# a key outside [collector] and an unreadable file are reported with file and line and exit 2
# without the collector starting.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
MW_COLLECTOR=$1
badinput=$2
mw_init collector_config_cli
dir=$MW_T
C=$MW_COLLECTOR

# expect_line FILE LINE: FILE has exactly this line.
expect_line() {
    grep -qxF -- "$2" "$1" || {
        cat "$1" >&2
        mw_fail "$1 lacks the line '$2'"
    }
}

cat >"$dir/a.ini" <<EOF
; a comment
[collector]
listen = ipc://$dir/a1, ipc://$dir/a2
lateness-ms = 500
exit-after-job = true
quiet = yes ; inline comment
summary-json = $dir/a-summary.json
EOF

# 1. File values applied; defaults kept for the keys the file does not set.
"$C" --config "$dir/a.ini" --print-config >"$dir/p1.ini" || mw_fail "--print-config failed"
expect_line "$dir/p1.ini" "[collector]"
# One line per endpoint (a single line of all of them outgrew inih's 198 characters).
expect_line "$dir/p1.ini" "listen = ipc://$dir/a1"
expect_line "$dir/p1.ini" "listen = ipc://$dir/a2"
expect_line "$dir/p1.ini" "lateness-ms = 500"
expect_line "$dir/p1.ini" "exit-after-job = true"
expect_line "$dir/p1.ini" "quiet = true"
expect_line "$dir/p1.ini" "summary-json = $dir/a-summary.json"
expect_line "$dir/p1.ini" "silence-timeout-ms = 10000"
expect_line "$dir/p1.ini" "verbose = false"
expect_line "$dir/p1.ini" "metrics-port = 0"
expect_line "$dir/p1.ini" "trace-budget = 2000000"
expect_line "$dir/p1.ini" "lateness-budget-ms = 2000"
expect_line "$dir/p1.ini" "report ="
expect_line "$dir/p1.ini" "rank-detail ="
# Every key the file accepts is printed, and nothing that is command-line only.
keys=$(grep -E '^[a-z-]+ =' "$dir/p1.ini" | cut -d' ' -f1 | uniq | tr '\n' ' ')
[ "$keys" = "listen summary-json report stats-json exit-after-job lateness-ms \
silence-timeout-ms metrics-port metrics-bind record record-compress record-full-span record-keep-around record-rank-every record-max-gb replay speed from to progress no-progress \
publish rules steer control history history-windows history-mb endpoints-file expect-ranks \
curve-secret curve-clients allow-insecure trace-budget lateness lateness-budget-ms rank-detail \
registry upstream upstream-steer upstream-curve-server upstream-curve-secret aggregator-id \
quiet verbose " ] ||
    mw_fail "printed keys: $keys"

# 2. Flags win over the file, before or after --config.
for order in before after; do
    flags=(--lateness-ms 42 --listen "ipc://$dir/cli" --quiet=false --report r.txt)
    if [ $order = before ]; then
        args=("${flags[@]}" --config "$dir/a.ini" --print-config)
    else
        args=(--print-config --config "$dir/a.ini" "${flags[@]}")
    fi
    "$C" "${args[@]}" >"$dir/p2.ini" || mw_fail "--print-config with flags $order failed"
    expect_line "$dir/p2.ini" "lateness-ms = 42"
    expect_line "$dir/p2.ini" "listen = ipc://$dir/cli" # replaced, not appended
    expect_line "$dir/p2.ini" "quiet = false"
    expect_line "$dir/p2.ini" "report = r.txt"
    expect_line "$dir/p2.ini" "exit-after-job = true" # from the file
done
# A bad value in the file is reported even when a flag overrides that key.
printf '[collector]\nlateness-ms = soon\n' >"$dir/ov.ini"
"$C" --lateness-ms 5 --config "$dir/ov.ini" --print-config >/dev/null 2>"$dir/ov.err"
[ $? = 2 ] || mw_fail "an overridden bad value was accepted"

# 3. Round trip: the printed configuration, loaded again, prints the same.
"$C" --config "$dir/p1.ini" --print-config >"$dir/p3.ini" || mw_fail "reloading p1 failed"
cmp -s "$dir/p1.ini" "$dir/p3.ini" || {
    diff "$dir/p1.ini" "$dir/p3.ini" >&2
    mw_fail "--print-config does not round-trip"
}
{ "$C" --print-config >"$dir/d1.ini" && "$C" --config "$dir/d1.ini" --print-config >"$dir/d2.ini"; } ||
    mw_fail "default round trip failed"
cmp -s "$dir/d1.ini" "$dir/d2.ini" || mw_fail "the default configuration does not round-trip"

# 4. Errors: file and line in the message, status 2, nothing started.
# bad_config NAME WANT_MESSAGE: writes $dir/NAME.ini from stdin, runs the collector on it.
bad_config() {
    local f="$dir/$1.ini" rc
    cat >"$f"
    "$C" --config "$f" >"$dir/$1.out" 2>"$dir/$1.err" &
    local pid=$!
    if ! wait_gone "$pid"; then
        kill -KILL "$pid"
        wait "$pid"
        mw_fail "$1: the collector started"
    fi
    wait "$pid"
    rc=$?
    [ "$rc" = 2 ] || mw_fail "$1: exit status $rc, want 2"
    grep -qF -- "mpiwatch-collector: $2" "$dir/$1.err" || {
        cat "$dir/$1.err" >&2
        mw_fail "$1: the message lacks '$2'"
    }
    [ -e "$dir/bad.sock" ] && mw_fail "$1: the collector bound its socket"
    return 0
}
wait_gone() {
    local i
    for ((i = 0; i < 100; i++)); do
        kill -0 "$1" 2>/dev/null || return 0
        sleep 0.05
    done
    return 1
}
bad_config badkey "$dir/badkey.ini:4: unknown key 'lateness-msec'" <<EOF
[collector]
listen = ipc://$dir/bad.sock
; the next key is misspelled
lateness-msec = 5
EOF
# `lateness` is a key of its own (the lateness analysis: on, off or no-leap), checked at start.
bad_config badlateness "--lateness: expected on, off or no-leap, not '5'" <<EOF
[collector]
listen = ipc://$dir/bad.sock
lateness = 5
EOF
# `rank-detail` (the per-rank detail of the merged windows): on or off, checked at start.
bad_config badrankdetail "--rank-detail: expected on or off, not 'some'" <<EOF
[collector]
listen = ipc://$dir/bad.sock
rank-detail = some
EOF
bad_config badvalue "$dir/badvalue.ini:3: lateness-ms: expected an integer" <<EOF
[collector]
listen = ipc://$dir/bad.sock
lateness-ms = 500ms
EOF
bad_config badflag "$dir/badflag.ini:5: exit-after-job: expected true or false, not 'maybe'" <<EOF
[collector]

listen = ipc://$dir/bad.sock

exit-after-job = maybe
EOF
bad_config syntax "$dir/syntax.ini:3: syntax error" <<EOF
[collector]
listen = ipc://$dir/bad.sock
quiet
EOF
bad_config section "$dir/section.ini:1: key 'listen' is outside the [collector] section" <<EOF
listen = ipc://$dir/bad.sock
EOF
bad_config cliony "$dir/cliony.ini:2: unknown key 'config'" <<EOF
[collector]
config = other.ini
listen = ipc://$dir/bad.sock
EOF
"$C" --config "$dir/missing.ini" --listen "ipc://$dir/bad.sock" 2>"$dir/missing.err"
rc=$?
[ "$rc" = 2 ] || mw_fail "missing file: exit status $rc, want 2"
grep -qF "$dir/missing.ini: No such file or directory" "$dir/missing.err" ||
    mw_fail "missing file: $(cat "$dir/missing.err")"

# 5. A collector configured by the file alone: listens where it says, ends the job (a rank
# that never says bye) after the file's silence timeout, writes the summary it names, and
# exits after the job because the file says so.
cat >"$dir/run.ini" <<EOF
[collector]
listen = $MW_EP
exit-after-job = true
quiet = true
summary-json = $dir/run-summary.json
silence-timeout-ms = 500
EOF
"$C" --config "$dir/run.ini" </dev/null >"$dir/collector.out" 2>>"$dir/collector.err" &
MW_CPID=$!
for ((i = 0; i < 200; i++)); do
    [ -S "${MW_EP#ipc://}" ] && break
    kill -0 "$MW_CPID" 2>/dev/null || mw_fail "the collector configured by file exited early"
    sleep 0.05
done
[ -S "${MW_EP#ipc://}" ] || mw_fail "the collector did not listen on the file's endpoint"
"$badinput" partial "$MW_EP" >"$dir/job.json" || mw_fail "mw-badinput partial failed"
mw_collector_exits 10
[ -s "$dir/run-summary.json" ] || mw_fail "no summary at the file's summary-json path"
grep -qE '"ranks":[[:space:]]*1,' "$dir/run-summary.json" || mw_fail "the summary lacks the 1-rank job"
echo "config: ok"
