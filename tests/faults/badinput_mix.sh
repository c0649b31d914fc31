#!/usr/bin/env bash
# faults_badinput_mix: 1,000 emulated ranks (mpiwatch-loadgen) stream their samples while a
# stream of crafted frames (tests/collector/mw-badinput: garbage, truncated and oversized
# frames, wrong versions, bogus fields, foreign jobs, and non-ZeroMQ bytes on a TCP endpoint)
# hits the same collector, again and again. The collector stays up, rejects and counts every
# bad frame, and the job's accounting is exact: for every function, the calls the generator
# sent == the calls in the summary + the calls reported missing.
. "$(dirname "$0")/lib.sh"
mw_require MW_TOOLS MW_BADINPUT
fo_setup faults_badinput_mix needs-collector
port=$("${MW_PYTHON:-/usr/bin/python3}" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fo_start_collector --quiet --exit-after-job --listen "tcp://127.0.0.1:$port" \
    --silence-timeout-ms 30000
"$MW_TOOLS/mpiwatch-loadgen" --connect "$MW_EP" --ranks 1000 --nodes 16 --rate 10 \
    --functions 8 --seconds 6 --job mix --seed 7 --totals-json "$MW_T/totals.json" \
    2>"$MW_T/loadgen.err" &
lg=$!
fo_collector_saw_job
rounds=0
while kill -0 "$lg" 2>/dev/null && [ "$rounds" -lt 40 ]; do
    "$MW_BADINPUT" bad "$MW_EP" 127.0.0.1 "$port" >/dev/null 2>>"$MW_T/badinput.err" ||
        mw_fail "mw-badinput failed: $(tail -c 400 "$MW_T/badinput.err")"
    rounds=$((rounds + 1))
    kill -0 "$MW_CPID" 2>/dev/null || mw_fail "the collector died under crafted input"
done
[ "$rounds" -ge 2 ] || mw_fail "only $rounds rounds of crafted frames: the test proves nothing"
wait "$lg" || { MW_FAILURE_LOG=$MW_T/loadgen.err; mw_fail "mpiwatch-loadgen failed"; }
mw_collector_exits 40
"${MW_PYTHON:-/usr/bin/python3}" - "$MW_T" "$rounds" <<'PY' || mw_fail "accounting or rejection counts wrong"
import json, sys
d, rounds = sys.argv[1], int(sys.argv[2])
t = json.load(open(d + "/totals.json"))
s = json.load(open(d + "/summary.json"))
st = json.load(open(d + "/stats.json"))
errors = []
missed = s.get("missed")
if not isinstance(missed, dict):
    errors.append("the summary has no \"missed\" object")
    missed = {}
if s.get("ranks") != t["ranks"]:
    errors.append("summary ranks %s, the generator emulated %d" % (s.get("ranks"), t["ranks"]))
for name, f in t["functions"].items():
    got = s["functions"].get(name, {})
    lost = missed.get("functions", {}).get(name, {})
    for k in ("count", "bytes", "time_ns"):
        if got.get(k, 0) + lost.get(k, 0) != f[k]:
            errors.append("%s %s: sent %d, summary %d + missing %d"
                          % (name, k, f[k], got.get(k, 0), lost.get(k, 0)))
# The generator sends the library's running totals (docs/loadgen.md): no rank without them,
# and the ranks' own totals are exactly what it made.
if missed.get("ranks_without_totals") != []:
    errors.append("ranks_without_totals %r, want []" % missed.get("ranks_without_totals"))
sent_calls = sum(f["count"] for f in t["functions"].values())
if missed.get("at_ranks", {}).get("calls") != sent_calls:
    errors.append("at_ranks.calls %r, the generator made %d"
                  % (missed.get("at_ranks", {}).get("calls"), sent_calls))
rejected = sum(st["rejected"].values())
if rejected < rounds * 10:
    errors.append("only %d rejections for %d rounds of crafted frames" % (rejected, rounds))
for e in errors:
    print("  " + e)
print("rounds %d, rejected %d, accepted %d, missed calls %s"
      % (rounds, rejected, st["accepted"], missed.get("calls")))
sys.exit(1 if errors else 0)
PY
mw_log "ok ($rounds rounds of crafted frames)"
