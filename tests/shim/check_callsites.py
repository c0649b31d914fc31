#!/usr/bin/env python3
"""check_callsites.py OUT.jsonl --np NP --n N --mode c|fortran|off|stripped --source SRC
--program PROG: checks what mw-site-sink wrote for tests/programs/callsites{.c,_f.F90}
(tests/shim/callsites.sh, docs/callsites.md).

Every rank calls MPI_Allreduce N times from the line marked SITE_A and 2N times from SITE_B;
rank 0 calls MPI_Send N times from SITE_SEND, rank 1 MPI_Recv N times from SITE_RECV. The
lines are found by their markers in SRC. Per rank, summed over the samples, the (site,
function) entries must be exactly these, with these counts, no call may be dropped, the
counts must add up to the samples' function totals, and every site's definition must be
consistent across samples. c and fortran: each site resolves to SRC's file name and the
marker's line (c: and its enclosing function); stripped: the module is PROG, the offset
non-zero, file and line empty. off: no sample carries any site field. full
(MPIWATCH_CALLSITES_MAX=1: one entry per window and thread): calls are dropped, and the
entries plus the dropped calls still add up to the function totals.
"""
import argparse
import json
import os
import sys


def fail(msg):
    print("check_callsites: " + msg, file=sys.stderr)
    sys.exit(1)


