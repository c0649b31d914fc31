#!/usr/bin/env python3
"""check_regions_sites.py regions|sites: what a user reads about code regions and call sites
(the collector's summary JSON, its end-of-run report and the recording's jsonl export) against
what the known programs did (tests/programs/regions.c, callsites.c; regions_sites.sh runs them).
Every figure is exact or a bound the program guarantees; nothing is taken from the output
itself as the expectation."""
import argparse
import json
import re
import sys

MS = 1000000


def fail(msg):
    print("check_regions_sites: " + msg, file=sys.stderr)
    sys.exit(1)


def windows(path):
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                w = json.loads(line)
                if "index" in w:
                    out.append(w)
    if not out:
        fail("the export holds no window")
    return out


def check_regions(a, s, report, wins):
    n, np = a.n, a.np
    regs = {r["name"]: r for r in s.get("regions", [])}
    want = {"region_a": n * np, "region_b": n * np, "thread_t": 2 * n * np,
            "thread_u": 2 * n * np, "deep_region": 8 * np}
    for name, count in want.items():
        if name not in regs:
            fail("region %s missing from the summary (has %s)" % (name, sorted(regs)))
        if regs[name]["count"] != count:
            fail("region %s: %d instances, the program made %d" % (name, regs[name]["count"], count))
    for name, r in regs.items():
        if name.startswith("paused_") and r["count"]:
            fail("region %s was begun while paused but is reported %d times" % (name, r["count"]))
        if r["excl_ns"] > r["incl_ns"]:
            fail("region %s: exclusive %d > inclusive %d" % (name, r["excl_ns"], r["incl_ns"]))
    barrier = s["functions"].get("MPI_Barrier")
    if not barrier or barrier["count"] != n * np:
        fail("MPI_Barrier: %s, expected %d calls" % (barrier, n * np))
    # Every MPI_Barrier is made inside region_b, its innermost region: all of their time is
    # region_b's, none is region_a's (the same durations are summed on both sides: exact).
    if regs["region_b"]["mpi_ns"] != barrier["time_ns"]:
        fail("region_b's MPI time %d != the MPI_Barrier time %d" %
             (regs["region_b"]["mpi_ns"], barrier["time_ns"]))
    for name in ("region_a", "thread_t", "thread_u", "deep_region"):
        if regs[name]["mpi_ns"] != 0:
            fail("region %s has MPI time %d but makes no MPI call itself" % (name, regs[name]["mpi_ns"]))
    # Exclusive = inclusive minus the directly nested instances' inclusive time.
    for outer, inner in (("region_a", "region_b"), ("thread_t", "thread_u")):
        if regs[outer]["excl_ns"] != regs[outer]["incl_ns"] - regs[inner]["incl_ns"]:
            fail("region %s: exclusive %d != inclusive %d - %s's inclusive %d" %
                 (outer, regs[outer]["excl_ns"], regs[outer]["incl_ns"], inner, regs[inner]["incl_ns"]))
    # The program spins 3 ms in region_a itself, 1 ms in region_b, 0.5 and 0.2 ms on the thread.
    for name, spin_ns, count in (("region_a", 3 * MS, n * np), ("region_b", 1 * MS, n * np),
                                 ("thread_t", MS // 2, 2 * n * np), ("thread_u", MS // 5, 2 * n * np)):
        if regs[name]["excl_ns"] < spin_ns * count:
            fail("region %s: exclusive %d ns < the %d ns the program spins in it" %
                 (name, regs[name]["excl_ns"], spin_ns * count))
    # The windows add up to the summary.
    tot = {}
    for w in wins:
        for r in w.get("regions", []):
            t = tot.setdefault(r.get("name", "#%d" % r["id"]), [0, 0, 0, 0])
            for i, k in enumerate(("count", "incl_ns", "excl_ns", "mpi_ns")):
                t[i] += r[k]
    for name, r in regs.items():
        got = tot.get(name, [0, 0, 0, 0])
        if got != [r["count"], r["incl_ns"], r["excl_ns"], r["mpi_ns"]]:
            fail("region %s: the windows sum to %s, the summary says %s" %
                 (name, got, [r["count"], r["incl_ns"], r["excl_ns"], r["mpi_ns"]]))
    for name in want:
        if not re.search(r"^\s*\S*\s*%s\b" % name, report, re.M) and name not in report:
            fail("the report does not list region %s" % name)


def marker_lines(path):
    lines = {}
    with open(path) as f:
        for i, line in enumerate(f, 1):
            m = re.search(r"/\* (SITE_[A-Z]+) \*/", line)
            if m:
                lines[m.group(1)] = i
    return lines


def check_sites(a, s, report, wins):
    n, np = a.n, a.np
    lines = marker_lines(a.source)
    want = {"SITE_A": ("MPI_Allreduce", "reduce_a", n * np), "SITE_B": ("MPI_Allreduce", "reduce_b", 2 * n * np),
            "SITE_SEND": ("MPI_Send", "exchange", n), "SITE_RECV": ("MPI_Recv", "exchange", n)}
    sites = s.get("top_sites", [])
    by_line = {}
    for t in sites:
        if t["file"].endswith("callsites.c"):
            by_line.setdefault((t["line"], t["fn"]), []).append(t)
    for mark, (fn, func, count) in want.items():
        got = by_line.get((lines[mark], fn))
        if not got:
            fail("%s (callsites.c:%d, %s) is not among the summary's top sites: %s" %
                 (mark, lines[mark], fn, [(t["file"], t["line"], t["fn"]) for t in sites]))
        if len(got) != 1:
            fail("%s appears %d times (one site per line and function expected)" % (mark, len(got)))
        t = got[0]
        if t["count"] != count:
            fail("%s: %d calls, the program made %d" % (mark, t["count"], count))
        if t["function"] != func:
            fail("%s: resolved to function %r, it is in %s" % (mark, t["function"], func))
        where = "callsites.c:%d" % lines[mark]
        if where not in report:
            fail("the report does not list %s" % where)
    # Every timed call of these functions has its site: the sites add up to the function.
    for fn in ("MPI_Allreduce", "MPI_Send", "MPI_Recv"):
        f = s["functions"][fn]
        cnt = sum(t["count"] for t in sites if t["fn"] == fn)
        ns = sum(t["ns"] for t in sites if t["fn"] == fn)
        if (cnt, ns) != (f["count"], f["time_ns"]):
            fail("%s: its sites sum to %d calls / %d ns, the function to %d / %d" %
                 (fn, cnt, ns, f["count"], f["time_ns"]))
    tot = {}
    for w in wins:
        for t in w.get("sites", []):
            k = (t.get("file", ""), t.get("line", 0), t["fn"])
            tot[k] = tot.get(k, 0) + t["count"]
    for t in sites:
        k = (t["file"], t["line"], t["fn"])
        if tot.get(k, 0) != t["count"]:
            fail("site %s: the windows sum to %d calls, the summary says %d" % (k, tot.get(k, 0), t["count"]))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=("regions", "sites"))
    p.add_argument("--n", type=int, required=True)
    p.add_argument("--np", type=int, required=True)
    p.add_argument("--summary", required=True)
    p.add_argument("--report", required=True)
    p.add_argument("--windows", required=True)
    p.add_argument("--app", required=True)
    p.add_argument("--source", required=True)
    a = p.parse_args()
    with open(a.summary) as f:
        s = json.load(f)
    with open(a.report) as f:
        report = f.read()
    wins = windows(a.windows)
    (check_regions if a.mode == "regions" else check_sites)(a, s, report, wins)
    print("check_regions_sites: %s ok" % a.mode)


main()
