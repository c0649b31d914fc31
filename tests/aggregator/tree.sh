#!/bin/bash
# tree.sh MODE: a real 4-rank mpirun job through a two-level tree (docs/aggregator.md): ranks
# 0-1 report to aggregator A, ranks 2-3 to aggregator B (a wrapper picks MPIWATCH_COLLECTOR
# from OMPI_COMM_WORLD_RANK / PMI_RANK), both feed a root collector.
#   options the aggregator's options refused at start with a clear message (exit 2): --rules,
#           --replay, --upstream-steer without --steer or --upstream, a non-local parent
#           without keys, a wildcard parent, one key file alone, an id over 4095.
#   plain   the root's summary has exactly the known pattern's per-function counts and bytes
#           (check_summary.py's expectation) and the same as a single collector taking the same
#           program (itself checked in full by check_summary.py); every
#           root window closed with all 4 ranks; both aggregators sent a final AggState and
#           dropped nothing.
#   curve   the same with CURVE on both hops (root: --curve-secret/--curve-clients with the
#           aggregators' keys; ranks: their aggregator's key); then an aggregator with a key
#           the root does not know is refused: the root counts it (auth_refused), the
#           aggregator counts what it could not send, and the root hears nothing from it.
#   steer   `mpiwatch steer` at the root's control socket reaches every rank behind the
#           aggregators (tests/programs/steer_cb: each rank's callback runs once); the
#           aggregators count what they relayed; then mpiwatch.window=40 changes the window
#           length of the ranks, of both aggregators and of the root, nothing refused.
#   relay   the relay alone, against a parent played by pyzmq: one good message republished
#           verbatim, an oversized one, a wrong topic and three frames dropped and counted.
#   killed  aggregator B is killed (SIGKILL) mid-job: the root still ends the job and writes
#           its report and summary, and its accounting reports calls missed (> 0).
MW_NP=4 # the tree's expectations name ranks 0-3, also with MPICH
. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"
mode=${1:?usage: tree.sh options|plain|curve|steer|relay|killed}
mw_setup "aggregator_$mode"
mw_require MW_LAUNCHER
export MPIWATCH_WINDOW_MS=20
C=$MW_COLLECTOR
T=$MW_T
N=2000 # the known pattern's repeat count: a run of tens of windows
PY=${MW_PYTHON:-/usr/bin/python3}
AGG_PIDS=()

# Stop whatever aggregator or root still runs when the script ends (mw_teardown does the
# collector it started itself).
stop_all() {
    local rc=$? p f
    for p in "${AGG_PIDS[@]}" ${ROOT_PID:+"$ROOT_PID"}; do
        kill "$p" 2>/dev/null
    done
    if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
        for f in "$T"/root.err "$T"/agg0.err "$T"/agg1.err; do
            [ -e "$f" ] && mw_show_log "$f"
        done
    fi
    (exit "$rc")
    mw_teardown
}
trap stop_all EXIT

# The wrapper: each rank's aggregator (and its steering socket) from its world rank.
cat >"$T/wrap.sh" <<'EOF'
#!/bin/bash
r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
a=$((r / 2))
export MPIWATCH_COLLECTOR="ipc://$MW_TREE/agg$a"
export MPIWATCH_STEER="ipc://$MW_TREE/agg$a-steer"
[ -z "${MW_TREE_KEY:-}" ] || export MPIWATCH_CURVE_SERVER="$MW_TREE/agg$a.pub" MPIWATCH_CURVE_KEY="$MW_TREE_KEY"
exec "$@"
EOF
chmod +x "$T/wrap.sh"
export MW_TREE=$T MW_TREE_KEY=""

# wait_endpoints FILE PID: the collector of PID wrote its bound endpoints (it is ready).
wait_endpoints() {
    mw_wait_file "$1" || mw_fail "$1 not written within 20 s: $(tail -n 5 "${1%.eps}.err")"
    kill -0 "$2" 2>/dev/null || mw_fail "collector $2 exited: $(tail -n 5 "${1%.eps}.err")"
}

