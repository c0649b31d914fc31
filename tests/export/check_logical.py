#!/usr/bin/python3
"""An independent, brute-force reference for the logical structure and lateness of
mpiwatch-export --format trace (docs/logical.md), and the hand-computed answers of the
programs of tests/programs/logical_patterns.c.

usage: check_logical.py TRACE.jsonl [--params "logical_patterns PATTERN ranks=N ..."]
                        [--csv LOGICAL.csv] [--otf2 ARCHIVE/traces.otf2] [--online LATENESS.jsonl]

From the record lines alone (times, kinds, flags, requests, and the export's message matches
and collective instances, which the export_trace test checks on their own) it recomputes,
with simple quadratic code and none of the library's data structures:
  - the events (sends at their post, receives at their completion, collectives, a non-blocking
    collective at its post with the end of its completion);
  - partitions: matched messages and collective instances related, cycles in the order of each
    rank's events merged (strongly connected components found by closure), then the leap merge
    (each rank active in each partition);
  - steps in each partition (happened-before kept, sends first, least step possible), global
    steps from the partition order;
  - lateness, differential lateness and the class of every event,
and compares every event of the export with it. Partitions are compared as sets of events (ids
are the library's business).

--params: the pattern's hand assertions (where the delay starts, where it propagates, the tree
levels in the steps, collectives at one step, wildcard receives matched). Their failure exits
with status 3 (the machine's own delays can hide the program's), every other failure with 1.
--csv: the --format logical rows are the same events with the same values.
--otf2: the attributes and metrics of the OTF2 archive carry the same values (needs the OTF2
Python bindings: run with /usr/bin/python3).
--online: the collector's per-step summaries (--format lateness) equal the maxima computed
from the events here: the same steps online and from the recording.
"""
import collections
import csv
import json
import os
import re
import sys

F_PART, F_CANCELLED, F_NOSEQ, F_OPEN, F_PROC_NULL = 1, 2, 8, 16, 32


def fail(msg):
    print("check_logical: FAIL:", msg)
    sys.exit(1)


def fail_timing(msg):
    """A hand assertion of the pattern failed: the delay did not show as the program made it.
    On a loaded machine a rank can lose its core for longer than the program's delay, which
    starts a delay of its own; exit status 3 lets the caller run the job again."""
    print("check_logical: FAIL (timing):", msg)
    sys.exit(3)


def load(path):
    recs, parts, stats = [], [], None
    for line in open(path, encoding="utf-8"):
        x = json.loads(line)
        t = x.get("type")
        if t == "record":
            x["end"] = x["start_ns"] + x["dur_ns"]
            recs.append(x)
        elif t == "partition":
            parts.append(x)
        elif t == "logical":
            stats = x
    if stats is None:
        fail("no logical line in %s: not an export with logical steps" % path)
    return recs, parts, stats


def parse_params(text):
    """'logical_patterns ring ranks=4 iters=8 ...' -> ('ring', {'ranks': 4, ...})"""
    words = text.split()
    if len(words) < 2 or words[0] != "logical_patterns":
        fail("--params %r: not the program's parameter line" % text)
    p = {}
    for w in words[2:]:
        k, _, v = w.partition("=")
        p[k] = int(v)
    return words[1], p


# ---- the pattern's hand assertions ----------------------------------------------------------

