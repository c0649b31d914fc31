! inplace_f: MPI_Gather with MPI_IN_PLACE at the root, through `use mpi`. The root passes a
! send count and type that MPI ignores in place (a count of 999999 with MPI_INTEGER, or with
! a handle that names no datatype): the library must not count them as bytes, nor hand the
! bad handle to MPI_Type_size.
program inplace_f
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, i, buf(64), junk(1)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  buf = rank
  do i = 1, 10
    if (rank == 0 .and. mod(i, 2) == 0) then
      call MPI_Gather(MPI_IN_PLACE, 999999, 12345, buf, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    else if (rank == 0) then
      call MPI_Gather(MPI_IN_PLACE, 999999, MPI_INTEGER, buf, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, &
                      ierr)
    else
      call MPI_Gather(buf, 1, MPI_INTEGER, junk, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    end if
  end do
  if (rank == 0) then
    if (any(buf(1:nprocs) /= [(i, i = 0, nprocs - 1)])) then
      write (0, '(a)') 'inplace_f: wrong gather result'
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
    print '(a)', 'inplace_f: ok'
  end if
  call MPI_Finalize(ierr)
end program inplace_f