# start_root ARGS...: the root, on a TCP port the system chooses (its steering too).
start_root() {
    rm -f "$T/root.eps"
    "$C" --listen "tcp://127.0.0.1:*" --steer "tcp://127.0.0.1:*" --exit-after-job --quiet \
        --summary-json "$T/root.json" --stats-json "$T/root-stats.json" \
        --report "$T/root-report.txt" --endpoints-file "$T/root.eps" "$@" \
        </dev/null >"$T/root.out" 2>"$T/root.err" &
    ROOT_PID=$!
    wait_endpoints "$T/root.eps" "$ROOT_PID"
    ROOT_EP=$(awk '$1 == "ingest-socket" {print $2}' "$T/root.eps")
    ROOT_STEER=$(awk '$1 == "steering" {print $2}' "$T/root.eps")
    if [ -z "$ROOT_EP" ] || [ -z "$ROOT_STEER" ]; then
        mw_fail "root endpoints: $(cat "$T/root.eps")"
    fi
}

# start_agg ID ARGS...: aggregator ID for ranks 2*ID and 2*ID+1.
start_agg() {
    local id=$1
    shift
    rm -f "$T/agg$id.eps"
    "$C" --listen "ipc://$T/agg$id" --steer "ipc://$T/agg$id-steer" --upstream "$ROOT_EP" \
        --upstream-steer "$ROOT_STEER" --aggregator-id "$id" --expect-ranks 2 \
        --exit-after-job --quiet --summary-json "$T/agg$id.json" \
        --stats-json "$T/agg$id-stats.json" --endpoints-file "$T/agg$id.eps" "$@" \
        </dev/null >"$T/agg$id.out" 2>"$T/agg$id.err" &
    AGG_PIDS[id]=$!
    wait_endpoints "$T/agg$id.eps" "${AGG_PIDS[id]}"
}

# wait_pid PID SECONDS WHAT: PID exits with status 0 within SECONDS.
wait_pid() {
    local i rc
    for ((i = 0; i < $2 * 20; i++)); do
        kill -0 "$1" 2>/dev/null || break
        sleep 0.05
    done
    kill -0 "$1" 2>/dev/null && mw_fail "$3 still running $2 s later"
    wait "$1"
    rc=$?
    [ "$rc" = 0 ] || mw_fail "$3 exited with status $rc: $(tail -n 20 "$T/$3.err")"
}

# run_tree PROGRAM ARGS...: the job through the tree; the root and both aggregators must end
# by themselves.
run_tree() {
    "$MW_MPIRUN" --oversubscribe -np 4 -x LD_PRELOAD="$MW_LIB" -x MPIWATCH_WINDOW_MS \
        -x MW_TREE -x MW_TREE_KEY "$T/wrap.sh" "$@" >"$T/app.out" 2>"$T/app.err" ||
        mw_fail "the job failed: $(tail -n 20 "$T/app.err")"
    wait_pid "${AGG_PIDS[0]}" 30 agg0
    wait_pid "${AGG_PIDS[1]}" 30 agg1
    wait_pid "$ROOT_PID" 30 root
    ROOT_PID=''
}

# json FILE EXPR: prints EXPR evaluated on the JSON of FILE (as j).
json() { "$PY" -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }

# check_known SUMMARY LABEL: the whole known pattern as check_summary.py checks one collector's
# summary (per rank, per function, pairs), then the job-wide per-function counts and bytes
# (its expectation summed over the 4 ranks), exactly, and 4 ranks.
check_known() {
    "$PY" "$MW_CHECKER" "$1" --np 4 --pattern known --n "$N" >"$1.check" 2>&1 || {
        MW_FAILURE_LOG=$1.check
        mw_fail "$2: the root's summary is not the known pattern's"
    }
    "$PY" - "$MW_CHECKER" "$1" "$N" <<'EOF' || mw_fail "$2: the root's totals differ from the program's"
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("cs", sys.argv[1])
cs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cs)
s = json.load(open(sys.argv[2]))
per_rank, _ = cs.known_pattern(int(sys.argv[3]), 4)
want = {}
for table in per_rank.values():
    for name, (count, nbytes) in table.items():
        c0, b0 = want.get(name, (0, 0))
        want[name] = (c0 + count, b0 + nbytes)
