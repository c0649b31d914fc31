#!/bin/bash
# subcomm.sh N: sends on a split (reordered) communicator and on duplicates of
# MPI_COMM_WORLD that are freed and made again; every pair in the summary must be in world
# ranks, with exact messages and bytes.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
n=$1
mw_setup subcomm
mw_run_job "^subcomm: [0-9]* ranks, N=$n, ok" mw_mpirun "$MW_PROGRAMS/subcomm" "$n"
"${MW_PYTHON:-/usr/bin/python3}" - "$MW_T/summary.json" "$MW_NP" "$n" <<'PY' || mw_fail "pairs differ"
import json, sys
d = json.load(open(sys.argv[1])); np, n = int(sys.argv[2]), int(sys.argv[3])
want = {}
def add(s, t, m, b):
    old = want.get((s, t), (0, 0))
    want[(s, t)] = (old[0] + m, old[1] + b)
for parity in (0, 1):
    members = sorted((r for r in range(np) if r % 2 == parity), reverse=True)  # key = -rank
    for i, r in enumerate(members):
        add(r, members[(i + 1) % len(members)], n, n * 16 * 8)
for r in range(1, np):
    add(r, 0, 2 * (n // 2), 2 * (n // 2) * 16)
got = {(p["src"], p["dst"]): (p["messages"], p["bytes"]) for p in d["pairs"]}
bad = [f"{k}: got {got.get(k)}, expected {v}" for k, v in sorted(want.items()) if got.get(k) != v]
bad += [f"{k}: unexpected pair {v}" for k, v in sorted(got.items()) if k not in want]
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
