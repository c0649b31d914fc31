#!/usr/bin/env python3
"""check_recording.py RECORDING SUMMARY_JSON JSONL: the Python package against the collector.

Reads RECORDING with mpiwatch.Recording and compares, exactly (integers, no tolerance):
  - the windows: as many as the summary's `windows`; index by index, every function's calls,
    time and bytes equal to the same window of `mpiwatch-export --format jsonl` (JSONL);
  - the job: `ranks` and each rank's host equal to the summary's;
  - per function over the job: calls, time_ns, bytes equal to the summary's `functions`
    (the same set of names);
  - per rank and function (Window.rf_*): equal to the summary's `per_rank` functions;
  - pairs (src, dst): messages and bytes equal to the summary's `pairs`;
  - steps, when the summary has some: the same steps with the same MPI time;
  - the job-relative columns: `window` 0, 1, ... for consecutive grid indices, `t_s` from 0.
Then it proves that each comparison can fail: one figure at a time is changed by 1 in a copy of
the summary and the comparison must report it.
"""

import copy
import json
import sys

import mpiwatch


def compare(r, s, lines):
    """Every difference between the recording read by the package and the references."""
    bad = []
    win = r.windows()
    fn = r.functions()
    if len(win) != s["windows"]:
        bad.append("windows: %d read, summary %d" % (len(win), s["windows"]))
    if r.job is None or r.job.size != s["ranks"]:
        bad.append("ranks: %s read, summary %d" % (r.job and r.job.size, s["ranks"]))
    # job-relative window numbers and times
    if list(win["window"]) != list(win["grid_index"] - win["grid_index"].iloc[0]):
        bad.append("window: not grid_index - first grid index")
    if len(win) and (win["t_s"].iloc[0] != 0 or not win["t_s"].is_monotonic_increasing):
        bad.append("t_s: does not start at 0 and grow")
    # per window, against the exporter's JSON lines
    if len(lines) != len(win):
        bad.append("jsonl: %d lines, %d windows read" % (len(lines), len(win)))
    by_win = {k: g for k, g in fn.groupby("grid_index")}
    for line in lines:
        g = by_win.get(line["index"])
        mine = {} if g is None else {
            f: (c, t, b) for f, c, t, b in zip(g["function"], g["calls"], g["time_ns"], g["bytes"])}
        ref = {f: (v["count"], v["time_ns"], v["bytes"]) for f, v in line["functions"].items()}
        if mine != ref:
            bad.append("window %d: functions differ from the jsonl export" % line["index"])
    # per function
    tot = r.totals()
    mine = {f: (c, t, b) for f, c, t, b in zip(tot["function"], tot["calls"], tot["time_ns"],
                                                 tot["bytes"])}
    ref = {f: (v["count"], v["time_ns"], v["bytes"]) for f, v in s["functions"].items()}
    for f in sorted(set(mine) | set(ref)):
        if mine.get(f) != ref.get(f):
            bad.append("function %s: %s read, summary %s" % (f, mine.get(f), ref.get(f)))
    # per rank
    rk = r.ranks().groupby(["rank", "function"], as_index=False)[["calls", "time_ns",
                                                                  "bytes"]].sum()
    mine = {(int(k), f): (int(c), int(t), int(b)) for k, f, c, t, b in
            zip(rk["rank"], rk["function"], rk["calls"], rk["time_ns"], rk["bytes"])}
    ref = {}
    for e in s["per_rank"]:
        for f, v in e["functions"].items():
            ref[(e["rank"], f)] = (v["count"], v["time_ns"], v["bytes"])
    for k in sorted(set(mine) | set(ref)):
        if mine.get(k) != ref.get(k):
            bad.append("rank %d %s: %s read, summary %s" % (k[0], k[1], mine.get(k), ref.get(k)))
    hosts = dict(zip(r.job.ranks["rank"], r.job.ranks["host"])) if r.job else {}
    for e in s["per_rank"]:
        if hosts.get(e["rank"]) != e["host"]:
            bad.append("rank %d: host %r read, summary %r" % (e["rank"], hosts.get(e["rank"]),
                                                              e["host"]))
    # pairs
    p = r.pairs().groupby(["src", "dst"], as_index=False)[["messages", "bytes"]].sum()
    mine = {(int(a), int(b)): (int(m), int(y)) for a, b, m, y in
            zip(p["src"], p["dst"], p["messages"], p["bytes"])}
    ref = {(e["src"], e["dst"]): (e["messages"], e["bytes"]) for e in s["pairs"]}
    if mine != ref:
        bad.append("pairs: %d read, summary %d, or their figures differ" % (len(mine), len(ref)))
    # steps
    if s.get("steps"):
        st = r.steps()
        mine = {int(k): int(v) for k, v in zip(st["step"], st["mpi_time_ns"])}
        ref = {e["step"]: e["mpi_time_ns"] for e in s["steps"]}
        if mine != ref:
            bad.append("steps differ")
    return bad


def main():
    path, summary, jsonl = sys.argv[1:4]
    r = mpiwatch.Recording(path)
    s = json.load(open(summary))
    lines = [json.loads(x) for x in open(jsonl) if x.strip()]
    if s["late"]:
        print("the run had %d late samples (their calls are in the summary, in no window): "
              "the comparison needs a run without" % s["late"], file=sys.stderr)
        return 1
    if not s["pairs"] or not s["functions"]:
        print("the run has no pairs or no functions: nothing to compare", file=sys.stderr)
        return 1
    bad = compare(r, s, lines)
    for b in bad:
        print("differs:", b, file=sys.stderr)
    if bad:
        return 1
    # every comparison must be able to fail
    name = max(s["functions"], key=lambda f: s["functions"][f]["count"])
    mutations = [
        ("windows", lambda t: t.__setitem__("windows", t["windows"] + 1)),
        ("ranks", lambda t: t.__setitem__("ranks", t["ranks"] + 1)),
        ("calls", lambda t: t["functions"][name].__setitem__("count",
                                                               t["functions"][name]["count"] + 1)),
        ("time", lambda t: t["functions"][name].__setitem__("time_ns",
                                                              t["functions"][name]["time_ns"] + 1)),
        ("bytes", lambda t: t["functions"][name].__setitem__("bytes",
                                                               t["functions"][name]["bytes"] + 1)),
        ("per-rank", lambda t: next(iter(t["per_rank"][0]["functions"].values())).__setitem__(
            "count", next(iter(t["per_rank"][0]["functions"].values()))["count"] + 1)),
        ("pair", lambda t: t["pairs"][0].__setitem__("bytes", t["pairs"][0]["bytes"] + 1)),
    ]
    for what, change in mutations:
        t = copy.deepcopy(s)
        change(t)
        if not compare(r, t, lines):
            print("a changed summary (%s + 1) was not noticed" % what, file=sys.stderr)
            return 1
    line = copy.deepcopy(lines)
    f0 = next(iter(line[0]["functions"].values()))
    f0["count"] += 1
    if not compare(r, s, line):
        print("a changed jsonl window was not noticed", file=sys.stderr)
        return 1
    print("ok: %d windows, %d functions, %d ranks, %d pairs, %d steps equal; %d records, "
          "%d received frames" % (len(r.windows()), len(s["functions"]), s["ranks"],
                                  len(s["pairs"]), len(s.get("steps", [])), r.records,
                                  r.messages))
    return 0


if __name__ == "__main__":
    sys.exit(main())