bad = [] if s["ranks"] == 4 else ["ranks %s, not 4" % s["ranks"]]
for name, (count, nbytes) in sorted(want.items()):
    f = s["functions"].get(name, {})
    if (f.get("count"), f.get("bytes", 0)) != (count, nbytes):
        bad.append("%s: %s calls %s bytes, expected %d and %d"
                   % (name, f.get("count"), f.get("bytes"), count, nbytes))
for name, f in s["functions"].items():
    if name not in want and cs.COMMUNICATING.match(name):
        bad.append("%s: %d calls the program does not make" % (name, f["count"]))
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF
}

# check_tree: what every mode but killed checks of the finished tree.
check_tree() {
    local a
    [ "$(json "$T/root-stats.json" "j['partial_windows']")" = 0 ] ||
        mw_fail "root windows closed without every rank: $(cat "$T/root-stats.json")"
    [ "$(json "$T/root-stats.json" "j['windows'] > 0")" = True ] || mw_fail "root closed no window"
    for a in 0 1; do
        json "$T/agg$a-stats.json" "j['upstream']" >"$T/agg$a.up" || mw_fail "agg$a: no stats"
        # Everything went up, nothing was dropped, and the last AggState was final.
        [ "$(json "$T/agg$a-stats.json" "(j['upstream']['partials_sent'] > 0,
             j['upstream']['hellos_sent'], j['upstream']['byes_sent'],
             j['upstream']['partials_dropped'] + j['upstream']['hellos_dropped'] +
             j['upstream']['byes_dropped'] + j['upstream']['aggstates_dropped'])")" = \
            "(True, 2, 2, 0)" ] || mw_fail "agg$a upstream figures: $(cat "$T/agg$a.up")"
    done
    [ "$(json "$T/root.json" "sorted((a['id'], a['ranks'], a['ranks_done'], a['final'])
         for a in j['aggregators'])")" = "[(0, 2, 2, True), (1, 2, 2, True)]" ] ||
        mw_fail "root's aggregators: $(json "$T/root.json" "j['aggregators']")"
    [ "$(json "$T/root.json" "j['missed']['calls']")" = 0 ] ||
        mw_fail "root missed calls: $(json "$T/root.json" "j['missed']")"
}

case $mode in
options)
    # refused ARGS... -- TEXT: the collector refuses ARGS at start (exit 2) naming TEXT.
    refused() {
        local args=() rc=0
        while [ "$1" != -- ]; do args+=("$1"); shift; done
        "$C" --listen "ipc://$T/x" "${args[@]}" >"$T/opt.out" 2>&1 || rc=$?
        [ "$rc" = 2 ] || mw_fail "${args[*]}: exit status $rc, not 2: $(cat "$T/opt.out")"
        grep -qF -- "$2" "$T/opt.out" || mw_fail "${args[*]}: unclear message: $(cat "$T/opt.out")"
    }
    up=(--upstream "ipc://$T/root")
    refused "${up[@]}" --rules "$T/r.ini" -- "--rules runs at the root of the tree"
    refused "${up[@]}" --upstream-steer "ipc://$T/s" -- "add --steer ENDPOINT"
    refused --upstream-steer "ipc://$T/s" --steer "ipc://$T/s2" -- "need --upstream"
    refused --upstream tcp://192.0.2.1:5555 -- "is not local: give the parent's key"
    refused --upstream "tcp://127.0.0.1:*" -- "not an endpoint to connect to"
    refused "${up[@]}" --upstream-curve-server "$T/none.pub" -- "go together"
    refused "${up[@]}" --aggregator-id 4096 -- "expected an integer in [0, 4095]"
    rc=0
    "$C" --replay "$T/x.mpiw" "${up[@]}" >"$T/opt.out" 2>&1 || rc=$?
    if [ "$rc" != 2 ] || ! grep -qF -- "--upstream and --replay exclude each other" "$T/opt.out"; then
        mw_fail "--replay with --upstream: status $rc: $(cat "$T/opt.out")"
    fi
    # A non-local parent with --allow-insecure is taken (printed back by --print-config).
    "$C" --listen "ipc://$T/x" --upstream tcp://192.0.2.1:5555 --allow-insecure \
        --aggregator-id 7 --print-config >"$T/p.ini" || mw_fail "--allow-insecure refused"
    grep -qx "upstream = tcp://192.0.2.1:5555" "$T/p.ini" || mw_fail "--print-config: $(cat "$T/p.ini")"
    grep -qx "aggregator-id = 7" "$T/p.ini" || mw_fail "--print-config: $(cat "$T/p.ini")"
    ;;
