#!/bin/bash
# tiers.sh COLLECTOR LOADGEN RECDUMP FEED EXPORT MODE: the recording's tiers (docs/recording.md, Tiers).
#
# MODE expiry: a 64-rank loadgen job (50 windows of 100 ms) recorded with --record-full-span 1
#              --record-keep-around 0. Afterwards the raw samples of the old windows are gone
#              (fewer message frames than the job sent, the file takes fewer blocks than its
#              length) while every window is still there and found through the index; the
#              reader says from which window the samples are complete (tier_raw_from); a
#              history request for an early rank range answers with tier "coarse" and rank 5's
#              share of the per-rank sums (equal to its entries in the file), one for the
#              early windows with their lean copies and tier "coarse"; mw-recdump reads some
#              windows as lean copies, the per-rank sums cover every window and hold more than
#              the full windows left; the replay says "raw samples from window A,
#              merged windows before" and derives the windows from A on byte-identical to the
#              recorded ones; mpiwatch-export says the same and exports every window, and the
#              Python package reads every window over the holes.
# MODE maxgb:  the same job with --record-max-gb 0.001: the log says the raw samples were
#              dropped, they are counted as not recorded, every window is still in the file
#              (lean copies after the drop, per-rank sums over all 50), the file takes at most
#              the limit and a window's worth more, reads cleanly with its windows found through
#              the index, the collector counts no recording error, and monitoring went on (every
#              message accepted). The stop at the limit: record_unit (test_max_gb).
# MODE coarse: the same job with --record-full-span 3600 --record-rank-every 7: nothing is
#              dropped, every window has its lean copy, and the per-rank sums (RecordRanks) over
#              the whole run equal the sums over the full windows (rf count, time, bytes, pairs'
#              messages and bytes, per-function pairs' bytes, windows), none of them 0 but
#              those the generator does not send (per-function pairs, regions), in
#              ceil(windows / 7) frames or more; mpiwatch-export --format coarse and the
#              Python package (Recording.rank_sums) give the same totals.
# MODE kill:   kill -9 of a collector recording compressed frames with expiry on, in the middle
#              of the job: the file reads up to its last complete frame, every window in it is
#              found, holes included, and the replay derives the raw tier's windows identically.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
MW_COLLECTOR=$1
REC_LOADGEN=$2
REC_DUMP=$3
feed=$4
export_bin=$5
mode=$6
mw_init "record_tiers_$mode"
d=$MW_T
hist=ipc://$d/hist.sock

# blocks FILE: the bytes the file takes on disk; size FILE: its length.
blocks() { echo $(($(stat -c '%b * %B' "$1"))); }
size() { stat -c %s "$1"; }

# replay_check: the replay names the raw tier's first window and derives the windows from it on
# identically.
replay_check() {
    local from=$1 cmp
    rec_replay "$d/replay.log" --replay "$d/run.mpiw" --speed 0 ||
        { MW_FAILURE_LOG=$d/replay.log; mw_fail "the replay failed"; }
    grep -q "raw samples from window $from, merged windows before" "$d/replay.log" ||
        { MW_FAILURE_LOG=$d/replay.log; mw_fail "the replay does not say which tier it used"; }
    cmp=$(rec_compared "$d/replay.log")
    if [ "${cmp% *}" -lt 3 ] || [ "${cmp#* }" != 0 ]; then
        MW_FAILURE_LOG=$d/replay.log
        mw_fail "raw tier windows compared, differ: $cmp"
    fi
}

case $mode in
expiry)
    mw_start_collector --record "$d/run.mpiw" --record-compress=1 --record-full-span 1 \
        --record-keep-around 0 --history "$hist" --history-windows 4 --history-mb 1 --stats-json "$d/stats.json"
    rec_loadgen --ranks 64 --rate 10 --functions 8 --seconds 5 --seed 3
    sleep 1.5 # the last window closes (lateness) and the job ends
    rec_dump "$d/run.mpiw" "$d/dump"
    first=$(rec_val "$d/dump" span)
    raw_from=$(rec_val "$d/dump" tier_raw_from)
    [ "$(rec_val "$d/dump" tier_dropped)" = 1 ] || mw_fail "no samples were dropped"
    [ "$raw_from" -gt "$first" ] || mw_fail "raw from window $raw_from, first window $first"
    "$feed" --history "$hist" --rank 5 --range "$first:$((first + 4))" >"$d/rank.json" ||
        mw_fail "the rank history request failed"
    "$feed" --history "$hist" --range "$first:$((first + 4))" >"$d/win.json" ||
        mw_fail "the window history request failed"
    "$MW_PYTHON" - "$d/rank.json" "$d/win.json" "$first" <<'PY' || mw_fail "history tiers"
