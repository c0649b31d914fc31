# Spack recipe for mpiwatch (docs/install.md, "Spack"). Copy it to a Spack repository as
# packages/mpiwatch/package.py. Each variant is one CMake option of the top CMakeLists.txt, and
# each depends_on line belongs to the part that needs it, so a compute node's build
# (mpiwatch+shim~collector~viewer) pulls no SDL2 or libmicrohttpd and a login node's
# (mpiwatch~shim) no MPI.

from spack.package import *


class Mpiwatch(CMakePackage):
    """Online monitoring and steering of MPI programs: a PMPI library preloaded into the ranks,
    a collector merging their samples into time windows, a live viewer, recordings and
    exports (Perfetto, CSV, OTF2, VTK)."""

    # Placeholders until the project has a public home: point them at the repository to build.
    homepage = "https://github.com/mpiwatch/mpiwatch"
    git = "https://github.com/mpiwatch/mpiwatch.git"

    license("BSD-3-Clause")

    version("main", branch="main")

    variant("shim", default=True, description="the preloaded library libmpiwatch (needs MPI)")
    variant("collector", default=True,
            description="the collector and the tools (export, feed, steer, keygen, ...)")
    variant("viewer", default=True, description="the live viewer (SDL2, OpenGL)")
    variant("metrics", default=True,
            description="Prometheus /metrics in the collector (libmicrohttpd)")

    conflicts("+metrics", when="~collector", msg="the metrics server is part of the collector")
    conflicts("~shim~collector~viewer", msg="nothing to build")

    depends_on("c", type="build")
    depends_on("cmake@3.18:", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("help2man", type="build")  # the man pages, from each program's --help

    # Every part: the wire format, the sockets, key files, trace records.
    depends_on("protobuf-c")  # libprotobuf-c and protoc-c
    depends_on("libzmq")
    depends_on("inih")
    depends_on("zstd")

    # The preloaded library.
    depends_on("mpi", when="+shim")
    depends_on("hwloc", when="+shim")

    # The collector and the tools (and the recordings the viewer reads).
    depends_on("cjson", when="+collector")
    depends_on("libdeflate", when="+collector")
    depends_on("otf2", when="+collector")
    depends_on("libmicrohttpd", when="+metrics")

    # The viewer.
    depends_on("cjson", when="+viewer")
    depends_on("libdeflate", when="+viewer")
    depends_on("sdl2", when="+viewer")
    depends_on("sdl2-ttf", when="+viewer")
    depends_on("libepoxy", when="+viewer")
    depends_on("stb", when="+viewer")

    def cmake_args(self):
        return [
            self.define_from_variant("MW_SHIM", "shim"),
            self.define_from_variant("MW_COLLECTOR", "collector"),
            self.define_from_variant("MW_VIEWER", "viewer"),
            self.define_from_variant("MW_METRICS", "metrics"),
            self.define("BUILD_TESTING", self.run_tests),
            # The Fortran wrappers follow the MPI's own Fortran symbols; without a Fortran
            # compiler in the toolchain they are left out.
            self.define("MW_FORTRAN", self.compiler.fc is not None),
        ]

    def setup_run_environment(self, env):
        env.prepend_path("MANPATH", self.prefix.share.man)
