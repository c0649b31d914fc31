#!/usr/bin/env python3
"""check_regions.py OUT.jsonl --np NP --n N --mode api|instr|fortran --app APP.out

Checks what the ranks of tests/programs/regions.c (api, instr) or regions_f.f90 (fortran) sent,
as mw-region-sink wrote it (docs/regions.md): per rank, summed over its samples, the exact
count of every region, exclusive = inclusive minus the directly nested regions' inclusive time,
the MPI time of the innermost region (every MPI_Barrier is inside region_b / inner: its MPI time
equals the samples' MPI_Barrier time, the enclosing region gets none), the busy-wait times as
lower bounds and the loop's wall time as upper bound, regions_dropped (depth overflow and an
unmatched end; none for the instances begun while recording was paused, which are not
reported), the RegionDefs (every id defined, names and sources), and the per-function
peer entries of the known sends (api, instr).
"""
import argparse
import json
import sys

MS = 1000000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--np", type=int, required=True)
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--mode", required=True, choices=["api", "instr", "fortran"])
    ap.add_argument("--app", required=True)
    a = ap.parse_args()
    errors = []

    def err(msg):
        errors.append(msg)

    loop = {}
    with open(a.app) as f:
        for line in f:
            p = line.split()
            if len(p) == 5 and p[0] == "regions:" and p[3] == "loop_ns":
                loop[int(p[2])] = int(p[4])
    ranks = {}
    with open(a.out) as f:
        for line in f:
            m = json.loads(line)
            if m["type"] == "error":
                err("sink: %s" % m)
            if m["type"] != "sample":
                continue
            r = ranks.setdefault(m["rank"], {"defs": {}, "reg": {}, "dropped": 0, "peers": {},
                                             "barrier_ns": 0, "windows": set()})
            if m["window"] in r["windows"]:
                err("rank %d: window %d sent twice" % (m["rank"], m["window"]))
            r["windows"].add(m["window"])
            for i, name, src in m["defs"]:
                old = r["defs"].get(i)
                if old and old != (name, src):
                    err("rank %d: region id %d defined as %s and %s" % (m["rank"], i, old, (name, src)))
                r["defs"][i] = (name, src)
            seen = set()
            for i, count, incl, excl, mpi in m["regions"]:
                if i in seen:
                    err("rank %d window %d: region %d twice" % (m["rank"], m["window"], i))
                seen.add(i)
                if i not in r["defs"]:
                    err("rank %d window %d: region %d before its definition" % (m["rank"], m["window"], i))
                if count <= 0 or incl < excl or excl < mpi:
                    err("rank %d window %d: region %d count %d incl %d excl %d mpi %d" %
                        (m["rank"], m["window"], i, count, incl, excl, mpi))
                t = r["reg"].setdefault(i, [0, 0, 0, 0])
                for k, v in enumerate((count, incl, excl, mpi)):
                    t[k] += v
            r["dropped"] += m["dropped"]
            pseen = set()
            for rank, fn, msgs, nbytes in m["peers"]:
                if (rank, fn) in pseen:
                    err("rank %d window %d: peer entry %s twice" % (m["rank"], m["window"], (rank, fn)))
                pseen.add((rank, fn))
                t = r["peers"].setdefault((rank, fn), [0, 0])
                t[0] += msgs
                t[1] += nbytes
            r["barrier_ns"] += m["fn"].get("MPI_Barrier", [0, 0])[1]
    if sorted(ranks) != list(range(a.np)):
        err("samples from ranks %s, expected 0..%d" % (sorted(ranks), a.np - 1))
    n = a.n
    if a.mode == "fortran":
        n = 7
        want = {"outer": n, "inner": n}
        source, dropped = 1, 1
    else:
        want = {"region_a": n, "region_b": n, "deep_region": 8, "thread_t": 2 * n, "thread_u": 2 * n,
                "paused_inner": 0, "paused_open": 0}
        source = 1 if a.mode == "api" else 2
        dropped = 3
    for rk, r in sorted(ranks.items()):
        by = {}
        for i, (name, src) in r["defs"].items():
            if name in by:
                err("rank %d: name %r has ids %d and %d" % (rk, name, by[name][0], i))
            by[name] = (i, src)
        if set(by) != set(want):
            err("rank %d: regions %s, expected %s" % (rk, sorted(by), sorted(want)))
            continue
        if set(r["defs"]) != set(range(1, len(want) + 1)):
            err("rank %d: ids %s are not 1..%d" % (rk, sorted(r["defs"]), len(want)))
        tot = {}
        for name, (i, src) in by.items():
            if src != source:
                err("rank %d: %s has source %d, expected %d" % (rk, name, src, source))
            tot[name] = r["reg"].get(i, [0, 0, 0, 0])
            if tot[name][0] != want[name]:
                err("rank %d: %s counted %d times, expected %d" % (rk, name, tot[name][0], want[name]))
        if r["dropped"] != dropped:
            err("rank %d: regions_dropped %d, expected %d" % (rk, r["dropped"], dropped))
        print("rank %d: %s dropped %d barrier_ns %d loop_ns %s" %
              (rk, {k: v for k, v in sorted(tot.items())}, r["dropped"], r["barrier_ns"], loop.get(rk)))
        if a.mode == "fortran":
            outer, inner = tot["outer"], tot["inner"]
            if outer[2] != outer[1] - inner[1]:
                err("rank %d: outer excl %d != incl %d - inner incl %d" % (rk, outer[2], outer[1], inner[1]))
            if inner[3] != r["barrier_ns"] or outer[3] != 0:
                err("rank %d: MPI time inner %d outer %d, MPI_Barrier %d" %
                    (rk, inner[3], outer[3], r["barrier_ns"]))
            continue
        A, B, D, T, U = (tot[k] for k in ("region_a", "region_b", "deep_region", "thread_t", "thread_u"))
        if A[2] != A[1] - B[1]:
            err("rank %d: region_a excl %d != incl %d - region_b incl %d" % (rk, A[2], A[1], B[1]))
        if T[2] != T[1] - U[1]:
            err("rank %d: thread_t excl %d != incl %d - thread_u incl %d" % (rk, T[2], T[1], U[1]))
        if B[2] != B[1] or U[2] != U[1]:
            err("rank %d: a leaf region's excl differs from its incl: %s %s" % (rk, B, U))
        # MPI time goes to the innermost region only.
        if B[3] != r["barrier_ns"] or r["barrier_ns"] <= 0:
            err("rank %d: region_b MPI %d, the samples' MPI_Barrier %d" % (rk, B[3], r["barrier_ns"]))
        for name in ("region_a", "deep_region", "thread_t", "thread_u"):
            if tot[name][3] != 0:
                err("rank %d: %s has MPI time %d" % (rk, name, tot[name][3]))
        # Busy waits are lower bounds; the loop's wall time bounds region_a's inclusive time.
        for name, low in (("region_a", 3 * MS * n), ("region_b", MS * n), ("thread_t", MS // 2 * 2 * n),
                          ("thread_u", MS // 5 * 2 * n), ("deep_region", MS)):
            if tot[name][2] < low:
                err("rank %d: %s excl %d < %d busy-waited" % (rk, name, tot[name][2], low))
        if D[1] < D[2]:
            err("rank %d: deep_region incl %d < excl %d" % (rk, D[1], D[2]))
        lp = loop.get(rk)
        if lp is None:
            err("rank %d: no loop time printed" % rk)
        elif not (0.9 * lp <= A[1] <= lp):
            err("rank %d: region_a incl %d, loop wall time %d" % (rk, A[1], lp))
        right = (rk + 1) % a.np
        want_p = {(right, "MPI_Send"): [3, 96], (right, "MPI_Isend"): [2, 64],
                  (right, "MPI_Ssend"): [1, 32]}
        if r["peers"] != want_p:
            err("rank %d: peer entries %s, expected %s" % (rk, r["peers"], want_p))
    for e in errors:
        print("FAIL:", e)
    if not errors:
        print("regions (%s): %d ranks ok" % (a.mode, len(ranks)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
