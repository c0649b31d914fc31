#!/usr/bin/python3
"""Compare a collector summary JSON (--summary-json) with what a test program must produce.

The expectation is computed, not recorded: for the known-call pattern of
tests/programs/known_*.{c,cpp,f90,py} it follows from the repeat count N and the world size;
for tests/programs/threads.c from the per-thread call count M. On a mismatch the script prints
every difference, one per line, and exits 1. It only uses the standard library so that it
runs with the system interpreter.

  check_summary.py SUMMARY --np 4 --pattern known --n 500
  check_summary.py SUMMARY --np 4 --pattern threads --m 100000
  check_summary.py SUMMARY --np 4 --pattern demo [--iterations I]
  check_summary.py SUMMARY --np 4 --pattern ranks      (only the checks common to all)

Bytes and pairs follow the summary's rules: a send counts count x type size at the sender
when it is posted and makes a src->dst pair (world ranks); receives, waits and barriers
count 0 bytes; Bcast/Allreduce count count x type size on every rank.
"""
import argparse
import json
import re
import sys

# Functions a monitored program may legitimately call around the pattern (start-up, queries,
# shutdown, and what mpi4py does when it is imported or exits). Anything that communicates
# and is not part of the pattern is an error: it would mean a call was recorded under the
# wrong name or counted twice through two entry points.
COMMUNICATING = re.compile(
    r"^MPI_(I?[BSR]?send(_init)?|I?[Rr]ecv(_init)?|Sendrecv(_replace)?|I?m?probe|Mrecv|Imrecv|"
    r"Wait(all|any|some)?|Test(all|any|some)?|Start(all)?|I?[Bb]arrier|I?[Bb]cast|I?Reduce.*|"
    r"I?Allreduce|I?(All)?gatherv?|I?Scatterv?|I?Alltoall[vw]?|I?Scan|I?Exscan|"
    r"Put|Get|R?[Aa]ccumulate|Get_accumulate|Fetch_and_op|Compare_and_swap|"
    r"Neighbor_.*|Ineighbor_.*)$")