import json, sys
rank, win = (json.load(open(p)) for p in sys.argv[1:3])
first = int(sys.argv[3])
assert rank["error"] == "" and rank["tier"] == "coarse", (rank["error"], rank["tier"])
# The rank's share of the per-rank sums that cover the range: its own entries only.
sums = rank["rank_sums"]
assert sums, "no per-rank sums in the rank's reply"
for k in sums:
    assert k["first_window"] <= first + 4 and k["last_window"] >= first, k
    assert k["functions"] and all(f[0] == 5 for f in k["functions"]), k["functions"]
    assert all(5 in p[:2] for p in k["pairs"]) and all(5 in p[:2] for p in k["fn_pairs"]), k
    assert len(k["rank_windows"]) == 1 and k["rank_windows"][0] > 0, k["rank_windows"]
assert win["error"] == "" and win["tier"] == "coarse", (win["error"], win["tier"])
got = [w["index"] for w in win["windows"]]
assert got == list(range(first, first + 5)), got
PY
    kill -TERM "$MW_CPID"
    mw_collector_exits 10
    rec_dump "$d/run.mpiw" "$d/dump"
    windows=$(rec_val "$d/dump" window)
    messages=$(rec_val "$d/dump" message)
    [ "$windows" -ge 45 ] || mw_fail "only $windows windows left"
    [ "$(rec_val "$d/dump" lean)" -gt 0 ] || mw_fail "no window read from the coarse tier"
    [ "$(rec_val "$d/dump" sums_coarse 9)" = "$windows" ] ||
        mw_fail "the per-rank sums cover $(rec_val "$d/dump" sums_coarse 9) of $windows windows"
    [ "$(rec_val "$d/dump" sums_coarse)" -gt "$(rec_val "$d/dump" sums_full)" ] ||
        mw_fail "the per-rank sums hold no more calls than the full windows left"
    [ "$(rec_val "$d/dump" find_ok)" = "$windows" ] || mw_fail "windows not found by index"
    [ "$(rec_val "$d/dump" truncated)" = 0 ] || mw_fail "the file does not read to its end"
    # 64 hellos, 64 byes and 64 samples a window were received.
    [ "$messages" -lt $((64 * windows / 2)) ] || mw_fail "$messages messages: samples kept"
    [ "$(blocks "$d/run.mpiw")" -lt "$(size "$d/run.mpiw")" ] ||
        mw_fail "the dropped samples still take their blocks"
    grep -q "tiers: [1-9][0-9]* runs of samples dropped" "$d/collector.err" ||
        mw_fail "the collector does not log what it dropped"
    [ "$(rec_json "$d/stats.json" 'j["recording_dropped_bytes"]')" -gt 0 ] ||
        mw_fail "the stats do not count the samples dropped"
    replay_check "$raw_from"
    # The history's per-rank sums of rank 5 are exactly rank 5's entries of the recording's.
    "$export_bin" --format coarse "$d/run.mpiw" -o "$d/coarse.jsonl" 2>"$d/coarse.err" ||
        { MW_FAILURE_LOG=$d/coarse.err; mw_fail "the coarse export failed"; }
    "$MW_PYTHON" - "$d/rank.json" "$d/coarse.jsonl" <<'PY' || mw_fail "history's per-rank sums"
import json, sys
rank = json.load(open(sys.argv[1]))
frames = {(k["first_window"], k["last_window"]): k for k in map(json.loads, open(sys.argv[2]))}
for k in rank["rank_sums"]:
    full = frames[(k["first_window"], k["last_window"])]
    for key in ("functions", "regions"):
        assert k[key] == [e for e in full[key] if e[0] == 5], key
    for key in ("pairs", "fn_pairs"):
        assert k[key] == [e for e in full[key] if 5 in e[:2]], key
    assert k["rank_windows"] == full["rank_windows"][5:6], k["rank_windows"]
    assert k["mpi_permille"] == full["mpi_permille"][5:6], k["mpi_permille"]
    assert k["windows"] == full["windows"], k["windows"]
print("history per-rank sums of rank 5: %d frame(s), %d calls" % (
    len(rank["rank_sums"]), sum(f[3] for k in rank["rank_sums"] for f in k["functions"])))
