#!/usr/bin/env bash
# check-table.sh: the function table must cover exactly what the installed mpi.h declares.
#
# Independently of proto/gen-function-table.py, this re-extracts the functions mpi.h
# declares with both an MPI_ and a PMPI_ name (preprocessing mpi.h with the given compiler
# and flags, then grepping the declarations), and fails, naming the difference, unless the
# table's names are exactly that set minus MPI_Wtime and MPI_Wtick. It also fails on
# duplicate names, and when a MW_FORTRAN row names a Fortran entry point (mpi_<lower>_ or
# pmpi_<lower>_) that libmpi_mpifh does not define. Without a Fortran MPI library that part
# is skipped, saying so.
#
# A function mpi.h declares whose PMPI_ symbol the C MPI library (--c-lib, repeatable) does not
# export is expected to be absent (MPICH declares MPI_Status_c2f08 and three more, which its
# Fortran library defines); it is listed. The Fortran library checked is the one the table's
# header names (libmpi_mpifh for Open MPI, libmpichfort for MPICH).
#
# usage: check-table.sh --def FILE --cc COMPILER [--c-lib FILE]... [--fortran-libdir DIR]...
#                       [-- CPPFLAGS...]
set -u -o pipefail

def="" cc="" libdirs=() clibs=()
while (($#)); do
    case "$1" in
    --def) def="$2"; shift 2 ;;
    --cc) cc="$2"; shift 2 ;;
    --fortran-libdir) libdirs+=("$2"); shift 2 ;;
    --c-lib) clibs+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "check-table: unknown argument $1" >&2; exit 2 ;;
    esac
done
cppflags=("$@")
[[ -r "$def" ]] || { echo "check-table: cannot read table '$def'" >&2; exit 2; }
[[ -n "$cc" ]] || cc=${MPICC:-mpicc}

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0

# --- the set mpi.h declares ------------------------------------------------------------------
# OMPI_OMIT_MPI1_COMPAT_DECLS=0 makes Open MPI declare the functions removed in MPI-3.0,
# which libmpi still exports and the table therefore wraps; other MPIs ignore it.
if ! printf '#include <mpi.h>\n' |
    "$cc" "${cppflags[@]}" -DOMPI_OMIT_MPI1_COMPAT_DECLS=0 -E -P -x c - \
        >"$tmp/mpi.i" 2>"$tmp/cpp.err"; then
    echo "check-table: preprocessing mpi.h with $cc failed:" >&2
    cat "$tmp/cpp.err" >&2
    exit 2
fi
grep -oE '\bP?MPI_[A-Za-z0-9_]+[[:space:]]*\(' "$tmp/mpi.i" |
    sed -E 's/[[:space:]]*\($//' | LC_ALL=C sort -u >"$tmp/declared"