plain)
    # The reference: one collector taking the same program.
    MW_JOB_ARGS=(--quiet)
    mw_run_known known_c "$N"
    cp "$T/summary.json" "$T/single.json"
    start_root
    start_agg 0
    start_agg 1
    run_tree "$MW_PROGRAMS/known_c" "$N"
    grep -q "^known_c: 4 ranks, N=$N, pattern ok" "$T/app.out" || mw_fail "the program failed"
    check_known "$T/root.json" "known_c through two aggregators"
    "$PY" - "$T/single.json" "$T/root.json" <<'EOF' || mw_fail "the tree and one collector differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
fa = {k: (v["count"], v["bytes"]) for k, v in a["functions"].items()}
fb = {k: (v["count"], v["bytes"]) for k, v in b["functions"].items()}
if fa != fb:
    for k in sorted(set(fa) | set(fb)):
        if fa.get(k) != fb.get(k):
            print("%s: one collector %s, the tree %s" % (k, fa.get(k), fb.get(k)))
    sys.exit(1)
if a["ranks"] != b["ranks"]:
    print("ranks differ:", a["ranks"], b["ranks"])
    sys.exit(1)
EOF
    check_tree
    # The forwarded hellos: the second rank of each aggregator has the first one's table.
    for a in 0 1; do
        [ "$(json "$T/agg$a-stats.json" "j['upstream']['hellos_without_names']")" = 1 ] ||
            mw_fail "agg$a: the second hello went up with its names again: $(cat "$T/agg$a.up")"
    done
    ;;
curve)
    cd "$T" || mw_fail "cd"
    for k in root agg0 agg1 ranks rogue; do
        "$MW_LAUNCHER" keygen "$k" >/dev/null || mw_fail "keygen $k"
    done
    mkdir -m 755 root-clients agg-clients
    cp agg0.pub agg1.pub root-clients/
    cp ranks.pub agg-clients/
    export MW_TREE_KEY=$T/ranks.key
    start_root --curve-secret root.key --curve-clients root-clients
    for a in 0 1; do
        start_agg "$a" --curve-secret "agg$a.key" --curve-clients agg-clients \
            --upstream-curve-server root.pub --upstream-curve-secret "agg$a.key"
    done
    run_tree "$MW_PROGRAMS/known_c" "$N"
    check_known "$T/root.json" "known_c through two aggregators with CURVE"
    check_tree
    [ "$(json "$T/root-stats.json" "sum(j['auth_refused'].values())")" = 0 ] ||
        mw_fail "root refused a connection: $(cat "$T/root-stats.json")"
    # An aggregator whose key the root does not know: refused and counted on both sides.
    start_root --curve-secret root.key --curve-clients root-clients --silence-timeout-ms 3000
    start_agg 0 --curve-secret agg0.key --curve-clients agg-clients \
        --upstream-curve-server root.pub --upstream-curve-secret rogue.key
    start_agg 1 --curve-secret agg1.key --curve-clients agg-clients \
        --upstream-curve-server root.pub --upstream-curve-secret agg1.key
    "$MW_MPIRUN" --oversubscribe -np 4 -x LD_PRELOAD="$MW_LIB" -x MPIWATCH_WINDOW_MS \
        -x MW_TREE -x MW_TREE_KEY "$T/wrap.sh" "$MW_PROGRAMS/known_c" "$N" \
        >"$T/app.out" 2>"$T/app.err" || mw_fail "the job failed: $(tail -n 20 "$T/app.err")"
    wait_pid "${AGG_PIDS[0]}" 30 agg0
    wait_pid "${AGG_PIDS[1]}" 30 agg1
    wait_pid "$ROOT_PID" 30 root
    ROOT_PID=''
    [ "$(json "$T/root-stats.json" "j['auth_refused']['unauthorized'] > 0")" = True ] ||
        mw_fail "the root did not count the unknown aggregator: $(cat "$T/root-stats.json")"
    [ "$(json "$T/agg0-stats.json" "(j['upstream']['partials_sent'], j['upstream']['hellos_sent'],
         j['upstream']['partials_dropped'] > 0, j['upstream']['hellos_dropped'] > 0)")" = \
        "(0, 0, True, True)" ] ||
        mw_fail "the refused aggregator's counts: $(json "$T/agg0-stats.json" "j['upstream']")"
    [ "$(json "$T/root.json" "sorted(a['id'] for a in j['aggregators'])")" = "[1]" ] ||
        mw_fail "the root heard from: $(json "$T/root.json" "j['aggregators']")"
    grep -q "upstream: .* dropped" "$T/agg0.err" || mw_fail "agg0 did not log its drops"
    ;;
