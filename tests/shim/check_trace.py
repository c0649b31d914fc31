"""check_trace.py: checks what mw-trace-sink received from a traced job (tests/shim/trace.sh).

check_trace.py OUT.jsonl --np N --mode plan|reach|ring|off --log APP.ERR

Always: every rank said bye and sent samples; every sample's Trace is about its own window; a
traced window (state EXACT) holds, function by function, exactly the timed calls its sample
counts (counted-only functions never); a summary-only window counts all its timed calls as
left out and holds no records. Then, by mode:
  plan   mpiwatch.trace=every:4:2@K sent 8 windows before K: the windows sent before it
         traced (plan all), then none up to K, from K on exactly K + 4i and K + 4i + 1, the
         others summary only with reason budget; every rank counted the
         eight bad plans as refused (its MPIWATCH_VERBOSE log);
  reach  plan off: no sample traced except for a capture; capture=3@K1 sent six windows after
         K1: windows K1..K1+2 come back as reach-back traces (Trace.capture = K1 << 16 | 3),
         all before the request, each holding its sample's calls; capture=6@K2: each of
         K2..K2+5 exactly once, as a reach-back trace or traced with its sample, both kinds
         seen;
  ring   a window over the 1,024-record ring is summary only with reason ring full, and its
         calls are left out; from the first one on, the rank's traces say that channel
         indices are unreliable;
  off    no sample carries a Trace.
Every rank sends the definitions of MPI_COMM_WORLD and MPI_COMM_SELF, each once (none with
tracing off). Point-to-point records, when the records carry them, must have unique channel
indices on each side, and most receives of the traced windows must find their send.
Prints every mismatch and exits 1 if there was one.
"""
import argparse, json, re, sys
from collections import Counter, defaultdict

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--np", type=int, required=True)
ap.add_argument("--mode", required=True)
ap.add_argument("--log", required=True)
a = ap.parse_args()

EXACT, SUMMARY = 1, 2
BUDGET, RING_FULL = 1, 2
errors = []


def err(msg):
    errors.append(msg)


samples = {}  # (rank, window) -> line
traces = defaultdict(list)  # rank -> reach-back trace lines
steers, byes = [], set()
for ln in open(a.out):
    j = json.loads(ln)
    t = j["type"]
    if t == "sample":
        key = (j["rank"], j["window"])
        if key in samples:
            err(f"rank {key[0]} window {key[1]}: two samples")
        samples[key] = j
    elif t == "trace":
        traces[j["rank"]].append(j)
    elif t == "steer":
        steers.append(j)
    elif t == "bye":
        byes.add(j["rank"])
    else:
        err(f"sink error: {j}")

by_rank = defaultdict(dict)
for (r, w), s in samples.items():
    by_rank[r][w] = s
for r in range(a.np):
    if r not in byes:
        err(f"rank {r}: no bye")
    if len(by_rank[r]) < (3 if a.mode == "ring" else 10):
        err(f"rank {r}: only {len(by_rank[r])} samples")


def timed(s):
    return sum(s["counts"].values())


def check_trace(where, tr, s):
    """A Trace (of a sample or a reach-back) against its sample s."""
    if "error" in tr:
        err(f"{where}: records do not decode: {tr['error']}")
        return
    if s is not None and tr["window"] != s["window"]:
        err(f"{where}: trace of window {tr['window']}")
    if tr["state"] == EXACT:
        if s is not None and tr["calls"] != s["counts"]:
            err(f"{where}: traced {tr['calls']} but the sample counts {s['counts']}")
        if tr["left_out"] != 0:
            err(f"{where}: exact but {tr['left_out']} calls left out")
        if "MPI_Comm_rank" in tr["calls"]:
            err(f"{where}: a counted-only function traced")
    elif tr["state"] == SUMMARY:
        if tr["count"] != 0 or tr["calls"]:
            err(f"{where}: summary only with {tr['count']} records")
        if s is not None and tr["left_out"] != timed(s):
            err(f"{where}: left_out {tr['left_out']}, the sample has {timed(s)} timed calls")
        if tr["reason"] not in (BUDGET, RING_FULL):
            err(f"{where}: reason {tr['reason']}")
    else:
        err(f"{where}: state {tr['state']}")


