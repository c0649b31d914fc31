#!/bin/bash
# settings.sh: the library's documented MPIWATCH_* settings do what README.md and docs/shim.md
# say (each was untested before), on 4-rank jobs of tests/programs with a real collector:
#   ROWS/PEERS  MPIWATCH_ROWS=1 MPIWATCH_PEERS=1 on known_c: calls and bytes per function
#               stay exactly those of a default run, while a window holds occupancy for at most
#               one function per rank (the default run has more), the pairs keep fewer
#               messages (one destination per window and thread), and the overflow is counted
#               in the ranks' dropped records, never silent;
#   TIMER       MPIWATCH_TIMER=clock and =tsc: the known pattern, exactly, with both clocks;
#   MAX_THREADS MPIWATCH_MAX_THREADS=2 on threads (the MPI_Init thread and two workers making
#               M MPI_Iprobe each): exactly one worker's M calls per rank are recorded, and the
#               other worker's M calls are each counted as a dropped record and reported
#               missed in the summary (they are in the ranks' running totals);
#   STEP_MARKS  MPIWATCH_STEP_MARKS=1 with 200 ms windows and MPIWATCH_STEP=MPI_Allreduce:3 on
#               steps (60 steps of a few ms): steps are folded (docs/steps.md), and the steps
#               reported still account for every rank's 60 steps exactly: the sum of their
#               ranks and folded steps is 4 x 60, and each step's counts are the per-step counts
#               times its ranks plus folded steps;
#   SYNC_ROUNDS MPIWATCH_SYNC_ROUNDS=200 estimates a smaller clock error than =1 (the best of
#               many round trips against the first one).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mw_setup settings

# job NAME SUCCESS_REGEX ARGS...: a recorded job with the library, summary in NAME.json, the
# windows as JSON lines in NAME.jsonl.
job() {
    local name=$1 want=$2
    shift 2
    mw_start_collector --exit-after-job --summary-json "$MW_T/summary.json" --record "$MW_T/$name.mpiw"
    mw_mpirun "$@" >"$MW_T/$name.out" 2>"$MW_T/$name.err" ||
        { MW_FAILURE_LOG=$MW_T/$name.err; mw_fail "$name: the job failed"; }
    grep -q "$want" "$MW_T/$name.out" || mw_fail "$name: the program did not report success"
    mw_wait_collector 30
    cp "$MW_T/summary.json" "$MW_T/$name.json"
    "${MW_LAUNCHER%/mpiwatch}/mpiwatch-export" --format jsonl "$MW_T/$name.mpiw" -o "$MW_T/$name.jsonl" ||
        mw_fail "$name: export failed"
}
py() { "${MW_PYTHON:-/usr/bin/python3}" "$@"; }
n=2000
known="^known_c: $MW_NP ranks, N=$n, pattern ok"

# ---- MPIWATCH_ROWS / MPIWATCH_PEERS ----------------------------------------------------------
job rows_default "$known" "$MW_PROGRAMS/known_c" "$n"
job rows1 "$known" -x MPIWATCH_ROWS=1 -x MPIWATCH_PEERS=1 "$MW_PROGRAMS/known_c" "$n"
py - "$MW_T/rows_default" "$MW_T/rows1" "$MW_NP" <<'PY' || mw_fail "MPIWATCH_ROWS=1 MPIWATCH_PEERS=1 (above)"
import json, sys
d, o, np = sys.argv[1], sys.argv[2], int(sys.argv[3])
def most(path):
    ws = [json.loads(l) for l in open(path + ".jsonl")]
    return max(sum(1 for f in w["functions"].values() if f["occ_ns"] > 0) for w in ws)
sd, so = json.load(open(d + ".json")), json.load(open(o + ".json"))
errors = []
exact = lambda s: {k: (v["count"], v["bytes"]) for k, v in s["functions"].items()}
if exact(sd) != exact(so):
    errors.append("calls or bytes per function differ from the default run's")
pd = {(p["src"], p["dst"]): p["messages"] for p in sd["pairs"]}
po = {(p["src"], p["dst"]): p["messages"] for p in so["pairs"]}
if any(m > pd.get(k, 0) for k, m in po.items()) or sum(po.values()) >= sum(pd.values()):
    errors.append(f"pairs with one peer slot: {po}, default {pd}")
if sd["dropped"] != 0 or so["dropped"] == 0:
    errors.append(f"dropped: default {sd['dropped']}, overflowing run {so['dropped']} (must be > 0)")
md, mo = most(d), most(o)
if not (mo <= np < md):
    errors.append(f"functions with occupancy in one window: default {md}, ROWS=1 {mo}")
print(f"ROWS/PEERS: occupancy functions per window {md} -> {mo}; pair messages "
      f"{sum(pd.values())} -> {sum(po.values())}, dropped {so['dropped']}")
for e in errors:
    print("FAIL:", e)