def hand_checks(pattern, p, ev):
    """ev: the export's events (record lines with "step"), already checked against the
    reference. The delay is p["delay_ms"]; half of it separates a delay from noise."""
    half = p["delay_ms"] * 1e6 / 2
    slow, it_slow, k = p["rank"], p["iter"], p["k"]
    n = p["ranks"]
    sends = [e for e in ev if e["ev_kind"] == "send"]
    recvs = [e for e in ev if e["ev_kind"] == "recv"]
    top = max(ev, key=lambda e: e["diff_ns"])

    def iteration(e):
        if pattern == "kary":
            return e["tag"] // 64
        if pattern == "wildcard" and e["tag"] >= 16384:
            return e["tag"] - 16384
        return e["tag"]

    def originates(e):
        return e["diff_ns"] >= half

    if pattern in ("ring", "mixed", "wildcard"):
        # The delay starts at the slow rank's send of the slow iteration, nowhere else.
        starts = [e for e in ev if originates(e)]
        want = [e for e in sends if e["rank"] == slow and iteration(e) == it_slow
                and (pattern != "mixed" or e["fn"] == "MPI_Isend")]
        if len(want) != 1:
            fail("%s: %d sends of rank %d in iteration %d, expected 1"
                 % (pattern, len(want), slow, it_slow))
        if top is not want[0] or [id(e) for e in starts] != [id(want[0])]:
            fail_timing("%s: differential lateness >= %.0f ms should be on rank %d's send of iteration "
                 "%d only; it is on %s" % (pattern, half / 1e6, slow, it_slow,
                                           [(e["rank"], e["fn"], iteration(e), e["diff_ns"])
                                            for e in starts] or "no event"))
        if want[0]["class"] not in ("compute", "call"):
            fail_timing("%s: the delayed send's class is %r, not where a delay starts"
                 % (pattern, want[0]["class"]))
        steps_at = [e for e in sends if e["step"] == want[0]["step"]
                    and e["partition"] == want[0]["partition"]]
        if len(steps_at) < 2:
            fail_timing("%s: the delayed send is alone at its step: no peer to be late against"
                 % pattern)
    if pattern in ("ring", "mixed"):
        # Its downstream neighbour waited for the late message.
        down = (slow + 1) % n
        got = [e for e in recvs if e["rank"] == down and iteration(e) == it_slow
               and e["peer"] == slow]
        # (inherited: its differential lateness is the message's transit, noise)
        if not got or got[0]["late_ns"] < half or got[0]["diff_ns"] >= half:
            fail_timing("%s: rank %d's receive from rank %d in iteration %d is not late by the "
                 "message: %r" % (pattern, down, slow, it_slow,
                                 [(e["late_ns"], e["diff_ns"], e["class"]) for e in got]))
    if pattern == "ring":
        # The delayed send is the only origin at its step, and it began late (compute); the
        # others there are on time or within the noise floor.
        at = [e for e in ev if e["step"] == want[0]["step"]
              and e["partition"] == want[0]["partition"]]
        origins = [e for e in at if e["class"] in ("compute", "call")]
        if want[0]["class"] != "compute" or [id(e) for e in origins] != [id(want[0])]:
            fail_timing("ring: at the delayed step the origins are %r, rank %d's send only "
                        "(compute) expected" % ([(e["rank"], e["fn"], e["class"], e["diff_ns"])
                                                  for e in origins], slow))
        # The delay travels downstream: rank slow + j is late in iteration it_slow + j - 1,
        # until every rank is late (then nobody is late against the others); each of them
        # inherits it (message or rank), none is an origin.
        for j in range(1, n - 1):
            r, it = (slow + j) % n, it_slow + j - 1
            late = [e for e in ev if e["rank"] == r and iteration(e) == it
                    and e["ev_kind"] == "recv"]
            if it < p["iters"] and (not late or late[0]["late_ns"] < half):
                fail_timing("ring: rank %d (downstream %d) is not late in iteration %d" % (r, j, it))
            if it < p["iters"] and late[0]["class"] not in ("message", "rank"):
                fail_timing("ring: rank %d (downstream %d) in iteration %d is of class %r, not "
                            "message or rank (diff %d ns)"
                            % (r, j, it, late[0]["class"], late[0]["diff_ns"]))
    if pattern == "stencil":
        slow_its = [i for i in range(p["iters"]) if i % k == it_slow % k]
        for i in range(p["iters"]):
            starts = [e for e in ev if iteration(e) == i and originates(e)]
            if i in slow_its:
                if not starts or any(e["rank"] != slow or e["ev_kind"] != "send"
                                     for e in starts):
                    fail_timing("stencil: iteration %d should start a delay on rank %d's sends only: "
                         "%r" % (i, slow, [(e["rank"], e["kind"], e["diff_ns"]) for e in starts]))
                for nb in ((slow + 1) % n, (slow - 1) % n):
                    late = [e for e in recvs if e["rank"] == nb and iteration(e) == i
                            and e["peer"] == slow]
                    if not late or late[0]["late_ns"] < half:
                        fail_timing("stencil: neighbour %d not late in iteration %d" % (nb, i))
            elif starts:
                fail_timing("stencil: a delay starts in iteration %d, which is not slow: %r"
                     % (i, [(e["rank"], e["kind"], e["diff_ns"]) for e in starts]))
    if pattern == "kary":
        # The delay shows in its iteration. (Where it starts depends on the partitions: the
        # messages of one gather level go to different parents, so they are one partition only
        # when the leap merge needs them together; alone, the late send has no peer at its step
        # and the first parent that waits for it carries the differential lateness.)
        top_late = max(ev, key=lambda e: e["late_ns"])
        if top_late["late_ns"] < half or iteration(top_late) != it_slow:
            fail_timing("kary: the largest lateness (%d ns, iteration %d) is not the delay of iteration "
                 "%d" % (top_late["late_ns"], iteration(top_late), it_slow))
        # The steps show the tree levels: in every iteration, each gather level's receives
        # come at later steps than all of the level below's; the scatter goes back down: each
        # level's first receive comes after the first of the level above (a parent sends to
        # its children one after the other, so the levels of the scatter overlap). In the
        # delayed iteration the late message may come more than a window after its level's
        # other messages, whose partitions are final by then (the online analysis does not
        # wait longer): there the levels' first and last steps only have to increase.
        levels = 0
        while k ** levels < n:
            levels += 1
        for it in range(p["iters"]):
            for base, up in ((0, True), (32, False)):
                rng = []
                for lv in range(levels):
                    st = [e["step"] for e in recvs if e["tag"] == it * 64 + base + lv]
                    if not st:
                        fail("kary: no receive at level %d of iteration %d" % (lv, it))
                    rng.append((min(st), max(st)))
                for lv in range(levels - 1):
                    if not up:
                        ok = rng[lv + 1][0] < rng[lv][0]
                    elif it == it_slow:
                        ok = rng[lv][0] < rng[lv + 1][0] and rng[lv][1] < rng[lv + 1][1]
                    else:
                        ok = rng[lv][1] < rng[lv + 1][0]
                    if not ok:
                        fail_timing("kary: iteration %d %s: level steps %r do not follow the tree"
                             % (it, "gather" if up else "scatter", rng))
    if pattern == "mixed":
        by = collections.defaultdict(set)
        for e in ev:
            if e["ev_kind"] == "coll":
                by[e["coll"]].add(e["step"])
        if not by or any(len(s) != 1 for s in by.values()):
            fail("mixed: the members of a collective are not at one step")
        if not any(e["flags"] & F_PART for e in recvs):
            fail("mixed: no Sendrecv receive among the events")
    if pattern == "wildcard":
        if any(e["peer_event"] < 0 for e in ev if e["ev_kind"] != "coll"):
            fail("wildcard: a message without its other end")
        # The master took the messages in the order they came: the slow worker's last.
        wild = sorted((e for e in recvs if e["rank"] == 0 and iteration(e) == it_slow),
                      key=lambda e: e["end_ns"])
        if len(wild) != n - 1 or wild[-1]["peer"] != slow:
            fail_timing("wildcard: the master's receives of iteration %d came from %r, the slow "
                 "worker %d last expected" % (it_slow, [e["peer"] for e in wild], slow))
    print("check_logical: %s: hand assertions hold (%d events)" % (pattern, len(ev)))


