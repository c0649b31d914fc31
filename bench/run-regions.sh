#!/bin/bash
# run-regions.sh [--mpirun MPIRUN] BUILD: what code regions cost a call (docs/regions.md):
# mw-bench-regions without the library, then with it and MPIWATCH_REGIONS=f_selected.
set -euo pipefail
mpirun=mpirun
if [ "${1:-}" = --mpirun ]; then
    mpirun=$2
    shift 2
fi
build=${1:?usage: run-regions.sh [--mpirun MPIRUN] BUILD}
bench=$build/bench/mw-bench-regions
lib=$build/pmpi-shim/libmpiwatch.so
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_MCA_orte_tmpdir_base=$tmp
echo "== without the library (glibc's empty hooks)"
"$mpirun" --oversubscribe -np 1 "$bench"
echo "== with the library, MPIWATCH_REGIONS=f_selected"
"$mpirun" --oversubscribe -np 1 -x LD_PRELOAD="$lib" -x MPIWATCH_COLLECTOR="ipc://$tmp/none" \
    -x MPIWATCH_REGIONS=f_selected "$bench"