class Checker:
    def __init__(self, summary):
        self.s = summary
        self.errors = []
        self.notes = []

    def error(self, msg):
        self.errors.append(msg)

    def fn(self, functions, name):
        f = functions.get(name)
        if f is None:
            return {"count": 0, "time_ns": 0, "bytes": 0}
        return f

    # -- checks common to every run ----------------------------------------------------------

    def common(self, np_expected, activity=True):
        """activity: the program communicates, so there must be windows and MPI time."""
        s = self.s
        for key in ("ranks", "windows", "dropped", "late", "functions", "per_rank", "pairs",
                    "missed"):
            if key not in s:
                self.error("summary has no key %r (keys: %s)" % (key, ", ".join(sorted(s))))
        if self.errors:
            return False
        if s["ranks"] != np_expected:
            self.error("ranks: expected %d, got %d" % (np_expected, s["ranks"]))
        per_rank = s["per_rank"]
        ranks = sorted(r.get("rank") for r in per_rank)
        if ranks != list(range(np_expected)):
            self.error("per_rank: expected entries for ranks 0..%d, got ranks %s"
                       % (np_expected - 1, ranks))
        if activity and s["windows"] <= 0:
            self.error("windows: expected > 0, got %d" % s["windows"])
        if s["dropped"] != 0:
            self.error("dropped: expected 0, got %d (samples were lost, counts cannot match)"
                       % s["dropped"])
        if s["late"]:
            self.notes.append("late samples: %d" % s["late"])
        # Loss accounting (docs/collector.md): a complete run misses nothing, every rank's
        # final totals come from its bye and equal what the summary holds.
        m = s["missed"]
        if m["calls"] or m["samples"] or m["time_ns"] or m["bytes"]:
            self.error("missed: expected nothing, got %s" % {k: m[k] for k in
                                                             ("calls", "time_ns", "bytes", "samples")})
        calls = sum(f["count"] for f in s["functions"].values())
        if m["at_ranks"]["calls"] != calls:
            self.error("calls at the ranks (their byes): %d, in the summary: %d"
                       % (m["at_ranks"]["calls"], calls))
        if m["ranks_without_bye"] or m["ranks_without_totals"]:
            self.error("ranks without bye %s, without totals %s"
                       % (m["ranks_without_bye"], m["ranks_without_totals"]))
        for r in per_rank:
            if not r.get("host"):
                self.error("rank %s: empty host" % r.get("rank"))
            if activity and r.get("mpi_time_ns", 0) <= 0:
                self.error("rank %s: mpi_time_ns %s, expected > 0" % (r.get("rank"),
                                                                     r.get("mpi_time_ns")))
        # The job-wide table must be the sum of the per-rank tables.
        names = set(s["functions"])
        for r in per_rank:
            names |= set(r.get("functions", {}))
        for name in sorted(names):
            for field in ("count", "bytes", "time_ns"):
                total = sum(self.fn(r.get("functions", {}), name).get(field, 0) for r in per_rank)
                top = self.fn(s["functions"], name).get(field, 0)
                if total != top:
                    self.error("%s %s: job total %d != sum over ranks %d"
                               % (name, field, top, total))
            # Communication takes measurable time; set-up and shutdown calls may be recorded
            # without a duration.
            f = self.fn(s["functions"], name)
            if COMMUNICATING.match(name) and f.get("count", 0) > 0 and f.get("time_ns", 0) <= 0:
                self.error("%s: %d calls but time_ns %d" % (name, f["count"], f["time_ns"]))
        return True

    # -- exact expectations -------------------------------------------------------------------

    def expect_functions(self, per_rank_expected, allowed_extra=()):
        """per_rank_expected: rank -> {name: (count, bytes)}. Communicating functions that are
        not expected must not appear at all."""
        expected_names = set()
        for table in per_rank_expected.values():
            expected_names |= set(table)
        for r in self.s["per_rank"]:
            rank = r.get("rank")
            got = r.get("functions", {})
            want = per_rank_expected.get(rank, {})
            for name in sorted(want):
                count, nbytes = want[name]
                f = self.fn(got, name)
                if f.get("count") != count:
                    self.error("rank %d %s count: expected %d, got %d"
                               % (rank, name, count, f.get("count", 0)))
                if f.get("bytes") != nbytes:
                    self.error("rank %d %s bytes: expected %d, got %d"
                               % (rank, name, nbytes, f.get("bytes", 0)))
            for name in sorted(set(got) - expected_names):
                if got[name].get("count", 0) == 0:
                    continue
                if COMMUNICATING.match(name) and name not in allowed_extra:
                    self.error("rank %d %s: not called by the program, got count %d"
                               % (rank, name, got[name]["count"]))
        extra = sorted(set(self.s["functions"]) - expected_names)
        if extra:
            self.notes.append("other functions seen: " + ", ".join(
                "%s=%d" % (n, self.s["functions"][n].get("count", 0)) for n in extra))

    def expect_pairs(self, expected):
        """expected: {(src, dst): (messages, bytes)}."""
        got = {}
        for p in self.s["pairs"]:
            key = (p.get("src"), p.get("dst"))
            if key in got:
                self.error("pair %d->%d listed twice" % key)
            got[key] = (p.get("messages"), p.get("bytes"))
        for key in sorted(set(expected) | set(got)):
            w, g = expected.get(key), got.get(key)
            if w != g:
                self.error("pair %d->%d: expected %s, got %s"
                           % (key[0], key[1],
                              "messages=%d bytes=%d" % w if w else "no pair",
                              "messages=%s bytes=%s" % g if g else "no pair"))

    def report(self, what):
        for n in self.notes:
            print("note: " + n)
        if self.errors:
            print("FAIL: %s: %d difference(s) from the expected summary:" % (what, len(self.errors)))
            for e in self.errors:
                print("  " + e)
            return 1
        print("ok: %s" % what)
        return 0


