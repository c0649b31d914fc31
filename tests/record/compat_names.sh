#!/bin/bash
# compat_names.sh COLLECTOR EXPORT: a recording made before function identity by name still
# replays and exports the same (docs/function-table.md, "Legacy").
#
# compat/known4-unnamed.mpiw is tests/programs/known_c (N = 300, 4 ranks, 20 ms windows,
# MPIWATCH_STEP=MPI_Barrier, traces and call sites on) recorded by the build just before the
# hellos named their functions: its hellos carry the table's hash only. known4-unnamed.summary
# .json is what that build's `--replay --speed 0 --summary-json` wrote, known4-unnamed.csv,
# .rank.csv (--per-rank) and .jsonl its exports, known4-unnamed.sha256 the SHA-256 of its
# perfetto, trace, lateness and logical exports.
# This build must accept those hellos (their hash is the legacy table's) and give the same
# summary, by name (every key that build wrote); when this build's table is the legacy one
# (ids unchanged), byte-identical exports too.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
MW_COLLECTOR=$1
export_bin=$2
mw_init record_compat_names
data=$(cd "$(dirname "$0")/compat" && pwd)
rec=$data/known4-unnamed.mpiw

rec_replay "$MW_T/replay.log" --replay "$rec" --speed 0 --summary-json "$MW_T/summary.json" \
    --stats-json "$MW_T/stats.json" ||
    { MW_FAILURE_LOG=$MW_T/replay.log; mw_fail "the replay of $rec failed"; }
MW_FAILURE_LOG=$MW_T/replay.log
"$MW_PYTHON" - "$data/known4-unnamed.summary.json" "$MW_T/summary.json" "$MW_T/stats.json" \
    <<'PY' || mw_fail "the replayed summary differs from the one the earlier build wrote"
import json, sys
want, got, stats = (json.load(open(p)) for p in sys.argv[1:4])
# Every key the earlier build wrote (later builds may add keys of their own).
bad = [k for k in want if want.get(k) != got.get(k)]
for k in bad:
    print(f"{k}: got {json.dumps(got.get(k))[:300]}, want {json.dumps(want.get(k))[:300]}")
if stats["rejected"].get("table_mismatch"):
    print("hellos refused as table_mismatch:", stats["rejected"]["table_mismatch"])
    bad.append("table_mismatch")
if not want["functions"].get("MPI_Allreduce", {}).get("count"):
    bad.append("the reference has no MPI_Allreduce")
sys.exit(1 if bad else 0)
PY

# The exports whose format later builds extend (csv, jsonl: known4-unnamed.csv, .rank.csv and
# .jsonl are what the earlier build wrote) must hold what it wrote, column by column and key by
# key ("window" excepted: since then a number from the job's first window, the earlier number
# being grid_index); whatever this build's table.
for fmt in csv rank.csv jsonl; do
    case $fmt in
        rank.csv) args=(--format csv --per-rank) ;;
        *) args=(--format "$fmt") ;;
    esac
    "$export_bin" "${args[@]}" "$rec" -o "$MW_T/out.$fmt" 2>"$MW_T/export.$fmt.log" ||
        { MW_FAILURE_LOG=$MW_T/export.$fmt.log; mw_fail "export $fmt failed"; }
done
"$MW_PYTHON" - "$data" "$MW_T" <<'PY' || mw_fail "an export differs from the earlier build's"
import csv, json, sys
data, t = sys.argv[1:3]
bad = 0
for fmt in ("csv", "rank.csv"):
    want = list(csv.DictReader(open(f"{data}/known4-unnamed.{fmt}")))
    got = list(csv.DictReader(open(f"{t}/out.{fmt}")))
    cols = [c for c in (want[0] if want else {}) if c != "window"]
    if not want or len(want) != len(got):
        print(f"{fmt}: {len(got)} rows, want {len(want)}")
        bad += 1
    for i, (w, g) in enumerate(zip(want, got)):
        diff = [c for c in cols if w[c] != g.get(c)]
        if diff:
            print(f"{fmt} row {i}: {[(c, g.get(c), w[c]) for c in diff]}")
            bad += 1
want = [json.loads(l) for l in open(f"{data}/known4-unnamed.jsonl")]
got = [json.loads(l) for l in open(f"{t}/out.jsonl")]
if len(want) != len(got):
    print(f"jsonl: {len(got)} lines, want {len(want)}")
    bad += 1
for i, (w, g) in enumerate(zip(want, got)):
    diff = [k for k in w if k != "window" and w[k] != g.get(k)]
    if diff:
        print(f"jsonl line {i}: keys {diff} differ")
        bad += 1
sys.exit(1 if bad else 0)
PY

# The other exports byte for byte, when this build's table is the legacy one (an MPICH build
# numbers its functions otherwise, which some of them show).
legacy_count=$(grep -c '^MW_FN(' "$data/../../../proto/mpi_functions.def")
build_count=$("$MW_COLLECTOR" --version | sed -n 's/.*, \([0-9]*\) MPI functions).*/\1/p')
if [ "$legacy_count" != "$build_count" ]; then
    mw_log "ok: the summary, csv and jsonl are the same by name (this build's table has" \
        "$build_count functions, the legacy one $legacy_count: no byte comparison)"
    exit 0
fi
while read -r want fmt; do
    "$export_bin" --format "$fmt" "$rec" -o "$MW_T/out.$fmt" 2>"$MW_T/export.$fmt.log" ||
        { MW_FAILURE_LOG=$MW_T/export.$fmt.log; mw_fail "export $fmt failed"; }
    got=$(sha256sum "$MW_T/out.$fmt" | cut -d' ' -f1)
    [ "$want" = "$got" ] || mw_fail "export $fmt differs from the earlier build's"
done <"$data/known4-unnamed.sha256"
mw_log "ok: the recording made before names replays to the same summary and exports the same"