for (r, w), s in sorted(samples.items()):
    tr = s["trace"]
    if a.mode == "off":
        if tr is not None:
            err(f"rank {r} window {w}: a Trace with MPIWATCH_TRACE=off")
        continue
    if tr is None:
        err(f"rank {r} window {w}: no Trace")
        continue
    check_trace(f"rank {r} window {w}", tr, s)
for r, lst in traces.items():
    for t in lst:
        check_trace(f"rank {r} reach-back window {t['window']}", t["trace"],
                    by_rank[r].get(t["window"]))


def state(s):
    return (s["trace"]["state"], s["trace"]["reason"]) if s["trace"] else None


log = open(a.log, errors="replace").read()

if a.mode == "plan":
    # the first plan sent is the good one; the others are refused
    good = [x for x in steers[:1] if x["key"] == "mpiwatch.trace" and
            re.fullmatch(r"every:4:2@\d{1,15}", x["value"])]
    if len(good) != 1:
        err(f"expected one good plan, the sink sent {steers}")
    else:
        k = int(good[0]["value"].split("@")[1])
        for r in range(a.np):
            ws = sorted(by_rank[r])
            if not ws or ws[-1] < k + 8:
                err(f"rank {r}: samples end at {ws[-1] if ws else None}, before K + 8 = {k + 8}")
            bad = 0
            ws0 = good[0]["window"]  # rank 0's newest sample when the plan was sent
            for w in ws:
                s = by_rank[r][w]
                st = state(s)
                if ws0 <= w <= ws0 + 2:
                    continue  # sent before or after the plan arrived: either is right
                # a plan applies to every window not sent yet: all before it, none up to K
                want = w < ws0 or (w >= k and (w - k) % 4 < 2)
                if want and st != (EXACT, 0):
                    # a window over capacity would be marked ring full: never the plan
                    bad += 1
                    if st is None or st[1] == BUDGET:
                        err(f"rank {r} window {w}: in the plan but {st}")
                if not want and st != (SUMMARY, BUDGET):
                    err(f"rank {r} window {w}: not in the plan but {st}")
            if bad > 1:
                err(f"rank {r}: {bad} planned windows not exact")
        m = re.findall(r"plans: (\d+) requests, (\d+) bad", log)
        if len(m) != a.np or any(x != ("9", "8") for x in m):
            err(f"plan counters in the ranks' logs: {m}, expected 9 requests, 8 bad on each")
elif a.mode == "reach":
    caps = [x for x in steers if x["key"] == "mpiwatch.capture"]
    if len(caps) != 2:
        err(f"expected two captures, the sink sent {caps}")
    else:
        (n1, k1), (n2, k2) = [tuple(int(v) for v in x["value"].split("@")) for x in caps]
        id1, id2 = k1 << 16 | n1, k2 << 16 | n2
        both = Counter()
        for r in range(a.np):
            got1 = sorted(t["window"] for t in traces[r] if t["trace"]["capture"] == id1)
            if got1 != list(range(k1, k1 + n1)):
                err(f"rank {r}: reach-back windows {got1} for 3@{k1}")
            for t in traces[r]:
                if t["trace"]["capture"] == id1 and t["trace"]["state"] != EXACT:
                    err(f"rank {r} window {t['window']}: reach-back not exact")
            if k1 + n1 - 1 >= caps[0]["window"]:
                err(f"3@{k1} reaches windows after the request ({caps[0]['window']})")
            seen = Counter(t["window"] for t in traces[r] if t["trace"]["capture"] == id2)
            for w in seen:
                both["reach"] += 1
            for w, s in by_rank[r].items():
                tr = s["trace"]
                if tr and tr["capture"] == id2 and tr["state"] == EXACT:
                    seen[w] += 1
                    both["sample"] += 1
            if dict(seen) != {w: 1 for w in range(k2, k2 + n2)}:
                err(f"rank {r}: capture 6@{k2} delivered windows {dict(seen)}")
            ids = {t["trace"]["capture"] for t in traces[r]} - {id1, id2}
            if ids:
                err(f"rank {r}: reach-back traces of unknown requests {ids}")
            for w, s in by_rank[r].items():
                tr = s["trace"]
                planned = tr and tr["capture"] == id2
                if not planned and state(s) != (SUMMARY, BUDGET):
                    err(f"rank {r} window {w}: with plan off {state(s)}")
        if not both["reach"] or not both["sample"]:
            err(f"capture 6@{k2}: windows from the flight recorder {both['reach']}, "
                f"with samples {both['sample']}: both kinds expected")
