#!/usr/bin/env python3
"""check_tree.py SUMMARY --aggregators N [--same-as REF] [--counts DIR --np N [--expect-missed]]

The root's summary of a job whose ranks reported through aggregators (docs/aggregator.md):
partials carry the merged windows, not each rank's functions, so the checks are the job's.

  --aggregators N  the summary names N aggregators, each with ranks, all of them done
  --killed ID      aggregator ID was killed: its ranks need not be done through it
  --same-as REF    the job's calls and bytes per function are exactly those of REF, the summary
                   of the same program run without aggregators (times differ, counts may not)
  --counts DIR     the program's own counts (tests/faults/fault_app's DIR/counts.RANK): for
                   every function, the job's calls and bytes in the summary plus those reported
                   missing equal the ranks' sums, and missed.at_ranks.calls is what they made
  --expect-missed  calls must be reported missing (the fault lost some: else it proved nothing)
"""
import argparse
import json
import os
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("summary")
    ap.add_argument("--aggregators", type=int, required=True)
    ap.add_argument("--same-as")
    ap.add_argument("--counts")
    ap.add_argument("--np", type=int, default=0)
    ap.add_argument("--killed", type=int, action="append", default=[])
    ap.add_argument("--expect-missed", action="store_true")
    a = ap.parse_args()
    with open(a.summary) as f:
        s = json.load(f)
    errors = []
    aggs = s.get("aggregators") or []
    if len(aggs) != a.aggregators:
        errors.append("%d aggregators in the summary, expected %d" % (len(aggs), a.aggregators))
    for g in aggs:
        if not g.get("ranks") or (g.get("id") not in a.killed and
                                  g.get("ranks_done") != g.get("ranks")):
            errors.append("aggregator %s: %s ranks, %s done" % (g.get("id"), g.get("ranks"),
                                                              g.get("ranks_done")))
    funcs = s.get("functions") or {}
    if a.same_as:
        with open(a.same_as) as f:
            ref = json.load(f).get("functions") or {}
        for name in sorted(set(ref) | set(funcs)):
            got, want = funcs.get(name, {}), ref.get(name, {})
            for key in ("count", "bytes"):
                if int(got.get(key, 0)) != int(want.get(key, 0)):
                    errors.append("%s %s: %s through the aggregators, %s without" %
                                  (name, key, got.get(key, 0), want.get(key, 0)))
    if a.counts:
        made = {}
        for rank in range(a.np):
            path = os.path.join(a.counts, "counts.%d" % rank)
            if not os.path.exists(path):
                errors.append("rank %d wrote no counts" % rank)
                continue
            with open(path) as f:
                for line in f:
                    name, count, nbytes = line.split()
                    c, b = made.get(name, (0, 0))
                    made[name] = (c + int(count), b + int(nbytes))
        missed = s.get("missed") or {}
        mf = missed.get("functions") or {}
        for name in sorted(set(made) | set(funcs)):
            c, b = made.get(name, (0, 0))
            sc = int(funcs.get(name, {}).get("count", 0)) + int(mf.get(name, {}).get("count", 0))
            sb = int(funcs.get(name, {}).get("bytes", 0)) + int(mf.get(name, {}).get("bytes", 0))
            if (sc, sb) != (c, b):
                errors.append("%s: %d calls, %d bytes in the summary + missed; the ranks made "
                              "%d, %d" % (name, sc, sb, c, b))
        total = sum(c for c, _ in made.values())
        at = int((missed.get("at_ranks") or {}).get("calls", -1))
        if at != total:
            errors.append("missed.at_ranks.calls is %d, the ranks made %d" % (at, total))
        got = sum(int(f.get("count", 0)) for f in funcs.values()) + int(missed.get("calls", 0))
        if got != total:
            errors.append("%d calls in the summary + missed, the ranks made %d" % (got, total))
        if a.expect_missed and int(missed.get("calls", 0)) == 0:
            errors.append("nothing was reported missing: the fault cost nothing, the test "
                          "proves nothing")
        print("check_tree: ranks made %d calls; summary %d + missed %d" %
              (total, got - int(missed.get("calls", 0)), int(missed.get("calls", 0))))
    for e in errors:
        print("FAIL: " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