# ---- the other exports ----------------------------------------------------------------------

def check_csv(path, ev):
    rows = list(csv.DictReader(open(path, encoding="utf-8")))
    want = sorted((e["window"], e["rank"], e["rec"], e["fn"], e["ev_kind"], e["step"],
                   e["end_ns"], e["late_ns"], e["diff_ns"], e["class"], e["partition"],
                   e["event"]) for e in ev)
    got = sorted((int(r["window"]), int(r["rank"]), int(r["record"]), r["function"], r["kind"],
                  int(r["step"]), int(r["end_ns"]), int(r["lateness_ns"]),
                  int(r["diff_lateness_ns"]), r["class"], int(r["partition"]), int(r["event"]))
                 for r in rows)
    if got != want:
        diff = sorted(set(got) ^ set(want))[:5]
        fail("--format logical: %d rows, %d events in the trace lines; first differences %r"
             % (len(got), len(want), diff))
    steps = [int(r["step"]) for r in rows]
    if steps != sorted(steps):
        fail("--format logical: rows not sorted by step")
    print("check_logical: csv: %d rows equal the trace lines' events" % len(rows))


def check_otf2(path, ev):
    try:
        import otf2
    except ImportError as e:
        fail("cannot import the OTF2 Python bindings (Debian python3-otf2, /usr/bin/python3 "
             "only): %s" % e)
    want = collections.Counter((e["rank"], e["step"], e["late_ns"], e["diff_ns"], e["class"],
                                e["partition"]) for e in ev)
    got, metrics, last = collections.Counter(), collections.Counter(), {}
    with otf2.reader.open(path) as trace:
        for loc, e in trace.events:
            name = type(e).__name__
            a = {k.name: v for k, v in (e.attributes or {}).items()}
            if "mpiwatch::logical_step" in a:
                if name not in ("MpiSend", "MpiIsend", "MpiRecv", "MpiIrecv",
                                "MpiCollectiveEnd"):
                    fail("otf2: logical attributes on a %s event" % name)
                key = (loc._ref & 0xffffffff, a["mpiwatch::logical_step"],
                       a["mpiwatch::lateness_ns"], a["mpiwatch::diff_lateness_ns"],
                       str(a["mpiwatch::lateness_class"]), a["mpiwatch::partition"])
                got[key] += 1
                last[loc._ref] = (e.time, key)
            elif name == "Metric":
                prev = last.pop(loc._ref, None)
                vals = [v for v in e.values]
                if prev is None or prev[0] != e.time:
                    fail("otf2: a Metric event not right after a communication event")
                if vals != [prev[1][2], prev[1][3]]:
                    fail("otf2: metric values %r, the event's lateness %r" % (vals, prev[1][2:4]))
                metrics[prev[1]] += 1
    if got != want:
        fail("otf2: %d events with logical attributes, %d in the trace lines; differences %r"
             % (sum(got.values()), len(ev), list((got - want).items())[:3] +
                list((want - got).items())[:3]))
    if metrics != want:
        fail("otf2: %d metric events, %d communication events" % (sum(metrics.values()), len(ev)))
    print("check_otf2: attributes and metrics of %d events equal the trace lines" % len(ev))


