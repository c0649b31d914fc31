#!/bin/bash
# symbols.sh LIB HEADER: libmpiwatch exports only its API and the MPI entry points it defines
# (docs/install.md, "Symbols"): the functions declared in mpiwatch.h (and their Fortran names,
# NAME_ and NAME__), MPI_* (C), mpi_* (Fortran), PMPI_* / pmpi_* should it ever define them,
# and the -finstrument-functions hooks __cyg_profile_func_enter/exit. Anything else (an
# internal mw__ function, a copy of a static library's symbol) fails, listed.
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
lib=$1
header=$2
mw_init packaging-symbols
[ -r "$lib" ] || mw_fail "no library $lib"
[ -r "$header" ] || mw_fail "no header $header"

# The API: every function the header declares, e.g. "void mw_step(long step) ...;".
mapfile -t api < <(grep -oE '\bmw_[a-z_]+\(' "$header" | tr -d '(' | sort -u)
[ "${#api[@]}" -ge 5 ] || mw_fail "found only ${#api[@]} functions in $header"
allowed=" "
for f in "${api[@]}"; do allowed+="$f ${f}_ ${f}__ "; done

nm -D --defined-only "$lib" | awk '{print $NF}' >"$MW_T/exported" ||
    mw_fail "nm -D $lib failed"
n_all=$(wc -l <"$MW_T/exported")
[ "$n_all" -gt 100 ] || mw_fail "only $n_all exported symbols: not the MPI library's wrappers?"
bad=()
n_mpi=0 n_api=0 n_hooks=0
while read -r sym; do
    case $sym in
        MPI_* | PMPI_* | mpi_* | pmpi_*) n_mpi=$((n_mpi + 1)) ;;
        __cyg_profile_func_enter | __cyg_profile_func_exit) n_hooks=$((n_hooks + 1)) ;;
        *)
            if [[ $allowed == *" $sym "* ]]; then
                n_api=$((n_api + 1))
            else
                bad+=("$sym")
            fi
            ;;
    esac
done <"$MW_T/exported"
echo "exported: $n_all symbols: $n_mpi MPI, $n_api API, $n_hooks hooks, ${#bad[@]} other"
[ "${#bad[@]}" = 0 ] || mw_fail "exported beyond the API: ${bad[*]:0:40}"
# The API itself must be there (a library built without it would pass the check above).
for f in mw_region_begin mw_region_end mw_step mw_active mw_version; do
    grep -qx "$f" "$MW_T/exported" || mw_fail "$f is not exported"
done
grep -qx MPI_Send "$MW_T/exported" || mw_fail "MPI_Send is not exported"
[ "$n_hooks" = 2 ] || mw_fail "the -finstrument-functions hooks are not both exported"
echo "symbols: OK"
