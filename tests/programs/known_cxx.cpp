// known_cxx: the known-call pattern of known_c.c, written in C++ against the MPI C API (the
// C++ bindings are gone from MPI-3). It checks that a C++ program, linked by mpicxx, is
// monitored like a C one. Keep the pattern identical to known_c.c and check_summary.py.

// Only the C API: Open MPI's and MPICH's mpi.h would otherwise pull in the removed C++ bindings.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

[[noreturn]] void fail(int rank, const char *what, long got, long want)
{
    std::fprintf(stderr, "known_cxx: rank %d: %s: got %ld, want %ld\n", rank, what, got, want);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::exit(1);
}

} // namespace

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int n = argc > 1 ? std::atoi(argv[1]) : 10;
    const int right = (rank + 1) % size, left = (rank - 1 + size) % size;

    for (int i = 0; i < n; i++) {
        std::array<int, 8> in{}, out{};
        for (int k = 0; k < 8; k++)
            in[k] = rank + k + i;
        MPI_Allreduce(in.data(), out.data(), 8, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        const long want = static_cast<long>(size) * (size - 1) / 2 + static_cast<long>(size) * (3 + i);
        if (out[3] != want)
            fail(rank, "allreduce", out[3], want);
    }

    std::vector<double> sbuf(256), rbuf(256);
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 256; k++)
            sbuf[k] = rank * 1000.0 + k + i;
        if (rank % 2 == 0) {
            MPI_Send(sbuf.data(), 256, MPI_DOUBLE, right, 1, MPI_COMM_WORLD);
            MPI_Recv(rbuf.data(), 256, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rbuf.data(), 256, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(sbuf.data(), 256, MPI_DOUBLE, right, 1, MPI_COMM_WORLD);
        }
        if (rbuf[7] != left * 1000.0 + 7 + i)
            fail(rank, "ring recv", static_cast<long>(rbuf[7]), left * 1000L + 7 + i);
    }

    for (int i = 0; i < n; i++) {
        std::array<int, 10> s{}, r{};
        std::array<MPI_Request, 2> req{};
        for (int k = 0; k < 10; k++)
            s[k] = rank * 100 + k + i;
        MPI_Irecv(r.data(), 10, MPI_INT, right, 2, MPI_COMM_WORLD, &req[0]);
        MPI_Isend(s.data(), 10, MPI_INT, left, 2, MPI_COMM_WORLD, &req[1]);
        MPI_Waitall(2, req.data(), MPI_STATUSES_IGNORE);
        if (r[9] != right * 100 + 9 + i)
            fail(rank, "isend/irecv", r[9], right * 100 + 9 + i);
    }

    std::vector<unsigned char> bytes(1000);
    for (int i = 0; i < n / 2; i++) {
        std::fill(bytes.begin(), bytes.end(), rank == 0 ? static_cast<unsigned char>(i + 1) : 0);
        MPI_Bcast(bytes.data(), 1000, MPI_BYTE, 0, MPI_COMM_WORLD);
        if (bytes[999] != static_cast<unsigned char>(i + 1))
            fail(rank, "bcast", bytes[999], i + 1);
    }

    for (int i = 0; i < 5; i++)
        MPI_Barrier(MPI_COMM_WORLD);

    if (rank == 0)
        std::printf("known_cxx: %d ranks, N=%d, pattern ok\n", size, n);
    MPI_Finalize();
    return 0;
}
