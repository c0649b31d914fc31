"""check_capture.py: checks the captured windows of a recording (tests/capture/capture.sh).

Reads `mpiwatch-export --format capture` (one JSON line per captured window of a rank) and
`--format perfetto` of the same recording, and checks, for every rank:
  - each request is captured on exactly the expected windows, consecutive and whole:
      --auto N      mpiwatch.capture=N: N windows from the request's own first, none skipped
      --at N@K      windows K..K+N-1
      --late N@K    K had begun when it was sent: windows K+s..K+N-1, s = skipped >= 1, and
                    at least one window
      --paused N    sent while recording was paused: N windows, at least one without calls
      --rule N      a rule's capture: N windows from K, the same K on every rank, and the
                    firing and its steering message are events of the recording
    and no other window has a trace;
  - in each captured window: no call dropped, the calls per function are exactly the counts
    of the window's sample (counted-only functions have neither), every call ends inside its
    window (give or take 1 us; a late call, which ended in an earlier window, is allowed up to
    the sample's calls_late), and capture_job's exact bytes and peers;
  - the Perfetto export has exactly these calls as slices on each rank's capture track.
Prints every mismatch and exits 1 if there was one.
"""
import argparse, json, sys
from collections import Counter, defaultdict

ap = argparse.ArgumentParser()
ap.add_argument("--capture", required=True)
ap.add_argument("--perfetto", required=True)
ap.add_argument("--np", type=int, required=True)
ap.add_argument("--window-ns", type=int, required=True)
ap.add_argument("--auto", type=int)
ap.add_argument("--at")
ap.add_argument("--late")
ap.add_argument("--paused", type=int)
ap.add_argument("--rule", type=int)
a = ap.parse_args()

TOL = 1000
TID_CAPTURE = 5 << 20  # tools/export.c: MW_EXPORT_TID_CAPTURE
errors = []


def err(msg):
    errors.append(msg)


def nk(spec):
    n, k = spec.split("@")
    return int(n), int(k)


lines = [json.loads(l) for l in open(a.capture)]
by_rank = defaultdict(list)
calls_of = defaultdict(Counter)  # rank -> function -> traced calls in all windows
for ln in lines:
    r, w = ln["rank"], ln["window"]
    where = f"rank {r} window {w}"
    if ln["window_ns"] != a.window_ns or ln["start_ns"] != w * a.window_ns:
        err(f"{where}: grid {ln['window_ns']} / {ln['start_ns']}")
    if ln["dropped"] != 0:
        err(f"{where}: {ln['dropped']} calls dropped")
    got = Counter(c[0] for c in ln["calls"])
    if got != Counter(ln["counts"]):
        err(f"{where}: traced {dict(got)} but the sample counts {ln['counts']}")
    if "MPI_Comm_rank" in got or "MPI_Comm_rank" in ln["counts"]:
        err(f"{where}: a counted-only function traced or listed")
    early = 0
    for name, start, dur, nbytes, peer in ln["calls"]:
        end = start + dur
        if end > a.window_ns + TOL:
            err(f"{where}: {name} ends {end} ns after the window's start")
        if end < -TOL:
            early += 1
        want = {"MPI_Isend": (16, (r + 1) % a.np), "MPI_Allreduce": (4, -1),
                "MPI_Recv": (0, -1), "MPI_Bcast": (4, -1), "MPI_Wait": (0, -1)}.get(name)
        if want is None:
            err(f"{where}: unexpected function {name}")
        elif (nbytes, peer) != want:
            err(f"{where}: {name} bytes {nbytes} peer {peer}, expected {want}")
    if early > ln["calls_late"]:
        err(f"{where}: {early} calls ended before the window, calls_late {ln['calls_late']}")
    by_rank[r].append(ln)
    calls_of[r].update(got)

if sorted(by_rank) != list(range(a.np)):
    err(f"ranks with captures: {sorted(by_rank)}, expected all of 0..{a.np - 1}")


def windows_of(group):
    ws = sorted(ln["window"] for ln in group)
    if len(set(ws)) != len(ws):
        err(f"a window captured twice: {ws}")
    return ws


