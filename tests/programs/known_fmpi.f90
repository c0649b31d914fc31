! known_fmpi: the known-call pattern of known_c.c in Fortran through the `use mpi` module
! (in Open MPI it reaches the same mpi_*_ entry points as mpif.h). Datatypes are chosen so
! that the byte counts equal the C program's: MPI_INTEGER is 4 bytes, MPI_DOUBLE_PRECISION 8.
program known_fmpi
  use mpi
  implicit none
  character(len=*), parameter :: prog = 'known_fmpi'
  include 'known_body.inc'
end program known_fmpi