def marker_lines(path):
    lines = {}
    with open(path, encoding="utf-8") as f:
        for no, text in enumerate(f, 1):
            for m in ("SITE_A", "SITE_B", "SITE_SEND", "SITE_RECV"):
                end = text.rstrip()
                if end.endswith("/* " + m + " */") or end.endswith("! " + m):
                    if m in lines:
                        fail(f"marker {m} appears twice in {path}")
                    lines[m] = no
    if len(lines) != 4:
        fail(f"markers missing in {path}: found {sorted(lines)}")
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--np", type=int, required=True)
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--mode", required=True, choices=["c", "fortran", "off", "stripped", "full"])
    ap.add_argument("--source", required=True)
    ap.add_argument("--program", required=True)
    a = ap.parse_args()
    n = a.n
    lines = marker_lines(a.source)
    samples = []
    byes = set()
    with open(a.out, encoding="utf-8") as f:
        for raw in f:
            rec = json.loads(raw)
            if rec["type"] == "error":
                fail(f"sink error: {rec}")
            if rec["type"] == "sample":
                samples.append(rec)
            elif rec["type"] == "bye":
                byes.add(rec["rank"])
    if byes != set(range(a.np)):
        fail(f"byes from ranks {sorted(byes)}, expected {a.np}")
    if not samples:
        fail("no sample")

    if a.mode == "off":
        bad = [s for s in samples if s["has_site_fields"]]
        if bad:
            fail(f"{len(bad)} samples carry site fields with MPIWATCH_CALLSITES=off: {bad[0]}")
        calls = sum(s["fn"].get("MPI_Allreduce", 0) for s in samples)
        if calls != 3 * n * a.np:
            fail(f"MPI_Allreduce calls {calls}, expected {3 * n * a.np} (the job must be recorded)")
        print(f"check_callsites: off: {len(samples)} samples, no site field")
        return

    # Expected per rank: marker -> (function, count, enclosing function in the C source).
    expect_all = {"SITE_A": ("MPI_Allreduce", n, "reduce_a"),
                  "SITE_B": ("MPI_Allreduce", 2 * n, "reduce_b")}
    for rank in range(a.np):
        defs = {}
        counts = {}
        fn_totals = {}
        dropped = 0
        for s in (x for x in samples if x["rank"] == rank):
            for d in s["defs"]:
                sid, addr, module, offset, function, file, line = d
                old = defs.get(sid)
                # A site numbered before libdw resolved it is defined again, complete, under
                # the same id (same address, module and offset; file and line, maybe the
                # function, added): the only change allowed, and only from unresolved.
                completes = (old is not None and old[1:4] == tuple(d[1:4]) and not old[5]
                             and not old[6] and (file or line) and old[4] in ("", function))
                if old is not None and old != tuple(d) and not completes:
                    fail(f"rank {rank}: site {sid} defined twice differently: {old} {d}")
                if old is None or completes:
                    defs[sid] = tuple(d)
            for sid, fn, count, ns, nbytes, max_ns in s["sites"]:
                if sid not in defs:
                    fail(f"rank {rank}: window {s['window']}: site {sid} used before its definition")
                if count <= 0 or max_ns > ns:
                    fail(f"rank {rank}: bad entry {[sid, fn, count, ns, nbytes, max_ns]}")
                key = (sid, fn)
                counts[key] = counts.get(key, 0) + count
            dropped += s["dropped"]
            for fn, c in s["fn"].items():
                fn_totals[fn] = fn_totals.get(fn, 0) + c
        if a.mode == "full":
            timed = sum(c for fn, c in fn_totals.items() if fn in ("MPI_Allreduce", "MPI_Send",
                                                                      "MPI_Recv"))
            got = sum(counts.values())
            if dropped == 0 or got == 0 or got + dropped != timed:
                fail(f"rank {rank}: full table: {got} in entries + {dropped} dropped, "
                     f"{timed} timed calls (dropped and entries must both be > 0)")
            continue
        if dropped:
            fail(f"rank {rank}: {dropped} calls dropped")
        expect = dict(expect_all)
        if rank == 0:
            expect["SITE_SEND"] = ("MPI_Send", n, "exchange")
        elif rank == 1:
            expect["SITE_RECV"] = ("MPI_Recv", n, "exchange")
        # site totals by function == the samples' function totals (timed functions)
        by_fn = {}
        for (sid, fn), c in counts.items():
            by_fn[fn] = by_fn.get(fn, 0) + c
        for fn, c in by_fn.items():
            if fn_totals.get(fn) != c:
                fail(f"rank {rank}: {fn}: sites count {c}, function total {fn_totals.get(fn)}")
        if len(counts) != len(expect):
            fail(f"rank {rank}: {len(counts)} (site, function) entries, expected {len(expect)}: "
                 f"{[(defs[s][2:], fn, c) for (s, fn), c in counts.items()]}")
        if a.mode == "stripped":
            # Without line tables the sites are told apart by their counts (all different).
            got = sorted((fn, c) for (sid, fn), c in counts.items())
            want = sorted((fn, c) for fn, c, _ in expect.values())
            if got != want:
                fail(f"rank {rank}: entries {got}, expected {want}")
            prog = os.path.realpath(a.program)
            for (sid, fn), c in counts.items():
                _, addr, module, offset, function, file, line = defs[sid]
                if os.path.realpath(module) != prog or offset == 0 or offset >= addr:
                    fail(f"rank {rank}: site {defs[sid]}: module must be {prog}, offset set")
                if file or line:
                    fail(f"rank {rank}: site {defs[sid]} of a stripped binary has a source line")
            continue
        base = os.path.basename(a.source)
        for marker, (fn, want, func) in expect.items():
            found = [(sid, f) for (sid, f) in counts
                     if f == fn and os.path.basename(defs[sid][5]) == base
                     and defs[sid][6] == lines[marker]]
            if len(found) != 1:
                fail(f"rank {rank}: {marker} ({base}:{lines[marker]}, {fn}): {len(found)} entries;"
                     f" sites {[defs[s][4:] + (f, c) for (s, f), c in counts.items()]}")
            got = counts[found[0]]
            if got != want:
                fail(f"rank {rank}: {marker}: {got} calls, expected {want}")
            d = defs[found[0][0]]
            if os.path.realpath(d[2]) != os.path.realpath(a.program) or d[3] == 0:
                fail(f"rank {rank}: {marker}: module {d[2]} offset {d[3]}, expected {a.program}")
            if a.mode == "c" and d[4] != func:
                fail(f"rank {rank}: {marker}: function {d[4]!r}, expected {func!r}")
            if a.mode == "fortran" and not d[4]:
                fail(f"rank {rank}: {marker}: no function name")
    print(f"check_callsites: {a.mode}: {len(samples)} samples, {a.np} ranks: every site exact")


if __name__ == "__main__":
    main()