def check_online(path, ev, lost):
    """The collector's per-step summaries against the maxima of the recording's events. Two
    partitions finalized by different pushes may share a step: its summaries are combined."""
    online = collections.defaultdict(list)
    for line in open(path, encoding="utf-8"):
        x = json.loads(line)
        if x.get("type") == "step":
            online[x["step"]].append(x)
    by = collections.defaultdict(list)
    for e in ev:
        by[e["step"]].append(e)
    if sorted(online) != sorted(by):
        fail("online: steps %s..%s (%d), the recording's %s..%s (%d)"
             % (min(online, default=None), max(online, default=None), len(online),
                min(by, default=None), max(by, default=None), len(by)))
    for s, es in by.items():
        os_ = online[s]
        if sum(o["events"] for o in os_) != len(es):
            fail("online: step %d has %d events, the recording %d"
                 % (s, sum(o["events"] for o in os_), len(es)))
        got_lost = sum(o["lost_ns"] for o in os_)
        want_lost = sum(lost[(e["window"], e["rank"], e["rec"])] for e in es)
        if got_lost != want_lost:
            fail("online: step %d lost %d ns, the recording's events %d" % (s, got_lost, want_lost))
        for field, key, rank in (("lateness_max_ns", "late_ns", "lateness_rank"),
                                 ("diff_max_ns", "diff_ns", "diff_rank")):
            m = max(e[key] for e in es)
            o = max(os_, key=lambda o: o[field])
            if o[field] != m:
                fail("online: step %d %s %d, the recording's events %d" % (s, field, o[field], m))
            if m > 0 and o[rank] not in {e["rank"] for e in es if e[key] == m}:
                fail("online: step %d %s %d is not where the maximum is" % (s, rank, o[rank]))
    # and per window (each event in the window its record came in)
    wins = {}
    for line in open(path, encoding="utf-8"):
        x = json.loads(line)
        if x.get("type") == "window":
            if x["window"] in wins:
                fail("online: window %d summarized twice" % x["window"])
            wins[x["window"]] = x
    byw = collections.defaultdict(list)
    for e in ev:
        byw[e["window"]].append(e)
    for w, es in byw.items():
        o = wins.get(w)
        if o is None or o["events"] != len(es):
            fail("online: window %d has %s events, the recording %d"
                 % (w, o and o["events"], len(es)))
        for field, key, rank, step in (("lateness_max_ns", "late_ns", "lateness_rank",
                                        "lateness_step"),
                                       ("diff_max_ns", "diff_ns", "diff_rank", "diff_step")):
            m = max(e[key] for e in es)
            if o[field] != m:
                fail("online: window %d %s %d, the recording's events %d" % (w, field, o[field], m))
            if m > 0 and (o[rank], o[step]) not in {(e["rank"], e["step"]) for e in es
                                                    if e[key] == m}:
                fail("online: window %d: %s %d at step %d is not where the maximum is"
                     % (w, rank, o[rank], o[step]))
        want_lost = sum(lost[(e["window"], e["rank"], e["rec"])] for e in es)
        if o["lost_ns"] != want_lost:
            fail("online: window %d lost %d ns, the recording's events %d"
                 % (w, o["lost_ns"], want_lost))
    if any(wins[w]["events"] for w in set(wins) - set(byw)):
        fail("online: events in windows where the recording has none")
    print("check_logical: online: %d steps and %d windows, the same events, maxima, ranks and "
          "time lost as the recording" % (len(by), len(byw)))


# ---- the reference: the stream of docs/logical.md, brute force ------------------------------

SEND, RECV, COLL = 1, 2, 3
MAX_WINDOWS = 8


def event_kind(r):
    f, k = r["flags"], r["kind"]
    if f & F_OPEN:
        return 0
    if k in ("send", "isend"):
        return 0 if f & F_PROC_NULL else SEND
    if k in ("recv", "recv_done"):
        return 0 if f & (F_PROC_NULL | F_CANCELLED) else RECV
    if k in ("coll", "icoll"):
        return COLL
    return 0


def is_send(r):
    return r["kind"] in ("send", "isend") and not r["flags"] & (F_PROC_NULL | F_NOSEQ) \
        and r["peer"] >= 0


def is_recv(r):
    return r["kind"] in ("recv", "recv_done") and \
        not r["flags"] & (F_PROC_NULL | F_NOSEQ | F_CANCELLED) and r["peer"] >= 0


HERE = os.path.dirname(os.path.abspath(__file__))


def functions(kinds):
    """The functions of the given kinds in the function table (proto/mpi_functions.def)."""
    names = set()
    for line in open(os.path.join(HERE, "..", "..", "proto", "mpi_functions.def"),
                     encoding="utf-8"):
        m = re.match(r"MW_FN\((\w+), [^,]+, (\w+),", line)
        if m and m.group(2) in kinds:
            names.add("MPI_" + m.group(1))
    if not names:
        fail("no function of kinds %r in proto/mpi_functions.def" % (kinds,))
    return names


