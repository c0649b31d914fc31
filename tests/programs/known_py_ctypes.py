#!/usr/bin/python3
"""known_py_ctypes: the known-call pattern of known_c.c in Python, calling MPICH through ctypes.

Debian's python3-mpi4py is built for Open MPI only, so the MPICH build's Python test cannot use
it (docs/mpich.md, "Python"). This program calls the C MPI functions of MPICH directly with
ctypes, the way a Python extension module would: libmpich is loaded with RTLD_GLOBAL and every
MPI_X is looked up in the process's global scope (ctypes.CDLL(None), i.e. dlsym(RTLD_DEFAULT)),
so a preloaded libmpiwatch.so, which comes before libmpich in that scope, is the MPI_X that is
called. (Looking the names up in libmpich's own handle would bypass any PMPI tool, which is
not what Python bindings do.)

The handle values are MPICH's ABI (mpi.h of MPICH 3.1 and later, Intel MPI, MVAPICH: a handle
is an int): they are checked against MPI_Type_size and MPI_Comm_size before the pattern runs.
The pattern, its buffers and byte counts are those of known_py.py and known_c.c; keep the three
identical to tests/integration/check_summary.py.
"""
import ctypes
import sys

MPI_COMM_WORLD = 0x44000000
MPI_INT = 0x4C000405
MPI_DOUBLE = 0x4C00080B
MPI_BYTE = 0x4C00010D
MPI_SUM = 0x58000003
MPI_STATUS_IGNORE = ctypes.c_void_p(1)
MPI_STATUSES_IGNORE = ctypes.c_void_p(1)

try:
    ctypes.CDLL("libmpich.so.12", mode=ctypes.RTLD_GLOBAL)
except OSError as e:  # the test script turns this exit code into a skip
    sys.stderr.write("known_py_ctypes: %s (needs MPICH's libmpich.so.12)\n" % e)
    sys.exit(77)
mpi = ctypes.CDLL(None)  # the global scope: a preloaded PMPI library first


def call(name, *args):
    rc = getattr(mpi, name)(*args)
    if rc != 0:
        sys.stderr.write("known_py_ctypes: %s returned %d\n" % (name, rc))
        mpi.MPI_Abort(MPI_COMM_WORLD, 1)
        sys.exit(1)


def fail(rank, what, got, want):
    sys.stderr.write("known_py_ctypes: rank %d: %s: got %r, want %r\n" % (rank, what, got, want))
    mpi.MPI_Abort(MPI_COMM_WORLD, 1)
    sys.exit(1)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    call("MPI_Init", None, None)
    r, s, sz = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    call("MPI_Comm_rank", MPI_COMM_WORLD, ctypes.byref(r))
    call("MPI_Comm_size", MPI_COMM_WORLD, ctypes.byref(s))
    rank, size = r.value, s.value
    for t, want in ((MPI_INT, 4), (MPI_DOUBLE, 8), (MPI_BYTE, 1)):
        call("MPI_Type_size", t, ctypes.byref(sz))
        if sz.value != want:
            fail(rank, "MPI_Type_size(0x%x): not MPICH's handle ABI" % t, sz.value, want)
    right, left = (rank + 1) % size, (rank - 1 + size) % size

    for i in range(n):
        ain = (ctypes.c_int32 * 8)(*[k + rank + i for k in range(8)])
        aout = (ctypes.c_int32 * 8)()
        call("MPI_Allreduce", ain, aout, 8, MPI_INT, MPI_SUM, MPI_COMM_WORLD)
        want = size * (size - 1) // 2 + size * (3 + i)
        if aout[3] != want:
            fail(rank, "allreduce", aout[3], want)

    rbuf = (ctypes.c_double * 256)()
    for i in range(n):
        sbuf = (ctypes.c_double * 256)(*[k + rank * 1000.0 + i for k in range(256)])
        if rank % 2 == 0:
            call("MPI_Send", sbuf, 256, MPI_DOUBLE, right, 1, MPI_COMM_WORLD)
            call("MPI_Recv", rbuf, 256, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
        else:
            call("MPI_Recv", rbuf, 256, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
            call("MPI_Send", sbuf, 256, MPI_DOUBLE, right, 1, MPI_COMM_WORLD)
        if rbuf[7] != left * 1000.0 + 7 + i:
            fail(rank, "ring recv", rbuf[7], left * 1000.0 + 7 + i)

    for i in range(n):
        sb = (ctypes.c_int32 * 10)(*[k + rank * 100 + i for k in range(10)])
        rb = (ctypes.c_int32 * 10)()
        reqs = (ctypes.c_int * 2)()  # MPI_Request is an int in MPICH
        call("MPI_Irecv", rb, 10, MPI_INT, right, 2, MPI_COMM_WORLD, ctypes.byref(reqs, 0))
        call("MPI_Isend", sb, 10, MPI_INT, left, 2, MPI_COMM_WORLD, ctypes.byref(reqs, 4))
        call("MPI_Waitall", 2, reqs, MPI_STATUSES_IGNORE)
        if rb[9] != right * 100 + 9 + i:
            fail(rank, "isend/irecv", rb[9], right * 100 + 9 + i)

    for i in range(n // 2):
        b = (ctypes.c_uint8 * 1000)(*([(i + 1) % 256 if rank == 0 else 0] * 1000))
        call("MPI_Bcast", b, 1000, MPI_BYTE, 0, MPI_COMM_WORLD)
        if b[999] != (i + 1) % 256:
            fail(rank, "bcast", b[999], (i + 1) % 256)

    for _ in range(5):
        call("MPI_Barrier", MPI_COMM_WORLD)

    if rank == 0:
        print("known_py_ctypes: %d ranks, N=%d, pattern ok" % (size, n), flush=True)
    call("MPI_Finalize")


if __name__ == "__main__":
    main()
