#!/usr/bin/python3
"""Reads an OTF2 archive written by mpiwatch-export --format otf2 with the OTF2 Python bindings
and checks it against mw-tracegen's expectations.

usage: /usr/bin/python3 check_otf2.py ARCHIVE/traces.otf2 EXPECT.json
       /usr/bin/python3 check_otf2.py ARCHIVE/traces.otf2 --jsonl TRACE.jsonl

Debian's python3-otf2 installs into the system interpreter only: run with /usr/bin/python3. An
import failure is a failure of the test, never a skip.

Checks: event counts by type exactly as expected (nothing else, no BufferFlush); every message
event's peer, read through its communicator's group, is the expected world rank; per location,
timestamps never decrease, Enter and Leave nest, and the event count matches the definition;
the split communicator's group is world ranks 3 and 1 in that order; ranks sit on their hosts.

With --jsonl (any recording, e.g. of a real MPI job whose communicators are all known): the
same archive's `--format trace` lines give the expectations: an Enter and a Leave per call, a
message event per send and receive with the same rank, world peer, tag and length, as many
collective Begins as Ends.
"""
import collections
import json
import sys

try:
    import otf2
except ImportError as e:
    print("check_otf2: FAIL: cannot import the OTF2 Python bindings (Debian python3-otf2, "
          "system /usr/bin/python3 only): %s" % e)
    sys.exit(1)


def fail(msg):
    print("check_otf2: FAIL:", msg)
    sys.exit(1)


def world(loc):
    return loc._ref & 0xffffffff


def from_jsonl(path):
    """The expected counts and message events of a --format trace file."""
    counts = collections.Counter()
    msgs = []
    part, cancelled, is_open, proc_null = 1, 2, 16, 32
    for line in open(path, encoding="utf-8"):
        r = json.loads(line)
        if r["type"] != "record" or r["flags"] & is_open:
            continue
        kind = r["kind"]
        if kind not in ("send_done", "recv_done", "coll_done") and not r["flags"] & part:
            counts["Enter"] += 1
            counts["Leave"] += 1
        if r["flags"] & (proc_null | cancelled) or r["peer"] < 0:
            continue
        name = {"send": "MpiSend", "isend": "MpiIsend", "recv": "MpiRecv",
                "recv_done": "MpiIrecv"}.get(kind)
        if name:
            counts[name] += 1
            msgs.append([name, r["rank"], r["peer"], r["tag"], r["bytes"], None])
    return counts, msgs


def main():
    if sys.argv[2] == "--jsonl":
        counts_j, msgs_j = from_jsonl(sys.argv[3])
        exp = None
    else:
        exp = json.load(open(sys.argv[2], encoding="utf-8"))
    counts = collections.Counter()
    msgs = []
    last = {}
    stack = collections.defaultdict(list)
    per_loc = collections.Counter()
    logical = 0  # events with their logical step (docs/export.md "otf2"), each then a Metric
    with otf2.reader.open(sys.argv[1]) as trace:
        d = trace.definitions
        comms = {c.name: c for c in d.comms}
        if "MPI_COMM_WORLD" not in comms or "MPI_COMM_SELF" not in comms:
            fail("communicators %r" % list(comms))
        split = [c for c in d.comms if c.name.startswith("MPI_Comm_split")]
        hosts = {world(loc): loc.group.system_tree_parent.name for loc in d.locations}
        if exp and (len(split) != 1 or [world(m) for m in split[0].group.members] != [3, 1]):
            fail("split communicator %r" % split)
        if exp and (split[0].parent is None or split[0].parent.name != "MPI_COMM_WORLD"):
            fail("split communicator's parent %r" % split[0].parent)
        if exp and hosts != {0: "node-a", 1: "node-a", 2: "node-b", 3: "node-b"}:
            fail("system tree %r" % hosts)
        if d.clock_properties.timer_resolution != 1000000000:
            fail("clock resolution %r" % d.clock_properties.timer_resolution)
        for loc, ev in trace.events:
            name = type(ev).__name__
            counts[name] += 1
            if any(a.name == "mpiwatch::logical_step" for a in (ev.attributes or {})):
                logical += 1
            per_loc[loc._ref] += 1
            if ev.time < last.get(loc._ref, 0):
                fail("time goes back on %s: %r" % (loc.name, ev))
            last[loc._ref] = ev.time
            if name == "Enter":
                if stack[loc._ref]:
                    fail("nested Enter on %s: %r" % (loc.name, ev))
                stack[loc._ref].append(ev.region.name)
            elif name == "Leave":
                if stack[loc._ref] != [ev.region.name]:
                    fail("Leave without its Enter on %s: %r" % (loc.name, ev))
                stack[loc._ref].pop()
            if name in ("MpiSend", "MpiIsend", "MpiRecv", "MpiIrecv"):
                peer = ev.receiver if name in ("MpiSend", "MpiIsend") else ev.sender
                members = list(ev.communicator.group.members)
                if peer >= len(members):
                    fail("peer %d outside its communicator: %r" % (peer, ev))
                kind = "WORLD" if ev.communicator.name == "MPI_COMM_WORLD" else "C"
                msgs.append([name, world(loc), world(members[peer]), ev.msg_tag,
                             ev.msg_length, kind])
            if name == "MpiCollectiveEnd" and ev.root != 0xffffffff and exp:
                members = list(ev.communicator.group.members)
                if ev.root >= len(members):
                    fail("root outside its communicator: %r" % ev)
                want = 3 if ev.communicator.name.startswith("MPI_Comm_split") else 0
                if world(members[ev.root]) != want:
                    fail("root of %r is world %d" % (ev, world(members[ev.root])))
        for loc in d.locations:
            if per_loc[loc._ref] != loc.number_of_events:
                fail("%s: %d events, its definition says %d" % (loc.name, per_loc[loc._ref],
                                                               loc.number_of_events))
    if any(stack.values()):
        fail("calls without Leave: %r" % dict(stack))
    # The lateness metric follows every event that has a logical step (check_logical.py checks
    # their values); the other counts stay exact.
    metric = counts.pop("Metric", 0)
    if metric != logical or not logical:
        fail("%d events with a logical step and %d Metric events" % (logical, metric))
    if exp is None:
        for k in ("Enter", "Leave", "MpiSend", "MpiIsend", "MpiRecv", "MpiIrecv"):
            if counts[k] != counts_j[k]:
                fail("%d %s events, the trace lines give %d" % (counts[k], k, counts_j[k]))
        if counts["MpiCollectiveBegin"] != counts["MpiCollectiveEnd"]:
            fail("collective Begin and End do not pair: %r" % dict(counts))
        if counts["MpiIsend"] != counts["MpiIsendComplete"] or \
                counts["MpiIrecvRequest"] != counts["MpiIrecv"]:
            fail("requests do not complete: %r" % dict(counts))
        got = sorted(m[:5] for m in msgs)
        if got != sorted(m[:5] for m in msgs_j):
            fail("message events differ from the trace lines")
        if not counts["Enter"]:
            fail("no events")
    else:
        want = {k: v for k, v in exp["counts"].items() if v}
        if dict(counts) != want:
            fail("event counts %r, expected %r" % (dict(counts), want))
        if sorted(msgs) != sorted(exp["messages"]):
            fail("message events %r, expected %r" % (sorted(msgs), sorted(exp["messages"])))
    print("check_otf2: OK: %d events, %d message events, counts exact"
          % (sum(counts.values()), len(msgs)))


main()
