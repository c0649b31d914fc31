#!/bin/bash
# install.sh BUILD_DIR MPIEXEC: `cmake --install` of this tree into a temporary prefix, then
# what a user of the installed tree relies on (docs/install.md):
#   (a) pkg-config --cflags --libs mpiwatch, and a C program calling mw_region_begin built and
#       linked with it (it really calls into libmpiwatch.so.0);
#   (b) a CMake project with find_package(mpiwatch) and mpiwatch::mpiwatch;
#   (c) every installed program answers --version with the same version string;
#   (d) `man -l` renders each man page, one for every installed program;
#   (e) the bash completion loads and completes `mpiwatch ` with the subcommands;
#   (f) the library's SONAME and symbolic links; no installed file has a RUNPATH into the build
#       tree, and the MPI examples find their MPI library;
#   (g) the tree moved elsewhere still works: --version, the collector's --help, pkg-config,
#       and `mpiwatch run` of the installed demo (about one second) with a summary of 2 ranks.
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
build=$1
mpiexec=$2
mw_init packaging-install
mw_mpi_env
prefix=$MW_T/prefix
cmake --install "$build" --prefix "$prefix" >"$MW_T/install.log" 2>&1 || {
    tail -n 30 "$MW_T/install.log" >&2
    mw_fail "cmake --install failed"
}
want=$(sed -n 's/^#define MW_VERSION_FULL "\(.*\)"$/\1/p' "$build/gen/mw_version.h")
[ -n "$want" ] || mw_fail "no MW_VERSION_FULL in $build/gen/mw_version.h"
libdir=$prefix/lib
[ -d "$libdir" ] || libdir=$(dirname "$(find "$prefix" -name 'libmpiwatch.so.0' | head -n 1)")
[ -e "$libdir/libmpiwatch.so.0" ] || mw_fail "no libmpiwatch.so.0 installed"

check_user_programs() { # PREFIX LIBDIR: (a) and (b) against the tree at PREFIX
    local p=$1 l=$2 flags out
    export PKG_CONFIG_PATH=$l/pkgconfig
    flags=$(pkg-config --cflags --libs mpiwatch) || mw_fail "pkg-config --cflags --libs mpiwatch failed"
    local inc
    inc=$(pkg-config --variable=includedir mpiwatch)
    [[ $flags == *-lmpiwatch* && $(readlink -f "$inc") == "$(readlink -f "$p/include")" ]] ||
        mw_fail "pkg-config gives '$flags' for the tree at $p"
    [ -r "$inc/mpiwatch.h" ] || mw_fail "no mpiwatch.h in pkg-config's includedir $inc"
    cat >"$MW_T/regions.c" <<'C'
#include <mpiwatch.h>
#include <stdio.h>
int main(void)
{
    /* The weak declarations of mpiwatch.h: set only when the program links the library. */
    printf("linked=%d\n", mw_region_begin != NULL && mw_version != NULL);
    mw_region_begin("solve");
    mw_region_end("solve");
    printf("version=%s\n", mw_version());
    return 0;
}
C
    # shellcheck disable=SC2086 # the flags are words
    cc -o "$MW_T/regions" "$MW_T/regions.c" $flags || mw_fail "the pkg-config build failed"
    readelf -d "$MW_T/regions" | grep -q 'NEEDED.*\[libmpiwatch\.so\.0\]' ||
        mw_fail "the program does not need libmpiwatch.so.0 (the SONAME)"
    out=$(LD_LIBRARY_PATH=$l "$MW_T/regions") || mw_fail "the pkg-config program failed"
    [[ $out == *"linked=1"* ]] || mw_fail "the pkg-config program did not link the API: $out"
    echo "(a) pkg-config: $flags -> $(echo "$out" | tr '\n' ' ')"

    rm -rf "$MW_T/cmproj" "$MW_T/cmbuild"
    mkdir -p "$MW_T/cmproj"
    cp "$MW_T/regions.c" "$MW_T/cmproj/regions.c"
    cat >"$MW_T/cmproj/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(uses_mpiwatch C)
find_package(mpiwatch 0.1 REQUIRED)
add_executable(regions regions.c)
target_link_libraries(regions PRIVATE mpiwatch::mpiwatch)
CM
    if ! cmake -S "$MW_T/cmproj" -B "$MW_T/cmbuild" -DCMAKE_PREFIX_PATH="$p" >"$MW_T/cm.log" 2>&1 ||
        ! cmake --build "$MW_T/cmbuild" >>"$MW_T/cm.log" 2>&1; then
        tail -n 30 "$MW_T/cm.log" >&2
        mw_fail "the find_package(mpiwatch) project did not build"
    fi
    grep -q "mpiwatch_DIR:PATH=$p/" "$MW_T/cmbuild/CMakeCache.txt" ||
        mw_fail "find_package(mpiwatch) did not find the tree at $p"
    out=$("$MW_T/cmbuild/regions") || mw_fail "the find_package program failed"
    [[ $out == *"linked=1"* ]] || mw_fail "the find_package program did not link the API: $out"
    echo "(b) find_package(mpiwatch): built and ran ($(echo "$out" | tr '\n' ' '))"
}
check_user_programs "$prefix" "$libdir"