def noise_floor():
    """The default noise floor of the classes (MW_LOGICAL_NOISE_FLOOR_NS in mw_logical.h)."""
    for line in open(os.path.join(HERE, "..", "..", "proto", "mw_logical.h"), encoding="utf-8"):
        m = re.match(r"#define MW_LOGICAL_NOISE_FLOOR_NS (\d+)", line)
        if m:
            return int(m.group(1))
    fail("no MW_LOGICAL_NOISE_FLOOR_NS in proto/mw_logical.h")
    return None


COLL_FNS = functions(("COLL",))
COMM_FNS = functions(("COLL", "SEND", "RECV", "WAIT"))
FLOOR = noise_floor()


def open_coll(r):
    """A collective call still in progress at the end of its window."""
    return bool(r["flags"] & F_OPEN) and r["fn"] in COLL_FNS


def open_comm(r):
    """A communication call (or a wait) still in progress at the end of its window."""
    return bool(r["flags"] & F_OPEN) and r["fn"] in COMM_FNS


def kept(r):
    return event_kind(r) or (r["kind"] == "coll_done" and not r["flags"] & F_OPEN) or \
        open_comm(r)


def window_part(recs):
    """One rank's records of one window (in record order) -> its kept records, each with the
    event's start (a receive completed by a Wait*: the start of that call) and its call."""
    out = []
    for i, r in enumerate(recs):
        if not kept(r):
            continue
        x = dict(r)
        x["s"], x["e"], x["call"] = r["start_ns"], r["end"], None
        if r["kind"] == "recv_done":
            for q in reversed(recs[max(0, i - 64):i]):
                if q["kind"] == "call" and q["fn"] == r["fn"] and q["thread"] == r["thread"] \
                        and not q["flags"] & F_OPEN:
                    if abs(q["end"] - x["s"]) <= 1:  # start and duration rounded apart
                        x["s"], x["call"] = q["start_ns"], q["rec"]
                    break
        out.append(x)
    return out


