#!/bin/bash
# launcher_hydra.sh: `mpiwatch run` recognises a Hydra launcher by what it accepts, not by its
# name or version string (docs/launcher.md, "How the launcher is recognised"), and passes the
# library to the ranks only, with -genv.
#   1. MPICH's own mpiexec.mpich, given in Hydra's syntax (-n, no Open MPI option);
#   2. the same launcher behind a script named `mpirun` whose --version says what Intel MPI's
#      says ("Intel(R) MPI Library ..."): the old version-string test called it "other" and the
#      ranks got no library; it must be told Hydra by its help listing -genv.
# Each case checks, from inside the ranks (tests/programs/preload_probe), that every rank has
# the library mapped and no ancestor (the launcher, its proxies) has it, and that exactly
# MW_NP ranks said hello to the collector. Needs the Hydra launcher of an MPICH build (run in
# the MPICH build, MW_MPI_KIND=hydra; skipped in an Open MPI build, whose ranks could not run
# under MPICH's launcher).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mw_setup launcher_hydra
mw_require MW_LAUNCHER MW_HYDRA
[ "${MW_MPI_KIND:-ompi}" = hydra ] || mw_skip "the build's MPI is not launched by Hydra (MW_MPI_KIND=${MW_MPI_KIND:-ompi})"
probe=$MW_PROGRAMS/preload_probe
[ -x "$probe" ] || mw_fail "program not built: $probe"

run_case() {
    local name=$1 r line
    shift
    mw_log "case $name: mpiwatch run -- $*"
    rm -f "$MW_T/summary.json"
    MW_FAILURE_LOG=$MW_T/$name.err
    "$MW_LAUNCHER" run --no-record --summary-json "$MW_T/summary.json" --window-ms 50 -- "$@" \
        >"$MW_T/$name.out" 2>"$MW_T/$name.err" || mw_fail "case $name: mpiwatch run failed"
    for ((r = 0; r < MW_NP; r++)); do
        line=$(grep "^probe rank $r " "$MW_T/$name.out") ||
            mw_fail "case $name: no probe line from rank $r in: $(cat "$MW_T/$name.out")"
        [ "$line" = "probe rank $r self=1 ancestors=none" ] ||
            mw_fail "case $name: rank $r: expected the library in the rank only, got '$line'"
    done
    mw_check --pattern ranks --label "mpiwatch run ($name)" || exit 1
}

run_case mpiexec_mpich "$MW_HYDRA" -n "$MW_NP" "$probe" 0

# A Hydra launcher that calls itself Intel MPI (Intel MPI's mpirun is Hydra's mpiexec).
mkdir -p "$MW_T/impi"
cat >"$MW_T/impi/mpirun" <<EOF
#!/bin/bash
case \${1-} in
    --version | -version | -V) echo "Intel(R) MPI Library for Linux* OS, Version 2021.9 Build 20230307"; exit 0 ;;
esac
exec "$MW_HYDRA" "\$@"
EOF
chmod +x "$MW_T/impi/mpirun"
"$MW_T/impi/mpirun" --version | grep -qi hydra && mw_fail "the stand-in's version string names Hydra"
run_case intel_named_mpirun "$MW_T/impi/mpirun" -n "$MW_NP" "$probe" 0
echo "launcher_hydra: ok"
