#!/usr/bin/env python3
"""check_accounting.py SUMMARY COUNTS_DIR --np N: the collector's accounting is exact.

For every rank of the job and every function the program counted (COUNTS_DIR/counts.RANK,
written by tests/faults/fault_app: "NAME COUNT BYTES" lines), the calls in the summary JSON plus
the calls the summary reports missing equal the calls the program made, and so do the bytes.
The job-wide totals (summary "functions" + "missed") must be the sums of the per-rank ones.

  --expect-missed  the fault must have cost the collector calls (missed > 0): otherwise the
                   test did not harm what it claims to harm and proves nothing.
  --no-missed      nothing may be reported missing (a fault that must not lose data).
  --dead R         rank R died: it wrote no counts; its summary + missed must equal the totals
                   of its last sample, which may be below what it did, and it must be flagged.
"""
import argparse
import json
import os
import sys


def load_counts(path):
    out = {}
    with open(path) as f:
        for line in f:
            name, count, nbytes = line.split()
            out[name] = (int(count), int(nbytes))
    return out


def fn_stats(table, name):
    f = table.get(name) or {}
    return int(f.get("count", 0)), int(f.get("bytes", 0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("summary")
    ap.add_argument("counts")
    ap.add_argument("--np", type=int, required=True)
    ap.add_argument("--expect-missed", action="store_true")
    ap.add_argument("--no-missed", action="store_true")
    ap.add_argument("--dead", type=int, action="append", default=[])
    a = ap.parse_args()

    with open(a.summary) as f:
        s = json.load(f)
    errors = []
    missed = s.get("missed")
    if not isinstance(missed, dict):
        print("FAIL: the summary has no \"missed\" object")
        return 1
    ranks = {r["rank"]: r for r in s.get("per_rank", [])}
    missed_ranks = {r["rank"]: r for r in missed.get("per_rank", [])}
    total_missed_calls = 0
    job_made = {}
    for rank in range(a.np):
        r = ranks.get(rank)
        if r is None:
            errors.append("rank %d is not in the summary" % rank)
            continue
        got = r.get("functions", {})
        mr = missed_ranks.get(rank, {})
        lost = mr.get("functions", {})
        path = os.path.join(a.counts, "counts.%d" % rank)
        if rank in a.dead:
            if os.path.exists(path):
                errors.append("rank %d was to die but wrote its counts" % rank)
            if not (r.get("dead") or mr.get("dead") or r.get("totals_as_of_last_sample")):
                errors.append("rank %d died but the summary does not flag it" % rank)
            continue
        made = load_counts(path)
        for name, (count, nbytes) in sorted(made.items()):
            gc, gb = fn_stats(got, name)
            mc, mb = fn_stats(lost, name)
            total_missed_calls += mc
            jc, jb = job_made.get(name, (0, 0))
            job_made[name] = (jc + count, jb + nbytes)
            if gc + mc != count:
                errors.append("rank %d %s: the program made %d calls, the summary has %d + %d "
                              "missing" % (rank, name, count, gc, mc))
            if gb + mb != nbytes:
                errors.append("rank %d %s: the program sent %d bytes, the summary has %d + %d "
                              "missing" % (rank, name, nbytes, gb, mb))
        for name in sorted(set(got) - set(made)):
            if got[name].get("count", 0):
                errors.append("rank %d %s: %d calls in the summary, none made"
                              % (rank, name, got[name]["count"]))
    if not a.dead:
        # Job-wide: summary functions + missed functions == the sums of the program's counts.
        for name, (count, nbytes) in sorted(job_made.items()):
            gc, gb = fn_stats(s.get("functions", {}), name)
            mc, mb = fn_stats(missed.get("functions", {}), name)
            if (gc + mc, gb + mb) != (count, nbytes):
                errors.append("job %s: made %d calls / %d bytes, summary %d + %d missing calls, "
                              "%d + %d missing bytes" % (name, count, nbytes, gc, mc, gb, mb))
        if int(missed.get("calls", 0)) != total_missed_calls:
            errors.append("missed.calls is %s, the per-rank missing calls add up to %d"
                          % (missed.get("calls"), total_missed_calls))
    if a.expect_missed and total_missed_calls == 0 and not a.dead:
        errors.append("the fault cost the collector no call: the test proves nothing")
    if a.no_missed and int(missed.get("calls", 0)) != 0:
        errors.append("%s calls reported missing where none may be" % missed.get("calls"))
    if errors:
        print("FAIL: %d accounting error(s):" % len(errors))
        for e in errors[:40]:
            print("  " + e)
        return 1
    print("ok: accounting exact for %d ranks (%d calls missing)" % (a.np, total_missed_calls))
    return 0


if __name__ == "__main__":
    sys.exit(main())
