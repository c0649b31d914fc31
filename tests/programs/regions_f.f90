! regions_f: code regions from Fortran (docs/regions.md), for tests/shim/regions.sh. The
! library's Fortran bindings take the CHARACTER argument with its hidden length; trailing
! blanks are not part of the name. Linked with libmpiwatch (the bindings have no weak stub in
! Fortran). Per rank: N x outer { inner { MPI_Barrier } } with N = 7, the names padded with
! blanks ('outer   ', 'inner'); then one end of a region that is not open (1 dropped).
program regions_f
  implicit none
  include 'mpif.h'
  external mw_region_begin, mw_region_end
  integer :: ierr, rank, i
  character(len=8) :: outer = 'outer'
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  do i = 1, 7
    call mw_region_begin(outer)
    call mw_region_begin('inner')
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call mw_region_end('inner   ')
    call mw_region_end(outer)
  end do
  call mw_region_end('never_opened')
  if (rank == 0) print '(a)', 'regions_f: done'
  call MPI_Finalize(ierr)
end program regions_f