class Reference:
    def __init__(self, leap=True):
        self.leap = leap   # the leap merge (the export's "leap"; --no-leap turns it off)
        self.held = []     # [window, {rank: [kept records not final]}]
        self.carry = {}    # rank -> dict(has, id, step, late, end)
        self.last = None
        self.next_id = 0
        self.next_part = 0
        self.out = []      # finalized events (dicts), in id order
        self.parts = []    # finalized partitions: (id, forced, [event ids])
        self.forced = 0

    def push(self, window, ranks):
        if self.last is not None and window != self.last + 1:
            self.gap()
        self.last = window
        for r in ranks:
            self.carry.setdefault(r, {"has": False, "step": None})
        self.held.append([window, {r: window_part(recs) for r, recs in sorted(ranks.items())}])
        self.analyse("oldest" if len(self.held) > MAX_WINDOWS else "normal")

    def gap(self):
        self.analyse("all")
        for c in self.carry.values():
            c["has"] = False

    def analyse(self, mode):
        ev = []  # events in input order: window, rank, record
        for wi, (window, parts) in enumerate(self.held):
            for rank in sorted(parts):
                for x in parts[rank]:
                    if event_kind(x):
                        ev.append({"r": x, "rank": rank, "wi": wi, "kind": event_kind(x),
                                   "s": x["s"], "e": x["e"], "msg": None, "matched": False,
                                   "blocks": False, "rprev": None})
        n = len(ev)
        for i, v in enumerate(ev):
            v["i"] = i
        # rank order and the receives of one completing call
        last = {}
        for v in ev:
            v["rprev"] = last.get(v["rank"])
            last[v["rank"]] = v["i"]
        for i, v in enumerate(ev):
            v["grp"] = i
            p = ev[i - 1] if i else None
            if v["r"]["call"] is not None and p is not None and p["rank"] == v["rank"] and \
                    p["wi"] == v["wi"] and p["r"]["call"] == v["r"]["call"]:
                v["grp"] = p["grp"]
        # messages and collective instances among the held events
        label = list(range(n))

        def find(a):
            while label[a] != a:
                a = label[a]
            return a

        def union(a, b):
            a, b = find(a), find(b)
            if a != b:
                label[max(a, b)] = min(a, b)

        by_match, by_coll = collections.defaultdict(list), collections.defaultdict(list)
        for v in ev:
            if "match" in v["r"]:
                by_match[v["r"]["match"]].append(v)
            if "coll" in v["r"]:
                by_coll[v["r"]["coll"]].append(v)
        for m in by_match.values():
            s = [v for v in m if v["kind"] == SEND]
            r = [v for v in m if v["kind"] == RECV]
            if len(s) == 1 and len(r) == 1:
                s[0]["msg"], r[0]["msg"] = r[0]["i"], s[0]["i"]
                s[0]["matched"] = r[0]["matched"] = True
                union(s[0]["i"], r[0]["i"])
        for v in ev:
            v["node"] = v["i"]
        for members in by_coll.values():
            members.sort(key=lambda v: (v["rank"], v["i"]))
            ranks = [v["rank"] for v in members]
            consistent = len(set((v["r"]["fn"], v["r"]["peer"]) for v in members)) == 1 and \
                len(set(ranks)) == len(ranks)
            for v in members:
                v["matched"] = True
                union(members[0]["i"], v["i"])
                if consistent:
                    v["node"] = members[0]["i"]
        # a send without its receive waits for it; a receive without its send only while it is
        # in one of the two newest windows (a send is posted before its receive ends)
        for v in ev:
            if not v["matched"] and (is_send(v["r"]) or
                                     (is_recv(v["r"]) and v["wi"] + 2 >= len(self.held))):
                v["blocks"] = True
        # a rank still inside a collective at the end of the newest window may be a member of
        # any instance it is missing from: those wait for its record
        # (nothing held: a gap right after everything was finalized)
        inside = set(rank for rank, recs in self.held[-1][1].items()
                     if any(open_coll(x) for x in recs)) if self.held else set()
        for members in by_coll.values():
            if len(inside & set(v["rank"] for v in members)) < len(inside):
                for v in members:
                    v["blocks"] = True
        # a non-blocking collective ends at its completion: the next record of the rank with
        # its request, when that is a completion (else it waits for it)
        for v in ev:
            r = v["r"]
            if r["kind"] != "icoll" or not r["req"]:
                continue
            done, seen = None, False
            for wi in range(len(self.held)):
                for x in self.held[wi][1].get(v["rank"], []):
                    if x is r:
                        seen = True
                        continue
                    if seen and x["req"] == r["req"] and x["kind"] in ("icoll", "coll_done"):
                        done = x
                        break
                if done is not None:
                    break
            if done is not None and done["kind"] == "coll_done":
                v["e"] = max(v["e"], done["e"])
            else:
                v["blocks"] = True

        def labels():
            roots, lab = {}, []
            for v in ev:
                lab.append(roots.setdefault(find(v["i"]), len(roots)))
            return lab, len(roots)

        def part_edges(lab):
            return sorted(set((lab[v["rprev"]], lab[v["i"]]) for v in ev
                              if v["rprev"] is not None and lab[v["rprev"]] != lab[v["i"]]))

        def merge_cycles():
            lab, npart = labels()
            edges = part_edges(lab)
            reach = [set([p]) for p in range(npart)]
            changed = True
            while changed:  # transitive closure, quadratic and plain
                changed = False
                for a, b in edges:
                    if not reach[b] <= reach[a]:
                        reach[a] |= reach[b]
                        changed = True
            first = {}
            for v in ev:
                for q in range(npart):
                    if q in reach[lab[v["i"]]] and lab[v["i"]] in reach[q]:
                        if q in first:
                            union(first[q], v["i"])
                        else:
                            first[q] = v["i"]
                        break

        def merge_leaps():
            lab, npart = labels()
            edges = part_edges(lab)
            succ = collections.defaultdict(list)
            indeg = [0] * npart
            for a, b in edges:
                succ[a].append(b)
                indeg[b] += 1
            members = collections.defaultdict(list)
            for v in ev:
                members[lab[v["i"]]].append(v)
            rep = {p: members[p][0]["i"] for p in members}
            active = len(set(v["rank"] for v in ev))
            cur = [p for p in range(npart) if indeg[p] == 0]
            while cur:
                covered = set(v["rank"] for p in cur for v in members[p])
                cand = []
                for p in cur:
                    for q in succ[p]:
                        indeg[q] -= 1
                        if indeg[q] == 0:
                            cand.append(q)
                if len(covered) < active:
                    for p in cur[1:]:
                        union(rep[cur[0]], rep[p])
                    head = 0
                    while head < len(cand) and len(covered) < active:
                        c = cand[head]
                        head += 1
                        union(rep[cur[0]], rep[c])
                        covered |= set(v["rank"] for v in members[c])
                        for q in succ[c]:
                            indeg[q] -= 1
                            if indeg[q] == 0:
                                cand.append(q)
                    cand = cand[head:]
                cur = sorted(cand)
            merge_cycles()

        merge_cycles()
        if self.leap:
            merge_leaps()
        lab, npart = labels()
        edges = part_edges(lab)
        preds = collections.defaultdict(set)
        for a, b in edges:
            preds[b].add(a)
        # topological order, smallest ready label first
        order, done_p = [], set()
        while len(order) < npart:
            ready = [p for p in range(npart) if p not in done_p and preds[p] <= done_p]
            if not ready:
                fail("reference: the partitions form a cycle after merging")
            order.append(ready[0])
            done_p.add(ready[0])
        newest = len(self.held) - 1
        block, force = set(), set()
        # a rank inside a communication call at the end of the newest window holds the
        # partition of its last event (its next event may belong there), except at a gap;
        # inside: the newest window with records of the rank has an open communication call
        state = {}
        for window, parts in self.held:
            for rank, recs in parts.items():
                state[rank] = any(open_comm(x) for x in recs)
        waiting = sorted(rank for rank, w in state.items() if w)
        for rank in waiting:
            mine = [v for v in ev if v["rank"] == rank]
            if mine and mode != "all":
                block.add(lab[mine[-1]["i"]])
        for v in ev:
            p = lab[v["i"]]
            if v["blocks"] or (v["wi"] == newest and mode != "all"):
                block.add(p)
            if mode == "all" or (mode == "oldest" and v["wi"] == 0):
                force.add(p)
        for p in reversed(order):
            if p in force:
                force |= preds[p]
        final, normal = set(), set()
        for p in order:
            ok = p not in block and preds[p] <= final
            if ok:
                normal.add(p)
            if ok or p in force:
                final.add(p)
        finished = set()
        for p in order:
            if p not in final:
                continue
            pev = [v for v in ev if lab[v["i"]] == p]
            # local steps: longest path over nodes (rank order and messages)
            nodes = set(v["node"] for v in pev)
            nedges = set()
            for v in pev:
                rp = v["rprev"]
                if rp is not None and lab[rp] == p and ev[rp]["node"] != v["node"]:
                    nedges.add((ev[rp]["node"], v["node"]))
                if v["kind"] == RECV and v["msg"] is not None and \
                        ev[v["msg"]]["node"] != v["node"]:
                    nedges.add((ev[v["msg"]]["node"], v["node"]))
            step = {x: 0 for x in nodes}
            for _ in range(len(nodes) + 1):
                changed = False
                for a, b in nedges:
                    if step[b] < step[a] + 1:
                        step[b] = step[a] + 1
                        changed = True
                if not changed:
                    break
            else:
                fail("reference: a cycle inside a partition")
            ls = {v["i"]: step[v["node"]] for v in pev}
            off = 0
            for v in pev:
                rp = v["rprev"]
                if rp is not None and lab[rp] == p:
                    continue
                c = self.carry[v["rank"]]
                if c["step"] is not None and c["step"] + 1 - ls[v["i"]] > off:
                    off = c["step"] + 1 - ls[v["i"]]
            srt = sorted(pev, key=lambda v: (ls[v["i"]], v["rank"], v["i"]))
            pos = {v["i"]: k for k, v in enumerate(srt)}
            late, slate = {}, {}
            for v in pev:
                same = [u for u in pev if ls[u["i"]] == ls[v["i"]]]
                late[v["i"]] = max(0, v["e"] - min(u["e"] for u in same))
                slate[v["i"]] = max(0, v["s"] - min(u["s"] for u in same))
            gmax = collections.defaultdict(int)
            for v in pev:
                if v["kind"] == RECV and v["msg"] is not None and lab[v["msg"]] == p:
                    gmax[v["grp"]] = max(gmax[v["grp"]], late[v["msg"]])
            first_id = self.next_id
            evs = []
            for v in srt:
                c = self.carry[v["rank"]]
                rp = v["rprev"]
                if rp is not None and lab[rp] == p:
                    has, pl, pe, prev = True, late[rp], ev[rp]["e"], first_id + pos[rp]
                elif c["has"]:
                    has, pl, pe, prev = True, c["late"], c["end"], c["id"]
                else:
                    has, pl, pe, prev = False, 0, 0, -1
                ml, peer = 0, -1
                if v["msg"] is not None and lab[v["msg"]] == p:
                    peer = first_id + pos[v["msg"]]
                    if v["kind"] == RECV:
                        ml = gmax[v["grp"]]
                inh = max(pl, ml)
                lt = late[v["i"]]
                d = max(0, lt - inh)
                if lt < FLOOR:
                    cls = "none"
                elif d < FLOOR:
                    cls = "message" if ml > pl else "rank"
                else:
                    cls = "compute" if slate[v["i"]] > inh else "call"
                evs.append({"window": self.held[v["wi"]][0], "rank": v["rank"],
                            "rec": v["r"]["rec"], "event": first_id + pos[v["i"]],
                            "step": off + ls[v["i"]], "end_ns": v["e"], "late_ns": lt,
                            "diff_ns": d, "comp_ns": max(0, v["s"] - pe) if has else 0,
                            "class": cls, "prev_event": prev, "peer_event": peer,
                            "lost": max(0, lt - pl), "ev_kind": ["", "send", "recv",
                                                                 "coll"][v["kind"]]})
            self.out.extend(evs)
            self.parts.append((self.next_part, p not in normal, [e["event"] for e in evs]))
            self.next_part += 1
            self.next_id += len(evs)
            lastv = {}
            for v in pev:
                lastv[v["rank"]] = v
            for rank, v in lastv.items():
                e = evs[pos[v["i"]]]
                self.carry[rank] = {"has": True, "id": e["event"], "step": e["step"],
                                    "late": e["late_ns"], "end": e["end_ns"]}
            finished |= set(v["i"] for v in pev)
        # each rank keeps what follows its first event that is not final (in the later windows
        # all of it: a completion before their first event may be a pending collective's)
        fin_recs = set(id(v["r"]) for v in ev if v["i"] in finished)
        pending = set()
        for wi, (window, parts) in enumerate(self.held):
            for rank, recs in parts.items():
                if rank in pending:
                    continue
                keep = None
                for k, x in enumerate(recs):
                    if event_kind(x) and id(x) not in fin_recs:
                        keep = k
                        break
                if keep is not None:
                    pending.add(rank)
                parts[rank] = recs[keep:] if keep is not None else []
        while self.held and not any(event_kind(x) for recs in self.held[0][1].values()
                                    for x in recs):
            self.held.pop(0)