# (c) --version everywhere, one string.
progs=()
for f in "$prefix"/bin/*; do progs+=("${f##*/}"); done
echo "installed programs: ${progs[*]}"
for p in mpiwatch mpiwatch-collector mpiwatch-viewer mpiwatch-export mpiwatch-feed mpiwatch-steer \
    mpiwatch-keygen mpiwatch-loadgen; do
    [ -x "$prefix/bin/$p" ] || mw_fail "$p is not installed"
done
for p in "${progs[@]}"; do
    v=$("$prefix/bin/$p" --version </dev/null 2>&1 | head -n 1) || mw_fail "$p --version failed"
    read -r name ver _ <<<"$v"
    [ "$name" = "$p" ] || mw_fail "$p --version names '$name'"
    [ "$ver" = "$want" ] || mw_fail "$p --version says '$ver', not '$want'"
done
echo "(c) --version: ${#progs[@]} programs, all $want"

# (d) a man page for every program, rendered by man.
for p in "${progs[@]}"; do
    page=$prefix/share/man/man1/$p.1
    [ -s "$page" ] || mw_fail "no man page for $p"
    MANWIDTH=100 man -l "$page" >"$MW_T/man.txt" 2>"$MW_T/man.err" ||
        mw_fail "man -l $page failed: $(head -n 3 "$MW_T/man.err")"
    grep -q "^NAME" "$MW_T/man.txt" || mw_fail "the man page of $p has no NAME"
    grep -q -- "--help" "$MW_T/man.txt" || mw_fail "the man page of $p does not show --help"
    ! grep -q "$build" "$page" || mw_fail "the man page of $p names the build tree"
done
echo "(d) man: ${#progs[@]} pages render"