def known_pattern(n, size):
    """Per-rank expectation and pairs of tests/programs/known_*: see known_c.c."""
    per_rank = {}
    pairs = {}
    for r in range(size):
        per_rank[r] = {
            "MPI_Allreduce": (n, n * 8 * 4),
            "MPI_Send": (n, n * 256 * 8),
            "MPI_Recv": (n, 0),
            "MPI_Isend": (n, n * 10 * 4),
            "MPI_Irecv": (n, 0),
            "MPI_Waitall": (n, 0),
            "MPI_Bcast": (n // 2, (n // 2) * 1000),
            "MPI_Barrier": (5, 0),
        }
        for dst, msgs, nbytes in (((r + 1) % size, n, n * 256 * 8),
                                  ((r - 1 + size) % size, n, n * 10 * 4)):
            if msgs == 0:
                continue
            m0, b0 = pairs.get((r, dst), (0, 0))
            pairs[(r, dst)] = (m0 + msgs, b0 + nbytes)
    return per_rank, pairs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("summary")
    ap.add_argument("--np", type=int, required=True, help="expected number of ranks")
    ap.add_argument("--pattern", choices=("known", "threads", "demo", "ranks"), required=True)
    ap.add_argument("--n", type=int, help="repeat count of the known pattern")
    ap.add_argument("--m", type=int, help="calls per thread of the threads program")
    ap.add_argument("--iterations", type=int, help="iterations of the demo")
    ap.add_argument("--label", default=None, help="name used in the messages")
    a = ap.parse_args()

    try:
        with open(a.summary) as f:
            summary = json.load(f)
    except (OSError, ValueError) as e:
        print("FAIL: cannot read the summary %s: %s" % (a.summary, e))
        return 1

    c = Checker(summary)
    label = a.label or a.pattern
    if not c.common(a.np, activity=a.pattern != "ranks"):
        return c.report(label)

    if a.pattern == "known":
        if a.n is None:
            ap.error("--pattern known needs --n")
        per_rank, pairs = known_pattern(a.n, a.np)
        c.expect_functions(per_rank)
        c.expect_pairs(pairs)
    elif a.pattern == "threads":
        if a.m is None:
            ap.error("--pattern threads needs --m")
        per_rank = {r: {"MPI_Iprobe": (2 * a.m, 0), "MPI_Barrier": (1, 0)}
                    for r in range(a.np)}
        c.expect_functions(per_rank)
        c.expect_pairs({})
    elif a.pattern == "demo":
        used = [n for n, f in summary["functions"].items() if f.get("count", 0) > 0]
        if len(used) < 2:
            c.error("demo: expected at least 2 distinct MPI functions, got %s" % used)
        bcast = c.fn(summary["functions"], "MPI_Bcast").get("bytes", 0)
        if bcast < 32 << 20:
            c.error("demo: MPI_Bcast bytes: expected >= %d (one 32 MB broadcast), got %d"
                    % (32 << 20, bcast))
        if a.iterations is not None:
            # examples/demo.c: per iteration one Waitall (halo exchange) and one Allreduce
            # (residual) on every rank; a 32 MB Bcast every 20 iterations.
            it = a.iterations
            want = {"MPI_Allreduce": (it, 8 * it), "MPI_Waitall": (it, 0),
                    "MPI_Isend": (2 * it, None), "MPI_Irecv": (2 * it, 0),
                    "MPI_Bcast": (it // 20, (it // 20) * (32 << 20))}
            for r in summary["per_rank"]:
                got = r.get("functions", {})
                for name, (count, nbytes) in sorted(want.items()):
                    f = c.fn(got, name)
                    if f.get("count") != count:
                        c.error("demo: rank %s %s count: expected %d, got %d"
                                % (r.get("rank"), name, count, f.get("count", 0)))
                    if nbytes is not None and f.get("bytes") != nbytes:
                        c.error("demo: rank %s %s bytes: expected %d, got %d"
                                % (r.get("rank"), name, nbytes, f.get("bytes", 0)))
        if not summary["pairs"]:
            c.error("demo: no point-to-point pairs (the halo exchange sends between neighbours)")
    return c.report(label)


if __name__ == "__main__":
    sys.exit(main())
