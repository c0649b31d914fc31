! known_f08: the known-call pattern of known_c.c in Fortran through the `use mpi_f08` module
! (derived-type handles; in Open MPI these reach the mpi_*_f08 entry points, not mpi_*_).
! Datatypes are chosen so that the byte counts equal the C program's: MPI_INTEGER is 4 bytes,
! MPI_DOUBLE_PRECISION 8. Keep the pattern identical to known_c.c and
! tests/integration/check_summary.py.
program known_f08
  use mpi_f08
  implicit none
  integer :: rank, nprocs, n, i, k, right, left
  integer :: ain(8), aout(8), s(10), r(10)
  type(MPI_Request) :: req(2)
  double precision :: sbuf(256), rbuf(256)
  integer(kind=1) :: bytes(1000)
  character(len=32) :: arg

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  n = 10
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if
  right = mod(rank + 1, nprocs)
  left = mod(rank - 1 + nprocs, nprocs)

  do i = 0, n - 1
    do k = 1, 8
      ain(k) = rank + (k - 1) + i
    end do
    call MPI_Allreduce(ain, aout, 8, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    if (aout(4) /= nprocs * (nprocs - 1) / 2 + nprocs * (3 + i)) call fail('allreduce')
  end do

  do i = 0, n - 1
    do k = 1, 256
      sbuf(k) = rank * 1000.0d0 + (k - 1) + i
    end do
    if (mod(rank, 2) == 0) then
      call MPI_Send(sbuf, 256, MPI_DOUBLE_PRECISION, right, 1, MPI_COMM_WORLD)
      call MPI_Recv(rbuf, 256, MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    else
      call MPI_Recv(rbuf, 256, MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
      call MPI_Send(sbuf, 256, MPI_DOUBLE_PRECISION, right, 1, MPI_COMM_WORLD)
    end if
    if (abs(rbuf(8) - (left * 1000.0d0 + 7 + i)) > 0.5d0) call fail('ring recv')
  end do

  do i = 0, n - 1
    do k = 1, 10
      s(k) = rank * 100 + (k - 1) + i
    end do
    call MPI_Irecv(r, 10, MPI_INTEGER, right, 2, MPI_COMM_WORLD, req(1))
    call MPI_Isend(s, 10, MPI_INTEGER, left, 2, MPI_COMM_WORLD, req(2))
    call MPI_Waitall(2, req, MPI_STATUSES_IGNORE)
    if (r(10) /= right * 100 + 9 + i) call fail('isend/irecv')
  end do

  do i = 0, n / 2 - 1
    if (rank == 0) then
      bytes = int(i + 1, kind=1)
    else
      bytes = 0_1
    end if
    call MPI_Bcast(bytes, 1000, MPI_BYTE, 0, MPI_COMM_WORLD)
    if (bytes(1000) /= int(i + 1, kind=1)) call fail('bcast')
  end do

  do i = 1, 5
    call MPI_Barrier(MPI_COMM_WORLD)
  end do

  if (rank == 0) print '(a,i0,a,i0,a)', 'known_f08: ', nprocs, ' ranks, N=', n, ', pattern ok'
  call MPI_Finalize()

contains

  subroutine fail(what)
    character(len=*), intent(in) :: what
    write (0, '(a,i0,a,a)') 'known_f08: rank ', rank, ': wrong result in ', what
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end subroutine fail

end program known_f08
