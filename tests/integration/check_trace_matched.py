#!/usr/bin/env python3
"""check_trace_matched.py TRUTH CALLS.jsonl NP: the messages of tests/programs/trace_known as
they come out of the whole chain (ranks -> collector -> recording -> mpiwatch export --format
trace), against the program's own ground truth (docs/trace.md "Matching").

Checks:
- every window of the recording is exact for every rank (no "type":"window" line);
- every receive record (recv, recv_done; not MPI_PROC_NULL, not cancelled) and every send
  record (send, isend; not MPI_PROC_NULL) carries a `match`, and each match number joins
  exactly one send and one receive: same communicator, tag and index, the send's peer is the
  receiver and the receive's peer is the sender, the bytes received are the bytes sent;
- the matched messages, as (source, destination, tag, bytes), are exactly the program's
  messages (a multiset: none missing, none extra);
- every collective record of a communicator instance carries a `coll` number, and the members of
  one `coll` are distinct ranks with one function.
"""
import collections
import json
import sys

SENDS, RECVS = ("send", "isend"), ("recv", "recv_done")
PART, CANCELLED, PROC_NULL = 1, 2, 32


def main():
    truth_path, calls_path, np_ = sys.argv[1], sys.argv[2], int(sys.argv[3])
    errors = []
    records, windows = [], []
    with open(calls_path) as f:
        for n, line in enumerate(f, 1):
            try:
                o = json.loads(line)
            except ValueError as e:
                sys.exit(f"line {n}: not JSON ({e})")
            if o.get("type") == "window":
                windows.append(o)
            elif o.get("type") == "record":  # partition and logical lines: docs/export.md
                records.append(o)
    if windows:
        errors.append(f"{len(windows)} windows not exact for every rank, e.g. {windows[0]}")
    if not records:
        sys.exit("no record in the export")
    if sorted({r["rank"] for r in records}) != list(range(np_)):
        errors.append(f"records from ranks {sorted({r['rank'] for r in records})}")

    by_match = collections.defaultdict(list)
    for r in records:
        if r["kind"] in SENDS + RECVS and not r["flags"] & (PROC_NULL | CANCELLED):
            if "match" not in r:
                errors.append(f"unmatched {r['kind']}: {r}")
            else:
                by_match[r["match"]].append(r)
    got = collections.Counter()
    for m, ends in by_match.items():
        s = [r for r in ends if r["kind"] in SENDS]
        v = [r for r in ends if r["kind"] in RECVS]
        if len(s) != 1 or len(v) != 1:
            errors.append(f"match {m} joins {len(s)} sends and {len(v)} receives")
            continue
        s, v = s[0], v[0]
        if (s["comm"], s["tag"], s["seq"]) != (v["comm"], v["tag"], v["seq"]) or \
                s["peer"] != v["rank"] or v["peer"] != s["rank"] or s["bytes"] != v["bytes"]:
            errors.append(f"match {m} pairs records that are not one message: {s} / {v}")
            continue
        got[(s["rank"], v["rank"], s["tag"], s["bytes"])] += 1

    want = collections.Counter()
    for t in (l.split() for l in open(truth_path) if l.strip()):
        if t[0] == "send":
            want[(int(t[2]), int(t[3]), int(t[4]), int(t[5]))] += 1
    if got != want:
        missing, extra = want - got, got - want
        errors.append(f"matched messages differ from the program's: missing "
                      f"{dict(missing)}, extra {dict(extra)}")

    colls = collections.defaultdict(list)
    for r in records:
        if r["kind"] in ("coll", "icoll"):
            if "coll" not in r:
                errors.append(f"a collective record without its instance group: {r}")
            else:
                colls[r["coll"]].append(r)
    for c, members in colls.items():
        ranks = [r["rank"] for r in members]
        if len(set(ranks)) != len(ranks) or len({r["fn"] for r in members}) != 1:
            errors.append(f"collective {c}: ranks {ranks}, functions {[r['fn'] for r in members]}")

    for e in errors[:30]:
        print("check_trace_matched: " + e, file=sys.stderr)
    if errors:
        return 1
    print(f"check_trace_matched: {sum(want.values())} messages of the program, each one send "
          f"matched to one receive; {len(colls)} collective instances; {len(records)} records")
    return 0


if __name__ == "__main__":
    sys.exit(main())