PY
    "$export_bin" --format jsonl "$d/run.mpiw" -o "$d/out.jsonl" 2>"$d/export.err" ||
        { MW_FAILURE_LOG=$d/export.err; mw_fail "the export failed"; }
    grep -q "raw samples from window $raw_from, merged windows before" "$d/export.err" ||
        { MW_FAILURE_LOG=$d/export.err; mw_fail "the export does not say which tier"; }
    grep -q "windows ([0-9]*\.\.[0-9]*) from the coarse tier" "$d/export.err" ||
        { MW_FAILURE_LOG=$d/export.err; mw_fail "the export does not name the coarse tier"; }
    grep -q "of them lean copies, the coarse tier" "$d/replay.log" ||
        { MW_FAILURE_LOG=$d/replay.log; mw_fail "the replay does not name the coarse tier"; }
    "$export_bin" --format vtk "$d/run.mpiw" -o "$d/vtk" 2>"$d/vtk.err" ||
        { MW_FAILURE_LOG=$d/vtk.err; mw_fail "the VTK export of a tiered file failed"; }
    grep -q "from the coarse tier" "$d/vtk.err" ||
        { MW_FAILURE_LOG=$d/vtk.err; mw_fail "the VTK export does not name the coarse tier"; }
    [ "$(wc -l <"$d/out.jsonl")" = "$windows" ] ||
        mw_fail "the export has $(wc -l <"$d/out.jsonl") windows, the recording $windows"
    # The Python package (tools/python, built beside the collector) steps over the holes too.
    PYTHONPATH=$(dirname "$MW_COLLECTOR")/../python "$MW_PYTHON" - "$d/run.mpiw" "$windows" \
        <<'PY' || mw_fail "the Python package does not read the tiered recording"
import sys
import mpiwatch
r = mpiwatch.Recording(sys.argv[1])
n = len(r.windows())
assert r.damage is None and n == int(sys.argv[2]), (r.damage, n, sys.argv[2])
assert r.holes, "no holes found"
PY
    ;;
maxgb)
    # At 90% of --record-max-gb the samples (and the full windows, which go with them) are
    # dropped and no longer recorded; the coarse tier goes on (lean windows, per-rank sums):
    # every window is still in the file. (The stop at the limit itself: record_unit's
    # test_max_gb, with a clock the test controls.)
    mw_start_collector --record "$d/run.mpiw" --record-max-gb 0.001 --stats-json "$d/stats.json" \
        --exit-after-job
    rec_loadgen --ranks 64 --rate 10 --functions 8 --seconds 5 --seed 3
    mw_collector_exits 15
    grep -q "raw samples dropped and no longer recorded" "$d/collector.err" ||
        mw_fail "no log line for the raw samples dropped at 90%"
    [ "$(blocks "$d/run.mpiw")" -le $((1000000 + 512 * 1024)) ] ||
        mw_fail "the file takes $(blocks "$d/run.mpiw") bytes, over the limit"
    [ "$(rec_json "$d/stats.json" 'j["recording_errors"]')" = 0 ] ||
        mw_fail "the limit was counted as a recording error"
    [ "$(rec_json "$d/stats.json" 'j["recording_not_recorded"]')" -gt 0 ] ||
        mw_fail "the stats do not count the samples not recorded"
    [ "$(rec_json "$d/stats.json" 'j["accepted"]')" = $((64 * 50 + 2 * 64)) ] ||
        mw_fail "monitoring lost messages: $(cat "$d/stats.json")"
    rec_dump "$d/run.mpiw" "$d/dump"
    windows=$(rec_val "$d/dump" window)
    [ "$windows" = 50 ] || mw_fail "$windows windows in the recording, not 50"
    [ "$(rec_val "$d/dump" find_ok)" = "$windows" ] || mw_fail "windows not found by index"
    [ "$(rec_val "$d/dump" truncated)" = 0 ] || mw_fail "the file does not read to its end"
    [ "$(rec_val "$d/dump" last)" = index ] || mw_fail "the recording does not end with its index"
    [ "$(rec_val "$d/dump" lean)" -gt 0 ] || mw_fail "no lean window after the drop"
    [ "$(rec_val "$d/dump" sums_coarse 9)" = 50 ] ||
        mw_fail "the per-rank sums cover $(rec_val "$d/dump" sums_coarse 9) windows"
    ;;