def reference(recs, pushed, leap=True):
    """Pushes the windows of `pushed` (the export's list, in order) with their records."""
    by = collections.defaultdict(lambda: collections.defaultdict(list))
    for r in recs:
        by[r["window"]][r["rank"]].append(r)
    ref = Reference(leap)
    for w in pushed:
        ranks = {rank: sorted(rs, key=lambda r: r["rec"]) for rank, rs in by[w].items()}
        ref.push(w, ranks)
    ref.gap()
    return ref


# ---- comparison ----------------------------------------------------------------------------

def compare(recs, parts, stats, ref):
    ev = [r for r in recs if "step" in r]
    got = {(e["window"], e["rank"], e["rec"]): e for e in ev}
    want = {(e["window"], e["rank"], e["rec"]): e for e in ref.out}
    if set(got) != set(want):
        fail("events: %d in the export, %d in the reference; e.g. only in the export %r, only "
             "in the reference %r" % (len(got), len(want), sorted(set(got) - set(want))[:3],
                                      sorted(set(want) - set(got))[:3]))
    bad = 0
    for k, w in sorted(want.items()):
        g = got[k]
        diffs = [f for f in ("event", "step", "end_ns", "late_ns", "diff_ns", "comp_ns", "class",
                             "prev_event", "peer_event", "ev_kind") if g[f] != w[f]]
        if diffs:
            bad += 1
            if bad <= 5:
                print("check_logical: event %r: %s" % (k, ", ".join(
                    "%s export %r reference %r" % (f, g[f], w[f]) for f in diffs)))
    if bad:
        fail("%d of %d events differ from the reference" % (bad, len(want)))
    # partitions as sets of events
    pid = {}
    for pid_ref, forced, ids in ref.parts:
        for i in ids:
            pid[i] = pid_ref
    pairs = set((e["partition"], pid[e["event"]]) for e in ev)
    if len(pairs) != len(set(p for p, _ in pairs)) or \
            len(pairs) != len(set(q for _, q in pairs)):
        fail("partitions differ from the reference (%d export, %d reference)"
             % (len(set(p for p, _ in pairs)), len(ref.parts)))
    if len(parts) != len(ref.parts) or stats["partitions"] != len(ref.parts):
        fail("%d partition lines, stats %d, the reference %d"
             % (len(parts), stats["partitions"], len(ref.parts)))
    forced = {p["partition"] for p in parts if p["forced"]}
    want_forced = {p for p, q in pairs if any(r[0] == q and r[1] for r in ref.parts)}
    if forced != want_forced:
        fail("forced partitions %r, the reference %r" % (sorted(forced), sorted(want_forced)))
    print("check_logical: %d events in %d partitions equal the reference (steps %d..%d, "
          "largest lateness %.3f ms, largest differential lateness %.3f ms)"
          % (len(ev), len(ref.parts), min(e["step"] for e in ev), max(e["step"] for e in ev),
             max(e["late_ns"] for e in ev) / 1e6, max(e["diff_ns"] for e in ev) / 1e6))
    return ev


