#!/bin/bash
# fortran_in_place.sh: a Fortran MPI_Gather with MPI_IN_PLACE at the root, whose ignored send
# count and type are garbage, runs unchanged and is counted with 0 bytes at the root and
# 4 bytes (one MPI_INTEGER) per call elsewhere.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mw_setup fortran_in_place
mw_run_job "^inplace_f: ok" mw_mpirun "$MW_PROGRAMS/inplace_f"
"${MW_PYTHON:-/usr/bin/python3}" - "$MW_T/summary.json" "$MW_NP" <<'PY' || mw_fail "wrong Gather figures"
import json, sys
d = json.load(open(sys.argv[1])); np = int(sys.argv[2])
ok = True
for r in d["per_rank"]:
    g = r["functions"].get("MPI_Gather", {})
    want = (10, 0 if r["rank"] == 0 else 40)
    got = (g.get("count"), g.get("bytes"))
    if got != want:
        print(f"rank {r['rank']}: MPI_Gather (count, bytes) = {got}, expected {want}")
        ok = False
if len(d["per_rank"]) != np:
    print(f"{len(d['per_rank'])} ranks in the summary, expected {np}")
    ok = False
sys.exit(0 if ok else 1)
PY