kill)
    mw_start_collector --record "$d/run.mpiw" --record-compress=-3 --record-full-span 1 \
        --record-keep-around 0
    "$REC_LOADGEN" --connect "$MW_EP" --ranks 128 --rate 10 --functions 8 --seconds 8 \
        2>"$d/loadgen.err" &
    lg=$!
    sleep 4
    kill -0 "$MW_CPID" || mw_fail "the collector died"
    mw_kill_collector
    kill "$lg" 2>/dev/null
    wait "$lg" 2>/dev/null
    rec_dump "$d/run.mpiw" "$d/dump"
    windows=$(rec_val "$d/dump" window)
    [ "${windows:-0}" -ge 15 ] || mw_fail "only ${windows:-0} windows after 4 s"
    [ "$(rec_val "$d/dump" find_ok)" = "$windows" ] || mw_fail "windows not found by index"
    [ "$(rec_val "$d/dump" tier_dropped)" = 1 ] || mw_fail "no samples were dropped"
    grep -q MWZF "$d/run.mpiw" || mw_fail "no compressed frame in the recording"
    replay_check "$(rec_val "$d/dump" tier_raw_from)"
    ;;
coarse)
    mw_start_collector --record "$d/run.mpiw" --record-full-span 3600 --record-rank-every 7 \
        --exit-after-job
    rec_loadgen --ranks 64 --rate 10 --functions 8 --seconds 5 --seed 3
    mw_collector_exits 15
    rec_dump "$d/run.mpiw" "$d/dump"
    windows=$(rec_val "$d/dump" window)
    [ "$windows" -ge 45 ] || mw_fail "only $windows windows"
    [ "$(rec_val "$d/dump" lean)" = 0 ] || mw_fail "a full window is missing"
    [ "$(rec_val "$d/dump" lean_skipped)" = "$windows" ] || mw_fail "lean copies missing"
    full=$(grep '^sums_full ' "$d/dump" | cut -d' ' -f2-)
    coarse=$(grep '^sums_coarse ' "$d/dump" | cut -d' ' -f2-)
    [ "$full" = "$coarse" ] || mw_fail "per-rank sums differ: full windows $full, coarse $coarse"
    # (the generator sends no per-function pairs and no regions: those two totals are 0)
    for f in $(echo "$full" | cut -d' ' -f1-5,8); do [ "$f" -gt 0 ] || mw_fail "a zero total: $full"; done
    [ "${full##* }" = "$windows" ] || mw_fail "sums over ${full##* } of $windows windows"
    [ "$(rec_val "$d/dump" rank_sums)" -ge $(((windows + 6) / 7)) ] ||
        mw_fail "$(rec_val "$d/dump" rank_sums) per-rank frames for $windows windows"
    # mpiwatch-export --format coarse writes those frames: the same totals, every window.
    "$export_bin" --format coarse "$d/run.mpiw" -o "$d/coarse.jsonl" 2>"$d/coarse.err" ||
        { MW_FAILURE_LOG=$d/coarse.err; mw_fail "the coarse export failed"; }
    "$MW_PYTHON" - "$d/coarse.jsonl" "$full" <<'PY' || mw_fail "the coarse export's totals differ"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
want = [int(x) for x in sys.argv[2].split()]
rf = [sum(e[k] for l in lines for e in l["functions"]) for k in (3, 4, 5)]
pairs = [sum(e[k] for l in lines for e in l["pairs"]) for k in (2, 3)]
windows = sum(l["windows"] for l in lines)
got = rf + pairs + [windows]
assert got == want[0:5] + [want[7]], (got, want)
assert all(l["type"] == "ranks" and l["left_out"] == 0 for l in lines)
assert all(len(l["rank_windows"]) == 64 for l in lines), [len(l["rank_windows"]) for l in lines]
PY
    # The Python package reads them too (Recording.rank_sums), with the same totals.
    PYTHONPATH=$(dirname "$MW_COLLECTOR")/../python "$MW_PYTHON" - "$d/run.mpiw" "$full" \
        <<'PY' || mw_fail "the Python package's rank sums differ"
import sys
import mpiwatch
r = mpiwatch.Recording(sys.argv[1])
want = [int(x) for x in sys.argv[2].split()]
t = r.rank_sums()
got = [int(t["calls"].sum()), int(t["time_ns"].sum()), int(t["bytes"].sum())]
assert got == want[0:3], (got, want)
assert (t["function"] != "unknown").all()
PY
    ;;
*)
    mw_fail "unknown mode $mode"
    ;;
esac
mw_log "ok: tiers ($mode)"
