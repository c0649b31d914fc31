"""The protobuf classes of mpiwatch.proto, generated, never checked in.

An installed package and the build tree hold ``mpiwatch_pb2.py`` next to this file: CMake runs
``protoc --python_out`` on the installed ``share/mpiwatch/mpiwatch.proto`` at build and install
time.  Used from the source tree (``PYTHONPATH=tools/python``), the module is not there: it is
then generated once per process into a private temporary directory with ``protoc`` (Debian
``protobuf-compiler``) from ``$MPIWATCH_PROTO``, the source tree's ``proto/mpiwatch.proto`` or an
installed ``share/mpiwatch/mpiwatch.proto``.  ``$MPIWATCH_PB2_DIR`` names a directory that holds
an already generated ``mpiwatch_pb2.py`` instead.
"""

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile

_HERE = os.path.dirname(os.path.abspath(__file__))


def _load_file(path):
    spec = importlib.util.spec_from_file_location("mpiwatch.mpiwatch_pb2", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sys.modules["mpiwatch.mpiwatch_pb2"] = mod
    return mod


def _proto_candidates():
    env = os.environ.get("MPIWATCH_PROTO")
    if env:
        yield env
    yield os.path.join(_HERE, "..", "..", "..", "proto", "mpiwatch.proto")  # source tree
    for prefix in (sys.prefix, "/usr/local", "/usr"):
        yield os.path.join(prefix, "share", "mpiwatch", "mpiwatch.proto")


def _generate():
    protoc = shutil.which("protoc")
    if protoc is None:
        raise ImportError("mpiwatch: mpiwatch_pb2 was not generated and protoc is not installed "
                          "(Debian: protobuf-compiler); build the package with CMake or set "
                          "MPIWATCH_PB2_DIR")
    for proto in _proto_candidates():
        if os.path.isfile(proto):
            break
    else:
        raise ImportError("mpiwatch: mpiwatch.proto not found (set MPIWATCH_PROTO)")
    out = tempfile.mkdtemp(prefix="mpiwatch-pb2-")
    try:
        proto = os.path.abspath(proto)
        subprocess.run([protoc, "-I" + os.path.dirname(proto), "--python_out=" + out,
                        os.path.basename(proto)], check=True, capture_output=True)
        return _load_file(os.path.join(out, "mpiwatch_pb2.py"))
    except subprocess.CalledProcessError as e:
        raise ImportError("mpiwatch: protoc failed on %s: %s" % (proto, e.stderr.decode(
            errors="replace").strip())) from None
    finally:
        shutil.rmtree(out, ignore_errors=True)


def load():
    """The generated module (imported once per process)."""
    if "mpiwatch.mpiwatch_pb2" in sys.modules:
        return sys.modules["mpiwatch.mpiwatch_pb2"]
    local = os.path.join(_HERE, "mpiwatch_pb2.py")
    if os.path.isfile(local):
        return _load_file(local)
    env = os.environ.get("MPIWATCH_PB2_DIR")
    if env and os.path.isfile(os.path.join(env, "mpiwatch_pb2.py")):
        return _load_file(os.path.join(env, "mpiwatch_pb2.py"))
    return _generate()


pb = load()