def main(argv):
    args = {"--params": None, "--csv": None, "--otf2": None, "--online": None}
    if len(argv) < 2:
        print(__doc__)
        sys.exit(2)
    path = argv[1]
    i = 2
    while i < len(argv):
        if argv[i] not in args or i + 1 >= len(argv):
            print(__doc__)
            sys.exit(2)
        args[argv[i]] = argv[i + 1]
        i += 2
    recs, parts, stats = load(path)
    pushed = [w for a, b in stats["pushed"] for w in range(a, b + 1)]
    ref = reference(recs, pushed, stats.get("leap", True))
    ev = compare(recs, parts, stats, ref)
    if not ev:
        fail("no communication event in the export")
    if args["--params"]:
        pattern, p = parse_params(args["--params"])
        if stats["gaps"] != 1:
            fail("%s: a fully traced run should have one gap (the end): %r" % (pattern, stats))
        if stats["forced"] or stats["unmatched"]:
            # (the reference agrees, so the rule was applied: a rank of this loaded machine
            # stalled until the window cap, MW_LOGICAL_MAX_PENDING_WINDOWS, forced a partition)
            fail_timing("%s: a fully traced run should have no forced partition and no "
                        "unmatched message: %r" % (pattern, stats))
        hand_checks(pattern, p, ev)
    if args["--csv"]:
        check_csv(args["--csv"], ev)
    if args["--otf2"]:
        check_otf2(args["--otf2"], ev)
    if args["--online"]:
        lost = {(e["window"], e["rank"], e["rec"]): e["lost"] for e in ref.out}
        check_online(args["--online"], ev, lost)
    print("check_logical: OK")


if __name__ == "__main__":
    main(sys.argv)
