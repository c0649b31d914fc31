#!/bin/bash
# outputs.sh COLLECTOR LOADGEN EXPORT VIEWER: files mpiwatch writes whole never write through a
# symbolic link someone planted (docs/security.md, "Files mpiwatch writes").
#
# The attack: another user who can create names in the output directory plants symbolic links
# to a file of the victim's, both at the output names (summary, stats, report, the load
# generator's totals, an export, a VTK collection and frame, the viewer's snapshot and --meta)
# and at the fixed temporary names the old code used (NAME.tmp). A real collector then receives
# an emulated job from mpiwatch-loadgen and writes its files, the recording is exported and
# drawn. Checked: the victim files are byte for byte intact; each output name is now a regular
# file with the real content (the link itself was replaced); no temporary file is left behind.
# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
MW_COLLECTOR=$1
loadgen=$2
export_bin=$3
viewer=$4
mw_init security_outputs
cd "$MW_T" || mw_fail "cd $MW_T"

printf 'precious data of the victim\n' >victim
printf 'other precious data\n' >victim_tmp
cp victim victim.orig
cp victim_tmp victim_tmp.orig
outputs=(summary.json stats.json report.txt totals.json export.csv snap.png snap.json
    vtk/lgsec.pvd vtk/lgsec_000000.vtp)
mkdir vtk
for f in "${outputs[@]}"; do
    ln -s "$MW_T/victim" "$f"
    ln -s "$MW_T/victim_tmp" "$f.tmp" # the fixed temporary name of the old code
done

mw_start_collector --exit-after-job --quiet --summary-json summary.json --stats-json stats.json \
    --report report.txt --record rec.mpiw --silence-timeout-ms 30000
"$loadgen" --connect "$MW_EP" --ranks 8 --rate 10 --functions 4 --seconds 1 --nodes 2 \
    --job lgsec --seed 3 --totals-json totals.json 2>loadgen.err ||
    { MW_FAILURE_LOG=loadgen.err; mw_fail "mpiwatch-loadgen failed"; }
mw_collector_exits 30

"$export_bin" --format csv rec.mpiw -o export.csv 2>export.err ||
    { MW_FAILURE_LOG=export.err; mw_fail "mpiwatch-export --format csv failed"; }
"$export_bin" --format vtk rec.mpiw -o vtk 2>vtk.err ||
    { MW_FAILURE_LOG=vtk.err; mw_fail "mpiwatch-export --format vtk failed"; }
SDL_VIDEODRIVER=offscreen "$viewer" --replay rec.mpiw --view all --snapshot snap.png \
    --meta snap.json </dev/null >viewer.out 2>viewer.err || {
    grep -qiE "video|EGL|offscreen|GL context|No available" viewer.err &&
        mw_no_display "$(tail -n 1 viewer.err)"
    MW_FAILURE_LOG=viewer.err
    mw_fail "mpiwatch-viewer --snapshot failed"
}

cmp -s victim victim.orig || mw_fail "a file behind a symbolic link was overwritten: $(head -c 200 victim)"
cmp -s victim_tmp victim_tmp.orig ||
    mw_fail "a file behind a planted NAME.tmp link was overwritten: $(head -c 200 victim_tmp)"
for f in "${outputs[@]}"; do
    { [ -f "$f" ] && [ ! -L "$f" ]; } || mw_fail "$f is not a regular file of its own: $(ls -l "$f")"
    [ -s "$f" ] || mw_fail "$f is empty"
done
"$MW_PYTHON" - <<'PY' || mw_fail "output content"
import json
s = json.load(open("summary.json"))
assert s["ranks"] == 8, s["ranks"]
json.load(open("stats.json"))
t = json.load(open("totals.json"))
assert t["ranks"] == 8 and t["hellos"] == 8, t
json.load(open("snap.json"))
assert open("snap.png", "rb").read(8) == b"\x89PNG\r\n\x1a\n"
assert open("export.csv").readline().strip(), "empty CSV"
assert "<Collection>" in open("vtk/lgsec.pvd").read()
assert "<VTKFile" in open("vtk/lgsec_000000.vtp").read()
PY
grep -q "lgsec" report.txt || mw_fail "the report does not name the job: $(head -c 300 report.txt)"
# Nothing left over: every temporary file was renamed (the planted NAME.tmp links stay).
left=$(find . -name '.*.??????' -newer victim.orig)
[ -z "$left" ] || mw_fail "temporary files left behind: $left"
mw_log "ok: ${#outputs[@]} outputs replaced their symbolic links, the linked files are intact"
