! callsites_f: the call-site pattern of callsites.c in Fortran (built with -g; with use mpi, or
! with use mpi_f08 when built with -DMW_F08: the programs callsites_f and callsites_f08), for
! tests/shim/callsites.sh: MPI_ALLREDUCE N times from the line marked SITE_A, 2N times from
! SITE_B, then rank 0 sends N messages to rank 1 (SITE_SEND, SITE_RECV). The checker finds
! the lines by the markers, never by number.
program callsites_f
#ifdef MW_F08
  use mpi_f08
#else
  use mpi
#endif
  implicit none
  integer :: ierr, rank, n, i, x, y, buf(4)
  double precision :: dx, dy
  character(len=16) :: arg
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  n = 10
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if
  buf = 0
  do i = 1, n
    x = i
    call MPI_ALLREDUCE(x, y, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr) ! SITE_A
  end do
  do i = 1, 2 * n
    dx = i
    call MPI_ALLREDUCE(dx, dy, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr) ! SITE_B
  end do
  do i = 1, n
    if (rank == 0) then
      call MPI_SEND(buf, 4, MPI_INTEGER, 1, 7, MPI_COMM_WORLD, ierr) ! SITE_SEND
    else if (rank == 1) then
      call MPI_RECV(buf, 4, MPI_INTEGER, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr) ! SITE_RECV
    end if
  end do
  call MPI_FINALIZE(ierr)
end program callsites_f
