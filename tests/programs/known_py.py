#!/usr/bin/python3
"""known_py: the known-call pattern of known_c.c in Python with mpi4py.

Only the upper-case buffer methods are used (comm.Send, comm.Allreduce, ...): they map one to
one onto MPI calls, whereas the lower-case pickle methods add probes and extra messages. The
numpy dtypes are chosen so that the byte counts equal the C program's (int32 = MPI_INT,
float64 = MPI_DOUBLE, uint8 for the 1000-byte broadcast). Run it with the interpreter that
has mpi4py (/usr/bin/python3 on Debian). Keep the pattern identical to known_c.c and
tests/integration/check_summary.py.
"""
import sys

try:
    import numpy as np
    from mpi4py import MPI
except ImportError as e:  # the test script turns this exit code into a skip
    sys.stderr.write("known_py: %s (needs python3-mpi4py and python3-numpy)\n" % e)
    sys.exit(77)


def fail(rank, what, got, want):
    sys.stderr.write("known_py: rank %d: %s: got %r, want %r\n" % (rank, what, got, want))
    MPI.COMM_WORLD.Abort(1)


def main():
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    right, left = (rank + 1) % size, (rank - 1 + size) % size

    for i in range(n):
        ain = np.arange(8, dtype=np.int32) + rank + i
        aout = np.zeros(8, dtype=np.int32)
        comm.Allreduce(ain, aout, op=MPI.SUM)
        want = size * (size - 1) // 2 + size * (3 + i)
        if aout[3] != want:
            fail(rank, "allreduce", aout[3], want)

    rbuf = np.zeros(256, dtype=np.float64)
    for i in range(n):
        sbuf = np.arange(256, dtype=np.float64) + rank * 1000.0 + i
        if rank % 2 == 0:
            comm.Send(sbuf, dest=right, tag=1)
            comm.Recv(rbuf, source=left, tag=1)
        else:
            comm.Recv(rbuf, source=left, tag=1)
            comm.Send(sbuf, dest=right, tag=1)
        if rbuf[7] != left * 1000.0 + 7 + i:
            fail(rank, "ring recv", rbuf[7], left * 1000.0 + 7 + i)

    for i in range(n):
        s = np.arange(10, dtype=np.int32) + rank * 100 + i
        r = np.zeros(10, dtype=np.int32)
        reqs = [comm.Irecv(r, source=right, tag=2), comm.Isend(s, dest=left, tag=2)]
        MPI.Request.Waitall(reqs)
        if r[9] != right * 100 + 9 + i:
            fail(rank, "isend/irecv", r[9], right * 100 + 9 + i)

    for i in range(n // 2):
        b = np.full(1000, (i + 1) % 256 if rank == 0 else 0, dtype=np.uint8)
        comm.Bcast([b, MPI.BYTE], root=0)
        if b[999] != (i + 1) % 256:
            fail(rank, "bcast", b[999], (i + 1) % 256)

    for _ in range(5):
        comm.Barrier()

    if rank == 0:
        print("known_py: %d ranks, N=%d, pattern ok" % (size, n), flush=True)


if __name__ == "__main__":
    main()