elif a.mode == "ring":
    full = 0
    for r in range(a.np):
        first = None
        prev = None
        for w in sorted(by_rank[r]):
            s = by_rank[r][w]
            st = state(s)
            if st == (SUMMARY, RING_FULL):
                full += 1
                # capture_job writes 6 records per 5 calls (the Isend's completion); a window
                # can also lose records while the ring is full of the one before
                if timed(s) * 6 <= 1024 * 5 and prev != (SUMMARY, RING_FULL):
                    err(f"rank {r} window {w}: ring full with {timed(s)} calls")
                if first is None:
                    first = w
            elif st == (EXACT, 0) and timed(s) * 6 > 1024 * 5:
                err(f"rank {r} window {w}: {timed(s)} calls traced in a 1,024-record ring")
            if first is not None and not s["trace"]["flags"] & 1:
                err(f"rank {r} window {w}: indices not marked unreliable after lost records")
            prev = st
    if not full:
        err("no window was over the ring")
elif a.mode == "off":
    if "trace plan" in log:
        err("a plan was taken with MPIWATCH_TRACE=off")

# Communicator definitions: MPI_COMM_WORLD (1) and MPI_COMM_SELF (2) at least, each once.
if a.mode != "off":
    for r in range(a.np):
        ids = Counter(c for s in by_rank[r].values() for c in s["comms"])
        if ids["1"] != 1 or ids["2"] != 1 or any(n > 1 for n in ids.values()):
            err(f"rank {r}: communicator definitions {dict(ids)}")
else:
    if any(s["comms"] for s in samples.values()):
        err("communicator definitions with MPIWATCH_TRACE=off")

# Channel indices: unique per side; most receives find their send.
sends, recvs = Counter(), Counter()
for (r, w), s in samples.items():
    tr = s["trace"]
    if not tr or tr["state"] != EXACT:
        continue
    for kind, comm, peer, tag, seq, flags in tr.get("p2p", []):
        if flags & 8:  # MW_TF_NOSEQ
            continue
        if kind in (1, 3):
            sends[(comm, r, peer, tag, seq)] += 1
        elif kind in (2, 6):
            recvs[(comm, peer, r, tag, seq)] += 1
for name, c in (("send", sends), ("receive", recvs)):
    dup = [k for k, n in c.items() if n > 1]
    if dup:
        err(f"{len(dup)} {name} channel indices used twice, e.g. {dup[:3]}")
if recvs and a.mode == "plan":
    matched = sum(1 for k in recvs if k in sends)
    if matched < 0.9 * len(recvs):
        err(f"only {matched} of {len(recvs)} receives found their send")
    print(f"check_trace: {matched} of {len(recvs)} receives matched")

for e in errors[:60]:
    print("check_trace:", e, file=sys.stderr)
if errors:
    print(f"check_trace: {len(errors)} mismatches", file=sys.stderr)
    sys.exit(1)
print(f"check_trace: {a.mode}: {len(samples)} samples, "
      f"{sum(len(v) for v in traces.values())} reach-back traces: ok")
