#!/bin/bash
# shim_badkey.sh: a rank key the library must refuse (docs/security.md). With
# MPIWATCH_CURVE_KEY naming a secret key file of mode 0644 (and, in a second run, with only
# MPIWATCH_CURVE_SERVER set), a 4-rank known_c job against a CURVE collector runs exactly as
# without the library (exit 0, the same stdout), each rank logs why once (MPIWATCH_VERBOSE=1,
# naming the file), and nothing reaches the collector: no message accepted, no connection even
# attempted (no refusal counted), no job.
. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"
mw_setup security_shim_badkey
mw_require MW_LAUNCHER
prog=$MW_PROGRAMS/known_c
[ -x "$prog" ] || mw_fail "program not built: $prog"
cd "$MW_T" || mw_fail "cd $MW_T"
n=2000
mw_curve_keys ranks "$MW_LAUNCHER" keygen
chmod 644 clients/ranks.key
port=$("$MW_PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

"$MW_MPIRUN" --oversubscribe -np "$MW_NP" "$prog" "$n" >plain.out 2>plain.err ||
    mw_fail "without the library the program failed: $(cat plain.err)"
grep -q "^known_c: $MW_NP ranks, N=$n, pattern ok" plain.out || mw_fail "known_c: $(cat plain.out)"

mw_start_collector --quiet --listen "tcp://127.0.0.1:$port" --curve-secret coll.key \
    --curve-clients clients --stats-json "$MW_T/stats.json" --summary-json "$MW_T/summary.json"

# run NAME VAR=VALUE...: the job with the library preloaded and those settings.
run() {
    local name=$1
    shift
    local xs=() v
    for v in "$@"; do xs+=(-x "$v"); done
    "$MW_MPIRUN" --oversubscribe -np "$MW_NP" -x LD_PRELOAD="$MW_LIB" \
        -x MPIWATCH_COLLECTOR="tcp://127.0.0.1:$port" -x MPIWATCH_WINDOW_MS -x MPIWATCH_VERBOSE=1 \
        "${xs[@]}" "$prog" "$n" >"$name.out" 2>"$name.err" ||
        mw_fail "$name: the job failed: $(head -c 1000 "$name.err")"
    cmp -s plain.out "$name.out" || mw_fail "$name: stdout differs from the run without the library: $(cat "$name.out")"
}
run open MPIWATCH_CURVE_SERVER="$MW_T/coll.pub" MPIWATCH_CURVE_KEY="$MW_T/clients/ranks.key"
want="CURVE: $MW_T/clients/ranks.key: mode 0644 lets group or others at the secret key (chmod 600 the file); monitoring stays off"
for ((r = 0; r < MW_NP; r++)); do
    [ "$(grep -cF "mpiwatch[$r]: $want" open.err)" = 1 ] ||
        mw_fail "rank $r did not say once why CURVE was refused: $(head -c 1500 open.err)"
done
run half MPIWATCH_CURVE_SERVER="$MW_T/coll.pub"
[ "$(grep -c "only the first is given; monitoring stays off" half.err)" = "$MW_NP" ] ||
    mw_fail "only MPIWATCH_CURVE_SERVER: not refused once per rank: $(head -c 1500 half.err)"

sleep 0.5
kill -0 "$MW_CPID" 2>/dev/null || mw_fail "the collector died"
mw_stop_collector
"$MW_PYTHON" - "$MW_T" <<'PY' || mw_fail "the collector received something: $(cat "$MW_T/stats.json")"
import json, sys
d = sys.argv[1]
stats = json.load(open(f"{d}/stats.json"))
summary = json.load(open(f"{d}/summary.json"))
assert stats["accepted"] == 0, stats["accepted"]
assert sum(stats["rejected"].values()) == 0, stats["rejected"]
assert stats["auth_refused"] == {"unauthorized": 0, "mechanism": 0, "crypto": 0, "handshake": 0}, stats["auth_refused"]
assert summary["ranks"] == 0 and summary["per_rank"] == [], summary
PY
echo "shim_badkey: ok"