# (e) completion: `mpiwatch <TAB>` offers the subcommands of the installed launcher's --help.
comp=$prefix/share/bash-completion/completions/mpiwatch
[ -r "$comp" ] || mw_fail "no bash completion installed"
got=$(PATH=$prefix/bin:$PATH bash --norc -c '
    source "$1" || exit 3
    COMP_WORDS=(mpiwatch ""); COMP_CWORD=1; _mpiwatch; echo "${COMPREPLY[*]}"
    COMP_WORDS=(mpiwatch export --format ""); COMP_CWORD=3; _mpiwatch; echo "${COMPREPLY[*]}"
    COMP_WORDS=(mpiwatch run --rec); COMP_CWORD=2; _mpiwatch; echo "${COMPREPLY[*]}"' \
    _ "$comp") || mw_fail "the completion script does not load in bash"
echo "(e) completion: $(echo "$got" | tr '\n' '/')"
mapfile -t lines <<<"$got"
for c in run exec demo export steer keygen; do
    [[ " ${lines[0]} " == *" $c "* ]] || mw_fail "mpiwatch <TAB> does not offer $c: ${lines[0]}"
done
# ...and every subcommand the launcher's usage lines name.
for c in $("$prefix/bin/mpiwatch" --help | sed -n 's/^\(Usage:\| \{7\}\) *mpiwatch \([a-z][a-z]*\).*/\2/p'); do
    [[ " ${lines[0]} " == *" $c "* ]] || mw_fail "mpiwatch <TAB> does not offer $c (in --help)"
done
[[ " ${lines[1]} " == *" csv "* ]] || mw_fail "mpiwatch export --format <TAB> does not offer csv"
[[ " ${lines[2]} " == *" --record "* ]] || mw_fail "mpiwatch run --rec<TAB> does not offer --record"

# (f) SONAME, links, RUNPATH.
real=$(readlink -f "$libdir/libmpiwatch.so")
[[ $real == */libmpiwatch.so.0.* ]] || mw_fail "libmpiwatch.so does not lead to libmpiwatch.so.0.x.y"
[ "$(readlink "$libdir/libmpiwatch.so.0")" = "${real##*/}" ] || mw_fail "libmpiwatch.so.0 link"
readelf -d "$real" | grep -q 'SONAME.*\[libmpiwatch\.so\.0\]' || mw_fail "SONAME is not libmpiwatch.so.0"
n_elf=0
while IFS= read -r -d '' f; do
    head -c 4 "$f" | grep -q 'ELF' || continue
    n_elf=$((n_elf + 1))
    rp=$(readelf -d "$f" | sed -n 's/.*(\(RUNPATH\|RPATH\)).*\[\(.*\)\]/\2/p')
    [[ $rp != *"$build"* ]] || mw_fail "${f#"$prefix"/} has a RUNPATH into the build tree: $rp"
    # Every library it needs is found (ldd prints "not found" otherwise).
    ! ldd "$f" 2>&1 | grep -q 'not found' || mw_fail "${f#"$prefix"/}: $(ldd "$f" | grep 'not found')"
done < <(find "$prefix" -type f -print0)
[ "$n_elf" -ge 9 ] || mw_fail "only $n_elf ELF files installed"
echo "(f) SONAME libmpiwatch.so.0 -> ${real##*/}; RUNPATH of the library: $(readelf -d "$real" | sed -n 's/.*RUNPATH.*\[\(.*\)\]/\1/p'); $n_elf ELF files, none into the build tree, all resolve"

# (g) moved.
moved=$MW_T/moved/elsewhere
mkdir -p "$MW_T/moved"
mv "$prefix" "$moved" || mw_fail "cannot move the tree"
mlib=$moved/${libdir#"$prefix"/}
v=$("$moved/bin/mpiwatch" --version) || mw_fail "moved: mpiwatch --version failed"
[ "$v" = "mpiwatch $want" ] || mw_fail "moved: mpiwatch --version says '$v'"
"$moved/bin/mpiwatch-collector" --help >/dev/null || mw_fail "moved: mpiwatch-collector --help failed"
"$moved/bin/mpiwatch" --help | grep -q "Library: $mlib/libmpiwatch.so.0" ||
    mw_fail "moved: the launcher does not preload the moved library"
check_user_programs "$moved" "$mlib"
demo=$moved/libexec/mpiwatch/mpiwatch-demo
[ -x "$demo" ] || mw_fail "no installed demo at $demo"
MPIWATCH_NODES=1 timeout 120 "$moved/bin/mpiwatch" run --no-record --no-viewer --quiet \
    --summary-json "$MW_T/summary.json" -- "$mpiexec" -np 2 "$demo" 60 \
    >"$MW_T/demo.out" 2>"$MW_T/demo.err" || {
    MW_FAILURE_LOG=$MW_T/demo.err
    mw_fail "moved: mpiwatch run of the installed demo failed"
}
"$MW_PYTHON" - "$MW_T/summary.json" <<'PY' || mw_fail "moved: the summary does not show 2 ranks"
import json, sys
s = json.load(open(sys.argv[1]))
ranks = s.get("ranks_seen", s.get("ranks"))
n = ranks if isinstance(ranks, int) else len(ranks)
print(f"(g) moved tree: mpiwatch run of the demo: {n} ranks in the summary")
sys.exit(0 if n == 2 else 1)
PY
echo "install: OK"
