#!/usr/bin/env python3
"""check_steps.py SUMMARY MODE N NP: the summary's "steps" must hold exactly the per-step
totals of tests/programs/steps.c (see its header) run in MODE with N steps on NP ranks."""
import json
import sys

path, mode, n, np = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
summary = json.load(open(path))
steps = summary.get("steps")
errors = []
if not steps:
    sys.exit("FAIL: the summary has no steps")
# Only in the first step of a rank: what the program calls before its loop.
PRELUDE = {"MPI_Init": 1, "MPI_Comm_rank": 1, "MPI_Comm_size": 1}


def expect(mode, s):
    """(counts per rank, Isend bytes per rank) of step s."""
    if mode == "api":
        c = {"MPI_Allreduce": s + 1, "MPI_Isend": 2, "MPI_Recv": 2, "MPI_Waitall": 1}
        return c, 2 * 4 * (s % 64 + 1)
    if mode == "every":
        c = {"MPI_Allreduce": 3, "MPI_Isend": 2, "MPI_Recv": 2, "MPI_Waitall": 1}
        return c, 2 * 4 * (s % 64 + 1)
    c = {"MPI_Allreduce": 1, "MPI_Isend": 2, "MPI_Recv": 2, "MPI_Waitall": 1, "MPI_Bcast": 1}
    return c, 2 * 4 * 4


def check(what, got, want):
    if got != want:
        errors.append(f"{what}: got {got}, want {want}")


if mode in ("api", "every"):
    check("steps", [s["step"] for s in steps], list(range(n)))
for st in steps:
    s, ranks = st["step"], st["ranks"]
    if mode == "auto" and s == 0:
        continue  # each rank's first detected step holds everything before the detection
    if mode != "auto":
        check(f"step {s} ranks", ranks, np)
        check(f"step {s} folded", st["folded"], 0)
    # A rank with more steps in one window than MPIWATCH_STEP_MARKS folds the extra marks into
    # the next one, whose totals then hold those steps too: exactly (ranks + folded) periods.
    want, sbytes = expect(mode, s)
    periods = ranks + st["folded"]
    want = {f: c * periods for f, c in want.items()}
    if s == 0:
        for f, c in PRELUDE.items():
            want[f] = want.get(f, 0) + c * ranks
    got = {f: v["count"] for f, v in st["functions"].items()}
    check(f"step {s} counts", got, want)
    check(f"step {s} MPI_Isend bytes", st["functions"].get("MPI_Isend", {}).get("bytes"),
          sbytes * periods)
    check(f"step {s} mpi_time_ns", st["mpi_time_ns"],
          sum(v["time_ns"] for v in st["functions"].values()))
    if mode != "auto":
        pairs = {(p["src"], p["dst"]): (p["messages"], p["bytes"]) for p in st["pairs"]}
        check(f"step {s} pairs", pairs, {(r, (r + 1) % np): (2, sbytes) for r in range(np)})
    if st["start_ns"] > st["end_ns"]:
        errors.append(f"step {s}: start after end")
if mode == "auto":
    # Detected within the first half of the run, so most iterations are steps of their own.
    covered = sum(st["ranks"] + st["folded"] for st in steps)
    if covered < np * n // 2:
        errors.append(f"detected steps cover {covered} rank-iterations of {np * n}")
for e in errors[:30]:
    print("FAIL:", e)
if errors:
    sys.exit(1)
print(f"check_steps: {len(steps)} steps exact ({mode}, N={n}, {np} ranks)")