steer)
    prog=$MW_PROGRAMS/steer_cb
    [ -x "$prog" ] || mw_fail "program not built: $prog"
    start_root --control "ipc://$T/control"
    start_agg 0
    start_agg 1
    "$MW_MPIRUN" --oversubscribe -np 4 -x LD_PRELOAD="$MW_LIB" -x MPIWATCH_WINDOW_MS \
        -x MW_TREE "$T/wrap.sh" "$prog" poll "$T" >"$T/app.out" 2>"$T/app.err" &
    job=$!
    mw_wait_file "$T/ready" "$job" || mw_fail "the program never got ready"
    sleep 1.5 # the ranks' and the aggregators' subscriptions reach their publishers
    "$MW_LAUNCHER" steer "ipc://$T/control" app.msg=through-the-tree >"$T/steer.out" 2>&1 ||
        mw_fail "mpiwatch steer failed: $(cat "$T/steer.out")"
    # A window length change through the tree: the aggregators change their grid with the
    # ranks' (else every later sample would be refused as grid_mismatch).
    "$MW_LAUNCHER" steer "ipc://$T/control" mpiwatch.window=40 >"$T/steer.out" 2>&1 ||
        mw_fail "mpiwatch steer mpiwatch.window=40 failed: $(cat "$T/steer.out")"
    sleep 2.5 # the change starts about a second ahead
    touch "$T/stop"
    wait "$job" || mw_fail "the job failed: $(tail -n 20 "$T/app.err")"
    wait_pid "${AGG_PIDS[0]}" 30 agg0
    wait_pid "${AGG_PIDS[1]}" 30 agg1
    wait_pid "$ROOT_PID" 30 root
    ROOT_PID=''
    cat "$T/app.out"
    for r in 0 1 2 3; do
        [ "$(grep -c "^rank $r: " "$T/app.out")" = 1 ] || mw_fail "rank $r: not one line"
        grep -qx "rank $r: app.msg=through-the-tree thread=app via=poll" "$T/app.out" ||
            mw_fail "rank $r did not get the message through its aggregator"
    done
    for a in 0 1; do
        [ "$(json "$T/agg$a-stats.json" "(j['upstream']['steer_relayed'] >= 2,
             j['upstream']['steer_dropped'], j['rejected']['grid_mismatch'])")" = "(True, 0, 0)" ] ||
            mw_fail "agg$a relay: $(json "$T/agg$a-stats.json" "(j['upstream'], j['rejected'])")"
        grep -q "upstream: window length 40 ms from window" "$T/agg$a.err" ||
            mw_fail "agg$a did not change its grid: $(tail -n 5 "$T/agg$a.err")"
    done
    [ "$(json "$T/root-stats.json" "j['rejected']['grid_mismatch']")" = 0 ] ||
        mw_fail "the root refused partials of the new grid: $(cat "$T/root-stats.json")"
    ;;
relay)
    # A parent's steering socket played by Python (pyzmq): what the aggregator relays to its
    # ranks' subscribers is exactly the one well-formed message, byte for byte; a body over
    # MW_STEER_MAX_MESSAGE (8192), a topic that is not "steer" and a message of three frames
    # are dropped and counted.
    "$PY" -c 'import zmq' 2>/dev/null || mw_skip "no python3-zmq (Debian: python3-zmq)"
    "$PY" - "$T" "$C" <<'EOF' || mw_fail "the relay did not do what it should (above)"
