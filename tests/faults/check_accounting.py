#!/usr/bin/env python3
"""check_accounting.py SUMMARY COUNTS_DIR --np N: the collector's accounting is exact.

The program counts its own calls (COUNTS_DIR/counts.RANK, written by tests/faults/fault_app:
"NAME COUNT BYTES" lines). For every rank, the calls in the summary JSON plus the calls the
summary reports missing for that rank equal the calls the rank made, and so do the bytes; for
every function, the job's calls and bytes in the summary plus the missed ones equal the sums of
the ranks' counts; and missed.at_ranks.calls is what the program made (docs/collector.md, Loss
accounting).

  --expect-missed  the fault must have cost the collector calls (missed > 0): otherwise the
                   test did not harm what it claims to harm and proves nothing.
  --no-missed      nothing may be reported missing (a fault that must not lose data).
  --dead R         rank R died (or was killed by mpirun): it wrote no final counts; it must be
                   flagged (totals as of its last sample), and if it left counts.R.dying (the
                   counts of the moment it killed itself) its summary + missed calls may not
                   exceed them. The job's summary + missed must equal missed.at_ranks.
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
    total_missed_calls = int(missed.get("calls", 0))
    job_made = {}
    for rank in range(a.np):
        r = ranks.get(rank)
        if r is None:
            errors.append("rank %d is not in the summary" % rank)
            continue
        got = r.get("functions", {})
        mr = r.get("missed")
        if not isinstance(mr, dict):
            errors.append("rank %d has no \"missed\" object" % rank)
            continue
        path = os.path.join(a.counts, "counts.%d" % rank)
        if rank in a.dead:
            if os.path.exists(path):
                errors.append("rank %d was to die but wrote its counts" % rank)
            if os.path.exists(path + ".dying"):
                made = load_counts(path + ".dying")
                got_calls = sum(int(f.get("count", 0)) for f in got.values())
                seen = got_calls + int(mr.get("calls", 0))
                if not 0 < seen <= sum(c for c, _ in made.values()):
                    errors.append("rank %d: %d calls in the summary + missed, it made %d before "
                                  "it died" % (rank, seen, sum(c for c, _ in made.values())))
            if mr.get("totals") != "last_sample":
                errors.append("rank %d died but its totals are flagged %r, not 'last_sample'"
                              % (rank, mr.get("totals")))
            if rank not in missed.get("ranks_without_bye", []):
                errors.append("rank %d died but is not in missed.ranks_without_bye" % rank)
            continue
        if mr.get("totals") != "bye":
            errors.append("rank %d ended normally but its totals are %r, not 'bye'"
                          % (rank, mr.get("totals")))
        made = load_counts(path)
        # Per rank the summary has every function's calls and the missed calls in all.
        rank_calls = sum(c for c, _ in made.values())
        rank_bytes = sum(b for _, b in made.values())
        got_calls = sum(int(f.get("count", 0)) for f in got.values())
        got_bytes = sum(int(f.get("bytes", 0)) for f in got.values())
        if got_calls + int(mr.get("calls", 0)) != rank_calls:
            errors.append("rank %d: the program made %d calls, the summary has %d + %s missed"
                          % (rank, rank_calls, got_calls, mr.get("calls")))
        if got_bytes + int(mr.get("bytes", 0)) != rank_bytes:
            errors.append("rank %d: the program sent %d bytes, the summary has %d + %s missed"
                          % (rank, rank_bytes, got_bytes, mr.get("bytes")))
        for name, (count, nbytes) in made.items():
            jc, jb = job_made.get(name, (0, 0))
            job_made[name] = (jc + count, jb + nbytes)
            gc, _ = fn_stats(got, name)
            if gc > count:
                errors.append("rank %d %s: %d calls in the summary, the program made %d"
                              % (rank, name, gc, count))
        for name in sorted(set(got) - set(made)):
            if got[name].get("count", 0):
                errors.append("rank %d %s: %d calls in the summary, none made"
                              % (rank, name, got[name]["count"]))
    at = missed.get("at_ranks", {})
    in_summary = sum(int(f.get("count", 0)) for f in s.get("functions", {}).values())
    if int(at.get("calls", -1)) != in_summary + total_missed_calls:
        errors.append("missed.at_ranks.calls %s != %d in the summary + %d missed"
                      % (at.get("calls"), in_summary, total_missed_calls))
    if not a.dead:
        # Job-wide, function by function: summary + missed == the sums of the program's counts.
        for name, (count, nbytes) in sorted(job_made.items()):
            gc, gb = fn_stats(s.get("functions", {}), name)
            mc, mb = fn_stats(missed.get("functions", {}), name)
            if (gc + mc, gb + mb) != (count, nbytes):
                errors.append("job %s: made %d calls / %d bytes, summary %d + %d missed calls, "
                              "%d + %d missed bytes" % (name, count, nbytes, gc, mc, gb, mb))
        made_calls = sum(c for c, _ in job_made.values())
        if int(at.get("calls", -1)) != made_calls:
            errors.append("missed.at_ranks.calls is %s, the program made %d"
                          % (at.get("calls"), made_calls))
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
