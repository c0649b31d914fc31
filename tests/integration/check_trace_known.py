#!/usr/bin/env python3
"""check_trace_known.py TRUTH STDERR NP: the shim's trace records of tests/programs/trace_known
against the program's own ground truth (docs/trace.md "Records and communicators").

STDERR holds the ranks' MPIWATCH_VERBOSE=3 output: the records each thread's ring still holds
at MPI_Finalize ("trec" lines) and the thread's counters. Checks:
- every message the program sent is one SEND/ISEND record on the sending rank with the
  destination's world rank, the tag and the bytes; every message it received is one
  RECV/RECV_DONE record on the receiving rank with the actual source, tag and bytes; the send
  to MPI_PROC_NULL is flagged, not a message;
- each communicator label (world, dup, split0, split1, idup) has one job-wide id on all its
  members; world is 1; the labels' ids differ;
- every collective of the truth is a COLL record with the root's world rank on its
  communicator, and the records of one (communicator, instance) have the same function on
  every rank;
- every request posted (ISEND, IRECV, ICOLL, and persistent starts) is completed by exactly
  one *_DONE record with its request number; no record was lost, no completion unknown.
"""
import collections
import re
import sys

KIND = {0: "CALL", 1: "SEND", 2: "RECV", 3: "ISEND", 4: "IRECV", 5: "SEND_DONE",
        6: "RECV_DONE", 7: "COLL", 8: "ICOLL", 9: "COLL_DONE"}
PROC_NULL, PART = 32, 1

REC = re.compile(r"mpiwatch\[(\d+)\]: trec (\d+) (\d+) (\S+) kind (\d+) comm ([0-9a-f]+) peer "
                 r"(-?\d+) tag (-?\d+) bytes (\d+) req (\d+) flags (\d+) dur (\d+)")
THREAD = re.compile(r"mpiwatch\[(\d+)\]: trace thread \d+: (\d+) records written, \d+ read, "
                    r"(\d+) lost; requests: \d+ posted, (\d+) map full, (\d+) completions not "
                    r"found")

errors = []


def fail(msg):
    errors.append(msg)


def main():
    truth_path, err_path, np_ = sys.argv[1], sys.argv[2], int(sys.argv[3])
    recs = collections.defaultdict(list)
    threads = 0
    with open(err_path, errors="replace") as f:
        for line in f:
            m = REC.search(line)
            if m:
                r = dict(rank=int(m[1]), fn=m[4], kind=KIND.get(int(m[5]), "?"),
                         comm=int(m[6], 16), peer=int(m[7]), tag=int(m[8]), bytes=int(m[9]),
                         req=int(m[10]), flags=int(m[11]))
                recs[r["rank"]].append(r)
                continue
            m = THREAD.search(line)
            if m:
                threads += 1
                written, lost, full, unknown = map(int, m.groups()[1:])
                if lost or full or unknown:
                    fail("rank %s: %d records lost, %d map full, %d completions not found"
                         % (m[1], lost, full, unknown))
    if sorted(recs) != list(range(np_)):
        fail("records from ranks %s, want 0..%d" % (sorted(recs), np_ - 1))
    if threads < np_:
        fail("counters of %d threads, want at least %d" % (threads, np_))

    truth = [l.split() for l in open(truth_path) if l.strip()]
    labels = {}

    def label_id(label, cid, where):
        if label in labels and labels[label] != cid:
            fail("%s: communicator %s is %x here, %x elsewhere" % (where, label, cid,
                                                                    labels[label]))
        labels.setdefault(label, cid)

    # messages: multisets per rank and direction, the communicator learnt from the match
    used = set()
    nmsg = 0
    for t in truth:
        if t[0] not in ("send", "recv"):
            continue
        nmsg += 1
        label, src, dst, tag, nbytes = t[1], int(t[2]), int(t[3]), int(t[4]), int(t[5])
        rank, peer = (src, dst) if t[0] == "send" else (dst, src)
        kinds = ("SEND", "ISEND") if t[0] == "send" else ("RECV", "RECV_DONE")
        found = None
        for i, r in enumerate(recs[rank]):
            if (rank, i) in used or r["kind"] not in kinds or r["flags"] & PROC_NULL:
                continue
            if r["peer"] == peer and r["tag"] == tag and r["bytes"] == nbytes:
                found = i
                break
        if found is None:
            fail("no record for %s" % " ".join(t))
            continue
        used.add((rank, found))
        label_id(label, recs[rank][found]["comm"], " ".join(t))
    extra = [(rk, r) for rk in recs for i, r in enumerate(recs[rk])
             if (rk, i) not in used and r["kind"] in ("SEND", "ISEND", "RECV", "RECV_DONE")
             and not r["flags"] & PROC_NULL]
    for rk, r in extra:
        fail("rank %d: a message record the program did not make: %s" % (rk, r))
    nulls = [r for rk in recs for r in recs[rk] if r["flags"] & PROC_NULL]
    if len(nulls) != np_:
        fail("%d records flagged MPI_PROC_NULL, want %d (one send per rank)" % (len(nulls), np_))
    if labels.get("world") != 1:
        fail("world's id is %s, want 1" % labels.get("world"))
    ids = collections.Counter(labels.values())
    if any(n > 1 for n in ids.values()):
        fail("two communicators share an id: %s" % labels)

    # collectives
    for t in truth:
        if t[0] != "coll":
            continue
        label, fn, root = t[1], t[2], int(t[3])
        ok = [(rk, r) for rk in recs for r in recs[rk]
              if r["kind"] in ("COLL", "ICOLL") and r["fn"] == fn
              and r["comm"] == labels.get(label)
              and r["peer"] == root]
        if not ok:
            fail("no COLL record for %s" % " ".join(t))
    inst = collections.defaultdict(set)
    members = collections.Counter()
    for rk in recs:
        for r in recs[rk]:
            if r["kind"] in ("COLL", "ICOLL"):
                inst[(r["comm"], r["tag"])].add(r["fn"])
                members[(r["comm"], r["tag"])] += 1
    for k, fns in inst.items():
        if len(fns) != 1:
            fail("collective instance %x #%d is %s on different ranks" % (k[0], k[1], fns))
    for k, n in members.items():
        want = np_ if k[0] == 1 else None
        if want and n != want:
            fail("collective instance world #%d has %d members, want %d" % (k[1], n, want))

    # requests
    for rk in recs:
        posts = collections.Counter(r["req"] for r in recs[rk]
                                    if r["kind"] in ("ISEND", "IRECV", "ICOLL"))
        dones = collections.Counter(r["req"] for r in recs[rk]
                                    if r["kind"] in ("SEND_DONE", "RECV_DONE", "COLL_DONE"))
        if 0 in posts:
            fail("rank %d: %d posts without a request number" % (rk, posts[0]))
        if posts != dones:
            fail("rank %d: posts %s and completions %s differ" % (rk, dict(posts), dict(dones)))

    for e in errors[:40]:
        print("check_trace_known: " + e, file=sys.stderr)
    if errors:
        return 1
    print("check_trace_known: %d messages and %d communicators as the program says; %d records"
          % (nmsg, len(labels), sum(len(v) for v in recs.values())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