import json, os, signal, subprocess, sys, time
import zmq
t, collector = sys.argv[1], sys.argv[2]
ctx = zmq.Context()
parent = ctx.socket(zmq.PUB)
parent.bind("ipc://%s/parent-steer" % t)
agg = subprocess.Popen([collector, "--listen", "ipc://%s/agg" % t, "--steer",
                        "ipc://%s/agg-steer" % t, "--upstream", "ipc://%s/parent" % t,
                        "--upstream-steer", "ipc://%s/parent-steer" % t, "--quiet",
                        "--stats-json", "%s/relay-stats.json" % t],
                       stdin=subprocess.DEVNULL, stderr=open("%s/agg0.err" % t, "w"))
rank = ctx.socket(zmq.SUB)
rank.setsockopt(zmq.SUBSCRIBE, b"")
rank.connect("ipc://%s/agg-steer" % t)
time.sleep(1.5)  # both subscriptions reach their publishers
good = b"\x08\x07" + os.urandom(40)
parent.send_multipart([b"steer", b"\x01" * 9000])
parent.send_multipart([b"steerX", b"\x01"])
parent.send_multipart([b"steer", b"\x01", b"\x02"])
parent.send_multipart([b"steer", good])
got = []
poller = zmq.Poller()
poller.register(rank, zmq.POLLIN)
end = time.time() + 3
while time.time() < end:
    if poller.poll(200):
        got.append(rank.recv_multipart())
agg.send_signal(signal.SIGTERM)
agg.wait(timeout=20)
stats = json.load(open("%s/relay-stats.json" % t))["upstream"]
ok = got == [[b"steer", good]] and stats["steer_relayed"] == 1 and stats["steer_dropped"] == 3
if not ok:
    print("received", [[len(f) for f in m] for m in got], "stats", stats)
sys.exit(0 if ok else 1)
EOF
    grep -q "upstream: .*steering relayed 1, dropped 3" "$T/agg0.err" ||
        mw_fail "the aggregator's log does not count the relay: $(tail -n 5 "$T/agg0.err")"
    ;;
killed)
    prog=$MW_PROGRAMS/steer_cb # runs until told to stop: a job with a middle
    [ -x "$prog" ] || mw_fail "program not built: $prog"
    start_root --silence-timeout-ms 3000
    start_agg 0
    # B closes its windows late (at their deadline: without its rank count it waits for the
    # job's other ranks), so that samples it took and counted in its AggStates are never sent.
    start_agg 1 --lateness-ms 3000 --expect-ranks ""
    "$MW_MPIRUN" --oversubscribe -np 4 -x LD_PRELOAD="$MW_LIB" -x MPIWATCH_WINDOW_MS \
        -x MW_TREE "$T/wrap.sh" "$prog" mpi "$T" >"$T/app.out" 2>"$T/app.err" &
    job=$!
    mw_wait_file "$T/ready" "$job" || mw_fail "the program never got ready"
    sleep 2.5 # B has sent AggStates counting samples it has not sent as partials yet
    kill -KILL "${AGG_PIDS[1]}"
    wait "${AGG_PIDS[1]}" 2>/dev/null
    sleep 0.5
    touch "$T/stop"
    wait "$job" || mw_fail "the job failed without its aggregator: $(tail -n 20 "$T/app.err")"
    wait_pid "${AGG_PIDS[0]}" 30 agg0
    wait_pid "$ROOT_PID" 30 root
    ROOT_PID=''
    [ -s "$T/root-report.txt" ] || mw_fail "the root wrote no report"
    [ "$(json "$T/root.json" "j['missed']['calls'] > 0")" = True ] ||
        mw_fail "the root reports nothing missed: $(json "$T/root.json" "j['missed']")"
    [ "$(json "$T/root.json" "[a['final'] for a in sorted(j['aggregators'], key=lambda a: a['id'])]")" = \
        "[True, False]" ] || mw_fail "the root's aggregators: $(json "$T/root.json" "j['aggregators']")"
    grep -qi "missed\|missing" "$T/root-report.txt" || mw_fail "the report says nothing of it"
    ;;
*)
    mw_fail "unknown mode $mode"
    ;;
esac
mw_log "ok"