grep '^PMPI_' "$tmp/declared" | sed 's/^PMPI_//' >"$tmp/pmpi"
grep '^MPI_' "$tmp/declared" | sed 's/^MPI_//' >"$tmp/mpi"
LC_ALL=C comm -12 "$tmp/mpi" "$tmp/pmpi" | grep -vxE 'Wtime|Wtick' >"$tmp/expected"
if ((${#clibs[@]})); then
    for l in "${clibs[@]}"; do nm -D --defined-only "$l"; done | awk '{print $NF}' |
        sed -n 's/^PMPI_//p' | LC_ALL=C sort -u >"$tmp/exported"
    unexported=$(LC_ALL=C comm -23 "$tmp/expected" "$tmp/exported")
    if [[ -n "$unexported" ]]; then
        echo "note: declared by mpi.h but not exported by ${clibs[*]}, so not expected:" \
            "$(tr '\n' ' ' <<<"$unexported")"
        LC_ALL=C comm -12 "$tmp/expected" "$tmp/exported" >"$tmp/expected.x"
        mv "$tmp/expected.x" "$tmp/expected"
    fi
fi
nexpected=$(wc -l <"$tmp/expected")
if ((nexpected < 100)); then
    echo "check-table: only $nexpected functions found in mpi.h; extraction broken?" >&2
    exit 2
fi

# --- the set the table holds -----------------------------------------------------------------
grep -oE '^[[:space:]]*MW_FN\([[:space:]]*[A-Za-z0-9_]+' "$def" |
    sed -E 's/^[[:space:]]*MW_FN\([[:space:]]*//' >"$tmp/rows"
LC_ALL=C sort "$tmp/rows" >"$tmp/table"

dups=$(LC_ALL=C uniq -d "$tmp/table")
if [[ -n "$dups" ]]; then
    echo "FAIL: duplicate rows in the table: $(tr '\n' ' ' <<<"$dups")"
    fail=1
fi
LC_ALL=C sort -u -o "$tmp/table" "$tmp/table"

missing=$(LC_ALL=C comm -23 "$tmp/expected" "$tmp/table")
extra=$(LC_ALL=C comm -13 "$tmp/expected" "$tmp/table")
if [[ -n "$missing" ]]; then
    echo "FAIL: declared by mpi.h (MPI_ and PMPI_) but missing from the table:"
    # shellcheck disable=SC2001 # a prefix on every line of a list
    sed 's/^/  MPI_/' <<<"$missing"
    fail=1
fi
if [[ -n "$extra" ]]; then
    echo "FAIL: in the table but not declared by mpi.h with both MPI_ and PMPI_ names:"
    # shellcheck disable=SC2001 # a prefix on every line of a list
    sed 's/^/  MPI_/' <<<"$extra"
    fail=1
fi
echo "mpi.h declares $(wc -l <"$tmp/expected") wrapped functions (Wtime/Wtick excluded);" \
    "the table has $(wc -l <"$tmp/rows") rows"

# --- Fortran entry points --------------------------------------------------------------------
for fc in mpif90 mpifort mpicc; do
    if command -v "$fc" >/dev/null 2>&1; then
        for d in $("$fc" --showme:libdirs 2>/dev/null); do libdirs+=("$d"); done
    fi
done
lib=""
# The mpif.h library the table was generated from, as its header names it: Open MPI's
# libmpi_mpifh, MPICH's libmpichfort (Debian 12), Intel MPI's / other MPICH builds' libmpifort.
fname=$(head -n 12 "$def" | grep -oE 'lib(mpi_mpifh|mpichfort|mpifort)\b' | head -n 1)
fname=${fname:-libmpi_mpifh}
for d in "${libdirs[@]}"; do
    for f in "$d/$fname.so" "$d/$fname".so.*; do
        if [[ -e "$f" ]]; then lib="$f"; break 2; fi
    done
done
grep -E '^[[:space:]]*MW_FN\(' "$def" | grep -oE 'MW_FORTRAN\([[:space:]]*[a-z0-9_]+' |
    sed -E 's/MW_FORTRAN\([[:space:]]*//' >"$tmp/fortran"
if [[ -z "$lib" ]]; then
    echo "SKIP: no $fname found (looked in: ${libdirs[*]:-nothing}); the Fortran" \
        "symbol check is skipped ($(wc -l <"$tmp/fortran") MW_FORTRAN rows not checked)"
elif ! command -v nm >/dev/null 2>&1; then
    echo "SKIP: nm not found; the Fortran symbol check is skipped"
else
    nm -D --defined-only "$lib" | awk '{print $NF}' | LC_ALL=C sort -u >"$tmp/fsyms"
    nobind=""
    while read -r lower; do
        for s in "mpi_${lower}_" "pmpi_${lower}_"; do
            if ! grep -qxF "$s" "$tmp/fsyms"; then nobind+=" $s"; fi
        done
    done <"$tmp/fortran"
    if [[ -n "$nobind" ]]; then
        echo "FAIL: MW_FORTRAN rows whose entry points $lib does not define:$nobind"
        fail=1
    fi
    # The other direction is allowed (the generator may leave a function out on purpose), but
    # worth seeing: those calls from Fortran are not monitored.
    unwrapped=$(while read -r name; do
        lower=$(tr '[:upper:]' '[:lower:]' <<<"$name")
        if grep -qxF "mpi_${lower}_" "$tmp/fsyms" && ! grep -qxF "$lower" "$tmp/fortran"; then
            printf ' %s' "$name"
        fi
    done <"$tmp/table")
    echo "Fortran: $(wc -l <"$tmp/fortran") MW_FORTRAN rows checked against $lib"
    if [[ -n "$unwrapped" ]]; then
        echo "note: rows without MW_FORTRAN although $lib defines them:$unwrapped"
    fi
fi

if ((fail)); then
    echo "function table check FAILED (regenerate with proto/gen-function-table.py)"
    exit 1
fi
echo "function table check passed"
