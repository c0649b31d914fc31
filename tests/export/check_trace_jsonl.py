#!/usr/bin/env python3
"""Checks mpiwatch-export --format trace output against mw-tracegen's expectations.

usage: check_trace_jsonl.py TRACE.jsonl EXPECT.json
       check_trace_jsonl.py TRACE.jsonl --complete

Every receive must carry a match id shared with exactly one send, the matched messages must be
exactly the expected (source, destination, tag, channel index) set, sends without partner as
expected, lines sorted by rank then start time, collective instances grouped, the windows that
are not exact listed and none of their records invented, the reach-back trace folded in and
its duplicate left out.

With --complete (a real job traced in full, every window exact): no window line, every send and
every receive matched, each collective instance's members of one function.
"""
import collections
import json
import sys

PROC_NULL, CANCELLED = 32, 2


def fail(msg):
    print("check_trace_jsonl: FAIL:", msg)
    sys.exit(1)


def main():
    lines = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
    complete = sys.argv[2] == "--complete"
    exp = None if complete else json.load(open(sys.argv[2], encoding="utf-8"))
    recs = [x for x in lines if x["type"] == "record"]
    wins = {x["window"]: x for x in lines if x["type"] == "window"}
    if not recs:
        fail("no records")
    for r in recs:
        if not isinstance(r["comm"], str):
            fail("comm is not a string: %r" % r)
    keys = [(r["rank"], r["start_ns"]) for r in recs]
    if keys != sorted(keys):
        fail("records are not sorted by rank, then start")

    by_match = collections.defaultdict(list)
    for r in recs:
        if "match" in r:
            by_match[r["match"]].append(r)
    matched = []
    for mid, ends in by_match.items():
        sends = [e for e in ends if e["kind"] in ("send", "isend")]
        rcvs = [e for e in ends if e["kind"] in ("recv", "recv_done")]
        if len(sends) != 1 or len(rcvs) != 1 or len(ends) != 2:
            fail("match %s does not join one send and one receive: %r" % (mid, ends))
        s, r = sends[0], rcvs[0]
        if (s["peer"], r["peer"], s["tag"], s["seq"], s["comm"]) != \
                (r["rank"], s["rank"], r["tag"], r["seq"], r["comm"]):
            fail("match %s joins records of different channels: %r %r" % (mid, s, r))
        matched.append([s["rank"], r["rank"], s["tag"], s["seq"]])
    for r in recs:
        is_recv = r["kind"] in ("recv", "recv_done") and r["peer"] >= 0 and \
            not r["flags"] & (PROC_NULL | CANCELLED)
        if is_recv and "match" not in r:
            fail("receive without its send: %r" % r)
    unmatched_sends = [r for r in recs if r["kind"] in ("send", "isend") and r["peer"] >= 0
                       and not r["flags"] & PROC_NULL and "match" not in r]
    colls = collections.Counter(r["coll"] for r in recs if "coll" in r)
    if complete:
        if wins:
            fail("windows not exact: %r" % sorted(wins))
        if unmatched_sends:
            fail("%d sends without their receive, first %r" % (len(unmatched_sends),
                                                                unmatched_sends[0]))
        fns = collections.defaultdict(set)
        for r in recs:
            if "coll" in r:
                fns[r["coll"]].add(r["fn"])
        if any(len(f) != 1 for f in fns.values()):
            fail("a collective instance of several functions: %r" % dict(fns))
        if not matched:
            fail("no message matched")
        print("check_trace_jsonl: OK: %d records, %d messages matched, %d collective instances"
              % (len(recs), len(matched), len(colls)))
        return
    if sorted(matched) != sorted(exp["matched"]):
        fail("matched %r, expected %r" % (sorted(matched), sorted(exp["matched"])))
    if len(unmatched_sends) != exp["sends_unmatched"]:
        fail("%d sends without partner, expected %d" % (len(unmatched_sends),
                                                        exp["sends_unmatched"]))

    if len(colls) != exp["coll_instances"] or sorted(colls.values()) != [2, 4, 4, 4]:
        fail("collective instances %r" % colls)

    for w in exp["untraced_windows"]:
        if w not in wins or wins[w]["ranks_exact"] != 0:
            fail("window %d is not listed as untraced: %r" % (w, wins.get(w)))
        if any(r["window"] == w for r in recs):
            fail("records of untraced window %d" % w)
    for w in exp["partial_windows"]:
        if w not in wins or not 0 < wins[w]["ranks_exact"] < wins[w]["ranks_reporting"]:
            fail("window %d is not listed as partial: %r" % (w, wins.get(w)))
        ranks = {x["rank"] for x in wins[w]["not_exact"]}
        if any(r["window"] == w and r["rank"] in ranks for r in recs):
            fail("records of a rank listed as not exact in window %d" % w)
    if set(wins) != set(exp["untraced_windows"]) | set(exp["partial_windows"]):
        fail("window lines %r" % sorted(wins))
    rb = [r for r in recs if r.get("reach_back")]
    if len({(r["rank"], r["window"]) for r in rb}) != exp["reach_back"]:
        fail("reach-back records %r" % rb)
    if any(r["fn"] == "MPI_Barrier" for r in recs):
        fail("the duplicate trace of (0, 13) was not left out")
    print("check_trace_jsonl: OK: %d records, %d messages matched, %d collective instances"
          % (len(recs), len(matched), len(colls)))


main()
