#!/usr/bin/env python3
"""check_trace_reqs.py DUMP NP BIG_POSTS: the trace records of tests/programs/trace_reqs
(MPIWATCH_VERBOSE=3 dump of every rank) against its rules: every completion record names a
post of its rank with the same kind and tag; posts with tags 7, 8, 15 and 20 (their request
ended in error, or was completed on another thread) have no completion, every other post
exactly one; each rank has BIG_POSTS posts with tags 1000 and above; rank 0 has the failed
posts; no ring lost a record."""
import re
import sys
from collections import defaultdict

TREC = re.compile(r"mpiwatch\[(\d+)\]: trec (\d+) (\d+) (\S+) kind (\d+) comm \S+ peer (-?\d+) "
                  r"tag (-?\d+) bytes (\d+) req (\d+) flags (\d+)")
THREAD = re.compile(r"mpiwatch\[(\d+)\]: trace thread (\d+): \d+ records written, \d+ read, "
                    r"(\d+) lost")
ISEND, IRECV, SEND_DONE, RECV_DONE = 3, 4, 5, 6
NOCOMP = {7, 8, 15, 20}


def main():
    dump, np_, big = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    posts = defaultdict(dict)   # rank -> req -> (kind, tag)
    dones = defaultdict(lambda: defaultdict(int))
    first = {}
    errors = []
    for line in open(dump, errors="replace"):
        m = THREAD.search(line)
        if m and int(m.group(3)):
            errors.append(f"rank {m.group(1)} thread {m.group(2)} lost {m.group(3)} records")
        m = TREC.search(line)
        if not m:
            continue
        rank, thr, k = int(m.group(1)), int(m.group(2)), int(m.group(3))
        kind, tag, req = int(m.group(5)), int(m.group(7)), int(m.group(9))
        first[(rank, thr)] = min(first.get((rank, thr), k), k)
        if kind in (ISEND, IRECV) and req:
            if req in posts[rank]:
                errors.append(f"rank {rank}: request number {req} posted twice")
            posts[rank][req] = (kind, tag)
        elif kind in (SEND_DONE, RECV_DONE):
            p = posts[rank].get(req)
            want = ISEND if kind == SEND_DONE else IRECV
            if p is None:
                errors.append(f"rank {rank}: completion of unknown request {req}: {line.strip()}")
            elif p != (want, tag):
                errors.append(f"rank {rank}: completion kind {kind} tag {tag} credited to "
                              f"request {req} posted as kind {p[0]} tag {p[1]}")
            dones[rank][req] += 1
    for (rank, thr), k in first.items():
        if k:
            errors.append(f"rank {rank} thread {thr}: the ring wrapped (first record {k})")
    if sorted(posts) != list(range(np_)):
        errors.append(f"ranks with posts: {sorted(posts)}, expected 0..{np_ - 1}")
    for rank, reqs in posts.items():
        n_big = sum(1 for _, tag in reqs.values() if tag >= 1000)
        if n_big != big:
            errors.append(f"rank {rank}: {n_big} posts with tags >= 1000, expected {big}")
        for req, (kind, tag) in reqs.items():
            want = 0 if tag in NOCOMP else 1
            if dones[rank][req] != want:
                errors.append(f"rank {rank}: request {req} (kind {kind} tag {tag}) has "
                              f"{dones[rank][req]} completions, expected {want}")
    tags0 = {tag for _, tag in posts[0].values()}
    for tag in (7, 8, 15, 10, 13, 14, 16):
        if tag not in tags0:
            errors.append(f"rank 0: no post with tag {tag}")
    for e in errors[:40]:
        print("check_trace_reqs:", e, file=sys.stderr)
    if errors:
        print(f"check_trace_reqs: {len(errors)} errors", file=sys.stderr)
        return 1
    total = sum(len(r) for r in posts.values())
    print(f"check_trace_reqs: {total} posts on {np_} ranks, completions as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
