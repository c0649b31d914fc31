#!/bin/bash
# parts.sh SOURCE_DIR WORK_DIR [LAUNCHER]: builds only what a machine needs (docs/install.md,
# "Build only what a machine needs") and checks what each part finds and links:
#   - shim only (MW_COLLECTOR=OFF MW_VIEWER=OFF BUILD_TESTING=OFF): libmpiwatch needs MPI,
#     ZeroMQ, protobuf-c, hwloc, zstd and libc only (readelf -d NEEDED), and the configure
#     step looked for none of the collector's or the viewer's libraries;
#   - collector only, with MPI hidden from CMake (CMAKE_DISABLE_FIND_PACKAGE_MPI) and
#     MW_METRICS=OFF: the collector and the tools build and link no MPI and no libmicrohttpd,
#     and --metrics-port says the metrics server is not built in.
# WORK_DIR keeps the two trees between runs (ccache makes a rebuild quick).
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
src=$1
work=$2
launcher=${3:-}
mw_init packaging-parts
mkdir -p "$work" || mw_fail "cannot create $work"
common=(-DMW_FUZZ=OFF -DBUILD_TESTING=OFF -DMW_WERROR=ON)
[ -z "$launcher" ] || common+=(-DCMAKE_C_COMPILER_LAUNCHER="$launcher")

# needed FILE: the NEEDED entries of FILE, one per line.
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }

build() {
    local dir=$1
    shift
    cmake -S "$src" -B "$dir" "${common[@]}" "$@" >"$dir.configure.log" 2>&1 || {
        tail -n 40 "$dir.configure.log" >&2
        mw_fail "configure of ${dir##*/} failed"
    }
    cmake --build "$dir" -j2 >"$dir.build.log" 2>&1 || {
        grep -E 'error|Error' "$dir.build.log" | head -n 30 >&2
        mw_fail "build of ${dir##*/} failed"
    }
}

# --- shim only ---------------------------------------------------------------------------
s=$work/shim
build "$s" -DMW_SHIM=ON -DMW_COLLECTOR=OFF -DMW_VIEWER=OFF
lib=$s/pmpi-shim/libmpiwatch.so.0
[ -e "$lib" ] || mw_fail "the shim-only tree has no $lib"
for p in collector/mpiwatch-collector viewer/mpiwatch-viewer tools/mpiwatch-export; do
    [ ! -e "$s/$p" ] || mw_fail "the shim-only tree built $p"
done
mapfile -t libs < <(needed "$lib")
echo "shim-only libmpiwatch NEEDED: ${libs[*]}"
for l in "${libs[@]}"; do
    case $l in
        libmpi*.so* | libzmq.so* | libprotobuf-c.so* | libhwloc.so* | libzstd.so* | libc.so*) ;;
        libm.so* | libdl.so* | libpthread.so*) ;; # libc's own parts (glibc before 2.34)
        *) mw_fail "libmpiwatch needs $l (only MPI, ZeroMQ, protobuf-c, hwloc, zstd, libc)" ;;
    esac
done
for want in libzmq libprotobuf-c libhwloc; do
    printf '%s\n' "${libs[@]}" | grep -q "^$want\.so" || mw_fail "libmpiwatch does not need $want?"
done
# The configure step did not even look for the other parts' libraries.
for v in CJSON DEFLATE MHD SDL2 SDL2TTF EPOXY OTF2 CMOCKA; do
    ! grep -q "^${v}_FOUND" "$s/CMakeCache.txt" || mw_fail "the shim-only configure looked for $v"
done

# --- collector only, no MPI, no metrics ---------------------------------------------------
c=$work/collector
build "$c" -DMW_SHIM=OFF -DMW_COLLECTOR=ON -DMW_VIEWER=OFF -DMW_METRICS=OFF \
    -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON
! grep -q '^MPI_C_FOUND:BOOL=TRUE' "$c/CMakeCache.txt" || mw_fail "MPI was found anyway"
[ ! -e "$c/pmpi-shim/libmpiwatch.so.0" ] || mw_fail "the collector-only tree built the library"
[ ! -e "$c/viewer/mpiwatch-viewer" ] || mw_fail "the collector-only tree built the viewer"
progs=(collector/mpiwatch-collector tools/mpiwatch-export tools/mpiwatch-feed tools/mpiwatch-steer
       tools/mpiwatch-keygen tools/mpiwatch-loadgen)
for p in "${progs[@]}"; do
    [ -x "$c/$p" ] || mw_fail "the collector-only tree has no $p"
    mapfile -t libs < <(needed "$c/$p")
    for l in "${libs[@]}"; do
        case $l in
            libmpi* | libopen-pal* | libopen-rte* | libhwloc* | libmicrohttpd* | libSDL* | libGL* | libepoxy*)
                mw_fail "${p##*/} needs $l in a collector-only build without metrics" ;;
        esac
    done
    "$c/$p" --version >/dev/null || mw_fail "${p##*/} --version failed"
done
echo "collector-only mpiwatch-collector NEEDED: $(needed "$c/collector/mpiwatch-collector" | tr '\n' ' ')"
rc=0
"$c/collector/mpiwatch-collector" --listen "ipc://$MW_T/c" --metrics-port 9199 \
    >"$MW_T/m.out" 2>"$MW_T/m.err" </dev/null || rc=$?
[ "$rc" = 2 ] || mw_fail "--metrics-port without the metrics server: status $rc, expected 2"
grep -q "not built in" "$MW_T/m.err" || mw_fail "--metrics-port does not say it is not built in"
# Without --metrics-port the collector of this tree starts and answers --help.
"$c/collector/mpiwatch-collector" --help >/dev/null || mw_fail "collector --help failed"
echo "parts: OK"
