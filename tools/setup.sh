#!/usr/bin/env bash
# Sets mpiwatch up on a Debian 12 machine: installs the Debian packages that are missing,
# configures, builds and installs into PREFIX (default: ./out). Safe to run again; it only
# installs what is missing and rebuilds what changed.
#   tools/setup.sh            # everything
#   PREFIX=/opt/mpiwatch tools/setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."

# paraview: pvpython for the VTK tests; its python3-paraview also gives the system python3 the
# `vtk` module (VTK 9.2), and conflicts with python3-vtk9 (VTK 9.1), which it replaces.
pkgs=(build-essential cmake pkg-config gfortran g++
      libopenmpi-dev openmpi-bin mpich libmpich-dev libzmq3-dev libprotobuf-c-dev protobuf-c-compiler
      libhwloc-dev hwloc libcjson-dev libinih-dev libmicrohttpd-dev libcmocka-dev libdeflate-dev
      libsdl2-dev libsdl2-ttf-dev libepoxy-dev libstb-dev fonts-dejavu-core libgl1-mesa-dri
      libzstd-dev libotf2-trace-dev otf2-tools python3-otf2 libdw-dev elfutils
      python3 python3-mpi4py python3-numpy python3-pandas python3-zmq python3-protobuf python3-zstandard
      protobuf-compiler python3-matplotlib help2man man-db
      slurmctld slurmd slurm-client munge
      paraview prometheus
      clang libclang-rt-14-dev clang-format shellcheck)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "mpiwatch setup: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q \
    "${missing[@]}" >&2
fi

build=${BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMW_WERROR="${MW_WERROR:-ON}" >&2
cmake --build "$build" -j"$(nproc)" >&2
cmake --install "$build" --prefix "${PREFIX:-$PWD/out}" >&2
echo "mpiwatch setup: installed into ${PREFIX:-$PWD/out}" >&2