def consecutive(ws, first, last, what):
    if ws != list(range(first, last + 1)):
        err(f"{what}: windows {ws}, expected {first}..{last}")


rule_first = set()
for r, group in sorted(by_rank.items()):
    requests = defaultdict(list)
    for ln in group:
        requests[(ln["first"], ln["windows"])].append(ln)
    seen = set()
    for (first, n), g in sorted(requests.items()):
        ws = windows_of(g)
        skipped = {ln["skipped"] for ln in g}
        what = f"rank {r} request {n}@{first}"
        if len(skipped) != 1:
            err(f"{what}: skipped differs between its windows: {skipped}")
        s = min(skipped)
        if a.at and (n, first) == nk(a.at):
            seen.add("at")
            consecutive(ws, first, first + n - 1, what)
            if s:
                err(f"{what}: skipped {s}")
        elif a.late and (n, first) == nk(a.late):
            seen.add("late")
            if s < 1:
                err(f"{what}: sent after window {first} began, yet skipped {s}")
            consecutive(ws, first + s, first + n - 1, what)
        elif a.auto and n == a.auto and "auto" not in seen:
            seen.add("auto")
            consecutive(ws, first, first + n - 1, what)
            if s:
                err(f"{what}: skipped {s}")
        elif a.paused and n == a.paused and "paused" not in seen:
            seen.add("paused")
            consecutive(ws, first, first + n - 1, what)
            if not any(not ln["calls"] and not ln["counts"] for ln in g):
                err(f"{what}: no captured window without calls while paused")
        elif a.rule and n == a.rule and "rule" not in seen:
            seen.add("rule")
            consecutive(ws, first, first + n - 1, what)
            rule_first.add(first)
            if s:
                err(f"{what}: skipped {s}")
        else:
            err(f"rank {r}: a capture nobody asked for: {n}@{first} on windows {ws}")
    want = {k for k in ("auto", "at", "late", "paused", "rule") if getattr(a, k)}
    if seen != want:
        err(f"rank {r}: captured requests {sorted(seen)}, expected {sorted(want)}")

trace = json.load(open(a.perfetto))
events = trace["traceEvents"]
slices = defaultdict(Counter)
names = {}
for e in events:
    if e.get("ph") == "M" and e.get("name") == "thread_name" and e["tid"] >= TID_CAPTURE:
        names[e["tid"]] = e["args"]["name"]
    if e.get("ph") == "X" and e.get("cat") == "capture":
        rank = (e["tid"] - TID_CAPTURE) % (1 << 20)
        slices[rank][e["name"]] += 1
        if not e["tid"] in names:
            err(f"capture slice on unnamed thread {e['tid']}")
if dict(slices) != dict(calls_of):
    err(f"perfetto capture slices {dict(slices)} differ from the captured calls {dict(calls_of)}")
total = sum(sum(c.values()) for c in calls_of.values())
if int(trace["otherData"]["captured_calls"]) != total or total == 0:
    err(f"perfetto captured_calls {trace['otherData']['captured_calls']}, calls {total}")
for r in range(a.np):
    if names.get(TID_CAPTURE + r) != f"rank {r} captured calls":
        err(f"rank {r}: capture track named {names.get(TID_CAPTURE + r)!r}")

if a.rule:
    if len(rule_first) != 1:
        err(f"the rule's capture started at different windows on different ranks: {rule_first}")
    fired = [e for e in events if e.get("ph") == "i" and e["name"] == "rule"]
    sent = [e for e in events if e.get("ph") == "i" and e["name"] == "steer"]
    if len(fired) != 1 or "rule=trace-it" not in fired[0]["args"]["detail"]:
        err(f"rule events: {fired}")
    if len(sent) != 1 or len(rule_first) != 1 or \
            not sent[0]["args"]["detail"].startswith(f"mpiwatch.capture=3@{min(rule_first)}"):
        err(f"steering events: {sent}")

for e in errors:
    print("check_capture:", e)
print(f"check_capture: {len(lines)} captured windows, {total} calls, "
      f"{'ok' if not errors else f'{len(errors)} errors'}")
sys.exit(1 if errors else 0)