sys.exit(1 if errors else 0)
PY

# ---- MPIWATCH_TIMER ------------------------------------------------------------------------
for timer in clock tsc; do
    job "timer_$timer" "$known" -x MPIWATCH_TIMER=$timer "$MW_PROGRAMS/known_c" "$n"
    cp "$MW_T/timer_$timer.json" "$MW_T/summary.json"
    mw_check --pattern known --n "$n" --label "known_c (MPIWATCH_TIMER=$timer)"
done

# ---- MPIWATCH_MAX_THREADS ------------------------------------------------------------------
m=20000
job threads "^threads: 2 threads x $m MPI_Iprobe per rank, ok" -x MPIWATCH_MAX_THREADS=2 \
    "$MW_PROGRAMS/threads" "$m"
py - "$MW_T/threads.json" "$m" "$MW_NP" <<'PY' || mw_fail "MPIWATCH_MAX_THREADS=2 (above)"
import json, sys
s, m, np = json.load(open(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3])
got = s["functions"].get("MPI_Iprobe", {}).get("count")
per_rank = [r["functions"].get("MPI_Iprobe", {}).get("count") for r in s["per_rank"]]
missed = s["missed"]["functions"].get("MPI_Iprobe", {}).get("count", 0)
print(f"MAX_THREADS=2: MPI_Iprobe {got} (per rank {per_rank}) + {missed} missed, "
      f"dropped {s['dropped']}")
# The refused worker's calls are not recorded, but counted: each one as a dropped record, and
# in the ranks' running totals, so that the summary reports them missed (docs/shim.md).
ok = (got == m * np and per_rank == [m] * np and missed == m * np and
      s["dropped"] >= m * np)
sys.exit(0 if ok else 1)
PY

# ---- MPIWATCH_STEP_MARKS -------------------------------------------------------------------
steps_n=60
MPIWATCH_WINDOW_MS=200 MPIWATCH_STEP=MPI_Allreduce:3 job folded \
    "^steps: $MW_NP ranks, every, N=$steps_n, ok" -x MPIWATCH_STEP -x MPIWATCH_STEP_MARKS=1 \
    "$MW_PROGRAMS/steps" every "$steps_n"
py - "$MW_T/folded.json" "$steps_n" "$MW_NP" <<'PY' || mw_fail "MPIWATCH_STEP_MARKS=1 (above)"
import json, sys
s, n, np = json.load(open(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3])
steps = s.get("steps") or []
per = {"MPI_Allreduce": 3, "MPI_Isend": 2, "MPI_Recv": 2, "MPI_Waitall": 1}
prelude = {"MPI_Init": 1, "MPI_Comm_rank": 1, "MPI_Comm_size": 1}
errors = []
folded = sum(st["folded"] for st in steps)
covered = sum(st["ranks"] + st["folded"] for st in steps)
if folded == 0:
    errors.append("no step was folded with one mark per window")
if covered != n * np:
    errors.append(f"the steps cover {covered} rank-steps, not {n} x {np}")
for st in steps:
    periods = st["ranks"] + st["folded"]
    want = {f: c * periods for f, c in per.items()}
    if st["step"] == min(x["step"] for x in steps):  # step 0, or the step it was folded into
        for f, c in prelude.items():
            want[f] = want.get(f, 0) + c * st["ranks"]
    got = {f: v["count"] for f, v in st["functions"].items()}
    if got != want:
        errors.append(f"step {st['step']}: {got}, want {want}")
print(f"STEP_MARKS=1: {len(steps)} steps reported, {folded} folded, {covered} rank-steps")
for e in errors[:10]:
    print("FAIL:", e)
sys.exit(1 if errors else 0)
PY
# ---- MPIWATCH_SYNC_ROUNDS ------------------------------------------------------------------
# The estimated clock error is half the smallest round trip of the ping-pongs: with one round
# it is that of the first exchange on a fresh communicator, with 200 the best of many, which
# is smaller (the report's "max estimated error" over the ranks).
sync_error() { sed -n 's/^clock sync *max estimated error \([0-9.]*\) us.*/\1/p' "$MW_T/collector.err" | tail -n 1; }
job sync1 "$known" -x MPIWATCH_SYNC_ROUNDS=1 "$MW_PROGRAMS/known_c" "$n"
e1=$(sync_error)
job sync200 "$known" -x MPIWATCH_SYNC_ROUNDS=200 "$MW_PROGRAMS/known_c" "$n"
e200=$(sync_error)
mw_log "clock sync error: 1 round $e1 us, 200 rounds $e200 us"
awk -v a="$e1" -v b="$e200" 'BEGIN { exit !(a != "" && b != "" && b + 0 < a + 0) }' ||
    mw_fail "MPIWATCH_SYNC_ROUNDS: 200 rounds give an error of $e200 us, 1 round $e1 us"
echo "settings: ok"
